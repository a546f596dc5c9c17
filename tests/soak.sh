#!/usr/bin/env bash
# tests/soak.sh: `make soak`. One long-lived deployment on loopback (a
# dispatcher, 2 Channel Memories, a checkpoint server, 3 node agents of 4
# slots, a cluster secret), and for SOAK_MINUTES (default 30) jobs of
# mixed programs submitted to it one after another, each under one kind
# of fault picked in turn:
#   ranks    ranks killed at random (--chaos 600ms)
#   ckpt     the same with checkpoints every 0.4 s (when CRIU works)
#   nodes    whole node agents killed at random (--chaos-nodes); this
#            script starts a killed agent again, as a rebooted machine
#   cm       a CM killed with SIGKILL mid-job and started again at the
#            same address: cm0 has a store (--store), the job continues
#            on its recovered logs; cm1 has none, the job starts over
#   mixed    checkpoints, rank kills and a CM kill together
# Each full turn of programs and modes runs in the next protocol of
# SOAK_PROTOCOLS (default "direct relay"). flt_ring prints a line per rank
# after MPI_Finalize, which a direct rank killed late must not lose.
# Every job's output (tagged, sorted by rank) must equal the program's
# failure-free output, taken first on the same deployment, and the files
# flt_file writes with MPI-IO (the CMs serve them beneath the soak's
# directory, --files) those of its failure-free run; every job
# runs with --deadlock-after 5 --deadlock-abort, so that a fault taken
# for a deadlock fails it. The RSS of
# every daemon is sampled after each job. The end prints a summary and
# writes it to $MPIV_BUILD/soak/results.md: jobs, wrong outputs, failed
# jobs, kills, and each daemon's RSS at the start, in the middle and at
# the end, and what the CS's and cm0's stores take on disk (every ended
# job's images must be gone from the CS's store at the end). Exit status:
# 0 only with no wrong output, no failed job and no images left.
#
#   SOAK_MINUTES=10 make soak      (or: bash tests/soak.sh)
#   MPIV_BUILD                     build dir (default build)
set -u
cd "$(dirname "$0")/.." || exit 2
exec < /dev/null	# mpiv run would wait for the end of a stdin left open
B=${MPIV_BUILD:-build}
MINUTES=${SOAK_MINUTES:-30}
ROOT=$(pwd)
MPIV=$ROOT/$B/bin/mpiv
OUT=$ROOT/$B/soak
W=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-soak.XXXXXX")
chmod 755 "$W"	# root's node agents run their ranks as nobody
mkdir -p "$OUT"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done
	sleep 0.5
	for p in "${PIDS[@]}"; do kill -9 "$p" 2> /dev/null; done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf 'soak: %s\n' "$*"; }

[ -x "$MPIV" ] || { say "$MPIV not built (make)"; exit 2; }
"$MPIV" secret new "$W/secret" > /dev/null || exit 2

# start NAME ARGS...: a daemon in the background, its log in $W/NAME.log;
# its pid in PID_NAME, its "listening on" address in ADDR_NAME.
start() {
	local name=$1 i a
	shift
	# emptied here, before the daemon starts: were it emptied by the
	# child's redirection, the loop below could read the old address
	# between its grep and its sed as an empty one
	: > "$W/$name.out"
	"$MPIV" "$@" --secret-file "$W/secret" --log-level "${SOAK_LOG_LEVEL:-warn}" >> "$W/$name.out" 2>> "$W/$name.log" &
	eval "PID_$name=$!"
	PIDS+=("$!")
	for i in $(seq 100); do
		a=$(sed -n 's/^listening on \([^ ]*\)$/\1/p' "$W/$name.out" 2> /dev/null | head -n 1)
		if [ -n "$a" ]; then
			eval "ADDR_$name=\$a"
			return 0
		fi
		[ "$name" = "${name#node}" ] || return 0	# nodes listen on nothing
		sleep 0.05
	done
	say "$name did not start: $(tail -n 2 "$W/$name.log")"
	exit 1
}

start disp dispatcher --listen 127.0.0.1:0
# cm0 keeps its logs in a store (a lost cm0: jobs continue), cm1 does not
# (a lost cm1: jobs start over)
# both serve MPI-IO beneath the soak's directory (flt_file)
cm_store() { echo "--files $W"; [ "$1" = 0 ] && echo "--store $W/cmstore0"; }
start cm0 cm --listen 127.0.0.1:0 --dispatcher "$ADDR_disp" $(cm_store 0)
start cm1 cm --listen 127.0.0.1:0 --dispatcher "$ADDR_disp" $(cm_store 1)
start cs cs --listen 127.0.0.1:0 --dispatcher "$ADDR_disp" --store "$W/store"
# nobody (the ranks of a root node agent) cannot read this build's
# libmpi.so in a checkout under root's 0700 home: the agents keep root
NODE_USER=
if sh "$ROOT/tests/tools/nobody-cannot-read.sh" "$ROOT/$B/lib/libmpi.so"; then
	NODE_USER="--user root"
fi
for n in 0 1 2; do
	start "node$n" node --dispatcher "$ADDR_disp" --slots 4 --name "soak$n" \
		--cache-dir "$W/cache$n" $NODE_USER
done
say "deployment: dispatcher $ADDR_disp, cms $ADDR_cm0 $ADDR_cm1, cs $ADDR_cs, 3 nodes"

CRIU_OK=0
timeout 60 "${MPIV_CRIU:-/opt/mpiv/criu/criu}" check > /dev/null 2>&1 && CRIU_OK=1

# The programs: name, ranks, args (tests/fault/progs).
PROGS=(
	"flt_stencil 4 3000 3000"
	"flt_mw 4 2000 20000"
	"flt_ring 4 1500 3000 1"
	"flt_coll 4 250 64"
	"flt_order 3 150 24"
	"flt_async 4 60 40"
	"flt_ckpt 3 6000 4 2000"
	"flt_nbc 4 300 48"
	"flt_file 4 800 256 @DAT @IN"
	"flt_rma 4 800 3000 2"
)
MODES=(ranks nodes cm mixed)
[ "$CRIU_OK" = 1 ] && MODES=(ranks ckpt nodes cm mixed)
read -r -a PROTOS <<< "${SOAK_PROTOCOLS:-direct relay}"

# files OUT ARGS...: ARGS with @DAT and @IN replaced by OUT.dat and
# OUT.in (flt_file's data file and counter file, 41, made afresh) in FARGS
files() {
	local out=$1 a
	shift
	FARGS=()
	for a in "$@"; do
		case $a in
		@DAT) a=$out.dat; rm -f "$a" "$a.log" ;;
		@IN) a=$out.in; printf '\051\0\0\0\0\0\0\0' > "$a" ;;
		esac
		FARGS+=("$a")
	done
}
# same_files OUT REF: OUT's data, record log and counter files (if any)
# equal REF's
same_files() {
	local f
	for f in dat dat.log in; do
		[ -e "$2.$f" ] || continue
		cmp -s "$1.$f" "$2.$f" || return 1
	done
}

run_job() {	# OUTFILE NP PROG ARGS... (with RUN_OPTS): exit code
	local out=$1 np=$2
	shift 2
	files "$out" "$@"
	set -- "${FARGS[@]}"
	timeout -k 5 300 "$MPIV" run --dispatcher "$ADDR_disp" --secret-file "$W/secret" \
		--report "$out.json" --timeout 240 --deadlock-after 5 --deadlock-abort \
		--tag-output -n "$np" "${RUN_OPTS[@]}" "$@" \
		< /dev/null > "$out.out" 2> "$out.err"
}
norm() {
	sed -n 's/^\[[^],]*,\([0-9][0-9]*\)\]<\(std[a-z]*\)>: \{0,1\}/\1 \2 /p' "$1" |
		LC_ALL=C sort -s -k2,2 | LC_ALL=C sort -s -n -k1,1
}

for p in "${PROGS[@]}"; do
	set -- $p
	"$ROOT/$B/bin/mpivcc" -O1 -I tests/fault/progs -o "$W/$1" "tests/fault/progs/$1.c" || exit 1
	RUN_OPTS=()
	run_job "$W/$1.ref" "$2" "$W/$1" "${@:3}" || { say "failure-free $1 failed: $(tail -n 2 "$W/$1.ref.err")"; exit 1; }
	norm "$W/$1.ref.out" > "$W/$1.ref.norm"
done
say "references taken; soaking for $MINUTES minutes (modes: ${MODES[*]})"

# keep_nodes: a node agent the dispatcher killed starts again.
keep_nodes() {
	local n pid
	for n in 0 1 2; do
		eval "pid=\$PID_node$n"
		if ! kill -0 "$pid" 2> /dev/null; then
			start "node$n" node --dispatcher "$ADDR_disp" --slots 4 --name "soak$n" \
				--cache-dir "$W/cache$n" $NODE_USER
			NODE_RESTARTS=$((NODE_RESTARTS + 1))
		fi
	done
}
# kill_cm I: SIGKILL CM I, then start it again at its address.
kill_cm() {
	local pid addr
	eval "pid=\$PID_cm$1 addr=\$ADDR_cm$1"
	kill -9 "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	sleep 0.3
	# shellcheck disable=SC2046
	start "cm$1" cm --listen "$addr" --dispatcher "$ADDR_disp" $(cm_store "$1")
	CM_KILLS=$((CM_KILLS + 1))
}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2> /dev/null || echo 0; }
sample() {
	local n
	printf '%s' "$1" >> "$OUT/rss.csv"
	for n in disp cm0 cm1 cs node0 node1 node2; do
		eval "printf ',%s' \"\$(rss \$PID_$n)\"" >> "$OUT/rss.csv"
	done
	echo >> "$OUT/rss.csv"
	# what the stores take on disk (kB)
	echo "$1,$(du -sk "$W/store" | cut -f1),$(du -sk "$W/cmstore0" | cut -f1)" >> "$OUT/disk.csv"
}

echo "job,disp,cm0,cm1,cs,node0,node1,node2" > "$OUT/rss.csv"
echo "job,cs_store,cm0_store" > "$OUT/disk.csv"
: > "$OUT/jobs.txt"
JOBS=0 WRONG=0 FAILED=0 KILLS=0 CM_KILLS=0 NODE_RESTARTS=0 CM_CONT=0 CM_OVER=0
END=$(( $(date +%s) + MINUTES * 60 ))
sample 0
while [ "$(date +%s)" -lt "$END" ]; do
	p=${PROGS[$((JOBS % ${#PROGS[@]}))]}
	mode=${MODES[$(( (JOBS / ${#PROGS[@]}) % ${#MODES[@]} ))]}
	proto=${PROTOS[$(( (JOBS / (${#PROGS[@]} * ${#MODES[@]})) % ${#PROTOS[@]} ))]}
	set -- $p
	name=$1 np=$2
	shift 2
	seed=$((1000 + JOBS))
	case $mode in
	ranks) RUN_OPTS=(--chaos 600ms --chaos-seed "$seed") ;;
	ckpt) RUN_OPTS=(--ckpt-interval 0.4 --chaos 600ms --chaos-seed "$seed") ;;
	nodes) RUN_OPTS=(--chaos 1s --chaos-nodes --chaos-seed "$seed") ;;
	cm) RUN_OPTS=(--cms 2) ;;	# both CMs serve it: either kill hits
	mixed) RUN_OPTS=(--cms 2 --chaos 800ms --chaos-seed "$seed")
		[ "$CRIU_OK" = 1 ] && RUN_OPTS+=(--ckpt-interval 0.4) ;;
	esac
	RUN_OPTS+=(--protocol "$proto")
	out=$W/job$JOBS
	run_job "$out" "$np" "$W/$name" "$@" &
	jpid=$!
	if [ "$mode" = cm ] || [ "$mode" = mixed ]; then
		sleep "0.$((RANDOM % 9 + 1))"
		kill -0 "$jpid" 2> /dev/null && kill_cm $((JOBS % 2))
	fi
	while kill -0 "$jpid" 2> /dev/null; do
		keep_nodes
		sleep 0.2
	done
	wait "$jpid"
	rc=$?
	keep_nodes
	k=$(jq -r '.kills // 0' "$out.json" 2> /dev/null)
	KILLS=$((KILLS + ${k:-0}))
	CM_CONT=$((CM_CONT + $(grep -c '^mpiv: job .* continues: channel memory' "$out.err")))
	CM_OVER=$((CM_OVER + $(grep -c '^mpiv: job .* runs again from the beginning' "$out.err")))
	JOBS=$((JOBS + 1))
	verdict=ok
	if [ "$rc" != 0 ]; then
		FAILED=$((FAILED + 1)) verdict="failed (exit $rc: $(grep '^mpiv: ' "$out.err" | tail -n 1 | cut -c1-200))"
		cp "$out.err" "$OUT/job$((JOBS - 1)).err"
	elif ! norm "$out.out" | cmp -s - "$W/$name.ref.norm"; then
		WRONG=$((WRONG + 1)) verdict="WRONG OUTPUT"
		cp "$out.out" "$OUT/job$((JOBS - 1)).out"
	elif ! same_files "$out" "$W/$name.ref"; then
		WRONG=$((WRONG + 1)) verdict="WRONG FILES"
	fi
	echo "$((JOBS - 1)) $name $mode $proto kills=${k:-0} $verdict" >> "$OUT/jobs.txt"
	[ "$verdict" = ok ] || say "job $((JOBS - 1)) $name $mode $proto: $verdict"
	sample "$JOBS"
	rm -f "$out".*
done

# Every job has ended: the CS drops their images (JobEnd), at once.
for _ in $(seq 50); do
	LEFT=$(find "$W/store" -mindepth 2 -maxdepth 2 -name owner | wc -l)
	[ "$LEFT" = 0 ] && break
	sleep 0.1
done

# RSS of each daemon: first sample, middle, last (kB).
mid=$(( (JOBS + 1) / 2 + 1 ))
{
	echo "## Soak ($(date -u '+%Y-%m-%d %H:%M UTC'), $MINUTES min, $(nproc) cores, CRIU $([ "$CRIU_OK" = 1 ] && echo on || echo off))"
	echo
	echo "$JOBS jobs of ${#PROGS[@]} programs under modes ${MODES[*]}, protocols ${PROTOS[*]}: $WRONG wrong outputs, $FAILED failed jobs; $KILLS rank or node kills by the dispatcher, $CM_KILLS CM kills (jobs continued on a recovered store $CM_CONT times, started over $CM_OVER times), $NODE_RESTARTS node agents started again."
	echo
	echo "| daemon | RSS at start (kB) | after half the jobs | at the end |"
	echo "|---|---:|---:|---:|"
	for col in 2 3 4 5 6 7 8; do
		name=$(head -n 1 "$OUT/rss.csv" | cut -d, -f"$col")
		a=$(sed -n 2p "$OUT/rss.csv" | cut -d, -f"$col")
		m=$(sed -n "${mid}p" "$OUT/rss.csv" | cut -d, -f"$col")
		z=$(tail -n 1 "$OUT/rss.csv" | cut -d, -f"$col")
		echo "| $name | $a | $m | $z |"
	done
	echo
	echo "(CMs and node agents are new processes after a kill: their RSS is that of the latest one.)"
	echo
	echo "| store on disk (kB) | at start | after half the jobs | largest | at the end |"
	echo "|---|---:|---:|---:|---:|"
	for col in 2 3; do
		name=$(head -n 1 "$OUT/disk.csv" | cut -d, -f"$col")
		a=$(sed -n 2p "$OUT/disk.csv" | cut -d, -f"$col")
		m=$(sed -n "${mid}p" "$OUT/disk.csv" | cut -d, -f"$col")
		x=$(tail -n +2 "$OUT/disk.csv" | cut -d, -f"$col" | sort -n | tail -n 1)
		z=$(tail -n 1 "$OUT/disk.csv" | cut -d, -f"$col")
		echo "| $name | $a | $m | $x | $z |"
	done
	echo
	echo "Job directories left in the CS store once every job ended: $LEFT (must be 0)."
} | tee "$OUT/results.md"
[ "$LEFT" = 0 ] || FAILED=$((FAILED + 1))
# the daemons' logs go with a failure (warnings and errors only)
[ "$WRONG" = 0 ] && [ "$FAILED" = 0 ] || cp "$W"/*.log "$OUT/" 2> /dev/null
echo "$((JOBS - WRONG - FAILED)) passed, $((WRONG + FAILED)) failed"
[ "$WRONG" = 0 ] && [ "$FAILED" = 0 ] && [ "$JOBS" -gt 0 ]
