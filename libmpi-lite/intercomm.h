/*
 * intercomm.h: what intercomm.c (creation, dup, split, merge) and
 * intercomm_coll.c (the collectives) share.
 */
#ifndef MPIV_INTERCOMM_H
#define MPIV_INTERCOMM_H

#include "impl.h"

/* Tags on an intercommunicator's collective context. */
enum {
	ITAG_EXCHANGE = 1, ITAG_BARRIER, ITAG_BCAST, ITAG_REDUCE,
	ITAG_ALLREDUCE, ITAG_GATHER, ITAG_SCATTER, ITAG_ALLGATHER,
	ITAG_ALLTOALL, ITAG_RSCAT,
};
/* Tags on the collective context of a local intracommunicator (the
   collectives of coll.c use tags below 64, comm.c 64 to 66). */
enum {
	LTAG_MAX = 67, LTAG_BCAST_HDR, LTAG_BCAST_DATA, LTAG_ALLGATHER,
	LTAG_ALLREDUCE, LTAG_BARRIER, LTAG_RSCAT,
};

/* Linear broadcast of n elements from `root` over an intracommunicator
   (its collective context). */
int mpiv_inter_lbcast(void *buf, int n, MPI_Datatype dt, int root,
    MPI_Comm comm, int tag);
/* The two leaders (local rank 0 of each group) swap nmine ints for
   ntheirs over the intercommunicator; then every member of the local
   group gets the remote group's ints. */
int mpiv_inter_exchange(MPI_Comm ic, const int *mine, int nmine,
    int *theirs, int ntheirs);

#endif
