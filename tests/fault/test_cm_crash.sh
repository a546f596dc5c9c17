#!/usr/bin/env bash
# tests/fault/test_cm_crash.sh: a Channel Memory killed with SIGKILL in the
# middle of a job. The embedded deployment starts it
# again at the same address, on the same store (--cm-store write: mpiv cm
# --store): it recovers its jobs' logs and the job continues, every rank
# restarted from its last checkpoint or the beginning and replaying
# (channel-memory/recover.c, dispatcher/disp_regen.c). Without a store
# (--cm-store off, the default) the job starts over from the beginning
# instead. Each
# case: exit 0, output (tagged, sorted by rank) equal to the failure-free
# run, one "lost" line and one "continues" (or "runs again") line per
# CM kill.
#   one        one of 2 CMs killed once
#   twice      a CM killed, then killed again right after the job went on
#              (kills during the recovery)
#   fsync      one kill, the store synced to disk before every answer
#   ranks      a CM killed while ranks are killed at random (--chaos)
#   finished   tests/fault/progs/flt_early.c: every rank but 0 has
#              finished when the CM dies; they are not run again (their
#              messages are in the stores). In a direct job they still
#              wait in MPI_Finalize (none leaves before all do, their
#              logs may be needed: docs/DIRECT.md) and run again like the
#              others; only the output is compared there
#   ckpt       with checkpoints every 0.3 s (CRIU) and random rank kills:
#              ranks restart from their images on the recovered logs
#   over, over_twice, over_ranks, over_ckpt: the same without a store:
#              the job starts over; images of the lost run are never
#              restored
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_stencil) || { flt_notok "cannot compile flt_stencil"; flt_finish; }
ARGS=(6000 4000)	# ~3 s here

flt_job "$FLT_TMP/ref" 60 -n 4 --cms 2 --tag-output "$bin" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }
flt_norm "$FLT_TMP/ref.out" > "$FLT_TMP/ref.norm"
# fsync in the relay protocol: every answer of the CM waits for the disk
# (about 9x slower here): half the steps, against its own failure-free
# run. (A direct job logs only its few non-deterministic events: with
# half the steps it can end before the kill.)
FS_NAME=ARGS FS_REF=$FLT_TMP/ref.norm
if [ "$(flt_report "$FLT_TMP/ref.json" protocol)" = relay ]; then
	FS_ARGS=(3000 4000)
	flt_job "$FLT_TMP/ref.fs" 60 -n 4 --cms 2 --tag-output "$bin" "${FS_ARGS[@]}"
	[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run (fsync's): exit $FLT_RC" "$FLT_TMP/ref.fs.err"; flt_finish; }
	flt_norm "$FLT_TMP/ref.fs.out" > "$FLT_TMP/ref.fs.norm"
	FS_NAME=FS_ARGS FS_REF=$FLT_TMP/ref.fs.norm
fi

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
said_on() { [ "$(grep -c "$WENT_ON" "$1")" -ge "$2" ]; }
RESUMED='^mpiv: job [^ ]* continues: channel memory [0-9.:]* recovered its logs'
OVER='^mpiv: job [^ ]* runs again from the beginning'

# crash NAME KILLS MPIV_RUN_OPTIONS...: runs the job, kills CM 0 KILLS
# times (each after the previous recovery was said), checks the result:
# with --cm-store off the job must start over, else continue. The job's
# arguments: the array named by CRASH_ARGS (default ARGS), its output
# compared with CRASH_REF (default the failure-free run of ARGS).
crash() {
	local name=$1 kills=$2 out=$FLT_TMP/$1 pid cm k WENT_ON=$RESUMED said=continues
	local -n args=${CRASH_ARGS:-ARGS}
	local ref=${CRASH_REF:-$FLT_TMP/ref.norm}
	shift 2
	case " $* " in *" --cm-store off "*) WENT_ON=$OVER said="runs again" ;; esac
	rm -f "$out".*
	timeout -k 5 150 "$MPIV" run $(flt_proto) --report "$out.json" --timeout 120 -n 4 --cms 2 \
		--tag-output "$@" "$bin" "${args[@]}" < /dev/null > "$out.out" 2> "$out.err" &
	pid=$!
	FLT_BG_PIDS=("$pid")
	for k in $(seq 1 "$kills"); do
		if ! flt_wait_for 30 lines_at_least "$out.out" $((2 * k)); then
			break
		fi
		cm=$(cm_pid "$pid" 0)
		[ -n "$cm" ] && kill -9 "$cm"
		flt_wait_for 30 said_on "$out.err" "$k" || break
	done
	wait "$pid"
	FLT_RC=$?
	FLT_BG_PIDS=()
	local lost over other
	lost=$(grep -c '^mpiv: channel memory [0-9.:]* lost: the job.s ranks stop until it is back' "$out.err")
	over=$(grep -c "$WENT_ON" "$out.err")
	other=$(grep -c "$([ "$WENT_ON" = "$OVER" ] && echo "$RESUMED" || echo "$OVER")" "$out.err")
	flt_norm "$out.out" > "$out.norm"
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$name: exit $FLT_RC" "$out.err"
	elif [ "$lost" != "$kills" ] || [ "$over" != "$kills" ] || [ "$other" != 0 ]; then
		flt_notok "$name: $lost 'lost', $over '$said' and $other other lines for $kills CM kills" "$out.err"
	elif grep -q "re-execution printed other" "$out.err"; then
		flt_notok "$name: the dispatcher saw a rank print other output when it started over" "$out.err"
	else
		flt_same "$name: $kills CM kills, $(flt_report "$out.json" restarts) rank restarts, $(flt_report "$out.json" kills) rank kills, $(flt_report "$out.json" checkpoints) checkpoints" \
			"$ref" "$out.norm"
	fi
}

crash one 1 --cm-store write
crash twice 2 --cm-store write
CRASH_ARGS=$FS_NAME CRASH_REF=$FS_REF crash fsync 1 --cm-store fsync
crash over 1 --cm-store off
crash over_twice 2 --cm-store off

# finished: the early finishers' output is empty; rank 0's is compared
early=$(flt_prog flt_early) || { flt_notok "cannot compile flt_early"; flt_finish; }
flt_job "$FLT_TMP/early.ref" 60 -n 4 --cms 2 "$early" 300 10000
out=$FLT_TMP/early
timeout -k 5 120 "$MPIV" run $(flt_proto) --report "$out.json" --timeout 90 -n 4 --cms 2 --cm-store write "$early" 300 10000 \
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
elif ! grep -q "$RESUMED" "$out.err"; then
	flt_notok "finished: the job did not continue on the recovered logs" "$out.err"
elif [ "$(flt_report "$out.json" protocol)" != direct ] &&
    [ "$(jq '[.restart_log[]? | select(.rank != 0)] | length' "$out.json")" != 0 ]; then
	flt_notok "finished: ranks that had finished ran again" "$out.err"
else
	flt_same "finished ($(flt_report "$out.json" protocol)): $(jq "[.restart_log[]?] | length" "$out.json") restarts on the recovered logs, output identical" "$FLT_TMP/early.ref.out" "$out.out"
fi

crash ranks 1 --cm-store write --chaos 700ms --chaos-seed 11
crash over_ranks 1 --cm-store off --chaos 700ms --chaos-seed 11
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	for c in ckpt over_ckpt; do
		opt=(--cm-store write); [ "$c" = over_ckpt ] && opt=(--cm-store off)
		crash "$c" 1 "${opt[@]}" --ckpt-interval 0.3 --chaos 400ms --chaos-seed 5
		restored=$(jq '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$FLT_TMP/$c.json" 2> /dev/null)
		echo "# $c: ${restored:-0} restarts restored a checkpoint"
	done
else
	echo "# ckpt case skipped: $CRIU check fails here"
fi
flt_finish
