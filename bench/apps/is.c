/*
 * is.c: application benchmark, an integer bucket sort.
 *
 * Every rank draws K keys in [0, 2^23) with a fixed seed (the mean of two
 * uniform draws, so the buckets in the middle of the range get more keys
 * than those at the ends). Each of I iterations shifts every key by an
 * amount of its own (modulo 2^23), counts the keys bound for each rank
 * (rank r sorts the r-th N-th of the key range), exchanges the counts
 * with MPI_Alltoall, the keys with MPI_Alltoallv, and sorts what it got
 * (radix sort). Then the check: each rank's keys are sorted and inside its
 * range (so the whole is sorted), and the count and the sum of all keys
 * are those drawn (one MPI_Allreduce).
 *
 *   is [--quick] [--keys K] [--iters I] [--corrupt]
 *
 * --corrupt changes one key the last rank sends in one iteration, which
 * the check must report.
 *
 * Output (rank 0):
 *   RESULT app=is n=<N> wall_s=<s> keys_per_rank=<K> iters=<I> most_keys=<the most one rank sorted>
 * or "ERROR ..." and exit code 1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BITS 23
#define MAX_KEY (1u << KEY_BITS)

static uint32_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/* sorts a[0..n) (keys < 2^23) with two counting passes, tmp as scratch */
static void radix_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
	static size_t cnt[1 << 12];
	for (int pass = 0; pass < 2; pass++) {
		int shift = pass * 12;
		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(a[i] >> shift) & 0xfff]++;
		size_t pos = 0;
		for (int b = 0; b < 1 << 12; b++) {
			size_t c = cnt[b];
			cnt[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(a[i] >> shift) & 0xfff]++] = a[i];
		memcpy(a, tmp, n * sizeof *a);
	}
}

int main(int argc, char **argv)
{
	int rank, size, nkeys = 1 << 19, iters = 10, corrupt = 0, quick = 0;

	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* each line out at once, even if the job is torn down */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--corrupt"))
			corrupt = 1;
		else if (!strcmp(argv[i], "--keys") && i + 1 < argc)
			nkeys = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
	}
	if (quick)
		nkeys /= 4;
	if (nkeys < 1 || iters < 1) {
		if (rank == 0)
			printf("ERROR app=is: bad --keys or --iters\n");
		MPI_Finalize();
		return 1;
	}
	uint32_t *key = malloc(nkeys * sizeof *key), *sbuf = malloc(nkeys * sizeof *sbuf);
	int *scnt = calloc(size, sizeof *scnt), *rcnt = calloc(size, sizeof *rcnt);
	int *sdis = calloc(size, sizeof *sdis), *rdis = calloc(size, sizeof *rdis);
	int *fill = calloc(size, sizeof *fill);
	if (!key || !sbuf || !scnt || !rcnt || !sdis || !rdis || !fill)
		MPI_Abort(MPI_COMM_WORLD, 3);
	uint64_t seed = 314159265ULL + 1000003ULL * rank;
	for (int i = 0; i < nkeys; i++)
		key[i] = (lcg(&seed) % MAX_KEY + lcg(&seed) % MAX_KEY) / 2;
	size_t cap = 0;
	uint32_t *rbuf = NULL, *tmp = NULL;
	long long errors = 0, most = 0;
	uint32_t lo = (uint32_t)((uint64_t)rank * MAX_KEY / size);
	uint32_t hi = (uint32_t)((uint64_t)(rank + 1) * MAX_KEY / size);

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		uint32_t shift = (uint32_t)it * (MAX_KEY / 7);
		long long sums[3] = { 0, 0, 0 };	/* keys got, their sum, sum of keys sent */
		memset(scnt, 0, size * sizeof *scnt);
		for (int i = 0; i < nkeys; i++)
			scnt[(uint64_t)((key[i] + shift) % MAX_KEY) * size >> KEY_BITS]++;
		MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD);
		size_t got = 0;
		for (int r = 0; r < size; r++) {
			sdis[r] = r ? sdis[r - 1] + scnt[r - 1] : 0;
			rdis[r] = (int)got;
			got += rcnt[r];
		}
		memcpy(fill, sdis, size * sizeof *fill);
		for (int i = 0; i < nkeys; i++) {
			uint32_t k = (key[i] + shift) % MAX_KEY;
			sbuf[fill[(uint64_t)k * size >> KEY_BITS]++] = k;
			sums[2] += k;
		}
		if (corrupt && rank == size - 1 && it == iters / 2)
			sbuf[nkeys / 2] ^= 1;
		if (got > cap) {
			cap = got + got / 4;
			free(rbuf);
			free(tmp);
			rbuf = malloc(cap * sizeof *rbuf);
			tmp = malloc(cap * sizeof *tmp);
			if (!rbuf || !tmp)
				MPI_Abort(MPI_COMM_WORLD, 3);
		}
		MPI_Alltoallv(sbuf, scnt, sdis, MPI_UNSIGNED, rbuf, rcnt, rdis, MPI_UNSIGNED, MPI_COMM_WORLD);
		radix_sort(rbuf, tmp, got);
		most = (long long)got > most ? (long long)got : most;
		sums[0] = (long long)got;
		for (size_t i = 0; i < got; i++) {
			sums[1] += rbuf[i];
			if (rbuf[i] < lo || rbuf[i] >= hi || (i && rbuf[i] < rbuf[i - 1])) {
				if (!errors++)
					printf("ERROR app=is n=%d: rank %d, iteration %d: key %zu (%u) out of "
					    "order or outside [%u, %u)\n", size, rank, it, i, rbuf[i], lo, hi);
			}
		}
		MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
		if (sums[0] != (long long)nkeys * size || sums[1] != sums[2]) {
			if (!errors++ && rank == 0)
				printf("ERROR app=is n=%d: iteration %d: %lld keys summing to %lld, "
				    "want %lld summing to %lld\n", size, it, sums[0], sums[1],
				    (long long)nkeys * size, sums[2]);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double wall = MPI_Wtime() - t0;

	long long all = 0, mostall = 0;
	MPI_Reduce(&errors, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&most, &mostall, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0 && all == 0)
		printf("RESULT app=is n=%d wall_s=%.4f keys_per_rank=%d iters=%d most_keys=%lld\n",
		    size, wall, nkeys, iters, mostall);
	else if (rank == 0)
		printf("ERROR app=is n=%d: %lld errors in all\n", size, all);
	free(key);
	free(sbuf);
	free(rbuf);
	free(tmp);
	free(scnt);
	free(rcnt);
	free(sdis);
	free(rdis);
	free(fill);
	MPI_Finalize();
	return rank == 0 && all != 0;
}
