/* unsupported: MPI_Comm_spawn
 * is linkable but not supported by mpiv: under MPI_ERRORS_RETURN it returns
 * MPI_ERR_UNSUPPORTED_OPERATION (class), Error_string says "not supported",
 * and the job goes on. (Built against another MPI, which supports them,
 * the program checks they work instead.) */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "unsupported");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	int base[16] = { 0 }, cls = -1, len;
	MPI_Win win = MPI_WIN_NULL;
	char s[MPI_MAX_ERROR_STRING];
	int rc = MPI_Win_create(base, sizeof base, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
#ifdef MPIV_MPI_LITE
	MPI_OK(rc);
	MPI_OK(MPI_Win_free(&win));
	MPI_OK(MPI_Error_string(MPI_ERR_UNSUPPORTED_OPERATION, s, &len));
	CHECK(strstr(s, "not supported") != NULL, "Error_string(MPI_ERR_UNSUPPORTED_OPERATION): '%s'", s);
	MPI_Comm child = MPI_COMM_NULL;
	rc = MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, MPI_ERRCODES_IGNORE);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK_INT(cls, MPI_ERR_UNSUPPORTED_OPERATION, "Comm_spawn error class");
	MPI_OK(MPI_Error_string(rc, s, &len));
	CHECK(strstr(s, "not supported") != NULL, "Error_string of Comm_spawn's code: '%s'", s);
	CHECK(MPI_ERR_NOT_SUPPORTED == MPI_ERR_UNSUPPORTED_OPERATION, "alias");
#else
	/* Open MPI with only tcp,self may have no one-sided component */
	if (rc == MPI_SUCCESS)
		MPI_OK(MPI_Win_free(&win));
	(void)cls; (void)len; (void)s;
#endif
	/* the job goes on */
	int sum = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK_INT(sum, t_size * (t_size - 1) / 2, "Allreduce after unsupported calls");
	return t_finish();
}
