#!/usr/bin/env bash
# tests/fault/test_direct_log.sh: the direct protocol's logs of sent
# messages stay bounded. tests/fault/progs/flt_bigring.c passes 1 MiB
# messages around a ring of 3 ranks: 300 rounds put ~300 MiB in each
# sender's log; MPIV_SENDLOG_MAX caps each log at 48 MiB.
#   nockpt   no CRIU: no checkpoint can free a log, so a sender fails
#            with one error naming MPIV_SENDLOG_MAX (never a hang until
#            --timeout, never a wrong output)
#   ckpt     CRIU, no --ckpt-interval: a sender with a full log asks its
#            receivers for checkpoints (DCkptAsk) and waits for their
#            durability to free it (DTrim); the failure-free output
#   chaos    the same while ranks are killed at random (restores from
#            those checkpoints, resends from trimmed logs): same output
. "$(dirname "$0")/common.bash"

flt_need_chaos
ring=$(flt_prog flt_bigring) || { flt_notok "cannot compile flt_bigring"; flt_finish; }
ARGS=(300 1024)
CAP=48M
D=(--protocol direct)

flt_job "$FLT_TMP/ref" 90 -n 3 "${D[@]}" "$ring" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }

t0=$(date +%s)
MPIV_CRIU=/nonexistent MPIV_SENDLOG_MAX=$CAP flt_job "$FLT_TMP/nockpt" 90 -n 3 "${D[@]}" "$ring" "${ARGS[@]}"
secs=$(( $(date +%s) - t0 ))
if [ "$FLT_RC" = 0 ] || [ "$FLT_RC" = 124 ]; then
	flt_notok "nockpt: exit $FLT_RC after $secs s (want a failure)" "$FLT_TMP/nockpt.err"
elif ! grep -q 'the log of sent messages is full .*MPIV_SENDLOG_MAX' "$FLT_TMP/nockpt.err"; then
	flt_notok "nockpt: no error naming MPIV_SENDLOG_MAX" "$FLT_TMP/nockpt.err"
elif [ "$secs" -gt 40 ]; then
	flt_notok "nockpt: failed only after $secs s" "$FLT_TMP/nockpt.err"
else
	flt_ok "nockpt: exit $FLT_RC after $secs s: $(grep -m1 'MPIV_SENDLOG_MAX' "$FLT_TMP/nockpt.err" | cut -c1-140)..."
fi

CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	MPIV_SENDLOG_MAX=$CAP flt_job "$FLT_TMP/ckpt" 120 -n 3 "${D[@]}" "$ring" "${ARGS[@]}"
	ck=$(flt_report "$FLT_TMP/ckpt.json" checkpoints)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "ckpt: exit $FLT_RC" "$FLT_TMP/ckpt.err"
	elif [ "${ck:-0}" -lt 3 ]; then
		flt_notok "ckpt: only ${ck:-0} checkpoints for ~900 MiB sent under a $CAP log cap" "$FLT_TMP/ckpt.err"
	else
		flt_same "ckpt: ~300 MiB per sender under a $CAP log cap, $ck checkpoints asked by full logs" \
			"$FLT_TMP/ref.out" "$FLT_TMP/ckpt.out"
	fi

	MPIV_SENDLOG_MAX=$CAP flt_job "$FLT_TMP/chaos" 150 -n 3 "${D[@]}" --chaos 700ms --chaos-seed 7 \
		--chaos-max 6 "$ring" "${ARGS[@]}"
	kills=$(flt_report "$FLT_TMP/chaos.json" kills)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "chaos: exit $FLT_RC" "$FLT_TMP/chaos.err"
	elif [ "${kills:-0}" -lt 1 ]; then
		flt_notok "chaos: no kill happened" "$FLT_TMP/chaos.err"
	else
		flt_same "chaos: $kills kills under the $CAP log cap, $(flt_report "$FLT_TMP/chaos.json" checkpoints) checkpoints" \
			"$FLT_TMP/ref.out" "$FLT_TMP/chaos.out"
	fi
else
	echo "# ckpt and chaos cases skipped: $CRIU check fails here"
fi
flt_finish
