#!/usr/bin/env bash
# tests/run.sh: the test runner `make test` calls (from the repo root).
#
#   tests/run.sh [-k PATTERN] [-l] [--no-asan] [-j N]
#
#   -k PATTERN  run only tests whose name matches PATTERN (bash regex,
#               so a plain substring works: -k mpi/p2p, -k 'n16$')
#   -l          list the test names that would run, run nothing
#   --no-asan   do not run the ASan pass even if build-asan/ exists
#   -j N        N tests at a time where that is safe (MPIV_TEST_JOBS)
#
# Environment:
#   MPIV_BUILD        build dir (default: build)
#   MPIV_ASAN         auto (default): run the ASan pass when build-asan/bin/mpiv
#                     exists and MPIV_BUILD is not already build-asan; 0 = never
#   MPIV_ASAN_BUILD   ASan build dir (default: build-asan)
#   MPIV_MPI_TIMEOUT  per-job --timeout passed to mpiv run (default 60)
#   MPIV_SCRIPT_TIMEOUT  hard timeout of each integration/fault script (600)
#   MPIV_TEST_JOBS    unit tests, MPI cases and integration scripts run
#                     this many at a time (default 2, or -j N; 1 = one at
#                     a time). Most wait on daemons, heartbeats and
#                     timeouts rather than compute; the heavy integration
#                     scripts run one at a time in a lane beside the
#                     others (PAR_HEAVY below); the fault scripts run in two
#                     lanes (FAULT_HEAVY below), one script at a time
#                     each. Output is printed in order as they finish.
#
# Tests, in order (names as printed):
#   unit/NAME               every executable in $MPIV_BUILD/tests/unit/
#   mpi/PROG/nN[/OPTS]      each line of tests/mpi/cases.txt, via mpiv run
#                           (OPTS: the line's mpiv run options, squeezed);
#                           when tests/mpi/expected.txt has "PROG N: ..."
#                           lines, stdout must equal them exactly
#                           (the default protocol, auto: direct on the
#                           embedded deployment, whose node listens)
#   relay/mpi/PROG/nN[/OPTS]  the same cases in the relay protocol
#                           (mpiv run --protocol relay)
#   fortran/PROG/nN, relay/fortran/PROG/nN   the same for the Fortran
#                           programs: tests/fortran/cases.txt and
#                           expected.txt (skipped without gfortran)
#   mpi/env/no-launcher     a program run without mpiv: exit 1, says "mpiv run"
#   integration/NAME        tests/integration/*.sh   (pass = exit 0)
#   fault/NAME              tests/fault/*.sh         (pass = exit 0)
#   relay/fault/NAME        the fault scripts that apply to both protocols,
#                           again with every job in the relay protocol
#                           (FLT_PROTOCOL=relay)
#   fuzz/run-short          tests/fuzz/run-short.sh, if present
#   asan/unit/NAME, asan/mpi/PROG/nN   the same against build-asan
#                           (MPI cases with 1, 2 or 4 ranks only)
# A test (script) that exits 77 is reported as skipped; its last output line
# is the reason. Failing tests' output goes to $MPIV_BUILD/test-logs/NAME.log.
# The last line is always "N passed, M failed[, K skipped]"; the exit status
# is non-zero when M > 0 or nothing passed.

# `make test` runs "sh tests/run.sh": re-exec under bash.
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi

cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh

B=${MPIV_BUILD:-build}
ASAN_B=${MPIV_ASAN_BUILD:-build-asan}
ASAN_MODE=${MPIV_ASAN:-auto}
MPI_TIMEOUT=${MPIV_MPI_TIMEOUT:-60}
T_JOBS=${MPIV_TEST_JOBS:-2}
SCRIPT_TIMEOUT=${MPIV_SCRIPT_TIMEOUT:-600}
LIST_ONLY=0
# Reference stdout of MPI cases: lines "PROG NRANKS: LINE" (from Open MPI).
EXPECTED=tests/mpi/expected.txt
[ -f "$EXPECTED" ] || EXPECTED=

while [ $# -gt 0 ]; do
	case $1 in
	-k) T_PATTERN=${2:?-k needs a pattern}; shift 2 ;;
	-k*) T_PATTERN=${1#-k}; shift ;;
	-l) LIST_ONLY=1; shift ;;
	--no-asan) ASAN_MODE=0; shift ;;
	-j) T_JOBS=${2:?-j needs a number}; shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "usage: tests/run.sh [-k PATTERN] [-l] [--no-asan] [-j N]" >&2; exit 2 ;;
	esac
done

export MPIV_BUILD=$B
T_LOGDIR=$B/test-logs
# Fresh failure logs for this run (only the ones we would rewrite).
t_init
if [ -z "$T_PATTERN" ]; then
	rm -f "$T_LOGDIR"/*.log 2>/dev/null
fi

if [ "$LIST_ONLY" = 1 ]; then
	t_run() {
		t_selected "$1" && printf '%s\n' "$1"
		return 0
	}
fi

# Sanitizer settings for the ASan build: any UB report fails the test.
# Leak checking is on for unit tests; for MPI jobs it is off (ranks and
# daemons are forked, checkpointed and killed on purpose).
SAN_ENV_UNIT=(ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
	UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}")
SAN_ENV_MPI=(ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}"
	UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}")

# run_unit BUILD PREFIX [env assignments...]: T_JOBS at a time (each
# is one process, most of them single-threaded: one at a time left a
# core idle for half a minute, or more under ASan).
run_unit() {
	local build=$1 prefix=$2 f
	shift 2
	[ -d "$build/tests/unit" ] || return 0
	for f in "$build"/tests/unit/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		t_run_bg "${prefix}unit/$(basename "$f")" 300 0 env "$@" "$f"
	done
	t_run_wait
}

# run_mpi BUILD PREFIX RANKFILTER [env assignments...]
# RANKFILTER: a bash regex on the rank count ("" = all)
# MPI_RUN_ARGS: mpiv run options added to every case (e.g. the protocol)
# MPI_DIR: the programs' directory under tests/ and $build/tests/ (mpi;
# fortran: the cases skip when mpifort was not built)
MPI_RUN_ARGS=()
MPI_DIR=mpi
run_mpi() {
	local build=$1 prefix=$2 rfilter=$3
	shift 3
	local dir=$MPI_DIR
	local cases=tests/$dir/cases.txt expected=$EXPECTED
	[ -f "$cases" ] || return 0
	[ "$dir" = mpi ] || expected=tests/$dir/expected.txt
	[ -f "$expected" ] || expected=
	declare -A seen=()
	local line prog n expect name i mpivargs progargs words
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		read -r -a words <<< "$line"
		[ ${#words[@]} -ge 2 ] || continue
		prog=${words[0]} n=${words[1]} expect=0 i=2
		if [ ${#words[@]} -gt 2 ] && [[ ${words[2]} =~ ^[0-9]+$ ]]; then
			expect=${words[2]} i=3
		fi
		# extra words: mpiv run options, then after "--" program args
		mpivargs=() progargs=()
		local after=0
		for ((; i < ${#words[@]}; i++)); do
			if [ "$after" = 0 ] && [ "${words[i]}" = "--" ]; then
				after=1
			elif [ "$after" = 0 ]; then
				mpivargs+=("${words[i]}")
			else
				progargs+=("${words[i]}")
			fi
		done
		if [ -n "$rfilter" ] && ! [[ $n =~ $rfilter ]]; then
			continue
		fi
		name="${prefix}$dir/$prog/n$n"
		if [ ${#mpivargs[@]} -gt 0 ]; then	# "--cms 2 --nodes 3" -> "/cms2nodes3"
			local sfx="${mpivargs[*]}"
			sfx=${sfx//-/}
			sfx=${sfx// /}
			name="$name/$sfx"
		fi
		if [ -n "${seen[$name]:-}" ]; then
			seen[$name]=$((seen[$name] + 1))
			name="$name#${seen[$name]}"
		else
			seen[$name]=1
		fi
		t_selected "$name" || continue
		if [ "$LIST_ONLY" = 0 ]; then
			if [ ! -x "$build/bin/mpiv" ]; then
				t_notok "$name" "$build/bin/mpiv not built"
				continue
			fi
			if [ "$dir" = fortran ] && [ ! -x "$build/bin/mpifort" ]; then
				t_skip "$name" "no gfortran at build time: $build/bin/mpifort not built"
				continue
			fi
			if [ ! -x "$build/tests/$dir/$prog" ]; then
				t_notok "$name" "$build/tests/$dir/$prog not built"
				continue
			fi
		fi
		# reference stdout (same for any mpiv options; not for runs
		# with program args or a non-zero exit)
		T_EXPECT_STDOUT=
		if [ "$expect" = 0 ] && [ ${#progargs[@]} -eq 0 ] && [ -n "$expected" ] &&
		    grep -q "^$prog $n: " "$expected"; then
			T_EXPECT_STDOUT="$T_TMP/expected"
			sed -n "s/^$prog $n: //p" "$expected" > "$T_EXPECT_STDOUT"
		fi
		t_run_bg "$name" $((MPI_TIMEOUT + 30)) "$expect" env "$@" \
			"$build/bin/mpiv" run -n "$n" --timeout "$MPI_TIMEOUT" \
			"${MPI_RUN_ARGS[@]}" "${mpivargs[@]}" \
			"$build/tests/$dir/$prog" "${progargs[@]}"
		T_EXPECT_STDOUT=
	done < "$cases"
	t_run_wait
}

# A program started without mpiv run: MPI_Init fails, exit 1, a message
# naming "mpiv run" on stderr (docs/CONTRACTS.md).
run_no_launcher() {
	local build=$1 prefix=$2
	shift 2
	local prog=$build/tests/mpi/env name="${prefix}mpi/env/no-launcher"
	t_selected "$name" || return 0
	if [ "$LIST_ONLY" = 0 ] && [ ! -x "$prog" ]; then
		t_notok "$name" "$prog not built"
		return 0
	fi
	t_run "$name" 30 0 env -u MPIV_CMS -u MPIV_RANK -u MPIV_SIZE "$@" sh -c '
		out=$("$1" 2>&1); rc=$?
		printf "%s\n" "$out"
		[ "$rc" -eq 1 ] || { echo "exit $rc, want 1"; exit 1; }
		printf "%s\n" "$out" | grep -q "mpiv run" || { echo "no \"mpiv run\" in the message"; exit 1; }' \
		no-launcher "$prog"
}

# t_run_bg NAME SECS EXPECT CMD...: t_run in a subshell in the
# background, T_JOBS at a time, with its own T_TMP (and its own copy of
# T_EXPECT_STDOUT); its output is kept and printed in order as the jobs
# finish, and the counters are taken from the lines it printed.
# t_run_wait: waits for all of them and prints the rest.
PAR_NAMES=()
PAR_PIDS=()
PAR_DONE=0
par_flush() {	# print the finished jobs at the head of the queue
	local i line name
	while [ "$PAR_DONE" -lt ${#PAR_PIDS[@]} ]; do
		i=$PAR_DONE
		[ "${1:-}" = all ] && wait "${PAR_PIDS[i]}" 2> /dev/null
		kill -0 "${PAR_PIDS[i]}" 2> /dev/null && break
		while IFS= read -r line; do
			printf '%s\n' "$line"
			case $line in
			"ok - "*" # SKIP "*) T_SKIP=$((T_SKIP + 1)) ;;
			"ok - "*) T_PASS=$((T_PASS + 1)) ;;
			"not ok - "*)
				# (a lane runs several tests: the name is the line's)
				name=${line#not ok - }
				T_FAIL=$((T_FAIL + 1))
				T_FAILED_NAMES+=("${name%% (*}") ;;
			esac
		done < "$T_TMP/par.$i.out"
		PAR_DONE=$((PAR_DONE + 1))
	done
}

# par_slot: waits for a free slot (fewer than T_JOBS jobs running),
# printing what finished meanwhile; PAR_I gets the new job's index, and
# its T_TMP ($T_TMP/par.$PAR_I) is made.
par_slot() {
	while [ "$(jobs -rp | wc -l)" -ge "$T_JOBS" ]; do
		wait -n
		par_flush
	done
	PAR_I=${#PAR_PIDS[@]}
	mkdir -p "$T_TMP/par.$PAR_I"
}

# par_started NAME: records the job just started in the background.
par_started() {
	PAR_PIDS[PAR_I]=$!
	PAR_NAMES[PAR_I]=$1
	par_flush
}

t_run_bg() {
	local name=$1 exp=
	t_selected "$name" || return 0
	if [ "$T_JOBS" -le 1 ] || [ "$LIST_ONLY" = 1 ]; then
		t_run "$@"
		return
	fi
	par_slot
	if [ -n "${T_EXPECT_STDOUT:-}" ]; then
		exp=$T_TMP/par.$PAR_I/expected.ref
		cp "$T_EXPECT_STDOUT" "$exp"
	fi
	( T_TMP=$T_TMP/par.$PAR_I T_EXPECT_STDOUT=$exp
	  t_run "$@" ) > "$T_TMP/par.$PAR_I.out" 2>&1 &
	par_started "$name"
}

t_run_wait() {
	wait
	par_flush all
}

# t_lane_bg NAME FUNC: runs the shell function FUNC (which calls t_run
# for each of its tests, one after the other) in the background like
# t_run_bg, as one job of the queue; with T_JOBS 1, runs it here.
t_lane_bg() {
	local name=$1
	shift
	if [ "$T_JOBS" -le 1 ] || [ "$LIST_ONLY" = 1 ]; then
		"$@"
		return
	fi
	par_slot
	echo "# $name: started (its tests print as it ends)"
	( T_TMP=$T_TMP/par.$PAR_I; "$@" ) > "$T_TMP/par.$PAR_I.out" 2>&1 &
	par_started "$name"
}

# (The scripts that look for stray processes count only those started
# under their own TMPDIR, so every script can run beside the others.)
# Integration scripts that load both cores for long (CRIU dumps of busy
# ranks, GiB messages, the application benchmarks): one lane, one at a
# time, beside the others.
PAR_HEAVY="test_checkpoint test_ckpt_elsewhere test_huge_msg test_bench_apps"

# script_lane DIR LIST: the scripts of DIR named in LIST, one at a time.
script_lane() {
	local dir=$1 t
	for t in $2; do
		[ -f "$dir/$t.sh" ] || continue
		t_run "$(basename "$dir")/$t" "$SCRIPT_TIMEOUT" 0 \
			env "${SAN_ENV_MPI[@]}" bash "$dir/$t.sh"
	done
}

# run_scripts_par DIR: DIR/*.sh: PAR_HEAVY as one lane beside the others,
# T_JOBS at a time in all. Scripts get the MPI sanitizer settings too
# (no leak reports from test programs when MPIV_BUILD is an ASan build).
run_scripts_par() {
	local dir=$1 f t name
	t_lane_bg "$(basename "$dir")/heavy" script_lane "$dir" "$PAR_HEAVY"
	for f in "$dir"/*.sh; do
		[ -f "$f" ] || continue
		t=$(basename "$f" .sh)
		name="$(basename "$dir")/$t"
		t_selected "$name" || continue
		[[ " $PAR_HEAVY " == *" $t "* ]] && continue
		t_run_bg "$name" "$SCRIPT_TIMEOUT" 0 env "${SAN_ENV_MPI[@]}" bash "$f"
	done
}

# The fault scripts that run in both protocols: in the default (auto,
# direct here) and again in the relay. The others test what only one
# protocol has and say so themselves (--protocol relay for the CMs' fault
# points, log bounds and pressure; test_direct_* for the direct one's).
# test_netns picks its set-up by the pass: node hosts that let each other
# in (auto runs direct), or behind closed firewalls with --no-listen
# agents (auto runs relay).
BOTH_FAULT="test_chaos test_ckpt_chaos test_kill_cmd test_kill_points
	test_replay_check test_divergence test_netns test_cm_crash test_fortran_chaos
	test_nbc_chaos test_rma_chaos test_file_chaos"

# The fault scripts run in two lanes side by side, each one script at a
# time: the chaos scripts whose programs keep both cores busy (HEAVY:
# about half of the fault scripts' time), and the others,
# which mostly wait on heartbeats, kills and restarts. So no two heavy
# ones share the cores (their chaos runs are timed by their own
# failure-free runs, which share the cores the same way), and the two
# passes of test_netns never run at once. With -j 1 everything runs one
# at a time, in the same order.
FAULT_HEAVY="test_chaos test_ckpt_chaos test_nbc_chaos test_rma_chaos"

# fault_lane DIR heavy|light: that lane's scripts, both protocols.
fault_lane() {
	local dir=$1 lane=$2 f t heavy
	for f in "$dir"/*.sh; do
		[ -f "$f" ] || continue
		t=$(basename "$f" .sh)
		heavy=light
		[[ " $FAULT_HEAVY " == *" $t "* ]] && heavy=heavy
		[ "$heavy" = "$lane" ] || continue
		t_run "$(basename "$dir")/$t" "$SCRIPT_TIMEOUT" 0 \
			env "${SAN_ENV_MPI[@]}" bash "$f"
	done
	for t in $BOTH_FAULT; do
		f=$dir/$t.sh
		[ -f "$f" ] || continue
		heavy=light
		[[ " $FAULT_HEAVY " == *" $t "* ]] && heavy=heavy
		[ "$heavy" = "$lane" ] || continue
		t_run "relay/$(basename "$dir")/$t" "$SCRIPT_TIMEOUT" 0 \
			env "${SAN_ENV_MPI[@]}" FLT_PROTOCOL=relay bash "$f"
	done
}

start=$(date +%s)
echo "# mpiv tests: MPIV_BUILD=$B${T_PATTERN:+, pattern '$T_PATTERN'}"

# (the sanitizer settings are harmless for a plain build and right for
# MPIV_BUILD=build-asan, as `make asan` runs it)
run_unit "$B" "" "${SAN_ENV_UNIT[@]}"
run_mpi "$B" "" "" "${SAN_ENV_MPI[@]}"
MPI_RUN_ARGS=(--protocol relay)
run_mpi "$B" "relay/" "" "${SAN_ENV_MPI[@]}"
MPI_RUN_ARGS=()
MPI_DIR=fortran
run_mpi "$B" "" "" "${SAN_ENV_MPI[@]}"
MPI_RUN_ARGS=(--protocol relay)
run_mpi "$B" "relay/" "" "${SAN_ENV_MPI[@]}"
MPI_RUN_ARGS=()
MPI_DIR=mpi
run_no_launcher "$B" "" "${SAN_ENV_MPI[@]}"
# One queue, T_JOBS at a time: the integration scripts, then the two
# fault lanes (each starts as soon as a slot frees, so no core idles
# while the last integration script ends), then the fuzzers (they start
# when the first lane ends, beside the other).
run_scripts_par tests/integration
t_lane_bg fault-heavy fault_lane tests/fault heavy
t_lane_bg fault-light fault_lane tests/fault light
if [ -f tests/fuzz/run-short.sh ]; then
	# 5 s a target here (the suite's budget); `FUZZ_SECONDS=60 bash
	# tests/fuzz/run-short.sh` or `make fuzz` for longer runs.
	FUZZ_SECONDS=${FUZZ_SECONDS:-5} t_run_bg fuzz/run-short "$SCRIPT_TIMEOUT" 0 \
	    bash tests/fuzz/run-short.sh
fi
t_run_wait

if [ "$ASAN_MODE" != 0 ] && [ "$B" != "$ASAN_B" ] && [ -x "$ASAN_B/bin/mpiv" ]; then
	echo "# ASan/UBSan pass: $ASAN_B"
	# the MPI cases at 1, 2 and 4 ranks (for the suite's time: the
	# others run in the plain pass but not under ASan; the 64 1-rank
	# cases, self-sends and 1-rank collectives, take about 15 s)
	run_unit "$ASAN_B" "asan/" "${SAN_ENV_UNIT[@]}"
	run_mpi "$ASAN_B" "asan/" '^(1|2|4)$' "${SAN_ENV_MPI[@]}"
	MPI_DIR=fortran
	run_mpi "$ASAN_B" "asan/" '^(1|2|4)$' "${SAN_ENV_MPI[@]}"
	MPI_DIR=mpi
elif [ "$ASAN_MODE" = 1 ]; then
	t_notok "asan" "MPIV_ASAN=1 but $ASAN_B/bin/mpiv is missing"
fi

[ "$LIST_ONLY" = 1 ] && exit 0
echo "# took $(( $(date +%s) - start ))s"
t_summary
