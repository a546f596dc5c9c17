#!/usr/bin/env bash
# tests/integration/test_run_tmpdir.sh: the temp dir of an embedded
# `mpiv run` (cli/run_deploy.c, run_tmpdir_make), under a TMPDIR of the
# test's own:
#   clean     a job that ends removes its dir
#   killed    `mpiv run` killed with SIGKILL while its job runs:
#             its dir stays (nothing could remove it), its daemons and
#             ranks die with it; the next run removes the dir and says so
#             (--log-level info), and runs its job
#   live      a dir whose run.lock another process holds (a run alive)
#             is left alone by a run that starts meanwhile; one without
#             run.lock (an older mpiv's, or another program's) too; once
#             the lock is free the next run removes the first
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init run-tmpdir
"$B/bin/mpivcc" -O2 -o "$T/hi" tests/integration/hi.c || exit 1
"$B/bin/mpivcc" -O2 -o "$T/ss" tests/integration/stdin_sum.c || exit 1
cd "$T" || exit 2
mkdir -m 700 tmp || exit 2
export TMPDIR=$T/tmp
RUN=(timeout -k 5 60 "$MPIV" run --timeout 50)
dirs() { find tmp -maxdepth 1 -name 'mpiv-run.*' | sort; }

# --- clean
"${RUN[@]}" -n 2 ./hi > out 2> err
if [ $? = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ] && [ -z "$(dirs)" ]; then
	ok "clean: the job ran, its dir is gone"
else
	notok "clean: dirs left: $(dirs | tr '\n' ' ')" out err
fi

# --- killed: a job that reads one number every 0.2 s
seq 1 200 > nums
"$MPIV" run --timeout 50 -n 2 ./ss root 200000 < nums > k.out 2> k.err &
KPID=$!
PIDS+=($KPID)
if ! wait_for 20 sh -c 'ls tmp/mpiv-run.*/run.lock > /dev/null 2>&1 && pgrep -f "[s]s root 200000" > /dev/null'; then
	notok "killed: the job did not start" k.err
fi
left=$(dirs)
kill -KILL "$KPID"
wait "$KPID" 2> /dev/null
if wait_for 20 sh -c '! pgrep -f "[s]s root 200000" > /dev/null' && [ -n "$left" ] &&
    [ -d "$left" ]; then
	ok "killed: the dir stays, the ranks died with the run"
else
	notok "killed: ranks still there or no dir ($left)" k.err
fi
"${RUN[@]}" --log-level info -n 2 ./hi > out 2> err
if [ $? = 0 ] && [ "$(cat out)" = "hi size=2 sum=2" ] && [ ! -e "$left" ] &&
    grep -q "run removing $T/tmp/mpiv-run\.[A-Za-z0-9]*, left by a run that died" err; then
	ok "killed: the next run removed the dead run's dir and ran its job"
else
	notok "killed: dir $left $( [ -e "$left" ] && echo still there)" out err
fi

# --- live: a held lock, and a dir without one, stay
mkdir -m 700 tmp/mpiv-run.live1 tmp/mpiv-run.nolock1 || exit 2
: > tmp/mpiv-run.live1/run.lock
: > tmp/mpiv-run.nolock1/keep
flock -o tmp/mpiv-run.live1/run.lock sleep 60 &
HOLD=$!
PIDS+=($HOLD)
wait_for 10 sh -c '! flock -n "$0" true' tmp/mpiv-run.live1/run.lock ||
	notok "live: the lock is not held"
"${RUN[@]}" -n 2 ./hi > out 2> err
rc=$?
if [ $rc = 0 ] && [ -e tmp/mpiv-run.live1/run.lock ] && [ -e tmp/mpiv-run.nolock1/keep ]; then
	ok "live: a locked dir and one without run.lock stay"
else
	notok "live: exit $rc, $(ls tmp | tr '\n' ' ')" out err
fi
kill "$HOLD" 2> /dev/null
wait "$HOLD" 2> /dev/null
"${RUN[@]}" -n 2 ./hi > out 2> err
if [ $? = 0 ] && [ ! -e tmp/mpiv-run.live1 ] && [ -e tmp/mpiv-run.nolock1/keep ]; then
	ok "live: once its lock is free, the dir goes"
else
	notok "live: after the lock: $(ls tmp | tr '\n' ' ')" out err
fi

[ "$fail" = 0 ]
