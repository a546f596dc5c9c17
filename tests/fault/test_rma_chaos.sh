#!/usr/bin/env bash
# tests/fault/test_rma_chaos.sh: one-sided communication under random
# SIGKILLs (mpiv run --chaos). A target applies the origins' operations at
# its own synchronization calls, by origin rank, from messages the logs
# replay (docs/ONESIDED.md): a re-executed rank must rebuild its window
# bit for bit and answer the same reads, so the output and exit code must
# equal the failure-free run's, and kills must really happen.
#
# flt_rma accumulates doubles of very different magnitudes from several
# origins into one target and fetch-and-adds a shared counter: the bits
# it prints depend on the order of application. Mode 0 uses fences,
# mode 1 post/start/complete/wait (every rank origin and target, with
# Get_accumulate), mode 2 passive target (MPI_Win_lock: tickets from
# counters, exclusive read-modify-writes, MPI_Win_sync polling; the
# program checks no ticket is given twice). "=ckpt" also checkpoints
# every 0.3 s. A target killed right after it recorded a passive-target
# service, before it answered (MPIV_FAULT=rma). Then the short tests/mpi
# rma_* programs (fence, PSCW with Win_test polling, atomics, passive
# target) under a tiny MTBF; dynamic windows (addresses) end with the same output
# or a clear error. The runner runs this script in both protocols
# (FLT_PROTOCOL=relay for the relay pass: one other seed there, as
# test_chaos.sh).
#
#   MPIV_BUILD=build-x bash tests/fault/test_rma_chaos.sh
#   FLT_SEEDS="1 2 3" FLT_KEEP=1 ...   (narrow / debug)
. "$(dirname "$0")/common.bash"

flt_need_chaos

SEEDS=${FLT_SEEDS:-"11 22"}
[ "${FLT_PROTOCOL:-direct}" = relay ] && SEEDS=${FLT_SEEDS:-33}

# name  nranks  args...
PROGS=(
	"flt_rma=fence      4 2000 3000 0"
	"flt_rma=pscw       4 2000 3000 1"
	"flt_rma=ckptpscw   3 3000 3000 1"
	"flt_rma=passive    4 1000 3000 2"
	"flt_rma=ckptpassive 3 1000 3000 2"
)

# Runs one program: reference, then the chaos runs. Args: name n args...
rma_prog() {
	local name=$1 n=$2
	shift 2
	local bin ref=$FLT_TMP/$name.ref runopt=() wall ms mid storm limit
	local kills_total=0 runs=0 seed mtbf label out k r kills restarts late
	if ! bin=$(flt_prog "${name%%=*}"); then
		flt_notok "$name: cannot compile tests/fault/progs/${name%%=*}.c"
		return
	fi
	case $name in *=ckpt*) runopt+=(--ckpt-interval 0.3) ;; esac
	flt_job "$ref" 120 -n "$n" "${runopt[@]}" "$bin" "$@"
	if [ "$FLT_RC" != 0 ] || ! grep -q '^rma: done' "$ref.out"; then
		flt_notok "$name: failure-free reference run (exit $FLT_RC)" "$ref.err" "$ref.out"
		return
	fi
	wall=$(flt_report "$ref.json" wall_s)
	ms=$(awk -v w="$wall" 'BEGIN { printf "%d", w * 1000 }')
	mid=$(( ms / 3 )); [ "$mid" -lt 60 ] && mid=60
	storm=$(( ms / 8 )); [ "$storm" -lt 25 ] && storm=25
	limit=$(( ms * 12 / 1000 + 30 ))
	echo "# $name: -n $n, failure-free ${ms} ms; MTBF mid ${mid}ms storm ${storm}ms"
	for seed in $SEEDS; do
		for label in mid storm; do
			if [ "$label" = mid ]; then mtbf=${mid}ms k=4; else mtbf=${storm}ms k=8; fi
			out=$FLT_TMP/$name.$label.$seed
			flt_job "$out" "$limit" -n "$n" "${runopt[@]}" --chaos "$mtbf" \
				--chaos-seed "$seed" --chaos-max "$k" "$bin" "$@"
			r=$FLT_RC
			runs=$((runs + 1))
			kills=$(flt_report "$out.json" kills)
			restarts=$(flt_report "$out.json" restarts)
			kills_total=$((kills_total + ${kills:-0}))
			local what="$name --chaos $mtbf --chaos-seed $seed --chaos-max $k"
			# a direct rank killed after every rank left MPI_Finalize
			# is not run again (docs/DIRECT.md)
			late=1
			[ "$(flt_report "$out.json" protocol)" = direct ] && late=$n
			if [ "$r" != 0 ]; then
				flt_notok "$what: exit $r (kills ${kills:-?})" "$out.err" "$out.out"
				continue
			fi
			if grep -q 'FLT-FAIL' "$out.err"; then
				flt_notok "$what: a program check failed" "$out.err"
				continue
			fi
			flt_same "$what (kills ${kills:-?}, restarts ${restarts:-?})" "$ref.out" "$out.out" ||
				tail -n 5 "$out.err" | sed 's/^/#   err| /'
			if [ -n "$kills" ] && [ -n "$restarts" ] && [ "$restarts" -lt $((kills - late)) ]; then
				flt_notok "$what: report says $kills kills but $restarts restarts" "$out.json"
			fi
		done
	done
	if [ "$kills_total" -gt 0 ]; then
		flt_ok "$name: $kills_total kills over $runs chaos runs"
	else
		flt_notok "$name: no kill happened in $runs chaos runs (tests nothing)"
	fi
}

for line in "${PROGS[@]}"; do
	read -r -a w <<< "$line"
	rma_prog "${w[@]}"
done

# Rank 1 killed at its 60th passive-target service, recorded but not yet
# applied nor answered: its next incarnation serves the same messages at
# the same places (its origins wait meanwhile) and the tickets stay
# unique.
if bin=$(flt_prog flt_rma) && [ -s "$FLT_TMP/flt_rma=passive.ref.out" ]; then
	out=$FLT_TMP/rma_point
	MPIV_FAULT=rma:60:1 flt_job "$out" 120 -n 4 "$bin" 1000 3000 2
	restarts=$(flt_report "$out.json" restarts)
	if [ "$FLT_RC" != 0 ] || grep -q 'FLT-FAIL' "$out.err"; then
		flt_notok "rma_point: exit $FLT_RC" "$out.err" "$out.out"
	elif [ "${restarts:-0}" -lt 1 ]; then
		flt_notok "rma_point: the fault point did not fire" "$out.err"
	else
		flt_same "rma_point: rank 1 killed inside a passive-target service ($restarts restarts)" \
			"$FLT_TMP/flt_rma=passive.ref.out" "$out.out"
	fi
fi

# The short tests/mpi one-sided programs: a tiny MTBF, the kills counted
# over the group.
group_kills=0
group_runs=0
for p in rma_fence rma_pscw rma_atomic rma_dtype rma_passive; do
	bin=$FLT_B/tests/mpi/$p
	if [ ! -x "$bin" ]; then
		flt_notok "tests/mpi/$p not built (make tests-build)"
		continue
	fi
	ref=$FLT_TMP/$p.ref
	flt_job "$ref" 60 -n 4 "$bin"
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "tests/mpi/$p: failure-free run exits $FLT_RC" "$ref.err"
		continue
	fi
	for seed in $SEEDS; do
		out=$FLT_TMP/$p.$seed
		flt_job "$out" 60 -n 4 --chaos 15ms --chaos-seed "$seed" --chaos-max 3 "$bin"
		kills=$(flt_report "$out.json" kills)
		group_kills=$((group_kills + ${kills:-0}))
		group_runs=$((group_runs + 1))
		what="tests/mpi/$p --chaos 15ms --chaos-seed $seed (kills ${kills:-?})"
		if [ "$FLT_RC" != 0 ]; then
			flt_notok "$what: exit $FLT_RC" "$out.err"
		else
			flt_same "$what" "$ref.out" "$out.out"
		fi
	done
done
if [ "$group_runs" -gt 0 ]; then
	if [ "$group_kills" -gt 0 ]; then
		flt_ok "tests/mpi rma programs: $group_kills kills over $group_runs chaos runs"
	else
		flt_notok "tests/mpi rma programs: no kill in $group_runs chaos runs"
	fi
fi

# Dynamic windows: their target displacements are addresses, which a
# rank re-executed from the beginning does not get again (ASLR). Under
# kills the job either gives the failure-free output or ends with a
# clear error (replay diverged, or the relaunched target's range error
# saying why): never another output with exit 0, never a hang.
p=rma_dynamic
bin=$FLT_B/tests/mpi/$p
ref=$FLT_TMP/$p.ref
flt_job "$ref" 60 -n 4 "$bin"
for seed in $(printf '%s\n' $SEEDS 33 44 | awk '!seen[$0]++'); do
	out=$FLT_TMP/$p.$seed
	flt_job "$out" 60 -n 4 --chaos 15ms --chaos-seed "$seed" --chaos-max 3 "$bin"
	what="tests/mpi/$p --chaos 15ms --chaos-seed $seed (kills $(flt_report "$out.json" kills))"
	if [ "$FLT_RC" = 0 ]; then
		flt_same "$what: exit 0" "$ref.out" "$out.out"
	elif [ "$FLT_RC" != 124 ] && grep -q -e 'replay diverged' -e 'this rank was relaunched' "$out.err"; then
		flt_ok "$what: exit $FLT_RC, a clear error: $(grep -o -m 1 -e 'replay diverged' -e 'this rank was relaunched' "$out.err")"
	else
		flt_notok "$what: exit $FLT_RC without a clear reason" "$out.err" "$out.out"
	fi
done

flt_finish
