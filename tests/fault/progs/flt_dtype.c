/* flt_dtype: derived-type exchanges for the kill tests. Each round every
 * rank sends to its right neighbour: its block-cyclic share of a 2-d
 * array (darray, received with the same layout), a subarray, a struct
 * whose hindexed member starts with a zero-length block, an int + 2
 * doubles received as a partial { int, double[3] } (MPI_Get_elements must
 * say 3), and a struct in external32 bytes; every received value is
 * checked and folded into a hash that rank 0 prints every ROUNDS/10
 * rounds (an Allreduce of the ranks' hashes).
 *   flt_dtype [ROUNDS=300] */
#include "flt.h"

#define R 8
#define C 12

static int gval(int round, int rank, int i)
{
	return round * 100000 + rank * 1000 + i;
}

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 300);
	long every = rounds / 10 > 0 ? rounds / 10 : 1;
	int next = (me + 1) % np, prev = (me + np - 1) % np;
	uint64_t h = 777;

	/* darray: rows BLOCK over p0, columns CYCLIC(2) over p1, p0 * p1 = np */
	int p0 = np % 2 == 0 ? 2 : 1, p1 = np / p0;
	int gs[2] = { R, C }, di[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
	    da[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, ps[2] = { p0, p1 };
	MPI_Datatype mine, theirs, sub, s, h3, rt, st;
	FLT_MPI(MPI_Type_create_darray(np, me, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &mine));
	FLT_MPI(MPI_Type_create_darray(np, prev, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &theirs));
	int sz[2] = { R, C }, subs[2] = { 3, 4 }, starts[2] = { 2, 5 };
	FLT_MPI(MPI_Type_create_subarray(2, sz, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &sub));
	{
		int bl[3] = { 0, 2, 1 };
		MPI_Aint d[3] = { 0, 8, 24 };
		FLT_MPI(MPI_Type_create_hindexed(3, bl, d, MPI_INT, &h3));
		int sbl[2] = { 1, 1 };
		MPI_Aint sd[2] = { 0, 40 };
		MPI_Datatype ty[2] = { h3, MPI_INT };
		FLT_MPI(MPI_Type_create_struct(2, sbl, sd, ty, &s));
	}
	struct rs { int i; double d[3]; };
	struct ss { int i; double d[2]; };
	{
		int bl[2] = { 1, 3 }, bl2[2] = { 1, 2 };
		MPI_Aint d[2] = { offsetof(struct rs, i), offsetof(struct rs, d) };
		MPI_Aint d2[2] = { offsetof(struct ss, i), offsetof(struct ss, d) };
		MPI_Datatype ty[2] = { MPI_INT, MPI_DOUBLE };
		FLT_MPI(MPI_Type_create_struct(2, bl, d, ty, &rt));
		FLT_MPI(MPI_Type_create_struct(2, bl2, d2, ty, &st));
	}
	MPI_Datatype all[6] = { mine, theirs, sub, s, rt, st };
	for (int k = 0; k < 6; k++)
		FLT_MPI(MPI_Type_commit(&all[k]));
	mine = all[0]; theirs = all[1]; sub = all[2]; s = all[3]; rt = all[4]; st = all[5];

	static int a[R * C], b[R * C];
	for (long r = 1; r <= rounds; r++) {
		int tag = (int)(r % 1000);
		MPI_Status stat;
		for (int i = 0; i < R * C; i++) {
			a[i] = gval((int)r, me, i);
			b[i] = -1;
		}
		/* darray share: b gets prev's share in prev's layout */
		FLT_MPI(MPI_Sendrecv(a, 1, mine, next, tag, b, 1, theirs, prev, tag, MPI_COMM_WORLD, &stat));
		{
			int pc0 = prev / p1, pc1 = prev % p1, blk = (R + p0 - 1) / p0;
			for (int i = 0; i < R; i++)
				for (int j = 0; j < C; j++) {
					int own = i / blk == pc0 && (j / 2) % p1 == pc1;
					FLT_ASSERT(b[i * C + j] == (own ? gval((int)r, prev, i * C + j) : -1),
					    "round %ld darray [%d][%d] = %d", r, i, j, b[i * C + j]);
				}
		}
		for (int i = 0; i < R * C; i++)
			h = flt_mix(h, (uint64_t)(uint32_t)b[i]);
		/* subarray, Fortran order: rows 2-4 (fast), columns 5-8 */
		for (int i = 0; i < R * C; i++)
			b[i] = -1;
		FLT_MPI(MPI_Sendrecv(a, 1, sub, next, tag, b, 1, sub, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int j = 5; j < 9; j++)
			for (int i = 2; i < 5; i++)
				FLT_ASSERT(b[i + R * j] == gval((int)r, prev, i + R * j), "round %ld subarray", r);
		h = flt_mix(h, (uint64_t)(uint32_t)b[2 + R * 5]);
		/* struct { hindexed (0 at 0, 2 at 8, 1 at 24), int at 40 } x 2 */
		for (int i = 0; i < R * C; i++)
			b[i] = -1;
		FLT_MPI(MPI_Sendrecv(a, 2, s, next, tag, b, 2, s, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		{
			/* extent 8 .. 44 = 36: ints 2,3,6,10 then 11,12,15,19 */
			int want[8] = { 2, 3, 6, 10, 11, 12, 15, 19 };
			for (int k = 0; k < 8; k++)
				FLT_ASSERT(b[want[k]] == gval((int)r, prev, want[k]), "round %ld struct int %d", r, want[k]);
			h = flt_mix(h, (uint64_t)(uint32_t)b[19]);
		}
		/* partial element: int + 2 doubles into { int, double[3] } */
		{
			struct ss sv = { me + (int)r, { r + 0.5, r + 0.25 } };
			struct rs rv[1] = { { 0, { 0, 0, 0 } } };
			int el;
			FLT_MPI(MPI_Sendrecv(&sv, 1, st, next, tag, rv, 1, rt, prev, tag, MPI_COMM_WORLD, &stat));
			FLT_MPI(MPI_Get_elements(&stat, rt, &el));
			FLT_ASSERT(el == 3, "round %ld Get_elements %d, want 3", r, el);
			FLT_ASSERT(rv[0].i == prev + (int)r && rv[0].d[1] == r + 0.25, "round %ld partial data", r);
			h = flt_mix(h, (uint64_t)rv[0].i);
		}
		/* external32 bytes */
		{
			struct ss sv = { me * 7 + (int)r, { -r * 1.5, r * 2.0 } }, rv;
			unsigned char out[64], in[64];
			MPI_Aint pos = 0;
			FLT_MPI(MPI_Pack_external("external32", &sv, 1, st, out, sizeof out, &pos));
			FLT_MPI(MPI_Sendrecv(out, (int)pos, MPI_BYTE, next, tag, in, sizeof in, MPI_BYTE, prev, tag,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			pos = 0;
			FLT_MPI(MPI_Unpack_external("external32", in, 20, &pos, &rv, 1, st));
			FLT_ASSERT(rv.i == prev * 7 + (int)r && rv.d[0] == -r * 1.5, "round %ld external32", r);
			for (int i = 0; i < 20; i++)
				h = flt_mix(h, in[i]);
		}
		if (r % every == 0) {
			uint64_t x;
			FLT_MPI(MPI_Allreduce(&h, &x, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD));
			if (me == 0)
				FLT_SAY("dtype: round %ld hash %016llx\n", r, (unsigned long long)x);
		}
	}
	for (int k = 0; k < 6; k++)
		FLT_MPI(MPI_Type_free(&all[k]));
	FLT_MPI(MPI_Finalize());
	return 0;
}
