/* flt_mw: master-worker driven by ANY_SOURCE receives at the master.
 *   flt_mw [NTASKS=2000] [WORK=20000]
 * Which worker does which task depends on timing; what rank 0 prints
 * (progress counts, the combined result) does not. */
#include "flt.h"

enum { REQ = 11, TASK = 12, STOP = 13 };

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long ntasks = flt_arg(argc, argv, 1, 2000), work = flt_arg(argc, argv, 2, 20000);
	if (me == 0) {
		uint64_t *res = calloc((size_t)ntasks, sizeof *res);
		char *have = calloc((size_t)ntasks, 1);
		long handed = 0, got = 0;
		int stopped = 0;
		if (np == 1)
			for (; got < ntasks; got++)
				res[got] = flt_burn((uint64_t)got, work), have[got] = 1;
		while (stopped < np - 1) {
			uint64_t in[2];	/* task+1 (0: none yet), result */
			MPI_Status st;
			FLT_MPI(MPI_Recv(in, 2, MPI_UINT64_T, MPI_ANY_SOURCE, REQ, MPI_COMM_WORLD, &st));
			if (in[0] > 0) {
				long t = (long)in[0] - 1;
				FLT_ASSERT(t < ntasks && !have[t], "task %ld twice or out of range", t);
				have[t] = 1;
				res[t] = in[1];
				got++;
				if (got % (ntasks / 8 > 0 ? ntasks / 8 : 1) == 0)
					FLT_SAY("mw: %ld of %ld results in\n", got, ntasks);
			}
			if (handed < ntasks) {
				uint64_t t = (uint64_t)handed++;
				FLT_MPI(MPI_Send(&t, 1, MPI_UINT64_T, st.MPI_SOURCE, TASK, MPI_COMM_WORLD));
			} else {
				FLT_MPI(MPI_Send(NULL, 0, MPI_UINT64_T, st.MPI_SOURCE, STOP, MPI_COMM_WORLD));
				stopped++;
			}
		}
		uint64_t h = 0;
		for (long t = 0; t < ntasks; t++) {
			FLT_ASSERT(have[t] && res[t] == flt_burn((uint64_t)t, work), "task %ld result", t);
			h = flt_mix(h, res[t]);
		}
		FLT_SAY("mw: done %ld tasks, digest %016llx\n", ntasks, (unsigned long long)h);
	} else {
		uint64_t out[2] = { 0, 0 };
		for (;;) {
			FLT_MPI(MPI_Send(out, 2, MPI_UINT64_T, 0, REQ, MPI_COMM_WORLD));
			uint64_t t;
			MPI_Status st;
			FLT_MPI(MPI_Recv(&t, 1, MPI_UINT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
			if (st.MPI_TAG == STOP)
				break;
			FLT_ASSERT(st.MPI_TAG == TASK, "tag %d", st.MPI_TAG);
			out[0] = t + 1;
			out[1] = flt_burn(t, work);
		}
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
