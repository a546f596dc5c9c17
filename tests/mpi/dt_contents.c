/* dt_contents: MPI_Type_get_envelope and MPI_Type_get_contents give back
 * the combiner and arguments of every constructor (named, dup,
 * contiguous, vector, hvector, indexed, hindexed, indexed_block,
 * hindexed_block, struct, subarray, darray, resized); the returned
 * derived types are usable and freed by the caller, also after the
 * original was freed; MPI_Type_set_name/get_name. */
#include "mpitest.h"

#define MAXN 64

struct want {
	int combiner, ni, na, nt;
	int ints[MAXN];
	MPI_Aint addrs[MAXN];
	MPI_Datatype types[4];
};

static void contents_are(MPI_Datatype t, const struct want *w, const char *what)
{
	int ni, na, nt, comb, ints[MAXN];
	MPI_Aint addrs[MAXN];
	MPI_Datatype types[4];
	MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
	CHECK_INT(comb, w->combiner, what);
	CHECK_INT(ni, w->ni, what);
	CHECK_INT(na, w->na, what);
	CHECK_INT(nt, w->nt, what);
	/* the exact sizes: Open MPI 4.1.4 (the reference run) writes
	   max_datatypes types */
	MPI_OK(MPI_Type_get_contents(t, ni, na, nt, ints, addrs, types));
	for (int i = 0; i < ni; i++)
		CHECK(ints[i] == w->ints[i], "%s: integer %d is %d, want %d", what, i, ints[i], w->ints[i]);
	for (int i = 0; i < na; i++)
		CHECK(addrs[i] == w->addrs[i], "%s: address %d is %ld, want %ld", what, i, (long)addrs[i], (long)w->addrs[i]);
	for (int i = 0; i < nt; i++) {
		int c2, a, b, d;
		/* a named type comes back as itself; a derived one as a new
		   handle of the same type: compare their layouts */
		MPI_OK(MPI_Type_get_envelope(types[i], &a, &b, &d, &c2));
		if (c2 == MPI_COMBINER_NAMED) {
			CHECK(types[i] == w->types[i], "%s: datatype %d differs", what, i);
		} else {
			MPI_Aint l1, e1, l2, e2;
			int s1, s2;
			MPI_OK(MPI_Type_get_extent(types[i], &l1, &e1));
			MPI_OK(MPI_Type_get_extent(w->types[i], &l2, &e2));
			MPI_OK(MPI_Type_size(types[i], &s1));
			MPI_OK(MPI_Type_size(w->types[i], &s2));
			CHECK(l1 == l2 && e1 == e2 && s1 == s2, "%s: datatype %d has another layout", what, i);
			MPI_OK(MPI_Type_free(&types[i]));
		}
	}
	/* (combiner and order/distribution values differ between MPI
	   libraries: only the portable counts go into the checksum) */
	t_mix_int(ni);
	t_mix_int(na);
	t_mix_int(nt);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_contents");
	struct want w;
	MPI_Datatype t, v, s;
	int ni, na, nt, comb;

	/* named */
	MPI_OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nt, &comb));
	CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0, "MPI_DOUBLE is named");

	memset(&w, 0, sizeof w);
	MPI_OK(MPI_Type_contiguous(5, MPI_INT, &t));
	w = (struct want){ MPI_COMBINER_CONTIGUOUS, 1, 0, 1, { 5 }, { 0 }, { MPI_INT } };
	contents_are(t, &w, "contiguous");
	MPI_OK(MPI_Type_free(&t));

	MPI_OK(MPI_Type_vector(3, 2, 7, MPI_SHORT, &v));
	w = (struct want){ MPI_COMBINER_VECTOR, 3, 0, 1, { 3, 2, 7 }, { 0 }, { MPI_SHORT } };
	contents_are(v, &w, "vector");

	MPI_OK(MPI_Type_create_hvector(4, 1, 24, v, &t));
	w = (struct want){ MPI_COMBINER_HVECTOR, 2, 1, 1, { 4, 1 }, { 24 }, { v } };
	contents_are(t, &w, "hvector");
	MPI_OK(MPI_Type_free(&t));

	{
		int bl[3] = { 0, 2, 3 }, d[3] = { 1, 5, 9 };
		MPI_OK(MPI_Type_indexed(3, bl, d, MPI_INT, &t));
		w = (struct want){ MPI_COMBINER_INDEXED, 7, 0, 1, { 3, 0, 2, 3, 1, 5, 9 }, { 0 }, { MPI_INT } };
		contents_are(t, &w, "indexed");
		MPI_OK(MPI_Type_free(&t));
		MPI_OK(MPI_Type_create_indexed_block(3, 4, d, MPI_FLOAT, &t));
		w = (struct want){ MPI_COMBINER_INDEXED_BLOCK, 5, 0, 1, { 3, 4, 1, 5, 9 }, { 0 }, { MPI_FLOAT } };
		contents_are(t, &w, "indexed_block");
		MPI_OK(MPI_Type_free(&t));
	}
	{
		int bl[2] = { 2, 1 };
		MPI_Aint d[2] = { 16, -8 };
		MPI_OK(MPI_Type_create_hindexed(2, bl, d, v, &t));
		w = (struct want){ MPI_COMBINER_HINDEXED, 3, 2, 1, { 2, 2, 1 }, { 16, -8 }, { v } };
		contents_are(t, &w, "hindexed");
		MPI_OK(MPI_Type_free(&t));
		MPI_OK(MPI_Type_create_hindexed_block(2, 3, d, MPI_CHAR, &t));
		w = (struct want){ MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1, { 2, 3 }, { 16, -8 }, { MPI_CHAR } };
		contents_are(t, &w, "hindexed_block");
		MPI_OK(MPI_Type_free(&t));
	}
	{
		int bl[3] = { 1, 2, 1 };
		MPI_Aint d[3] = { 0, 8, 40 };
		MPI_Datatype ty[3] = { MPI_INT, v, MPI_DOUBLE };
		MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &s));
		w = (struct want){ MPI_COMBINER_STRUCT, 4, 3, 3, { 3, 1, 2, 1 }, { 0, 8, 40 }, { MPI_INT, v, MPI_DOUBLE } };
		contents_are(s, &w, "struct");
	}
	MPI_OK(MPI_Type_create_resized(s, -4, 100, &t));
	w = (struct want){ MPI_COMBINER_RESIZED, 0, 2, 1, { 0 }, { -4, 100 }, { s } };
	contents_are(t, &w, "resized");
	MPI_OK(MPI_Type_free(&t));
	MPI_OK(MPI_Type_dup(s, &t));
	w = (struct want){ MPI_COMBINER_DUP, 0, 0, 1, { 0 }, { 0 }, { s } };
	contents_are(t, &w, "dup");
	MPI_OK(MPI_Type_free(&t));
	{
		int sz[3] = { 4, 5, 6 }, sub[3] = { 2, 3, 1 }, st[3] = { 1, 0, 5 };
		MPI_OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t));
		w = (struct want){ MPI_COMBINER_SUBARRAY, 11, 0, 1, { 3, 4, 5, 6, 2, 3, 1, 1, 0, 5, MPI_ORDER_FORTRAN }, { 0 }, { MPI_DOUBLE } };
		contents_are(t, &w, "subarray");
		MPI_OK(MPI_Type_free(&t));
	}
	{
		int gs[2] = { 10, 7 }, di[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
		    da[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, ps[2] = { 2, 3 };
		MPI_OK(MPI_Type_create_darray(6, 4, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t));
		w = (struct want){ MPI_COMBINER_DARRAY, 12, 0, 1,
		    { 6, 4, 2, 10, 7, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 3, MPI_ORDER_C },
		    { 0 }, { MPI_INT } };
		contents_are(t, &w, "darray");
		MPI_OK(MPI_Type_free(&t));
	}

	/* the returned types outlive the original's handle */
	{
		MPI_Datatype got[3], x;
		int ints[8];
		MPI_Aint addrs[8];
		MPI_OK(MPI_Type_free(&v));
		MPI_OK(MPI_Type_get_contents(s, 4, 3, 3, ints, addrs, got));
		MPI_OK(MPI_Type_free(&s));
		/* got[1] is the vector (3 blocks of 2 shorts, stride 7) */
		MPI_OK(MPI_Type_commit(&got[1]));
		MPI_OK(MPI_Type_contiguous(1, got[1], &x));
		MPI_OK(MPI_Type_commit(&x));
		short a[21], b[21];
		for (int i = 0; i < 21; i++) {
			a[i] = (short)(t_rank * 100 + i);
			b[i] = -1;
		}
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		MPI_OK(MPI_Sendrecv(a, 1, x, right, 0, b, 1, got[1], left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < 21; i++) {
			int in = i % 7 < 2 && i < 16;
			CHECK_INT(b[i], in ? left * 100 + i : -1, "vector from get_contents");
		}
		t_mix(b, sizeof b);
		MPI_OK(MPI_Type_free(&got[1]));
		MPI_OK(MPI_Type_free(&x));
	}

	/* names */
	{
		char name[MPI_MAX_OBJECT_NAME];
		int len;
		MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
		MPI_OK(MPI_Type_set_name(t, "pair of ints"));
		MPI_OK(MPI_Type_get_name(t, name, &len));
		CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "type name: '%s' %d", name, len);
		MPI_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
		CHECK(strcmp(name, "MPI_DOUBLE") == 0, "MPI_DOUBLE's name: '%s'", name);
		MPI_OK(MPI_Type_free(&t));
	}
	return t_finish();
}
