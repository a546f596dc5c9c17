/*
 * test_cs_grant.c: which node may move which images at a checkpoint
 * server (checkpoint-server/cs_grant.c): the key a node's Hello must
 * prove, the current incarnation of each rank (raised by proofs, set by
 * the dispatcher) and the refusals, each with its reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../checkpoint-server/cs_priv.h"
#include "log.h"

static struct cs cs;

static int
setup(void **state)
{
	memset(&cs, 0, sizeof(cs));
	cs.keys.enabled = true;
	cs.keys.cluster = true;
	auth_key_set(&cs.keys.secret, "a cluster secret here", 21);
	auth_key_set(&cs.keys.node, "the node key of it..", 20);
	return 0;
}

static int
teardown(void **state)
{
	cs_grant_free(&cs);
	return 0;
}

/* The key a Hello picks: a node naming a job its image key. */
static void
test_keys(void **state)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	uint8_t want[AUTH_HASH_LEN];
	struct auth_key k;
	const char *why = NULL;

	h.role = MPIV__ROLE__ROLE_NODE;
	h.job_id = "7";
	h.rank = 3;
	h.incarnation = 2;
	assert_int_equal(cs_grant_auth_key(&cs, &h, &k, &why), 0);
	auth_image_key(&cs.keys.secret, "7", 3, 2, want);
	assert_int_equal(k.len, AUTH_HASH_LEN);
	assert_memory_equal(k.k, want, AUTH_HASH_LEN);

	h.rank = -1;	/* a bad rank or job id: no key fits */
	assert_int_equal(cs_grant_auth_key(&cs, &h, &k, &why), -1);
	assert_string_equal(why, "bad job id or rank");
	h.rank = 3;
	h.job_id = "../7";
	assert_int_equal(cs_grant_auth_key(&cs, &h, &k, &why), -1);

	h.job_id = "";	/* a node naming no job: K_node */
	assert_int_equal(cs_grant_auth_key(&cs, &h, &k, &why), 0);
	assert_memory_equal(k.k, cs.keys.node.k, cs.keys.node.len);
	h.role = MPIV__ROLE__ROLE_CS;	/* other roles: S */
	assert_int_equal(cs_grant_auth_key(&cs, &h, &k, &why), 0);
	assert_memory_equal(k.k, cs.keys.secret.k, cs.keys.secret.len);
}

/* Proofs raise the current incarnation, the dispatcher sets it. */
static void
test_current(void **state)
{
	Mpiv__ImageGrant g = MPIV__IMAGE_GRANT__INIT;

	assert_int_equal(cs_grant_current(&cs, "7", 3), 0);
	cs_grant_raise(&cs, "7", 3, 2);
	assert_int_equal(cs_grant_current(&cs, "7", 3), 2);
	cs_grant_raise(&cs, "7", 3, 1);
	assert_int_equal(cs_grant_current(&cs, "7", 3), 2);
	assert_int_equal(cs_grant_current(&cs, "7", 4), 0);
	assert_int_equal(cs_grant_current(&cs, "8", 3), 0);
	g.job_id = "7";
	g.rank = 3;
	g.incarnation = 5;
	cs_grant_from_dispatcher(&cs, &g);
	assert_int_equal(cs_grant_current(&cs, "7", 3), 5);
	g.incarnation = 1;	/* a job id used again starts over */
	cs_grant_from_dispatcher(&cs, &g);
	assert_int_equal(cs_grant_current(&cs, "7", 3), 1);
	cs_grant_raise(&cs, "../x", 0, 9);	/* not a job id: ignored */
	assert_int_equal(cs_grant_current(&cs, "../x", 0), 0);
	for (int r = 0; r < 300; r++)	/* the table grows */
		cs_grant_raise(&cs, "9", r, (uint32_t)r + 1);
	for (int r = 0; r < 300; r++)
		assert_int_equal(cs_grant_current(&cs, "9", r), r + 1);
	assert_int_equal(cs_grant_current(&cs, "7", 3), 1);
}

static void
test_allows(void **state)
{
	char why[320];

	cs_grant_raise(&cs, "7", 3, 2);
	assert_true(cs_grant_allows(&cs, "7", 3, 2, "7", 3, why, sizeof(why)));
	assert_true(cs_grant_allows(&cs, "7", 3, 4, "7", 3, why, sizeof(why)));
	assert_false(cs_grant_allows(&cs, "7", 3, 1, "7", 3, why, sizeof(why)));
	assert_string_equal(why, "stale incarnation 1 of job 7 rank 3 "
	    "(current is 2)");
	assert_false(cs_grant_allows(&cs, "7", 2, 2, "7", 3, why, sizeof(why)));
	assert_string_equal(why, "not allowed: this connection is for job 7 "
	    "rank 2, not job 7 rank 3");
	assert_false(cs_grant_allows(&cs, "7", 3, 2, "17", 3, why,
	    sizeof(why)));
	assert_string_equal(why, "not allowed: this connection is for job 7 "
	    "rank 3, not job 17 rank 3");
	assert_false(cs_grant_allows(&cs, NULL, -1, 0, "7", 3, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "not allowed: this connection proved no "
	    "incarnation of job 7 rank 3"));
	cs.keys.enabled = false;	/* no secret: anyone */
	assert_true(cs_grant_allows(&cs, NULL, -1, 0, "7", 3, why,
	    sizeof(why)));
}

/* Ended jobs' ranks go (JobEnd), and every job's the dispatcher no
   longer runs (CsJobs); the others' stay as they were. */
static void
test_forget(void **state)
{
	char *live[] = { "3", "12" };

	for (int32_t r = 0; r < 4; r++) {
		cs_grant_raise(&cs, "1", r, 2);
		cs_grant_raise(&cs, "3", r, 5);
		cs_grant_raise(&cs, "12", r, 1);
		cs_grant_raise(&cs, "120", r, 7);
	}
	assert_int_equal(cs_grant_forget(&cs, "12"), 4);
	assert_int_equal(cs_grant_forget(&cs, "12"), 0);
	for (int32_t r = 0; r < 4; r++) {
		assert_int_equal(cs_grant_current(&cs, "12", r), 0);
		assert_int_equal(cs_grant_current(&cs, "1", r), 2);
		assert_int_equal(cs_grant_current(&cs, "3", r), 5);
		assert_int_equal(cs_grant_current(&cs, "120", r), 7);
	}
	/* a job id used again starts from nothing */
	cs_grant_raise(&cs, "12", 0, 1);
	assert_int_equal(cs_grant_keep(&cs, live, 2), 8);
	for (int32_t r = 0; r < 4; r++) {
		assert_int_equal(cs_grant_current(&cs, "1", r), 0);
		assert_int_equal(cs_grant_current(&cs, "120", r), 0);
		assert_int_equal(cs_grant_current(&cs, "3", r), 5);
	}
	assert_int_equal(cs_grant_current(&cs, "12", 0), 1);
	assert_int_equal(cs_grant_keep(&cs, NULL, 0), 5);
	assert_int_equal(cs_grant_current(&cs, "3", 0), 0);
	/* and the table is used again after */
	cs_grant_raise(&cs, "4", 1, 3);
	assert_int_equal(cs_grant_current(&cs, "4", 1), 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_current, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
	};

	log_init("test_cs_grant", LOG_LEVEL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
