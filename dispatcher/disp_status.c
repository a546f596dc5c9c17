/*
 * disp_status.c: `mpiv status`: one StatusReply with the node pool, the
 * services and the jobs (all, or the one asked for), per rank its node,
 * incarnation, last durable checkpoint and restarts. Built from the live
 * state on each request; nothing is kept for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

const char *
djob_state_name(enum djob_state st)
{
	switch (st) {
	case DJOB_WAITING:
		return "waiting";
	case DJOB_SETUP:
		return "starting";
	case DJOB_RUNNING:
		return "running";
	case DJOB_FINISHING:
		return "finishing";
	case DJOB_REGEN:
		return "restarting";
	}
	return "?";
}

static const char *
dstatus_rank_state(const struct drank *rk)
{
	if (rk->exited)
		return "exited";
	if (rk->relaunch)
		return "waiting";
	if (!rk->launched)
		return "pending";
	if (!rk->started)
		return rk->restoring ? "restoring" : "starting";
	return "running";
}

/* Fills ji for j, its ranks in ri/rip, its CM and CS addresses in
   cms/css, its active warnings in w/wp (DWARN_NKINDS each); the strings
   point into j. */
static void
dstatus_job(const struct djob *j, double now, Mpiv__JobInfo *ji,
    Mpiv__RankInfo **rip, Mpiv__RankInfo *ri, char **cms, char **css,
    Mpiv__JobWarning **wp, Mpiv__JobWarning *w)
{
	size_t nw = 0;

	mpiv__job_info__init(ji);
	ji->job_id = (char *)j->id;
	ji->state = (char *)djob_state_name(j->state);
	ji->nranks = j->nranks;
	ji->argv = j->argv;
	ji->n_argv = j->argc;
	ji->age_s = now - j->t_submit;
	ji->restarts = j->restarts;
	ji->checkpoints = j->checkpoints;
	ji->kills = j->kills;
	ji->message = (char *)(j->failed ? j->reason :
	    j->state == DJOB_WAITING ? j->waitmsg : "");
	for (int r = 0; r < j->nranks; r++) {
		const struct drank *rk = &j->ranks[r];

		mpiv__rank_info__init(&ri[r]);
		ri[r].rank = r;
		ri[r].node = (char *)(rk->node != NULL ? rk->node->node_id :
		    "");
		ri[r].incarnation = rk->incarnation;
		ri[r].last_ckpt = rk->last_ckpt;
		ri[r].restarts = rk->restarts;
		ri[r].state = (char *)dstatus_rank_state(rk);
		ri[r].exit_code = rk->exit_code;
		if (ddl_rank_waits(j, rk, now)) {
			ri[r].waits = (char *)rk->wait_what;
			ri[r].waited_s = rk->waited_s + (now - rk->wait_heard);
		}
		rip[r] = &ri[r];
	}
	ji->ranks = rip;
	ji->n_ranks = (size_t)j->nranks;
	for (int i = 0; i < j->ncms; i++)
		cms[i] = (char *)(j->cms[i] != NULL ? j->cms[i]->addr : "-");
	ji->cms = cms;
	ji->n_cms = (size_t)j->ncms;
	for (int i = 0; i < j->ncss; i++)
		css[i] = (char *)(j->css[i] != NULL ? j->css[i]->addr : "-");
	ji->css = css;
	ji->n_css = (size_t)j->ncss;
	ji->ckpt_failures = j->ckpt_failures;
	ji->protocol = (char *)j->protocol;
	for (int k = 0; k < DWARN_NKINDS; k++) {
		const struct dwarn *dw = &j->warn[k];

		if (!dw->active)
			continue;
		mpiv__job_warning__init(&w[nw]);
		w[nw].job_id = (char *)j->id;
		w[nw].kind = (char *)dwarn_kind_name((enum dwarn_kind)k);
		w[nw].active = true;
		w[nw].text = (char *)dw->text;
		w[nw].since_s = dw->since - j->t_submit;
		w[nw].count = k == DWARN_CKPT ? j->ckpt_failures : 0;
		wp[nw] = &w[nw];
		nw++;
	}
	ji->warnings = wp;
	ji->n_warnings = nw;
}

void
dstatus_reply(struct dpeer *client, const Mpiv__StatusRequest *sr)
{
	struct disp *d = client->d;
	Mpiv__StatusReply rep = MPIV__STATUS_REPLY__INIT;
	double now = ev_now(d->loop);
	size_t nn = 0, ns = 0, nj = 0, nr = 0, nc = 0, k;
	struct dpeer *p;
	struct djob *j;
	Mpiv__NodeInfo *ni = NULL, **nip = NULL;
	Mpiv__ServiceInfo *si = NULL, **sip = NULL;
	Mpiv__JobInfo *ji = NULL, **jip = NULL;
	Mpiv__RankInfo *ri = NULL, **rip = NULL;
	Mpiv__JobWarning *wi = NULL, **wip = NULL;
	char **strs = NULL, err[96] = "";

	for (p = d->peers; p != NULL; p = p->next) {
		nn += p->role == DPEER_NODE && p->node_id[0] != '\0';
		ns += (p->role == DPEER_CM || p->role == DPEER_CS) &&
		    p->addr[0] != '\0';
	}
	for (j = d->jobs; j != NULL; j = j->next) {
		if (*sr->job_id != '\0' && strcmp(sr->job_id, j->id) != 0)
			continue;
		nj++;
		nr += (size_t)j->nranks;
		nc += (size_t)j->ncms + (size_t)j->ncss;
	}
	if (*sr->job_id != '\0' && nj == 0)
		snprintf(err, sizeof(err), "no job %.40s (finished, or never "
		    "submitted)", sr->job_id);
	if ((nn && ((ni = calloc(nn, sizeof(*ni))) == NULL ||
	    (nip = calloc(nn, sizeof(*nip))) == NULL)) ||
	    (ns && ((si = calloc(ns, sizeof(*si))) == NULL ||
	    (sip = calloc(ns, sizeof(*sip))) == NULL)) ||
	    (nj && ((ji = calloc(nj, sizeof(*ji))) == NULL ||
	    (jip = calloc(nj, sizeof(*jip))) == NULL ||
	    (wi = calloc(nj * DWARN_NKINDS, sizeof(*wi))) == NULL ||
	    (wip = calloc(nj * DWARN_NKINDS, sizeof(*wip))) == NULL)) ||
	    (nr && ((ri = calloc(nr, sizeof(*ri))) == NULL ||
	    (rip = calloc(nr, sizeof(*rip))) == NULL)) ||
	    (nc && (strs = calloc(nc, sizeof(*strs))) == NULL)) {
		log_errorx("dispatcher out of memory answering status");
		snprintf(err, sizeof(err), "dispatcher out of memory");
		nn = ns = nj = 0;
	}
	k = 0;
	for (p = d->peers; p != NULL && k < nn; p = p->next) {
		if (p->role != DPEER_NODE || p->node_id[0] == '\0')
			continue;
		mpiv__node_info__init(&ni[k]);
		ni[k].node_id = p->node_id;
		ni[k].name = p->name;
		ni[k].addr = (char *)conn_peer(p->c);
		ni[k].slots = p->slots;
		ni[k].used = p->used;
		ni[k].criu = p->criu;
		ni[k].no_listen = p->no_listen;
		ni[k].last_seen_s = now - p->last_seen;
		ni[k].state = (char *)(conn_is_closing(p->c) ? "dead" :
		    "alive");
		ni[k].dead_reason = (char *)"";
		nip[k] = &ni[k];
		k++;
	}
	rep.nodes = nip;
	rep.n_nodes = k;
	k = 0;
	for (p = d->peers; p != NULL && k < ns; p = p->next) {
		if ((p->role != DPEER_CM && p->role != DPEER_CS) ||
		    p->addr[0] == '\0')
			continue;
		mpiv__service_info__init(&si[k]);
		si[k].role = p->role == DPEER_CM ? MPIV__ROLE__ROLE_CM :
		    MPIV__ROLE__ROLE_CS;
		si[k].addr = p->addr;
		si[k].jobs = p->njobs;
		sip[k] = &si[k];
		k++;
	}
	rep.services = sip;
	rep.n_services = k;
	k = 0;
	nr = nc = 0;
	for (j = d->jobs; j != NULL && k < nj; j = j->next) {
		if (*sr->job_id != '\0' && strcmp(sr->job_id, j->id) != 0)
			continue;
		dstatus_job(j, now, &ji[k], rip + nr, ri + nr, strs + nc,
		    strs + nc + j->ncms, wip + k * DWARN_NKINDS,
		    wi + k * DWARN_NKINDS);
		nr += (size_t)j->nranks;
		nc += (size_t)j->ncms + (size_t)j->ncss;
		jip[k] = &ji[k];
		k++;
	}
	rep.jobs = jip;
	rep.n_jobs = k;
	rep.dispatcher = d->bound;
	rep.uptime_s = now - d->t_start;
	rep.error = err;
	(void)conn_send(client->c, MPIV__MSG_TYPE__MSG_STATUS_REPLY, &rep.base,
	    NULL, 0);
	free(ni);
	free(nip);
	free(si);
	free(sip);
	free(ji);
	free(jip);
	free(wi);
	free(wip);
	free(ri);
	free(rip);
	free(strs);
}
