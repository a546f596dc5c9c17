#!/usr/bin/env bash
# tests/integration/test_cred.sh: per-incarnation credentials and images
# bound to their incarnation (docs/CONTRACTS.md, "Authentication"). A
# dispatcher, a CM, a CS (cluster secret) and a node agent (node key)
# started by hand on loopback; in each protocol a 2-rank job checkpoints
# every 0.3 s, writes the credential each incarnation was started with,
# and rank 1 is killed once it has a durable checkpoint. With the
# credential of incarnation 1 (what a node that ran it saw), after
# incarnation 2 runs:
#   - the CM refuses it as incarnation 1 (proven, stale: ERR_FENCED)
#     and as incarnation 2 or 3 (authentication failed)
#   - with CRIU: incarnation 2 was restored from the image and works
#     with its new credential; neither the old credential nor its hex
#     is anywhere in its memory (the hex is not even in incarnation 1's:
#     wiped at MPI_Init; its raw bytes are, the scanner's control)
#   - the CS: a stale incarnation's image key is refused at Hello; the
#     current one's may download; another rank's key, a wrong job id,
#     an unknown rank, a node key alone, an upload naming another rank
#     or incarnation are refused, each with its own clear reason
#   - the job's output equals the failure-free one.
# Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init cred
PEER="python3 $PWD/tests/integration/authpeer.py"
unset MPIV_SECRET_FILE
CRIU_OK=0
/opt/mpiv/criu/criu check > /dev/null 2>&1 && CRIU_OK=1
# A sanitizer's runtime keeps its own copy of the initial environment
# (it reads /proc/self/environ at start): there the hex is not ours to
# wipe, and only the raw key is looked for.
SAN=0
ldd "$B/lib/libmpi.so" 2> /dev/null | grep -q 'lib[at]san' && SAN=1
# unhex SCAN: the scan without "hex" under a sanitizer
unhex() { if [ "$SAN" = 1 ]; then echo "$1" | sed 's/hex *//; s/^ *$/none/'; else echo "$1"; fi; }

"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")
NODEKEY=$(sed -n 's/^mpiv-node-key-v1 //p' "$T/node.key")

cat > "$T/cred.c" <<'EOF'
/* Writes its MPIV_RANK_KEY to DIR/key-JOB-RANK-INC, then allreduces
   until rank 0 sees DIR/go (only rank 0 looks: a re-executed rank 1
   decides nothing by itself). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int
main(int argc, char **argv)
{
	const char *k = getenv("MPIV_RANK_KEY"), *r = getenv("MPIV_RANK");
	const char *j = getenv("MPIV_JOB"), *inc = getenv("MPIV_INCARNATION");
	char p[4096], q[4096];
	int rank, size, stop, all;
	FILE *f;

	snprintf(p, sizeof(p), "%s/key-%s-%s-%s.tmp", argv[1], j, r, inc);
	snprintf(q, sizeof(q), "%s/key-%s-%s-%s", argv[1], j, r, inc);
	if ((f = fopen(p, "w")) != NULL) {
		fprintf(f, "%s\n", k != NULL ? k : "none");
		fclose(f);
		rename(p, q);
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(p, sizeof(p), "%s/go", argv[1]);
	for (int it = 0; it < 20000; it++) {
		stop = rank == 0 && access(p, F_OK) == 0;
		MPI_Allreduce(&stop, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		if (all)
			break;
		usleep(20000);
	}
	if (rank == 0)
		printf("cred done size=%d\n", size);
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -O1 -o "$T/cred" "$T/cred.c" || { echo "not ok - mpivcc"; exit 1; }

# scan PID HEX: which of the key's raw bytes ("raw") and its hex ("hex")
# are in the process's memory (root reads /proc/PID/mem): "none", or
# "unreadable" when no byte of it could be read.
scan() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
pid, hexkey = sys.argv[1], sys.argv[2]
raw, hx = bytes.fromhex(hexkey), hexkey.encode()
found, total = set(), 0
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
        if m is None or m.group(3)[0] != "r" or "[vvar" in line or "[vsyscall" in line:
            continue
        a, b = int(m.group(1), 16), int(m.group(2), 16)
        if b - a > 1 << 30:
            continue    # a sanitizer's reserved shadow, not the rank's data
        tail = b""
        while a < b:
            n = min(b - a, 1 << 22)
            try:
                mem.seek(a)
                buf = tail + mem.read(n)
            except OSError:
                break
            total += n
            if raw in buf:
                found.add("raw")
            if hx in buf:
                found.add("hex")
            tail, a = buf[-len(hx):], a + n
print(" ".join(sorted(found)) or ("none" if total > 0 else "unreadable"))
EOF
}
# rank_pids RANK: pids of this test's program that are rank RANK.
rank_pids() {
	local p
	for p in $(pgrep -f "^$T/cred " 2> /dev/null); do
		{ tr '\0' '\n' < "/proc/$p/environ"; } 2> /dev/null |
		    grep -qx "MPIV_RANK=$1" && echo "$p"
	done
}

# ---- the deployment ----
"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --store "$T/store" \
    > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
NODE_ENV=()
[ "$CRIU_OK" = 1 ] && NODE_ENV=(env MPIV_CRIU=/opt/mpiv/criu/criu)
"${NODE_ENV[@]}" "$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" \
    --slots 4 --cache-dir "$T/cache" --name n1 > /dev/null 2> "$T/node.err" &
PIDS+=($!)
CMA=$(listening cm) || { notok "cm start" "$T/cm.err"; exit 1; }
CSA=$(listening cs) || { notok "cs start" "$T/cs.err"; exit 1; }
status_has() {
	"$MPIV" status "${S[@]}" --dispatcher "$DA" 2> /dev/null | grep -q "$1"
}
wait_for 10 status_has n1 || { notok "node registers" "$T/node.err" "$T/d.err"; exit 1; }
mkdir -p -m 777 "$T/keys"

for proto in relay direct; do
	D=$T/keys/$proto
	mkdir -p -m 777 "$D"
	timeout 150 "$MPIV" run "${S[@]}" --dispatcher "$DA" --protocol "$proto" \
	    --ckpt-interval 0.3 -n 2 "$T/cred" "$D" > "$T/$proto.out" 2> "$T/$proto.err" &
	RUN=$!
	two_keys() { [ "$(ls "$D" | grep -c '^key-[0-9]*-[01]-1$')" -eq 2 ]; }
	if ! wait_for 30 two_keys; then
		notok "$proto: the job starts" "$T/$proto.err" "$T/d.err"
		touch "$D/go"
		wait "$RUN"
		continue
	fi
	J=$(ls "$D" | sed -n 's/^key-\([0-9]*\)-1-1$/\1/p')
	K1=$(cat "$D/key-$J-1-1")
	K0=$(cat "$D/key-$J-0-1")
	[ "${#K1}" -eq 64 ] && [ "$K1" != "$K0" ] &&
	    ok "$proto: each rank gets its own credential" ||
	    notok "$proto: each rank gets its own credential ($K0 $K1)"
	if [ "$CRIU_OK" = 1 ]; then
		wait_for 30 test -s "$T/store/$J/1/current" ||
		    notok "$proto: rank 1 has no durable checkpoint" "$T/cs.err" "$T/node.err"
		P1=$(rank_pids 1 | head -n 1)
		r=$([ -n "$P1" ] && unhex "$(scan "$P1" "$K1")")
		[ "$r" = raw ] &&
		    ok "$proto: incarnation 1 holds its credential, not its hex (env wiped)" ||
		    notok "$proto: incarnation 1 (pid $P1) memory scan: $r"
	fi
	"$MPIV" kill "${S[@]}" --dispatcher "$DA" "$J" 1 > /dev/null 2> "$T/kill.err" ||
	    notok "$proto: mpiv kill" "$T/kill.err"
	wait_for 40 grep -q "cm rank connected job=$J rank=1 incarnation=2" "$T/cm.err" ||
	    { notok "$proto: rank 1 came back as incarnation 2" "$T/cm.err" "$T/d.err"; }

	r=$(AUTHPEER_CODE=1 timeout 15 $PEER "$CMA" hello rank "$J" 1 1 "$K1" 2>&1)
	[ "$r" = "refused code=2: stale incarnation 1 of rank 1 (current is 2)" ] &&
	    ok "$proto: cm: incarnation 1's credential as incarnation 1: fenced (ERR_FENCED)" ||
	    notok "$proto: cm: incarnation 1's credential as incarnation 1 ($r)"
	for inc in 2 3; do
		r=$(AUTHPEER_CODE=1 timeout 15 $PEER "$CMA" hello rank "$J" 1 "$inc" "$K1" 2>&1)
		[ "$r" = "refused code=0: authentication failed (wrong secret?)" ] &&
		    ok "$proto: cm: incarnation 1's credential as incarnation $inc: refused" ||
		    notok "$proto: cm: incarnation 1's credential as incarnation $inc ($r)"
	done

	if [ "$CRIU_OK" = 1 ]; then
		RK=$(sed -n "s/.*dispatcher relaunching job=$J rank=1 .*restore_ckpt=\([1-9][0-9]*\).*/\1/p" "$T/d.err" | tail -n 1)
		if [ -n "$RK" ]; then
			ok "$proto: incarnation 2 of rank 1 restored from checkpoint $RK"
			newer() { [ "$(cat "$T/store/$J/1/current" 2> /dev/null || echo 0)" -gt "$RK" ]; }
			wait_for 30 newer &&
			    ok "$proto: the restored rank's node uploads new checkpoints (incarnation 2's image key)" ||
			    notok "$proto: no checkpoint of rank 1 after its restore" "$T/node.err" "$T/cs.err"
			P2=$(rank_pids 1 | head -n 1)
			r=$([ -n "$P2" ] && unhex "$(scan "$P2" "$K1")")
			[ "$r" = none ] &&
			    ok "$proto: the restored rank holds no trace of the old credential" ||
			    notok "$proto: restored rank 1 (pid $P2) memory scan: $r"
		else
			notok "$proto: rank 1 was not restored from a checkpoint" "$T/d.err"
		fi
	fi

	if [ "$proto" = relay ]; then
		# ---- the checkpoint server ----
		cs_case() {	# cs_case NAME WANT ARGS...
			local name=$1 want=$2 r
			shift 2
			r=$(AUTHPEER_CODE=1 timeout 15 $PEER "$CSA" hello node "$@" 2>&1)
			[[ $r == $want ]] && ok "cs: $name" || notok "cs: $name ($r)"
		}
		cs_case "incarnation 1's image key is stale" \
		    "refused code=0: stale incarnation 1 of job $J rank 1 (current is 2)" \
		    "$J" 1 1 "image:$T/secret" get "$J" 1
		if [ "$CRIU_OK" = 1 ]; then
			cs_case "incarnation 2's image key downloads rank 1's image" \
			    found "$J" 1 2 "image:$T/secret" get "$J" 1
		else
			cs_case "incarnation 2's image key may download" \
			    "not found: no checkpoint of job $J rank 1" \
			    "$J" 1 2 "image:$T/secret" get "$J" 1
		fi
		cs_case "rank 0's image key cannot download rank 1's" \
		    "not found: not allowed: this connection is for job $J rank 0, not job $J rank 1" \
		    "$J" 0 1 "image:$T/secret" get "$J" 1
		cs_case "a wrong job id is refused" \
		    "not found: not allowed: this connection is for job $J rank 1, not job 9$J rank 1" \
		    "$J" 1 2 "image:$T/secret" get "9$J" 1
		cs_case "an unknown rank is refused" \
		    "not found: not allowed: this connection is for job $J rank 1, not job $J rank 7" \
		    "$J" 1 2 "image:$T/secret" get "$J" 7
		cs_case "the node key alone downloads nothing" \
		    "not found: not allowed: this connection proved no incarnation of job $J rank 1 *" \
		    "" -1 0 "$NODEKEY" get "$J" 1
		cs_case "rank 0's image key cannot upload rank 1's image" \
		    "ack refused: not allowed: this connection is for job $J rank 0, not job $J rank 1" \
		    "$J" 0 1 "image:$T/secret" put "$J" 1 2
		cs_case "an upload naming another incarnation is refused" \
		    "ack refused: not allowed: this connection is for incarnation 1, the image says it was taken by 2" \
		    "$J" 0 1 "image:$T/secret" put "$J" 0 2
		cs_case "a made-up proof for rank 1 is refused" \
		    "refused code=0: authentication failed (wrong secret?)" \
		    "$J" 1 2 random
	fi

	touch "$D/go"
	wait "$RUN"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/$proto.out")" = "cred done size=2" ]; then
		ok "$proto: the job finishes with the failure-free output"
	else
		notok "$proto: the job (exit $rc): $(head -c 200 "$T/$proto.out")" "$T/$proto.err" "$T/d.err"
	fi
done
if grep -lE 'AddressSanitizer|runtime error|LeakSanitizer' "$T"/*.err > "$T/san" 2>&1 &&
    [ -s "$T/san" ]; then
	notok "sanitizer reports in $(tr '\n' ' ' < "$T/san")" $(cat "$T/san")
else
	ok "no sanitizer report from the daemons or the jobs"
fi
[ "$fail" = 0 ]
