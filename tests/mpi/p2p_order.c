/* p2p_order: ANY_SOURCE / ANY_TAG matching, non-overtaking (many messages
 * from one sender with one tag arrive in send order), and posted receives
 * matched in posting order. */
#include "mpitest.h"

enum { NMSG = 50 };

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_order");
	MPI_Status st;

	/* 1. every rank >0 sends NMSG numbered messages to 0, same tag;
	 * rank 0 receives with ANY_SOURCE and checks per-sender order. */
	if (t_rank == 0) {
		int *next = calloc(t_size, sizeof(int));
		for (int i = 0; i < NMSG * (t_size - 1); i++) {
			int v[2];
			MPI_OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st));
			CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < t_size, "ANY_SOURCE gave %d", st.MPI_SOURCE);
			CHECK_INT(v[0], st.MPI_SOURCE, "payload names its sender");
			CHECK_INT(v[1], next[st.MPI_SOURCE], "non-overtaking sequence");
			next[st.MPI_SOURCE]++;
		}
		for (int s = 1; s < t_size; s++)
			CHECK_INT(next[s], NMSG, "messages per sender");
		t_mix(next, t_size * sizeof(int));
		free(next);
	} else {
		for (int i = 0; i < NMSG; i++) {
			int v[2] = { t_rank, i };
			MPI_OK(MPI_Send(v, 2, MPI_INT, 0, 11, MPI_COMM_WORLD));
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* 2. ANY_TAG from one sender: tags come back in send order */
	if (t_size >= 2) {
		if (t_rank == 1) {
			for (int i = 0; i < NMSG; i++) {
				int tag = (i * 7) % 13;
				MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
			}
		} else if (t_rank == 0) {
			for (int i = 0; i < NMSG; i++) {
				int v = -1;
				MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
				CHECK_INT(v, i, "ANY_TAG order");
				CHECK_INT(st.MPI_TAG, (i * 7) % 13, "ANY_TAG status tag");
				t_mix_int(st.MPI_TAG);
			}
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* 3. posted receives match in posting order: rank 0 posts NMSG
	 * ANY_SOURCE/ANY_TAG Irecvs, then rank 1 sends NMSG messages; receive
	 * i must get message i. Then a specific-tag recv posted after
	 * wildcard ones only gets what the wildcards left. */
	if (t_size >= 2) {
		if (t_rank == 0) {
			int buf[NMSG];
			MPI_Request rq[NMSG];
			for (int i = 0; i < NMSG; i++)
				MPI_OK(MPI_Irecv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
			MPI_OK(MPI_Send(NULL, 0, MPI_INT, 1, 99, MPI_COMM_WORLD)); /* go */
			MPI_Status sts[NMSG];
			MPI_OK(MPI_Waitall(NMSG, rq, sts));
			for (int i = 0; i < NMSG; i++) {
				CHECK_INT(buf[i], i, "posted-order matching");
				CHECK_INT(sts[i].MPI_SOURCE, 1, "posted-order source");
				CHECK_INT(sts[i].MPI_TAG, i % 3, "posted-order tag");
			}
			t_mix(buf, sizeof buf);
		} else if (t_rank == 1) {
			MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			for (int i = 0; i < NMSG; i++)
				MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, i % 3, MPI_COMM_WORLD));
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* 4. a specific receive skips earlier non-matching messages, which
	 * then are still received in order by a wildcard receive. */
	if (t_size >= 2) {
		if (t_rank == 1) {
			for (int i = 0; i < 5; i++)
				MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, 20 + i, MPI_COMM_WORLD));
		} else if (t_rank == 0) {
			int v = -1;
			MPI_OK(MPI_Recv(&v, 1, MPI_INT, 1, 24, MPI_COMM_WORLD, &st));
			CHECK_INT(v, 4, "specific tag picked the last message");
			for (int i = 0; i < 4; i++) {
				MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
				CHECK_INT(v, i, "remaining messages in order");
				CHECK_INT(st.MPI_TAG, 20 + i, "remaining tags in order");
			}
			t_mix_int(v);
		}
	}
	return t_finish();
}
