# tests/lib.sh: helpers for tests/run.sh (bash). Source it, then:
#
#   t_init                       reset counters, make the log dir
#   t_selected NAME              true when NAME matches the -k pattern
#   t_run NAME SECS EXPECT CMD.. run CMD under a hard timeout, report
#                                ok / not ok / skip (exit 77 = skip);
#                                if T_EXPECT_STDOUT names a file, CMD's
#                                stdout must also equal it byte for byte
#   t_summary                    print "N passed, M failed[, K skipped]",
#                                return non-zero if M > 0 or nothing ran
#
# Variables: T_PATTERN (bash regex, empty = all), T_LOGDIR (failure logs),
# T_TAIL (lines of a failing test's output to show, default 20).


T_PASS=0
T_FAIL=0
T_SKIP=0
T_PATTERN=${T_PATTERN:-}
T_LOGDIR=${T_LOGDIR:-build/test-logs}
T_TAIL=${T_TAIL:-20}
T_FAILED_NAMES=()

t_init() {
	T_PASS=0 T_FAIL=0 T_SKIP=0
	T_FAILED_NAMES=()
	mkdir -p "$T_LOGDIR"
	: > "$T_LOGDIR/timings.txt"	# seconds and name of each test run
	T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-tests.XXXXXX")
	: > "$T_TMP/started"	# failure logs older than this are stale
	trap 't_cleanup' EXIT
}

t_cleanup() {
	[ -n "${T_TMP:-}" ] && rm -rf "$T_TMP"
}

t_selected() {
	[ -z "$T_PATTERN" ] && return 0
	[[ $1 =~ $T_PATTERN ]]
}

# File name for a test's log: slashes and spaces become '_'.
t_logname() {
	local n=$1
	n=${n//\//_}
	n=${n// /_}
	printf '%s/%s.log' "$T_LOGDIR" "$n"
}

t_ok() {
	T_PASS=$((T_PASS + 1))
	printf 'ok - %s\n' "$1"
}

t_skip() {
	T_SKIP=$((T_SKIP + 1))
	printf 'ok - %s # SKIP %s\n' "$1" "$2"
}

# t_notok NAME REASON [OUTPUT_FILE]
t_notok() {
	T_FAIL=$((T_FAIL + 1))
	T_FAILED_NAMES+=("$1")
	printf 'not ok - %s (%s)\n' "$1" "$2"
	if [ -n "${3:-}" ] && [ -f "$3" ]; then
		local log
		log=$(t_logname "$1")
		mkdir -p "$(dirname "$log")"
		{
			printf '# test: %s\n# reason: %s\n# command: %s\n' "$1" "$2" "${T_LASTCMD:-}"
			cat "$3"
		} > "$log"
		# A TAP-speaking test's failed assertions may lie far above its
		# last lines: show each with the lines that explain it, so a CI
		# log names the failure even when only this output survives.
		if grep -q '^not ok' "$3"; then
			printf '#   failed assertions (first 8, 12 lines each):\n'
			grep -n -A 12 '^not ok' "$3" | awk '/^[0-9]+:not ok/ { n++ } n <= 8' |
				head -n 120 | sed 's/^/#   > /'
		fi
		printf '#   log: %s (last %d lines below)\n' "$log" "$T_TAIL"
		tail -n "$T_TAIL" "$3" | sed 's/^/#   | /'
	fi
}

# Human reason for an exit status.
t_reason() {
	local rc=$1 expect=$2 secs=$3
	case $rc in
	124) printf 'timed out after %ss' "$secs" ;;
	137) printf 'killed (SIGKILL) after timeout, exit 137' ;;
	*)
		if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
			printf 'exit %d (signal %d?), expected %d' "$rc" $((rc - 128)) "$expect"
		else
			printf 'exit %d, expected %d' "$rc" "$expect"
		fi ;;
	esac
}

# t_run NAME TIMEOUT_SECS EXPECTED_EXIT CMD ARGS...
# Runs CMD with stdin from /dev/null, stdout+stderr captured. Exit 77 means
# the test skipped itself (its last output line is the reason), unless 77
# was the expected code.
t_run() {
	local name=$1 secs=$2 expect=$3
	shift 3
	t_selected "$name" || return 0
	local out="$T_TMP/out" rc t0=$SECONDS
	T_LASTCMD="$*"
	# timeout signals the whole process group on expiry; -k escalates to
	# SIGKILL if TERM is not enough.
	if [ -n "${T_EXPECT_STDOUT:-}" ]; then
		timeout -k 10 "$secs" "$@" < /dev/null > "$out.stdout" 2> "$out.stderr"
		rc=$?
		{
			cat "$out.stderr"
			echo "# ---- stdout:"
			cat "$out.stdout"
		} > "$out"
	else
		timeout -k 10 "$secs" "$@" < /dev/null > "$out" 2>&1
		rc=$?
	fi
	printf '%s %s\n' "$((SECONDS - t0))" "$name" >> "$T_LOGDIR/timings.txt"
	if [ "$rc" -eq "$expect" ] && [ -n "${T_EXPECT_STDOUT:-}" ] &&
	    ! cmp -s "$T_EXPECT_STDOUT" "$out.stdout"; then
		{
			echo "# ---- stdout differs from the reference (diff reference actual):"
			diff "$T_EXPECT_STDOUT" "$out.stdout" | head -n 40
		} >> "$out"
		t_notok "$name" "stdout differs from the reference output" "$out"
	elif [ "$rc" -eq "$expect" ]; then
		t_ok "$name"
	elif [ "$rc" -eq 77 ]; then
		t_skip "$name" "$(tail -n 1 "$out" | tr -d '\r')"
	elif [ "$rc" -eq 124 ] && [ "$expect" -ne 124 ]; then
		t_notok "$name" "$(t_reason 124 "$expect" "$secs")" "$out"
	else
		t_notok "$name" "$(t_reason "$rc" "$expect" "$secs")" "$out"
	fi
	return 0
}

t_summary() {
	local line="$T_PASS passed, $T_FAIL failed"
	[ "$T_SKIP" -gt 0 ] && line="$line, $T_SKIP skipped"
	# where the time went (the suite must stay well under 30 minutes)
	if [ -s "$T_LOGDIR/timings.txt" ]; then
		printf '# slowest tests (s):'
		sort -rn "$T_LOGDIR/timings.txt" | head -n 10 |
			awk '{ printf " %s %s", $2, $1 }'
		printf '\n'
	fi
	if [ "$T_FAIL" -gt 0 ]; then
		# each with its first failed assertion (or its reason): the
		# end of a CI log may be all that is left of it
		printf '# failed tests:\n'
		local n log first
		for n in "${T_FAILED_NAMES[@]}"; do
			printf '#   %s\n' "$n"
			log=$(t_logname "$n")
			[ "$log" -nt "$T_TMP/started" ] || continue
			first=$(grep -m 3 '^not ok' "$log" | cut -c 1-300)
			[ -n "$first" ] || first=$(grep -m 1 '^# reason: ' "$log" | cut -c 1-300)
			[ -n "$first" ] && printf '%s\n' "$first" | sed 's/^/#     /'
		done
	fi
	printf '%s\n' "$line"
	[ "$T_FAIL" -eq 0 ] && [ "$T_PASS" -gt 0 ]
}
