/* flt_ring: a token travels ROUNDS times around the ring with blocking
 * Send/Recv; each rank folds some work into it.
 *   flt_ring [ROUNDS=1500] [WORK=3000] [AFTER=0]
 * Rank 0 prints the token every ROUNDS/10 rounds (and sleeps a little
 * each round while FLT_HOLD's file exists: flt.h); with AFTER=1 every rank
 * prints one line after MPI_Finalize returned; AFTER=2 also makes rank 1
 * exit with code 3 after it, AFTER=3 makes rank 1 die of SIGSEGV after
 * it; with either, the other ranks print their line 0.3 s later, so a
 * job torn down at rank 1's end would lose them. AFTER=4: as 2, the
 * others 4 s later (the dispatcher says the job waits for them). */
#include <signal.h>

#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 1500), work = flt_arg(argc, argv, 2, 3000);
	int next = (me + 1) % np, prev = (me + np - 1) % np;
	uint64_t tok = 12345;
	long every = rounds / 10 > 0 ? rounds / 10 : 1;
	for (long r = 1; r <= rounds; r++) {
		int tag = (int)(r % 30000);
		if (me == 0) {
			flt_hold();
			tok = flt_mix(tok, (uint64_t)r);
			if (np > 1) {
				FLT_MPI(MPI_Send(&tok, 1, MPI_UINT64_T, next, tag, MPI_COMM_WORLD));
				FLT_MPI(MPI_Recv(&tok, 1, MPI_UINT64_T, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			}
			if (r % every == 0)
				FLT_SAY("ring: round %ld token %016llx\n", r, (unsigned long long)tok);
		} else {
			FLT_MPI(MPI_Recv(&tok, 1, MPI_UINT64_T, prev, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			tok = flt_burn(tok ^ (uint64_t)me, work);
			FLT_MPI(MPI_Send(&tok, 1, MPI_UINT64_T, next, tag, MPI_COMM_WORLD));
		}
	}
	/* serial check at rank 0 */
	if (me == 0) {
		uint64_t w = 12345;
		for (long r = 1; r <= rounds; r++) {
			w = flt_mix(w, (uint64_t)r);
			for (int k = 1; k < np; k++)
				w = flt_burn(w ^ (uint64_t)k, work);
		}
		FLT_ASSERT(w == tok, "token %016llx, serial %016llx", (unsigned long long)tok, (unsigned long long)w);
		FLT_SAY("ring: done %ld rounds\n", rounds);
	}
	FLT_MPI(MPI_Finalize());
	long after = flt_arg(argc, argv, 3, 0);
	if (after >= 2 && me != 1)
		usleep(after == 4 ? 4000 * 1000 : 300 * 1000);
	if (after)
		FLT_SAY("ring: rank %d after MPI_Finalize\n", me);
	if ((after == 2 || after == 4) && me == 1)
		return 3;
	if (after == 3 && me == 1) {
		fflush(stdout);
		raise(SIGSEGV);
	}
	return 0;
}
