#!/usr/bin/env bash
# tests/integration/test_auth.sh: authentication of every connection
# (docs/CONTRACTS.md, "Authentication"). A dispatcher, a CM and a CS
# with a cluster secret and a node agent with the node key derived from
# it, started by hand on loopback:
#   - a job runs with the right secret
#   - `mpiv run --dispatcher` with a wrong secret, with none, with a node
#     key: refused with one clear line, exit 1; `mpiv status` / `kill`
#     likewise
#   - a node agent with a wrong key is refused and exits; it never
#     registers, so it never gets a rank
#   - raw connections (tests/integration/authpeer.py) sending garbage or
#     a Hello with a made-up proof to the dispatcher, the CM and the CS
#     are closed, and the daemons keep serving
#   - a forged rank: with the credential of incarnation 1 of rank 0 of
#     job A it claims rank 1 of A, rank 0 of job B, or incarnation 0 or 2
#     of rank 0: the CM refuses each (test_cred.sh shows a proof made with
#     the right credential passing authentication)
#   - a daemon that has no secret is refused by clients that have one
# Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init auth
PEER="python3 $PWD/tests/integration/authpeer.py"
unset MPIV_SECRET_FILE

# listening FILE: the address a daemon printed on stdout.
listening() { sed -n 's/^listening on //p' "$1"; }

"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret new "$T/wrong" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/wrong" "$T/wrong-node.key" > /dev/null ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")

cat > "$T/tok.c" <<'EOF'
/* Writes its MPIV_RANK_KEY to DIR/key-JOB-RANK, then waits for DIR/go. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int
main(int argc, char **argv)
{
	const char *k = getenv("MPIV_RANK_KEY"), *r = getenv("MPIV_RANK");
	const char *j = getenv("MPIV_JOB");
	char p[4096];
	FILE *f;
	int rank;

	snprintf(p, sizeof(p), "%s/key-%s-%s.tmp", argv[1], j, r);
	if ((f = fopen(p, "w")) != NULL) {
		fprintf(f, "%s\n", k != NULL ? k : "none");
		fclose(f);
		char q[4096];
		snprintf(q, sizeof(q), "%s/key-%s-%s", argv[1], j, r);
		rename(p, q);
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(p, sizeof(p), "%s/go", argv[1]);
	for (int i = 0; i < 600 && access(p, F_OK) != 0; i++)
		usleep(100000);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("tok done\n");
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -O1 -o "$T/tok" "$T/tok.c" || { echo "not ok - mpivcc"; exit 1; }
"$B/bin/mpivcc" -O1 -o "$T/hi" tests/integration/hi.c || { echo "not ok - mpivcc"; exit 1; }

# ---- the deployment ----
"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
wait_for 10 grep -q '^listening on ' "$T/d.out" || { notok "dispatcher start" "$T/d.err"; exit 1; }
DA=$(listening "$T/d.out")
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
CM_PID=$!
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --store "$T/store" \
    > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
CS_PID=$!
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 4 \
    --cache-dir "$T/cache" --name good > /dev/null 2> "$T/node.err" &
PIDS+=($!)
NODE_PID=$!
wait_for 10 grep -q '^listening on ' "$T/cm.out" || { notok "cm start" "$T/cm.err"; exit 1; }
wait_for 10 grep -q '^listening on ' "$T/cs.out" || { notok "cs start" "$T/cs.err"; exit 1; }
CMA=$(listening "$T/cm.out")
CSA=$(listening "$T/cs.out")
status_has() {	# status_has PATTERN: mpiv status (with the secret) matches
	"$MPIV" status "${S[@]}" --dispatcher "$DA" 2> /dev/null | grep -q "$1"
}
wait_for 10 status_has good || { notok "node registers with the node key" "$T/node.err" "$T/d.err"; exit 1; }
if grep -q "not authenticated" "$T/d.err" "$T/cm.err" "$T/cs.err" "$T/node.err"; then
	notok "no 'not authenticated' warning with a secret"
else
	ok "daemons started with a secret (node with the node key)"
fi

# ---- jobs and clients ----
if timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 3 "$T/hi" \
    > "$T/run.out" 2> "$T/run.err" && grep -q 'hi size=3 sum=3' "$T/run.out"; then
	ok "a job runs with the right secret"
else
	notok "a job runs with the right secret" "$T/run.out" "$T/run.err"
fi

# refused CASE WANT_PATTERN CMD...: exit 1, exactly one stderr line matching.
refused() {
	local name=$1 pat=$2 rc n
	shift 2
	timeout 30 "$@" > "$T/r.out" 2> "$T/r.err" < /dev/null
	rc=$?
	n=$(wc -l < "$T/r.err")
	if [ "$rc" -eq 1 ] && [ "$n" -eq 1 ] && grep -Eq "$pat" "$T/r.err"; then
		ok "$name"
	else
		notok "$name (exit $rc, $n lines)" "$T/r.err"
	fi
}
DAQ=${DA//./\\.}
refused "run with a wrong secret: refused" \
    "^mpiv: dispatcher $DAQ refused us: authentication failed \(wrong secret\?\)\$" \
    "$MPIV" run --secret-file "$T/wrong" --dispatcher "$DA" -n 1 "$T/hi"
refused "run without a secret: refused" \
    "^mpiv: dispatcher $DAQ refused us: authentication required" \
    "$MPIV" run --dispatcher "$DA" -n 1 "$T/hi"
refused "run with MPIV_SECRET_FILE pointing to a wrong secret: refused" \
    "refused us: authentication failed" \
    env MPIV_SECRET_FILE="$T/wrong" "$MPIV" run --dispatcher "$DA" -n 1 "$T/hi"
refused "run with the node key: refused before dialling" \
    "holds a node key" \
    "$MPIV" run --secret-file "$T/node.key" --dispatcher "$DA" -n 1 "$T/hi"
chmod 644 "$T/wrong"
refused "a group-readable secret file is refused" \
    "accessible by group or others" \
    "$MPIV" run --secret-file "$T/wrong" --dispatcher "$DA" -n 1 "$T/hi"
chmod 600 "$T/wrong"
refused "status with a wrong secret: refused" "refused us: authentication failed" \
    "$MPIV" status --secret-file "$T/wrong" --dispatcher "$DA"
refused "kill without a secret: refused" "refused us: authentication required" \
    "$MPIV" kill --dispatcher "$DA" 1 0
if MPIV_SECRET_FILE=$T/secret timeout 10 "$MPIV" status --dispatcher "$DA" \
    > "$T/st.out" 2> "$T/st.err" && grep -q good "$T/st.out"; then
	ok "status with MPIV_SECRET_FILE"
else
	notok "status with MPIV_SECRET_FILE" "$T/st.err"
fi

# ---- a node with the wrong key ----
timeout 20 "$MPIV" node --secret-file "$T/wrong-node.key" --dispatcher "$DA" \
    --slots 4 --name intruder > /dev/null 2> "$T/bad.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "refused us: authentication failed" "$T/bad.err" &&
    ! status_has intruder; then
	ok "a node with a wrong key is refused and exits 1"
else
	notok "a node with a wrong key is refused (exit $rc)" "$T/bad.err"
fi
timeout 20 "$MPIV" node --secret-file "$T/wrong" --dispatcher "$DA" \
    --slots 4 --name intruder2 > /dev/null 2> "$T/bad2.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "refused us: authentication failed" "$T/bad2.err"; then
	ok "a node with another cluster's secret is refused"
else
	notok "a node with another cluster's secret is refused (exit $rc)" "$T/bad2.err"
fi
if grep -q 'auth refused.*name="intruder"' "$T/d.err"; then
	ok "the dispatcher logs the refused node"
else
	notok "the dispatcher logs the refused node" "$T/d.err"
fi

# ---- raw hostile peers ----
for target in "dispatcher $DA" "cm $CMA" "cs $CSA"; do
	set -- $target
	who=$1 addr=$2
	r=$(timeout 15 $PEER "$addr" garbage 2>&1)
	[ "$r" = closed ] && ok "$who: garbage closes the connection" ||
	    notok "$who: garbage closes the connection ($r)"
	r=$(timeout 15 $PEER "$addr" hello client "" -1 0 random 2>&1)
	[ "$r" = "refused: authentication failed (wrong secret?)" ] &&
	    ok "$who: a made-up proof is refused" ||
	    notok "$who: a made-up proof is refused ($r)"
	r=$(timeout 15 $PEER "$addr" hello node "" -1 0 none 2>&1)
	case $r in
	"refused: authentication required"*) ok "$who: a Hello without proof is refused" ;;
	*) notok "$who: a Hello without proof is refused ($r)" ;;
	esac
	r=$(timeout 15 $PEER "$addr" challenge 2>&1)
	[ "$r" = "auth=1" ] && ok "$who: still serving, challenges with auth" ||
	    notok "$who: still serving ($r)"
done
# Positive control of the forger: the real secret passes (the dispatcher
# then answers a real client HelloReply with its proof, checked).
r=$(timeout 15 $PEER "$DA" hello client "" -1 0 "$(od -An -tx1 -v < <(tr -d '\n' < "$T/secret") | tr -d ' \n')" 2>&1)
[ "$r" = ok ] && ok "authpeer with the right secret is accepted, server proof checks" ||
    notok "authpeer with the right secret ($r)"
if kill -0 "$CM_PID" && kill -0 "$CS_PID" && kill -0 "$NODE_PID"; then
	ok "daemons alive after the hostile peers"
else
	notok "daemons alive after the hostile peers" "$T/cm.err" "$T/cs.err"
fi

# ---- forged ranks: the job token scopes a rank to its job and rank ----
# The ranks (user nobody under a root node agent) write their keys here.
mkdir -p -m 777 "$T/keys"
timeout 90 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 2 "$T/tok" "$T/keys" \
    > "$T/ja.out" 2> "$T/ja.err" &
JA=$!
timeout 90 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 2 "$T/tok" "$T/keys" \
    > "$T/jb.out" 2> "$T/jb.err" &
JB=$!
four_keys() { [ "$(ls "$T/keys" | grep -c '^key-[0-9]*-[01]$')" -eq 4 ]; }
if wait_for 30 four_keys; then
	jobs_=$(ls "$T/keys" | sed -n 's/^key-\([0-9]*\)-0$/\1/p' | sort -n)
	A=$(echo "$jobs_" | head -n 1)
	Bj=$(echo "$jobs_" | tail -n 1)
	KA0=$(cat "$T/keys/key-$A-0")
	KA1=$(cat "$T/keys/key-$A-1")
	KB0=$(cat "$T/keys/key-$Bj-0")
	if [ "${#KA0}" -eq 64 ] && [ "$KA0" != "$KA1" ] && [ "$KA0" != "$KB0" ]; then
		ok "each rank gets its own MPIV_RANK_KEY"
	else
		notok "each rank gets its own MPIV_RANK_KEY ($KA0 $KA1 $KB0)"
	fi
	r=$(timeout 15 $PEER "$CMA" hello rank "$A" 1 5 "$KA0" 2>&1)
	[ "$r" = "refused: authentication failed (wrong secret?)" ] &&
	    ok "cm: rank 0's key claiming rank 1 of its job is refused" ||
	    notok "cm: rank 0's key claiming rank 1 ($r)"
	r=$(timeout 15 $PEER "$CMA" hello rank "$Bj" 0 5 "$KA0" 2>&1)
	[ "$r" = "refused: authentication failed (wrong secret?)" ] &&
	    ok "cm: job $A's rank key claiming job $Bj is refused" ||
	    notok "cm: another job's rank key ($r)"
	r=$(timeout 15 $PEER "$CMA" hello rank 999 0 5 "$KA0" 2>&1)
	[ "$r" = "refused: unknown job" ] && ok "cm: unknown job refused" ||
	    notok "cm: unknown job refused ($r)"
	r=$(timeout 15 $PEER "$CMA" hello rank "$A" 0 0 random 2>&1)
	[ "$r" = "refused: authentication failed (wrong secret?)" ] &&
	    ok "cm: a made-up rank proof is refused" ||
	    notok "cm: a made-up rank proof ($r)"
	# A credential is bound to its incarnation (1 here): claiming the
	# next one, or an older one, with it fails authentication (the
	# positive control, a stale but proven credential refused as
	# fenced, is in test_cred.sh).
	r=$(timeout 15 $PEER "$CMA" hello rank "$A" 0 2 "$KA0" 2>&1)
	[ "$r" = "refused: authentication failed (wrong secret?)" ] &&
	    ok "cm: rank 0's credential claiming incarnation 2 is refused" ||
	    notok "cm: rank 0's credential claiming incarnation 2 ($r)"
	r=$(timeout 15 $PEER "$CMA" hello rank "$A" 0 0 "$KA0" 2>&1)
	[ "$r" = "refused: authentication failed (wrong secret?)" ] &&
	    ok "cm: rank 0's credential claiming incarnation 0 is refused" ||
	    notok "cm: rank 0's credential claiming incarnation 0 ($r)"
else
	notok "two token jobs start" "$T/ja.err" "$T/jb.err"
fi
touch "$T/keys/go"
if wait "$JA" && wait "$JB" && grep -q 'tok done' "$T/ja.out" &&
    grep -q 'tok done' "$T/jb.out"; then
	ok "the jobs the forgers aimed at finish unharmed"
else
	notok "the jobs the forgers aimed at finish unharmed" "$T/ja.err" "$T/jb.err"
fi

# ---- a server without a secret, clients with one ----
"$MPIV" dispatcher --listen 127.0.0.1:0 > "$T/d2.out" 2> "$T/d2.err" &
PIDS+=($!)
wait_for 10 grep -q '^listening on ' "$T/d2.out" || notok "open dispatcher start" "$T/d2.err"
DA2=$(listening "$T/d2.out")
if grep -q 'no --secret-file: connections are not authenticated' "$T/d2.err"; then
	ok "a daemon without a secret warns once"
else
	notok "a daemon without a secret warns once" "$T/d2.err"
fi
refused "run with a secret at a dispatcher without one: refused" \
    "^mpiv: dispatcher ${DA2//./\\.}: authentication: the server runs without a secret" \
    "$MPIV" run "${S[@]}" --dispatcher "$DA2" -n 1 "$T/hi"
refused "status with a secret at a dispatcher without one: refused" \
    "runs without a secret" \
    "$MPIV" status "${S[@]}" --dispatcher "$DA2"

# ---- the last word: still serving ----
if timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 2 "$T/hi" \
    > "$T/run2.out" 2> "$T/run2.err" && grep -q 'hi size=2 sum=2' "$T/run2.out"; then
	ok "a job still runs after all that"
else
	notok "a job still runs after all that" "$T/run2.err" "$T/d.err" "$T/cm.err"
fi
exit $fail
