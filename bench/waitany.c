/*
 * waitany.c: ping-pong whose every receive completes through MPI_Waitany,
 * so each message also makes one non-deterministic outcome that the rank
 * must log at its home CM (docs/REPLAY.md). bench/ft.sh runs it with
 * logging on and off (mpiv run --relay-only) to price that record.
 * With a third argument "any" the receives are posted with
 * MPI_ANY_SOURCE, so in the direct protocol each match is a logged
 * outcome too (docs/DIRECT.md); bench/run.sh runs it that way.
 *
 *   waitany ITERS SIZE [any]   -> RESULT waitany size=.. iters=..
 *                                 src=peer|any lat_us=<half rtt>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
	int rank, iters = argc > 1 ? atoi(argv[1]) : 2000;
	int size = argc > 2 ? atoi(argv[2]) : 8;
	int any = argc > 3 && strcmp(argv[3], "any") == 0;
	char *sbuf, *rbuf;
	double t0 = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sbuf = calloc((size_t)size + 1, 1);
	rbuf = calloc((size_t)size + 1, 1);
	for (int i = -100; i < iters; i++) {
		MPI_Request r[2];
		int idx, peer = 1 - rank;

		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank > 1)
			continue;
		r[0] = MPI_REQUEST_NULL;
		MPI_Irecv(rbuf, size, MPI_BYTE, any ? MPI_ANY_SOURCE : peer, 1,
		    MPI_COMM_WORLD, &r[1]);
		if (rank == 0)
			MPI_Send(sbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
		if (rank == 1)
			MPI_Send(sbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("RESULT waitany size=%d iters=%d src=%s lat_us=%.3f\n",
		    size, iters, any ? "any" : "peer",
		    (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
