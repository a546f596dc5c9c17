#!/bin/sh
# make demo: build the heat demo, run it failure-free on the embedded
# deployment, then (when this mpiv has fault injection) run it again while
# killing ranks at random, and show both outputs are identical.
set -eu
B=${MPIV_BUILD:-build}
N=${DEMO_RANKS:-4}
out=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-demo.XXXXXX")
trap 'rm -rf "$out"' EXIT

# same_as_ref NAME: $out/NAME.txt equals the failure-free $out/ref2.txt,
# said either way; exits 1 (with the diff) when it does not.
same_as_ref() {
	if cmp -s "$out/$1.txt" "$out/ref2.txt"; then
		echo "output identical to the failure-free run: OK"
	else
		echo "output DIFFERS from the failure-free run:"
		diff "$out/ref2.txt" "$out/$1.txt" || true
		exit 1
	fi
}

"$B/bin/mpivcc" -O2 -o "$out/heat" tests/demo/heat.c
echo "== failure-free run: mpiv run -n $N --cms 2 heat"
"$B/bin/mpiv" run -n "$N" --cms 2 --timeout 120 --report "$out/ref.json" \
	"$out/heat" > "$out/ref.txt"
cat "$out/ref.txt"

if "$B/bin/mpiv" run --help 2>&1 | grep -q -- '--chaos'; then
	ckpt=""
	if /opt/mpiv/criu/criu check >/dev/null 2>&1; then
		ckpt="--ckpt-interval 1"
	fi
	echo
	echo "== the same job while ranks are killed at random (SIGKILL, mean every second)${ckpt:+, with CRIU checkpoints every second}"
	# shellcheck disable=SC2086
	"$B/bin/mpiv" run -n "$N" --cms 2 --timeout 300 --chaos 1s $ckpt \
		--report "$out/chaos.json" "$out/heat" 20000 > "$out/chaos.txt"
	"$B/bin/mpiv" run -n "$N" --cms 2 --timeout 300 "$out/heat" 20000 > "$out/ref2.txt"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("kills: %d  restarts: %d (%d from a checkpoint)  checkpoints: %d  exit code: %d" % (r["kills"], r["restarts"], sum(1 for x in r.get("restart_log", []) if x.get("from_ckpt")), r.get("checkpoints", 0), r["exit_code"]))' "$out/chaos.json"
	same_as_ref chaos
	echo
	echo "== again, now losing whole machines: node agents killed with their ranks (mean every 1.5 s, 3 node agents)"
	"$B/bin/mpiv" run -n "$N" --cms 2 --nodes 3 --timeout 300 --chaos 1500ms --chaos-nodes \
		--report "$out/nodes.json" "$out/heat" 20000 > "$out/nodes.txt"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("node agents killed: %d  rank restarts: %d  exit code: %d" % (r["kills"], r["restarts"], r["exit_code"]))' "$out/nodes.json"
	same_as_ref nodes
else
	echo
	echo "(this build has no fault injection yet: --chaos arrives with message logging and replay)"
fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("job %s: %d ranks, exit code %d, %.2f s" % (r["job"], r["ranks"], r["exit_code"], r["wall_s"]))' "$out/ref.json"
