# tests/integration/common.bash: sourced by the integration tests that
# start daemons by hand (not a test itself: tests/run.sh runs *.sh).
# Sets B (build dir, absolute), MPIV, a temp dir T removed at exit, and
# PIDS, the background daemons killed at exit; gives ok / notok (sets
# fail=1 and shows the tail of the files named) and wait_for. The test
# ends with `[ "$fail" = 0 ]`.
#
#   common_init NAME    call first (after cd to the repo root)

set -u

common_cleanup() {
	local p
	exec 2> /dev/null	# no "Killed" job notices at the end
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}

common_init() {
	B=${MPIV_BUILD:-build}
	case $B in /*) ;; *) B=$PWD/$B ;; esac
	MPIV=$B/bin/mpiv
	T=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-$1.XXXXXX")
	# A node agent started as root runs itself and its ranks as nobody
	# (mpiv node --user): they must reach the programs and files in here.
	chmod 755 "$T"
	# ... and the libmpi.so a program is linked with, which nobody cannot
	# read in a checkout under root's own 0700 home (/root/mpiv): there
	# the programs the tests build link libmpi.a instead, and agents that
	# run the prebuilt ones ($B/tests/...) keep root ("${NODE_USER[@]}").
	NODE_USER=()
	if sh tests/tools/nobody-cannot-read.sh "$B/lib/libmpi.so"; then
		export MPIVCC_STATIC=1 MPIFORT_STATIC=1
		NODE_USER=(--user root)
	fi
	PIDS=()
	fail=0
	trap common_cleanup EXIT
}

ok() { echo "ok - $1"; }

# notok MSG [FILE...]: the failing check, then the tail of each file.
notok() {
	local f
	echo "not ok - $1"
	fail=1
	shift
	for f in "$@"; do
		[ -s "$f" ] && tail -n 8 "$f" | sed "s|^|#   ${f##*/}: |"
	done
}

# wait_for SECONDS CMD...: polls CMD every 0.1 s; 0 once it succeeds.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while [ "$SECONDS" -lt "$end" ]; do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# need_criu: exits 77 (skipped) unless CRIU works here; sets CRIU.
# listening NAME: waits (10 s at most) for the "listening on ADDR" line a
# daemon printed to $T/NAME.out and prints ADDR; fails if none came.
listening() {
	wait_for 10 grep -qs '^listening on ' "$T/$1.out" &&
	    sed -n 's/^listening on //p' "$T/$1.out" | head -n 1
}

need_criu() {
	CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
	if ! timeout 60 "$CRIU" check > /dev/null 2>&1; then
		echo "skip: $CRIU check fails (run deploy/install-criu.sh as root)"
		exit 77
	fi
}
