/* rma_passive: passive-target one-sided communication.
 *  - tickets: every rank fetch-and-adds a counter at rank 0 under a
 *    shared lock, TICKETS times; the tickets, gathered, are exactly
 *    0 .. N*TICKETS-1 (each add seen once) and the counter ends at N*TICKETS;
 *  - exclusive: every rank reads a value at the last rank, adds to it and
 *    writes it back inside MPI_Win_lock(EXCLUSIVE) (a flush between the
 *    read and the write): no update is lost;
 *  - a spin lock made of MPI_Compare_and_swap on a word at rank 0 under
 *    MPI_Win_lock_all, guarding a non-atomic get/put increment;
 *  - lock_all: every rank puts into its slot at every rank, flush_all,
 *    barrier: each rank sees every slot (after MPI_Win_sync);
 *  - MPI_Rput/MPI_Rget/MPI_Raccumulate/MPI_Rget_accumulate in a lock_all
 *    epoch;
 *  - a flag: rank 0 puts it into the last rank, which polls it with
 *    MPI_Win_sync until it changes (the target serves while it polls);
 *  - a lock of the own rank, exclusive, with its local reads;
 *  - errors: unlock without lock, lock twice, a fence inside a lock epoch.
 * Only order-independent facts go into the checksum. */
#include "mpitest.h"

#define TICKETS 6
#define ROUNDS 5
#define SPINS 4

struct wmem {
	long counter, value, spin, shared, flag;
	long slot[64];
};

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

#define OFF(f) ((MPI_Aint)offsetof(struct wmem, f))

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "rma_passive");
	struct wmem *w;
	MPI_Win win;
	int last = t_size - 1, rc, cls;
	CHECK(t_size <= 64, "at most 64 ranks");
	MPI_OK(MPI_Win_allocate(sizeof(*w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, win));
	memset(w, 0, sizeof(*w));
	MPI_OK(MPI_Win_unlock(t_rank, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* tickets */
	long one = 1, tickets[TICKETS];
	for (int i = 0; i < TICKETS; i++) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		MPI_OK(MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG, 0, OFF(counter), MPI_SUM, win));
		MPI_OK(MPI_Win_unlock(0, win));
	}
	long *all = malloc(sizeof(long) * TICKETS * (size_t)t_size);
	MPI_OK(MPI_Gather(tickets, TICKETS, MPI_LONG, all, TICKETS, MPI_LONG, 0, MPI_COMM_WORLD));
	if (t_rank == 0) {
		qsort(all, (size_t)TICKETS * (size_t)t_size, sizeof(long), cmp_long);
		for (int i = 0; i < TICKETS * t_size; i++)
			CHECK_INT(all[i], i, "sorted ticket");
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		CHECK_INT(w->counter, TICKETS * t_size, "counter after the tickets");
		MPI_OK(MPI_Win_unlock(0, win));
	}
	free(all);
	t_mix_int(TICKETS * t_size);

	/* exclusive read-modify-write */
	for (int r = 0; r < ROUNDS; r++) {
		long v = -1;
		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win));
		MPI_OK(MPI_Get(&v, 1, MPI_LONG, last, OFF(value), 1, MPI_LONG, win));
		MPI_OK(MPI_Win_flush(last, win));
		v += t_rank + 1;
		MPI_OK(MPI_Put(&v, 1, MPI_LONG, last, OFF(value), 1, MPI_LONG, win));
		MPI_OK(MPI_Win_unlock(last, win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (t_rank == last) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win));
		CHECK_INT(w->value, (long)ROUNDS * t_size * (t_size + 1) / 2, "exclusive increments");
		MPI_OK(MPI_Win_unlock(last, win));
	}
	t_mix_int((long)ROUNDS * t_size * (t_size + 1) / 2);

	/* a spin lock of compare-and-swap under lock_all */
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int r = 0; r < SPINS; r++) {
		long free_v = 0, mine = t_rank + 1, old = -1, v = -1;
		for (long tries = 0;; tries++) {
			MPI_OK(MPI_Compare_and_swap(&mine, &free_v, &old, MPI_LONG, 0, OFF(spin), win));
			MPI_OK(MPI_Win_flush(0, win));
			if (old == 0)
				break;
			CHECK(tries < 10000000, "spin lock never free");
		}
		MPI_OK(MPI_Get(&v, 1, MPI_LONG, 0, OFF(shared), 1, MPI_LONG, win));
		MPI_OK(MPI_Win_flush(0, win));
		v++;
		MPI_OK(MPI_Put(&v, 1, MPI_LONG, 0, OFF(shared), 1, MPI_LONG, win));
		MPI_OK(MPI_Win_flush(0, win));
		MPI_OK(MPI_Compare_and_swap(&free_v, &mine, &old, MPI_LONG, 0, OFF(spin), win));
		MPI_OK(MPI_Win_flush(0, win));
		CHECK_INT(old, mine, "spin lock held by this rank");
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (t_rank == 0) {
		MPI_OK(MPI_Win_sync(win));
		CHECK_INT(w->shared, (long)SPINS * t_size, "increments under the spin lock");
	}

	/* lock_all, a put into every rank, flush_all */
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int t = 0; t < t_size; t++) {
		long v = 1000L * t_rank + t;
		MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, OFF(slot) + t_rank * (MPI_Aint)sizeof(long), 1, MPI_LONG, win));
	}
	MPI_OK(MPI_Win_flush_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(win));
	for (int o = 0; o < t_size; o++)
		CHECK_INT(w->slot[o], 1000L * o + t_rank, "slot put under lock_all");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* request-based operations */
	int right = (t_rank + 1) % t_size;
	long got = -1, add = 5, fetched = -1, seven = 7;
	MPI_Request rq[4];
	MPI_OK(MPI_Rget(&got, 1, MPI_LONG, right, OFF(slot) + t_rank * (MPI_Aint)sizeof(long), 1, MPI_LONG, win, &rq[0]));
	MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	CHECK_INT(got, 1000L * t_rank + right, "Rget");
	MPI_OK(MPI_Raccumulate(&seven, 1, MPI_LONG, right, OFF(slot) + t_rank * (MPI_Aint)sizeof(long), 1, MPI_LONG, MPI_REPLACE, win, &rq[1]));
	MPI_OK(MPI_Rput(&seven, 1, MPI_LONG, right, OFF(shared), 1, MPI_LONG, win, &rq[0]));
	MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Raccumulate(&add, 1, MPI_LONG, right, OFF(slot) + t_rank * (MPI_Aint)sizeof(long), 1, MPI_LONG, MPI_SUM, win, &rq[2]));
	MPI_OK(MPI_Rget_accumulate(&add, 1, MPI_LONG, &fetched, 1, MPI_LONG, right, OFF(slot) + t_rank * (MPI_Aint)sizeof(long), 1, MPI_LONG, MPI_SUM, win, &rq[3]));
	MPI_OK(MPI_Waitall(3, &rq[1], MPI_STATUSES_IGNORE));
	CHECK_INT(fetched, 12, "Rget_accumulate after two Raccumulates");
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(win));
	CHECK_INT(w->slot[(t_rank + t_size - 1) % t_size], 17, "slot after the request-based calls");
	CHECK_INT(w->shared, 7, "Rput");

	/* a flag polled with MPI_Win_sync */
	if (t_rank == 0) {
		long f = 42;
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win));
		MPI_OK(MPI_Put(&f, 1, MPI_LONG, last, OFF(flag), 1, MPI_LONG, win));
		MPI_OK(MPI_Win_unlock(last, win));
	}
	if (t_rank == last) {
		double t0 = MPI_Wtime();
		volatile long *flag = &w->flag;
		for (;;) {
			MPI_OK(MPI_Win_sync(win));
			if (*flag != 0)
				break;
			CHECK(MPI_Wtime() - t0 < 30, "the flag never came");
		}
		CHECK_INT(*flag, 42, "flag");
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

#ifdef MPIV_MPI_LITE
	/* errors (ERRORS_RETURN): the window keeps working */
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	rc = MPI_Win_unlock(right, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "unlock without a lock");
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "a second lock of one rank");
	rc = MPI_Win_fence(0, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "a fence inside a lock epoch");
	rc = MPI_Win_lock(7, right, 0, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_LOCKTYPE, "an unknown lock type");
	MPI_OK(MPI_Win_unlock(right, win));
	rc = MPI_Rput(&seven, 1, MPI_LONG, right, 0, 1, MPI_LONG, win, &rq[0]);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "Rput outside a passive epoch");
	rc = MPI_Win_flush(right, win);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_RMA_SYNC, "flush without a lock");
	/* a window whose program promised no locks (info no_locks) */
	MPI_Info nl;
	MPI_Win w2;
	long b2 = 0, nine = 9;
	MPI_OK(MPI_Info_create(&nl));
	MPI_OK(MPI_Info_set(nl, "no_locks", "true"));
	MPI_OK(MPI_Win_create(&b2, sizeof b2, sizeof b2, nl, MPI_COMM_WORLD, &w2));
	MPI_OK(MPI_Info_free(&nl));
	MPI_OK(MPI_Win_set_errhandler(w2, MPI_ERRORS_RETURN));
	if (t_size > 1) {
		rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w2);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK_INT(cls, MPI_ERR_RMA_SYNC, "lock of another rank under no_locks");
	}
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, w2));
	MPI_OK(MPI_Put(&nine, 1, MPI_LONG, t_rank, 0, 1, MPI_LONG, w2));
	MPI_OK(MPI_Win_unlock(t_rank, w2));
	CHECK_INT(b2, 9, "own lock under no_locks");
	MPI_OK(MPI_Win_free(&w2));
#else
	(void)rc;
	(void)cls;
#endif
	/* and a fence epoch after all that */
	MPI_OK(MPI_Win_fence(0, win));
	long mark = 100 + t_rank;
	MPI_OK(MPI_Put(&mark, 1, MPI_LONG, right, OFF(flag), 1, MPI_LONG, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	CHECK_INT(w->flag, 100 + (t_rank + t_size - 1) % t_size, "fence after passive epochs");
	t_mix_int(w->flag - (t_rank + t_size - 1) % t_size);
	MPI_OK(MPI_Win_free(&win));
	return t_finish();
}
