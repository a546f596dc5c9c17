/* rma_atomic: MPI_Fetch_and_op and MPI_Compare_and_swap under fences.
 * Every rank fetches-and-adds into a counter at rank 0 several times in
 * one epoch: the fetched values, gathered and sorted, must be exactly
 * 0, K, 2K ... (each add seen once, in some order). Every rank tries to
 * swap its rank into a slot holding -1: exactly one succeeds and the slot
 * holds the winner. MPI_Get_accumulate with MPI_SUM on doubles, MIN and
 * MAXLOC on MPI_DOUBLE_INT pairs. Only order-independent facts go into
 * the checksum. */
#include "mpitest.h"

#define ROUNDS 8
#define ADDS 3
#define K 5

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

struct dint { double v; int i; };

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_atomic");
	struct {
		long counter, slot;
		double dsum, dmin;
		struct dint loc;
	} *w;
	MPI_Win win;
	MPI_OK(MPI_Win_allocate(sizeof(*w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
	memset(w, 0, sizeof(*w));
	long *all = malloc(sizeof(long) * ADDS * (size_t)t_size);
	MPI_Aint o_counter = 0, o_slot = sizeof(long), o_dsum = 2 * sizeof(long),
	    o_dmin = o_dsum + sizeof(double), o_loc = o_dmin + sizeof(double);
	for (int r = 0; r < ROUNDS; r++) {
		if (t_rank == 0) {
			w->counter = 0;
			w->slot = -1;
			w->dsum = 0.5;
			w->dmin = 1e9;
			w->loc.v = -1.0;
			w->loc.i = -1;
		}
		MPI_OK(MPI_Win_fence(0, win));
		long add = K, got[ADDS], mine = t_rank, cmpv = -1, old;
		for (int a = 0; a < ADDS; a++)
			MPI_OK(MPI_Fetch_and_op(&add, &got[a], MPI_LONG, 0, o_counter, MPI_SUM, win));
		MPI_OK(MPI_Compare_and_swap(&mine, &cmpv, &old, MPI_LONG, 0, o_slot, win));
		double d = 0.25 * (t_rank + 1), dold, dv = 100.0 - r - t_rank;
		MPI_OK(MPI_Get_accumulate(&d, 1, MPI_DOUBLE, &dold, 1, MPI_DOUBLE, 0, o_dsum, 1, MPI_DOUBLE, MPI_SUM, win));
		MPI_OK(MPI_Accumulate(&dv, 1, MPI_DOUBLE, 0, o_dmin, 1, MPI_DOUBLE, MPI_MIN, win));
		struct dint p = { (double)((t_rank * 7 + r) % t_size), t_rank };
		MPI_OK(MPI_Accumulate(&p, 1, MPI_DOUBLE_INT, 0, o_loc, 1, MPI_DOUBLE_INT, MPI_MAXLOC, win));
		MPI_OK(MPI_Win_fence(0, win));
		/* fetched counters: a permutation of 0, K, ..., (ADDS*size-1)*K */
		MPI_OK(MPI_Gather(got, ADDS, MPI_LONG, all, ADDS, MPI_LONG, 0, MPI_COMM_WORLD));
		int won = old == -1, winners = 0;
		MPI_OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK_INT(winners, 1, "compare-and-swap winners");
		CHECK(old == -1 || (old >= 0 && old < t_size), "CAS old value %ld", old);
		CHECK(dold >= 0.5 && dold < 0.5 + 0.25 * t_size * (t_size + 1) / 2, "fetched sum %g", dold);
		if (t_rank == 0) {
			qsort(all, (size_t)ADDS * (size_t)t_size, sizeof(long), cmp_long);
			for (int i = 0; i < ADDS * t_size; i++)
				CHECK_INT(all[i], (long)i * K, "fetched counter values");
			CHECK_INT(w->counter, (long)ADDS * t_size * K, "counter");
			CHECK(w->slot >= 0 && w->slot < t_size, "slot holds a rank");
			CHECK(w->dsum == 0.5 + 0.25 * t_size * (t_size + 1) / 2, "double sum %g", w->dsum);
			CHECK(w->dmin == 100.0 - r - (t_size - 1), "min %g", w->dmin);
			double best = -1;
			int bi = -1;
			for (int q = 0; q < t_size; q++) {
				double v = (double)((q * 7 + r) % t_size);
				if (v > best) {
					best = v;
					bi = q;
				}
			}
			CHECK(w->loc.v == best && w->loc.i == bi, "maxloc (%g,%d) want (%g,%d)", w->loc.v, w->loc.i, best, bi);
			t_mix(all, sizeof(long) * ADDS * (size_t)t_size);
			t_mix(&w->counter, sizeof(long));
			t_mix(&w->dsum, sizeof(double));
			t_mix(&w->dmin, sizeof(double));
			t_mix(&w->loc.v, sizeof(double));
			t_mix(&w->loc.i, sizeof(int));
		}
		t_mix_int(winners);
		MPI_OK(MPI_Win_fence(0, win));
	}
	MPI_OK(MPI_Win_free(&win));
	free(all);
	return t_finish();
}
