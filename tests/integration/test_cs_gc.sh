#!/usr/bin/env bash
# tests/integration/test_cs_gc.sh: a checkpoint server drops the images
# of jobs that no longer run (JobEnd from the dispatcher as a job ends;
# CsJobs, the dispatcher's instance and live jobs, as the CS registers).
# Before, a long-lived CS kept every ended job's images for ever (559 MB
# after 20 minutes of `make soak`), and after a dispatcher restart
# without --state-dir, which numbers jobs from 1 again, the new job 1's
# checkpoints were refused ("stale checkpoint 1 (current is 4)") until
# its numbers passed the old job's.
#   ended      a job with checkpoints ends: its directory goes, logged
#   restart    the dispatcher killed mid-job and started afresh on the
#              same address: the CS drops the old job 1 (its images and
#              its ranks' grants) as it registers;
#              the new job 1's checkpoints are accepted from number 1,
#              and under rank kills its output equals the failure-free
#              run's
#   away       the CS killed while a job runs, the job ends, the CS is
#              started again on its store: it drops that job as it
#              registers; a job that still runs keeps its images (the
#              CS's own restart tests) and a directory without an owner
#              file (an older CS's) is left alone
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
need_criu
common_init csgc
S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || exit 1
"$B/bin/mpivcc" -O2 -o "$T/prog" tests/fault/progs/flt_ring.c || exit 1
timeout 120 "$MPIV" run -n 2 "$T/prog" 20000 3000 > "$T/ref.out" 2> /dev/null ||
    { notok "failure-free run"; exit 1; }
exec < /dev/null

start_disp() {	# start_disp ADDR LOG
	"$MPIV" dispatcher "${S[@]}" --listen "$1" --heartbeat-timeout 2 \
	    --log-level info > "$T/$2.out" 2> "$T/$2.err" &
	DPID=$!
	PIDS+=($DPID)
	wait_for 10 grep -q '^listening on ' "$T/$2.out"
}
start_cs() {	# start_cs ADDR
	"$MPIV" cs "${S[@]}" --listen "$1" --store "$T/store" \
	    --dispatcher "$DA" --log-level info > "$T/cs.out" 2>> "$T/cs.err" &
	CSPID=$!
	PIDS+=($CSPID)
}
services() {	# services N: the node agents and N services registered
	local js
	js=$("$MPIV" status "${S[@]}" --dispatcher "$DA" --json 2> /dev/null) || return 1
	[ "$(echo "$js" | jq '.nodes | length')" = 2 ] &&
	    [ "$(echo "$js" | jq '.services | length')" -ge "$1" ]
}
durable() {	# durable DLOG JOB N: N checkpoints of JOB durable
	[ "$(grep -c "checkpoint durable job=$2 " "$T/$1.err")" -ge "$3" ]
}
start_disp 127.0.0.1:0 d1 || { notok "dispatcher start" "$T/d1.err"; exit 1; }
DA=$(sed -n 's/^listening on //p' "$T/d1.out")
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > /dev/null 2> "$T/cm.err" &
PIDS+=($!)
start_cs 127.0.0.1:0
for n in a b; do
	"$MPIV" node "${S[@]}" --dispatcher "$DA" --slots 1 --name "$n" \
	    --cache-dir "$T/cache-$n" 2> "$T/$n.err" &
	PIDS+=($!)
done
wait_for 20 services 2 || { notok "deployment did not come up" "$T/d1.err"; exit 1; }
wait_for 10 grep -qs '^listening on ' "$T/cs.out"
CSA=$(sed -n 's/^listening on //p' "$T/cs.out" | head -n 1)
RUN=(timeout -k 5 90 "$MPIV" run "${S[@]}" --dispatcher "$DA" --timeout 80)

# --- ended
"${RUN[@]}" --ckpt-interval 0.2 -n 2 "$T/prog" 20000 3000 > "$T/j1.out" 2> "$T/j1.err"
rc=$?
if [ $rc = 0 ] && cmp -s "$T/j1.out" "$T/ref.out" && durable d1 1 1 &&
    wait_for 10 test ! -e "$T/store/1" &&
    wait_for 10 grep -q 'cs dropped job=1 images=[1-9][0-9]* reason="the job has ended"' "$T/cs.err"; then
	ok "ended: job 1's images dropped as it ended ($(grep -c 'checkpoint durable job=1 ' "$T/d1.err") checkpoints taken)"
else
	notok "ended: exit $rc, store: $(ls "$T/store" 2> /dev/null | tr '\n' ' ')" "$T/cs.err" "$T/j1.err"
fi

# --- restart: job 2 runs (long), checkpointed, when the dispatcher dies
"${RUN[@]}" --ckpt-interval 0.2 -n 2 "$T/prog" 100000000 3000 > /dev/null 2>&1 &
J=$!
wait_for 40 durable d1 2 6 || notok "job 2: no checkpoints" "$T/d1.err"
kill -KILL "$DPID"
wait "$DPID" 2> /dev/null	# gone, and its port free
wait "$J"
[ -d "$T/store/2" ] || notok "job 2 left no images to drop"
start_disp "$DA" d2 || { notok "dispatcher restart on $DA" "$T/d2.err"; exit 1; }
wait_for 20 services 2 || notok "no re-registration" "$T/d2.err"
if wait_for 10 test ! -e "$T/store/2" &&
    wait_for 10 grep -q 'cs dropped job=2 images=[1-9][0-9]* reason="a previous dispatcher.s job"' "$T/cs.err" &&
    wait_for 10 grep -q 'cs forgot the ranks of jobs no longer run grants=[1-9]' "$T/cs.err"; then
	ok "restart: the gone dispatcher's job 2 dropped, and its ranks' grants, as the CS registered again"
else
	notok "restart: store $(ls "$T/store" | tr '\n' ' ')" "$T/cs.err"
fi
# the new dispatcher numbers from 1 again: plant an old job 1 first,
# as a dispatcher restarted while job 1 ran would have left it
"${RUN[@]}" --ckpt-interval 0.2 -n 2 "$T/prog" 100000000 3000 > /dev/null 2>&1 &
J=$!
wait_for 40 durable d2 1 6 || notok "job 1 (second dispatcher): no checkpoints" "$T/d2.err"
kill -KILL "$DPID"
wait "$DPID" 2> /dev/null	# gone, and its port free
wait "$J"
start_disp "$DA" d3 || { notok "dispatcher restart on $DA" "$T/d3.err"; exit 1; }
wait_for 20 services 2 || notok "no re-registration" "$T/d3.err"
wait_for 10 test ! -e "$T/store/1"
"${RUN[@]}" -v --ckpt-interval 0.2 --chaos 300ms --chaos-seed 3 --chaos-max 3 -n 2 "$T/prog" 20000 3000 > "$T/j3.out" 2> "$T/j3.err"
rc=$?
n1=$(grep -c 'checkpoint durable job=1 rank=[01] ckpt=1 ' "$T/d3.err")
nr=$(sed -n 's/^mpiv: [0-9]* kills, \([0-9]*\) restarts.*/\1/p' "$T/j3.err" | head -n 1)
nr=${nr:-0}
if [ $rc = 0 ] && cmp -s "$T/j3.out" "$T/ref.out" && grep -q ' job 1$' "$T/j3.err" &&
    [ "$n1" = 2 ] && [ "$nr" -ge 1 ]; then
	ok "restart: the new job 1's checkpoints accepted from 1, output identical under kills ($nr restarts)"
else
	notok "restart: new job 1 exit $rc, ckpt 1 durable for $n1 ranks of 2, $nr restarts" "$T/j3.err" "$T/cs.err"
fi

# --- away
mkdir -p "$T/store/legacy/0" && : > "$T/store/legacy/0/ckpt-1.img"
"${RUN[@]}" --ckpt-interval 0.2 -n 2 "$T/prog" 150000 3000 > "$T/j4.out" 2> "$T/j4.err" &
J=$!
wait_for 40 durable d3 2 2 || notok "job 2 (third dispatcher): no checkpoints" "$T/d3.err"
kill -KILL "$CSPID"
wait "$CSPID" 2> /dev/null
wait "$J"
rc=$?
if [ $rc = 0 ] && [ -d "$T/store/2" ]; then
	start_cs "$CSA"
	if wait_for 20 grep -q 'cs dropped job=2 images=[1-9][0-9]* reason="the job has ended"' "$T/cs.err" &&
	    [ ! -e "$T/store/2" ] && [ -d "$T/store/legacy/0" ]; then
		ok "away: a job that ended while the CS was down dropped as it registered; an ownerless directory kept"
	else
		notok "away: store $(ls "$T/store" | tr '\n' ' ')" "$T/cs.err"
	fi
else
	notok "away: job exit $rc, store $(ls "$T/store" | tr '\n' ' ')" "$T/j4.err"
fi
[ "$fail" = 0 ]
