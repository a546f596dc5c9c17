/*
 * bench.h: what the programs of bench/ share. Each is one file built
 * alone by bench/run.sh; this header is included, not linked (after
 * mpi.h for the MPI helpers at the end).
 */
#ifndef MPIV_BENCH_H
#define MPIV_BENCH_H

#include <stdlib.h>
#include <string.h>

/*
 * The options --quick, --reps R (default 5) and --scale F (default 1);
 * any other argument is the program's own (and skipped here). --quick
 * caps the repetitions at 5 and multiplies the scale by quick_scale.
 * Returns whether --quick was given.
 */
static inline int
bench_opts(int argc, char **argv, double quick_scale, int *reps,
    double *scale)
{
	int quick = 0;

	*reps = 5;
	*scale = 1.0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			*reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
			*scale = atof(argv[++i]);
	}
	if (quick) {
		*reps = *reps > 5 ? 5 : *reps;
		*scale *= quick_scale;
	}
	if (*reps < 1)
		*reps = 1;
	return quick;
}

static int
bench_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the n repetitions' times t (so t[0] is the least, t[n - 1] the
   most) and returns their median. */
static inline double
bench_median(double *t, int n)
{
	qsort(t, n, sizeof *t, bench_cmp_dbl);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

#ifdef MPI_VERSION
#include <stdio.h>

/* The slowest rank's µs per call of a repetition in which this rank
   made iters calls in secs seconds (every rank calls it). */
static inline double
bench_slowest_us(double secs, int iters)
{
	double mine = secs / iters * 1e6, slowest = 0;

	MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return slowest;
}

/* Every rank's count of wrong results, summed; rank 0 prints "ERROR
   NAME wrong_results=N" when there are any. The program's exit code:
   1 then, else 0 (every rank calls it). */
static inline int
bench_errors(const char *name, int errors, int rank)
{
	int all = 0;

	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && all)
		printf("ERROR %s wrong_results=%d\n", name, all);
	return all ? 1 : 0;
}
#endif

#endif
