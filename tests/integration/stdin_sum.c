/*
 * stdin_sum.c: a classic MPI program that takes its parameters from
 * stdin (tests/integration/test_stdin.sh). Rank 0 reads numbers with
 * scanf, one at a time, slowly if asked, broadcasts each, and every rank
 * adds its share; at the end rank 0 prints the count, the sum and a hash
 * of every number in order.
 *
 *   stdin_sum [MODE [NAP_US [STEPS]]]
 *     MODE   root (default): rank 0 reads, the others must see an empty
 *            stdin; all: every rank reads and checks it read what rank 0
 *            read; none: every stdin must be empty; bytes: rank 0 reads
 *            stdin with read(2) to its end and prints its size and hash;
 *            who: every rank reads stdin to its end, rank 0 prints how
 *            many bytes each one got
 *     NAP_US sleep between numbers (a kill or a checkpoint lands while
 *            rank 0 is reading)
 *     STEPS  extra allreduce rounds per number (work that logs messages)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static uint64_t
mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* Whether stdin holds nothing (read gives 0 at once). */
static int
stdin_empty(void)
{
	char c;

	return read(0, &c, 1) == 0;
}

/* read(2) to the end: size (returned) and hash of the bytes. */
static long long
stdin_bytes(int print)
{
	static char buf[65536];
	uint64_t h = 1469598103934665603ull, n = 0;
	ssize_t r;

	while ((r = read(0, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < r; i++)
			h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
		n += (uint64_t)r;
	}
	if (print)
		printf("bytes %llu hash %016llx\n", (unsigned long long)n,
		    (unsigned long long)h);
	return (long long)n;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "root";
	long nap = argc > 2 ? atol(argv[2]) : 0;
	int steps = argc > 3 ? atoi(argv[3]) : 0;
	int rank, size, more, bad = 0;
	long long v, sum = 0, count = 0;
	uint64_t h = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (strcmp(mode, "bytes") == 0) {
		if (rank == 0)
			(void)stdin_bytes(1);
		MPI_Finalize();
		return 0;
	}
	if (strcmp(mode, "who") == 0) {
		long long mine = stdin_bytes(0), *all = NULL;

		if (rank == 0 && (all = calloc((size_t)size,
		    sizeof(*all))) == NULL)
			MPI_Abort(MPI_COMM_WORLD, 3);
		MPI_Gather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0,
		    MPI_COMM_WORLD);
		for (int i = 0; rank == 0 && i < size; i++)
			printf("rank %d: %lld bytes\n", i, all[i]);
		free(all);
		MPI_Finalize();
		return 0;
	}
	if (strcmp(mode, "none") == 0 || (strcmp(mode, "root") == 0 &&
	    rank != 0)) {
		if (!stdin_empty()) {
			printf("rank %d: stdin is not empty\n", rank);
			bad = 1;
		}
	}
	for (;;) {
		if (rank == 0 || strcmp(mode, "all") == 0)
			more = scanf("%lld", &v) == 1;
		if (strcmp(mode, "all") == 0) {
			long long pair[2] = { more, more ? v : 0 }, got[2];

			memcpy(got, pair, sizeof(got));
			MPI_Bcast(got, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
			if (got[0] != pair[0] || got[1] != pair[1]) {
				printf("rank %d: read %lld/%lld, rank 0 %lld/"
				    "%lld\n", rank, pair[0], pair[1], got[0],
				    got[1]);
				bad = 1;
			}
		} else {
			MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
			if (more)
				MPI_Bcast(&v, 1, MPI_LONG_LONG, 0,
				    MPI_COMM_WORLD);
		}
		if (!more)
			break;
		{
			long long part = v * (rank + 1), all = 0;

			for (int s = 0; s <= steps; s++)
				MPI_Allreduce(&part, &all, 1, MPI_LONG_LONG,
				    MPI_SUM, MPI_COMM_WORLD);
			sum += all;
		}
		count++;
		h = mix(h, (uint64_t)v);
		if (nap > 0)
			usleep((useconds_t)nap);
	}
	{
		int anybad = 0;

		MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX,
		    MPI_COMM_WORLD);
		bad = anybad;
	}
	if (rank == 0)
		printf("count %lld sum %lld hash %016llx%s\n", count, sum,
		    (unsigned long long)h, bad ? " BAD" : "");
	MPI_Finalize();
	return bad;
}
