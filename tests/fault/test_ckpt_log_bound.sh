#!/usr/bin/env bash
# tests/fault/test_ckpt_log_bound.sh: the Channel Memory's message log
# stays bounded over a long run with periodic checkpoints
# (docs/CHECKPOINT.md "Taking checkpoint k" step 7), and grows with the
# run without them.
#
# Two runs of tests/fault/progs/flt_ckpt (the same arguments, ~5 s,
# --log-level info), output byte-identical to each other:
#   - without checkpoints: the CM's "cm job end ... messages=M
#     log_entries=L" line: L >= 90% of M (nothing is ever freed);
#   - with --ckpt-interval 0.3: "cm log freed ... entries=E ...
#     log_entries=N" lines (N = what the job's log holds after the free,
#     N + E = what it held just before): frees happen for every rank, the
#     peak N + E stays under a quarter of everything logged, the peak over
#     the second half of the run is not above twice the first half's
#     (no growth with time), and log_entries at the job's end is small.
#
#   MPIV_BUILD=build-x bash tests/fault/test_ckpt_log_bound.sh
. "$(dirname "$0")/common.bash"
# what it tests is the relay's (the CMs hold the messages): every job relay
FLT_PROTOCOL=relay

flt_need_mpiv
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if ! timeout 60 "$CRIU" check > /dev/null 2>&1; then
	flt_skip "$CRIU check fails: no working CRIU here (deploy/install-criu.sh as root)"
fi
timeout 20 "$MPIV" run --help 2>&1 | grep -q -- '--ckpt-interval' ||
	flt_skip "mpiv run has no --ckpt-interval yet"

NP=3
ARGS=(40000 1 1500)	# flt_ckpt STEPS MiB WORK: ~5 s, ~170k messages
start=$(date +%s)
BIN=$(flt_prog flt_ckpt) || { flt_notok "cannot compile tests/fault/progs/flt_ckpt.c"; flt_finish; }

# job_end FILE KEY: KEY=value of the CM's "cm job end" line
job_end() { sed -n "s/.* cm job end .* $2=\([0-9]*\).*/\1/p" "$1" | head -n 1; }

# ---- without checkpoints: the log only grows
nock=$FLT_TMP/nock
flt_job "$nock" 120 -n $NP --log-level info "$BIN" "${ARGS[@]}"
m0=$(job_end "$nock.err" messages) l0=$(job_end "$nock.err" log_entries)
if [ "$FLT_RC" != 0 ] || grep -q FLT-FAIL "$nock.err" || [ ! -s "$nock.out" ]; then
	flt_notok "run without checkpoints: exit $FLT_RC" "$nock.err"
	flt_finish
fi
if [ -z "$m0" ] || [ -z "$l0" ]; then
	flt_notok "run without checkpoints: no 'cm job end ... messages= log_entries=' line from the CM" "$nock.err"
	flt_finish
fi
echo "# without checkpoints: $m0 messages, log_entries $l0 at the end, $(flt_report "$nock.json" wall_s) s"
if [ "$m0" -ge 20000 ] && [ "$l0" -ge $((m0 * 9 / 10)) ]; then
	flt_ok "without checkpoints the log keeps everything ($l0 entries for $m0 messages)"
else
	flt_notok "without checkpoints: $l0 log entries for $m0 messages (want >= 90% of >= 20000)"
fi

# ---- with checkpoints every 0.3 s
ck=$FLT_TMP/ck
flt_job "$ck" 120 -n $NP --log-level info --ckpt-interval 0.3 "$BIN" "${ARGS[@]}"
if [ "$FLT_RC" != 0 ] || grep -q FLT-FAIL "$ck.err"; then
	flt_notok "run with --ckpt-interval 0.3: exit $FLT_RC" "$ck.err"
	flt_finish
fi
flt_same "with --ckpt-interval 0.3: output and exit 0" "$nock.out" "$ck.out"
m1=$(job_end "$ck.err" messages) l1=$(job_end "$ck.err" log_entries)
# "rank entries log_entries" of each free, in order
sed -n 's/.* cm log freed .* rank=\([0-9]*\) .* entries=\([0-9]*\) bytes=.* log_entries=\([0-9]*\).*/\1 \2 \3/p' \
	"$ck.err" > "$ck.frees"
nf=$(wc -l < "$ck.frees")
ranks=$(cut -d' ' -f1 "$ck.frees" | sort -u | wc -l)
echo "# with checkpoints: ${m1:-?} messages, log_entries ${l1:-?} at the end, $nf frees, $(flt_report "$ck.json" checkpoints) checkpoints, $(flt_report "$ck.json" wall_s) s"
if [ "$nf" -ge $((3 * NP)) ] && [ "$ranks" = $NP ]; then
	flt_ok "the CM freed the log $nf times, for all $NP ranks"
else
	flt_notok "the CM freed the log $nf times for $ranks ranks (want >= $((3 * NP)) frees, all $NP ranks)" "$ck.err"
	flt_finish
fi
if [ -z "$m1" ] || [ -z "$l1" ]; then
	flt_notok "no 'cm job end' line from the CM" "$ck.err"
	flt_finish
fi
# peaks: all, first half of the frees, second half
read -r peak p1 p2 < <(awk -v n="$nf" '{ v = $2 + $3; if (v > all) all = v;
	if (NR <= n / 2) { if (v > a) a = v } else if (v > b) b = v }
	END { print all + 0, a + 0, b + 0 }' "$ck.frees")
echo "# peak log entries $peak (first half $p1, second half $p2)"
if [ "$peak" -lt $((m1 / 4)) ]; then
	flt_ok "peak log size $peak entries < 1/4 of the $m1 messages logged"
else
	flt_notok "peak log size $peak entries, $m1 messages logged: not bounded" "$ck.frees"
fi
if [ "$p2" -le $((2 * p1 + 1000)) ]; then
	flt_ok "no growth over the run: second-half peak $p2 <= 2 x first-half peak $p1 (+1000)"
else
	flt_notok "the log grows over the run: second-half peak $p2, first half $p1" "$ck.frees"
fi
if [ "$l1" -lt $((m1 / 4)) ] && [ "$l1" -lt $((l0 / 4)) ]; then
	flt_ok "log entries at the end: $l1 with checkpoints, $l0 without"
else
	flt_notok "log entries at the end: $l1 with checkpoints ($m1 messages), $l0 without"
fi
echo "# took $(( $(date +%s) - start ))s"
flt_finish
