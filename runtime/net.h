/*
 * TCP helpers: address parsing, listening, dialling. IPv4 and IPv6.
 */
#ifndef MPIV_NET_H
#define MPIV_NET_H

#include <stddef.h>

/* Splits "host:port" / "[v6]:port" / ":port" / "port". 0 or -1 (EINVAL). */
int net_split_hostport(const char *s, char *host, size_t hostlen, char *port,
    size_t portlen);

/*
 * Listens on "host:port" (port 0 picks one). Non-blocking, SO_REUSEADDR.
 * Writes the actual "host:port" into bound (if not NULL). Returns fd or -1.
 */
int net_listen(const char *hostport, char *bound, size_t boundlen);

/*
 * Connects to "host:port" within timeout_ms (<0 forever). Returns a
 * non-blocking, TCP_NODELAY socket fd, or -1 with errno.
 */
int net_dial(const char *hostport, int timeout_ms);

int net_set_nonblock(int fd);
int net_set_nodelay(int fd);

#endif
