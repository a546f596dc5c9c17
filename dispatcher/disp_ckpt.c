/*
 * disp_ckpt.c: a job's checkpoints as the dispatcher sees them
 * (docs/CHECKPOINT.md): why a job takes none, the images nodes report
 * durable (the newest one per rank is what a restart restores), the
 * checkpoints asked for: by a client (`mpiv checkpoint`) or by a CM
 * whose log of the job outgrew its memory (CmPressure, which can also
 * fail the job when checkpoints free nothing).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

/*
 * Why this job's checkpoints cannot work ("" when they can): no CS, or
 * a node of its ranks without a working CRIU.
 */
void
djob_ckpt_why(const struct djob *j, char *why, size_t n)
{
	bool have_cs = false;

	why[0] = '\0';
	if (j->relay_only)
		return;
	for (int i = 0; i < j->ncss; i++)
		have_cs |= j->css[i] != NULL;
	if (!have_cs) {
		snprintf(why, n, "no checkpoint server");
		return;
	}
	for (int r = 0; r < j->nranks; r++) {
		const struct dpeer *p = j->ranks[r].node;
		if (p != NULL && !p->criu) {
			snprintf(why, n, "node %s has no working CRIU", p->name);
			return;
		}
	}
}

/*
 * A checkpoint of a rank became durable (or failed): counted for the
 * report; the last durable one is what a restart restores.
 */
void
djob_ckpt_taken(struct dpeer *node, const Mpiv__CkptTaken *ct)
{
	struct djob *j = djob_find(node->d, ct->job_id);
	struct drank *rk;

	if (j != NULL && ct->rank >= 0 && ct->rank < j->nranks &&
	    ct->ckpt_no > j->ranks[ct->rank].ckpt_seen)
		j->ranks[ct->rank].ckpt_seen = ct->ckpt_no;
	if (!ct->ok) {
		log_warnx("dispatcher checkpoint %s job=%s rank=%d "
		    "ckpt=%llu node=%s error=\"%s\" inc=%u", ct->skipped ?
		    "skipped" : "failed", ct->job_id, ct->rank,
		    (unsigned long long)ct->ckpt_no, node->name, ct->error,
		    ct->incarnation);
		if (j != NULL && !ct->skipped && ct->rank >= 0 &&
		    ct->rank < j->nranks)
			djob_event(j, "ckpt_failed", ct->rank, ct->incarnation,
			    ct->ckpt_no, node->name, ct->dump_s, ct->upload_s,
			    "%s", ct->error);
		/* Counted and told (disp_warn.c) when it is this node's. */
		if (j != NULL && ct->rank >= 0 && ct->rank < j->nranks &&
		    (j->ranks[ct->rank].node == node ||
		    j->ranks[ct->rank].prev_node == node))
			dwarn_ckpt_taken(j, ct->rank, ct);
		return;
	}
	log_info("dispatcher checkpoint durable job=%s rank=%d ckpt=%llu "
	    "bytes=%llu raw_bytes=%llu dump_s=%.3f upload_s=%.3f node=%s "
	    "inc=%u", ct->job_id, ct->rank, (unsigned long long)ct->ckpt_no,
	    (unsigned long long)ct->bytes, (unsigned long long)ct->raw_bytes,
	    ct->dump_s, ct->upload_s, node->name, ct->incarnation);
	if (j == NULL)
		return;
	if (ct->rank < 0 || ct->rank >= j->nranks ||
	    (j->ranks[ct->rank].node != node &&
	    j->ranks[ct->rank].prev_node != node)) {
		/* Only the node that ran (or runs) the rank checkpoints it. */
		djob_bad_claim(node, j, ct->rank, 0, "checkpoint");
		return;
	}
	rk = &j->ranks[ct->rank];
	if (ct->incarnation != 0 && ct->incarnation < rk->gen_inc) {
		log_info("dispatcher checkpoint of a run that started over "
		    "ignored job=%s rank=%d ckpt=%llu inc=%u", j->id, ct->rank,
		    (unsigned long long)ct->ckpt_no, ct->incarnation);
		return;
	}
	rk->checkpoints++;
	j->checkpoints++;
	djob_event(j, "ckpt", ct->rank, ct->incarnation, ct->ckpt_no,
	    node->name, ct->dump_s, ct->upload_s, "%llu bytes, %llu raw",
	    (unsigned long long)ct->bytes, (unsigned long long)ct->raw_bytes);
	if (ct->ckpt_no > rk->last_ckpt)
		rk->last_ckpt = ct->ckpt_no;
	dwarn_ckpt_taken(j, ct->rank, ct);
}

/* Asks the node of a running rank for a checkpoint now. */
static void
djob_send_ckpt(struct djob *j, int r)
{
	Mpiv__CkptRequest cr = MPIV__CKPT_REQUEST__INIT;

	cr.job_id = j->id;
	cr.rank = r;
	(void)conn_send(j->ranks[r].node->c, MPIV__MSG_TYPE__MSG_CKPT_REQUEST,
	    &cr.base, NULL, 0);
}

/*
 * A CM's log of job j outgrew its --max-memory (CmPressure): the ranks it
 * names are asked for a checkpoint, which alone frees their logs. A job
 * that cannot take checkpoints, or whose CM gave up waiting for them,
 * fails now with one line instead of hanging until its --timeout.
 */
void
djob_cm_pressure(struct dpeer *cm, const Mpiv__CmPressure *p)
{
	struct djob *j = djob_find(cm->d, p->job_id);
	char why[200], msg[640];
	int n = 0;

	if (j == NULL || j->state != DJOB_RUNNING)
		return;
	if (p->give_up) {
		snprintf(msg, sizeof(msg), "%s", p->text != NULL && *p->text ?
		    p->text : "a channel memory gave up: its log is full");
		djob_fail(j, 1, msg);
		return;
	}
	djob_ckpt_why(j, why, sizeof(why));
	if (why[0] != '\0' && p->advisory) {
		log_debug("dispatcher log spilled job=%s cm=%s: no checkpoints "
		    "to free it (%s)", j->id, cm->addr, why);
		return;
	}
	if (why[0] != '\0') {
		snprintf(msg, sizeof(msg), "channel memory %s: the message log "
		    "of job %s fills its --max-memory (%llu of %llu bytes), "
		    "and only checkpoints free a log, which this job cannot "
		    "take (%.100s); raise the cap (mpiv run --cm-max-memory, "
		    "mpiv cm --max-memory)", cm->addr, j->id,
		    (unsigned long long)p->log_bytes,
		    (unsigned long long)p->max_memory, why);
		djob_fail(j, 1, msg);
		return;
	}
	for (size_t i = 0; i < p->n_ranks; i++) {
		int r = p->ranks[i];

		if (r < 0 || r >= j->nranks || !djob_rank_live(&j->ranks[r]) ||
		    !j->ranks[r].started)
			continue;
		djob_send_ckpt(j, r);
		n++;
	}
	log_info("dispatcher log pressure job=%s cm=%s log_bytes=%llu "
	    "max=%llu checkpoints_asked=%d", j->id, cm->addr,
	    (unsigned long long)p->log_bytes,
	    (unsigned long long)p->max_memory, n);
}

/*
 * `mpiv checkpoint`: CkptRequest{job, rank or -1} forwarded to the
 * rank's node (which writes `ckpt` to the rank's ctrl-in pipe).
 * Answered with JobStatus{ok|error}.
 */
void
djob_client_ckpt(struct dpeer *client, const Mpiv__CkptRequest *cr)
{
	struct djob *j = djob_find(client->d, cr->job_id);
	char msg[240], why[200];
	int n = 0;

	if (j == NULL) {
		snprintf(msg, sizeof(msg), "unknown job %.64s", cr->job_id);
		goto fail;
	}
	if (cr->rank < -1 || cr->rank >= j->nranks) {
		snprintf(msg, sizeof(msg), "rank %d out of range (job %s has "
		    "%d rank%s)", cr->rank, j->id, j->nranks,
		    j->nranks == 1 ? "" : "s");
		goto fail;
	}
	if (j->state != DJOB_RUNNING) {
		snprintf(msg, sizeof(msg), "job %s is not running", j->id);
		goto fail;
	}
	djob_ckpt_why(j, why, sizeof(why));
	if (why[0] != '\0') {
		snprintf(msg, sizeof(msg), "checkpoints disabled for job %s: "
		    "%.150s", j->id, why);
		goto fail;
	}
	for (int r = 0; r < j->nranks; r++) {
		if (cr->rank >= 0 && r != cr->rank)
			continue;
		if (!djob_rank_live(&j->ranks[r]) || !j->ranks[r].started)
			continue;
		djob_send_ckpt(j, r);
		n++;
	}
	if (n == 0) {
		if (cr->rank >= 0)
			snprintf(msg, sizeof(msg), "rank %d of job %s is not "
			    "running, try again", cr->rank, j->id);
		else
			snprintf(msg, sizeof(msg), "job %s has no running "
			    "rank", j->id);
		goto fail;
	}
	snprintf(msg, sizeof(msg), "checkpoint requested from %d rank%s of "
	    "job %s", n, n == 1 ? "" : "s", j->id);
	djob_kill_reply(client, cr->job_id, true, msg);
	return;
fail:
	djob_kill_reply(client, cr->job_id, false, msg);
}
