/*
 * allreduce.c: MPI_Allreduce(MPI_SUM) of 1 double (8 B) and 8192 doubles
 * (64 KiB). For each size: warm-up calls, then R repetitions of `iters`
 * calls; the time of a repetition is the slowest rank's; rank 0 reports
 * the median over repetitions in µs per call. The first call of every
 * repetition is checked against the expected sum.
 *
 *   allreduce [--quick] [--reps R] [--scale F]
 *
 * Output (rank 0):
 *   RESULT allreduce n=<N> bytes=<B> iters=<I> reps=<R> call_us=<median> call_min=<..> call_max=<..>
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const struct { int count; int iters; } cases[] = {
	{ 1,	1000 },
	{ 8192,	 200 },
};

int main(int argc, char **argv)
{
	int rank, size, reps, errors = 0;
	double scale;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bench_opts(argc, argv, 0.2, &reps, &scale);

	double *in = malloc(8192 * sizeof *in), *out = malloc(8192 * sizeof *out);
	double *t = calloc(reps, sizeof *t);
	if (!in || !out || !t)
		MPI_Abort(MPI_COMM_WORLD, 3);

	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		int count = cases[c].count;
		int iters = (int)(cases[c].iters * scale);
		if (iters < 2)
			iters = 2;
		int warm = iters / 10 + 2;
		/* element i of rank r is r + i; the sum is N(N-1)/2 + N*i */
		for (int i = 0; i < count; i++)
			in[i] = rank + i;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warm; i++)
			MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		for (int r = 0; r < reps; r++) {
			memset(out, 0, count * sizeof *out);
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int i = 0; i < iters; i++) {
				MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
				if (i == 0)
					for (int k = 0; k < count; k++) {
						double want = size * (size - 1) / 2.0 + (double)size * k;
						if (fabs(out[k] - want) > 1e-9 * (1 + fabs(want))) {
							errors++;
							break;
						}
					}
			}
			t[r] = bench_slowest_us(MPI_Wtime() - t0, iters);
		}
		if (rank == 0) {
			double med = bench_median(t, reps);
			printf("RESULT allreduce n=%d bytes=%zu iters=%d reps=%d call_us=%.3f "
			    "call_min=%.3f call_max=%.3f\n", size, count * sizeof(double),
			    iters, reps, med, t[0], t[reps - 1]);
			fflush(stdout);
		}
	}

	int rc = bench_errors("allreduce", errors, rank);
	free(in);
	free(out);
	free(t);
	MPI_Finalize();
	return rc;
}
