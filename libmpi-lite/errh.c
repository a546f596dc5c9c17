/*
 * errh.c: error handlers and error strings. Every failing MPI call ends in
 * mpiv_err(), which runs the communicator's handler: ERRORS_ARE_FATAL
 * prints one line naming the call and aborts the job (the only place the
 * library prints), ERRORS_RETURN hands the code back, a user handler is
 * called and then the code is returned.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

enum { ERRH_FATAL = 0, ERRH_RETURN = 1, ERRH_USER = 2 };

struct mpiv_errhandler mpiv_errors_are_fatal = { .fn = NULL,
	.kind = ERRH_FATAL, .refcount = 1, .predefined = true };
struct mpiv_errhandler mpiv_errors_return = { .fn = NULL,
	.kind = ERRH_RETURN, .refcount = 1, .predefined = true };
struct mpiv_errhandler mpiv_errhandler_null = { .fn = NULL,
	.kind = ERRH_FATAL, .refcount = 1, .predefined = true };

static const char *const errh_strings[] = {
	[MPI_SUCCESS] = "no error",
	[MPI_ERR_BUFFER] = "invalid buffer pointer",
	[MPI_ERR_COUNT] = "invalid count argument",
	[MPI_ERR_TYPE] = "invalid datatype",
	[MPI_ERR_TAG] = "invalid tag",
	[MPI_ERR_COMM] = "invalid communicator",
	[MPI_ERR_RANK] = "invalid rank",
	[MPI_ERR_REQUEST] = "invalid request",
	[MPI_ERR_ROOT] = "invalid root",
	[MPI_ERR_GROUP] = "invalid group",
	[MPI_ERR_OP] = "invalid reduction operation (or not defined on this "
	    "datatype)",
	[MPI_ERR_TOPOLOGY] = "invalid topology",
	[MPI_ERR_DIMS] = "invalid dimension argument",
	[MPI_ERR_ARG] = "invalid argument",
	[MPI_ERR_UNKNOWN] = "unknown error",
	[MPI_ERR_TRUNCATE] = "message truncated",
	[MPI_ERR_OTHER] = "other error",
	[MPI_ERR_INTERN] = "internal error",
	[MPI_ERR_IN_STATUS] = "error code is in status",
	[MPI_ERR_PENDING] = "pending request",
	[MPI_ERR_KEYVAL] = "invalid attribute keyval",
	[MPI_ERR_NO_MEM] = "out of memory",
	[MPI_ERR_INFO] = "invalid info object",
	[MPI_ERR_INFO_KEY] = "invalid info key",
	[MPI_ERR_INFO_VALUE] = "invalid info value",
	[MPI_ERR_INFO_NOKEY] = "info key not defined",
	[MPI_ERR_WIN] = "invalid window",
	[MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported by mpiv",
	[MPI_ERR_PROC_FAILED] = "process failure: lost contact with the "
	    "Channel Memory",
	[MPI_ERR_SPAWN] = "spawning processes is not supported by mpiv",
	[MPI_ERR_PORT] = "invalid port name",
	[MPI_ERR_NAME] = "invalid service name",
	[MPI_ERR_SERVICE] = "invalid service name for MPI_Unpublish_name",
	[MPI_ERR_RMA_SYNC] = "wrong synchronization of RMA calls",
	[MPI_ERR_RMA_RANGE] = "target memory is not part of the window",
	[MPI_ERR_RMA_ATTACH] = "memory cannot be attached to the window",
	[MPI_ERR_RMA_FLAVOR] = "call not valid for this window flavor",
	[MPI_ERR_RMA_CONFLICT] = "conflicting accesses to a window",
	[MPI_ERR_RMA_SHARED] = "memory cannot be shared",
	[MPI_ERR_BASE] = "invalid base",
	[MPI_ERR_SIZE] = "invalid size",
	[MPI_ERR_DISP] = "invalid displacement",
	[MPI_ERR_LOCKTYPE] = "invalid lock type",
	[MPI_ERR_ASSERT] = "invalid assert argument",
	[MPI_ERR_FILE] = "invalid file handle",
	[MPI_ERR_NOT_SAME] = "arguments not the same on every process of "
	    "the collective call",
	[MPI_ERR_AMODE] = "invalid file access mode",
	[MPI_ERR_UNSUPPORTED_DATAREP] = "data representation not supported "
	    "by mpiv (only \"native\")",
	[MPI_ERR_NO_SUCH_FILE] = "no such file",
	[MPI_ERR_FILE_EXISTS] = "file exists",
	[MPI_ERR_BAD_FILE] = "invalid file name",
	[MPI_ERR_ACCESS] = "permission denied",
	[MPI_ERR_NO_SPACE] = "not enough space",
	[MPI_ERR_QUOTA] = "quota exceeded",
	[MPI_ERR_READ_ONLY] = "read-only file or file system",
	[MPI_ERR_FILE_IN_USE] = "file in use by some process",
	[MPI_ERR_DUP_DATAREP] = "data representation already defined",
	[MPI_ERR_CONVERSION] = "data conversion failed",
	[MPI_ERR_IO] = "I/O error",
};

/* What the failing call found out, beyond its code (mpiv_err_detail). */
static char errh_detail[256];

void
mpiv_err_detail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errh_detail, sizeof(errh_detail), fmt, ap);
	va_end(ap);
}

const char *
mpiv_err_last_detail(void)
{
	return errh_detail;
}

static const char *
errh_string(int code)
{
	const char *s;

	if (code >= 0 && code < (int)(sizeof(errh_strings) /
	    sizeof(errh_strings[0])) && errh_strings[code] != NULL)
		return errh_strings[code];
	if (mpiv_errclass_lookup(code, NULL, &s) && s[0] != '\0')
		return s;	/* MPI_Add_error_string */
	return NULL;
}

int
mpiv_err(MPI_Comm comm, int code, const char *fn)
{
	if (code == MPI_SUCCESS) {
		errh_detail[0] = '\0';
		return code;
	}
	if (comm == MPI_COMM_NULL || comm->group == NULL)
		comm = MPI_COMM_WORLD;
	return mpiv_err_handler(comm->errh, &comm, code, fn);
}

int
mpiv_err_handler(MPI_Errhandler eh, void *obj, int code, const char *fn)
{
	const char *s;
	char line[512], detail[sizeof(errh_detail)];

	/* The detail belongs to this error only, whatever the handler. */
	memcpy(detail, errh_detail, sizeof(detail));
	errh_detail[0] = '\0';
	if (code == MPI_SUCCESS)
		return code;
	if (eh == MPI_ERRHANDLER_NULL)
		eh = MPI_ERRORS_ARE_FATAL;
	switch (eh->kind) {
	case ERRH_RETURN:
		return code;
	case ERRH_USER:
		if (eh->fortran_fn != NULL) {
			/* a Fortran handler (of communicators only: windows
			   have no Fortran binding of their handlers) */
			MPI_Fint fc = MPI_Comm_c2f(*(MPI_Comm *)obj), fe = code;
			eh->fortran_fn(&fc, &fe);
		} else if (eh->fn != NULL) {
			/* Same calling convention for a communicator's and a
			   window's handler: a pointer to the handle. */
			int e = code;
			eh->fn(obj, &e);
		}
		return code;
	default:
		break;
	}
	s = errh_string(code);
	/* A lost CM, an error the CM sent (replay diverged ...) or a replay
	   divergence found here: its own line says more than the code. */
	if ((code == MPI_ERR_PROC_FAILED || code == MPI_ERR_INTERN) &&
	    mpiv_transport_error() != NULL)
		s = mpiv_transport_error();
	if (s != NULL && detail[0] != '\0')
		snprintf(line, sizeof(line), "%s: %s: %s", fn, s, detail);
	else if (s != NULL)
		snprintf(line, sizeof(line), "%s: %s", fn, s);
	else
		snprintf(line, sizeof(line), "%s: error code %d", fn, code);
	fprintf(stderr, "mpiv: rank %d: %s\n", mpiv_state.world_rank, line);
	fflush(stderr);
	mpiv_abort_job(code, line);
}

int
mpiv_unsupported(const char *fn)
{
	return mpiv_err(NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn);
}

void
mpiv_errh_retain(MPI_Errhandler e)
{
	if (e != MPI_ERRHANDLER_NULL && !e->predefined)
		e->refcount++;
}

void
mpiv_errh_release(MPI_Errhandler e)
{
	if (e != MPI_ERRHANDLER_NULL && !e->predefined && --e->refcount == 0)
		free(e);
}

int
MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
	int rc;

	if ((rc = mpiv_comm_check(comm)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Comm_set_errhandler");
	if (errhandler == MPI_ERRHANDLER_NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler");
	mpiv_errh_retain(errhandler);
	mpiv_errh_release(comm->errh);
	comm->errh = errhandler;
	return MPI_SUCCESS;
}

int
MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	int rc;

	if ((rc = mpiv_comm_check(comm)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Comm_get_errhandler");
	if (errhandler == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler");
	/* The caller owns a reference, freed with MPI_Errhandler_free. */
	mpiv_errh_retain(comm->errh);
	*errhandler = comm->errh;
	return MPI_SUCCESS;
}

int
MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
	return MPI_Comm_set_errhandler(comm, errhandler);
}

int
MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	return MPI_Comm_get_errhandler(comm, errhandler);
}

int
MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn,
    MPI_Errhandler *errhandler)
{
	struct mpiv_errhandler *e;

	if (fn == NULL || errhandler == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Comm_create_errhandler");
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM,
		    "MPI_Comm_create_errhandler");
	e->fn = fn;
	e->kind = ERRH_USER;
	e->refcount = 1;
	*errhandler = e;
	return MPI_SUCCESS;
}

int
MPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *errhandler)
{
	return MPI_Comm_create_errhandler(fn, errhandler);
}

int
MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
	if (errhandler == NULL || *errhandler == MPI_ERRHANDLER_NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Errhandler_free");
	mpiv_errh_release(*errhandler);
	*errhandler = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

int
MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	int rc;

	if ((rc = mpiv_comm_check(comm)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Comm_call_errhandler");
	mpiv_err(comm, errorcode, "MPI_Comm_call_errhandler");
	/* The standard: returns MPI_SUCCESS if the handler returned. */
	return MPI_SUCCESS;
}

int
MPI_Error_string(int errorcode, char *string, int *resultlen)
{
	const char *s;

	if (string == NULL || resultlen == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Error_string");
	s = errh_string(errorcode);
	if (s != NULL)
		snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
	else if (errorcode > 0 && errorcode <= MPI_ERR_LASTCODE)
		snprintf(string, MPI_MAX_ERROR_STRING, "error code %d",
		    errorcode);
	else if (mpiv_errclass_lookup(errorcode, NULL, &s))
		snprintf(string, MPI_MAX_ERROR_STRING, "%s", s);
	else
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Error_string");
	*resultlen = (int)strlen(string);
	return MPI_SUCCESS;
}

int
MPI_Error_class(int errorcode, int *errorclass)
{
	if (errorclass != NULL &&
	    mpiv_errclass_lookup(errorcode, errorclass, NULL))
		return MPI_SUCCESS;	/* added by the program */
	if (errorclass == NULL || errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Error_class");
	/* Every mpiv error code is its own class. */
	*errorclass = errorcode;
	return MPI_SUCCESS;
}
