/*
 * intercomm.c: intercommunicators. An intercommunicator joins two
 * disjoint groups: its group, rank and size are the local group's, and
 * point-to-point ranks name the remote group (impl.h's
 * mpiv_comm_world_rank maps them through `remote`; world_to_comm maps
 * the remote members back for statuses).
 *
 * Context ids stay a deterministic function of the program: the two
 * groups each take the maximum of their members' next free id, the two
 * leaders swap theirs, and everyone moves past the larger. An
 * intercommunicator uses two pairs: its own (point to point and
 * collectives) and one for `local`, the intracommunicator of the local
 * group it uses internally (both groups share that pair, which is safe:
 * their members are disjoint and never talk on it to each other).
 *
 * The collectives are in intercomm_coll.c. Creation, dup, split and
 * merge exchange through the leaders with receives that name their
 * source, so a re-executed rank does exactly the same (nothing to log).
 */
#include <stdlib.h>
#include <string.h>

#include "intercomm.h"

/* ---------------- helpers ---------------- */

int
mpiv_inter_lbcast(void *buf, int n, MPI_Datatype dt, int root, MPI_Comm comm,
    int tag)
{
	MPI_Request *reqs;
	int rc = MPI_SUCCESS, k = 0, w;

	if (comm->size == 1)
		return MPI_SUCCESS;
	if (comm->rank != root)
		return mpiv_recv_coll(buf, n, dt, root, tag, comm);
	if ((reqs = malloc((size_t)comm->size * sizeof(*reqs))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int r = 0; r < comm->size && rc == MPI_SUCCESS; r++)
		if (r != root && (rc = mpiv_isend(buf, n, dt, r, tag, comm,
		    MPIV_COLL_CONTEXT(comm), MPIV_SEND_STANDARD, &reqs[k])) ==
		    MPI_SUCCESS)
			k++;
	w = mpiv_waitall(k, reqs, NULL);
	free(reqs);
	return rc != MPI_SUCCESS ? rc : w;
}

static int
inter_bcast_ints(int *buf, int n, int root, MPI_Comm comm, int tag)
{
	return mpiv_inter_lbcast(buf, n, MPI_INT, root, comm, tag);
}

/* Receive on a communicator's point-to-point context. */
static int
inter_recv_p2p_ints(int *buf, int n, int src, int tag, MPI_Comm c)
{
	MPI_Request r;
	int rc;

	rc = mpiv_irecv(buf, n, MPI_INT, src, tag, c, c->context, &r);
	return rc != MPI_SUCCESS ? rc : mpiv_waitall(1, &r, NULL);
}

int
mpiv_inter_exchange(MPI_Comm ic, const int *mine, int nmine, int *theirs,
    int ntheirs)
{
	MPI_Request reqs[2];
	int rc;

	if (ic->rank == 0) {
		rc = mpiv_isend(mine, nmine, MPI_INT, 0, ITAG_EXCHANGE, ic,
		    MPIV_COLL_CONTEXT(ic), MPIV_SEND_STANDARD, &reqs[0]);
		if (rc != MPI_SUCCESS)
			return rc;
		rc = mpiv_irecv(theirs, ntheirs, MPI_INT, 0, ITAG_EXCHANGE,
		    ic, MPIV_COLL_CONTEXT(ic), &reqs[1]);
		if (rc != MPI_SUCCESS)
			reqs[1] = MPI_REQUEST_NULL;
		if (mpiv_waitall(2, reqs, NULL) != MPI_SUCCESS &&
		    rc == MPI_SUCCESS)
			rc = MPI_ERR_INTERN;
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return inter_bcast_ints(theirs, ntheirs, 0, ic->local,
	    LTAG_BCAST_DATA);
}

/* A fresh context id agreed by both groups, npairs pairs from it. */
static int
inter_alloc_context(MPI_Comm ic, int npairs, uint32_t *ctx)
{
	uint32_t mine = mpiv_comm_next_context(), lmax = 0;
	int out[1], in[1], rc;

	rc = mpiv_coll_allreduce(&mine, &lmax, 1, MPI_UINT32_T, MPI_MAX,
	    ic->local, LTAG_MAX);
	if (rc != MPI_SUCCESS)
		return rc;
	out[0] = (int)lmax;
	if ((rc = mpiv_inter_exchange(ic, out, 1, in, 1)) != MPI_SUCCESS)
		return rc;
	if ((uint32_t)in[0] > lmax)
		lmax = (uint32_t)in[0];
	if (lmax > UINT32_MAX - 8)
		return MPI_ERR_INTERN;
	mpiv_comm_skip_context(lmax + 2 * (uint32_t)(npairs - 1));
	*ctx = lmax;
	return MPI_SUCCESS;
}

/*
 * Builds an intercommunicator of local group lg and remote group rg
 * (takes references on both) on contexts ctx (its own) and ctx + 2 (its
 * local intracommunicator).
 */
static int
inter_build(struct mpiv_group *lg, struct mpiv_group *rg, uint32_t ctx,
    MPI_Errhandler errh, MPI_Comm *out)
{
	MPI_Comm c;
	int rc;

	if ((rc = mpiv_comm_build(lg, ctx, errh, &c)) != MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_comm_build(lg, ctx + 2, MPI_ERRORS_RETURN,
	    &c->local)) != MPI_SUCCESS) {
		mpiv_comm_destroy(c);
		return rc;
	}
	for (int i = 0; i < mpiv_state.world_size; i++)
		c->world_to_comm[i] = -1;
	for (int i = 0; i < rg->size; i++)
		c->world_to_comm[rg->world[i]] = i;
	mpiv_group_retain(rg);
	c->remote = rg;
	*out = c;
	return MPI_SUCCESS;
}

void
mpiv_inter_clear(MPI_Comm c)
{
	mpiv_group_release(c->remote);
	c->remote = NULL;
	if (c->local != NULL)
		mpiv_comm_destroy(c->local);
	c->local = NULL;
}

/* A group of the world ranks w[0..n) (refcount 1). */
static struct mpiv_group *
inter_group(const int *w, int n)
{
	struct mpiv_group *g = mpiv_group_new(n);

	if (g == NULL)
		return NULL;
	memcpy(g->world, w, (size_t)n * sizeof(int));
	mpiv_group_set_rank(g);
	return g;
}

/* ---------------- creation ---------------- */

/*
 * The leader's half of MPI_Intercomm_create: checks its own arguments,
 * then swaps [max context, group size] and the group's world ranks with
 * the remote leader on peer_comm (the user's tag, point-to-point
 * context, as the standard describes). On return hdr holds the agreed
 * context and the remote size, *rworld the remote group (malloc'ed).
 */
static int
inter_leader_swap(MPI_Comm lc, MPI_Comm peer_comm, int remote_leader,
    int tag, uint32_t lmax, int *hdr, int **rworld)
{
	MPI_Request reqs[2];
	int rhdr[2] = { 0, 0 }, rc;

	if (mpiv_comm_check(peer_comm) != MPI_SUCCESS)
		return MPI_ERR_COMM;
	if (remote_leader < 0 || remote_leader >=
	    mpiv_comm_peer_group(peer_comm)->size ||
	    (peer_comm->remote == NULL && remote_leader == peer_comm->rank))
		return MPI_ERR_RANK;
	if (tag < 0 || tag > MPI_TAG_UB_VALUE)
		return MPI_ERR_TAG;
	hdr[0] = (int)lmax;
	hdr[1] = lc->size;
	rc = mpiv_isend(hdr, 2, MPI_INT, remote_leader, tag, peer_comm,
	    peer_comm->context, MPIV_SEND_STANDARD, &reqs[0]);
	if (rc != MPI_SUCCESS)
		return rc;
	rc = mpiv_isend(lc->group->world, lc->size, MPI_INT, remote_leader,
	    tag, peer_comm, peer_comm->context, MPIV_SEND_STANDARD, &reqs[1]);
	if (rc != MPI_SUCCESS)
		reqs[1] = MPI_REQUEST_NULL;
	if (mpiv_waitall(2, reqs, NULL) != MPI_SUCCESS && rc == MPI_SUCCESS)
		rc = MPI_ERR_INTERN;
	if (rc == MPI_SUCCESS)
		rc = inter_recv_p2p_ints(rhdr, 2, remote_leader, tag,
		    peer_comm);
	if (rc != MPI_SUCCESS)
		return rc;
	if (rhdr[1] <= 0 || rhdr[1] > mpiv_state.world_size) {
		mpiv_err_detail("the remote leader sent a group of %d ranks",
		    rhdr[1]);
		return MPI_ERR_INTERN;
	}
	if ((*rworld = malloc((size_t)rhdr[1] * sizeof(int))) == NULL)
		return MPI_ERR_NO_MEM;
	if ((rc = inter_recv_p2p_ints(*rworld, rhdr[1], remote_leader, tag,
	    peer_comm)) != MPI_SUCCESS)
		return rc;
	hdr[0] = (uint32_t)rhdr[0] > lmax ? rhdr[0] : (int)lmax;
	hdr[1] = rhdr[1];
	return MPI_SUCCESS;
}

/*
 * Collective over local_comm: every member agrees on its next context
 * (an allreduce), the leader swaps with the remote leader, then tells
 * its group the agreed context and the remote group. A leader that
 * fails (bad peer_comm, remote_leader or tag ...) says so to its group,
 * which fails too rather than wait for ever.
 */
int
MPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
    MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm)
{
	const char *fn = "MPI_Intercomm_create";
	struct mpiv_group *rg = NULL;
	uint32_t mine = mpiv_comm_next_context(), lmax = 0;
	int hdr[2] = { 0, -1 }, *rworld = NULL, rc, lrc = MPI_SUCCESS;
	MPI_Comm lc = local_comm;

	if (mpiv_comm_check(lc) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, fn);
	if (lc->remote != NULL) {
		mpiv_err_detail("local_comm is an intercommunicator");
		return mpiv_err(lc, MPI_ERR_COMM, fn);
	}
	if (newintercomm == NULL)
		return mpiv_err(lc, MPI_ERR_ARG, fn);
	if (local_leader < 0 || local_leader >= lc->size)
		return mpiv_err(lc, MPI_ERR_RANK, fn);
	rc = mpiv_coll_allreduce(&mine, &lmax, 1, MPI_UINT32_T, MPI_MAX, lc,
	    LTAG_MAX);
	if (rc != MPI_SUCCESS)
		return mpiv_err(lc, rc, fn);
	if (lc->rank == local_leader &&
	    (lrc = inter_leader_swap(lc, peer_comm, remote_leader, tag, lmax,
	    hdr, &rworld)) != MPI_SUCCESS)
		hdr[1] = -1;
	/* The agreed context and the remote size (-1: the leader failed),
	   then the remote group. */
	if ((rc = inter_bcast_ints(hdr, 2, local_leader, lc,
	    LTAG_BCAST_HDR)) != MPI_SUCCESS)
		goto out_free;
	if (hdr[1] <= 0) {
		rc = lrc;
		if (rc == MPI_SUCCESS) {
			mpiv_err_detail("the local leader (rank %d) failed",
			    local_leader);
			rc = MPI_ERR_OTHER;
		}
		goto out_free;
	}
	if (rworld == NULL &&
	    (rworld = malloc((size_t)hdr[1] * sizeof(int))) == NULL) {
		rc = MPI_ERR_NO_MEM;	/* the group waits: out of memory */
		goto out_free;
	}
	if ((rc = inter_bcast_ints(rworld, hdr[1], local_leader, lc,
	    LTAG_BCAST_DATA)) != MPI_SUCCESS)
		goto out_free;
	lmax = (uint32_t)hdr[0];
	if (lmax > UINT32_MAX - 8) {
		rc = MPI_ERR_INTERN;
		goto out_free;
	}
	mpiv_comm_skip_context(lmax + 2);
	for (int i = 0; i < hdr[1]; i++)
		if (rworld[i] < 0 || rworld[i] >= mpiv_state.world_size ||
		    mpiv_comm_from_world(lc, rworld[i]) >= 0) {
			mpiv_err_detail("the local and remote groups overlap "
			    "(world rank %d is in both)", rworld[i]);
			rc = MPI_ERR_COMM;
			goto out_free;
		}
	if ((rg = inter_group(rworld, hdr[1])) == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	rc = inter_build(lc->group, rg, lmax, lc->errh, newintercomm);
	mpiv_group_release(rg);
out_free:
	free(rworld);
	return rc == MPI_SUCCESS ? rc : mpiv_err(lc, rc, fn);
}

/*
 * The group with high = false comes first; when both said the same, the
 * group whose leader has the lower world rank. Context agreed over both.
 */
int
MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	const char *fn = "MPI_Intercomm_merge";
	MPI_Comm ic = intercomm;
	struct mpiv_group *g;
	int mine[2], theirs[2], rc, n, lsize, rsize;
	bool local_first;
	uint32_t ctx;

	if (!mpiv_comm_is_inter(ic))
		return mpiv_err(mpiv_comm_check(ic) == MPI_SUCCESS ? ic : NULL,
		    MPI_ERR_COMM, fn);
	if (newintracomm == NULL)
		return mpiv_err(ic, MPI_ERR_ARG, fn);
	mine[0] = high != 0;
	mine[1] = ic->group->world[0];
	if ((rc = mpiv_inter_exchange(ic, mine, 2, theirs, 2)) != MPI_SUCCESS ||
	    (rc = inter_alloc_context(ic, 1, &ctx)) != MPI_SUCCESS)
		return mpiv_err(ic, rc, fn);
	/* Every member uses its leader's high, so the groups agree. */
	if ((rc = inter_bcast_ints(mine, 1, 0, ic->local, LTAG_BCAST_HDR)) !=
	    MPI_SUCCESS)
		return mpiv_err(ic, rc, fn);
	local_first = mine[0] != theirs[0] ? mine[0] == 0 :
	    mine[1] < theirs[1];
	lsize = ic->group->size;
	rsize = ic->remote->size;
	n = lsize + rsize;
	if ((g = mpiv_group_new(n)) == NULL)
		return mpiv_err(ic, MPI_ERR_NO_MEM, fn);
	memcpy(g->world + (local_first ? 0 : rsize), ic->group->world,
	    (size_t)lsize * sizeof(int));
	memcpy(g->world + (local_first ? lsize : 0), ic->remote->world,
	    (size_t)rsize * sizeof(int));
	mpiv_group_set_rank(g);
	rc = mpiv_comm_build(g, ctx, ic->errh, newintracomm);
	mpiv_group_release(g);
	return rc == MPI_SUCCESS ? rc : mpiv_err(ic, rc, fn);
}

int
mpiv_inter_dup(MPI_Comm ic, MPI_Comm *newcomm)
{
	uint32_t ctx;
	MPI_Comm c;
	int rc;

	if ((rc = inter_alloc_context(ic, 2, &ctx)) != MPI_SUCCESS)
		return rc;
	if ((rc = inter_build(ic->group, ic->remote, ctx, ic->errh, &c)) !=
	    MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_comm_info_dup(ic, ic->info, c)) != MPI_SUCCESS ||
	    (rc = mpiv_attr_dup(ic, c)) != MPI_SUCCESS) {
		mpiv_attr_free_all(c);
		mpiv_comm_destroy(c);
		return rc;
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

/* Members of g whose (color, key) pair in ck says `color`, by key then
   rank; NULL with *n 0 when none (or out of memory: *err set). */
static struct mpiv_group *
inter_split_group(const struct mpiv_group *g, const int *ck, int color,
    int *err)
{
	struct mpiv_group *ng;
	int n = 0, *idx;

	if ((idx = malloc(((size_t)g->size + 1) * sizeof(int))) == NULL) {
		*err = MPI_ERR_NO_MEM;
		return NULL;
	}
	for (int r = 0; r < g->size; r++)
		if (ck[2 * r] == color)
			idx[n++] = r;
	/* insertion sort by (key, rank): groups are small */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && ck[2 * idx[j - 1] + 1] >
		    ck[2 * idx[j] + 1]; j--) {
			int t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	ng = n > 0 ? mpiv_group_new(n) : NULL;
	if (n > 0 && ng == NULL)
		*err = MPI_ERR_NO_MEM;
	for (int i = 0; ng != NULL && i < n; i++)
		ng->world[i] = g->world[idx[i]];
	if (ng != NULL)
		mpiv_group_set_rank(ng);
	free(idx);
	return ng;
}

/*
 * MPI-2 intercommunicator split: each local group splits by color; a
 * member's new intercommunicator joins its part with the remote part of
 * the same color (MPI_COMM_NULL when either is empty). One context for
 * every color: the new communicators are disjoint.
 */
int
mpiv_inter_split(MPI_Comm ic, int color, int key, MPI_Comm *newcomm)
{
	int mine[2] = { color, key }, *lck, *rck, rc;
	struct mpiv_group *lg = NULL, *rg = NULL;
	int lsize = ic->group->size, rsize = ic->remote->size;
	uint32_t ctx;

	*newcomm = MPI_COMM_NULL;
	lck = malloc(2 * (size_t)lsize * sizeof(int));
	rck = malloc(2 * (size_t)rsize * sizeof(int));
	if (lck == NULL || rck == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	rc = mpiv_coll_allgather(mine, 2, MPI_INT, lck, 2, MPI_INT, ic->local,
	    LTAG_ALLGATHER);
	if (rc == MPI_SUCCESS)
		rc = mpiv_inter_exchange(ic, lck, 2 * lsize, rck, 2 * rsize);
	if (rc == MPI_SUCCESS)
		rc = inter_alloc_context(ic, 2, &ctx);
	if (rc != MPI_SUCCESS || color == MPI_UNDEFINED)
		goto out_free;
	lg = inter_split_group(ic->group, lck, color, &rc);
	rg = inter_split_group(ic->remote, rck, color, &rc);
	if (rc == MPI_SUCCESS && lg != NULL && rg != NULL)
		rc = inter_build(lg, rg, ctx, ic->errh, newcomm);
out_free:
	if (lg != NULL)
		mpiv_group_release(lg);
	if (rg != NULL)
		mpiv_group_release(rg);
	free(lck);
	free(rck);
	return rc;
}

int mpiv_group_compare(MPI_Group g1, MPI_Group g2);	/* group.c */

/* Comm_compare when one side is an intercommunicator. */
int
mpiv_inter_compare(MPI_Comm c1, MPI_Comm c2)
{
	int l, r;

	if (c1->remote == NULL || c2->remote == NULL)
		return MPI_UNEQUAL;
	l = mpiv_group_compare(c1->group, c2->group);
	r = mpiv_group_compare(c1->remote, c2->remote);
	if (l == MPI_IDENT && r == MPI_IDENT)
		return MPI_CONGRUENT;
	if (l == MPI_UNEQUAL || r == MPI_UNEQUAL)
		return MPI_UNEQUAL;
	return MPI_SIMILAR;
}

/* ---------------- queries ---------------- */

int
MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_remote_size");
	if (comm->remote == NULL) {
		mpiv_err_detail("not an intercommunicator");
		return mpiv_err(comm, MPI_ERR_COMM, "MPI_Comm_remote_size");
	}
	if (size == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_remote_size");
	*size = comm->remote->size;
	return MPI_SUCCESS;
}

int
MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_remote_group");
	if (comm->remote == NULL) {
		mpiv_err_detail("not an intercommunicator");
		return mpiv_err(comm, MPI_ERR_COMM, "MPI_Comm_remote_group");
	}
	if (group == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_remote_group");
	mpiv_group_retain(comm->remote);
	*group = comm->remote;
	return MPI_SUCCESS;
}
