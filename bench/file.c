/*
 * file.c: MPI-IO. Every rank of one file (in $TMPDIR, default /tmp; its
 * name made by rank 0, removed at the end):
 *   read8, write8     MPI_File_read_at / write_at of 8 B at the rank's
 *                     own offset, one at a time (the latency of one
 *                     operation)
 *   write_all, read_all  MPI_File_write_at_all / read_at_all of 4 MiB a
 *                     rank, the blocks side by side (bandwidth: bytes
 *                     is the job's total per call)
 *   open_close        MPI_File_open then MPI_File_close (collective)
 * For each case: warm-up calls, then R repetitions of `iters` calls; the
 * time of a repetition is the slowest rank's; rank 0 reports the median
 * in µs per call. Reads are checked against what was written.
 *
 *   file [--quick] [--reps R] [--scale F]
 *
 * Output (rank 0):
 *   RESULT file op=<read8|write8|write_all|read_all|open_close> n=<N> bytes=<B> iters=<I> reps=<R> call_us=<median> call_min=<..> call_max=<..>
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define BIG	(4 << 20)

enum op { READ8, WRITE8, WRITE_ALL, READ_ALL, OPEN_CLOSE };
static const char *const names[] = { "read8", "write8", "write_all",
	"read_all", "open_close" };
static const struct { enum op op; int iters; } cases[] = {
	{ WRITE8, 1000 },
	{ READ8, 1000 },
	{ WRITE_ALL, 10 },
	{ READ_ALL, 10 },
	{ OPEN_CLOSE, 200 },
};

static char path[4096];

/* One call of op; returns 1 when a check failed. */
static int
one(enum op op, MPI_File fh, unsigned char *buf, int rank, int size, int i,
    int check)
{
	MPI_Offset off;
	MPI_Status st;
	MPI_File f2;
	uint64_t v;
	int bad = 0;

	switch (op) {
	case WRITE8:
		v = ((uint64_t)rank << 32) | (uint64_t)i;
		MPI_File_write_at(fh, (MPI_Offset)rank * 8, &v, 8, MPI_BYTE,
		    &st);
		break;
	case READ8:
		v = 0;
		MPI_File_read_at(fh, (MPI_Offset)rank * 8, &v, 8, MPI_BYTE, &st);
		bad = check && (v >> 32) != (uint64_t)rank;
		break;
	case WRITE_ALL:
		off = (MPI_Offset)size * 8 + (MPI_Offset)rank * BIG;
		memset(buf, rank + 1, 64);
		MPI_File_write_at_all(fh, off, buf, BIG, MPI_BYTE, &st);
		break;
	case READ_ALL:
		off = (MPI_Offset)size * 8 + (MPI_Offset)rank * BIG;
		buf[0] = 0;
		MPI_File_read_at_all(fh, off, buf, BIG, MPI_BYTE, &st);
		bad = check && buf[0] != (unsigned char)(rank + 1);
		break;
	case OPEN_CLOSE:
		if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR,
		    MPI_INFO_NULL, &f2) != MPI_SUCCESS)
			return 1;
		MPI_File_close(&f2);
		break;
	}
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size, reps, errors = 0;
	double scale;
	MPI_File fh;
	const char *tmp = getenv("TMPDIR");
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bench_opts(argc, argv, 0.2, &reps, &scale);
	if (rank == 0)
		snprintf(path, sizeof path, "%s/mpiv-bench-file.%ld",
		    tmp != NULL && *tmp != '\0' ? tmp : "/tmp", (long)getpid());
	MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
	buf = calloc(1, BIG);
	double *t = calloc(reps, sizeof *t);
	if (!buf || !t || MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
	    &fh) != MPI_SUCCESS) {
		printf("ERROR file cannot open %s\n", path);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}

	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		enum op op = cases[c].op;
		int iters = (int)(cases[c].iters * scale);
		if (iters < 2)
			iters = 2;
		int warm = iters / 10 + 1;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warm; i++)
			errors += one(op, fh, buf, rank, size, i, 0);
		for (int r = 0; r < reps; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			for (int i = 0; i < iters; i++)
				errors += one(op, fh, buf, rank, size, i,
				    i == 0);
			t[r] = bench_slowest_us(MPI_Wtime() - t0, iters);
		}
		if (rank == 0) {
			double med = bench_median(t, reps);
			size_t bytes = op == WRITE_ALL || op == READ_ALL ?
			    (size_t)BIG * size : op == OPEN_CLOSE ? 0 : 8;
			printf("RESULT file op=%s n=%d bytes=%zu iters=%d reps=%d "
			    "call_us=%.3f call_min=%.3f call_max=%.3f\n",
			    names[op], size, bytes, iters, reps, med, t[0],
			    t[reps - 1]);
			fflush(stdout);
		}
	}
	MPI_File_close(&fh);
	int rc = bench_errors("file", errors, rank);
	free(buf);
	free(t);
	MPI_Finalize();
	return rc;
}
