/* coll_isolation: collective traffic never matches user point-to-point
 * receives. Every rank posts an ANY_SOURCE/ANY_TAG Irecv (and sends an
 * unexpected message that nobody receives yet) before running a series of
 * collectives on the same communicator; the wildcard receive must get the
 * user message sent after the collectives, and the pending unexpected
 * message must be received intact afterwards. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_isolation");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int wild[4] = { -1, -1, -1, -1 };
	MPI_Request wr, ur;
	MPI_Status st;
	MPI_OK(MPI_Irecv(wild, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &wr));
	/* an unexpected message: tag 5, received only at the end */
	int early[2] = { t_rank, 555 };
	MPI_OK(MPI_Isend(early, 2, MPI_INT, right, 5, MPI_COMM_WORLD, &ur));

	int v = t_rank + 1, s = 0, *g = malloc(sizeof(int) * t_size);
	for (int i = 0; i < 5; i++) {
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK_INT(s, t_size * (t_size + 1) / 2, "Allreduce with a wildcard receive pending");
		int b = t_rank == i % t_size ? 100 + i : -1;
		MPI_OK(MPI_Bcast(&b, 1, MPI_INT, i % t_size, MPI_COMM_WORLD));
		CHECK_INT(b, 100 + i, "Bcast with a wildcard receive pending");
		MPI_OK(MPI_Allgather(&v, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD));
		for (int k = 0; k < t_size; k++)
			CHECK_INT(g[k], k + 1, "Allgather with a wildcard receive pending");
	}
	/* the wildcard receive can only have matched the user message */
	int flag = 0;
	MPI_OK(MPI_Test(&wr, &flag, &st));
	if (!flag)
		MPI_OK(MPI_Wait(&wr, &st));
	CHECK_INT(st.MPI_SOURCE, left, "wildcard receive source");
	CHECK_INT(st.MPI_TAG, 5, "wildcard receive tag");
	CHECK(wild[0] == left && wild[1] == 555, "wildcard receive payload");
	MPI_OK(MPI_Wait(&ur, MPI_STATUS_IGNORE));

	/* now the other way: post a wildcard receive, run collectives, then
	 * send; the collectives must not have matched it */
	wild[0] = wild[1] = -1;
	MPI_OK(MPI_Irecv(wild, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &wr));
	for (int i = 0; i < 3; i++) {
		MPI_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		CHECK_INT(s, t_size, "Allreduce MAX");
		MPI_OK(MPI_Reduce(&v, &s, 1, MPI_INT, MPI_SUM, t_size - 1, MPI_COMM_WORLD));
		MPI_OK(MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK_INT(s, (t_rank + 1) * (t_rank + 2) / 2, "Scan");
	}
	/* nobody has sent the late message yet: it goes out after the barrier */
	MPI_OK(MPI_Test(&wr, &flag, &st));
	CHECK_INT(flag, 0, "a collective matched a user wildcard receive");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	int late[3] = { t_rank, 777, 1 };
	MPI_OK(MPI_Send(late, 3, MPI_INT, right, 9, MPI_COMM_WORLD));
	MPI_OK(MPI_Wait(&wr, &st));
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 9 && wild[0] == left && wild[1] == 777, "late user message");
	int cnt;
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK_INT(cnt, 3, "late user message count");
	t_mix(wild, 3 * sizeof(int));
	free(g);
	return t_finish();
}
