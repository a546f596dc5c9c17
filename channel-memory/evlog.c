/*
 * evlog.c: the log of a receiver's ordering decisions at its home CM.
 * Every delivery, probe answer and cancel answer is one entry, in event
 * order, keyed by the post number of the request it answered; a delivery
 * shares the message's one payload buffer. Runs of identical Iprobe
 * misses of consecutive posts fold into one entry. For a replay the
 * entries are indexed by post number (sorted array, binary search). A
 * durable checkpoint frees the entries up to its mark (evlog_trim).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

/*
 * Appends a new entry for the answer `event` to post p of receiver rcv.
 * The caller fills in the answer. NULL when out of memory: said once
 * here, and the receiver's log is marked incomplete (no replay later).
 */
struct logent *
evlog_new(struct job *j, int32_t rcv, enum log_kind kind, uint64_t event,
    const struct post *p)
{
	struct rank_state *rs = &j->ranks[rcv];
	struct logent *e;

	if ((e = calloc(1, sizeof(*e))) == NULL) {
		if (!rs->log_broken)
			log_errorx("cm out of memory logging job=%s rcv=%d "
			    "event=%llu: the log of this rank is incomplete, it "
			    "cannot be restarted", j->id, rcv,
			    (unsigned long long)event);
		rs->log_broken = true;
		return NULL;
	}
	e->kind = kind;
	e->rcv = rcv;
	e->event = event;
	e->post_no = p->post_no;
	e->count = 1;
	e->req_context = p->context;
	e->req_source = p->source;
	e->req_tag = p->tag;
	e->blocking = p->blocking;
	if (rs->log_tail != NULL)
		rs->log_tail->next = e;
	else
		rs->log_head = e;
	rs->log_tail = e;
	j->log_entries++;
	j->log_meta_bytes += sizeof(*e);
	return e;
}

/*
 * An Iprobe of post p found nothing and takes `event`: when the last
 * entry is the same miss for the previous post and event, it grows to
 * cover this one too (true); else the caller logs a new entry.
 */
bool
evlog_fold_probe_miss(struct job *j, struct rank_state *rs, uint64_t event,
    const struct post *p)
{
	struct logent *t = rs->log_tail;

	if (t == NULL || t->kind != LOG_PROBE || t->found || t->blocking ||
	    p->blocking || p->post_no == 0 || t->post_no == 0 ||
	    t->post_no + t->count != p->post_no ||
	    t->event + t->count != event || t->req_context != p->context ||
	    t->req_source != p->source || t->req_tag != p->tag)
		return false;
	t->count++;
	return true;
}

void
evlog_free(struct job *j, struct rank_state *rs)
{
	struct logent *e, *next;

	for (e = rs->log_head; e != NULL; e = next) {
		next = e->next;
		if (j != NULL) {
			j->log_meta_bytes -= sizeof(*e);
			if (e->pb != NULL)
				j->log_bytes -= pbuf_len(e->pb);
			spill_forget(j, rs, e);
		}
		pbuf_unref(e->pb);
		free(e);
	}
	rs->log_head = rs->log_tail = NULL;
	rs->log_bytes = 0;
	rs->spill_next = NULL;
}

/* The logged delivery (src, seq) whose payload died with its sender. */
struct logent *
evlog_refill_find(struct rank_state *rs, int32_t src, uint64_t seq)
{
	struct logent *e;

	for (e = rs->log_head; e != NULL; e = e->next)
		if (e->refill && e->src == src && e->seq == seq)
			return e;
	return NULL;
}

/* The last event an entry answered (a folded entry covers several). */
static uint64_t
evlog_last_event(const struct logent *e)
{
	return e->event + e->count - 1;
}

/*
 * An entry whose payload is not all here: its sender died mid-payload
 * (refill) or is still streaming it. Never freed by a checkpoint (a
 * session or a replay may still point at it).
 */
static bool
evlog_busy(const struct logent *e)
{
	return e->refill ||
	    (e->pb != NULL && pbuf_avail(e->pb) < pbuf_len(e->pb));
}

/* Drops from the replay index the entries that end at or before upto. */
static void
evlog_index_prune(struct replay *rp, uint64_t upto)
{
	size_t i, k = 0;

	for (i = 0; i < rp->nindex; i++)
		if (evlog_last_event(rp->index[i]) > upto)
			rp->index[k++] = rp->index[i];
	rp->nindex = k;
	/* the event-ordered copy loses a prefix */
	for (i = 0; i < rp->nbyev && evlog_last_event(rp->byev[i]) <= upto;
	    i++)
		;
	if (i > 0) {
		memmove(rp->byev, rp->byev + i, (rp->nbyev - i) *
		    sizeof(*rp->byev));
		rp->nbyev -= i;
		rp->ev_pos = rp->ev_pos > i ? rp->ev_pos - i : 0;
	}
}

/* How far a trim up to `upto` may go: not past an entry whose payload
   is not all here. */
uint64_t
evlog_trimmable(const struct rank_state *rs, uint64_t upto)
{
	for (const struct logent *e = rs->log_head; e != NULL &&
	    e->event <= upto; e = e->next)
		if (evlog_busy(e))
			return e->event - 1;
	return upto;
}

/*
 * A durable checkpoint made the decisions up to event `upto` useless:
 * frees the entries that end at or before it (their payload references
 * go; the one copy is freed when nothing else holds it) and trims a
 * folded entry that straddles it. Stops before an entry whose payload is
 * not complete. Returns the event up to which nothing is left in the log
 * now; *entries and *bytes get what was freed.
 */
uint64_t
evlog_trim(struct job *j, struct rank_state *rs, uint64_t upto,
    uint64_t *entries, uint64_t *bytes)
{
	struct logent *e;
	uint64_t cut;

	*entries = *bytes = 0;
	upto = evlog_trimmable(rs, upto);
	if (upto == 0)
		return 0;
	/* a replay in progress must not keep pointers to freed entries */
	if (rs->rp.index != NULL)
		evlog_index_prune(&rs->rp, upto);
	while ((e = rs->log_head) != NULL && evlog_last_event(e) <= upto) {
		rs->log_head = e->next;
		if (e->pb != NULL) {
			*bytes += pbuf_len(e->pb);
			j->log_bytes -= pbuf_len(e->pb);
			rs->log_bytes -= pbuf_len(e->pb);
		}
		if (e->spilled)
			*bytes += e->size;
		spill_forget(j, rs, e);
		store_forget(j, e);
		j->log_meta_bytes -= sizeof(*e);
		j->log_entries--;
		(*entries)++;
		pbuf_unref(e->pb);
		free(e);
	}
	if (rs->log_head == NULL)
		rs->log_tail = NULL;
	else if ((e = rs->log_head)->event <= upto) {
		/* folded probe misses across the mark: keep the later ones */
		cut = upto - e->event + 1;
		e->event += cut;
		e->post_no += cut;
		e->count -= cut;
	}
	return upto;
}

static int
evlog_cmp_post(const void *a, const void *b)
{
	const struct logent *x = *(struct logent *const *)a;
	const struct logent *y = *(struct logent *const *)b;

	return x->post_no < y->post_no ? -1 : x->post_no > y->post_no;
}

/*
 * Indexes by post number the entries with events in (from, upto]: a
 * folded entry is in if any of its events is. 0; -1 on ENOMEM; -2 when
 * an entry has no post number (the rank's library did not number its
 * posts: such a log cannot be replayed).
 */
int
evlog_index(struct rank_state *rs, uint64_t from, uint64_t upto,
    struct logent ***out, size_t *n)
{
	struct logent *e, **ix;
	size_t cnt = 0, i = 0;

	*out = NULL;
	*n = 0;
	for (e = rs->log_head; e != NULL && e->event <= upto; e = e->next) {
		if (evlog_last_event(e) <= from)
			continue;
		if (e->post_no == 0)
			return -2;
		cnt++;
	}
	if (cnt == 0)
		return 0;
	if ((ix = calloc(cnt, sizeof(*ix))) == NULL)
		return -1;
	for (e = rs->log_head; e != NULL && i < cnt; e = e->next)
		if (evlog_last_event(e) > from)
			ix[i++] = e;
	qsort(ix, cnt, sizeof(*ix), evlog_cmp_post);
	*out = ix;
	*n = cnt;
	return 0;
}

/* The entry answering post_no (and that answer's event), or NULL. */
struct logent *
evlog_lookup(struct logent **index, size_t n, uint64_t post_no,
    uint64_t *event)
{
	size_t lo = 0, hi = n;
	struct logent *e;

	if (post_no == 0)
		return NULL;
	while (lo < hi) {	/* first entry with post_no > wanted */
		size_t mid = lo + (hi - lo) / 2;
		if (index[mid]->post_no <= post_no)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	e = index[lo - 1];
	if (post_no - e->post_no >= e->count)
		return NULL;
	*event = e->event + (post_no - e->post_no);
	return e;
}

int
evlog_describe_post(char *buf, size_t cap, const struct post *p)
{
	switch (p->kind) {
	case POST_RECV:
		return snprintf(buf, cap, "recv(ctx=%u,src=%d,tag=%d)",
		    p->context, p->source, p->tag);
	case POST_PROBE:
		return snprintf(buf, cap, "%s(ctx=%u,src=%d,tag=%d)",
		    p->blocking ? "probe" : "iprobe", p->context, p->source,
		    p->tag);
	case POST_CANCEL:
		return snprintf(buf, cap, "cancel()");
	}
	return snprintf(buf, cap, "?");
}

int
evlog_describe_entry(char *buf, size_t cap, const struct logent *e)
{
	struct post p = {
		.kind = e->kind == LOG_DELIVER ? POST_RECV :
		    e->kind == LOG_PROBE ? POST_PROBE : POST_CANCEL,
		.context = e->req_context,
		.source = e->req_source,
		.tag = e->req_tag,
		.blocking = e->blocking,
	};

	return evlog_describe_post(buf, cap, &p);
}
