/* flt_early: most ranks finish long before rank 0.
 *   flt_early [STEPS=300] [DELAY_US=10000]
 * Every rank but 0 sends rank 0 one value and finishes. Rank 0 receives
 * them, then works alone for STEPS steps (printing a line every 30), and
 * prints their sum. A job that starts over after losing a CM must run the
 * finished ranks again too: rank 0 needs their messages, which were in the
 * lost logs. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long steps = flt_arg(argc, argv, 1, 300), delay = flt_arg(argc, argv, 2, 10000);
	long v = me * 1000 + 7, sum = 0;
	if (me != 0) {
		FLT_MPI(MPI_Send(&v, 1, MPI_LONG, 0, 5, MPI_COMM_WORLD));
	} else {
		for (int q = 1; q < np; q++) {
			FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, q, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			sum += v;
		}
		uint64_t h = (uint64_t)sum;
		for (long s = 1; s <= steps; s++) {
			h = flt_burn(h, 100);
			usleep((useconds_t)delay);
			if (s % 30 == 0)
				FLT_SAY("early: step %ld state %016llx\n", s, (unsigned long long)h);
		}
		FLT_SAY("early: sum %ld\n", sum);
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
