/*
 * ft.c: application benchmark, the all-to-all transposes of a
 * distributed FFT.
 *
 * MPI_Alltoall of B bytes per pair of ranks, for B = 64 KiB, 256 KiB and
 * 1 MiB, several calls each. Before every call each rank fills its blocks
 * with values that name the sender, the receiver, the call and the
 * position; after it every rank checks every value it received.
 *
 *   ft [--quick] [--corrupt]
 *
 * --corrupt changes one value the last rank sends in one call, which the
 * check must report.
 *
 * Output (rank 0):
 *   RESULT app=ft n=<N> wall_s=<s> calls=<C> bytes_per_rank=<all a rank sent>
 * or "ERROR ..." and exit code 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { int bytes, calls; } cases[] = {
	{ 64 << 10, 24 },
	{ 256 << 10, 10 },
	{ 1 << 20, 4 },
};

/* value k of the block src sends to dst in call c */
static int value(int src, int dst, int c, int k)
{
	return (int)(((unsigned)src * 2654435761u ^ (unsigned)dst * 40503u ^ (unsigned)c * 977u) + (unsigned)k);
}

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
	size_t most = (size_t)cases[ncase - 1].bytes / sizeof(int) * size;
	int *sbuf = malloc(most * sizeof *sbuf), *rbuf = malloc(most * sizeof *rbuf);
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 3);
	memset(sbuf, 0, most * sizeof *sbuf);
	memset(rbuf, 0, most * sizeof *rbuf);
	long long errors = 0, sent = 0;
	int calls = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int c = 0; c < ncase; c++) {
		int m = cases[c].bytes / (int)sizeof(int);
		int ncall = quick ? (cases[c].calls + 3) / 4 : cases[c].calls;
		for (int call = 0; call < ncall; call++, calls++) {
			for (int d = 0; d < size; d++)
				for (int k = 0; k < m; k++)
					sbuf[(size_t)d * m + k] = value(rank, d, calls, k);
			if (corrupt && rank == size - 1 && c == ncase - 1 && call == ncall / 2)
				sbuf[m / 3]++;
			MPI_Alltoall(sbuf, m, MPI_INT, rbuf, m, MPI_INT, MPI_COMM_WORLD);
			sent += (long long)m * sizeof(int) * (size - 1);
			for (int s = 0; s < size; s++)
				for (int k = 0; k < m; k++)
					if (rbuf[(size_t)s * m + k] != value(s, rank, calls, k)) {
						if (!errors++)
							printf("ERROR app=ft n=%d: rank %d, call %d (%d B per pair): "
							    "value %d from rank %d is wrong\n",
							    size, rank, calls, cases[c].bytes, k, s);
					}
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double wall = MPI_Wtime() - t0;

	long long all = 0;
	MPI_Reduce(&errors, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && all == 0)
		printf("RESULT app=ft n=%d wall_s=%.4f calls=%d bytes_per_rank=%lld\n", size, wall, calls, sent);
	else if (rank == 0)
		printf("ERROR app=ft n=%d: %lld wrong values in all\n", size, all);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return rank == 0 && all != 0;
}
