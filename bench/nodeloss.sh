#!/usr/bin/env bash
# bench/nodeloss.sh: time from the loss of a whole node to its ranks
# running again elsewhere, split into detection and relaunch.
# Part of `make bench`.
#
# For each heartbeat timeout T (--heartbeat-timeout of the dispatcher) and
# each way of losing a node, R times, on a fresh deployment on loopback
# (one dispatcher, one CM, 3 node agents of 2 slots, --log-level info logs
# to files, a cluster secret unless NODELOSS_SECRET=0):
#   1. `mpiv run --dispatcher` a 4-rank tests/fault/progs/flt_ring (about
#      10 s failure-free); wait until `mpiv status --json` shows every rank
#      running, then KILL_AFTER s more;
#   2. lose the agent of the node that holds the last rank:
#        kill: SIGKILL of the agent process (its TCP connection closes:
#              detection is immediate; its ranks die with it),
#        stop: SIGSTOP of the agent (a hung or partitioned machine: only the
#              heartbeat timeout detects it; SIGCONT once the job is over);
#   3. detection = the dispatcher's "node declared dead node=ID" log line
#      minus the kill instant (same clock: both HH:MM:SS local time);
#      relaunch = from that line to the last "dispatcher relaunch job=J
#      rank=R inc=I latency_ms=..." line of the ranks that were on the node
#      (the node agent reported the new incarnation started: program
#      shipped if needed, forked, exec'd); the dispatcher's own latency_ms
#      is shown too; replay = the relaunched ranks' "replay done ...
#      seconds=" (catching up through the CM's log: depends on how far the
#      job had gone, not on the failure detector);
#   4. the job must exit 0 with stdout identical to a failure-free run's
#      (run once first on the same kind of deployment); any other node
#      declared dead during the run is counted as spurious.
# The node agents heartbeat every min(1, T/4) s (NODELOSS_HB overrides):
# with the default 1 s against T = 1 s a loaded machine declares healthy
# nodes dead. Expect stop detection in [T - hb, T].
#
# Prints a markdown table (median, min-max over rounds), also written to
# $B/bench/nodeloss.md; logs in $B/bench/nodeloss/. Exit 1 if a run failed.
#
# Env: MPIV_BUILD (build), NODELOSS_TIMEOUTS ("1 2 5"), NODELOSS_MODES
# ("kill stop"), NODELOSS_ROUNDS (3), NODELOSS_HB, NODELOSS_PROG_ARGS
# (flt_ring ROUNDS WORK, "10000 20000"), KILL_AFTER (2 s),
# NODELOSS_SECRET (1), NODELOSS_TIMEOUT (120 s per job).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
B=${MPIV_BUILD:-build}
case $B in /*) BD=$B ;; *) BD=$ROOT/$B ;; esac
TIMEOUTS=${NODELOSS_TIMEOUTS:-1 2 5}
MODES=${NODELOSS_MODES:-kill stop}
R=${NODELOSS_ROUNDS:-3}
PARGS=${NODELOSS_PROG_ARGS:-10000 20000}
KILL_AFTER=${KILL_AFTER:-2}
USE_SECRET=${NODELOSS_SECRET:-1}
JOB_TMO=${NODELOSS_TIMEOUT:-120}
NP=4
NNODES=3
SLOTS=2
OUT=$BD/bench/nodeloss

[ -x "$BD/bin/mpiv" ] || { echo "nodeloss.sh: $BD/bin/mpiv not built" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/logs"
# A private copy: other work may rebuild build/bin/mpiv during the run.
cp "$BD/bin/mpiv" "$OUT/bin/mpiv" || exit 1
MPIV=$OUT/bin/mpiv
# (linked with libmpi.a where the ranks, nobody's, cannot read this
# build's libmpi.so: a checkout under root's 0700 home)
if sh "$ROOT/tests/tools/nobody-cannot-read.sh" "$BD/lib/libmpi.so"; then
	export MPIVCC_STATIC=1
fi
"$BD/bin/mpivcc" -O2 -o "$OUT/flt_ring" tests/fault/progs/flt_ring.c || exit 1
cd "$OUT" || exit 2
SECOPT=()
if [ "$USE_SECRET" = 1 ]; then
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > secret)
	SECOPT=(--secret-file "$OUT/secret")
fi

problems=
problem() { problems="$problems$1"$'\n'; echo "nodeloss.sh: $1" >&2; }
. "$ROOT/bench/lib.bash"
range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {if (NR) printf "%s-%s", lo, hi; else print "-"}'; }
# HH:MM:SS.fff -> seconds in the day
secs_of() { awk -F: '{ printf "%.3f\n", $1 * 3600 + $2 * 60 + $3 }'; }
# a - b in seconds of the day, across midnight
dsec() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < -43200) d += 86400; printf "%.3f\n", d }'; }

# ---- one deployment ----
DPID='' CMPID='' NPIDS=() DA='' STOPPED=''
deploy() {	# deploy T HB DIR
	local t=$1 hb=$2 d=$3 i
	mkdir -p "$d"
	"$MPIV" dispatcher --listen 127.0.0.1:0 --heartbeat-timeout "$t" \
	    --log-level info "${SECOPT[@]}" > "$d/disp.out" 2> "$d/disp.log" &
	DPID=$!
	wait_for 10 grep -q 'listening on' "$d/disp.out" || return 1
	DA=$(sed -n 's/.*listening on //p' "$d/disp.out" | head -n 1)
	"$MPIV" cm --dispatcher "$DA" --listen 127.0.0.1:0 --log-level info \
	    "${SECOPT[@]}" > "$d/cm.out" 2> "$d/cm.log" &
	CMPID=$!
	NPIDS=()
	for i in $(seq "$NNODES"); do
		"$MPIV" node --dispatcher "$DA" --slots "$SLOTS" --name "nl$i" \
		    --heartbeat-interval "$hb" --cache-dir "$OUT/cache$i" \
		    --log-level info "${SECOPT[@]}" > "$d/node$i.out" \
		    2> "$d/node$i.log" &
		NPIDS[$i]=$!
	done
	wait_for 20 awk -v n="$NNODES" '/node registered/ {c++} /cm registered/ {m++} END {exit !(c >= n && m >= 1)}' "$d/disp.log"
}
undeploy() {
	local p
	[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2> /dev/null
	STOPPED=
	for p in "${NPIDS[@]}" $CMPID $DPID; do
		kill -TERM "$p" 2> /dev/null
	done
	for p in "${NPIDS[@]}" $CMPID $DPID; do
		for _ in $(seq 50); do
			kill -0 "$p" 2> /dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2> /dev/null
		{ wait "$p"; } 2> /dev/null
	done
	NPIDS=() CMPID='' DPID=''
}
RUNPID=
cleanup() {
	[ -n "$RUNPID" ] && kill -TERM "$RUNPID" 2> /dev/null
	undeploy
}
trap cleanup EXIT
trap 'exit 130' INT TERM

submit() {	# submit DIR: mpiv run in the background; sets RUNPID
	(
		MPIV_PRINT_DISPATCHER=1 timeout -k 5 "$JOB_TMO" "$MPIV" run \
		    --dispatcher "$DA" "${SECOPT[@]}" --timeout $((JOB_TMO - 10)) \
		    -n "$NP" "$OUT/flt_ring" $PARGS > "$1/job.out" 2> "$1/job.err"
		echo $? > "$1/job.rc"
	) &
	RUNPID=$!
}
# ranks_running DIR: 0 once every rank of the job runs; writes DIR/ranks
# ("rank node_id" lines)
ranks_running() {
	"$MPIV" status --dispatcher "$DA" "${SECOPT[@]}" --json > "$1/status.json" 2> /dev/null || return 1
	python3 - "$1/status.json" "$NP" > "$1/ranks" 2> /dev/null << 'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
jobs = s.get("jobs", [])
if not jobs:
    sys.exit(1)
rk = jobs[0].get("ranks", [])
if len(rk) != int(sys.argv[2]) or any(r["state"] != "running" for r in rk):
    sys.exit(1)
for r in rk:
    print(r["rank"], r["node"])
EOF
}

# ---- failure-free reference ----
ref=$OUT/ref
if ! deploy 5 1 "$ref"; then
	problem "reference: deployment did not come up (see $ref)"
else
	t0=$(date +%s.%N)
	submit "$ref"
	wait "$RUNPID"
	RUNPID=
	t1=$(date +%s.%N)
	REF_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	[ "$(cat "$ref/job.rc" 2> /dev/null)" = 0 ] || problem "reference: exit $(cat "$ref/job.rc" 2> /dev/null) (see $ref)"
fi
undeploy
[ -s "$ref/job.out" ] || { echo "nodeloss.sh: no reference output" >&2; exit 1; }

# ---- one measured run ----
# measure MODE T HB DIR: appends "det rel lat replay spurious ok ranks=" to $RES
measure() {
	local mode=$1 t=$2 hb=$3 d=$4 victim vid vrank name i tk dl dead \
	    rel lat rep sp ok=yes rl
	if ! deploy "$t" "$hb" "$d"; then
		problem "$d: deployment did not come up"
		undeploy
		return
	fi
	submit "$d"
	if ! wait_for 60 ranks_running "$d"; then
		problem "$d: job never had all ranks running"
		kill -TERM "$RUNPID" 2> /dev/null; wait "$RUNPID"; RUNPID=
		undeploy
		return
	fi
	sleep "$KILL_AFTER"
	vid=$(awk -v r=$((NP - 1)) '$1 == r { print $2 }' "$d/ranks")
	name=${vid%%#*}
	i=${name#nl}
	victim=${NPIDS[$i]}
	vrank=$(awk -v n="$vid" '$2 == n { printf "%s ", $1 }' "$d/ranks")
	tk=$(date +%T.%N)
	if [ "$mode" = kill ]; then
		kill -KILL "$victim"
		{ wait "$victim"; } 2> /dev/null	# no "Killed" notice
	else
		kill -STOP "$victim"
		STOPPED=$victim
	fi
	if ! wait_for $((t * 3 + 30)) grep -q "node declared dead node=$vid " "$d/disp.log"; then
		problem "$d: $vid never declared dead"
	fi
	# every rank that was on it relaunched (its new incarnation started)
	for i in $vrank; do
		wait_for 60 grep -q "dispatcher relaunch job=[^ ]* rank=$i inc=" "$d/disp.log" ||
		    problem "$d: rank $i not relaunched within 60 s"
	done
	{ wait "$RUNPID"; } 2> /dev/null
	RUNPID=
	[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2> /dev/null
	STOPPED=
	[ "$(cat "$d/job.rc" 2> /dev/null)" = 0 ] || { ok=no; problem "$d: job exit $(cat "$d/job.rc" 2> /dev/null)"; }
	cmp -s "$ref/job.out" "$d/job.out" || { ok=no; problem "$d: output differs from the failure-free run"; }
	dl=$(grep -m1 "node declared dead node=$vid " "$d/disp.log")
	if [ -n "$dl" ]; then
		dead=$(echo "$dl" | cut -d' ' -f1 | secs_of)
		det=$(dsec "$dead" "$(echo "$tk" | secs_of)")
		rel=nan lat=nan rep=nan
		rl=$(for i in $vrank; do grep "dispatcher relaunch job=[^ ]* rank=$i inc=" "$d/disp.log" | head -n 1; done)
		if [ "$(echo "$rl" | grep -c .)" = "$(echo $vrank | wc -w)" ]; then
			rel=$(echo "$rl" | cut -d' ' -f1 | secs_of | sort -g | tail -n 1)
			rel=$(dsec "$rel" "$dead")
			lat=$(echo "$rl" | sed -n 's/.* latency_ms=\([0-9.]*\).*/\1/p' | sort -g | tail -n 1)
			rep=$(for i in $vrank; do grep "dispatcher replay done job=[^ ]* rank=$i incarnation=" "$d/disp.log" | head -n 1; done |
			    sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' | sort -g | tail -n 1)
		fi
	else
		det=nan rel=nan lat=nan rep=nan
	fi
	sp=$(grep 'node declared dead' "$d/disp.log" | grep -vc "node=$vid ")
	[ "$sp" = 0 ] || problem "$d: $sp other node(s) declared dead (spurious)"
	echo "$det $rel ${lat:-nan} ${rep:-nan} $sp $ok ranks=$(echo $vrank | tr ' ' ,)" >> "$RES"
	undeploy
}

col() { awk -v c="$1" '{ print $c }' "$2" | grep -v nan; }
stat3() {	# stat3 COL FILE [SCALE]: "median (min-max)"
	local m r
	m=$(col "$1" "$2" | awk -v s="${3:-1}" '{ printf "%.3f\n", $1 * s }' | median)
	r=$(col "$1" "$2" | awk -v s="${3:-1}" '{ printf "%.3f\n", $1 * s }' | range)
	echo "$m ($r)"
}

host="$(nproc) cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), kernel $(uname -r)"
{
trap cleanup EXIT
echo "## Node loss ($(date -u '+%Y-%m-%d %H:%M UTC'), $host, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "mpiv = \`$B/bin/mpiv\` ($(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null)); loopback deployment: dispatcher, 1 CM, $NNODES node agents x $SLOTS slots$([ "$USE_SECRET" = 1 ] && echo ", cluster secret (authenticated)"); job: $NP-rank flt_ring $PARGS (failure-free ${REF_S:-?} s); the agent holding rank $((NP - 1)) is lost $KILL_AFTER s after all ranks run; $R rounds; seconds, median (min-max)."
echo
echo "| loss | heartbeat timeout T s | heartbeat interval s | detection s | relaunch s (dead -> last rank started) | dispatcher latency_ms (max of the node's ranks) | loss -> running again s | replay s | spurious deaths | runs ok |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for mode in $MODES; do
	for t in $TIMEOUTS; do
		hb=${NODELOSS_HB:-$(awk -v t="$t" 'BEGIN { h = t / 4; if (h > 1) h = 1; print h }')}
		RES=$OUT/logs/$mode-$t.res
		: > "$RES"
		for r in $(seq "$R"); do
			measure "$mode" "$t" "$hb" "$OUT/logs/$mode-$t-r$r"
		done
		f=$RES
		awk '{ printf "%.3f\n", $1 + $2 }' "$f" | grep -v nan > "$f.tot"
		printf '| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s/%s |\n' \
		    "$([ "$mode" = kill ] && echo "SIGKILL agent" || echo "SIGSTOP agent")" \
		    "$t" "$hb" "$(stat3 1 "$f")" "$(stat3 2 "$f")" "$(stat3 3 "$f")" \
		    "$(median < "$f.tot")" "$(range < "$f.tot")" "$(stat3 4 "$f")" \
		    "$(awk '{ s += $5 } END { print s + 0 }' "$f")" \
		    "$(grep -c ' yes ' "$f")" "$R"
	done
done
echo
echo "detection: kill instant (\`date\` just before \`kill\`) to the dispatcher's \"node declared dead\" line; relaunch: that line to the last \"dispatcher relaunch ... latency_ms\" line of the ranks that were on the node (log times, 1 ms resolution); dispatcher latency_ms: its own measure of the same interval, per rank; replay: the relaunched ranks re-executing from the start through the CM's log (no checkpoints here), \"replay done ... seconds\"; runs ok: exit 0 and stdout identical to the failure-free run."
if [ -n "$problems" ]; then
	echo
	echo "Problems during this run:"
	echo
	printf '%s' "$problems" | sed 's/^/- /'
fi
} | tee "$OUT/../nodeloss.md"
[ -z "$(sed -n '/^Problems during this run/p' "$OUT/../nodeloss.md")" ] || { echo "nodeloss.sh: some runs failed, logs in $OUT/logs" >&2; exit 1; }
exit 0
