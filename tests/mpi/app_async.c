/* app_async: an event-driven program whose control flow depends on
 * timing (Waitany / Testsome / Iprobe), but whose result does not. Each
 * rank sends MSGS numbered values to every other rank in bursts; the
 * receiver keeps a window of Irecvs (ANY_SOURCE) serviced by Waitany or
 * Testsome, and drains the tail with Iprobe + Recv. Every rank checks it
 * got every message exactly once. (Completion order across window slots
 * need not follow matching order, so order is not checked here; see
 * p2p_order.) */
#include "mpitest.h"

enum { MSGS = 40, WIN = 4, TAG = 9 };

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "app_async");
	int peers = t_size - 1;
	int expect = MSGS * peers;
	int *next = calloc(t_size, sizeof(int));
	unsigned char *seen = calloc((size_t)t_size * MSGS, 1);
	long long sum = 0;
	int got = 0;

	/* sends: nonblocking in bursts, all outstanding until the end */
	MPI_Request *sq = malloc(sizeof(MPI_Request) * (MSGS * peers + 1));
	int (*sb)[2] = malloc(sizeof(int[2]) * (MSGS * peers + 1));
	int ns = 0;
	for (int m = 0; m < MSGS; m++)
		for (int k = 1; k <= peers; k++) {
			int dst = (t_rank + k) % t_size;
			sb[ns][0] = t_rank;
			sb[ns][1] = m;
			MPI_OK(MPI_Isend(sb[ns], 2, MPI_INT, dst, TAG, MPI_COMM_WORLD, &sq[ns]));
			ns++;
		}

	/* receive window */
	MPI_Request rq[WIN];
	int rb[WIN][2];
	int posted = 0;
	for (int i = 0; i < WIN; i++) {
		rq[i] = MPI_REQUEST_NULL;
		if (posted < expect - WIN) {	/* leave WIN messages for Iprobe */
			MPI_OK(MPI_Irecv(rb[i], 2, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &rq[i]));
			posted++;
		}
	}
	double t0 = MPI_Wtime();
	int use_any = 1;
	while (got < posted) {
		int idx[WIN], n = 0;
		MPI_Status st[WIN];
		if (use_any) {
			MPI_OK(MPI_Waitany(WIN, rq, &idx[0], &st[0]));
			CHECK(idx[0] != MPI_UNDEFINED, "Waitany found no active request");
			n = 1;
		} else {
			MPI_OK(MPI_Testsome(WIN, rq, &n, idx, st));
			CHECK(n != MPI_UNDEFINED, "Testsome found no active request");
		}
		use_any = !use_any;
		for (int k = 0; k < n; k++) {
			int i = idx[k], src = rb[i][0], m = rb[i][1];
			CHECK_INT(st[k].MPI_SOURCE, src, "status source vs payload");
			CHECK(src >= 0 && src < t_size && m >= 0 && m < MSGS && !seen[src * MSGS + m],
			    "message (%d,%d) unexpected or duplicated", src, m);
			seen[src * MSGS + m] = 1;
			next[src]++;
			sum += src * 1000 + m;
			got++;
			if (posted < expect - WIN) {
				MPI_OK(MPI_Irecv(rb[i], 2, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &rq[i]));
				posted++;
			}
		}
		CHECK(MPI_Wtime() - t0 < 50, "window loop stuck: got %d of %d", got, posted);
	}
	/* tail: Iprobe-driven */
	while (got < expect) {
		int flag = 0;
		MPI_Status st;
		MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st));
		if (flag) {
			int v[2], cnt;
			MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
			CHECK_INT(cnt, 2, "probed count");
			MPI_OK(MPI_Recv(v, 2, MPI_INT, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK_INT(v[0], st.MPI_SOURCE, "probed source vs payload");
			CHECK(v[1] >= 0 && v[1] < MSGS && !seen[v[0] * MSGS + v[1]],
			    "probed message (%d,%d) unexpected or duplicated", v[0], v[1]);
			seen[v[0] * MSGS + v[1]] = 1;
			next[v[0]]++;
			sum += v[0] * 1000 + v[1];
			got++;
		}
		CHECK(MPI_Wtime() - t0 < 50, "probe loop stuck: got %d of %d", got, expect);
	}
	/* wait for our sends with Testsome/Waitsome */
	int left = ns;
	while (left > 0) {
		int n, *idx = malloc(sizeof(int) * (ns + 1));
		MPI_OK(MPI_Waitsome(ns, sq, &n, idx, MPI_STATUSES_IGNORE));
		CHECK(n >= 1, "Waitsome on sends gave %d", n);
		left -= n;
		free(idx);
	}
	for (int s = 0; s < t_size; s++)
		CHECK_INT(next[s], s == t_rank ? 0 : MSGS, "messages from each sender");
	long long want = 0;
	for (int s = 0; s < t_size; s++)
		if (s != t_rank)
			for (int m = 0; m < MSGS; m++)
				want += s * 1000 + m;
	CHECK(sum == want, "sum %lld want %lld", sum, want);
	t_mix_int(sum);
	free(next); free(seen); free(sq); free(sb);
	return t_finish();
}
