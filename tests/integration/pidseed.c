/* tests/integration/pidseed.c: a program whose messages and output
 * depend on getpid(), as programs seeded with srand(getpid()) do; used
 * by test_pidns.sh. Deterministic under mpiv only because every
 * incarnation of a rank sees the same pid.
 *   pidseed [ITEMS=300] [DELAY_US=3000]
 * Every rank prints its pid; the workers send theirs to rank 0, which
 * prints them in rank order. Rank 0 shuffles the items 0..ITEMS-1 with
 * srand(getpid()) and hands them out one at a time to whichever worker
 * answers (self-scheduling); a worker answers with only the computed
 * value and its pid, and rank 0 files the value under the item it
 * believes that worker had (a re-execution with another shuffle would
 * file logged answers under the wrong items: "replay diverged", never a
 * wrong value). At the end every rank prints whether getpid() still is
 * the pid it started with (a restored image keeps the old one in
 * memory) and whether the C library's id of its thread is still right
 * (pthread_getcpuclockid of pthread_self() passes it to the kernel),
 * and rank 0 prints every item's value and a digest of them. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long
f(long item)
{
	uint64_t h = (uint64_t)item * 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < 2000; i++)
		h ^= (h >> 29) * 0xbf58476d1ce4e5b9ULL + (uint64_t)i;
	return (long)(h % 1000003);
}

static void
check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "pidseed: %s failed (%d)\n", what, rc);
		MPI_Abort(MPI_COMM_WORLD, 99);
	}
}

int
main(int argc, char **argv)
{
	long items = argc > 1 ? atol(argv[1]) : 300;
	long delay = argc > 2 ? atol(argv[2]) : 3000;
	long pid0 = (long)getpid();
	int me, np;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np < 2 || items < np - 1) {
		fprintf(stderr, "pidseed: needs 2 ranks or more, ITEMS >= size-1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	printf("rank %d: pid %ld\n", me, pid0);
	fflush(stdout);
	if (me == 0) {
		long *order = malloc(sizeof(long) * items);
		long *value = malloc(sizeof(long) * items);
		long *busy = malloc(sizeof(long) * np);
		long *pids = malloc(sizeof(long) * np);
		long next = 0, done = 0, stop = -1;
		uint64_t digest = 1469598103934665603ULL;

		if (!order || !value || !busy || !pids)
			MPI_Abort(MPI_COMM_WORLD, 3);
		for (int w = 1; w < np; w++) {
			check(MPI_Recv(&pids[w], 1, MPI_LONG, w, 3,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE), "Recv pid");
			printf("rank 0: rank %d has pid %ld\n", w, pids[w]);
		}
		fflush(stdout);
		srand((unsigned)pid0);
		for (long i = 0; i < items; i++)
			order[i] = i;
		for (long i = items - 1; i > 0; i--) {
			long j = rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (int w = 1; w < np; w++) {
			busy[w] = order[next++];
			check(MPI_Send(&busy[w], 1, MPI_LONG, w, 1,
			    MPI_COMM_WORLD), "Send");
		}
		while (done < items) {
			long v[2];
			MPI_Status st;
			int w;

			check(MPI_Recv(v, 2, MPI_LONG, MPI_ANY_SOURCE, 2,
			    MPI_COMM_WORLD, &st), "Recv");
			w = st.MPI_SOURCE;
			if (v[1] != pids[w])
				printf("rank 0: MISMATCH rank %d said pid %ld, "
				    "then %ld\n", w, pids[w], v[1]);
			value[busy[w]] = v[0];
			done++;
			if (next < items) {
				busy[w] = order[next++];
				check(MPI_Send(&busy[w], 1, MPI_LONG, w, 1,
				    MPI_COMM_WORLD), "Send");
			} else {
				check(MPI_Send(&stop, 1, MPI_LONG, w, 1,
				    MPI_COMM_WORLD), "Send stop");
			}
			if (done % 50 == 0) {
				printf("rank 0: %ld of %ld done\n", done, items);
				fflush(stdout);
			}
		}
		for (long i = 0; i < items; i++) {
			digest = (digest ^ (uint64_t)value[i]) * 1099511628211ULL;
			if (value[i] != f(i))
				printf("rank 0: item %ld value %ld WRONG\n", i,
				    value[i]);
		}
		printf("rank 0: digest %016llx\n", (unsigned long long)digest);
		free(order);
		free(value);
		free(busy);
		free(pids);
	} else {
		check(MPI_Send(&pid0, 1, MPI_LONG, 0, 3, MPI_COMM_WORLD),
		    "Send pid");
		for (;;) {
			long item, v[2];

			check(MPI_Recv(&item, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE), "Recv item");
			if (item < 0)
				break;
			usleep((useconds_t)delay);
			v[0] = f(item);
			v[1] = (long)getpid();
			check(MPI_Send(v, 2, MPI_LONG, 0, 2, MPI_COMM_WORLD),
			    "Send value");
		}
	}
	if ((long)getpid() == pid0)
		printf("rank %d: pid %ld at the end too\n", me, pid0);
	else
		printf("rank %d: PID CHANGED from %ld to %ld\n", me, pid0,
		    (long)getpid());
	{
		struct timespec ts;
		clockid_t cid;

		if (pthread_getcpuclockid(pthread_self(), &cid) == 0 &&
		    clock_gettime(cid, &ts) == 0)
			printf("rank %d: thread id right\n", me);
		else
			printf("rank %d: THREAD ID STALE\n", me);
	}
	MPI_Finalize();
	return 0;
}
