#!/bin/sh
# Builds the libFuzzer targets with clang (-fsanitize=fuzzer,address) and
# runs each for FUZZ_SECONDS (default 20). Exits non-zero on a crash, a
# leak or a sanitizer report; crash inputs land in $BUILD-fuzz/crashes/.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FB=$BUILD-fuzz
SECS=${FUZZ_SECONDS:-20}

command -v clang >/dev/null 2>&1 || { echo "run-short.sh: clang not found (apt-get install clang)" >&2; exit 1; }
make -s -j"${FUZZ_JOBS:-2}" -f tests/fuzz/fuzz.mk BUILD="$BUILD" || { echo "run-short.sh: fuzz build failed" >&2; exit 1; }

# The targets' malloc limit is 2 GiB (-rss_limit_mb) and a frame header
# may announce a message payload up to 4 GiB: cap it at 1 GiB here.
export MPIV_MAX_PAYLOAD=${MPIV_MAX_PAYLOAD:-1073741824}

# Targets run FUZZ_PAR at a time (default 2: one per core here), each
# for SECS: the same fuzzing in half the wall time.
run_one() {
	t=$1
	mkdir -p "$FB/corpus/$t" "$FB/crashes"
	if "$FB/$t" -max_total_time="$SECS" -max_len=4096 -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=0 \
	    -artifact_prefix="$FB/crashes/$t-" "$FB/corpus/$t" \
	    "tests/fuzz/seeds/$t" \
	    >"$FB/$t.log" 2>&1; then
		echo ok > "$FB/$t.status"
	else
		echo failed > "$FB/$t.status"
	fi
}

status=0
set -- fuzz_frame fuzz_cm_conn fuzz_cm_store fuzz_cs_conn fuzz_disp_conn \
    fuzz_tp_read fuzz_dp_read fuzz_priv fuzz_cs_delta fuzz_jsonr fuzz_win_apply fuzz_seal \
    fuzz_secret_file
while [ $# -gt 0 ]; do
	batch=
	k=0
	while [ "$k" -lt "${FUZZ_PAR:-2}" ] && [ $# -gt 0 ]; do
		rm -f "$FB/$1.status"
		echo "== $1 ($SECS s)"
		run_one "$1" &
		batch="$batch $1"
		shift
		k=$((k + 1))
	done
	wait
	for t in $batch; do
		if [ "$(cat "$FB/$t.status" 2>/dev/null)" != ok ]; then
			echo "run-short.sh: $t FAILED, see $FB/$t.log and $FB/crashes/" >&2
			tail -30 "$FB/$t.log" >&2
			status=1
		else
			printf '%s: ' "$t"
			grep -E "^#[0-9]+.*DONE" "$FB/$t.log" | tail -1
		fi
	done
done
exit $status
