#!/usr/bin/env bash
# tests/integration/test_timeout_report.sh: the --report of a job that
# mpiv run gives up on (--timeout, a signal to it) counts what happened.
# mpiv run sends the dispatcher JobCancel and waits a bounded time for
# the JobDone that carries the kills, restarts and incarnations
# (docs/CONTRACTS.md, "Dispatcher <-> node agent, client").
#   timeout   an endless ring under --chaos, --timeout 3: exit 124, the
#             reason is the timeout's, kills > 0, restarts between
#             kills - nranks (kills in flight when the job ended restart
#             nothing) and kills, one restart_log entry per restart, per
#             rank incarnations = restarts + 1 adding up to the total, and
#             the stderr summary line says the same counts
#   signal    the same job, SIGTERM to mpiv run after 2 s: exit 143, the
#             signal's reason, the same consistency
#   waiting   an external dispatcher with too few slots: the job never
#             runs, --timeout 1 ends it at once (exit 124), the dispatcher
#             logs the cancel and ends the job with code 124
#   frozen    the embedded dispatcher SIGSTOPped before the timeout: no
#             JobDone can come; mpiv run still exits 124 with the same
#             one reason line and report, within 15 s (3 s, its 2 s wait,
#             up to 2 s to stop the frozen daemon)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init timeout-report
"$B/bin/mpivcc" -O2 -o "$T/ring" tests/fault/progs/flt_ring.c || exit 1
"$B/bin/mpivcc" -O2 -o "$T/hi" tests/integration/hi.c || exit 1
RING=("$T/ring" 100000000 3000)	# never ends within these tests

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# wait_rc PID SECS: waits for PID (a child) at most SECS; its exit code
# in rc, 255 when it had to be killed.
wait_rc() {
	local pid=$1 end=$((SECONDS + $2))
	while kill -0 "$pid" 2> /dev/null && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		kill -KILL "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
		rc=255
		return
	fi
	wait "$pid"
	rc=$?
}

# check_report NAME JSON ERR NRANKS CODE REASON: the report of a job
# ended by mpiv run, with chaos kills, is consistent; so is the summary
# line on stderr.
check_report() {
	local name=$1 json=$2 err=$3
	local what
	if what=$(python3 - "$json" "$4" "$5" "$6" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, code, reason = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
k, rs, log = r["kills"], r["restarts"], r["restart_log"]
assert r["exit_code"] == code, "exit_code %r" % r["exit_code"]
assert reason in r["reason"], "reason %r" % r["reason"]
assert k > 0, "no kill counted (kills %d, restarts %d)" % (k, rs)
assert k - n <= rs <= k, "%d kills but %d restarts" % (k, rs)
assert len(log) == rs, "restart_log has %d entries for %d restarts" % (len(log), rs)
pr = r["per_rank"]
assert [p["rank"] for p in pr] == list(range(n)), pr
assert sum(p["restarts"] for p in pr) == rs, "per_rank restarts %r" % pr
for p in pr:
    assert p["incarnations"] == p["restarts"] + 1, p
    got = sorted(e["incarnation"] for e in log if e["rank"] == p["rank"])
    assert got == list(range(2, p["incarnations"] + 1)), (p, got)
print("%d kill%s, %d restart%s" % (k, "s"[k == 1:], rs, "s"[rs == 1:]))
PY
	); then
		if grep -q "^mpiv: $what, " "$err" &&
		    [ "$(grep -c "^mpiv: .*$6" "$err")" = 1 ]; then
			ok "$name: report and summary line: $what, reason \"$6\""
		else
			notok "$name: stderr does not say \"$what\" and the reason once" "$err"
		fi
	else
		notok "$name: report: $what" "$json" "$err"
	fi
}

# ---- timeout ----
t0=$(now_ms)
timeout -k 5 60 "$MPIV" run --report "$T/to.json" --timeout 3 -n 3 \
    --chaos 100ms --chaos-seed 5 "${RING[@]}" < /dev/null > "$T/to.out" 2> "$T/to.err"
rc=$?
el=$(( $(now_ms) - t0 ))
if [ "$rc" = 124 ]; then
	ok "timeout: exit 124 after $el ms"
	check_report timeout "$T/to.json" "$T/to.err" 3 124 "job timed out after 3 s"
else
	notok "timeout: exit $rc, expected 124" "$T/to.err"
fi
# 3 s, at most the 2 s wait (the JobDone above came, in milliseconds
# here), the teardown, slack for a loaded machine
[ "$el" -lt 10000 ] && ok "timeout: ended $el ms after the start (--timeout 3)" ||
    notok "timeout: took $el ms for --timeout 3" "$T/to.err"

# ---- signal ----
"$MPIV" run --report "$T/sig.json" --timeout 60 -n 3 --chaos 100ms \
    --chaos-seed 7 "${RING[@]}" < /dev/null > "$T/sig.out" 2> "$T/sig.err" &
pid=$!
sleep 2
kill -TERM "$pid"
wait_rc "$pid" 30
if [ "$rc" = 143 ]; then
	ok "signal: SIGTERM to mpiv run, exit 143"
	check_report signal "$T/sig.json" "$T/sig.err" 3 143 \
	    "interrupted by signal 15 (Terminated), job killed"
else
	notok "signal: exit $rc, expected 143" "$T/sig.err"
fi

# ---- waiting (external dispatcher) ----
"$MPIV" dispatcher --listen 127.0.0.1:0 --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
"$MPIV" node --dispatcher "$DA" --slots 1 --user root --cache-dir "$T/c1" \
    2> "$T/n1.err" &
PIDS+=($!)
wait_for 15 grep -q 'node registered' "$T/d.err" ||
    notok "waiting: the node did not register" "$T/d.err"
timeout -k 5 30 "$MPIV" run --dispatcher "$DA" --report "$T/w.json" \
    --timeout 1 -n 2 "$T/hi" < /dev/null > "$T/w.out" 2> "$T/w.err"
rc=$?
if [ "$rc" = 124 ] &&
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(not (r["exit_code"] == 124 and r["job"] == "1" and "timed out after 1 s" in r["reason"]))' "$T/w.json" &&
    wait_for 5 grep -q 'client cancels job=1 exit_code=124 reason="job timed out after 1 s"' "$T/d.err" &&
    grep -q 'job done job=1 exit_code=124 .*reason="job timed out after 1 s"' "$T/d.err"; then
	ok "waiting: a job that never ran ends at the cancel (exit 124, dispatcher logs code and reason)"
else
	notok "waiting: exit $rc" "$T/w.err" "$T/w.json" "$T/d.err"
fi
# the slot is free again: the next job runs
timeout -k 5 30 "$MPIV" run --dispatcher "$DA" --timeout 20 -n 1 "$T/hi" \
    < /dev/null > "$T/w2.out" 2> "$T/w2.err"
rc=$?
[ "$rc" = 0 ] && [ "$(cat "$T/w2.out")" = "hi size=1 sum=1" ] &&
    ok "waiting: the dispatcher runs the next job" ||
    notok "waiting: next job exit $rc" "$T/w2.err" "$T/d.err"

# ---- frozen dispatcher: the wait is bounded ----
t0=$(now_ms)
"$MPIV" run -v --report "$T/fz.json" --timeout 3 -n 2 "${RING[@]}" \
    < /dev/null > "$T/fz.out" 2> "$T/fz.err" &
pid=$!
dpid=
wait_for 10 grep -q '^mpiv: dispatcher .* job 1$' "$T/fz.err" &&
    dpid=$(pgrep -P "$pid" -f ' dispatcher --listen ')
if [ -z "$dpid" ]; then
	notok "frozen: no embedded dispatcher found" "$T/fz.err"
	kill -TERM "$pid" 2> /dev/null
	wait_rc "$pid" 30
else
	PIDS+=("$dpid")		# continued and killed at exit whatever happens
	kill -STOP "$dpid"
	wait_rc "$pid" 40
	el=$(( $(now_ms) - t0 ))
	kill -CONT "$dpid" 2> /dev/null
	if [ "$rc" = 124 ] && [ "$el" -lt 15000 ] &&
	    [ "$(grep -c '^mpiv: ' "$T/fz.err")" = 2 ] &&
	    grep -q '^mpiv: job timed out after 3 s$' "$T/fz.err" &&
	    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); sys.exit(not (r["exit_code"] == 124 and r["reason"] == "job timed out after 3 s"))' "$T/fz.json"; then
		ok "frozen: no JobDone, exit 124 with the timeout's reason after $el ms"
	else
		notok "frozen: exit $rc after $el ms" "$T/fz.err" "$T/fz.json"
	fi
fi

[ "$fail" = 0 ]
