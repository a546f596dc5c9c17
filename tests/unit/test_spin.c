/*
 * test_spin.c: the spin controller of a rank's waits (libmpi-lite/spin.c,
 * included directly) on synthetic histories: short waits make it spin,
 * long ones bring it back to 0 and short ones again out of it; a gap
 * between two polls of a spin (another task held the core) stops the
 * spinning for a holdoff that doubles and ends; MPIV_SPIN as a fixed
 * budget, `auto` adaptive, garbage the default; and the sequence of poll
 * timeouts, which always ends with the caller's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../libmpi-lite/spin.c"

/* A wait of `waited` µs at *now with no contention, through spin_record. */
static void
waits(struct spin *s, long *now, long waited, int n)
{
	for (int i = 0; i < n; i++) {
		*now += waited + 10;
		spin_record(s, *now, waited, false);
	}
}

static void
test_parse(void **state)
{
	(void)state;
	assert_int_equal(spin_parse(NULL), SPIN_DEFAULT);
	assert_int_equal(spin_parse(""), SPIN_DEFAULT);
	assert_int_equal(spin_parse("0"), 0);
	assert_int_equal(spin_parse("50"), 50);
	assert_int_equal(spin_parse("auto"), -1);
	assert_int_equal(spin_parse("-5"), SPIN_DEFAULT);
	assert_int_equal(spin_parse("autox"), SPIN_DEFAULT);
	assert_int_equal(spin_parse("12x"), SPIN_DEFAULT);
	assert_int_equal(spin_parse(" 12"), SPIN_DEFAULT);
	assert_int_equal(spin_parse("99999999999999999999999"),
	    SPIN_FIXED_MAX_US);
	assert_int_equal(spin_parse("2000000"), SPIN_FIXED_MAX_US);
	/* the default is the adaptive spin, in either protocol */
	assert_int_equal(SPIN_DEFAULT, spin_parse("auto"));
}

static void
test_fixed(void **state)
{
	struct spin s;
	long now = 1000000;

	(void)state;
	spin_init(&s, "0", 4);
	waits(&s, &now, 5, 50);
	assert_int_equal(spin_budget(&s, now), 0);
	spin_init(&s, "70", 1);
	waits(&s, &now, 100000, 50);
	spin_record(&s, now, 5, true);
	assert_int_equal(spin_budget(&s, now), 70);
}

static void
test_short_waits_spin(void **state)
{
	struct spin s;
	long now = 1000000, b;

	(void)state;
	spin_init(&s, "auto", 2);
	assert_int_equal(spin_budget(&s, now), 0);	/* neutral start */
	waits(&s, &now, 30, 1);
	assert_true(spin_budget(&s, now) > 0);
	waits(&s, &now, 30, 40);
	b = spin_budget(&s, now);
	assert_true(b >= 50 && b <= 70);		/* about twice 30 */
	waits(&s, &now, 2, 60);
	assert_int_equal(spin_budget(&s, now), SPIN_MIN_US);
	waits(&s, &now, 90, 60);
	assert_int_equal(spin_budget(&s, now), SPIN_MAX_US);
}

static void
test_long_waits_back_off(void **state)
{
	struct spin s;
	long now = 1000000;
	int n;

	(void)state;
	spin_init(&s, "auto", 2);
	waits(&s, &now, 30, 100);
	assert_true(spin_budget(&s, now) > 0);
	for (n = 0; spin_budget(&s, now) > 0; n++) {
		assert_true(n < 10);
		waits(&s, &now, 5000, 1);
	}
	assert_true(n >= 3);		/* one long wait is not enough */
	assert_true(n < 5);
	waits(&s, &now, 5000, 200);
	assert_int_equal(spin_budget(&s, now), 0);
	/* Short waits again (measured through sleeps): back to spinning. */
	for (n = 0; spin_budget(&s, now) == 0; n++) {
		assert_true(n < 16);
		waits(&s, &now, 40, 1);
	}
	/* Mixed: one long wait in ten still spins. */
	for (n = 0; n < 200; n++)
		waits(&s, &now, n % 10 ? 30 : 5000, 1);
	assert_true(spin_budget(&s, now) > 0);
	/* One in two long: no. */
	for (n = 0; n < 200; n++)
		waits(&s, &now, n % 2 ? 30 : 5000, 1);
	assert_int_equal(spin_budget(&s, now), 0);
}

static void
test_contention(void **state)
{
	struct spin s;
	long now = 1000000;

	(void)state;
	spin_init(&s, "auto", 2);
	waits(&s, &now, 30, 100);
	assert_true(spin_budget(&s, now) > 0);
	spin_record(&s, now, 30, true);
	assert_int_equal(spin_budget(&s, now), 0);
	assert_int_equal(spin_budget(&s, now + SPIN_HOLDOFF_MIN_US - 1), 0);
	/* Short waits during the holdoff do not end it... */
	waits(&s, &now, 30, 10);
	assert_int_equal(spin_budget(&s, now), 0);
	/* ...time does. */
	now += SPIN_HOLDOFF_MIN_US;
	assert_true(spin_budget(&s, now) > 0);
	/* Contention again at once: twice as long. */
	spin_record(&s, now, 30, true);
	assert_int_equal(spin_budget(&s, now + SPIN_HOLDOFF_MIN_US), 0);
	assert_true(spin_budget(&s, now + 2 * SPIN_HOLDOFF_MIN_US) > 0);
	/* Persistent contention: capped at the longest holdoff. */
	for (int i = 0; i < 30; i++) {
		now += SPIN_HOLDOFF_MAX_US;
		spin_record(&s, now, 30, true);
	}
	assert_int_equal(spin_budget(&s, now + SPIN_HOLDOFF_MAX_US - 1), 0);
	assert_true(spin_budget(&s, now + SPIN_HOLDOFF_MAX_US) > 0);
	/* A holdoff from another clock (restored elsewhere) is over. */
	spin_record(&s, now, 30, true);
	assert_true(spin_budget(&s, now - 10L * SPIN_HOLDOFF_MAX_US) > 0);
	/* One CPU: never. */
	spin_init(&s, "auto", 1);
	waits(&s, &now, 30, 100);
	assert_int_equal(spin_budget(&s, now), 0);
}

/* A wait driven through spin_begin/next/end as transport.c does. */
static void
test_wait_sequence(void **state)
{
	struct spin s;
	struct spin_wait w;
	long now = 1000000;
	int i;

	(void)state;
	spin_init(&s, "auto", 2);
	waits(&s, &now, 30, 100);

	/* Data within the spin: only polls that do not sleep. */
	spin_begin(&s, &w, now);
	assert_true(w.budget > 0);
	for (i = 0; i < 10; i++) {
		assert_int_equal(spin_next(&w, now, -1), 0);
		now += 2;
	}
	spin_end(&s, &w, now, true);
	assert_true(spin_budget(&s, now) > 0);

	/* A long wait: polls without sleeping up to the budget, then the
	   caller's timeout, again after an EINTR. */
	spin_begin(&s, &w, now);
	while (spin_next(&w, now, 250) == 0) {
		assert_true(now - w.start <= w.budget);
		now += 3;
	}
	assert_true(w.slept);
	now += 40000;					/* an EINTR */
	assert_int_equal(spin_next(&w, now, 250), 250);
	now += 250000;
	spin_end(&s, &w, now, false);		/* timed out */
	assert_true(s.holdoff_until == 0);	/* the sleep is no contention */

	/* A gap between two polls of the spin: contention. */
	spin_begin(&s, &w, now);
	assert_true(w.budget > 0);
	assert_int_equal(spin_next(&w, now, -1), 0);
	now += SPIN_JUMP_US + 5;
	spin_next(&w, now, -1);
	now += 10;
	spin_next(&w, now, -1);
	spin_end(&s, &w, now, true);
	assert_int_equal(spin_budget(&s, now), 0);

	/* Budget 0: one look without sleeping, then the timeout. */
	spin_begin(&s, &w, now);
	assert_int_equal(w.budget, 0);
	assert_int_equal(spin_next(&w, now, -1), 0);
	assert_int_equal(spin_next(&w, now + 1, -1), -1);

	/* Fixed 0: straight to the caller's timeout, as before spin.c. */
	spin_init(&s, "0", 2);
	spin_begin(&s, &w, now);
	assert_int_equal(spin_next(&w, now, 7), 7);
	spin_end(&s, &w, now + 10, true);

	/* A first look that finds work is no wait: nothing learnt. */
	spin_init(&s, "auto", 2);
	waits(&s, &now, 30, 100);
	long hit = s.hit, est8 = s.est8;
	spin_begin(&s, &w, now);
	spin_next(&w, now, -1);
	spin_end(&s, &w, now + 1, true);
	assert_int_equal(s.hit, hit);
	assert_int_equal(s.est8, est8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_short_waits_spin),
		cmocka_unit_test(test_long_waits_back_off),
		cmocka_unit_test(test_contention),
		cmocka_unit_test(test_wait_sequence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
