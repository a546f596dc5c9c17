/* topo_graph: Graph_create (a ring; a graph of n-1 nodes leaves the last
 * rank with COMM_NULL), Graphdims_get, Graph_get, Graph_neighbors(_count),
 * Graph_map, Cart_map, Topo_test (MPI_GRAPH, MPI_DIST_GRAPH);
 * Dist_graph_create_adjacent (weighted, MPI_UNWEIGHTED, degree 0 with
 * MPI_WEIGHTS_EMPTY), Dist_graph_create (all edges named by rank 0, and
 * each rank naming its own weighted edges), Dist_graph_neighbors(_count);
 * Comm_dup keeps the topology. */
#include "mpitest.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "topo_graph");
	int n = t_size, me = t_rank, st, k;

	/* ring graph */
	int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 2 * (size_t)n);
	for (int i = 0; i < n; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = mod(i - 1, n);
		edges[2 * i + 1] = mod(i + 1, n);
	}
	MPI_Comm g, g2;
	MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
	MPI_OK(MPI_Topo_test(g, &st));
	CHECK_INT(st, MPI_GRAPH, "Topo_test(graph)");
	int nn, ne;
	MPI_OK(MPI_Graphdims_get(g, &nn, &ne));
	CHECK(nn == n && ne == 2 * n, "Graphdims_get %d %d", nn, ne);
	int *gi = malloc(sizeof(int) * (size_t)n), *ge = malloc(sizeof(int) * 2 * (size_t)n);
	MPI_OK(MPI_Graph_get(g, n, 2 * n, gi, ge));
	for (int i = 0; i < n; i++)
		CHECK_INT(gi[i], index[i], "Graph_get index");
	for (int e = 0; e < 2 * n; e++)
		CHECK_INT(ge[e], edges[e], "Graph_get edges");
	int r;
	MPI_OK(MPI_Comm_rank(g, &r));
	CHECK_INT(r, me, "graph rank without reorder");
	for (int q = 0; q < n; q++) {
		int nb[2];
		MPI_OK(MPI_Graph_neighbors_count(g, q, &k));
		CHECK_INT(k, 2, "Graph_neighbors_count");
		MPI_OK(MPI_Graph_neighbors(g, q, 2, nb));
		CHECK(nb[0] == mod(q - 1, n) && nb[1] == mod(q + 1, n), "Graph_neighbors(%d)", q);
	}
	MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &k));
	CHECK_INT(k, me, "Graph_map");
	int dims1[1] = { n }, per1[1] = { 1 };
	MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims1, per1, &k));
	CHECK_INT(k, me, "Cart_map");
	MPI_OK(MPI_Comm_dup(g, &g2));
	MPI_OK(MPI_Topo_test(g2, &st));
	CHECK_INT(st, MPI_GRAPH, "Topo_test(dup of graph)");
	MPI_OK(MPI_Graphdims_get(g2, &nn, &ne));
	CHECK(nn == n && ne == 2 * n, "Graphdims_get on dup");
	MPI_OK(MPI_Comm_free(&g2));
	MPI_OK(MPI_Comm_free(&g));

	/* a graph of n-1 nodes: a line, the last rank is left out */
	if (n > 1) {
		int m = n - 1;
		for (int i = 0; i < m; i++)
			index[i] = 0;	/* no edges: all nodes isolated */
		MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, m, index, edges, 0, &g));
		if (me == n - 1) {
			CHECK(g == MPI_COMM_NULL, "rank beyond nnodes gets COMM_NULL");
		} else {
			MPI_OK(MPI_Comm_size(g, &k));
			CHECK_INT(k, m, "graph size");
			MPI_OK(MPI_Graph_neighbors_count(g, me, &k));
			CHECK_INT(k, 0, "isolated node");
			MPI_OK(MPI_Comm_free(&g));
		}
	}

	/* dist graph, adjacent, weighted */
	MPI_Comm dg;
	int src[2] = { mod(me - 1, n), mod(me - 2, n) }, sw[2] = { 1, 2 };
	int dst[2] = { mod(me + 1, n), mod(me + 2, n) }, dw[2] = { 1, 2 };
	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw,
	    MPI_INFO_NULL, 0, &dg));
	MPI_OK(MPI_Topo_test(dg, &st));
	CHECK_INT(st, MPI_DIST_GRAPH, "Topo_test(dist graph)");
	int in, out, wtd, s2[2], sw2[2], d2[2], dw2[2];
	MPI_OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &wtd));
	CHECK(in == 2 && out == 2 && wtd, "neighbors_count %d %d %d", in, out, wtd);
	MPI_OK(MPI_Dist_graph_neighbors(dg, 2, s2, sw2, 2, d2, dw2));
	for (int i = 0; i < 2; i++)
		CHECK(s2[i] == src[i] && sw2[i] == sw[i] && d2[i] == dst[i] && dw2[i] == dw[i], "Dist_graph_neighbors %d", i);
	MPI_OK(MPI_Comm_dup(dg, &g2));
	MPI_OK(MPI_Dist_graph_neighbors(g2, 2, s2, sw2, 2, d2, dw2));
	CHECK(s2[1] == src[1] && dw2[1] == 2, "Dist_graph_neighbors on dup");
	MPI_OK(MPI_Comm_free(&g2));
	MPI_OK(MPI_Comm_free(&dg));
	/* unweighted */
	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst,
	    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
	MPI_OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &wtd));
	CHECK(in == 1 && out == 1 && !wtd, "unweighted counts %d %d %d", in, out, wtd);
	MPI_OK(MPI_Dist_graph_neighbors(dg, 1, s2, MPI_UNWEIGHTED, 1, d2, MPI_UNWEIGHTED));
	CHECK(s2[0] == src[0] && d2[0] == dst[0], "unweighted neighbors");
	MPI_OK(MPI_Comm_free(&dg));
	/* no edges at all */
	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
	    MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
	MPI_OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &wtd));
	CHECK(in == 0 && out == 0, "empty dist graph");
	MPI_OK(MPI_Comm_free(&dg));

	/* Dist_graph_create: rank 0 names the ring i -> i+1 */
	int *srcs = malloc(sizeof(int) * (size_t)n), *degs = malloc(sizeof(int) * (size_t)n);
	int *dsts = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++) { srcs[i] = i; degs[i] = 1; dsts[i] = mod(i + 1, n); }
	MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, me == 0 ? n : 0, srcs, degs, dsts,
	    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
	MPI_OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &wtd));
	CHECK(in == 1 && out == 1 && !wtd, "Dist_graph_create ring counts %d %d %d", in, out, wtd);
	MPI_OK(MPI_Dist_graph_neighbors(dg, 1, s2, MPI_UNWEIGHTED, 1, d2, MPI_UNWEIGHTED));
	CHECK(s2[0] == mod(me - 1, n) && d2[0] == mod(me + 1, n), "Dist_graph_create ring");
	MPI_OK(MPI_Comm_free(&dg));
	/* no edges at all, MPI_UNWEIGHTED from everyone: unweighted */
	MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL,
	    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
	MPI_OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &wtd));
	CHECK(in == 0 && out == 0 && !wtd, "edgeless unweighted Dist_graph_create counts %d %d %d", in, out, wtd);
	MPI_OK(MPI_Comm_free(&dg));
	/* each rank names its own edges me -> me+1 (weight 10+me), me -> me+3 (weight 20+me) */
	int one = me, deg = 2, ed[2] = { mod(me + 1, n), mod(me + 3, n) }, ew[2] = { 10 + me, 20 + me };
	MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &one, &deg, ed, ew, MPI_INFO_NULL, 0, &dg));
	MPI_OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &wtd));
	CHECK(in == 2 && out == 2 && wtd, "Dist_graph_create counts %d %d %d", in, out, wtd);
	MPI_OK(MPI_Dist_graph_neighbors(dg, 2, s2, sw2, 2, d2, dw2));
	/* the order is the implementation's: compare as sets of (rank, weight) */
	int ins[2] = { s2[0] * 1000 + sw2[0], s2[1] * 1000 + sw2[1] };
	int outs[2] = { d2[0] * 1000 + dw2[0], d2[1] * 1000 + dw2[1] };
	int wi[2] = { mod(me - 1, n) * 1000 + 10 + mod(me - 1, n), mod(me - 3, n) * 1000 + 20 + mod(me - 3, n) };
	int wo[2] = { ed[0] * 1000 + ew[0], ed[1] * 1000 + ew[1] };
	qsort(ins, 2, sizeof(int), cmp_int); qsort(outs, 2, sizeof(int), cmp_int);
	qsort(wi, 2, sizeof(int), cmp_int); qsort(wo, 2, sizeof(int), cmp_int);
	CHECK(ins[0] == wi[0] && ins[1] == wi[1], "Dist_graph_create sources %d %d want %d %d", ins[0], ins[1], wi[0], wi[1]);
	CHECK(outs[0] == wo[0] && outs[1] == wo[1], "Dist_graph_create destinations");
	t_mix(ins, sizeof ins);
	t_mix(outs, sizeof outs);
	MPI_OK(MPI_Comm_free(&dg));

#ifdef MPIV_MPI_LITE
	/* bad input: clear errors, the job goes on */
	{
		int cls, rc, bad_edges[2] = { 0, n };	/* node n does not exist */
		int bidx[1] = { 2 };
		MPI_Comm bc = MPI_COMM_NULL;
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		rc = MPI_Graph_create(MPI_COMM_WORLD, 1, bidx, bad_edges, 0, &bc);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_ARG, "Graph_create with an edge to no node");
		int x = 1, y[2];
		rc = MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_TOPOLOGY, "Neighbor_allgather without a topology");
		rc = MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_TOPOLOGY, "Graphdims_get without a graph");
		int bad_src[1] = { n };
		rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad_src, MPI_UNWEIGHTED, 0, NULL,
		    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bc);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_RANK, "Dist_graph_create_adjacent with a source beyond the group");
		CHECK(bc == MPI_COMM_NULL, "no communicator made");
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
#endif
	free(index); free(edges); free(gi); free(ge); free(srcs); free(degs); free(dsts);
	return t_finish();
}
