/*
 * large_c.c: the MPI-4 large-count ("_c") forms programs use most:
 * MPI_Send_c, Recv_c, Isend_c, Irecv_c, Ssend_c, Sendrecv_c, Bcast_c,
 * Pack_c, Unpack_c, Pack_size_c, Type_contiguous_c.
 *
 * A count that fits an int goes to the int call as it is. A larger one
 * becomes one element of a derived type (chunks of 2^30 elements, then
 * the rest), the way large-count libraries do it on MPI-3: the message
 * and its status are the same bytes, MPI_Get_count_c on the receive's
 * status says the full count. The type is freed at once: a pending
 * request holds its own reference.
 */
#include <limits.h>
#include <stdlib.h>

#include "impl.h"

#define LC_CHUNK ((MPI_Count)1 << 30)

/* count elements of a datatype as the int call takes them. */
struct lc {
	int n;			/* the int count */
	MPI_Datatype t;		/* the type: the caller's, or made here */
	bool made;		/* t made here: freed by lc_end */
};

/*
 * count elements of dt as (l->n, l->t): dt itself when count fits an
 * int, else 1 of a new committed type. MPI code, no error handler.
 */
static int
lc_begin(struct lc *l, MPI_Count count, MPI_Datatype dt)
{
	MPI_Datatype chunk, t, ty[2];
	MPI_Count q, r;
	MPI_Aint d[2];
	int bl[2], rc;

	l->made = false;
	l->n = 0;
	l->t = dt;
	if (count < 0)
		return MPI_ERR_COUNT;
	if (count <= INT_MAX) {
		l->n = (int)count;
		return MPI_SUCCESS;
	}
	if (dt == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	if (!mpiv_dt_is_contig(dt)) {
		/* typemaps are flattened: 2^31 copies of a scattered type
		   would take more memory for their blocks than for data */
		mpiv_err_detail("a count of %lld of a non-contiguous "
		    "datatype: over INT_MAX, mpiv takes contiguous types only",
		    (long long)count);
		return MPI_ERR_COUNT;
	}
	q = count / LC_CHUNK;
	r = count % LC_CHUNK;
	if (q > INT_MAX || __builtin_mul_overflow((MPI_Aint)(q * LC_CHUNK),
	    dt->extent, &d[1]))
		return MPI_ERR_COUNT;
	if ((rc = MPI_Type_contiguous((int)LC_CHUNK, dt, &chunk)) !=
	    MPI_SUCCESS)
		return rc;
	bl[0] = (int)q;
	bl[1] = (int)r;
	d[0] = 0;
	ty[0] = chunk;
	ty[1] = dt;
	rc = MPI_Type_create_struct(2, bl, d, ty, &t);
	MPI_Type_free(&chunk);
	if (rc != MPI_SUCCESS)
		return rc;
	/* no epsilon: count elements of dt span count extents */
	if (t->extent != (MPI_Aint)count * dt->extent) {
		MPI_Datatype rs;

		rc = MPI_Type_create_resized(t, t->lb, (MPI_Aint)count *
		    dt->extent, &rs);
		MPI_Type_free(&t);
		if (rc != MPI_SUCCESS)
			return rc;
		t = rs;
	}
	if ((rc = MPI_Type_commit(&t)) != MPI_SUCCESS) {
		MPI_Type_free(&t);
		return rc;
	}
	l->n = 1;
	l->t = t;
	l->made = true;
	return MPI_SUCCESS;
}

/* Frees what lc_begin made; returns rc. */
static int
lc_end(struct lc *l, int rc)
{
	if (l->made)
		MPI_Type_free(&l->t);
	l->made = false;
	return rc;
}

int
MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm)
{
	struct lc l;
	int rc;

	if ((rc = lc_begin(&l, count, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Send_c");
	return lc_end(&l, MPI_Send(buf, l.n, l.t, dest, tag, comm));
}

int
MPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm)
{
	struct lc l;
	int rc;

	if ((rc = lc_begin(&l, count, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Ssend_c");
	return lc_end(&l, MPI_Ssend(buf, l.n, l.t, dest, tag, comm));
}

int
MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	struct lc l;
	int rc;

	if ((rc = lc_begin(&l, count, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Isend_c");
	return lc_end(&l, MPI_Isend(buf, l.n, l.t, dest, tag, comm, request));
}

int
MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Status *status)
{
	struct lc l;
	int rc;

	if ((rc = lc_begin(&l, count, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Recv_c");
	return lc_end(&l, MPI_Recv(buf, l.n, l.t, source, tag, comm, status));
}

int
MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Request *request)
{
	struct lc l;
	int rc;

	if ((rc = lc_begin(&l, count, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Irecv_c");
	return lc_end(&l, MPI_Irecv(buf, l.n, l.t, source, tag, comm, request));
}

int
MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
    MPI_Comm comm)
{
	struct lc l;
	int rc;

	if ((rc = lc_begin(&l, count, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Bcast_c");
	return lc_end(&l, MPI_Bcast(buffer, l.n, l.t, root, comm));
}

int
MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
    MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
    MPI_Comm comm, MPI_Status *status)
{
	struct lc ls, lr;
	int rc;

	if ((rc = lc_begin(&ls, sendcount, sendtype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Sendrecv_c");
	if ((rc = lc_begin(&lr, recvcount, recvtype)) != MPI_SUCCESS)
		return mpiv_err(comm, lc_end(&ls, rc), "MPI_Sendrecv_c");
	rc = MPI_Sendrecv(sendbuf, ls.n, ls.t, dest, sendtag, recvbuf, lr.n,
	    lr.t, source, recvtag, comm, status);
	lc_end(&ls, rc);
	return lc_end(&lr, rc);
}

int
MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	struct lc l;
	int rc;

	if (newtype == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_contiguous_c");
	if ((rc = lc_begin(&l, count, oldtype)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_contiguous_c");
	if (!l.made)	/* an int count: the int call, its envelope */
		return MPI_Type_contiguous(l.n, oldtype, newtype);
	l.t->committed = false;	/* the caller commits it */
	*newtype = l.t;
	rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_CONTIGUOUS, 0, NULL, 0,
	    NULL, 1, &count, 1, &oldtype);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Type_contiguous_c");
}

int
MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
    void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
	struct lc l;
	size_t need;
	int rc;

	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Pack_c");
	if (position == NULL || *position < 0 || outsize < 0)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Pack_c");
	if ((rc = lc_begin(&l, incount, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Pack_c");
	need = mpiv_dt_packed_size(l.t, l.n);
	if (*position > outsize || need > (size_t)(outsize - *position))
		return mpiv_err(comm, lc_end(&l, MPI_ERR_TRUNCATE),
		    "MPI_Pack_c");
	mpiv_dt_pack(inbuf, l.n, l.t, (char *)outbuf + *position);
	*position += (MPI_Count)need;
	return lc_end(&l, MPI_SUCCESS);
}

int
MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position,
    void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	struct lc l;
	size_t need;
	int rc;

	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Unpack_c");
	if (position == NULL || *position < 0 || insize < 0 ||
	    *position > insize)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Unpack_c");
	if ((rc = lc_begin(&l, outcount, datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Unpack_c");
	need = mpiv_dt_packed_size(l.t, l.n);
	if (need > (size_t)(insize - *position))
		return mpiv_err(comm, lc_end(&l, MPI_ERR_TRUNCATE),
		    "MPI_Unpack_c");
	mpiv_dt_unpack((const char *)inbuf + *position, need, outbuf, l.n,
	    l.t);
	*position += (MPI_Count)need;
	return lc_end(&l, MPI_SUCCESS);
}

int
MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
    MPI_Count *size)
{
	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(comm, MPI_ERR_TYPE, "MPI_Pack_size_c");
	if (incount < 0)
		return mpiv_err(comm, MPI_ERR_COUNT, "MPI_Pack_size_c");
	if (size == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Pack_size_c");
	if (datatype->size != 0 &&
	    (size_t)incount > (size_t)LLONG_MAX / datatype->size)
		return mpiv_err(comm, MPI_ERR_COUNT, "MPI_Pack_size_c");
	*size = incount * (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}

/* ---------------- collectives ---------------- */

/* A rooted or all-to-all collective of two (count, type) pairs. */
enum lc_coll { LC_GATHER, LC_SCATTER, LC_ALLGATHER, LC_ALLTOALL };

static int
lc_coll2(enum lc_coll which, const void *sbuf, MPI_Count scount,
    MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
    int root, MPI_Comm comm, const char *fn)
{
	struct lc ls, lr;
	int rc;

	if ((rc = lc_begin(&ls, scount, stype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, fn);
	if ((rc = lc_begin(&lr, rcount, rtype)) != MPI_SUCCESS)
		return mpiv_err(comm, lc_end(&ls, rc), fn);
	switch (which) {
	case LC_GATHER:
		rc = MPI_Gather(sbuf, ls.n, ls.t, rbuf, lr.n, lr.t, root,
		    comm);
		break;
	case LC_SCATTER:
		rc = MPI_Scatter(sbuf, ls.n, ls.t, rbuf, lr.n, lr.t, root,
		    comm);
		break;
	case LC_ALLGATHER:
		rc = MPI_Allgather(sbuf, ls.n, ls.t, rbuf, lr.n, lr.t, comm);
		break;
	default:
		rc = MPI_Alltoall(sbuf, ls.n, ls.t, rbuf, lr.n, lr.t, comm);
		break;
	}
	lc_end(&ls, rc);
	return lc_end(&lr, rc);
}

/* Reductions apply the op per basic element: a count over INT_MAX is
   refused (a chunked type would not be one of the op's types). */
static int
lc_reduce_count(MPI_Count count, MPI_Comm comm, const char *fn)
{
	if (count < 0 || count > INT_MAX) {
		mpiv_err_detail("count %lld: reductions take at most %d "
		    "elements in mpiv", (long long)count, INT_MAX);
		return mpiv_err(comm, MPI_ERR_COUNT, fn);
	}
	return MPI_SUCCESS;
}

int
MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
	int rc;

	if ((rc = lc_reduce_count(count, comm, "MPI_Reduce_c")) != MPI_SUCCESS)
		return rc;
	return MPI_Reduce(sendbuf, recvbuf, (int)count, datatype, op, root,
	    comm);
}

int
MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	int rc;

	if ((rc = lc_reduce_count(count, comm, "MPI_Allreduce_c")) !=
	    MPI_SUCCESS)
		return rc;
	return MPI_Allreduce(sendbuf, recvbuf, (int)count, datatype, op,
	    comm);
}

int
MPI_Gather_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	return lc_coll2(LC_GATHER, sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, recvtype, root, comm, "MPI_Gather_c");
}

int
MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	return lc_coll2(LC_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, recvtype, root, comm, "MPI_Scatter_c");
}

int
MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
	return lc_coll2(LC_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, recvtype, 0, comm, "MPI_Allgather_c");
}

int
MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
	return lc_coll2(LC_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf,
	    recvcount, recvtype, 0, comm, "MPI_Alltoall_c");
}

/* ---------------- constructors ---------------- */

/* n MPI_Counts as ints into out (malloc'ed, at least one); MPI_ERR_COUNT
   when one is over INT_MAX (said in the detail). */
static int
lc_ints(const MPI_Count *in, MPI_Count n, int **out, const char *what)
{
	int *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));

	if (v == NULL)
		return MPI_ERR_NO_MEM;
	for (MPI_Count i = 0; i < n; i++) {
		if (in[i] < INT_MIN || in[i] > INT_MAX) {
			mpiv_err_detail("%s %lld: mpiv's constructors take "
			    "int-sized %ss (only MPI_Type_contiguous_c takes "
			    "a larger count)", what, (long long)in[i], what);
			free(v);
			return MPI_ERR_COUNT;
		}
		v[i] = (int)in[i];
	}
	*out = v;
	return MPI_SUCCESS;
}

static int
lc_scalar(MPI_Count c, int *out, const char *what)
{
	int *v, rc = lc_ints(&c, 1, &v, what);

	if (rc == MPI_SUCCESS) {
		*out = v[0];
		free(v);
	}
	return rc;
}

int
MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int *v;
	int rc;

	MPI_Count a[3] = { count, blocklength, stride };
	if ((rc = lc_ints(a, 3, &v, "count")) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_vector_c");
	rc = MPI_Type_vector(v[0], v[1], v[2], oldtype, newtype);
	free(v);
	return rc;
}

int
MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength,
    MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int *v;
	int rc;

	MPI_Count a[2] = { count, blocklength };
	if ((rc = lc_ints(a, 2, &v, "count")) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_create_hvector_c");
	rc = MPI_Type_create_hvector(v[0], v[1], (MPI_Aint)stride, oldtype,
	    newtype);
	free(v);
	return rc;
}

int
MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	int n, *bl = NULL, *d = NULL, rc;

	if ((rc = lc_scalar(count, &n, "count")) != MPI_SUCCESS ||
	    (rc = lc_ints(array_of_blocklengths, count, &bl,
	    "block length")) != MPI_SUCCESS ||
	    (rc = lc_ints(array_of_displacements, count, &d,
	    "displacement")) != MPI_SUCCESS) {
		free(bl);
		return mpiv_err(NULL, rc, "MPI_Type_indexed_c");
	}
	rc = MPI_Type_indexed(n, bl, d, oldtype, newtype);
	free(bl);
	free(d);
	return rc;
}

int
MPI_Type_create_hindexed_c(MPI_Count count,
    const MPI_Count array_of_blocklengths[],
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	int n, *bl = NULL, rc;
	MPI_Aint *d;

	if ((rc = lc_scalar(count, &n, "count")) != MPI_SUCCESS ||
	    (rc = lc_ints(array_of_blocklengths, count, &bl,
	    "block length")) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_create_hindexed_c");
	if ((d = malloc((size_t)(n > 0 ? n : 1) * sizeof(*d))) == NULL) {
		free(bl);
		return mpiv_err(NULL, MPI_ERR_NO_MEM,
		    "MPI_Type_create_hindexed_c");
	}
	for (int i = 0; i < n; i++)
		d[i] = (MPI_Aint)array_of_displacements[i];
	rc = MPI_Type_create_hindexed(n, bl, d, oldtype, newtype);
	free(bl);
	free(d);
	return rc;
}

int
MPI_Type_create_struct_c(MPI_Count count,
    const MPI_Count array_of_blocklengths[],
    const MPI_Count array_of_displacements[],
    const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	int n, *bl = NULL, rc;
	MPI_Aint *d;

	if ((rc = lc_scalar(count, &n, "count")) != MPI_SUCCESS ||
	    (rc = lc_ints(array_of_blocklengths, count, &bl,
	    "block length")) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_create_struct_c");
	if ((d = malloc((size_t)(n > 0 ? n : 1) * sizeof(*d))) == NULL) {
		free(bl);
		return mpiv_err(NULL, MPI_ERR_NO_MEM,
		    "MPI_Type_create_struct_c");
	}
	for (int i = 0; i < n; i++)
		d[i] = (MPI_Aint)array_of_displacements[i];
	rc = MPI_Type_create_struct(n, bl, d, array_of_types, newtype);
	free(bl);
	free(d);
	return rc;
}

int
MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb,
    MPI_Count extent, MPI_Datatype *newtype)
{
	return MPI_Type_create_resized(oldtype, (MPI_Aint)lb,
	    (MPI_Aint)extent, newtype);
}

int
MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
    const MPI_Count array_of_subsizes[], const MPI_Count array_of_starts[],
    int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int *sz = NULL, *sub = NULL, *st = NULL, rc;

	if (ndims < 0)
		return mpiv_err(NULL, MPI_ERR_ARG,
		    "MPI_Type_create_subarray_c");
	if ((rc = lc_ints(array_of_sizes, ndims, &sz, "size")) ==
	    MPI_SUCCESS &&
	    (rc = lc_ints(array_of_subsizes, ndims, &sub, "size")) ==
	    MPI_SUCCESS &&
	    (rc = lc_ints(array_of_starts, ndims, &st, "start")) ==
	    MPI_SUCCESS)
		rc = MPI_Type_create_subarray(ndims, sz, sub, st, order,
		    oldtype, newtype);
	else
		rc = mpiv_err(NULL, rc, "MPI_Type_create_subarray_c");
	free(sz);
	free(sub);
	free(st);
	return rc;
}

int
MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	int n, b, *d = NULL, rc;

	if ((rc = lc_scalar(count, &n, "count")) != MPI_SUCCESS ||
	    (rc = lc_scalar(blocklength, &b, "block length")) !=
	    MPI_SUCCESS ||
	    (rc = lc_ints(array_of_displacements, count, &d,
	    "displacement")) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_create_indexed_block_c");
	rc = MPI_Type_create_indexed_block(n, b, d, oldtype, newtype);
	free(d);
	return rc;
}

int
MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	MPI_Aint *d;
	int n, b, rc;

	if ((rc = lc_scalar(count, &n, "count")) != MPI_SUCCESS ||
	    (rc = lc_scalar(blocklength, &b, "block length")) !=
	    MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_create_hindexed_block_c");
	if ((d = malloc((size_t)(n > 0 ? n : 1) * sizeof(*d))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM,
		    "MPI_Type_create_hindexed_block_c");
	for (int i = 0; i < n; i++)
		d[i] = (MPI_Aint)array_of_displacements[i];
	rc = MPI_Type_create_hindexed_block(n, b, d, oldtype, newtype);
	free(d);
	return rc;
}

int
MPI_Type_create_darray_c(int size, int rank, int ndims,
    const MPI_Count array_of_gsizes[], const int array_of_distribs[],
    const int array_of_dargs[], const int array_of_psizes[], int order,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int *gs = NULL, rc;

	if (ndims < 0)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_create_darray_c");
	if ((rc = lc_ints(array_of_gsizes, ndims, &gs, "size")) !=
	    MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_create_darray_c");
	rc = MPI_Type_create_darray(size, rank, ndims, gs, array_of_distribs,
	    array_of_dargs, array_of_psizes, order, oldtype, newtype);
	free(gs);
	return rc;
}
