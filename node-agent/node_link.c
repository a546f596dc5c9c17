/*
 * node_link.c: the agent's end of the socket to its privileged helper
 * (helper.h). Requests go out as one packet each and never wait; the
 * answers (and the helper's PrivExit of a reaped rank) come back here
 * and go to whoever asked: node_task.c for spawns and exits, node_ckpt.c
 * for dumps and restores. A helper that is gone leaves nothing to run
 * ranks with: the agent ends (the helper killed the ranks already).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <ev.h>

#include "log.h"
#include "node_priv.h"

int
node_link_send_fds(struct node *n, uint16_t type, const ProtobufCMessage *m,
    const int *fds, int nfds)
{
	if (helper_send(n->link_fd, type, m, fds, nfds) < 0) {
		log_warn("node cannot reach its privileged helper");
		return -1;
	}
	return 0;
}

int
node_link_send(struct node *n, uint16_t type, const ProtobufCMessage *m)
{
	return node_link_send_fds(n, type, m, NULL, 0);
}

void
node_link_signal(struct node *n, pid_t pid, int sig, int how)
{
	Mpiv__PrivSignal s = MPIV__PRIV_SIGNAL__INIT;

	s.pid = pid;
	s.signal = sig;
	s.how = how;
	(void)node_link_send(n, MPIV__MSG_TYPE__MSG_PRIV_SIGNAL, &s.base);
}

static void
node_link_on_read(struct ev_loop *loop, ev_io *w, int revents)
{
	struct node *n = w->data;
	int fds[HELPER_MAX_FDS], nfds, rc;
	ProtobufCMessage *m;
	struct frame_hdr h;
	const char *err;

	for (;;) {
		if ((rc = helper_recv(n->link_fd, &h, &m, fds, &nfds,
		    &err)) == 0) {
			log_errorx("node the privileged helper is gone: "
			    "stopping");
			_exit(1);
		}
		if (rc < 0) {
			if (err != NULL)
				log_warnx("node bad packet from the helper: %s",
				    err);
			return;
		}
		switch (h.type) {
		case MPIV__MSG_TYPE__MSG_PRIV_SPAWNED:
			node_spawned(n, (Mpiv__PrivSpawned *)m, fds, nfds);
			break;
		case MPIV__MSG_TYPE__MSG_PRIV_EXIT:
			node_task_exit(n, ((Mpiv__PrivExit *)m)->pid,
			    ((Mpiv__PrivExit *)m)->status);
			break;
		case MPIV__MSG_TYPE__MSG_PRIV_DUMPED:
			node_ckpt_dumped(n, (Mpiv__PrivDumped *)m);
			break;
		case MPIV__MSG_TYPE__MSG_PRIV_RESTORED:
			node_restored(n, (Mpiv__PrivRestored *)m);
			break;
		case MPIV__MSG_TYPE__MSG_PRIV_KEYS:
			if (nfds == 1) {
				node_keys_reload(n, fds[0]);
				fds[0] = -1;
			}
			break;
		default:
			log_warnx("node unexpected %s from the helper",
			    frame_type_name(h.type));
			break;
		}
		for (int i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		frame_free_meta(m);
	}
}

void
node_link_start(struct node *n, int fd)
{
	n->link_fd = fd;
	ev_io_init(&n->link_w, node_link_on_read, fd, EV_READ);
	n->link_w.data = n;
	ev_io_start(n->loop, &n->link_w);
}
