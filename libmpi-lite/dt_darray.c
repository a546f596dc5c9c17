/*
 * dt_darray.c: MPI_Type_create_subarray and MPI_Type_create_darray.
 *
 * Both pick, in each dimension of a global array, which indices this
 * process holds: a subarray one run (starts[i], subsizes[i]); a darray
 * the blocks of a BLOCK, CYCLIC(k) or NONE distribution of the
 * dimension over the process grid. The type is built one dimension at a
 * time from the fastest varying one (the last in MPI_ORDER_C, the first
 * in MPI_ORDER_FORTRAN): the type of the dimensions done so far is
 * resized to span one whole index of the next dimension, then placed at
 * the chosen indices with an hindexed type. The result spans the whole
 * global array: lb 0, extent the product of the sizes times the old
 * type's extent.
 */
#include <limits.h>
#include <stdlib.h>

#include "impl.h"

/* One dimension: the chosen runs of indices (start, length). */
struct dim_runs {
	int n;
	int *start, *len;
};

static void
dim_runs_free(struct dim_runs *r)
{
	free(r->start);
	free(r->len);
	r->start = r->len = NULL;
	r->n = 0;
}

static int
dim_runs_alloc(struct dim_runs *r, int n)
{
	r->n = 0;
	r->start = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
	r->len = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
	if (r->start == NULL || r->len == NULL) {
		dim_runs_free(r);
		return MPI_ERR_NO_MEM;
	}
	return MPI_SUCCESS;
}

/*
 * Places the runs of one dimension: *t spans `stride` bytes per index
 * (its extent is resized to stride first), the result spans
 * stride * gsize bytes from 0. Frees *t when it is not old.
 */
static int
dt_dim(MPI_Datatype *t, MPI_Datatype old, MPI_Aint stride, int gsize,
    const struct dim_runs *r)
{
	MPI_Datatype el = *t, placed, out;
	MPI_Aint *disp;
	int rc;

	if (el->lb != 0 || el->extent != stride) {
		rc = MPI_Type_create_resized(el, 0, stride, &out);
		if (el != old)
			MPI_Type_free(&el);
		if (rc != MPI_SUCCESS)
			return rc;
		el = out;
	}
	if ((disp = malloc((size_t)(r->n > 0 ? r->n : 1) *
	    sizeof(*disp))) == NULL) {
		if (el != old)
			MPI_Type_free(&el);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < r->n; i++)
		disp[i] = (MPI_Aint)r->start[i] * stride;
	rc = MPI_Type_create_hindexed(r->n, r->len, disp, el, &placed);
	free(disp);
	if (el != old)
		MPI_Type_free(&el);
	if (rc != MPI_SUCCESS)
		return rc;
	rc = MPI_Type_create_resized(placed, 0, stride * gsize, &out);
	MPI_Type_free(&placed);
	if (rc != MPI_SUCCESS)
		return rc;
	*t = out;
	return MPI_SUCCESS;
}

/* Product of the sizes times ext, within the datatype limits. */
static int
dt_span(int ndims, const int *sizes, MPI_Aint ext, MPI_Aint *span)
{
	MPI_Aint s = ext < 0 ? -ext : ext;

	for (int i = 0; i < ndims; i++)
		if (__builtin_mul_overflow(s, (MPI_Aint)sizes[i], &s) ||
		    s > ((MPI_Aint)1 << 50))
			return MPI_ERR_ARG;
	*span = s;
	return MPI_SUCCESS;
}

/*
 * Builds the type from each dimension's runs (runs[i] for dimension i),
 * dims from the fastest varying one. Frees the runs.
 */
static int
dt_build_dims(int ndims, const int *gsizes, struct dim_runs *runs, int order,
    MPI_Datatype old, MPI_Datatype *newtype)
{
	MPI_Datatype t = old;
	MPI_Aint stride = old->extent;
	int rc = MPI_SUCCESS;

	for (int k = 0; k < ndims && rc == MPI_SUCCESS; k++) {
		int i = order == MPI_ORDER_C ? ndims - 1 - k : k;

		rc = dt_dim(&t, old, stride, gsizes[i], &runs[i]);
		stride *= gsizes[i];
	}
	for (int i = 0; i < ndims; i++)
		dim_runs_free(&runs[i]);
	if (rc != MPI_SUCCESS)
		return rc;
	if (t == old)	/* ndims == 0 is refused before */
		return MPI_ERR_INTERN;
	*newtype = t;
	return MPI_SUCCESS;
}

static int
dt_check_common(int ndims, int order, MPI_Datatype old, MPI_Datatype *out)
{
	if (ndims <= 0) {
		mpiv_err_detail("ndims is %d, want 1 or more", ndims);
		return MPI_ERR_ARG;
	}
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
		mpiv_err_detail("order is %d, want MPI_ORDER_C or "
		    "MPI_ORDER_FORTRAN", order);
		return MPI_ERR_ARG;
	}
	if (old == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	if (out == NULL)
		return MPI_ERR_ARG;
	return MPI_SUCCESS;
}

static int
dt_subarray(int ndims, const int *sizes, const int *subsizes,
    const int *starts, int order, MPI_Datatype old, MPI_Datatype *newtype)
{
	struct dim_runs *runs;
	MPI_Aint span;
	int rc, *args;

	if ((rc = dt_check_common(ndims, order, old, newtype)) != MPI_SUCCESS)
		return rc;
	if (sizes == NULL || subsizes == NULL || starts == NULL)
		return MPI_ERR_ARG;
	for (int i = 0; i < ndims; i++) {
		if (sizes[i] <= 0 || subsizes[i] <= 0 ||
		    subsizes[i] > sizes[i] || starts[i] < 0 ||
		    starts[i] > sizes[i] - subsizes[i]) {
			mpiv_err_detail("dimension %d: size %d, subsize %d, "
			    "start %d (want 1 <= subsize <= size, 0 <= start "
			    "<= size - subsize)", i, sizes[i], subsizes[i],
			    starts[i]);
			return MPI_ERR_ARG;
		}
	}
	if ((rc = dt_span(ndims, sizes, old->extent, &span)) != MPI_SUCCESS)
		return rc;
	if ((runs = calloc((size_t)ndims, sizeof(*runs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < ndims; i++) {
		if ((rc = dim_runs_alloc(&runs[i], 1)) != MPI_SUCCESS) {
			while (i-- > 0)
				dim_runs_free(&runs[i]);
			free(runs);
			return rc;
		}
		runs[i].n = 1;
		runs[i].start[0] = starts[i];
		runs[i].len[0] = subsizes[i];
	}
	rc = dt_build_dims(ndims, sizes, runs, order, old, newtype);
	free(runs);
	if (rc != MPI_SUCCESS)
		return rc;
	if ((args = malloc((3 * (size_t)ndims + 2) * sizeof(*args))) == NULL) {
		mpiv_dt_release(*newtype);
		return MPI_ERR_NO_MEM;
	}
	args[0] = ndims;
	for (int i = 0; i < ndims; i++) {
		args[1 + i] = sizes[i];
		args[1 + ndims + i] = subsizes[i];
		args[1 + 2 * ndims + i] = starts[i];
	}
	args[1 + 3 * ndims] = order;
	rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_SUBARRAY,
	    3 * ndims + 2, args, 0, NULL, 0, NULL, 1, &old);
	free(args);
	return rc;
}

int
MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
    const int array_of_subsizes[], const int array_of_starts[], int order,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int rc = dt_subarray(ndims, array_of_sizes, array_of_subsizes,
	    array_of_starts, order, oldtype, newtype);

	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Type_create_subarray");
}

/*
 * The indices of a dimension of gsize a process at coordinate c of p
 * holds under distribution distrib (darg as given).
 */
static int
darray_dim(int i, int gsize, int distrib, int darg, int p, int c,
    struct dim_runs *r)
{
	int rc, k, nblocks;

	switch (distrib) {
	case MPI_DISTRIBUTE_NONE:
		if (p != 1) {
			mpiv_err_detail("dimension %d: MPI_DISTRIBUTE_NONE "
			    "over %d processes, want 1", i, p);
			return MPI_ERR_ARG;
		}
		if ((rc = dim_runs_alloc(r, 1)) != MPI_SUCCESS)
			return rc;
		r->n = 1;
		r->start[0] = 0;
		r->len[0] = gsize;
		return MPI_SUCCESS;
	case MPI_DISTRIBUTE_BLOCK:
		if (darg == MPI_DISTRIBUTE_DFLT_DARG)
			k = (int)(((long long)gsize + p - 1) / p);
		else
			k = darg;
		if (k <= 0 || (long long)k * p < gsize) {
			mpiv_err_detail("dimension %d: block size %d over %d "
			    "processes does not cover %d elements", i, k, p,
			    gsize);
			return MPI_ERR_ARG;
		}
		if ((rc = dim_runs_alloc(r, 1)) != MPI_SUCCESS)
			return rc;
		r->n = 1;
		{
			long long s = (long long)c * k;
			long long n = gsize - s < k ? gsize - s : k;

			r->start[0] = s < gsize ? (int)s : 0;
			r->len[0] = n > 0 ? (int)n : 0;
		}
		return MPI_SUCCESS;
	case MPI_DISTRIBUTE_CYCLIC:
		k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		if (k <= 0) {
			mpiv_err_detail("dimension %d: cyclic block size %d, "
			    "want 1 or more", i, k);
			return MPI_ERR_ARG;
		}
		if (p == 1 || (long long)k >= gsize) {
			/* one process, or one block: [0, gsize) or nothing */
			if ((rc = dim_runs_alloc(r, 1)) != MPI_SUCCESS)
				return rc;
			r->n = 1;
			r->start[0] = 0;
			r->len[0] = c == 0 ? gsize : 0;
			return MPI_SUCCESS;
		}
		/* blocks c, c + p, c + 2p ... of k indices each */
		nblocks = (int)(((long long)gsize + k - 1) / k);
		nblocks = nblocks > c ? (nblocks - c + p - 1) / p : 0;
		if ((rc = dim_runs_alloc(r, nblocks)) != MPI_SUCCESS)
			return rc;
		for (int b = 0; b < nblocks; b++) {
			long long s = ((long long)c + (long long)b * p) * k;

			r->start[b] = (int)s;
			r->len[b] = gsize - s < k ? (int)(gsize - s) : k;
		}
		r->n = nblocks;
		return MPI_SUCCESS;
	default:
		mpiv_err_detail("dimension %d: distribution %d, want "
		    "MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE", i, distrib);
		return MPI_ERR_ARG;
	}
}

static int
dt_darray(int size, int rank, int ndims, const int *gsizes,
    const int *distribs, const int *dargs, const int *psizes, int order,
    MPI_Datatype old, MPI_Datatype *newtype)
{
	struct dim_runs *runs;
	MPI_Aint span;
	long long nprocs = 1;
	int rc, *args, rest;

	if ((rc = dt_check_common(ndims, order, old, newtype)) != MPI_SUCCESS)
		return rc;
	if (gsizes == NULL || distribs == NULL || dargs == NULL ||
	    psizes == NULL)
		return MPI_ERR_ARG;
	if (size <= 0 || rank < 0 || rank >= size) {
		mpiv_err_detail("rank %d of size %d", rank, size);
		return MPI_ERR_ARG;
	}
	for (int i = 0; i < ndims; i++) {
		if (gsizes[i] <= 0 || psizes[i] <= 0) {
			mpiv_err_detail("dimension %d: global size %d over %d "
			    "processes", i, gsizes[i], psizes[i]);
			return MPI_ERR_ARG;
		}
		nprocs *= psizes[i];
		if (nprocs > size)
			break;
	}
	if (nprocs != size) {
		mpiv_err_detail("the process grid holds %lld processes, size "
		    "is %d", nprocs, size);
		return MPI_ERR_ARG;
	}
	if ((rc = dt_span(ndims, gsizes, old->extent, &span)) != MPI_SUCCESS)
		return rc;
	if ((runs = calloc((size_t)ndims, sizeof(*runs))) == NULL)
		return MPI_ERR_NO_MEM;
	/* the process grid is row-major whatever the array order */
	rest = rank;
	for (int i = ndims - 1; i >= 0 && rc == MPI_SUCCESS; i--) {
		int c = rest % psizes[i];

		rest /= psizes[i];
		rc = darray_dim(i, gsizes[i], distribs[i], dargs[i], psizes[i],
		    c, &runs[i]);
	}
	if (rc != MPI_SUCCESS) {
		for (int i = 0; i < ndims; i++)
			dim_runs_free(&runs[i]);
		free(runs);
		return rc;
	}
	rc = dt_build_dims(ndims, gsizes, runs, order, old, newtype);
	free(runs);
	if (rc != MPI_SUCCESS)
		return rc;
	if ((args = malloc((4 * (size_t)ndims + 4) * sizeof(*args))) == NULL) {
		mpiv_dt_release(*newtype);
		return MPI_ERR_NO_MEM;
	}
	args[0] = size;
	args[1] = rank;
	args[2] = ndims;
	for (int i = 0; i < ndims; i++) {
		args[3 + i] = gsizes[i];
		args[3 + ndims + i] = distribs[i];
		args[3 + 2 * ndims + i] = dargs[i];
		args[3 + 3 * ndims + i] = psizes[i];
	}
	args[3 + 4 * ndims] = order;
	rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_DARRAY, 4 * ndims + 4,
	    args, 0, NULL, 0, NULL, 1, &old);
	free(args);
	return rc;
}

int
MPI_Type_create_darray(int size, int rank, int ndims,
    const int array_of_gsizes[], const int array_of_distribs[],
    const int array_of_dargs[], const int array_of_psizes[], int order,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int rc = dt_darray(size, rank, ndims, array_of_gsizes,
	    array_of_distribs, array_of_dargs, array_of_psizes, order,
	    oldtype, newtype);

	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Type_create_darray");
}
