/* p2p_persistent: Send_init / Recv_init reused over iterations with
 * Start and Startall, buffers changed between starts, Request_free of an
 * inactive persistent request. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_persistent");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int sbuf[8], rbuf[8];
	MPI_Request rq[2];
	MPI_Status st[2];
	MPI_OK(MPI_Recv_init(rbuf, 8, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Send_init(sbuf, 8, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[1]));
	for (int it = 0; it < 20; it++) {
		for (int i = 0; i < 8; i++)
			sbuf[i] = it * 100 + t_rank * 8 + i, rbuf[i] = -1;
		if (it % 2) {
			MPI_OK(MPI_Startall(2, rq));
		} else {
			MPI_OK(MPI_Start(&rq[0]));
			MPI_OK(MPI_Start(&rq[1]));
		}
		if (it % 3 == 0) {
			MPI_OK(MPI_Waitall(2, rq, st));
		} else {
			MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
			MPI_OK(MPI_Wait(&rq[0], &st[0]));
		}
		CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
		    "Wait freed a persistent request");
		CHECK_INT(st[0].MPI_SOURCE, left, "persistent recv source");
		CHECK_INT(st[0].MPI_TAG, 4, "persistent recv tag");
		for (int i = 0; i < 8; i++)
			CHECK_INT(rbuf[i], it * 100 + left * 8 + i, "persistent payload");
		t_mix(rbuf, sizeof rbuf);
	}
	/* Test on an inactive persistent request: flag 1, empty status */
	int flag = 0;
	MPI_OK(MPI_Test(&rq[0], &flag, &st[0]));
	CHECK_INT(flag, 1, "Test of an inactive persistent request");
	CHECK(rq[0] != MPI_REQUEST_NULL, "Test freed an inactive persistent request");
	MPI_OK(MPI_Request_free(&rq[0]));
	MPI_OK(MPI_Request_free(&rq[1]));
	CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free handles");

	/* persistent with PROC_NULL */
	MPI_Request p;
	int x = 5;
	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &p));
	MPI_OK(MPI_Start(&p));
	MPI_OK(MPI_Wait(&p, &st[0]));
	CHECK_INT(st[0].MPI_SOURCE, MPI_PROC_NULL, "persistent PROC_NULL source");
	CHECK_INT(x, 5, "persistent PROC_NULL buffer");
	MPI_OK(MPI_Request_free(&p));
	return t_finish();
}
