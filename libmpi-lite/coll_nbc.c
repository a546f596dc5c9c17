/*
 * coll_nbc.c: the non-blocking collectives (MPI_Ibarrier ... MPI_Iexscan)
 * and MPI_Alltoallw. Each call checks its arguments like its blocking
 * twin, then builds a schedule (impl.h, struct mpiv_nbc) whose message
 * pattern depends only on the arguments, and starts it; nbc.c runs it
 * (docs/COLLECTIVES.md, "Non-blocking collectives").
 *
 * The schedules favour few rounds and plain code over bandwidth:
 *
 *   ibarrier        dissemination, ceil(log2 p) rounds; relay, 3 ranks
 *                   or more: every rank to rank 0, then its multicast
 *   ibcast          binomial tree (receive from the parent, then send to
 *                   every child); relay, 3 ranks or more: the root's
 *                   multicast
 *   igather(v), iscatter(v)   linear: the root posts all at once
 *   iallgather(v), ialltoall(v,w)   every send and receive in one round
 *   ireduce         linear to the root, which combines in rank order
 *                   (any op, commutative or not)
 *   iallreduce      ireduce to rank 0, then rank 0 sends the result
 *   ireduce_scatter(_block)   ireduce to rank 0, then rank 0 sends blocks
 *   iscan, iexscan  each rank sends its vector to every higher rank and
 *                   combines what it got from the lower ones in order
 *
 * The same data to several ranks goes as one multicast where the
 * protocol has one (the relay: one frame per CM, mpiv_nbc_mcast): the
 * iallgather's blocks, the iallreduce's result, the iscan's vectors.
 *
 * Every value a schedule needs (block addresses, counts, types) is taken
 * when the call is made: the count and displacement arrays may change
 * afterwards. Buffers may not, as MPI says.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/* ---------------- argument checks ---------------- */

/* the checks are coll.c's (coll_check_buf, _red, _counts) */

static int
nbc_root_ok(MPI_Comm comm, int root)
{
	return root >= 0 && root < comm->size ? MPI_SUCCESS : MPI_ERR_ROOT;
}

/* Opens every call: the library is up, comm is valid, request not NULL;
   s is the new schedule. */
#define NBC_BEGIN(fn)							\
	struct mpiv_nbc *s_ = NULL;					\
	const char *fn_ = fn;						\
	int rc_;							\
	if (!mpiv_state.initialized || mpiv_state.finalized)		\
		return mpiv_err(NULL, MPI_ERR_OTHER, fn_);		\
	mpiv_fault_point("coll");					\
	if (mpiv_comm_check(comm) != MPI_SUCCESS)			\
		return mpiv_err(NULL, MPI_ERR_COMM, fn_);		\
	if (comm->remote != NULL) {					\
		mpiv_err_detail("not supported on an intercommunicator "	\
		    "by mpiv");						\
		return mpiv_err(comm, MPI_ERR_COMM, fn_);		\
	}								\
	if (request == NULL)						\
		return mpiv_err(comm, MPI_ERR_REQUEST, fn_)
#define NBC_CHECK(expr) do {						\
	if ((rc_ = (expr)) != MPI_SUCCESS) {				\
		mpiv_nbc_discard(s_);					\
		return mpiv_err(comm, rc_, fn_);			\
	}								\
} while (0)
/* Builds with `expr` (an MPI code) on the new schedule s_, then starts. */
#define NBC_BUILD(expr) do {						\
	if ((s_ = mpiv_nbc_new(comm)) == NULL)				\
		return mpiv_err(comm, MPI_ERR_NO_MEM, fn_);		\
	NBC_CHECK(expr);						\
	rc_ = mpiv_nbc_start(s_, request);				\
	return rc_ == MPI_SUCCESS ? rc_ : mpiv_err(comm, rc_, fn_);	\
} while (0)

/* Address of element i of dt at buf (i may be a displacement). */
static void *
nbc_at(const void *buf, MPI_Aint i, MPI_Datatype dt)
{
	return coll_at(buf, i * dt->extent);
}

/* A copy, owned by s, of count elements of dt at buf (taken now: the
   data an in-place call starts from). NULL with *rc set on failure, and
   for count 0. */
static void *
nbc_snapshot(struct mpiv_nbc *s, const void *buf, int count, MPI_Datatype dt,
    int *rc)
{
	void *t;

	*rc = MPI_SUCCESS;
	if (count <= 0)
		return NULL;
	if ((t = mpiv_nbc_temp(s, count, dt)) == NULL) {
		*rc = MPI_ERR_NO_MEM;
		return NULL;
	}
	*rc = mpiv_coll_copy(buf, count, dt, t, count, dt);
	return t;
}

/* ---------------- schedules ---------------- */

/* The same data to every rank of [lo, hi) but us, in round: one
   multicast where the protocol has one. */
static int
nbc_to_all(struct mpiv_nbc *s, int round, const void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int lo, int hi)
{
	int *peers, n = 0, rc;

	if (hi <= lo)
		return MPI_SUCCESS;
	if ((peers = malloc((size_t)(hi - lo) * sizeof(*peers))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = lo; i < hi; i++)
		if (i != comm->rank)
			peers[n++] = i;
	rc = mpiv_nbc_mcast(s, round, buf, count, dt, peers, n);
	free(peers);
	return rc;
}

/* The relay's one-round algorithms (as coll.c's) on 3 ranks or more. */
static bool
nbc_flat(MPI_Comm comm)
{
	return comm->size > 2 && mpiv_can_mcast();
}

static int
nbc_barrier(struct mpiv_nbc *s, MPI_Comm comm)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;

	if (nbc_flat(comm)) {
		/* every rank to rank 0 in round 0, its multicast in round 1 */
		if (rank != 0) {
			rc = mpiv_nbc_send(s, 0, NULL, 0, MPI_BYTE, 0);
			return rc != MPI_SUCCESS ? rc : mpiv_nbc_recv(s, 1,
			    NULL, 0, MPI_BYTE, 0);
		}
		for (int i = 1; i < size && rc == MPI_SUCCESS; i++)
			rc = mpiv_nbc_recv(s, 0, NULL, 0, MPI_BYTE, i);
		return rc != MPI_SUCCESS ? rc : nbc_to_all(s, 1, NULL, 0,
		    MPI_BYTE, comm, 0, size);
	}

	for (int k = 0, d = 1; d < size && rc == MPI_SUCCESS; k++, d *= 2) {
		rc = mpiv_nbc_send(s, k, NULL, 0, MPI_BYTE, (rank + d) % size);
		if (rc == MPI_SUCCESS)
			rc = mpiv_nbc_recv(s, k, NULL, 0, MPI_BYTE,
			    (rank - d + size) % size);
	}
	return rc;
}

/* Binomial tree from root: round 0 receives from the parent, the next
   round (round 0 at the root) sends to every child. */
static int
nbc_bcast(struct mpiv_nbc *s, void *buf, int count, MPI_Datatype dt,
    int root, MPI_Comm comm)
{
	int size = comm->size, vrank = (comm->rank - root + size) % size;
	int mask = 1, round = 0, rc = MPI_SUCCESS;

	if (nbc_flat(comm))
		return comm->rank == root ? nbc_to_all(s, 0, buf, count, dt,
		    comm, 0, size) : mpiv_nbc_recv(s, 0, buf, count, dt, root);
	while (mask < size) {
		if (vrank & mask) {
			rc = mpiv_nbc_recv(s, 0, buf, count, dt,
			    (vrank - mask + root) % size);
			round = 1;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
		if (vrank + mask < size)
			rc = mpiv_nbc_send(s, round, buf, count, dt,
			    (vrank + mask + root) % size);
	return rc;
}

/*
 * Reduce of count elements to root, combined in rank order (any op):
 * the others send their vector in round 0, the root receives them all,
 * then at the beginning of round 1 makes rbuf = v0 op (v1 op (...)).
 * Returns through *next the first round free after it.
 */
static int
nbc_reduce(struct mpiv_nbc *s, const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, int *next)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS, last;
	const void **v;

	*next = size > 1 ? 1 : 0;
	if (rank != root)
		return mpiv_nbc_send(s, 0, sbuf == MPI_IN_PLACE ? rbuf : sbuf,
		    count, dt, root);
	if (count == 0)
		return MPI_SUCCESS;
	if ((v = calloc((size_t)size, sizeof(*v))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < size && rc == MPI_SUCCESS; i++) {
		if (i == rank) {
			v[i] = sbuf == MPI_IN_PLACE ? nbc_snapshot(s, rbuf,
			    count, dt, &rc) : sbuf;
			continue;
		}
		if ((v[i] = mpiv_nbc_temp(s, count, dt)) == NULL)
			rc = MPI_ERR_NO_MEM;
		else
			rc = mpiv_nbc_recv(s, 0, (void *)v[i], count, dt, i);
	}
	last = *next;
	if (rc == MPI_SUCCESS)
		rc = mpiv_nbc_copy(s, last, v[size - 1], count, dt, rbuf,
		    count, dt);
	for (int i = size - 2; i >= 0 && rc == MPI_SUCCESS; i--)
		rc = mpiv_nbc_reduce(s, last, v[i], rbuf, count, dt, op);
	free(v);
	return rc;
}

/* Linear gather(v) into the root: counts NULL means rcount each, at
   blocks i * rcount; else counts[i] at displs[i]. */
static int
nbc_gather(struct mpiv_nbc *s, const void *sbuf, int scount,
    MPI_Datatype sdt, void *rbuf, int rcount, const int *counts,
    const int *displs, MPI_Datatype rdt, int root, MPI_Comm comm)
{
	int rc = MPI_SUCCESS;

	if (comm->rank != root)
		return mpiv_nbc_send(s, 0, sbuf, scount, sdt, root);
	for (int i = 0; i < comm->size && rc == MPI_SUCCESS; i++) {
		int n = counts != NULL ? counts[i] : rcount;
		MPI_Aint at = counts != NULL ? displs[i] :
		    (MPI_Aint)i * rcount;
		void *dst = nbc_at(rbuf, at, rdt);

		if (i != root)
			rc = mpiv_nbc_recv(s, 0, dst, n, rdt, i);
		else if (sbuf != MPI_IN_PLACE)
			rc = mpiv_nbc_copy(s, 0, sbuf, scount, sdt, dst, n,
			    rdt);
	}
	return rc;
}

static int
nbc_scatter(struct mpiv_nbc *s, const void *sbuf, int scount,
    const int *counts, const int *displs, MPI_Datatype sdt, void *rbuf,
    int rcount, MPI_Datatype rdt, int root, MPI_Comm comm)
{
	int rc = MPI_SUCCESS;

	if (comm->rank != root)
		return mpiv_nbc_recv(s, 0, rbuf, rcount, rdt, root);
	for (int i = 0; i < comm->size && rc == MPI_SUCCESS; i++) {
		int n = counts != NULL ? counts[i] : scount;
		MPI_Aint at = counts != NULL ? displs[i] :
		    (MPI_Aint)i * scount;
		const void *src = nbc_at(sbuf, at, sdt);

		if (i != root)
			rc = mpiv_nbc_send(s, 0, src, n, sdt, i);
		else if (rbuf != MPI_IN_PLACE)
			rc = mpiv_nbc_copy(s, 0, src, n, sdt, rbuf, rcount,
			    rdt);
	}
	return rc;
}

/* Every rank's block to every other, in one round. */
static int
nbc_allgather(struct mpiv_nbc *s, const void *sbuf, int scount,
    MPI_Datatype sdt, void *rbuf, int rcount, const int *counts,
    const int *displs, MPI_Datatype rdt, MPI_Comm comm)
{
	int rank = comm->rank, rc = MPI_SUCCESS;
	int mine = counts != NULL ? counts[rank] : rcount;
	void *own = nbc_at(rbuf, counts != NULL ? displs[rank] :
	    (MPI_Aint)rank * rcount, rdt);

	if (sbuf == MPI_IN_PLACE) {
		sbuf = own;
		scount = mine;
		sdt = rdt;
	} else {
		rc = mpiv_nbc_copy(s, 0, sbuf, scount, sdt, own, mine, rdt);
	}
	if (rc == MPI_SUCCESS)
		rc = nbc_to_all(s, 0, sbuf, scount, sdt, comm, 0, comm->size);
	for (int i = 0; i < comm->size && rc == MPI_SUCCESS; i++)
		if (i != rank)
			rc = mpiv_nbc_recv(s, 0, nbc_at(rbuf, counts != NULL ?
			    displs[i] : (MPI_Aint)i * rcount, rdt),
			    counts != NULL ? counts[i] : rcount, rdt, i);
	return rc;
}

/*
 * Alltoall, v and w in one: block i goes to rank i and block i comes
 * from it, all in one round. Per peer: count, displacement in bytes and
 * type. In place (sbuf MPI_IN_PLACE) the blocks to send are copied
 * aside first, the receive layout serving for both.
 */
struct nbc_blocks {
	const int *counts, *displs;	/* NULL counts: `count` each */
	int count;
	const MPI_Datatype *types;	/* NULL: dt for all */
	MPI_Datatype dt;
	bool bytes;			/* displs in bytes (alltoallw) */
};

static MPI_Datatype
nbc_blk_type(const struct nbc_blocks *b, int i)
{
	return b->types != NULL ? b->types[i] : b->dt;
}

static int
nbc_blk_count(const struct nbc_blocks *b, int i)
{
	return b->counts != NULL ? b->counts[i] : b->count;
}

static void *
nbc_blk_addr(const struct nbc_blocks *b, const void *buf, int i)
{
	MPI_Datatype dt = nbc_blk_type(b, i);

	if (b->bytes)
		return coll_at(buf, b->displs[i]);
	return nbc_at(buf, b->counts != NULL ? b->displs[i] :
	    (MPI_Aint)i * b->count, dt);
}

static int
nbc_alltoall(struct mpiv_nbc *s, const void *sbuf,
    const struct nbc_blocks *sb, void *rbuf, const struct nbc_blocks *rb,
    MPI_Comm comm)
{
	int rank = comm->rank, rc = MPI_SUCCESS;
	bool inplace = sbuf == MPI_IN_PLACE;

	for (int i = 0; i < comm->size && rc == MPI_SUCCESS; i++) {
		void *dst = nbc_blk_addr(rb, rbuf, i);
		MPI_Datatype rdt = nbc_blk_type(rb, i);
		int rn = nbc_blk_count(rb, i);

		if (i == rank) {
			if (!inplace)
				rc = mpiv_nbc_copy(s, 0, nbc_blk_addr(sb, sbuf,
				    i), nbc_blk_count(sb, i), nbc_blk_type(sb,
				    i), dst, rn, rdt);
			continue;
		}
		if (inplace) {
			void *t = nbc_snapshot(s, dst, rn, rdt, &rc);

			if (rc == MPI_SUCCESS)
				rc = mpiv_nbc_send(s, 0, t, rn, rdt, i);
		} else {
			rc = mpiv_nbc_send(s, 0, nbc_blk_addr(sb, sbuf, i),
			    nbc_blk_count(sb, i), nbc_blk_type(sb, i), i);
		}
		if (rc == MPI_SUCCESS)
			rc = mpiv_nbc_recv(s, 0, dst, rn, rdt, i);
	}
	return rc;
}

/* Allreduce: reduce to rank 0, which then sends the result to all. */
static int
nbc_allreduce(struct mpiv_nbc *s, const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	int next, rc;

	if (comm->rank != 0 && sbuf != MPI_IN_PLACE && count > 0 &&
	    (rc = mpiv_nbc_copy(s, 0, sbuf, count, dt, rbuf, count, dt)) !=
	    MPI_SUCCESS)
		return rc;
	/* the others send from rbuf (their own data, copied in round 0
	   before anything is posted), and receive into it in round 1 */
	rc = nbc_reduce(s, comm->rank == 0 ? sbuf : MPI_IN_PLACE, rbuf, count,
	    dt, op, 0, comm, &next);
	if (rc != MPI_SUCCESS)
		return rc;
	return comm->rank == 0 ? nbc_to_all(s, next, rbuf, count, dt, comm, 1,
	    comm->size) : mpiv_nbc_recv(s, 1, rbuf, count, dt, 0);
}

/* Reduce_scatter(_block): reduce of the whole vector to rank 0 (into a
   temporary), then rank 0 sends each rank its block. */
static int
nbc_reduce_scatter(struct mpiv_nbc *s, const void *sbuf, void *rbuf,
    int rcount, const int *rcounts, MPI_Datatype dt, MPI_Op op,
    MPI_Comm comm)
{
	int size = comm->size, rank = comm->rank, next, rc;
	long long total = 0, d = 0;
	void *tmp = NULL;

	for (int r = 0; r < size; r++)
		total += rcounts != NULL ? rcounts[r] : rcount;
	if (total > INT_MAX)
		return MPI_ERR_COUNT;
	if (sbuf == MPI_IN_PLACE && rank != 0)
		sbuf = rbuf;
	else if (sbuf == MPI_IN_PLACE && (sbuf = nbc_snapshot(s, rbuf,
	    (int)total, dt, &rc)) == NULL && rc != MPI_SUCCESS)
		return rc;
	if (rank == 0 && total > 0 &&
	    (tmp = mpiv_nbc_temp(s, (int)total, dt)) == NULL)
		return MPI_ERR_NO_MEM;
	if ((rc = nbc_reduce(s, sbuf, tmp, (int)total, dt, op, 0, comm,
	    &next)) != MPI_SUCCESS)
		return rc;
	for (int r = 0; r < size && rc == MPI_SUCCESS; r++) {
		int n = rcounts != NULL ? rcounts[r] : rcount;

		if (rank == 0 && r == 0)
			rc = mpiv_nbc_copy(s, next, tmp, n, dt, rbuf, n, dt);
		else if (rank == 0)
			rc = mpiv_nbc_send(s, next, nbc_at(tmp, d, dt), n, dt,
			    r);
		else if (rank == r)
			rc = mpiv_nbc_recv(s, 1, rbuf, n, dt, 0);
		d += n;
	}
	return rc;
}

/* Scan and exscan: the vector to every higher rank in round 0; round 1
   combines the lower ranks' in order. */
static int
nbc_scan(struct mpiv_nbc *s, const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, bool exclusive)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	void **v;

	if (count == 0)
		return MPI_SUCCESS;
	if (rank == 0 && !exclusive && mine != rbuf)
		rc = mpiv_nbc_copy(s, 0, mine, count, dt, rbuf, count, dt);
	if (rc == MPI_SUCCESS)
		rc = nbc_to_all(s, 0, mine, count, dt, comm, rank + 1, size);
	if (rc != MPI_SUCCESS || rank == 0)
		return rc;
	if ((v = calloc((size_t)rank, sizeof(*v))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < rank && rc == MPI_SUCCESS; i++) {
		if ((v[i] = mpiv_nbc_temp(s, count, dt)) == NULL)
			rc = MPI_ERR_NO_MEM;
		else
			rc = mpiv_nbc_recv(s, 0, v[i], count, dt, i);
	}
	/* inclusive: rbuf = v0 op ... op v[rank-1] op mine */
	if (rc == MPI_SUCCESS && !exclusive) {
		if (mine != rbuf)
			rc = mpiv_nbc_copy(s, 1, mine, count, dt, rbuf, count,
			    dt);
		for (int i = rank - 1; i >= 0 && rc == MPI_SUCCESS; i--)
			rc = mpiv_nbc_reduce(s, 1, v[i], rbuf, count, dt, op);
	} else if (rc == MPI_SUCCESS) {
		rc = mpiv_nbc_copy(s, 1, v[rank - 1], count, dt, rbuf, count,
		    dt);
		for (int i = rank - 2; i >= 0 && rc == MPI_SUCCESS; i--)
			rc = mpiv_nbc_reduce(s, 1, v[i], rbuf, count, dt, op);
	}
	free(v);
	return rc;
}

/* ---------------- the MPI calls ---------------- */

int
MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Ibarrier");
	NBC_BUILD(nbc_barrier(s_, comm));
}

int
MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
    MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Ibcast");
	NBC_CHECK(nbc_root_ok(comm, root));
	NBC_CHECK(coll_check_buf(count, datatype));
	NBC_BUILD(nbc_bcast(s_, buffer, count, datatype, root, comm));
}

int
MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Igather");
	NBC_CHECK(nbc_root_ok(comm, root));
	if (comm->rank == root) {
		NBC_CHECK(coll_check_buf(recvcount, recvtype));
		if (recvbuf == MPI_IN_PLACE)
			NBC_CHECK(MPI_ERR_BUFFER);
	}
	if (sendbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(sendcount, sendtype));
	else if (comm->rank != root)
		NBC_CHECK(MPI_ERR_BUFFER);
	NBC_BUILD(nbc_gather(s_, sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, NULL, NULL, recvtype, root, comm));
}

int
MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Igatherv");
	NBC_CHECK(nbc_root_ok(comm, root));
	if (comm->rank == root) {
		NBC_CHECK(coll_check_counts(recvcounts, comm->size));
		NBC_CHECK(displs == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
		NBC_CHECK(mpiv_dt_check(recvtype));
	}
	if (sendbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(sendcount, sendtype));
	else if (comm->rank != root)
		NBC_CHECK(MPI_ERR_BUFFER);
	NBC_BUILD(nbc_gather(s_, sendbuf, sendcount, sendtype, recvbuf, 0,
	    recvcounts, displs, recvtype, root, comm));
}

int
MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Iscatter");
	NBC_CHECK(nbc_root_ok(comm, root));
	if (comm->rank == root) {
		NBC_CHECK(coll_check_buf(sendcount, sendtype));
		if (sendbuf == MPI_IN_PLACE)
			NBC_CHECK(MPI_ERR_BUFFER);
	}
	if (recvbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(recvcount, recvtype));
	else if (comm->rank != root)
		NBC_CHECK(MPI_ERR_BUFFER);
	NBC_BUILD(nbc_scatter(s_, sendbuf, sendcount, NULL, NULL, sendtype,
	    recvbuf, recvcount, recvtype, root, comm));
}

int
MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Iscatterv");
	NBC_CHECK(nbc_root_ok(comm, root));
	if (comm->rank == root) {
		NBC_CHECK(coll_check_counts(sendcounts, comm->size));
		NBC_CHECK(displs == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
		NBC_CHECK(mpiv_dt_check(sendtype));
	}
	if (recvbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(recvcount, recvtype));
	else if (comm->rank != root)
		NBC_CHECK(MPI_ERR_BUFFER);
	NBC_BUILD(nbc_scatter(s_, sendbuf, 0, sendcounts, displs, sendtype,
	    recvbuf, recvcount, recvtype, root, comm));
}

int
MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request *request)
{
	NBC_BEGIN("MPI_Iallgather");
	NBC_CHECK(coll_check_buf(recvcount, recvtype));
	if (sendbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(sendcount, sendtype));
	NBC_BUILD(nbc_allgather(s_, sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, NULL, NULL, recvtype, comm));
}

int
MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Iallgatherv");
	NBC_CHECK(coll_check_counts(recvcounts, comm->size));
	NBC_CHECK(displs == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
	NBC_CHECK(mpiv_dt_check(recvtype));
	if (sendbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(sendcount, sendtype));
	NBC_BUILD(nbc_allgather(s_, sendbuf, sendcount, sendtype, recvbuf, 0,
	    recvcounts, displs, recvtype, comm));
}

int
MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request *request)
{
	struct nbc_blocks sb = { .count = sendcount, .dt = sendtype };
	struct nbc_blocks rb = { .count = recvcount, .dt = recvtype };

	NBC_BEGIN("MPI_Ialltoall");
	NBC_CHECK(coll_check_buf(recvcount, recvtype));
	if (sendbuf != MPI_IN_PLACE)
		NBC_CHECK(coll_check_buf(sendcount, sendtype));
	NBC_BUILD(nbc_alltoall(s_, sendbuf, &sb, recvbuf, &rb, comm));
}

int
MPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Request *request)
{
	struct nbc_blocks sb = { .counts = sendcounts, .displs = sdispls,
	    .dt = sendtype };
	struct nbc_blocks rb = { .counts = recvcounts, .displs = rdispls,
	    .dt = recvtype };

	NBC_BEGIN("MPI_Ialltoallv");
	NBC_CHECK(coll_check_counts(recvcounts, comm->size));
	NBC_CHECK(rdispls == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
	NBC_CHECK(mpiv_dt_check(recvtype));
	if (sendbuf != MPI_IN_PLACE) {
		NBC_CHECK(coll_check_counts(sendcounts, comm->size));
		NBC_CHECK(sdispls == NULL ? MPI_ERR_ARG : MPI_SUCCESS);
		NBC_CHECK(mpiv_dt_check(sendtype));
	}
	NBC_BUILD(nbc_alltoall(s_, sendbuf, &sb, recvbuf, &rb, comm));
}

/* The w form's checks: counts, displacements and one type per rank. */
static int
nbc_check_w(const int *counts, const int *displs, const MPI_Datatype *types,
    int n)
{
	int rc = coll_check_counts(counts, n);

	if (rc != MPI_SUCCESS)
		return rc;
	if (displs == NULL || types == NULL)
		return MPI_ERR_ARG;
	for (int i = 0; i < n; i++)
		if ((rc = mpiv_dt_check(types[i])) != MPI_SUCCESS)
			return rc;
	return MPI_SUCCESS;
}

/* Alltoallw's checks and schedule, started as *request; MPI code, no
   error handler (MPI_Alltoallw and MPI_Ialltoallw report it). */
static int
nbc_alltoallw(const void *sendbuf, const int sendcounts[],
    const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const int rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	struct nbc_blocks sb = { .counts = sendcounts, .displs = sdispls,
	    .types = sendtypes, .bytes = true };
	struct nbc_blocks rb = { .counts = recvcounts, .displs = rdispls,
	    .types = recvtypes, .bytes = true };
	struct mpiv_nbc *s;
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return MPI_ERR_OTHER;
	mpiv_fault_point("coll");
	if (request == NULL)
		return MPI_ERR_REQUEST;
	if ((rc = nbc_check_w(recvcounts, rdispls, recvtypes, comm->size)) !=
	    MPI_SUCCESS)
		return rc;
	if (sendbuf != MPI_IN_PLACE && (rc = nbc_check_w(sendcounts, sdispls,
	    sendtypes, comm->size)) != MPI_SUCCESS)
		return rc;
	if ((s = mpiv_nbc_new(comm)) == NULL)
		return MPI_ERR_NO_MEM;
	if ((rc = nbc_alltoall(s, sendbuf, &sb, recvbuf, &rb, comm)) !=
	    MPI_SUCCESS) {
		mpiv_nbc_discard(s);
		return rc;
	}
	return mpiv_nbc_start(s, request);
}

int
MPI_Ialltoallw(const void *sendbuf, const int sendcounts[],
    const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const int rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Ialltoallw");
	if (comm->remote != NULL) {
		mpiv_err_detail("not supported on an intercommunicator by mpiv");
		return mpiv_err(comm, MPI_ERR_COMM, "MPI_Ialltoallw");
	}
	rc = nbc_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
	    recvcounts, rdispls, recvtypes, comm, request);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Ialltoallw");
}

/* Blocking alltoallw: the same schedule, waited for. */
int
MPI_Alltoallw(const void *sendbuf, const int sendcounts[],
    const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const int rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	MPI_Request r;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Alltoallw");
	if (comm->remote != NULL)
		return mpiv_inter_alltoallw(sendbuf, sendcounts, sdispls,
		    sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
	rc = nbc_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
	    recvcounts, rdispls, recvtypes, comm, &r);
	if (rc == MPI_SUCCESS)
		rc = mpiv_waitall(1, &r, NULL);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Alltoallw");
}

int
MPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
    MPI_Request *request)
{
	int next;

	NBC_BEGIN("MPI_Ireduce");
	NBC_CHECK(nbc_root_ok(comm, root));
	NBC_CHECK(coll_check_red(count, datatype, op));
	if (count > 0 && ((comm->rank != root && sendbuf == MPI_IN_PLACE) ||
	    (comm->rank == root && sendbuf == recvbuf)))
		NBC_CHECK(MPI_ERR_BUFFER);
	NBC_BUILD(nbc_reduce(s_, sendbuf, recvbuf, count, datatype, op, root,
	    comm, &next));
}

int
MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Iallreduce");
	NBC_CHECK(coll_check_red(count, datatype, op));
	if (count > 0 && (sendbuf == recvbuf || recvbuf == MPI_IN_PLACE))
		NBC_CHECK(MPI_ERR_BUFFER);
	NBC_BUILD(nbc_allreduce(s_, sendbuf, recvbuf, count, datatype, op,
	    comm));
}

int
MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
    const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
    MPI_Request *request)
{
	NBC_BEGIN("MPI_Ireduce_scatter");
	NBC_CHECK(coll_check_red(0, datatype, op));
	NBC_CHECK(coll_check_counts(recvcounts, comm->size));
	NBC_BUILD(nbc_reduce_scatter(s_, sendbuf, recvbuf, 0, recvcounts,
	    datatype, op, comm));
}

int
MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Ireduce_scatter_block");
	NBC_CHECK(coll_check_red(recvcount, datatype, op));
	NBC_BUILD(nbc_reduce_scatter(s_, sendbuf, recvbuf, recvcount, NULL,
	    datatype, op, comm));
}

int
MPI_Iscan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Iscan");
	NBC_CHECK(coll_check_red(count, datatype, op));
	NBC_BUILD(nbc_scan(s_, sendbuf, recvbuf, count, datatype, op, comm,
	    false));
}

int
MPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	NBC_BEGIN("MPI_Iexscan");
	NBC_CHECK(coll_check_red(count, datatype, op));
	NBC_BUILD(nbc_scan(s_, sendbuf, recvbuf, count, datatype, op, comm,
	    true));
}
