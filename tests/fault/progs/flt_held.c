/*
 * flt_held.c: a wildcard receive posted while a re-executed rank replays
 * its logged calls, whose message is already there when the replay ends
 * (test_kill_points.sh, case post-held-wildcard, MPIV_FAULT=post:4:1).
 *
 * Rank 1 posts W = Irecv(MPI_ANY_SOURCE, tag 7), waits for A (tag 5)
 * from rank 0, posts B (tag 9), sleeps, asks MPI_Request_get_status of
 * B exactly three times (three logged outcomes), waits for B, sends
 * "go" to rank 0 and posts its 4th receive, where the case kills it:
 * rank 0 answers "go" with the tag-7 message W wants, which the first
 * incarnation never reads, so W's match is not logged.
 *
 * The second incarnation replays the three outcomes. W, posted while
 * they are still to come and with no logged match, is held (it may not
 * take a message a later logged match claims). Its wait for A brings
 * the link up, and rank 0 resends A, B and the tag-7 message from its
 * log; all of them are read before the third outcome is replayed, and
 * nothing else comes while rank 1 waits for W (rank 0 is in the
 * barrier): the library must free W by itself once the replay is over,
 * or rank 1 sleeps in MPI_Wait for good. It did before the progress
 * loop checked for that (a hang seen once in CI; this program hangs
 * every time on such a library).
 *
 *   flt_held [sleep_ms]        (default 300)
 *
 * Output (rank 1): "held: got 42 after 5 and 9" and "done".
 */
#include "flt.h"

int main(int argc, char **argv)
{
	long ms = 300;
	int a = 0, b = 0, v = 0, z = 0, go = 1, flag;
	MPI_Request w, ra, rb, rz;

	flt_init(&argc, &argv);
	if (argc > 1)
		ms = flt_arg(argc, argv, 1, 300);
	FLT_ASSERT(np == 2, "needs 2 ranks, got %d", np);
	if (me == 0) {
		int five = 5, nine = 9, ft = 42;

		FLT_MPI(MPI_Send(&five, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
		FLT_MPI(MPI_Send(&nine, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
		FLT_MPI(MPI_Recv(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD,
		    MPI_STATUS_IGNORE));
		FLT_MPI(MPI_Send(&ft, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
	} else {
		FLT_MPI(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7,
		    MPI_COMM_WORLD, &w));
		/* a re-execution's links come up here, and the resent
		   frames arrive: W's among them, held */
		FLT_MPI(MPI_Irecv(&a, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &ra));
		FLT_MPI(MPI_Wait(&ra, MPI_STATUS_IGNORE));
		FLT_MPI(MPI_Irecv(&b, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &rb));
		usleep((useconds_t)ms * 1000);
		for (int i = 0; i < 3; i++)
			FLT_MPI(MPI_Request_get_status(rb, &flag,
			    MPI_STATUS_IGNORE));
		FLT_MPI(MPI_Wait(&rb, MPI_STATUS_IGNORE));
		FLT_MPI(MPI_Send(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
		/* the 4th post: where the case kills the first run */
		FLT_MPI(MPI_Irecv(&z, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &rz));
		FLT_MPI(MPI_Wait(&w, MPI_STATUS_IGNORE));
		FLT_ASSERT(v == 42 && a == 5 && b == 9, "v=%d a=%d b=%d", v,
		    a, b);
		printf("held: got %d after %d and %d\n", v, a, b);
	}
	FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (me == 0) {
		int eleven = 11;

		FLT_MPI(MPI_Send(&eleven, 1, MPI_INT, 1, 11, MPI_COMM_WORLD));
	} else {
		FLT_MPI(MPI_Wait(&rz, MPI_STATUS_IGNORE));
		FLT_ASSERT(z == 11, "z=%d", z);
	}
	FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (me == 1)
		printf("done\n");
	FLT_MPI(MPI_Finalize());
	return 0;
}
