/* app_stencil: 1-D heat diffusion, block-distributed, halo exchange with
 * Isend/Irecv/Waitall each step, residual via Allreduce every 10 steps,
 * final field gathered and checksummed at rank 0. Deterministic output.
 * Compares against a serial computation of the same problem. */
#include "mpitest.h"
#include <math.h>

enum { NGLOBAL = 960, STEPS = 100 };

static double init(int i) { return (i % 97) * 0.25 + (i == NGLOBAL / 2 ? 100.0 : 0.0); }

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "app_stencil");
	int n = NGLOBAL / t_size + (t_rank < NGLOBAL % t_size);
	int off = t_rank * (NGLOBAL / t_size) + (t_rank < NGLOBAL % t_size ? t_rank : NGLOBAL % t_size);
	double *u = malloc((n + 2) * sizeof(double)), *v = malloc((n + 2) * sizeof(double));
	for (int i = 0; i < n; i++)
		u[i + 1] = init(off + i);
	int left = t_rank > 0 ? t_rank - 1 : MPI_PROC_NULL;
	int right = t_rank < t_size - 1 ? t_rank + 1 : MPI_PROC_NULL;
	double resid = 0;
	for (int s = 0; s < STEPS; s++) {
		MPI_Request rq[4];
		u[0] = u[1];		/* reflective boundary if no neighbour */
		u[n + 1] = u[n];
		MPI_OK(MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[0]));
		MPI_OK(MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[1]));
		MPI_OK(MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[2]));
		MPI_OK(MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[3]));
		MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
		if (left == MPI_PROC_NULL)
			u[0] = u[1];
		if (right == MPI_PROC_NULL)
			u[n + 1] = u[n];
		double local = 0;
		for (int i = 1; i <= n; i++) {
			v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
			local += fabs(v[i] - u[i]);
		}
		double *t = u; u = v; v = t;
		if (s % 10 == 9) {
			MPI_OK(MPI_Allreduce(&local, &resid, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
			t_mix(&resid, sizeof resid);	/* identical on every rank */
		}
	}
	int *cnts = malloc(t_size * sizeof(int)), *dsp = malloc(t_size * sizeof(int));
	for (int r = 0, o = 0; r < t_size; r++) {
		cnts[r] = NGLOBAL / t_size + (r < NGLOBAL % t_size);
		dsp[r] = o;
		o += cnts[r];
	}
	double *all = t_rank == 0 ? malloc(NGLOBAL * sizeof(double)) : NULL;
	MPI_OK(MPI_Gatherv(&u[1], n, MPI_DOUBLE, all, cnts, dsp, MPI_DOUBLE, 0, MPI_COMM_WORLD));
	if (t_rank == 0) {
		/* serial reference */
		double *a = malloc((NGLOBAL + 2) * sizeof(double)), *b = malloc((NGLOBAL + 2) * sizeof(double));
		for (int i = 0; i < NGLOBAL; i++)
			a[i + 1] = init(i);
		for (int s = 0; s < STEPS; s++) {
			a[0] = a[1];
			a[NGLOBAL + 1] = a[NGLOBAL];
			for (int i = 1; i <= NGLOBAL; i++)
				b[i] = a[i] + 0.25 * (a[i - 1] - 2 * a[i] + a[i + 1]);
			double *t = a; a = b; b = t;
		}
		double sum = 0;
		for (int i = 0; i < NGLOBAL; i++) {
			CHECK(all[i] == a[i + 1], "cell %d: parallel %.17g serial %.17g", i, all[i], a[i + 1]);
			sum += all[i];
		}
		printf("app_stencil: %d cells, %d steps, sum %.6f, last residual %.6f\n", NGLOBAL, STEPS, sum, resid);
		free(a); free(b); free(all);
	}
	free(u); free(v); free(cnts); free(dsp);
	return t_finish();
}
