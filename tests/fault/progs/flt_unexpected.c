/* flt_unexpected: large messages that arrive before their receives.
 *   flt_unexpected [ROUNDS=20] [MSGS=8] [KIB=256]
 * Each round every rank sends MSGS messages of KIB KiB (tags 0..MSGS-1,
 * contents from the round, the sender and the tag) to the next rank,
 * then waits at a Barrier, so they all arrive before any receive is
 * posted; then it receives them from the previous rank in reverse tag
 * order (MPI_Probe on the last tag first for its size, then Recv; the
 * others with MPI_ANY_SOURCE, and one of them into a vector type), checks
 * every word and folds them into its state. In direct jobs with a small
 * MPIV_UNEXPECTED_MAX most of them are read past and pulled from the
 * sender's log when received. Rank 0 prints its state every round and at
 * the end every rank's state in rank order. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 20), msgs = flt_arg(argc, argv, 2, 8);
	long kib = flt_arg(argc, argv, 3, 256);
	size_t n = (size_t)kib * 1024 / sizeof(uint64_t);
	uint64_t *out = malloc(n * sizeof(*out) * (size_t)msgs), *in = malloc(2 * n * sizeof(*in));
	uint64_t st = (uint64_t)me + 1;
	MPI_Request *rq = malloc(sizeof(*rq) * (size_t)msgs);
	MPI_Datatype vec;
	int next = (me + 1) % np, prev = (me + np - 1) % np;
	FLT_ASSERT(out != NULL && in != NULL && rq != NULL, "out of memory");
	/* every other word of a buffer twice the size */
	FLT_MPI(MPI_Type_vector((int)n, 1, 2, MPI_UINT64_T, &vec));
	FLT_MPI(MPI_Type_commit(&vec));
	for (long r = 1; r <= rounds; r++) {
		for (long t = 0; t < msgs; t++) {
			uint64_t *o = out + (size_t)t * n;
			for (size_t i = 0; i < n; i++)
				o[i] = flt_mix((uint64_t)(r * 1000 + me * 100 + t), i);
			FLT_MPI(MPI_Isend(o, (int)n, MPI_UINT64_T, next, (int)t, MPI_COMM_WORLD, &rq[t]));
		}
		FLT_MPI(MPI_Waitall((int)msgs, rq, MPI_STATUSES_IGNORE));
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
		for (long t = msgs - 1; t >= 0; t--) {
			MPI_Status s;
			int cnt = 0;
			int strided = t == msgs / 2;
			if (t == msgs - 1) {
				FLT_MPI(MPI_Probe(prev, (int)t, MPI_COMM_WORLD, &s));
				FLT_MPI(MPI_Get_count(&s, MPI_UINT64_T, &cnt));
				FLT_ASSERT((size_t)cnt == n, "probe of tag %ld: %d words, want %zu", t, cnt, n);
			}
			if (strided)
				FLT_MPI(MPI_Recv(in, 1, vec, prev, (int)t, MPI_COMM_WORLD, &s));
			else
				FLT_MPI(MPI_Recv(in, (int)n, MPI_UINT64_T, MPI_ANY_SOURCE, (int)t, MPI_COMM_WORLD, &s));
			FLT_ASSERT(s.MPI_SOURCE == prev, "tag %ld from %d", t, s.MPI_SOURCE);
			for (size_t i = 0; i < n; i++) {
				uint64_t want = flt_mix((uint64_t)(r * 1000 + prev * 100 + t), i);
				uint64_t got = strided ? in[2 * i] : in[i];
				FLT_ASSERT(got == want, "round %ld tag %ld word %zu: %016llx, want %016llx",
				    r, t, i, (unsigned long long)got, (unsigned long long)want);
			}
			st = flt_mix(st, (strided ? in[2 * (n - 1)] : in[n - 1]) ^ (uint64_t)t);
		}
		if (me == 0)
			FLT_SAY("unexpected: round %ld state %016llx\n", r, (unsigned long long)st);
	}
	uint64_t *all = malloc(sizeof(uint64_t) * (size_t)np);
	FLT_ASSERT(all != NULL, "out of memory");
	FLT_MPI(MPI_Gather(&st, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
	if (me == 0)
		for (int q = 0; q < np; q++)
			FLT_SAY("unexpected: rank %d final %016llx\n", q, (unsigned long long)all[q]);
	FLT_MPI(MPI_Type_free(&vec));
	FLT_MPI(MPI_Finalize());
	return 0;
}
