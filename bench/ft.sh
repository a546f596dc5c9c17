#!/usr/bin/env bash
# bench/ft.sh: what fault tolerance costs. Part of `make bench`.
#
#   1. failure-free overhead of message logging: the same ping-pong with
#      mpiv logging (the default), mpiv relay-only (--relay-only: no log, no
#      rank-side records) and Open MPI (TCP), back to back, R rounds;
#   2. the rank-side record: a ping-pong whose receives complete through
#      MPI_Waitany (one logged outcome per message), logging vs relay-only;
#   3. re-execution speed: rank 1 receives M messages, is killed as it
#      enters MPI_Finalize (MPIV_FAULT=finalize:1:1) and replays them all
#      from the CM's log; the report's replay time against the original
#      receive phase;
#   4. the send digest every logged send carries (replay divergence
#      detection): ns per message beside a memcpy of the same bytes
#      (bench/digest_speed.c) and beside the ping-pong of table 1;
#   5. the CM's durable store (mpiv cm --store, what lets a job continue
#      after its CM's crash): the ping-pong with the embedded CMs' store
#      off (the default), written before each answer and fdatasync'ed
#      before each answer (--cm-store fsync).
# Prints markdown tables; also written to $B/bench/ft.md. Only ratios from
# the same run mean anything on this noisy 2-core machine.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${MPIV_BUILD:-build}
R=${FT_ROUNDS:-3}
OUT=$B/bench/ft
mkdir -p "$OUT"
OMPICC=$(command -v mpicc.openmpi || true)
OMPIRUN=$(command -v mpirun.openmpi || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_OPTS="--oversubscribe --bind-to none --mca pml ob1 --mca btl tcp,self"
fail=0

for p in pingpong waitany replay; do
	"$B/bin/mpivcc" -O2 -o "$OUT/$p.mpiv" "bench/$p.c" || exit 1
	if [ -n "$OMPICC" ]; then
		"$OMPICC" -O2 -o "$OUT/$p.ompi" "bench/$p.c" || exit 1
	fi
done

# run_mpiv NAME OPTS... -- prog args: prints the RESULT line's field $FIELD
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | head -1; }
. bench/lib.bash
# FT_PROTOCOL (relay): what is measured here is the relay protocol's
# logging (the direct protocol's costs are in bench/run.sh and
# docs/BENCHMARKS.md)
mpiv_run() { timeout 300 "$B/bin/mpiv" run -n 2 --cms 1 --protocol "${FT_PROTOCOL:-relay}" "$@" 2>>"$OUT/err.log"; }
ompi_run() {
	[ -n "$OMPIRUN" ] || return 1
	timeout 300 "$OMPIRUN" $OMPI_OPTS -n 2 "$@" 2>>"$OUT/err.log"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'; }

: > "$OUT/lat"
{
echo "## Fault-tolerance costs ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "### Failure-free overhead of logging (2-rank ping-pong, half round trip µs, median of $R rounds)"
echo
echo "| size | mpiv logging | mpiv relay-only | Open MPI | logging / relay-only | logging / Open MPI |"
echo "|---:|---:|---:|---:|---:|---:|"
for size in 8 65536 1048576; do
	: > "$OUT/l" ; : > "$OUT/r" ; : > "$OUT/o"
	for _ in $(seq "$R"); do
		mpiv_run "$OUT/pingpong.mpiv" --size "$size" | field lat_us >> "$OUT/l"
		mpiv_run --relay-only "$OUT/pingpong.mpiv" --size "$size" | field lat_us >> "$OUT/r"
		ompi_run "$OUT/pingpong.ompi" --size "$size" | field lat_us >> "$OUT/o"
	done
	l=$(median < "$OUT/l"); r=$(median < "$OUT/r"); o=$(median < "$OUT/o")
	[ "$l" = nan ] || [ "$r" = nan ] && fail=1
	echo "$size $l" >> "$OUT/lat"
	echo "| $size | $l | $r | $o | $(ratio "$l" "$r") | $(ratio "$l" "$o") |"
done
echo
echo "### Durable CM store (2-rank ping-pong, half round trip µs, median of $R rounds)"
echo
echo "| size | store off (default) | store write | store fsync | write / off | fsync / off |"
echo "|---:|---:|---:|---:|---:|---:|"
for size in 8 65536 1048576 4194304; do
	: > "$OUT/n" ; : > "$OUT/w" ; : > "$OUT/f"
	for _ in $(seq "$R"); do
		mpiv_run --cm-store off "$OUT/pingpong.mpiv" --size "$size" | field lat_us >> "$OUT/n"
		mpiv_run --cm-store write "$OUT/pingpong.mpiv" --size "$size" | field lat_us >> "$OUT/w"
		mpiv_run --cm-store fsync "$OUT/pingpong.mpiv" --size "$size" | field lat_us >> "$OUT/f"
	done
	n=$(median < "$OUT/n"); w=$(median < "$OUT/w"); f=$(median < "$OUT/f")
	[ "$n" = nan ] || [ "$w" = nan ] || [ "$f" = nan ] && fail=1
	echo "| $size | $n | $w | $f | $(ratio "$w" "$n") | $(ratio "$f" "$n") |"
done
echo
echo "### Rank-side records (receives completed by MPI_Waitany, 8 B, half round trip µs)"
echo
echo "| mpiv logging | mpiv relay-only | Open MPI | logging / relay-only |"
echo "|---:|---:|---:|---:|"
: > "$OUT/l" ; : > "$OUT/r" ; : > "$OUT/o"
for _ in $(seq "$R"); do
	mpiv_run "$OUT/waitany.mpiv" 2000 8 | field lat_us >> "$OUT/l"
	mpiv_run --relay-only "$OUT/waitany.mpiv" 2000 8 | field lat_us >> "$OUT/r"
	ompi_run "$OUT/waitany.ompi" 2000 8 | field lat_us >> "$OUT/o"
done
l=$(median < "$OUT/l"); r=$(median < "$OUT/r"); o=$(median < "$OUT/o")
echo "| $l | $r | $o | $(ratio "$l" "$r") |"
echo
echo "### Re-execution speed (rank 1 killed at MPI_Finalize, replays every receive)"
echo
echo "Streaming replay (the default, MPIV_REPLAY_WINDOW=256) against one CM"
echo "round trip per replayed receive (MPIV_REPLAY_WINDOW=0). Speed-up ="
echo "original / replay (> 1: the replay is faster than the first run)."
echo
echo "| messages x size | original receive phase (s) | replay, streaming (s) | speed-up | replay, window 0 (s) | speed-up |"
echo "|---|---:|---:|---:|---:|---:|"
for ms in "20000 64" "2000 65536"; do
	set -- $ms
	: > "$OUT/o" ; : > "$OUT/p" ; : > "$OUT/p0"
	for _ in $(seq "$R"); do
		for w in 256 0; do
			pf=$OUT/p; [ "$w" = 0 ] && pf=$OUT/p0
			MPIV_REPLAY_WINDOW=$w MPIV_FAULT=finalize:1:1 mpiv_run --report "$OUT/rep.json" \
				"$OUT/replay.mpiv" "$1" "$2" | field recv_phase_s >> "$OUT/o"
			python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["restart_log"]; print(l[0]["replay_s"] if l else "nan")' \
				"$OUT/rep.json" >> "$pf" 2>/dev/null || echo nan >> "$pf"
		done
	done
	o=$(median < "$OUT/o"); p=$(median < "$OUT/p"); p0=$(median < "$OUT/p0")
	{ [ "$p" = nan ] || [ "$p0" = nan ]; } && fail=1
	echo "| $1 x $2 B | $o | $p | $(ratio "$o" "$p") | $p0 | $(ratio "$o" "$p0") |"
done
echo
echo "### Send digest (every logged send; best of 5, ns per message)"
echo
echo "| size | digest ns | memcpy ns | digest GB/s | digest / logging half round trip |"
echo "|---:|---:|---:|---:|---:|"
if cc -O2 -Ilibmpi-lite -o "$OUT/digest_speed" bench/digest_speed.c libmpi-lite/digest.c 2>>"$OUT/err.log"; then
	"$OUT/digest_speed" 8 65536 1048576 | while read -r _ sz dg mc gb _; do
		sz=${sz#size=}; dg=${dg#digest_ns=}; mc=${mc#memcpy_ns=}; gb=${gb#digest_gbs=}
		lat=$(sed -n "s/^$sz //p" "$OUT/lat" 2>/dev/null)
		echo "| $sz | $dg | $mc | $gb | $(awk -v d="$dg" -v l="${lat:-0}" 'BEGIN { if (l > 0) printf "%.4f", d / 1000 / l; else print "n/a" }') |"
	done
else
	echo "digest_speed build failed" >&2
	fail=1
fi
} | tee "$B/bench/ft.md"
[ "$fail" = 0 ] || { echo "ft.sh: some runs failed, see $OUT/err.log" >&2; exit 1; }
