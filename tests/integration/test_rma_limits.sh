#!/usr/bin/env bash
# tests/integration/test_rma_limits.sh: one-sided limits fail clearly, in
# both protocols (docs/ONESIDED.md): MPI_Win_unlock of a rank never
# locked, under the default error handler, ends the job with a line
# naming the call and saying why; an epoch whose operations to one target exceed
# the message limit (MPIV_MAX_PAYLOAD=65536, a 128 KiB Put) fails at the
# origin's fence with MPI_ERR_COUNT while the target's fence returns, and
# the window keeps working.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init rma-limits
PROG=$B/tests/mpi/rma_errors
[ -x "$PROG" ] || { notok "$PROG not built"; exit 1; }

for p in direct relay; do
	timeout 60 "$MPIV" run -n 2 --protocol "$p" --timeout 40 "$PROG" lock > "$T/out" 2> "$T/err"
	rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] &&
	    grep -q 'MPI_Win_unlock: .*rank [01] is not locked' "$T/err" &&
	    ! grep -q 'returned' "$T/out"; then
		ok "$p: MPI_Win_unlock without a lock ends the job (exit $rc) naming the call"
	else
		notok "$p: MPI_Win_unlock without a lock: exit $rc" "$T/out" "$T/err"
	fi
	MPIV_MAX_PAYLOAD=65536 timeout 60 "$MPIV" run -n 3 --protocol "$p" --timeout 40 "$PROG" big > "$T/out" 2> "$T/err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/out")" = "rma_errors big ok" ]; then
		ok "$p: an epoch over the message limit fails with MPI_ERR_COUNT, nobody hangs"
	else
		notok "$p: too big epoch: exit $rc" "$T/out" "$T/err"
	fi
done
[ "$fail" = 0 ]
