/* tests/integration/hi.c: the smallest job that proves ranks talk: an
 * Allreduce of ones; rank 0 prints "hi size=N sum=N". Compiled by the
 * integration tests that need a real job through a deployment. */
#include <mpi.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	int rank, size, sum = 0, one = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("hi size=%d sum=%d\n", size, sum);
	MPI_Finalize();
	return 0;
}
