/*
 * unsupported.c: the parts of MPI that mpiv declares so programs link,
 * but does not implement: dynamic processes and user data
 * representations of MPI-IO. Each call fails with
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler of
 * MPI_COMM_WORLD, so by default the job stops with a clear
 * "not supported by mpiv" message instead of misbehaving.
 */
#include "impl.h"

int
MPI_Comm_spawn(const char *command, char *argv[], int maxprocs,
    MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm,
    int array_of_errcodes[])
{
	return mpiv_unsupported("MPI_Comm_spawn");
}

/* No process of an mpiv job was spawned: there is no parent. */
int
MPI_Comm_get_parent(MPI_Comm *parent)
{
	if (parent == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent");
	*parent = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* MPI-IO knows "native" (and "internal", the same) only. */
int
MPI_Register_datarep(const char *datarep,
    MPI_Datarep_conversion_function *read_conversion_fn,
    MPI_Datarep_conversion_function *write_conversion_fn,
    MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
	return mpiv_unsupported("MPI_Register_datarep");
}
