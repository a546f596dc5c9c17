/*
 * sblog.c: the sender's payload log (sblog.h), kept by every rank of a
 * direct job so that a restarted receiver can get its messages again.
 *
 * Append is on the path of every send: it costs an entry from a free
 * list, one malloc and memcpy of the payload and a few pointer moves; no
 * system call unless the log is past its memory cap. Each channel keeps
 * its entries in a singly linked FIFO with a tail (appends at the tail,
 * trims at the head, replays walk it). The entries whose payload is in
 * memory are also on one doubly linked list across channels, oldest
 * first: spilling takes from its head, a trim unlinks from anywhere.
 *
 * Spilled payloads go to the caller's file at offsets the log hands out
 * in order (spill_end), several at a time with one pwritev; the spilled
 * entries are on a list in file order (the links of the in-memory one).
 * A trim punches out the whole gap each entry it drops leaves between
 * its live neighbours in the file, so that a page two small payloads
 * shared is given back when the second goes (a punch frees only the
 * pages it covers whole), and when no spilled entry is left it
 * truncates the file to 0 and starts again at offset 0, so that a file
 * system without hole punching gets its space back too at every point
 * where the log is all in memory.
 *
 * While a checkpoint's clone may still read the file (sblog_freeze_at
 * to sblog_thaw_upto), nothing it reads there changes: spill_end only
 * grows then, so new spills land past the end the file had at the
 * freeze, and a trim punches at once only what lies past that end; the
 * rest goes on a list of holes stamped with the number of freezes made
 * so far, which thaws punch once no freeze at or below that number is
 * left (the list is in stamp order: they take from its head). The file
 * is truncated only with no freeze left.
 *
 * Entries come from slabs that are kept until sblog_fini (a burst of
 * small messages leaves its slabs behind for the next one). Small
 * payloads are malloc'ed per entry; large ones (SBLOG_ARENA_MIN and up)
 * are carved from arenas of anonymous memory asked to use huge pages, so
 * that logging a large message costs a copy and few page faults, and an
 * arena emptied by trims is used again without faulting at all. A copy
 * into memory no payload used before faults its pages in first, in one
 * system call (sblog_populate). Payloads are given back at trim or
 * spill.
 *
 * Huge pages are not always cheaper: with the kernel's THP "defrag" on
 * madvise (Debian's default) a fault in a region asked for huge pages
 * compacts memory first when no free 2 MiB page is at hand, and on a
 * VM whose memory is fragmented a copy into fresh huge pages then costs
 * 4-13x what it does when one is (2.3 ms per MiB against 0.17 ms
 * measured here, 4 KiB pages 0.38 ms; with nothing trimmed, every large
 * payload lands in fresh memory). So under SBLOG_HUGE_AUTO the copies
 * into memory no payload used before are timed, and once 4 MiB of them
 * cost more than SBLOG_HUGE_SLOW_NS per MiB the log stops asking for huge
 * pages, for the untouched rest of the current arena and every later one.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sblog.h"

#define SBLOG_SLAB_ENTS		128		/* entries per slab */
#define SBLOG_SPILL_IOV		64		/* payloads per pwritev */
#define SBLOG_SPILL_BATCH	(8u << 20)	/* bytes per pwritev, about */
#define SBLOG_IO_MAX		(1u << 30)	/* bytes per system call */
#define SBLOG_ARENA_MIN		(64u << 10)	/* payloads from arenas */
#define SBLOG_ARENA_SIZE	(32u << 20)	/* bytes per arena, at least */
#define SBLOG_HUGE		(2u << 20)	/* huge page size and alignment */
#define SBLOG_ARENA_ALIGN	64		/* of each payload in an arena */
#define SBLOG_PROBE_BYTES	(4u << 20)	/* fresh copies timed, then judged */
#define SBLOG_HUGE_SLOW_NS	600000		/* per MiB: slower than 4 KiB pages */
#ifdef MADV_POPULATE_WRITE
#define SBLOG_POPULATE_WRITE	MADV_POPULATE_WRITE
#else
#define SBLOG_POPULATE_WRITE	23		/* Linux 5.14's value */
#endif

struct sblog_arena {
	struct sblog_arena *next;	/* the first in sb->arenas: current */
	unsigned char *base;
	size_t size, used, live;
	size_t touched;		/* bytes from base ever handed out */
};
#define SBLOG_OFF_MAX		((uint64_t)INT64_MAX)

struct sblog_ent {
	struct sblog_ent *next;		/* channel FIFO (or the free list) */
	struct sblog_ent *mprev, *mnext; /* in-memory payloads, or spilled
					   ones in file order */
	unsigned char *data;		/* NULL: empty or spilled */
	uint64_t seq;
	uint64_t off;			/* in the spill file, when spilled */
	size_t len;
	uint32_t context;
	int32_t tag;
	uint32_t flags;
	bool spilled;
};

_Static_assert(sizeof(struct sblog_ent) <= SBLOG_ENTRY_COST,
    "SBLOG_ENTRY_COST must cover an entry");

struct sblog_chan {
	struct sblog_ent *head, *tail;	/* oldest, newest */
	struct sblog_ent *hint;		/* the entry the last replay handed
					   over, where the next one starts
					   when it asks for later seqs; NULL
					   once dropped */
	uint64_t next_seq;		/* the next append's seq */
	uint64_t trim_upto;		/* the highest sblog_trim upto */
};

struct sblog_slab {
	struct sblog_slab *next;
	struct sblog_ent ents[SBLOG_SLAB_ENTS];
};

/* What a replay hands over for an empty payload (never NULL). */
static const unsigned char sblog_empty[1];

/*
 * fd as the spill file: pread/pwrite/punch need a regular file; O_APPEND
 * would make every pwrite land at the end, not at its offset. 0, or -1
 * with errno (EINVAL: not such a file).
 */
static int
sblog_spill_adopt(struct sblog *sb, int fd)
{
	struct stat st;
	int fl;

	if (fstat(fd, &st) == -1 || (fl = fcntl(fd, F_GETFL)) == -1)
		return -1;
	if (!S_ISREG(st.st_mode) || (fl & O_ACCMODE) != O_RDWR ||
	    (fl & O_APPEND)) {
		errno = EINVAL;
		return -1;
	}
	sb->spill_fd = fd;
	sb->spill_dev = (uint64_t)st.st_dev;
	sb->spill_ino = (uint64_t)st.st_ino;
	return 0;
}

int
sblog_init(struct sblog *sb, int nranks, const struct sblog_conf *conf)
{
	static const struct sblog_conf defconf = SBLOG_CONF_INIT;
	int i;

	memset(sb, 0, sizeof(*sb));
	sb->spill_fd = -1;
	if (conf == NULL)
		conf = &defconf;
	if (nranks < 1) {
		errno = EINVAL;
		return -1;
	}
	if (conf->spill_fd >= 0 && sblog_spill_adopt(sb, conf->spill_fd) < 0)
		return -1;
	sb->spill_open = conf->spill_fd < 0 ? conf->spill_open : NULL;
	if ((sb->chans = calloc((size_t)nranks, sizeof(*sb->chans))) == NULL)
		return -1;
	for (i = 0; i < nranks; i++)
		sb->chans[i].next_seq = 1;
	sb->nranks = nranks;
	sb->mem_cap = conf->mem_cap != 0 ? conf->mem_cap : SBLOG_MEM_CAP;
	sb->total_cap = conf->total_cap != 0 ? conf->total_cap :
	    SBLOG_TOTAL_CAP;
	sb->huge = conf->huge;
	return 0;
}

/* ---------------- payload memory ---------------- */

static size_t
sblog_round(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* A new current arena of at least len bytes, huge-page aligned. */
static struct sblog_arena *
sblog_arena_new(struct sblog *sb, size_t len)
{
	size_t size = len > SBLOG_ARENA_SIZE ? sblog_round(len, SBLOG_HUGE) :
	    SBLOG_ARENA_SIZE;
	struct sblog_arena *a = malloc(sizeof(*a));
	unsigned char *map, *base;
	size_t head;

	if (a == NULL)
		return NULL;
	map = mmap(NULL, size + SBLOG_HUGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		free(a);
		return NULL;
	}
	base = (unsigned char *)sblog_round((size_t)(uintptr_t)map,
	    SBLOG_HUGE);
	head = (size_t)(base - map);
	if (head > 0)
		(void)munmap(map, head);
	(void)munmap(base + size, SBLOG_HUGE - head);
	if (sb->huge != SBLOG_HUGE_OFF)
		(void)madvise(base, size, MADV_HUGEPAGE);
	a->base = base;
	a->size = size;
	a->used = a->live = a->touched = 0;
	a->next = sb->arenas;
	sb->arenas = a;
	return a;
}

static void *
sblog_data_alloc(struct sblog *sb, size_t len)
{
	struct sblog_arena *a = sb->arenas;
	void *p;

	if (len < SBLOG_ARENA_MIN)
		return malloc(len);
	len = sblog_round(len, SBLOG_ARENA_ALIGN);
	if ((a == NULL || a->size - a->used < len) &&
	    (a = sblog_arena_new(sb, len)) == NULL)
		return NULL;
	p = a->base + a->used;
	sb->fresh = a->used >= a->touched;
	a->used += len;
	a->live += len;
	if (a->used > a->touched)
		a->touched = a->used;
	return p;
}

static uint64_t
sblog_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Faults in the pages of [dst, dst + len) that no payload used before,
 * in one system call: a copy that faults them one by one costs 410-470
 * us per MiB on the 2-core VM of docs/BENCHMARKS.md, populate and copy
 * 290-310 (the kernel zeroes each page either way; what goes is one
 * exception per 4 KiB page). A kernel without MADV_POPULATE_WRITE
 * (before Linux 5.14) says EINVAL once and is not asked again.
 */
static void
sblog_populate(struct sblog *sb, void *dst, size_t len)
{
	static uintptr_t page;
	uintptr_t a;
	int e = errno;

	if (sb->no_populate)
		return;
	if (page == 0) {
		long ps = sysconf(_SC_PAGESIZE);

		page = ps > 0 ? (uintptr_t)ps : 4096;
	}
	a = (uintptr_t)dst & ~(page - 1);	/* madvise wants it aligned */
	if (madvise((void *)a, (uintptr_t)dst + len - a,
	    SBLOG_POPULATE_WRITE) == -1 && errno == EINVAL)
		sb->no_populate = true;
	errno = e;
}

/*
 * Copies a payload of len bytes into dst from sblog_data_alloc, timing
 * it when it lands in fresh huge pages under SBLOG_HUGE_AUTO, and
 * drops huge pages once such copies prove slow (see the top).
 */
static void
sblog_data_copy(struct sblog *sb, void *dst, const void *buf, size_t len)
{
	struct sblog_arena *a = sb->arenas;
	uint64_t t0;
	size_t from;

	if (len < SBLOG_ARENA_MIN || !sb->fresh) {
		memcpy(dst, buf, len);
		return;
	}
	if (sb->huge != SBLOG_HUGE_AUTO) {
		sblog_populate(sb, dst, len);
		memcpy(dst, buf, len);
		return;
	}
	t0 = sblog_now_ns();
	sblog_populate(sb, dst, len);
	memcpy(dst, buf, len);
	sb->probe_ns += sblog_now_ns() - t0;
	sb->probe_bytes += len;
	if (sb->probe_bytes < SBLOG_PROBE_BYTES)
		return;
	if (sb->probe_ns * (1u << 20) / sb->probe_bytes > SBLOG_HUGE_SLOW_NS) {
		sb->huge = SBLOG_HUGE_OFF;
		from = a != NULL ? sblog_round(a->touched, SBLOG_HUGE) : 0;
		if (a != NULL && from < a->size)
			(void)madvise(a->base + from, a->size - from,
			    MADV_NOHUGEPAGE);
	}
	sb->probe_bytes = sb->probe_ns = 0;	/* fast so far: judge again */
}

static void
sblog_data_free(struct sblog *sb, void *p, size_t len)
{
	struct sblog_arena **ap, *a;

	if (p == NULL)
		return;
	if (len < SBLOG_ARENA_MIN) {
		free(p);
		return;
	}
	len = sblog_round(len, SBLOG_ARENA_ALIGN);
	for (ap = &sb->arenas; (a = *ap) != NULL; ap = &a->next)
		if ((unsigned char *)p >= a->base &&
		    (unsigned char *)p < a->base + a->size)
			break;
	if (a == NULL)
		return;		/* not ours: cannot happen */
	a->live -= len;
	if (a->live > 0)
		return;
	if (a == sb->arenas) {
		a->used = 0;	/* the current one starts over, still mapped */
		return;
	}
	*ap = a->next;
	(void)munmap(a->base, a->size);
	free(a);
}

void
sblog_fini(struct sblog *sb)
{
	struct sblog_slab *s;
	int i;
	struct sblog_ent *e;

	for (i = 0; i < sb->nranks; i++)
		for (e = sb->chans[i].head; e != NULL; e = e->next)
			sblog_data_free(sb, e->data, e->len);
	while (sb->arenas != NULL) {
		struct sblog_arena *a = sb->arenas;

		sb->arenas = a->next;
		(void)munmap(a->base, a->size);
		free(a);
	}
	while ((s = sb->slabs) != NULL) {
		sb->slabs = s->next;
		free(s);
	}
	free(sb->chans);
	free(sb->holes);
	memset(sb, 0, sizeof(*sb));
	sb->spill_fd = -1;
}

int
sblog_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p;

	for (p = s; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		goto bad;
	switch (*p) {
	case '\0':
		break;
	case 'K': case 'k':
		mul = 1ull << 10;
		p++;
		break;
	case 'M': case 'm':
		mul = 1ull << 20;
		p++;
		break;
	case 'G': case 'g':
		mul = 1ull << 30;
		p++;
		break;
	default:
		goto bad;
	}
	if (*p != '\0' || v > UINT64_MAX / mul)
		goto bad;
	*out = v * mul;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int
sblog_conf_from_env(struct sblog_conf *conf)
{
	const char *mem = getenv("MPIV_SENDLOG_MEM");
	const char *max = getenv("MPIV_SENDLOG_MAX");
	const char *huge = getenv("MPIV_SENDLOG_HUGE");
	uint64_t m = conf->mem_cap, t = conf->total_cap;
	int h = conf->huge;

	if (mem != NULL && *mem != '\0' && sblog_parse_size(mem, &m) == -1)
		return -1;
	if (max != NULL && *max != '\0' && sblog_parse_size(max, &t) == -1)
		return -1;
	if (huge != NULL && *huge != '\0') {
		if (strcmp(huge, "auto") == 0)
			h = SBLOG_HUGE_AUTO;
		else if (strcmp(huge, "on") == 0)
			h = SBLOG_HUGE_ON;
		else if (strcmp(huge, "off") == 0)
			h = SBLOG_HUGE_OFF;
		else {
			errno = EINVAL;
			return -1;
		}
	}
	conf->mem_cap = m;
	conf->total_cap = t;
	conf->huge = h;
	return 0;
}

/* An entry off the free list, a new slab's when it is empty; NULL. */
static struct sblog_ent *
sblog_ent_get(struct sblog *sb)
{
	struct sblog_slab *s;
	struct sblog_ent *e;
	int i;

	if (sb->pool == NULL) {
		if ((s = malloc(sizeof(*s))) == NULL)
			return NULL;
		s->next = sb->slabs;
		sb->slabs = s;
		for (i = SBLOG_SLAB_ENTS - 1; i >= 0; i--) {
			s->ents[i].next = sb->pool;
			sb->pool = &s->ents[i];
		}
	}
	e = sb->pool;
	sb->pool = e->next;
	return e;
}

static void
sblog_ent_put(struct sblog *sb, struct sblog_ent *e)
{
	e->next = sb->pool;
	sb->pool = e;
}

/* The in-memory list (mhead) and the spilled one (fhead) share the
   links: a payload is in one place at a time. */
static void
sblog_link(struct sblog_ent **head, struct sblog_ent **tail,
    struct sblog_ent *e)
{
	e->mnext = NULL;
	e->mprev = *tail;
	if (*tail != NULL)
		(*tail)->mnext = e;
	else
		*head = e;
	*tail = e;
}

static void
sblog_unlink(struct sblog_ent **head, struct sblog_ent **tail,
    struct sblog_ent *e)
{
	if (e->mprev != NULL)
		e->mprev->mnext = e->mnext;
	else
		*head = e->mnext;
	if (e->mnext != NULL)
		e->mnext->mprev = e->mprev;
	else
		*tail = e->mprev;
	e->mprev = e->mnext = NULL;
}

static void
sblog_mem_link(struct sblog *sb, struct sblog_ent *e)
{
	sblog_link(&sb->mhead, &sb->mtail, e);
}

static void
sblog_mem_unlink(struct sblog *sb, struct sblog_ent *e)
{
	sblog_unlink(&sb->mhead, &sb->mtail, e);
}

/*
 * Writes the n (at most SBLOG_SPILL_IOV) buffers of iov to fd at off, all
 * of them, a buffer over SBLOG_IO_MAX bytes alone and in pieces (iov is
 * consumed). 0, or -1 with errno (EIO
 * for a write that makes no progress).
 */
static int
sblog_pwritev_all(int fd, struct iovec *iov, int n, uint64_t off)
{
	ssize_t r;
	int i = 0;

	while (i < n) {
		if (iov[i].iov_len == 0) {
			i++;
			continue;
		}
		if (iov[i].iov_len > SBLOG_IO_MAX)
			r = pwrite(fd, iov[i].iov_base, SBLOG_IO_MAX,
			    (off_t)off);
		else
			r = pwritev(fd, &iov[i], n - i, (off_t)off);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		off += (uint64_t)r;
		while (r > 0) {
			if ((size_t)r >= iov[i].iov_len) {
				r -= (ssize_t)iov[i].iov_len;
				iov[i].iov_len = 0;
				i++;
			} else {
				iov[i].iov_base = (char *)iov[i].iov_base + r;
				iov[i].iov_len -= (size_t)r;
				r = 0;
			}
		}
	}
	return 0;
}

/* Reads len bytes at off into buf, all of them. 0, or -1 with errno (EIO
   when the file ends first). */
static int
sblog_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;
	ssize_t r;

	while (len > 0) {
		r = pread(fd, p, len > SBLOG_IO_MAX ? SBLOG_IO_MAX : len,
		    (off_t)off);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/*
 * Moves the oldest in-memory payloads to the spill file until mem_bytes
 * is at most target or none is left in memory, SBLOG_SPILL_IOV at a time.
 * 0, or -1 with errno (spill_errno set: spilling stops; what was not
 * written stays in memory).
 */
static int
sblog_spill_oldest(struct sblog *sb, uint64_t target)
{
	struct iovec iov[SBLOG_SPILL_IOV];
	struct sblog_ent *e;
	uint64_t bytes, off;
	int i, n;

	while (sb->mem_bytes > target && sb->mhead != NULL) {
		n = 0;
		bytes = 0;
		for (e = sb->mhead; e != NULL && n < SBLOG_SPILL_IOV &&
		    sb->mem_bytes - bytes > target &&
		    bytes < SBLOG_SPILL_BATCH; e = e->mnext) {
			if (e->len > SBLOG_OFF_MAX - sb->spill_end - bytes)
				break;
			iov[n].iov_base = e->data;
			iov[n].iov_len = e->len;
			bytes += e->len;
			n++;
		}
		if (n == 0) {
			errno = EFBIG;
			goto fail;
		}
		if (sblog_pwritev_all(sb->spill_fd, iov, n, sb->spill_end) ==
		    -1)
			goto fail;
		off = sb->spill_end;
		for (i = 0; i < n; i++) {
			e = sb->mhead;
			sblog_mem_unlink(sb, e);
			sblog_data_free(sb, e->data, e->len);
			e->data = NULL;
			e->spilled = true;
			e->off = off;
			sblog_link(&sb->fhead, &sb->ftail, e);
			off += e->len;
			sb->mem_bytes -= e->len;
			sb->spilled_bytes += e->len;
			sb->nspilled++;
		}
		sb->spill_end = off;
	}
	return 0;
fail:
	sb->spill_errno = errno;
	return -1;
}

/* Writes buf straight to the spill file for e (a payload too large to be
   held under mem_cap). 0, or -1 with errno (spill_errno set). */
static int
sblog_spill_new(struct sblog *sb, struct sblog_ent *e, const void *buf)
{
	struct iovec iov = { (void *)(uintptr_t)buf, e->len };

	if (e->len > SBLOG_OFF_MAX - sb->spill_end) {
		errno = EFBIG;
		goto fail;
	}
	if (sblog_pwritev_all(sb->spill_fd, &iov, 1, sb->spill_end) == -1)
		goto fail;
	e->spilled = true;
	e->off = sb->spill_end;
	sblog_link(&sb->fhead, &sb->ftail, e);
	sb->spill_end += e->len;
	sb->spilled_bytes += e->len;
	sb->nspilled++;
	return 0;
fail:
	sb->spill_errno = errno;
	return -1;
}

uint64_t
sblog_append(struct sblog *sb, int dst, uint32_t context, int32_t tag,
    uint32_t flags, const void *buf, size_t len)
{
	struct sblog_chan *ch;
	struct sblog_ent *e;
	uint64_t avail, cost, low, target;
	bool direct = false;

	if (dst < 0 || dst >= sb->nranks || (buf == NULL && len > 0)) {
		errno = EINVAL;
		return 0;
	}
	ch = &sb->chans[dst];
	if (ch->next_seq == UINT64_MAX) {
		errno = EOVERFLOW;
		return 0;
	}
	/* total_bytes <= total_cap always: no overflow below */
	avail = sb->total_cap - (sb->mem_bytes + sb->spilled_bytes);
	if (avail < SBLOG_ENTRY_COST || len > avail - SBLOG_ENTRY_COST) {
		errno = ENOSPC;
		return 0;
	}
	cost = SBLOG_ENTRY_COST + (uint64_t)len;
	if ((e = sblog_ent_get(sb)) == NULL)
		return 0;
	e->next = NULL;
	e->mprev = e->mnext = NULL;
	e->data = NULL;
	e->off = 0;
	e->len = len;
	e->context = context;
	e->tag = tag;
	e->flags = flags;
	e->spilled = false;

	if (sb->spill_fd < 0 && sb->spill_open != NULL &&
	    sb->mem_bytes + cost > sb->mem_cap) {
		int (*open_fn)(void) = sb->spill_open;
		int fd;

		sb->spill_open = NULL;		/* asked once */
		if ((fd = open_fn()) >= 0 && sblog_spill_adopt(sb, fd) < 0)
			sb->spill_fd = -1;	/* the caller's to close */
	}
	if (sb->spill_fd >= 0 && sb->spill_errno == 0 &&
	    sb->mem_bytes + cost > sb->mem_cap) {
		/* down to 7/8 of the cap with this payload in, or with only
		   its entry in when even that would not hold it */
		low = sb->mem_cap - sb->mem_cap / 8;
		direct = len > 0 && cost > low;
		target = direct ? SBLOG_ENTRY_COST : cost;
		target = low > target ? low - target : 0;
		(void)sblog_spill_oldest(sb, target);
		if (direct && (sb->spill_errno != 0 ||
		    sblog_spill_new(sb, e, buf) == -1))
			direct = false;	/* keep it in memory after all */
	}
	if (len > 0 && !direct) {
		if ((e->data = sblog_data_alloc(sb, len)) == NULL) {
			sblog_ent_put(sb, e);
			errno = ENOMEM;
			return 0;
		}
		sblog_data_copy(sb, e->data, buf, len);
		sblog_mem_link(sb, e);
		sb->mem_bytes += len;
	}
	sb->mem_bytes += SBLOG_ENTRY_COST;
	e->seq = ch->next_seq++;
	if (ch->tail != NULL)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	sb->nentries++;
	sb->appended++;
	return e->seq;
}

/* Gives [off, end) of the spill file back to the file system. */
static void
sblog_punch(struct sblog *sb, uint64_t off, uint64_t end)
{
	if (end <= off)
		return;
#ifdef FALLOC_FL_PUNCH_HOLE
	/* a file system without it keeps the bytes until the truncation */
	(void)fallocate(sb->spill_fd, FALLOC_FL_PUNCH_HOLE |
	    FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)(end - off));
#endif
}

/* A range freed while frozen (sblog_free_range), punched by a thaw. */
struct sblog_hole {
	uint64_t off, end;
	uint64_t gen;		/* sb->frz_gen when it was freed */
};

/* Notes [off, end) for a later punch, in the last one when they meet.
   Without memory it is not noted: its space comes back at the next
   truncation to 0. */
static void
sblog_hole_add(struct sblog *sb, uint64_t off, uint64_t end)
{
	struct sblog_hole *h, *nh;
	size_t cap;

	if (sb->nholes > 0) {
		h = &sb->holes[sb->nholes - 1];
		if (h->gen == sb->frz_gen && off <= h->end && end >= h->off) {
			h->off = off < h->off ? off : h->off;
			h->end = end > h->end ? end : h->end;
			return;
		}
	}
	if (sb->nholes == sb->capholes) {
		cap = sb->capholes > 0 ? sb->capholes * 2 : 64;
		if ((nh = realloc(sb->holes, cap * sizeof(*nh))) == NULL)
			return;
		sb->holes = nh;
		sb->capholes = cap;
	}
	h = &sb->holes[sb->nholes++];
	h->off = off;
	h->end = end;
	h->gen = sb->frz_gen;
}

/* [off, end) of the file holds nothing any more: punched now where no
   freeze keeps it, noted for a thaw where one does. */
static void
sblog_free_range(struct sblog *sb, uint64_t off, uint64_t end)
{
	uint64_t cut;

	if (end <= off)
		return;
	if (sb->nfrz == 0) {
		sblog_punch(sb, off, end);
		return;
	}
	cut = end < sb->frz_end ? end : sb->frz_end;
	if (cut < off)
		cut = off;
	sblog_punch(sb, cut, end);
	if (cut > off)
		sblog_hole_add(sb, off, cut);
}

/*
 * Drops the entries of ch with seq <= upto. A spilled one frees the whole
 * gap it leaves between its neighbours in the file (what they hold is
 * live, what lies between was freed before): a page that an earlier trim
 * could only zero, because it shared it, is given back now, so that the
 * file holds at most the pages of the spilled entries.
 */
static void
sblog_drop(struct sblog *sb, struct sblog_chan *ch, uint64_t upto)
{
	struct sblog_ent *e;
	uint64_t hole = 0, hole_end = 0, lo, hi;
	bool freed = false;

	while ((e = ch->head) != NULL && e->seq <= upto) {
		ch->head = e->next;
		if (ch->hint == e)
			ch->hint = NULL;
		if (e->spilled) {
			sb->spilled_bytes -= e->len;
			sb->nspilled--;
			freed = true;
			lo = e->mprev != NULL ? e->mprev->off + e->mprev->len :
			    0;
			hi = e->mnext != NULL ? e->mnext->off : sb->spill_end;
			sblog_unlink(&sb->fhead, &sb->ftail, e);
			if (hole_end > hole && lo <= hole_end && hi >= hole) {
				hole = lo < hole ? lo : hole;
				hole_end = hi > hole_end ? hi : hole_end;
			} else {
				sblog_free_range(sb, hole, hole_end);
				hole = lo;
				hole_end = hi;
			}
		} else if (e->data != NULL) {
			sblog_mem_unlink(sb, e);
			sblog_data_free(sb, e->data, e->len);
			sb->mem_bytes -= e->len;
		}
		sb->mem_bytes -= SBLOG_ENTRY_COST;
		sb->nentries--;
		sb->trimmed++;
		sblog_ent_put(sb, e);
	}
	if (ch->head == NULL)
		ch->tail = NULL;
	if (sb->spill_fd >= 0 && sb->nspilled == 0 && sb->nfrz == 0 &&
	    (freed || sb->spill_errno != 0) &&
	    ftruncate(sb->spill_fd, 0) == 0) {
		/* the file holds nothing: start over, and retry spilling
		   if a write error had stopped it */
		sb->spill_end = 0;
		sb->spill_errno = 0;
		return;
	}
	sblog_free_range(sb, hole, hole_end);
}

void
sblog_trim(struct sblog *sb, int dst, uint64_t upto)
{
	if (dst < 0 || dst >= sb->nranks)
		return;
	if (upto > sb->chans[dst].trim_upto)
		sb->chans[dst].trim_upto = upto;
	sblog_drop(sb, &sb->chans[dst], upto);
}

bool
sblog_covered(const struct sblog *sb, int dst)
{
	if (dst < 0 || dst >= sb->nranks)
		return false;
	return sb->chans[dst].next_seq <= sb->chans[dst].trim_upto;
}

uint64_t
sblog_trimmed(const struct sblog *sb, int dst)
{
	if (dst < 0 || dst >= sb->nranks)
		return 0;
	return sb->chans[dst].trim_upto;
}

uint64_t
sblog_skip(struct sblog *sb, int dst)
{
	if (!sblog_covered(sb, dst))
		return 0;
	sb->appended++;
	return sb->chans[dst].next_seq++;
}

int
sblog_replay(struct sblog *sb, int dst, uint64_t after, sblog_replay_cb cb,
    void *arg)
{
	struct sblog_chan *ch;
	struct sblog_ent *e;
	unsigned char *tmp = NULL, *nb;
	const unsigned char *p;
	size_t tmplen = 0;
	int rc = 0;

	if (dst < 0 || dst >= sb->nranks || cb == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* Seqs grow along the channel: a pull or a resend asks for the
	   entry after the one before it, so start at the last one handed
	   over when nothing after `after` lies before it. Without that,
	   every pull of a checkpoint-free job walked its whole log. */
	ch = &sb->chans[dst];
	e = ch->hint != NULL && ch->hint->seq - 1 <= after ? ch->hint :
	    ch->head;
	for (; e != NULL; e = e->next) {
		if (e->seq <= after) {
			sb->replay_skipped++;
			continue;
		}
		ch->hint = e;
		if (e->spilled) {
			if (e->len > tmplen) {
				if ((nb = realloc(tmp, e->len)) == NULL) {
					rc = -1;
					break;
				}
				tmp = nb;
				tmplen = e->len;
			}
			if (sblog_pread_all(sb->spill_fd, tmp, e->len,
			    e->off) == -1) {
				rc = -1;
				break;
			}
			p = tmp;
		} else {
			p = e->data != NULL ? e->data : sblog_empty;
		}
		if ((rc = cb(arg, e->seq, e->context, e->tag, e->flags, p,
		    e->len)) != 0)
			break;
	}
	if (rc == -1) {
		int saved = errno;

		free(tmp);
		errno = saved;
		return -1;
	}
	free(tmp);
	return rc;
}

uint64_t
sblog_last_seq(const struct sblog *sb, int dst)
{
	if (dst < 0 || dst >= sb->nranks)
		return 0;
	return sb->chans[dst].next_seq - 1;
}

uint64_t
sblog_first_seq(const struct sblog *sb, int dst)
{
	const struct sblog_chan *ch;

	if (dst < 0 || dst >= sb->nranks)
		return 0;
	ch = &sb->chans[dst];
	return ch->head != NULL ? ch->head->seq : ch->next_seq;
}

int
sblog_set_next_seq(struct sblog *sb, int dst, uint64_t next)
{
	struct sblog_chan *ch;

	if (dst < 0 || dst >= sb->nranks || next == 0) {
		errno = EINVAL;
		return -1;
	}
	if (next < sblog_first_seq(sb, dst)) {
		errno = ERANGE;
		return -1;
	}
	ch = &sb->chans[dst];
	sblog_drop(sb, ch, next - 1);
	if (next > ch->next_seq)
		ch->next_seq = next;
	return 0;
}

void
sblog_stats(const struct sblog *sb, struct sblog_stats *st)
{
	st->entries = sb->nentries;
	st->mem_bytes = sb->mem_bytes;
	st->spilled_bytes = sb->spilled_bytes;
	st->total_bytes = sb->mem_bytes + sb->spilled_bytes;
	st->appended = sb->appended;
	st->trimmed = sb->trimmed;
	st->spill_errno = sb->spill_errno;
}

/* ---------------- freezes ---------------- */

/*
 * A clone restored from an image has CRIU's copy of the file, which is
 * no other process's: the freezes its memory holds are its parent's,
 * over a file it does not have. Drops them when the file is not the one
 * they are of. true when it did.
 */
static bool
sblog_frz_file_check(struct sblog *sb)
{
	struct stat st;

	if (fstat(sb->spill_fd, &st) == -1 ||
	    ((uint64_t)st.st_dev == sb->spill_dev &&
	    (uint64_t)st.st_ino == sb->spill_ino))
		return false;
	sb->spill_dev = (uint64_t)st.st_dev;
	sb->spill_ino = (uint64_t)st.st_ino;
	sb->nfrz = 0;
	return true;
}

static int
sblog_hole_cmp(const void *a, const void *b)
{
	const struct sblog_hole *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Punches the first n holes, sorted and joined where they touch (a page
   is given back only by a punch that covers it whole). */
static void
sblog_holes_punch(struct sblog *sb, size_t n)
{
	uint64_t off, end;
	size_t i;

	if (n == 0)
		return;
	qsort(sb->holes, n, sizeof(*sb->holes), sblog_hole_cmp);
	off = sb->holes[0].off;
	end = sb->holes[0].end;
	for (i = 1; i < n; i++) {
		if (sb->holes[i].off <= end) {
			if (sb->holes[i].end > end)
				end = sb->holes[i].end;
			continue;
		}
		sblog_punch(sb, off, end);
		off = sb->holes[i].off;
		end = sb->holes[i].end;
	}
	sblog_punch(sb, off, end);
}

/*
 * After freezes were released: punches the holes no freeze left keeps
 * (those freed before the oldest one left was made), and with none
 * left truncates the file, to 0 when nothing is spilled (offsets start
 * again at 0), else to spill_end (a restored clone's copy may hold
 * what its parent spilled after the fork).
 */
static void
sblog_frz_settle(struct sblog *sb)
{
	uint64_t min_gen = UINT64_MAX, end = 0;
	size_t n;
	int i;

	for (i = 0; i < sb->nfrz; i++) {
		if (sb->frz[i].gen < min_gen)
			min_gen = sb->frz[i].gen;
		if (sb->frz[i].end > end)
			end = sb->frz[i].end;
	}
	sb->frz_end = end;
	if (sb->nfrz == 0 && sb->nspilled == 0 &&
	    ftruncate(sb->spill_fd, 0) == 0) {
		sb->spill_end = 0;
		sb->spill_errno = 0;
		sb->nholes = 0;
		return;
	}
	for (n = 0; n < sb->nholes && sb->holes[n].gen < min_gen; n++)
		;
	sblog_holes_punch(sb, n);
	if (n > 0) {
		memmove(sb->holes, sb->holes + n,
		    (sb->nholes - n) * sizeof(*sb->holes));
		sb->nholes -= n;
	}
	if (sb->nfrz == 0)
		(void)ftruncate(sb->spill_fd, (off_t)sb->spill_end);
}

void
sblog_freeze_at(struct sblog *sb, uint64_t k)
{
	struct sblog_frz *f;

	if (sb->spill_fd < 0)
		return;
	if (sblog_frz_file_check(sb))
		sblog_frz_settle(sb);
	sb->frz_gen++;
	if (sb->nfrz == SBLOG_FRZ_MAX) {
		/* into the newest: released when both would be, keeping
		   what either keeps */
		f = &sb->frz[sb->nfrz - 1];
		if (k > f->k)
			f->k = k;
		f->n++;
	} else {
		f = &sb->frz[sb->nfrz++];
		f->k = k;
		f->gen = sb->frz_gen;
		f->n = 1;
	}
	f->end = sb->spill_end;
	if (sb->spill_end > sb->frz_end)
		sb->frz_end = sb->spill_end;
}

void
sblog_thaw_upto(struct sblog *sb, uint64_t k)
{
	bool changed;
	int i, j = 0;

	if (sb->spill_fd < 0)
		return;
	changed = sblog_frz_file_check(sb);
	for (i = 0; i < sb->nfrz; i++) {
		if (sb->frz[i].k <= k)
			changed = true;
		else
			sb->frz[j++] = sb->frz[i];
	}
	sb->nfrz = j;
	if (changed)
		sblog_frz_settle(sb);
}

void
sblog_freeze(struct sblog *sb)
{
	sblog_freeze_at(sb, SBLOG_FRZ_ANON);
}

void
sblog_thaw(struct sblog *sb)
{
	bool changed;
	int i;

	if (sb->spill_fd < 0)
		return;
	changed = sblog_frz_file_check(sb);
	for (i = 0; i < sb->nfrz && sb->frz[i].k != SBLOG_FRZ_ANON; i++)
		;
	if (i < sb->nfrz) {
		changed = true;
		if (--sb->frz[i].n == 0) {
			memmove(&sb->frz[i], &sb->frz[i + 1],
			    (size_t)(sb->nfrz - i - 1) * sizeof(sb->frz[0]));
			sb->nfrz--;
		}
	}
	if (changed)
		sblog_frz_settle(sb);
}
