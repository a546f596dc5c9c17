/*
 * p2p.c: point-to-point communication on top of the transport.
 *
 * A send is one Send frame to the receiver's home CM, with the payload
 * beside it (the user buffer itself when the datatype is contiguous). A
 * receive is one RecvPost to our own home CM, which matches it and pushes
 * Deliver + payload. Standard, ready and buffered sends complete once
 * their frame is written to the socket (the CM keeps every message);
 * synchronous sends also wait for the CM's SyncAck.
 *
 * MPI_Cancel cancels receives only. Cancelling a send returns
 * MPI_SUCCESS but the send is not cancelled (MPI_Test_cancelled says
 * false): once written, the message belongs to the CM's log.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "transport.h"

/* The one table of per-destination send sequence numbers (world rank ->
   last seq used). Issue 3 restarts it from the CMs' last_seq. */
static uint64_t *p2p_seq;
static int p2p_nseq;

int mpiv_p2p_pending_acks;

/* RecvPost/Probe/Cancel issued since the program started: the home CM
   answers post N of a re-execution from its log entry for post N. */
static uint64_t p2p_post_no;

/* The buffer of MPI_Buffer_attach. Our sends are eager, so it is only
   checked against, never copied into. */
static void *p2p_bsend_buf;
static int p2p_bsend_size;

int
mpiv_p2p_init(int world_size)
{
	p2p_seq = calloc((size_t)world_size, sizeof(*p2p_seq));
	if (p2p_seq == NULL)
		return MPI_ERR_NO_MEM;
	p2p_nseq = world_size;
	mpiv_p2p_pending_acks = 0;
	p2p_post_no = 0;
	return MPI_SUCCESS;
}

void
mpiv_p2p_fini(void)
{
	free(p2p_seq);
	p2p_seq = NULL;
	p2p_nseq = 0;
}

void
mpiv_p2p_seq_copy(uint64_t *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = i < p2p_nseq ? p2p_seq[i] : 0;
}

/* ---------------- transport callbacks ---------------- */

void
mpiv_p2p_send_written(struct mpiv_request *r)
{
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

/* One frame carries one message: a bigger one is refused, and the error
   line says its size and the limit. */
static bool
p2p_too_big(size_t bytes)
{
	if (bytes <= frame_max_payload())
		return false;
	mpiv_err_detail("a message of %zu bytes is over mpiv's limit of %zu "
	    "bytes per message", bytes, (size_t)frame_max_payload());
	return true;
}

/* buf + disp without pointer arithmetic on a possibly NULL (MPI_BOTTOM)
   base. */
static const void *
p2p_addr(const void *buf, MPI_Aint disp)
{
	return (const void *)((uintptr_t)buf + (uintptr_t)disp);
}

static int
p2p_start_send(struct mpiv_request *r)
{
	Mpiv__Send m = MPIV__SEND__INIT;
	size_t bytes = (size_t)r->count * r->dt->size;
	const void *payload = NULL;
	void *owned = NULL;
	int dst, rc;

	dst = mpiv_comm_world_rank(r->comm, r->peer);
	if (dst < 0 || dst >= p2p_nseq)
		return MPI_ERR_RANK;
	if (p2p_too_big(bytes))
		return MPI_ERR_COUNT;
	if (bytes > 0 && p2p_addr(r->buf, r->dt->true_lb) == NULL) {
		mpiv_err_detail("NULL buffer for %zu bytes", bytes);
		return MPI_ERR_BUFFER;
	}
	if (bytes > 0) {
		if (mpiv_dt_is_contig(r->dt)) {
			payload = p2p_addr(r->buf, r->dt->true_lb);
		} else {
			if ((owned = malloc(bytes)) == NULL)
				return MPI_ERR_NO_MEM;
			mpiv_dt_pack(r->buf, r->count, r->dt, owned);
			payload = owned;
		}
	}
	m.src = mpiv_state.world_rank;
	m.dst = dst;
	m.context = r->context;
	m.tag = r->tag;
	m.seq = ++p2p_seq[dst];
	m.sync = r->mode == MPIV_SEND_SYNC;
	m.send_id = mpiv_req_new_id(r);
	r->need_ack = m.sync;
	if (mpiv_ndlog_enabled())
		m.digest = mpiv_digest_send(m.context, m.tag, payload, bytes);
	if (m.seq <= mpiv_tp_last_seq(dst)) {
		/* Silent re-execution: the CM already holds this one. It gets
		   the digest alone and compares it with what it logged. */
		free(owned);
		m.check = true;
		m.size = bytes;
		m.sync = false;
		rc = mpiv_tp_send(mpiv_tp_home(dst), MPIV__MSG_TYPE__MSG_SEND,
		    &m.base, NULL, 0, NULL, NULL);
		if (rc != MPI_SUCCESS)
			return rc;
		r->written = r->acked = true;
		mpiv_req_complete(r);
		return MPI_SUCCESS;
	}
	/* What this rank decided by itself so far must be durable before a
	   message that may depend on it leaves. */
	if ((rc = mpiv_ndlog_before_frame(mpiv_tp_home(dst))) != MPI_SUCCESS) {
		free(owned);
		return rc;
	}
	mpiv_fault_point("send");
	if (r->need_ack)
		mpiv_p2p_pending_acks++;
	rc = mpiv_tp_send(mpiv_tp_home(dst), MPIV__MSG_TYPE__MSG_SEND, &m.base,
	    payload, bytes, owned, r);
	if (rc != MPI_SUCCESS && r->need_ack)
		mpiv_p2p_pending_acks--;
	return rc;
}

/*
 * Frames to our home CM (RecvPost, Probe, Cancel): pending outcomes go
 * first, then the frame with the next post number. MPI code.
 */
static int
p2p_post(uint16_t type, ProtobufCMessage *m, uint64_t *post_no)
{
	int home = mpiv_tp_home(mpiv_state.world_rank);
	int rc;

	if ((rc = mpiv_ndlog_before_frame(home)) != MPI_SUCCESS)
		return rc;
	*post_no = ++p2p_post_no;
	return mpiv_tp_send(home, type, m, NULL, 0, NULL, NULL);
}

static int
p2p_start_recv(struct mpiv_request *r)
{
	Mpiv__RecvPost m = MPIV__RECV_POST__INIT;
	int rc;

	r->cap = (size_t)r->count * r->dt->size;
	if (r->cap > 0 && p2p_addr(r->buf, r->dt->true_lb) == NULL) {
		mpiv_err_detail("NULL buffer for %zu bytes", r->cap);
		return MPI_ERR_BUFFER;
	}
	m.req_id = mpiv_req_new_id(r);
	m.context = r->context;
	m.source = r->peer == MPI_ANY_SOURCE ? -1 :
	    mpiv_comm_world_rank(r->comm, r->peer);
	m.tag = r->tag == MPI_ANY_TAG ? -1 : r->tag;
	r->post_src = m.source;
	r->post_tag = m.tag;
	rc = p2p_post(MPIV__MSG_TYPE__MSG_RECV_POST, &m.base, &m.post_no);
	if (rc == MPI_SUCCESS) {
		r->post_no = m.post_no;
		mpiv_fault_point("post");
	}
	return rc;
}

int
mpiv_p2p_start(struct mpiv_request *r)
{
	int rc;

	mpiv_ckpt_point();	/* entry of every send and receive */
	r->active = true;
	r->complete = false;
	r->written = r->need_ack = r->acked = false;
	r->cancel_wait = false;
	r->post_no = r->cancel_post_no = 0;
	mpiv_req_empty_status(&r->status);
	if (r->peer == MPI_PROC_NULL) {
		r->status.MPI_SOURCE = MPI_PROC_NULL;
		r->status.MPI_TAG = MPI_ANY_TAG;
		r->complete = true;
		return MPI_SUCCESS;
	}
	rc = r->kind == MPIV_REQ_SEND ? p2p_start_send(r) : p2p_start_recv(r);
	if (rc != MPI_SUCCESS) {
		r->active = false;
		r->complete = false;
	}
	return rc;
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
		*st = r->status;
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
	if (!recv && p2p_too_big((size_t)count * dt->size))
		return MPI_ERR_COUNT;
	if (rank != MPI_PROC_NULL && !(recv && rank == MPI_ANY_SOURCE) &&
	    (rank < 0 || rank >= comm->size))
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
		*status = st[1];
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
		*status = st[1];
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc,
	    "MPI_Sendrecv_replace");
}

/* ---------------- persistent requests ---------------- */

static int
p2p_init_req(enum mpiv_req_kind kind, const void *buf, int count,
    MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Request *request,
    const char *fn)
{
	struct mpiv_request *r;
	int rc;

	rc = p2p_check(comm, count, dt, peer, tag, kind == MPIV_REQ_RECV);
	if (rc != MPI_SUCCESS)
		return p2p_fail(comm, rc, fn);
	if (request == NULL)
		return p2p_fail(comm, MPI_ERR_REQUEST, fn);
	r = p2p_new(kind, buf, count, dt, peer, tag, comm, comm->context,
	    MPIV_SEND_STANDARD);
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
	    request, "MPI_Send_init");
}

int
MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm, MPI_Request *request)
{
	return p2p_init_req(MPIV_REQ_RECV, buf, count, dt, source, tag, comm,
	    request, "MPI_Recv_init");
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
 * One Probe round trip to our home CM (which chooses and logs the
 * answer). Blocking probes wait there for a match.
 */
static int
p2p_probe(int source, int tag, MPI_Comm comm, bool blocking, bool *found,
    MPI_Status *status)
{
	Mpiv__Probe m = MPIV__PROBE__INIT;
	struct mpiv_request *r;
	int rc;

	mpiv_ckpt_point();
	if ((r = mpiv_req_alloc(MPIV_REQ_PROBE)) == NULL)
		return MPI_ERR_NO_MEM;
	r->comm = comm;
	r->active = true;
	m.req_id = mpiv_req_new_id(r);
	m.context = comm->context;
	m.source = source == MPI_ANY_SOURCE ? -1 :
	    mpiv_comm_world_rank(comm, source);
	m.tag = tag == MPI_ANY_TAG ? -1 : tag;
	m.blocking = blocking;
	r->context = m.context;
	r->post_src = m.source;
	r->post_tag = m.tag;
	r->post_blocking = blocking;
	rc = p2p_post(MPIV__MSG_TYPE__MSG_PROBE, &m.base, &m.post_no);
	r->post_no = m.post_no;
	if (rc == MPI_SUCCESS)
		rc = mpiv_req_wait_complete(r);
	if (rc == MPI_SUCCESS) {
		*found = r->found;
		if (r->found && status != NULL)
			*status = r->status;
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
			mpiv_req_empty_status(status);
			status->MPI_SOURCE = MPI_PROC_NULL;
		}
		return MPI_SUCCESS;
	}
	rc = p2p_probe(source, tag, comm, true, &found, status);
	return rc == MPI_SUCCESS ? rc : p2p_fail(comm, rc, "MPI_Probe");
}

int
MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	bool found = false;
	int rc;

	if ((rc = p2p_check(comm, 0, MPI_BYTE, source, tag, true)) !=
	    MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Iprobe");
	if (flag == NULL)
		return p2p_fail(comm, MPI_ERR_ARG, "MPI_Iprobe");
	if (source == MPI_PROC_NULL) {
		*flag = 1;
		if (status != NULL) {
			mpiv_req_empty_status(status);
			status->MPI_SOURCE = MPI_PROC_NULL;
		}
		return MPI_SUCCESS;
	}
	rc = p2p_probe(source, tag, comm, false, &found, status);
	if (rc != MPI_SUCCESS)
		return p2p_fail(comm, rc, "MPI_Iprobe");
	mpiv_fault_point("nd");
	*flag = mpiv_nd_iprobe(found);
	return MPI_SUCCESS;
}

/*
 * Cancels a pending receive: asks the home CM and waits for its answer.
 * If the CM had already matched it, the Deliver came first on the same
 * connection and the receive completes normally (not cancelled). Sends
 * are never cancelled (see the head of this file).
 *
 * The Cancel is sent even when the Deliver has already arrived: whether
 * it has is a matter of timing, and post numbers must not depend on it
 * (the CM answers "not cancelled", as it would have anyway).
 */
int
MPI_Cancel(MPI_Request *request)
{
	Mpiv__Cancel m = MPIV__CANCEL__INIT;
	struct mpiv_request *r;
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, "MPI_Cancel");
	if (request == NULL || !mpiv_req_valid(*request))
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel");
	r = *request;
	if (r->kind != MPIV_REQ_RECV || !r->active || r->peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	mpiv_ckpt_point();
	m.req_id = r->id;
	r->cancel_wait = true;
	rc = p2p_post(MPIV__MSG_TYPE__MSG_CANCEL, &m.base, &m.post_no);
	r->cancel_post_no = m.post_no;
	while (rc == MPI_SUCCESS && r->cancel_wait)
		rc = mpiv_tp_progress(-1);
	return rc == MPI_SUCCESS ? rc : p2p_fail(r->comm, rc, "MPI_Cancel");
}

/* ---------------- restore from a checkpoint ---------------- */

uint64_t
mpiv_p2p_post_count(void)
{
	return p2p_post_no;
}

struct p2p_repost {
	uint64_t post_no;
	uint16_t type;
	struct mpiv_request *r;
};

struct p2p_collect {
	struct p2p_repost *v;
	size_t n, cap;
	bool nomem;
};

static void
p2p_add_repost(struct p2p_collect *cl, uint64_t post_no, uint16_t type,
    struct mpiv_request *r)
{
	if (cl->n == cl->cap) {
		size_t cap = cl->cap ? 2 * cl->cap : 16;
		struct p2p_repost *v = realloc(cl->v, cap * sizeof(*v));

		if (v == NULL) {
			cl->nomem = true;
			return;
		}
		cl->v = v;
		cl->cap = cap;
	}
	cl->v[cl->n].post_no = post_no;
	cl->v[cl->n].type = type;
	cl->v[cl->n++].r = r;
}

/* Pending posts are collected; written Ssends become acknowledged (the
   SyncAck went to the connection of the dead parent). */
static void
p2p_restore_one(struct mpiv_request *r, void *arg)
{
	struct p2p_collect *cl = arg;

	if (!r->active)
		return;
	if (r->kind == MPIV_REQ_RECV && r->cancel_wait &&
	    r->cancel_post_no != 0)
		p2p_add_repost(cl, r->cancel_post_no,
		    MPIV__MSG_TYPE__MSG_CANCEL, r);
	if (r->complete)
		return;
	if (r->kind == MPIV_REQ_SEND) {
		if (r->need_ack && !r->acked && r->written) {
			r->acked = true;
			mpiv_p2p_pending_acks--;
			mpiv_req_complete(r);
		}
		return;
	}
	if (r->post_no == 0)
		return;
	if (r->kind == MPIV_REQ_RECV)
		p2p_add_repost(cl, r->post_no, MPIV__MSG_TYPE__MSG_RECV_POST,
		    r);
	else if (r->kind == MPIV_REQ_PROBE)
		p2p_add_repost(cl, r->post_no, MPIV__MSG_TYPE__MSG_PROBE, r);
}

static int
p2p_repost_cmp(const void *a, const void *b)
{
	const struct p2p_repost *x = a, *y = b;

	return x->post_no < y->post_no ? -1 : x->post_no > y->post_no;
}

int
mpiv_p2p_restore(void)
{
	int home = mpiv_tp_home(mpiv_state.world_rank);
	struct p2p_collect cl = { 0 };
	int rc = MPI_SUCCESS;

	mpiv_req_foreach(p2p_restore_one, &cl);
	if (cl.nomem) {
		free(cl.v);
		return MPI_ERR_NO_MEM;
	}
	if (cl.n > 1)
		qsort(cl.v, cl.n, sizeof(*cl.v), p2p_repost_cmp);
	for (size_t i = 0; i < cl.n && rc == MPI_SUCCESS; i++) {
		struct mpiv_request *r = cl.v[i].r;

		if (cl.v[i].type == MPIV__MSG_TYPE__MSG_RECV_POST) {
			Mpiv__RecvPost m = MPIV__RECV_POST__INIT;

			m.req_id = r->id;
			m.context = r->context;
			m.source = r->post_src;
			m.tag = r->post_tag;
			m.post_no = r->post_no;
			rc = mpiv_tp_send(home, cl.v[i].type, &m.base, NULL, 0,
			    NULL, NULL);
		} else if (cl.v[i].type == MPIV__MSG_TYPE__MSG_PROBE) {
			Mpiv__Probe m = MPIV__PROBE__INIT;

			m.req_id = r->id;
			m.context = r->context;
			m.source = r->post_src;
			m.tag = r->post_tag;
			m.blocking = r->post_blocking;
			m.post_no = r->post_no;
			rc = mpiv_tp_send(home, cl.v[i].type, &m.base, NULL, 0,
			    NULL, NULL);
		} else {
			Mpiv__Cancel m = MPIV__CANCEL__INIT;

			m.req_id = r->id;
			m.post_no = r->cancel_post_no;
			rc = mpiv_tp_send(home, cl.v[i].type, &m.base, NULL, 0,
			    NULL, NULL);
		}
	}
	free(cl.v);
	return rc;
}
