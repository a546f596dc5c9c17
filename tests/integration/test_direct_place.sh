#!/usr/bin/env bash
# tests/integration/test_direct_place.sh: where the dispatcher puts the
# ranks of a `--protocol direct` job (docs/DIRECT.md). A dispatcher, a
# CM and node agents on loopback; "walled" is started with --no-listen.
#   - a direct job on a pool of --no-listen nodes only waits, as a job
#     waiting for slots does (mpiv status "waiting", the waiting
#     warning), and is placed once a node that listens registers: its
#     ranks only there, mpiv status and the report say "direct", and
#     every rank got MPIV_PROTOCOL=direct from its Launch
#   - a direct job waits while the listening nodes lack slots, however
#     many --no-listen nodes have free ones
#   - a relay job runs on both kinds of node, its ranks without
#     MPIV_PROTOCOL
#   - the listening node is lost under a running direct job: its ranks
#     wait rather than go to walled, and are relaunched on a listening
#     node that joins
# The program prints MPIV_PROTOCOL, sleeps PRE s (so that mpiv status sees
# the ranks placed whatever the ranks do next), calls MPI_Init, prints
# its rank, sleeps POST s and calls MPI_Finalize. Every job must finish.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init direct_place

cat > "$T/prog.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char *proto = getenv("MPIV_PROTOCOL");
	const char *r = getenv("MPIV_RANK");
	int rank;

	if (argc != 3)
		return 2;
	printf("env %s %s\n", r != NULL ? r : "?", proto != NULL ? proto : "-");
	fflush(stdout);
	sleep((unsigned)atoi(argv[1]));
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	printf("rank %d\n", rank);
	fflush(stdout);
	sleep((unsigned)atoi(argv[2]));
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -O2 -o "$T/prog" "$T/prog.c" || exit 1

"$MPIV" dispatcher --listen 127.0.0.1:0 --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
start_node() {	# start_node NAME [--no-listen]: 2 slots
	"$MPIV" node --dispatcher "$DA" --slots 2 --name "$@" --user root \
	    --cache-dir "$T/c-$1" 2> "$T/$1.err" &
	PIDS+=($!)
	disown $!	# no "Killed" notice when kill-node ends one
}
ST=$T/st.json
status() {	# status: mpiv status --json into $ST
	"$MPIV" status --dispatcher "$DA" --json > "$ST" 2> "$T/st.err"
}
# q JQ: the jq expression on the last status (exit 1 when false or null)
q() { jq -e "$1" "$ST" > /dev/null 2>&1; }
node_up() {	# node_up NAME: registered and alive, a CM too
	status && q "[.nodes[] | select(.name == \"$1\" and .state == \"alive\")] | length == 1" &&
	    q '.services | length >= 1'
}
# ranks_on JOB NAME: the job's ranks all placed on node NAME, running
ranks_on() {
	status && q ".jobs[] | select(.job == \"$1\") | .ranks | length > 0 and
	    all(.[]; .state == \"running\" and (.node | startswith(\"$2#\")))"
}
used() {	# used NAME: slots in use on node NAME (last status)
	jq -r ".nodes[] | select(.name == \"$1\" and .state == \"alive\") | .used" "$ST"
}
# submit NAME ARGS...: mpiv run --dispatcher ARGS in the background, its
# pid in PID_NAME, output in $T/NAME.{out,err,json} ("d" is the dispatcher)
submit() {
	local n=$1
	shift
	timeout 120 "$MPIV" run --dispatcher "$DA" --report "$T/$n.json" "$@" \
	    > "$T/$n.out" 2> "$T/$n.err" &
	eval "PID_$n=$!"
}
# jobid N: the id of the Nth job submitted (the dispatcher's log)
jobid() {
	sed -n 's/.*dispatcher job submitted job=\([0-9]*\) .*/\1/p' "$T/d.err" | sed -n "$1p"
}
have_job() { [ -n "$(jobid "$1")" ]; }	# have_job N: N jobs submitted
# sorted FILE PREFIX: the lines of FILE that begin with PREFIX, sorted
sorted() { grep "^$2 " "$1" | sort | tr '\n' ' '; }

start_node walled --no-listen
wait_for 15 node_up walled && ok "walled (--no-listen) and a CM registered" ||
    { notok "walled did not register" "$T/d.err" "$T/walled.err"; exit 1; }

# 1: only --no-listen nodes: the direct job waits, then goes to "open".
submit a --protocol direct --timeout 40 -n 2 "$T/prog" 3 1
wait_for 15 have_job 1
A=$(jobid 1)
waiting() {	# waiting JOB TEXT: waits with TEXT in its message
	status && q ".jobs[] | select(.job == \"$1\") | select(.state == \"waiting\" and
	    (.message | contains(\"$2\")) and all(.ranks[]; .node == \"\"))"
}
WANT='need 2 slots on nodes that accept connections'
if wait_for 15 waiting "$A" "$WANT"; then
	ok "direct job $A on a --no-listen pool waits: \"$(jq -r ".jobs[0].message" "$ST")\""
else
	notok "direct job $A does not wait" "$ST" "$T/d.err"
fi
q ".jobs[] | select(.job == \"$A\") | .protocol == \"direct\"" &&
    ok "mpiv status shows protocol direct for the waiting job" ||
    notok "status protocol of job $A" "$ST"
# the waiting warning (after its grace, as for any job short of slots)
wait_for 10 eval 'status && q ".jobs[] | select(.job == \"$A\") | .warnings[] |
    select(.kind == \"waiting\" and (.text | contains(\"$WANT\")))"' &&
    waiting "$A" "$WANT" && [ "$(used walled)" = 0 ] &&
    ok "still waiting with the waiting warning, walled's slots untouched" ||
    notok "job $A: no waiting warning, or it took walled's slots" "$ST" "$T/d.err"
wait_for 10 grep -q "mpiv: job $A is waiting: $WANT" "$T/a.err" &&
    ok "mpiv run says the job is waiting" || notok "no waiting line from mpiv run" "$T/a.err"

start_node open
if wait_for 20 ranks_on "$A" open; then
	ok "open (listening) registered: job $A placed, both ranks on open"
	q ".jobs[] | select(.job == \"$A\") | .protocol == \"direct\"" &&
	    [ "$(used walled)" = 0 ] &&
	    ok "while it runs: protocol direct, nothing on walled" ||
	    notok "job $A running: protocol or walled's slots" "$ST"
else
	notok "job $A was not placed on open" "$ST" "$T/d.err"
fi
grep -q "job placed job=$A protocol=direct" "$T/d.err" &&
    grep -q "job running job=$A .*protocol=direct" "$T/d.err" &&
    ok "the dispatcher logs the protocol of the job placed and running" ||
    notok "no protocol=direct in the dispatcher's job lines" "$T/d.err"
wait "$PID_a"
RC_A=$?
[ "$(sorted "$T/a.out" env)" = "env 0 direct env 1 direct " ] &&
    ok "both ranks of job $A were launched with MPIV_PROTOCOL=direct" ||
    notok "job $A's ranks' MPIV_PROTOCOL" "$T/a.out" "$T/a.err"
[ "$(jq -r .protocol "$T/a.json" 2> /dev/null)" = direct ] &&
    ok "the report of job $A says protocol direct" || notok "report protocol" "$T/a.json"

[ "$RC_A" = 0 ] && [ "$(sorted "$T/a.out" rank)" = "rank 0 rank 1 " ] &&
    ok "job $A finished: exit 0, both ranks past MPI_Init" ||
    notok "job $A: rc $RC_A" "$T/a.err" "$T/a.out"

# 2: 2 listening slots, 2 walled ones: a direct job of 3 waits.
submit c --protocol direct -n 3 "$T/prog" 0 0
wait_for 15 have_job 2
C=$(jobid 2)
wait_for 15 node_up open && wait_for 15 waiting "$C" 'need 3 slots on nodes that accept connections (direct protocol), have 2' &&
    [ "$(used walled)" = 0 ] && [ "$(used open)" = 0 ] &&
    ok "direct job $C of 3 ranks waits: 2 listening slots, walled's 2 not counted" ||
    notok "job $C of 3 ranks" "$ST" "$T/d.err"
kill "$PID_c" 2> /dev/null
wait "$PID_c" 2> /dev/null
wait_for 15 eval 'status && q "[.jobs[] | select(.job == \"$C\")] | length == 0"' ||
    notok "job $C was not dropped after its client left" "$ST"

# 3: a relay job of 4 ranks uses both nodes.
submit r --protocol relay --timeout 40 -n 4 "$T/prog" 3 0
wait_for 15 have_job 3
D=$(jobid 3)
on_both() {
	status && q "[.jobs[] | select(.job == \"$D\") | .ranks[] | select(.state == \"running\") |
	    .node | sub(\"#[0-9]+$\"; \"\")] | sort | . == [\"open\", \"open\", \"walled\", \"walled\"]"
}
wait_for 20 on_both && q ".jobs[] | select(.job == \"$D\") | .protocol == \"relay\"" &&
    ok "relay job $D: ranks on open and walled, protocol relay" ||
    notok "relay job $D's placement" "$ST" "$T/d.err"
wait "$PID_r"
rc=$?
[ "$rc" = 0 ] && [ "$(sorted "$T/r.out" rank)" = "rank 0 rank 1 rank 2 rank 3 " ] &&
    [ "$(sorted "$T/r.out" env)" = "env 0 - env 1 - env 2 - env 3 - " ] &&
    [ "$(jq -r .protocol "$T/r.json" 2> /dev/null)" = relay ] &&
    ok "relay job $D: exit 0, no MPIV_PROTOCOL in its ranks, report says relay" ||
    notok "relay job $D: rc $rc" "$T/r.err" "$T/r.out"

# 4: the listening node is lost under a direct job.
submit e --protocol direct --timeout 60 -n 2 "$T/prog" 4 1
wait_for 15 have_job 4
E=$(jobid 4)
if wait_for 20 ranks_on "$E" open; then
	"$MPIV" kill-node --dispatcher "$DA" open > "$T/kn.out" 2>&1 ||
	    notok "kill-node open" "$T/kn.out"
	relaunch_waits() {
		status && q "[.jobs[] | select(.job == \"$E\") | .ranks[] | select(.node == \"\" and .state == \"waiting\")] | length == 2" &&
		    q ".jobs[] | select(.job == \"$E\") | .warnings[] | select(.kind == \"waiting\" and
		    (.text | contains(\"no node that accepts connections has a free slot\")))"
	}
	wait_for 15 relaunch_waits && [ "$(used walled)" = 0 ] &&
	    ok "open lost: job $E's ranks wait for a listening node, walled's free slots unused" ||
	    notok "job $E after open was lost" "$ST" "$T/d.err"
	start_node open2
	wait_for 20 ranks_on "$E" open2 &&
	    q ".jobs[] | select(.job == \"$E\") | .protocol == \"direct\" and all(.ranks[]; .incarnation == 2)" &&
	    [ "$(used walled)" = 0 ] &&
	    ok "open2 joined: job $E's ranks relaunched there (incarnation 2), still direct" ||
	    notok "job $E not relaunched on open2" "$ST" "$T/d.err"
	grep -q "relaunching job=$E rank=0 inc=2 node=open2 " "$T/d.err" &&
	    grep -q "relaunching job=$E rank=1 inc=2 node=open2 " "$T/d.err" &&
	    ! grep -q "relaunching job=$E .*node=walled " "$T/d.err" &&
	    ok "the dispatcher relaunched both ranks on open2, none on walled" ||
	    notok "relaunch lines of job $E" "$T/d.err"
else
	notok "job $E was not placed on open" "$ST" "$T/d.err"
fi
wait "$PID_e"
rc=$?
[ "$(sorted "$T/e.out" env)" = "env 0 direct env 1 direct " ] &&
    ok "relaunched ranks got MPIV_PROTOCOL=direct (and printed it once)" ||
    notok "job $E's MPIV_PROTOCOL lines" "$T/e.out" "$T/e.err"
[ "$rc" = 0 ] && [ "$(sorted "$T/e.out" rank)" = "rank 0 rank 1 " ] &&
    [ "$(jq -r .restarts "$T/e.json" 2> /dev/null)" = 2 ] &&
    ok "job $E finished after the relaunch: exit 0, 2 restarts" ||
    notok "job $E: rc $rc" "$T/e.err" "$T/e.out"
[ "$fail" = 0 ]
