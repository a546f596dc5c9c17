#!/usr/bin/env bash
# tests/integration/test_node_pool.sh: a standalone deployment on loopback
# (dispatcher with a 2 s heartbeat timeout, a CM, three node agents with
# their own program caches, a shared secret) running a shipped program
# while nodes vanish:
#   - mpiv status (text, --json, unknown job) and mpiv kill-node (unknown)
#   - kill-node mid-job: its ranks are relaunched on the other nodes
#   - a node agent SIGSTOPped past the heartbeat timeout (a hung or
#     partitioned machine), then continued: declared dead, its ranks run
#     elsewhere, and when it returns it is told so and joins fresh
#   - a node joining mid-job takes ranks that were waiting for a slot
#   - the embedded deployment under --chaos-nodes, in both protocols
# Every job's stdout must equal the failure-free run's, exit code 0.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init pool

S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || { echo "mpiv secret new failed"; exit 1; }
mkdir -p "$T/sub"
"$B/bin/mpivcc" -O2 -o "$T/sub/prog" tests/fault/progs/flt_ring.c || exit 1
# 20000 rounds: about 5 s here. While $T/hold exists (FLT_HOLD, given to
# the node agents and so to their ranks) rank 0 sleeps 2 ms a round: jobs
# 1-3 are held until the script's faults are done, then run out at full
# speed, so no job ends before its fault on a fast machine and none runs
# longer than it must on a slow one.
ROUNDS=20000
timeout 120 "$MPIV" run -n 4 "$T/sub/prog" "$ROUNDS" 3000 > "$T/ref.out" 2> "$T/ref.err" ||
    { notok "failure-free embedded run" "$T/ref.err"; exit 1; }

"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 --heartbeat-timeout 2 \
    --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
wait_for 10 grep -q '^listening on ' "$T/d.out" || { notok "dispatcher start" "$T/d.err"; exit 1; }
DA=$(sed -n 's/^listening on //p' "$T/d.out")
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > /dev/null 2> "$T/cm.err" &
PIDS+=($!)
start_node() {	# start_node NAME SLOTS
	FLT_HOLD=$T/hold "$MPIV" node "${S[@]}" --dispatcher "$DA" --slots "$2" --name "$1" \
	    --cache-dir "$T/cache-$1" --log-level info 2> "$T/$1.err" &
	PIDS+=($!)
	eval "PID_$1=$!"
}
nodes_up() {	# nodes_up N: N live nodes and a CM registered
	local js
	js=$("$MPIV" status "${S[@]}" --dispatcher "$DA" --json 2> /dev/null) || return 1
	[ "$(echo "$js" | jq '[.nodes[] | select(.state == "alive")] | length')" = "$1" ] &&
	    [ "$(echo "$js" | jq '.services | length')" -ge 1 ]
}
start_node n1 2
start_node n2 2
start_node n3 2
wait_for 15 nodes_up 3 && ok "three nodes and a CM registered (mpiv status --json)" ||
    notok "nodes did not register" "$T/d.err"

"$MPIV" status "${S[@]}" --dispatcher "$DA" > "$T/st.txt" 2>&1
grep -q '^NODES (3)' "$T/st.txt" && grep -q 'n2#' "$T/st.txt" &&
    ok "mpiv status lists the nodes" || notok "mpiv status" "$T/st.txt"
"$MPIV" status "${S[@]}" --dispatcher "$DA" 999 > /dev/null 2> "$T/st.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'no job 999' "$T/st.err" &&
    ok "mpiv status of an unknown job: exit 1, clear message" ||
    notok "mpiv status 999: rc $rc" "$T/st.err"
"$MPIV" kill-node "${S[@]}" --dispatcher "$DA" nosuch > /dev/null 2> "$T/kn.err"
rc=$?
[ "$rc" = 1 ] && grep -q 'no live node named nosuch' "$T/kn.err" &&
    ok "mpiv kill-node of an unknown node: exit 1, clear message" ||
    notok "mpiv kill-node nosuch: rc $rc" "$T/kn.err"

# submit NAME: starts the job from $T/sub in the background (JOB_PID),
# held until check_job.
submit() {
	touch "$T/hold"
	(cd "$T/sub" && exec timeout 120 "$MPIV" run "${S[@]}" --dispatcher "$DA" \
	    -n 4 --report "$T/$1.json" ./prog "$ROUNDS" 3000 > "$T/$1.out" 2> "$T/$1.err") &
	JOB_PID=$!
}
check_job() {	# check_job NAME JOBID WHAT
	rm -f "$T/hold"
	wait "$JOB_PID"
	local rc=$?
	if [ "$rc" = 0 ] && cmp -s "$T/$1.out" "$T/ref.out"; then
		ok "$3: output identical, exit 0 ($(jq -r '"\(.restarts) restarts"' "$T/$1.json"))"
	else
		notok "$3: rc $rc, output $(cmp -s "$T/$1.out" "$T/ref.out" && echo same || echo different)" "$T/$1.err" "$T/d.err"
	fi
}

# victim JOB: once the job runs, the name of the node of its rank 0.
VICTIM=
victim() {
	local js
	js=$("$MPIV" status "${S[@]}" --dispatcher "$DA" --json "$1" 2> /dev/null) &&
	    [ -n "$js" ] &&
	    VICTIM=$(echo "$js" | jq -er '.jobs[0] | select(.state == "running") | .ranks[0] | select(.state == "running") | .node | sub("#[0-9]+$"; "")')
}

# 1: kill-node of a node running ranks.
submit j1
if wait_for 20 victim 1; then
	V1=$VICTIM
	"$MPIV" kill-node "${S[@]}" --dispatcher "$DA" "$V1" > "$T/kn1.out" 2>&1 &&
	    ok "kill-node $V1 accepted" || notok "kill-node $V1" "$T/kn1.out"
else
	V1=none
	notok "job 1 never ran" "$T/d.err"
fi
check_job j1 1 "job 1, $V1 killed mid-job"
[ "$(jq .restarts "$T/j1.json")" -ge 1 ] 2>/dev/null &&
    ok "job 1: the ranks of $V1 were restarted" || notok "job 1: no restart recorded" "$T/d.err"
hash=$(sha256sum "$T/sub/prog" | cut -c1-64)
cached=0
for n in n1 n2 n3; do
	[ -x "$T/cache-$n/$hash/prog" ] && cached=$((cached + 1))
done
[ "$cached" -ge 2 ] && grep -q 'program cached' "$T"/n?.err &&
    ok "the program was shipped into $cached nodes' content-addressed caches" ||
    notok "program shipping ($cached caches)" "$T/d.err"

# 2: a node hangs (SIGSTOP) past the heartbeat timeout, then comes back.
submit j2
if wait_for 20 victim 2; then
	V2=$VICTIM
	eval "P2=\$PID_$V2"
	# The node is two processes: the privileged helper and its child,
	# the agent, which heartbeats. A hung machine stops both.
	P2="$P2 $(pgrep -x -P "$P2" mpiv)"
	kill -STOP $P2
	wait_for 10 grep -q "node declared dead node=$V2#.*no heartbeat" "$T/d.err" &&
	    ok "$V2 declared dead after the heartbeat timeout" ||
	    notok "$V2 not declared dead" "$T/d.err"
	kill -CONT $P2
else
	V2=none
	notok "job 2 never ran" "$T/d.err"
fi
check_job j2 2 "job 2, $V2 hung then back"
wait_for 10 grep -q 'declared us dead' "$T/$V2.err" &&
    grep -q 'came back after being declared dead' "$T/d.err" &&
    ok "$V2 was told it had been declared dead and joined fresh" ||
    notok "$V2's return" "$T/$V2.err" "$T/d.err"

# 3: two nodes (2 slots each) are left: kill one mid-job, its ranks
# wait for a slot; n4 joins and takes them.
wait_for 10 nodes_up 2 || notok "two nodes are not up" "$T/d.err"
submit j3
if wait_for 20 victim 3; then
	V3=$VICTIM
	"$MPIV" kill-node "${S[@]}" --dispatcher "$DA" "$V3" > /dev/null 2>&1
	sleep 0.5
	"$MPIV" status "${S[@]}" --dispatcher "$DA" --json 3 > "$T/st3.json" 2> "$T/st3.err" &&
	    jq -e '.jobs[0].ranks | map(select(.state == "waiting")) | length == 2' "$T/st3.json" > /dev/null &&
	    ok "$V3's ranks wait for a slot" || notok "ranks not waiting" "$T/st3.json" "$T/st3.err" "$T/d.err"
	start_node n4 2
	wait_for 20 grep -q 'dispatcher relaunching job=3 rank=[0-9]* inc=2 node=n4 ' "$T/d.err" &&
	    ok "n4 joined mid-job and runs the waiting ranks" ||
	    notok "n4 took no rank" "$T/d.err"
else
	notok "job 3 never ran" "$T/d.err"
fi
check_job j3 3 "job 3, a node joined mid-job"

# 4: the embedded deployment, whole node agents killed at random (relay).
timeout 120 "$MPIV" run -n 4 --nodes 3 --protocol relay --chaos 400ms --chaos-nodes --chaos-seed 4 \
    --chaos-max 4 --report "$T/c.json" "$T/sub/prog" "$ROUNDS" 3000 > "$T/c.out" 2> "$T/c.err"
rc=$?
[ "$rc" = 0 ] && cmp -s "$T/c.out" "$T/ref.out" && [ "$(jq .kills "$T/c.json")" -ge 1 ] &&
    ok "--chaos-nodes: $(jq .kills "$T/c.json") node agents killed, output identical" ||
    notok "--chaos-nodes: rc $rc" "$T/c.err"

# 5: the same in the direct protocol: the lost node's ranks come back
# elsewhere and get their messages again from their senders' logs.
timeout 120 "$MPIV" run -n 4 --nodes 3 --protocol direct --chaos 400ms \
    --chaos-nodes --chaos-seed 5 --chaos-max 4 --report "$T/cd.json" \
    "$T/sub/prog" "$ROUNDS" 3000 > "$T/cd.out" 2> "$T/cd.err"
rc=$?
[ "$rc" = 0 ] && cmp -s "$T/cd.out" "$T/ref.out" && [ "$(jq .kills "$T/cd.json")" -ge 1 ] &&
    ok "--chaos-nodes, direct: $(jq .kills "$T/cd.json") node agents killed, output identical" ||
    notok "--chaos-nodes, direct: rc $rc, kills $(jq .kills "$T/cd.json" 2>/dev/null)" "$T/cd.err"
[ "$fail" = 0 ]
