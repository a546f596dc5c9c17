#!/usr/bin/env bash
# tests/integration/test_slurm.sh: deploy/slurm/mpiv.sbatch on a private
# one-machine Slurm (Debian's slurm-wlm, installed if missing): munged,
# slurmctld and slurmd with their own key, socket, ports and state under a
# temp dir (the system's /etc/slurm and /etc/munge are not used). Submits
# the template on app_ring with 2 tasks, checks the job's stdout equals the
# embedded `mpiv run -n 2`, that it completed with exit 0, that no process
# of the job is left and its state dir is gone; then stops the daemons it
# started and removes their state.
#
# Exits 77 (reason on the last line) when Slurm cannot be made to work
# here: not root, no apt to install it, the install or the daemons failing.
# Bounded: under 90 s in all (the install, when needed, gets 55 s).
#
#   MPIV_BUILD  build dir (default build)

set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
B=${MPIV_BUILD:-build}
MPIV=$ROOT/$B/bin/mpiv
APP=$ROOT/$B/tests/mpi/app_ring
SBATCH_T=$ROOT/deploy/slurm/mpiv.sbatch
for f in "$MPIV" "$APP"; do
	[ -x "$f" ] || { echo "$f not built"; exit 1; }
done

skip() {
	echo "test_slurm: skipped: $*"
	exit 77
}
fail() {
	echo "not ok - $*"
	exit 1
}
[ "$(id -u)" = 0 ] || skip "needs root (munged, slurmctld and slurmd run as root)"

# ---- Slurm and munge, installed only if missing ----------------------------
need_install=0
for c in slurmctld slurmd sbatch srun squeue scontrol scancel sinfo munged munge unmunge; do
	command -v "$c" > /dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
	command -v "$c" > /dev/null 2>&1 || need_install=1
done
if [ $need_install = 1 ]; then
	command -v apt-get > /dev/null 2>&1 || skip "Slurm is not installed and there is no apt-get to install it"
	echo "# installing slurmctld slurmd slurm-client munge"
	export DEBIAN_FRONTEND=noninteractive
	timeout -k 2 25 apt-get update -q > /tmp/mpiv-test-slurm-apt.log 2>&1
	if ! timeout -k 2 $((55 - SECONDS)) apt-get install -y -q --no-install-recommends \
	    slurmctld slurmd slurm-client munge >> /tmp/mpiv-test-slurm-apt.log 2>&1; then
		skip "apt-get install slurmctld slurmd slurm-client munge failed or took over 55 s: $(tail -n 1 /tmp/mpiv-test-slurm-apt.log)"
	fi
	rm -f /tmp/mpiv-test-slurm-apt.log
	for c in slurmctld slurmd sbatch munged; do
		command -v "$c" > /dev/null 2>&1 || skip "$c still missing after installing Slurm"
	done
fi

W=$(mktemp -d /tmp/mpiv-test-slurm.XXXXXX)
chmod 755 "$W"
export SLURM_CONF=$W/slurm.conf
DAEMON_PIDS=()
JOBID=

stop_daemons() {
	local p i
	for p in "${DAEMON_PIDS[@]}"; do
		kill -TERM "$p" 2> /dev/null
	done
	for ((i = 0; i < 50; i++)); do
		local alive=0
		for p in "${DAEMON_PIDS[@]}"; do
			kill -0 "$p" 2> /dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${DAEMON_PIDS[@]}"; do
		kill -KILL "$p" 2> /dev/null
	done
	DAEMON_PIDS=()
}
cleanup() {
	[ -n "$JOBID" ] && timeout 5 scancel "$JOBID" 2> /dev/null
	stop_daemons
	# anything of the job still alive (it carries MPIV_STATE_DIR=$W/job)
	local p
	for p in $(job_pids); do
		kill -KILL "$p" 2> /dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT

# job_pids: processes whose environment says they belong to our job
job_pids() {
	local e
	for e in /proc/[0-9]*/environ; do
		{ tr '\0' '\n' < "$e"; } 2> /dev/null | grep -qx "MPIV_STATE_DIR=$W/job" || continue
		e=${e#/proc/}
		echo "${e%/environ}"
	done
}

# Every wait ends by DEADLINE (seconds since the start): the whole test
# stays under 90 s.
DEADLINE=85
# bound SECS: SECS, or less so as to end by DEADLINE (at least 1)
bound() {
	local b=$1
	[ $((SECONDS + b)) -gt $DEADLINE ] && b=$((DEADLINE - SECONDS))
	[ "$b" -lt 1 ] && b=1
	echo "$b"
}
# wait_for SECS CMD...: CMD every 0.1 s until it succeeds; false after SECS
wait_for() {
	local end=$((SECONDS + $(bound "$1")))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# Two free ports below the ephemeral range (from 32768), where an outgoing
# connection cannot take them between this check and slurmctld's bind.
port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
CTLD_PORT=
for try in 1 2 3 4 5 6 7 8 9 10; do
	p=$((30000 + (RANDOM % 1300) * 2))
	port_free $p && port_free $((p + 1)) && { CTLD_PORT=$p; break; }
done
[ -n "$CTLD_PORT" ] || fail "no free ports for slurmctld/slurmd"

# ---- munge ---------------------------------------------------------------
mkdir -p "$W/munge" "$W/ctld" "$W/spool" "$W/log" "$W/job"
chmod 700 "$W/munge"
rmdir "$W/job"	# the batch script makes (and removes) it
if command -v mungekey > /dev/null 2>&1; then
	mungekey -c -k "$W/munge/munge.key" > /dev/null 2>&1
else
	dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2> /dev/null
fi
chmod 400 "$W/munge/munge.key"
MSOCK=$W/munge/socket
munged -F -f --socket="$MSOCK" --key-file="$W/munge/munge.key" \
    --pid-file="$W/munge/pid" --seed-file="$W/munge/seed" --log-file="$W/log/munged.log" \
    > "$W/log/munged.out" 2>&1 &
DAEMON_PIDS+=($!)
munge_ok() { munge -n -S "$MSOCK" 2> /dev/null | unmunge -S "$MSOCK" > /dev/null 2>&1; }
wait_for 10 munge_ok || skip "munged does not work here: $(tail -n 1 "$W/log/munged.log" "$W/log/munged.out" 2> /dev/null | grep -v '^==>\|^$' | tail -n 1)"

# ---- slurmctld and slurmd --------------------------------------------------
HN=$(hostname -s 2> /dev/null || hostname)
cat > "$SLURM_CONF" << EOF
ClusterName=mpivtest
SlurmctldHost=$HN(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((CTLD_PORT + 1))
AuthType=auth/munge
AuthInfo=socket=$MSOCK
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$W/ctld
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
PlugStackConfig=$W/plugstack.conf
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
ReturnToService=2
KillWait=5
SlurmdParameters=config_overrides
NodeName=$HN NodeAddr=127.0.0.1 CPUs=2 RealMemory=100 State=UNKNOWN
PartitionName=mpivtest Nodes=$HN Default=YES MaxTime=5 State=UP
EOF
: > "$W/plugstack.conf"
slurmctld -D -f "$SLURM_CONF" > "$W/log/slurmctld.out" 2>&1 &
DAEMON_PIDS+=($!)
ctld_up() { timeout 5 scontrol ping 2> /dev/null | grep -q 'is UP'; }
wait_for 15 ctld_up || skip "slurmctld does not come up: $(tail -n 1 "$W/log/slurmctld.log" 2> /dev/null)"
slurmd -D -f "$SLURM_CONF" > "$W/log/slurmd.out" 2>&1 &
DAEMON_PIDS+=($!)
node_idle() { [ "$(timeout 5 sinfo -h -n "$HN" -o %T 2> /dev/null)" = idle ]; }
wait_for 20 node_idle || skip "the Slurm node does not become idle (state '$(sinfo -h -n "$HN" -o %T 2> /dev/null)'): $(tail -n 1 "$W/log/slurmd.log" 2> /dev/null)"
if ! out=$(timeout -k 2 "$(bound 15)" srun -n 1 -t 1 true 2>&1); then
	skip "srun cannot run a job step here: $(printf '%s\n' "$out" | tail -n 1)"
fi
echo "ok - a private Slurm runs here (slurmctld, slurmd, munged; ${SECONDS}s so far)"

# ---- the template ----------------------------------------------------------
timeout -k 2 "$(bound 30)" "$MPIV" run -n 2 --timeout 25 "$APP" > "$W/ref" 2> "$W/ref.err" ||
	fail "embedded reference run: $(tail -n 1 "$W/ref.err")"

# with a shared secret when every piece takes one
secret=
if "$MPIV" secret new "$W/secret" > /dev/null 2>&1; then
	secret=$W/secret
	for c in dispatcher cm cs node run; do
		"$MPIV" $c -h 2>&1 | grep -q -- --secret-file || secret=
	done
fi
[ -n "$secret" ] && echo "# with a shared secret" || echo "# without a shared secret (this mpiv has none)"
JOBID=$(timeout -k 2 "$(bound 15)" sbatch --parsable -n 2 -t 2 --chdir="$ROOT" -o "$W/out" -e "$W/err" \
    --export="ALL,MPIV=$MPIV,MPIV_STATE_DIR=$W/job,MPIV_REGISTER_TIMEOUT=20${secret:+,MPIV_SECRET_FILE=$secret}" \
    "$SBATCH_T" "$APP" 2> "$W/sbatch.err") || fail "sbatch: $(tail -n 1 "$W/sbatch.err")"
JOBID=${JOBID%%;*}
state=
job_done() {
	state=$(timeout 5 scontrol show job "$JOBID" 2> /dev/null | grep -o 'JobState=[A-Z_]*')
	state=${state#JobState=}
	case $state in
	PENDING | CONFIGURING | RUNNING | COMPLETING | "") return 1 ;;
	esac
	return 0
}
show_job() {
	sed 's/^/#   err| /' "$W/err" 2> /dev/null | tail -n 20
	sed 's/^/#   out| /' "$W/out" 2> /dev/null | tail -n 10
}
if ! wait_for 45 job_done; then
	show_job
	fail "the batch job $JOBID did not end in time (state $state, ${SECONDS}s since the test started)"
fi
exitcode=$(timeout 5 scontrol show job "$JOBID" | grep -o ' ExitCode=[0-9:]*' | cut -d= -f2)
JOBID=
if [ "$state" != COMPLETED ] || [ "$exitcode" != 0:0 ]; then
	show_job
	fail "batch job: state $state, exit code $exitcode"
fi
echo "ok - the batch job completed, exit code 0"
if cmp -s "$W/ref" "$W/out"; then
	echo "ok - its output equals the embedded run's"
else
	diff "$W/ref" "$W/out" | sed 's/^/#   /'
	show_job
	fail "the job's output differs from the embedded run's"
fi
grep -q "registered; running 2 rank" "$W/err" || { show_job; fail "the template did not report the node agents registering"; }
left=
wait_for 5 eval '[ -z "$(job_pids)" ]' || left=$(job_pids)
if [ -n "$left" ]; then
	ps -o pid,args -p "$(echo $left | tr ' ' ,)" | sed 's/^/#   /'
	fail "processes of the job left after it ended: $left"
fi
echo "ok - no process of the job left"
[ ! -e "$W/job" ] || fail "the job's state dir $W/job was not removed"
echo "ok - its state dir was removed"
stop_daemons
echo "ok - Slurm stopped (${SECONDS}s in all)"
exit 0
