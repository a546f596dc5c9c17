/* group: Group_size/rank/incl/excl/range_incl/range_excl/union/
 * intersection/difference/translate_ranks/compare/free, GROUP_EMPTY. */
#include "mpitest.h"

static void members_are(MPI_Group g, const int *want, int n, const char *what)
{
	MPI_Group wg;
	int sz, *idx = malloc((n + 1) * sizeof(int)), *out = malloc((n + 1) * sizeof(int));
	MPI_OK(MPI_Group_size(g, &sz));
	CHECK(sz == n, "%s: size %d, want %d", what, sz, n);
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	for (int i = 0; i < n; i++)
		idx[i] = i;
	if (n > 0)
		MPI_OK(MPI_Group_translate_ranks(g, n, idx, wg, out));
	for (int i = 0; i < n; i++)
		CHECK(out[i] == want[i], "%s: member %d is world %d, want %d", what, i, out[i], want[i]);
	int myr, expect = MPI_UNDEFINED;
	for (int i = 0; i < n; i++)
		if (want[i] == t_rank)
			expect = i;
	MPI_OK(MPI_Group_rank(g, &myr));
	CHECK(myr == expect, "%s: Group_rank %d, want %d", what, myr, expect);
	MPI_OK(MPI_Group_free(&wg));
	free(idx);
	free(out);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "group");
	int n = t_size, res;
	MPI_Group w, a, b, u, in, d, e, rg;
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
	int *all = calloc(n, sizeof(int)), *tmp = calloc(n, sizeof(int)), k;
	for (int i = 0; i < n; i++)
		all[i] = i;
	members_are(w, all, n, "world group");

	/* a = reverse of world */
	for (int i = 0; i < n; i++)
		tmp[i] = n - 1 - i;
	MPI_OK(MPI_Group_incl(w, n, tmp, &a));
	members_are(a, tmp, n, "incl reversed");
	MPI_OK(MPI_Group_compare(w, a, &res));
	CHECK_INT(res, n == 1 ? MPI_IDENT : MPI_SIMILAR, "compare(world, reversed)");
	MPI_OK(MPI_Group_compare(w, w, &res));
	CHECK_INT(res, MPI_IDENT, "compare(world, world)");

	/* b = world without multiples of 3 */
	k = 0;
	for (int i = 0; i < n; i += 3)
		tmp[k++] = i;
	MPI_OK(MPI_Group_excl(w, k, tmp, &b));
	{
		int m = 0;
		for (int i = 0; i < n; i++)
			if (i % 3)
				tmp[m++] = i;
		members_are(b, tmp, m, "excl multiples of 3");
	}
	/* union(b, a): b's members first, then a's not in b (in a's order) */
	MPI_OK(MPI_Group_union(b, a, &u));
	{
		int m = 0;
		for (int i = 0; i < n; i++)
			if (i % 3)
				tmp[m++] = i;
		for (int i = n - 1; i >= 0; i--)
			if (i % 3 == 0)
				tmp[m++] = i;
		members_are(u, tmp, m, "union");
	}
	/* intersection(a, b): in a's order */
	MPI_OK(MPI_Group_intersection(a, b, &in));
	{
		int m = 0;
		for (int i = n - 1; i >= 0; i--)
			if (i % 3)
				tmp[m++] = i;
		members_are(in, tmp, m, "intersection");
	}
	/* difference(a, b): a's members not in b = multiples of 3, reversed */
	MPI_OK(MPI_Group_difference(a, b, &d));
	{
		int m = 0;
		for (int i = n - 1; i >= 0; i--)
			if (i % 3 == 0)
				tmp[m++] = i;
		members_are(d, tmp, m, "difference");
	}
	/* difference(w, w) is empty, compare to GROUP_EMPTY */
	MPI_OK(MPI_Group_difference(w, w, &e));
	members_are(e, tmp, 0, "difference(w,w)");
	MPI_OK(MPI_Group_compare(e, MPI_GROUP_EMPTY, &res));
	CHECK_INT(res, MPI_IDENT, "compare(empty, GROUP_EMPTY)");
	int sz;
	MPI_OK(MPI_Group_size(MPI_GROUP_EMPTY, &sz));
	CHECK_INT(sz, 0, "GROUP_EMPTY size");
	MPI_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &sz));
	CHECK_INT(sz, MPI_UNDEFINED, "GROUP_EMPTY rank");

	/* range_incl: [n-1 down to 0 step -2] and [0..0] */
	int ranges[2][3] = { { n - 1, 0, -2 }, { 0, 0, 1 } };
	int nr = (n - 1) % 2 == 0 ? 1 : 2;	/* avoid listing 0 twice */
	MPI_OK(MPI_Group_range_incl(w, nr, ranges, &rg));
	{
		int m = 0;
		for (int i = n - 1; i >= 0; i -= 2)
			tmp[m++] = i;
		if (nr == 2)
			tmp[m++] = 0;
		members_are(rg, tmp, m, "range_incl");
	}
	MPI_OK(MPI_Group_free(&rg));
	int rx[1][3] = { { 1, n - 1, 2 } };
	if (n > 1) {
		MPI_OK(MPI_Group_range_excl(w, 1, rx, &rg));
		int m = 0;
		for (int i = 0; i < n; i += 2)
			tmp[m++] = i;
		members_are(rg, tmp, m, "range_excl odd");
		MPI_OK(MPI_Group_free(&rg));
	}

	/* translate_ranks with PROC_NULL and a non-member */
	if (n >= 3) {
		int src[3] = { 0, MPI_PROC_NULL, 1 }, dst[3];
		MPI_OK(MPI_Group_translate_ranks(a, 3, src, b, dst));
		/* a[0] = n-1, a[1] = n-2 */
		CHECK_INT(dst[1], MPI_PROC_NULL, "translate PROC_NULL");
		int w0 = n - 1, w1 = n - 2;
		int want0 = w0 % 3 ? w0 - w0 / 3 - 1 : MPI_UNDEFINED;
		int want2 = w1 % 3 ? w1 - w1 / 3 - 1 : MPI_UNDEFINED;
		CHECK_INT(dst[0], want0, "translate a[0] into b");
		CHECK_INT(dst[2], want2, "translate a[1] into b");
	}
	/* groups of communicators from split match */
	MPI_Comm c;
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, t_rank, &c));
	MPI_Group cg;
	MPI_OK(MPI_Comm_group(c, &cg));
	{
		int m = 0;
		for (int i = t_rank % 2; i < n; i += 2)
			tmp[m++] = i;
		members_are(cg, tmp, m, "group of split comm");
	}
	MPI_OK(MPI_Group_free(&cg));
	MPI_OK(MPI_Comm_free(&c));
	MPI_Group *gs[] = { &w, &a, &b, &u, &in, &d, &e };
	for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
		MPI_OK(MPI_Group_free(gs[i]));
		CHECK(*gs[i] == MPI_GROUP_NULL, "Group_free handle");
	}
	free(all);
	free(tmp);
	t_mix_int(n);
	return t_finish();
}
