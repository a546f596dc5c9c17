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
#   node-gone   a rank's node agent dies while the rank waits in its
#               output sync (MPIV_SERVER_FAULT=node-out-sync: the agent
#               closes the rank's control pipes, stalls a second without
#               reading or reaping, then dies): the rank must leave at
#               once, not go on to the job's close, since what it prints
#               from then on (here: a line after MPI_Finalize) lies in
#               pipes nobody reads. Before, it went on, the job closed,
#               its relaunch left at MPI_Init, and the job exited 0
#               without that line (seen in `make soak`, a node kill)
#   returned    MPIV_FAULT=returned: the program's process, forked at the
#               end of MPI_Finalize, killed before it returns (its rank's
#               process keeps the log, and dies with it): the rank runs
#               again, the line it prints after MPI_Finalize comes once
#   closed-after  MPIV_FAULT=closed with that line: the kill comes after
#               the job closed, which is now after the program's process
#               ended; before, the line was lost and the job exited 0
#               (MPIV_FINALIZE_FORK=0 still shows it)
#   exit-after, segv-after  the program's process exits 3, or dies of
#               SIGSEGV, after MPI_Finalize: the job ends with 3 or 139,
#               as without the fork, and with the lines the other ranks
#               print 0.3 s later (a keeper that died at once with its
#               SIGSEGV failed the job before them: seen under load)
#   relay-exit-after, relay-segv-after  the same in a relay job: the
#               rank says it finished MPI_Finalize on its control pipe,
#               and the dispatcher fails the job only once the other
#               ranks ended (it failed it at once, their lines lost);
#               relay-exit-wait: they end 4 s later, and mpiv run says
#               meanwhile why the job still runs
#   exit-closed, segv-closed  the same, and its rank is killed after the
#               job closed: the relaunch leaves at MPI_Init with the code
#               its FinWait gave (it left with 0 before), or dies of the
#               same signal
#   fork, no-fork  flt_finfork prints each rank's pid before and after
#               MPI_Finalize: they differ (the program went on in a
#               forked process), and are the same when a second thread
#               lives across MPI_Finalize (such a rank does not fork)
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

ring=$(flt_prog flt_ring) || { flt_notok "cannot compile flt_ring"; flt_finish; }
flt_job "$FLT_TMP/ref-after" 90 -n 3 "${D[@]}" "$ring" 300 3000 1
if [ "$FLT_RC" != 0 ] || [ "$(grep -c 'after MPI_Finalize' "$FLT_TMP/ref-after.out")" != 3 ]; then
	flt_notok "node-gone: failure-free run: exit $FLT_RC" "$FLT_TMP/ref-after.err"
else
	o=$FLT_TMP/node-gone
	mkdir -p "$o.fault"
	MPIV_SERVER_FAULT=node-out-sync:1 MPIV_SERVER_FAULT_DIR=$o.fault \
		flt_job "$o" 90 -n 3 --nodes 4 "${D[@]}" "$ring" 300 3000 1
	r=$(flt_report "$o.json" restarts)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "node-gone: exit $FLT_RC" "$o.err"
	elif [ ! -e "$o.fault/node-out-sync" ]; then
		flt_notok "node-gone: the fault point never fired" "$o.err"
	elif [ "${r:-0}" -lt 1 ]; then
		flt_notok "node-gone: no restart in the report" "$o.json"
	else
		# (untagged: the ranks' lines after MPI_Finalize come in any order)
		flt_same "node-gone: $r restart(s), every line printed once" \
			<(LC_ALL=C sort "$FLT_TMP/ref-after.out") <(LC_ALL=C sort "$o.out")
	fi
	for c in returned:returned:1:1 closed-after:closed:1:1; do
		name=${c%%:*} fault=${c#*:} o=$FLT_TMP/${c%%:*}
		MPIV_FAULT=$fault MPIV_FAULT_LOG=$o.flog \
			flt_job "$o" 90 -n 3 "${D[@]}" "$ring" 300 3000 1
		r=$(flt_report "$o.json" restarts)
		if [ "$FLT_RC" != 0 ]; then
			flt_notok "$name ($fault): exit $FLT_RC" "$o.err"
		elif ! grep -q "^fault ${fault%%:*}:" "$o.flog" 2>/dev/null; then
			flt_notok "$name ($fault): the fault point never fired" "$o.err"
		elif [ "${r:-0}" -lt 1 ]; then
			flt_notok "$name ($fault): no restart in the report" "$o.json"
		else
			flt_same "$name ($fault): $r restart(s), every line after MPI_Finalize printed once" \
				<(LC_ALL=C sort "$FLT_TMP/ref-after.out") <(LC_ALL=C sort "$o.out")
		fi
	done
	for c in exit-after:2:3:-:"rank 1 exited with code 3" \
	    segv-after:3:139:-:"rank 1 killed by signal 11" \
	    exit-closed:2:3:closed:"rank 1 exited with code 3" \
	    segv-closed:3:139:closed:"rank 1 killed by signal 11" \
	    relay-exit-after:2:3:-:"rank 1 exited with code 3" \
	    relay-segv-after:3:139:-:"rank 1 killed by signal 11" \
	    relay-exit-wait:4:3:-:"is waiting: rank 1 exited with code 3 after MPI_Finalize; the job ends with that once the other ranks do (2 still running, the first rank 0)"; do
		IFS=: read -r name arg code fault msg <<< "$c"
		o=$FLT_TMP/$name
		rm -f "$o.flog"
		if [ "${name#relay-}" != "$name" ]; then
			# the relay protocol: the node tells the dispatcher the
			# rank finished MPI_Finalize, which lets the others end
			flt_job "$o" 90 -n 3 --protocol relay "$ring" 300 3000 "$arg"
		elif [ "$fault" = - ]; then
			flt_job "$o" 90 -n 3 "${D[@]}" "$ring" 300 3000 "$arg"
		else
			MPIV_FAULT=$fault:1:1 MPIV_FAULT_LOG=$o.flog \
				flt_job "$o" 90 -n 3 "${D[@]}" "$ring" 300 3000 "$arg"
		fi
		if [ "$fault" != - ] && ! grep -q "^fault $fault:" "$o.flog" 2>/dev/null; then
			flt_notok "$name ($fault): the fault point never fired" "$o.err"
		elif [ "$FLT_RC" != "$code" ]; then
			flt_notok "$name: exit $FLT_RC, not $code" "$o.err"
		elif ! grep -q "$msg" "$o.err"; then
			flt_notok "$name: no \"$msg\" on stderr" "$o.err"
		else
			flt_same "$name: exit $code, \"$msg\", every line printed" \
				<(LC_ALL=C sort "$FLT_TMP/ref-after.out") <(LC_ALL=C sort "$o.out")
		fi
	done
fi

ff=$(flt_prog flt_finfork) || { flt_notok "cannot compile flt_finfork"; flt_finish; }
for c in fork:0 no-fork:1; do
	name=${c%%:*} o=$FLT_TMP/${c%%:*}
	flt_job "$o" 60 -n 2 "${D[@]}" "$ff" "${c#*:}"
	differ=0 same=0
	for r in 0 1; do
		b=$(sed -n "s/^rank $r pid \([0-9]*\) before\$/\1/p" "$o.out")
		a=$(sed -n "s/^rank $r pid \([0-9]*\) after\$/\1/p" "$o.out")
		if [ -z "$b" ] || [ -z "$a" ]; then
			:
		elif [ "$b" = "$a" ]; then
			same=$((same + 1))
		else
			differ=$((differ + 1))
		fi
	done
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$name: exit $FLT_RC" "$o.err"
	elif [ "$name" = fork ] && [ "$differ" != 2 ]; then
		flt_notok "$name: $differ of 2 ranks went on past MPI_Finalize in another process" "$o.out"
	elif [ "$name" = no-fork ] && [ "$same" != 2 ]; then
		flt_notok "$name: $same of 2 ranks with a second thread went on in their own process" "$o.out"
	else
		flt_ok "$name: every rank's program went on past MPI_Finalize $([ "$name" = fork ] && echo "in a forked process" || echo "in its own process (a second thread)")"
	fi
done
flt_finish
