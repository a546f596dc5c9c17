/*
 * pingpong.c: half round-trip latency and bandwidth between ranks 0 and 1.
 *
 * Built twice by bench/run.sh: against mpiv (build/bin/mpivcc) and against
 * Open MPI (mpicc); uses only what libmpi-lite/mpi.h declares.
 *
 *   pingpong [--quick] [--reps R] [--scale F] [--size BYTES]
 *
 * For each size: warm-up iterations, then R repetitions of `iters` round
 * trips (iters decreases with size, times F); reports the median over the
 * repetitions. Rank 0 prints one line per size:
 *   RESULT pingpong size=<bytes> iters=<n> reps=<r> lat_us=<half rtt> bw_MBps=<bytes/us>
 * plus min/max over repetitions. --size runs only that size of the list
 * (bench/run.sh runs one size per job, so that mpiv and Open MPI
 * measurements of one size are close in time). Extra ranks (> 2) only
 * wait at the barriers.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct sz { long bytes; int iters; int quick; };
static const struct sz sizes[] = {
	{ 0,		2000, 1 },
	{ 1,		2000, 0 },
	{ 8,		2000, 1 },
	{ 64,		2000, 0 },
	{ 1024,		1000, 1 },
	{ 8192,		 500, 0 },
	{ 65536,	 200, 1 },
	{ 1 << 20,	  40, 1 },
	{ 4 << 20,	  12, 1 },
	{ 16 << 20,	   4, 0 },
};

static void fill(unsigned char *p, long n, unsigned seed)
{
	for (long i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

static long check(const unsigned char *p, long n, unsigned seed)
{
	for (long i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed + i * 7))
			return i;
	return -1;
}

int main(int argc, char **argv)
{
	int rank, size, quick, reps, errors = 0;
	double scale;
	long only = -1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	quick = bench_opts(argc, argv, 0.25, &reps, &scale);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			only = atol(argv[++i]);
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "pingpong: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	long maxbytes = 0;
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
		if (sizes[s].bytes > maxbytes)
			maxbytes = sizes[s].bytes;
	unsigned char *sbuf = malloc(maxbytes + 1), *rbuf = malloc(maxbytes + 1);
	double *t = calloc(reps, sizeof *t);
	if (!sbuf || !rbuf || !t)
		MPI_Abort(MPI_COMM_WORLD, 3);

	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		long n = sizes[s].bytes;
		int cnt = (int)n;
		if (only >= 0 ? n != only : quick && !sizes[s].quick)
			continue;
		int iters = (int)(sizes[s].iters * scale);
		if (iters < 2)
			iters = 2;
		int warm = iters / 10 + 2;
		int peer = rank == 0 ? 1 : 0;
		MPI_Status st;

		/* warm-up, with a data check in both directions */
		fill(sbuf, n, (unsigned)(s * 31 + rank));
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank < 2) {
			for (int i = 0; i < warm; i++) {
				memset(rbuf, 0, n ? n : 1);
				if (rank == 0) {
					MPI_Send(sbuf, cnt, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
					MPI_Recv(rbuf, cnt, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &st);
				} else {
					MPI_Recv(rbuf, cnt, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
					MPI_Send(sbuf, cnt, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
				}
				int got = -1;
				MPI_Get_count(&st, MPI_BYTE, &got);
				long bad = check(rbuf, n, (unsigned)(s * 31 + peer));
				if (got != cnt || bad >= 0) {
					if (!errors)
						fprintf(stderr, "pingpong: rank %d size %ld: "
						    "count %d, first bad byte %ld\n",
						    rank, n, got, bad);
					errors++;
				}
			}
		}

		for (int r = 0; r < reps; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			if (rank == 0) {
				for (int i = 0; i < iters; i++) {
					MPI_Send(sbuf, cnt, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
					MPI_Recv(rbuf, cnt, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				}
			} else if (rank == 1) {
				for (int i = 0; i < iters; i++) {
					MPI_Recv(rbuf, cnt, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(sbuf, cnt, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
				}
			}
			t[r] = (MPI_Wtime() - t0) / iters / 2.0 * 1e6;	/* µs */
		}
		if (rank == 0) {
			double med = bench_median(t, reps);
			printf("RESULT pingpong size=%ld iters=%d reps=%d lat_us=%.3f "
			    "bw_MBps=%.2f lat_min=%.3f lat_max=%.3f\n", n, iters, reps,
			    med, n / med, t[0], t[reps - 1]);
			fflush(stdout);
		}
	}

	int all = 0;
	MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && all)
		printf("ERROR pingpong data_errors=%d\n", all);
	free(sbuf);
	free(rbuf);
	free(t);
	MPI_Finalize();
	return all ? 1 : 0;
}
