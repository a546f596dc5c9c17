/*
 * mono.h: the monotonic clock (CLOCK_MONOTONIC: never jumps with the
 * date), in the units callers count in. Inline, for the daemons and the
 * library alike.
 */
#ifndef MPIV_MONO_H
#define MPIV_MONO_H

#include <time.h>

static inline double
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static inline long
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000L;
}

#endif
