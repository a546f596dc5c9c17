#!/usr/bin/env bash
# tests/tools/mpich-suite.sh: run the MPI test suite of the MPICH sources
# (Debian's mpich source package, test/mpi) under mpiv: a conformance
# check by programs mpiv's authors did not write. Not part of `make
# test` (it needs the source package and takes about 25 minutes); nothing
# of the suite is kept in this repository.
#
#   tests/tools/mpich-suite.sh [-p relay|direct] [-o OUTDIR] [DIR...]
#
#   DIR    test directories of test/mpi (default: attr coll comm datatype
#          errhan group info init io pt2pt rma topo), or f77/NAME for the
#          Fortran 77 ones (f77/pt2pt f77/coll ...)
#   -p     the protocol of every job (default direct)
#   -o     where builds and outputs go (default build/mpich-suite)
#   MPICH_SRC  an unpacked mpich source tree; when unset, the script
#          fetches one with `apt-get source mpich` (it needs a deb-src
#          line in the apt sources).
#
# Each testlist line "name nprocs [arg=..] [env=..] [resultTest=..]" is
# built with build/bin/mpivcc (or mpifort) against the suite's mtest
# utilities and run with `mpiv run -n nprocs --timeout ...`; it passes
# when it exits 0 and prints "No Errors" (resultTest=TestStatus or
# TestErrFatal: when the job fails, without hanging). Lines of programs the suite
# builds from generated sources (dtpools) or that ask for MPI 4 are
# skipped. Prints one line per failure and a summary per directory;
# exits 1 if any test failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
B=${MPIV_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
PROTO=direct
OUT=$B/mpich-suite
while getopts p:o: o; do
	case $o in
	p) PROTO=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
DIRS=("$@")
[ ${#DIRS[@]} -gt 0 ] || DIRS=(attr coll comm datatype errhan group info init io pt2pt rma topo)
mkdir -p "$OUT"

SRC=${MPICH_SRC:-}
if [ -z "$SRC" ]; then
	SRC=$(ls -d "$OUT"/src/mpich-*/ 2>/dev/null | head -1)
	if [ -z "$SRC" ]; then
		mkdir -p "$OUT/src"
		(cd "$OUT/src" && apt-get source --download-only mpich > apt.log 2>&1 &&
		    tar xf mpich_*.orig.tar.*) ||
		    { echo "cannot fetch the mpich source (apt-get source mpich; see $OUT/src/apt.log)"; exit 2; }
		SRC=$(ls -d "$OUT"/src/mpich-*/ | head -1)
	fi
fi
T=${SRC%/}/test/mpi
[ -d "$T/util" ] || { echo "$T: not an mpich test/mpi tree"; exit 2; }

# The suite's configure output, for mpiv on x86-64 Linux.
cat > "$T/include/mpitestconf.h" <<'H'
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_IO 1
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_UNISTD_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_INT64_T 1
#define USE_STRICT_MPI 1
#define THREAD_PACKAGE_NAME 2
H

fails=0
# run_one DIR TAG NP EXE ARGS...: one job, judged by exit code and output
run_one() {
	local d=$1 tag=$2 np=$3 exe=$4 rc
	shift 4
	timeout 150 env "${envs[@]}" "$B/bin/mpiv" run -n "$np" --protocol "$PROTO" \
	    --timeout 100 "$exe" "$@" > "$OUT/$d/$tag.out" 2>&1 < /dev/null
	rc=$?
	case $result in
	TestStatus|TestErrFatal)	# must end in an error, not a hang
		ok=0; [ $rc != 0 ] && [ $rc != 124 ] && ok=1 ;;
	TestStatusNoErrors)
		ok=0; [ $rc != 0 ] && [ $rc != 124 ] &&
		    grep -qi "No Errors" "$OUT/$d/$tag.out" && ok=1 ;;
	*)
		ok=0; [ $rc = 0 ] && grep -qi "No Errors" "$OUT/$d/$tag.out" && ok=1 ;;
	esac
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $d/$tag (exit $rc): $(grep -v '^$' "$OUT/$d/$tag.out" | tail -2 | tr '\n' '|' | cut -c1-240)"
	fi
}

for d in "${DIRS[@]}"; do
	[ -d "$T/$d" ] || { echo "no $T/$d"; continue; }
	mkdir -p "$OUT/$d"
	tl=$T/$d/testlist.in
	[ -f "$tl" ] || tl=$T/$d/testlist
	pass=0 fail=0 skip=0
	case $d in f77/*)
		for h in "$T/$d"/*.h.in; do
			[ -f "$h" ] && sed 's/@F77_MPI_ADDRESS@/integer*8/; s/@F77_MPI_OFFSET@/integer*8/' \
			    "$h" > "$OUT/$d/$(basename "${h%.in}")"
		done ;;
	esac
	while read -r name np rest; do
		case $name in ''|'#'*|@*) continue ;; esac
		[ -d "$T/$d/$name" ] && continue
		case $rest in *mpiversion=4*) skip=$((skip + 1)); continue ;; esac
		args=() envs=() result=
		for w in $rest; do
			case $w in
			arg=*) args+=("${w#arg=}") ;;
			env=*) envs+=("${w#env=}") ;;
			resultTest=*) result=${w#resultTest=} ;;
			esac
		done
		tag=$name-$np$(printf '%s' "${args[*]}" | tr -c 'A-Za-z0-9=' '_' | cut -c1-40)
		exe=$OUT/$d/$name
		if [ ! -x "$exe" ] && [ ! -f "$exe.nobuild" ]; then
			case $d in
			f77/*)
				srcs=$(sed -n "s/^\(nodist_\)\{0,1\}${name}_SOURCES *= *//p" "$T/$d/Makefile.am")
				[ -n "$srcs" ] || srcs=$name.f
				fs=() objs=()
				for s in $srcs; do
					case $s in
					*.c) "$B/bin/mpivcc" -w -c -I"$T/include" -o "$OUT/$d/${s%.c}.o" "$T/$d/$s" && objs+=("$OUT/$d/${s%.c}.o") ;;
					*) fs+=("$T/$d/$s") ;;
					esac
				done > "$OUT/$d/$name.build" 2>&1
				(cd "$OUT/$d" && "$B/bin/mpifort" -w -O1 -fallow-argument-mismatch \
				    -I"$T/$d" -I"$OUT/$d" -o "$exe" "${fs[@]}" "$T/util/mtest_f77.f" \
				    "${objs[@]}") >> "$OUT/$d/$name.build" 2>&1 ;;
			*)
				if [ ! -f "$T/$d/$name.c" ] || grep -q 'mtest_dtp\|dtpools' "$T/$d/$name.c"; then
					skip=$((skip + 1))
					continue
				fi
				"$B/bin/mpivcc" -w -O1 -I"$T/include" -o "$exe" "$T/$d/$name.c" \
				    "$T/util/mtest.c" "$T/util/mtest_common.c" "$T/util/dtypes.c" \
				    "$T/util/mtest_thread.c" -lpthread -lm > "$OUT/$d/$name.build" 2>&1 ;;
			esac
			[ -x "$exe" ] || touch "$exe.nobuild"
		fi
		if [ ! -x "$exe" ]; then
			fail=$((fail + 1))
			echo "BUILD $d/$name: $(grep -m1 -i 'error' "$OUT/$d/$name.build" | cut -c1-200)"
			continue
		fi
		run_one "$d" "$tag" "$np" "$exe" "${args[@]}"
	done < "$tl"
	echo "== $d ($PROTO): $pass passed, $fail failed, $skip skipped"
	fails=$((fails + fail))
done
[ "$fails" = 0 ]
