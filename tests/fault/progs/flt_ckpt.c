/* flt_ckpt: a program whose memory image matters, for the checkpoint
 * fault tests (tests/fault/test_ckpt_chaos.sh).
 *   flt_ckpt [STEPS=4000] [BALLAST_MB=1] [WORK=2000]
 * Each rank fills BALLAST_MB MiB with pseudo-random (incompressible)
 * words: its checkpoint image is at least that big, so the dump and the
 * upload take long enough to be interrupted. Each step it burns WORK
 * mixing rounds, folds one ballast word into its state and rewrites that
 * word, and passes its state around the ring (Sendrecv). Every 20 steps
 * rank 0 collects every rank's state with Irecv(ANY_SOURCE) + Waitany (a
 * non-deterministic outcome, logged) and an Allreduce checks the sum.
 * Rank 0 prints a line every STEPS/10 steps; at the end every rank hashes
 * its whole ballast and rank 0 prints the hashes in rank order. A restore
 * that lost or corrupted any memory prints different numbers. Steps are
 * slowed while FLT_HOLD names an existing file (flt.h). */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long steps = flt_arg(argc, argv, 1, 4000), mb = flt_arg(argc, argv, 2, 1);
	long work = flt_arg(argc, argv, 3, 2000);
	size_t nw = (size_t)mb << 17;	/* 8-byte words in mb MiB */
	uint64_t *ball = malloc(nw * sizeof(uint64_t));
	FLT_ASSERT(ball != NULL, "malloc %ld MiB", mb);
	for (size_t i = 0; i < nw; i++)
		ball[i] = flt_mix((uint64_t)me * 0x100000001ULL, i);
	uint64_t st = flt_mix(0xc0ffee, (uint64_t)me);
	int right = (me + 1) % np, left = (me + np - 1) % np;
	long every = steps / 10 > 0 ? steps / 10 : 1;
	uint64_t *all = malloc(sizeof(uint64_t) * (size_t)np);
	MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)np);
	FLT_ASSERT(all != NULL && rq != NULL, "malloc");
	for (long s = 1; s <= steps; s++) {
		size_t w = (size_t)s * 7919u % nw;
		flt_hold();
		st = flt_mix(flt_burn(st, work), ball[w]);
		ball[w] = flt_mix(st, (uint64_t)s);
		uint64_t in;
		FLT_MPI(MPI_Sendrecv(&st, 1, MPI_UINT64_T, right, 1, &in, 1,
		    MPI_UINT64_T, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		st = flt_mix(st, in);
		if (s % 20 != 0)
			continue;
		uint64_t sum = 0, red;
		if (me == 0) {
			for (int r = 1; r < np; r++)
				FLT_MPI(MPI_Irecv(&all[r], 1, MPI_UINT64_T, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &rq[r - 1]));
			for (int k = 1; k < np; k++) {
				int idx;
				FLT_MPI(MPI_Waitany(np - 1, rq, &idx, MPI_STATUS_IGNORE));
				FLT_ASSERT(idx >= 0 && idx < np - 1, "Waitany index %d", idx);
			}
			sum = st;
			for (int r = 1; r < np; r++)
				sum += all[r];
		} else {
			FLT_MPI(MPI_Send(&st, 1, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD));
		}
		FLT_MPI(MPI_Allreduce(&st, &red, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
		FLT_ASSERT(me != 0 || red == sum, "step %ld: Allreduce %llx, gathered %llx", s,
		    (unsigned long long)red, (unsigned long long)sum);
		if (me == 0 && s % every == 0)
			FLT_SAY("ckpt: step %ld sum %016llx\n", s, (unsigned long long)red);
	}
	uint64_t h = st;
	for (size_t i = 0; i < nw; i++)
		h = flt_mix(h, ball[i]);
	FLT_MPI(MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
	if (me == 0)
		for (int r = 0; r < np; r++)
			FLT_SAY("ckpt: rank %d memory %016llx\n", r, (unsigned long long)all[r]);
	free(rq);
	free(all);
	free(ball);
	FLT_MPI(MPI_Finalize());
	return 0;
}
