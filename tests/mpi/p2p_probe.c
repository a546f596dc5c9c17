/* p2p_probe: Probe / Iprobe (specific and wildcard) then Recv sized by
 * Get_count; Get_elements with a derived type and a partial element;
 * Sendrecv with PROC_NULL ends. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_probe");
	MPI_Status st;
	int cnt;

	/* 1. everyone sends rank+1 ints to rank 0 with tag = rank; rank 0
	 * probes ANY_SOURCE, allocates from Get_count, receives that source */
	int len = t_rank + 1;
	int *msg = malloc(len * sizeof(int));
	for (int i = 0; i < len; i++)
		msg[i] = t_rank * 10 + i;
	MPI_Request rq;
	MPI_OK(MPI_Isend(msg, len, MPI_INT, 0, t_rank, MPI_COMM_WORLD, &rq));
	if (t_rank == 0) {
		int *seen = calloc(t_size, sizeof(int));
		for (int k = 0; k < t_size; k++) {
			MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
			int src = st.MPI_SOURCE;
			CHECK(src >= 0 && src < t_size && !seen[src], "Probe source %d", src);
			CHECK_INT(st.MPI_TAG, src, "Probe tag");
			MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
			CHECK_INT(cnt, src + 1, "Probe Get_count");
			/* probing again gives the same message */
			MPI_Status st2;
			MPI_OK(MPI_Probe(src, st.MPI_TAG, MPI_COMM_WORLD, &st2));
			CHECK_INT(st2.MPI_SOURCE, src, "second Probe source");
			int *in = malloc(cnt * sizeof(int));
			MPI_OK(MPI_Recv(in, cnt, MPI_INT, src, st.MPI_TAG, MPI_COMM_WORLD, &st2));
			for (int i = 0; i < cnt; i++)
				CHECK_INT(in[i], src * 10 + i, "probed message payload");
			seen[src] = 1;
			free(in);
		}
		t_mix(seen, t_size * sizeof(int));
		free(seen);
	}
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	free(msg);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* 2. Iprobe: nothing pending -> flag 0 */
	int flag = 1;
	MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, &st));
	CHECK_INT(flag, 0, "Iprobe with nothing pending");
	/* Iprobe from PROC_NULL: flag 1, source PROC_NULL */
	MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st));
	CHECK_INT(flag, 1, "Iprobe PROC_NULL flag");
	CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Iprobe PROC_NULL source");
	MPI_OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
	CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Probe PROC_NULL source");

	/* 3. Iprobe loop until the ring message arrives, then Get_elements */
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	MPI_Datatype pair;	/* {int, double} struct */
	struct { int i; double d; } p[3] = { { 1, 1.5 }, { 2, 2.5 }, { 3, 3.5 } }, q[3];
	int bl[2] = { 1, 1 };
	MPI_Aint disp[2] = { offsetof(__typeof__(p[0]), i), offsetof(__typeof__(p[0]), d) };
	MPI_Datatype ty[2] = { MPI_INT, MPI_DOUBLE };
	MPI_OK(MPI_Type_create_struct(2, bl, disp, ty, &pair));
	MPI_OK(MPI_Type_commit(&pair));
	for (int i = 0; i < 3; i++)
		p[i].i += t_rank;
	MPI_OK(MPI_Isend(p, 3, pair, right, 5, MPI_COMM_WORLD, &rq));
	flag = 0;
	double t0 = MPI_Wtime();
	while (!flag) {
		MPI_OK(MPI_Iprobe(left, 5, MPI_COMM_WORLD, &flag, &st));
		CHECK(MPI_Wtime() - t0 < 30, "Iprobe never saw the message");
	}
	CHECK_INT(st.MPI_SOURCE, left, "Iprobe source");
	MPI_OK(MPI_Get_count(&st, pair, &cnt));
	CHECK_INT(cnt, 3, "Get_count struct");
	MPI_OK(MPI_Get_elements(&st, pair, &cnt));
	CHECK_INT(cnt, 6, "Get_elements struct (3 x {int,double})");
	MPI_OK(MPI_Recv(q, 3, pair, left, 5, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	for (int i = 0; i < 3; i++) {
		CHECK_INT(q[i].i, i + 1 + left, "struct int");
		CHECK(q[i].d == i + 1.5, "struct double");
	}
	t_mix_int(q[2].i);

	/* 4. partial: send 1 int as 4 bytes received into a 2-int contiguous
	 * type: Get_count UNDEFINED, Get_elements in ints = 1 */
	MPI_Datatype two;
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
	MPI_OK(MPI_Type_commit(&two));
	int v3[3] = { 7, 8, 9 }, w[4] = { 0 };
	MPI_OK(MPI_Sendrecv(v3, 3, MPI_INT, right, 6, w, 2, two, left, 6, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, two, &cnt));
	CHECK_INT(cnt, MPI_UNDEFINED, "Get_count of 3 ints in 2-int type");
	MPI_OK(MPI_Get_elements(&st, two, &cnt));
	CHECK_INT(cnt, 3, "Get_elements of 3 ints in 2-int type");
	CHECK(w[0] == 7 && w[2] == 9 && w[3] == 0, "partial payload");
	MPI_OK(MPI_Type_free(&two));
	MPI_OK(MPI_Type_free(&pair));
	CHECK(pair == MPI_DATATYPE_NULL, "Type_free did not null the handle");

	/* 5. Sendrecv in a line (non-periodic) with PROC_NULL ends */
	int up = t_rank + 1 < t_size ? t_rank + 1 : MPI_PROC_NULL;
	int down = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
	int sv = t_rank * 3, rv = -99;
	MPI_OK(MPI_Sendrecv(&sv, 1, MPI_INT, up, 8, &rv, 1, MPI_INT, down, 8, MPI_COMM_WORLD, &st));
	if (down == MPI_PROC_NULL) {
		CHECK_INT(rv, -99, "Sendrecv from PROC_NULL touched the buffer");
		CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Sendrecv PROC_NULL source");
	} else {
		CHECK_INT(rv, down * 3, "Sendrecv line payload");
	}
	t_mix_int(rv);
	return t_finish();
}
