/*
 * bench/ckpt_stencil.c: a long 1-D Jacobi (heat) stencil for the
 * checkpoint slowdown benchmark (bench/ckpt.sh).
 *
 *   ckpt_stencil N ITERS
 *
 * Each rank owns N doubles (two arrays, so 16 N bytes of live data) of a
 * rod whose ends are held at 0 and 1; every iteration exchanges one halo
 * double with each neighbour (MPI_Sendrecv) and sweeps its part. Rank 0
 * prints "RESULT wall_s=W checksum=C": W from the barrier after set-up to
 * the end of the final reduction, C the sum of the field (identical with
 * or without checkpoints and restarts).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	int rank, size, left, right;
	long n = 0, iters = 0;
	double *u, *v, *t, local = 0, total = 0, t0, t1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 3 || (n = atol(argv[1])) < 1 || (iters = atol(argv[2])) < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: ckpt_stencil N ITERS\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	u = calloc((size_t)n + 2, sizeof(double));
	v = calloc((size_t)n + 2, sizeof(double));
	if (u == NULL || v == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (long i = 1; i <= n; i++)	/* a start far from equilibrium */
		u[i] = ((rank * n + i) % 97) / 97.0;
	left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	if (rank == size - 1)
		u[n + 1] = v[n + 1] = 1.0;	/* the hot end */
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (long it = 0; it < iters; it++) {
		MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[n + 1], 1,
		    MPI_DOUBLE, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&u[n], 1, MPI_DOUBLE, right, 1, &u[0], 1,
		    MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (long i = 1; i <= n; i++)
			v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
		t = u;
		u = v;
		v = t;
	}
	for (long i = 1; i <= n; i++)
		local += u[i];
	MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	t1 = MPI_Wtime();
	if (rank == 0)
		printf("RESULT wall_s=%.3f checksum=%.12e\n", t1 - t0, total);
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
