/*
 * match.c: the MPI matching engine of one receiver (see match.h). Plain
 * doubly linked lists: posted requests in posting order, unexpected
 * messages in arrival order. No I/O, no logging: unit-testable as is,
 * and on the ground floor (linked into libmpi too, hidden): a Channel
 * Memory matches for the ranks it relays to; a rank that receives
 * straight from its peers will match for itself with the same engine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"

int
match_init(struct match_queue *q, int32_t nsenders)
{
	memset(q, 0, sizeof(*q));
	if (nsenders <= 0) {
		errno = EINVAL;
		return -1;
	}
	q->last_seq = calloc((size_t)nsenders, sizeof(*q->last_seq));
	if (q->last_seq == NULL)
		return -1;
	q->nsenders = nsenders;
	return 0;
}

void
match_fini(struct match_queue *q,
    void (*free_msg)(struct match_msg *m, void *arg), void *arg)
{
	struct match_msg *m, *next;

	match_drop_posted(q);
	for (m = q->unx_head; m != NULL; m = next) {
		next = m->next;
		m->prev = m->next = NULL;
		if (free_msg != NULL)
			free_msg(m, arg);
	}
	q->unx_head = q->unx_tail = NULL;
	q->nunexpected = 0;
	free(q->last_seq);
	q->last_seq = NULL;
	q->nsenders = 0;
}

bool
match_matches(uint32_t context, int32_t source, int32_t tag,
    const struct match_msg *m)
{
	return m->context == context &&
	    (source == MATCH_ANY || source == m->src) &&
	    (tag == MATCH_ANY || tag == m->tag);
}

bool
match_seq_accept(struct match_queue *q, int32_t src, uint64_t seq)
{
	if (src < 0 || src >= q->nsenders || seq <= q->last_seq[src])
		return false;
	q->last_seq[src] = seq;
	return true;
}

uint64_t
match_seq_last(const struct match_queue *q, int32_t src)
{
	if (src < 0 || src >= q->nsenders)
		return 0;
	return q->last_seq[src];
}

void
match_seq_rewind(struct match_queue *q, int32_t src, uint64_t seq)
{
	if (src >= 0 && src < q->nsenders && seq > 0 &&
	    q->last_seq[src] >= seq)
		q->last_seq[src] = seq - 1;
}

static void
match_unlink_req(struct match_queue *q, struct match_req *r)
{
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		q->post_head = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	else
		q->post_tail = r->prev;
	r->prev = r->next = NULL;
	q->nposted--;
}

void
match_remove(struct match_queue *q, struct match_msg *m)
{
	if (m->prev != NULL)
		m->prev->next = m->next;
	else
		q->unx_head = m->next;
	if (m->next != NULL)
		m->next->prev = m->prev;
	else
		q->unx_tail = m->prev;
	m->prev = m->next = NULL;
	q->nunexpected--;
}

struct match_msg *
match_probe(struct match_queue *q, uint32_t context, int32_t source,
    int32_t tag)
{
	struct match_msg *m;

	for (m = q->unx_head; m != NULL; m = m->next)
		if (match_matches(context, source, tag, m))
			return m;
	return NULL;
}

int
match_post(struct match_queue *q, const struct match_req *r,
    struct match_msg **out)
{
	struct match_msg *m;
	struct match_req *n;

	*out = NULL;
	if ((m = match_probe(q, r->context, r->source, r->tag)) != NULL) {
		if (!r->probe)
			match_remove(q, m);
		*out = m;
		return 1;
	}
	if ((n = malloc(sizeof(*n))) == NULL)
		return -1;
	*n = *r;
	n->next = NULL;
	n->prev = q->post_tail;
	if (q->post_tail != NULL)
		q->post_tail->next = n;
	else
		q->post_head = n;
	q->post_tail = n;
	q->nposted++;
	return 0;
}

struct match_req *
match_arrive(struct match_queue *q, struct match_msg *m,
    struct match_req **probes)
{
	struct match_req *r, *next, **ptail = probes;

	*probes = NULL;
	for (r = q->post_head; r != NULL; r = next) {
		next = r->next;
		if (!match_matches(r->context, r->source, r->tag, m))
			continue;
		match_unlink_req(q, r);
		if (!r->probe)
			return r;
		*ptail = r;
		ptail = &r->next;
	}
	m->next = NULL;
	m->prev = q->unx_tail;
	if (q->unx_tail != NULL)
		q->unx_tail->next = m;
	else
		q->unx_head = m;
	q->unx_tail = m;
	q->nunexpected++;
	return NULL;
}

struct match_req *
match_cancel(struct match_queue *q, uint64_t req_id)
{
	struct match_req *r;

	for (r = q->post_head; r != NULL; r = r->next) {
		if (r->req_id == req_id) {
			match_unlink_req(q, r);
			return r;
		}
	}
	return NULL;
}

void
match_drop_posted(struct match_queue *q)
{
	struct match_req *r, *next;

	for (r = q->post_head; r != NULL; r = next) {
		next = r->next;
		free(r);
	}
	q->post_head = q->post_tail = NULL;
	q->nposted = 0;
}
