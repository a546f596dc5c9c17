/* rma_pscw: general active-target synchronization (post/start/complete/
 * wait) with groups. Each round, every rank exposes its window to its two
 * ring neighbours and accesses theirs: puts into the right one, gets from
 * the left one (symmetric: every rank is origin and target at once, reads
 * included). Then the even ranks expose to the odd ranks only, which
 * accumulate into them; the even ranks poll with MPI_Win_test. A rank in
 * its own groups (a 1-rank job) works too. Last, rank 0 exposes to all
 * and accesses itself, and the others start only after a message rank 0
 * sends between its complete and its wait. */
#include "mpitest.h"

#define N 6
#define ROUNDS 10

static MPI_Group make_group(MPI_Group world, int n, const int *ranks)
{
	MPI_Group g;
	MPI_OK(MPI_Group_incl(world, n, ranks, &g));
	return g;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_pscw");
	int *buf;
	MPI_Win win;
	MPI_OK(MPI_Win_allocate(3 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win));
	for (int i = 0; i < 3 * N; i++)
		CHECK_INT(buf[i] & 0, 0, "touch");
	memset(buf, 0, 3 * N * sizeof(int));
	MPI_Group world, nb, evens, odds;
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int pair[2] = { left < right ? left : right, left < right ? right : left };
	nb = make_group(world, left == right ? 1 : 2, pair);
	int ev[64], od[64], nev = 0, nod = 0;
	for (int r = 0; r < t_size && r < 128; r++) {
		if (r % 2 == 0)
			ev[nev++] = r;
		else
			od[nod++] = r;
	}
	evens = make_group(world, nev, ev);
	odds = nod > 0 ? make_group(world, nod, od) : MPI_GROUP_EMPTY;

	for (int k = 0; k < ROUNDS; k++) {
		int mine[N], got[N];
		for (int i = 0; i < N; i++)
			mine[i] = 100 * k + 10 * t_rank + i;
		buf[N] = 5 * k + t_rank;	/* section 1: read by the right neighbour */
		MPI_OK(MPI_Win_post(nb, 0, win));
		MPI_OK(MPI_Win_start(nb, 0, win));
		MPI_OK(MPI_Put(mine, N, MPI_INT, right, 0, N, MPI_INT, win));
		MPI_OK(MPI_Get(got, 1, MPI_INT, left, N, 1, MPI_INT, win));
		MPI_OK(MPI_Win_complete(win));
		CHECK_INT(got[0], 5 * k + left, "get from the left in PSCW");
		MPI_OK(MPI_Win_wait(win));
		for (int i = 0; i < N; i++)
			CHECK_INT(buf[i], 100 * k + 10 * left + i, "put from the left in PSCW");
		t_mix(buf, N * sizeof(int));
		t_mix(got, sizeof(int));

		/* odd ranks accumulate into every even rank's section 2 */
		if (t_rank % 2 == 0) {
			memset(buf + 2 * N, 0, N * sizeof(int));
			if (nod > 0) {
				MPI_OK(MPI_Win_post(odds, MPI_MODE_NOPUT * 0, win));
				int flag = 0, polls = 0;
				while (!flag) {
					MPI_OK(MPI_Win_test(win, &flag));
					polls++;
				}
				CHECK(polls >= 1, "Win_test polled");
			}
			for (int i = 0; i < N; i++) {
				int s = 0;
				for (int r = 1; r < t_size; r += 2)
					s += (100 * k + 10 * r + i) * (t_rank + 1);
				CHECK_INT(buf[2 * N + i], s, "sum of the odd ranks' accumulates");
			}
			t_mix(buf + 2 * N, N * sizeof(int));
		} else {
			MPI_OK(MPI_Win_start(evens, 0, win));
			for (int j = 0; j < nev; j++) {
				int v[N];
				for (int i = 0; i < N; i++)
					v[i] = mine[i] * (ev[j] + 1);
				MPI_OK(MPI_Accumulate(v, N, MPI_INT, ev[j], 2 * N, N, MPI_INT, MPI_SUM, win));
			}
			MPI_OK(MPI_Win_complete(win));
		}
	}
	/* rank 0 exposes to every rank, itself included, and accesses only
	   itself; its complete must not wait for the others, which start
	   their access epoch only after a message it sends between its
	   complete and its wait */
	MPI_Group zero;
	int z = 0, token = 0;
	MPI_OK(MPI_Group_incl(world, 1, &z, &zero));
	if (t_rank == 0) {
		int v = 1000;
		MPI_OK(MPI_Win_post(world, 0, win));
		MPI_OK(MPI_Win_start(zero, 0, win));
		MPI_OK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
		MPI_OK(MPI_Win_complete(win));
		CHECK_INT(buf[0], 1000, "own put visible after complete");
		for (int r = 1; r < t_size; r++)
			MPI_OK(MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD));
		MPI_OK(MPI_Win_wait(win));
		CHECK_INT(buf[0], 1000 + t_size * (t_size - 1) / 2, "accumulates after the token");
		t_mix(buf, sizeof(int));
	} else {
		MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPI_Win_start(zero, 0, win));
		MPI_OK(MPI_Accumulate(&t_rank, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
		MPI_OK(MPI_Win_complete(win));
	}
	MPI_OK(MPI_Group_free(&zero));
	MPI_OK(MPI_Group_free(&nb));
	MPI_OK(MPI_Group_free(&evens));
	if (nod > 0)
		MPI_OK(MPI_Group_free(&odds));
	MPI_OK(MPI_Group_free(&world));
	MPI_OK(MPI_Win_free(&win));
	return t_finish();
}
