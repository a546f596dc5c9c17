/*
 * cg.c: application benchmark, a conjugate-gradient kernel.
 *
 * Solves A x = b for the 5-point Laplacian A of a G x G grid (zero
 * Dirichlet boundary, b = 1, x0 = 0) with a fixed number K of
 * unpreconditioned CG iterations. The grid is split into blocks of rows;
 * every iteration exchanges the search direction's edge rows with both
 * neighbours (MPI_Irecv, MPI_Isend, MPI_Waitall), multiplies by A, and
 * reduces two dot products with MPI_Allreduce (one double each).
 *
 * The check, after the timed part: the true residual |b - A x| must
 * equal the one the iteration carried (a message lost or changed on the
 * way leaves them apart), every rank must have the same residual, and
 * rank 0 runs the same iterations serially and must find the same
 * residual (relative difference below 1e-6).
 *
 *   cg [--quick] [--size G] [--iters K] [--corrupt]
 *
 * --corrupt changes one value of A p on the last rank half way through,
 * which the check must report.
 *
 * Output (rank 0):
 *   RESULT app=cg n=<N> wall_s=<s> grid=<G> iters=<K> res_rel=<|r_K|/|b|>
 * or "ERROR ..." and exit code 1.
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* q = A p over rows 1..rows of arrays of g columns whose rows 0 and
 * rows + 1 hold the neighbours' rows (zero at the boundary) */
static void matvec(const double *p, double *q, int rows, int g)
{
	for (int i = 1; i <= rows; i++) {
		const double *c = p + (size_t)i * g, *n = c - g, *s = c + g;
		double *o = q + (size_t)i * g;
		o[0] = 4 * c[0] - n[0] - s[0] - c[1];
		for (int j = 1; j < g - 1; j++)
			o[j] = 4 * c[j] - n[j] - s[j] - c[j - 1] - c[j + 1];
		o[g - 1] = 4 * c[g - 1] - n[g - 1] - s[g - 1] - c[g - 2];
	}
}

static double dot(const double *a, const double *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

/* halo exchange of rows 1 and rows into the neighbours' rows + 1 and 0 */
static void halo(double *v, int rows, int g, int up, int down)
{
	MPI_Request rq[4];
	int n = 0;
	if (up != MPI_PROC_NULL) {
		MPI_Irecv(v, g, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rq[n++]);
		MPI_Isend(v + g, g, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &rq[n++]);
	}
	if (down != MPI_PROC_NULL) {
		MPI_Irecv(v + (size_t)(rows + 1) * g, g, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &rq[n++]);
		MPI_Isend(v + (size_t)rows * g, g, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &rq[n++]);
	}
	MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
}

/* K iterations of CG on rows x g (rows 0 and rows + 1: halo); x, r, p, q
 * have (rows + 2) * g entries, halos zero; returns |r_K|^2. With
 * comm == 0 (the serial check) there are no neighbours and no reduction. */
static double cg(double *x, double *r, double *p, double *q, int rows, int g, int iters,
    int up, int down, int comm, int corrupt_at)
{
	size_t n = (size_t)rows * g, o = g;
	double rr, d;
	for (size_t i = 0; i < n; i++) {
		x[o + i] = 0;
		r[o + i] = p[o + i] = 1;	/* r = b - A 0 = b */
	}
	rr = dot(r + o, r + o, n);
	if (comm)
		MPI_Allreduce(MPI_IN_PLACE, &rr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int it = 0; it < iters; it++) {
		if (comm)
			halo(p, rows, g, up, down);
		matvec(p, q, rows, g);
		if (it == corrupt_at)
			q[o + n / 2] += 1;
		d = dot(p + o, q + o, n);
		if (comm)
			MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double alpha = rr / d;
		for (size_t i = o; i < o + n; i++) {
			x[i] += alpha * p[i];
			r[i] -= alpha * q[i];
		}
		d = dot(r + o, r + o, n);
		if (comm)
			MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double beta = d / rr;
		rr = d;
		for (size_t i = o; i < o + n; i++)
			p[i] = r[i] + beta * p[i];
	}
	return rr;
}

/* |b - A x|^2 over this rank's rows (x's halo rows filled) */
static double true_res(const double *x, double *q, int rows, int g)
{
	double s = 0;
	matvec(x, q, rows, g);
	for (size_t i = g; i < (size_t)(rows + 1) * g; i++)
		s += (1 - q[i]) * (1 - q[i]);
	return s;
}

int main(int argc, char **argv)
{
	int rank, size, g = 256, iters = 500, quick = 0, corrupt = 0;

	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* each line out at once, even if the job is torn down */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--corrupt"))
			corrupt = 1;
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			g = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
	}
	if (quick) {
		g /= 2;
		iters /= 4;
	}
	if (g < 2 * size || g < 3 || iters < 2) {
		if (rank == 0)
			printf("ERROR app=cg: grid %d too small for %d ranks\n", g, size);
		MPI_Finalize();
		return 1;
	}
	int lo = (int)((long)rank * g / size), hi = (int)((long)(rank + 1) * g / size);
	int rows = hi - lo;
	int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	size_t cells = (size_t)(rows + 2) * g;
	double *x = calloc(cells, sizeof *x), *r = calloc(cells, sizeof *r);
	double *p = calloc(cells, sizeof *p), *q = calloc(cells, sizeof *q);
	if (!x || !r || !p || !q)
		MPI_Abort(MPI_COMM_WORLD, 3);

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	double rr = cg(x, r, p, q, rows, g, iters, up, down, 1,
	    corrupt && rank == size - 1 ? iters / 2 : -1);
	MPI_Barrier(MPI_COMM_WORLD);
	double wall = MPI_Wtime() - t0;

	/* the check */
	halo(x, rows, g, up, down);
	double tt = true_res(x, q, rows, g), rr0 = rr, rrmax = rr, bnorm = g;
	MPI_Allreduce(MPI_IN_PLACE, &tt, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Bcast(&rr0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, &rrmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	int bad = 0;
	if (rank == 0) {
		double res = sqrt(rr), tres = sqrt(tt), sres = 0;
		size_t all = (size_t)(g + 2) * g;
		double *sx = calloc(all, sizeof *sx), *sr = calloc(all, sizeof *sr);
		double *sp = calloc(all, sizeof *sp), *sq = calloc(all, sizeof *sq);
		if (!sx || !sr || !sp || !sq)
			MPI_Abort(MPI_COMM_WORLD, 3);
		sres = sqrt(cg(sx, sr, sp, sq, g, g, iters, MPI_PROC_NULL, MPI_PROC_NULL, 0, -1));
		if (rrmax != rr0) {
			printf("ERROR app=cg n=%d: the ranks disagree on the residual (%.17g, %.17g)\n",
			    size, sqrt(rr0), sqrt(rrmax));
			bad = 1;
		} else if (fabs(tres - res) > 1e-9 * bnorm) {
			printf("ERROR app=cg n=%d: true residual %.12g, iterated %.12g\n", size, tres, res);
			bad = 1;
		} else if (fabs(res - sres) > 1e-6 * sres) {
			printf("ERROR app=cg n=%d: residual %.12g, serial run %.12g\n", size, res, sres);
			bad = 1;
		} else {
			printf("RESULT app=cg n=%d wall_s=%.4f grid=%d iters=%d res_rel=%.6e\n",
			    size, wall, g, iters, res / bnorm);
		}
		free(sx);
		free(sr);
		free(sp);
		free(sq);
	}
	free(x);
	free(r);
	free(p);
	free(q);
	MPI_Finalize();
	return bad;
}
