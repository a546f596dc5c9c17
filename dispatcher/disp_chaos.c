/*
 * disp_chaos.c: fault injection on a job: --chaos kills a random live
 * rank (or, with --chaos-nodes, its whole node) after exponential delays
 * of mean MTBF, from the job's own seeded generator (reproducible), and
 * `mpiv kill` sends a signal to one rank or every rank. Both count as
 * kills in the report; a rank killed by SIGKILL or SIGTERM is restarted
 * (disp_job.c).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

/* splitmix64: the chaos schedule's own generator (seeded by the job). */
static uint64_t
djob_rand(struct djob *j)
{
	uint64_t z = (j->chaos_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Next chaos kill after an exponential delay of mean chaos_mtbf_ms. */
void
djob_chaos_arm(struct djob *j)
{
	double u = (double)(djob_rand(j) >> 11) * 0x1.0p-53;	/* [0,1) */
	double dt = -log1p(-u) * j->chaos_mtbf_ms / 1000.;

	ev_timer_stop(j->d->loop, &j->chaos_w);
	ev_timer_set(&j->chaos_w, dt, 0.);
	ev_timer_start(j->d->loop, &j->chaos_w);
	log_debug("dispatcher chaos job=%s next_kill_in_s=%.3f", j->id, dt);
}

/* A rank chaos may kill: running its current incarnation, not dying. */
bool
djob_rank_live(const struct drank *rk)
{
	return rk->launched && !rk->exited && !rk->relaunch &&
	    rk->node != NULL && !conn_is_closing(rk->node->c);
}

/* A kill of fault injection (chaos, mpiv kill): counted in the report. */
static void
djob_send_kill(struct djob *j, int r, int sig, const char *who)
{
	djob_event(j, "kill", r, j->ranks[r].incarnation, (uint64_t)sig,
	    j->ranks[r].node != NULL ? j->ranks[r].node->name : NULL, 0, 0,
	    "%s", who);
	djob_kill_rank(j, r, sig);
	j->kills++;
}

void
djob_on_chaos(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct djob *j = w->data;
	uint64_t pick = djob_rand(j);	/* drawn every time: reproducible */
	int nlive = 0, r;

	if (j->state != DJOB_RUNNING)
		return;
	for (r = 0; r < j->nranks; r++)
		nlive += djob_rank_live(&j->ranks[r]) && !j->ranks[r].kill_sent;
	if (nlive > 0 && j->chaos_nodes) {
		/* The node of a random live rank: nodes with more of the
		   job's ranks are hit more often, as a random machine is. */
		int k = (int)(pick % (uint64_t)nlive);
		struct dpeer *node = NULL;

		for (r = 0; r < j->nranks && node == NULL; r++) {
			const struct drank *rk = &j->ranks[r];
			if (djob_rank_live(rk) && !rk->kill_sent && k-- == 0)
				node = rk->node;
		}
		j->kills++;
		j->chaos_kills++;
		djob_event(j, "kill_node", -1, 0, (uint64_t)node->used,
		    node->name, 0, 0, "chaos");
		log_info("dispatcher chaos kill-node job=%s node=%s ranks=%d "
		    "kill=%u", j->id, node->node_id, node->used,
		    j->chaos_kills);
		{
			struct disp *d = j->d;
			char id[sizeof(j->id)];

			memcpy(id, j->id, sizeof(id));
			dnode_kill(node, "chaos");
			/* Losing the node may have ended (and freed) the job. */
			if ((j = djob_find(d, id)) == NULL ||
			    j->state != DJOB_RUNNING)
				return;
		}
	} else if (nlive > 0) {
		int k = (int)(pick % (uint64_t)nlive);
		for (r = 0; r < j->nranks; r++) {
			const struct drank *rk = &j->ranks[r];
			if (djob_rank_live(rk) && !rk->kill_sent && k-- == 0)
				break;
		}
		djob_send_kill(j, r, SIGKILL, "chaos");
		j->chaos_kills++;
		log_info("dispatcher chaos kill job=%s rank=%d incarnation=%u "
		    "node=%s kill=%u", j->id, r, j->ranks[r].incarnation,
		    j->ranks[r].node->name, j->chaos_kills);
	} else {
		log_debug("dispatcher chaos job=%s no live rank to kill", j->id);
	}
	if (j->chaos_max == 0 || j->chaos_kills < (uint32_t)j->chaos_max)
		djob_chaos_arm(j);
	else
		log_info("dispatcher chaos done job=%s kills=%u", j->id,
		    j->chaos_kills);
}

void
djob_kill_reply(struct dpeer *client, const char *job, bool ok,
    const char *msg)
{
	Mpiv__JobStatus st = MPIV__JOB_STATUS__INIT;

	st.job_id = (char *)job;
	st.state = ok ? "ok" : "error";
	st.message = (char *)msg;
	log_info("dispatcher client request job=%s ok=%d message=\"%s\"",
	    job, ok, msg);
	(void)conn_send(client->c, MPIV__MSG_TYPE__MSG_JOB_STATUS, &st.base,
	    NULL, 0);
}

/*
 * `mpiv kill`: a client asks for a signal to one rank (or every rank,
 * rank -1) of a running job. Answered with JobStatus{ok|error}.
 */
void
djob_client_kill(struct dpeer *client, const Mpiv__Kill *k)
{
	struct djob *j = djob_find(client->d, k->job_id);
	int sig = k->signal != 0 ? k->signal : SIGKILL, n = 0;
	char msg[200];

	if (j == NULL) {
		snprintf(msg, sizeof(msg), "unknown job %.64s", k->job_id);
		goto fail;
	}
	if (k->rank < -1 || k->rank >= j->nranks) {
		snprintf(msg, sizeof(msg), "rank %d out of range (job %s has "
		    "%d rank%s)", k->rank, j->id, j->nranks,
		    j->nranks == 1 ? "" : "s");
		goto fail;
	}
	if (sig < 1 || sig >= NSIG) {
		snprintf(msg, sizeof(msg), "bad signal %d", sig);
		goto fail;
	}
	if (j->state != DJOB_RUNNING) {
		snprintf(msg, sizeof(msg), "job %s is not running (%s)", j->id,
		    j->state == DJOB_FINISHING ? "finishing" : "not started");
		goto fail;
	}
	if (k->rank >= 0) {
		const struct drank *rk = &j->ranks[k->rank];
		if (rk->exited) {
			snprintf(msg, sizeof(msg), "rank %d of job %s has "
			    "already exited", k->rank, j->id);
			goto fail;
		}
		if (!djob_rank_live(rk)) {
			snprintf(msg, sizeof(msg), "rank %d of job %s is "
			    "being relaunched, try again", k->rank, j->id);
			goto fail;
		}
		djob_send_kill(j, k->rank, sig, "mpiv kill");
		snprintf(msg, sizeof(msg), "signal %d sent to rank %d "
		    "(incarnation %u) of job %s", sig, k->rank,
		    rk->incarnation, j->id);
	} else {
		for (int r = 0; r < j->nranks; r++)
			if (djob_rank_live(&j->ranks[r])) {
				djob_send_kill(j, r, sig, "mpiv kill");
				n++;
			}
		if (n == 0) {
			snprintf(msg, sizeof(msg), "job %s has no running "
			    "rank", j->id);
			goto fail;
		}
		snprintf(msg, sizeof(msg), "signal %d sent to %d rank%s of "
		    "job %s", sig, n, n == 1 ? "" : "s", j->id);
	}
	djob_kill_reply(client, k->job_id, true, msg);
	return;
fail:
	djob_kill_reply(client, k->job_id, false, msg);
}
