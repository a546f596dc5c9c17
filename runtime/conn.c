/*
 * conn.c: framed, non-blocking connections on a libev loop (see conn.h).
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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "conn.h"
#include "log.h"
#include "net.h"

#define CONN_RBUF	  (16u * 1024)
/* Read buffer of a conn not yet authenticated (inside struct conn): a
   Hello fits, anything longer goes through mbuf, capped by
   CONN_PREAUTH_MAX_FRAME. */
#define CONN_RBUF_SMALL	  512u
#define CONN_IOV_MAX	  64
#define CONN_READS_PER_CB 16
/* Largest read() straight into a payload: a relayed payload is forwarded
   in pieces of at most this size, so that the relay's copy out overlaps
   the receiver's copy in (cut-through) instead of following it. */
#define CONN_PAYLOAD_CHUNK (256u * 1024)
#define CONN_FLUSH_TMO	  2.0	/* seconds a flushing close may take */

struct pb_region;

struct pbuf {
	uint8_t *data;
	struct pb_region *region;	/* big payloads: where data lives */
	uint32_t len;
	uint32_t avail;
	unsigned refs;
	bool failed;
	struct conn *waiters;	/* conns whose queue head waits for bytes */
};

struct conn_wbuf {
	struct conn_wbuf *next;
	uint8_t *buf;		/* header + meta, and a copied payload */
	size_t len;
	size_t off;
	struct pbuf *pb;	/* payload by reference, or NULL */
	uint32_t poff;
};

enum conn_rstate { CONN_R_HDR, CONN_R_META, CONN_R_PAYLOAD };

/* Where the authentication handshake stands (conn_auth_*). */
enum conn_astate {
	CONN_A_OFF = 0,		/* no handshake on this conn */
	CONN_A_S_HELLO,		/* server: Challenge sent, Hello expected */
	CONN_A_S_REPLY,		/* server: Hello proven, reply gets our proof */
	CONN_A_C_CHALLENGE,	/* keyed client: Hello held for the Challenge */
	CONN_A_C_REPLY,		/* keyed client: HelloReply must prove */
	CONN_A_C_SKIP,		/* keyless client: drop the Challenge */
	CONN_A_DONE,
};

struct conn {
	struct ev_loop *loop;
	int fd;
	bool is_sock;
	const struct conn_ops *ops;
	void *udata;
	char peer[96];

	ev_io rio;
	ev_io wio;
	ev_idle idle;		/* deferred work: close, resume */
	ev_timer flush_tmr;

	/* reading */
	enum conn_rstate rstate;
	uint8_t hdr[FRAME_HDR_LEN];
	size_t hdr_have;
	struct frame_hdr h;
	uint8_t *mbuf;
	size_t m_have;
	ProtobufCMessage *meta;
	uint8_t *payload;
	size_t p_have;
	bool payload_owned;	/* conn allocated it (free on close) */
	bool paused;
	bool resume_pending;
	size_t r_off, r_len;
	uint8_t *rbuf;		/* rsmall until authenticated, then malloc'ed */
	size_t rcap;
	uint8_t rsmall[CONN_RBUF_SMALL];

	/* writing */
	struct conn_wbuf *wq_head;
	struct conn_wbuf **wq_tail;
	size_t queued;
	struct pbuf *wait_pb;
	struct conn *wait_prev, *wait_next;
	bool batch;		/* conn_set_batching */
	bool pending;		/* on the batch's list of conns to flush */
	struct conn *pend_next;

	/* closing */
	bool closing;
	bool flushing;
	char reason[192];

	/* authentication */
	enum conn_astate astate;
	const struct auth_server *as;
	struct auth_key akey;		/* client: ours */
	bool have_challenge;
	bool auth_failed;
	Mpiv__Hello *hello;		/* client: the Hello held back */
	uint8_t nonce_s[AUTH_NONCE_LEN];
	uint8_t nonce_c[AUTH_NONCE_LEN];
	uint8_t proof_c[AUTH_HASH_LEN];
	uint8_t proof_s[AUTH_HASH_LEN];

	/* admission (conn_gate) */
	struct conn_gate *gate;
	struct gate_host *ghost;	/* while counted as unauthenticated */
	bool gate_unauth;
};

static void conn_flush(struct conn *c);
static void conn_schedule(struct conn *c);
static int conn_auth_header(struct conn *c);
static bool conn_auth_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *meta);
static int conn_auth_hold_hello(struct conn *c, const ProtobufCMessage *meta);
static void conn_gate_join(struct conn_gate *g, struct conn *c);
static void conn_gate_authed(struct conn *c);
static void conn_gate_leave(struct conn *c);

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
static void
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

/* ---------------- big payload memory ---------------- */

/*
 * Payloads of PB_BIG_MIN (32 KiB) and more do not come from malloc: a
 * Channel Memory that logs keeps every payload, so without checkpoints
 * freeing its log it never reuses memory, and malloc's heap grows into
 * fresh pages faulted in one by one while payloads are read into them.
 * They are carved from PB_ARENA arenas, 2 MiB-aligned (and, with
 * MPIV_CM_THP=1, advised for transparent huge pages; see pb_thp), faulted
 * in ahead of need by a helper thread when pbuf_prefault was called, or,
 * above PB_ARENA / 4, get a mapping of their own rounded to 2 MiB. An
 * arena whose buffers are all freed starts over (the current one) or is
 * kept as a spare (up to PB_SPARE_BYTES), so a relay that frees what it
 * forwarded keeps reusing warm memory. A buffer freed in an arena that
 * is no longer carved returns its whole pages at once, so one long-lived
 * buffer cannot pin a whole arena. Like the pbuf refcounts, this is not
 * thread-safe: pbufs belong to the thread of their loop.
 *
 * The threshold was 1 MiB while arenas were advised for huge pages: a
 * huge page's first touch zeroes 2 MiB inside the CM's read(), and on a
 * VM that hands free memory back to its host (virtio-balloon free page
 * reporting, as here) that costs milliseconds; 64 KiB Allreduce on 8
 * ranks went from 1.6-1.9 to 4.4-5.8 ms per call. Without the advice
 * (2026-11-24, logging CM, runs interleaved): that Allreduce 1.57-1.62
 * ms per call from arenas against 1.70-5.30 ms from malloc (whose heap
 * now met the same cold memory), 64 KiB ping-pong 94-100 µs against
 * 119-134 µs; 1 KiB and 8 KiB payloads showed no difference either way,
 * so they stay with malloc.
 */
#define PB_BIG_MIN	(32u << 10)
#define PB_ARENA	((size_t)16 << 20)
#define PB_HUGE		((size_t)2 << 20)
#define PB_ALIGN	64
#define PB_SPARE_BYTES	((size_t)64 << 20)

struct pb_region {
	uint8_t *base;
	size_t size;
	size_t used;		/* arenas: bytes carved */
	size_t live;		/* buffers not yet freed */
	bool dedicated;		/* one buffer's own mapping */
	bool retired;		/* an arena no longer carved */
	struct pb_region *next;	/* spares */
};

static struct pb_region *pb_cur;	/* the arena being carved */
static struct pb_region *pb_spares;
static size_t pb_spare_bytes;

/*
 * Whether arenas are advised for transparent huge pages: only with
 * MPIV_CM_THP=1. Measured on 2026-11-24 (1 MiB logging ping-pong, same
 * machine, runs interleaved): with THP 375-384 MB/s in some runs and
 * 1517-1645 in others, without 835-1230 in every run (4 and 16 MiB
 * alike). The slow runs are THP faults that compact memory first
 * (defrag "madvise" here): on a machine that has run for a while, free
 * 2 MiB blocks are scarce and each first touch costs milliseconds. A
 * steady 1 GB/s beats a coin toss between 0.4 and 1.6.
 */
static bool
pb_thp(void)
{
	static int thp = -1;
	const char *e;

	if (thp < 0) {
		e = getenv("MPIV_CM_THP");
		thp = e != NULL && strcmp(e, "1") == 0;
	}
	return thp == 1;
}

/* A 2 MiB-aligned anonymous mapping of size bytes (advised for THP with
   MPIV_CM_THP=1). */
static uint8_t *
pb_map(size_t size)
{
	uint8_t *raw, *base;
	size_t head;

	raw = mmap(NULL, size + PB_HUGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	base = (uint8_t *)(((uintptr_t)raw + PB_HUGE - 1) &
	    ~(uintptr_t)(PB_HUGE - 1));
	head = (size_t)(base - raw);
	if (head > 0)
		(void)munmap(raw, head);
	if (PB_HUGE - head > 0)
		(void)munmap(base + size, PB_HUGE - head);
#ifdef MADV_HUGEPAGE
	if (pb_thp())
		(void)madvise(base, size, MADV_HUGEPAGE);
#endif
	return base;
}

static void
pb_region_drop(struct pb_region *r)
{
	if (pb_spare_bytes + r->size <= PB_SPARE_BYTES) {
		r->used = 0;
		r->live = 0;
		r->retired = false;
		r->next = pb_spares;
		pb_spares = r;
		pb_spare_bytes += r->size;
		return;
	}
	(void)munmap(r->base, r->size);
	free(r);
}

/*
 * Prefaulted arenas. Without checkpoints that free its log, a logging CM
 * puts every big payload in fresh memory: 256 page faults per MiB (each
 * one zeroes a page) taken inside the loop's read(), on the message's
 * path. A helper thread maps arenas and faults them in beforehand
 * (MADV_POPULATE_WRITE, or one write per page on kernels before 5.14),
 * keeping pf_want of them ready, so the faults run on another core while
 * the loop relays. Measured 2026-11-24 (1 MiB logging ping-pong, 2 cores,
 * runs interleaved): 1110-1470 µs half round trip with fresh arenas,
 * 790-890 µs with arenas faulted in beforehand. Only the ready list
 * crosses threads (under pf_mu); regions, spares and pbufs stay the
 * loop's. Warm spares (arenas the log freed) are still taken first.
 */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static pthread_mutex_t pf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pf_cv = PTHREAD_COND_INITIALIZER;
static struct pb_region *pf_ready;	/* under pf_mu */
static int pf_nready;			/* under pf_mu */
static int pf_want;		/* set once before the thread starts */
static unsigned long pf_used;	/* the loop's */

static void
pf_touch(uint8_t *base, size_t size)
{
	size_t off;

	if (madvise(base, size, MADV_POPULATE_WRITE) == 0)
		return;
	for (off = 0; off < size; off += 4096)
		((volatile uint8_t *)base)[off] = 0;
}

static void *
pf_main(void *arg)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	struct pb_region *r;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&pf_mu);
		while (pf_nready >= pf_want)
			pthread_cond_wait(&pf_cv, &pf_mu);
		pthread_mutex_unlock(&pf_mu);
		if ((r = calloc(1, sizeof(*r))) == NULL ||
		    (r->base = pb_map(PB_ARENA)) == NULL) {
			free(r);
			nanosleep(&pause, NULL);	/* out of memory: later */
			continue;
		}
		r->size = PB_ARENA;
		pf_touch(r->base, r->size);
		pthread_mutex_lock(&pf_mu);
		r->next = pf_ready;
		pf_ready = r;
		pf_nready++;
		pthread_mutex_unlock(&pf_mu);
	}
	return NULL;
}

int
pbuf_prefault(int n)
{
	pthread_attr_t a;
	pthread_t t;
	sigset_t all, old;
	int rc;

	if (n <= 0 || pf_want > 0)
		return 0;
	(void)pb_thp();		/* its lazy init is not thread-safe */
	pf_want = n;
	/* The helper takes no signal: they stay the loop thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &a, pf_main, NULL);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pf_want = 0;
		errno = rc;
		return -1;
	}
	return 0;
}

int
pbuf_prefault_ready(void)
{
	int n;

	pthread_mutex_lock(&pf_mu);
	n = pf_nready;
	pthread_mutex_unlock(&pf_mu);
	return n;
}

unsigned long
pbuf_prefault_used(void)
{
	return pf_used;
}

/* A ready arena, or NULL (and the helper is asked for more). */
static struct pb_region *
pf_take(void)
{
	struct pb_region *r;

	if (pf_want == 0)
		return NULL;
	pthread_mutex_lock(&pf_mu);
	if ((r = pf_ready) != NULL) {
		pf_ready = r->next;
		pf_nready--;
		r->next = NULL;
	}
	pthread_cond_signal(&pf_cv);
	pthread_mutex_unlock(&pf_mu);
	if (r != NULL)
		pf_used++;
	return r;
}

/* A spare of exactly size bytes and the same kind, a prefaulted arena, or
   a new mapping. */
static struct pb_region *
pb_region_get(size_t size, bool dedicated)
{
	struct pb_region *r, **rp;

	for (rp = &pb_spares; (r = *rp) != NULL; rp = &r->next) {
		if (r->size == size && r->dedicated == dedicated) {
			*rp = r->next;
			pb_spare_bytes -= r->size;
			r->next = NULL;
			return r;
		}
	}
	if (!dedicated && size == PB_ARENA && (r = pf_take()) != NULL)
		return r;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if ((r->base = pb_map(size)) == NULL) {
		free(r);
		return NULL;
	}
	r->size = size;
	r->dedicated = dedicated;
	return r;
}

static uint8_t *
pb_big_alloc(size_t len, struct pb_region **out)
{
	struct pb_region *r;
	size_t need;
	uint8_t *p;

	if (len > PB_ARENA / 4) {
		need = (len + PB_HUGE - 1) & ~(PB_HUGE - 1);
		if ((r = pb_region_get(need, true)) == NULL)
			return NULL;
		r->live = 1;
		*out = r;
		return r->base;
	}
	need = (len + PB_ALIGN - 1) & ~(size_t)(PB_ALIGN - 1);
	if (pb_cur == NULL || pb_cur->size - pb_cur->used < need) {
		if ((r = pb_region_get(PB_ARENA, false)) == NULL)
			return NULL;
		if (pb_cur != NULL) {
			if (pb_cur->live == 0)
				pb_region_drop(pb_cur);
			else
				pb_cur->retired = true;
		}
		pb_cur = r;
	}
	r = pb_cur;
	p = r->base + r->used;
	r->used += need;
	r->live++;
	*out = r;
	return p;
}

static void
pb_big_free(struct pb_region *r, uint8_t *p, size_t len)
{
	uintptr_t lo, hi;

	if (--r->live == 0) {
		if (r == pb_cur)
			r->used = 0;	/* start over in warm memory */
		else
			pb_region_drop(r);
		return;
	}
	if (!r->retired)
		return;
	/* Others still live here: give back this buffer's whole pages. */
	lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	hi = ((uintptr_t)p + len) & ~(uintptr_t)4095;
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* ---------------- pbuf ---------------- */

struct pbuf *
pbuf_new(uint32_t len)
{
	struct pbuf *pb = calloc(1, sizeof(*pb));

	if (pb == NULL)
		return NULL;
	if (len >= PB_BIG_MIN)
		pb->data = pb_big_alloc(len, &pb->region);
	else
		pb->data = malloc(len ? len : 1);
	if (pb->data == NULL) {
		free(pb);
		return NULL;
	}
	pb->len = len;
	pb->refs = 1;
	return pb;
}

uint8_t *
pbuf_data(struct pbuf *pb)
{
	return pb->data;
}

uint32_t
pbuf_len(const struct pbuf *pb)
{
	return pb->len;
}

uint32_t
pbuf_avail(const struct pbuf *pb)
{
	return pb->avail;
}

bool
pbuf_failed(const struct pbuf *pb)
{
	return pb->failed;
}

void
pbuf_ref(struct pbuf *pb)
{
	pb->refs++;
}

void
pbuf_unref(struct pbuf *pb)
{
	if (pb == NULL || --pb->refs > 0)
		return;
	if (pb->region != NULL)
		pb_big_free(pb->region, pb->data, pb->len);
	else
		free(pb->data);
	free(pb);
}

static void
pbuf_wait_add(struct pbuf *pb, struct conn *c)
{
	c->wait_pb = pb;
	c->wait_prev = NULL;
	c->wait_next = pb->waiters;
	if (pb->waiters != NULL)
		pb->waiters->wait_prev = c;
	pb->waiters = c;
}

static void
pbuf_wait_del(struct conn *c)
{
	struct pbuf *pb = c->wait_pb;

	if (pb == NULL)
		return;
	if (c->wait_prev != NULL)
		c->wait_prev->wait_next = c->wait_next;
	else
		pb->waiters = c->wait_next;
	if (c->wait_next != NULL)
		c->wait_next->wait_prev = c->wait_prev;
	c->wait_pb = NULL;
	c->wait_prev = c->wait_next = NULL;
}

/* Wakes every writer parked on pb: each flushes what is now available. */
static void
pbuf_wake(struct pbuf *pb)
{
	struct conn *list = pb->waiters, *c, *next;

	pb->waiters = NULL;
	for (c = list; c != NULL; c = next) {
		next = c->wait_next;
		c->wait_pb = NULL;
		c->wait_prev = c->wait_next = NULL;
		conn_want_flush(c);
	}
}

void
pbuf_advance(struct pbuf *pb, uint32_t avail)
{
	if (avail > pb->len)
		avail = pb->len;
	if (avail <= pb->avail)
		return;
	pb->avail = avail;
	pbuf_wake(pb);
}

void
pbuf_fail(struct pbuf *pb)
{
	pb->failed = true;
	pbuf_wake(pb);
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
	if (flush && c->wq_head != NULL) {
		c->flushing = true;
		ev_timer_start(c->loop, &c->flush_tmr);
		return;
	}
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

static void
conn_on_idle(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct conn *c = w->data;

	ev_idle_stop(loop, w);
	if (c->closing) {
		if (!c->flushing || c->wq_head == NULL)
			conn_destroy(c);
		return;
	}
	if (c->resume_pending && !c->paused) {
		c->resume_pending = false;
		conn_batch_begin();
		conn_drain(c);
		conn_batch_end();
		if (!c->closing && !c->paused)
			ev_io_start(loop, &c->rio);
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
		n = read(c->fd, c->payload + c->p_have, want);
	} else {
		conn_grow_rbuf(c);
		want = c->rcap;
		n = read(c->fd, c->rbuf, want);
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
		conn_fail(c, "read", strerror(errno));
		return -1;
	}
	/* A short read emptied the socket: the read that would say EAGAIN
	   is saved (level-triggered, the loop calls again when more comes). */
	*drained = (size_t)n < want;
	if (direct) {
		conn_payload_got(c, (size_t)n);
	} else {
		c->r_off = 0;
		c->r_len = (size_t)n;
		conn_drain(c);
	}
	return c->closing ? -1 : n;
}

static void
conn_on_read(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn *c = w->data;

	ssize_t n;
	bool drained;

	/* A bounded number of reads so one busy peer cannot starve others.
	   What each read made us send leaves before the next read. */
	for (int i = 0; i < CONN_READS_PER_CB; i++) {
		if (c->closing || c->paused)
			return;
		conn_batch_begin();
		n = conn_read_once(c, &drained);
		conn_batch_end();
		if (n <= 0 || drained)
			return;
	}
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
		/* The first reply to a proven Hello proves us in turn. */
		hr = *(const Mpiv__HelloReply *)meta;
		hr.auth_proof.data = c->proof_s;
		hr.auth_proof.len = sizeof(c->proof_s);
		meta = &hr.base;
		c->astate = CONN_A_DONE;
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
	while (c->wq_head != NULL) {
		n = 0;
		blocked = NULL;
		for (wb = c->wq_head; wb != NULL && n < CONN_IOV_MAX - 1;
		    wb = wb->next) {
			if (wb->off < wb->len) {
				iov[n].iov_base = wb->buf + wb->off;
				iov[n++].iov_len = wb->len - wb->off;
			}
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
		w = conn_writev(c, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				ev_io_start(c->loop, &c->wio);
				return;
			}
			ev_io_stop(c->loop, &c->wio);
			c->flushing = false;
			conn_fail(c, "write", strerror(errno));
			conn_schedule(c);
			return;
		}
		conn_advance(c, (size_t)w);
	}
	ev_io_stop(c->loop, &c->wio);
	if (c->closing)
		conn_schedule(c);	/* flush finished: close now */
}

static void
conn_on_write(struct ev_loop *loop, ev_io *w, int revents)
{
	conn_flush(w->data);
}

/* ---------------- authentication ---------------- */

bool
conn_auth_failed(const struct conn *c)
{
	return c->auth_failed;
}

void
conn_auth_server(struct conn *c, const struct auth_server *as)
{
	Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;

	c->as = as;
	ch.version = AUTH_VERSION;
	if (as != NULL && as->enabled) {
		if (auth_random(c->nonce_s, sizeof(c->nonce_s)) < 0) {
			log_warn("conn peer=%s getrandom", c->peer);
			conn_close(c, "no random nonce", false);
			return;
		}
		ch.auth = true;
		ch.nonce.data = c->nonce_s;
		ch.nonce.len = sizeof(c->nonce_s);
	}
	c->astate = CONN_A_S_HELLO;
	if (as != NULL && as->gate != NULL)
		conn_gate_join(as->gate, c);
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, NULL, 0);
}

void
conn_auth_client(struct conn *c, const struct auth_key *key)
{
	if (key == NULL) {
		c->astate = CONN_A_C_SKIP;
		return;
	}
	c->akey = *key;
	c->astate = CONN_A_C_CHALLENGE;
}

/* Server: refuses the peer with a HelloReply it can read, then closes. */
static void
conn_auth_refuse(struct conn *c, const Mpiv__Hello *h, const char *why)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;

	log_warnx("auth refused peer=%s role=%d job=%s rank=%d name=\"%.64s\" "
	    "reason=\"%s\"", c->peer, h != NULL ? (int)h->role : -1,
	    h != NULL && *h->job_id != '\0' ? h->job_id : "-",
	    h != NULL ? h->rank : -1, h != NULL ? h->name : "", why);
	c->astate = CONN_A_DONE;
	c->auth_failed = true;
	hr.ok = false;
	hr.version = FRAME_VERSION;
	hr.error = (char *)why;
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, NULL, 0);
	conn_close(c, why, true);
}

/* Client: the handshake failed on our side; nothing more goes out. */
static void
conn_auth_fail(struct conn *c, const char *why)
{
	c->astate = CONN_A_DONE;
	c->auth_failed = true;
	conn_close(c, why, false);
}

/*
 * Sends the held Hello with its proof, ahead of whatever was queued
 * behind it, once both it and the Challenge are there.
 */
static void
conn_auth_release(struct conn *c)
{
	struct conn_wbuf *wb;
	Mpiv__Hello *h = c->hello;

	if (h == NULL || !c->have_challenge)
		return;
	if (auth_random(c->nonce_c, sizeof(c->nonce_c)) < 0) {
		log_warn("conn peer=%s getrandom", c->peer);
		conn_auth_fail(c, "authentication: no random nonce");
		return;
	}
	h->auth_nonce.data = c->nonce_c;
	h->auth_nonce.len = sizeof(c->nonce_c);
	auth_hello_proof(&c->akey, c->nonce_s, h, c->proof_c);
	h->auth_proof.data = c->proof_c;
	h->auth_proof.len = sizeof(c->proof_c);
	if ((wb = calloc(1, sizeof(*wb))) != NULL &&
	    (wb->buf = frame_encode(MPIV__MSG_TYPE__MSG_HELLO, &h->base, 0,
	    &wb->len)) == NULL) {
		free(wb);
		wb = NULL;
	}
	/* Ours, not the unpacker's: never freed as part of h. */
	h->auth_nonce.data = h->auth_proof.data = NULL;
	h->auth_nonce.len = h->auth_proof.len = 0;
	frame_free_meta(&h->base);
	c->hello = NULL;
	if (wb == NULL) {
		conn_auth_fail(c, "authentication: out of memory");
		return;
	}
	wb->next = c->wq_head;
	c->wq_head = wb;
	if (c->wq_tail == &c->wq_head)
		c->wq_tail = &wb->next;
	c->queued += wb->len;
	c->astate = CONN_A_C_REPLY;
	conn_want_flush(c);
}

/* Keyed client: keeps a copy of the Hello until the Challenge came. */
static int
conn_auth_hold_hello(struct conn *c, const ProtobufCMessage *meta)
{
	size_t n = protobuf_c_message_get_packed_size(meta);
	const char *err = NULL;
	uint8_t *buf;

	if ((buf = malloc(n ? n : 1)) == NULL)
		return -1;
	(void)protobuf_c_message_pack(meta, buf);
	c->hello = (Mpiv__Hello *)frame_unpack_meta(MPIV__MSG_TYPE__MSG_HELLO,
	    buf, n, &err);
	free(buf);
	if (c->hello == NULL)
		return -1;
	conn_auth_release(c);
	return 0;
}

/*
 * A header before authentication announcing more than
 * CONN_PREAUTH_MAX_FRAME bytes: closes at once, before a byte of it is
 * buffered. Not on the HelloReply a dialler waits for (it can carry a
 * CM's per-rank table, and comes from the server the dialler chose).
 */
static int
conn_auth_too_big(struct conn *c)
{
	uint64_t n = (uint64_t)c->h.meta_len + c->h.payload_len;

	if (n <= CONN_PREAUTH_MAX_FRAME)
		return 0;
	log_warnx("conn refused peer=%s reason=\"frame too big before "
	    "authentication\" type=%s bytes=%llu cap=%u", c->peer,
	    frame_type_name(c->h.type), (unsigned long long)n,
	    CONN_PREAUTH_MAX_FRAME);
	if (c->astate == CONN_A_S_HELLO) {
		c->astate = CONN_A_DONE;
		c->auth_failed = true;
		conn_close(c, "frame too big before authentication", false);
	} else {
		conn_auth_fail(c, "authentication: frame too big before "
		    "authentication");
	}
	return -1;
}

/* A frame header during the handshake: only the expected type passes. */
static int
conn_auth_header(struct conn *c)
{
	uint16_t want;
	char why[160];

	switch (c->astate) {
	case CONN_A_S_HELLO:
		want = MPIV__MSG_TYPE__MSG_HELLO;
		break;
	case CONN_A_C_CHALLENGE:
		want = MPIV__MSG_TYPE__MSG_CHALLENGE;
		break;
	case CONN_A_C_REPLY:
		want = MPIV__MSG_TYPE__MSG_HELLO_REPLY;
		break;
	default:
		return 0;
	}
	if (c->astate != CONN_A_C_REPLY && conn_auth_too_big(c) < 0)
		return -1;
	if (c->h.type == want && c->h.payload_len == 0)
		return 0;
	snprintf(why, sizeof(why), "%sexpected %s as the first frame, got %s",
	    c->astate == CONN_A_S_HELLO ? "" : "authentication: ",
	    frame_type_name(want), frame_type_name(c->h.type));
	if (c->astate == CONN_A_S_HELLO)
		conn_auth_refuse(c, NULL, why);
	else
		conn_auth_fail(c, why);
	return -1;
}

/*
 * A whole frame during the handshake. Returns true when conn consumed it
 * (a Challenge, or a frame that failed the handshake), false to hand it
 * to on_frame.
 */
static bool
conn_auth_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *meta)
{
	const Mpiv__Challenge *ch;
	const Mpiv__HelloReply *hr;
	const Mpiv__Hello *hello;
	struct auth_key key;
	uint8_t want[AUTH_HASH_LEN];
	const char *why = NULL;
	bool ok;

	switch (c->astate) {
	case CONN_A_S_HELLO:
		hello = (const Mpiv__Hello *)meta;
		if (c->as == NULL || !c->as->enabled) {
			c->astate = CONN_A_DONE;
			conn_gate_authed(c);
			return false;
		}
		if (hello->auth_proof.len == 0) {
			conn_auth_refuse(c, hello, AUTH_ERR_REQUIRED);
			return true;
		}
		if (c->as->key(c->as->arg, hello, &key, &why) < 0) {
			conn_auth_refuse(c, hello, why);
			return true;
		}
		why = auth_check_hello(&key, c->nonce_s, hello, c->proof_s);
		auth_wipe(&key, sizeof(key));
		if (why != NULL) {
			conn_auth_refuse(c, hello, why);
			return true;
		}
		log_debug("auth ok peer=%s role=%d job=%s rank=%d", c->peer,
		    (int)hello->role, hello->job_id, hello->rank);
		c->astate = CONN_A_S_REPLY;
		conn_gate_authed(c);
		return false;
	case CONN_A_C_SKIP:
		c->astate = CONN_A_DONE;
		return h->type == MPIV__MSG_TYPE__MSG_CHALLENGE;
	case CONN_A_C_CHALLENGE:
		ch = (const Mpiv__Challenge *)meta;
		if (!ch->auth) {
			conn_auth_fail(c, AUTH_ERR_NOAUTH);
			return true;
		}
		if (ch->version != AUTH_VERSION ||
		    ch->nonce.len != AUTH_NONCE_LEN) {
			conn_auth_fail(c, "authentication: the server speaks "
			    "another version of the handshake");
			return true;
		}
		memcpy(c->nonce_s, ch->nonce.data, AUTH_NONCE_LEN);
		c->have_challenge = true;
		conn_auth_release(c);
		return true;
	case CONN_A_C_REPLY:
		hr = (const Mpiv__HelloReply *)meta;
		c->astate = CONN_A_DONE;
		if (!hr->ok)
			return false;	/* a refusal: the daemon reports it */
		auth_reply_proof(&c->akey, c->nonce_s, c->nonce_c, c->proof_c,
		    want);
		ok = hr->auth_proof.len == AUTH_HASH_LEN &&
		    auth_equal(want, hr->auth_proof.data, AUTH_HASH_LEN);
		if (!ok) {
			log_warnx("auth peer=%s: %s", c->peer,
			    AUTH_ERR_IMPOSTOR);
			conn_auth_fail(c, AUTH_ERR_IMPOSTOR);
			return true;
		}
		return false;
	default:
		return false;
	}
}

/* ---------------- admission (conn_gate) ---------------- */

#define GATE_BUCKETS 1024

/* The caps, each with its own log rate. */
enum gate_cap { GATE_CONNS, GATE_UNAUTH, GATE_PER_HOST, GATE_NCAPS };
static const char *const gate_cap_name[GATE_NCAPS] = {
	"max-conns", "max-unauth", "max-unauth-per-host",
};

/* One peer address with conns not yet authenticated. */
struct gate_host {
	struct gate_host *next;
	uint8_t addr[16];	/* IPv4 (also when v4-mapped) or IPv6 */
	uint8_t len;		/* 4, 16, or 0 for a non-IP socket */
	long unauth;
};

struct conn_gate {
	char who[32];
	struct conn_limits lim;
	long conns;		/* every conn counted here */
	long unauth;		/* of them, not yet authenticated */
	unsigned long refused;	/* since the gate was made */
	/* per cap: refused since its last log line, and when that was
	   (CLOCK_MONOTONIC seconds, 0: never) */
	unsigned long unlogged[GATE_NCAPS];
	double last_log[GATE_NCAPS];
	struct gate_host *hosts[GATE_BUCKETS];
};

static double
gate_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The soft limit on open files must fit max_conns (plus the daemon's own
 * files), or accept() fails with EMFILE before the cap says anything.
 */
static void
gate_fit_nofile(const char *who, long max_conns)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_conns + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ?
	    rl.rlim_max : want;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want)
		log_warnx("%s open files limit=%llu is below max_conns=%ld "
		    "plus 256: accept fails before the cap is reached "
		    "(raise ulimit -n)", who, (unsigned long long)rl.rlim_cur,
		    max_conns);
}

struct conn_gate *
conn_gate_new(const char *who, const struct conn_limits *l)
{
	struct conn_gate *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	snprintf(g->who, sizeof(g->who), "%s", who);
	g->lim = *l;
	gate_fit_nofile(who, l->max_conns);
	return g;
}

/*
 * Frees g at the daemon's end. Connections point at their gate until
 * they are freed: with some still counted it is left alone (said), so
 * that none of them can touch freed memory.
 */
void
conn_gate_free(struct conn_gate *g)
{
	if (g == NULL)
		return;
	if (g->conns != 0) {
		log_warnx("%s %ld connections outlive their gate: not freed",
		    g->who, g->conns);
		return;
	}
	for (size_t i = 0; i < GATE_BUCKETS; i++) {
		struct gate_host *h, *next;

		for (h = g->hosts[i]; h != NULL; h = next) {
			next = h->next;
			free(h);
		}
	}
	free(g);
}

void
conn_gate_counts(const struct conn_gate *g, long *conns, long *unauth,
    unsigned long *refused)
{
	*conns = g->conns;
	*unauth = g->unauth;
	*refused = g->refused;
}

/* The peer's address of fd as a host key. 0, or -1 (peer gone). */
static int
gate_key(int fd, struct gate_host *k)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = sizeof(ss);

	memset(k, 0, sizeof(*k));
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	if (ss.ss_family == AF_INET) {
		memcpy(k->addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		k->len = 4;
	} else if (ss.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(k->addr, s6->sin6_addr.s6_addr + 12, 4);
		k->len = 4;
	} else if (ss.ss_family == AF_INET6) {
		memcpy(k->addr, s6->sin6_addr.s6_addr, 16);
		k->len = 16;
	}
	return 0;
}

static unsigned
gate_hash(const struct gate_host *k)
{
	unsigned h = 2166136261u;	/* FNV-1a */

	for (unsigned i = 0; i < k->len; i++)
		h = (h ^ k->addr[i]) * 16777619u;
	return h % GATE_BUCKETS;
}

/* The entry of k's address, created when create; NULL if none. */
static struct gate_host *
gate_host_find(struct conn_gate *g, const struct gate_host *k, bool create)
{
	struct gate_host *h, **bp = &g->hosts[gate_hash(k)];

	for (h = *bp; h != NULL; h = h->next)
		if (h->len == k->len && memcmp(h->addr, k->addr, k->len) == 0)
			return h;
	if (!create || (h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	memcpy(h->addr, k->addr, sizeof(h->addr));
	h->len = k->len;
	h->next = *bp;
	*bp = h;
	return h;
}

static void
gate_host_drop(struct conn_gate *g, struct gate_host *h)
{
	struct gate_host **bp = &g->hosts[gate_hash(h)];

	for (; *bp != NULL; bp = &(*bp)->next) {
		if (*bp == h) {
			*bp = h->next;
			free(h);
			return;
		}
	}
}

static void
gate_host_str(const struct gate_host *k, char *out, size_t n)
{
	if (k->len == 0 || inet_ntop(k->len == 4 ? AF_INET : AF_INET6,
	    k->addr, out, (socklen_t)n) == NULL)
		snprintf(out, n, "local");
}

static long
gate_cap_max(const struct conn_gate *g, enum gate_cap cap)
{
	switch (cap) {
	case GATE_CONNS:
		return g->lim.max_conns;
	case GATE_UNAUTH:
		return g->lim.max_unauth;
	default:
		return g->lim.max_unauth_per_host;
	}
}

/*
 * One refusal by cap: a log line now if that cap logged none in the last
 * CONN_GATE_LOG_S seconds, else only counted (its next line says how
 * many were refused, this one included).
 */
static void
gate_refused(struct conn_gate *g, const struct gate_host *k,
    enum gate_cap cap)
{
	char host[INET6_ADDRSTRLEN];
	double now = gate_now();

	g->refused++;
	g->unlogged[cap]++;
	if (g->last_log[cap] != 0 && now - g->last_log[cap] < CONN_GATE_LOG_S)
		return;
	gate_host_str(k, host, sizeof(host));
	log_warnx("%s refused connection peer=%s limit=%s max=%ld conns=%ld "
	    "unauth=%ld refused=%lu (at most one such line per %d s)", g->who,
	    host, gate_cap_name[cap], gate_cap_max(g, cap), g->conns,
	    g->unauth, g->unlogged[cap], CONN_GATE_LOG_S);
	g->last_log[cap] = now;
	g->unlogged[cap] = 0;
}

/* Refusals counted but not logged yet, said once their time came. */
static void
gate_log_tail(struct conn_gate *g)
{
	double now = 0;

	for (int i = 0; i < GATE_NCAPS; i++) {
		if (g->unlogged[i] == 0)
			continue;
		if (now == 0)
			now = gate_now();
		if (now - g->last_log[i] < CONN_GATE_LOG_S)
			continue;
		log_warnx("%s refused connection limit=%s max=%ld refused=%lu "
		    "(since the last such line)", g->who, gate_cap_name[i],
		    gate_cap_max(g, (enum gate_cap)i), g->unlogged[i]);
		g->unlogged[i] = 0;
		g->last_log[i] = now;
	}
}

int
conn_gate_admit(struct conn_gate *g, int fd)
{
	struct gate_host k, *h;
	enum gate_cap cap = GATE_NCAPS;

	if (gate_key(fd, &k) < 0) {
		close(fd);	/* gone already: nothing to serve */
		return -1;
	}
	h = gate_host_find(g, &k, false);
	if (g->conns >= g->lim.max_conns)
		cap = GATE_CONNS;
	else if (g->unauth >= g->lim.max_unauth)
		cap = GATE_UNAUTH;
	else if (h != NULL && h->unauth >= g->lim.max_unauth_per_host)
		cap = GATE_PER_HOST;
	if (cap != GATE_NCAPS) {
		close(fd);
		gate_refused(g, &k, cap);
		return -1;
	}
	/* A flood that ended: the refusals not yet said, once, late. */
	gate_log_tail(g);
	return 0;
}

/* c (accepted, not authenticated) counts against g from now on. */
static void
conn_gate_join(struct conn_gate *g, struct conn *c)
{
	struct gate_host k;

	c->gate = g;
	c->gate_unauth = true;
	g->conns++;
	g->unauth++;
	if (gate_key(c->fd, &k) == 0 &&
	    (c->ghost = gate_host_find(g, &k, true)) != NULL)
		c->ghost->unauth++;
}

/* c proved itself: it no longer counts as unauthenticated. */
static void
conn_gate_authed(struct conn *c)
{
	struct conn_gate *g = c->gate;

	if (g == NULL || !c->gate_unauth)
		return;
	c->gate_unauth = false;
	g->unauth--;
	if (c->ghost != NULL && --c->ghost->unauth == 0)
		gate_host_drop(g, c->ghost);
	c->ghost = NULL;
}

static void
conn_gate_leave(struct conn *c)
{
	if (c->gate == NULL)
		return;
	conn_gate_authed(c);
	c->gate->conns--;
	c->gate = NULL;
}
