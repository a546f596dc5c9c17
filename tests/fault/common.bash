# tests/fault/common.bash: helpers sourced by tests/fault/test_*.sh (not a
# test itself: tests/run.sh only runs *.sh).
#
#   MPIV_BUILD   build dir, relative to the repo root or absolute (build)
#   FLT_KEEP=1   keep the temp dir (outputs, reports) and print its path
#
# Each check prints "ok - ..." or "not ok - ..."; flt_finish exits 1 if any
# check failed. flt_skip REASON exits 77 with REASON as the last line.

set -u

FLT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FLT_B=${MPIV_BUILD:-build}
case $FLT_B in /*) ;; *) FLT_B=$FLT_ROOT/$FLT_B ;; esac
MPIV=$FLT_B/bin/mpiv
MPIVCC=$FLT_B/bin/mpivcc
FLT_PASS=0
FLT_FAIL=0
FLT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-fault.XXXXXX")
# Node agents started as root run their ranks as nobody (mpiv node --user).
chmod 755 "$FLT_TMP"
# The test programs load this build's libmpi.so, which nobody cannot read
# in a checkout under root's own 0700 home (/root/mpiv): there the node
# agents the scripts start themselves keep root ("${FLT_NODE_USER[@]}").
FLT_NODE_USER=()
if sh "$FLT_ROOT/tests/tools/nobody-cannot-read.sh" "$FLT_B/lib/libmpi.so"; then
	FLT_NODE_USER=(--user root)
fi
FLT_BG_PIDS=()

flt_cleanup() {
	local p
	# each job runs under timeout(1), which leads its own process group
	for p in "${FLT_BG_PIDS[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null
	done
	if [ "${FLT_KEEP:-0}" = 1 ]; then
		echo "# kept $FLT_TMP"
	else
		rm -rf "$FLT_TMP"
	fi
}
trap flt_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

flt_ok() {
	FLT_PASS=$((FLT_PASS + 1))
	printf 'ok - %s\n' "$1"
}

# flt_notok MSG [FILE...]: the failing check, then the head of each file.
flt_notok() {
	local f
	FLT_FAIL=$((FLT_FAIL + 1))
	printf 'not ok - %s\n' "$1"
	shift
	for f in "$@"; do
		[ -s "$f" ] || continue
		printf '#   --- %s\n' "${f#"$FLT_TMP"/}"
		head -n 15 "$f" | sed 's/^/#   | /'
		# a hung job's state (flt_dump_watch)
		if [ "$(head -n 15 "$f" | grep -c 'mpiv-dump:')" != "$(grep -c 'mpiv-dump:' "$f")" ]; then
			printf '#   --- %s: the ranks said, before the timeout\n' "${f#"$FLT_TMP"/}"
			grep 'mpiv-dump:' "$f" | head -n 80 | sed 's/^/#   | /'
		fi
	done
}

flt_check() {	# flt_check MSG CMD...: ok when CMD succeeds
	local msg=$1
	shift
	if "$@"; then flt_ok "$msg"; else flt_notok "$msg"; fi
}

flt_skip() {
	echo "$1"
	exit 77
}

flt_finish() {
	echo "# $FLT_PASS passed, $FLT_FAIL failed"
	[ "$FLT_FAIL" -eq 0 ] && [ "$FLT_PASS" -gt 0 ]
	exit $?
}

flt_need_mpiv() {
	[ -x "$MPIV" ] && [ -x "$MPIVCC" ] ||
		flt_skip "$FLT_B/bin/mpiv or mpivcc not built (make BUILD=...)"
}

# mpiv run has fault injection (--chaos).
flt_need_chaos() {
	flt_need_mpiv
	timeout 20 "$MPIV" run --help 2>&1 | grep -q -- '--chaos' ||
		flt_skip "mpiv run --help has no --chaos (this build cannot inject faults)"
}

# flt_prog NAME: compiles tests/fault/progs/NAME.c (once per build dir,
# again when the source, flt.h or the library is newer) and prints the
# binary's path.
flt_prog() {
	local src=$FLT_ROOT/tests/fault/progs/$1.c dir=$FLT_B/tests/fault
	local bin=$dir/$1 lib=$FLT_B/lib/libmpi.so
	mkdir -p "$dir" || return 1
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] ||
	    [ "$FLT_ROOT/tests/fault/progs/flt.h" -nt "$bin" ] || [ "$lib" -nt "$bin" ]; then
		timeout 120 "$MPIVCC" -O2 -g -Wall -o "$bin.tmp.$$" "$src" >&2 &&
			mv -f "$bin.tmp.$$" "$bin" || { rm -f "$bin.tmp.$$"; return 1; }
	fi
	printf '%s\n' "$bin"
}

# flt_proto: "--protocol P" when FLT_PROTOCOL names one (the runner's
# relay pass), nothing otherwise; for scripts that call mpiv run
# themselves: "$MPIV" run $(flt_proto) ...
flt_proto() {
	[ -z "${FLT_PROTOCOL:-}" ] || printf -- '--protocol %s\n' "$FLT_PROTOCOL"
}

# flt_descendants PID: every process below PID.
flt_descendants() {
	local p
	for p in $(pgrep -P "$1"); do
		echo "$p"
		flt_descendants "$p"
	done
}

# flt_dump_watch PID SECS: if the job PID still runs 2 s before its
# --timeout SECS ends it, its ranks write what they wait for on stderr
# (libmpi-lite/dump.c, MPIV_DUMP_SIGNAL): a hang leaves its reason in
# OUT.err. Returns within a second of the job's end.
flt_dump_watch() {
	local pid=$1 secs=$2 i p
	for ((i = 0; i < secs - 2; i++)); do
		sleep 1
		kill -0 "$pid" 2> /dev/null || return 0
	done
	for p in $(flt_descendants "$pid"); do
		tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -q '^MPIV_RANK=' &&
			kill -USR2 "$p" 2> /dev/null
	done
}

# flt_job OUT SECS MPIV_RUN_ARGS... : runs "mpiv run --report OUT.json
# --timeout SECS ARGS..." under a hard timeout, stdout in OUT.out, stderr
# in OUT.err, exit code in OUT.rc (and in $FLT_RC). A job still running
# 2 s before SECS gets its ranks' state dumped into OUT.err first.
# Every job also runs with --deadlock-after 3 --deadlock-abort: a job
# the dispatcher wrongly judged deadlocked (every rank waiting, no
# message moving, amid kills, restores and replays) fails its test.
flt_job() {
	local out=$1 secs=$2
	shift 2
	rm -f "$out.json"
	# in the background + wait, so a TERM to this script is handled at
	# once (the trap kills the job's process group)
	# FLT_PROTOCOL: run every job in that protocol (relay, direct)
	MPIV_DUMP_SIGNAL=12 timeout -k 5 $((secs + 20)) "$MPIV" run \
		--report "$out.json" --timeout "$secs" \
		--deadlock-after 3 --deadlock-abort \
		${FLT_PROTOCOL:+--protocol "$FLT_PROTOCOL"} \
		"$@" < /dev/null > "$out.out" 2> "$out.err" &
	local pid=$!
	FLT_BG_PIDS=("$pid")
	[ "$secs" -gt 4 ] && flt_dump_watch "$pid" "$secs" &
	wait "$pid"
	FLT_RC=$?
	FLT_BG_PIDS=()
	echo "$FLT_RC" > "$out.rc"
}

# flt_norm FILE...: the tagged lines ([JOB,RANK]<stream>: text) of the
# files, job id removed, sorted stably by rank then stream, so per
# (rank, stream) order is kept and the interleaving between ranks is
# ignored (docs/REPLAY.md "Output exactly once"). Lines without a tag
# (mpiv's own messages) are dropped.
flt_norm() {
	cat "$@" | sed -n 's/^\[[^],]*,\([0-9][0-9]*\)\]<\(std[a-z]*\)>: \{0,1\}/\1 \2 /p' |
		LC_ALL=C sort -s -k2,2 | LC_ALL=C sort -s -n -k1,1
}

# flt_report FILE KEY: a number from the --report JSON ("" if absent).
flt_report() {
	[ -s "$1" ] || return 0
	jq -r "(.${2} // empty) | tostring" "$1" 2>/dev/null
}

# flt_same WHAT REF GOT: compares two files, ok/not ok with a diff
# (GOT.diff). Each is read once, so either may be a process substitution
# (<(sort ...): a pipe, empty when read again); the diff of one goes
# under FLT_TMP.
flt_same() {
	local d=$3.diff
	case $3 in /dev/fd/*) d=$(mktemp "$FLT_TMP/same.XXXXXX") ;; esac
	if diff "$2" "$3" > "$d" 2>&1; then
		rm -f "$d"
		flt_ok "$1"
		return 0
	fi
	flt_notok "$1: output differs from the failure-free run" "$d"
	return 1
}

# flt_wait_for SECS CMD...: polls CMD every 0.05 s until it succeeds
# (return 0) or SECS elapse (return 1).
flt_wait_for() {
	local secs=$1 end
	shift
	end=$(( $(date +%s%N) + secs * 1000000000 ))
	while ! "$@"; do
		[ "$(date +%s%N)" -ge "$end" ] && return 1
		sleep 0.05
	done
	return 0
}
