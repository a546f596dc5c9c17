/*
 * stencil.c: application benchmark, a 2-D Jacobi stencil.
 *
 * The G x G interior of a grid with fixed boundary values is split over a
 * Cartesian process grid (MPI_Dims_create, MPI_Cart_create, no periods).
 * Every iteration each rank posts MPI_Irecv for its four halos, sends its
 * edge rows (contiguous) and columns (packed) with MPI_Isend, completes
 * the eight requests with MPI_Waitall, then replaces every interior point
 * with the mean of its four neighbours. After the timed part rank 0
 * gathers the grid and recomputes it serially: every point must match.
 *
 *   stencil [--quick] [--size G] [--iters K] [--corrupt]
 *
 * --corrupt changes one point of the last rank half way through, which
 * the check must report (the test of the check itself).
 *
 * Output (rank 0):
 *   RESULT app=stencil n=<N> wall_s=<s> grid=<G> iters=<K> dims=<PxQ> checksum=<sum>
 * or "ERROR ..." and exit code 1 on a wrong result.
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the value of global point (i, j), 0 <= i, j <= G + 1, before the first
 * iteration; rows 0 and G + 1 and columns 0 and G + 1 are the boundary
 * and keep it */
static double initial(int i, int j, int g)
{
	if (i == 0)
		return 1.0;
	if (i == g + 1 || j == 0 || j == g + 1)
		return 0.0;
	return (double)((i * 31 + j * 17) % 101) / 100.0;
}

/* one Jacobi sweep of the rows x cols interior of u (row stride ld) into v */
static void sweep(const double *u, double *v, int rows, int cols, int ld)
{
	for (int i = 1; i <= rows; i++)
		for (int j = 1; j <= cols; j++)
			v[i * ld + j] = 0.25 * (u[(i - 1) * ld + j] + u[(i + 1) * ld + j] +
			    u[i * ld + j - 1] + u[i * ld + j + 1]);
}

/* the first index of block c of d blocks over g points */
static int block_lo(int c, int d, int g)
{
	return (int)((long)c * g / d);
}

int main(int argc, char **argv)
{
	int rank, size, g = 768, iters = 300, quick = 0, corrupt = 0;

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
		g = g / 2;
		iters = iters / 3;
	}
	int dims[2] = { 0, 0 }, periods[2] = { 0, 0 }, coords[2];
	MPI_Dims_create(size, 2, dims);
	if (g < 2 * dims[0] || g < 2 * dims[1] || iters < 2) {
		if (rank == 0)
			printf("ERROR app=stencil: grid %d too small for %dx%d ranks\n", g, dims[0], dims[1]);
		MPI_Finalize();
		return 1;
	}
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Cart_coords(cart, rank, 2, coords);
	int up, down, left, right;
	MPI_Cart_shift(cart, 0, 1, &up, &down);
	MPI_Cart_shift(cart, 1, 1, &left, &right);

	int r0 = block_lo(coords[0], dims[0], g), r1 = block_lo(coords[0] + 1, dims[0], g);
	int c0 = block_lo(coords[1], dims[1], g), c1 = block_lo(coords[1] + 1, dims[1], g);
	int rows = r1 - r0, cols = c1 - c0, ld = cols + 2;
	size_t cells = (size_t)(rows + 2) * ld;
	double *u = malloc(cells * sizeof *u), *v = malloc(cells * sizeof *v);
	double *sbuf = malloc(4 * (size_t)(rows > cols ? rows : cols) * sizeof *sbuf);
	double *rbuf = malloc(4 * (size_t)(rows > cols ? rows : cols) * sizeof *rbuf);
	if (!u || !v || !sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 3);
	/* local (i, j) is global (r0 + i, c0 + j); the outer ring is halo or
	 * boundary, the same in both arrays */
	for (int i = 0; i < rows + 2; i++)
		for (int j = 0; j < ld; j++)
			u[i * ld + j] = v[i * ld + j] = initial(r0 + i, c0 + j, g);

	/* halo slots in sbuf/rbuf: 0 up (a row), 1 down, 2 left (a column), 3 right */
	int nb[4] = { up, down, left, right };
	int len[4] = { cols, cols, rows, rows };
	int stride = rows > cols ? rows : cols;

	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		MPI_Request rq[8];
		int nr = 0;
		for (int k = 0; k < 4; k++)
			if (nb[k] != MPI_PROC_NULL)
				MPI_Irecv(rbuf + k * stride, len[k], MPI_DOUBLE, nb[k], 1, cart, &rq[nr++]);
		for (int j = 0; j < cols; j++) {
			sbuf[0 * stride + j] = u[1 * ld + 1 + j];
			sbuf[1 * stride + j] = u[rows * ld + 1 + j];
		}
		for (int i = 0; i < rows; i++) {
			sbuf[2 * stride + i] = u[(1 + i) * ld + 1];
			sbuf[3 * stride + i] = u[(1 + i) * ld + cols];
		}
		for (int k = 0; k < 4; k++)
			if (nb[k] != MPI_PROC_NULL)
				MPI_Isend(sbuf + k * stride, len[k], MPI_DOUBLE, nb[k], 1, cart, &rq[nr++]);
		MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
		for (int j = 0; j < cols; j++) {
			if (up != MPI_PROC_NULL)
				u[0 * ld + 1 + j] = rbuf[0 * stride + j];
			if (down != MPI_PROC_NULL)
				u[(rows + 1) * ld + 1 + j] = rbuf[1 * stride + j];
		}
		for (int i = 0; i < rows; i++) {
			if (left != MPI_PROC_NULL)
				u[(1 + i) * ld] = rbuf[2 * stride + i];
			if (right != MPI_PROC_NULL)
				u[(1 + i) * ld + cols + 1] = rbuf[3 * stride + i];
		}
		sweep(u, v, rows, cols, ld);
		double *t = u;
		u = v;
		v = t;
		if (corrupt && it == iters / 2 && rank == size - 1)
			u[(rows / 2 + 1) * ld + cols / 2 + 1] += 1e-3;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double wall = MPI_Wtime() - t0;

	/* the check: rank 0 gathers every block and recomputes the grid */
	double local = 0, sum = 0;
	for (int i = 1; i <= rows; i++)
		for (int j = 1; j <= cols; j++)
			local += u[i * ld + j];
	MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	int bad = 0;
	if (rank != 0) {
		double *blk = malloc((size_t)rows * cols * sizeof *blk);
		if (!blk)
			MPI_Abort(MPI_COMM_WORLD, 3);
		for (int i = 0; i < rows; i++)
			memcpy(blk + (size_t)i * cols, u + (size_t)(i + 1) * ld + 1, cols * sizeof *blk);
		MPI_Send(blk, rows * cols, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
		free(blk);
	} else {
		int gl = g + 2;
		double *a = malloc((size_t)gl * gl * sizeof *a), *b = malloc((size_t)gl * gl * sizeof *b);
		double *blk = malloc((size_t)(g / dims[0] + 1) * (g / dims[1] + 1) * sizeof *blk);
		if (!a || !b || !blk)
			MPI_Abort(MPI_COMM_WORLD, 3);
		for (int i = 0; i < gl; i++)
			for (int j = 0; j < gl; j++)
				a[i * gl + j] = b[i * gl + j] = initial(i, j, g);
		for (int it = 0; it < iters; it++) {
			sweep(a, b, g, g, gl);
			double *t = a;
			a = b;
			b = t;
		}
		double maxerr = 0;
		int wi = 0, wj = 0;
		for (int src = 0; src < size; src++) {
			int cc[2];
			MPI_Cart_coords(cart, src, 2, cc);
			int q0 = block_lo(cc[0], dims[0], g), q1 = block_lo(cc[0] + 1, dims[0], g);
			int p0 = block_lo(cc[1], dims[1], g), p1 = block_lo(cc[1] + 1, dims[1], g);
			int br = q1 - q0, bc = p1 - p0;
			if (src == 0) {
				for (int i = 0; i < br; i++)
					memcpy(blk + (size_t)i * bc, u + (size_t)(i + 1) * ld + 1, bc * sizeof *blk);
			} else {
				MPI_Recv(blk, br * bc, MPI_DOUBLE, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
			for (int i = 0; i < br; i++)
				for (int j = 0; j < bc; j++) {
					double e = fabs(blk[(size_t)i * bc + j] - a[(size_t)(q0 + 1 + i) * gl + p0 + 1 + j]);
					if (e > maxerr) {
						maxerr = e;
						wi = q0 + 1 + i;
						wj = p0 + 1 + j;
					}
				}
		}
		if (maxerr > 1e-12) {
			printf("ERROR app=stencil n=%d: point (%d,%d) differs from the serial grid by %g\n",
			    size, wi, wj, maxerr);
			bad = 1;
		} else {
			printf("RESULT app=stencil n=%d wall_s=%.4f grid=%d iters=%d dims=%dx%d checksum=%.10e\n",
			    size, wall, g, iters, dims[0], dims[1], sum);
		}
		free(a);
		free(b);
		free(blk);
	}
	free(u);
	free(v);
	free(sbuf);
	free(rbuf);
	MPI_Comm_free(&cart);
	MPI_Finalize();
	return bad;
}
