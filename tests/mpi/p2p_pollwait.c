/* p2p_pollwait: ranks that wait by polling. Each round every rank posts
 * Irecvs from its two ring neighbours, sends to them, and waits for the
 * receives with a loop of MPI_Testany (odd rounds) or MPI_Testsome (even
 * rounds), for its sends with MPI_Test / MPI_Testall loops, then sends a
 * side message to its right neighbour and waits for the one from its left
 * with an MPI_Iprobe loop before receiving it. Most polls find nothing:
 * the program is fast only if such fruitless polls leave the CPU to the
 * processes that move the messages. Every payload, status and probe is
 * checked.
 *
 *   p2p_pollwait [ROUNDS [v [DELAY_US]]]
 *       default 300 rounds; v: one timing line per rank on stderr
 *       (seconds, polls); DELAY_US: rank 0 sleeps that long before its
 *       side message every round, so rank 1 probes at least that long
 */
#include "mpitest.h"
#include <time.h>

enum { TAG_R = 1, TAG_L = 2, TAG_SIDE = 3 };

static long long polls;		/* calls that found nothing */

static int val(int src, int dir, int round) { return src * 1000003 + dir * 7919 + round; }

/* Polls until both receives completed; returns their values in got[]. */
static void wait_recvs(MPI_Request rq[2], const int in[2], int round,
    int left, int right, double t0)
{
	int done = 0;

	while (done < 2) {
		MPI_Status st[2];
		int idx[2], n = 0, flag = 0;

		if (round % 2) {
			MPI_OK(MPI_Testany(2, rq, &idx[0], &flag, &st[0]));
			if (flag) {
				CHECK(idx[0] != MPI_UNDEFINED, "Testany flag without index");
				n = 1;
			}
		} else {
			MPI_OK(MPI_Testsome(2, rq, &n, idx, st));
			CHECK(n != MPI_UNDEFINED, "Testsome found no active request");
		}
		if (n == 0)
			polls++;
		for (int k = 0; k < n; k++) {
			int i = idx[k], src = i == 0 ? left : right;
			int tag = i == 0 ? TAG_R : TAG_L, cnt;

			CHECK(rq[i] == MPI_REQUEST_NULL, "completed request %d not freed", i);
			CHECK_INT(st[k].MPI_SOURCE, src, "receive source");
			CHECK_INT(st[k].MPI_TAG, tag, "receive tag");
			MPI_OK(MPI_Get_count(&st[k], MPI_INT, &cnt));
			CHECK_INT(cnt, 1, "receive count");
			CHECK_INT(in[i], val(src, tag, round), "received value");
			done++;
		}
		CHECK(MPI_Wtime() - t0 < 50, "round %d: receives stuck (%d of 2)", round, done);
	}
}

static void wait_sends(MPI_Request sq[2], int round, double t0)
{
	int flag = 0;

	while (!flag) {
		if (round % 2) {
			MPI_OK(MPI_Test(&sq[0], &flag, MPI_STATUS_IGNORE));
			if (flag)
				MPI_OK(MPI_Test(&sq[1], &flag, MPI_STATUS_IGNORE));
		} else {
			MPI_OK(MPI_Testall(2, sq, &flag, MPI_STATUSES_IGNORE));
		}
		if (!flag)
			polls++;
		CHECK(MPI_Wtime() - t0 < 50, "round %d: sends stuck", round);
	}
	CHECK(sq[0] == MPI_REQUEST_NULL && sq[1] == MPI_REQUEST_NULL,
	    "round %d: completed sends not freed", round);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_pollwait");
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	int verbose = argc > 2 && argv[2][0] == 'v';
	long delay_us = argc > 3 ? atol(argv[3]) : 0;
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	long long sum = 0;
	double t0 = MPI_Wtime(), tr;

	CHECK(rounds > 0, "rounds %d", rounds);
	for (int r = 0; r < rounds; r++) {
		MPI_Request rq[2], sq[2];
		int in[2] = { -1, -1 }, out[2], side, flag = 0, cnt;
		MPI_Status st;

		tr = MPI_Wtime();
		/* in[0] comes from the left going right, in[1] from the right */
		MPI_OK(MPI_Irecv(&in[0], 1, MPI_INT, left, TAG_R, MPI_COMM_WORLD, &rq[0]));
		MPI_OK(MPI_Irecv(&in[1], 1, MPI_INT, right, TAG_L, MPI_COMM_WORLD, &rq[1]));
		out[0] = val(t_rank, TAG_R, r);
		out[1] = val(t_rank, TAG_L, r);
		MPI_OK(MPI_Isend(&out[0], 1, MPI_INT, right, TAG_R, MPI_COMM_WORLD, &sq[0]));
		MPI_OK(MPI_Isend(&out[1], 1, MPI_INT, left, TAG_L, MPI_COMM_WORLD, &sq[1]));
		wait_recvs(rq, in, r, left, right, tr);
		wait_sends(sq, r, tr);
		sum += in[0] + in[1];

		/* the side message: sent once the exchange is over, so the
		   right neighbour usually probes before it comes */
		side = val(t_rank, TAG_SIDE, r);
		if (t_rank == 0 && delay_us > 0) {
			struct timespec ts = { delay_us / 1000000,
			    delay_us % 1000000 * 1000 };

			while (nanosleep(&ts, &ts) == -1)
				;
		}
		MPI_OK(MPI_Send(&side, 1, MPI_INT, right, TAG_SIDE, MPI_COMM_WORLD));
		for (;;) {
			MPI_OK(MPI_Iprobe(r % 3 ? left : MPI_ANY_SOURCE, TAG_SIDE,
			    MPI_COMM_WORLD, &flag, &st));
			if (flag)
				break;
			polls++;
			CHECK(MPI_Wtime() - tr < 50, "round %d: side message stuck", r);
		}
		CHECK_INT(st.MPI_SOURCE, left, "probed source");
		CHECK_INT(st.MPI_TAG, TAG_SIDE, "probed tag");
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK_INT(cnt, 1, "probed count");
		side = -1;
		MPI_OK(MPI_Recv(&side, 1, MPI_INT, left, TAG_SIDE, MPI_COMM_WORLD, &st));
		CHECK_INT(side, val(left, TAG_SIDE, r), "side value");
		sum += side;
	}
	if (verbose)
		fprintf(stderr, "p2p_pollwait rank %d: %d rounds in %.3f s, "
		    "%lld fruitless polls\n", t_rank, rounds, MPI_Wtime() - t0,
		    polls);
	long long want = 0;
	for (int r = 0; r < rounds; r++)
		want += val(left, TAG_R, r) + val(right, TAG_L, r) +
		    val(left, TAG_SIDE, r);
	CHECK(sum == want, "sum %lld want %lld", sum, want);
	t_mix_int(sum);
	t_mix_int(rounds);
	return t_finish();
}
