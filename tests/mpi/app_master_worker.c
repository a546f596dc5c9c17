/* app_master_worker: rank 0 hands out tasks; workers ask for work with
 * ANY_SOURCE-driven replies. Which worker gets which task depends on
 * timing, the printed result (per-task results, combined) does not.
 * With one rank, the master does the work itself. */
#include "mpitest.h"

enum { NTASK = 200, TAG_REQ = 1, TAG_TASK = 2, TAG_STOP = 3 };

static long long work(int task)
{
	unsigned long long h = (unsigned long long)task;
	for (int i = 0; i < 2000; i++)
		h = (h * 6364136223846793005ULL + 1442695040888963407ULL) ^ (h >> 17);
	return (long long)(h & 0xffffffff);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "app_master_worker");
	if (t_rank == 0) {
		long long *res = calloc(NTASK, sizeof(long long));
		int *done_by = calloc(NTASK, sizeof(int));
		int next = 0, stopped = 0, received = 0;
		if (t_size == 1) {
			for (int t = 0; t < NTASK; t++)
				res[t] = work(t);
			received = NTASK;
		}
		while (stopped < t_size - 1) {
			long long msg[2];	/* {task done or -1, result} */
			MPI_Status st;
			MPI_OK(MPI_Recv(msg, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &st));
			if (msg[0] >= 0) {
				CHECK(msg[0] < NTASK && done_by[msg[0]] == 0, "task %lld done twice", msg[0]);
				CHECK(msg[1] == work((int)msg[0]), "wrong result for task %lld", msg[0]);
				res[msg[0]] = msg[1];
				done_by[msg[0]] = st.MPI_SOURCE;
				received++;
			}
			if (next < NTASK) {
				MPI_OK(MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD));
				next++;
			} else {
				MPI_OK(MPI_Send(NULL, 0, MPI_INT, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD));
				stopped++;
			}
		}
		CHECK_INT(received, NTASK, "results received");
		t_mix(res, NTASK * sizeof(long long));
		long long total = 0;
		for (int t = 0; t < NTASK; t++)
			total += res[t];
		printf("app_master_worker: %d tasks, total %lld\n", NTASK, total);
		free(res);
		free(done_by);
	} else {
		long long msg[2] = { -1, 0 };
		int ntasks = 0;
		for (;;) {
			MPI_OK(MPI_Send(msg, 2, MPI_LONG_LONG, 0, TAG_REQ, MPI_COMM_WORLD));
			int task;
			MPI_Status st;
			MPI_OK(MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
			if (st.MPI_TAG == TAG_STOP)
				break;
			CHECK_INT(st.MPI_TAG, TAG_TASK, "worker got tag");
			msg[0] = task;
			msg[1] = work(task);
			ntasks++;
		}
		(void)ntasks;	/* timing dependent: not part of the output */
	}
	return t_finish();
}
