/* coll_algos: the size- and rank-count-dependent collective algorithms
 * (docs/COLLECTIVES.md), each against a reference computed locally.
 * Sizes straddle every threshold of both protocols (small trees,
 * Rabenseifner, scatter + allgather, reduce-scatter + gather, Bruck,
 * linear alltoall, the reduce-scatter ring), and counts below the rank
 * count. Allreduce, Reduce (every root) and
 * Bcast of integer-valued doubles (exact in any order), MPI_IN_PLACE;
 * every predefined op on int at sizes of each path, MAXLOC/MINLOC with
 * ties; a non-contiguous derived type (with commutative user ops); Bcast with different type
 * signatures at root and elsewhere; a non-commutative user op (order
 * kept at every size) and a commutative one; Reduce_scatter(_block);
 * Allgather; Alltoall and an Alltoallv whose ranks pick different
 * algorithms; non-integer doubles whose Allreduce must give the same
 * bits on every rank. MPIV_COLL may force algorithms: the results must
 * not change (tests/integration/test_coll_force.sh). */
#include "mpitest.h"
#include <math.h>

/* Element counts of doubles: bytes around 4, 16, 32, 64, 128, 256 KiB
   and 1 MiB, and counts below the rank count. */
#define DMAX 131073
static const int dsizes[] = { 1, 2, 3, 5, 7, 511, 512, 513, 2047, 2048,
	2049, 4095, 4096, 4097, 8191, 8192, 8193, 16383, 16384, 16385,
	32767, 32768, 32769, 131071, DMAX };
#define NDS ((int)(sizeof dsizes / sizeof dsizes[0]))

static double dval(int r, int i) { return (double)(r + (i * 7) % 1000); }

static void check_doubles(void)
{
	double *s = malloc(DMAX * sizeof(double)), *r = malloc(DMAX * sizeof(double));
	CHECK(s && r, "malloc");
	for (int k = 0; k < NDS; k++) {
		int n = dsizes[k], root = k % t_size;
		for (int i = 0; i < n; i++)
			s[i] = dval(t_rank, i);
		/* Allreduce SUM */
		for (int i = 0; i < n; i++)
			r[i] = -1;
		MPI_OK(MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			double w = 0;
			for (int q = 0; q < t_size; q++)
				w += dval(q, i);
			CHECK(r[i] == w, "Allreduce SUM n=%d [%d]: got %g want %g", n, i, r[i], w);
		}
		t_mix(r, (size_t)n * sizeof(double));
		/* Allreduce MAX in place */
		memcpy(r, s, (size_t)n * sizeof(double));
		MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(r[i] == dval(t_size - 1, i), "Allreduce IN_PLACE MAX n=%d [%d]", n, i);
		/* Reduce SUM at root, the root in place on odd k */
		for (int i = 0; i < n; i++)
			r[i] = t_rank == root && k % 2 ? s[i] : -1;
		if (t_rank == root && k % 2)
			MPI_OK(MPI_Reduce(MPI_IN_PLACE, r, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
		else
			MPI_OK(MPI_Reduce(s, r, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
		if (t_rank == root) {
			for (int i = 0; i < n; i++) {
				double w = 0;
				for (int q = 0; q < t_size; q++)
					w += dval(q, i);
				CHECK(r[i] == w, "Reduce SUM n=%d root=%d [%d]: got %g want %g", n, root, i, r[i], w);
			}
			t_mix(r, (size_t)n * sizeof(double));
		}
		/* Bcast from root */
		for (int i = 0; i < n; i++)
			r[i] = t_rank == root ? dval(root, i) + 0.5 : -1;
		MPI_OK(MPI_Bcast(r, n, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(r[i] == dval(root, i) + 0.5, "Bcast n=%d root=%d [%d]: got %g", n, root, i, r[i]);
	}
	free(s);
	free(r);
	/* Reduce around 4 MiB (reduce-scatter + gather from there) */
	for (int k = 0; k < 2; k++) {
		int n = 524288 + (k ? 3 : -1), root = t_size / 2;
		s = malloc((size_t)n * sizeof(double));
		r = malloc((size_t)n * sizeof(double));
		CHECK(s && r, "malloc");
		for (int i = 0; i < n; i++)
			s[i] = dval(t_rank, i);
		MPI_OK(MPI_Reduce(s, r, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
		if (t_rank == root)
			for (int i = 0; i < n; i++)
				CHECK(r[i] == t_size * (t_size - 1) / 2.0 + t_size * dval(0, i), "Reduce SUM n=%d [%d]", n, i);
		free(s);
		free(r);
	}
}

/* ---- every predefined op on int ---- */

static int ival(MPI_Op op, int r, int i)
{
	if (op == MPI_PROD)
		return 1 + ((r + i) % 5 == 0);
	if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
		return (r * 3 + i) % 4 == 0;
	return (r * 37 + i * 11) % 23 + i % 100;
}

static int ifold(MPI_Op op, int i)
{
	int acc = ival(op, 0, i);
	for (int r = 1; r < t_size; r++) {
		int v = ival(op, r, i);
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

static void check_ops(void)
{
	static const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND,
		MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
	/* ints: 52 B, 80 KB (Rabenseifner, reduce-scatter + gather),
	   280 KB (ring when p is not a power of two) */
	static const int counts[] = { 13, 20000, 70000 };
	int *s = malloc(70000 * sizeof(int)), *r = malloc(70000 * sizeof(int));
	CHECK(s && r, "malloc");
	for (int c = 0; c < 3; c++)
		for (int k = 0; k < 10; k++) {
			int n = counts[c], root = (k + c) % t_size;
			MPI_Op op = ops[k];
			for (int i = 0; i < n; i++)
				s[i] = ival(op, t_rank, i);
			MPI_OK(MPI_Allreduce(s, r, n, MPI_INT, op, MPI_COMM_WORLD));
			for (int i = 0; i < n; i++)
				CHECK(r[i] == ifold(op, i), "Allreduce op %d n=%d [%d]: got %d want %d", k, n, i, r[i], ifold(op, i));
			t_mix(r, (size_t)n * sizeof(int));
			memset(r, 0, (size_t)n * sizeof(int));
			MPI_OK(MPI_Reduce(s, r, n, MPI_INT, op, root, MPI_COMM_WORLD));
			if (t_rank == root)
				for (int i = 0; i < n; i++)
					CHECK(r[i] == ifold(op, i), "Reduce op %d n=%d root %d [%d]", k, n, root, i);
		}
	/* MAXLOC / MINLOC with ties: the lowest index wins */
	struct { int v, i; } *ls = malloc(20000 * sizeof(*ls)), *lr = malloc(20000 * sizeof(*lr));
	CHECK(ls && lr, "malloc");
	for (int c = 0; c < 2; c++) {
		int n = c ? 20000 : 7;
		for (int i = 0; i < n; i++) {
			ls[i].v = (t_rank + i) % 3;	/* ties between ranks */
			ls[i].i = t_rank;
		}
		MPI_OK(MPI_Allreduce(ls, lr, n, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			int wv = -1, wi = -1;
			for (int q = 0; q < t_size; q++)
				if ((q + i) % 3 > wv)
					wv = (q + i) % 3, wi = q;
			CHECK(lr[i].v == wv && lr[i].i == wi, "MAXLOC n=%d [%d]: (%d,%d) want (%d,%d)", n, i, lr[i].v, lr[i].i, wv, wi);
		}
		t_mix(lr, (size_t)n * sizeof(*lr));
		MPI_OK(MPI_Reduce(ls, lr, n, MPI_2INT, MPI_MINLOC, t_size - 1, MPI_COMM_WORLD));
		if (t_rank == t_size - 1)
			for (int i = 0; i < n; i++) {
				int wv = 99, wi = -1;
				for (int q = 0; q < t_size; q++)
					if ((q + i) % 3 < wv)
						wv = (q + i) % 3, wi = q;
				CHECK(lr[i].v == wv && lr[i].i == wi, "MINLOC n=%d [%d]", n, i);
			}
	}
	free(ls);
	free(lr);
	free(s);
	free(r);
}

/* ---- a non-contiguous derived type: 2 ints in a 3-int extent ---- */

/* Sum and max on the vector type (user ops: predefined ones are only
   defined on predefined types by the standard). */
static void vsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *x = in, *y = inout;
	(void)dt;
	for (int k = 0; k < *len; k++) {
		y[3 * k] += x[3 * k];
		y[3 * k + 2] += x[3 * k + 2];
	}
}

static void vmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *x = in, *y = inout;
	(void)dt;
	for (int k = 0; k < *len; k++) {
		if (x[3 * k] > y[3 * k]) y[3 * k] = x[3 * k];
		if (x[3 * k + 2] > y[3 * k + 2]) y[3 * k + 2] = x[3 * k + 2];
	}
}

static void check_derived(void)
{
	MPI_Datatype vt, four;
	MPI_Op sumop, maxop;
	MPI_OK(MPI_Op_create(vsum, 1, &sumop));
	MPI_OK(MPI_Op_create(vmax, 1, &maxop));
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vt));
	MPI_OK(MPI_Type_commit(&vt));
	MPI_OK(MPI_Type_contiguous(4, MPI_DOUBLE, &four));
	MPI_OK(MPI_Type_commit(&four));
	static const int counts[] = { 5, 40000 };	/* 40 B, 320 KB of data */
	int *s = malloc(3 * 40000 * sizeof(int)), *r = malloc(3 * 40000 * sizeof(int));
	CHECK(s && r, "malloc");
	for (int c = 0; c < 2; c++) {
		int n = counts[c], root = (c + 1) % t_size;
		for (int i = 0; i < 3 * n; i++) {
			s[i] = t_rank + i % 777;
			r[i] = -7;	/* the gaps must stay -7 */
		}
		MPI_OK(MPI_Allreduce(s, r, n, vt, sumop, MPI_COMM_WORLD));
		for (int i = 0; i < 3 * n; i++) {
			int w = i % 3 == 1 ? -7 : t_size * (t_size - 1) / 2 + t_size * (i % 777);
			CHECK(r[i] == w, "Allreduce vector n=%d [%d]: got %d want %d", n, i, r[i], w);
		}
		t_mix(r, (size_t)3 * n * sizeof(int));
		for (int i = 0; i < 3 * n; i++)
			r[i] = -7;
		MPI_OK(MPI_Reduce(s, r, n, vt, maxop, root, MPI_COMM_WORLD));
		if (t_rank == root)
			for (int i = 0; i < 3 * n; i++) {
				int w = i % 3 == 1 ? -7 : t_size - 1 + i % 777;
				CHECK(r[i] == w, "Reduce vector n=%d [%d]: got %d want %d", n, i, r[i], w);
			}
		for (int i = 0; i < 3 * n; i++)
			r[i] = t_rank == root ? (i % 3 == 1 ? -5 : i) : -7;
		MPI_OK(MPI_Bcast(r, n, vt, root, MPI_COMM_WORLD));
		for (int i = 0; i < 3 * n; i++) {
			int w = i % 3 == 1 ? (t_rank == root ? -5 : -7) : i;
			CHECK(r[i] == w, "Bcast vector n=%d [%d]: got %d want %d", n, i, r[i], w);
		}
	}
	/* Bcast: the root sends n/4 of a 4-double type, the others receive
	   n doubles (same signature, different counts) */
	static const int dn[] = { 8, 40000 };
	double *d = malloc(40000 * sizeof(double));
	CHECK(d, "malloc");
	for (int c = 0; c < 2; c++) {
		int n = dn[c], root = t_size - 1;
		for (int i = 0; i < n; i++)
			d[i] = t_rank == root ? i * 3.0 : -1;
		if (t_rank == root)
			MPI_OK(MPI_Bcast(d, n / 4, four, root, MPI_COMM_WORLD));
		else
			MPI_OK(MPI_Bcast(d, n, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(d[i] == i * 3.0, "Bcast mixed types n=%d [%d]", n, i);
	}
	free(d);
	MPI_OK(MPI_Op_free(&sumop));
	MPI_OK(MPI_Op_free(&maxop));
	MPI_OK(MPI_Type_free(&vt));
	MPI_OK(MPI_Type_free(&four));
	free(s);
	free(r);
}

/* ---- user ops: non-commutative (order must hold at every size) and
   commutative ---- */

typedef struct { unsigned a, b, c, d; } mat;

static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	mat *x = in, *y = inout;
	(void)dt;
	for (int k = 0; k < *len; k++) {	/* inout = in * inout, mod 2^32 */
		mat r = { x[k].a * y[k].a + x[k].b * y[k].c, x[k].a * y[k].b + x[k].b * y[k].d,
			x[k].c * y[k].a + x[k].d * y[k].c, x[k].c * y[k].b + x[k].d * y[k].d };
		y[k] = r;
	}
}

static mat rmat(int r, int k)
{
	mat m = { 1u + (unsigned)r, 2u * (unsigned)r + (unsigned)k % 5, (unsigned)(r % 3), 1u + (unsigned)k % 7 };
	return m;
}

static mat mprod(int k)	/* M_0 * M_1 * ... * M_{p-1} */
{
	mat acc = rmat(t_size - 1, k);
	int one = 1;
	for (int r = t_size - 2; r >= 0; r--) {
		mat m = rmat(r, k);
		matmul(&m, &acc, &one, NULL);
	}
	return acc;
}

static void isum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *x = in, *y = inout;
	(void)dt;
	for (int k = 0; k < *len; k++)
		y[k] += x[k];
}

static void check_userops(void)
{
	MPI_Op mop, sop;
	MPI_Datatype mt;
	MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
	MPI_OK(MPI_Type_commit(&mt));
	MPI_OK(MPI_Op_create(matmul, 0, &mop));
	MPI_OK(MPI_Op_create(isum, 1, &sop));
	static const int counts[] = { 3, 1500, 20000 };	/* 48 B, 24 KB, 320 KB */
	mat *s = malloc(20000 * sizeof(mat)), *r = malloc(20000 * sizeof(mat));
	CHECK(s && r, "malloc");
	for (int c = 0; c < 3; c++) {
		int n = counts[c];
		for (int i = 0; i < n; i++)
			s[i] = rmat(t_rank, i);
		MPI_OK(MPI_Allreduce(s, r, n, mt, mop, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			mat w = mprod(i);
			CHECK(!memcmp(&r[i], &w, sizeof w), "Allreduce non-commutative n=%d [%d]", n, i);
		}
		t_mix(r, (size_t)n * sizeof(mat));
		for (int root = 0; root < t_size; root += 2) {
			MPI_OK(MPI_Reduce(s, r, n, mt, mop, root, MPI_COMM_WORLD));
			if (t_rank == root)
				for (int i = 0; i < n; i++) {
					mat w = mprod(i);
					CHECK(!memcmp(&r[i], &w, sizeof w), "Reduce non-commutative n=%d root %d [%d]", n, root, i);
				}
		}
		/* Reduce_scatter_block keeps the order too */
		mat *big = malloc((size_t)t_size * n * sizeof(mat));
		CHECK(big, "malloc");
		for (int i = 0; i < t_size * n; i++)
			big[i] = rmat(t_rank, i % n);
		MPI_OK(MPI_Reduce_scatter_block(big, r, n, mt, mop, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++) {
			mat w = mprod(i);
			CHECK(!memcmp(&r[i], &w, sizeof w), "Reduce_scatter_block non-commutative n=%d [%d]", n, i);
		}
		free(big);
	}
	int *is = malloc(70000 * sizeof(int)), *ir = malloc(70000 * sizeof(int));
	CHECK(is && ir, "malloc");
	for (int c = 0; c < 2; c++) {
		int n = c ? 70000 : 9;
		for (int i = 0; i < n; i++)
			is[i] = t_rank * 3 + i % 91;
		MPI_OK(MPI_Allreduce(is, ir, n, MPI_INT, sop, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(ir[i] == 3 * t_size * (t_size - 1) / 2 + t_size * (i % 91), "Allreduce user SUM n=%d [%d]", n, i);
		t_mix(ir, (size_t)n * sizeof(int));
	}
	free(is);
	free(ir);
	free(s);
	free(r);
	MPI_OK(MPI_Op_free(&mop));
	MPI_OK(MPI_Op_free(&sop));
	MPI_OK(MPI_Type_free(&mt));
}

/* ---- Reduce_scatter(_block) ---- */

static void check_rscat(void)
{
	static const int blocks[] = { 1, 300, 3000 };	/* total 8p B .. 24p KB */
	for (int c = 0; c < 3; c++) {
		int b = blocks[c], n = b * t_size;
		double *s = malloc((size_t)n * sizeof(double)), *r = malloc((size_t)n * sizeof(double));
		CHECK(s && r, "malloc");
		for (int i = 0; i < n; i++)
			s[i] = dval(t_rank, i);
		MPI_OK(MPI_Reduce_scatter_block(s, r, b, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < b; i++) {
			double w = 0;
			for (int q = 0; q < t_size; q++)
				w += dval(q, t_rank * b + i);
			CHECK(r[i] == w, "Reduce_scatter_block b=%d [%d]", b, i);
		}
		t_mix(r, (size_t)b * sizeof(double));
		memcpy(r, s, (size_t)n * sizeof(double));
		MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, r, b, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
		for (int i = 0; i < b; i++)
			CHECK(r[i] == dval(t_size - 1, t_rank * b + i), "Reduce_scatter_block IN_PLACE b=%d [%d]", b, i);
		free(s);
		free(r);
	}
	/* varying counts, some zero */
	for (int c = 0; c < 2; c++) {
		int *rc = malloc(sizeof(int) * (size_t)t_size), n = 0, off = 0;
		CHECK(rc, "malloc");
		for (int q = 0; q < t_size; q++) {
			rc[q] = q % 3 == 1 ? 0 : (c ? 2500 + q : 1 + q);
			n += rc[q];
		}
		for (int q = 0; q < t_rank; q++)
			off += rc[q];
		long long *s = malloc((size_t)(n + 1) * sizeof(long long)), *r = malloc((size_t)(n + 1) * sizeof(long long));
		CHECK(s && r, "malloc");
		for (int i = 0; i < n; i++)
			s[i] = (long long)t_rank * 1000 + i;
		for (int i = 0; i < n; i++)
			r[i] = -1;
		MPI_OK(MPI_Reduce_scatter(s, r, rc, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < rc[t_rank]; i++)
			CHECK_INT(r[i], 1000LL * t_size * (t_size - 1) / 2 + (long long)t_size * (off + i), "Reduce_scatter");
		t_mix(r, (size_t)rc[t_rank] * sizeof(long long));
		memcpy(r, s, (size_t)n * sizeof(long long));
		MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, r, rc, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
		for (int i = 0; i < rc[t_rank]; i++)
			CHECK_INT(r[i], off + i, "Reduce_scatter IN_PLACE MIN");
		free(s);
		free(r);
		free(rc);
	}
}

/* ---- Allgather, Alltoall(v) ---- */

static void check_gathers(void)
{
	/* ints: 4 B .. 256 KiB + 4 B blocks, on both sides of 8, 32 and
	   256 KiB */
	static const int counts[] = { 1, 100, 1024, 2048, 2049, 8191, 8192,
	    65536, 65537 };
	MPI_Datatype vt;
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vt));
	MPI_OK(MPI_Type_commit(&vt));
	for (int c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
		int b = counts[c], n = b * t_size;
		int *s = malloc((size_t)b * sizeof(int)), *r = malloc((size_t)n * 3 * sizeof(int));
		CHECK(s && r, "malloc");
		for (int i = 0; i < b; i++)
			s[i] = t_rank * 10000 + i;
		MPI_OK(MPI_Allgather(s, b, MPI_INT, r, b, MPI_INT, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(r[i] == (i / b) * 10000 + i % b, "Allgather b=%d [%d]", b, i);
		t_mix(r, (size_t)n * sizeof(int));
		for (int i = 0; i < n; i++)
			r[i] = i / b == t_rank ? s[i % b] : -1;
		MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, b, MPI_INT, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(r[i] == (i / b) * 10000 + i % b, "Allgather IN_PLACE b=%d [%d]", b, i);
		/* Allgatherv, rank q's block b + q ints (uneven), packed in
		   rank order: both sides of the direct protocol's 1 MiB */
		{
			int *rc = malloc(2 * sizeof(int) * (size_t)t_size), *rd = rc + t_size, tot = 0;
			CHECK(rc, "malloc");
			for (int q = 0; q < t_size; q++) {
				rc[q] = b + q;
				rd[q] = tot;
				tot += rc[q];
			}
			int *sv = malloc((size_t)rc[t_rank] * sizeof(int)), *rv = malloc((size_t)tot * sizeof(int));
			CHECK(sv && rv, "malloc");
			for (int i = 0; i < rc[t_rank]; i++)
				sv[i] = t_rank * 100000 + i;
			for (int i = 0; i < tot; i++)
				rv[i] = -1;
			MPI_OK(MPI_Allgatherv(sv, rc[t_rank], MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD));
			for (int q = 0; q < t_size; q++)
				for (int i = 0; i < rc[q]; i++)
					CHECK(rv[rd[q] + i] == q * 100000 + i, "Allgatherv b=%d from %d [%d]: %d", b, q, i, rv[rd[q] + i]);
			free(sv);
			free(rv);
			free(rc);
		}
		/* received as b/2 of the vector type (gaps untouched) */
		if (b % 2 == 0) {
			for (int i = 0; i < 3 * n / 2; i++)
				r[i] = -3;
			MPI_OK(MPI_Allgather(s, b, MPI_INT, r, b / 2, vt, MPI_COMM_WORLD));
			for (int i = 0; i < 3 * n / 2; i++) {
				int e = i / 3 * 2 + (i % 3 == 2);	/* int index in the gathered data */
				int w = i % 3 == 1 ? -3 : (e / b) * 10000 + e % b;
				CHECK(r[i] == w, "Allgather vector b=%d [%d]: got %d want %d", b, i, r[i], w);
			}
		}
		free(s);
		free(r);
	}
	/* Alltoall: 4 B .. 16 KiB blocks */
	static const int ab[] = { 1, 63, 64, 2000, 4095, 4096 };
	for (int c = 0; c < 6; c++) {
		int b = ab[c], n = b * t_size;
		int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
		CHECK(s && r, "malloc");
		for (int i = 0; i < n; i++)
			s[i] = t_rank * 1000000 + i;
		MPI_OK(MPI_Alltoall(s, b, MPI_INT, r, b, MPI_INT, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(r[i] == (i / b) * 1000000 + t_rank * b + i % b, "Alltoall b=%d [%d]", b, i);
		t_mix(r, (size_t)n * sizeof(int));
		memcpy(r, s, (size_t)n * sizeof(int));
		MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, b, MPI_INT, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			CHECK(r[i] == (i / b) * 1000000 + t_rank * b + i % b, "Alltoall IN_PLACE b=%d [%d]", b, i);
		free(s);
		free(r);
	}
	/* Alltoallv: blocks between ranks >= 2 are large, the rest small, so
	   ranks 0 and 1 post everything at once and the others go pairwise
	   (in direct jobs; in relay ones all go pairwise) */
	{
		int *sc = malloc(4 * sizeof(int) * (size_t)t_size), *sd = sc + t_size, *rc = sd + t_size, *rd = rc + t_size;
		int ns = 0, nr = 0;
		CHECK(sc, "malloc");
		for (int q = 0; q < t_size; q++) {
			sc[q] = t_rank >= 2 && q >= 2 ? 4200 + q : 2 + q;
			rc[q] = t_rank >= 2 && q >= 2 ? 4200 + t_rank : 2 + t_rank;
			sd[q] = ns;
			rd[q] = nr;
			ns += sc[q];
			nr += rc[q];
		}
		int *s = malloc((size_t)ns * sizeof(int)), *r = malloc((size_t)nr * sizeof(int));
		CHECK(s && r, "malloc");
		for (int q = 0; q < t_size; q++)
			for (int i = 0; i < sc[q]; i++)
				s[sd[q] + i] = t_rank * 1000000 + q * 10000 + i;
		MPI_OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < t_size; q++)
			for (int i = 0; i < rc[q]; i++)
				CHECK(r[rd[q] + i] == q * 1000000 + t_rank * 10000 + i, "Alltoallv from %d [%d]", q, i);
		t_mix(r, (size_t)nr * sizeof(int));
		free(s);
		free(r);
		free(sc);
	}
	MPI_OK(MPI_Type_free(&vt));
}

/* ---- non-integer doubles: the same bits on every rank ---- */

static void check_same_bits(void)
{
	static const int counts[] = { 5, 4000, 40000 };
	double *s = malloc(40000 * sizeof(double)), *r = malloc(40000 * sizeof(double));
	unsigned long long *all = malloc(sizeof(*all) * (size_t)t_size);
	CHECK(s && r && all, "malloc");
	for (int c = 0; c < 3; c++) {
		int n = counts[c];
		for (int i = 0; i < n; i++)
			s[i] = sin(t_rank * 1000.0 + i) * 1e3 + 1.0 / (1 + i);
		MPI_OK(MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
		unsigned long long h = 1469598103934665603ULL;
		const unsigned char *p = (const unsigned char *)r;
		for (size_t i = 0; i < (size_t)n * sizeof(double); i++)
			h = (h ^ p[i]) * 1099511628211ULL;
		for (int i = 0; i < n; i += 97) {
			double w = 0;
			for (int q = 0; q < t_size; q++)
				w += sin(q * 1000.0 + i) * 1e3 + 1.0 / (1 + i);
			CHECK(fabs(r[i] - w) <= 1e-9 * (1 + fabs(w)), "Allreduce doubles n=%d [%d]", n, i);
		}
		MPI_OK(MPI_Allgather(&h, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD));
		for (int q = 0; q < t_size; q++)
			CHECK(all[q] == all[0], "Allreduce n=%d: rank %d has other bits than rank 0", n, q);
	}
	free(all);
	free(s);
	free(r);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_algos");
	check_doubles();
	check_ops();
	check_derived();
	check_userops();
	check_rscat();
	check_gathers();
	check_same_bits();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	return t_finish();
}
