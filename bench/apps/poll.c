/*
 * poll.c: application benchmark, the compute-and-poll pattern.
 *
 * R rounds; in each, every rank posts MPI_Irecv for one message from each
 * ring neighbour, sends one to each with MPI_Isend, and then computes in
 * slices, testing between slices (and, once its computation is done, in
 * a tight loop) instead of waiting:
 *   1. MPI_Testany over its two receives until one has completed;
 *   2. MPI_Testsome over the four requests until all have completed;
 *   3. a side message: it sends one small message to a partner that moves
 *      every round, and polls with MPI_Iprobe until the one addressed to
 *      it is there, then receives it with MPI_Recv.
 * Every payload is checked. Each test or probe that found nothing is a
 * fruitless poll; every rank counts its own.
 *
 *   poll [--quick] [--rounds R] [--corrupt]
 *
 * --corrupt makes the last rank send one wrong value half way through,
 * which the check must report.
 *
 * Output (rank 0):
 *   RESULT app=poll n=<N> wall_s=<s> rounds=<R> polls=<all ranks' fruitless polls> polls_max=<one rank's most>
 *   POLLS app=poll rank=<r> polls=<p> testany=<a> testsome=<b> iprobe=<c>   (one line per rank)
 * or "ERROR ..." and exit code 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M = 64, SLICES = 8, WORK = 384 };
enum { TAG_RIGHT = 1, TAG_LEFT = 2, TAG_SIDE = 3 };

/* the value k of the message src sends to dst in round r */
static double value(int src, int dst, int r, int k)
{
	return (double)src * 1e6 + dst * 1e4 + (r % 1000) * 10 + k % 10;
}

/* one slice of the rank's own computation */
static void slice(double *w)
{
	for (int rep = 0; rep < 4; rep++)
		for (int i = 1; i < WORK; i++)
			w[i] = 0.5 * w[i] + 0.25 * (w[i - 1] + 1.0);
}

int main(int argc, char **argv)
{
	int rank, size, rounds = 3000, corrupt = 0;

	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* each line out at once, even if the job is torn down */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			rounds /= 3;
		else if (!strcmp(argv[i], "--corrupt"))
			corrupt = 1;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
	}
	if (size < 2 || rounds < 1) {
		if (rank == 0)
			printf("ERROR app=poll: needs 2 ranks or more\n");
		MPI_Finalize();
		return 1;
	}
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	double sbuf[2][M], rbuf[2][M], *w = calloc(WORK, sizeof *w);
	if (!w)
		MPI_Abort(MPI_COMM_WORLD, 3);
	long long testany = 0, testsome = 0, iprobe = 0, errors = 0;
	int first_bad = -1;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int r = 0; r < rounds; r++) {
		MPI_Request rq[4];
		MPI_Status st[4];
		int idx[4], flag, out, done = 0;

		/* rq[0]: from the left (it sent rightwards), rq[1]: from the right */
		MPI_Irecv(rbuf[0], M, MPI_DOUBLE, left, TAG_RIGHT, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(rbuf[1], M, MPI_DOUBLE, right, TAG_LEFT, MPI_COMM_WORLD, &rq[1]);
		for (int k = 0; k < M; k++) {
			sbuf[0][k] = value(rank, right, r, k);
			sbuf[1][k] = value(rank, left, r, k);
		}
		if (corrupt && rank == size - 1 && r == rounds / 2)
			sbuf[0][M / 2] += 1;
		MPI_Isend(sbuf[0], M, MPI_DOUBLE, right, TAG_RIGHT, MPI_COMM_WORLD, &rq[2]);
		MPI_Isend(sbuf[1], M, MPI_DOUBLE, left, TAG_LEFT, MPI_COMM_WORLD, &rq[3]);

		for (;;) {
			if (done < SLICES) {
				slice(w);
				done++;
			}
			MPI_Testany(2, rq, &idx[0], &flag, &st[0]);
			if (flag)
				break;
			testany++;
		}
		for (;;) {
			if (done < SLICES) {
				slice(w);
				done++;
			}
			MPI_Testsome(4, rq, &out, idx, st);
			if (out == MPI_UNDEFINED)
				break;
			if (out == 0)
				testsome++;
		}
		while (done < SLICES) {
			slice(w);
			done++;
		}

		int step = 1 + r % (size - 1);
		int to = (rank + step) % size, from = (rank + size - step) % size;
		int side[2] = { rank, r }, got[2];
		MPI_Request sq;
		MPI_Isend(side, 2, MPI_INT, to, TAG_SIDE, MPI_COMM_WORLD, &sq);
		for (;;) {
			MPI_Iprobe(from, TAG_SIDE, MPI_COMM_WORLD, &flag, &st[0]);
			if (flag)
				break;
			iprobe++;
		}
		MPI_Recv(got, 2, MPI_INT, from, TAG_SIDE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&sq, MPI_STATUS_IGNORE);

		int bad = got[0] != from || got[1] != r;
		for (int k = 0; k < M; k++)
			bad |= rbuf[0][k] != value(left, rank, r, k) || rbuf[1][k] != value(right, rank, r, k);
		if (bad) {
			errors++;
			if (first_bad < 0)
				first_bad = r;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double wall = MPI_Wtime() - t0;

	long long mine[5] = { testany + testsome + iprobe, testany, testsome, iprobe, errors };
	long long *all = malloc(5 * sizeof *all * size);
	double sum = 0, wsum;
	for (int i = 0; i < WORK; i++)
		sum += w[i];
	if (!all)
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_Gather(mine, 5, MPI_LONG_LONG, all, 5, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	MPI_Reduce(&sum, &wsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (errors)
		printf("ERROR app=poll n=%d: rank %d got wrong data in %lld rounds, first in round %d\n",
		    size, rank, errors, first_bad);
	int bad = 0;
	if (rank == 0) {
		long long tot = 0, mx = 0;
		for (int i = 0; i < size; i++) {
			tot += all[5 * i];
			mx = all[5 * i] > mx ? all[5 * i] : mx;
			bad |= all[5 * i + 4] != 0;
		}
		if (!bad) {
			printf("RESULT app=poll n=%d wall_s=%.4f rounds=%d polls=%lld polls_max=%lld work=%.6f\n",
			    size, wall, rounds, tot, mx, wsum);
			for (int i = 0; i < size; i++)
				printf("POLLS app=poll rank=%d polls=%lld testany=%lld testsome=%lld iprobe=%lld\n",
				    i, all[5 * i], all[5 * i + 1], all[5 * i + 2], all[5 * i + 3]);
		}
	}
	free(all);
	free(w);
	MPI_Finalize();
	return bad;
}
