#!/usr/bin/env bash
# tests/integration/test_coll_force.sh: MPIV_COLL forces the collective
# algorithms (docs/COLLECTIVES.md) whatever the size; tests/mpi/coll_algos
# must print the same line as without it (its expected.txt line, from Open
# MPI) in both protocols, at a rank count that is a power of two and one
# that is not. Forced algorithms run at sizes they are never picked for by
# default: the ring and scatter + allgather on a few bytes (empty chunks),
# the trees on large data; the linear Allreduce also for the
# non-commutative op. The multicast algorithms (one frame per CM in the
# relay, sends one by one in direct) also at 16 KiB and more, and in
# relay jobs with 2 CMs too (a frame to each); Allgatherv's two (on
# tests/mpi/coll_alltoall) in both protocols. A malformed MPIV_COLL is
# ignored.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init coll-force
PROG=$B/tests/mpi/coll_algos
[ -x "$PROG" ] || { notok "$PROG not built"; exit 1; }

SETS=(
	"allreduce:ring,bcast:scatter_allgather,reduce:reduce_scatter_gather,reduce_scatter:ring,allgather:bruck,alltoall:linear"
	"allreduce:rabenseifner"
	"allreduce:linear"
	"allreduce:recursive_doubling,bcast:binomial,reduce:binomial,reduce_scatter:reduce_scatterv,allgather:ring,alltoall:pairwise,barrier:dissemination,gather:binomial,scatter:binomial"
	"allreduce:multicast,bcast:multicast,allgather:multicast,barrier:multicast,reduce:linear,gather:linear,scatter:linear"
)
run_one() {	# run_one LABEL N PROTOCOL MPIV_COLL [mpiv run options]
	local label=$1 n=$2 p=$3 coll=$4 want prog=${PROG_ONE:-$PROG}
	shift 4
	want=$(sed -n "s/^${prog##*/} $n: //p" tests/mpi/expected.txt)
	MPIV_COLL=$coll timeout 120 "$MPIV" run -n "$n" --protocol "$p" --timeout 90 \
	    "$@" "$prog" > "$T/out" 2> "$T/err"
	local rc=$?
	if [ "$rc" = 0 ] && [ -n "$want" ] && [ "$(cat "$T/out")" = "$want" ]; then
		ok "$label n=$n $p"
	else
		notok "$label n=$n $p: exit $rc, want \"$want\"" "$T/out" "$T/err"
	fi
}
for i in "${!SETS[@]}"; do
	for p in direct relay; do
		for n in 3 8; do
			run_one "MPIV_COLL set $i" "$n" "$p" "${SETS[i]}"
		done
	done
done
run_one "MPIV_COLL set 4, 2 CMs" 8 relay "${SETS[4]}" --cms 2
# Allgatherv (tests/mpi/coll_alltoall: uneven blocks with gaps, in place)
for p in direct relay; do
	PROG_ONE=$B/tests/mpi/coll_alltoall run_one "allgatherv:multicast" 7 "$p" allgatherv:multicast
	PROG_ONE=$B/tests/mpi/coll_alltoall run_one "allgatherv:ring" 7 "$p" allgatherv:ring
done
run_one "malformed MPIV_COLL ignored" 5 direct "allreduce:nope,,bcast,:ring,reduce:binomialx,zzz:ring"
[ "$fail" = 0 ]
