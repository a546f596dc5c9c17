/*
 * ndstore.c: outcomes a rank decided itself (Test*, Wait{any,some}, ...)
 * stored at its home CM, in nd_no order, next to its delivery log.
 * NdRecord adds to them (duplicates of a re-execution ignored, a gap is a
 * protocol error) and is answered with NdAck; a connecting incarnation
 * gets them back in NdLog chunks right after its HelloReply (a restored
 * one only those after its checkpoint). A durable checkpoint frees the
 * outcomes up to its mark (nd_trim).
 *
 * Ranks of direct jobs log their wildcard receive bindings, probe and
 * iprobe answers, cancel answers and committed Finalize here too (kinds
 * 8-12, with post_no, src and seq): they share the nd_no numbering and
 * are kept, handed back and stored like the others, but never folded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

#define ND_CHUNK_OUTCOMES 4096
#define ND_CHUNK_BYTES	  (256u << 10)	/* estimated meta bytes per NdLog */

/* True when the outcome carries a receive, message or kind of the direct
   protocol (never folded into a run). */
static bool
nd_out_direct(const struct nd_out *d)
{
	return d->kind >= ND_KIND_RECV_BIND || d->post_no != 0 ||
	    d->src != 0 || d->seq != 0;
}

/* Packed size estimate of one outcome in an NdLog: post_no, src and seq
   add at most 33 bytes (a negative src takes 10). */
static size_t
nd_wire_bytes(const struct nd_out *d)
{
	return 32 + d->nidx * 6 + (nd_out_direct(d) ? 33 : 0);
}

/* True when o is a "nothing completed" answer of kinds 1-7 that a run of
   its kind may absorb. */
static bool
nd_foldable(const Mpiv__NdOutcome *o)
{
	return o->kind < ND_KIND_RECV_BIND && !o->flag && o->n_indices == 0 &&
	    o->post_no == 0 && o->src == 0 && o->seq == 0;
}

/* True when kind is one NdOutcome defines. */
static bool
nd_kind_known(uint32_t kind)
{
	return kind >= ND_KIND_TEST && kind <= ND_KIND_MAX;
}

void
nd_free(struct job *j, struct rank_state *rs)
{
	for (size_t i = 0; i < rs->nnd; i++) {
		if (j != NULL)
			j->log_meta_bytes -= sizeof(rs->nd[i]) +
			    rs->nd[i].nidx * sizeof(int32_t);
		free(rs->nd[i].idx);
	}
	free(rs->nd);
	rs->nd = NULL;
	rs->nnd = rs->nd_cap = 0;
	rs->nd_end = 0;
}

/*
 * Frees the outcomes up to nd_no `upto` (a durable checkpoint has them);
 * a folded run across it keeps its later part. Returns how many records
 * went.
 */
uint64_t
nd_trim(struct job *j, struct rank_state *rs, uint64_t upto)
{
	size_t k = 0;

	while (k < rs->nnd && rs->nd[k].nd_no + rs->nd[k].repeat - 1 <= upto) {
		j->log_meta_bytes -= sizeof(rs->nd[k]) +
		    rs->nd[k].nidx * sizeof(int32_t);
		free(rs->nd[k].idx);
		k++;
	}
	if (k > 0) {
		memmove(rs->nd, rs->nd + k, (rs->nnd - k) * sizeof(*rs->nd));
		rs->nnd -= k;
	}
	if (rs->nnd > 0 && rs->nd[0].nd_no <= upto) {
		uint64_t cut = upto - rs->nd[0].nd_no + 1;
		rs->nd[0].nd_no += cut;
		rs->nd[0].repeat -= cut;
	}
	/* give memory back once the array is mostly empty */
	if (rs->nd_cap > 64 && rs->nnd < rs->nd_cap / 4) {
		size_t cap = rs->nd_cap / 2;
		struct nd_out *n = realloc(rs->nd, cap * sizeof(*n));
		if (n != NULL) {
			rs->nd = n;
			rs->nd_cap = cap;
		}
	}
	return k;
}

/*
 * Keeps one outcome covering nd_no .. nd_no+repeat-1 in memory (the
 * caller writes it to the store, if it comes from a rank). 0, or -1
 * ENOMEM.
 */
static int
nd_store(struct job *j, struct rank_state *rs, const Mpiv__NdOutcome *o,
    uint64_t nd_no, uint64_t repeat)
{
	struct nd_out *t = rs->nnd > 0 ? &rs->nd[rs->nnd - 1] : NULL;
	struct nd_out *n;

	/* a run of "nothing completed" continues the last one */
	if (t != NULL && nd_foldable(o) && !t->flag && t->nidx == 0 &&
	    !nd_out_direct(t) && t->kind == o->kind &&
	    t->nd_no + t->repeat == nd_no) {
		t->repeat += repeat;
		rs->nd_end = nd_no + repeat - 1;
		return 0;
	}
	if (rs->nnd == rs->nd_cap) {
		size_t cap = rs->nd_cap ? rs->nd_cap * 2 : 64;
		if ((n = realloc(rs->nd, cap * sizeof(*n))) == NULL)
			return -1;
		rs->nd = n;
		rs->nd_cap = cap;
	}
	n = &rs->nd[rs->nnd];
	memset(n, 0, sizeof(*n));
	if (o->n_indices > 0) {
		if ((n->idx = malloc(o->n_indices * sizeof(int32_t))) == NULL)
			return -1;
		memcpy(n->idx, o->indices, o->n_indices * sizeof(int32_t));
	}
	n->nd_no = nd_no;
	n->repeat = repeat;
	n->kind = o->kind;
	n->flag = o->flag;
	n->post_no = o->post_no;
	n->src = o->src;
	n->seq = o->seq;
	n->nidx = o->n_indices;
	rs->nnd++;
	rs->nd_end = nd_no + repeat - 1;
	j->log_meta_bytes += sizeof(*n) + n->nidx * sizeof(int32_t);
	return 0;
}

/* An outcome read back from the store (recover.c), not written again:
   0, or -1 when it does not continue the stored ones or has a kind
   nd_record refuses. */
int
nd_restore(struct job *j, struct rank_state *rs, const Mpiv__NdOutcome *o)
{
	uint64_t rep = o->repeat ? o->repeat : 1;

	if (o->nd_no != rs->nd_end + 1 || rep > UINT64_MAX - o->nd_no ||
	    !nd_kind_known(o->kind))
		return -1;
	return nd_store(j, rs, o, o->nd_no, rep);
}

/* NdRecord from a rank: store its outcomes in order, then NdAck. */
void
nd_record(struct session *s, const Mpiv__NdRecord *r)
{
	struct job *j = s->job;
	struct rank_state *rs = &j->ranks[s->rank];
	Mpiv__NdAck a = MPIV__ND_ACK__INIT;
	uint64_t dups = 0;
	char why[200];

	if (!rs->home) {
		snprintf(why, sizeof(why), "nd record from rank %d, which this "
		    "CM (index %d of %d) is not home of", s->rank, j->cm_index,
		    j->ncms);
		session_error(s, why);
		return;
	}
	for (size_t i = 0; i < r->n_outcomes && !j->relay_only; i++) {
		const Mpiv__NdOutcome *o = r->outcomes[i];
		uint64_t rep = o->repeat ? o->repeat : 1, first = o->nd_no, last;

		if (!nd_kind_known(o->kind)) {
			snprintf(why, sizeof(why), "nd record with unknown kind "
			    "%u at nd_no=%llu (kinds are %d to %d)", o->kind,
			    (unsigned long long)first, ND_KIND_TEST,
			    ND_KIND_MAX);
			session_error(s, why);
			return;
		}
		if (first == 0 || rep > UINT64_MAX - first) {
			snprintf(why, sizeof(why), "nd record with nd_no=%llu "
			    "repeat=%llu (nd_no counts from 1)",
			    (unsigned long long)first, (unsigned long long)rep);
			session_error(s, why);
			return;
		}
		last = first + rep - 1;
		if (last <= rs->nd_end) {	/* a re-execution's duplicate */
			dups++;
			continue;
		}
		if (first > rs->nd_end + 1) {
			snprintf(why, sizeof(why), "nd record gap: outcome "
			    "nd_no=%llu, expected %llu", (unsigned long long)first,
			    (unsigned long long)rs->nd_end + 1);
			session_error(s, why);
			return;
		}
		if (first <= rs->nd_end) {	/* overlap of a folded run */
			rep = last - rs->nd_end;
			first = rs->nd_end + 1;
		}
		store_nd(j, s->rank, o, first, rep);
		if (nd_store(j, rs, o, first, rep) < 0) {
			log_errorx("cm out of memory storing nd outcomes job=%s "
			    "rank=%d nd_no=%llu", j->id, s->rank,
			    (unsigned long long)first);
			rs->log_broken = true;
			session_error(s, "channel memory out of memory");
			return;
		}
		log_debug("cm nd outcome job=%s rank=%d nd_no=%llu repeat=%llu "
		    "kind=%u flag=%d indices=%zu post=%llu src=%d seq=%llu",
		    j->id, s->rank, (unsigned long long)first,
		    (unsigned long long)rep, o->kind, o->flag, o->n_indices,
		    (unsigned long long)o->post_no, o->src,
		    (unsigned long long)o->seq);
	}
	if (dups > 0)
		log_debug("cm nd duplicates ignored job=%s rank=%d count=%llu "
		    "stored_upto=%llu", j->id, s->rank,
		    (unsigned long long)dups, (unsigned long long)rs->nd_end);
	job_log_grew(j);
	a.ack_id = r->ack_id;
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_ND_ACK, &a.base, NULL, 0);
}

/*
 * NdLog chunks of every stored outcome after nd_no `after` (a restored
 * rank has the earlier ones; a folded run across it is sent from
 * after+1), the last chunk with last=true.
 */
void
nd_send_log(struct session *s, struct rank_state *rs, uint64_t after)
{
	Mpiv__NdOutcome *outs = NULL, **ptrs = NULL;
	Mpiv__NdLog lg = MPIV__ND_LOG__INIT;
	size_t i = 0, chunk, sent = 0;

	while (i < rs->nnd && rs->nd[i].nd_no + rs->nd[i].repeat - 1 <= after)
		i++;
	chunk = rs->nnd - i < ND_CHUNK_OUTCOMES ? rs->nnd - i :
	    ND_CHUNK_OUTCOMES;
	if (chunk > 0 && ((outs = calloc(chunk, sizeof(*outs))) == NULL ||
	    (ptrs = calloc(chunk, sizeof(*ptrs))) == NULL)) {
		free(outs);
		log_errorx("cm out of memory sending the nd log job=%s rank=%d",
		    s->job->id, s->rank);
		session_error(s, "channel memory out of memory");
		return;
	}
	do {
		size_t n = 0, bytes = 0;

		while (i < rs->nnd && n < chunk && (n == 0 ||
		    bytes + nd_wire_bytes(&rs->nd[i]) <= ND_CHUNK_BYTES)) {
			const struct nd_out *d = &rs->nd[i++];
			Mpiv__NdOutcome *o = &outs[n];

			mpiv__nd_outcome__init(o);
			o->nd_no = d->nd_no;
			o->repeat = d->repeat;
			if (d->nd_no <= after) {	/* straddles: clip */
				o->nd_no = after + 1;
				o->repeat = d->nd_no + d->repeat - 1 - after;
			}
			o->kind = d->kind;
			o->flag = d->flag;
			o->post_no = d->post_no;
			o->src = d->src;
			o->seq = d->seq;
			o->n_indices = d->nidx;
			o->indices = d->idx;
			ptrs[n++] = o;
			bytes += nd_wire_bytes(d);
		}
		lg.n_outcomes = n;
		lg.outcomes = ptrs;
		lg.last = i >= rs->nnd;
		sent += n;
		if (conn_send(s->c, MPIV__MSG_TYPE__MSG_ND_LOG, &lg.base, NULL,
		    0) < 0)
			break;
	} while (i < rs->nnd);
	log_debug("cm nd log sent job=%s rank=%d records=%zu after=%llu "
	    "upto=%llu", s->job->id, s->rank, sent,
	    (unsigned long long)after, (unsigned long long)rs->nd_end);
	free(outs);
	free(ptrs);
}
