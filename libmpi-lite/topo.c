/*
 * topo.c: Cartesian topologies and MPI_Dims_create. Ranks are laid out in
 * row-major order and never reordered (reorder is a hint), so a Cartesian
 * communicator is a split of the old one with the first prod(dims) ranks.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

static struct mpiv_topo *
topo_new(int ndims, const int *dims, const int *periods)
{
	struct mpiv_topo *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->kind = MPI_CART;
	t->ndims = ndims;
	t->dims = malloc(((size_t)ndims + 1) * sizeof(int));
	t->periods = malloc(((size_t)ndims + 1) * sizeof(int));
	if (t->dims == NULL || t->periods == NULL) {
		free(t->dims);
		free(t->periods);
		free(t);
		return NULL;
	}
	for (int i = 0; i < ndims; i++) {
		t->dims[i] = dims[i];
		t->periods[i] = periods ? periods[i] != 0 : 0;
	}
	return t;
}

void
mpiv_topo_free(MPI_Comm c)
{
	if (c->topo == NULL)
		return;
	mpiv_topo_graph_free(c->topo);
	free(c->topo->dims);
	free(c->topo->periods);
	free(c->topo);
	c->topo = NULL;
}

int
mpiv_topo_dup(MPI_Comm oldc, MPI_Comm newc)
{
	if (oldc->topo == NULL)
		return MPI_SUCCESS;
	if (oldc->topo->kind != MPI_CART)
		return mpiv_topo_graph_dup(oldc->topo, &newc->topo);
	newc->topo = topo_new(oldc->topo->ndims, oldc->topo->dims,
	    oldc->topo->periods);
	return newc->topo ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* ---------------- MPI_Dims_create ---------------- */

/* Best split found so far of the free dimensions. */
struct dims_search {
	int k;			/* free dims */
	int *cur, *best;
	bool found;
};

/* true if a (sorted non-increasing) is more balanced than b: smaller
   spread, then lexicographically smaller from the largest. */
static bool
dims_better(const int *a, const int *b, int k)
{
	int sa = a[0] - a[k - 1], sb = b[0] - b[k - 1];

	if (sa != sb)
		return sa < sb;
	for (int i = 0; i < k; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return false;
}

/* Chooses cur[i..k) non-increasing, each <= maxd, with product m. */
static void
dims_search(struct dims_search *s, int i, int m, int maxd)
{
	if (i == s->k - 1) {
		if (m > maxd)
			return;
		s->cur[i] = m;
		if (!s->found || dims_better(s->cur, s->best, s->k)) {
			memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
			s->found = true;
		}
		return;
	}
	/* cur[i] must be at least the (k-i)-th root of m. */
	for (int d = maxd < m ? maxd : m; d >= 1; d--) {
		long long p = 1;
		int left = s->k - i;
		if (m % d != 0)
			continue;
		for (int j = 0; j < left && p < m; j++)
			p *= d;
		if (p < m)
			break;	/* smaller d cannot reach m */
		s->cur[i] = d;
		dims_search(s, i + 1, m / d, d);
	}
}

int
MPI_Dims_create(int nnodes, int ndims, int dims[])
{
	long long fixed = 1;
	int k = 0, m;
	struct dims_search s = { 0 };

	if (nnodes < 0 || ndims < 0 || (ndims > 0 && dims == NULL))
		return mpiv_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return mpiv_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
		if (dims[i] > 0) {
			fixed *= dims[i];
			if (fixed > INT_MAX)
				return mpiv_err(NULL, MPI_ERR_DIMS,
				    "MPI_Dims_create");
		} else
			k++;
	}
	if (k == 0)
		return fixed == nnodes ? MPI_SUCCESS :
		    mpiv_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
	if (nnodes % fixed != 0)
		return mpiv_err(NULL, MPI_ERR_DIMS, "MPI_Dims_create");
	m = (int)(nnodes / fixed);
	s.k = k;
	s.cur = malloc((size_t)k * sizeof(int));
	s.best = malloc((size_t)k * sizeof(int));
	if (s.cur == NULL || s.best == NULL) {
		free(s.cur);
		free(s.best);
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Dims_create");
	}
	if (m == 0) {		/* nnodes 0: nothing sensible but zeros */
		for (int i = 0; i < k; i++)
			s.best[i] = 0;
	} else
		dims_search(&s, 0, m, m);
	for (int i = 0, j = 0; i < ndims; i++)
		if (dims[i] == 0)
			dims[i] = s.best[j++];
	free(s.cur);
	free(s.best);
	return MPI_SUCCESS;
}

/* ---------------- Cartesian communicators ---------------- */

static int
topo_cart(MPI_Comm comm, const char *fn, int *err)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS) {
		*err = mpiv_err(NULL, MPI_ERR_COMM, fn);
		return -1;
	}
	if (comm->topo == NULL || comm->topo->kind != MPI_CART) {
		*err = mpiv_err(comm, MPI_ERR_TOPOLOGY, fn);
		return -1;
	}
	return 0;
}

/* Row-major coordinates of rank r. */
static void
topo_coords(const struct mpiv_topo *t, int r, int *coords, int n)
{
	for (int i = t->ndims - 1; i >= 0; i--) {
		int c = r % t->dims[i];
		r /= t->dims[i];
		if (i < n)
			coords[i] = c;
	}
}

int
MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
    const int periods[], int reorder, MPI_Comm *comm_cart)
{
	long long n = 1;
	int rc;

	if (mpiv_comm_check(comm_old) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Cart_create");
	if (comm_old->remote != NULL)
		return mpiv_err(comm_old, MPI_ERR_COMM, "MPI_Cart_create");
	if (comm_cart == NULL || (ndims > 0 && (dims == NULL ||
	    periods == NULL)))
		return mpiv_err(comm_old, MPI_ERR_ARG, "MPI_Cart_create");
	if (ndims < 0)
		return mpiv_err(comm_old, MPI_ERR_DIMS, "MPI_Cart_create");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpiv_err(comm_old, MPI_ERR_DIMS,
			    "MPI_Cart_create");
		n *= dims[i];
		if (n > comm_old->size)
			return mpiv_err(comm_old, MPI_ERR_DIMS,
			    "MPI_Cart_create");
	}
	rc = mpiv_comm_split(comm_old, comm_old->rank < n ? 0 : MPI_UNDEFINED,
	    comm_old->rank, comm_cart);
	if (rc != MPI_SUCCESS)
		return mpiv_err(comm_old, rc, "MPI_Cart_create");
	if (*comm_cart == MPI_COMM_NULL)
		return MPI_SUCCESS;
	if (((*comm_cart)->topo = topo_new(ndims, dims, periods)) == NULL) {
		MPI_Comm_free(comm_cart);
		return mpiv_err(comm_old, MPI_ERR_NO_MEM, "MPI_Cart_create");
	}
	return MPI_SUCCESS;
}

int
MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	int err;

	if (topo_cart(comm, "MPI_Cart_coords", &err) < 0)
		return err;
	if (rank < 0 || rank >= comm->size)
		return mpiv_err(comm, MPI_ERR_RANK, "MPI_Cart_coords");
	if (maxdims < 0 || (maxdims > 0 && coords == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cart_coords");
	topo_coords(comm->topo, rank, coords, maxdims);
	return MPI_SUCCESS;
}

int
MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	struct mpiv_topo *t;
	int err, r = 0;

	if (topo_cart(comm, "MPI_Cart_rank", &err) < 0)
		return err;
	t = comm->topo;
	if (rank == NULL || (t->ndims > 0 && coords == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cart_rank");
	for (int i = 0; i < t->ndims; i++) {
		int c = coords[i];
		if (t->periods[i])
			c = ((c % t->dims[i]) + t->dims[i]) % t->dims[i];
		else if (c < 0 || c >= t->dims[i])
			return mpiv_err(comm, MPI_ERR_RANK, "MPI_Cart_rank");
		r = r * t->dims[i] + c;
	}
	*rank = r;
	return MPI_SUCCESS;
}

int
MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
    int *rank_dest)
{
	struct mpiv_topo *t;
	int err, *c, mine, d, stride = 1;

	if (topo_cart(comm, "MPI_Cart_shift", &err) < 0)
		return err;
	t = comm->topo;
	if (direction < 0 || direction >= t->ndims || rank_source == NULL ||
	    rank_dest == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cart_shift");
	if ((c = malloc((size_t)t->ndims * sizeof(int))) == NULL)
		return mpiv_err(comm, MPI_ERR_NO_MEM, "MPI_Cart_shift");
	topo_coords(t, comm->rank, c, t->ndims);
	mine = c[direction];
	d = t->dims[direction];
	free(c);
	for (int i = direction + 1; i < t->ndims; i++)
		stride *= t->dims[i];
	/* Each neighbour is our rank moved along `direction`. */
	for (int s = 0; s < 2; s++) {
		long long to = (long long)mine + (s == 0 ? disp : -(long long)disp);
		int *out = s == 0 ? rank_dest : rank_source;
		if (t->periods[direction])
			to = ((to % d) + d) % d;
		else if (to < 0 || to >= d) {
			*out = MPI_PROC_NULL;
			continue;
		}
		*out = comm->rank + (int)(to - mine) * stride;
	}
	return MPI_SUCCESS;
}

int
MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
    int coords[])
{
	struct mpiv_topo *t;
	int err;

	if (topo_cart(comm, "MPI_Cart_get", &err) < 0)
		return err;
	t = comm->topo;
	if (maxdims < 0 || (maxdims > 0 && (dims == NULL || periods == NULL ||
	    coords == NULL)))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cart_get");
	for (int i = 0; i < t->ndims && i < maxdims; i++) {
		dims[i] = t->dims[i];
		periods[i] = t->periods[i];
	}
	topo_coords(t, comm->rank, coords, maxdims);
	return MPI_SUCCESS;
}

int
MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	int err;

	if (topo_cart(comm, "MPI_Cartdim_get", &err) < 0)
		return err;
	if (ndims == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cartdim_get");
	*ndims = comm->topo->ndims;
	return MPI_SUCCESS;
}

/*
 * Keeps the dimensions flagged in remain_dims: ranks that agree on the
 * dropped coordinates form one sub-grid (color), ordered as in comm.
 */
int
MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	struct mpiv_topo *t;
	int err, *c, *kd, *kp, nk = 0, color = 0, rc;

	if (topo_cart(comm, "MPI_Cart_sub", &err) < 0)
		return err;
	t = comm->topo;
	if (newcomm == NULL || (t->ndims > 0 && remain_dims == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cart_sub");
	c = malloc(((size_t)t->ndims + 1) * sizeof(int));
	kd = malloc(((size_t)t->ndims + 1) * sizeof(int));
	kp = malloc(((size_t)t->ndims + 1) * sizeof(int));
	if (c == NULL || kd == NULL || kp == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	topo_coords(t, comm->rank, c, t->ndims);
	for (int i = 0; i < t->ndims; i++) {
		if (remain_dims[i]) {
			kd[nk] = t->dims[i];
			kp[nk] = t->periods[i];
			nk++;
		} else
			color = color * t->dims[i] + c[i];
	}
	rc = mpiv_comm_split(comm, color, comm->rank, newcomm);
	if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL &&
	    ((*newcomm)->topo = topo_new(nk, kd, kp)) == NULL) {
		MPI_Comm_free(newcomm);
		rc = MPI_ERR_NO_MEM;
	}
out_free:
	free(c);
	free(kd);
	free(kp);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Cart_sub");
}

int
MPI_Topo_test(MPI_Comm comm, int *status)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Topo_test");
	if (status == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Topo_test");
	*status = comm->topo ? comm->topo->kind : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
