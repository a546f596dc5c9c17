/* p2p_cancel: Cancel of a posted receive (Test_cancelled true, buffer
 * untouched), cancel racing a match (either outcome, but consistent),
 * Request_free of an active send, Request_get_status. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_cancel");
	MPI_Status st;
	int flag;

	/* 1. cancel a receive nobody will match */
	int v = -5;
	MPI_Request rq;
	MPI_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Request_get_status(rq, &flag, &st));
	CHECK_INT(flag, 0, "Request_get_status of an unmatched receive");
	CHECK(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK_INT(flag, 1, "Test_cancelled after cancelling a posted receive");
	CHECK_INT(v, -5, "cancelled receive buffer");
	CHECK(rq == MPI_REQUEST_NULL, "Wait after Cancel left the request");

	/* 2. a later message with that tag goes to a later receive (the
	 * barrier keeps it from reaching anyone before their cancel) */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int out = 100 + t_rank;
	MPI_OK(MPI_Send(&out, 1, MPI_INT, right, 999, MPI_COMM_WORLD));
	MPI_OK(MPI_Recv(&v, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &st));
	CHECK_INT(v, 100 + left, "receive after a cancelled one");
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK_INT(flag, 0, "Test_cancelled on a normal receive");

	/* 3. cancel after the match: the message arrived (a barrier after
	 * the send, then probing until it is there); cancel must then fail
	 * (receive completes normally) or succeed with the message still
	 * receivable. Either way we must get the message exactly once. */
	MPI_Request rs;
	out = 200 + t_rank;
	MPI_OK(MPI_Isend(&out, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &rs));
	v = -1;
	MPI_OK(MPI_Irecv(&v, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rs, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	if (flag) {
		CHECK_INT(v, -1, "cancelled receive wrote the buffer");
		MPI_OK(MPI_Recv(&v, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st));
	}
	CHECK_INT(v, 200 + left, "message after cancel race");
	t_mix_int(v);

	/* 4. Request_free on an active send: the message is still delivered */
	out = 300 + t_rank;
	MPI_OK(MPI_Isend(&out, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &rs));
	MPI_OK(MPI_Request_free(&rs));
	CHECK(rs == MPI_REQUEST_NULL, "Request_free did not null the handle");
	MPI_OK(MPI_Recv(&v, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &st));
	CHECK_INT(v, 300 + left, "freed send delivered");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));	/* keep `out` alive until delivered */

	/* 5. Request_get_status on a completed receive: flag 1, request kept,
	 * then Wait frees it and returns the same status */
	out = 400 + t_rank;
	MPI_OK(MPI_Irecv(&v, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Send(&out, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
	flag = 0;
	double t0 = MPI_Wtime();
	while (!flag) {
		MPI_OK(MPI_Request_get_status(rq, &flag, &st));
		CHECK(MPI_Wtime() - t0 < 30, "Request_get_status never completed");
	}
	CHECK(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
	CHECK_INT(st.MPI_SOURCE, left, "Request_get_status source");
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK_INT(st.MPI_TAG, 9, "Wait after get_status tag");
	CHECK_INT(v, 400 + left, "get_status payload");
	/* Request_get_status on MPI_REQUEST_NULL: flag 1, empty status */
	MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
	CHECK_INT(flag, 1, "Request_get_status(REQUEST_NULL)");
	t_mix_int(v);
	return t_finish();
}
