/*
 * fbind.c: the Fortran bindings the generator cannot make (the "!" lines
 * of fortran/functions.tbl: procedure arguments, attribute values,
 * MPI_PCONTROL without IERROR), the predefined attribute callbacks
 * Fortran names (MPI_COMM_NULL_COPY_FN ...), and the helpers the
 * generated wrappers call.
 *
 * A Fortran user function (MPI_OP_CREATE, MPI_COMM_CREATE_ERRHANDLER)
 * is kept in the C object (fortran_fn) and called with Fortran handles:
 * op.c and errh.c check for it. A generalized request's Fortran
 * callbacks are called through C ones (struct fb_greq). Attribute
 * callbacks written in Fortran are not supported: only the predefined
 * ones.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "fortran.h"
#include "impl.h"

#define FB_ALIAS(f) extern __typeof__(f) p##f __attribute__((alias(#f)));

/* ---------------- helpers of the generated wrappers ---------------- */

static const char *
fb_kind_name(enum mpiv_fkind kind)
{
	static const char *names[MPIV_F_NKINDS] = { "communicator", "group",
	    "datatype", "op", "request", "errhandler", "info", "window",
	    "message", "file" };
	return (unsigned)kind < MPIV_F_NKINDS ? names[kind] : "handle";
}

/* A bad file handle is reported as C reports MPI_FILE_NULL: through
   the handler of MPI_FILE_NULL (MPI_ERRORS_RETURN unless set). */
int
mpiv_fw_in(enum mpiv_fkind kind, MPI_Fint f, void **c, const char *fn)
{
	if (mpiv_f_f2c(kind, f, c) == 0)
		return MPI_SUCCESS;
	mpiv_err_detail("Fortran %s handle %d names none", fb_kind_name(kind),
	    (int)f);
	if (kind == MPIV_F_FILE)
		return mpiv_file_err(MPI_FILE_NULL, MPI_ERR_FILE, fn);
	return mpiv_err(NULL, mpiv_f_kind_err(kind), fn);
}

int
mpiv_fw_ina(enum mpiv_fkind kind, const MPI_Fint *f, MPI_Fint n, void ***c,
    bool keep_old, const char *fn)
{
	size_t m = n > 0 ? (size_t)n : 0;
	void **a;

	if ((a = calloc((keep_old ? 2 : 1) * m + 1, sizeof(*a))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, fn);
	for (size_t i = 0; i < m; i++) {
		int rc = mpiv_fw_in(kind, f[i], &a[i], fn);
		if (rc != MPI_SUCCESS) {
			free(a);
			return rc;
		}
		if (keep_old)
			a[m + i] = a[i];
	}
	*c = a;
	return MPI_SUCCESS;
}

void
mpiv_fw_updatea(enum mpiv_fkind kind, MPI_Fint *f, MPI_Fint n, void **c)
{
	for (MPI_Fint i = 0; i < n; i++)
		mpiv_f_update(kind, &f[i], c[n + i], c[i]);
}

int
mpiv_fw_statuses(const MPI_Fint *f, MPI_Fint n, MPI_Status **c,
    const char *fn)
{
	*c = NULL;
	if (mpiv_f_status_ignored(f))
		return MPI_SUCCESS;
	if ((*c = calloc(n > 0 ? (size_t)n : 1, sizeof(**c))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, fn);
	return MPI_SUCCESS;
}

int
mpiv_fw_aints(const MPI_Fint *f, MPI_Fint n, MPI_Aint **c, const char *fn)
{
	if ((*c = calloc(n > 0 ? (size_t)n : 1, sizeof(**c))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, fn);
	for (MPI_Fint i = 0; i < n; i++)
		(*c)[i] = f[i];
	return MPI_SUCCESS;
}

/* ---------------- hand-bound functions ---------------- */

typedef void fb_proc(void);

/* MPI_PCONTROL(LEVEL): no IERROR in Fortran. */
void
mpi_pcontrol_(MPI_Fint *level)
{
	(void)MPI_Pcontrol(*level);
}
FB_ALIAS(mpi_pcontrol_)

/* MPI_F_SYNC_REG(BUF): no IERROR. Doing nothing is its whole work: an
   external call that takes BUF makes the compiler store what it keeps
   of BUF in registers before, and load it again after. mpif.h programs
   call this one; the modules' procedure calls mpi_f_sync_reg_cdesc_ (a
   descriptor of BUF, fortran/procs.f90). */
void
mpi_f_sync_reg_(void *buf)
{
	(void)buf;
}
FB_ALIAS(mpi_f_sync_reg_)

void mpi_f_sync_reg_cdesc_(void *desc);
void
mpi_f_sync_reg_cdesc_(void *desc)
{
	(void)desc;
}

void
mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierror)
{
	void *p;

	(void)buffer_addr;	/* Fortran cannot keep the address */
	*ierror = MPI_Buffer_detach(&p, size);
}
FB_ALIAS(mpi_buffer_detach_)

/* Stands for a Fortran function in the C object: never called, as op.c
   and errh.c call fortran_fn instead. */
static void
fb_user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
}

static void
fb_user_errh(MPI_Comm *comm, int *code, ...)
{
}

void
mpi_op_create_(fb_proc *user_fn, MPI_Fint *commute, MPI_Fint *op,
    MPI_Fint *ierror)
{
	MPI_Op c = MPI_OP_NULL;
	int rc;

	if (user_fn == NULL) {
		*ierror = mpiv_err(NULL, MPI_ERR_ARG, "MPI_Op_create");
		return;
	}
	rc = MPI_Op_create(fb_user_op, *commute != 0, &c);
	if (rc == MPI_SUCCESS)
		c->fortran_fn = (void (*)(void *, void *, MPI_Fint *,
		    MPI_Fint *))user_fn;
	*op = mpiv_f_out(MPIV_F_OP, c);
	*ierror = rc;
}
FB_ALIAS(mpi_op_create_)

void
mpi_comm_create_errhandler_(fb_proc *function, MPI_Fint *errhandler,
    MPI_Fint *ierror)
{
	MPI_Errhandler c = MPI_ERRHANDLER_NULL;
	int rc;

	if (function == NULL) {
		*ierror = mpiv_err(NULL, MPI_ERR_ARG,
		    "MPI_Comm_create_errhandler");
		return;
	}
	rc = MPI_Comm_create_errhandler(fb_user_errh, &c);
	if (rc == MPI_SUCCESS)
		c->fortran_fn = (void (*)(MPI_Fint *, MPI_Fint *))function;
	*errhandler = mpiv_f_out(MPIV_F_ERRH, c);
	*ierror = rc;
}
FB_ALIAS(mpi_comm_create_errhandler_)

void
mpi_errhandler_create_(fb_proc *function, MPI_Fint *errhandler,
    MPI_Fint *ierror)
{
	mpi_comm_create_errhandler_(function, errhandler, ierror);
}
FB_ALIAS(mpi_errhandler_create_)

/*
 * MPI_FILE_SET_ERRHANDLER(FILE, ERRHANDLER, IERROR): as generated, but a
 * handler made by MPI_COMM_CREATE_ERRHANDLER in Fortran is refused
 * (MPI_ERR_ARG): errh.c would call it with the file as a communicator.
 * MPI says a file's handler comes from MPI_FILE_CREATE_ERRHANDLER, which
 * has no Fortran binding; the predefined handlers are what Fortran sets.
 */
void
mpi_file_set_errhandler_(MPI_Fint *file, MPI_Fint *errhandler,
    MPI_Fint *ierror)
{
	static const char fn[] = "MPI_File_set_errhandler";
	MPI_File c_file = MPI_FILE_NULL;
	MPI_Errhandler c_eh = MPI_ERRHANDLER_NULL;
	int rc;

	if ((rc = mpiv_fw_in(MPIV_F_FILE, *file, (void **)&c_file, fn)) !=
	    MPI_SUCCESS)
		goto out;
	if ((rc = mpiv_fw_in(MPIV_F_ERRH, *errhandler, (void **)&c_eh, fn)) !=
	    MPI_SUCCESS)
		goto out;
	if (c_eh != MPI_ERRHANDLER_NULL && c_eh->fortran_fn != NULL) {
		mpiv_err_detail("a communicator's Fortran error handler "
		    "cannot be set on a file");
		rc = mpiv_file_err(c_file, MPI_ERR_ARG, fn);
		goto out;
	}
	rc = MPI_File_set_errhandler(c_file, c_eh);
out:
	*ierror = rc;
}
FB_ALIAS(mpi_file_set_errhandler_)

/* ---------------- generalized requests ---------------- */

/*
 * MPI_GREQUEST_START with Fortran callbacks: grequest.c calls these C
 * functions, which call the program's subroutines with Fortran
 * arguments (the address-sized EXTRA_STATE, a status of MPI_STATUS_SIZE
 * INTEGERs, LOGICAL COMPLETE, IERROR last) and return their IERROR.
 */
typedef void fb_greq_query_fn(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef void fb_greq_free_fn(MPI_Aint *, MPI_Fint *);
typedef void fb_greq_cancel_fn(MPI_Aint *, MPI_Fint *, MPI_Fint *);

struct fb_greq {
	fb_greq_query_fn *query;
	fb_greq_free_fn *free;
	fb_greq_cancel_fn *cancel;
	MPI_Aint extra;
};

static int
fb_greq_query(void *extra, MPI_Status *status)
{
	struct fb_greq *g = extra;
	MPI_Fint f[MPI_F_STATUS_SIZE], ierr = MPI_SUCCESS;

	/* (a Fortran INTEGER array need not be aligned as MPI_Status is) */
	memcpy(f, status, sizeof(*status));
	g->query(&g->extra, f, &ierr);
	memcpy(status, f, sizeof(*status));
	return ierr;
}

static int
fb_greq_free(void *extra)
{
	struct fb_greq *g = extra;
	MPI_Fint ierr = MPI_SUCCESS;

	g->free(&g->extra, &ierr);
	free(g);	/* grequest.c never calls back after free_fn */
	return ierr;
}

static int
fb_greq_cancel(void *extra, int complete)
{
	struct fb_greq *g = extra;
	MPI_Fint fcomplete = complete != 0, ierr = MPI_SUCCESS;

	g->cancel(&g->extra, &fcomplete, &ierr);
	return ierr;
}

void
mpi_grequest_start_(fb_proc *query_fn, fb_proc *free_fn, fb_proc *cancel_fn,
    MPI_Aint *extra_state, MPI_Fint *request, MPI_Fint *ierror)
{
	MPI_Request c = MPI_REQUEST_NULL;
	struct fb_greq *g;
	int rc;

	if (query_fn == NULL || free_fn == NULL || cancel_fn == NULL) {
		*ierror = mpiv_err(NULL, MPI_ERR_ARG, "MPI_Grequest_start");
		return;
	}
	if ((g = malloc(sizeof(*g))) == NULL) {
		*ierror = mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start");
		return;
	}
	g->query = (fb_greq_query_fn *)query_fn;
	g->free = (fb_greq_free_fn *)free_fn;
	g->cancel = (fb_greq_cancel_fn *)cancel_fn;
	g->extra = *extra_state;
	rc = MPI_Grequest_start(fb_greq_query, fb_greq_free, fb_greq_cancel,
	    g, &c);
	if (rc != MPI_SUCCESS) {
		free(g);
		*ierror = rc;
		return;
	}
	*request = mpiv_f_out(MPIV_F_REQUEST, c);
	*ierror = MPI_SUCCESS;
}
FB_ALIAS(mpi_grequest_start_)

/* A status in and out, which the generated wrappers do not have. */
void
mpi_status_set_elements_(MPI_Fint *status, MPI_Fint *datatype,
    MPI_Fint *count, MPI_Fint *ierror)
{
	MPI_Datatype t;
	MPI_Status st;
	int rc;

	if ((rc = mpiv_fw_in(MPIV_F_TYPE, *datatype, (void **)&t,
	    "MPI_Status_set_elements")) != MPI_SUCCESS) {
		*ierror = rc;
		return;
	}
	memcpy(&st, status, sizeof(st));
	if ((rc = MPI_Status_set_elements(&st, t, *count)) == MPI_SUCCESS)
		memcpy(status, &st, sizeof(st));
	*ierror = rc;
}
FB_ALIAS(mpi_status_set_elements_)

void
mpi_status_set_cancelled_(MPI_Fint *status, MPI_Fint *flag, MPI_Fint *ierror)
{
	MPI_Status st;
	int rc;

	memcpy(&st, status, sizeof(st));
	if ((rc = MPI_Status_set_cancelled(&st, *flag != 0)) == MPI_SUCCESS)
		memcpy(status, &st, sizeof(st));
	*ierror = rc;
}
FB_ALIAS(mpi_status_set_cancelled_)

/* ---------------- attributes ---------------- */

/* The predefined attribute callbacks, as Fortran sees them: only their
   addresses matter (fb_copy_fn / fb_delete_fn map them to C's). */
void mpi_comm_null_copy_fn_(void) {}
void mpi_comm_null_delete_fn_(void) {}
void mpi_comm_dup_fn_(void) {}
void mpi_null_copy_fn_(void) {}
void mpi_null_delete_fn_(void) {}
void mpi_dup_fn_(void) {}

/*
 * Attribute callbacks written in Fortran. A keyval made in Fortran with
 * procedures of the program's own gets C callbacks that call them (the
 * trampolines below), and a record of them by keyval; the predefined
 * Fortran callbacks become C's. The program's procedures get the
 * object's Fortran handle, the keyval, the extra state and values as
 * INTEGER(KIND=MPI_ADDRESS_KIND), or as INTEGER for MPI_KEYVAL_CREATE's
 * (MPI-1) ones, and LOGICAL FLAG, IERROR last.
 */
typedef void fb_copy_f(MPI_Fint *, MPI_Fint *, void *, void *, void *,
    MPI_Fint *, MPI_Fint *);
typedef void fb_delete_f(MPI_Fint *, MPI_Fint *, void *, void *,
    MPI_Fint *);

struct fb_keyval {
	fb_proc *copy, *del;	/* the program's, or NULL: C's predefined */
	bool mpi1;		/* INTEGER values (MPI_KEYVAL_CREATE) */
};

static struct fb_keyval *fb_kvs;	/* by keyval */
static size_t fb_nkvs;

static struct fb_keyval *
fb_kv(int keyval)
{
	if (keyval < 0 || (size_t)keyval >= fb_nkvs)
		return NULL;
	return &fb_kvs[keyval];
}

/* Records keyval's Fortran callbacks (a new keyval; an old record of a
   freed keyval of that number is replaced). -1: out of memory. */
static int
fb_kv_set(int keyval, fb_proc *copy, fb_proc *del, bool mpi1)
{
	if (keyval < 0)
		return -1;
	if ((size_t)keyval >= fb_nkvs) {
		size_t n = (size_t)keyval + 16;
		struct fb_keyval *v = realloc(fb_kvs, n * sizeof(*v));

		if (v == NULL)
			return -1;
		memset(v + fb_nkvs, 0, (n - fb_nkvs) * sizeof(*v));
		fb_kvs = v;
		fb_nkvs = n;
	}
	fb_kvs[keyval].copy = copy;
	fb_kvs[keyval].del = del;
	fb_kvs[keyval].mpi1 = mpi1;
	return 0;
}

static int
fb_copy_any(enum mpiv_fkind kind, void *obj, int keyval, void *extra,
    void *in, void *out, int *flag)
{
	const struct fb_keyval *k = fb_kv(keyval);
	MPI_Fint h = mpiv_f_out(kind, obj), kv = keyval, fl = 0;
	MPI_Fint ierr = MPI_SUCCESS;

	*flag = 0;
	if (k == NULL || k->copy == NULL)
		return MPI_ERR_INTERN;
	if (k->mpi1) {
		MPI_Fint ex = (MPI_Fint)(intptr_t)extra;
		MPI_Fint vin = (MPI_Fint)(intptr_t)in, vout = 0;

		((fb_copy_f *)k->copy)(&h, &kv, &ex, &vin, &vout, &fl, &ierr);
		*(void **)out = (void *)(intptr_t)vout;
	} else {
		MPI_Aint ex = (MPI_Aint)(intptr_t)extra;
		MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;

		((fb_copy_f *)k->copy)(&h, &kv, &ex, &vin, &vout, &fl, &ierr);
		*(void **)out = (void *)(intptr_t)vout;
	}
	*flag = fl != 0;
	return ierr;
}

static int
fb_delete_any(enum mpiv_fkind kind, void *obj, int keyval, void *val,
    void *extra)
{
	const struct fb_keyval *k = fb_kv(keyval);
	MPI_Fint h = mpiv_f_out(kind, obj), kv = keyval;
	MPI_Fint ierr = MPI_SUCCESS;

	if (k == NULL || k->del == NULL)
		return MPI_ERR_INTERN;
	if (k->mpi1) {
		MPI_Fint v = (MPI_Fint)(intptr_t)val;
		MPI_Fint ex = (MPI_Fint)(intptr_t)extra;

		((fb_delete_f *)k->del)(&h, &kv, &v, &ex, &ierr);
	} else {
		MPI_Aint v = (MPI_Aint)(intptr_t)val;
		MPI_Aint ex = (MPI_Aint)(intptr_t)extra;

		((fb_delete_f *)k->del)(&h, &kv, &v, &ex, &ierr);
	}
	return ierr;
}

static int
fb_comm_copy(MPI_Comm o, int kv, void *ex, void *in, void *out, int *fl)
{
	return fb_copy_any(MPIV_F_COMM, o, kv, ex, in, out, fl);
}

static int
fb_comm_delete(MPI_Comm o, int kv, void *val, void *ex)
{
	return fb_delete_any(MPIV_F_COMM, o, kv, val, ex);
}

static int
fb_type_copy(MPI_Datatype o, int kv, void *ex, void *in, void *out, int *fl)
{
	return fb_copy_any(MPIV_F_TYPE, o, kv, ex, in, out, fl);
}

static int
fb_type_delete(MPI_Datatype o, int kv, void *val, void *ex)
{
	return fb_delete_any(MPIV_F_TYPE, o, kv, val, ex);
}

static int
fb_win_copy(MPI_Win o, int kv, void *ex, void *in, void *out, int *fl)
{
	return fb_copy_any(MPIV_F_WIN, o, kv, ex, in, out, fl);
}

static int
fb_win_delete(MPI_Win o, int kv, void *val, void *ex)
{
	return fb_delete_any(MPIV_F_WIN, o, kv, val, ex);
}

/* After a keyval's creation: its record, or the keyval is freed again
   and MPI_ERR_NO_MEM. */
static int
fb_kv_made(int rc, int *k, fb_proc *copy, fb_proc *del, bool mpi1,
    int (*free_kv)(int *), const char *fn)
{
	if (rc != MPI_SUCCESS)
		return rc;
	if ((copy != NULL || del != NULL) && fb_kv_set(*k, copy, del,
	    mpi1) != 0) {
		(void)free_kv(k);
		*k = MPI_KEYVAL_INVALID;
		return mpiv_err(NULL, MPI_ERR_NO_MEM, fn);
	}
	return MPI_SUCCESS;
}

static void
fb_create_keyval(fb_proc *copy_fn, fb_proc *delete_fn, MPI_Fint *keyval,
    MPI_Aint extra, bool mpi1, MPI_Fint *ierror, const char *fn)
{
	MPI_Comm_copy_attr_function *cc = fb_comm_copy;
	MPI_Comm_delete_attr_function *cd = fb_comm_delete;
	fb_proc *uc = copy_fn, *ud = delete_fn;
	int k = MPI_KEYVAL_INVALID, rc;

	if (copy_fn == mpi_comm_null_copy_fn_ || copy_fn == mpi_null_copy_fn_) {
		cc = MPI_COMM_NULL_COPY_FN;
		uc = NULL;
	} else if (copy_fn == mpi_comm_dup_fn_ || copy_fn == mpi_dup_fn_) {
		cc = MPI_COMM_DUP_FN;
		uc = NULL;
	}
	if (delete_fn == mpi_comm_null_delete_fn_ ||
	    delete_fn == mpi_null_delete_fn_) {
		cd = MPI_COMM_NULL_DELETE_FN;
		ud = NULL;
	}
	if (copy_fn == NULL || delete_fn == NULL) {
		*ierror = mpiv_err(NULL, MPI_ERR_ARG, fn);
		return;
	}
	rc = MPI_Comm_create_keyval(cc, cd, &k, (void *)(intptr_t)extra);
	*ierror = fb_kv_made(rc, &k, uc, ud, mpi1, MPI_Comm_free_keyval, fn);
	*keyval = k;
}

void
mpi_comm_create_keyval_(fb_proc *copy_fn, fb_proc *delete_fn,
    MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Fint *ierror)
{
	fb_create_keyval(copy_fn, delete_fn, keyval, *extra_state, false,
	    ierror, "MPI_Comm_create_keyval");
}
FB_ALIAS(mpi_comm_create_keyval_)

void
mpi_keyval_create_(fb_proc *copy_fn, fb_proc *delete_fn, MPI_Fint *keyval,
    MPI_Fint *extra_state, MPI_Fint *ierror)
{
	fb_create_keyval(copy_fn, delete_fn, keyval, *extra_state, true,
	    ierror, "MPI_Keyval_create");
}
FB_ALIAS(mpi_keyval_create_)

/*
 * A Fortran attribute is a value (INTEGER(KIND=MPI_ADDRESS_KIND)), kept
 * as the C attribute's pointer. The predefined keys' C values point at an
 * int: Fortran gets the int.
 */
static int
fb_get_attr(MPI_Fint *comm, MPI_Fint keyval, MPI_Aint *val, MPI_Fint *flag,
    const char *fn)
{
	MPI_Comm c;
	void *v = NULL;
	int rc, fl = 0;

	if ((rc = mpiv_fw_in(MPIV_F_COMM, *comm, (void **)&c, fn)) != 0)
		return rc;
	rc = MPI_Comm_get_attr(c, keyval, &v, &fl);
	*flag = fl ? 1 : 0;
	if (rc == MPI_SUCCESS && fl)
		*val = keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE ?
		    *(int *)v : (MPI_Aint)(intptr_t)v;
	return rc;
}

static int
fb_set_attr(MPI_Fint *comm, MPI_Fint keyval, MPI_Aint val, const char *fn)
{
	MPI_Comm c;
	int rc;

	if ((rc = mpiv_fw_in(MPIV_F_COMM, *comm, (void **)&c, fn)) != 0)
		return rc;
	return MPI_Comm_set_attr(c, keyval, (void *)(intptr_t)val);
}

void
mpi_comm_get_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,
    MPI_Fint *flag, MPI_Fint *ierror)
{
	*ierror = fb_get_attr(comm, *keyval, val, flag, "MPI_Comm_get_attr");
}
FB_ALIAS(mpi_comm_get_attr_)

void
mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,
    MPI_Fint *flag, MPI_Fint *ierror)
{
	MPI_Aint v = 0;

	*ierror = fb_get_attr(comm, *keyval, &v, flag, "MPI_Attr_get");
	if (*ierror == MPI_SUCCESS && *flag)
		*val = (MPI_Fint)v;
}
FB_ALIAS(mpi_attr_get_)

void
mpi_comm_set_attr_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *val,
    MPI_Fint *ierror)
{
	*ierror = fb_set_attr(comm, *keyval, *val, "MPI_Comm_set_attr");
}
FB_ALIAS(mpi_comm_set_attr_)

void
mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val,
    MPI_Fint *ierror)
{
	*ierror = fb_set_attr(comm, *keyval, *val, "MPI_Attr_put");
}
FB_ALIAS(mpi_attr_put_)

/* Datatype and window keyvals: the same rule, each kind with its own
   predefined callbacks. */
void mpi_type_null_copy_fn_(void) {}
void mpi_type_null_delete_fn_(void) {}
void mpi_type_dup_fn_(void) {}
void mpi_win_null_copy_fn_(void) {}
void mpi_win_null_delete_fn_(void) {}
void mpi_win_dup_fn_(void) {}

/* MPI_TYPE_CREATE_KEYVAL (win false) or MPI_WIN_CREATE_KEYVAL: the
   kind's predefined callbacks become C's, the program's go through the
   trampolines. */
static int
fb_obj_keyval(bool win, fb_proc *copy_fn, fb_proc *delete_fn,
    MPI_Fint *keyval, MPI_Aint extra)
{
	const char *fn = win ? "MPI_Win_create_keyval" :
	    "MPI_Type_create_keyval";
	fb_proc *uc = copy_fn, *ud = delete_fn;
	bool null_copy, dup, null_delete;
	int k = MPI_KEYVAL_INVALID, rc;

	if (copy_fn == NULL || delete_fn == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	null_copy = copy_fn == (win ? mpi_win_null_copy_fn_ :
	    mpi_type_null_copy_fn_);
	dup = copy_fn == (win ? mpi_win_dup_fn_ : mpi_type_dup_fn_);
	null_delete = delete_fn == (win ? mpi_win_null_delete_fn_ :
	    mpi_type_null_delete_fn_);
	if (null_copy || dup)
		uc = NULL;
	if (null_delete)
		ud = NULL;
	if (win)
		rc = MPI_Win_create_keyval(null_copy ? MPI_WIN_NULL_COPY_FN :
		    dup ? MPI_WIN_DUP_FN : fb_win_copy, null_delete ?
		    MPI_WIN_NULL_DELETE_FN : fb_win_delete, &k,
		    (void *)(intptr_t)extra);
	else
		rc = MPI_Type_create_keyval(null_copy ? MPI_TYPE_NULL_COPY_FN :
		    dup ? MPI_TYPE_DUP_FN : fb_type_copy, null_delete ?
		    MPI_TYPE_NULL_DELETE_FN : fb_type_delete, &k,
		    (void *)(intptr_t)extra);
	rc = fb_kv_made(rc, &k, uc, ud, false, win ? MPI_Win_free_keyval :
	    MPI_Type_free_keyval, fn);
	*keyval = k;
	return rc;
}

void
mpi_type_create_keyval_(fb_proc *copy_fn, fb_proc *delete_fn,
    MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Fint *ierror)
{
	*ierror = fb_obj_keyval(false, copy_fn, delete_fn, keyval,
	    *extra_state);
}
FB_ALIAS(mpi_type_create_keyval_)

void
mpi_win_create_keyval_(fb_proc *copy_fn, fb_proc *delete_fn,
    MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Fint *ierror)
{
	*ierror = fb_obj_keyval(true, copy_fn, delete_fn, keyval,
	    *extra_state);
}
FB_ALIAS(mpi_win_create_keyval_)

void
mpi_type_set_attr_(MPI_Fint *datatype, MPI_Fint *keyval, MPI_Aint *val,
    MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Type_set_attr";
	MPI_Datatype t;

	if ((*ierror = mpiv_fw_in(MPIV_F_TYPE, *datatype, (void **)&t, fn)) ==
	    MPI_SUCCESS)
		*ierror = MPI_Type_set_attr(t, *keyval, (void *)(intptr_t)*val);
}
FB_ALIAS(mpi_type_set_attr_)

void
mpi_type_get_attr_(MPI_Fint *datatype, MPI_Fint *keyval, MPI_Aint *val,
    MPI_Fint *flag, MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Type_get_attr";
	MPI_Datatype t;
	void *v = NULL;
	int fl = 0;

	*flag = 0;
	if ((*ierror = mpiv_fw_in(MPIV_F_TYPE, *datatype, (void **)&t, fn)) !=
	    MPI_SUCCESS)
		return;
	*ierror = MPI_Type_get_attr(t, *keyval, &v, &fl);
	*flag = fl ? 1 : 0;
	if (*ierror == MPI_SUCCESS && fl)
		*val = (MPI_Aint)(intptr_t)v;
}
FB_ALIAS(mpi_type_get_attr_)

void
mpi_win_set_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val,
    MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Win_set_attr";
	MPI_Win w;

	if ((*ierror = mpiv_fw_in(MPIV_F_WIN, *win, (void **)&w, fn)) ==
	    MPI_SUCCESS)
		*ierror = MPI_Win_set_attr(w, *keyval, (void *)(intptr_t)*val);
}
FB_ALIAS(mpi_win_set_attr_)

/* The predefined window keys' C values point at the value (an MPI_Aint
   for MPI_WIN_SIZE, an int for the others) but MPI_WIN_BASE's, which
   is the address itself: Fortran gets the value, or the address. */
void
mpi_win_get_attr_(MPI_Fint *win, MPI_Fint *keyval, MPI_Aint *val,
    MPI_Fint *flag, MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Win_get_attr";
	MPI_Win w;
	void *v = NULL;
	int fl = 0;

	*flag = 0;
	if ((*ierror = mpiv_fw_in(MPIV_F_WIN, *win, (void **)&w, fn)) !=
	    MPI_SUCCESS)
		return;
	*ierror = MPI_Win_get_attr(w, *keyval, &v, &fl);
	*flag = fl ? 1 : 0;
	if (*ierror != MPI_SUCCESS || !fl)
		return;
	switch (*keyval) {
	case MPI_WIN_SIZE:
		*val = *(MPI_Aint *)v;
		break;
	case MPI_WIN_DISP_UNIT:
	case MPI_WIN_CREATE_FLAVOR:
	case MPI_WIN_MODEL:
		*val = *(int *)v;
		break;
	default:
		*val = (MPI_Aint)(intptr_t)v;
	}
}
FB_ALIAS(mpi_win_get_attr_)

/* ---------------- distributed graphs ---------------- */

/* Weights may be MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY: COMMON blocks of
   mpif.h whose addresses mpiv_f_weights turns into C's. */
void
mpi_dist_graph_create_adjacent_(MPI_Fint *comm_old, MPI_Fint *indegree,
    MPI_Fint *sources, MPI_Fint *sourceweights, MPI_Fint *outdegree,
    MPI_Fint *destinations, MPI_Fint *destweights, MPI_Fint *info,
    MPI_Fint *reorder, MPI_Fint *comm_dist_graph, MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Dist_graph_create_adjacent";
	MPI_Comm c = NULL, g = NULL;
	MPI_Info ci = NULL;

	if ((*ierror = mpiv_fw_in(MPIV_F_COMM, *comm_old, (void **)&c, fn)) !=
	    MPI_SUCCESS ||
	    (*ierror = mpiv_fw_in(MPIV_F_INFO, *info, (void **)&ci, fn)) !=
	    MPI_SUCCESS)
		return;
	*ierror = MPI_Dist_graph_create_adjacent(c, *indegree, sources,
	    mpiv_f_weights(sourceweights), *outdegree, destinations,
	    mpiv_f_weights(destweights), ci, *reorder != 0, &g);
	*comm_dist_graph = mpiv_f_out(MPIV_F_COMM, g);
}
FB_ALIAS(mpi_dist_graph_create_adjacent_)

void
mpi_dist_graph_create_(MPI_Fint *comm_old, MPI_Fint *n, MPI_Fint *sources,
    MPI_Fint *degrees, MPI_Fint *destinations, MPI_Fint *weights,
    MPI_Fint *info, MPI_Fint *reorder, MPI_Fint *comm_dist_graph,
    MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Dist_graph_create";
	MPI_Comm c = NULL, g = NULL;
	MPI_Info ci = NULL;

	if ((*ierror = mpiv_fw_in(MPIV_F_COMM, *comm_old, (void **)&c, fn)) !=
	    MPI_SUCCESS ||
	    (*ierror = mpiv_fw_in(MPIV_F_INFO, *info, (void **)&ci, fn)) !=
	    MPI_SUCCESS)
		return;
	*ierror = MPI_Dist_graph_create(c, *n, sources, degrees, destinations,
	    mpiv_f_weights(weights), ci, *reorder != 0, &g);
	*comm_dist_graph = mpiv_f_out(MPIV_F_COMM, g);
}
FB_ALIAS(mpi_dist_graph_create_)

void
mpi_dist_graph_neighbors_(MPI_Fint *comm, MPI_Fint *maxindegree,
    MPI_Fint *sources, MPI_Fint *sourceweights, MPI_Fint *maxoutdegree,
    MPI_Fint *destinations, MPI_Fint *destweights, MPI_Fint *ierror)
{
	static const char fn[] = "MPI_Dist_graph_neighbors";
	MPI_Comm c = NULL;

	if ((*ierror = mpiv_fw_in(MPIV_F_COMM, *comm, (void **)&c, fn)) !=
	    MPI_SUCCESS)
		return;
	*ierror = MPI_Dist_graph_neighbors(c, *maxindegree, sources,
	    mpiv_f_weights(sourceweights), *maxoutdegree, destinations,
	    mpiv_f_weights(destweights));
}
FB_ALIAS(mpi_dist_graph_neighbors_)

/* ---------------- the w collectives (arrays of datatypes) ---------------- */

/* How many blocks an array of datatypes of a w collective on c has:
   WHICH 0 its size (MPI_ALLTOALLW), 1 its in-degree (the receive side of
   MPI_NEIGHBOR_ALLTOALLW), 2 its out-degree (the send side); 0 if c has
   no topology (the call itself then says so). */
static int
fb_nblocks(MPI_Comm c, int which)
{
	int kind = MPI_UNDEFINED, n = 0, in = 0, out = 0, w = 0, r = 0;

	if (which == 0)
		return MPI_Comm_size(c, &n) == MPI_SUCCESS ? n : 0;
	if (c->remote != NULL || MPI_Topo_test(c, &kind) != MPI_SUCCESS)
		return 0;
	switch (kind) {
	case MPI_CART:
		return MPI_Cartdim_get(c, &n) == MPI_SUCCESS ? 2 * n : 0;
	case MPI_GRAPH:
		if (MPI_Comm_rank(c, &r) != MPI_SUCCESS ||
		    MPI_Graph_neighbors_count(c, r, &n) != MPI_SUCCESS)
			return 0;
		return n;
	case MPI_DIST_GRAPH:
		if (MPI_Dist_graph_neighbors_count(c, &in, &out, &w) !=
		    MPI_SUCCESS)
			return 0;
		return which == 1 ? in : out;
	default:
		return 0;
	}
}

/* The same for the mpi_f08 module, whose procedures pass the arrays'
   first elements (TYPE(MPI_Datatype) arrays, copied out to INTEGERs). */
MPI_Fint mpi_f08_nblocks_(MPI_Fint *comm, MPI_Fint *which);
MPI_Fint
mpi_f08_nblocks_(MPI_Fint *comm, MPI_Fint *which)
{
	MPI_Comm c;

	if (mpiv_f_f2c(MPIV_F_COMM, *comm, (void **)&c) != 0 || c == NULL ||
	    c == MPI_COMM_NULL)
		return 0;
	return fb_nblocks(c, *which);
}

/* Converts a w collective's two arrays of datatypes (the send one unless
   in place), ns and nr long; the C arrays are freed by the caller. */
static int
fb_w_types(const MPI_Fint *st, int ns, const MPI_Fint *rt, int nr,
    bool inplace, void ***cs, void ***cr, const char *fn)
{
	int rc;

	*cs = *cr = NULL;
	if ((rc = mpiv_fw_ina(MPIV_F_TYPE, rt, nr, cr, false, fn)) !=
	    MPI_SUCCESS)
		return rc;
	if (!inplace && (rc = mpiv_fw_ina(MPIV_F_TYPE, st, ns, cs, false,
	    fn)) != MPI_SUCCESS)
		return rc;
	return MPI_SUCCESS;
}

/* MPI_ALLTOALLW and MPI_IALLTOALLW (request not NULL). */
static int
fb_alltoallw(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
    MPI_Fint *sendtypes, void *recvbuf, MPI_Fint *recvcounts,
    MPI_Fint *rdispls, MPI_Fint *recvtypes, MPI_Fint *comm,
    MPI_Fint *request, const char *fn)
{
	void **cs = NULL, **cr = NULL, *sb = mpiv_f_buf(sendbuf);
	MPI_Comm c;
	MPI_Request r = MPI_REQUEST_NULL;
	int rc, n;

	if ((rc = mpiv_fw_in(MPIV_F_COMM, *comm, (void **)&c, fn)) !=
	    MPI_SUCCESS)
		return rc;
	n = fb_nblocks(c, 0);
	if ((rc = fb_w_types(sendtypes, n, recvtypes, n, sb == MPI_IN_PLACE,
	    &cs, &cr, fn)) == MPI_SUCCESS) {
		const MPI_Datatype *ts = (const MPI_Datatype *)(cs != NULL ?
		    cs : cr);

		if (request == NULL)
			rc = MPI_Alltoallw(sb, sendcounts, sdispls, ts,
			    mpiv_f_buf(recvbuf), recvcounts, rdispls,
			    (const MPI_Datatype *)cr, c);
		else {
			rc = MPI_Ialltoallw(sb, sendcounts, sdispls, ts,
			    mpiv_f_buf(recvbuf), recvcounts, rdispls,
			    (const MPI_Datatype *)cr, c, &r);
			*request = mpiv_f_out(MPIV_F_REQUEST, r);
		}
	}
	free(cs);
	free(cr);
	return rc;
}

void
mpi_alltoallw_(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
    MPI_Fint *sendtypes, void *recvbuf, MPI_Fint *recvcounts,
    MPI_Fint *rdispls, MPI_Fint *recvtypes, MPI_Fint *comm, MPI_Fint *ierror)
{
	*ierror = fb_alltoallw(sendbuf, sendcounts, sdispls, sendtypes,
	    recvbuf, recvcounts, rdispls, recvtypes, comm, NULL,
	    "MPI_Alltoallw");
}
FB_ALIAS(mpi_alltoallw_)

void
mpi_ialltoallw_(void *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
    MPI_Fint *sendtypes, void *recvbuf, MPI_Fint *recvcounts,
    MPI_Fint *rdispls, MPI_Fint *recvtypes, MPI_Fint *comm,
    MPI_Fint *request, MPI_Fint *ierror)
{
	*ierror = fb_alltoallw(sendbuf, sendcounts, sdispls, sendtypes,
	    recvbuf, recvcounts, rdispls, recvtypes, comm, request,
	    "MPI_Ialltoallw");
}
FB_ALIAS(mpi_ialltoallw_)

/* MPI_NEIGHBOR_ALLTOALLW and MPI_INEIGHBOR_ALLTOALLW (request not NULL):
   the send types are as many as the out-neighbours, the receive types
   as the in-neighbours. */
static int
fb_neighbor_alltoallw(void *sendbuf, MPI_Fint *sendcounts,
    MPI_Aint *sdispls, MPI_Fint *sendtypes, void *recvbuf,
    MPI_Fint *recvcounts, MPI_Aint *rdispls, MPI_Fint *recvtypes,
    MPI_Fint *comm, MPI_Fint *request, const char *fn)
{
	void **cs = NULL, **cr = NULL;
	MPI_Comm c;
	MPI_Request r = MPI_REQUEST_NULL;
	int rc;

	if ((rc = mpiv_fw_in(MPIV_F_COMM, *comm, (void **)&c, fn)) !=
	    MPI_SUCCESS)
		return rc;
	if ((rc = fb_w_types(sendtypes, fb_nblocks(c, 2), recvtypes,
	    fb_nblocks(c, 1), false, &cs, &cr, fn)) == MPI_SUCCESS) {
		/* (mpiv_fw_ina's arrays are never NULL, even empty) */
		const MPI_Datatype *ts = (const MPI_Datatype *)cs;
		const MPI_Datatype *tr = (const MPI_Datatype *)cr;

		if (request == NULL)
			rc = MPI_Neighbor_alltoallw(mpiv_f_buf(sendbuf),
			    sendcounts, sdispls, ts, mpiv_f_buf(recvbuf),
			    recvcounts, rdispls, tr, c);
		else {
			rc = MPI_Ineighbor_alltoallw(mpiv_f_buf(sendbuf),
			    sendcounts, sdispls, ts, mpiv_f_buf(recvbuf),
			    recvcounts, rdispls, tr, c, &r);
			*request = mpiv_f_out(MPIV_F_REQUEST, r);
		}
	}
	free(cs);
	free(cr);
	return rc;
}

void
mpi_neighbor_alltoallw_(void *sendbuf, MPI_Fint *sendcounts,
    MPI_Aint *sdispls, MPI_Fint *sendtypes, void *recvbuf,
    MPI_Fint *recvcounts, MPI_Aint *rdispls, MPI_Fint *recvtypes,
    MPI_Fint *comm, MPI_Fint *ierror)
{
	*ierror = fb_neighbor_alltoallw(sendbuf, sendcounts, sdispls,
	    sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, NULL,
	    "MPI_Neighbor_alltoallw");
}
FB_ALIAS(mpi_neighbor_alltoallw_)

void
mpi_ineighbor_alltoallw_(void *sendbuf, MPI_Fint *sendcounts,
    MPI_Aint *sdispls, MPI_Fint *sendtypes, void *recvbuf,
    MPI_Fint *recvcounts, MPI_Aint *rdispls, MPI_Fint *recvtypes,
    MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
	*ierror = fb_neighbor_alltoallw(sendbuf, sendcounts, sdispls,
	    sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request,
	    "MPI_Ineighbor_alltoallw");
}
FB_ALIAS(mpi_ineighbor_alltoallw_)
