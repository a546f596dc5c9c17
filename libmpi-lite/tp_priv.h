/*
 * tp_priv.h: what the two files of a rank's transport share
 * (transport.h is its interface):
 *
 *   transport.c  frames, output, input, failures, the progress engine
 *   tp_open.c    opening the CM connections (Hello, NdLog), closing
 *                them, and reopening them in a restored checkpoint clone
 */
#ifndef MPIV_TP_PRIV_H
#define MPIV_TP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "seal.h"
#include "transport.h"

#define TP_HDR_CAP	  128		/* header + a small control message */
#define TP_IOV_MAX	  64
#define TP_IN_CAP	  (64u * 1024)	/* input buffer (grows for big meta) */
#define TP_DIAL_MS	  10000		/* keep trying a CM for this long */
#define TP_HELLO_MS	  30000
#define TP_PREAUTH_MAX	  4096		/* frame bytes before authentication */
#define TP_SEAL_CHUNK	  (256u * 1024)	/* plaintext sealed per write */
#define TP_WIRE_CHUNK	  (256u * 1024)	/* bytes per plaintext sendmsg */

struct tp_frame {
	struct tp_frame *next;
	struct mpiv_request *req;	/* told when fully written, or NULL */
	void *owned;			/* freed when written */
	const uint8_t *payload;
	size_t hlen, plen;
	size_t off;			/* bytes of hdr then payload written */
	bool urgent;			/* jumped the queue (NdRecord) */
	bool is_send;			/* a Send (fault point send-partial) */
	uint8_t hdr[TP_HDR_CAP];
};

struct tp_conn {
	int index;
	int fd;
	char addr[256];
	bool dead;
	/* A link to a peer rank (direct protocol, dp_conn.c), not a CM:
	   frames and losses go to dp_*; peer is its world rank, -1 until an
	   accepted link said who it is. */
	bool is_peer;
	int peer;
	bool preauth;		/* a peer link before its handshake ended:
				   frames over TP_PREAUTH_MAX close it */
	/* The session once the handshake ended (runtime/seal.h): every
	   byte in and out goes through it when on. Off (and wiped) in a
	   checkpoint clone, which reconnects with a new handshake. */
	struct seal seal;

	struct tp_frame *qhead, *qtail;
	struct tp_frame *utail;		/* last urgent frame near the front */
	int nurgent;			/* urgent frames not yet written */

	/* input: buffered bytes are in[inpos, inlen) */
	uint8_t *in;
	size_t incap, inpos, inlen;
	bool in_payload;		/* header+meta parsed, payload due */
	struct frame_hdr h;
	ProtobufCMessage *meta;
	struct mpiv_request *preq;	/* receive the payload is for */
	void *pahead;			/* held ahead Deliver (rp_ahead.c) */
	bool ahead_nomem;		/* an ahead Deliver could not be held */
	uint8_t *pdst;			/* where kept bytes go */
	size_t pkeep, pgot;		/* bytes to keep, kept so far */
	size_t prest;			/* payload bytes still to consume */

	bool mcast;		/* the CM takes multicasts (HelloReply) */

	/* mpiv_tp_sync_cms: Sends since the last Flush, Flush ids */
	uint64_t unflushed, flush_sent, flush_acked;
};

extern struct tp_conn *tp_conns;
extern int tp_nconns;
extern uint64_t *tp_last_seq;		/* per receiver, from HelloReply */
extern int tp_world_size;
extern char tp_errbuf[512];
extern bool tp_restore_needed;	/* a CM said: restore a checkpoint */
extern bool tp_fin_closed;	/* direct: the first CM said every rank finished */
extern int tp_fin_code;		/* and the exit code of this rank's program */
extern bool tp_refused_fenced;	/* the last refusal: ERR_FENCED */
extern const char *tp_err;
extern struct tp_frame *tp_frame_pool;	/* freelist: frames are reused */
extern char *tp_job;			/* for a Hello again after a restore */
extern int tp_rank;
extern uint32_t tp_incarnation;	/* of this process (MPIV_INCARNATION) */
extern uint64_t tp_resume_event, tp_resume_nd;	/* Hello of a restored clone */
extern uint64_t tp_log_events;	/* HelloReply: logged decisions to replay */
extern uint64_t tp_last_event;		/* last event fully received */
/* K_{r,i} from MPIV_RANK_KEY: proves this incarnation of this rank of
   this job to every CM. A restored image is given its new incarnation's
   on its ctrl-in pipe (mpiv_tp_set_key), which overwrites the old. */
extern struct auth_key tp_key;
extern bool tp_keyed;
/*
 * Test hook for tests/fuzz/fuzz_tp_read.c alone, NULL in every program:
 * when set, the reader calls it instead of ending the process (a lost CM
 * while logging, fencing); it must not return (the fuzz target longjmps
 * back to its harness). Hidden, like every tp_ name: libmpi exports MPI.
 */
extern void (*tp_test_exit_hook)(void) __attribute__((visibility("hidden")));

/* Output is due on c: frames queued, or ciphertext sealed and not yet
   written (poll for POLLOUT, call tp_write). */
static inline bool
tp_conn_out_due(const struct tp_conn *c)
{
	return c->qhead != NULL || (c->seal.on && seal_pending(&c->seal) > 0);
}

/* Plaintext waits inside c's session: poll() will not say so, the
   reader must run without waiting for the descriptor. */
static inline bool
tp_conn_in_ready(const struct tp_conn *c)
{
	return c->seal.on && seal_readable(&c->seal);
}

/* transport.c */
struct tp_frame *tp_frame_get(void);
void tp_frame_put(struct tp_frame *f);
void tp_fail(struct tp_conn *c, const char *what, const char *why);
void tp_lost(struct tp_conn *c, const char *what, const char *why);
bool tp_conn_errno(int e);
int tp_send(int cm, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req,
    bool urgent);
int tp_conn_send(struct tp_conn *c, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req,
    bool urgent);
int tp_read(struct tp_conn *c);
/* Ends the process: by signal sig, or with _exit(code) when sig is 0
   (the fuzz targets' hook instead, when set). */
void tp_end_process(int sig, int code) __attribute__((noreturn));

/* dp_conn.c: the direct protocol's links to peers; every one of these is
   a no-op in a relay job. */
struct pollfd;
void dp_frame_begin(struct tp_conn *c);
void dp_frame_done(struct tp_conn *c);
void dp_link_lost(struct tp_conn *c, const char *what, const char *why);
void dp_peer_info(const Mpiv__PeerInfo *pi);
int dp_poll_count(void);
int dp_poll_fill(struct pollfd *pfd, int max);
/* A link has plaintext waiting in its session (tp_conn_in_ready). */
bool dp_poll_ready(void);
void dp_poll_handle(struct pollfd *pfd, int n);
/* Milliseconds until a timed step (a lookup to retry), -1 when none. */
int dp_timeout_ms(void);
void tp_fenced(struct tp_conn *c, const char *text) __attribute__((noreturn));
int tp_write(struct tp_conn *c);

#endif
