/*
 * disp_peer.c: one connection to the dispatcher (CM, node agent or
 * client). The first frame must be Hello; it fixes the role, and every
 * later frame is routed by role. A bad peer costs its connection only.
 */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"
#include "net.h"

static const char *const dpeer_role_names[] = {
	"new", "cm", "node", "client", "cs", "dead",
};

static void
dpeer_hello_reply(struct dpeer *p, bool ok, const char *error)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;

	hr.ok = ok;
	hr.version = FRAME_VERSION;
	hr.error = (char *)(error != NULL ? error : "");
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, NULL,
	    0);
}

/* The one place a peer's role changes, traced. */
void
dpeer_set_role(struct dpeer *p, enum disp_role role)
{
	if (p->role == role)
		return;
	log_debug("dispatcher peer=%s role %s -> %s", conn_peer(p->c),
	    dpeer_role_names[p->role], dpeer_role_names[role]);
	p->role = role;
}

/* Refuses a peer: HelloReply{ok=false}, then close once flushed. */
static void
dpeer_refuse(struct dpeer *p, const char *why)
{
	log_warnx("dispatcher refusing peer=%s reason=\"%s\"", conn_peer(p->c),
	    why);
	dpeer_hello_reply(p, false, why);
	dpeer_set_role(p, DPEER_DEAD);
	conn_close(p->c, why, true);
}

/* An Error frame, then close (for peers past their Hello). */
static void
dpeer_error(struct dpeer *p, const char *why)
{
	Mpiv__Error e = MPIV__ERROR__INIT;

	log_warnx("dispatcher dropping peer=%s role=%s reason=\"%s\"",
	    conn_peer(p->c), dpeer_role_names[p->role], why);
	e.code = 1;
	e.text = (char *)why;
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_ERROR, &e.base, NULL, 0);
	djob_peer_lost(p);
	dpeer_set_role(p, DPEER_DEAD);
	conn_close(p->c, why, true);
}

static void
dpeer_hello(struct dpeer *p, const Mpiv__Hello *h)
{
	char why[160];

	if (h->version != FRAME_VERSION) {
		snprintf(why, sizeof(why), "protocol version %u not supported "
		    "(dispatcher speaks %u)", h->version, FRAME_VERSION);
		dpeer_refuse(p, why);
		return;
	}
	switch (h->role) {
	case MPIV__ROLE__ROLE_CM:
		dpeer_set_role(p, DPEER_CM);
		break;
	case MPIV__ROLE__ROLE_NODE:
		dpeer_set_role(p, DPEER_NODE);
		break;
	case MPIV__ROLE__ROLE_CLIENT:
		dpeer_set_role(p, DPEER_CLIENT);
		break;
	case MPIV__ROLE__ROLE_CS:
		dpeer_set_role(p, DPEER_CS);
		break;
	default:
		snprintf(why, sizeof(why), "role %d cannot talk to the "
		    "dispatcher", (int)h->role);
		dpeer_refuse(p, why);
		return;
	}
	snprintf(p->name, sizeof(p->name), "%s",
	    *h->name != '\0' ? h->name : conn_peer(p->c));
	ev_timer_stop(p->d->loop, &p->hello_w);
	if (p->role == DPEER_NODE) {
		/* From now on the timer is the heartbeat deadline. */
		p->hello_w.repeat = p->d->hb_timeout;
		ev_timer_again(p->d->loop, &p->hello_w);
	}
	log_info("dispatcher hello role=%s name=%s peer=%s",
	    dpeer_role_names[p->role], p->name, conn_peer(p->c));
	dpeer_hello_reply(p, true, NULL);
}

/* A CM (or CS) that listens on a wildcard address is reached at its
   peer IP. */
static void
dpeer_cm_register(struct dpeer *p, const Mpiv__ServiceRegister *sr)
{
	char host[96], port[16], phost[96], pport[16];

	if (net_split_hostport(sr->addr, host, sizeof(host), port,
	    sizeof(port)) < 0 || *port == '\0') {
		dpeer_error(p, "bad service address");
		return;
	}
	if ((*host == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0) &&
	    net_split_hostport(conn_peer(p->c), phost, sizeof(phost), pport,
	    sizeof(pport)) == 0)
		snprintf(host, sizeof(host), "%s", phost);
	if (strchr(host, ':') != NULL)
		snprintf(p->addr, sizeof(p->addr), "[%s]:%s", host, port);
	else
		snprintf(p->addr, sizeof(p->addr), "%s:%s", host, port);
	log_info("dispatcher %s registered addr=%s",
	    p->role == DPEER_CS ? "cs" : "cm", p->addr);
	if (p->role == DPEER_CS) {
		djob_cs_jobs(p);
		djob_cs_returned(p);
	}
	djob_schedule(p->d);
}

static void
dpeer_cm_frame(struct dpeer *p, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_SERVICE_REGISTER: {
		Mpiv__ServiceRegister *sr = (Mpiv__ServiceRegister *)m;
		if (sr->role != MPIV__ROLE__ROLE_CM) {
			dpeer_error(p, "only channel memories register here");
			return;
		}
		dpeer_cm_register(p, sr);
		return;
	}
	case MPIV__MSG_TYPE__MSG_JOB_STATUS:
		djob_cm_status(p, (Mpiv__JobStatus *)m);
		return;
	case MPIV__MSG_TYPE__MSG_ERROR:
		djob_cm_error(p, ((Mpiv__Error *)m)->text);
		return;
	case MPIV__MSG_TYPE__MSG_REPLAY_DONE:
		djob_replay_done(p, (Mpiv__ReplayDone *)m);
		return;
	case MPIV__MSG_TYPE__MSG_CM_PRESSURE:
		djob_cm_pressure(p, (Mpiv__CmPressure *)m);
		dwarn_pressure(p, (Mpiv__CmPressure *)m);
		return;
	case MPIV__MSG_TYPE__MSG_WAIT_STATE:
		ddl_wait_state(p, (Mpiv__WaitState *)m);
		return;
	case MPIV__MSG_TYPE__MSG_HEARTBEAT:
		return;
	case MPIV__MSG_TYPE__MSG_CM_STATS:
		devents_cm_stats(p, (Mpiv__CmStats *)m);
		return;
	default:
		break;
	}
	dpeer_error(p, "unexpected frame from a channel memory");
}

static void
dpeer_cs_frame(struct dpeer *p, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_SERVICE_REGISTER: {
		Mpiv__ServiceRegister *sr = (Mpiv__ServiceRegister *)m;
		if (sr->role != MPIV__ROLE__ROLE_CS) {
			dpeer_error(p, "only checkpoint servers register here");
			return;
		}
		dpeer_cm_register(p, sr);
		return;
	}
	case MPIV__MSG_TYPE__MSG_HEARTBEAT:
		return;
	case MPIV__MSG_TYPE__MSG_STORE_STATS:
		devents_store_stats(p, (Mpiv__StoreStats *)m);
		return;
	default:
		break;
	}
	dpeer_error(p, "unexpected frame from a checkpoint server");
}

static void
dpeer_node_frame(struct dpeer *p, const struct frame_hdr *h,
    ProtobufCMessage *m, uint8_t *payload)
{
	ev_timer_again(p->d->loop, &p->hello_w);	/* any frame is a sign of life */
	p->last_seen = ev_now(p->d->loop);
	if (h->type != MPIV__MSG_TYPE__MSG_NODE_REGISTER &&
	    p->node_id[0] == '\0') {
		dpeer_error(p, "a node registers before anything else");
		return;
	}
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_NODE_REGISTER: {
		Mpiv__NodeRegister *nr = (Mpiv__NodeRegister *)m;
		if (nr->slots < 1 || nr->slots > DISP_MAX_RANKS) {
			dpeer_error(p, "slots out of range");
			return;
		}
		dnode_register(p, nr);
		return;
	}
	case MPIV__MSG_TYPE__MSG_HEARTBEAT:
		/* Echoed: the agent's proof that we still count it alive. */
		(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_HEARTBEAT, m, NULL, 0);
		return;
	case MPIV__MSG_TYPE__MSG_TASK_STARTED:
		djob_task_started(p, (Mpiv__TaskStarted *)m);
		return;
	case MPIV__MSG_TYPE__MSG_TASK_EXIT:
		djob_task_exit(p, (Mpiv__TaskExit *)m);
		return;
	case MPIV__MSG_TYPE__MSG_OUTPUT:
		djob_output(p, (Mpiv__Output *)m, payload, h->payload_len);
		return;
	case MPIV__MSG_TYPE__MSG_OUTPUT_SYNC:
		/* The rank's Output frames came before this on the same
		   connection and are handled: said back at once. */
		(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_OUTPUT_SYNCED, m,
		    NULL, 0);
		return;
	case MPIV__MSG_TYPE__MSG_CKPT_TAKEN:
		djob_ckpt_taken(p, (Mpiv__CkptTaken *)m);
		return;
	case MPIV__MSG_TYPE__MSG_BINARY_GET:
		dbin_node_get(p, (Mpiv__BinaryGet *)m);
		return;
	default:
		break;
	}
	dpeer_error(p, "unexpected frame from a node agent");
}

/*
 * JobCancel: the client gives up on the job it submitted (mpiv run's
 * --timeout, a signal to it). The job fails with the client's code and
 * reason (unless it failed already), which kills its ranks; the client
 * gets the JobDone of any failure, with the kills and restarts so far,
 * and writes its report from it. A client without a job (it never had
 * one, or its JobDone is on the way) is only logged.
 */
static void
dpeer_client_cancel(struct dpeer *p, const Mpiv__JobCancel *jc)
{
	char why[300];
	size_t n = 0;
	int code = jc->exit_code >= 1 && jc->exit_code <= 255 ?
	    jc->exit_code : 1;

	if (p->job == NULL) {
		log_info("dispatcher cancel from a client without a job "
		    "peer=%s", conn_peer(p->c));
		return;
	}
	/* one printable line for the log, the report and mpiv status */
	while (jc->reason[n] != '\0' && n + 1 < sizeof(why) &&
	    (unsigned char)jc->reason[n] >= 0x20 && jc->reason[n] != 0x7f) {
		why[n] = jc->reason[n];
		n++;
	}
	why[n] = '\0';
	if (n == 0)
		snprintf(why, sizeof(why), "cancelled by the client");
	log_info("dispatcher client cancels job=%s exit_code=%d reason=\"%s\"",
	    p->job->id, code, why);
	djob_fail(p->job, code, why);
}

static void
dpeer_client_frame(struct dpeer *p, const struct frame_hdr *h,
    ProtobufCMessage *m, const uint8_t *payload)
{
	const char *err = NULL;

	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_JOB_SUBMIT:
		if (p->job != NULL) {
			dpeer_error(p, "one job per client connection");
			return;
		}
		if (djob_submit(p->d, p, (Mpiv__JobSubmit *)m, payload,
		    h->payload_len, &err) == NULL)
			dpeer_error(p, err);
		return;
	case MPIV__MSG_TYPE__MSG_KILL:
		djob_client_kill(p, (Mpiv__Kill *)m);
		return;
	case MPIV__MSG_TYPE__MSG_CKPT_REQUEST:
		djob_client_ckpt(p, (Mpiv__CkptRequest *)m);
		return;
	case MPIV__MSG_TYPE__MSG_NODE_KILL:
		dnode_client_kill(p, (Mpiv__NodeKill *)m);
		return;
	case MPIV__MSG_TYPE__MSG_STATUS_REQUEST:
		dstatus_reply(p, (Mpiv__StatusRequest *)m);
		return;
	case MPIV__MSG_TYPE__MSG_BINARY_DATA:
		dbin_client_data(p, (Mpiv__BinaryData *)m, payload,
		    h->payload_len);
		return;
	case MPIV__MSG_TYPE__MSG_BINARY_END:
		dbin_client_end(p, (Mpiv__BinaryEnd *)m);
		return;
	case MPIV__MSG_TYPE__MSG_JOB_CANCEL:
		dpeer_client_cancel(p, (Mpiv__JobCancel *)m);
		return;
	case MPIV__MSG_TYPE__MSG_BYE:
		djob_peer_lost(p);
		dpeer_set_role(p, DPEER_DEAD);
		conn_close(p->c, "client said bye", true);
		return;
	default:
		break;
	}
	dpeer_error(p, "unexpected frame from a client");
}

static void
dpeer_on_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m, uint8_t *payload)
{
	struct dpeer *p = conn_udata(c);

	switch (p->role) {
	case DPEER_NEW:
		if (h->type != MPIV__MSG_TYPE__MSG_HELLO)
			dpeer_refuse(p, "expected hello as the first frame");
		else
			dpeer_hello(p, (Mpiv__Hello *)m);
		break;
	case DPEER_CM:
		dwarn_heard(p);
		dpeer_cm_frame(p, h, m);
		break;
	case DPEER_NODE:
		dpeer_node_frame(p, h, m, payload);
		break;
	case DPEER_CLIENT:
		dpeer_client_frame(p, h, m, payload);
		break;
	case DPEER_CS:
		dwarn_heard(p);
		dpeer_cs_frame(p, h, m);
		break;
	case DPEER_DEAD:
		break;
	}
	free(payload);
}

static void
dpeer_on_close(struct conn *c, const char *reason)
{
	struct dpeer *p = conn_udata(c);
	struct disp *d = p->d;

	log_info("dispatcher connection closed role=%s name=%s peer=%s "
	    "reason=\"%s\"", dpeer_role_names[p->role], p->name, conn_peer(c),
	    reason);
	ev_timer_stop(d->loop, &p->hello_w);
	if (p->role == DPEER_NODE && !d->stopping) {
		char why[200];

		snprintf(why, sizeof(why), "connection lost: %s", reason);
		dnode_declare_dead(p, why);
	}
	djob_peer_lost(p);
	if (p->prev != NULL)
		p->prev->next = p->next;
	else
		d->peers = p->next;
	if (p->next != NULL)
		p->next->prev = p->prev;
	free(p);
	if (!d->stopping)
		djob_schedule(d);
}

static const struct conn_ops dpeer_ops = {
	.on_frame = dpeer_on_frame,
	.on_close = dpeer_on_close,
};

/* Hello deadline for new peers; heartbeat deadline for nodes. */
static void
dpeer_on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dpeer *p = w->data;

	ev_timer_stop(loop, w);
	if (p->role == DPEER_NEW) {
		dpeer_refuse(p, "no hello received in time");
	} else if (p->role == DPEER_NODE) {
		char why[96];

		snprintf(why, sizeof(why), "no heartbeat for %g s",
		    p->d->hb_timeout);
		dnode_declare_dead(p, why);
	}
}

/* Wraps an accepted socket; owns fd from here on, even on failure. */
struct dpeer *
dpeer_new(struct disp *d, int fd)
{
	struct dpeer *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		log_errorx("dispatcher out of memory accepting a connection");
		close(fd);
		return NULL;
	}
	p->d = d;
	if ((p->c = conn_new(d->loop, fd, &dpeer_ops, p)) == NULL) {
		close(fd);
		free(p);
		return NULL;
	}
	conn_auth_server(p->c, &d->as);
	snprintf(p->name, sizeof(p->name), "%s", conn_peer(p->c));
	ev_timer_init(&p->hello_w, dpeer_on_timer, DISP_HELLO_TIMEOUT, 0.);
	p->hello_w.data = p;
	ev_timer_start(d->loop, &p->hello_w);
	p->next = d->peers;
	if (d->peers != NULL)
		d->peers->prev = p;
	d->peers = p;
	return p;
}

/*
 * Output back-pressure: a client that reads slowly must not make the
 * dispatcher buffer without bound. The node whose Output overflowed the
 * client's queue stops being read until every client queue drained below
 * DISP_OUT_LOW; its heartbeat deadline is pushed back meanwhile.
 */
void
dpeer_backpressure(struct disp *d, struct dpeer *node)
{
	if (conn_is_closing(node->c))
		return;
	conn_pause_read(node->c, true);
	if (!ev_is_active(&d->bp_w))
		ev_timer_again(d->loop, &d->bp_w);
}

void
dpeer_on_backpressure(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct disp *d = w->data;
	struct dpeer *p;

	for (p = d->peers; p != NULL; p = p->next) {
		if (p->role == DPEER_CLIENT && conn_queued(p->c) > DISP_OUT_LOW) {
			for (struct dpeer *n = d->peers; n != NULL; n = n->next)
				if (n->role == DPEER_NODE &&
				    conn_read_paused(n->c))
					ev_timer_again(loop, &n->hello_w);
			return;		/* repeat timer: look again later */
		}
	}
	ev_timer_stop(loop, w);
	for (p = d->peers; p != NULL; p = p->next)
		if (p->role == DPEER_NODE && conn_read_paused(p->c))
			conn_pause_read(p->c, false);
}

/* Shutdown: every connection closes now; on_close frees each peer. */
void
dpeer_close_all(struct disp *d)
{
	for (struct dpeer *p = d->peers; p != NULL; p = p->next) {
		ev_timer_stop(d->loop, &p->hello_w);
		conn_close(p->c, "dispatcher shutting down", false);
	}
}
