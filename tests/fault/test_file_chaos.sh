#!/usr/bin/env bash
# tests/fault/test_file_chaos.sh: MPI-IO under faults
# (tests/fault/progs/flt_file.c: ranks write blocks of a shared file, read
# their neighbours' and the blocks the next step overwrites, append records
# with MPI_File_write_ordered, and update a counter file in place). Every
# case must exit 0 with the output (tagged, sorted by rank) of the
# failure-free run, and leave the data file, its record log and the
# counter file byte-identical to that run's:
#   chaos1       ranks killed at random: re-executed ranks get
#                the logged outcomes of their file operations (reads see
#                the file as their first incarnation did)
#   ckpt         checkpoints every 0.3 s and kills: restored ranks go on
#                from their images
#   over_files   the job's first CM (which carries out file operations)
#                killed, no store: the job starts over and its files are
#                put back as they were before it (the counter is read as
#                it was)
#   over_other   the other CM killed: the first CM stays, forgets the job
#                and puts the files back for its new run
#   store_files  the first CM killed with a store: it cannot vouch for
#                the outcomes it logged, so the job starts over too
#   store_other  the other CM killed with a store: the job continues on
#                its recovered logs, the files as they are
#   refused      the data file existed before the job; its directory
#                removed before the first CM is killed: its copy cannot be
#                put back, the job's new run is refused (exit 1, the
#                reason said), never started
#   kill_point   a rank killed inside a file operation (MPIV_FAULT=file)
#   cm_point     the first CM killed after carrying out and logging a file
#                operation, before its answer (MPIV_SERVER_FAULT, once)
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_file) || { flt_notok "cannot compile flt_file"; flt_finish; }
ARGS=(1600 256)	# ~2.5 s here
OVER='^mpiv: job [^ ]* runs again from the beginning'

# setup NAME: a fresh counter file for run NAME (counter 41)
setup() {
	rm -f "$FLT_TMP/$1.dat" "$FLT_TMP/$1.dat.log"
	printf '\051\0\0\0\0\0\0\0' > "$FLT_TMP/$1.in"
}

# same_files NAME: NAME's data, log and counter equal the reference's
same_files() {
	local f
	for f in dat dat.log in; do
		if ! cmp -s "$FLT_TMP/ref.$f" "$FLT_TMP/$1.$f"; then
			flt_notok "$1: $f differs from the failure-free run's ($(stat -c %s "$FLT_TMP/ref.$f" 2>/dev/null) / $(stat -c %s "$FLT_TMP/$1.$f" 2>/dev/null) bytes)"
			return 1
		fi
	done
	flt_ok "$1: data file, record log and counter file identical to the failure-free run's"
}

setup ref
flt_job "$FLT_TMP/ref" 60 -n 4 --cms 2 --tag-output "$bin" "${ARGS[@]}" \
	"$FLT_TMP/ref.dat" "$FLT_TMP/ref.in"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }
flt_norm "$FLT_TMP/ref.out" > "$FLT_TMP/ref.norm"
if grep -q ' counter 41$' "$FLT_TMP/ref.norm" &&
    [ "$(od -An -tu8 "$FLT_TMP/ref.in" | tr -d ' ')" = 42 ] &&
    [ "$(wc -l < "$FLT_TMP/ref.dat.log")" = $((4 * ${ARGS[0]})) ]; then
	flt_ok "failure-free run: counter 41 read, 42 written, $((4 * ${ARGS[0]})) ordered records"
else
	flt_notok "failure-free run: counter or records wrong" "$FLT_TMP/ref.norm"
fi

# run NAME MPIV_RUN_ARGS...: the job with faults, then its checks
run() {
	local name=$1
	shift
	setup "$name"
	flt_job "$FLT_TMP/$name" 120 -n 4 --cms 2 --tag-output "$@" "$bin" \
		"${ARGS[@]}" "$FLT_TMP/$name.dat" "$FLT_TMP/$name.in"
	check "$name"
}

check() {
	local name=$1
	flt_norm "$FLT_TMP/$name.out" > "$FLT_TMP/$name.norm"
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$name: exit $FLT_RC" "$FLT_TMP/$name.err"
		return
	fi
	flt_same "$name: $(flt_report "$FLT_TMP/$name.json" kills) kills, $(flt_report "$FLT_TMP/$name.json" restarts) restarts, $(flt_report "$FLT_TMP/$name.json" checkpoints) checkpoints: output" \
		"$FLT_TMP/ref.norm" "$FLT_TMP/$name.norm" && same_files "$name"
}

run chaos1 --chaos 400ms --chaos-seed 3 --chaos-max 25
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	run ckpt --ckpt-interval 0.3 --chaos 400ms --chaos-seed 5 --chaos-max 20
else
	echo "# ckpt case skipped: $CRIU check fails here"
fi
# rank 1 killed in the middle of its 150th file operation (sent, the
# answer not read yet): its next incarnation sends it again and gets the
# logged outcome
MPIV_FAULT=file:150:1 run kill_point
[ "$(flt_report "$FLT_TMP/kill_point.json" restarts)" -ge 1 ] 2> /dev/null &&
	flt_ok "kill_point: rank 1 died at its 150th file operation and ran again" ||
	flt_notok "kill_point: the fault point did not fire" "$FLT_TMP/kill_point.err"
# the first CM killed between carrying out a file operation and its
# answer, on a store (once): the job starts over
mkdir -p "$FLT_TMP/once"
MPIV_SERVER_FAULT=cm-file-logged:700 MPIV_SERVER_FAULT_DIR=$FLT_TMP/once \
	run cm_point --cm-store write
if [ -e "$FLT_TMP/once/cm-file-logged" ] && grep -q "$OVER" "$FLT_TMP/cm_point.err"; then
	flt_ok "cm_point: the first CM died at its fault point, the job started over"
else
	flt_notok "cm_point: the fault point did not fire, or the job did not start over" "$FLT_TMP/cm_point.err"
fi

# cm_pid PID WHICH: the embedded CM below PID that is the job's first
# (WHICH = files: its --files-journal holds the job's journal) or not
# (WHICH = other)
cm_pid() {
	local p q j
	for p in $(pgrep -P "$1" 2> /dev/null); do
		for q in $(pgrep -P "$p" 2> /dev/null); do
			tr '\0' ' ' < "/proc/$q/cmdline" 2> /dev/null | grep -q ' cm --listen ' || continue
			j=$(tr '\0' '\n' < "/proc/$q/cmdline" | sed -n '/^--files-journal$/{n;p;}')
			if compgen -G "$j/job-*" > /dev/null; then
				[ "$2" = files ] && echo "$q"
			else
				[ "$2" = other ] && echo "$q"
			fi
		done
	done | head -n 1
}
lines_at_least() { [ "$(cat "$1" 2> /dev/null | grep -c .)" -ge "$2" ]; }
said() { grep -q "$2" "$1"; }
RESUMED='^mpiv: job [^ ]* continues: channel memory [0-9.:]* recovered its logs'

# crash NAME WHICH MPIV_RUN_ARGS...: kills the job's first CM (WHICH =
# files) or the other (other) once the job printed a few lines; the job
# must start over, unless EXPECT=continue (a CM back on its store)
crash() {
	local name=$1 which=$2 out=$FLT_TMP/$1 pid cm
	shift 2
	setup "$name"
	rm -f "$out".json
	timeout -k 5 150 "$MPIV" run $(flt_proto) --report "$out.json" --timeout 120 \
		-n 4 --cms 2 --tag-output "$@" "$bin" "${ARGS[@]}" "$out.dat" "$out.in" \
		< /dev/null > "$out.out" 2> "$out.err" &
	pid=$!
	FLT_BG_PIDS=("$pid")
	if flt_wait_for 30 lines_at_least "$out.out" 10; then
		cm=$(cm_pid "$pid" "$which")
		[ -n "$cm" ] && kill -9 "$cm"
	fi
	wait "$pid"
	FLT_RC=$?
	FLT_BG_PIDS=()
	if [ -z "$cm" ]; then
		flt_notok "$name: no $which CM found to kill" "$out.err"
		return
	fi
	if [ "${EXPECT:-over}" = over ] && [ "$FLT_RC" = 0 ] && ! said "$out.err" "$OVER"; then
		flt_notok "$name: the job did not start over" "$out.err"
		return
	fi
	if [ "${EXPECT:-over}" = continue ] && [ "$FLT_RC" = 0 ] && ! said "$out.err" "$RESUMED"; then
		flt_notok "$name: the job did not continue on the recovered store" "$out.err"
		return
	fi
	if grep -q "re-execution printed other" "$out.err"; then
		flt_notok "$name: the new run printed other output (its files were not put back?)" "$out.err"
		return
	fi
	check "$name"
}

crash over_files files --cm-store off

# refused: the data file existed before the job (so the journal keeps a
# copy of it); its directory removed, then the first CM killed: the copy
# cannot be put back, so the new run must not start (exit 1, the reason
# said) rather than read what the first one wrote
out=$FLT_TMP/refused
setup refused
mkdir -p "$FLT_TMP/sub"
: > "$FLT_TMP/sub/refused.dat"
timeout -k 5 150 "$MPIV" run $(flt_proto) --report "$out.json" --timeout 120 -n 4 --cms 2 \
	--tag-output "$bin" "${ARGS[@]}" "$FLT_TMP/sub/refused.dat" "$out.in" \
	< /dev/null > "$out.out" 2> "$out.err" &
pid=$!
FLT_BG_PIDS=("$pid")
cm=
if flt_wait_for 30 lines_at_least "$out.out" 10; then
	cm=$(cm_pid "$pid" files)
	rm -rf "$FLT_TMP/sub"
	[ -n "$cm" ] && kill -9 "$cm"
fi
wait "$pid"
FLT_RC=$?
FLT_BG_PIDS=()
if [ -n "$cm" ] && [ "$FLT_RC" = 1 ] &&
    grep -q "refused the job: cannot put back the files the job changed" "$out.err"; then
	flt_ok "refused: a file that cannot be put back stops the new run (exit 1, said)"
else
	flt_notok "refused: exit $FLT_RC" "$out.err"
fi
crash over_other other --cm-store off
crash store_files files --cm-store write
EXPECT=continue crash store_other other --cm-store write
flt_finish
