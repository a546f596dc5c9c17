/* p2p_modes: Ssend, Bsend with Buffer_attach/detach, Rsend (receive
 * posted first), Isend, Issend, Ibsend, Irsend; each checked. Ssends
 * around the ring each taken by an ANY_SOURCE receive whose rank then
 * blocks in its own Ssend. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_modes");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int in[64], out[64];
	MPI_Status st;

	/* Ssend: ring with a pre-posted receive */
	for (int i = 0; i < 64; i++)
		out[i] = t_rank * 64 + i;
	MPI_Request rq;
	MPI_OK(MPI_Irecv(in, 64, MPI_INT, left, 1, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Ssend(out, 64, MPI_INT, right, 1, MPI_COMM_WORLD));
	MPI_OK(MPI_Wait(&rq, &st));
	for (int i = 0; i < 64; i++)
		CHECK_INT(in[i], left * 64 + i, "Ssend payload");
	t_mix(in, sizeof in);

	/* Bsend: attach a buffer, send 4 messages without waiting, detach */
	int bsize = 4 * (64 * (int)sizeof(int) + MPI_BSEND_OVERHEAD) + 1024;
	char *bbuf = malloc(bsize);
	MPI_OK(MPI_Buffer_attach(bbuf, bsize));
	for (int k = 0; k < 4; k++) {
		for (int i = 0; i < 64; i++)
			out[i] = k * 1000 + t_rank;
		MPI_OK(MPI_Bsend(out, 64, MPI_INT, right, 10 + k, MPI_COMM_WORLD));
	}
	for (int i = 0; i < 64; i++)
		out[i] = -7;		/* buffered: changing out must not matter */
	for (int k = 3; k >= 0; k--) {
		MPI_OK(MPI_Recv(in, 64, MPI_INT, left, 10 + k, MPI_COMM_WORLD, &st));
		CHECK_INT(in[0], k * 1000 + left, "Bsend payload");
		CHECK_INT(in[63], k * 1000 + left, "Bsend payload end");
	}
	/* Ibsend too */
	out[0] = 555 + t_rank;
	MPI_OK(MPI_Ibsend(out, 1, MPI_INT, right, 20, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Recv(in, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &st));
	CHECK_INT(in[0], 555 + left, "Ibsend payload");
	void *det = NULL;
	int dsize = 0;
	MPI_OK(MPI_Buffer_detach(&det, &dsize));
	CHECK(det == bbuf, "Buffer_detach returned another address");
	CHECK_INT(dsize, bsize, "Buffer_detach size");
	free(bbuf);

	/* Rsend / Irsend: receiver posts, barrier, then ready send */
	MPI_Request r2[2];
	MPI_OK(MPI_Irecv(&in[0], 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r2[0]));
	MPI_OK(MPI_Irecv(&in[1], 1, MPI_INT, left, 31, MPI_COMM_WORLD, &r2[1]));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	out[0] = 300 + t_rank;
	out[1] = 310 + t_rank;
	MPI_OK(MPI_Rsend(&out[0], 1, MPI_INT, right, 30, MPI_COMM_WORLD));
	MPI_OK(MPI_Irsend(&out[1], 1, MPI_INT, right, 31, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
	CHECK_INT(in[0], 300 + left, "Rsend payload");
	CHECK_INT(in[1], 310 + left, "Irsend payload");

	/* Isend + Issend, received in reverse order */
	MPI_Request s[2];
	out[0] = 400 + t_rank;
	out[1] = 410 + t_rank;
	MPI_OK(MPI_Isend(&out[0], 1, MPI_INT, right, 40, MPI_COMM_WORLD, &s[0]));
	MPI_OK(MPI_Issend(&out[1], 1, MPI_INT, right, 41, MPI_COMM_WORLD, &s[1]));
	MPI_OK(MPI_Recv(&in[1], 1, MPI_INT, left, 41, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Recv(&in[0], 1, MPI_INT, left, 40, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));
	CHECK(s[0] == MPI_REQUEST_NULL && s[1] == MPI_REQUEST_NULL, "Waitall left requests non-null");
	CHECK_INT(in[0], 400 + left, "Isend payload");
	CHECK_INT(in[1], 410 + left, "Issend payload");

	/* Issend must not complete before the receive is posted: rank 0
	 * Issends to 1, Tests a while (must stay incomplete), then tells 1
	 * (by a separate message) to receive. */
	if (t_size >= 2) {
		if (t_rank == 0) {
			int v = 77, flag = 1;
			MPI_OK(MPI_Issend(&v, 1, MPI_INT, 1, 50, MPI_COMM_WORLD, &rq));
			for (int i = 0; i < 20; i++)
				MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
			CHECK_INT(flag, 0, "Issend completed before the matching receive was posted");
			MPI_OK(MPI_Send(NULL, 0, MPI_INT, 1, 51, MPI_COMM_WORLD));
			MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		} else if (t_rank == 1) {
			int v = 0;
			MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK_INT(v, 77, "Issend payload");
		}
	}
	/* Ssend around the ring, each received by an ANY_SOURCE receive
	   after which the receiver blocks in its own Ssend: the match
	   must be acknowledged to its sender without waiting for anything
	   the receiver logs later (nothing is, here) */
	if (t_size > 1) {
		int tok = -1;
		if (t_rank == 0) {
			tok = 1000;
			MPI_OK(MPI_Ssend(&tok, 1, MPI_INT, right, 60, MPI_COMM_WORLD));
			MPI_OK(MPI_Recv(&tok, 1, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &st));
			CHECK_INT(st.MPI_SOURCE, left, "wildcard Ssend ring source");
			CHECK_INT(tok, 1000 + t_size - 1, "wildcard Ssend ring token");
		} else {
			MPI_OK(MPI_Recv(&tok, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
			CHECK_INT(st.MPI_SOURCE, left, "wildcard Ssend ring source");
			tok++;
			MPI_OK(MPI_Ssend(&tok, 1, MPI_INT, right, 60, MPI_COMM_WORLD));
		}
		t_mix_int(tok);
	}
	t_mix(in, 2 * sizeof(int));
	return t_finish();
}
