/* rma_errors: error handlers on windows. A user handler set with
 * MPI_Win_create_errhandler/MPI_Win_set_errhandler sees the window and
 * the code of a Put outside the target's window (MPI_ERR_RMA_RANGE) and
 * of MPI_Win_call_errhandler; with MPI_ERRORS_RETURN a Put outside any
 * epoch returns MPI_ERR_RMA_SYNC, and so do the passive-target calls
 * outside a passive-target epoch (unlock, flush, the request-based
 * calls), while a lock of the own window works. The window keeps working
 * after each error; operations that move no bytes are no errors whatever
 * their types.
 * Under mpiv, for tests/integration/test_rma_limits.sh:
 *   rma_errors lock   MPI_Win_unlock of a rank never locked, under the
 *                     default handler (the job ends naming the call)
 *   rma_errors big    with MPIV_MAX_PAYLOAD=65536: a 128 KiB Put fails
 *                     at the fence with MPI_ERR_COUNT, nobody hangs */
#include "mpitest.h"

static int calls, last_code;
static MPI_Win seen;

static void handler(MPI_Win *w, int *code, ...)
{
	calls++;
	last_code = *code;
	seen = *w;
}

#ifdef MPIV_MPI_LITE
static int special(const char *what)
{
	MPI_Win win;
	if (strcmp(what, "lock") == 0) {
		int b = 0;
		MPI_OK(MPI_Win_create(&b, sizeof b, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
		MPI_Win_unlock((t_rank + 1) % t_size, win);
		printf("rma_errors: MPI_Win_unlock returned\n");
		return 1;
	}
	int n = 32768, *big, cls;
	MPI_OK(MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &big, &win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	int *src = calloc((size_t)n, sizeof(int));
	MPI_OK(MPI_Win_fence(0, win));
	if (t_rank == 0)
		MPI_OK(MPI_Put(src, n, MPI_INT, t_size - 1, 0, n, MPI_INT, win));
	int rc = MPI_Win_fence(0, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, t_rank == 0 ? MPI_ERR_COUNT : MPI_SUCCESS, "fence after a too big epoch");
	/* the window still works */
	int one = t_rank + 1;
	MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
	MPI_OK(MPI_Win_fence(0, win));
	if (t_rank == 0)
		CHECK_INT(big[0], t_size * (t_size + 1) / 2, "accumulate after the dropped epoch");
	MPI_OK(MPI_Win_free(&win));
	free(src);
	if (t_rank == 0)
		printf("rma_errors big ok\n");
	MPI_OK(MPI_Finalize());
	return 0;
}
#endif

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_errors");
#ifdef MPIV_MPI_LITE
	if (argc > 1)
		return special(argv[1]);
#endif
	int buf[4] = { 0 }, cls T_UNUSED;
	MPI_Win win;
	MPI_Errhandler eh, got;
	MPI_OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_OK(MPI_Win_create_errhandler(handler, &eh));
	MPI_OK(MPI_Win_set_errhandler(win, eh));
	MPI_OK(MPI_Win_get_errhandler(win, &got));
	CHECK(got == eh, "Win_get_errhandler");
	MPI_OK(MPI_Errhandler_free(&got));
	MPI_OK(MPI_Errhandler_free(&eh));

	MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
	CHECK(calls == 1 && last_code == MPI_ERR_OTHER && seen == win, "Win_call_errhandler ran the handler");

	int v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, rc;
	MPI_OK(MPI_Win_fence(0, win));
#ifdef MPIV_MPI_LITE
	/* Open MPI does not check the target range at the origin: erroneous
	   programs are mpiv's own part of this test */
	rc = MPI_Put(v, 8, MPI_INT, (t_rank + 1) % t_size, 0, 8, MPI_INT, win);
	CHECK(rc != MPI_SUCCESS, "Put of 8 ints into a 4-int window succeeded");
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_RANGE, "out-of-window Put error class");
	CHECK(calls == 2 && seen == win, "handler saw the Put error");
	rc = MPI_Put(v, 1, MPI_INT, t_size, 0, 1, MPI_INT, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RANK, "Put to a rank outside the window");
#endif
	MPI_OK(MPI_Put(v, 4, MPI_INT, (t_rank + 1) % t_size, 0, 4, MPI_INT, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	for (int i = 0; i < 4; i++)
		CHECK_INT(buf[i], i + 1, "put after the errors");

	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
#ifdef MPIV_MPI_LITE
	rc = MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "Put outside an epoch");
	CHECK_INT(calls, 3, "ERRORS_RETURN: the user handler is not called");
	char s[MPI_MAX_ERROR_STRING];
	int len;
	int other = (t_rank + 1) % t_size;
	rc = MPI_Win_unlock(other, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "Win_unlock without a lock");
	MPI_OK(MPI_Error_string(rc, s, &len));
	CHECK(strstr(s, "synchronization") != NULL, "Win_unlock error string '%s'", s);
	/* a lock of the own window works: its operations apply at flush
	   and unlock */
	int mine = 77, back = 0;
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, win));
	MPI_OK(MPI_Put(&mine, 1, MPI_INT, t_rank, 3, 1, MPI_INT, win));
	MPI_OK(MPI_Win_flush(t_rank, win));
	CHECK_INT(buf[3], 77, "own put after flush");
	MPI_OK(MPI_Get(&back, 1, MPI_INT, t_rank, 3, 1, MPI_INT, win));
	MPI_OK(MPI_Win_unlock(t_rank, win));
	CHECK_INT(back, 77, "own get after unlock");
	MPI_OK(MPI_Win_sync(win));
	buf[3] = 4;
	MPI_Request rq;
	rc = MPI_Rput(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &rq);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "Rput outside a passive-target epoch");
	/* every passive-target and request-based call outside its epoch */
	int rcs[] = {
		MPI_Win_unlock_all(win), MPI_Win_flush(other, win),
		MPI_Win_flush_all(win), MPI_Win_flush_local(other, win),
		MPI_Win_flush_local_all(win),
		MPI_Rget(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &rq),
		MPI_Raccumulate(v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, &rq),
		MPI_Rget_accumulate(v, 1, MPI_INT, v + 4, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, &rq),
	};
	for (size_t i = 0; i < sizeof rcs / sizeof rcs[0]; i++) {
		MPI_OK(MPI_Error_class(rcs[i], &cls));
		CHECK_INT(cls, MPI_ERR_RMA_SYNC, "passive-target call outside its epoch");
	}
	rc = MPI_Win_fence(1 << 20, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_ASSERT, "fence with an unknown assert");
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
	rc = MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "NOPRECEDE fence after a Put");
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	MPI_Aint sz;
	int du;
	void *bp;
	rc = MPI_Win_shared_query(win, 0, &sz, &du, &bp);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_FLAVOR, "shared_query on a created window");
#else
	(void)rc;
#endif
	/* and still usable; operations that move nothing are no errors,
	   whatever their types (a count of 0, a type of no data) */
	MPI_Datatype none;
	MPI_OK(MPI_Type_contiguous(0, MPI_INT, &none));
	MPI_OK(MPI_Type_commit(&none));
	MPI_OK(MPI_Win_fence(0, win));
	double dz = 0;
	int right = (t_rank + 1) % t_size;
	MPI_OK(MPI_Accumulate(v, 0, MPI_INT, right, 0, 0, MPI_INT, MPI_SUM, win));
	MPI_OK(MPI_Get_accumulate(v, 0, MPI_INT, &dz, 0, MPI_INT, right, 0, 2, none, MPI_SUM, win));
#ifdef MPIV_MPI_LITE	/* as MPICH; Open MPI 4.1 says MPI_ERR_ARG */
	MPI_OK(MPI_Accumulate(v, 0, MPI_INT, right, 0, 0, MPI_DOUBLE, MPI_SUM, win));
	MPI_OK(MPI_Accumulate(NULL, 3, none, right, 0, 0, MPI_DOUBLE, MPI_PROD, win));
	MPI_OK(MPI_Get_accumulate(v, 0, MPI_DOUBLE, &dz, 0, MPI_INT, right, 0, 2, none, MPI_SUM, win));
#endif
	MPI_OK(MPI_Put(NULL, 1, none, right, 0, 0, MPI_INT, win));
	MPI_OK(MPI_Get(&dz, 0, MPI_DOUBLE, right, 0, 5, none, win));
	MPI_OK(MPI_Accumulate(v, 4, MPI_INT, right, 0, 4, MPI_INT, MPI_SUM, win));
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Type_free(&none));
	for (int i = 0; i < 4; i++)
		CHECK_INT(buf[i], 2 * (i + 1), "accumulate after the errors");
	t_mix(buf, sizeof buf);
	MPI_OK(MPI_Win_free(&win));
	return t_finish();
}
