/* dt_large: the MPI_Count queries (MPI_Type_size_x, _get_extent_x,
 * _get_true_extent_x, MPI_Get_elements_x) on types of more than 2^31
 * bytes (no buffer needed), and, where the library has the MPI-4 "_c"
 * calls (mpiv; not Open MPI 4.1, the reference run): Send_c, Recv_c,
 * Isend_c, Irecv_c, Sendrecv_c, Bcast_c, Get_count_c, Type_contiguous_c
 * with a count over 2^31 and its envelope/contents, Pack_c, Unpack_c,
 * Pack_size_c, the _c extent and size queries. */
#include "mpitest.h"

#if MPI_VERSION >= 4 || defined(MPIV_MPI_LITE)
#define HAVE_C 1
#endif

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_large");
	MPI_Datatype gib, big;
	MPI_Count sz, lb, ext;

	/* 3 x 1 GiB of ints, vector with a gap: size 3 GiB, extent 4 GiB */
	MPI_OK(MPI_Type_contiguous(1 << 28, MPI_INT, &gib));
	MPI_OK(MPI_Type_vector(3, 1, 4, gib, &big));
	MPI_OK(MPI_Type_commit(&big));
	MPI_OK(MPI_Type_size_x(big, &sz));
	CHECK(sz == 3LL << 30, "size_x %lld, want 3 GiB", sz);
	MPI_OK(MPI_Type_get_extent_x(big, &lb, &ext));
	CHECK(lb == 0 && ext == 9LL << 30, "extent_x %lld %lld, want 0, 9 GiB", lb, ext);
	MPI_OK(MPI_Type_get_true_extent_x(big, &lb, &ext));
	CHECK(lb == 0 && ext == 9LL << 30, "true extent_x %lld %lld", lb, ext);
	{
		int isz;
		MPI_OK(MPI_Type_size(big, &isz));
		CHECK_INT(isz, MPI_UNDEFINED, "MPI_Type_size of 3 GiB");
	}
	{
		/* a status of 3 * 2^30 ints (12 GiB: 4 elements of big) */
		MPI_Status st;
		MPI_Count c;
		int ic;
		MPI_OK(MPI_Status_set_elements_x(&st, MPI_INT, 3LL << 30));
		MPI_OK(MPI_Get_elements_x(&st, MPI_INT, &c));
		CHECK(c == 3LL << 30, "Get_elements_x %lld", c);
		MPI_OK(MPI_Get_elements(&st, MPI_INT, &ic));
		CHECK_INT(ic, MPI_UNDEFINED, "Get_elements over INT_MAX");
		MPI_OK(MPI_Get_elements_x(&st, big, &c));
		CHECK(c == 3LL << 30, "Get_elements_x in units of big: %lld", c);
		t_mix_int(c);
	}
	t_mix_int(sz);
	t_mix_int(ext);

#ifdef HAVE_C
	{
		MPI_Count n = 3000000000LL, c, e, cnts[1];
		MPI_Datatype t, got[1];
		MPI_Count ni, na, nc, nt;
		int comb, rc;
		MPI_OK(MPI_Type_contiguous_c(n, MPI_BYTE, &t));
		MPI_OK(MPI_Type_commit(&t));
		MPI_OK(MPI_Type_size_c(t, &c));
		CHECK(c == n, "Type_contiguous_c size %lld", c);
		MPI_OK(MPI_Type_get_extent_c(t, &lb, &e));
		CHECK(lb == 0 && e == n, "Type_contiguous_c extent %lld %lld", lb, e);
		MPI_OK(MPI_Type_get_true_extent_c(t, &lb, &e));
		CHECK(lb == 0 && e == n, "Type_contiguous_c true extent %lld %lld", lb, e);
		MPI_OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb));
		CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 0 && na == 0 && nc == 1 && nt == 1,
		    "envelope_c %lld %lld %lld %lld %d", ni, na, nc, nt, comb);
		MPI_OK(MPI_Type_get_contents_c(t, 0, 0, 1, 1, NULL, NULL, cnts, got));
		CHECK(cnts[0] == n && got[0] == MPI_BYTE, "contents_c %lld", cnts[0]);
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		{
			int a, b, d;
			rc = MPI_Type_get_envelope(t, &a, &b, &d, &comb);
			CHECK(rc != MPI_SUCCESS, "int get_envelope of a large-count type");
		}
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
		MPI_OK(MPI_Pack_size_c(n, MPI_INT, MPI_COMM_WORLD, &c));
		CHECK(c == 4 * n, "Pack_size_c %lld", c);
		MPI_OK(MPI_Type_free(&t));
	}
	{
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		double a[10], b[10];
		MPI_Status st;
		MPI_Request rq[2];
		MPI_Count c;
		for (int i = 0; i < 10; i++)
			a[i] = t_rank + i * 0.5;
		MPI_OK(MPI_Sendrecv_c(a, 10, MPI_DOUBLE, right, 1, b, 10, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count_c(&st, MPI_DOUBLE, &c));
		CHECK(c == 10 && b[9] == left + 4.5, "Sendrecv_c");
		MPI_OK(MPI_Irecv_c(b, 10, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[0]));
		MPI_OK(MPI_Isend_c(a, 7, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[1]));
		MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		CHECK(b[6] == left + 3.0, "Isend_c/Irecv_c");
		if (t_rank == 0 && t_size > 1)
			MPI_OK(MPI_Send_c(a, 3, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD));
		if (t_rank == 1) {
			MPI_OK(MPI_Recv_c(b, 10, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Get_count_c(&st, MPI_DOUBLE, &c));
			CHECK(c == 3 && b[2] == 1.0, "Send_c/Recv_c");
		}
		for (int i = 0; i < 10; i++)
			b[i] = t_rank == 0 ? i * 3.0 : -1;
		MPI_OK(MPI_Bcast_c(b, 10, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		CHECK(b[9] == 27.0, "Bcast_c");
		/* Pack_c / Unpack_c */
		char pk[128];
		MPI_Count pos = 0;
		MPI_OK(MPI_Pack_c(a, 10, MPI_DOUBLE, pk, sizeof pk, &pos, MPI_COMM_WORLD));
		CHECK(pos == 80, "Pack_c position %lld", pos);
		pos = 0;
		MPI_OK(MPI_Unpack_c(pk, 80, &pos, b, 10, MPI_DOUBLE, MPI_COMM_WORLD));
		CHECK(pos == 80 && b[9] == a[9], "Unpack_c");
	}
#endif
	MPI_OK(MPI_Type_free(&big));
	MPI_OK(MPI_Type_free(&gib));
	return t_finish();
}
