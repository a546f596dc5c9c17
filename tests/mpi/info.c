/* info: Info_create/set/get/delete/get_nkeys/get_nthkey/dup/free,
 * overwrite, missing keys, truncation of values, INFO_ENV readable. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "info");
	MPI_Info info, dup;
	int n, flag;
	char val[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_get_nkeys(info, &n));
	CHECK_INT(n, 0, "nkeys of a new info");
	MPI_OK(MPI_Info_set(info, "alpha", "1"));
	MPI_OK(MPI_Info_set(info, "beta", "two"));
	MPI_OK(MPI_Info_set(info, "gamma", "a longer value"));
	MPI_OK(MPI_Info_set(info, "alpha", "one"));	/* overwrite keeps position */
	MPI_OK(MPI_Info_get_nkeys(info, &n));
	CHECK_INT(n, 3, "nkeys after 4 sets with one overwrite");
	const char *order[3] = { "alpha", "beta", "gamma" };
	for (int i = 0; i < 3; i++) {
		MPI_OK(MPI_Info_get_nthkey(info, i, key));
		CHECK(!strcmp(key, order[i]), "nthkey %d = '%s', want '%s'", i, key, order[i]);
	}
	MPI_OK(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag));
	CHECK(flag && !strcmp(val, "one"), "get alpha '%s'", val);
	MPI_OK(MPI_Info_get(info, "missing", MPI_MAX_INFO_VAL, val, &flag));
	CHECK_INT(flag, 0, "get of a missing key");
	/* valuelen smaller than the value: truncated, flag still 1 */
	memset(val, 'X', sizeof val);
	MPI_OK(MPI_Info_get(info, "gamma", 4, val, &flag));
	CHECK(flag && !strncmp(val, "a lo", 4), "truncated get '%.8s'", val);
	int vlen = -1;
	MPI_OK(MPI_Info_get_valuelen(info, "alpha", &vlen, &flag));
	CHECK(flag && vlen == 3, "get_valuelen alpha: %d", vlen);
	MPI_OK(MPI_Info_get_valuelen(info, "missing", &vlen, &flag));
	CHECK_INT(flag, 0, "get_valuelen of a missing key");
#ifdef MPIV_MPI_LITE	/* MPI-4, not in Open MPI 4.1 */
	int blen = 3;
	memset(val, 'X', sizeof val);
	MPI_OK(MPI_Info_get_string(info, "alpha", &blen, val, &flag));
	CHECK(flag && blen == 4 && !strcmp(val, "on"), "get_string truncated: %d '%s'", blen, val);
	blen = 0;
	MPI_OK(MPI_Info_get_string(info, "alpha", &blen, NULL, &flag));
	CHECK(flag && blen == 4, "get_string length: %d", blen);
	blen = (int)sizeof val;
	MPI_OK(MPI_Info_get_string(info, "alpha", &blen, val, &flag));
	CHECK(flag && blen == 4 && !strcmp(val, "one"), "get_string: %d '%s'", blen, val);
#endif

	MPI_OK(MPI_Info_dup(info, &dup));
	MPI_OK(MPI_Info_delete(info, "beta"));
	MPI_OK(MPI_Info_get_nkeys(info, &n));
	CHECK_INT(n, 2, "nkeys after delete");
	MPI_OK(MPI_Info_get(info, "beta", MPI_MAX_INFO_VAL, val, &flag));
	CHECK_INT(flag, 0, "deleted key still there");
	MPI_OK(MPI_Info_get_nkeys(dup, &n));
	CHECK_INT(n, 3, "dup unaffected by delete");
	MPI_OK(MPI_Info_get(dup, "beta", MPI_MAX_INFO_VAL, val, &flag));
	CHECK(flag && !strcmp(val, "two"), "dup value");
	MPI_OK(MPI_Info_get_nthkey(info, 1, key));
	CHECK(!strcmp(key, "gamma"), "nthkey after delete '%s'", key);

	/* delete of a missing key is an error (MPI_ERR_INFO_NOKEY) */
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	int rc = MPI_Info_delete(info, "nope"), cls;
	CHECK(rc != MPI_SUCCESS, "Info_delete of a missing key succeeded");
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_INFO_NOKEY, "Info_delete missing key class");

	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Info_free(&dup));
	CHECK(info == MPI_INFO_NULL && dup == MPI_INFO_NULL, "Info_free handles");

	/* MPI_INFO_ENV exists and is readable */
	MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
	CHECK(n >= 0, "INFO_ENV nkeys");
	/* info is accepted where MPI takes one */
	MPI_Info hint;
	MPI_OK(MPI_Info_create(&hint));
	MPI_OK(MPI_Info_set(hint, "no_locks", "true"));
	void *mem;
	MPI_OK(MPI_Alloc_mem(64, hint, &mem));
	MPI_OK(MPI_Free_mem(mem));
	MPI_OK(MPI_Info_free(&hint));
	t_mix_int(n >= 0);
	return t_finish();
}
