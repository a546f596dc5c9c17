/*
 * grequest.c: generalized requests (MPI_Grequest_start/complete). The
 * program completes them itself; the library calls its callbacks as the
 * standard says:
 *
 *   query_fn   when Wait/Test (or Request_get_status) report the
 *              completed request: it fills the status, its return value
 *              is the request's error code;
 *   free_fn    once the request is both complete and freed (reported by
 *              Wait/Test, or MPI_Request_free);
 *   cancel_fn  on MPI_Cancel, told whether the request is complete.
 *
 * A generalized request is an ordinary request of kind MPIV_REQ_DONE
 * with r->greq set: the Wait and Test family (request.c) treat it like
 * any other, so Test/Testany/... outcomes on it are logged and replayed
 * like the others. MPI_Grequest_complete is a deterministic program
 * event (mpiv runs the program in one thread of control), so a
 * re-executed rank completes it at the same point.
 */
#include <stdlib.h>

#include "transport.h"

struct mpiv_greq {
	MPI_Grequest_query_function *query;
	MPI_Grequest_free_function *free;
	MPI_Grequest_cancel_function *cancel;
	void *extra;
};

int
MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
    MPI_Grequest_free_function *free_fn,
    MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
    MPI_Request *request)
{
	struct mpiv_request *r;
	struct mpiv_greq *g;

	if (request == NULL || query_fn == NULL || free_fn == NULL ||
	    cancel_fn == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Grequest_start");
	if ((g = malloc(sizeof(*g))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
	if ((r = mpiv_req_alloc(MPIV_REQ_DONE)) == NULL) {
		free(g);
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
	}
	g->query = query_fn;
	g->free = free_fn;
	g->cancel = cancel_fn;
	g->extra = extra_state;
	r->greq = g;
	r->peer = MPI_PROC_NULL;
	r->active = true;
	r->complete = false;
	*request = r;
	return MPI_SUCCESS;
}

/* Calls free_fn and releases the request: complete and freed. */
static int
greq_destroy(struct mpiv_request *r)
{
	struct mpiv_greq *g = r->greq;
	int rc = g->free(g->extra);

	r->greq = NULL;
	free(g);
	mpiv_req_release(r);
	return rc;
}

int
MPI_Grequest_complete(MPI_Request request)
{
	if (!mpiv_req_valid(request) || request->greq == NULL)
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
	if (request->complete)
		return mpiv_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete");
	request->complete = true;
	if (request->freed) {	/* MPI_Request_free came first */
		int rc = greq_destroy(request);
		return rc == MPI_SUCCESS ? rc :
		    mpiv_err(NULL, rc, "MPI_Grequest_complete");
	}
	return MPI_SUCCESS;
}

/* For Wait/Test/Request_get_status: query_fn fills r's status; its
   return is the request's error. */
int
mpiv_greq_query(struct mpiv_request *r)
{
	struct mpiv_greq *g = r->greq;
	int rc;

	mpiv_req_empty_status(&r->status);
	r->status.MPI_SOURCE = MPI_UNDEFINED;
	r->status.MPI_TAG = MPI_UNDEFINED;
	rc = g->query(g->extra, &r->status);
	r->status.MPI_ERROR = rc;
	return rc;
}

/* Wait/Test hand the completed request back: query, then free. */
int
mpiv_greq_report(struct mpiv_request *r, MPI_Status *st)
{
	int rc = mpiv_greq_query(r), frc;

	if (st != NULL)
		*st = r->status;
	frc = greq_destroy(r);
	return rc != MPI_SUCCESS ? rc : frc;
}

/* MPI_Request_free: free_fn now if complete, else at completion. */
int
mpiv_greq_free(struct mpiv_request *r)
{
	if (!r->complete) {
		r->freed = true;
		return MPI_SUCCESS;
	}
	return greq_destroy(r);
}

int
mpiv_greq_cancel(struct mpiv_request *r)
{
	return r->greq->cancel(r->greq->extra, r->complete);
}

/* MPI_Status_set_elements(_x) and _set_cancelled, which query_fn
   callbacks use, are in dt_large.c. */
