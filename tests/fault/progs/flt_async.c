/* flt_async: timing-dependent control flow, timing-independent result.
 *   flt_async [ROUNDS=60] [MSGS=40]
 * Each round every rank Isends MSGS values to every other rank (tag =
 * round). The receiver keeps a window of ANY_SOURCE Irecvs, serviced
 * alternately by Waitany and by polling Testsome; the last messages of the
 * round are taken with an Iprobe loop + Recv; the sends are completed with
 * Test polling then Waitsome. Every rank prints its running digest every
 * ROUNDS/5 rounds (use --tag-output). */
#include "flt.h"

enum { WIN = 5, TAIL = 3 };

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 60), msgs = flt_arg(argc, argv, 2, 40);
	int peers = np - 1;
	long per_round = msgs * peers;
	MPI_Request *sq = malloc(sizeof(MPI_Request) * (size_t)(per_round + 1));
	int64_t *sv = malloc(sizeof(int64_t) * (size_t)(per_round + 1));
	unsigned char *seen = malloc((size_t)np * (size_t)msgs + 1);
	int64_t acc = 0;
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	for (long r = 1; r <= rounds; r++) {
		int tag = (int)r;
		long ns = 0;
		for (long m = 0; m < msgs; m++)
			for (int k = 1; k <= peers; k++) {
				sv[ns] = ((int64_t)me << 32) | (int64_t)m;
				FLT_MPI(MPI_Isend(&sv[ns], 1, MPI_INT64_T, (me + k) % np, tag, MPI_COMM_WORLD, &sq[ns]));
				ns++;
			}
		memset(seen, 0, (size_t)np * (size_t)msgs + 1);
		long windowed = per_round > TAIL ? per_round - TAIL : 0, posted = 0, got = 0;
		MPI_Request rq[WIN];
		int64_t rb[WIN];
		for (int i = 0; i < WIN; i++) {
			rq[i] = MPI_REQUEST_NULL;
			if (posted < windowed) {
				FLT_MPI(MPI_Irecv(&rb[i], 1, MPI_INT64_T, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rq[i]));
				posted++;
			}
		}
		int turn = 0;
		while (got < windowed) {
			int idx[WIN], n = 0;
			MPI_Status st[WIN];
			if (turn++ % 2 == 0) {
				FLT_MPI(MPI_Waitany(WIN, rq, &idx[0], &st[0]));
				FLT_ASSERT(idx[0] != MPI_UNDEFINED, "Waitany: nothing active");
				n = 1;
			} else {
				FLT_MPI(MPI_Testsome(WIN, rq, &n, idx, st));
				FLT_ASSERT(n != MPI_UNDEFINED, "Testsome: nothing active");
			}
			for (int k = 0; k < n; k++) {
				int i = idx[k];
				int src = (int)(rb[i] >> 32);
				long m = (long)(rb[i] & 0xffffffff);
				FLT_ASSERT(src == st[k].MPI_SOURCE && src != me && m < msgs && !seen[src * msgs + m],
				    "round %ld: bad or repeated message %d/%ld", r, src, m);
				seen[src * msgs + m] = 1;
				acc += rb[i] % 1000003;
				got++;
				if (posted < windowed) {
					FLT_MPI(MPI_Irecv(&rb[i], 1, MPI_INT64_T, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rq[i]));
					posted++;
				}
			}
		}
		while (got < per_round) {
			int flag = 0;
			MPI_Status st;
			FLT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st));
			if (!flag)
				continue;
			int64_t v;
			FLT_MPI(MPI_Recv(&v, 1, MPI_INT64_T, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			int src = (int)(v >> 32);
			long m = (long)(v & 0xffffffff);
			FLT_ASSERT(src == st.MPI_SOURCE && m < msgs && !seen[src * msgs + m],
			    "round %ld: bad or repeated probed message %d/%ld", r, src, m);
			seen[src * msgs + m] = 1;
			acc += v % 1000003;
			got++;
		}
		/* sends: a few Test polls, then Waitsome until all done */
		long left = ns;
		for (long i = 0; i < ns && i < 8; i++) {
			int flag = 0;
			FLT_MPI(MPI_Test(&sq[i], &flag, MPI_STATUS_IGNORE));
			if (flag)
				left--;
		}
		int *idx = malloc(sizeof(int) * (size_t)(ns + 1));
		while (left > 0) {
			int n = 0;
			FLT_MPI(MPI_Waitsome((int)ns, sq, &n, idx, MPI_STATUSES_IGNORE));
			FLT_ASSERT(n != MPI_UNDEFINED && n >= 1, "Waitsome gave %d with %ld left", n, left);
			left -= n;
		}
		free(idx);
		if (r % every == 0)
			FLT_SAY("async: rank %d round %ld acc %lld\n", me, r, (long long)acc);
	}
	int64_t total;
	FLT_MPI(MPI_Allreduce(&acc, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
	if (me == 0)
		FLT_SAY("async: done %ld rounds, total %lld\n", rounds, (long long)total);
	FLT_MPI(MPI_Finalize());
	return 0;
}
