/*
 * waitrep.c: telling the dispatcher what a blocked rank waits for, so
 * that a job whose ranks all wait for each other (a deadlock: a receive
 * from a rank that finished, two ranks receiving from each other, a
 * collective some rank never enters) is reported instead of hanging
 * silently (docs/CONTRACTS.md, "Deadlocks").
 *
 * A wait is a blocking call's loop (MPI_Wait, Recv, Send, a blocking
 * collective, Waitany, Probe, the end of MPI_Finalize), marked by
 * mpiv_waitrep_begin/end around it, or a run of fruitless polls
 * (MPI_Test, Iprobe, ... in a loop that does nothing else: pollback.c's
 * run). Once a wait has lasted WAITREP_FIRST_MS, the rank sends a
 * WaitState to its home Channel Memory, which passes it to the
 * dispatcher, and again every WAITREP_EVERY_MS while the wait lasts;
 * when it ends, one with `over`. Each carries `moved`, the messages the
 * rank sent and received so far (payload frames, either protocol): the
 * dispatcher judges a deadlock when every rank waits or has finished
 * and none of these counts changed for the job's --deadlock-after.
 *
 * Nothing here is logged or replayed, and nothing here decides an
 * outcome: it only looks. The frames go out of band (not held back by
 * unacknowledged outcomes: they carry no message).
 */
#include <stdio.h>
#include <string.h>

#include "mono.h"
#include "transport.h"
#include "waitrep.h"

#define WAITREP_FIRST_MS	1000	/* a wait this long is told */
#define WAITREP_EVERY_MS	1000	/* then again this often */
#define WAITREP_DEPTH		8	/* nested waits described */

struct waitrep_frame {
	const char *call;		/* NULL: described by the request */
	struct mpiv_request *const *reqs;
	int n;
};

static struct waitrep_frame waitrep_stack[WAITREP_DEPTH];
/* the non-blocking call of a run of polls, while it reports */
static struct {
	const char *call;	/* NULL: none */
	struct mpiv_request *const *reqs;
	int n;
	bool probe;		/* an Iprobe: src, tag, comm */
	int src, tag;
	MPI_Comm comm;
} waitrep_pollctx;
static int waitrep_depth;
static long waitrep_start = -1;	/* ms: the outermost wait began */
static long waitrep_poll_start = -1;	/* ms: a run of polls began */
static long waitrep_poll_run;	/* µs: its start, as pollback.c has it */
static long waitrep_next;	/* ms: the next WaitState is due */
static bool waitrep_told;	/* the current wait was told */
static uint64_t waitrep_no;	/* waits told so far */
static uint64_t waitrep_moved;	/* message frames in and out, and reads and
				   writes of a long payload */

void
mpiv_waitrep_moved(void)
{
	waitrep_moved++;
}

/* "MPI_COMM_WORLD", a name the program gave, or its size. */
static void
waitrep_comm(MPI_Comm c, char *out, size_t n)
{
	if (c == NULL)
		snprintf(out, n, "an unknown communicator");
	else if (c->name[0] != '\0')
		snprintf(out, n, "%s", c->name);
	else
		snprintf(out, n, "a communicator of %d ranks", c->size);
}

/* "rank W" (a world rank), "any rank" for -1. */
static void
waitrep_who(int world, char *out, size_t n)
{
	if (world < 0)
		snprintf(out, n, "any rank");
	else
		snprintf(out, n, "rank %d", world);
}

/* "tag T", "any tag" for -1 (MPI_ANY_TAG). */
static void
waitrep_tag(int tag, char *out, size_t n)
{
	if (tag < 0)
		snprintf(out, n, "any tag");
	else
		snprintf(out, n, "tag %d", tag);
}

/* A peer as the dispatcher knows it: its world rank. */
static void
waitrep_peer(const struct mpiv_request *r, char *out, size_t n)
{
	int w;

	if (r->peer == MPI_ANY_SOURCE) {
		waitrep_who(-1, out, n);
		return;
	}
	w = r->comm != NULL ? mpiv_comm_world_rank(r->comm, r->peer) : -1;
	if (w < 0)
		snprintf(out, n, "rank %d of its communicator", r->peer);
	else
		waitrep_who(w, out, n);
}

/* What waiting for request r means, in words. */
static void
waitrep_req(const struct mpiv_request *r, char *out, size_t n)
{
	char comm[MPI_MAX_OBJECT_NAME + 32], peer[48], tag[24];
	const char *coll;

	if (r == NULL || r->magic != MPIV_REQ_MAGIC) {
		snprintf(out, n, "a request");
		return;
	}
	waitrep_comm(r->comm, comm, sizeof(comm));
	if (r->kind == MPIV_REQ_COLL) {
		snprintf(out, n, "for a non-blocking collective on %s to end",
		    comm);
		return;
	}
	if (r->kind == MPIV_REQ_PROBE) {
		/* as posted: a world rank and a tag, -1 for any */
		waitrep_who(r->post_src, peer, sizeof(peer));
		waitrep_tag(r->post_tag, tag, sizeof(tag));
		snprintf(out, n, "in a probe for a message from %s (%s, %s)",
		    peer, tag, comm);
		return;
	}
	waitrep_peer(r, peer, sizeof(peer));
	if (r->comm != NULL && r->comm->of_window) {
		snprintf(out, n, "in a one-sided synchronization "
		    "(MPI_Win_fence, MPI_Win_complete or MPI_Win_wait), for %s",
		    peer);
		return;
	}
	waitrep_tag(r->tag, tag, sizeof(tag));
	if (r->comm != NULL && r->comm->remote == NULL &&
	    r->context == MPIV_COLL_CONTEXT(r->comm) &&
	    (coll = mpiv_coll_tag_name(r->tag)) != NULL) {
		snprintf(out, n, "in %s on %s, for %s %s", coll, comm,
		    peer, r->kind == MPIV_REQ_SEND ? "to take its part" :
		    "to send its part");
		return;
	}
	if (r->comm != NULL && r->context != r->comm->context) {
		snprintf(out, n, "in a collective on %s, for %s", comm, peer);
		return;
	}
	switch (r->kind) {
	case MPIV_REQ_SEND:
		snprintf(out, n, "for %s to receive its message (%s, %s)",
		    peer, tag, comm);
		return;
	default:
		snprintf(out, n, "for a message from %s (%s, %s)", peer, tag,
		    comm);
		return;
	}
}

/* The first of reqs[0..n) not complete yet, and how many are not. */
static const struct mpiv_request *
waitrep_first(struct mpiv_request *const *reqs, int n, int *active)
{
	const struct mpiv_request *first = NULL;

	*active = 0;
	for (int i = 0; i < n; i++) {
		const struct mpiv_request *r = reqs[i];

		if (r == NULL || r->magic != MPIV_REQ_MAGIC || !r->active ||
		    r->complete)
			continue;
		if (first == NULL)
			first = r;
		(*active)++;
	}
	return first;
}

/* A run of polls, in words (what follows "rank R waits "). */
static void
waitrep_poll_what(char *out, size_t n)
{
	char req[256], comm[MPI_MAX_OBJECT_NAME + 32], peer[32], tag[24];
	const struct mpiv_request *first;
	int active;

	if (waitrep_pollctx.call == NULL) {
		snprintf(out, n, "polling (MPI_Test, MPI_Iprobe, ...) and "
		    "finds nothing");
		return;
	}
	if (waitrep_pollctx.probe) {
		waitrep_comm(waitrep_pollctx.comm, comm, sizeof(comm));
		waitrep_who(waitrep_pollctx.src, peer, sizeof(peer));
		waitrep_tag(waitrep_pollctx.tag, tag, sizeof(tag));
		snprintf(out, n, "for a message from %s (%s, %s), polling "
		    "with %s", peer, tag, comm, waitrep_pollctx.call);
		return;
	}
	first = waitrep_first(waitrep_pollctx.reqs, waitrep_pollctx.n,
	    &active);
	if (first == NULL) {
		snprintf(out, n, "polling with %s", waitrep_pollctx.call);
		return;
	}
	waitrep_req(first, req, sizeof(req));
	if (active > 1)
		snprintf(out, n, "for one of %d requests, the first %s, polling "
		    "with %s", active, req, waitrep_pollctx.call);
	else
		snprintf(out, n, "%s, polling with %s", req,
		    waitrep_pollctx.call);
}

/* The innermost wait, in words: what follows "rank R waits ". A wait
   for one request inside a named wait over several (MPI_Waitall) is
   told as the named one. */
static void
waitrep_what(char *out, size_t n)
{
	const struct waitrep_frame *f;
	const struct mpiv_request *first;
	char req[256];
	int active, top;

	if (waitrep_depth == 0) {
		waitrep_poll_what(out, n);
		return;
	}
	top = (waitrep_depth > WAITREP_DEPTH ? WAITREP_DEPTH :
	    waitrep_depth) - 1;
	f = &waitrep_stack[top];
	if (f->call == NULL && top > 0 && waitrep_stack[top - 1].call != NULL &&
	    waitrep_stack[top - 1].n > 1)
		f = &waitrep_stack[top - 1];
	first = waitrep_first(f->reqs, f->n, &active);
	if (first == NULL) {
		snprintf(out, n, "in %s", f->call != NULL ? f->call :
		    "an MPI call");
		return;
	}
	waitrep_req(first, req, sizeof(req));
	if (f->call == NULL)
		snprintf(out, n, "%s", req);
	else if (active > 1)
		snprintf(out, n, "in %s over %d requests, the first %s",
		    f->call, active, req);
	else
		snprintf(out, n, "in %s %s", f->call, req);
}

/* Sends where the current wait stands (or that it is over). */
static void
waitrep_send(long now, bool over)
{
	Mpiv__WaitState ws = MPIV__WAIT_STATE__INIT;
	char what[400];
	long since = waitrep_depth > 0 ? waitrep_start : waitrep_poll_start;

	if (mpiv_tp_ncms() <= 0)
		return;
	if (!over) {
		waitrep_what(what, sizeof(what));
		ws.what = what;
	}
	ws.wait_no = waitrep_no;
	ws.over = over;
	ws.moved = waitrep_moved;
	ws.waited_s = since >= 0 && now > since ? (now - since) / 1000. : 0.;
	/* An error stays in the transport: the caller's next step sees it. */
	(void)mpiv_tp_send(mpiv_tp_home(mpiv_state.world_rank),
	    MPIV__MSG_TYPE__MSG_WAIT_STATE, &ws.base, NULL, 0, NULL, NULL);
}

/* A wait (or a run of polls) that began at since: told when due. */
static int
waitrep_due(long since, long now)
{
	if (since < 0)
		return -1;
	if (now < since) {
		/* the clock of another machine (a restored checkpoint):
		   the wait counts from here */
		if (waitrep_depth > 0)
			waitrep_start = now;
		else
			waitrep_poll_start = now;
		since = now;
	}
	if (!waitrep_told) {
		if (now - since < WAITREP_FIRST_MS)
			return (int)(WAITREP_FIRST_MS - (now - since));
		waitrep_told = true;
		waitrep_no++;
		waitrep_next = now;
	}
	if (now >= waitrep_next) {
		waitrep_send(now, false);
		waitrep_next = now + WAITREP_EVERY_MS;
	}
	return (int)(waitrep_next - now);
}

void
mpiv_waitrep_begin(const char *call, struct mpiv_request *const *reqs, int n)
{
	if (waitrep_depth < WAITREP_DEPTH) {
		waitrep_stack[waitrep_depth].call = call;
		waitrep_stack[waitrep_depth].reqs = reqs;
		waitrep_stack[waitrep_depth].n = reqs != NULL ? n : 0;
	}
	if (waitrep_depth++ == 0) {
		/* a run of polls that turns into a blocking call goes on
		   as this wait */
		if (waitrep_poll_start < 0 || !waitrep_told) {
			waitrep_start = mono_ms();
			waitrep_told = false;
		} else {
			waitrep_start = waitrep_poll_start;
		}
		waitrep_poll_start = -1;
	}
}

void
mpiv_waitrep_end(void)
{
	if (waitrep_depth <= 0 || --waitrep_depth > 0)
		return;
	if (waitrep_told)
		waitrep_send(mono_ms(), true);
	waitrep_told = false;
	waitrep_start = -1;
}

int
mpiv_waitrep_tick(void)
{
	if (waitrep_depth <= 0)
		return -1;
	return waitrep_due(waitrep_start, mono_ms());
}

void
mpiv_waitrep_polling(const char *call, struct mpiv_request *const *reqs,
    int n)
{
	waitrep_pollctx.call = call;
	waitrep_pollctx.reqs = reqs;
	waitrep_pollctx.n = reqs != NULL ? n : 0;
	waitrep_pollctx.probe = false;
}

void
mpiv_waitrep_probing(int source, int tag, MPI_Comm comm)
{
	waitrep_pollctx.call = "MPI_Iprobe";
	waitrep_pollctx.reqs = NULL;
	waitrep_pollctx.n = 0;
	waitrep_pollctx.probe = true;
	waitrep_pollctx.src = source == MPI_ANY_SOURCE ? -1 :
	    mpiv_comm_world_rank(comm, source);
	waitrep_pollctx.tag = tag;
	waitrep_pollctx.comm = comm;
}

void
mpiv_waitrep_polled(void)
{
	waitrep_pollctx.call = NULL;
}

void
mpiv_waitrep_poll(long run_start_us)
{
	long now;

	if (waitrep_depth > 0 || (run_start_us < 0 && waitrep_poll_start < 0))
		return;
	now = mono_ms();
	if (waitrep_poll_start >= 0 && run_start_us != waitrep_poll_run) {
		/* the run ended: a call found something (-1), or another
		   began because the program computed between two calls
		   (pollback.c) */
		if (waitrep_told)
			waitrep_send(now, true);
		waitrep_poll_start = -1;
		waitrep_told = false;
	}
	if (run_start_us < 0)
		return;
	if (waitrep_poll_start < 0) {
		waitrep_poll_start = run_start_us / 1000;
		waitrep_poll_run = run_start_us;
		waitrep_told = false;
	}
	(void)waitrep_due(waitrep_poll_start, now);
}
