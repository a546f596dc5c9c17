/*
 * coll.h: what the collectives' files share (docs/COLLECTIVES.md):
 *
 *   coll.c        the MPI calls, the choice of algorithm, the algorithms
 *   coll_nbc.c    the non-blocking collectives' schedules (run by nbc.c)
 *   coll_group.c  the building blocks of the large-data reductions: the
 *                 power-of-two group with its fold, recursive halving and
 *                 doubling, the binomial gather of blocks, the ring
 *                 reduce-scatter
 */
#ifndef MPIV_COLL_H
#define MPIV_COLL_H

#include <stdint.h>

#include "impl.h"

static inline char *
coll_at(const void *base, MPI_Aint off)
{
	return (char *)((uintptr_t)base + (uintptr_t)off);
}

/* Address of element i of a dt array at buf. */
static inline void *
coll_elem(const void *buf, MPI_Aint i, MPI_Datatype dt)
{
	return coll_at(buf, i * dt->extent);
}

/* Largest power of two <= n (n >= 1). */
static inline int
coll_pof2(int n)
{
	int p = 1;

	while (p <= n / 2)
		p <<= 1;
	return p;
}

/* First element of block i when count elements are cut into n blocks of
   nearly equal size (the first count % n one element longer). */
static inline int
coll_block_disp(int count, int n, int i)
{
	int q = count / n, r = count % n;

	return i * q + (i < r ? i : r);
}

/*
 * The power-of-two group of a commutative reduction over p ranks, taken
 * relative to `root` (vrank = (rank - root) mod p): rem = p - pof2 extra
 * ranks fold into a partner first. Among vranks below 2 rem, each odd one
 * hands its vector to the even one below it and sits out (newrank -1);
 * the even ones are group members vrank / 2, the rest vrank - rem. Vrank
 * 0 (the root) is always member 0.
 */
struct coll_group {
	int size, root, pof2, rem, vrank, newrank;
};

void coll_group_init(struct coll_group *g, MPI_Comm comm, int root);
/* Comm rank of group member m. */
int coll_group_rank(const struct coll_group *g, int m);
/* The fold: an extra rank sends buf to its partner, which combines it
   into its own buf (tmp: room for count elements). */
int coll_group_fold(const struct coll_group *g, void *buf, void *tmp,
    int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag);
/* After an allreduce in the group: members hand the result back to the
   extra rank that folded into them. */
int coll_group_unfold(const struct coll_group *g, void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int tag);
/* Reduce-scatter by recursive halving among the members: on return
   buf's block newrank (of pof2) is combined over the group. */
int coll_group_rs(const struct coll_group *g, void *buf, void *tmp,
    int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag);
/* Allgather of the members' blocks by recursive doubling. */
int coll_group_ag(const struct coll_group *g, void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int tag);
/* Binomial gather of the members' blocks into member 0's buf. */
int coll_group_gather(const struct coll_group *g, void *buf, int count,
    MPI_Datatype dt, MPI_Comm comm, int tag);
/* Ring reduce-scatter over all ranks of comm: rank b ends with block b
   (counts[b] elements at displs[b]) combined over every rank. */
int coll_group_ring_rs(void *buf, void *tmp, const int *counts,
    const int *displs, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag);

/* coll.c, for coll_nbc.c: the argument checks of the collectives (an
   MPI code): one buffer's count and type; a reduction's, with op defined
   on the type; an array of n counts, none negative. */
int coll_check_buf(int count, MPI_Datatype dt);
int coll_check_red(int count, MPI_Datatype dt, MPI_Op op);
int coll_check_counts(const int *counts, int n);

#endif
