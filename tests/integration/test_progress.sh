#!/usr/bin/env bash
# tests/integration/test_progress.sh: mpiv run's live status line
# (cli/run_progress.c), seen as a person sees it: in a tmux pane.
#   tty       a job with kills and checkpoints in a terminal: the line
#             appears ("mpiv: S s | 4 ranks: ... | K kills, R restarts |
#             C checkpoints"), its time and kill counts grow, and it is
#             gone from the screen once the job ended (at most 60 kills:
#             a kill every 250 ms on a VM whose restores are slow ran a
#             rank into the 50-restart limit)
#   output    the program's output on the same terminal: every output
#             line whole (the line is cleared before output)
#   pipe      stderr to a file: no status line, no escape sequence
#   flags     --no-progress on a terminal: none; --progress into a file:
#             there
#   sizes     a relay job: the line shows the log at the CMs and the
#             store ("log X MB, store Y MB"), each value shown one of the
#             report's "sizes" samples (the timeline's panels): one source
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init progress
command -v tmux > /dev/null || { echo "skip: no tmux (apt-get install tmux)"; exit 77; }
timeout 120 "$B/bin/mpivcc" -O2 -o "$T/stencil" tests/fault/progs/flt_stencil.c ||
	{ notok "cannot compile flt_stencil"; exit 1; }
CK=()
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
timeout 60 "$CRIU" check > /dev/null 2>&1 && CK=(--ckpt-interval 0.4)
S=mpiv-progress-$$
TM=(tmux -L "$S")
# each part on a tmux server of its own (a killed one may still be going)
tm_next() { "${TM[@]}" kill-server 2> /dev/null; S=$S-n; TM=(tmux -L "$S"); }
common_tm_cleanup() {
	for s in "$T"/tmux.*; do [ -e "$s" ] && tmux -L "${s#"$T"/tmux.}" kill-server 2> /dev/null; done
	common_cleanup
}
trap common_tm_cleanup EXIT
LINE='mpiv: [0-9]+\.[0-9] s \| 4 ranks: [0-9]+ [a-z]+(, [0-9]+ [a-z]+)* \| [0-9]+ kills?, [0-9]+ restarts? \| [0-9]+ checkpoints?'

# tm_new ARGS...: a session of the current server (remembered for cleanup)
tm_new() { : > "$T/tmux.$S"; "${TM[@]}" new-session -d -s "$S" "$@"; }
# pane: the visible screen of the session
pane() { "${TM[@]}" capture-pane -p -t "$S" 2> /dev/null; }

# --- tty ---
tm_new -x 160 -y 30 \
    "'$MPIV' run -n 4 --timeout 60 --chaos 250ms --chaos-max 60 ${CK[*]} '$T/stencil' 60000 4000 > '$T/tty.out'; echo EXIT=\$? > '$T/tty.rc'; sleep 60"
first= last=
for _ in $(seq 1 80); do
	sleep 0.25
	l=$(pane | grep -Eo "$LINE" | tail -n 1)
	[ -n "$l" ] && { [ -z "$first" ] && first=$l; last=$l; }
	[ -s "$T/tty.rc" ] && break
done
wait_for 60 test -s "$T/tty.rc"
sleep 0.3
after=$(pane)
t0=$(sed -n 's/^mpiv: \([0-9.]*\) s.*/\1/p' <<< "$first")
t1=$(sed -n 's/^mpiv: \([0-9.]*\) s.*/\1/p' <<< "$last")
k1=$(sed -n 's/.*| \([0-9]*\) kills\{0,1\},.*/\1/p' <<< "$last")
if [ -n "$first" ] && awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b > a) }' &&
    [ "${k1:-0}" -gt 0 ]; then
	ok "tty: the line shows and moves ('$first' ... '$last')"
else
	notok "tty: first '$first', last '$last'" "$T/tty.out"
fi
if grep -q 'EXIT=0' "$T/tty.rc" && ! grep -Eq "$LINE" <<< "$after"; then
	ok "tty: the job ended (exit 0) and the line is gone from the screen"
else
	notok "tty: $(cat "$T/tty.rc"); screen after the end: $(grep -E 'mpiv:' <<< "$after" | tail -n 1)" "$T/tty.out"
fi
tm_next

# --- output on the same terminal ---
tm_new -x 200 -y 200 \
    "'$MPIV' run -n 4 --timeout 60 --progress '$T/stencil' 12000 4000; echo EXIT=\$? > '$T/out.rc'; sleep 60"
wait_for 60 test -s "$T/out.rc"
"${TM[@]}" capture-pane -p -S - -t "$S" > "$T/screen"
nout=$(grep -c '^stencil: ' "$T/screen")
bad=$(grep 'stencil' "$T/screen" | grep -Evc '^stencil: (rank [0-9] step [0-9]+ local [0-9a-f]{16}|step [0-9]+ change [0-9]+|done 12000 steps, total [0-9]+)$')
if grep -q 'EXIT=0' "$T/out.rc" && [ "$nout" -ge 20 ] && [ "$bad" = 0 ]; then
	ok "output: $nout program lines on the terminal, each whole"
else
	notok "output: $nout lines, $bad mixed with the status line" "$T/screen"
fi
tm_next

# --- pipe, and the flags ---
timeout 60 "$MPIV" run -n 4 --chaos 300ms "$T/stencil" 6000 4000 > /dev/null 2> "$T/pipe.err"
if ! grep -q $'\r\|\033' "$T/pipe.err" && ! grep -Eq "$LINE" "$T/pipe.err"; then
	ok "pipe: no status line, no escape sequences on a non-terminal stderr"
else
	notok "pipe: a status line in a file" "$T/pipe.err"
fi
timeout 60 "$MPIV" run -n 4 --progress "$T/stencil" 6000 4000 > /dev/null 2> "$T/forced.err"
if grep -Eq "$LINE" "$T/forced.err"; then
	ok "flags: --progress draws it into a file too"
else
	notok "flags: --progress drew nothing" "$T/forced.err"
fi
tm_new -x 160 -y 30 \
    "'$MPIV' run -n 4 --no-progress '$T/stencil' 12000 4000 > /dev/null; echo EXIT=\$? > '$T/np.rc'; sleep 60"
seen=0
for _ in $(seq 1 40); do
	sleep 0.2
	pane | grep -Eq "$LINE" && seen=1
	[ -s "$T/np.rc" ] && break
done
if [ "$seen" = 0 ] && grep -q 'EXIT=0' "$T/np.rc"; then
	ok "flags: --no-progress on a terminal: no line"
else
	notok "flags: --no-progress: line seen $seen, $(cat "$T/np.rc" 2> /dev/null)"
fi

# --- the log and store sizes: the report's samples ---
timeout 60 "$MPIV" run -n 4 --protocol relay --progress --report "$T/sz.json" \
    "$T/stencil" 12000 4000 > /dev/null 2> "$T/sz.err"
rc=$?
tr '\r' '\n' < "$T/sz.err" | grep -Eo 'log [0-9.]+ MB, store [0-9.]+ MB$' | sort -u > "$T/sz.shown"
if [ "$rc" = 0 ] && [ -s "$T/sz.shown" ] && python3 - "$T/sz.json" "$T/sz.shown" > "$T/sz.chk" 2>&1 <<'EOF'
import json, sys
sz = json.load(open(sys.argv[1]))["sizes"]
have = {"log %.1f MB, store %.1f MB" % (l / 1e6, s / 1e6) for l, s in zip(sz["cm_log_bytes"], sz["store_bytes"])}
shown = [l.strip() for l in open(sys.argv[2]) if l.strip()]
bad = [l for l in shown if l not in have]
if bad or not any(not l.startswith("log 0.0 ") for l in shown):
    print("FAIL: shown %s, not among the samples: %s" % (shown, bad))
    sys.exit(1)
print("%d distinct values shown, each a sample of the report" % len(shown))
EOF
then
	ok "sizes: the line's log and store are the report's samples ($(cat "$T/sz.chk"))"
else
	notok "sizes: exit $rc; $(cat "$T/sz.chk" 2> /dev/null)" "$T/sz.err" "$T/sz.shown"
fi
[ "$fail" = 0 ]
