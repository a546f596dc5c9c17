/* coll_alltoall: Allgather, Allgatherv, Alltoall, Alltoallv (uneven and
 * zero counts), IN_PLACE for Allgather(v) and Alltoall(v), derived types. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_alltoall");
	int n = t_size, K = 2;
	int *rb = malloc(n * (n + 4) * sizeof(int) * 4), *sb = malloc(n * (n + 4) * sizeof(int) * 4);
	int *rc = malloc(n * sizeof(int)), *rd = malloc(n * sizeof(int)),
	    *sc = malloc(n * sizeof(int)), *sd = malloc(n * sizeof(int));
	int mine[4];

	/* Allgather */
	for (int i = 0; i < K; i++)
		mine[i] = t_rank * 10 + i;
	MPI_OK(MPI_Allgather(mine, K, MPI_INT, rb, K, MPI_INT, MPI_COMM_WORLD));
	for (int r = 0; r < n; r++)
		for (int i = 0; i < K; i++)
			CHECK_INT(rb[r * K + i], r * 10 + i, "Allgather");
	t_mix(rb, n * K * sizeof(int));
	for (int i = 0; i < n * K; i++)
		rb[i] = i / K == t_rank ? t_rank * 10 + i % K : -1;
	MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, K, MPI_INT, MPI_COMM_WORLD));
	for (int r = 0; r < n; r++)
		CHECK_INT(rb[r * K + 1], r * 10 + 1, "Allgather IN_PLACE");

	/* Allgatherv: rank r contributes r%3+1 ints, stored with a gap */
	int tot = 0;
	for (int r = 0; r < n; r++) {
		rc[r] = r % 3 + 1;
		rd[r] = tot;
		tot += rc[r] + 1;
	}
	for (int i = 0; i < tot; i++)
		rb[i] = -1;
	for (int i = 0; i < rc[t_rank]; i++)
		mine[i] = t_rank * 100 + i;
	MPI_OK(MPI_Allgatherv(mine, rc[t_rank], MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int r = 0; r < n; r++) {
		for (int i = 0; i < rc[r]; i++)
			CHECK_INT(rb[rd[r] + i], r * 100 + i, "Allgatherv");
		CHECK_INT(rb[rd[r] + rc[r]], -1, "Allgatherv gap");
	}
	t_mix(rb, tot * sizeof(int));
	for (int i = 0; i < tot; i++)
		rb[i] = -1;
	for (int i = 0; i < rc[t_rank]; i++)
		rb[rd[t_rank] + i] = t_rank * 100 + i;
	MPI_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int r = 0; r < n; r++)
		CHECK_INT(rb[rd[r]], r * 100, "Allgatherv IN_PLACE");

	/* Alltoall: element (to q, i) = rank*1000 + q*10 + i */
	for (int q = 0; q < n; q++)
		for (int i = 0; i < K; i++)
			sb[q * K + i] = t_rank * 1000 + q * 10 + i;
	MPI_OK(MPI_Alltoall(sb, K, MPI_INT, rb, K, MPI_INT, MPI_COMM_WORLD));
	for (int q = 0; q < n; q++)
		for (int i = 0; i < K; i++)
			CHECK_INT(rb[q * K + i], q * 1000 + t_rank * 10 + i, "Alltoall");
	t_mix(rb, n * K * sizeof(int));
	memcpy(rb, sb, n * K * sizeof(int));
	MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, K, MPI_INT, MPI_COMM_WORLD));
	for (int q = 0; q < n; q++)
		CHECK_INT(rb[q * K + 1], q * 1000 + t_rank * 10 + 1, "Alltoall IN_PLACE");

	/* Alltoallv: rank p sends (p+q)%3 ints to q (zero when divisible) */
	int stot = 0, rtot = 0;
	for (int q = 0; q < n; q++) {
		sc[q] = (t_rank + q) % 3;
		sd[q] = stot;
		stot += sc[q];
		rc[q] = (q + t_rank) % 3;
		rd[q] = rtot + q;		/* gaps in the receive buffer */
		rtot += rc[q];
	}
	for (int q = 0; q < n; q++)
		for (int i = 0; i < sc[q]; i++)
			sb[sd[q] + i] = t_rank * 1000 + q * 10 + i;
	for (int i = 0; i < rtot + n; i++)
		rb[i] = -1;
	MPI_OK(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int q = 0; q < n; q++)
		for (int i = 0; i < rc[q]; i++)
			CHECK_INT(rb[rd[q] + i], q * 1000 + t_rank * 10 + i, "Alltoallv");
	t_mix(rb, (rtot + n) * sizeof(int));
	/* Alltoallv IN_PLACE (symmetric counts: (p+q)%3 both ways) */
	for (int q = 0; q < n; q++)
		for (int i = 0; i < rc[q]; i++)
			rb[rd[q] + i] = t_rank * 1000 + q * 10 + i;
	MPI_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int q = 0; q < n; q++)
		for (int i = 0; i < rc[q]; i++)
			CHECK_INT(rb[rd[q] + i], q * 1000 + t_rank * 10 + i, "Alltoallv IN_PLACE");

	/* Alltoall with a derived send type: column of a n x 2 matrix (vector)
	 * resized so consecutive destinations take consecutive columns */
	MPI_Datatype col, colr;
	MPI_OK(MPI_Type_vector(2, 1, n, MPI_INT, &col));
	MPI_OK(MPI_Type_create_resized(col, 0, sizeof(int), &colr));
	MPI_OK(MPI_Type_commit(&colr));
	for (int row = 0; row < 2; row++)
		for (int q = 0; q < n; q++)
			sb[row * n + q] = t_rank * 1000 + row * 100 + q;
	MPI_OK(MPI_Alltoall(sb, 1, colr, rb, 2, MPI_INT, MPI_COMM_WORLD));
	for (int q = 0; q < n; q++)
		for (int row = 0; row < 2; row++)
			CHECK_INT(rb[q * 2 + row], q * 1000 + row * 100 + t_rank, "Alltoall column type");
	MPI_OK(MPI_Type_free(&col));
	MPI_OK(MPI_Type_free(&colr));
	t_mix(rb, 2 * n * sizeof(int));
	free(rb); free(sb); free(rc); free(rd); free(sc); free(sd);
	return t_finish();
}
