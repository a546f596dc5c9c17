#!/usr/bin/env bash
# tests/fault/test_direct_pull.sh: large unexpected messages of direct
# jobs (docs/DIRECT.md, "Large unexpected messages"). With
# MPIV_UNEXPECTED_MAX=1M a receiver keeps at most 1 MiB of unexpected
# payloads; tests/fault/progs/flt_unexpected.c sends 8 x 256 KiB per rank
# and round before any receive is posted, so most are read past and
# pulled from their sender's log (DPull, DData) when received: by a
# Probe then Recv, by ANY_SOURCE receives (logged matches), into a vector
# type. Every word is checked by the program. Cases, each against the
# failure-free output of a relay job:
#   plain    no failure: the pulls happened (MPIV_DIRECT_DEBUG lines)
#   chaos    random kills: pulls asked again on new links, of senders
#            that run again (served once their re-execution sent it)
#   ckpt     checkpoints every 0.15 s and random kills: a checkpoint
#            never frees a sender's copy of a message pulled later
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_unexpected) || { flt_notok "cannot compile flt_unexpected"; flt_finish; }
ARGS=(40 8 256)
D=(--protocol direct)
export MPIV_UNEXPECTED_MAX=1M

flt_job "$FLT_TMP/ref" 90 -n 3 --protocol relay "$bin" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free relay run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }

MPIV_DIRECT_DEBUG=1 flt_job "$FLT_TMP/plain" 90 -n 3 "${D[@]}" "$bin" "${ARGS[@]}"
pulls=$(grep -c 'pulls message' "$FLT_TMP/plain.err")
grep -v '^rank [0-9]*: ' "$FLT_TMP/plain.out" > "$FLT_TMP/plain.cmp"
if [ "$FLT_RC" != 0 ]; then
	flt_notok "plain: exit $FLT_RC" "$FLT_TMP/plain.err"
elif [ "$pulls" -lt 100 ]; then
	flt_notok "plain: $pulls pulls (want most of the 8 x 3 x 40 messages)" "$FLT_TMP/plain.err"
else
	flt_same "plain: $pulls messages pulled from their senders' logs" "$FLT_TMP/ref.out" "$FLT_TMP/plain.cmp"
fi

kills=0
for seed in 1 2 3; do
	for c in chaos ckpt; do
		o=$FLT_TMP/$c.$seed
		opt=(--chaos 100ms --chaos-seed "$seed" --chaos-max 6)
		[ "$c" = ckpt ] && opt=(--ckpt-interval 0.15 --chaos 150ms --chaos-seed "$seed" --chaos-max 6)
		flt_job "$o" 120 -n 3 "${D[@]}" "${opt[@]}" "$bin" "${ARGS[@]}"
		k=$(flt_report "$o.json" kills)
		kills=$((kills + ${k:-0}))
		if [ "$FLT_RC" != 0 ]; then
			flt_notok "$c seed $seed: exit $FLT_RC (kills ${k:-?})" "$o.err"
		else
			flt_same "$c seed $seed: kills $k, restarts $(flt_report "$o.json" restarts), checkpoints $(flt_report "$o.json" checkpoints)" \
				"$FLT_TMP/ref.out" "$o.out"
		fi
	done
done
[ "$kills" -gt 0 ] && flt_ok "$kills kills in all" || flt_notok "no kill happened (tests nothing)"
flt_finish
