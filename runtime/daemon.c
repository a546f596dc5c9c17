/*
 * daemon.c: the listening socket and event loop of an mpiv server.
 */
#include <stdio.h>
#include <unistd.h>

#include "auth.h"
#include "daemon.h"
#include "log.h"
#include "net.h"

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
	return 0;
}
