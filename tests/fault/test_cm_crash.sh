#!/usr/bin/env bash
# tests/fault/test_cm_crash.sh: a Channel Memory killed with SIGKILL in the
# middle of a job (issue 10, item 2). The embedded deployment starts it
# again at the same address; the dispatcher makes the job start over from
# the beginning on it (dispatcher/disp_regen.c): every rank killed and
# launched again with a new incarnation, the surviving CMs reset, the
# output still exactly once. Each case: exit 0, output (tagged, sorted by
# rank) equal to the failure-free run, one "lost ... starts over" line per
# CM kill.
#   one        one of 2 CMs killed once
#   twice      a CM killed, then killed again right after the job started
#              over (kills during the recovery)
#   ranks      a CM killed while ranks are killed at random (--chaos)
#   finished   tests/fault/progs/flt_early.c: every rank but 0 has
#              finished when the CM dies; they run again too (rank 0 needs
#              their messages, which were in the lost logs)
#   ckpt       with checkpoints every 0.3 s (CRIU): images of the run that
#              was lost are never restored; later kills restore the new
#              run's images
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_stencil) || { flt_notok "cannot compile flt_stencil"; flt_finish; }
ARGS=(6000 4000)	# ~3 s here

flt_job "$FLT_TMP/ref" 60 -n 4 --cms 2 --tag-output "$bin" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }
flt_norm "$FLT_TMP/ref.out" > "$FLT_TMP/ref.norm"

# cm_pid PID [INDEX]: pid of the embedded CM number INDEX (default 0)
# among the descendants of PID (timeout -> mpiv run -> daemons)
cm_pid() {
	local p q
	for p in $(pgrep -P "$1" 2> /dev/null); do
		for q in $(pgrep -P "$p" 2> /dev/null); do
			if tr '\0' ' ' < "/proc/$q/cmdline" 2> /dev/null | grep -q ' cm --listen '; then
				echo "$q"
			fi
		done
	done | sed -n "$((${2:-0} + 1))p"
}
lines_at_least() { [ "$(grep -c . "$1" 2> /dev/null)" -ge "$2" ]; }
said_over() { [ "$(grep -c 'runs again from the beginning' "$1")" -ge "$2" ]; }

# crash NAME KILLS MPIV_RUN_OPTIONS...: runs the job, kills CM 0 KILLS
# times (each after the previous start-over was said), checks the result.
crash() {
	local name=$1 kills=$2 out=$FLT_TMP/$1 pid cm k
	shift 2
	rm -f "$out".*
	timeout -k 5 150 "$MPIV" run --report "$out.json" --timeout 120 -n 4 --cms 2 \
		--tag-output "$@" "$bin" "${ARGS[@]}" < /dev/null > "$out.out" 2> "$out.err" &
	pid=$!
	FLT_BG_PIDS=("$pid")
	for k in $(seq 1 "$kills"); do
		if ! flt_wait_for 30 lines_at_least "$out.out" $((2 * k)); then
			break
		fi
		cm=$(cm_pid "$pid" 0)
		[ -n "$cm" ] && kill -9 "$cm"
		flt_wait_for 30 said_over "$out.err" "$k" || break
	done
	wait "$pid"
	FLT_RC=$?
	FLT_BG_PIDS=()
	local lost over
	lost=$(grep -c '^mpiv: channel memory [0-9.:]* lost with the job.s message logs: every rank starts over' "$out.err")
	over=$(grep -c '^mpiv: job [^ ]* runs again from the beginning' "$out.err")
	flt_norm "$out.out" > "$out.norm"
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$name: exit $FLT_RC" "$out.err"
	elif [ "$lost" != "$kills" ] || [ "$over" != "$kills" ]; then
		flt_notok "$name: $lost 'lost' and $over 'runs again' lines for $kills CM kills" "$out.err"
	elif grep -q "re-execution printed other" "$out.err"; then
		flt_notok "$name: the dispatcher saw a rank print other output when it started over" "$out.err"
	else
		flt_same "$name: $kills CM kills, $(flt_report "$out.json" restarts) rank restarts, $(flt_report "$out.json" kills) rank kills, $(flt_report "$out.json" checkpoints) checkpoints" \
			"$FLT_TMP/ref.norm" "$out.norm"
	fi
}

crash one 1
crash twice 2

# finished: the early finishers' output is empty; rank 0's is compared
early=$(flt_prog flt_early) || { flt_notok "cannot compile flt_early"; flt_finish; }
flt_job "$FLT_TMP/early.ref" 60 -n 4 --cms 2 "$early" 300 10000
out=$FLT_TMP/early
timeout -k 5 120 "$MPIV" run --report "$out.json" --timeout 90 -n 4 --cms 2 "$early" 300 10000 \
	< /dev/null > "$out.out" 2> "$out.err" &
pid=$!
FLT_BG_PIDS=("$pid")
if flt_wait_for 30 lines_at_least "$out.out" 2; then
	cm=$(cm_pid "$pid" 0)
	[ -n "$cm" ] && kill -9 "$cm"
fi
wait "$pid"
FLT_RC=$?
FLT_BG_PIDS=()
if [ "$FLT_RC" != 0 ]; then
	flt_notok "finished: exit $FLT_RC" "$out.err"
elif ! grep -q 'runs again from the beginning' "$out.err"; then
	flt_notok "finished: the CM kill did not make the job start over" "$out.err"
else
	flt_same "finished: ranks that had finished ran again" "$FLT_TMP/early.ref.out" "$out.out"
fi

crash ranks 1 --chaos 700ms --chaos-seed 11
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	crash ckpt 1 --ckpt-interval 0.3 --chaos 400ms --chaos-seed 5
	restored=$(jq '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$FLT_TMP/ckpt.json" 2> /dev/null)
	echo "# ckpt: ${restored:-0} restarts restored a checkpoint"
else
	echo "# ckpt case skipped: $CRIU check fails here"
fi
flt_finish
