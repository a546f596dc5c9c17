#!/usr/bin/env bash
# tests/fault/test_nbc_chaos.sh: non-blocking collectives, matched probes
# and persistent send modes under random SIGKILLs (mpiv run --chaos),
# with and without checkpoints. Their steps and matches depend on timing
# and are logged and replayed (docs/COLLECTIVES.md, "Non-blocking
# collectives"); the output and exit code must equal the failure-free
# run's every time, and kills must really happen.
#
#   flt_nbc     Iallreduce, Ibcast, Iallgather, Ialltoall, Iscan,
#               Ibarrier outstanding together with ring traffic,
#               completed by reverse Waits, a Testany polling loop or
#               Waitsome; Comm_idup
#   flt_mprobe  Mprobe/Improbe on (ANY_SOURCE, ANY_TAG) + Mrecv/Imrecv
#               from every rank; a persistent Ssend_init ring
#
# tests/run.sh runs it in the default protocol and again in the relay
# (FLT_PROTOCOL=relay).
#   FLT_SEEDS="1 2" FLT_KEEP=1 bash tests/fault/test_nbc_chaos.sh
. "$(dirname "$0")/common.bash"

flt_need_chaos

SEEDS=${FLT_SEEDS:-"11 22"}

# name  nranks  args...   (LABEL ckpt: also --ckpt-interval 0.25,
# and the chaos runs must have taken checkpoints)
PROGS=(
	"flt_nbc          4 1500 48"
	"flt_nbc=ckpt     4 800 48"
	"flt_mprobe       4 1000 6"
	"flt_mprobe=ckpt  4 1000 6"
)

nbc_prog() {
	local name=$1 n=$2
	shift 2
	local prog=${name%%=*} bin ref=$FLT_TMP/$name.ref runopt=() ms mtbf
	local seed out kills kills_total=0 runs=0 limit ckpts_total=0
	if ! bin=$(flt_prog "$prog"); then
		flt_notok "$name: cannot compile tests/fault/progs/$prog.c"
		return
	fi
	case $name in *=ckpt*) runopt=(--ckpt-interval 0.25) ;; esac
	flt_job "$ref" 120 -n "$n" "${runopt[@]}" "$bin" "$@"
	if [ "$FLT_RC" != 0 ] || grep -q 'FLT-FAIL' "$ref.err" || [ ! -s "$ref.out" ]; then
		flt_notok "$name: failure-free reference run (exit $FLT_RC)" "$ref.err" "$ref.out"
		return
	fi
	ms=$(awk -v w="$(flt_report "$ref.json" wall_s)" 'BEGIN { printf "%d", w * 1000 }')
	# kills spread over the run: a third of it, at least 40 ms
	mtbf=$(( ms / 3 )); [ "$mtbf" -lt 40 ] && mtbf=40
	limit=$(( ms * 12 / 1000 + 60 ))
	echo "# $name: -n $n, failure-free ${ms} ms; MTBF ${mtbf}ms"
	for seed in $SEEDS; do
		out=$FLT_TMP/$name.$seed
		flt_job "$out" "$limit" -n "$n" "${runopt[@]}" --chaos "${mtbf}ms" \
			--chaos-seed "$seed" --chaos-max 5 "$bin" "$@"
		kills=$(flt_report "$out.json" kills)
		kills_total=$((kills_total + ${kills:-0}))
		ckpts_total=$((ckpts_total + $(flt_report "$out.json" checkpoints || echo 0)))
		runs=$((runs + 1))
		local what="$name --chaos ${mtbf}ms --chaos-seed $seed (kills ${kills:-?})"
		if [ "$FLT_RC" != 0 ]; then
			flt_notok "$what: exit $FLT_RC" "$out.err" "$out.out"
			continue
		fi
		if grep -q 'FLT-FAIL' "$out.err"; then
			flt_notok "$what: a program check failed" "$out.err"
			continue
		fi
		flt_same "$what" "$ref.out" "$out.out"
	done
	if [ "${#runopt[@]}" -gt 0 ] && [ "$ckpts_total" -eq 0 ]; then
		flt_notok "$name: no checkpoint taken in $runs chaos runs"
	fi
	if [ "$kills_total" -gt 0 ]; then
		flt_ok "$name: $kills_total kills over $runs chaos runs${runopt:+, $ckpts_total checkpoints}"
	else
		flt_notok "$name: no kill happened in $runs chaos runs (tests nothing)"
	fi
}

for line in "${PROGS[@]}"; do
	read -r -a w <<< "$line"
	if [ -n "${FLT_ONLY:-}" ] && ! [[ ${w[0]} =~ $FLT_ONLY ]]; then
		continue
	fi
	nbc_prog "${w[@]}"
done

flt_finish
