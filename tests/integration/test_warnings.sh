#!/usr/bin/env bash
# tests/integration/test_warnings.sh: every failure visible.
# A hand-built deployment on loopback (dispatcher with
# --stall-after 2, node agent, CS; the CM comes later) runs one job of
# flt_ckpt that takes a checkpoint every 0.3 s and is held slow
# (FLT_HOLD) while the script breaks things under it:
#   waiting   submitted with no CM registered: `mpiv run` prints the
#             waiting line once, with the reason; the job runs once a CM
#             registers
#   stalled   the CM SIGSTOPped for 4 s (past --stall-after 2): one stall
#             line naming it; after SIGCONT one "answer again" line and
#             the job goes on
#   ckpt      the CS SIGKILLed: one "checkpoints ... are failing" line
#             within 5 s, and no other while it stays dead; mpiv status
#             shows the warning and counts the failures; the CS restarted
#             on its port and store: one "work again" line
# then the hold is lifted: the job ends with exit 0 and the failure-free
# output; its --report lists the warnings and counts the failures.
# Last, a CS registered with an address nobody listens on (--advertise
# 127.0.0.1:1): a second job's checkpoints fail at the node, and the
# third failure in a row of a rank prints the line with the node's error.
# Exit 77 without a working CRIU.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if ! timeout 60 "$CRIU" check > /dev/null 2>&1; then
	echo "CRIU does not work here ($CRIU check fails)"
	exit 77
fi
common_init warn

S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || { echo "mpiv secret new failed"; exit 1; }
mkdir -p "$T/sub" "$T/store"
"$B/bin/mpivcc" -O2 -o "$T/sub/prog" tests/fault/progs/flt_ckpt.c || exit 1
ARGS=(40000 1 2000)	# ~4 s free, >= 80 s while held
timeout 120 "$MPIV" run -n 3 "$T/sub/prog" "${ARGS[@]}" > "$T/ref.out" 2> "$T/ref.err" ||
    { notok "failure-free embedded run" "$T/ref.err"; exit 1; }

# start NAME ARGS...: a daemon in the background, its stdout in
# $T/NAME.out, stderr in $T/NAME.err; its pid in PID_NAME.
start() {
	local name=$1
	shift
	"$MPIV" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	PIDS+=($!)
	eval "PID_$name=$!"
}
# count FILE REGEX: lines of FILE matching REGEX
count() { grep -cE -- "$2" "$1" 2> /dev/null; }

start disp dispatcher "${S[@]}" --listen 127.0.0.1:0 --stall-after 2 --log-level info
DA=$(listening disp) || { notok "dispatcher start" "$T/disp.err"; exit 1; }
start cs cs "${S[@]}" --listen 127.0.0.1:0 --store "$T/store" --dispatcher "$DA" --log-level info
CSA=$(listening cs) || { notok "cs start" "$T/cs.err"; exit 1; }
touch "$T/hold"
FLT_HOLD=$T/hold start node node "${S[@]}" --dispatcher "$DA" --slots 3 \
    --name n1 --cache-dir "$T/cache" --log-level info
wait_for 10 grep -q 'dispatcher node registered' "$T/disp.err" || notok "node registration" "$T/disp.err" "$T/node.err"

# --- waiting: no CM yet ---
t0=$SECONDS
(cd "$T/sub" && exec timeout 150 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 3 \
    --ckpt-interval 0.3 --report "$T/run.json" ./prog "${ARGS[@]}" \
    > "$T/run.out" 2> "$T/run.err") &
RUN=$!
WAIT_RE='^mpiv: job [0-9]+ is waiting: need 1 channel memories, have 0$'
if wait_for 10 grep -qE "$WAIT_RE" "$T/run.err"; then
	ok "waiting for a CM: told after $((SECONDS - t0)) s: $(grep -m1 -E "$WAIT_RE" "$T/run.err")"
else
	notok "no waiting line within 10 s" "$T/run.err" "$T/disp.err"
fi
sleep 2
start cm cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --log-level info
CMA=$(listening cm) || notok "cm start" "$T/cm.err"
if wait_for 15 grep -q 'dispatcher checkpoint durable' "$T/disp.err"; then
	ok "the job runs once a CM registered (a checkpoint is durable)"
else
	notok "no durable checkpoint within 15 s of the CM" "$T/disp.err" "$T/run.err"
fi
n=$(count "$T/run.err" "$WAIT_RE")
[ "$n" = 1 ] && ok "the waiting line was printed once" || notok "waiting line printed $n times" "$T/run.err"
wait_for 5 grep -qE '^mpiv: job [0-9]+ is no longer waiting$' "$T/run.err" &&
    ok "and its end once" || notok "no 'no longer waiting' line" "$T/run.err"

# --- stalled: the CM paused past --stall-after ---
STALL_RE="^mpiv: job [0-9]+: channel memory $CMA has not answered for [0-9]+ s"
kill -STOP "$PID_cm"
t0=$SECONDS
if wait_for 6 grep -qE "$STALL_RE" "$T/run.err"; then
	ok "CM paused: stall line after $((SECONDS - t0)) s: $(grep -m1 -E "$STALL_RE" "$T/run.err")"
else
	notok "no stall line within 6 s of SIGSTOP (stall-after 2)" "$T/run.err" "$T/disp.err"
fi
js=$("$MPIV" status "${S[@]}" --dispatcher "$DA" --json 2> /dev/null)
[ "$(echo "$js" | jq -r '[.jobs[0].warnings[].kind] | index("stalled") != null')" = true ] &&
    ok "mpiv status --json shows the stall" || notok "mpiv status shows no stall: $(echo "$js" | jq -c '.jobs[0].warnings')"
sleep $((4 - (SECONDS - t0) > 0 ? 4 - (SECONDS - t0) : 0))
kill -CONT "$PID_cm"
if wait_for 5 grep -qE '^mpiv: job [0-9]+: its servers answer again$' "$T/run.err"; then
	ok "CM continued: 'answer again' line"
else
	notok "no 'answer again' line within 5 s of SIGCONT" "$T/run.err" "$T/disp.err"
fi
n=$(count "$T/run.err" "$STALL_RE")
[ "$n" = 1 ] && ok "the stall line was printed once" || notok "stall line printed $n times" "$T/run.err"
nd=$(count "$T/disp.err" 'dispatcher checkpoint durable')
more_durable() { [ "$(count "$T/disp.err" 'dispatcher checkpoint durable')" -gt "$nd" ]; }
wait_for 10 more_durable &&
    ok "checkpoints go on after the stall" || notok "no checkpoint after the stall" "$T/disp.err"

# --- checkpoints failing: the CS killed, then restarted on its store ---
FAIL_RE="^mpiv: checkpoints of job [0-9]+ are failing: "
{ kill -KILL "$PID_cs"; wait "$PID_cs"; } 2> /dev/null
t0=$SECONDS
if wait_for 5 grep -qE "$FAIL_RE" "$T/run.err"; then
	ok "CS killed: told after $((SECONDS - t0)) s: $(grep -m1 -E "$FAIL_RE" "$T/run.err")"
else
	notok "no 'checkpoints are failing' line within 5 s" "$T/run.err" "$T/disp.err"
fi
# failures reported by the node while it stays dead
wait_for 10 grep -q 'dispatcher checkpoint failed' "$T/disp.err" ||
    notok "the node reported no failed checkpoint" "$T/disp.err" "$T/node.err"
sleep 2
js=$("$MPIV" status "${S[@]}" --dispatcher "$DA" --json 2> /dev/null)
if [ "$(echo "$js" | jq -r '[.jobs[0].warnings[].kind] | index("ckpt_failing") != null')" = true ] &&
    [ "$(echo "$js" | jq -r '.jobs[0].ckpt_failures')" -gt 0 ]; then
	ok "mpiv status --json: ckpt_failing, $(echo "$js" | jq -r '.jobs[0].ckpt_failures') failures"
else
	notok "mpiv status: $(echo "$js" | jq -c '.jobs[0] | {warnings, ckpt_failures}')"
fi
"$MPIV" status "${S[@]}" --dispatcher "$DA" > "$T/st.txt" 2>&1
grep -q 'warning ckpt_failing' "$T/st.txt" && grep -qE '[0-9]+ failed checkpoints?$' "$T/st.txt" &&
    ok "mpiv status (text) shows it" || notok "mpiv status text" "$T/st.txt"
n=$(count "$T/run.err" "$FAIL_RE")
[ "$n" = 1 ] && ok "printed once while the CS stays dead" || notok "failing line printed $n times" "$T/run.err"
start cs2 cs "${S[@]}" --listen "$CSA" --store "$T/store" --dispatcher "$DA" --log-level info
listening cs2 > /dev/null || notok "CS restart on $CSA" "$T/cs2.err"
if wait_for 10 grep -qE '^mpiv: checkpoints of job [0-9]+ work again$' "$T/run.err"; then
	ok "CS restarted: 'work again' line $((SECONDS - t0)) s after the kill"
else
	notok "no 'work again' line within 20 s of the CS restart" "$T/run.err" "$T/disp.err"
fi

# --- the end ---
rm -f "$T/hold"
wait "$RUN"
rc=$?
if [ "$rc" = 0 ] && cmp -s "$T/run.out" "$T/ref.out"; then
	ok "job: exit 0, output identical to the failure-free run"
else
	notok "job: rc $rc, output $(cmp -s "$T/run.out" "$T/ref.out" && echo same || echo different)" "$T/run.err" "$T/disp.err"
fi
if [ -s "$T/run.json" ] &&
    [ "$(jq -r '.ckpt_failures' "$T/run.json")" -gt 0 ] &&
    [ "$(jq -r '[.warnings[] | select(.kind == "ckpt_failing" and .cleared_s != null and .failures > 0)] | length' "$T/run.json")" = 1 ] &&
    [ "$(jq -r '[.warnings[] | select(.kind == "waiting" and .cleared_s != null)] | length' "$T/run.json")" = 1 ] &&
    [ "$(jq -r '[.warnings[] | select(.kind == "stalled" and .cleared_s != null)] | length' "$T/run.json")" = 1 ]; then
	ok "report: $(jq -c '{ckpt_failures, warnings: [.warnings[] | {kind, since_s: (.since_s | floor), cleared_s: (.cleared_s | floor)}]}' "$T/run.json")"
else
	notok "report: $(jq -c '{ckpt_failures, warnings}' "$T/run.json" 2> /dev/null)"
fi
n=$(grep -c '^mpiv: ' "$T/run.err")
[ "$n" = 6 ] && ok "six 'mpiv:' lines in all (three conditions, each begun and cleared)" ||
    notok "$n 'mpiv:' lines, want 6" "$T/run.err"

# --- a CS the dispatcher sees but the node cannot reach: the node's
# failure reports alone make the line (3 in a row of one rank) ---
{ kill -KILL "$PID_cs2"; wait "$PID_cs2"; } 2> /dev/null
start cs3 cs "${S[@]}" --listen 127.0.0.1:0 --advertise 127.0.0.1:1 --store "$T/store" --dispatcher "$DA" --log-level info
listening cs3 > /dev/null || notok "cs3 start" "$T/cs3.err"
wait_for 10 grep -q 'dispatcher cs registered addr=127.0.0.1:1$' "$T/disp.err" || notok "cs3 registration" "$T/disp.err"
(cd "$T/sub" && exec timeout 100 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 3 \
    --ckpt-interval 0.3 --report "$T/run2.json" ./prog "${ARGS[@]}" \
    > "$T/run2.out" 2> "$T/run2.err")
rc=$?
UNREACH_RE='^mpiv: checkpoints of job [0-9]+ are failing: rank [0-9]: cannot reach checkpoint server 127\.0\.0\.1:1: .* \([0-9]+ in a row\)$'
if [ "$rc" = 0 ] && cmp -s "$T/run2.out" "$T/ref.out" &&
    [ "$(count "$T/run2.err" "$UNREACH_RE")" = 1 ] && [ "$(grep -c '^mpiv: ' "$T/run2.err")" = 1 ]; then
	ok "unreachable CS: exit 0, same output, one line: $(grep -m1 '^mpiv: ' "$T/run2.err")"
else
	notok "unreachable CS: rc $rc, output $(cmp -s "$T/run2.out" "$T/ref.out" && echo same || echo different)" "$T/run2.err"
fi
if [ "$(jq -r '.ckpt_failures' "$T/run2.json" 2> /dev/null)" -ge 3 ] 2> /dev/null &&
    [ "$(jq -r '[.warnings[] | select(.kind == "ckpt_failing" and .cleared_s == null)] | length' "$T/run2.json")" = 1 ]; then
	ok "its report: $(jq -c '{ckpt_failures, checkpoints, warnings: [.warnings[].kind]}' "$T/run2.json")"
else
	notok "its report: $(jq -c '{ckpt_failures, warnings}' "$T/run2.json" 2> /dev/null)"
fi
[ "$fail" = 0 ]
