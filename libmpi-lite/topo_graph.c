/*
 * topo_graph.c: graph (MPI_Graph_create) and distributed graph
 * (MPI_Dist_graph_create, _adjacent) topologies, and the neighbour lists
 * the neighbourhood collectives use. As for Cartesian ones, ranks are
 * never reordered (reorder is a hint): a graph communicator is a split
 * of the old one keeping the first nnodes ranks, a distributed graph one
 * a split keeping all of them.
 *
 * MPI_Dist_graph_create lets any process name any edge: every process
 * gathers all the edges named (an allgather, in rank order) and keeps
 * those that end or start at itself, in the order they were named
 * (by naming rank, then position): the same neighbour order in a
 * re-execution.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

/* Internal tags on comm_old's collective context (coll.c uses tags
   below 64, comm.c 64 to 66, intercomm.h 67 to 72). */
enum { GRAPH_TAG_COUNT = 80, GRAPH_TAG_EDGES };

void
mpiv_topo_graph_free(struct mpiv_topo *t)
{
	free(t->index);
	free(t->edges);
	free(t->sources);
	free(t->sourceweights);
	free(t->dests);
	free(t->destweights);
	t->index = t->edges = t->sources = t->sourceweights = NULL;
	t->dests = t->destweights = NULL;
}

/* A malloc'ed copy of n ints (room for one when n is 0). */
static int *
graph_copy(const int *a, int n)
{
	int *c = malloc(((size_t)n + 1) * sizeof(int));

	if (c != NULL && n > 0 && a != NULL)
		memcpy(c, a, (size_t)n * sizeof(int));
	else if (c != NULL && n > 0)
		memset(c, 0, (size_t)n * sizeof(int));
	return c;
}

int
mpiv_topo_graph_dup(const struct mpiv_topo *t, struct mpiv_topo **out)
{
	struct mpiv_topo *n = calloc(1, sizeof(*n));
	int nedges = t->kind == MPI_GRAPH && t->nnodes > 0 ?
	    t->index[t->nnodes - 1] : 0;

	if (n == NULL)
		return MPI_ERR_NO_MEM;
	*n = *t;
	n->dims = n->periods = NULL;
	n->index = n->edges = n->sources = n->sourceweights = NULL;
	n->dests = n->destweights = NULL;
	if (t->kind == MPI_GRAPH) {
		n->index = graph_copy(t->index, t->nnodes);
		n->edges = graph_copy(t->edges, nedges);
		if (n->index == NULL || n->edges == NULL)
			goto out_nomem;
	} else {
		n->sources = graph_copy(t->sources, t->indegree);
		n->sourceweights = graph_copy(t->sourceweights, t->indegree);
		n->dests = graph_copy(t->dests, t->outdegree);
		n->destweights = graph_copy(t->destweights, t->outdegree);
		if (n->sources == NULL || n->sourceweights == NULL ||
		    n->dests == NULL || n->destweights == NULL)
			goto out_nomem;
	}
	*out = n;
	return MPI_SUCCESS;
out_nomem:
	mpiv_topo_graph_free(n);
	free(n);
	return MPI_ERR_NO_MEM;
}

/* Checks comm has a topology of `kind`; reports the error otherwise. */
static int
graph_comm(MPI_Comm comm, int kind, const char *fn, int *err)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS) {
		*err = mpiv_err(NULL, MPI_ERR_COMM, fn);
		return -1;
	}
	if (comm->topo == NULL || comm->topo->kind != kind) {
		*err = mpiv_err(comm, MPI_ERR_TOPOLOGY, fn);
		return -1;
	}
	return 0;
}

/* ---------------- graphs ---------------- */

/* MPI_SUCCESS if (nnodes, index, edges) describe a graph on n ranks. */
static int
graph_check(int nnodes, const int *index, const int *edges, int n)
{
	if (nnodes < 0 || nnodes > n)
		return MPI_ERR_ARG;
	if (nnodes > 0 && index == NULL)
		return MPI_ERR_ARG;
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i > 0 ? index[i - 1] : 0))
			return MPI_ERR_ARG;
	if (nnodes > 0 && index[nnodes - 1] > 0 && edges == NULL)
		return MPI_ERR_ARG;
	for (int e = 0; nnodes > 0 && e < index[nnodes - 1]; e++)
		if (edges[e] < 0 || edges[e] >= nnodes)
			return MPI_ERR_ARG;
	return MPI_SUCCESS;
}

int
MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
    const int edges[], int reorder, MPI_Comm *comm_graph)
{
	const char *fn = "MPI_Graph_create";
	struct mpiv_topo *t;
	int rc, nedges;

	(void)reorder;
	if (mpiv_comm_check(comm_old) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, fn);
	if (comm_old->remote != NULL)
		return mpiv_err(comm_old, MPI_ERR_COMM, fn);
	if (comm_graph == NULL)
		return mpiv_err(comm_old, MPI_ERR_ARG, fn);
	if ((rc = graph_check(nnodes, index, edges, comm_old->size)) !=
	    MPI_SUCCESS) {
		mpiv_err_detail("nnodes %d, index and edges do not describe a "
		    "graph on %d ranks", nnodes, comm_old->size);
		return mpiv_err(comm_old, rc, fn);
	}
	nedges = nnodes > 0 ? index[nnodes - 1] : 0;
	rc = mpiv_comm_split(comm_old, comm_old->rank < nnodes ? 0 :
	    MPI_UNDEFINED, comm_old->rank, comm_graph);
	if (rc != MPI_SUCCESS)
		return mpiv_err(comm_old, rc, fn);
	if (*comm_graph == MPI_COMM_NULL)
		return MPI_SUCCESS;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		goto out_nomem;
	t->kind = MPI_GRAPH;
	t->nnodes = nnodes;
	t->index = graph_copy(index, nnodes);
	t->edges = graph_copy(edges, nedges);
	(*comm_graph)->topo = t;
	if (t->index == NULL || t->edges == NULL)
		goto out_nomem;
	return MPI_SUCCESS;
out_nomem:
	MPI_Comm_free(comm_graph);
	return mpiv_err(comm_old, MPI_ERR_NO_MEM, fn);
}

int
MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	int err;

	if (graph_comm(comm, MPI_GRAPH, "MPI_Graphdims_get", &err) < 0)
		return err;
	if (nnodes == NULL || nedges == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Graphdims_get");
	*nnodes = comm->topo->nnodes;
	*nedges = comm->topo->nnodes > 0 ?
	    comm->topo->index[comm->topo->nnodes - 1] : 0;
	return MPI_SUCCESS;
}

int
MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
    int edges[])
{
	struct mpiv_topo *t;
	int err, nedges;

	if (graph_comm(comm, MPI_GRAPH, "MPI_Graph_get", &err) < 0)
		return err;
	t = comm->topo;
	nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
	if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == NULL) ||
	    (maxedges > 0 && edges == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Graph_get");
	for (int i = 0; i < maxindex && i < t->nnodes; i++)
		index[i] = t->index[i];
	for (int e = 0; e < maxedges && e < nedges; e++)
		edges[e] = t->edges[e];
	return MPI_SUCCESS;
}

int
MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
	struct mpiv_topo *t;
	int err;

	if (graph_comm(comm, MPI_GRAPH, "MPI_Graph_neighbors_count", &err) < 0)
		return err;
	t = comm->topo;
	if (rank < 0 || rank >= t->nnodes)
		return mpiv_err(comm, MPI_ERR_RANK,
		    "MPI_Graph_neighbors_count");
	if (nneighbors == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Graph_neighbors_count");
	*nneighbors = t->index[rank] - (rank > 0 ? t->index[rank - 1] : 0);
	return MPI_SUCCESS;
}

int
MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
    int neighbors[])
{
	struct mpiv_topo *t;
	int err, first;

	if (graph_comm(comm, MPI_GRAPH, "MPI_Graph_neighbors", &err) < 0)
		return err;
	t = comm->topo;
	if (rank < 0 || rank >= t->nnodes)
		return mpiv_err(comm, MPI_ERR_RANK, "MPI_Graph_neighbors");
	if (maxneighbors < 0 || (maxneighbors > 0 && neighbors == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Graph_neighbors");
	first = rank > 0 ? t->index[rank - 1] : 0;
	for (int i = 0; i < maxneighbors && first + i < t->index[rank]; i++)
		neighbors[i] = t->edges[first + i];
	return MPI_SUCCESS;
}

/* No reordering: rank r keeps r if the graph has a node r. */
int
MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
    const int edges[], int *newrank)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Graph_map");
	if (newrank == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Graph_map");
	if ((rc = graph_check(nnodes, index, edges, comm->size)) !=
	    MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Graph_map");
	*newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

int
MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
    int *newrank)
{
	long long n = 1;

	(void)periods;
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Cart_map");
	if (newrank == NULL || ndims < 0 || (ndims > 0 && dims == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Cart_map");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpiv_err(comm, MPI_ERR_DIMS, "MPI_Cart_map");
		if ((n *= dims[i]) > comm->size)
			return mpiv_err(comm, MPI_ERR_DIMS, "MPI_Cart_map");
	}
	*newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

/* ---------------- distributed graphs ---------------- */

/* Weights given: not MPI_UNWEIGHTED (MPI_WEIGHTS_EMPTY: none, degree 0). */
static bool
graph_weighted(const int *w)
{
	return w != MPI_UNWEIGHTED;
}

/* Weights of a degree-d list: a copy, or ones when unweighted. */
static int *
graph_weights(const int *w, int d)
{
	int *c;

	if (w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY)
		return graph_copy(w, d);
	if ((c = graph_copy(NULL, d)) != NULL)
		for (int i = 0; i < d; i++)
			c[i] = 1;
	return c;
}

/* The new communicator (a split keeping every rank) with topology t;
   frees t on failure. */
static int
graph_attach(MPI_Comm comm_old, struct mpiv_topo *t, MPI_Comm *out)
{
	int rc = mpiv_comm_split(comm_old, 0, comm_old->rank, out);

	if (rc != MPI_SUCCESS) {
		mpiv_topo_graph_free(t);
		free(t);
		return rc;
	}
	(*out)->topo = t;
	return MPI_SUCCESS;
}

static int
graph_check_ranks(const int *r, int n, int size)
{
	if (n > 0 && r == NULL)
		return MPI_ERR_ARG;
	for (int i = 0; i < n; i++)
		if (r[i] < 0 || r[i] >= size)
			return MPI_ERR_RANK;
	return MPI_SUCCESS;
}

int
MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
    const int sources[], const int sourceweights[], int outdegree,
    const int destinations[], const int destweights[], MPI_Info info,
    int reorder, MPI_Comm *comm_dist_graph)
{
	const char *fn = "MPI_Dist_graph_create_adjacent";
	struct mpiv_topo *t;
	int rc;

	(void)info;
	(void)reorder;
	if (mpiv_comm_check(comm_old) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, fn);
	if (comm_old->remote != NULL)
		return mpiv_err(comm_old, MPI_ERR_COMM, fn);
	if (comm_dist_graph == NULL || indegree < 0 || outdegree < 0 ||
	    (indegree > 0 && sourceweights == NULL) ||
	    (outdegree > 0 && destweights == NULL) ||
	    (indegree > 0 && sourceweights == MPI_WEIGHTS_EMPTY) ||
	    (outdegree > 0 && destweights == MPI_WEIGHTS_EMPTY))
		return mpiv_err(comm_old, MPI_ERR_ARG, fn);
	if ((rc = graph_check_ranks(sources, indegree, comm_old->size)) !=
	    MPI_SUCCESS || (rc = graph_check_ranks(destinations, outdegree,
	    comm_old->size)) != MPI_SUCCESS)
		return mpiv_err(comm_old, rc, fn);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return mpiv_err(comm_old, MPI_ERR_NO_MEM, fn);
	t->kind = MPI_DIST_GRAPH;
	t->indegree = indegree;
	t->outdegree = outdegree;
	t->weighted = graph_weighted(sourceweights) &&
	    graph_weighted(destweights);
	t->sources = graph_copy(sources, indegree);
	t->dests = graph_copy(destinations, outdegree);
	t->sourceweights = graph_weights(sourceweights, indegree);
	t->destweights = graph_weights(destweights, outdegree);
	if (t->sources == NULL || t->dests == NULL ||
	    t->sourceweights == NULL || t->destweights == NULL) {
		mpiv_topo_graph_free(t);
		free(t);
		return mpiv_err(comm_old, MPI_ERR_NO_MEM, fn);
	}
	rc = graph_attach(comm_old, t, comm_dist_graph);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm_old, rc, fn);
}

/* Edges a process names, as (source, destination, weight) triples. */
int
MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
    const int degrees[], const int destinations[], const int weights[],
    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
	const char *fn = "MPI_Dist_graph_create";
	int size, me, rc, nmine = 0, maxe = 0, *counts = NULL, *mine = NULL;
	int *all = NULL, in = 0, out = 0, wflag[2], wall[2];
	struct mpiv_topo *t = NULL;

	(void)info;
	(void)reorder;
	if (mpiv_comm_check(comm_old) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, fn);
	if (comm_old->remote != NULL)
		return mpiv_err(comm_old, MPI_ERR_COMM, fn);
	size = comm_old->size;
	me = comm_old->rank;
	if (comm_dist_graph == NULL || n < 0 || (n > 0 && (sources == NULL ||
	    degrees == NULL)))
		return mpiv_err(comm_old, MPI_ERR_ARG, fn);
	if ((rc = graph_check_ranks(sources, n, size)) != MPI_SUCCESS)
		return mpiv_err(comm_old, rc, fn);
	for (int i = 0; i < n; i++) {
		if (degrees[i] < 0 || nmine > INT_MAX / 3 - degrees[i])
			return mpiv_err(comm_old, MPI_ERR_ARG, fn);
		nmine += degrees[i];
	}
	if ((rc = graph_check_ranks(destinations, nmine, size)) != MPI_SUCCESS)
		return mpiv_err(comm_old, rc, fn);
	if (nmine > 0 && (weights == NULL || weights == MPI_WEIGHTS_EMPTY))
		return mpiv_err(comm_old, MPI_ERR_ARG, fn);
	/* everyone's edge count (and whether it gave weights) first */
	wflag[0] = nmine;
	wflag[1] = graph_weighted(weights);
	counts = malloc(2 * (size_t)size * sizeof(int));
	if (counts == NULL)
		return mpiv_err(comm_old, MPI_ERR_NO_MEM, fn);
	rc = mpiv_coll_allgather(wflag, 2, MPI_INT, counts, 2, MPI_INT,
	    comm_old, GRAPH_TAG_COUNT);
	if (rc != MPI_SUCCESS)
		goto out_free;
	/* weighted unless MPI_UNWEIGHTED was given (MPI: by all or none,
	   with edges or without) */
	wall[1] = 1;
	for (int r = 0; r < size; r++) {
		if (counts[2 * r] > maxe)
			maxe = counts[2 * r];
		if (!counts[2 * r + 1])
			wall[1] = 0;
	}
	mine = malloc((3 * (size_t)maxe + 1) * sizeof(int));
	all = malloc((3 * (size_t)maxe * (size_t)size + 1) * sizeof(int));
	if (mine == NULL || all == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int i = 0, e = 0; i < n; i++)
		for (int d = 0; d < degrees[i]; d++, e++) {
			mine[3 * e] = sources[i];
			mine[3 * e + 1] = destinations[e];
			mine[3 * e + 2] = graph_weighted(weights) ?
			    weights[e] : 1;
		}
	rc = mpiv_coll_allgather(mine, 3 * maxe, MPI_INT, all, 3 * maxe,
	    MPI_INT, comm_old, GRAPH_TAG_EDGES);
	if (rc != MPI_SUCCESS)
		goto out_free;
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int r = 0; r < size; r++)
		for (int e = 0; e < counts[2 * r]; e++) {
			const int *x = all + 3 * ((size_t)r * maxe + e);
			in += x[1] == me;
			out += x[0] == me;
		}
	t->kind = MPI_DIST_GRAPH;
	t->weighted = wall[1];
	t->indegree = in;
	t->outdegree = out;
	t->sources = graph_copy(NULL, in);
	t->sourceweights = graph_copy(NULL, in);
	t->dests = graph_copy(NULL, out);
	t->destweights = graph_copy(NULL, out);
	if (t->sources == NULL || t->sourceweights == NULL ||
	    t->dests == NULL || t->destweights == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	in = out = 0;
	for (int r = 0; r < size; r++)
		for (int e = 0; e < counts[2 * r]; e++) {
			const int *x = all + 3 * ((size_t)r * maxe + e);
			if (x[1] == me) {
				t->sources[in] = x[0];
				t->sourceweights[in++] = x[2];
			}
			if (x[0] == me) {
				t->dests[out] = x[1];
				t->destweights[out++] = x[2];
			}
		}
	rc = graph_attach(comm_old, t, comm_dist_graph);
	t = NULL;
out_free:
	if (t != NULL) {
		mpiv_topo_graph_free(t);
		free(t);
	}
	free(counts);
	free(mine);
	free(all);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm_old, rc, fn);
}

int
MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
    int *weighted)
{
	const char *fn = "MPI_Dist_graph_neighbors_count";
	int err;

	if (graph_comm(comm, MPI_DIST_GRAPH, fn, &err) < 0)
		return err;
	if (indegree == NULL || outdegree == NULL || weighted == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, fn);
	*indegree = comm->topo->indegree;
	*outdegree = comm->topo->outdegree;
	*weighted = comm->topo->weighted;
	return MPI_SUCCESS;
}

int
MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
    int sourceweights[], int maxoutdegree, int destinations[],
    int destweights[])
{
	const char *fn = "MPI_Dist_graph_neighbors";
	struct mpiv_topo *t;
	int err;

	if (graph_comm(comm, MPI_DIST_GRAPH, fn, &err) < 0)
		return err;
	t = comm->topo;
	if (maxindegree < 0 || maxoutdegree < 0 ||
	    (maxindegree > 0 && sources == NULL) ||
	    (maxoutdegree > 0 && destinations == NULL))
		return mpiv_err(comm, MPI_ERR_ARG, fn);
	for (int i = 0; i < maxindegree && i < t->indegree; i++) {
		sources[i] = t->sources[i];
		if (t->weighted && graph_weighted(sourceweights) &&
		    sourceweights != NULL && sourceweights != MPI_WEIGHTS_EMPTY)
			sourceweights[i] = t->sourceweights[i];
	}
	for (int i = 0; i < maxoutdegree && i < t->outdegree; i++) {
		destinations[i] = t->dests[i];
		if (t->weighted && graph_weighted(destweights) &&
		    destweights != NULL && destweights != MPI_WEIGHTS_EMPTY)
			destweights[i] = t->destweights[i];
	}
	return MPI_SUCCESS;
}

/* ---------------- neighbour lists ---------------- */

int
mpiv_topo_neighbors(MPI_Comm comm, int **in, int *nin, int **out, int *nout)
{
	struct mpiv_topo *t = comm->topo;
	int n = 0, *a = NULL, *b = NULL;

	if (t == NULL)
		return MPI_ERR_TOPOLOGY;
	switch (t->kind) {
	case MPI_CART:
		/* per dimension: the -1 neighbour, then the +1 one */
		n = 2 * t->ndims;
		a = graph_copy(NULL, n);
		if (a == NULL)
			return MPI_ERR_NO_MEM;
		for (int d = 0; d < t->ndims; d++) {
			int src, dst;
			if (MPI_Cart_shift(comm, d, 1, &src, &dst) !=
			    MPI_SUCCESS) {
				free(a);
				return MPI_ERR_TOPOLOGY;
			}
			a[2 * d] = src;
			a[2 * d + 1] = dst;
		}
		b = graph_copy(a, n);
		*nin = *nout = n;
		break;
	case MPI_GRAPH: {
		int first = comm->rank > 0 ? t->index[comm->rank - 1] : 0;
		n = t->index[comm->rank] - first;
		a = graph_copy(t->edges + first, n);
		b = graph_copy(t->edges + first, n);
		*nin = *nout = n;
		break;
	}
	default:
		a = graph_copy(t->sources, t->indegree);
		b = graph_copy(t->dests, t->outdegree);
		*nin = t->indegree;
		*nout = t->outdegree;
		break;
	}
	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return MPI_ERR_NO_MEM;
	}
	*in = a;
	*out = b;
	return MPI_SUCCESS;
}
