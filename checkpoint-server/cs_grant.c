/*
 * cs_grant.c: which node may move which images. With a secret, a node
 * proves in its Hello the image key of one incarnation of one rank of
 * one job (auth_image_key, derived from the cluster secret S, which the
 * dispatcher gives only to the node that runs or restores that
 * incarnation: Launch.image_key), and the connection may then upload
 * and download the images of that rank of that job only, while that
 * incarnation is the current one. The current incarnation of a rank is
 * what the dispatcher said last (ImageGrant, sent as it launches an
 * incarnation, in order), raised by what a node proved: a proven key of
 * incarnation i shows the dispatcher launched i, so a grant that is
 * late changes nothing. The dispatcher's word replaces, so that a job
 * id used again (a dispatcher started afresh numbers jobs from 1) starts
 * over at its incarnation 1. A node holding only K_node, or the key of
 * another rank, job or an older incarnation, moves nothing.
 *
 * The table is in memory, bounded (CS_MAX_GRANTS, the oldest entry goes
 * first): after a restart of the CS, or past the bound, it learns the
 * current incarnation again from the next Hello or grant. A job's
 * entries go when it ends (JobEnd), and those of every job the
 * dispatcher does not run when it says which it runs (CsJobs), so that
 * a long-lived CS holds the live jobs' ranks, not every rank it ever
 * served (each lookup walks the table).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_priv.h"
#include "log.h"

#define CS_MAX_GRANTS	65536u

struct cs_grant {
	char job[CS_MAX_NAME + 1];
	int32_t rank;
	uint32_t inc;
	uint64_t used;		/* cs_grants.tick when last raised */
};

struct cs_grants {
	struct cs_grant *v;
	size_t n, cap;
	uint64_t tick;
};

static struct cs_grant *
cs_grant_find(struct cs *cs, const char *job, int32_t rank)
{
	struct cs_grants *g = cs->grants;

	if (g == NULL)
		return NULL;
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].rank == rank && strcmp(g->v[i].job, job) == 0)
			return &g->v[i];
	return NULL;
}

uint32_t
cs_grant_current(struct cs *cs, const char *job, int32_t rank)
{
	struct cs_grant *e = cs_grant_find(cs, job, rank);

	return e != NULL ? e->inc : 0;
}

/* Sets (exact) or raises the current incarnation of (job, rank). */
static void
cs_grant_put(struct cs *cs, const char *job, int32_t rank, uint32_t inc,
    bool exact)
{
	struct cs_grants *g = cs->grants;
	struct cs_grant *e;

	if (!cs_store_name_ok(job) || strlen(job) > CS_MAX_NAME || rank < 0 ||
	    rank > CS_MAX_RANK)
		return;
	if (g == NULL && (g = cs->grants = calloc(1, sizeof(*g))) == NULL)
		return;
	g->tick++;
	if ((e = cs_grant_find(cs, job, rank)) != NULL) {
		if (inc > e->inc || exact) {
			e->inc = inc;
			e->used = g->tick;
		}
		return;
	}
	if (g->n == g->cap && g->cap < CS_MAX_GRANTS) {
		size_t cap = g->cap == 0 ? 64 : 2 * g->cap;
		struct cs_grant *v = realloc(g->v, cap * sizeof(*v));

		if (v != NULL) {
			g->v = v;
			g->cap = cap;
		}
	}
	if (g->n == g->cap) {
		size_t old = 0;

		if (g->n == 0)
			return;
		for (size_t i = 1; i < g->n; i++)
			if (g->v[i].used < g->v[old].used)
				old = i;
		e = &g->v[old];
	} else {
		e = &g->v[g->n++];
	}
	snprintf(e->job, sizeof(e->job), "%s", job);
	e->rank = rank;
	e->inc = inc;
	e->used = g->tick;
}

void
cs_grant_raise(struct cs *cs, const char *job, int32_t rank, uint32_t inc)
{
	cs_grant_put(cs, job, rank, inc, false);
}

/* Drops the entries for which drop(job, arg) is true. */
static size_t
cs_grant_drop_if(struct cs *cs, bool (*drop)(const char *, void *),
    void *arg)
{
	struct cs_grants *g = cs->grants;
	size_t i = 0, n = 0;

	if (g == NULL)
		return 0;
	while (i < g->n) {
		if (drop(g->v[i].job, arg)) {
			g->v[i] = g->v[--g->n];
			n++;
		} else {
			i++;
		}
	}
	return n;
}

static bool
cs_grant_is_job(const char *job, void *arg)
{
	return strcmp(job, arg) == 0;
}

size_t
cs_grant_forget(struct cs *cs, const char *job)
{
	return cs_grant_drop_if(cs, cs_grant_is_job, (void *)job);
}

struct cs_grant_live {
	char **live;
	size_t n;
};

static bool
cs_grant_not_live(const char *job, void *arg)
{
	const struct cs_grant_live *l = arg;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(job, l->live[i]) == 0)
			return false;
	return true;
}

size_t
cs_grant_keep(struct cs *cs, char **live, size_t n)
{
	struct cs_grant_live l = { live, n };

	return cs_grant_drop_if(cs, cs_grant_not_live, &l);
}

void
cs_grant_free(struct cs *cs)
{
	if (cs->grants != NULL)
		free(cs->grants->v);
	free(cs->grants);
	cs->grants = NULL;
}

void
cs_grant_from_dispatcher(struct cs *cs, const Mpiv__ImageGrant *ig)
{
	log_debug("cs grant job=%s rank=%" PRId32 " incarnation=%" PRIu32,
	    ig->job_id, ig->rank, ig->incarnation);
	cs_grant_put(cs, ig->job_id, ig->rank, ig->incarnation, true);
}

/*
 * The key a peer must prove (auth_key_fn): a node naming a job proves
 * the image key of the job, rank and incarnation its Hello names; any
 * other node K_node (it may connect, but moves no image); the other
 * roles S.
 */
int
cs_grant_auth_key(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why)
{
	struct cs *cs = arg;
	uint8_t k[AUTH_HASH_LEN];

	if (h->role != MPIV__ROLE__ROLE_NODE || *h->job_id == '\0' ||
	    !cs->keys.cluster)
		return auth_key_service_nodes(&cs->keys, h, key, why);
	if (!cs_store_name_ok(h->job_id) || strlen(h->job_id) > CS_MAX_NAME ||
	    h->rank < 0 || h->rank > CS_MAX_RANK) {
		*why = "bad job id or rank";
		return -1;
	}
	auth_image_key(&cs->keys.secret, h->job_id, h->rank, h->incarnation,
	    k);
	auth_key_set(key, k, sizeof(k));
	auth_wipe(k, sizeof(k));
	return 0;
}

/*
 * The image key cs_grant_auth_key picks, derived from another cluster
 * secret s (auth_server.derive): while the secret rotates, a node holding
 * an image key made from a secret still accepted gets in. out->len 0
 * when the Hello proves no image key.
 */
void
cs_grant_derive(void *arg, const struct auth_key *s, const Mpiv__Hello *h,
    struct auth_key *out)
{
	struct cs *cs = arg;
	uint8_t k[AUTH_HASH_LEN];

	out->len = 0;
	if (h->role != MPIV__ROLE__ROLE_NODE || *h->job_id == '\0' ||
	    !cs->keys.cluster || !cs_store_name_ok(h->job_id) ||
	    strlen(h->job_id) > CS_MAX_NAME || h->rank < 0 ||
	    h->rank > CS_MAX_RANK)
		return;
	auth_image_key(s, h->job_id, h->rank, h->incarnation, k);
	auth_key_set(out, k, sizeof(k));
	auth_wipe(k, sizeof(k));
}

/*
 * May a connection proven for (pjob, prank, pinc) (pjob NULL: a node
 * key, nothing proven) move an image of (job, rank)? Without a secret,
 * anyone may. true, or false with why.
 */
bool
cs_grant_allows(struct cs *cs, const char *pjob, int32_t prank,
    uint32_t pinc, const char *job, int32_t rank, char *why, size_t whylen)
{
	uint32_t cur;

	if (!cs->keys.enabled)
		return true;
	if (pjob == NULL) {
		snprintf(why, whylen, "not allowed: this connection proved "
		    "no incarnation of job %.64s rank %" PRId32 " (a node "
		    "moves a rank's images with the image key the "
		    "dispatcher gave it for that rank)", job, rank);
		return false;
	}
	if (strcmp(pjob, job) != 0 || prank != rank) {
		snprintf(why, whylen, "not allowed: this connection is for "
		    "job %.64s rank %" PRId32 ", not job %.64s rank %" PRId32,
		    pjob, prank, job, rank);
		return false;
	}
	cur = cs_grant_current(cs, job, rank);
	if (pinc < cur) {
		snprintf(why, whylen, "stale incarnation %" PRIu32 " of job "
		    "%.64s rank %" PRId32 " (current is %" PRIu32 ")", pinc,
		    job, rank, cur);
		return false;
	}
	return true;
}
