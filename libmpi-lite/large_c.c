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

/*
 * count elements of dt as (*ncount, *ntype): dt itself when count fits
 * an int, else 1 of a new committed type (*made set: the caller frees
 * it). MPI code, no error handler.
 */
static int
lc_type(MPI_Count count, MPI_Datatype dt, int *ncount, MPI_Datatype *ntype,
    bool *made)
{
	MPI_Datatype chunk, t, ty[2];
	MPI_Count q, r;
	MPI_Aint d[2];
	int bl[2], rc;

	*made = false;
	if (count < 0)
		return MPI_ERR_COUNT;
	if (count <= INT_MAX || dt == MPI_DATATYPE_NULL) {
		*ncount = (int)(count <= INT_MAX ? count : 0);
		*ntype = dt;
		return count <= INT_MAX ? MPI_SUCCESS : MPI_ERR_TYPE;
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
	*ncount = 1;
	*ntype = t;
	*made = true;
	return MPI_SUCCESS;
}

static void
lc_done(bool made, MPI_Datatype t)
{
	if (made)
		MPI_Type_free(&t);
}

/* Runs one int-count call on (n, t) for the count given. */
#define LC_CALL(fn, comm, count, dt, call)				\
	do {								\
		MPI_Datatype t;						\
		bool made;						\
		int n, rc = lc_type(count, dt, &n, &t, &made);		\
									\
		if (rc != MPI_SUCCESS)					\
			return mpiv_err(comm, rc, fn);			\
		rc = (call);						\
		lc_done(made, t);					\
		return rc;						\
	} while (0)

int
MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm)
{
	LC_CALL("MPI_Send_c", comm, count, datatype,
	    MPI_Send(buf, n, t, dest, tag, comm));
}

int
MPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm)
{
	LC_CALL("MPI_Ssend_c", comm, count, datatype,
	    MPI_Ssend(buf, n, t, dest, tag, comm));
}

int
MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	LC_CALL("MPI_Isend_c", comm, count, datatype,
	    MPI_Isend(buf, n, t, dest, tag, comm, request));
}

int
MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Status *status)
{
	LC_CALL("MPI_Recv_c", comm, count, datatype,
	    MPI_Recv(buf, n, t, source, tag, comm, status));
}

int
MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Request *request)
{
	LC_CALL("MPI_Irecv_c", comm, count, datatype,
	    MPI_Irecv(buf, n, t, source, tag, comm, request));
}

int
MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
    MPI_Comm comm)
{
	LC_CALL("MPI_Bcast_c", comm, count, datatype,
	    MPI_Bcast(buffer, n, t, root, comm));
}

int
MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
    MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
    MPI_Comm comm, MPI_Status *status)
{
	MPI_Datatype st, rt;
	bool smade, rmade;
	int sn, rn, rc;

	if ((rc = lc_type(sendcount, sendtype, &sn, &st, &smade)) !=
	    MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Sendrecv_c");
	if ((rc = lc_type(recvcount, recvtype, &rn, &rt, &rmade)) !=
	    MPI_SUCCESS) {
		lc_done(smade, st);
		return mpiv_err(comm, rc, "MPI_Sendrecv_c");
	}
	rc = MPI_Sendrecv(sendbuf, sn, st, dest, sendtag, recvbuf, rn, rt,
	    source, recvtag, comm, status);
	lc_done(smade, st);
	lc_done(rmade, rt);
	return rc;
}

int
MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	MPI_Datatype t;
	bool made;
	int n, rc;

	if (newtype == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_contiguous_c");
	if ((rc = lc_type(count, oldtype, &n, &t, &made)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Type_contiguous_c");
	if (!made)	/* an int count: the int call, its envelope */
		return MPI_Type_contiguous(n, oldtype, newtype);
	t->committed = false;	/* the caller commits it */
	*newtype = t;
	rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_CONTIGUOUS, 0, NULL, 0,
	    NULL, 1, &count, 1, &oldtype);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Type_contiguous_c");
}

int
MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
    void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
	MPI_Datatype t;
	bool made;
	size_t need;
	int n, rc;

	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Pack_c");
	if (position == NULL || *position < 0 || outsize < 0)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Pack_c");
	if ((rc = lc_type(incount, datatype, &n, &t, &made)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Pack_c");
	need = mpiv_dt_packed_size(t, n);
	if (*position > outsize || need > (size_t)(outsize - *position)) {
		lc_done(made, t);
		return mpiv_err(comm, MPI_ERR_TRUNCATE, "MPI_Pack_c");
	}
	mpiv_dt_pack(inbuf, n, t, (char *)outbuf + *position);
	*position += (MPI_Count)need;
	lc_done(made, t);
	return MPI_SUCCESS;
}

int
MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position,
    void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	MPI_Datatype t;
	bool made;
	size_t need;
	int n, rc;

	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Unpack_c");
	if (position == NULL || *position < 0 || insize < 0 ||
	    *position > insize)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Unpack_c");
	if ((rc = lc_type(outcount, datatype, &n, &t, &made)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Unpack_c");
	need = mpiv_dt_packed_size(t, n);
	if (need > (size_t)(insize - *position)) {
		lc_done(made, t);
		return mpiv_err(comm, MPI_ERR_TRUNCATE, "MPI_Unpack_c");
	}
	mpiv_dt_unpack((const char *)inbuf + *position, need, outbuf, n, t);
	*position += (MPI_Count)need;
	lc_done(made, t);
	return MPI_SUCCESS;
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

/* Two (count, type) pairs, then the int call; frees what was made. */
#define LC_CALL2(fn, comm, c1, t1, c2, t2, call)			\
	do {								\
		MPI_Datatype ta, tb;					\
		bool ma, mb;						\
		int na, nb, rc = lc_type(c1, t1, &na, &ta, &ma);	\
									\
		if (rc != MPI_SUCCESS)					\
			return mpiv_err(comm, rc, fn);			\
		if ((rc = lc_type(c2, t2, &nb, &tb, &mb)) !=		\
		    MPI_SUCCESS) {					\
			lc_done(ma, ta);				\
			return mpiv_err(comm, rc, fn);			\
		}							\
		rc = (call);						\
		lc_done(ma, ta);					\
		lc_done(mb, tb);					\
		return rc;						\
	} while (0)

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
	LC_CALL2("MPI_Gather_c", comm, sendcount, sendtype, recvcount,
	    recvtype, MPI_Gather(sendbuf, na, ta, recvbuf, nb, tb, root,
	    comm));
}

int
MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	LC_CALL2("MPI_Scatter_c", comm, sendcount, sendtype, recvcount,
	    recvtype, MPI_Scatter(sendbuf, na, ta, recvbuf, nb, tb, root,
	    comm));
}

int
MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
	LC_CALL2("MPI_Allgather_c", comm, sendcount, sendtype, recvcount,
	    recvtype, MPI_Allgather(sendbuf, na, ta, recvbuf, nb, tb, comm));
}

int
MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
	LC_CALL2("MPI_Alltoall_c", comm, sendcount, sendtype, recvcount,
	    recvtype, MPI_Alltoall(sendbuf, na, ta, recvbuf, nb, tb, comm));
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
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_create_subarray_c");
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
