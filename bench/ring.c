/*
 * ring.c: token ring. N ranks pass a token (one int) around the ring K
 * times; rank 0 reports µs per hop (total time / (K * N)), the median over
 * R repetitions (5). Each hop increments the token;
 * rank 0 checks the count.
 *
 *   ring [--quick] [--reps R] [--hops H]
 *
 * K = max(4, H / N) laps (H = 4000 hops by default, 800 with --quick).
 * Output (rank 0):
 *   RESULT ring n=<N> laps=<K> reps=<R> hop_us=<median> hop_min=<..> hop_max=<..>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* one run of `laps` laps; returns the number of token errors seen at rank 0 */
static int ring(int rank, int size, int laps)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int token = 0, errors = 0;

	for (int l = 0; l < laps; l++) {
		if (rank == 0) {
			int expect = token + size;
			token++;
			MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (token != expect) {
				errors++;
				token = expect;
			}
		} else {
			MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token++;
			MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
		}
	}
	return errors;
}

int main(int argc, char **argv)
{
	int rank, size, quick = 0, reps = 5, hops = 4000, errors = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hops") && i + 1 < argc)
			hops = atoi(argv[++i]);
	}
	if (quick) {
		reps = reps > 5 ? 5 : reps;
		hops /= 5;
	}
	if (reps < 1)
		reps = 1;
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "ring: needs at least 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int laps = hops / size;
	if (laps < 4)
		laps = 4;
	int warm = laps / 10 + 1;
	double *t = calloc(reps, sizeof *t);
	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 3);

	MPI_Barrier(MPI_COMM_WORLD);
	errors += ring(rank, size, warm);
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		errors += ring(rank, size, laps);
		t[r] = (MPI_Wtime() - t0) / ((double)laps * size) * 1e6;
	}
	if (rank == 0) {
		double med = bench_median(t, reps);
		printf("RESULT ring n=%d laps=%d reps=%d hop_us=%.3f hop_min=%.3f "
		    "hop_max=%.3f\n", size, laps, reps, med, t[0], t[reps - 1]);
		if (errors)
			printf("ERROR ring token_errors=%d\n", errors);
		fflush(stdout);
	}
	free(t);
	MPI_Finalize();
	return rank == 0 && errors ? 1 : 0;
}
