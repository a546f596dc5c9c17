#!/usr/bin/env bash
# bench/disp_load.sh: dispatcher load with many idle node agents:
# its CPU and memory per node. Part of `make bench`.
#
# Builds bench/disp_load.c against $B/lib/libmpivrt.a (it registers the
# way node-agent/node.c does, through the auth handshake of runtime/auth.h),
# then for each N in DL_NODES and DL_ROUNDS rounds, on a fresh dispatcher
# (loopback, --log-level info to a file, a cluster secret unless
# DL_SECRET=0; heartbeat timeout DL_HB_TIMEOUT, 10 s):
#   disp_load -n N --pid DISPATCHER: 2 s idle, N sequential registrations
#   (one TCP connection each), then a Heartbeat per node every second for
#   DL_DURATION s (15) from one epoll thread, every echo read back;
#   dispatcher CPU (utime+stime of /proc/PID/stat, 10 ms ticks, and the
#   ns of /proc/PID/schedstat) and VmRSS sampled before, after the
#   registrations and at the end;
# then `mpiv status --json` must list N live nodes (timed), and every
# heartbeat must have been echoed with no connection lost.
# Prints a markdown table (median over rounds), also in
# $B/bench/disp_load.md; logs in $B/bench/disp_load/. Exit 1 on a failure.
#
# Env: MPIV_BUILD (build), DL_NODES ("100 300 1000"), DL_ROUNDS (3),
# DL_DURATION (15), DL_SECRET (1), DL_HB_TIMEOUT (10).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
B=${MPIV_BUILD:-build}
case $B in /*) BD=$B ;; *) BD=$ROOT/$B ;; esac
NODES=${DL_NODES:-100 300 1000}
R=${DL_ROUNDS:-3}
DUR=${DL_DURATION:-15}
USE_SECRET=${DL_SECRET:-1}
HBT=${DL_HB_TIMEOUT:-10}
OUT=$BD/bench/disp_load

[ -x "$BD/bin/mpiv" ] && [ -f "$BD/lib/libmpivrt.a" ] ||
    { echo "disp_load.sh: $BD not built (make all)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/logs"
cp "$BD/bin/mpiv" "$OUT/mpiv" || exit 1
MPIV=$OUT/mpiv
# as the unit tests link (Makefile: tests/unit rule)
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter \
    -Wno-missing-field-initializers -D_GNU_SOURCE -I"$BD/gen" -Iruntime \
    -o "$OUT/disp_load" bench/disp_load.c "$BD/lib/libmpivrt.a" \
    -lev -lprotobuf-c -lzstd -lm || exit 1
cd "$OUT" || exit 2
SECOPT=()
if [ "$USE_SECRET" = 1 ]; then
	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > secret)
	SECOPT=(--secret-file "$OUT/secret")
fi
# the dispatcher needs one fd per node too
ulimit -n "$(ulimit -Hn)" 2> /dev/null

problems=
problem() { problems="$problems$1"$'\n'; echo "disp_load.sh: $1" >&2; }
. "$ROOT/bench/lib.bash"
kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" | tail -n 1; }

DPID='' LPID=''
cleanup() {
	local p
	for p in $LPID $DPID; do
		kill -TERM "$p" 2> /dev/null
		for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2> /dev/null
		{ wait "$p"; } 2> /dev/null
	done
	LPID='' DPID=''
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one N, one round: appends the RESULT line + status fields to $n.res
round() {
	local n=$1 r=$2 d=$OUT/logs/n$1-r$2 da t0 t1 listed alive
	mkdir -p "$d"
	"$MPIV" dispatcher --listen 127.0.0.1:0 --heartbeat-timeout "$HBT" \
	    --log-level info "${SECOPT[@]}" > "$d/disp.out" 2> "$d/disp.log" &
	DPID=$!
	if ! wait_for 10 grep -q 'listening on' "$d/disp.out"; then
		problem "N=$n round $r: dispatcher did not start"
		cleanup
		return
	fi
	da=$(sed -n 's/.*listening on //p' "$d/disp.out" | head -n 1)
	sleep 0.5
	"$OUT/disp_load" --dispatcher "$da" -n "$n" --pid "$DPID" \
	    "${SECOPT[@]}" --duration "$DUR" --hold 120 > "$d/load.out" \
	    2> "$d/load.err" &
	LPID=$!
	if ! wait_for $((DUR + 120)) grep -q '^RESULT' "$d/load.out"; then
		problem "N=$n round $r: no RESULT from disp_load (see $d/load.err)"
		cleanup
		return
	fi
	t0=$(date +%s.%N)
	"$MPIV" status --dispatcher "$da" "${SECOPT[@]}" --json > "$d/status.json" 2> "$d/status.err"
	t1=$(date +%s.%N)
	read -r listed alive < <(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(len(s["nodes"]), sum(1 for x in s["nodes"] if x["state"] == "alive" and x["name"].startswith("load")))' "$d/status.json" 2> /dev/null || echo "0 0")
	kill -TERM "$LPID" 2> /dev/null
	{ wait "$LPID"; } 2> /dev/null
	LPID=
	cleanup
	line=$(grep '^RESULT' "$d/load.out")
	echo "$line status_nodes=$listed status_alive=$alive status_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" >> "$OUT/$n.res"
	[ "$(echo "$line" | kv registered)" = "$n" ] || problem "N=$n round $r: only $(echo "$line" | kv registered) nodes registered (see $d/load.err)"
	[ "$alive" = "$n" ] || problem "N=$n round $r: mpiv status lists $listed nodes, $alive alive (want $n)"
	[ "$(echo "$line" | kv closed)" = 0 ] || problem "N=$n round $r: $(echo "$line" | kv closed) connections closed by the dispatcher"
	[ "$(echo "$line" | kv hb_sent_total)" = "$(echo "$line" | kv hb_echoed_total)" ] ||
	    problem "N=$n round $r: $(echo "$line" | kv hb_sent_total) heartbeats sent, $(echo "$line" | kv hb_echoed_total) echoed"
	grep -q 'declared dead' "$d/disp.log" &&
	    awk '/declared dead/ && !/peer closed/' "$d/disp.log" | grep -q . &&
	    problem "N=$n round $r: the dispatcher declared nodes dead during the run (see $d/disp.log)"
}

med() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$OUT/$2.res" | median; }

host="$(nproc) cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), kernel $(uname -r)"
{
trap cleanup EXIT
echo "## Dispatcher load ($(date -u '+%Y-%m-%d %H:%M UTC'), $host, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "mpiv = \`$B/bin/mpiv\` ($(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null)), \`mpiv dispatcher --log-level info\` on loopback$([ "$USE_SECRET" = 1 ] && echo " with a cluster secret (every node proves K_node)"); \`bench/disp_load\`: N simulated idle node agents in one process, one heartbeat per node per second for $DUR s; median of $R rounds."
echo
echo "| nodes N | registration s (nodes/s) | dispatcher CPU per registration µs | heartbeats in the phase / all echoed of all sent | dispatcher CPU % (heartbeats) | CPU µs per node per heartbeat (schedstat) | same from utime+stime (10 ms ticks) | RSS idle KB | RSS with N nodes KB | RSS per node KB | \`mpiv status --json\` lists | status s | load generator CPU % |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $NODES; do
	: > "$OUT/$n.res"
	for r in $(seq "$R"); do
		round "$n" "$r"
	done
	if [ ! -s "$OUT/$n.res" ]; then
		echo "| $n | failed | | | | | | | | | | | |"
		continue
	fi
	echo "| $n | $(med reg_s "$n") ($(med reg_per_s "$n")) | $(med reg_cpu_us_per_node "$n") | $(med hb_sent "$n") / $(med hb_echoed_total "$n") of $(med hb_sent_total "$n") | $(med hb_sched_pct "$n") | $(med sched_us_per_hb "$n") | $(med cpu_us_per_hb "$n") | $(med rss0_kb "$n") | $(med rss_end_kb "$n") | $(med rss_kb_per_node "$n") | $(med status_alive "$n") alive | $(med status_s "$n") | $(med self_hb_cpu_pct "$n") |"
done
echo
echo "registration: N sequential handshakes (connect, Challenge, Hello with proof, HelloReply, NodeRegister, NodeWelcome) from one client, so it is bound by round trips, not by the dispatcher; dispatcher CPU per registration from schedstat (its info log writes two lines per node). CPU per node per heartbeat = dispatcher CPU time during the heartbeat phase / heartbeats sent (each is read, resets the node's libev timer and is echoed). RSS per node = (VmRSS at the end - VmRSS idle) / N. status s: wall time of \`mpiv status --json\` with N nodes."
if [ -n "$problems" ]; then
	echo
	echo "Problems during this run:"
	echo
	printf '%s' "$problems" | sed 's/^/- /'
fi
} | tee "$OUT/../disp_load.md"
[ -z "$(sed -n '/^Problems during this run/p' "$OUT/../disp_load.md")" ] || { echo "disp_load.sh: some runs failed, logs in $OUT/logs" >&2; exit 1; }
exit 0
