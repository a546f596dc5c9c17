/*
 * transport.c: the connections of a rank to the Channel Memories of its
 * job, and the progress engine.
 *
 * Each CM connection has a FIFO of outgoing frames. A frame is its
 * header+meta (encoded into the frame itself) plus an optional payload
 * that is not copied: a contiguous user buffer goes out as it is, header
 * and data in one gathered write. Partial writes resume on POLLOUT.
 *
 * Input is buffered for headers and metadata; when a Deliver's payload is
 * bound for a contiguous user buffer, what is already buffered is copied
 * and the rest is recv()'d straight into the user's memory.
 *
 * There are no threads: progress happens only inside mpiv_tp_progress(),
 * which always services reads and writes together so that two ranks
 * sending each other large messages cannot deadlock. Opening, closing and
 * reopening the connections is tp_open.c.
 */
#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "direct.h"
#include "mono.h"
#include "pollback.h"
#include "proto.h"
#include "spin.h"
#include "tp_priv.h"
#include "transport.h"
#include "waitrep.h"


struct tp_conn *tp_conns;
int tp_nconns;
uint64_t *tp_last_seq;		/* per receiver, from HelloReply */
int tp_world_size;
char tp_errbuf[512];
bool tp_restore_needed;	/* a CM said: restore a checkpoint */
bool tp_fin_closed;	/* direct: the first CM said every rank finished */
int tp_fin_code;		/* and the exit code of this rank's program */
bool tp_refused_fenced;	/* the last refusal: ERR_FENCED */
const char *tp_err;
struct tp_frame *tp_frame_pool;	/* freelist: frames are reused */
static struct spin tp_spin;	/* spin before sleeping: spin.c */
static bool tp_spin_ready;
static struct pollback tp_pollback;	/* fruitless polls: pollback.c */
static bool tp_pollback_ready;
char *tp_job;			/* for a Hello again after a restore */
int tp_rank;
uint32_t tp_incarnation;
uint64_t tp_resume_event, tp_resume_nd;	/* Hello of a restored clone */
uint64_t tp_log_events;		/* HelloReply: logged decisions to replay */
uint64_t tp_last_event;		/* last event fully received */
/* K_{r,i} from MPIV_RANK_KEY: proves this incarnation of this rank of
   this job to every CM. A restored image is given its new incarnation's
   on its ctrl-in pipe (mpiv_tp_set_key), which overwrites the old. */
struct auth_key tp_key;
bool tp_keyed;
void (*tp_test_exit_hook)(void);	/* NULL but in the fuzz target */

/* The code tp_send returns once a write failed (a local error sets it). */
static int tp_local_code = MPI_ERR_PROC_FAILED;
static void tp_local_error(struct tp_conn *c, int e);
static void tp_say_altered(const struct tp_conn *c);

/* ---------------- frames ---------------- */

struct tp_frame *
tp_frame_get(void)
{
	struct tp_frame *f = tp_frame_pool;

	if (f != NULL) {
		tp_frame_pool = f->next;
		return f;
	}
	return malloc(sizeof(*f));
}

void
tp_frame_put(struct tp_frame *f)
{
	free(f->owned);
	f->owned = NULL;
	f->next = tp_frame_pool;
	tp_frame_pool = f;
}

/* ---------------- output ---------------- */

/*
 * A write to c failed with e. The connection's loss (tp_lost, or the
 * refusal an Error frame still in the socket says) or a local error.
 * -1.
 */
static int
tp_write_failed(struct tp_conn *c, int e)
{
	if (!tp_conn_errno(e) && e != EBADMSG) {
		/* Ours, not the connection's: a buffer the program passed
		   is unreadable (EFAULT) or the kernel is short of memory.
		   An MPI error, never a self-kill and restart, which would
		   only meet it again. */
		tp_local_error(c, e);
		return -1;
	}
	/* The CM may have said why before it closed (replay diverged,
	   fencing): an Error frame still in the socket makes this a
	   refusal, not a lost CM. */
	(void)tp_read(c);
	if (!c->dead)
		tp_lost(c, "write", strerror(e));
	return -1;
}

/*
 * Writes iov to c: a gathered send, or through c's session when on
 * (then the bytes taken are sealed, maybe not all written yet: they
 * wait in the session, tp_conn_out_due). At most one chunk per call, so
 * that a big message's first pieces are on their way (read, and opened
 * when sealed) while the next ones go in (are sealed): two processes
 * ping-ponging 1 MiB over loopback take half the time in 256 KiB
 * writes (bench/tcp_floor.c, "direct-256k").
 */
static ssize_t
tp_sendv(struct tp_conn *c, struct iovec *iov, int n)
{
	size_t cap = c->seal.on ? TP_SEAL_CHUNK : TP_WIRE_CHUNK, total = 0;
	struct iovec last;
	struct msghdr mh;
	ssize_t w;
	int k;

	for (k = 0; k < n && total < cap; k++)
		total += iov[k].iov_len;
	last = iov[k - 1];
	if (total > cap)
		iov[k - 1].iov_len -= total - cap;
	if (c->seal.on) {
		w = seal_writev(&c->seal, c->fd, iov, k);
	} else {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)k;
		w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	iov[k - 1] = last;
	return w;
}

/*
 * Writes as much of c's queue as the socket takes, several frames per
 * sendmsg (or seal_writev). Frames fully written (sealed) are retired
 * and their request told.
 */
int
tp_write(struct tp_conn *c)
{
	if (c->seal.on && !c->dead && seal_pending(&c->seal) > 0 &&
	    seal_flush(&c->seal, c->fd) < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return tp_write_failed(c, errno);
	}
	while (c->qhead != NULL && !c->dead) {
		struct iovec iov[TP_IOV_MAX];
		struct tp_frame *f;
		ssize_t w;
		int n = 0;

		for (f = c->qhead; f != NULL && n < TP_IOV_MAX - 1; f = f->next) {
			if (f->off < f->hlen) {
				iov[n].iov_base = f->hdr + f->off;
				iov[n++].iov_len = f->hlen - f->off;
				if (f->plen > 0) {
					iov[n].iov_base = (void *)f->payload;
					iov[n++].iov_len = f->plen;
				}
			} else {
				iov[n].iov_base = (void *)(f->payload +
				    (f->off - f->hlen));
				iov[n++].iov_len = f->plen - (f->off - f->hlen);
			}
		}
		w = tp_sendv(c, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return tp_write_failed(c, errno);
		}
		while (c->qhead != NULL) {
			size_t left;

			f = c->qhead;
			left = f->hlen + f->plen - f->off;
			if ((size_t)w < left) {
				f->off += (size_t)w;
				if (f->is_send && f->off > f->hlen)
					mpiv_fault_point("send-partial");
				/* a long payload on its way moves too */
				if (f->plen > 0)
					mpiv_waitrep_moved();
				break;
			}
			w -= (ssize_t)left;
			c->qhead = f->next;
			if (c->qhead == NULL)
				c->qtail = NULL;
			if (f->urgent) {
				c->nurgent--;
				if (c->utail == f)
					c->utail = NULL;
			}
			if (f->req != NULL)
				mpiv_p2p_send_written(f->req);
			tp_frame_put(f);
		}
	}
	return c->dead ? -1 : 0;
}

/*
 * Puts f in c's queue: at the tail, or, when urgent, ahead of every frame
 * not yet started (behind a partly written one and earlier urgent ones,
 * so urgent frames keep their own order).
 */
static void
tp_enqueue(struct tp_conn *c, struct tp_frame *f, bool urgent)
{
	struct tp_frame *after;

	f->urgent = urgent;
	if (!urgent) {
		f->next = NULL;
		if (c->qtail != NULL)
			c->qtail->next = f;
		else
			c->qhead = f;
		c->qtail = f;
		return;
	}
	after = c->utail;
	if (after == NULL && c->qhead != NULL && c->qhead->off > 0)
		after = c->qhead;
	if (after != NULL) {
		f->next = after->next;
		after->next = f;
	} else {
		f->next = c->qhead;
		c->qhead = f;
	}
	if (f->next == NULL)
		c->qtail = f;
	c->utail = f;
	c->nurgent++;
}

/*
 * The whole frame (header, m, then paylen bytes of payload) in one
 * malloc'd buffer of *len bytes; NULL when out of memory.
 */
static uint8_t *
tp_frame_whole(uint16_t type, const ProtobufCMessage *m, const void *payload,
    size_t paylen, size_t *len)
{
	uint8_t *enc, *whole;
	size_t hl = 0;

	if ((enc = frame_encode(type, m, (uint32_t)paylen, &hl)) == NULL)
		return NULL;
	if ((whole = malloc(hl + paylen)) != NULL) {
		memcpy(whole, enc, hl);
		if (paylen > 0)
			memcpy(whole + hl, payload, paylen);
		*len = hl + paylen;
	}
	free(enc);
	return whole;
}

int
tp_send(int cm, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req,
    bool urgent)
{
	if (cm < 0 || cm >= tp_nconns) {
		free(owned);
		return MPI_ERR_INTERN;
	}
	return tp_conn_send(&tp_conns[cm], type, m, payload, paylen, owned,
	    req, urgent);
}

/* tp_send on any connection, a CM's or a peer's. */
int
tp_conn_send(struct tp_conn *c, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req,
    bool urgent)
{
	struct tp_frame *f;
	bool idle;

	if (type == MPIV__MSG_TYPE__MSG_SEND)
		c->unflushed++;
	if (c->dead || tp_err != NULL) {
		free(owned);
		return MPI_ERR_PROC_FAILED;
	}
	if (paylen > frame_max_payload()) {
		free(owned);
		return MPI_ERR_COUNT;
	}
	if ((f = tp_frame_get()) == NULL) {
		free(owned);
		return MPI_ERR_NO_MEM;
	}
	f->hlen = frame_encode_into(type, m, (uint32_t)paylen, f->hdr,
	    sizeof(f->hdr));
	if (f->hlen == 0 && paylen == 0 && owned == NULL) {
		/* Metadata bigger than the inline header (an NdRecord of
		   many outcomes): encoded aside and sent as the "payload". */
		size_t len = 0;
		uint8_t *enc = frame_encode(type, m, 0, &len);

		if (enc != NULL) {
			owned = enc;
			payload = enc;
			paylen = len;
		}
	} else if (f->hlen == 0) {
		/* Big metadata and a payload (a FileOp writing many
		   extents): header, meta and payload copied into one
		   buffer sent as it is. */
		uint8_t *whole = tp_frame_whole(type, m, payload, paylen,
		    &paylen);

		free(owned);
		owned = whole;
		payload = whole;
		if (whole == NULL) {
			tp_frame_put(f);
			return MPI_ERR_NO_MEM;
		}
	}
	if (f->hlen == 0 && paylen == 0) {
		tp_frame_put(f);
		return MPI_ERR_NO_MEM;
	}
	f->req = req;
	f->owned = owned;
	f->payload = payload;
	f->plen = paylen;
	f->off = 0;
	f->is_send = type == MPIV__MSG_TYPE__MSG_SEND ||
	    type == MPIV__MSG_TYPE__MSG_DSEND;
	if (f->is_send || type == MPIV__MSG_TYPE__MSG_DDATA)
		mpiv_waitrep_moved();
	idle = !tp_conn_out_due(c);
	tp_enqueue(c, f, urgent);
	/* Fast path: an idle connection takes the frame right now (an
	   urgent one tries even behind a stalled frame). */
	if ((idle || urgent) && tp_write(c) < 0)
		return tp_local_code;
	return MPI_SUCCESS;
}

int
mpiv_tp_send(int cm, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req)
{
	return tp_send(cm, type, m, payload, paylen, owned, req, false);
}

int
mpiv_tp_send_urgent(int cm, uint16_t type, const ProtobufCMessage *m)
{
	return tp_send(cm, type, m, NULL, 0, NULL, NULL, true);
}

int
mpiv_tp_wait_urgent(int cm)
{
	int rc;

	if (cm < 0 || cm >= tp_nconns)
		return MPI_ERR_INTERN;
	while (tp_conns[cm].nurgent > 0)
		if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
			return rc;
	return MPI_SUCCESS;
}

/* ---------------- input ---------------- */

/* Decides where the payload of the frame just parsed goes. */
static void
tp_frame_begin(struct tp_conn *c)
{
	c->in_payload = true;
	c->preq = NULL;
	c->pahead = NULL;
	c->pdst = NULL;
	c->pkeep = c->pgot = 0;
	c->prest = c->h.payload_len;

	if (c->is_peer) {
		dp_frame_begin(c);
		return;
	}
	if (c->h.type == MPIV__MSG_TYPE__MSG_DELIVER) {
		const Mpiv__Deliver *d = (const Mpiv__Deliver *)c->meta;
		struct mpiv_request *r;

		mpiv_fault_point("deliver");
		if (d->ahead_post != 0 && d->req_id == 0) {
			/* streaming replay (rp_ahead.c): held until posted */
			if ((r = mpiv_ahead_posted(d)) == NULL) {
				if (mpiv_ahead_hold(d, c->h.payload_len,
				    &c->pdst, &c->pahead) < 0)
					c->ahead_nomem = true;
				else
					c->pkeep = c->h.payload_len;
				return;
			}
		} else {
			r = mpiv_req_lookup(d->req_id);
		}
		if (r == NULL || r->kind != MPIV_REQ_RECV || r->complete)
			return;		/* nobody wants it: discard */
		c->preq = r;
		c->pkeep = c->h.payload_len < r->cap ? c->h.payload_len : r->cap;
		if (c->pkeep == 0)
			return;
		if (mpiv_dt_is_contig(r->dt)) {
			c->pdst = (uint8_t *)((uintptr_t)r->buf +
			    (uintptr_t)r->dt->true_lb);
		} else {
			r->tmp = malloc(c->pkeep);
			if (r->tmp == NULL) {
				r->status.MPI_ERROR = MPI_ERR_NO_MEM;
				c->pkeep = 0;
				return;
			}
			c->pdst = r->tmp;
		}
	} else if (c->h.type == MPIV__MSG_TYPE__MSG_FILE_RES) {
		mpiv_file_reply_dst((const Mpiv__FileRes *)c->meta,
		    c->h.payload_len, &c->pdst, &c->pkeep);
	}
}

void
mpiv_tp_recv_done(struct mpiv_request *r, int src, int tag, size_t got,
    size_t len)
{
	if (src >= 0 && src < tp_world_size)
		src = mpiv_comm_from_world(r->comm, src);
	r->status.MPI_SOURCE = src;
	r->status.MPI_TAG = tag;
	r->status.mpiv_count = got;
	if (r->status.MPI_ERROR == MPI_SUCCESS && len > r->cap)
		r->status.MPI_ERROR = MPI_ERR_TRUNCATE;
	mpiv_req_complete(r);
}

/* Completes the receive a Deliver was for. */
static void
tp_deliver_done(struct tp_conn *c)
{
	const Mpiv__Deliver *d = (const Mpiv__Deliver *)c->meta;
	struct mpiv_request *r = c->preq;

	if (r == NULL)
		return;
	if (r->tmp != NULL) {
		mpiv_dt_unpack(r->tmp, c->pgot, r->buf, r->count, r->dt);
		free(r->tmp);
		r->tmp = NULL;
	}
	mpiv_tp_recv_done(r, d->src, d->tag, c->pgot, c->h.payload_len);
}

/* An answer of the home CM carrying an event is fully received (events
   come in order on the home connection). */
static void
tp_saw_event(uint64_t event)
{
	if (event > tp_last_event)
		tp_last_event = event;
}

uint64_t
mpiv_tp_last_event(void)
{
	return tp_last_event;
}

bool
mpiv_tp_replaying(void)
{
	/* every logged decision received, none held ahead of its post */
	if (tp_last_event < tp_resume_event + tp_log_events ||
	    mpiv_ahead_pending())
		return true;
	for (int i = 0; i < tp_world_size; i++)
		if (tp_last_seq[i] > 0 && mpiv_p2p_sent_seq(i) < tp_last_seq[i])
			return true;
	return false;
}

bool
mpiv_tp_reading_frame(void)
{
	for (int i = 0; i < tp_nconns; i++)
		if (tp_conns[i].in_payload || tp_conns[i].inlen >
		    tp_conns[i].inpos)
			return true;
	return false;
}

/* A frame that carries a message or its completion (what a deadlocked
   job never sees: waitrep.c). */
static bool
tp_frame_moves(const struct tp_conn *c)
{
	switch (c->h.type) {
	case MPIV__MSG_TYPE__MSG_DELIVER:
	case MPIV__MSG_TYPE__MSG_SYNC_ACK:
	case MPIV__MSG_TYPE__MSG_DSEND:
	case MPIV__MSG_TYPE__MSG_DSYNC_ACK:
	case MPIV__MSG_TYPE__MSG_DDATA:
		return true;
	case MPIV__MSG_TYPE__MSG_PROBE_REPLY:
		return c->meta != NULL &&
		    ((const Mpiv__ProbeReply *)c->meta)->found;
	default:
		return false;
	}
}

/* Dispatches a complete incoming frame (header, meta, payload). */
static void
tp_frame_done(struct tp_conn *c)
{
	struct mpiv_request *r;

	c->in_payload = false;
	if (tp_frame_moves(c))
		mpiv_waitrep_moved();
	if (c->is_peer) {
		dp_frame_done(c);
		if (c->meta != NULL)
			frame_free_meta(c->meta);
		c->meta = NULL;
		c->preq = NULL;
		return;
	}
	switch (c->h.type) {
	case MPIV__MSG_TYPE__MSG_DELIVER:
		if (c->ahead_nomem) {
			c->ahead_nomem = false;
			tp_fail(c, "input", "out of memory holding a replayed "
			    "delivery");
			break;
		}
		if (c->pahead != NULL) {
			mpiv_ahead_whole(c->pahead);
			c->pahead = NULL;
		}
		tp_deliver_done(c);
		tp_saw_event(((const Mpiv__Deliver *)c->meta)->event);
		break;
	case MPIV__MSG_TYPE__MSG_SYNC_ACK:
		mpiv_p2p_sync_ack(((Mpiv__SyncAck *)c->meta)->send_id);
		break;
	case MPIV__MSG_TYPE__MSG_PROBE_REPLY: {
		const Mpiv__ProbeReply *p = (const Mpiv__ProbeReply *)c->meta;

		tp_saw_event(p->event);
		r = mpiv_req_lookup(p->req_id);
		if (r == NULL || r->kind != MPIV_REQ_PROBE || r->complete)
			break;
		r->found = p->found;
		if (p->found) {
			int src = p->src;

			if (src >= 0 && src < tp_world_size)
				src = mpiv_comm_from_world(r->comm, src);
			r->status.MPI_SOURCE = src;
			r->status.MPI_TAG = p->tag;
			r->status.mpiv_count = (size_t)p->size;
		}
		mpiv_req_complete(r);
		break;
	}
	case MPIV__MSG_TYPE__MSG_CANCEL_REPLY: {
		const Mpiv__CancelReply *p = (const Mpiv__CancelReply *)c->meta;

		tp_saw_event(p->event);
		r = mpiv_req_lookup(p->req_id);
		/* Only a receive is cancelled: a send completed here could
		   be freed with its frame still queued or its SyncAck due,
		   and a probe has its own answer. */
		if (r == NULL || r->kind != MPIV_REQ_RECV)
			break;
		r->cancel_wait = false;
		if (p->cancelled && !r->complete) {
			r->status.mpiv_cancelled = 1;
			r->status.mpiv_count = 0;
			mpiv_req_complete(r);
		}
		break;
	}
	case MPIV__MSG_TYPE__MSG_ND_ACK:
		mpiv_ndlog_ack(((const Mpiv__NdAck *)c->meta)->ack_id);
		break;
	case MPIV__MSG_TYPE__MSG_FILE_RES:
		mpiv_file_reply((const Mpiv__FileRes *)c->meta, c->pgot);
		break;
	case MPIV__MSG_TYPE__MSG_PEER_INFO:
		dp_peer_info((const Mpiv__PeerInfo *)c->meta);
		break;
	case MPIV__MSG_TYPE__MSG_FIN_GO:
		tp_fin_closed = true;
		break;
	case MPIV__MSG_TYPE__MSG_FLUSH_ACK:
		c->flush_acked = ((const Mpiv__FlushAck *)c->meta)->id;
		break;
	case MPIV__MSG_TYPE__MSG_CKPT_DURABLE:
		mpiv_ckpt_durable(((const Mpiv__CkptDurable *)c->meta)->ckpt_no);
		break;
	case MPIV__MSG_TYPE__MSG_ERROR: {
		const Mpiv__Error *e = (const Mpiv__Error *)c->meta;
		const char *text = e->text && *e->text ? e->text : "(no text)";

		if (e->code == MPIV__ERROR_CODE__ERR_FENCED)
			tp_fenced(c, text);
		tp_fail(c, e->code == MPIV__ERROR_CODE__ERR_DIVERGED ?
		    NULL : "error from CM", text);
		break;
	}
	case MPIV__MSG_TYPE__MSG_BYE:
		tp_fail(c, "closed by CM", "it said bye");
		break;
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		const Mpiv__HelloReply *h = (const Mpiv__HelloReply *)c->meta;

		/* Only a refusal (fencing by a newer incarnation) matters
		   once connected. */
		if (!h->ok)
			tp_fenced(c, h->error && *h->error ? h->error :
			    "refused by the CM");
		break;
	}
	default:
		tp_fail(c, "protocol", frame_type_name(c->h.type));
		break;
	}
	frame_free_meta(c->meta);
	c->meta = NULL;
	c->preq = NULL;
}

/* Consumes n payload bytes from src: kept ones copied, the rest dropped. */
static void
tp_payload_take(struct tp_conn *c, const uint8_t *src, size_t n)
{
	size_t k = c->pkeep - c->pgot;

	if (k > n)
		k = n;
	if (k > 0) {
		memcpy(c->pdst + c->pgot, src, k);
		c->pgot += k;
	}
	c->prest -= n;
}

/* Parses every complete frame sitting in c's input buffer. */
static void
tp_parse(struct tp_conn *c)
{
	while (!c->dead) {
		size_t avail = c->inlen - c->inpos;
		const char *err;
		size_t need;

		if (c->in_payload) {
			size_t n = avail < c->prest ? avail : c->prest;

			if (c->prest > 0 && n == 0)
				break;
			tp_payload_take(c, c->in + c->inpos, n);
			c->inpos += n;
			if (c->prest == 0)
				tp_frame_done(c);
			continue;
		}
		if (avail < FRAME_HDR_LEN)
			break;
		if (frame_parse_header(c->in + c->inpos, &c->h, &err) < 0) {
			tp_fail(c, "protocol", err);
			break;
		}
		if (c->preauth && (size_t)c->h.meta_len + c->h.payload_len >
		    TP_PREAUTH_MAX - FRAME_HDR_LEN) {
			tp_fail(c, "protocol", "frame too big before "
			    "authentication");
			break;
		}
		need = FRAME_HDR_LEN + c->h.meta_len;
		if (need > c->incap - c->inpos) {
			/* Room for a big meta: compact, then grow (capped by
			   frame_parse_header at FRAME_MAX_META). */
			memmove(c->in, c->in + c->inpos, avail);
			c->inlen = avail;
			c->inpos = 0;
			if (need > c->incap) {
				uint8_t *p = realloc(c->in, need);

				if (p == NULL) {
					tp_fail(c, "input", "out of memory");
					break;
				}
				c->in = p;
				c->incap = need;
			}
		}
		if (avail < need)
			break;
		c->meta = frame_unpack_meta(c->h.type,
		    c->in + c->inpos + FRAME_HDR_LEN, c->h.meta_len, &err);
		if (c->meta == NULL) {
			tp_fail(c, "protocol", err);
			break;
		}
		c->inpos += need;
		tp_frame_begin(c);
		if (c->prest == 0)
			tp_frame_done(c);
	}
	if (c->inpos == c->inlen)
		c->inpos = c->inlen = 0;
}

/* Reads at most n bytes of c: from the socket, or through c's session
   when on (one record's plaintext at most). Like recv(2). */
static ssize_t
tp_recv(struct tp_conn *c, void *buf, size_t n)
{
	if (c->seal.on)
		return seal_read(&c->seal, c->fd, buf, n);
	return recv(c->fd, buf, n, MSG_DONTWAIT);
}

/*
 * After a read of n bytes of the want asked: whether c is drained for
 * now, saving the read that would say EAGAIN. Plaintext: a short read
 * means the socket had no more. Sealed: a read answers one record at
 * most, so short says little; between frames we stop once the session
 * holds nothing (poll says whether the socket has more), in the middle
 * of a payload we read on.
 */
static bool
tp_drained(const struct tp_conn *c, size_t n, size_t want)
{
	if (n >= want || tp_conn_in_ready(c))
		return false;
	return !c->seal.on || !c->in_payload;
}

/*
 * Reads everything the socket has. Payload bytes bound for user memory
 * bypass the buffer once it is empty.
 */
int
tp_read(struct tp_conn *c)
{
	while (!c->dead) {
		ssize_t n;

		if (c->in_payload && c->inpos == c->inlen &&
		    c->pgot < c->pkeep) {
			size_t want = c->pkeep - c->pgot;

			n = tp_recv(c, c->pdst + c->pgot, want);
			if (n > 0) {
				mpiv_waitrep_moved();
				c->pgot += (size_t)n;
				c->prest -= (size_t)n;
				if (c->prest == 0)
					tp_frame_done(c);
				if (tp_drained(c, (size_t)n, want))
					return 0;
				continue;
			}
		} else {
			if (c->inpos > 0 && c->incap - c->inlen < 4096) {
				memmove(c->in, c->in + c->inpos,
				    c->inlen - c->inpos);
				c->inlen -= c->inpos;
				c->inpos = 0;
			}
			size_t want = c->incap - c->inlen;

			n = tp_recv(c, c->in + c->inlen, want);
			if (n > 0) {
				c->inlen += (size_t)n;
				tp_parse(c);
				if (tp_drained(c, (size_t)n, want))
					return 0;
				continue;
			}
		}
		if (n < 0 && errno == EBADMSG) {
			/* Altered on the way, or not our peer's keys: the
			   connection cannot go on. Said on stderr too, as
			   fencing is: a logging rank kills itself next, and
			   an attack must not pass for a plain crash. */
			tp_say_altered(c);
			tp_lost(c, "read", "a sealed record failed to open "
			    "(altered on the way?)");
			return -1;
		}
		if (n == 0) {
			tp_lost(c, "read", c->is_peer ? "connection closed by "
			    "the peer" : "connection closed by the CM");
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		tp_lost(c, "read", strerror(errno));
		return -1;
	}
	return -1;
}

/* ---------------- failure ---------------- */

/*
 * Ends this process the two ways the reader must: by signal sig (a lost
 * CM while logging: the dispatcher relaunches the rank and it replays)
 * or, sig 0, with _exit(code) (fenced). The fuzz target of the reader
 * sets tp_test_exit_hook, which longjmps back to it instead; no program
 * does, and then this never returns.
 */
void
tp_end_process(int sig, int code)
{
	if (tp_test_exit_hook != NULL)
		tp_test_exit_hook();
	if (sig != 0)
		raise(sig);
	_exit(code);
}

/* True for errors that mean the connection (or the CM) is gone. */
bool
tp_conn_errno(int e)
{
	switch (e) {
	case EPIPE: case ECONNRESET: case ECONNABORTED: case ETIMEDOUT:
	case EHOSTUNREACH: case ENETUNREACH: case ENETDOWN: case ENETRESET:
	case ENOTCONN: case EHOSTDOWN: case ECONNREFUSED:
		return true;
	default:
		return false;
	}
}

/*
 * A write failed for a reason of this process (EFAULT, ENOMEM ...): part
 * of a frame may be in the stream, so the connection cannot go on, but
 * the CM is fine and a restart would fail the same way. The call fails
 * with an MPI error naming the cause; errors-are-fatal aborts the job.
 */
static void
tp_local_error(struct tp_conn *c, int e)
{
	if (e == EFAULT) {
		tp_local_code = MPI_ERR_BUFFER;
		mpiv_err_detail("the send buffer is not readable memory "
		    "(EFAULT writing to Channel Memory %d)", c->index);
	} else {
		tp_local_code = e == ENOMEM || e == ENOBUFS ? MPI_ERR_NO_MEM :
		    MPI_ERR_OTHER;
		mpiv_err_detail("writing to Channel Memory %d: %s", c->index,
		    strerror(e));
	}
	if (c->dead)
		return;
	c->dead = true;
	if (tp_err == NULL) {
		snprintf(tp_errbuf, sizeof(tp_errbuf), "local error writing "
		    "to Channel Memory %d (%s): %s", c->index, c->addr,
		    e == EFAULT ? "a send buffer is not readable memory" :
		    strerror(e));
		tp_err = tp_errbuf;
	}
}

/*
 * Marks c lost and keeps the first reason: every later MPI call returns
 * MPI_ERR_PROC_FAILED and the error handler can show mpiv_tp_error().
 */
void
tp_fail(struct tp_conn *c, const char *what, const char *why)
{
	if (c->is_peer) {
		dp_link_lost(c, what, why);
		return;
	}
	if (c->dead)
		return;
	c->dead = true;
	if (tp_err == NULL) {
		/* what NULL: the CM's own words (replay diverged ...) lead,
		   the connection was ended on purpose, not lost. */
		if (what == NULL)
			snprintf(tp_errbuf, sizeof(tp_errbuf), "%s (said by "
			    "Channel Memory %d, %s)", why, c->index, c->addr);
		else
			snprintf(tp_errbuf, sizeof(tp_errbuf),
			    "lost Channel Memory %d (%s): %s: %s", c->index,
			    c->addr, what, why);
		tp_err = tp_errbuf;
	}
}

/*
 * The connection dropped (EOF, reset) without an Error from the CM, e.g.
 * the CM closed it because the sender of a message it was relaying to us
 * died mid-payload. With message logging on this is survivable: the rank
 * kills itself with SIGKILL, the dispatcher relaunches it and it replays
 * from the log (if the CM itself is gone the dispatcher fails the job).
 * An Error frame (divergence, fencing) or a protocol error is not
 * survivable and goes through tp_fail alone.
 */
void
tp_lost(struct tp_conn *c, const char *what, const char *why)
{
	bool first = !c->dead && tp_err == NULL;

	if (c->is_peer) {
		dp_link_lost(c, what, why);
		return;
	}
	tp_fail(c, what, why);
	if (first && mpiv_ndlog_enabled())
		tp_end_process(SIGKILL, 137);
}

void
mpiv_tp_set_error(const char *fmt, ...)
{
	va_list ap;

	if (tp_err != NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(tp_errbuf, sizeof(tp_errbuf), fmt, ap);
	va_end(ap);
	tp_err = tp_errbuf;
}

/* One line on stderr: a record from c failed to open. */
static void
tp_say_altered(const struct tp_conn *c)
{
	char line[600];
	int n;

	n = snprintf(line, sizeof(line), "mpiv: rank %d: %s %d (%s): a sealed "
	    "record failed to open (altered on the way?); dropping the "
	    "connection\n", mpiv_state.world_rank, c->is_peer ? "rank" :
	    "Channel Memory", c->is_peer ? c->peer : c->index, c->addr);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n :
	    sizeof(line) - 1) < 0) {
		/* nothing more to do */
	}
}

/*
 * Fencing: a newer incarnation of this rank exists, so this process must
 * stop acting at once, whatever the error handler says: one line on
 * stderr and exit, without flushing stdio (its successor prints the
 * program's output) and without the MPI_Abort path (the job goes on).
 */
void
tp_fenced(struct tp_conn *c, const char *text)
{
	char line[600];
	int n;

	n = snprintf(line, sizeof(line), "mpiv: rank %d: Channel Memory %d "
	    "(%s) fenced this process: %s; exiting\n", mpiv_state.world_rank,
	    c->index, c->addr, text);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n :
	    sizeof(line) - 1) < 0) {
		/* exiting anyway */
	}
	tp_end_process(0, 1);
}

const char *
mpiv_tp_error(void)
{
	return tp_err;
}

const char *
mpiv_transport_error(void)
{
	return tp_err;
}

/* ---------------- progress ---------------- */

/* An fd whose readability ends a wait (mpiv_tp_wake_fd), -1: none. */
static int tp_wake_fd = -1;

/* The wait's spin controller, set up on the first wait (MPIV_SPIN). */
static struct spin *
tp_spin_get(void)
{
	if (!tp_spin_ready) {
		/* Unset: adaptive (spin.h), in both protocols. */
		spin_init(&tp_spin, getenv("MPIV_SPIN"),
		    (int)sysconf(_SC_NPROCESSORS_ONLN));
		tp_spin_ready = true;
	}
	return &tp_spin;
}

/*
 * One round of progress: polls every socket (CMs, the ctrl pipe, peers)
 * and services what is ready. timeout_ms as mpiv_tp_progress, with the
 * spin before a sleep (spin.c); or, sleep_us > 0, one poll of at most
 * sleep_us without spinning (the backoff of a fruitless non-blocking
 * call, mpiv_tp_poll_done).
 */
static int
tp_progress(int timeout_ms, long sleep_us)
{
	int ndp = dp_poll_count();
	struct pollfd pfd[tp_nconns + 1 + ndp + 1];
	int i, n, rc, nfds = tp_nconns, ctrl = mpiv_ckpt_ctrl_fd(), dp0, ndpf, dpt;
	int wr;
	bool ready = false;
	struct spin_wait w;

	if (tp_err != NULL)
		return MPI_ERR_PROC_FAILED;
	if (dp_active && dpx_due()) {
		/* the replay is over: held receives take what is here, and
		   the caller looks again before anything sleeps */
		dpx_tick();
		return tp_err != NULL ? MPI_ERR_PROC_FAILED : MPI_SUCCESS;
	}
	for (i = 0; i < tp_nconns; i++) {
		pfd[i].fd = tp_conns[i].fd;
		pfd[i].events = POLLIN |
		    (tp_conn_out_due(&tp_conns[i]) ? POLLOUT : 0);
		pfd[i].revents = 0;
		/* Opened plaintext waits in the session: no sleeping. */
		ready |= tp_conn_in_ready(&tp_conns[i]);
	}
	/* The node's ctrl pipe (checkpoint requests, go) rides along. */
	if (ctrl >= 0) {
		pfd[nfds].fd = ctrl;
		pfd[nfds].events = POLLIN;
		pfd[nfds].revents = 0;
		nfds++;
	}
	/* The direct protocol's listener and links to peers. */
	dp0 = nfds;
	ndpf = dp_poll_fill(pfd + dp0, ndp);
	nfds += ndpf;
	/* The Finalize keeper's child: its end ends the wait. */
	if (tp_wake_fd >= 0) {
		pfd[nfds].fd = tp_wake_fd;
		pfd[nfds].events = POLLIN;
		pfd[nfds].revents = 0;
		nfds++;
	}
	dpt = dp_timeout_ms();
	if (dp_poll_ready())
		ready = true;
	if (ready) {
		/* Something to read without the sockets: a look at them
		   without waiting, then everything is handled. */
		rc = poll(pfd, (nfds_t)nfds, 0);
		if (rc < 0 && errno != EINTR)
			return MPI_ERR_INTERN;
		if (rc < 0)
			rc = 0;
		goto handle;
	}
	if (sleep_us > 0) {
		struct timespec ts;

		/* A timed step of the direct protocol due sooner wins. */
		if (dpt >= 0 && (long)dpt * 1000 < sleep_us)
			sleep_us = (long)dpt * 1000;
		ts.tv_sec = sleep_us / 1000000;
		ts.tv_nsec = (sleep_us % 1000000) * 1000;
		rc = ppoll(pfd, (nfds_t)nfds, &ts, NULL);
		if (rc < 0 && errno == EINTR)
			return MPI_SUCCESS;
		if (rc < 0)
			return MPI_ERR_INTERN;
		goto handle;
	}
	if (dpt >= 0 && (timeout_ms < 0 || dpt < timeout_ms))
		timeout_ms = dpt;
	/* A blocked rank tells what it waits for, every second. */
	if (timeout_ms != 0 && (wr = mpiv_waitrep_tick()) >= 0 &&
	    (timeout_ms < 0 || wr < timeout_ms))
		timeout_ms = wr;
	if (timeout_ms != 0)
		spin_begin(tp_spin_get(), &w, mono_us());
	for (;;) {
		int t = timeout_ms;

		/* A bounded spin of polls that do not sleep, the CPU yielded
		   between two, before the poll that sleeps (spin.c): it
		   saves a wake-up on fast replies. */
		if (timeout_ms != 0 &&
		    (t = spin_next(&w, mono_us(), timeout_ms)) == 0 &&
		    w.polls > 1)
			sched_yield();
		rc = poll(pfd, (nfds_t)nfds, t);
		if (rc < 0 && errno == EINTR) {
			if (timeout_ms == 0)
				return MPI_SUCCESS;
			continue;
		}
		if (rc < 0)
			return MPI_ERR_INTERN;
		if (rc > 0 || t != 0 || timeout_ms == 0)
			break;
	}
	if (timeout_ms != 0)
		spin_end(&tp_spin, &w, mono_us(), rc > 0);
handle:
	if (rc == 0 && !ready) {
		dp_poll_handle(NULL, 0);	/* timed steps */
		return tp_err != NULL ? MPI_ERR_PROC_FAILED : MPI_SUCCESS;
	}
	if (ctrl >= 0 && pfd[tp_nconns].revents != 0)
		mpiv_ckpt_ctrl_input();
	for (i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];

		n = pfd[i].revents;
		if (tp_conn_in_ready(c))
			n |= POLLIN;
		if (n == 0 || c->dead)
			continue;
		/* Read first (it also notices a hangup), then write. */
		if (n & (POLLIN | POLLHUP | POLLERR))
			tp_read(c);
		if (!c->dead && tp_conn_out_due(c))
			tp_write(c);
	}
	dp_poll_handle(pfd + dp0, ndpf);
	return tp_err != NULL ? MPI_ERR_PROC_FAILED : MPI_SUCCESS;
}

void
mpiv_tp_wake_fd(int fd)
{
	tp_wake_fd = fd;
}

int
mpiv_tp_progress(int timeout_ms)
{
	return tp_progress(timeout_ms, 0);
}

/* The backoff of fruitless non-blocking calls, set up on the first call
   (MPIV_POLL_BACKOFF, pollback.c). */
static struct pollback *
tp_pollback_get(void)
{
	if (!tp_pollback_ready) {
		pollback_init(&tp_pollback, getenv("MPIV_POLL_BACKOFF"),
		    (int)sysconf(_SC_NPROCESSORS_ONLN),
		    mpiv_state.world_size, mpiv_proto == &mpiv_proto_direct);
		tp_pollback_ready = true;
	}
	return &tp_pollback;
}

void
mpiv_tp_poll_done(long entry, bool found)
{
	struct pollback *pb = tp_pollback_get();
	long us;

	/* A re-execution imposing logged outcomes waits for nothing. */
	if (!found && mpiv_ndlog_replaying())
		found = true;
	enum pb_action a = pollback_next(pb, entry, mono_us(), found, &us);

	/* a long run of fruitless calls is a wait too */
	mpiv_waitrep_poll(pb->polls > 0 ? pb->run_start : -1);
	switch (a) {
	case PB_YIELD:
		sched_yield();
		break;
	case PB_SLEEP:
		/* An error stays in tp_err: the next call reports it. */
		(void)tp_progress(0, us);
		break;
	case PB_NONE:
		break;
	}
	pollback_returned(pb, mono_us());
}

int
mpiv_tp_flush(void)
{
	for (;;) {
		bool pending = false;
		int i, rc;

		for (i = 0; i < tp_nconns; i++)
			if (tp_conn_out_due(&tp_conns[i]))
				pending = true;
		if (!pending)
			return MPI_SUCCESS;
		if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
			return rc;
	}
}

/*
 * Flush{id} to every CM we sent to since the last time, then waits for
 * each FlushAck: every message sent so far is complete at its CM and in
 * its store. MPI code.
 */
int
mpiv_tp_sync_cms(void)
{
	Mpiv__Flush fl = MPIV__FLUSH__INIT;
	int rc;

	for (int i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];

		if (c->unflushed == 0)
			continue;
		fl.id = ++c->flush_sent;
		if ((rc = mpiv_tp_send(i, MPIV__MSG_TYPE__MSG_FLUSH, &fl.base,
		    NULL, 0, NULL, NULL)) != MPI_SUCCESS)
			return rc;
		c->unflushed = 0;
	}
	for (int i = 0; i < tp_nconns; i++)
		while (tp_conns[i].flush_acked < tp_conns[i].flush_sent)
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
	return MPI_SUCCESS;
}
