/* dt_basic: every predefined C datatype (incl. fixed-width, complex,
 * Aint/Offset/Count, pair types): Type_size and extent, a ring transfer
 * of a small array of each, checked value by value (byte-wise). */
#include "mpitest.h"
#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

struct fi { float v; int i; };
struct di { double v; int i; };
struct li { long v; int i; };
struct ii { int v; int i; };
struct si { short v; int i; };
struct ldi { long double v; int i; };

static const struct { const char *name; MPI_Datatype t; size_t size, extent; } types[] = {
#define T(n, c) { #n, n, sizeof(c), sizeof(c) }
	T(MPI_CHAR, char), T(MPI_SIGNED_CHAR, signed char), T(MPI_UNSIGNED_CHAR, unsigned char),
	T(MPI_BYTE, unsigned char), T(MPI_SHORT, short), T(MPI_UNSIGNED_SHORT, unsigned short),
	T(MPI_INT, int), T(MPI_UNSIGNED, unsigned), T(MPI_LONG, long),
	T(MPI_UNSIGNED_LONG, unsigned long), T(MPI_LONG_LONG_INT, long long),
	T(MPI_LONG_LONG, long long), T(MPI_UNSIGNED_LONG_LONG, unsigned long long),
	T(MPI_FLOAT, float), T(MPI_DOUBLE, double), T(MPI_WCHAR, wchar_t),
	T(MPI_C_BOOL, bool), T(MPI_INT8_T, int8_t), T(MPI_INT16_T, int16_t),
	T(MPI_INT32_T, int32_t), T(MPI_INT64_T, int64_t), T(MPI_UINT8_T, uint8_t),
	T(MPI_UINT16_T, uint16_t), T(MPI_UINT32_T, uint32_t), T(MPI_UINT64_T, uint64_t),
	T(MPI_C_COMPLEX, float _Complex), T(MPI_C_FLOAT_COMPLEX, float _Complex),
	T(MPI_C_DOUBLE_COMPLEX, double _Complex), T(MPI_AINT, MPI_Aint),
	T(MPI_OFFSET, MPI_Offset), T(MPI_COUNT, MPI_Count), T(MPI_PACKED, char),
#undef T
	/* long double: 10 significant bytes on x86-64, but size 16 */
	{ "MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, sizeof(long double), sizeof(long double) },
	{ "MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), sizeof(long double _Complex) },
	{ "MPI_FLOAT_INT", MPI_FLOAT_INT, sizeof(float) + sizeof(int), sizeof(struct fi) },
	{ "MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(double) + sizeof(int), sizeof(struct di) },
	{ "MPI_LONG_INT", MPI_LONG_INT, sizeof(long) + sizeof(int), sizeof(struct li) },
	{ "MPI_2INT", MPI_2INT, 2 * sizeof(int), sizeof(struct ii) },
	{ "MPI_SHORT_INT", MPI_SHORT_INT, sizeof(short) + sizeof(int), sizeof(struct si) },
	{ "MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int), sizeof(struct ldi) },
};

enum { CNT = 5 };

/* Fill element e of a buffer of type t with a value derived from seed,
 * touching only the meaningful bytes; compare the same way. */
static void fill(int k, unsigned char *buf, int seed)
{
	size_t ext = types[k].extent;
	memset(buf, 0, ext * CNT);
	for (int e = 0; e < CNT; e++) {
		unsigned char *p = buf + e * ext;
		int v = seed * 31 + e * 3 + 1;
		MPI_Datatype t = types[k].t;
		if (t == MPI_FLOAT_INT) { struct fi *x = (void *)p; x->v = v + .25f; x->i = -v; }
		else if (t == MPI_DOUBLE_INT) { struct di *x = (void *)p; x->v = v + .5; x->i = -v; }
		else if (t == MPI_LONG_INT) { struct li *x = (void *)p; x->v = v * 100000L; x->i = -v; }
		else if (t == MPI_2INT) { struct ii *x = (void *)p; x->v = v; x->i = -v; }
		else if (t == MPI_SHORT_INT) { struct si *x = (void *)p; x->v = (short)v; x->i = -v; }
		else if (t == MPI_LONG_DOUBLE_INT) { struct ldi *x = (void *)p; x->v = v + .125L; x->i = -v; }
		else if (t == MPI_LONG_DOUBLE) { *(long double *)p = v + .75L; }
		else if (t == MPI_C_LONG_DOUBLE_COMPLEX) { *(long double _Complex *)p = v + 2.0L * I; }
		else if (t == MPI_C_BOOL) { *(bool *)p = v & 1; }
		else if (t == MPI_FLOAT) { *(float *)p = v * 1.5f; }
		else if (t == MPI_DOUBLE) { *(double *)p = v * 1.25; }
		else if (t == MPI_C_COMPLEX || t == MPI_C_FLOAT_COMPLEX) { *(float _Complex *)p = v + 1.0f * I; }
		else if (t == MPI_C_DOUBLE_COMPLEX) { *(double _Complex *)p = v - 1.0 * I; }
		else { for (size_t b = 0; b < types[k].size; b++) p[b] = (unsigned char)(v + b * 17); }
	}
}

static int same(int k, const unsigned char *a, const unsigned char *b)
{
	size_t ext = types[k].extent;
	for (int e = 0; e < CNT; e++) {
		const unsigned char *p = a + e * ext, *q = b + e * ext;
		MPI_Datatype t = types[k].t;
		if (t == MPI_FLOAT_INT) { const struct fi *x = (const void *)p, *y = (const void *)q; if (x->v != y->v || x->i != y->i) return 0; }
		else if (t == MPI_DOUBLE_INT) { const struct di *x = (const void *)p, *y = (const void *)q; if (x->v != y->v || x->i != y->i) return 0; }
		else if (t == MPI_LONG_INT) { const struct li *x = (const void *)p, *y = (const void *)q; if (x->v != y->v || x->i != y->i) return 0; }
		else if (t == MPI_2INT) { const struct ii *x = (const void *)p, *y = (const void *)q; if (x->v != y->v || x->i != y->i) return 0; }
		else if (t == MPI_SHORT_INT) { const struct si *x = (const void *)p, *y = (const void *)q; if (x->v != y->v || x->i != y->i) return 0; }
		else if (t == MPI_LONG_DOUBLE_INT) { const struct ldi *x = (const void *)p, *y = (const void *)q; if (x->v != y->v || x->i != y->i) return 0; }
		else if (t == MPI_LONG_DOUBLE) { if (*(const long double *)p != *(const long double *)q) return 0; }
		else if (t == MPI_C_LONG_DOUBLE_COMPLEX) { if (*(const long double _Complex *)p != *(const long double _Complex *)q) return 0; }
		else if (memcmp(p, q, types[k].size)) return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_basic");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int nt = (int)(sizeof types / sizeof types[0]);
	unsigned char out[CNT * 64], in[CNT * 64], want[CNT * 64];
	for (int k = 0; k < nt; k++) {
		int sz = -1;
		MPI_Aint lb = -1, ext = -1;
		MPI_Count szx = -1;
		MPI_OK(MPI_Type_size(types[k].t, &sz));
		CHECK(sz == (int)types[k].size, "Type_size(%s) = %d, want %zu", types[k].name, sz, types[k].size);
		MPI_OK(MPI_Type_size_x(types[k].t, &szx));
		CHECK(szx == (MPI_Count)types[k].size, "Type_size_x(%s)", types[k].name);
		MPI_OK(MPI_Type_get_extent(types[k].t, &lb, &ext));
		CHECK(lb == 0 && ext == (MPI_Aint)types[k].extent, "extent(%s) = %ld lb %ld, want %zu",
		    types[k].name, (long)ext, (long)lb, types[k].extent);
		fill(k, out, t_rank * 100 + k);
		fill(k, want, left * 100 + k);
		memset(in, 0, sizeof in);
		MPI_Status st;
		MPI_OK(MPI_Sendrecv(out, CNT, types[k].t, right, k, in, CNT, types[k].t, left, k,
		    MPI_COMM_WORLD, &st));
		CHECK(same(k, in, want), "payload of %s", types[k].name);
		int cnt = -1;
		MPI_OK(MPI_Get_count(&st, types[k].t, &cnt));
		CHECK(cnt == CNT, "Get_count(%s) = %d", types[k].name, cnt);
		t_mix_int(sz);
		t_mix_int(cnt);
	}
	return t_finish();
}
