/*
 * dynproc.c: dynamic processes. An mpiv job has a fixed set of ranks,
 * all in MPI_COMM_WORLD from the start (the dispatcher places them and
 * relaunches the failed ones), so nothing can be spawned or connected
 * to. Each call fails through the error handler of the communicator it
 * names (MPI_COMM_WORLD otherwise), naming itself: MPI_ERR_SPAWN for
 * spawning, MPI_ERR_UNSUPPORTED_OPERATION for ports, names and join.
 * MPI_Comm_disconnect works on any communicator (it frees it).
 * MPI_Comm_spawn and MPI_Comm_get_parent are in unsupported.c.
 */
#include "impl.h"

static int
dynproc_fail(MPI_Comm comm, int code, const char *fn)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		comm = NULL;
	mpiv_err_detail("an mpiv job's ranks are fixed at launch: nothing "
	    "can be spawned or connected to");
	return mpiv_err(comm, code, fn);
}

int
MPI_Comm_spawn_multiple(int count, char *array_of_commands[],
    char **array_of_argv[], const int array_of_maxprocs[],
    const MPI_Info array_of_info[], int root, MPI_Comm comm,
    MPI_Comm *intercomm, int array_of_errcodes[])
{
	return dynproc_fail(comm, MPI_ERR_SPAWN, "MPI_Comm_spawn_multiple");
}

int
MPI_Open_port(MPI_Info info, char *port_name)
{
	return dynproc_fail(NULL, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Open_port");
}

int
MPI_Close_port(const char *port_name)
{
	return dynproc_fail(NULL, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Close_port");
}

int
MPI_Comm_accept(const char *port_name, MPI_Info info, int root,
    MPI_Comm comm, MPI_Comm *newcomm)
{
	return dynproc_fail(comm, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Comm_accept");
}

int
MPI_Comm_connect(const char *port_name, MPI_Info info, int root,
    MPI_Comm comm, MPI_Comm *newcomm)
{
	return dynproc_fail(comm, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Comm_connect");
}

int
MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
	return dynproc_fail(NULL, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Comm_join");
}

int
MPI_Publish_name(const char *service_name, MPI_Info info,
    const char *port_name)
{
	return dynproc_fail(NULL, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Publish_name");
}

int
MPI_Unpublish_name(const char *service_name, MPI_Info info,
    const char *port_name)
{
	return dynproc_fail(NULL, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Unpublish_name");
}

int
MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
	return dynproc_fail(NULL, MPI_ERR_UNSUPPORTED_OPERATION,
	    "MPI_Lookup_name");
}

/* Every message of an mpiv communicator is delivered or logged by the
   time the calls that started it returned, so there is nothing to wait
   for: disconnect is a free. */
int
MPI_Comm_disconnect(MPI_Comm *comm)
{
	if (comm == NULL || mpiv_comm_check(*comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_disconnect");
	return MPI_Comm_free(comm);
}
