/*
 * group.c: process groups. A group is an ordered list of world ranks with
 * a reference count (communicators share their group). Empty results are
 * MPI_GROUP_EMPTY, as the standard says.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

struct mpiv_group mpiv_group_empty = { .size = 0, .rank = MPI_UNDEFINED,
	.world = NULL, .refcount = 1, .predefined = true };
struct mpiv_group mpiv_group_null = { .size = 0, .rank = MPI_UNDEFINED,
	.world = NULL, .refcount = 1, .predefined = true };

struct mpiv_group *
mpiv_group_new(int size)
{
	struct mpiv_group *g;

	if (size < 0 || (g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->world = malloc(((size_t)size + 1) * sizeof(int));
	if (g->world == NULL) {
		free(g);
		return NULL;
	}
	g->size = size;
	g->rank = MPI_UNDEFINED;
	g->refcount = 1;
	return g;
}

void
mpiv_group_set_rank(struct mpiv_group *g)
{
	g->rank = MPI_UNDEFINED;
	for (int i = 0; i < g->size; i++)
		if (g->world[i] == mpiv_state.world_rank) {
			g->rank = i;
			break;
		}
}

void
mpiv_group_retain(struct mpiv_group *g)
{
	if (g != NULL && !g->predefined)
		g->refcount++;
}

void
mpiv_group_release(struct mpiv_group *g)
{
	if (g == NULL || g->predefined || --g->refcount > 0)
		return;
	free(g->world);
	free(g);
}

/* Hands back a finished group of n members taken from world[], or
   MPI_GROUP_EMPTY when n is 0. */
static int
group_make(const int *world, int n, MPI_Group *out)
{
	struct mpiv_group *g;

	if (n == 0) {
		*out = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	if ((g = mpiv_group_new(n)) == NULL)
		return MPI_ERR_NO_MEM;
	memcpy(g->world, world, (size_t)n * sizeof(int));
	mpiv_group_set_rank(g);
	*out = g;
	return MPI_SUCCESS;
}

/* Number of entries of group_index(g): the world size, or more if g
   names a rank beyond it. */
static int
group_span(MPI_Group g)
{
	int n = mpiv_state.world_size;

	for (int i = 0; i < g->size; i++)
		if (g->world[i] >= n)
			n = g->world[i] + 1;
	return n;
}

/* world rank -> rank in g, or -1 for every world rank (group_span
   entries). NULL when out of memory. */
static int *
group_index(MPI_Group g)
{
	int n = group_span(g);
	int *map;

	if ((map = malloc(((size_t)n + 1) * sizeof(int))) == NULL)
		return NULL;
	for (int i = 0; i < n; i++)
		map[i] = -1;
	for (int i = 0; i < g->size; i++)
		map[g->world[i]] = i;
	return map;
}

/* true if world rank wr is in g, whose index is idx. */
static bool
group_has(MPI_Group g, const int *idx, int wr)
{
	return wr >= 0 && wr < group_span(g) && idx[wr] >= 0;
}

static int
group_fail(int code, const char *fn)
{
	return code == MPI_SUCCESS ? code : mpiv_err(NULL, code, fn);
}

int
MPI_Group_size(MPI_Group group, int *size)
{
	if (group == MPI_GROUP_NULL)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_size");
	if (size == NULL)
		return group_fail(MPI_ERR_ARG, "MPI_Group_size");
	*size = group->size;
	return MPI_SUCCESS;
}

int
MPI_Group_rank(MPI_Group group, int *rank)
{
	if (group == MPI_GROUP_NULL)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_rank");
	if (rank == NULL)
		return group_fail(MPI_ERR_ARG, "MPI_Group_rank");
	*rank = group->rank;
	return MPI_SUCCESS;
}

/* Members ranks[0..n) of group, which must be distinct and valid. */
static int
group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	char *seen;
	int *w, rc;

	if (group == MPI_GROUP_NULL)
		return MPI_ERR_GROUP;
	if (n < 0 || n > group->size)
		return MPI_ERR_ARG;
	if (newgroup == NULL || (n > 0 && ranks == NULL))
		return MPI_ERR_ARG;
	seen = calloc((size_t)group->size + 1, 1);
	w = malloc(((size_t)n + 1) * sizeof(int));
	if (seen == NULL || w == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= group->size || seen[ranks[i]]) {
			rc = MPI_ERR_RANK;
			goto out_free;
		}
		seen[ranks[i]] = 1;
		w[i] = group->world[ranks[i]];
	}
	rc = group_make(w, n, newgroup);
out_free:
	free(seen);
	free(w);
	return rc;
}

/* Everyone but ranks[0..n), which must be distinct and valid. */
static int
group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	char *drop;
	int *w, m = 0, rc;

	if (group == MPI_GROUP_NULL)
		return MPI_ERR_GROUP;
	if (n < 0 || n > group->size || newgroup == NULL ||
	    (n > 0 && ranks == NULL))
		return MPI_ERR_ARG;
	drop = calloc((size_t)group->size + 1, 1);
	w = malloc(((size_t)group->size + 1) * sizeof(int));
	if (drop == NULL || w == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= group->size || drop[ranks[i]]) {
			rc = MPI_ERR_RANK;
			goto out_free;
		}
		drop[ranks[i]] = 1;
	}
	for (int i = 0; i < group->size; i++)
		if (!drop[i])
			w[m++] = group->world[i];
	rc = group_make(w, m, newgroup);
out_free:
	free(drop);
	free(w);
	return rc;
}

int
MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	return group_fail(group_incl(group, n, ranks, newgroup),
	    "MPI_Group_incl");
}

int
MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	return group_fail(group_excl(group, n, ranks, newgroup),
	    "MPI_Group_excl");
}

/* Expands (first, last, stride) triplets into a rank list. */
static int
group_ranges(MPI_Group group, int n, int ranges[][3], int **out, int *nout)
{
	size_t cap = (size_t)group->size + 1, m = 0;
	int *r;

	if (n < 0 || (n > 0 && ranges == NULL))
		return MPI_ERR_ARG;
	if ((r = malloc(cap * sizeof(int))) == NULL)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1];
		int stride = ranges[i][2];
		if (stride == 0 || first < 0 || first >= group->size ||
		    last < 0 || last >= group->size) {
			free(r);
			return stride == 0 ? MPI_ERR_ARG : MPI_ERR_RANK;
		}
		for (long long k = first; stride > 0 ? k <= last : k >= last;
		    k += stride) {
			if (m == cap) {	/* more than size: some repeat */
				free(r);
				return MPI_ERR_RANK;
			}
			r[m++] = (int)k;
		}
	}
	*out = r;
	*nout = (int)m;
	return MPI_SUCCESS;
}

int
MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
    MPI_Group *newgroup)
{
	int *r, m, rc;

	if (group == MPI_GROUP_NULL)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_range_incl");
	rc = group_ranges(group, n, ranges, &r, &m);
	if (rc == MPI_SUCCESS) {
		rc = group_incl(group, m, r, newgroup);
		free(r);
	}
	return group_fail(rc, "MPI_Group_range_incl");
}

int
MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
    MPI_Group *newgroup)
{
	int *r, m, rc;

	if (group == MPI_GROUP_NULL)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_range_excl");
	rc = group_ranges(group, n, ranges, &r, &m);
	if (rc == MPI_SUCCESS) {
		rc = group_excl(group, m, r, newgroup);
		free(r);
	}
	return group_fail(rc, "MPI_Group_range_excl");
}

enum { SET_UNION, SET_INTER, SET_DIFF };

/* Set operations keep the order of group1, then (union) group2's extra
   members in group2's order. */
static int
group_setop(int kind, MPI_Group g1, MPI_Group g2, MPI_Group *newgroup)
{
	int *in2, *in1, *w, m = 0, rc;

	if (g1 == MPI_GROUP_NULL || g2 == MPI_GROUP_NULL)
		return MPI_ERR_GROUP;
	if (newgroup == NULL)
		return MPI_ERR_ARG;
	in1 = group_index(g1);
	in2 = group_index(g2);
	w = malloc(((size_t)g1->size + g2->size + 1) * sizeof(int));
	if (in1 == NULL || in2 == NULL || w == NULL) {
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	for (int i = 0; i < g1->size; i++) {
		int wr = g1->world[i];
		bool both = group_has(g2, in2, wr);
		if (kind == SET_UNION || (kind == SET_INTER && both) ||
		    (kind == SET_DIFF && !both))
			w[m++] = wr;
	}
	if (kind == SET_UNION)
		for (int i = 0; i < g2->size; i++)
			if (!group_has(g1, in1, g2->world[i]))
				w[m++] = g2->world[i];
	rc = group_make(w, m, newgroup);
out_free:
	free(in1);
	free(in2);
	free(w);
	return rc;
}

int
MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return group_fail(group_setop(SET_UNION, group1, group2, newgroup),
	    "MPI_Group_union");
}

int
MPI_Group_intersection(MPI_Group group1, MPI_Group group2,
    MPI_Group *newgroup)
{
	return group_fail(group_setop(SET_INTER, group1, group2, newgroup),
	    "MPI_Group_intersection");
}

int
MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return group_fail(group_setop(SET_DIFF, group1, group2, newgroup),
	    "MPI_Group_difference");
}

int
MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
    MPI_Group group2, int ranks2[])
{
	if (group1 == MPI_GROUP_NULL || group2 == MPI_GROUP_NULL)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_translate_ranks");
	if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
		return group_fail(MPI_ERR_ARG, "MPI_Group_translate_ranks");
	for (int i = 0; i < n; i++) {
		int r = ranks1[i], wr;
		if (r == MPI_PROC_NULL) {
			ranks2[i] = MPI_PROC_NULL;
			continue;
		}
		if (r < 0 || r >= group1->size)
			return group_fail(MPI_ERR_RANK,
			    "MPI_Group_translate_ranks");
		wr = group1->world[r];
		ranks2[i] = MPI_UNDEFINED;
		for (int j = 0; j < group2->size; j++)
			if (group2->world[j] == wr) {
				ranks2[i] = j;
				break;
			}
	}
	return MPI_SUCCESS;
}

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int mpiv_group_compare(MPI_Group g1, MPI_Group g2);
int
mpiv_group_compare(MPI_Group g1, MPI_Group g2)
{
	bool same_order = true;
	int *idx;

	if (g1 == g2)
		return MPI_IDENT;
	if (g1->size != g2->size)
		return MPI_UNEQUAL;
	for (int i = 0; i < g1->size; i++)
		if (g1->world[i] != g2->world[i])
			same_order = false;
	if (same_order)
		return MPI_IDENT;
	if ((idx = group_index(g1)) == NULL)
		return MPI_UNEQUAL;
	for (int i = 0; i < g2->size; i++)
		if (!group_has(g1, idx, g2->world[i])) {
			free(idx);
			return MPI_UNEQUAL;
		}
	free(idx);
	return MPI_SIMILAR;
}

int
MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
	if (group1 == MPI_GROUP_NULL || group2 == MPI_GROUP_NULL)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_compare");
	if (result == NULL)
		return group_fail(MPI_ERR_ARG, "MPI_Group_compare");
	*result = mpiv_group_compare(group1, group2);
	return MPI_SUCCESS;
}

int
MPI_Group_free(MPI_Group *group)
{
	if (group == NULL || *group == MPI_GROUP_NULL ||
	    *group == &mpiv_group_null)
		return group_fail(MPI_ERR_GROUP, "MPI_Group_free");
	mpiv_group_release(*group);
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
