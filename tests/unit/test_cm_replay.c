/*
 * test_cm_replay.c: logging and replay at a real Channel Memory, driven
 * with raw frames. The test plays the dispatcher too (the CM dials it
 * with --dispatcher), so that ReplayDone can be seen. Covers: the logged
 * order replayed to a new incarnation (posts out of order relative to
 * events, ANY_SOURCE), the switch to live matching after the log,
 * duplicate drop on re-send, fencing mid-replay, NdRecord/NdAck/NdLog
 * (chunks, duplicates, gaps), divergence, cancels, relay-only mode,
 * probe-miss folding, a log over --max-memory, and a logged delivery
 * whose sender died mid-payload.
 */
#include "auth.h"
#include "cm_harness.h"

#include <sys/socket.h>

static int lfd = -1;		/* where the CM dials "the dispatcher" */
static int disp_fd = -1;	/* the CM's dispatcher link */
static char disp_addr[128];

/* ReplayDone frames seen while waiting for something else */
static Mpiv__ReplayDone *done_q[16];
static int ndone;

static int
start_all(void **state)
{
	struct pollfd pf;
	struct frame_hdr h;
	ProtobufCMessage *m;
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	uint8_t *p;
	const char *err;

	if ((lfd = net_listen("127.0.0.1:0", disp_addr, sizeof(disp_addr))) < 0)
		return -1;
	cm_dispatcher = disp_addr;
	if (start_cm(state) < 0)
		return -1;
	pf.fd = lfd;
	pf.events = POLLIN;
	if (poll(&pf, 1, 5000) != 1 || (disp_fd = accept(lfd, NULL, NULL)) < 0)
		return -1;
	{
		/* the CM waits for its server's Challenge before its Hello:
		   one without a secret or a cipher */
		Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
		uint8_t nonce[AUTH_NONCE_LEN] = { 7 };

		ch.version = AUTH_VERSION;
		ch.nonce.data = nonce;
		ch.nonce.len = sizeof(nonce);
		if (frame_write(disp_fd, MPIV__MSG_TYPE__MSG_CHALLENGE,
		    &ch.base, NULL, 0, TMO) < 0)
			return -1;
	}
	for (int i = 0; i < 2; i++) {	/* Hello, ServiceRegister */
		if (frame_read(disp_fd, &h, &m, &p, TMO, &err) < 0)
			return -1;
		frame_free_meta(m);
		free(p);
	}
	hr.ok = true;
	hr.version = FRAME_VERSION;
	return frame_write(disp_fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base,
	    NULL, 0, TMO);
}

static int
stop_all(void **state)
{
	int rc;

	for (int i = 0; i < ndone; i++)
		frame_free_meta(&done_q[i]->base);
	ndone = 0;
	rc = stop_cm(state);
	close(disp_fd);
	close(lfd);
	disp_fd = lfd = -1;
	return rc;
}

/* CmPressure frames seen on the dispatcher link (log spilled or full). */
static int npressure;

/* The next frame of `type` on the dispatcher link, stashing ReplayDone
   and counting CmPressure. */
static ProtobufCMessage *
disp_expect(uint16_t type)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err;

	for (;;) {
		if (frame_read(disp_fd, &h, &m, &p, TMO, &err) < 0)
			fail_msg("dispatcher link: %s (%s)", strerror(errno),
			    err ? err : "");
		free(p);
		if (h.type == type)
			return m;
		if (h.type == MPIV__MSG_TYPE__MSG_REPLAY_DONE && ndone < 16) {
			done_q[ndone++] = (Mpiv__ReplayDone *)m;
			continue;
		}
		if (h.type == MPIV__MSG_TYPE__MSG_CM_PRESSURE) {
			npressure++;
			frame_free_meta(m);
			continue;
		}
		fail_msg("dispatcher link: expected %s, got %s",
		    frame_type_name(type), frame_type_name(h.type));
	}
}

static Mpiv__ReplayDone *
expect_replay_done(int rank, uint32_t inc, uint64_t events)
{
	Mpiv__ReplayDone *rd;

	if (ndone > 0) {
		rd = done_q[0];
		memmove(done_q, done_q + 1, (size_t)--ndone * sizeof(*done_q));
	} else {
		rd = (Mpiv__ReplayDone *)disp_expect(
		    MPIV__MSG_TYPE__MSG_REPLAY_DONE);
	}
	assert_int_equal(rd->rank, rank);
	assert_int_equal(rd->incarnation, inc);
	assert_int_equal(rd->events, events);
	assert_true(rd->seconds >= 0 && rd->seconds < 10);
	return rd;
}

static void
no_replay_done(void)
{
	assert_int_equal(ndone, 0);
	expect_silence(disp_fd, 50);
}

static void
setup(const char *job, int nranks, bool relay_only)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;
	Mpiv__JobStatus *st;

	js.job_id = (char *)job;
	js.nranks = nranks;
	js.ncms = 1;
	js.relay_only = relay_only;
	assert_int_equal(frame_write(disp_fd, MPIV__MSG_TYPE__MSG_JOB_SETUP,
	    &js.base, NULL, 0, TMO), 0);
	st = (Mpiv__JobStatus *)disp_expect(MPIV__MSG_TYPE__MSG_JOB_STATUS);
	assert_string_equal(st->state, "ready");
	frame_free_meta(&st->base);
}

static Mpiv__CmStats *
stats(const char *job)
{
	Mpiv__CmStatsReq rq = MPIV__CM_STATS_REQ__INIT;

	rq.job_id = (char *)job;
	assert_int_equal(frame_write(disp_fd, MPIV__MSG_TYPE__MSG_CM_STATS_REQ,
	    &rq.base, NULL, 0, TMO), 0);
	return (Mpiv__CmStats *)disp_expect(MPIV__MSG_TYPE__MSG_CM_STATS);
}

/* Connects rank/inc (this CM is home of every rank): HelloReply, then
   NdLog frames until last. *events gets log_events; outcomes (if not
   NULL) every replayed outcome's nd_no and repeat, in order. */
static int
rank_hello(const char *job, int rank, uint32_t inc, uint64_t *events,
    uint64_t *nd_nos, size_t cap, size_t *n_nd, size_t *nframes)
{
	int fd = dial();
	Mpiv__HelloReply *hr = hello(fd, MPIV__ROLE__ROLE_RANK, job, rank, inc,
	    FRAME_VERSION);
	Mpiv__NdLog *lg;
	bool last;
	size_t n = 0, frames = 0;

	if (!hr->ok)
		fail_msg("hello refused: %s", hr->error);
	if (events != NULL)
		*events = hr->log_events;
	frame_free_meta(&hr->base);
	do {
		lg = (Mpiv__NdLog *)expect(fd, MPIV__MSG_TYPE__MSG_ND_LOG, NULL,
		    NULL);
		for (size_t i = 0; i < lg->n_outcomes; i++, n++)
			if (nd_nos != NULL && n < cap)
				nd_nos[n] = lg->outcomes[i]->nd_no;
		frames++;
		last = lg->last;
		frame_free_meta(&lg->base);
	} while (!last);
	if (n_nd != NULL)
		*n_nd = n;
	if (nframes != NULL)
		*nframes = frames;
	return fd;
}

static int
rank_conn(const char *job, int rank, uint32_t inc)
{
	return rank_hello(job, rank, inc, NULL, NULL, 0, NULL, NULL);
}

static void
do_send(int fd, int src, int dst, int tag, uint64_t seq, const void *data,
    uint32_t len)
{
	Mpiv__Send s = MPIV__SEND__INIT;

	s.src = src;
	s.dst = dst;
	s.tag = tag;
	s.seq = seq;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SEND, &s.base,
	    data, len, TMO), 0);
}

static void
post_recv(int fd, uint64_t post_no, int source, int tag)
{
	Mpiv__RecvPost rp = MPIV__RECV_POST__INIT;

	rp.req_id = 1000 + post_no;
	rp.post_no = post_no;
	rp.source = source;
	rp.tag = tag;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_RECV_POST,
	    &rp.base, NULL, 0, TMO), 0);
}

static void
post_probe(int fd, uint64_t post_no, int source, int tag, bool blocking)
{
	Mpiv__Probe pr = MPIV__PROBE__INIT;

	pr.req_id = 1000 + post_no;
	pr.post_no = post_no;
	pr.source = source;
	pr.tag = tag;
	pr.blocking = blocking;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_PROBE, &pr.base,
	    NULL, 0, TMO), 0);
}

static void
post_cancel(int fd, uint64_t post_no, uint64_t victim_post)
{
	Mpiv__Cancel cn = MPIV__CANCEL__INIT;

	cn.req_id = 1000 + victim_post;
	cn.post_no = post_no;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_CANCEL, &cn.base,
	    NULL, 0, TMO), 0);
}

/* A Deliver for post_no with the given event, source and payload. */
static void
expect_deliver(int fd, uint64_t post_no, uint64_t event, int src,
    const char *data, bool replayed)
{
	uint8_t *p;
	uint32_t plen;
	Mpiv__Deliver *d = (Mpiv__Deliver *)expect(fd,
	    MPIV__MSG_TYPE__MSG_DELIVER, &p, &plen);

	assert_int_equal(d->req_id, 1000 + post_no);
	assert_int_equal(d->event, event);
	assert_int_equal(d->src, src);
	assert_int_equal(d->replayed, replayed);
	assert_int_equal(plen, strlen(data));
	assert_memory_equal(p, data, plen);
	free(p);
	frame_free_meta(&d->base);
}

static void
expect_probe(int fd, uint64_t post_no, uint64_t event, bool found)
{
	Mpiv__ProbeReply *pr = (Mpiv__ProbeReply *)expect(fd,
	    MPIV__MSG_TYPE__MSG_PROBE_REPLY, NULL, NULL);

	assert_int_equal(pr->req_id, 1000 + post_no);
	assert_int_equal(pr->event, event);
	assert_int_equal(pr->found, found);
	frame_free_meta(&pr->base);
}

static void
expect_cancel(int fd, uint64_t victim_post, uint64_t event, bool cancelled)
{
	Mpiv__CancelReply *cr = (Mpiv__CancelReply *)expect(fd,
	    MPIV__MSG_TYPE__MSG_CANCEL_REPLY, NULL, NULL);

	assert_int_equal(cr->req_id, 1000 + victim_post);
	assert_int_equal(cr->event, event);
	assert_int_equal(cr->cancelled, cancelled);
	frame_free_meta(&cr->base);
}

static void
expect_error(int fd, const char *needle)
{
	Mpiv__Error *e = (Mpiv__Error *)expect(fd, MPIV__MSG_TYPE__MSG_ERROR,
	    NULL, NULL);

	if (strstr(e->text, needle) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", e->text, needle);
	frame_free_meta(&e->base);
	expect_closed(fd);
}

/*
 * The original run of rank 2: P1 recv(src 0), P2 recv(src 1) posted;
 * B from 1 goes to P2 (event 1), A from 0 to P1 (event 2); P3
 * recv(ANY, ANY) gets C (event 3); P4, P5 Iprobe(ANY) miss (events 4-5,
 * one folded entry); P6 recv(ANY) is still pending when rank 2 dies.
 */
static void
original_run(const char *job, int r0, int r1, int r2)
{
	post_recv(r2, 1, 0, -1);
	post_recv(r2, 2, 1, -1);
	expect_silence(r2, 30);
	do_send(r1, 1, 2, 7, 1, "B", 1);
	expect_deliver(r2, 2, 1, 1, "B", false);
	do_send(r0, 0, 2, 7, 1, "A", 1);
	expect_deliver(r2, 1, 2, 0, "A", false);
	post_recv(r2, 3, -1, -1);
	do_send(r0, 0, 2, 8, 2, "C", 1);
	expect_deliver(r2, 3, 3, 0, "C", false);
	post_probe(r2, 4, -1, -1, false);
	expect_probe(r2, 4, 4, false);
	post_probe(r2, 5, -1, -1, false);
	expect_probe(r2, 5, 5, false);
	post_recv(r2, 6, -1, -1);
	expect_silence(r2, 30);
}

static void
test_replay_order_then_live(void **state)
{
	int r0, r1, r2;
	uint64_t events;
	Mpiv__CmStats *cs;

	setup("ro", 3, false);
	r0 = rank_conn("ro", 0, 1);
	r1 = rank_conn("ro", 1, 1);
	r2 = rank_conn("ro", 2, 1);
	original_run("ro", r0, r1, r2);
	cs = stats("ro");
	assert_int_equal(cs->log_entries, 4);	/* P4-P5 folded */
	assert_int_equal(cs->log_bytes, 3);
	frame_free_meta(&cs->base);
	close(r2);			/* rank 2 dies: P6 is dropped */
	usleep(50000);			/* (once the CM saw it go) */
	do_send(r1, 1, 2, 9, 2, "D", 1);	/* for its next life */
	usleep(50000);

	r2 = rank_hello("ro", 2, 2, &events, NULL, 0, NULL, NULL);
	assert_int_equal(events, 5);
	post_recv(r2, 1, 0, -1);	/* event 2: waits for event 1 */
	expect_silence(r2, 50);
	post_recv(r2, 2, 1, -1);
	expect_deliver(r2, 2, 1, 1, "B", true);
	expect_deliver(r2, 1, 2, 0, "A", true);
	post_recv(r2, 3, -1, -1);
	expect_deliver(r2, 3, 3, 0, "C", true);
	post_probe(r2, 4, -1, -1, false);
	expect_probe(r2, 4, 4, false);
	no_replay_done();
	post_probe(r2, 5, -1, -1, false);
	expect_probe(r2, 5, 5, false);
	frame_free_meta(&expect_replay_done(2, 2, 5)->base);
	/* live again: P6 gets D, sent while rank 2 was dead */
	post_recv(r2, 6, -1, -1);
	expect_deliver(r2, 6, 6, 1, "D", false);
	/* a live Iprobe miss right after the log does not fold into it */
	post_probe(r2, 7, -1, -1, false);
	expect_probe(r2, 7, 7, false);
	close(r0);
	close(r1);
	close(r2);
}

/* Silent re-execution: last_seq, duplicates dropped and counted. */
static void
test_resend_duplicates(void **state)
{
	int r0, r1, r0b;
	Mpiv__HelloReply *hr;
	Mpiv__CmStats *cs;

	setup("dup", 2, false);
	r0 = rank_conn("dup", 0, 1);
	r1 = rank_conn("dup", 1, 1);
	do_send(r0, 0, 1, 1, 1, "x1", 2);
	do_send(r0, 0, 1, 1, 2, "x2", 2);
	post_recv(r1, 1, 0, 1);
	expect_deliver(r1, 1, 1, 0, "x1", false);
	close(r0);
	usleep(20000);
	r0b = dial();
	hr = hello(r0b, MPIV__ROLE__ROLE_RANK, "dup", 0, 2, FRAME_VERSION);
	assert_true(hr->ok);
	assert_int_equal(hr->n_last_seq, 2);
	assert_int_equal(hr->last_seq[1], 2);
	assert_int_equal(hr->log_events, 0);
	frame_free_meta(&hr->base);
	skip_nd_log(r0b);
	frame_free_meta(&expect_replay_done(0, 2, 0)->base);
	do_send(r0b, 0, 1, 1, 1, "x1", 2);	/* re-executed: dropped */
	do_send(r0b, 0, 1, 1, 2, "x2", 2);
	do_send(r0b, 0, 1, 1, 3, "x3", 2);	/* new */
	post_recv(r1, 2, 0, 1);
	expect_deliver(r1, 2, 2, 0, "x2", false);
	post_recv(r1, 3, 0, 1);
	expect_deliver(r1, 3, 3, 0, "x3", false);
	post_recv(r1, 4, 0, 1);
	expect_silence(r1, 50);
	cs = stats("dup");
	assert_int_equal(cs->duplicates, 2);
	assert_int_equal(cs->messages, 3);
	frame_free_meta(&cs->base);
	close(r0b);
	close(r1);
}

/* A newer incarnation mid-replay replaces the older; replay restarts. */
static void
test_fencing_mid_replay(void **state)
{
	int r0, r1, a, b;
	uint64_t events;

	setup("fm", 2, false);
	r0 = rank_conn("fm", 0, 1);
	r1 = rank_conn("fm", 1, 1);
	do_send(r0, 0, 1, 1, 1, "m1", 2);
	do_send(r0, 0, 1, 1, 2, "m2", 2);
	do_send(r0, 0, 1, 1, 3, "m3", 2);
	for (uint64_t i = 1; i <= 3; i++)
		post_recv(r1, i, 0, 1);
	expect_deliver(r1, 1, 1, 0, "m1", false);
	expect_deliver(r1, 2, 2, 0, "m2", false);
	expect_deliver(r1, 3, 3, 0, "m3", false);
	close(r1);

	a = rank_hello("fm", 1, 2, &events, NULL, 0, NULL, NULL);
	assert_int_equal(events, 3);
	post_recv(a, 1, 0, 1);
	expect_deliver(a, 1, 1, 0, "m1", true);
	b = rank_hello("fm", 1, 3, &events, NULL, 0, NULL, NULL);
	assert_int_equal(events, 3);
	expect_closed(a);
	close(a);
	refused("fm", 1, 2, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "stale incarnation");
	post_recv(b, 1, 0, 1);		/* from event 1 again */
	expect_deliver(b, 1, 1, 0, "m1", true);
	post_recv(b, 2, 0, 1);
	expect_deliver(b, 2, 2, 0, "m2", true);
	post_recv(b, 3, 0, 1);
	expect_deliver(b, 3, 3, 0, "m3", true);
	frame_free_meta(&expect_replay_done(1, 3, 3)->base);
	no_replay_done();		/* none for the superseded one */
	close(b);
	close(r0);
}

static void
nd_send(int fd, uint64_t ack, uint64_t first, size_t n, uint64_t repeat,
    bool flag)
{
	Mpiv__NdRecord r = MPIV__ND_RECORD__INIT;
	Mpiv__NdOutcome *o = calloc(n, sizeof(*o));
	Mpiv__NdOutcome **pp = calloc(n, sizeof(*pp));
	int32_t idx = 3;

	for (size_t i = 0; i < n; i++) {
		mpiv__nd_outcome__init(&o[i]);
		o[i].nd_no = first + i * repeat;
		o[i].kind = 2;
		o[i].repeat = repeat;
		o[i].flag = flag;
		if (flag) {
			o[i].n_indices = 1;
			o[i].indices = &idx;
		}
		pp[i] = &o[i];
	}
	r.ack_id = ack;
	r.n_outcomes = n;
	r.outcomes = pp;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_ND_RECORD, &r.base,
	    NULL, 0, TMO), 0);
	free(o);
	free(pp);
}

static void
expect_nd_ack(int fd, uint64_t ack)
{
	Mpiv__NdAck *a = (Mpiv__NdAck *)expect(fd, MPIV__MSG_TYPE__MSG_ND_ACK,
	    NULL, NULL);

	assert_int_equal(a->ack_id, ack);
	frame_free_meta(&a->base);
}

static void
test_nd_round_trip(void **state)
{
	enum { BIG = 5000 };
	static uint64_t got[BIG + 10];
	size_t n, frames;
	int r0;

	setup("nd", 1, false);
	r0 = rank_conn("nd", 0, 1);
	nd_send(r0, 7, 1, 1, 1, true);		/* nd 1: completed */
	expect_nd_ack(r0, 7);
	nd_send(r0, 8, 2, 1, 3, false);		/* nd 2-4: nothing */
	expect_nd_ack(r0, 8);
	nd_send(r0, 9, 5, 1, 2, false);		/* nd 5-6: folds into 2-4 */
	expect_nd_ack(r0, 9);
	nd_send(r0, 10, 1, 1, 1, true);		/* duplicate: ignored */
	expect_nd_ack(r0, 10);
	nd_send(r0, 11, 5, 1, 4, false);	/* 5-8: overlaps, adds 7-8 */
	expect_nd_ack(r0, 11);
	nd_send(r0, 12, 9, BIG, 1, true);	/* nd 9 .. BIG+8 */
	expect_nd_ack(r0, 12);
	close(r0);

	r0 = rank_hello("nd", 0, 2, NULL, got, BIG + 10, &n, &frames);
	/* no delivery logged; the NdLog's outcomes count as replayed */
	frame_free_meta(&expect_replay_done(0, 2, BIG + 8)->base);
	assert_int_equal(frames, 2);		/* 4096 per frame at most */
	assert_int_equal(n, 2 + BIG);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 2);		/* 2-8 as one record */
	for (size_t i = 0; i < BIG; i++)
		assert_int_equal(got[2 + i], 9 + i);
	/* a re-execution re-recording replayed outcomes: ignored */
	nd_send(r0, 13, 1, 1, 1, true);
	expect_nd_ack(r0, 13);
	/* a gap is a protocol error */
	nd_send(r0, 14, BIG + 100, 1, 1, true);
	expect_error(r0, "nd record gap: outcome nd_no=5100, expected 5009");
	close(r0);
}

static void
test_divergence(void **state)
{
	int r0, r1;

	setup("dv", 2, false);
	r0 = rank_conn("dv", 0, 1);
	r1 = rank_conn("dv", 1, 1);
	do_send(r0, 0, 1, 5, 1, "z", 1);
	post_recv(r1, 1, 0, 5);
	expect_deliver(r1, 1, 1, 0, "z", false);
	close(r1);
	r1 = rank_conn("dv", 1, 2);
	post_recv(r1, 1, 1, 5);
	expect_error(r1, "replay diverged at post 1: logged "
	    "recv(ctx=0,src=0,tag=5), got recv(ctx=0,src=1,tag=5)");
	close(r1);
	/* a probe where a receive was logged */
	r1 = rank_conn("dv", 1, 3);
	post_probe(r1, 1, 0, 5, true);
	expect_error(r1, "logged recv(ctx=0,src=0,tag=5), got "
	    "probe(ctx=0,src=0,tag=5)");
	close(r1);
	close(r0);
}

/* A cancelled receive is re-posted during the replay: it must not match. */
static void
test_cancel_replay(void **state)
{
	int r0, r1;

	setup("cn", 2, false);
	r0 = rank_conn("cn", 0, 1);
	r1 = rank_conn("cn", 1, 1);
	post_recv(r1, 1, 0, 9);
	post_cancel(r1, 2, 1);
	expect_cancel(r1, 1, 1, true);
	do_send(r0, 0, 1, 9, 1, "M", 1);
	post_recv(r1, 3, 0, 9);
	expect_deliver(r1, 3, 2, 0, "M", false);
	close(r1);

	r1 = rank_conn("cn", 1, 2);
	post_recv(r1, 1, 0, 9);		/* no entry: waits */
	post_cancel(r1, 2, 1);
	expect_cancel(r1, 1, 1, true);
	post_recv(r1, 3, 0, 9);
	expect_deliver(r1, 3, 2, 0, "M", true);
	frame_free_meta(&expect_replay_done(1, 2, 2)->base);
	expect_silence(r1, 50);		/* P1 was cancelled: never answered */
	do_send(r0, 0, 1, 9, 2, "N", 1);
	post_recv(r1, 4, 0, 9);
	expect_deliver(r1, 4, 3, 0, "N", false);
	close(r0);
	close(r1);
}

/* A post without an entry during the replay is matched after it. */
static void
test_deferred_post(void **state)
{
	int r0, r1;

	setup("df", 2, false);
	r0 = rank_conn("df", 0, 1);
	r1 = rank_conn("df", 1, 1);
	post_recv(r1, 1, 0, 1);		/* pending when rank 1 dies */
	post_probe(r1, 2, 0, 2, false);
	expect_probe(r1, 2, 1, false);
	close(r1);
	usleep(50000);
	do_send(r0, 0, 1, 1, 1, "Q", 1);
	usleep(20000);
	r1 = rank_conn("df", 1, 2);
	post_recv(r1, 1, 0, 1);		/* deferred: Q must not come yet */
	expect_silence(r1, 50);
	post_probe(r1, 2, 0, 2, false);
	expect_probe(r1, 2, 1, false);
	expect_deliver(r1, 1, 2, 0, "Q", false);
	frame_free_meta(&expect_replay_done(1, 2, 1)->base);
	close(r0);
	close(r1);
}

static void
test_probe_folding(void **state)
{
	int r0;
	Mpiv__CmStats *cs;

	setup("pf", 1, false);
	r0 = rank_conn("pf", 0, 1);
	for (uint64_t i = 1; i <= 100; i++) {
		post_probe(r0, i, -1, 3, false);
		expect_probe(r0, i, i, false);
	}
	post_probe(r0, 101, -1, 4, false);	/* other envelope: new entry */
	expect_probe(r0, 101, 101, false);
	post_probe(r0, 103, -1, 4, false);	/* post gap: new entry */
	expect_probe(r0, 103, 102, false);
	cs = stats("pf");
	assert_int_equal(cs->log_entries, 3);
	frame_free_meta(&cs->base);
	close(r0);
	r0 = rank_conn("pf", 0, 2);
	for (uint64_t i = 1; i <= 101; i++) {
		post_probe(r0, i, -1, i <= 100 ? 3 : 4, false);
		expect_probe(r0, i, i, false);
	}
	post_probe(r0, 103, -1, 4, false);
	expect_probe(r0, 103, 102, false);
	frame_free_meta(&expect_replay_done(0, 2, 102)->base);
	close(r0);
}

static void
test_relay_only(void **state)
{
	int r0, r1;
	Mpiv__CmStats *cs;

	setup("rel", 2, true);
	r0 = rank_conn("rel", 0, 1);
	r1 = rank_conn("rel", 1, 1);
	for (uint64_t i = 1; i <= 20; i++) {
		do_send(r0, 0, 1, 1, i, "payload", 7);
		post_recv(r1, i, 0, 1);
		expect_deliver(r1, i, i, 0, "payload", false);
	}
	post_probe(r1, 21, -1, -1, false);
	expect_probe(r1, 21, 21, false);
	nd_send(r1, 5, 1, 1, 1, true);
	expect_nd_ack(r1, 5);
	cs = stats("rel");
	assert_int_equal(cs->messages, 20);
	assert_int_equal(cs->log_bytes, 0);
	assert_int_equal(cs->log_entries, 0);
	frame_free_meta(&cs->base);
	close(r1);
	refused("rel", 1, 2, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "relay-only");
	close(r0);
}

/*
 * The sender dies mid-payload while its message is cut through to the
 * receiver: the receiver's connection fails (a frame cannot be cut
 * short), the delivery stays logged and its sequence is rewound; the
 * restarted sender's copy fills the log entry and the restarted
 * receiver gets it replayed.
 */
static void
test_sender_dies_mid_payload(void **state)
{
	enum { SZ = 1 << 20 };
	uint8_t *buf = malloc(SZ), *meta;
	Mpiv__Send s = MPIV__SEND__INIT;
	Mpiv__HelloReply *hr;
	uint8_t *p;
	uint32_t plen;
	size_t mlen;
	Mpiv__Deliver *d;
	int r0, r1;

	for (int i = 0; i < SZ; i++)
		buf[i] = (uint8_t)(i * 7);
	setup("mid", 2, false);
	r0 = rank_conn("mid", 0, 1);
	r1 = rank_conn("mid", 1, 1);
	post_recv(r1, 1, 0, 4);
	usleep(20000);
	s.src = 0;
	s.dst = 1;
	s.tag = 4;
	s.seq = 1;
	meta = frame_encode(MPIV__MSG_TYPE__MSG_SEND, &s.base, SZ, &mlen);
	assert_non_null(meta);
	assert_int_equal(write(r0, meta, mlen), (ssize_t)mlen);
	assert_int_equal(write(r0, buf, 1000), 1000);
	free(meta);
	usleep(50000);
	close(r0);			/* dies mid-payload */
	expect_closed(r1);		/* its Deliver cannot be completed */
	close(r1);

	r0 = dial();
	hr = hello(r0, MPIV__ROLE__ROLE_RANK, "mid", 0, 2, FRAME_VERSION);
	assert_true(hr->ok);
	assert_int_equal(hr->last_seq[1], 0);	/* rewound: send it again */
	frame_free_meta(&hr->base);
	skip_nd_log(r0);
	frame_free_meta(&expect_replay_done(0, 2, 0)->base);

	r1 = rank_conn("mid", 1, 2);
	post_recv(r1, 1, 0, 4);
	expect_silence(r1, 50);		/* waits for the payload */
	pid_t w = fork();
	if (w == 0) {
		do_send(r0, 0, 1, 4, 1, buf, SZ);
		_exit(0);
	}
	d = (Mpiv__Deliver *)expect(r1, MPIV__MSG_TYPE__MSG_DELIVER, &p, &plen);
	assert_true(d->replayed);
	assert_int_equal(d->event, 1);
	assert_int_equal(plen, SZ);
	assert_memory_equal(p, buf, SZ);
	free(p);
	frame_free_meta(&d->base);
	waitpid(w, NULL, 0);
	frame_free_meta(&expect_replay_done(1, 2, 1)->base);
	free(buf);
	close(r0);
	close(r1);
}

/*
 * A restarted sender whose Hello is read before its old connection's end
 * (both can be ready in one loop iteration), while that connection is
 * mid-payload of an unexpected Send: the half-read message is dropped
 * before last_seq is answered, so the new incarnation re-sends it
 * (before the fix the reply said 1, the re-send was skipped as already
 * held, and the receiver waited forever).
 */
static void
test_fenced_mid_payload(void **state)
{
	enum { SZ = 4096 };
	uint8_t buf[SZ], *meta;
	Mpiv__Send s = MPIV__SEND__INIT;
	Mpiv__HelloReply *hr;
	size_t mlen;
	int r0, r0b, r1;
	char *want = malloc(SZ + 1);

	for (int i = 0; i < SZ; i++)
		buf[i] = (uint8_t)('a' + i % 26);
	memcpy(want, buf, SZ);
	want[SZ] = '\0';
	setup("fmp", 2, false);
	r0 = rank_conn("fmp", 0, 1);
	r1 = rank_conn("fmp", 1, 1);
	s.src = 0;
	s.dst = 1;
	s.tag = 4;
	s.seq = 1;
	meta = frame_encode(MPIV__MSG_TYPE__MSG_SEND, &s.base, SZ, &mlen);
	assert_non_null(meta);
	assert_int_equal(write(r0, meta, mlen), (ssize_t)mlen);
	assert_int_equal(write(r0, buf, 100), 100);
	free(meta);
	usleep(50000);			/* the CM holds 100 bytes of it */

	r0b = dial();			/* old connection still open */
	hr = hello(r0b, MPIV__ROLE__ROLE_RANK, "fmp", 0, 2, FRAME_VERSION);
	assert_true(hr->ok);
	assert_int_equal(hr->last_seq[1], 0);	/* dropped: send it again */
	frame_free_meta(&hr->base);
	skip_nd_log(r0b);
	frame_free_meta(&expect_replay_done(0, 2, 0)->base);
	expect_closed(r0);		/* fenced */
	close(r0);

	do_send(r0b, 0, 1, 4, 1, buf, SZ);
	post_recv(r1, 1, 0, 4);
	expect_deliver(r1, 1, 1, 0, want, false);
	free(want);
	close(r0b);
	close(r1);
}

/*
 * Run against a CM with --max-memory 64K: a logging job whose log
 * outgrows the cap keeps the sender paused (the log cannot shrink before
 * checkpoints), and the daemon stays up and answering.
 */
static void
test_log_over_cap(void **state)
{
	enum { N = 100, SZ = 4096 };
	static uint8_t buf[SZ];
	int r0, r1, got = 0;
	pid_t w;
	Mpiv__CmStats *cs;

	setup("cap", 2, false);
	r0 = rank_conn("cap", 0, 1);
	r1 = rank_conn("cap", 1, 1);
	if ((w = fork()) == 0) {
		for (int i = 0; i < N; i++) {
			Mpiv__Send s = MPIV__SEND__INIT;
			s.src = 0;
			s.dst = 1;
			s.tag = i;
			s.seq = (uint64_t)i + 1;
			if (frame_write(r0, MPIV__MSG_TYPE__MSG_SEND, &s.base,
			    buf, SZ, 5000) < 0)
				_exit(1);
		}
		_exit(0);
	}
	for (int i = 0; i < N; i++) {
		struct frame_hdr h;
		ProtobufCMessage *m;
		uint8_t *p;
		const char *err;
		post_recv(r1, (uint64_t)i + 1, 0, -1);
		/* the last one may stay half-sent: its sender is paused */
		if (frame_read(r1, &h, &m, &p, 500, &err) < 0)
			break;
		assert_int_equal(h.type, MPIV__MSG_TYPE__MSG_DELIVER);
		free(p);
		frame_free_meta(m);
		got++;
	}
	assert_true(got < N);
	assert_true((uint64_t)got * SZ >= (64u << 10) / 2);
	cs = stats("cap");
	assert_true(cs->log_bytes + (uint64_t)SZ * 8 > (64u << 10));
	assert_true(cs->messages < N);
	frame_free_meta(&cs->base);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	close(r0);
	close(r1);
}

/*
 * The same log at a CM that spills (--spill-dir): every message gets
 * through, the payloads beyond half the cap leave memory, and a
 * restarted receiver replays all of them, read back from the file.
 */
static void
test_log_spilled(void **state)
{
	enum { N = 100, SZ = 4096 };
	char buf[SZ + 1];
	int r0, r1, r1b;
	Mpiv__CmStats *cs;

	setup("spl", 2, false);
	r0 = rank_conn("spl", 0, 1);
	r1 = rank_conn("spl", 1, 1);
	buf[SZ] = '\0';
	for (int i = 0; i < N; i++) {
		memset(buf, 'a' + i % 26, SZ);
		do_send(r0, 0, 1, i, (uint64_t)i + 1, buf, SZ);
		post_recv(r1, (uint64_t)i + 1, 0, -1);
		expect_deliver(r1, (uint64_t)i + 1, (uint64_t)i + 1, 0, buf,
		    false);
	}
	cs = stats("spl");
	assert_int_equal(cs->messages, N);
	assert_true(cs->log_bytes <= (64u << 10) / 2);	/* in memory */
	frame_free_meta(&cs->base);
	/* ~400 KiB spilled, over the cap: checkpoints were asked (advice) */
	assert_true(npressure > 0);
	close(r1);
	r1b = rank_conn("spl", 1, 2);	/* replays all N from the log */
	for (int i = 0; i < N; i++) {
		memset(buf, 'a' + i % 26, SZ);
		post_recv(r1b, (uint64_t)i + 1, 0, -1);
		expect_deliver(r1b, (uint64_t)i + 1, (uint64_t)i + 1, 0, buf,
		    true);
	}
	close(r1b);
	close(r0);
}

/* A CM with --max-memory 64K that keeps its log in memory. */
static int
start_small(void **state)
{
	cm_max_memory = "64K";
	setenv("MPIV_CM_SPILL_DIR", "off", 1);
	return start_all(state);
}

/* The same, spilling to a temporary directory. */
static int
start_small_spill(void **state)
{
	cm_max_memory = "64K";
	setenv("MPIV_CM_SPILL_DIR", "/tmp", 1);
	return start_all(state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_order_then_live),
		cmocka_unit_test(test_resend_duplicates),
		cmocka_unit_test(test_fencing_mid_replay),
		cmocka_unit_test(test_nd_round_trip),
		cmocka_unit_test(test_divergence),
		cmocka_unit_test(test_cancel_replay),
		cmocka_unit_test(test_deferred_post),
		cmocka_unit_test(test_probe_folding),
		cmocka_unit_test(test_relay_only),
		cmocka_unit_test(test_sender_dies_mid_payload),
		cmocka_unit_test(test_fenced_mid_payload),
	};
	const struct CMUnitTest small[] = {
		cmocka_unit_test(test_log_over_cap),
	};
	const struct CMUnitTest spill[] = {
		cmocka_unit_test(test_log_spilled),
	};
	int rc;

	signal(SIGPIPE, SIG_IGN);
	alarm(180);
	log_init("test_cm_replay", LOG_LEVEL_WARN);
	rc = cmocka_run_group_tests(tests, start_all, stop_all);
	rc |= cmocka_run_group_tests_name("log_over_cap", small,
	    start_small, stop_all);
	return rc | cmocka_run_group_tests_name("log_spilled", spill,
	    start_small_spill, stop_all);
}
