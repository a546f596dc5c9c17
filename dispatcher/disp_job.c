/*
 * disp_job.c: jobs in the dispatcher. A submitted job waits for enough
 * CMs and free node slots, gets its ranks placed (filling nodes) and its
 * CMs chosen (fewest jobs first), has every CM set up (JobSetup ->
 * JobStatus{ready}), then is launched. The first failing rank decides
 * the exit code and reason; the other ranks are killed; JobDone goes to
 * the client and JobEnd to the CMs. The dispatcher never carries
 * application data, only rank output on its way to the client.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

static void djob_finish(struct djob *j);

struct djob *
djob_find(struct disp *d, const char *id)
{
	for (struct djob *j = d->jobs; j != NULL; j = j->next)
		if (strcmp(j->id, id) == 0)
			return j;
	return NULL;
}

static char **
djob_strvdup(char **v, size_t n)
{
	char **out;

	if ((out = calloc(n + 1, sizeof(*out))) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if ((out[i] = strdup(v[i])) == NULL) {
			for (size_t k = 0; k < i; k++)
				free(out[k]);
			free(out);
			return NULL;
		}
	}
	return out;
}

static void
djob_strvfree(char **v)
{
	if (v == NULL)
		return;
	for (char **p = v; *p != NULL; p++)
		free(*p);
	free(v);
}

static void
djob_free(struct djob *j)
{
	ev_timer_stop(j->d->loop, &j->grace_w);
	djob_strvfree(j->argv);
	djob_strvfree(j->env);
	free(j->cwd);
	free(j->cms);
	free(j->cm_ready);
	free(j->ranks);
	free(j);
}

static void
djob_on_grace(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct djob *j = w->data;

	log_warnx("dispatcher job=%s killed ranks did not all report, "
	    "finishing anyway", j->id);
	djob_finish(j);
}

static void
djob_status(struct djob *j, const char *state, const char *msg)
{
	Mpiv__JobStatus st = MPIV__JOB_STATUS__INIT;

	if (j->client == NULL)
		return;
	st.job_id = j->id;
	st.state = (char *)state;
	st.message = (char *)msg;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_STATUS,
	    &st.base, NULL, 0);
}

struct djob *
djob_submit(struct disp *d, struct dpeer *client, const Mpiv__JobSubmit *js,
    const char **err)
{
	struct djob *j, **tail;

	if (js->nranks < 1 || js->nranks > DISP_MAX_RANKS) {
		*err = "number of ranks out of range";
		return NULL;
	}
	if (js->n_argv < 1 || *js->argv[0] == '\0') {
		*err = "no program to run";
		return NULL;
	}
	if (js->ncms < 0 || js->ncms > DISP_MAX_CMS) {
		*err = "number of channel memories out of range";
		return NULL;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		goto out_nomem;
	j->d = d;
	j->nranks = js->nranks;
	j->ncms = js->ncms > 0 ? js->ncms : 1;
	j->argc = js->n_argv;
	j->nenv = js->n_env;
	ev_timer_init(&j->grace_w, djob_on_grace, DISP_KILL_GRACE, 0.);
	j->grace_w.data = j;
	if ((j->argv = djob_strvdup(js->argv, js->n_argv)) == NULL ||
	    (j->env = djob_strvdup(js->env, js->n_env)) == NULL ||
	    (j->cwd = strdup(js->cwd)) == NULL ||
	    (j->cms = calloc(j->ncms, sizeof(*j->cms))) == NULL ||
	    (j->cm_ready = calloc(j->ncms, sizeof(*j->cm_ready))) == NULL ||
	    (j->ranks = calloc(j->nranks, sizeof(*j->ranks))) == NULL)
		goto out_free;
	snprintf(j->id, sizeof(j->id), "%u", d->next_job++);
	j->client = client;
	client->job = j;
	for (tail = &d->jobs; *tail != NULL; tail = &(*tail)->next)
		j->prev = *tail;
	*tail = j;
	log_info("dispatcher job submitted job=%s nranks=%d ncms=%d prog=%s",
	    j->id, j->nranks, j->ncms, j->argv[0]);
	djob_schedule(d);
	return j;

out_free:
	djob_free(j);
out_nomem:
	*err = "dispatcher out of memory";
	return NULL;
}

/* Sends JobSetup to each of the job's CMs. */
static void
djob_setup_cms(struct djob *j)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;

	js.job_id = j->id;
	js.nranks = j->nranks;
	js.ncms = j->ncms;
	for (int i = 0; i < j->ncms; i++) {
		js.cm_index = i;
		(void)conn_send(j->cms[i]->c, MPIV__MSG_TYPE__MSG_JOB_SETUP,
		    &js.base, NULL, 0);
	}
}

/* Places the job if the CMs and slots it needs exist; true if placed. */
static bool
djob_try_place(struct disp *d, struct djob *j)
{
	struct dpeer *p, *best, *node;
	int ncm = 0, free_slots = 0, r;
	char msg[128];

	for (p = d->peers; p != NULL; p = p->next) {
		if (conn_is_closing(p->c))
			continue;
		if (p->role == DPEER_CM && *p->addr != '\0')
			ncm++;
		else if (p->role == DPEER_NODE && p->slots > p->used)
			free_slots += p->slots - p->used;
	}
	if (ncm < j->ncms)
		snprintf(msg, sizeof(msg), "need %d channel memories, have %d",
		    j->ncms, ncm);
	else if (free_slots < j->nranks)
		snprintf(msg, sizeof(msg), "need %d slots, have %d",
		    j->nranks, free_slots);
	else
		msg[0] = '\0';
	if (msg[0] != '\0') {
		if (strcmp(msg, j->waitmsg) != 0) {
			snprintf(j->waitmsg, sizeof(j->waitmsg), "%s", msg);
			log_info("dispatcher job=%s waiting reason=\"%s\"",
			    j->id, msg);
			djob_status(j, "waiting", msg);
		}
		return false;
	}
	/* CMs: the least loaded first. */
	for (int i = 0; i < j->ncms; i++) {
		best = NULL;
		for (p = d->peers; p != NULL; p = p->next) {
			bool taken = false;
			if (p->role != DPEER_CM || *p->addr == '\0' ||
			    conn_is_closing(p->c))
				continue;
			for (int k = 0; k < i; k++)
				taken |= j->cms[k] == p;
			if (!taken && (best == NULL || p->njobs < best->njobs))
				best = p;
		}
		j->cms[i] = best;
		best->njobs++;
	}
	/* Ranks: fill each node's free slots in turn. */
	node = d->peers;
	for (r = 0; r < j->nranks; r++) {
		while (node->role != DPEER_NODE || node->used >= node->slots ||
		    conn_is_closing(node->c))
			node = node->next;
		j->ranks[r].node = node;
		j->ranks[r].incarnation = 1;
		j->ranks[r].exit_code = -1;
		node->used++;
	}
	j->state = DJOB_SETUP;
	log_info("dispatcher job placed job=%s, setting up %d channel "
	    "memories", j->id, j->ncms);
	djob_setup_cms(j);
	return true;
}

void
djob_schedule(struct disp *d)
{
	if (d->stopping)
		return;
	for (struct djob *j = d->jobs; j != NULL; j = j->next)
		if (j->state == DJOB_WAITING)
			(void)djob_try_place(d, j);
}

static void
djob_launch(struct djob *j)
{
	Mpiv__Launch l = MPIV__LAUNCH__INIT;
	char *cms[DISP_MAX_CMS];

	for (int i = 0; i < j->ncms; i++)
		cms[i] = j->cms[i]->addr;
	l.job_id = j->id;
	l.nranks = j->nranks;
	l.argv = j->argv;
	l.n_argv = j->argc;
	l.env = j->env;
	l.n_env = j->nenv;
	l.cwd = j->cwd;
	l.cms = cms;
	l.n_cms = j->ncms;
	for (int r = 0; r < j->nranks; r++) {
		l.rank = r;
		l.incarnation = j->ranks[r].incarnation;
		(void)conn_send(j->ranks[r].node->c, MPIV__MSG_TYPE__MSG_LAUNCH,
		    &l.base, NULL, 0);
		j->ranks[r].launched = true;
	}
	j->state = DJOB_RUNNING;
	log_info("dispatcher job running job=%s nranks=%d", j->id, j->nranks);
	djob_status(j, "running", "");
}

/*
 * Ends the job: JobDone to the client, JobEnd to the CMs, slots of ranks
 * never launched back to their nodes, then frees it. Slots of launched
 * ranks come back with their TaskExit.
 */
static void
djob_finish(struct djob *j)
{
	struct disp *d = j->d;
	Mpiv__JobDone jd = MPIV__JOB_DONE__INIT;
	Mpiv__JobEnd je = MPIV__JOB_END__INIT;
	Mpiv__RankResult *rr = NULL, **rrp = NULL;

	if (j->client != NULL) {
		rr = calloc(j->nranks, sizeof(*rr));
		rrp = calloc(j->nranks, sizeof(*rrp));
		if (rr != NULL && rrp != NULL) {
			for (int r = 0; r < j->nranks; r++) {
				mpiv__rank_result__init(&rr[r]);
				rr[r].rank = r;
				rr[r].incarnations = j->ranks[r].incarnation;
				rr[r].exit_code = j->ranks[r].exited ?
				    j->ranks[r].exit_code : -1;
				rrp[r] = &rr[r];
			}
			jd.ranks = rrp;
			jd.n_ranks = j->nranks;
		}
		jd.job_id = j->id;
		jd.exit_code = j->failed ? j->exit_code : 0;
		jd.reason = j->failed ? j->reason : "";
		(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_DONE,
		    &jd.base, NULL, 0);
		free(rr);
		free(rrp);
		j->client->job = NULL;
	}
	je.job_id = j->id;
	for (int i = 0; i < j->ncms; i++) {
		if (j->cms[i] == NULL)
			continue;
		if (j->state != DJOB_WAITING)
			(void)conn_send(j->cms[i]->c,
			    MPIV__MSG_TYPE__MSG_JOB_END, &je.base, NULL, 0);
		j->cms[i]->njobs--;
	}
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];
		if (rk->node != NULL && !rk->launched && rk->node->used > 0)
			rk->node->used--;
	}
	log_info("dispatcher job done job=%s exit_code=%d reason=\"%s\"",
	    j->id, j->failed ? j->exit_code : 0, j->failed ? j->reason : "");
	if (j->prev != NULL)
		j->prev->next = j->next;
	else
		d->jobs = j->next;
	if (j->next != NULL)
		j->next->prev = j->prev;
	djob_free(j);
	djob_schedule(d);
}

/* True while some launched rank has not reported its exit. */
static bool
djob_ranks_pending(const struct djob *j)
{
	for (int r = 0; r < j->nranks; r++)
		if (j->ranks[r].launched && !j->ranks[r].exited &&
		    j->ranks[r].node != NULL)
			return true;
	return false;
}

/*
 * The first failure decides the job's exit code and reason. Kills every
 * rank still running, then finishes once they reported (or after a
 * grace period).
 */
static void
djob_fail(struct djob *j, int code, const char *reason)
{
	Mpiv__Kill k = MPIV__KILL__INIT;

	if (j->failed)
		return;
	j->failed = true;
	j->exit_code = code;
	snprintf(j->reason, sizeof(j->reason), "%s", reason);
	log_info("dispatcher job failing job=%s exit_code=%d reason=\"%s\"",
	    j->id, code, reason);
	if (j->state != DJOB_RUNNING) {
		djob_finish(j);
		return;
	}
	j->state = DJOB_FINISHING;
	k.job_id = j->id;
	k.signal = SIGKILL;
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];
		if (!rk->launched || rk->exited || rk->node == NULL)
			continue;
		k.rank = r;
		(void)conn_send(rk->node->c, MPIV__MSG_TYPE__MSG_KILL, &k.base,
		    NULL, 0);
	}
	if (!djob_ranks_pending(j))
		djob_finish(j);
	else
		ev_timer_start(j->d->loop, &j->grace_w);
}

void
djob_cm_status(struct dpeer *cm, const Mpiv__JobStatus *st)
{
	struct djob *j = djob_find(cm->d, st->job_id);

	if (j == NULL || j->state != DJOB_SETUP)
		return;
	if (strcmp(st->state, "ready") != 0) {
		log_debug("dispatcher cm=%s job=%s state=%s", cm->addr,
		    st->job_id, st->state);
		return;
	}
	for (int i = 0; i < j->ncms; i++) {
		if (j->cms[i] == cm && !j->cm_ready[i]) {
			j->cm_ready[i] = true;
			j->nready++;
			break;
		}
	}
	if (j->nready == j->ncms)
		djob_launch(j);
}

/* A CM answered Error: the first job still waiting for it fails. */
void
djob_cm_error(struct dpeer *cm, const char *text)
{
	char why[400];

	for (struct djob *j = cm->d->jobs; j != NULL; j = j->next) {
		if (j->state != DJOB_SETUP)
			continue;
		for (int i = 0; i < j->ncms; i++) {
			if (j->cms[i] == cm && !j->cm_ready[i]) {
				snprintf(why, sizeof(why), "channel memory %s "
				    "refused the job: %s", cm->addr, text);
				djob_fail(j, 1, why);
				return;
			}
		}
	}
	log_warnx("dispatcher cm=%s error text=\"%s\"", cm->addr, text);
}

void
djob_task_exit(struct dpeer *node, const Mpiv__TaskExit *te)
{
	struct djob *j;
	struct drank *rk;
	char why[400];
	int code;

	if (node->used > 0)
		node->used--;
	log_info("dispatcher task exit job=%s rank=%d incarnation=%u code=%d "
	    "signal=%d aborted=%d node=%s", te->job_id, te->rank,
	    te->incarnation, te->exit_code, te->signal, te->aborted,
	    node->name);
	if ((j = djob_find(node->d, te->job_id)) == NULL || te->rank < 0 ||
	    te->rank >= j->nranks) {
		djob_schedule(node->d);
		return;
	}
	rk = &j->ranks[te->rank];
	if (rk->node != node || rk->incarnation != te->incarnation ||
	    rk->exited || !rk->launched)
		return;
	rk->exited = true;
	j->nexited++;
	why[0] = '\0';
	if (te->aborted) {
		code = te->abort_code;
		snprintf(why, sizeof(why), "rank %d called MPI_Abort(%d)",
		    te->rank, te->abort_code);
	} else if (*te->reason != '\0') {
		code = te->exit_code != 0 ? te->exit_code : 1;
		snprintf(why, sizeof(why), "rank %d: %s", te->rank, te->reason);
	} else if (te->signal != 0) {
		code = 128 + te->signal;
		snprintf(why, sizeof(why), "rank %d killed by signal %d (%s)",
		    te->rank, te->signal, strsignal(te->signal));
	} else {
		code = te->exit_code;
		if (code != 0)
			snprintf(why, sizeof(why), "rank %d exited with code %d",
			    te->rank, code);
	}
	rk->exit_code = code;
	if (why[0] != '\0' && !j->failed) {
		djob_fail(j, code, why);
		return;
	}
	if (j->state == DJOB_FINISHING) {
		if (!djob_ranks_pending(j))
			djob_finish(j);
	} else if (j->nexited == j->nranks) {
		djob_finish(j);
	} else {
		djob_schedule(node->d);
	}
}

void
djob_output(struct dpeer *node, const Mpiv__Output *o,
    const uint8_t *payload, uint32_t len)
{
	struct djob *j = djob_find(node->d, o->job_id);

	if (j == NULL || j->client == NULL)
		return;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_OUTPUT, &o->base,
	    payload, len);
	if (conn_queued(j->client->c) > DISP_OUT_HIGH)
		dpeer_backpressure(node->d, node);
}

/* A node's ranks are lost with it (relaunch is issue 5). */
static void
djob_node_lost(struct djob *j, struct dpeer *node)
{
	char why[400];
	int first = -1;

	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];
		if (rk->node != node)
			continue;
		rk->node = NULL;
		if (rk->launched && !rk->exited && first < 0)
			first = r;
		if (!rk->launched && first < 0)
			first = r;
	}
	if (first < 0)
		return;
	snprintf(why, sizeof(why), "rank %d lost: node %s disconnected",
	    first, node->name);
	if (!j->failed)
		djob_fail(j, 1, why);
	else if (j->state == DJOB_FINISHING && !djob_ranks_pending(j))
		djob_finish(j);
}

/*
 * A peer is gone (or about to be): drop every reference to it. Safe to
 * call more than once.
 */
void
djob_peer_lost(struct dpeer *p)
{
	struct disp *d = p->d;
	struct djob *j, *next;
	char why[300];

	switch (p->role) {
	case DPEER_CLIENT:
		if ((j = p->job) == NULL)
			return;
		p->job = NULL;
		j->client = NULL;
		log_info("dispatcher client left, killing job=%s", j->id);
		if (!j->failed)
			djob_fail(j, 1, "client disconnected");
		return;
	case DPEER_NODE:
		for (j = d->jobs; j != NULL; j = next) {
			next = j->next;
			djob_node_lost(j, p);
		}
		return;
	case DPEER_CM:
		for (j = d->jobs; j != NULL; j = next) {
			next = j->next;
			for (int i = 0; i < j->ncms; i++) {
				if (j->cms[i] != p)
					continue;
				j->cms[i] = NULL;
				snprintf(why, sizeof(why), "channel memory %s "
				    "lost", p->addr);
				if (!j->failed)
					djob_fail(j, 1, why);
				break;
			}
		}
		return;
	default:
		return;
	}
}

/* Shutdown: frees every job without telling anyone. */
void
djob_free_all(struct disp *d)
{
	struct djob *j;

	while ((j = d->jobs) != NULL) {
		d->jobs = j->next;
		if (j->client != NULL)
			j->client->job = NULL;
		djob_free(j);
	}
}
