#!/usr/bin/env bash
# tests/integration/test_huge_msg.sh: a message over 2 GiB (2^31 + 16
# bytes, one element of a derived type: tests/mpi/p2p_huge.c) goes from
# rank 0 to rank 1 whole and intact (checksum) in both protocols (and
# once through MPI_Send_c/MPI_Recv_c with a count over INT_MAX): relay
# (through the receiver's Channel Memory, which logs it) and direct
# (rank to rank, the sender's log holding it: MPIV_SENDLOG_MAX raised
# over the message). In a direct job whose send log cannot hold the
# message at all, the send fails at once with one line naming
# MPIV_SENDLOG_MAX (no wait for checkpoints that cannot make room).
# Needs ~10 GiB of free memory (skipped otherwise); skipped on an ASan
# build (make asan runs the integration scripts too).
#
#   MPIV_BUILD  build dir (default build)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init hugemsg
P=$B/tests/mpi/p2p_huge
[ -x "$P" ] || { echo "$P not built (make tests-build)"; exit 1; }
if grep -q __asan_init "$P" 2>/dev/null; then
	echo "skipped: an ASan build (2 GiB buffers filled and checked under ASan take minutes)"
	exit 77
fi
avail=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
if [ "${avail:-0}" -lt 10 ]; then
	echo "skipped: ${avail:-?} GiB of memory available, want 10"
	exit 77
fi
# the line the program prints for 2^31 + 16 bytes (Open MPI prints the
# same: the data and its checksum are fixed)
want='p2p_huge ok nranks=2 sum=d21269e7148730a5'

# relay, direct: one element of a derived type; relay-c: MPI_Send_c and
# MPI_Recv_c of 2^31 + 16 MPI_BYTEs (a count over INT_MAX)
for p in relay direct relay-c; do
	env=() args=()
	[ "$p" = direct ] && env=(MPIV_SENDLOG_MAX=$((3 << 30)))
	[ "$p" = relay-c ] && args=($(((1 << 31) + 16)) c)
	start=$SECONDS
	env "${env[@]}" timeout 400 "$MPIV" run -n 2 --protocol "${p%-c}" \
	    --timeout 300 "$P" "${args[@]}" > "$T/$p.out" 2> "$T/$p.err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/$p.out")" = "$want" ]; then
		ok "$p: 2 GiB + 16 bytes received intact ($((SECONDS - start)) s)"
	else
		notok "$p: exit $rc, stdout '$(head -c 200 "$T/$p.out")'" "$T/$p.err"
	fi
done

# A send log of 1 MiB and a message of 2 MiB: refused at once, named.
start=$SECONDS
MPIV_SENDLOG_MAX=1048576 timeout 120 "$MPIV" run -n 2 --protocol direct \
    --timeout 60 "$P" 2097152 > "$T/small.out" 2> "$T/small.err"
rc=$?
line="MPI_Send: out of memory: a message of 2097152 bytes is larger than the whole log of sent messages (MPIV_SENDLOG_MAX, 1048576 bytes): raise MPIV_SENDLOG_MAX"
if [ "$rc" != 0 ] && grep -qF "$line" "$T/small.err" && [ $((SECONDS - start)) -lt 10 ]; then
	ok "direct: a message larger than the send log fails at once, naming MPIV_SENDLOG_MAX"
else
	notok "direct, 1 MiB send log: exit $rc after $((SECONDS - start)) s, want a failure naming MPIV_SENDLOG_MAX" "$T/small.err"
fi
[ "$fail" = 0 ]
