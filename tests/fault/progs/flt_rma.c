/* flt_rma: one-sided communication under kills.
 *   flt_rma [ITERS=300] [WORK=2000] [MODE=0]
 * MODE 0: fence epochs; every rank accumulates doubles of very different
 * magnitudes into one target (rotating), so the bits of the sum depend on
 * the order the target applies them in; fetch-and-adds a counter at rank
 * 0 (the fetched values depend on that order too); puts a stamp into its
 * right neighbour and gets one from its left.
 * MODE 1: post/start/complete/wait between ring neighbours, every rank
 * origin and target at once, with accumulates, puts and gets.
 * MODE 2: passive target. Each iteration every rank takes a ticket from
 * the counter of rank it % N (MPI_Fetch_and_op under a shared lock) and
 * adds me+1 to its right neighbour's stamp by a read, a flush and a
 * write under an exclusive lock; then polls its own window with
 * MPI_Win_sync until the left neighbour's add of this iteration is in
 * (that neighbour may be further on already).
 * The order the targets serve their origins in depends on timing, so
 * this mode prints only what does not: at the end every target's tickets
 * must be exactly 0..k-1 (none twice, none lost: a re-executed target
 * that served otherwise than its failed incarnation would break it) and
 * every stamp the sum of its neighbour's adds.
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
	long *tickets = calloc((size_t)iters + 1, sizeof(long));
	FLT_ASSERT(tickets != NULL, "out of memory");
	if (mode == 2)
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
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
		} else if (mode == 2) {
			long cur = -1, want = it * (left + 1), inc = 1;
			FLT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
			FLT_MPI(MPI_Fetch_and_op(&inc, &fetched, MPI_LONG, target, offsetof(struct wmem, counter), MPI_SUM, win));
			FLT_MPI(MPI_Win_unlock(target, win));
			tickets[it] = fetched;
			FLT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
			FLT_MPI(MPI_Get(&cur, 1, MPI_LONG, right, offsetof(struct wmem, stamp), 1, MPI_LONG, win));
			FLT_MPI(MPI_Win_flush(right, win));
			cur += me + 1;
			FLT_MPI(MPI_Put(&cur, 1, MPI_LONG, right, offsetof(struct wmem, stamp), 1, MPI_LONG, win));
			FLT_MPI(MPI_Win_unlock(right, win));
			for (;;) {
				FLT_MPI(MPI_Win_sync(win));
				if (*(volatile long *)&w->stamp >= want)
					break;
			}
			fetched = got = 0;	/* order-dependent: not in the hash */
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
		if (mode != 2)
			h = flt_mix(h, (uint64_t)w->counter);
		if (me == 0 && it % every == 0 && mode == 2)
			FLT_SAY("rma: iter %ld stamp at least %ld hash %016llx\n", it,
			    it * (left + 1), (unsigned long long)h);
		else if (me == 0 && it % every == 0)
			FLT_SAY("rma: iter %ld acc0 %a counter %ld fetched %ld hash %016llx\n", it,
			    w->acc[0], w->counter, fetched, (unsigned long long)h);
	}
	if (mode == 0)
		FLT_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	if (mode == 2) {
		/* every target's tickets, from every origin: 0..k-1 once each */
		long *all_t = me == 0 ? malloc(sizeof(long) * (size_t)(iters + 1) * (size_t)np) : NULL;
		FLT_MPI(MPI_Gather(tickets, (int)iters + 1, MPI_LONG, all_t, (int)iters + 1, MPI_LONG, 0, MPI_COMM_WORLD));
		if (me == 0) {
			for (int t = 0; t < np; t++) {
				long k = 0;
				char *seen;
				for (long it = 1; it <= iters; it++)
					k += it % np == t;
				k *= np;
				seen = calloc((size_t)k + 1, 1);
				for (int o = 0; o < np; o++)
					for (long it = 1; it <= iters; it++) {
						long v;
						if (it % np != t)
							continue;
						v = all_t[(size_t)o * (size_t)(iters + 1) + (size_t)it];
						FLT_ASSERT(v >= 0 && v < k && !seen[v],
						    "target %d: ticket %ld (of %ld) twice or out of range", t, v, k);
						seen[v] = 1;
					}
				free(seen);
			}
			FLT_SAY("rma: tickets of %d targets each given once\n", np);
			free(all_t);
		}
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
		FLT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
		FLT_ASSERT(w->stamp == iters * (left + 1), "stamp %ld, want %ld", w->stamp, iters * (left + 1));
		long k = 0;
		for (long it = 1; it <= iters; it++)
			k += it % np == me;
		FLT_ASSERT(w->counter == k * np, "counter %ld, want %ld", w->counter, k * np);
		h = flt_mix(h, (uint64_t)w->counter);
		h = flt_mix(h, (uint64_t)w->stamp);
		FLT_MPI(MPI_Win_unlock(me, win));
	}
	free(tickets);
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
