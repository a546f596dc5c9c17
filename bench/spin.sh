#!/usr/bin/env bash
# bench/spin.sh: what spinning before sleeping does to a rank's waits
# (libmpi-lite/spin.c). Not part of `make bench`.
#
#   bash bench/spin.sh            (SPIN_ROUNDS=R, 3; MPIV_BUILD, build)
#
# Runs, in R rounds, each case with mpiv MPIV_SPIN=0 (never spin), mpiv
# adaptive (MPIV_SPIN=auto), mpiv MPIV_SPIN=$SPIN_FIXED (50: a fixed
# spin, for reference) and Open MPI (TCP), back to back, the order
# rotating between rounds; before each case it waits up to IDLE_WAIT s
# (10) for the CPUs to be IDLE_MIN % (80) idle. Cases: 2-rank ping-pong
# half round trip at 0, 8, 64 B and 1 MiB; 8 ranks on this machine's
# cores (oversubscribed): token ring (µs per hop) and 8 B allreduce
# (µs per call). Prints a markdown table of medians over rounds and the
# ratios (median over rounds of each back-to-back pair): adaptive / 0,
# adaptive / Open MPI, 0 / Open MPI. Also written to $B/bench/spin.md.
set -u
cd "$(dirname "$0")/.." || exit 2
B=${MPIV_BUILD:-build}
R=${SPIN_ROUNDS:-3}
FIXED=${SPIN_FIXED:-50}
OUT=$B/bench/spin
mkdir -p "$OUT"
: > "$OUT/raw"
: > "$OUT/err.log"
OMPICC=$(command -v mpicc.openmpi || true)
OMPIRUN=$(command -v mpirun.openmpi || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_OPTS="--oversubscribe --bind-to none --mca pml ob1 --mca btl tcp,self"
IDLE_MIN=${IDLE_MIN:-80}
IDLE_WAIT=${IDLE_WAIT:-10}

for p in pingpong ring allreduce; do
	"$B/bin/mpivcc" -O2 -o "$OUT/$p.mpiv" "bench/$p.c" || exit 1
	if [ -n "$OMPICC" ]; then
		"$OMPICC" -O2 -o "$OUT/$p.ompi" "bench/$p.c" || exit 1
	fi
done

idle_pct() {
	a=$(awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6; exit}' /proc/stat)
	sleep 0.5
	b=$(awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6; exit}' /proc/stat)
	echo "$a $b" | awk '{ t = $3 - $1; print (t > 0 ? int(100 * ($4 - $2) / t) : 100) }'
}
BUSY=0
CASES=0
wait_idle() {
	local waited=0 idle
	while :; do
		idle=$(idle_pct)
		[ "$idle" -ge "$IDLE_MIN" ] && return 0
		if [ "$waited" -ge "$IDLE_WAIT" ]; then
			BUSY=$((BUSY + 1))
			return 0
		fi
		sleep 2
		waited=$((waited + 3))
	done
}

# one CASE N ROUND IMPL PROG FIELD ARGS...: appends "case impl round value"
one() {
	local c=$1 n=$2 r=$3 impl=$4 prog=$5 field=$6 v
	shift 6
	case $impl in
	ompi)
		[ -x "$OUT/$prog.ompi" ] || return 0
		v=$(timeout 300 "$OMPIRUN" $OMPI_OPTS -n "$n" "$OUT/$prog.ompi" "$@" 2>>"$OUT/err.log") ;;
	adaptive)
		v=$(MPIV_SPIN=auto timeout 300 "$B/bin/mpiv" run -n "$n" --cms 1 "$OUT/$prog.mpiv" "$@" 2>>"$OUT/err.log") ;;
	spin0)
		v=$(MPIV_SPIN=0 timeout 300 "$B/bin/mpiv" run -n "$n" --cms 1 "$OUT/$prog.mpiv" "$@" 2>>"$OUT/err.log") ;;
	fixed)
		v=$(MPIV_SPIN=$FIXED timeout 300 "$B/bin/mpiv" run -n "$n" --cms 1 "$OUT/$prog.mpiv" "$@" 2>>"$OUT/err.log") ;;
	esac
	v=$(echo "$v" | grep '^RESULT' | head -1 | sed -n "s/.* $field=\([0-9.]*\).*/\1/p")
	echo "$c $impl $r ${v:-nan}" >> "$OUT/raw"
}

IMPLS=(spin0 adaptive fixed ompi)
START=$(date -u '+%Y-%m-%d %H:%M UTC')
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$R"); do
	for spec in "pp0 2 pingpong lat_us --size 0" "pp8 2 pingpong lat_us --size 8" \
	    "pp64 2 pingpong lat_us --size 64" "pp1M 2 pingpong lat_us --size 1048576" \
	    "ring8 8 ring hop_us --hops 2000" "ar8 8 allreduce call_us --scale 0.5"; do
		# shellcheck disable=SC2086
		set -- $spec
		CASES=$((CASES + 1))
		wait_idle
		for k in 0 1 2 3; do
			impl=${IMPLS[$(( (k + r) % 4 ))]}
			one "$1" "$2" "$r" "$impl" "$3" "$4" "${@:5}"
		done
		echo "spin.sh: round $r $1 done" >&2
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

{
echo "### Waiting: spin before sleep ($START, $(nproc) cores, $R rounds)"
echo
echo "Load average before / after: $LOAD0 / $LOAD1; $BUSY of $CASES cases started with the CPUs less than ${IDLE_MIN}% idle."
echo
python3 - "$OUT/raw" "$FIXED" <<'PY'
import sys, statistics as st
d = {}
for l in open(sys.argv[1]):
	c, i, r, v = l.split()
	if v != 'nan':
		d.setdefault(c, {}).setdefault(i, {})[int(r)] = float(v)
names = {'pp0': 'ping-pong 0 B, 2 ranks (half RTT µs)', 'pp8': 'ping-pong 8 B, 2 ranks',
	'pp64': 'ping-pong 64 B, 2 ranks', 'pp1M': 'ping-pong 1 MiB, 2 ranks',
	'ring8': 'token ring, 8 ranks (µs per hop)', 'ar8': 'allreduce 8 B, 8 ranks (µs per call)'}
def med(c, i):
	v = d.get(c, {}).get(i)
	return st.median(v.values()) if v else None
def rat(c, a, b):
	x, y = d.get(c, {}).get(a, {}), d.get(c, {}).get(b, {})
	rs = [x[r] / y[r] for r in x if r in y and y[r] > 0]
	return st.median(rs) if rs else None
f = lambda x, n=1: 'n/a' if x is None else f'{x:.{n}f}'
print(f'| case | SPIN=0 | adaptive | SPIN={sys.argv[2]} | Open MPI | adaptive / SPIN=0 | adaptive / Open MPI | SPIN=0 / Open MPI |')
print('|---|---:|---:|---:|---:|---:|---:|---:|')
for c in ['pp0', 'pp8', 'pp64', 'pp1M', 'ring8', 'ar8']:
	if c not in d:
		continue
	print(f'| {names[c]} | {f(med(c, "spin0"))} | {f(med(c, "adaptive"))} | {f(med(c, "fixed"))} | '
	      f'{f(med(c, "ompi"))} | {f(rat(c, "adaptive", "spin0"), 2)} | {f(rat(c, "adaptive", "ompi"), 2)} | '
	      f'{f(rat(c, "spin0", "ompi"), 2)} |')
PY
echo
} | tee "$OUT/../spin.md"
