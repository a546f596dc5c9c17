/*
 * flt_file.c ITERS N DATA INPUT: MPI-IO under faults.
 *
 * DATA is a file of 4 slots of np blocks of N doubles. Each iteration
 * every rank writes its block of slot it % 4 (MPI_File_write_at_all
 * through a view of doubles), then reads its right neighbour's new block
 * and the whole slot (it + 1) % 4, which the next iteration overwrites:
 * a re-executed read that saw the file as it is now, not as it was,
 * changes the rank's hash. INPUT holds one int64 counter: read by every
 * rank at the start (printed), rewritten as counter + 1 by rank 0 at the
 * end (a job that started over without its files put back would print
 * counter + 1). Records of every rank also go to DATA.log with
 * MPI_File_write_ordered (the shared file pointer). Progress lines every
 * ITERS / 8 iterations; rank 0 prints the hash of DATA at the end.
 */
#include "flt.h"

static uint64_t
hash_doubles(uint64_t h, const double *v, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof(b));
		h = flt_mix(h, b);
	}
	return h;
}

static void
compute(double *v, int n, int it, uint64_t h)
{
	for (int i = 0; i < n; i++)
		v[i] = (double)((h >> (i % 48)) & 0xffff) + it * 0.5 + i;
	/* some work between the file operations */
	for (int k = 0; k < 200; k++)
		for (int i = 0; i < n; i++)
			v[i] = v[i] * 0.999 + 0.001 * (i + k);
}

int
main(int argc, char **argv)
{
	MPI_File fh, in, lg;
	MPI_Status st;
	MPI_Offset slot, sz;
	int iters, n, cnt;
	double *mine, *got, *old;
	uint64_t h, counter = 0;
	char logname[4096];

	flt_init(&argc, &argv);
	iters = (int)flt_arg(argc, argv, 1, 400);
	n = (int)flt_arg(argc, argv, 2, 512);
	FLT_ASSERT(argc > 4, "usage: flt_file ITERS N DATA INPUT");
	mine = malloc(sizeof(double) * n);
	got = malloc(sizeof(double) * n);
	old = malloc(sizeof(double) * n * np);
	FLT_ASSERT(mine && got && old, "out of memory");

	/* the counter, read by everyone */
	FLT_MPI(MPI_File_open(MPI_COMM_WORLD, argv[4], MPI_MODE_RDWR,
	    MPI_INFO_NULL, &in));
	FLT_MPI(MPI_File_read_at_all(in, 0, &counter, 1, MPI_INT64_T, &st));
	FLT_MPI(MPI_Get_count(&st, MPI_INT64_T, &cnt));
	FLT_ASSERT(cnt == 1, "the counter: %d values read", cnt);
	printf("rank %d counter %llu\n", me, (unsigned long long)counter);
	h = flt_mix(0x5eed, counter + (uint64_t)me);

	FLT_MPI(MPI_File_open(MPI_COMM_WORLD, argv[3], MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	FLT_MPI(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native",
	    MPI_INFO_NULL));
	snprintf(logname, sizeof(logname), "%s.log", argv[3]);
	FLT_MPI(MPI_File_open(MPI_COMM_WORLD, logname, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &lg));
	FLT_MPI(MPI_File_set_size(lg, 0));
	slot = (MPI_Offset)np * n;
	for (int it = 0; it < iters; it++) {
		int right = (me + 1) % np;
		char rec[64];

		compute(mine, n, it, h);
		FLT_MPI(MPI_File_write_at_all(fh, (it % 4) * slot +
		    (MPI_Offset)me * n, mine, n, MPI_DOUBLE, &st));
		FLT_MPI(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
		FLT_ASSERT(cnt == n, "wrote %d of %d", cnt, n);
		FLT_MPI(MPI_File_sync(fh));
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
		FLT_MPI(MPI_File_read_at(fh, (it % 4) * slot +
		    (MPI_Offset)right * n, got, n, MPI_DOUBLE, &st));
		FLT_MPI(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
		FLT_ASSERT(cnt == n, "read %d of %d", cnt, n);
		h = hash_doubles(h, got, n);
		/* the slot the next iteration overwrites, as it is now (at
		   first, beyond the end: nothing, or what an earlier run
		   left, which a job started over must not see) */
		FLT_MPI(MPI_File_read_at(fh, ((it + 1) % 4) * slot, old,
		    n * np, MPI_DOUBLE, &st));
		FLT_MPI(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
		h = flt_mix(h, (uint64_t)cnt);
		h = hash_doubles(h, old, cnt);
		FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
		snprintf(rec, sizeof(rec), "it %06d rank %03d %016llx\n", it,
		    me, (unsigned long long)h);
		FLT_MPI(MPI_File_write_ordered(lg, rec, (int)strlen(rec),
		    MPI_CHAR, &st));
		if (iters >= 8 && it % (iters / 8) == 0)
			printf("rank %d it %d hash %016llx\n", me, it,
			    (unsigned long long)h);
		fflush(stdout);
	}
	FLT_MPI(MPI_File_close(&lg));
	FLT_MPI(MPI_File_get_size(fh, &sz));
	FLT_ASSERT(sz == (iters >= 4 ? 4 : iters) * slot * 8 ||
	    sz >= 4 * slot * 8, "size %lld", (long long)sz);
	if (me == 0) {
		uint64_t fhash = 0x1234;
		for (int s = 0; s < 4 && s < iters; s++) {
			FLT_MPI(MPI_File_read_at(fh, s * slot, old, n * np,
			    MPI_DOUBLE, &st));
			fhash = hash_doubles(fhash, old, n * np);
		}
		printf("rank 0 file %016llx size %lld\n",
		    (unsigned long long)fhash, (long long)sz);
	}
	FLT_MPI(MPI_File_close(&fh));
	counter++;
	if (me == 0)
		FLT_MPI(MPI_File_write_at(in, 0, &counter, 1, MPI_INT64_T,
		    &st));
	FLT_MPI(MPI_File_close(&in));
	printf("rank %d hash %016llx\n", me, (unsigned long long)h);
	free(mine);
	free(got);
	free(old);
	FLT_MPI(MPI_Finalize());
	return 0;
}
