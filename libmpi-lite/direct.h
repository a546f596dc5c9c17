/*
 * direct.h: what the two files of the direct protocol share
 * (docs/DIRECT.md; proto.h is the interface the MPI layer sees):
 *
 *   dp_conn.c     the links to peer ranks: the listener, where a peer
 *                 listens (PeerLookup to the home CM), dialling and
 *                 accepting, the pair-key handshake with incarnations,
 *                 which link to keep when two exist, losses.
 *   p2p_direct.c  the messages on those links: the sender's payload log
 *                 (sblog.c) and resends, matching in the rank, the
 *                 outcomes logged at the home CM, MPI_Finalize's rounds.
 */
#ifndef MPIV_DIRECT_H
#define MPIV_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "tp_priv.h"

struct dp_link;

/* One peer rank, as this rank sees it. */
struct dp_peer {
	struct dp_link *up;	/* the link in use, NULL when none */
	bool want;		/* this side dials it (see dp_conn.c) */
	bool dialing;		/* a lookup or a dialled link in flight */
	long retry_at;		/* mono_us of the next lookup, 0: now */
	int backoff_ms;
	uint32_t inc;		/* its live incarnation, from PeerInfo */
	char addr[256];
	struct auth_key key;	/* K_ij, from PeerInfo */
	bool have_key;
	bool bye;		/* its DBye came: it reached MPI_Finalize */

	uint64_t recv_last;	/* highest seq accepted from it */
	uint64_t peer_has;	/* highest of our seqs it holds (handshake) */
	uint64_t peer_needs;	/* highest of our seqs its logged wildcard
				   matches name (handshake): a re-execution
				   of ours regenerates them before deciding */
	uint64_t wire_last;	/* highest of our seqs queued on `up` */
};

extern struct dp_peer *dp_peers;	/* [world size] */
extern int dp_world, dp_rank;
extern uint32_t dp_inc;
extern bool dp_active;		/* this job runs the direct protocol */
/* Where this rank listens ("host:port"), for the Hello to the CMs. */
extern char dp_listen_addr[256];

/* dp_conn.c */
/* One line on stderr when MPIV_DIRECT_DEBUG is set (for people chasing a
   problem; it mixes with the program's stderr). */
void dp_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Before the CMs are dialled: opens the listener. MPI code. */
int dp_listen_open(const char *cms);
/* After: sets up the peers and starts dialling those this side dials. */
int dp_links_start(int world, int rank, uint32_t inc);
void dp_links_close(void);
/* The clone of a checkpoint closes its copies of the sockets. */
void dp_clone_detach(void);
/* MPI_Finalize, commit stored and output synced: forks the program's
   process, which returns at once; this one keeps the log until that
   process ended (dp_fin.c). MPI code; does not return on failure in
   the keeper. */
int dp_fin_fork(void);
/* A restored clone, incarnation inc: every link is gone; listens again
   and dials every peer. MPI code. */
int dp_links_restart(uint32_t inc);
/* Starts the lookups due now. */
void dp_dial_due(void);
/* Asks the home CM about peer p now (Finalize's commit check). */
int dp_lookup(int p);
/* Sends a frame on p's link in use. MPI code; MPI_SUCCESS and nothing
   sent when there is none. */
int dp_send_up(int p, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned,
    struct mpiv_request *req);
/* The link of connection c. */
struct dp_link *dp_link_of(struct tp_conn *c);

/* p2p_direct.c, called by dp_conn.c */
/* The last seq from p held whole: what a handshake tells p (a message
   half read from a link that may yet be closed is not counted, so that
   p sends it again on the new one). */
uint64_t dpx_held(int p);
/* Held receives to free before a wait (dpx_tick does it). */
bool dpx_due(void);
/* For the state dump (dump.c): the highest seq logged for p, and one line
   per unexpected message and pull in flight, through line(). */
uint64_t dpx_logged(int p);
void dpx_dump_queues(void (*line)(const char *, ...));
/* A link to p came up (p->peer_has set): resend from the log. */
void dpx_link_up(int p);
/* p's link in use went down: undo a message half read from it. */
void dpx_link_down(int p, struct tp_conn *c);
void dpx_frame_begin(struct tp_conn *c);
void dpx_frame_done(struct tp_conn *c);
/* Timed work of the protocol (holds released after replay). */
void dpx_tick(void);

/* dp_spill.c: the send log's spill file (an unlinked file a CRIU image
   carries), or -1 when spilling is off or impossible (said once). */
int dp_spill_open(void);

#endif
