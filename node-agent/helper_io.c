/*
 * helper_io.c: the packets between the node agent and its privileged
 * helper (helper.h): one frame (runtime/frame.h, a Priv* message) per
 * SOCK_SEQPACKET packet, descriptors alongside (SCM_RIGHTS). The reader
 * checks a packet whole before it decodes it: its length against its
 * header, no payload, a Priv* type; a bad one costs its descriptors,
 * which are closed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helper.h"

/* Room for the descriptors of one packet, aligned for a cmsghdr. */
union helper_cmsg {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int) * HELPER_MAX_FDS)];
};

int
helper_send(int fd, uint16_t type, const ProtobufCMessage *m, const int *fds,
    int nfds)
{
	union helper_cmsg cm;
	struct msghdr msg = { 0 };
	struct iovec iov;
	uint8_t *buf;
	size_t len;
	ssize_t w;

	if (nfds < 0 || nfds > HELPER_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if ((buf = frame_encode(type, m, 0, &len)) == NULL)
		return -1;
	if (len > HELPER_MAX_PACKET) {
		free(buf);
		errno = EMSGSIZE;
		return -1;
	}
	iov.iov_base = buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	do
		w = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	free(buf);
	return w == (ssize_t)len ? 0 : -1;
}

int
helper_decode(const uint8_t *buf, size_t len, struct frame_hdr *h,
    ProtobufCMessage **m, const char **err)
{
	*m = NULL;
	if (len < FRAME_HDR_LEN) {
		*err = "short packet";
		return -1;
	}
	if (frame_parse_header(buf, h, err) < 0)
		return -1;
	if (h->payload_len != 0 || (size_t)h->meta_len != len - FRAME_HDR_LEN) {
		*err = "packet length does not match its header";
		return -1;
	}
	if (h->type < MPIV__MSG_TYPE__MSG_PRIV_SPAWN ||
	    h->type > MPIV__MSG_TYPE__MSG_PRIV_KEYS) {
		*err = "not a message between the node agent's halves";
		return -1;
	}
	if ((*m = frame_unpack_meta(h->type, buf + FRAME_HDR_LEN, h->meta_len,
	    err)) == NULL)
		return -1;
	return 0;
}

int
helper_recv(int fd, struct frame_hdr *h, ProtobufCMessage **m, int *fds,
    int *nfds, const char **err)
{
	union helper_cmsg cm;
	struct msghdr msg = { 0 };
	struct iovec iov;
	uint8_t *buf;
	ssize_t r;
	int rc = -1;

	*nfds = 0;
	*m = NULL;
	*err = NULL;
	if ((buf = malloc(HELPER_MAX_PACKET)) == NULL) {
		*err = "out of memory";
		return -1;
	}
	iov.iov_base = buf;
	iov.iov_len = HELPER_MAX_PACKET;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	do
		r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		free(buf);
		if (r == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			*err = strerror(errno);
			return errno == ECONNRESET ? 0 : -1;
		}
		return -1;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL;
	    c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k && *nfds < HELPER_MAX_FDS; i++)
			memcpy(&fds[(*nfds)++], CMSG_DATA(c) + i * sizeof(int),
			    sizeof(int));
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		*err = "packet too large";
	else if (helper_decode(buf, (size_t)r, h, m, err) == 0)
		rc = 1;
	free(buf);
	if (rc < 0) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		errno = EPROTO;
	}
	return rc;
}
