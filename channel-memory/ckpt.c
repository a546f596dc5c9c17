/*
 * ckpt.c: the Channel Memory side of uncoordinated checkpoints
 * (docs/CHECKPOINT.md, "Taking" steps 3 and 7, "Restart" step 3).
 *
 * A rank's CkptMark{k, event, nd_no, post_no} on its home connection is
 * kept with the incarnation that sent it. A checkpoint server's
 * CkptDurable{job, rank, k, incarnation} then frees the rank's log up to
 * the mark's event and its outcomes up to the mark's nd_no, but only when
 * the mark was made by the rank's current incarnation and that
 * incarnation is still connected: a dead incarnation's late checkpoint
 * must not free what its successor's replay needs (the dispatcher may
 * already be restoring an older checkpoint before the successor says
 * hello here). A notice that overtakes its mark waits for it (one per rank; the
 * CS collapses notices to the newest). Notices may come twice (the CS has
 * no ack): the second finds the log free already.
 *
 * A restored incarnation says where its image ends (Hello.resume_event,
 * resume_nd); it is refused when the log before that point is not all
 * here any more (it was freed by a later durable checkpoint), and so is a
 * restart from the beginning once anything was freed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"
#include "srvfault.h"

#define CKPT_MAX_MARKS 64	/* marks kept per rank without a durable one */

static void
ckpt_mark_free(struct job *j, struct ckpt_state *ck)
{
	struct ckpt_mark *m = ck->marks;

	ck->marks = m->next;
	if (ck->marks == NULL)
		ck->marks_tail = NULL;
	ck->nmarks--;
	if (j != NULL)
		j->log_meta_bytes -= sizeof(*m);
	free(m);
}

/* Forgets the marks up to checkpoint k (every mark when k is UINT64_MAX). */
static void
ckpt_drop_marks(struct job *j, struct ckpt_state *ck, uint64_t k)
{
	while (ck->marks != NULL && ck->marks->ckpt_no <= k)
		ckpt_mark_free(j, ck);
}

void
ckpt_free(struct job *j, struct rank_state *rs)
{
	ckpt_drop_marks(j, &rs->ck, UINT64_MAX);
}

/* True when a Hello at (resume_event, resume_nd) is refused only because
   a durable checkpoint freed the log it would replay from. */
bool
ckpt_restore_needed(const struct job *j, int32_t rank, uint64_t resume_event,
    uint64_t resume_nd)
{
	const struct rank_state *rs = &j->ranks[rank];

	return rs->home && !j->relay_only && resume_event <= rs->next_event &&
	    resume_nd <= rs->nd_end && (resume_event < rs->ck.freed_event ||
	    resume_nd < rs->ck.freed_nd);
}

bool
ckpt_resume_check(const struct job *j, int32_t rank, uint32_t inc,
    uint64_t resume_event, uint64_t resume_nd, char *why, size_t cap)
{
	const struct rank_state *rs = &j->ranks[rank];
	const struct ckpt_state *ck = &rs->ck;

	if (!rs->home || j->relay_only)
		return true;
	if (resume_event > rs->next_event) {
		snprintf(why, cap, "rank %d (incarnation %u) resumes at event "
		    "%" PRIu64 " but only %" PRIu64 " events were logged for it",
		    rank, inc, resume_event, rs->next_event);
		return false;
	}
	if (resume_nd > rs->nd_end) {
		snprintf(why, cap, "rank %d (incarnation %u) resumes at "
		    "non-deterministic call %" PRIu64 " but only %" PRIu64
		    " outcomes were stored for it", rank, inc, resume_nd,
		    rs->nd_end);
		return false;
	}
	if (resume_event >= ck->freed_event && resume_nd >= ck->freed_nd)
		return true;
	if (resume_event == 0 && resume_nd == 0)
		snprintf(why, cap, "rank %d (incarnation %u) cannot restart from "
		    "the beginning: its log up to event %" PRIu64 " was freed "
		    "by durable checkpoint %" PRIu64 " (incarnation %u); restore "
		    "that checkpoint or a later one", rank, inc,
		    ck->freed_event, ck->freed_ckpt, ck->freed_inc);
	else
		snprintf(why, cap, "rank %d (incarnation %u) cannot resume at "
		    "event %" PRIu64 " (nd %" PRIu64 "): its log up to event %"
		    PRIu64 " (nd %" PRIu64 ") was freed by durable checkpoint %"
		    PRIu64 " (incarnation %u); restore that checkpoint or a "
		    "later one", rank, inc, resume_event, resume_nd,
		    ck->freed_event, ck->freed_nd, ck->freed_ckpt,
		    ck->freed_inc);
	return false;
}

/*
 * Incarnation inc of a home rank was accepted (before rs->incarnation is
 * raised to it). A newer incarnation makes the marks of older ones
 * useless, and a notice still waiting for an older incarnation's mark.
 */
void
ckpt_hello(struct job *j, int32_t rank, uint32_t inc, uint64_t resume_event,
    uint64_t resume_nd)
{
	struct rank_state *rs = &j->ranks[rank];
	struct ckpt_state *ck = &rs->ck;

	if (!rs->home)
		return;
	rs->resume_event = resume_event;
	rs->resume_nd = resume_nd;
	if (inc > rs->incarnation) {
		if (ck->nmarks > 0)
			log_info("cm ckpt marks dropped job=%s rank=%d inc=%u "
			    "count=%u: incarnation %u connected", j->id, rank,
			    rs->incarnation, ck->nmarks, inc);
		ckpt_drop_marks(j, ck, UINT64_MAX);
		ck->last_ckpt = 0;
		ck->floor_event = resume_event;
		ck->floor_nd = resume_nd;
		if (ck->early_ckpt != 0 && ck->early_inc < inc) {
			log_warnx("cm ckpt durable ignored job=%s rank=%d "
			    "ckpt=%" PRIu64 " inc=%u: its mark never came and "
			    "incarnation %u connected", j->id, rank,
			    ck->early_ckpt, ck->early_inc, inc);
			ck->early_ckpt = 0;
		}
		return;
	}
	/* the same incarnation again: its marks stand */
	if (resume_event > ck->floor_event)
		ck->floor_event = resume_event;
	if (resume_nd > ck->floor_nd)
		ck->floor_nd = resume_nd;
}

/* The durable checkpoint of mark m frees the log it made useless. */
static void
ckpt_apply(struct job *j, int32_t rank, const struct ckpt_mark *m)
{
	struct rank_state *rs = &j->ranks[rank];
	struct ckpt_state *ck = &rs->ck;
	uint64_t entries, bytes, upto, nds, k = m->ckpt_no;

	/* stored first: a crash between the two keeps more log, never less */
	upto = evlog_trimmable(rs, m->event);
	if (upto > ck->freed_event)
		ck->freed_event = upto;
	if (m->nd_no > ck->freed_nd)
		ck->freed_nd = m->nd_no;
	ck->freed_ckpt = k;
	ck->freed_inc = m->incarnation;
	store_trim(j, rank, ck);
	store_sync(j);
	srvfault_point("cm-trim");
	upto = evlog_trim(j, rs, upto, &entries, &bytes);
	nds = nd_trim(j, rs, m->nd_no);
	log_info("cm log freed job=%s rank=%d ckpt=%" PRIu64 " upto_event=%"
	    PRIu64 " entries=%" PRIu64 " bytes=%" PRIu64 " nd_upto=%" PRIu64
	    " nd_records=%" PRIu64 " log_entries=%" PRIu64, j->id, rank, k,
	    upto, entries, bytes, m->nd_no, nds, j->log_entries);
	if (upto < m->event)
		log_info("cm log kept job=%s rank=%d from_event=%" PRIu64
		    ": its payload is still arriving", j->id, rank, upto + 1);
	ckpt_drop_marks(j, ck, k);	/* m is gone from here on */
	job_memory_check(j);
	if (entries > 0)
		pressure_relieved(j, rank);
	/* The rank trims the digests of its sends up to k at every CM. */
	if (rs->sess != NULL) {
		Mpiv__CkptDurable d = MPIV__CKPT_DURABLE__INIT;
		d.job_id = j->id;
		d.rank = rank;
		d.ckpt_no = k;
		d.incarnation = rs->incarnation;
		(void)conn_send(rs->sess->c, MPIV__MSG_TYPE__MSG_CKPT_DURABLE,
		    &d.base, NULL, 0);
	}
}

/* CkptMark on a rank's home connection. */
void
ckpt_mark(struct session *s, const Mpiv__CkptMark *mk)
{
	struct job *j = s->job;
	struct rank_state *rs;
	struct ckpt_state *ck;
	struct ckpt_mark *m;
	uint64_t delivered;
	char why[240];

	if (!job_is_home(j, s->rank)) {
		snprintf(why, sizeof(why), "ckpt mark from rank %d, which this "
		    "CM (index %d of %d) is not home of", s->rank, j->cm_index,
		    j->ncms);
		session_error(s, why);
		return;
	}
	rs = &j->ranks[s->rank];
	ck = &rs->ck;
	if (j->relay_only) {
		log_debug("cm ckpt mark ignored job=%s rank=%d ckpt=%" PRIu64
		    ": relay-only job", j->id, s->rank, mk->ckpt_no);
		return;
	}
	if (rs->ck_asked) {
		/* the checkpoint log pressure asked for: paused again */
		rs->ck_asked = false;
		if (j->throttled && !s->paused && rs->mq.nunexpected == 0 &&
		    !rs->rp.active) {
			s->paused = true;
			conn_pause_read(s->c, true);
		}
	}
	delivered = replay_delivered(rs);
	why[0] = '\0';
	if (mk->ckpt_no == 0)
		snprintf(why, sizeof(why), "ckpt mark with ckpt_no 0 "
		    "(checkpoints count from 1)");
	else if (mk->ckpt_no <= ck->last_ckpt)
		snprintf(why, sizeof(why), "ckpt mark ckpt_no=%" PRIu64
		    " after %" PRIu64 " (checkpoint numbers must increase)",
		    mk->ckpt_no, ck->last_ckpt);
	else if (mk->event > delivered)
		snprintf(why, sizeof(why), "ckpt mark ckpt_no=%" PRIu64
		    " event=%" PRIu64 " beyond the %" PRIu64 " events delivered "
		    "to incarnation %u", mk->ckpt_no, mk->event, delivered,
		    s->incarnation);
	else if (mk->event < ck->floor_event)
		snprintf(why, sizeof(why), "ckpt mark ckpt_no=%" PRIu64
		    " event=%" PRIu64 " before event %" PRIu64 " of the previous "
		    "mark or resume point", mk->ckpt_no, mk->event,
		    ck->floor_event);
	else if (mk->nd_no > rs->nd_end)
		snprintf(why, sizeof(why), "ckpt mark ckpt_no=%" PRIu64
		    " nd_no=%" PRIu64 " beyond the %" PRIu64 " outcomes stored "
		    "(record them before the mark)", mk->ckpt_no, mk->nd_no,
		    rs->nd_end);
	else if (mk->nd_no < ck->floor_nd)
		snprintf(why, sizeof(why), "ckpt mark ckpt_no=%" PRIu64
		    " nd_no=%" PRIu64 " before nd_no %" PRIu64 " of the previous "
		    "mark or resume point", mk->ckpt_no, mk->nd_no,
		    ck->floor_nd);
	if (why[0] != '\0') {
		session_error(s, why);
		return;
	}
	ck->last_ckpt = mk->ckpt_no;
	ck->floor_event = mk->event;
	ck->floor_nd = mk->nd_no;
	log_info("cm ckpt mark job=%s rank=%d inc=%u ckpt=%" PRIu64 " event=%"
	    PRIu64 " nd=%" PRIu64 " post=%" PRIu64, j->id, s->rank,
	    s->incarnation, mk->ckpt_no, mk->event, mk->nd_no, mk->post_no);
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		/* only costs log space: its durable notice frees nothing */
		log_warnx("cm out of memory keeping ckpt mark job=%s rank=%d "
		    "ckpt=%" PRIu64, j->id, s->rank, mk->ckpt_no);
		return;
	}
	if (ck->nmarks >= CKPT_MAX_MARKS) {
		log_debug("cm ckpt mark dropped job=%s rank=%d ckpt=%" PRIu64
		    ": %u marks without a durable checkpoint", j->id, s->rank,
		    ck->marks->ckpt_no, ck->nmarks);
		ckpt_mark_free(j, ck);
	}
	m->incarnation = s->incarnation;
	m->ckpt_no = mk->ckpt_no;
	m->event = mk->event;
	m->nd_no = mk->nd_no;
	m->post_no = mk->post_no;
	if (ck->marks_tail != NULL)
		ck->marks_tail->next = m;
	else
		ck->marks = m;
	ck->marks_tail = m;
	ck->nmarks++;
	j->log_meta_bytes += sizeof(*m);
	if (ck->early_ckpt == 0 || ck->early_inc != m->incarnation)
		return;
	if (ck->early_ckpt == m->ckpt_no) {
		log_info("cm ckpt durable applied job=%s rank=%d ckpt=%" PRIu64
		    ": it came before its mark", j->id, s->rank, m->ckpt_no);
		ck->early_ckpt = 0;
		ckpt_apply(j, s->rank, m);
	} else if (ck->early_ckpt < m->ckpt_no) {
		log_warnx("cm ckpt durable ignored job=%s rank=%d ckpt=%" PRIu64
		    " inc=%u: unknown checkpoint (mark %" PRIu64 " came "
		    "instead)", j->id, s->rank, ck->early_ckpt, ck->early_inc,
		    m->ckpt_no);
		ck->early_ckpt = 0;
	}
}

/* CkptDurable from a checkpoint server's link (s->job is its job). */
void
ckpt_durable(struct session *s, const Mpiv__CkptDurable *d)
{
	struct job *j = s->job;
	struct rank_state *rs;
	struct ckpt_state *ck;
	struct ckpt_mark *m;
	char why[160];

	if (d->job_id != NULL && *d->job_id != '\0' &&
	    strcmp(d->job_id, j->id) != 0 &&
	    (j = job_find(s->cm, d->job_id)) == NULL) {
		log_warnx("cm ckpt durable ignored job=%s rank=%d ckpt=%" PRIu64
		    " peer=%s: unknown job", d->job_id, d->rank, d->ckpt_no,
		    conn_peer(s->c));
		return;
	}
	if (d->rank < 0 || d->rank >= j->nranks) {
		snprintf(why, sizeof(why), "ckpt durable for rank %d out of "
		    "range (job %.64s has %d ranks)", d->rank, j->id,
		    j->nranks);
		session_error(s, why);
		return;
	}
	if (!job_is_home(j, d->rank) || j->relay_only) {
		log_warnx("cm ckpt durable ignored job=%s rank=%d ckpt=%" PRIu64
		    ": %s", j->id, d->rank, d->ckpt_no, j->relay_only ?
		    "relay-only job (no log)" : "this CM is not its home");
		return;
	}
	rs = &j->ranks[d->rank];
	ck = &rs->ck;
	if (d->incarnation < rs->incarnation) {
		log_warnx("cm ckpt durable ignored job=%s rank=%d ckpt=%" PRIu64
		    " inc=%u: stale incarnation (current is %u)", j->id,
		    d->rank, d->ckpt_no, d->incarnation, rs->incarnation);
		return;
	}
	if (d->incarnation == rs->incarnation && rs->sess == NULL) {
		log_warnx("cm ckpt durable ignored job=%s rank=%d ckpt=%" PRIu64
		    " inc=%u: that incarnation is gone (its successor may "
		    "restore an older checkpoint)", j->id, d->rank, d->ckpt_no,
		    d->incarnation);
		return;
	}
	if (d->incarnation == ck->freed_inc && d->ckpt_no <= ck->freed_ckpt &&
	    d->ckpt_no != 0) {
		log_debug("cm ckpt durable again job=%s rank=%d ckpt=%" PRIu64
		    " inc=%u: already applied", j->id, d->rank, d->ckpt_no,
		    d->incarnation);
		return;
	}
	for (m = ck->marks; m != NULL; m = m->next)
		if (m->ckpt_no == d->ckpt_no &&
		    m->incarnation == d->incarnation)
			break;
	if (m != NULL && d->incarnation == rs->incarnation) {
		ckpt_apply(j, d->rank, m);
		return;
	}
	if (d->ckpt_no != 0 && (d->incarnation > rs->incarnation ||
	    d->ckpt_no > ck->last_ckpt)) {
		/* overtook its mark: keep the newest such notice */
		if (ck->early_ckpt == 0 || d->incarnation > ck->early_inc ||
		    (d->incarnation == ck->early_inc &&
		    d->ckpt_no > ck->early_ckpt)) {
			ck->early_ckpt = d->ckpt_no;
			ck->early_inc = d->incarnation;
		}
		log_info("cm ckpt durable before its mark job=%s rank=%d ckpt=%"
		    PRIu64 " inc=%u: applied when the mark arrives", j->id,
		    d->rank, d->ckpt_no, d->incarnation);
		/* back-pressure must not keep the mark unread */
		if (rs->sess != NULL && rs->sess->paused) {
			rs->sess->paused = false;
			conn_pause_read(rs->sess->c, false);
		}
		return;
	}
	log_warnx("cm ckpt durable ignored job=%s rank=%d ckpt=%" PRIu64
	    " inc=%u: unknown checkpoint (no such mark)", j->id, d->rank,
	    d->ckpt_no, d->incarnation);
}
