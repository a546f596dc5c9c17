/* abort: MPI_Abort(MPI_COMM_WORLD, code) from one rank while the others
 * wait in a receive that never completes; the job's exit code must be
 * the abort code. Usage: abort [code [rank]] (default 7, last rank).
 * Exits 99 if MPI_Abort returns or the others get past their receive. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "abort");
	int code = argc > 1 ? atoi(argv[1]) : 7;
	int who = argc > 2 ? atoi(argv[2]) : t_size - 1;
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (t_rank == who) {
		MPI_Abort(MPI_COMM_WORLD, code);
		fprintf(stderr, "FAIL: abort: MPI_Abort returned\n");
		return 99;
	}
	int x;
	MPI_Recv(&x, 1, MPI_INT, who, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	fprintf(stderr, "FAIL: abort: rank %d received a message nobody sent\n", t_rank);
	return 99;
}
