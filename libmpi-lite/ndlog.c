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
};

static bool nd_logging = true;
static uint64_t nd_no;			/* number of the current call */

static struct ndlog_pend *nd_pend;
static size_t nd_npend, nd_cappend;
static uint64_t nd_ack_sent, nd_ack_got;

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
	nd_no = 0;
	nd_npend = 0;
	nd_ack_sent = nd_ack_got = 0;
	nd_nchunks = nd_nlog = nd_cur = 0;
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
	for (size_t i = 0; i < chunk->n_outcomes; i++)
		nd_log[nd_nlog++] = chunk->outcomes[i];
	return 0;
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
	nd_no++;
	while (nd_cur < nd_nlog) {
		const Mpiv__NdOutcome *o = nd_log[nd_cur];
		uint64_t rep = o->repeat > 0 ? o->repeat : 1;

		if (nd_no >= o->nd_no + rep) {
			nd_cur++;	/* used up (or behind us) */
			continue;
		}
		if (nd_no < o->nd_no) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu (%s): the log has no entry for it (next "
			    "logged is %llu)", (unsigned long long)nd_no,
			    mpiv_ndlog_kind_name(kind),
			    (unsigned long long)o->nd_no);
			return -1;
		}
		if (o->kind != kind) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu: logged %s, got %s",
			    (unsigned long long)nd_no,
			    mpiv_ndlog_kind_name(o->kind),
			    mpiv_ndlog_kind_name(kind));
			return -1;
		}
		*out = o;
		return 1;
	}
	if (nd_nlog > 0)
		ndlog_release_log();	/* the log ran out: live from now */
	return 0;
}

uint64_t
mpiv_ndlog_current(void)
{
	return nd_no;
}

/* ---------------- recording ---------------- */

/* Sends up to every pending outcome in NdRecords to the home CM. */
static int
ndlog_send(void)
{
	int home = mpiv_tp_home(mpiv_state.world_rank);
	size_t first = 0;
	int rc = MPI_SUCCESS;

	while (first < nd_npend && rc == MPI_SUCCESS) {
		Mpiv__NdRecord rec = MPIV__ND_RECORD__INIT;
		Mpiv__NdOutcome *outs, **ptrs;
		size_t n = 0, nidx = 0;

		/* One record stays well under the meta cap. */
		while (first + n < nd_npend && (n == 0 ||
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
			ptrs[i] = &outs[i];
		}
		rec.ack_id = ++nd_ack_sent;
		rec.n_outcomes = n;
		rec.outcomes = ptrs;
		rc = mpiv_tp_send_urgent(home, MPIV__MSG_TYPE__MSG_ND_RECORD,
		    &rec.base);
		free(outs);
		free(ptrs);
		first += n;
	}
	for (size_t i = 0; i < nd_npend; i++)
		free(nd_pend[i].idx);
	nd_npend = 0;
	return rc;
}

int
mpiv_ndlog_record(uint32_t kind, bool flag, int n, const int *idx)
{
	struct ndlog_pend *p;
	int rc;

	if (!nd_logging)
		return MPI_SUCCESS;
	if (!flag && nd_npend > 0) {
		p = &nd_pend[nd_npend - 1];
		if (!p->flag && p->kind == kind && p->nidx == 0 &&
		    p->nd_no + p->repeat == nd_no) {
			p->repeat++;
			return MPI_SUCCESS;
		}
	}
	if (nd_npend == nd_cappend) {
		size_t cap = nd_cappend ? 2 * nd_cappend : 16;

		if ((p = realloc(nd_pend, cap * sizeof(*p))) == NULL)
			return MPI_ERR_NO_MEM;
		nd_pend = p;
		nd_cappend = cap;
	}
	p = &nd_pend[nd_npend];
	p->nd_no = nd_no;
	p->repeat = 1;
	p->kind = kind;
	p->flag = flag;
	p->nidx = n;
	p->idx = NULL;
	if (n > 0) {
		if ((p->idx = malloc((size_t)n * sizeof(*p->idx))) == NULL)
			return MPI_ERR_NO_MEM;
		for (int i = 0; i < n; i++)
			p->idx[i] = idx[i];
	}
	nd_npend++;
	if (nd_npend >= NDLOG_PEND_MAX)
		return ndlog_send();
	if (!flag)
		return MPI_SUCCESS;
	/* Something completed: the program may act on it (print) at once,
	   so its record leaves now, ahead of queued payloads, and is in the
	   kernel (which delivers it even if we are killed) before the call
	   returns. Its NdAck is not waited for. */
	if ((rc = ndlog_send()) != MPI_SUCCESS)
		return rc;
	return mpiv_tp_wait_urgent(mpiv_tp_home(mpiv_state.world_rank));
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
	if (ack_id > nd_ack_got && ack_id <= nd_ack_sent)
		nd_ack_got = ack_id;
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
	/* The new home session acks from whatever ack_id comes next. */
	nd_ack_got = nd_ack_sent;
}
