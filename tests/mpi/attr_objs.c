/* attr_objs: attributes of datatypes and windows. Type keyvals with copy
 * and delete callbacks (MPI_Type_dup copies through them, MPI_Type_free
 * and MPI_Type_delete_attr delete, replacing a value deletes the old one,
 * attributes on a predefined type, MPI_TYPE_DUP_FN and the NULL
 * callbacks); window keyvals (set, get, replace, delete, the callbacks at
 * MPI_Win_free, the predefined MPI_WIN_* keys beside them); a keyval of
 * one kind refused on another (MPI_ERR_KEYVAL under MPI_ERRORS_RETURN);
 * a keyval freed while an attribute still uses it. */
#include "mpitest.h"

#include <stdint.h>

/* A call that must fail with MPI_ERR_KEYVAL (Open MPI 4.1 answers
   MPI_ERR_OTHER to a keyval of the wrong kind: there, any error). */
#ifdef MPIV_MPI_LITE
#define KEYVAL_ERR(call, what) do { int ec_; \
	MPI_OK(MPI_Error_class((call), &ec_)); \
	CHECK_INT(ec_, MPI_ERR_KEYVAL, what); } while (0)
#else
#define KEYVAL_ERR(call, what) CHECK((call) != MPI_SUCCESS, what)
#endif

static int copies, deletes[4];
static long long delsum;
T_UNUSED static int fail_armed;

static int t_copy(MPI_Datatype t, int key, void *extra, void *in, void *out,
    int *flag)
{
	copies++;
	*(void **)out = (void *)((intptr_t)in + 1000);
	*flag = 1;
	(void)t; (void)key; (void)extra;
	return MPI_SUCCESS;
}

/* extra: which counter */
static int t_delete(MPI_Datatype t, int key, void *val, void *extra)
{
	deletes[(intptr_t)extra]++;
	delsum += (intptr_t)val;	/* order-free: callback order may vary */
	(void)t; (void)key;
	return MPI_SUCCESS;
}

T_UNUSED static int fail_calls;
T_UNUSED static int t_delete_fail(MPI_Datatype t, int key, void *val,
    void *extra)
{
	fail_calls++;
	(void)t; (void)key; (void)extra;
	return (intptr_t)val == -1 && fail_armed ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int w_delete(MPI_Win w, int key, void *val, void *extra)
{
	deletes[(intptr_t)extra]++;
	delsum += (intptr_t)val;	/* order-free: callback order may vary */
	(void)w; (void)key;
	return MPI_SUCCESS;
}

static int w_copy(MPI_Win w, int key, void *extra, void *in, void *out,
    int *flag)
{
	*flag = 0;
	(void)w; (void)key; (void)extra; (void)in; (void)out;
	return MPI_SUCCESS;
}

static void *got(MPI_Datatype t, int key, int want_flag)
{
	void *v = NULL;
	int flag = -1;

	MPI_OK(MPI_Type_get_attr(t, key, &v, &flag));
	CHECK_INT(flag, want_flag, "Type_get_attr flag");
	return v;
}

static void types(void)
{
	int k, knull, kdup;
	MPI_Datatype vec, d1, d2;

	MPI_OK(MPI_Type_create_keyval(t_copy, t_delete, &k, (void *)0));
	MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, t_delete, &knull,
	    (void *)1));
	MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN,
	    &kdup, NULL));
	MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	got(vec, k, 0);
	MPI_OK(MPI_Type_set_attr(vec, k, (void *)(intptr_t)(7 + t_rank)));
	MPI_OK(MPI_Type_set_attr(vec, knull, (void *)(intptr_t)8));
	MPI_OK(MPI_Type_set_attr(vec, kdup, (void *)(intptr_t)9));
	CHECK((intptr_t)got(vec, k, 1) == 7 + t_rank, "value of k");

	/* replacing deletes the old value */
	MPI_OK(MPI_Type_set_attr(vec, k, (void *)(intptr_t)(17 + t_rank)));
	CHECK_INT(deletes[0], 1, "delete callback on replace");
	CHECK((intptr_t)got(vec, k, 1) == 17 + t_rank, "replaced value");

	/* dup: k through its callback, knull not, kdup as is */
	MPI_OK(MPI_Type_dup(vec, &d1));
	CHECK_INT(copies, 1, "copy callbacks");
	CHECK((intptr_t)got(d1, k, 1) == 1017 + t_rank, "copied value");
	got(d1, knull, 0);
	CHECK((intptr_t)got(d1, kdup, 1) == 9, "TYPE_DUP_FN value");
	/* the dup is a working type: send one through it */
	int buf[12], out[12];
	for (int i = 0; i < 12; i++)
		buf[i] = t_rank * 100 + i, out[i] = -1;
	MPI_OK(MPI_Sendrecv(buf, 1, d1, t_rank, 5, out, 1, d1, t_rank, 5,
	    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	t_mix(out, sizeof(out));

	/* a dup of the dup; the newest is freed first (a dup may hold on
	   to its original: Open MPI runs the callbacks of a type that a
	   dup still holds when that dup goes) */
	MPI_OK(MPI_Type_dup(d1, &d2));
	CHECK((intptr_t)got(d2, k, 1) == 2017 + t_rank, "copied twice");
	MPI_OK(MPI_Type_delete_attr(d2, k));
	CHECK_INT(deletes[0], 2, "delete_attr callback");
	got(d2, k, 0);
	MPI_OK(MPI_Type_free(&d2));
	CHECK_INT(deletes[0], 2, "no callback for a deleted attribute");
	MPI_OK(MPI_Type_free(&d1));
	CHECK(deletes[0] == 3 && deletes[1] == 0, "Type_free callbacks %d %d",
	    deletes[0], deletes[1]);

	/* a freed keyval still answers for the attributes set with it */
	MPI_OK(MPI_Type_free_keyval(&k));
	CHECK_INT(k, MPI_KEYVAL_INVALID, "Type_free_keyval handle");
	MPI_OK(MPI_Type_free(&vec));
	CHECK(deletes[0] == 4 && deletes[1] == 1, "callbacks after the keyval "
	    "was freed %d %d", deletes[0], deletes[1]);

	/* a predefined type takes attributes too */
	MPI_OK(MPI_Type_set_attr(MPI_DOUBLE, knull, (void *)(intptr_t)42));
	CHECK((intptr_t)got(MPI_DOUBLE, knull, 1) == 42, "attribute of MPI_DOUBLE");
	got(MPI_INT, knull, 0);
	MPI_OK(MPI_Type_delete_attr(MPI_DOUBLE, knull));
	CHECK_INT(deletes[1], 2, "delete on MPI_DOUBLE");

#ifdef MPIV_MPI_LITE
	/* A failing delete callback makes the call fail, the attribute and
	   the type stay (the standard calls the program erroneous then;
	   Open MPI 4.1 frees the type anyway). Outside the checksum. */
	int kfail;
	MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, t_delete_fail,
	    &kfail, NULL));
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &d1));
	MPI_OK(MPI_Type_set_attr(d1, kfail, (void *)(intptr_t)-1));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	fail_armed = 1;
	CHECK(MPI_Type_free(&d1) != MPI_SUCCESS, "Type_free with a failing callback");
	fail_armed = 0;
	CHECK(d1 != MPI_DATATYPE_NULL, "type kept");
	void *v = NULL;
	int flag = 0;
	MPI_OK(MPI_Type_get_attr(d1, kfail, &v, &flag));
	CHECK(flag && (intptr_t)v == -1, "attribute kept");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Type_free(&d1));
	CHECK_INT(fail_calls, 2, "callbacks of the failed free and after");
	MPI_OK(MPI_Type_free_keyval(&kfail));
#endif
	MPI_OK(MPI_Type_free_keyval(&knull));
	MPI_OK(MPI_Type_free_keyval(&kdup));
}

static void windows(void)
{
	int kw, kw2, kc, kt, flag;
	int mem[4] = { 0 };
	void *v;
	MPI_Win win;

	MPI_OK(MPI_Win_create_keyval(w_copy, w_delete, &kw, (void *)2));
	MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN,
	    MPI_WIN_NULL_DELETE_FN, &kw2, NULL));
	MPI_OK(MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL,
	    MPI_COMM_WORLD, &win));
	MPI_OK(MPI_Win_get_attr(win, kw, &v, &flag));
	CHECK_INT(flag, 0, "no attribute yet");
	MPI_OK(MPI_Win_set_attr(win, kw, (void *)(intptr_t)(30 + t_rank)));
	MPI_OK(MPI_Win_set_attr(win, kw2, (void *)(intptr_t)31));
	MPI_OK(MPI_Win_set_attr(win, kw, (void *)(intptr_t)(40 + t_rank)));
	CHECK_INT(deletes[2], 1, "window delete callback on replace");
	MPI_OK(MPI_Win_get_attr(win, kw, &v, &flag));
	CHECK(flag && (intptr_t)v == 40 + t_rank, "window attribute value");
	/* the predefined keys still answer */
	MPI_Aint *size;
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
	CHECK(flag && *size == (MPI_Aint)sizeof(mem), "MPI_WIN_SIZE");
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
	CHECK(flag && v == mem, "MPI_WIN_BASE");
	MPI_OK(MPI_Win_delete_attr(win, kw2));
	MPI_OK(MPI_Win_get_attr(win, kw2, &v, &flag));
	CHECK_INT(flag, 0, "window attribute after delete");

	/* keyvals of another kind: MPI_ERR_KEYVAL */
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
	    MPI_COMM_NULL_DELETE_FN, &kc, NULL));
	MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN,
	    MPI_TYPE_NULL_DELETE_FN, &kt, NULL));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	KEYVAL_ERR(MPI_Win_set_attr(win, kc, NULL), "communicator keyval on a window");
	KEYVAL_ERR(MPI_Type_set_attr(MPI_INT, kw, NULL), "window keyval on a type");
	KEYVAL_ERR(MPI_Comm_set_attr(MPI_COMM_WORLD, kt, NULL), "type keyval on a communicator");
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1: success, flag 0 */
	KEYVAL_ERR(MPI_Win_get_attr(win, kt, &v, &flag), "type keyval on a window");
	KEYVAL_ERR(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &v, &flag), "MPI_TAG_UB on a type");
#endif
	KEYVAL_ERR(MPI_Win_delete_attr(win, kw2), "deleting an attribute not set");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Comm_free_keyval(&kc));
	MPI_OK(MPI_Type_free_keyval(&kt));

	/* the window works with its attributes set, and its free deletes */
	int one = t_rank + 1;
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(&one, 1, MPI_INT, (t_rank + 1) % t_size, t_rank % 4, 1,
	    MPI_INT, win));
	MPI_OK(MPI_Win_fence(0, win));
	t_mix(mem, sizeof(mem));
	MPI_OK(MPI_Win_free_keyval(&kw));
	MPI_OK(MPI_Win_free(&win));
	CHECK_INT(deletes[2], 2, "Win_free delete callback");
	MPI_OK(MPI_Win_free_keyval(&kw2));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "attr_objs");
	types();
	windows();
	t_mix(deletes, sizeof(deletes));
	t_mix_int(copies);
	t_mix_int(delsum);
	return t_finish();
}
