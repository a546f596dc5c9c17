#!/usr/bin/env bash
# tests/integration/test_direct_links.sh: the security of the links
# between the ranks of a direct job (docs/DIRECT.md, "Connections"). A
# dispatcher (2 s heartbeat timeout), a CM and three node agents of one
# slot each, all with a cluster secret, on loopback; jobs of 3 ranks of
# --protocol direct. Rank 0 waits for a go file before it sends; the
# others block in MPI_Recv meanwhile, so their progress engines serve
# their listening ports (found with ss by the pid each rank writes).
# tests/integration/directpeer.py plays a peer rank:
#   - garbage, a DSend before any handshake: the rank closes the
#     connection at once; a Hello cut short: the rank closes it at its
#     handshake deadline (10 s)
#   - Hellos claiming rank 0 of the job: with a made-up proof (refused:
#     "authentication failed"), with none ("authentication required"),
#     with a DSend right behind the Hello (closed, no answer); naming
#     another job, a rank out of range, the wrong rank dialled (refused
#     as not a peer of this job); an older or newer incarnation without
#     the pair key (refused as unauthenticated: the proof is checked
#     before the incarnation). After each answer our DSend goes nowhere: the rank sends
#     nothing but its Challenge and HelloReply, and closes
#   - the job then finishes with exactly the output of a failure-free run
#   - a stale incarnation: rank 1 and its node agent are SIGSTOPped past
#     the heartbeat timeout; the dispatcher relaunches rank 1 on a node
#     that joined (incarnation 2); an unproven Hello claiming
#     incarnation 1 is refused; the stopped process, continued, exits (its CM
#     dropped it); the job's output equals the failure-free run's
# Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init direct_links
PEER="python3 $PWD/tests/integration/directpeer.py"
unset MPIV_SECRET_FILE
command -v ss > /dev/null || { echo "skip: ss (iproute2) is missing"; exit 77; }

"$MPIV" secret new "$T/secret" > /dev/null || { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")

cat > "$T/dl.c" <<'EOF'
/* Writes DIR/pid.RANK.INC ("PID JOB"); rank 0 waits for DIR/go while the
   others block in MPI_Recv; then a ring of 3 rounds and a message from
   every rank to every other, received with MPI_ANY_SOURCE. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char *inc = getenv("MPIV_INCARNATION"), *job = getenv("MPIV_JOB");
	int rank, size, tok = 0, sum = 0;
	char p[4096], q[4096];
	FILE *f;

	if (argc != 2)
		return 2;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(p, sizeof(p), "%s/pid.%d.%s.tmp", argv[1], rank, inc ? inc : "1");
	snprintf(q, sizeof(q), "%s/pid.%d.%s", argv[1], rank, inc ? inc : "1");
	if ((f = fopen(p, "w")) != NULL) {
		fprintf(f, "%d %s\n", (int)getpid(), job ? job : "?");
		fclose(f);
		rename(p, q);
	}
	if (rank == 0) {
		snprintf(p, sizeof(p), "%s/go", argv[1]);
		for (int i = 0; i < 600 && access(p, F_OK) != 0; i++)
			usleep(100000);
	}
	for (int round = 0; round < 3; round++) {
		if (rank == 0) {
			tok = tok * 7 + 1;
			MPI_Send(&tok, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
			MPI_Recv(&tok, 1, MPI_INT, size - 1, 5, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&tok, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
			tok = tok * 3 + rank;
			MPI_Send(&tok, 1, MPI_INT, (rank + 1) % size, 5,
			    MPI_COMM_WORLD);
		}
	}
	for (int d = 0; d < size; d++) {
		int v = rank * 100 + tok % 97;

		if (d != rank)
			MPI_Send(&v, 1, MPI_INT, d, 6, MPI_COMM_WORLD);
	}
	for (int i = 0; i < size - 1; i++) {
		int v;

		MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD,
		    MPI_STATUS_IGNORE);
		sum += v;
	}
	printf("rank %d tok %d sum %d\n", rank, tok, sum);
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -O1 -o "$T/dl" "$T/dl.c" || { echo "not ok - mpivcc"; exit 1; }

# ---- the deployment ----
"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 --heartbeat-timeout 2 \
    --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
start_node() {	# start_node NAME: one slot; its pid in PID_NAME
	"$MPIV" node "${S[@]}" --dispatcher "$DA" --slots 1 --name "$1" --user root \
	    --cache-dir "$T/c-$1" 2> "$T/$1.err" &
	PIDS+=($!)
	eval "PID_$1=$!"
}
ST=$T/st.json
status() { "$MPIV" status "${S[@]}" --dispatcher "$DA" --json > "$ST" 2> "$T/st.err"; }
q() { jq -e "$1" "$ST" > /dev/null 2>&1; }
nodes_up() { status && q "[.nodes[] | select(.state == \"alive\")] | length == $1" && q '.services | length >= 1'; }
for n in n1 n2 n3; do
	start_node $n
done
wait_for 20 nodes_up 3 && ok "a dispatcher, a CM and three nodes with a secret" ||
    { notok "the deployment did not come up" "$T/d.err" "$T/cm.err"; exit 1; }

# submit NAME: a direct job of 3 ranks in the background, marks in
# $T/NAME/, output in $T/NAME.{out,err}; its pid in JOB_PID.
submit() {
	mkdir -p "$T/$1"
	timeout 90 "$MPIV" run "${S[@]}" --dispatcher "$DA" --protocol direct \
	    --timeout 80 -n 3 "$T/dl" "$T/$1" > "$T/$1.out" 2> "$T/$1.err" &
	JOB_PID=$!
}
# port_of PID: the TCP port process PID listens on (its peers' port).
port_of() {
	ss -Hltnp 2> /dev/null | grep "pid=$1," | awk '{ print $4 }' | sed 's/.*://' | head -n 1
}
# rank_up NAME RANK [INC]: the rank wrote its pid file (past MPI_Init).
rank_up() { [ -s "$T/$1/pid.$2.${3:-1}" ]; }
# pid_of NAME RANK [INC]: the host pid of that rank of job NAME (ranks
# run in PID namespaces: the pid they see is not the host's), the
# process with its MPIV_RANK and MPIV_INCARNATION that listens.
pid_of() {
	local p env
	for p in $(pgrep -f -- " $T/$1\$"); do
		env=$(tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null) || continue
		grep -qx "MPIV_RANK=$2" <<< "$env" || continue
		grep -qx "MPIV_INCARNATION=${3:-1}" <<< "$env" ||
		    { [ "${3:-1}" = 1 ] && ! grep -q "^MPIV_INCARNATION=" <<< "$env"; } ||
		    continue
		[ -n "$(port_of "$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}
sorted() { sort "$1" | tr '\n' ' '; }

# ---- a failure-free run ----
mkdir -p "$T/ref" && touch "$T/ref/go"
submit ref
wait "$JOB_PID"
rc=$?
if [ "$rc" = 0 ] && [ "$(wc -l < "$T/ref.out")" = 3 ]; then
	ok "failure-free direct job: exit 0, $(sorted "$T/ref.out")"
else
	notok "failure-free direct job: rc $rc" "$T/ref.out" "$T/ref.err"
	exit 1
fi

# ---- hostile peers while the ranks block ----
submit a
wait_for 20 eval 'rank_up a 0 && rank_up a 1 && rank_up a 2' ||
    { notok "the ranks of the job never started" "$T/a.err" "$T/d.err"; exit 1; }
JOB=$(cut -d' ' -f2 "$T/a/pid.1.1")
wait_for 10 eval 'P1=$(pid_of a 1) && P2=$(pid_of a 2)'
A1=127.0.0.1:$(port_of "$P1")
A2=127.0.0.1:$(port_of "$P2")
if [ "$A1" != 127.0.0.1: ] && [ "$A2" != 127.0.0.1: ]; then
	ok "job $JOB: ranks 1 and 2 listen on $A1 and $A2 (ss, by pid)"
else
	ss -Hltnp > "$T/ss.out" 2>&1
	notok "no listening port for ranks 1 ($P1) and 2 ($P2)" "$T/a.err" "$T/ss.out"
	exit 1
fi

# The Hello cut short waits for the rank's deadline: in the background.
$PEER "$A1" truncated > "$T/p-trunc.out" 2>&1 &
TRUNC_PID=$!

# peer NAME WANT ADDR ARGS...: directpeer.py's answer must match WANT
# (an extended regex), its exit status 0 (no data flowed to it).
peer() {
	local name=$1 want=$2 got rc
	shift 2
	got=$(timeout 30 $PEER "$@" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [[ $got =~ $want ]]; then
		ok "$name: $got"
	else
		echo "$got" > "$T/peer.out"
		notok "$name (exit $rc): $got" "$T/peer.out"
	fi
}
peer "garbage" '^closed$' "$A1" garbage
peer "a DSend before any handshake" '^closed$' "$A1" dsend
peer "a DSend before any handshake (rank 2)" '^closed$' "$A2" dsend
peer "a Hello as rank 0 with a made-up proof" \
    '^refused code=0: authentication failed \(wrong secret\?\); closed$' \
    "$A1" hello "$JOB" 0 1 1 random
peer "a Hello as rank 0 without a proof" \
    '^refused code=0: authentication required.*; closed$' "$A1" hello "$JOB" 0 1 1 none
peer "a Hello as rank 1 with a made-up proof (rank 2)" \
    '^refused code=0: authentication failed \(wrong secret\?\); closed$' \
    "$A2" hello "$JOB" 1 1 2 random
peer "a Hello with a DSend right behind it" '^closed$' \
    "$A1" hello "$JOB" 0 1 1 random dsend
peer "a Hello naming another job" \
    '^refused code=1: not a peer of this job for rank 1 \(job "other'"$JOB"'", rank 0, dialling rank 1\); closed$' \
    "$A1" hello "other$JOB" 0 1 1 random
peer "a Hello naming rank 7 of 3" \
    '^refused code=1: not a peer of this job for rank 1 .*rank 7, dialling rank 1\); closed$' \
    "$A1" hello "$JOB" 7 1 1 random
peer "a Hello naming rank -1" '^refused code=1: not a peer of this job' \
    "$A1" hello "$JOB" -1 1 1 random
peer "a Hello as rank 0 dialling rank 2 sent to rank 1" \
    '^refused code=1: not a peer of this job .*dialling rank 2\); closed$' \
    "$A1" hello "$JOB" 0 1 2 random
peer "a Hello claiming the rank itself" '^refused code=1: not a peer of this job' \
    "$A1" hello "$JOB" 1 1 1 random
# Without the pair key a Hello learns nothing about incarnations: the
# proof is checked first (a proven stale one is refused as fenced, with a
# proof the dialler checks: fuzz_dp_read has the keys and covers it).
peer "an unproven Hello as incarnation 0 of rank 0" \
    '^refused code=0: authentication failed \(wrong secret\?\); closed$' \
    "$A1" hello "$JOB" 0 0 1 random
peer "an unproven Hello as incarnation 2 of rank 0, not running yet" \
    '^refused code=0: authentication failed \(wrong secret\?\); closed$' \
    "$A1" hello "$JOB" 0 2 1 random

wait "$TRUNC_PID"
rc=$?
got=$(cat "$T/p-trunc.out")
if [ "$rc" = 0 ] && [[ $got =~ ^closed\ after\ ([0-9]+)\ s$ ]] &&
    [ "${BASH_REMATCH[1]}" -ge 8 ] && [ "${BASH_REMATCH[1]}" -le 15 ]; then
	ok "a Hello cut short: $got (the 10 s handshake deadline)"
else
	notok "a Hello cut short (exit $rc): $got" "$T/p-trunc.out"
fi

kill -0 "$P1" 2> /dev/null && kill -0 "$P2" 2> /dev/null &&
    ok "ranks 1 and 2 still run" || notok "a rank died under the hostile peers" "$T/a.err"
touch "$T/a/go"
wait "$JOB_PID"
rc=$?
if [ "$rc" = 0 ] && [ "$(sorted "$T/a.out")" = "$(sorted "$T/ref.out")" ]; then
	ok "the job finished: exit 0, output identical to the failure-free run"
else
	notok "the job after the hostile peers: rc $rc, output $(sorted "$T/a.out")" "$T/a.err"
fi
if grep -qiE 'fenced|sanitizer|runtime error|impostor' "$T/a.err"; then
	notok "the job's stderr" "$T/a.err"
else
	ok "nothing on the job's stderr about fencing or errors"
fi

# ---- a stale incarnation ----
submit s
wait_for 20 eval 'rank_up s 0 && rank_up s 1 && rank_up s 2' ||
    { notok "the ranks of the stale job never started" "$T/s.err" "$T/d.err"; exit 1; }
JOB=$(cut -d' ' -f2 "$T/s/pid.1.1")
# the node that runs rank 1
status
V=$(jq -r ".jobs[] | select(.job == \"$JOB\") | .ranks[1].node | sub(\"#[0-9]+\$\"; \"\")" "$ST" 2> /dev/null)
eval "VP=\${PID_$V:-}"
wait_for 10 eval 'OLD=$(pid_of s 1) && P2=$(pid_of s 2)'
A2=127.0.0.1:$(port_of "$P2")
if [ -z "$VP" ] || [ "$A2" = 127.0.0.1: ]; then
	notok "stale job $JOB: no node for rank 1 ($V) or no port for rank 2" "$ST"
	exit 1
fi
start_node spare
wait_for 20 nodes_up 4 || notok "the spare node did not register" "$T/d.err"
# A hung machine: the node's two processes and the rank stop.
VPS="$VP $(pgrep -x -P "$VP" mpiv)"
kill -STOP $VPS "$OLD"
wait_for 15 grep -q "node declared dead node=$V#.*no heartbeat" "$T/d.err" &&
    wait_for 20 rank_up s 1 2 &&
    ok "$V (rank 1, pid $OLD) stopped: declared dead, rank 1 relaunched as incarnation 2" ||
    notok "rank 1 was not relaunched" "$T/d.err" "$T/s.err"
peer "an unproven Hello as incarnation 1 of rank 1, now stale (rank 2)" \
    '^refused code=0: authentication failed \(wrong secret\?\); closed$' \
    "$A2" hello "$JOB" 1 1 2 random
kill -CONT "$OLD"
# The CM closed the stale incarnation's connection when incarnation 2
# said Hello (channel-memory/session.c); continued, it finds that first
# and ends itself (tp_lost: SIGKILL, logging is on), before it can act
# on a peer link. gone PID: exited (or a zombie).
gone() {
	local st
	st=$(ps -o stat= -p "$1" 2> /dev/null)
	[ -z "$st" ] || [[ $st == Z* ]]
}
wait_for 10 gone "$OLD" &&
    ok "the stale incarnation, continued, is gone (its CM had dropped it)" ||
    notok "the stale incarnation (pid $OLD) still runs after SIGCONT" "$T/s.err"
touch "$T/s/go"
wait "$JOB_PID"
rc=$?
if [ "$rc" = 0 ] && [ "$(sorted "$T/s.out")" = "$(sorted "$T/ref.out")" ]; then
	ok "the stale job finished: exit 0, output identical to the failure-free run"
else
	notok "the stale job: rc $rc, output $(sorted "$T/s.out")" "$T/s.err" "$T/d.err"
fi
kill -CONT $VPS 2> /dev/null
[ "$fail" = 0 ]
