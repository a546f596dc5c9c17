/* dt_zero: derived types with a leading zero-length block (hindexed,
 * hindexed_block, indexed, indexed_block) inside a struct: extents,
 * true extents and the data exchanged; the true extent of a struct with
 * an empty member spans its data only; MPI_Get_elements(_x) counts the
 * basic elements of a partially received struct element while
 * MPI_Get_count says MPI_UNDEFINED; MPI_Status_set_elements(_x). */
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

/* Sends 2 elements of t from a (ints a[i] = rank * 1000 + i) around the
 * ring and checks the received ints equal want (int indices, -1 ends). */
static void ring(MPI_Datatype t, const int *want, const char *what)
{
	int a[128], b[128], right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	for (int i = 0; i < 128; i++) {
		a[i] = t_rank * 1000 + i;
		b[i] = -1;
	}
	MPI_OK(MPI_Sendrecv(a, 2, t, right, 7, b, 2, t, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	int n = 0;
	for (int i = 0; i < 128; i++) {
		if (b[i] == -1)
			continue;
		CHECK(want[n] == i, "%s: int %d received, want int %d next", what, i, want[n]);
		CHECK_INT(b[i], left * 1000 + i, what);
		n++;
	}
	CHECK(want[n] == -1, "%s: %d ints received, want more (int %d)", what, n, want[n]);
	t_mix(b, sizeof b);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_zero");
	int bl[3] = { 0, 2, 1 }, id[3] = { 0, 2, 6 }, sbl[2] = { 1, 1 };
	MPI_Aint d[3] = { 0, 8, 24 }, sd[2] = { 0, 160 };
	MPI_Datatype h, ix, ib, hb, s, inner[4], st[2];

	/* hindexed { 0 ints at 0, 2 at 8, 1 at 24 }: ints 2,3,6 */
	MPI_OK(MPI_Type_create_hindexed(3, bl, d, MPI_INT, &h));
	MPI_OK(MPI_Type_indexed(3, bl, id, MPI_INT, &ix));
	/* indexed_block / hindexed_block of length 0 first, then blocks */
	MPI_OK(MPI_Type_create_indexed_block(3, 0, id, MPI_INT, &ib));
	MPI_OK(MPI_Type_create_hindexed_block(3, 0, d, MPI_INT, &hb));
	ext_is(h, 8, 20, 8, 20, 12, "hindexed, leading empty block");
	ext_is(ix, 8, 20, 8, 20, 12, "indexed, leading empty block");
	/* the displacement of a zero-length block is never used, even
	   when it is out of any range */
	{
		MPI_Aint dz[3] = { (MPI_Aint)1 << 60, 8, 24 };
		int iz[3] = { -2000000000, 2, 6 };
		MPI_Datatype t;
		MPI_OK(MPI_Type_create_hindexed(3, bl, dz, MPI_INT, &t));
		ext_is(t, 8, 20, 8, 20, 12, "hindexed, leading empty block far away");
		MPI_OK(MPI_Type_free(&t));
		MPI_OK(MPI_Type_indexed(3, bl, iz, MPI_DOUBLE, &t));
		ext_is(t, 16, 40, 16, 40, 24, "indexed, leading empty block far away");
		MPI_OK(MPI_Type_free(&t));
	}
	ext_is(ib, 0, 0, 0, 0, 0, "indexed_block of length 0");
	ext_is(hb, 0, 0, 0, 0, 0, "hindexed_block of length 0");
	inner[0] = h; inner[1] = ix;
	for (int k = 0; k < 2; k++) {
		/* struct { inner at 0, int at 160 }: ints 2,3,6 and 40;
		   the element spans 8 .. 164 */
		st[0] = inner[k]; st[1] = MPI_INT;
		MPI_OK(MPI_Type_create_struct(2, sbl, sd, st, &s));
		MPI_OK(MPI_Type_commit(&s));
		ext_is(s, 8, 156, 8, 156, 16, "struct of it");
		int want[] = { 2, 3, 6, 40, 41, 42, 45, 79, -1 };
		ring(s, want, k == 0 ? "struct{hindexed, int}" : "struct{indexed, int}");
		MPI_OK(MPI_Type_free(&s));
	}
	/* a struct whose leading member is empty: { ib at 0, h at 16 } */
	{
		int bl2[2] = { 1, 1 };
		MPI_Aint d2[2] = { 0, 16 };
		MPI_Datatype t2[2] = { hb, h };
		MPI_OK(MPI_Type_create_struct(2, bl2, d2, t2, &s));
		MPI_OK(MPI_Type_commit(&s));
		/* the empty member counts for the bounds (lb 0) but not for
		   the true extent: ints 6,7,10 at 24 .. 44 */
		ext_is(s, 0, 44, 24, 20, 12, "struct{empty, hindexed}");
		int want[] = { 6, 7, 10, 17, 18, 21, -1 };
		ring(s, want, "struct{empty, hindexed}");
		MPI_OK(MPI_Type_free(&s));
	}
	/* hindexed_block with a leading zero displacement block of 2 */
	{
		MPI_Aint d3[3] = { 0, 12, 40 };
		MPI_Datatype t3;
		MPI_OK(MPI_Type_create_hindexed_block(3, 2, d3, MPI_INT, &t3));
		MPI_OK(MPI_Type_commit(&t3));
		ext_is(t3, 0, 48, 0, 48, 24, "hindexed_block(2)");
		int want[] = { 0, 1, 3, 4, 10, 11, 12, 13, 15, 16, 22, 23, -1 };
		ring(t3, want, "hindexed_block(2)");
		MPI_OK(MPI_Type_free(&t3));
	}

	/* Get_elements on a partial struct element: the receiver's element
	   is { int, double[3] }, the sender sends an int and 2 doubles
	   (then 1 + 3 + 1 + 1 for two elements). */
	{
		struct rs { int i; double d[3]; } r[2];
		struct ss { int i; double d[2]; } sv;
		int rbl[2] = { 1, 3 }, sbl2[2] = { 1, 2 };
		MPI_Aint rd[2] = { offsetof(struct rs, i), offsetof(struct rs, d) };
		MPI_Aint sd2[2] = { offsetof(struct ss, i), offsetof(struct ss, d) };
		MPI_Datatype ty[2] = { MPI_INT, MPI_DOUBLE }, rt, stt;
		MPI_Status stat;
		int cnt, el;
		MPI_Count elx;
		MPI_OK(MPI_Type_create_struct(2, rbl, rd, ty, &rt));
		MPI_OK(MPI_Type_create_struct(2, sbl2, sd2, ty, &stt));
		MPI_OK(MPI_Type_commit(&rt));
		MPI_OK(MPI_Type_commit(&stt));
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		memset(&sv, 0, sizeof sv);	/* its padding is sent below */
		sv.i = t_rank;
		sv.d[0] = t_rank + 0.5;
		sv.d[1] = t_rank + 0.25;
		memset(r, 0, sizeof r);
		MPI_OK(MPI_Sendrecv(&sv, 1, stt, right, 3, r, 1, rt, left, 3, MPI_COMM_WORLD, &stat));
		MPI_OK(MPI_Get_count(&stat, rt, &cnt));
		CHECK_INT(cnt, MPI_UNDEFINED, "Get_count of a partial element");
		MPI_OK(MPI_Get_elements(&stat, rt, &el));
		CHECK_INT(el, 3, "Get_elements of int + 2 doubles");
		MPI_OK(MPI_Get_elements_x(&stat, rt, &elx));
		CHECK_INT(elx, 3, "Get_elements_x of int + 2 doubles");
		CHECK(r[0].i == left && r[0].d[0] == left + 0.5 && r[0].d[1] == left + 0.25 && r[0].d[2] == 0,
		    "partial element data");
		/* one whole element then int + double: 4 + 2 elements */
		{
			struct { int i0; double a[3]; int i1; double b; } s2;
			int b4[4] = { 1, 3, 1, 1 };
			MPI_Aint d4[4];
			MPI_Datatype t4[4] = { MPI_INT, MPI_DOUBLE, MPI_INT, MPI_DOUBLE }, ss4;
			MPI_Aint base;
			MPI_OK(MPI_Get_address(&s2, &base));
			MPI_OK(MPI_Get_address(&s2.i0, &d4[0]));
			MPI_OK(MPI_Get_address(&s2.a, &d4[1]));
			MPI_OK(MPI_Get_address(&s2.i1, &d4[2]));
			MPI_OK(MPI_Get_address(&s2.b, &d4[3]));
			for (int i = 0; i < 4; i++)
				d4[i] -= base;
			MPI_OK(MPI_Type_create_struct(4, b4, d4, t4, &ss4));
			MPI_OK(MPI_Type_commit(&ss4));
			s2.i0 = 10 + t_rank; s2.a[0] = 1; s2.a[1] = 2; s2.a[2] = 3; s2.i1 = 20 + t_rank; s2.b = 4;
			memset(r, 0, sizeof r);
			MPI_OK(MPI_Sendrecv(&s2, 1, ss4, right, 4, r, 2, rt, left, 4, MPI_COMM_WORLD, &stat));
			MPI_OK(MPI_Get_count(&stat, rt, &cnt));
			CHECK_INT(cnt, MPI_UNDEFINED, "Get_count of 1.5 elements");
			MPI_OK(MPI_Get_elements(&stat, rt, &el));
			CHECK_INT(el, 6, "Get_elements of 1 element + int + double");
			CHECK(r[1].i == 20 + left && r[1].d[0] == 4 && r[0].d[2] == 3, "1.5 elements data");
			MPI_OK(MPI_Type_free(&ss4));
		}
		/* nothing received: 0 elements */
		MPI_OK(MPI_Sendrecv(r, 0, rt, right, 5, r, 1, rt, left, 5, MPI_COMM_WORLD, &stat));
		MPI_OK(MPI_Get_elements(&stat, rt, &el));
		CHECK_INT(el, 0, "Get_elements of nothing");
		/* bytes that end inside a basic element: MPI_UNDEFINED */
		MPI_OK(MPI_Sendrecv(&sv, 6, MPI_BYTE, right, 6, r, 1, rt, left, 6, MPI_COMM_WORLD, &stat));
		MPI_OK(MPI_Get_elements(&stat, rt, &el));
		CHECK_INT(el, MPI_UNDEFINED, "Get_elements of 6 bytes of {int, double[3]}");
		/* Status_set_elements: 3 basic elements = int + 2 doubles */
		MPI_OK(MPI_Status_set_elements(&stat, rt, 3));
		MPI_OK(MPI_Get_elements(&stat, rt, &el));
		CHECK_INT(el, 3, "Get_elements after Status_set_elements(3)");
		MPI_OK(MPI_Get_count(&stat, MPI_BYTE, &cnt));
		CHECK_INT(cnt, 20, "bytes after Status_set_elements(3)");
		MPI_OK(MPI_Status_set_elements_x(&stat, rt, 8));
		MPI_OK(MPI_Get_count(&stat, rt, &cnt));
		CHECK_INT(cnt, 2, "Get_count after Status_set_elements_x(8)");
		MPI_OK(MPI_Status_set_cancelled(&stat, 1));
		MPI_OK(MPI_Test_cancelled(&stat, &cnt));
		CHECK_INT(cnt, 1, "Test_cancelled after Status_set_cancelled");
		t_mix(r, sizeof r);
		MPI_OK(MPI_Type_free(&rt));
		MPI_OK(MPI_Type_free(&stt));
	}
	MPI_OK(MPI_Type_free(&h));
	MPI_OK(MPI_Type_free(&ix));
	MPI_OK(MPI_Type_free(&ib));
	MPI_OK(MPI_Type_free(&hb));
	return t_finish();
}
