/*
 * neighbor.c: neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w)) on Cartesian, graph and distributed graph
 * communicators. Every process posts one receive per in-neighbour and
 * one send per out-neighbour on the collective context, then waits for
 * all: a fixed pattern, every receive naming its source, so a
 * re-executed rank does the same (nothing to log).
 *
 * On a Cartesian communicator the tag says the direction: the block a
 * process sends to its -1 neighbour in dimension d is the one that
 * neighbour receives from its +1 neighbour, so a periodic dimension of
 * size 1 or 2 (both neighbours the same process) still puts each block
 * in its place. On (distributed) graphs, repeated edges between two
 * processes are matched in order, as the standard says.
 */
#include <stdint.h>
#include <stdlib.h>

#include "topo.h"

/* Tags on the collective context: NB_TAG for graphs, NB_TAG + 1 + j for
   the j-th Cartesian neighbour (above the internal tags of the other
   files). */
#define NB_TAG	200

/* One side of an exchange: block j is counts[j] (or count) elements of
   types[j] (or dt) at buf + bdispls[j] bytes (or displs[j] elements, or
   block j of count). */
struct nb_side {
	const void *buf;
	int count;
	const int *counts, *displs;
	const MPI_Aint *bdispls;
	MPI_Datatype dt;
	const MPI_Datatype *types;
	bool same;		/* allgather's send: one buffer for all */
};

static void *
nb_block(const struct nb_side *s, int j, int *count, MPI_Datatype *dt)
{
	MPI_Aint off;

	*dt = s->types != NULL ? s->types[j] : s->dt;
	*count = s->counts != NULL ? s->counts[j] : s->count;
	if (s->bdispls != NULL)
		off = s->bdispls[j];
	else if (s->displs != NULL)
		off = (MPI_Aint)s->displs[j] * (*dt)->extent;
	else
		off = s->same ? 0 : (MPI_Aint)j * s->count * (*dt)->extent;
	return (void *)((uintptr_t)s->buf + (uintptr_t)off);
}

/* Checks one side's counts and types for n blocks. */
static int
nb_check(const struct nb_side *s, int n)
{
	int rc;

	if (s->counts == NULL && s->count < 0)
		return MPI_ERR_COUNT;
	if (s->types == NULL && (rc = mpiv_dt_check(s->dt)) != MPI_SUCCESS)
		return rc;
	for (int j = 0; j < n; j++) {
		if (s->counts != NULL && s->counts[j] < 0)
			return MPI_ERR_COUNT;
		if (s->types != NULL &&
		    (rc = mpiv_dt_check(s->types[j])) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* The checks of both forms; on success *in and *out are the
   neighbour lists (to free). MPI code, no error handler. */
static int
nb_prepare(MPI_Comm comm, const struct nb_side *snd,
    const struct nb_side *rcv, bool vector, int **in, int *nin, int **out,
    int *nout)
{
	int rc;

	*in = *out = NULL;
	if (comm->remote != NULL || comm->topo == NULL)
		return MPI_ERR_TOPOLOGY;
	if ((rc = mpiv_topo_neighbors(comm, in, nin, out, nout)) !=
	    MPI_SUCCESS)
		return rc;
	if (vector && (rcv->counts == NULL || (rcv->displs == NULL &&
	    rcv->bdispls == NULL) || (!snd->same && (snd->counts == NULL ||
	    (snd->displs == NULL && snd->bdispls == NULL)))))
		rc = MPI_ERR_ARG;
	else if (snd->buf == MPI_IN_PLACE)
		rc = MPI_ERR_BUFFER;
	else if ((rc = nb_check(snd, snd->same ? 1 : *nout)) == MPI_SUCCESS)
		rc = nb_check(rcv, *nin);
	if (rc != MPI_SUCCESS) {
		free(*in);
		free(*out);
		*in = *out = NULL;
	}
	return rc;
}

static int
nb_run(MPI_Comm comm, const struct nb_side *snd, const struct nb_side *rcv,
    bool vector, const char *fn)
{
	int *in = NULL, *out = NULL, nin, nout, rc, k = 0, cnt, w;
	bool cart;
	MPI_Request *reqs = NULL;
	MPI_Datatype dt;

	mpiv_fault_point("coll");
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, fn);
	if ((rc = nb_prepare(comm, snd, rcv, vector, &in, &nin, &out,
	    &nout)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, fn);
	cart = comm->topo->kind == MPI_CART;
	if ((reqs = malloc(((size_t)nin + nout + 1) * sizeof(*reqs))) ==
	    NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int j = 0; j < nin && rc == MPI_SUCCESS; j++) {
		void *b = nb_block(rcv, j, &cnt, &dt);
		if (in[j] == MPI_PROC_NULL)
			continue;
		if ((rc = mpiv_irecv(b, cnt, dt, in[j], cart ? NB_TAG + 1 + j :
		    NB_TAG, comm, MPIV_COLL_CONTEXT(comm), &reqs[k])) ==
		    MPI_SUCCESS)
			k++;
	}
	for (int i = 0; i < nout && rc == MPI_SUCCESS; i++) {
		void *b = nb_block(snd, snd->same ? 0 : i, &cnt, &dt);
		if (out[i] == MPI_PROC_NULL)
			continue;
		/* our -1 neighbour receives it as from its +1 one */
		if ((rc = mpiv_isend(b, cnt, dt, out[i], cart ?
		    NB_TAG + 1 + (i ^ 1) : NB_TAG, comm,
		    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD, &reqs[k])) ==
		    MPI_SUCCESS)
			k++;
	}
	w = mpiv_waitall(k, reqs, NULL);
	if (rc == MPI_SUCCESS)
		rc = w;
out_free:
	free(reqs);
	free(in);
	free(out);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, fn);
}

/*
 * The non-blocking forms: the same exchange as a schedule of one round
 * (nbc.c: its steps are taken at advance points and logged, so a
 * re-execution takes them again in the same places). A schedule's sends
 * and receives all carry its one tag, so on a Cartesian communicator
 * the direction is kept by order instead: receives are posted by
 * in-neighbour index j, and our block for out-neighbour i, which that
 * process receives as its in-neighbour i ^ 1, is sent in the order of
 * i ^ 1, the order in which it posts its receives. Repeated neighbours
 * (a periodic dimension of size 1 or 2) then match block by block.
 */
static int
nb_start(MPI_Comm comm, const struct nb_side *snd, const struct nb_side *rcv,
    bool vector, MPI_Request *request, const char *fn)
{
	int *in = NULL, *out = NULL, nin, nout, rc, cnt;
	struct mpiv_nbc *s;
	MPI_Datatype dt;
	bool cart;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, fn);
	mpiv_fault_point("coll");
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, fn);
	if (request == NULL)
		return mpiv_err(comm, MPI_ERR_REQUEST, fn);
	if ((rc = nb_prepare(comm, snd, rcv, vector, &in, &nin, &out,
	    &nout)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, fn);
	cart = comm->topo->kind == MPI_CART;
	if ((s = mpiv_nbc_new(comm)) == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int j = 0; j < nin && rc == MPI_SUCCESS; j++) {
		void *b = nb_block(rcv, j, &cnt, &dt);

		if (in[j] != MPI_PROC_NULL)
			rc = mpiv_nbc_recv(s, 0, b, cnt, dt, in[j]);
	}
	for (int k = 0; k < nout && rc == MPI_SUCCESS; k++) {
		int i = cart ? k ^ 1 : k;
		void *b = nb_block(snd, snd->same ? 0 : i, &cnt, &dt);

		if (out[i] != MPI_PROC_NULL)
			rc = mpiv_nbc_send(s, 0, b, cnt, dt, out[i]);
	}
	if (rc == MPI_SUCCESS)
		rc = mpiv_nbc_start(s, request);
	else
		mpiv_nbc_discard(s);
out_free:
	free(in);
	free(out);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, fn);
}

int
MPI_Neighbor_allgather(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
	return nb_run(comm, &(struct nb_side){ .buf = sendbuf,
	    .count = sendcount, .dt = sendtype, .same = true },
	    &(struct nb_side){ .buf = recvbuf, .count = recvcount,
	    .dt = recvtype }, false, "MPI_Neighbor_allgather");
}

int
MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
    const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	return nb_run(comm, &(struct nb_side){ .buf = sendbuf,
	    .count = sendcount, .dt = sendtype, .same = true },
	    &(struct nb_side){ .buf = recvbuf, .counts = recvcounts,
	    .displs = displs, .dt = recvtype }, true,
	    "MPI_Neighbor_allgatherv");
}

int
MPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm)
{
	return nb_run(comm, &(struct nb_side){ .buf = sendbuf,
	    .count = sendcount, .dt = sendtype },
	    &(struct nb_side){ .buf = recvbuf, .count = recvcount,
	    .dt = recvtype }, false, "MPI_Neighbor_alltoall");
}

int
MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm)
{
	return nb_run(comm, &(struct nb_side){ .buf = sendbuf,
	    .counts = sendcounts, .displs = sdispls, .dt = sendtype },
	    &(struct nb_side){ .buf = recvbuf, .counts = recvcounts,
	    .displs = rdispls, .dt = recvtype }, true,
	    "MPI_Neighbor_alltoallv");
}

int
MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const MPI_Aint rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	if (sendtypes == NULL || recvtypes == NULL)
		return mpiv_err(mpiv_comm_check(comm) == MPI_SUCCESS ? comm :
		    NULL, MPI_ERR_ARG, "MPI_Neighbor_alltoallw");
	return nb_run(comm, &(struct nb_side){ .buf = sendbuf,
	    .counts = sendcounts, .bdispls = sdispls, .types = sendtypes },
	    &(struct nb_side){ .buf = recvbuf, .counts = recvcounts,
	    .bdispls = rdispls, .types = recvtypes }, true,
	    "MPI_Neighbor_alltoallw");
}

int
MPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return nb_start(comm, &(struct nb_side){ .buf = sendbuf,
	    .count = sendcount, .dt = sendtype, .same = true },
	    &(struct nb_side){ .buf = recvbuf, .count = recvcount,
	    .dt = recvtype }, false, request, "MPI_Ineighbor_allgather");
}

int
MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
    const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request *request)
{
	return nb_start(comm, &(struct nb_side){ .buf = sendbuf,
	    .count = sendcount, .dt = sendtype, .same = true },
	    &(struct nb_side){ .buf = recvbuf, .counts = recvcounts,
	    .displs = displs, .dt = recvtype }, true, request,
	    "MPI_Ineighbor_allgatherv");
}

int
MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return nb_start(comm, &(struct nb_side){ .buf = sendbuf,
	    .count = sendcount, .dt = sendtype },
	    &(struct nb_side){ .buf = recvbuf, .count = recvcount,
	    .dt = recvtype }, false, request, "MPI_Ineighbor_alltoall");
}

int
MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Request *request)
{
	return nb_start(comm, &(struct nb_side){ .buf = sendbuf,
	    .counts = sendcounts, .displs = sdispls, .dt = sendtype },
	    &(struct nb_side){ .buf = recvbuf, .counts = recvcounts,
	    .displs = rdispls, .dt = recvtype }, true, request,
	    "MPI_Ineighbor_alltoallv");
}

int
MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const MPI_Aint rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	if (sendtypes == NULL || recvtypes == NULL)
		return mpiv_err(mpiv_comm_check(comm) == MPI_SUCCESS ? comm :
		    NULL, MPI_ERR_ARG, "MPI_Ineighbor_alltoallw");
	return nb_start(comm, &(struct nb_side){ .buf = sendbuf,
	    .counts = sendcounts, .bdispls = sdispls, .types = sendtypes },
	    &(struct nb_side){ .buf = recvbuf, .counts = recvcounts,
	    .bdispls = rdispls, .types = recvtypes }, true, request,
	    "MPI_Ineighbor_alltoallw");
}
