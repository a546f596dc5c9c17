/* flt_split: communicators created and freed under fault injection.
 *   flt_split [ROUNDS=200]
 * Each round: Comm_split by a round-dependent colour (and reversed key),
 * Allreduce and a ring Sendrecv inside the new communicator, Comm_dup of
 * it with a Bcast, then both freed. Checks sizes, ranks and values; rank 0
 * prints a digest every ROUNDS/5 rounds. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 200);
	uint64_t h = 0;
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	for (long r = 1; r <= rounds; r++) {
		int ncol = (int)(r % 3) + 1;
		int colour = me % ncol;
		MPI_Comm sub, dup;
		FLT_MPI(MPI_Comm_split(MPI_COMM_WORLD, colour, np - me, &sub));
		int sr, ss;
		FLT_MPI(MPI_Comm_rank(sub, &sr));
		FLT_MPI(MPI_Comm_size(sub, &ss));
		int want_size = 0, want_rank = 0;
		for (int q = 0; q < np; q++)
			if (q % ncol == colour) {
				want_size++;
				if (q > me)
					want_rank++;	/* key np-q: higher world rank first */
			}
		FLT_ASSERT(ss == want_size && sr == want_rank, "round %ld: sub rank %d/%d, want %d/%d",
		    r, sr, ss, want_rank, want_size);
		long v = me + r, sum = 0;
		FLT_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, sub));
		long want_sum = 0;
		for (int q = 0; q < np; q++)
			if (q % ncol == colour)
				want_sum += q + r;
		FLT_ASSERT(sum == want_sum, "round %ld: sub sum %ld want %ld", r, sum, want_sum);
		long got = -1;
		FLT_MPI(MPI_Sendrecv(&v, 1, MPI_LONG, (sr + 1) % ss, 5, &got, 1, MPI_LONG,
		    (sr + ss - 1) % ss, 5, sub, MPI_STATUS_IGNORE));
		FLT_MPI(MPI_Comm_dup(sub, &dup));
		long b = sr == 0 ? sum * 3 + r : -1;
		FLT_MPI(MPI_Bcast(&b, 1, MPI_LONG, 0, dup));
		FLT_ASSERT(b == sum * 3 + r, "round %ld: dup bcast %ld", r, b);
		FLT_MPI(MPI_Comm_free(&dup));
		FLT_MPI(MPI_Comm_free(&sub));
		h = flt_mix(h, (uint64_t)(sum * 31 + got));
		if (r % every == 0) {
			uint64_t all = 0;
			FLT_MPI(MPI_Reduce(&h, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD));
			if (me == 0)
				FLT_SAY("split: round %ld digest %016llx\n", r, (unsigned long long)all);
		}
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
