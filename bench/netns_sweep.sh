#!/usr/bin/env bash
# bench/netns_sweep.sh: the fault-injection sweep (`mpiv sweep`) on a
# multi-host test bed: network namespaces made by deploy/netns-testbed.sh
# play the hosts, whole node agents are killed (--chaos-nodes).
#
#   bench/netns_sweep.sh [OUT]          (root only; OUT default netns-sweep)
#
# Layout: one server host (dispatcher --heartbeat-timeout 2, one CM, one
# CS with its store) and NS_NODES node hosts (default 3) behind firewalls
# that let nothing in; a node agent on each (NS_SLOTS slots, default 6,
# --no-listen: the job runs relay, nothing ever dials a node). A node
# agent killed by the chaos comes back NS_REBOOT s later (default 1), as
# a rebooted machine would: a loop per host starts it again, under the
# same name, as a fresh node.
#
# The sweep runs on the server host, against that dispatcher:
#   mpiv sweep $NS_SWEEP --chaos-nodes --out OUT -- --dispatcher D
#       -n 9 --protocol relay PROGRAM ARGS
# NS_SWEEP defaults to "--mtbf 0,4s,2s --ckpt-interval 0,2s --seeds 2
# --chaos-max 6 --timeout 3m" (6 cells x 2 seeds); PROGRAM ARGS to
# build/tests/fortran/f_adi 3000 (the 9-rank ADI solver, which checks its
# own answer; `make tests-build` builds it), NS_PROG overrides both.
# Everything is left in OUT: the sweep's tables and page, and logs/ (the
# daemons' logs). MPIV_BUILD: the build to use (default build; a copy
# keeps a long sweep safe from a rebuild: a sweep whose own binary was
# replaced cannot start its runs). Exit: the sweep's (0: every run gave the failure-free
# output); 77 when no test bed can be built here (not root, no netns,
# no bridge or firewall tool), with the reason.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
B=${MPIV_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
MPIV=$B/bin/mpiv
OUT=${1:-netns-sweep}
TB="bash $ROOT/deploy/netns-testbed.sh"
NODES=${NS_NODES:-3}
SLOTS=${NS_SLOTS:-6}
REBOOT=${NS_REBOOT:-1}
read -r -a SWEEP <<< "${NS_SWEEP:---mtbf 0,4s,2s --ckpt-interval 0,2s --seeds 2 --chaos-max 6 --timeout 3m}"
read -r -a PROG <<< "${NS_PROG:-$B/tests/fortran/f_adi 3000}"

[ "$(id -u)" -eq 0 ] || { echo "netns_sweep: skip: needs root (network namespaces)"; exit 77; }
[ -x "$MPIV" ] || { echo "netns_sweep: no $MPIV (make)"; exit 2; }
[ -x "${PROG[0]}" ] || { echo "netns_sweep: no ${PROG[0]} (make tests-build)"; exit 2; }
export MPIVTB_PREFIX=mpivsw$$
export MPIVTB_SUBNET=10.78.0
if ! chk=$($TB check 2>&1); then
	echo "netns_sweep: skip: no test bed here: $(printf '%s\n' "$chk" | tail -n 1)"
	exit 77
fi
mkdir -p "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
L=$OUT/logs
SRV=$MPIVTB_PREFIX-srv
SRVA=$MPIVTB_SUBNET.1
DISP=$SRVA:7000
LOOPS=()
DAEMONS=()

cleanup() {
	trap - EXIT
	: > "$L/stop"
	for p in "${LOOPS[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${DAEMONS[@]}"; do kill -TERM "$p" 2> /dev/null; done
	sleep 1
	$TB down > /dev/null 2>&1	# SIGKILLs what is left in the namespaces
	for p in "${LOOPS[@]}" "${DAEMONS[@]}"; do wait "$p" 2> /dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_log SECS FILE ERE
wait_log() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		grep -qE -- "$3" "$2" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

rm -f "$L"/*.log "$L/stop"
$TB up "$NODES" > "$L/testbed.log" 2>&1 || { cat "$L/testbed.log"; exit 1; }
# a fresh store: job ids start over with the dispatcher, and images an
# earlier deployment left under the same ids would be taken for theirs
# ("stale checkpoint", every checkpoint of the job refused)
rm -rf "$L/store"
mkdir -p "$L/store"
ip netns exec "$SRV" "$MPIV" dispatcher --listen "$DISP" --heartbeat-timeout 2 \
    < /dev/null > "$L/dispatcher.log" 2>&1 &
DAEMONS+=($!)
wait_log 15 "$L/dispatcher.log" listening || { echo "netns_sweep: no dispatcher"; exit 1; }
ip netns exec "$SRV" "$MPIV" cm --listen "$SRVA:7100" --dispatcher "$DISP" \
    < /dev/null > "$L/cm.log" 2>&1 &
DAEMONS+=($!)
ip netns exec "$SRV" "$MPIV" cs --listen "$SRVA:7200" --store "$L/store" --dispatcher "$DISP" \
    < /dev/null > "$L/cs.log" 2>&1 &
DAEMONS+=($!)
wait_log 15 "$L/dispatcher.log" 'cm registered' && wait_log 15 "$L/dispatcher.log" 'cs registered' ||
	{ echo "netns_sweep: CM or CS did not register"; exit 1; }
# the agents run their ranks as nobody, who cannot read this build's
# libmpi.so in a checkout under root's 0700 home: there they keep root
NODE_USER=()
if sh "$ROOT/tests/tools/nobody-cannot-read.sh" "$B/lib/libmpi.so"; then
	NODE_USER=(--user root)
fi
for ((i = 1; i <= NODES; i++)); do
	h=n$i
	# the host's machine: its agent again after each death
	(
		while [ ! -e "$L/stop" ]; do
			ip netns exec "$MPIVTB_PREFIX-$h" "$MPIV" node --dispatcher "$DISP" \
			    --slots "$SLOTS" --no-listen --name "$h" --cache-dir "$L/cache-$h" "${NODE_USER[@]}" \
			    < /dev/null >> "$L/node-$h.log" 2>&1
			echo "netns_sweep: agent on $h ended ($?) at $(date +%T.%N)" >> "$L/node-$h.log"
			sleep "$REBOOT"
		done
	) 2>> "$L/node-$h.log" &
	LOOPS+=($!)
done
n=0
for ((i = 0; i < 150 && n < NODES; i++)); do
	sleep 0.1
	n=$(grep -c 'node registered' "$L/dispatcher.log")
done
[ "$n" -ge "$NODES" ] || { echo "netns_sweep: $n of $NODES node agents registered"; exit 1; }
echo "netns_sweep: test bed $MPIVTB_PREFIX: server $SRVA, $NODES node hosts x $SLOTS slots behind firewalls; agents come back ${REBOOT}s after a kill"
echo "netns_sweep: mpiv sweep ${SWEEP[*]} --chaos-nodes --out $OUT -- --dispatcher $DISP -n 9 --protocol relay ${PROG[*]}"
ip netns exec "$SRV" "$MPIV" sweep "${SWEEP[@]}" --chaos-nodes --out "$OUT" -- \
    --dispatcher "$DISP" -n 9 --protocol relay "${PROG[@]}"
rc=$?
echo "netns_sweep: node agents started: $(grep -c 'node registered' "$L/dispatcher.log"), killed by the chaos: $(grep -c 'ended' "$L"/node-*.log | awk -F: '{ s += $2 } END { print s + 0 }')"
exit "$rc"
