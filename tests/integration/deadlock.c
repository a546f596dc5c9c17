/* tests/integration/deadlock.c: MPI programs that deadlock, each in its
 * own way, and one that only looks idle (test_deadlock.sh):
 *
 *   finished  rank 0 receives from rank 1 (tag 5), which never sends
 *             and finishes
 *   cycle     every rank receives from the next one (tag 9)
 *   coll      rank 0 enters MPI_Barrier, the others receive from rank 0
 *             (tag 7)
 *   poll      rank 0 polls an MPI_Irecv from rank 1 with MPI_Test
 *             forever; rank 1 finishes
 *   iprobe    rank 0 polls MPI_Iprobe for rank 1 (tag 6) forever; rank 1
 *             finishes
 *   waitall   rank 0 waits with MPI_Waitall for receives from rank 1
 *             (tags 3 and 4); rank 1 finishes
 *   waitany   rank 0 waits with MPI_Waitany for a receive from rank 1
 *             (tag 3) or from any rank (tag 4); rank 1 finishes
 *   probe     rank 0 waits in MPI_Probe for rank 1 (tag 6); rank 1
 *             finishes
 *   ibarrier  rank 0 waits for an MPI_Ibarrier (MPI_Wait), rank 1
 *             receives from rank 0 (tag 2)
 *   window    rank 0 exposes its window to rank 1 (MPI_Win_post) and
 *             waits in MPI_Win_wait; rank 1 receives from rank 0 (tag
 *             8) instead of its access epoch
 *   slow S    no deadlock: rank 1 computes for S seconds (a busy loop)
 *             before it sends, then every rank prints "done"
 *
 * Each rank says "rank R: waiting" on stdout before it blocks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
waiting(int rank)
{
	printf("rank %d: waiting\n", rank);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	int rank, size, x = 0, flag = 0, idx;
	const char *mode = argc > 1 ? argv[1] : "finished";
	MPI_Request rq[2];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (strcmp(mode, "finished") == 0) {
		if (rank == 0) {
			waiting(rank);
			MPI_Recv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "cycle") == 0) {
		waiting(rank);
		MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD,
		    MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "coll") == 0) {
		waiting(rank);
		if (rank == 0)
			MPI_Barrier(MPI_COMM_WORLD);
		else
			MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "poll") == 0) {
		if (rank == 0) {
			MPI_Irecv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[0]);
			waiting(rank);
			while (!flag)
				MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "iprobe") == 0) {
		if (rank == 0) {
			waiting(rank);
			while (!flag)
				MPI_Iprobe(1, 6, MPI_COMM_WORLD, &flag,
				    MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "waitall") == 0) {
		if (rank == 0) {
			MPI_Irecv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq[0]);
			MPI_Irecv(&idx, 1, MPI_INT, 1, 4, MPI_COMM_WORLD,
			    &rq[1]);
			waiting(rank);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
	} else if (strcmp(mode, "waitany") == 0) {
		if (rank == 0) {
			MPI_Irecv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq[0]);
			MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4,
			    MPI_COMM_WORLD, &rq[1]);
			waiting(rank);
			MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "probe") == 0) {
		if (rank == 0) {
			waiting(rank);
			MPI_Probe(1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "ibarrier") == 0) {
		waiting(rank);
		if (rank == 0) {
			MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
			MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "window") == 0) {
		MPI_Win win;
		MPI_Group world, peer;
		int one = 1 - rank, buf[4] = { 0 };

		MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL,
		    MPI_COMM_WORLD, &win);
		MPI_Comm_group(MPI_COMM_WORLD, &world);
		MPI_Group_incl(world, 1, &one, &peer);
		waiting(rank);
		if (rank == 0) {
			MPI_Win_post(peer, 0, win);
			MPI_Win_wait(win);
		} else if (rank == 1) {
			MPI_Recv(&x, 1, MPI_INT, 0, 8, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "slow") == 0) {
		double secs = argc > 2 ? atof(argv[2]) : 3;

		if (rank == 1) {
			double end = now_s() + secs;
			volatile double acc = 0;

			while (now_s() < end)
				for (int i = 0; i < 100000; i++)
					acc += i * 0.5;
			x = 42;
			MPI_Send(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
		} else if (rank == 0) {
			MPI_Recv(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		printf("rank %d: done x=%d\n", rank, rank == 0 ? x : 42);
	} else {
		fprintf(stderr, "deadlock: unknown mode %s\n", mode);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Finalize();
	return 0;
}
