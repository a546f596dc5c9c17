/*
 * request.c: requests and their completion.
 *
 * Requests live in a table of fixed-size blocks (they never move) with a
 * freelist. A request's wire id is (start serial << 32 | slot), so an
 * incoming Deliver/SyncAck/ProbeReply finds its request in O(1), and an
 * answer for an earlier start of a reused slot is recognised as stale.
 *
 * Every outcome that depends on timing rather than on the program
 * (Test, Testany, Testsome, Testall, Waitany, Waitsome,
 * Request_get_status) is decided in one place, nd_decide(): live, it is
 * recorded for the home CM (ndlog.c); in a re-execution the logged
 * outcome is imposed instead. Wait and Waitall are deterministic (they
 * report exactly the requests named) and are not logged. Iprobe answers
 * come from the CM, which logs them itself.
 */
#include <stdlib.h>
#include <string.h>

#include "mono.h"
#include "transport.h"
#include "waitrep.h"

#define REQ_BLOCK	64

struct mpiv_request mpiv_request_null;	/* mpi.h declares it; unused since
					   MPI_REQUEST_NULL is 0 */

static struct mpiv_request **req_slots;
static uint32_t req_nslots;
static struct mpiv_request *req_free;
static uint64_t req_serial;
static int req_nlive;

/* ---------------- pool ---------------- */

static int
req_grow(void)
{
	struct mpiv_request **slots, *block;
	uint32_t i;

	block = calloc(REQ_BLOCK, sizeof(*block));
	slots = realloc(req_slots, (req_nslots + REQ_BLOCK) * sizeof(*slots));
	if (block == NULL || slots == NULL) {
		free(block);
		if (slots != NULL)
			req_slots = slots;
		return -1;
	}
	req_slots = slots;
	for (i = REQ_BLOCK; i-- > 0;) {
		block[i].slot = req_nslots + i;
		slots[req_nslots + i] = &block[i];
		block[i].next_free = req_free;
		req_free = &block[i];
	}
	req_nslots += REQ_BLOCK;
	return 0;
}

struct mpiv_request *
mpiv_req_alloc(enum mpiv_req_kind kind)
{
	struct mpiv_request *r;
	uint32_t slot;

	if (req_free == NULL && req_grow() < 0)
		return NULL;
	r = req_free;
	req_free = r->next_free;
	slot = r->slot;
	memset(r, 0, sizeof(*r));
	r->magic = MPIV_REQ_MAGIC;
	r->slot = slot;
	r->kind = kind;
	mpiv_req_empty_status(&r->status);
	req_nlive++;
	return r;
}

void
mpiv_req_release(struct mpiv_request *r)
{
	if (r == NULL || r->magic != MPIV_REQ_MAGIC)
		return;
	if (r->nbc != NULL)
		mpiv_nbc_drop(r);
	free(r->tmp);
	r->tmp = NULL;
	if (r->dt != NULL)
		mpiv_dt_release(r->dt);
	r->dt = NULL;
	r->magic = 0;
	r->id = 0;
	r->next_free = req_free;
	req_free = r;
	req_nlive--;
}

/* The upper half of an id (the serial's low 32 bits) is never 0: a
   request not started has id 0, which a field left out reads as. */
uint64_t
mpiv_req_new_id(struct mpiv_request *r)
{
	if ((uint32_t)++req_serial == 0)
		req_serial++;
	r->id = (req_serial << 32) | r->slot;
	return r->id;
}

struct mpiv_request *
mpiv_req_lookup(uint64_t id)
{
	uint32_t slot = (uint32_t)id;
	struct mpiv_request *r;

	if ((id >> 32) == 0 || slot >= req_nslots)
		return NULL;
	r = req_slots[slot];
	if (r->magic != MPIV_REQ_MAGIC || r->id != id)
		return NULL;
	return r;
}

bool
mpiv_req_valid(MPI_Request r)
{
	return r != NULL && r->magic == MPIV_REQ_MAGIC;
}

int
mpiv_req_live(void)
{
	return req_nlive;
}

void
mpiv_req_foreach(void (*fn)(struct mpiv_request *r, void *arg), void *arg)
{
	for (uint32_t i = 0; i < req_nslots; i++)
		if (req_slots[i]->magic == MPIV_REQ_MAGIC)
			fn(req_slots[i], arg);
}

void
mpiv_req_empty_status(MPI_Status *st)
{
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	st->MPI_ERROR = MPI_SUCCESS;
	st->mpiv_cancelled = 0;
	st->mpiv_count = 0;
}

void
mpiv_status_out(MPI_Status *dst, const MPI_Status *src)
{
	int keep = dst->MPI_ERROR;

	*dst = *src;
	dst->MPI_ERROR = keep;
}

void
mpiv_status_proc_null(MPI_Status *st)
{
	int keep = st->MPI_ERROR;

	mpiv_req_empty_status(st);
	st->MPI_SOURCE = MPI_PROC_NULL;
	st->MPI_ERROR = keep;
}

struct mpiv_request *
mpiv_req_done(const MPI_Status *st)
{
	struct mpiv_request *r = mpiv_req_alloc(MPIV_REQ_DONE);

	if (r == NULL)
		return NULL;
	r->peer = MPI_PROC_NULL;
	r->active = true;
	r->complete = true;
	if (st != NULL)
		r->status = *st;
	else
		mpiv_req_empty_status(&r->status);
	return r;
}

void
mpiv_req_complete(struct mpiv_request *r)
{
	r->complete = true;
	if (r->freed)
		mpiv_req_release(r);
}

int
mpiv_req_wait_complete(struct mpiv_request *r)
{
	struct mpiv_request *was = mpiv_nbc_waited;
	/* an MPI_Iprobe's round trip to the CM is part of its call, not a
	   wait of the program (a loop of them is a run of polls) */
	bool told = r->kind != MPIV_REQ_PROBE || r->post_blocking;
	int rc = MPI_SUCCESS;

	if (r->complete)
		return MPI_SUCCESS;
	/* nothing returns before r completes: if r is the one active
	   schedule, its steps here are determined (nbc.c) */
	mpiv_nbc_waited = r;
	if (told)
		mpiv_waitrep_begin(NULL, &r, 1);
	/* A safe point: the caller started r and now only waits (also
	   while asleep: a checkpoint request wakes the poll). */
	while (!r->complete) {
		mpiv_ckpt_point();
		/* non-blocking collectives move on while we wait */
		if (mpiv_nbc_active > 0 &&
		    (rc = mpiv_nbc_progress()) != MPI_SUCCESS)
			break;
		if (r->complete)
			break;
		/* asleep until something happens or a periodic checkpoint
		   falls due (a rank blocked here is checkpointed on time) */
		if ((rc = mpiv_tp_progress(mpiv_ckpt_due_ms())) != MPI_SUCCESS)
			break;
	}
	if (told)
		mpiv_waitrep_end();
	mpiv_nbc_waited = was;
	return rc;
}

/* ---------------- non-deterministic outcomes ---------------- */

/*
 * Which of reqs[0..n) count for a call of `kind`: Test, Testall and
 * Request_get_status ask about every active request (flag = 1 when all
 * are complete); the others report individual completed indices.
 */
static bool
nd_is_flag_kind(uint32_t kind)
{
	return kind == MPIV_ND_TEST || kind == MPIV_ND_TESTALL ||
	    kind == MPIV_ND_GET_STATUS;
}

static bool
nd_is_wait_kind(uint32_t kind)
{
	return kind == MPIV_ND_WAITANY || kind == MPIV_ND_WAITSOME;
}

static bool
nd_all_complete(int n, MPI_Request *reqs)
{
	for (int i = 0; i < n; i++)
		if (reqs[i] != NULL && reqs[i]->active && !reqs[i]->complete)
			return false;
	return true;
}

/* The live decision: what has completed by now. */
static int
nd_live(uint32_t kind, int n, MPI_Request *reqs, int *idx)
{
	int k = 0;

	if (nd_is_flag_kind(kind))
		return nd_all_complete(n, reqs) ? 1 : 0;
	for (int i = 0; i < n; i++) {
		if (reqs[i] != NULL && reqs[i]->active && reqs[i]->complete) {
			idx[k++] = i;
			if (kind == MPIV_ND_TESTANY || kind == MPIV_ND_WAITANY)
				break;	/* the first in array order */
		}
	}
	return k;
}

/*
 * Imposes a logged outcome: checks that it is possible, then waits (in
 * poll) until exactly the logged requests are complete. Requests that
 * complete meanwhile but were not logged stay unreported.
 */
static int
nd_replay(const Mpiv__NdOutcome *o, uint32_t kind, int n, MPI_Request *reqs,
    int *idx, int *k)
{
	int rc;

	*k = 0;
	if (!o->flag) {
		/* logged "nothing": returned without waiting */
		if (nd_is_wait_kind(kind) || o->n_indices > 0)
			goto bad_record;
		return MPI_SUCCESS;
	}
	if (nd_is_flag_kind(kind)) {
		/* logged "all complete" (Test, Testall, get_status) */
		if (o->n_indices > 0)
			goto bad_record;
		while (!nd_all_complete(n, reqs))
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
		*k = 1;
		return MPI_SUCCESS;
	}
	if (o->n_indices == 0 || o->n_indices > (size_t)n ||
	    ((kind == MPIV_ND_TESTANY || kind == MPIV_ND_WAITANY) &&
	    o->n_indices != 1))
		goto bad_record;
	for (size_t j = 0; j < o->n_indices; j++) {
		int i = o->indices[j];

		if (i < 0 || i >= n || reqs[i] == NULL || !reqs[i]->active ||
		    (j > 0 && i <= o->indices[j - 1])) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu (%s): logged completion of index %d, "
			    "which is %s", (unsigned long long)
			    mpiv_ndlog_current(), mpiv_ndlog_kind_name(kind), i,
			    i < 0 || i >= n ? "out of range" :
			    reqs[i] == NULL || !reqs[i]->active ?
			    "not an active request" : "out of order");
			return MPI_ERR_INTERN;
		}
		while (!reqs[i]->complete)
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
		idx[j] = i;
	}
	*k = (int)o->n_indices;
	return MPI_SUCCESS;

bad_record:
	mpiv_tp_set_error("replay diverged at non-deterministic call %llu "
	    "(%s over %d requests): logged flag=%d with %zu completed indices",
	    (unsigned long long)mpiv_ndlog_current(),
	    mpiv_ndlog_kind_name(kind), n, o->flag, o->n_indices);
	return MPI_ERR_INTERN;
}

/*
 * The one place a timing-dependent outcome is made. For Test, Testall
 * and Request_get_status *k is the flag; for the others idx[0..*k) are
 * the completed indices (idx has room for n). A re-execution gets the
 * logged outcome; a live decision is recorded for the home CM. Waitany
 * and Waitsome block until something completes. MPI code.
 */
static int
nd_decide(uint32_t kind, int n, MPI_Request *reqs, int *idx, int *k)
{
	const Mpiv__NdOutcome *o = NULL;
	long entry = mono_us();
	int rc, one = -1;

	if ((rc = mpiv_nbc_call()) != MPI_SUCCESS)
		return rc;
	if (nd_is_wait_kind(kind)) {
		/* Waitany/Waitsome over one active request can only end
		   with that one: nothing for timing to decide (the same in
		   a re-execution, whose requests are the same), so nothing
		   is logged, as for MPI_Wait. */
		for (int i = 0; i < n; i++) {
			if (reqs[i] == NULL || !reqs[i]->active)
				continue;
			if (one >= 0) {
				one = -1;
				break;
			}
			one = i;
		}
		if (one >= 0) {
			if ((rc = mpiv_req_wait_complete(reqs[one])) !=
			    MPI_SUCCESS)
				return rc;
			idx[0] = one;
			*k = 1;
			return MPI_SUCCESS;
		}
	}
	mpiv_ckpt_point();	/* before the call takes its nd_no */
	if (mpiv_nbc_active > 0) {
		/* Steps of non-blocking collectives come before the call's
		   own number; a live Waitany or Waitsome waits here, taking
		   steps, until something completed, so that none is taken
		   after its number (the replay takes them all before it). */
		if ((rc = mpiv_nbc_progress()) != MPI_SUCCESS)
			return rc;
		while (nd_is_wait_kind(kind) && mpiv_ndlog_peek() == NULL &&
		    nd_live(kind, n, reqs, idx) == 0) {
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS ||
			    (rc = mpiv_nbc_progress()) != MPI_SUCCESS)
				return rc;
		}
	}
	rc = mpiv_ndlog_next(kind, &o);
	if (rc < 0)
		return MPI_ERR_INTERN;
	if (rc > 0)
		return nd_replay(o, kind, n, reqs, idx, k);
	if (kind == MPIV_ND_TEST || kind == MPIV_ND_GET_STATUS) {
		/* one request: look only when it is not already done */
		if (!reqs[0]->complete &&
		    (rc = mpiv_tp_progress(0)) != MPI_SUCCESS)
			return rc;
	} else if ((rc = mpiv_tp_progress(0)) != MPI_SUCCESS) {
		return rc;
	}
	*k = nd_live(kind, n, reqs, idx);
	while (*k == 0 && nd_is_wait_kind(kind)) {
		if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
			return rc;
		*k = nd_live(kind, n, reqs, idx);
	}
	mpiv_fault_point("nd");
	if (nd_is_flag_kind(kind))
		rc = mpiv_ndlog_record(kind, *k != 0, 0, NULL);
	else
		rc = mpiv_ndlog_record(kind, *k > 0, *k, idx);
	/* Decided and recorded: a Test that found nothing may now back
	   off (a Waitany or Waitsome always found something). */
	if (rc == MPI_SUCCESS && !nd_is_wait_kind(kind)) {
		mpiv_waitrep_polling(mpiv_ndlog_kind_name(kind), reqs, n);
		mpiv_tp_poll_done(entry, *k != 0);
		mpiv_waitrep_polled();
	}
	return rc;
}

/* Iprobe: the CM's answer (it logs it too). */
bool
mpiv_nd_iprobe(bool found)
{
	return found;
}

/* ---------------- reporting completion ---------------- */

/*
 * Hands a complete (or inactive) request's result to the user: copies the
 * status, then frees a one-shot request (*rp = NULL) or makes a
 * persistent one inactive. Returns the request's error code.
 */
static int
req_report(MPI_Request *rp, MPI_Status *st)
{
	struct mpiv_request *r = *rp;
	int err;

	if (r == NULL || !r->active) {
		if (st != NULL)
			mpiv_req_empty_status(st);
		return MPI_SUCCESS;
	}
	if (r->greq != NULL) {
		*rp = NULL;
		return mpiv_greq_report(r, st);
	}
	err = r->status.MPI_ERROR;
	if (st != NULL)
		*st = r->status;
	if (r->persistent) {
		r->active = false;
	} else {
		mpiv_req_release(r);
		*rp = NULL;
	}
	return err;
}

/* req_report for the calls that complete one request: MPI says they
   leave the status's MPI_ERROR as it was (only the calls of several
   statuses set it). */
static int
req_report_one(MPI_Request *rp, MPI_Status *st)
{
	MPI_Status got;
	int rc;

	if (st == NULL)
		return req_report(rp, NULL);
	rc = req_report(rp, &got);
	mpiv_status_out(st, &got);
	return rc;
}

/* Checks an array of handles; MPI_REQUEST_NULL entries are fine. */
static int
req_check_array(int n, MPI_Request *reqs)
{
	if (n < 0)
		return MPI_ERR_COUNT;
	if (n > 0 && reqs == NULL)
		return MPI_ERR_REQUEST;
	for (int i = 0; i < n; i++)
		if (reqs[i] != NULL && !mpiv_req_valid(reqs[i]))
			return MPI_ERR_REQUEST;
	return MPI_SUCCESS;
}

static bool
req_any_active(int n, MPI_Request *reqs)
{
	for (int i = 0; i < n; i++)
		if (reqs[i] != NULL && reqs[i]->active)
			return true;
	return false;
}

/* The communicator whose handler sees an error of r (WORLD if none). */
static MPI_Comm
req_comm(MPI_Request r)
{
	return r != NULL && r->comm != NULL ? r->comm : MPI_COMM_WORLD;
}

static int
req_check_init(const char *fn)
{
	if (!mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, fn);
	return MPI_SUCCESS;
}

/* ---------------- Wait ---------------- */

int
MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct mpiv_request *r;
	MPI_Comm comm;
	int rc;

	if ((rc = req_check_init("MPI_Wait")) != MPI_SUCCESS)
		return rc;
	if (request == NULL || (*request != NULL && !mpiv_req_valid(*request)))
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Wait");
	r = *request;
	if ((rc = mpiv_nbc_call()) != MPI_SUCCESS)
		return mpiv_err(req_comm(r), rc, "MPI_Wait");
	if (r != NULL && r->active &&
	    (rc = mpiv_req_wait_complete(r)) != MPI_SUCCESS)
		return mpiv_err(req_comm(r), rc, "MPI_Wait");
	comm = req_comm(r);
	rc = req_report_one(request, status);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Wait");
}

int
mpiv_waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
	int i, rc, err = MPI_SUCCESS;

	for (i = 0; i < n; i++) {
		if (reqs[i] != NULL && reqs[i]->active &&
		    (rc = mpiv_req_wait_complete(reqs[i])) != MPI_SUCCESS)
			return rc;
	}
	for (i = 0; i < n; i++) {
		rc = req_report(&reqs[i], statuses != NULL ? &statuses[i] : NULL);
		if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
			err = rc;
	}
	return err;
}

int
MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
	MPI_Comm comm = MPI_COMM_WORLD;
	int rc, i;
	bool failed = false;

	if ((rc = req_check_init("MPI_Waitall")) != MPI_SUCCESS)
		return rc;
	if ((rc = req_check_array(count, reqs)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Waitall");
	if ((rc = mpiv_nbc_call()) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Waitall");
	mpiv_waitrep_begin("MPI_Waitall", reqs, count);
	for (i = 0; i < count; i++) {
		if (reqs[i] != NULL && reqs[i]->active &&
		    (rc = mpiv_req_wait_complete(reqs[i])) != MPI_SUCCESS) {
			mpiv_waitrep_end();
			return mpiv_err(req_comm(reqs[i]), rc, "MPI_Waitall");
		}
	}
	mpiv_waitrep_end();
	for (i = 0; i < count; i++) {
		MPI_Comm c = req_comm(reqs[i]);

		rc = req_report(&reqs[i], statuses != NULL ? &statuses[i] : NULL);
		if (rc != MPI_SUCCESS && !failed) {
			failed = true;
			comm = c;
		}
	}
	return failed ? mpiv_err(comm, MPI_ERR_IN_STATUS, "MPI_Waitall") :
	    MPI_SUCCESS;
}

int
MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	MPI_Comm comm;
	int rc, i = -1, k;

	if ((rc = req_check_init("MPI_Waitany")) != MPI_SUCCESS)
		return rc;
	if ((rc = req_check_array(count, reqs)) != MPI_SUCCESS ||
	    index == NULL)
		return mpiv_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Waitany");
	if (!req_any_active(count, reqs)) {
		*index = MPI_UNDEFINED;
		if (status != NULL)
			mpiv_req_empty_status(status);
		return MPI_SUCCESS;
	}
	mpiv_waitrep_begin("MPI_Waitany", reqs, count);
	rc = nd_decide(MPIV_ND_WAITANY, count, reqs, &i, &k);
	mpiv_waitrep_end();
	if (rc != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Waitany");
	*index = i;
	comm = req_comm(reqs[i]);
	rc = req_report_one(&reqs[i], status);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Waitany");
}

/* Reports the `k` completed requests of `indices` for Waitsome/Testsome. */
static int
req_report_some(int k, MPI_Request reqs[], const int indices[],
    MPI_Status statuses[], const char *fn)
{
	MPI_Comm comm = MPI_COMM_WORLD;
	bool failed = false;

	for (int j = 0; j < k; j++) {
		MPI_Comm c = req_comm(reqs[indices[j]]);
		int rc = req_report(&reqs[indices[j]],
		    statuses != NULL ? &statuses[j] : NULL);

		if (rc != MPI_SUCCESS && !failed) {
			failed = true;
			comm = c;
		}
	}
	return failed ? mpiv_err(comm, MPI_ERR_IN_STATUS, fn) : MPI_SUCCESS;
}

int
MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
    MPI_Status statuses[])
{
	int rc, k;

	if ((rc = req_check_init("MPI_Waitsome")) != MPI_SUCCESS)
		return rc;
	if ((rc = req_check_array(incount, reqs)) != MPI_SUCCESS ||
	    outcount == NULL || (incount > 0 && indices == NULL))
		return mpiv_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Waitsome");
	if (!req_any_active(incount, reqs)) {
		*outcount = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	mpiv_waitrep_begin("MPI_Waitsome", reqs, incount);
	rc = nd_decide(MPIV_ND_WAITSOME, incount, reqs, indices, &k);
	mpiv_waitrep_end();
	if (rc != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Waitsome");
	*outcount = k;
	return req_report_some(k, reqs, indices, statuses, "MPI_Waitsome");
}

/* ---------------- Test ---------------- */

int
MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct mpiv_request *r;
	MPI_Comm comm;
	int rc, k;

	if ((rc = req_check_init("MPI_Test")) != MPI_SUCCESS)
		return rc;
	if (request == NULL || flag == NULL ||
	    (*request != NULL && !mpiv_req_valid(*request)))
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Test");
	r = *request;
	if (r == NULL || !r->active) {
		*flag = 1;
		if (status != NULL)
			mpiv_req_empty_status(status);
		return MPI_SUCCESS;
	}
	if ((rc = nd_decide(MPIV_ND_TEST, 1, request, NULL, &k)) !=
	    MPI_SUCCESS)
		return mpiv_err(req_comm(r), rc, "MPI_Test");
	*flag = k;
	if (!*flag)
		return MPI_SUCCESS;
	comm = req_comm(r);
	rc = req_report_one(request, status);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Test");
}

int
MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	MPI_Comm comm = MPI_COMM_WORLD;
	bool failed = false;
	int rc, i, k = 1;

	if ((rc = req_check_init("MPI_Testall")) != MPI_SUCCESS)
		return rc;
	if ((rc = req_check_array(count, reqs)) != MPI_SUCCESS || flag == NULL)
		return mpiv_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Testall");
	/* With nothing active the answer does not depend on timing. */
	if (req_any_active(count, reqs) && (rc = nd_decide(MPIV_ND_TESTALL,
	    count, reqs, NULL, &k)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Testall");
	*flag = k;
	if (!*flag)
		return MPI_SUCCESS;
	for (i = 0; i < count; i++) {
		MPI_Comm c = req_comm(reqs[i]);

		rc = req_report(&reqs[i], statuses != NULL ? &statuses[i] : NULL);
		if (rc != MPI_SUCCESS && !failed) {
			failed = true;
			comm = c;
		}
	}
	return failed ? mpiv_err(comm, MPI_ERR_IN_STATUS, "MPI_Testall") :
	    MPI_SUCCESS;
}

int
MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag,
    MPI_Status *status)
{
	MPI_Comm comm;
	int rc, i = -1, k;

	if ((rc = req_check_init("MPI_Testany")) != MPI_SUCCESS)
		return rc;
	if ((rc = req_check_array(count, reqs)) != MPI_SUCCESS ||
	    index == NULL || flag == NULL)
		return mpiv_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Testany");
	if (!req_any_active(count, reqs)) {
		*flag = 1;
		*index = MPI_UNDEFINED;
		if (status != NULL)
			mpiv_req_empty_status(status);
		return MPI_SUCCESS;
	}
	if ((rc = nd_decide(MPIV_ND_TESTANY, count, reqs, &i, &k)) !=
	    MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Testany");
	if (k == 0) {
		*flag = 0;
		*index = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	*flag = 1;
	*index = i;
	comm = req_comm(reqs[i]);
	rc = req_report_one(&reqs[i], status);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Testany");
}

int
MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
    MPI_Status statuses[])
{
	int rc, k;

	if ((rc = req_check_init("MPI_Testsome")) != MPI_SUCCESS)
		return rc;
	if ((rc = req_check_array(incount, reqs)) != MPI_SUCCESS ||
	    outcount == NULL || (incount > 0 && indices == NULL))
		return mpiv_err(NULL, rc ? rc : MPI_ERR_ARG, "MPI_Testsome");
	if (!req_any_active(incount, reqs)) {
		*outcount = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	if ((rc = nd_decide(MPIV_ND_TESTSOME, incount, reqs, indices, &k)) !=
	    MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Testsome");
	*outcount = k;
	return req_report_some(k, reqs, indices, statuses, "MPI_Testsome");
}

/* ---------------- the rest of the request API ---------------- */

int
MPI_Request_free(MPI_Request *request)
{
	struct mpiv_request *r;

	if (request == NULL || !mpiv_req_valid(*request))
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Request_free");
	r = *request;
	if (r->active && mpiv_nbc_is_collective(r)) {
		/* MPI: erroneous for a non-blocking collective's request */
		mpiv_err_detail("the request of an active non-blocking "
		    "collective cannot be freed (complete it with a Wait or "
		    "Test)");
		return mpiv_err(req_comm(r), MPI_ERR_REQUEST,
		    "MPI_Request_free");
	}
	*request = NULL;
	if (r->greq != NULL) {
		int rc = mpiv_greq_free(r);
		return rc == MPI_SUCCESS ? rc :
		    mpiv_err(NULL, rc, "MPI_Request_free");
	}
	if (r->active && !r->complete)
		r->freed = true;	/* released when it completes */
	else
		mpiv_req_release(r);
	return MPI_SUCCESS;
}

int
MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	int rc, k;

	if (flag == NULL || (request != NULL && !mpiv_req_valid(request)))
		return mpiv_err(NULL, MPI_ERR_REQUEST,
		    "MPI_Request_get_status");
	if (request == NULL || !request->active) {
		*flag = 1;
		if (status != NULL)
			mpiv_req_empty_status(status);
		return MPI_SUCCESS;
	}
	if ((rc = nd_decide(MPIV_ND_GET_STATUS, 1, &request, NULL, &k)) !=
	    MPI_SUCCESS)
		return mpiv_err(req_comm(request), rc,
		    "MPI_Request_get_status");
	*flag = k;
	if (*flag && request->greq != NULL)
		mpiv_greq_query(request);
	if (*flag && status != NULL)
		mpiv_status_out(status, &request->status);
	return MPI_SUCCESS;
}

int
MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	if (status == NULL || flag == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Test_cancelled");
	*flag = status->mpiv_cancelled != 0;
	return MPI_SUCCESS;
}

int
MPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
	int rc;

	if (status == NULL || count == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Get_count");
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Get_count");
	if (dt->size == 0)
		*count = status->mpiv_count == 0 ? 0 : MPI_UNDEFINED;
	else if (status->mpiv_count % dt->size != 0 ||
	    status->mpiv_count / dt->size > (size_t)INT32_MAX)
		*count = MPI_UNDEFINED;
	else
		*count = (int)(status->mpiv_count / dt->size);
	return MPI_SUCCESS;
}

int
MPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
	MPI_Count n;
	int rc;

	if (status == NULL || count == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Get_elements");
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Get_elements");
	n = mpiv_dt_elements(dt, status->mpiv_count);
	*count = n < 0 || n > INT32_MAX ? MPI_UNDEFINED : (int)n;
	return MPI_SUCCESS;
}
