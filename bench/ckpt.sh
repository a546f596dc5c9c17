#!/usr/bin/env bash
# bench/ckpt.sh: what checkpoints cost. Part of `make bench`.
#
#   1. round trip vs image size: rank 0 of 2 holds X MB (bench/ckpt_mem.c),
#      `mpiv checkpoint` takes one, then `mpiv kill` kills it; measured:
#      the rank's stall, CRIU dump and upload (node log "checkpoint
#      taken"), request -> durable, the dispatcher's relaunch_ms (report),
#      the node's fetch + restore (node log "restored"), and from outside
#      kill -> the restored process running its own code again;
#   2. CS throughput: 4 ranks of X MB checkpoint at once (one CS); the
#      upload phases' aggregate MB/s against one rank alone, same job;
#   3. zstd level (MPIV_ZSTD_LEVEL exported to the embedded deployment,
#      checked in the node agent's /proc/PID/environ): image size vs dump
#      and upload time;
#   4. slowdown of a 4-rank stencil (bench/ckpt_stencil.c) with 0, 2, 4, 8
#      checkpoints per rank (--ckpt-interval), against no checkpoints in
#      the same round (MPICH-V: ~94 % of checkpoint-free speed with 4);
#      "4f": 4 with every image full (MPIV_CKPT_FULL_EVERY=1);
#   5. incremental images: a rank whose memory does not change (ckpt_mem)
#      checkpointed every second, with incremental images (default) and
#      without (MPIV_CKPT_FULL_EVERY=1): first and later images' bytes and
#      the upload worker's CPU per image (node log upload_cpu_s).
# Prints markdown tables, also written to $B/bench/ckpt.md. Skips (exit 0)
# when CRIU does not work. Only ratios from the same run mean anything.
#
# Env: MPIV_BUILD (build dir), CKPT_ROUNDS (2), CKPT_SIZES ("1 16 64 256"),
# CKPT_CS_MB (64), CKPT_ZSTD_MB (32), CKPT_ZSTD_LEVELS ("1 3 9 19"),
# STENCIL_N (1000000 doubles per rank), STENCIL_ITERS (4000), STENCIL_ROUNDS (3), CKPT_TIMEOUT
# (300 s per job, under `timeout`), CKPT_INCR_MB (32), CKPT_ONLY (sections
# to run, e.g. "4 5"; all when empty).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
B=${MPIV_BUILD:-build}
MPIV="$ROOT/$B/bin/mpiv"
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
R=${CKPT_ROUNDS:-2}
SIZES=${CKPT_SIZES:-1 16 64 256}
CS_MB=${CKPT_CS_MB:-64}
Z_MB=${CKPT_ZSTD_MB:-32}
LEVELS=${CKPT_ZSTD_LEVELS:-1 3 9 19}
SN=${STENCIL_N:-1000000}
SI=${STENCIL_ITERS:-4000}
SR=${STENCIL_ROUNDS:-3}
OUT="$ROOT/$B/bench/ckpt"
INCR_MB=${CKPT_INCR_MB:-32}
want() { [ -z "${CKPT_ONLY:-}" ] || [[ " $CKPT_ONLY " == *" $1 "* ]]; }

if ! "$CRIU" check > /dev/null 2>&1; then
	echo "ckpt.sh: skipped: $CRIU check fails (run deploy/install-criu.sh as root)"
	exit 0
fi
[ -x "$MPIV" ] || { echo "ckpt.sh: $MPIV not built" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/tmp" "$OUT/logs"
export TMPDIR="$OUT/tmp"
for p in mem stencil; do
	"$ROOT/$B/bin/mpivcc" -O2 -o "$OUT/ckpt_$p" "bench/ckpt_$p.c" || exit 1
done
cd "$OUT" || exit 2
fail=0
problems=
problem() { fail=1; problems="$problems$1"$'\n'; echo "ckpt.sh: $1" >&2; }

now() { date +%s.%N; }
. "$ROOT/bench/lib.bash"
calc() { awk "BEGIN { v = $1; if (v != v) print \"nan\"; else printf \"$2\\n\", v }" 2> /dev/null || echo nan; }
kv() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" | tail -n 1; }
kva() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }	# every line's

# start NAME ARGS...: mpiv run in the background (NAME.out/.err/.rc),
# sets DADDR, JOB, RUNPID.
RUNPID=
start() {
	local name=$1
	shift
	CUR=$name
	rm -f "$name.out" "$name.err" "$name.rc" "$name.json" stop res
	(
		MPIV_PRINT_DISPATCHER=1 timeout -k 5 ${CKPT_TIMEOUT:-300} "$MPIV" run --timeout $((${CKPT_TIMEOUT:-300} - 20)) \
		    --log-level info --report "$name.json" "$@" > "$name.out" \
		    2> "$name.err"
		echo $? > "$name.rc"
	) &
	RUNPID=$!
	DADDR= JOB=
	wait_for 30 grep -qs '^mpiv: dispatcher ' "$name.err" || return 1
	set -- $(grep -m1 '^mpiv: dispatcher ' "$name.err")
	DADDR=$3 JOB=$5
}
finish() {	# touch stop, wait; 0 if the job exited 0
	touch stop
	wait "$RUNPID"
	RUNPID=
	cp "$CUR".* logs/ 2> /dev/null
	[ "$(cat "$CUR.rc" 2> /dev/null)" = 0 ]
}
cleanup() {
	touch "$OUT/stop" 2> /dev/null
	[ -n "$RUNPID" ] && wait "$RUNPID" 2> /dev/null
}
trap cleanup EXIT
# taken_lines NAME: the node's "checkpoint taken" lines of job $JOB
taken() { grep "node checkpoint taken job=$JOB " "$CUR.err"; }
ntaken() { [ "$(taken | wc -l)" -ge "$1" ]; }
ck() { timeout 30 "$MPIV" checkpoint --dispatcher "$DADDR" "$JOB" "$@" > /dev/null 2>> "$CUR.err"; }
# secs_of HH:MM:SS.mmm -> seconds in the day
secs_of() { awk -F: '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }'; }

host="$(nproc) cores ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), kernel $(uname -r)"
{
echo "## Checkpoints ($(date -u '+%Y-%m-%d %H:%M UTC'), $host, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "mpiv = \`$B/bin/mpiv\` ($(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null)), embedded deployment (1 CM, 1 CS, 1 node), CRIU \`$CRIU\`; zstd level ${MPIV_ZSTD_LEVEL:-3} unless said; median of $R rounds."
echo

if want 1; then
# ---------------- 1. round trip vs image size ----------------
echo "### 1. Checkpoint and restore of one rank vs its data (2 ranks, rank 0 holds X MB)"
echo
echo "| X MB | image MB (zstd) | raw MB | rank stall ms | dump s | upload s | request -> durable s | relaunch ms | fetch s | restore s | kill -> running again s | data intact |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for x in $SIZES; do
	for f in img raw stall dump up dur rel fetch rest rt; do : > "m.$f"; done
	okall=yes
	for r in $(seq "$R"); do
		n="rt-$x-$r"
		rm -f ck.log
		export MPIV_CKPT_LOG="$OUT/ck.log"
		if ! start "$n" -n 2 ./ckpt_mem "$x" 0 "$OUT/stop" "$OUT/res" ||
		    ! wait_for 120 grep -q '^ready' "$n.out"; then
			unset MPIV_CKPT_LOG
			problem "$n: job did not start (see $OUT/logs/$n.err)"
			finish
			okall=no
			continue
		fi
		unset MPIV_CKPT_LOG
		t0=$(now)
		ck 0
		if ! wait_for 200 ntaken 1; then
			problem "$n: no checkpoint within 200 s (mpiv checkpoint --dispatcher $DADDR $JOB 0)"
			finish
			okall=no
			continue
		fi
		t1=$(now)
		line=$(taken | tail -n 1)
		echo "$line" | kv bytes | awk '{printf "%.1f\n", $1 / 1048576}' >> m.img
		echo "$line" | kv raw_bytes | awk '{printf "%.1f\n", $1 / 1048576}' >> m.raw
		echo "$line" | kv dump_s >> m.dump
		echo "$line" | kv upload_s >> m.up
		calc "$t1 - $t0" %.3f >> m.dur
		sed -n 's/^ckpt 1 rank 0 .*stall_us \([0-9]*\).*/\1/p' ck.log |
		    awk '{print $1 / 1000}' >> m.stall
		# The CS has answered before "taken"; wait until the CM knows
		# (its image) then kill.
		sleep 0.5
		tk=$(now)
		timeout 30 "$MPIV" kill --dispatcher "$DADDR" "$JOB" 0 > /dev/null 2>> "$n.err"
		if wait_for 120 awk -v t="$tk" '$1 == "resumed" && $2 == 0 && $3 > t { f = 1 } END { exit !f }' res 2> /dev/null; then
			awk -v t="$tk" '$1 == "resumed" && $2 == 0 && $3 > t { printf "%.3f\n", $3 - t; exit }' res >> m.rt
		else
			problem "$n: rank 0 not running again 120 s after mpiv kill"
		fi
		wait_for 10 grep -q "node restored job=$JOB " "$n.err"
		rl=$(grep "node restored job=$JOB " "$n.err" | tail -n 1)
		echo "$rl" | kv fetch_s >> m.fetch
		echo "$rl" | kv restore_s >> m.rest
		sleep 0.3
		if ! finish; then
			problem "$n: exit $(cat "$n.rc")"
			okall=no
		fi
		python3 -c 'import json,sys
l = json.load(open(sys.argv[1]))["restart_log"]
print(l[0]["relaunch_ms"] if l and l[0]["from_ckpt"] >= 1 else "nan")' "$n.json" >> m.rel 2> /dev/null || echo nan >> m.rel
		[ "$(tail -n 1 m.rel)" = nan ] && problem "$n: no restart from a checkpoint in the report"
		[ "$(grep -c 'data_ok=1' "$n.out")" = 2 ] || { okall=no; problem "$n: data not intact after the restore"; }
	done
	printf '| %s |' "$x"
	for f in img raw stall dump up dur rel fetch rest rt; do
		printf ' %s |' "$(median < "m.$f")"
	done
	echo " $okall |"
done
echo
echo "stall: the rank's own pause (drain + sync with the node + fork, \`MPIV_CKPT_LOG\`); dump: CRIU dump of the stopped clone into tmpfs; upload: archive + zstd + send to the CS until its ImageAck (the CS fsyncs); request -> durable: from \`mpiv checkpoint\` until the node logs the checkpoint taken; relaunch: the report's \`relaunch_ms\` (dispatcher: the exit report to the restored TaskStarted); fetch/restore: node log \"restored\" (ImageGet + unpack, then \`criu restore\`); kill -> running again: from \`mpiv kill\` until the restored rank runs its own code (it notices the time jump at its next loop iteration: after reconnecting to the CM)."
echo

fi
if want 2; then
# ---------------- 2. CS throughput ----------------
echo "### 2. CS throughput: 4 ranks of $CS_MB MB checkpoint at once (one CS, one node)"
echo
echo "| ranks checkpointing | image MB (zstd, total) | raw MB (total) | request -> last durable s | upload phase span s | aggregate MB/s (zstd, over upload span) | aggregate raw MB/s (request -> last durable) | per-upload MB/s (median) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in 1a 1b 1c 1d 1e 1f 1g 4a 4b 4c 4d 4e 4f 4g; do : > "c.$f"; done
for r in $(seq "$R"); do
	n="cs-$r"
	if ! start "$n" -n 4 ./ckpt_mem "$CS_MB" all "$OUT/stop" "$OUT/res" ||
	    ! wait_for 120 grep -q '^ready' "$n.out"; then
		problem "$n: job did not start"
		finish
		continue
	fi
	for phase in 1 4; do
		have=$(taken | wc -l)
		t0=$(now)
		if [ "$phase" = 1 ]; then ck 0; else ck; fi
		if ! wait_for 250 ntaken $((have + phase)); then
			problem "$n: $phase checkpoints not taken within 250 s"
			continue
		fi
		t1=$(now)
		taken | tail -n "$phase" > lines
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) { sub("bytes=", "", $i); s += $i } } END { printf "%.1f\n", s / 1048576 }' lines >> "c.${phase}a"
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^raw_bytes=/) { sub("raw_bytes=", "", $i); s += $i } } END { printf "%.1f\n", s / 1048576 }' lines >> "c.${phase}b"
		calc "$t1 - $t0" %.3f >> "c.${phase}c"
		# upload phase of each: [log time - upload_s, log time]
		while read -r l; do
			e=$(echo "$l" | cut -d' ' -f1 | secs_of)
			echo "$e $(echo "$l" | kv upload_s) $(echo "$l" | kv bytes)"
		done < lines > spans
		span=$(awk 'NR == 1 || $1 - $2 < lo { lo = $1 - $2 } NR == 1 || $1 > hi { hi = $1 } END { printf "%.3f", hi - lo }' spans)
		echo "$span" >> "c.${phase}d"
		calc "$(tail -n 1 "c.${phase}a") / $span" %.1f >> "c.${phase}e"
		calc "$(tail -n 1 "c.${phase}b") / ($t1 - $t0)" %.1f >> "c.${phase}f"
		awk '$2 > 0 { printf "%.1f\n", $3 / 1048576 / $2 }' spans | median >> "c.${phase}g"
		sleep 0.5
	done
	finish || problem "$n: exit $(cat "$n.rc")"
	[ "$(grep -c 'data_ok=1' "$n.out")" = 4 ] || problem "$n: data not intact"
done
for phase in 1 4; do
	printf '| %s |' "$phase"
	for f in a b c d e f g; do printf ' %s |' "$(median < "c.$phase$f")"; done
	echo
done
echo
echo "upload phase span: from the earliest start to the latest end of the uploads (node log time minus upload_s); an upload is archive + zstd + send + CS fsync, so with 4 at once on 2 cores the compression competes for the CPU."
echo

fi
if want 3; then
# ---------------- 3. zstd level ----------------
echo "### 3. zstd level (rank 0 of 2 holds $Z_MB MB; MPIV_ZSTD_LEVEL exported to mpiv run)"
echo
echo "| level | level seen in the node agent's environ | image MB | raw MB | raw / image | dump s | upload s | dump + upload s |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for lv in $LEVELS; do
	for f in img raw dump up; do : > "z.$f"; done
	seen=
	for r in $(seq "$R"); do
		n="z-$lv-$r"
		export MPIV_ZSTD_LEVEL="$lv"
		start "$n" -n 2 ./ckpt_mem "$Z_MB" 0 "$OUT/stop" "$OUT/res"
		unset MPIV_ZSTD_LEVEL
		if ! wait_for 120 grep -q '^ready' "$n.out"; then
			problem "$n: job did not start"
			finish
			continue
		fi
		for p in $(pgrep -f -- "node --dispatcher $DADDR"); do
			s=$(tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | sed -n 's/^MPIV_ZSTD_LEVEL=//p')
			[ -n "$s" ] && seen=$s
		done
		ck 0
		if ! wait_for 250 ntaken 1; then
			problem "$n: no checkpoint within 250 s"
		else
			line=$(taken | tail -n 1)
			echo "$line" | kv bytes | awk '{printf "%.1f\n", $1 / 1048576}' >> z.img
			echo "$line" | kv raw_bytes | awk '{printf "%.1f\n", $1 / 1048576}' >> z.raw
			echo "$line" | kv dump_s >> z.dump
			echo "$line" | kv upload_s >> z.up
		fi
		finish || problem "$n: exit $(cat "$n.rc")"
	done
	i=$(median < z.img); w=$(median < z.raw); d=$(median < z.dump); u=$(median < z.up)
	echo "| $lv | ${seen:-not found} | $i | $w | $(calc "$w / $i" %.2f) | $d | $u | $(calc "$d + $u" %.3f) |"
done
echo

fi
if want 4; then
# ---------------- 4. stencil slowdown ----------------
echo "### 4. Stencil slowdown vs checkpoints per rank (4 ranks, $SN doubles x 2 arrays = $((SN * 16 / 1048576)) MB per rank, $SI iterations, $SR rounds, order reversed every other round)"
echo
: > base
for c in 0 2 4 4f 8; do : > "s.$c"; : > "s.$c.n"; : > "s.$c.r"; : > "s.$c.cpu"; : > "s.$c.dump"; : > "s.$c.bytes"; done
for r in $(seq "$SR"); do
	b=nan
	order="0 2 4 4f 8"
	[ $((r % 2)) = 0 ] && order="8 4f 4 2 0"
	for c in $order; do
		n="st-$c-$r"
		if [ "$c" = 0 ]; then
			start "$n" -n 4 ./ckpt_stencil "$SN" "$SI"
		else
			# interval from the checkpoint-free time of this round (or
			# the first round's); the first is at S * (0.5 + rank/4)
			bt=$(tail -n 1 base)
			[ -n "$bt" ] || bt=$(median < s.0)
			[ "$bt" = nan ] && bt=20
			iv=$(calc "$bt / (${c%f} + 0.5)" %.3f)
			if [ "$c" = 4f ]; then
				MPIV_CKPT_FULL_EVERY=1 start "$n" -n 4 --ckpt-interval "$iv" ./ckpt_stencil "$SN" "$SI"
			else
				start "$n" -n 4 --ckpt-interval "$iv" ./ckpt_stencil "$SN" "$SI"
			fi
		fi
		finish || problem "$n: exit $(cat "$n.rc")"
		w=$(sed -n 's/^RESULT wall_s=\([0-9.]*\).*/\1/p' "$n.out")
		sed -n 's/^RESULT .*checksum=//p' "$n.out" >> sums
		echo "${w:-nan}" >> "s.$c"
		[ "$c" = 0 ] && echo "${w:-nan}" >> base
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["checkpoints"] / 4)' "$n.json" >> "s.$c.n" 2> /dev/null || echo nan >> "s.$c.n"
		taken | kva upload_cpu_s >> "s.$c.cpu"
		taken | kva dump_s >> "s.$c.dump"
		taken | kva bytes >> "s.$c.bytes"
	done
	b=$(tail -n 1 base)
	for c in 0 2 4 4f 8; do
		calc "$b / $(tail -n 1 "s.$c")" %.3f >> "s.$c.r"
	done
done
[ "$(sort -u sums | wc -l)" = 1 ] || problem "stencil: checksums differ between runs: $(sort -u sums | tr '\n' ' ')"
echo "| checkpoints asked per rank | taken per rank (median) | wall s (median) | speed vs no checkpoints (median of same-round ratios) | image KB (median) | dump s per image (median) | upload CPU s per image (median) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for c in 0 2 4 4f 8; do
	echo "| $c | $(median < "s.$c.n") | $(median < "s.$c") | $(median < "s.$c.r") | $(awk '{print $1 / 1024}' "s.$c.bytes" | median) | $(median < "s.$c.dump") | $(median < "s.$c.cpu") |"
done
echo
echo "4f: 4 asked, every image full (MPIV_CKPT_FULL_EVERY=1): checkpoints as before incremental images."
echo
s4=$(median < s.4.r)
echo "MPICH-V reported about 0.94 of checkpoint-free speed with 4 checkpoints per process; here $s4 with 4: $(awk -v s="$s4" 'BEGIN { if (s != s + 0 || s == "nan") print "no measurement"; else if (s > 0.94) print "**better**"; else if (s == 0.94) print "the same"; else print "**worse**" }')."
fi
if want 5; then
# ---------------- 5. incremental images ----------------
echo
echo "### 5. Incremental images: rank 0 of 2 holds $INCR_MB MB that never change, --ckpt-interval 1, until rank 0 took 6 checkpoints"
echo
echo "| images | first image MB | later images KB (median) | later / first | dump s (median) | upload s first | upload s later (median) | upload CPU s first | upload CPU s later (median) | data intact |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for mode in incremental full; do
	n="incr-$mode"
	if [ "$mode" = full ]; then export MPIV_CKPT_FULL_EVERY=1; fi
	if ! start "$n" -n 2 --ckpt-interval 1 ./ckpt_mem "$INCR_MB" 0 "$OUT/stop" "$OUT/res" ||
	    ! wait_for 120 grep -q '^ready' "$n.out"; then
		unset MPIV_CKPT_FULL_EVERY
		problem "$n: job did not start (see $OUT/logs/$n.err)"
		finish
		continue
	fi
	unset MPIV_CKPT_FULL_EVERY
	r0() { taken | grep ' rank=0 '; }
	wait_for 120 eval '[ "$(r0 | wc -l)" -ge 6 ]' || problem "$n: rank 0 took fewer than 6 checkpoints in 120 s"
	finish || problem "$n: exit $(cat "$n.rc")"
	first=$(r0 | head -n 1)
	r0 | tail -n +2 > later
	f=$(kv bytes <<< "$first") l=$(kva bytes < later | median)
	intact=no
	grep -q 'RESULT rank=0 .* data_ok=1' "$n.out" && intact=yes
	echo "| $mode | $(calc "$f / 1048576" %.1f) | $(calc "$l / 1024" %.1f) | $(calc "$l / $f" %.4f) | $(r0 | kva dump_s | median) | $(kv upload_s <<< "$first") | $(kva upload_s < later | median) | $(kv upload_cpu_s <<< "$first") | $(kva upload_cpu_s < later | median) | $intact |"
done
echo
echo "upload CPU: the node's upload worker (scan, archive, zstd, send; not the CRIU dump, not the CS)."
fi
if [ -n "$problems" ]; then
	echo
	echo "Problems during this run:"
	echo
	printf '%s' "$problems" | sed 's/^/- /'
fi
} | tee "$OUT/../ckpt.md"
[ -z "$(sed -n '/^Problems during this run/p' "$OUT/../ckpt.md")" ] || { echo "ckpt.sh: some runs failed, logs in $OUT/logs" >&2; exit 1; }
exit 0
