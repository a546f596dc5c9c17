/* p2p_mprobe: matched probes and the persistent send modes.
 * Mprobe + Mrecv with ANY_SOURCE from every other rank (each message
 * taken exactly once, a wildcard Irecv posted after the probe never gets
 * the probed message), Improbe polling + Imrecv, Mprobe of a given tag,
 * truncation, MPI_PROC_NULL (MPI_MESSAGE_NO_PROC), and Ssend_init,
 * Bsend_init, Rsend_init started several times with Start/Startall.
 * Calls of one status leave its MPI_ERROR as it was. */
#include "mpitest.h"

#define MSGS 4

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_mprobe");
	int n = t_size, me = t_rank;
	MPI_Comm comm = MPI_COMM_WORLD;
	MPI_Status st;
	MPI_Message msg;
	MPI_Request r;

	/* every rank sends MSGS messages to rank 0 (tag = k) */
	if (me != 0) {
		int v[MSGS][3];
		MPI_Request sq[MSGS];
		for (int k = 0; k < MSGS; k++) {
			v[k][0] = me;
			v[k][1] = k;
			v[k][2] = me * 100 + k;
			MPI_OK(MPI_Isend(v[k], 3, MPI_INT, 0, k, comm, &sq[k]));
		}
		MPI_OK(MPI_Waitall(MSGS, sq, MPI_STATUSES_IGNORE));
	} else if (n > 1) {
		int total = (n - 1) * MSGS, got = 0, dv[3] = { -1, -1, -1 };
		unsigned char seen[64][MSGS];
		long long sum = 0;
		memset(seen, 0, sizeof seen);
		while (got < total) {
			int v[3] = { -1, -1, -1 }, cnt;
			if (got % 2 == 0) {
				MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &msg, &st));
			} else {
				int flag = 0;
				while (!flag)
					MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st));
			}
			CHECK(msg != MPI_MESSAGE_NULL, "matched probe gave no message");
			MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
			CHECK_INT(cnt, 3, "probed count");
			/* a wildcard receive posted now must not take it */
			if (got == 0)
				MPI_OK(MPI_Irecv(dv, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r));
			if (got % 3 == 2) {
				MPI_Request q;
				int cancelled = 1;
				MPI_OK(MPI_Imrecv(v, 3, MPI_INT, &msg, &q));
				CHECK(msg == MPI_MESSAGE_NULL, "Imrecv left the message handle");
				/* the message is matched: a cancel cannot win */
				MPI_OK(MPI_Cancel(&q));
				MPI_OK(MPI_Wait(&q, &st));
				MPI_OK(MPI_Test_cancelled(&st, &cancelled));
				CHECK(!cancelled, "an Imrecv was cancelled");
			} else {
				MPI_OK(MPI_Mrecv(v, 3, MPI_INT, &msg, &st));
				CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left the message handle");
			}
			CHECK_INT(v[0], st.MPI_SOURCE, "message from the probed source");
			CHECK_INT(v[1], st.MPI_TAG, "message with the probed tag");
			if (got == 0) {
				/* the decoy got another message, not this one */
				MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
				CHECK(dv[0] != v[0] || dv[1] != v[1], "the wildcard receive got the probed message");
				CHECK(dv[0] > 0 && dv[0] < n && dv[1] >= 0 && dv[1] < MSGS, "decoy payload");
				seen[dv[0]][dv[1]] = 1;
				sum += dv[2];
				total--;
			}
			CHECK_INT(v[2], v[0] * 100 + v[1], "payload");
			CHECK(v[0] > 0 && v[0] < n && v[0] < 64 && v[1] >= 0 && v[1] < MSGS, "source %d tag %d", v[0], v[1]);
			CHECK(!seen[v[0]][v[1]], "message %d/%d taken twice", v[0], v[1]);
			seen[v[0]][v[1]] = 1;
			sum += v[2];
			got++;
		}
		long long want = 0;
		for (int s = 1; s < n; s++)
			for (int k = 0; k < MSGS; k++)
				want += s * 100 + k;
		CHECK_INT(sum, want, "sum of everything received");
		t_mix_int(sum);
	}

	MPI_OK(MPI_Barrier(comm));

	/* a given tag, then truncation */
	if (n > 1 && me == 1) {
		int big[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, small = 7;
		MPI_OK(MPI_Send(big, 8, MPI_INT, 0, 21, comm));
		MPI_OK(MPI_Send(&small, 1, MPI_INT, 0, 20, comm));
	}
	if (n > 1 && me == 0) {
		int x = 0, b[4] = { 0 };
		MPI_OK(MPI_Mprobe(1, 20, comm, &msg, &st));
		CHECK_INT(st.MPI_TAG, 20, "Mprobe of tag 20");
		MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
		CHECK_INT(x, 7, "tag 20's message");
		MPI_OK(MPI_Mprobe(1, MPI_ANY_TAG, comm, &msg, &st));
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
		int rc = MPI_Mrecv(b, 4, MPI_INT, &msg, &st), cls;
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_TRUNCATE, "Mrecv into a short buffer");
		CHECK_INT(b[3], 4, "truncated Mrecv kept what fits");
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
		t_mix(b, sizeof b);
	}

	/* MPI_PROC_NULL */
	MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, comm, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) gives MESSAGE_NO_PROC");
	CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Mprobe(PROC_NULL) source");
	{
		int x = 5, flag = 0;
		MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
		CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) handle");
		CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Mrecv(NO_PROC) source");
		CHECK_INT(x, 5, "Mrecv(NO_PROC) left the buffer");
		MPI_OK(MPI_Improbe(MPI_PROC_NULL, 0, comm, &flag, &msg, &st));
		CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL)");
		MPI_OK(MPI_Imrecv(&x, 1, MPI_INT, &msg, &r));
		MPI_OK(MPI_Wait(&r, &st));
		CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Imrecv(NO_PROC) source");
	}

#ifdef MPIV_MPI_LITE
	/* bad input: clear errors under ERRORS_RETURN */
	{
		int cls, rc, x = 0;
		MPI_Message none = MPI_MESSAGE_NULL;
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
		rc = MPI_Mrecv(&x, 1, MPI_INT, &none, &st);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_REQUEST, "Mrecv of MPI_MESSAGE_NULL");
		rc = MPI_Mprobe(n, 0, comm, &msg, &st);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_RANK, "Mprobe of rank = size");
		rc = MPI_Improbe(0, -5, comm, &x, &msg, &st);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_TAG, "Improbe of tag -5");
		/* a buffered persistent send with no buffer attached */
		MPI_OK(MPI_Bsend_init(&x, 1, MPI_INT, me, 0, comm, &r));
		rc = MPI_Start(&r);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_BUFFER, "Start of a Bsend_init without a buffer");
		MPI_OK(MPI_Request_free(&r));
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
	}
#endif

	/* persistent send modes: to the right, from the left, 3 times */
	{
		int right = (me + 1) % n, left = (me + n - 1) % n;
		int sv[3], rv[3];
		MPI_Request ps[3], pr[3];
		int bsz = 3 * (int)(sizeof(int) + MPI_BSEND_OVERHEAD);
		void *bbuf = malloc((size_t)bsz);
		MPI_OK(MPI_Buffer_attach(bbuf, bsz));
		MPI_OK(MPI_Ssend_init(&sv[0], 1, MPI_INT, right, 30, comm, &ps[0]));
		MPI_OK(MPI_Bsend_init(&sv[1], 1, MPI_INT, right, 31, comm, &ps[1]));
		MPI_OK(MPI_Rsend_init(&sv[2], 1, MPI_INT, right, 32, comm, &ps[2]));
		for (int k = 0; k < 3; k++)
			MPI_OK(MPI_Recv_init(&rv[k], 1, MPI_INT, left, 30 + k, comm, &pr[k]));
		for (int it = 0; it < 3; it++) {
			for (int k = 0; k < 3; k++)
				sv[k] = me * 1000 + it * 10 + k;
			MPI_OK(MPI_Startall(3, pr));
			/* the ready send needs the receive posted: a barrier */
			MPI_OK(MPI_Barrier(comm));
			MPI_OK(MPI_Start(&ps[0]));
			MPI_OK(MPI_Startall(2, &ps[1]));
			MPI_OK(MPI_Waitall(3, ps, MPI_STATUSES_IGNORE));
			MPI_OK(MPI_Waitall(3, pr, MPI_STATUSES_IGNORE));
			for (int k = 0; k < 3; k++)
				CHECK_INT(rv[k], left * 1000 + it * 10 + k, "persistent mode send");
			t_mix(rv, sizeof rv);
		}
		for (int k = 0; k < 3; k++) {
			MPI_OK(MPI_Request_free(&ps[k]));
			MPI_OK(MPI_Request_free(&pr[k]));
		}
		MPI_OK(MPI_Buffer_detach(&bbuf, &bsz));
		free(bbuf);
	}
	/* A call of one status leaves its MPI_ERROR as it was (MPI: only
	   the calls of several statuses set it): receive, probe, matched
	   probe and receive, wait, test, request_get_status, and the same
	   on MPI_PROC_NULL. */
	{
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		int v = t_rank, got = -1, flag = 0;
		MPI_Status s;
		MPI_Request rq, sq;
		MPI_Message m;
#define KEPT(call, what) do { s.MPI_ERROR = MPI_ERR_DIMS; MPI_OK(call); \
	CHECK_INT(s.MPI_ERROR, MPI_ERR_DIMS, what " set MPI_ERROR"); } while (0)
		MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 70, MPI_COMM_WORLD, &sq));
		KEPT(MPI_Probe(left, 70, MPI_COMM_WORLD, &s), "Probe");
		KEPT(MPI_Iprobe(left, 70, MPI_COMM_WORLD, &flag, &s), "Iprobe");
		KEPT(MPI_Mprobe(left, 70, MPI_COMM_WORLD, &m, &s), "Mprobe");
		KEPT(MPI_Mrecv(&got, 1, MPI_INT, &m, &s), "Mrecv");
		CHECK_INT(got, left, "Mrecv payload");
		KEPT(MPI_Wait(&sq, &s), "Wait");
		MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 71, MPI_COMM_WORLD, &sq));
		KEPT(MPI_Recv(&got, 1, MPI_INT, left, 71, MPI_COMM_WORLD, &s), "Recv");
		MPI_OK(MPI_Irecv(&got, 1, MPI_INT, left, 72, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 72, MPI_COMM_WORLD));
		do
			KEPT(MPI_Test(&rq, &flag, &s), "Test");
		while (!flag);
		KEPT(MPI_Request_get_status(sq, &flag, &s), "Request_get_status");
		KEPT(MPI_Wait(&sq, &s), "Wait");
		KEPT(MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s), "Recv from PROC_NULL");
		CHECK_INT(s.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL source");
		KEPT(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s), "Probe of PROC_NULL");
		KEPT(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &s), "Mprobe of PROC_NULL");
		KEPT(MPI_Mrecv(&got, 1, MPI_INT, &m, &s), "Mrecv of MPI_MESSAGE_NO_PROC");
#undef KEPT
	}
	return t_finish();
}
