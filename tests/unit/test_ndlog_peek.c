/*
 * test_ndlog_peek.c: mpiv_ndlog_peek (ndlog.c, included directly), which
 * the steps of non-blocking collectives use to see the next logged call
 * without taking it: it names exactly the outcome mpiv_ndlog_next would
 * take (wildcard matches skipped, a folded run counted by its repeat,
 * calls already behind skipped), changes nothing, and says NULL once no
 * call is left, after which mpiv_ndlog_next decides live.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../libmpi-lite/ndlog.c"

/* ---- stubs for what ndlog.c calls in the rest of the library ---- */

struct mpiv_state mpiv_state = { .initialized = true, .world_rank = 0,
	.world_size = 2 };

int mpiv_tp_home(int world_rank) { (void)world_rank; return 0; }
int mpiv_tp_progress(int timeout_ms) { (void)timeout_ms; return MPI_SUCCESS; }
int
mpiv_tp_send_urgent(int cm, uint16_t type, const ProtobufCMessage *m)
{
	(void)cm;
	(void)type;
	(void)m;
	return MPI_SUCCESS;
}
int mpiv_tp_wait_urgent(int cm) { (void)cm; return MPI_SUCCESS; }
void mpiv_tp_set_error(const char *fmt, ...) { (void)fmt; }

/* ---- a log to replay ---- */

static Mpiv__NdOutcome outs[6];
static Mpiv__NdOutcome *ptrs[6];

static void
out_set(int i, uint64_t nd_no, uint32_t kind, uint64_t repeat,
    uint64_t post_no)
{
	mpiv__nd_outcome__init(&outs[i]);
	outs[i].nd_no = nd_no;
	outs[i].kind = kind;
	outs[i].repeat = repeat;
	outs[i].post_no = post_no;
	outs[i].flag = kind != MPIV_ND_TEST;
	ptrs[i] = &outs[i];
}

static int
setup(void **state)
{
	(void)state;
	/* 1-3: three Test misses; 4: a wildcard match; 5: nbc steps;
	   6: Testany; 7: nbc steps; 8: a wildcard match */
	out_set(0, 1, MPIV_ND_TEST, 3, 0);
	out_set(1, 4, MPIV_ND_BIND, 0, 9);
	out_set(2, 5, MPIV_ND_NBC, 0, 2);
	out_set(3, 6, MPIV_ND_TESTANY, 0, 0);
	out_set(4, 7, MPIV_ND_NBC, 0, 3);
	out_set(5, 8, MPIV_ND_BIND, 0, 12);
	{
		/* as the transport hands it over: unpacked (ndlog frees it) */
		Mpiv__NdLog chunk = MPIV__ND_LOG__INIT, *got;
		uint8_t buf[512];
		size_t len;

		chunk.n_outcomes = 6;
		chunk.outcomes = ptrs;
		chunk.last = true;
		len = mpiv__nd_log__pack(&chunk, buf);
		got = mpiv__nd_log__unpack(NULL, len, buf);
		assert_non_null(got);
		mpiv_ndlog_init();
		assert_int_equal(mpiv_ndlog_load(got), 0);
	}
	return 0;
}

/* The peeked outcome is the one next() takes, and peeking twice does
   not move anything. */
static void
take(uint32_t kind, uint64_t nd_no)
{
	const Mpiv__NdOutcome *p = mpiv_ndlog_peek(), *o = NULL;

	assert_non_null(p);
	assert_ptr_equal(mpiv_ndlog_peek(), p);
	assert_int_equal(p->kind, kind);
	assert_int_equal(mpiv_ndlog_next(kind, &o), 1);
	assert_ptr_equal(o, p);
	assert_int_equal(mpiv_ndlog_current(), nd_no);
}

static void
test_peek_follows_next(void **state)
{
	const Mpiv__NdOutcome *o = NULL;

	(void)state;
	take(MPIV_ND_TEST, 1);
	take(MPIV_ND_TEST, 2);
	take(MPIV_ND_TEST, 3);
	/* the match at 4 is skipped: the steps at 5 come next */
	assert_int_equal(mpiv_ndlog_peek()->post_no, 2);
	take(MPIV_ND_NBC, 5);
	take(MPIV_ND_TESTANY, 6);
	take(MPIV_ND_NBC, 7);
	/* only a match is left: no call, live from here */
	assert_null(mpiv_ndlog_peek());
	assert_int_equal(mpiv_ndlog_next(MPIV_ND_NBC, &o), 0);
	assert_int_equal(mpiv_ndlog_current(), 9);
	assert_null(mpiv_ndlog_peek());
	/* the logged matches stay findable, and the highest is known */
	assert_int_equal(mpiv_ndlog_bind_max(), 12);
	mpiv_ndlog_fini();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_peek_follows_next, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
