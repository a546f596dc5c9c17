/*
 * coll_group.c: the building blocks of the large-data reductions of
 * coll.c (docs/COLLECTIVES.md). Commutative ops only: each block's
 * result is combined on one rank and copied to the others. Every
 * receive names its source; the pattern depends only on the arguments.
 */
#include "coll.h"

void
coll_group_init(struct coll_group *g, MPI_Comm comm, int root)
{
	g->size = comm->size;
	g->root = root;
	g->pof2 = coll_pof2(comm->size);
	g->rem = comm->size - g->pof2;
	g->vrank = (comm->rank - root + comm->size) % comm->size;
	if (g->vrank < 2 * g->rem)
		g->newrank = g->vrank % 2 ? -1 : g->vrank / 2;
	else
		g->newrank = g->vrank - g->rem;
}

/* Comm rank of group member m. */
int
coll_group_rank(const struct coll_group *g, int m)
{
	int v = m < g->rem ? m * 2 : m + g->rem;

	return (v + g->root) % g->size;
}

/* The fold: an extra rank sends buf to its partner, which combines it
   into its own buf (tmp: room for count elements). */
int
coll_group_fold(const struct coll_group *g, void *buf, void *tmp, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag)
{
	int rc;

	if (g->vrank >= 2 * g->rem)
		return MPI_SUCCESS;
	if (g->newrank < 0)
		return mpiv_send_coll(buf, count, dt,
		    (g->vrank - 1 + g->root) % g->size, tag, comm);
	rc = mpiv_recv_coll(tmp, count, dt, (g->vrank + 1 + g->root) %
	    g->size, tag, comm);
	return rc == MPI_SUCCESS ? mpiv_op_apply(op, tmp, buf, count, dt) : rc;
}

/* After an allreduce in the group: members hand the result back to the
   extra rank that folded into them. */
int
coll_group_unfold(const struct coll_group *g, void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int tag)
{
	if (g->vrank >= 2 * g->rem)
		return MPI_SUCCESS;
	if (g->newrank < 0)
		return mpiv_recv_coll(buf, count, dt,
		    (g->vrank - 1 + g->root) % g->size, tag, comm);
	return mpiv_send_coll(buf, count, dt, (g->vrank + 1 + g->root) %
	    g->size, tag, comm);
}

/*
 * Reduce-scatter by recursive halving among the group's members: buf
 * holds the member's vector, cut into pof2 blocks (coll_block_disp). At
 * each step the member keeps half of its current range of blocks, sends
 * the other half to the member across (newrank ^ mask) and combines what
 * that one sends for the kept half. On return buf's block `newrank`
 * holds the combination over the whole group (other blocks are partial).
 * tmp: room for count / 2 + 1 elements.
 */
int
coll_group_rs(const struct coll_group *g, void *buf, void *tmp, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag)
{
	int lo = 0, hi = g->pof2, rc = MPI_SUCCESS;

	for (int mask = g->pof2 / 2; mask > 0 && rc == MPI_SUCCESS;
	    mask >>= 1) {
		int peer = coll_group_rank(g, g->newrank ^ mask);
		int mid = lo + mask, klo, khi, slo, shi, kd, kc, sd, sc;
		if (g->newrank & mask) {
			klo = mid, khi = hi, slo = lo, shi = mid;
		} else {
			klo = lo, khi = mid, slo = mid, shi = hi;
		}
		kd = coll_block_disp(count, g->pof2, klo);
		kc = coll_block_disp(count, g->pof2, khi) - kd;
		sd = coll_block_disp(count, g->pof2, slo);
		sc = coll_block_disp(count, g->pof2, shi) - sd;
		rc = mpiv_sendrecv_coll(coll_elem(buf, sd, dt), sc, dt, peer,
		    tmp, kc, dt, peer, tag, comm);
		if (rc == MPI_SUCCESS)
			rc = mpiv_op_apply(op, tmp, coll_elem(buf, kd, dt), kc,
			    dt);
		lo = klo;
		hi = khi;
	}
	return rc;
}

/* Allgather by recursive doubling among the members: from block newrank
   of buf, every member ends with all pof2 blocks. */
int
coll_group_ag(const struct coll_group *g, void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int tag)
{
	int rc = MPI_SUCCESS;

	for (int mask = 1; mask < g->pof2 && rc == MPI_SUCCESS; mask <<= 1) {
		int peer = coll_group_rank(g, g->newrank ^ mask);
		int lo = g->newrank & ~(mask - 1), plo = lo ^ mask;
		int d = coll_block_disp(count, g->pof2, lo);
		int n = coll_block_disp(count, g->pof2, lo + mask) - d;
		int pd = coll_block_disp(count, g->pof2, plo);
		int pn = coll_block_disp(count, g->pof2, plo + mask) - pd;
		rc = mpiv_sendrecv_coll(coll_elem(buf, d, dt), n, dt, peer,
		    coll_elem(buf, pd, dt), pn, dt, peer, tag, comm);
	}
	return rc;
}

/* Binomial gather of the members' blocks to member 0: member m holds
   blocks [m, m + mask) when it sends them to m - mask. */
int
coll_group_gather(const struct coll_group *g, void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int tag)
{
	int rc = MPI_SUCCESS, m = g->newrank;

	for (int mask = 1; mask < g->pof2 && rc == MPI_SUCCESS; mask <<= 1) {
		int lo = m & mask ? m : m + mask;
		int d = coll_block_disp(count, g->pof2, lo);
		int n = coll_block_disp(count, g->pof2, lo + mask) - d;
		if (m & mask)
			return mpiv_send_coll(coll_elem(buf, d, dt), n, dt,
			    coll_group_rank(g, m - mask), tag, comm);
		rc = mpiv_recv_coll(coll_elem(buf, d, dt), n, dt,
		    coll_group_rank(g, m + mask), tag, comm);
	}
	return rc;
}

/*
 * Ring reduce-scatter over all p ranks: block b of buf (counts[b]
 * elements at displs[b]) travels from rank b + 1 around the ring, each
 * rank combining its own contribution, and ends complete on rank b.
 * tmp: room for the largest block.
 */
int
coll_group_ring_rs(void *buf, void *tmp, const int *counts, const int *displs,
    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag)
{
	int size = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;

	for (int s = 0; s < size - 1 && rc == MPI_SUCCESS; s++) {
		int sb = (rank - s - 1 + size) % size;
		int rb = (rank - s - 2 + 2 * size) % size;
		rc = mpiv_sendrecv_coll(coll_elem(buf, displs[sb], dt),
		    counts[sb], dt, right, tmp, counts[rb], dt, left, tag,
		    comm);
		if (rc == MPI_SUCCESS)
			rc = mpiv_op_apply(op, tmp, coll_elem(buf, displs[rb],
			    dt), counts[rb], dt);
	}
	return rc;
}
