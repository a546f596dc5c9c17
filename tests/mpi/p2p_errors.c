/* p2p_errors: with MPI_ERRORS_RETURN, truncation returns MPI_ERR_TRUNCATE
 * (Recv, and via Wait on an Irecv), and the status carries the error. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_errors");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int out[10], in[10], cls;
	MPI_Status st;
	for (int i = 0; i < 10; i++)
		out[i] = t_rank + i;

	/* 1. blocking Recv into a too small buffer */
	MPI_Request rq;
	MPI_OK(MPI_Isend(out, 10, MPI_INT, right, 1, MPI_COMM_WORLD, &rq));
	int rc = MPI_Recv(in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
	CHECK(rc != MPI_SUCCESS, "truncated Recv returned MPI_SUCCESS");
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_TRUNCATE, "truncated Recv error class");
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	/* the first 4 ints may or may not have been written (MPI leaves it
	 * undefined); the message is consumed either way */

	/* 2. Irecv + Wait */
	MPI_OK(MPI_Isend(out, 10, MPI_INT, right, 2, MPI_COMM_WORLD, &rq));
	MPI_Request rr;
	MPI_OK(MPI_Irecv(in, 3, MPI_INT, left, 2, MPI_COMM_WORLD, &rr));
	rc = MPI_Wait(&rr, &st);
	CHECK(rc != MPI_SUCCESS, "truncated Wait returned MPI_SUCCESS");
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_TRUNCATE, "truncated Wait error class");
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

	/* 3. Waitall: MPI_ERR_IN_STATUS, the bad one's status has TRUNCATE */
	MPI_Request r2[2];
	MPI_Status sts[2];
	int okv = 0;
	MPI_OK(MPI_Isend(out, 10, MPI_INT, right, 3, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Irecv(in, 2, MPI_INT, left, 3, MPI_COMM_WORLD, &r2[0]));
	MPI_OK(MPI_Irecv(&okv, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r2[1]));
	rc = MPI_Waitall(2, r2, sts);
	CHECK_INT(rc, MPI_ERR_IN_STATUS, "Waitall with a truncated receive");
	MPI_OK(MPI_Error_class(sts[0].MPI_ERROR, &cls));
	CHECK_INT(cls, MPI_ERR_TRUNCATE, "Waitall status[0].MPI_ERROR class");
	CHECK_INT(sts[1].MPI_ERROR, MPI_SUCCESS, "Waitall status[1].MPI_ERROR");
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

	/* 4. communication still works after the errors */
	MPI_OK(MPI_Sendrecv(out, 10, MPI_INT, right, 4, in, 10, MPI_INT, left, 4, MPI_COMM_WORLD, &st));
	for (int i = 0; i < 10; i++)
		CHECK_INT(in[i], left + i, "payload after errors");
	t_mix(in, sizeof in);
	return t_finish();
}
