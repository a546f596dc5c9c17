/*
 * win.h: what the one-sided files share (docs/ONESIDED.md):
 *
 *   win.c       windows as objects: creation flavors, attach/detach,
 *               attributes, names, info, error handlers, Win_free
 *   win_rma.c   the communication calls (Put, Get, Accumulate ...): each
 *               appends one record to the batch of its target; and the
 *               target's side, applying a batch to its window memory
 *   win_sync.c  synchronization: fence, post/start/complete/wait/test,
 *               which exchange the batches
 *   win_passive.c  passive target: lock, flush, unlock at the origin;
 *               the target's lock manager, served at advance points
 *
 * No operation touches a remote window when it is called: the origin
 * records it, in program order, in the batch of its target, and the
 * synchronization call that closes the epoch sends every batch as two
 * point-to-point messages (header, payload) on the window's private
 * communicator. The target applies the batches it receives at a point of
 * its own program (its fence, wait or test), by origin rank, each in its
 * origin's order, and answers the reads from the window as it stands at
 * that point. Replay of these messages rebuilds the same window contents.
 */
#ifndef MPIV_WIN_H
#define MPIV_WIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "impl.h"

/* Tags on the window's private communicator. */
enum { WIN_TAG_HDR = 1, WIN_TAG_DATA = 2, WIN_TAG_REPLY = 3,
	WIN_TAG_PASSIVE = 4, WIN_TAG_PDATA = 5, WIN_TAG_PREPLY = 6 };

/* Operation kinds of a batch record. */
enum win_kind { WIN_PUT = 1, WIN_GET, WIN_ACC, WIN_GACC, WIN_CAS };

/* The first message of an epoch from origin to target: what follows. */
struct win_hdr {
	uint64_t bytes;		/* payload length (0: no payload message) */
	uint32_t nops;
	uint32_t magic;		/* WIN_MAGIC */
};
#define WIN_MAGIC 0x6d77696eU

/* A batch record's fixed part (win_rma.c), followed by its blocks
   (struct mpiv_block) and its data, padded to 8 bytes. Both ends run
   the same library, so it is copied as it is; the target checks every
   length and that the record agrees with itself before use. */
struct win_rec {
	uint8_t kind;
	uint8_t op;		/* builtin index of the predefined op */
	uint16_t pad;
	int32_t basic;		/* enum mpiv_basic of the target type */
	uint32_t count;		/* elements of the block list below */
	uint32_t nblocks;
	int64_t disp;		/* target_disp as given (units of the target) */
	int64_t extent;		/* between consecutive elements */
	uint64_t tbytes;	/* bytes of target memory touched */
	uint64_t data;		/* bytes of origin data after the blocks */
};

/* A read the origin waits for: where its part of the reply goes. */
struct win_get {
	void *buf;
	int count;
	MPI_Datatype dt;	/* retained until the reply is unpacked */
	size_t off, bytes;	/* in the target's reply */
};

/* An origin's records for one target in the open epoch. */
struct win_batch {
	char *buf;
	size_t len, cap;
	uint32_t nops;
	struct win_get *gets;
	size_t ngets, capgets;
	size_t reply_bytes;	/* sum of the gets' bytes */
	char *reply;		/* the target's answer, reply_bytes long */
};

/* A memory region attached to a dynamic window. */
struct win_region {
	uintptr_t base;
	size_t len;
};

struct mpiv_win {
	MPI_Comm comm;		/* private: a new context over the group */
	void *base;
	MPI_Aint size;
	int disp_unit;
	int flavor, model;
	bool owns_base;		/* Win_allocate: freed with the window */
	MPI_Aint *sizes;	/* per rank of comm (not dynamic) */
	int *units;
	MPI_Errhandler errh;
	MPI_Info info;		/* as set by the program, or NULL */
	char name[MPI_MAX_OBJECT_NAME];
	struct mpiv_attr *attrs;	/* attr.c */
	struct win_region *regions;
	size_t nregions, capregions;

	/* epochs */
	bool fence_open;	/* a fence opened access/exposure to all */
	bool access_open;	/* between Start and Complete */
	int *access;		/* targets of Start, comm ranks, sorted */
	int naccess;
	bool expose_open;	/* between Post and Wait/Test */
	int *expose;		/* origins of Post, comm ranks, sorted */
	int nexpose;
	struct win_hdr *post_hdrs;	/* headers from expose[i] */
	MPI_Request *post_reqs;
	bool expose_applied;	/* the epoch's batches are in the window */
	struct win_batch self_in;	/* own records to itself, handed over
					   when a fence closed the epoch */
	bool self_delivered;
	bool self_applied;	/* MPI_Win_complete applied the own records
				   of the open exposure epoch */
	uint32_t serial;	/* this rank's count of windows (the log's name) */
	struct win_pas *pas;	/* passive target (win_passive.c) */
	struct win_batch *out;	/* per target (comm ranks) */
};

/* Reports code from fn through the window's error handler (the world's
   if win is not a window). */
int win_err(MPI_Win win, int code, const char *fn);
/* MPI_SUCCESS or MPI_ERR_WIN. */
int win_check(MPI_Win win);
/* true if [addr, addr + len) is window memory of this rank. */
bool win_local_range(MPI_Win win, uintptr_t addr, size_t len);
/* Frees a batch's records, reads and reply (keeps nothing). */
void win_batch_clear(struct win_batch *b);

/* win_rma.c: applies a batch from origin to the local window; reads
   are answered in reply (the origin's reply_bytes, counted again here:
   *reply_len). First error as an MPI code (the other records are still
   applied). */
int win_apply(MPI_Win win, int origin, const char *buf, size_t len,
    uint32_t nops, char **reply, size_t *reply_len);
/* Unpacks every read of b from its reply into the origin buffers. */
void win_finish_gets(struct win_batch *b);
/* Applies b, the rank's records to itself, to its own window, answers
   its reads into their origin buffers and empties b. MPI code. */
int win_apply_own(MPI_Win win, struct win_batch *b);

/* win_sync.c: a fence epoch (nothing pending in it) ends here, as a
   post/start or lock epoch begins; MPI_ERR_RMA_SYNC (said) if
   operations of it are pending. */
int win_leave_fence(MPI_Win win);
/* b, the records for target t, fits one message (its reads' answer
   too, after a header of `header` bytes); else says so (detail). */
bool win_batch_fits(const struct win_batch *b, int t, size_t header);

/* win_passive.c. Set up at creation (a receive posted for any origin's
   passive message when the window has other ranks). MPI code. */
int win_pas_init(MPI_Win win);
/* MPI_Win_free, after its barrier: the posted receive cancelled, the
   answers in flight waited for, everything freed. MPI code. */
int win_pas_fini(MPI_Win win);
/* Frees without the collective part (a creation that failed). */
void win_pas_free(MPI_Win win);
/* A passive-target epoch of this rank is open / includes rank. */
bool win_pas_open(MPI_Win win);
bool win_pas_target(MPI_Win win, int rank);
/* The calls, checked but for the window itself; MPI codes. */
int win_pas_lock(MPI_Win win, int lock_type, int rank, int assert);
int win_pas_unlock(MPI_Win win, int rank);
int win_pas_flush(MPI_Win win, int rank);
int win_pas_lock_all(MPI_Win win, int assert);
int win_pas_unlock_all(MPI_Win win);
int win_pas_flush_all(MPI_Win win);
int win_pas_sync(MPI_Win win);
/* A passive message as it came (got bytes, from comm rank origin of a
   window of size ranks, at rank me): NULL when well-formed (its flags,
   number of records and bytes of records set), else what is wrong. The
   records themselves are win_apply's to check. */
const char *win_pas_check(const void *msg, size_t got, int origin, int me,
    int size, uint32_t *flags, uint32_t *nops, size_t *bytes);

#endif
