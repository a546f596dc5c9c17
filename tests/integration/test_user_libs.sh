#!/usr/bin/env bash
# tests/integration/test_user_libs.sh: a node agent that runs ranks as
# another user (mpiv node --user nobody) and a program linked with a
# libmpi.so that user cannot read (runtime/proc.c, proc_libmpi_blocked).
# Without the check the loader went on to the system's directories and
# loaded another MPI's libmpi.so: "symbol lookup error", exit 127.
#   blocked    the program's RUNPATH holds libmpi.so in a 0700 directory:
#              exit 127 at once (no relaunches), the rank's stderr names
#              the file and the way out, the run says "cannot load the MPI
#              library of"
#   ldpath     -x LD_LIBRARY_PATH= a readable copy (searched first): runs
#   readable   the same program once the directory is readable: it runs
#   origin     a RUNPATH of $ORIGIN/lib whose lib is a 0700 directory,
#              the program run where it is (--no-ship): the same line
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
[ "$(id -u)" = 0 ] || { echo "needs root (the account switch)"; exit 77; }
id -u nobody > /dev/null 2>&1 || { echo "no user nobody"; exit 77; }
common_init user-libs
cd "$T" || exit 2
mkdir -m 700 priv || exit 2
cp "$B/lib/libmpi.so" priv/ || exit 2
# linked against the private copy only (mpivcc would add build/lib)
cc -O2 -I"$B/include" -o hi "$OLDPWD/tests/integration/hi.c" -Lpriv \
    -Wl,-rpath,"$T/priv" -lmpi || exit 1
readelf -d hi | grep -q "RUNPATH.*$T/priv" || { notok "build: no RUNPATH"; exit 1; }
RUN=(timeout -k 5 60 "$MPIV" run --timeout 50)
exec < /dev/null

"$MPIV" dispatcher --listen 127.0.0.1:0 > d.out 2> d.err &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" d.err; exit 1; }
"$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DA" > cm.out 2> cm.err &
PIDS+=($!)
"$MPIV" node --dispatcher "$DA" --slots 2 --name n0 --user nobody \
    --cache-dir "$T/cache" 2> n0.err &
PIDS+=($!)

# --- blocked
"${RUN[@]}" --dispatcher "$DA" -n 2 ./hi > out 2> err
rc=$?
line="mpiv: ./hi is linked with $T/priv/libmpi.so, which this rank's user (uid $(id -u nobody)) cannot read: make it readable to that user, give the node agent a --user that can read it, or link the program with MPIVCC_STATIC=1"
if [ $rc = 127 ] && grep -qxF -- "$line" err &&
    grep -q "cannot load the MPI library of ./hi: Permission denied" err &&
    ! grep -q "symbol lookup error" err && [ ! -s out ]; then
	ok "blocked: exit 127, the file named, no symbol lookup error"
else
	notok "blocked: exit $rc" out err
fi

# --- ldpath: a readable copy in LD_LIBRARY_PATH, which the loader
# searches before a RUNPATH: no refusal, the job runs
mkdir -m 755 pub && cp "$B/lib/libmpi.so" pub/ || exit 2
"${RUN[@]}" --dispatcher "$DA" -x LD_LIBRARY_PATH="$T/pub" -n 2 ./hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ]; then
	ok "ldpath: a readable libmpi.so in LD_LIBRARY_PATH: it runs"
else
	notok "ldpath: exit $rc" out err
fi

# --- readable
chmod 755 priv
"${RUN[@]}" --dispatcher "$DA" -n 2 ./hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ]; then
	ok "readable: the same program runs"
else
	notok "readable: exit $rc" out err
fi

# --- origin: $ORIGIN/lib, under a directory nobody cannot enter
mkdir -m 755 o o/lib && cp "$B/lib/libmpi.so" o/lib/ || exit 2
cc -O2 -I"$B/include" -o o/hi "$OLDPWD/tests/integration/hi.c" -Lo/lib \
    -Wl,-rpath,'$ORIGIN/lib' -lmpi || exit 1
chmod 700 o/lib
"${RUN[@]}" --dispatcher "$DA" --no-ship -n 1 ./o/hi > out 2> err
rc=$?
if [ $rc = 127 ] && grep -q "is linked with .*/lib/libmpi.so, which this rank's user" err &&
    ! grep -q "symbol lookup error" err; then
	ok "origin: \$ORIGIN/lib unreadable: the same clear line"
else
	notok "origin: exit $rc" out err
fi
[ "$fail" = 0 ]
