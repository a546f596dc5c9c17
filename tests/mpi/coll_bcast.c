/* coll_bcast: Barrier; Bcast from every root with counts 0, 1, 1000 and
 * 100000 ints, a derived (vector) type, and on MPI_COMM_SELF. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_bcast");
	for (int i = 0; i < 5; i++)
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Barrier(MPI_COMM_SELF));
	static int buf[100000];
	int counts[] = { 0, 1, 1000, 100000 };
	for (int root = 0; root < t_size; root++) {
		for (int c = 0; c < 4; c++) {
			int n = counts[c];
			if (n == 100000 && root % 4 != 0)
				continue;
			for (int i = 0; i < n + 1 && i < 100000; i++)
				buf[i] = t_rank == root ? root * 7 + i : -1;
			MPI_OK(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
			for (int i = 0; i < n; i++)
				CHECK(buf[i] == root * 7 + i, "Bcast root %d count %d: buf[%d] = %d", root, n, i, buf[i]);
			if (n < 100000)
				CHECK(buf[n] == (t_rank == root ? root * 7 + n : -1), "Bcast wrote past count %d", n);
			t_mix(buf, n * sizeof(int));
		}
	}
	/* derived type: every other double of 10 */
	MPI_Datatype v;
	MPI_OK(MPI_Type_vector(5, 1, 2, MPI_DOUBLE, &v));
	MPI_OK(MPI_Type_commit(&v));
	double d[10];
	int root = t_size / 2;
	for (int i = 0; i < 10; i++)
		d[i] = t_rank == root ? i * 1.5 : -1;
	MPI_OK(MPI_Bcast(d, 1, v, root, MPI_COMM_WORLD));
	for (int i = 0; i < 10; i++)
		CHECK(d[i] == (i % 2 == 0 || t_rank == root ? i * 1.5 : -1), "Bcast vector d[%d] = %g", i, d[i]);
	MPI_OK(MPI_Type_free(&v));
	/* bcast of a struct-ish pair type */
	struct { double v; int i; } p = { t_rank == 0 ? 2.5 : 0, t_rank == 0 ? 9 : 0 };
	MPI_OK(MPI_Bcast(&p, 1, MPI_DOUBLE_INT, 0, MPI_COMM_WORLD));
	CHECK(p.v == 2.5 && p.i == 9, "Bcast DOUBLE_INT");
	int x = 5;
	MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_SELF));
	CHECK_INT(x, 5, "Bcast on COMM_SELF");
	t_mix(d, sizeof d);
	return t_finish();
}
