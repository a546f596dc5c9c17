/* dynproc: an mpiv job cannot spawn or connect to processes. Under
 * MPI_ERRORS_RETURN, Comm_spawn_multiple fails with class MPI_ERR_SPAWN,
 * Open_port, Comm_accept, Comm_connect, Comm_join, Publish_name and
 * Lookup_name with MPI_ERR_UNSUPPORTED_OPERATION, and the job goes on;
 * MPI_Comm_disconnect frees a communicator. (Built against another MPI,
 * the program only checks disconnect.) */
#include "mpitest.h"

#ifdef MPIV_MPI_LITE
static void want(int rc, int cls_want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_OK(MPI_Error_class(rc, &cls));
	CHECK(cls == cls_want, "%s: class %d, want %d", what, cls, cls_want);
}
#endif

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dynproc");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
#ifdef MPIV_MPI_LITE
	char port[MPI_MAX_PORT_NAME] = "none", *cmds[1] = { "true" };
	int np[1] = { 1 }, len;
	MPI_Info infos[1] = { MPI_INFO_NULL };
	MPI_Comm ic = MPI_COMM_NULL;
	want(MPI_Comm_spawn_multiple(1, cmds, NULL, np, infos, 0, MPI_COMM_SELF, &ic,
	    MPI_ERRCODES_IGNORE), MPI_ERR_SPAWN, "Comm_spawn_multiple");
	want(MPI_Open_port(MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION, "Open_port");
	want(MPI_Close_port(port), MPI_ERR_UNSUPPORTED_OPERATION, "Close_port");
	want(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic), MPI_ERR_UNSUPPORTED_OPERATION, "Comm_accept");
	want(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic), MPI_ERR_UNSUPPORTED_OPERATION, "Comm_connect");
	want(MPI_Comm_join(-1, &ic), MPI_ERR_UNSUPPORTED_OPERATION, "Comm_join");
	want(MPI_Publish_name("svc", MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION, "Publish_name");
	want(MPI_Unpublish_name("svc", MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION, "Unpublish_name");
	want(MPI_Lookup_name("svc", MPI_INFO_NULL, port), MPI_ERR_UNSUPPORTED_OPERATION, "Lookup_name");
	CHECK(ic == MPI_COMM_NULL, "no communicator made");
	char s[MPI_MAX_ERROR_STRING];
	MPI_OK(MPI_Error_string(MPI_ERR_SPAWN, s, &len));
	CHECK(strstr(s, "not supported") != NULL, "Error_string(MPI_ERR_SPAWN): '%s'", s);
#endif
	MPI_Comm c;
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	MPI_OK(MPI_Comm_disconnect(&c));
	CHECK(c == MPI_COMM_NULL, "disconnect freed the communicator");
	int sum = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK_INT(sum, t_size * (t_size - 1) / 2, "Allreduce after the failed calls");
	return t_finish();
}
