#!/usr/bin/env bash
# tests/integration/test_rotate.sh: rotating the cluster secret without
# stopping anything (docs/CONTRACTS.md, "Rotating the cluster secret").
# A dispatcher, a CM, a CS and a node agent on loopback, a job running:
#   - mpiv secret rotate, node-key --replace, SIGHUP to every daemon: each
#     logs what it now accepts (the old secret's fingerprint among them)
#   - a rank of the running job is killed (with the new secret) and
#     replayed; the job finishes with the output of a run without kill;
#     its other rank, launched before the rotation, still checkpoints
#     (its image key derives from the old secret)
#   - during the grace period clients and node agents with the old secret
#     (or old node key) work, and so do new ones
#   - a staged next secret is accepted before it is used to dial
#   - once the old secret's deadline passed (2 s, edited in the file),
#     it is refused with "secret retired at TIME", the new one still works
#   - rotate --grace 2s promotes the staged secret; the one it replaced
#     retires 2 s later
#   - a malformed file: a clear error at start; on SIGHUP the daemon logs
#     it, keeps its keys and keeps serving
# Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init rotate
unset MPIV_SECRET_FILE

"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null &&
    cp -p "$T/secret" "$T/old.secret" && cp -p "$T/node.key" "$T/old-node.key" ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")
OLD=(--secret-file "$T/old.secret")
# fp FILE KIND: the fingerprint mpiv secret show gives the KIND key.
fp() { "$MPIV" secret show "$1" | sed -n "s/^$2 *secret=\([0-9a-f]*\).*/\1/p"; }
nfp() { "$MPIV" secret show "$1" | sed -n "s/^$2 *.*node-key=\([0-9a-f]*\).*/\1/p"; }
FP0=$(fp "$T/secret" current)
[ "${#FP0}" -eq 16 ] && ok "secret show: a fingerprint ($FP0)" ||
    notok "secret show: a fingerprint ($FP0)"
grep -q "$FP0" "$T/secret" && notok "a fingerprint is not the secret"

cat > "$T/rot.c" <<'EOF'
/* Marks DIR/up-JOB-RANK-INCARNATION once up; 20 Allreduces, waiting at
   the 10th for DIR/go; rank 0 prints the sum of the sums. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int
main(int argc, char **argv)
{
	char p[4096];
	long acc = 0, sum, mine;
	int rank, size;
	FILE *f;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(p, sizeof(p), "%s/up-%s-%d-%s", argv[1], getenv("MPIV_JOB"),
	    rank, getenv("MPIV_INCARNATION"));
	if ((f = fopen(p, "w")) != NULL)
		fclose(f);
	for (int i = 1; i <= 20; i++) {
		mine = (long)rank * i + 1;
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		acc += sum;
		snprintf(p, sizeof(p), "%s/go", argv[1]);
		for (int w = 0; i == 10 && w < 1200 && access(p, F_OK) != 0; w++)
			usleep(100000);
		if (i > 10)	/* time for checkpoints after the go */
			usleep(100000);
	}
	if (rank == 0)
		printf("rot size=%d acc=%ld\n", size, acc);
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -O1 -o "$T/rot" "$T/rot.c" &&
    "$B/bin/mpivcc" -O1 -o "$T/hi" tests/integration/hi.c ||
    { echo "not ok - mpivcc"; exit 1; }

# ---- the deployment ----
"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
D_PID=$!
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
CM_PID=$!
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --store "$T/store" \
    > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
CS_PID=$!
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 4 \
    --cache-dir "$T/cache" --name alpha > /dev/null 2> "$T/node.err" &
PIDS+=($!)
NODE_PID=$!
listening cm > /dev/null || { notok "cm start" "$T/cm.err"; exit 1; }
listening cs > /dev/null || { notok "cs start" "$T/cs.err"; exit 1; }
# status_has FILE PATTERN: mpiv status with secret FILE matches.
status_has() {
	"$MPIV" status --secret-file "$1" --dispatcher "$DA" 2> /dev/null | grep -q "$2"
}
wait_for 20 status_has "$T/secret" alpha || { notok "node registers" "$T/node.err" "$T/d.err"; exit 1; }

# ---- a job runs across the rotation ----
mkdir -p -m 777 "$T/j"
timeout 180 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 2 --ckpt-interval 0.3 "$T/rot" "$T/j" \
    > "$T/job.out" 2> "$T/job.err" &
JOB_PID=$!
both_up() { [ "$(ls "$T/j" | grep -c '^up-')" -ge 2 ]; }
wait_for 60 both_up || { notok "the job starts" "$T/job.err" "$T/node.err"; exit 1; }
JOB=$(ls "$T/j" | sed -n 's/^up-\([0-9]*\)-0-.*/\1/p' | head -n 1)

# ---- rotate, reload everything ----
if "$MPIV" secret rotate --grace 1h "$T/secret" > "$T/rot.out" 2>&1 &&
    "$MPIV" secret node-key --secret-file "$T/secret" --replace "$T/node.key" \
    >> "$T/rot.out" 2>&1 && [ "$(stat -c %a "$T/secret")" = 600 ] &&
    [ "$(fp "$T/secret" accepted)" = "$FP0" ] && [ "$(fp "$T/secret" current)" != "$FP0" ]; then
	ok "secret rotate: a new current secret, the old one accepted, mode 600"
else
	notok "secret rotate" "$T/rot.out"
fi
FP1=$(fp "$T/secret" current)
NFP1=$(nfp "$T/node.key" current)
# reloaded FILE N: FILE logged N reloads at least.
reloaded() { [ "$(grep -c 'reloaded secret file' "$1")" -ge "$2" ]; }
# hup N: SIGHUP to every daemon, then each has reloaded N times.
hup() {
	kill -HUP "$D_PID" "$CM_PID" "$CS_PID" "$NODE_PID" &&
	    wait_for 10 reloaded "$T/d.err" "$1" && wait_for 10 reloaded "$T/cm.err" "$1" &&
	    wait_for 10 reloaded "$T/cs.err" "$1" && wait_for 10 reloaded "$T/node.err" "$1"
}
if hup 1 && grep -q "dispatcher reloaded secret file.*current=$FP1 accepted=$FP0,until=" "$T/d.err" &&
    grep -q "cm reloaded secret file.*current=$FP1 accepted=$FP0" "$T/cm.err" &&
    grep -q "cs reloaded secret file.*current=$FP1 accepted=$FP0" "$T/cs.err" &&
    grep -q "node reloaded secret file.*node-key current=$NFP1 accepted=" "$T/node.err"; then
	ok "SIGHUP: every daemon reloads and logs what it accepts"
else
	notok "SIGHUP: every daemon reloads" "$T/d.err" "$T/cm.err" "$T/cs.err" "$T/node.err"
fi

# A rank of the running job killed with the new secret: relaunched by
# the reloaded node, replayed.
if "$MPIV" kill "${S[@]}" --dispatcher "$DA" "$JOB" 1 > /dev/null 2> "$T/kill.err"; then
	ok "kill with the new secret"
else
	notok "kill with the new secret" "$T/kill.err"
fi
relaunched() { [ "$(ls "$T/j" | grep -c "^up-$JOB-1-")" -ge 2 ]; }
wait_for 60 relaunched && ok "the killed rank comes back" ||
    notok "the killed rank comes back" "$T/d.err" "$T/node.err"
touch "$T/j/go"
if wait "$JOB_PID" && [ "$(cat "$T/job.out")" = "rot size=2 acc=250" ]; then
	ok "the job running across the rotation and the kill: right output"
else
	notok "the job running across the rotation: output '$(cat "$T/job.out")'" "$T/job.err"
fi
# Rank 0 was launched before the rotation: its image key derives from
# the old secret, which the reloaded CS still accepts.
rl=$(grep -n 'cs reloaded secret file' "$T/cs.err" | head -n 1 | cut -d: -f1)
if ! grep -q 'node registered.*criu=1' "$T/d.err"; then
	ok "# skip checkpoints across the rotation: no CRIU here"
elif tail -n +"${rl:-1}" "$T/cs.err" |
    grep -q "cs image durable job=$JOB rank=0 ckpt=[0-9]* incarnation=1 " &&
    ! grep -q 'auth refused.*role=2' "$T/cs.err"; then
	ok "a rank launched before the rotation checkpoints after the CS reloaded"
else
	notok "checkpoints across the rotation" "$T/cs.err"
fi

# ---- grace period: old and new keys both work ----
runs() {	# runs NAME SECRETFILE: a 2-rank job with it gives the right output
	if timeout 60 "$MPIV" run --secret-file "$2" --dispatcher "$DA" -n 2 "$T/hi" \
	    > "$T/$1.out" 2> "$T/$1.err" && grep -q 'hi size=2 sum=2' "$T/$1.out"; then
		ok "$1"
	else
		notok "$1" "$T/$1.err"
	fi
}
runs "grace: a client with the old secret runs a job" "$T/old.secret"
runs "grace: a client with the new secret runs a job" "$T/secret"
"$MPIV" node --secret-file "$T/old-node.key" --dispatcher "$DA" --slots 1 \
    --cache-dir "$T/cache-b" --name beta > /dev/null 2> "$T/nodeb.err" &
PIDS+=($!)
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 1 \
    --cache-dir "$T/cache-c" --name gamma > /dev/null 2> "$T/nodec.err" &
PIDS+=($!)
wait_for 20 status_has "$T/secret" beta && ok "grace: a node agent with the old node key registers" ||
    notok "grace: a node agent with the old node key registers" "$T/nodeb.err"
wait_for 20 status_has "$T/secret" gamma && ok "grace: a node agent with the new node key registers" ||
    notok "grace: a node agent with the new node key registers" "$T/nodec.err"

# ---- a staged next secret: accepted before anyone dials with it ----
"$MPIV" secret rotate --stage "$T/secret" > /dev/null 2>&1 && hup 2 ||
    notok "stage and reload" "$T/d.err"
printf '%s\n' "$(sed -n 's/^next //p' "$T/secret")" > "$T/next.secret"
chmod 600 "$T/next.secret"
FPN=$(fp "$T/secret" next)
if grep -q "dispatcher reloaded.*current=$FP1 .*next=$FPN" "$T/d.err" &&
    status_has "$T/next.secret" alpha; then
	ok "a staged secret is accepted"
else
	notok "a staged secret is accepted" "$T/d.err"
fi

# ---- the deadline passes ----
# The old secret's deadline, edited by hand: 2 s from now, epoch seconds.
DL=$(($(date +%s) + 2))
S0=$(cat "$T/old.secret")
sed -i "s/^accept-until [^ ]* $S0\$/accept-until $DL $S0/" "$T/secret"
chmod 600 "$T/secret"
grep -q "^accept-until $DL $S0\$" "$T/secret" || notok "edit the deadline"
hup 3 || notok "reload after the edit" "$T/d.err"
DLT=$(date -u -d "@$DL" +%Y-%m-%dT%H:%M:%SZ)
old_refused() {
	! timeout 10 "$MPIV" status "${OLD[@]}" --dispatcher "$DA" > /dev/null 2> "$T/st.err"
}
if wait_for 30 old_refused &&
    grep -qx "mpiv status: dispatcher $DA refused us: authentication failed: secret retired at $DLT" "$T/st.err"; then
	ok "after the deadline the old secret is refused: secret retired at $DLT"
else
	notok "after the deadline the old secret is refused" "$T/st.err"
fi
timeout 60 "$MPIV" run "${OLD[@]}" --dispatcher "$DA" -n 1 "$T/hi" > /dev/null 2> "$T/r.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "secret retired at $DLT" "$T/r.err" &&
    ok "run with the retired secret: exit 1, retired" ||
    notok "run with the retired secret (exit $rc)" "$T/r.err"
timeout 20 "$MPIV" node --secret-file "$T/old-node.key" --dispatcher "$DA" \
    --slots 1 --cache-dir "$T/cache-d" --name delta > /dev/null 2> "$T/noded.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "node key retired at $DLT" "$T/noded.err" &&
    ok "a node agent with the retired node key is refused" ||
    notok "a node agent with the retired node key (exit $rc)" "$T/noded.err"
grep -q 'auth refused.*name="delta".*node key retired at' "$T/d.err" &&
    ok "the dispatcher logs the retired node key" ||
    notok "the dispatcher logs the retired node key" "$T/d.err"
runs "after the deadline the new secret runs a job" "$T/secret"

# ---- rotate --grace 2s: the staged secret becomes current ----
printf '%s\n' "$(sed -n 's/^current //p' "$T/secret")" > "$T/s1.secret"
chmod 600 "$T/s1.secret"
"$MPIV" secret rotate --grace 2s "$T/secret" > "$T/rot2.out" 2>&1 &&
    [ "$(fp "$T/secret" current)" = "$FPN" ] && hup 4 ||
    notok "rotate --grace 2s and reload" "$T/rot2.out" "$T/d.err"
s1_refused() {
	! timeout 10 "$MPIV" status --secret-file "$T/s1.secret" --dispatcher "$DA" \
	    > /dev/null 2> "$T/st1.err"
}
if wait_for 30 s1_refused && grep -q "refused us: authentication failed: secret retired at" "$T/st1.err" &&
    status_has "$T/next.secret" alpha && status_has "$T/secret" alpha; then
	ok "rotate --grace 2s: the previous secret retires, the promoted one works"
else
	notok "rotate --grace 2s" "$T/st1.err" "$T/rot2.out"
fi

# ---- malformed files ----
cp -p "$T/secret" "$T/good.secret"
printf 'mpiv-secrets v1\ncurrent tooshort\n' > "$T/bad.secret"
printf 'mpiv-secrets v2\ncurrent 0123456789abcdef0123\n' > "$T/v2.secret"
chmod 600 "$T/bad.secret" "$T/v2.secret"
timeout 10 "$MPIV" dispatcher --secret-file "$T/bad.secret" --listen 127.0.0.1:0 \
    > /dev/null 2> "$T/bad.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "bad.secret line 2: a secret has 16 to 4000 bytes" "$T/bad.err" &&
    ok "a malformed file: a clear error at start" ||
    notok "a malformed file at start (exit $rc)" "$T/bad.err"
timeout 10 "$MPIV" cm --secret-file "$T/v2.secret" --listen 127.0.0.1:0 \
    --dispatcher "$DA" > /dev/null 2> "$T/v2.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "has format version 2; this mpiv reads version 1" "$T/v2.err" &&
    ok "a file of a later format version: a clear error" ||
    notok "a file of a later format version (exit $rc)" "$T/v2.err"
cp "$T/bad.secret" "$T/secret"
kill -HUP "$D_PID" "$CM_PID"
if wait_for 10 grep -q "dispatcher reload failed, keeping the previous keys: secret file $T/secret line 2" "$T/d.err" &&
    wait_for 10 grep -q "cm reload failed, keeping the previous keys" "$T/cm.err" &&
    kill -0 "$D_PID" && kill -0 "$CM_PID"; then
	ok "SIGHUP with a malformed file: logged, the daemon lives on"
else
	notok "SIGHUP with a malformed file" "$T/d.err" "$T/cm.err"
fi
runs "the previous keys still serve after a failed reload" "$T/good.secret"
cp -p "$T/good.secret" "$T/secret"
exit $fail
