/*
 * conn_gate.c: admission (conn.h, conn_gate_*): the connections a daemon
 * holds, in total, not yet authenticated, and not yet authenticated per
 * peer address, each capped, refusals logged at a bounded rate.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn_priv.h"
#include "log.h"
#include "mono.h"

/* ---------------- admission (conn_gate) ---------------- */

#define GATE_BUCKETS 1024

/* The caps, each with its own log rate. */
enum gate_cap { GATE_CONNS, GATE_UNAUTH, GATE_PER_HOST, GATE_NCAPS };
static const char *const gate_cap_name[GATE_NCAPS] = {
	"max-conns", "max-unauth", "max-unauth-per-host",
};

/* One peer address with conns not yet authenticated. */
struct gate_host {
	struct gate_host *next;
	uint8_t addr[16];	/* IPv4 (also when v4-mapped) or IPv6 */
	uint8_t len;		/* 4, 16, or 0 for a non-IP socket */
	long unauth;
};

struct conn_gate {
	char who[32];
	struct conn_limits lim;
	long conns;		/* every conn counted here */
	long unauth;		/* of them, not yet authenticated */
	unsigned long refused;	/* since the gate was made */
	/* per cap: refused since its last log line, and when that was
	   (CLOCK_MONOTONIC seconds, 0: never) */
	unsigned long unlogged[GATE_NCAPS];
	double last_log[GATE_NCAPS];
	struct gate_host *hosts[GATE_BUCKETS];
};

/*
 * The soft limit on open files must fit max_conns (plus the daemon's own
 * files), or accept() fails with EMFILE before the cap says anything.
 */
static void
gate_fit_nofile(const char *who, long max_conns)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max_conns + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ?
	    rl.rlim_max : want;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want)
		log_warnx("%s open files limit=%llu is below max_conns=%ld "
		    "plus 256: accept fails before the cap is reached "
		    "(raise ulimit -n)", who, (unsigned long long)rl.rlim_cur,
		    max_conns);
}

struct conn_gate *
conn_gate_new(const char *who, const struct conn_limits *l)
{
	struct conn_gate *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	snprintf(g->who, sizeof(g->who), "%s", who);
	g->lim = *l;
	gate_fit_nofile(who, l->max_conns);
	return g;
}

/*
 * Frees g at the daemon's end. Connections point at their gate until
 * they are freed: with some still counted it is left alone (said), so
 * that none of them can touch freed memory.
 */
void
conn_gate_free(struct conn_gate *g)
{
	if (g == NULL)
		return;
	if (g->conns != 0) {
		log_warnx("%s %ld connections outlive their gate: not freed",
		    g->who, g->conns);
		return;
	}
	for (size_t i = 0; i < GATE_BUCKETS; i++) {
		struct gate_host *h, *next;

		for (h = g->hosts[i]; h != NULL; h = next) {
			next = h->next;
			free(h);
		}
	}
	free(g);
}

void
conn_gate_counts(const struct conn_gate *g, long *conns, long *unauth,
    unsigned long *refused)
{
	*conns = g->conns;
	*unauth = g->unauth;
	*refused = g->refused;
}

/* The peer's address of fd as a host key. 0, or -1 (peer gone). */
static int
gate_key(int fd, struct gate_host *k)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl = sizeof(ss);

	memset(k, 0, sizeof(*k));
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	if (ss.ss_family == AF_INET) {
		memcpy(k->addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		k->len = 4;
	} else if (ss.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(k->addr, s6->sin6_addr.s6_addr + 12, 4);
		k->len = 4;
	} else if (ss.ss_family == AF_INET6) {
		memcpy(k->addr, s6->sin6_addr.s6_addr, 16);
		k->len = 16;
	}
	return 0;
}

static unsigned
gate_hash(const struct gate_host *k)
{
	unsigned h = 2166136261u;	/* FNV-1a */

	for (unsigned i = 0; i < k->len; i++)
		h = (h ^ k->addr[i]) * 16777619u;
	return h % GATE_BUCKETS;
}

/* The entry of k's address, created when create; NULL if none. */
static struct gate_host *
gate_host_find(struct conn_gate *g, const struct gate_host *k, bool create)
{
	struct gate_host *h, **bp = &g->hosts[gate_hash(k)];

	for (h = *bp; h != NULL; h = h->next)
		if (h->len == k->len && memcmp(h->addr, k->addr, k->len) == 0)
			return h;
	if (!create || (h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	memcpy(h->addr, k->addr, sizeof(h->addr));
	h->len = k->len;
	h->next = *bp;
	*bp = h;
	return h;
}

static void
gate_host_drop(struct conn_gate *g, struct gate_host *h)
{
	struct gate_host **bp = &g->hosts[gate_hash(h)];

	for (; *bp != NULL; bp = &(*bp)->next) {
		if (*bp == h) {
			*bp = h->next;
			free(h);
			return;
		}
	}
}

static void
gate_host_str(const struct gate_host *k, char *out, size_t n)
{
	if (k->len == 0 || inet_ntop(k->len == 4 ? AF_INET : AF_INET6,
	    k->addr, out, (socklen_t)n) == NULL)
		snprintf(out, n, "local");
}

static long
gate_cap_max(const struct conn_gate *g, enum gate_cap cap)
{
	switch (cap) {
	case GATE_CONNS:
		return g->lim.max_conns;
	case GATE_UNAUTH:
		return g->lim.max_unauth;
	default:
		return g->lim.max_unauth_per_host;
	}
}

/*
 * One refusal by cap: a log line now if that cap logged none in the last
 * CONN_GATE_LOG_S seconds, else only counted (its next line says how
 * many were refused, this one included).
 */
static void
gate_refused(struct conn_gate *g, const struct gate_host *k,
    enum gate_cap cap)
{
	char host[INET6_ADDRSTRLEN];
	double now = mono_s();

	g->refused++;
	g->unlogged[cap]++;
	if (g->last_log[cap] != 0 && now - g->last_log[cap] < CONN_GATE_LOG_S)
		return;
	gate_host_str(k, host, sizeof(host));
	log_warnx("%s refused connection peer=%s limit=%s max=%ld conns=%ld "
	    "unauth=%ld refused=%lu (at most one such line per %d s)", g->who,
	    host, gate_cap_name[cap], gate_cap_max(g, cap), g->conns,
	    g->unauth, g->unlogged[cap], CONN_GATE_LOG_S);
	g->last_log[cap] = now;
	g->unlogged[cap] = 0;
}

/* Refusals counted but not logged yet, said once their time came. */
static void
gate_log_tail(struct conn_gate *g)
{
	double now = 0;

	for (int i = 0; i < GATE_NCAPS; i++) {
		if (g->unlogged[i] == 0)
			continue;
		if (now == 0)
			now = mono_s();
		if (now - g->last_log[i] < CONN_GATE_LOG_S)
			continue;
		log_warnx("%s refused connection limit=%s max=%ld refused=%lu "
		    "(since the last such line)", g->who, gate_cap_name[i],
		    gate_cap_max(g, (enum gate_cap)i), g->unlogged[i]);
		g->unlogged[i] = 0;
		g->last_log[i] = now;
	}
}

int
conn_gate_admit(struct conn_gate *g, int fd)
{
	struct gate_host k, *h;
	enum gate_cap cap = GATE_NCAPS;

	if (gate_key(fd, &k) < 0) {
		close(fd);	/* gone already: nothing to serve */
		return -1;
	}
	h = gate_host_find(g, &k, false);
	if (g->conns >= g->lim.max_conns)
		cap = GATE_CONNS;
	else if (g->unauth >= g->lim.max_unauth)
		cap = GATE_UNAUTH;
	else if (h != NULL && h->unauth >= g->lim.max_unauth_per_host)
		cap = GATE_PER_HOST;
	if (cap != GATE_NCAPS) {
		close(fd);
		gate_refused(g, &k, cap);
		return -1;
	}
	/* A flood that ended: the refusals not yet said, once, late. */
	gate_log_tail(g);
	return 0;
}

/* c (accepted, not authenticated) counts against g from now on. */
void
conn_gate_join(struct conn_gate *g, struct conn *c)
{
	struct gate_host k;

	c->gate = g;
	c->gate_unauth = true;
	g->conns++;
	g->unauth++;
	if (gate_key(c->fd, &k) == 0 &&
	    (c->ghost = gate_host_find(g, &k, true)) != NULL)
		c->ghost->unauth++;
}

/* c proved itself: it no longer counts as unauthenticated. */
void
conn_gate_authed(struct conn *c)
{
	struct conn_gate *g = c->gate;

	if (g == NULL || !c->gate_unauth)
		return;
	c->gate_unauth = false;
	g->unauth--;
	if (c->ghost != NULL && --c->ghost->unauth == 0)
		gate_host_drop(g, c->ghost);
	c->ghost = NULL;
}

void
conn_gate_leave(struct conn *c)
{
	if (c->gate == NULL)
		return;
	conn_gate_authed(c);
	c->gate->conns--;
	c->gate = NULL;
}
