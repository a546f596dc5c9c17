#!/usr/bin/env bash
# tests/integration/test_deadlock.sh: a deadlocked job is told, not left
# hanging (docs/CONTRACTS.md, "Deadlocks"). The programs are
# tests/integration/deadlock.c, on the embedded deployment, in both
# protocols:
#   kinds    finished (a receive from a rank that ended), cycle (3 ranks
#            receiving from each other; also with 2 CMs), coll (MPI_Barrier against
#            receives), poll (an MPI_Test loop), iprobe (an MPI_Iprobe
#            loop), waitall, waitany, probe,
#            ibarrier (MPI_Wait of an MPI_Ibarrier against a receive),
#            window (MPI_Win_wait against a receive): with
#            --deadlock-after 1 --deadlock-abort each job ends with
#            exit 1 within 15 s, with one line naming what each rank
#            waits for
#   idle     a rank that computes for 4 s while the others wait is no
#            deadlock: exit 0, no deadlock line; the waits are "wait" and
#            "wait_over" events of the report, bands of the timeline and
#            "blocked" ranks of the --progress line
#   warn     without --deadlock-abort the job is told once and keeps
#            running (until its --timeout: 124); mpiv status shows the
#            warning and each rank's wait, its --json too
#   off      --deadlock-after off: no line; at the --timeout, an indented
#            line says what rank 0 was waiting for (and the report's
#            per_rank[0].waits)
#   usage    a bad --deadlock-after is a usage error (exit 2)
# The fault suites run every job with --deadlock-after 3
# --deadlock-abort (tests/fault/common.bash), so that no kill, restore or
# replay passes for a deadlock.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init deadlock

"$B/bin/mpivcc" -O2 -o "$T/dl" tests/integration/deadlock.c || exit 1
cd "$T" || exit 1

LINE='^mpiv: job [0-9]+ is deadlocked: for [0-9]+ s every rank has waited and no message moved; '
# rank 1 ended: a relay rank leaves; a direct one waits in MPI_Finalize
# for every other (its messages live in its memory)
ENDED='rank 1 (ended \(exit 0\)|waits in MPI_Finalize, for every rank to reach it)'

# kind PROTO MODE NRANKS REGEX...: the job ends with exit 1 and a
# deadlock line matching every REGEX.
kind() {
	local proto=$1 mode=$2 n=$3 t0=$SECONDS rc line re bad=""
	shift 3
	timeout 60 "$MPIV" run -n "$n" --protocol "$proto" --deadlock-after 1 \
	    --deadlock-abort --timeout 40 ${CMS:+--cms "$CMS"} ./dl "$mode" > "$mode.$proto.out" \
	    2> "$mode.$proto.err"
	rc=$?
	line=$(grep -E "$LINE" "$mode.$proto.err")
	for re in "$@"; do
		grep -qE -- "$re" <<< "$line" || bad="$bad [$re]"
	done
	if [ "$rc" = 1 ] && [ $((SECONDS - t0)) -le 15 ] &&
	    [ "$(grep -cE "$LINE" "$mode.$proto.err")" = 1 ] && [ -z "$bad" ]; then
		ok "$proto $mode${CMS:+ ($CMS CMs)}: exit 1 after $((SECONDS - t0)) s: ${line#mpiv: }"
	else
		notok "$proto $mode${CMS:+ ($CMS CMs)}: exit $rc after $((SECONDS - t0)) s, line \"$line\" lacks$bad" "$mode.$proto.err"
	fi
}

WORLD='MPI_COMM_WORLD'
for p in relay direct; do
	kind $p finished 2 "rank 0 waits for a message from rank 1 \(tag 5, $WORLD\)" "$ENDED"
	kind $p cycle 3 "rank 0 waits for a message from rank 1 \(tag 9, $WORLD\)" \
	    "rank 1 waits for a message from rank 2 \(tag 9, $WORLD\)" \
	    "rank 2 waits for a message from rank 0 \(tag 9, $WORLD\)"
	kind $p coll 3 "rank 0 waits in MPI_Barrier on $WORLD, for rank [12] to send its part" \
	    "rank 1 waits for a message from rank 0 \(tag 7, $WORLD\)" \
	    "rank 2 waits for a message from rank 0 \(tag 7, $WORLD\)"
	kind $p poll 2 "rank 0 waits for a message from rank 1 \(tag 5, $WORLD\), polling with MPI_Test" "$ENDED"
	kind $p iprobe 2 "rank 0 waits for a message from rank 1 \(tag 6, $WORLD\), polling with MPI_Iprobe" "$ENDED"
	kind $p waitall 2 "rank 0 waits in MPI_Waitall over 2 requests, the first for a message from rank 1 \(tag 3, $WORLD\)" "$ENDED"
	kind $p waitany 2 "rank 0 waits in MPI_Waitany over 2 requests, the first for a message from rank 1 \(tag 3, $WORLD\)" "$ENDED"
	kind $p probe 2 "rank 0 waits in a probe for a message from rank 1 \(tag 6, $WORLD\)" "$ENDED"
	kind $p ibarrier 2 "rank 0 waits for a non-blocking collective on $WORLD to end" \
	    "rank 1 waits for a message from rank 0 \(tag 2, $WORLD\)"
	kind $p window 2 "rank 0 waits in a one-sided synchronization \(MPI_Win_fence, MPI_Win_complete or MPI_Win_wait\), for rank 1" \
	    "rank 1 waits for a message from rank 0 \(tag 8, $WORLD\)"
	# ranks homed at two CMs: each passes its ranks' waits on
	CMS=2 kind $p cycle 3 "rank 0 waits for a message from rank 1" \
	    "rank 1 waits for a message from rank 2" "rank 2 waits for a message from rank 0"

	# idle: rank 1 computes 4 s, ranks 0 and 2 wait meanwhile
	timeout 60 "$MPIV" run -n 3 --protocol $p --deadlock-after 1 --deadlock-abort \
	    --timeout 40 --report slow.$p.json --timeline slow.$p.html ./dl slow 4 \
	    > slow.$p.out 2> slow.$p.err
	rc=$?
	if [ "$rc" = 0 ] && [ "$(grep -c 'done x=42' slow.$p.out)" = 3 ] &&
	    ! grep -q deadlock slow.$p.err; then
		ok "$p idle: a rank computing 4 s while the others wait is no deadlock"
	else
		notok "$p idle: exit $rc, $(grep -c 'done x=42' slow.$p.out) done lines" slow.$p.err
	fi
	# --progress into a file: the status line counts the waiting ranks
	timeout 60 "$MPIV" run -n 3 --protocol $p --progress --timeout 40 ./dl slow 3 \
	    > prog.$p.out 2> prog.$p.err
	if tr '\r' '\n' < prog.$p.err | grep -qE '^(.\[K)?mpiv: [0-9.]+ s \| 3 ranks: 1 running, 2 blocked \|'; then
		ok "$p idle: the status line says 1 running, 2 blocked"
	else
		notok "$p idle: no status line with 2 blocked ranks" prog.$p.err
	fi
	# its waits are events, and bands in the timeline: rank 0's began
	# at the start and lasted about 4 s (more when rank 1 started late)
	w=$(jq -c '[.events[] | select(.rank == 0 and (.kind == "wait" or .kind == "wait_over"))]' slow.$p.json)
	if jq -e 'length == 2 and .[0].kind == "wait" and .[1].kind == "wait_over" and
	    .[0].value == .[1].value and (.[0].detail | startswith("for a message from rank 1 (tag 5")) and
	    (.[1].t - .[0].t + .[0].span1) > 3 and (.[1].t - .[0].t + .[0].span1) < 15' <<< "$w" > /dev/null &&
	    grep -qE "<rect class='wait' data-ev='[0-9]+' data-rank='0' [^>]*><title>rank 0 waited from [0-9.]+ s to [0-9.]+ s: for a message from rank 1 \(tag 5" slow.$p.html &&
	    ! grep -q "<rect class='wait' data-ev='[0-9]*' data-rank='1'" slow.$p.html; then
		ok "$p idle: rank 0's wait is a wait/wait_over pair in the report and a band in the timeline (rank 1's computing is none)"
	else
		notok "$p idle: the report's waits of rank 0: $w" slow.$p.html
	fi
done

# warn: told once, the job goes on; mpiv status shows it
: > warn.err
timeout 60 "$MPIV" run -v -n 2 --deadlock-after 1 --timeout 12 ./dl finished \
    > warn.out 2> warn.err &
RUN=$!
PIDS+=("$RUN")
if wait_for 15 grep -qE "$LINE" warn.err; then
	ok "warn: told: $(grep -m1 -E "$LINE" warn.err | cut -c1-120)..."
else
	notok "warn: no deadlock line within 15 s" warn.err
fi
DA=$(sed -n 's/^mpiv: dispatcher \([^ ]*\) job .*/\1/p' warn.err | head -n 1)
JOB=$(sed -n 's/^mpiv: dispatcher [^ ]* job \(.*\)/\1/p' warn.err | head -n 1)
if [ -n "$DA" ]; then
	"$MPIV" status --dispatcher "$DA" "$JOB" > status.txt 2>&1
	"$MPIV" status --dispatcher "$DA" --json "$JOB" > status.json 2>&1
	if grep -q 'warning deadlock (for [0-9]* s): job' status.txt &&
	    grep -qE '^ +waits for a message from rank 1 \(tag 5, MPI_COMM_WORLD\) \(for [0-9]+ s\)$' status.txt; then
		ok "warn: mpiv status shows the warning and rank 0's wait"
	else
		notok "warn: mpiv status lacks the warning or the wait" status.txt
	fi
	if [ "$(jq -r '.jobs[0].warnings[] | select(.kind == "deadlock") | .kind' status.json)" = deadlock ] &&
	    jq -e '.jobs[0].ranks[0].waits | test("^for a message from rank 1")' status.json > /dev/null &&
	    jq -e '.jobs[0].ranks[0].waited_s >= 1' status.json > /dev/null; then
		ok "warn: mpiv status --json: the deadlock warning, rank 0's waits and waited_s"
	else
		notok "warn: mpiv status --json lacks them" status.json
	fi
else
	notok "warn: mpiv run -v printed no dispatcher address" warn.err
fi
wait "$RUN"
rc=$?
if [ "$rc" = 124 ] && [ "$(grep -cE "$LINE" warn.err)" = 1 ]; then
	ok "warn: the job ran on to its --timeout (124), told once"
else
	notok "warn: exit $rc (want 124), $(grep -cE "$LINE" warn.err) deadlock lines (want 1)" warn.err
fi

# off: nothing told; the timeout says where rank 0 was stuck
timeout 60 "$MPIV" run -n 2 --deadlock-after off --timeout 5 --report off.json \
    ./dl finished > off.out 2> off.err
rc=$?
if [ "$rc" = 124 ] && ! grep -q deadlock off.err; then
	ok "off: --deadlock-after off tells nothing (timed out: 124)"
else
	notok "off: exit $rc" off.err
fi
if grep -A1 '^mpiv: job timed out after 5 s$' off.err | grep -qE '^  rank 0 was waiting for a message from rank 1 \(tag 5, MPI_COMM_WORLD\) \(for [0-9]+ s\)$' &&
    jq -e '.per_rank[0].waits == "for a message from rank 1 (tag 5, MPI_COMM_WORLD)" and .per_rank[0].waited_s > 2' off.json > /dev/null; then
	ok "off: the timeout line is followed by rank 0's wait; the report's per_rank has it"
else
	notok "off: no wait of rank 0 after the timeout line, or in per_rank" off.err off.json
fi

# usage
timeout 20 "$MPIV" run -n 2 --deadlock-after soon ./dl finished > usage.out 2> usage.err
rc=$?
if [ "$rc" = 2 ] && grep -q 'bad --deadlock-after "soon"' usage.err; then
	ok "usage: a bad --deadlock-after is a usage error: $(head -n 1 usage.err)"
else
	notok "usage: exit $rc" usage.err
fi

[ "$fail" = 0 ]
