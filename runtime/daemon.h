/*
 * daemon: what every mpiv server does before its loop runs.
 */
#ifndef MPIV_DAEMON_H
#define MPIV_DAEMON_H

#include <stdbool.h>
#include <stddef.h>

#include <ev.h>

/*
 * Listens on addr (port 0 picks one), creates the event loop, and prints
 * "listening on HOST:PORT" on stdout (flushed: launchers parse it). `who`
 * names the daemon in logs. 0, or -1 with the reason logged and nothing
 * left open.
 */
int daemon_listen(const char *who, const char *addr, char *bound,
    size_t boundlen, int *lfd, struct ev_loop **loop);

struct auth_keys;
/*
 * Loads the keys of `mpiv WHO` from --secret-file (path) or
 * $MPIV_SECRET_FILE. A node key file is taken only with node_key_ok (node
 * agents). With no secret at all, logs the one warning that connections
 * are not authenticated. 0, or -1 once "mpiv WHO: reason" is on stderr.
 */
int daemon_auth_load(const char *who, const char *path, bool node_key_ok,
    struct auth_keys *k);

#endif
