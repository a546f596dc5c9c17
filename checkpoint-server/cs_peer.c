/*
 * cs_peer.c: one accepted connection, an explicit state machine:
 *
 *   HELLO --Hello{ROLE_NODE}--> IDLE --ImagePut--> UPLOAD --ImageEnd--> IDLE
 *                               UPLOAD --failure--> DRAIN --ImageEnd--> IDLE
 *                               IDLE --ImageGet--> DOWNLOAD --(sent)--> IDLE
 *
 * With a secret, a node that named a job, rank and incarnation in its
 * Hello (and proved that incarnation's image key) moves only that
 * rank's images, and only while that incarnation is the current one
 * (cs_grant.c); a node that proved only K_node moves none.
 *
 * One transfer at a time per connection. A failed upload (refused, over
 * the limit, store error) is answered ImageAck{ok=false} at once; the
 * ImageData still in flight is read and dropped until ImageEnd, so the
 * peer reliably reads the answer and may reuse the connection. Protocol
 * errors (wrong frame, oversized chunk) close it. A stalled transfer
 * times out. Closing always goes through conn_close, on_close frees.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_priv.h"
#include "frame.h"
#include "log.h"

enum cs_peer_state {
	CSP_HELLO, CSP_IDLE, CSP_UPLOAD, CSP_DRAIN, CSP_DOWNLOAD, CSP_DEAD
};

static const char *const cs_peer_state_names[] = {
	"hello", "idle", "upload", "drain", "download", "dead",
};

struct cs_peer {
	struct cs_peer *prev, *next;
	struct cs *cs;
	struct conn *c;
	enum cs_peer_state state;
	ev_timer idle_w;
	struct cs_upload *up;
	struct cs_download *dl;
	/* what the Hello proved (bound false: a node key, or no secret) */
	bool bound;
	char job[CS_MAX_NAME + 1];
	int32_t rank;
	uint32_t inc;
};

struct conn *
cs_peer_conn(struct cs_peer *p)
{
	return p->c;
}

/* Restarts the stall timer of a transfer (or of the hello wait). */
void
cs_peer_touch(struct cs_peer *p)
{
	if (p->state != CSP_IDLE && p->state != CSP_DEAD)
		ev_timer_again(p->cs->loop, &p->idle_w);
}

/* The one place the state changes: checks the transition, traces it. */
static void
cs_peer_set_state(struct cs_peer *p, enum cs_peer_state to)
{
	enum cs_peer_state from = p->state;
	bool ok;

	switch (to) {
	case CSP_IDLE:
		ok = from == CSP_HELLO || from == CSP_UPLOAD ||
		    from == CSP_DRAIN || from == CSP_DOWNLOAD;
		break;
	case CSP_DRAIN:
		ok = from == CSP_IDLE || from == CSP_UPLOAD;
		break;
	case CSP_UPLOAD:
	case CSP_DOWNLOAD:
		ok = from == CSP_IDLE;
		break;
	case CSP_DEAD:
		ok = true;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok) {
		log_errorx("cs peer=%s bad transition %s -> %s", conn_peer(p->c),
		    cs_peer_state_names[from], cs_peer_state_names[to]);
		abort();
	}
	log_debug("cs peer=%s state %s -> %s", conn_peer(p->c),
	    cs_peer_state_names[from], cs_peer_state_names[to]);
	p->state = to;
	if (to == CSP_IDLE || to == CSP_DEAD) {
		ev_timer_stop(p->cs->loop, &p->idle_w);
	} else {
		p->idle_w.repeat = p->cs->idle_timeout;
		ev_timer_again(p->cs->loop, &p->idle_w);
	}
}

/* Ends the connection for a protocol error: Error{text}, flush, close. */
static void
cs_peer_error(struct cs_peer *p, const char *why)
{
	Mpiv__Error e = MPIV__ERROR__INIT;

	log_warnx("cs peer=%s closing: %s", conn_peer(p->c), why);
	e.code = 1;
	e.text = (char *)why;
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_ERROR, &e.base, NULL, 0);
	cs_peer_set_state(p, CSP_DEAD);
	conn_close(p->c, why, true);
}

static void
cs_peer_ack(struct cs_peer *p, bool ok, uint64_t k, const char *why)
{
	Mpiv__ImageAck a = MPIV__IMAGE_ACK__INIT;

	a.ok = ok;
	a.ckpt_no = k;
	a.error = (char *)(why != NULL ? why : "");
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_IMAGE_ACK, &a.base, NULL, 0);
}

/*
 * A failed upload: temp file gone, ImageAck{ok=false}. At ImageEnd the
 * connection is idle again; before it, what the peer still sends of this
 * upload is dropped (DRAIN).
 */
static void
cs_peer_upload_failed(struct cs_peer *p, const char *why, bool at_end)
{
	uint64_t k = 0;

	if (p->up != NULL) {
		k = cs_upload_ckpt_no(p->up);
		cs_upload_abort(p->up, why);
		p->up = NULL;
	} else {
		log_warnx("cs upload refused peer=%s reason=\"%s\"",
		    conn_peer(p->c), why);
	}
	cs_peer_ack(p, false, k, why);
	cs_peer_set_state(p, at_end ? CSP_IDLE : CSP_DRAIN);
}

static void
cs_peer_hello(struct cs_peer *p, const Mpiv__Hello *h)
{
	Mpiv__HelloReply r = MPIV__HELLO_REPLY__INIT;
	char why[256];

	r.version = FRAME_VERSION;
	if (h->version != FRAME_VERSION)
		snprintf(why, sizeof(why), "protocol version %" PRIu32 " not "
		    "supported (cs speaks %u)", h->version, FRAME_VERSION);
	else if (h->role != MPIV__ROLE__ROLE_NODE)
		snprintf(why, sizeof(why), "role %d cannot talk to a "
		    "checkpoint server", (int)h->role);
	else if (p->cs->keys.enabled && *h->job_id != '\0' &&
	    h->incarnation < cs_grant_current(p->cs, h->job_id, h->rank))
		snprintf(why, sizeof(why), "stale incarnation %" PRIu32 " of "
		    "job %.64s rank %" PRId32 " (current is %" PRIu32 ")",
		    h->incarnation, h->job_id, h->rank,
		    cs_grant_current(p->cs, h->job_id, h->rank));
	else
		why[0] = '\0';
	r.ok = why[0] == '\0';
	r.error = why;
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &r.base, NULL,
	    0);
	if (!r.ok) {
		log_warnx("cs peer=%s refused: %s", conn_peer(p->c), why);
		cs_peer_set_state(p, CSP_DEAD);
		conn_close(p->c, why, true);
		return;
	}
	if (p->cs->keys.enabled && *h->job_id != '\0') {
		/* proven (cs_grant_auth_key): the dispatcher launched it */
		p->bound = true;
		snprintf(p->job, sizeof(p->job), "%s", h->job_id);
		p->rank = h->rank;
		p->inc = h->incarnation;
		cs_grant_raise(p->cs, p->job, p->rank, p->inc);
	}
	log_debug("cs hello peer=%s name=%s job=%s rank=%" PRId32
	    " incarnation=%" PRIu32, conn_peer(p->c), h->name,
	    *h->job_id != '\0' ? h->job_id : "-", h->rank, h->incarnation);
	cs_peer_set_state(p, CSP_IDLE);
}

/* May this connection move an image of (job, rank)? */
static bool
cs_peer_allowed(struct cs_peer *p, const char *job, int32_t rank,
    char *why, size_t whylen)
{
	return cs_grant_allows(p->cs, p->bound ? p->job : NULL, p->rank,
	    p->inc, job, rank, why, whylen);
}

/* An upload: of the rank this connection proved, by that incarnation. */
static bool
cs_peer_put_allowed(struct cs_peer *p, const Mpiv__ImagePut *put,
    char *why, size_t whylen)
{
	const Mpiv__ImageMeta *m = put->meta;

	if (m == NULL)
		return true;	/* cs_upload_begin says what is wrong */
	if (!cs_peer_allowed(p, m->job_id, m->rank, why, whylen))
		return false;
	if (p->bound && m->incarnation != p->inc) {
		snprintf(why, whylen, "not allowed: this connection is for "
		    "incarnation %" PRIu32 ", the image says it was taken by "
		    "%" PRIu32, p->inc, m->incarnation);
		return false;
	}
	return true;
}

static void
cs_peer_idle_frame(struct cs_peer *p, uint16_t type, ProtobufCMessage *m)
{
	Mpiv__ImageInfo info = MPIV__IMAGE_INFO__INIT;
	const Mpiv__ImageGet *g;
	char why[320];

	switch (type) {
	case MPIV__MSG_TYPE__MSG_IMAGE_PUT:
		if (!cs_peer_put_allowed(p, (Mpiv__ImagePut *)m, why,
		    sizeof(why))) {
			cs_peer_upload_failed(p, why, false);
			return;
		}
		p->up = cs_upload_begin(p->cs, (Mpiv__ImagePut *)m, why,
		    sizeof(why));
		if (p->up == NULL) {
			cs_peer_upload_failed(p, why, false);
			return;
		}
		cs_peer_set_state(p, CSP_UPLOAD);
		return;
	case MPIV__MSG_TYPE__MSG_IMAGE_GET:
		g = (const Mpiv__ImageGet *)m;
		if (!cs_peer_allowed(p, g->job_id, g->rank, why,
		    sizeof(why))) {
			log_warnx("cs download refused peer=%s job=%.64s "
			    "rank=%" PRId32 " reason=\"%s\"", conn_peer(p->c),
			    g->job_id, g->rank, why);
			info.found = false;
			info.error = why;
			(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_IMAGE_INFO,
			    &info.base, NULL, 0);
			return;
		}
		p->dl = cs_download_begin(p->cs, p->c, (Mpiv__ImageGet *)m);
		if (p->dl != NULL)
			cs_peer_set_state(p, CSP_DOWNLOAD);
		return;
	case MPIV__MSG_TYPE__MSG_BYE:
		cs_peer_set_state(p, CSP_DEAD);
		conn_close(p->c, "peer said bye", true);
		return;
	default:
		snprintf(why, sizeof(why), "unexpected %s frame",
		    frame_type_name(type));
		cs_peer_error(p, why);
		return;
	}
}

static void
cs_peer_upload_frame(struct cs_peer *p, uint16_t type, ProtobufCMessage *m,
    const uint8_t *payload, uint32_t len)
{
	char why[256];
	uint64_t k;

	switch (type) {
	case MPIV__MSG_TYPE__MSG_IMAGE_DATA:
		if (cs_upload_data(p->cs, p->up, payload, len, why,
		    sizeof(why)) < 0)
			cs_peer_upload_failed(p, why, false);
		return;
	case MPIV__MSG_TYPE__MSG_IMAGE_END:
		k = cs_upload_ckpt_no(p->up);
		if (cs_upload_end(p->cs, p->up, (Mpiv__ImageEnd *)m, why,
		    sizeof(why)) < 0) {
			cs_peer_upload_failed(p, why, true);
			return;
		}
		p->up = NULL;	/* committed and freed */
		cs_peer_ack(p, true, k, NULL);
		cs_peer_set_state(p, CSP_IDLE);
		return;
	default:
		snprintf(why, sizeof(why), "unexpected %s frame during an "
		    "upload", frame_type_name(type));
		cs_peer_error(p, why);
		return;
	}
}

/* After a refused upload: its data is dropped until its ImageEnd. */
static void
cs_peer_drain_frame(struct cs_peer *p, uint16_t type)
{
	char why[128];

	if (type == MPIV__MSG_TYPE__MSG_IMAGE_DATA)
		return;
	if (type == MPIV__MSG_TYPE__MSG_IMAGE_END) {
		cs_peer_set_state(p, CSP_IDLE);
		return;
	}
	snprintf(why, sizeof(why), "unexpected %s frame after a refused "
	    "upload", frame_type_name(type));
	cs_peer_error(p, why);
}

static void
cs_peer_on_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m, uint8_t *payload)
{
	struct cs_peer *p = conn_udata(c);
	char why[128];

	cs_peer_touch(p);
	switch (p->state) {
	case CSP_HELLO:
		if (h->type != MPIV__MSG_TYPE__MSG_HELLO)
			cs_peer_error(p, "expected Hello first");
		else
			cs_peer_hello(p, (Mpiv__Hello *)m);
		break;
	case CSP_IDLE:
		cs_peer_idle_frame(p, h->type, m);
		break;
	case CSP_UPLOAD:
		cs_peer_upload_frame(p, h->type, m, payload, h->payload_len);
		break;
	case CSP_DRAIN:
		cs_peer_drain_frame(p, h->type);
		break;
	case CSP_DOWNLOAD:
		snprintf(why, sizeof(why), "unexpected %s frame during a "
		    "download", frame_type_name(h->type));
		cs_peer_error(p, why);
		break;
	case CSP_DEAD:
		break;
	}
	free(payload);
}

/*
 * Before a payload is read: only ImageData of an upload carries one, at
 * most CS_MAX_CHUNK bytes. Anything else costs the connection before a
 * byte of it is allocated.
 */
static uint8_t *
cs_peer_on_header(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	struct cs_peer *p = conn_udata(c);
	char why[128];

	if (h->type != MPIV__MSG_TYPE__MSG_IMAGE_DATA ||
	    (p->state != CSP_UPLOAD && p->state != CSP_DRAIN)) {
		snprintf(why, sizeof(why), "unexpected payload on a %s frame",
		    frame_type_name(h->type));
		cs_peer_error(p, why);
	} else if (h->payload_len > CS_MAX_CHUNK) {
		snprintf(why, sizeof(why), "image chunk of %" PRIu32 " bytes "
		    "(at most %u)", h->payload_len, CS_MAX_CHUNK);
		cs_peer_error(p, why);
	}
	return NULL;
}

static void
cs_peer_on_progress(struct conn *c, size_t have)
{
	cs_peer_touch(conn_udata(c));
}

static void
cs_peer_on_close(struct conn *c, const char *reason)
{
	struct cs_peer *p = conn_udata(c);
	struct cs *cs = p->cs;

	if (p->up != NULL)
		cs_upload_abort(p->up, reason);
	cs_download_free(p->dl);
	ev_timer_stop(cs->loop, &p->idle_w);
	if (p->prev != NULL)
		p->prev->next = p->next;
	else
		cs->peers = p->next;
	if (p->next != NULL)
		p->next->prev = p->prev;
	log_debug("cs peer=%s closed reason=\"%s\"", conn_peer(c), reason);
	free(p);
}

static const struct conn_ops cs_peer_ops = {
	.on_frame = cs_peer_on_frame,
	.on_header = cs_peer_on_header,
	.on_progress = cs_peer_on_progress,
	.on_close = cs_peer_on_close,
};

static void
cs_peer_on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct cs_peer *p = w->data;
	char why[96];

	snprintf(why, sizeof(why), "%s stalled for %.0f s",
	    cs_peer_state_names[p->state], w->repeat);
	ev_timer_stop(loop, w);
	cs_peer_error(p, why);
}

/* Wraps an accepted socket; the peer must say Hello within a while. */
struct cs_peer *
cs_peer_new(struct cs *cs, int fd)
{
	struct cs_peer *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		log_warn("cs peer: calloc");
		close(fd);
		return NULL;
	}
	p->cs = cs;
	p->state = CSP_HELLO;
	if ((p->c = conn_new(cs->loop, fd, &cs_peer_ops, p)) == NULL) {
		close(fd);
		free(p);
		return NULL;
	}
	conn_auth_server(p->c, &cs->as);
	ev_init(&p->idle_w, cs_peer_on_timeout);
	p->idle_w.repeat = CS_HELLO_TIMEOUT;
	p->idle_w.data = p;
	ev_timer_again(cs->loop, &p->idle_w);
	p->next = cs->peers;
	if (cs->peers != NULL)
		cs->peers->prev = p;
	cs->peers = p;
	log_debug("cs accepted peer=%s", conn_peer(p->c));
	return p;
}

/* Once per loop iteration: downloads whose write queue drained go on. */
void
cs_peer_pump_all(struct cs *cs)
{
	for (struct cs_peer *p = cs->peers; p != NULL; p = p->next) {
		if (p->state != CSP_DOWNLOAD || conn_is_closing(p->c) ||
		    conn_queued(p->c) >= CS_CHUNK)
			continue;
		cs_peer_touch(p);
		if (cs_download_pump(cs, p->dl, p->c)) {
			cs_download_free(p->dl);
			p->dl = NULL;
			cs_peer_set_state(p, CSP_IDLE);
		}
	}
}

void
cs_peer_kill_all(struct cs *cs)
{
	for (struct cs_peer *p = cs->peers; p != NULL; p = p->next)
		conn_close(p->c, "checkpoint server stopping", false);
}
