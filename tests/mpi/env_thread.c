/* env_thread: MPI_Init_thread, provided level, Query_thread agrees. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	int prov = -1, q = -1, flag = 0;
	t_name = "env_thread";
	MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &t_rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &t_size));
	CHECK(prov >= MPI_THREAD_SINGLE && prov <= MPI_THREAD_MULTIPLE, "provided %d", prov);
	MPI_OK(MPI_Query_thread(&q));
	CHECK_INT(q, prov, "Query_thread vs provided");
	MPI_OK(MPI_Initialized(&flag));
	CHECK_INT(flag, 1, "Initialized");
	int sum = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK_INT(sum, t_size * (t_size - 1) / 2, "Allreduce sum of ranks");
	t_mix_int(sum);
	return t_finish();
}
