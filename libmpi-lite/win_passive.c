/*
 * win_passive.c: passive-target one-sided communication (MPI_Win_lock,
 * MPI_Win_lock_all, flush, unlock, the request-based calls), both sides
 * (docs/ONESIDED.md, "Passive target").
 *
 * Origin. A lock sends nothing: the calls append records to the target's
 * batch as in the other epochs, and a flush or unlock sends the batch in
 * one message on the window's private communicator, asking for the lock
 * in the same message the first time and giving it back in the unlock's.
 * The call then waits for the target's answer (the reads' bytes, and
 * that every record was applied). An epoch with nothing to send sends
 * nothing. The own rank is a target like the others, but its records are
 * applied in place at flush and unlock once its lock manager granted it.
 *
 * Target. Every window of more than one rank keeps a receive posted for
 * any origin's passive message. The target takes those messages at the
 * library's advance points (nbc.c: any call that waits or polls), runs
 * its lock manager (exclusive or shared holders, a FIFO of requests that
 * wait), applies a granted batch to the window memory at once and sends
 * the answer. When a message comes depends on timing, and what the
 * target does with it changes the window and posts frames, so each
 * batch of services taken live is an outcome (MPIV_ND_RMA) recorded, as
 * a non-blocking collective's steps are, with the position reached (how
 * many of the program's own operations had started) and the windows
 * served; a re-execution serves exactly those, at that position, in that
 * order, waiting for their messages, and no other. Which message each
 * posted receive got is a logged decision already (the home CM's in the
 * relay protocol, a wildcard match in the direct one). So the window's
 * contents at every point of the target's program, and every answer it
 * sends, come out the same.
 *
 * The program sees remote updates where MPI's separate memory model
 * lets it: after its own synchronization (MPI_Win_sync, a lock of its own
 * rank, a message from the origin sent after the origin's flush); a
 * target that only computes does not serve until it calls MPI again.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mono.h"
#include "proto.h"
#include "transport.h"
#include "win.h"

/* A passive message that fits is sent whole into the posted receive;
   a larger batch follows it in a second message. */
#define PAS_INLINE	(16 * 1024)
#define PAS_MAGIC	0x6d77706dU
#define PAS_RMAGIC	0x6d777072U

enum {
	PAS_SHARED = 1,		/* acquire a shared lock */
	PAS_EXCL = 2,		/* acquire an exclusive lock */
	PAS_RELEASE = 4,	/* then give the lock back */
	PAS_FOLLOWS = 8,	/* the records come in a WIN_TAG_PDATA message */
};

/* Origin -> target, first in a passive message. */
struct pas_msg {
	uint32_t magic;
	uint32_t flags;
	uint32_t nops;
	uint32_t pad;
	uint64_t bytes;		/* records */
	uint64_t reply_bytes;	/* what the reads will get back */
};

/* Target -> origin, first in the answer; reply_bytes follow. */
struct pas_reply {
	uint32_t magic;
	int32_t rc;		/* the first error applying the records */
	uint64_t bytes;
};

/* A request that waits for its lock. */
struct pas_wait {
	int origin;		/* comm rank; the own rank: a lock call */
	uint32_t flags;
	uint32_t nops;
	char *buf;		/* records, owned */
	size_t len;
	struct pas_wait *next;
};

struct pas_out {		/* a reply send in flight */
	MPI_Request req;
	char *buf;
};

struct win_pas {
	/* target side */
	MPI_Request arm;	/* the posted receive (any origin) */
	char *inbuf;		/* PAS_INLINE bytes */
	int excl;		/* comm rank holding it exclusive, -1 */
	int nshared;
	uint8_t *held;		/* per origin: PAS_SHARED, PAS_EXCL or 0 */
	struct pas_wait *qhead, *qtail;
	struct pas_out *outs;
	size_t nouts, capouts;
	/* origin side */
	uint8_t *lock;		/* per target: the lock asked for, 0: none */
	bool *acquired;		/* per target: the target granted it */
	int nlocked;		/* targets with lock[] set */
	bool all;		/* MPI_Win_lock_all */
	bool no_locks;		/* info no_locks=true: no other rank locks it */
	struct win_pas *next;	/* armed windows, in creation order */
	MPI_Win win;
};

static struct win_pas *pas_head, *pas_tail;
static int pas_poll(void);
static uint64_t pas_served;	/* messages served, for MPI_Win_sync's backoff */

static struct win_pas *
pas_find(uint32_t serial)
{
	for (struct win_pas *p = pas_head; p != NULL; p = p->next)
		if (p->win->serial == serial)
			return p;
	return NULL;
}

/* ---------------- setup ---------------- */

static int
pas_arm(struct win_pas *p)
{
	MPI_Win win = p->win;

	return mpiv_irecv(p->inbuf, PAS_INLINE, MPI_BYTE, MPI_ANY_SOURCE,
	    WIN_TAG_PASSIVE, win->comm, win->comm->context, &p->arm);
}

/* The info hint no_locks = true (any case): the program promises no
   passive-target epoch to another rank in this window. */
static bool
pas_no_locks(MPI_Win win)
{
	char v[16];
	int flag = 0;

	if (win->info == NULL || MPI_Info_get(win->info, "no_locks",
	    (int)sizeof(v) - 1, v, &flag) != MPI_SUCCESS || !flag)
		return false;
	return strcasecmp(v, "true") == 0;
}

int
win_pas_init(MPI_Win win)
{
	struct win_pas *p;
	int n = win->comm->size, rc;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return MPI_ERR_NO_MEM;
	p->win = win;
	p->excl = -1;
	p->held = calloc((size_t)n, 1);
	p->lock = calloc((size_t)n, 1);
	p->acquired = calloc((size_t)n, sizeof(*p->acquired));
	if (n > 1)
		p->inbuf = malloc(PAS_INLINE);
	if (p->held == NULL || p->lock == NULL || p->acquired == NULL ||
	    (n > 1 && p->inbuf == NULL)) {
		rc = MPI_ERR_NO_MEM;
		goto fail;
	}
	win->pas = p;
	p->no_locks = pas_no_locks(win);
	if (n == 1 || p->no_locks)
		return MPI_SUCCESS;	/* nobody else locks it */
	if ((rc = pas_arm(p)) != MPI_SUCCESS) {
		win->pas = NULL;
		goto fail;
	}
	if (pas_tail != NULL)
		pas_tail->next = p;
	else
		pas_head = p;
	pas_tail = p;
	mpiv_nbc_bg(1);
	return MPI_SUCCESS;
fail:
	free(p->held);
	free(p->lock);
	free(p->acquired);
	free(p->inbuf);
	free(p);
	return rc;
}

static void
pas_reap(struct win_pas *p, bool all)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nouts; i++) {
		struct pas_out *o = &p->outs[i];

		if (all && !o->req->complete)
			(void)mpiv_waitall(1, &o->req, NULL);
		if (o->req == NULL || o->req->complete) {
			if (o->req != NULL)
				mpiv_req_release(o->req);
			free(o->buf);
			continue;
		}
		p->outs[k++] = *o;
	}
	p->nouts = k;
}

/* Collective part of MPI_Win_free, after the barrier: every origin has
   had its answers, so nothing can come any more. MPI code. */
int
win_pas_fini(MPI_Win win)
{
	struct win_pas *p = win->pas, **pp;
	int rc = MPI_SUCCESS;

	if (p == NULL)
		return MPI_SUCCESS;
	if (p->arm != NULL) {
		MPI_Request r = p->arm;

		rc = MPI_Cancel(&r);
		while (rc == MPI_SUCCESS && !p->arm->complete)
			rc = mpiv_tp_progress(-1);
		if (rc == MPI_SUCCESS && !p->arm->status.MPI_ERROR &&
		    !p->arm->status.mpiv_cancelled) {
			mpiv_err_detail("a passive-target message reached "
			    "the window as it was freed");
			rc = MPI_ERR_RMA_SYNC;
		}
		mpiv_req_release(p->arm);
		p->arm = NULL;
		for (pp = &pas_head; *pp != NULL; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				break;
			}
		pas_tail = NULL;
		for (struct win_pas *q = pas_head; q != NULL; q = q->next)
			pas_tail = q;
		mpiv_nbc_bg(-1);
	}
	pas_reap(p, true);
	win_pas_free(win);
	return rc;
}

void
win_pas_free(MPI_Win win)
{
	struct win_pas *p = win->pas;

	if (p == NULL)
		return;
	while (p->qhead != NULL) {
		struct pas_wait *w = p->qhead;

		p->qhead = w->next;
		free(w->buf);
		free(w);
	}
	free(p->outs);
	free(p->held);
	free(p->lock);
	free(p->acquired);
	free(p->inbuf);
	free(p);
	win->pas = NULL;
}

bool
win_pas_open(MPI_Win win)
{
	return win->pas != NULL && win->pas->nlocked > 0;
}

bool
win_pas_target(MPI_Win win, int rank)
{
	return win->pas != NULL && rank >= 0 && rank < win->comm->size &&
	    win->pas->lock[rank] != 0;
}

/* ---------------- the target's lock manager ---------------- */

static bool
pas_grantable(const struct win_pas *p, uint32_t acq)
{
	if (acq & PAS_EXCL)
		return p->excl < 0 && p->nshared == 0;
	return p->excl < 0;
}

static void
pas_grant(struct win_pas *p, int origin, uint32_t acq)
{
	if (acq & PAS_EXCL) {
		p->excl = origin;
		p->held[origin] = PAS_EXCL;
	} else {
		p->nshared++;
		p->held[origin] = PAS_SHARED;
	}
}

static void
pas_release(struct win_pas *p, int origin)
{
	if (p->held[origin] == PAS_EXCL)
		p->excl = -1;
	else if (p->held[origin] == PAS_SHARED)
		p->nshared--;
	p->held[origin] = 0;
}

/* Applies origin's records, gives the lock back if asked, answers. MPI
   code (a failure to apply goes back to the origin instead). */
static int
pas_apply(struct win_pas *p, int origin, uint32_t flags, uint32_t nops,
    const char *buf, size_t len)
{
	MPI_Win win = p->win;
	struct pas_reply *rh;
	char *reply = NULL, *out;
	size_t rlen = 0;
	int rc;

	rc = win_apply(win, origin, buf, len, nops, &reply, &rlen);
	if (rc == MPI_ERR_NO_MEM || rc == MPI_ERR_INTERN)
		return rc;
	if (flags & PAS_RELEASE)
		pas_release(p, origin);
	if ((out = malloc(sizeof(*rh) + rlen)) == NULL) {
		free(reply);
		return MPI_ERR_NO_MEM;
	}
	rh = (struct pas_reply *)out;
	rh->magic = PAS_RMAGIC;
	rh->rc = rc;
	rh->bytes = rlen;
	if (rlen > 0)
		memcpy(out + sizeof(*rh), reply, rlen);
	free(reply);
	if (p->nouts == p->capouts) {
		size_t cap = p->capouts ? 2 * p->capouts : 8;
		struct pas_out *t = realloc(p->outs, cap * sizeof(*t));

		if (t == NULL) {
			free(out);
			return MPI_ERR_NO_MEM;
		}
		p->outs = t;
		p->capouts = cap;
	}
	rc = mpiv_isend(out, (int)(sizeof(*rh) + rlen), MPI_BYTE, origin,
	    WIN_TAG_PREPLY, win->comm, win->comm->context,
	    MPIV_SEND_STANDARD, &p->outs[p->nouts].req);
	if (rc != MPI_SUCCESS) {
		free(out);
		return rc;
	}
	p->outs[p->nouts++].buf = out;
	return MPI_SUCCESS;
}

/* Grants what waits at the head of the queue while it can. */
static int
pas_drain(struct win_pas *p)
{
	int rc = MPI_SUCCESS;

	while (p->qhead != NULL && rc == MPI_SUCCESS &&
	    pas_grantable(p, p->qhead->flags)) {
		struct pas_wait *w = p->qhead;

		if ((p->qhead = w->next) == NULL)
			p->qtail = NULL;
		pas_grant(p, w->origin, w->flags);
		if (w->origin != p->win->comm->rank)
			rc = pas_apply(p, w->origin, w->flags, w->nops, w->buf,
			    w->len);
		free(w->buf);
		free(w);
	}
	return rc;
}

static int
pas_enqueue(struct win_pas *p, int origin, uint32_t flags, uint32_t nops,
    char *buf, size_t len)
{
	struct pas_wait *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		free(buf);
		return MPI_ERR_NO_MEM;
	}
	w->origin = origin;
	w->flags = flags;
	w->nops = nops;
	w->buf = buf;
	w->len = len;
	if (p->qtail != NULL)
		p->qtail->next = w;
	else
		p->qhead = w;
	p->qtail = w;
	return MPI_SUCCESS;
}

/* One passive message from origin: grant, queue or apply. Takes buf. */
static int
pas_handle(struct win_pas *p, int origin, uint32_t flags, uint32_t nops,
    char *buf, size_t len)
{
	uint32_t acq = flags & (PAS_SHARED | PAS_EXCL);
	int rc;

	if (acq != 0) {
		if (p->held[origin] != 0) {
			free(buf);
			mpiv_tp_set_error("passive target: rank %d asked for "
			    "a lock it holds", origin);
			return MPI_ERR_INTERN;
		}
		if (p->qhead != NULL || !pas_grantable(p, acq))
			return pas_enqueue(p, origin, flags, nops, buf, len);
		pas_grant(p, origin, acq);
	} else if (p->held[origin] == 0) {
		free(buf);
		mpiv_tp_set_error("passive target: rank %d sent operations "
		    "without its lock", origin);
		return MPI_ERR_INTERN;
	}
	rc = pas_apply(p, origin, flags, nops, buf, len);
	free(buf);
	if (rc == MPI_SUCCESS && (flags & PAS_RELEASE))
		rc = pas_drain(p);
	return rc;
}

const char *
win_pas_check(const void *msg, size_t got, int origin, int me, int size,
    uint32_t *flags, uint32_t *nops, size_t *bytes)
{
	struct pas_msg h;

	if (got < sizeof(h))
		return "shorter than its header";
	memcpy(&h, msg, sizeof(h));
	if (h.magic != PAS_MAGIC)
		return "not a passive-target message";
	if (origin < 0 || origin >= size || origin == me)
		return "from a rank outside the window";
	if (h.flags & ~(uint32_t)(PAS_SHARED | PAS_EXCL | PAS_RELEASE |
	    PAS_FOLLOWS) || (h.flags & PAS_SHARED && h.flags & PAS_EXCL))
		return "with unknown or contradictory flags";
	if (h.bytes > INT_MAX || (!(h.flags & PAS_FOLLOWS) &&
	    got - sizeof(h) != h.bytes) || (h.flags & PAS_FOLLOWS &&
	    got != sizeof(h)))
		return "whose length disagrees with its header";
	*flags = h.flags;
	*nops = h.nops;
	*bytes = (size_t)h.bytes;
	return NULL;
}

/*
 * Serves the message the posted receive got, and posts it again. The
 * records of a large batch come next from the same origin: waited for
 * here (they left right after). MPI code.
 */
static int
pas_serve(struct win_pas *p)
{
	MPI_Win win = p->win;
	struct mpiv_request *a = p->arm, *d = NULL;
	int origin = a->status.MPI_SOURCE, got = 0, rc;
	uint32_t flags = 0, nops = 0;
	const char *bad;
	char *buf = NULL;
	size_t len = 0;

	pas_reap(p, false);
	pas_served++;
	if ((rc = a->status.MPI_ERROR) == MPI_SUCCESS)
		rc = MPI_Get_count(&a->status, MPI_BYTE, &got);
	mpiv_req_release(a);
	p->arm = NULL;
	if (rc != MPI_SUCCESS)
		return rc;
	if ((bad = win_pas_check(p->inbuf, (size_t)got, origin,
	    win->comm->rank, win->comm->size, &flags, &nops, &len)) != NULL) {
		mpiv_tp_set_error("passive target: a message from rank %d "
		    "(%d bytes) %s", origin, got, bad);
		return MPI_ERR_INTERN;
	}
	if (len > 0 && (buf = malloc(len)) == NULL)
		return MPI_ERR_NO_MEM;
	if (flags & PAS_FOLLOWS) {
		rc = mpiv_irecv(buf, (int)len, MPI_BYTE, origin,
		    WIN_TAG_PDATA, win->comm, win->comm->context, &d);
		while (rc == MPI_SUCCESS && !d->complete)
			rc = mpiv_tp_progress(-1);
		if (rc == MPI_SUCCESS)
			rc = d->status.MPI_ERROR;
		if (d != NULL)
			mpiv_req_release(d);
	} else if (len > 0) {
		memcpy(buf, p->inbuf + sizeof(struct pas_msg), len);
	}
	if (rc == MPI_SUCCESS)
		rc = pas_arm(p);
	if (rc != MPI_SUCCESS) {
		free(buf);
		return rc;
	}
	return pas_handle(p, origin, flags, nops, buf, len);
}

/* ---------------- advance points (nbc.c) ---------------- */

int
mpiv_win_serve_live(uint64_t pos, bool *served)
{
	int *ser, n = 0, rc = MPI_SUCCESS;

	*served = false;
	for (struct win_pas *p = pas_head; p != NULL; p = p->next)
		n += p->arm != NULL && p->arm->complete;
	if (n == 0)
		return MPI_SUCCESS;
	if ((ser = malloc((size_t)n * sizeof(*ser))) == NULL)
		return MPI_ERR_NO_MEM;
	n = 0;
	for (struct win_pas *p = pas_head; p != NULL; p = p->next)
		if (p->arm != NULL && p->arm->complete)
			ser[n++] = (int)p->win->serial;
	/* recorded before any frame of the services leaves */
	rc = mpiv_ndlog_record_at(MPIV_ND_RMA, pos, n, ser);
	if (rc == MPI_SUCCESS)
		mpiv_fault_point("rma");
	for (int j = 0; j < n && rc == MPI_SUCCESS; j++)
		rc = pas_serve(pas_find((uint32_t)ser[j]));
	free(ser);
	*served = true;
	return rc;
}

int
mpiv_win_serve_replay(void)
{
	const Mpiv__NdOutcome *o;
	int rc;

	if ((rc = mpiv_ndlog_next(MPIV_ND_RMA, &o)) < 0)
		return MPI_ERR_INTERN;
	if (rc == 0)
		return MPI_SUCCESS;	/* cannot be: peeked */
	for (size_t j = 0; j < o->n_indices; j++) {
		struct win_pas *p = pas_find((uint32_t)o->indices[j]);

		if (p == NULL || p->arm == NULL) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu: logged a passive-target service of "
			    "window #%u, which is not there",
			    (unsigned long long)mpiv_ndlog_current(),
			    (unsigned)o->indices[j]);
			return MPI_ERR_INTERN;
		}
		while (!p->arm->complete)
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
		if ((rc = pas_serve(p)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* ---------------- origin side ---------------- */

/* Lets the library's advance points run until the own lock request is
   granted: a wait of the program's. MPI code. */
static int
pas_lock_self(struct win_pas *p, uint32_t acq)
{
	int me = p->win->comm->rank, rc = MPI_SUCCESS;

	/* granted or queued before any service of this call: the queue's
	   order is then the same in a re-execution, which replays the
	   call's services from its start */
	if (p->qhead == NULL && pas_grantable(p, acq)) {
		pas_grant(p, me, acq);
		return MPI_SUCCESS;
	}
	if ((rc = pas_enqueue(p, me, acq, 0, NULL, 0)) != MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_nbc_call()) != MPI_SUCCESS)
		return rc;
	while (p->held[me] == 0) {
		mpiv_ckpt_point();
		if ((rc = mpiv_nbc_progress()) != MPI_SUCCESS)
			return rc;
		if (p->held[me] != 0)
			break;
		if ((rc = mpiv_tp_progress(mpiv_ckpt_due_ms())) !=
		    MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* Gives the own lock back; requests waiting for it are served now. */
static int
pas_unlock_self(struct win_pas *p)
{
	bool was = mpiv_nbc_enter();
	int rc;

	pas_release(p, p->win->comm->rank);
	rc = pas_drain(p);
	mpiv_nbc_leave(was);
	return rc;
}

/* Applies the own records in place (the own lock is held). A poll too:
   a rank spinning on its own window (compare-and-swap, flush, again)
   keeps serving the others, one of which must free what it waits for. */
static int
pas_flush_self(MPI_Win win)
{
	struct win_batch *b = &win->out[win->comm->rank];
	int rc;

	if (win->comm->size > 1 && (rc = pas_poll()) != MPI_SUCCESS)
		return rc;
	return b->nops == 0 ? MPI_SUCCESS : win_apply_own(win, b);
}

static int pas_exchange(MPI_Win win, int t, bool release);

/* Completes the operations to rank (the own: in place). */
static int
pas_flush_to(MPI_Win win, int rank)
{
	return rank == win->comm->rank ? pas_flush_self(win) :
	    pas_exchange(win, rank, false);
}

/*
 * Sends target t what its epoch has (asking for the lock the first time,
 * giving it back if `release`) and waits for the answer. Nothing to say
 * (no records, no lock to ask for or to give back) sends nothing.
 */
static int
pas_exchange(MPI_Win win, int t, bool release)
{
	struct win_pas *p = win->pas;
	struct win_batch *b = &win->out[t];
	struct pas_msg h;
	struct pas_reply rh;
	MPI_Request reqs[3];
	char *msg = NULL, *ans = NULL;
	size_t mlen;
	int n = 0, rc, err;

	if (b->nops == 0 && (!p->acquired[t] || !release))
		return MPI_SUCCESS;
	if (!win_batch_fits(b, t, sizeof(rh))) {
		win_batch_clear(b);
		return MPI_ERR_COUNT;
	}
	memset(&h, 0, sizeof(h));
	h.magic = PAS_MAGIC;
	if (!p->acquired[t])
		h.flags = p->lock[t] == MPI_LOCK_EXCLUSIVE ? PAS_EXCL :
		    PAS_SHARED;
	if (release)
		h.flags |= PAS_RELEASE;
	h.nops = b->nops;
	h.bytes = b->len;
	h.reply_bytes = b->reply_bytes;
	if (sizeof(h) + b->len > PAS_INLINE)
		h.flags |= PAS_FOLLOWS;
	mlen = sizeof(h) + ((h.flags & PAS_FOLLOWS) ? 0 : b->len);
	if ((msg = malloc(mlen)) == NULL ||
	    (ans = malloc(sizeof(rh) + b->reply_bytes)) == NULL) {
		free(msg);
		return MPI_ERR_NO_MEM;
	}
	memcpy(msg, &h, sizeof(h));
	if (!(h.flags & PAS_FOLLOWS) && b->len > 0)
		memcpy(msg + sizeof(h), b->buf, b->len);
	/* the sends first: a failed one leaves no receive waiting */
	rc = mpiv_isend(msg, (int)mlen, MPI_BYTE, t, WIN_TAG_PASSIVE,
	    win->comm, win->comm->context, MPIV_SEND_STANDARD, &reqs[n]);
	if (rc == MPI_SUCCESS && (h.flags & PAS_FOLLOWS))
		rc = mpiv_isend(b->buf, (int)b->len, MPI_BYTE, t,
		    WIN_TAG_PDATA, win->comm, win->comm->context,
		    MPIV_SEND_STANDARD, &reqs[++n]);
	if (rc == MPI_SUCCESS)
		rc = mpiv_irecv(ans, (int)(sizeof(rh) + b->reply_bytes),
		    MPI_BYTE, t, WIN_TAG_PREPLY, win->comm, win->comm->context,
		    &reqs[++n]);
	if (rc == MPI_SUCCESS)
		n++;
	err = mpiv_waitall(n, reqs, NULL);
	if (rc == MPI_SUCCESS)
		rc = err;
	free(msg);
	if (rc == MPI_SUCCESS) {
		memcpy(&rh, ans, sizeof(rh));
		if (rh.magic != PAS_RMAGIC || rh.bytes != b->reply_bytes) {
			mpiv_tp_set_error("passive target: a malformed answer "
			    "from rank %d", t);
			rc = MPI_ERR_INTERN;
		} else {
			/* the reads unpack from the answer where it lies */
			rc = rh.rc;
			b->reply = ans + sizeof(rh);
			win_finish_gets(b);
			b->reply = NULL;
		}
	}
	free(ans);
	win_batch_clear(b);
	if (rc != MPI_ERR_INTERN)
		p->acquired[t] = !release;
	return rc;
}

static int
pas_check_type(int lock_type, int assert)
{
	if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
		return MPI_ERR_LOCKTYPE;
	if (assert & ~MPI_MODE_NOCHECK)
		return MPI_ERR_ASSERT;
	return MPI_SUCCESS;
}

/* Starting a passive epoch: no fence or post/start epoch may be open. */
static int
pas_may_start(MPI_Win win)
{
	if (win->access_open || win->expose_open) {
		mpiv_err_detail("a post/start epoch is open");
		return MPI_ERR_RMA_SYNC;
	}
	return win->fence_open ? win_leave_fence(win) : MPI_SUCCESS;
}

int
win_pas_lock(MPI_Win win, int lock_type, int rank, int assert)
{
	struct win_pas *p = win->pas;
	int rc;

	if ((rc = pas_check_type(lock_type, assert)) != MPI_SUCCESS)
		return rc;
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= win->comm->size)
		return MPI_ERR_RANK;
	if (p->all || p->lock[rank] != 0) {
		mpiv_err_detail("rank %d is already locked in this window",
		    rank);
		return MPI_ERR_RMA_SYNC;
	}
	if (p->no_locks && rank != win->comm->rank) {
		mpiv_err_detail("the window was created with the info hint "
		    "no_locks=true");
		return MPI_ERR_RMA_SYNC;
	}
	if ((rc = pas_may_start(win)) != MPI_SUCCESS)
		return rc;
	if (rank == win->comm->rank) {
		rc = pas_lock_self(p, lock_type == MPI_LOCK_EXCLUSIVE ?
		    PAS_EXCL : PAS_SHARED);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	p->lock[rank] = (uint8_t)lock_type;
	p->acquired[rank] = rank == win->comm->rank;
	p->nlocked++;
	return MPI_SUCCESS;
}

static int
pas_end(MPI_Win win, int rank)
{
	struct win_pas *p = win->pas;
	int rc, rc2;

	if (rank == win->comm->rank) {
		rc = pas_flush_self(win);
		rc2 = pas_unlock_self(p);
	} else {
		rc = pas_exchange(win, rank, true);
		rc2 = MPI_SUCCESS;
	}
	p->lock[rank] = 0;
	p->acquired[rank] = false;
	p->nlocked--;
	return rc != MPI_SUCCESS ? rc : rc2;
}

int
win_pas_unlock(MPI_Win win, int rank)
{
	struct win_pas *p = win->pas;

	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= win->comm->size)
		return MPI_ERR_RANK;
	if (p->all || p->lock[rank] == 0) {
		mpiv_err_detail("rank %d is not locked (by MPI_Win_lock) in "
		    "this window", rank);
		return MPI_ERR_RMA_SYNC;
	}
	return pas_end(win, rank);
}

int
win_pas_flush(MPI_Win win, int rank)
{
	struct win_pas *p = win->pas;

	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= win->comm->size)
		return MPI_ERR_RANK;
	if (p->lock[rank] == 0) {
		mpiv_err_detail("rank %d is not locked in this window", rank);
		return MPI_ERR_RMA_SYNC;
	}
	return pas_flush_to(win, rank);
}

int
win_pas_lock_all(MPI_Win win, int assert)
{
	struct win_pas *p = win->pas;
	int rc, me = win->comm->rank;

	if ((rc = pas_check_type(MPI_LOCK_SHARED, assert)) != MPI_SUCCESS)
		return rc;
	if (p->nlocked > 0) {
		mpiv_err_detail("a passive-target epoch is already open");
		return MPI_ERR_RMA_SYNC;
	}
	if (p->no_locks && win->comm->size > 1) {
		mpiv_err_detail("the window was created with the info hint "
		    "no_locks=true");
		return MPI_ERR_RMA_SYNC;
	}
	if ((rc = pas_may_start(win)) != MPI_SUCCESS)
		return rc;
	if ((rc = pas_lock_self(p, PAS_SHARED)) != MPI_SUCCESS)
		return rc;
	for (int i = 0; i < win->comm->size; i++) {
		p->lock[i] = MPI_LOCK_SHARED;
		p->acquired[i] = i == me;
	}
	p->nlocked = win->comm->size;
	p->all = true;
	return MPI_SUCCESS;
}

int
win_pas_unlock_all(MPI_Win win)
{
	struct win_pas *p = win->pas;
	int rc = MPI_SUCCESS, rc2;

	if (!p->all) {
		mpiv_err_detail("no MPI_Win_lock_all before");
		return MPI_ERR_RMA_SYNC;
	}
	for (int i = 0; i < win->comm->size; i++)
		if ((rc2 = pas_end(win, i)) != MPI_SUCCESS && rc == MPI_SUCCESS)
			rc = rc2;
	p->all = false;
	return rc;
}

int
win_pas_flush_all(MPI_Win win)
{
	struct win_pas *p = win->pas;
	int rc = MPI_SUCCESS, rc2;

	if (p->nlocked == 0) {
		mpiv_err_detail("no passive-target epoch is open");
		return MPI_ERR_RMA_SYNC;
	}
	for (int i = 0; i < win->comm->size; i++) {
		if (p->lock[i] == 0)
			continue;
		rc2 = pas_flush_to(win, i);
		if (rc2 != MPI_SUCCESS && rc == MPI_SUCCESS)
			rc = rc2;
	}
	return rc;
}

/*
 * A call that only polls: a place of its own in the program (so that a
 * loop of them waiting for a remote update ends the same way in a
 * re-execution), where the frames that came are read and the windows
 * served. A run of them that serve nothing backs off as the Test
 * family's fruitless polls do (yield, then short sleeps that still wake
 * at once when a frame comes), so that a rank spinning on its window
 * leaves the CPU to the ranks and servers it waits for. MPI code.
 */
static int
pas_poll(void)
{
	uint64_t before = pas_served;
	long entry = mono_us();
	int rc;

	mpiv_ckpt_point();
	if ((rc = mpiv_nbc_call()) != MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_tp_progress(0)) != MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_nbc_progress()) != MPI_SUCCESS)
		return rc;
	mpiv_tp_poll_done(entry, pas_served != before);
	return MPI_SUCCESS;
}

/* MPI_Win_sync: nothing to copy (the window's memory is its only
   copy), a poll. */
int
win_pas_sync(MPI_Win win)
{
	(void)win;
	return pas_poll();
}
