#!/usr/bin/env bash
# tests/integration/test_disp_restart.sh: the dispatcher's documented
# restart limit. Killed (SIGKILL) mid-job and started again on the same
# address and --state-dir: the running job ends clearly (mpiv run exits
# 1, "dispatcher link lost"), the node agents kill its ranks and register
# again, the CM drops the job's log, and a new job runs with a job id
# never used before and the failure-free output.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init drst
S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || exit 1
"$B/bin/mpivcc" -O2 -o "$T/prog" tests/fault/progs/flt_ring.c || exit 1
timeout 120 "$MPIV" run -n 2 "$T/prog" 3000 3000 > "$T/ref.out" 2> /dev/null ||
    { notok "failure-free run"; exit 1; }

start_disp() {	# start_disp ADDR LOG
	"$MPIV" dispatcher "${S[@]}" --listen "$1" --state-dir "$T/state" \
	    --heartbeat-timeout 2 --log-level info > "$T/$2.out" 2> "$T/$2.err" &
	DPID=$!
	PIDS+=($DPID)
	wait_for 10 grep -q '^listening on ' "$T/$2.out"
}
nodes_up() {
	local js
	js=$("$MPIV" status "${S[@]}" --dispatcher "$DA" --json 2> /dev/null) || return 1
	[ "$(echo "$js" | jq '.nodes | length')" = "$1" ] &&
	    [ "$(echo "$js" | jq '.services | length')" -ge 1 ]
}
start_disp 127.0.0.1:0 d1 || { notok "dispatcher start" "$T/d1.err"; exit 1; }
DA=$(sed -n 's/^listening on //p' "$T/d1.out")
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --log-level info > /dev/null 2> "$T/cm.err" &
PIDS+=($!)
for n in a b; do
	"$MPIV" node "${S[@]}" --dispatcher "$DA" --slots 1 --name "$n" \
	    --cache-dir "$T/cache-$n" 2> "$T/$n.err" &
	PIDS+=($!)
done
wait_for 15 nodes_up 2 || { notok "deployment did not come up" "$T/d1.err"; exit 1; }

timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 2 "$T/prog" 1000000 3000 \
    > "$T/j1.out" 2> "$T/j1.err" &
RUN=$!
wait_for 20 grep -q 'job running job=1' "$T/d1.err" || notok "job 1 did not start" "$T/d1.err"
sleep 0.5
kill -KILL "$DPID"
wait "$RUN"
rc=$?
[ "$rc" = 1 ] && grep -q 'dispatcher' "$T/j1.err" &&
    ok "job 1 ends with exit 1 when its dispatcher dies: $(tail -n 1 "$T/j1.err")" ||
    notok "job 1: rc $rc" "$T/j1.err"

start_disp "$DA" d2 || { notok "dispatcher restart on $DA" "$T/d2.err"; exit 1; }
wait_for 15 nodes_up 2 && ok "node agents and the CM registered with the new dispatcher" ||
    notok "no re-registration" "$T/d2.err"
wait_for 5 grep -q 'dropping job=1' "$T/cm.err" && ok "the CM dropped job 1's log" ||
    notok "CM kept job 1" "$T/cm.err"
! pgrep -f "$T/prog 1000000" > /dev/null && ok "no rank of job 1 is left" ||
    notok "ranks of job 1 still run"
timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -v -n 2 "$T/prog" 3000 3000 \
    > "$T/j2.out" 2> "$T/j2.err"
rc=$?
[ "$rc" = 0 ] && cmp -s "$T/j2.out" "$T/ref.out" && ok "a new job runs after the restart, output identical" ||
    notok "job after restart: rc $rc" "$T/j2.err"
grep -q ' job 2$' "$T/j2.err" && ok "its job id (2) was never used before (--state-dir)" ||
    notok "job id after restart: $(grep -o 'job [0-9]*$' "$T/j2.err")" "$T/j2.err"

# The state file cut short at every point, or garbled: the dispatcher
# refuses to start (exit 1) with one line naming the file, rather than
# count job ids from a smaller number again.
kill -TERM "$DPID" 2> /dev/null
wait "$DPID" 2> /dev/null
good=$(cat "$T/state/next_job")
for cut in $(seq 0 ${#good}) garbled; do
	if [ "$cut" = garbled ]; then printf 'x3\n' > "$T/state/next_job"
	else printf '%s' "${good:0:$cut}" > "$T/state/next_job"; fi
	timeout 10 "$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 --state-dir "$T/state" \
	    > "$T/cut.out" 2> "$T/cut.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -q 'state file .*next_job is corrupt or cut short' "$T/cut.err"; then
		ok "state file cut to ${cut} bytes: refused in one line"
	else
		notok "state file cut to ${cut} bytes: exit $rc" "$T/cut.err"
	fi
done
printf '%s\n' "$good" > "$T/state/next_job"
[ "$fail" = 0 ]
