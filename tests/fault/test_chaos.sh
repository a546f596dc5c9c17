#!/usr/bin/env bash
# tests/fault/test_chaos.sh: random SIGKILLs (mpiv run --chaos) over
# application-shaped and semantics programs; the output and exit code must
# equal the failure-free run's every time, and kills must really happen.
#
# For each program: one failure-free reference run (its wall time scales
# the MTBFs), then chaos runs with several seeds: a "mid" MTBF (about a
# third of the run: a few kills spread over it) and a "storm" MTBF (an
# eighth: kills during replays, several ranks down at once). Checks per
# run: same exit code (in direct jobs a rank killed after every rank
# finished MPI_Finalize exits 0, its exit code lost: docs/DIRECT.md), same output (raw stdout when only rank 0 prints;
# --tag-output lines of both streams sorted stably by rank otherwise), no
# FLT-FAIL, report consistent (exit_code, restarts >= kills - 1: only the last kill may race a rank that is exiting 0; in direct jobs, where all ranks leave together, kills - nranks).
# Per program: the kills over its seeds must be > 0.
#
#   MPIV_BUILD=build-x bash tests/fault/test_chaos.sh
#   FLT_SEEDS="1 2 3" FLT_ONLY=flt_ring FLT_KEEP=1 ...   (narrow / debug)
. "$(dirname "$0")/common.bash"

flt_need_chaos

# Two seeds a program in the direct protocol (about 400 kills), one
# other seed in the relay (about 200 kills): the suite's time, this
# script is its slowest. FLT_SEEDS="11 22 33 44" runs more; `make soak`
# kills ranks, nodes and CMs for as long as asked.
SEEDS=${FLT_SEEDS:-"11 22"}
[ "${FLT_PROTOCOL:-direct}" = relay ] && SEEDS=${FLT_SEEDS:-33}

# name  nranks  output-mode  args...
# output-mode: raw (only rank 0 prints: stdout compared byte for byte)
#              tag (several ranks print: --tag-output, both streams)
# name: a program of tests/fault/progs, or PROG=LABEL to run PROG again
# under another name; LABEL ckpt* also checkpoints every 0.3 s (every run,
# the reference too), so the CM frees its log while ranks die.
# flt_coll with 16384 longs: 128 KiB Bcast payloads, carved from the CM's
# arenas (and its prefaulted ones), replayed after kills, and with
# checkpoints freed from arenas that other payloads still share; they
# also run Allreduce and Reduce of 128 KiB (in direct jobs too by rank 0
# in one round: p - 1 sends out; Rabenseifner is the force* case's).
# flt_dtype: darray, subarray, a struct with a leading zero-length
# block, partial MPI_Get_elements and external32 bytes, every value checked.
# LABEL force* sets MPIV_COLL to the large-data collective algorithms
# (docs/COLLECTIVES.md) at any size: 5 ranks, so with the fold of the
# extra rank. LABEL mcast* forces the multicast algorithms (the relay's
# default for Bcast, Barrier, Allreduce and Allgather; p - 1 sends in
# direct jobs) on 48 KB vectors.
PROGS=(
	"flt_mw       4 raw 2000 20000"
	"flt_stencil  4 tag 2000 3000"
	"flt_ring     4 raw 1500 3000"
	"flt_async    4 tag 60 40"
	"flt_order    3 raw 150 24"
	"flt_coll     4 raw 250 32"
	"flt_split    5 raw 200"
	"flt_exit     3 tag 800 3"
	"flt_coll=128k      4 raw 120 16384"
	"flt_coll=ckpt128k  4 raw 100 16384"
	"flt_coll=force     5 raw 100 6000"
	"flt_coll=mcast     5 raw 100 6000"
	"flt_dtype    4 raw 1500"
	"flt_intercomm      4 raw 600"
	"flt_intercomm=ckpt 4 raw 500"
	"flt_neighbor       5 raw 600"
)

# Runs one program: reference, then the chaos runs. Args: name n mode args...
chaos_prog() {
	local name=$1 n=$2 mode=$3
	shift 3
	local bin ref=$FLT_TMP/$name.ref runopt=() wall ms mid storm limit
	local kills_total=0 runs=0 seed mtbf label out k r prog=${name%%=*}
	if ! bin=$(flt_prog "$prog"); then
		flt_notok "$name: cannot compile tests/fault/progs/$prog.c"
		return
	fi
	[ "$mode" = tag ] && runopt=(--tag-output)
	case $name in *=ckpt*) runopt+=(--ckpt-interval 0.3) ;; esac
	case $name in *=force*) local -x MPIV_COLL=allreduce:rabenseifner,reduce:reduce_scatter_gather,bcast:scatter_allgather,reduce_scatter:ring ;; esac
	case $name in *=mcast*) local -x MPIV_COLL=allreduce:multicast,bcast:multicast,barrier:multicast,allgather:multicast,reduce:linear,gather:linear,scatter:linear ;; esac
	flt_job "$ref" 120 -n "$n" "${runopt[@]}" "$bin" "$@"
	if grep -q 'FLT-FAIL' "$ref.err" || [ -z "$(flt_report "$ref.json" wall_s)" ]; then
		flt_notok "$name: failure-free reference run (exit $FLT_RC)" "$ref.err" "$ref.out"
		return
	fi
	local ref_rc=$FLT_RC
	if [ "$mode" = tag ]; then flt_norm "$ref.out" "$ref.err" > "$ref.cmp"; else cp "$ref.out" "$ref.cmp"; fi
	if [ ! -s "$ref.cmp" ]; then
		flt_notok "$name: reference run printed nothing" "$ref.err"
		return
	fi
	wall=$(flt_report "$ref.json" wall_s)
	ms=$(awk -v w="$wall" 'BEGIN { printf "%d", w * 1000 }')
	mid=$(( ms / 3 )); [ "$mid" -lt 60 ] && mid=60
	storm=$(( ms / 8 )); [ "$storm" -lt 25 ] && storm=25
	# restarts re-execute from the start: allow for several re-runs
	limit=$(( ms * 12 / 1000 + 30 ))
	echo "# $name: -n $n, failure-free ${ms} ms, exit $ref_rc; MTBF mid ${mid}ms storm ${storm}ms"
	for seed in $SEEDS; do
		for label in mid storm; do
			if [ "$label" = mid ]; then mtbf=${mid}ms k=4; else mtbf=${storm}ms k=8; fi
			out=$FLT_TMP/$name.$label.$seed
			flt_job "$out" "$limit" -n "$n" "${runopt[@]}" --chaos "$mtbf" \
				--chaos-seed "$seed" --chaos-max "$k" "$bin" "$@"
			r=$FLT_RC
			runs=$((runs + 1))
			local late=1
			[ "$(flt_report "$out.json" protocol)" = direct ] && late=$n
			local lost_rc=0 kills restarts nlog what="$name --chaos $mtbf --chaos-seed $seed --chaos-max $k"
			kills=$(flt_report "$out.json" kills)
			restarts=$(flt_report "$out.json" restarts)
			nlog=$(jq -r '(.restart_log // []) | length' "$out.json" 2>/dev/null)
			kills_total=$((kills_total + ${kills:-0}))
			if [ "$r" = 124 ] && [ "$ref_rc" != 124 ]; then
				flt_notok "$name --chaos $mtbf --chaos-seed $seed: timed out (exit $r; kills ${kills:-?}); the other runs of $name are skipped" "$out.err" "$out.out"
				return
			fi
			if [ "$r" != "$ref_rc" ] && [ "$r" = 0 ] &&
			    [ "$(flt_report "$out.json" protocol)" = direct ] &&
			    [ "$(jq -r '[.per_rank[] | select(.exit_code == 0 and .incarnations > 1)] | length' "$out.json" 2>/dev/null)" -gt 0 ]; then
				# docs/DIRECT.md, "Finalize": a direct rank killed
				# after every rank finished MPI_Finalize is not run
				# again (its peers' logs are gone): it exits 0, its
				# own exit code lost. Only the exit code may differ.
				echo "# $what: exit 0, failure-free $ref_rc: a relaunched rank left after the job's end"
				lost_rc=1
			fi
			if [ "$r" != "$ref_rc" ] && [ "$lost_rc" = 0 ]; then
				flt_notok "$what: exit $r, failure-free $ref_rc (kills ${kills:-?})" "$out.err" "$out.out"
				continue
			fi
			if grep -q 'FLT-FAIL' "$out.err"; then
				flt_notok "$what: a program check failed" "$out.err"
				continue
			fi
			if [ "$mode" = tag ]; then flt_norm "$out.out" "$out.err" > "$out.cmp"; else cp "$out.out" "$out.cmp"; fi
			flt_same "$what (kills ${kills:-?}, restarts ${restarts:-?})" "$ref.cmp" "$out.cmp" ||
				tail -n 5 "$out.err" | sed 's/^/#   err| /'
			if [ -z "$kills" ] || [ -z "$restarts" ]; then
				flt_notok "$what: --report has no kills/restarts" "$out.json"
			elif [ "$restarts" -lt $((kills - late)) ]; then
				# Every kill restarts its rank, except that the last
				# one may land on a rank that was already exiting 0
				# (in direct jobs the last ones: there every rank
				# leaves MPI_Finalize at the same moment).
				flt_notok "$what: report says $kills kills but $restarts restarts" "$out.json"
			elif [ "${nlog:-0}" != "$restarts" ]; then
				flt_notok "$what: restart_log has ${nlog:-?} entries for $restarts restarts" "$out.json"
			elif [ "$(flt_report "$out.json" exit_code)" != "$r" ]; then
				flt_notok "$what: report exit_code $(flt_report "$out.json" exit_code), mpiv run exited $r" "$out.json"
			fi
		done
	done
	if [ "$kills_total" -gt 0 ]; then
		flt_ok "$name: $kills_total kills over $runs chaos runs"
	else
		flt_notok "$name: no kill happened in $runs chaos runs (tests nothing)"
	fi
}

start=$(date +%s)

# Preflight: one short chaos run must complete correctly, else the long
# list would only collect timeouts.
pf_bin=$(flt_prog flt_ring) || { flt_notok "cannot compile tests/fault/progs/flt_ring.c"; flt_finish; }
flt_job "$FLT_TMP/pf.ref" 30 -n 3 "$pf_bin" 300 3000
cp "$FLT_TMP/pf.ref.out" "$FLT_TMP/pf.ref.cmp"
flt_job "$FLT_TMP/pf" 30 -n 3 --chaos 40ms --chaos-seed 7 --chaos-max 2 "$pf_bin" 300 3000
if [ "$FLT_RC" != 0 ] || ! cmp -s "$FLT_TMP/pf.ref.cmp" "$FLT_TMP/pf.out"; then
	flt_notok "preflight: flt_ring -n 3 --chaos 40ms --chaos-seed 7 --chaos-max 2 exits $FLT_RC (kills $(flt_report "$FLT_TMP/pf.json" kills)), output $(cmp -s "$FLT_TMP/pf.ref.cmp" "$FLT_TMP/pf.out" && echo same || echo different); the remaining chaos runs are skipped" "$FLT_TMP/pf.err" "$FLT_TMP/pf.out"
	flt_finish
fi
flt_ok "preflight: a short flt_ring under --chaos completes with the failure-free output (kills $(flt_report "$FLT_TMP/pf.json" kills))"

for line in "${PROGS[@]}"; do
	read -r -a w <<< "$line"
	if [ -n "${FLT_ONLY:-}" ] && ! [[ ${w[0]} =~ $FLT_ONLY ]]; then
		continue
	fi
	chaos_prog "${w[@]}"
done

# The short tests/mpi application programs (tens of ms): a tiny MTBF, and
# the kills counted over the whole group.
group_kills=0
group_runs=0
for p in app_master_worker app_stencil app_ring app_async p2p_order coll_split p2p_large \
    intercomm neighbor grequest; do
	[ -n "${FLT_ONLY:-}" ] && ! [[ $p =~ $FLT_ONLY ]] && continue
	bin=$FLT_B/tests/mpi/$p
	if [ ! -x "$bin" ]; then
		flt_notok "tests/mpi/$p not built (make tests-build)"
		continue
	fi
	ref=$FLT_TMP/$p.ref
	flt_job "$ref" 60 -n 4 "$bin"
	ref_rc=$FLT_RC
	for seed in $SEEDS; do
		out=$FLT_TMP/$p.$seed
		flt_job "$out" 60 -n 4 --chaos 15ms --chaos-seed "$seed" --chaos-max 3 "$bin"
		kills=$(flt_report "$out.json" kills)
		group_kills=$((group_kills + ${kills:-0}))
		group_runs=$((group_runs + 1))
		what="tests/mpi/$p --chaos 15ms --chaos-seed $seed (kills ${kills:-?})"
		if [ "$FLT_RC" != "$ref_rc" ]; then
			flt_notok "$what: exit $FLT_RC, failure-free $ref_rc" "$out.err"
		else
			flt_same "$what" "$ref.out" "$out.out"
		fi
	done
done
if [ "$group_runs" -gt 0 ]; then
	if [ "$group_kills" -gt 0 ]; then
		flt_ok "tests/mpi programs: $group_kills kills over $group_runs chaos runs"
	else
		flt_notok "tests/mpi programs: no kill in $group_runs chaos runs"
	fi
fi
echo "# took $(( $(date +%s) - start ))s"
flt_finish
