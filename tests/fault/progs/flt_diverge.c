/* flt_diverge: deliberately NOT deterministic, for divergence detection.
 *   flt_diverge [ROUNDS=150] [DELAY_US=10000]
 * Rank 0 receives one message from every worker each round, but the
 * worker it asks first (a specific source) is chosen from the clock and
 * the pid, so a re-execution asks the Channel Memory for something other
 * than what the log holds. Rank 0 prints, per round, the chosen first
 * source and the value it got, which must be SRC*100000+ROUND: under
 * replay, output is either complete and self-consistent, or the job
 * fails with a "replay diverged" message; anything else is silent
 * corruption. */
#include "flt.h"
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 150), delay = flt_arg(argc, argv, 2, 10000);
	FLT_ASSERT(np >= 3, "needs 3 ranks or more");
	for (long r = 1; r <= rounds; r++) {
		if (me == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int first = 1 + (int)(((unsigned long)ts.tv_nsec / 1000 + (unsigned long)getpid()) % (unsigned long)(np - 1));
			long v;
			FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, first, (int)r, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			FLT_SAY("diverge: round %ld first %d value %ld\n", r, first, v);
			for (int q = 1; q < np; q++) {
				if (q == first)
					continue;
				long w;
				FLT_MPI(MPI_Recv(&w, 1, MPI_LONG, q, (int)r, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				FLT_ASSERT(w == q * 100000L + r, "round %ld from %d: %ld", r, q, w);
			}
			usleep((useconds_t)delay);
		} else {
			long v = me * 100000L + r;
			FLT_MPI(MPI_Send(&v, 1, MPI_LONG, 0, (int)r, MPI_COMM_WORLD));
		}
	}
	if (me == 0)
		FLT_SAY("diverge: done %ld rounds\n", rounds);
	FLT_MPI(MPI_Finalize());
	return 0;
}
