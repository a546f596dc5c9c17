/*
 * master_worker.c: application benchmark, a task farm with an
 * Iprobe-polling master.
 *
 * Rank 0 (the master) holds T tasks: factor N = p * q, p <= q two primes
 * drawn with a fixed seed (p from 1000 to 40000, so a task costs from a
 * few µs to ~0.2 ms of trial division). It hands one task to every worker,
 * then polls with MPI_Iprobe(MPI_ANY_SOURCE) until a result is there,
 * receives it with MPI_Recv(MPI_ANY_SOURCE) and hands that worker the next
 * task (or a stop message once none is left). Workers receive, factor,
 * send back {task, smallest factor}. The master checks that every task
 * was answered exactly once with its p.
 *
 *   master_worker [--quick] [--tasks T] [--corrupt]
 *
 * --corrupt makes the last rank answer its first task wrongly, which the
 * check must report.
 *
 * Output (rank 0):
 *   RESULT app=master_worker n=<N> wall_s=<s> tasks=<T> polls=<fruitless Iprobes> tasks_min=<a> tasks_max=<b>
 * (tasks_min/max: fewest and most tasks one worker did) or "ERROR ..."
 * and exit code 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_TASK = 1, TAG_STOP = 2, TAG_RESULT = 3 };
enum { PMIN = 1000, PMAX = 40000 };

/* the smallest factor > 1 of an odd n (n itself if prime) */
static long long smallest_factor(long long n)
{
	for (long long d = 3; d * d <= n; d += 2)
		if (n % d == 0)
			return d;
	return n;
}

static unsigned long long lcg(unsigned long long *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void worker(int rank, int size, int corrupt)
{
	int first = 1;
	for (;;) {
		long long task[2], res[2];
		MPI_Status st;
		MPI_Recv(task, 2, MPI_LONG_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		if (st.MPI_TAG == TAG_STOP)
			break;
		res[0] = task[0];
		res[1] = smallest_factor(task[1]);
		if (corrupt && first && rank == size - 1)
			res[1] += 2;
		first = 0;
		MPI_Send(res, 2, MPI_LONG_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
	}
}

int main(int argc, char **argv)
{
	int rank, size, ntask = 16000, corrupt = 0;

	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* each line out at once, even if the job is torn down */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			ntask /= 4;
		else if (!strcmp(argv[i], "--corrupt"))
			corrupt = 1;
		else if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
			ntask = atoi(argv[++i]);
	}
	if (size < 2 || ntask < size) {
		if (rank == 0)
			printf("ERROR app=master_worker: needs 2 ranks or more and at least as many tasks\n");
		MPI_Finalize();
		return 1;
	}

	long long *p = NULL, *n = NULL;
	int *done = NULL, *per = NULL;
	if (rank == 0) {
		/* the odd primes below PMAX, then the tasks */
		char *comp = calloc(PMAX + 1, 1);
		long long *pr = malloc(PMAX * sizeof *pr);
		p = malloc(ntask * sizeof *p);
		n = malloc(ntask * sizeof *n);
		done = calloc(ntask, sizeof *done);
		per = calloc(size, sizeof *per);
		if (!comp || !pr || !p || !n || !done || !per)
			MPI_Abort(MPI_COMM_WORLD, 3);
		int np = 0, lo = -1;
		for (long long i = 3; i <= PMAX; i += 2) {
			if (comp[i])
				continue;
			if (i >= PMIN && lo < 0)
				lo = np;
			pr[np++] = i;
			for (long long k = i * i; k <= PMAX; k += 2 * i)
				comp[k] = 1;
		}
		unsigned long long seed = 12345;
		for (int t = 0; t < ntask; t++) {
			long long a = pr[lo + lcg(&seed) % (np - lo)], b = pr[lo + lcg(&seed) % (np - lo)];
			p[t] = a < b ? a : b;
			n[t] = a * b;
		}
		free(comp);
		free(pr);
	}

	long long polls = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	if (rank == 0) {
		int next = 0, answered = 0, bad = 0;
		for (int w = 1; w < size; w++, next++) {
			long long task[2] = { next, n[next] };
			MPI_Send(task, 2, MPI_LONG_LONG, w, TAG_TASK, MPI_COMM_WORLD);
		}
		while (answered < ntask) {
			int flag = 0;
			MPI_Status st;
			MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
			if (!flag) {
				polls++;
				continue;
			}
			long long res[2];
			MPI_Recv(res, 2, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
			int w = st.MPI_SOURCE;
			answered++;
			per[w]++;
			if (res[0] < 0 || res[0] >= ntask || done[res[0]]++ || res[1] != p[res[0]]) {
				if (!bad++)
					printf("ERROR app=master_worker n=%d: task %lld from rank %d answered %lld\n",
					    size, res[0], w, res[1]);
			}
			if (next < ntask) {
				long long task[2] = { next, n[next] };
				MPI_Send(task, 2, MPI_LONG_LONG, w, TAG_TASK, MPI_COMM_WORLD);
				next++;
			} else {
				long long stop[2] = { -1, 0 };
				MPI_Send(stop, 2, MPI_LONG_LONG, w, TAG_STOP, MPI_COMM_WORLD);
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
		double wall = MPI_Wtime() - t0;
		for (int t = 0; t < ntask && !bad; t++)
			if (done[t] != 1) {
				printf("ERROR app=master_worker n=%d: task %d answered %d times\n", size, t, done[t]);
				bad = 1;
			}
		int mn = ntask, mx = 0;
		for (int w = 1; w < size; w++) {
			mn = per[w] < mn ? per[w] : mn;
			mx = per[w] > mx ? per[w] : mx;
		}
		if (!bad)
			printf("RESULT app=master_worker n=%d wall_s=%.4f tasks=%d polls=%lld tasks_min=%d tasks_max=%d\n",
			    size, wall, ntask, polls, mn, mx);
		free(p);
		free(n);
		free(done);
		free(per);
		MPI_Finalize();
		return bad != 0;
	}
	worker(rank, size, corrupt);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
