/*
 * test_match.c: the matching engine (runtime/match.c) alone:
 * ANY_SOURCE / ANY_TAG in arrival order, non-overtaking per sender,
 * posting order, contexts, probes, cancel, duplicates.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "match.h"

static struct match_msg *
mk(uint32_t ctx, int32_t src, int32_t tag)
{
	struct match_msg *m = calloc(1, sizeof(*m));
	m->context = ctx;
	m->src = src;
	m->tag = tag;
	return m;
}

static struct match_req
rq(uint64_t id, uint32_t ctx, int32_t src, int32_t tag)
{
	struct match_req r = { .req_id = id, .context = ctx, .source = src,
	    .tag = tag };
	return r;
}

static void
free_cb(struct match_msg *m, void *arg)
{
	(*(int *)arg)++;
	free(m);
}

static void
test_unexpected_then_post(void **state)
{
	struct match_queue q;
	struct match_msg *a = mk(0, 1, 5), *b = mk(0, 2, 6), *c = mk(0, 1, 6);
	struct match_msg *out;
	struct match_req *pr, r;
	int freed = 0;

	assert_int_equal(match_init(&q, 4), 0);
	assert_null(match_arrive(&q, a, &pr));
	assert_null(pr);
	assert_null(match_arrive(&q, b, &pr));
	assert_null(match_arrive(&q, c, &pr));
	assert_int_equal(q.nunexpected, 3);

	r = rq(1, 0, MATCH_ANY, 6);		/* ANY_SOURCE, tag 6: b first */
	assert_int_equal(match_post(&q, &r, &out), 1);
	assert_ptr_equal(out, b);
	free(out);
	r = rq(2, 0, 1, MATCH_ANY);		/* src 1, ANY_TAG: a (non-overtaking) */
	assert_int_equal(match_post(&q, &r, &out), 1);
	assert_ptr_equal(out, a);
	free(out);
	r = rq(3, 1, 1, 6);			/* other context: no match */
	assert_int_equal(match_post(&q, &r, &out), 0);
	assert_null(out);
	assert_int_equal(q.nposted, 1);
	match_fini(&q, free_cb, &freed);
	assert_int_equal(freed, 1);		/* c */
}

static void
test_posting_order(void **state)
{
	struct match_queue q;
	struct match_msg *out, *m1 = mk(0, 3, 9), *m2 = mk(0, 3, 9);
	struct match_req r, *got, *pr;

	assert_int_equal(match_init(&q, 4), 0);
	r = rq(10, 0, 3, 9);
	assert_int_equal(match_post(&q, &r, &out), 0);
	r = rq(11, 0, MATCH_ANY, MATCH_ANY);
	assert_int_equal(match_post(&q, &r, &out), 0);
	r = rq(12, 0, 3, MATCH_ANY);
	assert_int_equal(match_post(&q, &r, &out), 0);

	got = match_arrive(&q, m1, &pr);
	assert_non_null(got);
	assert_int_equal(got->req_id, 10);
	free(got);
	got = match_arrive(&q, m2, &pr);
	assert_int_equal(got->req_id, 11);
	free(got);
	assert_int_equal(q.nposted, 1);
	free(m1);
	free(m2);
	match_fini(&q, NULL, NULL);
}

static void
test_probe(void **state)
{
	struct match_queue q;
	struct match_msg *out, *m = mk(0, 1, 4);
	struct match_req r, *got, *pr;

	assert_int_equal(match_init(&q, 2), 0);
	assert_null(match_probe(&q, 0, MATCH_ANY, MATCH_ANY));
	/* two blocking probes, then a receive, then a later probe */
	r = rq(1, 0, MATCH_ANY, 4);
	r.probe = true;
	assert_int_equal(match_post(&q, &r, &out), 0);
	r = rq(2, 0, 1, MATCH_ANY);
	r.probe = true;
	assert_int_equal(match_post(&q, &r, &out), 0);
	r = rq(3, 0, 1, 4);
	assert_int_equal(match_post(&q, &r, &out), 0);
	r = rq(4, 0, 1, 4);
	r.probe = true;
	assert_int_equal(match_post(&q, &r, &out), 0);

	got = match_arrive(&q, m, &pr);
	assert_non_null(got);
	assert_int_equal(got->req_id, 3);
	free(got);
	assert_non_null(pr);
	assert_int_equal(pr->req_id, 1);
	assert_non_null(pr->next);
	assert_int_equal(pr->next->req_id, 2);
	assert_null(pr->next->next);
	free(pr->next);
	free(pr);
	assert_int_equal(q.nposted, 1);		/* the later probe waits */
	free(m);

	/* a probe finds an unexpected message and leaves it there */
	m = mk(0, 0, 8);
	got = match_arrive(&q, m, &pr);		/* answers probe 4? no: tag 8 */
	assert_null(got);
	assert_null(pr);
	r = rq(5, 0, 0, 8);
	r.probe = true;
	assert_int_equal(match_post(&q, &r, &out), 1);
	assert_ptr_equal(out, m);
	assert_int_equal(q.nunexpected, 1);
	assert_ptr_equal(match_probe(&q, 0, 0, MATCH_ANY), m);
	int freed = 0;
	match_fini(&q, free_cb, &freed);
	assert_int_equal(freed, 1);
}

static void
test_cancel(void **state)
{
	struct match_queue q;
	struct match_msg *out;
	struct match_req r, *c;

	assert_int_equal(match_init(&q, 2), 0);
	r = rq(7, 0, 0, 0);
	assert_int_equal(match_post(&q, &r, &out), 0);
	r = rq(8, 0, 0, 0);
	assert_int_equal(match_post(&q, &r, &out), 0);
	c = match_cancel(&q, 7);
	assert_non_null(c);
	assert_int_equal(c->req_id, 7);
	free(c);
	assert_null(match_cancel(&q, 7));
	assert_null(match_cancel(&q, 99));
	assert_int_equal(q.nposted, 1);
	match_drop_posted(&q);
	assert_int_equal(q.nposted, 0);
	assert_null(match_cancel(&q, 8));
	match_fini(&q, NULL, NULL);
}

static void
test_seq(void **state)
{
	struct match_queue q;

	assert_int_equal(match_init(&q, 3), 0);
	assert_true(match_seq_accept(&q, 1, 1));
	assert_false(match_seq_accept(&q, 1, 1));	/* duplicate */
	assert_true(match_seq_accept(&q, 1, 2));
	assert_false(match_seq_accept(&q, 1, 1));	/* older */
	assert_true(match_seq_accept(&q, 2, 1));	/* other channel */
	assert_false(match_seq_accept(&q, 3, 1));	/* out of range */
	assert_false(match_seq_accept(&q, -1, 1));
	assert_int_equal(match_seq_last(&q, 1), 2);
	match_seq_rewind(&q, 1, 2);
	assert_int_equal(match_seq_last(&q, 1), 1);
	assert_true(match_seq_accept(&q, 1, 2));
	match_fini(&q, NULL, NULL);
	assert_int_equal(match_init(&q, 0), -1);
}

static void
test_remove(void **state)
{
	struct match_queue q;
	struct match_msg *a = mk(0, 0, 1), *b = mk(0, 0, 2), *c = mk(0, 0, 3);
	struct match_req *pr;

	assert_int_equal(match_init(&q, 1), 0);
	match_arrive(&q, a, &pr);
	match_arrive(&q, b, &pr);
	match_arrive(&q, c, &pr);
	match_remove(&q, b);
	assert_ptr_equal(match_probe(&q, 0, 0, MATCH_ANY), a);
	match_remove(&q, a);
	assert_ptr_equal(match_probe(&q, 0, 0, MATCH_ANY), c);
	match_remove(&q, c);
	assert_null(match_probe(&q, 0, MATCH_ANY, MATCH_ANY));
	assert_int_equal(q.nunexpected, 0);
	free(a);
	free(b);
	free(c);
	match_fini(&q, NULL, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unexpected_then_post),
		cmocka_unit_test(test_posting_order),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_seq),
		cmocka_unit_test(test_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
