/* coll_userop: user-defined ops. Commutative (sum mod 1000003 over a
 * derived pair type) and non-commutative (2x2 integer matrix product, the
 * result depends on rank order) with Reduce at every root, Allreduce,
 * Scan, Exscan; Op_commutative; Op_free. */
#include "mpitest.h"

typedef struct { long long a, b, c, d; } mat;

static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	mat *x = in, *y = inout;
	for (int k = 0; k < *len; k++) {
		/* inout = in * inout (in comes from lower ranks) */
		mat r;
		r.a = (x[k].a * y[k].a + x[k].b * y[k].c) % 1000003;
		r.b = (x[k].a * y[k].b + x[k].b * y[k].d) % 1000003;
		r.c = (x[k].c * y[k].a + x[k].d * y[k].c) % 1000003;
		r.d = (x[k].c * y[k].b + x[k].d * y[k].d) % 1000003;
		y[k] = r;
	}
}

static void modsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *x = in, *y = inout;
	/* the datatype is a 2-int contiguous: len counts pairs */
	for (int k = 0; k < 2 * *len; k++)
		y[k] = (int)(((long long)x[k] + y[k]) % 1000003);
}

static mat rank_mat(int r, int k)
{
	mat m = { 1 + r + k, 2 * r + 1, r % 3, 1 + k };
	return m;
}

static mat prod_range(int lo, int hi, int k)	/* M_lo * ... * M_hi */
{
	mat acc = { 1, 0, 0, 1 };
	for (int r = hi; r >= lo; r--) {
		mat m = rank_mat(r, k);
		int one = 1;
		matmul(&m, &acc, &one, NULL);
	}
	return acc;
}

static int same(mat x, mat y) { return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d; }

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_userop");
	MPI_Op mop, sop;
	MPI_Datatype mt, pair;
	MPI_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mt));
	MPI_OK(MPI_Type_commit(&mt));
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
	MPI_OK(MPI_Type_commit(&pair));
	MPI_OK(MPI_Op_create(matmul, 0, &mop));
	MPI_OK(MPI_Op_create(modsum, 1, &sop));
	int comm = -1;
	MPI_OK(MPI_Op_commutative(mop, &comm));
	CHECK_INT(comm, 0, "Op_commutative(matmul)");
	MPI_OK(MPI_Op_commutative(sop, &comm));
	CHECK_INT(comm, 1, "Op_commutative(modsum)");
	MPI_OK(MPI_Op_commutative(MPI_SUM, &comm));
	CHECK_INT(comm, 1, "Op_commutative(MPI_SUM)");

	enum { K = 3 };
	mat s[K], r[K];
	for (int k = 0; k < K; k++)
		s[k] = rank_mat(t_rank, k);
	for (int root = 0; root < t_size; root++) {
		memset(r, 0, sizeof r);
		MPI_OK(MPI_Reduce(s, r, K, mt, mop, root, MPI_COMM_WORLD));
		if (t_rank == root)
			for (int k = 0; k < K; k++)
				CHECK(same(r[k], prod_range(0, t_size - 1, k)), "non-commutative Reduce root %d [%d]", root, k);
	}
	MPI_OK(MPI_Allreduce(s, r, K, mt, mop, MPI_COMM_WORLD));
	for (int k = 0; k < K; k++)
		CHECK(same(r[k], prod_range(0, t_size - 1, k)), "non-commutative Allreduce [%d]", k);
	t_mix(r, sizeof r);
	memcpy(r, s, sizeof r);
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, K, mt, mop, MPI_COMM_WORLD));
	for (int k = 0; k < K; k++)
		CHECK(same(r[k], prod_range(0, t_size - 1, k)), "non-commutative Allreduce IN_PLACE [%d]", k);
	MPI_OK(MPI_Scan(s, r, K, mt, mop, MPI_COMM_WORLD));
	for (int k = 0; k < K; k++)
		CHECK(same(r[k], prod_range(0, t_rank, k)), "non-commutative Scan [%d]", k);
	t_mix(r, sizeof r);
	MPI_OK(MPI_Exscan(s, r, K, mt, mop, MPI_COMM_WORLD));
	if (t_rank > 0)
		for (int k = 0; k < K; k++)
			CHECK(same(r[k], prod_range(0, t_rank - 1, k)), "non-commutative Exscan [%d]", k);

	/* commutative user op over pairs */
	int ps[8], pr[8];
	for (int i = 0; i < 8; i++)
		ps[i] = 999000 + t_rank * 100 + i;
	for (int root = 0; root < t_size; root += 2) {
		MPI_OK(MPI_Reduce(ps, pr, 4, pair, sop, root, MPI_COMM_WORLD));
		if (t_rank == root)
			for (int i = 0; i < 8; i++) {
				long long w = 0;
				for (int q = 0; q < t_size; q++)
					w = (w + 999000 + q * 100 + i) % 1000003;
				CHECK_INT(pr[i], w, "commutative user Reduce");
			}
	}
	MPI_OK(MPI_Allreduce(ps, pr, 4, pair, sop, MPI_COMM_WORLD));
	t_mix(pr, sizeof pr);

	MPI_OK(MPI_Op_free(&mop));
	MPI_OK(MPI_Op_free(&sop));
	CHECK(mop == MPI_OP_NULL && sop == MPI_OP_NULL, "Op_free handles");
	MPI_OK(MPI_Type_free(&mt));
	MPI_OK(MPI_Type_free(&pair));
	return t_finish();
}
