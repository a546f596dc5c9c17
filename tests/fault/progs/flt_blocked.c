/* flt_blocked: rank 0 waits inside MPI_Recv while rank 1 computes
 * outside MPI for SECS seconds, ROUNDS times.
 *   flt_blocked [ROUNDS=3] [MS=1500]
 * With periodic checkpoints, rank 0 must be checkpointed while it waits
 * (its checkpoints are taken at the safe point of a sleeping Wait, the
 * interval wakes it); rank 1 only at its MPI calls. Rank 0 prints what it
 * received. */
#include "flt.h"
#include <time.h>

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 3), ms = flt_arg(argc, argv, 2, 1500);
	FLT_ASSERT(np == 2, "needs 2 ranks");
	for (long r = 1; r <= rounds; r++) {
		long v;
		if (me == 0) {
			FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			FLT_SAY("blocked: round %ld got %ld\n", r, v);
		} else {
			struct timespec t0, t;
			uint64_t h = (uint64_t)r;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			do {	/* busy outside MPI: no safe point here */
				h = flt_burn(h, 10000);
				clock_gettime(CLOCK_MONOTONIC, &t);
			} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
			v = r * 1000 + (long)(h % 7 == 99);
			FLT_MPI(MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD));
		}
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
