/*
 * disp_events.c: what happens to a job, told to its client as it
 * happens (JobEvent, MSG_JOB_EVENT): launches, starts, exits, kills,
 * replays caught up, checkpoints, lost nodes. `mpiv run` keeps them for
 * the report's "events" and draws the timeline from them
 * (docs/EXPERIMENTS.md). Nothing is kept here: a job whose client left
 * has nobody to tell.
 */
#include <stdarg.h>
#include <stdio.h>

#include "disp_priv.h"

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
