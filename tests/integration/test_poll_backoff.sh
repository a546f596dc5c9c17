#!/usr/bin/env bash
# tests/integration/test_poll_backoff.sh: fruitless non-blocking calls
# back off (libmpi-lite/pollback.c, MPIV_POLL_BACKOFF). tests/mpi/
# p2p_pollwait waits by polling (Testany, Testsome, Test, Testall and
# Iprobe loops) and prints, per rank, how many of its calls found
# nothing. In both protocols, 2 ranks, rank 0 sleeping 2 ms before its
# side message every round, so that rank 1 probes for at least that long:
# by default a relay rank makes at most 50 fruitless calls per round (it
# sleeps in poll() after the first two of a run; measured 3-7 per round
# on a loaded 2-core machine) and a direct rank at most 1000 (it yields
# the CPU for up to 300 µs of a run first, so its count is that time over
# the cost of one yield, then sleeps about 20 times: 270 per round on a
# 2-core VM whose other core was idle), and with MPIV_POLL_BACKOFF=off
# they make many more (every call returns at once for the whole 2 ms:
# about 3000 per round there; more than 10 times as many in relay, 4 in
# direct: 2 ms of calls against 300 µs of yields), with the same result.
# (Without the sleep a direct round could end within the yields, and then
# both runs made about as many calls: 93 and 31 per round on one CI
# machine.)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init poll-backoff
PROG=$B/tests/mpi/p2p_pollwait
[ -x "$PROG" ] || { notok "$PROG not built"; exit 1; }
ROUNDS=100
DELAY_US=2000

# run_one PROTOCOL BACKOFF: the largest fruitless-call count of a rank in
# $POLLS, the job's output checked
run_one() {
	local p=$1 b=$2 rc
	POLLS=
	MPIV_POLL_BACKOFF=$b timeout 120 "$MPIV" run -n 2 --protocol "$p" \
	    --timeout 90 "$PROG" "$ROUNDS" v "$DELAY_US" > "$T/out" 2> "$T/err"
	rc=$?
	if [ "$rc" != 0 ] || ! grep -q '^p2p_pollwait ok nranks=2 ' "$T/out" ||
	    [ "$(grep -c 'fruitless polls' "$T/err")" != 2 ]; then
		notok "$p MPIV_POLL_BACKOFF=$b: exit $rc, no result or no counts" "$T/out" "$T/err"
		return 1
	fi
	POLLS=$(awk '/fruitless polls/ { if ($9 + 0 > m) m = $9 + 0 } END { print m + 0 }' "$T/err")
}

for p in direct relay; do
	run_one "$p" auto || continue
	auto=$POLLS
	if [ "$p" = direct ]; then per=1000; else per=50; fi
	if [ "$auto" -le $((ROUNDS * per)) ]; then
		ok "$p: $auto fruitless calls in $ROUNDS rounds with the backoff"
	else
		notok "$p: $auto fruitless calls in $ROUNDS rounds with the backoff (want <= $((ROUNDS * per)))" "$T/err"
	fi
	run_one "$p" off || continue
	if [ "$p" = direct ]; then x=4; else x=10; fi
	if [ "$POLLS" -gt $((auto * x)) ]; then
		ok "$p: $POLLS fruitless calls with MPIV_POLL_BACKOFF=off (> $x x $auto)"
	else
		notok "$p: $POLLS fruitless calls with MPIV_POLL_BACKOFF=off, not > $x x $auto" "$T/err"
	fi
done
[ "$fail" = 0 ]
