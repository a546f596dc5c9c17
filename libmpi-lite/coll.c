/*
 * coll.c: blocking collectives, built only on the internal point-to-point
 * calls (mpiv_isend/irecv/waitall and the *_coll helpers) on the
 * communicator's collective context, so they never match user messages.
 *
 * Every algorithm has a fixed message pattern that depends only on the
 * arguments (rank, size, root, counts, datatype, op), never on timing:
 * receives name their source, waits are Waitall, and each collective kind
 * has its own tag. That keeps replay exact (a direct job logs no event for
 * a collective) and lets back-to-back collectives share a tag (messages
 * between two ranks are matched in order). Algorithms are picked by the
 * size of the data and the number of ranks (thresholds COLL_* below, the
 * same on every rank since they see the same sizes); MPIV_COLL forces one
 * (coll_conf). docs/COLLECTIVES.md describes them; coll_group.c has the
 * building blocks of the large-data reductions.
 *
 *   barrier        dissemination, ceil(log2 p) rounds
 *   bcast          binomial tree; a binomial scatter of p chunks, then a
 *                  ring allgather of them, only when MPIV_COLL asks
 *   reduce         binomial tree; non-commutative ops use a tree rooted
 *                  at rank 0 that combines ranges in rank order, then
 *                  forward to root; large, commutative: recursive-halving
 *                  reduce-scatter, then a binomial gather of the blocks
 *   allreduce      recursive doubling with the non-power-of-two fold,
 *                  order-preserving; large, commutative: reduce-scatter
 *                  by recursive halving + allgather by recursive doubling
 *                  (Rabenseifner); a ring (reduce-scatter + allgather)
 *                  and a linear reduce-scatter + allgather (any op)
 *                  only when MPIV_COLL asks for them
 *   gather/scatter binomial trees on packed bytes (2 ranks; else linear)
 *   gatherv/scatterv  linear (only the root knows the counts)
 *   allgather      small: Bruck (ceil(log2 p) rounds on packed bytes);
 *                  else ring
 *   allgatherv     ring
 *   alltoall(v)    small blocks: every send and receive posted at once;
 *                  else pairwise exchange
 *   scan/exscan    recursive doubling, order-preserving
 *   reduce_scatter(_block)  commutative ops, enough data: ring; else
 *                  reduce to rank 0, then scatter(v)
 *
 * The relay protocol, on 3 ranks or more, replaces the trees' rounds
 * (each two hops through a CM): bcast is the root's multicast (one
 * frame to each CM for all its receivers, mpiv_mcast_coll); barrier,
 * allreduce, allgather and allgatherv send to rank 0 in one round, then
 * rank 0 multicasts; reduce, gather and scatter go to or from the root
 * in one round. Reductions there combine in the order of the algorithm
 * they replace (same bits). The direct protocol takes some of them too
 * (its multicast is one send per receiver): Gather and Scatter always,
 * Reduce, Allgatherv up to 1 MiB and Allreduce of 16-128 KiB up to 16
 * ranks, and from 8 to 16 ranks Barrier, small Allreduce and small
 * Allgather (COLL_FLAT_* below).
 *
 * Reductions work on temporaries in the datatype's own layout (so user
 * ops get the buffers they expect); the op is applied with
 * mpiv_op_apply(in, inout) = in op inout, keeping lower ranks on the left
 * in the order-preserving algorithms. The others are used for commutative
 * ops only; each block of their result is combined on one rank and
 * copied to the others, so every rank gets the same bits.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

enum coll_tag {
	TAG_BARRIER = 1, TAG_BCAST, TAG_REDUCE, TAG_ALLREDUCE, TAG_GATHER,
	TAG_GATHERV, TAG_SCATTER, TAG_SCATTERV, TAG_ALLGATHER, TAG_ALLGATHERV,
	TAG_ALLTOALL, TAG_ALLTOALLV, TAG_SCAN, TAG_EXSCAN, TAG_RSCAT,
	TAG_RSCAT_BLOCK,
};

/* The MPI call of a blocking collective's tag, NULL: not one. */
const char *
mpiv_coll_tag_name(int tag)
{
	static const char *const names[] = { NULL, "MPI_Barrier",
	    "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather",
	    "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather",
	    "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Scan",
	    "MPI_Exscan", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block" };

	if (tag <= 0 || tag >= (int)(sizeof(names) / sizeof(names[0])))
		return NULL;
	return names[tag];
}

/*
 * Algorithm thresholds, in bytes of one rank's data (count * type size;
 * for alltoall and allgather, of one block). Every rank of a call sees
 * the same sizes, so all pick the same algorithm. Where the protocols
 * differ, relay messages cost more each (they pass through the
 * receiver's Channel Memory) and the direct ones more per byte (the
 * sender logs every payload), so the relay switches to the algorithms
 * with more, smaller messages later. docs/BENCHMARKS.md, "Collective
 * algorithms", has the measurements behind these.
 */
/* Allreduce: Rabenseifner from here (commutative ops, count >= p). */
#define COLL_ALLREDUCE_RSAG_MIN_DIRECT	(32 * 1024)
#define COLL_ALLREDUCE_RSAG_MIN_RELAY	(256 * 1024)
/* Bcast: the scatter + ring allgather only when MPIV_COLL asks for it:
   the binomial tree was faster at every size measured in both protocols
   (direct: 256 KiB to 4 MiB on 4 and 8 ranks, by 25-40 %), and the
   relay's multicast (below) faster still. */
/* Reduce: reduce-scatter + gather from here (commutative ops, count >= p).
   It moves fewer bytes through the root but more in all than the
   binomial tree, which wins below a few MiB when ranks share cores. */
#define COLL_REDUCE_RSG_MIN		(4 * 1024 * 1024)
/* Reduce_scatter: the ring from here (commutative ops; total data). */
#define COLL_RSCAT_RING_MIN		(16 * 1024)
/* Allgather: Bruck below this many bytes per block (2x faster than the
   ring up to 16 KiB on 8 ranks, in both protocols; in direct jobs
   faster up to 256 KiB a block on 4 and 8 ranks, even at 1 MiB). */
#define COLL_ALLGATHER_BRUCK_MAX_RELAY	(32 * 1024)
#define COLL_ALLGATHER_BRUCK_MAX_DIRECT	(256 * 1024 + 1)
/* Alltoall(v): everything posted at once below this many bytes per block
   (alltoallv: the largest block of the rank). In relay jobs only for
   tiny blocks: on 8 ranks all messages at once through one CM lost to
   the pairwise exchange from 256 B on. */
#define COLL_ALLTOALL_LINEAR_MAX_DIRECT	(16 * 1024)
#define COLL_ALLTOALL_LINEAR_MAX_RELAY	256

/* The multicast algorithms (rank 0 or the root gathers what it needs in
   one round, then multicasts: one frame to each CM names every receiver
   it serves, and the CM keeps one copy; mpiv_mcast_coll) are the relay's
   choice on 3 ranks or more: Bcast and Barrier always, Allreduce while
   rank 0's p blocks take at most COLL_ALLREDUCE_MCAST_MAX_RELAY bytes,
   Allgather up to COLL_ALLGATHER_MCAST_MAX_RELAY bytes per block (the
   largest measured, 2-2.9x faster than the trees and rings on 4 to 16
   ranks at every size; docs/BENCHMARKS.md). */
#define COLL_ALLREDUCE_MCAST_MAX_RELAY	(64 * 1024 * 1024)
/* Reduce on 3 ranks or more: the root receives every rank's data in
   one round while its p blocks take at most this much (the same
   messages as the tree, without its log2 p rounds: 10-25 % faster on 4
   and 8 ranks in the relay, 1.3-1.8x in direct jobs; beyond, the root's
   combining alone lost to the tree's spread work). Direct jobs only up
   to COLL_FLAT_MAX_P_DIRECT ranks. */
#define COLL_REDUCE_LINEAR_MAX		(16 * 1024 * 1024)
#define COLL_ALLGATHER_MCAST_MAX_RELAY	(256 * 1024)
/* Allgatherv's multicast: while every block, packed, takes at most this
   much in all (rank 0 packs them into one buffer). */
#define COLL_ALLGATHERV_MCAST_MAX_RELAY	(16 * 1024 * 1024)

/* The direct protocol sends a "multicast" one message per receiver, so
   the one-round algorithms only save the trees' rounds; with ranks
   sharing cores each round waits for every rank to be scheduled, and
   that was worth it (3 to 16 ranks on 2 cores; docs/BENCHMARKS.md,
   "Collectives, direct protocol"): Allreduce by rank 0 from 16 KiB to
   128 KiB of one rank's data (1.2-1.7x faster), and at every size up to
   that from 8 ranks; Barrier and Allgather (up to 8 KiB a block) by
   rank 0 from 8 ranks (1.3-3x; slower on 4). Gather and Scatter are
   linear (1.2-2.5x), Reduce as above. Only up to COLL_FLAT_MAX_P_DIRECT
   ranks (the most measured; rank 0's or the root's work grows with p,
   the trees' with log2 p), Gather and Scatter at any count (the tree
   moves the blocks several times). */
#define COLL_FLAT_MAX_P_DIRECT		16
#define COLL_FLAT_MIN_P_DIRECT		8
#define COLL_ALLREDUCE_MCAST_MIN_DIRECT	(16 * 1024)
#define COLL_ALLREDUCE_MCAST_MAX_DIRECT	(128 * 1024)
#define COLL_ALLGATHER_MCAST_MAX_DIRECT	(8 * 1024)
/* Allgatherv by rank 0 in direct jobs, 3 to 16 ranks, while every block
   takes at most this much in all (1.1-4.8x faster than the ring up to 2
   MiB in all on 4 to 16 ranks, slower from 4 MiB). */
#define COLL_ALLGATHERV_MCAST_MAX_DIRECT (1024 * 1024)

/* ---------------- algorithm choice ---------------- */

enum coll_kind {
	CK_ALLREDUCE, CK_BCAST, CK_REDUCE, CK_RSCAT, CK_ALLGATHER,
	CK_ALLTOALL, CK_BARRIER, CK_GATHER, CK_SCATTER, CK_ALLGATHERV,
	CK_COUNT
};

/* Algorithm numbers per kind: index in coll_algo_names. */
enum { AR_RD, AR_RSAG, AR_RING, AR_LINEAR, AR_MCAST };
enum { BC_BINOMIAL, BC_SCAG, BC_MCAST };
enum { RD_BINOMIAL, RD_RSG, RD_LINEAR };
enum { RS_REDUCE, RS_RING };
enum { AG_RING, AG_BRUCK, AG_MCAST };
enum { AA_PAIRWISE, AA_LINEAR };
enum { BA_DISSEMINATION, BA_MCAST };
enum { GS_BINOMIAL, GS_LINEAR };	/* gather, scatter */
enum { AGV_RING, AGV_MCAST };

static const char *const coll_kind_names[CK_COUNT] = {
	"allreduce", "bcast", "reduce", "reduce_scatter", "allgather",
	"alltoall", "barrier", "gather", "scatter", "allgatherv",
};
static const char *const coll_algo_names[CK_COUNT][5] = {
	[CK_ALLREDUCE] = { "recursive_doubling", "rabenseifner", "ring",
	    "linear", "multicast" },
	[CK_BCAST] = { "binomial", "scatter_allgather", "multicast" },
	[CK_REDUCE] = { "binomial", "reduce_scatter_gather", "linear" },
	[CK_RSCAT] = { "reduce_scatterv", "ring" },
	[CK_ALLGATHER] = { "ring", "bruck", "multicast" },
	[CK_ALLTOALL] = { "pairwise", "linear" },
	[CK_BARRIER] = { "dissemination", "multicast" },
	[CK_GATHER] = { "binomial", "linear" },
	[CK_SCATTER] = { "binomial", "linear" },
	[CK_ALLGATHERV] = { "ring", "multicast" },
};

/* Forced algorithm per kind, -1 for the size-based choice. */
static int coll_forced[CK_COUNT];
/* The job runs the direct protocol (MPIV_PROTOCOL, set for every rank
   of the job and every incarnation alike). */
static bool coll_direct;

/*
 * Reads MPIV_COLL once: a comma-separated list of KIND:ALGORITHM
 * ("allreduce:ring,bcast:scatter_allgather") forcing an algorithm where
 * its conditions hold (see docs/ENVIRONMENT.md); unknown words are
 * ignored (the library never prints). Every rank of a job has the same
 * environment, and a restarted rank too, so the choice stays uniform.
 */
static void
coll_conf(void)
{
	static bool done;
	const char *env, *p;

	if (done)
		return;
	done = true;
	env = getenv("MPIV_PROTOCOL");
	coll_direct = env != NULL && strcmp(env, "direct") == 0;
	for (int k = 0; k < CK_COUNT; k++)
		coll_forced[k] = -1;
	if ((env = getenv("MPIV_COLL")) == NULL)
		return;
	for (p = env; *p != '\0';) {
		size_t n = strcspn(p, ","), kl;
		const char *colon = memchr(p, ':', n);
		if (colon != NULL) {
			kl = (size_t)(colon - p);
			for (int k = 0; k < CK_COUNT; k++) {
				if (strlen(coll_kind_names[k]) != kl ||
				    strncmp(p, coll_kind_names[k], kl) != 0)
					continue;
				for (int a = 0; a < 5 &&
				    coll_algo_names[k][a] != NULL; a++) {
					const char *nm = coll_algo_names[k][a];
					if (strlen(nm) == n - kl - 1 &&
					    strncmp(colon + 1, nm, n - kl - 1) ==
					    0)
						coll_forced[k] = a;
				}
			}
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

/* The forced algorithm of a kind if it is one of the allowed ones
   (bit a of `allowed` set), else `dflt`. */
static int
coll_pick(enum coll_kind k, unsigned allowed, int dflt)
{
	int f;

	coll_conf();
	f = coll_forced[k];
	return f >= 0 && (allowed & (1u << f)) ? f : dflt;
}

/* ---------------- buffers ---------------- */

/* A temporary laid out like count elements of dt; *raw is what to free.
   NULL on overflow or out of memory (or count 0: then *raw is NULL). */
static void *
coll_alloc(int count, MPI_Datatype dt, void **raw)
{
	MPI_Aint ext = dt->extent, lo, span;

	*raw = NULL;
	if (count <= 0)
		return NULL;
	lo = dt->true_lb + (ext < 0 ? (MPI_Aint)(count - 1) * ext : 0);
	if (__builtin_mul_overflow((MPI_Aint)(count - 1), ext < 0 ? -ext : ext,
	    &span) || __builtin_add_overflow(span, dt->true_extent, &span) ||
	    span < 0)
		return NULL;
	if ((*raw = malloc((size_t)span + 1)) == NULL)
		return NULL;
	return coll_at(*raw, -lo);
}

/* Copies count elements of dt between two buffers of the same layout. */
static void
coll_copy_same(const void *src, void *dst, int count, MPI_Datatype dt)
{
	if (src == dst || count <= 0)
		return;
	if (dt->contiguous) {
		memmove(coll_at(dst, dt->true_lb), coll_at(src, dt->true_lb),
		    (size_t)count * dt->size);
		return;
	}
	for (int i = 0; i < count; i++) {
		MPI_Aint base = (MPI_Aint)i * dt->extent;
		for (size_t j = 0; j < dt->nblocks; j++)
			memmove(coll_at(dst, base + dt->blocks[j].disp),
			    coll_at(src, base + dt->blocks[j].disp),
			    dt->blocks[j].len);
	}
}

/* Local copy between different (type, count): pack then unpack.
   MPI_ERR_TRUNCATE if the receive side is smaller. */
static int
coll_copy(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    int rcount, MPI_Datatype rdt)
{
	size_t sb = mpiv_dt_packed_size(sdt, scount);
	size_t rb = mpiv_dt_packed_size(rdt, rcount);
	char *tmp;

	if (sb > rb)
		return MPI_ERR_TRUNCATE;
	if (sb == 0)
		return MPI_SUCCESS;
	if (sdt == rdt && scount == rcount) {
		coll_copy_same(sbuf, rbuf, scount, sdt);
		return MPI_SUCCESS;
	}
	if ((tmp = malloc(sb)) == NULL)
		return MPI_ERR_NO_MEM;
	mpiv_dt_pack(sbuf, scount, sdt, tmp);
	mpiv_dt_unpack(tmp, sb, rbuf, rcount, rdt);
	free(tmp);
	return MPI_SUCCESS;
}

int
mpiv_coll_copy(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    int rcount, MPI_Datatype rdt)
{
	return coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
}

static int
coll_waitall(int n, MPI_Request *reqs, int rc)
{
	int rc2 = n > 0 ? mpiv_waitall(n, reqs, NULL) : MPI_SUCCESS;

	return rc != MPI_SUCCESS ? rc : rc2;
}

/* ---------------- barrier ---------------- */

struct coll_blocks {
	void *base;
	int count;
	MPI_Datatype dt;
};

/* Block q (count elements of dt each) of a coll_blocks array. */
static void *
coll_at_block(void *arg, int q)
{
	struct coll_blocks *b = arg;

	return coll_elem(b->base, (MPI_Aint)q * b->count, b->dt);
}

/*
 * One round to the root (the first half of the multicast algorithms,
 * the linear Reduce and Gather): root receives count elements of dt
 * from every other rank q into at(arg, q), all posted at once; the
 * others send sbuf to it.
 */
static int
coll_fanin(const void *sbuf, int count, MPI_Datatype dt,
    void *(*at)(void *arg, int q), void *arg, int root, MPI_Comm comm,
    int tag)
{
	int size = comm->size, rc = MPI_SUCCESS, n = 0;
	MPI_Request *reqs;

	if (comm->rank != root)
		return mpiv_send_coll(sbuf, count, dt, root, tag, comm);
	if ((reqs = malloc((size_t)size * sizeof(*reqs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int q = 0; q < size && rc == MPI_SUCCESS; q++) {
		if (q == root)
			continue;
		rc = mpiv_irecv(at(arg, q), count, dt, q, tag, comm,
		    MPIV_COLL_CONTEXT(comm), &reqs[n]);
		if (rc == MPI_SUCCESS)
			n++;
	}
	rc = coll_waitall(n, reqs, rc);
	free(reqs);
	return rc;
}

static int coll_bcast_mcast(void *buf, int count, MPI_Datatype dt, int root,
    MPI_Comm comm, int tag);

static void *
coll_at_null(void *arg, int q)
{
	return NULL;
}

/* Every rank tells rank 0 it arrived; rank 0 multicasts the release. */
static int
coll_barrier_mcast(MPI_Comm comm, int tag)
{
	int rc = coll_fanin(NULL, 0, MPI_BYTE, coll_at_null, NULL, 0, comm,
	    tag);

	return rc != MPI_SUCCESS ? rc : coll_bcast_mcast(NULL, 0, MPI_BYTE, 0,
	    comm, tag);
}

static int
coll_barrier(MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;

	coll_conf();
	if (size > 2 && coll_pick(CK_BARRIER, 1u << BA_DISSEMINATION |
	    1u << BA_MCAST, !coll_direct || (size >= COLL_FLAT_MIN_P_DIRECT &&
	    size <= COLL_FLAT_MAX_P_DIRECT) ? BA_MCAST : BA_DISSEMINATION) ==
	    BA_MCAST)
		return coll_barrier_mcast(comm, tag);
	for (int k = 1; k < size && rc == MPI_SUCCESS; k <<= 1)
		rc = mpiv_sendrecv_coll(NULL, 0, MPI_BYTE, (rank + k) % size,
		    NULL, 0, MPI_BYTE, (rank - k + size) % size, tag, comm);
	return rc;
}

/* ---------------- bcast ---------------- */

static int
coll_bcast_binomial(void *buf, int count, MPI_Datatype dt, int root,
    MPI_Comm comm, int tag)
{
	int size = comm->size, vrank = (comm->rank - root + size) % size;
	int mask = 1, rc = MPI_SUCCESS, n = 0;
	MPI_Request reqs[sizeof(int) * CHAR_BIT];

	while (mask < size) {
		if (vrank & mask) {
			rc = mpiv_recv_coll(buf, count, dt,
			    (vrank - mask + root) % size, tag, comm);
			if (rc != MPI_SUCCESS)
				return rc;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
		if (vrank + mask < size)
			rc = mpiv_isend(buf, count, dt,
			    (vrank + mask + root) % size, tag, comm,
			    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD,
			    &reqs[n++]);
	if (rc != MPI_SUCCESS)
		n--;
	return coll_waitall(n, reqs, rc);
}

/* Ranks in the binomial subtree of tree rank v. */
static int
coll_subtree(int v, int size)
{
	int low;

	if (v == 0)
		return size;
	low = v & -v;
	return low < size - v ? low : size - v;
}

/*
 * Scatter + allgather (van de Geijn) on nb packed bytes: the data is cut
 * into p chunks of ceil(nb / p) bytes (vrank v owns chunk v); a binomial
 * scatter gives each rank its chunk, then a ring allgather passes every
 * chunk around. Non-contiguous types go through a packed copy.
 */
static int
coll_bcast_scag(void *buf, int count, MPI_Datatype dt, int root,
    MPI_Comm comm, int tag)
{
	int size = comm->size, vrank = (comm->rank - root + size) % size;
	int mask, n = 0, rc = MPI_SUCCESS;
	size_t nb = mpiv_dt_packed_size(dt, count), cs = (nb + size - 1) / size;
	MPI_Request reqs[sizeof(int) * CHAR_BIT];
	char *bytes, *packed = NULL;

#define CHUNK(v) ((v) * cs < nb ? (v) * cs : nb)
	if (mpiv_dt_is_contig(dt))
		bytes = coll_at(buf, dt->true_lb);
	else {
		if ((packed = malloc(nb)) == NULL)
			return MPI_ERR_NO_MEM;
		if (vrank == 0)
			mpiv_dt_pack(buf, count, dt, packed);
		bytes = packed;
	}
	if (vrank == 0) {
		mask = coll_pof2(size);
		if (mask >= size)
			mask >>= 1;
		mask <<= 1;
	} else {
		int v0 = vrank, v1 = vrank + coll_subtree(vrank, size);
		mask = vrank & -vrank;
		rc = mpiv_recv_coll(bytes + CHUNK((size_t)v0),
		    (int)(CHUNK((size_t)v1) - CHUNK((size_t)v0)), MPI_BYTE,
		    (vrank - mask + root) % size, tag, comm);
	}
	for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1) {
		int c = vrank + mask;
		size_t c0, c1;
		if (c >= size)
			continue;
		c0 = CHUNK((size_t)c);
		c1 = CHUNK((size_t)(c + coll_subtree(c, size)));
		rc = mpiv_isend(bytes + c0, (int)(c1 - c0), MPI_BYTE,
		    (c + root) % size, tag, comm, MPIV_COLL_CONTEXT(comm),
		    MPIV_SEND_STANDARD, &reqs[n++]);
	}
	if (rc != MPI_SUCCESS && n > 0)
		n--;
	rc = coll_waitall(n, reqs, rc);
	/* Ring in vrank order: at step s pass chunk vrank - s on. */
	for (int s = 0; s < size - 1 && rc == MPI_SUCCESS; s++) {
		size_t sb = (size_t)((vrank - s + size) % size);
		size_t rb = (size_t)((vrank - s - 1 + size) % size);
		rc = mpiv_sendrecv_coll(bytes + CHUNK(sb),
		    (int)(CHUNK(sb + 1) - CHUNK(sb)), MPI_BYTE,
		    (vrank + 1 + root) % size, bytes + CHUNK(rb),
		    (int)(CHUNK(rb + 1) - CHUNK(rb)), MPI_BYTE,
		    (vrank - 1 + size + root) % size, tag, comm);
	}
#undef CHUNK
	if (packed != NULL) {
		if (rc == MPI_SUCCESS && vrank != 0)
			mpiv_dt_unpack(packed, nb, buf, count, dt);
		free(packed);
	}
	return rc;
}

/* The root multicasts the data to every other rank, which receives it. */
static int
coll_bcast_mcast(void *buf, int count, MPI_Datatype dt, int root,
    MPI_Comm comm, int tag)
{
	int size = comm->size, *dests, rc;

	if (comm->rank != root)
		return mpiv_recv_coll(buf, count, dt, root, tag, comm);
	if ((dests = malloc((size_t)size * sizeof(*dests))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int s = 1; s < size; s++)
		dests[s - 1] = (root + s) % size;
	rc = mpiv_mcast_coll(buf, count, dt, dests, size - 1, tag, comm);
	free(dests);
	return rc;
}

static int
coll_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
    int tag)
{
	size_t nb = mpiv_dt_packed_size(dt, count);
	int algo;

	if (comm->size == 1 || nb == 0)
		return MPI_SUCCESS;
	coll_conf();
	algo = !coll_direct && comm->size > 2 ? BC_MCAST : BC_BINOMIAL;
	if (nb <= INT_MAX)
		algo = coll_pick(CK_BCAST, 1u << BC_BINOMIAL | 1u << BC_SCAG |
		    1u << BC_MCAST, algo);
	else
		algo = BC_BINOMIAL;
	if (algo == BC_MCAST)
		return coll_bcast_mcast(buf, count, dt, root, comm, tag);
	if (algo == BC_SCAG)
		return coll_bcast_scag(buf, count, dt, root, comm, tag);
	return coll_bcast_binomial(buf, count, dt, root, comm, tag);
}

/* ---------------- reduce ---------------- */

/* acc = (acc_is_left ? acc op tmp : tmp op acc), result in acc. */
static int
coll_combine(MPI_Op op, void *acc, void *tmp, int count, MPI_Datatype dt,
    bool acc_is_left)
{
	int rc;

	if (!acc_is_left || op->commute)
		return mpiv_op_apply(op, tmp, acc, count, dt);
	rc = mpiv_op_apply(op, acc, tmp, count, dt);
	if (rc == MPI_SUCCESS)
		coll_copy_same(tmp, acc, count, dt);
	return rc;
}

/*
 * Reduce-scatter + gather (commutative ops, count >= p): the group of
 * coll_group rooted at root reduce-scatters by recursive halving, then
 * member 0 (the root) gathers the blocks straight into rbuf.
 */
static int
coll_reduce_rsg(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, int root, MPI_Comm comm, int tag)
{
	struct coll_group g;
	void *acc, *tmp, *rawa = NULL, *rawt;
	int rc;

	coll_group_init(&g, comm, root);
	if (g.vrank == 0)
		acc = rbuf;
	else if ((acc = coll_alloc(count, dt, &rawa)) == NULL)
		return MPI_ERR_NO_MEM;
	if ((tmp = coll_alloc(count, dt, &rawt)) == NULL) {
		free(rawa);
		return MPI_ERR_NO_MEM;
	}
	coll_copy_same(sbuf, acc, count, dt);
	rc = coll_group_fold(&g, acc, tmp, count, dt, op, comm, tag);
	if (rc == MPI_SUCCESS && g.newrank >= 0)
		rc = coll_group_rs(&g, acc, tmp, count, dt, op, comm, tag);
	if (rc == MPI_SUCCESS && g.newrank >= 0)
		rc = coll_group_gather(&g, acc, count, dt, comm, tag);
	free(rawa);
	free(rawt);
	return rc;
}

/*
 * The root receives every rank's data at once (all receives posted, one
 * round) and combines it as the binomial tree of coll_reduce would:
 * level by level, tree rank v taking v + mask's range, so the result
 * has the tree's bits. The others send once.
 */
static int
coll_reduce_linear(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, int root, MPI_Comm comm, int tag)
{
	int size = comm->size, troot = op->commute ? root : 0, rc;
	struct coll_blocks b = { .count = count, .dt = dt };
	void *raw;

	if (comm->rank != root)
		return coll_fanin(sbuf, count, dt, NULL, NULL, root, comm, tag);
	if ((b.base = coll_alloc(count * size, dt, &raw)) == NULL)
		return MPI_ERR_NO_MEM;
	/* block q: rank q's data; tree rank v is rank (v + troot) % p */
#define TREE(v) coll_at_block(&b, ((v) + troot) % size)
	coll_copy_same(sbuf, coll_at_block(&b, root), count, dt);
	rc = coll_fanin(sbuf, count, dt, coll_at_block, &b, root, comm, tag);
	for (int mask = 1; mask < size && rc == MPI_SUCCESS; mask <<= 1)
		for (int v = 0; v + mask < size && rc == MPI_SUCCESS;
		    v += 2 * mask)
			rc = coll_combine(op, TREE(v), TREE(v + mask), count,
			    dt, true);
	if (rc == MPI_SUCCESS)
		coll_copy_same(TREE(0), rbuf, count, dt);
#undef TREE
	free(raw);
	return rc;
}

static int
coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, int root, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank;
	int troot = op->commute ? root : 0;
	int vrank = (rank - troot + size) % size, rc = MPI_SUCCESS;
	void *acc, *tmp, *rawa, *rawt;

	if (count == 0)
		return MPI_SUCCESS;
	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf;
	if (size == 1) {
		coll_copy_same(sbuf, rbuf, count, dt);
		return MPI_SUCCESS;
	}
	{
		size_t bytes = (size_t)count * dt->size;
		unsigned allowed = 1u << RD_BINOMIAL;
		int algo = RD_BINOMIAL;

		coll_conf();
		if (op->commute && count >= size) {
			allowed |= 1u << RD_RSG;
			if (bytes >= COLL_REDUCE_RSG_MIN)
				algo = RD_RSG;
		}
		if (count <= INT_MAX / size) {
			allowed |= 1u << RD_LINEAR;
			if (size > 2 && bytes <= COLL_REDUCE_LINEAR_MAX /
			    (size_t)size && (!coll_direct ||
			    size <= COLL_FLAT_MAX_P_DIRECT))
				algo = RD_LINEAR;
		}
		algo = coll_pick(CK_REDUCE, allowed, algo);
		if (algo == RD_RSG)
			return coll_reduce_rsg(sbuf, rbuf, count, dt, op, root,
			    comm, tag);
		if (algo == RD_LINEAR)
			return coll_reduce_linear(sbuf, rbuf, count, dt, op,
			    root, comm, tag);
	}
	acc = coll_alloc(count, dt, &rawa);
	tmp = coll_alloc(count, dt, &rawt);
	if (acc == NULL || tmp == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	coll_copy_same(sbuf, acc, count, dt);
	/* Node v gathers the range [v, v + 2^k) of tree ranks: children
	   v + 1, v + 2, v + 4 ... hold the next ranges in order. */
	for (int mask = 1; mask < size && rc == MPI_SUCCESS; mask <<= 1) {
		if (vrank & mask) {
			rc = mpiv_send_coll(acc, count, dt,
			    (vrank - mask + troot) % size, tag, comm);
			break;
		}
		if (vrank + mask < size) {
			rc = mpiv_recv_coll(tmp, count, dt,
			    (vrank + mask + troot) % size, tag, comm);
			if (rc == MPI_SUCCESS)
				rc = coll_combine(op, acc, tmp, count, dt, true);
		}
	}
	if (rc != MPI_SUCCESS)
		goto out_free;
	if (troot != root) {
		if (rank == troot)
			rc = mpiv_send_coll(acc, count, dt, root, tag, comm);
		else if (rank == root)
			rc = mpiv_recv_coll(rbuf, count, dt, troot, tag, comm);
	} else if (rank == root)
		coll_copy_same(acc, rbuf, count, dt);
out_free:
	free(rawa);
	free(rawt);
	return rc;
}

/* ---------------- allreduce ---------------- */

static int coll_ring(void *rbuf, int rcount, const int *counts,
    const int *displs, MPI_Datatype rdt, MPI_Comm comm, int tag);

/* Recursive doubling on rbuf, order-preserving (any op). */
static int
coll_allreduce_rd(void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	int pof2, rem, newrank;
	void *tmp, *rawt;

	if ((tmp = coll_alloc(count, dt, &rawt)) == NULL)
		return MPI_ERR_NO_MEM;
	pof2 = coll_pof2(size);
	rem = size - pof2;
	/* Fold: among the first 2*rem ranks, even ones hand their data to
	   the next odd one and sit out. */
	if (rank < 2 * rem) {
		if (rank % 2 == 0) {
			rc = mpiv_send_coll(rbuf, count, dt, rank + 1, tag, comm);
			newrank = -1;
		} else {
			rc = mpiv_recv_coll(tmp, count, dt, rank - 1, tag, comm);
			if (rc == MPI_SUCCESS)
				rc = coll_combine(op, rbuf, tmp, count, dt,
				    false);
			newrank = rank / 2;
		}
	} else
		newrank = rank - rem;
	if (newrank >= 0) {
		for (int mask = 1; mask < pof2 && rc == MPI_SUCCESS;
		    mask <<= 1) {
			int np = newrank ^ mask;
			int peer = np < rem ? np * 2 + 1 : np + rem;
			rc = mpiv_sendrecv_coll(rbuf, count, dt, peer, tmp,
			    count, dt, peer, tag, comm);
			if (rc == MPI_SUCCESS)
				rc = coll_combine(op, rbuf, tmp, count, dt,
				    peer > rank);
		}
	}
	if (rc == MPI_SUCCESS && rank < 2 * rem) {
		if (rank % 2)
			rc = mpiv_send_coll(rbuf, count, dt, rank - 1, tag,
			    comm);
		else
			rc = mpiv_recv_coll(rbuf, count, dt, rank + 1, tag,
			    comm);
	}
	free(rawt);
	return rc;
}

/* Rabenseifner on rbuf (commutative ops, count >= pof2): fold, recursive
   halving reduce-scatter, recursive doubling allgather, unfold. */
static int
coll_allreduce_rsag(void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm, int tag)
{
	struct coll_group g;
	void *tmp, *rawt;
	int rc;

	if ((tmp = coll_alloc(count, dt, &rawt)) == NULL)
		return MPI_ERR_NO_MEM;
	coll_group_init(&g, comm, 0);
	rc = coll_group_fold(&g, rbuf, tmp, count, dt, op, comm, tag);
	if (rc == MPI_SUCCESS && g.newrank >= 0)
		rc = coll_group_rs(&g, rbuf, tmp, count, dt, op, comm, tag);
	if (rc == MPI_SUCCESS && g.newrank >= 0)
		rc = coll_group_ag(&g, rbuf, count, dt, comm, tag);
	if (rc == MPI_SUCCESS)
		rc = coll_group_unfold(&g, rbuf, count, dt, comm, tag);
	free(rawt);
	return rc;
}

/* Ring on rbuf (commutative ops, count >= p): ring reduce-scatter of p
   blocks, then ring allgather of them. */
static int
coll_allreduce_ring(void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm, int tag)
{
	int size = comm->size, *counts, *displs, rc;
	void *tmp, *rawt;

	if ((counts = malloc(2 * (size_t)size * sizeof(int))) == NULL)
		return MPI_ERR_NO_MEM;
	displs = counts + size;
	for (int b = 0; b < size; b++) {
		displs[b] = coll_block_disp(count, size, b);
		counts[b] = coll_block_disp(count, size, b + 1) - displs[b];
	}
	if ((tmp = coll_alloc(counts[0], dt, &rawt)) == NULL) {
		free(counts);
		return MPI_ERR_NO_MEM;
	}
	rc = coll_group_ring_rs(rbuf, tmp, counts, displs, dt, op, comm, tag);
	if (rc == MPI_SUCCESS)
		rc = coll_ring(rbuf, 0, counts, displs, dt, comm, tag);
	free(rawt);
	free(counts);
	return rc;
}

/*
 * Linear reduce-scatter + allgather on rbuf (count >= p, any op): rank r
 * owns block r of p; every rank sends each block to its owner at once,
 * the owner combines the p contributions in rank order (x0 op x1 op ...
 * op xp-1, so non-commutative ops keep their order), then sends its block
 * to every rank at once. Two rounds of p - 1 messages per rank, each
 * round without a chain of dependencies.
 */
static int
coll_allreduce_linear(void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, *counts, *displs;
	int n = 0, rc = MPI_SUCCESS, bmax;
	MPI_Request *reqs;
	void *tmp, *rawt = NULL, *acc;

	if ((counts = malloc(2 * (size_t)size * sizeof(int))) == NULL)
		return MPI_ERR_NO_MEM;
	displs = counts + size;
	for (int b = 0; b < size; b++) {
		displs[b] = coll_block_disp(count, size, b);
		counts[b] = coll_block_disp(count, size, b + 1) - displs[b];
	}
	bmax = counts[0];
	reqs = malloc(2 * (size_t)size * sizeof(*reqs));
	tmp = (size_t)bmax * size <= INT_MAX ? coll_alloc(bmax * size, dt,
	    &rawt) : NULL;
	if (reqs == NULL || tmp == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
#define TMPB(q) coll_elem(tmp, (MPI_Aint)(q) * bmax, dt)
#define OWN coll_elem(rbuf, displs[rank], dt)
	/* Round 1: block q to rank q; the others' parts of our block in. */
	for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
		int q = (rank - s + size) % size;
		if ((rc = mpiv_irecv(TMPB(q), counts[rank], dt, q, tag, comm,
		    MPIV_COLL_CONTEXT(comm), &reqs[n])) == MPI_SUCCESS)
			n++;
	}
	for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
		int q = (rank + s) % size;
		if ((rc = mpiv_isend(coll_elem(rbuf, displs[q], dt), counts[q],
		    dt, q, tag, comm, MPIV_COLL_CONTEXT(comm),
		    MPIV_SEND_STANDARD, &reqs[n])) == MPI_SUCCESS)
			n++;
	}
	rc = coll_waitall(n, reqs, rc);
	n = 0;
	if (rc != MPI_SUCCESS)
		goto out_free;
	/* x0 op (x1 op (... op xp-1)), from the right. */
	acc = rank == size - 1 ? OWN : TMPB(size - 1);
	for (int q = size - 2; q >= 0 && rc == MPI_SUCCESS; q--)
		rc = mpiv_op_apply(op, q == rank ? OWN : TMPB(q), acc,
		    counts[rank], dt);
	if (rc != MPI_SUCCESS)
		goto out_free;
	if (acc != OWN)
		coll_copy_same(acc, OWN, counts[rank], dt);
	/* Round 2: our block to everyone, theirs in. */
	for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
		int q = (rank - s + size) % size;
		if ((rc = mpiv_irecv(coll_elem(rbuf, displs[q], dt), counts[q],
		    dt, q, tag, comm, MPIV_COLL_CONTEXT(comm), &reqs[n])) ==
		    MPI_SUCCESS)
			n++;
	}
	for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
		int q = (rank + s) % size;
		if ((rc = mpiv_isend(OWN, counts[rank], dt, q, tag, comm,
		    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD, &reqs[n])) ==
		    MPI_SUCCESS)
			n++;
	}
	rc = coll_waitall(n, reqs, rc);
#undef TMPB
#undef OWN
out_free:
	free(rawt);
	free(reqs);
	free(counts);
	return rc;
}

/*
 * Rank 0 gathers every rank's data (one round, all receives posted at
 * once), combines them as recursive doubling does (coll_allreduce_rd:
 * the first 2 * rem ranks in pairs, b0 op b1 ..., then a balanced tree
 * over the pof2 results, the lower half on the left at each level), and
 * multicasts the result: two rounds, 2 (p - 1) messages, and the bits
 * the other algorithm gives (the direct protocol's, for the same data).
 */
static int
coll_allreduce_mcast(void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rc;
	int pof2 = coll_pof2(size), rem = size - pof2;
	struct coll_blocks b = { .count = count, .dt = dt };
	void *raw;

	if (comm->rank != 0) {
		rc = coll_fanin(rbuf, count, dt, NULL, NULL, 0, comm, tag);
		return rc != MPI_SUCCESS ? rc : coll_bcast_mcast(rbuf, count,
		    dt, 0, comm, tag);
	}
/* the block holding tree leaf v: a folded pair's odd rank, or v + rem */
#define LEAF(v) ((v) < rem ? 2 * (v) + 1 : (v) + rem)
	if ((b.base = coll_alloc(count * size, dt, &raw)) == NULL)
		return MPI_ERR_NO_MEM;
	coll_copy_same(rbuf, coll_at_block(&b, 0), count, dt);
	rc = coll_fanin(rbuf, count, dt, coll_at_block, &b, 0, comm, tag);
	for (int v = 0; v < rem && rc == MPI_SUCCESS; v++)
		rc = mpiv_op_apply(op, coll_at_block(&b, 2 * v),
		    coll_at_block(&b, 2 * v + 1), count, dt);
	for (int mask = 1; mask < pof2 && rc == MPI_SUCCESS; mask <<= 1)
		for (int g = 0; g < pof2 && rc == MPI_SUCCESS; g += 2 * mask)
			rc = mpiv_op_apply(op,
			    coll_at_block(&b, LEAF(g + mask - 1)),
			    coll_at_block(&b, LEAF(g + 2 * mask - 1)), count,
			    dt);
	if (rc == MPI_SUCCESS)
		coll_copy_same(coll_at_block(&b, LEAF(pof2 - 1)), rbuf, count,
		    dt);
#undef LEAF
	free(raw);
	return rc != MPI_SUCCESS ? rc : coll_bcast_mcast(rbuf, count, dt, 0,
	    comm, tag);
}

int
mpiv_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, MPI_Comm comm, int tag)
{
	int size = comm->size, algo = AR_RD;
	size_t bytes = (size_t)count * dt->size;
	unsigned allowed = 1u << AR_RD;

	if (count == 0)
		return MPI_SUCCESS;
	if (sbuf != MPI_IN_PLACE)
		coll_copy_same(sbuf, rbuf, count, dt);
	if (size == 1)
		return MPI_SUCCESS;
	coll_conf();
	if (op->commute && count >= size) {
		if (bytes >= (coll_direct ? COLL_ALLREDUCE_RSAG_MIN_DIRECT :
		    COLL_ALLREDUCE_RSAG_MIN_RELAY))
			algo = AR_RSAG;
		allowed |= 1u << AR_RSAG | 1u << AR_RING | 1u << AR_LINEAR;
	} else if (count >= size)
		allowed |= 1u << AR_LINEAR;
	if (count <= INT_MAX / size) {
		allowed |= 1u << AR_MCAST;
		if (!coll_direct && size > 2 && bytes <=
		    COLL_ALLREDUCE_MCAST_MAX_RELAY / (size_t)size)
			algo = AR_MCAST;
		if (coll_direct && size > 2 && size <= COLL_FLAT_MAX_P_DIRECT &&
		    bytes <= COLL_ALLREDUCE_MCAST_MAX_DIRECT &&
		    (bytes >= COLL_ALLREDUCE_MCAST_MIN_DIRECT ||
		    size >= COLL_FLAT_MIN_P_DIRECT))
			algo = AR_MCAST;
	}
	algo = coll_pick(CK_ALLREDUCE, allowed, algo);
	if (algo == AR_MCAST)
		return coll_allreduce_mcast(rbuf, count, dt, op, comm, tag);
	if (algo == AR_LINEAR)
		return coll_allreduce_linear(rbuf, count, dt, op, comm, tag);
	if (algo == AR_RSAG)
		return coll_allreduce_rsag(rbuf, count, dt, op, comm, tag);
	if (algo == AR_RING)
		return coll_allreduce_ring(rbuf, count, dt, op, comm, tag);
	return coll_allreduce_rd(rbuf, count, dt, op, comm, tag);
}

/* ---------------- gather / scatter ---------------- */

/* bytes * n as an int message size, or -1 if too big. */
static int
coll_bytes(size_t bytes, int n)
{
	size_t t;

	if (__builtin_mul_overflow(bytes, (size_t)n, &t) || t > INT_MAX)
		return -1;
	return (int)t;
}

/* Gather and Scatter take the linear algorithm (the root sends or
   receives every block at once, one round) on 3 ranks or more, in both
   protocols: in the trees the blocks travel several times, and in the
   relay each of their log2 p rounds costs two hops through a CM. */
static bool
coll_gs_linear(enum coll_kind k, int size)
{
	return size > 2 && coll_pick(k, 1u << GS_BINOMIAL | 1u << GS_LINEAR,
	    GS_LINEAR) == GS_LINEAR;
}

/* The root receives every block at once. */
static int
coll_gather_linear(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
    int tag)
{
	struct coll_blocks b = { .base = rbuf, .count = rcount, .dt = rdt };
	bool me = comm->rank == root;

	/* the root receives rcount rdt a block, the others send theirs */
	return coll_fanin(sbuf, me ? rcount : scount, me ? rdt : sdt,
	    coll_at_block, &b, root, comm, tag);
}

/* The root sends every block at once. */
static int
coll_scatter_linear(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm comm,
    int tag)
{
	int size = comm->size, rc = MPI_SUCCESS, n = 0;
	MPI_Request *reqs;

	if (comm->rank != root)
		return mpiv_recv_coll(rbuf, rcount, rdt, root, tag, comm);
	if ((reqs = malloc((size_t)size * sizeof(*reqs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
		int q = (root + s) % size;
		rc = mpiv_isend(coll_elem(sbuf, (MPI_Aint)q * scount, sdt),
		    scount, sdt, q, tag, comm, MPIV_COLL_CONTEXT(comm),
		    MPIV_SEND_STANDARD, &reqs[n]);
		if (rc == MPI_SUCCESS)
			n++;
	}
	rc = coll_waitall(n, reqs, rc);
	free(reqs);
	return rc;
}

static int
coll_gather(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    int rcount, MPI_Datatype rdt, int root, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank;
	int vrank = (rank - root + size) % size, sub = coll_subtree(vrank, size);
	size_t nb = rank == root ? mpiv_dt_packed_size(rdt, rcount) :
	    mpiv_dt_packed_size(sdt, scount);
	int total = coll_bytes(nb, sub), n = 0, mask, rc = MPI_SUCCESS;
	MPI_Request reqs[sizeof(int) * CHAR_BIT];
	char *tmp;

	if (rank == root && sbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf,
	    (MPI_Aint)rank * rcount, rdt), rcount, rdt)) != MPI_SUCCESS)
		return rc;
	if (size == 1 || nb == 0)
		return MPI_SUCCESS;
	if (coll_gs_linear(CK_GATHER, size))
		return coll_gather_linear(sbuf, scount, sdt, rbuf, rcount, rdt,
		    root, comm, tag);
	if (total < 0)
		return MPI_ERR_COUNT;
	if ((tmp = malloc((size_t)total)) == NULL)
		return MPI_ERR_NO_MEM;
	if (rank != root)
		mpiv_dt_pack(sbuf, scount, sdt, tmp);
	/* Children v + mask hold the tree ranks [v + mask, v + 2 mask). */
	for (mask = 1; mask < size && !(vrank & mask); mask <<= 1)
		if (vrank + mask < size && rc == MPI_SUCCESS)
			rc = mpiv_irecv(tmp + (size_t)mask * nb,
			    (int)((size_t)coll_subtree(vrank + mask, size) * nb),
			    MPI_BYTE, (vrank + mask + root) % size, tag, comm,
			    MPIV_COLL_CONTEXT(comm), &reqs[n++]);
	if (rc != MPI_SUCCESS)
		n--;
	rc = coll_waitall(n, reqs, rc);
	if (rc == MPI_SUCCESS && rank != root)
		rc = mpiv_send_coll(tmp, total, MPI_BYTE,
		    (vrank - mask + root) % size, tag, comm);
	if (rc == MPI_SUCCESS && rank == root)
		for (int v = 1; v < size; v++) {
			int r = (v + root) % size;
			mpiv_dt_unpack(tmp + (size_t)v * nb, nb,
			    coll_elem(rbuf, (MPI_Aint)r * rcount, rdt), rcount,
			    rdt);
		}
	free(tmp);
	return rc;
}

static int
coll_scatter(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    int rcount, MPI_Datatype rdt, int root, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank;
	int vrank = (rank - root + size) % size, sub = coll_subtree(vrank, size);
	size_t nb = rank == root ? mpiv_dt_packed_size(sdt, scount) :
	    mpiv_dt_packed_size(rdt, rcount);
	int total = coll_bytes(nb, sub), n = 0, mask, rc = MPI_SUCCESS;
	MPI_Request reqs[sizeof(int) * CHAR_BIT];
	char *tmp;

	if (rank == root && rbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(coll_elem(sbuf, (MPI_Aint)rank * scount, sdt),
	    scount, sdt, rbuf, rcount, rdt)) != MPI_SUCCESS)
		return rc;
	if (size == 1 || nb == 0)
		return MPI_SUCCESS;
	if (coll_gs_linear(CK_SCATTER, size))
		return coll_scatter_linear(sbuf, scount, sdt, rbuf, rcount,
		    rdt, root, comm, tag);
	if (total < 0)
		return MPI_ERR_COUNT;
	if ((tmp = malloc((size_t)total)) == NULL)
		return MPI_ERR_NO_MEM;
	if (rank == root) {
		for (int v = 1; v < size; v++)
			mpiv_dt_pack(coll_elem(sbuf, (MPI_Aint)((v + root) %
			    size) * scount, sdt), scount, sdt,
			    tmp + (size_t)v * nb);
		mask = coll_pof2(size);
		if (mask >= size)
			mask >>= 1;
		mask <<= 1;
	} else {
		mask = vrank & -vrank;
		rc = mpiv_recv_coll(tmp, total, MPI_BYTE,
		    (vrank - mask + root) % size, tag, comm);
	}
	for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
		if (vrank + mask < size)
			rc = mpiv_isend(tmp + (size_t)mask * nb,
			    (int)((size_t)coll_subtree(vrank + mask, size) * nb),
			    MPI_BYTE, (vrank + mask + root) % size, tag, comm,
			    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD,
			    &reqs[n++]);
	if (rc != MPI_SUCCESS && n > 0)
		n--;
	rc = coll_waitall(n, reqs, rc);
	if (rc == MPI_SUCCESS && rank != root)
		mpiv_dt_unpack(tmp, nb, rbuf, rcount, rdt);
	free(tmp);
	return rc;
}

static int
coll_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    const int *rcounts, const int *displs, MPI_Datatype rdt, int root,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, n = 0, rc = MPI_SUCCESS;
	MPI_Request *reqs;

	if (rank != root)
		return mpiv_send_coll(sbuf, scount, sdt, root, tag, comm);
	if (sbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, displs[rank],
	    rdt), rcounts[rank], rdt)) != MPI_SUCCESS)
		return rc;
	if ((reqs = malloc((size_t)size * sizeof(*reqs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int r = 0; r < size && rc == MPI_SUCCESS; r++)
		if (r != rank && (rc = mpiv_irecv(coll_elem(rbuf, displs[r],
		    rdt), rcounts[r], rdt, r, tag, comm,
		    MPIV_COLL_CONTEXT(comm), &reqs[n])) == MPI_SUCCESS)
			n++;
	rc = coll_waitall(n, reqs, rc);
	free(reqs);
	return rc;
}

static int
coll_scatterv(const void *sbuf, const int *scounts, const int *displs,
    MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, n = 0, rc = MPI_SUCCESS;
	MPI_Request *reqs;

	if (rank != root)
		return mpiv_recv_coll(rbuf, rcount, rdt, root, tag, comm);
	if (rbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(coll_elem(sbuf, displs[rank], sdt), scounts[rank],
	    sdt, rbuf, rcount, rdt)) != MPI_SUCCESS)
		return rc;
	if ((reqs = malloc((size_t)size * sizeof(*reqs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int r = 0; r < size && rc == MPI_SUCCESS; r++)
		if (r != rank && (rc = mpiv_isend(coll_elem(sbuf, displs[r],
		    sdt), scounts[r], sdt, r, tag, comm,
		    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD, &reqs[n])) ==
		    MPI_SUCCESS)
			n++;
	rc = coll_waitall(n, reqs, rc);
	free(reqs);
	return rc;
}

/* ---------------- allgather(v) ---------------- */

/*
 * Ring: at step s every rank passes block (rank - s) to its right
 * neighbour and receives block (rank - s - 1) from its left one. counts
 * and displs NULL mean rcount elements at block * rcount.
 */
static int
coll_ring(void *rbuf, int rcount, const int *counts, const int *displs,
    MPI_Datatype rdt, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;

	for (int s = 0; s < size - 1 && rc == MPI_SUCCESS; s++) {
		int sb = (rank - s + size) % size;
		int rb = (rank - s - 1 + size) % size;
		MPI_Aint sd = displs ? displs[sb] : (MPI_Aint)sb * rcount;
		MPI_Aint rd = displs ? displs[rb] : (MPI_Aint)rb * rcount;
		rc = mpiv_sendrecv_coll(coll_elem(rbuf, sd, rdt),
		    counts ? counts[sb] : rcount, rdt, right,
		    coll_elem(rbuf, rd, rdt), counts ? counts[rb] : rcount, rdt,
		    left, tag, comm);
	}
	return rc;
}

/*
 * Bruck: a packed buffer holds blocks of ranks rank, rank + 1, ...; at
 * the step of distance d = 1, 2, 4 ... a rank sends its first
 * min(d, p - d) blocks to rank - d and appends the same number from
 * rank + d. ceil(log2 p) rounds for any p; rbuf's own block is in place.
 */
static int
coll_allgather_bruck(void *rbuf, int rcount, MPI_Datatype rdt,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	size_t nb = mpiv_dt_packed_size(rdt, rcount);
	int total = coll_bytes(nb, size);
	char *tmp;

	if (total < 0)
		return MPI_ERR_COUNT;
	if ((tmp = malloc((size_t)total)) == NULL)
		return MPI_ERR_NO_MEM;
	mpiv_dt_pack(coll_elem(rbuf, (MPI_Aint)rank * rcount, rdt), rcount,
	    rdt, tmp);
	for (int d = 1; d < size && rc == MPI_SUCCESS; d <<= 1) {
		int n = d < size - d ? d : size - d;
		rc = mpiv_sendrecv_coll(tmp, (int)(n * nb), MPI_BYTE,
		    (rank - d + size) % size, tmp + d * nb, (int)(n * nb),
		    MPI_BYTE, (rank + d) % size, tag, comm);
	}
	for (int i = 1; i < size && rc == MPI_SUCCESS; i++)
		mpiv_dt_unpack(tmp + i * nb, nb, coll_elem(rbuf,
		    (MPI_Aint)((rank + i) % size) * rcount, rdt), rcount, rdt);
	free(tmp);
	return rc;
}

int
mpiv_coll_allgather(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm, int tag)
{
	size_t nb;
	int rc, algo;

	if (sbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf,
	    (MPI_Aint)comm->rank * rcount, rdt), rcount, rdt)) != MPI_SUCCESS)
		return rc;
	if (rcount == 0 || rdt->size == 0 || comm->size == 1)
		return MPI_SUCCESS;
	nb = mpiv_dt_packed_size(rdt, rcount);
	coll_conf();
	algo = nb < (coll_direct ? COLL_ALLGATHER_BRUCK_MAX_DIRECT :
	    COLL_ALLGATHER_BRUCK_MAX_RELAY) ? AG_BRUCK : AG_RING;
	if (comm->size > 2 && (coll_direct ? comm->size >=
	    COLL_FLAT_MIN_P_DIRECT && comm->size <= COLL_FLAT_MAX_P_DIRECT &&
	    nb <= COLL_ALLGATHER_MCAST_MAX_DIRECT :
	    nb <= COLL_ALLGATHER_MCAST_MAX_RELAY))
		algo = AG_MCAST;
	algo = coll_pick(CK_ALLGATHER, 1u << AG_RING | 1u << AG_BRUCK |
	    (rcount <= INT_MAX / comm->size ? 1u << AG_MCAST : 0), algo);
	if (algo == AG_MCAST) {
		/* rank 0 gathers the blocks, then multicasts them all */
		struct coll_blocks b = { .base = rbuf, .count = rcount,
		    .dt = rdt };
		rc = coll_fanin(coll_at_block(&b, comm->rank), rcount, rdt,
		    coll_at_block, &b, 0, comm, tag);
		return rc != MPI_SUCCESS ? rc : coll_bcast_mcast(rbuf,
		    rcount * comm->size, rdt, 0, comm, tag);
	}
	if (algo == AG_BRUCK)
		return coll_allgather_bruck(rbuf, rcount, rdt, comm, tag);
	return coll_ring(rbuf, rcount, NULL, NULL, rdt, comm, tag);
}

/*
 * Rank 0 receives every block at once into its place in rbuf, packs
 * them all in rank order into one buffer (total bytes) and multicasts
 * it; the others unpack each block into its place.
 */
static int
coll_allgatherv_mcast(void *rbuf, const int *rcounts, const int *displs,
    MPI_Datatype rdt, size_t total, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS, n = 0;
	size_t off = 0;
	char *packed;

#define BLOCK(q) coll_elem(rbuf, displs[q], rdt)
	if ((packed = malloc(total > 0 ? total : 1)) == NULL)
		return MPI_ERR_NO_MEM;
	if (rank != 0) {
		rc = mpiv_send_coll(BLOCK(rank), rcounts[rank], rdt, 0, tag,
		    comm);
		if (rc == MPI_SUCCESS)
			rc = mpiv_recv_coll(packed, (int)total, MPI_BYTE, 0, tag,
			    comm);
		for (int q = 0; q < size && rc == MPI_SUCCESS; q++) {
			size_t nb = mpiv_dt_packed_size(rdt, rcounts[q]);
			if (q != rank)
				mpiv_dt_unpack(packed + off, nb, BLOCK(q),
				    rcounts[q], rdt);
			off += nb;
		}
	} else {
		MPI_Request *reqs = malloc((size_t)size * sizeof(*reqs));
		int *dests = malloc((size_t)size * sizeof(*dests));

		if (reqs == NULL || dests == NULL)
			rc = MPI_ERR_NO_MEM;
		for (int q = 1; q < size && rc == MPI_SUCCESS; q++) {
			rc = mpiv_irecv(BLOCK(q), rcounts[q], rdt, q, tag, comm,
			    MPIV_COLL_CONTEXT(comm), &reqs[n]);
			if (rc == MPI_SUCCESS)
				n++;
		}
		if (reqs != NULL)
			rc = coll_waitall(n, reqs, rc);
		for (int q = 0; q < size && rc == MPI_SUCCESS; q++) {
			mpiv_dt_pack(BLOCK(q), rcounts[q], rdt, packed + off);
			off += mpiv_dt_packed_size(rdt, rcounts[q]);
		}
		for (int q = 1; q < size && dests != NULL; q++)
			dests[q - 1] = q;
		if (rc == MPI_SUCCESS)
			rc = mpiv_mcast_coll(packed, (int)total, MPI_BYTE,
			    dests, size - 1, tag, comm);
		free(reqs);
		free(dests);
	}
#undef BLOCK
	free(packed);
	return rc;
}

static int
coll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    const int *rcounts, const int *displs, MPI_Datatype rdt, MPI_Comm comm,
    int tag)
{
	size_t total = 0;
	bool mcast;
	int rc;

	if (sbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf,
	    displs[comm->rank], rdt), rcounts[comm->rank], rdt)) !=
	    MPI_SUCCESS)
		return rc;
	for (int q = 0; q < comm->size; q++)
		total += mpiv_dt_packed_size(rdt, rcounts[q]);
	coll_conf();
	mcast = coll_direct ? comm->size <= COLL_FLAT_MAX_P_DIRECT &&
	    total <= COLL_ALLGATHERV_MCAST_MAX_DIRECT :
	    total <= COLL_ALLGATHERV_MCAST_MAX_RELAY;
	if (comm->size > 2 && total <= INT_MAX &&
	    coll_pick(CK_ALLGATHERV, 1u << AGV_RING | 1u << AGV_MCAST,
	    mcast ? AGV_MCAST : AGV_RING) == AGV_MCAST)
		return coll_allgatherv_mcast(rbuf, rcounts, displs, rdt, total,
		    comm, tag);
	return coll_ring(rbuf, 0, rcounts, displs, rdt, comm, tag);
}

/* ---------------- alltoall(v) ---------------- */

/* counts/displs NULL: fixed count blocks. */
static int
coll_alltoall(const void *sbuf, int scount, const int *scounts,
    const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount,
    const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm,
    int tag)
{
	int size = comm->size, rank = comm->rank, rc;
	bool linear = true;
	size_t lmax;
	void *raw = NULL;

#define SC(r) (scounts ? scounts[r] : scount)
#define SD(r) (sdispls ? (MPI_Aint)sdispls[r] : (MPI_Aint)(r) * scount)
#define RC(r) (rcounts ? rcounts[r] : rcount)
#define RD(r) (rdispls ? (MPI_Aint)rdispls[r] : (MPI_Aint)(r) * rcount)
	if (sbuf == MPI_IN_PLACE) {
		/* Send from a copy of the receive buffer. */
		MPI_Aint n = 0;
		for (int r = 0; r < size; r++)
			if (RC(r) > 0 && RD(r) + RC(r) > n)
				n = RD(r) + RC(r);
		if (n > INT_MAX)
			return MPI_ERR_COUNT;
		if (n > 0) {
			void *copy = coll_alloc((int)n, rdt, &raw);
			if (copy == NULL)
				return MPI_ERR_NO_MEM;
			coll_copy_same(rbuf, copy, (int)n, rdt);
			sbuf = copy;
		} else
			sbuf = rbuf;
		sdt = rdt;
		scount = rcount;
		scounts = rcounts;
		sdispls = rdispls;
	}
	/* Small blocks: post everything at once. Alltoallv ranks may
	   choose differently (their blocks differ): either way each pair
	   exchanges one message each way, receives naming their source. */
	coll_conf();
	lmax = coll_direct ? COLL_ALLTOALL_LINEAR_MAX_DIRECT :
	    COLL_ALLTOALL_LINEAR_MAX_RELAY;
	for (int r = 0; r < size && linear; r++)
		if (mpiv_dt_packed_size(sdt, SC(r)) >= lmax ||
		    mpiv_dt_packed_size(rdt, RC(r)) >= lmax)
			linear = false;
	rc = coll_copy(coll_elem(sbuf, SD(rank), sdt), SC(rank), sdt,
	    coll_elem(rbuf, RD(rank), rdt), RC(rank), rdt);
	if (rc == MPI_SUCCESS && size > 1 && coll_pick(CK_ALLTOALL,
	    1u << AA_PAIRWISE | 1u << AA_LINEAR, linear ? AA_LINEAR :
	    AA_PAIRWISE) == AA_LINEAR) {
		/* Everything at once, in the pairwise order. */
		MPI_Request *reqs = malloc(2 * (size_t)size * sizeof(*reqs));
		int n = 0;
		if (reqs == NULL)
			rc = MPI_ERR_NO_MEM;
		for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
			int src = (rank - s + size) % size;
			if ((rc = mpiv_irecv(coll_elem(rbuf, RD(src), rdt),
			    RC(src), rdt, src, tag, comm,
			    MPIV_COLL_CONTEXT(comm), &reqs[n])) == MPI_SUCCESS)
				n++;
		}
		for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
			int dst = (rank + s) % size;
			if ((rc = mpiv_isend(coll_elem(sbuf, SD(dst), sdt),
			    SC(dst), sdt, dst, tag, comm,
			    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD,
			    &reqs[n])) == MPI_SUCCESS)
				n++;
		}
		rc = coll_waitall(n, reqs, rc);
		free(reqs);
		free(raw);
		return rc;
	}
	for (int s = 1; s < size && rc == MPI_SUCCESS; s++) {
		int dst = (rank + s) % size, src = (rank - s + size) % size;
		rc = mpiv_sendrecv_coll(coll_elem(sbuf, SD(dst), sdt), SC(dst),
		    sdt, dst, coll_elem(rbuf, RD(src), rdt), RC(src), rdt, src,
		    tag, comm);
	}
#undef SC
#undef SD
#undef RC
#undef RD
	free(raw);
	return rc;
}

/* ---------------- scan / exscan ---------------- */

/*
 * Recursive doubling: `part` holds the combination of a block of ranks
 * ending with ours; partners exchange it, lower ranks on the left.
 * Exclusive scans build the result from received parts only.
 */
static int
coll_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, MPI_Comm comm, int tag, bool exclusive)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	void *part, *tmp, *rawp, *rawt;
	bool have = !exclusive;

	if (count == 0)
		return MPI_SUCCESS;
	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf;
	part = coll_alloc(count, dt, &rawp);
	tmp = coll_alloc(count, dt, &rawt);
	if (part == NULL || tmp == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	coll_copy_same(sbuf, part, count, dt);
	if (!exclusive)
		coll_copy_same(sbuf, rbuf, count, dt);
	for (int mask = 1; mask < size && rc == MPI_SUCCESS; mask <<= 1) {
		int peer = rank ^ mask;
		if (peer >= size)
			continue;
		rc = mpiv_sendrecv_coll(part, count, dt, peer, tmp, count, dt,
		    peer, tag, comm);
		if (rc != MPI_SUCCESS)
			break;
		if (peer < rank) {
			/* tmp covers ranks before ours. */
			if (have)
				rc = mpiv_op_apply(op, tmp, rbuf, count, dt);
			else {
				coll_copy_same(tmp, rbuf, count, dt);
				have = true;
			}
			if (rc == MPI_SUCCESS)
				rc = mpiv_op_apply(op, tmp, part, count, dt);
		} else
			rc = coll_combine(op, part, tmp, count, dt, true);
	}
out_free:
	free(rawp);
	free(rawt);
	return rc;
}

/* ---------------- argument checks ---------------- */

/* Every collective starts here: also the "coll" fault point. */
static int
coll_check_comm(MPI_Comm comm, const char *fn, int *err)
{
	mpiv_fault_point("coll");
	if (mpiv_comm_check(comm) != MPI_SUCCESS) {
		*err = mpiv_err(NULL, MPI_ERR_COMM, fn);
		return -1;
	}
	if (comm->remote != NULL) {	/* intercomm.c has the ones mpiv does */
		mpiv_err_detail("not supported on an intercommunicator by mpiv");
		*err = mpiv_err(comm, MPI_ERR_COMM, fn);
		return -1;
	}
	return 0;
}

/* count and datatype of one buffer. */
int
coll_check_buf(int count, MPI_Datatype dt)
{
	if (count < 0)
		return MPI_ERR_COUNT;
	return mpiv_dt_check(dt);
}

/* Reduction arguments: count, type, op defined on type. */
int
coll_check_red(int count, MPI_Datatype dt, MPI_Op op)
{
	int rc = coll_check_buf(count, dt);

	if (rc != MPI_SUCCESS)
		return rc;
	if (op == MPI_OP_NULL)
		return MPI_ERR_OP;
	return mpiv_op_apply(op, NULL, NULL, 0, dt);
}

int
coll_check_counts(const int *counts, int n)
{
	if (counts == NULL)
		return MPI_ERR_ARG;
	for (int i = 0; i < n; i++)
		if (counts[i] < 0)
			return MPI_ERR_COUNT;
	return MPI_SUCCESS;
}

#define COLL_BEGIN(fn)							\
	int rc_, err_;							\
	const char *fn_ = fn;						\
	if (coll_check_comm(comm, fn_, &err_) < 0)			\
		return err_
#define COLL_CHECK(expr) do {						\
	if ((rc_ = (expr)) != MPI_SUCCESS)				\
		return mpiv_err(comm, rc_, fn_);			\
} while (0)
#define COLL_END(expr) do {						\
	rc_ = (expr);							\
	return rc_ == MPI_SUCCESS ? rc_ : mpiv_err(comm, rc_, fn_);	\
} while (0)

static int
coll_root_ok(MPI_Comm comm, int root)
{
	return root >= 0 && root < comm->size ? MPI_SUCCESS : MPI_ERR_ROOT;
}

/* ---------------- the MPI calls ---------------- */

int
MPI_Barrier(MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_barrier(comm);
	COLL_BEGIN("MPI_Barrier");
	COLL_END(coll_barrier(comm, TAG_BARRIER));
}

int
MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
    MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_bcast(buffer, count, datatype, root, comm);
	COLL_BEGIN("MPI_Bcast");
	COLL_CHECK(coll_root_ok(comm, root));
	COLL_CHECK(coll_check_buf(count, datatype));
	COLL_END(coll_bcast(buffer, count, datatype, root, comm, TAG_BCAST));
}

int
MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_reduce(sendbuf, recvbuf, count, datatype, op,
		    root, comm);
	COLL_BEGIN("MPI_Reduce");
	COLL_CHECK(coll_root_ok(comm, root));
	COLL_CHECK(coll_check_red(count, datatype, op));
	if (count > 0 && ((comm->rank != root && sendbuf == MPI_IN_PLACE) ||
	    (comm->rank == root && sendbuf == recvbuf)))
		COLL_CHECK(MPI_ERR_BUFFER);
	COLL_END(coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm,
	    TAG_REDUCE));
}

int
MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_allreduce(sendbuf, recvbuf, count, datatype,
		    op, comm);
	COLL_BEGIN("MPI_Allreduce");
	COLL_CHECK(coll_check_red(count, datatype, op));
	if (count > 0 && (sendbuf == recvbuf || recvbuf == MPI_IN_PLACE))
		COLL_CHECK(MPI_ERR_BUFFER);
	COLL_END(mpiv_coll_allreduce(sendbuf, recvbuf, count, datatype, op,
	    comm, TAG_ALLREDUCE));
}

int
MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_gather(sendbuf, sendcount, sendtype, recvbuf,
		    recvcount, recvtype, root, comm);
	COLL_BEGIN("MPI_Gather");
	COLL_CHECK(coll_root_ok(comm, root));
	if (comm->rank == root) {
		COLL_CHECK(coll_check_buf(recvcount, recvtype));
		if (recvbuf == MPI_IN_PLACE)
			COLL_CHECK(MPI_ERR_BUFFER);
	}
	if (sendbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(sendcount, sendtype));
	else if (comm->rank != root)
		COLL_CHECK(MPI_ERR_BUFFER);
	COLL_END(coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
	    recvtype, root, comm, TAG_GATHER));
}

int
MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_gatherv(sendbuf, sendcount, sendtype, recvbuf,
		    recvcounts, displs, recvtype, root, comm);
	COLL_BEGIN("MPI_Gatherv");
	COLL_CHECK(coll_root_ok(comm, root));
	if (comm->rank == root) {
		COLL_CHECK(coll_check_counts(recvcounts, comm->size));
		COLL_CHECK(displs == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
		COLL_CHECK(mpiv_dt_check(recvtype));
	}
	if (sendbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(sendcount, sendtype));
	else if (comm->rank != root)
		COLL_CHECK(MPI_ERR_BUFFER);
	COLL_END(coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
	    recvcounts, displs, recvtype, root, comm, TAG_GATHERV));
}

int
MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_scatter(sendbuf, sendcount, sendtype, recvbuf,
		    recvcount, recvtype, root, comm);
	COLL_BEGIN("MPI_Scatter");
	COLL_CHECK(coll_root_ok(comm, root));
	if (comm->rank == root) {
		COLL_CHECK(coll_check_buf(sendcount, sendtype));
		if (sendbuf == MPI_IN_PLACE)
			COLL_CHECK(MPI_ERR_BUFFER);
	}
	if (recvbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(recvcount, recvtype));
	else if (comm->rank != root)
		COLL_CHECK(MPI_ERR_BUFFER);
	COLL_END(coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
	    recvtype, root, comm, TAG_SCATTER));
}

int
MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_scatterv(sendbuf, sendcounts, displs, sendtype,
		    recvbuf, recvcount, recvtype, root, comm);
	COLL_BEGIN("MPI_Scatterv");
	COLL_CHECK(coll_root_ok(comm, root));
	if (comm->rank == root) {
		COLL_CHECK(coll_check_counts(sendcounts, comm->size));
		COLL_CHECK(displs == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
		COLL_CHECK(mpiv_dt_check(sendtype));
	}
	if (recvbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(recvcount, recvtype));
	else if (comm->rank != root)
		COLL_CHECK(MPI_ERR_BUFFER);
	COLL_END(coll_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
	    recvcount, recvtype, root, comm, TAG_SCATTERV));
}

int
MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_allgatherv(sendbuf, sendcount, sendtype,
		    recvbuf, recvcount, NULL, NULL, recvtype, comm);
	COLL_BEGIN("MPI_Allgather");
	COLL_CHECK(coll_check_buf(recvcount, recvtype));
	if (sendbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(sendcount, sendtype));
	COLL_END(mpiv_coll_allgather(sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, recvtype, comm, TAG_ALLGATHER));
}

int
MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_allgatherv(sendbuf, sendcount, sendtype,
		    recvbuf, 0, recvcounts, displs, recvtype, comm);
	COLL_BEGIN("MPI_Allgatherv");
	COLL_CHECK(coll_check_counts(recvcounts, comm->size));
	COLL_CHECK(displs == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
	COLL_CHECK(mpiv_dt_check(recvtype));
	if (sendbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(sendcount, sendtype));
	COLL_END(coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
	    recvcounts, displs, recvtype, comm, TAG_ALLGATHERV));
}

int
MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_alltoallv(sendbuf, sendcount, NULL, NULL,
		    sendtype, recvbuf, recvcount, NULL, NULL, recvtype, comm);
	COLL_BEGIN("MPI_Alltoall");
	COLL_CHECK(coll_check_buf(recvcount, recvtype));
	if (sendbuf != MPI_IN_PLACE)
		COLL_CHECK(coll_check_buf(sendcount, sendtype));
	COLL_END(coll_alltoall(sendbuf, sendcount, NULL, NULL, sendtype,
	    recvbuf, recvcount, NULL, NULL, recvtype, comm, TAG_ALLTOALL));
}

int
MPI_Alltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_alltoallv(sendbuf, 0, sendcounts, sdispls,
		    sendtype, recvbuf, 0, recvcounts, rdispls, recvtype, comm);
	COLL_BEGIN("MPI_Alltoallv");
	COLL_CHECK(coll_check_counts(recvcounts, comm->size));
	COLL_CHECK(rdispls == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
	COLL_CHECK(mpiv_dt_check(recvtype));
	if (sendbuf != MPI_IN_PLACE) {
		COLL_CHECK(coll_check_counts(sendcounts, comm->size));
		COLL_CHECK(sdispls == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
		COLL_CHECK(mpiv_dt_check(sendtype));
	}
	COLL_END(coll_alltoall(sendbuf, 0, sendcounts, sdispls, sendtype,
	    recvbuf, 0, recvcounts, rdispls, recvtype, comm, TAG_ALLTOALLV));
}

int
MPI_Scan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	COLL_BEGIN("MPI_Scan");
	COLL_CHECK(coll_check_red(count, datatype, op));
	COLL_END(coll_scan(sendbuf, recvbuf, count, datatype, op, comm,
	    TAG_SCAN, false));
}

int
MPI_Exscan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	COLL_BEGIN("MPI_Exscan");
	COLL_CHECK(coll_check_red(count, datatype, op));
	COLL_END(coll_scan(sendbuf, recvbuf, count, datatype, op, comm,
	    TAG_EXSCAN, true));
}

/* Ring reduce-scatter (commutative ops) on a copy of the total input
   sbuf; rank r's block then goes to rbuf. */
static int
coll_reduce_scatter_ring(const void *sbuf, void *rbuf, int total,
    int rcount, const int *rcounts, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, *counts, *displs, rc;
	int d = 0, maxc = 0;
	void *work, *tmp, *raww, *rawt = NULL;

	if ((counts = malloc(2 * (size_t)size * sizeof(int))) == NULL)
		return MPI_ERR_NO_MEM;
	displs = counts + size;
	for (int r = 0; r < size; r++) {
		counts[r] = rcounts ? rcounts[r] : rcount;
		displs[r] = d;
		d += counts[r];
		if (counts[r] > maxc)
			maxc = counts[r];
	}
	work = coll_alloc(total, dt, &raww);
	tmp = coll_alloc(maxc, dt, &rawt);
	if (work == NULL || tmp == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	coll_copy_same(sbuf, work, total, dt);
	rc = coll_group_ring_rs(work, tmp, counts, displs, dt, op, comm, tag);
	if (rc == MPI_SUCCESS)
		coll_copy_same(coll_elem(work, displs[rank], dt), rbuf,
		    counts[rank], dt);
out_free:
	free(raww);
	free(rawt);
	free(counts);
	return rc;
}

/* Reduce of the whole vector to rank 0, then scatter(v) of the pieces
   (or the ring, above). */
static int
coll_reduce_scatter(const void *sbuf, void *rbuf, int rcount,
    const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc;
	long long total = 0;
	int *displs = NULL;
	void *tmp = NULL, *raw = NULL;

	for (int r = 0; r < size; r++)
		total += rcounts ? rcounts[r] : rcount;
	if (total > INT_MAX)
		return MPI_ERR_COUNT;
	if (total == 0)
		return MPI_SUCCESS;
	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf;
	if (op->commute && size > 1 && coll_pick(CK_RSCAT, 1u << RS_REDUCE |
	    1u << RS_RING, (size_t)total * dt->size >= COLL_RSCAT_RING_MIN ?
	    RS_RING : RS_REDUCE) == RS_RING)
		return coll_reduce_scatter_ring(sbuf, rbuf, (int)total, rcount,
		    rcounts, dt, op, comm, tag);
	if (rank == 0 && (tmp = coll_alloc((int)total, dt, &raw)) == NULL)
		return MPI_ERR_NO_MEM;
	rc = coll_reduce(sbuf, tmp, (int)total, dt, op, 0, comm, tag);
	if (rc == MPI_SUCCESS && rcounts == NULL)
		rc = coll_scatter(tmp, rcount, dt, rbuf, rcount, dt, 0, comm,
		    tag);
	else if (rc == MPI_SUCCESS) {
		if ((displs = malloc((size_t)size * sizeof(int))) == NULL)
			rc = MPI_ERR_NO_MEM;
		else {
			int d = 0;
			for (int r = 0; r < size; r++) {
				displs[r] = d;
				d += rcounts[r];
			}
			rc = coll_scatterv(tmp, rcounts, displs, dt, rbuf,
			    rcounts[rank], dt, 0, comm, tag);
		}
	}
	free(displs);
	free(raw);
	return rc;
}

int
MPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
    const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_reduce_scatter(sendbuf, recvbuf, 0, recvcounts,
		    datatype, op, comm);
	COLL_BEGIN("MPI_Reduce_scatter");
	COLL_CHECK(coll_check_red(0, datatype, op));
	COLL_CHECK(coll_check_counts(recvcounts, comm->size));
	COLL_END(coll_reduce_scatter(sendbuf, recvbuf, 0, recvcounts, datatype,
	    op, comm, TAG_RSCAT));
}

int
MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	if (mpiv_comm_is_inter(comm))
		return mpiv_inter_reduce_scatter(sendbuf, recvbuf, recvcount, NULL,
		    datatype, op, comm);
	COLL_BEGIN("MPI_Reduce_scatter_block");
	COLL_CHECK(coll_check_red(recvcount, datatype, op));
	COLL_END(coll_reduce_scatter(sendbuf, recvbuf, recvcount, NULL,
	    datatype, op, comm, TAG_RSCAT_BLOCK));
}
