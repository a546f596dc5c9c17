/*
 * disp_node.c: the node pool. Every NodeRegister gets a fresh identity
 * (node_id "NAME#N") and a NodeWelcome that tells the agent how long
 * the dispatcher's silence means it was given up. A node is declared
 * dead once, whatever the cause (heartbeats stopped, connection lost,
 * superseded by its own new registration, killed on request): its ranks
 * are relaunched elsewhere by djob_peer_lost and its id is remembered,
 * so that the agent, when it comes back, is told it had been declared
 * dead and joins as a fresh node (its stale ranks were killed by the
 * agent itself when it lost the dispatcher, and are fenced by the CMs
 * in any case: their incarnation is superseded).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

/* The reason node_id was declared dead, or NULL. */
static const char *
dnode_dead_reason(const struct disp *d, const char *node_id)
{
	unsigned n = d->ndead < DISP_DEAD_KEEP ? d->ndead : DISP_DEAD_KEEP;

	if (*node_id == '\0')
		return NULL;
	for (unsigned i = 0; i < n; i++)
		if (strcmp(d->dead[i].node_id, node_id) == 0)
			return d->dead[i].reason;
	return NULL;
}

bool
dnode_is_dead_id(const struct disp *d, const char *node_id)
{
	return dnode_dead_reason(d, node_id) != NULL;
}

/*
 * Declares a registered node dead (once): remembers its id, relaunches
 * its ranks elsewhere, and closes its connection if still open (after
 * flushing what was queued, with flush). dpeer_on_close frees p later.
 */
static void
dnode_dead(struct dpeer *p, const char *reason, bool flush)
{
	struct disp *d = p->d;
	struct ddead *e;

	if (p->role != DPEER_NODE)
		return;
	if (p->node_id[0] != '\0') {
		e = &d->dead[d->ndead++ % DISP_DEAD_KEEP];
		snprintf(e->node_id, sizeof(e->node_id), "%s", p->node_id);
		snprintf(e->reason, sizeof(e->reason), "%s", reason);
	}
	log_warnx("dispatcher node declared dead node=%s name=%s reason=\"%s\" "
	    "ranks=%d", p->node_id[0] ? p->node_id : "-", p->name, reason,
	    p->used);
	/* Closing first: its ranks must not be relaunched onto it. */
	if (!conn_is_closing(p->c))
		conn_close(p->c, reason, flush);
	djob_peer_lost(p);
	dpeer_set_role(p, DPEER_DEAD);
}

void
dnode_declare_dead(struct dpeer *p, const char *reason)
{
	dnode_dead(p, reason, false);
}

/*
 * NodeRegister: the node's slots and a new identity. An agent that
 * registered before (previous_id) either was declared dead (it is told
 * so) or is still registered on a connection it has given up on (that
 * registration dies now: the agent killed its ranks before redialling).
 */
void
dnode_register(struct dpeer *p, const Mpiv__NodeRegister *nr)
{
	struct disp *d = p->d;
	Mpiv__NodeWelcome w = MPIV__NODE_WELCOME__INIT;
	const char *dead = dnode_dead_reason(d, nr->previous_id);
	char why[160];

	if (p->node_id[0] != '\0') {
		/* Registered already on this connection: slots may change. */
		p->slots = nr->slots;
		p->criu = nr->criu;
		p->no_listen = nr->no_listen;
		djob_schedule(d);
		return;
	}
	if (*nr->name != '\0')
		snprintf(p->name, sizeof(p->name), "%s", nr->name);
	if (dead == NULL && *nr->previous_id != '\0') {
		struct dpeer *old;

		for (old = d->peers; old != NULL; old = old->next)
			if (old != p && old->role == DPEER_NODE &&
			    strcmp(old->node_id, nr->previous_id) == 0)
				break;
		if (old != NULL) {
			snprintf(why, sizeof(why), "superseded by a new "
			    "registration of %s", p->name);
			dnode_declare_dead(old, why);
			dead = dnode_dead_reason(d, nr->previous_id);
		}
	}
	snprintf(p->node_id, sizeof(p->node_id), "%.60s#%u", p->name,
	    ++d->next_node);
	p->slots = nr->slots;
	p->criu = nr->criu;
	p->no_listen = nr->no_listen;
	p->last_seen = ev_now(d->loop);
	if (dead != NULL)
		log_warnx("dispatcher node came back after being declared dead "
		    "node=%s previous=%s dead_reason=\"%s\"; its old ranks "
		    "are gone, it joins as a fresh node", p->node_id,
		    nr->previous_id, dead);
	log_info("dispatcher node registered node=%s name=%s slots=%d criu=%d "
	    "listen=%d peer=%s", p->node_id, p->name, p->slots, nr->criu,
	    !nr->no_listen, conn_peer(p->c));
	w.node_id = p->node_id;
	w.heartbeat_timeout = d->hb_timeout;
	w.was_dead = dead != NULL;
	w.dead_reason = (char *)(dead != NULL ? dead : "");
	(void)conn_send(p->c, MPIV__MSG_TYPE__MSG_NODE_WELCOME, &w.base, NULL,
	    0);
	djob_schedule(d);
}

/* A live registered node by node_id, or by name (the newest one). */
struct dpeer *
dnode_find(struct disp *d, const char *name)
{
	struct dpeer *p, *best = NULL;

	for (p = d->peers; p != NULL; p = p->next) {
		if (p->role != DPEER_NODE || p->node_id[0] == '\0' ||
		    conn_is_closing(p->c))
			continue;
		if (strcmp(p->node_id, name) == 0)
			return p;
		/* Peers are listed newest first: keep the first match. */
		if (best == NULL && strcmp(p->name, name) == 0)
			best = p;
	}
	return best;
}

/*
 * Tells the agent to die as a crashed machine would (fault injection):
 * it SIGKILLs its ranks and itself. The node is declared dead at once,
 * without waiting for the heartbeat timeout: the agent will not answer.
 */
void
dnode_kill(struct dpeer *node, const char *reason)
{
	Mpiv__NodeKill nk = MPIV__NODE_KILL__INIT;
	char why[160];

	nk.name = (char *)"";
	nk.reason = (char *)reason;
	(void)conn_send(node->c, MPIV__MSG_TYPE__MSG_NODE_KILL, &nk.base, NULL,
	    0);
	snprintf(why, sizeof(why), "killed: %s", reason);
	dnode_dead(node, why, true);	/* the NodeKill is flushed first */
}

/* `mpiv kill-node`: JobStatus{ok|error} to the client. */
void
dnode_client_kill(struct dpeer *client, const Mpiv__NodeKill *nk)
{
	Mpiv__JobStatus st = MPIV__JOB_STATUS__INIT;
	struct dpeer *node = dnode_find(client->d, nk->name);
	char msg[200];

	st.job_id = (char *)"";
	if (node == NULL) {
		snprintf(msg, sizeof(msg), "no live node named %s", nk->name);
		st.state = (char *)"error";
	} else {
		snprintf(msg, sizeof(msg), "node %s (%s) killed, %d ranks to "
		    "relaunch", node->node_id, node->name, node->used);
		st.state = (char *)"ok";
		log_info("dispatcher kill-node node=%s by=%s", node->node_id,
		    conn_peer(client->c));
		dnode_kill(node, "mpiv kill-node");
	}
	st.message = msg;
	(void)conn_send(client->c, MPIV__MSG_TYPE__MSG_JOB_STATUS, &st.base,
	    NULL, 0);
}
