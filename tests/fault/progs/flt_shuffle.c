/* flt_shuffle: a master-worker that shuffles its work with
 * srand(getpid()), as well-known Mandelbrot examples do, or with the
 * clock: NOT deterministic across incarnations with the clock, nor with
 * the pid where a rank's pid changes with its incarnation (a node
 * without PID namespaces for ranks, README "What a program must not
 * depend on").
 *   flt_shuffle [ITEMS=400] [DELAY_US=5000] [SEED=pid|clock]
 * Rank 0 shuffles the items 0..ITEMS-1, hands them out one at a time to
 * whichever worker returns a result (the classic self-scheduling loop),
 * and files each result under the item it believes that worker had: the
 * message carries only the computed value, not the item. It prints
 * "shuffle: item I value V" in item order at the end, and V must be
 * f(I). A re-executed rank 0 (other seed, other order) that replayed the
 * logged results against its new assignment would file them under the
 * wrong items: the job must then fail with "replay diverged", never
 * print a wrong value. */
#include "flt.h"
#include <time.h>
#include <unistd.h>

static long f(long item) { return (long)(flt_burn((uint64_t)item, 2000) % 1000003); }

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long items = flt_arg(argc, argv, 1, 400), delay = flt_arg(argc, argv, 2, 5000);
	FLT_ASSERT(np >= 2 && np - 1 <= items, "needs 2 ranks or more, at most ITEMS+1");
	if (me == 0) {
		long *order = malloc(sizeof(long) * items), *value = malloc(sizeof(long) * items);
		long *busy = malloc(sizeof(long) * np), next = 0, done = 0, stop = -1;
		FLT_ASSERT(order && value && busy, "out of memory");
		if (argc > 3 && strcmp(argv[3], "clock") == 0) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			srand((unsigned)(ts.tv_sec ^ ts.tv_nsec));
		} else {
			srand((unsigned)getpid());
		}
		for (long i = 0; i < items; i++)
			order[i] = i;
		for (long i = items - 1; i > 0; i--) {
			long j = rand() % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int w = 1; w < np; w++) {
			busy[w] = order[next++];
			FLT_MPI(MPI_Send(&busy[w], 1, MPI_LONG, w, 1, MPI_COMM_WORLD));
		}
		while (done < items) {
			long v;
			MPI_Status st;
			FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st));
			value[busy[st.MPI_SOURCE]] = v;
			done++;
			if (next < items) {
				busy[st.MPI_SOURCE] = order[next++];
				FLT_MPI(MPI_Send(&busy[st.MPI_SOURCE], 1, MPI_LONG, st.MPI_SOURCE, 1, MPI_COMM_WORLD));
			} else {
				FLT_MPI(MPI_Send(&stop, 1, MPI_LONG, st.MPI_SOURCE, 1, MPI_COMM_WORLD));
			}
			if (done % 20 == 0)
				FLT_SAY("shuffle: %ld of %ld done\n", done, items);
		}
		for (long i = 0; i < items; i++)
			FLT_SAY("shuffle: item %ld value %ld%s\n", i, value[i], value[i] == f(i) ? "" : " WRONG");
	} else {
		for (;;) {
			long item, v;
			FLT_MPI(MPI_Recv(&item, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			if (item < 0)
				break;
			usleep((useconds_t)delay);
			v = f(item);
			FLT_MPI(MPI_Send(&v, 1, MPI_LONG, 0, 2, MPI_COMM_WORLD));
		}
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
