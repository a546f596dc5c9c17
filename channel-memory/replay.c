/*
 * replay.c: a restarted rank re-executes and re-posts its receives,
 * probes and cancels with the same post numbers; its home CM answers each
 * post that has a log entry from the log (same source, tag, sequence,
 * event and payload as originally), releasing the answers strictly in
 * event order. A post whose envelope differs from the logged one means
 * the re-execution diverged: Error, close. Posts without an entry wait
 * until the last logged event has been answered, then match live: the
 * original run never had them answered before any logged event, so this
 * cannot block. The end of the log is reported to the dispatcher
 * (ReplayDone). A newer incarnation restarts the replay from event 1,
 * or, restored from a checkpoint, from the event after its resume_event
 * (earlier entries may be freed already and are never needed).
 *
 * Streaming (the rank's Hello.replay_window > 0): the CM does not wait
 * for a post to answer a logged delivery. It pushes the deliveries in
 * event order ahead of the posts (Deliver.ahead_post names the post),
 * up to window of them (or REPLAY_AHEAD_BYTES of payload) not yet
 * posted for; each post of one of them slides the window. A probe or
 * cancel entry, or a payload still to be re-sent, stops the stream until
 * it is answered as above. The rank holds what comes early and completes
 * the receive at its post, so a re-execution no longer waits one round
 * trip per receive. Posts without an entry still wait until every logged
 * event has been answered and every pushed one posted for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

static void
replay_free_list(struct replay_wait *w)
{
	struct replay_wait *next;

	for (; w != NULL; w = next) {
		next = w->next;
		free(w);
	}
}

/* Forgets any replay in progress (its connection is gone or replaced). */
void
replay_reset(struct rank_state *rs)
{
	struct replay *rp = &rs->rp;

	free(rp->index);
	free(rp->byev);
	replay_free_list(rp->parked);
	replay_free_list(rp->deferred);
	memset(rp, 0, sizeof(*rp));
}

uint64_t
replay_log_events(const struct job *j, const struct rank_state *rs)
{
	if (j->relay_only || !rs->home || rs->next_event <= rs->resume_event)
		return 0;
	return rs->next_event - rs->resume_event;
}

/* The last event the connected incarnation has been sent. */
uint64_t
replay_delivered(const struct rank_state *rs)
{
	return rs->rp.active ? rs->rp.next - 1 : rs->next_event;
}

/*
 * Whether incarnation inc of rank may connect given the state of its
 * log; false with a reason for the refusing HelloReply.
 */
bool
replay_check(const struct job *j, int32_t rank, uint32_t inc, char *why,
    size_t cap)
{
	const struct rank_state *rs = &j->ranks[rank];
	const struct logent *e;

	if (j->relay_only && inc > 1) {
		snprintf(why, cap, "job %.64s is relay-only (no log): restarting "
		    "rank %d (incarnation %u) is not supported", j->id, rank,
		    inc);
		return false;
	}
	if (!rs->home || j->relay_only)
		return true;
	if (rs->log_broken) {
		snprintf(why, cap, "the log of rank %d is incomplete (the "
		    "channel memory ran out of memory): it cannot be replayed",
		    rank);
		return false;
	}
	for (e = rs->log_head; e != NULL; e = e->next) {
		if (e->post_no == 0) {
			snprintf(why, cap, "the log of rank %d has posts without "
			    "post numbers (rank library too old to replay)",
			    rank);
			return false;
		}
	}
	return true;
}

/* ReplayDone on the dispatcher link, and the info line. */
static void
replay_report(struct session *s, struct rank_state *rs)
{
	Mpiv__ReplayDone rd = MPIV__REPLAY_DONE__INIT;
	struct cm *cm = s->cm;
	double secs = ev_time() - rs->rp.t0;

	rd.job_id = s->job->id;
	rd.rank = s->rank;
	rd.incarnation = s->incarnation;
	rd.events = rs->rp.end - rs->rp.from + rs->rp.nd;
	rd.ahead = rs->rp.pushed;
	rd.seconds = secs < 0 ? 0 : secs;
	if (cm->disp != NULL && cm->disp->state == SESS_DISPATCHER)
		(void)conn_send(cm->disp->c, MPIV__MSG_TYPE__MSG_REPLAY_DONE,
		    &rd.base, NULL, 0);
	log_info("cm replay done job=%s rank=%d inc=%u events=%llu "
	    "ahead=%llu seconds=%.3f", s->job->id, s->rank, s->incarnation,
	    (unsigned long long)rd.events, (unsigned long long)rd.ahead,
	    rd.seconds);
}

/*
 * Called once a home rank's HelloReply and NdLog are queued: answers
 * from the log every event logged so far.
 */
static int
replay_cmp_event(const void *a, const void *b)
{
	const struct logent *x = *(struct logent *const *)a;
	const struct logent *y = *(struct logent *const *)b;

	return x->event < y->event ? -1 : x->event > y->event;
}

static void replay_release(struct job *, int32_t);

void
replay_begin(struct session *s, struct rank_state *rs, uint32_t window)
{
	struct replay *rp = &rs->rp;
	int rc;

	replay_reset(rs);
	rs->last_post = 0;
	if (s->job->relay_only)
		return;
	rp->incarnation = s->incarnation;
	rp->t0 = ev_time();
	/* the NdLog just sent: in a direct job all the replay there is */
	rp->nd = rs->nd_end > rs->resume_nd ? rs->nd_end - rs->resume_nd : 0;
	rp->from = rs->resume_event;
	rp->end = rs->next_event > rp->from ? rs->next_event : rp->from;
	rp->next = rp->from + 1;
	if (rp->end == rp->from) {
		if (s->incarnation > 1)
			replay_report(s, rs);
		return;
	}
	rc = evlog_index(rs, rp->from, rp->end, &rp->index, &rp->nindex);
	if (rc < 0) {
		log_errorx("cm out of memory indexing the log job=%s rank=%d "
		    "events=%llu", s->job->id, s->rank,
		    (unsigned long long)rp->end);
		session_error(s, "channel memory out of memory");
		return;
	}
	if (window > 0 && rp->nindex > 0) {
		rp->byev = malloc(rp->nindex * sizeof(*rp->byev));
		if (rp->byev != NULL) {	/* else: answered post by post */
			memcpy(rp->byev, rp->index, rp->nindex *
			    sizeof(*rp->byev));
			qsort(rp->byev, rp->nindex, sizeof(*rp->byev),
			    replay_cmp_event);
			rp->nbyev = rp->nindex;
			rp->window = window < REPLAY_WINDOW_MAX ? window :
			    REPLAY_WINDOW_MAX;
		}
	}
	rp->active = true;
	log_info("cm replay begins job=%s rank=%d inc=%u from_event=%llu "
	    "events=%llu entries=%zu window=%u", s->job->id, s->rank,
	    s->incarnation, (unsigned long long)rp->from,
	    (unsigned long long)rp->end, rp->nindex, rp->window);
	replay_release(s->job, s->rank);
}

/*
 * A logged delivery e as event `event`: the answer to the post with
 * req_id, or pushed ahead of its post (ahead). False when the payload
 * cannot be read back (the session is failed).
 */
static bool
replay_send_deliver(struct session *s, const struct logent *e,
    uint64_t req_id, uint64_t event, bool ahead)
{
	Mpiv__Deliver d = MPIV__DELIVER__INIT;
	struct pbuf *pb = e->pb;

	if (pb == NULL && e->spilled && (pb = spill_load(s->job, e)) == NULL) {
		session_error(s, "channel memory cannot read a logged "
		    "payload back from its spill file");
		return false;
	}
	d.req_id = req_id;
	d.src = e->src;
	d.tag = e->tag;
	d.event = event;
	d.seq = e->seq;
	d.context = e->context;
	d.replayed = true;
	if (ahead) {
		d.ahead_post = e->post_no;
		d.req_source = e->req_source;
		d.req_tag = e->req_tag;
	}
	(void)conn_send_pbuf(s->c, MPIV__MSG_TYPE__MSG_DELIVER, &d.base, pb);
	if (pb != e->pb)
		pbuf_unref(pb);	/* read back: the send holds its own */
	log_debug("cm replay deliver job=%s rcv=%d event=%llu src=%d tag=%d "
	    "seq=%llu bytes=%llu post=%llu%s", s->job->id, s->rank,
	    (unsigned long long)event, e->src, e->tag,
	    (unsigned long long)e->seq, (unsigned long long)e->size,
	    (unsigned long long)e->post_no, ahead ? " ahead" : "");
	return true;
}

/*
 * Streaming: pushes the delivery of event rp->next ahead of its post if
 * the window has room and that event is a delivery whose payload is
 * here. False when it did not.
 */
static bool
replay_push(struct session *s, struct rank_state *rs)
{
	struct replay *rp = &rs->rp;
	const struct logent *e;

	if (rp->window == 0 || rp->next > rp->end ||
	    rp->ahead_n >= rp->window ||
	    (rp->ahead_n > 0 && rp->ahead_bytes >= REPLAY_AHEAD_BYTES))
		return false;
	while (rp->ev_pos < rp->nbyev && rp->byev[rp->ev_pos]->event +
	    rp->byev[rp->ev_pos]->count - 1 < rp->next)
		rp->ev_pos++;
	if (rp->ev_pos >= rp->nbyev)
		return false;
	e = rp->byev[rp->ev_pos];
	if (e->event > rp->next || e->kind != LOG_DELIVER || e->refill)
		return false;
	if (!replay_send_deliver(s, e, 0, rp->next, true))
		return false;
	rp->ahead_n++;
	rp->ahead_bytes += e->size;
	rp->pushed++;
	rp->next++;
	return true;
}

/* Answers parked post w from its log entry. */
static void
replay_answer(struct session *s, struct rank_state *rs,
    struct replay_wait *w)
{
	const struct logent *e = w->e;
	struct job *j = s->job;

	switch (e->kind) {
	case LOG_DELIVER:
		(void)replay_send_deliver(s, e, w->p.req_id, w->event, false);
		return;
	case LOG_PROBE: {
		Mpiv__ProbeReply pr = MPIV__PROBE_REPLY__INIT;
		pr.req_id = w->p.req_id;
		pr.found = e->found;
		pr.src = e->src;
		pr.tag = e->tag;
		pr.size = e->size;
		pr.event = w->event;
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_PROBE_REPLY, &pr.base,
		    NULL, 0);
		log_debug("cm replay probe job=%s rcv=%d event=%llu found=%d "
		    "src=%d tag=%d post=%llu", j->id, s->rank,
		    (unsigned long long)w->event, e->found, e->src, e->tag,
		    (unsigned long long)w->p.post_no);
		return;
	}
	case LOG_CANCEL: {
		Mpiv__CancelReply cr = MPIV__CANCEL_REPLY__INIT;
		struct replay_wait **pp, *v;
		cr.req_id = w->p.req_id;
		cr.cancelled = e->found;
		cr.event = w->event;
		/* the cancelled receive never got an entry: it waits among
		   the deferred posts and must never match now */
		for (pp = &rs->rp.deferred, v = NULL; e->found && *pp != NULL;
		    pp = &(*pp)->next) {
			if ((*pp)->p.kind != POST_CANCEL &&
			    (*pp)->p.req_id == w->p.req_id) {
				v = *pp;
				*pp = v->next;
				break;
			}
		}
		if (v != NULL) {
			if (rs->rp.deferred_tail == v) {
				struct replay_wait *t = rs->rp.deferred;
				while (t != NULL && t->next != NULL)
					t = t->next;
				rs->rp.deferred_tail = t;
			}
			free(v);
		}
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_CANCEL_REPLY, &cr.base,
		    NULL, 0);
		log_debug("cm replay cancel job=%s rcv=%d event=%llu "
		    "cancelled=%d req=%llu post=%llu", j->id, s->rank,
		    (unsigned long long)w->event, e->found,
		    (unsigned long long)w->p.req_id,
		    (unsigned long long)w->p.post_no);
		return;
	}
	}
}

/* The log is exhausted: report, then match the deferred posts live. */
static void
replay_finish(struct session *s, struct rank_state *rs)
{
	struct replay_wait *w = rs->rp.deferred, *next;

	rs->rp.deferred = rs->rp.deferred_tail = NULL;
	rs->rp.active = false;
	replay_report(s, rs);
	free(rs->rp.index);
	rs->rp.index = NULL;
	rs->rp.nindex = 0;
	free(rs->rp.byev);
	rs->rp.byev = NULL;
	rs->rp.nbyev = rs->rp.ev_pos = 0;
	for (; w != NULL; w = next) {
		next = w->next;
		if (s->state == SESS_RANK && rs->sess == s)
			relay_live_post(s, &w->p);
		free(w);
	}
}

/* Releases parked answers whose turn has come. */
static void
replay_release(struct job *j, int32_t rcv)
{
	struct rank_state *rs = &j->ranks[rcv];
	struct session *s = rs->sess;
	struct replay_wait *w;

	if (s == NULL || !rs->rp.active)
		return;
	while (s->state == SESS_RANK && rs->sess == s) {
		w = rs->rp.parked;
		if (w != NULL && w->event == rs->rp.next) {
			if (w->e->refill) {
				log_debug("cm replay waits job=%s rcv=%d "
				    "event=%llu: payload not re-sent yet",
				    j->id, rcv, (unsigned long long)w->event);
				return;
			}
			rs->rp.parked = w->next;
			replay_answer(s, rs, w);
			rs->rp.next++;
			free(w);
		} else if (!replay_push(s, rs)) {
			break;
		}
	}
	if (rs->rp.active && rs->rp.next > rs->rp.end && rs->rp.ahead_n == 0)
		replay_finish(s, rs);
}

/* A logged delivery got its payload back from the restarted sender. */
void
replay_refilled(struct job *j, int32_t rcv)
{
	replay_release(j, rcv);
}

static bool
replay_same(const struct logent *e, const struct post *p)
{
	switch (p->kind) {
	case POST_RECV:
		return e->kind == LOG_DELIVER && e->req_context == p->context &&
		    e->req_source == p->source && e->req_tag == p->tag;
	case POST_PROBE:
		return e->kind == LOG_PROBE && e->req_context == p->context &&
		    e->req_source == p->source && e->req_tag == p->tag &&
		    e->blocking == p->blocking;
	case POST_CANCEL:
		return e->kind == LOG_CANCEL;
	}
	return false;
}

static void
replay_diverged(struct session *s, const struct logent *e,
    const struct post *p)
{
	char logged[96], got[96], why[256];

	evlog_describe_entry(logged, sizeof(logged), e);
	evlog_describe_post(got, sizeof(got), p);
	snprintf(why, sizeof(why), "replay diverged at post %llu: logged %s, "
	    "got %s", (unsigned long long)p->post_no, logged, got);
	session_error_code(s, MPIV__ERROR_CODE__ERR_DIVERGED, why);
}

/* Checks that s is a rank session whose home CM is this one. */
static bool
replay_is_home(struct session *s, const char *what)
{
	char why[160];

	if (job_is_home(s->job, s->rank))
		return true;
	snprintf(why, sizeof(why), "%s from rank %d, which this CM (index %d "
	    "of %d) is not home of", what, s->rank, s->job->cm_index,
	    s->job->ncms);
	session_error(s, why);
	return false;
}

/*
 * Every RecvPost, Probe and Cancel of a rank comes here: answered from
 * the log while a replay is on, matched live otherwise.
 */
void
replay_post(struct session *s, const struct post *p)
{
	static const char *const what[] = { "receive", "probe", "cancel" };
	struct rank_state *rs;
	struct replay_wait *w, **pp;
	struct logent *e;
	uint64_t ev = 0;
	char why[200];

	if (!replay_is_home(s, what[p->kind]))
		return;
	rs = &s->job->ranks[s->rank];
	if (p->post_no != 0 && p->post_no <= rs->last_post) {
		snprintf(why, sizeof(why), "post_no %llu after %llu (post "
		    "numbers must increase)", (unsigned long long)p->post_no,
		    (unsigned long long)rs->last_post);
		session_error(s, why);
		return;
	}
	if (p->post_no != 0)
		rs->last_post = p->post_no;
	if (!rs->rp.active) {
		relay_live_post(s, p);
		return;
	}
	if (p->post_no == 0) {
		session_error(s, "a post without post_no during a replay");
		return;
	}
	e = evlog_lookup(rs->rp.index, rs->rp.nindex, p->post_no, &ev);
	if (e != NULL && ev <= rs->rp.from) {
		snprintf(why, sizeof(why), "post %llu was answered at event "
		    "%llu, which the rank had at its checkpoint (resume_event "
		    "%llu)", (unsigned long long)p->post_no,
		    (unsigned long long)ev, (unsigned long long)rs->rp.from);
		session_error(s, why);
		return;
	}
	if (e != NULL && !replay_same(e, p)) {
		replay_diverged(s, e, p);
		return;
	}
	if (e != NULL && ev < rs->rp.next) {
		/* pushed ahead (an event before next was answered, and a
		   post number comes once): the rank has it, the window
		   slides */
		if (rs->rp.ahead_n == 0) {
			snprintf(why, sizeof(why), "post %llu: event %llu "
			    "was answered already", (unsigned long long)
			    p->post_no, (unsigned long long)ev);
			session_error(s, why);
			return;
		}
		rs->rp.ahead_n--;
		rs->rp.ahead_bytes -= e->size < rs->rp.ahead_bytes ? e->size :
		    rs->rp.ahead_bytes;
		replay_release(s->job, s->rank);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		log_errorx("cm out of memory replaying job=%s rank=%d",
		    s->job->id, s->rank);
		session_error(s, "channel memory out of memory");
		return;
	}
	w->p = *p;
	w->e = e;
	w->event = ev;
	if (e == NULL) {	/* no entry: matched live after the replay */
		if (rs->rp.deferred_tail != NULL)
			rs->rp.deferred_tail->next = w;
		else
			rs->rp.deferred = w;
		rs->rp.deferred_tail = w;
		log_debug("cm replay defers job=%s rank=%d post=%llu: not in "
		    "the log", s->job->id, s->rank,
		    (unsigned long long)p->post_no);
		return;
	}
	for (pp = &rs->rp.parked; *pp != NULL && (*pp)->event < ev;
	    pp = &(*pp)->next)
		;
	w->next = *pp;
	*pp = w;
	replay_release(s->job, s->rank);
}
