/*
 * test_fhandle.c: the Fortran handle tables (libmpi-lite/fhandle.c),
 * compiled in with the datatypes and ops they name: the predefined
 * handles' fixed values both ways, new handles, a freed slot reused
 * (last freed first), bad handles, thousands of live handles (the hash
 * grows), the update after a call that frees or replaces a handle,
 * MPI_Status_c2f/f2c and the Fortran string helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../libmpi-lite/datatype.c"
#include "../../libmpi-lite/op.c"
#include "../../libmpi-lite/fhandle.c"

/* ---- stubs for what these files call in the rest of the library ---- */

/* attr.c: these types carry no attributes */
int
mpiv_type_attr_dup(MPI_Datatype oldt, MPI_Datatype newt)
{
	(void)oldt;
	(void)newt;
	return MPI_SUCCESS;
}

int
mpiv_type_attr_free_all(MPI_Datatype t)
{
	(void)t;
	return MPI_SUCCESS;
}

struct mpiv_state mpiv_state = { .initialized = true, .world_rank = 0,
	.world_size = 4 };
struct mpiv_comm mpiv_comm_world, mpiv_comm_self;
struct mpiv_group mpiv_group_empty;
struct mpiv_errhandler mpiv_errors_are_fatal, mpiv_errors_return;
/* struct mpiv_info is info.c's: an object of that name will do */
char info_env_stub[64] __asm__("mpiv_info_env");
/* struct mpiv_message is p2p_mprobe.c's, the same */
char message_no_proc_stub[64] __asm__("mpiv_message_no_proc");

void
mpiv_err_detail(const char *fmt, ...)
{
	(void)fmt;
}

int
mpiv_err(MPI_Comm comm, int code, const char *fn)
{
	(void)comm;
	(void)fn;
	return code;
}

void
mpiv_abort_job(int code, const char *why)
{
	fail_msg("mpiv_abort_job(%d, %s)", code, why);
	abort();
}

int
mpiv_comm_check(MPI_Comm c)
{
	return c == MPI_COMM_NULL ? MPI_ERR_COMM : MPI_SUCCESS;
}

/* dt_envelope.c: what a derived type was built from (not tested here) */
int
mpiv_dt_set_args(MPI_Datatype dt, int combiner, int ni, const int *ints,
    int na, const MPI_Aint *aints, int nc, const MPI_Count *counts, int nt,
    const MPI_Datatype *types)
{
	(void)dt; (void)combiner; (void)ni; (void)ints; (void)na; (void)aints;
	(void)nc; (void)counts; (void)nt; (void)types;
	return MPI_SUCCESS;
}

void
mpiv_dt_free_args(MPI_Datatype dt)
{
	(void)dt;
}

/* ---- tests ---- */

static void
test_predefined(void **state)
{
	(void)state;
	assert_int_equal(MPI_Comm_c2f(MPI_COMM_NULL), 0);
	assert_int_equal(MPI_Comm_c2f(MPI_COMM_WORLD), 1);
	assert_int_equal(MPI_Comm_c2f(MPI_COMM_SELF), 2);
	assert_ptr_equal(MPI_Comm_f2c(1), MPI_COMM_WORLD);
	assert_int_equal(MPI_Type_c2f(MPI_INTEGER), 1);
	assert_int_equal(MPI_Type_c2f(MPI_DOUBLE_PRECISION), 3);
	assert_int_equal(MPI_Type_c2f(MPI_2DOUBLE_PRECISION), 12);
	assert_int_equal(MPI_Type_c2f(MPI_LONG_LONG), MPI_Type_c2f(MPI_LONG_LONG_INT));
	assert_ptr_equal(MPI_Type_f2c(56), MPI_LONG_DOUBLE_INT);
	assert_int_equal(MPI_Op_c2f(MPI_SUM), 3);
	assert_ptr_equal(MPI_Op_f2c(14), MPI_NO_OP);
	assert_int_equal(MPI_Errhandler_c2f(MPI_ERRORS_RETURN), 2);
	assert_int_equal(MPI_Info_c2f(MPI_INFO_ENV), 1);
	assert_int_equal(MPI_Group_c2f(MPI_GROUP_EMPTY), 1);
	assert_int_equal(MPI_Request_c2f(MPI_REQUEST_NULL), 0);
	assert_int_equal(MPI_Message_c2f(MPI_MESSAGE_NULL), 0);
	assert_int_equal(MPI_Message_c2f(MPI_MESSAGE_NO_PROC), 1);
	assert_ptr_equal(MPI_Message_f2c(1), MPI_MESSAGE_NO_PROC);
	/* a predefined slot is never freed */
	mpiv_f_release(MPIV_F_COMM, 1);
	assert_ptr_equal(MPI_Comm_f2c(1), MPI_COMM_WORLD);
}

static void
test_new_free_reuse(void **state)
{
	int objs[4];
	void *c;
	MPI_Fint a, b, d;

	(void)state;
	a = mpiv_f_c2f(MPIV_F_REQUEST, &objs[0]);
	b = mpiv_f_c2f(MPIV_F_REQUEST, &objs[1]);
	assert_true(a > 0 && b > 0 && a != b);
	/* the same C handle: the same Fortran one */
	assert_int_equal(mpiv_f_c2f(MPIV_F_REQUEST, &objs[0]), a);
	assert_int_equal(mpiv_f_f2c(MPIV_F_REQUEST, b, &c), 0);
	assert_ptr_equal(c, &objs[1]);
	mpiv_f_release(MPIV_F_REQUEST, a);
	assert_int_equal(mpiv_f_f2c(MPIV_F_REQUEST, a, &c), -1);
	assert_null(c);
	/* the last freed slot comes back first */
	d = mpiv_f_c2f(MPIV_F_REQUEST, &objs[2]);
	assert_int_equal(d, a);
	/* bad handles: out of range, negative, never used */
	assert_int_equal(mpiv_f_f2c(MPIV_F_COMM, 12345, &c), -1);
	assert_int_equal(mpiv_f_f2c(MPIV_F_COMM, -3, &c), -1);
	assert_int_equal(mpiv_f_f2c(MPIV_F_WIN, 1, &c), -1);
	/* the null handle is valid everywhere */
	assert_int_equal(mpiv_f_f2c(MPIV_F_WIN, 0, &c), 0);
	assert_null(c);
	assert_int_equal(mpiv_f_kind_err(MPIV_F_TYPE), MPI_ERR_TYPE);
	mpiv_f_release(MPIV_F_REQUEST, b);
	mpiv_f_release(MPIV_F_REQUEST, d);
}

static void
test_many(void **state)
{
	enum { N = 5000 };
	static char objs[N];
	static MPI_Fint f[N];
	void *c;

	(void)state;
	for (int i = 0; i < N; i++)
		f[i] = mpiv_f_c2f(MPIV_F_TYPE, &objs[i]);
	for (int i = 0; i < N; i++) {
		assert_int_equal(mpiv_f_c2f(MPIV_F_TYPE, &objs[i]), f[i]);
		assert_int_equal(mpiv_f_f2c(MPIV_F_TYPE, f[i], &c), 0);
		assert_ptr_equal(c, &objs[i]);
	}
	/* free every other one, then the survivors still map both ways */
	for (int i = 0; i < N; i += 2)
		mpiv_f_release(MPIV_F_TYPE, f[i]);
	for (int i = 1; i < N; i += 2) {
		assert_int_equal(mpiv_f_c2f(MPIV_F_TYPE, &objs[i]), f[i]);
		assert_int_equal(mpiv_f_f2c(MPIV_F_TYPE, f[i], &c), 0);
		assert_ptr_equal(c, &objs[i]);
	}
	/* re-adding the freed ones fills the freed slots: no growth */
	for (int i = 0; i < N; i += 2) {
		MPI_Fint g = mpiv_f_c2f(MPIV_F_TYPE, &objs[i]);
		assert_true(g > 56 && g <= 56 + N);
	}
	for (int i = 0; i < N; i++)
		mpiv_f_release(MPIV_F_TYPE, mpiv_f_c2f(MPIV_F_TYPE, &objs[i]));
}

static void
test_update(void **state)
{
	int o1, o2;
	MPI_Fint f;
	void *c;

	(void)state;
	f = mpiv_f_c2f(MPIV_F_REQUEST, &o1);
	/* unchanged: nothing happens */
	mpiv_f_update(MPIV_F_REQUEST, &f, &o1, &o1);
	assert_int_equal(mpiv_f_f2c(MPIV_F_REQUEST, f, &c), 0);
	/* completed (C set it to null): slot freed, Fortran gets 0 */
	{
		MPI_Fint old = f;
		mpiv_f_update(MPIV_F_REQUEST, &f, &o1, NULL);
		assert_int_equal(f, 0);
		assert_int_equal(mpiv_f_f2c(MPIV_F_REQUEST, old, &c), -1);
	}
	/* replaced by another object */
	f = mpiv_f_c2f(MPIV_F_REQUEST, &o1);
	mpiv_f_update(MPIV_F_REQUEST, &f, &o1, &o2);
	assert_int_equal(mpiv_f_f2c(MPIV_F_REQUEST, f, &c), 0);
	assert_ptr_equal(c, &o2);
	mpiv_f_release(MPIV_F_REQUEST, f);
}

/* An object handed out twice (two MPI_COMM_GROUP of one communicator
   give one group) is freed twice, as in C, before its slot goes; one
   converted without being handed out (MPI_Group_c2f) goes at its free. */
static void
test_handed_out_twice(void **state)
{
	int g, h;
	MPI_Fint f, f2, k;
	void *c;

	(void)state;
	f = mpiv_f_out(MPIV_F_GROUP, &g);
	f2 = mpiv_f_out(MPIV_F_GROUP, &g);
	assert_int_equal(f, f2);
	/* a plain conversion counts nothing */
	assert_int_equal(mpiv_f_c2f(MPIV_F_GROUP, &g), f);
	mpiv_f_release(MPIV_F_GROUP, f);
	assert_int_equal(mpiv_f_f2c(MPIV_F_GROUP, f, &c), 0);
	assert_ptr_equal(c, &g);
	mpiv_f_release(MPIV_F_GROUP, f2);
	assert_int_equal(mpiv_f_f2c(MPIV_F_GROUP, f, &c), -1);
	/* a freed slot starts its count afresh */
	k = mpiv_f_out(MPIV_F_GROUP, &h);
	assert_int_equal(k, f);
	mpiv_f_release(MPIV_F_GROUP, k);
	assert_int_equal(mpiv_f_f2c(MPIV_F_GROUP, k, &c), -1);
	/* not handed out: one free is enough */
	k = mpiv_f_c2f(MPIV_F_GROUP, &h);
	mpiv_f_release(MPIV_F_GROUP, k);
	assert_int_equal(mpiv_f_f2c(MPIV_F_GROUP, k, &c), -1);
	/* an update hands the new object out */
	k = mpiv_f_out(MPIV_F_REQUEST, &g);
	mpiv_f_update(MPIV_F_REQUEST, &k, &g, &h);
	assert_int_equal(mpiv_f_f2c(MPIV_F_REQUEST, k, &c), 0);
	assert_ptr_equal(c, &h);
	mpiv_f_update(MPIV_F_REQUEST, &k, &h, NULL);
	assert_int_equal(k, 0);
}

static void
test_status_strings(void **state)
{
	MPI_Status s = { .MPI_SOURCE = 3, .MPI_TAG = 44, .MPI_ERROR = 0,
		.mpiv_count = 1234 }, t;
	MPI_Fint f[MPI_F_STATUS_SIZE];
	char fs[8], *c;

	(void)state;
	assert_int_equal(MPI_Status_c2f(&s, f), MPI_SUCCESS);
	assert_int_equal(f[MPI_F_SOURCE], 3);
	assert_int_equal(f[MPI_F_TAG], 44);
	memset(&t, 0, sizeof(t));
	assert_int_equal(MPI_Status_f2c(f, &t), MPI_SUCCESS);
	assert_int_equal(t.mpiv_count, 1234);
	assert_int_equal(MPI_Status_c2f(&s, mpi_fortran_status_ignore_),
	    MPI_ERR_ARG);
	/* Fortran strings: trailing blanks go (an info's leading ones too),
	   C strings are blank padded */
	c = mpiv_f_str_in(" key  ", 6, false);
	assert_string_equal(c, " key");
	free(c);
	c = mpiv_f_str_in(" a key  ", 8, true);
	assert_string_equal(c, "a key");
	free(c);
	c = mpiv_f_str_in("     ", 5, false);
	assert_string_equal(c, "");
	free(c);
	c = mpiv_f_str_in("     ", 5, true);
	assert_string_equal(c, "");
	free(c);
	mpiv_f_str_out("abc", fs, sizeof(fs));
	assert_memory_equal(fs, "abc     ", 8);
	mpiv_f_str_out("abcdefghij", fs, sizeof(fs));
	assert_memory_equal(fs, "abcdefgh", 8);
	/* the special addresses */
	assert_ptr_equal(mpiv_f_buf(&mpi_fortran_bottom_), MPI_BOTTOM);
	assert_ptr_equal(mpiv_f_buf(&mpi_fortran_in_place_), MPI_IN_PLACE);
	assert_ptr_equal(mpiv_f_buf(fs), fs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predefined),
		cmocka_unit_test(test_new_free_reuse),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_update),
		cmocka_unit_test(test_handed_out_twice),
		cmocka_unit_test(test_status_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
