/*
 * digest.c: the digests of the sends a Channel Memory holds, and the
 * check of a re-executing sender against them.
 *
 * Every Send carries a 64-bit digest of its context, tag, size and
 * payload (libmpi-lite/digest.c). The receiver's home CM keeps, per
 * channel (sender -> receiver), the digests of sequence numbers base ..
 * base+n-1. A re-executing sender does not send again what the CM holds:
 * it sends Send{check} with the digest alone, and a digest that differs
 * from the one kept means the re-execution computed something else than
 * the incarnation it replaces (a program that reads its pid, the clock,
 * /dev/urandom ...). That ends the job with "replay diverged" instead of
 * letting it finish with a wrong answer.
 *
 * The digests outlive the payloads (a receiver's checkpoint frees those):
 * a sender restored from its checkpoint k re-executes every send after k,
 * whoever received them. They go when the sender says its checkpoint k is
 * durable (DigestTrim{seqs at k}); a restore never goes back further. A
 * job without checkpoints keeps them all, 8 bytes a message, like its log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

/* The history of channel src -> dst, or NULL (allocated when asked). */
static struct dighist *
digest_hist(struct job *j, int32_t dst, int32_t src, bool create)
{
	struct rank_state *rs = &j->ranks[dst];

	if (rs->dig == NULL) {
		if (!create)
			return NULL;
		if ((rs->dig = calloc((size_t)j->nranks,
		    sizeof(*rs->dig))) == NULL)
			return NULL;
		j->log_meta_bytes += (uint64_t)j->nranks * sizeof(*rs->dig);
	}
	return &rs->dig[src];
}

/* Forgets every digest of h. */
static void
digest_clear(struct job *j, struct dighist *h)
{
	j->log_meta_bytes -= (uint64_t)h->cap * sizeof(*h->d);
	free(h->d);
	memset(h, 0, sizeof(*h));
}

/*
 * Keeps digest d of send seq on channel src -> dst, the first time that
 * sequence is accepted. A sequence already kept (the sender died
 * mid-payload and its successor sends it again) must carry the same
 * digest: -1 with the reason in why when it does not. 0 otherwise (also
 * when memory runs out: that send just cannot be checked).
 */
int
digest_put(struct job *j, int32_t dst, int32_t src, uint64_t seq,
    uint64_t d, char *why, size_t cap)
{
	struct dighist *h;

	if (j->relay_only || (h = digest_hist(j, dst, src, true)) == NULL)
		return 0;
	if (h->n > 0 && seq >= h->base && seq < h->base + h->n) {
		uint64_t old = h->d[seq - h->base];

		if (old == d)
			return 0;
		snprintf(why, cap, "replay diverged: rank %d, send #%" PRIu64
		    " to rank %d: sent again with other contents than its "
		    "failed incarnation sent (digest %016" PRIx64 "; logged %016"
		    PRIx64 ")", src, seq, dst, d, old);
		return -1;
	}
	if (h->n > 0 && seq != h->base + h->n) {
		/* Not the next one (below a trim, or a gap): start over. */
		log_debug("cm digest history restarts job=%s src=%d dst=%d "
		    "seq=%" PRIu64 " had=%" PRIu64 "..%" PRIu64, j->id, src,
		    dst, seq, h->base, h->base + h->n - 1);
		h->n = 0;
	}
	if (h->n == h->cap) {
		uint32_t ncap = h->cap != 0 ? h->cap * 2 : 64;
		uint64_t *nd = realloc(h->d, ncap * sizeof(*nd));

		if (nd == NULL)
			return 0;
		j->log_meta_bytes += (uint64_t)(ncap - h->cap) * sizeof(*nd);
		h->d = nd;
		h->cap = ncap;
	}
	if (h->n == 0)
		h->base = seq;
	h->d[h->n++] = d;
	return 0;
}

/*
 * A re-executing sender's Send{check}: compares its digest with the one
 * kept. 1 when equal, 0 when none is kept (trimmed, or never held), -1
 * with the reason in why when they differ.
 */
int
digest_check(struct job *j, const Mpiv__Send *snd, char *why, size_t cap)
{
	struct dighist *h = digest_hist(j, snd->dst, snd->src, false);
	uint64_t old;

	if (h == NULL || h->n == 0 || snd->seq < h->base ||
	    snd->seq >= h->base + h->n)
		return 0;
	old = h->d[snd->seq - h->base];
	if (old == snd->digest)
		return 1;
	snprintf(why, cap, "replay diverged: rank %d, send #%" PRIu64 " to "
	    "rank %d (tag %d): not the message its failed incarnation sent "
	    "(%" PRIu64 " bytes, digest %016" PRIx64 "; logged %016" PRIx64
	    "): the program depends on something outside MPI (pid, clock, "
	    "random numbers, input)", snd->src, snd->seq, snd->dst, snd->tag,
	    snd->size, snd->digest, old);
	return -1;
}

/* A message never delivered was forgotten (its sender died mid-payload):
   its digest and every later one go with it. */
void
digest_truncate(struct job *j, int32_t dst, int32_t src, uint64_t seq)
{
	struct dighist *h = digest_hist(j, dst, src, false);

	if (h == NULL || h->n == 0 || seq >= h->base + h->n)
		return;
	h->n = seq > h->base ? (uint32_t)(seq - h->base) : 0;
}

/* Drops the digests of h up to sequence upto. */
static void
digest_drop(struct job *j, struct dighist *h, uint64_t upto)
{
	uint64_t k;

	if (h->n == 0 || upto < h->base)
		return;
	k = upto - h->base + 1;
	if (k >= h->n) {
		digest_clear(j, h);
		return;
	}
	memmove(h->d, h->d + k, (size_t)(h->n - k) * sizeof(*h->d));
	h->n -= (uint32_t)k;
	h->base += k;
}

/* The digests of src's sends up to seqs[r] go, for every home rank r. */
void
digest_trim_apply(struct job *j, int32_t src, const uint64_t *seqs, size_t n)
{
	for (int32_t r = 0; r < j->nranks && (size_t)r < n; r++) {
		struct dighist *h;

		if (!job_is_home(j, r) ||
		    (h = digest_hist(j, r, src, false)) == NULL)
			continue;
		digest_drop(j, h, seqs[r]);
	}
}

/* DigestTrim from a rank: its checkpoint ckpt_no is durable; the digests
   of its sends up to seqs[r] are useless for every receiver r here. */
void
digest_trim(struct session *s, const Mpiv__DigestTrim *t)
{
	struct job *j = s->job;

	digest_trim_apply(j, s->rank, t->seqs, t->n_seqs);
	store_digest_trim(j, s->rank, t->seqs, t->n_seqs);
	log_debug("cm digests trimmed job=%s src=%d ckpt=%" PRIu64, j->id,
	    s->rank, t->ckpt_no);
}

/* Frees the digest histories of receiver rs. */
void
digest_free(struct job *j, struct rank_state *rs)
{
	if (rs->dig == NULL)
		return;
	for (int32_t src = 0; src < j->nranks; src++)
		if (rs->dig[src].d != NULL)
			digest_clear(j, &rs->dig[src]);
	free(rs->dig);
	rs->dig = NULL;
	j->log_meta_bytes -= (uint64_t)j->nranks * sizeof(*rs->dig);
}
