/* env: environment functions (Initialized/Finalized, thread queries,
 * Wtime/Wtick, processor name, versions, Pcontrol, Alloc_mem). */
#include "mpitest.h"
#include <unistd.h>

int main(int argc, char **argv)
{
	int flag = -1;
	MPI_OK(MPI_Initialized(&flag));
	CHECK_INT(flag, 0, "Initialized before Init");
	MPI_OK(MPI_Finalized(&flag));
	CHECK_INT(flag, 0, "Finalized before Init");
	t_init(&argc, &argv, "env");
	MPI_OK(MPI_Initialized(&flag));
	CHECK_INT(flag, 1, "Initialized after Init");
	MPI_OK(MPI_Finalized(&flag));
	CHECK_INT(flag, 0, "Finalized after Init");

	int prov = -1;
	MPI_OK(MPI_Query_thread(&prov));
	CHECK(prov >= MPI_THREAD_SINGLE && prov <= MPI_THREAD_MULTIPLE, "Query_thread %d", prov);
	MPI_OK(MPI_Is_thread_main(&flag));
	CHECK_INT(flag, 1, "Is_thread_main");

	double t0 = MPI_Wtime(), tick = MPI_Wtick();
	CHECK(tick > 0 && tick < 1, "Wtick %g", tick);
	usleep(20000);
	double t1 = MPI_Wtime();
	CHECK(t1 - t0 >= 0.015 && t1 - t0 < 10, "Wtime advanced %g s over 20 ms sleep", t1 - t0);

	char name[MPI_MAX_PROCESSOR_NAME];
	int len = -1;
	MPI_OK(MPI_Get_processor_name(name, &len));
	CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len,
	    "processor name len %d strlen %zu", len, strlen(name));

	int v = 0, sv = -1;
	MPI_OK(MPI_Get_version(&v, &sv));
	CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "Get_version %d.%d vs header %d.%d",
	    v, sv, MPI_VERSION, MPI_SUBVERSION);
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	MPI_OK(MPI_Get_library_version(lib, &len));
	CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "library version len %d", len);
	MPI_OK(MPI_Pcontrol(1));
	MPI_OK(MPI_Pcontrol(0));

	int *mem = NULL;
	MPI_OK(MPI_Alloc_mem(4096 * sizeof(int), MPI_INFO_NULL, &mem));
	CHECK(mem != NULL, "Alloc_mem gave NULL");
	for (int i = 0; i < 4096; i++)
		mem[i] = i * t_rank;
	long long s = 0;
	for (int i = 0; i < 4096; i++)
		s += mem[i];
	CHECK_INT(s, 4095LL * 4096 / 2 * t_rank, "Alloc_mem memory content");
	MPI_OK(MPI_Free_mem(mem));

	/* size and rank agree across ranks */
	int *ranks = malloc(sizeof(int) * t_size);
	MPI_OK(MPI_Allgather(&t_rank, 1, MPI_INT, ranks, 1, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < t_size; i++)
		CHECK_INT(ranks[i], i, "allgathered rank");
	free(ranks);
	int r = -1, n = -1;
	MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &r));
	MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &n));
	CHECK(r == 0 && n == 1, "COMM_SELF rank %d size %d", r, n);
	t_mix_int(t_rank);

	/* t_finish finalizes; check Finalized afterwards by hand */
	unsigned long long mine = t_sum, *all = malloc(sizeof(*all) * t_size);
	MPI_OK(MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
	MPI_OK(MPI_Finalize());
	MPI_OK(MPI_Finalized(&flag));
	if (flag != 1) {
		fprintf(stderr, "FAIL: env: Finalized after Finalize = %d\n", flag);
		return 1;
	}
	MPI_OK(MPI_Initialized(&flag));
	if (flag != 1) {
		fprintf(stderr, "FAIL: env: Initialized after Finalize = %d\n", flag);
		return 1;
	}
	if (t_rank == 0) {
		t_sum = 1469598103934665603ULL;
		t_mix(all, sizeof(*all) * t_size);
		printf("env ok nranks=%d sum=%016llx\n", t_size, (unsigned long long)t_sum);
	}
	free(all);
	return 0;
}
