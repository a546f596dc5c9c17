#!/usr/bin/env bash
# tests/fault/test_divergence.sh: a deliberately non-deterministic program
# (tests/fault/progs/flt_diverge.c: rank 0 picks the source of each
# round's first receive from the clock and its pid) is killed mid-run with
# `mpiv kill` (rank 0, so its re-execution asks for other sources than
# the log holds). Each run must end in exactly one of two ways:
#   - exit 0 and complete, self-consistent output (every round once, in
#     order, each value = chosen source * 100000 + round), or
#   - a non-zero exit with a clear "replay diverged" line on stderr, and
#     the output printed so far still self-consistent (nothing wrong,
#     nothing twice).
# Anything else (wrong values, duplicated or missing rounds with exit 0,
# a failure without the divergence message) is silent corruption or an
# unclear failure. Over the runs, the divergence must be detected at
# least once: a rank-0 re-execution of 20+ rounds repeats every coin toss
# with probability 2^-20. That holds in the relay, where the CM matched
# and logged which message each receive got. In a direct job receives
# that name their source and tag match the same message whatever the
# order they are posted in, so the program is deterministic as far as
# MPI goes: there every run must complete correctly (the re-execution's
# lines for rounds already printed are not printed again).
. "$(dirname "$0")/common.bash"

flt_need_chaos
timeout 20 "$MPIV" kill --help 2>&1 | grep -q -- '--dispatcher' ||
	flt_skip "mpiv kill is missing"

bin=$(flt_prog flt_diverge) || { flt_notok "cannot compile flt_diverge"; flt_finish; }
ROUNDS=200
RUNS=${FLT_RUNS:-3}

has_addr() { grep -q '^mpiv: dispatcher [^ ]* job [^ ]*$' "$1"; }
lines_at_least() { [ "$(wc -l < "$1")" -ge "$2" ]; }

# consistent FILE: every line "diverge: round R first S value V" with
# V = S*100000+R, rounds 1,2,3... in order, optional "done" line last.
# Prints the number of rounds seen; fails on any inconsistency.
consistent() {
	awk -v want_done="$2" -v rounds="$ROUNDS" '
	/^diverge: round [0-9]+ first [0-9]+ value [0-9]+$/ {
		r = $3; s = $5; v = $7
		if (r != n + 1) { print "round " r " after round " n > "/dev/stderr"; bad = 1; exit }
		if (v != s * 100000 + r) { print "round " r ": first " s " value " v > "/dev/stderr"; bad = 1; exit }
		n = r; next
	}
	/^diverge: done [0-9]+ rounds$/ { if (n != rounds) bad = 1; done = 1; next }
	{ print "unexpected line: " $0 > "/dev/stderr"; bad = 1; exit }
	END {
		if (!bad && want_done && !done) { print "no done line" > "/dev/stderr"; bad = 1 }
		print n + 0
		exit bad
	}' "$1"
}

diverged=0
proto=
for i in $(seq 1 "$RUNS"); do
	out=$FLT_TMP/div.$i
	rm -f "$out.json"
	MPIV_PRINT_DISPATCHER=1 timeout -k 5 90 "$MPIV" run $(flt_proto) --report "$out.json" \
		--timeout 60 -n 3 "$bin" "$ROUNDS" 10000 < /dev/null > "$out.out" 2> "$out.err" &
	pid=$!
	FLT_BG_PIDS=("$pid")
	if ! flt_wait_for 30 has_addr "$out.err" || ! flt_wait_for 30 lines_at_least "$out.out" $((20 + 10 * i)); then
		kill -TERM -- "-$pid" 2>/dev/null
		wait "$pid"
		flt_notok "run $i: no dispatcher address or no progress" "$out.err" "$out.out"
		continue
	fi
	read -r _ _ addr _ job <<< "$(grep -m1 '^mpiv: dispatcher ' "$out.err")"
	timeout 20 "$MPIV" kill --dispatcher "$addr" "$job" 0 > "$out.kill" 2>&1 ||
		flt_notok "run $i: mpiv kill --dispatcher $addr $job 0 failed" "$out.kill"
	wait "$pid"
	rc=$?
	FLT_BG_PIDS=()
	restarts=$(flt_report "$out.json" restarts)
	proto=$(flt_report "$out.json" protocol)
	if [ "$rc" = 0 ]; then
		if n=$(consistent "$out.out" 1 2> "$out.why"); then
			flt_ok "run $i: completed correctly ($n rounds, restarts ${restarts:-?}; the re-execution happened to choose the same)"
		else
			flt_notok "run $i: exit 0 but the output is wrong (silent divergence)" "$out.why" "$out.out"
		fi
	elif grep -q 'replay diverged' "$out.err"; then
		diverged=$((diverged + 1))
		if n=$(consistent "$out.out" 0 2> "$out.why"); then
			flt_ok "run $i: exit $rc with '$(grep -m1 'replay diverged' "$out.err" | cut -c1-150)' after $n consistent rounds"
		else
			flt_notok "run $i: divergence reported, but the output before it is wrong" "$out.why" "$out.out"
		fi
		if [ "$(grep -c 'replay diverged' "$out.err")" -gt 3 ]; then
			flt_notok "run $i: the divergence message is repeated $(grep -c 'replay diverged' "$out.err") times" "$out.err"
		fi
	else
		flt_notok "run $i: exit $rc without a 'replay diverged' message" "$out.err" "$out.out"
	fi
done
if [ "$proto" = direct ]; then
	[ "$diverged" = 0 ] && flt_ok "direct: every run completed, receives naming their source are not timing's to decide" ||
		flt_notok "direct: 'replay diverged' in $diverged of $RUNS runs of a program whose receives all name their source"
elif [ "$diverged" -gt 0 ]; then
	flt_ok "divergence detected in $diverged of $RUNS runs"
else
	flt_notok "divergence never detected in $RUNS runs (a re-execution of 20+ coin tosses matched every time?)"
fi
flt_finish
