/*
 * bench/digest_speed.c: what the send digest (libmpi-lite/digest.c) costs
 * per message, beside a memcpy of the same bytes (the least any send
 * does with them). Plain C, built by bench/ft.sh with the library's
 * digest.c; not an MPI program.
 *
 *   digest_speed [SIZE...]     default 8 65536 1048576
 * Prints one line per size: size, ns per digest, ns per memcpy, GB/s of
 * each (best of 5 rounds, each at least 0.2 s).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "digest.h"

static double
ds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* ns per call of digest (what = 0) or memcpy (what = 1) of n bytes. */
static double
ds_time(int what, unsigned char *src, unsigned char *dst, size_t n)
{
	double best = 1e30;
	volatile uint64_t sink = 0;

	for (int round = 0; round < 5; round++) {
		long iters = 0;
		double t0 = ds_now(), t;

		do {
			for (int k = 0; k < 64; k++, iters++) {
				src[0] = (unsigned char)iters;
				if (what == 0)
					sink ^= mpiv_digest_send(1, 7, src, n);
				else {
					memcpy(dst, src, n);
					sink ^= dst[n - 1];
				}
			}
			t = ds_now() - t0;
		} while (t < 0.2);
		if (t / (double)iters < best)
			best = t / (double)iters;
	}
	(void)sink;
	return best * 1e9;
}

int
main(int argc, char **argv)
{
	size_t def[] = { 8, 65536, 1048576 };
	int nsz = argc > 1 ? argc - 1 : 3;

	for (int i = 0; i < nsz; i++) {
		size_t n = argc > 1 ? strtoul(argv[i + 1], NULL, 10) : def[i];
		unsigned char *src = malloc(n), *dst = malloc(n);
		double d, c;

		if (n == 0 || src == NULL || dst == NULL)
			return 1;
		for (size_t k = 0; k < n; k++)
			src[k] = (unsigned char)(k * 131);
		d = ds_time(0, src, dst, n);
		c = ds_time(1, src, dst, n);
		printf("RESULT size=%zu digest_ns=%.1f memcpy_ns=%.1f "
		    "digest_gbs=%.2f memcpy_gbs=%.2f\n", n, d, c,
		    (double)n / d, (double)n / c);
		free(src);
		free(dst);
	}
	return 0;
}
