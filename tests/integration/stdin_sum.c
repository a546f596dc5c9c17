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
 *            read; none: every stdin must be empty; chunks: rank 0 reads
 *            stdin with read(2) in 4 KiB pieces and broadcasts each, every
 *            rank hashes them, rank 0 prints the size and the hash;
 *            who: every rank reads stdin to its end, rank 0 prints how
 *            many bytes each one got
 *     NAP_US sleep between numbers (a kill or a checkpoint lands while
 *            rank 0 is reading)
 *     STEPS  extra allreduce rounds per number (work that logs messages)
 */
#include <errno.h>
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

/* read(2) to the end: how many bytes. */
static long long
stdin_bytes(void)
{
	static char buf[65536];
	long long n = 0;
	ssize_t r;

	while ((r = read(0, buf, sizeof(buf))) > 0)
		n += r;
	return n;
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
	if (strcmp(mode, "chunks") == 0) {
		static char buf[4096];
		uint64_t hc = 1469598103934665603ull, total = 0, hs[2];
		int n;

		for (;;) {
			if (rank == 0) {
				ssize_t r;

				do
					r = read(0, buf, sizeof(buf));
				while (r < 0 && errno == EINTR);
				n = r > 0 ? (int)r : 0;
			}
			MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
			if (n == 0)
				break;
			MPI_Bcast(buf, n, MPI_CHAR, 0, MPI_COMM_WORLD);
			for (int i = 0; i < n; i++)
				hc = (hc ^ (unsigned char)buf[i]) *
				    1099511628211ull;
			total += (uint64_t)n;
			if (nap > 0)
				usleep((useconds_t)nap);
		}
		hs[0] = hc;
		hs[1] = total;
		MPI_Bcast(hs, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
		bad = hs[0] != hc || hs[1] != total;
		MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX,
		    MPI_COMM_WORLD);
		if (rank == 0)
			printf("bytes %llu hash %016llx%s\n",
			    (unsigned long long)total, (unsigned long long)hc,
			    bad ? " BAD" : "");
		MPI_Finalize();
		return bad;
	}
	if (strcmp(mode, "who") == 0) {
		long long mine = stdin_bytes(), *all = NULL;

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
