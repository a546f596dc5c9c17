#!/usr/bin/env bash
# tests/integration/test_ckpt_elsewhere.sh: a rank killed after a durable
# checkpoint is restored on a DIFFERENT node agent than the one that took
# it (images and logs do not depend on the node), and the output equals a
# failure-free run, in both protocols. MPIV_RELAUNCH_ELSEWHERE=1 makes the dispatcher prefer
# another node; four node agents with one slot each leave two free, so
# another is free even while the slot of a rank killed just before is
# not given back yet (with three, CI once saw a restore land on its own
# node for want of another).
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${MPIV_BUILD:-build}
MPIV=$B/bin/mpiv
if ! /opt/mpiv/criu/criu check > /dev/null 2>&1 && [ -z "${MPIV_CRIU:-}" ]; then
	echo "CRIU does not work here (/opt/mpiv/criu/criu check fails)"
	exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-else.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; fail=1; }

"$B/bin/mpivcc" -O2 -o "$T/heat" tests/demo/heat.c || exit 1
# Both protocols, heat's steps scaled to about the same wall time (a
# direct job's messages are about 4x faster).
for proto in direct relay; do
	steps=60000
	[ "$proto" = direct ] && steps=240000
	P=(--protocol "$proto")
	timeout 120 "$MPIV" run "${P[@]}" -n 2 "$T/heat" "$steps" > "$T/ref.out" ||
	    { notok "$proto: failure-free run"; continue; }
	total=0
	for seed in 5 9; do
		MPIV_RELAUNCH_ELSEWHERE=1 timeout 180 "$MPIV" run "${P[@]}" -n 2 \
		    --nodes 4 --ckpt-interval 0.3 --chaos 1500ms --chaos-seed "$seed" \
		    --chaos-max 2 --log-level info --report "$T/r.json" \
		    "$T/heat" "$steps" > "$T/out" 2> "$T/err"
		rc=$?
		[ "$rc" = 0 ] && cmp -s "$T/out" "$T/ref.out" &&
		    ok "$proto, seed $seed: output identical, exit 0" ||
		    notok "$proto, seed $seed: rc $rc, output $(cmp -s "$T/out" "$T/ref.out" && echo same || echo different)"
		# Restores from a checkpoint, each onto another node than the last.
		n=$(grep -cE 'dispatcher relaunching .* restore_ckpt=[1-9]' "$T/err")
		moved=$(grep -E 'dispatcher relaunching .* restore_ckpt=[1-9]' "$T/err" |
		    sed -n 's/.* node=\([^ ]*\) prev_node=\([^ ]*\) .*/\1 \2/p' |
		    awk '$1 != $2' | wc -l)
		total=$((total + n))
		if [ "$moved" = "$n" ]; then
			ok "$proto, seed $seed: $n restore(s) from a checkpoint, all on another node"
		else
			notok "$proto, seed $seed: $n restore(s) from a checkpoint, $moved on another node"
			grep -E 'relaunch|checkpoint' "$T/err" | tail -n 8 | sed 's/^/#   /'
		fi
	done
	# A kill may land before a rank's first checkpoint; over the seeds,
	# some restore must have come from one, or this tested nothing.
	[ "$total" -gt 0 ] && ok "$proto: $total restores from a checkpoint in all" ||
	    notok "$proto: no restore from a checkpoint happened"
done
[ "$fail" = 0 ]
