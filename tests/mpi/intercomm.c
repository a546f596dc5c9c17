/* intercomm: Intercomm_create between the even and the odd ranks of
 * WORLD; test_inter, remote_size/group; point-to-point naming remote
 * ranks (ANY_SOURCE statuses give remote ranks); Barrier, Bcast with
 * MPI_ROOT/MPI_PROC_NULL, Reduce, Allreduce, Allgather(v), Alltoall(v),
 * Gather(v), Scatter(v), Reduce_scatter(_block), Alltoallw across the
 * groups;
 * Comm_dup, Comm_split, Comm_create and Comm_compare of
 * intercommunicators;
 * Intercomm_merge both ways; mpiv's clear errors for what it does not do.
 * Needs 2 ranks or more. */
#include "mpitest.h"

static int color, lsize, rsize, lrank;

/* World rank of member r of group g (0: evens, 1: odds). */
static int wr(int g, int r) { return 2 * r + g; }

static void check_merge(MPI_Comm ic, int high, int first)
{
	MPI_Comm m;
	int r, n, sum = 0;
	MPI_OK(MPI_Intercomm_merge(ic, high, &m));
	MPI_OK(MPI_Comm_size(m, &n));
	MPI_OK(MPI_Comm_rank(m, &r));
	CHECK_INT(n, t_size, "merged size");
	int want = color == first ? lrank : rsize + lrank;
	CHECK_INT(r, want, "merged rank");
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, m));
	CHECK_INT(sum, t_size * (t_size - 1) / 2, "Allreduce on merged");
	int flag;
	MPI_OK(MPI_Comm_test_inter(m, &flag));
	CHECK_INT(flag, 0, "merged is an intracommunicator");
	MPI_OK(MPI_Comm_free(&m));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "intercomm");
	if (t_size < 2) {
		CHECK(0, "needs 2 ranks");
	}
	MPI_Comm local, ic;
	color = t_rank % 2;
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local));
	MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0,
	    77, &ic));
	int flag, n;
	MPI_OK(MPI_Comm_test_inter(ic, &flag));
	CHECK_INT(flag, 1, "test_inter");
	MPI_OK(MPI_Comm_test_inter(local, &flag));
	CHECK_INT(flag, 0, "test_inter(local)");
	MPI_OK(MPI_Comm_size(ic, &lsize));
	MPI_OK(MPI_Comm_rank(ic, &lrank));
	MPI_OK(MPI_Comm_remote_size(ic, &rsize));
	CHECK_INT(lsize, (t_size + 1 - color) / 2, "local size");
	CHECK_INT(rsize, (t_size + color) / 2, "remote size");
	CHECK_INT(lrank, t_rank / 2, "local rank");
	MPI_Group rg, wg;
	MPI_OK(MPI_Comm_remote_group(ic, &rg));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Group_size(rg, &n));
	CHECK_INT(n, rsize, "remote group size");
	for (int r = 0; r < rsize; r++) {
		int w;
		MPI_OK(MPI_Group_translate_ranks(rg, 1, &r, wg, &w));
		CHECK_INT(w, wr(1 - color, r), "remote group member");
	}
	MPI_OK(MPI_Group_free(&rg));
	MPI_OK(MPI_Group_free(&wg));

	/* point to point: one message to every remote member */
	MPI_Request *rq = malloc(sizeof(*rq) * (size_t)rsize);
	int *out = malloc(sizeof(int) * (size_t)rsize);
	for (int r = 0; r < rsize; r++) {
		out[r] = t_rank * 100 + r;
		MPI_OK(MPI_Isend(&out[r], 1, MPI_INT, r, 5, ic, &rq[r]));
	}
	long long got = 0;
	for (int k = 0; k < rsize; k++) {
		int v;
		MPI_Status st;
		MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
		CHECK_INT(v / 100, wr(1 - color, st.MPI_SOURCE), "status source names the remote rank");
		CHECK_INT(v % 100, lrank, "message for me");
		got += v;
	}
	MPI_OK(MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE));
	t_mix_int(got);
	/* a named source and MPI_PROC_NULL */
	int x = t_rank, y = -1;
	MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, lrank % rsize, 6, &y, 1, MPI_INT,
	    MPI_PROC_NULL, 6, ic, MPI_STATUS_IGNORE));
	CHECK_INT(y, -1, "recv from PROC_NULL");
	/* each member receives from the remote members r with r % lsize == lrank */
	for (int r = 0; r < rsize; r++)
		if (r % lsize == lrank) {
			MPI_Status pst;
			MPI_OK(MPI_Probe(r, 6, ic, &pst));
			CHECK_INT(pst.MPI_SOURCE, r, "Probe source names the remote rank");
			MPI_OK(MPI_Recv(&y, 1, MPI_INT, r, 6, ic, MPI_STATUS_IGNORE));
			CHECK_INT(y, wr(1 - color, r), "Sendrecv across");
			t_mix_int(y);
		}

	MPI_OK(MPI_Barrier(ic));

	/* Bcast: group 0's rank 0 to group 1, then group 1's last to group 0 */
	int b[3] = { 0, 0, 0 };
	int root0 = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	if (color == 0 && lrank == 0) { b[0] = 11; b[1] = 22; b[2] = 33; }
	MPI_OK(MPI_Bcast(b, 3, MPI_INT, root0, ic));
	if (color == 1)
		CHECK(b[0] == 11 && b[1] == 22 && b[2] == 33, "Bcast to group 1");
	else if (lrank != 0)
		CHECK(b[0] == 0, "Bcast left PROC_NULL members alone");
	int last1 = (t_size / 2) - 1;
	int root1 = color == 1 ? (lrank == last1 ? MPI_ROOT : MPI_PROC_NULL) : last1;
	double d = color == 1 && lrank == last1 ? 2.5 : 0;
	MPI_OK(MPI_Bcast(&d, 1, MPI_DOUBLE, root1, ic));
	if (color == 0)
		CHECK(d == 2.5, "Bcast to group 0");

	/* Reduce to group 1's rank 0 of group 0's values (world rank + 1) */
	long long s = t_rank + 1, rs = -1;
	int rroot = color == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	MPI_OK(MPI_Reduce(&s, &rs, 1, MPI_LONG_LONG, MPI_SUM, rroot, ic));
	long long want = 0;
	for (int r = 0; r < (color == 1 ? rsize : lsize); r++)
		want += wr(0, r) + 1;
	if (color == 1 && lrank == 0)
		CHECK_INT(rs, want, "Reduce");
	/* Allreduce: each group gets the other's sum and max */
	int in2[2] = { t_rank, t_rank * 3 }, o2[2] = { 0, 0 };
	MPI_OK(MPI_Allreduce(in2, o2, 2, MPI_INT, MPI_SUM, ic));
	int ws = 0;
	for (int r = 0; r < rsize; r++)
		ws += wr(1 - color, r);
	CHECK(o2[0] == ws && o2[1] == 3 * ws, "Allreduce: %d %d want %d", o2[0], o2[1], ws);
	MPI_OK(MPI_Allreduce(&t_rank, &x, 1, MPI_INT, MPI_MAX, ic));
	CHECK_INT(x, wr(1 - color, rsize - 1), "Allreduce max");

	/* Allgather / Alltoall / Gather / Scatter */
	int *ga = malloc(sizeof(int) * (size_t)(rsize + 1) * 2);
	MPI_OK(MPI_Allgather(&t_rank, 1, MPI_INT, ga, 1, MPI_INT, ic));
	for (int r = 0; r < rsize; r++)
		CHECK_INT(ga[r], wr(1 - color, r), "Allgather");
	int *sa = malloc(sizeof(int) * (size_t)rsize);
	for (int r = 0; r < rsize; r++)
		sa[r] = t_rank * 1000 + r;
	MPI_OK(MPI_Alltoall(sa, 1, MPI_INT, ga, 1, MPI_INT, ic));
	for (int r = 0; r < rsize; r++)
		CHECK_INT(ga[r], wr(1 - color, r) * 1000 + lrank, "Alltoall");
	int groot = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	for (int r = 0; r < rsize; r++) ga[r] = -1;
	MPI_OK(MPI_Gather(&t_rank, 1, MPI_INT, ga, 1, MPI_INT, groot, ic));
	if (color == 0 && lrank == 0)
		for (int r = 0; r < rsize; r++)
			CHECK_INT(ga[r], wr(1, r), "Gather");
	int sroot = color == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	for (int r = 0; r < rsize; r++) sa[r] = 7 * r + 1;
	y = -1;
	MPI_OK(MPI_Scatter(sa, 1, MPI_INT, &y, 1, MPI_INT, sroot, ic));
	if (color == 0)
		CHECK_INT(y, 7 * lrank + 1, "Scatter");
	/* the v forms: blocks reversed */
	int *cnt = malloc(sizeof(int) * (size_t)rsize), *dsp = malloc(sizeof(int) * (size_t)rsize);
	for (int r = 0; r < rsize; r++) { cnt[r] = 1; dsp[r] = rsize - 1 - r; }
	MPI_OK(MPI_Allgatherv(&t_rank, 1, MPI_INT, ga, cnt, dsp, MPI_INT, ic));
	for (int r = 0; r < rsize; r++)
		CHECK_INT(ga[rsize - 1 - r], wr(1 - color, r), "Allgatherv");
	for (int r = 0; r < rsize; r++) sa[rsize - 1 - r] = t_rank * 1000 + r;
	MPI_OK(MPI_Alltoallv(sa, cnt, dsp, MPI_INT, ga, cnt, dsp, MPI_INT, ic));
	for (int r = 0; r < rsize; r++)
		CHECK_INT(ga[rsize - 1 - r], wr(1 - color, r) * 1000 + lrank, "Alltoallv");
	{
		/* Alltoallw: a type per peer (ints and doubles alternating by
		   the receiver's rank), byte displacements */
		int *wc = malloc(sizeof(int) * (size_t)rsize), *wd = malloc(sizeof(int) * (size_t)rsize);
		int *rd = malloc(sizeof(int) * (size_t)rsize);
		MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)rsize), *rt = malloc(sizeof(MPI_Datatype) * (size_t)rsize);
		double *sb = malloc(sizeof(double) * 2 * (size_t)rsize), *rb = malloc(sizeof(double) * 2 * (size_t)rsize);
		for (int r = 0; r < rsize; r++) {
			wc[r] = 2;
			wd[r] = r * 2 * (int)sizeof(double);
			rd[r] = (rsize - 1 - r) * 2 * (int)sizeof(double);
			st[r] = r % 2 ? MPI_DOUBLE : MPI_INT;	/* what r receives */
			rt[r] = lrank % 2 ? MPI_DOUBLE : MPI_INT;	/* what I receive */
			if (st[r] == MPI_INT) {
				int *ip = (int *)&sb[2 * r];
				ip[0] = t_rank; ip[1] = r;
			} else {
				sb[2 * r] = t_rank + 0.5; sb[2 * r + 1] = r + 0.25;
			}
		}
		MPI_OK(MPI_Alltoallw(sb, wc, wd, st, rb, wc, rd, rt, ic));
		for (int r = 0; r < rsize; r++) {
			if (lrank % 2) {
				CHECK(rb[2 * (rsize - 1 - r)] == wr(1 - color, r) + 0.5 &&
				    rb[2 * (rsize - 1 - r) + 1] == lrank + 0.25, "Alltoallw doubles from %d", r);
			} else {
				int *ip = (int *)&rb[2 * (rsize - 1 - r)];
				CHECK(ip[0] == wr(1 - color, r) && ip[1] == lrank, "Alltoallw ints from %d", r);
			}
		}
		free(wc); free(wd); free(rd); free(st); free(rt); free(sb); free(rb);
	}
	MPI_OK(MPI_Gatherv(&t_rank, 1, MPI_INT, ga, cnt, dsp, MPI_INT, groot, ic));
	if (color == 0 && lrank == 0)
		for (int r = 0; r < rsize; r++)
			CHECK_INT(ga[rsize - 1 - r], wr(1, r), "Gatherv");
	for (int r = 0; r < rsize; r++) sa[rsize - 1 - r] = 5 * r;
	MPI_OK(MPI_Scatterv(sa, cnt, dsp, MPI_INT, &y, 1, MPI_INT, sroot, ic));
	if (color == 0)
		CHECK_INT(y, 5 * lrank, "Scatterv");
	t_mix(ga, sizeof(int) * (size_t)rsize);

	/* Reduce_scatter(_block): both groups' totals are lsize * rsize */
	{
		int tot = lsize * rsize, *sv = malloc(sizeof(int) * (size_t)tot);
		int *rv = malloc(sizeof(int) * (size_t)(rsize + 1)), *rcs = malloc(sizeof(int) * (size_t)lsize);
		for (int i = 0; i < tot; i++)
			sv[i] = t_rank * 100 + i;
		MPI_OK(MPI_Reduce_scatter_block(sv, rv, rsize, MPI_INT, MPI_SUM, ic));
		for (int j = 0; j < rsize; j++) {
			int want = 0;
			for (int q = 0; q < rsize; q++)
				want += wr(1 - color, q) * 100 + lrank * rsize + j;
			CHECK_INT(rv[j], want, "Reduce_scatter_block");
		}
		t_mix(rv, sizeof(int) * (size_t)rsize);
		for (int r = 0; r < lsize; r++)
			rcs[r] = rsize;
		if (lsize > 1) { rcs[0]++; rcs[lsize - 1]--; }
		int off = 0;
		for (int r = 0; r < lrank; r++)
			off += rcs[r];
		MPI_OK(MPI_Reduce_scatter(sv, rv, rcs, MPI_INT, MPI_MAX, ic));
		for (int j = 0; j < rcs[lrank]; j++)
			CHECK_INT(rv[j], wr(1 - color, rsize - 1) * 100 + off + j, "Reduce_scatter");
		t_mix(rv, sizeof(int) * (size_t)rcs[lrank]);
		free(sv); free(rv); free(rcs);
	}

	/* dup: same groups, its own traffic */
	MPI_Comm ic2;
	int cmp;
	MPI_OK(MPI_Comm_dup(ic, &ic2));
	MPI_OK(MPI_Comm_compare(ic, ic2, &cmp));
	CHECK_INT(cmp, MPI_CONGRUENT, "compare(ic, dup)");
	MPI_OK(MPI_Comm_remote_size(ic2, &n));
	CHECK_INT(n, rsize, "dup remote size");
	MPI_OK(MPI_Allreduce(&t_rank, &x, 1, MPI_INT, MPI_MIN, ic2));
	CHECK_INT(x, 1 - color, "Allreduce min on dup");
	MPI_OK(MPI_Comm_free(&ic2));

	/* split: by local rank parity, reversed keys */
	MPI_Comm sp;
	MPI_OK(MPI_Comm_split(ic, lrank % 2, -lrank, &sp));
	int want_l = 0, want_r = 0;
	for (int r = 0; r < lsize; r++) want_l += r % 2 == lrank % 2;
	for (int r = 0; r < rsize; r++) want_r += r % 2 == lrank % 2;
	if (want_r == 0) {
		CHECK(sp == MPI_COMM_NULL, "split with no remote part");
	} else {
		CHECK(sp != MPI_COMM_NULL, "split gave COMM_NULL");
		MPI_OK(MPI_Comm_size(sp, &n));
		CHECK_INT(n, want_l, "split local size");
		MPI_OK(MPI_Comm_remote_size(sp, &n));
		CHECK_INT(n, want_r, "split remote size");
		int sr;
		MPI_OK(MPI_Comm_rank(sp, &sr));
		CHECK_INT(sr, (want_l - 1) - lrank / 2, "split rank by key");
		int mx = -1;
		MPI_OK(MPI_Allreduce(&t_rank, &mx, 1, MPI_INT, MPI_MAX, sp));
		int wm = -1;
		for (int r = 0; r < rsize; r++)
			if (r % 2 == lrank % 2) wm = wr(1 - color, r);
		CHECK_INT(mx, wm, "Allreduce on split");
		MPI_OK(MPI_Comm_free(&sp));
	}

	/* Comm_create (MPI-2.2): each side keeps its members but local
	   rank 0, in reverse order; a side of one has nobody left, and
	   then every member gets MPI_COMM_NULL */
	MPI_Group lg, cg;
	int *keep = malloc((size_t)lsize * sizeof(int)), nk = 0;
#ifdef MPIV_MPI_LITE
	for (int r = lsize - 1; r >= 1; r--)
		keep[nk++] = r;
#else	/* Open MPI 4.1.4 hangs in an Allreduce on such a reordered one */
	for (int r = 1; r < lsize; r++)
		keep[nk++] = r;
#endif
	MPI_OK(MPI_Comm_group(ic, &lg));
	MPI_OK(MPI_Group_incl(lg, nk, keep, &cg));
	MPI_Comm cc;
	MPI_OK(MPI_Comm_create(ic, cg, &cc));
	if (lrank == 0 || lsize == 1 || rsize == 1) {
		CHECK(cc == MPI_COMM_NULL, "Comm_create: COMM_NULL for a non-member or an empty side");
	} else {
		CHECK(cc != MPI_COMM_NULL, "Comm_create gave COMM_NULL to a member");
		int flag, cr;
		MPI_OK(MPI_Comm_test_inter(cc, &flag));
		CHECK_INT(flag, 1, "Comm_create of an intercommunicator is one");
		MPI_OK(MPI_Comm_size(cc, &n));
		CHECK_INT(n, lsize - 1, "Comm_create local size");
		MPI_OK(MPI_Comm_remote_size(cc, &n));
		CHECK_INT(n, rsize - 1, "Comm_create remote size");
		MPI_OK(MPI_Comm_rank(cc, &cr));
#ifdef MPIV_MPI_LITE
		CHECK_INT(cr, lsize - 1 - lrank, "Comm_create rank in the group's order");
#else
		CHECK_INT(cr, lrank - 1, "Comm_create rank in the group's order");
#endif
		/* remote rank 0 of cc is the last member of the other side */
		int sum = -1, v = t_rank;
		MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, cc));
		int ws = 0;
		for (int r = 1; r < rsize; r++)
			ws += wr(1 - color, r);
		CHECK_INT(sum, ws, "Allreduce on a created intercommunicator");
		/* each member with a counterpart of its rank on the other
		   side: remote rank cr is that side's local rank rsize-1-cr
		   (cr+1 in the order Open MPI is given) */
		int got = -1;
		if (cr < rsize - 1) {
			MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, cr, 9, &got, 1,
			    MPI_INT, cr, 9, cc, MPI_STATUS_IGNORE));
#ifdef MPIV_MPI_LITE
			CHECK_INT(got, wr(1 - color, rsize - 1 - cr), "Sendrecv on a created intercommunicator");
#else
			CHECK_INT(got, wr(1 - color, cr + 1), "Sendrecv on a created intercommunicator");
#endif
		}
		MPI_OK(MPI_Comm_free(&cc));
	}
	MPI_OK(MPI_Group_free(&cg));
	MPI_OK(MPI_Group_free(&lg));
	free(keep);

	/* merge: evens first (odds say high), then odds first */
	check_merge(ic, color, 0);
	check_merge(ic, 1 - color, 1);

#ifdef MPIV_MPI_LITE
	/* calls mpiv does not do on intercommunicators fail clearly */
	{
		int cls, rc, one = 1, res = 0;
		MPI_Comm bad = MPI_COMM_NULL;
		MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		rc = MPI_Scan(&one, &res, 1, MPI_INT, MPI_SUM, ic);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_COMM, "Scan on an intercommunicator");
		MPI_Group rg;
		MPI_OK(MPI_Comm_remote_group(ic, &rg));
		rc = MPI_Comm_create(ic, rg, &bad);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_GROUP, "Comm_create with the remote group");
		MPI_OK(MPI_Group_free(&rg));
		int dims[1] = { 1 }, per[1] = { 0 };
		rc = MPI_Cart_create(ic, 1, dims, per, 0, &bad);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_COMM, "Cart_create on an intercommunicator");
		rc = MPI_Bcast(&one, 1, MPI_INT, rsize, ic);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_ROOT, "Bcast with a root beyond the remote group");
		rc = MPI_Send(&one, 1, MPI_INT, rsize, 0, ic);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_RANK, "Send to a rank beyond the remote group");
		rc = MPI_Comm_remote_size(MPI_COMM_WORLD, &n);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_COMM, "remote_size of an intracommunicator");
		rc = MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_COMM, "merge of an intracommunicator");
		CHECK(bad == MPI_COMM_NULL, "no communicator made");
		/* a bad remote_leader: the leader says MPI_ERR_RANK, its group
		   learns the leader failed, nobody waits for ever */
		MPI_OK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
		rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, t_size, 78, &bad);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, lrank == 0 ? MPI_ERR_RANK : MPI_ERR_OTHER, "Intercomm_create with a bad remote_leader");
		CHECK(bad == MPI_COMM_NULL, "no communicator made");
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
#endif
	MPI_OK(MPI_Comm_free(&ic));
	MPI_OK(MPI_Comm_free(&local));
	free(rq); free(out); free(ga); free(sa); free(cnt); free(dsp);
	return t_finish();
}
