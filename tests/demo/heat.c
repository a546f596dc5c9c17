/*
 * heat.c: the demo job. A 1-D heat equation split over the ranks:
 * halo exchange with Isend/Irecv/Waitall each step, an Allreduce of the
 * total heat every 50 steps printed by rank 0, and a final checksum.
 * Its output is deterministic, so a run under fault injection must print
 * exactly what a failure-free run prints.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CELLS 4000
#define STEPS 400

int
main(int argc, char **argv)
{
	int rank, size, n, steps = STEPS;
	double *u, *v, local, total;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		steps = atoi(argv[1]);
	n = CELLS / size;
	u = calloc((size_t)n + 2, sizeof(*u));
	v = calloc((size_t)n + 2, sizeof(*v));
	for (int i = 1; i <= n; i++) {
		int g = rank * n + i - 1;
		u[i] = (g % 97 == 0) ? 1000.0 : (double)(g % 13);
	}
	for (int s = 1; s <= steps; s++) {
		MPI_Request req[4];
		int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
		int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

		MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[2]);
		MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[3]);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
		if (left == MPI_PROC_NULL)
			u[0] = u[1];
		if (right == MPI_PROC_NULL)
			u[n + 1] = u[n];
		for (int i = 1; i <= n; i++)
			v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
		for (int i = 1; i <= n; i++)
			u[i] = v[i];
		if (s % (steps >= 500 ? steps / 10 : 50) == 0) {
			local = 0;
			for (int i = 1; i <= n; i++)
				local += u[i] * (rank * n + i);
			MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM,
			    MPI_COMM_WORLD);
			if (rank == 0)
				printf("step %4d  weighted heat %.6e\n", s, total);
		}
	}
	local = 0;
	for (int i = 1; i <= n; i++)
		local += u[i];
	MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("final total heat %.9e on %d ranks\n", total, size);
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
