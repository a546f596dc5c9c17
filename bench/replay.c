/*
 * replay.c: re-execution speed. Rank 0 sends M messages of S bytes to
 * rank 1, which receives them one by one (with a tiny reduction over each,
 * as a program would) and prints how long its receive phase took. Run by
 * bench/ft.sh with MPIV_FAULT=finalize:1:1 so rank 1 is killed as it
 * enters MPI_Finalize and re-executes: its replay answers every receive
 * from the Channel Memory's log, and --report gives the replay time to
 * compare with the original receive phase.
 *
 *   replay M S
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	int rank, m = argc > 1 ? atoi(argv[1]) : 20000;
	int s = argc > 2 ? atoi(argv[2]) : 64;
	unsigned char *buf;
	unsigned long sum = 0;
	double t0, t1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	buf = calloc((size_t)s + 1, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < m; i++) {
		if (rank == 0) {
			buf[0] = (unsigned char)i;
			MPI_Send(buf, s, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
		} else if (rank == 1) {
			MPI_Recv(buf, s, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
			for (int k = 0; k < s; k++)
				sum += buf[k];
		}
	}
	t1 = MPI_Wtime();
	if (rank == 1)
		printf("RESULT replay msgs=%d size=%d recv_phase_s=%.6f sum=%lu\n",
		    m, s, t1 - t0, sum);
	fflush(stdout);
	free(buf);
	MPI_Finalize();
	return 0;
}
