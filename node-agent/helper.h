/*
 * helper: the node agent's privileged half (docs/ARCHITECTURE.md,
 * "Privilege separation in the node agent").
 *
 * `mpiv node` started as root forks once, before it talks to anything:
 * the child becomes the agent and drops to an unprivileged account
 * (--user, default nobody) before its first byte from the network; the
 * parent stays root as the helper, whose only work is what needs root:
 * starting ranks (as that account, in PID namespaces of their own),
 * signalling them, reaping them, and running CRIU (dump, restore). The
 * two speak over a socketpair, one frame (runtime/frame.h, messages
 * Priv*) per packet, pipe ends passed alongside (SCM_RIGHTS). Started
 * without root the same two processes run under one account: one code
 * path everywhere.
 *
 * The helper trusts nothing the agent says: it signals and dumps only
 * processes of its own ranks (or of the ranks' account), reads images
 * only from directories it took over from the agent, and checks the
 * credentials of a restored process before it lets it run.
 *
 * The helper is the parent of the agent and of every rank: it ends as
 * the agent ended (same exit code or signal), after killing every rank
 * left; the agent and the ranks die with it (PR_SET_PDEATHSIG).
 */
#ifndef MPIV_HELPER_H
#define MPIV_HELPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>

#include "frame.h"

#define HELPER_MAX_FDS		8	/* descriptors per packet */
#define HELPER_MAX_PACKET	(256u << 10)	/* bytes per packet */
#define HELPER_DEFAULT_USER	"nobody"

struct helper_conf {
	bool drop;		/* the agent and ranks run as uid/gid */
	uid_t uid;
	gid_t gid;
	const char *user;	/* its name, for messages */
	bool criu;		/* criu_probe said yes */
	bool pidns;		/* pidns_available said yes */
	const char *secret_path;	/* --secret-file (NULL: $MPIV_SECRET_FILE) */
};

/*
 * Resolves --user (NULL: HELPER_DEFAULT_USER when we are root) into c.
 * Not root: no switch (c->drop false), and a --user other than ourselves
 * is an error. 0, or -1 with the reason in (err, n).
 */
int helper_conf_user(struct helper_conf *c, const char *user, char *err,
    size_t n);

/*
 * Forks. In the child (the agent) it returns 0 with privileges dropped
 * as c says and *fd its end of the socketpair. The parent becomes the
 * helper and never returns. -1 (errno) when nothing was forked.
 */
int helper_start(const struct helper_conf *c, int *fd);

/* One packet: frame of type with m, and nfds descriptors. 0 or -1. */
int helper_send(int fd, uint16_t type, const ProtobufCMessage *m,
    const int *fds, int nfds);

/*
 * Reads one packet. 1: *m (free with frame_free_meta) of type h->type and
 * *nfds descriptors in fds (the caller owns them); 0: the other side is
 * gone; -1: nothing now (EAGAIN) or a bad packet (*err says why; its
 * descriptors were closed).
 */
int helper_recv(int fd, struct frame_hdr *h, ProtobufCMessage **m, int *fds,
    int *nfds, const char **err);

/* Decodes one packet's bytes (what helper_recv does after recvmsg);
   for the fuzzer. 0 or -1 (*err). */
int helper_decode(const uint8_t *buf, size_t len, struct frame_hdr *h,
    ProtobufCMessage **m, const char **err);

#endif
