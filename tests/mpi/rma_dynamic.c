/* rma_dynamic: MPI_Win_create_dynamic with MPI_Win_attach/detach (target
 * displacements are the target's addresses, exchanged with Allgather),
 * regions attached and detached between epochs; and MPI_Win_allocate_shared
 * with MPI_Win_shared_query of the own segment. */
#include "mpitest.h"

#define N 16

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_dynamic");
	MPI_Win win;
	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	int *flavor, flag;
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
	CHECK_INT(*flavor, MPI_WIN_FLAVOR_DYNAMIC, "flavor");
	MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)t_size);
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	for (int round = 0; round < 6; round++) {
		/* a new region every round */
		double *region = calloc(N, sizeof(double));
		MPI_Aint mine;
		MPI_OK(MPI_Win_attach(win, region, N * sizeof(double)));
		MPI_OK(MPI_Get_address(region, &mine));
		MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
		MPI_OK(MPI_Win_fence(0, win));
		double v[N];
		for (int i = 0; i < N; i++)
			v[i] = round * 100.0 + t_rank + i / 8.0;
		MPI_OK(MPI_Put(v, N, MPI_DOUBLE, right, addrs[right], N, MPI_DOUBLE, win));
		MPI_OK(MPI_Win_fence(0, win));
		for (int i = 0; i < N; i++)
			CHECK(region[i] == round * 100.0 + left + i / 8.0, "dynamic put at %d", i);
		double back[N / 2];
		MPI_OK(MPI_Get(back, N / 2, MPI_DOUBLE, left, addrs[left] + N / 2 * sizeof(double), N / 2, MPI_DOUBLE, win));
		MPI_OK(MPI_Win_fence(0, win));
		for (int i = 0; i < N / 2; i++)
			CHECK(back[i] == round * 100.0 + (left + t_size - 1) % t_size + (i + N / 2) / 8.0, "dynamic get");
		t_mix(region, N * sizeof(double));
		t_mix(back, sizeof back);
		MPI_OK(MPI_Win_detach(win, region));
		free(region);
	}
	MPI_OK(MPI_Win_free(&win));
	free(addrs);

	/* allocate_shared: the own segment */
	int *seg;
	MPI_Win sw;
	MPI_OK(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &seg, &sw));
	MPI_Aint qsize;
	int qunit;
	int *qbase;
	MPI_OK(MPI_Win_shared_query(sw, 0, &qsize, &qunit, &qbase));
	CHECK(qbase == seg && qsize == N * (MPI_Aint)sizeof(int) && qunit == (int)sizeof(int), "shared_query of the own segment");
	MPI_OK(MPI_Win_fence(0, sw));
	int one = t_rank + 1;
	MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, sw));
	MPI_OK(MPI_Win_fence(0, sw));
	CHECK_INT(seg[3], t_rank + 1, "accumulate into own shared segment");
	MPI_OK(MPI_Win_free(&sw));
	return t_finish();
}
