/* flt_bigring: big messages around a ring, for the log memory cap.
 *   flt_bigring [ROUNDS=200] [KIB=1024] [ONEWAY=0]
 * Each round every rank sends KIB KiB to the next rank and receives as
 * much from the previous one (Sendrecv), folds the payload into its
 * state and rewrites it. Without checkpoints the CM's log grows by
 * ROUNDS * ranks * KIB KiB; rank 0 prints its state every ROUNDS/10
 * rounds and at the end every rank's state in rank order. ONEWAY=1: rank
 * 0 only sends (Send) and rank 1 only receives (Recv), so rank 1 logs
 * nothing for rank 0 and rank 0 is never asked for a checkpoint; the
 * other ranks only take part in the final Gather. ONEWAY=2: the same
 * with MPI_Ssend. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 200), kib = flt_arg(argc, argv, 2, 1024);
	size_t n = (size_t)kib * 1024 / sizeof(uint64_t);
	uint64_t *out = malloc(n * sizeof(*out)), *in = malloc(n * sizeof(*in)), st = (uint64_t)me + 1;
	int next = (me + 1) % np, prev = (me + np - 1) % np;
	long every = rounds / 10 > 0 ? rounds / 10 : 1;
	FLT_ASSERT(out != NULL && in != NULL, "out of memory");
	for (size_t i = 0; i < n; i++)
		out[i] = flt_mix(st, i);
	long oneway = flt_arg(argc, argv, 3, 0);
	for (long r = 1; r <= rounds; r++) {
		if (oneway && me > 1)
			break;
		if (oneway == 2 && me == 0)
			FLT_MPI(MPI_Ssend(out, (int)n, MPI_UINT64_T, 1, 7, MPI_COMM_WORLD));
		else if (oneway && me == 0)
			FLT_MPI(MPI_Send(out, (int)n, MPI_UINT64_T, 1, 7, MPI_COMM_WORLD));
		else if (oneway)
			FLT_MPI(MPI_Recv(in, (int)n, MPI_UINT64_T, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		else
			FLT_MPI(MPI_Sendrecv(out, (int)n, MPI_UINT64_T, next, 7, in, (int)n, MPI_UINT64_T,
			    prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		if (oneway && me == 0)
			for (size_t i = 0; i < n; i++)	/* what rank 1 would fold */
				in[i] = out[i];
		st = flt_mix(st, in[(size_t)r % n] ^ in[n - 1]);
		for (size_t i = 0; i < n; i += 512)
			out[i] = flt_mix(in[i], st);
		out[n - 1] = st;
		if (me == 0 && r % every == 0)
			FLT_SAY("bigring: round %ld state %016llx\n", r, (unsigned long long)st);
	}
	uint64_t *all = malloc(sizeof(uint64_t) * (size_t)np);
	FLT_ASSERT(all != NULL, "out of memory");
	FLT_MPI(MPI_Gather(&st, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
	if (me == 0)
		for (int q = 0; q < np; q++)
			FLT_SAY("bigring: rank %d final %016llx\n", q, (unsigned long long)all[q]);
	FLT_MPI(MPI_Finalize());
	return 0;
}
