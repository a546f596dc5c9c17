/* errors: with MPI_ERRORS_RETURN, invalid rank / tag / count / datatype /
 * root / comm / op give the right error classes; Error_string and
 * Error_class; Comm_get_errhandler; a user errhandler is called with the
 * code (Comm_create_errhandler, Comm_call_errhandler); errhandler
 * inheritance on dup; the job keeps working afterwards. */
#include "mpitest.h"

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
	handler_calls++;
	handler_code = *code;
	handler_comm = *comm;
}

#define EXPECT_CLASS(call, cls_want) do { int erc_ = (call), c_ = -1; \
	CHECK(erc_ != MPI_SUCCESS, "%s succeeded", #call); \
	MPI_OK(MPI_Error_class(erc_, &c_)); \
	CHECK(c_ == (cls_want), "%s: class %d, want %s (%d)", #call, c_, #cls_want, cls_want); \
	t_mix_int(c_); } while (0)

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "errors");
	MPI_Errhandler eh;
	MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_ARE_FATAL, "default errhandler of WORLD is not ERRORS_ARE_FATAL");
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "get_errhandler after set");
	MPI_OK(MPI_Errhandler_free(&eh));

	int buf[4] = { 0 };
	MPI_Comm W = MPI_COMM_WORLD;
	EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, t_size, 0, W), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, -5, 0, W), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Recv(buf, 1, MPI_INT, t_size + 3, 0, W, MPI_STATUS_IGNORE), MPI_ERR_RANK);
	EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, -3, W), MPI_ERR_TAG);
	EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, W), MPI_ERR_TAG);
	EXPECT_CLASS(MPI_Recv(buf, 1, MPI_INT, 0, -7, W, MPI_STATUS_IGNORE), MPI_ERR_TAG);
	EXPECT_CLASS(MPI_Send(buf, -1, MPI_INT, 0, 0, W), MPI_ERR_COUNT);
	EXPECT_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, W), MPI_ERR_TYPE);
	EXPECT_CLASS(MPI_Bcast(buf, 1, MPI_INT, t_size, W), MPI_ERR_ROOT);
	EXPECT_CLASS(MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, W), MPI_ERR_OP);
	{
		MPI_Request rq;
		EXPECT_CLASS(MPI_Isend(buf, 1, MPI_INT, t_size, 0, W, &rq), MPI_ERR_RANK);
	}
	/* an uncommitted derived type */
	MPI_Datatype unc;
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &unc));
	EXPECT_CLASS(MPI_Send(buf, 1, unc, t_rank, 0, W), MPI_ERR_TYPE);
	MPI_OK(MPI_Type_free(&unc));
	/* invalid communicator: raised on MPI_COMM_WORLD (MPI-3.1) or SELF */
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
	EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
	{
		int sz;
		EXPECT_CLASS(MPI_Comm_size(MPI_COMM_NULL, &sz), MPI_ERR_COMM);
	}
	/* invalid request-free of REQUEST_NULL */
	{
		MPI_Request rq = MPI_REQUEST_NULL;
		EXPECT_CLASS(MPI_Request_free(&rq), MPI_ERR_REQUEST);
	}
	/* invalid dims */
	{
		int d[2] = { 3, 0 };
		EXPECT_CLASS(MPI_Dims_create(10, 2, d), MPI_ERR_DIMS);
	}

	/* Error_string / Error_class for every class up to PROC_FAILED */
	int classes[] = { MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG,
		MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP,
		MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE,
		MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING, MPI_ERR_UNSUPPORTED_OPERATION };
	char s[MPI_MAX_ERROR_STRING], s0[MPI_MAX_ERROR_STRING];
	int len;
	MPI_OK(MPI_Error_string(MPI_SUCCESS, s0, &len));
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
		int c = -1;
		MPI_OK(MPI_Error_class(classes[i], &c));
		CHECK_INT(c, classes[i], "Error_class of a class");
		len = -1;
		MPI_OK(MPI_Error_string(classes[i], s, &len));
		CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len,
		    "Error_string(%d) length %d", classes[i], len);
		if (i > 0)
			CHECK(strcmp(s, s0) != 0, "Error_string(%d) same as for MPI_SUCCESS", classes[i]);
	}
	MPI_OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
	MPI_OK(MPI_Error_string(MPI_ERR_RANK, s0, &len));
	CHECK(strcmp(s, s0) != 0, "TRUNCATE and RANK have the same string");

	/* user errhandler on a dup */
	MPI_Comm d;
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	MPI_OK(MPI_Comm_get_errhandler(d, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit ERRORS_RETURN");
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_Errhandler mine;
	MPI_OK(MPI_Comm_create_errhandler(handler, &mine));
	MPI_OK(MPI_Comm_set_errhandler(d, mine));
	int rc = MPI_Send(buf, 1, MPI_INT, t_size + 1, 0, d), c;
	CHECK(rc != MPI_SUCCESS, "Send to bad rank with user handler returned success");
	CHECK_INT(handler_calls, 1, "user errhandler calls");
	MPI_OK(MPI_Error_class(handler_code, &c));
	CHECK_INT(c, MPI_ERR_RANK, "user errhandler got class");
	CHECK(handler_comm == d, "user errhandler got the wrong comm");
	MPI_OK(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER));
	CHECK_INT(handler_calls, 2, "Comm_call_errhandler invoked the handler");
	CHECK_INT(handler_code, MPI_ERR_OTHER, "Comm_call_errhandler code");
	MPI_Comm d2;
	MPI_OK(MPI_Comm_dup(d, &d2));
	rc = MPI_Send(buf, 1, MPI_INT, -9, 0, d2);	/* the handler returns, the call returns the code */
	CHECK(rc != MPI_SUCCESS, "Send to rank -9 on d2 succeeded");
	CHECK_INT(handler_calls, 3, "dup inherits the user errhandler");
	MPI_OK(MPI_Comm_free(&d2));
#ifdef MPIV_MPI_LITE	/* MPI-1 names, removed from Open MPI's mpi.h */
	MPI_Errhandler old, h1;
	MPI_OK(MPI_Errhandler_get(d, &old));
	MPI_OK(MPI_Errhandler_create(handler, &h1));
	MPI_OK(MPI_Errhandler_set(d, h1));
	rc = MPI_Send(buf, 1, MPI_INT, -9, 0, d);
	CHECK(rc != MPI_SUCCESS, "Send to rank -9 with an Errhandler_create handler succeeded");
	CHECK_INT(handler_calls, 4, "Errhandler_create handler called");
	handler_calls = 3;
	MPI_OK(MPI_Errhandler_set(d, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Errhandler_free(&h1));
	MPI_OK(MPI_Errhandler_free(&old));
#else
	MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
#endif
	MPI_OK(MPI_Errhandler_free(&mine));
	CHECK(mine == MPI_ERRHANDLER_NULL, "Errhandler_free handle");
	rc = MPI_Send(buf, 1, MPI_INT, t_size + 1, 0, d);
	CHECK(rc != MPI_SUCCESS && handler_calls == 3, "handler called after it was replaced");
	MPI_OK(MPI_Comm_free(&d));

	/* the job still works */
	int sum = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK_INT(sum, t_size * (t_size - 1) / 2, "Allreduce after errors");
	return t_finish();
}
