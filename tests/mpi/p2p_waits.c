/* p2p_waits: Wait/Waitall/Waitany/Waitsome/Test/Testall/Testany/Testsome,
 * including arrays with MPI_REQUEST_NULL entries, all-null arrays
 * (MPI_UNDEFINED), count 0, empty statuses, STATUS(ES)_IGNORE. */
#include "mpitest.h"

enum { N = 6 };

static void check_empty(const MPI_Status *st, const char *what)
{
	int cnt = -1;
	CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
	    "%s: empty status source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
	MPI_OK(MPI_Get_count(st, MPI_INT, &cnt));
	CHECK_INT(cnt, 0, what);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_waits");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	MPI_Request rq[N], sq[N];
	MPI_Status sts[N], st;
	int in[N], out[N], idx, flag, outc, ind[N];

	/* 1. null-only arrays */
	for (int i = 0; i < N; i++)
		rq[i] = MPI_REQUEST_NULL;
	MPI_OK(MPI_Waitany(N, rq, &idx, &st));
	CHECK_INT(idx, MPI_UNDEFINED, "Waitany on all-null");
	check_empty(&st, "Waitany all-null status");
	MPI_OK(MPI_Testany(N, rq, &idx, &flag, &st));
	CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany all-null flag %d idx %d", flag, idx);
	MPI_OK(MPI_Waitsome(N, rq, &outc, ind, sts));
	CHECK_INT(outc, MPI_UNDEFINED, "Waitsome on all-null");
	MPI_OK(MPI_Testsome(N, rq, &outc, ind, sts));
	CHECK_INT(outc, MPI_UNDEFINED, "Testsome on all-null");
	MPI_OK(MPI_Waitall(N, rq, sts));
	MPI_OK(MPI_Testall(N, rq, &flag, sts));
	CHECK_INT(flag, 1, "Testall all-null");
	MPI_OK(MPI_Wait(&rq[0], &st));
	check_empty(&st, "Wait(REQUEST_NULL) status");
	MPI_OK(MPI_Test(&rq[0], &flag, &st));
	CHECK_INT(flag, 1, "Test(REQUEST_NULL)");
	MPI_OK(MPI_Waitall(0, rq, MPI_STATUSES_IGNORE));
	MPI_OK(MPI_Waitany(0, rq, &idx, MPI_STATUS_IGNORE));
	CHECK_INT(idx, MPI_UNDEFINED, "Waitany count 0");

	/* 2. Waitany with nulls mixed in: even slots null, odd slots Irecv
	 * tag i. Each completes once; all get visited. */
	for (int round = 0; round < 3; round++) {
		int done[N] = { 0 }, ndone = 0;
		for (int i = 0; i < N; i++) {
			rq[i] = sq[i] = MPI_REQUEST_NULL;
			in[i] = -1;
			out[i] = round * 1000 + t_rank * 10 + i;
			if (i % 2)
				MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &rq[i]));
		}
		for (int i = N - 1; i >= 0; i--)
			if (i % 2)
				MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &sq[i]));
		double t0 = MPI_Wtime();
		while (ndone < N / 2) {
			if (round == 0) {
				MPI_OK(MPI_Waitany(N, rq, &idx, &st));
				CHECK(idx >= 0 && idx < N && idx % 2 == 1 && !done[idx], "Waitany index %d", idx);
				CHECK_INT(st.MPI_TAG, idx, "Waitany status tag");
				done[idx] = 1, ndone++;
			} else if (round == 1) {
				MPI_OK(MPI_Testany(N, rq, &idx, &flag, &st));
				if (flag) {
					CHECK(idx >= 0 && idx < N && idx % 2 == 1 && !done[idx], "Testany index %d", idx);
					CHECK_INT(st.MPI_SOURCE, left, "Testany status source");
					done[idx] = 1, ndone++;
				}
			} else {
				MPI_OK(MPI_Testsome(N, rq, &outc, ind, sts));
				CHECK(outc >= 0 && outc <= N / 2, "Testsome outcount %d", outc);
				for (int k = 0; k < outc; k++) {
					CHECK(ind[k] % 2 == 1 && !done[ind[k]], "Testsome index %d", ind[k]);
					CHECK_INT(sts[k].MPI_TAG, ind[k], "Testsome status tag");
					done[ind[k]] = 1, ndone++;
				}
			}
			CHECK(MPI_Wtime() - t0 < 30, "round %d: requests never completed", round);
		}
		for (int i = 0; i < N; i++) {
			CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
			if (i % 2)
				CHECK_INT(in[i], round * 1000 + left * 10 + i, "payload");
		}
		/* after all completed, Waitany gives UNDEFINED again */
		MPI_OK(MPI_Waitany(N, rq, &idx, MPI_STATUS_IGNORE));
		CHECK_INT(idx, MPI_UNDEFINED, "Waitany after completion");
		MPI_OK(MPI_Waitall(N, sq, MPI_STATUSES_IGNORE));
		t_mix(in, sizeof in);
	}

	/* 3. Waitsome until done, with STATUSES_IGNORE */
	{
		int done = 0;
		for (int i = 0; i < N; i++) {
			out[i] = t_rank * 7 + i;
			MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, 50 + i, MPI_COMM_WORLD, &rq[i]));
		}
		for (int i = 0; i < N; i++)
			MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, right, 50 + i, MPI_COMM_WORLD, &sq[i]));
		while (done < N) {
			MPI_OK(MPI_Waitsome(N, rq, &outc, ind, MPI_STATUSES_IGNORE));
			CHECK(outc >= 1 && outc <= N - done, "Waitsome outcount %d", outc);
			done += outc;
		}
		MPI_OK(MPI_Waitsome(N, rq, &outc, ind, MPI_STATUSES_IGNORE));
		CHECK_INT(outc, MPI_UNDEFINED, "Waitsome after all done");
		/* Testall on the sends until true */
		flag = 0;
		double t0 = MPI_Wtime();
		while (!flag) {
			MPI_OK(MPI_Testall(N, sq, &flag, MPI_STATUSES_IGNORE));
			CHECK(MPI_Wtime() - t0 < 30, "Testall never true");
		}
		for (int i = 0; i < N; i++) {
			CHECK_INT(in[i], left * 7 + i, "Waitsome payload");
			CHECK(sq[i] == MPI_REQUEST_NULL, "Testall true left a request");
		}
		t_mix(in, sizeof in);
	}

	/* 4. Testall is all-or-nothing: one receive can't complete yet */
	if (t_size >= 2) {
		MPI_Request two[2];
		int a = -1, b = -1, x = 11;
		MPI_OK(MPI_Irecv(&a, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &two[0]));
		MPI_OK(MPI_Irecv(&b, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &two[1]));
		MPI_OK(MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE));
		CHECK_INT(flag, 0, "Testall with a pending receive");
		CHECK(two[0] != MPI_REQUEST_NULL, "Testall returning false freed a completed request");
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_Send(&x, 1, MPI_INT, right, 77, MPI_COMM_WORLD));
		MPI_OK(MPI_Waitall(2, two, sts));
		CHECK_INT(sts[0].MPI_SOURCE, MPI_PROC_NULL, "Waitall PROC_NULL status");
		CHECK_INT(sts[1].MPI_SOURCE, left, "Waitall status source");
		CHECK_INT(b, 11, "Testall/Waitall payload");
		/* Test on a pending receive then Wait */
		MPI_OK(MPI_Irecv(&b, 1, MPI_INT, left, 78, MPI_COMM_WORLD, &two[0]));
		MPI_OK(MPI_Test(&two[0], &flag, &st));
		CHECK_INT(flag, 0, "Test on a receive whose message is not sent yet");
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		x = 12;
		MPI_OK(MPI_Send(&x, 1, MPI_INT, right, 78, MPI_COMM_WORLD));
		flag = 0;
		double t0 = MPI_Wtime();
		while (!flag) {
			MPI_OK(MPI_Test(&two[0], &flag, &st));
			CHECK(MPI_Wtime() - t0 < 30, "Test never true");
		}
		CHECK(two[0] == MPI_REQUEST_NULL, "Test true did not free the request");
		CHECK_INT(b, 12, "Test payload");
		CHECK_INT(st.MPI_TAG, 78, "Test status tag");
		t_mix_int(b);
	}
	return t_finish();
}
