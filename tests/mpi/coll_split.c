/* coll_split: collectives on split communicators (odd/even, reversed key
 * order, and a dup), run concurrently on disjoint comms, with derived
 * datatypes; results checked against world ranks. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_split");
	MPI_Comm half, rev, dup;
	int color = t_rank % 2;
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, t_size - t_rank, &half)); /* reversed order */
	int hr, hs;
	MPI_OK(MPI_Comm_rank(half, &hr));
	MPI_OK(MPI_Comm_size(half, &hs));
	CHECK_INT(hs, (t_size + 1 - color) / 2, "split size");
	/* world rank of half-rank k: members of my color in decreasing order */
	int *members = malloc(hs * sizeof(int));
	{
		int k = 0;
		for (int w = t_size - 1; w >= 0; w--)
			if (w % 2 == color)
				members[k++] = w;
		CHECK_INT(members[hr], t_rank, "split rank order (key reversed)");
	}
	/* Allreduce sum of world ranks in my half */
	int s = t_rank, r = 0, want = 0;
	for (int k = 0; k < hs; k++)
		want += members[k];
	MPI_OK(MPI_Allreduce(&s, &r, 1, MPI_INT, MPI_SUM, half));
	CHECK_INT(r, want, "Allreduce on split");
	/* Bcast from every root of the half with a vector type */
	MPI_Datatype v;
	MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
	MPI_OK(MPI_Type_commit(&v));
	for (int root = 0; root < hs; root++) {
		int b[6];
		for (int i = 0; i < 6; i++)
			b[i] = hr == root ? members[root] * 10 + i : -1;
		MPI_OK(MPI_Bcast(b, 1, v, root, half));
		for (int i = 0; i < 6; i += 2)
			CHECK_INT(b[i], members[root] * 10 + i, "Bcast vector on split");
		if (hr != root)
			CHECK_INT(b[1], -1, "Bcast vector hole");
		t_mix(b, sizeof b);
	}
	/* Gather at half-rank 0 */
	int *g = malloc(hs * sizeof(int));
	MPI_OK(MPI_Gather(&t_rank, 1, MPI_INT, g, 1, MPI_INT, 0, half));
	if (hr == 0)
		for (int k = 0; k < hs; k++)
			CHECK_INT(g[k], members[k], "Gather on split");
	/* Scan (non-commutative-sensitive check: MAX over the rank order) */
	MPI_OK(MPI_Scan(&t_rank, &r, 1, MPI_INT, MPI_MIN, half));
	CHECK_INT(r, t_rank, "Scan MIN on reversed split (world ranks decreasing)");
	/* Alltoall on half */
	int *a = malloc(hs * sizeof(int)), *b = malloc(hs * sizeof(int));
	for (int k = 0; k < hs; k++)
		a[k] = t_rank * 100 + k;
	MPI_OK(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, half));
	for (int k = 0; k < hs; k++)
		CHECK_INT(b[k], members[k] * 100 + hr, "Alltoall on split");
	t_mix(b, hs * sizeof(int));

	/* a dup of world runs a collective between the halves' collectives */
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	int tot = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &tot, 1, MPI_INT, MPI_SUM, dup));
	CHECK_INT(tot, t_size * (t_size - 1) / 2, "Allreduce on dup");
	/* p2p on dup and world with the same tag don't mix */
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size, x = -1, y = -1;
	MPI_Request rq[2];
	MPI_OK(MPI_Irecv(&x, 1, MPI_INT, left, 0, dup, &rq[0]));
	MPI_OK(MPI_Irecv(&y, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq[1]));
	int vw = t_rank, vd = t_rank + 1000;
	MPI_OK(MPI_Send(&vw, 1, MPI_INT, right, 0, MPI_COMM_WORLD));
	MPI_OK(MPI_Send(&vd, 1, MPI_INT, right, 0, dup));
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	CHECK_INT(x, left + 1000, "message on dup");
	CHECK_INT(y, left, "message on world");

	/* split by 3 with key 0: ties broken by old rank */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, t_rank % 3, 0, &rev));
	int rr;
	MPI_OK(MPI_Comm_rank(rev, &rr));
	CHECK_INT(rr, t_rank / 3, "split key ties keep old order");
	int mx;
	MPI_OK(MPI_Allreduce(&t_rank, &mx, 1, MPI_INT, MPI_MAX, rev));
	int wmx = t_rank % 3;
	while (wmx + 3 < t_size)
		wmx += 3;
	CHECK_INT(mx, wmx, "Allreduce MAX on split-by-3");
	MPI_OK(MPI_Barrier(rev));
	MPI_OK(MPI_Comm_free(&rev));
	MPI_OK(MPI_Comm_free(&half));
	MPI_OK(MPI_Comm_free(&dup));
	CHECK(half == MPI_COMM_NULL && dup == MPI_COMM_NULL, "Comm_free handles");
	MPI_OK(MPI_Type_free(&v));
	free(members); free(g); free(a); free(b);
	return t_finish();
}
