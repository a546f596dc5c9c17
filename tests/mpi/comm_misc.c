/* comm_misc: communicator hints (Comm_set_info/get_info,
 * Comm_dup_with_info, Comm_dup copying them), error classes and codes the
 * program adds (Add_error_class/code/string, Error_class, Error_string,
 * MPI_LASTUSEDCODE, a user code through an error handler), and attribute
 * delete callbacks that delete other attributes of the same communicator,
 * during MPI_Comm_delete_attr and MPI_Comm_free (each callback runs once). */
#include "mpitest.h"

static int k1, k2, k3, calls[3];

static int del_fn(MPI_Comm c, int key, void *val, void *extra)
{
	int i = (int)(intptr_t)extra, flag;
	void *v;
	calls[i]++;
	CHECK_INT((int)(intptr_t)val, 100 + i, "attribute value in delete callback");
	/* attribute 1's callback deletes the two others (if still set) */
	if (i == 1) {
		MPI_OK(MPI_Comm_get_attr(c, k3, &v, &flag));
		if (flag)
			MPI_OK(MPI_Comm_delete_attr(c, k3));
		MPI_OK(MPI_Comm_get_attr(c, k1, &v, &flag));
		if (flag)
			MPI_OK(MPI_Comm_delete_attr(c, k1));
	}
	(void)key;
	return MPI_SUCCESS;
}

static void set3(MPI_Comm c)
{
	MPI_OK(MPI_Comm_set_attr(c, k1, (void *)(intptr_t)100));
	MPI_OK(MPI_Comm_set_attr(c, k2, (void *)(intptr_t)101));
	MPI_OK(MPI_Comm_set_attr(c, k3, (void *)(intptr_t)102));
}

static int errh_seen;
static void errh_fn(MPI_Comm *c, int *code, ...)
{
	errh_seen = *code;
	(void)c;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "comm_misc");
	MPI_Comm c, d;
	MPI_Info in, got;
	int flag, n;
	char val[MPI_MAX_INFO_VAL + 1];

	/* hints */
	MPI_OK(MPI_Info_create(&in));
	MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
	MPI_OK(MPI_Info_set(in, "mpiv_test_hint", "42"));
	MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &c));
	MPI_OK(MPI_Comm_get_info(c, &got));
	MPI_OK(MPI_Info_get(got, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, val, &flag));
	CHECK(flag && strcmp(val, "true") == 0, "dup_with_info kept the assertion hint");
	MPI_OK(MPI_Info_free(&got));
	MPI_OK(MPI_Comm_size(c, &n));
	CHECK_INT(n, t_size, "dup_with_info size");
	int sum = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, c));
	CHECK_INT(sum, t_size * (t_size - 1) / 2, "Allreduce on dup_with_info");
	MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "false"));
	MPI_OK(MPI_Comm_set_info(c, in));
	MPI_OK(MPI_Info_free(&in));
	MPI_OK(MPI_Comm_get_info(c, &got));
	MPI_OK(MPI_Info_get(got, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, val, &flag));
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1 keeps the assertion it was created with */
	CHECK(flag && strcmp(val, "false") == 0, "set_info replaced the hint");
	MPI_OK(MPI_Info_get(got, "mpiv_test_hint", MPI_MAX_INFO_VAL, val, &flag));
	CHECK(flag && strcmp(val, "42") == 0, "set_info: the other hint");
#endif
	MPI_OK(MPI_Info_free(&got));
	MPI_OK(MPI_Comm_get_info(MPI_COMM_WORLD, &got));
	MPI_OK(MPI_Info_get_nkeys(got, &n));
	MPI_OK(MPI_Info_free(&got));
	MPI_OK(MPI_Comm_free(&c));

	/* error classes and codes */
	int cls, code, code2, cl2, len, *last;
	char s[MPI_MAX_ERROR_STRING];
	MPI_OK(MPI_Add_error_class(&cls));
	MPI_OK(MPI_Add_error_code(cls, &code));
	MPI_OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
	CHECK(cls > MPI_ERR_LASTCODE && code > MPI_ERR_LASTCODE && code2 > MPI_ERR_LASTCODE, "added values beyond MPI_ERR_LASTCODE");
	CHECK(cls != code && code != code2 && cls != code2, "added values differ");
	MPI_OK(MPI_Add_error_string(cls, "my error class"));
	MPI_OK(MPI_Add_error_string(code, "my error code"));
	MPI_OK(MPI_Error_class(code, &cl2));
	CHECK_INT(cl2, cls, "class of the added code");
	MPI_OK(MPI_Error_class(cls, &cl2));
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1 answers MPI_ERR_UNKNOWN here */
	CHECK_INT(cl2, cls, "class of the added class");
#endif
	MPI_OK(MPI_Error_class(code2, &cl2));
	CHECK_INT(cl2, MPI_ERR_ARG, "added code of a predefined class");
	MPI_OK(MPI_Error_string(code, s, &len));
	CHECK(strcmp(s, "my error code") == 0 && len == 13, "Error_string of the code: '%s'", s);
	MPI_OK(MPI_Error_string(cls, s, &len));
	CHECK(strcmp(s, "my error class") == 0, "Error_string of the class: '%s'", s);
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
	CHECK(flag && *last >= cls && *last >= code && *last >= code2, "MPI_LASTUSEDCODE");
	MPI_Errhandler eh;
	MPI_OK(MPI_Comm_create_errhandler(errh_fn, &eh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
	MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, code));
	CHECK_INT(errh_seen, code, "handler saw the added code");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Errhandler_free(&eh));
	t_mix(s, strlen(s));

	/* delete callbacks deleting other attributes */
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &k1, (void *)(intptr_t)0));
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &k2, (void *)(intptr_t)1));
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &k3, (void *)(intptr_t)2));
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	set3(c);
	MPI_OK(MPI_Comm_delete_attr(c, k2));	/* deletes k3 and k1 too */
	CHECK(calls[0] == 1 && calls[1] == 1 && calls[2] == 1, "delete_attr callbacks %d %d %d", calls[0], calls[1], calls[2]);
	void *v;
	MPI_OK(MPI_Comm_get_attr(c, k1, &v, &flag));
	CHECK(!flag, "k1 deleted by k2's callback");
	MPI_OK(MPI_Comm_get_attr(c, k3, &v, &flag));
	CHECK(!flag, "k3 deleted by k2's callback");
	set3(c);
	MPI_OK(MPI_Comm_dup(c, &d));	/* NULL copy: d has none */
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1 fails this Comm_free (MPI_ERR_INTERN) */
	MPI_OK(MPI_Comm_free(&c));	/* k2's callback deletes the others while freeing */
	CHECK(calls[0] == 2 && calls[1] == 2 && calls[2] == 2, "Comm_free callbacks %d %d %d", calls[0], calls[1], calls[2]);
#else
	MPI_OK(MPI_Comm_delete_attr(c, k2));
	MPI_OK(MPI_Comm_free(&c));
#endif
	MPI_OK(MPI_Comm_set_attr(d, k2, (void *)(intptr_t)101));
	MPI_OK(MPI_Comm_free(&d));
	CHECK_INT(calls[1], 3, "k2 alone on a freed comm");
	MPI_OK(MPI_Comm_free_keyval(&k1));
	MPI_OK(MPI_Comm_free_keyval(&k2));
	MPI_OK(MPI_Comm_free_keyval(&k3));
	t_mix(calls, sizeof calls);
	return t_finish();
}
