#!/usr/bin/env bash
# tests/fault/test_server_faults.sh: the servers killed inside their
# durability windows, at named fault points (MPIV_SERVER_FAULT,
# runtime/srvfault.c), each once (MPIV_SERVER_FAULT_DIR), in a job whose
# CMs keep a store (--cm-store write), with checkpoints when CRIU works.
# The embedded deployment starts a killed CM again on its store. Each
# case: exit 0, the output (tagged, sorted by rank) equal to the
# failure-free run, the kill seen (its once-file exists), and for a CM
# one "continues" line (the job went on on the recovered store).
#   cm-stored     after the records of a read are written, before the
#                 answers leave
#   cm-payload    after a payload is written
#   cm-flush      on a rank's Flush (a checkpoint or MPI_Finalize), before
#                 the FlushAck
#   cm-trim       after a durable checkpoint's trim is stored, before the
#                 log is freed (CRIU only)
#   recovery      cm-stored, then the CM started again killed right after
#                 its recovery (cm-recovered): a kill during recovery
#   cs-stored     the checkpoint server after an image is in place, before
#                 it tells anyone (CRIU only), with ranks killed at random:
#                 the embedded deployment starts it again on its store,
#                 restores come from it
. "$(dirname "$0")/common.bash"
# what it tests is the relay's (the CMs hold the messages): every job relay
FLT_PROTOCOL=relay

flt_need_chaos
bin=$(flt_prog flt_stencil) || { flt_notok "cannot compile flt_stencil"; flt_finish; }
ARGS=(6000 4000)
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
CKPT=()
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	CKPT=(--ckpt-interval 0.3)
else
	echo "# no working CRIU ($CRIU check fails): cases without checkpoints only"
fi

flt_job "$FLT_TMP/ref" 60 -n 4 --cms 2 --tag-output "$bin" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }
flt_norm "$FLT_TMP/ref.out" > "$FLT_TMP/ref.norm"

# point NAME FAULTS CM_LOSSES [fired-names...]: the job (with the
# options in EXTRA too) under MPIV_SERVER_FAULT=FAULTS; CM_LOSSES
# "continues" lines expected.
EXTRA=()
point() {
	local name=$1 faults=$2 losses=$3 out=$FLT_TMP/$1 once=$FLT_TMP/once-$1 f
	shift 3
	mkdir -p "$once"
	MPIV_SERVER_FAULT=$faults MPIV_SERVER_FAULT_DIR=$once \
		flt_job "$out" 90 -n 4 --cms 2 --cm-store write --tag-output \
		"${CKPT[@]}" "${EXTRA[@]}" "$bin" "${ARGS[@]}"
	flt_norm "$out.out" > "$out.norm"
	for f in "$@"; do
		if [ ! -e "$once/$f" ]; then
			flt_notok "$name: the fault point $f was never reached" "$out.err"
			return
		fi
	done
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$name: exit $FLT_RC" "$out.err"
	elif [ "$(grep -c 'continues: channel memory' "$out.err")" != "$losses" ]; then
		flt_notok "$name: want $losses 'continues' lines" "$out.err"
	elif grep -q 'runs again from the beginning' "$out.err"; then
		flt_notok "$name: the job started over instead of continuing" "$out.err"
	else
		flt_same "$name: $(flt_report "$out.json" restarts) rank restarts, $(flt_report "$out.json" checkpoints) checkpoints" \
			"$FLT_TMP/ref.norm" "$out.norm"
	fi
}

point cm-stored cm-stored:300 1 cm-stored
point cm-payload cm-payload:400 1 cm-payload
point cm-flush cm-flush:3 1 cm-flush
point recovery cm-stored:200,cm-recovered:1 1 cm-stored cm-recovered
if [ ${#CKPT[@]} -gt 0 ]; then
	point cm-trim cm-trim:2 1 cm-trim
	# rank kills too: restores come from the CS started again
	EXTRA=(--chaos 600ms --chaos-seed 3)
	point cs-stored cs-stored:2 0 cs-stored
	EXTRA=()
fi
flt_finish
