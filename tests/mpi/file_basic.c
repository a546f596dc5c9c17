/* file_basic: MPI-IO basics. Open with create, write_at/read_at, the
 * individual file pointer (read, write, seek, get_position,
 * get_byte_offset), reads past the end, get_size/set_size/preallocate,
 * sync, iread_at/iwrite_at, get_amode/get_group, atomicity, error
 * handlers (default ERRORS_RETURN, set/get/call), EXCL on an existing
 * file, a missing file without CREATE, bad amodes, delete. */
#include <unistd.h>
#include "mpitest.h"

#define BLK 64		/* ints per rank */

static int handler_calls, handler_code;

static void
on_error(MPI_File *fh, int *code, ...)
{
	(void)fh;
	handler_calls++;
	handler_code = *code;
}

/* MPI's consistency rule: sync, barrier, sync. */
static void
settle(MPI_File fh)
{
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_sync(fh));
}

/* Error class of rc, checked against want. */
static void
check_class(int rc, int want, const char *what)
{
	int cls = -1;

	CHECK(rc != MPI_SUCCESS, "%s: succeeded, want error class %d", what, want);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, want, what);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "file_basic");
	char name[512], missing[600];
	const char *dir = getenv("TMPDIR");
	long long uniq[2] = { 0, 0 };
	MPI_File fh, fh2;
	MPI_Status st;
	MPI_Offset off, size;
	MPI_Group g, wg;
	MPI_Errhandler eh, got;
	int buf[BLK], in[BLK], cnt, amode, flag, res, rc;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if (t_rank == 0) {
		uniq[0] = (long long)getpid();
		uniq[1] = (long long)(MPI_Wtime() * 1e6);
	}
	MPI_OK(MPI_Bcast(uniq, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
	snprintf(name, sizeof(name), "%s/mpiv_file_basic_%lld_%lld", dir,
	    uniq[0], uniq[1]);
	snprintf(missing, sizeof(missing), "%s.missing", name);

	/* 1. the default handler of files returns; a missing file */
	rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_NO_SUCH_FILE, "open missing file");
	CHECK(fh == MPI_FILE_NULL, "failed open left a handle");

	/* 2. bad amodes */
	rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_RDWR,
	    MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_AMODE, "RDONLY|RDWR");
	rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE,
	    MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_AMODE, "RDONLY|CREATE");
	rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE,
	    MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_AMODE, "no access mode");

	/* 3. create; amode, group */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, name,
	    MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_get_amode(fh, &amode));
	CHECK_INT(amode, MPI_MODE_CREATE | MPI_MODE_RDWR, "get_amode");
	MPI_OK(MPI_File_get_group(fh, &g));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Group_compare(g, wg, &res));
	CHECK_INT(res, MPI_IDENT, "get_group");
	MPI_OK(MPI_Group_free(&g));
	MPI_OK(MPI_Group_free(&wg));

	/* 4. write_at my block, read back my neighbour's */
	for (int i = 0; i < BLK; i++)
		buf[i] = t_rank * 1000 + i;
	MPI_OK(MPI_File_write_at(fh, (MPI_Offset)t_rank * BLK * sizeof(int),
	    buf, BLK, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK_INT(cnt, BLK, "write_at count");
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_sync(fh));
	{
		int peer = (t_rank + 1) % t_size;
		MPI_OK(MPI_File_read_at(fh, (MPI_Offset)peer * BLK * sizeof(int),
		    in, BLK, MPI_INT, &st));
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK_INT(cnt, BLK, "read_at count");
		for (int i = 0; i < BLK; i++)
			CHECK_INT(in[i], peer * 1000 + i, "read_at data");
		t_mix(in, sizeof(in));
	}
	MPI_OK(MPI_File_get_size(fh, &size));
	CHECK_INT(size, (long long)t_size * BLK * sizeof(int), "get_size");

	/* 5. a read past the end is short, not an error */
	MPI_OK(MPI_File_read_at(fh, size - 2 * (MPI_Offset)sizeof(int), in, BLK,
	    MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK_INT(cnt, 2, "read past the end");
	CHECK_INT(in[1], (t_size - 1) * 1000 + BLK - 1, "last int");
	MPI_OK(MPI_File_read_at(fh, size + 100, in, BLK, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK_INT(cnt, 0, "read beyond the end");

	/* 6. the individual pointer: seek, read, write, get_position */
	MPI_OK(MPI_File_seek(fh, (MPI_Offset)t_rank * BLK * sizeof(int),
	    MPI_SEEK_SET));
	MPI_OK(MPI_File_read(fh, in, BLK / 2, MPI_INT, &st));
	for (int i = 0; i < BLK / 2; i++)
		CHECK_INT(in[i], t_rank * 1000 + i, "read data");
	MPI_OK(MPI_File_get_position(fh, &off));
	CHECK_INT(off, (long long)(t_rank * BLK + BLK / 2) * sizeof(int),
	    "position after read");
	MPI_OK(MPI_File_seek(fh, 4 * sizeof(int), MPI_SEEK_CUR));
	MPI_OK(MPI_File_read(fh, in, 1, MPI_INT, &st));
	CHECK_INT(in[0], t_rank * 1000 + BLK / 2 + 4, "read after SEEK_CUR");
	MPI_OK(MPI_File_get_byte_offset(fh, 12, &off));
	CHECK_INT(off, 12, "get_byte_offset (byte view)");
	MPI_OK(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_END));
	MPI_OK(MPI_File_read(fh, in, 1, MPI_INT, &st));
	CHECK_INT(in[0], (t_size - 1) * 1000 + BLK - 1, "read after SEEK_END");
	rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
	CHECK(rc != MPI_SUCCESS, "seek before the start succeeded");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	/* every rank rewrites its block's second half through the pointer */
	MPI_OK(MPI_File_seek(fh, (MPI_Offset)(t_rank * BLK + BLK / 2) * sizeof(int),
	    MPI_SEEK_SET));
	for (int i = 0; i < BLK / 2; i++)
		buf[i] = -(t_rank * 1000 + i);
	MPI_OK(MPI_File_write(fh, buf, BLK / 2, MPI_INT, &st));
	MPI_OK(MPI_File_get_position(fh, &off));
	CHECK_INT(off, (long long)(t_rank + 1) * BLK * sizeof(int),
	    "position after write");
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_File_read_at(fh, (MPI_Offset)(t_rank * BLK + BLK / 2) * sizeof(int),
	    in, BLK / 2, MPI_INT, MPI_STATUS_IGNORE));
	for (int i = 0; i < BLK / 2; i++)
		CHECK_INT(in[i], -(t_rank * 1000 + i), "rewritten half");

	/* 7. non-blocking: complete requests */
	{
		MPI_Request rq[2];
		int one = 4242 + t_rank, back = 0;
		MPI_Offset at = size + (MPI_Offset)t_rank * sizeof(int);

		MPI_OK(MPI_File_iwrite_at(fh, at, &one, 1, MPI_INT, &rq[0]));
		MPI_OK(MPI_Wait(&rq[0], &st));
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK_INT(cnt, 1, "iwrite_at count");
		MPI_OK(MPI_File_iread_at(fh, at, &back, 1, MPI_INT, &rq[1]));
#ifdef MPIV_MPI_LITE
		/* mpiv: carried out at once */
		MPI_OK(MPI_Test(&rq[1], &flag, &st));
		CHECK(flag, "iread_at not complete at once");
		CHECK(rq[1] == MPI_REQUEST_NULL, "tested request not freed");
#else
		MPI_OK(MPI_Wait(&rq[1], &st));
#endif
		CHECK_INT(back, one, "iread_at data");
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* 8. set_size, preallocate */
	settle(fh);
	MPI_OK(MPI_File_set_size(fh, 10));
	settle(fh);
	MPI_OK(MPI_File_get_size(fh, &size));
	CHECK_INT(size, 10, "size after set_size(10)");
	settle(fh);
	MPI_OK(MPI_File_preallocate(fh, 4096));
	settle(fh);
	MPI_OK(MPI_File_get_size(fh, &size));
	CHECK_INT(size, 4096, "size after preallocate(4096)");
	settle(fh);
	MPI_OK(MPI_File_preallocate(fh, 100));
	settle(fh);
	MPI_OK(MPI_File_get_size(fh, &size));
	CHECK_INT(size, 4096, "preallocate does not shrink");
	MPI_OK(MPI_File_read_at(fh, 100, in, 4, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK_INT(cnt, 4, "read in the preallocated part");
	CHECK(in[0] == 0 && in[3] == 0, "extended part is not zeros");
	settle(fh);
	MPI_OK(MPI_File_set_size(fh, 0));
	settle(fh);
	MPI_OK(MPI_File_get_size(fh, &size));
	CHECK_INT(size, 0, "size after set_size(0)");

	/* 9. atomicity */
	MPI_OK(MPI_File_get_atomicity(fh, &flag));
	CHECK_INT(flag, 0, "atomicity off at first");
	MPI_OK(MPI_File_set_atomicity(fh, 1));
	MPI_OK(MPI_File_get_atomicity(fh, &flag));
	CHECK_INT(flag, 1, "atomicity on");

	/* 10. error handlers */
	MPI_OK(MPI_File_get_errhandler(fh, &got));
	CHECK(got == MPI_ERRORS_RETURN, "default file handler is not ERRORS_RETURN");
	MPI_OK(MPI_Errhandler_free(&got));
	MPI_OK(MPI_File_create_errhandler(on_error, &eh));
	MPI_OK(MPI_File_set_errhandler(fh, eh));
	MPI_OK(MPI_File_get_errhandler(fh, &got));
	CHECK(got == eh, "get_errhandler");
	MPI_OK(MPI_Errhandler_free(&got));
	MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
	CHECK_INT(handler_calls, 1, "handler calls");
	CHECK_INT(handler_code, MPI_ERR_IO, "handler code");
	rc = MPI_File_seek(fh, 0, 12345);
	CHECK_INT(handler_calls, 2, "handler calls after a bad seek");
	CHECK(rc != MPI_SUCCESS && handler_code == rc, "bad whence: rc %d, handler saw %d", rc, handler_code);
	MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Errhandler_free(&eh));

	MPI_OK(MPI_File_close(&fh));
	CHECK(fh == MPI_FILE_NULL, "close did not null the handle");

	/* 11. EXCL on an existing file; MPI_FILE_NULL's handler */
	rc = MPI_File_open(MPI_COMM_WORLD, name,
	    MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_FILE_EXISTS, "EXCL on an existing file");
	MPI_OK(MPI_File_create_errhandler(on_error, &eh));
	MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
	handler_calls = 0;
	rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh);
	CHECK_INT(handler_calls, 1, "MPI_FILE_NULL handler calls");
	check_class(handler_code, MPI_ERR_NO_SUCH_FILE, "MPI_FILE_NULL handler code");
	MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Errhandler_free(&eh));

	/* 12. read-only: writes refused; a new file inherits nothing */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh2));
	rc = MPI_File_write_at(fh2, 0, buf, 1, MPI_INT, &st);
	CHECK(rc != MPI_SUCCESS, "write to a read-only file succeeded");
	MPI_OK(MPI_File_close(&fh2));

	/* 13. delete; then it is gone */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (t_rank == 0)
		MPI_OK(MPI_File_delete(name, MPI_INFO_NULL));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_NO_SUCH_FILE, "open after delete");
	if (t_rank == 0) {
		rc = MPI_File_delete(name, MPI_INFO_NULL);
		check_class(rc, MPI_ERR_NO_SUCH_FILE, "delete twice");
	}

	/* 14. DELETE_ON_CLOSE */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_write_at(fh, t_rank, "x", 1, MPI_CHAR, &st));
	MPI_OK(MPI_File_close(&fh));
	rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh);
	check_class(rc, MPI_ERR_NO_SUCH_FILE, "open after DELETE_ON_CLOSE");

	return t_finish();
}
