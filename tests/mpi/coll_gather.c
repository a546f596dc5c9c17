/* coll_gather: Gather, Gatherv, Scatter, Scatterv from every root,
 * MPI_IN_PLACE at the root, count 0, different send/recv types. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_gather");
	int n = t_size, K = 3;
	int *all = malloc(sizeof(int) * n * (n + K) * 2), *cnts = malloc(sizeof(int) * n),
	    *dsp = malloc(sizeof(int) * n), mine[64], tot;
	for (int root = 0; root < n; root++) {
		/* Gather K ints */
		for (int i = 0; i < K; i++)
			mine[i] = t_rank * 100 + i;
		for (int i = 0; i < n * K; i++)
			all[i] = -1;
		MPI_OK(MPI_Gather(mine, K, MPI_INT, all, K, MPI_INT, root, MPI_COMM_WORLD));
		if (t_rank == root) {
			for (int r = 0; r < n; r++)
				for (int i = 0; i < K; i++)
					CHECK_INT(all[r * K + i], r * 100 + i, "Gather");
			t_mix(all, n * K * sizeof(int));
		}
		/* Gather IN_PLACE at root */
		if (t_rank == root) {
			for (int i = 0; i < n * K; i++)
				all[i] = -1;
			for (int i = 0; i < K; i++)
				all[root * K + i] = root * 100 + i;
			MPI_OK(MPI_Gather(MPI_IN_PLACE, K, MPI_INT, all, K, MPI_INT, root, MPI_COMM_WORLD));
			for (int r = 0; r < n; r++)
				for (int i = 0; i < K; i++)
					CHECK_INT(all[r * K + i], r * 100 + i, "Gather IN_PLACE");
		} else {
			MPI_OK(MPI_Gather(mine, K, MPI_INT, NULL, 0, MPI_INT, root, MPI_COMM_WORLD));
		}
		/* Gatherv: rank r sends r+1 ints, placed in reverse rank order with gaps */
		tot = 0;
		for (int r = n - 1; r >= 0; r--) {
			cnts[r] = r + 1;
			dsp[r] = tot;
			tot += r + 2;
		}
		for (int i = 0; i < tot; i++)
			all[i] = -1;
		for (int i = 0; i <= t_rank; i++)
			mine[i] = t_rank * 1000 + i;
		MPI_OK(MPI_Gatherv(mine, t_rank + 1, MPI_INT, all, cnts, dsp, MPI_INT, root, MPI_COMM_WORLD));
		if (t_rank == root) {
			for (int r = 0; r < n; r++) {
				for (int i = 0; i <= r; i++)
					CHECK_INT(all[dsp[r] + i], r * 1000 + i, "Gatherv");
				CHECK_INT(all[dsp[r] + r + 1], -1, "Gatherv gap");
			}
			t_mix(all, tot * sizeof(int));
		}
		/* Scatter K ints */
		if (t_rank == root)
			for (int i = 0; i < n * K; i++)
				all[i] = root * 10000 + i;
		for (int i = 0; i < K + 1; i++)
			mine[i] = -1;
		MPI_OK(MPI_Scatter(all, K, MPI_INT, mine, K, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; i < K; i++)
			CHECK_INT(mine[i], root * 10000 + t_rank * K + i, "Scatter");
		CHECK_INT(mine[K], -1, "Scatter wrote past recvcount");
		t_mix(mine, K * sizeof(int));
		/* Scatter IN_PLACE at root */
		if (t_rank == root) {
			MPI_OK(MPI_Scatter(all, K, MPI_INT, MPI_IN_PLACE, K, MPI_INT, root, MPI_COMM_WORLD));
			CHECK_INT(all[root * K], root * 10000 + root * K, "Scatter IN_PLACE root untouched");
		} else {
			MPI_OK(MPI_Scatter(NULL, 0, MPI_INT, mine, K, MPI_INT, root, MPI_COMM_WORLD));
			CHECK_INT(mine[0], root * 10000 + t_rank * K, "Scatter (root IN_PLACE)");
		}
		/* Scatterv: rank r gets r+1 ints from reverse-ordered blocks;
		 * Scatter from a 2-int contiguous sendtype to ints */
		if (t_rank == root)
			for (int i = 0; i < tot; i++)
				all[i] = root * 10000 + i;
		for (int i = 0; i < 64; i++)
			mine[i] = -1;
		MPI_OK(MPI_Scatterv(all, cnts, dsp, MPI_INT, mine, t_rank + 1, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; i <= t_rank; i++)
			CHECK_INT(mine[i], root * 10000 + dsp[t_rank] + i, "Scatterv");
		CHECK_INT(mine[t_rank + 1], -1, "Scatterv wrote past count");
		t_mix(mine, (t_rank + 1) * sizeof(int));
	}
	/* count 0 everywhere */
	MPI_OK(MPI_Gather(mine, 0, MPI_INT, all, 0, MPI_INT, 0, MPI_COMM_WORLD));
	MPI_OK(MPI_Scatter(all, 0, MPI_INT, mine, 0, MPI_INT, 0, MPI_COMM_WORLD));
	/* send 2 ints as one contiguous(2) element, receive as ints */
	MPI_Datatype two;
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
	MPI_OK(MPI_Type_commit(&two));
	mine[0] = t_rank;
	mine[1] = -t_rank;
	MPI_OK(MPI_Gather(mine, 1, two, all, 2, MPI_INT, n - 1, MPI_COMM_WORLD));
	if (t_rank == n - 1)
		for (int r = 0; r < n; r++)
			CHECK(all[2 * r] == r && all[2 * r + 1] == -r, "Gather mixed types");
	MPI_OK(MPI_Type_free(&two));
	free(all);
	free(cnts);
	free(dsp);
	return t_finish();
}
