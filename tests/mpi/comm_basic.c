/* comm_basic: Comm_dup/split (incl. MPI_UNDEFINED color)/free/compare/
 * create/create_group, names, Comm_test_inter, Comm_split_type,
 * MPI_TAG_UB and other predefined attributes, user keyvals with copy and
 * delete callbacks. */
#include "mpitest.h"

static int copies, deletes;

static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
	copies++;
	*(void **)out = (char *)in + 1;
	*flag = 1;
	return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int key, void *val, void *extra)
{
	deletes++;
	CHECK(extra == &deletes, "delete callback extra_state");
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "comm_basic");
	int res, r, n, flag;
	MPI_Comm dup, sp, undef, cr, cg;

	MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
	CHECK_INT(res, MPI_IDENT, "compare(world, world)");
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
	CHECK_INT(res, MPI_CONGRUENT, "compare(world, dup)");
	MPI_OK(MPI_Comm_rank(dup, &r));
	CHECK_INT(r, t_rank, "dup rank");

	/* split reversing order: same group, different order => SIMILAR */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -t_rank, &sp));
	MPI_OK(MPI_Comm_rank(sp, &r));
	CHECK_INT(r, t_size - 1 - t_rank, "reversed split rank");
	MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, sp, &res));
	CHECK_INT(res, t_size == 1 ? MPI_CONGRUENT : MPI_SIMILAR, "compare(world, reversed)");
	MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
	CHECK_INT(res, t_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "compare(world, self)");

	/* MPI_UNDEFINED color: rank 0 gets COMM_NULL */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank == 0 ? MPI_UNDEFINED : 1, t_rank, &undef));
	if (t_rank == 0) {
		CHECK(undef == MPI_COMM_NULL, "UNDEFINED color did not give COMM_NULL");
	} else {
		MPI_OK(MPI_Comm_size(undef, &n));
		CHECK_INT(n, t_size - 1, "split without rank 0 size");
		MPI_OK(MPI_Comm_rank(undef, &r));
		CHECK_INT(r, t_rank - 1, "split without rank 0 rank");
		int s = 0;
		MPI_OK(MPI_Allreduce(&t_rank, &s, 1, MPI_INT, MPI_SUM, undef));
		CHECK_INT(s, t_size * (t_size - 1) / 2, "Allreduce on split without rank 0");
		MPI_OK(MPI_Comm_free(&undef));
	}

	/* Comm_create with the even ranks (collective over world) */
	MPI_Group wg, eg;
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	int ne = (t_size + 1) / 2, *ev = malloc(ne * sizeof(int));
	for (int i = 0; i < ne; i++)
		ev[i] = 2 * i;
	MPI_OK(MPI_Group_incl(wg, ne, ev, &eg));
	MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, eg, &cr));
	if (t_rank % 2) {
		CHECK(cr == MPI_COMM_NULL, "Comm_create gave a comm to a non-member");
	} else {
		MPI_OK(MPI_Comm_rank(cr, &r));
		CHECK_INT(r, t_rank / 2, "Comm_create rank");
		int mx = -1;
		MPI_OK(MPI_Allreduce(&t_rank, &mx, 1, MPI_INT, MPI_MAX, cr));
		CHECK_INT(mx, 2 * (ne - 1), "Allreduce on created comm");
		MPI_OK(MPI_Comm_free(&cr));
	}
	/* Comm_create_group: only the members call it */
	if (t_rank % 2 == 0) {
		MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, eg, 7, &cg));
		MPI_OK(MPI_Comm_size(cg, &n));
		CHECK_INT(n, ne, "Comm_create_group size");
		int s = 0;
		MPI_OK(MPI_Allreduce(&t_rank, &s, 1, MPI_INT, MPI_SUM, cg));
		CHECK_INT(s, ne * (ne - 1), "Allreduce on create_group comm");
		MPI_OK(MPI_Comm_free(&cg));
	}
	MPI_OK(MPI_Group_free(&eg));
	MPI_OK(MPI_Group_free(&wg));
	free(ev);

	/* names */
	char name[MPI_MAX_OBJECT_NAME];
	int len;
	MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
	CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world name '%s'", name);
	MPI_OK(MPI_Comm_set_name(dup, "the dup"));
	MPI_OK(MPI_Comm_get_name(dup, name, &len));
	CHECK(!strcmp(name, "the dup") && len == 7, "dup name '%s'", name);
	MPI_OK(MPI_Comm_test_inter(dup, &flag));
	CHECK_INT(flag, 0, "Comm_test_inter");

	/* predefined attributes */
	int *tagub = NULL;
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagub, &flag));
	CHECK(flag && tagub && *tagub >= 32767, "MPI_TAG_UB attribute");
	/* the largest tag works */
	int big = *tagub, v = t_rank, w = -1;
	MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, t_rank, big, &w, 1, MPI_INT, t_rank, big, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK_INT(w, t_rank, "message with tag TAG_UB");
	int *wtg = NULL;
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtg, &flag));
	CHECK(!flag || (wtg && (*wtg == 0 || *wtg == 1)), "WTIME_IS_GLOBAL");
	MPI_OK(MPI_Comm_get_attr(dup, MPI_TAG_UB, &tagub, &flag));
	CHECK(flag && *tagub == big, "TAG_UB on a dup");

	/* user keyvals: copied on dup, deleted on free / delete_attr */
	int key;
	MPI_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &deletes));
	static char base[4];
	MPI_OK(MPI_Comm_set_attr(dup, key, base));
	void *got = NULL;
	MPI_OK(MPI_Comm_get_attr(dup, key, &got, &flag));
	CHECK(flag && got == base, "get_attr after set_attr");
	MPI_Comm dup2;
	MPI_OK(MPI_Comm_dup(dup, &dup2));
	CHECK_INT(copies, 1, "copy callback calls");
	MPI_OK(MPI_Comm_get_attr(dup2, key, &got, &flag));
	CHECK(flag && got == base + 1, "attribute copied through the callback");
	MPI_OK(MPI_Comm_free(&dup2));
	CHECK_INT(deletes, 1, "delete callback on Comm_free");
	MPI_OK(MPI_Comm_delete_attr(dup, key));
	CHECK_INT(deletes, 2, "delete callback on delete_attr");
	MPI_OK(MPI_Comm_get_attr(dup, key, &got, &flag));
	CHECK_INT(flag, 0, "attribute after delete");
	/* keyval with NULL copy fn: not copied */
	int key2;
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
	MPI_OK(MPI_Comm_set_attr(dup, key2, base + 2));
	MPI_OK(MPI_Comm_dup(dup, &dup2));
	MPI_OK(MPI_Comm_get_attr(dup2, key2, &got, &flag));
	CHECK_INT(flag, 0, "NULL_COPY_FN attribute was copied");
	MPI_OK(MPI_Comm_free(&dup2));
	/* MPI_COMM_DUP_FN copies the pointer */
	int key3;
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key3, NULL));
	MPI_OK(MPI_Comm_set_attr(dup, key3, base + 3));
	MPI_OK(MPI_Comm_dup(dup, &dup2));
	MPI_OK(MPI_Comm_get_attr(dup2, key3, &got, &flag));
	CHECK(flag && got == base + 3, "COMM_DUP_FN copy");
	MPI_OK(MPI_Comm_free(&dup2));
	MPI_OK(MPI_Comm_free_keyval(&key));
	MPI_OK(MPI_Comm_free_keyval(&key2));
	MPI_OK(MPI_Comm_free_keyval(&key3));
	CHECK_INT(key, MPI_KEYVAL_INVALID, "free_keyval handle");
#ifdef MPIV_MPI_LITE	/* MPI-1 attribute names, removed from Open MPI's mpi.h */
	int k1;
	MPI_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k1, NULL));
	MPI_OK(MPI_Attr_put(dup, k1, base));
	MPI_OK(MPI_Attr_get(dup, k1, &got, &flag));
	CHECK(flag && got == base, "Attr_get");
	MPI_OK(MPI_Attr_delete(dup, k1));
	MPI_OK(MPI_Attr_get(dup, k1, &got, &flag));
	CHECK_INT(flag, 0, "Attr_get after Attr_delete");
	MPI_OK(MPI_Keyval_free(&k1));
#endif

	/* split_type SHARED: all ranks on this machine (one host here) */
	MPI_Comm sh;
	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &sh));
	CHECK(sh != MPI_COMM_NULL, "split_type SHARED gave COMM_NULL");
	MPI_OK(MPI_Comm_size(sh, &n));
	CHECK(n >= 1 && n <= t_size, "split_type size %d", n);
	MPI_OK(MPI_Comm_free(&sh));
	MPI_Comm un;
	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &un));
	CHECK(un == MPI_COMM_NULL, "split_type UNDEFINED");

	/* many dups and frees (context ids get reused correctly) */
	for (int i = 0; i < 50; i++) {
		MPI_Comm c;
		MPI_OK(MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &c));
		int s = 0;
		MPI_OK(MPI_Allreduce(&i, &s, 1, MPI_INT, MPI_SUM, c));
		CHECK_INT(s, i * t_size, "Allreduce on the i-th dup");
		MPI_OK(MPI_Comm_free(&c));
	}
	MPI_OK(MPI_Comm_free(&sp));
	MPI_OK(MPI_Comm_free(&dup));
	t_mix_int(copies * 10 + deletes);
	return t_finish();
}
