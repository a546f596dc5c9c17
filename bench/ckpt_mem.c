/*
 * bench/ckpt_mem.c: a rank with MB megabytes of live data, for the
 * checkpoint benchmarks (bench/ckpt.sh).
 *
 *   ckpt_mem MB WHO STOPFILE RESUMEFILE
 *
 * WHO = 0: only rank 0 holds MB MB (the others a few KB); WHO = all:
 * every rank does. The data (doubles: a repeating ramp plus 16 bits of
 * hashed noise, so zstd finds something but not everything to squeeze)
 * is written once, summed, and the ranks then loop: a one-int
 * MPI_Sendrecv with rank ^ 1 (a safe point where checkpoints are taken)
 * and a 2 ms sleep, until the last rank sees STOPFILE (an Allreduce
 * every 25 iterations tells the others) or 300000 iterations. Prints "ready" once
 * the data is in place.
 *
 * A loop iteration that starts more than 0.25 s after the previous one
 * means the process was stopped and resumed (restored from a checkpoint,
 * or a slow checkpoint stall): the rank appends "resumed RANK REALTIME
 * GAP" to RESUMEFILE (opened then, never held across a checkpoint).
 * At the end each rank sums its data again and prints
 * "RESULT rank=R mb=M data_ok=0|1".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double
now_real(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double
val(size_t i, int rank)
{
	uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)rank * 40503u;

	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return (double)(i & 4095) + (double)(h & 0xffff) / 65536.0 * 1e-3;
}

static double
sum(const double *a, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += a[i];
	return s;
}

int
main(int argc, char **argv)
{
	int rank, size, peer, token = 0, ok;
	size_t n;
	double *a, s0, last, t;
	long mb;

	MPI_Init(&argc, &argv);
	if (argc != 5) {
		fprintf(stderr, "usage: ckpt_mem MB 0|all STOPFILE RESUMEFILE\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mb = atol(argv[1]);
	if (strcmp(argv[2], "all") != 0 && rank != 0)
		mb = 0;
	n = mb > 0 ? (size_t)mb * 1024 * 1024 / sizeof(double) : 512;
	if ((a = malloc(n * sizeof(double))) == NULL) {
		fprintf(stderr, "ckpt_mem: cannot allocate %ld MB\n", mb);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < n; i++)
		a[i] = val(i, rank);
	s0 = sum(a, n);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		printf("ready\n");
		fflush(stdout);
	}
	peer = rank ^ 1;
	last = now_real();
	for (long it = 0;; it++) {
		token = (int)it;
		t = now_real();
		if (t - last > 0.25) {
			FILE *f = fopen(argv[4], "a");
			if (f != NULL) {
				fprintf(f, "resumed %d %.6f %.3f\n", rank, t,
				    t - last);
				fclose(f);
			}
		}
		last = t;
		if (peer < size)
			MPI_Sendrecv(&token, 1, MPI_INT, peer, 0, &token, 1,
			    MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		/* Ranks agree on stopping, so none is left waiting. Only
		   the last rank (never killed by bench/ckpt.sh) looks at
		   the file: a rank replaying after a restore must take the
		   same decisions as before, and the file is not logged. */
		if (it % 25 == 0) {
			int stop = it > 300000 ||
			    (rank == size - 1 && access(argv[3], F_OK) == 0);
			int any;
			MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX,
			    MPI_COMM_WORLD);
			if (any)
				break;
		}
		usleep(2000);
	}
	ok = sum(a, n) == s0;
	printf("RESULT rank=%d mb=%ld data_ok=%d\n", rank, mb, ok);
	free(a);
	MPI_Finalize();
	return ok ? 0 : 1;
}
