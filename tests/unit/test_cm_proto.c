/*
 * test_cm_proto.c: a real Channel Memory (cm_main in a forked child on
 * 127.0.0.1:0) driven with raw frames: hello checks, garbage, truncated
 * and oversized frames, incarnation fencing, send/receive round trips
 * (queued and cut-through), sync acks, probes, cancels, duplicates,
 * multicasts (good and malformed), stats, and a clean, leak-free exit
 * on SIGTERM. Every read is bounded.
 */
#include "cm_harness.h"

/* ncms of every job set up, to know which rank connections are home */
static struct { char job[32]; int ncms, idx; } jobs[64];
static int njobs;

static bool
is_home(const char *job, int rank)
{
	for (int i = 0; i < njobs; i++)
		if (strcmp(jobs[i].job, job) == 0)
			return rank % jobs[i].ncms == jobs[i].idx;
	return true;
}

static int
rank_conn(const char *job, int rank, uint32_t inc)
{
	int fd = dial();
	Mpiv__HelloReply *hr = hello(fd, MPIV__ROLE__ROLE_RANK, job, rank, inc,
	    FRAME_VERSION);

	if (!hr->ok)
		fail_msg("hello refused: %s", hr->error);
	frame_free_meta(&hr->base);
	if (is_home(job, rank))
		skip_nd_log(fd);
	return fd;
}

static void
setup_job_mode(const char *job, int nranks, int ncms, int idx,
    bool relay_only)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;
	Mpiv__JobStatus *st;

	js.job_id = (char *)job;
	js.nranks = nranks;
	js.ncms = ncms;
	js.cm_index = idx;
	js.relay_only = relay_only;
	if (njobs < 64) {
		snprintf(jobs[njobs].job, sizeof(jobs[njobs].job), "%s", job);
		jobs[njobs].ncms = ncms;
		jobs[njobs++].idx = idx;
	}
	st = job_setup(&js);
	assert_string_equal(st->state, "ready");
	assert_string_equal(st->job_id, job);
	frame_free_meta(&st->base);
}

static void
setup_job(const char *job, int nranks, int ncms, int idx)
{
	setup_job_mode(job, nranks, ncms, idx, false);
}

static void
do_send(int fd, int src, int dst, int tag, uint64_t seq, bool sync,
    uint64_t send_id, const void *data, uint32_t len)
{
	Mpiv__Send s = MPIV__SEND__INIT;

	s.src = src;
	s.dst = dst;
	s.context = 0;
	s.tag = tag;
	s.seq = seq;
	s.sync = sync;
	s.send_id = send_id;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SEND, &s.base,
	    data, len, TMO), 0);
}

static void
post_recv(int fd, uint64_t req, int source, int tag)
{
	Mpiv__RecvPost rp = MPIV__RECV_POST__INIT;

	rp.req_id = req;
	rp.source = source;
	rp.tag = tag;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_RECV_POST,
	    &rp.base, NULL, 0, TMO), 0);
}

static Mpiv__Deliver *
expect_deliver(int fd, const void *data, uint32_t len)
{
	uint8_t *p;
	uint32_t plen;
	Mpiv__Deliver *d = (Mpiv__Deliver *)expect(fd,
	    MPIV__MSG_TYPE__MSG_DELIVER, &p, &plen);

	assert_int_equal(plen, len);
	if (len > 0)
		assert_memory_equal(p, data, len);
	free(p);
	return d;
}

/* A multicast Send from src to the n ranks dst with seqs seq. */
static void
do_mcast(int fd, int src, int32_t *dst, uint64_t *seq, size_t n, int tag,
    const void *data, uint32_t len)
{
	Mpiv__Send s = MPIV__SEND__INIT;

	s.src = src;
	s.dst = n > 0 ? dst[0] : 0;
	s.seq = n > 0 ? seq[0] : 1;
	s.tag = tag;
	s.n_mdst = n;
	s.mdst = dst;
	s.n_mseq = n;
	s.mseq = seq;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SEND, &s.base,
	    data, len, TMO), 0);
}

/* A malformed multicast closes its sender's connection with why. */
static void
mcast_refused(const char *job, int32_t *dst, uint64_t *seq, size_t n,
    const char *why)
{
	int fd = rank_conn(job, 0, 1);
	Mpiv__Error *e;

	do_mcast(fd, 0, dst, seq, n, 1, "z", 1);
	e = (Mpiv__Error *)expect(fd, MPIV__MSG_TYPE__MSG_ERROR, NULL, NULL);
	if (strstr(e->text, why) == NULL)
		fail_msg("error \"%s\", want \"%s\"", e->text, why);
	frame_free_meta(&e->base);
	expect_closed(fd);
	close(fd);
}

/* ---------------- tests ---------------- */

static void
test_hello_ok(void **state)
{
	int fd;
	Mpiv__HelloReply *hr;

	setup_job("ok", 4, 1, 0);
	fd = dial();
	hr = hello(fd, MPIV__ROLE__ROLE_RANK, "ok", 2, 1, FRAME_VERSION);
	assert_true(hr->ok);
	assert_int_equal(hr->nranks, 4);
	assert_int_equal(hr->cm_index, 0);
	assert_int_equal(hr->n_last_seq, 4);
	frame_free_meta(&hr->base);
	close(fd);
}

static void
test_hello_refusals(void **state)
{
	setup_job("ref", 2, 1, 0);
	refused("ref", 0, 1, FRAME_VERSION + 7, MPIV__ROLE__ROLE_RANK,
	    "version mismatch");
	refused("nosuchjob", 0, 1, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "unknown job");
	refused("ref", 2, 1, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "out of range");
	refused("ref", -1, 1, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "out of range");
	refused("ref", 0, 1, FRAME_VERSION, MPIV__ROLE__ROLE_NODE,
	    "wrong role");
}

static void
test_first_frame_not_hello(void **state)
{
	int fd = dial();
	Mpiv__HelloReply *hr;

	post_recv(fd, 1, -1, -1);
	hr = (Mpiv__HelloReply *)expect(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    NULL, NULL);
	assert_false(hr->ok);
	assert_non_null(strstr(hr->error, "expected hello"));
	frame_free_meta(&hr->base);
	expect_closed(fd);
	close(fd);
}

/* Garbage, truncation, oversized lengths: closed; the daemon lives on. */
static void
test_bad_bytes(void **state)
{
	uint8_t hdr[FRAME_HDR_LEN];
	int fd;

	fd = dial();
	assert_int_equal(write(fd, "GET / HTTP/1.0\r\n\r\n", 18), 18);
	expect_closed(fd);
	close(fd);

	fd = dial();
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_HELLO, 100, 0);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	assert_int_equal(write(fd, "\x08\x01", 2), 2);
	close(fd);	/* truncated: the CM must just drop it */

	fd = dial();
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_HELLO, 0, 0xffffffffu);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	expect_closed(fd);
	close(fd);

	fd = dial();
	frame_put_header(hdr, 4242, 0, 0);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	expect_closed(fd);
	close(fd);

	fd = dial();	/* malformed protobuf in a well-framed hello */
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_HELLO, 3, 0);
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	assert_int_equal(write(fd, "\xff\xff\xff", 3), 3);
	expect_closed(fd);
	close(fd);

	/* still serving */
	setup_job("alive", 1, 1, 0);
	close(rank_conn("alive", 0, 1));
}

static void
test_fencing(void **state)
{
	int a, b;

	setup_job("fence", 2, 1, 0);
	a = rank_conn("fence", 1, 2);
	refused("fence", 1, 1, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "stale incarnation");
	b = rank_conn("fence", 1, 3);	/* newer: replaces a */
	expect_closed(a);
	close(a);
	refused("fence", 1, 2, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "stale incarnation");
	close(b);
	/* the highest incarnation is remembered after it left */
	refused("fence", 1, 2, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "stale incarnation");
}

static void
test_round_trip(void **state)
{
	int r0, r1;
	Mpiv__Deliver *d;

	setup_job("rt", 2, 1, 0);
	r0 = rank_conn("rt", 0, 1);
	r1 = rank_conn("rt", 1, 1);

	/* queued: send, then receive */
	do_send(r0, 0, 1, 5, 1, false, 0, "hello", 5);
	post_recv(r1, 100, -1, -1);
	d = expect_deliver(r1, "hello", 5);
	assert_int_equal(d->req_id, 100);
	assert_int_equal(d->src, 0);
	assert_int_equal(d->tag, 5);
	assert_int_equal(d->event, 1);
	assert_int_equal(d->seq, 1);
	frame_free_meta(&d->base);

	/* cut-through: receive posted first */
	post_recv(r1, 101, 0, 6);
	expect_silence(r1, 50);
	do_send(r0, 0, 1, 6, 2, false, 0, "world!", 6);
	d = expect_deliver(r1, "world!", 6);
	assert_int_equal(d->req_id, 101);
	assert_int_equal(d->event, 2);
	frame_free_meta(&d->base);

	/* zero bytes */
	do_send(r0, 0, 1, 7, 3, false, 0, NULL, 0);
	post_recv(r1, 102, 0, 7);
	d = expect_deliver(r1, NULL, 0);
	assert_int_equal(d->event, 3);
	frame_free_meta(&d->base);

	/* self send */
	do_send(r1, 1, 1, 8, 1, false, 0, "me", 2);
	post_recv(r1, 103, 1, 8);
	d = expect_deliver(r1, "me", 2);
	frame_free_meta(&d->base);
	close(r0);
	close(r1);
}

/*
 * A multicast is one Send per receiver, each on its own channel: the HelloReply offers
 * it; receivers posted before and after it both get the payload, with
 * their own seq; a copy the CM holds already is dropped as a duplicate
 * (the others still go); empty payloads too. Malformed ones close the
 * sender's connection with the reason: receivers out of range, not
 * homed here, named twice, a seq of 0, too few receivers, seqs and
 * receivers of different counts.
 */
static void
test_multicast(void **state)
{
	int r0, r1, r2, r3, fd;
	int32_t dst[3] = { 1, 2, 3 };
	uint64_t seq[3] = { 1, 1, 1 };
	Mpiv__HelloReply *hr;
	Mpiv__Deliver *d;

	setup_job("mc", 4, 1, 0);
	fd = dial();
	hr = hello(fd, MPIV__ROLE__ROLE_RANK, "mc", 0, 1, FRAME_VERSION);
	assert_true(hr->ok);
	assert_true(hr->multicast);
	frame_free_meta(&hr->base);
	close(fd);
	r0 = rank_conn("mc", 0, 2);
	r1 = rank_conn("mc", 1, 1);
	r2 = rank_conn("mc", 2, 1);
	r3 = rank_conn("mc", 3, 1);
	post_recv(r1, 10, 0, 4);		/* posted before */
	expect_silence(r1, 30);
	do_mcast(r0, 0, dst, seq, 3, 4, "multi", 5);
	d = expect_deliver(r1, "multi", 5);
	assert_int_equal(d->req_id, 10);
	assert_int_equal(d->seq, 1);
	frame_free_meta(&d->base);
	post_recv(r2, 20, 0, 4);		/* and after */
	d = expect_deliver(r2, "multi", 5);
	assert_int_equal(d->src, 0);
	assert_int_equal(d->seq, 1);
	frame_free_meta(&d->base);
	post_recv(r3, 30, -1, -1);
	d = expect_deliver(r3, "multi", 5);
	frame_free_meta(&d->base);

	/* seq 2 to ranks 1 and 3, 3 to rank 2 (after a single send of 2):
	   rank 2's copy of seq 2 is a duplicate and dropped */
	do_send(r0, 0, 2, 5, 2, false, 0, "one", 3);
	{
		int32_t d2[3] = { 1, 2, 3 };
		uint64_t s2[3] = { 2, 2, 2 };
		do_mcast(r0, 0, d2, s2, 3, 6, "two", 3);
	}
	post_recv(r2, 21, 0, -1);
	d = expect_deliver(r2, "one", 3);
	frame_free_meta(&d->base);
	post_recv(r2, 22, 0, -1);
	expect_silence(r2, 50);
	post_recv(r1, 11, 0, 6);
	d = expect_deliver(r1, "two", 3);
	assert_int_equal(d->seq, 2);
	frame_free_meta(&d->base);
	{	/* empty payload */
		int32_t d3[2] = { 3, 2 };
		uint64_t s3[2] = { 3, 3 };
		do_mcast(r0, 0, d3, s3, 2, 7, NULL, 0);
	}
	d = expect_deliver(r2, NULL, 0);	/* post 22 */
	assert_int_equal(d->tag, 7);
	frame_free_meta(&d->base);
	post_recv(r3, 31, 0, 6);
	d = expect_deliver(r3, "two", 3);
	frame_free_meta(&d->base);
	post_recv(r3, 32, 0, 7);
	d = expect_deliver(r3, NULL, 0);
	frame_free_meta(&d->base);
	close(r0);
	close(r1);
	close(r2);
	close(r3);

	setup_job("mcbad", 4, 1, 0);
	{
		int32_t a[2] = { 1, 4 }, b[3] = { 1, 2, 1 }, c[1] = { 1 };
		uint64_t s[3] = { 1, 1, 1 }, z[2] = { 1, 0 };
		mcast_refused("mcbad", a, s, 2, "out of range");
		mcast_refused("mcbad", b, s, 3, "twice");
		mcast_refused("mcbad", a, z, 2, "out of range");
		mcast_refused("mcbad", dst, z, 2, "count from 1");
		mcast_refused("mcbad", c, s, 1, "receivers");
	}
	fd = rank_conn("mcbad", 0, 1);
	{
		Mpiv__Send s = MPIV__SEND__INIT;
		int32_t d4[2] = { 1, 2 };
		uint64_t s4[1] = { 1 };
		Mpiv__Error *e;
		s.src = 0;
		s.dst = 1;
		s.seq = 1;
		s.n_mdst = 2;
		s.mdst = d4;
		s.n_mseq = 1;
		s.mseq = s4;
		assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SEND,
		    &s.base, "q", 1, TMO), 0);
		e = (Mpiv__Error *)expect(fd, MPIV__MSG_TYPE__MSG_ERROR, NULL,
		    NULL);
		assert_non_null(strstr(e->text, "seqs"));
		frame_free_meta(&e->base);
		expect_closed(fd);
		close(fd);
	}
	setup_job("mchome", 4, 2, 0);	/* home of ranks 0 and 2 */
	{
		int32_t h[2] = { 2, 1 };
		uint64_t s[2] = { 1, 1 };
		mcast_refused("mchome", h, s, 2, "not home");
	}
}

/* ANY_TAG receives take messages in arrival order; tags filter. */
static void
test_ordering(void **state)
{
	int r0, r1;
	Mpiv__Deliver *d;
	char b[16];

	setup_job("ord", 2, 1, 0);
	r0 = rank_conn("ord", 0, 1);
	r1 = rank_conn("ord", 1, 1);
	for (int i = 0; i < 5; i++) {
		snprintf(b, sizeof(b), "m%d", i);
		do_send(r0, 0, 1, i % 2, (uint64_t)i + 1, false, 0, b, 2);
	}
	post_recv(r1, 1, 0, 1);		/* tag 1: m1 */
	d = expect_deliver(r1, "m1", 2);
	frame_free_meta(&d->base);
	for (int i = 0; i < 4; i++)
		post_recv(r1, 2 + (uint64_t)i, -1, -1);
	const char *want[] = { "m0", "m2", "m3", "m4" };
	for (int i = 0; i < 4; i++) {
		d = expect_deliver(r1, want[i], 2);
		assert_int_equal(d->event, 2 + i);
		frame_free_meta(&d->base);
	}
	close(r0);
	close(r1);
}

static void
test_sync_ack(void **state)
{
	int r0, r2;
	Mpiv__SyncAck *a;
	Mpiv__Deliver *d;

	setup_job("sync", 3, 1, 0);
	r0 = rank_conn("sync", 0, 1);
	r2 = rank_conn("sync", 2, 1);
	do_send(r0, 0, 2, 1, 1, true, 42, "ss", 2);
	expect_silence(r0, 100);	/* no ack before the match */
	post_recv(r2, 9, 0, 1);
	d = expect_deliver(r2, "ss", 2);
	frame_free_meta(&d->base);
	a = (Mpiv__SyncAck *)expect(r0, MPIV__MSG_TYPE__MSG_SYNC_ACK, NULL,
	    NULL);
	assert_int_equal(a->send_id, 42);
	assert_int_equal(a->dst, 2);
	frame_free_meta(&a->base);

	/* matched at arrival (receive already posted) */
	post_recv(r2, 10, -1, -1);
	do_send(r0, 0, 2, 1, 2, true, 43, "tt", 2);
	a = (Mpiv__SyncAck *)expect(r0, MPIV__MSG_TYPE__MSG_SYNC_ACK, NULL,
	    NULL);
	assert_int_equal(a->send_id, 43);
	frame_free_meta(&a->base);
	d = expect_deliver(r2, "tt", 2);
	frame_free_meta(&d->base);
	close(r0);
	close(r2);
}

static void
test_cancel_probe_dup(void **state)
{
	int r0, r1;
	Mpiv__Cancel cn = MPIV__CANCEL__INIT;
	Mpiv__Probe pr = MPIV__PROBE__INIT;
	Mpiv__CancelReply *cr;
	Mpiv__ProbeReply *p;
	Mpiv__Deliver *d;

	setup_job("cpd", 2, 1, 0);
	r0 = rank_conn("cpd", 0, 1);
	r1 = rank_conn("cpd", 1, 1);

	post_recv(r1, 77, 0, 99);
	cn.req_id = 77;
	assert_int_equal(frame_write(r1, MPIV__MSG_TYPE__MSG_CANCEL, &cn.base,
	    NULL, 0, TMO), 0);
	cr = (Mpiv__CancelReply *)expect(r1, MPIV__MSG_TYPE__MSG_CANCEL_REPLY,
	    NULL, NULL);
	assert_int_equal(cr->req_id, 77);
	assert_true(cr->cancelled);
	assert_int_equal(cr->event, 1);	/* cancel answers are events too */
	frame_free_meta(&cr->base);
	assert_int_equal(frame_write(r1, MPIV__MSG_TYPE__MSG_CANCEL, &cn.base,
	    NULL, 0, TMO), 0);
	cr = (Mpiv__CancelReply *)expect(r1, MPIV__MSG_TYPE__MSG_CANCEL_REPLY,
	    NULL, NULL);
	assert_false(cr->cancelled);
	assert_int_equal(cr->event, 2);
	frame_free_meta(&cr->base);

	/* Iprobe: nothing yet */
	pr.req_id = 5;
	pr.source = -1;
	pr.tag = -1;
	assert_int_equal(frame_write(r1, MPIV__MSG_TYPE__MSG_PROBE, &pr.base,
	    NULL, 0, TMO), 0);
	p = (Mpiv__ProbeReply *)expect(r1, MPIV__MSG_TYPE__MSG_PROBE_REPLY,
	    NULL, NULL);
	assert_false(p->found);
	assert_int_equal(p->event, 3);
	frame_free_meta(&p->base);

	/* blocking probe answered when the message arrives */
	pr.req_id = 6;
	pr.blocking = true;
	assert_int_equal(frame_write(r1, MPIV__MSG_TYPE__MSG_PROBE, &pr.base,
	    NULL, 0, TMO), 0);
	expect_silence(r1, 50);
	do_send(r0, 0, 1, 3, 1, false, 0, "abc", 3);
	p = (Mpiv__ProbeReply *)expect(r1, MPIV__MSG_TYPE__MSG_PROBE_REPLY,
	    NULL, NULL);
	assert_true(p->found);
	assert_int_equal(p->req_id, 6);
	assert_int_equal(p->src, 0);
	assert_int_equal(p->tag, 3);
	assert_int_equal(p->size, 3);
	assert_int_equal(p->event, 4);
	frame_free_meta(&p->base);

	/* a duplicate (seq 1 again) is dropped: only one delivery */
	do_send(r0, 0, 1, 3, 1, false, 0, "dup", 3);
	post_recv(r1, 8, -1, -1);
	d = expect_deliver(r1, "abc", 3);
	assert_int_equal(d->event, 5);
	frame_free_meta(&d->base);
	post_recv(r1, 9, -1, -1);
	expect_silence(r1, 100);

	/* last_seq in a new incarnation's hello reply */
	close(r0);
	{
		int fd = dial();
		Mpiv__HelloReply *hr = hello(fd, MPIV__ROLE__ROLE_RANK, "cpd",
		    0, 2, FRAME_VERSION);
		assert_true(hr->ok);
		assert_int_equal(hr->n_last_seq, 2);
		assert_int_equal(hr->last_seq[1], 1);
		frame_free_meta(&hr->base);
		skip_nd_log(fd);
		close(fd);
	}
	close(r1);
}

static void
test_stats_and_wrong_home(void **state)
{
	Mpiv__CmStatsReq rq = MPIV__CM_STATS_REQ__INIT;
	Mpiv__CmStats *cs;
	Mpiv__Error *e;
	int r0;

	setup_job("home", 2, 2, 0);	/* this CM is home of rank 0 only */
	r0 = rank_conn("home", 0, 1);
	do_send(r0, 0, 0, 1, 1, false, 0, "x", 1);
	{	/* an answer on r0 proves the CM has taken the send */
		Mpiv__Probe pr = MPIV__PROBE__INIT;
		pr.source = 0;
		pr.tag = 1;
		assert_int_equal(frame_write(r0, MPIV__MSG_TYPE__MSG_PROBE,
		    &pr.base, NULL, 0, TMO), 0);
		frame_free_meta(expect(r0, MPIV__MSG_TYPE__MSG_PROBE_REPLY,
		    NULL, NULL));
	}
	rq.job_id = "home";
	assert_int_equal(frame_write(ctl_fd, MPIV__MSG_TYPE__MSG_CM_STATS_REQ,
	    &rq.base, NULL, 0, TMO), 0);
	cs = (Mpiv__CmStats *)expect(ctl_fd, MPIV__MSG_TYPE__MSG_CM_STATS,
	    NULL, NULL);
	assert_int_equal(cs->messages, 1);
	assert_int_equal(cs->bytes, 1);
	frame_free_meta(&cs->base);

	do_send(r0, 0, 1, 1, 1, false, 0, "y", 1);	/* rank 1 lives elsewhere */
	e = (Mpiv__Error *)expect(r0, MPIV__MSG_TYPE__MSG_ERROR, NULL, NULL);
	assert_non_null(strstr(e->text, "not home"));
	frame_free_meta(&e->base);
	expect_closed(r0);
	close(r0);
}

/* A big message posted-for streams through; content intact. */
static void
test_big_cut_through(void **state)
{
	size_t n = 8u << 20;
	uint8_t *big = malloc(n);
	int r0, r1;
	Mpiv__Deliver *d;

	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 31 + 7);
	setup_job("big", 2, 1, 0);
	r0 = rank_conn("big", 0, 1);
	r1 = rank_conn("big", 1, 1);
	post_recv(r1, 1, 0, 0);
	usleep(20000);
	/* frame_write blocks until the CM took it all: the reader below
	   must run alongside, so write from a child. */
	pid_t w = fork();
	if (w == 0) {
		do_send(r0, 0, 1, 0, 1, false, 0, big, (uint32_t)n);
		_exit(0);
	}
	d = expect_deliver(r1, big, (uint32_t)n);
	frame_free_meta(&d->base);
	waitpid(w, NULL, 0);
	free(big);
	close(r0);
	close(r1);
}

static void
test_job_end(void **state)
{
	Mpiv__JobEnd je = MPIV__JOB_END__INIT;
	int r0;

	setup_job("end", 2, 1, 0);
	r0 = rank_conn("end", 0, 1);
	do_send(r0, 0, 1, 1, 1, false, 0, "left over", 9);
	je.job_id = "end";
	assert_int_equal(frame_write(ctl_fd, MPIV__MSG_TYPE__MSG_JOB_END,
	    &je.base, NULL, 0, TMO), 0);
	expect_closed(r0);
	close(r0);
	refused("end", 0, 1, FRAME_VERSION, MPIV__ROLE__ROLE_RANK,
	    "unknown job");
}

/*
 * Back-pressure (run against a CM started with --max-memory 64K): a
 * sender pushes far more than the cap to a receiver that is not
 * receiving; the CM pauses it instead of growing, and every message
 * still arrives, in order, once the receiver drains.
 */
static void
test_back_pressure(void **state)
{
	enum { N = 200, SZ = 4096 };
	static uint8_t buf[SZ];
	int r0, r1, st;
	pid_t w;
	Mpiv__Deliver *d;
	Mpiv__CmStatsReq rq = MPIV__CM_STATS_REQ__INIT;
	Mpiv__CmStats *cs;

	/* relay-only: the log (which nothing frees before checkpoints)
	   would otherwise hold every drained message against the cap */
	setup_job_mode("bp", 2, 1, 0, true);
	r0 = rank_conn("bp", 0, 1);
	r1 = rank_conn("bp", 1, 1);
	if ((w = fork()) == 0) {
		for (int i = 0; i < N; i++) {
			memset(buf, i, SZ);
			Mpiv__Send s = MPIV__SEND__INIT;
			s.src = 0;
			s.dst = 1;
			s.tag = i;
			s.seq = (uint64_t)i + 1;
			if (frame_write(r0, MPIV__MSG_TYPE__MSG_SEND, &s.base,
			    buf, SZ, 10000) < 0)
				_exit(1);
		}
		_exit(0);
	}
	usleep(300000);
	/* the sender is held back: far fewer than N messages taken */
	rq.job_id = "bp";
	assert_int_equal(frame_write(ctl_fd, MPIV__MSG_TYPE__MSG_CM_STATS_REQ,
	    &rq.base, NULL, 0, TMO), 0);
	cs = (Mpiv__CmStats *)expect(ctl_fd, MPIV__MSG_TYPE__MSG_CM_STATS,
	    NULL, NULL);
	assert_true(cs->messages < N);
	frame_free_meta(&cs->base);
	for (int i = 0; i < N; i++) {
		post_recv(r1, (uint64_t)i, 0, -1);
		memset(buf, i, SZ);
		d = expect_deliver(r1, buf, SZ);
		assert_int_equal(d->tag, i);
		frame_free_meta(&d->base);
	}
	assert_int_equal(waitpid(w, &st, 0), w);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(r0);
	close(r1);
}

static int
start_small_cm(void **state)
{
	cm_max_memory = "64K";
	ctl_fd = -1;
	return start_cm(state);
}

int
main(void)
{
	const struct CMUnitTest small[] = {
		cmocka_unit_test(test_back_pressure),
	};
	int rc;

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_ok),
		cmocka_unit_test(test_hello_refusals),
		cmocka_unit_test(test_first_frame_not_hello),
		cmocka_unit_test(test_bad_bytes),
		cmocka_unit_test(test_fencing),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_ordering),
		cmocka_unit_test(test_multicast),
		cmocka_unit_test(test_sync_ack),
		cmocka_unit_test(test_cancel_probe_dup),
		cmocka_unit_test(test_stats_and_wrong_home),
		cmocka_unit_test(test_big_cut_through),
		cmocka_unit_test(test_job_end),
	};

	signal(SIGPIPE, SIG_IGN);
	alarm(180);
	log_init("test_cm_proto", LOG_LEVEL_WARN);
	rc = cmocka_run_group_tests(tests, start_cm, stop_cm);
	ctl_fd = -1;
	return rc | cmocka_run_group_tests_name("back_pressure", small,
	    start_small_cm, stop_cm);
}
