/*
 * win_sync.c: one-sided synchronization (docs/ONESIDED.md).
 *
 * Closing an access epoch (fence, complete) sends each target a header
 * (bytes, number of records) and, if there are records, the payload, on
 * the window's private communicator; reads then wait for the target's
 * reply. Closing an exposure epoch (fence, wait, test) receives the
 * header and payload of every origin of the epoch, applies the batches
 * by origin rank (the rank's own batch in its place), and answers each
 * origin's reads. Every effect on the window thus comes from messages
 * received with a named source and tag at a point of the target's
 * program, in an order that does not depend on timing; where timing
 * decides (a test, or a complete that serves the exposure epoch while it
 * waits for its replies) the decision is an MPI_Testall, logged like the
 * program's own. A re-executed rank replays the same messages in the same
 * order and rebuilds the same window, bit for bit.
 *
 * Passive target (lock, flush, unlock): win_passive.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "win.h"

#define WIN_ASSERTS (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | \
	MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

/* Requests and buffers of one closing access epoch. */
struct sync_access {
	struct win_hdr *hdrs;	/* per target sent */
	MPI_Request *reqs;	/* 2 sends per target, then the replies */
	int nsend, nreply;
	int *reply_from;	/* target of each reply request */
};

static bool
sync_in(const int *ranks, int n, int r)
{
	for (int i = 0; i < n; i++)
		if (ranks[i] == r)
			return true;
	return false;
}

static int
sync_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* group -> sorted comm ranks of the window (MPI_ERR_GROUP if a member is
   not in the window). */
static int
sync_ranks(MPI_Win win, MPI_Group group, int **out, int *n)
{
	int *r;

	if (group == MPI_GROUP_NULL)
		return MPI_ERR_GROUP;
	if ((r = malloc(((size_t)group->size + 1) * sizeof(*r))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < group->size; i++) {
		r[i] = mpiv_comm_from_world(win->comm, group->world[i]);
		if (r[i] < 0) {
			free(r);
			mpiv_err_detail("member %d of the group is not in the "
			    "window's group", i);
			return MPI_ERR_GROUP;
		}
	}
	qsort(r, (size_t)group->size, sizeof(*r), sync_cmp_int);
	*out = r;
	*n = group->size;
	return MPI_SUCCESS;
}

static bool
sync_pending_ops(MPI_Win win)
{
	for (int i = 0; i < win->comm->size; i++)
		if (win->out[i].nops > 0)
			return true;
	return false;
}

bool
win_batch_fits(const struct win_batch *b, int t, size_t header)
{
	if (b->len <= INT_MAX && b->reply_bytes <= INT_MAX - header &&
	    !mpiv_p2p_too_big(b->len) && !mpiv_p2p_too_big(b->reply_bytes))
		return true;
	mpiv_err_detail("%zu bytes of operations to rank %d in one epoch "
	    "(their reads: %zu bytes): over the message limit, not done",
	    b->len, t, b->reply_bytes);
	return false;
}

/*
 * Sends the batch of every target (but itself) and posts the receives
 * of the replies its reads wait for. A batch over the message limit is
 * dropped, its target told "nothing" so that it does not wait, and
 * *dropped says MPI_ERR_COUNT. Returns other failures.
 */
static int
sync_send(MPI_Win win, const int *targets, int nt, struct sync_access *a,
    int *dropped)
{
	int me = win->comm->rank, rc;
	uint32_t ctx = win->comm->context;

	memset(a, 0, sizeof(*a));
	*dropped = MPI_SUCCESS;
	a->hdrs = calloc((size_t)nt + 1, sizeof(*a->hdrs));
	a->reqs = calloc((size_t)nt * 3 + 1, sizeof(*a->reqs));
	a->reply_from = calloc((size_t)nt + 1, sizeof(*a->reply_from));
	if (a->hdrs == NULL || a->reqs == NULL || a->reply_from == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < nt; i++) {
		struct win_batch *b = &win->out[targets[i]];
		int t = targets[i];

		if (t == me)
			continue;
		if (!win_batch_fits(b, t, 0)) {
			*dropped = MPI_ERR_COUNT;
			win_batch_clear(b);
		}
		a->hdrs[i].bytes = b->len;
		a->hdrs[i].nops = b->nops;
		a->hdrs[i].magic = WIN_MAGIC;
		rc = mpiv_isend(&a->hdrs[i], (int)sizeof(a->hdrs[i]), MPI_BYTE,
		    t, WIN_TAG_HDR, win->comm, ctx, MPIV_SEND_STANDARD,
		    &a->reqs[a->nsend++]);
		if (rc == MPI_SUCCESS && b->len > 0)
			rc = mpiv_isend(b->buf, (int)b->len, MPI_BYTE, t,
			    WIN_TAG_DATA, win->comm, ctx, MPIV_SEND_STANDARD,
			    &a->reqs[a->nsend++]);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	for (int i = 0; i < nt; i++) {
		struct win_batch *b = &win->out[targets[i]];
		MPI_Request *rq = &a->reqs[a->nsend + a->nreply];

		if (targets[i] == me || b->reply_bytes == 0)
			continue;
		if ((b->reply = malloc(b->reply_bytes)) == NULL)
			return MPI_ERR_NO_MEM;
		rc = mpiv_irecv(b->reply, (int)b->reply_bytes, MPI_BYTE,
		    targets[i], WIN_TAG_REPLY, win->comm, ctx, rq);
		if (rc != MPI_SUCCESS)
			return rc;
		a->reply_from[a->nreply++] = targets[i];
	}
	return MPI_SUCCESS;
}

/* Unpacks the replies into the origin buffers and empties the batches
   of the targets; frees a. */
static void
sync_access_done(MPI_Win win, const int *targets, int nt,
    struct sync_access *a)
{
	int me = win->comm->rank;

	for (int i = 0; i < nt; i++) {
		if (targets[i] == me)
			continue;
		win_finish_gets(&win->out[targets[i]]);
		win_batch_clear(&win->out[targets[i]]);
	}
	free(a->hdrs);
	free(a->reqs);
	free(a->reply_from);
}

/* Frees a after a failure: the requests still pending are waited for (a
   send may still read a batch). */
static void
sync_access_abort(MPI_Win win, const int *targets, int nt,
    struct sync_access *a)
{
	if (a->reqs != NULL)
		mpiv_waitall(a->nsend + a->nreply, a->reqs, NULL);
	for (int i = 0; i < nt; i++)
		win_batch_clear(&win->out[targets[i]]);
	free(a->hdrs);
	free(a->reqs);
	free(a->reply_from);
}

/* Posts the header receives of an exposure epoch over win->expose. */
static int
sync_post_headers(MPI_Win win)
{
	int me = win->comm->rank, n = win->nexpose, rc;

	win->post_hdrs = calloc((size_t)n + 1, sizeof(*win->post_hdrs));
	win->post_reqs = calloc((size_t)n + 1, sizeof(*win->post_reqs));
	if (win->post_hdrs == NULL || win->post_reqs == NULL)
		return MPI_ERR_NO_MEM;
	win->expose_applied = false;
	for (int i = 0; i < n; i++) {
		if (win->expose[i] == me)
			continue;
		rc = mpiv_irecv(&win->post_hdrs[i], (int)sizeof(*win->post_hdrs),
		    MPI_BYTE, win->expose[i], WIN_TAG_HDR, win->comm,
		    win->comm->context, &win->post_reqs[i]);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* Ends the exposure epoch's bookkeeping. */
static void
sync_expose_close(MPI_Win win)
{
	free(win->post_hdrs);
	free(win->post_reqs);
	free(win->expose);
	win->post_hdrs = NULL;
	win->post_reqs = NULL;
	win->expose = NULL;
	win->nexpose = 0;
	win->expose_open = false;
	win->expose_applied = false;
	win->self_applied = false;
}

/* Applies own records (self_in) and answers its reads locally. */
static int
sync_apply_self(MPI_Win win)
{
	int rc = win_apply_own(win, &win->self_in);

	win->self_delivered = false;
	return rc;
}

/*
 * The exposure epoch's batches, once every header is in (and the own
 * batch handed over, if this rank is one of the origins): receives the
 * payloads, applies the batches by origin rank and sends the replies.
 */
static int
sync_expose_apply(MPI_Win win)
{
	int me = win->comm->rank, n = win->nexpose, nreq = 0, rc = MPI_SUCCESS;
	int err = MPI_SUCCESS;
	uint32_t ctx = win->comm->context;
	char **bufs, **replies;
	MPI_Request *reqs;

	bufs = calloc((size_t)n + 1, sizeof(*bufs));
	replies = calloc((size_t)n + 1, sizeof(*replies));
	reqs = calloc((size_t)n + 1, sizeof(*reqs));
	if (bufs == NULL || replies == NULL || reqs == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int i = 0; i < n; i++) {
		struct win_hdr *h = &win->post_hdrs[i];

		if (win->expose[i] == me)
			continue;
		if (h->magic != WIN_MAGIC || h->bytes > INT_MAX) {
			rc = MPI_ERR_INTERN;
			goto out_free;
		}
		if (h->bytes == 0)
			continue;
		if ((bufs[i] = malloc(h->bytes)) == NULL) {
			rc = MPI_ERR_NO_MEM;
			goto out_free;
		}
		rc = mpiv_irecv(bufs[i], (int)h->bytes, MPI_BYTE,
		    win->expose[i], WIN_TAG_DATA, win->comm, ctx,
		    &reqs[nreq++]);
		if (rc != MPI_SUCCESS)
			goto out_free;
	}
	if ((rc = mpiv_waitall(nreq, reqs, NULL)) != MPI_SUCCESS)
		goto out_free;
	nreq = 0;
	for (int i = 0; i < n; i++) {
		int o = win->expose[i];
		size_t rlen;

		if (o == me) {
			if (win->self_delivered)
				rc = sync_apply_self(win);
		} else {
			rc = win_apply(win, o, bufs[i], win->post_hdrs[i].bytes,
			    win->post_hdrs[i].nops, &replies[i], &rlen);
			if (rlen > 0 && rc != MPI_ERR_INTERN &&
			    rc != MPI_ERR_NO_MEM) {
				int src = mpiv_isend(replies[i], (int)rlen,
				    MPI_BYTE, o, WIN_TAG_REPLY, win->comm,
				    ctx, MPIV_SEND_STANDARD, &reqs[nreq++]);
				if (src != MPI_SUCCESS)
					rc = src;
			}
		}
		if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
			err = rc;
	}
	rc = mpiv_waitall(nreq, reqs, NULL);
	if (err == MPI_SUCCESS)
		err = rc;
	win->expose_applied = true;
	rc = err;
out_free:
	for (int i = 0; bufs != NULL && i < n; i++)
		free(bufs[i]);
	for (int i = 0; replies != NULL && i < n; i++)
		free(replies[i]);
	free(bufs);
	free(replies);
	free(reqs);
	return rc;
}

/* true when the own batch the exposure epoch needs is not handed over
   yet. */
static bool
sync_self_missing(MPI_Win win)
{
	return !win->expose_applied && !win->self_applied &&
	    sync_in(win->expose, win->nexpose, win->comm->rank) &&
	    !win->self_delivered;
}

/* Hands the own batch over to the exposure side (closing an access
   epoch that included this rank). */
static void
sync_hand_over(MPI_Win win)
{
	struct win_batch *mine = &win->out[win->comm->rank];

	win->self_in = *mine;
	memset(mine, 0, sizeof(*mine));
	win->self_delivered = true;
}

int
MPI_Win_fence(int assert, MPI_Win win)
{
	struct sync_access a;
	int n, *all, rc, rc2, dropped;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_fence");
	if (assert & ~WIN_ASSERTS)
		return win_err(win, MPI_ERR_ASSERT, "MPI_Win_fence");
	if (win->access_open || win->expose_open || win_pas_open(win)) {
		mpiv_err_detail("a %s epoch is open", win_pas_open(win) ?
		    "passive-target (MPI_Win_lock)" : "post/start");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_fence");
	}
	/* MPI_MODE_NOPRECEDE is given by every rank or by none (the
	   standard): nothing to complete, no message. */
	if (assert & MPI_MODE_NOPRECEDE) {
		if (sync_pending_ops(win)) {
			for (int i = 0; i < win->comm->size; i++)
				win_batch_clear(&win->out[i]);
			mpiv_err_detail("MPI_MODE_NOPRECEDE, but RMA calls "
			    "precede this fence (they are dropped)");
			return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_fence");
		}
		win->fence_open = !(assert & MPI_MODE_NOSUCCEED);
		return MPI_SUCCESS;
	}
	n = win->comm->size;
	if ((all = malloc((size_t)n * sizeof(*all))) == NULL)
		return win_err(win, MPI_ERR_NO_MEM, "MPI_Win_fence");
	for (int i = 0; i < n; i++)
		all[i] = i;
	/* Every rank is origin and target: an exposure epoch over all. */
	win->expose = all;
	win->nexpose = n;
	win->expose_open = true;
	rc = sync_send(win, all, n, &a, &dropped);
	if (rc == MPI_SUCCESS) {
		sync_hand_over(win);
		rc = sync_post_headers(win);
	}
	if (rc == MPI_SUCCESS)
		rc = mpiv_waitall(n, win->post_reqs, NULL);
	if (rc == MPI_SUCCESS)
		rc = sync_expose_apply(win);
	rc2 = mpiv_waitall(a.nsend + a.nreply, a.reqs, NULL);
	if (rc == MPI_SUCCESS)
		rc = rc2;
	if (rc == MPI_SUCCESS)
		sync_access_done(win, all, n, &a);
	else
		sync_access_abort(win, all, n, &a);
	win_batch_clear(&win->self_in);
	win->self_delivered = false;
	sync_expose_close(win);
	win->fence_open = !(assert & MPI_MODE_NOSUCCEED);
	if (rc == MPI_SUCCESS)
		rc = dropped;
	return rc == MPI_SUCCESS ? rc : win_err(win, rc, "MPI_Win_fence");
}

int
win_leave_fence(MPI_Win win)
{
	if (sync_pending_ops(win)) {
		mpiv_err_detail("operations of a fence epoch were not "
		    "completed by MPI_Win_fence");
		return MPI_ERR_RMA_SYNC;
	}
	win->fence_open = false;
	return MPI_SUCCESS;
}

int
MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_post");
	if (assert & ~WIN_ASSERTS)
		return win_err(win, MPI_ERR_ASSERT, "MPI_Win_post");
	if (win->expose_open) {
		mpiv_err_detail("an exposure epoch is already open");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_post");
	}
	if ((rc = win_leave_fence(win)) != MPI_SUCCESS ||
	    (rc = sync_ranks(win, group, &win->expose, &win->nexpose)) !=
	    MPI_SUCCESS)
		return win_err(win, rc, "MPI_Win_post");
	win->expose_open = true;
	if ((rc = sync_post_headers(win)) != MPI_SUCCESS) {
		mpiv_waitall(win->nexpose, win->post_reqs, NULL);
		sync_expose_close(win);
		return win_err(win, rc, "MPI_Win_post");
	}
	return MPI_SUCCESS;
}

int
MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_start");
	if (assert & ~WIN_ASSERTS)
		return win_err(win, MPI_ERR_ASSERT, "MPI_Win_start");
	if (win->access_open || win_pas_open(win)) {
		mpiv_err_detail("an access epoch is already open");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_start");
	}
	if ((rc = win_leave_fence(win)) != MPI_SUCCESS ||
	    (rc = sync_ranks(win, group, &win->access, &win->naccess)) !=
	    MPI_SUCCESS)
		return win_err(win, rc, "MPI_Win_start");
	win->access_open = true;
	return MPI_SUCCESS;
}

/* Serves the open exposure epoch if every header is in (a logged
   MPI_Testall: timing decides). */
static int
sync_try_expose(MPI_Win win)
{
	int flag = 0, rc;

	if (!win->expose_open || win->expose_applied || sync_self_missing(win))
		return MPI_SUCCESS;
	if ((rc = MPI_Testall(win->nexpose, win->post_reqs, &flag,
	    MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
		return rc;
	return flag ? sync_expose_apply(win) : MPI_SUCCESS;
}

int
MPI_Win_complete(MPI_Win win)
{
	struct sync_access a;
	int me, rc, flag, dropped;
	bool self;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_complete");
	if (!win->access_open) {
		mpiv_err_detail("no MPI_Win_start before");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_complete");
	}
	me = win->comm->rank;
	self = sync_in(win->access, win->naccess, me);
	rc = sync_send(win, win->access, win->naccess, &a, &dropped);
	/*
	 * The own records to itself are applied here, at once: before any
	 * other origin's of the same exposure epoch (those wait for this
	 * rank's complete, sync_self_missing), so the order stays fixed, and
	 * without waiting for them (the rank may have to send them
	 * something between its complete and its wait).
	 */
	if (rc == MPI_SUCCESS && self) {
		sync_hand_over(win);
		rc = sync_apply_self(win);
		win->self_applied = win->expose_open;
	}
	/*
	 * Wait for the replies. While this rank's own exposure epoch is
	 * open, serve it as soon as its headers are in: its origins may be
	 * waiting in their own complete for replies from it (post, start,
	 * get, complete, wait on every rank).
	 */
	while (rc == MPI_SUCCESS) {
		bool serve = win->expose_open && !win->expose_applied;

		if (serve && (rc = sync_try_expose(win)) != MPI_SUCCESS)
			break;
		serve = win->expose_open && !win->expose_applied;
		if (!serve) {
			rc = mpiv_waitall(a.nsend + a.nreply, a.reqs, NULL);
			break;
		}
		flag = 0;
		rc = MPI_Testall(a.nsend + a.nreply, a.reqs, &flag,
		    MPI_STATUSES_IGNORE);
		if (rc == MPI_SUCCESS && flag)
			break;
	}
	if (rc == MPI_SUCCESS)
		sync_access_done(win, win->access, win->naccess, &a);
	else
		sync_access_abort(win, win->access, win->naccess, &a);
	free(win->access);
	win->access = NULL;
	win->naccess = 0;
	win->access_open = false;
	if (rc == MPI_SUCCESS)
		rc = dropped;
	return rc == MPI_SUCCESS ? rc : win_err(win, rc, "MPI_Win_complete");
}

int
MPI_Win_wait(MPI_Win win)
{
	int rc = MPI_SUCCESS;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_wait");
	if (!win->expose_open) {
		mpiv_err_detail("no MPI_Win_post before");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_wait");
	}
	if (sync_self_missing(win)) {
		mpiv_err_detail("this rank is in its own exposure group: call "
		    "MPI_Win_complete before MPI_Win_wait");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_wait");
	}
	if (!win->expose_applied &&
	    (rc = mpiv_waitall(win->nexpose, win->post_reqs, NULL)) ==
	    MPI_SUCCESS)
		rc = sync_expose_apply(win);
	sync_expose_close(win);
	return rc == MPI_SUCCESS ? rc : win_err(win, rc, "MPI_Win_wait");
}

int
MPI_Win_test(MPI_Win win, int *flag)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_test");
	if (flag == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_test");
	if (!win->expose_open) {
		mpiv_err_detail("no MPI_Win_post before");
		return win_err(win, MPI_ERR_RMA_SYNC, "MPI_Win_test");
	}
	*flag = 0;
	if ((rc = sync_try_expose(win)) != MPI_SUCCESS) {
		sync_expose_close(win);
		return win_err(win, rc, "MPI_Win_test");
	}
	if (win->expose_applied) {
		sync_expose_close(win);
		*flag = 1;
	}
	return MPI_SUCCESS;
}

/* ---------------- passive target (win_passive.c) ---------------- */

static int
sync_pas(MPI_Win win, int rc, const char *fn)
{
	return rc == MPI_SUCCESS ? rc : win_err(win, rc, fn);
}

int
MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_lock");
	return sync_pas(win, win_pas_lock(win, lock_type, rank, assert),
	    "MPI_Win_lock");
}

int
MPI_Win_unlock(int rank, MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_unlock");
	return sync_pas(win, win_pas_unlock(win, rank), "MPI_Win_unlock");
}

int
MPI_Win_lock_all(int assert, MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_lock_all");
	return sync_pas(win, win_pas_lock_all(win, assert),
	    "MPI_Win_lock_all");
}

int
MPI_Win_unlock_all(MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_unlock_all");
	return sync_pas(win, win_pas_unlock_all(win), "MPI_Win_unlock_all");
}

/* flush_local completes at the target too: the reads' bytes come back
   with the target's answer, which says the writes are in. */
int
MPI_Win_flush(int rank, MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_flush");
	return sync_pas(win, win_pas_flush(win, rank), "MPI_Win_flush");
}

int
MPI_Win_flush_local(int rank, MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_flush_local");
	return sync_pas(win, win_pas_flush(win, rank), "MPI_Win_flush_local");
}

int
MPI_Win_flush_all(MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_flush_all");
	return sync_pas(win, win_pas_flush_all(win), "MPI_Win_flush_all");
}

int
MPI_Win_flush_local_all(MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_flush_local_all");
	return sync_pas(win, win_pas_flush_all(win),
	    "MPI_Win_flush_local_all");
}

/* The window's memory is its only copy: nothing to copy. But a loop of
   MPI_Win_sync waiting for another rank's update is where the passive
   messages are served (win_passive.c). */
int
MPI_Win_sync(MPI_Win win)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_sync");
	return sync_pas(win, win_pas_sync(win), "MPI_Win_sync");
}
