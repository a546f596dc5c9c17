/*
 * bcast_reduce.c: application benchmark, large broadcasts and reductions.
 *
 * For 1, 4 and 16 MiB of doubles (--quick: 1 and 4 MiB, fewer rounds), a
 * few rounds of MPI_Bcast followed by MPI_Reduce(MPI_SUM), the root moving
 * to the next rank every round.
 * The broadcast data name the root, the round and the position, and every
 * rank checks all of it; each rank's contribution to the reduction is a
 * small whole number (so the sum is exact), and the root checks the sum
 * of every element.
 *
 *   bcast_reduce [--quick] [--corrupt]
 *
 * --corrupt makes the root change one value it broadcasts, and the last
 * rank contribute one wrong value, in one round: both checks must report
 * it.
 *
 * Output (rank 0):
 *   RESULT app=bcast_reduce n=<N> wall_s=<s> calls=<Bcast + Reduce calls> bytes=<bytes broadcast + reduced>
 * or "ERROR ..." and exit code 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { int mib, rounds; } cases[] = {
	{ 1, 12 },
	{ 4, 4 },
	{ 16, 2 },
};

int main(int argc, char **argv)
{
	int rank, size, quick = 0, corrupt = 0;

	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* each line out at once, even if the job is torn down */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--corrupt"))
			corrupt = 1;
	}
	int ncase = sizeof cases / sizeof *cases;
	size_t most = ((size_t)cases[ncase - 1].mib << 20) / sizeof(double);
	double *buf = malloc(most * sizeof *buf), *sum = malloc(most * sizeof *sum);
	if (!buf || !sum)
		MPI_Abort(MPI_COMM_WORLD, 3);
	memset(buf, 0, most * sizeof *buf);
	memset(sum, 0, most * sizeof *sum);
	long long errors = 0, bytes = 0;
	int calls = 0, round = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int c = 0; c < ncase; c++) {
		int m = (int)(((size_t)cases[c].mib << 20) / sizeof(double));
		int nr = quick ? (cases[c].mib < 16 ? (cases[c].rounds + 3) / 4 : 0) : cases[c].rounds;
		for (int i = 0; i < nr; i++, round++) {
			int root = round % size;
			int spoil = corrupt && c == (quick ? 1 : ncase - 1) && i == nr - 1;
			if (rank == root) {
				for (int k = 0; k < m; k++)
					buf[k] = root * 1000 + round * 10 + k % 7;
				if (spoil)
					buf[m / 2] += 1;
			}
			MPI_Bcast(buf, m, MPI_DOUBLE, root, MPI_COMM_WORLD);
			for (int k = 0; k < m; k++)
				if (buf[k] != root * 1000 + round * 10 + k % 7) {
					if (!errors++)
						printf("ERROR app=bcast_reduce n=%d: rank %d: value %d of the "
						    "%d MiB broadcast from rank %d is %g\n",
						    size, rank, k, cases[c].mib, root, buf[k]);
					break;
				}
			/* the reduction: rank r gives r + (k + round) % 13 */
			for (int k = 0; k < m; k++)
				buf[k] = rank + (k + round) % 13;
			if (spoil && rank == size - 1)
				buf[m / 3] += 1;
			MPI_Reduce(buf, sum, m, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
			if (rank == root) {
				double base = size * (size - 1) / 2.0;
				for (int k = 0; k < m; k++)
					if (sum[k] != base + (double)size * ((k + round) % 13)) {
						if (!errors++)
							printf("ERROR app=bcast_reduce n=%d: rank %d: element %d "
							    "of the %d MiB reduction is %g\n",
							    size, rank, k, cases[c].mib, sum[k]);
						break;
					}
			}
			calls += 2;
			bytes += 2LL * m * (long long)sizeof(double);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double wall = MPI_Wtime() - t0;

	long long all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && all == 0)
		printf("RESULT app=bcast_reduce n=%d wall_s=%.4f calls=%d bytes=%lld\n", size, wall, calls, bytes);
	else if (rank == 0)
		printf("ERROR app=bcast_reduce n=%d: %lld wrong results in all\n", size, all);
	free(buf);
	free(sum);
	MPI_Finalize();
	return rank == 0 && all != 0;
}
