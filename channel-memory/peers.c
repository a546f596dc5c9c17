/*
 * peers.c: where a rank's peers listen, for the direct protocol
 * (docs/DIRECT.md, "Connections"). A rank that takes connections from
 * its peers says its address in its Hello; a rank that wants to reach
 * one asks a CM it is connected to (PeerLookup). The answer (PeerInfo)
 * carries the peer's address and live incarnation, and the key the two
 * share, bound to both their live incarnations (auth_pair_inc_key): the
 * CM holds the job token T, the ranks never do, and a rank gets only the
 * keys of its own pairs (it is authenticated as the incarnation of the
 * rank its Hello named), so a stale incarnation's key opens no link. A peer not connected
 * now, or without an address, is "not found": the asker tries again.
 * Nothing is kept for an unanswered lookup. Connected or not, the answer
 * says whether the peer committed its MPI_Finalize (its last outcome is
 * of kind ND_KIND_FINALIZE); when a rank may leave is finish.c's call.
 */
#include <stdio.h>

#include "auth.h"
#include "cm_priv.h"
#include "log.h"

void
peers_lookup(struct session *s, const Mpiv__PeerLookup *pl)
{
	Mpiv__PeerInfo pi = MPIV__PEER_INFO__INIT;
	struct job *j = s->job;
	struct rank_state *rs;
	uint8_t key[AUTH_HASH_LEN];
	char why[96];

	pi.rank = pl->rank;
	if (pl->rank >= 0 && pl->rank < j->nranks) {
		rs = &j->ranks[pl->rank];
		pi.committed = rs->nnd > 0 &&
		    rs->nd[rs->nnd - 1].kind == ND_KIND_FINALIZE;
	}
	if (pl->rank < 0 || pl->rank >= j->nranks || pl->rank == s->rank) {
		snprintf(why, sizeof(why), "no peer rank %d in job %.32s of "
		    "%d ranks", (int)pl->rank, j->id, (int)j->nranks);
		pi.error = why;
	} else if ((rs = &j->ranks[pl->rank])->sess == NULL) {
		pi.error = "not connected now";
	} else if (rs->listen_addr[0] == '\0') {
		pi.error = "takes no connections";
	} else {
		pi.found = true;
		pi.addr = rs->listen_addr;
		pi.incarnation = rs->incarnation;
		if (j->has_token) {
			/* bound to both live incarnations: a stale one's
			   key opens no link (auth_pair_inc_key) */
			auth_pair_inc_key(j->token, sizeof(j->token),
			    s->rank, s->incarnation, pl->rank,
			    rs->incarnation, key);
			pi.pair_key.data = key;
			pi.pair_key.len = sizeof(key);
		}
	}
	log_debug("cm peer lookup job=%s rank=%d peer=%d found=%d", j->id,
	    s->rank, (int)pl->rank, pi.found);
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_PEER_INFO, &pi.base, NULL,
	    0);
}
