/*
 * coll.c: blocking collectives, built only on the internal point-to-point
 * calls (mpiv_isend/irecv/waitall and the *_coll helpers) on the
 * communicator's collective context, so they never match user messages.
 *
 * Every algorithm has a fixed message pattern that depends only on the
 * arguments (rank, size, root, counts), never on timing: receives name
 * their source, and each collective kind has its own tag. That keeps
 * MPICH-V replay exact and lets back-to-back collectives share a tag
 * (messages between two ranks are matched in order).
 *
 *   barrier        dissemination, ceil(log2 p) rounds
 *   bcast          binomial tree
 *   reduce         binomial tree; non-commutative ops use a tree rooted
 *                  at rank 0 that combines ranges in rank order, then
 *                  forward to root
 *   allreduce      recursive doubling with the non-power-of-two fold,
 *                  order-preserving
 *   gather/scatter binomial trees on packed bytes
 *   gatherv/scatterv  linear (only the root knows the counts)
 *   allgather(v)   ring
 *   alltoall(v)    pairwise exchange
 *   scan/exscan    recursive doubling, order-preserving
 *   reduce_scatter(_block)  reduce to rank 0, then scatter(v)
 *
 * Reductions work on temporaries in the datatype's own layout (so user
 * ops get the buffers they expect); the op is applied with
 * mpiv_op_apply(in, inout) = in op inout, keeping lower ranks on the left.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

enum coll_tag {
	TAG_BARRIER = 1, TAG_BCAST, TAG_REDUCE, TAG_ALLREDUCE, TAG_GATHER,
	TAG_GATHERV, TAG_SCATTER, TAG_SCATTERV, TAG_ALLGATHER, TAG_ALLGATHERV,
	TAG_ALLTOALL, TAG_ALLTOALLV, TAG_SCAN, TAG_EXSCAN, TAG_RSCAT,
	TAG_RSCAT_BLOCK,
};

/* ---------------- buffers ---------------- */

static inline char *
coll_at(const void *base, MPI_Aint off)
{
	return (char *)((uintptr_t)base + (uintptr_t)off);
}

/* Address of element i of a dt array at buf. */
static inline void *
coll_elem(const void *buf, MPI_Aint i, MPI_Datatype dt)
{
	return coll_at(buf, i * dt->extent);
}

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

static int
coll_waitall(int n, MPI_Request *reqs, int rc)
{
	int rc2 = n > 0 ? mpiv_waitall(n, reqs, NULL) : MPI_SUCCESS;

	return rc != MPI_SUCCESS ? rc : rc2;
}

/* Largest power of two <= n (n >= 1). */
static int
coll_pof2(int n)
{
	int p = 1;

	while (p <= n / 2)
		p <<= 1;
	return p;
}

/* ---------------- barrier ---------------- */

static int
coll_barrier(MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;

	for (int k = 1; k < size && rc == MPI_SUCCESS; k <<= 1)
		rc = mpiv_sendrecv_coll(NULL, 0, MPI_BYTE, (rank + k) % size,
		    NULL, 0, MPI_BYTE, (rank - k + size) % size, tag, comm);
	return rc;
}

/* ---------------- bcast ---------------- */

static int
coll_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
    int tag)
{
	int size = comm->size, vrank = (comm->rank - root + size) % size;
	int mask = 1, rc = MPI_SUCCESS, n = 0;
	MPI_Request reqs[sizeof(int) * CHAR_BIT];

	if (size == 1 || count == 0)
		return MPI_SUCCESS;
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

int
mpiv_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	int pof2, rem, newrank;
	void *tmp, *rawt;

	if (count == 0)
		return MPI_SUCCESS;
	if (sbuf != MPI_IN_PLACE)
		coll_copy_same(sbuf, rbuf, count, dt);
	if (size == 1)
		return MPI_SUCCESS;
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

/* ---------------- gather / scatter ---------------- */

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

/* bytes * n as an int message size, or -1 if too big. */
static int
coll_bytes(size_t bytes, int n)
{
	size_t t;

	if (__builtin_mul_overflow(bytes, (size_t)n, &t) || t > INT_MAX)
		return -1;
	return (int)t;
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

/* ---------------- allgather(v): ring ---------------- */

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

int
mpiv_coll_allgather(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm, int tag)
{
	int rc;

	if (sbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf,
	    (MPI_Aint)comm->rank * rcount, rdt), rcount, rdt)) != MPI_SUCCESS)
		return rc;
	if (rcount == 0 || rdt->size == 0)
		return MPI_SUCCESS;
	return coll_ring(rbuf, rcount, NULL, NULL, rdt, comm, tag);
}

static int
coll_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    const int *rcounts, const int *displs, MPI_Datatype rdt, MPI_Comm comm,
    int tag)
{
	int rc;

	if (sbuf != MPI_IN_PLACE &&
	    (rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf,
	    displs[comm->rank], rdt), rcounts[comm->rank], rdt)) !=
	    MPI_SUCCESS)
		return rc;
	return coll_ring(rbuf, 0, rcounts, displs, rdt, comm, tag);
}

/* ---------------- alltoall(v): pairwise exchange ---------------- */

/* counts/displs NULL: fixed count blocks. */
static int
coll_alltoall(const void *sbuf, int scount, const int *scounts,
    const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount,
    const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm comm,
    int tag)
{
	int size = comm->size, rank = comm->rank, rc;
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
	rc = coll_copy(coll_elem(sbuf, SD(rank), sdt), SC(rank), sdt,
	    coll_elem(rbuf, RD(rank), rdt), RC(rank), rdt);
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
	return 0;
}

/* count and datatype of one buffer. */
static int
coll_check_buf(int count, MPI_Datatype dt)
{
	if (count < 0)
		return MPI_ERR_COUNT;
	return mpiv_dt_check(dt);
}

/* Reduction arguments: count, type, op defined on type. */
static int
coll_check_red(int count, MPI_Datatype dt, MPI_Op op)
{
	int rc = coll_check_buf(count, dt);

	if (rc != MPI_SUCCESS)
		return rc;
	if (op == MPI_OP_NULL)
		return MPI_ERR_OP;
	return mpiv_op_apply(op, NULL, NULL, 0, dt);
}

static int
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
	COLL_BEGIN("MPI_Barrier");
	COLL_END(coll_barrier(comm, TAG_BARRIER));
}

int
MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
    MPI_Comm comm)
{
	COLL_BEGIN("MPI_Bcast");
	COLL_CHECK(coll_root_ok(comm, root));
	COLL_CHECK(coll_check_buf(count, datatype));
	COLL_END(coll_bcast(buffer, count, datatype, root, comm, TAG_BCAST));
}

int
MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
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

/* Reduce of the whole vector to rank 0, then scatter(v) of the pieces. */
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
	COLL_BEGIN("MPI_Reduce_scatter_block");
	COLL_CHECK(coll_check_red(recvcount, datatype, op));
	COLL_END(coll_reduce_scatter(sendbuf, recvbuf, recvcount, NULL,
	    datatype, op, comm, TAG_RSCAT_BLOCK));
}
