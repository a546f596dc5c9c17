#!/usr/bin/env bash
# tests/integration/test_run_errors.sh: `mpiv run` as a user meets it:
# exit codes and the one-line failure reasons (docs/CONTRACTS.md), usage
# errors, --tag-output, --report JSON, --timeout, signals, and that no
# mpiv process or temporary file is left behind.
#
#   MPIV_BUILD  build dir (default build)
#
# Prints "ok - NAME" / "not ok - NAME"; exits non-zero on any failure.

cd "$(dirname "$0")/../.." || exit 2
B=${MPIV_BUILD:-build}
ROOT=$(pwd)
MPIV="$ROOT/$B/bin/mpiv"
MPIVCC="$ROOT/$B/bin/mpivcc"
if [ ! -x "$MPIV" ]; then
	echo "$MPIV not built"
	exit 1
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-run-errors.XXXXXX")
# Node agents started here as root run their ranks as nobody.
chmod 755 "$W"
# Deployments made by these tests put their temp dirs here: checked empty.
export TMPDIR="$W/tmp"
mkdir -p "$TMPDIR"
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 2

FAILS=0
ok() { printf 'ok - %s\n' "$1"; }
notok() {
	FAILS=$((FAILS + 1))
	printf 'not ok - %s (%s)\n' "$1" "$2"
	[ -f out ] && sed 's/^/#   out| /' out | head -n 15
	[ -f err ] && sed 's/^/#   err| /' err | head -n 15
}

# run_case NAME EXPECTED_RC [mpiv run args...]: stdout in ./out, stderr in ./err
run_case() {
	local name=$1 expect=$2 rc
	shift 2
	timeout -k 5 60 "$MPIV" run "$@" < /dev/null > out 2> err
	rc=$?
	RC=$rc
	if [ "$rc" -ne "$expect" ]; then
		notok "$name" "exit $rc, expected $expect"
		return 1
	fi
	return 0
}

# The failure reason must be exactly one "mpiv: " line on stderr.
one_line() {
	local name=$1 pattern=$2 n
	n=$(grep -c '^mpiv: ' err)
	if [ "$n" -ne 1 ]; then
		notok "$name" "$n 'mpiv:' lines on stderr, want 1"
		return 1
	fi
	if ! grep -Eq "^mpiv: $pattern\$" err; then
		notok "$name" "stderr does not match 'mpiv: $pattern'"
		return 1
	fi
	ok "$name"
}

# ---- tiny programs (plain cc: no MPI needed) ----
cat > hello.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	printf("hello %s of %s\n", getenv("MPIV_RANK"), getenv("MPIV_SIZE"));
	fprintf(stderr, "to stderr %s\n", getenv("MPIV_RANK"));
	for (int i = 1; i < argc; i++)
		printf("arg %s\n", argv[i]);
	return 0;
}
EOF
cat > exit3.c <<'EOF'
int main(void) { return 3; }
EOF
cat > exitrank.c <<'EOF'
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	if (atoi(getenv("MPIV_RANK")) == 1)
		return 7;
	sleep(30);
	return 0;
}
EOF
cat > segv.c <<'EOF'
#include <signal.h>
int main(void) { raise(SIGSEGV); return 0; }
EOF
cc -o hello hello.c && cc -o exit3 exit3.c && cc -o exitrank exitrank.c &&
    cc -o segv segv.c || { echo "cannot compile test programs"; exit 1; }
printf '#!/nonexistent/interpreter\n' > badinterp
chmod +x badinterp
printf 'not a program\n' > noexec
chmod -x noexec

# ---- usage errors ----
run_case usage/no-args 2 && grep -q '^usage: mpiv run' err && ok usage/no-args ||
    { [ "$RC" = 2 ] && notok usage/no-args "no usage text"; }
run_case usage/missing-n 2 ./hello && grep -q 'missing -n' err &&
    ok usage/missing-n || { [ "$RC" = 2 ] && notok usage/missing-n "no message"; }
run_case usage/n-zero 2 -n 0 ./hello && ok usage/n-zero
run_case usage/n-garbage 2 -n abc ./hello && ok usage/n-garbage
run_case usage/no-program 2 -n 2 && grep -q 'no program' err &&
    ok usage/no-program || { [ "$RC" = 2 ] && notok usage/no-program "no message"; }
run_case usage/bad-option 2 -n 2 --frobnicate ./hello && ok usage/bad-option
run_case usage/help 0 --help && grep -q '^usage: mpiv run' out && ok usage/help

# ---- mpiv cm: out-of-range numeric options exit 2 with the option named --
for a in "--prefault 65" "--prefault -1" "--prefault x" "--spin 2000000"; do
	# shellcheck disable=SC2086
	timeout 10 "$MPIV" cm --listen 127.0.0.1:0 $a > out 2> err < /dev/null
	rc=$?
	if [ "$rc" = 2 ] && grep -q "^mpiv cm: bad ${a%% *} \"${a#* }\"" err; then
		ok "cm-usage/${a// /=}"
	else
		notok "cm-usage/${a// /=}: exit $rc (want 2 and a message naming the option)" err
	fi
done

# ---- success, -np, --, output forwarding ----
if run_case run/hello 0 -n 3 ./hello; then
	if [ "$(grep -c '^hello [0-2] of 3$' out)" = 3 ] &&
	    [ "$(grep -c '^to stderr [0-2]$' err)" = 3 ] &&
	    ! grep -q '^mpiv:' err; then
		ok run/hello
	else
		notok run/hello "unexpected output"
	fi
fi
run_case run/np-and-dashdash 0 -np 2 -- ./hello -n x &&
    [ "$(grep -c '^arg -n$' out)" = 2 ] && ok run/np-and-dashdash ||
    { [ "$RC" = 0 ] && notok run/np-and-dashdash "program args lost"; }
run_case run/path-lookup 0 -n 1 true && ok run/path-lookup
run_case run/nodes-cms 0 -n 4 --nodes 2 --cms 2 ./hello &&
    [ "$(grep -c '^hello' out)" = 4 ] && ok run/nodes-cms ||
    { [ "$RC" = 0 ] && notok run/nodes-cms "missing output"; }
if run_case run/tag-output 0 -n 2 --tag-output ./hello; then
	if grep -qx '\[[^,]*,0\]<stdout>: hello 0 of 2' out &&
	    grep -qx '\[[^,]*,1\]<stderr>: to stderr 1' err; then
		ok run/tag-output
	else
		notok run/tag-output "lines not tagged"
	fi
fi

# ---- failures: exit codes and one-line reasons ----
run_case fail/exit3 3 -n 2 ./exit3 &&
    one_line fail/exit3 'rank [01] exited with code 3'
run_case fail/first-rank-code 7 -n 3 ./exitrank &&
    one_line fail/first-rank-code 'rank 1 exited with code 7'
run_case fail/segv 139 -n 2 ./segv &&
    one_line fail/segv 'rank [01] killed by signal 11 \(Segmentation fault\)'
run_case fail/nope 127 -n 2 ./nope &&
    one_line fail/nope '\./nope: No such file or directory'
run_case fail/not-in-path 127 -n 1 mpiv-no-such-program-xyz &&
    one_line fail/not-in-path 'mpiv-no-such-program-xyz: command not found'
run_case fail/not-executable 126 -n 1 ./noexec &&
    one_line fail/not-executable '\./noexec: Permission denied'
run_case fail/exec-at-node 127 -n 1 ./badinterp &&
    one_line fail/exec-at-node 'rank 0: cannot execute \./badinterp: No such file or directory'

# ---- --timeout ----
start=$(date +%s)
run_case timeout/expires 124 -n 2 --timeout 1 sleep 30 &&
    one_line timeout/expires 'job timed out after 1 s'
if [ $(( $(date +%s) - start )) -gt 15 ]; then
	notok timeout/fast "took $(( $(date +%s) - start ))s"
else
	ok timeout/fast
fi
run_case timeout/bad 2 -n 1 --timeout x ./hello && ok timeout/bad

# ---- --report ----
rm -f rep.json
if run_case report/success 0 -n 3 --report rep.json ./hello; then
	if python3 - rep.json 3 0 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
n, code = int(sys.argv[2]), int(sys.argv[3])
for k in ("job", "ranks", "exit_code", "wall_s", "mode", "restarts",
          "checkpoints", "kills", "per_rank", "chaos_seed", "restart_log"):
    assert k in r, k
assert r["ranks"] == n and r["exit_code"] == code, r
assert isinstance(r["wall_s"], (int, float)) and r["wall_s"] >= 0
assert r["kills"] == 0 and r["restarts"] == 0 and r["restart_log"] == [], r
assert r["mode"] == "logging"
assert [p["rank"] for p in r["per_rank"]] == list(range(n))
for p in r["per_rank"]:
    for k in ("rank", "incarnations", "restarts", "checkpoints", "exit_code"):
        assert k in p, k
    assert p["incarnations"] == 1 and p["exit_code"] == 0, p
EOF
	then ok report/success; else notok report/success "bad JSON"; fi
fi
rm -f rep.json
if run_case report/failure 7 -n 3 --report rep.json ./exitrank; then
	if python3 -c '
import json, sys
r = json.load(open("rep.json"))
assert r["exit_code"] == 7 and r["per_rank"][1]["exit_code"] == 7, r
' ; then ok report/failure; else notok report/failure "bad JSON"; fi
fi

# ---- signals to mpiv run ----
timeout -k 5 60 "$MPIV" run -n 2 sleep 30 < /dev/null > out 2> err &
pid=$!
sleep 1.5
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 143 ] && ok signal/term || notok signal/term "exit $rc, expected 143"

# ---- MPI programs (need mpivcc and libmpi) ----
if [ -x "$MPIVCC" ]; then
	cat > mpiabort.c <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1)
		MPI_Abort(MPI_COMM_WORLD, 5);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
EOF
	cat > mpihello.c <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	int rank, size, sum = 0, one = 1;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", rank, size, sum);
	MPI_Finalize();
	return 0;
}
EOF
	if "$MPIVCC" -o mpiabort mpiabort.c 2> cc.err &&
	    "$MPIVCC" -o mpihello mpihello.c 2>> cc.err; then
		run_case mpi/hello 0 -n 3 ./mpihello &&
		    [ "$(grep -c 'of 3 sum 3$' out)" = 3 ] && ok mpi/hello ||
		    { [ "$RC" = 0 ] && notok mpi/hello "bad output"; }
		run_case mpi/abort 5 -n 3 ./mpiabort &&
		    one_line mpi/abort 'rank 1 called MPI_Abort\(5\)'
	else
		notok mpi/compile "mpivcc failed: $(head -c 200 cc.err)"
	fi
else
	echo "ok - mpi # SKIP $MPIVCC not built"
fi

# ---- a separate deployment: --dispatcher, version check, node loss ----
"$MPIV" dispatcher --listen 127.0.0.1:0 --log-level error > disp.out 2> disp.err &
DPID=$!
for _ in $(seq 50); do grep -q '^listening on ' disp.out && break; sleep 0.1; done
DADDR=$(sed -n 's/^listening on //p' disp.out)
if [ -z "$DADDR" ]; then
	notok external/dispatcher-start "no listening line"
else
	ok external/dispatcher-start
	# Hello{version=99, role=CLIENT} must get HelloReply{ok=false, error}.
	if python3 - "$DADDR" <<'EOF2'
import socket, struct, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=5)
meta = bytes([0x08, 99, 0x10, 3])
s.sendall(struct.pack(">HHII", 0x4d56, 1, len(meta), 0) + meta)
def header():
    hdr = b""
    while len(hdr) < 12:
        b = s.recv(12 - len(hdr))
        assert b, "closed before a reply"
        hdr += b
    return struct.unpack(">HHII", hdr)
magic, typ, mlen, plen = header()
if typ == 5:	# the server's Challenge (no secret here): skip it
    while mlen > 0:
        mlen -= len(s.recv(mlen))
    magic, typ, mlen, plen = header()
assert magic == 0x4d56 and typ == 2, (magic, typ)
meta = b""
while len(meta) < mlen:
    meta += s.recv(mlen - len(meta))
assert b"protocol version 99" in meta, meta
assert s.recv(1) == b"", "not closed after the refusal"
EOF2
	then ok external/version-refused; else notok external/version-refused "no clear refusal"; fi
	"$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DADDR" --log-level error > /dev/null 2> cm.err &
	CPID=$!
	"$MPIV" node --dispatcher "$DADDR" --slots 2 --log-level error \
	    --cache-dir "$W/cache" 2> node.err &
	NPID=$!
	run_case external/run 0 -n 2 --dispatcher "$DADDR" ./hello &&
	    [ "$(grep -c '^hello' out)" = 2 ] && ok external/run ||
	    { [ "$RC" = 0 ] && notok external/run "missing output"; }
	run_case external/waits 124 -n 3 --dispatcher "$DADDR" --timeout 1 ./hello &&
	    ok external/waits
	# The job's only node dies: its ranks wait for a slot (the job does
	# not fail) and run again, incarnation 2, on a node that joins.
	timeout -k 5 60 "$MPIV" run -n 2 --dispatcher "$DADDR" --report node-lost.json \
	    sleep 2 < /dev/null > out 2> err &
	RPID=$!
	sleep 1
	{ kill -KILL "$NPID"; wait "$NPID"; } 2> /dev/null
	sleep 0.5
	"$MPIV" node --dispatcher "$DADDR" --slots 2 --log-level error \
	    --cache-dir "$W/cache2" 2> node2.err &
	NPID=$!
	wait "$RPID"
	RC=$?
	if [ "$RC" = 0 ] && [ "$(jq .restarts node-lost.json)" = 2 ]; then
		ok external/node-lost
	else
		notok external/node-lost "exit $RC, restarts $(jq .restarts node-lost.json 2>&1), expected 0 and 2: $(tail -n 2 err | tr '\n' ' ')"
	fi
	{ kill -TERM "$NPID"; wait "$NPID"; } 2> /dev/null
	kill -TERM "$CPID" "$DPID" 2> /dev/null
	wait "$CPID" "$DPID" 2> /dev/null
fi

# ---- nothing left behind ----
sleep 0.3
# (this script's own: tests/integration/strays.bash)
. "$ROOT/tests/integration/strays.bash"
own_strays "$ROOT/$B/bin/mpiv" > strays
if [ -s strays ]; then
	notok cleanup/processes "stray processes: $(tr '\n' ';' < strays)"
else
	ok cleanup/processes
fi
if [ -n "$(ls -A "$TMPDIR")" ]; then
	notok cleanup/tmpdirs "left in TMPDIR: $(ls "$TMPDIR" | head -3 | tr '\n' ' ')"
else
	ok cleanup/tmpdirs
fi

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "all passed"
exit 0
