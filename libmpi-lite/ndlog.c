/*
 * ndlog.c: the outcomes a rank decides by itself (Test, Testany,
 * Testsome, Testall, Waitany, Waitsome, Request_get_status), logged at
 * the home CM and imposed again on a re-execution (docs/REPLAY.md).
 *
 * Live: each such call takes the next nd_no (from 1) and its outcome
 * joins the pending list; a run of identical "nothing completed" answers
 * folds into one NdOutcome with `repeat`. Pending outcomes leave in one
 * NdRecord to the home CM before the next frame that may depend on them
 * (mpiv_ndlog_before_frame); before a Send to another CM the rank also
 * waits for the NdAck, sleeping in poll. NdRecords jump the queue of
 * frames not yet started (never behind a large payload). An outcome that
 * completed something leaves at once: the call returns once its record
 * is in the kernel, without waiting for the ack.
 *
 * Replay: the NdLog chunks read during MPI_Init are kept as they were
 * unpacked; while nd_no is covered by them, request.c gets the logged
 * outcome instead of deciding, and nothing is recorded again. Once the
 * log runs out it is freed and the rank decides (and records) live.
 *
 * Direct jobs (docs/DIRECT.md) log more kinds: probe and Iprobe answers,
 * cancels and the Finalize commit are calls like the others; the match
 * of a wildcard receive (MPIV_ND_BIND) happens whenever the message
 * comes, so it takes the next number when it happens and is replayed by
 * its receive's post number, not by position. The outcomes of one call
 * may therefore be decided after a later number was given to a match:
 * records leave in number order, each once every lower number has.
 *
 * MPIV_LOGGING=0 (mpiv run --relay-only) records nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

#define NDLOG_PEND_MAX	4096		/* outcomes before a forced record */
#define NDLOG_IDX_MAX	(64 * 1024)	/* indices per NdRecord (meta cap) */

struct ndlog_pend {
	uint64_t nd_no, repeat;
	uint32_t kind;
	bool flag;
	int nidx;
	int32_t *idx;
	uint64_t post_no, seq;		/* direct kinds */
	int32_t src;
};

/* A logged match of a wildcard receive, by post number. */
struct ndlog_bind {
	uint64_t post_no, seq;
	int32_t src;
};

static bool nd_logging = true;
static uint64_t nd_no;			/* the last number given out */
static uint64_t nd_call;		/* number of the current call */
static uint64_t nd_sent_end;		/* every number up to it was sent */
static uint64_t nd_log_max;		/* highest number the log covers */
static bool nd_committed;		/* the log has MPIV_ND_FINALIZE */

static struct ndlog_bind *nd_binds;	/* sorted by post_no */
static size_t nd_nbinds, nd_capbinds;
static size_t nd_last_call;		/* index + 1 of the last call entry */

static struct ndlog_pend *nd_pend;
static size_t nd_npend, nd_cappend;
static uint64_t nd_ack_sent, nd_ack_got;
/* Records sent and not yet acknowledged: each NdRecord's ack_id and the
   last number it carried, oldest first; every number up to nd_stored_end
   is stored at the home CM. */
static struct nd_flight { uint64_t ack_id, end; } *nd_flight;
static size_t nd_nflight, nd_capflight;
static uint64_t nd_stored_end;

/* the replayed log: chunks as unpacked, and their outcomes in order */
static Mpiv__NdLog **nd_chunks;
static size_t nd_nchunks, nd_capchunks;
static Mpiv__NdOutcome **nd_log;
static size_t nd_nlog, nd_caplog, nd_cur;

static const char *const ndlog_kind_names[] = {
	[MPIV_ND_TEST] = "MPI_Test", [MPIV_ND_TESTANY] = "MPI_Testany",
	[MPIV_ND_TESTSOME] = "MPI_Testsome", [MPIV_ND_TESTALL] = "MPI_Testall",
	[MPIV_ND_WAITANY] = "MPI_Waitany", [MPIV_ND_WAITSOME] = "MPI_Waitsome",
	[MPIV_ND_GET_STATUS] = "MPI_Request_get_status",
	[MPIV_ND_BIND] = "a wildcard receive's match",
	[MPIV_ND_PROBE] = "MPI_Probe", [MPIV_ND_IPROBE] = "MPI_Iprobe",
	[MPIV_ND_CANCEL] = "MPI_Cancel", [MPIV_ND_FINALIZE] = "MPI_Finalize",
	[MPIV_ND_NBC] = "a non-blocking collective's progress",
	[MPIV_ND_RMA] = "a passive-target service",
};

const char *
mpiv_ndlog_kind_name(uint32_t kind)
{
	if (kind < sizeof(ndlog_kind_names) / sizeof(ndlog_kind_names[0]) &&
	    ndlog_kind_names[kind] != NULL)
		return ndlog_kind_names[kind];
	return "unknown call";
}

/* ---------------- setup ---------------- */

void
mpiv_ndlog_init(void)
{
	const char *e = getenv("MPIV_LOGGING");

	nd_logging = !(e != NULL && strcmp(e, "0") == 0);
	nd_no = nd_call = nd_sent_end = nd_log_max = 0;
	nd_committed = false;
	nd_npend = 0;
	nd_ack_sent = nd_ack_got = 0;
	nd_nflight = 0;
	nd_stored_end = 0;
	nd_nchunks = nd_nlog = nd_cur = 0;
	nd_nbinds = 0;
	nd_last_call = 0;
}

bool
mpiv_ndlog_enabled(void)
{
	return nd_logging;
}

/* Frees the replayed log (done, or at Finalize). */
static void
ndlog_release_log(void)
{
	for (size_t i = 0; i < nd_nchunks; i++)
		frame_free_meta(&nd_chunks[i]->base);
	free(nd_chunks);
	free(nd_log);
	nd_chunks = NULL;
	nd_log = NULL;
	nd_nchunks = nd_capchunks = 0;
	nd_nlog = nd_caplog = nd_cur = 0;
	nd_last_call = 0;
}

void
mpiv_ndlog_fini(void)
{
	for (size_t i = 0; i < nd_npend; i++)
		free(nd_pend[i].idx);
	free(nd_pend);
	nd_pend = NULL;
	nd_npend = nd_cappend = 0;
	ndlog_release_log();
	free(nd_binds);
	nd_binds = NULL;
	nd_nbinds = nd_capbinds = 0;
}

static int
ndlog_bind_cmp(const void *a, const void *b)
{
	const struct ndlog_bind *x = a, *y = b;

	return x->post_no < y->post_no ? -1 : x->post_no > y->post_no;
}

/* Keeps a logged match aside, by post number. -1 when out of memory. */
static int
ndlog_keep_bind(const Mpiv__NdOutcome *o)
{
	if (nd_nbinds == nd_capbinds) {
		size_t cap = nd_capbinds ? 2 * nd_capbinds : 64;
		struct ndlog_bind *v = realloc(nd_binds, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		nd_binds = v;
		nd_capbinds = cap;
	}
	nd_binds[nd_nbinds].post_no = o->post_no;
	nd_binds[nd_nbinds].src = o->src;
	nd_binds[nd_nbinds++].seq = o->seq;
	return 0;
}

int
mpiv_ndlog_load(Mpiv__NdLog *chunk)
{
	size_t need = nd_nlog + chunk->n_outcomes;

	if (nd_nchunks == nd_capchunks) {
		size_t cap = nd_capchunks ? 2 * nd_capchunks : 8;
		Mpiv__NdLog **p = realloc(nd_chunks, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		nd_chunks = p;
		nd_capchunks = cap;
	}
	if (need > nd_caplog) {
		size_t cap = nd_caplog ? 2 * nd_caplog : 256;
		Mpiv__NdOutcome **p;

		while (cap < need)
			cap *= 2;
		if ((p = realloc(nd_log, cap * sizeof(*p))) == NULL)
			return -1;
		nd_log = p;
		nd_caplog = cap;
	}
	nd_chunks[nd_nchunks++] = chunk;
	for (size_t i = 0; i < chunk->n_outcomes; i++) {
		const Mpiv__NdOutcome *o = chunk->outcomes[i];
		uint64_t end = o->nd_no + (o->repeat > 0 ? o->repeat : 1) - 1;

		if (o->kind == MPIV_ND_BIND && ndlog_keep_bind(o) < 0)
			return -1;
		if (o->kind != MPIV_ND_BIND)
			nd_last_call = nd_nlog + 1;
		if (o->kind == MPIV_ND_FINALIZE)
			nd_committed = true;
		if (end > nd_log_max)
			nd_log_max = end;
		if (end > nd_sent_end)
			nd_sent_end = end;
		nd_log[nd_nlog++] = chunk->outcomes[i];
	}
	if (chunk->last && nd_nbinds > 1)
		qsort(nd_binds, nd_nbinds, sizeof(*nd_binds), ndlog_bind_cmp);
	return 0;
}

bool
mpiv_ndlog_bind_of(uint64_t post_no, int32_t *src, uint64_t *seq)
{
	size_t lo = 0, hi = nd_nbinds;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (nd_binds[mid].post_no < post_no)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= nd_nbinds || nd_binds[lo].post_no != post_no)
		return false;
	*src = nd_binds[lo].src;
	*seq = nd_binds[lo].seq;
	return true;
}

uint64_t
mpiv_ndlog_bind_seq_max(int32_t src)
{
	uint64_t m = 0;

	for (size_t i = 0; i < nd_nbinds; i++)
		if (nd_binds[i].src == src && nd_binds[i].seq > m)
			m = nd_binds[i].seq;
	return m;
}

uint64_t
mpiv_ndlog_bind_max(void)
{
	/* sorted by post_no once the log is loaded */
	return nd_nbinds > 0 ? nd_binds[nd_nbinds - 1].post_no : 0;
}

bool
mpiv_ndlog_replaying(void)
{
	const Mpiv__NdOutcome *o;

	if (nd_last_call == 0 || nd_cur >= nd_last_call)
		return false;
	o = nd_log[nd_last_call - 1];
	return nd_call < o->nd_no + (o->repeat > 0 ? o->repeat : 1) - 1;
}

bool
mpiv_ndlog_committed(void)
{
	return nd_committed;
}

uint64_t
mpiv_ndlog_replay_left(void)
{
	return nd_cur < nd_nlog ? nd_nlog - nd_cur : 0;
}

/* ---------------- replay ---------------- */

int
mpiv_ndlog_next(uint32_t kind, const Mpiv__NdOutcome **out)
{
	uint64_t want = nd_call + 1;

	if (nd_no + 1 > want && nd_nlog == 0)
		want = nd_no + 1;
	while (nd_cur < nd_nlog) {
		const Mpiv__NdOutcome *o = nd_log[nd_cur];
		uint64_t rep = o->repeat > 0 ? o->repeat : 1;

		if (o->kind == MPIV_ND_BIND) {
			/* A match took this number; its receive finds it by
			   post number (mpiv_ndlog_bind_of). */
			if (o->nd_no >= want)
				want = o->nd_no + 1;
			nd_cur++;
			continue;
		}
		if (want >= o->nd_no + rep) {
			nd_cur++;	/* used up (or behind us) */
			continue;
		}
		nd_call = want;
		if (nd_call > nd_no)
			nd_no = nd_call;
		if (want < o->nd_no) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu (%s): the log has no entry for it (next "
			    "logged is %llu)", (unsigned long long)want,
			    mpiv_ndlog_kind_name(kind),
			    (unsigned long long)o->nd_no);
			return -1;
		}
		if (o->kind != kind) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu: logged %s, got %s",
			    (unsigned long long)want,
			    mpiv_ndlog_kind_name(o->kind),
			    mpiv_ndlog_kind_name(kind));
			return -1;
		}
		*out = o;
		return 1;
	}
	/* Live: after every number given out and every number logged. */
	if (want <= nd_no)
		want = nd_no + 1;
	if (want <= nd_log_max)
		want = nd_log_max + 1;
	nd_call = nd_no = want;
	if (nd_nlog > 0)
		ndlog_release_log();	/* the log ran out: live from now */
	return 0;
}

/*
 * The logged call the next mpiv_ndlog_next() would meet, without taking
 * it: NULL when the log has none left (the next call is live). Used by
 * the progress of non-blocking collectives (nbc.c), whose steps are
 * replayed only where the log has them.
 */
const Mpiv__NdOutcome *
mpiv_ndlog_peek(void)
{
	uint64_t want = nd_call + 1;

	if (nd_no + 1 > want && nd_nlog == 0)
		want = nd_no + 1;
	for (size_t cur = nd_cur; cur < nd_nlog; cur++) {
		const Mpiv__NdOutcome *o = nd_log[cur];
		uint64_t rep = o->repeat > 0 ? o->repeat : 1;

		if (o->kind == MPIV_ND_BIND) {
			if (o->nd_no >= want)
				want = o->nd_no + 1;
			continue;
		}
		if (want >= o->nd_no + rep)
			continue;
		return o;
	}
	return NULL;
}

uint64_t
mpiv_ndlog_current(void)
{
	return nd_call;
}

/* ---------------- recording ---------------- */

/*
 * Sends the pending outcomes in NdRecords to the home CM, in number
 * order, as far as every lower number has been sent (a call still open
 * holds back the matches numbered after it).
 */
static int
ndlog_send(void)
{
	int home = mpiv_tp_home(mpiv_state.world_rank);
	size_t first = 0, ready = 0;
	int rc = MPI_SUCCESS;

	while (ready < nd_npend && nd_pend[ready].nd_no <= nd_sent_end + 1) {
		uint64_t end = nd_pend[ready].nd_no + nd_pend[ready].repeat - 1;

		if (end > nd_sent_end)
			nd_sent_end = end;
		ready++;
	}
	while (first < ready && rc == MPI_SUCCESS) {
		Mpiv__NdRecord rec = MPIV__ND_RECORD__INIT;
		Mpiv__NdOutcome *outs, **ptrs;
		size_t n = 0, nidx = 0;

		/* One record stays well under the meta cap. */
		while (first + n < ready && (n == 0 ||
		    nidx + (size_t)nd_pend[first + n].nidx <= NDLOG_IDX_MAX))
			nidx += (size_t)nd_pend[first + n++].nidx;
		outs = calloc(n, sizeof(*outs));
		ptrs = calloc(n, sizeof(*ptrs));
		if (outs == NULL || ptrs == NULL) {
			free(outs);
			free(ptrs);
			return MPI_ERR_NO_MEM;
		}
		for (size_t i = 0; i < n; i++) {
			const struct ndlog_pend *p = &nd_pend[first + i];

			mpiv__nd_outcome__init(&outs[i]);
			outs[i].nd_no = p->nd_no;
			outs[i].kind = p->kind;
			outs[i].repeat = p->repeat;
			outs[i].flag = p->flag;
			outs[i].n_indices = (size_t)p->nidx;
			outs[i].indices = p->idx;
			outs[i].post_no = p->post_no;
			outs[i].src = p->src;
			outs[i].seq = p->seq;
			ptrs[i] = &outs[i];
		}
		rec.ack_id = ++nd_ack_sent;
		rec.n_outcomes = n;
		rec.outcomes = ptrs;
		if (nd_nflight == nd_capflight) {
			size_t cap = nd_capflight ? 2 * nd_capflight : 16;
			struct nd_flight *f = realloc(nd_flight, cap *
			    sizeof(*f));

			if (f == NULL) {
				free(outs);
				free(ptrs);
				return MPI_ERR_NO_MEM;
			}
			nd_flight = f;
			nd_capflight = cap;
		}
		nd_flight[nd_nflight].ack_id = rec.ack_id;
		nd_flight[nd_nflight++].end = nd_pend[first + n - 1].nd_no +
		    nd_pend[first + n - 1].repeat - 1;
		rc = mpiv_tp_send_urgent(home, MPIV__MSG_TYPE__MSG_ND_RECORD,
		    &rec.base);
		free(outs);
		free(ptrs);
		first += n;
	}
	for (size_t i = 0; i < ready; i++)
		free(nd_pend[i].idx);
	memmove(nd_pend, nd_pend + ready, (nd_npend - ready) *
	    sizeof(*nd_pend));
	nd_npend -= ready;
	return rc;
}

/* A new pending outcome numbered nd_no, in number order; NULL when out
   of memory. */
static struct ndlog_pend *
ndlog_pend_add(uint64_t no)
{
	struct ndlog_pend *p;
	size_t at;

	if (nd_npend == nd_cappend) {
		size_t cap = nd_cappend ? 2 * nd_cappend : 16;

		if ((p = realloc(nd_pend, cap * sizeof(*p))) == NULL)
			return NULL;
		nd_pend = p;
		nd_cappend = cap;
	}
	at = nd_npend;
	while (at > 0 && nd_pend[at - 1].nd_no > no)
		at--;
	memmove(nd_pend + at + 1, nd_pend + at, (nd_npend - at) *
	    sizeof(*nd_pend));
	nd_npend++;
	p = &nd_pend[at];
	memset(p, 0, sizeof(*p));
	p->nd_no = no;
	p->repeat = 1;
	return p;
}

/* After an outcome joined the pending ones: a full list leaves; one
   that completed something leaves now and is in the kernel before the
   call returns (the program may act on it, print). MPI code. */
static int
ndlog_pend_flush(bool now)
{
	int rc;

	if (nd_npend >= NDLOG_PEND_MAX)
		return ndlog_send();
	if (!now)
		return MPI_SUCCESS;
	if ((rc = ndlog_send()) != MPI_SUCCESS)
		return rc;
	return mpiv_tp_wait_urgent(mpiv_tp_home(mpiv_state.world_rank));
}

int
mpiv_ndlog_record(uint32_t kind, bool flag, int n, const int *idx)
{
	struct ndlog_pend *p;

	if (!nd_logging)
		return MPI_SUCCESS;
	if (!flag && nd_npend > 0) {
		p = &nd_pend[nd_npend - 1];
		if (!p->flag && p->kind == kind && p->nidx == 0 &&
		    p->nd_no + p->repeat == nd_call) {
			p->repeat++;
			return MPI_SUCCESS;
		}
	}
	if ((p = ndlog_pend_add(nd_call)) == NULL)
		return MPI_ERR_NO_MEM;
	p->kind = kind;
	p->flag = flag;
	p->nidx = n;
	if (n > 0) {
		if ((p->idx = malloc((size_t)n * sizeof(*p->idx))) == NULL)
			return MPI_ERR_NO_MEM;
		for (int i = 0; i < n; i++)
			p->idx[i] = idx[i];
	}
	return ndlog_pend_flush(flag);
}

int
mpiv_ndlog_record_msg(uint32_t kind, bool flag, uint64_t post_no,
    int32_t src, uint64_t seq)
{
	struct ndlog_pend *p;

	if (!nd_logging)
		return MPI_SUCCESS;
	if ((p = ndlog_pend_add(nd_call)) == NULL)
		return MPI_ERR_NO_MEM;
	p->kind = kind;
	p->flag = flag;
	p->post_no = post_no;
	p->src = src;
	p->seq = seq;
	return ndlog_pend_flush(flag);
}

int
mpiv_ndlog_record_at(uint32_t kind, uint64_t pos, int n, const int *serials)
{
	const Mpiv__NdOutcome *o;
	struct ndlog_pend *p;

	/* its number: decided live, after the log */
	if (mpiv_ndlog_next(kind, &o) != 0) {
		mpiv_tp_set_error("%s decided live met a logged call",
		    mpiv_ndlog_kind_name(kind));
		return MPI_ERR_INTERN;
	}
	if (!nd_logging)
		return MPI_SUCCESS;
	if ((p = ndlog_pend_add(nd_call)) == NULL)
		return MPI_ERR_NO_MEM;
	p->kind = kind;
	p->flag = true;
	p->post_no = pos + 1;	/* never 0: the CM never folds it */
	p->nidx = n;
	if ((p->idx = malloc((size_t)n * sizeof(*p->idx))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++)
		p->idx[i] = serials[i];
	/* The steps it allows post sends and receives: each of those frames
	   waits for it anyway (mpiv_ndlog_before_frame). */
	return ndlog_pend_flush(false);
}

int
mpiv_ndlog_record_bind(uint64_t post_no, int32_t src, uint64_t seq)
{
	struct ndlog_pend *p;

	if (!nd_logging)
		return MPI_SUCCESS;
	if (nd_no < nd_log_max)
		nd_no = nd_log_max;
	if ((p = ndlog_pend_add(++nd_no)) == NULL)
		return MPI_ERR_NO_MEM;
	p->kind = MPIV_ND_BIND;
	p->flag = true;
	p->post_no = post_no;
	p->src = src;
	p->seq = seq;
	/* Leaves as soon as the numbers before it have; not waited for. */
	if (nd_npend >= NDLOG_PEND_MAX || nd_pend[0].nd_no <= nd_sent_end + 1)
		return ndlog_send();
	return MPI_SUCCESS;
}

bool
mpiv_ndlog_acked(void)
{
	return nd_npend == 0 && nd_ack_got >= nd_ack_sent;
}

bool
mpiv_ndlog_stored(uint64_t no)
{
	return no <= nd_stored_end;
}

int
mpiv_ndlog_before_frame(int cm)
{
	int rc;

	if (!nd_logging)
		return MPI_SUCCESS;
	if (nd_npend > 0 && (rc = ndlog_send()) != MPI_SUCCESS)
		return rc;
	/* The home CM stores the record before it reads the frame after it
	   (TCP order); another CM must not see the frame before then. */
	if (cm != mpiv_tp_home(mpiv_state.world_rank))
		while (nd_ack_got < nd_ack_sent)
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
	return MPI_SUCCESS;
}

int
mpiv_ndlog_flush(void)
{
	if (!nd_logging || nd_npend == 0)
		return MPI_SUCCESS;
	return ndlog_send();
}

void
mpiv_ndlog_ack(uint64_t ack_id)
{
	size_t k = 0;

	if (ack_id > nd_ack_got && ack_id <= nd_ack_sent)
		nd_ack_got = ack_id;
	while (k < nd_nflight && nd_flight[k].ack_id <= nd_ack_got) {
		if (nd_flight[k].end > nd_stored_end)
			nd_stored_end = nd_flight[k].end;
		k++;
	}
	memmove(nd_flight, nd_flight + k, (nd_nflight - k) *
	    sizeof(*nd_flight));
	nd_nflight -= k;
}

/* ---------------- checkpoints ---------------- */

int
mpiv_ndlog_sync(void)
{
	int rc;

	if (!nd_logging)
		return MPI_SUCCESS;
	if (nd_npend > 0 && (rc = ndlog_send()) != MPI_SUCCESS)
		return rc;
	while (nd_ack_got < nd_ack_sent)
		if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
			return rc;
	return MPI_SUCCESS;
}

uint64_t
mpiv_ndlog_done(void)
{
	return nd_no;
}

void
mpiv_ndlog_restore_reset(void)
{
	for (size_t i = 0; i < nd_npend; i++)
		free(nd_pend[i].idx);
	nd_npend = 0;
	ndlog_release_log();
	nd_nbinds = 0;
	nd_sent_end = nd_no;
	/* No call is open at a checkpoint, and every number up to nd_no was
	   given out before it (to a call, or to a wildcard match that came
	   after the last call): the first call replayed or made from here
	   takes the number after, as it did in the run being replayed. */
	nd_call = nd_no;
	/* The new home session acks from whatever ack_id comes next. */
	nd_ack_got = nd_ack_sent;
	nd_nflight = 0;
	nd_stored_end = nd_no;
}
