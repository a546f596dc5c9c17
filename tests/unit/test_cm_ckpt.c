/*
 * test_cm_ckpt.c: the Channel Memory side of checkpoints
 * (docs/CHECKPOINT.md), at a real CM driven with raw frames: a rank's
 * CkptMark, a checkpoint server's link and CkptDurable, the log freed up
 * to the mark (and only that), a durable notice before its mark, a stale
 * incarnation's notice ignored, a restored rank's Hello{resume_event,
 * resume_nd} (replay and NdLog only after the mark, resuming before what
 * was freed refused), the log bounded over many checkpoint cycles,
 * garbage marks and notices rejected, and the send digests a
 * re-executing sender is checked against (kept, compared, trimmed).
 */
#include "cm_harness.h"

#define WAIT_MS 3000	/* how long a durable notice may take to apply */

/* ---------------- a controller, a checkpoint server, ranks ---------------- */

static void
ck_job(const char *job, int nranks, int ncms)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;
	Mpiv__JobStatus *st;

	js.job_id = (char *)job;
	js.nranks = nranks;
	js.ncms = ncms;
	st = job_setup(&js);
	assert_string_equal(st->state, "ready");
	frame_free_meta(&st->base);
}

/* log_entries and log_bytes of the job now. */
static void
ck_stats(const char *job, uint64_t *entries, uint64_t *bytes)
{
	Mpiv__CmStatsReq rq = MPIV__CM_STATS_REQ__INIT;
	Mpiv__CmStats *cs;

	rq.job_id = (char *)job;
	assert_int_equal(frame_write(ctl_fd, MPIV__MSG_TYPE__MSG_CM_STATS_REQ,
	    &rq.base, NULL, 0, TMO), 0);
	cs = (Mpiv__CmStats *)expect(ctl_fd, MPIV__MSG_TYPE__MSG_CM_STATS,
	    NULL, NULL);
	*entries = cs->log_entries;
	if (bytes != NULL)
		*bytes = cs->log_bytes;
	frame_free_meta(&cs->base);
}

static void
ck_assert_log(const char *job, uint64_t entries, uint64_t bytes)
{
	uint64_t e, b;

	ck_stats(job, &e, &b);
	assert_int_equal(e, entries);
	assert_int_equal(b, bytes);
}

/* A durable notice has no answer: waits until the log shrank to entries. */
static void
ck_wait_log(const char *job, uint64_t entries, uint64_t bytes)
{
	uint64_t e = 0, b = 0;

	for (int i = 0; i < WAIT_MS / 5; i++) {
		ck_stats(job, &e, &b);
		if (e == entries && b == bytes)
			return;
		usleep(5000);
	}
	fail_msg("log of job %s: %llu entries %llu bytes, expected %llu %llu",
	    job, (unsigned long long)e, (unsigned long long)b,
	    (unsigned long long)entries, (unsigned long long)bytes);
}

/* What an ignored notice must not change (it is given time to act). */
static void
ck_log_stays(const char *job, uint64_t entries, uint64_t bytes)
{
	usleep(100000);
	ck_assert_log(job, entries, bytes);
}

static int
ck_cs(const char *job)
{
	int fd = dial();
	Mpiv__HelloReply *hr = hello(fd, MPIV__ROLE__ROLE_CS, job, -1, 0,
	    FRAME_VERSION);

	if (!hr->ok)
		fail_msg("cs hello refused: %s", hr->error);
	frame_free_meta(&hr->base);
	return fd;
}

static void
ck_durable(int cs, const char *job, int rank, uint64_t k, uint32_t inc)
{
	Mpiv__CkptDurable d = MPIV__CKPT_DURABLE__INIT;

	d.job_id = (char *)job;
	d.rank = rank;
	d.ckpt_no = k;
	d.incarnation = inc;
	assert_int_equal(frame_write(cs, MPIV__MSG_TYPE__MSG_CKPT_DURABLE,
	    &d.base, NULL, 0, TMO), 0);
}

/*
 * Hello of rank/inc, restored at (resume_event, resume_nd) when not 0.
 * Returns the fd with *hr the reply (caller frees); NdLog not read yet.
 */
static int
ck_hello(const char *job, int rank, uint32_t inc, uint64_t resume_event,
    uint64_t resume_nd, Mpiv__HelloReply **hr)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	int fd = dial();

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = (char *)job;
	h.rank = rank;
	h.incarnation = inc;
	h.resume_event = resume_event;
	h.resume_nd = resume_nd;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
	*hr = (Mpiv__HelloReply *)expect(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    NULL, NULL);
	return fd;
}

/*
 * A home rank connects: HelloReply ok, then its NdLog. *events gets
 * log_events; nd[] each replayed outcome as (nd_no, repeat) pairs.
 */
static int
ck_rank(const char *job, int rank, uint32_t inc, uint64_t resume_event,
    uint64_t resume_nd, uint64_t *events, uint64_t (*nd)[2], size_t cap,
    size_t *nnd)
{
	Mpiv__HelloReply *hr;
	Mpiv__NdLog *lg;
	int fd = ck_hello(job, rank, inc, resume_event, resume_nd, &hr);
	size_t n = 0;
	bool last;

	if (!hr->ok)
		fail_msg("rank %d inc %u refused: %s", rank, inc, hr->error);
	if (events != NULL)
		*events = hr->log_events;
	frame_free_meta(&hr->base);
	do {
		lg = (Mpiv__NdLog *)expect(fd, MPIV__MSG_TYPE__MSG_ND_LOG, NULL,
		    NULL);
		for (size_t i = 0; i < lg->n_outcomes; i++, n++) {
			if (nd != NULL && n < cap) {
				nd[n][0] = lg->outcomes[i]->nd_no;
				nd[n][1] = lg->outcomes[i]->repeat;
			}
		}
		last = lg->last;
		frame_free_meta(&lg->base);
	} while (!last);
	if (nnd != NULL)
		*nnd = n;
	return fd;
}

/* The Hello of rank/inc at (resume_event, resume_nd) is refused. */
static void
ck_refused(const char *job, int rank, uint32_t inc, uint64_t resume_event,
    uint64_t resume_nd, const char *needle)
{
	Mpiv__HelloReply *hr;
	int fd = ck_hello(job, rank, inc, resume_event, resume_nd, &hr);

	assert_false(hr->ok);
	if (strstr(hr->error, needle) == NULL)
		fail_msg("refusal \"%s\" lacks \"%s\"", hr->error, needle);
	/* only a log freed by a checkpoint asks for a restore */
	assert_int_equal(hr->restore_needed,
	    strstr(hr->error, "was freed by durable checkpoint") != NULL);
	frame_free_meta(&hr->base);
	expect_closed(fd);
	close(fd);
}

static void dg_send(int fd, int src, int dst, uint64_t seq,
    const char *data, uint64_t d, bool check);

/* Send of data (tag 5) from src to dst, no digest. */
static void
ck_send(int fd, int src, int dst, uint64_t seq, const char *data)
{
	dg_send(fd, src, dst, seq, data, 0, false);
}

/* RecvPost (probe false) or Iprobe (probe true) of ANY source/tag. */
static void
ck_post(int fd, uint64_t post_no, bool probe)
{
	Mpiv__RecvPost rp = MPIV__RECV_POST__INIT;
	Mpiv__Probe pr = MPIV__PROBE__INIT;

	if (probe) {
		pr.req_id = post_no;
		pr.post_no = post_no;
		pr.source = pr.tag = -1;
		assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_PROBE,
		    &pr.base, NULL, 0, TMO), 0);
		return;
	}
	rp.req_id = post_no;
	rp.post_no = post_no;
	rp.source = rp.tag = -1;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_RECV_POST,
	    &rp.base, NULL, 0, TMO), 0);
}

/* The answer to post_no is a Deliver of data with this event. */
static void
ck_got(int fd, uint64_t post_no, uint64_t event, const char *data,
    bool replayed)
{
	uint8_t *p;
	uint32_t n;
	Mpiv__Deliver *d = (Mpiv__Deliver *)expect(fd,
	    MPIV__MSG_TYPE__MSG_DELIVER, &p, &n);

	assert_int_equal(d->req_id, post_no);
	assert_int_equal(d->event, event);
	assert_int_equal(d->replayed, replayed);
	assert_int_equal(n, strlen(data));
	assert_memory_equal(p, data, n);
	frame_free_meta(&d->base);
	free(p);
}

/* The answer to Iprobe post_no: not found, with this event. */
static void
ck_missed(int fd, uint64_t post_no, uint64_t event)
{
	Mpiv__ProbeReply *pr = (Mpiv__ProbeReply *)expect(fd,
	    MPIV__MSG_TYPE__MSG_PROBE_REPLY, NULL, NULL);

	assert_int_equal(pr->req_id, post_no);
	assert_int_equal(pr->event, event);
	assert_false(pr->found);
	frame_free_meta(&pr->base);
}

/* NdRecord of one outcome nd_no .. nd_no+repeat-1, and its NdAck. */
static void
ck_nd(int fd, uint64_t nd_no, uint64_t repeat, bool flag)
{
	Mpiv__NdRecord r = MPIV__ND_RECORD__INIT;
	Mpiv__NdOutcome o = MPIV__ND_OUTCOME__INIT, *op = &o;
	Mpiv__NdAck *a;

	o.nd_no = nd_no;
	o.repeat = repeat;
	o.kind = 1;
	o.flag = flag;
	r.ack_id = nd_no;
	r.n_outcomes = 1;
	r.outcomes = &op;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_ND_RECORD, &r.base,
	    NULL, 0, TMO), 0);
	a = (Mpiv__NdAck *)expect(fd, MPIV__MSG_TYPE__MSG_ND_ACK, NULL, NULL);
	assert_int_equal(a->ack_id, nd_no);
	frame_free_meta(&a->base);
}

static void
ck_mark(int fd, uint64_t k, uint64_t event, uint64_t nd_no, uint64_t post_no)
{
	Mpiv__CkptMark m = MPIV__CKPT_MARK__INIT;

	m.ckpt_no = k;
	m.event = event;
	m.nd_no = nd_no;
	m.post_no = post_no;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_CKPT_MARK, &m.base,
	    NULL, 0, TMO), 0);
}

static void
ck_error(int fd, const char *needle)
{
	Mpiv__Error *e = (Mpiv__Error *)expect(fd, MPIV__MSG_TYPE__MSG_ERROR,
	    NULL, NULL);

	if (strstr(e->text, needle) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", e->text, needle);
	frame_free_meta(&e->base);
	expect_closed(fd);
	close(fd);
}

/* ---------------- tests ---------------- */

/*
 * Rank 1 gets "a", "bb", "ccc" (events 1-3); "dddd" waits unexpected.
 * Checkpoint 1 at event 2 frees "a" and "bb" only; the unexpected
 * payload is untouched and delivered later; a second notice is harmless.
 */
static void
test_mark_durable_frees(void **state)
{
	Mpiv__HelloReply *hr;
	int r0, r1, cs;

	ck_job("fr", 2, 1);
	r0 = ck_hello("fr", 0, 1, 0, 0, &hr);	/* nothing to resume */
	assert_true(hr->ok);
	assert_int_equal(hr->log_events, 0);
	frame_free_meta(&hr->base);
	skip_nd_log(r0);
	r1 = ck_rank("fr", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("fr");
	ck_post(r1, 1, false);
	ck_post(r1, 2, false);
	ck_post(r1, 3, false);
	ck_send(r0, 0, 1, 1, "a");
	ck_send(r0, 0, 1, 2, "bb");
	ck_send(r0, 0, 1, 3, "ccc");
	ck_send(r0, 0, 1, 4, "dddd");
	ck_got(r1, 1, 1, "a", false);
	ck_got(r1, 2, 2, "bb", false);
	ck_got(r1, 3, 3, "ccc", false);
	ck_assert_log("fr", 3, 6);
	ck_mark(r1, 1, 2, 0, 3);
	ck_durable(cs, "fr", 1, 1, 1);
	ck_wait_log("fr", 1, 3);
	ck_durable(cs, "fr", 1, 1, 1);		/* again: nothing more */
	ck_log_stays("fr", 1, 3);
	ck_post(r1, 4, false);			/* the unexpected one */
	ck_got(r1, 4, 4, "dddd", false);
	ck_assert_log("fr", 2, 7);
	ck_mark(r1, 2, 4, 0, 4);
	ck_durable(cs, "fr", 1, 2, 1);
	ck_wait_log("fr", 0, 0);
	ck_send(r0, 0, 1, 5, "e");		/* the log grows again */
	ck_post(r1, 5, false);
	ck_got(r1, 5, 5, "e", false);
	ck_assert_log("fr", 1, 1);
	close(cs);
	close(r0);
	close(r1);
}

/* The CS's notice overtakes the mark: applied once the mark arrives. */
static void
test_durable_before_mark(void **state)
{
	int r0, r1, cs;

	ck_job("bm", 2, 1);
	r0 = ck_rank("bm", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	r1 = ck_rank("bm", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("bm");
	ck_send(r0, 0, 1, 1, "xy");
	ck_send(r0, 0, 1, 2, "z");
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "xy", false);
	ck_post(r1, 2, false);
	ck_got(r1, 2, 2, "z", false);
	ck_durable(cs, "bm", 1, 1, 1);
	expect_silence(r1, 50);			/* no answer to a rank */
	ck_log_stays("bm", 2, 3);
	ck_mark(r1, 1, 1, 0, 2);
	ck_wait_log("bm", 1, 1);
	/* a mark beyond a waiting notice does not apply it */
	ck_durable(cs, "bm", 1, 3, 1);
	ck_log_stays("bm", 1, 1);
	ck_mark(r1, 2, 2, 0, 2);
	ck_log_stays("bm", 1, 1);
	ck_mark(r1, 3, 2, 0, 2);
	ck_wait_log("bm", 0, 0);
	close(cs);
	close(r0);
	close(r1);
}

/*
 * Incarnation 1 marks checkpoint 1 at event 2 and dies; incarnation 2
 * restarts from the beginning. The late notice of incarnation 1's
 * checkpoint frees nothing (incarnation 2's replay needs events 1-2),
 * nor does a notice for a checkpoint nobody marked; incarnation 2's own
 * checkpoint does, even when its notice came first. Incarnation 2 then
 * marks checkpoint 5 and dies before its notice arrives: nothing is
 * freed, and incarnation 3 restored from checkpoint 4 replays event 5.
 */
static void
test_stale_incarnation(void **state)
{
	int r0, r1, cs;
	uint64_t events;

	ck_job("st", 2, 1);
	r0 = ck_rank("st", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	r1 = ck_rank("st", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("st");
	ck_send(r0, 0, 1, 1, "p");
	ck_send(r0, 0, 1, 2, "q");
	ck_send(r0, 0, 1, 3, "r");
	for (uint64_t i = 1; i <= 3; i++)
		ck_post(r1, i, false);
	ck_got(r1, 1, 1, "p", false);
	ck_got(r1, 2, 2, "q", false);
	ck_got(r1, 3, 3, "r", false);
	ck_mark(r1, 1, 2, 0, 2);
	close(r1);
	r1 = ck_rank("st", 1, 2, 0, 0, &events, NULL, 0, NULL);
	assert_int_equal(events, 3);
	ck_durable(cs, "st", 1, 1, 1);		/* stale */
	ck_log_stays("st", 3, 3);
	ck_durable(cs, "st", 1, 1, 2);		/* inc 2 has not marked it yet */
	ck_log_stays("st", 3, 3);
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "p", true);
	ck_post(r1, 2, false);
	ck_got(r1, 2, 2, "q", true);
	ck_post(r1, 3, false);
	ck_got(r1, 3, 3, "r", true);
	ck_mark(r1, 1, 3, 0, 3);		/* incarnation 2's checkpoint 1 */
	ck_wait_log("st", 0, 0);
	ck_mark(r1, 3, 3, 0, 3);
	ck_durable(cs, "st", 1, 2, 2);		/* never marked: ignored */
	ck_send(r0, 0, 1, 4, "s");
	ck_post(r1, 4, false);
	ck_got(r1, 4, 4, "s", false);
	ck_log_stays("st", 1, 1);
	ck_mark(r1, 4, 4, 0, 4);
	ck_durable(cs, "st", 1, 4, 2);		/* the link still works */
	ck_wait_log("st", 0, 0);
	ck_send(r0, 0, 1, 5, "t");
	ck_post(r1, 5, false);
	ck_got(r1, 5, 5, "t", false);
	ck_mark(r1, 5, 5, 0, 5);
	close(r1);
	usleep(50000);
	ck_durable(cs, "st", 1, 5, 2);		/* late: its maker is gone */
	ck_log_stays("st", 1, 1);
	r1 = ck_rank("st", 1, 3, 4, 0, &events, NULL, 0, NULL);
	assert_int_equal(events, 1);
	ck_post(r1, 5, false);
	ck_got(r1, 5, 5, "t", true);
	close(r1);
	close(r0);
	close(cs);
}

/*
 * Rank 1, incarnation 1: deliveries "m1", "m2" (events 1-2), three
 * Iprobe misses folded into one entry (events 3-5, posts 3-5), "m6"
 * (event 6), receive 7 pending; outcomes nd 1 (completed), 2-6 (nothing,
 * folded). Checkpoint 1 at event 3, nd 3 is durable (the fold keeps
 * events 4-5), incarnation 1 dies, "m7" is sent meanwhile. Resuming
 * before what was freed is refused; incarnation 2 restored at (3, 3)
 * gets outcomes 4-6 only, events 4-6 from the log, then live ones from
 * event 7 on, its posts numbered from 4 (below the 7 incarnation 1
 * reached). Incarnation 3 restored at event 4 re-posting post 4 (which
 * its image had answered) diverged.
 */
static void
test_restore_resume(void **state)
{
	uint64_t nd[8][2], events;
	size_t nnd;
	int r0, r1, cs;

	ck_job("rs", 2, 1);
	r0 = ck_rank("rs", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	r1 = ck_rank("rs", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("rs");
	ck_send(r0, 0, 1, 1, "m1");
	ck_send(r0, 0, 1, 2, "m2");
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "m1", false);
	ck_post(r1, 2, false);
	ck_got(r1, 2, 2, "m2", false);
	for (uint64_t p = 3; p <= 5; p++) {
		ck_post(r1, p, true);
		ck_missed(r1, p, p);
	}
	ck_send(r0, 0, 1, 3, "m6");
	ck_post(r1, 6, false);
	ck_got(r1, 6, 6, "m6", false);
	ck_post(r1, 7, false);
	ck_nd(r1, 1, 1, true);
	ck_nd(r1, 2, 5, false);
	ck_assert_log("rs", 4, 6);
	ck_mark(r1, 1, 3, 3, 3);
	ck_durable(cs, "rs", 1, 1, 1);
	ck_wait_log("rs", 2, 2);		/* the fold (4-5) and m6 stay */
	close(r1);
	usleep(50000);
	ck_send(r0, 0, 1, 4, "m7");
	ck_refused("rs", 1, 2, 0, 0, "cannot restart from the beginning");
	ck_refused("rs", 1, 2, 2, 3, "cannot resume at event 2");
	ck_refused("rs", 1, 2, 3, 2, "cannot resume at event 3 (nd 2)");
	ck_refused("rs", 1, 2, 9, 3, "only 6 events were logged");
	ck_refused("rs", 1, 2, 3, 7, "only 6 outcomes were stored");

	r1 = ck_rank("rs", 1, 2, 3, 3, &events, nd, 8, &nnd);
	assert_int_equal(events, 3);
	assert_int_equal(nnd, 1);
	assert_int_equal(nd[0][0], 4);
	assert_int_equal(nd[0][1], 3);
	ck_post(r1, 4, true);			/* lower than 7: accepted */
	ck_missed(r1, 4, 4);
	ck_post(r1, 5, true);
	ck_missed(r1, 5, 5);
	ck_post(r1, 6, false);
	ck_got(r1, 6, 6, "m6", true);
	ck_post(r1, 7, false);			/* live again */
	ck_got(r1, 7, 7, "m7", false);
	ck_assert_log("rs", 3, 4);
	/* a post the checkpoint had answered is a divergence */
	close(r1);
	r1 = ck_rank("rs", 1, 3, 4, 3, &events, NULL, 0, NULL);
	assert_int_equal(events, 3);
	ck_post(r1, 4, true);
	ck_error(r1, "answered at event 4");
	close(r0);
	close(cs);
}

/*
 * Many cycles of traffic with a checkpoint every CYCLE deliveries (each
 * mark a little behind the last event, outcomes recorded between): the
 * log never holds more than one cycle and its tail, and the outcomes of
 * a restored rank are only those after its last checkpoint.
 */
static void
test_bounded_log(void **state)
{
	enum { CYCLES = 200, CYCLE = 10, KEEP = 2 };
	uint64_t seq = 0, post = 0, ev = 0, ndn = 0, e, b, peak = 0;
	uint64_t nd[4][2], events;
	size_t nnd;
	int r0, r1, cs;

	ck_job("bd", 2, 1);
	r0 = ck_rank("bd", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	r1 = ck_rank("bd", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("bd");
	for (uint64_t k = 1; k <= CYCLES; k++) {
		for (int i = 0; i < CYCLE; i++) {
			ck_send(r0, 0, 1, ++seq, "0123456789");
			ck_post(r1, ++post, false);
			ck_got(r1, post, ++ev, "0123456789", false);
			ck_nd(r1, ++ndn, 1, true);
		}
		ck_stats("bd", &e, &b);
		if (e > peak)
			peak = e;
		assert_true(e <= CYCLE + KEEP);
		assert_int_equal(b, e * 10);
		ck_mark(r1, k, ev - KEEP, ndn - 1, post);
		ck_durable(cs, "bd", 1, k, 1);
		ck_wait_log("bd", KEEP, KEEP * 10);
	}
	assert_int_equal(peak, CYCLE + KEEP);
	close(r1);
	r1 = ck_rank("bd", 1, 2, ev - KEEP, ndn - 1, &events, nd, 4, &nnd);
	assert_int_equal(events, KEEP);
	assert_int_equal(nnd, 1);
	assert_int_equal(nd[0][0], ndn);
	close(r1);
	close(r0);
	close(cs);
}

/* Marks that cannot be true, and notices that make no sense. */
static void
test_garbage(void **state)
{
	uint32_t inc = 1;
	int r0, r1, cs;

	ck_job("gb", 2, 1);
	r0 = ck_rank("gb", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	ck_send(r0, 0, 1, 1, "g");
	r1 = ck_rank("gb", 1, inc++, 0, 0, NULL, NULL, 0, NULL);
	ck_mark(r1, 0, 0, 0, 0);
	ck_error(r1, "ckpt_no 0");

	r1 = ck_rank("gb", 1, inc++, 0, 0, NULL, NULL, 0, NULL);
	ck_mark(r1, 1, 1, 0, 0);
	ck_error(r1, "event=1 beyond the 0 events delivered to incarnation 2");

	r1 = ck_rank("gb", 1, inc++, 0, 0, NULL, NULL, 0, NULL);
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "g", false);
	ck_mark(r1, 1, 1, 1, 1);
	ck_error(r1, "nd_no=1 beyond the 0 outcomes stored");

	/* event 1 replayed to incarnation 4 only once it posts again */
	r1 = ck_rank("gb", 1, inc++, 0, 0, NULL, NULL, 0, NULL);
	ck_mark(r1, 1, 1, 0, 0);
	ck_error(r1, "beyond the 0 events delivered to incarnation 4");

	r1 = ck_rank("gb", 1, inc++, 0, 0, NULL, NULL, 0, NULL);
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "g", true);
	ck_mark(r1, 5, 1, 0, 1);
	ck_mark(r1, 5, 1, 0, 1);
	ck_error(r1, "ckpt_no=5 after 5 (checkpoint numbers must increase)");

	r1 = ck_rank("gb", 1, inc++, 0, 0, NULL, NULL, 0, NULL);
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "g", true);
	ck_mark(r1, 1, 1, 0, 1);
	ck_mark(r1, 2, 0, 0, 1);
	ck_error(r1, "event=0 before event 1");

	/* checkpoint servers */
	refused("nojob", -1, 0, FRAME_VERSION, MPIV__ROLE__ROLE_CS,
	    "unknown job 'nojob'");
	cs = ck_cs("gb");
	ck_durable(cs, "gb", 1, 1, 99);		/* future: waits, harmless */
	ck_durable(cs, "other", 1, 1, 1);	/* unknown job: ignored */
	ck_durable(cs, "gb", 7, 1, 1);
	ck_error(cs, "ckpt durable for rank 7 out of range");
	cs = ck_cs("gb");
	ck_post(cs, 1, false);
	ck_error(cs, "unexpected recv_post frame from a checkpoint server");
	ck_assert_log("gb", 1, 1);
	close(r0);
}

/* A mark on a connection to a CM that is not the rank's home. */
static void
test_mark_not_home(void **state)
{
	Mpiv__HelloReply *hr;
	int r1;

	ck_job("nh", 2, 2);	/* this CM (index 0) is home of rank 0 only */
	r1 = ck_hello("nh", 1, 1, 0, 0, &hr);
	assert_true(hr->ok);
	frame_free_meta(&hr->base);
	ck_mark(r1, 1, 0, 0, 0);
	ck_error(r1, "ckpt mark from rank 1, which this CM (index 0 of 2) is "
	    "not home of");
}

/*
 * Back-pressure (--max-memory 64K): rank 1's unexpected 100 KB pause the
 * sender, rank 0, whose CkptMark then sits unread. Its durable notice
 * comes first and resumes reading, so the mark is applied.
 */
static void
test_throttled_mark(void **state)
{
	static char big[100 << 10];
	Mpiv__Send snd = MPIV__SEND__INIT;
	int r0, r1, cs;

	ck_job("tm", 2, 1);
	r0 = ck_rank("tm", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	r1 = ck_rank("tm", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("tm");
	ck_send(r1, 1, 0, 1, "hello");
	ck_post(r0, 1, false);
	ck_got(r0, 1, 1, "hello", false);
	snd.src = 0;
	snd.dst = 1;
	snd.seq = 1;
	memset(big, 'b', sizeof(big));
	assert_int_equal(frame_write(r0, MPIV__MSG_TYPE__MSG_SEND, &snd.base,
	    big, sizeof(big), TMO), 0);
	ck_mark(r0, 1, 1, 0, 1);
	ck_log_stays("tm", 1, 5);
	ck_durable(cs, "tm", 0, 1, 1);
	ck_wait_log("tm", 0, 0);
	close(cs);
	close(r0);
	close(r1);
}

/* ---------------- send digests (channel-memory/digest.c) ---------------- */

/* Send of data with digest d; check: Send{check} of size n, no payload. */
static void
dg_send(int fd, int src, int dst, uint64_t seq, const char *data,
    uint64_t d, bool check)
{
	Mpiv__Send s = MPIV__SEND__INIT;
	uint32_t n = (uint32_t)strlen(data);

	s.src = src;
	s.dst = dst;
	s.tag = 5;
	s.seq = seq;
	s.digest = d;
	s.check = check;
	s.size = n;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SEND, &s.base,
	    check ? NULL : data, check ? 0 : n, TMO), 0);
}

static void
dg_trim(int fd, uint64_t k, uint64_t seq0, uint64_t seq1)
{
	Mpiv__DigestTrim t = MPIV__DIGEST_TRIM__INIT;
	uint64_t seqs[2] = { seq0, seq1 };

	t.ckpt_no = k;
	t.n_seqs = 2;
	t.seqs = seqs;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_DIGEST_TRIM,
	    &t.base, NULL, 0, TMO), 0);
}

/*
 * A re-executing sender's checks: the same digest passes in silence, a
 * different one is "replay diverged" naming rank, send number and
 * receiver, and the connection ends; checks of trimmed sends pass
 * unverified; a check with a payload is refused.
 */
static void
test_digest_check(void **state)
{
	Mpiv__HelloReply *hr;
	Mpiv__Error *e;
	int r0, r1;

	ck_job("dg", 2, 1);
	r0 = ck_rank("dg", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	r1 = ck_rank("dg", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	dg_send(r0, 0, 1, 1, "one", 0x1111, false);
	dg_send(r0, 0, 1, 2, "two", 0x2222, false);
	dg_send(r0, 0, 1, 3, "three", 0x3333, false);
	ck_post(r1, 1, false);
	ck_got(r1, 1, 1, "one", false);
	close(r0);
	/* incarnation 2 is told what the CM holds, and checks it */
	r0 = ck_hello("dg", 0, 2, 0, 0, &hr);
	assert_true(hr->ok);
	assert_true(hr->n_last_seq == 2);
	assert_int_equal(hr->last_seq[1], 3);
	frame_free_meta(&hr->base);
	skip_nd_log(r0);
	dg_send(r0, 0, 1, 1, "one", 0x1111, true);	/* delivered one */
	dg_send(r0, 0, 1, 2, "two", 0x2222, true);	/* still unexpected */
	expect_silence(r0, 100);
	/* the sender's checkpoint with seq 1 reached: digest 1 forgotten */
	dg_trim(r0, 1, 0, 1);
	dg_send(r0, 0, 1, 1, "ONE", 0x9999, true);	/* unverifiable */
	expect_silence(r0, 100);
	dg_send(r0, 0, 1, 3, "THREE", 0x4444, true);
	e = (Mpiv__Error *)expect(r0, MPIV__MSG_TYPE__MSG_ERROR, NULL, NULL);
	if (strstr(e->text, "replay diverged: rank 0, send #3 to rank 1 "
	    "(tag 5)") == NULL)
		fail_msg("error \"%s\" does not name the send", e->text);
	assert_int_equal(e->code, MPIV__ERROR_CODE__ERR_DIVERGED);
	frame_free_meta(&e->base);
	expect_closed(r0);
	close(r0);
	/* a check that carries a payload is a protocol error */
	r0 = ck_rank("dg", 0, 3, 0, 0, NULL, NULL, 0, NULL);
	{
		Mpiv__Send s = MPIV__SEND__INIT;
		s.src = 0;
		s.dst = 1;
		s.seq = 2;
		s.check = true;
		assert_int_equal(frame_write(r0, MPIV__MSG_TYPE__MSG_SEND,
		    &s.base, "xx", 2, TMO), 0);
	}
	ck_error(r0, "carries no payload");
	close(r0);
	close(r1);
}

/*
 * A sender that died mid-payload sends the message again: the same
 * digest is taken, another one is "replay diverged" (the receiver may
 * have seen part of the first).
 */
static void
test_digest_resend(void **state)
{
	Mpiv__Send s = MPIV__SEND__INIT;
	int r0, r1;

	ck_job("dr", 2, 1);
	r1 = ck_rank("dr", 1, 1, 0, 0, NULL, NULL, 0, NULL);
	ck_post(r1, 1, false);
	r0 = ck_rank("dr", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	/* header of 4 bytes, 2 of them sent, then the sender dies */
	s.src = 0;
	s.dst = 1;
	s.tag = 5;
	s.seq = 1;
	s.digest = 0xabcd;
	{
		size_t len = 0;
		uint8_t *hdr = frame_encode(MPIV__MSG_TYPE__MSG_SEND, &s.base, 4,
		    &len);
		assert_non_null(hdr);
		assert_int_equal(write(r0, hdr, len), (ssize_t)len);
		assert_int_equal(write(r0, "ab", 2), 2);
		free(hdr);
	}
	usleep(100000);
	close(r0);
	expect_closed(r1);	/* its delivery cannot be finished */
	close(r1);
	r0 = ck_rank("dr", 0, 2, 0, 0, NULL, NULL, 0, NULL);
	dg_send(r0, 0, 1, 1, "abXY", 0xdcba, false);
	ck_error(r0, "replay diverged: rank 0, send #1 to rank 1");
	close(r0);
	r0 = ck_rank("dr", 0, 3, 0, 0, NULL, NULL, 0, NULL);
	dg_send(r0, 0, 1, 1, "abcd", 0xabcd, false);
	expect_silence(r0, 100);
	close(r0);
}

/* A durable checkpoint is told to the rank whose log it freed. */
static void
test_durable_told(void **state)
{
	Mpiv__CkptDurable *d;
	int r0, cs;

	ck_job("dt", 1, 1);
	r0 = ck_rank("dt", 0, 1, 0, 0, NULL, NULL, 0, NULL);
	cs = ck_cs("dt");
	ck_mark(r0, 1, 0, 0, 0);
	ck_durable(cs, "dt", 0, 1, 1);
	d = (Mpiv__CkptDurable *)expect(r0, MPIV__MSG_TYPE__MSG_CKPT_DURABLE,
	    NULL, NULL);
	assert_int_equal(d->ckpt_no, 1);
	assert_int_equal(d->rank, 0);
	assert_int_equal(d->incarnation, 1);
	frame_free_meta(&d->base);
	close(cs);
	close(r0);
}

static int
start_small(void **state)
{
	cm_max_memory = "64K";
	return start_cm(state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark_durable_frees),
		cmocka_unit_test(test_durable_before_mark),
		cmocka_unit_test(test_stale_incarnation),
		cmocka_unit_test(test_restore_resume),
		cmocka_unit_test(test_bounded_log),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_mark_not_home),
		cmocka_unit_test(test_digest_check),
		cmocka_unit_test(test_digest_resend),
		cmocka_unit_test(test_durable_told),
	};
	const struct CMUnitTest small[] = {
		cmocka_unit_test(test_throttled_mark),
	};
	int rc;

	signal(SIGPIPE, SIG_IGN);
	alarm(180);
	log_init("test_cm_ckpt", LOG_LEVEL_WARN);
	rc = cmocka_run_group_tests(tests, start_cm, stop_cm);
	return rc | cmocka_run_group_tests_name("max_memory", small,
	    start_small, stop_cm);
}
