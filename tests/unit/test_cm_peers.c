/*
 * test_cm_peers.c: a real Channel Memory answering PeerLookup
 * (channel-memory/peers.c, docs/DIRECT.md): the address and incarnation
 * of a connected peer that takes connections, with the pair key of the
 * asker and that peer; "not found" for a peer not connected, without an
 * address, out of range, or the asker itself; a newer incarnation's
 * address replacing the older one's; a lookup before Hello refused.
 */
#include "cm_harness.h"

#include "auth.h"

static uint8_t token[AUTH_TOKEN_LEN];

static void
setup_token_job(const char *job, int nranks)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;
	Mpiv__JobStatus *st;

	for (size_t i = 0; i < sizeof(token); i++)
		token[i] = (uint8_t)(i * 7 + 3);
	js.job_id = (char *)job;
	js.nranks = nranks;
	js.ncms = 1;
	js.job_token.data = token;
	js.job_token.len = sizeof(token);
	st = job_setup(&js);
	assert_string_equal(st->state, "ready");
	frame_free_meta(&st->base);
}

/* A rank's connection, saying where it listens ("" : nowhere). */
static int
rank_conn(const char *job, int rank, uint32_t inc, const char *addr)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__HelloReply *hr;
	int fd = dial();

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = (char *)job;
	h.rank = rank;
	h.incarnation = inc;
	h.name = "test";
	h.listen_addr = (char *)addr;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
	hr = (Mpiv__HelloReply *)expect(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    NULL, NULL);
	assert_true(hr->ok);
	frame_free_meta(&hr->base);
	skip_nd_log(fd);
	return fd;
}

static Mpiv__PeerInfo *
lookup(int fd, int rank)
{
	Mpiv__PeerLookup pl = MPIV__PEER_LOOKUP__INIT;
	Mpiv__PeerInfo *pi;

	pl.rank = rank;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_PEER_LOOKUP,
	    &pl.base, NULL, 0, TMO), 0);
	pi = (Mpiv__PeerInfo *)expect(fd, MPIV__MSG_TYPE__MSG_PEER_INFO, NULL,
	    NULL);
	assert_int_equal(pi->rank, rank);
	return pi;
}

static void
test_lookup(void **state)
{
	uint8_t want[AUTH_HASH_LEN];
	Mpiv__PeerInfo *pi;
	int r0, r1, r0b;

	setup_token_job("peers", 4);
	r0 = rank_conn("peers", 0, 1, "10.1.2.3:4000");
	r1 = rank_conn("peers", 1, 1, "");

	/* rank 1 asks for rank 0: found, with their pair key */
	pi = lookup(r1, 0);
	assert_true(pi->found);
	assert_string_equal(pi->addr, "10.1.2.3:4000");
	assert_int_equal(pi->incarnation, 1);
	auth_pair_inc_key(token, sizeof(token), 0, 1, 1, 1, want);
	assert_int_equal(pi->pair_key.len, AUTH_HASH_LEN);
	assert_memory_equal(pi->pair_key.data, want, AUTH_HASH_LEN);
	frame_free_meta(&pi->base);

	/* rank 0 asks for rank 1, which takes no connections */
	pi = lookup(r0, 1);
	assert_false(pi->found);
	assert_string_equal(pi->error, "takes no connections");
	assert_int_equal(pi->pair_key.len, 0);
	frame_free_meta(&pi->base);

	/* not connected, out of range, itself */
	pi = lookup(r0, 2);
	assert_false(pi->found);
	assert_string_equal(pi->error, "not connected now");
	frame_free_meta(&pi->base);
	pi = lookup(r0, 4);
	assert_false(pi->found);
	assert_non_null(strstr(pi->error, "no peer rank 4"));
	frame_free_meta(&pi->base);
	pi = lookup(r0, -1);
	assert_false(pi->found);
	frame_free_meta(&pi->base);
	pi = lookup(r0, 0);
	assert_false(pi->found);
	frame_free_meta(&pi->base);

	/* incarnation 2 of rank 0 elsewhere: its address, not the old one,
	   and a pair key of the new incarnation (the old one opens no link) */
	r0b = rank_conn("peers", 0, 2, "10.9.9.9:5000");
	expect_closed(r0);
	pi = lookup(r1, 0);
	assert_true(pi->found);
	assert_string_equal(pi->addr, "10.9.9.9:5000");
	assert_int_equal(pi->incarnation, 2);
	assert_int_equal(pi->pair_key.len, AUTH_HASH_LEN);
	assert_memory_not_equal(pi->pair_key.data, want, AUTH_HASH_LEN);
	auth_pair_inc_key(token, sizeof(token), 1, 1, 0, 2, want);
	assert_memory_equal(pi->pair_key.data, want, AUTH_HASH_LEN);
	frame_free_meta(&pi->base);

	/* gone: not found */
	close(r0b);
	for (int i = 0; i < 100; i++) {
		pi = lookup(r1, 0);
		if (!pi->found)
			break;
		frame_free_meta(&pi->base);
		pi = NULL;
		usleep(10000);
	}
	assert_non_null(pi);
	assert_false(pi->found);
	frame_free_meta(&pi->base);
	close(r1);
}

/* A PeerLookup before Hello is a protocol error: the CM closes. */
static void
test_lookup_before_hello(void **state)
{
	Mpiv__PeerLookup pl = MPIV__PEER_LOOKUP__INIT;
	int fd = dial();

	pl.rank = 0;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_PEER_LOOKUP,
	    &pl.base, NULL, 0, TMO), 0);
	expect_closed(fd);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_before_hello),
	};

	(void)expect_silence;	/* the harness's, unused here */
	(void)refused;
	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	log_init("test_cm_peers", LOG_LEVEL_WARN);
	return cmocka_run_group_tests(tests, start_cm, stop_cm);
}
