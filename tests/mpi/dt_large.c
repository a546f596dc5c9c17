/* dt_large: the MPI_Count queries (MPI_Type_size_x, _get_extent_x,
 * _get_true_extent_x, MPI_Get_elements_x) on types of more than 2^31
 * bytes (no buffer needed), and, where the library has the MPI-4 "_c"
 * calls (mpiv; not Open MPI 4.1, the reference run): Send_c, Recv_c,
 * Isend_c, Irecv_c, Sendrecv_c, Bcast_c, Get_count_c, Type_contiguous_c
 * with a count over 2^31 and its envelope/contents, Pack_c, Unpack_c,
 * Pack_size_c, the _c extent and size queries, Allreduce_c, Reduce_c,
 * Gather_c, Scatter_c, Allgather_c, Alltoall_c, and the _c vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, subarray,
 * darray, struct, resized constructors
 * (same layouts as the int ones; a count over INT_MAX refused). */
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
		/* bytes up to the largest MPI_Count, and one past it */
		MPI_Count huge[] = { 0x3654321f71234567LL, 0x7654321ff1234567LL,
		    0x7fffffffffffffffLL };
		for (int i = 0; i < 3; i++) {
			MPI_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, huge[i]));
			MPI_OK(MPI_Get_elements_x(&st, MPI_BYTE, &c));
			CHECK(c == huge[i], "Get_elements_x of %llx bytes: %llx",
			    (long long)huge[i], (long long)c);
		}
		MPI_OK(MPI_Status_set_elements_x(&st, MPI_SHORT, 0x3fffffffffffffffLL));
		MPI_OK(MPI_Get_elements_x(&st, MPI_SHORT, &c));
		CHECK(c == 0x3fffffffffffffffLL, "Get_elements_x of 2^62-1 shorts: %llx", (long long)c);
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		int rc = MPI_Status_set_elements_x(&st, MPI_SHORT, 0x4000000000000000LL);
		CHECK(rc != MPI_SUCCESS, "Status_set_elements_x of 2^62 shorts (2^63 bytes) succeeded");
#ifdef MPIV_MPI_LITE
		/* mpiv's largest datatype holds 2^32 - 1 bytes of data */
		MPI_Datatype huge5;
		int cls = 0;
		rc = MPI_Type_contiguous(5, big, &huge5);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_ARG, "a type of 15 GiB");
#endif
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
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
	/* collectives */
	{
		long v[4], w[64], x[64];
		for (int i = 0; i < 4; i++)
			v[i] = t_rank * 10 + i;
		MPI_OK(MPI_Allreduce_c(v, w, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		CHECK(w[3] == 10L * t_size * (t_size - 1) / 2 + 3L * t_size, "Allreduce_c");
		MPI_OK(MPI_Reduce_c(v, w, 4, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD));
		if (t_rank == 0)
			CHECK(w[1] == 10L * (t_size - 1) + 1, "Reduce_c");
		MPI_OK(MPI_Allgather_c(v, 2, MPI_LONG, w, 2, MPI_LONG, MPI_COMM_WORLD));
		CHECK(w[2 * (t_size - 1) + 1] == 10L * (t_size - 1) + 1, "Allgather_c");
		MPI_OK(MPI_Gather_c(v, 1, MPI_LONG, w, 1, MPI_LONG, 0, MPI_COMM_WORLD));
		if (t_rank == 0)
			CHECK(w[t_size - 1] == 10L * (t_size - 1), "Gather_c");
		for (int i = 0; i < 64; i++)
			x[i] = i;
		MPI_OK(MPI_Scatter_c(x, 2, MPI_LONG, w, 2, MPI_LONG, 0, MPI_COMM_WORLD));
		CHECK(w[1] == 2L * t_rank + 1, "Scatter_c");
		MPI_OK(MPI_Alltoall_c(x, 1, MPI_LONG, w, 1, MPI_LONG, MPI_COMM_WORLD));
		CHECK(w[t_size - 1] == t_rank, "Alltoall_c");
	}
	/* constructors: the same layouts as the int ones */
	{
		int g[64], p1[64], p2[64], q1, q2;
		for (int i = 0; i < 64; i++)
			g[i] = i;
		MPI_Datatype a1, a2;
		MPI_Count bl[3] = { 0, 2, 1 }, dd[3] = { 99, 3, 9 }, db[3] = { 99, 12, 36 };
		MPI_Count sz[2] = { 4, 6 }, sub[2] = { 2, 3 }, st[2] = { 1, 2 };
		int ibl[3] = { 0, 2, 1 }, idd[3] = { 0, 3, 9 }, isz[2] = { 4, 6 }, isub[2] = { 2, 3 }, ist[2] = { 1, 2 };
		MPI_Aint adb[3] = { 0, 12, 36 };
		int gsz[2] = { 4, 6 }, gdi[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
		    gda[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, gps[2] = { 2, 1 };
		MPI_Count cgsz[2] = { 4, 6 }, ib[2] = { 1, 4 };
		int iib[2] = { 1, 4 };
		MPI_Aint aib[2] = { 4, 16 };
		MPI_Count cib[2] = { 4, 16 };
		for (int k = 0; k < 8; k++) {
			switch (k) {
			case 0:
				MPI_OK(MPI_Type_vector_c(3, 2, 5, MPI_INT, &a1));
				MPI_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &a2));
				break;
			case 1:
				MPI_OK(MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &a1));
				MPI_OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &a2));
				break;
			case 2:
				MPI_OK(MPI_Type_indexed_c(3, bl, dd, MPI_INT, &a1));
				MPI_OK(MPI_Type_indexed(3, ibl, idd, MPI_INT, &a2));
				break;
			case 3:
				MPI_OK(MPI_Type_create_hindexed_c(3, bl, db, MPI_INT, &a1));
				MPI_OK(MPI_Type_create_hindexed(3, ibl, adb, MPI_INT, &a2));
				break;
			case 5:
				MPI_OK(MPI_Type_create_indexed_block_c(2, 2, ib, MPI_INT, &a1));
				MPI_OK(MPI_Type_create_indexed_block(2, 2, iib, MPI_INT, &a2));
				break;
			case 6:
				MPI_OK(MPI_Type_create_hindexed_block_c(2, 2, cib, MPI_INT, &a1));
				MPI_OK(MPI_Type_create_hindexed_block(2, 2, aib, MPI_INT, &a2));
				break;
			case 7:
				MPI_OK(MPI_Type_create_darray_c(2, 1, 2, cgsz, gdi, gda, gps, MPI_ORDER_C, MPI_INT, &a1));
				MPI_OK(MPI_Type_create_darray(2, 1, 2, gsz, gdi, gda, gps, MPI_ORDER_C, MPI_INT, &a2));
				break;
			default:
				MPI_OK(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &a1));
				MPI_OK(MPI_Type_create_subarray(2, isz, isub, ist, MPI_ORDER_C, MPI_INT, &a2));
			}
			MPI_OK(MPI_Type_commit(&a1));
			MPI_OK(MPI_Type_commit(&a2));
			q1 = q2 = 0;
			MPI_OK(MPI_Pack(g, 2, a1, p1, sizeof p1, &q1, MPI_COMM_WORLD));
			MPI_OK(MPI_Pack(g, 2, a2, p2, sizeof p2, &q2, MPI_COMM_WORLD));
			CHECK(q1 == q2 && memcmp(p1, p2, (size_t)q1) == 0, "_c constructor %d packs otherwise", k);
			MPI_OK(MPI_Type_free(&a1));
			MPI_OK(MPI_Type_free(&a2));
		}
		{
			MPI_Count sbl[2] = { 1, 1 }, sd[2] = { 0, 8 };
			MPI_Datatype sty[2] = { MPI_INT, MPI_DOUBLE }, r;
			MPI_Aint l, e;
			MPI_OK(MPI_Type_create_struct_c(2, sbl, sd, sty, &a1));
			MPI_OK(MPI_Type_create_resized_c(a1, 0, 32, &r));
			MPI_OK(MPI_Type_get_extent(r, &l, &e));
			CHECK(l == 0 && e == 32, "struct_c + resized_c extent %ld", (long)e);
			MPI_OK(MPI_Type_free(&r));
			MPI_OK(MPI_Type_free(&a1));
		}
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		CHECK(MPI_Type_vector_c(3000000000LL, 1, 2, MPI_INT, &a1) == MPI_ERR_COUNT,
		    "vector_c with a count over INT_MAX");
		/* over INT_MAX of a scattered type: refused, nothing built */
		MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &a2));
		MPI_OK(MPI_Type_commit(&a2));
		CHECK(MPI_Type_contiguous_c(3000000000LL, a2, &a1) == MPI_ERR_COUNT,
		    "contiguous_c of 3e9 vectors");
		CHECK(MPI_Send_c(g, 3000000000LL, a2, (t_rank + 1) % t_size, 9, MPI_COMM_WORLD) == MPI_ERR_COUNT,
		    "Send_c of 3e9 vectors");
		MPI_OK(MPI_Type_free(&a2));
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
#endif
	MPI_OK(MPI_Type_free(&big));
	MPI_OK(MPI_Type_free(&gib));
	return t_finish();
}
