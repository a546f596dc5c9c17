/*
 * p2p_relay.c: the relay protocol of point-to-point messages
 * (docs/REPLAY.md), behind proto.h. A send is one Send frame to the
 * receiver's home CM, with the payload beside it (the user buffer itself
 * when the datatype is contiguous). A receive is one RecvPost to our own
 * home CM, which matches it and pushes Deliver + payload. Standard,
 * ready and buffered sends complete once their frame is written to the
 * socket (the CM keeps every message); synchronous sends also wait for
 * the CM's SyncAck. Probes and cancels are round trips to the home CM,
 * which decides and logs their answers; the post numbers they carry are
 * counted here. A restored checkpoint clone posts again, in post order,
 * what it had pending.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "proto.h"
#include "transport.h"

/* The one table of per-destination send sequence numbers (world rank ->
   last seq used); a checkpoint's image carries it, a re-execution from
   the start counts again from 0 (the CMs' last_seq tells which sends
   they hold already). */
static uint64_t *p2p_seq;
static int p2p_nseq;

/* RecvPost/Probe/Cancel issued since the program started: the home CM
   answers post N of a re-execution from its log entry for post N. */
static uint64_t p2p_post_no;

static int
relay_init(int world_size)
{
	p2p_seq = calloc((size_t)world_size, sizeof(*p2p_seq));
	if (p2p_seq == NULL)
		return MPI_ERR_NO_MEM;
	p2p_nseq = world_size;
	p2p_post_no = 0;
	return MPI_SUCCESS;
}

static void
relay_fini(void)
{
	free(p2p_seq);
	p2p_seq = NULL;
	p2p_nseq = 0;
}

uint64_t
mpiv_p2p_sent_seq(int dst)
{
	return dst >= 0 && dst < p2p_nseq ? p2p_seq[dst] : 0;
}

void
mpiv_p2p_seq_copy(uint64_t *out, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = i < p2p_nseq ? p2p_seq[i] : 0;
}

static int
relay_send(struct mpiv_request *r)
{
	Mpiv__Send m = MPIV__SEND__INIT;
	size_t bytes = (size_t)r->count * r->dt->size;
	const void *payload = NULL;
	void *owned = NULL;
	int dst, rc;

	dst = mpiv_comm_world_rank(r->comm, r->peer);
	if (dst < 0 || dst >= p2p_nseq)
		return MPI_ERR_RANK;
	if ((rc = mpiv_p2p_payload(r, bytes, &payload, &owned)) !=
	    MPI_SUCCESS)
		return rc;
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
 * One standard send of r's buffer to each of the n world ranks wdst: per
 * CM, one Send frame naming every receiver it is home of (Send.mdst)
 * when it takes multicasts and there are several, else a Send each. A
 * send the CM already holds (a silent re-execution) goes as its check,
 * as in relay_send. Each receiver's channel takes its own next seq, so
 * what a receiver sees is what n sends would have given it. r completes
 * once every frame is written (r->frames_left counts them, plus one
 * held until all are queued).
 */
static int
relay_msend(struct mpiv_request *r, const int *wdst, int n)
{
	size_t bytes = (size_t)r->count * r->dt->size;
	const void *payload = NULL;
	void *packed = NULL;
	int32_t *gd = NULL;
	uint64_t *gs = NULL, digest = 0;
	int ncms = mpiv_tp_ncms(), rc = MPI_SUCCESS;
	bool pointed = false;

	for (int i = 0; i < n; i++)
		if (wdst[i] < 0 || wdst[i] >= p2p_nseq)
			return MPI_ERR_RANK;
	if ((rc = mpiv_p2p_payload(r, bytes, &payload, &packed)) !=
	    MPI_SUCCESS)
		return rc;
	if ((gd = malloc((size_t)n * sizeof(*gd))) == NULL ||
	    (gs = malloc((size_t)n * sizeof(*gs))) == NULL) {
		free(gd);
		free(packed);
		return MPI_ERR_NO_MEM;
	}
	if (mpiv_ndlog_enabled())
		digest = mpiv_digest_send(r->context, r->tag, payload, bytes);
	r->need_ack = false;
	r->frames_left = 1;	/* held until every frame is queued */
	for (int cm = 0; cm < ncms && rc == MPI_SUCCESS; cm++) {
		Mpiv__Send m = MPIV__SEND__INIT;
		int k = 0;

		m.src = mpiv_state.world_rank;
		m.context = r->context;
		m.tag = r->tag;
		m.send_id = mpiv_req_new_id(r);
		m.digest = digest;
		for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
			int d = wdst[i];
			if (mpiv_tp_home(d) != cm)
				continue;
			if (++p2p_seq[d] > mpiv_tp_last_seq(d)) {
				gd[k] = d;
				gs[k++] = p2p_seq[d];
				continue;
			}
			m.dst = d;
			m.seq = p2p_seq[d];
			m.check = true;
			m.size = bytes;
			rc = mpiv_tp_send(cm, MPIV__MSG_TYPE__MSG_SEND, &m.base,
			    NULL, 0, NULL, NULL);
			m.check = false;
			m.size = 0;
		}
		if (k == 0 || rc != MPI_SUCCESS)
			continue;
		/* What this rank decided by itself so far must be durable
		   before a message that may depend on it leaves. */
		if ((rc = mpiv_ndlog_before_frame(cm)) != MPI_SUCCESS)
			break;
		if (!pointed) {
			mpiv_fault_point("send");
			pointed = true;
		}
		for (int i = 0; i < k && rc == MPI_SUCCESS;) {
			void *own = NULL;
			int take = mpiv_tp_mcast(cm) ? k : 1;

			m.dst = gd[i];
			m.seq = gs[i];
			if (take > 1) {
				m.n_mdst = (size_t)take;
				m.mdst = gd;
				m.n_mseq = (size_t)take;
				m.mseq = gs;
			}
			if (packed != NULL && (own = malloc(bytes)) == NULL) {
				rc = MPI_ERR_NO_MEM;
				break;
			}
			if (own != NULL)
				memcpy(own, packed, bytes);
			r->frames_left++;
			rc = mpiv_tp_send(cm, MPIV__MSG_TYPE__MSG_SEND, &m.base,
			    own != NULL ? own : payload, bytes, own, r);
			if (rc != MPI_SUCCESS)
				r->frames_left--;
			i += take;
		}
	}
	free(gd);
	free(gs);
	free(packed);
	if (rc != MPI_SUCCESS)
		return rc;
	mpiv_p2p_send_written(r);	/* the hold */
	return MPI_SUCCESS;
}

/*
 * The frame of type (RecvPost, Probe or Cancel) for request r, as post
 * post_no, to our home CM: the one place these frames are made, for a
 * first post and for a restored clone's repost alike. MPI code.
 */
static int
relay_frame(struct mpiv_request *r, uint16_t type, uint64_t post_no)
{
	int home = mpiv_tp_home(mpiv_state.world_rank);
	Mpiv__RecvPost rp = MPIV__RECV_POST__INIT;
	Mpiv__Probe pr = MPIV__PROBE__INIT;
	Mpiv__Cancel cn = MPIV__CANCEL__INIT;
	ProtobufCMessage *m;

	switch (type) {
	case MPIV__MSG_TYPE__MSG_RECV_POST:
		rp.req_id = r->id;
		rp.context = r->context;
		rp.source = r->post_src;
		rp.tag = r->post_tag;
		rp.post_no = post_no;
		m = &rp.base;
		break;
	case MPIV__MSG_TYPE__MSG_PROBE:
		pr.req_id = r->id;
		pr.context = r->context;
		pr.source = r->post_src;
		pr.tag = r->post_tag;
		pr.blocking = r->post_blocking;
		pr.post_no = post_no;
		m = &pr.base;
		break;
	default:
		cn.req_id = r->id;
		cn.post_no = post_no;
		m = &cn.base;
		break;
	}
	return mpiv_tp_send(home, type, m, NULL, 0, NULL, NULL);
}

/*
 * A new post to our home CM: pending outcomes go first, then the frame
 * with the next post number (*post_no).
 */
static int
relay_post(struct mpiv_request *r, uint16_t type, uint64_t *post_no)
{
	int rc;

	if ((rc = mpiv_ndlog_before_frame(mpiv_tp_home(
	    mpiv_state.world_rank))) != MPI_SUCCESS)
		return rc;
	*post_no = ++p2p_post_no;
	return relay_frame(r, type, *post_no);
}

static int
relay_recv(struct mpiv_request *r)
{
	uint64_t post_no = 0;
	int rc;

	r->cap = (size_t)r->count * r->dt->size;
	if (r->cap > 0 && mpiv_p2p_addr(r->buf, r->dt->true_lb) == NULL) {
		mpiv_err_detail("NULL buffer for %zu bytes", r->cap);
		return MPI_ERR_BUFFER;
	}
	(void)mpiv_req_new_id(r);
	r->post_src = r->peer == MPI_ANY_SOURCE ? -1 :
	    mpiv_comm_world_rank(r->comm, r->peer);
	r->post_tag = r->tag == MPI_ANY_TAG ? -1 : r->tag;
	rc = relay_post(r, MPIV__MSG_TYPE__MSG_RECV_POST, &post_no);
	if (rc == MPI_SUCCESS) {
		r->post_no = post_no;
		mpiv_fault_point("post");
		mpiv_ahead_take(r);	/* a replay pushed its delivery */
	}
	return rc;
}


/* A probe request r (context, post_src, post_tag, post_blocking set). */
static int
relay_probe(struct mpiv_request *r)
{
	uint64_t post_no = 0;
	int rc;

	(void)mpiv_req_new_id(r);
	rc = relay_post(r, MPIV__MSG_TYPE__MSG_PROBE, &post_no);
	r->post_no = post_no;
	return rc;
}

/*
 * The Cancel is sent even when the Deliver has already arrived: whether
 * it has is a matter of timing, and post numbers must not depend on it
 * (the CM answers "not cancelled", as it would have anyway). If the CM
 * had already matched the receive, the Deliver comes first on the same
 * connection and the receive completes normally.
 */
static int
relay_cancel(struct mpiv_request *r)
{
	uint64_t post_no = 0;
	int rc;

	rc = relay_post(r, MPIV__MSG_TYPE__MSG_CANCEL, &post_no);
	r->cancel_post_no = post_no;
	return rc;
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

static int
relay_restore(void)
{
	struct p2p_collect cl = { 0 };
	int rc = MPI_SUCCESS;

	mpiv_req_foreach(p2p_restore_one, &cl);
	if (cl.nomem) {
		free(cl.v);
		return MPI_ERR_NO_MEM;
	}
	if (cl.n > 1)
		qsort(cl.v, cl.n, sizeof(*cl.v), p2p_repost_cmp);
	for (size_t i = 0; i < cl.n && rc == MPI_SUCCESS; i++)
		rc = relay_frame(cl.v[i].r, cl.v[i].type, cl.v[i].post_no);
	free(cl.v);
	return rc;
}

const struct mpiv_proto mpiv_proto_relay = {
	.name = "relay",
	.init = relay_init,
	.fini = relay_fini,
	.send = relay_send,
	.msend = relay_msend,
	.recv = relay_recv,
	.probe = relay_probe,
	.cancel = relay_cancel,
	.restore = relay_restore,
	.replaying = mpiv_tp_replaying,
};
