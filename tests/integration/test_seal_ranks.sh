#!/usr/bin/env bash
# tests/integration/test_seal_ranks.sh: the connections of ranks (to
# their Channel Memories; to each other in the direct protocol) and of
# the node's checkpoint uploads and restores are sealed (runtime/seal.h),
# and a job killed at random with checkpoints on still prints exactly
# what its failure-free run printed.
#
# Every process runs without the plaintext switch (MPIV_INSECURE_PLAINTEXT
# unset: a server refuses a dialler that picks no
# cipher, a dialler refuses a server that offers none) and with
# MPIV_SEAL_DEBUG=FILE, which makes every dialler (and every rank
# accepting a peer) append "mpiv-seal: WHO to PEER sealed CIPHER" to FILE
# once its handshake ended, or "... plaintext".
#
#   relay/ref, direct/ref     flt_ckpt failure-free: 0 plaintext lines,
#                             a sealed line per rank and CM; direct: one
#                             per end of every link between ranks
#   relay/chaos, direct/chaos --chaos 700ms --chaos-max 3 (and
#                             --ckpt-interval 0.3 when CRIU works): the
#                             same output and exit code, kills happened,
#                             0 plaintext lines; the incarnations that
#                             reached a CM did so sealed: each rank's
#                             last one (it ran to the end) and every one
#                             whose replay the report records (chaos may
#                             kill an incarnation still being restored,
#                             which never dials); checkpoints: sealed
#                             uploads ("node to CS")
#
#   MPIV_BUILD=build-x bash tests/integration/test_seal_ranks.sh
. "$(dirname "$0")/../fault/common.bash"

flt_need_chaos
unset MPIV_INSECURE_PLAINTEXT
BIN=$(flt_prog flt_ckpt) || { flt_notok "cannot build flt_ckpt"; flt_finish; }
NP=3
CK=()
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	CK=(--ckpt-interval 0.3)
else
	echo "# $CRIU check fails: kills without checkpoints"
fi

# lines FILE REGEX: how many mpiv-seal lines of FILE match REGEX
lines() {
	[ -f "$1" ] || { echo 0; return; }
	grep -E "mpiv-seal: " "$1" | grep -cE "$2"
}

for proto in relay direct; do
	args=(12000 8 2000)	# about 2 s here
	[ "$proto" = direct ] && args=(36000 8 2000)
	r=$FLT_TMP/ref.$proto
	export MPIV_SEAL_DEBUG=$r.seal
	flt_job "$r" 120 -n "$NP" --protocol "$proto" "$BIN" "${args[@]}"
	if [ "$FLT_RC" != 0 ] || [ ! -s "$r.out" ] || grep -q FLT-FAIL "$r.err"; then
		flt_notok "$proto/ref: the failure-free run failed (exit $FLT_RC)" "$r.err"
		continue
	fi
	plain=$(lines "$r.seal" ' plaintext$')
	cms=$(lines "$r.seal" 'mpiv-seal: rank [0-9]+ incarnation [0-9]+ to [^ ]+ sealed ')
	links=$(lines "$r.seal" 'mpiv-seal: rank [0-9]+ incarnation [0-9]+ to rank [0-9]+.* sealed ')
	want_links=0
	[ "$proto" = direct ] && want_links=$((NP * (NP - 1)))
	if [ "$plain" = 0 ] && [ "$cms" -ge "$NP" ] &&
	    [ "$links" -ge "$want_links" ]; then
		flt_ok "$proto/ref: sealed: $cms rank-CM connections, $links link ends, 0 plaintext"
	else
		flt_notok "$proto/ref: $plain plaintext, $cms rank-CM connections sealed (want >= $NP), $links link ends (want >= $want_links)" "$r.seal" "$r.err"
	fi

	o=$FLT_TMP/chaos.$proto
	export MPIV_SEAL_DEBUG=$o.seal
	what="$proto/chaos (--chaos 700ms --chaos-max 3 ${CK[*]})"
	flt_job "$o" 120 -n "$NP" --protocol "$proto" --chaos 700ms \
		--chaos-seed 5 --chaos-max 3 "${CK[@]}" "$BIN" "${args[@]}"
	if [ "$FLT_RC" != 0 ] || grep -q FLT-FAIL "$o.err"; then
		flt_notok "$what: exit $FLT_RC" "$o.err" "$o.json"
		continue
	fi
	flt_same "$what: output" "$r.out" "$o.out"
	kills=$(flt_report "$o.json" kills)
	restarts=$(flt_report "$o.json" restarts)
	ckpts=$(flt_report "$o.json" checkpoints)
	plain=$(lines "$o.seal" ' plaintext$')
	cms=$(lines "$o.seal" 'mpiv-seal: rank [0-9]+ incarnation [0-9]+ to [^ ]+ sealed ')
	ups=$(lines "$o.seal" 'mpiv-seal: node to [^ ]+ sealed ')
	# "R I": each rank's last incarnation and every replayed one
	want=$(jq -r '.events as $e |
	    ($e | map(select(.kind == "launch")) | group_by(.rank) | map(max_by(.incarnation))) +
	    ($e | map(select(.kind == "replay_done"))) |
	    map("\(.rank) \(.incarnation)") | unique | .[]' "$o.json" 2>/dev/null)
	sealed=$(grep -E 'mpiv-seal: rank [0-9]+ incarnation [0-9]+ to [^ ]+ sealed ' "$o.seal" 2>/dev/null |
	    grep -v ' to rank [0-9]' | awk '{ print $3, $5 }' | sort -u)
	missing=$(comm -23 <(echo "$want" | sort -u) <(echo "$sealed"))
	nwant=$(echo "$want" | grep -c .)
	echo "# $what: kills ${kills:-?} restarts ${restarts:-?} checkpoints ${ckpts:-?}; sealed: $cms rank-CM, $ups node-CS; incarnations to check: $nwant"
	if [ "${kills:-0}" -gt 0 ] && [ "${restarts:-0}" -gt 0 ] &&
	    [ "$plain" = 0 ] && [ "$nwant" -gt "$NP" ] && [ -z "$missing" ]; then
		flt_ok "$what: every connection sealed, $nwant incarnations (restarted ones too) reached their CM sealed"
	else
		flt_notok "$what: kills ${kills:-?} restarts ${restarts:-?}, $plain plaintext, $nwant incarnations to check (want > $NP), not sealed to a CM: ${missing:-none}" "$o.seal" "$o.err"
	fi
	if [ ${#CK[@]} -gt 0 ]; then
		if [ "${ckpts:-0}" -gt 0 ] && [ "$ups" -ge "$ckpts" ]; then
			flt_ok "$what: $ckpts checkpoints, each uploaded sealed"
		else
			flt_notok "$what: ${ckpts:-?} checkpoints, $ups sealed uploads" "$o.seal" "$o.err"
		fi
	fi
done
flt_finish
