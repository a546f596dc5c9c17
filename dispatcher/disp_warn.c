/*
 * disp_warn.c: every failure visible. Five conditions
 * of a job are told to its client (mpiv run) when they begin and when
 * they clear, and shown by mpiv status while they hold:
 *
 *   ckpt_failing  a rank's checkpoints failed DWARN_CKPT_STREAK times in
 *                 a row (CS dead or unreachable, store full, CRIU dump
 *                 failed, upload refused: the node's CkptTaken says why),
 *                 or one of the job's checkpoint servers is gone;
 *                 cleared when every rank took a checkpoint again
 *   waiting       the job waits for CMs, CSs or node slots, a killed
 *                 rank waits for a free slot, or the job waits for its
 *                 ranks to end after one failed past MPI_Finalize, for
 *                 DWARN_WAIT_GRACE s
 *   stalled       a CM or CS of the job left a probe unanswered for
 *                 stall_after s (CMs answer CmStatsReq, as they always
 *                 did; CSs echo a Heartbeat: a CS that never answered
 *                 one is not judged, an older build ignores them)
 *   log_pressure  a CM said its log of the job fills its --max-memory
 *                 (CmPressure, once a second while it does)
 *   deadlock      every rank waits, and no message moved for the job's
 *                 deadlock_after s (disp_deadlock.c); with
 *                 deadlock_abort the job fails instead
 *
 * Level-triggered: dwarn_update re-evaluates a job from its state (on
 * the events that change it and on a DWARN_TICK timer), so no path can
 * forget to clear a condition. A flapping condition cannot flood the
 * terminal: the client hears at most one begin line per kind per
 * warn_interval, and the clear line of a begin it was told (at once, so
 * "work again" is not late): at most two lines per kind per window. A
 * begin held back is told when the window ends, if it still holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

#define DWARN_TICK		0.5	/* s between evaluations */
#define DWARN_PROBE_IDLE	1.0	/* s of silence before a probe */
#define DWARN_CKPT_STREAK	3	/* failures in a row of one rank */
#define DWARN_WAIT_GRACE	3.0	/* s a wait lasts before it is told */
#define DWARN_PRESSURE_GONE	3.0	/* s without CmPressure: cleared */

static const char *const dwarn_names[DWARN_NKINDS] = {
	"ckpt_failing", "waiting", "stalled", "log_pressure", "deadlock",
};

/* The name of kind k, as in JobWarning.kind and the report. */
const char *
dwarn_kind_name(enum dwarn_kind k)
{
	return k < DWARN_NKINDS ? dwarn_names[k] : "?";
}

/* The line that says kind k of job j cleared. */
static void
dwarn_clear_text(const struct djob *j, enum dwarn_kind k, char *out,
    size_t n)
{
	switch (k) {
	case DWARN_CKPT:
		snprintf(out, n, "checkpoints of job %s work again", j->id);
		return;
	case DWARN_WAITING:
		snprintf(out, n, "job %s is no longer waiting", j->id);
		return;
	case DWARN_STALLED:
		snprintf(out, n, "job %s: its servers answer again", j->id);
		return;
	case DWARN_DEADLOCK:
		snprintf(out, n, "job %s: its ranks move messages again",
		    j->id);
		return;
	default:
		snprintf(out, n, "job %s: log pressure is over", j->id);
		return;
	}
}

/*
 * Tells the client about kind k if it was not told its current state
 * yet: a clear at once, a begin unless one of this kind went out less
 * than warn_interval ago (the tick tries again). JobWarning frames go
 * only to a client that submitted the job.
 */
static void
dwarn_tell(struct djob *j, enum dwarn_kind k, double now)
{
	struct dwarn *w = &j->warn[k];
	Mpiv__JobWarning jw = MPIV__JOB_WARNING__INIT;
	char clear[200];

	if (w->active == w->told || j->client == NULL)
		return;
	if (w->active && w->told_at > 0 &&
	    now - w->told_at < j->d->warn_interval)
		return;
	dwarn_clear_text(j, k, clear, sizeof(clear));
	jw.job_id = j->id;
	jw.kind = (char *)dwarn_names[k];
	jw.active = w->active;
	jw.text = w->active ? w->text : clear;
	jw.since_s = w->since - j->t_submit;
	jw.cleared_s = w->active ? 0. : w->cleared - j->t_submit;
	jw.count = k == DWARN_CKPT ? j->ckpt_failures : 0;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_WARNING,
	    &jw.base, NULL, 0);
	w->told = w->active;
	if (w->active)
		w->told_at = now;
	log_info("dispatcher warning told job=%s kind=%s active=%d", j->id,
	    dwarn_names[k], w->active);
}

/*
 * Kind k of job j holds now (text: the line that says so) or not. It
 * begins once it held for grace s, clears as soon as it does not hold.
 */
static void
dwarn_set(struct djob *j, enum dwarn_kind k, bool holds, const char *text,
    double grace, double now)
{
	struct dwarn *w = &j->warn[k];

	if (!holds) {
		w->seen = 0;
		if (w->active) {
			w->active = false;
			w->cleared = now;
			log_info("dispatcher warning cleared job=%s kind=%s "
			    "after_s=%.1f", j->id, dwarn_names[k],
			    now - w->since);
		}
	} else {
		if (w->seen == 0)
			w->seen = now;
		if (!w->active && now - w->seen >= grace) {
			w->active = true;
			w->since = now;
			w->cleared = 0;
			snprintf(w->text, sizeof(w->text), "%s", text);
			log_warnx("dispatcher warning job=%s kind=%s text=\"%s\"",
			    j->id, dwarn_names[k], w->text);
		}
	}
	dwarn_tell(j, k, now);
}

/* ckpt_failing: a lost CS of a job that checkpoints, or a rank whose
   last DWARN_CKPT_STREAK checkpoints failed. */
static bool
dwarn_ckpt_holds(const struct djob *j, char *text, size_t n)
{
	if (j->state != DJOB_RUNNING || j->failed || j->relay_only)
		return false;
	if (j->ckpt_interval > 0 || j->checkpoints > 0)
		for (int i = 0; i < j->ncss; i++)
			if (j->css[i] == NULL) {
				snprintf(text, n, "checkpoints of job %s are "
				    "failing: checkpoint server %s is gone "
				    "(its link to the dispatcher was lost)",
				    j->id, j->css_addr[i]);
				return true;
			}
	for (int r = 0; r < j->nranks; r++) {
		const struct drank *rk = &j->ranks[r];

		if (rk->exited || rk->ckpt_streak < DWARN_CKPT_STREAK)
			continue;
		snprintf(text, n, "checkpoints of job %s are failing: %.300s "
		    "(%u in a row)", j->id, j->ckpt_err, rk->ckpt_streak);
		return true;
	}
	return false;
}

/* waiting: the job for services or slots, or ranks for a free slot. */
static bool
dwarn_waiting_holds(const struct djob *j, char *text, size_t n)
{
	const char *where;
	int nwait = 0, first = -1;

	if (j->failed)
		return false;
	if (j->state == DJOB_WAITING) {
		snprintf(text, n, "job %s is waiting: %s", j->id, j->waitmsg);
		return true;
	}
	if (j->state != DJOB_RUNNING)
		return false;
	if (j->fin_code != 0) {
		/* told, so that a program whose other ranks never end (one
		   waits for a message the finished rank never sent) does not
		   hang silently */
		for (int r = 0; r < j->nranks; r++)
			if (!j->ranks[r].exited) {
				if (first < 0)
					first = r;
				nwait++;
			}
		snprintf(text, n, "job %s is waiting: %.160s after "
		    "MPI_Finalize; the job ends with that once the other "
		    "ranks do (%d still running%s%d)", j->id, j->fin_reason,
		    nwait, nwait > 1 ? ", the first rank " : ": rank ",
		    first);
		return true;
	}
	for (int r = 0; r < j->nranks; r++)
		if (j->ranks[r].relaunch && !j->ranks[r].exited) {
			if (first < 0)
				first = r;
			nwait++;
		}
	if (nwait == 0)
		return false;
	/* a direct job's ranks run only where connections are accepted */
	where = djob_direct(j) ? "no node that accepts connections" :
	    "no node";
	if (nwait == 1)
		snprintf(text, n, "job %s is waiting: rank %d must be "
		    "relaunched and %s has a free slot", j->id, first, where);
	else
		snprintf(text, n, "job %s is waiting: %d ranks (rank %d "
		    "first) must be relaunched and %s has a free slot",
		    j->id, nwait, first, where);
	return true;
}

/* stalled: a CM or CS of the job left a probe unanswered too long. */
static bool
dwarn_stalled_holds(const struct djob *j, double now, char *text, size_t n)
{
	const struct dpeer *first = NULL;
	int nst = 0;

	if (j->state == DJOB_WAITING || j->failed)
		return false;
	for (int i = 0; i < j->ncms; i++)
		if (j->cms[i] != NULL && j->cms[i]->stalled) {
			first = first != NULL ? first : j->cms[i];
			nst++;
		}
	for (int i = 0; i < j->ncss; i++)
		if (j->css[i] != NULL && j->css[i]->stalled) {
			first = first != NULL ? first : j->css[i];
			nst++;
		}
	if (first == NULL)
		return false;
	snprintf(text, n, "job %s: %s %s has not answered for %.0f s%s",
	    j->id, first->role == DPEER_CM ? "channel memory" :
	    "checkpoint server", first->addr, now - first->probe_out,
	    nst > 1 ? " (and other servers of the job)" : "");
	return true;
}

/*
 * Re-evaluates every condition of job j from its state and tells the
 * client what changed (rate-limited). Cheap: one pass over the ranks.
 */
void
dwarn_update(struct djob *j)
{
	double now = ev_now(j->d->loop);
	char text[700];
	bool h;

	h = dwarn_ckpt_holds(j, text, sizeof(text));
	dwarn_set(j, DWARN_CKPT, h, text, 0., now);
	h = dwarn_waiting_holds(j, text, sizeof(text));
	dwarn_set(j, DWARN_WAITING, h, text, DWARN_WAIT_GRACE, now);
	h = dwarn_stalled_holds(j, now, text, sizeof(text));
	dwarn_set(j, DWARN_STALLED, h, text, 0., now);
	h = j->state == DJOB_RUNNING && !j->failed && j->pressure_at > 0 &&
	    now - j->pressure_at < DWARN_PRESSURE_GONE;
	dwarn_set(j, DWARN_PRESSURE, h, j->pressure_text, 0., now);
	/* judged last: any of the others holding means no deadlock */
	h = ddl_holds(j, now, text, sizeof(text));
	if (h && j->deadlock_abort) {
		/* told once, as the reason the job fails */
		djob_fail(j, 1, text);
		return;
	}
	dwarn_set(j, DWARN_DEADLOCK, h, text, 0., now);
}

/*
 * A node's CkptTaken for rank r of job j (already checked to be a rank
 * that node runs or ran): a durable one ends the rank's streak of
 * failures, a failed one (a skip is back-pressure, not a failure) is
 * counted for the report and mpiv status.
 */
void
dwarn_ckpt_taken(struct djob *j, int r, const Mpiv__CkptTaken *ct)
{
	struct drank *rk = &j->ranks[r];

	if (ct->ok) {
		rk->ckpt_streak = 0;
	} else if (ct->skipped || strncmp(ct->error, "skipped:", 8) == 0) {
		return;
	} else {
		rk->ckpt_streak++;
		j->ckpt_failures++;
		snprintf(j->ckpt_err, sizeof(j->ckpt_err), "rank %d: %s", r,
		    *ct->error != '\0' ? ct->error : "failed");
	}
	dwarn_update(j);
}

/*
 * A CM's CmPressure, after djob_cm_pressure handled it: a job it did
 * not fail (it can take checkpoints, they were asked) has log pressure
 * until no CmPressure came for DWARN_PRESSURE_GONE s.
 */
void
dwarn_pressure(struct dpeer *cm, const Mpiv__CmPressure *p)
{
	struct djob *j = djob_find(cm->d, p->job_id);

	if (j == NULL || j->failed || j->state != DJOB_RUNNING || p->give_up)
		return;
	j->pressure_at = ev_now(cm->d->loop);
	snprintf(j->pressure_text, sizeof(j->pressure_text), "job %s: log "
	    "pressure: its message log fills the --max-memory of channel "
	    "memory %s (%llu of %llu bytes); %s", j->id, cm->addr,
	    (unsigned long long)p->log_bytes,
	    (unsigned long long)p->max_memory, p->advisory ?
	    "it spills to disk, checkpoints are asked to free it" :
	    "senders wait for the checkpoints asked to free it");
	dwarn_update(j);
}

/* Any frame from a CM or CS: it answers; a stall of it is over. */
void
dwarn_heard(struct dpeer *p)
{
	double now = ev_now(p->d->loop);

	if (p->probe_out > 0)
		p->answers = true;
	if (p->stalled)
		log_info("dispatcher service answers again role=%s addr=%s "
		    "silent_s=%.1f", p->role == DPEER_CM ? "cm" : "cs",
		    p->addr, now - p->probe_out);
	p->heard = now;
	p->probe_out = 0;
	p->stalled = false;
}

/* Probes a CM (CmStatsReq) or CS (Heartbeat) silent for a while. */
static void
dwarn_probe(struct dpeer *p, double now)
{
	Mpiv__CmStatsReq rq = MPIV__CM_STATS_REQ__INIT;
	Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;

	if (p->heard == 0)
		p->heard = now;
	if (p->probe_out > 0 || now - p->heard < DWARN_PROBE_IDLE)
		return;
	p->probe_out = now;
	if (p->role == DPEER_CM) {
		rq.job_id = (char *)"";
		(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_CM_STATS_REQ,
		    &rq.base, NULL, 0);
	} else {
		hb.seq = ++p->d->probe_seq;
		(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_HEARTBEAT, &hb.base,
		    NULL, 0);
	}
}

static void
dwarn_on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct disp *d = w->data;
	double now = ev_now(loop);

	if (d->stopping)
		return;
	for (struct dpeer *p = d->peers; p != NULL; p = p->next) {
		if ((p->role != DPEER_CM && p->role != DPEER_CS) ||
		    p->addr[0] == '\0' || conn_is_closing(p->c))
			continue;
		dwarn_probe(p, now);
		if ((p->answers || p->role == DPEER_CM) && !p->stalled &&
		    p->probe_out > 0 &&
		    now - p->probe_out >= d->stall_after) {
			p->stalled = true;
			log_warnx("dispatcher service stalled role=%s addr=%s "
			    "silent_s=%.1f jobs=%d", p->role == DPEER_CM ?
			    "cm" : "cs", p->addr, now - p->probe_out,
			    p->njobs);
		}
	}
	for (struct djob *j = d->jobs; j != NULL; j = j->next)
		dwarn_update(j);
}

/* Reads a positive number of seconds from env name, or keeps *v. */
static void
dwarn_env(const char *name, double *v)
{
	const char *s = getenv(name);
	char *end;
	double x;

	if (s == NULL || *s == '\0')
		return;
	x = strtod(s, &end);
	if (*end == '\0' && x > 0 && x < 1e6)
		*v = x;
	else
		log_warnx("dispatcher ignoring %s=\"%s\" (want seconds > 0)",
		    name, s);
}

/*
 * Starts the tick. --warn-interval / --stall-after (0: not given) fall
 * back on MPIV_WARN_INTERVAL / MPIV_STALL_AFTER (so an embedded mpiv run
 * can set them), then on the defaults.
 */
void
dwarn_start(struct disp *d)
{
	if (d->warn_interval <= 0) {
		d->warn_interval = DISP_WARN_INTERVAL;
		dwarn_env("MPIV_WARN_INTERVAL", &d->warn_interval);
	}
	if (d->stall_after <= 0) {
		d->stall_after = DISP_STALL_AFTER;
		dwarn_env("MPIV_STALL_AFTER", &d->stall_after);
	}
	log_info("dispatcher warnings warn_interval=%.1f stall_after=%.1f",
	    d->warn_interval, d->stall_after);
	ev_timer_init(&d->warn_w, dwarn_on_tick, DWARN_TICK, DWARN_TICK);
	d->warn_w.data = d;
	ev_timer_start(d->loop, &d->warn_w);
}

/*
 * A warning that an event itself begins or ends, outside the kinds
 * evaluated here (cm_lost from disp_regen.c, output_diverged from
 * disp_outchk.c): JobWarning{kind, active, text} to the job's client, the
 * times counted from the submission (since: ev_now() when it began).
 */
void
dwarn_event(struct djob *j, const char *kind, bool active, const char *text,
    double since)
{
	Mpiv__JobWarning jw = MPIV__JOB_WARNING__INIT;

	if (j->client == NULL)
		return;
	jw.job_id = j->id;
	jw.kind = (char *)kind;
	jw.active = active;
	jw.text = (char *)text;
	jw.since_s = since - j->t_submit;
	jw.cleared_s = active ? 0. : ev_now(j->d->loop) - j->t_submit;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_WARNING,
	    &jw.base, NULL, 0);
}
