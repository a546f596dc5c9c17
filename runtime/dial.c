/*
 * dial.c: a non-blocking connect driven by the loop (dial.h), so that a
 * peer that does not answer never stalls a daemon's other work (a CS's
 * uploads, a CM's ranks). The callback always fires from the loop (a
 * connect that fails at once is reported by a zero timer), never inside
 * dial_start. Only the first address the name resolves to is tried;
 * names are resolved blockingly (numeric addresses cost nothing).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dial.h"
#include "log.h"
#include "net.h"

struct dial {
	struct ev_loop *loop;
	int fd;
	int err;
	dial_cb *cb;
	void *arg;
	ev_io io_w;
	ev_timer tmo_w;
};

static void
dial_finish(struct dial *d, int fd, int err)
{
	dial_cb *cb = d->cb;
	void *arg = d->arg;

	ev_io_stop(d->loop, &d->io_w);
	ev_timer_stop(d->loop, &d->tmo_w);
	free(d);
	cb(arg, fd, err);
}

static void
dial_on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct dial *d = w->data;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (getsockopt(d->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		soerr = errno;
	if (soerr != 0) {
		close(d->fd);
		dial_finish(d, -1, soerr);
		return;
	}
	(void)net_set_nodelay(d->fd);
	dial_finish(d, d->fd, 0);
}

static void
dial_on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct dial *d = w->data;

	if (d->fd >= 0) {
		close(d->fd);
		d->err = ETIMEDOUT;
	}
	dial_finish(d, -1, d->err);
}

/* Resolves and starts connecting; returns the fd or -1 with errno. */
static int
dial_connect(const char *addr)
{
	char host[256], port[16];
	struct addrinfo hints, *res;
	int fd, r, saved;

	if (net_split_hostport(addr, host, sizeof(host), port,
	    sizeof(port)) < 0)
		return -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((r = getaddrinfo(host, port, &hints, &res)) != 0) {
		errno = r == EAI_SYSTEM ? errno : EHOSTUNREACH;
		return -1;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0 &&
	    errno != EINPROGRESS) {
		saved = errno;
		close(fd);
		errno = saved;
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

struct dial *
dial_start(struct ev_loop *loop, const char *addr, double timeout,
    dial_cb *cb, void *arg)
{
	struct dial *d;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->loop = loop;
	d->cb = cb;
	d->arg = arg;
	d->fd = dial_connect(addr);
	d->err = d->fd < 0 ? errno : 0;
	ev_io_init(&d->io_w, dial_on_io, d->fd >= 0 ? d->fd : 0, EV_WRITE);
	d->io_w.data = d;
	ev_timer_init(&d->tmo_w, dial_on_timer, d->fd >= 0 ? timeout : 0.,
	    0.);
	d->tmo_w.data = d;
	if (d->fd >= 0)
		ev_io_start(loop, &d->io_w);
	ev_timer_start(loop, &d->tmo_w);
	return d;
}

/* Stops a dial in progress; its callback never fires. */
void
dial_cancel(struct dial *d)
{
	if (d == NULL)
		return;
	ev_io_stop(d->loop, &d->io_w);
	ev_timer_stop(d->loop, &d->tmo_w);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}
