/*
 * disp_deadlock.c: a job whose every rank waits for another, with no
 * message moving, is deadlocked: a receive from a rank that finished,
 * two ranks that receive from each other, a collective one rank never
 * enters. Such a job would wait until its --timeout, or forever; it is
 * told instead (docs/CONTRACTS.md, "Deadlocks").
 *
 * What the dispatcher knows: a rank blocked in an MPI call for a second
 * says so (libmpi-lite/waitrep.c), and again every second while it
 * stays; its home CM passes each WaitState on, stamped with the rank
 * and incarnation its session proved. Each carries the rank's count of
 * messages sent and received so far.
 *
 * The rule: the job runs, no condition that holds messages back for a
 * reason of its own holds (waiting for slots or services, a stalled
 * server, log pressure), and every rank either ended for good
 * or is a started current incarnation whose last WaitState is fresh
 * (DDL_FRESH) and not over; and no rank's wait or count changed for the
 * job's deadlock_after. A message in flight would be received, or
 * probed, or its bytes would move, within that time; a killed rank is
 * not waiting (its relaunch is not), nor one that computes, nor one
 * whose reports stopped. Then the "deadlock" warning begins, naming
 * what each rank waits for; with deadlock_abort the job fails with it.
 * Any rank that moves a message, or leaves its wait, clears it.
 *
 * Each wait told is also a job event ("wait", with the seconds it had
 * lasted and what it waits for; "wait_over" when the rank says it
 * ended): the timeline draws them (cli/timeline.c).
 */
#include <stdio.h>
#include <string.h>

#include "disp_priv.h"
#include "log.h"

#define DDL_FRESH	3.5	/* s: ranks say it every second */

/*
 * A CM's WaitState for a rank of one of its jobs. Stale incarnations
 * and unknown jobs or ranks are dropped: the rank that sent it is gone,
 * or the job.
 */
void
ddl_wait_state(struct dpeer *cm, const Mpiv__WaitState *ws)
{
	struct djob *j = djob_find(cm->d, ws->job_id);
	double now = ev_now(cm->d->loop);
	struct drank *rk;
	bool fresh;

	if (j == NULL || j->state != DJOB_RUNNING)
		return;
	if (ws->rank < 0 || ws->rank >= j->nranks) {
		log_debug("dispatcher wait_state job=%s rank=%d: no such rank",
		    j->id, ws->rank);
		return;
	}
	rk = &j->ranks[ws->rank];
	if (ws->incarnation != rk->incarnation || rk->exited)
		return;
	if (ws->over) {
		if (rk->waiting && rk->wait_inc == ws->incarnation &&
		    rk->wait_no == ws->wait_no) {
			rk->waiting = false;
			djob_event(j, "wait_over", ws->rank, ws->incarnation,
			    ws->wait_no, NULL, 0, 0, NULL);
		}
		dwarn_update(j);
		return;
	}
	fresh = !rk->waiting || rk->wait_inc != ws->incarnation ||
	    rk->wait_no != ws->wait_no;
	if (fresh || rk->wait_moved != ws->moved)
		rk->wait_quiet = now;
	rk->waiting = true;
	rk->wait_inc = ws->incarnation;
	rk->wait_no = ws->wait_no;
	rk->wait_moved = ws->moved;
	rk->wait_heard = now;
	rk->waited_s = ws->waited_s >= 0 && ws->waited_s < 1e9 ?
	    ws->waited_s : 0;
	snprintf(rk->wait_what, sizeof(rk->wait_what), "%s",
	    ws->what != NULL ? ws->what : "");
	/* the timeline's waits: from when it began (span1 before) */
	if (fresh)
		djob_event(j, "wait", ws->rank, ws->incarnation, ws->wait_no,
		    NULL, rk->waited_s, 0, "%s", rk->wait_what);
	dwarn_update(j);
}

/* Rank rk of j waits now, as its last WaitState said. */
bool
ddl_rank_waits(const struct djob *j, const struct drank *rk, double now)
{
	return rk->waiting && rk->wait_inc == rk->incarnation && !rk->exited &&
	    now - rk->wait_heard <= DDL_FRESH && j->state == DJOB_RUNNING;
}

/* Appends "; rank R <what>" to text while it fits; false once not. */
static bool
ddl_add(char *text, size_t n, const char *line)
{
	size_t used = strlen(text), len = strlen(line);

	if (used + len + 2 >= n)
		return false;
	memcpy(text + used, line, len + 1);
	return true;
}

/*
 * The job is deadlocked (the rule above); text: the line that says so,
 * with what each rank waits for, as many as fit.
 */
bool
ddl_holds(const struct djob *j, double now, char *text, size_t n)
{
	double quiet = 0;
	int nwait = 0, told = 0;
	char line[300];

	if (j->state != DJOB_RUNNING || j->failed || j->deadlock_after <= 0)
		return false;
	/* held back for a reason of their own (a rank that failed after
	   MPI_Finalize is no such reason: it sent all it ever will) */
	if (j->warn[DWARN_STALLED].active || j->warn[DWARN_PRESSURE].active ||
	    (j->pressure_at > 0 && now - j->pressure_at < DDL_FRESH) ||
	    (j->fin_code == 0 && (j->warn[DWARN_WAITING].seen > 0 ||
	    j->warn[DWARN_WAITING].active)))
		return false;
	for (int r = 0; r < j->nranks; r++) {
		const struct drank *rk = &j->ranks[r];

		if (rk->exited)
			continue;
		if (!rk->started || rk->relaunch || rk->node == NULL ||
		    !ddl_rank_waits(j, rk, now))
			return false;
		if (rk->wait_quiet > quiet)
			quiet = rk->wait_quiet;
		nwait++;
	}
	if (nwait == 0 || now - quiet < j->deadlock_after)
		return false;
	snprintf(text, n, "job %s is deadlocked: for %.0f s every rank has "
	    "waited and no message moved", j->id, now - quiet);
	for (int r = 0; r < j->nranks; r++) {
		const struct drank *rk = &j->ranks[r];

		if (rk->exited)
			snprintf(line, sizeof(line), "; rank %d ended (exit %d)",
			    r, rk->exit_code);
		else
			snprintf(line, sizeof(line), "; rank %d waits %s", r,
			    rk->wait_what[0] != '\0' ? rk->wait_what :
			    "in an MPI call");
		if (!ddl_add(text, n, line))
			break;
		told++;
	}
	if (told < j->nranks) {
		snprintf(line, sizeof(line), " (and %d more ranks: mpiv status "
		    "%s shows each)", j->nranks - told, j->id);
		if (!ddl_add(text, n, line) && n > 4)
			memcpy(text + n - 4, "...", 4);
	}
	return true;
}
