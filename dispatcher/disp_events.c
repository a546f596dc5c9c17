/*
 * disp_events.c: what happens to a job, told to its client as it
 * happens (JobEvent, MSG_JOB_EVENT): launches, starts, exits, kills,
 * replays caught up, checkpoints, lost nodes. `mpiv run` keeps them for
 * the report's "events" and draws the timeline from them
 * (docs/EXPERIMENTS.md). Nothing is kept here: a job whose client left
 * has nobody to tell.
 *
 * While a job runs, its sizes are sampled every DEVENTS_SAMPLE s: each of
 * its CMs is asked what its logs of the job hold (CmStatsReq{job}: log
 * payloads in memory and spilled, entries and outcomes), each of its CSs
 * what the job's images take (StoreStatsReq). When the last answer of a
 * round is in, or at the next tick with what came, a "sizes" event tells
 * the sums (value: log bytes, store_bytes: image bytes; detail "partial"
 * when one did not answer: its last answer counts). The timeline's lower
 * panels and mpiv run's status line are drawn from these.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"

#define DEVENTS_SAMPLE	0.2	/* s between samples of a running job */

void
djob_event(struct djob *j, const char *kind, int rank, uint32_t inc,
    uint64_t value, const char *node, double span1, double span2,
    const char *fmt, ...)
{
	Mpiv__JobEvent e = MPIV__JOB_EVENT__INIT;
	char detail[256] = "";
	va_list ap;

	if (j->client == NULL || conn_is_closing(j->client->c))
		return;
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	e.job_id = j->id;
	e.t = ev_now(j->d->loop) - j->t_submit;
	e.kind = (char *)kind;
	e.rank = rank;
	e.incarnation = inc;
	e.value = value;
	e.node = (char *)(node != NULL ? node : "");
	e.detail = detail;
	e.span1 = span1;
	e.span2 = span2;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_EVENT, &e.base,
	    NULL, 0);
}

/* The sums of the last answers: a "sizes" event. */
static void
devents_sizes(struct djob *j, bool partial)
{
	Mpiv__JobEvent e = MPIV__JOB_EVENT__INIT;
	uint64_t log = 0, store = 0;

	if (j->client == NULL || conn_is_closing(j->client->c))
		return;
	for (int i = 0; i < j->nsamples; i++) {
		const struct dsample *s = &j->samples[i];

		if (s->cm)
			log += s->bytes;
		else
			store += s->bytes;
	}
	e.job_id = j->id;
	e.t = ev_now(j->d->loop) - j->t_submit;
	e.kind = (char *)"sizes";
	e.rank = -1;
	e.value = log;
	e.store_bytes = store;
	e.node = (char *)"";
	e.detail = (char *)(partial ? "partial" : "");
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_EVENT, &e.base,
	    NULL, 0);
}

/* The slot of peer p in j's samples, or NULL. */
static struct dsample *
devents_slot(struct djob *j, const struct dpeer *p)
{
	for (int i = 0; i < j->nsamples; i++)
		if (j->samples[i].p == p)
			return &j->samples[i];
	return NULL;
}

/*
 * A new round: the round before is told if it was not (partial), the
 * slots are rebuilt from the job's CMs and CSs now (a lost one drops
 * out, a new one comes in at 0), and each is asked.
 */
static void
devents_on_sample(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct djob *j = w->data;
	Mpiv__CmStatsReq cq = MPIV__CM_STATS_REQ__INIT;
	Mpiv__StoreStatsReq sq = MPIV__STORE_STATS_REQ__INIT;
	struct dsample *ns;
	int n = 0, cap = j->ncms + j->ncss;

	(void)loop;
	(void)revents;
	if (j->state != DJOB_RUNNING || j->client == NULL)
		return;
	if (j->sample_due > 0)
		devents_sizes(j, true);
	if (cap == 0 || (ns = calloc((size_t)cap, sizeof(*ns))) == NULL)
		return;
	for (int i = 0; i < j->ncms + j->ncss; i++) {
		struct dpeer *p = i < j->ncms ? j->cms[i] : j->css[i - j->ncms];
		const struct dsample *old;
		bool twice = false;

		for (int k = 0; k < n; k++)
			twice |= ns[k].p == p;
		if (p == NULL || twice || p->addr[0] == '\0' ||
		    conn_is_closing(p->c))
			continue;
		old = devents_slot(j, p);
		ns[n].p = p;
		ns[n].cm = p->role == DPEER_CM;
		ns[n].bytes = old != NULL ? old->bytes : 0;
		ns[n].due = true;
		n++;
	}
	free(j->samples);
	j->samples = ns;
	j->nsamples = j->sample_due = n;
	cq.job_id = sq.job_id = j->id;
	for (int i = 0; i < n; i++)
		if (ns[i].cm)
			(void)conn_send(ns[i].p->c,
			    MPIV__MSG_TYPE__MSG_CM_STATS_REQ, &cq.base, NULL, 0);
		else
			(void)conn_send(ns[i].p->c,
			    MPIV__MSG_TYPE__MSG_STORE_STATS_REQ, &sq.base, NULL,
			    0);
}

/* An answer of p about job id: the round is told once all are in. */
static void
devents_answer(struct dpeer *p, const char *id, uint64_t bytes)
{
	struct djob *j;
	struct dsample *s;

	if (*id == '\0' || (j = djob_find(p->d, id)) == NULL ||
	    (s = devents_slot(j, p)) == NULL)
		return;		/* a stall probe's answer, or a late one */
	s->bytes = bytes;
	if (!s->due)
		return;
	s->due = false;
	if (--j->sample_due == 0)
		devents_sizes(j, false);
}

void
devents_cm_stats(struct dpeer *cm, const Mpiv__CmStats *cs)
{
	devents_answer(cm, cs->job_id, cs->log_bytes + cs->spill_bytes +
	    cs->meta_bytes);
}

void
devents_store_stats(struct dpeer *cs, const Mpiv__StoreStats *ss)
{
	devents_answer(cs, ss->job_id, ss->bytes);
}

/* From the job's start (running) to its end; again after a regen. */
void
devents_sample_start(struct djob *j)
{
	devents_sample_stop(j);
	ev_timer_init(&j->sample_w, devents_on_sample, DEVENTS_SAMPLE,
	    DEVENTS_SAMPLE);
	j->sample_w.data = j;
	ev_timer_start(j->d->loop, &j->sample_w);
}

void
devents_sample_stop(struct djob *j)
{
	ev_timer_stop(j->d->loop, &j->sample_w);
	free(j->samples);
	j->samples = NULL;
	j->nsamples = j->sample_due = 0;
}
