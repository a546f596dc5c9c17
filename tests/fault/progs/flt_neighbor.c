/* flt_neighbor: neighbourhood collectives under fault injection.
 *   flt_neighbor [ROUNDS=200]
 * A 2-D Cartesian grid (periodic in dim 0 only), a graph ring and a
 * distributed graph (sources me-1, me-2, destinations me+1, me+2), made
 * once. Each round: Neighbor_allgather and Neighbor_alltoall on the grid,
 * Neighbor_alltoall on the ring, Neighbor_alltoallv on the distributed
 * graph, every value checked; odd rounds use the MPI_Ineighbor_ forms
 * (the grid's two outstanding together, completed by Waitall; the
 * ring's by a Test loop, an outcome that is logged); every 20th round a new distributed graph
 * is created, used and freed. Rank 0 prints a digest every ROUNDS/5
 * rounds. */
#include "flt.h"

static int mod(int a, int n) { return ((a % n) + n) % n; }

static uint64_t dist_round(MPI_Comm c, long r)
{
	int src[2] = { mod(me - 1, np), mod(me - 2, np) };
	long sb[3] = { me * 10L + r, me * 10L + 1 + r, me * 10L + 2 + r }, rb[3] = { -1, -1, -1 };
	int sc[2] = { 1, 2 }, sd[2] = { 0, 1 };
	if (r % 2) {
		MPI_Request q;
		FLT_MPI(MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_LONG, rb, sc, sd, MPI_LONG, c, &q));
		FLT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	} else {
		FLT_MPI(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_LONG, rb, sc, sd, MPI_LONG, c));
	}
	FLT_ASSERT(rb[0] == src[0] * 10L + r && rb[1] == src[1] * 10L + 1 + r &&
	    rb[2] == src[1] * 10L + 2 + r, "round %ld: dist alltoallv", r);
	return flt_mix(flt_mix((uint64_t)rb[0], (uint64_t)rb[1]), (uint64_t)rb[2]);
}

static MPI_Comm dist_graph(void)
{
	MPI_Comm c;
	int src[2] = { mod(me - 1, np), mod(me - 2, np) }, dst[2] = { mod(me + 1, np), mod(me + 2, np) };
	FLT_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
	    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	return c;
}

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 200);
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	uint64_t h = 0;
	MPI_Comm cart, ring, dist;
	int dims[2] = { 0, 0 }, per[2] = { 1, 0 }, nb[4];
	FLT_MPI(MPI_Dims_create(np, 2, dims));
	FLT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart));
	for (int d = 0; d < 2; d++)
		FLT_MPI(MPI_Cart_shift(cart, d, 1, &nb[2 * d], &nb[2 * d + 1]));
	int *index = malloc(sizeof(int) * (size_t)np), *edges = malloc(sizeof(int) * 2 * (size_t)np);
	for (int i = 0; i < np; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = mod(i - 1, np);
		edges[2 * i + 1] = mod(i + 1, np);
	}
	FLT_MPI(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &ring));
	dist = dist_graph();
	for (long r = 1; r <= rounds; r++) {
		long v = me * 3L + r, ag[4] = { -7, -7, -7, -7 }, sb[4], aa[4] = { -7, -7, -7, -7 };
		for (int j = 0; j < 4; j++)
			sb[j] = me * 100L + j * 10 + r;
		if (r % 2) {
			MPI_Request q[2];
			FLT_MPI(MPI_Ineighbor_allgather(&v, 1, MPI_LONG, ag, 1, MPI_LONG, cart, &q[0]));
			FLT_MPI(MPI_Ineighbor_alltoall(sb, 1, MPI_LONG, aa, 1, MPI_LONG, cart, &q[1]));
			FLT_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
		} else {
			FLT_MPI(MPI_Neighbor_allgather(&v, 1, MPI_LONG, ag, 1, MPI_LONG, cart));
			FLT_MPI(MPI_Neighbor_alltoall(sb, 1, MPI_LONG, aa, 1, MPI_LONG, cart));
		}
		for (int j = 0; j < 4; j++) {
			if (nb[j] == MPI_PROC_NULL) {
				FLT_ASSERT(ag[j] == -7 && aa[j] == -7, "round %ld: PROC_NULL block", r);
				continue;
			}
			FLT_ASSERT(ag[j] == nb[j] * 3L + r, "round %ld: cart allgather %d", r, j);
			FLT_ASSERT(aa[j] == nb[j] * 100L + (j ^ 1) * 10 + r, "round %ld: cart alltoall %d", r, j);
			h = flt_mix(flt_mix(h, (uint64_t)ag[j]), (uint64_t)aa[j]);
		}
		if (np >= 3) {
			long rs[2] = { me * 10L + r, me * 10L + 1 + r }, rr[2] = { -1, -1 };
			if (r % 2) {
				MPI_Request q;
				int done = 0;
				FLT_MPI(MPI_Ineighbor_alltoall(rs, 1, MPI_LONG, rr, 1, MPI_LONG, ring, &q));
				while (!done)
					FLT_MPI(MPI_Test(&q, &done, MPI_STATUS_IGNORE));
			} else {
				FLT_MPI(MPI_Neighbor_alltoall(rs, 1, MPI_LONG, rr, 1, MPI_LONG, ring));
			}
			FLT_ASSERT(rr[0] == mod(me - 1, np) * 10L + 1 + r && rr[1] == mod(me + 1, np) * 10L + r,
			    "round %ld: ring alltoall", r);
			h = flt_mix(flt_mix(h, (uint64_t)rr[0]), (uint64_t)rr[1]);
		}
		h = flt_mix(h, dist_round(dist, r));
		if (r % 20 == 0) {
			MPI_Comm d2 = dist_graph();
			h = flt_mix(h, dist_round(d2, r));
			FLT_MPI(MPI_Comm_free(&d2));
		}
		if (r % every == 0) {
			uint64_t all = 0;
			FLT_MPI(MPI_Reduce(&h, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD));
			if (me == 0)
				FLT_SAY("neighbor: round %ld digest %016llx\n", r, (unsigned long long)all);
		}
	}
	FLT_MPI(MPI_Comm_free(&dist));
	FLT_MPI(MPI_Comm_free(&ring));
	FLT_MPI(MPI_Comm_free(&cart));
	free(index);
	free(edges);
	FLT_MPI(MPI_Finalize());
	return 0;
}
