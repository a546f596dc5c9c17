/*
 * pressure.c: a job whose message log outgrows --max-memory.
 *
 * The CM pauses a job's senders once it holds more than --max-memory
 * (job.c). Unexpected messages drain as receivers post, but the log of
 * deliveries only shrinks when a durable checkpoint of its receiver makes
 * it useless (ckpt.c): a job that waits for that alone would wait
 * forever. So while the job is paused with a log over half the cap, once
 * a second this CM asks the dispatcher (CmPressure) for checkpoints of the
 * ranks whose logs here are the largest; a rank asked is let through the
 * pause until its mark arrives, so that it can flush what it was sending
 * and take the checkpoint. If no checkpoint frees anything for
 * --log-full-timeout seconds, the CM gives up (CmPressure{give_up}) and
 * the dispatcher fails the job with one line, instead of letting it hang
 * until its --timeout. Without a dispatcher link it says so in its log.
 * Payloads spilled to disk (spill.c) beyond the cap also ask for
 * checkpoints, as advice: a job that cannot take them goes on from disk.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

#define PRESSURE_TICK	  1.0	/* seconds between looks */
#define PRESSURE_ASK_MAX  4	/* ranks asked per look */
#define PRESSURE_REASK	  5.0	/* seconds before the same rank is asked again */

static void pressure_tick(struct ev_loop *loop, ev_timer *w, int revents);

/* The log alone (not unexpected messages) is what presses. */
static bool
pressure_from_log(const struct job *j)
{
	return j->log_bytes + j->log_meta_bytes > j->cm->max_memory / 2;
}

/* Payloads spilled to disk beyond the cap: worth checkpoints to free
   the disk, not worth failing a job for. */
static bool
pressure_from_spill(const struct job *j)
{
	return j->spill_bytes > j->cm->max_memory;
}

static void
pressure_send(struct job *j, const int32_t *ranks, size_t n, bool give_up,
    const char *text)
{
	Mpiv__CmPressure p = MPIV__CM_PRESSURE__INIT;
	struct session *d = j->cm->disp;

	p.advisory = !j->throttled;
	p.job_id = j->id;
	p.ranks = (int32_t *)ranks;
	p.n_ranks = n;
	p.log_bytes = j->log_bytes + j->log_meta_bytes;
	p.max_memory = j->cm->max_memory;
	p.give_up = give_up;
	p.text = (char *)(text != NULL ? text : "");
	if (d == NULL || d->state != SESS_DISPATCHER) {
		log_errorx("cm job=%s log pressure and no dispatcher link: %s",
		    j->id, text != NULL ? text : "cannot ask for checkpoints");
		return;
	}
	(void)conn_send(d->c, MPIV__MSG_TYPE__MSG_CM_PRESSURE, &p.base, NULL,
	    0);
}

/* Asks checkpoints of the home ranks with the largest logs here. */
static void
pressure_ask(struct job *j, double now)
{
	int32_t pick[PRESSURE_ASK_MAX];
	char list[96];
	size_t n = 0, len = 0;

	while (n < PRESSURE_ASK_MAX) {
		int32_t best = -1;

		for (int32_t r = 0; r < j->nranks; r++) {
			const struct rank_state *rs = &j->ranks[r];
			bool taken = false;

			if (!rs->home || rs->log_bytes == 0 || rs->sess == NULL ||
			    now - rs->ck_asked_at < PRESSURE_REASK)
				continue;
			for (size_t i = 0; i < n; i++)
				taken |= pick[i] == r;
			if (!taken && (best < 0 ||
			    rs->log_bytes > j->ranks[best].log_bytes))
				best = r;
		}
		if (best < 0)
			break;
		pick[n++] = best;
	}
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct rank_state *rs = &j->ranks[pick[i]];

		rs->ck_asked_at = now;
		rs->ck_asked = true;
		/* let it through the pause: it must flush and send its mark */
		if (rs->sess->paused) {
			rs->sess->paused = false;
			conn_pause_read(rs->sess->c, false);
		}
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
		    i > 0 ? "," : "", pick[i]);
		if (len >= sizeof(list))
			len = sizeof(list) - 1;
	}
	log_info("cm log pressure job=%s log_bytes=%" PRIu64 " max=%" PRIu64
	    " asking checkpoints of ranks=%s", j->id,
	    j->log_bytes + j->log_meta_bytes, j->cm->max_memory, list);
	pressure_send(j, pick, n, false, NULL);
}

/* The job's senders were just paused, or its spilled payloads outgrew
   the cap. */
void
pressure_begin(struct job *j)
{
	if (j->relay_only || ev_is_active(&j->pressure_w))
		return;
	j->pressure_t0 = ev_now(j->cm->loop);
	ev_timer_init(&j->pressure_w, pressure_tick, 0., PRESSURE_TICK);
	j->pressure_w.data = j;
	ev_timer_start(j->cm->loop, &j->pressure_w);
}

/* Paused no more, or the job ends. */
void
pressure_end(struct job *j)
{
	if (j->cm != NULL && j->cm->loop != NULL)
		ev_timer_stop(j->cm->loop, &j->pressure_w);
	for (int32_t r = 0; j->ranks != NULL && r < j->nranks; r++)
		j->ranks[r].ck_asked = false;
}

/* A durable checkpoint of rank freed some of the log: the clock starts
   again, the rank may be asked again, and while the job is still held
   back the next ranks are asked at once. */
void
pressure_relieved(struct job *j, int32_t rank)
{
	double now = ev_now(j->cm->loop);

	j->pressure_t0 = now;
	j->ranks[rank].ck_asked_at = 0;
	if (((j->throttled && pressure_from_log(j)) || pressure_from_spill(j)) &&
	    ev_is_active(&j->pressure_w))
		pressure_ask(j, now);
}

static void
pressure_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct job *j = w->data;
	double now = ev_now(loop);
	char text[400];

	if (!j->throttled) {
		if (pressure_from_spill(j))
			pressure_ask(j, now);
		else
			pressure_end(j);
		return;
	}
	if (!pressure_from_log(j)) {
		/* receivers behind, not the log: their posts drain it */
		j->pressure_t0 = now;
		return;
	}
	if (now - j->pressure_t0 < j->cm->log_full_timeout) {
		pressure_ask(j, now);
		return;
	}
	snprintf(text, sizeof(text), "channel memory %s: the message log of "
	    "job %s fills its --max-memory (%" PRIu64 " of %" PRIu64 " bytes) "
	    "and checkpoints freed none of it for %.0f s; raise the cap "
	    "(mpiv run --cm-max-memory, mpiv cm --max-memory) or checkpoint "
	    "more often (--ckpt-interval)", j->cm->addr, j->id,
	    j->log_bytes + j->log_meta_bytes, j->cm->max_memory,
	    j->cm->log_full_timeout);
	log_errorx("cm %s", text);
	pressure_send(j, NULL, 0, true, text);
	ev_timer_stop(loop, w);
}
