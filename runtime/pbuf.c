/*
 * pbuf.c: payload buffers (conn.h): one copy of a payload, shared by
 * reference between the connection filling it and those relaying it
 * (cut-through: a writer parked at a buffer's filled edge is woken as
 * bytes arrive), and the memory big payloads are carved from.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conn_priv.h"
#include "log.h"

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

void
pbuf_wait_add(struct pbuf *pb, struct conn *c)
{
	c->wait_pb = pb;
	c->wait_prev = NULL;
	c->wait_next = pb->waiters;
	if (pb->waiters != NULL)
		pb->waiters->wait_prev = c;
	pb->waiters = c;
}

void
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
