#!/bin/sh
# bench/run.sh: mpiv against Open MPI (TCP) on this machine.
#
#   sh bench/run.sh [--quick] [--rounds R] [--timeout S] [--no-mpiv] [--no-ompi]
#                   [--only SET[,SET...]]
#   make bench                  (= make all && sh bench/run.sh)
#   BENCH_ARGS=--quick make bench
#   sh bench/run.sh --only apps --rounds 1     (the application set alone)
#
# Sets (--only picks some, comma-separated; default: all of them):
#   pingpong (with the TCP floor), waitany, ring, allreduce, coll (Bcast,
#   Reduce, Allgather, Barrier: bench/coll.c), file (MPI-IO: 8 B reads
#   and writes, 4 MiB a rank collective ones, open and close:
#   bench/file.c), rma (passive-target one-sided: fetch-and-op under a
#   lock or a flush, 8 B put and 64 KiB get with a flush: bench/rma.c),
#   and apps: the
#   application benchmarks bench/apps/*.c, each at 4 and 8 ranks, one
#   wall time per run (RESULT app=NAME n=N wall_s=S).
#
# Builds the selected bench/*.c twice, into build/bench/mpiv/ (build/bin/mpivcc
# -O2) and build/bench/ompi/ (Open MPI's mpicc -O2), bench/apps/NAME.c into
# the same directories as app-NAME, then runs each benchmark
# with every mpiv protocol of BENCH_PROTOCOLS and with Open MPI,
# interleaved: R rounds (3; 1 with --quick), each round runs every
# configuration (ping-pong: one job per size) with each of them back to
# back, the order rotating between rounds. Each program reports the
# median of its own repetitions; the tables give the median over rounds
# of those, and per protocol the ratio mpiv / Open MPI as the median over
# rounds of the ratio of each back-to-back group (for bandwidth: ratio of
# bandwidths, so > 1 means mpiv is faster; for times > 1 means mpiv is
# slower).
#
# The machine is small and noisy: only ratios from one run mean anything.
# Results (tables + machine facts) go to stdout and build/bench/results.md;
# every run's output is kept in build/bench/logs/.
#
# Environment: MPIV_BUILD (default build), OMPI_MPICC, OMPI_MPIRUN,
# IDLE_MIN (80) / IDLE_WAIT (10): before each group wait up to IDLE_WAIT s
# for the CPUs to be IDLE_MIN % idle (IDLE_WAIT=0: never wait),
# MPIV_RUN_OPTS (extra `mpiv run` options, e.g. --relay-only for the
# no-logging baseline), BENCH_PROTOCOLS ("relay direct direct+plain"):
# the mpiv runs, each a protocol (`mpiv run --protocol P`: relay, direct,
# auto), or P:SPIN for that protocol with MPIV_SPIN=SPIN in its ranks (a
# number of µs or auto, docs/ENVIRONMENT.md); a +plain suffix runs it
# with --insecure-plaintext (MPIV_INSECURE_PLAINTEXT=1: no encryption),
# in the ping-pong only, to show what encryption costs. With the ping-pong
# goes bench/seal_floor.c: the AEAD's own throughput (1 MiB) and 64 B
# record time on this CPU, each cipher, next to memcpy. A protocol without :SPIN runs with
# MPIV_SPIN as this script's environment has it; unset, that is the
# default (auto, both protocols), so "relay direct direct:0" also runs
# direct with waits that never spin.
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD=${MPIV_BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
OUT=$BUILD/bench
LOGS=$OUT/logs

QUICK=0
ROUNDS=
TMO=
DO_MPIV=1
DO_OMPI=1
ONLY=
# shellcheck disable=SC2086
set -- ${BENCH_ARGS:-} "$@"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--rounds) ROUNDS=$2; shift ;;
	--timeout) TMO=$2; shift ;;
	--no-mpiv) DO_MPIV=0 ;;
	--no-ompi) DO_OMPI=0 ;;
	--only) ONLY=$2; shift ;;
	-h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1}; TMO=${TMO:-120}; QARG=--quick
	PP_SIZES="0 8 1024 65536 1048576 4194304"
else
	ROUNDS=${ROUNDS:-3}; TMO=${TMO:-300}; QARG=
	PP_SIZES="0 1 8 64 1024 8192 65536 1048576 4194304 16777216"
fi
RING_N="2 4 8 16"
AR_N="2 4 8"
COLL_N="4 8"
FILE_N="4"
RMA_N="4"
APP_N="4 8"
# the Waitany ping-pong (receives from MPI_ANY_SOURCE): iterations, size
if [ "$QUICK" = 1 ]; then WA_ITERS=500; else WA_ITERS=2000; fi
WA_SIZE=8

# BENCH_PROTOCOLS: the mpiv runs, PROTO or PROTO:SPIN each.
PROTOS=
for v in ${BENCH_PROTOCOLS:-relay direct direct+plain}; do
	b=${v%+plain}
	case $b in *+*) echo "run.sh: BENCH_PROTOCOLS: $v: +plain is the only suffix" >&2; exit 2 ;; esac
	case ${b%%:*} in
	relay|direct|auto) ;;
	*) echo "run.sh: BENCH_PROTOCOLS: unknown protocol in $v (relay, direct, auto)" >&2; exit 2 ;;
	esac
	case $b in
	*:*) case ${b#*:} in
		auto) ;;
		''|*[!0-9]*) echo "run.sh: BENCH_PROTOCOLS: $v: MPIV_SPIN is a number of µs or auto" >&2; exit 2 ;;
		esac ;;
	esac
	case " $PROTOS " in *" $v "*) continue ;; esac
	PROTOS="$PROTOS $v"
done
PROTOS=${PROTOS# }
[ -n "$PROTOS" ] || { echo "run.sh: BENCH_PROTOCOLS is empty" >&2; exit 2; }

mkdir -p "$OUT/mpiv" "$OUT/ompi" "$LOGS"
rm -f "$LOGS"/*.log
RAW=$OUT/raw.txt
: > "$RAW"
NOTES=$OUT/notes.txt
: > "$NOTES"
note() { echo "run.sh: $*" >&2; echo "$*" >> "$NOTES"; }

# --only: the sets to run (SETS), the bench/*.c programs they need
# (BENCHES) and the application programs (APPS: bench/apps/NAME.c).
ALL_SETS="pingpong waitany ring allreduce coll file rma apps"
SETS=
for v in $(echo "${ONLY:-$ALL_SETS}" | tr ',' ' '); do
	case " $ALL_SETS " in
	*" $v "*) ;;
	*) echo "run.sh: --only: unknown set $v (sets: $ALL_SETS)" >&2; exit 2 ;;
	esac
	case " $SETS " in *" $v "*) ;; *) SETS="$SETS $v" ;; esac
done
SETS=${SETS# }
[ -n "$SETS" ] || { echo "run.sh: --only: no set named" >&2; exit 2; }
want() { case " $SETS " in *" $1 "*) return 0 ;; esac; return 1; }
BENCHES=
for b in pingpong waitany ring allreduce coll file rma; do
	want "$b" && BENCHES="$BENCHES $b"
done
APPS=
if want apps; then
	for f in bench/apps/*.c; do
		[ -f "$f" ] || continue
		a=${f##*/}
		APPS="$APPS ${a%.c}"
	done
	[ -n "$APPS" ] || note "no bench/apps/*.c: no application benchmarks"
fi
# build IMPL CC: compile the selected programs with CC into $OUT/IMPL/
build() {
	for b in $BENCHES; do
		if ! "$2" -O2 -o "$OUT/$1/$b" "bench/$b.c" -lm > "$LOGS/build-$1-$b.log" 2>&1; then
			note "$1 build of $b failed (see $LOGS/build-$1-$b.log)"
			rm -f "$OUT/$1/$b"
		fi
	done
	for a in $APPS; do
		if ! "$2" -O2 -o "$OUT/$1/app-$a" "bench/apps/$a.c" -lm > "$LOGS/build-$1-app-$a.log" 2>&1; then
			note "$1 build of bench/apps/$a.c failed (see $LOGS/build-$1-app-$a.log)"
			rm -f "$OUT/$1/app-$a"
		fi
	done
}

# ---- Open MPI ------------------------------------------------------------
# build/bin/mpicc is mpiv's alias: never pick that one up from PATH.
find_tool() {	# $1 = env override, $2... candidates
	if [ -n "$1" ]; then echo "$1"; return; fi
	shift
	for c in "$@"; do
		p=$(command -v "$c" 2>/dev/null) || continue
		case $p in "$BUILD"/*|"$ROOT"/*) continue ;; esac
		echo "$p"; return
	done
}
OMPICC=$(find_tool "${OMPI_MPICC:-}" mpicc.openmpi /usr/bin/mpicc.openmpi mpicc)
OMPIRUN=$(find_tool "${OMPI_MPIRUN:-}" mpirun.openmpi /usr/bin/mpirun.openmpi mpirun)
OMPI_VER=
if [ "$DO_OMPI" = 1 ]; then
	if [ -z "$OMPICC" ] || [ -z "$OMPIRUN" ] || ! "$OMPIRUN" --version 2>/dev/null | grep -Eq 'Open ?MPI|OpenRTE'; then
		note "Open MPI not found (install openmpi-bin libopenmpi-dev): no Open MPI column"
		DO_OMPI=0
	else
		OMPI_VER=$( (ompi_info --version 2>/dev/null || "$OMPIRUN" --version 2>/dev/null) | grep -m1 .)
		build ompi "$OMPICC"
	fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# pml ob1 forces the btl path (the ucx pml would ignore "--mca btl" and use
# shared memory); vader (shared memory) is excluded: Open MPI over TCP.
# One-sided: osc pt2pt, whose operations are messages over that path (the
# default picks osc sm on one machine: loads and stores in shared memory,
# which no networked run has).
OMPI_OPTS="--oversubscribe --allow-run-as-root --bind-to none --mca pml ob1 --mca btl tcp,self --mca osc pt2pt"

# ---- mpiv -----------------------------------------------------------------
MPIV=$BUILD/bin/mpiv
MPIVCC=$BUILD/bin/mpivcc
if [ "$DO_MPIV" = 1 ]; then
	if [ ! -x "$MPIV" ] || [ ! -x "$MPIVCC" ]; then
		note "mpiv not built ($MPIV, $MPIVCC missing; run make): no mpiv column"
		DO_MPIV=0
	else
		build mpiv "$MPIVCC"
	fi
fi
[ "$DO_MPIV" = 1 ] || [ "$DO_OMPI" = 1 ] || { echo "run.sh: nothing to run" >&2; exit 1; }

# ---- TCP floor --------------------------------------------------------------
# bench/tcp_floor.c (plain TCP, not MPI): what two processes talking
# directly (the direct protocol's floor) and any design with a relay hop
# (the relay protocol's) cost on this machine, in the same run as the MPI
# numbers.
FLOOR=$OUT/tcp_floor
if ! want pingpong; then
	FLOOR=
elif ! cc -O2 -o "$FLOOR" bench/tcp_floor.c > "$LOGS/build-tcp_floor.log" 2>&1; then
	note "tcp_floor build failed (see $LOGS/build-tcp_floor.log): no floor table"
	rm -f "$FLOOR"
fi
SEALF=$OUT/seal_floor
if ! want pingpong; then
	SEALF=
elif ! cc -O2 -Iruntime -o "$SEALF" bench/seal_floor.c runtime/seal.c -lsodium -lcrypto \
    > "$LOGS/build-seal_floor.log" 2>&1; then
	note "seal_floor build failed (see $LOGS/build-seal_floor.log): no crypto floor table"
	rm -f "$SEALF"
fi
# floor ROUND: direct and through a relay, blocking waits and yield-spinning
# waits, at 8 B and 1 MiB (only the sizes this run's ping-pong measures);
# at 1 MiB also the zero-copy relays (splice, and splice keeping a copy of
# every byte by tee, i.e. logging without copies), and direct with each
# message written 256 KiB per send() ("direct-256k"), also with each
# message sent copied into fresh memory ("directlog-256k").
floor() {
	if [ -n "$SEALF" ] && [ -x "$SEALF" ]; then
		sf=$(timeout 60 "$SEALF" 0.3 2> /dev/null | grep '^RESULT ')
		if [ -n "$sf" ]; then
			echo "$sf" | sed "s/^/impl=sealfloor round=$1 /" >> "$RAW"
		else
			note "seal_floor round $1: no result"
		fi
	fi
	[ -n "$FLOOR" ] && [ -x "$FLOOR" ] || return 0
	for fs in 8 1048576; do
		case " $PP_SIZES " in *" $fs "*) ;; *) continue ;; esac
		if [ "$fs" = 8 ]; then fi_=20000; else fi_=400; fi
		[ "$QUICK" = 1 ] && fi_=$((fi_ / 4))
		fms="0 1"
		[ "$fs" = 8 ] || fms="0 1 2 3 0:262144 4:262144"
		for fw in block yield; do
			for fm in $fms; do
				fc=0
				case $fm in *:*) fc=${fm#*:} fm=${fm%%:*} ;; esac
				fl=$(timeout 120 "$FLOOR" "$fm" "$fs" "$fi_" "$fw" "$fc" 2> /dev/null)
				case $fl in
				*half_rtt_us=*) echo "$fl" | awk -v r="$1" \
				    '{print "impl=floor round=" r " RESULT floor mode=" $1, $2, $3, $4}' >> "$RAW" ;;
				*) note "tcp_floor $fm $fs $fw round $1: no result" ;;
				esac
			done
		done
	done
}

# ---- runs -----------------------------------------------------------------
# run IMPL BENCH N ROUND TAG [ARGS]: one job under timeout; RESULT lines go
# to $RAW. IMPL is ompi or one of $PROTOS (PROTO or PROTO:SPIN).
run() {
	ri=$1 rb=$2 rn=$3 rr=$4 rt=$5
	shift 5
	# waitany takes positional arguments only
	if [ "$rb" = waitany ]; then ra="$*"; else ra="$QARG $*"; fi
	case $ri in ompi) dir=ompi ;; *) dir=mpiv ;; esac
	exe=$OUT/$dir/$rb
	log=$LOGS/$(echo "$ri" | tr :+ --)-$rb-n$rn$rt-r$rr.log
	[ -x "$exe" ] || return 0
	# +plain: --insecure-plaintext (in the environment: the embedded
	# deployment's daemons and the ranks too)
	rp=${ri%+plain}
	if [ "$rp" != "$ri" ]; then renv=MPIV_INSECURE_PLAINTEXT=1; else renv=MPIV_INSECURE_PLAINTEXT=0; fi
	# shellcheck disable=SC2086
	case $rp in
	ompi) set -- "$OMPIRUN" $OMPI_OPTS -n "$rn" "$exe" $ra ;;
	*:*) set -- env "$renv" "MPIV_SPIN=${rp#*:}" "$MPIV" run -n "$rn" --cms 1 \
		--protocol "${rp%%:*}" --timeout "$TMO" ${MPIV_RUN_OPTS:-} "$exe" $ra ;;
	*) set -- env "$renv" "$MPIV" run -n "$rn" --cms 1 --protocol "$rp" \
		--timeout "$TMO" ${MPIV_RUN_OPTS:-} "$exe" $ra ;;
	esac
	echo "\$ $*" > "$log"
	t0=$(date +%s.%N)
	# mpiv run --timeout tears its deployment down itself; the outer
	# timeout is the backstop (and the only limit for Open MPI).
	timeout -k 10 $((TMO + 15)) "$@" >> "$log" 2>&1 < /dev/null
	rc=$?
	t1=$(date +%s.%N)
	wall=$(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}')
	printf '  %-11s %-17s n=%-2s %-10s round %s: exit %s, %ss\n' "$ri" "$rb" "$rn" "$rt" "$rr" "$rc" "$wall" >&2
	grep '^RESULT ' "$log" | sed "s/^/impl=$ri round=$rr /" >> "$RAW"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		note "$ri $rb n=$rn round $rr: timed out after about ${TMO}s (log: $log)"
	elif [ "$rc" != 0 ]; then
		note "$ri $rb n=$rn round $rr: exit code $rc (log: $log)"
	fi
	if grep -q '^ERROR ' "$log"; then
		note "$ri $rb n=$rn round $rr: $(grep '^ERROR ' "$log" | head -1)"
	fi
}

# Idle share of the CPUs over the next 0.5 s, in percent (from /proc/stat).
idle_pct() {
	a=$(awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6; exit}' /proc/stat)
	sleep 0.5
	b=$(awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6; exit}' /proc/stat)
	echo "$a $b" | awk '{ t = $3 - $1; print (t > 0 ? int(100 * ($4 - $2) / t) : 100) }'
}

# Before each group: wait (at most IDLE_WAIT s) until the machine is at
# least IDLE_MIN % idle, since other work on the 2 cores distorts the
# comparison (Open MPI busy-polls and suffers most). Groups that had to
# start busy are counted in the report.
IDLE_MIN=${IDLE_MIN:-80}
IDLE_WAIT=${IDLE_WAIT:-10}
BUSY_PAIRS=0
PAIRS=0
wait_idle() {
	waited=0
	while :; do
		idle=$(idle_pct)
		[ "$idle" -ge "$IDLE_MIN" ] && return 0
		if [ "$waited" -ge "$IDLE_WAIT" ]; then
			BUSY_PAIRS=$((BUSY_PAIRS + 1))
			echo "  (machine only $idle% idle after ${IDLE_WAIT}s: running anyway)" >&2
			return 0
		fi
		sleep 2
		waited=$((waited + 3))
	done
}

# pair BENCH N ROUND TAG [ARGS]: every mpiv protocol and Open MPI back to
# back, the order rotating by round (round 1: the protocols in their
# order, then Open MPI; round 2 starts with the second ...)
IMPLS="$PROTOS ompi"
NIMPL=$(echo "$IMPLS" | wc -w)
pair() {
	PAIRS=$((PAIRS + 1))
	[ "$IDLE_WAIT" -gt 0 ] && wait_idle
	k=$((($3 - 1) % NIMPL))
	i=0
	while [ "$i" -lt "$NIMPL" ]; do
		impl=$(echo "$IMPLS" | cut -d' ' -f$(((k + i) % NIMPL + 1)))
		i=$((i + 1))
		case $impl in
		ompi) [ "$DO_OMPI" = 1 ] || continue ;;
		*+plain) [ "$DO_MPIV" = 1 ] && [ "$1" = pingpong ] || continue ;;
		*) [ "$DO_MPIV" = 1 ] || continue ;;
		esac
		run "$impl" "$@"
	done
}

START=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "run.sh: $ROUNDS round(s)$( [ "$QUICK" = 1 ] && echo ', quick'), sets: $SETS, mpiv protocols: $PROTOS, timeout ${TMO}s per run, logs in $LOGS" >&2
r=1
while [ "$r" -le "$ROUNDS" ]; do
	if want pingpong; then
		for s in $PP_SIZES; do pair pingpong 2 "$r" "-$s" --size "$s"; done
	fi
	want waitany && pair waitany 2 "$r" "-$WA_SIZE" "$WA_ITERS" "$WA_SIZE" any
	want pingpong && floor "$r"
	if want ring; then
		for n in $RING_N; do pair ring "$n" "$r" ""; done
	fi
	if want allreduce; then
		for n in $AR_N; do pair allreduce "$n" "$r" ""; done
	fi
	if want coll; then
		for n in $COLL_N; do pair coll "$n" "$r" ""; done
	fi
	if want file; then
		for n in $FILE_N; do pair file "$n" "$r" ""; done
	fi
	if want rma; then
		for n in $RMA_N; do pair rma "$n" "$r" ""; done
	fi
	for a in $APPS; do
		for n in $APP_N; do pair "app-$a" "$n" "$r" ""; done
	done
	r=$((r + 1))
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ---------------------------------------------------------------
CPU=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' + uncommitted changes')
{
	echo "# mpiv benchmarks: mpiv ($PROTOS) vs Open MPI (TCP)"
	echo
	echo "- date: $START"
	[ -n "$ONLY" ] && echo "- sets: $SETS (--only)"
	echo "- machine: $(nproc) cores (nproc), $CPU, kernel $(uname -r), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	echo "- load average before / after: $LOAD0 / $LOAD1"
	echo "- before each group of runs (every mpiv protocol and Open MPI) the script waited up to ${IDLE_WAIT}s for the CPUs to be ${IDLE_MIN}% idle; $BUSY_PAIRS of $PAIRS groups started on a busier machine"
	if [ "$BUSY_PAIRS" -gt 0 ]; then
		echo "- **warning: $BUSY_PAIRS of $PAIRS groups ran while other work used the cores. Open MPI busy-polls and loses more to such contention than mpiv (whose waits sleep in poll, at once or after a bounded spin), so those ratios flatter mpiv; prefer a run on an idle machine.**"
	fi
	echo "- mpiv: commit $COMMIT$DIRTY, binary $MPIV (built $(date -u -r "$MPIV" '+%H:%M:%S UTC' 2>/dev/null || echo '?')), \`mpiv run -n N --cms 1 --protocol P${MPIV_RUN_OPTS:+ $MPIV_RUN_OPTS}\` for P in: $PROTOS (P:SPIN: with MPIV_SPIN=SPIN); MPIV_SPIN otherwise: ${MPIV_SPIN:-unset (the default, auto)}"
	echo "- Open MPI: ${OMPI_VER:-not run}, \`mpirun $OMPI_OPTS -n N\`"
	echo "- $ROUNDS round(s)$( [ "$QUICK" = 1 ] && echo ' (--quick)'), the mpiv protocols and Open MPI interleaved; value = median over rounds of each run's median; ratio = median over rounds of mpiv / Open MPI, each group run back to back"
	echo
} > "$OUT/results.md"

python3 - "$RAW" "$NOTES" "$PROTOS" "$SETS" >> "$OUT/results.md" <<'PY'
import sys, statistics
raw, notes, protos, sets = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
data = {}	# (kind, key) -> impl -> {round: value}
for line in open(raw):
	f = line.split()
	kv = dict(x.split('=', 1) for x in f if '=' in x)
	impl, rnd, bench = kv['impl'], int(kv['round']), f[3]
	def put(kind, key, v):
		data.setdefault((kind, key), {}).setdefault(impl, {})[rnd] = float(v)
	if 'app' in kv:
		put('app', (kv['app'], int(kv['n'])), kv['wall_s'])
		if 'polls' in kv:
			put('polls', (kv['app'], int(kv['n'])), kv['polls'])
	elif bench == 'pingpong':
		s = int(kv['size'])
		put('lat', s, kv['lat_us'])
		put('bw', s, kv['bw_MBps'])
	elif bench == 'waitany':
		put('wa', int(kv['size']), kv['lat_us'])
	elif bench == 'ring':
		put('ring', int(kv['n']), kv['hop_us'])
	elif bench == 'allreduce':
		put('ar', (int(kv['n']), int(kv['bytes'])), kv['call_us'])
	elif bench == 'coll':
		put('coll', (kv['op'], int(kv['n']), int(kv['bytes'])), kv['call_us'])
	elif bench == 'file':
		put('file', (kv['op'], int(kv['n']), int(kv['bytes'])), kv['call_us'])
	elif bench == 'rma':
		put('rma', (kv['op'], int(kv['n']), int(kv['bytes'])), kv['call_us'])
	elif bench == 'seal_floor':
		put('seal', (kv['cipher'], kv['op']), kv.get('MBps', kv.get('ns', kv.get('half_rtt_us'))))
	elif bench == 'floor':
		put('floor', (kv['mode'], kv['wait'], int(kv['size'])), kv['half_rtt_us'])

def label(p):
	"""a BENCH_PROTOCOLS entry as a column title"""
	plain = p.endswith('+plain')
	proto, _, spin = p[:-len('+plain')].partition(':') if plain else p.partition(':')
	return (proto + (f' (MPIV_SPIN={spin})' if spin else '') +
	        (' --insecure-plaintext' if plain else ''))

def med(kind, key, impl):
	v = data.get((kind, key), {}).get(impl)
	return statistics.median(v.values()) if v else None

def ratio(kind, key, impl):
	"""median over rounds of mpiv/Open MPI, each group measured back to back"""
	d = data.get((kind, key), {})
	m, o = d.get(impl, {}), d.get('ompi', {})
	rs = [m[r] / o[r] for r in m if r in o and o[r] > 0]
	return statistics.median(rs) if rs else None

def fmt(x, digits=1):
	if x is None:
		return 'n/a'
	return f'{x:.{digits}f}' if x < 1000 else f'{x:.0f}'

def size_name(s):
	if s >= 1 << 20: return f'{s >> 20} MiB'
	if s >= 1024: return f'{s >> 10} KiB'
	return f'{s} B'

ratios = {}	# (kind, key, proto) -> ratio
def row(lbl, kind, key, digits=1):
	cells = [fmt(med(kind, key, p), digits) for p in protos]
	cells.append(fmt(med(kind, key, 'ompi'), digits))
	for p in protos:
		r = ratio(kind, key, p)
		ratios[(kind, key, p)] = r
		cells.append('n/a' if r is None else f'{r:.2f}')
	print(f'| {lbl} | ' + ' | '.join(cells) + ' |')

def header(title, what):
	print(f'## {title}\n')
	print(f'| {what} | ' + ' | '.join(f'mpiv {label(p)}' for p in protos) +
	      ' | Open MPI | ' + ' | '.join(f'ratio {label(p)}' for p in protos) + ' |')
	print('|---|' + '---:|' * (2 * len(protos) + 1))

sizes = sorted({k for (kind, k) in data if kind == 'lat'})
if sizes:
	header('Ping-pong (2 ranks)', 'metric')
	for s in sizes:
		row(f'half round trip, {size_name(s)} (µs)', 'lat', s, 2)
	for s in sizes:
		if s >= 1024:
			row(f'bandwidth, {size_name(s)} (MB/s)', 'bw', s, 1)
	print()
was = sorted(k for (kind, k) in data if kind == 'wa')
if was:
	header('Waitany ping-pong, receives from MPI_ANY_SOURCE (2 ranks, half round trip µs)', 'size')
	for s in was:
		row(size_name(s), 'wa', s, 2)
	print()
ns = sorted(k for (kind, k) in data if kind == 'ring')
if ns:
	header('Token ring (µs per hop)', 'ranks')
	for n in ns:
		row(f'N = {n}', 'ring', n, 2)
	print()
ks = sorted(k for (kind, k) in data if kind == 'ar')
if ks:
	header('Allreduce, MPI_SUM of doubles (µs per call)', 'ranks, size')
	for (n, b) in sorted(ks, key=lambda k: (k[1], k[0])):
		row(f'N = {n}, {size_name(b)}', 'ar', (n, b), 1)
	print()
ks = sorted(k for (kind, k) in data if kind == 'coll')
if ks:
	header('Bcast, Reduce (root moving), Allgather (size per rank), Barrier, and their non-blocking kin waited for at once (µs per call)', 'collective, ranks, size')
	for (op, n, b) in ks:
		row(f'{op}, N = {n}' + (f', {size_name(b)}' if op not in ('barrier', 'ibarrier') else ''), 'coll', (op, n, b), 1)
	print()
ks = sorted(k for (kind, k) in data if kind == 'file')
if ks:
	header('MPI-IO: 8 B read_at / write_at, read_at_all / write_at_all of 4 MiB a rank (size: the job\'s), collective open + close (µs per call)', 'call, ranks, size')
	for (op, n, b) in ks:
		row(f'{op}, N = {n}' + (f', {size_name(b)}' if b > 0 else ''), 'file', (op, n, b), 1)
	print()
ks = sorted(k for (kind, k) in data if kind == 'rma')
if ks:
	header('Passive-target one-sided, every rank an origin: Fetch_and_op on rank 0 under lock/unlock or with a flush in a lock_all epoch, 8 B Put and 64 KiB Get from the right neighbour with a flush (µs per call)', 'call, ranks, size')
	for (op, n, b) in ks:
		row(f'{op}, N = {n}, {size_name(b)}', 'rma', (op, n, b), 1)
	print()
apps = sorted(k for (kind, k) in data if kind == 'app')
if apps:
	header('Application benchmarks (wall time s)', 'program, ranks')
	for (a, n) in apps:
		row(f'{a}, N = {n}', 'app', (a, n), 3)
	print()
	pk = sorted(k for (kind, k) in data if kind == 'polls')
	if pk:
		print('Fruitless polls, all ranks together (tests and probes that found '
		      'nothing; median over rounds):\n')
		print('| program, ranks | ' + ' | '.join(f'mpiv {label(p)}' for p in protos) +
		      ' | Open MPI |')
		print('|---|' + '---:|' * (len(protos) + 1))
		for (a, n) in pk:
			cells = [med('polls', (a, n), i) for i in protos + ['ompi']]
			print(f'| {a}, N = {n} | ' + ' | '.join('n/a' if c is None else f'{c:.0f}'
			      for c in cells) + ' |')
		print()

fl = sorted(k for (kind, k) in data if kind == 'floor')
floor_best = {}		# (direct?, size) -> best time ratio
if fl:
	print('## TCP floor: plain TCP ping-pong, not MPI (bench/tcp_floor.c)\n')
	print('Two processes directly (the floor of the direct protocol), or '
	      'through a third that only relays (the floor of the relay protocol: '
	      '"relay": read/write; "splice": splice() through a pipe, no copy '
	      'in user space; "splicelog": splice, and tee() into log pipes kept '
	      'to the end, i.e. a relay that keeps every byte with no copy of its '
	      'own); "direct-256k" writes each message 256 KiB per send(), with '
	      '4 MiB send and receive buffers as mpiv\'s direct links have; '
	      '"directlog-256k" is that plus a sender\'s log: both ends copy '
	      'each message they sent into memory never used before, as the '
	      'direct protocol\'s log must while no checkpoint frees it; '
	      '"block" sleeps in poll/epoll as mpiv does with MPIV_SPIN=0, '
	      '"yield" busy-polls '
	      'with sched_yield() (three pure spinners on two cores take '
	      'milliseconds per hop). The ratio is of times, to Open MPI\'s '
	      'ping-pong of the same size in the same round: > 1 is slower, and '
	      'at 1 MiB its inverse is the bandwidth ratio.\n')
	print('| variant | half round trip (µs) | ratio to Open MPI |')
	print('|---|---:|---:|')
	for (mode, wait, s) in sorted(fl, key=lambda k: (k[2], k[1], k[0])):
		d = data[('floor', (mode, wait, s))]['floor']
		o = data.get(('lat', s), {}).get('ompi', {})
		rs = [d[r] / o[r] for r in d if r in o and o[r] > 0]
		r = statistics.median(rs) if rs else None
		print(f'| {mode}, {wait}, {size_name(s)} | {fmt(statistics.median(d.values()), 2)} | '
		      f'{"n/a" if r is None else f"{r:.2f}"} |')
		if r is not None:
			k = ('log' if mode.startswith('directlog') else
			     mode.startswith('direct'), s)
			floor_best[k] = min(floor_best.get(k, r), r)
	print()

# What encryption costs: each protocol against its +plain run, per size
# (median over rounds of each round's ratio), and the AEAD floor.
def pair_ratio(kind, key, a, b):
	d = data.get((kind, key), {})
	x, y = d.get(a, {}), d.get(b, {})
	rs = [x[r] / y[r] for r in x if r in y and y[r] > 0]
	return statistics.median(rs) if rs else None
def pair_diff(kind, key, a, b):
	d = data.get((kind, key), {})
	x, y = d.get(a, {}), d.get(b, {})
	rs = [x[r] - y[r] for r in x if r in y]
	return statistics.median(rs) if rs else None
enc = [(p, p + '+plain') for p in protos if p + '+plain' in protos]
if enc and sizes:
	print('## Encryption cost: encrypted / --insecure-plaintext (same protocol, same round)\n')
	print('Times: > 1 means encryption is slower; bandwidth: < 1 means '
	      'encryption is slower.\n')
	print('| metric | ' + ' | '.join(label(p) for (p, _) in enc) + ' |')
	print('|---|' + '---:|' * len(enc))
	for s in sizes:
		print(f'| half round trip, {size_name(s)} | ' + ' | '.join(
		    fmt(pair_ratio('lat', s, p, q), 2) for (p, q) in enc) + ' |')
	for s in sizes:
		if s <= 64:
			print(f'| half round trip, {size_name(s)}: µs added | ' + ' | '.join(
			    fmt(pair_diff('lat', s, p, q), 2) for (p, q) in enc) + ' |')
	for s in sizes:
		if s >= 1024:
			print(f'| bandwidth, {size_name(s)} | ' + ' | '.join(
			    fmt(pair_ratio('bw', s, p, q), 2) for (p, q) in enc) + ' |')
	print()
sk = sorted(k for (kind, k) in data if kind == 'seal')
if sk:
	print('## Crypto floor: the AEAD alone on this CPU (bench/seal_floor.c)\n')
	print('Sealing and opening 1 MiB in 64 KiB records (MB/s), and sealing '
	      'plus opening one 64 B record (ns), next to memcpy of 1 MiB; '
	      'median over rounds.\n')
	print('| cipher | seal 1 MiB (MB/s) | open 1 MiB (MB/s) | 64 B record seal+open (ns) |')
	print('|---|---:|---:|---:|')
	for c in sorted({c for (c, op) in sk if op != 'pingpong'}):
		cell = lambda op: fmt(med('seal', (c, op), 'sealfloor'), 0)
		if c == 'none':
			print(f'| memcpy | {cell("memcpy")} | | |')
		else:
			print(f'| {c} | {cell("seal")} | {cell("open")} | {cell("rec64")} |')
	print()
	# the transfer floor: 1 MiB ping-pong over loopback TCP, plaintext
	# and through runtime/seal.c (no MPI), the ratio per round
	pp = [c for (c, op) in sk if op == 'pingpong' and c != 'plaintext']
	if pp and ('plaintext', 'pingpong') in sk:
		c = pp[0]
		pt = med('seal', ('plaintext', 'pingpong'), 'sealfloor')
		st = med('seal', (c, 'pingpong'), 'sealfloor')
		d = data[('seal', ('plaintext', 'pingpong'))]['sealfloor']
		e = data[('seal', (c, 'pingpong'))]['sealfloor']
		rs = [d[k] / e[k] for k in d if k in e and e[k] > 0]
		r = statistics.median(rs) if rs else None
		print(f'Transfer floor (bench/seal_floor.c, two processes, no MPI): a 1 MiB '
		      f'ping-pong over loopback TCP takes {fmt(pt, 1)} µs a half round trip '
		      f'in plaintext and {fmt(st, 1)} µs sealed with {c} (256 KiB handed to the '
		      f'record layer at a time, as the rank transport does): encrypted 1 MiB '
		      f'bandwidth can reach {fmt(r, 2)} of plaintext on this machine with '
		      f'this record layer.\n')

# The targets: (title, values per protocol, test, bound). Times: ratio
# <= bound; bandwidth: ratio >= bound.
small = [s for s in sizes if s <= 64]
big = [s for s in sizes if s >= 1 << 20]
# (set, title, values per protocol, test): only the targets of the sets run
targets = [
	('pingpong', 'half round trip 0-64 B <= 1.0x Open MPI (direct protocol goal)',
	 lambda p: [ratios.get(('lat', s, p)) for s in small], lambda v: v <= 1.0),
	('pingpong', 'bandwidth at >= 1 MiB >= 0.8x Open MPI (direct protocol goal)',
	 lambda p: [ratios.get(('bw', s, p)) for s in big], lambda v: v >= 0.8),
	('waitany', 'Waitany/ANY_SOURCE ping-pong <= 2x Open MPI (direct protocol goal)',
	 lambda p: [ratios.get(('wa', s, p)) for s in was], lambda v: v <= 2.0),
	('pingpong', 'half round trip 0-64 B <= 2x Open MPI (relay protocol goal)',
	 lambda p: [ratios.get(('lat', s, p)) for s in small], lambda v: v <= 2.0),
	('pingpong', 'bandwidth at >= 1 MiB >= 0.5x Open MPI (relay protocol goal)',
	 lambda p: [ratios.get(('bw', s, p)) for s in big], lambda v: v >= 0.5),
	('pingpong', 'encryption: bandwidth at >= 1 MiB >= 0.9x its plaintext run',
	 lambda p: [pair_ratio('bw', s, p, p + '+plain') for s in big] if p + '+plain' in protos else [],
	 lambda v: v >= 0.9),
	('pingpong', 'encryption: half round trip 0-64 B at most 2 µs above its plaintext run (µs)',
	 lambda p: [pair_diff('lat', s, p, p + '+plain') for s in small] if p + '+plain' in protos else [],
	 lambda v: v <= 2.0),
	('apps', 'every application benchmark <= 1.5x Open MPI (relay protocol goal)',
	 lambda p: [ratios.get(('app', k, p)) for k in apps], lambda v: v <= 1.5),
	('apps', 'no application benchmark beyond 2x Open MPI',
	 lambda p: [ratios.get(('app', k, p)) for k in apps], lambda v: v <= 2.0),
	('apps', 'poll (compute-and-poll) <= 2x Open MPI',
	 lambda p: [ratios.get(('app', k, p)) for k in apps if k[0] == 'poll'], lambda v: v <= 2.0),
]
targets = [t[1:] for t in targets if t[0] in sets]
def verdict(vals, ok):
	vals = [v for v in vals if v is not None]
	if not vals:
		return 'not measured'
	rng = f'{vals[0]:.2f}' if len(vals) == 1 else f'{min(vals):.2f} to {max(vals):.2f}'
	return f'{rng}: ' + ('**MET**' if all(ok(v) for v in vals) else 'MISSED')
print('## Targets\n')
print('Ratio mpiv / Open MPI (for bandwidth, of bandwidths), over the sizes '
      'each target covers, and whether every size meets it; the encryption '
      'targets compare a protocol with its own --insecure-plaintext run '
      '(BENCH_PROTOCOLS entries P and P+plain) in the same rounds.\n')
print('| target | ' + ' | '.join(label(p) for p in protos) + ' |')
print('|---|' + '---|' * len(protos))
for (title, vals, ok) in targets:
	print(f'| {title} | ' + ' | '.join(verdict(vals(p), ok) for p in protos) + ' |')
print()
if floor_best:
	# The same targets for plain TCP: what two processes (direct) or any
	# design where every message crosses a server (relay) allow here.
	def floor_line(direct, lat_bound, bw_bound):
		f8, f1m = floor_best.get((direct, 8)), floor_best.get((direct, 1 << 20))
		parts = []
		if f8 is not None:
			parts.append(f'8 B half round trip {f8:.2f}x Open MPI '
			             f'({"within" if f8 <= lat_bound else "beyond"} the {lat_bound:g}x target)')
		if f1m is not None:
			parts.append(f'1 MiB bandwidth {1 / f1m:.2f}x '
			             f'({"within" if 1 / f1m >= bw_bound else "beyond"} the {bw_bound:g}x target)')
		return '; '.join(parts)
	d, r = floor_line(True, 1.0, 0.8), floor_line(False, 2.0, 0.5)
	if d:
		print(f'Best direct TCP floor in this run (bench/tcp_floor.c, either wait): {d}.\n')
	if r:
		print(f'Best relay floor in this run (any relay variant and wait): {r}.\n')
	f1m = floor_best.get(('log', 1 << 20))
	if f1m is not None:
		print(f'Direct TCP floor with every payload logged in fresh memory '
		      f'(directlog-256k, either wait): 1 MiB bandwidth {1 / f1m:.2f}x '
		      f'Open MPI ({"within" if 1 / f1m >= 0.8 else "beyond"} the 0.8x target).\n')
ns_ = [l.rstrip() for l in open(notes) if l.strip()]
if ns_:
	print('## Problems during this run\n')
	for l in ns_:
		print(f'- {l}')
	print()
PY

cat "$OUT/results.md"
echo "run.sh: written $OUT/results.md" >&2
# exit non-zero when some run failed, so a broken benchmark is not silent
[ -s "$NOTES" ] && exit 1
exit 0
