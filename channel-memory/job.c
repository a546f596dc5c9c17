/*
 * job.c: the jobs a CM serves. A job knows its size, which ranks this CM
 * is home of, every rank's live connection and highest incarnation, and
 * the bytes it holds (unexpected messages and the log), which drive
 * back-pressure: beyond --max-memory, senders are paused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"
#include "log.h"

#define JOB_UNCLAIMED 120.0	/* s a job rebuilt from its store waits */

struct job *
job_find(struct cm *cm, const char *id)
{
	struct job *j;

	if (id == NULL)
		return NULL;
	for (j = cm->jobs; j != NULL; j = j->next)
		if (strcmp(j->id, id) == 0)
			return j;
	return NULL;
}

bool
job_is_home(const struct job *j, int32_t rank)
{
	return rank >= 0 && rank < j->nranks && rank % j->ncms == j->cm_index;
}

static void
job_free(struct job *j)
{
	pressure_end(j);
	for (int32_t r = 0; j->ranks != NULL && r < j->nranks; r++) {
		struct rank_state *rs = &j->ranks[r];
		if (!rs->home)
			continue;
		match_fini(&rs->mq, relay_free_msg_cb, NULL);
		evlog_free(j, rs);
		nd_free(j, rs);
		digest_free(j, rs);
		ckpt_free(j, rs);
		replay_reset(rs);
	}
	spill_close(j);
	fileserv_free(j);
	store_close(j, false);	/* kept for the next start (unless ended) */
	ev_timer_stop(j->cm->loop, &j->claim_w);
	free(j->ranks);
	free(j->id);
	free(j);
}

/*
 * Creates the job, or accepts a repeated identical setup. Returns 0, or
 * -1 with *err a reason for the controller.
 */
int
job_setup(struct cm *cm, const char *id, int32_t nranks, int32_t ncms,
    int32_t cm_index, bool relay_only, const char **err)
{
	struct job *j;

	if (id == NULL || *id == '\0') {
		*err = "job setup without a job id";
		return -1;
	}
	if (nranks <= 0 || nranks > CM_MAX_NRANKS || ncms <= 0 ||
	    cm_index < 0 || cm_index >= ncms) {
		*err = "job setup with an invalid nranks/ncms/cm_index";
		return -1;
	}
	if ((j = job_find(cm, id)) != NULL) {
		if (j->nranks == nranks && j->ncms == ncms &&
		    j->cm_index == cm_index && j->relay_only == relay_only)
			return 0;
		*err = "job already set up with different parameters";
		return -1;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->id = strdup(id)) == NULL ||
	    (j->ranks = calloc((size_t)nranks, sizeof(*j->ranks))) == NULL)
		goto nomem;
	j->cm = cm;
	j->spill_fd = -1;
	j->nranks = nranks;
	j->ncms = ncms;
	j->cm_index = cm_index;
	j->relay_only = relay_only;
	for (int32_t r = 0; r < nranks; r++) {
		if (!job_is_home(j, r))
			continue;
		if (match_init(&j->ranks[r].mq, nranks) < 0)
			goto nomem;
		j->ranks[r].home = true;
	}
	j->next = cm->jobs;
	cm->jobs = j;
	log_info("cm job setup job=%s nranks=%d ncms=%d cm_index=%d mode=%s",
	    id, nranks, ncms, cm_index, relay_only ? "relay-only" : "logging");
	return 0;
nomem:
	log_errorx("cm job setup job=%s: out of memory", id);
	if (j != NULL)
		job_free(j);
	*err = "out of memory";
	return -1;
}

/* Ends a job: its rank connections close, its messages and log go. */
/* The job's totals, one greppable line. */
static void
job_log_end(const struct job *j)
{
	log_info("cm job end job=%s messages=%llu bytes=%llu log_entries=%llu "
	    "log_bytes=%llu spill_bytes=%llu spill_file=%llu duplicates=%llu",
	    j->id, (unsigned long long)j->messages,
	    (unsigned long long)j->bytes, (unsigned long long)j->log_entries,
	    (unsigned long long)j->log_bytes,
	    (unsigned long long)j->spill_bytes,
	    (unsigned long long)j->spill_end,
	    (unsigned long long)j->duplicates);
}

void
job_end(struct cm *cm, struct job *j)
{
	struct job **pp;
	struct session *s;

	for (pp = &cm->jobs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	}
	for (s = cm->sessions; s != NULL; s = s->next) {
		if (s->job != j)
			continue;
		relay_send_abort(s);
		s->job = NULL;
		s->state = SESS_DEAD;
		conn_close(s->c, "job ended", true);
	}
	job_log_end(j);
	store_close(j, true);
	job_free(j);
}

static void
job_unclaimed(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct job *j = w->data;

	log_warnx("cm store job=%s: recovered but no dispatcher set it up "
	    "within %.0f s: dropped", j->id, w->repeat);
	job_end(j->cm, j);
}

/* j was rebuilt from its store: it waits for the dispatcher's JobSetup. */
void
job_recovered(struct job *j)
{
	j->recovered = true;
	ev_timer_init(&j->claim_w, job_unclaimed, 0., JOB_UNCLAIMED);
	j->claim_w.data = j;
	ev_timer_again(j->cm->loop, &j->claim_w);
}

void
job_free_all(struct cm *cm)
{
	struct job *j;

	/* Jobs still set up when the CM stops (SIGTERM at teardown may
	   come before the dispatcher's JobEnd): their totals too. */
	while ((j = cm->jobs) != NULL) {
		cm->jobs = j->next;
		job_log_end(j);
		job_free(j);
	}
}

/* Pauses or resumes reading from every rank connection of the job. */
static void
job_throttle(struct job *j, bool on)
{
	struct session *s;

	j->throttled = on;
	for (s = j->cm->sessions; s != NULL; s = s->next) {
		if (s->job != j || s->state != SESS_RANK)
			continue;
		if (on) {
			/* A rank with messages waiting here must still be
			   able to post the receives that drain them, a
			   replaying rank to catch up with its log, and one
			   whose durable checkpoint waits for its mark to
			   send that mark (which frees its log). */
			if (j->ranks[s->rank].home &&
			    (j->ranks[s->rank].mq.nunexpected > 0 ||
			    j->ranks[s->rank].rp.active ||
			    j->ranks[s->rank].ck.early_ckpt != 0 ||
			    j->ranks[s->rank].ck_asked))
				continue;
			s->paused = true;
			conn_pause_read(s->c, true);
		} else if (s->paused) {
			s->paused = false;
			conn_pause_read(s->c, false);
		}
	}
}

/* Bytes the job holds: unexpected payloads, logged payloads, log entries. */
uint64_t
job_held_bytes(const struct job *j)
{
	return j->unexpected_bytes + j->log_bytes + j->log_meta_bytes;
}

/* Pauses senders beyond the cap, resumes them below 3/4 of it. */
void
job_memory_check(struct job *j)
{
	uint64_t held = job_held_bytes(j), max = j->cm->max_memory;

	if (!j->throttled && held > max) {
		if (j->throttle_episodes++ % 1000 == 0)
			log_warnx("cm memory cap reached job=%s unexpected_bytes=%llu "
			    "log_bytes=%llu max=%llu episodes=%llu: pausing "
			    "senders until receivers catch up", j->id,
			    (unsigned long long)j->unexpected_bytes,
			    (unsigned long long)(j->log_bytes + j->log_meta_bytes),
			    (unsigned long long)max,
			    (unsigned long long)j->throttle_episodes);
		job_throttle(j, true);
		pressure_begin(j);
	} else if (j->throttled && held <= max / 4 * 3) {
		log_debug("cm memory below low watermark job=%s held=%llu: "
		    "resuming senders", j->id, (unsigned long long)held);
		job_throttle(j, false);
		pressure_end(j);
	}
}

/* Accounts n more unexpected bytes; beyond the cap, senders are paused. */
void
job_unexpected_add(struct job *j, struct session *sender, uint64_t n)
{
	j->unexpected_bytes += n;
	job_memory_check(j);
}

/* n unexpected bytes are gone (message dropped). */
void
job_unexpected_sub(struct job *j, uint64_t n)
{
	job_unexpected_take(j, n);
	job_memory_check(j);
}

/* n unexpected bytes move elsewhere (the log); the caller rechecks. */
void
job_unexpected_take(struct job *j, uint64_t n)
{
	j->unexpected_bytes -= n < j->unexpected_bytes ? n : j->unexpected_bytes;
}

/*
 * The log grew. Only durable checkpoints free it (ckpt.c): once it alone
 * is over the cap, say so once; senders stay paused rather than the
 * daemon growing without bound.
 */
void
job_log_grew(struct job *j)
{
	uint64_t logged = j->log_bytes + j->log_meta_bytes;

	spill_check(j);
	logged = j->log_bytes + j->log_meta_bytes;
	if (!j->log_cap_said && logged > j->cm->max_memory) {
		j->log_cap_said = true;
		log_warnx("cm job=%s log holds %llu bytes, over --max-memory: "
		    "senders paused, checkpoints asked (pressure.c)", j->id,
		    (unsigned long long)logged);
	}
	job_memory_check(j);
}

/* A rank's session is going: forget it, and drop its posted receives. */
void
job_detach_session(struct job *j, struct session *s)
{
	struct rank_state *rs;

	/* by rank, not state: a session closed for an error is DEAD already */
	if (s->rank < 0 || s->rank >= j->nranks)
		return;
	rs = &j->ranks[s->rank];
	if (rs->sess != s)
		return;
	rs->sess = NULL;
	if (rs->home) {
		match_drop_posted(&rs->mq);
		replay_reset(rs);
	}
}
