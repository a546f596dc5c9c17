/*
 * unsupported.c: the parts of MPI that mpiv declares so programs link,
 * but does not implement: one-sided communication, dynamic processes. Each call fails with
 * MPI_ERR_UNSUPPORTED_OPERATION through the error handler of
 * MPI_COMM_WORLD, so by default the job stops with a clear
 * "not supported by mpiv" message instead of misbehaving.
 */
#include "impl.h"

struct mpiv_win {
	int unused;
};

struct mpiv_win mpiv_win_null;

int
MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
    MPI_Comm comm, MPI_Win *win)
{
	return mpiv_unsupported("MPI_Win_create");
}

int
MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
    void *baseptr, MPI_Win *win)
{
	return mpiv_unsupported("MPI_Win_allocate");
}

int
MPI_Win_free(MPI_Win *win)
{
	return mpiv_unsupported("MPI_Win_free");
}

int
MPI_Win_fence(int assert, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_fence");
}

int
MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_lock");
}

int
MPI_Win_unlock(int rank, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_unlock");
}

int
MPI_Win_lock_all(int assert, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_lock_all");
}

int
MPI_Win_unlock_all(MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_unlock_all");
}

int
MPI_Win_flush(int rank, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_flush");
}

int
MPI_Win_flush_all(MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_flush_all");
}

int
MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_post");
}

int
MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_start");
}

int
MPI_Win_complete(MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_complete");
}

int
MPI_Win_wait(MPI_Win win)
{
	return mpiv_unsupported("MPI_Win_wait");
}

int
MPI_Put(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
	return mpiv_unsupported("MPI_Put");
}

int
MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Win win)
{
	return mpiv_unsupported("MPI_Get");
}

int
MPI_Accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	return mpiv_unsupported("MPI_Accumulate");
}

int
MPI_Get_accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, void *result_addr, int result_count,
    MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	return mpiv_unsupported("MPI_Get_accumulate");
}

int
MPI_Fetch_and_op(const void *origin_addr, void *result_addr,
    MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op,
    MPI_Win win)
{
	return mpiv_unsupported("MPI_Fetch_and_op");
}

int
MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
    void *result_addr, MPI_Datatype datatype, int target_rank,
    MPI_Aint target_disp, MPI_Win win)
{
	return mpiv_unsupported("MPI_Compare_and_swap");
}

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
