/*
 * recover.c: a CM started on a --store directory rebuilds every job whose
 * file it finds there (store.c writes them), before it listens.
 *
 * The records are read in the order they were written and applied as
 * they happened: the job (JobSetup's parameters and token), messages
 * (their sequence numbers and send digests; payloads are only located
 * now), each home rank's decisions (log entries, folded Iprobe misses),
 * its own outcomes, the incarnations that connected, durable checkpoints'
 * trims, digest trims. Then what the trims freed is dropped, each logged
 * delivery's payload is checked against the digest stored with it and
 * left in the file (a replay reads it back, as a spilled one: memory does
 * not limit what can be recovered) or, when it never was complete, waits
 * for its sender's re-send (refill, as when a sender dies mid-payload),
 * and every message no decision delivered is queued again as unexpected,
 * in the order it arrived, its payload in memory. The ranks all restart after a CM crash (their
 * connections to it are gone), restored from their checkpoints or from
 * the beginning, and replay from this log like after any failure.
 *
 * A file that cannot be trusted (a bad record before the end, a payload
 * that does not match its digest, a job that cannot be set up) is
 * removed with one line: the dispatcher then starts the job over.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cm_priv.h"
#include "digest.h"
#include "log.h"

/* A message record, located in the file. */
struct rmsg {
	int32_t src, dst;
	uint64_t seq, send_id, digest, check;
	uint32_t context;
	int32_t tag;
	bool sync, delivered;
	uint64_t off;		/* payload */
	uint32_t len;
};

struct recovery {
	struct job *j;
	int fd;
	struct rmsg *msgs;
	size_t nmsgs, cap;
	uint64_t events, nds;
	bool gap;
};

static int
rmsg_cmp(const void *a, const void *b)
{
	const struct rmsg *x = a, *y = b;

	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The message (dst, src, seq) in the sorted array, the last stored. */
static struct rmsg *
rmsg_find(struct recovery *rc, int32_t dst, int32_t src, uint64_t seq)
{
	size_t lo = 0, hi = rc->nmsgs;
	struct rmsg key = { .src = src, .dst = dst, .seq = seq,
	    .off = UINT64_MAX };

	while (lo < hi) {	/* first element > key */
		size_t mid = (lo + hi) / 2;
		if (rmsg_cmp(&rc->msgs[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct rmsg *m = &rc->msgs[lo - 1];
	return m->dst == dst && m->src == src && m->seq == seq ? m : NULL;
}

static bool
rec_rank_ok(const struct job *j, int32_t r, bool home)
{
	return r >= 0 && r < j->nranks && (!home || j->ranks[r].home);
}

static int
rec_msg(struct recovery *rc, const Mpiv__StoreMsg *sm,
    const struct store_rec *r)
{
	struct job *j = rc->j;
	struct rmsg *m;
	char why[400];

	if (!rec_rank_ok(j, sm->dst, true) || !rec_rank_ok(j, sm->src, false)
	    || sm->seq == 0)
		return -1;
	if (rc->nmsgs == rc->cap) {
		size_t cap = rc->cap ? rc->cap * 2 : 256;
		struct rmsg *n = realloc(rc->msgs, cap * sizeof(*n));
		if (n == NULL)
			return -1;
		rc->msgs = n;
		rc->cap = cap;
	}
	m = &rc->msgs[rc->nmsgs++];
	memset(m, 0, sizeof(*m));
	m->src = sm->src;
	m->dst = sm->dst;
	m->seq = sm->seq;
	m->send_id = sm->send_id;
	m->digest = sm->digest;
	m->check = sm->check;
	m->context = sm->context;
	m->tag = sm->tag;
	m->sync = sm->sync;
	m->off = r->payload_off;
	m->len = r->payload_len;
	if (digest_put(j, sm->dst, sm->src, sm->seq, sm->digest, why,
	    sizeof(why)) < 0)
		log_warnx("cm store job=%s: %s", j->id, why);
	return 0;
}

static int
rec_event(struct recovery *rc, const Mpiv__StoreEvent *se)
{
	struct job *j = rc->j;
	struct rank_state *rs;
	struct logent *e;
	struct post p = { 0 };

	if (!rec_rank_ok(j, se->rcv, true) || se->kind > LOG_CANCEL ||
	    se->event == 0)
		return -1;
	rs = &j->ranks[se->rcv];
	if (se->fold) {
		e = rs->log_tail;
		if (e == NULL || e->kind != LOG_PROBE ||
		    e->event + e->count != se->event)
			return -1;
		e->count++;
		rs->next_event = se->event;
		rc->events++;
		return 0;
	}
	if (se->event != rs->next_event + 1)
		rc->gap = rs->log_broken = true;
	if (se->event <= rs->next_event)
		return -1;
	p.post_no = se->post_no;
	p.context = se->req_context;
	p.source = se->req_source;
	p.tag = se->req_tag;
	p.blocking = se->blocking;
	if ((e = evlog_new(j, se->rcv, (enum log_kind)se->kind, se->event,
	    &p)) == NULL)
		return -1;
	e->found = se->found;
	e->src = se->src;
	e->tag = se->tag;
	e->context = se->context;
	e->seq = se->seq;
	e->size = se->size;
	e->victim_post = se->victim_post;
	rs->next_event = se->event;
	rc->events++;
	return 0;
}

static int
rec_apply(struct recovery *rc, const struct store_rec *r)
{
	struct job *j = rc->j;

	switch (r->type) {
	case STORE_REC_JOB: {
		const Mpiv__StoreJob *sj = (const Mpiv__StoreJob *)r->meta;
		if (strcmp(sj->job_id, j->id) != 0 || sj->nranks != j->nranks
		    || sj->ncms != j->ncms || sj->cm_index != j->cm_index)
			return -1;
		if (sj->job_token.len == sizeof(j->token)) {
			memcpy(j->token, sj->job_token.data, sizeof(j->token));
			j->has_token = true;
		}
		return 0;
	}
	case STORE_REC_MSG:
		return rec_msg(rc, (const Mpiv__StoreMsg *)r->meta, r);
	case STORE_REC_EVENT:
		return rec_event(rc, (const Mpiv__StoreEvent *)r->meta);
	case STORE_REC_ND: {
		const Mpiv__StoreNd *sn = (const Mpiv__StoreNd *)r->meta;
		if (!rec_rank_ok(j, sn->rank, true) || sn->outcome == NULL)
			return -1;
		rc->nds++;
		return nd_restore(j, &j->ranks[sn->rank], sn->outcome);
	}
	case STORE_REC_RANK: {
		const Mpiv__StoreRank *sr = (const Mpiv__StoreRank *)r->meta;
		struct rank_state *rs;
		if (!rec_rank_ok(j, sr->rank, false))
			return -1;
		rs = &j->ranks[sr->rank];
		if (sr->incarnation >= rs->incarnation) {
			rs->incarnation = sr->incarnation;
			rs->resume_event = sr->resume_event;
			rs->resume_nd = sr->resume_nd;
		}
		return 0;
	}
	case STORE_REC_TRIM: {
		const Mpiv__StoreTrim *t = (const Mpiv__StoreTrim *)r->meta;
		struct ckpt_state *ck;
		if (!rec_rank_ok(j, t->rank, true))
			return -1;
		ck = &j->ranks[t->rank].ck;
		if (t->event > ck->freed_event)
			ck->freed_event = t->event;
		if (t->nd_no > ck->freed_nd)
			ck->freed_nd = t->nd_no;
		ck->freed_ckpt = t->ckpt_no;
		ck->freed_inc = t->incarnation;
		return 0;
	}
	case STORE_REC_DIGEST_TRIM: {
		const Mpiv__StoreDigestTrim *t =
		    (const Mpiv__StoreDigestTrim *)r->meta;
		if (!rec_rank_ok(j, t->src, false))
			return -1;
		digest_trim_apply(j, t->src, t->seqs, t->n_seqs);
		return 0;
	}
	default:
		return -1;
	}
}

/* Reads a payload back and checks it against the digest stored with it. */
static struct pbuf *
rec_payload(struct recovery *rc, const struct rmsg *m)
{
	struct pbuf *pb = store_load(rc->j, m->off, m->len);

	if (pb != NULL && mpiv_digest(0, pbuf_data(pb), m->len) != m->check) {
		log_warnx("cm store job=%s: the payload of message src=%d "
		    "dst=%d seq=%" PRIu64 " does not match its digest", rc->j->id,
		    m->src, m->dst, m->seq);
		pbuf_unref(pb);
		return NULL;
	}
	return pb;
}

/* Everything read: trims applied, payloads back, unexpected queued. */
static int
rec_finish(struct recovery *rc, uint64_t *refills, uint64_t *unexpected)
{
	struct job *j = rc->j;
	struct pbuf *pb;

	if (rc->nmsgs > 0)
		qsort(rc->msgs, rc->nmsgs, sizeof(*rc->msgs), rmsg_cmp);
	for (int32_t r = 0; r < j->nranks; r++) {
		struct rank_state *rs = &j->ranks[r];
		uint64_t ents, bytes;

		if (!rs->home)
			continue;
		for (struct logent *e = rs->log_head; e != NULL; e = e->next) {
			struct rmsg *m;
			if (e->kind == LOG_DELIVER &&
			    (m = rmsg_find(rc, r, e->src, e->seq)) != NULL)
				m->delivered = true;
		}
		if (rs->ck.freed_event > 0)
			(void)evlog_trim(j, rs, rs->ck.freed_event, &ents,
			    &bytes);
		if (rs->ck.freed_nd > 0)
			(void)nd_trim(j, rs, rs->ck.freed_nd);
		for (struct logent *e = rs->log_head; e != NULL; e = e->next) {
			struct rmsg *m;
			if (e->kind != LOG_DELIVER)
				continue;
			m = rmsg_find(rc, r, e->src, e->seq);
			if (m == NULL) {	/* its sender sends it again */
				/* counted as held, like a live entry whose
				   payload died with its sender */
				e->refill = true;
				rs->nrefill++;
				j->log_bytes += e->size;
				rs->log_bytes += e->size;
				(*refills)++;
				continue;
			}
			/* checked, then left in the store: a replay reads it
			   back when it needs it, as a spilled payload */
			if (m->len != e->size || (pb = rec_payload(rc, m)) == NULL)
				return -1;
			pbuf_unref(pb);
			e->store_off = m->off;
			e->spilled = true;
			j->spill_bytes += e->size;
		}
	}
	/* sequences: the highest held per channel; a refill is below it */
	for (size_t i = 0; i < rc->nmsgs; i++) {
		struct rmsg *m = &rc->msgs[i];
		struct match_queue *q = &j->ranks[m->dst].mq;
		if (m->seq > q->last_seq[m->src])
			q->last_seq[m->src] = m->seq;
	}
	for (int32_t r = 0; r < j->nranks; r++)
		for (struct logent *e = j->ranks[r].log_head; e != NULL;
		    e = e->next)
			if (e->refill)
				match_seq_rewind(&j->ranks[r].mq, e->src, e->seq);
	/* unexpected messages, in the order they arrived */
	for (size_t i = 0; i < rc->nmsgs; i++) {
		struct rmsg *rm = &rc->msgs[i];
		struct match_req *req, *probes = NULL;
		struct msg *m;

		if (rm->delivered)
			continue;
		if ((m = calloc(1, sizeof(*m))) == NULL)
			return -1;
		if ((m->pb = rec_payload(rc, rm)) == NULL) {
			free(m);
			return -1;
		}
		m->m.context = rm->context;
		m->m.src = rm->src;
		m->m.tag = rm->tag;
		m->dst = rm->dst;
		m->seq = rm->seq;
		m->send_id = rm->send_id;
		m->sync = rm->sync;
		m->store_off = rm->off;
		req = match_arrive(&j->ranks[rm->dst].mq, &m->m, &probes);
		free(req);	/* nothing is posted yet: both NULL */
		free(probes);
		j->unexpected_bytes += rm->len;
		j->messages++;
		j->bytes += rm->len;
		(*unexpected)++;
	}
	return 0;
}

/* Rebuilds the job of one store file; false when the file was dropped. */
static bool
recover_file(struct cm *cm, char *path)
{
	struct recovery rc = { 0 };
	struct store_rec r = { 0 };
	const Mpiv__StoreJob *sj;
	uint64_t off = 0, size, refills = 0, unexpected = 0;
	const char *err = "no job record";
	struct stat sb;
	int fd, n;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		log_warn("cm store %s: cannot open", path);
		err = "cannot open";
		goto bad;
	}
	size = (uint64_t)sb.st_size;
	if ((n = store_read(fd, off, size, &r, &err)) != 1 ||
	    r.type != STORE_REC_JOB)
		goto bad;
	sj = (const Mpiv__StoreJob *)r.meta;
	if (job_find(cm, sj->job_id) != NULL) {
		err = "a second file of the same job";
		goto bad;
	}
	if (job_setup(cm, sj->job_id, sj->nranks, sj->ncms, sj->cm_index,
	    false, &err) < 0)
		goto bad;
	rc.j = job_find(cm, sj->job_id);
	/* the job owns the file from here on: its end removes it */
	if (store_adopt(rc.j, fd, path, size) < 0) {
		fd = -1;
		path = NULL;
		err = "out of memory";
		goto bad;
	}
	fd = -1;
	for (;;) {
		if (rec_apply(&rc, &r) < 0) {
			err = "a record that does not fit the job";
			goto bad;
		}
		off = r.next;
		store_rec_free(&r);
		n = store_read(store_fd(rc.j), off, size, &r, &err);
		if (n == 0)
			break;
		if (n < 0)
			goto bad;
		if (n == 2) {	/* torn last record: its answer never left */
			log_info("cm store job=%s: torn record at offset %"
			    PRIu64 " of %" PRIu64 " cut off", rc.j->id, off,
			    size);
			if (ftruncate(store_fd(rc.j), (off_t)off) < 0) {
				err = "cannot cut the torn record off";
				goto bad;
			}
			store_set_end(rc.j, off);
			break;
		}
	}
	if (rec_finish(&rc, &refills, &unexpected) < 0) {
		err = "a payload that cannot be read back";
		goto bad;
	}
	log_info("cm store recovered job=%s messages=%zu unexpected=%" PRIu64
	    " events=%" PRIu64 " nd=%" PRIu64 " refills=%" PRIu64 " log_bytes=%"
	    PRIu64 "%s", rc.j->id, rc.nmsgs, unexpected, rc.events, rc.nds,
	    refills, rc.j->log_bytes, rc.gap ? " (with gaps: not replayable)"
	    : "");
	job_recovered(rc.j);
	free(rc.msgs);
	return true;
bad:
	store_rec_free(&r);
	log_warnx("cm store %s unusable (%s): removed; its job starts over",
	    path != NULL ? path : rc.j != NULL ? rc.j->id : "?", err);
	if (rc.j != NULL)
		job_end(cm, rc.j);	/* removes the file it owns */
	if (fd >= 0)
		close(fd);
	if (path != NULL && rc.j == NULL) {
		(void)unlink(path);
		free(path);
	}
	free(rc.msgs);
	return false;
}

/* Every job file in --store: rebuilt. Returns how many. */
int
store_recover(struct cm *cm)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (cm->store_dir == NULL || (d = opendir(cm->store_dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char *path;

		if (strncmp(de->d_name, "job-", 4) != 0 || len < 9 ||
		    strcmp(de->d_name + len - 4, ".log") != 0)
			continue;
		if (asprintf(&path, "%s/%s", cm->store_dir, de->d_name) < 0)
			continue;
		n += recover_file(cm, path);
	}
	closedir(d);
	return n;
}
