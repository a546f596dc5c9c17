#!/usr/bin/env bash
# tests/integration/test_ship_origin.sh: a shipped program that finds its
# libraries through an $ORIGIN directory of its RUNPATH (cli/run_ship.c,
# run_ship_origin_check). The nodes run their copy from the program
# cache, where nothing lies beside it: without the check every rank died
# with "symbol lookup error" (another MPI's libmpi.so) or "cannot open
# shared object file", exit 127, after the job was placed.
#   refused    RUNPATH $ORIGIN/lib holding libmpi.so, shipped: mpiv run
#              exits 1 before submitting, naming the library and the ways
#              out; no rank ran
#   braces     the same spelled ${ORIGIN}/lib: refused too
#   noship     --no-ship: the nodes run it where it is: it runs
#   embedded   the embedded deployment (no shipping): it runs
#   ldpath     -x LD_LIBRARY_PATH= an absolute directory holding a copy:
#              shipped, it runs
#   absolute   RUNPATH $ORIGIN/lib:ABS with a copy in ABS: shipped, runs
#   otherlib   a library of the user's own (libhiadd.so) beside the
#              program, libmpi.so by an absolute RUNPATH: refused, naming
#              libhiadd.so
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init ship-origin
SRC=$OLDPWD
cd "$T" || exit 2
RUN=(timeout -k 5 60 "$MPIV" run --timeout 50)
exec < /dev/null
mkdir -p o/lib b/lib pub || exit 2
cp "$B/lib/libmpi.so" o/lib/ && cp "$B/lib/libmpi.so" b/lib/ &&
    cp "$B/lib/libmpi.so" pub/ || exit 2
# linked with cc, not mpivcc (which adds an absolute RUNPATH)
cc -O2 -I"$B/include" -o o/hi "$SRC/tests/integration/hi.c" -Lo/lib \
    -Wl,-rpath,'$ORIGIN/lib' -lmpi || exit 1
cc -O2 -I"$B/include" -o b/hi "$SRC/tests/integration/hi.c" -Lb/lib \
    -Wl,-rpath,'${ORIGIN}/lib' -lmpi || exit 1
mkdir -p a/lib && cp "$B/lib/libmpi.so" a/lib/ || exit 2
cc -O2 -I"$B/include" -o a/hi "$SRC/tests/integration/hi.c" -La/lib \
    -Wl,-rpath,"\$ORIGIN/lib:$T/pub" -lmpi || exit 1
readelf -d o/hi | grep -q 'RUNPATH.*\$ORIGIN/lib' &&
    readelf -d a/hi | grep -q "RUNPATH.*\$ORIGIN/lib:$T/pub" ||
    { notok "build: RUNPATH"; exit 1; }
# a library of the program's own beside it
cat > hiadd.c <<'C'
int hiadd(int a, int b) { return a + b; }
C
cat > hi2.c <<'C'
#include <mpi.h>
#include <stdio.h>
int hiadd(int, int);
int
main(int argc, char **argv)
{
	int size;

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	printf("hiadd %d\n", hiadd(size, 1));
	MPI_Finalize();
	return 0;
}
C
mkdir -p u/lib && cc -O2 -shared -fPIC -o u/lib/libhiadd.so hiadd.c &&
    cc -O2 -I"$B/include" -o u/hi2 hi2.c -Lu/lib -L"$B/lib" \
    -Wl,-rpath,"\$ORIGIN/lib:$B/lib" -lhiadd -lmpi || exit 1

"$MPIV" dispatcher --listen 127.0.0.1:0 > d.out 2> d.err &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" d.err; exit 1; }
"$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DA" > cm.out 2> cm.err &
PIDS+=($!)
"$MPIV" node --dispatcher "$DA" --slots 2 --name n0 \
    --cache-dir "$T/cache" 2> n0.err &
PIDS+=($!)

# --- refused
"${RUN[@]}" --dispatcher "$DA" -n 2 ./o/hi > out 2> err
rc=$?
line="mpiv: ./o/hi finds libmpi.so through \$ORIGIN/lib in its RUNPATH, which a shipped copy would not have: the nodes run it from their program cache, where nothing lies beside it. Link it statically (MPIVCC_STATIC=1 mpivcc ...) or with an absolute RUNPATH the nodes have, pass the library's directory with -x LD_LIBRARY_PATH=DIR, or use --no-ship if every node has the program at this path"
if [ $rc = 1 ] && grep -qxF -- "$line" err && [ ! -s out ] &&
    ! grep -q "symbol lookup error\|exited with code" err &&
    { [ ! -d cache ] || [ -z "$(ls cache)" ]; }; then
	ok "refused: exit 1 before the job ran, the library and the ways out named"
else
	notok "refused: exit $rc" out err
fi

# --- braces
"${RUN[@]}" --dispatcher "$DA" -n 2 ./b/hi > out 2> err
rc=$?
if [ $rc = 1 ] && grep -qF "finds libmpi.so through \${ORIGIN}/lib in its RUNPATH" err; then
	ok "braces: \${ORIGIN}/lib refused the same way"
else
	notok "braces: exit $rc" out err
fi

# --- noship
"${RUN[@]}" --dispatcher "$DA" --no-ship -n 2 ./o/hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ]; then
	ok "noship: --no-ship runs it where it is"
else
	notok "noship: exit $rc" out err
fi

# --- embedded: nothing shipped
"${RUN[@]}" -n 2 ./o/hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ]; then
	ok "embedded: the embedded deployment runs it (no shipping)"
else
	notok "embedded: exit $rc" out err
fi

# --- ldpath
"${RUN[@]}" --dispatcher "$DA" -x LD_LIBRARY_PATH="$T/pub" -n 2 ./o/hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ] && [ -n "$(ls cache)" ]; then
	ok "ldpath: a copy in an absolute LD_LIBRARY_PATH directory: shipped, it runs"
else
	notok "ldpath: exit $rc" out err
fi

# --- absolute
"${RUN[@]}" --dispatcher "$DA" -n 2 ./a/hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ]; then
	ok "absolute: a copy in an absolute RUNPATH directory: shipped, it runs"
else
	notok "absolute: exit $rc" out err
fi

# --- otherlib
"${RUN[@]}" --dispatcher "$DA" -n 1 ./u/hi2 > out 2> err
rc=$?
if [ $rc = 1 ] && grep -qF "mpiv: ./u/hi2 finds libhiadd.so through \$ORIGIN/lib in its RUNPATH" err; then
	ok "otherlib: a library of its own beside it: refused, named"
else
	notok "otherlib: exit $rc" out err
fi
"${RUN[@]}" --dispatcher "$DA" --no-ship -n 1 ./u/hi2 > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hiadd 2" ]; then
	ok "otherlib: --no-ship runs it"
else
	notok "otherlib --no-ship: exit $rc" out err
fi
[ "$fail" = 0 ]
