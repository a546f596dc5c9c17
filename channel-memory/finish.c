/*
 * finish.c: the end of a direct job (docs/DIRECT.md, "Finalize"), kept by
 * the job's first CM (cm_index 0), the one place every rank talks to.
 *
 * A rank of a direct job keeps the log of what it sent until no peer can
 * run again and need it. A rank that committed its MPI_Finalize and died
 * before every peer finished must run again too: a peer that had not
 * finished may need its messages. So a rank leaves only once every rank's
 * live incarnation waits at the end of MPI_Finalize, decided here, in one
 * place:
 *
 *   - FinWait from a rank's live incarnation: it waits (its commit is
 *     stored at its home CM); when every rank waits, the job is closed
 *     and FinGo goes to every rank connected.
 *   - The Hello of a newer incarnation of a rank that waited: that
 *     incarnation runs again, its wait is void (unless the job is closed
 *     already: then HelloReply.fin_closed tells it to leave at once, with
 *     the exit code its program ended with, from its FinWait).
 *
 * Closing is final: after it no incarnation runs again, so nobody needs a
 * log that left with its rank. Before it no rank leaves, so every log a
 * re-execution needs is still there. A first CM started again without
 * this state learns "closed" from the dispatcher's JobSetup once any rank
 * left with exit 0, and the waiting ranks say FinWait again.
 */
#include "cm_priv.h"
#include "log.h"

/* Every rank's live incarnation waits: closed, FinGo to those connected. */
static void
finish_close(struct job *j)
{
	Mpiv__FinGo go = MPIV__FIN_GO__INIT;

	j->fin_closed = true;
	log_info("cm finish job=%s: every rank waits at the end of "
	    "MPI_Finalize, they leave", j->id);
	for (int32_t r = 0; r < j->nranks; r++) {
		struct session *rs = j->ranks[r].sess;

		if (rs != NULL && rs->state == SESS_RANK)
			(void)conn_send(rs->c, MPIV__MSG_TYPE__MSG_FIN_GO,
			    &go.base, NULL, 0);
	}
}

bool
finish_hello(struct job *j, int32_t rank, uint32_t incarnation,
    int32_t *code)
{
	struct rank_state *rs = &j->ranks[rank];

	*code = 0;
	if (j->cm_index != 0 || j->fin_closed) {
		if (j->fin_closed)
			*code = rs->fin_code;
		return j->fin_closed;
	}
	if (rs->fin_inc != 0 && incarnation > rs->fin_inc) {
		log_info("cm finish job=%s rank=%d: incarnation %u runs "
		    "again, the wait of %u is void", j->id, rank,
		    incarnation, rs->fin_inc);
		rs->fin_inc = 0;
	}
	return false;
}

void
finish_wait(struct session *s, const Mpiv__FinWait *fw)
{
	Mpiv__FinGo go = MPIV__FIN_GO__INIT;
	struct job *j = s->job;
	struct rank_state *rs = &j->ranks[s->rank];

	if (j->cm_index != 0) {
		log_warnx("cm finish job=%s rank=%d: FinWait sent to CM %d, "
		    "not the job's first: ignored", j->id, s->rank,
		    j->cm_index);
		return;
	}
	if (j->fin_closed) {
		(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_FIN_GO, &go.base,
		    NULL, 0);
		return;
	}
	if (fw->incarnation != s->incarnation ||
	    s->incarnation != rs->incarnation) {
		log_warnx("cm finish job=%s rank=%d: FinWait of incarnation "
		    "%u on the session of %u (live %u): ignored", j->id,
		    s->rank, fw->incarnation, s->incarnation, rs->incarnation);
		return;
	}
	if (rs->fin_inc == s->incarnation)
		return;		/* said again: nothing new */
	rs->fin_inc = s->incarnation;
	rs->fin_code = fw->exit_code;
	log_debug("cm finish job=%s rank=%d incarnation=%u waits", j->id,
	    s->rank, s->incarnation);
	for (int32_t r = 0; r < j->nranks; r++)
		if (j->ranks[r].fin_inc == 0)
			return;
	finish_close(j);
}

void
finish_setup(struct job *j, bool closed)
{
	if (closed && j->cm_index == 0 && !j->fin_closed)
		finish_close(j);
}
