#!/usr/bin/env bash
# tests/integration/test_protocol.sh: choosing the protocol and what nodes
# advertise (docs/DIRECT.md). A node started with --no-listen says so to
# the dispatcher and in `mpiv status`; `mpiv run --protocol` takes relay,
# auto (which runs relay until the direct protocol passes the fault
# suites) and direct, and refuses anything else with exit 2 and one clear
# line; the report and the dispatcher's log say which protocol the job
# ran. Where direct jobs are placed: test_direct_place.sh.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init protocol
"$B/bin/mpivcc" -O2 -o "$T/hi" tests/integration/hi.c || exit 1

"$MPIV" dispatcher --listen 127.0.0.1:0 --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
"$MPIV" node --dispatcher "$DA" --slots 2 --name open --user root \
    --cache-dir "$T/c1" 2> "$T/n1.err" &
PIDS+=($!)
"$MPIV" node --dispatcher "$DA" --slots 2 --name walled --no-listen --user root \
    --cache-dir "$T/c2" 2> "$T/n2.err" &
PIDS+=($!)
# (the two nodes register in either order: wait for both lines)
wait_for 15 grep -q 'node registered .*name=walled .*listen=0' "$T/d.err" &&
    wait_for 15 grep -q 'node registered .*name=open .*listen=1' "$T/d.err" &&
    ok "the dispatcher knows which node takes connections (listen=1/0)" ||
    notok "node registration with --no-listen" "$T/d.err"
"$MPIV" status --dispatcher "$DA" --json > "$T/st.json" 2> "$T/st.err"
python3 - "$T/st.json" <<'PY' && ok "mpiv status --json: listen 1 for open, 0 for walled" || notok "status listen fields" "$T/st.json"
import json, sys
n = {x["name"]: x["listen"] for x in json.load(open(sys.argv[1]))["nodes"]}
sys.exit(0 if n == {"open": 1, "walled": 0} else 1)
PY
"$MPIV" status --dispatcher "$DA" > "$T/st.txt" 2>&1
grep -qE 'walled .* no +[0-9.]+s' "$T/st.txt" && grep -q 'LISTEN' "$T/st.txt" &&
    ok "mpiv status shows a LISTEN column" || notok "status text" "$T/st.txt"

for p in relay auto; do
	timeout 60 "$MPIV" run --dispatcher "$DA" --protocol "$p" --report "$T/$p.json" \
	    -n 4 "$T/hi" > "$T/$p.out" 2> "$T/$p.err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/$p.out")" = "hi size=4 sum=4" ] &&
	    grep -q '"protocol":"relay"' "$T/$p.json"; then
		ok "--protocol $p: runs relay, exit 0, the report says so"
	else
		notok "--protocol $p: rc $rc" "$T/$p.err" "$T/$p.json"
	fi
done
grep -q 'job submitted job=1 .*protocol=relay' "$T/d.err" &&
    grep -q 'job submitted job=2 .*protocol=auto' "$T/d.err" &&
    [ "$(grep -c 'job placed job=[12] protocol=relay' "$T/d.err")" = 2 ] &&
    ok "the dispatcher logs the protocol asked (submitted) and run (placed)" ||
    notok "protocol= in the dispatcher's log" "$T/d.err"
# direct is taken: the job runs on "open", direct
timeout 60 "$MPIV" run --dispatcher "$DA" --protocol direct --timeout 20 \
    --report "$T/direct.json" -n 2 "$T/hi" > "$T/direct.out" 2> "$T/direct.err"
rc=$?
[ "$rc" = 0 ] && [ "$(cat "$T/direct.out")" = "hi size=2 sum=2" ] &&
    grep -q '"protocol":"direct"' "$T/direct.json" &&
    grep -q 'job placed job=3 protocol=direct' "$T/d.err" &&
    ok "--protocol direct: placed and run direct, exit 0, the report says so" ||
    notok "--protocol direct: rc $rc" "$T/direct.err" "$T/direct.json"
for p in bogus ""; do
	timeout 20 "$MPIV" run --dispatcher "$DA" --protocol "$p" -n 2 "$T/hi" \
	    > "$T/bad.out" 2> "$T/bad.err"
	rc=$?
	want='bad --protocol'
	[ "$rc" = 2 ] && grep -q "$want" "$T/bad.err" && ! [ -s "$T/bad.out" ] &&
	    ok "--protocol '$p': exit 2, \"$want\"" ||
	    notok "--protocol '$p': rc $rc" "$T/bad.err"
done
[ "$fail" = 0 ]
