#!/usr/bin/env bash
# tests/integration/test_privsep.sh: the node agent's privilege separation
# (docs/ARCHITECTURE.md). Two node agents started as root with the default
# --user: the helper stays root, the agent and the ranks run as nobody,
# the agent cannot gain privileges back. A job with checkpoints then runs
# under rank kills (chaos), and its output must equal the failure-free
# run, with restores from checkpoints done by the helper for nobody's
# ranks. Then one node's agent is SIGKILLed alone: its helper ends the
# same way and takes its ranks along; the other node's helper is
# SIGKILLed alone: its agent and ranks die with it; a job still finishes
# on what is left, output identical.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init privsep
need_criu
[ "$(id -u)" = 0 ] || { echo "needs root (the account switch)"; exit 77; }
NOBODY=$(id -u nobody 2> /dev/null) || { echo "no user nobody"; exit 77; }

S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || exit 1
"$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null || exit 1
"$B/bin/mpivcc" -O2 -o "$T/prog" tests/fault/progs/flt_ckpt.c || exit 1
cat > "$T/ids.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int r;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	printf("rank %d uid %d euid %d\n", r, (int)getuid(), (int)geteuid());
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -O2 -o "$T/ids" "$T/ids.c" || exit 1
ARGS=(60000 2 100)	# steps, MiB of ballast per rank, work
timeout 120 "$MPIV" run -n 3 "$T/prog" "${ARGS[@]}" > "$T/ref.out" 2> "$T/ref.err" ||
    { notok "failure-free run" "$T/ref.err"; exit 1; }
ARGS6=(30000 1 100)	# six ranks: both nodes full
timeout 120 "$MPIV" run -n 6 "$T/prog" "${ARGS6[@]}" > "$T/ref6.out" 2> "$T/ref6.err" ||
    { notok "failure-free run, 6 ranks" "$T/ref6.err"; exit 1; }

"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 --heartbeat-timeout 3 \
    --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --log-level info \
    > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --store "$T/store" --dispatcher "$DA" \
    --log-level info > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
listening cs > /dev/null || { notok "cs start" "$T/cs.err"; exit 1; }
declare -A NP
for n in n1 n2; do
	"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 3 \
	    --name "$n" --cache-dir "$T/cache-$n" --log-level info 2> "$T/$n.err" &
	NP[$n]=$!
	PIDS+=($!)
done
for n in n1 n2; do
	wait_for 15 grep -q "dispatcher node registered .*name=$n " "$T/d.err" ||
	    { notok "node $n did not register" "$T/d.err" "$T/$n.err"; exit 1; }
done

# ---- bad --user: one line, exit 2, before anything starts
"$MPIV" node --dispatcher "$DA" --user no-such-user-here 2> "$T/bad1.err"
rc=$?
[ "$rc" = 2 ] && grep -q 'unknown user "no-such-user-here" (--user)' "$T/bad1.err" &&
    ok "--user of an unknown account: exit 2, one clear line" ||
    notok "--user unknown: rc $rc" "$T/bad1.err"
setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
    "$MPIV" node --dispatcher "$DA" --user root --cache-dir "$T/c-bad" 2> "$T/bad2.err"
rc=$?
[ "$rc" = 2 ] && grep -q -- '--user root needs root' "$T/bad2.err" &&
    ok "--user of another account without root: exit 2, one clear line" ||
    notok "--user without root: rc $rc" "$T/bad2.err"

# ---- who runs as whom
uid_of() { awk '/^Uid:/ { print $2 " " $3 " " $4 " " $5 }' "/proc/$1/status"; }
agent_of() { pgrep -x -P "$1" mpiv; }
# ranks_under PID: the processes of the program below PID (ranks sit
# under their PID namespace's handle and init).
ranks_under() {
	local p q
	for p in $(pgrep -x prog); do
		q=$p
		while [ "$q" -gt 1 ] && [ "$q" != "$1" ]; do
			q=$(awk '/^PPid:/ { print $2 }' "/proc/$q/status" 2> /dev/null || echo 1)
			[ -n "$q" ] || q=1
		done
		[ "$q" = "$1" ] && echo "$p"
	done | tr '\n' ' '
}
H=${NP[n1]}
A=$(agent_of "$H")
if [ "$(uid_of "$H")" = "0 0 0 0" ] && [ -n "$A" ] &&
    [ "$(uid_of "$A")" = "$NOBODY $NOBODY $NOBODY $NOBODY" ]; then
	ok "the helper runs as root, the agent ($A) as nobody"
else
	notok "helper $(uid_of "$H"), agent '$A' $( [ -n "$A" ] && uid_of "$A")" "$T/n1.err"
fi
if [ -n "$A" ] && grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$A/status" &&
    grep -q '^CapEff:[[:space:]]*0*$' "/proc/$A/status"; then
	ok "the agent has no capabilities and cannot gain any (no_new_privs)"
else
	notok "the agent's privileges: $(grep -E '^(CapEff|NoNewPrivs)' "/proc/$A/status" 2>&1 | tr '\n' ' ')"
fi
timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 4 "$T/ids" > "$T/ids.out" 2> "$T/ids.err"
if [ "$(grep -c "uid $NOBODY euid $NOBODY\$" "$T/ids.out")" = 4 ]; then
	ok "all 4 ranks run as nobody"
else
	notok "ranks' ids: $(tr '\n' ';' < "$T/ids.out")" "$T/ids.err"
fi

# ---- rank kills with checkpoints: restores for nobody's ranks
timeout 240 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 3 --ckpt-interval 0.5 \
    --chaos 1500ms --chaos-seed 7 --chaos-max 6 --report "$T/r.json" \
    "$T/prog" "${ARGS[@]}" > "$T/chaos.out" 2> "$T/chaos.err"
rc=$?
if [ "$rc" = 0 ] && cmp -s "$T/chaos.out" "$T/ref.out"; then
	ok "6 rank kills with checkpoints: output identical, exit 0"
else
	notok "chaos job: rc $rc, output $(cmp -s "$T/chaos.out" "$T/ref.out" && echo same || echo different)" "$T/chaos.err"
fi
restores=$(cat "$T"/n?.err | grep -c 'node restored job=')
refused=$(cat "$T"/n?.err | grep -c 'is not nobody.s')
if [ "$restores" -gt 0 ] && [ "$refused" = 0 ]; then
	ok "$restores restores from a checkpoint, all passed the helper's id check"
else
	notok "restores $restores, refused by the id check $refused" "$T/n1.err" "$T/n2.err"
fi

# ---- the agent killed alone: its helper and ranks end with it
timeout 240 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 6 "$T/prog" "${ARGS6[@]}" \
    > "$T/k.out" 2> "$T/k.err" &
RUN=$!
for ((i = 0; i < 200; i++)); do
	ranks1=$(ranks_under "${NP[n1]}")
	[ "$(wc -w <<< "$ranks1")" = 3 ] && break
	sleep 0.1
done
A=$(agent_of "${NP[n1]}")
kill -KILL "$A"
if wait_for 10 sh -c "! kill -0 ${NP[n1]} 2> /dev/null"; then
	wait "${NP[n1]}" 2> /dev/null
	st=$?
	[ "$st" = 137 ] && ok "agent SIGKILLed: its helper ended as it did (status $st)" ||
	    notok "agent SIGKILLed: helper status $st (want 137)" "$T/n1.err"
else
	notok "agent SIGKILLed: its helper lives on" "$T/n1.err"
fi
# (their deaths follow the helper's exit by a moment, as below)
left=""
for p in $ranks1; do wait_for 5 sh -c "! kill -0 $p 2> /dev/null" || left="$left $p"; done
[ -n "$ranks1" ] && [ -z "$left" ] && ok "agent SIGKILLed: its ranks ($ranks1) died with it" ||
    notok "agent SIGKILLed: ranks before '$ranks1', left:$left"
# n1 comes back, then n2's helper is SIGKILLed alone
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 3 \
    --name n1 --cache-dir "$T/cache-n1" --log-level info 2>> "$T/n1.err" &
NP[n1]=$!
PIDS+=($!)
for ((i = 0; i < 200; i++)); do
	ranks2=$(ranks_under "${NP[n2]}")
	[ "$(wc -w <<< "$ranks2")" = 3 ] && break
	sleep 0.1
done
A2=$(agent_of "${NP[n2]}")
kill -KILL "${NP[n2]}"
if [ -n "$A2" ] && wait_for 10 sh -c "! kill -0 $A2 2> /dev/null"; then
	ok "helper SIGKILLed: its agent died with it"
else
	notok "helper SIGKILLed: agent '$A2' lives on" "$T/n2.err"
fi
left=""
for p in $ranks2; do wait_for 5 sh -c "! kill -0 $p 2> /dev/null" || left="$left $p"; done
[ -n "$ranks2" ] && [ -z "$left" ] && ok "helper SIGKILLed: its ranks ($ranks2) died with it" ||
    notok "helper SIGKILLed: ranks before '$ranks2', left:$left"
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 3 \
    --name n2 --cache-dir "$T/cache-n2" --log-level info 2>> "$T/n2.err" &
PIDS+=($!)
wait "$RUN"
rc=$?
if [ "$rc" = 0 ] && cmp -s "$T/k.out" "$T/ref6.out"; then
	ok "job across both node deaths: output identical, exit 0"
else
	notok "job across the node deaths: rc $rc, output $(cmp -s "$T/k.out" "$T/ref6.out" && echo same || echo different)" "$T/k.err" "$T/d.err"
fi
[ "$fail" = 0 ]
