/* p2p_buffers: the send buffer is reusable as soon as Send / Ssend /
 * Rsend return (or Wait on an Isend); large non-contiguous transfers (an
 * 8 MiB strided vector); MPI_BOTTOM with absolute addresses in a struct
 * type; Sendrecv_replace with a derived type; sends from read-only
 * memory. */
#include "mpitest.h"

static const int ro_table[6] = { 11, 22, 33, 44, 55, 66 };

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_buffers");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	enum { N = 1 << 18 };		/* 1 MiB of ints */
	int *buf = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
	MPI_Request rq[3];

	/* 1. three sends from the same buffer, overwritten right after each
	 * returns; receives are posted up front */
	for (int k = 0; k < 3; k++)
		MPI_OK(MPI_Irecv(in + k * (N / 4), N / 4, MPI_INT, left, 40 + k, MPI_COMM_WORLD, &rq[k]));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));	/* receives posted: Rsend is legal */
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < N / 4; i++)
			buf[i] = t_rank * 7 + k * 100000 + i;
		if (k == 0)
			MPI_OK(MPI_Send(buf, N / 4, MPI_INT, right, 40 + k, MPI_COMM_WORLD));
		else if (k == 1)
			MPI_OK(MPI_Ssend(buf, N / 4, MPI_INT, right, 40 + k, MPI_COMM_WORLD));
		else
			MPI_OK(MPI_Rsend(buf, N / 4, MPI_INT, right, 40 + k, MPI_COMM_WORLD));
		memset(buf, 0xee, (N / 4) * sizeof(int));	/* must not affect the message */
	}
	MPI_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < N / 4; i++)
			if (in[k * (N / 4) + i] != left * 7 + k * 100000 + i)
				CHECK(0, "message %d word %d = %d after the sender reused its buffer", k, i, in[k * (N / 4) + i]);
	t_mix(in, 3 * (N / 4) * sizeof(int));

	/* 2. Isend, Wait, overwrite, Isend again from the same buffer */
	MPI_OK(MPI_Irecv(in, 1000, MPI_INT, left, 50, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Irecv(in + 1000, 1000, MPI_INT, left, 51, MPI_COMM_WORLD, &rq[1]));
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 1000; i++)
			buf[i] = k * 5000 + t_rank + i;
		MPI_OK(MPI_Isend(buf, 1000, MPI_INT, right, 50 + k, MPI_COMM_WORLD, &rq[2]));
		MPI_OK(MPI_Wait(&rq[2], MPI_STATUS_IGNORE));
		memset(buf, 0, 1000 * sizeof(int));
	}
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 1000; i++)
			CHECK(in[k * 1000 + i] == k * 5000 + left + i, "Isend/Wait reuse: message %d word %d", k, i);

	/* 3. 8 MiB strided: every other int of a 16 MiB array (vector type) */
	{
		int cnt = 1 << 21;	/* ints sent */
		int *big = malloc(2 * (size_t)cnt * sizeof(int)), *dst = malloc((size_t)cnt * sizeof(int));
		MPI_Datatype v;
		MPI_OK(MPI_Type_vector(cnt, 1, 2, MPI_INT, &v));
		MPI_OK(MPI_Type_commit(&v));
		for (int i = 0; i < 2 * cnt; i++)
			big[i] = i % 2 ? -1 : t_rank + i / 2;
		MPI_Status st;
		MPI_OK(MPI_Sendrecv(big, 1, v, right, 60, dst, cnt, MPI_INT, left, 60, MPI_COMM_WORLD, &st));
		for (int i = 0; i < cnt; i++)
			if (dst[i] != left + i)
				CHECK(0, "strided 8 MiB word %d = %d", i, dst[i]);
		int c;
		MPI_OK(MPI_Get_count(&st, MPI_INT, &c));
		CHECK_INT(c, cnt, "strided count");
		/* and back into the strided layout */
		for (int i = 0; i < 2 * cnt; i++)
			big[i] = -7;
		MPI_OK(MPI_Sendrecv(dst, cnt, MPI_INT, right, 61, big, 1, v, left, 61, MPI_COMM_WORLD, &st));
		int l2 = (left + t_size - 1) % t_size;
		for (int i = 0; i < 2 * cnt; i++)
			if (big[i] != (i % 2 ? -7 : l2 + i / 2))
				CHECK(0, "strided receive word %d = %d", i, big[i]);
		t_mix(big, 64 * sizeof(int));
		MPI_OK(MPI_Type_free(&v));
		free(big);
		free(dst);
	}

	/* 4. MPI_BOTTOM: a struct type built from absolute addresses of two
	 * separate variables */
	{
		double d = 0.5 + t_rank;
		long long ll = 1000LL * t_rank;
		double rd = 0;
		long long rll = 0;
		MPI_Aint a[2], ra[2];
		int bl[2] = { 1, 1 };
		MPI_Datatype ty[2] = { MPI_DOUBLE, MPI_LONG_LONG }, st_s, st_r;
		MPI_OK(MPI_Get_address(&d, &a[0]));
		MPI_OK(MPI_Get_address(&ll, &a[1]));
		MPI_OK(MPI_Get_address(&rd, &ra[0]));
		MPI_OK(MPI_Get_address(&rll, &ra[1]));
		MPI_OK(MPI_Type_create_struct(2, bl, a, ty, &st_s));
		MPI_OK(MPI_Type_create_struct(2, bl, ra, ty, &st_r));
		MPI_OK(MPI_Type_commit(&st_s));
		MPI_OK(MPI_Type_commit(&st_r));
		MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, st_s, right, 70, MPI_BOTTOM, 1, st_r, left, 70,
		    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(rd == 0.5 + left && rll == 1000LL * left, "MPI_BOTTOM struct: %g %lld", rd, rll);
		MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, st_s, 0, MPI_COMM_WORLD));
		CHECK(d == 0.5 && ll == 0, "Bcast MPI_BOTTOM");
		MPI_OK(MPI_Type_free(&st_s));
		MPI_OK(MPI_Type_free(&st_r));
		t_mix_int(rll);
	}

	/* 5. Sendrecv_replace with a vector type (in place, strided) */
	{
		int a[12];
		MPI_Datatype v3;
		MPI_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &v3));
		MPI_OK(MPI_Type_commit(&v3));
		for (int i = 0; i < 12; i++)
			a[i] = i % 3 ? -1 : t_rank * 10 + i / 3;
		MPI_OK(MPI_Sendrecv_replace(a, 1, v3, right, 80, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < 12; i++)
			CHECK_INT(a[i], i % 3 ? -1 : left * 10 + i / 3, "Sendrecv_replace vector");
		MPI_OK(MPI_Type_free(&v3));
		t_mix(a, sizeof a);
	}

	/* 6. send straight from read-only memory */
	{
		int r[6];
		MPI_OK(MPI_Sendrecv(ro_table, 6, MPI_INT, right, 90, r, 6, MPI_INT, left, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(!memcmp(r, ro_table, sizeof r), "send from const data");
	}
	free(buf);
	free(in);
	return t_finish();
}
