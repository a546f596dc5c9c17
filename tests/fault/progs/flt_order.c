/* flt_order: MPI non-overtaking under fault injection.
 *   flt_order [ROUNDS=150] [K=24]
 * Each round every rank sends K messages (tags cycling 0..3, payload =
 * round, sequence) to every other rank; receivers take them by source +
 * ANY_TAG, by ANY_SOURCE + ANY_TAG, or tag 3 first then the rest, and
 * check the order per sender (and per tag); a Barrier ends each round. Rank 0 prints a digest every
 * ROUNDS/5 rounds. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 150), k = flt_arg(argc, argv, 2, 24);
	long *last = malloc(sizeof(long) * (size_t)np * 4);
	uint64_t h = 0;
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	for (long r = 1; r <= rounds; r++) {
		for (int d = 1; d < np; d++) {
			int dst = (me + d) % np;
			for (long i = 0; i < k; i++) {
				long msg[2] = { r, i };
				FLT_MPI(MPI_Send(msg, 2, MPI_LONG, dst, (int)(i % 4), MPI_COMM_WORLD));
			}
		}
		for (int i = 0; i < np * 4; i++)
			last[i] = -1;
		long want = k * (np - 1);
		int mode = (int)(r % 3);
		for (long got = 0; got < want; got++) {
			long msg[2];
			MPI_Status st;
			int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
			if (mode == 0) {
				src = (me + 1 + (int)(got / k)) % np;
			} else if (mode == 2) {
				/* all tag-3 messages of one source first */
				long per3 = k / 4 + (k % 4 > 3);
				long g = got % k;
				src = (me + 1 + (int)(got / k)) % np;
				if (g < per3)
					tag = 3;
			}
			FLT_MPI(MPI_Recv(msg, 2, MPI_LONG, src, tag, MPI_COMM_WORLD, &st));
			FLT_ASSERT(msg[0] == r, "round %ld got a message of round %ld", r, msg[0]);
			FLT_ASSERT(msg[1] % 4 == st.MPI_TAG, "tag %d for seq %ld", st.MPI_TAG, msg[1]);
			long *l = mode == 2 ? &last[st.MPI_SOURCE * 4 + st.MPI_TAG] : &last[st.MPI_SOURCE * 4];
			FLT_ASSERT(msg[1] > *l, "round %ld mode %d: from %d seq %ld after %ld (overtaken)",
			    r, mode, st.MPI_SOURCE, msg[1], *l);
			*l = msg[1];
			h += flt_mix((uint64_t)st.MPI_SOURCE, (uint64_t)(r * 100000 + msg[1]));
		}
		/* nobody starts the next round's sends before everyone has
		   received this round's (ANY_TAG would match them) */
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
		if (r % every == 0) {
			uint64_t x = h, all = 0;
			/* order-independent combination of every rank's digest */
			FLT_MPI(MPI_Reduce(&x, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD));
			if (me == 0)
				FLT_SAY("order: round %ld digest %016llx\n", r, (unsigned long long)all);
		}
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
