#!/bin/sh
# make demo: build the heat demo, run it failure-free on the embedded
# deployment, then (when this mpiv has fault injection) run it again while
# killing ranks at random, and show both outputs are identical.
set -eu
# mpiv run gives its stdin to rank 0 and waits for its end: heat reads
# none, and a pipe left open by whoever runs us must not hold the demo
exec < /dev/null
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

# chaos_run NAME OPTIONS...: the long job under fault injection, into
# $out/NAME.txt and $out/NAME.json. A demo of kills must show kills: the
# schedule is random, so a run in which none landed before the job ended
# (a fast machine) is said and run again, up to 3 times.
STEPS=${DEMO_STEPS:-40000}
chaos_run() {
	name=$1
	shift
	for try in 1 2 3; do
		"$B/bin/mpiv" run -n "$N" --cms 2 --timeout 300 "$@" \
			--report "$out/$name.json" "$out/heat" "$STEPS" > "$out/$name.txt"
		kills=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kills"])' "$out/$name.json")
		[ "$kills" -gt 0 ] && return 0
		echo "(no kill landed before the job ended, try $try of 3: running it again)"
	done
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
	"$B/bin/mpiv" run -n "$N" --cms 2 --timeout 300 "$out/heat" "$STEPS" > "$out/ref2.txt"
	echo
	echo "== the same job ($STEPS steps) while ranks are killed at random (SIGKILL, mean every 500 ms)${ckpt:+, with CRIU checkpoints every second}"
	# shellcheck disable=SC2086
	chaos_run chaos --chaos 500ms $ckpt
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("kills: %d  restarts: %d (%d from a checkpoint)  checkpoints: %d  exit code: %d" % (r["kills"], r["restarts"], sum(1 for x in r.get("restart_log", []) if x.get("from_ckpt")), r.get("checkpoints", 0), r["exit_code"]))' "$out/chaos.json"
	same_as_ref chaos
	echo
	echo "== again, now losing whole machines: node agents killed with their ranks (mean every second, 3 node agents)"
	chaos_run nodes --nodes 3 --chaos 1s --chaos-nodes
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("node agents killed: %d  rank restarts: %d  exit code: %d" % (r["kills"], r["restarts"], r["exit_code"]))' "$out/nodes.json"
	same_as_ref nodes
else
	echo
	echo "(this build has no fault injection yet: --chaos arrives with message logging and replay)"
fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("job %s: %d ranks, exit code %d, %.2f s" % (r["job"], r["ranks"], r["exit_code"], r["wall_s"]))' "$out/ref.json"
