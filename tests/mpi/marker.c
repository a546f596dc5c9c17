/*
 * marker: payloads that carry a known string, for the man-in-the-middle
 * test (tests/integration/test_mitm.sh), which looks for the string in
 * everything relayed on the wire and must never find it.
 *
 *   marker [STEPS=300] [STEP_US=2000] [KEYDIR]
 *
 * Each step every rank passes a buffer to its right neighbour around the
 * ring (Sendrecv): 256 bytes, or 70000 every tenth step (more than one
 * encrypted record), filled with "MPIV-MARKER-<rank>-<step> " over and
 * over, then sleeps STEP_US µs. What each rank receives goes into its
 * checksum unchecked: a byte changed on the wire and delivered shows as
 * another sum, never as a crash. Rank 0 prints
 * "marker ok nranks=N sum=..." (the same in every run).
 *
 * KEYDIR: before MPI_Init each rank writes the values of its MPIV_*
 * variables that look like keys (64 hex digits) to KEYDIR/keys-R-I
 * (rank R, incarnation I), one "NAME=HEX" a line, for the test to look
 * for them on the wire too.
 */
#include <ctype.h>
#include <unistd.h>

#include "mpitest.h"

#define MARKER_SMALL	256
#define MARKER_BIG	70000

extern char **environ;

static int
is_key(const char *v)
{
	size_t n = 0;

	for (; v[n] != '\0'; n++)
		if (!isxdigit((unsigned char)v[n]))
			return 0;
	return n == 64;
}

static void
write_keys(const char *dir)
{
	const char *r = getenv("MPIV_RANK"), *inc = getenv("MPIV_INCARNATION");
	char tmp[4200], path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/keys-%s-%s", dir, r ? r : "x",
	    inc ? inc : "x");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL)
		return;
	for (char **e = environ; *e != NULL; e++) {
		const char *eq = strchr(*e, '=');

		if (strncmp(*e, "MPIV_", 5) == 0 && eq != NULL &&
		    is_key(eq + 1))
			fprintf(f, "%s\n", *e);
	}
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void
fill(char *buf, size_t n, int rank, long step)
{
	char m[64];
	int ml = snprintf(m, sizeof(m), "MPIV-MARKER-%d-%ld ", rank, step);

	for (size_t i = 0; i < n; i++)
		buf[i] = m[i % (size_t)ml];
}

int
main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 300;
	long step_us = argc > 2 ? atol(argv[2]) : 2000;
	char *out, *in;

	if (argc > 3)
		write_keys(argv[3]);
	t_init(&argc, &argv, "marker");
	out = malloc(MARKER_BIG);
	in = malloc(MARKER_BIG);
	CHECK(out != NULL && in != NULL, "malloc");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	for (long s = 1; s <= steps; s++) {
		size_t n = s % 10 == 0 ? MARKER_BIG : MARKER_SMALL;

		fill(out, n, t_rank, s);
		memset(in, 0, n);
		MPI_OK(MPI_Sendrecv(out, (int)n, MPI_CHAR, right, 7, in,
		    (int)n, MPI_CHAR, left, 7, MPI_COMM_WORLD,
		    MPI_STATUS_IGNORE));
		t_mix(in, n);
		if (step_us > 0)
			usleep((useconds_t)step_us);
	}
	free(out);
	free(in);
	return t_finish();
}
