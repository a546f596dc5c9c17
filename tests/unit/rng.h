/*
 * rng.h: the unit tests' pseudo-random numbers (xorshift64*), from a
 * state the test owns, so that a seed printed by a failing run repeats it.
 */
#ifndef MPIV_TEST_RNG_H
#define MPIV_TEST_RNG_H

#include <stdint.h>

static inline uint64_t
rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

#endif
