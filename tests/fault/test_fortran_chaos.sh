#!/usr/bin/env bash
# tests/fault/test_fortran_chaos.sh: a Fortran application under random
# SIGKILLs. tests/fortran/f_adi (a NAS-BT-like ADI solver: pipelined
# tridiagonal line solves across a 3 x 3 process grid, halo exchanges
# with a strided datatype, reductions; it checks its answer against the
# exact one itself) on 9 ranks:
#
#   reference       failure-free run: exit 0, the exact answer matched,
#                   and the same output as the 1-rank run (its checksums
#                   computed on one rank)
#   chaos/SEED      --chaos (MTBF a third of the reference's wall time,
#                   at most 4 kills): the failure-free output byte for
#                   byte, exit 0; over the seeds, kills > 0
#   ckpt/SEED       the same with --ckpt-interval 0.3 (when CRIU works
#                   here): over the seeds, checkpoints > 0 and a restart
#                   from a checkpoint
#   short/PROG/SEED the other Fortran test programs (f_p2p, f_coll_mpif, f_more,
#                   f_misc, f08_basic: requests, Waitany, user ops,
#                   handles made and freed, re-executed after a kill) on
#                   4 ranks under --chaos 15ms: the failure-free output;
#                   over them all, kills > 0
#
# tests/run.sh runs it in both protocols (FLT_PROTOCOL=relay the second
# time). Exit 77 when gfortran was missing at build time.
#
#   MPIV_BUILD=build-x bash tests/fault/test_fortran_chaos.sh
#   FLT_SEEDS="1 2 3" FLT_KEEP=1 ...   (narrow / debug)
. "$(dirname "$0")/common.bash"

flt_need_chaos
[ -x "$FLT_B/bin/mpifort" ] ||
	flt_skip "no gfortran at build time: $FLT_B/bin/mpifort not built, nor the Fortran tests"
BIN=$FLT_B/tests/fortran/f_adi
if [ ! -x "$BIN" ]; then
	flt_notok "$BIN not built (make tests-build)"
	flt_finish
fi

SEEDS=${FLT_SEEDS:-"4 9"}
NP=9
# about 2-3 s failure-free on 2 loaded cores (9 ranks): a direct job's
# messages are about 4x faster than the relay's
STEPS=1000
[ "${FLT_PROTOCOL:-direct}" = relay ] && STEPS=300

ref=$FLT_TMP/ref
flt_job "$ref" 60 -n "$NP" "$BIN" "$STEPS"
if [ "$FLT_RC" != 0 ] || ! grep -q 'matches the exact answer' "$ref.out"; then
	flt_notok "reference: f_adi -n $NP $STEPS exits $FLT_RC" "$ref.err" "$ref.out"
	flt_finish
fi
flt_ok "reference: f_adi -n $NP $STEPS matches the exact answer"
one=$FLT_TMP/one
flt_job "$one" 60 -n 1 "$BIN" "$STEPS"
flt_same "f_adi -n $NP prints what the 1-rank run prints" "$one.out" "$ref.out"

wall=$(flt_report "$ref.json" wall_s)
ms=$(awk -v w="${wall:-1}" 'BEGIN { printf "%d", w * 1000 }')
mtbf=$(( ms / 3 )); [ "$mtbf" -lt 60 ] && mtbf=60
limit=$(( ms * 12 / 1000 + 40 ))
echo "# f_adi -n $NP $STEPS: failure-free ${ms} ms; --chaos ${mtbf}ms"

CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
ckpt=1
if ! timeout 60 "$CRIU" check > /dev/null 2>&1; then
	echo "# $CRIU check fails: no checkpoints here, the ckpt/* runs are skipped"
	ckpt=0
fi

# run LABEL SEED [mpiv run args]: one chaos run, checked against ref.
# Adds to KILLS, CKPTS and FROM (restarts from a checkpoint).
KILLS=0 CKPTS=0 FROM=0
run() {
	local label=$1 seed=$2 out k r c f what
	shift 2
	out=$FLT_TMP/$label.$seed
	what="$label/$seed (--chaos ${mtbf}ms --chaos-max 4 $*)"
	flt_job "$out" "$limit" -n "$NP" --chaos "${mtbf}ms" --chaos-seed "$seed" \
		--chaos-max 4 "$@" "$BIN" "$STEPS"
	k=$(flt_report "$out.json" kills) r=$(flt_report "$out.json" restarts)
	c=$(flt_report "$out.json" checkpoints)
	f=$(jq '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$out.json" 2> /dev/null)
	echo "# $what: exit $FLT_RC, kills ${k:-?} restarts ${r:-?} checkpoints ${c:-0} from a checkpoint ${f:-0}"
	KILLS=$((KILLS + ${k:-0})) CKPTS=$((CKPTS + ${c:-0})) FROM=$((FROM + ${f:-0}))
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "$what: exit $FLT_RC" "$out.err" "$out.out"
		return
	fi
	if grep -q '^FAIL' "$out.err"; then
		flt_notok "$what: the program's check failed" "$out.err"
		return
	fi
	flt_same "$what" "$ref.out" "$out.out"
}

for seed in $SEEDS; do
	run chaos "$seed"
done
if [ "$KILLS" -gt 0 ]; then
	flt_ok "chaos: $KILLS kills over seeds $SEEDS"
else
	flt_notok "chaos: no kill happened over seeds $SEEDS (tests nothing)"
fi

# The short programs (tens of ms): a tiny MTBF, kills counted over all.
KILLS=0
for p in f_p2p f_coll_mpif f_misc f08_basic f_more; do
	bin=$FLT_B/tests/fortran/$p
	if [ ! -x "$bin" ]; then
		flt_notok "tests/fortran/$p not built (make tests-build)"
		continue
	fi
	pref=$FLT_TMP/$p.ref
	flt_job "$pref" 60 -n 4 "$bin"
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "short/$p: failure-free run exits $FLT_RC" "$pref.err"
		continue
	fi
	for seed in $SEEDS; do
		out=$FLT_TMP/$p.$seed
		flt_job "$out" 60 -n 4 --chaos 15ms --chaos-seed "$seed" --chaos-max 3 "$bin"
		k=$(flt_report "$out.json" kills)
		KILLS=$((KILLS + ${k:-0}))
		what="short/$p/$seed (--chaos 15ms --chaos-max 3, kills ${k:-?})"
		if [ "$FLT_RC" != 0 ]; then
			flt_notok "$what: exit $FLT_RC" "$out.err"
		else
			flt_same "$what" "$pref.out" "$out.out"
		fi
	done
done
if [ "$KILLS" -gt 0 ]; then
	flt_ok "short: $KILLS kills over the short programs"
else
	flt_notok "short: no kill happened in the short programs (tests nothing)"
fi

if [ "$ckpt" = 1 ]; then
	KILLS=0 CKPTS=0 FROM=0
	for seed in $SEEDS; do
		run ckpt "$seed" --ckpt-interval 0.3
	done
	if [ "$KILLS" -gt 0 ] && [ "$CKPTS" -gt 0 ] && [ "$FROM" -gt 0 ]; then
		flt_ok "ckpt: $KILLS kills, $CKPTS checkpoints, $FROM restarts from a checkpoint"
	else
		flt_notok "ckpt: $KILLS kills, $CKPTS checkpoints, $FROM restarts from a checkpoint (each must be > 0)"
	fi
fi
flt_finish
