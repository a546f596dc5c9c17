/* rma_fence: active-target one-sided communication with MPI_Win_fence.
 * Each epoch: every rank puts into its right neighbour's window, gets from
 * its left neighbour's, and every rank accumulates (SUM, MAX, BXOR,
 * REPLACE) into rank 0's window; Get_accumulate with MPI_NO_OP reads.
 * The results are checked against the values computed locally and mixed
 * into the checksum. Also the window attributes, name, group and info,
 * and a window over a sub-communicator (split by parity). */
#include "mpitest.h"

#define N 8
#define EPOCHS 12

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_fence");
	long *buf = calloc(4 * N, sizeof(long));
	MPI_Win win;
	MPI_Info info;
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "no_locks", "true"));
	MPI_OK(MPI_Win_create(buf, 4 * N * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &win));
	MPI_OK(MPI_Info_free(&info));

	/* attributes */
	void *base;
	MPI_Aint *size;
	int *unit, *flavor, *model, flag;
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
	CHECK(flag && base == buf, "MPI_WIN_BASE");
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
	CHECK_INT(*size, 4 * N * sizeof(long), "MPI_WIN_SIZE");
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
	CHECK_INT(*unit, sizeof(long), "MPI_WIN_DISP_UNIT");
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
	CHECK_INT(*flavor, MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
	CHECK(*model == MPI_WIN_SEPARATE || *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
	char name[MPI_MAX_OBJECT_NAME];
	int len;
	MPI_OK(MPI_Win_set_name(win, "fence window"));
	MPI_OK(MPI_Win_get_name(win, name, &len));
	CHECK(strcmp(name, "fence window") == 0 && len == 12, "Win_get_name: '%s'", name);
	MPI_Group g, wg;
	int cmp;
	MPI_OK(MPI_Win_get_group(win, &g));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Group_compare(g, wg, &cmp));
	CHECK_INT(cmp, MPI_IDENT, "Win_get_group");
	MPI_OK(MPI_Group_free(&g));
	MPI_OK(MPI_Group_free(&wg));
	/* the info in use shows the standard's defaults, and what was set */
	{
		MPI_OK(MPI_Win_get_info(win, &info));
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1 shows no defaults, keeps none of these */
		char v[MPI_MAX_INFO_VAL];
		int flag;
		MPI_Info in;
		MPI_OK(MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, v, &flag));
		CHECK(flag && strcmp(v, "rar,raw,war,waw") == 0, "default accumulate_ordering");
		MPI_OK(MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL - 1, v, &flag));
		CHECK(flag && strcmp(v, "same_op_no_op") == 0, "default accumulate_ops");
		MPI_OK(MPI_Info_free(&info));
		MPI_OK(MPI_Info_create(&in));
		MPI_OK(MPI_Info_set(in, "accumulate_ops", "same_op"));
		MPI_OK(MPI_Win_set_info(win, in));
		MPI_OK(MPI_Info_free(&in));
		MPI_OK(MPI_Win_get_info(win, &info));
		MPI_OK(MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL - 1, v, &flag));
		CHECK(flag && strcmp(v, "same_op") == 0, "accumulate_ops set: '%s'", v);
#endif
		MPI_OK(MPI_Info_free(&info));
	}

	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	long got[N], fetched[N];
	MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	for (int e = 0; e < EPOCHS; e++) {
		long mine[N];
		for (int i = 0; i < N; i++)
			mine[i] = 1000L * e + 10L * t_rank + i;
		/* section 0: put to the right; section 1: read back from the left */
		MPI_OK(MPI_Put(mine, N, MPI_LONG, right, 0, N, MPI_LONG, win));
		/* section 2 of rank 0: sums and maxima of every rank's values */
		MPI_OK(MPI_Accumulate(mine, N / 2, MPI_LONG, 0, 2 * N, N / 2, MPI_LONG, MPI_SUM, win));
		MPI_OK(MPI_Accumulate(mine + N / 2, N / 2, MPI_LONG, 0, 2 * N + N / 2, N / 2, MPI_LONG, MPI_MAX, win));
		long x = (long)(t_rank + 1) << e % 8;
		MPI_OK(MPI_Accumulate(&x, 1, MPI_LONG, 0, 3 * N, 1, MPI_LONG, MPI_BXOR, win));
		if (t_rank == t_size - 1)
			MPI_OK(MPI_Accumulate(&mine[0], 1, MPI_LONG, 0, 3 * N + 1, 1, MPI_LONG, MPI_REPLACE, win));
		MPI_OK(MPI_Win_fence(0, win));
		/* my section 0 holds the left neighbour's values */
		for (int i = 0; i < N; i++)
			CHECK_INT(buf[i], 1000L * e + 10L * left + i, "put from the left");
		buf[N + 1] = 7L * e + t_rank;
		MPI_OK(MPI_Win_fence(0, win));
		MPI_OK(MPI_Get(got, N, MPI_LONG, left, 0, N, MPI_LONG, win));
		MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_LONG, fetched, N, MPI_LONG, 0, 2 * N, N, MPI_LONG, MPI_NO_OP, win));
		MPI_OK(MPI_Win_fence(0, win));
		for (int i = 0; i < N; i++)
			CHECK_INT(got[i], 1000L * e + 10L * ((left + t_size - 1) % t_size) + i, "get from the left");
		for (int i = 0; i < N / 2; i++) {
			long s = 0;
			for (int r = 0; r < t_size; r++)
				s += 1000L * e + 10L * r + i;
			CHECK_INT(fetched[i], s, "sum accumulated at rank 0");
			CHECK_INT(fetched[N / 2 + i], 1000L * e + 10L * (t_size - 1) + N / 2 + i, "max at rank 0");
		}
		t_mix(got, sizeof got);
		t_mix(fetched, sizeof fetched);
		if (t_rank == 0) {
			long bx = 0;
			for (int r = 0; r < t_size; r++)
				bx ^= (long)(r + 1) << e % 8;
			CHECK_INT(buf[3 * N], bx, "BXOR at rank 0");
			CHECK_INT(buf[3 * N + 1], 1000L * e + 10L * (t_size - 1), "REPLACE at rank 0");
			memset(buf + 2 * N, 0, 2 * N * sizeof(long));
		}
		CHECK_INT(buf[N + 1], 7L * e + t_rank, "local store kept");
		MPI_OK(MPI_Win_fence(0, win));
	}
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	MPI_OK(MPI_Win_free(&win));
	CHECK(win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
	free(buf);

	/* a window over half of the ranks (split by parity), its ranks
	   those of the sub-communicator */
	MPI_Comm half;
	int hr, hs;
	long cell[2] = { 0, 0 };
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 2, -t_rank, &half));
	MPI_OK(MPI_Comm_rank(half, &hr));
	MPI_OK(MPI_Comm_size(half, &hs));
	MPI_OK(MPI_Win_create(cell, sizeof cell, sizeof(long), MPI_INFO_NULL, half, &win));
	MPI_OK(MPI_Win_fence(0, win));
	long wr = t_rank + 1;
	MPI_OK(MPI_Accumulate(&wr, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
	MPI_OK(MPI_Put(&wr, 1, MPI_LONG, (hr + 1) % hs, 1, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_fence(0, win));
	if (hr == 0) {
		long s = 0;
		for (int r = t_rank % 2; r < t_size; r += 2)
			s += r + 1;
		CHECK_INT(cell[0], s, "accumulate over the half window");
	}
	int *members = malloc(sizeof(int) * (size_t)hs);
	MPI_OK(MPI_Allgather(&t_rank, 1, MPI_INT, members, 1, MPI_INT, half));
	CHECK_INT(cell[1], members[(hr + hs - 1) % hs] + 1, "put over the half window");
	free(members);
	t_mix(cell, sizeof cell);
	MPI_OK(MPI_Win_free(&win));
	MPI_OK(MPI_Comm_free(&half));
	return t_finish();
}
