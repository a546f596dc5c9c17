#!/usr/bin/env bash
# tests/fault/test_replay_stream.sh: streaming replay (relay protocol,
# docs/REPLAY.md "Restart"): the home CM pushes a restarted rank's logged
# deliveries before it posts for them, at most MPIV_REPLAY_WINDOW ahead.
#
# tests/fault/progs/flt_stream.c: rank 1 receives from the others with
# every kind of logged decision (wildcard receives, Iprobe loops, Probe,
# Waitall, Test loops, cancels). Cases, each against the failure-free
# output:
#   window W   rank 1 killed entering MPI_Finalize, so its replay covers
#              the whole run, with MPIV_REPLAY_WINDOW = 0 (no streaming:
#              the report says no delivery went ahead), 1, 3 and the
#              default (deliveries went ahead: replayed_ahead > 0, and
#              never more than the events replayed);
#   again      killed once more during its replay (at a post, and while
#              reading a delivery), the third incarnation replays again;
#   chaos      random kills of every rank with a window of 2 (MTBF a
#              third of the failure-free run).
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_stream) || { flt_notok "cannot compile flt_stream"; flt_finish; }
MSGS=400
RUN=(-n 3 --protocol relay)

flt_job "$FLT_TMP/ref" 60 "${RUN[@]}" "$bin" "$MSGS"
if [ "$FLT_RC" != 0 ] || ! grep -q "got $((MSGS * 2)) messages" "$FLT_TMP/ref.out"; then
	flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err" "$FLT_TMP/ref.out"
	flt_finish
fi
flt_ok "failure-free run: $(grep -c . "$FLT_TMP/ref.out") lines"

# rlog OUT FIELD: restart_log[0].FIELD of OUT.json
rlog() { jq -r ".restart_log[0].$2 // empty" "$1.json" 2>/dev/null; }

# same OUT WHAT: exit 0 and the failure-free output
same() {
	if [ "$FLT_RC" != 0 ] || grep -q FLT-FAIL "$1.err"; then
		flt_notok "$2: exit $FLT_RC" "$1.err" "$1.out"
		return 1
	fi
	flt_same "$2" "$FLT_TMP/ref.out" "$1.out" || return 1
}

for w in 0 1 3 default; do
	out=$FLT_TMP/w$w
	# bash exports a prefix assignment to a function for its call
	if [ "$w" = default ]; then
		MPIV_FAULT=finalize:1:1 flt_job "$out" 60 "${RUN[@]}" "$bin" "$MSGS"
	else
		MPIV_FAULT=finalize:1:1 MPIV_REPLAY_WINDOW=$w flt_job "$out" 60 "${RUN[@]}" "$bin" "$MSGS"
	fi
	same "$out" "window $w: rank 1 killed at MPI_Finalize replays its whole run" || continue
	ev=$(rlog "$out" replayed_events) ah=$(rlog "$out" replayed_ahead)
	if [ -z "$ev" ] || [ "$ev" -lt "$MSGS" ]; then
		flt_notok "window $w: the report says ${ev:-no} events replayed (>= $MSGS expected)" "$out.json"
	elif [ "$w" = 0 ] && [ "$ah" != 0 ]; then
		flt_notok "window 0: $ah deliveries went ahead of their post" "$out.json"
	elif [ "$w" != 0 ] && { [ -z "$ah" ] || [ "$ah" -le 0 ] || [ "$ah" -gt "$ev" ]; }; then
		flt_notok "window $w: ${ah:-no} deliveries ahead of $ev events replayed" "$out.json"
	else
		flt_ok "window $w: $ev events replayed, $ah of them ahead of their post"
	fi
done

for at in post:300 deliver:200; do
	out=$FLT_TMP/again.${at%%:*}
	MPIV_FAULT="finalize:1:1,$at:1:2" flt_job "$out" 60 "${RUN[@]}" "$bin" "$MSGS"
	same "$out" "killed again during its replay ($at of incarnation 2)" || continue
	inc=$(jq -r '.per_rank[] | select(.rank == 1) | .incarnations' "$out.json" 2>/dev/null)
	if [ "$inc" != 3 ]; then
		flt_notok "killed again during its replay ($at): rank 1 ran ${inc:-?} incarnations, 3 expected" "$out.json"
	else
		flt_ok "killed again during its replay ($at): the third incarnation replayed again"
	fi
done

# MTBF: a third of the failure-free run (a few kills each)
ms=$(awk -v w="$(flt_report "$FLT_TMP/ref.json" wall_s)" 'BEGIN { printf "%d", w * 1000 / 3 }')
[ "${ms:-0}" -lt 25 ] && ms=25
kills=0
for seed in 5 6 7 8; do
	out=$FLT_TMP/chaos.$seed
	MPIV_REPLAY_WINDOW=2 flt_job "$out" 90 "${RUN[@]}" --chaos "${ms}ms" --chaos-seed "$seed" \
		--chaos-max 5 "$bin" "$MSGS"
	k=$(flt_report "$out.json" kills)
	kills=$((kills + ${k:-0}))
	same "$out" "window 2, --chaos ${ms}ms --chaos-seed $seed (kills ${k:-?})"
done
if [ "$kills" -gt 0 ]; then
	flt_ok "chaos with a window of 2: $kills kills"
else
	flt_notok "chaos with a window of 2: no kill happened (tests nothing)"
fi
flt_finish
