/* coll_scan: Scan, Exscan (incl. IN_PLACE), Reduce_scatter with uneven
 * counts (incl. zero counts), Reduce_scatter_block, IN_PLACE variants. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "coll_scan");
	int n = t_size;
	int s[4], r[4];
	for (int i = 0; i < 4; i++)
		s[i] = t_rank + i * 10;
	MPI_OK(MPI_Scan(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < 4; i++)
		CHECK_INT(r[i], t_rank * (t_rank + 1) / 2 + (t_rank + 1) * i * 10, "Scan SUM");
	t_mix(r, sizeof r);
	MPI_OK(MPI_Scan(s, r, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	CHECK_INT(r[0], t_rank, "Scan MAX");
	memcpy(r, s, sizeof r);
	MPI_OK(MPI_Scan(MPI_IN_PLACE, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK_INT(r[3], t_rank * (t_rank + 1) / 2 + (t_rank + 1) * 30, "Scan IN_PLACE");
	for (int i = 0; i < 4; i++)
		r[i] = -77;
	MPI_OK(MPI_Exscan(s, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (t_rank > 0)
		for (int i = 0; i < 4; i++)
			CHECK_INT(r[i], (t_rank - 1) * t_rank / 2 + t_rank * i * 10, "Exscan SUM");
	t_mix(r, t_rank > 0 ? sizeof r : 0);
	memcpy(r, s, sizeof r);
	MPI_OK(MPI_Exscan(MPI_IN_PLACE, r, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (t_rank > 0)
		CHECK_INT(r[1], (t_rank - 1) * t_rank / 2 + t_rank * 10, "Exscan IN_PLACE");
	double ds = t_rank + 1.0, dr = 0;
	MPI_OK(MPI_Scan(&ds, &dr, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
	{
		double f = 1;
		for (int k = 1; k <= t_rank + 1; k++)
			f *= k;
		CHECK(dr == f, "Scan PROD double %g != %g", dr, f);
	}
	/* count 0 */
	MPI_OK(MPI_Scan(s, r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

	/* Reduce_scatter: rank i gets (i % 3) elements (some zero) */
	int *cnts = malloc(n * sizeof(int)), tot = 0;
	for (int i = 0; i < n; i++)
		tot += cnts[i] = i % 3;
	int *sb = malloc((tot + 3) * sizeof(int)), *rb = malloc((tot + 3) * sizeof(int));
	for (int i = 0; i < tot; i++)
		sb[i] = t_rank * 3 + i;
	rb[0] = rb[1] = rb[2] = -1;
	MPI_OK(MPI_Reduce_scatter(sb, rb, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	int off = 0;
	for (int i = 0; i < t_rank; i++)
		off += cnts[i];
	for (int k = 0; k < cnts[t_rank]; k++)
		CHECK_INT(rb[k], 3 * n * (n - 1) / 2 + n * (off + k), "Reduce_scatter");
	CHECK_INT(rb[cnts[t_rank]], -1, "Reduce_scatter wrote past its count");
	t_mix(rb, cnts[t_rank] * sizeof(int));
	/* IN_PLACE: the result lands at the start of the send buffer */
	for (int i = 0; i < tot; i++)
		sb[i] = t_rank * 3 + i;
	MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, sb, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int k = 0; k < cnts[t_rank]; k++)
		CHECK_INT(sb[k], 3 * n * (n - 1) / 2 + n * (off + k), "Reduce_scatter IN_PLACE");
	free(sb);
	free(rb);
	free(cnts);

	/* Reduce_scatter_block: 2 each */
	long long *bs = malloc(2 * n * sizeof(long long)), br[3] = { -1, -1, -1 };
	for (int i = 0; i < 2 * n; i++)
		bs[i] = (long long)t_rank << i % 20;
	MPI_OK(MPI_Reduce_scatter_block(bs, br, 2, MPI_LONG_LONG, MPI_BOR, MPI_COMM_WORLD));
	for (int k = 0; k < 2; k++) {
		long long w = 0;
		for (int q = 0; q < n; q++)
			w |= (long long)q << (2 * t_rank + k) % 20;
		CHECK_INT(br[k], w, "Reduce_scatter_block BOR");
	}
	CHECK_INT(br[2], -1, "Reduce_scatter_block wrote past");
	for (int i = 0; i < 2 * n; i++)
		bs[i] = i + t_rank;
	MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, bs, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
	CHECK_INT(bs[0], (long long)n * 2 * t_rank + (long long)n * (n - 1) / 2, "Reduce_scatter_block IN_PLACE");
	t_mix(br, 2 * sizeof(long long));
	free(bs);
	return t_finish();
}
