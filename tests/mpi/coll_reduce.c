/* coll_reduce: Reduce (every root) and Allreduce with every predefined
 * op on int, unsigned, long long, double, float, char-sized and bool types;
 * MPI_IN_PLACE; count 0; Reduce_local; MAXLOC/MINLOC with ties. */
#include "mpitest.h"
#include <stdbool.h>

enum { C = 7 };

/* value of element i on rank r */
/* non-negative and small, so every type holds it; PROD uses 1s and 2s so
 * products stay in range for 16 ranks even in a signed char */
static long long val(MPI_Op op, int r, int i)
{
	if (op == MPI_PROD)
		return 1 + ((r + i) % 3 == 0);
	return (long long)((r * 37 + i * 11) % 23) + i;
}

static long long fold(MPI_Op op, int i, int n)
{
	long long acc = val(op, 0, i);
	for (int r = 1; r < n; r++) {
		long long v = val(op, r, i);
		if (op == MPI_SUM) acc += v;
		else if (op == MPI_PROD) acc *= v;
		else if (op == MPI_MAX) acc = v > acc ? v : acc;
		else if (op == MPI_MIN) acc = v < acc ? v : acc;
		else if (op == MPI_LAND) acc = acc && v;
		else if (op == MPI_LOR) acc = acc || v;
		else if (op == MPI_LXOR) acc = !acc != !v;
		else if (op == MPI_BAND) acc &= v;
		else if (op == MPI_BOR) acc |= v;
		else if (op == MPI_BXOR) acc ^= v;
	}
	return acc;
}

static const struct { MPI_Op op; const char *name; int arith, logical, bits; } ops[] = {
	{ MPI_SUM, "SUM", 1, 0, 0 }, { MPI_PROD, "PROD", 1, 0, 0 }, { MPI_MAX, "MAX", 1, 0, 0 },
	{ MPI_MIN, "MIN", 1, 0, 0 }, { MPI_LAND, "LAND", 0, 1, 0 }, { MPI_LOR, "LOR", 0, 1, 0 },
	{ MPI_LXOR, "LXOR", 0, 1, 0 }, { MPI_BAND, "BAND", 0, 0, 1 }, { MPI_BOR, "BOR", 0, 0, 1 },
	{ MPI_BXOR, "BXOR", 0, 0, 1 },
};

#define RUN(T, MT, isfloat) do { \
	T s[C], r[C]; \
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) { \
		if (isfloat && !ops[k].arith) continue; \
		for (int i = 0; i < C; i++) s[i] = (T)val(ops[k].op, t_rank, i); \
		int root = (int)k % t_size; \
		for (int i = 0; i < C; i++) r[i] = (T)-99; \
		MPI_OK(MPI_Reduce(s, r, C, MT, ops[k].op, root, MPI_COMM_WORLD)); \
		if (t_rank == root) for (int i = 0; i < C; i++) \
			CHECK(r[i] == (T)fold(ops[k].op, i, t_size), "Reduce %s %s [%d]", #MT, ops[k].name, i); \
		for (int i = 0; i < C; i++) r[i] = (T)-99; \
		MPI_OK(MPI_Allreduce(s, r, C, MT, ops[k].op, MPI_COMM_WORLD)); \
		for (int i = 0; i < C; i++) \
			CHECK(r[i] == (T)fold(ops[k].op, i, t_size), "Allreduce %s %s [%d]", #MT, ops[k].name, i); \
		for (int i = 0; i < C; i++) t_mix_int((long long)r[i]); /* not raw bytes: long double has padding */ \
		memcpy(r, s, sizeof r); \
		MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, C, MT, ops[k].op, MPI_COMM_WORLD)); \
		for (int i = 0; i < C; i++) \
			CHECK(r[i] == (T)fold(ops[k].op, i, t_size), "Allreduce IN_PLACE %s %s [%d]", #MT, ops[k].name, i); \
		memcpy(r, s, sizeof r); \
		if (t_rank == root) MPI_OK(MPI_Reduce(MPI_IN_PLACE, r, C, MT, ops[k].op, root, MPI_COMM_WORLD)); \
		else MPI_OK(MPI_Reduce(r, NULL, C, MT, ops[k].op, root, MPI_COMM_WORLD)); \
		if (t_rank == root) for (int i = 0; i < C; i++) \
			CHECK(r[i] == (T)fold(ops[k].op, i, t_size), "Reduce IN_PLACE %s %s [%d]", #MT, ops[k].name, i); \
	} \
} while (0)

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_reduce");
	RUN(int, MPI_INT, 0);
	RUN(unsigned, MPI_UNSIGNED, 0);
	RUN(long, MPI_LONG, 0);
	RUN(long long, MPI_LONG_LONG, 0);
	RUN(short, MPI_SHORT, 0);
	RUN(int64_t, MPI_INT64_T, 0);
	RUN(uint8_t, MPI_UINT8_T, 0);
	RUN(uint16_t, MPI_UINT16_T, 0);
	RUN(double, MPI_DOUBLE, 1);
	RUN(float, MPI_FLOAT, 1);
	RUN(long double, MPI_LONG_DOUBLE, 1);

	/* bool: logical ops */
	{
		bool s = t_rank % 2, r = 0;
		MPI_OK(MPI_Allreduce(&s, &r, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD));
		CHECK_INT(r, t_size > 1, "C_BOOL LOR");
		MPI_OK(MPI_Allreduce(&s, &r, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD));
		CHECK_INT(r, 0, "C_BOOL LAND");
	}
	/* BYTE: bitwise ops */
	{
		unsigned char s = (unsigned char)(1u << (t_rank % 8)), r = 0;
		MPI_OK(MPI_Allreduce(&s, &r, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD));
		CHECK_INT(r, t_size >= 8 ? 0xff : (1u << t_size) - 1, "BYTE BOR");
	}
	/* complex sum */
	{
		double s[2] = { t_rank, -t_rank }, r[2];
		MPI_OK(MPI_Allreduce(s, r, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
		CHECK(r[0] == t_size * (t_size - 1) / 2.0 && r[1] == -r[0], "complex SUM");
	}
	/* count 0 */
	int z = 5;
	MPI_OK(MPI_Allreduce(&z, &z + 0, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	MPI_OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));

	/* Reduce_local */
	{
		int in[3] = { 1, 5, -2 }, io[3] = { 4, 2, -3 };
		MPI_OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_MAX));
		CHECK(io[0] == 4 && io[1] == 5 && io[2] == -2, "Reduce_local MAX");
		MPI_OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_SUM));
		CHECK(io[0] == 5 && io[1] == 10 && io[2] == -4, "Reduce_local SUM");
	}

	/* MAXLOC / MINLOC with ties: the smallest index among equal values */
	{
		struct { int v, i; } s[3], r[3];
		s[0].v = t_rank % 3;		/* ties among ranks with the same r%3 */
		s[1].v = 42;			/* all tie */
		s[2].v = -t_rank;
		for (int k = 0; k < 3; k++)
			s[k].i = t_rank;
		MPI_OK(MPI_Allreduce(s, r, 3, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
		int mx = t_size >= 3 ? 2 : t_size - 1;
		CHECK(r[0].v == mx && r[0].i == mx, "MAXLOC ties: got (%d,%d)", r[0].v, r[0].i);
		CHECK(r[1].v == 42 && r[1].i == 0, "MAXLOC all equal: got (%d,%d)", r[1].v, r[1].i);
		CHECK(r[2].v == 0 && r[2].i == 0, "MAXLOC [2]");
		MPI_OK(MPI_Allreduce(s, r, 3, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
		CHECK(r[0].v == 0 && r[0].i == 0, "MINLOC ties");
		CHECK(r[1].v == 42 && r[1].i == 0, "MINLOC all equal");
		CHECK(r[2].v == -(t_size - 1) && r[2].i == t_size - 1, "MINLOC [2]");
		t_mix(r, sizeof r);

		struct { double v; int i; } ds = { (double)(t_rank / 2), t_rank }, dr;
		MPI_OK(MPI_Reduce(&ds, &dr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD));
		if (t_rank == 0)
			CHECK(dr.v == (t_size - 1) / 2 && dr.i == ((t_size - 1) / 2) * 2, "DOUBLE_INT MAXLOC ties: (%g,%d)", dr.v, dr.i);
		struct { float v; int i; } fs = { 1.5f, t_size - 1 - t_rank }, fr;
		MPI_OK(MPI_Allreduce(&fs, &fr, 1, MPI_FLOAT_INT, MPI_MINLOC, MPI_COMM_WORLD));
		CHECK(fr.v == 1.5f && fr.i == 0, "FLOAT_INT MINLOC all tie");
		struct { long v; int i; } ls = { 10L * t_rank, t_rank }, lr;
		MPI_OK(MPI_Allreduce(&ls, &lr, 1, MPI_LONG_INT, MPI_MAXLOC, MPI_COMM_WORLD));
		CHECK(lr.v == 10L * (t_size - 1) && lr.i == t_size - 1, "LONG_INT MAXLOC");
		struct { short v; int i; } ss = { (short)(t_rank % 2), t_rank }, sr;
		MPI_OK(MPI_Allreduce(&ss, &sr, 1, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD));
		CHECK(sr.v == 0 && sr.i == 0, "SHORT_INT MINLOC");
		struct { long double v; int i; } lds = { 3.0L, t_rank }, ldr;
		MPI_OK(MPI_Allreduce(&lds, &ldr, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
		CHECK(ldr.v == 3.0L && ldr.i == 0, "LONG_DOUBLE_INT MAXLOC");
		/* IN_PLACE MAXLOC */
		struct { int v, i; } ip = { t_rank == t_size / 2 ? 1000 : t_rank, t_rank };
		MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &ip, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
		CHECK(ip.v == 1000 && ip.i == t_size / 2, "IN_PLACE MAXLOC");
	}
	/* REPLACE / NO_OP are for one-sided: not tested with collectives */
	return t_finish();
}
