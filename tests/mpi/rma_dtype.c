/* rma_dtype: derived datatypes at origin and target. A rank owns an 8x8
 * matrix of ints; its left neighbour puts a contiguous row into one of
 * its columns (vector target type), gets its diagonal back (indexed
 * origin type, strided target), accumulates with a contiguous derived
 * type, and puts a struct through a struct type with a hole. */
#include "mpitest.h"

#define D 8

struct rec { int a; double b; char c; };

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_dtype");
	int *m;
	MPI_Win win;
	MPI_OK(MPI_Win_allocate((D * D + 64) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m, &win));
	MPI_Datatype col, diag_t, diag_o, pair, srec;
	MPI_OK(MPI_Type_vector(D, 1, D, MPI_INT, &col));
	MPI_OK(MPI_Type_commit(&col));
	MPI_OK(MPI_Type_vector(D, 1, D + 1, MPI_INT, &diag_t));
	MPI_OK(MPI_Type_commit(&diag_t));
	int bl[D], ds[D];
	for (int i = 0; i < D; i++) {
		bl[i] = 1;
		ds[i] = 2 * (D - 1 - i);	/* reversed, every other int */
	}
	MPI_OK(MPI_Type_indexed(D, bl, ds, MPI_INT, &diag_o));
	MPI_OK(MPI_Type_commit(&diag_o));
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
	MPI_OK(MPI_Type_commit(&pair));
	int sbl[3] = { 1, 1, 1 };
	MPI_Aint sds[3] = { offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c) };
	MPI_Datatype sty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };
	MPI_OK(MPI_Type_create_struct(3, sbl, sds, sty, &srec));
	MPI_OK(MPI_Type_commit(&srec));
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	for (int k = 0; k < 5; k++) {
		for (int i = 0; i < D * D; i++)
			m[i] = 1000 * t_rank + i;
		memset(m + D * D, 0, 64 * sizeof(int));
		MPI_OK(MPI_Win_fence(0, win));
		int row[D], got[2 * D];
		for (int i = 0; i < D; i++)
			row[i] = 100 * k + 10 * t_rank + i;
		MPI_OK(MPI_Put(row, D, MPI_INT, right, k % D, 1, col, win));
		memset(got, 0, sizeof got);
		MPI_OK(MPI_Get(got, 1, diag_o, right, 0, 1, diag_t, win));
		int acc[4] = { t_rank + 1, 2 * (t_rank + 1), 3, 4 };
		MPI_OK(MPI_Accumulate(acc, 2, pair, right, D * D, 4, MPI_INT, MPI_SUM, win));
		struct rec rv = { t_rank * 3 + k, t_rank + 0.5 * k, (char)('a' + t_rank % 26) };
		MPI_OK(MPI_Put(&rv, 1, srec, right, D * D + 8, 1, srec, win));
		MPI_OK(MPI_Win_fence(0, win));
		/* the diagonal was read before this epoch's put into column k%D? no:
		   the get and the put touch m[k%D + D*(k%D)]: avoid that element */
		for (int i = 0; i < D; i++) {
			int want = 1000 * right + i * (D + 1);
			if (i == k % D)
				continue;
			CHECK_INT(got[2 * (D - 1 - i)], want, "diagonal through indexed origin");
		}
		for (int i = 0; i < D; i++)
			CHECK_INT(m[i * D + k % D], 100 * k + 10 * left + i, "column put");
		CHECK_INT(m[D * D], left + 1, "pair accumulate 0");
		CHECK_INT(m[D * D + 1], 2 * (left + 1), "pair accumulate 1");
		CHECK_INT(m[D * D + 2], 3, "pair accumulate 2");
		struct rec *rp = (struct rec *)(void *)(m + D * D + 8);
		CHECK(rp->a == left * 3 + k && rp->b == left + 0.5 * k && rp->c == 'a' + left % 26, "struct put");
		t_mix(m, D * D * sizeof(int));
		for (int i = 0; i < D; i++)
			if (i != k % D)
				t_mix_int(got[2 * (D - 1 - i)]);
		MPI_OK(MPI_Win_fence(0, win));
	}
	MPI_OK(MPI_Type_free(&col));
	MPI_OK(MPI_Type_free(&diag_t));
	MPI_OK(MPI_Type_free(&diag_o));
	MPI_OK(MPI_Type_free(&pair));
	MPI_OK(MPI_Type_free(&srec));
	MPI_OK(MPI_Win_free(&win));
	return t_finish();
}
