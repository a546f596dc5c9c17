/*
 * net.c: the few socket operations every mpiv piece needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"

int
net_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
net_set_nodelay(int fd)
{
	int one = 1;
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int
net_split_hostport(const char *s, char *host, size_t hostlen, char *port,
    size_t portlen)
{
	const char *colon;
	size_t hl;

	if (s == NULL || *s == '\0')
		goto bad;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (rb == NULL || rb[1] != ':')
			goto bad;
		hl = (size_t)(rb - s - 1);
		if (hl >= hostlen)
			goto bad;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		colon = rb + 1;
	} else if ((colon = strrchr(s, ':')) == NULL) {
		/* bare port */
		if (snprintf(host, hostlen, "127.0.0.1") >= (int)hostlen)
			goto bad;
		colon = s - 1;
	} else {
		hl = (size_t)(colon - s);
		if (hl >= hostlen)
			goto bad;
		memcpy(host, s, hl);
		host[hl] = '\0';
		if (hl == 0 && snprintf(host, hostlen, "0.0.0.0") >= (int)hostlen)
			goto bad;
	}
	if (colon[1] == '\0' || strlen(colon + 1) >= portlen)
		goto bad;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			goto bad;
	strcpy(port, colon + 1);
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

static int
net_resolve(const char *hostport, int passive, struct addrinfo **res)
{
	char host[256], port[16];
	struct addrinfo hints;
	int r;

	if (net_split_hostport(hostport, host, sizeof(host), port, sizeof(port)) < 0)
		return -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	if ((r = getaddrinfo(host, port, &hints, res)) != 0) {
		errno = r == EAI_SYSTEM ? errno : EHOSTUNREACH;
		return -1;
	}
	return 0;
}

int
net_listen(const char *hostport, char *bound, size_t boundlen)
{
	struct addrinfo *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1, saved;

	if (net_resolve(hostport, 1, &res) < 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 1024) == 0)
			break;
		saved = errno;
		close(fd);
		errno = saved;
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return -1;
	net_set_nonblock(fd);
	if (bound != NULL && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		char h[NI_MAXHOST], p[NI_MAXSERV];
		if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p,
		    sizeof(p), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
			if (ss.ss_family == AF_INET6)
				snprintf(bound, boundlen, "[%s]:%s", h, p);
			else
				snprintf(bound, boundlen, "%s:%s", h, p);
		}
	}
	return fd;
}

int
net_dial(const char *hostport, int timeout_ms)
{
	struct addrinfo *res, *ai;
	int fd = -1, err = ECONNREFUSED;

	if (net_resolve(hostport, 0, &res) < 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int r, soerr = 0;
			socklen_t sl = sizeof(soerr);
			do
				r = poll(&p, 1, timeout_ms);
			while (r < 0 && errno == EINTR);
			if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR,
			    &soerr, &sl) == 0 && soerr == 0)
				break;
			err = r == 0 ? ETIMEDOUT : (soerr ? soerr : errno);
		} else
			err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		errno = err;
		return -1;
	}
	net_set_nodelay(fd);
	return fd;
}
