#!/usr/bin/env bash
# tests/fault/test_netns.sh: jobs across several "hosts" (network
# namespaces made by deploy/netns-testbed.sh) whose node hosts are behind a
# firewall that drops every inbound connection, with whole nodes lost
# mid-job. The output (--tag-output, sorted stably by rank) and exit code
# of every job must equal a failure-free embedded run's.
#
# Deployment: the dispatcher (--heartbeat-timeout 2), one CM and one CS run
# on the server host; node agents (2 slots each) on node hosts n1..n4. Jobs
# run with the default protocol, auto, and each report must say which it
# picked, in one of two set-ups (FLT_PROTOCOL, as tests/run.sh's passes):
#   relay   every node host lets nothing in, its agent says --no-listen:
#           auto runs relay, and nothing ever dials a node
#   direct  (default) the node hosts are one cluster network: their
#           firewalls let in the other node hosts (netns-testbed.sh
#           open), still not the server host; agents listen: auto runs
#           direct, ranks dial each other across hosts
# Cases, one job each:
#   fw        fw-check on a node host: nothing can connect in, it can
#             connect out (and, after all jobs, no inbound connection was
#             ever attempted to any node: mpiv only dials out)
#   kill      a node agent holding ranks is SIGKILLed mid-job: its ranks
#             die with it (PDEATHSIG) and are relaunched on other nodes
#   partition a node holding ranks loses its link for longer than the
#             heartbeat timeout, then is healed: it is declared dead, its
#             ranks run elsewhere, the old ones are gone (killed by the
#             agent, fenced by the CMs) and print nothing, and the agent
#             rejoins as a fresh node
#   two       two nodes holding ranks are SIGKILLed at the same moment
#   freeze    a node agent is SIGSTOPped while its ranks run on: declared
#             dead, ranks relaunched, the CM fences the old incarnations,
#             the agent wakes up, is told it was declared dead, rejoins
#   join      exactly enough slots (2 nodes x 2), one node SIGKILLed: the
#             lost ranks wait until a fresh node agent starts on another
#             host, and are relaunched there
#
#   FLT_KEEP=1 bash tests/fault/test_netns.sh      (keeps logs, prints where)
#
# Skips (77) when not root or when network namespaces, veths, a bridge or
# nftables/iptables are not available (deploy/install-deps.sh installs
# iproute2 and nftables).
. "$(dirname "$0")/common.bash"

flt_need_mpiv
[ "$(id -u)" -eq 0 ] || flt_skip "needs root: network namespaces, veths and firewall rules"
TB=$FLT_ROOT/deploy/netns-testbed.sh
[ -x "$TB" ] || TB="bash $TB"
# short and unique: namespaces of concurrent runs never clash
export MPIVTB_PREFIX=mpivnt$$
export MPIVTB_SUBNET=10.77.0
if ! chk=$($TB check 2>&1); then
	flt_skip "no network namespace test bed here: $(printf '%s\n' "$chk" | tail -n 1)"
fi

# Test beds left by runs of this script that were SIGKILLed go away.
for stale in $(ip netns list 2>/dev/null | sed -n 's/^mpivnt\([0-9][0-9]*\)-net\( .*\)\{0,1\}$/\1/p'); do
	kill -0 "$stale" 2>/dev/null || MPIVTB_PREFIX=mpivnt$stale $TB down > /dev/null 2>&1
done

start=$(date +%s)
HBT=2			# dispatcher --heartbeat-timeout
PORT=7000
SRV=$MPIVTB_PREFIX-srv
SRVA=$MPIVTB_SUBNET.1
DISP=$SRVA:$PORT
JOB_TIMEOUT=60		# mpiv run --timeout of each job
PROG_ARGS=(30000 10000)	# flt_stencil STEPS CELLS: ~5 s failure-free here
# in the relay protocol every message crosses the CM on the server host:
# half the steps there (the whole run took 12.7 s beside another script)
[ "${FLT_PROTOCOL:-direct}" = relay ] && PROG_ARGS=(15000 10000)
NRANKS=4
L=$FLT_TMP		# logs

declare -A PID=()	# daemon name -> pid (ip netns exec execs: the daemon's own pid)

# ---- optional features ---------------------------------------------------

help_of() { timeout 20 "$MPIV" "$1" -h 2>&1; }
has_opt() { help_of "$1" | grep -q -- "$2"; }

HB_OPT=()
has_opt node --heartbeat-interval && HB_OPT=(--heartbeat-interval 0.5)
HAVE_STATUS=0
help_of status | grep -q '^usage: mpiv status' && HAVE_STATUS=1
# A shared secret only when every piece takes one (else clients would be
# locked out of an authenticating dispatcher).
SEC=()
sec_ok=1
for c in dispatcher cm cs node run; do
	has_opt "$c" --secret-file || sec_ok=0
done
[ "$HAVE_STATUS" = 1 ] && ! has_opt status --secret-file && sec_ok=0
if [ "$sec_ok" = 1 ] && timeout 20 "$MPIV" secret new "$L/secret" > /dev/null 2>&1; then
	SEC=(--secret-file "$L/secret")
fi

# ---- teardown ------------------------------------------------------------

stop_pid() {	# stop_pid PID: TERM, then KILL after 5 s
	local p=$1 i
	kill -TERM "$p" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.1
	done
	kill9 "$p"
}

nt_cleanup() {
	local n
	trap - EXIT
	for n in "${!PID[@]}"; do
		[[ $n == node-* ]] && kill -TERM "${PID[$n]}" 2>/dev/null
	done
	for n in "${!PID[@]}"; do
		stop_pid "${PID[$n]}"
	done
	$TB down > /dev/null 2>&1 || $TB down
	if [ "${FLT_KEEP:-0}" = 1 ]; then
		echo "# logs in $L"
	fi
	flt_cleanup
}
trap nt_cleanup EXIT

# ---- helpers -------------------------------------------------------------

# in_ns HOST CMD...: runs CMD inside the host's namespace.
in_ns() {
	local h=$1
	shift
	ip netns exec "$MPIVTB_PREFIX-$h" "$@"
}

# daemon NAME HOST CMD...: starts CMD in HOST's namespace in the
# background, output in $L/NAME.log.
daemon() {
	local name=$1 h=$2
	shift 2
	# a simple command (not a function) in the background: $! is the
	# daemon itself (ip netns exec execs it)
	ip netns exec "$MPIVTB_PREFIX-$h" "$@" < /dev/null > "$L/$name.log" 2>&1 &
	PID[$name]=$!
}

# wait_log SECS FILE ERE: true once FILE has a line matching ERE.
wait_log() {
	flt_wait_for "$1" grep -qE -- "$3" "$2"
}

# Dispatcher log lines after line $1 (what a case added).
dlog_since() {
	tail -n +"$(( $1 + 1 ))" "$L/dispatcher.log"
}
dlog_lines() { wc -l < "$L/dispatcher.log"; }

# start_node HOST [SLOTS]: a node agent named after its host; waits until
# the dispatcher has registered it.
start_node() {
	local h=$1 slots=${2:-2} before
	before=$(dlog_lines)
	NODE_RUN[$h]=$(( ${NODE_RUN[$h]:-0} + 1 ))
	daemon "node-$h" "$h" "$MPIV" node --dispatcher "$DISP" --slots "$slots" \
		"${FLT_NODE_USER[@]}" "${LISTEN_OPT[@]}" --name "$h" --cache-dir "$L/cache-$h" "${HB_OPT[@]}" "${SEC[@]}"
	if ! flt_wait_for 15 sh -c "tail -n +$((before + 1)) '$L/dispatcher.log' | grep -qE 'node registered node=[^ ]* name=$h '"; then
		flt_notok "node agent on $h did not register within 15 s" "$L/node-$h.log"
		return 1
	fi
}
declare -A NODE_RUN=()

# stop_nodes: every node agent stops (their ranks with them), links healed.
stop_nodes() {
	local n h
	for n in "${!PID[@]}"; do
		[[ $n == node-* ]] || continue
		stop_pid "${PID[$n]}"
		wait "${PID[$n]}" 2>/dev/null
		h=${n#node-}
		# keep this run's log under its run number
		[ -f "$L/$n.log" ] && mv -f "$L/$n.log" "$L/$n.${NODE_RUN[$h]}.log"
		unset "PID[$n]"
	done
	for h in n1 n2 n3 n4; do
		$TB heal "$h" > /dev/null 2>&1
	done
	# the dispatcher saw them go (their connections closed)
	sleep 0.3
}

# kill9 PID...: SIGKILLs and reaps (no "Killed" job report on stderr).
kill9() {
	local p
	kill -KILL "$@" 2>/dev/null
	for p in "$@"; do
		wait "$p" 2>/dev/null
	done
	return 0
}

# The id (NAME#N) the dispatcher gave the node on host $1 when it last
# declared it dead since dispatcher log line $2.
dead_id() {
	dlog_since "$2" | sed -n "s/.*node declared dead node=\($1#[0-9]*\) .*/\1/p" | tail -n 1
}

# rank_pids JOB HOST: pids of the ranks the node on HOST launched for JOB.
rank_pids() {
	sed -n "s/.*node launched job=$1 rank=[0-9]* incarnation=[0-9]* pid=\([0-9]*\).*/\1/p" "$L/node-$2.log" 2>/dev/null
}

# live PID...: those of the processes that still run (zombies are dead).
live() {
	local p st
	for p in "$@"; do
		st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
		[ -n "$st" ] && [ "$st" != Z ] && printf '%s ' "$p"
	done
	return 0
}

# The CM's count of duplicate sends it dropped for job $1 ("?" if unknown).
cm_dups() {
	local n
	n=$(sed -n "s/.*cm job end job=$1 .*duplicates=\([0-9]*\).*/\1/p" "$L/cm.log" | tail -n 1)
	echo "${n:-?}"
}

# Processes left in a host's namespace (pids, space separated).
ns_pids() { ip netns pids "$MPIVTB_PREFIX-$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'; }

# Ranks of job $1 the node on host $2 launched (its log), one per line.
ranks_on() {
	sed -n "s/.*node launched job=$1 rank=\([0-9]*\) .*/\1/p" "$L/node-$2.log" 2>/dev/null | sort -un
}

# The host (node name) a rank of job J was last launched or relaunched on.
# Initial placement comes from the node logs, relaunches from the
# dispatcher's "relaunching" lines.
hosts_with_ranks() {	# hosts_with_ranks JOB: "HOST NRANKS" lines, most first
	local h
	for h in n1 n2 n3 n4; do
		[ -f "$L/node-$h.log" ] || continue
		printf '%s %s\n' "$h" "$(ranks_on "$1" "$h" | wc -l)"
	done | awk '$2 > 0' | sort -k2,2nr -k1,1
}

# start_job NAME: mpiv run on the server host in the background.
start_job() {
	local out=$L/$1
	rm -f "$out".*
	timeout -k 5 $((JOB_TIMEOUT + 30)) ip netns exec "$SRV" "$MPIV" run \
		--dispatcher "$DISP" "${SEC[@]}" -v --tag-output --report "$out.json" \
		--timeout "$JOB_TIMEOUT" -n "$NRANKS" "$PROG" "${PROG_ARGS[@]}" \
		< /dev/null > "$out.out" 2> "$out.err" &
	JOB_PID=$!
	FLT_BG_PIDS=("$JOB_PID")
	JOB=
	if wait_log 20 "$out.err" 'job [^ ]+$'; then
		JOB=$(sed -n 's/^mpiv: dispatcher .* job \([^ ]*\)$/\1/p' "$out.err" | head -n 1)
	fi
}

# wait_job NAME: waits for the background job, sets JOB_RC.
wait_job() {
	wait "$JOB_PID"
	JOB_RC=$?
	FLT_BG_PIDS=()
	echo "$JOB_RC" > "$L/$1.rc"
}

# mid_job NAME: true once the job runs all its ranks and printed a line.
mid_job() {
	local out=$L/$1
	[ -n "$JOB" ] || return 1
	flt_wait_for 30 sh -c "[ \$(cat $L/node-*.log 2>/dev/null | grep -c 'node launched job=$JOB ') -ge $NRANKS ]" &&
		wait_log 30 "$out.out" '^\[[^]]*\]<stdout>:'
}

# check_job NAME WHAT: exit code, FLT-FAIL, output against the reference.
# Prints nothing on success; returns 1 (after flt_notok) on a failure.
check_job() {
	local out=$L/$1 what=$2
	if [ "$JOB_RC" != "$REF_RC" ]; then
		flt_notok "$what: mpiv run exit $JOB_RC, failure-free $REF_RC" "$out.err" "$out.out"
		return 1
	fi
	if grep -q FLT-FAIL "$out.out" "$out.err"; then
		flt_notok "$what: a program check failed" "$out.err"
		return 1
	fi
	if [ "$(flt_report "$out.json" protocol)" != "$NET_PROTO" ]; then
		flt_notok "$what: auto ran '$(flt_report "$out.json" protocol)', want $NET_PROTO (node agents: ${LISTEN_OPT[*]:-listening})" "$out.json"
		return 1
	fi
	flt_norm "$out.out" "$out.err" > "$out.cmp"
	if ! cmp -s "$REF/ref.cmp" "$out.cmp"; then
		diff "$REF/ref.cmp" "$out.cmp" > "$out.diff" 2>&1
		flt_notok "$what: output differs from the failure-free run" "$out.diff"
		return 1
	fi
	return 0
}

# relaunched_on JOB SINCE RANK...: for each rank, the node of its last
# "dispatcher relaunching" line since dispatcher log line SINCE ("" if none).
relaunch_node() {
	dlog_since "$2" | sed -n "s/.*dispatcher relaunching job=$1 rank=$3 .* node=\([^ ]*\) .*/\1/p" | tail -n 1
}

# check_moved WHAT JOB SINCE LOSTHOSTS RANKS...: every rank was relaunched
# on a node that is not one of LOSTHOSTS (space separated). Prints
# "R->HOST" pairs in MOVED.
check_moved() {
	local what=$1 job=$2 since=$3 lostd=$4 lost=" $4 " r n bad=0
	shift 4
	MOVED=
	for r in "$@"; do
		n=$(relaunch_node "$job" "$since" "$r")
		MOVED="$MOVED $r->${n:-none}"
		if [ -z "$n" ] || [[ $lost == *" $n "* ]]; then
			bad=1
		fi
	done
	MOVED=${MOVED# }
	if [ "$bad" = 1 ]; then
		dlog_since "$since" | grep -E 'declared dead|relaunch|lost|waiting' | head -n 20 > "$L/moved.txt"
		flt_notok "$what: ranks $* of job $job were not all relaunched off $lostd ($MOVED)" "$L/moved.txt"
		return 1
	fi
}

# ---- test bed and services -----------------------------------------------

if ! $TB up 4 > "$L/testbed.log" 2>&1; then
	flt_notok "deploy/netns-testbed.sh up 4" "$L/testbed.log"
	flt_finish
fi
# The set-up (see the top): relay behind closed firewalls, else direct
# between node hosts that let each other in.
NET_PROTO=${FLT_PROTOCOL:-direct}
LISTEN_OPT=()
if [ "$NET_PROTO" = relay ]; then
	LISTEN_OPT=(--no-listen)
else
	for h in n1 n2 n3 n4; do
		$TB open "$h" >> "$L/testbed.log" 2>&1 ||
			{ flt_notok "deploy/netns-testbed.sh open $h" "$L/testbed.log"; flt_finish; }
	done
fi
STORE=$L/store
mkdir -p "$STORE"
daemon dispatcher srv "$MPIV" dispatcher --listen "$DISP" --heartbeat-timeout "$HBT" "${SEC[@]}"
if ! wait_log 15 "$L/dispatcher.log" 'listening'; then
	flt_notok "dispatcher did not start in the server namespace" "$L/dispatcher.log"
	flt_finish
fi
daemon cm srv "$MPIV" cm --listen "$SRVA:7100" --dispatcher "$DISP" "${SEC[@]}"
daemon cs srv "$MPIV" cs --listen "$SRVA:7200" --store "$STORE" --dispatcher "$DISP" "${SEC[@]}"
if ! wait_log 15 "$L/dispatcher.log" 'cm registered' || ! wait_log 15 "$L/dispatcher.log" 'cs registered'; then
	flt_notok "CM and CS did not register with the dispatcher" "$L/dispatcher.log" "$L/cm.log" "$L/cs.log"
	flt_finish
fi
echo "# test bed $MPIVTB_PREFIX: srv $SRVA, n1..n4 behind $(grep -o '(nft)\|(iptables)' "$L/testbed.log" | tr -d '()') firewalls; secret: ${SEC[*]:-none}; node ${HB_OPT[*]:-(default heartbeat)}"

# ---- failure-free reference ----------------------------------------------

if ! PROG=$(flt_prog flt_stencil); then
	flt_notok "cannot compile tests/fault/progs/flt_stencil.c"
	flt_finish
fi
REF=$L
flt_job "$REF/ref" 120 -n "$NRANKS" --tag-output "$PROG" "${PROG_ARGS[@]}"
REF_RC=$FLT_RC
flt_norm "$REF/ref.out" "$REF/ref.err" > "$REF/ref.cmp"
if [ "$REF_RC" != 0 ] || [ ! -s "$REF/ref.cmp" ] || grep -q FLT-FAIL "$REF/ref.err"; then
	flt_notok "failure-free embedded run of flt_stencil (exit $REF_RC)" "$REF/ref.err" "$REF/ref.out"
	flt_finish
fi
echo "# reference: flt_stencil ${PROG_ARGS[*]} -n $NRANKS, $(flt_report "$REF/ref.json" wall_s) s, $(wc -l < "$REF/ref.cmp") lines"

# case_begin LABEL TAG NODE...: the nodes started, job TAG started and
# running all its ranks; SINCE = the dispatcher log line count before the
# job. 1 (said as LABEL's failure) when a node or the job did not start.
case_begin() {
	local label=$1 tag=$2 h
	shift 2
	for h in "$@"; do start_node "$h" || return 1; done
	SINCE=$(dlog_lines)
	start_job "$tag"
	if ! mid_job "$tag"; then
		flt_notok "$label: the job did not get going" "$L/$tag.err" "$L/dispatcher.log"
		wait_job "$tag"
		return 1
	fi
}

# case_victim: the first host running ranks of $JOB as VICTIM, with its
# ranks (RANKS, spaced), its agent's pid (VPID) and its ranks' pids (RPIDS).
case_victim() {
	read -r VICTIM _ < <(hosts_with_ranks "$JOB")
	RANKS=$(ranks_on "$JOB" "$VICTIM" | tr '\n' ' ')
	VPID=${PID[node-$VICTIM]}
	# A node agent is two processes: its privileged helper (VPID) and
	# the agent proper, the helper's child named mpiv, which heartbeats.
	VPIDS=$(printf '%s\n' "$VPID" $(pgrep -x -P "$VPID" mpiv) | sort -n | tr '\n' ' ' | sed 's/ $//')
	RPIDS=$(rank_pids "$JOB" "$VICTIM")
}

# ---- case kill: one node agent SIGKILLed -----------------------------------

case_kill() {
	local since victim vpid ranks left rpids
	case_begin kill kill n1 n2 n3 || return
	since=$SINCE
	case_victim
	victim=$VICTIM ranks=$RANKS
	vpid=$VPID rpids=$RPIDS
	kill9 "$vpid"
	# its ranks die with it (PR_SET_PDEATHSIG): the namespace empties
	flt_wait_for 5 sh -c "[ -z \"\$(ip netns pids $MPIVTB_PREFIX-$victim)\" ]"
	# shellcheck disable=SC2086
	left="$(ns_pids "$victim") $(live $rpids)"
	left=${left# }
	left=${left% }
	wait_job kill
	local ok=1
	if [ -n "$left" ]; then
		ps -o pid,ppid,stat,args -p "${left// /,}" > "$L/kill.left" 2>&1
		flt_notok "kill: processes left in $victim 5 s after its agent was SIGKILLed (ranks did not die with it)" "$L/kill.left"
		ok=0
	fi
	check_job kill "kill (node $victim with ranks $ranks SIGKILLed)" || ok=0
	# shellcheck disable=SC2086
	check_moved "kill" "$JOB" "$since" "$victim" $ranks || ok=0
	if ! dlog_since "$since" | grep -q "node declared dead node=$victim#"; then
		flt_notok "kill: the dispatcher never declared $victim dead" "$L/dispatcher.log"
		ok=0
	fi
	[ "$ok" = 1 ] && flt_ok "kill: node $victim (ranks ${ranks% }) SIGKILLed mid-job: its ranks died with it, relaunched ($MOVED), output identical, exit $JOB_RC"
}

# ---- case partition: link down longer than the heartbeat timeout, healed --

case_partition() {
	local since victim vpid ranks heal_at running ok=1 stale old_id rpids
	case_begin partition part n1 n2 n3 || return
	since=$SINCE
	case_victim
	victim=$VICTIM ranks=$RANKS
	vpid=$VPID rpids=$RPIDS
	$TB partition "$victim" > /dev/null
	# declared dead after the heartbeat timeout, ranks relaunched elsewhere
	if ! flt_wait_for $((HBT + 8)) sh -c "tail -n +$((since + 1)) '$L/dispatcher.log' | grep -q 'node declared dead node=$victim#'"; then
		flt_notok "partition: $victim partitioned for $((HBT + 8)) s, never declared dead" "$L/dispatcher.log"
		ok=0
	fi
	# stay cut off a while longer (the agent's own silence timeout runs)
	sleep $((HBT + 1))
	running=no
	kill -0 "$JOB_PID" 2>/dev/null && running=yes
	$TB heal "$victim" > /dev/null
	heal_at=$(dlog_lines)
	# the agent comes back as a fresh node: told it had been declared dead
	if ! flt_wait_for 30 sh -c "tail -n +$((heal_at + 1)) '$L/dispatcher.log' | grep -qE 'node registered node=[^ ]* name=$victim '"; then
		flt_notok "partition: $victim did not register again within 30 s of the heal" "$L/node-$victim.log" "$L/dispatcher.log"
		ok=0
	elif ! dlog_since "$since" | grep -q "came back after being declared dead.* previous=$victim#"; then
		dlog_since "$since" | grep -E "$victim" > "$L/part.rejoin"
		flt_notok "partition: $victim registered again but the dispatcher did not tell it had been declared dead" "$L/part.rejoin"
		ok=0
	fi
	# its stale ranks are gone: only the agent is left in its namespace
	flt_wait_for 10 sh -c "[ \"\$(ip netns pids $MPIVTB_PREFIX-$victim | sort -n | tr '\n' ' ')\" = '$VPIDS ' ]"
	# shellcheck disable=SC2086
	stale=$(live $rpids)
	if [ -n "$stale" ]; then
		ps -o pid,ppid,stat,args -p "${stale// /,}" > "$L/part.left" 2>&1
		flt_notok "partition: stale ranks of $victim still run after the heal: $stale" "$L/part.left"
		ok=0
	fi
	stale=$(ns_pids "$victim" | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')
	if [ "$stale" != "$VPIDS" ]; then
		ps -o pid,ppid,stat,args -p "${stale// /,}" > "$L/part.left" 2>&1
		flt_notok "partition: processes besides the agent ($VPIDS) left in $victim after the heal: $stale" "$L/part.left"
		ok=0
	fi
	wait_job part
	check_job part "partition (node $victim with ranks $ranks)" || ok=0
	# shellcheck disable=SC2086
	check_moved "partition" "$JOB" "$since" "$victim" $ranks || ok=0
	if [ "$HAVE_STATUS" = 1 ]; then
		timeout 20 ip netns exec "$SRV" "$MPIV" status --dispatcher "$DISP" "${SEC[@]}" > "$L/part.status" 2>&1
		old_id=$(dead_id "$victim" "$since")
		if ! grep -qE "^ *$victim#[0-9]+ +$victim " "$L/part.status" ||
		    grep -qE "^ *$old_id " "$L/part.status"; then
			flt_notok "partition: mpiv status does not list $victim under a fresh node id (it was $old_id)" "$L/part.status"
			ok=0
		fi
	fi
	[ "$ok" = 1 ] && flt_ok "partition: node $victim (ranks ${ranks% }) cut off > ${HBT} s: declared dead, ranks relaunched ($MOVED), healed (job still running: $running), rejoined as a fresh node, stale ranks gone, output identical, exit $JOB_RC, CM duplicates $(cm_dups "$JOB")"
}

# ---- case two: two nodes lost at once ---------------------------------------

case_two() {
	local since v1 v2 r1 r2 ok=1
	case_begin two two n1 n2 n3 n4 || return
	since=$SINCE
	{ read -r v1 _; read -r v2 _; } < <(hosts_with_ranks "$JOB")
	if [ -z "${v2:-}" ]; then	# all ranks on one node: lose another one too
		for v2 in n1 n2 n3 n4; do [ "$v2" != "$v1" ] && break; done
	fi
	r1=$(ranks_on "$JOB" "$v1" | tr '\n' ' ')
	r2=$(ranks_on "$JOB" "$v2" | tr '\n' ' ')
	kill9 "${PID[node-$v1]}" "${PID[node-$v2]}"
	wait_job two
	check_job two "two (nodes $v1 and $v2 SIGKILLed together)" || ok=0
	# shellcheck disable=SC2086
	check_moved "two" "$JOB" "$since" "$v1 $v2" $r1 $r2 || ok=0
	[ "$ok" = 1 ] && flt_ok "two: nodes $v1 (ranks ${r1% }) and $v2 (ranks ${r2% }) SIGKILLed at once: relaunched ($MOVED), output identical, exit $JOB_RC"
}

# ---- case join: the lost ranks wait for a node that joins mid-job ------------

case_join() {
	local since victim ranks waited ok=1 r n
	case_begin join join n1 n2 || return
	since=$SINCE
	case_victim
	victim=$VICTIM ranks=$RANKS
	kill9 "${PID[node-$victim]}"
	# no free slot anywhere: the lost ranks must wait
	sleep 1.5
	waited=yes
	for r in $ranks; do
		[ -n "$(relaunch_node "$JOB" "$since" "$r")" ] && waited=no
	done
	if [ "$waited" = no ]; then
		dlog_since "$since" | grep -E 'relaunch|dead' > "$L/join.early"
		flt_notok "join: ranks of $victim were relaunched with no free slot in the pool" "$L/join.early"
		ok=0
	fi
	if ! kill -0 "$JOB_PID" 2>/dev/null; then
		flt_notok "join: the job ended while its lost ranks had nowhere to go" "$L/join.err"
		ok=0
	fi
	start_node n4 || ok=0
	wait_job join
	check_job join "join (node $victim lost, n4 joined)" || ok=0
	for r in $ranks; do
		n=$(relaunch_node "$JOB" "$since" "$r")
		if [ "$n" != n4 ]; then
			flt_notok "join: rank $r was relaunched on '${n:-nowhere}', not on the node that joined (n4)" "$L/dispatcher.log"
			ok=0
		fi
	done
	if [ -z "$(ranks_on "$JOB" n4)" ]; then
		flt_notok "join: the node agent on n4 never launched a rank of job $JOB" "$L/node-n4.log"
		ok=0
	fi
	[ "$ok" = 1 ] && flt_ok "join: node $victim (ranks ${ranks% }) lost with no free slot; the ranks waited and ran on n4 once it joined; output identical, exit $JOB_RC"
}

# ---- case freeze: the agent stops (SIGSTOP), its ranks do not ---------------
# The node falls silent while its ranks keep running and talking to the CM:
# the dispatcher declares it dead and relaunches them; the CM must fence the
# old incarnations (two live copies of a rank never both talk to a CM);
# when the agent wakes up (SIGCONT) it is told it had been declared dead,
# kills what is left and joins fresh. Nothing the stale ranks printed in
# between may reach the job's output.

case_freeze() {
	local since victim vpid ranks ok=1 r alive after fenced='' stale rpids
	case_begin freeze freeze n1 n2 n3 || return
	since=$SINCE
	case_victim
	victim=$VICTIM ranks=$RANKS
	vpid=$VPID rpids=$RPIDS
	# shellcheck disable=SC2086
	kill -STOP $VPIDS
	# the old incarnations live on while their agent is frozen
	sleep 1
	# shellcheck disable=SC2086
	alive=$(live $rpids | wc -w)
	if ! flt_wait_for $((HBT + 8)) sh -c "tail -n +$((since + 1)) '$L/dispatcher.log' | grep -q 'node declared dead node=$victim#'"; then
		flt_notok "freeze: $victim's agent stopped for $((HBT + 8)) s, never declared dead" "$L/dispatcher.log"
		ok=0
	fi
	# the relaunched incarnations connect to the CM: the old ones are fenced
	for r in $ranks; do
		if flt_wait_for 15 grep -qE "cm fencing job=$JOB rank=$r old_incarnation=1 " "$L/cm.log"; then
			fenced="$fenced $r"
		fi
	done
	# shellcheck disable=SC2086
	after=$(live $rpids | wc -w)
	# shellcheck disable=SC2086
	kill -CONT $VPIDS
	if [ "${fenced# }" != "${ranks% }" ]; then
		grep -E "job=$JOB " "$L/cm.log" | grep -E 'fenc|connected|closed|refus' | head -n 20 > "$L/freeze.cm"
		flt_notok "freeze: the CM fenced ranks '${fenced# }' of job $JOB, expected '${ranks% }' (the stale ranks were still connected)" "$L/freeze.cm"
		ok=0
	fi
	if ! flt_wait_for 20 sh -c "tail -n +$((since + 1)) '$L/dispatcher.log' | grep -q 'came back after being declared dead.* previous=$victim#'"; then
		flt_notok "freeze: $victim's agent, woken up, was not told it had been declared dead" "$L/node-$victim.log" "$L/dispatcher.log"
		ok=0
	fi
	flt_wait_for 10 sh -c "[ \"\$(ip netns pids $MPIVTB_PREFIX-$victim | sort -n | tr '\n' ' ')\" = '$VPIDS ' ]"
	# shellcheck disable=SC2086
	stale="$(live $rpids)"
	if [ "$(ns_pids "$victim" | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')" != "$VPIDS" ] || [ -n "$stale" ]; then
		ps -o pid,ppid,stat,args -p "$(ns_pids "$victim" | tr ' ' ',')${stale:+,${stale// /,}}" > "$L/freeze.left" 2>&1
		flt_notok "freeze: stale processes left in $victim after its agent woke up" "$L/freeze.left"
		ok=0
	fi
	wait_job freeze
	check_job freeze "freeze (agent of $victim with ranks $ranks stopped)" || ok=0
	# shellcheck disable=SC2086
	check_moved "freeze" "$JOB" "$since" "$victim" $ranks || ok=0
	[ "$ok" = 1 ] && flt_ok "freeze: agent of $victim (ranks ${ranks% }) SIGSTOPped, its ranks running on: declared dead, relaunched ($MOVED), old incarnations fenced by the CM (running while the agent was frozen: $alive, after fencing: $after), agent woke up and rejoined fresh, output identical, exit $JOB_RC, CM duplicates $(cm_dups "$JOB")"
}

CASES=${FLT_ONLY:-"kill partition two join freeze"}
for c in $CASES; do
	"case_$c"
	stop_nodes
done

# Nobody ever tried to connect to a node from where it must not (mpiv's
# services never dial nodes; in direct only peer nodes do); then the
# firewall itself is shown to work.
drops=
for h in n1 n2 n3 n4; do
	n=$($TB drops "$h" 2>/dev/null)
	[ -n "$n" ] && [ "$n" != 0 ] && drops="$drops $h:$n"
done
if [ -n "$drops" ]; then
	flt_notok "inbound connections were attempted to node hosts during the jobs (dropped:$drops)"
else
	flt_ok "no inbound connection to any node host during the jobs"
fi
if $TB fw-check n1 > "$L/fw.log" 2>&1; then
	flt_ok "fw: $(grep -c ': ok:' "$L/fw.log") fw-check probes on n1 hold (inbound dropped, outbound connects)"
else
	flt_notok "fw: deploy/netns-testbed.sh fw-check n1" "$L/fw.log"
fi

echo "# took $(( $(date +%s) - start ))s"
flt_finish
