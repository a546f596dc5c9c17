/* file_view: file views. Each rank writes its column block of a 2-D
 * array of ints (after a 16-byte header) through a subarray filetype
 * with write_all, from a memory buffer with halo columns (a subarray
 * memory type); reads it back through a vector filetype; the ranks then
 * write an interleaved region (etype MPI_INT, a resized one-int
 * filetype, displacement past the array) with the individual pointer;
 * get_view, get_byte_offset, get_type_extent; finally rank 0 checks the
 * whole file byte by byte with read_at in the default view. Views whose
 * filetype goes back, or overlaps in a file open for writing, are
 * refused; a read-only one may overlap. */
#include <unistd.h>
#include "mpitest.h"

#define NR 8		/* rows of the array */
#define BC 5		/* columns per rank */
#define HDR 16		/* header bytes */
#define K 37		/* interleaved ints per rank */

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "file_view");
	const char *dir = getenv("TMPDIR");
	char name[512], rep[MPI_MAX_DATAREP_STRING];
	long long uniq[2] = { 0, 0 };
	int nc = BC * t_size, local[NR][BC + 2], back[NR * BC], cnt;
	MPI_Datatype sub, mem, vec, one, et, ft;
	MPI_File fh;
	MPI_Status st;
	MPI_Offset disp, off, arr_end;
	MPI_Aint ext;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if (t_rank == 0) {
		uniq[0] = (long long)getpid();
		uniq[1] = (long long)(MPI_Wtime() * 1e6);
	}
	MPI_OK(MPI_Bcast(uniq, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
	snprintf(name, sizeof(name), "%s/mpiv_file_view_%lld_%lld", dir,
	    uniq[0], uniq[1]);
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, name,
	    MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	if (t_rank == 0)
		MPI_OK(MPI_File_write_at(fh, 0, "mpiv-view-test!\n", HDR,
		    MPI_CHAR, &st));

	/* 1. column blocks through a subarray filetype */
	{
		int gs[2] = { NR, nc }, ss[2] = { NR, BC }, gst[2] = { 0, BC * t_rank };
		int ms[2] = { NR, BC + 2 }, mst[2] = { 0, 1 };

		MPI_OK(MPI_Type_create_subarray(2, gs, ss, gst, MPI_ORDER_C,
		    MPI_INT, &sub));
		MPI_OK(MPI_Type_commit(&sub));
		MPI_OK(MPI_Type_create_subarray(2, ms, ss, mst, MPI_ORDER_C,
		    MPI_INT, &mem));
		MPI_OK(MPI_Type_commit(&mem));
	}
	for (int i = 0; i < NR; i++)
		for (int j = 0; j < BC + 2; j++)
			local[i][j] = (j == 0 || j == BC + 1) ? -7 :
			    i * 1000 + BC * t_rank + j - 1;
	MPI_OK(MPI_File_set_view(fh, HDR, MPI_INT, sub, "native", MPI_INFO_NULL));
	MPI_OK(MPI_File_write_all(fh, local, 1, mem, &st));
	MPI_OK(MPI_Get_count(&st, mem, &cnt));
	CHECK_INT(cnt, 1, "write_all count");
	MPI_OK(MPI_File_get_position(fh, &off));
	CHECK_INT(off, NR * BC, "position after write_all (etypes)");
	/* etype 5 of my block: row 1, my first column */
	MPI_OK(MPI_File_get_byte_offset(fh, BC, &off));
	CHECK_INT(off, HDR + (nc + BC * t_rank) * (long long)sizeof(int),
	    "get_byte_offset in the subarray view");
	MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
	CHECK_INT(disp, HDR, "get_view disp");
	CHECK(et == MPI_INT, "get_view etype");
	CHECK(strcmp(rep, "native") == 0, "get_view datarep %s", rep);
	{
		int sz;
		MPI_OK(MPI_Type_size(ft, &sz));
		CHECK_INT(sz, NR * BC * (int)sizeof(int), "get_view filetype size");
		MPI_OK(MPI_Type_free(&ft));
	}
	MPI_OK(MPI_File_get_type_extent(fh, sub, &ext));
	CHECK_INT(ext, (long long)NR * nc * sizeof(int), "get_type_extent");
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_sync(fh));

	/* 2. read back the right neighbour's block through a vector view */
	{
		int peer = (t_rank + 1) % t_size;

		MPI_OK(MPI_Type_vector(NR, BC, nc, MPI_INT, &vec));
		MPI_OK(MPI_Type_commit(&vec));
		MPI_OK(MPI_File_set_view(fh, HDR + (MPI_Offset)BC * peer * sizeof(int),
		    MPI_INT, vec, "native", MPI_INFO_NULL));
		memset(back, 0, sizeof(back));
		MPI_OK(MPI_File_read_all(fh, back, NR * BC, MPI_INT, &st));
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK_INT(cnt, NR * BC, "read_all count");
		for (int i = 0; i < NR; i++)
			for (int j = 0; j < BC; j++)
				CHECK_INT(back[i * BC + j], i * 1000 + BC * peer + j,
				    "vector view data");
		t_mix(back, sizeof(back));
		/* and from an explicit offset: row 2 onwards */
		MPI_OK(MPI_File_read_at(fh, 2 * BC, back, BC, MPI_INT, &st));
		for (int j = 0; j < BC; j++)
			CHECK_INT(back[j], 2000 + BC * peer + j, "read_at in vector view");
	}

	/* 3. interleaved ints after the array: etype MPI_INT, filetype one
	   int every t_size ints, displacement per rank */
	arr_end = HDR + (MPI_Offset)NR * nc * sizeof(int);
	MPI_OK(MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)t_size * sizeof(int), &one));
	MPI_OK(MPI_Type_commit(&one));
	MPI_OK(MPI_File_set_view(fh, arr_end + (MPI_Offset)t_rank * sizeof(int),
	    MPI_INT, one, "native", MPI_INFO_NULL));
	{
		int w[K];

		for (int i = 0; i < K; i++)
			w[i] = 500000 + i * t_size + t_rank;
		/* in two pieces, through the individual pointer */
		MPI_OK(MPI_File_write_all(fh, w, 10, MPI_INT, &st));
		MPI_OK(MPI_File_write(fh, w + 10, K - 10, MPI_INT, &st));
		MPI_OK(MPI_File_get_position(fh, &off));
		CHECK_INT(off, K, "position after interleaved writes");
		MPI_OK(MPI_File_get_byte_offset(fh, 3, &off));
		CHECK_INT(off, arr_end + (3LL * t_size + t_rank) * sizeof(int),
		    "get_byte_offset interleaved");
		MPI_OK(MPI_File_sync(fh));
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_File_sync(fh));
		MPI_OK(MPI_File_read_at(fh, 5, w, 4, MPI_INT, &st));
		for (int i = 0; i < 4; i++)
			CHECK_INT(w[i], 500000 + (5 + i) * t_size + t_rank,
			    "interleaved read_at");
	}

	/* 4. back to bytes: rank 0 checks every byte of the file */
	MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	MPI_OK(MPI_File_get_byte_offset(fh, 77, &off));
	CHECK_INT(off, 77, "byte view offset");
	if (t_rank == 0) {
		MPI_Offset size, want = arr_end + (MPI_Offset)K * t_size * sizeof(int);
		unsigned char *file, *exp;

		MPI_OK(MPI_File_get_size(fh, &size));
		CHECK_INT(size, want, "file size");
		file = malloc((size_t)want);
		exp = malloc((size_t)want);
		memcpy(exp, "mpiv-view-test!\n", HDR);
		for (int i = 0; i < NR; i++)
			for (int j = 0; j < nc; j++) {
				int v = i * 1000 + j;
				memcpy(exp + HDR + ((size_t)i * nc + j) * sizeof(int), &v, sizeof(v));
			}
		for (int i = 0; i < K * t_size; i++) {
			int v = 500000 + i;
			memcpy(exp + arr_end + (size_t)i * sizeof(int), &v, sizeof(v));
		}
		MPI_OK(MPI_File_read_at(fh, 0, file, (int)want, MPI_BYTE, &st));
		MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		CHECK_INT(cnt, want, "whole file read");
		for (MPI_Offset b = 0; b < want; b++)
			CHECK(file[b] == exp[b], "byte %lld: got %u, want %u",
			    (long long)b, file[b], exp[b]);
		t_mix(file, (size_t)want);
		free(file);
		free(exp);
	}
	{
		int bad = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32",
		    MPI_INFO_NULL), cls = -1;
		if (bad != MPI_SUCCESS)
			MPI_OK(MPI_Error_class(bad, &cls));
#ifdef MPIV_MPI_LITE
		CHECK_INT(cls, MPI_ERR_UNSUPPORTED_DATAREP, "external32 view");
#endif
	}
	{
		/* typemaps that go back, or (open for writing) cover bytes
		   twice: erroneous views, MPI_ERR_IO as ROMIO says */
		int len2[2] = { 1, 1 }, d_back[2] = { 3, 0 }, len_ov[2] = { 3, 1 },
		    d_ov[2] = { 0, 1 }, cls = -1, rc;
		MPI_Datatype back, ov;
		MPI_OK(MPI_Type_indexed(2, len2, d_back, MPI_INT, &back));
		MPI_OK(MPI_Type_commit(&back));
		MPI_OK(MPI_Type_indexed(2, len_ov, d_ov, MPI_INT, &ov));
		MPI_OK(MPI_Type_commit(&ov));
		rc = MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL);
		CHECK(rc != MPI_SUCCESS, "a filetype going back accepted");
		MPI_OK(MPI_Error_class(rc, &cls));
#ifdef MPIV_MPI_LITE
		CHECK_INT(cls, MPI_ERR_IO, "a filetype going back");
#endif
		rc = MPI_File_set_view(fh, 0, MPI_INT, ov, "native", MPI_INFO_NULL);
		CHECK(rc != MPI_SUCCESS, "an overlapping filetype accepted for writing");
		MPI_OK(MPI_Error_class(rc, &cls));
#ifdef MPIV_MPI_LITE
		CHECK_INT(cls, MPI_ERR_IO, "an overlapping filetype, file open for writing");
#endif
#ifdef MPIV_MPI_LITE	/* Open MPI 4.1 refuses it (MPI_ERR_TYPE) */
		/* reading through overlaps is allowed */
		MPI_File rf;
		MPI_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY,
		    MPI_INFO_NULL, &rf));
		MPI_OK(MPI_File_set_view(rf, HDR, MPI_INT, ov, "native", MPI_INFO_NULL));
		int four[4];
		MPI_OK(MPI_File_read_at(rf, 0, four, 4, MPI_INT, MPI_STATUS_IGNORE));
		CHECK_INT(four[3], four[1], "an overlapping read view reads a byte twice");
		MPI_OK(MPI_File_close(&rf));
#endif
		MPI_OK(MPI_Type_free(&back));
		MPI_OK(MPI_Type_free(&ov));
	}
	MPI_OK(MPI_Type_free(&sub));
	MPI_OK(MPI_Type_free(&mem));
	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Type_free(&one));
	MPI_OK(MPI_File_close(&fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (t_rank == 0)
		MPI_OK(MPI_File_delete(name, MPI_INFO_NULL));
	return t_finish();
}
