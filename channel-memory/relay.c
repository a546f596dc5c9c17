/*
 * relay.c: the message path through a Channel Memory.
 *
 * A Send is handled as soon as its header is read: its sequence number is
 * checked (duplicates dropped), then it is matched against the receiver's
 * posted receives. When one matches, the Deliver is queued at once with a
 * reference to the payload buffer still being filled (cut-through); else
 * the message waits as unexpected. Every delivery and probe answer takes
 * the receiver's next event number and is kept in the receiver's log,
 * which shares the message's buffer (one copy of each payload).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

void
relay_msg_free(struct msg *m)
{
	if (m == NULL)
		return;
	if (m->filler != NULL)
		m->filler->in_msg = NULL;
	pbuf_unref(m->pb);
	free(m);
}

void
relay_free_msg_cb(struct match_msg *mm, void *arg)
{
	relay_msg_free((struct msg *)mm);
}

void
relay_log_free(struct rank_state *rs)
{
	struct logent *e, *next;

	for (e = rs->log_head; e != NULL; e = next) {
		next = e->next;
		pbuf_unref(e->pb);
		free(e);
	}
	rs->log_head = rs->log_tail = NULL;
}

static void
relay_log_append(struct job *j, struct rank_state *rs, struct logent *e)
{
	if (rs->log_tail != NULL)
		rs->log_tail->next = e;
	else
		rs->log_head = e;
	rs->log_tail = e;
	j->log_entries++;
	if (e->pb != NULL)
		j->log_bytes += pbuf_len(e->pb);
}

/*
 * Pushes a matched message to receiver rcv for request req_id: takes the
 * next event number, logs the decision, answers a synchronous sender.
 * Consumes m (its buffer moves to the log).
 */
static void
relay_deliver(struct job *j, int32_t rcv, uint64_t req_id, struct msg *m)
{
	struct rank_state *rs = &j->ranks[rcv];
	Mpiv__Deliver d = MPIV__DELIVER__INIT;
	struct session *sender;
	struct logent *e;

	d.req_id = req_id;
	d.src = m->m.src;
	d.tag = m->m.tag;
	d.event = ++rs->next_event;
	d.seq = m->seq;
	d.context = m->m.context;
	if (rs->sess != NULL)
		(void)conn_send_pbuf(rs->sess->c, MPIV__MSG_TYPE__MSG_DELIVER,
		    &d.base, m->pb);
	log_debug("cm deliver job=%s rcv=%d event=%llu src=%d tag=%d seq=%llu "
	    "bytes=%u req=%llu", j->id, rcv, (unsigned long long)d.event,
	    d.src, d.tag, (unsigned long long)d.seq, pbuf_len(m->pb),
	    (unsigned long long)req_id);
	if (m->sync) {
		Mpiv__SyncAck a = MPIV__SYNC_ACK__INIT;
		a.send_id = m->send_id;
		a.dst = rcv;
		sender = j->ranks[m->m.src].sess;
		if (sender != NULL)
			(void)conn_send(sender->c, MPIV__MSG_TYPE__MSG_SYNC_ACK,
			    &a.base, NULL, 0);
		else
			log_info("cm sync ack lost job=%s src=%d dst=%d: "
			    "sender not connected", j->id, m->m.src, rcv);
	}
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		log_errorx("cm out of memory logging delivery job=%s rcv=%d "
		    "event=%llu: not logged", j->id, rcv,
		    (unsigned long long)d.event);
		relay_msg_free(m);
		return;
	}
	e->kind = LOG_DELIVER;
	e->event = d.event;
	e->req_id = req_id;
	e->src = d.src;
	e->tag = d.tag;
	e->context = d.context;
	e->seq = d.seq;
	e->found = true;
	e->size = pbuf_len(m->pb);
	e->pb = m->pb;		/* the message's reference moves here */
	m->pb = NULL;
	relay_log_append(j, rs, e);
	relay_msg_free(m);
}

/* Answers a probe (found or not), numbered and logged like a delivery. */
static void
relay_probe_answer(struct job *j, int32_t rcv, uint64_t req_id,
    const struct msg *m)
{
	struct rank_state *rs = &j->ranks[rcv];
	Mpiv__ProbeReply pr = MPIV__PROBE_REPLY__INIT;
	struct logent *e;

	pr.req_id = req_id;
	pr.found = m != NULL;
	if (m != NULL) {
		pr.src = m->m.src;
		pr.tag = m->m.tag;
		pr.size = pbuf_len(m->pb);
	}
	pr.event = ++rs->next_event;
	if (rs->sess != NULL)
		(void)conn_send(rs->sess->c, MPIV__MSG_TYPE__MSG_PROBE_REPLY,
		    &pr.base, NULL, 0);
	log_debug("cm probe job=%s rcv=%d event=%llu found=%d src=%d tag=%d "
	    "bytes=%llu req=%llu", j->id, rcv, (unsigned long long)pr.event,
	    pr.found, pr.src, pr.tag, (unsigned long long)pr.size,
	    (unsigned long long)req_id);
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		log_errorx("cm out of memory logging probe job=%s rcv=%d "
		    "event=%llu: not logged", j->id, rcv,
		    (unsigned long long)pr.event);
		return;
	}
	e->kind = LOG_PROBE;
	e->event = pr.event;
	e->req_id = req_id;
	e->src = pr.src;
	e->tag = pr.tag;
	e->found = pr.found;
	e->size = pr.size;
	if (m != NULL) {
		e->context = m->m.context;
		e->seq = m->seq;
	}
	relay_log_append(j, rs, e);
}

/*
 * A Send header (and meta) arrived on rank session s. Validates it, drops
 * duplicates, then matches or queues it. On success s->in_pb is the buffer
 * to read the payload into (NULL: read and discard). Returns 0, or -1
 * when the session was closed for a protocol error.
 */
int
relay_send_begin(struct session *s, const Mpiv__Send *snd, uint32_t len)
{
	struct job *j = s->job;
	struct rank_state *rs;
	struct match_req *r, *probes, *next;
	struct msg *m;
	char why[160];

	if (snd->src != s->rank) {
		snprintf(why, sizeof(why), "send src=%d on the connection of "
		    "rank %d", snd->src, s->rank);
		session_error(s, why);
		return -1;
	}
	if (snd->dst < 0 || snd->dst >= j->nranks) {
		snprintf(why, sizeof(why), "send dst=%d out of range (job has "
		    "%d ranks)", snd->dst, j->nranks);
		session_error(s, why);
		return -1;
	}
	if (!job_is_home(j, snd->dst)) {
		snprintf(why, sizeof(why), "send to rank %d, which this CM "
		    "(index %d of %d) is not home of", snd->dst, j->cm_index,
		    j->ncms);
		session_error(s, why);
		return -1;
	}
	if (snd->seq == 0) {
		session_error(s, "send seq must count from 1");
		return -1;
	}
	rs = &j->ranks[snd->dst];
	if (!match_seq_accept(&rs->mq, snd->src, snd->seq)) {
		j->duplicates++;
		log_debug("cm duplicate dropped job=%s src=%d dst=%d seq=%llu "
		    "last=%llu", j->id, snd->src, snd->dst,
		    (unsigned long long)snd->seq,
		    (unsigned long long)match_seq_last(&rs->mq, snd->src));
		return 0;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->pb = pbuf_new(len)) == NULL) {
		log_errorx("cm out of memory job=%s src=%d dst=%d bytes=%u: "
		    "refusing the message", j->id, snd->src, snd->dst, len);
		free(m);
		match_seq_rewind(&rs->mq, snd->src, snd->seq);
		session_error(s, "channel memory out of memory");
		return -1;
	}
	m->m.context = snd->context;
	m->m.src = snd->src;
	m->m.tag = snd->tag;
	m->dst = snd->dst;
	m->seq = snd->seq;
	m->send_id = snd->send_id;
	m->sync = snd->sync;
	j->messages++;
	j->bytes += len;
	s->in_pb = m->pb;
	pbuf_ref(s->in_pb);
	if (len == 0)
		pbuf_advance(m->pb, 0);

	r = match_arrive(&rs->mq, &m->m, &probes);
	for (; probes != NULL; probes = next) {
		next = probes->next;
		relay_probe_answer(j, snd->dst, probes->req_id, m);
		free(probes);
	}
	if (r != NULL) {
		relay_deliver(j, snd->dst, r->req_id, m);
		free(r);
		return 0;
	}
	if (len > 0) {
		m->filler = s;
		s->in_msg = m;
	}
	job_unexpected_add(j, s, len);
	return 0;
}

/* The payload of the current Send is complete. */
void
relay_send_end(struct session *s)
{
	if (s->in_msg != NULL) {
		s->in_msg->filler = NULL;
		s->in_msg = NULL;
	}
	pbuf_unref(s->in_pb);
	s->in_pb = NULL;
}

/*
 * The sender went away mid-payload. A message still unexpected is
 * forgotten (and its sequence number with it, so the restarted sender's
 * copy is accepted); one already being relayed fails its receiver's
 * connection, since a frame cannot be cut short.
 */
void
relay_send_abort(struct session *s)
{
	struct msg *m = s->in_msg;

	if (s->in_pb == NULL)
		return;
	if (m != NULL && s->job != NULL) {
		struct rank_state *rs = &s->job->ranks[m->dst];
		log_info("cm incomplete message dropped job=%s src=%d dst=%d "
		    "seq=%llu", s->job->id, m->m.src, m->dst,
		    (unsigned long long)m->seq);
		match_remove(&rs->mq, &m->m);
		match_seq_rewind(&rs->mq, m->m.src, m->seq);
		job_unexpected_sub(s->job, pbuf_len(m->pb));
		s->in_msg = NULL;
		m->filler = NULL;
		relay_msg_free(m);
	}
	pbuf_fail(s->in_pb);
	pbuf_unref(s->in_pb);
	s->in_pb = NULL;
}

/* Checks that s is a rank session whose home CM is this one. */
static bool
relay_is_home_session(struct session *s, const char *what)
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

void
relay_recv_post(struct session *s, const Mpiv__RecvPost *rp)
{
	struct job *j = s->job;
	struct match_req r = { 0 };
	struct match_msg *mm;
	struct msg *m;
	int rc;

	if (!relay_is_home_session(s, "receive"))
		return;
	r.req_id = rp->req_id;
	r.context = rp->context;
	r.source = rp->source;
	r.tag = rp->tag;
	rc = match_post(&j->ranks[s->rank].mq, &r, &mm);
	if (rc < 0) {
		log_errorx("cm out of memory posting a receive job=%s rank=%d",
		    j->id, s->rank);
		session_error(s, "channel memory out of memory");
		return;
	}
	if (rc == 0)
		return;
	m = (struct msg *)mm;
	job_unexpected_sub(j, pbuf_len(m->pb));
	relay_deliver(j, s->rank, rp->req_id, m);
}

void
relay_probe(struct session *s, const Mpiv__Probe *p)
{
	struct job *j = s->job;
	struct match_req r = { 0 };
	struct match_msg *mm;
	int rc;

	if (!relay_is_home_session(s, "probe"))
		return;
	mm = match_probe(&j->ranks[s->rank].mq, p->context, p->source, p->tag);
	if (mm != NULL || !p->blocking) {
		relay_probe_answer(j, s->rank, p->req_id, (struct msg *)mm);
		return;
	}
	r.req_id = p->req_id;
	r.context = p->context;
	r.source = p->source;
	r.tag = p->tag;
	r.probe = true;
	rc = match_post(&j->ranks[s->rank].mq, &r, &mm);
	if (rc < 0) {
		log_errorx("cm out of memory posting a probe job=%s rank=%d",
		    j->id, s->rank);
		session_error(s, "channel memory out of memory");
	}
}

void
relay_cancel(struct session *s, const Mpiv__Cancel *cn)
{
	struct job *j = s->job;
	Mpiv__CancelReply cr = MPIV__CANCEL_REPLY__INIT;
	struct match_req *r;

	if (!relay_is_home_session(s, "cancel"))
		return;
	r = match_cancel(&j->ranks[s->rank].mq, cn->req_id);
	cr.req_id = cn->req_id;
	cr.cancelled = r != NULL;
	free(r);
	log_debug("cm cancel job=%s rank=%d req=%llu cancelled=%d", j->id,
	    s->rank, (unsigned long long)cn->req_id, cr.cancelled);
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_CANCEL_REPLY, &cr.base,
	    NULL, 0);
}
