/*
 * conn.c: framed, non-blocking connections on a libev loop (see conn.h;
 * conn_priv.h says what lives in pbuf.c, conn_auth.c and conn_gate.c).
 *
 * Reading is a three-state machine (header, meta, payload). The header is
 * validated by frame_parse_header before anything is allocated; meta is
 * unpacked straight from the read buffer when it is all there; payloads
 * are read directly into their destination once the read buffer is empty.
 *
 * Writing is a queue of (header+meta bytes, payload) entries flushed with
 * one gathered sendmsg. A payload is either copied into the entry or
 * referenced through a pbuf that another connection may still be filling
 * (cut-through relay): a writer that reached the filled edge of a pbuf
 * parks itself on the pbuf's waiter list and pbuf_advance wakes it.
 *
 * Closing is always deferred to the loop: conn_close only marks the
 * connection and arms a maximum-priority idle watcher, whose callback
 * calls on_close and frees the connection. So a callback may close its
 * own connection (or any other) without the struct vanishing under it.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn_priv.h"
#include "log.h"
#include "net.h"

#define CONN_RBUF	  (16u * 1024)
#define CONN_IOV_MAX	  64
#define CONN_READS_PER_CB 16
/* Largest read() straight into a payload: a relayed payload is forwarded
   in pieces of at most this size, so that the relay's copy out overlaps
   the receiver's copy in (cut-through) instead of following it. */
#define CONN_PAYLOAD_CHUNK (256u * 1024)
#define CONN_FLUSH_TMO	  2.0	/* seconds a flushing close may take */

static void conn_flush(struct conn *c);
static bool conn_seal_pending(const struct conn *c);
static void conn_schedule(struct conn *c);
static bool conn_linger(struct conn *c);

/*
 * Batching (conn_set_batching): while a connection's input is being
 * processed (one read() and the frames it completes), flushes of batching
 * connections are deferred to the end of that processing, so that every
 * frame queued for one peer because of one read, and the payload bytes
 * the same read delivered, leave in one sendmsg. Per thread: a loop and
 * its connections live in one thread.
 */
static _Thread_local struct {
	int depth;
	struct conn *head, *tail;
	void (*hook)(void *);	/* conn_set_batch_hook */
	void *hook_arg;
} conn_batch;

void
conn_set_batch_hook(void (*fn)(void *), void *arg)
{
	conn_batch.hook = fn;
	conn_batch.hook_arg = arg;
}

bool
conn_batching_now(void)
{
	return conn_batch.depth > 0;
}

static void
conn_batch_begin(void)
{
	conn_batch.depth++;
}

static void
conn_batch_remove(struct conn *c)
{
	struct conn *p, **pp;

	if (!c->pending)
		return;
	p = NULL;
	for (pp = &conn_batch.head; *pp != NULL; pp = &(*pp)->pend_next) {
		if (*pp == c) {
			*pp = c->pend_next;
			if (conn_batch.tail == c)
				conn_batch.tail = p;
			break;
		}
		p = *pp;
	}
	c->pending = false;
	c->pend_next = NULL;
}

static void
conn_batch_end(void)
{
	struct conn *c;

	if (--conn_batch.depth > 0)
		return;
	if (conn_batch.hook != NULL)
		conn_batch.hook(conn_batch.hook_arg);
	while ((c = conn_batch.head) != NULL) {
		conn_batch.head = c->pend_next;
		if (conn_batch.head == NULL)
			conn_batch.tail = NULL;
		c->pending = false;
		c->pend_next = NULL;
		conn_flush(c);
	}
}

/* Flushes now, or at the end of the current batch. */
void
conn_want_flush(struct conn *c)
{
	if (!c->batch || conn_batch.depth == 0) {
		conn_flush(c);
		return;
	}
	if (c->pending)
		return;
	c->pending = true;
	c->pend_next = NULL;
	if (conn_batch.tail != NULL)
		conn_batch.tail->pend_next = c;
	else
		conn_batch.head = c;
	conn_batch.tail = c;
}
/* ---------------- connection life ---------------- */

static void conn_on_read(struct ev_loop *loop, ev_io *w, int revents);
static void conn_on_write(struct ev_loop *loop, ev_io *w, int revents);
static void conn_on_idle(struct ev_loop *loop, ev_idle *w, int revents);
static void conn_on_flush_timeout(struct ev_loop *loop, ev_timer *w,
    int revents);

/* Formats "ip:port" of the peer, or "fd N" for non-sockets. */
static void
conn_fill_peer(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[64], p[16];

	snprintf(c->peer, sizeof(c->peer), "fd%d", c->fd);
	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) < 0)
		return;
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) {
		snprintf(c->peer, sizeof(c->peer), "local:fd%d", c->fd);
		return;
	}
	if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
	    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return;
	if (ss.ss_family == AF_INET6)
		snprintf(c->peer, sizeof(c->peer), "[%s]:%s", h, p);
	else
		snprintf(c->peer, sizeof(c->peer), "%s:%s", h, p);
}

struct conn *
conn_new(struct ev_loop *loop, int fd, const struct conn_ops *ops,
    void *udata)
{
	struct conn *c;
	struct stat st;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("conn_new: calloc");
		return NULL;
	}
	if (net_set_nonblock(fd) < 0) {
		log_warn("conn_new: fd=%d non-blocking", fd);
		free(c);
		return NULL;
	}
	c->loop = loop;
	c->fd = fd;
	c->is_sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	if (c->is_sock)
		(void)net_set_nodelay(fd);	/* fails harmlessly on AF_UNIX */
	c->ops = ops;
	c->udata = udata;
	c->wq_tail = &c->wq_head;
	c->rbuf = c->rsmall;
	c->rcap = sizeof(c->rsmall);
	conn_fill_peer(c);
	ev_io_init(&c->rio, conn_on_read, fd, EV_READ);
	c->rio.data = c;
	ev_io_init(&c->wio, conn_on_write, fd, EV_WRITE);
	c->wio.data = c;
	ev_idle_init(&c->idle, conn_on_idle);
	ev_set_priority(&c->idle, EV_MAXPRI);
	c->idle.data = c;
	ev_timer_init(&c->flush_tmr, conn_on_flush_timeout, CONN_FLUSH_TMO, 0.);
	c->flush_tmr.data = c;
	ev_io_start(loop, &c->rio);
	return c;
}

void *
conn_udata(struct conn *c)
{
	return c->udata;
}

void
conn_set_udata(struct conn *c, void *udata)
{
	c->udata = udata;
}

void
conn_set_batching(struct conn *c, bool on)
{
	c->batch = on;
	if (!on && c->pending) {
		conn_batch_remove(c);
		conn_flush(c);
	}
}

int
conn_fd(struct conn *c)
{
	return c->fd;
}

const char *
conn_peer(struct conn *c)
{
	return c->peer;
}

const char *
conn_cipher(const struct conn *c)
{
	return c->seal.on ? seal_cipher_name(c->seal.tx.cipher) : "plaintext";
}

size_t
conn_queued(struct conn *c)
{
	return c->queued;
}

bool
conn_is_closing(const struct conn *c)
{
	return c->closing;
}

static void
conn_schedule(struct conn *c)
{
	if (!ev_is_active(&c->idle))
		ev_idle_start(c->loop, &c->idle);
}

static void
conn_wq_free(struct conn *c)
{
	struct conn_wbuf *wb, *next;

	for (wb = c->wq_head; wb != NULL; wb = next) {
		next = wb->next;
		pbuf_unref(wb->pb);
		free(wb->buf);
		free(wb);
	}
	c->wq_head = NULL;
	c->wq_tail = &c->wq_head;
	c->queued = 0;
}

/* Final step of a close, from the loop: on_close, then free everything. */
static void
conn_destroy(struct conn *c)
{
	ev_io_stop(c->loop, &c->rio);
	ev_io_stop(c->loop, &c->wio);
	ev_idle_stop(c->loop, &c->idle);
	ev_timer_stop(c->loop, &c->flush_tmr);
	pbuf_wait_del(c);
	conn_batch_remove(c);
	conn_gate_leave(c);
	close(c->fd);
	c->fd = -1;
	if (c->ops->on_close != NULL)
		c->ops->on_close(c, c->reason);
	conn_wq_free(c);
	frame_free_meta(c->meta);
	frame_free_meta(c->hello ? &c->hello->base : NULL);
	auth_wipe(&c->akey, sizeof(c->akey));
	seal_kx_wipe(&c->kx);
	seal_end(&c->seal);
	free(c->mbuf);
	if (c->payload_owned)
		free(c->payload);
	if (c->rbuf != c->rsmall)
		free(c->rbuf);
	free(c);
}

void
conn_close(struct conn *c, const char *reason, bool flush)
{
	if (c->closing) {
		/* A later hard close overrides a pending flush. */
		if (!flush && c->flushing) {
			c->flushing = false;
			ev_io_stop(c->loop, &c->wio);
			pbuf_wait_del(c);
			conn_schedule(c);
		}
		return;
	}
	if (!flush && c->pending) {
		/* What an unbatched conn would already have written goes out
		   before a hard close, as it would have without batching. */
		conn_batch_remove(c);
		conn_flush(c);
		if (c->closing)
			return;		/* the flush failed and closed it */
	}
	c->closing = true;
	snprintf(c->reason, sizeof(c->reason), "%s",
	    reason != NULL ? reason : "closed");
	ev_io_stop(c->loop, &c->rio);
	if (flush && (c->wq_head != NULL || conn_seal_pending(c))) {
		c->flushing = true;
		ev_timer_start(c->loop, &c->flush_tmr);
		return;
	}
	if (flush && conn_linger(c))
		return;
	ev_io_stop(c->loop, &c->wio);
	pbuf_wait_del(c);
	conn_schedule(c);
}

static void
conn_on_flush_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct conn *c = w->data;

	log_debug("conn peer=%s flush timed out, closing", c->peer);
	conn_close(c, c->reason, false);
}

static void conn_drain(struct conn *c);
static void conn_read_some(struct conn *c);

static void
conn_on_idle(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct conn *c = w->data;

	ev_idle_stop(loop, w);
	if (c->closing) {
		if (!c->flushing || (c->wq_head == NULL &&
		    !conn_seal_pending(c)))
			conn_destroy(c);
		return;
	}
	if (c->seal_more && !c->paused) {
		c->seal_more = false;
		conn_read_some(c);
	}
	if (c->resume_pending && !c->paused) {
		c->resume_pending = false;
		conn_batch_begin();
		conn_drain(c);
		conn_batch_end();
		if (!c->closing && !c->paused)
			ev_io_start(loop, &c->rio);
		if (!c->closing && !c->paused && c->seal_rd &&
		    seal_readable(&c->seal))
			conn_read_some(c);	/* opened plaintext waits */
	}
}

void
conn_pause_read(struct conn *c, bool pause)
{
	if (c->closing || c->paused == pause)
		return;
	c->paused = pause;
	if (pause) {
		ev_io_stop(c->loop, &c->rio);
		c->resume_pending = false;
		return;
	}
	/* Bytes may already sit in the read buffer: drain them from the loop. */
	c->resume_pending = true;
	conn_schedule(c);
}

bool
conn_read_paused(const struct conn *c)
{
	return c->paused;
}

/* ---------------- reading ---------------- */

static void
conn_fail(struct conn *c, const char *what, const char *detail)
{
	char buf[192];

	snprintf(buf, sizeof(buf), "%s: %s", what, detail);
	conn_close(c, buf, false);
}

/* Hands the completed frame to on_frame and rearms for the next header. */
static void
conn_frame_done(struct conn *c)
{
	struct frame_hdr h = c->h;
	ProtobufCMessage *meta = c->meta;
	uint8_t *payload = c->payload;

	c->meta = NULL;
	c->payload = NULL;
	c->payload_owned = false;
	c->p_have = 0;
	c->hdr_have = 0;
	c->rstate = CONN_R_HDR;
	if (c->astate != CONN_A_OFF && c->astate != CONN_A_DONE &&
	    conn_auth_frame(c, &h, meta)) {
		frame_free_meta(meta);
		return;
	}
	c->ops->on_frame(c, &h, meta, payload);
	frame_free_meta(meta);
}

/* Meta is unpacked: pick the payload buffer or finish a payload-less frame. */
static void
conn_meta_done(struct conn *c, const uint8_t *mbytes)
{
	const char *err = NULL;

	c->meta = frame_unpack_meta(c->h.type, mbytes, c->h.meta_len, &err);
	free(c->mbuf);
	c->mbuf = NULL;
	c->m_have = 0;
	if (c->meta == NULL) {
		conn_fail(c, "protocol error", err ? err : "bad meta");
		return;
	}
	if (c->h.payload_len == 0) {
		conn_frame_done(c);
		return;
	}
	c->payload = NULL;
	if (c->ops->on_header != NULL)
		c->payload = c->ops->on_header(c, &c->h, c->meta);
	if (c->closing)
		return;
	if (c->payload == NULL) {
		if ((c->payload = malloc(c->h.payload_len)) == NULL) {
			log_warnx("conn peer=%s cannot allocate payload bytes=%u",
			    c->peer, c->h.payload_len);
			conn_fail(c, "out of memory", "payload");
			return;
		}
		c->payload_owned = true;
	}
	c->p_have = 0;
	c->rstate = CONN_R_PAYLOAD;
}

/* n more payload bytes landed: report progress, finish the frame if whole. */
static void
conn_payload_got(struct conn *c, size_t n)
{
	c->p_have += n;
	if (c->ops->on_progress != NULL)
		c->ops->on_progress(c, c->p_have);
	if (c->closing)
		return;
	if (c->p_have == c->h.payload_len)
		conn_frame_done(c);
}

/*
 * Consumes bytes in the read buffer until it is empty, the connection
 * pauses, or it closes.
 */
static void
conn_drain(struct conn *c)
{
	const char *err = NULL;
	size_t have, take;

	while (c->r_off < c->r_len && !c->closing && !c->paused) {
		have = c->r_len - c->r_off;
		switch (c->rstate) {
		case CONN_R_HDR:
			take = FRAME_HDR_LEN - c->hdr_have;
			if (take > have)
				take = have;
			memcpy(c->hdr + c->hdr_have, c->rbuf + c->r_off, take);
			c->hdr_have += take;
			c->r_off += take;
			if (c->hdr_have < FRAME_HDR_LEN)
				break;
			if (frame_parse_header(c->hdr, &c->h, &err) < 0) {
				conn_fail(c, "protocol error", err);
				return;
			}
			if (c->astate != CONN_A_OFF &&
			    c->astate != CONN_A_DONE && conn_auth_header(c) < 0)
				return;
			c->rstate = CONN_R_META;
			c->m_have = 0;
			if (c->h.meta_len <= c->r_len - c->r_off) {
				/* Common case: meta is all in the buffer. */
				const uint8_t *m = c->rbuf + c->r_off;
				c->r_off += c->h.meta_len;
				conn_meta_done(c, m);
				break;
			}
			if ((c->mbuf = malloc(c->h.meta_len)) == NULL) {
				conn_fail(c, "out of memory", "frame meta");
				return;
			}
			break;
		case CONN_R_META:
			take = c->h.meta_len - c->m_have;
			if (take > have)
				take = have;
			memcpy(c->mbuf + c->m_have, c->rbuf + c->r_off, take);
			c->m_have += take;
			c->r_off += take;
			if (c->m_have == c->h.meta_len)
				conn_meta_done(c, c->mbuf);
			break;
		case CONN_R_PAYLOAD:
			take = c->h.payload_len - c->p_have;
			if (take > have)
				take = have;
			memcpy(c->payload + c->p_have, c->rbuf + c->r_off, take);
			c->r_off += take;
			conn_payload_got(c, take);
			break;
		}
	}
	if (c->r_off == c->r_len)
		c->r_off = c->r_len = 0;
}

/*
 * Gives an authenticated conn (or one that never authenticates: dialled,
 * or without a handshake) its full-size read buffer, at its first read
 * with the small one empty. A conn whose Hello is still awaited keeps
 * reading through the small one, so a flood of unauthenticated conns
 * costs no CONN_RBUF each. Without memory it stays small (slower only).
 */
static void
conn_grow_rbuf(struct conn *c)
{
	uint8_t *p;

	if (c->rbuf != c->rsmall || c->astate == CONN_A_S_HELLO ||
	    c->r_off != c->r_len)
		return;
	if ((p = malloc(CONN_RBUF)) == NULL)
		return;
	c->rbuf = p;
	c->rcap = CONN_RBUF;
	c->r_off = c->r_len = 0;
}

/*
 * One read(): straight into the payload when the buffer is empty and a
 * payload is being read, else into the read buffer. Returns bytes read,
 * 0 when nothing more for now, -1 when the connection is closing.
 */
/* read(2), or seal_read once the peer writes sealed. */
static ssize_t
conn_read_fd(struct conn *c, void *buf, size_t n)
{
	if (c->seal_rd)
		return seal_read(&c->seal, c->fd, buf, n);
	return read(c->fd, buf, n);
}

/*
 * The handshake's last plaintext frame came in: what the read buffer
 * holds past it is the first ciphertext, and every read from now on
 * goes through the seal.
 */
void
conn_seal_rd_start(struct conn *c)
{
	if (seal_feed(&c->seal, c->rbuf + c->r_off, c->r_len - c->r_off) < 0) {
		conn_fail(c, "decrypt", "out of memory");
		return;
	}
	c->r_off = c->r_len;
	c->seal_rd = true;
	/* bytes fed may hold whole records: read on from the loop */
	c->seal_more = true;
	conn_schedule(c);
}

static ssize_t
conn_read_once(struct conn *c, bool *drained)
{
	ssize_t n;
	size_t want;
	bool direct = c->rstate == CONN_R_PAYLOAD && c->r_off == c->r_len;

	*drained = false;
	if (direct) {
		want = c->h.payload_len - c->p_have;
		if (want > CONN_PAYLOAD_CHUNK)
			want = CONN_PAYLOAD_CHUNK;
		n = conn_read_fd(c, c->payload + c->p_have, want);
	} else {
		conn_grow_rbuf(c);
		want = c->rcap;
		n = conn_read_fd(c, c->rbuf, want);
	}
	if (n == 0) {
		if (c->rstate == CONN_R_HDR && c->hdr_have == 0)
			conn_close(c, "peer closed", false);
		else
			conn_close(c, "peer closed mid-frame (truncated)", false);
		return -1;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		if (errno == EBADMSG)
			conn_fail(c, "decrypt", "a record failed to open "
			    "(altered, replayed or not from the peer)");
		else
			conn_fail(c, "read", strerror(errno));
		return -1;
	}
	/* A short read emptied the socket: the read that would say EAGAIN
	   is saved (level-triggered, the loop calls again when more comes).
	   Not so while opened plaintext waits in the seal. */
	*drained = (size_t)n < want &&
	    !(c->seal_rd && seal_readable(&c->seal));
	if (direct) {
		conn_payload_got(c, (size_t)n);
	} else {
		c->r_off = 0;
		c->r_len = (size_t)n;
		conn_drain(c);
	}
	return c->closing ? -1 : n;
}

/*
 * A bounded number of reads so one busy peer cannot starve others.
 * What each read made us send leaves before the next read. Plaintext
 * the seal opened but we did not take yet is invisible to the loop's
 * read watcher: the idle watcher comes back for it.
 */
static void
conn_read_some(struct conn *c)
{
	ssize_t n;
	bool drained;

	for (int i = 0; i < CONN_READS_PER_CB; i++) {
		if (c->closing || c->paused)
			return;
		conn_batch_begin();
		n = conn_read_once(c, &drained);
		conn_batch_end();
		if (n <= 0 || drained)
			break;
	}
	if (!c->closing && !c->paused && c->seal_rd &&
	    seal_readable(&c->seal)) {
		c->seal_more = true;
		conn_schedule(c);
	}
}

static void
conn_on_read(struct ev_loop *loop, ev_io *w, int revents)
{
	conn_read_some(w->data);
}

/* ---------------- writing ---------------- */

static void
conn_enqueue(struct conn *c, struct conn_wbuf *wb)
{
	bool was_empty = c->wq_head == NULL;

	*c->wq_tail = wb;
	c->wq_tail = &wb->next;
	c->queued += wb->len + (wb->pb ? wb->pb->len : 0);
	if (was_empty)
		conn_want_flush(c);
}

int
conn_send(struct conn *c, uint16_t type, const ProtobufCMessage *meta,
    const void *payload, uint32_t payload_len)
{
	struct conn_wbuf *wb;
	size_t mlen, cap;
	bool seal_after = false;

	Mpiv__HelloReply hr;

	if (c->closing)
		return -1;
	if (meta == NULL || frame_descriptor(type) != meta->descriptor) {
		log_warnx("conn_send: meta does not match type=%s",
		    frame_type_name(type));
		errno = EINVAL;
		return -1;
	}
	if (type == MPIV__MSG_TYPE__MSG_HELLO &&
	    c->astate == CONN_A_C_CHALLENGE && c->hello == NULL)
		return conn_auth_hold_hello(c, meta);
	if (type == MPIV__MSG_TYPE__MSG_HELLO_REPLY &&
	    c->astate == CONN_A_S_REPLY) {
		/* The first reply to a proven Hello proves us in turn, and
		   is our last plaintext frame. */
		if (c->as != NULL && c->as->enabled) {
			hr = *(const Mpiv__HelloReply *)meta;
			hr.auth_proof.data = c->proof_s;
			hr.auth_proof.len = sizeof(c->proof_s);
			meta = &hr.base;
		}
		seal_after = c->seal.on;
		conn_auth_set(c, CONN_A_DONE);
	}
	mlen = protobuf_c_message_get_packed_size(meta);
	cap = FRAME_HDR_LEN + mlen + payload_len;
	if ((wb = calloc(1, sizeof(*wb))) == NULL)
		return -1;
	if ((wb->buf = malloc(cap)) == NULL) {
		log_warnx("conn peer=%s cannot allocate send bytes=%zu", c->peer,
		    cap);
		free(wb);
		errno = ENOMEM;
		return -1;
	}
	wb->len = frame_encode_into(type, meta, payload_len, wb->buf, cap);
	if (wb->len == 0) {
		free(wb->buf);
		free(wb);
		errno = EINVAL;
		return -1;
	}
	if (payload_len > 0)
		memcpy(wb->buf + wb->len, payload, payload_len);
	wb->len += payload_len;
	wb->seal_after = seal_after;
	conn_enqueue(c, wb);
	return 0;
}

int
conn_send_pbuf(struct conn *c, uint16_t type, const ProtobufCMessage *meta,
    struct pbuf *pb)
{
	struct conn_wbuf *wb;

	if (c->closing)
		return -1;
	if ((wb = calloc(1, sizeof(*wb))) == NULL)
		return -1;
	if ((wb->buf = frame_encode(type, meta, pb->len, &wb->len)) == NULL) {
		log_warnx("conn_send_pbuf: cannot encode type=%s",
		    frame_type_name(type));
		free(wb);
		return -1;
	}
	pbuf_ref(pb);
	wb->pb = pb;
	conn_enqueue(c, wb);
	return 0;
}

static bool
conn_seal_pending(const struct conn *c)
{
	return c->seal_wr && seal_pending(&c->seal) > 0;
}

static void
conn_write_failed(struct conn *c)
{
	int err = errno;

	ev_io_stop(c->loop, &c->wio);
	c->flushing = false;
	conn_fail(c, "write", strerror(err));
	conn_schedule(c);
}

static ssize_t
conn_writev(struct conn *c, struct iovec *iov, int n)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };

	if (c->is_sock)
		return sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	return writev(c->fd, iov, n);
}

/* Drops fully written entries after n bytes went out. */
static void
conn_advance(struct conn *c, size_t n)
{
	struct conn_wbuf *wb;
	size_t take;

	c->queued -= n;
	while ((wb = c->wq_head) != NULL) {
		take = wb->len - wb->off;
		if (take > n)
			take = n;
		wb->off += take;
		n -= take;
		if (wb->pb != NULL && wb->off == wb->len) {
			take = wb->pb->avail - wb->poff;
			if (take > n)
				take = n;
			wb->poff += (uint32_t)take;
			n -= take;
		}
		if (wb->off < wb->len ||
		    (wb->pb != NULL && wb->poff < wb->pb->len))
			break;
		c->wq_head = wb->next;
		if (c->wq_head == NULL)
			c->wq_tail = &c->wq_head;
		if (wb->seal_after)
			c->seal_wr = true;	/* our last plaintext frame is out */
		pbuf_unref(wb->pb);
		free(wb->buf);
		free(wb);
	}
}

/*
 * Writes as much of the queue as the socket takes. Parks on a pbuf when
 * the head entry needs bytes not yet received; arms EV_WRITE on EAGAIN.
 */
static void
conn_flush(struct conn *c)
{
	struct iovec iov[CONN_IOV_MAX];
	struct conn_wbuf *wb;
	struct pbuf *blocked;
	ssize_t w;
	int n;

	if (c->closing && !c->flushing)
		return;
	if (c->astate == CONN_A_C_CHALLENGE)
		return;		/* nothing leaves before our Hello */
	pbuf_wait_del(c);
	while (c->wq_head != NULL || conn_seal_pending(c)) {
		/* ciphertext sealed earlier leaves before anything new */
		if (conn_seal_pending(c) && seal_flush(&c->seal, c->fd) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				ev_io_start(c->loop, &c->wio);
				return;
			}
			conn_write_failed(c);
			return;
		}
		if (c->wq_head == NULL)
			break;
		n = 0;
		blocked = NULL;
		for (wb = c->wq_head; wb != NULL && n < CONN_IOV_MAX - 1;
		    wb = wb->next) {
			if (wb->off < wb->len) {
				iov[n].iov_base = wb->buf + wb->off;
				iov[n++].iov_len = wb->len - wb->off;
			}
			if (wb->seal_after && !c->seal_wr)
				break;	/* what follows goes out sealed */
			if (wb->pb == NULL)
				continue;
			if (wb->poff < wb->pb->avail) {
				iov[n].iov_base = wb->pb->data + wb->poff;
				iov[n++].iov_len = wb->pb->avail - wb->poff;
			}
			if (wb->pb->avail < wb->pb->len) {
				blocked = wb->pb;
				break;
			}
		}
		if (n == 0 && blocked == NULL)
			break;		/* cannot happen: empty entries are popped */
		if (n == 0) {
			/* The head waits for relayed bytes still to come. */
			ev_io_stop(c->loop, &c->wio);
			if (blocked->failed) {
				conn_close(c, "relay source lost mid-payload",
				    false);
				return;
			}
			pbuf_wait_add(blocked, c);
			return;
		}
		if (c->seal_wr)
			w = seal_writev(&c->seal, c->fd, iov, n);
		else
			w = conn_writev(c, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				ev_io_start(c->loop, &c->wio);
				return;
			}
			conn_write_failed(c);
			return;
		}
		conn_advance(c, (size_t)w);
	}
	ev_io_stop(c->loop, &c->wio);
	/* flush finished: close now, or once the peer has read it all */
	if (c->closing && !(c->flushing && conn_linger(c)))
		conn_schedule(c);
}

/*
 * Reading after our FIN until the peer's (or the flush timeout): bytes
 * the peer still sends are dropped. Closing with unread bytes in the
 * socket would send a reset, and a reset makes the peer's kernel drop
 * what we sent last and it has not read yet: the final Error (replay
 * diverged, fenced) or refusal that says why we close.
 */
static void
conn_on_linger(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn *c = w->data;
	char buf[4096];
	ssize_t n;

	for (int i = 0; i < 64; i++) {
		n = read(c->fd, buf, sizeof(buf));
		if (n > 0 || (n < 0 && errno == EINTR))
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		/* end of stream or an error: nothing left to protect */
		ev_io_stop(loop, w);
		c->flushing = false;
		conn_schedule(c);
		return;
	}
}

/* A closing socket whose output is all written: half-closes it and
   lingers (conn_on_linger). false when it cannot (then close now). */
static bool
conn_linger(struct conn *c)
{
	if (!c->is_sock || c->lingering || c->fd < 0 ||
	    shutdown(c->fd, SHUT_WR) < 0)
		return false;
	c->lingering = true;
	c->flushing = true;
	ev_io_stop(c->loop, &c->wio);
	ev_io_stop(c->loop, &c->rio);
	ev_set_cb(&c->rio, conn_on_linger);
	ev_io_start(c->loop, &c->rio);
	if (!ev_is_active(&c->flush_tmr))
		ev_timer_start(c->loop, &c->flush_tmr);
	return true;
}

static void
conn_on_write(struct ev_loop *loop, ev_io *w, int revents)
{
	conn_flush(w->data);
}
