/* grequest: generalized requests. query_fn fills the status when Wait,
 * Test, Waitall or Request_get_status report the request; free_fn runs
 * once, when the request is both complete and freed (by Wait/Test or
 * MPI_Request_free, before or after MPI_Grequest_complete); cancel_fn is
 * told whether the request is complete; Test says false until
 * MPI_Grequest_complete; a grequest waits together with a receive. */
#include "mpitest.h"

struct gstate { int query, free, cancel, cancel_complete, tag; };

static int q_fn(void *extra, MPI_Status *st)
{
	struct gstate *g = extra;
	g->query++;
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = g->tag;
	MPI_OK(MPI_Status_set_elements(st, MPI_INT, 3));
	MPI_OK(MPI_Status_set_cancelled(st, g->cancel > 0));
	return MPI_SUCCESS;
}
static int f_fn(void *extra) { ((struct gstate *)extra)->free++; return MPI_SUCCESS; }
static int c_fn(void *extra, int complete)
{
	struct gstate *g = extra;
	g->cancel++;
	g->cancel_complete = complete;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "grequest");
	struct gstate g = { .tag = 7 };
	MPI_Request r;
	MPI_Status st;
	int flag, n;

	/* Test before and after completion, then the status */
	MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &r));
	MPI_OK(MPI_Test(&r, &flag, &st));
	CHECK(!flag && r != MPI_REQUEST_NULL, "Test before Grequest_complete");
	CHECK(g.query == 0 && g.free == 0, "no callback before completion");
	MPI_OK(MPI_Grequest_complete(r));
	MPI_OK(MPI_Request_get_status(r, &flag, &st));
	CHECK(flag && g.query == 1 && g.free == 0, "Request_get_status queries, does not free");
	MPI_OK(MPI_Test(&r, &flag, &st));
	CHECK(flag && r == MPI_REQUEST_NULL, "Test after Grequest_complete");
	CHECK(g.query == 2 && g.free == 1, "Test: query then free (%d %d)", g.query, g.free);
	CHECK_INT(st.MPI_TAG, 7, "status tag from query_fn");
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK_INT(n, 3, "Get_count from MPI_Status_set_elements");
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "not cancelled");

	/* Wait on a completed one */
	struct gstate h = { .tag = 8 };
	MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &h, &r));
	MPI_OK(MPI_Grequest_complete(r));
	MPI_OK(MPI_Wait(&r, &st));
	CHECK(h.query == 1 && h.free == 1 && st.MPI_TAG == 8, "Wait");

	/* Request_free before completion: free_fn at Grequest_complete */
	struct gstate f = { .tag = 9 };
	MPI_Request keep;
	MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &f, &r));
	keep = r;
	MPI_OK(MPI_Request_free(&r));
	CHECK(r == MPI_REQUEST_NULL && f.free == 0, "Request_free of an incomplete grequest");
	MPI_OK(MPI_Grequest_complete(keep));
	CHECK(f.free == 1 && f.query == 0, "free_fn at completion, no query");

	/* Cancel: before completion, then reported cancelled */
	struct gstate k = { .tag = 10 };
	MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &k, &r));
	MPI_OK(MPI_Cancel(&r));
	CHECK(k.cancel == 1 && k.cancel_complete == 0, "cancel_fn(complete=0)");
	MPI_OK(MPI_Grequest_complete(r));
	MPI_OK(MPI_Wait(&r, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag, "cancelled status");

	/* Waitall of a grequest and a receive from the left neighbour */
	struct gstate w = { .tag = 11 };
	MPI_Request rs[3];
	MPI_Status sts[3];
	int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size, out = t_rank, in = -1;
	MPI_OK(MPI_Grequest_start(q_fn, f_fn, c_fn, &w, &rs[0]));
	MPI_OK(MPI_Irecv(&in, 1, MPI_INT, from, 3, MPI_COMM_WORLD, &rs[1]));
	MPI_OK(MPI_Isend(&out, 1, MPI_INT, to, 3, MPI_COMM_WORLD, &rs[2]));
	MPI_OK(MPI_Grequest_complete(rs[0]));
	MPI_OK(MPI_Waitall(3, rs, sts));
	CHECK(w.query == 1 && w.free == 1 && sts[0].MPI_TAG == 11, "Waitall grequest");
	CHECK_INT(in, from, "Waitall receive");
	CHECK_INT(sts[1].MPI_SOURCE, from, "Waitall receive status");
	t_mix_int(in);
	t_mix_int(g.query * 100 + g.free * 10 + k.cancel);
	return t_finish();
}
