/*
 * disp_regen.c: a job survives the loss of one of its Channel Memories by
 * running again from the beginning on a fresh one.
 *
 * A CM holds the message logs its ranks would replay from; once it is
 * gone (crashed, killed, its host lost) those logs are gone too, and every
 * rank has lost a connection to it anyway (a rank dials every CM of its
 * job and kills itself when one drops). Restoring the ranks' checkpoints
 * is no use without the logs that go with them, so the job starts over:
 *
 *   1. the job enters DJOB_REGEN: its chaos stops, every rank still alive
 *      is killed, and the client is told in one line;
 *   2. the lost CM's place is taken by a CM that registers at the same
 *      address (the lost one restarted, as an embedded deployment or a
 *      service manager does) or by any other CM not serving the job, the
 *      job's surviving CMs forget it (JobEnd), and every CM sets it up
 *      anew (JobSetup: empty logs);
 *   3. once every CM is ready, every rank (also one that had finished:
 *      the others need its messages again) is launched from the beginning
 *      with a new incarnation (higher than any of the old ones, so that a
 *      stray old process is fenced) and a checkpoint numbering above the
 *      old one (MPIV_CKPT_BASE), so that the CS never serves an image of
 *      the old run (docs/CHECKPOINT.md) and old checkpoints still landing
 *      are refused as stale or ignored here.
 *
 * The output stays exactly once: the dispatcher keeps counting what it
 * forwarded per rank and stream, and a re-execution's bytes below that
 * count are not printed again. If no CM comes back within
 * DJOB_REGEN_TIMEOUT seconds, or the job has started over
 * DJOB_REGEN_MAX times already, it fails with one line.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

#define DJOB_REGEN_TIMEOUT	30.0	/* s for a CM to come back */
#define DJOB_REGEN_MAX		5	/* starts over per job */
#define DJOB_REGEN_TICK		0.2	/* s between looks */

static void djob_regen_tick(struct ev_loop *loop, ev_timer *w, int revents);

/* A registered CM listening at addr, or else one not serving j. */
static struct dpeer *
djob_regen_pick_cm(struct djob *j, const char *addr)
{
	struct dpeer *p, *other = NULL;

	for (p = j->d->peers; p != NULL; p = p->next) {
		bool taken = false;

		if (p->role != DPEER_CM || *p->addr == '\0' ||
		    conn_is_closing(p->c))
			continue;
		if (strcmp(p->addr, addr) == 0)
			return p;
		for (int k = 0; k < j->ncms; k++)
			taken |= j->cms[k] == p;
		if (!taken && (other == NULL || p->njobs < other->njobs))
			other = p;
	}
	return other;
}

/*
 * CM i of running job j is lost (its address was addr). Returns false
 * when the job cannot start over (the caller fails it).
 */
bool
djob_regen_begin(struct djob *j, int i, const char *addr, char *why,
    size_t n)
{
	char msg[300];

	if (j->relay_only || j->failed || j->state != DJOB_RUNNING) {
		snprintf(why, n, "channel memory %s lost", addr);
		return false;
	}
	if (j->regens >= DJOB_REGEN_MAX) {
		snprintf(why, n, "channel memory %s lost, and the job started "
		    "over %d times already", addr, j->regens);
		return false;
	}
	j->regens++;
	j->state = DJOB_REGEN;
	j->regen_t0 = ev_now(j->d->loop);
	snprintf(j->regen_addr, sizeof(j->regen_addr), "%s", addr);
	j->regen_idx = i;
	ev_timer_stop(j->d->loop, &j->chaos_w);
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];

		rk->relaunch = false;	/* nothing launches until step 3 */
		if (rk->launched && !rk->exited && rk->node != NULL &&
		    !conn_is_closing(rk->node->c))
			djob_kill_rank(j, r, SIGKILL);
	}
	snprintf(msg, sizeof(msg), "channel memory %s lost with the job's "
	    "message logs: every rank starts over from the beginning (%d of "
	    "at most %d)", addr, j->regens, DJOB_REGEN_MAX);
	log_warnx("dispatcher job=%s %s", j->id, msg);
	dwarn_event(j, "cm_lost", true, msg, j->regen_t0);
	ev_timer_init(&j->regen_w, djob_regen_tick, DJOB_REGEN_TICK,
	    DJOB_REGEN_TICK);
	j->regen_w.data = j;
	ev_timer_start(j->d->loop, &j->regen_w);
	return true;
}

/* A rank of a job starting over has exited: its slot is free. */
void
djob_regen_exited(struct djob *j, int r)
{
	struct drank *rk = &j->ranks[r];

	rk->launched = false;
	rk->started = false;
	rk->prev_node = rk->node;
	rk->node = NULL;
}

/* Every rank gone and a CM in the lost one's place: set up anew. */
static void
djob_regen_setup(struct djob *j, struct dpeer *cm)
{
	Mpiv__JobEnd je = MPIV__JOB_END__INIT;
	char msg[300];

	je.job_id = j->id;
	for (int i = 0; i < j->ncms; i++)
		if (j->cms[i] != NULL && i != j->regen_idx)
			(void)conn_send(j->cms[i]->c,
			    MPIV__MSG_TYPE__MSG_JOB_END, &je.base, NULL, 0);
	j->cms[j->regen_idx] = cm;
	cm->njobs++;
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];

		/* a rank that had finished runs again too: the others need
		   its messages, which were in the lost logs */
		if (rk->exited) {
			rk->exited = false;
			rk->exit_code = -1;
			j->nexited--;
		}
		if (rk->node != NULL)
			rk->prev_node = rk->node;
		rk->node = NULL;	/* placed again, slot counted, at launch */
		rk->launched = false;
		rk->started = false;
		rk->incarnation++;
		rk->gen_inc = rk->incarnation;
		rk->ckpt_base = rk->ckpt_seen + 1000;
		rk->last_ckpt = 0;
		rk->restoring = false;
		rk->kill_sent = false;
		rk->relaunch = false;
		rk->restarts++;
		j->restarts++;
	}
	memset(j->cm_ready, 0, (size_t)j->ncms * sizeof(*j->cm_ready));
	j->nready = 0;
	j->state = DJOB_SETUP;
	log_info("dispatcher job=%s starting over cm=%s (for %s)", j->id,
	    cm->addr, j->regen_addr);
	snprintf(msg, sizeof(msg), "job %s runs again from the beginning on "
	    "channel memory %s", j->id, cm->addr);
	dwarn_event(j, "cm_lost", false, msg, j->regen_t0);
	djob_setup_cms(j);
}

static void
djob_regen_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct djob *j = w->data;
	struct dpeer *cm;
	char why[300];
	bool alive = false;

	if (j->state != DJOB_REGEN) {
		ev_timer_stop(loop, w);
		return;
	}
	j->regen_ticks++;
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];

		if (rk->exited)
			continue;	/* done before the loss: runs again */
		if (rk->launched && rk->node != NULL &&
		    conn_is_closing(rk->node->c))
			djob_regen_exited(j, r);	/* node gone with it */
		/* a node busy restoring it may have missed the first kill:
		   once a second, again */
		if (rk->launched && rk->node != NULL &&
		    j->regen_ticks % 5 == 0) {
			djob_kill_rank(j, r, SIGKILL);
			log_info("dispatcher job=%s rank=%d inc=%u still alive "
			    "while starting over: killed again", j->id, r,
			    rk->incarnation);
		}
		alive |= rk->launched;
	}
	cm = djob_regen_pick_cm(j, j->regen_addr);
	if (!alive && cm != NULL) {
		ev_timer_stop(loop, w);
		djob_regen_setup(j, cm);
		return;
	}
	if (ev_now(loop) - j->regen_t0 < DJOB_REGEN_TIMEOUT)
		return;
	ev_timer_stop(loop, w);
	snprintf(why, sizeof(why), "channel memory %s lost, and %s within "
	    "%.0f s", j->regen_addr, cm == NULL ? "no channel memory came "
	    "back" : "its ranks did not all exit", DJOB_REGEN_TIMEOUT);
	djob_fail(j, 1, why);	/* kills what is left */
}

/* The job ends (or fails) while starting over. */
void
djob_regen_stop(struct djob *j)
{
	ev_timer_stop(j->d->loop, &j->regen_w);
}
