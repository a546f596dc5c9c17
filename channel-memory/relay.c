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

/* The post a request left in the matching queue stands for. */
static struct post
relay_post_of(const struct match_req *r)
{
	struct post p = {
		.kind = r->probe ? POST_PROBE : POST_RECV,
		.req_id = r->req_id,
		.post_no = r->post_no,
		.context = r->context,
		.source = r->source,
		.tag = r->tag,
		.blocking = r->probe,
	};

	return p;
}

/*
 * Pushes a matched message to receiver rcv for post p: takes the next
 * event number, logs the decision, answers a synchronous sender.
 * Consumes m (its buffer moves to the log). Returns the log entry (NULL
 * when nothing is logged).
 */
static struct logent *
relay_deliver(struct job *j, int32_t rcv, const struct post *p,
    struct msg *m)
{
	struct rank_state *rs = &j->ranks[rcv];
	Mpiv__Deliver d = MPIV__DELIVER__INIT;
	struct pbuf *pb = m->pb;
	struct session *sender;
	struct logent *e = NULL;

	d.req_id = p->req_id;
	d.src = m->m.src;
	d.tag = m->m.tag;
	d.event = ++rs->next_event;
	d.seq = m->seq;
	d.context = m->m.context;
	/* logged (and stored) before the delivery leaves */
	if (!j->relay_only &&
	    (e = evlog_new(j, rcv, LOG_DELIVER, d.event, p)) != NULL) {
		e->src = d.src;
		e->tag = d.tag;
		e->context = d.context;
		e->seq = d.seq;
		e->found = true;
		e->size = pbuf_len(pb);
		e->store_off = m->store_off;
		store_event(j, e, false);
	}
	if (rs->sess != NULL)
		(void)conn_send_pbuf(rs->sess->c, MPIV__MSG_TYPE__MSG_DELIVER,
		    &d.base, pb);
	log_debug("cm deliver job=%s rcv=%d event=%llu src=%d tag=%d seq=%llu "
	    "bytes=%u req=%llu post=%llu", j->id, rcv,
	    (unsigned long long)d.event, d.src, d.tag,
	    (unsigned long long)d.seq, pbuf_len(pb),
	    (unsigned long long)p->req_id, (unsigned long long)p->post_no);
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
	if (e == NULL) {
		relay_msg_free(m);
		return NULL;
	}
	e->pb = m->pb;		/* the message's reference moves here */
	m->pb = NULL;
	j->log_bytes += e->size;
	rs->log_bytes += e->size;
	if (m->filler != NULL)	/* still streaming in: the sender's entry */
		m->filler->in_ent = e;
	relay_msg_free(m);
	job_log_grew(j);
	return e;
}

/* Answers a probe (found or not), numbered and logged like a delivery. */
static void
relay_probe_answer(struct job *j, int32_t rcv, const struct post *p,
    const struct msg *m)
{
	struct rank_state *rs = &j->ranks[rcv];
	Mpiv__ProbeReply pr = MPIV__PROBE_REPLY__INIT;
	struct logent *e;

	pr.req_id = p->req_id;
	pr.found = m != NULL;
	if (m != NULL) {
		pr.src = m->m.src;
		pr.tag = m->m.tag;
		pr.size = pbuf_len(m->pb);
	}
	pr.event = ++rs->next_event;
	log_debug("cm probe job=%s rcv=%d event=%llu found=%d src=%d tag=%d "
	    "bytes=%llu req=%llu post=%llu", j->id, rcv,
	    (unsigned long long)pr.event, pr.found, pr.src, pr.tag,
	    (unsigned long long)pr.size, (unsigned long long)p->req_id,
	    (unsigned long long)p->post_no);
	/* logged (and stored) before the answer leaves */
	if (j->relay_only) {
		;
	} else if (m == NULL && evlog_fold_probe_miss(j, rs, pr.event, p)) {
		store_event(j, rs->log_tail, true);
	} else if ((e = evlog_new(j, rcv, LOG_PROBE, pr.event, p)) != NULL) {
		e->src = pr.src;
		e->tag = pr.tag;
		e->found = pr.found;
		e->size = pr.size;
		if (m != NULL) {
			e->context = m->m.context;
			e->seq = m->seq;
		}
		store_event(j, e, false);
		job_log_grew(j);
	}
	if (rs->sess != NULL)
		(void)conn_send(rs->sess->c, MPIV__MSG_TYPE__MSG_PROBE_REPLY,
		    &pr.base, NULL, 0);
}

/* The record the store gets once the payload of snd is complete. */
static void
relay_store_begin(struct session *s, const Mpiv__Send *snd)
{
	Mpiv__StoreMsg *sm = &s->in_sm;

	s->in_store = s->job->store != NULL;
	if (!s->in_store)
		return;
	mpiv__store_msg__init(sm);
	sm->src = snd->src;
	sm->dst = snd->dst;
	sm->context = snd->context;
	sm->tag = snd->tag;
	sm->seq = snd->seq;
	sm->sync = snd->sync;
	sm->send_id = snd->send_id;
	sm->digest = snd->digest;
}

/*
 * Whether snd, sent again as seq to dst with len bytes, differs from the
 * logged delivery e it refills; if so the session is closed with
 * "replay diverged".
 */
static bool
relay_refill_differs(struct session *s, const struct logent *e,
    const Mpiv__Send *snd, int32_t dst, uint64_t seq, uint32_t len)
{
	char why[200];

	if (len == e->size && snd->tag == e->tag &&
	    snd->context == e->context)
		return false;
	snprintf(why, sizeof(why), "replay diverged: rank %d, send #%llu "
	    "to rank %d sent again differs from the logged copy (tag "
	    "%d/%d, %u/%llu bytes)", snd->src, (unsigned long long)seq, dst,
	    snd->tag, e->tag, len, (unsigned long long)e->size);
	session_error_code(s, MPIV__ERROR_CODE__ERR_DIVERGED, why);
	return true;
}

/*
 * The re-sent copy of a logged delivery whose payload died with its
 * sender: the new bytes go to the log entry, nothing is matched again.
 */
static int
relay_refill(struct session *s, struct rank_state *rs, struct logent *e,
    const Mpiv__Send *snd, uint32_t len)
{
	if (relay_refill_differs(s, e, snd, snd->dst, snd->seq, len))
		return -1;
	pbuf_unref(e->pb);
	if ((e->pb = pbuf_new(len)) == NULL) {
		log_errorx("cm out of memory job=%s src=%d dst=%d bytes=%u: "
		    "refusing the re-sent message", s->job->id, snd->src,
		    snd->dst, len);
		e->pb = NULL;
		e->size = 0;
		rs->log_broken = true;
		session_error(s, "channel memory out of memory");
		return -1;
	}
	e->refill = false;
	rs->nrefill--;
	relay_store_begin(s, snd);
	s->in_pb = e->pb;
	pbuf_ref(s->in_pb);
	s->in_ent = e;
	log_info("cm logged payload re-sent job=%s src=%d dst=%d seq=%llu "
	    "event=%llu", s->job->id, snd->src, snd->dst,
	    (unsigned long long)snd->seq, (unsigned long long)e->event);
	replay_refilled(s->job, snd->dst);
	return 0;
}

/*
 * Send{check} of a re-executing sender: a send this CM already holds,
 * digest only. A digest that differs from the logged one ends the job
 * (the Error reaches the sender, whose error handler aborts). Returns 0,
 * or -1 when the session was closed.
 */
static int
relay_send_check(struct session *s, const Mpiv__Send *snd, uint32_t len)
{
	char why[400];
	int rc;

	if (len != 0) {
		session_error(s, "a send check carries no payload");
		return -1;
	}
	rc = digest_check(s->job, snd, why, sizeof(why));
	if (rc < 0) {
		log_warnx("cm %s job=%s", why, s->job->id);
		session_error_code(s, MPIV__ERROR_CODE__ERR_DIVERGED, why);
		return -1;
	}
	log_debug("cm send check job=%s src=%d dst=%d seq=%llu %s", s->job->id,
	    snd->src, snd->dst, (unsigned long long)snd->seq,
	    rc > 0 ? "same" : "unverifiable (digest no longer kept)");
	return 0;
}

/*
 * Message m for receiver dst arrives: the probes waiting for one like it
 * are answered, and a posted receive that matches takes it (consumed:
 * the log entry is returned, NULL when nothing is logged, and *taken is
 * set). Else m waits as unexpected (the caller accounts its bytes).
 */
static struct logent *
relay_arrive(struct job *j, int32_t dst, struct msg *m, bool *taken)
{
	struct match_req *r, *probes, *next;
	struct post rp;

	r = match_arrive(&j->ranks[dst].mq, &m->m, &probes);
	for (; probes != NULL; probes = next) {
		struct post pp = relay_post_of(probes);
		next = probes->next;
		relay_probe_answer(j, dst, &pp, m);
		free(probes);
	}
	*taken = r != NULL;
	if (r == NULL)
		return NULL;
	rp = relay_post_of(r);
	free(r);
	return relay_deliver(j, dst, &rp, m);
}

/* The store's record of snd's copy to receiver dst as seq. */
static void
relay_store_rec(Mpiv__StoreMsg *sm, const Mpiv__Send *snd, int32_t dst,
    uint64_t seq)
{
	mpiv__store_msg__init(sm);
	sm->src = snd->src;
	sm->dst = dst;
	sm->context = snd->context;
	sm->tag = snd->tag;
	sm->seq = seq;
	sm->send_id = snd->send_id;
	sm->digest = snd->digest;
}

/*
 * The header of a multicast (Send.mdst), whose first receiver passed
 * relay_send_begin's checks: every receiver is checked here, and the
 * payload is read into a buffer of its own; relay_mcast_take takes the
 * copies once it is whole. Never cut-through: a sender that dies
 * mid-payload leaves nothing behind (no seq taken), and the receivers
 * share the one buffer. Returns 0, or -1 when the session was closed.
 */
static int
relay_mcast_begin(struct session *s, const Mpiv__Send *snd, uint32_t len)
{
	struct job *j = s->job;
	uint8_t *seen = NULL;
	char why[200];

	why[0] = '\0';
	if (snd->n_mdst < 2 || snd->n_mseq != snd->n_mdst ||
	    snd->n_mdst > (size_t)j->nranks)
		snprintf(why, sizeof(why), "multicast to %zu receivers with "
		    "%zu seqs (job has %d ranks)", snd->n_mdst, snd->n_mseq,
		    j->nranks);
	else if (snd->check || snd->sync)
		snprintf(why, sizeof(why), "a multicast is neither a check "
		    "nor synchronous");
	else if (snd->mdst[0] != snd->dst || snd->mseq[0] != snd->seq)
		snprintf(why, sizeof(why), "a multicast's first receiver and "
		    "seq are not its dst and seq");
	else if ((seen = calloc((size_t)j->nranks, 1)) == NULL)
		snprintf(why, sizeof(why), "channel memory out of memory");
	for (size_t i = 0; why[0] == '\0' && i < snd->n_mdst; i++) {
		int32_t d = snd->mdst[i];

		if (d < 0 || d >= j->nranks)
			snprintf(why, sizeof(why), "multicast to rank %d, out "
			    "of range (job has %d ranks)", d, j->nranks);
		else if (!job_is_home(j, d))
			snprintf(why, sizeof(why), "multicast to rank %d, which "
			    "this CM (index %d of %d) is not home of", d,
			    j->cm_index, j->ncms);
		else if (seen[d]++)
			snprintf(why, sizeof(why), "multicast names rank %d "
			    "twice", d);
		else if (snd->mseq[i] == 0)
			snprintf(why, sizeof(why), "send seq must count from 1");
	}
	free(seen);
	if (why[0] == '\0' && (s->in_pb = pbuf_new(len)) == NULL) {
		log_errorx("cm out of memory job=%s src=%d bytes=%u: refusing "
		    "the multicast", j->id, snd->src, len);
		snprintf(why, sizeof(why), "channel memory out of memory");
	}
	if (why[0] != '\0') {
		session_error(s, why);
		return -1;
	}
	if (len == 0)
		pbuf_advance(s->in_pb, 0);
	s->in_mcast = true;
	return 0;
}

/*
 * A whole multicast: one Send per receiver, each as relay_send_begin
 * takes one (duplicates dropped, digest kept, a logged delivery whose
 * payload died with its sender refilled, else matched or queued), all
 * sharing pb. Stops at an error (the session is then closed).
 */
static void
relay_mcast_take(struct session *s, const Mpiv__Send *snd, struct pbuf *pb)
{
	struct job *j = s->job;
	uint32_t len = pbuf_len(pb);
	char why[320];

	for (size_t i = 0; i < snd->n_mdst && s->state == SESS_RANK; i++) {
		int32_t dst = snd->mdst[i];
		uint64_t seq = snd->mseq[i];
		struct rank_state *rs = &j->ranks[dst];
		Mpiv__StoreMsg sm;
		struct logent *e;
		struct msg *m;
		bool taken;

		if (!match_seq_accept(&rs->mq, snd->src, seq)) {
			j->duplicates++;
			log_debug("cm duplicate dropped job=%s src=%d dst=%d "
			    "seq=%llu (multicast)", j->id, snd->src, dst,
			    (unsigned long long)seq);
			continue;
		}
		if (digest_put(j, dst, snd->src, seq, snd->digest, why,
		    sizeof(why)) < 0) {
			match_seq_rewind(&rs->mq, snd->src, seq);
			session_error_code(s, MPIV__ERROR_CODE__ERR_DIVERGED, why);
			return;
		}
		relay_store_rec(&sm, snd, dst, seq);
		if (rs->nrefill > 0 &&
		    (e = evlog_refill_find(rs, snd->src, seq)) != NULL) {
			if (relay_refill_differs(s, e, snd, dst, seq, len))
				return;
			pbuf_unref(e->pb);
			e->pb = pb;
			pbuf_ref(pb);
			e->refill = false;
			rs->nrefill--;
			e->store_off = store_msg(j, &sm, pb);
			log_info("cm logged payload re-sent job=%s src=%d dst=%d "
			    "seq=%llu event=%llu (multicast)", j->id, snd->src,
			    dst, (unsigned long long)seq,
			    (unsigned long long)e->event);
			replay_refilled(j, dst);
			continue;
		}
		if ((m = calloc(1, sizeof(*m))) == NULL) {
			log_errorx("cm out of memory job=%s src=%d dst=%d "
			    "bytes=%u: refusing the message", j->id, snd->src,
			    dst, len);
			match_seq_rewind(&rs->mq, snd->src, seq);
			digest_truncate(j, dst, snd->src, seq);
			session_error(s, "channel memory out of memory");
			return;
		}
		m->pb = pb;
		pbuf_ref(pb);
		m->m.context = snd->context;
		m->m.src = snd->src;
		m->m.tag = snd->tag;
		m->dst = dst;
		m->seq = seq;
		m->send_id = snd->send_id;
		j->messages++;
		j->bytes += len;
		m->store_off = store_msg(j, &sm, pb);
		(void)relay_arrive(j, dst, m, &taken);
		if (!taken)
			job_unexpected_add(j, s, len);
	}
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
	struct logent *e;
	struct msg *m;
	char why[160], why2[320];
	bool taken;

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
	if (snd->n_mdst > 0 || snd->n_mseq > 0)
		return relay_mcast_begin(s, snd, len);
	rs = &j->ranks[snd->dst];
	if (snd->check)
		return relay_send_check(s, snd, len);
	if (!match_seq_accept(&rs->mq, snd->src, snd->seq)) {
		j->duplicates++;
		log_debug("cm duplicate dropped job=%s src=%d dst=%d seq=%llu "
		    "last=%llu", j->id, snd->src, snd->dst,
		    (unsigned long long)snd->seq,
		    (unsigned long long)match_seq_last(&rs->mq, snd->src));
		return 0;
	}
	if (digest_put(j, snd->dst, snd->src, snd->seq, snd->digest, why2,
	    sizeof(why2)) < 0) {
		match_seq_rewind(&rs->mq, snd->src, snd->seq);
		session_error_code(s, MPIV__ERROR_CODE__ERR_DIVERGED, why2);
		return -1;
	}
	if (rs->nrefill > 0) {
		if ((e = evlog_refill_find(rs, snd->src, snd->seq)) != NULL)
			return relay_refill(s, rs, e, snd, len);
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
	relay_store_begin(s, snd);
	s->in_pb = m->pb;
	pbuf_ref(s->in_pb);
	if (len == 0)
		pbuf_advance(m->pb, 0);

	e = relay_arrive(j, snd->dst, m, &taken);
	if (taken) {
		if (len > 0)
			s->in_ent = e;
		return 0;
	}
	if (len > 0) {
		m->filler = s;
		s->in_msg = m;
	}
	job_unexpected_add(j, s, len);
	return 0;
}

/* The payload of the current Send (snd) is complete. */
void
relay_send_end(struct session *s, const Mpiv__Send *snd)
{
	if (s->in_mcast) {
		s->in_mcast = false;
		if (s->in_pb != NULL && s->job != NULL && s->state == SESS_RANK)
			relay_mcast_take(s, snd, s->in_pb);
		pbuf_unref(s->in_pb);
		s->in_pb = NULL;
		return;
	}
	if (s->in_store && s->in_pb != NULL && s->job != NULL) {
		uint64_t off = store_msg(s->job, &s->in_sm, s->in_pb);

		if (s->in_msg != NULL)
			s->in_msg->store_off = off;
		else if (s->in_ent != NULL)
			s->in_ent->store_off = off;
	}
	s->in_store = false;
	if (s->in_msg != NULL) {
		s->in_msg->filler = NULL;
		s->in_msg = NULL;
	}
	s->in_ent = NULL;
	pbuf_unref(s->in_pb);
	s->in_pb = NULL;
}

/*
 * The sender went away mid-payload. A message still unexpected is
 * forgotten (and its sequence number with it, so the restarted sender's
 * copy is accepted); one already being relayed fails its receiver's
 * connection, since a frame cannot be cut short, and stays in the log
 * waiting for the restarted sender's copy (its sequence is rewound too).
 */
void
relay_send_abort(struct session *s)
{
	struct msg *m = s->in_msg;

	s->in_store = false;
	s->in_mcast = false;
	if (s->in_pb == NULL)
		return;
	if (m != NULL && s->job != NULL) {
		struct rank_state *rs = &s->job->ranks[m->dst];
		log_info("cm incomplete message dropped job=%s src=%d dst=%d "
		    "seq=%llu", s->job->id, m->m.src, m->dst,
		    (unsigned long long)m->seq);
		match_remove(&rs->mq, &m->m);
		match_seq_rewind(&rs->mq, m->m.src, m->seq);
		digest_truncate(s->job, m->dst, m->m.src, m->seq);
		job_unexpected_sub(s->job, pbuf_len(m->pb));
		s->in_msg = NULL;
		m->filler = NULL;
		relay_msg_free(m);
	} else if (s->in_ent != NULL && s->job != NULL) {
		struct logent *e = s->in_ent;
		struct rank_state *rs = &s->job->ranks[e->rcv];
		log_info("cm payload lost with its sender job=%s src=%d dst=%d "
		    "seq=%llu event=%llu: kept in the log until the sender "
		    "re-sends it", s->job->id, e->src, e->rcv,
		    (unsigned long long)e->seq, (unsigned long long)e->event);
		e->refill = true;
		rs->nrefill++;
		match_seq_rewind(&rs->mq, e->src, e->seq);
		s->in_ent = NULL;
	}
	pbuf_fail(s->in_pb);
	pbuf_unref(s->in_pb);
	s->in_pb = NULL;
}

static void
relay_live_cancel(struct session *s, const struct post *p)
{
	struct job *j = s->job;
	struct rank_state *rs = &j->ranks[s->rank];
	Mpiv__CancelReply cr = MPIV__CANCEL_REPLY__INIT;
	struct match_req *r;
	struct logent *e;

	r = match_cancel(&rs->mq, p->req_id);
	cr.req_id = p->req_id;
	cr.cancelled = r != NULL;
	cr.event = ++rs->next_event;
	log_debug("cm cancel job=%s rank=%d event=%llu req=%llu cancelled=%d "
	    "post=%llu", j->id, s->rank, (unsigned long long)cr.event,
	    (unsigned long long)p->req_id, cr.cancelled,
	    (unsigned long long)p->post_no);
	if (!j->relay_only &&
	    (e = evlog_new(j, s->rank, LOG_CANCEL, cr.event, p)) != NULL) {
		e->found = cr.cancelled;
		e->victim_post = r != NULL ? r->post_no : 0;
		store_event(j, e, false);
		job_log_grew(j);
	}
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_CANCEL_REPLY, &cr.base,
	    NULL, 0);
	free(r);
}

/*
 * A receive, probe or cancel of rank session s (whose home CM this is)
 * matched live against the unexpected messages, or posted.
 */
void
relay_live_post(struct session *s, const struct post *p)
{
	struct job *j = s->job;
	struct match_queue *mq = &j->ranks[s->rank].mq;
	struct match_req r = { 0 };
	struct match_msg *mm;
	struct msg *m;
	uint32_t len;
	int rc;

	switch (p->kind) {
	case POST_CANCEL:
		relay_live_cancel(s, p);
		return;
	case POST_PROBE:
		mm = match_probe(mq, p->context, p->source, p->tag);
		if (mm != NULL || !p->blocking) {
			relay_probe_answer(j, s->rank, p, (struct msg *)mm);
			return;
		}
		break;
	case POST_RECV:
		break;
	}
	r.req_id = p->req_id;
	r.context = p->context;
	r.source = p->source;
	r.tag = p->tag;
	r.probe = p->kind == POST_PROBE;
	r.post_no = p->post_no;
	rc = match_post(mq, &r, &mm);
	if (rc < 0) {
		log_errorx("cm out of memory posting a request job=%s rank=%d",
		    j->id, s->rank);
		session_error(s, "channel memory out of memory");
		return;
	}
	if (rc == 0)
		return;
	m = (struct msg *)mm;
	len = pbuf_len(m->pb);
	job_unexpected_take(j, len);	/* moves to the log: no recheck yet */
	(void)relay_deliver(j, s->rank, p, m);
	job_memory_check(j);
}
