/*
 * proto.h: the protocol a job's point-to-point messages take, behind one
 * interface, so that the MPI layer (p2p.c, the collectives above it)
 * never knows which runs. Today the relay (p2p_relay.c, docs/REPLAY.md);
 * the direct protocol (docs/DIRECT.md) will be a second table.
 *
 * Every function is MPI code: MPI_SUCCESS or an MPI error class (with
 * mpiv_err_detail said). A started request completes through the
 * request layer (mpiv_req_complete) when the protocol's progress says so.
 */
#ifndef MPIV_PROTO_H
#define MPIV_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

struct mpiv_proto {
	const char *name;
	int (*init)(int world_size);
	void (*fini)(void);
	/* Starts a send (r->peer a real rank): the payload is taken from
	   r->buf before it returns, or kept until r completes. */
	int (*send)(struct mpiv_request *r);
	/* Optional (NULL: n sends). Starts one standard send of r's buffer
	   to each of n world ranks wdst (distinct, not us) on r's context
	   and tag: r completes once all are written. */
	int (*msend)(struct mpiv_request *r, const int *wdst, int n);
	/* Starts a receive; r->cap is set here. */
	int (*recv)(struct mpiv_request *r);
	/* Starts the probe request r (context, post_src, post_tag as world
	   rank or -1, post_blocking): it completes with r->found/status. */
	int (*probe)(struct mpiv_request *r);
	/* Asks to cancel the started receive r (r->cancel_wait is set):
	   the answer clears cancel_wait. */
	int (*cancel)(struct mpiv_request *r);
	/* In a restored checkpoint clone: what was pending, posted again. */
	int (*restore)(void);
	/* Optional (NULL: nothing to do). In a restored clone, before the
	   CMs are dialled again as incarnation inc. MPI code. */
	int (*restore_prepare)(uint32_t inc);
	/* Checkpoint k's mark is written (the clone is about to be made);
	   checkpoint k became durable (at a safe point). */
	void (*ckpt_marked)(uint64_t k);
	void (*ckpt_durable)(uint64_t k);
	/* The clone of a checkpoint: close (only) every socket of its own. */
	void (*clone_detach)(void);
	/* A re-execution that has not yet done again everything of its
	   failed incarnation that others hold (messages, logged matches):
	   until then it takes no step of a non-blocking collective that
	   the log does not have (nbc.c). */
	bool (*replaying)(void);
};

extern const struct mpiv_proto mpiv_proto_relay;
extern const struct mpiv_proto mpiv_proto_direct;
/* The job's protocol (set by MPI_Init). */
extern const struct mpiv_proto *mpiv_proto;

/* MPI_Finalize's part of the direct protocol (p2p_direct.c): returns
   once no peer can need this rank's log; MPI_SUCCESS at once in a relay
   job. MPI code. */
int mpiv_p2p_finalize(void);
/* After it, in a direct job (dp_fin.c): this is the program's process
   past MPI_Finalize, which leaves the links to the rank's process; the
   exit code of that process's end, or -signal when a signal ended it
   (0 before or without one); the keeper ends as it did (returns
   elsewhere); this process ends as such a code says (an exit code, or
   that signal); the keeper cannot finish (returns elsewhere: it must
   not go back to the program). */
bool mpiv_p2p_fin_child(void);
int mpiv_p2p_fin_code(void);
void mpiv_p2p_fin_exit(void);
void mpiv_p2p_fin_leave(int code) __attribute__((noreturn));
void mpiv_p2p_fin_fail(int rc);

/* Streaming replay, the relay protocol's (rp_ahead.c): the window asked
   of the home CM (MPIV_REPLAY_WINDOW); the receive posted already that
   an ahead Deliver answers; holding one that came before its post (-1:
   out of memory) until its payload is whole; completing a fresh post
   from what is held (when whole); whether
   anything is held (no checkpoint then); forgetting it all. */
uint32_t mpiv_ahead_window(void);
struct mpiv_request *mpiv_ahead_posted(const Mpiv__Deliver *d);
int mpiv_ahead_hold(const Mpiv__Deliver *d, size_t len, uint8_t **dst,
    void **h);
void mpiv_ahead_whole(void *h);
void mpiv_ahead_take(struct mpiv_request *r);
bool mpiv_ahead_pending(void);
void mpiv_ahead_reset(void);

/* MPIV_DUMP_SIGNAL: the state dump's handler (dump.c). */
void mpiv_dump_init(void);

/* Shared by the protocols (p2p.c). */
bool mpiv_p2p_too_big(size_t bytes);
const void *mpiv_p2p_addr(const void *buf, MPI_Aint disp);
/* The bytes send r carries (bytes of them): the user buffer itself when
   its datatype is contiguous, else a packed copy, also in *owned (the
   caller frees it; NULL otherwise). Checks the size and the buffer
   first. MPI code. */
int mpiv_p2p_payload(const struct mpiv_request *r, size_t bytes,
    const void **payload, void **owned);

#endif
