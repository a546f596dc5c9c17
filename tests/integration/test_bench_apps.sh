#!/usr/bin/env bash
# tests/integration/test_bench_apps.sh: the application benchmarks of
# bench/apps/ (docs/BENCHMARKS.md, "Application benchmarks") keep
# building and keep checking their results.
#   build     every bench/apps/*.c builds with mpivcc (and, where Open
#             MPI is installed, with mpicc.openmpi, which `make bench`
#             also uses)
#   run       each runs with --quick at 4 ranks under `mpiv run`, in the
#             direct and in the relay protocol: exit 0 and one
#             "RESULT app=NAME n=4 wall_s=..." line (poll with 200
#             rounds: its pattern is slow under mpiv today)
#   corrupt   each run with --corrupt (one value changed on purpose)
#             must fail: a non-zero exit, an ERROR line and no RESULT
#             line, so a check that cannot fail does not pass unseen
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init bench-apps

APPS=()
for f in bench/apps/*.c; do
	a=${f##*/}
	APPS+=("${a%.c}")
done
[ "${#APPS[@]}" -ge 7 ] && ok "bench/apps has ${#APPS[@]} programs" ||
    notok "bench/apps has ${#APPS[@]} programs, expected 7 or more"

built=()
for a in "${APPS[@]}"; do
	if "$B/bin/mpivcc" -O2 -Wall -o "$T/$a" "bench/apps/$a.c" -lm > "$T/$a.cc" 2>&1 &&
	    ! grep -q 'warning' "$T/$a.cc"; then
		built+=("$a")
	else
		notok "$a: mpivcc build (errors or warnings)" "$T/$a.cc"
	fi
done
[ "${#built[@]}" = "${#APPS[@]}" ] && ok "every program builds with mpivcc, no warning"

OMPICC=$(command -v mpicc.openmpi 2>/dev/null)
if [ -n "$OMPICC" ]; then
	bad=0
	for a in "${APPS[@]}"; do
		"$OMPICC" -O2 -o "$T/$a.ompi" "bench/apps/$a.c" -lm > "$T/$a.occ" 2>&1 ||
		    { notok "$a: mpicc.openmpi build" "$T/$a.occ"; bad=1; }
	done
	[ "$bad" = 0 ] && ok "every program builds with mpicc.openmpi"
else
	ok "mpicc.openmpi build # skip: Open MPI not installed"
fi

# args APP: the --quick run's arguments
args() {
	case $1 in
	poll) echo --quick --rounds 200 ;;
	*) echo --quick ;;
	esac
}

for p in direct relay; do
	for a in "${built[@]}"; do
		o=$T/$a-$p.out
		# shellcheck disable=SC2046
		timeout 120 "$MPIV" run -n 4 --protocol "$p" --timeout 60 "$T/$a" $(args "$a") \
		    > "$o" 2> "$T/$a-$p.err"
		rc=$?
		n=$(grep -c "^RESULT app=$a n=4 wall_s=[0-9.]* " "$o")
		if [ "$rc" = 0 ] && [ "$n" = 1 ] && ! grep -q '^ERROR' "$o"; then
			ok "$p: $a $(args "$a"): exit 0, $(grep -o 'wall_s=[0-9.]*' "$o")"
		else
			notok "$p: $a: exit $rc, $n RESULT lines" "$o" "$T/$a-$p.err"
		fi
	done
done

# the checks themselves: a wrong value must be reported
for a in "${built[@]}"; do
	o=$T/$a-bad.out
	# shellcheck disable=SC2046
	timeout 120 "$MPIV" run -n 4 --timeout 60 "$T/$a" $(args "$a") --corrupt \
	    > "$o" 2> "$T/$a-bad.err"
	rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "^ERROR app=$a " "$o" &&
	    ! grep -q '^RESULT' "$o"; then
		ok "$a --corrupt: exit $rc, $(grep -m1 '^ERROR' "$o" | cut -c1-90)"
	else
		notok "$a --corrupt: exit $rc, the check did not report the wrong value" "$o" "$T/$a-bad.err"
	fi
done
[ "$fail" = 0 ]
