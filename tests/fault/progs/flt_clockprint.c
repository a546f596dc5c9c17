/* flt_clockprint: prints the time (NOT deterministic across
 * incarnations) and nothing else that differs; its messages do not
 * depend on it.
 *   flt_clockprint [ROUNDS=200] [DELAY_US=10000]
 * Rank 0 prints "clock N" first (nanoseconds of CLOCK_REALTIME), then
 * ping-pongs ROUNDS times with rank 1 and prints "done". A killed rank 0
 * re-executes and prints another time: the dispatcher must say that its
 * output differs from what it printed before (the messages match, so
 * the job itself completes). */
#include "flt.h"
#include <time.h>

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 200), delay = flt_arg(argc, argv, 2, 10000);
	long v = 0;
	FLT_ASSERT(np == 2, "needs 2 ranks");
	if (me == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		FLT_SAY("clock %lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	}
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
