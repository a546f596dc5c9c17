#!/usr/bin/env bash
# tests/integration/test_restore_async.sh: a node agent restoring a rank
# whose checkpoint server hangs keeps its loop (heartbeats, the other
# rank's output) going: the image is fetched by a helper process
# (node-agent/node_ckpt.c). The dispatcher declares a node dead after
# --heartbeat-timeout 3 s of silence; the CS is stopped (SIGSTOP) for 6 s
# while rank 1 is restored from a durable checkpoint, then continued.
#   alive    no node declared dead, the node kept heartbeating
#   restore  rank 1 restored from its checkpoint once the CS answers
#   end      the job's output equals the failure-free run's, exit 0
# Exit 77 without CRIU.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init rasync
need_criu
S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || exit 1
"$B/bin/mpivcc" -O2 -o "$T/prog" tests/fault/progs/flt_ckpt.c || exit 1
ARGS=(100000 2 100)	# steps, MiB of ballast per rank, work
timeout 60 "$MPIV" run -n 2 "$T/prog" "${ARGS[@]}" > "$T/ref.out" 2> "$T/ref.err" ||
    { notok "failure-free run" "$T/ref.err"; exit 1; }

"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 --heartbeat-timeout 3 \
    --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --log-level info \
    > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --store "$T/store" --dispatcher "$DA" \
    --log-level info > "$T/cs.out" 2> "$T/cs.err" &
CS=$!
PIDS+=($CS)
listening cs > /dev/null || { notok "cs start" "$T/cs.err"; exit 1; }
FLT_HOLD=$T/hold "$MPIV" node "${S[@]}" --dispatcher "$DA" --slots 3 --name n1 \
    --cache-dir "$T/cache" --log-level info 2> "$T/n.err" &
PIDS+=($!)
wait_for 15 grep -q 'dispatcher node registered .*name=n1 ' "$T/d.err" ||
    { notok "the node did not register" "$T/d.err" "$T/n.err"; exit 1; }

: > "$T/hold"
timeout 120 "$MPIV" run "${S[@]}" --dispatcher "$DA" -v -n 2 "$T/prog" "${ARGS[@]}" \
    > "$T/job.out" 2> "$T/job.err" &
RUN=$!
JOB=
wait_for 20 grep -qs '^mpiv: dispatcher .* job ' "$T/job.err" &&
    JOB=$(sed -n 's/^mpiv: dispatcher .* job \([^ ]*\)$/\1/p' "$T/job.err" | head -n 1)
pat="dispatcher checkpoint durable job=$JOB rank=1 "
if [ -z "$JOB" ] || ! wait_for 20 grep -q "job running job=$JOB" "$T/d.err" ||
    ! timeout 10 "$MPIV" checkpoint "${S[@]}" --dispatcher "$DA" "$JOB" 1 > /dev/null 2>&1 ||
    ! wait_for 20 grep -q "$pat" "$T/d.err"; then
	notok "no durable checkpoint of rank 1" "$T/job.err" "$T/d.err"
	kill -CONT "$CS" 2> /dev/null
	exit 1
fi
K=$(grep -- "$pat" "$T/d.err" | tail -n 1 | sed 's/.* ckpt=\([0-9]*\).*/\1/')

# The CS hangs; rank 1 is killed and must be restored from it.
kill -STOP "$CS"
timeout 10 "$MPIV" kill "${S[@]}" --dispatcher "$DA" "$JOB" 1 > /dev/null 2>> "$T/kill.err"
wait_for 10 grep -q "node restore fetching job=$JOB rank=1 incarnation=2\|relaunching job=$JOB rank=1 inc=2" "$T/n.err" "$T/d.err"
sleep 6	# twice the heartbeat timeout
if grep -q 'dispatcher node declared dead' "$T/d.err"; then
	notok "alive: the node was declared dead while it fetched an image from a hung CS" "$T/d.err" "$T/n.err"
elif grep -q "node restored job=$JOB rank=1 incarnation=2 " "$T/n.err"; then
	notok "alive: restored while the CS was stopped (the test did not hold the fetch)" "$T/n.err"
else
	ok "alive: 6 s of a hung CS during a restore, the node not declared dead (heartbeat timeout 3 s)"
fi
kill -CONT "$CS"
if wait_for 60 grep -q "node restored job=$JOB rank=1 incarnation=2 ckpt=$K " "$T/n.err"; then
	ok "restore: rank 1 restored from checkpoint $K once the CS answered"
else
	notok "restore: rank 1 not restored from checkpoint $K" "$T/n.err" "$T/d.err"
fi

rm -f "$T/hold"
wait_for 60 eval '! kill -0 "$RUN" 2> /dev/null'
wait "$RUN"
rc=$?
[ "$rc" = 0 ] && cmp -s "$T/job.out" "$T/ref.out" &&
    ok "end: output identical to the failure-free run, exit 0" ||
    notok "end: rc $rc, output $(cmp -s "$T/job.out" "$T/ref.out" && echo same || echo different)" "$T/job.err" "$T/d.err"
[ "$fail" = 0 ]
