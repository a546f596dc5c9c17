/*
 * cs_disp.c: `--dispatcher`: the CS dials the dispatcher, says
 * Hello{ROLE_CS} and ServiceRegister{ROLE_CS, addr}, and keeps the link
 * up: lost, it is redialled after a second; refused, after a delay that
 * doubles up to CS_DISP_MAX_BACKOFF (so a dispatcher that does not take
 * checkpoint servers is not hammered). A Heartbeat from the dispatcher
 * (its stall probe) is echoed; an ImageGrant (a rank's new current
 * incarnation) goes to cs_grant.c, a StoreStatsReq is answered
 * (cs_stats.c); CsJobs (as we register) and JobEnd drop the images of
 * jobs that no longer run (cs_store.c); other frames are logged and
 * ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cs_priv.h"
#include "frame.h"
#include "log.h"

#define CS_DISP_DIAL_TIMEOUT 3.0
#define CS_DISP_BACKOFF	     1.0
#define CS_DISP_MAX_BACKOFF  30.0

static void cs_disp_dial(struct cs *cs);

static void
cs_disp_redial_later(struct cs *cs)
{
	if (cs->stopping)
		return;
	ev_timer_stop(cs->loop, &cs->disp_redial_w);
	ev_timer_set(&cs->disp_redial_w, cs->disp_backoff, 0.);
	ev_timer_start(cs->loop, &cs->disp_redial_w);
}

/*
 * CsJobs, as we register: who the dispatcher is and the jobs it runs.
 * Images of any other job are dropped (cs_store_sweep). A new dispatcher
 * may number its jobs as a gone one did: what we remember of ended jobs
 * is then forgotten.
 */
static void
cs_disp_jobs(struct cs *cs, const Mpiv__CsJobs *cj)
{
	size_t n = strlen(cj->dispatcher_id);

	if (n == 0 || n > CS_DISP_ID_MAX) {
		log_warnx("cs dispatcher=%s sent a bad instance id (%zu bytes): "
		    "stored images not swept", cs->dispatcher, n);
		return;
	}
	if (strcmp(cs->disp_id, cj->dispatcher_id) != 0) {
		if (cs->disp_id[0] != '\0')
			log_info("cs dispatcher=%s is a new instance: the "
			    "previous one's images go", cs->dispatcher);
		memcpy(cs->disp_id, cj->dispatcher_id, n + 1);
		cs->nended = 0;
		memset(cs->ended, 0, sizeof(cs->ended));
	}
	cs_store_sweep(cs, cs->disp_id, cj->live, cj->n_live);
	n = cs_grant_keep(cs, cj->live, cj->n_live);
	if (n > 0)
		log_info("cs forgot the ranks of jobs no longer run grants=%zu",
		    n);
}

bool
cs_job_ended(const struct cs *cs, const char *job)
{
	for (unsigned i = 0; i < CS_ENDED_KEEP; i++)
		if (strcmp(cs->ended[i], job) == 0)
			return true;
	return false;
}

static void
cs_disp_on_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m, uint8_t *payload)
{
	struct cs *cs = conn_udata(c);

	free(payload);
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		Mpiv__HelloReply *r = (Mpiv__HelloReply *)m;
		if (r->ok) {
			cs->disp_backoff = CS_DISP_BACKOFF;
			log_info("cs registered with dispatcher=%s addr=%s",
			    cs->dispatcher, cs->addr);
			return;
		}
		log_warnx("cs dispatcher=%s refused us reason=\"%s\", retrying "
		    "in %.0f s", cs->dispatcher, r->error, cs->disp_backoff);
		conn_close(c, "dispatcher refused registration", false);
		return;
	}
	case MPIV__MSG_TYPE__MSG_ERROR:
		log_warnx("cs dispatcher error text=\"%s\"",
		    ((Mpiv__Error *)m)->text);
		return;
	case MPIV__MSG_TYPE__MSG_IMAGE_GRANT:
		cs_grant_from_dispatcher(cs, (Mpiv__ImageGrant *)m);
		return;
	case MPIV__MSG_TYPE__MSG_HEARTBEAT:
		/* The dispatcher's probe: a CS that stops echoing is told
		   to its jobs' clients as stalled (dispatcher/disp_warn.c). */
		(void)conn_send(c, MPIV__MSG_TYPE__MSG_HEARTBEAT, m, NULL, 0);
		return;
	case MPIV__MSG_TYPE__MSG_STORE_STATS_REQ:
		cs_stats_answer(cs, c, (Mpiv__StoreStatsReq *)m);
		return;
	case MPIV__MSG_TYPE__MSG_CS_JOBS:
		cs_disp_jobs(cs, (Mpiv__CsJobs *)m);
		return;
	case MPIV__MSG_TYPE__MSG_JOB_END: {
		const char *job = ((Mpiv__JobEnd *)m)->job_id;

		if (!cs_store_name_ok(job))
			return;
		snprintf(cs->ended[cs->nended++ % CS_ENDED_KEEP],
		    sizeof(cs->ended[0]), "%s", job);
		cs_store_drop_job(cs, job, "the job has ended");
		cs_notify_forget(cs, job);
		log_debug("cs job=%s ended: grants=%zu forgotten", job,
		    cs_grant_forget(cs, job));
		return;
	}
	default:
		log_debug("cs ignoring %s from the dispatcher",
		    frame_type_name(h->type));
		return;
	}
}

static void
cs_disp_on_close(struct conn *c, const char *reason)
{
	struct cs *cs = conn_udata(c);

	cs->disp = NULL;
	if (cs->stopping)
		return;
	log_warnx("cs lost dispatcher=%s reason=\"%s\", redialling",
	    cs->dispatcher, reason);
	cs_disp_redial_later(cs);
	if (cs->disp_backoff < CS_DISP_MAX_BACKOFF)
		cs->disp_backoff *= 2;
}

static const struct conn_ops cs_disp_ops = {
	.on_frame = cs_disp_on_frame,
	.on_close = cs_disp_on_close,
};

static void
cs_disp_on_dial(void *arg, int fd, int err)
{
	struct cs *cs = arg;
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__ServiceRegister sr = MPIV__SERVICE_REGISTER__INIT;

	cs->disp_dial = NULL;
	if (fd < 0) {
		log_warnx("cs cannot reach dispatcher=%s: %s, retrying",
		    cs->dispatcher, strerror(err));
		cs_disp_redial_later(cs);
		return;
	}
	if ((cs->disp = conn_new(cs->loop, fd, &cs_disp_ops, cs)) == NULL) {
		close(fd);
		cs_disp_redial_later(cs);
		return;
	}
	conn_auth_client(cs->disp, cs->keys.enabled ? &cs->keys.secret : NULL);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CS;
	h.rank = -1;
	h.name = cs->addr;
	sr.role = MPIV__ROLE__ROLE_CS;
	sr.addr = cs->addr;
	(void)conn_send(cs->disp, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0);
	(void)conn_send(cs->disp, MPIV__MSG_TYPE__MSG_SERVICE_REGISTER,
	    &sr.base, NULL, 0);
}

static void
cs_disp_dial(struct cs *cs)
{
	if (cs->stopping || cs->disp != NULL || cs->disp_dial != NULL)
		return;
	cs->disp_dial = dial_start(cs->loop, cs->dispatcher,
	    CS_DISP_DIAL_TIMEOUT, cs_disp_on_dial, cs);
	if (cs->disp_dial == NULL)
		cs_disp_redial_later(cs);
}

static void
cs_disp_on_redial(struct ev_loop *loop, ev_timer *w, int revents)
{
	cs_disp_dial(w->data);
}

void
cs_disp_start(struct cs *cs)
{
	ev_init(&cs->disp_redial_w, cs_disp_on_redial);
	cs->disp_redial_w.data = cs;
	cs->disp_backoff = CS_DISP_BACKOFF;
	if (cs->dispatcher != NULL)
		cs_disp_dial(cs);
}

void
cs_disp_stop(struct cs *cs)
{
	ev_timer_stop(cs->loop, &cs->disp_redial_w);
	dial_cancel(cs->disp_dial);
	cs->disp_dial = NULL;
	if (cs->disp != NULL)
		conn_close(cs->disp, "checkpoint server stopping", false);
}
