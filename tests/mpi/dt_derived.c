/* dt_derived: contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, struct (with padding), resized, dup, and the old MPI-1
 * constructors; size / extent / true extent; Get_address; transfers that
 * scatter/gather through the layouts (sender and receiver types differ). */
#include "mpitest.h"

static void ext_is(MPI_Datatype t, long lb, long ext, long tlb, long text, int size, const char *what)
{
	MPI_Aint a, b;
	int sz;
	MPI_OK(MPI_Type_get_extent(t, &a, &b));
	CHECK(a == lb && b == ext, "%s: lb %ld extent %ld, want %ld %ld", what, (long)a, (long)b, lb, ext);
	MPI_OK(MPI_Type_get_true_extent(t, &a, &b));
	CHECK(a == tlb && b == text, "%s: true lb %ld extent %ld, want %ld %ld", what, (long)a, (long)b, tlb, text);
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == size, "%s: size %d, want %d", what, sz, size);
}

/* send `scount` of stype from sbuf to self-ring, receive as rcount rtype */
static void xfer(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype)
{
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	MPI_OK(MPI_Sendrecv(sbuf, scount, stype, right, 0, rbuf, rcount, rtype, left, 0,
	    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_derived");
	int left = (t_rank + t_size - 1) % t_size;
	int a[100], b[100];
	for (int i = 0; i < 100; i++)
		a[i] = t_rank * 1000 + i;

	/* contiguous */
	MPI_Datatype c5;
	MPI_OK(MPI_Type_contiguous(5, MPI_INT, &c5));
	MPI_OK(MPI_Type_commit(&c5));
	ext_is(c5, 0, 20, 0, 20, 20, "contiguous(5,int)");
	memset(b, 0, sizeof b);
	xfer(a, 2, c5, b, 10, MPI_INT);
	for (int i = 0; i < 10; i++)
		CHECK_INT(b[i], left * 1000 + i, "contiguous payload");
	t_mix(b, 40);

	/* vector: 4 blocks of 2, stride 5: elements 0,1,5,6,10,11,15,16 */
	MPI_Datatype v;
	MPI_OK(MPI_Type_vector(4, 2, 5, MPI_INT, &v));
	MPI_OK(MPI_Type_commit(&v));
	ext_is(v, 0, 17 * 4, 0, 17 * 4, 32, "vector(4,2,5)");
	memset(b, 0, sizeof b);
	xfer(a, 1, v, b, 8, MPI_INT);
	{
		int want[8] = { 0, 1, 5, 6, 10, 11, 15, 16 };
		for (int i = 0; i < 8; i++)
			CHECK_INT(b[i], left * 1000 + want[i], "vector gather payload");
	}
	/* receive into the vector layout: scatter */
	for (int i = 0; i < 100; i++)
		b[i] = -1;
	xfer(a, 8, MPI_INT, b, 1, v);
	CHECK(b[0] == left * 1000 + 0 && b[1] == left * 1000 + 1 && b[2] == -1 && b[5] == left * 1000 + 2
	    && b[16] == left * 1000 + 7 && b[17] == -1, "vector scatter payload");
	/* two vectors back to back: the second starts at extent 17 ints */
	for (int i = 0; i < 100; i++)
		b[i] = -1;
	xfer(a, 2, v, b, 2, v);
	CHECK(b[17] == left * 1000 + 17 && b[33] == left * 1000 + 33 && b[34] == -1, "2 x vector payload");
	t_mix(b, sizeof b);

	/* negative stride vector */
	MPI_Datatype vn;
	MPI_OK(MPI_Type_vector(3, 1, -2, MPI_INT, &vn));
	MPI_OK(MPI_Type_commit(&vn));
	ext_is(vn, -16, 20, -16, 20, 12, "vector(3,1,-2)");
	memset(b, 0, sizeof b);
	xfer(a + 10, 1, vn, b, 3, MPI_INT);
	CHECK(b[0] == left * 1000 + 10 && b[1] == left * 1000 + 8 && b[2] == left * 1000 + 6, "negative-stride vector");

	/* hvector: 3 blocks of 1 double, stride 24 bytes */
	double d[12], e[12];
	for (int i = 0; i < 12; i++)
		d[i] = t_rank + i * 0.5;
	MPI_Datatype hv;
	MPI_OK(MPI_Type_create_hvector(3, 1, 24, MPI_DOUBLE, &hv));
	MPI_OK(MPI_Type_commit(&hv));
	ext_is(hv, 0, 56, 0, 56, 24, "hvector(3,1,24)");
	memset(e, 0, sizeof e);
	xfer(d, 1, hv, e, 3, MPI_DOUBLE);
	CHECK(e[0] == left && e[1] == left + 1.5 && e[2] == left + 3.0, "hvector payload");
	MPI_Datatype hv_old;
#ifdef MPIV_MPI_LITE	/* MPI-1 names: removed from Open MPI's mpi.h */
	MPI_OK(MPI_Type_hvector(3, 1, 24, MPI_DOUBLE, &hv_old));
#else
	MPI_OK(MPI_Type_create_hvector(3, 1, 24, MPI_DOUBLE, &hv_old));
#endif
	MPI_OK(MPI_Type_commit(&hv_old));
	ext_is(hv_old, 0, 56, 0, 56, 24, "Type_hvector(3,1,24)");
	t_mix(e, 24);

	/* indexed: blocks {3 at 0}, {1 at 7}, {2 at 4} (unsorted displs) */
	int bl[3] = { 3, 1, 2 }, dp[3] = { 0, 7, 4 };
	MPI_Datatype ix;
	MPI_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &ix));
	MPI_OK(MPI_Type_commit(&ix));
	ext_is(ix, 0, 32, 0, 32, 24, "indexed");
	memset(b, 0, sizeof b);
	xfer(a, 1, ix, b, 6, MPI_INT);
	{
		int want[6] = { 0, 1, 2, 7, 4, 5 };
		for (int i = 0; i < 6; i++)
			CHECK_INT(b[i], left * 1000 + want[i], "indexed payload (type-map order)");
	}
	t_mix(b, 24);

	/* hindexed: byte displacements */
	MPI_Aint hdp[3] = { 8, 40, 0 };
	MPI_Datatype hix, hix_old;
	MPI_OK(MPI_Type_create_hindexed(3, bl, hdp, MPI_INT, &hix));
	MPI_OK(MPI_Type_commit(&hix));
	ext_is(hix, 0, 44, 0, 44, 24, "hindexed");
	memset(b, 0, sizeof b);
	xfer(a, 1, hix, b, 6, MPI_INT);
	{
		int want[6] = { 2, 3, 4, 10, 0, 1 };
		for (int i = 0; i < 6; i++)
			CHECK_INT(b[i], left * 1000 + want[i], "hindexed payload");
	}
#ifdef MPIV_MPI_LITE
	MPI_OK(MPI_Type_hindexed(3, bl, hdp, MPI_INT, &hix_old));
#else
	MPI_OK(MPI_Type_create_hindexed(3, bl, hdp, MPI_INT, &hix_old));
#endif
	MPI_OK(MPI_Type_commit(&hix_old));
	ext_is(hix_old, 0, 44, 0, 44, 24, "Type_hindexed");

	/* indexed_block */
	int ibd[4] = { 9, 1, 5, 20 };
	MPI_Datatype ib;
	MPI_OK(MPI_Type_create_indexed_block(4, 2, ibd, MPI_INT, &ib));
	MPI_OK(MPI_Type_commit(&ib));
	ext_is(ib, 4, 84, 4, 84, 32, "indexed_block");
	memset(b, 0, sizeof b);
	xfer(a, 1, ib, b, 8, MPI_INT);
	{
		int want[8] = { 9, 10, 1, 2, 5, 6, 20, 21 };
		for (int i = 0; i < 8; i++)
			CHECK_INT(b[i], left * 1000 + want[i], "indexed_block payload");
	}
	t_mix(b, 32);

	/* struct with padding: {char; double; short} */
	struct S { char c; double x; short s; } so[4], si[4];
	MPI_Datatype st, st_old;
	int sbl[3] = { 1, 1, 1 };
	MPI_Aint sdp[3], base;
	MPI_OK(MPI_Get_address(&so[0], &base));
	MPI_OK(MPI_Get_address(&so[0].c, &sdp[0]));
	MPI_OK(MPI_Get_address(&so[0].x, &sdp[1]));
	MPI_OK(MPI_Get_address(&so[0].s, &sdp[2]));
	for (int i = 0; i < 3; i++)
		sdp[i] = MPI_Aint_diff(sdp[i], base);
	CHECK(sdp[1] == (MPI_Aint)offsetof(struct S, x) && sdp[2] == (MPI_Aint)offsetof(struct S, s), "Get_address offsets");
	CHECK(MPI_Aint_add(base, sdp[2]) == (MPI_Aint)&so[0].s, "Aint_add");
#ifdef MPIV_MPI_LITE
	MPI_Aint old_addr;
	MPI_OK(MPI_Address(&so[0].x, &old_addr));
	CHECK(old_addr == base + sdp[1], "MPI_Address");
#endif
	MPI_Datatype sty[3] = { MPI_CHAR, MPI_DOUBLE, MPI_SHORT };
	MPI_OK(MPI_Type_create_struct(3, sbl, sdp, sty, &st));
	MPI_OK(MPI_Type_commit(&st));
	/* extent is padded to the alignment of double: 24 */
	ext_is(st, 0, (long)sizeof(struct S), 0, (long)offsetof(struct S, s) + 2, 11, "struct{char,double,short}");
#ifdef MPIV_MPI_LITE
	MPI_OK(MPI_Type_struct(3, sbl, sdp, sty, &st_old));
#else
	MPI_OK(MPI_Type_create_struct(3, sbl, sdp, sty, &st_old));
#endif
	MPI_OK(MPI_Type_commit(&st_old));
	ext_is(st_old, 0, (long)sizeof(struct S), 0, (long)offsetof(struct S, s) + 2, 11, "Type_struct");
	memset(so, 0x5a, sizeof so);
	for (int i = 0; i < 4; i++)
		so[i].c = (char)('A' + t_rank % 26), so[i].x = t_rank + i / 4.0, so[i].s = (short)(i * 100 + t_rank);
	memset(si, 0, sizeof si);
	xfer(so, 4, st, si, 4, st);
	for (int i = 0; i < 4; i++)
		CHECK(si[i].c == (char)('A' + left % 26) && si[i].x == left + i / 4.0 && si[i].s == i * 100 + left,
		    "struct payload element %d", i);
#ifdef MPIV_MPI_LITE
	MPI_Aint ext;
	MPI_OK(MPI_Type_extent(st, &ext));
	CHECK_INT(ext, sizeof(struct S), "Type_extent");
	MPI_OK(MPI_Type_lb(st, &ext));
	CHECK_INT(ext, 0, "Type_lb");
	MPI_OK(MPI_Type_ub(st, &ext));
	CHECK_INT(ext, sizeof(struct S), "Type_ub");
#endif

	/* resized: int with extent 12 -> every third int */
	MPI_Datatype rs, rsv;
	MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 12, &rs));
	MPI_OK(MPI_Type_commit(&rs));
	ext_is(rs, 0, 12, 0, 4, 4, "resized(int,0,12)");
	memset(b, 0, sizeof b);
	xfer(a, 5, rs, b, 5, MPI_INT);
	for (int i = 0; i < 5; i++)
		CHECK_INT(b[i], left * 1000 + 3 * i, "resized payload");
	/* resized with lb: lb -4 extent 8 around an int */
	MPI_Datatype rs2;
	MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 8, &rs2));
	MPI_OK(MPI_Type_commit(&rs2));
	ext_is(rs2, -4, 8, 0, 4, 4, "resized(int,-4,8)");
	/* contiguous of resized struct */
	MPI_OK(MPI_Type_contiguous(2, rs, &rsv));
	MPI_OK(MPI_Type_commit(&rsv));
	ext_is(rsv, 0, 24, 0, 16, 8, "contiguous(2, resized)");
	t_mix(b, 20);

	/* dup + names */
	MPI_Datatype dupv;
	MPI_OK(MPI_Type_dup(v, &dupv));
	ext_is(dupv, 0, 68, 0, 68, 32, "dup(vector)");
	MPI_OK(MPI_Type_set_name(dupv, "my vector"));
	char name[MPI_MAX_OBJECT_NAME];
	int nl;
	MPI_OK(MPI_Type_get_name(dupv, name, &nl));
	CHECK(nl == 9 && !strcmp(name, "my vector"), "Type_get_name '%s'", name);
	MPI_OK(MPI_Type_get_name(MPI_INT, name, &nl));
	CHECK(!strcmp(name, "MPI_INT"), "name of MPI_INT is '%s'", name);
	for (int i = 0; i < 100; i++)
		b[i] = -1;
	xfer(a, 1, dupv, b, 1, v);
	CHECK(b[16] == left * 1000 + 16 && b[4] == -1, "dup payload");

	/* nested: vector of struct */
	MPI_Datatype vs;
	MPI_OK(MPI_Type_vector(2, 1, 2, st, &vs));
	MPI_OK(MPI_Type_commit(&vs));
	ext_is(vs, 0, 3 * (long)sizeof(struct S), 0, 2 * (long)sizeof(struct S) + (long)offsetof(struct S, s) + 2, 22, "vector of struct");
	memset(si, 0, sizeof si);
	xfer(so, 1, vs, si, 2, st);
	CHECK(si[0].s == left && si[1].s == 200 + left, "vector of struct payload");

	MPI_Datatype all[] = { c5, v, vn, hv, hv_old, ix, hix, hix_old, ib, st, st_old, rs, rs2, rsv, dupv, vs };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		MPI_OK(MPI_Type_free(&all[i]));
		CHECK(all[i] == MPI_DATATYPE_NULL, "Type_free handle");
	}
	return t_finish();
}
