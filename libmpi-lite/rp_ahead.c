/*
 * rp_ahead.c: streaming replay, the rank's half (relay protocol,
 * docs/REPLAY.md "Restart"). A re-executing rank asks its home CM
 * (Hello.replay_window, MPIV_REPLAY_WINDOW) to push its logged deliveries
 * before it posts the receives they answer. Such a Deliver names its post
 * (ahead_post) instead of a request; one that comes before its post is
 * held here, payload and all, and the receive completes when it is
 * posted, without waiting for the CM. The RecvPost still goes out: the
 * CM checks it against the log and slides the window on it.
 *
 * A held delivery is checked against the post before it is taken: a
 * different envelope (the re-execution diverged) leaves it unused, and
 * the CM answers the post with the divergence error as without
 * streaming. A checkpoint waits until nothing is held (ckpt.c): then
 * every event the rank has read has been posted for, so the mark's
 * event is a clean resume point.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "transport.h"

#define AHEAD_WINDOW_DEFAULT	256
#define AHEAD_WINDOW_MAX	4096	/* the CM's REPLAY_WINDOW_MAX */

struct ahead {
	struct ahead *next;
	uint64_t post_no;
	uint32_t context;
	int32_t req_source, req_tag;	/* the post, as logged */
	int32_t src, tag;		/* the message */
	size_t len;			/* payload bytes */
	uint8_t *buf;			/* NULL when len is 0 */
	bool whole;			/* the payload is all here */
	struct mpiv_request *waiter;	/* posted before it was whole */
};

/* In arrival order (event order); at most the window's length. */
static struct ahead *ah_head, **ah_tail = &ah_head;
static size_t ah_n;

uint32_t
mpiv_ahead_window(void)
{
	static long w = -1;

	if (w < 0) {
		const char *e = getenv("MPIV_REPLAY_WINDOW");
		char *end;

		w = AHEAD_WINDOW_DEFAULT;
		if (e != NULL && *e != '\0') {
			long v = strtol(e, &end, 10);

			if (*end == '\0' && v >= 0)
				w = v > AHEAD_WINDOW_MAX ? AHEAD_WINDOW_MAX : v;
		}
	}
	return (uint32_t)w;
}

bool
mpiv_ahead_pending(void)
{
	return ah_n > 0;
}

void
mpiv_ahead_reset(void)
{
	struct ahead *a, *next;

	for (a = ah_head; a != NULL; a = next) {
		next = a->next;
		free(a->buf);
		free(a);
	}
	ah_head = NULL;
	ah_tail = &ah_head;
	ah_n = 0;
}

static bool
ahead_fits(const struct mpiv_request *r, uint32_t context, int32_t source,
    int32_t tag)
{
	return r->kind == MPIV_REQ_RECV && !r->complete && r->active &&
	    r->context == context && r->post_src == source &&
	    r->post_tag == tag;
}

struct ahead_find {
	const Mpiv__Deliver *d;
	struct mpiv_request *r;
};

static void
ahead_find_one(struct mpiv_request *r, void *arg)
{
	struct ahead_find *f = arg;

	if (f->r == NULL && r->post_no == f->d->ahead_post &&
	    ahead_fits(r, f->d->context, f->d->req_source, f->d->req_tag))
		f->r = r;
}

/* The receive already posted that an ahead Deliver answers, or NULL. */
struct mpiv_request *
mpiv_ahead_posted(const Mpiv__Deliver *d)
{
	struct ahead_find f = { d, NULL };

	mpiv_req_foreach(ahead_find_one, &f);
	return f.r;
}

/*
 * Keeps an ahead Deliver whose post has not been made yet: *dst gets
 * where its len payload bytes go, *h the handle that mpiv_ahead_whole
 * takes once they are all there. -1 when out of memory.
 */
int
mpiv_ahead_hold(const Mpiv__Deliver *d, size_t len, uint8_t **dst,
    void **h)
{
	struct ahead *a = calloc(1, sizeof(*a));

	if (a == NULL || (len > 0 && (a->buf = malloc(len)) == NULL)) {
		free(a);
		return -1;
	}
	a->post_no = d->ahead_post;
	a->context = d->context;
	a->req_source = d->req_source;
	a->req_tag = d->req_tag;
	a->src = d->src;
	a->tag = d->tag;
	a->len = len;
	*ah_tail = a;
	ah_tail = &a->next;
	ah_n++;
	*dst = a->buf;
	*h = a;
	return 0;
}

/* Completes receive r from held delivery a (the payload is a's). */
static void
ahead_complete(struct mpiv_request *r, const struct ahead *a)
{
	size_t keep = a->len < r->cap ? a->len : r->cap;

	if (keep > 0 && mpiv_dt_is_contig(r->dt)) {
		memcpy((uint8_t *)((uintptr_t)r->buf +
		    (uintptr_t)r->dt->true_lb), a->buf, keep);
	} else if (keep > 0) {
		mpiv_dt_unpack(a->buf, keep, r->buf, r->count, r->dt);
	}
	mpiv_tp_recv_done(r, a->src, a->tag, keep, a->len);
}

/* Completes r from held delivery a, which leaves the list (pp: the
   link pointing at a). */
static void
ahead_use(struct ahead **pp, struct ahead *a, struct mpiv_request *r)
{
	*pp = a->next;
	if (ah_tail == &a->next)
		ah_tail = pp;
	ah_n--;
	ahead_complete(r, a);
	free(a->buf);
	free(a);
}

/*
 * Receive r was just posted (post_no set): completes it from a held
 * delivery for its post, if there is one with its envelope (once its
 * payload is all here).
 */
void
mpiv_ahead_take(struct mpiv_request *r)
{
	struct ahead **pp, *a;

	if (ah_n == 0)
		return;
	for (pp = &ah_head; (a = *pp) != NULL; pp = &a->next) {
		if (a->post_no != r->post_no)
			continue;
		if (!ahead_fits(r, a->context, a->req_source, a->req_tag))
			return;	/* diverged: the CM answers the post */
		if (a->whole)
			ahead_use(pp, a, r);
		else
			a->waiter = r;
		return;
	}
}

/* The payload of held delivery h is all here. */
void
mpiv_ahead_whole(void *h)
{
	struct ahead **pp, *a;

	for (pp = &ah_head; (a = *pp) != NULL; pp = &a->next) {
		if (a != h)
			continue;
		a->whole = true;
		if (a->waiter != NULL)
			ahead_use(pp, a, a->waiter);
		return;
	}
}
