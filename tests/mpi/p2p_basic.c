/* p2p_basic: blocking Send/Recv around a ring with several tags, status
 * fields, Get_count, zero-byte messages, self-messages, MPI_PROC_NULL,
 * MPI_STATUS_IGNORE. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_basic");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	MPI_Status st;
	int cnt;

	/* 1. ring shift of an int array, tag = 100 + sender */
	for (int len = 1; len <= 1000; len *= 10) {
		int *out = malloc(len * sizeof(int)), *in = malloc(len * sizeof(int));
		for (int i = 0; i < len; i++)
			out[i] = t_rank * 100000 + len + i, in[i] = -1;
		MPI_Request rq;
		MPI_OK(MPI_Irecv(in, len, MPI_INT, left, 100 + left, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Send(out, len, MPI_INT, right, 100 + t_rank, MPI_COMM_WORLD));
		MPI_OK(MPI_Wait(&rq, &st));
		CHECK_INT(st.MPI_SOURCE, left, "status source");
		CHECK_INT(st.MPI_TAG, 100 + left, "status tag");
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK_INT(cnt, len, "Get_count");
		for (int i = 0; i < len; i++)
			CHECK_INT(in[i], left * 100000 + len + i, "ring payload");
		t_mix(in, len * sizeof(int));
		free(out);
		free(in);
	}

	/* 2. zero-byte message, received into a larger buffer */
	if (t_size >= 2) {
		if (t_rank == 0) {
			MPI_OK(MPI_Send(NULL, 0, MPI_INT, 1, 7, MPI_COMM_WORLD));
		} else if (t_rank == 1) {
			int buf[4] = { 9, 9, 9, 9 };
			MPI_OK(MPI_Recv(buf, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
			CHECK_INT(cnt, 0, "zero-byte Get_count");
			CHECK_INT(st.MPI_SOURCE, 0, "zero-byte source");
			CHECK_INT(st.MPI_TAG, 7, "zero-byte tag");
			CHECK(buf[0] == 9 && buf[3] == 9, "zero-byte recv touched the buffer");
		}
	}

	/* 3. message to self (Isend then Recv) */
	{
		double d = 3.5 + t_rank, r = 0;
		MPI_Request rq;
		MPI_OK(MPI_Isend(&d, 1, MPI_DOUBLE, t_rank, 5, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Recv(&r, 1, MPI_DOUBLE, t_rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		CHECK(r == d, "self message %g != %g", r, d);
		t_mix(&r, sizeof r);
	}

	/* 4. MPI_PROC_NULL: send is a no-op, recv completes at once */
	{
		int v = 42;
		MPI_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
		st.MPI_SOURCE = 1234;
		st.MPI_TAG = 1234;
		MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
		CHECK_INT(v, 42, "recv from PROC_NULL modified buffer");
		CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL status source");
		CHECK_INT(st.MPI_TAG, MPI_ANY_TAG, "PROC_NULL status tag");
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK_INT(cnt, 0, "PROC_NULL count");
		MPI_Request rq;
		MPI_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Wait(&rq, &st));
		CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Irecv PROC_NULL status source");
		CHECK(rq == MPI_REQUEST_NULL, "Wait did not set request to MPI_REQUEST_NULL");
		MPI_OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	}

	/* 5. many tags, received in reverse tag order from rank 0 */
	if (t_size >= 2) {
		enum { NT = 8 };
		if (t_rank == 0) {
			for (int dst = 1; dst < t_size; dst++)
				for (int t = 0; t < NT; t++) {
					int v = dst * 1000 + t;
					MPI_OK(MPI_Send(&v, 1, MPI_INT, dst, t, MPI_COMM_WORLD));
				}
		} else {
			for (int t = NT - 1; t >= 0; t--) {
				int v = -1;
				MPI_OK(MPI_Recv(&v, 1, MPI_INT, 0, t, MPI_COMM_WORLD, &st));
				CHECK_INT(v, t_rank * 1000 + t, "tag-selected recv");
				CHECK_INT(st.MPI_TAG, t, "tag-selected status tag");
				t_mix_int(v);
			}
		}
	}
	/* 6. char / unsigned char payloads with odd lengths */
	{
		char s[37], r[37];
		for (int i = 0; i < 37; i++)
			s[i] = (char)('a' + (i + t_rank) % 26);
		MPI_OK(MPI_Sendrecv(s, 37, MPI_CHAR, right, 3, r, 37, MPI_CHAR, left, 3,
		    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < 37; i++)
			CHECK_INT(r[i], (char)('a' + (i + left) % 26), "char payload");
		t_mix(r, 37);
	}
	return t_finish();
}
