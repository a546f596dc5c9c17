/* coll_nbc: every non-blocking collective against its blocking twin
 * (Ibarrier, Ibcast, Igather(v), Iscatter(v), Iallgather(v),
 * Ialltoall(v,w), Ireduce, Iallreduce, Ireduce_scatter(_block), Iscan,
 * Iexscan, IN_PLACE forms, a non-commutative user op, a derived type),
 * MPI_Alltoallw, several outstanding collectives on one communicator
 * completed in reverse order and by Waitany, one overlapped with
 * point-to-point traffic and completed by a Test polling loop, and
 * MPI_Comm_idup (its communicator freed while a collective on it is
 * pending). */
#include "mpitest.h"

#define N 6

/* a non-commutative op: 2x2 integer matrix product, inout = in * inout */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *a = in, *b = inout;
	(void)dt;
	for (int k = 0; k < *len; k++, a += 4, b += 4) {
		int c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
		int c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
		b[0] = c0; b[1] = c1; b[2] = c2; b[3] = c3;
	}
}

static void wait1(MPI_Request *r)
{
	MPI_Status st;
	MPI_OK(MPI_Wait(r, &st));
	CHECK(*r == MPI_REQUEST_NULL, "Wait left the request");
}

static void same(const void *a, const void *b, size_t n, const char *what)
{
	CHECK(memcmp(a, b, n) == 0, "%s differs from the blocking call", what);
	t_mix(a, n);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_nbc");
	int n = t_size, me = t_rank;
	MPI_Comm comm = MPI_COMM_WORLD;
	MPI_Request r, rs[8];
	int s[N], a[N], b[N];
	int *big_a = calloc((size_t)n * N + 8, sizeof(int));
	int *big_b = calloc((size_t)n * N + 8, sizeof(int));
	int *sbig = calloc((size_t)n * N + 8, sizeof(int));
	int *cnt = calloc((size_t)n, sizeof(int)), *dsp = calloc((size_t)n, sizeof(int));

	for (int i = 0; i < N; i++)
		s[i] = me * 100 + i + 1;
	for (int i = 0; i < n * N; i++)
		sbig[i] = me * 1000 + i;

	MPI_OK(MPI_Ibarrier(comm, &r));
	wait1(&r);

	/* Ibcast from every root */
	for (int root = 0; root < n; root++) {
		memcpy(a, s, sizeof a);
		memcpy(b, s, sizeof b);
		MPI_OK(MPI_Bcast(a, N, MPI_INT, root, comm));
		MPI_OK(MPI_Ibcast(b, N, MPI_INT, root, comm, &r));
		wait1(&r);
		same(a, b, sizeof a, "Ibcast");
	}

	/* Igather / Igatherv / Iscatter / Iscatterv, root n-1 */
	int root = n - 1, tot = 0;
	for (int i = 0; i < n; i++) {
		cnt[i] = i % 3 + 1;
		dsp[i] = tot + i;	/* a hole between blocks */
		tot += cnt[i] + 1;
	}
	memset(big_a, 0, (size_t)n * N * sizeof(int));
	memset(big_b, 0, (size_t)n * N * sizeof(int));
	MPI_OK(MPI_Gather(s, 2, MPI_INT, big_a, 2, MPI_INT, root, comm));
	MPI_OK(MPI_Igather(s, 2, MPI_INT, big_b, 2, MPI_INT, root, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)n * 2 * sizeof(int), "Igather");
	MPI_OK(MPI_Gatherv(s, cnt[me], MPI_INT, big_a, cnt, dsp, MPI_INT, root, comm));
	MPI_OK(MPI_Igatherv(s, cnt[me], MPI_INT, big_b, cnt, dsp, MPI_INT, root, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)tot * sizeof(int), "Igatherv");
	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	MPI_OK(MPI_Scatter(sbig, 3, MPI_INT, a, 3, MPI_INT, 0, comm));
	MPI_OK(MPI_Iscatter(sbig, 3, MPI_INT, b, 3, MPI_INT, 0, comm, &r));
	wait1(&r);
	same(a, b, sizeof a, "Iscatter");
	MPI_OK(MPI_Scatterv(sbig, cnt, dsp, MPI_INT, a, cnt[me], MPI_INT, 0, comm));
	MPI_OK(MPI_Iscatterv(sbig, cnt, dsp, MPI_INT, b, cnt[me], MPI_INT, 0, comm, &r));
	wait1(&r);
	same(a, b, sizeof a, "Iscatterv");

	/* Iallgather(v), IN_PLACE too */
	MPI_OK(MPI_Allgather(s, 2, MPI_INT, big_a, 2, MPI_INT, comm));
	MPI_OK(MPI_Iallgather(s, 2, MPI_INT, big_b, 2, MPI_INT, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)n * 2 * sizeof(int), "Iallgather");
	memset(big_b, 0, (size_t)n * N * sizeof(int));
	big_b[2 * me] = s[0];
	big_b[2 * me + 1] = s[1];
	MPI_OK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big_b, 2, MPI_INT, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)n * 2 * sizeof(int), "Iallgather IN_PLACE");
	MPI_OK(MPI_Allgatherv(s, cnt[me], MPI_INT, big_a, cnt, dsp, MPI_INT, comm));
	MPI_OK(MPI_Iallgatherv(s, cnt[me], MPI_INT, big_b, cnt, dsp, MPI_INT, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)tot * sizeof(int), "Iallgatherv");

	/* Ialltoall(v), Alltoallw / Ialltoallw */
	MPI_OK(MPI_Alltoall(sbig, 2, MPI_INT, big_a, 2, MPI_INT, comm));
	MPI_OK(MPI_Ialltoall(sbig, 2, MPI_INT, big_b, 2, MPI_INT, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)n * 2 * sizeof(int), "Ialltoall");
	memcpy(big_b, sbig, (size_t)n * 2 * sizeof(int));
	MPI_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big_b, 2, MPI_INT, comm, &r));
	wait1(&r);
	same(big_a, big_b, (size_t)n * 2 * sizeof(int), "Ialltoall IN_PLACE");
	{
		int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
		int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
		int *wsd = calloc((size_t)n, sizeof(int)), *wrd = calloc((size_t)n, sizeof(int));
		MPI_Datatype *ty = malloc((size_t)n * sizeof(MPI_Datatype));
		int so = 0, ro = 0;
		for (int i = 0; i < n; i++) {
			sc[i] = (me + i) % 3;
			sd[i] = so;
			wsd[i] = so * (int)sizeof(int);
			so += sc[i];
			rc[i] = (i + me) % 3;
			rd[i] = ro;
			wrd[i] = ro * (int)sizeof(int);
			ro += rc[i];
			ty[i] = MPI_INT;
		}
		MPI_OK(MPI_Alltoallv(sbig, sc, sd, MPI_INT, big_a, rc, rd, MPI_INT, comm));
		MPI_OK(MPI_Ialltoallv(sbig, sc, sd, MPI_INT, big_b, rc, rd, MPI_INT, comm, &r));
		wait1(&r);
		same(big_a, big_b, (size_t)ro * sizeof(int), "Ialltoallv");
		memset(big_b, 0, (size_t)ro * sizeof(int));
		MPI_OK(MPI_Alltoallw(sbig, sc, wsd, ty, big_b, rc, wrd, ty, comm));
		same(big_a, big_b, (size_t)ro * sizeof(int), "Alltoallw");
		memset(big_b, 0, (size_t)ro * sizeof(int));
		MPI_OK(MPI_Ialltoallw(sbig, sc, wsd, ty, big_b, rc, wrd, ty, comm, &r));
		wait1(&r);
		same(big_a, big_b, (size_t)ro * sizeof(int), "Ialltoallw");
		free(sc); free(sd); free(rc); free(rd); free(wsd); free(wrd); free(ty);
	}

	/* reductions: SUM, MAX, a non-commutative user op, IN_PLACE */
	MPI_Op ops[2] = { MPI_SUM, MPI_MAX };
	for (int k = 0; k < 2; k++) {
		for (root = 0; root < n; root += (n > 2 ? n - 1 : 1)) {
			memset(a, 0, sizeof a);
			memset(b, 0, sizeof b);
			MPI_OK(MPI_Reduce(s, a, N, MPI_INT, ops[k], root, comm));
			MPI_OK(MPI_Ireduce(s, b, N, MPI_INT, ops[k], root, comm, &r));
			wait1(&r);
			same(a, b, sizeof a, "Ireduce");
		}
		MPI_OK(MPI_Allreduce(s, a, N, MPI_INT, ops[k], comm));
		MPI_OK(MPI_Iallreduce(s, b, N, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(a, b, sizeof a, "Iallreduce");
		memcpy(b, s, sizeof b);
		MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, b, N, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(a, b, sizeof a, "Iallreduce IN_PLACE");
		MPI_OK(MPI_Scan(s, a, N, MPI_INT, ops[k], comm));
		MPI_OK(MPI_Iscan(s, b, N, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(a, b, sizeof a, "Iscan");
		memcpy(b, s, sizeof b);
		MPI_OK(MPI_Iscan(MPI_IN_PLACE, b, N, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(a, b, sizeof a, "Iscan IN_PLACE");
		MPI_OK(MPI_Exscan(s, a, N, MPI_INT, ops[k], comm));
		MPI_OK(MPI_Iexscan(s, b, N, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		if (me > 0)
			same(a, b, sizeof a, "Iexscan");
		for (int i = 0; i < n; i++)
			cnt[i] = i % 2 + 1;
		int tot2 = 0;
		for (int i = 0; i < n; i++)
			tot2 += cnt[i];
		for (int i = 0; i < tot2; i++)
			big_a[i] = big_b[i] = 0;
		MPI_OK(MPI_Reduce_scatter(sbig, big_a, cnt, MPI_INT, ops[k], comm));
		MPI_OK(MPI_Ireduce_scatter(sbig, big_b, cnt, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(big_a, big_b, (size_t)cnt[me] * sizeof(int), "Ireduce_scatter");
		MPI_OK(MPI_Reduce_scatter_block(sbig, big_a, 2, MPI_INT, ops[k], comm));
		MPI_OK(MPI_Ireduce_scatter_block(sbig, big_b, 2, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(big_a, big_b, 2 * sizeof(int), "Ireduce_scatter_block");
		memcpy(big_b, sbig, (size_t)n * 2 * sizeof(int));
		MPI_OK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, big_b, 2, MPI_INT, ops[k], comm, &r));
		wait1(&r);
		same(big_a, big_b, 2 * sizeof(int), "Ireduce_scatter_block IN_PLACE");
	}
	{
		MPI_Op mm;
		MPI_Datatype mat;
		int m[4] = { 1, me + 1, 0, 1 }, ma[4], mb[4];
		MPI_OK(MPI_Op_create(matmul, 0, &mm));
		MPI_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
		MPI_OK(MPI_Type_commit(&mat));
		m[2] = me % 2;
		MPI_OK(MPI_Reduce(m, ma, 1, mat, mm, 0, comm));
		MPI_OK(MPI_Ireduce(m, mb, 1, mat, mm, 0, comm, &r));
		wait1(&r);
		if (me == 0)
			same(ma, mb, sizeof ma, "Ireduce non-commutative");
		MPI_OK(MPI_Allreduce(m, ma, 1, mat, mm, comm));
		MPI_OK(MPI_Iallreduce(m, mb, 1, mat, mm, comm, &r));
		MPI_OK(MPI_Type_free(&mat));	/* legal while pending */
		wait1(&r);
		same(ma, mb, sizeof ma, "Iallreduce non-commutative");
		MPI_OK(MPI_Op_free(&mm));
	}

	/* more in-place forms, against the blocking ones */
	{
		root = n / 2;
		memcpy(a, s, sizeof a);
		memcpy(b, s, sizeof b);
		MPI_OK(MPI_Reduce(me == root ? MPI_IN_PLACE : a, me == root ? a : NULL, N, MPI_INT, MPI_SUM, root, comm));
		MPI_OK(MPI_Ireduce(me == root ? MPI_IN_PLACE : b, me == root ? b : NULL, N, MPI_INT, MPI_SUM, root, comm, &r));
		wait1(&r);
		same(a, b, sizeof a, "Ireduce IN_PLACE");
		for (int i = 0; i < n * N; i++)
			big_a[i] = big_b[i] = -i;
		big_a[2 * me] = big_b[2 * me] = s[0];
		big_a[2 * me + 1] = big_b[2 * me + 1] = s[1];
		if (me == root) {
			MPI_OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big_a, 2, MPI_INT, root, comm));
			MPI_OK(MPI_Igather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big_b, 2, MPI_INT, root, comm, &r));
		} else {
			MPI_OK(MPI_Gather(s, 2, MPI_INT, NULL, 0, MPI_INT, root, comm));
			MPI_OK(MPI_Igather(s, 2, MPI_INT, NULL, 0, MPI_INT, root, comm, &r));
		}
		wait1(&r);
		same(big_a, big_b, (size_t)n * 2 * sizeof(int), "Igather IN_PLACE");
		if (me == root) {
			MPI_OK(MPI_Scatter(sbig, 2, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
			MPI_OK(MPI_Iscatter(sbig, 2, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm, &r));
			wait1(&r);
		} else {
			memset(a, 0, sizeof a);
			memset(b, 0, sizeof b);
			MPI_OK(MPI_Scatter(NULL, 0, MPI_INT, a, 2, MPI_INT, root, comm));
			MPI_OK(MPI_Iscatter(NULL, 0, MPI_INT, b, 2, MPI_INT, root, comm, &r));
			wait1(&r);
			same(a, b, sizeof a, "Iscatter IN_PLACE");
		}
		memcpy(a, s, sizeof a);
		memcpy(b, s, sizeof b);
		MPI_OK(MPI_Exscan(MPI_IN_PLACE, a, N, MPI_INT, MPI_SUM, comm));
		MPI_OK(MPI_Iexscan(MPI_IN_PLACE, b, N, MPI_INT, MPI_SUM, comm, &r));
		wait1(&r);
		if (me > 0)
			same(a, b, sizeof a, "Iexscan IN_PLACE");
		for (int i = 0; i < n; i++)
			cnt[i] = i % 2 + 1;
		memcpy(big_a, sbig, (size_t)n * N * sizeof(int));
		memcpy(big_b, sbig, (size_t)n * N * sizeof(int));
		MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, big_a, cnt, MPI_INT, MPI_SUM, comm));
		MPI_OK(MPI_Ireduce_scatter(MPI_IN_PLACE, big_b, cnt, MPI_INT, MPI_SUM, comm, &r));
		wait1(&r);
		same(big_a, big_b, (size_t)cnt[me] * sizeof(int), "Ireduce_scatter IN_PLACE");
		/* alltoallv in place */
		{
			int *c2 = malloc((size_t)n * sizeof(int)), *d2 = malloc((size_t)n * sizeof(int)), o = 0;
			for (int i = 0; i < n; i++) {
				c2[i] = 1 + (i + me) % 2;
				d2[i] = o;
				o += c2[i];
			}
			/* symmetric counts are needed in place: c2[i] on me equals c2[me] on i */
			for (int i = 0; i < n; i++)
				c2[i] = 1 + (i + me) % 2;
			for (int i = 0; i < o; i++)
				big_a[i] = big_b[i] = me * 100 + i;
			MPI_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, big_a, c2, d2, MPI_INT, comm));
			MPI_OK(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, big_b, c2, d2, MPI_INT, comm, &r));
			wait1(&r);
			same(big_a, big_b, (size_t)o * sizeof(int), "Ialltoallv IN_PLACE");
			free(c2);
			free(d2);
		}
	}

	/* several outstanding on one communicator, completed in reverse */
	{
		int v[4][N], w[4][N] = {{0}};	/* w[1], w[2] mixed in too */
		for (int k = 0; k < 4; k++)
			for (int i = 0; i < N; i++)
				v[k][i] = me + k * 10 + i;
		MPI_OK(MPI_Iallreduce(v[0], w[0], N, MPI_INT, MPI_SUM, comm, &rs[0]));
		MPI_OK(MPI_Ibcast(v[1], N, MPI_INT, n - 1, comm, &rs[1]));
		MPI_OK(MPI_Ibarrier(comm, &rs[2]));
		MPI_OK(MPI_Iallreduce(v[3], w[3], N, MPI_INT, MPI_MAX, comm, &rs[3]));
		for (int k = 3; k >= 0; k--)
			wait1(&rs[k]);
		for (int i = 0; i < N; i++) {
			CHECK_INT(w[0][i], n * (n - 1) / 2 + n * i, "outstanding Iallreduce SUM");
			CHECK_INT(v[1][i], n - 1 + 10 + i, "outstanding Ibcast");
			CHECK_INT(w[3][i], n - 1 + 30 + i, "outstanding Iallreduce MAX");
		}
		t_mix(w, sizeof w);
		/* again, completed by Waitany in whatever order */
		MPI_OK(MPI_Iallreduce(v[0], w[0], N, MPI_INT, MPI_SUM, comm, &rs[0]));
		MPI_OK(MPI_Iscan(v[2], w[2], N, MPI_INT, MPI_SUM, comm, &rs[1]));
		MPI_OK(MPI_Ibarrier(comm, &rs[2]));
		for (int k = 0; k < 3; k++) {
			int idx;
			MPI_OK(MPI_Waitany(3, rs, &idx, MPI_STATUS_IGNORE));
			CHECK(idx >= 0 && idx < 3, "Waitany index %d", idx);
		}
		for (int i = 0; i < N; i++)
			CHECK_INT(w[2][i], me * (me + 1) / 2 + (me + 1) * (20 + i), "Iscan via Waitany");
		t_mix(w, sizeof w);
	}

	/* overlap with point-to-point traffic, completed by polling Test */
	{
		int tok = me, got = -1, flag = 0, sum[N];
		MPI_Request p[2];
		MPI_OK(MPI_Iallreduce(s, sum, N, MPI_INT, MPI_SUM, comm, &r));
		MPI_OK(MPI_Irecv(&got, 1, MPI_INT, (me + n - 1) % n, 5, comm, &p[0]));
		MPI_OK(MPI_Isend(&tok, 1, MPI_INT, (me + 1) % n, 5, comm, &p[1]));
		MPI_OK(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
		CHECK_INT(got, (me + n - 1) % n, "ring token under an Iallreduce");
		while (!flag)
			MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
		CHECK(r == MPI_REQUEST_NULL, "Test did not free the request");
		for (int i = 0; i < N; i++)
			CHECK_INT(sum[i], 100 * n * (n - 1) / 2 + n * (i + 1), "polled Iallreduce");
		t_mix(sum, sizeof sum);
		/* a blocking receive progresses the collective: rank 0 waits
		   on the barrier before it sends what the others wait for */
		MPI_OK(MPI_Ibarrier(comm, &r));
		if (me == 0) {
			wait1(&r);
			for (int i = 1; i < n; i++)
				MPI_OK(MPI_Send(&tok, 1, MPI_INT, i, 6, comm));
		} else {
			MPI_OK(MPI_Recv(&got, 1, MPI_INT, 0, 6, comm, MPI_STATUS_IGNORE));
			wait1(&r);
		}
	}

	/* Comm_idup: usable after its Wait, isolated from its parent */
	{
		MPI_Comm dup;
		int x = me, y = -1;
		MPI_OK(MPI_Comm_idup(comm, &dup, &r));
		wait1(&r);
		MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
		CHECK_INT(y, n * (n - 1) / 2, "Allreduce on the idup'd comm");
		MPI_OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, dup, &r));
#ifdef MPIV_MPI_LITE
		/* freed while the collective is pending: it goes on (legal
		   MPI; Open MPI 4.1.4's libnbc crashes on it) */
		MPI_OK(MPI_Comm_free(&dup));
		CHECK(dup == MPI_COMM_NULL, "Comm_free left the handle");
		wait1(&r);
#else
		wait1(&r);
		MPI_OK(MPI_Comm_free(&dup));
#endif
		CHECK_INT(y, n - 1, "Iallreduce on the idup'd comm");
		t_mix_int(y);
	}

	/* count 0 and a communicator of one */
	MPI_OK(MPI_Iallreduce(s, a, 0, MPI_INT, MPI_SUM, comm, &r));
	wait1(&r);
	MPI_OK(MPI_Iallreduce(s, a, N, MPI_INT, MPI_SUM, MPI_COMM_SELF, &r));
	wait1(&r);
	same(a, s, sizeof a, "Iallreduce on COMM_SELF");

#ifdef MPIV_MPI_LITE
	/* bad input: a clear error under ERRORS_RETURN, and the job goes on
	   (freeing or cancelling an active one is erroneous in MPI) */
	{
		int cls, rc;
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
		rc = MPI_Ibcast(s, N, MPI_INT, n, comm, &r);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_ROOT, "Ibcast with root = size");
		rc = MPI_Iallreduce(s, a, -1, MPI_INT, MPI_SUM, comm, &r);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_COUNT, "Iallreduce of -1 elements");
		rc = MPI_Iallreduce(s, a, N, MPI_INT, MPI_SUM, comm, NULL);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_REQUEST, "Iallreduce without a request");
		MPI_OK(MPI_Ibarrier(comm, &r));
		rc = MPI_Request_free(&r);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_REQUEST, "Request_free of an active Ibarrier");
		rc = MPI_Cancel(&r);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_REQUEST, "Cancel of an Ibarrier");
		wait1(&r);
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
	}
#endif

	free(big_a); free(big_b); free(sbig); free(cnt); free(dsp);
	return t_finish();
}
