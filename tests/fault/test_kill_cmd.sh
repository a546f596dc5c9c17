#!/usr/bin/env bash
# tests/fault/test_kill_cmd.sh: `mpiv kill` of chosen ranks of a running
# job. mpiv run is started with MPIV_PRINT_DISPATCHER=1; the script reads
# "mpiv: dispatcher HOST:PORT job JOB" from its stderr, waits until the job
# has printed some progress (so the kill lands mid-run), then kills:
#   A  one rank (a ring member)
#   B  two ranks at once (stencil, --tag-output)
#   C  the master of master-worker, then again right after its relaunch
#      (incarnation 2 seen, i.e. during its replay) -> incarnation 3
#   D  every rank ("all")
#   E  the rank whose exit code is the job's (3), mid-run
# Each time: same exit code and output as the failure-free run, the
# killed ranks came back with the next incarnation (the programs create
# FLT_MARK_DIR/rank.R.inc.I after MPI_Init), --report counts restarts.
. "$(dirname "$0")/common.bash"

flt_need_chaos
timeout 20 "$MPIV" kill --help 2>&1 | grep -q -- '--dispatcher' ||
	flt_skip "mpiv kill is missing"

# kc_start OUT MARKDIR SECS ARGS...: mpiv run in the background (KC_PID).
kc_start() {
	local out=$1 marks=$2 secs=$3
	shift 3
	rm -rf "$marks" && mkdir -p "$marks"
	rm -f "$out.json"
	MPIV_PRINT_DISPATCHER=1 FLT_MARK_DIR=$marks \
		timeout -k 5 $((secs + 20)) "$MPIV" run $(flt_proto) --report "$out.json" \
		--timeout "$secs" "$@" < /dev/null > "$out.out" 2> "$out.err" &
	KC_PID=$!
	FLT_BG_PIDS=("$KC_PID")
}

kc_wait() {	# sets FLT_RC
	wait "$KC_PID"
	FLT_RC=$?
	FLT_BG_PIDS=()
}

# kc_addr OUT: prints "HOST:PORT JOB" once mpiv run has said it.
kc_addr() {
	sed -n 's/^mpiv: dispatcher \([^ ]*\) job \([^ ]*\)$/\1 \2/p' "$1.err" | head -n 1
}
has_addr() { [ -n "$(kc_addr "$1")" ]; }
lines_at_least() { [ "$(wc -l < "$1")" -ge "$2" ]; }
exists() { [ -e "$1" ]; }

# kc_kill OUT RANK: mpiv kill, output in OUT.kill.RANK; returns its code.
kc_kill() {
	local a
	read -r -a a <<< "$(kc_addr "$1")"
	timeout 20 "$MPIV" kill --dispatcher "${a[0]}" "${a[1]}" "$2" \
		> "$1.kill.$2" 2>&1
}

# scenario NAME MODE N PROGARGS -- ACTIONS
#   MODE raw|tag; ACTIONS is a function run with OUT and MARKS set, after
#   the dispatcher address is known and the job printed PROGRESS lines.
scenario() {
	local name=$1 mode=$2 n=$3 progress=$4 action=$5 expect_marks=$6
	shift 6
	if [ -n "${FLT_ONLY:-}" ] && ! [[ $name =~ $FLT_ONLY ]]; then
		return
	fi
	local ref=$FLT_TMP/$name.ref tagopt=()
	OUT=$FLT_TMP/$name MARKS=$FLT_TMP/$name.marks
	[ "$mode" = tag ] && tagopt=(--tag-output)
	flt_job "$ref" 120 -n "$n" "${tagopt[@]}" "$@"
	local ref_rc=$FLT_RC
	if grep -q FLT-FAIL "$ref.err"; then
		flt_notok "$name: failure-free reference run failed" "$ref.err"
		return
	fi
	kc_start "$OUT" "$MARKS" "${FLT_TIMEOUT:-120}" -n "$n" "${tagopt[@]}" "$@"
	if ! flt_wait_for 30 has_addr "$OUT"; then
		flt_notok "$name: mpiv run never printed 'mpiv: dispatcher HOST:PORT job JOB' with MPIV_PRINT_DISPATCHER=1" "$OUT.err"
		kill -TERM -- "-$KC_PID" 2>/dev/null
		kc_wait
		return
	fi
	if ! flt_wait_for 60 lines_at_least "$OUT.out" "$progress"; then
		flt_notok "$name: job did not print $progress progress lines" "$OUT.err" "$OUT.out"
		kill -TERM -- "-$KC_PID" 2>/dev/null
		kc_wait
		return
	fi
	"$action"
	local arc=$?
	kc_wait
	local rc=$FLT_RC
	[ "$arc" -eq 0 ] || flt_notok "$name: the kill step failed (see above)" "$OUT.err"
	if [ "$rc" != "$ref_rc" ]; then
		flt_notok "$name: exit $rc, failure-free $ref_rc" "$OUT.err" "$OUT.out"
	else
		flt_ok "$name: exit code $rc as failure-free"
	fi
	if [ "$mode" = tag ]; then
		flt_norm "$ref.out" "$ref.err" > "$ref.cmp"
		flt_norm "$OUT.out" "$OUT.err" > "$OUT.cmp"
	else
		cp "$ref.out" "$ref.cmp"
		cp "$OUT.out" "$OUT.cmp"
	fi
	flt_same "$name: output" "$ref.cmp" "$OUT.cmp"
	local m missing=""
	for m in $expect_marks; do
		[ -e "$MARKS/$m" ] || missing="$missing $m"
	done
	if [ -z "$missing" ]; then
		flt_ok "$name: relaunched as expected ($expect_marks)"
	else
		flt_notok "$name: no relaunch seen for:$missing (present: $(ls "$MARKS" | tr '\n' ' '))"
	fi
	local restarts
	restarts=$(flt_report "$OUT.json" restarts)
	if [ -n "$restarts" ] && [ "$restarts" -ge "$(wc -w <<< "$expect_marks")" ]; then
		flt_ok "$name: report shows $restarts restarts"
	else
		flt_notok "$name: report shows ${restarts:-no} restarts, want >= $(wc -w <<< "$expect_marks")" "$OUT.json"
	fi
}

# A: one rank
act_one() {
	kc_kill "$OUT" 2 || { flt_notok "A: mpiv kill rank 2 failed" "$OUT.kill.2"; return 1; }
	flt_wait_for 30 exists "$MARKS/rank.2.inc.2" ||
		{ flt_notok "A: rank 2 not relaunched within 30 s"; return 1; }
}

# B: two ranks at the same moment
act_two() {
	kc_kill "$OUT" 1 & local p1=$!
	kc_kill "$OUT" 3 & local p3=$!
	local r1=0 r3=0
	wait "$p1" || r1=$?
	wait "$p3" || r3=$?
	[ "$r1" -eq 0 ] || { flt_notok "B: mpiv kill rank 1 failed" "$OUT.kill.1"; return 1; }
	[ "$r3" -eq 0 ] || { flt_notok "B: mpiv kill rank 3 failed" "$OUT.kill.3"; return 1; }
}

# C: rank 0, then rank 0 again as soon as incarnation 2 is up
act_again() {
	kc_kill "$OUT" 0 || { flt_notok "C: first mpiv kill rank 0 failed" "$OUT.kill.0"; return 1; }
	flt_wait_for 30 exists "$MARKS/rank.0.inc.2" ||
		{ flt_notok "C: rank 0 not relaunched within 30 s"; return 1; }
	kc_kill "$OUT" 0 || { flt_notok "C: second mpiv kill rank 0 (incarnation 2) failed" "$OUT.kill.0"; return 1; }
	flt_wait_for 30 exists "$MARKS/rank.0.inc.3" ||
		{ flt_notok "C: rank 0 not relaunched a second time within 30 s"; return 1; }
}

# D: every rank
act_all() {
	kc_kill "$OUT" all || { flt_notok "D: mpiv kill all failed" "$OUT.kill.all"; return 1; }
}

# E: the rank that will exit 3
act_exit() {
	kc_kill "$OUT" 2 || { flt_notok "E: mpiv kill rank 2 failed" "$OUT.kill.2"; return 1; }
}

bin_ring=$(flt_prog flt_ring) && bin_st=$(flt_prog flt_stencil) &&
	bin_mw=$(flt_prog flt_mw) && bin_as=$(flt_prog flt_async) &&
	bin_ex=$(flt_prog flt_exit) || { flt_notok "cannot compile tests/fault/progs"; flt_finish; }

scenario A-one-rank raw 4 3 act_one "rank.2.inc.2" "$bin_ring" 6000 6000
scenario B-two-ranks tag 4 10 act_two "rank.1.inc.2 rank.3.inc.2" "$bin_st" 6000 6000
scenario C-again-in-replay raw 4 2 act_again "rank.0.inc.2 rank.0.inc.3" "$bin_mw" 4000 40000
scenario D-all-ranks tag 3 4 act_all "rank.0.inc.2 rank.1.inc.2 rank.2.inc.2" "$bin_as" 150 60
scenario E-exit-code tag 3 2 act_exit "rank.2.inc.2" "$bin_ex" 3000 3
flt_finish
