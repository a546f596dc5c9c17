#!/usr/bin/env bash
# tests/fault/test_direct_finalize.sh: kills around the end of a direct
# job (docs/DIRECT.md, "Finalize"). Senders' logs die with them, so no
# rank may leave while another may still run again, and a rank killed
# after the job's end was decided must not run again. Each case: the
# output and exit code of a failure-free run, and a restart.
#   finalize    MPIV_FAULT=finalize (entering MPI_Finalize, nothing
#               committed): the relaunched rank runs again from the start;
#               its peers wait for it in their final rounds
#   committed   MPIV_FAULT=committed (its commit stored, the job not
#               closed): the relaunched incarnation runs again (a peer may
#               still need its messages) and replays its commit
#   committed-peer  rank 0 killed after its commit and rank 2 after every
#               DBye came but before its own (MPIV_FAULT=bye): rank 2 runs
#               again from the start and needs rank 0's messages, which
#               only rank 0's re-execution can give (a relaunched rank 0
#               that left at once because it had committed hung the job)
#   closed      MPIV_FAULT=closed (every rank waits at the end, FinGo
#               given): the relaunched incarnation leaves at MPI_Init
#   committed-ckpt  as committed, with checkpoints: the rank is restored
#               from its last durable checkpoint and runs on from there
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_ckpt) || { flt_notok "cannot compile flt_ckpt"; flt_finish; }
ARGS=(20000 4 2000)
D=(--protocol direct)

flt_job "$FLT_TMP/ref" 90 -n 3 "${D[@]}" "$bin" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }

# case NAME FAULT [mpiv run options...]
case_run() {
	local name=$1 fault=$2
	shift 2
	local o=$FLT_TMP/$name r
	MPIV_FAULT=$fault MPIV_FAULT_LOG=$o.flog flt_job "$o" 90 -n 3 "${D[@]}" "$@" \
		"$bin" "${ARGS[@]}"
	r=$(flt_report "$o.json" restarts)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$name ($fault): exit $FLT_RC" "$o.err" "$o.flog"
	elif ! grep -q "^fault ${fault%%:*}:" "$o.flog" 2>/dev/null; then
		flt_notok "$name ($fault): the fault point never fired" "$o.err"
	elif [ "${r:-0}" -lt 1 ]; then
		flt_notok "$name ($fault): no restart in the report" "$o.json"
	else
		flt_same "$name ($fault): $r restart(s), $(flt_report "$o.json" checkpoints) checkpoints" \
			"$FLT_TMP/ref.out" "$o.out"
	fi
}

case_run finalize finalize:1:1
case_run committed committed:1:2
case_run committed-peer committed:1:0,bye:1:2
case_run closed closed:1:1
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	case_run committed-ckpt committed:1:0 --ckpt-interval 0.3
	o=$FLT_TMP/committed-ckpt
	fc=$(jq -r '[.restart_log[]? | .from_ckpt] | map(tostring) | join(" ")' "$o.json" 2>/dev/null)
	if [ -n "$fc" ] && [ "$fc" != 0 ]; then
		flt_ok "committed-ckpt: relaunched from checkpoint $fc"
	else
		flt_notok "committed-ckpt: not relaunched from a checkpoint (from_ckpt '$fc')" "$o.json"
	fi
else
	echo "# committed-ckpt skipped: $CRIU check fails here"
fi
flt_finish
