/* flt_coll: rounds of collectives with checked results.
 *   flt_coll [ROUNDS=300] [LEN=64]
 * Bcast (rotating root), Reduce, Allreduce (SUM, MAX), Allreduce and
 * Reduce of LEN longs, Allgather, Alltoall, Scan, Exscan,
 * Gatherv/Scatter, Barrier. Rank 0 prints a digest every ROUNDS/6
 * rounds. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 300), len = flt_arg(argc, argv, 2, 64);
	long *a = malloc(sizeof(long) * (size_t)(len * np)), *b = malloc(sizeof(long) * (size_t)(len * np));
	uint64_t h = 0;
	long every = rounds / 6 > 0 ? rounds / 6 : 1;
	for (long r = 1; r <= rounds; r++) {
		int root = (int)(r % np);
		/* Bcast */
		for (long i = 0; i < len; i++)
			a[i] = me == root ? r * 7 + i : -1;
		FLT_MPI(MPI_Bcast(a, (int)len, MPI_LONG, root, MPI_COMM_WORLD));
		for (long i = 0; i < len; i++)
			FLT_ASSERT(a[i] == r * 7 + i, "bcast r%ld [%ld]=%ld", r, i, a[i]);
		/* Reduce + Allreduce */
		long v = (me + 1) * r, s = 0, mx = 0;
		FLT_MPI(MPI_Reduce(&v, &s, 1, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
		if (me == root)
			FLT_ASSERT(s == r * np * (np + 1) / 2, "reduce %ld", s);
		FLT_MPI(MPI_Allreduce(&v, &mx, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
		FLT_ASSERT(mx == r * np, "allreduce max %ld", mx);
		/* Allreduce + Reduce of LEN longs (from 16 KiB on, the
		   large-data algorithms of docs/COLLECTIVES.md) */
		for (long i = 0; i < len; i++)
			a[i] = (me + 1) * r + i;
		FLT_MPI(MPI_Allreduce(a, b, (int)len, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		for (long i = 0; i < len; i++)
			FLT_ASSERT(b[i] == r * np * (np + 1) / 2 + np * i, "allreduce vec r%ld [%ld]=%ld", r, i, b[i]);
		h = flt_mix(h, (uint64_t)b[len - 1]);
		FLT_MPI(MPI_Reduce(a, b, (int)len, MPI_LONG, MPI_MAX, root, MPI_COMM_WORLD));
		if (me == root)
			for (long i = 0; i < len; i++)
				FLT_ASSERT(b[i] == np * r + i, "reduce vec r%ld [%ld]=%ld", r, i, b[i]);
		/* Allgather */
		long mine = me * 100 + r % 100;
		FLT_MPI(MPI_Allgather(&mine, 1, MPI_LONG, b, 1, MPI_LONG, MPI_COMM_WORLD));
		for (int q = 0; q < np; q++)
			FLT_ASSERT(b[q] == q * 100 + r % 100, "allgather [%d]=%ld", q, b[q]);
		/* Alltoall */
		for (int q = 0; q < np; q++)
			a[q] = me * 1000 + q + r;
		FLT_MPI(MPI_Alltoall(a, 1, MPI_LONG, b, 1, MPI_LONG, MPI_COMM_WORLD));
		for (int q = 0; q < np; q++)
			FLT_ASSERT(b[q] == q * 1000 + me + r, "alltoall [%d]=%ld", q, b[q]);
		/* Scan / Exscan */
		long sc = 0, ex = 0;
		FLT_MPI(MPI_Scan(&v, &sc, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		FLT_ASSERT(sc == r * (me + 1) * (me + 2) / 2, "scan %ld", sc);
		FLT_MPI(MPI_Exscan(&v, &ex, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		if (me > 0)
			FLT_ASSERT(ex == r * me * (me + 1) / 2, "exscan %ld", ex);
		/* Gatherv of me+1 items, then Scatter back */
		int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
		for (int q = 0, o = 0; q < np; q++) {
			cnt[q] = q % 3 + 1;
			dsp[q] = o;
			o += cnt[q];
		}
		for (int i = 0; i < me % 3 + 1; i++)
			a[i] = r + me + i;
		FLT_MPI(MPI_Gatherv(a, me % 3 + 1, MPI_LONG, b, cnt, dsp, MPI_LONG, root, MPI_COMM_WORLD));
		if (me == root)
			for (int q = 0; q < np; q++)
				for (int i = 0; i < cnt[q]; i++)
					FLT_ASSERT(b[dsp[q] + i] == r + q + i, "gatherv q%d i%d", q, i);
		for (int q = 0; q < np; q++)
			a[q] = r * 3 + q;
		long one = -1;
		FLT_MPI(MPI_Scatter(a, 1, MPI_LONG, &one, 1, MPI_LONG, root, MPI_COMM_WORLD));
		FLT_ASSERT(one == r * 3 + me, "scatter %ld", one);
		free(cnt);
		free(dsp);
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
		h = flt_mix(h, (uint64_t)(s + mx + sc + ex + one));
		if (r % every == 0) {
			uint64_t all = 0;
			FLT_MPI(MPI_Reduce(&h, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD));
			if (me == 0)
				FLT_SAY("coll: round %ld digest %016llx\n", r, (unsigned long long)all);
		}
	}
	FLT_MPI(MPI_Finalize());
	return 0;
}
