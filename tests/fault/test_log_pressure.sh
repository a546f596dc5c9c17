#!/usr/bin/env bash
# tests/fault/test_log_pressure.sh: a message log bigger than the CM's
# memory cap. tests/fault/progs/flt_bigring.c passes
# 1 MiB messages around a ring of 3 ranks: 300 rounds log ~900 MiB, the
# CMs here get --cm-max-memory 64M.
#   nockpt     no CRIU (MPIV_CRIU=/nonexistent) and no spilling
#              (MPIV_CM_SPILL_DIR=off): the job cannot free its log, so it
#              fails within seconds with one line naming the CM, the cap
#              and the way out (never a hang until --timeout)
#   spill      no CRIU, payloads spilled to disk beyond half the cap, while
#              ranks are killed at random (their replays read the spilled
#              payloads back): the failure-free output
#   pressure   CRIU, no --ckpt-interval: the CM asks the dispatcher for
#              checkpoints of the ranks with the largest logs; the job
#              completes with the failure-free output
#   chaos      the same while ranks are killed at random (restores from
#              the checkpoints pressure asked for): same output
#   blocked    --ckpt-interval 0.5: a rank that waits inside MPI_Recv for
#              4.5 s (its peer computes outside MPI) is checkpointed while
#              it waits, not only when its next MPI call starts
. "$(dirname "$0")/common.bash"
# what it tests is the relay's (the CMs hold the messages): every job relay
FLT_PROTOCOL=relay

flt_need_chaos
ring=$(flt_prog flt_bigring) || { flt_notok "cannot compile flt_bigring"; flt_finish; }
blocked=$(flt_prog flt_blocked) || { flt_notok "cannot compile flt_blocked"; flt_finish; }
CAP=64M
ARGS=(300 1024)

flt_job "$FLT_TMP/ref" 60 -n 3 "$ring" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }

# nockpt: one line, quickly
t0=$(date +%s)
MPIV_CRIU=/nonexistent MPIV_CM_SPILL_DIR=off flt_job "$FLT_TMP/nockpt" 60 -n 3 --cm-max-memory "$CAP" "$ring" "${ARGS[@]}"
secs=$(( $(date +%s) - t0 ))
line="^mpiv: channel memory [0-9.:]*: the message log of job [^ ]* fills its --max-memory \([0-9]+ of 67108864 bytes\), and only checkpoints free a log, which this job cannot take \(node [^ ]* has no working CRIU\); raise the cap"
if [ "$FLT_RC" != 1 ]; then
	flt_notok "nockpt: exit $FLT_RC after $secs s (want 1)" "$FLT_TMP/nockpt.err"
elif [ "$(grep -cE "$line" "$FLT_TMP/nockpt.err")" != 1 ] || [ "$(grep -c '^mpiv: ' "$FLT_TMP/nockpt.err")" != 1 ]; then
	flt_notok "nockpt: not exactly one 'mpiv:' line, naming the cap" "$FLT_TMP/nockpt.err"
elif [ "$secs" -gt 15 ]; then
	flt_notok "nockpt: failed only after $secs s" "$FLT_TMP/nockpt.err"
else
	flt_ok "nockpt: exit 1 after $secs s: $(grep -m1 '^mpiv: ' "$FLT_TMP/nockpt.err" | cut -c1-120)..."
fi

# spill: from disk, under kills
MPIV_CRIU=/nonexistent MPIV_CM_SPILL_DIR="$FLT_TMP" flt_job "$FLT_TMP/spill" 90 -n 3 \
	--log-level info --cm-max-memory "$CAP" --chaos 500ms --chaos-seed 3 "$ring" "${ARGS[@]}"
spilled=$(sed -n 's/.*cm job end .*spill_bytes=\([0-9]*\).*/\1/p' "$FLT_TMP/spill.err" | head -n 1)
if [ "$FLT_RC" != 0 ]; then
	flt_notok "spill: exit $FLT_RC" "$FLT_TMP/spill.err"
elif [ "${spilled:-0}" -lt $((256 << 20)) ]; then
	flt_notok "spill: only ${spilled:-0} bytes spilled of ~900 MiB under a 64 MiB cap" "$FLT_TMP/spill.err"
elif ls "$FLT_TMP"/mpiv-cm-spill.* > /dev/null 2>&1; then
	flt_notok "spill: a spill file was left in the spill directory" "$FLT_TMP/spill.err"
else
	flt_same "spill: $((spilled >> 20)) MiB spilled, $(flt_report "$FLT_TMP/spill.json" kills) kills replayed from disk" \
		"$FLT_TMP/ref.out" "$FLT_TMP/spill.out"
fi

CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	flt_job "$FLT_TMP/pressure" 90 -n 3 --cm-max-memory "$CAP" "$ring" "${ARGS[@]}"
	ck=$(flt_report "$FLT_TMP/pressure.json" checkpoints)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "pressure: exit $FLT_RC" "$FLT_TMP/pressure.err"
	elif [ "${ck:-0}" -lt 3 ]; then
		flt_notok "pressure: only ${ck:-0} checkpoints for ~900 MiB of log under a 64 MiB cap" "$FLT_TMP/pressure.err"
	else
		flt_same "pressure: ~900 MiB logged under a 64 MiB cap, $ck checkpoints asked by the CM" "$FLT_TMP/ref.out" "$FLT_TMP/pressure.out"
	fi

	flt_job "$FLT_TMP/chaos" 90 -n 3 --cm-max-memory "$CAP" --chaos 400ms --chaos-seed 7 \
		"$ring" "${ARGS[@]}"
	kills=$(flt_report "$FLT_TMP/chaos.json" kills)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "chaos: exit $FLT_RC" "$FLT_TMP/chaos.err"
	else
		flt_same "chaos: ${kills:-0} kills under the 64 MiB cap, $(flt_report "$FLT_TMP/chaos.json" checkpoints) checkpoints" \
			"$FLT_TMP/ref.out" "$FLT_TMP/chaos.out"
	fi

	flt_job "$FLT_TMP/blocked" 60 -n 2 --log-level info --ckpt-interval 0.5 "$blocked" 3 1500
	n0=$(grep -c 'dispatcher checkpoint durable job=[^ ]* rank=0 ' "$FLT_TMP/blocked.err")
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "blocked: exit $FLT_RC" "$FLT_TMP/blocked.err"
	elif [ "$n0" -lt 6 ]; then
		flt_notok "blocked: rank 0 checkpointed $n0 times in ~4.5 s spent inside MPI_Recv at an interval of 0.5 s (want >= 6)" "$FLT_TMP/blocked.err"
	else
		flt_ok "blocked: rank 0 checkpointed $n0 times while waiting inside MPI_Recv"
	fi
else
	echo "# pressure, chaos and blocked cases skipped: $CRIU check fails here"
fi
flt_finish
