/*
 * disp_regen.c: a job survives the loss of one of its Channel Memories:
 * it continues on the CM's store when the CM comes back with it, or runs
 * again from the beginning on a fresh one.
 *
 * A CM holds the message logs its ranks would replay from; every rank
 * has lost a connection to it anyway (a rank dials every CM of its job
 * and kills itself when one drops). A CM started with --store keeps its
 * logs on disk (channel-memory/store.c): started again at the same
 * address, it has them back, and the job continues like after the loss
 * of every rank at once:
 *
 *   1. the job enters DJOB_REGEN: its chaos stops, every rank still alive
 *      is killed, and the client is told in one line;
 *   2. once every rank is gone and a CM registered at the lost one's
 *      address, it is sent the job's JobSetup; "recovered" (its store
 *      had the job) makes every rank that had not finished restart like
 *      after a kill, from its last durable checkpoint or from the
 *      beginning, with a new incarnation, replaying from the logs; the
 *      other CMs keep theirs. Chaos goes on.
 *
 * Without a store (or with one that could not be trusted: the CM answers
 * "ready", a fresh job) the logs are gone, and restoring the ranks'
 * checkpoints is no use without the logs that go with them, so the job
 * starts over:
 *
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
	djob_set_state(j, DJOB_REGEN);
	j->regen_t0 = ev_now(j->d->loop);
	snprintf(j->regen_addr, sizeof(j->regen_addr), "%s", addr);
	j->regen_idx = i;
	j->regen_asked = NULL;
	ev_timer_stop(j->d->loop, &j->chaos_w);
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];

		rk->relaunch = false;	/* nothing launches until step 3 */
		if (rk->launched && !rk->exited && rk->node != NULL &&
		    !conn_is_closing(rk->node->c))
			djob_kill_rank(j, r, SIGKILL);
	}
	snprintf(msg, sizeof(msg), "channel memory %s lost: the job's ranks "
	    "stop until it is back (%d of at most %d)", addr, j->regens,
	    DJOB_REGEN_MAX);
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
	je.again = true;	/* the first CM keeps the files' journal */
	for (int i = 0; i < j->ncms; i++)
		if (j->cms[i] != NULL && i != j->regen_idx)
			(void)conn_send(j->cms[i]->c,
			    MPIV__MSG_TYPE__MSG_JOB_END, &je.base, NULL, 0);
	j->cms[j->regen_idx] = cm;
	cm->njobs++;
	/* a rank that failed past MPI_Finalize runs again and says so
	   again (disp_job.c) */
	j->fin_code = 0;
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
	djob_set_state(j, DJOB_SETUP);
	log_info("dispatcher job=%s starting over cm=%s (for %s)", j->id,
	    cm->addr, j->regen_addr);
	snprintf(msg, sizeof(msg), "job %s runs again from the beginning on "
	    "channel memory %s", j->id, cm->addr);
	dwarn_event(j, "cm_lost", false, msg, j->regen_t0);
	djob_setup_cms(j);
}

/* The lost CM is back at its address: has its store kept the job? */
static void
djob_regen_ask(struct djob *j, struct dpeer *cm)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;

	djob_fill_setup(j, &js);
	js.cm_index = j->regen_idx;
	j->regen_asked = cm;
	log_info("dispatcher job=%s cm=%s back: asking for its store",
	    j->id, cm->addr);
	(void)conn_send(cm->c, MPIV__MSG_TYPE__MSG_JOB_SETUP, &js.base, NULL,
	    0);
}

/* Every rank gone, the lost CM back with its logs: the job goes on. */
static void
djob_regen_resume(struct djob *j, struct dpeer *cm)
{
	double now = ev_now(j->d->loop);
	char msg[300];
	int n = 0;

	ev_timer_stop(j->d->loop, &j->regen_w);
	j->cms[j->regen_idx] = cm;
	cm->njobs++;
	djob_set_state(j, DJOB_RUNNING);
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];

		if (rk->exited)
			continue;	/* its messages are in the logs */
		rk->node = rk->prev_node;	/* where it ran: tried first */
		djob_restart(j, r, now);
		n++;
	}
	snprintf(msg, sizeof(msg), "job %s continues: channel memory %s "
	    "recovered its logs from its store; %d ranks restart from their "
	    "last checkpoints", j->id, cm->addr, n);
	log_info("dispatcher %s", msg);
	dwarn_event(j, "cm_lost", false, msg, j->regen_t0);
	if (j->chaos_mtbf_ms > 0)
		djob_chaos_arm(j);
}

/* The answer of the CM asked by djob_regen_ask. */
void
djob_regen_answer(struct djob *j, struct dpeer *cm, const char *state)
{
	if (cm != j->regen_asked)
		return;
	if (strcmp(state, "recovered") == 0) {
		djob_regen_resume(j, cm);
		return;
	}
	/* a fresh job there (no store, or one it could not trust) */
	log_info("dispatcher job=%s cm=%s has no store of the job (%s)",
	    j->id, cm->addr, state);
	ev_timer_stop(j->d->loop, &j->regen_w);
	djob_regen_setup(j, cm);
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
	if (j->regen_asked != NULL && (j->regen_asked != cm ||
	    conn_is_closing(cm->c)))
		j->regen_asked = NULL;	/* it went again: ask the next one */
	if (!alive && cm != NULL && j->regen_asked == NULL) {
		if (strcmp(cm->addr, j->regen_addr) != 0) {
			ev_timer_stop(loop, w);
			djob_regen_setup(j, cm);
			return;
		}
		djob_regen_ask(j, cm);
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
