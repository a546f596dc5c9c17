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

status=0
for t in fuzz_frame fuzz_cm_conn fuzz_cm_store fuzz_cs_conn fuzz_disp_conn \
    fuzz_tp_read fuzz_dp_read fuzz_priv fuzz_cs_delta fuzz_jsonr fuzz_win_apply fuzz_seal \
    fuzz_secret_file; do
	mkdir -p "$FB/corpus/$t" "$FB/crashes"
	echo "== $t ($SECS s)"
	if ! "$FB/$t" -max_total_time="$SECS" -max_len=4096 -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=0 \
	    -artifact_prefix="$FB/crashes/$t-" "$FB/corpus/$t" \
	    "tests/fuzz/seeds/$t" \
	    >"$FB/$t.log" 2>&1; then
		echo "run-short.sh: $t FAILED, see $FB/$t.log and $FB/crashes/" >&2
		tail -30 "$FB/$t.log" >&2
		status=1
	else
		grep -E "^#[0-9]+.*DONE" "$FB/$t.log" | tail -1
	fi
done
exit $status
