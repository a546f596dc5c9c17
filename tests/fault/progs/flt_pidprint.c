/* flt_pidprint: prints its pid (NOT deterministic across incarnations)
 * and nothing else that differs; its messages do not depend on the pid.
 *   flt_pidprint [ROUNDS=200] [DELAY_US=10000]
 * Rank 0 prints "pid N" first, then ping-pongs ROUNDS times with rank 1
 * and prints "done". A killed rank 0 re-executes and prints another pid:
 * the dispatcher must say that its output differs from what it printed
 * before (the messages match, so the job itself completes). */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 200), delay = flt_arg(argc, argv, 2, 10000);
	long v = 0;
	FLT_ASSERT(np == 2, "needs 2 ranks");
	if (me == 0)
		FLT_SAY("pid %ld\n", (long)getpid());
	for (long i = 0; i < rounds; i++) {
		if (me == 0) {
			FLT_MPI(MPI_Send(&i, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD));
			FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		} else {
			FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			FLT_MPI(MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD));
		}
		usleep((useconds_t)delay);
	}
	if (me == 0)
		FLT_SAY("done %ld\n", v);
	FLT_MPI(MPI_Finalize());
	return 0;
}
