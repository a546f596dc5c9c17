#!/usr/bin/env bash
# tests/integration/test_sweep.sh: `mpiv sweep` (cli/sweep.c) through the
# embedded deployment, real jobs:
#   quick      --quick grid of tests/fault/progs/flt_stencil (MTBF 0 and
#              100ms with at most 4 kills a run x checkpoints never and every 200 ms when CRIU works):
#              exit 0, one row per run and cell in runs.csv / cells.csv,
#              kills in the chaos cells, results.json is JSON, the page has
#              both plots and a table row per cell, no NaN anywhere
#   recovery   per cell, the relaunch (kill to running), restore (launch
#              from a checkpoint to running) and replay (running to
#              replay_done) times: cells.csv's means and medians are the
#              ones the runs' reports' events give, the chaos cells have
#              some, the page draws a bar per cell with relaunches
#   resume     the same command again runs nothing ("done before" x 4),
#              and writes the same cells.csv (times re-read from reports)
#   interrupt  a 3-seed sweep stopped by SIGTERM once 2 runs were judged,
#              then started again: those 2 are not run again, it ends ok
#   other      another sweep into the same DIR: refused (exit 2) unless
#              --force, which starts over
#   wrong      flt_clockprint prints the time: the second seed's output
#              differs from the baseline's, its cell is marked wrong
#              (exit 1, cells.csv, the page's red row)
#   baseline   a program that fails: "the baseline run failed", exit 1
#   usage      bad durations, no "--", --seeds 0: exit 2 with a message
#   browser    when Debian's chromium is there: the page renders headless
#              (its DOM has the SVG points) and a screenshot is written
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init sweep
MPIVCC=$B/bin/mpivcc
for p in flt_stencil flt_clockprint; do
	timeout 120 "$MPIVCC" -O2 -o "$T/$p" "tests/fault/progs/$p.c" ||
		{ notok "cannot compile $p"; exit 1; }
done
CK=0,200ms,1s
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
timeout 60 "$CRIU" check > /dev/null 2>&1 || CK=0	# no checkpoints here
JOB=(-n 4 "$T/flt_stencil" 10000 4000)	# about half a second on a quiet machine

# sweep OUTFILE ARGS...: runs mpiv sweep (bounded), exit code in RC
sweep() {
	local o=$1
	shift
	timeout 300 "$MPIV" sweep "$@" > "$o" 2>&1
	RC=$?
}

# --- quick ---
W=$T/q
sweep "$T/q.log" --quick --mtbf 0,100ms,50ms --chaos-max 4 --ckpt-interval "$CK" --out "$W" -- "${JOB[@]}"
ncells=$([ "$CK" = 0 ] && echo 2 || echo 4)
if [ "$RC" != 0 ]; then
	notok "quick: exit $RC" "$T/q.log"
else
	rows=$(($(wc -l < "$W/runs.csv") - 1))
	crows=$(($(wc -l < "$W/cells.csv") - 1))
	kills=$(awk -F, 'NR > 1 && $1 > 0 { k += $8 } END { print k + 0 }' "$W/runs.csv")
	okruns=$(awk -F, 'NR > 1 && $4 == "ok"' "$W/runs.csv" | wc -l)
	if [ "$rows" = "$ncells" ] && [ "$crows" = "$ncells" ] && [ "$okruns" = "$ncells" ]; then
		ok "quick: $ncells cells, one run each, all ok"
	else
		notok "quick: runs.csv $rows rows, cells.csv $crows, ok $okruns (want $ncells)" "$W/runs.csv"
	fi
	if [ "$kills" -gt 0 ]; then
		ok "quick: $kills kills in the chaos cells, output still the baseline's"
	else
		notok "quick: no kill in the chaos cells (tests nothing)" "$W/runs.csv"
	fi
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["cells"]) == int(sys.argv[2]) and d["baseline_wall_s"] > 0' "$W/results.json" "$ncells" 2> "$T/json.err"; then
		ok "quick: results.json parses, $ncells cells, a baseline time"
	else
		notok "quick: results.json" "$T/json.err"
	fi
	svgs=$(grep -c "<svg" "$W/index.html")
	trs=$(grep -c "^<tr" "$W/index.html")
	want_svgs=$([ "$CK" = 0 ] && echo 2 || echo 3)
	if [ "$svgs" = "$want_svgs" ] && [ "$trs" = "$ncells" ] &&
	    grep -q "id='rate'" "$W/index.html" && ! grep -qiw 'nan' "$W/index.html" "$W/cells.csv" "$W/runs.csv"; then
		ok "quick: index.html: $svgs plots, $ncells cell rows, no NaN"
	else
		notok "quick: index.html: $svgs plots (want $want_svgs), $trs rows (want $ncells)" "$W/index.html"
	fi
fi

# --- recovery times, from the reports' events ---
cat > "$T/rec.py" <<'EOF'
import csv, glob, json, os, re, statistics, sys
d = sys.argv[1]
def fail(m):
    print("FAIL: " + m)
    sys.exit(1)
def times(rep):
    ev = rep["events"]
    out = {"relaunch": [], "restore": [], "replay": []}
    def first(kind, r, inc, start=0):
        for e in ev[start:]:
            if e["kind"] == kind and e["rank"] == r and e["incarnation"] == inc:
                return e["t"]
        return None
    for i, e in enumerate(ev):
        if e["kind"] != "launch" or e["rank"] < 0 or e["incarnation"] < 2:
            continue
        r, inc = e["rank"], e["incarnation"]
        down = first("kill", r, inc - 1)
        if down is None:
            down = first("exit", r, inc - 1)
        run, up = first("started", r, inc, i), first("replay_done", r, inc, i)
        if run is not None and down is not None:
            out["relaunch"].append(run - down)
        if run is not None and e["value"] > 0:
            out["restore"].append(run - e["t"])
        if run is not None and up is not None:
            out["replay"].append(max(up - run, 0.0))
    return out
cells = list(csv.DictReader(open(os.path.join(d, "cells.csv"))))
chaos_with = 0
for c in cells:
    m, k = float(c["mtbf_s"]), float(c["ckpt_interval_s"])
    pool = {"relaunch": [], "restore": [], "replay": []}
    for f in glob.glob(os.path.join(d, "runs", "m%d-c%d-s*.json" % (round(m * 1000), round(k * 1000)))):
        for key, v in times(json.load(open(f))).items():
            pool[key] += v
    if int(c["recoveries"]) != len(pool["relaunch"]):
        fail("cell %s/%s: %s recoveries, the reports have %d" % (m, k, c["recoveries"], len(pool["relaunch"])))
    for key, v in pool.items():
        for stat, want in (("mean", statistics.mean(v) if v else None), ("median", statistics.median(v) if v else None)):
            got = c["%s_%s_s" % (key, stat)]
            if (want is None) != (got == "") or (want is not None and abs(float(got) - want) > 1e-3):
                fail("cell %s/%s: %s_%s_s %r, the reports give %r" % (m, k, key, stat, got, want))
    if m > 0 and pool["relaunch"]:
        chaos_with += 1
        if min(pool["relaunch"]) < 0 or float(c["relaunch_median_s"]) <= 0:
            fail("cell %s/%s: relaunch times %s" % (m, k, pool["relaunch"]))
page = open(os.path.join(d, "index.html")).read()
bars = len(re.findall(r"<g class='pt rec'", page))
if chaos_with == 0 or bars != chaos_with or "id='recovery'" not in page:
    fail("%d chaos cells with relaunches, %d bars on the page" % (chaos_with, bars))
print("%d chaos cells: relaunch/restore/replay means and medians are the reports' events', one bar each on the page" % chaos_with)
EOF
if [ -s "$W/cells.csv" ] && python3 "$T/rec.py" "$W" > "$T/rec.chk" 2>&1; then
	ok "recovery: $(cat "$T/rec.chk")"
else
	notok "recovery: $(tail -n 1 "$T/rec.chk")" "$T/rec.chk" "$W/cells.csv"
fi
cp "$W/cells.csv" "$T/cells.before" 2> /dev/null

# --- resume ---
sweep "$T/r.log" --quick --mtbf 0,100ms,50ms --chaos-max 4 --ckpt-interval "$CK" --out "$W" -- "${JOB[@]}"
if cmp -s "$W/cells.csv" "$T/cells.before"; then
	ok "resume: the same cells.csv, recovery times included"
else
	notok "resume: cells.csv changed" "$T/cells.before" "$W/cells.csv"
fi
again=$(grep -c '(done before)' "$T/r.log")
if [ "$RC" = 0 ] && [ "$again" = "$ncells" ]; then
	ok "resume: the same command runs nothing again ($again done before)"
else
	notok "resume: exit $RC, $again runs done before (want $ncells)" "$T/r.log"
fi

# --- interrupt ---
W2=$T/i
timeout 300 "$MPIV" sweep --mtbf 0,100ms --chaos-max 4 --seeds 3 --out "$W2" -- "${JOB[@]}" > "$T/i1.log" 2>&1 &
spid=$!
judged() { [ "$(ls "$W2"/runs/*.res 2> /dev/null | wc -l)" -ge "$1" ]; }
wait_for 120 judged 2
kill -TERM "$spid"
wait "$spid"
rc1=$?
had=$(ls "$W2"/runs/*.res 2> /dev/null | wc -l)
sweep "$T/i2.log" --mtbf 0,100ms --chaos-max 4 --seeds 3 --out "$W2" -- "${JOB[@]}"
again=$(grep -c '(done before)' "$T/i2.log")
if [ "$rc1" != 0 ] && grep -q 'the same command resumes' "$T/i1.log" &&
    [ "$had" -ge 2 ] && [ "$again" = "$had" ] && [ "$RC" = 0 ] &&
    [ "$(grep -c '^\[' "$T/i2.log")" = 6 ]; then
	ok "interrupt: stopped with $had of 6 runs judged (exit $rc1), resumed: $again not run again, all 6 ok"
else
	notok "interrupt: first exit $rc1, $had judged, second exit $RC, $again done before" "$T/i1.log" "$T/i2.log"
fi

# --- other sweep into the same DIR ---
sweep "$T/o1.log" --mtbf 0,200ms --seeds 3 --out "$W2" -- "${JOB[@]}"
if [ "$RC" = 2 ] && grep -q 'holds another sweep' "$T/o1.log"; then
	ok "other: another sweep into the same DIR refused"
else
	notok "other: exit $RC" "$T/o1.log"
fi
sweep "$T/o2.log" --force --mtbf 0 --seeds 1 --out "$W2" -- "${JOB[@]}"
if [ "$RC" = 0 ] && ! grep -q '(done before)' "$T/o2.log"; then
	ok "other: --force starts over"
else
	notok "other: --force: exit $RC" "$T/o2.log"
fi

# --- wrong output ---
W3=$T/w
sweep "$T/w.log" --seeds 2 --out "$W3" -- -n 2 "$T/flt_clockprint" 20 1000
wrong=$(awk -F, 'NR == 2 { print $5 }' "$W3/cells.csv" 2> /dev/null)
if [ "$RC" = 1 ] && [ "$wrong" = 1 ] && grep -q 'wrong-output' "$T/w.log" &&
    grep -q "<tr class='bad'>" "$W3/index.html"; then
	ok "wrong: a different output marks the cell (exit 1, wrong_output 1, red row)"
else
	notok "wrong: exit $RC, wrong_output '$wrong'" "$T/w.log" "$W3/cells.csv"
fi

# --- failing baseline ---
sweep "$T/b.log" --seeds 1 --out "$T/b" -- -n 2 /bin/false
if [ "$RC" = 1 ] && grep -q 'the baseline run failed' "$T/b.log"; then
	ok "baseline: a failing baseline stops the sweep (exit 1)"
else
	notok "baseline: exit $RC" "$T/b.log"
fi

# --- usage ---
u=0
for args in "--mtbf 10x -- -n 2 /bin/true" "--mtbf 0 -n 2 /bin/true" \
    "--seeds 0 -- -n 2 /bin/true" "--ckpt-interval 1s,1000ms -- -n 2 /bin/true" \
    "--mtbf 0"; do
	# shellcheck disable=SC2086
	timeout 20 "$MPIV" sweep $args --out "$T/u" > "$T/u.log" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q '^mpiv sweep: ' "$T/u.log"; then
		u=$((u + 1))
	else
		notok "usage: 'mpiv sweep $args': exit $rc" "$T/u.log"
	fi
done
[ "$u" = 5 ] && ok "usage: 5 bad command lines refused with exit 2 and a message"

# --- the page in a real browser ---
CH=$(command -v chromium || true)
if [ -n "$CH" ] && [ -s "$W/index.html" ]; then
	flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	    --disable-background-networking --disable-component-update --disable-sync
	    --user-data-dir="$T/chrome")
	timeout 60 "$CH" "${flags[@]}" --dump-dom "file://$W/index.html" > "$T/dom.html" 2> "$T/chrome.err"
	timeout 60 "$CH" "${flags[@]}" --window-size=900,1400 --screenshot="$T/shot.png" "file://$W/index.html" > /dev/null 2>> "$T/chrome.err"
	pts=$(grep -o '<circle' "$T/dom.html" | wc -l)
	if [ "$pts" -ge "$ncells" ] && [ -s "$T/shot.png" ]; then
		ok "browser: chromium renders the page ($pts points in its DOM, screenshot $(stat -c %s "$T/shot.png") bytes)"
	else
		notok "browser: $pts points in the DOM, screenshot $(stat -c %s "$T/shot.png" 2> /dev/null || echo none)" "$T/chrome.err"
	fi
else
	echo "# browser: no chromium here (apt-get install chromium): page not rendered"
fi
[ "$fail" = 0 ]
