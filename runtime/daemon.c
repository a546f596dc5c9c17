/*
 * daemon.c: the listening socket and event loop of an mpiv server.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "auth_rotate.h"
#include "conn.h"
#include "daemon.h"
#include "log.h"
#include "net.h"
#include "seal.h"

int
daemon_listen(const char *who, const char *addr, char *bound,
    size_t boundlen, int *lfd, struct ev_loop **loop)
{
	if ((*lfd = net_listen(addr, bound, boundlen)) < 0) {
		log_warn("%s cannot listen on %s", who, addr);
		return -1;
	}
	if ((*loop = ev_loop_new(EVFLAG_AUTO)) == NULL) {
		log_errorx("%s cannot create an event loop", who);
		close(*lfd);
		*lfd = -1;
		return -1;
	}
	printf("listening on %s\n", bound);
	fflush(stdout);
	return 0;
}

int
daemon_auth_load(const char *who, const char *path, bool node_key_ok,
    struct auth_keys *k)
{
	char err[512];
	int rc;

	if (node_key_ok)
		rc = auth_load(k, path, err, sizeof(err));
	else
		rc = auth_load_cluster(k, path, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "mpiv %s: %s\n", who, err);
		return -1;
	}
	if (!k->enabled)
		log_warnx("%s: no --secret-file: connections are not "
		    "authenticated", who);
	if (seal_init() < 0) {
		fprintf(stderr, "mpiv %s: libsodium does not initialise\n",
		    who);
		return -1;
	}
	if (seal_plaintext())
		log_warnx("%s: --insecure-plaintext: connections are NOT "
		    "encrypted", who);
	return 0;
}

int
daemon_auth_reload(struct daemon_reload *r, int fd)
{
	struct auth_keys nk;
	const char *path = r->path != NULL ? r->path :
	    getenv(AUTH_ENV_SECRET);
	char err[512], what[1024];
	int rc;

	if (!r->keys->enabled) {
		log_warnx("%s reload: started without a secret file: a reload "
		    "cannot turn authentication on (restart with "
		    "--secret-file)", r->who);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd >= 0)
		rc = auth_load_fd(&nk, fd, path, err, sizeof(err));
	else
		rc = auth_load(&nk, path, err, sizeof(err));
	if (rc == 0 && nk.enabled && !nk.cluster && !r->node_key_ok) {
		snprintf(err, sizeof(err), "%s holds a node key: only node "
		    "agents take one, this needs the cluster secret", path);
		rc = -1;
	}
	if (rc == 0 && !nk.enabled) {
		snprintf(err, sizeof(err), "no secret file any more "
		    "(MPIV_SECRET_FILE unset)");
		rc = -1;
	}
	if (rc < 0) {
		log_warnx("%s reload failed, keeping the previous keys: %s",
		    r->who, err);
		auth_wipe(&nk, sizeof(nk));
		return -1;
	}
	*r->keys = nk;
	auth_wipe(&nk, sizeof(nk));
	auth_keys_describe(r->keys, (int64_t)time(NULL), what, sizeof(what));
	log_info("%s reloaded secret file %s: %s", r->who, path, what);
	return 0;
}

static void
daemon_on_hup(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)daemon_auth_reload(w->data, -1);
}

void
daemon_reload_start(struct ev_loop *loop, struct daemon_reload *r,
    const char *who, const char *path, bool node_key_ok,
    struct auth_keys *k)
{
	char what[1024];

	r->who = who;
	r->path = path;
	r->node_key_ok = node_key_ok;
	r->keys = k;
	ev_signal_init(&r->w, daemon_on_hup, SIGHUP);
	r->w.data = r;
	ev_signal_start(loop, &r->w);
	ev_unref(loop);		/* a daemon stops when its work is done */
	if (k->enabled && k->naccept > 0) {
		auth_keys_describe(k, (int64_t)time(NULL), what, sizeof(what));
		log_info("%s keys: %s", who, what);
	}
}

int
daemon_parse_bytes(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	if (*s < '0' || *s > '9')	/* strtoull takes "-1" as 2^64-1 */
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	if (*end != '\0') {
		if ((u = strchr(units, *end & ~0x20)) == NULL || end[1] != '\0')
			return -1;
		shift = (int)(u - units + 1) * 10;
	}
	if (v == 0 || v > (ULLONG_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int
daemon_parse_long(const char *who, const char *name, const char *s, long lo,
    long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "mpiv %s: bad --%s \"%s\" (%ld to %ld)\n", who,
		    name, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

#define DAEMON_MAX_CONNS_HI 1000000L

void
daemon_conn_opt(int ch, const char *arg, struct daemon_conn_opts *o)
{
	if (ch == DAEMON_CONN_OPT_FIRST)
		o->max_conns = arg;
	else if (ch == DAEMON_CONN_OPT_FIRST + 1)
		o->max_unauth = arg;
	else if (ch == DAEMON_CONN_OPT_FIRST + 2)
		o->per_host = arg;
	else if (ch == DAEMON_OPT_INSECURE)
		seal_set_plaintext(true);
}

int
daemon_conn_limits(const char *who, const struct daemon_conn_opts *o,
    struct conn_limits *l)
{
	const char *max_conns = o->max_conns, *max_unauth = o->max_unauth;
	const char *per_host = o->per_host;
	const struct {
		const char *name, *env, *given;
		long *out, def;
	} opt[] = {
		{ "max-conns", "MPIV_MAX_CONNS", max_conns, &l->max_conns,
		    CONN_DEFAULT_MAX_CONNS },
		{ "max-unauth", "MPIV_MAX_UNAUTH", max_unauth, &l->max_unauth,
		    CONN_DEFAULT_MAX_UNAUTH },
		{ "max-unauth-per-host", "MPIV_MAX_UNAUTH_PER_HOST", per_host,
		    &l->max_unauth_per_host, CONN_DEFAULT_MAX_UNAUTH_PER_HOST },
	};
	const char *v;

	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		*opt[i].out = opt[i].def;
		if ((v = opt[i].given) == NULL)
			v = getenv(opt[i].env);
		if (v != NULL && daemon_parse_long(who, opt[i].name, v, 1,
		    DAEMON_MAX_CONNS_HI, opt[i].out) < 0)
			return -1;
	}
	return 0;
}
