/*
 * topo.h: the topology a communicator may carry, shared by topo.c
 * (Cartesian), topo_graph.c (graph and distributed graph) and neighbor.c
 * (neighbourhood collectives).
 */
#ifndef MPIV_TOPO_H
#define MPIV_TOPO_H

#include "impl.h"

struct mpiv_topo {
	int kind;		/* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
	/* MPI_CART */
	int ndims;
	int *dims;
	int *periods;
	/* MPI_GRAPH: node i's neighbours are edges[index[i-1] .. index[i]) */
	int nnodes;
	int *index, *edges;
	/* MPI_DIST_GRAPH: this process's own edges */
	int indegree, outdegree;
	int *sources, *sourceweights, *dests, *destweights;
	bool weighted;
};

/* The graph parts (topo_graph.c), for mpiv_topo_free/dup. */
void mpiv_topo_graph_free(struct mpiv_topo *t);
int mpiv_topo_graph_dup(const struct mpiv_topo *t, struct mpiv_topo **out);

/* This process's neighbours in a topology, as the neighbourhood
   collectives see them (topo_graph.c): in[0..*nin) and out[0..*nout),
   malloc'ed; MPI_PROC_NULL entries take a block but move nothing.
   MPI_ERR_TOPOLOGY without a topology. */
int mpiv_topo_neighbors(MPI_Comm comm, int **in, int *nin, int **out,
    int *nout);

#endif
