#!/usr/bin/env bash
# tests/integration/test_run_env.sh: -x and --env of `mpiv run`, as Open
# MPI users write them (docs/ENVIRONMENT.md, "Environment"); the program
# is tests/integration/env_show.c, which prints every rank's values.
#
#   forward    a deployment started by hand without FOO (dispatcher, CM,
#              node agent): `FOO=hello mpiv run --dispatcher -x FOO` gives
#              the ranks FOO=hello; without -x they do not have it
#   set        -x BAR=1, --env "BAZ=a b=c", -x Q=1 -x Q=2 (the last wins),
#              over a variable the node agent has (embedded)
#   unset      -x NOPE with NOPE not set: one line says it is not
#              forwarded, the job runs, the ranks lack it
#   usage/*    --env NOEQ, -x 1BAD, -x MPIV_PROTOCOL=direct: exit 2, one
#              clear line
#   kill/*     relay and direct, --chaos kills: every relaunched rank has
#              the same values (output equal to the failure-free run's)
#   ckpt       --ckpt-interval, restores on another node: the same (CRIU
#              needed, else skipped)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init run-env
"$B/bin/mpivcc" -O2 -o "$T/es" tests/integration/env_show.c || exit 1
cd "$T" || exit 2
RUN=(timeout -k 5 120 "$MPIV" run --timeout 100)
exec < /dev/null

# --- forward: a deployment that does not have FOO
env -u FOO "$MPIV" dispatcher --listen 127.0.0.1:0 > d.out 2> d.err &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" d.err; exit 1; }
env -u FOO "$MPIV" cm --listen 127.0.0.1:0 --dispatcher "$DA" > cm.out 2> cm.err &
PIDS+=($!)
env -u FOO "$MPIV" node --dispatcher "$DA" --slots 2 --name n0 --user root \
    --cache-dir "$T/cache" 2> n0.err &
PIDS+=($!)
# A dead embedded run's record that names the same address (its port was
# given out again): the live dispatcher, ours and without a secret, wins.
stale="${TMPDIR:-/tmp}/mpiv-run.stale$$"
(umask 077 && mkdir -p "$stale" && printf '%s' "$DA" > "$stale/dispatcher.addr" &&
    "$MPIV" secret new "$stale/secret" > /dev/null) ||
	{ notok "a stale run record"; exit 1; }
trap 'rm -rf "$stale"; common_cleanup' EXIT
FOO=hello "${RUN[@]}" --dispatcher "$DA" -n 2 -x FOO ./es 0 0 FOO > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "rank 0: FOO=hello
rank 1: FOO=hello" ]; then
	ok "forward: -x FOO gives the ranks mpiv run's FOO"
else
	notok "forward: exit $rc" out err
fi
FOO=hello "${RUN[@]}" --dispatcher "$DA" -n 2 ./es 0 0 FOO > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(grep -c 'FOO=(unset)' out)" = 2 ]; then
	ok "forward: without -x the ranks do not have it"
else
	notok "forward: without -x: exit $rc" out err
fi

# --- set, and the last of a name wins, over the node's own value
want="rank 0: BAR=1 BAZ=a b=c Q=2 KEEP=node
rank 1: BAR=1 BAZ=a b=c Q=2 KEEP=node"
BAR=node KEEP=node "${RUN[@]}" -n 2 -x BAR=1 --env 'BAZ=a b=c' -x Q=1 -x Q=2 \
    ./es 0 0 BAR BAZ Q KEEP > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat out)" = "$want" ] && [ ! -s err ]; then
	ok "set: -x NAME=VALUE, --env, the last -x of a name wins"
else
	notok "set: exit $rc" out err
fi

# --- unset: not forwarded, one line
env -u NOPE "${RUN[@]}" -n 2 -x NOPE ./es 0 0 NOPE > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(grep -c 'NOPE=(unset)' out)" = 2 ] &&
    [ "$(cat err)" = "mpiv: -x NOPE: NOPE is not set here, not forwarded" ]; then
	ok "unset: -x of an unset variable: one line, not forwarded, the job runs"
else
	notok "unset: exit $rc" out err
fi

# --- usage errors
usage() {	# usage NAME LINE ARGS...
	local name=$1 line=$2
	shift 2
	"${RUN[@]}" -n 1 "$@" ./es 0 0 X > out 2> err
	local rc=$?
	if [ $rc = 2 ] && [ "$(head -n 1 err)" = "$line" ] && [ ! -s out ]; then
		ok "usage/$name: exit 2, \"$line\""
	else
		notok "usage/$name: exit $rc" err
	fi
}
usage noeq 'mpiv run: bad --env "NOEQ" (want NAME=VALUE; -x NAME forwards NAME'"'"'s value)' --env NOEQ
usage name 'mpiv run: bad -x "1BAD" (want NAME or NAME=VALUE, NAME of letters, digits and _)' -x 1BAD
usage protocol 'mpiv run: -x MPIV_PROTOCOL: the protocol is chosen with --protocol' -x MPIV_PROTOCOL=direct

# --- kills: relaunched ranks get the same environment
ARGS=(-x A=alpha --env "B=beta gamma" ./es 400 5000 A B)
"${RUN[@]}" -n 3 "${ARGS[@]}" > ref 2> err || notok "kill: failure-free run" ref err
for proto in relay direct; do
	"${RUN[@]}" -n 3 --protocol "$proto" --chaos 400ms --chaos-max 4 --chaos-seed 3 \
	    --report r.json "${ARGS[@]}" > out 2> err
	rc=$?
	kills=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kills"])' r.json 2> /dev/null)
	if [ $rc = 0 ] && cmp -s out ref && [ "${kills:-0}" -gt 0 ]; then
		ok "kill/$proto: $kills kills, every incarnation had A and B"
	else
		notok "kill/$proto: exit $rc, kills ${kills:-?}" out err
	fi
done

# --- restores on another node
if ! timeout 60 "${MPIV_CRIU:-/opt/mpiv/criu/criu}" check > /dev/null 2>&1; then
	echo "# ckpt skipped: CRIU does not work here"
else
	MPIV_RELAUNCH_ELSEWHERE=1 "${RUN[@]}" -n 3 --nodes 4 --ckpt-interval 0.2 \
	    --chaos 600ms --chaos-max 3 --chaos-seed 2 --log-level info "${ARGS[@]}" > out 2> err
	rc=$?
	n=$(grep -cE 'node restored job=' err)
	if [ $rc = 0 ] && cmp -s out ref && [ "$n" -gt 0 ]; then
		ok "ckpt: $n restore(s), same environment"
	else
		notok "ckpt: exit $rc, $n restore(s)" out
	fi
fi
[ "$fail" = 0 ]
