#!/usr/bin/env bash
# tests/integration/test_timeline.sh: the events of a run (JobEvent,
# dispatcher/disp_events.c), the report's "events", and the timeline page
# (mpiv run --timeline, mpiv report --html; cli/timeline.c), with faults
# injected at known places:
#   fault     MPIV_FAULT kills rank 1 at its 30th send and rank 2 at its
#             40th (incarnation 1 each; 30000 steps, over a second even on
#             a quiet machine): the report has exactly those exits
#             (signal 9), a launch and a start of incarnation 2 of both,
#             every started rank's exit; checkpoints every 0.1 s when CRIU
#             works: "ckpt" events with dump and upload times
#   page      the page embeds exactly the report's events; every mark
#             (data-ev) names an event of its kind and rank; mpiv report
#             --html draws the same events from the saved report
#   mpiv kill `mpiv kill` of rank 3 at a known moment: a "kill" event
#             ("mpiv kill"), then that incarnation's exit and the next's
#             launch, in that order
#   errors    mpiv report on a missing file, on JSON that is no report,
#             without --html: clear errors
#   browser   headless chromium (when installed) renders the page: its
#             DOM has the rows' segments and the marks
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init timeline
timeout 120 "$B/bin/mpivcc" -O2 -o "$T/stencil" tests/fault/progs/flt_stencil.c ||
	{ notok "cannot compile flt_stencil"; exit 1; }
CK=()
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
timeout 60 "$CRIU" check > /dev/null 2>&1 && CK=(--ckpt-interval 0.1)

# check.py REPORT PAGE [CHECKS...]: asserts on the events, prints what
# it found; exit 1 with the reason on the first failure
cat > "$T/check.py" <<'EOF'
import json, re, sys
rep = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
ev = rep["events"]
def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)
m = re.search(r"<script type='application/json' id='events'>(.*?)</script>", page, re.S)
if not m:
    fail("no events in the page")
if json.loads(m.group(1)) != ev:
    fail("the page's events differ from the report's")
nmarks = 0
for mk in re.finditer(r"data-ev='(-?\d+)'[^>]*?data-(kind|state)='([a-z_]+)'(?: data-rank='(-?\d+)')?", page):
    i, what, val, rank = int(mk.group(1)), mk.group(2), mk.group(3), mk.group(4)
    if i < 0 or i >= len(ev):
        fail("mark names event %d of %d" % (i, len(ev)))
    e = ev[i]
    if what == "kind" and e["kind"] != val:
        fail("mark %s names event %d, a %s" % (val, i, e["kind"]))
    if what == "state" and e["kind"] not in ("launch", "started", "replay_done"):
        fail("segment %s begins at event %d, a %s" % (val, i, e["kind"]))
    if rank is not None and e["rank"] != int(rank):
        fail("mark of rank %s names event %d of rank %d" % (rank, i, e["rank"]))
    nmarks += 1
if nmarks < len([e for e in ev if e["rank"] >= 0]) // 2:
    fail("only %d marks for %d events" % (nmarks, len(ev)))
def find(kind, rank=None, inc=None):
    return [k for k, e in enumerate(ev) if e["kind"] == kind and
            (rank is None or e["rank"] == rank) and (inc is None or e["incarnation"] == inc)]
for chk in sys.argv[3:]:
    name, _, arg = chk.partition("=")
    if name == "faults":
        exits = [(e["rank"], e["incarnation"]) for e in ev if e["kind"] == "exit" and e["detail"] == "signal 9"]
        if sorted(exits) != [(1, 1), (2, 1)]:
            fail("killed exits %s, want ranks 1 and 2, incarnation 1" % exits)
        for r in (1, 2):
            if not find("launch", r, 2) or not find("started", r, 2):
                fail("rank %d: no launch/start of incarnation 2" % r)
            if find("launch", r, 2)[0] < find("exit", r, 1)[0]:
                fail("rank %d relaunched before its exit" % r)
        for e in ev:
            if e["kind"] == "started" and not find("exit", e["rank"], e["incarnation"]):
                fail("rank %d incarnation %d started, never ended" % (e["rank"], e["incarnation"]))
        if not find("running") or not find("done"):
            fail("no running/done events")
        print("faults: %d events, exits of (1,1) and (2,1) by signal 9, both relaunched" % len(ev))
    elif name == "ckpt":
        cks = [e for e in ev if e["kind"] == "ckpt"]
        if not cks or not all(e["span1"] > 0 and e["span2"] > 0 and e["value"] > 0 for e in cks):
            fail("checkpoints: %d, want some, each with dump and upload times" % len(cks))
        print("ckpt: %d durable checkpoints with dump and upload times" % len(cks))
    elif name == "kill":
        r = int(arg)
        k = find("kill", r)
        if len(k) != 1 or ev[k[0]]["detail"] != "mpiv kill":
            fail("rank %d: kill events %s" % (r, [ev[i] for i in k]))
        inc = ev[k[0]]["incarnation"]
        x, l = find("exit", r, inc), find("launch", r, inc + 1)
        if not x or not l or not (k[0] < x[0] < l[0]):
            fail("rank %d: kill %d, exit %s, launch %s: out of order" % (r, k[0], x, l))
        print("kill: rank %d incarnation %d killed by mpiv kill, exited, relaunched" % (r, inc))
EOF

# --- fault ---
MPIV_FAULT=send:30:1,send:40:2 timeout 120 "$MPIV" run -n 4 --timeout 90 "${CK[@]}" \
    --report "$T/f.json" --timeline "$T/f.html" "$T/stencil" 30000 4000 > "$T/f.out" 2> "$T/f.err"
rc=$?
checks=(faults)
[ "${#CK[@]}" -gt 0 ] && checks+=(ckpt)
if [ "$rc" != 0 ]; then
	notok "fault: exit $rc" "$T/f.err"
elif python3 "$T/check.py" "$T/f.json" "$T/f.html" "${checks[@]}" > "$T/f.chk" 2>&1; then
	while read -r l; do ok "$l"; done < "$T/f.chk"
	ok "page: the page's events are the report's, every mark names its event"
else
	notok "fault/page: $(tail -n 1 "$T/f.chk")" "$T/f.chk"
fi

# --- mpiv report --html ---
if timeout 30 "$MPIV" report "$T/f.json" --html "$T/f2.html" 2> "$T/r.err" &&
    python3 "$T/check.py" "$T/f.json" "$T/f2.html" > "$T/r.chk" 2>&1; then
	ok "page: mpiv report --html draws the saved report's events"
else
	notok "mpiv report --html" "$T/r.err" "$T/r.chk"
fi

# --- mpiv kill at a known moment ---
timeout 120 "$MPIV" run -v -n 4 --timeout 90 --report "$T/k.json" --timeline "$T/k.html" \
    "$T/stencil" 40000 4000 > "$T/k.out" 2> "$T/k.err" &
rpid=$!
PIDS+=("$rpid")
wait_for 30 grep -q 'dispatcher .* job ' "$T/k.err"
addr=$(sed -n 's/^mpiv: dispatcher \([^ ]*\) job \([^ ]*\)$/\1/p' "$T/k.err" | head -n 1)
job=$(sed -n 's/^mpiv: dispatcher \([^ ]*\) job \([^ ]*\)$/\2/p' "$T/k.err" | head -n 1)
sleep 0.5
timeout 20 "$MPIV" kill --dispatcher "$addr" "$job" 3 > "$T/kill.out" 2>&1 ||
	notok "mpiv kill --dispatcher $addr $job 3 failed" "$T/kill.out"
wait "$rpid"
rc=$?
if [ "$rc" != 0 ]; then
	notok "mpiv kill: job exit $rc" "$T/k.err"
elif python3 "$T/check.py" "$T/k.json" "$T/k.html" kill=3 > "$T/k.chk" 2>&1; then
	ok "$(cat "$T/k.chk")"
else
	notok "mpiv kill: $(tail -n 1 "$T/k.chk")" "$T/k.chk"
fi

# --- errors ---
e=0
timeout 10 "$MPIV" report "$T/none.json" --html "$T/x.html" > "$T/e1" 2>&1
[ $? = 1 ] && grep -q 'none.json' "$T/e1" && e=$((e + 1))
echo '{"a": 1}' > "$T/notrep.json"
timeout 10 "$MPIV" report "$T/notrep.json" --html "$T/x.html" > "$T/e2" 2>&1
[ $? = 1 ] && grep -q 'not a report' "$T/e2" && e=$((e + 1))
head -c 100 "$T/f.json" > "$T/cut.json"
timeout 10 "$MPIV" report "$T/cut.json" --html "$T/x.html" > "$T/e3" 2>&1
[ $? = 1 ] && grep -q 'not JSON' "$T/e3" && e=$((e + 1))
timeout 10 "$MPIV" report "$T/f.json" > "$T/e4" 2>&1
[ $? = 2 ] && grep -q 'usage' "$T/e4" && e=$((e + 1))
if [ "$e" = 4 ]; then
	ok "errors: missing file, not a report, truncated report, no --html: clear errors"
else
	notok "errors: $e of 4 as expected" "$T/e1" "$T/e2" "$T/e3" "$T/e4"
fi

# --- the page in a real browser ---
CH=$(command -v chromium || true)
if [ -n "$CH" ] && [ -s "$T/f.html" ]; then
	flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	    --disable-background-networking --disable-component-update --disable-sync
	    --user-data-dir="$T/chrome")
	timeout 60 "$CH" "${flags[@]}" --dump-dom "file://$T/f.html" > "$T/dom.html" 2> "$T/chrome.err"
	timeout 60 "$CH" "${flags[@]}" --window-size=1060,520 --screenshot="$T/shot.png" "file://$T/f.html" > /dev/null 2>> "$T/chrome.err"
	segs=$(grep -o "class=\"seg " "$T/dom.html" | wc -l)
	marks=$(grep -o "class=\"mark " "$T/dom.html" | wc -l)
	if [ "$segs" -ge 6 ] && [ "$marks" -ge 6 ] && [ -s "$T/shot.png" ]; then
		ok "browser: chromium renders the timeline ($segs segments, $marks marks, screenshot $(stat -c %s "$T/shot.png") bytes)"
	else
		notok "browser: $segs segments, $marks marks in the DOM" "$T/chrome.err"
	fi
else
	echo "# browser: no chromium here (apt-get install chromium): page not rendered"
fi
[ "$fail" = 0 ]
