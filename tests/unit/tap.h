/*
 * tap.h: the CHECK of the unit tests that print TAP lines themselves
 * (not cmocka): "ok - what" or "not ok - what", counted in `failures`,
 * which the test's main turns into its exit status.
 */
#ifndef MPIV_TEST_TAP_H
#define MPIV_TEST_TAP_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok - ");					\
	} else {							\
		printf("not ok - ");					\
		failures++;						\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

#endif
