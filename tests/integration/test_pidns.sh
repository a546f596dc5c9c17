#!/usr/bin/env bash
# tests/integration/test_pidns.sh: every incarnation of a rank sees the
# same pid (README "What a program must not depend on"): a program whose
# messages and output derive from getpid() (tests/integration/pidseed.c:
# srand(getpid()) shuffles rank 0's work, the workers send their pids,
# every rank prints its pid at the start and checks it at the end, and
# that the C library's id of its thread is right)
# finishes with the failure-free output while its ranks are SIGKILLed at
# random points and relaunched on any of two nodes:
#   chaos/N        --chaos: re-executions from the beginning (a new
#                  launch of the rank, same pid), no checkpoints;
#   ckpt-chaos/N   the same with --ckpt-interval: restores from CRIU images
#                  too, which must come back under the pid of the launch;
#   ckpt-kill9     a checkpoint of rank 0 and of rank 2 made durable, then
#                  `kill -9` of their host pids from outside: both restored
#                  from their images (from_ckpt > 0), same output;
#   fallback       MPIV_PIDNS=0 (what a node that cannot make PID
#                  namespaces does): a re-executed rank 0 gets another pid
#                  and the job ends with "replay diverged", no wrong value,
#                  in the relay and in the direct protocol.
# Each case's run is bounded by --timeout and timeout(1), every wait by
# wait_for. Exit 77 where PID namespaces cannot be made (not root).
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init pidns

if [ "$(id -u)" != 0 ]; then
	echo "skip: PID namespaces for ranks need root"
	exit 77
fi
ITEMS=600
DELAY=12000	# us per item on one of 3 workers: about 2.5 s of work
if ! "$B/bin/mpivcc" -O2 -o "$T/pidseed" tests/integration/pidseed.c 2> "$T/cc.err"; then
	notok "build pidseed.c" "$T/cc.err"
	exit 1
fi
CRIU_OK=0
timeout 60 "${MPIV_CRIU:-/opt/mpiv/criu/criu}" check > /dev/null 2>&1 && CRIU_OK=1

# job NAME ARGS...: mpiv run ARGS (before the program) on pidseed, under
# a hard timeout: NAME.out (tagged output, sorted stably by rank),
# NAME.err, NAME.json, exit code in RC.
job() {
	local name=$1
	shift
	timeout -k 5 150 "$MPIV" run --tag-output --timeout 120 --nodes 2 \
	    --report "$T/$name.json" "$@" -n 4 "$T/pidseed" $ITEMS $DELAY \
	    < /dev/null > "$T/$name.raw" 2> "$T/$name.err"
	RC=$?
	norm "$T/$name.raw" > "$T/$name.out"
}
# norm FILE: the tagged lines, job id dropped, stable-sorted by rank.
norm() {
	sed -n 's/^\[[^],]*,\([0-9]*\)\]<\(std[a-z]*\)>: \{0,1\}/\1 \2 /p' "$1" |
	    LC_ALL=C sort -s -n -k1,1
}
jnum() { jq -r "(.$2 // 0) | tostring" "$1" 2> /dev/null; }
from_ckpt_max() {
	jq -r '[.restart_log[]? | .from_ckpt] | max // 0' "$1" 2> /dev/null
}
# same LABEL NAME WHAT: exit 0, the failure-free output, a restart.
same() {
	local label=$1 name=$2 what=$3
	if [ "$RC" != 0 ]; then
		notok "$label: exit $RC ($what)" "$T/$name.err"
	elif ! cmp -s "$T/ref.out" "$T/$name.out"; then
		diff "$T/ref.out" "$T/$name.out" > "$T/$name.diff"
		notok "$label: output differs from the failure-free run ($what)" \
		    "$T/$name.diff"
	elif [ "$(jnum "$T/$name.json" restarts)" -lt 1 ] 2> /dev/null; then
		notok "$label: no restart happened ($what)" "$T/$name.err"
	else
		ok "$label: $what, $(jnum "$T/$name.json" restarts) restarts, output identical"
		return 0
	fi
	return 1
}

# The failure-free run: four pids of the range pidns hands out, distinct,
# each the same at the end; nothing wrong.
job ref
pids=$(sed -n 's/^\([0-9]*\) stdout rank [0-9]*: pid \([0-9]*\)$/\2/p' "$T/ref.out" | sort -u)
if [ "$RC" != 0 ] || grep -qE 'WRONG|MISMATCH|CHANGED|STALE' "$T/ref.out" ||
    [ "$(echo "$pids" | grep -c .)" != 4 ] ||
    [ "$(grep -c 'at the end too$' "$T/ref.out")" != 4 ] ||
    [ "$(grep -c 'thread id right$' "$T/ref.out")" != 4 ] ||
    [ "$(grep -c '^0 stdout rank 0: digest ' "$T/ref.out")" != 1 ]; then
	notok "failure-free run: exit $RC" "$T/ref.err" "$T/ref.out"
	exit 1
fi
for p in $pids; do
	if [ "$p" -lt 1000 ] || [ "$p" -gt 30999 ]; then
		notok "failure-free run: pid $p is not one of a rank's own namespace" "$T/ref.out"
		exit 1
	fi
done
ok "failure-free run: pids $(echo $pids)"

for seed in 3 8; do
	job "chaos$seed" --chaos 700ms --chaos-seed $seed --chaos-max 5
	same "chaos/$seed" "chaos$seed" "--chaos 700ms, re-executions from the beginning"
done

if [ "$CRIU_OK" = 1 ]; then
	restored=0
	for seed in 4 9; do
		job "ckchaos$seed" --ckpt-interval 0.3 --chaos 700ms \
		    --chaos-seed $seed --chaos-max 5
		same "ckpt-chaos/$seed" "ckchaos$seed" \
		    "--ckpt-interval 0.3 --chaos 700ms" &&
		    [ "$(from_ckpt_max "$T/ckchaos$seed.json")" -gt 0 ] &&
		    restored=$((restored + 1))
	done
	echo "# $restored of 2 chaos runs with checkpoints restored a rank from an image"

	# kill -9 from outside, each rank once a checkpoint of it is durable.
	has_addr() { grep -q '^mpiv: dispatcher [^ ]* job [^ ]*$' "$T/k9.err"; }
	# checkpoint 2 or later (one asked while the previous one is still
	# being taken is skipped, its number with it)
	durable() { grep -Eq "dispatcher checkpoint durable job=$JOB rank=$1 ckpt=([2-9]|[1-9][0-9]+) " "$T/k9.err"; }
	hostpid() {	# host pid of rank $1's first incarnation (node log)
		sed -n "s/.*node launched job=$JOB rank=$1 incarnation=1 pid=\([0-9]*\) .*/\1/p" \
		    "$T/k9.err" | head -n 1
	}
	timeout -k 5 150 "$MPIV" run -v --log-level info --tag-output \
	    --timeout 120 --nodes 2 --report "$T/k9.json" --ckpt-interval 0.3 \
	    -n 4 "$T/pidseed" $ITEMS $DELAY < /dev/null > "$T/k9.raw" 2> "$T/k9.err" &
	PIDS+=("$!")
	why=
	if ! wait_for 30 has_addr; then
		why="no dispatcher line"
	else
		read -r _ _ _ _ JOB <<< "$(grep -m1 '^mpiv: dispatcher ' "$T/k9.err")"
		for r in 0 2; do
			if ! wait_for 40 durable $r; then
				why="no durable checkpoint 2 (or later) of rank $r"
				break
			fi
			hp=$(hostpid $r)
			if [ -z "$hp" ] || ! kill -9 "$hp"; then
				why="no host pid of rank $r to kill ('$hp')"
				break
			fi
		done
	fi
	wait "${PIDS[-1]}"
	RC=$?
	norm "$T/k9.raw" > "$T/k9.out"
	nrest=$(jq '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$T/k9.json" 2> /dev/null)
	if [ -n "$why" ]; then
		notok "ckpt-kill9: $why" "$T/k9.err"
	elif same ckpt-kill9 k9 "kill -9 of ranks 0 and 2 after their checkpoints"; then
		if [ "${nrest:-0}" -lt 2 ]; then
			notok "ckpt-kill9: $nrest restores from a checkpoint (want 2)" "$T/k9.err"
		elif ! grep -q "node restored job=$JOB rank=0 .* getpid=$(sed -n 's/^0 stdout rank 0: pid //p' "$T/ref.out") " "$T/k9.err"; then
			notok "ckpt-kill9: rank 0 not restored under its pid" "$T/k9.err"
		else
			ok "ckpt-kill9: ranks 0 and 2 restored from images under their pids"
		fi
	fi
else
	echo "# checkpoint cases skipped: CRIU does not work here"
fi

# Without PID namespaces a re-execution of rank 0 shuffles otherwise:
# caught, never a wrong value, in both protocols (the relay's CMs compare
# a digest of every message sent again; in a direct job the peers do).
has_line() { [ "$(grep -c 'stdout.*rank 0: rank 3 has pid' "$1")" -ge 1 ]; }
for proto in relay direct; do
	MPIV_PIDNS=0 timeout -k 5 150 "$MPIV" run -v --tag-output --timeout 120 \
	    --protocol $proto --report "$T/fb.$proto.json" -n 4 "$T/pidseed" \
	    $ITEMS $DELAY < /dev/null > "$T/fb.$proto.raw" 2> "$T/fb.$proto.err" &
	PIDS+=("$!")
	if wait_for 30 has_line "$T/fb.$proto.raw" && sleep 0.5 &&
	    read -r _ _ ADDR _ JOB <<< "$(grep -m1 '^mpiv: dispatcher ' "$T/fb.$proto.err")"; then
		timeout 20 "$MPIV" kill --dispatcher "$ADDR" "$JOB" 0 > /dev/null 2>&1
	fi
	wait "${PIDS[-1]}"
	RC=$?
	if grep -q WRONG "$T/fb.$proto.raw"; then
		notok "fallback, $proto: a wrong value was printed" "$T/fb.$proto.raw"
	elif [ "$RC" = 0 ] || ! grep -q 'replay diverged' "$T/fb.$proto.err"; then
		notok "fallback, $proto: exit $RC without 'replay diverged' after rank 0 re-executed with another pid" "$T/fb.$proto.err"
	else
		ok "fallback (MPIV_PIDNS=0), $proto: exit $RC, replay diverged"
	fi
done
[ "$fail" = 0 ]
