#!/usr/bin/env bash
# tests/fault/test_ckpt_chaos.sh: kills with checkpoints on
# (docs/CHECKPOINT.md). Every job runs tests/fault/progs/flt_ckpt (its
# output ends with a hash of every rank's whole memory, so a bad restore
# shows) with --ckpt-interval, and must print byte for byte what the
# failure-free run printed, with the same exit code and no FLT-FAIL.
#
#   before-first     MPIV_FAULT=send early: killed before any checkpoint;
#                    the restart is from the beginning (from_ckpt 0), and
#                    checkpoints are still taken afterwards
#   between          mpiv kill once a checkpoint is durable (dispatcher
#                    says so), then again once the restored incarnation
#                    made its own durable checkpoint: both restarts from
#                    a checkpoint, the second from a later one
#   chaos/SEED       --chaos + --ckpt-interval over several seeds; over
#                    all seeds: checkpoints > 0, a restart with
#                    from_ckpt > 0
#   before-fork-1/2  MPIV_FAULT=ckpt-before-fork (mark sent, no clone):
#                    from the beginning / from checkpoint 1
#   after-fork-1/2   MPIV_FAULT=ckpt-after-fork (parent dead while its
#                    clone is dumped and uploaded)
#   after-fork-late  ckpt-after-fork with a 16 MiB image (the dead
#                    incarnation's upload ends after the restart), then
#                    the restored incarnation is killed again later
#   (clone-killed, helper-killed and cs-restart: 64 MiB images, on-demand
#   checkpoints of rank 1 with mpiv checkpoint, so one is in flight)
#   clone-killed     the clone SIGKILLed as soon as the node announces it
#                    (dump interrupted): that checkpoint fails, is never
#                    durable, nothing freed for it; then the rank is
#                    killed and restores from the previous one
#   helper-killed    the node's dump/upload helper of that checkpoint
#                    SIGKILLed mid-upload (the CS SIGSTOPped meanwhile, so
#                    the stream is stuck half done): same checks
#   restore-woken    MPIV_FAULT=restore-woken:1:R:2: the restored clone
#                    dies as it wakes; restored again (inc 3)
#   cs-restart       hand-built deployment (dispatcher, cm, cs, node):
#                    the CS SIGKILLed mid-upload and restarted on the same
#                    port and store; a rank killed afterwards restores
#   nocriu/*         MPIV_CRIU=/nonexistent: one "checkpoints disabled"
#                    line, the same kills, restarts from the beginning
#
#   MPIV_BUILD=build-x bash tests/fault/test_ckpt_chaos.sh
#   FLT_ONLY=REGEX FLT_KEEP=1 FLT_SEEDS="1 2 3" ...   (narrow / debug)
#
# Exit 77 when CRIU does not work here (the nocriu cases run anyway in
# tests/integration/test_checkpoint.sh).
. "$(dirname "$0")/common.bash"

flt_need_chaos
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if ! timeout 60 "$CRIU" check > /dev/null 2>&1; then
	flt_skip "$CRIU check fails: no working CRIU here (deploy/install-criu.sh as root)"
fi
timeout 20 "$MPIV" run --help 2>&1 | grep -q -- '--ckpt-interval' ||
	flt_skip "mpiv run has no --ckpt-interval yet"

SEEDS=${FLT_SEEDS:-"3 8"}
NP=3
SMALL=(12000 4 2000)	# flt_ckpt STEPS MiB WORK: ~2 s here, 4 MiB images
BIG=(24000 16 2000)	# ~4 s, 16 MiB images: dump + upload ~0.2 s
if [ "${FLT_PROTOCOL:-direct}" = direct ]; then	# auto: direct here
	# about the same wall times (measured: 36000 steps took 3.2 s where the
	# relay took 2.4 s for 12000)
	SMALL=(27000 4 2000)
	BIG=(54000 16 2000)
fi
# 64 MiB images (on-demand checkpoints only): more than the loopback
# socket buffers hold (tcp_rmem max 32 MiB + wmem 4 MiB), so a stopped CS
# really leaves the stream half done
HUGE=(24000 64 2000)

sel() { [ -z "${FLT_ONLY:-}" ] || [[ $1 =~ $FLT_ONLY ]]; }

# ---------------------------------------------------------------- helpers

# ck_start OUT SECS ARGS...: mpiv run -v --log-level info in the
# background (its temp dirs, and so the CS store, under OUT.tmp); waits
# for its "mpiv: dispatcher ADDR job ID" line: CK_DADDR, CK_JOB, CK_PID.
# With CK_HOLD=1 the job is held (flt_hold: its steps slowed while
# OUT.hold exists) until ck_release OUT or ck_end OUT: a case that must
# kill, wait for a checkpoint and kill again does not race the job's end.
ck_start() {
	local out=$1 secs=$2
	shift 2
	rm -rf "$out".*
	mkdir -p "$out.tmp"
	[ "${CK_HOLD:-0}" = 1 ] && : > "$out.hold"
	FLT_HOLD=$out.hold TMPDIR=$out.tmp timeout -k 5 $((secs + 20)) "$MPIV" run $(flt_proto) -v \
		--log-level info --report "$out.json" --timeout "$secs" "$@" \
		< /dev/null > "$out.out" 2> "$out.err" &
	CK_PID=$!
	FLT_BG_PIDS=("$CK_PID")
	CK_DADDR= CK_JOB=
	flt_wait_for 20 grep -q '^mpiv: dispatcher ' "$out.err" || return 1
	set -- $(grep -m1 '^mpiv: dispatcher ' "$out.err")
	CK_DADDR=$3 CK_JOB=$5
}

ck_release() { rm -f "$1.hold"; }

# ck_end OUT: releases it, waits for the job started by ck_start; FLT_RC.
ck_end() {
	ck_release "$1"
	wait "$CK_PID"
	FLT_RC=$?
	FLT_BG_PIDS=()
	echo "$FLT_RC" > "$1.rc"
}

# ck_line SECS FILE ERE: waits (tail -F, 10 ms) for a line of FILE
# matching ERE and prints it; 1 if none within SECS.
ck_line() {
	local secs=$1 f=$2 re=$3 line fd tpid
	exec {fd}< <(exec timeout "$secs" tail -s 0.01 -n +1 -F "$f" 2> /dev/null)
	tpid=$!
	line=$(grep -m1 -E -- "$re" <&"$fd")
	exec {fd}<&-
	kill "$tpid" 2> /dev/null
	[ -n "$line" ] && printf '%s\n' "$line"
}

# ck_count FILE ERE: matching lines of FILE.
ck_count() { grep -cE -- "$2" "$1" 2> /dev/null; }

# children PID: its direct children; cmdline PID: with spaces.
children() { cat /proc/"$1"/task/*/children 2> /dev/null; }
cmdline() { tr '\0' ' ' < /proc/"$1"/cmdline 2> /dev/null; }

# ck_daemon WHAT: pid of the embedded "mpiv WHAT" of the job of ck_start.
ck_daemon() {
	local run p
	for run in $(children "$CK_PID"); do
		for p in $(children "$run"); do
			case $(cmdline "$p") in
			"$MPIV $1 "*) echo "$p"; return 0 ;;
			esac
		done
	done
	return 1
}

# helpers NODEPID: the node agent's upload and fetch workers (forked, so
# with the agent's own command line; ranks and clones run the program).
helpers() {
	local node=$1 me a p
	me=$(cmdline "$node")
	# NODEPID is the node's privileged helper; its child named mpiv is the
	# agent, whose children of the same command line are its workers.
	for a in $(children "$node"); do
		[ "$(cmdline "$a")" = "$me" ] &&
		    [ "$(cat /proc/"$a"/comm 2> /dev/null)" = mpiv ] || continue
		for p in $(children "$a"); do
			[ "$(cmdline "$p")" = "$me" ] && echo "$p"
		done
	done
}

# helper_of NODEPID CLONEPID: the helper streaming that clone's image:
# it has a file of its dump directory open (/dev/shm/mpiv-ckpt-*/...),
# and criu names the clone's core image core-PID.img.
helper_of() {
	local h f d
	for h in $(helpers "$1"); do
		for f in /proc/"$h"/fd/*; do
			d=$(readlink "$f" 2> /dev/null) || continue
			case $d in /dev/shm/mpiv-ckpt-*/*) ;; *) continue ;; esac
			if [ -e "${d%/*}/core-$2.img" ]; then
				echo "$h"
				return 0
			fi
		done
	done
	return 1
}

# durable_before_relaunch ERR RANK: the highest checkpoint of RANK the
# dispatcher logged durable before its first "relaunching" line (0: none)
durable_before_relaunch() {
	awk -v r="rank=$2" '
		/ dispatcher checkpoint durable / && index($0, " " r " ") {
			for (i = 1; i <= NF; i++) if ($i ~ /^ckpt=/) { k = substr($i, 6) + 0; if (k > m) m = k } }
		/ dispatcher relaunching / && index($0, " " r " ") { print m + 0; exit }' "$1"
}

# from_ckpts JSON RANK: the from_ckpt of each restart of RANK, spaced.
from_ckpts() {
	jq -r "[.restart_log[]? | select(.rank == $2) | .from_ckpt] | map(tostring) | join(\" \")" "$1" 2> /dev/null
}

# image OUT RANK K: the committed image file of checkpoint K, if any.
image() {
	find "$OUT_TMP_STORE" -path "*/$CK_JOB/$2/ckpt-$3.img" 2> /dev/null | head -n 1
}

declare -A REF_RC=()
# ref NAME ARGS...: failure-free run of flt_ckpt (no checkpoints), once.
ref() {
	local name=$1
	shift
	local r=$FLT_TMP/ref.$name
	if [ -z "${REF_RC[$name]:-}" ]; then
		flt_job "$r" 120 -n "$NP" "$BIN" "$@"
		REF_RC[$name]=$FLT_RC
		if [ "$FLT_RC" != 0 ] || [ ! -s "$r.out" ] || grep -q FLT-FAIL "$r.err"; then
			flt_notok "reference run flt_ckpt $* (exit $FLT_RC)" "$r.err" "$r.out"
			return 1
		fi
	fi
}

# same WHAT OUT REFNAME: exit code, no FLT-FAIL, stdout byte-identical,
# report's exit_code. 0 when all hold.
same() {
	local what=$1 out=$2 r=$FLT_TMP/ref.$3 rc
	rc=$(cat "$out.rc" 2> /dev/null)
	if [ "$rc" != "${REF_RC[$3]}" ]; then
		flt_notok "$what: exit ${rc:-?}, failure-free ${REF_RC[$3]}" "$out.err" "$out.out"
		return 1
	fi
	if grep -q FLT-FAIL "$out.err"; then
		flt_notok "$what: a program check failed" "$out.err"
		return 1
	fi
	if [ "$(flt_report "$out.json" exit_code)" != "$rc" ]; then
		flt_notok "$what: report exit_code '$(flt_report "$out.json" exit_code)', mpiv run exited $rc" "$out.json"
		return 1
	fi
	flt_same "$what: output and exit $rc" "$r.out" "$out.out" || {
		grep -v '^[0-9:.]* [a-z]* info: ' "$out.err" | tail -n 8 | sed 's/^/#   err| /'
		return 1
	}
}

# expect WHAT COND-DESCRIPTION TEST...: ok/not ok on a condition.
expect() {
	local what=$1 desc=$2
	shift 2
	if "$@"; then flt_ok "$what: $desc"; else flt_notok "$what: $desc" "${CK_SHOW[@]}"; fi
}
CK_SHOW=()
re_match() { [[ $1 =~ $2 ]]; }	# re_match STR ERE
# expect_if WHAT DESC 'SHELL CONDITION': like expect, the condition eval'd
expect_if() {
	if eval "$3"; then flt_ok "$1: $2"; else flt_notok "$1: $2" "${CK_SHOW[@]}"; fi
}

start=$(date +%s)
BIN=$(flt_prog flt_ckpt) || { flt_notok "cannot compile tests/fault/progs/flt_ckpt.c"; flt_finish; }
ref small "${SMALL[@]}" || flt_finish
ref big "${BIG[@]}" || flt_finish
ref huge "${HUGE[@]}" || flt_finish

# ------------------------------------------------- killed before the first
# The first checkpoint of rank 1 comes at 1.5 * (0.5 + 1/3) s: the 30th
# send is long before.
if sel before-first; then
	o=$FLT_TMP/before-first
	MPIV_FAULT=send:30:1 MPIV_FAULT_LOG=$o.flog ck_start "$o" 60 -n $NP --ckpt-interval 1.0 "$BIN" "${SMALL[@]}"
	ck_end "$o"
	CK_SHOW=("$o.json" "$o.flog")
	what="before-first (MPIV_FAULT=send:30:1, --ckpt-interval 1.0)"
	same "$what" "$o" small
	expect "$what" "killed once, at send:30 of rank 1" \
		grep -qx 'fault send:30 rank 1 inc 1 pid [0-9]*' "$o.flog"
	fc=$(from_ckpts "$o.json" 1)
	expect "$what" "restarted from the beginning (from_ckpt '$fc', want '0')" [ "$fc" = 0 ]
	n=$(flt_report "$o.json" checkpoints)
	expect "$what" "checkpoints taken afterwards ($n)" [ "${n:-0}" -gt 0 ]
fi

# ------------------------------------------------- killed between checkpoints
if sel between; then
	o=$FLT_TMP/between
	what="between (--ckpt-interval 0.5, mpiv kill rank 2 twice)"
	CK_HOLD=1 ck_start "$o" 60 -n $NP --ckpt-interval 0.5 "$BIN" "${BIG[@]}"
	CK_SHOW=("$o.json" "$o.err")
	ok=1
	# a durable checkpoint of rank 2 (the dispatcher knows it), then kill
	if ! ck_line 20 "$o.err" "dispatcher checkpoint durable job=$CK_JOB rank=2 ckpt=1 " > /dev/null; then
		flt_notok "$what: no durable checkpoint of rank 2 within 20 s" "$o.err"
		ok=0
	else
		timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 2 > /dev/null 2>> "$o.kill" || ok=0
	fi
	# restored (inc 2), then a durable checkpoint of that incarnation
	# (the node's ckpt-clone line says incarnation=2), kill again
	if [ "$ok" = 1 ] &&
	    l=$(ck_line 20 "$o.err" "node ckpt-clone job=$CK_JOB rank=2 incarnation=2 k=[0-9]+ ") &&
	    k2=$(sed 's/.* k=\([0-9]*\) .*/\1/' <<< "$l") &&
	    ck_line 20 "$o.err" "dispatcher checkpoint durable job=$CK_JOB rank=2 ckpt=$k2 " > /dev/null; then
		timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 2 > /dev/null 2>> "$o.kill" || ok=0
	else
		ok=0
		flt_notok "$what: the restored rank 2 took no durable checkpoint" "$o.err"
	fi
	ck_end "$o"
	same "$what" "$o" big
	fc=$(from_ckpts "$o.json" 2)
	read -r f1 f2 f3 <<< "$fc"
	expect_if "$what" "two restarts of rank 2, both from a checkpoint, the second from the restored incarnation's (from_ckpt '$fc', its k ${k2:-?})" \
		'[ "$ok" = 1 ] && [ -z "$f3" ] && [ "${f1:-0}" -ge 1 ] && [ "${f2:-0}" -ge "${k2:-999}" ]'
fi

# ------------------------------------------------- chaos + checkpoints
if sel chaos; then
	tot_ck=0 tot_from=0 tot_kills=0 runs=0
	for seed in $SEEDS; do
		o=$FLT_TMP/chaos.$seed
		what="chaos/$seed (--chaos 700ms --chaos-max 3 --ckpt-interval 0.3)"
		ck_start "$o" 90 -n $NP --chaos 700ms --chaos-seed "$seed" --chaos-max 3 \
			--ckpt-interval 0.3 "$BIN" "${SMALL[@]}"
		ck_end "$o"
		CK_SHOW=("$o.json")
		runs=$((runs + 1))
		same "$what" "$o" small
		k=$(flt_report "$o.json" kills) c=$(flt_report "$o.json" checkpoints)
		f=$(jq '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$o.json" 2> /dev/null)
		r=$(flt_report "$o.json" restarts)
		echo "# chaos/$seed: kills ${k:-?} restarts ${r:-?} checkpoints ${c:-?} restarts from a checkpoint ${f:-?}"
		[ "${k:-0}" -gt 0 ] && [ "${r:-0}" -lt 1 ] &&
			flt_notok "$what: $k kills, ${r:-?} restarts" "$o.json"
		tot_ck=$((tot_ck + ${c:-0})) tot_from=$((tot_from + ${f:-0})) tot_kills=$((tot_kills + ${k:-0}))
	done
	expect_if "chaos over seeds $SEEDS" "$tot_kills kills, $tot_ck checkpoints, $tot_from restarts from a checkpoint" \
		'[ "$tot_kills" -gt 0 ] && [ "$tot_ck" -gt 0 ] && [ "$tot_from" -gt 0 ]'
fi

# ------------------------------------------------- killed during a checkpoint
# NAME SPEC RANK WANT-FROM: WANT-FROM is a bash regex on the from_ckpt of
# the restart; it must also be at least the last checkpoint of that rank
# the dispatcher had logged durable before relaunching it (checkpoint 1
# may still be uploading when the second one starts; the dead parent's
# clone may make one durable between the relaunch and the restore)
FAULTS=(
	"before-fork-1  ckpt-before-fork:1:1  1 ^0$"
	"before-fork-2  ckpt-before-fork:2:1  1 ^[01]$"
	"after-fork-1   ckpt-after-fork:1:2   2 ^[01]$"
	"after-fork-2   ckpt-after-fork:2:0   0 ^[12]$"
)
for line in "${FAULTS[@]}"; do
	read -r name spec rank want <<< "$line"
	sel "$name" || continue
	o=$FLT_TMP/$name
	# 0.4 s: a rank's second checkpoint comes well before the job's
	# end (at 0.6 it came at ~1.1 s of a ~1.2 s job, and some runs
	# ended first)
	what="$name (MPIV_FAULT=$spec, --ckpt-interval 0.4)"
	MPIV_FAULT=$spec MPIV_FAULT_LOG=$o.flog ck_start "$o" 60 -n $NP --ckpt-interval 0.4 "$BIN" "${SMALL[@]}"
	ck_end "$o"
	CK_SHOW=("$o.json" "$o.flog")
	same "$what" "$o" small
	p=${spec%:*}
	expect "$what" "killed once at $p in rank $rank" \
		grep -qx "fault $p rank $rank inc 1 pid [0-9]*" "$o.flog"
	fc=$(from_ckpts "$o.json" "$rank")
	lastd=$(durable_before_relaunch "$o.err" "$rank")
	# at least the last durable one when the relaunch was decided: a
	# dead incarnation's clone may make a later one durable before the
	# restore, which then takes that one (its log may be freed already)
	# On a loaded machine the checkpoint WANT expects may not be durable
	# yet at the relaunch (then the restart takes the last durable one);
	# and one that becomes durable just after it may free the log the
	# relaunched incarnation would replay from: the CM refuses it ("cannot
	# restart from the beginning" / "cannot resume at") and the rank
	# comes back again from that checkpoint (a later from_ckpt).
	set -- $fc
	fc1=${1:-x} fcs_ok=1 prev=-1
	for f in "$@"; do [ "$f" -gt "$prev" ] || fcs_ok=0; prev=$f; done
	refused=$(grep -c "rank $rank (incarnation [0-9]*) cannot \(restart from the beginning\|resume at\)" "$o.err")
	if [ $# -gt 1 ] && [ "$fcs_ok" = 1 ] && [ "$refused" -ge $(($# - 1)) ]; then
		echo "# $name: the first restart (from $fc1) was refused by the CM, a later checkpoint freed its log: then from ${*:2}"
	elif [ $# -gt 1 ]; then
		fcs_ok=0
	fi
	if [ "$fc1" = "${lastd:-0}" ] && ! re_match "$fc1" "$want"; then
		echo "# $name: no checkpoint WANT ($want) was durable at the relaunch: restarted from $fc1, the last durable one"
		want="^$fc1\$"
	fi
	expect_if "$what" "restart of rank $rank from_ckpt '$fc' (want $want, and at least the last durable one before the relaunch: $lastd)" \
		'[ "$fcs_ok" = 1 ] && re_match "$fc1" "$want" && [ "$fc1" -ge "${lastd:-0}" ]'
done

# after-fork-late: the parent dies while its 16 MiB clone is dumped; the
# dead incarnation's checkpoint may become durable after the restart; the
# restored incarnation takes its own, and is killed again after one.
if sel after-fork-late; then
	o=$FLT_TMP/after-fork-late
	what="after-fork-late (MPIV_FAULT=ckpt-after-fork:2:1, 16 MiB, then mpiv kill rank 1)"
	MPIV_FAULT=ckpt-after-fork:2:1 MPIV_FAULT_LOG=$o.flog \
		CK_HOLD=1 ck_start "$o" 90 -n $NP --ckpt-interval 1.0 "$BIN" "${BIG[@]}"
	CK_SHOW=("$o.json" "$o.err")
	ok=1
	if l=$(ck_line 30 "$o.err" "node ckpt-clone job=$CK_JOB rank=1 incarnation=2 k=[0-9]+ ") &&
	    k2=$(sed 's/.* k=\([0-9]*\) .*/\1/' <<< "$l") &&
	    ck_line 30 "$o.err" "dispatcher checkpoint durable job=$CK_JOB rank=1 ckpt=$k2 " > /dev/null; then
		timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 1 > /dev/null 2>> "$o.kill" || ok=0
	else
		ok=0
	fi
	ck_end "$o"
	same "$what" "$o" big
	fc=$(from_ckpts "$o.json" 1)
	expect_if "$what" "the restored incarnation checkpointed (k ${k2:-none}) and was killed: 2 restarts of rank 1 (from_ckpt '$fc')" \
		'[ "$ok" = 1 ] && [ "$(wc -w <<< "$fc")" = 2 ]'
fi

# clone-killed / helper-killed: checkpoints of rank 1 taken on demand
# (mpiv checkpoint; the periodic ones would come only after 60 s), so
# exactly one is in flight: 1 becomes durable, 2 is interrupted, then
# rank 1 is killed and must come back from 1. Checked as of the kill
# (the restored incarnation numbers its own next checkpoint 2 again):
# 2 failed, no ckpt-2.img, no log freed for it, never counted durable.
# ck_ckpt OUT LOG RANK K: asks for a checkpoint of RANK (again while the
# job is not running yet, up to 10 s), waits for the node's ckpt-clone
# line of its checkpoint K in LOG (prints it).
ck_ckpt() {
	local i
	ck_line 20 "$CK_CMLOG" "cm rank connected job=$CK_JOB rank=$3 incarnation=1 " > /dev/null || return 1
	for ((i = 0; i < 100; i++)); do
		if timeout 10 "$MPIV" checkpoint --dispatcher "$CK_DADDR" "$CK_JOB" "$3" > /dev/null 2>> "$1.ck"; then
			ck_line 20 "$2" "node ckpt-clone job=$CK_JOB rank=$3 incarnation=1 k=$4 "
			return
		fi
		tail -n 1 "$1.ck" | grep -q 'is not running' || return 1
		sleep 0.1
	done
	return 1
}
interrupt_case() {
	local name=$1 o=$FLT_TMP/$1 what victim l node cs= hs nl
	what="$name (64 MiB images, checkpoint 2 of rank 1 interrupted)"
	# every image full (MPIV_CKPT_FULL_EVERY=1): an incremental
	# checkpoint 2 is small and may be done before the CS is stopped
	MPIV_CKPT_FULL_EVERY=1 CK_HOLD=1 ck_start "$o" 90 -n $NP --ckpt-interval 120 "$BIN" "${HUGE[@]}"
	CK_SHOW=("$o.json" "$o.err")
	CK_CMLOG=$o.err
	OUT_TMP_STORE=$o.tmp
	victim=
	if ! ck_ckpt "$o" "$o.err" 1 1 > /dev/null ||
	    ! ck_line 20 "$o.err" "dispatcher checkpoint durable job=$CK_JOB rank=1 ckpt=1 " > /dev/null; then
		flt_notok "$what: checkpoint 1 of rank 1 (mpiv checkpoint) did not become durable" "$o.ck" "$o.err"
		ck_end "$o"
		return
	fi
	if [ "$name" = clone-killed ]; then
		# the clone as soon as the node has it: the dump is under way
		if ck_ckpt "$o" "$o.err" 1 2 > /dev/null &&
		    l=$(ck_line 20 "$o.err" "helper dumping job=$CK_JOB rank=1 k=2 "); then
			victim=$(sed 's/.* clone=\([0-9]*\) .*/\1/' <<< "$l")
		fi
	else
		# the helper, once the CS has begun receiving; the CS is
		# stopped meanwhile, so the stream is stuck half done
		if ck_ckpt "$o" "$o.err" 1 2 > /dev/null &&
		    ck_line 20 "$o.err" "cs upload begins job=$CK_JOB rank=1 ckpt=2 " > /dev/null &&
		    node=$(ck_daemon node) && cs=$(ck_daemon cs); then
			kill -STOP "$cs"
			sleep 0.1
			hs=$(helpers "$node")
			if [ "$(wc -w <<< "$hs")" = 1 ]; then
				victim=$hs
			else
				flt_notok "$what: want exactly one checkpoint helper, have '$hs'"
			fi
		fi
	fi
	if [ -z "$victim" ]; then
		[ -n "$cs" ] && kill -CONT "$cs"
		flt_notok "$what: nothing to kill (no checkpoint 2 of rank 1 in flight)" "$o.ck" "$o.err"
		ck_end "$o"
		return
	fi
	kill -KILL $victim 2> /dev/null
	[ -n "$cs" ] && kill -CONT "$cs"
	# the node reports the outcome; then kill rank 1
	ck_line 30 "$o.err" "node checkpoint (failed|taken) job=$CK_JOB rank=1 k=2 " > "$o.k2"
	cp "$o.err" "$o.err.atkill"
	img=$(image "$o" 1 2)
	timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 1 > /dev/null 2>> "$o.kill"
	ck_end "$o"
	same "$what" "$o" huge
	expect "$what" "checkpoint 2 failed ($(cut -c1-150 "$o.k2"))" grep -q 'checkpoint failed' "$o.k2"
	expect "$what" "no image of checkpoint 2 in the store (${img:-none})" [ -z "$img" ]
	expect "$what" "the CM freed nothing for checkpoint 2" \
		[ "$(ck_count "$o.err.atkill" "cm log freed job=$CK_JOB rank=1 ckpt=2 ")" = 0 ]
	expect "$what" "the dispatcher never counted it durable" \
		[ "$(ck_count "$o.err.atkill" "dispatcher checkpoint durable job=$CK_JOB rank=1 ckpt=2 ")" = 0 ]
	fc=$(from_ckpts "$o.json" 1)
	expect "$what" "rank 1 restored from checkpoint 1 (from_ckpt '$fc')" [ "$fc" = 1 ]
}
sel clone-killed && interrupt_case clone-killed
sel helper-killed && interrupt_case helper-killed

# ------------------------------------------------- killed during restore
if sel restore-woken; then
	o=$FLT_TMP/restore-woken
	what="restore-woken (MPIV_FAULT=restore-woken:1:0:2, mpiv kill rank 0 after a durable checkpoint)"
	MPIV_FAULT=restore-woken:1:0:2 MPIV_FAULT_LOG=$o.flog \
		CK_HOLD=1 ck_start "$o" 60 -n $NP --ckpt-interval 0.5 "$BIN" "${SMALL[@]}"
	CK_SHOW=("$o.json" "$o.flog" "$o.err")
	if ck_line 20 "$o.err" "dispatcher checkpoint durable job=$CK_JOB rank=0 ckpt=1 " > /dev/null; then
		timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 0 > /dev/null 2>> "$o.kill"
	fi
	ck_end "$o"
	same "$what" "$o" small
	expect "$what" "the restored clone (inc 2) died as it woke" \
		grep -qx 'fault restore-woken:1 rank 0 inc 2 pid [0-9]*' "$o.flog"
	fc=$(from_ckpts "$o.json" 0)
	read -r f1 f2 f3 <<< "$fc"
	expect_if "$what" "two restarts of rank 0, both from a checkpoint (from_ckpt '$fc')" \
		'[ -z "$f3" ] && [ "${f1:-0}" -ge 1 ] && [ "${f2:-0}" -ge 1 ]'
fi

# ------------------------------------------------- CS killed and restarted
# A hand-built deployment; each daemon prints "listening on HOST:PORT".
# dstart NAME ARGS...: starts "mpiv ARGS" (stdout DEP/NAME.out, stderr
# DEP/NAME.err), pid in DPID[NAME], address in DADDR[NAME] (if it listens).
declare -A DPID=() DADDR=()
DEP=$FLT_TMP/dep
dstart() {
	local name=$1
	shift
	timeout -k 5 300 "$MPIV" "$@" < /dev/null > "$DEP/$name.out" 2> "$DEP/$name.err" &
	DPID[$name]=$!
	FLT_BG_PIDS+=("$!")
}
dpid() {	# dpid NAME: the daemon itself (the child of its timeout)
	local p
	flt_wait_for 5 eval "[ -n \"\$(children ${DPID[$1]})\" ]" || return 1
	p=$(children "${DPID[$1]}")
	echo "${p%% *}"
}
dlisten() {	# dlisten NAME: waits for its "listening on" line
	flt_wait_for 15 grep -q '^listening on ' "$DEP/$1.out" || return 1
	DADDR[$1]=$(sed -n 's/^listening on //p' "$DEP/$1.out" | head -n 1)
}
dstop() {	# TERM every daemon of the deployment, bounded wait
	local p
	for p in "${DPID[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${DPID[@]}"; do
		flt_wait_for 10 eval "! kill -0 $p 2> /dev/null" || kill -KILL -- "-$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	FLT_BG_PIDS=()
}
if sel cs-restart; then
	mkdir -p "$DEP/store"
	what="cs-restart (CS SIGKILLed mid-upload of rank 1's checkpoint 2, restarted on the same port and store)"
	ok=1
	dstart disp dispatcher --listen 127.0.0.1:0 --log-level info && dlisten disp || ok=0
	if [ "$ok" = 1 ]; then
		dstart cm cm --listen 127.0.0.1:0 --dispatcher "${DADDR[disp]}" --log-level info
		dstart cs cs --listen 127.0.0.1:0 --store "$DEP/store" --dispatcher "${DADDR[disp]}" --log-level info
		# its ranks see the hold of ck_start below (their node's env)
		# every image full: an incremental one could be done before
		# the CS is stopped mid-upload
		MPIV_CKPT_FULL_EVERY=1 FLT_HOLD=$FLT_TMP/cs-restart.hold dstart node node --dispatcher "${DADDR[disp]}" \
		    "${FLT_NODE_USER[@]}" --slots $NP --log-level info --cache-dir "$DEP/cache"
		dlisten cm && dlisten cs || ok=0
	fi
	if [ "$ok" = 0 ]; then
		flt_notok "$what: the deployment did not start" "$DEP/disp.err" "$DEP/cm.err" "$DEP/cs.err"
	else
		o=$FLT_TMP/cs-restart
		CK_HOLD=1 ck_start "$o" 90 --dispatcher "${DADDR[disp]}" -n $NP --ckpt-interval 120 "$BIN" "${HUGE[@]}"
		CK_SHOW=("$o.json" "$DEP/cs.err" "$DEP/cs2.err" "$DEP/disp.err")
		CK_CMLOG=$DEP/cm.err
		k3=
		if ck_ckpt "$o" "$DEP/node.err" 1 1 > /dev/null &&
		    ck_line 20 "$DEP/disp.err" "dispatcher checkpoint durable job=$CK_JOB rank=1 ckpt=1 " > /dev/null &&
		    ck_ckpt "$o" "$DEP/node.err" 1 2 > /dev/null &&
		    ck_line 20 "$DEP/cs.err" "cs upload begins job=$CK_JOB rank=1 ckpt=2 " > /dev/null; then
			# stopped first, so part of the stream is in (its temp
			# file, the socket) when it dies
			if p=$(dpid cs); then
				kill -STOP "$p"
				sleep 0.1
				kill -KILL "$p"
				wait "${DPID[cs]}" 2> /dev/null
			fi
			cs_port=${DADDR[cs]}
			dstart cs2 cs --listen "$cs_port" --store "$DEP/store" --dispatcher "${DADDR[disp]}" --log-level info
			dlisten cs2 || flt_notok "$what: the CS did not restart on $cs_port" "$DEP/cs2.err"
			ck_line 20 "$DEP/node.err" "node checkpoint failed job=$CK_JOB rank=1 k=2 " > /dev/null ||
				flt_notok "$what: the node did not report checkpoint 2 failed" "$DEP/node.err"
			# checkpoint 3 through the restarted CS; then kill rank 1
			# either way: it restores from 3, or from 1 (whose image
			# the restarted CS has in its store)
			k3=1
			if flt_wait_for 10 grep -q "dispatcher cs registered addr=$cs_port" <(sed -n '/connection closed role=cs/,$p' "$DEP/disp.err") &&
			    ck_ckpt "$o" "$DEP/node.err" 1 3 > /dev/null &&
			    ck_line 20 "$DEP/disp.err" "dispatcher checkpoint durable job=$CK_JOB rank=1 ckpt=3 " > /dev/null; then
				k3=3
			else
				flt_notok "$what: no checkpoint after the CS restart ($(tail -n 1 "$o.ck" 2> /dev/null))" "$DEP/cs2.err"
			fi
			cp "$DEP/cm.err" "$DEP/cm.err.atkill"
			OUT_TMP_STORE=$DEP/store
			img=$(image "$o" 1 2)
			timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 1 > /dev/null 2>> "$o.kill"
		else
			flt_notok "$what: no upload of rank 1's checkpoint 2 seen" "$DEP/cs.err" "$o.ck"
		fi
		ck_end "$o"
		same "$what" "$o" huge
		expect "$what" "checkpoint 2 of rank 1 never committed (no ckpt-2.img at the kill: ${img:-none})" [ -z "${img:-}" ]
		expect "$what" "the CM freed nothing for it" \
			[ "$(ck_count "$DEP/cm.err.atkill" "cm log freed job=$CK_JOB rank=1 ckpt=2 ")" = 0 ]
		fc=$(from_ckpts "$o.json" 1)
		expect_if "$what" "rank 1 restored from checkpoint ${k3:-?} through the restarted CS (from_ckpt '$fc')" \
			'[ -n "${k3:-}" ] && [ "$fc" = "$k3" ]'
	fi
	dstop
fi

# ------------------------------------------------- CRIU unavailable
# The same kinds of kills; every restart from the beginning, no
# checkpoint ever attempted (the ckpt-* fault points are never reached),
# exactly one "mpiv: checkpoints disabled" line.
if sel nocriu; then
	export MPIV_CRIU=/nonexistent
	for c in "send send:30:1 1 1" "before-fork ckpt-before-fork:1:2 2 0" "mpiv-kill - 0 1" "chaos chaos 0 -"; do
		read -r name spec rank nr <<< "$c"
		o=$FLT_TMP/nocriu.$name
		rm -f "$o.flog"
		case $spec in
		-)
			what="nocriu/$name (MPIV_CRIU=/nonexistent, --ckpt-interval 0.3, mpiv kill rank $rank mid-run)"
			CK_HOLD=1 ck_start "$o" 60 -n $NP --ckpt-interval 0.3 "$BIN" "${SMALL[@]}"
			# once rank 0 printed its first line (held: the job
			# cannot end before the kill)
			flt_wait_for 20 eval "[ \$(wc -l < '$o.out') -ge 1 ]" &&
				timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" "$rank" > /dev/null 2>> "$o.kill" ;;
		chaos)
			what="nocriu/$name (MPIV_CRIU=/nonexistent, --ckpt-interval 0.3, --chaos 700ms --chaos-seed 5 --chaos-max 3)"
			ck_start "$o" 90 -n $NP --ckpt-interval 0.3 --chaos 700ms --chaos-seed 5 --chaos-max 3 "$BIN" "${SMALL[@]}" ;;
		*)
			what="nocriu/$name (MPIV_CRIU=/nonexistent, --ckpt-interval 0.3, MPIV_FAULT=$spec)"
			MPIV_FAULT=$spec MPIV_FAULT_LOG=$o.flog ck_start "$o" 60 -n $NP --ckpt-interval 0.3 "$BIN" "${SMALL[@]}" ;;
		esac
		ck_end "$o"
		CK_SHOW=("$o.json" "$o.err")
		same "$what" "$o" small
		n=$(grep -c '^mpiv: checkpoints disabled' "$o.err")
		c=$(flt_report "$o.json" checkpoints)
		expect_if "$what" "$n 'mpiv: checkpoints disabled' line(s), $c checkpoints, mode $(flt_report "$o.json" mode)" \
			'[ "$n" = 1 ] && [ "$c" = 0 ] && [ "$(flt_report "$o.json" mode)" = logging ]'
		if [ "$nr" = - ]; then
			nr=$(flt_report "$o.json" kills)
			expect "$what" "chaos killed (${nr:-?} kills)" [ "${nr:-0}" -gt 0 ]
			f=$(jq -r '[.restart_log[]?.from_ckpt] | map(tostring) | join(" ")' "$o.json" 2> /dev/null)
			expect "$what" "every restart from the beginning (from_ckpt '$f')" re_match "$f" '^0( 0)*$'
		elif [ "$nr" = 0 ]; then
			expect_if "$what" "no checkpoint attempted: the fault point never fired, no restart" \
				'[ ! -s "$o.flog" ] && [ "$(flt_report "$o.json" restarts)" = 0 ]'
		else
			fc=$(from_ckpts "$o.json" "$rank")
			expect "$what" "one restart of rank $rank, from the beginning (from_ckpt '$fc')" [ "$fc" = 0 ]
		fi
	done
	unset MPIV_CRIU
fi

echo "# took $(( $(date +%s) - start ))s"
flt_finish
