/*
 * flt.h: helpers for the fault-injection programs (tests/fault/progs).
 * These programs are longer, parameterised cousins of tests/mpi/app_*:
 * long enough for kills to land mid-run, and printing progress lines
 * while they run, so that "output exactly once" is tested on output that
 * is spread over the whole run. Every line they print is deterministic
 * (unless a program says otherwise); a failed check prints "FLT-FAIL"
 * on stderr and aborts the job with code 99.
 */
#ifndef FLT_H
#define FLT_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np;

#define FLT_ASSERT(c, ...) do { if (!(c)) { \
	fprintf(stderr, "FLT-FAIL rank %d line %d: ", me, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); fflush(stderr); \
	MPI_Abort(MPI_COMM_WORLD, 99); } } while (0)
#define FLT_MPI(call) do { int e_ = (call); \
	FLT_ASSERT(e_ == MPI_SUCCESS, "%s -> %d", #call, e_); } while (0)

/* argv[i] as a positive integer, or dflt when absent. */
static inline long flt_arg(int argc, char **argv, int i, long dflt)
{
	if (argc <= i)
		return dflt;
	long v = strtol(argv[i], NULL, 10);
	return v > 0 ? v : dflt;
}

/* MPI_Init etc. With FLT_MARK_DIR set (tests), each process then
   creates DIR/rank.R.inc.I (I = MPIV_INCARNATION): the scripts wait on
   these files to know that a relaunch happened and with which
   incarnation. */
static inline void flt_init(int *argc, char ***argv)
{
	FLT_MPI(MPI_Init(argc, argv));
	FLT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &me));
	FLT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &np));
	const char *dir = getenv("FLT_MARK_DIR"), *inc = getenv("MPIV_INCARNATION");
	if (dir != NULL && *dir != '\0') {
		char path[4096];
		snprintf(path, sizeof path, "%s/rank.%d.inc.%s", dir, me, inc != NULL ? inc : "none");
		FILE *f = fopen(path, "w");
		if (f != NULL)
			fclose(f);
	}
}

/* 64-bit mixing step (splitmix64 finaliser). */
static inline uint64_t flt_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27; h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

/* Burns CPU deterministically: iters rounds of mixing. */
static inline uint64_t flt_burn(uint64_t seed, long iters)
{
	uint64_t h = seed;
	for (long i = 0; i < iters; i++)
		h = flt_mix(h, (uint64_t)i);
	return h;
}

/* With FLT_HOLD=PATH (tests), each call sleeps FLT_HOLD_US (2000) µs
   while PATH exists: a script that must do several things while the job
   still runs (kill, wait for a checkpoint, kill again) creates PATH first
   and removes it when done, so the job cannot end early on a fast or
   idle machine. The job's messages and output do not depend on it, only
   its speed. */
static inline void flt_hold(void)
{
	static const char *path;
	static useconds_t us = 2000;
	static int looked;

	if (!looked) {
		const char *e = getenv("FLT_HOLD_US");
		long v = e != NULL ? atol(e) : 0;

		path = getenv("FLT_HOLD");
		if (v > 0 && v < 1000000)
			us = (useconds_t)v;
		looked = 1;
	}
	if (path != NULL && *path != '\0' && access(path, F_OK) == 0)
		usleep(us);
}

/* printf + fflush: each progress line leaves the process at once. */
#define FLT_SAY(...) do { printf(__VA_ARGS__); fflush(stdout); } while (0)

#endif
