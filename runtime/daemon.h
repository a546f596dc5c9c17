/*
 * daemon: what every mpiv server does before its loop runs.
 */
#ifndef MPIV_DAEMON_H
#define MPIV_DAEMON_H

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

#endif
