/*
 * p2p_direct.c: the direct protocol of point-to-point messages
 * (docs/DIRECT.md), behind proto.h. Ranks send to each other over the
 * links of dp_conn.c; the Channel Memories only keep the outcomes that
 * timing decides.
 *
 * Sending: every payload goes into the sender's log (sblog.c) under the
 * next seq of its channel, then on the wire as one DSend frame (the user
 * buffer itself when contiguous) if the link to the receiver is up and
 * has everything before it; otherwise the log alone keeps it and the
 * next link resends it. A send depends on what this rank decided so
 * far: it waits until every logged outcome is acknowledged (the
 * pessimistic rule); a program without such outcomes never waits.
 *
 * Receiving: matching happens here, in post order for receives and
 * arrival order for messages, one ordered stream (seq) per sender. A
 * message whose receive is posted is read straight into the user
 * buffer; another waits in the unexpected list. The match of a wildcard
 * receive (ANY_SOURCE or ANY_TAG) is logged at the home CM, by the
 * receive's post number; probes, Iprobes and cancels are logged as the
 * calls they are.
 *
 * Replay (a relaunched rank): a wildcard receive whose match is logged
 * takes only that (source, seq). One without a logged match is held
 * while logged calls remain (the first run did not match it before
 * them): it takes nothing, and no later receive takes a message it
 * could match; once the log's calls are used up it is released.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "direct.h"
#include "mono.h"
#include "proto.h"
#include "sblog.h"
#include "transport.h"
#include "waitrep.h"

#define DP_SYNC	1u		/* sblog flags: a synchronous send */
#define DP_LOG_WAIT_MS	10000	/* a full log waits this long for trims */
#define DP_LOG_WAIT_MAX	86400.0	/* MPIV_SENDLOG_WAIT's most, seconds */
#define DP_FIN_WAIT_MS	1000	/* FinWait is said again this often */

struct dp_msg {
	struct dp_msg *prev, *next;	/* unexpected list, arrival order */
	int src;			/* world rank */
	uint64_t seq;
	uint32_t context;
	int32_t tag;
	bool sync;
	size_t len;
	uint8_t *buf;			/* unexpected: the payload */
	bool kept;			/* buf counts in dp_unx_bytes */
	bool pull;			/* payload left in the sender's log:
					   pulled when a receive takes it */
	struct mpiv_request *req;	/* read into this receive */
	struct mpiv_request *self_req;	/* a synchronous send to ourself */
};

/* A DSyncAck held until the match it reports is acknowledged. */
struct dp_ack {
	int peer;
	uint64_t seq;
	uint64_t after;			/* outcome number of the match's record */
};

static struct sblog dp_sb;
static bool dp_sb_ready;
static uint64_t dp_post_no;		/* receives posted so far */
static struct mpiv_request *dp_post_head, *dp_post_tail;
static int dp_nheld;
/* A list of messages (unexpected ones, pulls under way), oldest first. */
struct dp_mlist {
	struct dp_msg *head, *tail;
};
static struct dp_mlist dp_unx;		/* unexpected, in arrival order */
static struct dp_msg **dp_inflight;	/* [peer]: a DSend being read */
static struct dp_ack *dp_acks;
static size_t dp_nacks, dp_capacks;
static bool dp_finalizing;
/* MPIV_LOGGING=0 (mpiv run --relay-only): nothing runs again, so a sent
   message is kept only until it is on its link, and no digests. */
static bool dp_logging = true;
static int dp_spill_fd = -1;		/* the log's spill file, -1: none */

/*
 * Large unexpected messages (docs/DIRECT.md): payloads of unexpected
 * messages are kept in memory up to dp_unx_max bytes; past it one of
 * DP_PULL_MIN bytes or more is read past, its envelope kept, and pulled
 * from the sender's log (DPull, DData) straight into the receive that
 * takes it. Pulls under way are on their own list; dp_pulling[p] is the
 * one whose DData is being read from p. The sender keeps the pulls it
 * cannot serve yet (a re-execution that has not sent that far).
 */
#define DP_PULL_MIN	(64u << 10)
#define DP_UNX_MAX	(64ull << 20)
static uint64_t dp_unx_bytes, dp_unx_max = DP_UNX_MAX;
static long dp_log_wait_ms = DP_LOG_WAIT_MS;	/* MPIV_SENDLOG_WAIT */
static struct dp_mlist dp_pulls;
static struct dp_msg **dp_pulling;	/* [peer] */
struct dp_wanted {
	int peer;
	uint64_t seq;
};
static struct dp_wanted *dp_wanted;	/* pulls of ours not sent yet */
static size_t dp_nwanted, dp_capwanted;

/* Digests of the messages accepted from each peer (by seq, from base),
   to compare with a re-executing sender's (DSend.check), and the highest
   of our seqs each peer was sent or asked to check. */
struct dp_digests {
	uint64_t base;
	uint64_t *v;
	size_t n, cap;
};
static struct dp_digests *dp_dgs;	/* [peer] */
static uint64_t *dp_checked;		/* [peer] */
#define DP_DIGEST_FULL	(16u << 10)	/* bigger payloads are sampled */
#define DP_DIGEST_END	8192		/* bytes hashed at each end */
#define DP_DIGEST_SLICES 32		/* and this many slices between */

/* Checkpoints: what this rank had received from each peer when its
   checkpoint k was marked (the newest few), and the durable one peers
   were told of (DTrim: they drop what it holds from their logs). */
#define DP_SNAPS 4
static struct { uint64_t k; uint64_t *recv, *sent; } dp_snaps[DP_SNAPS];
static uint64_t *dp_trim_sent;		/* [peer]: the upto told, 0: none */
static uint64_t *dp_trim_mine;		/* [peer]: the sent told */
static uint64_t dp_trim_ckpt;

/* ---------------- the lists ---------------- */

static bool
dp_matches(const struct mpiv_request *r, const struct dp_msg *m)
{
	return r->context == m->context &&
	    (r->post_src < 0 || r->post_src == m->src) &&
	    (r->post_tag < 0 || r->post_tag == m->tag) &&
	    (r->dp_seq == 0 || r->dp_seq == m->seq);
}

static void
dp_post_append(struct mpiv_request *r)
{
	r->dp_next = NULL;
	r->dp_prev = dp_post_tail;
	if (dp_post_tail != NULL)
		dp_post_tail->dp_next = r;
	else
		dp_post_head = r;
	dp_post_tail = r;
	r->dp_posted = true;
}

/* Back in post order (a message half read from a lost link). */
static void
dp_post_insert(struct mpiv_request *r)
{
	struct mpiv_request *at = dp_post_tail;

	while (at != NULL && at->post_no > r->post_no)
		at = at->dp_prev;
	r->dp_prev = at;
	r->dp_next = at != NULL ? at->dp_next : dp_post_head;
	if (r->dp_next != NULL)
		r->dp_next->dp_prev = r;
	else
		dp_post_tail = r;
	if (at != NULL)
		at->dp_next = r;
	else
		dp_post_head = r;
	r->dp_posted = true;
}

static void
dp_unpost(struct mpiv_request *r)
{
	if (!r->dp_posted)
		return;
	if (r->dp_prev != NULL)
		r->dp_prev->dp_next = r->dp_next;
	else
		dp_post_head = r->dp_next;
	if (r->dp_next != NULL)
		r->dp_next->dp_prev = r->dp_prev;
	else
		dp_post_tail = r->dp_prev;
	r->dp_prev = r->dp_next = NULL;
	r->dp_posted = false;
	if (r->dp_hold) {
		r->dp_hold = false;
		dp_nheld--;
	}
}

/* The receive message m goes to: the first posted that matches, none
   when that one is held (m must wait for it). */
static struct mpiv_request *
dp_match_posted(const struct dp_msg *m)
{
	for (struct mpiv_request *r = dp_post_head; r != NULL; r = r->dp_next)
		if (dp_matches(r, m))
			return r->dp_hold ? NULL : r;
	return NULL;
}

static void
dp_mlist_append(struct dp_mlist *l, struct dp_msg *m)
{
	m->next = NULL;
	m->prev = l->tail;
	if (l->tail != NULL)
		l->tail->next = m;
	else
		l->head = m;
	l->tail = m;
}

static void
dp_mlist_remove(struct dp_mlist *l, struct dp_msg *m)
{
	if (m->prev != NULL)
		m->prev->next = m->next;
	else
		l->head = m->next;
	if (m->next != NULL)
		m->next->prev = m->prev;
	else
		l->tail = m->prev;
	m->prev = m->next = NULL;
}

/* A held receive posted before r that m would go to. */
static bool
dp_held_before(const struct mpiv_request *r, const struct dp_msg *m)
{
	for (struct mpiv_request *h = dp_post_head; h != NULL && h != r;
	    h = h->dp_next)
		if (h->dp_hold && dp_matches(h, m))
			return true;
	return false;
}

/* The unexpected message a new receive r takes (r not posted yet). */
static struct dp_msg *
dp_match_unexpected(const struct mpiv_request *r)
{
	for (struct dp_msg *m = dp_unx.head; m != NULL; m = m->next)
		if (dp_matches(r, m) && (dp_nheld == 0 ||
		    !dp_held_before(NULL, m)))
			return m;
	return NULL;
}

static struct dp_msg *
dp_unx_find(int src, uint64_t seq)
{
	for (struct dp_msg *m = dp_unx.head; m != NULL; m = m->next)
		if (m->src == src && m->seq == seq)
			return m;
	return NULL;
}

static void
dp_msg_free(struct dp_msg *m)
{
	if (m->kept)
		dp_unx_bytes -= m->len;
	free(m->buf);
	free(m);
}

static struct dp_msg *
dp_pull_find(int src, uint64_t seq)
{
	for (struct dp_msg *m = dp_pulls.head; m != NULL; m = m->next)
		if (m->src == src && m->seq == seq)
			return m;
	return NULL;
}

/* Asks m's sender for its payload (on the link up; a new link asks
   again). */
static void
dp_pull_ask(const struct dp_msg *m)
{
	Mpiv__DPull pl = MPIV__DPULL__INIT;

	pl.seq = m->seq;
	dp_debug("rank %d: pulls message %llu of rank %d (%zu bytes)%s",
	    dp_rank, (unsigned long long)m->seq, m->src, m->len,
	    dp_peers[m->src].up != NULL ? "" : " once a link is up");
	(void)dp_send_up(m->src, MPIV__MSG_TYPE__MSG_DPULL, &pl.base, NULL, 0,
	    NULL, NULL);
}

/* ---------------- digests of messages ---------------- */

/*
 * The digest a message is checked by: context, tag, size and payload,
 * whole up to DP_DIGEST_FULL, else both ends and slices between (a
 * re-execution that computed something else changes far more than that
 * misses; the relay's CMs hash every byte).
 */
static uint64_t
dp_digest(uint32_t context, int32_t tag, const void *buf, size_t n)
{
	const uint8_t *b = buf;
	size_t mid, stride;
	uint64_t d;

	if (n <= DP_DIGEST_FULL)
		return mpiv_digest_send(context, tag, buf, n);
	d = mpiv_digest(mpiv_digest_send(context, tag, NULL, 0) ^ (uint64_t)n,
	    b, DP_DIGEST_END);
	d = mpiv_digest(d, b + n - DP_DIGEST_END, DP_DIGEST_END);
	mid = n - 2 * DP_DIGEST_END;
	stride = mid / (DP_DIGEST_SLICES + 1);
	for (size_t i = 1; i <= DP_DIGEST_SLICES && stride > 0; i++) {
		size_t off = DP_DIGEST_END + i * stride, len = 256;

		if (off + len > n - DP_DIGEST_END)
			len = n - DP_DIGEST_END - off;
		d = mpiv_digest(d, b + off, len);
	}
	return d;
}

/* The header of message seq (context, tag, flags, digest of its bytes:
   none in a job without logging, which never runs anything again). */
static void
dp_dsend_set(Mpiv__DSend *d, uint64_t seq, uint32_t context, int32_t tag,
    bool sync, const void *buf, size_t len)
{
	d->seq = seq;
	d->context = context;
	d->tag = tag;
	d->sync = sync;
	d->digest = dp_logging ? dp_digest(context, tag, buf, len) : 0;
}

/* Keeps the digest of message seq from p (accepted in seq order). */
static void
dp_digest_keep(int p, uint64_t seq, uint64_t digest)
{
	struct dp_digests *g = &dp_dgs[p];

	if (g->n == 0 || seq < g->base) {
		g->base = seq;
		g->n = 0;
	} else if (seq < g->base + g->n) {
		g->n = seq - g->base;	/* taken again after a lost link */
	} else if (seq > g->base + g->n) {
		g->base = seq;		/* a gap (trimmed): start over */
		g->n = 0;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		uint64_t *v = realloc(g->v, cap * sizeof(*v));

		if (v == NULL)
			return;		/* that one goes unchecked */
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = digest;
}

/* Forgets the digests of p's messages up to seq upto. */
static void
dp_digest_trim(int p, uint64_t upto)
{
	struct dp_digests *g = &dp_dgs[p];
	size_t k;

	if (g->n == 0 || upto < g->base)
		return;
	k = upto - g->base + 1 < g->n ? (size_t)(upto - g->base + 1) : g->n;
	memmove(g->v, g->v + k, (g->n - k) * sizeof(*g->v));
	g->n -= k;
	g->base += k;
}

/* A message p sends again (a re-execution's, or a resend): the same as
   the first, or the job cannot go on. */
static void
dp_digest_check(int p, uint64_t seq, uint64_t digest)
{
	struct dp_digests *g = &dp_dgs[p];

	if (g->n == 0 || seq < g->base || seq >= g->base + g->n ||
	    g->v[seq - g->base] == digest)
		return;
	mpiv_tp_set_error("replay diverged: rank %d, running again, sent "
	    "rank %d a message %llu unlike the one its first run sent (the "
	    "program depends on something outside MPI that changed)", p,
	    dp_rank, (unsigned long long)seq);
}

/* ---------------- synchronous sends ---------------- */

static void
dp_send_sync_ack(int p, uint64_t seq)
{
	Mpiv__DSyncAck a = MPIV__DSYNC_ACK__INIT;

	a.seq = seq;
	(void)dp_send_up(p, MPIV__MSG_TYPE__MSG_DSYNC_ACK, &a.base, NULL, 0,
	    NULL, NULL);
}

struct dp_find_send {
	int peer;
	uint64_t seq;
	struct mpiv_request *r;
};

static void
dp_find_send_cb(struct mpiv_request *r, void *arg)
{
	struct dp_find_send *f = arg;

	if (f->r == NULL && r->active && r->kind == MPIV_REQ_SEND &&
	    r->need_ack && !r->acked && r->dp_dst == f->peer &&
	    r->dp_seq == f->seq)
		f->r = r;
}

static void
dp_sync_acked(struct mpiv_request *r)
{
	if (r == NULL || r->acked)
		return;
	r->acked = true;
	mpiv_p2p_pending_acks--;
	if (r->written)
		mpiv_req_complete(r);
}

static void
dp_got_sync_ack(int p, uint64_t seq)
{
	struct dp_find_send f = { .peer = p, .seq = seq, .r = NULL };

	mpiv_req_foreach(dp_find_send_cb, &f);
	dp_sync_acked(f.r);
}

/* Held DSyncAcks whose match is now acknowledged go out. */
static void
dp_acks_flush(void)
{
	size_t k = 0;

	for (size_t i = 0; i < dp_nacks; i++) {
		if (mpiv_ndlog_stored(dp_acks[i].after))
			dp_send_sync_ack(dp_acks[i].peer, dp_acks[i].seq);
		else
			dp_acks[k++] = dp_acks[i];
	}
	dp_nacks = k;
}

/* ---------------- delivery ---------------- */

/* The status of r, which got m (got bytes kept), and what the match
   owes: its log record when r was a wildcard, the sender's SyncAck. */
static void
dp_complete_recv(struct mpiv_request *r, const struct dp_msg *m, size_t got)
{
	bool logged = false;

	if (r->tmp != NULL) {
		mpiv_dt_unpack(r->tmp, got, r->buf, r->count, r->dt);
		free(r->tmp);
		r->tmp = NULL;
	}
	r->status.MPI_SOURCE = mpiv_comm_from_world(r->comm, m->src);
	r->status.MPI_TAG = m->tag;
	r->status.mpiv_count = got;
	if (r->status.MPI_ERROR == MPI_SUCCESS && m->len > r->cap)
		r->status.MPI_ERROR = MPI_ERR_TRUNCATE;
	if (r->dp_wild && r->dp_seq == 0 && m->src != dp_rank &&
	    mpiv_ndlog_enabled()) {
		if (mpiv_ndlog_record_bind(r->post_no, m->src, m->seq) !=
		    MPI_SUCCESS)
			mpiv_tp_set_error("rank %d: cannot log a match (out of "
			    "memory)", dp_rank);
		logged = true;
	}
	if (m->self_req != NULL) {
		dp_sync_acked(m->self_req);
	} else if (m->sync) {
		if (!logged) {
			dp_send_sync_ack(m->src, m->seq);
		} else if (dp_nacks < dp_capacks || (dp_acks = realloc(dp_acks,
		    (dp_capacks = dp_capacks ? 2 * dp_capacks : 8) *
		    sizeof(*dp_acks))) != NULL) {
			dp_acks[dp_nacks].peer = m->src;
			dp_acks[dp_nacks].seq = m->seq;
			/* the match's record: the last number given */
			dp_acks[dp_nacks++].after = mpiv_ndlog_done();
		}
	}
	mpiv_req_complete(r);
}

/* r takes the unexpected message m (already unlinked): copied out, or
   pulled from its sender when only its envelope was kept. */
static void
dp_deliver_copy(struct mpiv_request *r, struct dp_msg *m)
{
	size_t keep = m->len < r->cap ? m->len : r->cap;

	if (m->pull) {
		m->req = r;
		dp_mlist_append(&dp_pulls, m);
		dp_pull_ask(m);
		return;
	}
	if (keep > 0) {
		if (mpiv_dt_is_contig(r->dt))
			memcpy((uint8_t *)r->buf + r->dt->true_lb, m->buf,
			    keep);
		else
			mpiv_dt_unpack(m->buf, keep, r->buf, r->count, r->dt);
	}
	dp_complete_recv(r, m, keep);
	dp_msg_free(m);
}

/* A message complete in memory: to its receive, or unexpected. */
static void
dp_arrive(struct dp_msg *m)
{
	struct mpiv_request *r = dp_match_posted(m);

	if (r == NULL) {
		dp_mlist_append(&dp_unx, m);
		return;
	}
	dp_unpost(r);
	dp_deliver_copy(r, m);
}

/* Held receives go free once the replayed calls are used up; messages
   waiting for them go where they match now. */
static void dp_sweep(void);

static void
dp_release_holds(void)
{
	for (struct mpiv_request *r = dp_post_head; r != NULL; r = r->dp_next)
		r->dp_hold = false;
	dp_nheld = 0;
	dp_sweep();
}

/*
 * Whether receives held for the replay can go free now. The progress
 * loop asks before it sleeps: once the last replayed call is over, the
 * messages those receives wait for may all be here already, and no
 * further input would come to wake a tick (a rank hung so, its held
 * receive beside four unexpected messages it matched).
 */
bool
dpx_due(void)
{
	return dp_nheld > 0 && !mpiv_ndlog_replaying();
}

void
dpx_tick(void)
{
	if (dp_nheld > 0 && !mpiv_ndlog_replaying())
		dp_release_holds();
	if (dp_nacks > 0)
		dp_acks_flush();
}

/* ---------------- frames from peers ---------------- */

/* The len bytes of the frame c is reading go into receive r: its buffer,
   or a buffer to unpack from (a derived type); what is beyond r's room
   is read past. */
static void
dp_read_into(struct tp_conn *c, struct mpiv_request *r, size_t len)
{
	c->preq = r;
	c->pkeep = len < r->cap ? len : r->cap;
	if (c->pkeep == 0)
		return;
	if (mpiv_dt_is_contig(r->dt)) {
		c->pdst = (uint8_t *)r->buf + r->dt->true_lb;
	} else if ((r->tmp = malloc(c->pkeep)) != NULL) {
		c->pdst = r->tmp;
	} else {
		r->status.MPI_ERROR = MPI_ERR_NO_MEM;
		c->pkeep = 0;
	}
}

/* A receive whose frame was half read when its link went: as before. */
static void
dp_read_undo(struct mpiv_request *r)
{
	free(r->tmp);
	r->tmp = NULL;
	r->status.MPI_ERROR = MPI_SUCCESS;
}

/* A DData from c's peer: into the receive its pull is for. */
static void
dp_data_begin(struct tp_conn *c)
{
	const Mpiv__DData *dd = (const Mpiv__DData *)c->meta;
	struct dp_msg *m;
	int p = c->peer;

	if ((m = dp_pull_find(p, dd->seq)) == NULL || dp_pulling[p] != NULL)
		return;		/* not asked (any more): read past */
	if (c->h.payload_len != m->len) {
		dp_link_lost(c, "protocol", "pulled data of another size");
		return;
	}
	dp_pulling[p] = m;
	dp_read_into(c, m->req, m->len);
}

/* A receiver asks p's message seq again: from the log, or once this
   run (a re-execution) has sent it again. */
struct dp_pull_req {
	int p;
	uint64_t seq;
};

static int
dp_pull_cb(void *arg, uint64_t seq, uint32_t context, int32_t tag,
    uint32_t flags, const void *buf, size_t len)
{
	Mpiv__DData dd = MPIV__DDATA__INIT;
	const struct dp_pull_req *pr = arg;
	void *copy = NULL;

	(void)context;
	(void)tag;
	(void)flags;
	if (seq != pr->seq)
		return 2;	/* not held (trimmed) */
	if (len > 0) {
		if ((copy = malloc(len)) == NULL)
			return -1;
		memcpy(copy, buf, len);
	}
	dd.seq = seq;
	(void)dp_send_up(pr->p, MPIV__MSG_TYPE__MSG_DDATA, &dd.base, copy,
	    len, copy, NULL);
	return 1;	/* that one only */
}

static void
dp_serve_pull(int p, uint64_t seq)
{
	struct dp_pull_req pr = { .p = p, .seq = seq };

	if (seq > sblog_last_seq(&dp_sb, p)) {
		/* not sent again yet by this run: when it is */
		if (dp_nwanted == dp_capwanted) {
			size_t cap = dp_capwanted ? 2 * dp_capwanted : 8;
			struct dp_wanted *v = realloc(dp_wanted,
			    cap * sizeof(*v));

			if (v == NULL) {
				mpiv_tp_set_error("rank %d: out of memory for "
				    "a pull of rank %d", dp_rank, p);
				return;
			}
			dp_wanted = v;
			dp_capwanted = cap;
		}
		dp_wanted[dp_nwanted].peer = p;
		dp_wanted[dp_nwanted++].seq = seq;
		return;
	}
	if (seq < sblog_first_seq(&dp_sb, p) ||
	    sblog_replay(&dp_sb, p, seq - 1, dp_pull_cb, &pr) != 1)
		mpiv_tp_set_error("rank %d: rank %d pulled message %llu, "
		    "which the log of sent messages does not hold", dp_rank,
		    p, (unsigned long long)seq);
}

/* Pulls that waited for this run to send dst's seq again. */
static void
dp_serve_wanted(int dst, uint64_t seq)
{
	for (size_t i = 0; i < dp_nwanted; i++)
		if (dp_wanted[i].peer == dst && dp_wanted[i].seq == seq) {
			dp_wanted[i] = dp_wanted[--dp_nwanted];
			dp_serve_pull(dst, seq);
			return;
		}
}

void
dpx_frame_begin(struct tp_conn *c)
{
	const Mpiv__DSend *d = (const Mpiv__DSend *)c->meta;
	int p = c->peer;
	struct dp_peer *pp = &dp_peers[p];
	struct mpiv_request *r;
	struct dp_msg *m;

	if (c->h.type == MPIV__MSG_TYPE__MSG_DDATA) {
		dp_data_begin(c);
		return;
	}
	if (c->h.type != MPIV__MSG_TYPE__MSG_DSEND) {
		if (c->h.payload_len > 0)
			dp_link_lost(c, "protocol", "payload on a control frame");
		return;
	}
	mpiv_fault_point("deliver");
	if (d->check && c->h.payload_len > 0) {
		dp_link_lost(c, "protocol", "a check with a payload");
		return;
	}
	if (d->seq <= pp->recv_last || d->check) {
		/* Sent again (a new link, a re-execution): compared, then
		   dropped; a synchronous one already matched is acknowledged
		   again. */
		if (d->seq <= pp->recv_last)
			dp_digest_check(p, d->seq, d->digest);
		if (d->sync && !d->check && d->seq <= pp->recv_last &&
		    dp_unx_find(p, d->seq) == NULL &&
		    dp_pull_find(p, d->seq) == NULL)
			dp_send_sync_ack(p, d->seq);
		return;
	}
	if (d->seq != pp->recv_last + 1) {
		dp_link_lost(c, "protocol", "a message out of sequence");
		return;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		dp_link_lost(c, "input", "out of memory");
		return;
	}
	pp->recv_last = d->seq;
	if (dp_logging)
		dp_digest_keep(p, d->seq, d->digest);
	m->src = p;
	m->seq = d->seq;
	m->context = d->context;
	m->tag = d->tag;
	m->sync = d->sync;
	m->len = c->h.payload_len;
	dp_inflight[p] = m;
	if ((r = dp_match_posted(m)) != NULL) {
		dp_unpost(r);
		m->req = r;
		dp_read_into(c, r, m->len);
		return;
	}
	if (dp_logging && m->len >= DP_PULL_MIN &&
	    dp_unx_bytes + m->len > dp_unx_max) {
		/* Its sender's log has it: read past, pulled when taken. */
		m->pull = true;
		c->pkeep = 0;
		return;
	}
	if (m->len > 0 && (m->buf = malloc(m->len)) == NULL) {
		dp_link_lost(c, "input", "out of memory");
		return;
	}
	m->kept = true;
	dp_unx_bytes += m->len;
	c->pdst = m->buf;
	c->pkeep = m->len;
}

void
dpx_frame_done(struct tp_conn *c)
{
	int p = c->peer;
	struct dp_msg *m;

	switch (c->h.type) {
	case MPIV__MSG_TYPE__MSG_DSEND:
		if ((m = dp_inflight[p]) == NULL)
			return;		/* a duplicate */
		dp_inflight[p] = NULL;
		if (m->req != NULL) {
			dp_complete_recv(m->req, m, c->pgot);
			dp_msg_free(m);
		} else {
			dp_arrive(m);	/* a receive may have come meanwhile */
		}
		return;
	case MPIV__MSG_TYPE__MSG_DSYNC_ACK:
		dp_got_sync_ack(p, ((const Mpiv__DSyncAck *)c->meta)->seq);
		return;
	case MPIV__MSG_TYPE__MSG_DDATA:
		if ((m = dp_pulling[p]) == NULL)
			return;		/* read past */
		dp_pulling[p] = NULL;
		dp_mlist_remove(&dp_pulls, m);
		dp_complete_recv(m->req, m, c->pgot);
		dp_msg_free(m);
		return;
	case MPIV__MSG_TYPE__MSG_DPULL:
		if (((const Mpiv__DPull *)c->meta)->seq == 0) {
			dp_link_lost(c, "protocol", "a pull of message 0");
			return;
		}
		dp_serve_pull(p, ((const Mpiv__DPull *)c->meta)->seq);
		return;
	case MPIV__MSG_TYPE__MSG_DBYE:
		dp_peers[p].bye = true;
		return;
	case MPIV__MSG_TYPE__MSG_DCKPT_ASK:
		mpiv_ckpt_ask();
		return;
	case MPIV__MSG_TYPE__MSG_DTRIM:
		/* p's durable checkpoint holds our messages up to upto, and
		   it never sends again those up to sent. */
		sblog_trim(&dp_sb, p, ((const Mpiv__DTrim *)c->meta)->upto);
		dp_digest_trim(p, ((const Mpiv__DTrim *)c->meta)->sent);
		return;
	case MPIV__MSG_TYPE__MSG_ERROR: {
		const Mpiv__Error *e = (const Mpiv__Error *)c->meta;

		dp_link_lost(c, "error from the peer", e->text && *e->text ?
		    e->text : "(no text)");
		return;
	}
	default:
		dp_link_lost(c, "protocol", frame_type_name(c->h.type));
		return;
	}
}

uint64_t
dpx_held(int p)
{
	if (dp_inflight != NULL && dp_inflight[p] != NULL)
		return dp_inflight[p]->seq - 1;
	return dp_peers[p].recv_last;
}

uint64_t
dpx_logged(int p)
{
	return sblog_last_seq(&dp_sb, p);
}

void
dpx_dump_queues(void (*line)(const char *, ...))
{
	for (struct dp_msg *m = dp_unx.head; m != NULL; m = m->next)
		line("mpiv-dump: rank %d: unexpected from %d seq %llu tag %d "
		    "len %zu pull %d", dp_rank, m->src,
		    (unsigned long long)m->seq, m->tag, m->len, m->pull);
	for (struct dp_msg *m = dp_pulls.head; m != NULL; m = m->next)
		line("mpiv-dump: rank %d: pulling from %d seq %llu", dp_rank,
		    m->src, (unsigned long long)m->seq);
}

void
dpx_link_down(int p, struct tp_conn *c)
{
	struct dp_msg *m = dp_inflight != NULL ? dp_inflight[p] : NULL;

	(void)c;
	if (dp_pulling != NULL && dp_pulling[p] != NULL) {
		/* Half read: pulled again on the next link. */
		dp_read_undo(dp_pulling[p]->req);
		dp_pulling[p] = NULL;
	}
	for (size_t i = 0; i < dp_nwanted; i++)
		if (dp_wanted[i].peer == p)	/* asked again on the next */
			dp_wanted[i--] = dp_wanted[--dp_nwanted];
	if (!dp_logging && !dp_finalizing && !dp_peers[p].bye)
		/* What was on it is nowhere else: no loss goes unsaid. */
		mpiv_tp_set_error("rank %d: the link to rank %d was lost, and "
		    "this job keeps no log of sent messages (mpiv run "
		    "--relay-only): messages on it may be lost", dp_rank, p);
	if (m == NULL)
		return;
	/* Half read: forgotten; the next link brings it again. */
	dp_inflight[p] = NULL;
	dp_peers[p].recv_last = m->seq - 1;
	if (m->req != NULL) {
		dp_read_undo(m->req);
		dp_post_insert(m->req);
	}
	dp_msg_free(m);
}

/* ---------------- resending ---------------- */

struct dp_resend {
	int p;
	int rc;
	bool one;		/* only the first entry */
};

static int
dp_resend_cb(void *arg, uint64_t seq, uint32_t context, int32_t tag,
    uint32_t flags, const void *buf, size_t len)
{
	struct dp_resend *rs = arg;
	Mpiv__DSend d = MPIV__DSEND__INIT;
	void *copy = NULL;

	dp_dsend_set(&d, seq, context, tag, (flags & DP_SYNC) != 0, buf, len);
	if (seq > dp_checked[rs->p])
		dp_checked[rs->p] = seq;
	if (!rs->one && seq <= dp_peers[rs->p].peer_has) {
		/* It holds this one: only checked against its first run. */
		d.check = true;
		d.sync = false;
		rs->rc = dp_send_up(rs->p, MPIV__MSG_TYPE__MSG_DSEND, &d.base,
		    NULL, 0, NULL, NULL);
		return rs->rc != MPI_SUCCESS;
	}
	if (len > 0) {
		if ((copy = malloc(len)) == NULL) {
			rs->rc = MPI_ERR_NO_MEM;
			return 1;
		}
		memcpy(copy, buf, len);
	}
	rs->rc = dp_send_up(rs->p, MPIV__MSG_TYPE__MSG_DSEND, &d.base, copy,
	    len, copy, NULL);
	if (!rs->one && seq > dp_peers[rs->p].wire_last)
		dp_peers[rs->p].wire_last = seq;
	return rs->rc != MPI_SUCCESS || rs->one;
}

/*
 * A synchronous send whose seq a trim covered: dst's durable checkpoint
 * holds the message, so its bytes are kept nowhere; a frame without
 * them (the digest of the bytes, for the check) asks dst to acknowledge
 * it, at once if it matched it already, else when it does.
 */
static int
dp_send_covered(int dst, uint64_t seq, uint64_t digest)
{
	Mpiv__DSend d = MPIV__DSEND__INIT;

	d.seq = seq;
	d.sync = true;
	d.digest = digest;
	return dp_send_up(dst, MPIV__MSG_TYPE__MSG_DSEND, &d.base, NULL, 0,
	    NULL, NULL);
}

struct dp_sync_item {
	uint64_t seq, digest;
};

struct dp_sync_scan {
	int p;
	uint64_t upto;
	struct dp_sync_item *v;
	size_t n, cap;
};

static void
dp_sync_scan_cb(struct mpiv_request *r, void *arg)
{
	struct dp_sync_scan *s = arg;

	if (!r->active || r->kind != MPIV_REQ_SEND || !r->need_ack ||
	    r->acked || r->dp_dst != s->p || r->dp_seq > s->upto)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct dp_sync_item *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			return;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].seq = r->dp_seq;
	s->v[s->n++].digest = r->dp_digest;
}

void
dpx_link_up(int p)
{
	struct dp_peer *pp = &dp_peers[p];
	struct dp_resend rs = { .p = p, .rc = MPI_SUCCESS, .one = false };
	struct dp_sync_scan sc = { .p = p, .upto = pp->peer_has };
	Mpiv__DBye bye = MPIV__DBYE__INIT;

	/* What it lacks of ours, in seq order, after a check of what it
	   holds but was never shown by this run (a re-execution's). */
	pp->wire_last = pp->peer_has;
	if (sblog_replay(&dp_sb, p, dp_checked[p] < pp->peer_has ?
	    dp_checked[p] : pp->peer_has, dp_resend_cb, &rs) < 0 &&
	    errno != 0 && rs.rc == MPI_SUCCESS)
		mpiv_tp_set_error("rank %d: cannot read the send log for rank "
		    "%d: %s", dp_rank, p, strerror(errno));
	if (pp->wire_last < sblog_last_seq(&dp_sb, p))
		pp->wire_last = sblog_last_seq(&dp_sb, p);
	if (!dp_logging)
		sblog_trim(&dp_sb, p, pp->wire_last);	/* all on the link */
	/* Synchronous sends it holds but whose SyncAck we lack (it went to
	   an earlier incarnation of ours): sent again to be acknowledged. */
	mpiv_req_foreach(dp_sync_scan_cb, &sc);
	for (size_t i = 0; i < sc.n; i++) {
		rs.one = true;
		if (sc.v[i].seq <= sblog_trimmed(&dp_sb, p))
			(void)dp_send_covered(p, sc.v[i].seq, sc.v[i].digest);
		else
			(void)sblog_replay(&dp_sb, p, sc.v[i].seq - 1,
			    dp_resend_cb, &rs);
	}
	free(sc.v);
	if (dp_trim_sent != NULL && dp_trim_ckpt > 0) {
		Mpiv__DTrim t = MPIV__DTRIM__INIT;

		t.upto = dp_trim_sent[p];
		t.sent = dp_trim_mine[p];
		t.ckpt_no = dp_trim_ckpt;
		(void)dp_send_up(p, MPIV__MSG_TYPE__MSG_DTRIM, &t.base, NULL,
		    0, NULL, NULL);
	}
	if (dp_finalizing) {
		bye.incarnation = dp_inc;
		(void)dp_send_up(p, MPIV__MSG_TYPE__MSG_DBYE, &bye.base, NULL,
		    0, NULL, NULL);
	}
	for (struct dp_msg *m = dp_pulls.head; m != NULL; m = m->next)
		if (m->src == p)
			dp_pull_ask(m);
}

/* ---------------- the protocol ---------------- */

/* The spill file, made the first time the log outgrows memory. */
static int
dp_spill_open_lazy(void)
{
	return dp_spill_fd = dp_spill_open();
}

static int
direct_init(int world_size)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	const char *env;
	int rc;

	dp_logging = mpiv_ndlog_enabled();

	if (sblog_conf_from_env(&conf) < 0) {
		mpiv_err_detail("MPIV_SENDLOG_MEM or MPIV_SENDLOG_MAX is not a "
		    "byte count, or MPIV_SENDLOG_HUGE not auto, on or off");
		return MPI_ERR_ARG;
	}
	/* past MPIV_SENDLOG_MEM the log spills to a file (dp_spill.c),
	   made when first needed */
	conf.spill_open = dp_logging ? dp_spill_open_lazy : NULL;
	if (sblog_init(&dp_sb, world_size, &conf) < 0)
		return MPI_ERR_NO_MEM;
	dp_sb_ready = true;
	dp_log_wait_ms = DP_LOG_WAIT_MS;
	if ((env = getenv("MPIV_SENDLOG_WAIT")) != NULL && *env != '\0') {
		char *end;
		double w;

		errno = 0;
		w = strtod(env, &end);
		if (errno != 0 || end == env || *end != '\0' || !(w > 0) ||
		    w > DP_LOG_WAIT_MAX) {
			mpiv_err_detail("MPIV_SENDLOG_WAIT is not a number of "
			    "seconds above 0 and at most %.0f: '%s'",
			    DP_LOG_WAIT_MAX, env);
			return MPI_ERR_ARG;
		}
		dp_log_wait_ms = (long)(w * 1000.0);
		if (dp_log_wait_ms < 1)
			dp_log_wait_ms = 1;
	}
	if ((env = getenv("MPIV_UNEXPECTED_MAX")) != NULL && *env != '\0' &&
	    sblog_parse_size(env, &dp_unx_max) < 0) {
		mpiv_err_detail("MPIV_UNEXPECTED_MAX is not a byte count");
		return MPI_ERR_ARG;
	}
	dp_pulling = calloc((size_t)world_size, sizeof(*dp_pulling));
	if (dp_pulling == NULL)
		return MPI_ERR_NO_MEM;
	dp_inflight = calloc((size_t)world_size, sizeof(*dp_inflight));
	dp_dgs = calloc((size_t)world_size, sizeof(*dp_dgs));
	dp_checked = calloc((size_t)world_size, sizeof(*dp_checked));
	if (dp_inflight == NULL || dp_dgs == NULL || dp_checked == NULL)
		return MPI_ERR_NO_MEM;
	dp_post_no = 0;
	dp_post_head = dp_post_tail = NULL;
	dp_nheld = 0;
	dp_unx.head = dp_unx.tail = NULL;
	dp_finalizing = false;
	if ((rc = dp_links_start(world_size, tp_rank, tp_incarnation)) !=
	    MPI_SUCCESS)
		return rc;
	return MPI_SUCCESS;
}

static void
direct_fini(void)
{
	struct dp_msg *m, *next;

	dp_links_close();
	for (m = dp_unx.head; m != NULL; m = next) {
		next = m->next;
		dp_msg_free(m);
	}
	dp_unx.head = dp_unx.tail = NULL;
	for (m = dp_pulls.head; m != NULL; m = next) {
		next = m->next;
		dp_msg_free(m);
	}
	dp_pulls.head = dp_pulls.tail = NULL;
	free(dp_pulling);
	dp_pulling = NULL;
	free(dp_wanted);
	dp_wanted = NULL;
	dp_nwanted = dp_capwanted = 0;
	dp_unx_bytes = 0;
	if (dp_inflight != NULL)
		for (int p = 0; p < dp_world; p++)
			if (dp_inflight[p] != NULL)
				dp_msg_free(dp_inflight[p]);
	free(dp_inflight);
	dp_inflight = NULL;
	if (dp_dgs != NULL)
		for (int p = 0; p < dp_world; p++)
			free(dp_dgs[p].v);
	free(dp_dgs);
	dp_dgs = NULL;
	free(dp_checked);
	dp_checked = NULL;
	free(dp_acks);
	dp_acks = NULL;
	dp_nacks = dp_capacks = 0;
	for (int i = 0; i < DP_SNAPS; i++) {
		free(dp_snaps[i].recv);
		free(dp_snaps[i].sent);
		dp_snaps[i].recv = dp_snaps[i].sent = NULL;
		dp_snaps[i].k = 0;
	}
	free(dp_trim_sent);
	free(dp_trim_mine);
	dp_trim_sent = dp_trim_mine = NULL;
	dp_trim_ckpt = 0;
	if (dp_sb_ready)
		sblog_fini(&dp_sb);
	dp_sb_ready = false;
	if (dp_spill_fd >= 0)
		close(dp_spill_fd);
	dp_spill_fd = -1;
}

/* A send to ourself: delivered here, never logged (a re-execution makes
   it again). */
static int
direct_send_self(struct mpiv_request *r, const void *payload, size_t bytes,
    void *owned)
{
	struct dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		free(owned);
		return MPI_ERR_NO_MEM;
	}
	m->src = dp_rank;
	m->seq = ++dp_peers[dp_rank].recv_last;
	m->context = r->context;
	m->tag = r->tag;
	m->len = bytes;
	if (owned != NULL) {
		m->buf = owned;
	} else if (bytes > 0) {
		if ((m->buf = malloc(bytes)) == NULL) {
			free(m);
			return MPI_ERR_NO_MEM;
		}
		memcpy(m->buf, payload, bytes);
	}
	r->dp_dst = dp_rank;
	r->dp_seq = m->seq;
	if (r->mode == MPIV_SEND_SYNC) {
		r->need_ack = true;
		mpiv_p2p_pending_acks++;
		m->self_req = r;
	}
	r->written = true;
	dp_arrive(m);
	if (!r->need_ack || r->acked)
		mpiv_req_complete(r);
	return MPI_SUCCESS;
}

/*
 * sblog_append (nothing kept for a seq a trim covered already: sblog_skip),
 * and when the log is full: every receiver it holds
 * messages for is asked for a checkpoint (DCkptAsk, again each second),
 * whose durability frees them (DTrim); the send waits for that, taking
 * its own checkpoints meanwhile (its receivers may be stuck the same
 * way), and gives up after MPIV_SENDLOG_WAIT without a trim. 0 with errno
 * as sblog_append's.
 */
static uint64_t
dp_log_append(int dst, uint32_t context, int32_t tag, uint32_t flags,
    const void *payload, size_t bytes)
{
	long deadline = 0, ask = 0;
	uint64_t seq, trimmed = 0;

	/* A re-execution's message that dst's durable checkpoint holds
	   (a DTrim covered its seq): no run of dst needs it again, so it
	   takes no room. A synchronous one is acknowledged again from a
	   frame without its bytes (dp_send_covered). */
	if ((seq = sblog_skip(&dp_sb, dst)) != 0)
		return seq;
	while ((seq = sblog_append(&dp_sb, dst, context, tag, flags, payload,
	    bytes)) == 0 && errno == ENOSPC) {
		struct sblog_stats st;
		long now = mono_us();

		sblog_stats(&dp_sb, &st);
		if (deadline == 0 || st.trimmed > trimmed) {
			/* waiting starts, or a trim came: a while more */
			deadline = now + dp_log_wait_ms * 1000L;
			trimmed = st.trimmed;
		} else if (now > deadline) {
			errno = ENOSPC;
			return 0;
		}
		if (now >= ask) {
			Mpiv__DCkptAsk a = MPIV__DCKPT_ASK__INIT;

			a.log_bytes = st.total_bytes;
			for (int p = 0; p < dp_world; p++)
				if (p != dp_rank && sblog_first_seq(&dp_sb, p) <=
				    sblog_last_seq(&dp_sb, p))
					(void)dp_send_up(p,
					    MPIV__MSG_TYPE__MSG_DCKPT_ASK,
					    &a.base, NULL, 0, NULL, NULL);
			ask = now + 1000 * 1000L;
		}
		/* A safe point: nothing of this send is done yet, and our
		   receivers may be waiting the same way for our checkpoint. */
		mpiv_ckpt_point();
		if (mpiv_tp_progress(100) != MPI_SUCCESS) {
			errno = EIO;
			return 0;
		}
	}
	return seq;
}

/* The log takes bytes more without waiting for a trim. */
static bool
dp_log_fits(size_t bytes)
{
	struct sblog_stats st;

	sblog_stats(&dp_sb, &st);
	return st.total_bytes + bytes + SBLOG_ENTRY_COST <= dp_sb.total_cap;
}

/*
 * Whether the caller's n bytes at src are readable memory, asked of the
 * kernel (one byte of each page read through process_vm_readv, as a
 * socket write would read them) rather than learnt from a crash. Asked
 * before any allocation: a buffer the program unmapped may come back
 * from malloc as ours.
 */
static bool
dp_readable(const void *src, size_t n)
{
	enum { BATCH = 64 };
	struct iovec local[BATCH], remote[BATCH];
	char scratch[BATCH];
	uintptr_t a = (uintptr_t)src, end = a + n, page;
	long ps = sysconf(_SC_PAGESIZE);
	ssize_t got;
	int k;

	page = ps > 0 ? (uintptr_t)ps : 4096;
	while (a < end) {
		for (k = 0; k < BATCH && a < end; k++) {
			local[k].iov_base = &scratch[k];
			local[k].iov_len = 1;
			remote[k].iov_base = (void *)a;
			remote[k].iov_len = 1;
			a = (a & ~(page - 1)) + page;
		}
		errno = 0;
		if ((got = process_vm_readv(getpid(), local, (unsigned long)k,
		    remote, (unsigned long)k, 0)) != k)	/* cannot tell: yes */
			return got < 0 && (errno == ENOSYS || errno == EPERM);
	}
	return true;
}

/* Send r is message seq to dst; a synchronous one waits for its ack. */
static void
dp_send_track(struct mpiv_request *r, int dst, uint64_t seq, bool sync)
{
	r->dp_dst = dst;
	r->dp_seq = seq;
	if (sync) {
		r->need_ack = true;
		mpiv_p2p_pending_acks++;
	}
}

static int
direct_send(struct mpiv_request *r)
{
	Mpiv__DSend d = MPIV__DSEND__INIT;
	size_t bytes = (size_t)r->count * r->dt->size;
	const void *payload = NULL;
	void *owned = NULL;
	struct dp_peer *pp;
	uint64_t seq;
	bool sync = r->mode == MPIV_SEND_SYNC;
	int dst, rc;

	dst = mpiv_comm_world_rank(r->comm, r->peer);
	if (dst < 0 || dst >= dp_world)
		return MPI_ERR_RANK;
	if ((rc = mpiv_p2p_payload(r, bytes, &payload, &owned)) !=
	    MPI_SUCCESS)
		return rc;
	(void)mpiv_req_new_id(r);
	if (dst == dp_rank)
		return direct_send_self(r, payload, bytes, owned);
	if (dp_logging && (uint64_t)bytes + SBLOG_ENTRY_COST >
	    dp_sb.total_cap) {
		/* no trim can ever make room for it: say so now */
		free(owned);
		mpiv_err_detail("a message of %zu bytes is larger than the "
		    "whole log of sent messages (MPIV_SENDLOG_MAX, %llu "
		    "bytes): raise MPIV_SENDLOG_MAX", bytes,
		    (unsigned long long)dp_sb.total_cap);
		return MPI_ERR_NO_MEM;
	}
	/* What this rank decided so far is stored before a message that
	   may depend on it leaves (nothing to wait for without outcomes). */
	if (!mpiv_ndlog_acked() &&
	    (rc = mpiv_ndlog_before_frame(-1)) != MPI_SUCCESS) {
		free(owned);
		return rc;
	}
	pp = &dp_peers[dst];
	seq = sblog_last_seq(&dp_sb, dst) + 1;
	if (owned == NULL && pp->up != NULL && pp->wire_last == seq - 1 &&
	    (dp_logging ? seq > pp->peer_has && dp_log_fits(bytes) :
	    sblog_first_seq(&dp_sb, dst) == seq)) {
		/* The usual case: the bytes go out first, straight from the
		   user's buffer, and the log's copy is made while they travel
		   (the buffer stays the caller's until this call returns).
		   Without logging nothing is kept (a buffer that is not
		   readable memory fails the write with EFAULT). */
		mpiv_fault_point("send");
		dp_send_track(r, dst, seq, sync);
		pp->wire_last = seq;
		dp_checked[dst] = seq;
		dp_dsend_set(&d, seq, r->context, r->tag, sync, payload, bytes);
		if (!dp_logging) {
			(void)sblog_set_next_seq(&dp_sb, dst, seq + 1);
			return dp_send_up(dst, MPIV__MSG_TYPE__MSG_DSEND,
			    &d.base, payload, bytes, NULL, r);
		}
		/* r may be complete (and released) when this returns */
		rc = dp_send_up(dst, MPIV__MSG_TYPE__MSG_DSEND, &d.base,
		    payload, bytes, NULL, r);
		if (sblog_append(&dp_sb, dst, d.context, d.tag, sync ? DP_SYNC :
		    0, payload, bytes) != seq) {
			mpiv_tp_set_error("rank %d: cannot log a message sent to "
			    "rank %d: %s", dp_rank, dst, strerror(errno));
			return MPI_ERR_NO_MEM;
		}
		if (dp_nwanted > 0)
			dp_serve_wanted(dst, seq);
		return rc;
	}
	if (!dp_logging && owned == NULL && bytes > 0 &&
	    !dp_readable(payload, bytes)) {
		/* kept until its link is up: copied, so read first */
		mpiv_err_detail("the send buffer is not readable memory (%zu "
		    "bytes at %p)", bytes, payload);
		return MPI_ERR_BUFFER;
	}
	seq = dp_log_append(dst, r->context, r->tag, sync ? DP_SYNC : 0,
	    payload, bytes);
	if (seq == 0) {
		int e = errno;

		free(owned);
		if (e == ENOSPC) {
			struct sblog_stats st;

			sblog_stats(&dp_sb, &st);
			mpiv_err_detail("the log of sent messages is full (%llu "
			    "bytes, MPIV_SENDLOG_MAX) and no receiver's "
			    "checkpoint freed any of it within %g s "
			    "(MPIV_SENDLOG_WAIT): checkpoints free it (they "
			    "need CRIU on the nodes), or raise "
			    "MPIV_SENDLOG_MAX", (unsigned long long)st.total_bytes,
			    (double)dp_log_wait_ms / 1000.0);
			return MPI_ERR_NO_MEM;
		}
		mpiv_err_detail("cannot log a send to rank %d: %s", dst,
		    strerror(e));
		return e == ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_INTERN;
	}
	mpiv_fault_point("send");
	if (dp_nwanted > 0)
		dp_serve_wanted(dst, seq);
	dp_send_track(r, dst, seq, sync);
	if (sync && dp_logging && seq <= sblog_trimmed(&dp_sb, dst)) {
		/* kept nowhere: dst holds it (dp_send_covered) */
		r->dp_digest = dp_digest(r->context, r->tag, payload, bytes);
		free(owned);
		if (pp->up != NULL && seq <= pp->peer_has) {
			if (seq > dp_checked[dst])
				dp_checked[dst] = seq;
			if ((rc = dp_send_covered(dst, seq, r->dp_digest)) !=
			    MPI_SUCCESS)
				return rc;
		}
		/* else the next link to dst asks for the acknowledgement */
		mpiv_p2p_send_written(r);
		return MPI_SUCCESS;
	}
	if (pp->up != NULL && seq <= pp->peer_has) {
		/* A re-execution's message the peer holds: it compares it
		   with the first run's; a synchronous one goes whole, to be
		   acknowledged again. */
		if (seq > dp_checked[dst])
			dp_checked[dst] = seq;
		dp_dsend_set(&d, seq, r->context, r->tag, sync, payload, bytes);
		if (sync)
			return dp_send_up(dst, MPIV__MSG_TYPE__MSG_DSEND,
			    &d.base, payload, bytes, owned, r);
		free(owned);
		d.check = true;
		if ((rc = dp_send_up(dst, MPIV__MSG_TYPE__MSG_DSEND, &d.base,
		    NULL, 0, NULL, NULL)) != MPI_SUCCESS)
			return rc;
		mpiv_p2p_send_written(r);
		return MPI_SUCCESS;
	}
	if (pp->up != NULL && pp->wire_last == seq - 1) {
		pp->wire_last = seq;
		dp_checked[dst] = seq;
		dp_dsend_set(&d, seq, r->context, r->tag, sync, payload, bytes);
		if (!dp_logging)
			sblog_trim(&dp_sb, dst, seq);	/* on its link now */
		return dp_send_up(dst, MPIV__MSG_TYPE__MSG_DSEND, &d.base,
		    payload, bytes, owned, r);
	}
	/* In the log only: the next link to dst resends it. */
	free(owned);
	mpiv_p2p_send_written(r);
	return MPI_SUCCESS;
}

static int
direct_recv(struct mpiv_request *r)
{
	struct dp_msg *m;
	int32_t src;
	uint64_t seq;

	r->cap = (size_t)r->count * r->dt->size;
	if (r->cap > 0 && mpiv_p2p_addr(r->buf, r->dt->true_lb) == NULL) {
		mpiv_err_detail("NULL buffer for %zu bytes", r->cap);
		return MPI_ERR_BUFFER;
	}
	(void)mpiv_req_new_id(r);
	r->post_no = ++dp_post_no;
	r->post_src = r->peer == MPI_ANY_SOURCE ? -1 :
	    mpiv_comm_world_rank(r->comm, r->peer);
	r->post_tag = r->tag == MPI_ANY_TAG ? -1 : r->tag;
	r->dp_wild = r->post_src < 0 || r->post_tag < 0;
	r->dp_seq = 0;
	r->dp_hold = false;
	r->dp_posted = false;
	if (r->dp_wild && mpiv_ndlog_enabled()) {
		if (mpiv_ndlog_bind_of(r->post_no, &src, &seq)) {
			r->post_src = src;	/* what the first run matched */
			r->dp_seq = seq;
		} else if (mpiv_ndlog_replaying()) {
			r->dp_hold = true;
		}
	}
	mpiv_fault_point("post");
	if (!r->dp_hold && (m = dp_match_unexpected(r)) != NULL) {
		dp_mlist_remove(&dp_unx, m);
		dp_deliver_copy(r, m);
		return MPI_SUCCESS;
	}
	dp_post_append(r);
	if (r->dp_hold)
		dp_nheld++;
	return MPI_SUCCESS;
}

/* The first unexpected message a probe of r's pattern sees. */
static struct dp_msg *
dp_probe_find(const struct mpiv_request *r)
{
	for (struct dp_msg *m = dp_unx.head; m != NULL; m = m->next)
		if (m->context == r->context &&
		    (r->post_src < 0 || r->post_src == m->src) &&
		    (r->post_tag < 0 || r->post_tag == m->tag))
			return m;
	return NULL;
}

static int
direct_probe(struct mpiv_request *r)
{
	uint32_t kind = r->post_blocking ? MPIV_ND_PROBE : MPIV_ND_IPROBE;
	const Mpiv__NdOutcome *o = NULL;
	struct dp_msg *m = NULL;
	int got = 0, rc;

	(void)mpiv_req_new_id(r);
	if (mpiv_ndlog_enabled() && (got = mpiv_ndlog_next(kind, &o)) < 0)
		return MPI_ERR_OTHER;
	if (got == 1) {
		/* The first run's answer: that message, or none. */
		if (!o->flag && r->post_blocking) {
			mpiv_tp_set_error("replay diverged: MPI_Probe logged "
			    "as finding nothing");
			return MPI_ERR_OTHER;
		}
		while (o->flag && (m = dp_unx_find(o->src, o->seq)) == NULL)
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
	} else {
		if ((rc = mpiv_tp_progress(0)) != MPI_SUCCESS)
			return rc;
		while ((m = dp_probe_find(r)) == NULL && r->post_blocking)
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
		if (mpiv_ndlog_enabled()) {
			rc = m == NULL ? mpiv_ndlog_record(kind, false, 0,
			    NULL) : mpiv_ndlog_record_msg(kind, true, 0,
			    m->src, m->seq);
			if (rc != MPI_SUCCESS)
				return rc;
		}
	}
	r->found = m != NULL;
	if (m != NULL) {
		r->status.MPI_SOURCE = mpiv_comm_from_world(r->comm, m->src);
		r->status.MPI_TAG = m->tag;
		r->status.mpiv_count = m->len;
	}
	mpiv_req_complete(r);
	return MPI_SUCCESS;
}

static int
direct_cancel(struct mpiv_request *r)
{
	const Mpiv__NdOutcome *o = NULL;
	bool cancel;
	int got = 0, rc;

	if (mpiv_ndlog_enabled() &&
	    (got = mpiv_ndlog_next(MPIV_ND_CANCEL, &o)) < 0)
		return MPI_ERR_OTHER;
	if (got == 1) {
		cancel = o->flag;
		if (cancel && !r->dp_posted) {
			mpiv_tp_set_error("replay diverged: MPI_Cancel logged "
			    "as cancelling a receive that matched");
			return MPI_ERR_OTHER;
		}
	} else {
		cancel = r->dp_posted && !r->complete;
		if (mpiv_ndlog_enabled() && (rc = mpiv_ndlog_record_msg(
		    MPIV_ND_CANCEL, cancel, r->post_no, 0, 0)) != MPI_SUCCESS)
			return rc;
	}
	r->cancel_wait = false;
	if (cancel) {
		dp_unpost(r);
		r->status.mpiv_cancelled = 1;
		r->status.mpiv_count = 0;
		mpiv_req_complete(r);
	}
	return MPI_SUCCESS;
}

/* ---------------- checkpoints ---------------- */

static void
direct_ckpt_marked(uint64_t k)
{
	int at = 0;

	/* The clone about to be forked shares the spill file: what it
	   holds stays as it is until this checkpoint is durable (its dump
	   has read it). */
	sblog_freeze_at(&dp_sb, k);

	for (int i = 1; i < DP_SNAPS; i++)
		if (dp_snaps[i].k < dp_snaps[at].k)
			at = i;
	if ((dp_snaps[at].recv == NULL && (dp_snaps[at].recv =
	    calloc((size_t)dp_world, sizeof(uint64_t))) == NULL) ||
	    (dp_snaps[at].sent == NULL && (dp_snaps[at].sent =
	    calloc((size_t)dp_world, sizeof(uint64_t))) == NULL)) {
		dp_snaps[at].k = 0;
		return;		/* no trim for k: the peers' logs stay longer */
	}
	/* A message half read is not in the image, nor is one whose
	   payload its sender's log still holds for a pull. */
	for (int p = 0; p < dp_world; p++) {
		dp_snaps[at].recv[p] = dpx_held(p);
		dp_snaps[at].sent[p] = sblog_last_seq(&dp_sb, p);
	}
	for (struct dp_msg *m = dp_unx.head; m != NULL; m = m->next)
		if (m->pull && m->seq <= dp_snaps[at].recv[m->src])
			dp_snaps[at].recv[m->src] = m->seq - 1;
	for (struct dp_msg *m = dp_pulls.head; m != NULL; m = m->next)
		if (m->seq <= dp_snaps[at].recv[m->src])
			dp_snaps[at].recv[m->src] = m->seq - 1;
	dp_snaps[at].k = k;
}

/* Checkpoint k (or an older one we have the numbers of) is durable: each
   peer drops from its log what it holds, now or on the next link. */
static void
direct_ckpt_durable(uint64_t k)
{
	Mpiv__DTrim t = MPIV__DTRIM__INIT;
	int best = -1;

	sblog_thaw_upto(&dp_sb, k);	/* the dump read the spill file */
	for (int i = 0; i < DP_SNAPS; i++)
		if (dp_snaps[i].k > dp_trim_ckpt && dp_snaps[i].k <= k &&
		    (best < 0 || dp_snaps[i].k > dp_snaps[best].k))
			best = i;
	if (best < 0)
		return;
	if (dp_trim_sent == NULL && (dp_trim_sent = calloc((size_t)dp_world,
	    sizeof(*dp_trim_sent))) == NULL)
		return;
	if (dp_trim_mine == NULL && (dp_trim_mine = calloc((size_t)dp_world,
	    sizeof(*dp_trim_mine))) == NULL)
		return;
	dp_trim_ckpt = dp_snaps[best].k;
	t.ckpt_no = dp_trim_ckpt;
	for (int p = 0; p < dp_world; p++) {
		if (p == dp_rank)
			continue;
		dp_trim_sent[p] = dp_snaps[best].recv[p];
		dp_trim_mine[p] = dp_snaps[best].sent[p];
		t.upto = dp_trim_sent[p];
		t.sent = dp_trim_mine[p];
		(void)dp_send_up(p, MPIV__MSG_TYPE__MSG_DTRIM, &t.base, NULL,
		    0, NULL, NULL);
	}
}

static void
direct_clone_detach(void)
{
	dp_clone_detach();
}

/* A restored clone, before it dials the CMs: links and the listener are
   gone; a message half read from one is forgotten (its sender sends it
   again above what we hold). */
static int
direct_restore_prepare(uint32_t inc)
{
	sblog_thaw_upto(&dp_sb, UINT64_MAX);	/* a spill file of its own now */
	/* (closing the image's links undoes what was half read on them,
	   pulls included, and forgets the pulls owed to their peers:
	   dpx_link_down) */
	return dp_links_restart(inc);
}

/* Messages in memory that a receive now takes (after holds are released
   or forced matches applied). */
static void
dp_sweep(void)
{
	struct dp_msg *m, *next;

	for (m = dp_unx.head; m != NULL; m = next) {
		struct mpiv_request *r = dp_match_posted(m);

		next = m->next;
		if (r == NULL)
			continue;
		dp_mlist_remove(&dp_unx, m);
		dp_unpost(r);
		dp_deliver_copy(r, m);
	}
}

/*
 * A restored clone, after the home CM gave the outcomes logged after the
 * checkpoint: a wildcard receive pending in the image whose match was
 * logged takes only that message; one without is held while logged
 * calls remain. Then the peers are dialled.
 */
static int
direct_restore(void)
{
	int32_t src;
	uint64_t seq;

	if (mpiv_tp_fin_closed()) {
		/* The job ended after this checkpoint: every rank waited at
		   the end of MPI_Finalize, peers may be gone, and this one
		   has nothing left to do (as at MPI_Init). */
		mpiv_tp_close(mpiv_tp_fin_code());
		mpiv_p2p_fin_leave(mpiv_tp_fin_code());
	}
	/* A wildcard receive matched before the checkpoint and waiting for
	   its pull: its match may be logged already (by the incarnation
	   this image outlived); then it is not recorded again. */
	for (struct dp_msg *m = dp_pulls.head; m != NULL; m = m->next) {
		struct mpiv_request *r = m->req;

		if (r->dp_wild && r->dp_seq == 0 &&
		    mpiv_ndlog_bind_of(r->post_no, &src, &seq))
			r->dp_seq = seq;
	}
	for (struct mpiv_request *r = dp_post_head; r != NULL; r = r->dp_next) {
		if (!r->dp_wild || r->dp_seq != 0 || r->dp_hold)
			continue;
		if (mpiv_ndlog_bind_of(r->post_no, &src, &seq)) {
			r->post_src = src;
			r->dp_seq = seq;
		} else if (mpiv_ndlog_replaying()) {
			r->dp_hold = true;
			dp_nheld++;
		}
	}
	dp_sweep();
	dp_dial_due();
	return MPI_SUCCESS;
}

/* ---------------- MPI_Finalize ---------------- */

static bool
dp_all(bool (*fn)(int p))
{
	for (int p = 0; p < dp_world; p++)
		if (p != dp_rank && !fn(p))
			return false;
	return true;
}

static bool
dp_peer_bye(int p)
{
	return dp_peers[p].bye;
}

/*
 * Finalize of a direct rank (docs/DIRECT.md, "Finalize"). Its log may
 * still be needed by a peer that is relaunched and runs again, so it
 * stays until that cannot happen:
 *   1. DBye to every peer; wait for every peer's (all reached Finalize:
 *      no receive of theirs is pending).
 *   2. Commit: an MPIV_ND_FINALIZE outcome stored at the home CM; a
 *      later incarnation of this rank exits at MPI_Init.
 *   3. Its output so far reaches the dispatcher (through the node).
 *   3b. The program returns from MPI_Finalize in a forked process; this
 *      one serves resends until that one ended, and syncs the output
 *      again (dp_fin.c).
 *   4. Wait at the job's first CM (FinWait) until every rank's live
 *      incarnation waits there (FinGo), serving resends meanwhile; then
 *      the links close. A rank killed after its commit runs again unless
 *      the job closed already (channel-memory/finish.c).
 */
static int
direct_finalize(void)
{
	Mpiv__DBye bye = MPIV__DBYE__INIT;
	const Mpiv__NdOutcome *o = NULL;
	int rc = MPI_SUCCESS, got = 0;

	fflush(stdout);
	fflush(stderr);
	dp_finalizing = true;
	bye.incarnation = dp_inc;
	for (int p = 0; p < dp_world; p++)
		if (p != dp_rank && (rc = dp_send_up(p,
		    MPIV__MSG_TYPE__MSG_DBYE, &bye.base, NULL, 0, NULL,
		    NULL)) != MPI_SUCCESS)
			return rc;
	mpiv_waitrep_begin("MPI_Finalize, for every rank to reach it",
	    NULL, 0);
	while (!dp_all(dp_peer_bye))
		if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
			break;
	mpiv_waitrep_end();
	if (rc != MPI_SUCCESS)
		return rc;
	/* Without logging nothing is run again: the messages being all
	   through is enough. */
	if (!mpiv_ndlog_enabled())
		return MPI_SUCCESS;
	mpiv_fault_point("bye");
	if ((got = mpiv_ndlog_next(MPIV_ND_FINALIZE, &o)) < 0)
		return MPI_ERR_OTHER;
	if (got == 0 && (rc = mpiv_ndlog_record_msg(MPIV_ND_FINALIZE, true, 0,
	    0, 0)) != MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_ndlog_sync()) != MPI_SUCCESS)
		return rc;
	mpiv_fault_point("committed");
	/* Its output is at the dispatcher before the job may close: after
	   that nothing could print it again. */
	if ((rc = mpiv_ckpt_output_sync()) != MPI_SUCCESS)
		return rc;
	/* The program goes on past MPI_Finalize in a process of its own;
	   this one waits for its end, then for the job's (dp_fin.c). */
	if ((rc = dp_fin_fork()) != MPI_SUCCESS || mpiv_p2p_fin_child())
		return rc;
	/* (the keeper's wait: the dispatcher sees an ended program) */
	mpiv_waitrep_begin("MPI_Finalize, its program ended, for every "
	    "rank's to end", NULL, 0);
	while (!mpiv_tp_fin_closed()) {
		Mpiv__FinWait fw = MPIV__FIN_WAIT__INIT;
		long until = mono_us() + DP_FIN_WAIT_MS * 1000L;

		/* said again now and then: the first CM may have restarted */
		fw.incarnation = dp_inc;
		fw.exit_code = mpiv_p2p_fin_code();
		if ((rc = mpiv_tp_send(0, MPIV__MSG_TYPE__MSG_FIN_WAIT,
		    &fw.base, NULL, 0, NULL, NULL)) != MPI_SUCCESS)
			break;
		while (!mpiv_tp_fin_closed() && mono_us() < until)
			if ((rc = mpiv_tp_progress(100)) != MPI_SUCCESS)
				break;
		if (rc != MPI_SUCCESS)
			break;
	}
	mpiv_waitrep_end();
	if (rc != MPI_SUCCESS)
		return rc;
	mpiv_fault_point("closed");
	return MPI_SUCCESS;
}

int
mpiv_p2p_finalize(void)
{
	if (mpiv_proto != &mpiv_proto_direct)
		return MPI_SUCCESS;
	return direct_finalize();
}

/* Messages our failed incarnation sent that a peer holds, or wildcard
   matches it logged, lie ahead of this re-execution. */
static bool
direct_replaying(void)
{
	if (dp_post_no < mpiv_ndlog_bind_max())
		return true;
	for (int p = 0; p < dp_world; p++) {
		uint64_t need = dp_peers[p].peer_has > dp_peers[p].peer_needs ?
		    dp_peers[p].peer_has : dp_peers[p].peer_needs;

		if (need > 0 && sblog_last_seq(&dp_sb, p) < need)
			return true;
	}
	return false;
}

const struct mpiv_proto mpiv_proto_direct = {
	.name = "direct",
	.init = direct_init,
	.fini = direct_fini,
	.send = direct_send,
	.recv = direct_recv,
	.probe = direct_probe,
	.cancel = direct_cancel,
	.restore = direct_restore,
	.restore_prepare = direct_restore_prepare,
	.ckpt_marked = direct_ckpt_marked,
	.ckpt_durable = direct_ckpt_durable,
	.clone_detach = direct_clone_detach,
	.replaying = direct_replaying,
};
