/*
 * nbc.c: running the schedules of non-blocking collectives
 * (docs/COLLECTIVES.md, "Non-blocking collectives"). coll_nbc.c builds
 * a schedule per call; here it becomes a request of kind MPIV_REQ_COLL
 * and takes its steps.
 *
 * A step ends the current round (every send and receive of it
 * completed) and begins the next: its local reductions and copies, then
 * its sends and receives, posted on the communicator's hidden context
 * with the collective's own tag. Rounds without sends or receives are
 * passed in the same step. The last step completes the request.
 *
 * When a round completes depends on timing, and a step posts sends and
 * receives, whose sequence and post numbers a re-execution must give
 * again in the same order relative to the program's own operations. So
 * steps are taken only at advance points (any call that waits or polls,
 * and the start of every operation of the program's own, mpiv_nbc_tick),
 * and each batch of steps taken live is an outcome of its own
 * (MPIV_ND_NBC) recording the position (how many of the program's own
 * operations had started) and the serials of the schedules stepped;
 * but for the steps taken while the program waits for the one active
 * schedule's request, which the program alone determines and which go
 * unlogged (nbc_determined). A
 * re-execution takes exactly the logged steps, at the logged position
 * and in the logged order, waiting (in poll) for their rounds to
 * complete; between them it takes none. After the log, it still takes
 * none until it has issued again what others hold of its failed
 * incarnation (mpiv_proto->replaying): that incarnation took no
 * unlogged step before those frames. No checkpoint is taken inside a
 * step. The Test family's answers about these requests are logged like
 * any other (request.c).
 *
 * The same advance points serve the windows' passive-target messages
 * (win_passive.c), logged as MPIV_ND_RMA outcomes in the same sequence.
 * Their place is finer than a position: the program may read its window
 * between two calls that start no operation, so a service is logged
 * with the count of the program's calls that may serve (rma_seg: its
 * operations, and its calls that wait or poll, mpiv_nbc_call) and is
 * replayed in that call: at its entry, after the operation it starts
 * has left (mpiv_nbc_started), or wherever it waits; never in the part
 * of a tick before the position moves, which belongs to the call
 * before.
 */
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "transport.h"

enum nbc_op_kind { NBC_SEND, NBC_RECV, NBC_REDUCE, NBC_COPY, NBC_ADOPT,
	NBC_MCAST };

struct nbc_op {
	enum nbc_op_kind kind;
	int round;
	const void *sbuf;	/* send; reduce: in; copy: from */
	void *rbuf;		/* recv; reduce: inout; copy: to */
	int scount, rcount;	/* send/reduce use scount, recv rcount */
	MPI_Datatype sdt, rdt;
	int peer;
	int *peers, npeers;	/* multicast: the receivers */
	MPI_Op op;
	MPI_Request sub;	/* adopt: the request, until posted */
};

struct mpiv_nbc {
	struct mpiv_request *req;	/* the user's request, once started */
	uint32_t serial;		/* this rank's count of schedules */
	MPI_Comm comm;
	uint32_t context;
	int tag;
	struct nbc_op *ops;
	int nops, capops;
	int nrounds;
	int round;			/* posted; -1 before the first step */
	MPI_Request *subs;		/* the current round's operations */
	int nsubs, capsubs;
	void **temps;
	int ntemps, captemps;
	MPI_Status result;		/* the request's status when it ends */
	bool p2p;			/* MPI_Imrecv's: may be freed, cancel
					   is a no-op (the message is matched) */
	struct mpiv_nbc *prev, *next;	/* active list, in start order */
};

int mpiv_nbc_active;
struct mpiv_request *mpiv_nbc_waited;

static struct mpiv_nbc *nbc_head, *nbc_tail;
static uint32_t nbc_serial;
static uint64_t nbc_pos;	/* the program's own operations started */
static bool nbc_internal;	/* posting a step: not the program's own */
static int nbc_nsched;		/* schedules among mpiv_nbc_active */
/*
 * The program's calls that may serve passive-target messages, counted:
 * each of its own operations (a tick) and each call that waits or polls
 * without starting one (mpiv_nbc_call). A service is logged with the
 * call it happened in and replayed in that call, never at the end of the
 * one before, where the program may look at its window between the two.
 */
static uint64_t rma_seg;

/* ---------------- building ---------------- */

struct mpiv_nbc *
mpiv_nbc_new(MPI_Comm comm)
{
	struct mpiv_nbc *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->comm = comm;
	s->context = MPIV_NBC_CONTEXT(comm);
	s->round = -1;
	mpiv_req_empty_status(&s->result);
	return s;
}

static struct nbc_op *
nbc_add(struct mpiv_nbc *s, enum nbc_op_kind kind, int round)
{
	struct nbc_op *o;

	if (s->nops == s->capops) {
		int cap = s->capops ? 2 * s->capops : 8;

		if ((o = realloc(s->ops, (size_t)cap * sizeof(*o))) == NULL)
			return NULL;
		s->ops = o;
		s->capops = cap;
	}
	o = &s->ops[s->nops++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->round = round;
	if (round + 1 > s->nrounds)
		s->nrounds = round + 1;
	return o;
}

int
mpiv_nbc_send(struct mpiv_nbc *s, int round, const void *buf, int count,
    MPI_Datatype dt, int peer)
{
	struct nbc_op *o = nbc_add(s, NBC_SEND, round);

	if (o == NULL)
		return MPI_ERR_NO_MEM;
	o->sbuf = buf;
	o->scount = count;
	o->sdt = dt;
	o->peer = peer;
	mpiv_dt_retain(dt);
	return MPI_SUCCESS;
}

int
mpiv_nbc_mcast(struct mpiv_nbc *s, int round, const void *buf, int count,
    MPI_Datatype dt, const int *peers, int n)
{
	struct nbc_op *o;
	int *copy, rc = MPI_SUCCESS;

	if (n < 2 || !mpiv_can_mcast()) {
		for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
			rc = mpiv_nbc_send(s, round, buf, count, dt, peers[i]);
		return rc;
	}
	if ((copy = malloc((size_t)n * sizeof(*copy))) == NULL)
		return MPI_ERR_NO_MEM;
	memcpy(copy, peers, (size_t)n * sizeof(*copy));
	/* a send, then made the multicast to them all */
	if ((rc = mpiv_nbc_send(s, round, buf, count, dt, MPI_PROC_NULL)) !=
	    MPI_SUCCESS) {
		free(copy);
		return rc;
	}
	o = &s->ops[s->nops - 1];
	o->kind = NBC_MCAST;
	o->peers = copy;
	o->npeers = n;
	return MPI_SUCCESS;
}

int
mpiv_nbc_recv(struct mpiv_nbc *s, int round, void *buf, int count,
    MPI_Datatype dt, int peer)
{
	struct nbc_op *o = nbc_add(s, NBC_RECV, round);

	if (o == NULL)
		return MPI_ERR_NO_MEM;
	o->rbuf = buf;
	o->rcount = count;
	o->rdt = dt;
	o->peer = peer;
	mpiv_dt_retain(dt);
	return MPI_SUCCESS;
}

int
mpiv_nbc_reduce(struct mpiv_nbc *s, int round, const void *in, void *inout,
    int count, MPI_Datatype dt, MPI_Op op)
{
	struct nbc_op *o = nbc_add(s, NBC_REDUCE, round);

	if (o == NULL)
		return MPI_ERR_NO_MEM;
	o->sbuf = in;
	o->rbuf = inout;
	o->scount = count;
	o->sdt = dt;
	o->op = op;
	mpiv_dt_retain(dt);
	return MPI_SUCCESS;
}

int
mpiv_nbc_copy(struct mpiv_nbc *s, int round, const void *sbuf, int scount,
    MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt)
{
	struct nbc_op *o = nbc_add(s, NBC_COPY, round);

	if (o == NULL)
		return MPI_ERR_NO_MEM;
	o->sbuf = sbuf;
	o->scount = scount;
	o->sdt = sdt;
	o->rbuf = rbuf;
	o->rcount = rcount;
	o->rdt = rdt;
	mpiv_dt_retain(sdt);
	mpiv_dt_retain(rdt);
	return MPI_SUCCESS;
}

void *
mpiv_nbc_temp(struct mpiv_nbc *s, int count, MPI_Datatype dt)
{
	MPI_Aint ext = dt->extent, lo, span;
	void *raw;

	if (count <= 0)
		return NULL;
	lo = dt->true_lb + (ext < 0 ? (MPI_Aint)(count - 1) * ext : 0);
	if (__builtin_mul_overflow((MPI_Aint)(count - 1), ext < 0 ? -ext : ext,
	    &span) || __builtin_add_overflow(span, dt->true_extent, &span) ||
	    span < 0)
		return NULL;
	if ((raw = calloc(1, (size_t)span + 1)) == NULL)
		return NULL;
	if (mpiv_nbc_own(s, raw) != MPI_SUCCESS) {
		free(raw);
		return NULL;
	}
	return (void *)((uintptr_t)raw - (uintptr_t)lo);
}

int
mpiv_nbc_own(struct mpiv_nbc *s, void *raw)
{
	void **t;

	if (s->ntemps == s->captemps) {
		int cap = s->captemps ? 2 * s->captemps : 4;

		if ((t = realloc(s->temps, (size_t)cap * sizeof(*t))) == NULL)
			return MPI_ERR_NO_MEM;
		s->temps = t;
		s->captemps = cap;
	}
	s->temps[s->ntemps++] = raw;
	return MPI_SUCCESS;
}

int
mpiv_nbc_adopt(struct mpiv_nbc *s, int round, MPI_Request r)
{
	struct nbc_op *o = nbc_add(s, NBC_ADOPT, round);

	if (o == NULL)
		return MPI_ERR_NO_MEM;
	o->sub = r;
	return MPI_SUCCESS;
}

void
mpiv_nbc_mark_p2p(struct mpiv_nbc *s)
{
	s->p2p = true;
}

bool
mpiv_nbc_is_collective(const struct mpiv_request *r)
{
	return r->kind == MPIV_REQ_COLL && !r->nbc_p2p;
}

void
mpiv_nbc_set_status(struct mpiv_nbc *s, const MPI_Status *st)
{
	s->result = *st;
}

/* Frees the schedule (its sub-requests must be over or never posted). */
static void
nbc_free(struct mpiv_nbc *s)
{
	for (int i = 0; i < s->nsubs; i++)
		if (s->subs[i] != NULL)
			mpiv_req_release(s->subs[i]);
	for (int i = 0; i < s->nops; i++) {
		struct nbc_op *o = &s->ops[i];

		if (o->sdt != NULL)
			mpiv_dt_release(o->sdt);
		if (o->rdt != NULL)
			mpiv_dt_release(o->rdt);
		if (o->sub != NULL)
			mpiv_req_release(o->sub);
		free(o->peers);
	}
	for (int i = 0; i < s->ntemps; i++)
		free(s->temps[i]);
	free(s->temps);
	free(s->subs);
	free(s->ops);
	free(s);
}

void
mpiv_nbc_discard(struct mpiv_nbc *s)
{
	if (s != NULL)
		nbc_free(s);
}

/* ---------------- stepping ---------------- */

static void
nbc_unlink(struct mpiv_nbc *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		nbc_head = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	else
		nbc_tail = s->prev;
	s->prev = s->next = NULL;
	mpiv_nbc_active--;
	nbc_nsched--;
}

/* Ends the schedule: the request completes with err. */
static void
nbc_finish(struct mpiv_nbc *s, int err)
{
	struct mpiv_request *r = s->req;

	nbc_unlink(s);
	r->nbc = NULL;
	r->status = s->result;
	if (err != MPI_SUCCESS)
		r->status.MPI_ERROR = err;
	if (s->comm->free_pending)
		r->comm = MPI_COMM_WORLD;	/* errors now go there */
	mpiv_comm_nbc_done(s->comm);
	nbc_free(s);
	mpiv_req_complete(r);
}

/* True when every operation of the posted round completed. */
static bool
nbc_round_done(const struct mpiv_nbc *s)
{
	for (int i = 0; i < s->nsubs; i++)
		if (!s->subs[i]->complete)
			return false;
	return true;
}

/* Posts round k's sends and receives. MPI code. */
static int
nbc_post(struct mpiv_nbc *s, int k)
{
	int rc = MPI_SUCCESS;

	for (int i = 0; i < s->nops && rc == MPI_SUCCESS; i++) {
		struct nbc_op *o = &s->ops[i];
		MPI_Request *t;
		bool was;

		if (o->round != k || (o->kind != NBC_SEND &&
		    o->kind != NBC_RECV && o->kind != NBC_ADOPT &&
		    o->kind != NBC_MCAST))
			continue;
		if (s->nsubs == s->capsubs) {
			int cap = s->capsubs ? 2 * s->capsubs : 8;

			if ((t = realloc(s->subs, (size_t)cap *
			    sizeof(*t))) == NULL)
				return MPI_ERR_NO_MEM;
			s->subs = t;
			s->capsubs = cap;
		}
		if (o->kind == NBC_ADOPT) {
			s->subs[s->nsubs++] = o->sub;
			o->sub = NULL;
			continue;
		}
		was = nbc_internal;
		nbc_internal = true;
		if (o->kind == NBC_SEND)
			rc = mpiv_isend(o->sbuf, o->scount, o->sdt, o->peer,
			    s->tag, s->comm, s->context, MPIV_SEND_STANDARD,
			    &s->subs[s->nsubs]);
		else if (o->kind == NBC_MCAST)
			rc = mpiv_imcast(o->sbuf, o->scount, o->sdt, o->peers,
			    o->npeers, s->tag, s->comm, s->context,
			    &s->subs[s->nsubs]);
		else
			rc = mpiv_irecv(o->rbuf, o->rcount, o->rdt, o->peer,
			    s->tag, s->comm, s->context, &s->subs[s->nsubs]);
		nbc_internal = was;
		if (rc == MPI_SUCCESS)
			s->nsubs++;
	}
	return rc;
}

/* Round k's local steps, in the order they were added. MPI code. */
static int
nbc_local(struct mpiv_nbc *s, int k)
{
	int rc = MPI_SUCCESS;

	for (int i = 0; i < s->nops && rc == MPI_SUCCESS; i++) {
		struct nbc_op *o = &s->ops[i];

		if (o->round != k)
			continue;
		if (o->kind == NBC_REDUCE)
			rc = mpiv_op_apply(o->op, o->sbuf, o->rbuf, o->scount,
			    o->sdt);
		else if (o->kind == NBC_COPY)
			rc = mpiv_coll_copy(o->sbuf, o->scount, o->sdt,
			    o->rbuf, o->rcount, o->rdt);
	}
	return rc;
}

/*
 * One step: the posted round (complete) is over; the next rounds begin
 * until one has something in flight, or the schedule ends. MPI code of
 * the library itself (a failed operation ends the request with its
 * error instead).
 */
static int
nbc_step(struct mpiv_nbc *s)
{
	int err = MPI_SUCCESS, rc;

	for (int i = 0; i < s->nsubs; i++) {
		if (err == MPI_SUCCESS)
			err = s->subs[i]->status.MPI_ERROR;
		mpiv_req_release(s->subs[i]);
	}
	s->nsubs = 0;
	while (err == MPI_SUCCESS && ++s->round < s->nrounds) {
		if ((rc = nbc_local(s, s->round)) != MPI_SUCCESS ||
		    (rc = nbc_post(s, s->round)) != MPI_SUCCESS) {
			err = rc;
			break;
		}
		if (s->nsubs > 0)
			return MPI_SUCCESS;
	}
	if (err != MPI_SUCCESS) {
		/* what is still in flight is waited for, then dropped */
		if (s->nsubs > 0)
			(void)mpiv_waitall(s->nsubs, s->subs, NULL);
		s->nsubs = 0;
	}
	nbc_finish(s, err);
	return MPI_SUCCESS;
}

int
mpiv_nbc_start(struct mpiv_nbc *s, MPI_Request *req)
{
	struct mpiv_request *r;
	int rc;

	/* a deterministic point, like any operation the program starts */
	if ((rc = mpiv_nbc_tick()) != MPI_SUCCESS ||
	    (r = mpiv_req_alloc(MPIV_REQ_COLL)) == NULL) {
		nbc_free(s);
		return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
	}
	s->tag = s->comm->nbc_seq;
	s->comm->nbc_seq = s->comm->nbc_seq == MPI_TAG_UB_VALUE ? 0 :
	    s->comm->nbc_seq + 1;
	s->serial = ++nbc_serial;
	s->comm->nbc_busy++;	/* MPI_Comm_free waits for it */
	s->req = r;
	r->nbc = s;
	r->nbc_p2p = s->p2p;
	r->comm = s->comm;
	r->active = true;
	r->peer = MPI_PROC_NULL;
	s->prev = nbc_tail;
	if (nbc_tail != NULL)
		nbc_tail->next = s;
	else
		nbc_head = s;
	nbc_tail = s;
	mpiv_nbc_active++;
	nbc_nsched++;
	*req = r;
	/* round 0 begins now (deterministic: nothing to wait for) */
	return nbc_step(s);
}

void
mpiv_nbc_drop(struct mpiv_request *r)
{
	struct mpiv_nbc *s = r->nbc;

	if (s == NULL)
		return;
	r->nbc = NULL;
	nbc_unlink(s);
	mpiv_comm_nbc_done(s->comm);
	nbc_free(s);
}

/* ---------------- advance points ---------------- */

static struct mpiv_nbc *
nbc_find(uint32_t serial)
{
	for (struct mpiv_nbc *s = nbc_head; s != NULL; s = s->next)
		if (s->serial == serial)
			return s;
	return NULL;
}

/* Takes the logged steps at the head of the log (at our position):
   waits for each round to complete, then steps, in the logged order.
   MPI code. */
static int
nbc_replay(void)
{
	const Mpiv__NdOutcome *o;
	int rc;

	if ((rc = mpiv_ndlog_next(MPIV_ND_NBC, &o)) < 0)
		return MPI_ERR_INTERN;
	if (rc == 0)
		return MPI_SUCCESS;	/* cannot be: peeked */
	for (size_t j = 0; j < o->n_indices; j++) {
		struct mpiv_nbc *s = nbc_find((uint32_t)o->indices[j]);

		if (s == NULL) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu: logged a step of non-blocking "
			    "collective #%u, which is not active",
			    (unsigned long long)mpiv_ndlog_current(),
			    (unsigned)o->indices[j]);
			return MPI_ERR_INTERN;
		}
		while (!nbc_round_done(s))
			if ((rc = mpiv_tp_progress(-1)) != MPI_SUCCESS)
				return rc;
		if ((rc = nbc_step(s)) != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* Live: one batch (one outcome): steps every schedule whose round
   completed. *stepped: whether there was any. MPI code. */
static int
nbc_live(bool *stepped)
{
	int *ser, n = 0, rc = MPI_SUCCESS;

	*stepped = false;
	for (struct mpiv_nbc *s = nbc_head; s != NULL; s = s->next)
		n += nbc_round_done(s);
	if (n == 0)
		return MPI_SUCCESS;
	if ((ser = malloc((size_t)n * sizeof(*ser))) == NULL)
		return MPI_ERR_NO_MEM;
	n = 0;
	for (struct mpiv_nbc *s = nbc_head; s != NULL; s = s->next)
		if (nbc_round_done(s))
			ser[n++] = (int)s->serial;
	/* recorded before any frame of the steps leaves */
	rc = mpiv_ndlog_record_at(MPIV_ND_NBC, nbc_pos, n, ser);
	if (rc == MPI_SUCCESS)
		mpiv_fault_point("nbc");
	for (int j = 0; j < n && rc == MPI_SUCCESS; j++)
		rc = nbc_step(nbc_find((uint32_t)ser[j]));
	free(ser);
	*stepped = true;
	return rc;
}

/*
 * Whether the steps to take now are determined by the program alone:
 * it waits, in a call that returns only once the request completes
 * (mpiv_req_wait_complete), for the request of the one active schedule.
 * Then every step left is taken inside that wait, at the same position,
 * in the schedule's round order, and nothing else posts meanwhile; a
 * re-execution reaches the same wait with the same schedule in the
 * same round (what came before is logged) and takes the same steps. So
 * they are not logged, the rank's next send waits for no CM, and a
 * re-execution takes them even before it has issued again what others
 * hold (they issue part of it). Not while a step logged here, or
 * earlier (a divergence, said below), is still to be replayed.
 */
static bool
nbc_determined(const Mpiv__NdOutcome *o)
{
	return mpiv_nbc_active == 1 && nbc_head != NULL &&
	    nbc_head->req != NULL && nbc_head->req == mpiv_nbc_waited &&
	    (o == NULL || o->kind != MPIV_ND_NBC || o->post_no > nbc_pos + 1);
}

/* What an advance point may do: everything; not the windows' services
   (a tick, before its position moves: see rma_seg); only them. */
enum nbc_mode { NBC_ALL, NBC_NO_RMA, NBC_RMA_ONLY };

/* One RMA outcome at the head of the log: whether it is due here
   (1), later (0), or behind us (-1, a divergence, said). */
static int
nbc_rma_due(const Mpiv__NdOutcome *o, enum nbc_mode mode)
{
	if (mode == NBC_NO_RMA || o->post_no > rma_seg + 1)
		return 0;
	if (o->post_no < rma_seg + 1) {
		mpiv_tp_set_error("replay diverged at non-deterministic call "
		    "%llu: passive-target services logged in call %llu, now "
		    "in call %llu", (unsigned long long)o->nd_no,
		    (unsigned long long)o->post_no - 1,
		    (unsigned long long)rma_seg);
		return -1;
	}
	return 1;
}

static int
nbc_progress(enum nbc_mode mode)
{
	const Mpiv__NdOutcome *o;
	int rc, due;

	if (mpiv_nbc_active == 0 || nbc_internal)
		return MPI_SUCCESS;
	nbc_internal = true;	/* no advance point inside a step */
	/* windows only serve what came already */
	rc = nbc_nsched > 0 && mode != NBC_RMA_ONLY ? mpiv_tp_progress(0) :
	    MPI_SUCCESS;
	while (rc == MPI_SUCCESS) {
		o = mpiv_ndlog_peek();
		if (mode != NBC_RMA_ONLY && nbc_determined(o)) {
			if (!nbc_round_done(nbc_head))
				break;
			if ((rc = nbc_step(nbc_head)) == MPI_SUCCESS)
				mpiv_fault_point("nbc-wait");
			continue;
		}
		if (o == NULL) {
			bool stepped = false;

			/* what the failed incarnation did after its last
			   logged step, others hold: none is taken until this
			   run has done it again */
			if (mpiv_proto->replaying != NULL &&
			    mpiv_proto->replaying())
				break;
			if (mode != NBC_RMA_ONLY &&
			    (rc = nbc_live(&stepped)) != MPI_SUCCESS)
				break;
			if (!stepped && mode != NBC_NO_RMA &&
			    (rc = mpiv_win_serve_live(rma_seg, &stepped)) !=
			    MPI_SUCCESS)
				break;
			if (!stepped)
				break;
			continue;
		}
		/* replaying: only the steps logged here and now */
		rc = MPI_SUCCESS;
		if (o->kind == MPIV_ND_RMA) {
			if ((due = nbc_rma_due(o, mode)) <= 0) {
				rc = due < 0 ? MPI_ERR_INTERN : MPI_SUCCESS;
				break;
			}
			rc = mpiv_win_serve_replay();
			continue;
		}
		if (mode == NBC_RMA_ONLY || o->kind != MPIV_ND_NBC ||
		    o->post_no > nbc_pos + 1)
			break;
		if (o->post_no < nbc_pos + 1) {
			mpiv_tp_set_error("replay diverged at non-deterministic "
			    "call %llu: non-blocking collectives' steps logged "
			    "at position %llu, now at %llu",
			    (unsigned long long)o->nd_no,
			    (unsigned long long)o->post_no - 1,
			    (unsigned long long)nbc_pos);
			rc = MPI_ERR_INTERN;
			break;
		}
		rc = nbc_replay();
	}
	nbc_internal = false;
	return rc;
}

int
mpiv_nbc_progress(void)
{
	return nbc_progress(NBC_ALL);
}

int
mpiv_nbc_call(void)
{
	if (nbc_internal)
		return MPI_SUCCESS;
	rma_seg++;
	return mpiv_nbc_active > 0 ? nbc_progress(NBC_ALL) : MPI_SUCCESS;
}

void
mpiv_nbc_started(void)
{
	int rc;

	if (nbc_internal || mpiv_nbc_active == nbc_nsched)
		return;
	/* the operation is started whatever happens here: a failure ends
	   the rank through the transport's error, at its next wait */
	if ((rc = nbc_progress(NBC_RMA_ONLY)) != MPI_SUCCESS &&
	    mpiv_tp_error() == NULL)
		mpiv_tp_set_error("a passive-target service failed (MPI error "
		    "class %d)", rc);
}

void
mpiv_nbc_where(uint64_t *pos, uint64_t *seg)
{
	*pos = nbc_pos;
	*seg = rma_seg;
}

void
mpiv_nbc_bg(int delta)
{
	mpiv_nbc_active += delta;
}

bool
mpiv_nbc_enter(void)
{
	bool was = nbc_internal;

	nbc_internal = true;
	return was;
}

void
mpiv_nbc_leave(bool was)
{
	nbc_internal = was;
}

bool
mpiv_nbc_stepping(void)
{
	return nbc_internal;
}

int
mpiv_nbc_tick(void)
{
	int rc;

	if (nbc_internal)
		return MPI_SUCCESS;
	if (mpiv_nbc_active > 0 && (rc = nbc_progress(NBC_NO_RMA)) !=
	    MPI_SUCCESS)
		return rc;
	nbc_pos++;
	rma_seg++;
	return MPI_SUCCESS;
}
