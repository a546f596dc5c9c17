/*
 * p2p.c: point-to-point communication, the MPI layer: argument checks,
 * requests, blocking and persistent forms, probes and cancels. Starting
 * an operation goes through the job's protocol (proto.h; the relay's is
 * p2p_relay.c), so nothing here knows how a message travels.
 *
 * MPI_Cancel cancels receives only. Cancelling a send returns
 * MPI_SUCCESS but the send is not cancelled (MPI_Test_cancelled says
 * false): once written, the message belongs to the CM's log.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mono.h"
#include "proto.h"
#include "transport.h"
#include "waitrep.h"

/* The job's protocol. */
const struct mpiv_proto *mpiv_proto = &mpiv_proto_relay;

/* Synchronous sends written but not acknowledged yet (Finalize waits). */
int mpiv_p2p_pending_acks;

/* The buffer of MPI_Buffer_attach. Our sends are eager, so it is only
   checked against, never copied into. */
static void *p2p_bsend_buf;
static int p2p_bsend_size;

int
mpiv_p2p_init(int world_size)
{
	mpiv_p2p_pending_acks = 0;
	return mpiv_proto->init(world_size);
}

void
mpiv_p2p_fini(void)
{
	mpiv_proto->fini();
}

/* In a restored checkpoint clone (ckpt.c). */
int
mpiv_p2p_restore(void)
{
	return mpiv_proto->restore();
}

/* ---------------- transport callbacks ---------------- */

void
mpiv_p2p_send_written(struct mpiv_request *r)
{
	if (r->frames_left > 0 && --r->frames_left > 0)
		return;
	r->written = true;
	if (!r->need_ack || r->acked)
		mpiv_req_complete(r);
}

void
mpiv_p2p_sync_ack(uint64_t send_id)
{
	struct mpiv_request *r = mpiv_req_lookup(send_id);

	if (r == NULL || r->kind != MPIV_REQ_SEND || !r->need_ack || r->acked)
		return;
	r->acked = true;
	mpiv_p2p_pending_acks--;
	if (r->written)
		mpiv_req_complete(r);
}

/* ---------------- starting operations ---------------- */

/* One frame carries one message, and a frame's length is 32 bits (the
   default cap is 4 GiB - 64 KiB, MPIV_MAX_PAYLOAD): a bigger message is
   refused, and the error line says its size and the limit. */
bool
mpiv_p2p_too_big(size_t bytes)
{
	if (bytes <= frame_max_payload())
		return false;
	mpiv_err_detail("a message of %zu bytes is over mpiv's limit of %zu "
	    "bytes per message", bytes, (size_t)frame_max_payload());
	return true;
}

/* buf + disp without pointer arithmetic on a possibly NULL (MPI_BOTTOM)
   base. */
const void *
mpiv_p2p_addr(const void *buf, MPI_Aint disp)
{
	return (const void *)((uintptr_t)buf + (uintptr_t)disp);
}

int
mpiv_p2p_payload(const struct mpiv_request *r, size_t bytes,
    const void **payload, void **owned)
{
	*payload = NULL;
	*owned = NULL;
	if (mpiv_p2p_too_big(bytes))
		return MPI_ERR_COUNT;
	if (bytes == 0)
		return MPI_SUCCESS;
	if (mpiv_p2p_addr(r->buf, r->dt->true_lb) == NULL) {
		mpiv_err_detail("NULL buffer for %zu bytes", bytes);
		return MPI_ERR_BUFFER;
	}
	if (mpiv_dt_is_contig(r->dt)) {
		*payload = mpiv_p2p_addr(r->buf, r->dt->true_lb);
		return MPI_SUCCESS;
	}
	if ((*owned = malloc(bytes)) == NULL)
		return MPI_ERR_NO_MEM;
	mpiv_dt_pack(r->buf, r->count, r->dt, *owned);
	*payload = *owned;
	return MPI_SUCCESS;
}

/* What starting any send or receive does first. MPI code. */
static int
p2p_start_common(struct mpiv_request *r)
{
	int rc;

	/* entry of every send and receive of the program's own (those of a
	   non-blocking collective's step are not safe points) */
	if (!mpiv_nbc_stepping()) {
		mpiv_ckpt_point();
		if ((rc = mpiv_nbc_tick()) != MPI_SUCCESS)
			return rc;
	}
	r->active = true;
	r->complete = false;
	r->written = r->need_ack = r->acked = false;
	r->frames_left = 0;
	r->cancel_wait = false;
	r->post_no = r->cancel_post_no = 0;
	mpiv_req_empty_status(&r->status);
	return MPI_SUCCESS;
}

int
mpiv_p2p_start(struct mpiv_request *r)
{
	int rc;

	if ((rc = p2p_start_common(r)) != MPI_SUCCESS)
		return rc;
	if (r->peer == MPI_PROC_NULL) {
		r->status.MPI_SOURCE = MPI_PROC_NULL;
		r->status.MPI_TAG = MPI_ANY_TAG;
		r->complete = true;
		return MPI_SUCCESS;
	}
	rc = r->kind == MPIV_REQ_SEND ? mpiv_proto->send(r) :
	    mpiv_proto->recv(r);
	if (rc != MPI_SUCCESS) {
		r->active = false;
		r->complete = false;
		return rc;
	}
	mpiv_nbc_started();
	return MPI_SUCCESS;
}

static struct mpiv_request *
p2p_new(enum mpiv_req_kind kind, const void *buf, int count, MPI_Datatype dt,
    int peer, int tag, MPI_Comm comm, uint32_t context,
    enum mpiv_send_mode mode)
{
	struct mpiv_request *r = mpiv_req_alloc(kind);

	if (r == NULL)
		return NULL;
	r->buf = (void *)buf;
	r->count = count;
	r->dt = dt;
	mpiv_dt_retain(dt);	/* MPI_Type_free while pending is legal */
	r->peer = peer;
	r->tag = tag;
	r->comm = comm;
	r->context = context;
	r->mode = mode;
	return r;
}

int
mpiv_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, uint32_t context, enum mpiv_send_mode mode,
    MPI_Request *req)
{
	struct mpiv_request *r;
	int rc;

	r = p2p_new(MPIV_REQ_SEND, buf, count, dt, dest, tag, comm, context,
	    mode);
	if (r == NULL)
		return MPI_ERR_NO_MEM;
	if ((rc = mpiv_p2p_start(r)) != MPI_SUCCESS) {
		mpiv_req_release(r);
		return rc;
	}
	*req = r;
	return MPI_SUCCESS;
}

int
mpiv_irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm, uint32_t context, MPI_Request *req)
{
	struct mpiv_request *r;
	int rc;

	r = p2p_new(MPIV_REQ_RECV, buf, count, dt, source, tag, comm, context,
	    MPIV_SEND_STANDARD);
	if (r == NULL)
		return MPI_ERR_NO_MEM;
	if ((rc = mpiv_p2p_start(r)) != MPI_SUCCESS) {
		mpiv_req_release(r);
		return rc;
	}
	*req = r;
	return MPI_SUCCESS;
}

/* Waits for one request and frees it; its status into st. MPI code. */
static int
p2p_wait_free(struct mpiv_request *r, MPI_Status *st)
{
	int rc = mpiv_req_wait_complete(r);

	if (rc == MPI_SUCCESS)
		rc = r->status.MPI_ERROR;
	if (st != NULL)
		mpiv_status_out(st, &r->status);
	mpiv_req_release(r);
	return rc;
}

/* ---------------- collectives' helpers ---------------- */

int
mpiv_send_coll(const void *buf, int count, MPI_Datatype dt, int dest,
    int tag, MPI_Comm comm)
{
	MPI_Request r;
	int rc;

	rc = mpiv_isend(buf, count, dt, dest, tag, comm,
	    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD, &r);
	return rc != MPI_SUCCESS ? rc : p2p_wait_free(r, NULL);
}

/*
 * The same data to the n comm ranks dests (distinct, not us), as n
 * standard sends on the collective context would, and waits until they
 * are written. A protocol with a multicast (the relay: one frame per
 * CM) takes them at once, others one by one. Every rank of a collective
 * that uses it must, so it is chosen by arguments only (coll.c).
 */
int
mpiv_mcast_coll(const void *buf, int count, MPI_Datatype dt,
    const int *dests, int n, int tag, MPI_Comm comm)
{
	MPI_Request one[8], *reqs = one, r;
	int rc = MPI_SUCCESS, k = 0;

	if (n <= 0)
		return MPI_SUCCESS;
	if (n == 1 || mpiv_proto->msend == NULL) {
		if (n > (int)(sizeof(one) / sizeof(one[0])) &&
		    (reqs = malloc((size_t)n * sizeof(*reqs))) == NULL)
			return MPI_ERR_NO_MEM;
		for (k = 0; k < n && rc == MPI_SUCCESS; k++)
			rc = mpiv_isend(buf, count, dt, dests[k], tag, comm,
			    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD,
			    &reqs[k]);
		if (rc != MPI_SUCCESS)
			k--;
		if (k > 0) {
			int rc2 = mpiv_waitall(k, reqs, NULL);
			if (rc == MPI_SUCCESS)
				rc = rc2;
		}
		if (reqs != one)
			free(reqs);
		return rc;
	}
	if ((rc = mpiv_imcast(buf, count, dt, dests, n, tag, comm,
	    MPIV_COLL_CONTEXT(comm), &r)) != MPI_SUCCESS)
		return rc;
	return p2p_wait_free(r, NULL);
}

bool
mpiv_can_mcast(void)
{
	return mpiv_proto->msend != NULL;
}

/*
 * The multicast itself, not waited for: one request for all n sends
 * (n >= 2, mpiv_can_mcast()), complete when every frame is written.
 */
int
mpiv_imcast(const void *buf, int count, MPI_Datatype dt, const int *dests,
    int n, int tag, MPI_Comm comm, uint32_t context, MPI_Request *req)
{
	struct mpiv_request *r;
	int *wdst, rc;

	if (n < 2 || mpiv_proto->msend == NULL)
		return MPI_ERR_INTERN;
	if ((wdst = malloc((size_t)n * sizeof(*wdst))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int k = 0; k < n; k++)
		if ((wdst[k] = mpiv_comm_world_rank(comm, dests[k])) < 0) {
			free(wdst);
			return MPI_ERR_RANK;
		}
	r = p2p_new(MPIV_REQ_SEND, buf, count, dt, dests[0], tag, comm,
	    context, MPIV_SEND_STANDARD);
	if (r == NULL) {
		free(wdst);
		return MPI_ERR_NO_MEM;
	}
	if ((rc = p2p_start_common(r)) == MPI_SUCCESS &&
	    (rc = mpiv_proto->msend(r, wdst, n)) != MPI_SUCCESS)
		r->active = false;
	free(wdst);
	if (rc != MPI_SUCCESS) {
		/* Frames queued before the failure still name r: it stays
		   (the failure ends the rank anyway). */
		if (r->frames_left <= 1)
			mpiv_req_release(r);
		return rc;
	}
	*req = r;
	mpiv_nbc_started();
	return MPI_SUCCESS;
}

int
mpiv_recv_coll(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm)
{
	MPI_Request r;
	int rc;

	rc = mpiv_irecv(buf, count, dt, source, tag, comm,
	    MPIV_COLL_CONTEXT(comm), &r);
	return rc != MPI_SUCCESS ? rc : p2p_wait_free(r, NULL);
}

int
mpiv_sendrecv_coll(const void *sbuf, int scount, MPI_Datatype sdt, int dest,
    void *rbuf, int rcount, MPI_Datatype rdt, int source, int tag,
    MPI_Comm comm)
{
	MPI_Request reqs[2];
	int rc;

	/* Send first: if it cannot start, no receive is left pending. */
	rc = mpiv_isend(sbuf, scount, sdt, dest, tag, comm,
	    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD, &reqs[0]);
	if (rc != MPI_SUCCESS)
		return rc;
	rc = mpiv_irecv(rbuf, rcount, rdt, source, tag, comm,
	    MPIV_COLL_CONTEXT(comm), &reqs[1]);
	if (rc != MPI_SUCCESS) {
		reqs[1] = MPI_REQUEST_NULL;
		mpiv_waitall(2, reqs, NULL);
		return rc;
	}
	return mpiv_waitall(2, reqs, NULL);
}

/* ---------------- argument checks ---------------- */

/*
 * Validates the arguments every p2p call shares. `recv` allows
 * MPI_ANY_SOURCE and MPI_ANY_TAG. Returns an MPI code.
 */
static int
p2p_check(MPI_Comm comm, int count, MPI_Datatype dt, int rank, int tag,
    bool recv)
{
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return MPI_ERR_OTHER;
	if ((rc = mpiv_comm_check(comm)) != MPI_SUCCESS)
		return rc;
	if (count < 0)
		return MPI_ERR_COUNT;
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return rc;
	if (dt->size != 0 && (size_t)count > SIZE_MAX / dt->size)
		return MPI_ERR_COUNT;
	if (!recv && mpiv_p2p_too_big((size_t)count * dt->size))
		return MPI_ERR_COUNT;
	if (rank != MPI_PROC_NULL && !(recv && rank == MPI_ANY_SOURCE) &&
	    (rank < 0 || rank >= mpiv_comm_peer_group(comm)->size))
		return MPI_ERR_RANK;
	if (!(recv && tag == MPI_ANY_TAG) &&
	    (tag < 0 || tag > MPI_TAG_UB_VALUE))
		return MPI_ERR_TAG;
	return MPI_SUCCESS;
}

/* Reports rc from fn on comm, or on WORLD when comm itself is bad. */
static int
p2p_fail(MPI_Comm comm, int rc, const char *fn)
{
	if (rc == MPI_ERR_COMM || mpiv_comm_check(comm) != MPI_SUCCESS)
		comm = NULL;
	return mpiv_err(comm, rc, fn);
}

/* ---------------- sends ---------------- */

static int
p2p_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, enum mpiv_send_mode mode, const char *fn)
{
	MPI_Request r;
	int rc;

	if ((rc = p2p_check(comm, count, dt, dest, tag, false)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, fn);
	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	rc = mpiv_isend(buf, count, dt, dest, tag, comm, comm->context, mode,
	    &r);
	if (rc == MPI_SUCCESS)
		rc = p2p_wait_free(r, NULL);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, fn);
}

/* Buffered mode: MPI requires an attached buffer big enough. */
static int
p2p_bsend_check(int count, MPI_Datatype dt)
{
	size_t need = (size_t)count * dt->size + MPI_BSEND_OVERHEAD;

	if (p2p_bsend_buf == NULL || need > (size_t)p2p_bsend_size)
		return MPI_ERR_BUFFER;
	return MPI_SUCCESS;
}

int
MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm)
{
	return p2p_send(buf, count, dt, dest, tag, comm, MPIV_SEND_STANDARD,
	    "MPI_Send");
}

int
MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm)
{
	return p2p_send(buf, count, dt, dest, tag, comm, MPIV_SEND_SYNC,
	    "MPI_Ssend");
}

int
MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm)
{
	return p2p_send(buf, count, dt, dest, tag, comm, MPIV_SEND_READY,
	    "MPI_Rsend");
}

int
MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm)
{
	int rc;

	if ((rc = p2p_check(comm, count, dt, dest, tag, false)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Bsend");
	if (dest != MPI_PROC_NULL &&
	    (rc = p2p_bsend_check(count, dt)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Bsend");
	return p2p_send(buf, count, dt, dest, tag, comm, MPIV_SEND_BUFFERED,
	    "MPI_Bsend");
}

int
MPI_Buffer_attach(void *buffer, int size)
{
	if (size < 0 || (buffer == NULL && size > 0))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Buffer_attach");
	if (p2p_bsend_buf != NULL)
		return mpiv_err(NULL, MPI_ERR_BUFFER, "MPI_Buffer_attach");
	p2p_bsend_buf = buffer;
	p2p_bsend_size = size;
	return MPI_SUCCESS;
}

/* Detach waits until buffered messages are out, as MPI requires: here
   that is flushing the output queues. */
int
MPI_Buffer_detach(void *buffer_addr, int *size)
{
	int rc;

	if (buffer_addr == NULL || size == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Buffer_detach");
	if (p2p_bsend_buf != NULL && mpiv_state.initialized &&
	    !mpiv_state.finalized && (rc = mpiv_tp_flush()) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Buffer_detach");
	*(void **)buffer_addr = p2p_bsend_buf;
	*size = p2p_bsend_buf != NULL ? p2p_bsend_size : 0;
	p2p_bsend_buf = NULL;
	p2p_bsend_size = 0;
	return MPI_SUCCESS;
}

static int
p2p_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, enum mpiv_send_mode mode, MPI_Request *request,
    const char *fn)
{
	int rc;

	if ((rc = p2p_check(comm, count, dt, dest, tag, false)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, fn);
	if (request == NULL)
		return p2p_fail(comm, MPI_ERR_REQUEST, fn);
	if (mode == MPIV_SEND_BUFFERED && dest != MPI_PROC_NULL &&
	    (rc = p2p_bsend_check(count, dt)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, fn);
	rc = mpiv_isend(buf, count, dt, dest, tag, comm, comm->context, mode,
	    request);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, fn);
}

int
MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_isend(buf, count, dt, dest, tag, comm, MPIV_SEND_STANDARD,
	    request, "MPI_Isend");
}

int
MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_isend(buf, count, dt, dest, tag, comm, MPIV_SEND_SYNC,
	    request, "MPI_Issend");
}

int
MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_isend(buf, count, dt, dest, tag, comm, MPIV_SEND_BUFFERED,
	    request, "MPI_Ibsend");
}

int
MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_isend(buf, count, dt, dest, tag, comm, MPIV_SEND_READY,
	    request, "MPI_Irsend");
}

/* ---------------- receives ---------------- */

int
MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm, MPI_Status *status)
{
	MPI_Request r;
	int rc;

	if ((rc = p2p_check(comm, count, dt, source, tag, true)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Recv");
	rc = mpiv_irecv(buf, count, dt, source, tag, comm, comm->context, &r);
	if (rc == MPI_SUCCESS)
		rc = p2p_wait_free(r, status);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, "MPI_Recv");
}

int
MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	int rc;

	if ((rc = p2p_check(comm, count, dt, source, tag, true)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Irecv");
	if (request == NULL)
		return p2p_fail(comm, MPI_ERR_REQUEST, "MPI_Irecv");
	rc = mpiv_irecv(buf, count, dt, source, tag, comm, comm->context,
	    request);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, "MPI_Irecv");
}

int
MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    int dest, int sendtag, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
    MPI_Status *status)
{
	MPI_Request reqs[2];
	MPI_Status st[2];
	int rc;

	if ((rc = p2p_check(comm, sendcount, sendtype, dest, sendtag,
	    false)) != MPI_SUCCESS ||
	    (rc = p2p_check(comm, recvcount, recvtype, source, recvtag,
	    true)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Sendrecv");
	/* Send first: if it cannot start, no receive is left pending. */
	rc = mpiv_isend(sendbuf, sendcount, sendtype, dest, sendtag, comm,
	    comm->context, MPIV_SEND_STANDARD, &reqs[0]);
	if (rc != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Sendrecv");
	rc = mpiv_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm,
	    comm->context, &reqs[1]);
	if (rc != MPI_SUCCESS) {
		reqs[1] = MPI_REQUEST_NULL;
		mpiv_waitall(2, reqs, NULL);
		return p2p_fail(comm, rc, "MPI_Sendrecv");
	}
	rc = mpiv_waitall(2, reqs, st);
	if (status != NULL)
		mpiv_status_out(status, &st[1]);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, "MPI_Sendrecv");
}

/* The outgoing data is packed aside first, so the receive can land in
   the same buffer. */
int
MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest,
    int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Request reqs[2];
	MPI_Status st[2];
	size_t bytes;
	void *tmp;
	int rc;

	if ((rc = p2p_check(comm, count, dt, dest, sendtag,
	    false)) != MPI_SUCCESS ||
	    (rc = p2p_check(comm, count, dt, source, recvtag,
	    true)) != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Sendrecv_replace");
	bytes = (size_t)count * dt->size;
	if (bytes > INT32_MAX)
		return p2p_fail(comm, MPI_ERR_COUNT, "MPI_Sendrecv_replace");
	if ((tmp = malloc(bytes > 0 ? bytes : 1)) == NULL)
		return p2p_fail(comm, MPI_ERR_NO_MEM, "MPI_Sendrecv_replace");
	if (bytes > 0)
		mpiv_dt_pack(buf, count, dt, tmp);
	rc = mpiv_isend(tmp, (int)bytes, MPI_BYTE, dest, sendtag, comm,
	    comm->context, MPIV_SEND_STANDARD, &reqs[0]);
	if (rc != MPI_SUCCESS) {
		free(tmp);
		return p2p_fail(comm, rc, "MPI_Sendrecv_replace");
	}
	rc = mpiv_irecv(buf, count, dt, source, recvtag, comm, comm->context,
	    &reqs[1]);
	if (rc != MPI_SUCCESS)
		reqs[1] = MPI_REQUEST_NULL;
	{
		int rc2 = mpiv_waitall(2, reqs, st);

		if (rc == MPI_SUCCESS)
			rc = rc2;
	}
	free(tmp);
	if (status != NULL)
		mpiv_status_out(status, &st[1]);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc,
	    "MPI_Sendrecv_replace");
}

/* ---------------- persistent requests ---------------- */

static int
p2p_init_req(enum mpiv_req_kind kind, const void *buf, int count,
    MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
    enum mpiv_send_mode mode, MPI_Request *request, const char *fn)
{
	struct mpiv_request *r;
	int rc;

	rc = p2p_check(comm, count, dt, peer, tag, kind == MPIV_REQ_RECV);
	if (rc != MPI_SUCCESS)
		return p2p_fail(comm, rc, fn);
	if (request == NULL)
		return p2p_fail(comm, MPI_ERR_REQUEST, fn);
	r = p2p_new(kind, buf, count, dt, peer, tag, comm, comm->context,
	    mode);
	if (r == NULL)
		return p2p_fail(comm, MPI_ERR_NO_MEM, fn);
	r->persistent = true;
	*request = r;
	return MPI_SUCCESS;
}

int
MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_init_req(MPIV_REQ_SEND, buf, count, dt, dest, tag, comm,
	    MPIV_SEND_STANDARD, request, "MPI_Send_init");
}

/* The send modes' persistent forms: each start sends in that mode
   (buffered: the attached buffer is checked at every start). */
int
MPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest,
    int tag, MPI_Comm comm, MPI_Request *request)
{
	return p2p_init_req(MPIV_REQ_SEND, buf, count, dt, dest, tag, comm,
	    MPIV_SEND_SYNC, request, "MPI_Ssend_init");
}

int
MPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest,
    int tag, MPI_Comm comm, MPI_Request *request)
{
	return p2p_init_req(MPIV_REQ_SEND, buf, count, dt, dest, tag, comm,
	    MPIV_SEND_BUFFERED, request, "MPI_Bsend_init");
}

int
MPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest,
    int tag, MPI_Comm comm, MPI_Request *request)
{
	return p2p_init_req(MPIV_REQ_SEND, buf, count, dt, dest, tag, comm,
	    MPIV_SEND_READY, request, "MPI_Rsend_init");
}

int
MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_init_req(MPIV_REQ_RECV, buf, count, dt, source, tag, comm,
	    MPIV_SEND_STANDARD, request, "MPI_Recv_init");
}

int
MPI_Start(MPI_Request *request)
{
	struct mpiv_request *r;
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, "MPI_Start");
	if (request == NULL || !mpiv_req_valid(*request) ||
	    !(*request)->persistent || (*request)->active)
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Start");
	r = *request;
	if (r->kind == MPIV_REQ_SEND && r->mode == MPIV_SEND_BUFFERED &&
	    r->peer != MPI_PROC_NULL &&
	    (rc = p2p_bsend_check(r->count, r->dt)) != MPI_SUCCESS)
		return p2p_fail(r->comm, rc, "MPI_Start");
	rc = mpiv_p2p_start(r);
	return rc == MPI_SUCCESS ? rc : p2p_fail(r->comm, rc, "MPI_Start");
}

int
MPI_Startall(int count, MPI_Request reqs[])
{
	int rc, i;

	if (count < 0 || (count > 0 && reqs == NULL))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Startall");
	for (i = 0; i < count; i++)
		if ((rc = MPI_Start(&reqs[i])) != MPI_SUCCESS)
			return rc;
	return MPI_SUCCESS;
}

/* ---------------- probe and cancel ---------------- */

/*
 * A probe is a request of its own, started by the protocol (the relay's
 * is one Probe round trip to our home CM, which chooses and logs the
 * answer; a blocking probe waits there for a match).
 */
int
mpiv_p2p_probe(int source, int tag, MPI_Comm comm, bool blocking, bool *found,
    MPI_Status *status)
{
	struct mpiv_request *r;
	int rc;

	mpiv_ckpt_point();
	if ((rc = mpiv_nbc_tick()) != MPI_SUCCESS)
		return rc;
	if ((r = mpiv_req_alloc(MPIV_REQ_PROBE)) == NULL)
		return MPI_ERR_NO_MEM;
	r->comm = comm;
	r->active = true;
	r->context = comm->context;
	r->post_src = source == MPI_ANY_SOURCE ? -1 :
	    mpiv_comm_world_rank(comm, source);
	r->post_tag = tag == MPI_ANY_TAG ? -1 : tag;
	r->post_blocking = blocking;
	/* (the direct protocol's probe itself waits for a match) */
	if (blocking)
		mpiv_waitrep_begin(NULL, &r, 1);
	rc = mpiv_proto->probe(r);
	if (rc == MPI_SUCCESS) {
		mpiv_nbc_started();
		rc = mpiv_req_wait_complete(r);
	}
	if (blocking)
		mpiv_waitrep_end();
	if (rc == MPI_SUCCESS) {
		*found = r->found;
		if (r->found && status != NULL)
			mpiv_status_out(status, &r->status);
	}
	mpiv_req_release(r);
	return rc;
}

int
MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	bool found = false;
	int rc;

	if ((rc = p2p_check(comm, 0, MPI_BYTE, source, tag, true)) !=
	    MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Probe");
	if (source == MPI_PROC_NULL) {
		if (status != NULL) {
			mpiv_status_proc_null(status);
		}
		return MPI_SUCCESS;
	}
	rc = mpiv_p2p_probe(source, tag, comm, true, &found, status);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, "MPI_Probe");
}

int
MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	bool found = false;
	long entry = mono_us();
	int rc;

	if ((rc = p2p_check(comm, 0, MPI_BYTE, source, tag, true)) !=
	    MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Iprobe");
	if (flag == NULL)
		return p2p_fail(comm, MPI_ERR_ARG, "MPI_Iprobe");
	if (source == MPI_PROC_NULL) {
		*flag = 1;
		if (status != NULL) {
			mpiv_status_proc_null(status);
		}
		return MPI_SUCCESS;
	}
	rc = mpiv_p2p_probe(source, tag, comm, false, &found, status);
	if (rc != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Iprobe");
	mpiv_fault_point("nd");
	*flag = mpiv_nd_iprobe(found);
	/* the answer is decided and logged: nothing found may back off */
	mpiv_waitrep_probing(source, tag, comm);
	mpiv_tp_poll_done(entry, found);
	mpiv_waitrep_polled();
	return MPI_SUCCESS;
}

/*
 * Cancels a pending receive: the protocol is asked (the relay asks the
 * home CM) and the call waits for the answer. A receive already matched
 * completes normally (not cancelled). Sends are never cancelled (see the
 * head of this file).
 */
int
MPI_Cancel(MPI_Request *request)
{
	struct mpiv_request *r;
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, "MPI_Cancel");
	if (request == NULL || !mpiv_req_valid(*request))
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
	r = *request;
	if (mpiv_nbc_is_collective(r)) {
		/* MPI: erroneous for a non-blocking collective's request */
		mpiv_err_detail("a non-blocking collective cannot be "
		    "cancelled");
		return mpiv_err(r->comm, MPI_ERR_REQUEST, "MPI_Cancel");
	}
	if (r->greq != NULL) {
		rc = mpiv_greq_cancel(r);
		return rc == MPI_SUCCESS ? rc : mpiv_err(NULL, rc, "MPI_Cancel");
	}
	if (r->kind != MPIV_REQ_RECV || !r->active || r->peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	mpiv_ckpt_point();
	if ((rc = mpiv_nbc_tick()) != MPI_SUCCESS)
		return p2p_fail(r->comm, rc, "MPI_Cancel");
	r->cancel_wait = true;
	rc = mpiv_proto->cancel(r);
	while (rc == MPI_SUCCESS && r->cancel_wait)
		rc = mpiv_tp_progress(-1);
	return rc == MPI_SUCCESS ? rc : p2p_fail(r->comm, rc, "MPI_Cancel");
}
