/*
 * disp_job.c: jobs in the dispatcher. A submitted job waits for enough
 * CMs and free node slots, gets its ranks placed (filling nodes) and its
 * CMs chosen (fewest jobs first), has every CM set up (JobSetup ->
 * JobStatus{ready}), then is launched. The first failing rank decides
 * the exit code and reason; the other ranks are killed; JobDone goes to
 * the client and JobEnd to the CMs. The dispatcher never carries
 * application data, only rank output on its way to the client. Fault
 * injection is in disp_chaos.c, checkpoints in disp_ckpt.c, the loss of
 * a CM in disp_regen.c.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

static void djob_finish(struct djob *j);
static void djob_relaunch(struct djob *j, int r);

/* The one place a job changes state, traced. */
void
djob_set_state(struct djob *j, enum djob_state st)
{
	if (j->state == st)
		return;
	log_debug("dispatcher job=%s state %s -> %s", j->id,
	    djob_state_name(j->state), djob_state_name(st));
	j->state = st;
}

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
	ev_timer_stop(j->d->loop, &j->replay_w);
	ev_timer_stop(j->d->loop, &j->chaos_w);
	devents_sample_stop(j);
	djob_regen_stop(j);
	free(j->rlog);
	djob_strvfree(j->argv);
	djob_strvfree(j->env);
	free(j->cwd);
	free(j->cms);
	free(j->css);
	free(j->css_addr);
	free(j->cm_ready);
	free(j->ranks);
	dbin_free(j);
	free(j);
}

/*
 * Whether the last incarnation of a restarted rank has not had its
 * ReplayDone yet: the CM sends it on its own link, which a rank that
 * exits right after its replay can beat.
 */
static bool
djob_replays_pending(const struct djob *j)
{
	for (size_t i = 0; i < j->nrlog; i++) {
		const struct drestart *e = &j->rlog[i];

		if (!e->replay_seen && e->rank >= 0 && e->rank < j->nranks &&
		    e->incarnation == j->ranks[e->rank].incarnation)
			return true;
	}
	return false;
}

static void
djob_on_replay_wait(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct djob *j = w->data;

	(void)loop;
	(void)revents;
	log_warnx("dispatcher job=%s a replay report did not come, "
	    "finishing anyway", j->id);
	djob_finish(j);
}

/* Every rank exited: the job ends once the report has its replays. */
static void
djob_finish_soon(struct djob *j)
{
	if (djob_replays_pending(j)) {
		ev_timer_start(j->d->loop, &j->replay_w);
		return;
	}
	djob_finish(j);
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
	st.protocol = (char *)j->protocol;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_STATUS,
	    &st.base, NULL, 0);
}

/*
 * Adds kv ("KEY=VALUE") to the environment every Launch of the job
 * carries: MPIV_LOGGING=0 for a relay-only job, MPIV_PROTOCOL=direct
 * for a direct one. 0, or -1 (out of memory; the job is unchanged).
 */
static int
djob_env_add(struct djob *j, const char *kv)
{
	char **more, *s;

	if ((s = strdup(kv)) == NULL)
		return -1;
	if ((more = realloc(j->env, (j->nenv + 2) * sizeof(*more))) == NULL) {
		free(s);
		return -1;
	}
	more[j->nenv++] = s;
	more[j->nenv] = NULL;
	j->env = more;
	return 0;
}

bool
djob_direct(const struct djob *j)
{
	return strcmp(j->protocol, "direct") == 0;
}

/*
 * Node p can take one more rank of job j now: a live node with a free
 * slot, and one that accepts connections if j runs the direct protocol
 * (its ranks dial each other, docs/DIRECT.md). The one test of every
 * placement, first and after a failure.
 */
static bool
djob_node_free(const struct djob *j, const struct dpeer *p)
{
	return p->role == DPEER_NODE && p->slots > p->used &&
	    !conn_is_closing(p->c) && (!djob_direct(j) || !p->no_listen);
}

/*
 * What `--protocol auto` runs, once each rank of j has its node: direct
 * when every one of those nodes accepts connections, else relay.
 */
static const char *
djob_auto_protocol(const struct djob *j)
{
	for (int r = 0; r < j->nranks; r++)
		if (j->ranks[r].node == NULL || j->ranks[r].node->no_listen)
			return "relay";
	return "direct";
}




/* Tells rank r's node to send it sig (not counted as a kill). */
void
djob_kill_rank(struct djob *j, int r, int sig)
{
	Mpiv__Kill k = MPIV__KILL__INIT;
	struct drank *rk = &j->ranks[r];

	k.job_id = j->id;
	k.rank = r;
	k.signal = sig;
	(void)conn_send(rk->node->c, MPIV__MSG_TYPE__MSG_KILL, &k.base, NULL,
	    0);
	if (sig == SIGKILL)	/* surely dying: chaos picks another */
		rk->kill_sent = true;
}



struct djob *
djob_submit(struct disp *d, struct dpeer *client, const Mpiv__JobSubmit *js,
    const uint8_t *payload, uint32_t len, const char **err)
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
	if (js->ncs < 0 || js->ncs > DISP_MAX_CMS) {
		*err = "number of checkpoint servers out of range";
		return NULL;
	}
	if (js->deadlock_after != js->deadlock_after ||
	    js->deadlock_after > 1e9) {
		*err = "deadlock timeout out of range";
		return NULL;
	}
	if (!(js->ckpt_interval >= 0) || js->ckpt_interval > 1e9) {
		*err = "checkpoint interval out of range";
		return NULL;
	}
	/*
	 * The protocol (docs/DIRECT.md): auto is decided at placement
	 * (djob_auto_protocol). The ranks learn it from MPIV_PROTOCOL,
	 * which only the dispatcher sets: a job's own environment may not,
	 * or its ranks could run direct on nodes placed for relay.
	 */
	if (*js->protocol != '\0' && strcmp(js->protocol, "auto") != 0 &&
	    strcmp(js->protocol, "relay") != 0 &&
	    strcmp(js->protocol, "direct") != 0) {
		*err = "unknown protocol (relay, direct, auto)";
		return NULL;
	}
	for (size_t i = 0; i < js->n_env; i++) {
		if (strncmp(js->env[i], "MPIV_PROTOCOL=", 14) == 0) {
			*err = "the job's environment sets MPIV_PROTOCOL: "
			    "the protocol is chosen with --protocol";
			return NULL;
		}
	}
	if ((j = calloc(1, sizeof(*j))) == NULL)
		goto out_nomem;
	j->d = d;
	j->nranks = js->nranks;
	j->ncms = js->ncms > 0 ? js->ncms : 1;
	j->argc = js->n_argv;
	j->nenv = js->n_env;
	j->relay_only = js->relay_only;
	j->protocol = strcmp(js->protocol, "relay") == 0 ? "relay" :
	    strcmp(js->protocol, "direct") == 0 ? "direct" : "auto";
	/* 0: the default; negative: never restart. */
	j->max_restarts = js->max_restarts == 0 ? DISP_MAX_RESTARTS :
	    js->max_restarts < 0 ? 0 : js->max_restarts;
	j->chaos_mtbf_ms = js->chaos_mtbf_ms;
	j->chaos_max = js->chaos_max > 0 ? js->chaos_max : 0;
	j->chaos_rng = js->chaos_seed;
	j->chaos_nodes = js->chaos_nodes;
	j->t_submit = ev_now(d->loop);
	j->ckpt_interval = js->relay_only ? 0. : js->ckpt_interval;
	j->deadlock_after = js->deadlock_after == 0 ? DISP_DEADLOCK_AFTER :
	    js->deadlock_after;
	j->deadlock_abort = js->deadlock_abort;
	j->ncs = js->relay_only ? 0 : js->ncs;
	ev_timer_init(&j->grace_w, djob_on_grace, DISP_KILL_GRACE, 0.);
	j->grace_w.data = j;
	ev_timer_init(&j->replay_w, djob_on_replay_wait, DISP_REPLAY_WAIT, 0.);
	j->replay_w.data = j;
	ev_timer_init(&j->chaos_w, djob_on_chaos, 1., 0.);
	j->chaos_w.data = j;
	if ((j->argv = djob_strvdup(js->argv, js->n_argv)) == NULL ||
	    (j->env = djob_strvdup(js->env, js->n_env)) == NULL ||
	    (j->relay_only && djob_env_add(j, "MPIV_LOGGING=0") < 0) ||
	    (djob_direct(j) && djob_env_add(j, "MPIV_PROTOCOL=direct") < 0) ||
	    (j->cwd = strdup(js->cwd)) == NULL ||
	    (j->cms = calloc(j->ncms, sizeof(*j->cms))) == NULL ||
	    (j->cm_ready = calloc(j->ncms, sizeof(*j->cm_ready))) == NULL ||
	    (j->ranks = calloc(j->nranks, sizeof(*j->ranks))) == NULL)
		goto out_free;
	for (int r = 0; r < j->nranks; r++)
		dout_init(&j->ranks[r]);
	if (dbin_submit(j, js, payload, len, err) < 0) {
		djob_free(j);
		return NULL;
	}
	/* The job token scopes ranks to this job: the CMs get T, each rank
	   only K_rank = HMAC(T, "rank R"), which it keeps across restarts. */
	if (d->keys.enabled) {
		if (auth_random(j->token, sizeof(j->token)) < 0) {
			log_warn("dispatcher cannot make a job token");
			djob_free(j);
			*err = "dispatcher cannot make a job token";
			return NULL;
		}
		j->has_token = true;
	}
	snprintf(j->id, sizeof(j->id), "%u", d->next_job++);
	(void)dstate_save(d);	/* ids never repeat across restarts */
	j->client = client;
	client->job = j;
	for (tail = &d->jobs; *tail != NULL; tail = &(*tail)->next)
		j->prev = *tail;
	*tail = j;
	log_info("dispatcher job submitted job=%s nranks=%d ncms=%d prog=%s "
	    "protocol=%s mode=%s max_restarts=%d chaos_mtbf_ms=%u "
	    "chaos_seed=%llu chaos_max=%d ckpt_interval=%.3f ncs=%d", j->id,
	    j->nranks,
	    j->ncms, j->argv[0], j->protocol,
	    j->relay_only ? "relay" : "logging",
	    j->max_restarts, j->chaos_mtbf_ms,
	    (unsigned long long)js->chaos_seed, j->chaos_max,
	    j->ckpt_interval, j->ncs);
	djob_schedule(d);
	return j;

out_free:
	djob_free(j);
out_nomem:
	*err = "dispatcher out of memory";
	return NULL;
}

/*
 * The JobSetup of j for any of its CMs (cm_index left to the caller). A
 * rank that left with exit 0 tells the first CM, which may have lost the
 * state of a direct job's end, that every rank had finished (finish.c).
 */
void
djob_fill_setup(const struct djob *j, Mpiv__JobSetup *js)
{
	js->job_id = (char *)j->id;
	js->nranks = j->nranks;
	js->ncms = j->ncms;
	js->relay_only = j->relay_only;
	js->cwd = j->cwd;
	if (j->has_token) {
		js->job_token.data = (uint8_t *)j->token;
		js->job_token.len = sizeof(j->token);
	}
	for (int r = 0; r < j->nranks; r++)
		if (j->ranks[r].exited && j->ranks[r].exit_code == 0)
			js->fin_closed = true;
}

/* Sends JobSetup to each of the job's CMs. */
void
djob_setup_cms(struct djob *j)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;

	djob_fill_setup(j, &js);
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
	int ncm = 0, ncs = 0, free_slots = 0, r;
	char msg[128];

	for (p = d->peers; p != NULL; p = p->next) {
		if (conn_is_closing(p->c))
			continue;
		if (p->role == DPEER_CM && *p->addr != '\0')
			ncm++;
		else if (p->role == DPEER_CS && *p->addr != '\0')
			ncs++;
		else if (djob_node_free(j, p))
			free_slots += p->slots - p->used;
	}
	if (ncm < j->ncms)
		snprintf(msg, sizeof(msg), "need %d channel memories, have %d",
		    j->ncms, ncm);
	else if (ncs < j->ncs)
		snprintf(msg, sizeof(msg), "need %d checkpoint servers, have "
		    "%d", j->ncs, ncs);
	else if (free_slots < j->nranks)
		snprintf(msg, sizeof(msg), "need %d slots%s, have %d",
		    j->nranks, djob_direct(j) ? " on nodes that accept "
		    "connections (direct protocol)" : "", free_slots);
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
	/* CSs (none for relay-only jobs): the least loaded first. */
	j->ncss = j->relay_only ? 0 : j->ncs > 0 ? j->ncs : ncs;
	if (j->ncss > 0 && ((j->css = calloc(j->ncss, sizeof(*j->css))) ==
	    NULL || (j->css_addr = calloc(j->ncss, sizeof(*j->css_addr))) ==
	    NULL))
		j->ncss = 0;
	for (int i = 0; i < j->ncss; i++) {
		best = NULL;
		for (p = d->peers; p != NULL; p = p->next) {
			bool taken = false;
			if (p->role != DPEER_CS || *p->addr == '\0' ||
			    conn_is_closing(p->c))
				continue;
			for (int k = 0; k < i; k++)
				taken |= j->css[k] == p;
			if (!taken && (best == NULL || p->njobs < best->njobs))
				best = p;
		}
		j->css[i] = best;
		snprintf(j->css_addr[i], sizeof(j->css_addr[i]), "%s",
		    best->addr);
		best->njobs++;
	}
	/* Ranks: fill each node's free slots in turn. */
	node = d->peers;
	for (r = 0; r < j->nranks; r++) {
		while (!djob_node_free(j, node))
			node = node->next;
		j->ranks[r].node = node;
		j->ranks[r].incarnation = 1;
		j->ranks[r].exit_code = -1;
		j->ranks[r].restart_idx = -1;
		j->ranks[r].cs = j->ncss > 0 ? r % j->ncss : -1;
		node->used++;
	}
	/*
	 * auto is decided here, once for the job: its ranks keep the
	 * protocol through every restart. Without the memory to tell the
	 * ranks, auto runs relay, which runs anywhere.
	 */
	if (strcmp(j->protocol, "auto") == 0) {
		j->protocol = djob_auto_protocol(j);
		if (djob_direct(j) &&
		    djob_env_add(j, "MPIV_PROTOCOL=direct") < 0) {
			log_warnx("dispatcher job=%s out of memory, auto "
			    "runs relay", j->id);
			j->protocol = "relay";
		}
	}
	djob_set_state(j, DJOB_SETUP);
	log_info("dispatcher job placed job=%s protocol=%s, setting up %d "
	    "channel memories", j->id, j->protocol, j->ncms);
	djob_setup_cms(j);
	return true;
}

/* Ranks of running jobs waiting to be relaunched go first. */
void
djob_schedule(struct disp *d)
{
	if (d->stopping)
		return;
	for (struct djob *j = d->jobs; j != NULL; j = j->next)
		if (j->state == DJOB_RUNNING)
			for (int r = 0; r < j->nranks; r++)
				if (j->ranks[r].relaunch)
					djob_relaunch(j, r);
	for (struct djob *j = d->jobs; j != NULL; j = j->next)
		if (j->state == DJOB_WAITING)
			(void)djob_try_place(d, j);
}

/*
 * Tells the CS that keeps rank r's images that its current incarnation
 * is now rk->incarnation (ImageGrant): from then on it serves them only
 * to the node proving that incarnation's image key, the one this Launch
 * carries.
 */
static void
djob_grant_images(struct djob *j, int r)
{
	Mpiv__ImageGrant g = MPIV__IMAGE_GRANT__INIT;
	struct drank *rk = &j->ranks[r];
	struct dpeer *cs;

	if (rk->cs < 0 || (cs = j->css[rk->cs]) == NULL || cs->c == NULL)
		return;
	g.job_id = j->id;
	g.rank = r;
	g.incarnation = rk->incarnation;
	(void)conn_send(cs->c, MPIV__MSG_TYPE__MSG_IMAGE_GRANT, &g.base, NULL,
	    0);
}

/*
 * Sends Launch for the current incarnation of rank r to its node, with
 * that incarnation's credentials only: K_{r,i} for the CMs and the image
 * key for the CS (never the job token, never another incarnation's).
 */
static void
djob_launch_rank(struct djob *j, int r)
{
	Mpiv__Launch l = MPIV__LAUNCH__INIT;
	struct drank *rk = &j->ranks[r];
	char *cms[DISP_MAX_CMS];
	char **envx = NULL, basev[48];
	uint8_t rank_key[AUTH_HASH_LEN], image_key[AUTH_HASH_LEN];

	for (int i = 0; i < j->ncms; i++)
		cms[i] = j->cms[i]->addr;
	l.job_id = j->id;
	l.nranks = j->nranks;
	l.argv = j->argv;
	l.n_argv = j->argc;
	l.env = j->env;
	l.n_env = j->nenv;
	/* a job that started over numbers its checkpoints above the old
	   run's (disp_regen.c) */
	if (rk->ckpt_base > 0 &&
	    (envx = calloc(j->nenv + 1, sizeof(*envx))) != NULL) {
		memcpy(envx, j->env, j->nenv * sizeof(*envx));
		snprintf(basev, sizeof(basev), "MPIV_CKPT_BASE=%llu",
		    (unsigned long long)rk->ckpt_base);
		envx[j->nenv] = basev;
		l.env = envx;
		l.n_env = j->nenv + 1;
	}
	l.cwd = j->cwd;
	l.cms = cms;
	l.n_cms = j->ncms;
	l.rank = r;
	l.incarnation = rk->incarnation;
	if (rk->cs >= 0 && j->css[rk->cs] != NULL) {
		l.cs = j->css[rk->cs]->addr;
		if (rk->node->criu)
			l.ckpt_interval = j->ckpt_interval;
	}
	l.restore = rk->restoring;
	l.binary_hash = j->bin_hash;
	l.binary_size = j->bin_size;
	if (dbin_stdin_for(j, r)) {
		l.stdin_hash = j->in_hash;
		l.stdin_size = j->in_size;
	}
	if (j->has_token) {
		auth_rank_inc_key(j->token, sizeof(j->token), r,
		    rk->incarnation, rank_key);
		l.rank_key.data = rank_key;
		l.rank_key.len = sizeof(rank_key);
	}
	if (j->d->keys.cluster && *l.cs != '\0') {
		auth_image_key(&j->d->keys.secret, j->id, r, rk->incarnation,
		    image_key);
		l.image_key.data = image_key;
		l.image_key.len = sizeof(image_key);
	}
	djob_grant_images(j, r);
	(void)conn_send(rk->node->c, MPIV__MSG_TYPE__MSG_LAUNCH, &l.base,
	    NULL, 0);
	djob_event(j, "launch", r, rk->incarnation, rk->restoring ?
	    rk->last_ckpt : 0, rk->node->name, 0, 0, NULL);
	free(envx);
	auth_wipe(rank_key, sizeof(rank_key));
	auth_wipe(image_key, sizeof(image_key));
	rk->launched = true;
	rk->started = false;
	rk->kill_sent = false;
}


static void
djob_launch(struct djob *j)
{
	char why[200], msg[240];

	for (int r = 0; r < j->nranks; r++) {
		if (j->ranks[r].node == NULL) {
			/* Its node vanished during the setup: placed anew,
			   or when a slot frees up. */
			j->ranks[r].relaunch = true;
			djob_relaunch(j, r);
			continue;
		}
		djob_launch_rank(j, r);
	}
	djob_set_state(j, DJOB_RUNNING);
	djob_ckpt_why(j, why, sizeof(why));
	log_info("dispatcher job running job=%s nranks=%d protocol=%s "
	    "mode=%s ckpt_interval=%.3f css=%d%s%s", j->id, j->nranks,
	    j->protocol, j->relay_only ? "relay" : "logging",
	    j->ckpt_interval, j->ncss,
	    why[0] ? " checkpoints_disabled=" : "", why);
	msg[0] = '\0';
	if (j->ckpt_interval > 0 && why[0] != '\0') {
		snprintf(msg, sizeof(msg), "checkpoints disabled: %s", why);
		j->ckpt_warned = true;
	}
	djob_status(j, "running", msg);
	djob_event(j, "running", -1, 0, (uint64_t)j->nranks, NULL, 0, 0,
	    "%s", j->protocol);
	devents_sample_start(j);
	if (j->chaos_mtbf_ms > 0)
		djob_chaos_arm(j);
}

/*
 * Places a killed rank's next incarnation on a free slot, its last node
 * first, and launches it; without a free slot it stays marked and
 * djob_schedule tries again when a slot frees up.
 */
static void
djob_relaunch(struct djob *j, int r)
{
	struct drank *rk = &j->ranks[r];
	struct dpeer *p = NULL;
	bool want_criu = rk->last_ckpt > 0;
	char why[300];

	/*
	 * MPIV_RELAUNCH_ELSEWHERE=1 (tests): another node first, to show
	 * that images and logs do not depend on the node.
	 */
	if (getenv("MPIV_RELAUNCH_ELSEWHERE") != NULL)
		for (struct dpeer *q = j->d->peers; p == NULL && q != NULL;
		    q = q->next)
			if (q != rk->prev_node && djob_node_free(j, q) &&
			    (!want_criu || q->criu))
				p = q;
	if (p == NULL && rk->prev_node != NULL &&
	    djob_node_free(j, rk->prev_node) &&
	    (!want_criu || rk->prev_node->criu))
		p = rk->prev_node;
	for (struct dpeer *q = j->d->peers; p == NULL && want_criu &&
	    q != NULL; q = q->next)
		if (djob_node_free(j, q) && q->criu)
			p = q;
	for (struct dpeer *q = j->d->peers; p == NULL && q != NULL;
	    q = q->next)
		if (djob_node_free(j, q))
			p = q;
	if (p == NULL) {
		log_debug("dispatcher job=%s rank=%d incarnation=%u waits for "
		    "a free slot", j->id, r, rk->incarnation);
		return;
	}
	/*
	 * A durable checkpoint may have let the home CM free the log a
	 * restart from the beginning needs: it must be restored.
	 */
	rk->restoring = false;
	if (rk->last_ckpt > 0) {
		if (!p->criu || rk->cs < 0 || j->css[rk->cs] == NULL) {
			snprintf(why, sizeof(why), "rank %d: cannot restore "
			    "checkpoint %llu (%s) and its log may be freed",
			    r, (unsigned long long)rk->last_ckpt, !p->criu ?
			    "no node with a working CRIU" :
			    "its checkpoint server is gone");
			rk->relaunch = false;
			rk->exited = true;
			rk->exit_code = 1;
			j->nexited++;
			djob_fail(j, 1, why);
			return;
		}
		rk->restoring = true;
	}
	rk->relaunch = false;
	rk->node = p;
	log_info("dispatcher relaunching job=%s rank=%d inc=%u node=%s "
	    "prev_node=%s restarts=%u restore_ckpt=%llu", j->id, r,
	    rk->incarnation, p->name, rk->prev_node != NULL ?
	    rk->prev_node->name : "-", rk->restarts, rk->restoring ?
	    (unsigned long long)rk->last_ckpt : 0ull);
	rk->prev_node = p;
	p->used++;
	djob_launch_rank(j, r);
}

/* Rank r died from a kill: next incarnation, logged, relaunched. */
void
djob_restart(struct djob *j, int r, double t_exit)
{
	struct drank *rk = &j->ranks[r];
	struct drestart *e;

	if (j->nrlog == j->caprlog) {
		size_t cap = j->caprlog ? j->caprlog * 2 : 16;
		struct drestart *nl = realloc(j->rlog, cap * sizeof(*nl));
		if (nl == NULL) {
			log_errorx("dispatcher out of memory restarting "
			    "job=%s rank=%d", j->id, r);
			rk->restart_idx = -1;
			goto relaunch;
		}
		j->rlog = nl;
		j->caprlog = cap;
	}
	e = &j->rlog[j->nrlog];
	memset(e, 0, sizeof(*e));
	e->rank = r;
	e->incarnation = rk->incarnation + 1;
	e->t_exit = t_exit;
	e->relaunch_ms = -1;
	rk->restart_idx = (int)j->nrlog++;
relaunch:
	rk->prev_node = rk->node;
	rk->node = NULL;
	rk->launched = false;
	rk->started = false;
	rk->kill_sent = false;
	rk->incarnation++;
	rk->restarts++;
	j->restarts++;
	rk->relaunch = true;
	djob_relaunch(j, r);
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
	Mpiv__RestartInfo *ri = NULL, **rip = NULL;
	char why[200];

	if (j->client != NULL) {
		rr = calloc(j->nranks, sizeof(*rr));
		rrp = calloc(j->nranks, sizeof(*rrp));
		if (j->nrlog > 0) {
			ri = calloc(j->nrlog, sizeof(*ri));
			rip = calloc(j->nrlog, sizeof(*rip));
		}
		if (ri != NULL && rip != NULL) {
			for (size_t i = 0; i < j->nrlog; i++) {
				mpiv__restart_info__init(&ri[i]);
				ri[i].rank = j->rlog[i].rank;
				ri[i].incarnation = j->rlog[i].incarnation;
				ri[i].relaunch_ms = j->rlog[i].relaunch_ms;
				ri[i].replayed_events =
				    j->rlog[i].replayed_events;
				ri[i].replayed_ahead =
				    j->rlog[i].replayed_ahead;
				ri[i].replay_s = j->rlog[i].replay_s;
				ri[i].from_ckpt = j->rlog[i].from_ckpt;
				rip[i] = &ri[i];
			}
			jd.restart_log = rip;
			jd.n_restart_log = j->nrlog;
		}
		if (rr != NULL && rrp != NULL) {
			for (int r = 0; r < j->nranks; r++) {
				mpiv__rank_result__init(&rr[r]);
				rr[r].rank = r;
				rr[r].incarnations = j->ranks[r].incarnation;
				rr[r].restarts = j->ranks[r].restarts;
				rr[r].checkpoints = j->ranks[r].checkpoints;
				rr[r].exit_code = j->ranks[r].exited ?
				    j->ranks[r].exit_code : -1;
				if (j->ranks[r].end_waiting) {
					rr[r].waits = j->ranks[r].wait_what;
					rr[r].waited_s = j->ranks[r].end_waited;
				}
				rrp[r] = &rr[r];
			}
			jd.ranks = rrp;
			jd.n_ranks = j->nranks;
		}
		jd.job_id = j->id;
		jd.exit_code = j->failed ? j->exit_code : 0;
		jd.reason = j->failed ? j->reason : "";
		jd.kills = j->kills;
		jd.restarts = j->restarts;
		jd.ckpt_failures = j->ckpt_failures;
		djob_ckpt_why(j, why, sizeof(why));
		jd.mode = j->relay_only ? "relay" : why[0] == '\0' &&
		    (j->ckpt_interval > 0 || j->checkpoints > 0) ?
		    "checkpoint" : "logging";
		djob_event(j, "done", -1, 0, (uint64_t)(uint32_t)jd.exit_code,
		    NULL, 0, 0, "%s", jd.reason);
		(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_JOB_DONE,
		    &jd.base, NULL, 0);
		free(rr);
		free(rrp);
		free(ri);
		free(rip);
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
	/* Its images are of no use now: the CSs drop them (a CS away now
	   drops them when it registers again, CsJobs). */
	for (int i = 0; i < j->ncss; i++)
		if (j->css[i] != NULL) {
			if (j->css[i]->c != NULL)
				(void)conn_send(j->css[i]->c,
				    MPIV__MSG_TYPE__MSG_JOB_END, &je.base,
				    NULL, 0);
			j->css[i]->njobs--;
		}
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];
		if (rk->node != NULL && !rk->launched && rk->node->used > 0)
			rk->node->used--;
	}
	log_info("dispatcher job done job=%s exit_code=%d kills=%u "
	    "restarts=%u checkpoints=%u reason=\"%s\"", j->id,
	    j->failed ? j->exit_code : 0, j->kills, j->restarts,
	    j->checkpoints, j->failed ? j->reason : "");
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
void
djob_fail(struct djob *j, int code, const char *reason)
{
	double now;

	if (j->failed)
		return;
	now = ev_now(j->d->loop);
	/* what each rank waits for now: the ranks are killed next, and a
	   timed out or cancelled job says where it was stuck */
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];

		rk->end_waiting = ddl_rank_waits(j, rk, now);
		rk->end_waited = rk->waited_s + (now - rk->wait_heard);
	}
	j->failed = true;
	j->exit_code = code;
	snprintf(j->reason, sizeof(j->reason), "%s", reason);
	log_info("dispatcher job failing job=%s exit_code=%d reason=\"%s\"",
	    j->id, code, reason);
	djob_regen_stop(j);
	if (j->state == DJOB_REGEN)
		djob_set_state(j, DJOB_RUNNING);	/* its live ranks are killed */
	if (j->state != DJOB_RUNNING) {
		djob_finish(j);
		return;
	}
	djob_set_state(j, DJOB_FINISHING);
	ev_timer_stop(j->d->loop, &j->chaos_w);
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];
		if (rk->launched && !rk->exited && rk->node != NULL)
			djob_kill_rank(j, r, SIGKILL);
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

	if (j != NULL && j->state == DJOB_REGEN) {
		djob_regen_answer(j, cm, st->state);
		return;
	}
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

/* A CM answered Error: the first job still waiting for it (its JobSetup,
   or a lost CM back, asked about its store) fails. */
void
djob_cm_error(struct dpeer *cm, const char *text)
{
	char why[400];

	for (struct djob *j = cm->d->jobs; j != NULL; j = j->next) {
		if (j->state == DJOB_REGEN && j->regen_asked == cm) {
			/* the lost CM back, refusing the job's new run (its
			   files cannot be put back: fileserv.c) */
			snprintf(why, sizeof(why), "channel memory %s "
			    "refused the job: %s", cm->addr, text);
			djob_fail(j, 1, why);
			return;
		}
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

/*
 * A node reported on a rank it was not given (incarnation inc, 0 when the
 * report has none): it is declared dead, since a node that lies about
 * ranks cannot be trusted with any.
 */
void
djob_bad_claim(struct dpeer *node, struct djob *j, int r, uint32_t inc,
    const char *what)
{
	char why[160];

	log_warnx("dispatcher node claims a rank it was not given node=%s "
	    "what=%s job=%s rank=%d incarnation=%u", node->node_id, what,
	    j->id, r, inc);
	snprintf(why, sizeof(why), "%s for rank %d incarnation %u of job %s, "
	    "which it was not given", what, r, inc, j->id);
	dnode_declare_dead(node, why);
}

/*
 * Checks a node's report about incarnation inc of rank r of job j: 1
 * when it is the current incarnation and this node was given it, 0 for
 * an older incarnation (stale, ignored), -1 for a claim on a rank the
 * node was not given (a later incarnation, the current one placed
 * elsewhere, a rank out of range): that node is declared dead
 * (djob_bad_claim).
 */
static int
djob_claim(struct dpeer *node, struct djob *j, int r, uint32_t inc,
    const char *what)
{
	if (r >= 0 && r < j->nranks) {
		const struct drank *rk = &j->ranks[r];

		if (inc < rk->incarnation)
			return 0;
		if (inc == rk->incarnation && rk->node == node)
			return 1;
	}
	djob_bad_claim(node, j, r, inc, what);
	return -1;
}

void
djob_task_exit(struct dpeer *node, const Mpiv__TaskExit *te)
{
	struct djob *j;
	struct drank *rk;
	char why[400];
	bool killed;
	int code;

	if (node->used > 0)
		node->used--;
	log_info("dispatcher task exit job=%s rank=%d incarnation=%u code=%d "
	    "signal=%d aborted=%d node=%s", te->job_id, te->rank,
	    te->incarnation, te->exit_code, te->signal, te->aborted,
	    node->name);
	if ((j = djob_find(node->d, te->job_id)) == NULL) {
		djob_schedule(node->d);
		return;
	}
	if (djob_claim(node, j, te->rank, te->incarnation, "task exit") < 0)
		return;
	rk = &j->ranks[te->rank];
	if (rk->node != node || rk->incarnation != te->incarnation ||
	    rk->exited || !rk->launched) {
		/* An older incarnation (or a stray): only its slot matters. */
		log_debug("dispatcher stale task exit job=%s rank=%d "
		    "incarnation=%u current=%u", j->id, te->rank,
		    te->incarnation, rk->incarnation);
		djob_schedule(node->d);
		return;
	}
	djob_event(j, "exit", te->rank, te->incarnation,
	    (uint64_t)(uint32_t)te->exit_code, node->name, 0, 0, "%s",
	    te->aborted ? "aborted" : *te->reason != '\0' ? te->reason :
	    te->signal == SIGKILL ? "signal 9" : te->signal == SIGTERM ?
	    "signal 15" : te->signal != 0 ? "signal" : "exited");
	if (j->state == DJOB_REGEN) {
		/* starting over (disp_regen.c): whatever it died of */
		djob_regen_exited(j, te->rank);
		djob_schedule(node->d);
		return;
	}
	/* Killed from outside (chaos, mpiv kill, OOM killer): run it again. */
	killed = !te->aborted && *te->reason == '\0' &&
	    (te->signal == SIGKILL || te->signal == SIGTERM);
	if (killed && !j->relay_only && j->state == DJOB_RUNNING &&
	    !j->failed && rk->restarts < (uint32_t)j->max_restarts) {
		log_info("dispatcher rank killed, restarting job=%s rank=%d "
		    "incarnation=%u signal=%d restarts=%u", j->id, te->rank,
		    te->incarnation, te->signal, rk->restarts + 1);
		djob_restart(j, te->rank, ev_time());
		djob_schedule(node->d);
		return;
	}
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
		if (killed && !j->relay_only && j->state == DJOB_RUNNING &&
		    !j->failed)
			snprintf(why, sizeof(why), "rank %d killed by signal "
			    "%d (%s) after %u restarts (the limit)", te->rank,
			    te->signal, strsignal(te->signal), rk->restarts);
		else
			snprintf(why, sizeof(why), "rank %d killed by signal "
			    "%d (%s)", te->rank, te->signal,
			    strsignal(te->signal));
	} else {
		code = te->exit_code;
		if (code != 0)
			snprintf(why, sizeof(why), "rank %d exited with code %d",
			    te->rank, code);
	}
	rk->exit_code = code;
	if (why[0] != '\0' && !j->failed && te->finalized && !te->aborted &&
	    j->state == DJOB_RUNNING && j->fin_code == 0 &&
	    j->nexited < j->nranks) {
		/* The program's own end, past MPI_Finalize: the others may
		   still print what they print after theirs (mpirun's
		   race, kept out). The job fails with it once they ended. */
		j->fin_code = code;
		snprintf(j->fin_reason, sizeof(j->fin_reason), "%s", why);
		log_info("dispatcher rank failed past MPI_Finalize, waiting "
		    "for the others job=%s rank=%d exit_code=%d", j->id,
		    te->rank, code);
		djob_schedule(node->d);
		return;
	}
	if (why[0] != '\0' && !j->failed) {
		if (j->fin_code != 0)	/* the first failure decides */
			djob_fail(j, j->fin_code, j->fin_reason);
		else
			djob_fail(j, code, why);
		return;
	}
	if (j->state == DJOB_FINISHING) {
		if (!djob_ranks_pending(j))
			djob_finish(j);
	} else if (j->nexited == j->nranks && j->fin_code != 0) {
		djob_fail(j, j->fin_code, j->fin_reason);
	} else if (j->nexited == j->nranks) {
		djob_finish_soon(j);
	} else {
		djob_schedule(node->d);
	}
}

/*
 * The node could not restore rank r's checkpoint (TaskStarted.error; no
 * TaskExit follows). A restart from the beginning is safe only while no
 * checkpoint of the rank was durable: after one, its home CM may have
 * freed the log such a replay needs, so the job fails clearly.
 */
static void
djob_restore_failed(struct djob *j, int r, const char *error)
{
	struct drank *rk = &j->ranks[r];
	char why[600];

	log_warnx("dispatcher restore failed job=%s rank=%d inc=%u ckpt=%llu "
	    "error=\"%s\"", j->id, r, rk->incarnation,
	    (unsigned long long)rk->last_ckpt, error);
	if (rk->node != NULL && rk->node->used > 0)
		rk->node->used--;
	if (rk->last_ckpt == 0 && j->state == DJOB_RUNNING && !j->failed) {
		rk->launched = false;
		rk->restoring = false;
		rk->node = NULL;
		rk->relaunch = true;
		djob_relaunch(j, r);
		return;
	}
	rk->launched = false;
	rk->exited = true;
	rk->exit_code = 1;
	j->nexited++;
	snprintf(why, sizeof(why), "rank %d: %s", r, error);
	if (!j->failed)
		djob_fail(j, 1, why);
	else if (j->state == DJOB_FINISHING && !djob_ranks_pending(j))
		djob_finish(j);
}

void
djob_task_started(struct dpeer *node, const Mpiv__TaskStarted *ts)
{
	struct djob *j = djob_find(node->d, ts->job_id);
	struct drank *rk;
	struct drestart *e;

	log_debug("dispatcher task started job=%s rank=%d incarnation=%u "
	    "pid=%d node=%s", ts->job_id, ts->rank, ts->incarnation, ts->pid,
	    node->name);
	if (j == NULL ||
	    djob_claim(node, j, ts->rank, ts->incarnation, "task started") < 1)
		return;
	rk = &j->ranks[ts->rank];
	if (rk->node != node || rk->incarnation != ts->incarnation ||
	    !rk->launched || rk->started)
		return;
	if (*ts->error != '\0') {
		djob_restore_failed(j, ts->rank, ts->error);
		return;
	}
	rk->started = true;
	djob_event(j, "started", ts->rank, ts->incarnation,
	    ts->restored_ckpt, node->name, rk->restart_idx >= 0 ?
	    ev_time() - j->rlog[rk->restart_idx].t_exit : 0, 0, NULL);
	if (ts->restored_ckpt > 0) {
		/*
		 * Exactly-once output: the restored incarnation's bytes are
		 * counted from what its image had already written.
		 */
		rk->out_inc[0] = rk->out_inc[1] = ts->incarnation;
		rk->out_off[0] = ts->out_base;
		rk->out_off[1] = ts->err_base;
		dout_begin(rk, 0, ts->out_base);
		dout_begin(rk, 1, ts->err_base);
		log_info("dispatcher restored job=%s rank=%d inc=%u ckpt=%llu "
		    "out_base=%llu err_base=%llu", j->id, ts->rank,
		    ts->incarnation, (unsigned long long)ts->restored_ckpt,
		    (unsigned long long)ts->out_base,
		    (unsigned long long)ts->err_base);
	}
	if (rk->restart_idx < 0)
		return;
	e = &j->rlog[rk->restart_idx];
	e->relaunch_ms = (ev_time() - e->t_exit) * 1000.;
	e->from_ckpt = ts->restored_ckpt;
	log_info("dispatcher relaunch job=%s rank=%d inc=%u latency_ms=%.1f "
	    "from_ckpt=%llu node=%s", j->id, ts->rank, ts->incarnation,
	    e->relaunch_ms, (unsigned long long)ts->restored_ckpt,
	    node->name);
}

/*
 * Output exactly once (docs/REPLAY.md): per (rank, stream) the bytes
 * already forwarded; each incarnation counts its own bytes from 0 and
 * only what lies beyond the forwarded count goes to the client. A
 * re-execution prints the same bytes, so its duplicate prefix is
 * dropped. Output of a superseded incarnation is dropped: its
 * successor prints those bytes again.
 */
void
djob_output(struct dpeer *node, const Mpiv__Output *o,
    const uint8_t *payload, uint32_t len)
{
	struct djob *j = djob_find(node->d, o->job_id);
	struct drank *rk;
	uint64_t off, skip;
	int s;

	if (j == NULL || (o->incarnation != 0 &&
	    djob_claim(node, j, o->rank, o->incarnation, "output") < 0) ||
	    j->client == NULL || o->rank < 0 || o->rank >= j->nranks)
		return;
	rk = &j->ranks[o->rank];
	s = o->stream == 2;
	if (o->incarnation != 0) {
		if (o->incarnation < rk->incarnation ||
		    o->incarnation < rk->out_inc[s]) {
			log_debug("dispatcher dropping output of superseded "
			    "job=%s rank=%d incarnation=%u bytes=%u", j->id,
			    o->rank, o->incarnation, len);
			return;
		}
		if (o->incarnation > rk->out_inc[s]) {
			rk->out_inc[s] = o->incarnation;
			rk->out_off[s] = 0;
			dout_begin(rk, s, 0);
		}
		off = rk->out_off[s];
		rk->out_off[s] += len;
		dout_check(j, o->rank, s, off, payload, len);
		if (rk->out_off[s] <= rk->out_fwd[s])
			return;		/* all of it was printed before */
		skip = rk->out_fwd[s] > off ? rk->out_fwd[s] - off : 0;
		rk->out_fwd[s] = rk->out_off[s];
		payload += skip;
		len -= (uint32_t)skip;
	} else {
		rk->out_fwd[s] += len;	/* agent without incarnations */
	}
	dout_forwarded(rk, s, payload, len);
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_OUTPUT, &o->base,
	    payload, len);
	if (conn_queued(j->client->c) > DISP_OUT_HIGH)
		dpeer_backpressure(node->d, node);
}

/* A CM's ReplayDone: the replay length of that restart. */
void
djob_replay_done(struct dpeer *cm, const Mpiv__ReplayDone *rd)
{
	struct djob *j = djob_find(cm->d, rd->job_id);

	log_info("dispatcher replay done job=%s rank=%d incarnation=%u "
	    "events=%llu ahead=%llu seconds=%.3f cm=%s", rd->job_id, rd->rank,
	    rd->incarnation, (unsigned long long)rd->events,
	    (unsigned long long)rd->ahead, rd->seconds, cm->addr);
	if (j == NULL)
		return;
	for (size_t i = j->nrlog; i-- > 0;) {
		struct drestart *e = &j->rlog[i];
		if (e->rank == rd->rank && e->incarnation == rd->incarnation) {
			djob_event(j, "replay_done", rd->rank, rd->incarnation,
			    rd->events, cm->addr, rd->seconds, 0, "%llu ahead",
			    (unsigned long long)rd->ahead);
			e->replay_seen = true;
			e->replayed_events = rd->events;
			e->replayed_ahead = rd->ahead;
			e->replay_s = rd->seconds;
			if (ev_is_active(&j->replay_w) &&
			    !djob_replays_pending(j)) {
				ev_timer_stop(j->d->loop, &j->replay_w);
				djob_finish(j);
			}
			return;
		}
	}
}







/* A node's ranks are lost with it: relaunched elsewhere when possible. */
static void
djob_node_lost(struct djob *j, struct dpeer *node)
{
	double now = ev_now(j->d->loop);
	char why[400];
	int first = -1, n = 0;

	for (int r = 0; r < j->nranks; r++)
		n += j->ranks[r].node == node && !j->ranks[r].exited;
	if (n > 0)
		djob_event(j, "node_lost", -1, 0, (uint64_t)n, node->name, 0,
		    0, "disconnected");
	for (int r = 0; r < j->nranks; r++) {
		struct drank *rk = &j->ranks[r];
		if (rk->prev_node == node)
			rk->prev_node = NULL;
		if (rk->node != node)
			continue;
		if (!rk->exited && rk->launched)
			djob_event(j, "exit", r, rk->incarnation, 0,
			    node->name, 0, 0, "node lost");
		if (rk->exited) {
			rk->node = NULL;
			continue;
		}
		/* Placed but not launched yet (CMs still setting up): it is
		   placed again when the job launches (djob_launch). */
		if (j->state == DJOB_SETUP && !rk->launched) {
			rk->node = NULL;
			continue;
		}
		/* Starting over (disp_regen.c): it was being killed anyway. */
		if (j->state == DJOB_REGEN) {
			djob_regen_exited(j, r);
			rk->prev_node = NULL;	/* node is freed soon */
			continue;
		}
		/*
		 * A rank of a running job whose node vanished is relaunched
		 * elsewhere like a killed one (incarnation+1, from its last
		 * checkpoint): the CMs fence whatever of the old incarnation
		 * still runs behind a partition. Before the job runs, or
		 * when it may not restart (relay-only, restart limit), the
		 * job fails as it would for a crash.
		 */
		if (j->state == DJOB_RUNNING && !j->failed && !j->relay_only &&
		    rk->launched && rk->restarts < (uint32_t)j->max_restarts) {
			log_info("dispatcher rank lost with its node, "
			    "restarting job=%s rank=%d incarnation=%u node=%s",
			    j->id, r, rk->incarnation, node->name);
			djob_restart(j, r, now);
			if (rk->prev_node == node)	/* p is freed soon */
				rk->prev_node = NULL;
			continue;
		}
		rk->node = NULL;
		if (first < 0)
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
				/* its logs are gone: start over, or fail */
				if (!j->failed && !djob_regen_begin(j, i,
				    p->addr, why, sizeof(why)))
					djob_fail(j, 1, why);
				break;
			}
		}
		return;
	case DPEER_CS:
		/*
		 * Its images are out of reach: ranks whose checkpoint was
		 * durable there cannot be restarted any more (djob_relaunch
		 * fails the job if one must be); new checkpoints stop.
		 */
		for (j = d->jobs; j != NULL; j = j->next)
			for (int i = 0; i < j->ncss; i++)
				if (j->css[i] == p) {
					j->css[i] = NULL;
					log_warnx("dispatcher job=%s lost "
					    "checkpoint server %s", j->id,
					    p->addr);
				}
		return;
	default:
		return;
	}
}

/*
 * A checkpoint server registered: CsJobs tells it who we are and which
 * jobs run, so that it drops the images of every other job it stored
 * (ended while it was away, or a previous dispatcher's).
 */
void
djob_cs_jobs(struct dpeer *p)
{
	Mpiv__CsJobs cj = MPIV__CS_JOBS__INIT;
	char **live = NULL;
	size_t n = 0;

	for (struct djob *j = p->d->jobs; j != NULL; j = j->next)
		n++;
	if (n > 0 && (live = calloc(n, sizeof(*live))) == NULL) {
		log_warnx("dispatcher out of memory for the jobs of cs=%s",
		    p->addr);
		return;
	}
	n = 0;
	for (struct djob *j = p->d->jobs; j != NULL; j = j->next)
		live[n++] = j->id;
	cj.dispatcher_id = p->d->instance;
	cj.live = live;
	cj.n_live = n;
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_CS_JOBS, &cj.base, NULL, 0);
	free(live);
}

/*
 * A checkpoint server registered: if it listens where a job's lost CS
 * listened, it is that server restarted on its store (its committed
 * images survive a crash, docs/CHECKPOINT.md): the job uses it again for
 * new checkpoints and restores, and is told again the current
 * incarnation of each rank whose images it keeps (it forgot them).
 */
void
djob_cs_returned(struct dpeer *p)
{
	for (struct djob *j = p->d->jobs; j != NULL; j = j->next)
		for (int i = 0; i < j->ncss; i++)
			if (j->css[i] == NULL &&
			    strcmp(j->css_addr[i], p->addr) == 0) {
				j->css[i] = p;
				p->njobs++;
				log_info("dispatcher job=%s checkpoint server "
				    "%s is back", j->id, p->addr);
				for (int r = 0; r < j->nranks; r++)
					if (j->ranks[r].cs == i &&
					    j->ranks[r].launched)
						djob_grant_images(j, r);
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
