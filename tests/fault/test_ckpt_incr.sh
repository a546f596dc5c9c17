#!/usr/bin/env bash
# tests/fault/test_ckpt_incr.sh: incremental checkpoint images
# (docs/CHECKPOINT.md, "Incremental images") under kills. Every job runs
# tests/fault/progs/flt_ckpt (8 MiB of incompressible ballast per rank,
# one word of it rewritten per step, so each image after the first is a
# small delta; its output ends with a hash of every rank's whole memory)
# and must print byte for byte what the failure-free run printed.
#
#   deep         MPIV_CKPT_FULL_EVERY=16: rank 1 is killed once one of
#                its deltas 4 or more deep is durable; the CS rebuilds
#                the full image from the chain (its "image rebuilt ...
#                chain=N" line, N >= 4) and the rank restores from it
#   dump-kill    the clone of rank 1's next checkpoint after its first
#                delta SIGKILLed as the helper dumps it: that checkpoint fails,
#                a later one is again a delta (over the last acknowledged
#                parent), rank 1 is killed after it and restores
#   cs-delta     hand-built deployment, the CS SIGKILLed
#                (MPIV_SERVER_FAULT=cs-delta:3) once it has received a
#                whole incremental image, before it commits it; restarted
#                on its store and port; rank 1 killed after a durable
#                delta through the restarted CS, restored from it
#   cs-gc        the same with MPIV_CKPT_FULL_EVERY=3 and
#                MPIV_SERVER_FAULT=cs-gc:1: the CS dies halfway through
#                deleting the first image no kept one needs (a parent of
#                an older chain); its recovery removes the half-deleted
#                image and what depended on it
#   chaos        --chaos with MPIV_CKPT_FULL_EVERY=4 (restores from
#                chains of every depth)
#
#   MPIV_BUILD=build-x bash tests/fault/test_ckpt_incr.sh
#   FLT_ONLY=REGEX FLT_KEEP=1 ...   (narrow / debug)
#
# Exit 77 when CRIU does not work here.
. "$(dirname "$0")/common.bash"

flt_need_chaos
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if ! timeout 60 "$CRIU" check > /dev/null 2>&1; then
	flt_skip "$CRIU check fails: no working CRIU here (deploy/install-criu.sh as root)"
fi

NP=3
ARGS=(6000 8 2000)	# flt_ckpt STEPS MiB WORK (jobs are held until the kills)
# Held, a step takes 8 ms and rewrites a word of one ballast page: about
# 125 of its 2048 pages a second. At the default 2 ms a step, a loaded
# machine whose full images took 2-3 s to upload saw three quarters of
# the pages change before the next checkpoint, so every one was a full
# image again (a delta must reuse a quarter of its parent's blocks) and
# the cases waiting for a delta timed out.
export FLT_HOLD_US=8000
if [ "${FLT_PROTOCOL:-direct}" = direct ]; then
	ARGS=(18000 8 2000)	# the same wall time: direct messages are faster
fi

sel() { [ -z "${FLT_ONLY:-}" ] || [[ $1 =~ $FLT_ONLY ]]; }

# ---------------------------------------------------------------- helpers
# (the same shapes as tests/fault/test_ckpt_chaos.sh)

# ck_start OUT SECS ARGS...: mpiv run -v --log-level info in the
# background, held (flt_hold) until ck_end; CK_DADDR, CK_JOB, CK_PID.
ck_start() {
	local out=$1 secs=$2
	shift 2
	rm -rf "$out".*
	mkdir -p "$out.tmp"
	: > "$out.hold"
	FLT_HOLD=$out.hold TMPDIR=$out.tmp timeout -k 5 $((secs + 20)) "$MPIV" run $(flt_proto) -v \
		--log-level info --report "$out.json" --timeout "$secs" "$@" \
		< /dev/null > "$out.out" 2> "$out.err" &
	CK_PID=$!
	FLT_BG_PIDS+=("$CK_PID")
	CK_DADDR= CK_JOB=
	flt_wait_for 20 grep -q '^mpiv: dispatcher ' "$out.err" || return 1
	set -- $(grep -m1 '^mpiv: dispatcher ' "$out.err")
	CK_DADDR=$3 CK_JOB=$5
}

ck_end() {
	rm -f "$1.hold"
	wait "$CK_PID"
	echo $? > "$1.rc"
}

# ck_line SECS FILE ERE: waits for a line of FILE matching ERE, prints it
# (from line CK_FROM on, default 1).
ck_line() {
	local secs=$1 f=$2 re=$3 line fd tpid
	exec {fd}< <(exec timeout "$secs" tail -s 0.01 -n +"${CK_FROM:-1}" -F "$f" 2> /dev/null)
	tpid=$!
	line=$(grep -m1 -E -- "$re" <&"$fd")
	exec {fd}<&-
	kill "$tpid" 2> /dev/null
	[ -n "$line" ] && printf '%s\n' "$line"
}

children() { cat /proc/"$1"/task/*/children 2> /dev/null; }

from_ckpts() {
	jq -r "[.restart_log[]? | select(.rank == $2) | .from_ckpt] | map(tostring) | join(\" \")" "$1" 2> /dev/null
}

kv() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }

REF_RC=
ref() {
	local r=$FLT_TMP/ref
	flt_job "$r" 120 -n "$NP" "$BIN" "${ARGS[@]}"
	REF_RC=$FLT_RC
	if [ "$FLT_RC" != 0 ] || [ ! -s "$r.out" ] || grep -q FLT-FAIL "$r.err"; then
		flt_notok "reference run flt_ckpt ${ARGS[*]} (exit $FLT_RC)" "$r.err" "$r.out"
		return 1
	fi
}

# same WHAT OUT: exit code, no FLT-FAIL, stdout byte-identical.
same() {
	local what=$1 out=$2 rc
	rc=$(cat "$out.rc" 2> /dev/null)
	if [ "$rc" != "$REF_RC" ]; then
		flt_notok "$what: exit ${rc:-?}, failure-free $REF_RC" "$out.err" "$out.out"
		grep -E 'warn|error' "$out.err" | grep -v ' info: ' | tail -n 8 | sed 's/^/#   err| /'
		return 1
	fi
	if grep -q FLT-FAIL "$out.err"; then
		flt_notok "$what: a program check failed" "$out.err"
		return 1
	fi
	flt_same "$what: output and exit $rc" "$FLT_TMP/ref.out" "$out.out"
}

expect_if() {
	if eval "$3"; then flt_ok "$1: $2"; else flt_notok "$1: $2" "${CK_SHOW[@]}"; fi
}
CK_SHOW=()

# kill_after_delta LOG MINCHAIN: waits for a durable delta of rank 1
# (incarnation 1) at least MINCHAIN deep, logged after line CK_FROM of
# LOG, then mpiv kill rank 1; prints its checkpoint number. 1 if none.
kill_after_delta() {
	local log=$1 min=$2 l k
	l=$(ck_line 40 "$log" "node checkpoint taken job=$CK_JOB rank=1 k=[0-9]+ .* inc=1 parent=[1-9][0-9]* chain=([$min-9]|[1-9][0-9])") || return 1
	k=$(kv k "$l")
	CK_FROM=1 ck_line 20 "$DLOG" "dispatcher checkpoint durable job=$CK_JOB rank=1 ckpt=$k " > /dev/null || return 1
	timeout 10 "$MPIV" kill --dispatcher "$CK_DADDR" "$CK_JOB" 1 > /dev/null 2>&1 || return 1
	echo "$k"
}

start=$(date +%s)
BIN=$(flt_prog flt_ckpt) || { flt_notok "cannot compile tests/fault/progs/flt_ckpt.c"; flt_finish; }
ref || flt_finish

# ------------------------------------------------- a deep chain
if sel deep; then
	o=$FLT_TMP/deep
	what="deep (MPIV_CKPT_FULL_EVERY=16, --ckpt-interval 0.3, mpiv kill rank 1 after a delta 4 deep)"
	MPIV_CKPT_FULL_EVERY=16 ck_start "$o" 90 -n $NP --ckpt-interval 0.3 "$BIN" "${ARGS[@]}"
	CK_SHOW=("$o.json" "$o.err")
	DLOG=$o.err
	k=$(kill_after_delta "$o.err" 4) || flt_notok "$what: no durable delta 4 deep of rank 1" "$o.err"
	ck_end "$o"
	same "$what" "$o"
	fc=$(from_ckpts "$o.json" 1)
	rb=$(grep -E "cs image rebuilt ckpt=${fc:-x} chain=" "$o.err" | head -n 1)
	n=$(kv chain "$rb")
	expect_if "$what" "rank 1 restored once from a checkpoint >= ${k:-?} (from_ckpt '$fc'), rebuilt by the CS from a chain of ${n:-?} deltas" \
		'[ -n "${k:-}" ] && [ "${fc:-0}" -ge "$k" ] && [ "${n:-0}" -ge 4 ]'
	first=$(grep -m1 -E "node checkpoint taken job=$CK_JOB rank=1 k=1 " "$o.err")
	later=$(grep -E "node checkpoint taken job=$CK_JOB rank=1 .* inc=1 parent=[1-9]" "$o.err" | head -n 1)
	b1=$(kv bytes "$first") b2=$(kv bytes "$later")
	# (flt_ckpt rewrites a word of another page at every step: a delta
	# holds the pages of the steps since its parent)
	expect_if "$what" "rank 1's first delta is smaller than its first image ($b2 of $b1 bytes)" \
		'[ -n "$b1" ] && [ -n "$b2" ] && [ "$b2" -lt "$b1" ]'
fi

# ------------------------------------------------- clone killed in a delta's dump
if sel dump-kill; then
	o=$FLT_TMP/dump-kill
	what="dump-kill (the clone of rank 1's checkpoint after its first delta SIGKILLed during its dump)"
	ck_start "$o" 90 -n $NP --ckpt-interval 0.3 "$BIN" "${ARGS[@]}"
	CK_SHOW=("$o.json" "$o.err")
	DLOG=$o.err
	victim= kd=
	# the dump after rank 1's first delta: a delta again, of course
	if ck_line 30 "$o.err" "node checkpoint taken job=$CK_JOB rank=1 k=[0-9]+ .* parent=[1-9]" > /dev/null &&
	    l=$(CK_FROM=$(wc -l < "$o.err") ck_line 20 "$o.err" "helper dumping job=$CK_JOB rank=1 k=[0-9]+ "); then
		victim=$(sed 's/.* clone=\([0-9]*\) .*/\1/' <<< "$l")
		kd=$(kv k "$l")
		kill -KILL "$victim" 2> /dev/null
	fi
	f3=$(ck_line 20 "$o.err" "node checkpoint (failed|taken) job=$CK_JOB rank=1 k=${kd:-x} ")
	k=$(CK_FROM=$(wc -l < "$o.err") kill_after_delta "$o.err" 1)
	ck_end "$o"
	same "$what" "$o"
	expect_if "$what" "the clone of checkpoint ${kd:-?} was killed (${victim:-none}) and that checkpoint failed ($(cut -c1-100 <<< "$f3"))" \
		'[ -n "$victim" ] && [[ $f3 =~ "checkpoint failed" ]]'
	fc=$(from_ckpts "$o.json" 1)
	expect_if "$what" "a later delta (k ${k:-none}) durable, rank 1 restored from it or later (from_ckpt '$fc')" \
		'[ -n "${k:-}" ] && [ "$k" -gt "${kd:-999}" ] && [ "${fc:-0}" -ge "$k" ]'
fi

# ------------------------------------------------- the CS killed
declare -A DPID=() DADDR=()
DEP=
dstart() {
	local name=$1
	shift
	timeout -k 5 300 "$MPIV" "$@" < /dev/null > "$DEP/$name.out" 2> "$DEP/$name.err" &
	DPID[$name]=$!
	FLT_BG_PIDS+=("$!")
}
dlisten() {
	flt_wait_for 15 grep -q '^listening on ' "$DEP/$1.out" || return 1
	DADDR[$1]=$(sed -n 's/^listening on //p' "$DEP/$1.out" | head -n 1)
}
dstop() {
	local p
	for p in "${DPID[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${DPID[@]}"; do
		flt_wait_for 10 eval "! kill -0 $p 2> /dev/null" || kill -KILL -- "-$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	DPID=()
	FLT_BG_PIDS=()
}

# cs_case NAME FAULT FULL_EVERY
cs_case() {
	local name=$1 fault=$2 every=$3 o what ok=1 k fc
	DEP=$FLT_TMP/dep-$name
	mkdir -p "$DEP/store" "$DEP/fault"
	what="$name (hand-built deployment, CS with MPIV_SERVER_FAULT=$fault, MPIV_CKPT_FULL_EVERY=$every)"
	dstart disp dispatcher --listen 127.0.0.1:0 --log-level info && dlisten disp || ok=0
	if [ "$ok" = 1 ]; then
		dstart cm cm --listen 127.0.0.1:0 --dispatcher "${DADDR[disp]}" --log-level info
		MPIV_SERVER_FAULT=$fault MPIV_SERVER_FAULT_DIR=$DEP/fault \
			dstart cs cs --listen 127.0.0.1:0 --store "$DEP/store" --dispatcher "${DADDR[disp]}" --log-level info
		MPIV_CKPT_FULL_EVERY=$every FLT_HOLD=$FLT_TMP/$name.hold dstart node node --dispatcher "${DADDR[disp]}" \
			"${FLT_NODE_USER[@]}" --slots $NP --log-level info --cache-dir "$DEP/cache"
		dlisten cm && dlisten cs || ok=0
	fi
	if [ "$ok" = 0 ]; then
		flt_notok "$what: the deployment did not start" "$DEP/disp.err" "$DEP/cm.err" "$DEP/cs.err"
		dstop
		return
	fi
	o=$FLT_TMP/$name
	ck_start "$o" 90 --dispatcher "${DADDR[disp]}" -n $NP --ckpt-interval 0.3 "$BIN" "${ARGS[@]}"
	CK_SHOW=("$o.json" "$DEP/cs.err" "$DEP/cs2.err" "$DEP/node.err")
	DLOG=$DEP/disp.err
	# the fault kills the CS; it comes back on its port and store
	if flt_wait_for 40 eval "[ -e '$DEP/fault/${fault%%:*}' ] && ! kill -0 \$(children ${DPID[cs]}) 2> /dev/null"; then
		wait "${DPID[cs]}" 2> /dev/null
		dstart cs2 cs --listen "${DADDR[cs]}" --store "$DEP/store" --dispatcher "${DADDR[disp]}" --log-level info
		dlisten cs2 || flt_notok "$what: the CS did not restart" "$DEP/cs2.err"
		# a durable delta taken after the restart
		k=$(CK_FROM=$(wc -l < "$DEP/node.err") kill_after_delta "$DEP/node.err" 1)
		[ -n "${k:-}" ] || flt_notok "$what: no durable delta of rank 1 through the restarted CS" "$DEP/node.err" "$DEP/cs2.err"
	else
		flt_notok "$what: the fault point never killed the CS" "$DEP/cs.err"
	fi
	ck_end "$o"
	same "$what" "$o"
	fc=$(from_ckpts "$o.json" 1)
	expect_if "$what" "rank 1 restored through the restarted CS from checkpoint >= ${k:-?} (from_ckpt '$fc')" \
		'[ -n "${k:-}" ] && [ "${fc:-0}" -ge "$k" ]'
	if [ "$name" = cs-gc ]; then
		expect_if "$what" "the restarted CS's recovery cleaned the half-deleted image" \
			'grep -qE "cs recovery: (removing orphan|dir=.* incomplete|dir=.* parent=)" "$DEP/cs2.err"'
	fi
	dstop
}
sel cs-delta && cs_case cs-delta cs-delta:3 8
sel cs-gc && cs_case cs-gc cs-gc:1 3

# ------------------------------------------------- chaos
if sel chaos; then
	o=$FLT_TMP/chaos
	what="chaos (--chaos 900ms --chaos-seed 4 --chaos-max 3, MPIV_CKPT_FULL_EVERY=4)"
	MPIV_CKPT_FULL_EVERY=4 ck_start "$o" 90 -n $NP --chaos 900ms --chaos-seed 4 --chaos-max 3 \
		--ckpt-interval 0.3 "$BIN" "${ARGS[@]}"
	CK_SHOW=("$o.json")
	# held (slowed) until a delta was taken and chaos killed: unheld,
	# a quiet machine ran the whole job in 1 s, with no delta at all
	flt_wait_for 60 grep -qE "node checkpoint taken .* parent=[1-9]" "$o.err"
	flt_wait_for 60 grep -q "dispatcher chaos kill job" "$o.err"
	ck_end "$o"
	same "$what" "$o"
	k=$(flt_report "$o.json" kills) f=$(jq '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$o.json" 2> /dev/null)
	d=$(grep -c "node checkpoint taken .* parent=[1-9]" "$o.err")
	expect_if "$what" "${k:-0} kills, ${f:-0} restores from a checkpoint, $d deltas" \
		'[ "${k:-0}" -gt 0 ] && [ "$d" -gt 0 ]'
fi

echo "# took $(( $(date +%s) - start ))s"
flt_finish
