/*
 * match: MPI matching for one receiver, pure logic without I/O.
 *
 * Posted requests (receives and waiting blocking probes) are kept in
 * posting order; unexpected messages in arrival order. A message matches
 * a request when the contexts are equal, the source is equal or ANY (-1)
 * and the tag is equal or ANY (-1). Non-overtaking per sender follows from
 * arrival order (one ordered stream per sender).
 *
 * The queue also keeps, per sender, the highest send sequence accepted,
 * so that duplicates (a restarted sender re-sending) are dropped.
 *
 * Messages are embedded by the caller (struct match_msg inside its own
 * message struct); requests are allocated here and freed with free() by
 * whoever match_arrive / match_cancel handed them to.
 */
#ifndef MPIV_MATCH_H
#define MPIV_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MATCH_ANY (-1)

struct match_msg {
	struct match_msg *prev, *next;
	uint32_t context;
	int32_t src;
	int32_t tag;
};

struct match_req {
	struct match_req *prev, *next;
	uint64_t req_id;
	uint32_t context;
	int32_t source;		/* or MATCH_ANY */
	int32_t tag;		/* or MATCH_ANY */
	bool probe;		/* a blocking probe: answered, not consumed */
	uint64_t post_no;	/* the rank's post number (opaque here) */
};

struct match_queue {
	struct match_req *post_head, *post_tail;
	struct match_msg *unx_head, *unx_tail;
	size_t nposted;
	size_t nunexpected;
	uint64_t *last_seq;	/* per sender, 0 = none yet */
	int32_t nsenders;
};

/* 0, or -1 (ENOMEM, EINVAL when nsenders <= 0). */
int match_init(struct match_queue *q, int32_t nsenders);
/* Frees posted requests and hands each unexpected message to free_msg. */
void match_fini(struct match_queue *q,
    void (*free_msg)(struct match_msg *m, void *arg), void *arg);

bool match_matches(uint32_t context, int32_t source, int32_t tag,
    const struct match_msg *m);

/*
 * Sequence check for a message from src: true (and recorded) if seq is
 * above the highest accepted so far, false for a duplicate or a src out
 * of range.
 */
bool match_seq_accept(struct match_queue *q, int32_t src, uint64_t seq);
uint64_t match_seq_last(const struct match_queue *q, int32_t src);
/* Forgets a message whose bytes never fully arrived: last becomes seq-1. */
void match_seq_rewind(struct match_queue *q, int32_t src, uint64_t seq);

/*
 * Posts a receive or a blocking probe described by *r (copied). If an
 * unexpected message matches, the first in arrival order is returned in
 * *out and 1 returned; for a receive it is removed from the queue, for a
 * probe it stays. Otherwise the request is appended (0). -1 on ENOMEM.
 */
int match_post(struct match_queue *q, const struct match_req *r,
    struct match_msg **out);

/*
 * A message arrived. Walks posted requests in posting order: every
 * matching probe before the first matching receive is unlinked and
 * chained into *probes (through ->next, in order); the first matching
 * receive is unlinked and returned. With no matching receive the message
 * is appended to the unexpected queue and NULL returned.
 */
struct match_req *match_arrive(struct match_queue *q, struct match_msg *m,
    struct match_req **probes);

/* First unexpected message matching, left in place; NULL if none. */
struct match_msg *match_probe(struct match_queue *q, uint32_t context,
    int32_t source, int32_t tag);

/* Unlinks the posted request req_id and returns it, NULL if not posted. */
struct match_req *match_cancel(struct match_queue *q, uint64_t req_id);

/* Unlinks an unexpected message (e.g. its sender died mid-payload). */
void match_remove(struct match_queue *q, struct match_msg *m);

/* Frees every posted request (the receiver's connection is gone). */
void match_drop_posted(struct match_queue *q);

#endif
