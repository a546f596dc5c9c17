/*
 * test_cm_spin.c: how a Channel Memory polls after activity
 * (channel-memory/cm.c, cm_spin_decide): busy-polling while neither the
 * connections sending nor the runnable tasks outnumber the cores;
 * polling with the core yielded between polls while the runnable tasks
 * are at most twice the cores, however many connections send; no
 * spinning beyond that.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../channel-memory/cm_priv.h"

static void
test_decide(void **state)
{
	(void)state;
	/* a quiet machine: busy-poll */
	assert_int_equal(cm_spin_decide(0, 1, 2), CM_SPIN_POLL);
	assert_int_equal(cm_spin_decide(2, 2, 2), CM_SPIN_POLL);
	/* two spinning ranks and the CM on 2 cores: yield */
	assert_int_equal(cm_spin_decide(2, 3, 2), CM_SPIN_YIELD);
	assert_int_equal(cm_spin_decide(1, 4, 2), CM_SPIN_YIELD);
	/* many sessions sending, ranks asleep (relay): yield */
	assert_int_equal(cm_spin_decide(8, 1, 2), CM_SPIN_YIELD);
	/* 8 busy ranks on 2 cores: no spin */
	assert_int_equal(cm_spin_decide(8, 9, 2), CM_SPIN_NONE);
	assert_int_equal(cm_spin_decide(0, 5, 2), CM_SPIN_NONE);
	/* one core */
	assert_int_equal(cm_spin_decide(1, 1, 1), CM_SPIN_POLL);
	assert_int_equal(cm_spin_decide(1, 2, 1), CM_SPIN_YIELD);
	assert_int_equal(cm_spin_decide(1, 3, 1), CM_SPIN_NONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
