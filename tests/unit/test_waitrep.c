/*
 * test_waitrep.c: what a blocked rank tells (libmpi-lite/waitrep.c,
 * included directly; the transport is stubbed and keeps the WaitState
 * frames it is given). Real time: a wait is told after 1 s, so the test
 * takes about 4 s.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <time.h>

#include "../../libmpi-lite/waitrep.c"

/* ---- stubs ---- */

struct mpiv_state mpiv_state = { .initialized = true, .world_rank = 3,
	.world_size = 4 };

#define MAXF 16
static struct {
	int cm;
	uint64_t wait_no, moved;
	bool over;
	double waited_s;
	char what[400];
} frames[MAXF];
static int nframes;

int mpiv_tp_ncms(void) { return 2; }
int mpiv_tp_home(int world_rank) { return world_rank % 2; }
const char *
mpiv_coll_tag_name(int tag)
{
	return tag == 1 ? "MPI_Barrier" : NULL;
}
int
mpiv_tp_send(int cm, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req)
{
	const Mpiv__WaitState *ws = (const Mpiv__WaitState *)m;

	(void)payload;
	(void)paylen;
	(void)owned;
	(void)req;
	assert_int_equal(type, MPIV__MSG_TYPE__MSG_WAIT_STATE);
	assert_true(nframes < MAXF);
	frames[nframes].cm = cm;
	frames[nframes].wait_no = ws->wait_no;
	frames[nframes].moved = ws->moved;
	frames[nframes].over = ws->over;
	frames[nframes].waited_s = ws->waited_s;
	snprintf(frames[nframes].what, sizeof(frames[nframes].what), "%s",
	    ws->what != NULL ? ws->what : "");
	nframes++;
	return MPI_SUCCESS;
}

/* ---- a small world: 4 ranks, and a communicator of world ranks 2, 0 ---- */

static int world_of_sub[] = { 2, 0 };
static struct mpiv_group gworld = { .size = 4, .rank = 3 };
static struct mpiv_group gsub = { .size = 2, .rank = 0, .world = world_of_sub };
static struct mpiv_comm cworld = { .context = 0, .size = 4, .group = &gworld,
	.name = "MPI_COMM_WORLD" };
static struct mpiv_comm csub = { .context = 4, .size = 2, .group = &gsub };

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void
req_init(struct mpiv_request *r, enum mpiv_req_kind kind, MPI_Comm comm,
    uint32_t context, int peer, int tag)
{
	memset(r, 0, sizeof(*r));
	r->magic = MPIV_REQ_MAGIC;
	r->kind = kind;
	r->active = true;
	r->comm = comm;
	r->context = context;
	r->peer = peer;
	r->tag = tag;
}

/* A wait shorter than a second is not told; a longer one once a second,
   then `over`; the texts name world ranks, tags and communicators. */
static void
test_wait(void **state)
{
	struct mpiv_request r, *rp = &r;
	int64_t i;

	(void)state;
	nframes = 0;
	static int world_ids[] = { 0, 1, 2, 3 };
	gworld.world = world_ids;

	req_init(&r, MPIV_REQ_RECV, &cworld, 0, 1, 5);
	mpiv_waitrep_begin(NULL, &rp, 1);
	assert_true(mpiv_waitrep_tick() > 500);
	mpiv_waitrep_end();
	assert_int_equal(nframes, 0);	/* short: nothing */

	mpiv_waitrep_begin(NULL, &rp, 1);
	mpiv_waitrep_moved();
	sleep_ms(1050);
	i = mpiv_waitrep_tick();
	assert_true(i > 900 && i <= 1000);
	assert_int_equal(nframes, 1);
	assert_int_equal(frames[0].cm, 1);	/* home of rank 3 */
	assert_false(frames[0].over);
	assert_int_equal(frames[0].wait_no, 1);
	assert_int_equal(frames[0].moved, 1);
	assert_true(frames[0].waited_s >= 1.0);
	assert_string_equal(frames[0].what,
	    "for a message from rank 1 (tag 5, MPI_COMM_WORLD)");
	assert_true(mpiv_waitrep_tick() > 0);
	assert_int_equal(nframes, 1);	/* not again before a second */
	mpiv_waitrep_end();
	assert_int_equal(nframes, 2);
	assert_true(frames[1].over);
	assert_int_equal(frames[1].wait_no, 1);

	/* nested: the innermost describes; one wait; a send on a
	   sub-communicator names the world rank */
	req_init(&r, MPIV_REQ_SEND, &csub, 4, 0, 8);
	mpiv_waitrep_begin("MPI_Waitall", NULL, 0);
	mpiv_waitrep_begin(NULL, &rp, 1);
	sleep_ms(1050);
	(void)mpiv_waitrep_tick();
	assert_int_equal(nframes, 3);
	assert_int_equal(frames[2].wait_no, 2);
	assert_string_equal(frames[2].what, "for rank 2 to receive its "
	    "message (tag 8, a communicator of 2 ranks)");
	mpiv_waitrep_end();
	assert_int_equal(nframes, 3);	/* the outer wait goes on */
	mpiv_waitrep_end();
	assert_int_equal(nframes, 4);
	assert_true(frames[3].over);
}

/* What each kind of wait says. */
static void
test_texts(void **state)
{
	struct mpiv_request a, b, *two[2] = { &a, &b };
	char what[400];

	(void)state;
	req_init(&a, MPIV_REQ_RECV, &cworld, MPIV_COLL_CONTEXT(&cworld), 2, 1);
	waitrep_depth = 0;
	mpiv_waitrep_begin(NULL, two, 1);
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "in MPI_Barrier on MPI_COMM_WORLD, for "
	    "rank 2 to send its part");
	mpiv_waitrep_end();

	req_init(&a, MPIV_REQ_RECV, &cworld, 0, MPI_ANY_SOURCE, MPI_ANY_TAG);
	req_init(&b, MPIV_REQ_RECV, &cworld, 0, 1, 4);
	mpiv_waitrep_begin("MPI_Waitany", two, 2);
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "in MPI_Waitany over 2 requests, the first "
	    "for a message from any rank (any tag, MPI_COMM_WORLD)");
	a.complete = true;	/* one left: named alone */
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "in MPI_Waitany for a message from rank 1 "
	    "(tag 4, MPI_COMM_WORLD)");
	mpiv_waitrep_end();

	req_init(&a, MPIV_REQ_PROBE, &cworld, 0, 0, 0);
	a.post_src = 3;
	a.post_tag = -1;
	mpiv_waitrep_begin(NULL, two, 1);
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "in a probe for a message from rank 3 "
	    "(any tag, MPI_COMM_WORLD)");
	mpiv_waitrep_end();

	req_init(&a, MPIV_REQ_COLL, &cworld, 0, 0, 0);
	mpiv_waitrep_begin(NULL, two, 1);
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "for a non-blocking collective on "
	    "MPI_COMM_WORLD to end");
	mpiv_waitrep_end();

	/* a wait for one request inside MPI_Waitall is told as the
	   Waitall's */
	req_init(&a, MPIV_REQ_RECV, &cworld, 0, 1, 3);
	req_init(&b, MPIV_REQ_RECV, &cworld, 0, 1, 4);
	mpiv_waitrep_begin("MPI_Waitall", two, 2);
	mpiv_waitrep_begin(NULL, two, 1);
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "in MPI_Waitall over 2 requests, the first "
	    "for a message from rank 1 (tag 3, MPI_COMM_WORLD)");
	mpiv_waitrep_end();
	mpiv_waitrep_end();

	mpiv_waitrep_begin("MPI_Finalize, for every rank to reach it", NULL,
	    0);
	waitrep_what(what, sizeof(what));
	assert_string_equal(what, "in MPI_Finalize, for every rank to reach "
	    "it");
	mpiv_waitrep_end();
}

/* A run of fruitless polls is a wait once it lasts a second; a call
   that finds something ends it. */
static void
test_polls(void **state)
{
	long start;

	(void)state;
	nframes = 0;
	start = (long)mono_us();
	mpiv_waitrep_poll(start);
	sleep_ms(500);
	mpiv_waitrep_poll(start);
	assert_int_equal(nframes, 0);
	sleep_ms(600);
	mpiv_waitrep_poll(start);
	assert_int_equal(nframes, 1);
	assert_false(frames[0].over);
	assert_string_equal(frames[0].what, "polling (MPI_Test, MPI_Iprobe, "
	    "...) and finds nothing");
	mpiv_waitrep_poll(start);
	assert_int_equal(nframes, 1);
	mpiv_waitrep_poll(-1);
	assert_int_equal(nframes, 2);
	assert_true(frames[1].over);
	assert_int_equal(frames[1].wait_no, frames[0].wait_no);
	/* the polling call named: MPI_Testany over requests, MPI_Iprobe */
	{
		struct mpiv_request a, b, *two[2] = { &a, &b };
		char what[400];

		req_init(&a, MPIV_REQ_RECV, &cworld, 0, 1, 5);
		req_init(&b, MPIV_REQ_RECV, &cworld, 0, 2, 5);
		mpiv_waitrep_polling("MPI_Testany", two, 2);
		waitrep_what(what, sizeof(what));
		assert_string_equal(what, "for one of 2 requests, the first "
		    "for a message from rank 1 (tag 5, MPI_COMM_WORLD), "
		    "polling with MPI_Testany");
		mpiv_waitrep_probing(MPI_ANY_SOURCE, 6, &cworld);
		waitrep_what(what, sizeof(what));
		assert_string_equal(what, "for a message from any rank (tag "
		    "6, MPI_COMM_WORLD), polling with MPI_Iprobe");
		mpiv_waitrep_polled();
		waitrep_what(what, sizeof(what));
		assert_string_equal(what, "polling (MPI_Test, MPI_Iprobe, "
		    "...) and finds nothing");
	}
	/* a new short run: nothing */
	mpiv_waitrep_poll((long)mono_us());
	mpiv_waitrep_poll(-1);
	assert_int_equal(nframes, 2);
	/* a program that computes between its polls starts a new run at
	   each (pollback.c): never a wait, however long it goes on */
	for (int k = 0; k < 12; k++) {
		mpiv_waitrep_poll((long)mono_us());
		sleep_ms(100);
	}
	assert_int_equal(nframes, 2);
	/* a told run that gives way to another ends (over) */
	start = (long)mono_us();
	mpiv_waitrep_poll(start);
	sleep_ms(1050);
	mpiv_waitrep_poll(start);
	assert_int_equal(nframes, 3);
	mpiv_waitrep_poll((long)mono_us());
	assert_int_equal(nframes, 4);
	assert_true(frames[3].over);
	mpiv_waitrep_poll(-1);
	assert_int_equal(nframes, 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_polls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
