/* rma_dynamic: MPI_Win_create_dynamic with MPI_Win_attach/detach (target
 * displacements are the target's addresses, exchanged with Allgather),
 * regions attached and detached between epochs, a Put and a Get across
 * adjacent attached regions, one across a detached gap refused; and MPI_Win_allocate_shared
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

	/* three pieces of one array attached one by one, the middle one
	   last: a Put and a Get spanning all three go through; then with
	   the middle detached, a Put across the gap fails (RMA_RANGE) */
	{
		int arr[3 * N], back[3 * N], src[3 * N];
		MPI_Aint a0;
		for (int i = 0; i < 3 * N; i++) {
			arr[i] = -1;
			src[i] = t_rank * 1000 + i;
		}
		MPI_OK(MPI_Win_attach(win, arr, N * sizeof(int)));
		MPI_OK(MPI_Win_attach(win, arr + 2 * N, N * sizeof(int)));
		MPI_OK(MPI_Win_attach(win, arr + N, N * sizeof(int)));
		MPI_OK(MPI_Get_address(arr, &a0));
		MPI_OK(MPI_Allgather(&a0, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
		MPI_OK(MPI_Win_fence(0, win));
		MPI_OK(MPI_Put(src + 1, 3 * N - 2, MPI_INT, right, addrs[right] + (MPI_Aint)sizeof(int), 3 * N - 2, MPI_INT, win));
		MPI_OK(MPI_Win_fence(0, win));
		for (int i = 0; i < 3 * N; i++)
			CHECK_INT(arr[i], i == 0 || i == 3 * N - 1 ? -1 : left * 1000 + i, "Put across three attached regions");
		MPI_OK(MPI_Get(back, 3 * N, MPI_INT, right, addrs[right], 3 * N, MPI_INT, win));
		MPI_OK(MPI_Win_fence(0, win));
		for (int i = 0; i < 3 * N; i++)
			CHECK_INT(back[i], i == 0 || i == 3 * N - 1 ? -1 : t_rank * 1000 + i, "Get across three attached regions");
		t_mix(arr, sizeof arr);
		MPI_OK(MPI_Win_detach(win, arr + N));
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1 writes into the gap unchecked */
		int cls, rc;
		MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
		MPI_OK(MPI_Win_fence(0, win));
		rc = MPI_Put(src, 2 * N, MPI_INT, right, addrs[right] + (MPI_Aint)(N / 2 * sizeof(int)), 2 * N, MPI_INT, win);
		if (rc == MPI_SUCCESS)
			rc = MPI_Win_fence(0, win);
		else
			MPI_OK(MPI_Win_fence(0, win));
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_RMA_RANGE, "Put across a detached gap");
#endif
		MPI_OK(MPI_Win_detach(win, arr));
		MPI_OK(MPI_Win_detach(win, arr + 2 * N));
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
