/* flt_rma: one-sided communication under kills.
 *   flt_rma [ITERS=300] [WORK=2000] [MODE=0]
 * MODE 0: fence epochs; every rank accumulates doubles of very different
 * magnitudes into one target (rotating), so the bits of the sum depend on
 * the order the target applies them in; fetch-and-adds a counter at rank
 * 0 (the fetched values depend on that order too); puts a stamp into its
 * right neighbour and gets one from its left.
 * MODE 1: post/start/complete/wait between ring neighbours, every rank
 * origin and target at once, with accumulates, puts and gets.
 * Rank 0 prints the window state and what it fetched every ITERS/10
 * iterations: a re-executed rank must rebuild the same bits, and the
 * others must see the same answers, for the output to equal the
 * failure-free run's. */
#include "flt.h"

#define NA 4

struct wmem {
	double acc[NA];
	long counter;
	long stamp;
	uint64_t pad;
};

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long iters = flt_arg(argc, argv, 1, 300), work = flt_arg(argc, argv, 2, 2000);
	long mode = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	int right = (me + 1) % np, left = (me + np - 1) % np;
	long every = iters / 10 > 0 ? iters / 10 : 1;
	struct wmem *w;
	MPI_Win win;
	FLT_MPI(MPI_Win_allocate(sizeof(*w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
	memset(w, 0, sizeof(*w));
	MPI_Group world, nb;
	FLT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
	int pair[2] = { left < right ? left : right, left < right ? right : left };
	FLT_MPI(MPI_Group_incl(world, left == right ? 1 : 2, pair, &nb));
	uint64_t h = 99;
	if (mode == 0)
		FLT_MPI(MPI_Win_fence(0, win));
	for (long it = 1; it <= iters; it++) {
		int target = (int)(it % np);
		double v[NA];
		uint64_t r = flt_burn((uint64_t)it * 131 + (uint64_t)me, work);
		for (int i = 0; i < NA; i++)
			v[i] = (double)(r >> 40) * (me % 2 ? 1e-7 : 1e9) / (i + 3);
		long one = me + 1, fetched = -1, got = -1, stamp = it * 1000 + me;
		if (mode == 0) {
			FLT_MPI(MPI_Accumulate(v, NA, MPI_DOUBLE, target, 0, NA, MPI_DOUBLE, MPI_SUM, win));
			FLT_MPI(MPI_Fetch_and_op(&one, &fetched, MPI_LONG, 0, offsetof(struct wmem, counter), MPI_SUM, win));
			FLT_MPI(MPI_Put(&stamp, 1, MPI_LONG, right, offsetof(struct wmem, stamp), 1, MPI_LONG, win));
			FLT_MPI(MPI_Win_fence(0, win));
			FLT_ASSERT(w->stamp == (it * 1000 + left), "stamp %ld", w->stamp);
			FLT_MPI(MPI_Get(&got, 1, MPI_LONG, left, offsetof(struct wmem, stamp), 1, MPI_LONG, win));
			FLT_MPI(MPI_Win_fence(0, win));
			FLT_ASSERT(got == it * 1000 + (left + np - 1) % np, "got %ld", got);
		} else {
			FLT_MPI(MPI_Win_post(nb, 0, win));
			FLT_MPI(MPI_Win_start(nb, 0, win));
			FLT_MPI(MPI_Accumulate(v, NA, MPI_DOUBLE, right, 0, NA, MPI_DOUBLE, MPI_SUM, win));
			FLT_MPI(MPI_Accumulate(v, NA, MPI_DOUBLE, left, 0, NA, MPI_DOUBLE, MPI_SUM, win));
			FLT_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG, &fetched, 1, MPI_LONG, right, offsetof(struct wmem, counter), 1, MPI_LONG, MPI_SUM, win));
			FLT_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG, &got, 1, MPI_LONG, left, offsetof(struct wmem, counter), 1, MPI_LONG, MPI_SUM, win));
			FLT_MPI(MPI_Win_complete(win));
			FLT_MPI(MPI_Win_wait(win));
		}
		h = flt_mix(h, (uint64_t)fetched);
		h = flt_mix(h, (uint64_t)got);
		for (int i = 0; i < NA; i++) {
			uint64_t bits;
			memcpy(&bits, &w->acc[i], sizeof(bits));
			h = flt_mix(h, bits);
		}
		h = flt_mix(h, (uint64_t)w->counter);
		if (me == 0 && it % every == 0)
			FLT_SAY("rma: iter %ld acc0 %a counter %ld fetched %ld hash %016llx\n", it,
			    w->acc[0], w->counter, fetched, (unsigned long long)h);
	}
	if (mode == 0)
		FLT_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	uint64_t all = 0;
	FLT_MPI(MPI_Reduce(&h, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD));
	if (me == 0)
		FLT_SAY("rma: done %ld iterations, hash %016llx\n", iters, (unsigned long long)all);
	FLT_MPI(MPI_Group_free(&nb));
	FLT_MPI(MPI_Group_free(&world));
	FLT_MPI(MPI_Win_free(&win));
	FLT_MPI(MPI_Finalize());
	return 0;
}
