/*
 * test_pollback.c: the backoff of fruitless non-blocking calls
 * (libmpi-lite/pollback.c, included directly) on synthetic histories: a
 * tight polling loop on a contended node sleeps after two calls, the
 * sleep doubling up to the cap (a direct job's yields first for a while,
 * unless its yields lose the core to another program, then it holds
 * off); on a free node it returns at once, then
 * yields, then sleeps; a call that finds something, or one the program
 * reaches after computing a while, starts afresh; a program computing
 * between its polls never waits; slow calls (a relay Iprobe's round
 * trip) still make a run; MPIV_POLL_BACKOFF parsing, `off`, a fixed cap.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../libmpi-lite/pollback.c"

/* how long a yield takes (another task may hold the core) */
static long yield_us = 1;

/*
 * One call: the program runs gap µs after the previous return, the call
 * takes lib µs to decide, found or not; then it yields (yield_us) or
 * sleeps the whole sleep (nothing arrives). Returns the action, the sleep
 * in *us.
 */
static enum pb_action
call(struct pollback *pb, long *now, long gap, long lib, bool found,
    long *us)
{
	enum pb_action a;
	long entry = *now + gap;

	*now = entry + lib;
	a = pollback_next(pb, entry, *now, found, us);
	if (a == PB_YIELD)
		*now += yield_us;
	else if (a == PB_SLEEP)
		*now += *us;
	pollback_returned(pb, *now);
	return a;
}

static void
test_parse(void **state)
{
	(void)state;
	assert_int_equal(pollback_parse(NULL), PB_CAP_DEFAULT_US);
	assert_int_equal(pollback_parse(""), PB_CAP_DEFAULT_US);
	assert_int_equal(pollback_parse("auto"), PB_CAP_DEFAULT_US);
	assert_int_equal(pollback_parse("off"), 0);
	assert_int_equal(pollback_parse("0"), 0);
	assert_int_equal(pollback_parse("50"), 50);
	assert_int_equal(pollback_parse("10000"), PB_CAP_MAX_US);
	assert_int_equal(pollback_parse("99999999999999999999999"),
	    PB_CAP_MAX_US);
	assert_int_equal(pollback_parse("-5"), PB_CAP_DEFAULT_US);
	assert_int_equal(pollback_parse("12x"), PB_CAP_DEFAULT_US);
	assert_int_equal(pollback_parse("offx"), PB_CAP_DEFAULT_US);
	assert_int_equal(pollback_parse(" 12"), PB_CAP_DEFAULT_US);
}

static void
test_contended_init(void **state)
{
	struct pollback pb;

	(void)state;
	pollback_init(&pb, NULL, 2, 4, false);
	assert_true(pb.contended);
	pollback_init(&pb, NULL, 2, 2, false);
	assert_true(pb.contended);
	pollback_init(&pb, NULL, 1, 1, false);
	assert_true(pb.contended);
	pollback_init(&pb, NULL, 8, 4, false);
	assert_false(pb.contended);
}

/* Contended: two calls at once, then sleeps 10, 20, 40, ... up to the
   cap, and a found call resets the backoff. */
static void
test_contended_run(void **state)
{
	struct pollback pb;
	long now = 1000000, us, want = PB_SLEEP_MIN_US;

	(void)state;
	pollback_init(&pb, NULL, 2, 4, false);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
		assert_int_equal(us, want);
		assert_true(us <= PB_CAP_DEFAULT_US);
		want = want * 2 < PB_CAP_DEFAULT_US ? want * 2 :
		    PB_CAP_DEFAULT_US;
	}
	assert_int_equal(us, PB_CAP_DEFAULT_US);
	/* Found: no wait, and the next run starts from the beginning. */
	assert_int_equal(call(&pb, &now, 0, 1, true, &us), PB_NONE);
	assert_int_equal(us, 0);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
	assert_int_equal(us, PB_SLEEP_MIN_US);
}

/* A program computing PB_TIGHT_US or more between its polls is never
   made to wait, contended or not; just under it, it is a polling loop. */
static void
test_computing_program(void **state)
{
	struct pollback pb;
	long now = 5000, us;
	int sleeps = 0;

	(void)state;
	for (int c = 0; c < 2; c++) {
		pollback_init(&pb, NULL, 2, c ? 1 : 4, false);
		for (int i = 0; i < 10000; i++)
			assert_int_equal(call(&pb, &now, PB_TIGHT_US, 1,
			    false, &us), PB_NONE);
	}
	pollback_init(&pb, NULL, 2, 4, false);
	for (int i = 0; i < 100; i++)
		if (call(&pb, &now, PB_TIGHT_US - 1, 1, false, &us) ==
		    PB_SLEEP)
			sleeps++;
	assert_int_equal(sleeps, 100 - PB_FREE_POLLS);
	/* One long stretch of computing in a run starts it afresh. */
	assert_int_equal(call(&pb, &now, 500, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
	assert_int_equal(us, PB_SLEEP_MIN_US);
}

/* Contended, direct job: two calls at once, then yields until
   PB_CYIELD_US of the run, then sleeps with the backoff; a call that
   found something starts a new run. */
static void
test_contended_direct(void **state)
{
	struct pollback pb;
	long now = 5000, us, start;
	int nyield = 0;
	enum pb_action a;

	(void)state;
	yield_us = 1;
	pollback_init(&pb, NULL, 2, 4, true);
	start = now;
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	while ((a = call(&pb, &now, 0, 1, false, &us)) == PB_YIELD)
		nyield++;
	assert_int_equal(a, PB_SLEEP);
	assert_int_equal(us, PB_SLEEP_MIN_US);
	assert_true(nyield > 50);
	assert_true(now - start >= PB_CYIELD_US);
	assert_int_equal(call(&pb, &now, 0, 1, true, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_YIELD);
	/* one CPU: never */
	pollback_init(&pb, NULL, 1, 4, true);
	call(&pb, &now, 0, 1, false, &us);
	call(&pb, &now, 0, 1, false, &us);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
}

/* A run starting at now (a found call first): its third call's action. */
static enum pb_action
third_call(struct pollback *pb, long *now)
{
	long us;

	call(pb, now, 0, 1, true, &us);
	call(pb, now, 0, 1, false, &us);
	call(pb, now, 0, 1, false, &us);
	return call(pb, now, 0, 1, false, &us);
}

/* A yield that lost the core (another program ran its time slice): the
   rest of the run sleeps; a second within PB_LOST_WINDOW_US stops the
   yields of every run for PB_HOLDOFF_US; one alone does not. */
static void
test_yield_lost(void **state)
{
	struct pollback pb;
	long now = 100000, us;

	(void)state;
	pollback_init(&pb, NULL, 2, 4, true);
	yield_us = PB_JUMP_US;
	assert_int_equal(third_call(&pb, &now), PB_YIELD);	/* lost */
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
	yield_us = 1;
	now += PB_LOST_WINDOW_US;
	assert_int_equal(third_call(&pb, &now), PB_YIELD);	/* once: noise */
	yield_us = PB_JUMP_US;
	assert_int_equal(third_call(&pb, &now), PB_YIELD);	/* lost */
	assert_int_equal(third_call(&pb, &now), PB_YIELD);	/* again */
	yield_us = 1;
	assert_int_equal(third_call(&pb, &now), PB_SLEEP);	/* held off */
	now += PB_HOLDOFF_US / 2;
	assert_int_equal(third_call(&pb, &now), PB_SLEEP);
	now += PB_HOLDOFF_US / 2;
	assert_int_equal(third_call(&pb, &now), PB_YIELD);
	/* uncontended runs hold off the same way */
	pollback_init(&pb, NULL, 8, 2, true);
	yield_us = PB_JUMP_US;
	for (int k = 0; k < 2; k++) {
		call(&pb, &now, 0, 1, true, &us);
		while (call(&pb, &now, 0, 1, false, &us) != PB_YIELD)
			;
	}
	yield_us = 1;
	call(&pb, &now, 0, 1, true, &us);
	for (int k = 0; k < 200; k++)
		assert_int_not_equal(call(&pb, &now, 0, 1, false, &us),
		    PB_YIELD);
}

/* Uncontended: at once for PB_SPIN_US of the run, then yields until
   PB_YIELD_US, then sleeps with the backoff. */
static void
test_uncontended_run(void **state)
{
	struct pollback pb;
	long now = 77, us, start;
	enum pb_action a, prev = PB_NONE;
	int nyield = 0;

	(void)state;
	pollback_init(&pb, "auto", 8, 2, false);
	start = now;
	for (;;) {
		a = call(&pb, &now, 0, 1, false, &us);
		/* the action of a call, by the run's length when decided */
		assert_true(a >= prev);
		if (a == PB_NONE)
			assert_true(now - start <= PB_SPIN_US + 1);
		if (a == PB_YIELD) {
			nyield++;
			assert_true(now - start > PB_SPIN_US);
		}
		if (a == PB_SLEEP)
			break;
		prev = a;
	}
	assert_true(nyield > 100);
	assert_true(now - start >= PB_YIELD_US);
	assert_int_equal(us, PB_SLEEP_MIN_US);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
	assert_int_equal(us, 2 * PB_SLEEP_MIN_US);
	/* found: back to returning at once */
	assert_int_equal(call(&pb, &now, 0, 1, true, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
}

/* Slow calls (a relay Iprobe's round trip to the Channel Memory) with
   the program polling right away are a run all the same. */
static void
test_slow_calls(void **state)
{
	struct pollback pb;
	long now = 0, us;

	(void)state;
	pollback_init(&pb, NULL, 2, 4, false);
	assert_int_equal(call(&pb, &now, 1, 300, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 1, 300, false, &us), PB_NONE);
	assert_int_equal(call(&pb, &now, 1, 300, false, &us), PB_SLEEP);
	assert_int_equal(call(&pb, &now, 1, 300, false, &us), PB_SLEEP);
	assert_int_equal(us, 2 * PB_SLEEP_MIN_US);
}

/* off never waits; a fixed cap bounds every sleep; a clock that went
   back (a process restored elsewhere) starts a new run. */
static void
test_off_cap_clock(void **state)
{
	struct pollback pb;
	long now = 1000, us;

	(void)state;
	pollback_init(&pb, "off", 1, 64, false);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	pollback_init(&pb, "0", 2, 4, false);
	for (int i = 0; i < 100; i++)
		assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);

	pollback_init(&pb, "30", 2, 4, false);
	call(&pb, &now, 0, 1, false, &us);
	call(&pb, &now, 0, 1, false, &us);
	long want[] = { 10, 20, 30, 30, 30 };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_SLEEP);
		assert_int_equal(us, want[i]);
	}

	now = 1000000;
	pollback_init(&pb, NULL, 2, 4, false);
	for (int i = 0; i < 5; i++)
		call(&pb, &now, 0, 1, false, &us);
	assert_int_equal(pb.polls, 5);
	now -= 500000;
	assert_int_equal(call(&pb, &now, 0, 1, false, &us), PB_NONE);
	assert_int_equal(pb.polls, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_contended_init),
		cmocka_unit_test(test_contended_run),
		cmocka_unit_test(test_computing_program),
		cmocka_unit_test(test_contended_direct),
		cmocka_unit_test(test_yield_lost),
		cmocka_unit_test(test_uncontended_run),
		cmocka_unit_test(test_slow_calls),
		cmocka_unit_test(test_off_cap_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
