/*
 * cs_notify.c: tells a rank's home CM that one of its checkpoints is
 * durable (CkptDurable). One link per (CM address, job): the CS dials it
 * with Hello{ROLE_CS, job} and keeps it open; a notice waits in `pending`
 * until a connection takes it, then in `inflight` until its bytes have
 * left (the write queue drained) and CS_NOTIFY_GRACE more seconds passed
 * (a write to a CM that just closed still succeeds once: if the close
 * shows up within the grace, the notice is sent again). A connection
 * lost with notices in
 * flight puts them back and redials, with backoff, up to CS_NOTIFY_TRIES
 * failed dials in a row; then the notices are dropped, loudly (the CM
 * then keeps its log longer: a cost, never a wrong result). Only the
 * newest checkpoint of a rank matters, so notices of one rank collapse.
 * The CM has no ack for CkptDurable: a notice may arrive twice, which is
 * harmless (it only frees a log that is already free).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_priv.h"
#include "frame.h"
#include "log.h"

#define CS_NOTIFY_TRIES	       6
#define CS_NOTIFY_BACKOFF      0.2	/* seconds, doubled per failure */
#define CS_NOTIFY_DIAL_TIMEOUT 3.0
#define CS_NOTIFY_GRACE	       2.0	/* seconds a sent notice is kept */

struct cs_notice {
	struct cs_notice *next;
	int32_t rank;
	uint64_t ckpt_no;
	uint32_t incarnation;
	ev_tstamp drained;	/* inflight: when its bytes had left, or 0 */
};

struct cs_cmlink {
	struct cs_cmlink *next;
	struct cs *cs;
	char *addr;
	char *job;
	struct conn *c;
	struct dial *dial;
	ev_timer retry_w;
	unsigned failures;	/* failed dials in a row */
	struct cs_notice *pending;
	struct cs_notice *inflight;
};

static void cs_notify_dial(struct cs_cmlink *l);

static void
cs_notify_free_list(struct cs_notice *n)
{
	struct cs_notice *next;

	for (; n != NULL; n = next) {
		next = n->next;
		free(n);
	}
}

static unsigned
cs_notify_count(const struct cs_notice *n)
{
	unsigned k = 0;

	for (; n != NULL; n = n->next)
		k++;
	return k;
}

static void
cs_notify_unlink(struct cs_cmlink *l)
{
	struct cs_cmlink **pp;

	for (pp = &l->cs->cmlinks; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
}

/* Frees a link that has no connection. */
static void
cs_notify_free_link(struct cs_cmlink *l)
{
	cs_notify_unlink(l);
	dial_cancel(l->dial);
	ev_timer_stop(l->cs->loop, &l->retry_w);
	cs_notify_free_list(l->pending);
	cs_notify_free_list(l->inflight);
	free(l->addr);
	free(l->job);
	free(l);
}

/* Adds or refreshes the notice of a rank (the newest checkpoint wins). */
static int
cs_notify_merge(struct cs_notice **list, int32_t rank, uint64_t ckpt_no,
    uint32_t inc)
{
	struct cs_notice *n;

	for (n = *list; n != NULL; n = n->next) {
		if (n->rank != rank)
			continue;
		if (ckpt_no > n->ckpt_no) {
			n->ckpt_no = ckpt_no;
			n->incarnation = inc;
		}
		return 0;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return -1;
	n->rank = rank;
	n->ckpt_no = ckpt_no;
	n->incarnation = inc;
	n->next = *list;
	*list = n;
	return 0;
}

/* Hands every pending notice to the connection. */
static void
cs_notify_send(struct cs_cmlink *l)
{
	Mpiv__CkptDurable d = MPIV__CKPT_DURABLE__INIT;
	struct cs_notice *n;

	while ((n = l->pending) != NULL) {
		d.job_id = l->job;
		d.rank = n->rank;
		d.ckpt_no = n->ckpt_no;
		d.incarnation = n->incarnation;
		if (conn_send(l->c, MPIV__MSG_TYPE__MSG_CKPT_DURABLE, &d.base,
		    NULL, 0) < 0)
			return;	/* closing: on_close puts them back */
		l->pending = n->next;
		n->drained = 0;
		n->next = l->inflight;
		l->inflight = n;
		log_info("cs ckpt durable sent cm=%s job=%s rank=%" PRId32
		    " ckpt=%" PRIu64 " incarnation=%" PRIu32, l->addr, l->job,
		    n->rank, n->ckpt_no, n->incarnation);
	}
}

static void
cs_notify_on_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m, uint8_t *payload)
{
	struct cs_cmlink *l = conn_udata(c);

	free(payload);
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		Mpiv__HelloReply *r = (Mpiv__HelloReply *)m;
		if (r->ok)
			return;
		/* The CM will not take them (e.g. the job ended): drop.
		   After the job's end that is the normal course (its CM
		   forgot the job, and its log with it). */
		if (cs_job_ended(l->cs, l->job))
			log_info("cs cm=%s refused us job=%s (ended): %u "
			    "durable notices dropped", l->addr, l->job,
			    cs_notify_count(l->pending) +
			    cs_notify_count(l->inflight));
		else
			log_warnx("cs cm=%s refused us job=%s reason=\"%s\": "
			    "%u durable notices dropped", l->addr, l->job,
			    r->error, cs_notify_count(l->pending) +
			    cs_notify_count(l->inflight));
		cs_notify_free_list(l->pending);
		cs_notify_free_list(l->inflight);
		l->pending = l->inflight = NULL;
		conn_close(c, "cm refused", false);
		return;
	}
	case MPIV__MSG_TYPE__MSG_ERROR:
		log_warnx("cs cm=%s error text=\"%s\"", l->addr,
		    ((Mpiv__Error *)m)->text);
		return;
	default:
		log_debug("cs ignoring %s from cm=%s", frame_type_name(h->type),
		    l->addr);
		return;
	}
}

/* Arms the retry timer after a failure, or gives up after too many. */
static void
cs_notify_retry_later(struct cs_cmlink *l)
{
	double delay;

	if (l->pending == NULL) {
		cs_notify_free_link(l);
		return;
	}
	if (++l->failures >= CS_NOTIFY_TRIES) {
		log_errorx("cs cannot reach cm=%s job=%s after %u tries: %u "
		    "durable notices dropped (its log is kept longer)",
		    l->addr, l->job, l->failures, cs_notify_count(l->pending));
		cs_notify_free_link(l);
		return;
	}
	delay = CS_NOTIFY_BACKOFF * (double)(1u << (l->failures - 1));
	ev_timer_stop(l->cs->loop, &l->retry_w);
	ev_timer_set(&l->retry_w, delay, 0.);
	ev_timer_start(l->cs->loop, &l->retry_w);
}

static void
cs_notify_on_close(struct conn *c, const char *reason)
{
	struct cs_cmlink *l = conn_udata(c);
	struct cs_notice *n, *next;

	l->c = NULL;
	/* Bytes that may not have left: send them again. */
	for (n = l->inflight; n != NULL; n = next) {
		next = n->next;
		if (cs_notify_merge(&l->pending, n->rank, n->ckpt_no,
		    n->incarnation) < 0)
			log_warnx("cs out of memory: notice dropped");
		free(n);
	}
	l->inflight = NULL;
	if (l->cs->stopping) {
		if (l->pending != NULL)
			log_warnx("cs stopping: %u durable notices for cm=%s "
			    "job=%s not sent", cs_notify_count(l->pending),
			    l->addr, l->job);
		cs_notify_free_link(l);
		return;
	}
	if (l->pending != NULL)
		log_warnx("cs lost cm=%s job=%s reason=\"%s\", redialling",
		    l->addr, l->job, reason);
	cs_notify_retry_later(l);
}

static const struct conn_ops cs_notify_ops = {
	.on_frame = cs_notify_on_frame,
	.on_close = cs_notify_on_close,
};

static void
cs_notify_on_dial(void *arg, int fd, int err)
{
	struct cs_cmlink *l = arg;
	Mpiv__Hello h = MPIV__HELLO__INIT;

	l->dial = NULL;
	if (fd < 0) {
		log_warnx("cs cannot reach cm=%s job=%s: %s (try %u of %u)",
		    l->addr, l->job, strerror(err), l->failures + 1,
		    CS_NOTIFY_TRIES);
		cs_notify_retry_later(l);
		return;
	}
	if ((l->c = conn_new(l->cs->loop, fd, &cs_notify_ops, l)) == NULL) {
		close(fd);
		cs_notify_retry_later(l);
		return;
	}
	conn_auth_client(l->c, l->cs->keys.enabled ? &l->cs->keys.secret :
	    NULL);
	l->failures = 0;
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CS;
	h.job_id = l->job;
	h.rank = -1;
	h.name = l->cs->addr;
	(void)conn_send(l->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0);
	cs_notify_send(l);
}

static void
cs_notify_dial(struct cs_cmlink *l)
{
	if (l->c != NULL || l->dial != NULL || l->cs->stopping)
		return;
	l->dial = dial_start(l->cs->loop, l->addr, CS_NOTIFY_DIAL_TIMEOUT,
	    cs_notify_on_dial, l);
	if (l->dial == NULL)
		cs_notify_retry_later(l);
}

static void
cs_notify_on_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	cs_notify_dial(w->data);
}

/* JobEnd: the job's CMs free its logs anyway; its notices go, and its
   links with them (closed, or not dialled again). */
void
cs_notify_forget(struct cs *cs, const char *job)
{
	struct cs_cmlink *l, *next;

	for (l = cs->cmlinks; l != NULL; l = next) {
		next = l->next;
		if (strcmp(l->job, job) != 0)
			continue;
		cs_notify_free_list(l->pending);
		cs_notify_free_list(l->inflight);
		l->pending = l->inflight = NULL;
		if (l->c != NULL)
			conn_close(l->c, "job ended", false);
		else
			cs_notify_free_link(l);
	}
}

void
cs_notify_durable(struct cs *cs, const char *cm, const char *job,
    int32_t rank, uint64_t ckpt_no, uint32_t incarnation)
{
	struct cs_cmlink *l;

	if (cs_job_ended(cs, job)) {
		log_debug("cs job=%s ended: no durable notice for rank=%" PRId32,
		    job, rank);
		return;
	}
	for (l = cs->cmlinks; l != NULL; l = l->next)
		if (strcmp(l->addr, cm) == 0 && strcmp(l->job, job) == 0)
			break;
	if (l == NULL) {
		if ((l = calloc(1, sizeof(*l))) == NULL ||
		    (l->addr = strdup(cm)) == NULL ||
		    (l->job = strdup(job)) == NULL) {
			log_warnx("cs out of memory: durable notice for job=%s "
			    "rank=%" PRId32 " dropped", job, rank);
			if (l != NULL)
				free(l->addr);
			free(l);
			return;
		}
		l->cs = cs;
		ev_init(&l->retry_w, cs_notify_on_retry);
		l->retry_w.data = l;
		l->next = cs->cmlinks;
		cs->cmlinks = l;
	}
	if (cs_notify_merge(&l->pending, rank, ckpt_no, incarnation) < 0) {
		log_warnx("cs out of memory: durable notice dropped");
		return;
	}
	if (l->c != NULL)
		cs_notify_send(l);
	else if (!ev_is_active(&l->retry_w))
		cs_notify_dial(l);
}

/*
 * Once per loop iteration: notices whose bytes left the queue are stamped;
 * those stamped more than CS_NOTIFY_GRACE ago are done.
 */
void
cs_notify_pump(struct cs *cs)
{
	ev_tstamp now = ev_now(cs->loop);
	struct cs_notice **pp, *n;

	for (struct cs_cmlink *l = cs->cmlinks; l != NULL; l = l->next) {
		if (l->c == NULL || l->inflight == NULL ||
		    conn_queued(l->c) > 0)
			continue;
		for (pp = &l->inflight; (n = *pp) != NULL;) {
			if (n->drained == 0)
				n->drained = now;
			if (now - n->drained < CS_NOTIFY_GRACE) {
				pp = &n->next;
				continue;
			}
			*pp = n->next;
			free(n);
		}
	}
}

/* Shutdown: connected links close (on_close frees), the others now. */
void
cs_notify_close_all(struct cs *cs)
{
	struct cs_cmlink *l, *next;

	for (l = cs->cmlinks; l != NULL; l = next) {
		next = l->next;
		if (l->c != NULL) {
			conn_close(l->c, "checkpoint server stopping", false);
			continue;
		}
		if (l->pending != NULL)
			log_warnx("cs stopping: %u durable notices for cm=%s "
			    "job=%s not sent", cs_notify_count(l->pending),
			    l->addr, l->job);
		cs_notify_free_link(l);
	}
}
