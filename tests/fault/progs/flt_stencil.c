/* flt_stencil: 1-D explicit diffusion, halo exchange with
 * Isend/Irecv/Waitall each step, Allreduce of the change every 25 steps.
 *   flt_stencil [STEPS=3000] [CELLS_PER_RANK=4000]
 * Every rank prints a line every STEPS/6 steps (use --tag-output); rank 0
 * prints the global residuals. Fixed-point arithmetic keeps the result
 * independent of the number of ranks' summation order. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long steps = flt_arg(argc, argv, 1, 3000), n = flt_arg(argc, argv, 2, 4000);
	int64_t *a = malloc(sizeof(int64_t) * (size_t)(n + 2)), *b = malloc(sizeof(int64_t) * (size_t)(n + 2));
	for (long i = 1; i <= n; i++)
		a[i] = (int64_t)((me * n + i) % 1009) << 20;
	int lo = me > 0 ? me - 1 : MPI_PROC_NULL, hi = me < np - 1 ? me + 1 : MPI_PROC_NULL;
	long every = steps / 6 > 0 ? steps / 6 : 1;
	for (long s = 1; s <= steps; s++) {
		MPI_Request rq[4];
		a[0] = a[1];
		a[n + 1] = a[n];
		FLT_MPI(MPI_Irecv(&a[0], 1, MPI_INT64_T, lo, 1, MPI_COMM_WORLD, &rq[0]));
		FLT_MPI(MPI_Irecv(&a[n + 1], 1, MPI_INT64_T, hi, 2, MPI_COMM_WORLD, &rq[1]));
		FLT_MPI(MPI_Isend(&a[n], 1, MPI_INT64_T, hi, 1, MPI_COMM_WORLD, &rq[2]));
		FLT_MPI(MPI_Isend(&a[1], 1, MPI_INT64_T, lo, 2, MPI_COMM_WORLD, &rq[3]));
		FLT_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
		int64_t change = 0;
		for (long i = 1; i <= n; i++) {
			b[i] = a[i] + (a[i - 1] - 2 * a[i] + a[i + 1]) / 4;
			change += b[i] > a[i] ? b[i] - a[i] : a[i] - b[i];
		}
		int64_t *t = a; a = b; b = t;
		if (s % 25 == 0) {
			int64_t total;
			FLT_MPI(MPI_Allreduce(&change, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
			if (me == 0 && s % every == 0)
				FLT_SAY("stencil: step %ld change %lld\n", s, (long long)total);
		}
		if (s % every == 0) {
			uint64_t h = 0;
			for (long i = 1; i <= n; i++)
				h = flt_mix(h, (uint64_t)a[i]);
			FLT_SAY("stencil: rank %d step %ld local %016llx\n", me, s, (unsigned long long)h);
		}
	}
	int64_t sum = 0, all;
	for (long i = 1; i <= n; i++)
		sum += a[i];
	FLT_MPI(MPI_Reduce(&sum, &all, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
	if (me == 0)
		FLT_SAY("stencil: done %ld steps, total %lld\n", steps, (long long)all);
	FLT_MPI(MPI_Finalize());
	return 0;
}
