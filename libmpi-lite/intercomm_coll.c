/*
 * intercomm_coll.c: the blocking collectives on an intercommunicator
 * (coll.c's MPI calls hand one over here). Rooted ones are linear
 * between the root and the remote group; Allgather(v) and Alltoall(v)
 * are linear between every pair of members of the two groups; Barrier,
 * Allreduce and Reduce_scatter(_block) work in the local group first
 * (its hidden intracommunicator `local`), then the two leaders swap. Receives name
 * their source and waits are Waitall: a re-executed rank does exactly
 * the same, with nothing to log.
 */
#include <stdint.h>
#include <stdlib.h>

#include "intercomm.h"

/* Checks shared by the intercommunicator collectives. */
static int
inter_check_buf(int count, MPI_Datatype dt)
{
	if (count < 0)
		return MPI_ERR_COUNT;
	return mpiv_dt_check(dt);
}

static int
inter_check_root(MPI_Comm ic, int root)
{
	if (root == MPI_ROOT || root == MPI_PROC_NULL ||
	    (root >= 0 && root < ic->remote->size))
		return MPI_SUCCESS;
	return MPI_ERR_ROOT;
}

static void *
inter_at(const void *buf, MPI_Aint off)
{
	return (void *)((uintptr_t)buf + (uintptr_t)off);
}

/* Room for count elements of dt, laid out as dt says (like coll.c's
   temporaries); *raw is what to free. */
static void *
inter_alloc(int count, MPI_Datatype dt, void **raw)
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
	return inter_at(*raw, -lo);
}

/*
 * Posts one send per remote member r of count(r) elements at
 * sbuf + disp(r) (counts/displs NULL: count elements at block r, or the
 * same buffer for all when `same`), and one receive per remote member
 * likewise; then waits for all. Either side may be skipped (sbuf or
 * rbuf NULL with a zero type).
 */
struct inter_side {
	const void *buf;
	int count;
	const int *counts, *displs;
	MPI_Datatype dt;
	const MPI_Datatype *types;	/* w: a type per peer, byte displs */
	bool same;		/* every peer gets/gives the same buffer */
	bool on;
};

static void *
inter_block(const struct inter_side *s, int r, int *count, MPI_Datatype *dt)
{
	MPI_Aint off;

	*dt = s->dt;
	if (s->types != NULL) {
		*count = s->counts[r];
		*dt = s->types[r];
		off = (MPI_Aint)s->displs[r];
	} else if (s->counts != NULL) {
		*count = s->counts[r];
		off = (MPI_Aint)s->displs[r] * s->dt->extent;
	} else {
		*count = s->count;
		off = s->same ? 0 : (MPI_Aint)r * s->count * s->dt->extent;
	}
	return inter_at(s->buf, off);
}

static int
inter_linear(MPI_Comm ic, const struct inter_side *snd,
    const struct inter_side *rcv, int tag)
{
	int n = ic->remote->size, k = 0, rc = MPI_SUCCESS, cnt;
	MPI_Datatype dt;
	MPI_Request *reqs;

	if ((reqs = malloc(2 * (size_t)n * sizeof(*reqs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int r = 0; rcv->on && r < n && rc == MPI_SUCCESS; r++) {
		void *b = inter_block(rcv, r, &cnt, &dt);
		if ((rc = mpiv_irecv(b, cnt, dt, r, tag, ic,
		    MPIV_COLL_CONTEXT(ic), &reqs[k])) == MPI_SUCCESS)
			k++;
	}
	for (int r = 0; snd->on && r < n && rc == MPI_SUCCESS; r++) {
		void *b = inter_block(snd, r, &cnt, &dt);
		if ((rc = mpiv_isend(b, cnt, dt, r, tag, ic,
		    MPIV_COLL_CONTEXT(ic), MPIV_SEND_STANDARD, &reqs[k])) ==
		    MPI_SUCCESS)
			k++;
	}
	{
		int w = mpiv_waitall(k, reqs, NULL);
		if (rc == MPI_SUCCESS)
			rc = w;
	}
	free(reqs);
	return rc;
}

#define INTER_BEGIN(fn)							\
	const char *fn_ = fn;						\
	int rc_;							\
	mpiv_fault_point("coll")
#define INTER_CHECK(expr) do {						\
	if ((rc_ = (expr)) != MPI_SUCCESS)				\
		return mpiv_err(ic, rc_, fn_);				\
} while (0)
#define INTER_END(expr) do {						\
	rc_ = (expr);							\
	return rc_ == MPI_SUCCESS ? rc_ : mpiv_err(ic, rc_, fn_);	\
} while (0)

/* Local agreement, the leaders' swap, then the local broadcast: no
   member leaves before every remote member has entered. */
int
mpiv_inter_barrier(MPI_Comm ic)
{
	int one = 1, sum = 0, theirs = 0;

	INTER_BEGIN("MPI_Barrier");
	INTER_CHECK(mpiv_coll_allreduce(&one, &sum, 1, MPI_INT, MPI_SUM,
	    ic->local, LTAG_BARRIER));
	INTER_END(mpiv_inter_exchange(ic, &sum, 1, &theirs, 1));
}

/* The root sends to every member of the remote group. */
int
mpiv_inter_bcast(void *buf, int count, MPI_Datatype dt, int root,
    MPI_Comm ic)
{
	struct inter_side s = { .buf = buf, .count = count, .dt = dt,
		.same = true };
	struct inter_side none = { .dt = dt };

	INTER_BEGIN("MPI_Bcast");
	INTER_CHECK(inter_check_root(ic, root));
	INTER_CHECK(inter_check_buf(count, dt));
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root == MPI_ROOT) {
		s.on = true;
		INTER_END(inter_linear(ic, &s, &none, ITAG_BCAST));
	}
	INTER_END(mpiv_recv_coll(buf, count, dt, root, ITAG_BCAST, ic));
}

/* The root combines the remote group's vectors in rank order:
   x0 op (x1 op (... op x(n-1))). */
int
mpiv_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
    MPI_Op op, int root, MPI_Comm ic)
{
	void *tmp, *raw;
	int n = ic->remote->size, rc = MPI_SUCCESS;

	INTER_BEGIN("MPI_Reduce");
	INTER_CHECK(inter_check_root(ic, root));
	INTER_CHECK(inter_check_buf(count, dt));
	INTER_CHECK(op == MPI_OP_NULL ? MPI_ERR_OP :
	    mpiv_op_apply(op, NULL, NULL, 0, dt));
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		INTER_END(mpiv_send_coll(sbuf, count, dt, root, ITAG_REDUCE,
		    ic));
	if (count == 0 || dt->size == 0)
		INTER_END(inter_linear(ic, &(struct inter_side){ .dt = dt },
		    &(struct inter_side){ .buf = rbuf, .dt = dt, .on = true,
		    .same = true }, ITAG_REDUCE));
	if ((tmp = inter_alloc(count, dt, &raw)) == NULL)
		INTER_CHECK(MPI_ERR_NO_MEM);
	rc = mpiv_recv_coll(rbuf, count, dt, n - 1, ITAG_REDUCE, ic);
	for (int r = n - 2; r >= 0 && rc == MPI_SUCCESS; r--) {
		rc = mpiv_recv_coll(tmp, count, dt, r, ITAG_REDUCE, ic);
		if (rc == MPI_SUCCESS)
			rc = mpiv_op_apply(op, tmp, rbuf, count, dt);
	}
	free(raw);
	INTER_END(rc);
}

/* Each group reduces its own vectors (order-preserving allreduce of the
   local group); the leaders swap the results and hand them out. */
int
mpiv_inter_allreduce(const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm ic)
{
	void *tmp, *raw;
	int rc;

	INTER_BEGIN("MPI_Allreduce");
	INTER_CHECK(inter_check_buf(count, dt));
	INTER_CHECK(op == MPI_OP_NULL ? MPI_ERR_OP :
	    mpiv_op_apply(op, NULL, NULL, 0, dt));
	if (sbuf == MPI_IN_PLACE)
		INTER_CHECK(MPI_ERR_BUFFER);
	if (count == 0 || dt->size == 0)
		return MPI_SUCCESS;
	if ((tmp = inter_alloc(count, dt, &raw)) == NULL)
		INTER_CHECK(MPI_ERR_NO_MEM);
	rc = mpiv_coll_allreduce(sbuf, tmp, count, dt, op, ic->local,
	    LTAG_ALLREDUCE);
	if (rc == MPI_SUCCESS && ic->rank == 0)
		rc = mpiv_sendrecv_coll(tmp, count, dt, 0, rbuf, count, dt,
		    0, ITAG_ALLREDUCE, ic);
	if (rc == MPI_SUCCESS)
		rc = mpiv_inter_lbcast(rbuf, count, dt, 0, ic->local,
		    LTAG_BCAST_DATA);
	free(raw);
	INTER_END(rc);
}

static int
inter_gatherv(const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
    int rcount, const int *rcounts, const int *displs, MPI_Datatype rdt,
    int root, MPI_Comm ic, bool v)
{
	INTER_BEGIN(v ? "MPI_Gatherv" : "MPI_Gather");
	INTER_CHECK(inter_check_root(ic, root));
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root == MPI_ROOT) {
		if (v && (rcounts == NULL || displs == NULL))
			INTER_CHECK(MPI_ERR_ARG);
		for (int r = 0; rcounts != NULL && r < ic->remote->size; r++)
			if (rcounts[r] < 0)
				INTER_CHECK(MPI_ERR_COUNT);
		INTER_CHECK(inter_check_buf(rcounts ? 0 : rcount, rdt));
		INTER_END(inter_linear(ic, &(struct inter_side){ .dt = rdt },
		    &(struct inter_side){ .buf = rbuf, .count = rcount,
		    .counts = rcounts, .displs = displs, .dt = rdt,
		    .on = true }, ITAG_GATHER));
	}
	INTER_CHECK(inter_check_buf(scount, sdt));
	INTER_END(mpiv_send_coll(sbuf, scount, sdt, root, ITAG_GATHER, ic));
}

int
mpiv_inter_gather(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm ic)
{
	return inter_gatherv(sbuf, scount, sdt, rbuf, rcount, NULL, NULL, rdt,
	    root, ic, false);
}

int
mpiv_inter_gatherv(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rdt,
    int root, MPI_Comm ic)
{
	return inter_gatherv(sbuf, scount, sdt, rbuf, 0, rcounts, displs, rdt,
	    root, ic, true);
}

static int
inter_scatterv(const void *sbuf, int scount, const int *scounts,
    const int *displs, MPI_Datatype sdt, void *rbuf, int rcount,
    MPI_Datatype rdt, int root, MPI_Comm ic, bool v)
{
	INTER_BEGIN(v ? "MPI_Scatterv" : "MPI_Scatter");
	INTER_CHECK(inter_check_root(ic, root));
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root == MPI_ROOT) {
		if (v && (scounts == NULL || displs == NULL))
			INTER_CHECK(MPI_ERR_ARG);
		for (int r = 0; scounts != NULL && r < ic->remote->size; r++)
			if (scounts[r] < 0)
				INTER_CHECK(MPI_ERR_COUNT);
		INTER_CHECK(inter_check_buf(scounts ? 0 : scount, sdt));
		INTER_END(inter_linear(ic, &(struct inter_side){ .buf = sbuf,
		    .count = scount, .counts = scounts, .displs = displs,
		    .dt = sdt, .on = true }, &(struct inter_side){ .dt = sdt },
		    ITAG_SCATTER));
	}
	INTER_CHECK(inter_check_buf(rcount, rdt));
	INTER_END(mpiv_recv_coll(rbuf, rcount, rdt, root, ITAG_SCATTER, ic));
}

int
mpiv_inter_scatter(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm ic)
{
	return inter_scatterv(sbuf, scount, NULL, NULL, sdt, rbuf, rcount, rdt,
	    root, ic, false);
}

int
mpiv_inter_scatterv(const void *sbuf, const int *scounts, const int *displs,
    MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt, int root,
    MPI_Comm ic)
{
	return inter_scatterv(sbuf, 0, scounts, displs, sdt, rbuf, rcount, rdt,
	    root, ic, true);
}

/* Every member sends its buffer to every remote member and receives
   block r from remote member r. */
int
mpiv_inter_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, const int *rcounts, const int *displs,
    MPI_Datatype rdt, MPI_Comm ic)
{
	INTER_BEGIN(rcounts ? "MPI_Allgatherv" : "MPI_Allgather");
	if (sbuf == MPI_IN_PLACE)
		INTER_CHECK(MPI_ERR_BUFFER);
	INTER_CHECK(inter_check_buf(scount, sdt));
	INTER_CHECK(inter_check_buf(rcount, rdt));
	for (int r = 0; rcounts != NULL && r < ic->remote->size; r++)
		if (rcounts[r] < 0)
			INTER_CHECK(MPI_ERR_COUNT);
	if (rcounts != NULL && displs == NULL)
		INTER_CHECK(MPI_ERR_ARG);
	INTER_END(inter_linear(ic, &(struct inter_side){ .buf = sbuf,
	    .count = scount, .dt = sdt, .same = true, .on = true },
	    &(struct inter_side){ .buf = rbuf, .count = rcount,
	    .counts = rcounts, .displs = displs, .dt = rdt, .on = true },
	    ITAG_ALLGATHER));
}

/* Block r of the send buffer goes to remote member r, whose block for
   us lands in our block r. */
int
mpiv_inter_alltoallv(const void *sbuf, int scount, const int *scounts,
    const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount,
    const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm ic)
{
	INTER_BEGIN(rcounts ? "MPI_Alltoallv" : "MPI_Alltoall");
	if (sbuf == MPI_IN_PLACE)
		INTER_CHECK(MPI_ERR_BUFFER);
	INTER_CHECK(inter_check_buf(scount, sdt));
	INTER_CHECK(inter_check_buf(rcount, rdt));
	if (rcounts != NULL && (scounts == NULL || sdispls == NULL ||
	    rdispls == NULL))
		INTER_CHECK(MPI_ERR_ARG);
	for (int r = 0; rcounts != NULL && r < ic->remote->size; r++)
		if (rcounts[r] < 0 || scounts[r] < 0)
			INTER_CHECK(MPI_ERR_COUNT);
	INTER_END(inter_linear(ic, &(struct inter_side){ .buf = sbuf,
	    .count = scount, .counts = scounts, .displs = sdispls, .dt = sdt,
	    .on = true }, &(struct inter_side){ .buf = rbuf, .count = rcount,
	    .counts = rcounts, .displs = rdispls, .dt = rdt, .on = true },
	    ITAG_ALLTOALL));
}

/* The w form: a count, a byte displacement and a type per remote member
   on each side. */
int
mpiv_inter_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
    const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
    const int *rdispls, const MPI_Datatype *rtypes, MPI_Comm ic)
{
	INTER_BEGIN("MPI_Alltoallw");
	if (sbuf == MPI_IN_PLACE)
		INTER_CHECK(MPI_ERR_BUFFER);
	if (scounts == NULL || sdispls == NULL || stypes == NULL ||
	    rcounts == NULL || rdispls == NULL || rtypes == NULL)
		INTER_CHECK(MPI_ERR_ARG);
	for (int r = 0; r < ic->remote->size; r++) {
		INTER_CHECK(inter_check_buf(scounts[r], stypes[r]));
		INTER_CHECK(inter_check_buf(rcounts[r], rtypes[r]));
	}
	INTER_END(inter_linear(ic, &(struct inter_side){ .buf = sbuf,
	    .counts = scounts, .displs = sdispls, .types = stypes,
	    .on = true }, &(struct inter_side){ .buf = rbuf,
	    .counts = rcounts, .displs = rdispls, .types = rtypes,
	    .on = true }, ITAG_ALLTOALL));
}

/*
 * Reduce_scatter(_block): group A's vectors, reduced, are scattered over
 * group B and the other way round. Both groups' totals are equal (the
 * standard's condition): each group reduces its own vectors (an
 * order-preserving allreduce in the local group), the leaders swap the
 * results, and each leader hands out the blocks of its group.
 */
int
mpiv_inter_reduce_scatter(const void *sbuf, void *rbuf, int rcount,
    const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm ic)
{
	int n = ic->group->size, total = 0, rc, disp = 0, k = 0, w;
	void *mine = NULL, *theirs = NULL, *rawm, *rawt = NULL;
	MPI_Request *reqs = NULL;

	INTER_BEGIN(rcounts ? "MPI_Reduce_scatter" : "MPI_Reduce_scatter_block");
	INTER_CHECK(inter_check_buf(rcounts ? 0 : rcount, dt));
	INTER_CHECK(op == MPI_OP_NULL ? MPI_ERR_OP :
	    mpiv_op_apply(op, NULL, NULL, 0, dt));
	if (sbuf == MPI_IN_PLACE)
		INTER_CHECK(MPI_ERR_BUFFER);
	for (int r = 0; r < n; r++) {
		int c = rcounts ? rcounts[r] : rcount;
		if (c < 0)
			INTER_CHECK(MPI_ERR_COUNT);
		if (total > INT32_MAX - c)
			INTER_CHECK(MPI_ERR_COUNT);
		total += c;
	}
	if (total == 0 || dt->size == 0)
		return MPI_SUCCESS;
	mine = inter_alloc(total, dt, &rawm);
	if (ic->rank == 0)
		theirs = inter_alloc(total, dt, &rawt);
	if (mine == NULL || (ic->rank == 0 && theirs == NULL)) {
		free(rawm);
		free(rawt);
		INTER_CHECK(MPI_ERR_NO_MEM);
	}
	rc = mpiv_coll_allreduce(sbuf, mine, total, dt, op, ic->local,
	    LTAG_ALLREDUCE);
	if (rc == MPI_SUCCESS && ic->rank == 0)
		rc = mpiv_sendrecv_coll(mine, total, dt, 0, theirs, total, dt,
		    0, ITAG_RSCAT, ic);
	if (rc != MPI_SUCCESS)
		goto out_free;
	if (ic->rank != 0) {
		rc = mpiv_recv_coll(rbuf, rcounts ? rcounts[ic->rank] : rcount,
		    dt, 0, LTAG_RSCAT, ic->local);
		goto out_free;
	}
	if ((reqs = malloc((size_t)n * sizeof(*reqs))) == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
		int c = rcounts ? rcounts[r] : rcount;
		void *b = inter_at(theirs, (MPI_Aint)disp * dt->extent);
		disp += c;
		if (r == 0)
			rc = mpiv_coll_copy(b, c, dt, rbuf, c, dt);
		else if ((rc = mpiv_isend(b, c, dt, r, LTAG_RSCAT, ic->local,
		    MPIV_COLL_CONTEXT(ic->local), MPIV_SEND_STANDARD,
		    &reqs[k])) == MPI_SUCCESS)
			k++;
	}
	w = mpiv_waitall(k, reqs, NULL);
	if (rc == MPI_SUCCESS)
		rc = w;
out_free:
	free(reqs);
	free(rawm);
	free(rawt);
	INTER_END(rc);
}
