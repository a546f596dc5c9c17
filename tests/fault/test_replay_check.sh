#!/usr/bin/env bash
# tests/fault/test_replay_check.sh: a re-execution that sends other
# messages than the incarnation it replaces must end the job with
# "replay diverged", never with a wrong answer.
#
# tests/fault/progs/flt_shuffle.c is a master-worker that shuffles its
# work with srand(), seeded like well-known Mandelbrot examples with
# getpid(), or with the clock: its rank 0, killed and started again from
# the beginning with another seed, hands out other items and would file
# the logged results under the wrong ones. Cases:
#   restart    rank 0 (seeded with the clock) killed mid-run, no
#              checkpoints: exit non-zero with "replay diverged: rank 0,
#              send #N to rank D (tag T)" once per run (in a direct job
#              the receivers say it: "replay diverged: rank 0, running
#              again, sent rank D a message N unlike ...", one to three
#              lines), one restart (the divergence is not mistaken for a
#              lost CM), and no WRONG value printed;
#   pid        the same seeded with getpid(): where ranks run in PID
#              namespaces of their own, the re-execution has the same pid
#              and the job ends 0 with the failure-free output (else it
#              must diverge like the clock);
#   output     tests/fault/progs/flt_clockprint.c prints the time, its
#              messages do not depend on it: killed, its re-execution
#              prints another time, which the dispatcher must say (one
#              "printed other stdout" line, listed in the report), while a
#              deterministic program (the restart cases) never gets it;
#   checkpoint the same with CRIU checkpoints, rank 0 killed once one of
#              its checkpoints is durable: restored with its shuffle in
#              memory, its re-executed sends equal the logged ones, so
#              the job ends 0 with the failure-free output (the digests
#              of its sends before the checkpoint were trimmed: no
#              false alarm either way).
. "$(dirname "$0")/common.bash"

flt_need_chaos
bin=$(flt_prog flt_shuffle) || { flt_notok "cannot compile flt_shuffle"; flt_finish; }
ITEMS=300

# The failure-free output: the same in every run whatever the shuffle.
flt_job "$FLT_TMP/ref" 60 -n 4 "$bin" "$ITEMS" 3000
if [ "$FLT_RC" != 0 ] || grep -q WRONG "$FLT_TMP/ref.out" ||
	[ "$(grep -c '^shuffle: item ' "$FLT_TMP/ref.out")" != "$ITEMS" ]; then
	flt_notok "failure-free run: exit $FLT_RC or a wrong or missing item" "$FLT_TMP/ref.err" "$FLT_TMP/ref.out"
	flt_finish
fi

has_addr() { grep -q '^mpiv: dispatcher [^ ]* job [^ ]*$' "$1"; }
lines_at_least() { [ "$(grep -c . "$1")" -ge "$2" ]; }

# start OUT RUNARGS...: "mpiv run RUNARGS" (options, -n, program and its
# arguments) in the background, verbose (the dispatcher address), its
# dispatcher in $ADDR and job id in $JOB.
start() {
	local out=$1
	shift
	rm -f "$out".*
	timeout -k 5 90 "$MPIV" run $(flt_proto) -v --log-level info --report "$out.json" \
		--timeout 60 "$@" < /dev/null > "$out.out" 2> "$out.err" &
	PID=$!
	FLT_BG_PIDS=("$PID")
	flt_wait_for 30 has_addr "$out.err" || return 1
	read -r _ _ ADDR _ JOB <<< "$(grep -m1 '^mpiv: dispatcher ' "$out.err")"
}

finish() {
	wait "$PID"
	FLT_RC=$?
	FLT_BG_PIDS=()
}

for i in 1 2; do
	out=$FLT_TMP/restart.$i
	if ! start "$out" -n 4 "$bin" "$ITEMS" 3000 clock || ! flt_wait_for 30 lines_at_least "$out.out" $((2 + i)); then
		finish
		flt_notok "restart $i: the job did not start or make progress" "$out.err"
		continue
	fi
	timeout 20 "$MPIV" kill --dispatcher "$ADDR" "$JOB" 0 > "$out.kill" 2>&1 ||
		flt_notok "restart $i: mpiv kill failed" "$out.kill"
	finish
	restarts=$(flt_report "$out.json" restarts)
	# relay: rank 0's CM compares its sends, one line from rank 0;
	# direct: the receivers compare what rank 0 sends them again, one
	# line from each receiver that got one first (1 to 3 here)
	div_re='^mpiv: rank 0: .*replay diverged: rank 0, send #[0-9]* to rank [0-9]* (tag 1)'
	[ "$(flt_report "$out.json" protocol)" = direct ] &&
		div_re='^mpiv: rank [1-3]: .*replay diverged: rank 0, running again, sent rank [1-3] a message [0-9]* unlike'
	ndiv=$(grep -c "$div_re" "$out.err")
	[ "$(flt_report "$out.json" protocol)" = direct ] && [ "$ndiv" -ge 1 ] && [ "$ndiv" -le 3 ] && ndiv=1
	if grep -q WRONG "$out.out"; then
		flt_notok "restart $i: a wrong value was printed (exit $FLT_RC)" "$out.out"
	elif [ "$FLT_RC" = 0 ]; then
		flt_notok "restart $i: exit 0 after rank 0 re-executed with another shuffle" "$out.err" "$out.out"
	elif [ "$ndiv" != 1 ]; then
		flt_notok "restart $i: exit $FLT_RC with $ndiv 'replay diverged' lines from rank 0 (want 1)" "$out.err"
	elif [ "$restarts" != 1 ]; then
		flt_notok "restart $i: $restarts restarts (want 1: the divergence ends the job, it is no lost CM)" "$out.err"
	else
		flt_ok "restart $i: exit $FLT_RC, $(grep -m1 "$div_re" "$out.err" | grep -o 'replay diverged.*' | cut -c1-110)"
	fi
done

# pid: the pid of a re-execution is the pid of the incarnation it
# replaces (the node said so: "node pid namespaces ok")
out=$FLT_TMP/pidseed
if ! start "$out" --log-level info -n 4 "$bin" "$ITEMS" 3000 pid ||
    ! flt_wait_for 30 lines_at_least "$out.out" 3; then
	finish
	flt_notok "pid: the job did not start or make progress" "$out.err"
else
	timeout 20 "$MPIV" kill --dispatcher "$ADDR" "$JOB" 0 > "$out.kill" 2>&1 ||
		flt_notok "pid: mpiv kill failed" "$out.kill"
	finish
	if grep -q 'node pid namespaces ok' "$out.err"; then
		if [ "$FLT_RC" != 0 ] || [ "$(flt_report "$out.json" restarts)" != 1 ]; then
			flt_notok "pid: exit $FLT_RC, restarts $(flt_report "$out.json" restarts) (want 0 and 1)" "$out.err"
		else
			flt_same "pid: rank 0 re-executed under its pid, shuffled the same" "$FLT_TMP/ref.out" "$out.out"
		fi
	elif [ "$FLT_RC" = 0 ] || grep -q WRONG "$out.out"; then
		flt_notok "pid: exit $FLT_RC without pid namespaces (want replay diverged)" "$out.err"
	else
		flt_ok "pid: no pid namespaces here: exit $FLT_RC, replay diverged"
	fi
fi

# output: a re-execution that prints otherwise is said, once
pp=$(flt_prog flt_clockprint) || { flt_notok "cannot compile flt_clockprint"; flt_finish; }
out=$FLT_TMP/pid
if start "$out" -n 2 "$pp" 200 10000 && flt_wait_for 30 lines_at_least "$out.out" 1; then
	sleep 0.3
	timeout 20 "$MPIV" kill --dispatcher "$ADDR" "$JOB" 0 > "$out.kill" 2>&1
fi
finish
said=$(grep -c "^mpiv: rank 0's re-execution printed other stdout than it had before" "$out.err")
listed=$(jq '[.warnings[]? | select(.kind == "output_diverged")] | length' "$out.json" 2> /dev/null)
if [ "$FLT_RC" != 0 ] || [ "$(flt_report "$out.json" restarts)" != 1 ]; then
	flt_notok "output: exit $FLT_RC, restarts $(flt_report "$out.json" restarts) (want 0 and 1)" "$out.err"
elif [ "$said" != 1 ] || [ "${listed:-0}" != 1 ]; then
	flt_notok "output: $said 'printed other stdout' lines and ${listed:-0} report entries (want 1 and 1)" "$out.err"
else
	flt_ok "output: a re-execution that printed another time was said once and listed in the report"
fi
if grep -q "re-execution printed other" "$FLT_TMP"/restart.*.err; then
	flt_notok "restart: a deterministic program got an output warning" "$FLT_TMP/restart.1.err"
fi

CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	out=$FLT_TMP/ckpt
	# ~2 s of work (300 items of 20 ms on 3 workers), a checkpoint of
	# every rank every 0.2 s: rank 0 is killed once its second one, or a
	# later one, is durable (a checkpoint asked while the previous one is
	# still being taken is skipped, its number with it)
	durable() { grep -Eq "dispatcher checkpoint durable job=$JOB rank=0 ckpt=([2-9]|[1-9][0-9]+) " "$1"; }
	if ! start "$out" --ckpt-interval 0.2 -n 4 "$bin" "$ITEMS" 20000 ||
	    ! flt_wait_for 40 durable "$out.err"; then
		finish
		flt_notok "checkpoint: no durable checkpoint 2 (or later) of rank 0" "$out.err"
	else
		timeout 20 "$MPIV" kill --dispatcher "$ADDR" "$JOB" 0 > "$out.kill" 2>&1 ||
			flt_notok "checkpoint: mpiv kill failed" "$out.kill"
		finish
		from=$(jq -r '[.restart_log[] | select(.rank == 0) | .from_ckpt] | first // 0' "$out.json" 2> /dev/null)
		if [ "$FLT_RC" != 0 ]; then
			flt_notok "checkpoint: exit $FLT_RC after a restore" "$out.err"
		elif [ "${from:-0}" -lt 1 ]; then
			flt_notok "checkpoint: rank 0 was not restored from a checkpoint (from_ckpt=$from)" "$out.err"
		else
			flt_same "checkpoint: restored from checkpoint $from, no false divergence" "$FLT_TMP/ref.out" "$out.out"
		fi
	fi
else
	echo "# checkpoint case skipped: $CRIU check fails here"
fi
flt_finish
