/*
 * session.c: one connection to the Channel Memory. The first frame must
 * be Hello; it makes the session a rank's (with incarnation fencing), a
 * controller's, or a checkpoint server's (durable notices for one job). Our own link to the dispatcher is a session too. Frames
 * are then dispatched by the session's state; a peer breaking the
 * protocol gets an Error (or a refusing HelloReply) and is closed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm_priv.h"
#include "log.h"
#include "srvfault.h"

static const char *const session_state_names[] = {
	"new", "rank", "control", "cs", "dispatcher", "dead",
};

/* The one place a session changes state (traced at debug). */
static void
session_set_state(struct session *s, enum session_state st)
{
	log_debug("cm session peer=%s state=%s->%s", conn_peer(s->c),
	    session_state_names[s->state], session_state_names[st]);
	s->state = st;
}

/* Refuses a Hello: HelloReply{ok=false}, then close after the flush. */
/* HelloReply{ok = false, error = why}, then close after the flush;
   restore: the rank must come back restored from a checkpoint. */
static void
session_refuse_as(struct session *s, const char *why, bool restore,
    int code)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;

	log_warnx("cm refused peer=%s reason=\"%s\"", conn_peer(s->c), why);
	hr.ok = false;
	hr.restore_needed = restore;
	hr.code = code;
	hr.error = (char *)why;
	hr.version = FRAME_VERSION;
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, NULL,
	    0);
	session_set_state(s, SESS_DEAD);
	conn_close(s->c, why, true);
}

void
session_refuse(struct session *s, const char *why)
{
	session_refuse_as(s, why, false, MPIV__ERROR_CODE__ERR_UNSPECIFIED);
}

/* A protocol error after Hello: Error{text}, then close after the flush. */
void
session_error(struct session *s, const char *why)
{
	session_error_code(s, MPIV__ERROR_CODE__ERR_PROTOCOL, why);
}

/* The same with an ErrorCode the peer acts on (ERR_DIVERGED ...). */
void
session_error_code(struct session *s, int code, const char *why)
{
	Mpiv__Error e = MPIV__ERROR__INIT;

	log_warnx("cm closing peer=%s job=%s rank=%d reason=\"%s\"",
	    conn_peer(s->c), s->job ? s->job->id : "-", s->rank, why);
	e.code = code;
	e.text = (char *)why;
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_ERROR, &e.base, NULL, 0);
	session_set_state(s, SESS_DEAD);
	conn_close(s->c, why, true);
}

static void
session_hello_rank(struct session *s, const Mpiv__Hello *h)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	struct rank_state *rs;
	struct session *old;
	struct job *j;
	uint64_t *seqs;
	char why[200];

	if ((j = job_find(s->cm, h->job_id)) == NULL) {
		snprintf(why, sizeof(why), "unknown job '%.64s'", h->job_id);
		session_refuse(s, why);
		return;
	}
	if (h->rank < 0 || h->rank >= j->nranks) {
		snprintf(why, sizeof(why), "rank %d out of range (job %.64s "
		    "has %d ranks)", h->rank, j->id, j->nranks);
		session_refuse(s, why);
		return;
	}
	rs = &j->ranks[h->rank];
	if (h->incarnation < rs->incarnation) {
		snprintf(why, sizeof(why), "stale incarnation %u of rank %d "
		    "(current is %u)", h->incarnation, h->rank,
		    rs->incarnation);
		session_refuse_as(s, why, false, MPIV__ERROR_CODE__ERR_FENCED);
		return;
	}
	if (!replay_check(j, h->rank, h->incarnation, why, sizeof(why))) {
		session_refuse(s, why);
		return;
	}
	if (!ckpt_resume_check(j, h->rank, h->incarnation, h->resume_event,
	    h->resume_nd, why, sizeof(why))) {
		session_refuse_as(s, why, ckpt_restore_needed(j, h->rank,
		    h->resume_event, h->resume_nd),
		    MPIV__ERROR_CODE__ERR_UNSPECIFIED);
		return;
	}
	if ((seqs = calloc((size_t)j->nranks, sizeof(*seqs))) == NULL) {
		log_errorx("cm out of memory answering hello job=%s rank=%d",
		    j->id, h->rank);
		session_refuse(s, "channel memory out of memory");
		return;
	}
	if ((old = rs->sess) != NULL) {
		/* Fencing: the newer (or same, reconnecting) incarnation wins. */
		log_info("cm fencing job=%s rank=%d old_incarnation=%u "
		    "new_incarnation=%u", j->id, h->rank, old->incarnation,
		    h->incarnation);
		/*
		 * A Send the old incarnation left half-read is dropped (its
		 * sequence rewound) now, before last_seq is answered below:
		 * done later, from the old connection's close, the new
		 * incarnation would have been told that the CM holds it, skip
		 * re-sending it, and the receiver would wait forever.
		 */
		relay_send_abort(old);
		job_detach_session(j, old);
		session_set_state(old, SESS_DEAD);
		conn_close(old->c, "replaced by a newer incarnation", false);
	}
	s->job = j;
	s->rank = h->rank;
	s->incarnation = h->incarnation;
	ckpt_hello(j, h->rank, h->incarnation, h->resume_event, h->resume_nd);
	rs->incarnation = h->incarnation;
	snprintf(rs->listen_addr, sizeof(rs->listen_addr), "%s",
	    h->listen_addr);
	store_rank(j, h->rank, h->incarnation, h->resume_event,
	    h->resume_nd);
	rs->sess = s;
	session_set_state(s, SESS_RANK);
	if (j->throttled && !(rs->home && rs->mq.nunexpected > 0)) {
		s->paused = true;
		conn_pause_read(s->c, true);
	}
	for (int32_t r = 0; r < j->nranks; r++)
		if (j->ranks[r].home)
			seqs[r] = match_seq_last(&j->ranks[r].mq, h->rank);
	hr.ok = true;
	hr.version = FRAME_VERSION;
	hr.nranks = j->nranks;
	hr.cm_index = j->cm_index;
	hr.n_last_seq = (size_t)j->nranks;
	hr.last_seq = seqs;
	hr.log_events = replay_log_events(j, rs);
	hr.multicast = true;
	hr.fin_closed = finish_hello(j, h->rank, h->incarnation,
	    &hr.fin_exit_code);
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, NULL,
	    0);
	free(seqs);
	log_info("cm rank connected job=%s rank=%d incarnation=%u peer=%s "
	    "log_events=%llu resume_event=%llu resume_nd=%llu", j->id, h->rank,
	    h->incarnation, conn_peer(s->c), (unsigned long long)hr.log_events,
	    (unsigned long long)h->resume_event,
	    (unsigned long long)h->resume_nd);
	if (rs->home) {
		nd_send_log(s, rs, rs->resume_nd);
		if (s->state == SESS_RANK)
			replay_begin(s, rs, h->replay_window);
	}
}

/* A checkpoint server's link: it only sends CkptDurable for its job. */
static void
session_hello_cs(struct session *s, const Mpiv__Hello *h)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	struct job *j;
	char why[120];

	if ((j = job_find(s->cm, h->job_id)) == NULL) {
		snprintf(why, sizeof(why), "unknown job '%.64s' (checkpoint "
		    "server link)", h->job_id);
		session_refuse(s, why);
		return;
	}
	s->job = j;
	session_set_state(s, SESS_CS);
	hr.ok = true;
	hr.version = FRAME_VERSION;
	hr.nranks = j->nranks;
	hr.cm_index = j->cm_index;
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, NULL,
	    0);
	log_info("cm checkpoint server connected job=%s peer=%s name=%s",
	    j->id, conn_peer(s->c), h->name);
}

static void
session_hello(struct session *s, const Mpiv__Hello *h)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	char why[160];

	ev_timer_stop(s->cm->loop, &s->hello_w);
	if (h->version != FRAME_VERSION) {
		snprintf(why, sizeof(why), "protocol version mismatch: peer "
		    "speaks %u, this CM speaks %u", h->version, FRAME_VERSION);
		session_refuse(s, why);
		return;
	}
	switch (h->role) {
	case MPIV__ROLE__ROLE_RANK:
		session_hello_rank(s, h);
		return;
	case MPIV__ROLE__ROLE_CS:
		session_hello_cs(s, h);
		return;
	case MPIV__ROLE__ROLE_CONTROL:
		session_set_state(s, SESS_CONTROL);
		hr.ok = true;
		hr.version = FRAME_VERSION;
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base,
		    NULL, 0);
		log_info("cm control connected peer=%s name=%s",
		    conn_peer(s->c), h->name);
		return;
	default:
		snprintf(why, sizeof(why), "wrong role %d for a Channel Memory "
		    "(expected rank, control or checkpoint server)", (int)h->role);
		session_refuse(s, why);
		return;
	}
}

/*
 * Keeps the job token of a JobSetup: the key its ranks prove is derived
 * from it. A job set up again (a dispatcher that reconnected) must bring
 * the same token, or ranks already proven would be locked out.
 */
static int
session_job_token(struct session *s, const Mpiv__JobSetup *js,
    const char **err)
{
	struct job *j = job_find(s->cm, js->job_id);

	if (j == NULL)
		return 0;
	if (js->job_token.len != 0 && js->job_token.len != AUTH_TOKEN_LEN) {
		*err = "job token of the wrong size";
		return -1;
	}
	if (j->has_token) {
		if (js->job_token.len != AUTH_TOKEN_LEN ||
		    !auth_equal(j->token, js->job_token.data, AUTH_TOKEN_LEN)) {
			*err = "job already set up with another token";
			return -1;
		}
		return 0;
	}
	if (js->job_token.len == AUTH_TOKEN_LEN) {
		memcpy(j->token, js->job_token.data, AUTH_TOKEN_LEN);
		j->has_token = true;
	}
	return 0;
}

/*
 * The key a peer must prove (auth_key_fn): a rank the credential
 * K_{r,i} of the job, rank and incarnation its Hello names
 * (auth_rank_inc_key), so that it can speak only as the incarnation it
 * was launched as: a node that ran incarnation i of a rank cannot make
 * the key of i+1, and once i+1 said Hello, i is refused as fenced
 * (session_hello_rank: the proof is checked first, so only a holder of
 * the stale credential learns that). The dispatcher, controllers and
 * checkpoint servers prove the cluster secret. Node agents never talk
 * to a CM.
 */
int
session_auth_key(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why)
{
	struct cm *cm = arg;
	struct job *j;
	uint8_t k[AUTH_HASH_LEN];

	if (h->role != MPIV__ROLE__ROLE_RANK)
		return auth_key_service(&cm->keys, h, key, why);
	if ((j = job_find(cm, h->job_id)) == NULL) {
		*why = "unknown job";
		return -1;
	}
	if (!j->has_token) {
		*why = "job set up without a token: ranks cannot prove who "
		    "they are";
		return -1;
	}
	auth_rank_inc_key(j->token, sizeof(j->token), h->rank,
	    h->incarnation, k);
	auth_key_set(key, k, sizeof(k));
	auth_wipe(k, sizeof(k));
	return 0;
}

/*
 * A job rebuilt from the store that a JobSetup of the same id does not
 * fit (other size, index or token: a new job that reuses the id, e.g.
 * of a dispatcher started afresh) was nobody's any more: it goes.
 */
static void
session_drop_stale(struct cm *cm, const Mpiv__JobSetup *js)
{
	struct job *j = job_find(cm, js->job_id);

	if (j == NULL || !j->recovered)
		return;
	if (j->nranks == js->nranks && j->ncms == js->ncms &&
	    j->cm_index == js->cm_index && !js->relay_only &&
	    j->has_token == (js->job_token.len == AUTH_TOKEN_LEN) &&
	    (!j->has_token || auth_equal(j->token, js->job_token.data,
	    AUTH_TOKEN_LEN)))
		return;
	log_warnx("cm store job=%s: a new job of that id is set up: the "
	    "recovered one is dropped", j->id);
	job_end(cm, j);
}

/* JobSetup, JobEnd, CmStatsReq: from a controller or the dispatcher. */
static bool
session_control_frame(struct session *s, uint16_t type, ProtobufCMessage *m)
{
	Mpiv__JobStatus st = MPIV__JOB_STATUS__INIT;
	Mpiv__CmStats cs = MPIV__CM_STATS__INIT;
	Mpiv__Error e = MPIV__ERROR__INIT;
	const char *err = NULL;
	struct job *j;

	switch (type) {
	case MPIV__MSG_TYPE__MSG_JOB_SETUP: {
		Mpiv__JobSetup *js = (Mpiv__JobSetup *)m;
		session_drop_stale(s->cm, js);
		fileserv_drop_recovered(s->cm, js->job_id);
		if (job_setup(s->cm, js->job_id, js->nranks, js->ncms,
		    js->cm_index, js->relay_only, &err) < 0 ||
		    session_job_token(s, js, &err) < 0 ||
		    fileserv_setup(job_find(s->cm, js->job_id), js->cwd,
		    &err) < 0) {
			log_warnx("cm job setup refused job=%s reason=\"%s\"",
			    js->job_id, err);
			e.code = 1;
			e.text = (char *)err;
			(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_ERROR,
			    &e.base, NULL, 0);
			return true;
		}
		j = job_find(s->cm, js->job_id);
		finish_setup(j, js->fin_closed);
		st.job_id = js->job_id;
		st.state = "ready";
		if (j->recovered) {
			/* rebuilt from the store: the dispatcher restarts the
			   ranks on this log instead of starting over */
			st.state = "recovered";
			j->recovered = false;
			ev_timer_stop(s->cm->loop, &j->claim_w);
		} else {
			(void)store_open(j);
			store_token(j);
		}
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_JOB_STATUS, &st.base,
		    NULL, 0);
		return true;
	}
	case MPIV__MSG_TYPE__MSG_JOB_END: {
		Mpiv__JobEnd *je = (Mpiv__JobEnd *)m;
		if ((j = job_find(s->cm, je->job_id)) != NULL) {
			/* over for good: the files it changed stay so */
			if (!je->again)
				fileserv_end(j);
			job_end(s->cm, j);
		}
		else
			log_debug("cm job end for unknown job=%s", je->job_id);
		return true;
	}
	case MPIV__MSG_TYPE__MSG_CM_STATS_REQ: {
		Mpiv__CmStatsReq *rq = (Mpiv__CmStatsReq *)m;
		cs.job_id = rq->job_id;
		for (j = s->cm->jobs; j != NULL; j = j->next) {
			if (*rq->job_id != '\0' && strcmp(j->id, rq->job_id))
				continue;
			cs.messages += j->messages;
			cs.bytes += j->bytes;
			cs.log_entries += j->log_entries;
			cs.log_bytes += j->log_bytes;
			cs.spill_bytes += j->spill_bytes;
			cs.meta_bytes += j->log_meta_bytes;
			cs.duplicates += j->duplicates;
		}
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_CM_STATS, &cs.base,
		    NULL, 0);
		return true;
	}
	default:
		return false;
	}
}

/*
 * A rank's WaitState (it is blocked, libmpi-lite/waitrep.c): passed to
 * the dispatcher as who this session proved to be, never as the frame
 * says. Dropped without a dispatcher: only deadlock reports need it.
 */
static void
session_wait_state(struct session *s, const Mpiv__WaitState *ws)
{
	Mpiv__WaitState out = MPIV__WAIT_STATE__INIT;
	struct cm *cm = s->cm;

	if (cm->disp == NULL || cm->disp->state != SESS_DISPATCHER ||
	    s->job == NULL)
		return;
	out.job_id = s->job->id;
	out.rank = s->rank;
	out.incarnation = s->incarnation;
	out.wait_no = ws->wait_no;
	out.over = ws->over;
	out.moved = ws->moved;
	out.waited_s = ws->waited_s;
	out.what = ws->what;
	(void)conn_send(cm->disp->c, MPIV__MSG_TYPE__MSG_WAIT_STATE,
	    &out.base, NULL, 0);
}

static void
session_rank_frame(struct session *s, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	char why[120];

	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_SEND:
		if (h->payload_len == 0 &&
		    relay_send_begin(s, (Mpiv__Send *)m, 0) < 0)
			return;
		relay_send_end(s, (Mpiv__Send *)m);
		return;
	case MPIV__MSG_TYPE__MSG_RECV_POST: {
		const Mpiv__RecvPost *rp = (Mpiv__RecvPost *)m;
		struct post p = { .kind = POST_RECV, .req_id = rp->req_id,
		    .post_no = rp->post_no, .context = rp->context,
		    .source = rp->source, .tag = rp->tag };
		replay_post(s, &p);
		return;
	}
	case MPIV__MSG_TYPE__MSG_PROBE: {
		const Mpiv__Probe *pr = (Mpiv__Probe *)m;
		struct post p = { .kind = POST_PROBE, .req_id = pr->req_id,
		    .post_no = pr->post_no, .context = pr->context,
		    .source = pr->source, .tag = pr->tag,
		    .blocking = pr->blocking };
		replay_post(s, &p);
		return;
	}
	case MPIV__MSG_TYPE__MSG_CANCEL: {
		const Mpiv__Cancel *cn = (Mpiv__Cancel *)m;
		struct post p = { .kind = POST_CANCEL, .req_id = cn->req_id,
		    .post_no = cn->post_no };
		replay_post(s, &p);
		return;
	}
	case MPIV__MSG_TYPE__MSG_ND_RECORD:
		nd_record(s, (Mpiv__NdRecord *)m);
		return;
	case MPIV__MSG_TYPE__MSG_CKPT_MARK:
		ckpt_mark(s, (Mpiv__CkptMark *)m);
		return;
	case MPIV__MSG_TYPE__MSG_DIGEST_TRIM:
		digest_trim(s, (Mpiv__DigestTrim *)m);
		return;
	case MPIV__MSG_TYPE__MSG_PEER_LOOKUP:
		peers_lookup(s, (Mpiv__PeerLookup *)m);
		return;
	case MPIV__MSG_TYPE__MSG_FIN_WAIT:
		finish_wait(s, (Mpiv__FinWait *)m);
		return;
	case MPIV__MSG_TYPE__MSG_WAIT_STATE:
		session_wait_state(s, (const Mpiv__WaitState *)m);
		return;
	case MPIV__MSG_TYPE__MSG_FLUSH: {
		/* every Send before it is complete and stored (the store's
		   batch hook writes and syncs before this answer leaves) */
		Mpiv__FlushAck fa = MPIV__FLUSH_ACK__INIT;
		srvfault_point("cm-flush");
		fa.id = ((Mpiv__Flush *)m)->id;
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_FLUSH_ACK, &fa.base,
		    NULL, 0);
		return;
	}
	case MPIV__MSG_TYPE__MSG_CM_STATS_REQ:
		(void)session_control_frame(s, h->type, m);
		return;
	case MPIV__MSG_TYPE__MSG_BYE:
		job_detach_session(s->job, s);
		session_set_state(s, SESS_DEAD);
		conn_close(s->c, "rank said bye", true);
		return;
	default:
		snprintf(why, sizeof(why), "unexpected %s frame from a rank",
		    frame_type_name(h->type));
		session_error(s, why);
		return;
	}
}

static void
session_dispatcher_frame(struct session *s, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	if (session_control_frame(s, h->type, m))
		return;
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		Mpiv__HelloReply *hr = (Mpiv__HelloReply *)m;
		if (!hr->ok) {
			log_warnx("cm dispatcher refused us reason=\"%s\"",
			    hr->error);
			conn_close(s->c, "dispatcher refused registration",
			    false);
		}
		return;
	}
	case MPIV__MSG_TYPE__MSG_ERROR:
		log_warnx("cm dispatcher error text=\"%s\"",
		    ((Mpiv__Error *)m)->text);
		return;
	default:
		log_debug("cm ignoring %s from the dispatcher",
		    frame_type_name(h->type));
		return;
	}
}

static void
session_on_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m, uint8_t *payload)
{
	struct session *s = conn_udata(c);
	char why[120];

	s->cm->activity++;
	s->frames++;
	if (s->state == SESS_RANK && h->type == MPIV__MSG_TYPE__MSG_FILE_OP &&
	    (payload == NULL || s->in_pb == NULL ||
	    payload != pbuf_data(s->in_pb))) {
		fileserv_op(s, (const Mpiv__FileOp *)m, payload,
		    h->payload_len);
		free(payload);
		return;
	}
	/* Cut-through payloads live in the message's pbuf; others are ours. */
	if (payload != NULL &&
	    (s->in_pb == NULL || payload != pbuf_data(s->in_pb))) {
		free(payload);
		payload = NULL;
	}
	switch (s->state) {
	case SESS_NEW:
		if (h->type != MPIV__MSG_TYPE__MSG_HELLO) {
			snprintf(why, sizeof(why), "expected hello as the "
			    "first frame, got %s", frame_type_name(h->type));
			session_refuse(s, why);
			return;
		}
		session_hello(s, (Mpiv__Hello *)m);
		return;
	case SESS_RANK:
		session_rank_frame(s, h, m);
		return;
	case SESS_CONTROL:
		if (session_control_frame(s, h->type, m))
			return;
		if (h->type == MPIV__MSG_TYPE__MSG_BYE) {
			conn_close(s->c, "controller said bye", true);
			return;
		}
		snprintf(why, sizeof(why), "unexpected %s frame from a "
		    "controller", frame_type_name(h->type));
		session_error(s, why);
		return;
	case SESS_CS:
		if (h->type == MPIV__MSG_TYPE__MSG_CKPT_DURABLE) {
			ckpt_durable(s, (Mpiv__CkptDurable *)m);
			return;
		}
		if (h->type == MPIV__MSG_TYPE__MSG_BYE) {
			conn_close(s->c, "checkpoint server said bye", true);
			return;
		}
		snprintf(why, sizeof(why), "unexpected %s frame from a "
		    "checkpoint server", frame_type_name(h->type));
		session_error(s, why);
		return;
	case SESS_DISPATCHER:
		session_dispatcher_frame(s, h, m);
		return;
	case SESS_DEAD:
		return;
	}
}

static uint8_t *
session_on_header(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	struct session *s = conn_udata(c);

	if (s->state != SESS_RANK || h->type != MPIV__MSG_TYPE__MSG_SEND)
		return NULL;
	if (relay_send_begin(s, (Mpiv__Send *)m, h->payload_len) < 0)
		return NULL;
	return s->in_pb != NULL ? pbuf_data(s->in_pb) : NULL;
}

static void
session_on_progress(struct conn *c, size_t have)
{
	struct session *s = conn_udata(c);

	s->cm->activity++;
	if (s->in_pb != NULL)
		pbuf_advance(s->in_pb, (uint32_t)have);
}

static void
session_on_close(struct conn *c, const char *reason)
{
	struct session *s = conn_udata(c);
	struct cm *cm = s->cm;

	if (s->state == SESS_RANK || s->job != NULL)
		log_info("cm connection closed job=%s rank=%d incarnation=%u "
		    "peer=%s reason=\"%s\"", s->job ? s->job->id : "-",
		    s->rank, s->incarnation, conn_peer(c), reason);
	else
		log_debug("cm connection closed peer=%s reason=\"%s\"",
		    conn_peer(c), reason);
	ev_timer_stop(cm->loop, &s->hello_w);
	relay_send_abort(s);
	if (s->job != NULL)
		job_detach_session(s->job, s);
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		cm->sessions = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	if (cm->disp == s) {
		cm->disp = NULL;
		cm_dispatcher_lost(cm);
	}
	free(s);
}

static const struct conn_ops session_ops = {
	.on_frame = session_on_frame,
	.on_header = session_on_header,
	.on_progress = session_on_progress,
	.on_close = session_on_close,
};

static void
session_on_hello_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct session *s = w->data;

	if (s->state == SESS_NEW)
		session_refuse(s, "no hello received in time");
}

/*
 * Wraps an accepted (or, for the dispatcher link, dialled) socket. Owns
 * fd from here on, even on failure.
 */
struct session *
session_new(struct cm *cm, int fd, bool dispatcher)
{
	struct session *s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_errorx("cm out of memory accepting a connection");
		close(fd);
		return NULL;
	}
	s->cm = cm;
	s->rank = -1;
	if ((s->c = conn_new(cm->loop, fd, &session_ops, s)) == NULL) {
		close(fd);
		free(s);
		return NULL;
	}
	/* Everything a read makes the CM send (a Deliver and its payload,
	   several answers to one peer) leaves in one sendmsg per peer. */
	conn_set_batching(s->c, true);
	if (dispatcher)
		conn_auth_client(s->c, cm->keys.enabled ? &cm->keys.secret :
		    NULL);
	else
		conn_auth_server(s->c, &cm->as);
	s->next = cm->sessions;
	if (cm->sessions != NULL)
		cm->sessions->prev = s;
	cm->sessions = s;
	ev_timer_init(&s->hello_w, session_on_hello_timeout, CM_HELLO_TIMEOUT,
	    0.);
	s->hello_w.data = s;
	if (dispatcher) {
		s->state = SESS_DISPATCHER;
		session_send_hello(s);
	} else {
		ev_timer_start(cm->loop, &s->hello_w);
	}
	return s;
}

/* Registers with the dispatcher: Hello{ROLE_CM} + ServiceRegister. */
void
session_send_hello(struct session *s)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__ServiceRegister sr = MPIV__SERVICE_REGISTER__INIT;

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CM;
	h.rank = -1;
	h.name = s->cm->addr;
	sr.role = MPIV__ROLE__ROLE_CM;
	sr.addr = s->cm->addr;
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0);
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_SERVICE_REGISTER, &sr.base,
	    NULL, 0);
}

/* Shutdown: every connection closes now; on_close frees each session. */
void
session_kill_all(struct cm *cm)
{
	struct session *s;

	for (s = cm->sessions; s != NULL; s = s->next) {
		ev_timer_stop(cm->loop, &s->hello_w);
		conn_close(s->c, "channel memory shutting down", false);
	}
}
