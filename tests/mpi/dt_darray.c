/* dt_darray: MPI_Type_create_subarray and MPI_Type_create_darray in
 * MPI_ORDER_C and MPI_ORDER_FORTRAN (BLOCK with and without a block
 * size, CYCLIC(k), CYCLIC default, NONE): layouts checked against hand
 * computed index lists, then against an independent owner-of-each-index
 * computation for every rank of 7 process grids; extents; a
 * subarray exchanged between ranks. */
#include "mpitest.h"

#define GMAX 4096
static int g[GMAX];

/* packs one element of t from g, checks the ints are want[0..n-1] */
static void packs(MPI_Datatype t, const int *want, int n, const char *what)
{
	static int out[GMAX];
	int pos = 0, sz;
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == n * (int)sizeof(int), "%s: size %d, want %d ints", what, sz, n);
	MPI_OK(MPI_Pack(g, 1, t, out, (int)sizeof out, &pos, MPI_COMM_WORLD));
	for (int i = 0; i < n; i++)
		CHECK(out[i] == want[i], "%s: packed int %d is %d, want %d", what, i, out[i], want[i]);
	t_mix(out, (size_t)pos);
}

static void extent_is(MPI_Datatype t, long lb, long ext, const char *what)
{
	MPI_Aint a, b;
	MPI_OK(MPI_Type_get_extent(t, &a, &b));
	CHECK(a == lb && b == ext, "%s: lb %ld extent %ld, want %ld %ld", what, (long)a, (long)b, lb, ext);
}

/* owner coordinate of index x of a dimension (independent of the
   library's way of building the type) */
static int owner(int x, int gsize, int distrib, int darg, int p)
{
	if (distrib == MPI_DISTRIBUTE_NONE)
		return 0;
	if (distrib == MPI_DISTRIBUTE_BLOCK) {
		int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + p - 1) / p : darg;
		return x / b;
	}
	int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
	return (x / k) % p;
}

/* every rank of the grid: the type holds exactly the indices it owns,
   in increasing memory order, and spans the whole array */
static void darray_all(int nd, const int *gs, const int *di, const int *da, const int *ps, int order, const char *what)
{
	int size = 1, total = 1, seen = 0;
	for (int i = 0; i < nd; i++) {
		size *= ps[i];
		total *= gs[i];
	}
	for (int r = 0; r < size; r++) {
		int coord[4], rest = r, want[GMAX], n = 0;
		for (int i = nd - 1; i >= 0; i--) {	/* row-major grid */
			coord[i] = rest % ps[i];
			rest /= ps[i];
		}
		for (int lin = 0; lin < total; lin++) {
			int idx[4], l = lin, mine = 1;
			if (order == MPI_ORDER_C)
				for (int i = nd - 1; i >= 0; i--) {
					idx[i] = l % gs[i];
					l /= gs[i];
				}
			else
				for (int i = 0; i < nd; i++) {
					idx[i] = l % gs[i];
					l /= gs[i];
				}
			for (int i = 0; i < nd && mine; i++)
				mine = owner(idx[i], gs[i], di[i], da[i], ps[i]) == coord[i];
			if (mine)
				want[n++] = lin;
		}
		MPI_Datatype t;
		MPI_OK(MPI_Type_create_darray(size, r, nd, gs, di, da, ps, order, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, want, n, what);
		extent_is(t, 0, (long)total * 4, what);
		MPI_OK(MPI_Type_free(&t));
		seen += n;
	}
	CHECK_INT(seen, total, what);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_darray");
	MPI_Datatype t;
	for (int i = 0; i < GMAX; i++)
		g[i] = i;

	/* subarray 2x3 at (1,2) of 4x5 */
	{
		int sz[2] = { 4, 5 }, sub[2] = { 2, 3 }, st[2] = { 1, 2 };
		int wc[6] = { 7, 8, 9, 12, 13, 14 };	/* rows 1-2, columns 2-4 */
		int wf[6] = { 9, 10, 13, 14, 17, 18 };	/* i0 + 4 * i1 */
		MPI_OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, wc, 6, "subarray C");
		extent_is(t, 0, 80, "subarray C");
		MPI_OK(MPI_Type_free(&t));
		MPI_OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, wf, 6, "subarray Fortran");
		extent_is(t, 0, 80, "subarray Fortran");
		MPI_OK(MPI_Type_free(&t));
	}
	/* 3-d subarray, C order: 2x1x2 at (1,2,0) of 3x4x2 */
	{
		int sz[3] = { 3, 4, 2 }, sub[3] = { 2, 1, 2 }, st[3] = { 1, 2, 0 };
		int w[4] = { 12, 13, 20, 21 };	/* i0*8 + i1*2 + i2 */
		MPI_OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, w, 4, "subarray 3d");
		extent_is(t, 0, 96, "subarray 3d");
		MPI_OK(MPI_Type_free(&t));
	}
	/* darray 1-d CYCLIC(2) of 10 over 3, rank 1: blocks 1 and 4 */
	{
		int gs = 10, di = MPI_DISTRIBUTE_CYCLIC, da = 2, ps = 3, w[4] = { 2, 3, 8, 9 };
		MPI_OK(MPI_Type_create_darray(3, 1, 1, &gs, &di, &da, &ps, MPI_ORDER_C, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, w, 4, "darray cyclic(2)");
		extent_is(t, 0, 40, "darray cyclic(2)");
		MPI_OK(MPI_Type_free(&t));
	}
	/* darray 4x6, BLOCK x CYCLIC over 2x2, rank 3 = (1,1): rows 2-3,
	   odd columns */
	{
		int gs[2] = { 4, 6 }, di[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
		    da[2] = { MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG }, ps[2] = { 2, 2 };
		int w[6] = { 13, 15, 17, 19, 21, 23 };
		int wf[6] = { 6, 7, 14, 15, 22, 23 };	/* Fortran: rows 2-3 (fast), columns 1,3,5 */
		MPI_OK(MPI_Type_create_darray(4, 3, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, w, 6, "darray block x cyclic C");
		MPI_OK(MPI_Type_free(&t));
		MPI_OK(MPI_Type_create_darray(4, 3, 2, gs, di, da, ps, MPI_ORDER_FORTRAN, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		packs(t, wf, 6, "darray block x cyclic Fortran");
		extent_is(t, 0, 96, "darray Fortran");
		MPI_OK(MPI_Type_free(&t));
	}
	/* every rank of some grids, both orders */
	for (int order = 0; order < 2; order++) {
		int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
		int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE, D = MPI_DISTRIBUTE_DFLT_DARG;
		{ int gs[1] = { 17 }, di[1] = { B }, da[1] = { D }, ps[1] = { 4 };
		  darray_all(1, gs, di, da, ps, o, "1d block"); }
		{ int gs[1] = { 17 }, di[1] = { B }, da[1] = { 6 }, ps[1] = { 3 };
		  darray_all(1, gs, di, da, ps, o, "1d block(6)"); }
		{ int gs[2] = { 7, 9 }, di[2] = { C, B }, da[2] = { 2, D }, ps[2] = { 3, 2 };
		  darray_all(2, gs, di, da, ps, o, "2d cyclic(2) x block"); }
		{ int gs[2] = { 5, 6 }, di[2] = { N, C }, da[2] = { D, D }, ps[2] = { 1, 4 };
		  darray_all(2, gs, di, da, ps, o, "2d none x cyclic"); }
		{ int gs[3] = { 4, 5, 6 }, di[3] = { B, C, C }, da[3] = { D, 2, 3 }, ps[3] = { 2, 2, 3 };
		  darray_all(3, gs, di, da, ps, o, "3d block x cyclic(2) x cyclic(3)"); }
		{ int gs[2] = { 3, 8 }, di[2] = { B, B }, da[2] = { D, D }, ps[2] = { 4, 1 };
		  darray_all(2, gs, di, da, ps, o, "2d block, a process with nothing"); }
		{ int gs[2] = { 5, 3 }, di[2] = { C, C }, da[2] = { D, 4 }, ps[2] = { 1, 2 };
		  darray_all(2, gs, di, da, ps, o, "2d cyclic over 1, cyclic(4) of 3 over 2"); }
	}
	/* bad arguments are refused */
	{
		int gs = 10, di = MPI_DISTRIBUTE_BLOCK, da = 2, ps = 3, rc;
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		rc = MPI_Type_create_darray(3, 0, 1, &gs, &di, &da, &ps, MPI_ORDER_C, MPI_INT, &t);
		CHECK(rc != MPI_SUCCESS, "block 2 x 3 processes < 10 elements accepted");
		int sz = 4, sub = 3, st = 2;
		rc = MPI_Type_create_subarray(1, &sz, &sub, &st, MPI_ORDER_C, MPI_INT, &t);
		CHECK(rc != MPI_SUCCESS, "subarray past the end accepted");
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
	/* a subarray exchanged: each rank sends its 3x2 block at (1,1) of a
	   5x4 array to the right, received into the block at (0,2) */
	{
		int sz[2] = { 5, 4 }, sub[2] = { 3, 2 }, s1[2] = { 1, 1 }, s2[2] = { 0, 2 };
		int a[20], b[20];
		MPI_Datatype ts, tr;
		MPI_OK(MPI_Type_create_subarray(2, sz, sub, s1, MPI_ORDER_C, MPI_INT, &ts));
		MPI_OK(MPI_Type_create_subarray(2, sz, sub, s2, MPI_ORDER_C, MPI_INT, &tr));
		MPI_OK(MPI_Type_commit(&ts));
		MPI_OK(MPI_Type_commit(&tr));
		for (int i = 0; i < 20; i++) {
			a[i] = t_rank * 100 + i;
			b[i] = -1;
		}
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		MPI_OK(MPI_Sendrecv(a, 1, ts, right, 1, b, 1, tr, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int r = 0; r < 5; r++)
			for (int c = 0; c < 4; c++) {
				int in = r < 3 && c >= 2;
				int want = in ? left * 100 + (r + 1) * 4 + (c - 2 + 1) : -1;
				CHECK_INT(b[r * 4 + c], want, "subarray exchange");
			}
		t_mix(b, sizeof b);
		MPI_OK(MPI_Type_free(&ts));
		MPI_OK(MPI_Type_free(&tr));
	}
	return t_finish();
}
