/*
 * comm.c: communicators. A communicator is a group, a pair of context ids
 * (point to point, and +1 for collectives), an error handler, attributes
 * and an optional topology.
 *
 * Context ids are agreed without any central service: each process keeps
 * the next id it may use; a new communicator takes the maximum of that
 * counter over the parent (an allreduce) and everyone moves past it. The
 * contexts of one process's communicators thus strictly increase, so no
 * process ever holds two communicators with the same context, and the
 * choice is a deterministic function of the program (replay-safe).
 *
 * Freed communicators are kept on a free list and reused, so a stale
 * handle to a freed communicator is detected (group == NULL) until reuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

struct mpiv_comm mpiv_comm_world = { .context = 0,
	.errh = &mpiv_errors_are_fatal, .predefined = true,
	.name = "MPI_COMM_WORLD" };
struct mpiv_comm mpiv_comm_self = { .context = 2,
	.errh = &mpiv_errors_are_fatal, .predefined = true,
	.name = "MPI_COMM_SELF" };
struct mpiv_comm mpiv_comm_null = { .context = UINT32_MAX,
	.errh = &mpiv_errors_are_fatal, .predefined = true,
	.name = "MPI_COMM_NULL" };

/* Internal collective tags used while building communicators; the
   collectives of coll.c use tags below 64. */
enum {
	COMM_TAG_CONTEXT = 64,
	COMM_TAG_SPLIT = 65,
	COMM_TAG_NODE = 66,
	COMM_TAG_CREATE_GROUP = 1024,	/* + the user's tag */
};

static uint32_t comm_next_context = 4;
/* The highest pair of context ids: the top bit marks the hidden context
   of non-blocking collectives (MPIV_NBC_CONTEXT). */
#define COMM_CONTEXT_MAX	(MPIV_NBC_CONTEXT_BIT - 4)
static struct mpiv_comm *comm_freelist;	/* linked through world_to_comm */

int mpiv_group_compare(MPI_Group g1, MPI_Group g2);	/* group.c */

int
mpiv_comm_init(int world_rank, int world_size)
{
	struct mpiv_group *wg, *sg;
	int *w2c;

	wg = mpiv_group_new(world_size);
	sg = mpiv_group_new(1);
	w2c = malloc(((size_t)world_size + 1) * sizeof(int));
	if (wg == NULL || sg == NULL || w2c == NULL) {
		mpiv_group_release(wg);
		mpiv_group_release(sg);
		free(w2c);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < world_size; i++) {
		wg->world[i] = i;
		w2c[i] = -1;
	}
	wg->rank = world_rank;
	sg->world[0] = world_rank;
	sg->rank = 0;
	w2c[world_rank] = 0;

	mpiv_comm_world.context = 0;
	mpiv_comm_world.rank = world_rank;
	mpiv_comm_world.size = world_size;
	mpiv_comm_world.group = wg;
	mpiv_comm_world.world_to_comm = NULL;
	mpiv_comm_world.errh = MPI_ERRORS_ARE_FATAL;
	mpiv_comm_world.coll_seq = 0;

	mpiv_comm_self.context = 2;
	mpiv_comm_self.rank = 0;
	mpiv_comm_self.size = 1;
	mpiv_comm_self.group = sg;
	mpiv_comm_self.world_to_comm = w2c;
	mpiv_comm_self.errh = MPI_ERRORS_ARE_FATAL;
	mpiv_comm_self.coll_seq = 0;

	comm_next_context = 4;
	return MPI_SUCCESS;
}

/* Releases what a communicator owns (not the struct itself). */
static void
comm_clear(MPI_Comm c)
{
	if (c->remote != NULL)
		mpiv_inter_clear(c);
	mpiv_comm_info_free(c);
	mpiv_topo_free(c);
	mpiv_group_release(c->group);
	c->group = NULL;
	mpiv_errh_release(c->errh);
	c->errh = MPI_ERRORS_ARE_FATAL;
	free(c->world_to_comm);
	c->world_to_comm = NULL;
}

void
mpiv_comm_finalize(void)
{
	/* MPI-2.2: MPI_Finalize first deletes the attributes of
	   MPI_COMM_SELF, as if the communicator were freed. */
	if (mpiv_comm_self.group != NULL) {
		mpiv_attr_free_all(&mpiv_comm_self);
		comm_clear(&mpiv_comm_self);
	}
	if (mpiv_comm_world.group != NULL) {
		mpiv_attr_free_all(&mpiv_comm_world);
		comm_clear(&mpiv_comm_world);
	}
	while (comm_freelist != NULL) {
		struct mpiv_comm *c = comm_freelist;
		comm_freelist = (struct mpiv_comm *)(void *)c->world_to_comm;
		free(c);
	}
}

int
mpiv_comm_check(MPI_Comm c)
{
	if (c == MPI_COMM_NULL || c->group == NULL)
		return MPI_ERR_COMM;
	return MPI_SUCCESS;
}

uint32_t
mpiv_comm_next_context(void)
{
	return comm_next_context;
}

void
mpiv_comm_skip_context(uint32_t used)
{
	if (used >= comm_next_context)
		comm_next_context = used + 2;
}

int
mpiv_comm_alloc_context(MPI_Comm parent, uint32_t *context)
{
	uint32_t mine = comm_next_context, agreed = 0;
	int rc;

	rc = mpiv_coll_allreduce(&mine, &agreed, 1, MPI_UINT32_T, MPI_MAX,
	    parent, COMM_TAG_CONTEXT);
	if (rc != MPI_SUCCESS)
		return rc;
	if (agreed > COMM_CONTEXT_MAX)
		return MPI_ERR_INTERN;	/* 2^30 communicators: out of ids */
	comm_next_context = agreed + 2;
	*context = agreed;
	return MPI_SUCCESS;
}

int
mpiv_comm_build(struct mpiv_group *group, uint32_t context,
    MPI_Errhandler errh, MPI_Comm *out)
{
	struct mpiv_comm *c;
	int nworld = mpiv_state.world_size;

	for (int i = 0; i < group->size; i++)
		if (group->world[i] >= nworld)
			return MPI_ERR_GROUP;
	if (comm_freelist != NULL) {
		c = comm_freelist;
		comm_freelist = (struct mpiv_comm *)(void *)c->world_to_comm;
		memset(c, 0, sizeof(*c));
	} else if ((c = calloc(1, sizeof(*c))) == NULL)
		return MPI_ERR_NO_MEM;
	c->world_to_comm = malloc(((size_t)nworld + 1) * sizeof(int));
	if (c->world_to_comm == NULL) {
		free(c);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < nworld; i++)
		c->world_to_comm[i] = -1;
	for (int i = 0; i < group->size; i++)
		c->world_to_comm[group->world[i]] = i;
	c->context = context;
	c->group = group;
	mpiv_group_retain(group);
	c->rank = group->rank;
	c->size = group->size;
	c->errh = errh ? errh : MPI_ERRORS_ARE_FATAL;
	mpiv_errh_retain(c->errh);
	*out = c;
	return MPI_SUCCESS;
}

/* Frees a communicator built by mpiv_comm_build (attributes already
   gone): its struct goes to the free list. */
static void
comm_destroy(MPI_Comm c)
{
	comm_clear(c);
	c->world_to_comm = (int *)(void *)comm_freelist;
	comm_freelist = c;
}

void
mpiv_comm_nbc_done(MPI_Comm c)
{
	if (--c->nbc_busy == 0 && c->free_pending)
		comm_destroy(c);
}

void
mpiv_comm_destroy(MPI_Comm c)
{
	comm_destroy(c);
}

/* Calls that work on intracommunicators only: MPI_ERR_COMM, saying so. */
static int
comm_not_inter(MPI_Comm comm, const char *fn)
{
	mpiv_err_detail("not supported on an intercommunicator by mpiv");
	return mpiv_err(comm, MPI_ERR_COMM, fn);
}

/* ---------------- queries ---------------- */

int
MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_rank");
	if (rank == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_rank");
	*rank = comm->rank;
	return MPI_SUCCESS;
}

int
MPI_Comm_size(MPI_Comm comm, int *size)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_size");
	if (size == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_size");
	*size = comm->size;
	return MPI_SUCCESS;
}

int
MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_test_inter");
	if (flag == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_test_inter");
	*flag = comm->remote != NULL;
	return MPI_SUCCESS;
}

int
MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_name");
	if (name == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_set_name");
	snprintf(comm->name, sizeof(comm->name), "%s", name);
	return MPI_SUCCESS;
}

int
MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_name");
	if (name == NULL || resultlen == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_get_name");
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", comm->name);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}

int
MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	int g;

	if (mpiv_comm_check(comm1) != MPI_SUCCESS ||
	    mpiv_comm_check(comm2) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_compare");
	if (result == NULL)
		return mpiv_err(comm1, MPI_ERR_ARG, "MPI_Comm_compare");
	if (comm1 == comm2) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (comm1->remote != NULL || comm2->remote != NULL) {
		*result = mpiv_inter_compare(comm1, comm2);
		return MPI_SUCCESS;
	}
	g = mpiv_group_compare(comm1->group, comm2->group);
	*result = g == MPI_IDENT ? MPI_CONGRUENT : g;
	return MPI_SUCCESS;
}

int
MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_group");
	if (group == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_group");
	mpiv_group_retain(comm->group);
	*group = comm->group;
	return MPI_SUCCESS;
}

/* ---------------- construction ---------------- */

/* Dup without argument checks or error handler. MPI code. */
static int
comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	uint32_t ctx;
	MPI_Comm c;
	int rc;

	if ((rc = mpiv_comm_alloc_context(comm, &ctx)) != MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_comm_build(comm->group, ctx, comm->errh, &c)) !=
	    MPI_SUCCESS)
		return rc;
	if ((rc = mpiv_topo_dup(comm, c)) != MPI_SUCCESS ||
	    (rc = mpiv_comm_info_dup(comm, comm->info, c)) != MPI_SUCCESS ||
	    (rc = mpiv_attr_dup(comm, c)) != MPI_SUCCESS) {
		mpiv_attr_free_all(c);
		comm_destroy(c);
		return rc;
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

int
MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_dup");
	if (newcomm == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_dup");
	if (comm->remote != NULL) {
		rc = mpiv_inter_dup(comm, newcomm);
		return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_dup");
	}
	rc = comm_dup(comm, newcomm);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_dup");
}

/*
 * The context agreement of a dup is one small allreduce over comm that
 * every member makes at the same point of its program (MPI orders
 * collectives on a communicator), so it is done at once, as for
 * MPI_Comm_dup; the request returned is then already complete (a
 * schedule without rounds), and Wait or Test finish it as MPI says.
 * A program whose members block on one another between Comm_idup and
 * its Wait in a way only a deferred agreement would allow is not
 * supported.
 */
int
MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	struct mpiv_nbc *s;
	MPI_Comm c;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_idup");
	if (newcomm == NULL || request == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_idup");
	if (comm->remote != NULL)
		return comm_not_inter(comm, "MPI_Comm_idup");
	if ((s = mpiv_nbc_new(comm)) == NULL)
		return mpiv_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_idup");
	if ((rc = comm_dup(comm, &c)) != MPI_SUCCESS) {
		mpiv_nbc_discard(s);
		return mpiv_err(comm, rc, "MPI_Comm_idup");
	}
	if ((rc = mpiv_nbc_start(s, request)) != MPI_SUCCESS) {
		mpiv_attr_free_all(c);
		comm_destroy(c);
		return mpiv_err(comm, rc, "MPI_Comm_idup");
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

struct comm_member { int key, rank; };

static int
comm_member_cmp(const void *a, const void *b)
{
	const struct comm_member *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * Split without argument checks or error handler: members of the same
 * color, ordered by key then rank in comm. MPI_UNDEFINED gives
 * MPI_COMM_NULL. Used by MPI_Comm_split, topologies and split_type.
 */
int mpiv_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int
mpiv_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	int mine[2] = { color, key }, *all, n = 0, rc;
	struct comm_member *m = NULL;
	struct mpiv_group *g = NULL;
	uint32_t ctx;

	all = malloc(2 * (size_t)comm->size * sizeof(int));
	if (all == NULL)
		return MPI_ERR_NO_MEM;
	rc = mpiv_coll_allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm,
	    COMM_TAG_SPLIT);
	if (rc == MPI_SUCCESS)
		rc = mpiv_comm_alloc_context(comm, &ctx);
	if (rc != MPI_SUCCESS || color == MPI_UNDEFINED) {
		*newcomm = MPI_COMM_NULL;
		goto out_free;
	}
	if ((m = malloc((size_t)comm->size * sizeof(*m))) == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int r = 0; r < comm->size; r++)
		if (all[2 * r] == color) {
			m[n].key = all[2 * r + 1];
			m[n].rank = r;
			n++;
		}
	qsort(m, (size_t)n, sizeof(*m), comm_member_cmp);
	if ((g = mpiv_group_new(n)) == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int i = 0; i < n; i++)
		g->world[i] = comm->group->world[m[i].rank];
	mpiv_group_set_rank(g);
	rc = mpiv_comm_build(g, ctx, comm->errh, newcomm);
	mpiv_group_release(g);
out_free:
	free(m);
	free(all);
	return rc;
}

int
MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_split");
	if (newcomm == NULL || (color < 0 && color != MPI_UNDEFINED))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_split");
	if (comm->remote != NULL)
		rc = mpiv_inter_split(comm, color, key, newcomm);
	else
		rc = mpiv_comm_split(comm, color, key, newcomm);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_split");
}

/*
 * MPI_COMM_TYPE_SHARED groups the ranks whose MPIV_NODE names are equal
 * (the node agent sets it); ranks without MPIV_NODE all count as one node.
 * The color is the lowest comm rank on the same node.
 */
int
MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
    MPI_Comm *newcomm)
{
	char mine[MPI_MAX_PROCESSOR_NAME] = { 0 }, *all;
	const char *node = getenv("MPIV_NODE");
	int color = MPI_UNDEFINED, rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_split_type");
	if (comm->remote != NULL)
		return comm_not_inter(comm, "MPI_Comm_split_type");
	if (newcomm == NULL || (split_type != MPI_COMM_TYPE_SHARED &&
	    split_type != MPI_UNDEFINED))
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_split_type");
	if (node != NULL)
		snprintf(mine, sizeof(mine), "%s", node);
	all = malloc((size_t)comm->size * sizeof(mine));
	if (all == NULL)
		return mpiv_err(comm, MPI_ERR_NO_MEM, "MPI_Comm_split_type");
	rc = mpiv_coll_allgather(mine, sizeof(mine), MPI_CHAR, all,
	    sizeof(mine), MPI_CHAR, comm, COMM_TAG_NODE);
	if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_SHARED)
		for (int r = 0; r < comm->size; r++)
			if (strncmp(all + (size_t)r * sizeof(mine), mine,
			    sizeof(mine)) == 0) {
				color = r;
				break;
			}
	free(all);
	if (rc == MPI_SUCCESS)
		rc = mpiv_comm_split(comm, color, key, newcomm);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(comm, rc, "MPI_Comm_split_type");
}

/* true if every member of group is a member of comm (of its local group). */
static bool
comm_has_group(MPI_Comm comm, MPI_Group group)
{
	for (int i = 0; i < group->size; i++) {
		int w = group->world[i], j;

		if (w < 0 || w >= mpiv_state.world_size)
			return false;
		if (comm->remote == NULL) {
			if (mpiv_comm_from_world(comm, w) < 0)
				return false;
			continue;
		}
		/* an intercommunicator's map is of its remote group */
		for (j = 0; j < comm->group->size &&
		    comm->group->world[j] != w; j++)
			;
		if (j == comm->group->size)
			return false;
	}
	return true;
}

int
MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	uint32_t ctx;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_create");
	if (group == MPI_GROUP_NULL || !comm_has_group(comm, group))
		return mpiv_err(comm, MPI_ERR_GROUP, "MPI_Comm_create");
	if (newcomm == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_create");
	if (comm->remote != NULL) {
		/* MPI-2.2: group is part of the local group, and the new
		   intercommunicator joins it with the part the remote
		   members named (MPI_COMM_NULL where either part is empty):
		   a split by membership, keyed by the rank in group. */
		rc = mpiv_inter_split(comm, group->rank == MPI_UNDEFINED ?
		    MPI_UNDEFINED : 0, group->rank, newcomm);
		return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc,
		    "MPI_Comm_create");
	}
	if ((rc = mpiv_comm_alloc_context(comm, &ctx)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Comm_create");
	if (group->rank == MPI_UNDEFINED) {
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	rc = mpiv_comm_build(group, ctx, comm->errh, newcomm);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_create");
}

/*
 * Collective over the members of group only: they agree on a context
 * through a temporary communicator of the group that borrows comm's
 * collective context, separated from other traffic by the user's tag.
 */
int
MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
    MPI_Comm *newcomm)
{
	MPI_Comm tmp;
	uint32_t mine, agreed = 0;
	int rc, itag;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_create_group");
	if (comm->remote != NULL)
		return comm_not_inter(comm, "MPI_Comm_create_group");
	if (group == MPI_GROUP_NULL || !comm_has_group(comm, group))
		return mpiv_err(comm, MPI_ERR_GROUP, "MPI_Comm_create_group");
	if (newcomm == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_create_group");
	if (tag < 0)
		return mpiv_err(comm, MPI_ERR_TAG, "MPI_Comm_create_group");
	if (group->rank == MPI_UNDEFINED) {
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	if ((rc = mpiv_comm_build(group, comm->context, MPI_ERRORS_RETURN,
	    &tmp)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Comm_create_group");
	itag = COMM_TAG_CREATE_GROUP + tag % (MPI_TAG_UB_VALUE -
	    COMM_TAG_CREATE_GROUP);
	mine = comm_next_context;
	rc = mpiv_coll_allreduce(&mine, &agreed, 1, MPI_UINT32_T, MPI_MAX, tmp,
	    itag);
	comm_destroy(tmp);
	if (rc == MPI_SUCCESS && agreed > COMM_CONTEXT_MAX)
		rc = MPI_ERR_INTERN;
	if (rc != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Comm_create_group");
	comm_next_context = agreed + 2;
	rc = mpiv_comm_build(group, agreed, comm->errh, newcomm);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(comm, rc, "MPI_Comm_create_group");
}

int
MPI_Comm_free(MPI_Comm *comm)
{
	int rc;

	if (comm == NULL || mpiv_comm_check(*comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_free");
	if ((*comm)->predefined)
		return mpiv_err(*comm, MPI_ERR_COMM, "MPI_Comm_free");
	if ((rc = mpiv_attr_free_all(*comm)) != MPI_SUCCESS)
		return mpiv_err(*comm, rc, "MPI_Comm_free");
	if ((*comm)->nbc_busy > 0)
		(*comm)->free_pending = true;	/* nbc.c destroys it */
	else
		comm_destroy(*comm);
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}
