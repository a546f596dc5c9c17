/*
 * mpitest.h: helpers shared by the MPI-semantics test programs.
 *
 * Every program prints deterministic output only (rank 0 prints one
 * summary line "NAME ok nranks=N sum=0x...") so that a run under fault
 * injection can be compared byte for byte with a failure-free run. A
 * failed check prints "FAIL: ..." on stderr naming the check and aborts
 * the job with exit code 1 (so no other rank hangs in a collective).
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_UNUSED __attribute__((unused))

static int t_rank, t_size;
static uint64_t t_sum = 1469598103934665603ULL;	/* FNV-1a state */
static const char *t_name = "test";

static void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "FAIL: %s [rank %d/%d] %s:%d: ", t_name, t_rank, t_size,
	    file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

/* CHECK(cond, "what was expected", ...) */
#define CHECK(c, ...) do { if (!(c)) t_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)
/* An MPI call that must succeed. */
#define MPI_OK(call) do { int rc_ = (call); \
	if (rc_ != MPI_SUCCESS) t_fail(__FILE__, __LINE__, "%s returned %d", #call, rc_); } while (0)
#define CHECK_INT(got, want, what) do { long long g_ = (long long)(got), w_ = (long long)(want); \
	if (g_ != w_) t_fail(__FILE__, __LINE__, "%s: got %lld, want %lld", what, g_, w_); } while (0)

T_UNUSED static void t_mix(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		t_sum ^= b[i];
		t_sum *= 1099511628211ULL;
	}
}
T_UNUSED static void t_mix_int(long long v) { t_mix(&v, sizeof v); }

T_UNUSED static void t_init(int *argc, char ***argv, const char *name)
{
	t_name = name;
	MPI_OK(MPI_Init(argc, argv));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
}

/* Combine every rank's checksum at rank 0 (in rank order), print the
 * summary, finalize. Returns the exit code for main. */
T_UNUSED static int t_finish(void)
{
	unsigned long long mine = t_sum, *all = NULL;
	if (t_rank == 0)
		all = malloc(sizeof(*all) * (size_t)t_size);
	MPI_OK(MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1,
	    MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
	if (t_rank == 0) {
		t_sum = 1469598103934665603ULL;
		t_mix(all, sizeof(*all) * (size_t)t_size);
		printf("%s ok nranks=%d sum=%016llx\n", t_name, t_size,
		    (unsigned long long)t_sum);
		fflush(stdout);
		free(all);
	}
	MPI_OK(MPI_Finalize());
	return 0;
}

/* Deterministic pseudo-random fill. */
T_UNUSED static uint32_t t_rand_u32(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

#endif
