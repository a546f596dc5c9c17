/*
 * test_cm_nd_direct.c: a real Channel Memory as the event logger of the
 * direct protocol (channel-memory/ndstore.c, docs/DIRECT.md "What is
 * logged"). Ranks of direct jobs record their wildcard receive bindings
 * (kind 8), probe and iprobe answers (9, 10), cancel answers (11) and
 * committed Finalize (12) as NdOutcomes carrying post_no, src and seq,
 * in the nd_no numbering of kinds 1-7.
 *
 *   logged      an NdRecord mixing kinds 1-12 is acked; the next
 *               incarnation gets every outcome back in NdLog, in order,
 *               every field intact; direct outcomes are never folded
 *               (two iprobe misses in a row stay two), while a run of
 *               kind 1 misses still folds
 *   bad_kind    kind 0 and kind 15 (past the last, 14) are refused with
 *               a session error naming the kind; outcomes before them in
 *               the record stay
 *   chunks      10000 bindings with large numbers come back in several
 *               NdLog chunks, all of them, in order
 *   trimmed     a checkpoint mark in the middle of the direct outcomes,
 *               made durable, frees them up to its nd_no: a restored
 *               incarnation gets the rest, one from the start is refused
 *   store       with --store, a CM killed with SIGKILL and started again
 *               gives them all back intact (and recovering does not
 *               write them to the store again); a durable checkpoint's
 *               trim made in the second life survives a second SIGKILL
 */
#include "cm_harness.h"

#include <fcntl.h>
#include <sys/stat.h>

/* One outcome as sent and as expected back. */
struct nd_spec {
	uint64_t nd_no, repeat;
	uint32_t kind;
	bool flag;
	uint64_t post_no;
	int32_t src;
	uint64_t seq;
	size_t nidx;
	int32_t idx[2];
};

/* What a rank records in two NdRecords (nd 1 .. 15). */
static const struct nd_spec rec1[] = {
	{ 1, 2, 1, false, 0, 0, 0, 0, { 0 } },		/* Test misses */
	{ 3, 1, 8, true, 5, 1, 3, 0, { 0 } },		/* recv 5 <- (1, 3) */
	{ 4, 1, 10, false, 0, 0, 0, 0, { 0 } },		/* iprobe miss */
	{ 5, 1, 10, false, 0, 0, 0, 0, { 0 } },		/* again: not folded */
	{ 6, 1, 9, true, 0, 1, 4, 0, { 0 } },		/* probe found (1, 4) */
	{ 7, 1, 10, true, 0, 0, 7, 0, { 0 } },		/* iprobe found (0, 7) */
	{ 8, 1, 11, true, 9, 0, 0, 0, { 0 } },		/* cancel of 9 won */
	{ 9, 1, 11, false, 10, 0, 0, 0, { 0 } },	/* cancel of 10 lost */
	{ 10, 1, 1, false, 0, 0, 0, 0, { 0 } },		/* Test miss */
};
static const struct nd_spec rec2[] = {
	{ 11, 1, 1, false, 0, 0, 0, 0, { 0 } },		/* folds with 10 */
	{ 12, 1, 3, true, 0, 0, 0, 2, { 0, 2 } },	/* Testsome */
	{ 13, 1, 8, true, 1ull << 40, 1, 1ull << 50, 0, { 0 } },
	{ 14, 1, 1, false, 11, 0, 0, 0, { 0 } },	/* a post_no: kept */
	{ 15, 1, 12, true, 0, 0, 0, 0, { 0 } },		/* Finalize committed */
	{ 16, 1, 13, true, 5, 0, 0, 2, { 3, 1 } },	/* nbc steps: kept */
};
/* What NdLog gives back. */
static const struct nd_spec want[] = {
	{ 1, 2, 1, false, 0, 0, 0, 0, { 0 } },
	{ 3, 1, 8, true, 5, 1, 3, 0, { 0 } },
	{ 4, 1, 10, false, 0, 0, 0, 0, { 0 } },
	{ 5, 1, 10, false, 0, 0, 0, 0, { 0 } },
	{ 6, 1, 9, true, 0, 1, 4, 0, { 0 } },
	{ 7, 1, 10, true, 0, 0, 7, 0, { 0 } },
	{ 8, 1, 11, true, 9, 0, 0, 0, { 0 } },
	{ 9, 1, 11, false, 10, 0, 0, 0, { 0 } },
	{ 10, 2, 1, false, 0, 0, 0, 0, { 0 } },
	{ 12, 1, 3, true, 0, 0, 0, 2, { 0, 2 } },
	{ 13, 1, 8, true, 1ull << 40, 1, 1ull << 50, 0, { 0 } },
	{ 14, 1, 1, false, 11, 0, 0, 0, { 0 } },
	{ 15, 1, 12, true, 0, 0, 0, 0, { 0 } },
	{ 16, 1, 13, true, 5, 0, 0, 2, { 3, 1 } },
};
#define NWANT (sizeof(want) / sizeof(want[0]))

static char store_dir[64];

/* ---------------- helpers ---------------- */

static void
nd_job(const char *job, const char *state)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;
	Mpiv__JobStatus *st;

	js.job_id = (char *)job;
	js.nranks = 2;
	js.ncms = 1;
	st = job_setup(&js);
	assert_string_equal(st->state, state);
	frame_free_meta(&st->base);
}

/* Hello of rank 0, restored at resume_nd when not 0; NdLog not read. */
static int
nd_hello(const char *job, uint32_t inc, uint64_t resume_nd,
    Mpiv__HelloReply **hr)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	int fd = dial();

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = (char *)job;
	h.rank = 0;
	h.incarnation = inc;
	h.resume_nd = resume_nd;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
	*hr = (Mpiv__HelloReply *)expect(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    NULL, NULL);
	return fd;
}

/*
 * Rank 0 (incarnation inc, restored at resume_nd) connects; its NdLog
 * goes to got[] (up to cap), *n the number of outcomes, *chunks the
 * number of NdLog frames.
 */
static int
nd_rank(const char *job, uint32_t inc, uint64_t resume_nd,
    struct nd_spec *got, size_t cap, size_t *n, size_t *chunks)
{
	Mpiv__HelloReply *hr;
	Mpiv__NdLog *lg;
	int fd = nd_hello(job, inc, resume_nd, &hr);
	size_t k = 0, c = 0;
	bool last;

	if (!hr->ok)
		fail_msg("rank 0 inc %u refused: %s", inc, hr->error);
	frame_free_meta(&hr->base);
	do {
		lg = (Mpiv__NdLog *)expect(fd, MPIV__MSG_TYPE__MSG_ND_LOG, NULL,
		    NULL);
		c++;
		for (size_t i = 0; i < lg->n_outcomes; i++, k++) {
			const Mpiv__NdOutcome *o = lg->outcomes[i];
			struct nd_spec *g = &got[k];

			if (k >= cap)
				continue;
			memset(g, 0, sizeof(*g));
			g->nd_no = o->nd_no;
			g->repeat = o->repeat;
			g->kind = o->kind;
			g->flag = o->flag;
			g->post_no = o->post_no;
			g->src = o->src;
			g->seq = o->seq;
			g->nidx = o->n_indices;
			for (size_t x = 0; x < o->n_indices && x < 2; x++)
				g->idx[x] = o->indices[x];
		}
		last = lg->last;
		frame_free_meta(&lg->base);
	} while (!last);
	*n = k;
	if (chunks != NULL)
		*chunks = c;
	return fd;
}

/* NdRecord{ack_id} of the n outcomes of s. */
static void
nd_send(int fd, uint64_t ack_id, const struct nd_spec *s, size_t n)
{
	Mpiv__NdRecord r = MPIV__ND_RECORD__INIT;
	Mpiv__NdOutcome *o = calloc(n, sizeof(*o));
	Mpiv__NdOutcome **pp = calloc(n, sizeof(*pp));
	int32_t *idx = calloc(2 * n, sizeof(*idx));

	assert_non_null(o);
	assert_non_null(pp);
	assert_non_null(idx);
	for (size_t i = 0; i < n; i++) {
		mpiv__nd_outcome__init(&o[i]);
		o[i].nd_no = s[i].nd_no;
		o[i].repeat = s[i].repeat;
		o[i].kind = s[i].kind;
		o[i].flag = s[i].flag;
		o[i].post_no = s[i].post_no;
		o[i].src = s[i].src;
		o[i].seq = s[i].seq;
		o[i].n_indices = s[i].nidx;
		memcpy(&idx[2 * i], s[i].idx, sizeof(s[i].idx));
		o[i].indices = &idx[2 * i];
		pp[i] = &o[i];
	}
	r.ack_id = ack_id;
	r.n_outcomes = n;
	r.outcomes = pp;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_ND_RECORD, &r.base,
	    NULL, 0, TMO), 0);
	free(o);
	free(pp);
	free(idx);
}

/* NdRecord and its NdAck. */
static void
nd_record(int fd, uint64_t ack_id, const struct nd_spec *s, size_t n)
{
	Mpiv__NdAck *a;

	nd_send(fd, ack_id, s, n);
	a = (Mpiv__NdAck *)expect(fd, MPIV__MSG_TYPE__MSG_ND_ACK, NULL, NULL);
	assert_int_equal(a->ack_id, ack_id);
	frame_free_meta(&a->base);
}

/* got[0..n) equals want[from..from+n), field by field. */
static void
nd_compare(const struct nd_spec *got, size_t n, size_t from)
{
	for (size_t i = 0; i < n; i++) {
		const struct nd_spec *g = &got[i], *w = &want[from + i];

		if (g->nd_no != w->nd_no || g->repeat != w->repeat ||
		    g->kind != w->kind || g->flag != w->flag ||
		    g->post_no != w->post_no || g->src != w->src ||
		    g->seq != w->seq || g->nidx != w->nidx ||
		    memcmp(g->idx, w->idx, sizeof(g->idx)) != 0)
			fail_msg("outcome %zu: nd_no=%llu repeat=%llu kind=%u "
			    "flag=%d post=%llu src=%d seq=%llu nidx=%zu, want "
			    "nd_no=%llu repeat=%llu kind=%u flag=%d post=%llu "
			    "src=%d seq=%llu nidx=%zu", i,
			    (unsigned long long)g->nd_no,
			    (unsigned long long)g->repeat, g->kind, g->flag,
			    (unsigned long long)g->post_no, g->src,
			    (unsigned long long)g->seq, g->nidx,
			    (unsigned long long)w->nd_no,
			    (unsigned long long)w->repeat, w->kind, w->flag,
			    (unsigned long long)w->post_no, w->src,
			    (unsigned long long)w->seq, w->nidx);
	}
}

/* Rank 0's first life: both records, acked. Returns its connection. */
static int
nd_first_life(const char *job)
{
	struct nd_spec got[4];
	size_t n;
	int fd = nd_rank(job, 1, 0, got, 4, &n, NULL);

	assert_int_equal(n, 0);
	nd_record(fd, 1, rec1, sizeof(rec1) / sizeof(rec1[0]));
	nd_record(fd, 2, rec2, sizeof(rec2) / sizeof(rec2[0]));
	return fd;
}

/* Incarnation inc gets the whole log back, intact. */
static int
nd_check_all(const char *job, uint32_t inc)
{
	struct nd_spec got[NWANT + 4];
	size_t n;
	int fd = nd_rank(job, inc, 0, got, NWANT + 4, &n, NULL);

	assert_int_equal(n, NWANT);
	nd_compare(got, n, 0);
	return fd;
}

/* The session ends with an Error whose text has needle. */
static void
nd_error(int fd, const char *needle)
{
	Mpiv__Error *e = (Mpiv__Error *)expect(fd, MPIV__MSG_TYPE__MSG_ERROR,
	    NULL, NULL);

	if (strstr(e->text, needle) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", e->text, needle);
	assert_int_equal(e->code, MPIV__ERROR_CODE__ERR_PROTOCOL);
	frame_free_meta(&e->base);
	expect_closed(fd);
	close(fd);
}

static int
cs_conn(const char *job)
{
	int fd = dial();
	Mpiv__HelloReply *hr = hello(fd, MPIV__ROLE__ROLE_CS, job, -1, 0,
	    FRAME_VERSION);

	if (!hr->ok)
		fail_msg("cs hello refused: %s", hr->error);
	frame_free_meta(&hr->base);
	return fd;
}

/* CkptMark{k, event 0, nd_no} from rank 0 (incarnation inc), made durable
   by a checkpoint server; waits for the CM's CkptDurable to the rank. */
static void
nd_checkpoint(const char *job, int fd, uint32_t inc, uint64_t k,
    uint64_t nd_no)
{
	Mpiv__CkptMark m = MPIV__CKPT_MARK__INIT;
	Mpiv__CkptDurable d = MPIV__CKPT_DURABLE__INIT, *got;
	int cs = cs_conn(job);

	m.ckpt_no = k;
	m.nd_no = nd_no;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_CKPT_MARK, &m.base,
	    NULL, 0, TMO), 0);
	d.job_id = (char *)job;
	d.rank = 0;
	d.ckpt_no = k;
	d.incarnation = inc;
	assert_int_equal(frame_write(cs, MPIV__MSG_TYPE__MSG_CKPT_DURABLE,
	    &d.base, NULL, 0, TMO), 0);
	got = (Mpiv__CkptDurable *)expect(fd, MPIV__MSG_TYPE__MSG_CKPT_DURABLE,
	    NULL, NULL);
	assert_int_equal(got->ckpt_no, k);
	frame_free_meta(&got->base);
	close(cs);
}

/* Incarnation inc, restored at resume_nd, gets want[from..] only. */
static void
nd_check_rest(const char *job, uint32_t inc, uint64_t resume_nd,
    size_t from)
{
	struct nd_spec got[NWANT + 4];
	size_t n;
	int fd = nd_rank(job, inc, resume_nd, got, NWANT + 4, &n, NULL);

	assert_int_equal(n, NWANT - from);
	nd_compare(got, n, from);
	close(fd);
}

/* A restart from the beginning is refused once outcomes were freed. */
static void
nd_refused_from_start(const char *job, uint32_t inc)
{
	Mpiv__HelloReply *hr;
	int fd = nd_hello(job, inc, 0, &hr);

	assert_false(hr->ok);
	if (strstr(hr->error, "cannot restart from the beginning") == NULL)
		fail_msg("refusal \"%s\"", hr->error);
	assert_true(hr->restore_needed);
	frame_free_meta(&hr->base);
	expect_closed(fd);
	close(fd);
}

static void
kill_cm(void)
{
	if (ctl_fd >= 0)
		close(ctl_fd);
	ctl_fd = -1;
	kill(cm_pid, SIGKILL);
	waitpid(cm_pid, NULL, 0);
}

/* ---------------- tests ---------------- */

static void
test_logged(void **state)
{
	int fd;

	nd_job("lg", "ready");
	fd = nd_first_life("lg");
	close(fd);
	fd = nd_check_all("lg", 2);
	/* a re-execution's duplicates are acked and change nothing */
	nd_record(fd, 3, rec1, sizeof(rec1) / sizeof(rec1[0]));
	close(fd);
	close(nd_check_all("lg", 3));
}

static void
test_bad_kind(void **state)
{
	struct nd_spec bad[2] = {
		{ 1, 1, 8, true, 1, 1, 1, 0, { 0 } },
		{ 2, 1, 0, false, 0, 0, 0, 0, { 0 } },
	};
	struct nd_spec got[4];
	size_t n;
	int fd;

	nd_job("bk", "ready");
	fd = nd_rank("bk", 1, 0, got, 4, &n, NULL);
	nd_send(fd, 1, bad, 2);
	nd_error(fd, "unknown kind 0 at nd_no=2");
	/* the outcome before the bad one is stored */
	fd = nd_rank("bk", 2, 0, got, 4, &n, NULL);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].kind, 8);
	assert_int_equal(got[0].post_no, 1);
	bad[1].kind = 15;
	nd_send(fd, 1, &bad[1], 1);
	nd_error(fd, "unknown kind 15 at nd_no=2 (kinds are 1 to 14)");
	bad[1].kind = UINT32_MAX;
	fd = nd_rank("bk", 3, 0, got, 4, &n, NULL);
	assert_int_equal(n, 1);
	nd_send(fd, 1, &bad[1], 1);
	nd_error(fd, "unknown kind 4294967295");
}

#define NBIG 10000

static void
test_chunks(void **state)
{
	struct nd_spec *s = calloc(NBIG, sizeof(*s));
	struct nd_spec *got = calloc(NBIG, sizeof(*got));
	size_t n, chunks;
	int fd;

	nd_job("ch", "ready");
	fd = nd_rank("ch", 1, 0, got, NBIG, &n, NULL);
	for (size_t i = 0; i < NBIG; i++) {
		s[i].nd_no = i + 1;
		s[i].repeat = 1;
		s[i].kind = 8;
		s[i].flag = true;
		s[i].post_no = UINT64_MAX - i;
		s[i].src = INT32_MAX;
		s[i].seq = UINT64_MAX - 2 * i;
	}
	nd_record(fd, 1, s, NBIG);
	close(fd);
	fd = nd_rank("ch", 2, 0, got, NBIG, &n, &chunks);
	assert_int_equal(n, NBIG);
	assert_true(chunks >= 3);
	for (size_t i = 0; i < NBIG; i++)
		if (got[i].nd_no != s[i].nd_no || got[i].post_no !=
		    s[i].post_no || got[i].src != s[i].src ||
		    got[i].seq != s[i].seq || got[i].repeat != 1 ||
		    got[i].kind != 8 || !got[i].flag)
			fail_msg("binding %zu came back changed", i);
	close(fd);
	free(s);
	free(got);
}

static void
test_trimmed(void **state)
{
	struct nd_spec got[NWANT];
	size_t n;
	int fd;

	nd_job("tr", "ready");
	fd = nd_first_life("tr");
	/* nd 7 is want[5] (iprobe found): the cancels on stay */
	nd_checkpoint("tr", fd, 1, 1, 7);
	close(fd);
	nd_refused_from_start("tr", 2);
	nd_check_rest("tr", 3, 7, 6);
	/* a mark inside the folded run 10-11 keeps its later part */
	fd = nd_rank("tr", 4, 7, got, NWANT, &n, NULL);
	nd_checkpoint("tr", fd, 4, 2, 10);
	close(fd);
	fd = nd_rank("tr", 5, 10, got, NWANT, &n, NULL);
	assert_int_equal(n, 6);
	assert_int_equal(got[0].nd_no, 11);
	assert_int_equal(got[0].repeat, 1);
	assert_int_equal(got[0].kind, 1);
	nd_compare(got + 1, n - 1, 9);
	close(fd);
}

/* Size of the job file of job "st" (hex 7374) in store_dir. */
static off_t
store_size(void)
{
	char path[128];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/job-7374.log", store_dir);
	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

static void
test_store(void **state)
{
	off_t size;
	int fd;

	nd_job("st", "ready");
	fd = nd_first_life("st");
	kill_cm();
	close(fd);
	size = store_size();
	assert_int_equal(start_cm(NULL), 0);
	nd_job("st", "recovered");
	/* recovery reads the outcomes back without writing them again */
	assert_int_equal(store_size(), size);
	fd = nd_check_all("st", 2);
	nd_checkpoint("st", fd, 2, 1, 7);
	kill_cm();
	close(fd);
	assert_int_equal(start_cm(NULL), 0);
	nd_job("st", "recovered");
	nd_refused_from_start("st", 3);
	nd_check_rest("st", 4, 7, 6);
}

/* ---------------- setup ---------------- */

static int
cm_plain(void **state)
{
	cm_store = NULL;
	return start_cm(state);
}

static int
cm_stored(void **state)
{
	snprintf(store_dir, sizeof(store_dir), "/tmp/mpiv-cmnd.XXXXXX");
	if (mkdtemp(store_dir) == NULL)
		return -1;
	cm_store = store_dir;
	return start_cm(state);
}

static int
cm_stored_end(void **state)
{
	char cmd[128];
	int rc = stop_cm(state);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", store_dir);
	(void)system(cmd);
	cm_store = NULL;
	return rc;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_logged, cm_plain, stop_cm),
		cmocka_unit_test_setup_teardown(test_bad_kind, cm_plain,
		    stop_cm),
		cmocka_unit_test_setup_teardown(test_chunks, cm_plain, stop_cm),
		cmocka_unit_test_setup_teardown(test_trimmed, cm_plain,
		    stop_cm),
		cmocka_unit_test_setup_teardown(test_store, cm_stored,
		    cm_stored_end),
	};

	(void)expect_silence;	/* the harness's, unused here */
	(void)refused;
	(void)skip_nd_log;
	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	log_init("test_cm_nd_direct", LOG_LEVEL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
