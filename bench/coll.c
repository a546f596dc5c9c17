/*
 * coll.c: the collectives other than Allreduce (bench/allreduce.c):
 * MPI_Bcast and MPI_Reduce (MPI_SUM of doubles) of 8 B and 1 MiB, with
 * the root moving every call, MPI_Allgather of 8 B and 64 KiB per rank,
 * and MPI_Barrier; then non-blocking ones, each waited for at once:
 * MPI_Ibcast of 1 MiB (root moving), MPI_Iallgather of 64 KiB per rank,
 * MPI_Iallreduce of 64 KiB, MPI_Ibarrier. For each case: warm-up calls, then R repetitions of
 * `iters` calls; the time of a repetition is the slowest rank's; rank 0
 * reports the median over repetitions in µs per call. The first call of
 * every repetition is checked.
 *
 *   coll [--quick] [--reps R] [--scale F]
 *
 * Output (rank 0):
 *   RESULT coll op=<bcast|reduce|allgather|barrier|ibcast|iallgather|iallreduce|ibarrier> n=<N> bytes=<B> iters=<I> reps=<R> call_us=<median> call_min=<..> call_max=<..>
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum op { BCAST, REDUCE, ALLGATHER, BARRIER, IBCAST, IALLGATHER, IALLREDUCE,
	IBARRIER };
static const char *const names[] = { "bcast", "reduce", "allgather", "barrier",
	"ibcast", "iallgather", "iallreduce", "ibarrier" };
static const struct { enum op op; int count; int iters; } cases[] = {
	{ BCAST,     1,      1000 },
	{ BCAST,     131072, 40 },
	{ REDUCE,    1,      1000 },
	{ REDUCE,    131072, 40 },
	{ ALLGATHER, 1,      1000 },
	{ ALLGATHER, 8192,   100 },
	{ BARRIER,   0,      1000 },
	{ IBCAST,    131072, 40 },
	{ IALLGATHER, 8192,  100 },
	{ IALLREDUCE, 8192,  100 },
	{ IBARRIER,  0,      1000 },
};

/* One call of case op at iteration i; returns 1 when checked and wrong. */
static int one(enum op op, int count, double *in, double *out, int i,
    int rank, int size, int check)
{
	int root = i % size, bad = 0;
	MPI_Request rq;

	switch (op) {
	case BCAST:
		if (rank == root)
			for (int k = 0; k < count; k++)
				in[k] = root + k;
		MPI_Bcast(in, count, MPI_DOUBLE, root, MPI_COMM_WORLD);
		for (int k = 0; check && k < count && !bad; k++)
			bad = in[k] != root + k;
		break;
	case REDUCE:
		for (int k = 0; k < count; k++)
			in[k] = rank + k;
		MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, root,
		    MPI_COMM_WORLD);
		for (int k = 0; check && rank == root && k < count && !bad; k++)
			bad = fabs(out[k] - (size * (size - 1) / 2.0 +
			    (double)size * k)) > 1e-9 * (1 + (double)size * k);
		break;
	case ALLGATHER:
		for (int k = 0; k < count; k++)
			in[k] = rank * 1000.0 + k;
		MPI_Allgather(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE,
		    MPI_COMM_WORLD);
		for (int q = 0; check && q < size && !bad; q++)
			for (int k = 0; k < count && !bad; k++)
				bad = out[(size_t)q * count + k] != q * 1000.0 + k;
		break;
	case BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	/* the non-blocking ones, waited for at once: their schedules */
	case IBCAST:
		if (rank == root)
			for (int k = 0; k < count; k++)
				in[k] = root + k;
		MPI_Ibcast(in, count, MPI_DOUBLE, root, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		for (int k = 0; check && k < count && !bad; k++)
			bad = in[k] != root + k;
		break;
	case IALLGATHER:
		for (int k = 0; k < count; k++)
			in[k] = rank * 1000.0 + k;
		MPI_Iallgather(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE,
		    MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		for (int q = 0; check && q < size && !bad; q++)
			for (int k = 0; k < count && !bad; k++)
				bad = out[(size_t)q * count + k] != q * 1000.0 + k;
		break;
	case IALLREDUCE:
		for (int k = 0; k < count; k++)
			in[k] = rank + k;
		MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM,
		    MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		for (int k = 0; check && k < count && !bad; k++)
			bad = out[k] != size * (size - 1) / 2.0 + (double)size * k;
		break;
	case IBARRIER:
		MPI_Ibarrier(MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		break;
	}
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size, reps, errors = 0;
	double scale;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bench_opts(argc, argv, 0.2, &reps, &scale);

	size_t maxc = 131072 > (size_t)8192 * size ? 131072 : (size_t)8192 * size;
	double *in = malloc(maxc * sizeof *in), *out = malloc(maxc * sizeof *out);
	double *t = calloc(reps, sizeof *t);
	if (!in || !out || !t)
		MPI_Abort(MPI_COMM_WORLD, 3);

	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		enum op op = cases[c].op;
		int count = cases[c].count;
		int iters = (int)(cases[c].iters * scale);
		if (iters < 2)
			iters = 2;
		int warm = iters / 10 + 2;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warm; i++)
			one(op, count, in, out, i, rank, size, 0);
		for (int r = 0; r < reps; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int i = 0; i < iters; i++)
				errors += one(op, count, in, out, i, rank, size, i == 0);
			t[r] = bench_slowest_us(MPI_Wtime() - t0, iters);
		}
		if (rank == 0) {
			double med = bench_median(t, reps);
			printf("RESULT coll op=%s n=%d bytes=%zu iters=%d reps=%d call_us=%.3f "
			    "call_min=%.3f call_max=%.3f\n", names[op], size,
			    count * sizeof(double), iters, reps, med, t[0], t[reps - 1]);
			fflush(stdout);
		}
	}

	int rc = bench_errors("coll", errors, rank);
	free(in);
	free(out);
	free(t);
	MPI_Finalize();
	return rc;
}
