/*
 * rma.c: passive-target one-sided communication, every rank an origin:
 *   fop_lock    MPI_Win_lock(SHARED, 0), MPI_Fetch_and_op on a counter
 *               at rank 0, MPI_Win_unlock: one passive epoch a call,
 *               every rank on the same target (a shared counter)
 *   fop_flush   the same in one MPI_Win_lock_all epoch: Fetch_and_op
 *               and MPI_Win_flush(0) a call
 *   put8_flush  under MPI_Win_lock_all, an 8 B MPI_Put into the right
 *               neighbour and MPI_Win_flush (each rank also a target)
 *   get64k      under MPI_Win_lock_all, a 64 KiB MPI_Get from the right
 *               neighbour and MPI_Win_flush (bytes per call: 64 KiB)
 * Targets serve inside their own MPI calls (here: their own flushes and
 * unlocks). For each case: warm-up calls, then R repetitions of `iters`
 * calls; the time of a repetition is the slowest rank's; rank 0 reports
 * the median in µs per call. The counter's final value and the data
 * read are checked.
 *
 *   rma [--quick] [--reps R] [--scale F]
 *
 * Output (rank 0):
 *   RESULT rma op=<fop_lock|fop_flush|put8_flush|get64k> n=<N> bytes=<B> iters=<I> reps=<R> call_us=<median> call_min=<..> call_max=<..>
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BIG	(64 << 10)

enum op { FOP_LOCK, FOP_FLUSH, PUT8_FLUSH, GET64K };
static const char *const names[] = { "fop_lock", "fop_flush", "put8_flush",
	"get64k" };
static const struct { enum op op; int iters; } cases[] = {
	{ FOP_LOCK, 1000 },
	{ FOP_FLUSH, 1000 },
	{ PUT8_FLUSH, 1000 },
	{ GET64K, 200 },
};

int main(int argc, char **argv)
{
	int rank, size, reps, errors = 0;
	double scale;
	MPI_Win win;
	unsigned char *mem, *buf;
	long one = 1, got;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bench_opts(argc, argv, 0.2, &reps, &scale);
	double *t = calloc(reps, sizeof *t);
	buf = calloc(1, BIG);
	if (t == NULL || buf == NULL || MPI_Win_allocate(BIG + 64, 1,
	    MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win) != MPI_SUCCESS) {
		printf("ERROR rma cannot allocate the window\n");
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
	memset(mem, rank + 1, BIG + 64);
	memset(mem, 0, 8);
	MPI_Win_unlock(rank, win);
	MPI_Barrier(MPI_COMM_WORLD);
	int right = (rank + 1) % size;
	long calls = 0;

	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		enum op op = cases[c].op;
		int iters = (int)(cases[c].iters * scale);
		if (iters < 2)
			iters = 2;
		int warm = iters / 10 + 1;

		MPI_Barrier(MPI_COMM_WORLD);
		if (op != FOP_LOCK)
			MPI_Win_lock_all(0, win);
		for (int r = -1; r < reps; r++) {
			int n = r < 0 ? warm : iters;

			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int i = 0; i < n; i++) {
				switch (op) {
				case FOP_LOCK:
					MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
					MPI_Fetch_and_op(&one, &got, MPI_LONG, 0,
					    0, MPI_SUM, win);
					MPI_Win_unlock(0, win);
					calls++;
					break;
				case FOP_FLUSH:
					MPI_Fetch_and_op(&one, &got, MPI_LONG, 0,
					    0, MPI_SUM, win);
					MPI_Win_flush(0, win);
					calls++;
					break;
				case PUT8_FLUSH:
					MPI_Put(&one, 1, MPI_LONG, right,
					    16 + 8 * (rank % 4), 1, MPI_LONG, win);
					MPI_Win_flush(right, win);
					break;
				case GET64K:
					buf[100] = 0;
					MPI_Get(buf, BIG, MPI_BYTE, right, 64, BIG,
					    MPI_BYTE, win);
					MPI_Win_flush(right, win);
					errors += i == 0 &&
					    buf[100] != (unsigned char)(right + 1);
					break;
				}
			}
			if (r >= 0)
				t[r] = bench_slowest_us(MPI_Wtime() - t0, iters);
			else
				(void)bench_slowest_us(MPI_Wtime() - t0, n);
		}
		if (op != FOP_LOCK)
			MPI_Win_unlock_all(win);
		if (rank == 0) {
			double med = bench_median(t, reps);
			printf("RESULT rma op=%s n=%d bytes=%d iters=%d reps=%d "
			    "call_us=%.3f call_min=%.3f call_max=%.3f\n",
			    names[op], size, op == GET64K ? BIG : 8, iters,
			    reps, med, t[0], t[reps - 1]);
			fflush(stdout);
		}
	}
	/* every fetch-and-add is in the counter, once */
	long all = 0, counter = 0;
	MPI_Reduce(&calls, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		memcpy(&counter, mem, sizeof counter);
		MPI_Win_unlock(0, win);
		errors += counter != all;
	}
	int rc = bench_errors("rma", errors, rank);
	MPI_Win_free(&win);
	free(t);
	free(buf);
	MPI_Finalize();
	return rc;
}
