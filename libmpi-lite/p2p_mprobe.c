/*
 * p2p_mprobe.c: matched probes (MPI_Mprobe, MPI_Improbe) and the
 * receives of what they matched (MPI_Mrecv, MPI_Imrecv).
 *
 * A probe that finds a message (source S, tag T, n bytes) at once posts
 * a receive of n bytes from S with tag T into a buffer of the message
 * handle. That receive gets exactly the probed message: what a probe
 * sees matched no receive posted before it, and the probed message is
 * the first from S with tag T that the probe's pattern allows (messages
 * of one channel match in order); and nothing the program posts later
 * can take it. Mrecv waits for that receive and unpacks into the
 * program's buffer. The probe's answer is logged and replayed as any
 * probe's (the relay's home CM, or MPIV_ND_PROBE/IPROBE in a direct
 * job); the receive names its source and tag, so its match follows.
 *
 * MPI_Imrecv's request is a schedule (nbc.c) of one round that waits
 * for that receive, then unpacks: its completion is a step like a
 * non-blocking collective's, logged the same way.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mono.h"
#include "transport.h"
#include "waitrep.h"

struct mpiv_message {
	MPI_Comm comm;
	MPI_Request req;	/* the receive of the matched message */
	void *tmp;		/* its bytes */
	size_t bytes;
	MPI_Status status;	/* the probe's */
};

/* MPI_MESSAGE_NO_PROC: a probe of MPI_PROC_NULL. */
struct mpiv_message mpiv_message_no_proc;

/* Probes (comm rank source, tag) and, when found, takes the message:
   *msg is the handle (MPI_MESSAGE_NULL when not found). MPI code. */
static int
mprobe(int source, int tag, MPI_Comm comm, bool blocking, MPI_Message *msg,
    MPI_Status *status)
{
	struct mpiv_message *m;
	MPI_Status st;
	long entry = mono_us();
	bool found = false;
	int rc;

	*msg = MPI_MESSAGE_NULL;
	if (source == MPI_PROC_NULL) {
		*msg = MPI_MESSAGE_NO_PROC;
		if (status != NULL) {
			mpiv_status_proc_null(status);
		}
		return MPI_SUCCESS;
	}
	rc = mpiv_p2p_probe(source, tag, comm, blocking, &found, &st);
	if (rc != MPI_SUCCESS)
		return rc;
	if (!blocking) {
		mpiv_fault_point("nd");
		/* decided and logged: nothing found may back off */
		mpiv_waitrep_probing(source, tag, comm);
		mpiv_tp_poll_done(entry, found);
		mpiv_waitrep_polled();
	}
	if (!found)
		return MPI_SUCCESS;
	if (st.mpiv_count > INT_MAX)
		return MPI_ERR_COUNT;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return MPI_ERR_NO_MEM;
	m->comm = comm;
	m->bytes = st.mpiv_count;
	m->status = st;
	if ((m->tmp = malloc(m->bytes > 0 ? m->bytes : 1)) == NULL) {
		free(m);
		return MPI_ERR_NO_MEM;
	}
	rc = mpiv_irecv(m->tmp, (int)m->bytes, MPI_BYTE, st.MPI_SOURCE,
	    st.MPI_TAG, comm, comm->context, &m->req);
	if (rc != MPI_SUCCESS) {
		free(m->tmp);
		free(m);
		return rc;
	}
	*msg = m;
	if (status != NULL)
		mpiv_status_out(status, &st);
	return MPI_SUCCESS;
}

static void
mprobe_free(struct mpiv_message *m)
{
	if (m->req != NULL)
		mpiv_req_release(m->req);
	free(m->tmp);
	free(m);
}

/* Checks the arguments shared by Mprobe and Improbe. */
static int
mprobe_check(int source, int tag, MPI_Comm comm, MPI_Message *message)
{
	if (!mpiv_state.initialized || mpiv_state.finalized)
		return MPI_ERR_OTHER;
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return MPI_ERR_COMM;
	if (message == NULL)
		return MPI_ERR_ARG;
	if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE &&
	    (source < 0 || source >= comm->size))
		return MPI_ERR_RANK;
	if (tag != MPI_ANY_TAG && (tag < 0 || tag > MPI_TAG_UB_VALUE))
		return MPI_ERR_TAG;
	return MPI_SUCCESS;
}

static int
mprobe_fail(MPI_Comm comm, int rc, const char *fn)
{
	if (rc == MPI_ERR_COMM || mpiv_comm_check(comm) != MPI_SUCCESS)
		comm = NULL;
	return mpiv_err(comm, rc, fn);
}

int
MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
    MPI_Status *status)
{
	int rc;

	if ((rc = mprobe_check(source, tag, comm, message)) == MPI_SUCCESS)
		rc = mprobe(source, tag, comm, true, message, status);
	return rc == MPI_SUCCESS ? rc : mprobe_fail(comm, rc, "MPI_Mprobe");
}

int
MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
    MPI_Message *message, MPI_Status *status)
{
	int rc;

	if ((rc = mprobe_check(source, tag, comm, message)) == MPI_SUCCESS &&
	    flag == NULL)
		rc = MPI_ERR_ARG;
	if (rc == MPI_SUCCESS)
		rc = mprobe(source, tag, comm, false, message, status);
	if (rc != MPI_SUCCESS)
		return mprobe_fail(comm, rc, "MPI_Improbe");
	*flag = *message != MPI_MESSAGE_NULL;
	return MPI_SUCCESS;
}

/* Checks a receive of message *mp into (buf, count, dt). */
static int
mrecv_check(int count, MPI_Datatype dt, MPI_Message *mp)
{
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return MPI_ERR_OTHER;
	if (mp == NULL || *mp == MPI_MESSAGE_NULL)
		return MPI_ERR_REQUEST;
	if (count < 0)
		return MPI_ERR_COUNT;
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return rc;
	return MPI_SUCCESS;
}

/* The status of a matched receive that kept `kept` bytes. */
static void
mrecv_status(const struct mpiv_message *m, size_t kept, int err,
    MPI_Status *st)
{
	mpiv_req_empty_status(st);
	st->MPI_SOURCE = m->status.MPI_SOURCE;
	st->MPI_TAG = m->status.MPI_TAG;
	st->mpiv_count = kept;
	st->MPI_ERROR = err;
}

int
MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
    MPI_Status *status)
{
	struct mpiv_message *m;
	size_t cap, kept;
	int rc;

	if ((rc = mrecv_check(count, dt, message)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Mrecv");
	m = *message;
	if (m == MPI_MESSAGE_NO_PROC) {
		*message = MPI_MESSAGE_NULL;
		if (status != NULL) {
			mpiv_status_proc_null(status);
		}
		return MPI_SUCCESS;
	}
	if ((rc = mpiv_req_wait_complete(m->req)) == MPI_SUCCESS)
		rc = m->req->status.MPI_ERROR;
	if (rc != MPI_SUCCESS)
		return mpiv_err(m->comm, rc, "MPI_Mrecv");
	cap = (size_t)count * dt->size;
	kept = m->bytes < cap ? m->bytes : cap;
	if (kept > 0)
		mpiv_dt_unpack(m->tmp, kept, buf, count, dt);
	rc = m->bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
	if (status != NULL) {
		int keep = status->MPI_ERROR;	/* one status: left as it was */

		mrecv_status(m, kept, rc, status);
		status->MPI_ERROR = keep;
	}
	*message = MPI_MESSAGE_NULL;
	{
		MPI_Comm comm = m->comm;

		mprobe_free(m);
		return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Mrecv");
	}
}

int
MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
    MPI_Request *request)
{
	struct mpiv_message *m;
	struct mpiv_nbc *s;
	MPI_Status st;
	MPI_Comm comm;
	size_t cap, kept;
	int rc;

	if ((rc = mrecv_check(count, dt, message)) == MPI_SUCCESS &&
	    request == NULL)
		rc = MPI_ERR_REQUEST;
	if (rc != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Imrecv");
	m = *message;
	if (m == MPI_MESSAGE_NO_PROC)
		m = NULL;
	if ((s = mpiv_nbc_new(m != NULL ? m->comm : MPI_COMM_SELF)) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Imrecv");
	mpiv_nbc_mark_p2p(s);
	if (m == NULL) {
		/* MPI_MESSAGE_NO_PROC: done at once, source MPI_PROC_NULL */
		mpiv_req_empty_status(&st);
		st.MPI_SOURCE = MPI_PROC_NULL;
		mpiv_nbc_set_status(s, &st);
		*message = MPI_MESSAGE_NULL;
		rc = mpiv_nbc_start(s, request);
		return rc == MPI_SUCCESS ? rc :
		    mpiv_err(NULL, rc, "MPI_Imrecv");
	}
	/* round 0 waits for the receive, round 1 unpacks what fits (a
	   longer message: MPI_ERR_TRUNCATE in the status) */
	cap = (size_t)count * dt->size;
	kept = m->bytes < cap ? m->bytes : cap;
	rc = mpiv_nbc_adopt(s, 0, m->req);
	if (rc == MPI_SUCCESS) {
		m->req = NULL;
		if (kept > 0)
			rc = mpiv_nbc_copy(s, 1, m->tmp, (int)kept, MPI_BYTE,
			    buf, count, dt);
	}
	if (rc != MPI_SUCCESS) {
		/* the handle stays (its receive back in it if not adopted) */
		mpiv_nbc_discard(s);
		if (m->req == NULL) {
			free(m->tmp);
			free(m);
			*message = MPI_MESSAGE_NULL;
		}
		return mpiv_err(NULL, rc, "MPI_Imrecv");
	}
	/* the bytes outlive the handle: the schedule frees them */
	if ((rc = mpiv_nbc_own(s, m->tmp)) != MPI_SUCCESS) {
		mpiv_nbc_discard(s);	/* releases the receive too */
		free(m->tmp);
		free(m);
		*message = MPI_MESSAGE_NULL;
		return mpiv_err(NULL, rc, "MPI_Imrecv");
	}
	mrecv_status(m, kept, m->bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS,
	    &st);
	mpiv_nbc_set_status(s, &st);
	*message = MPI_MESSAGE_NULL;
	rc = mpiv_nbc_start(s, request);
	comm = m->comm;
	free(m);	/* its receive and bytes are the schedule's now */
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Imrecv");
}
