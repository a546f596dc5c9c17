/*
 * comm_info.c: the hints of a communicator (MPI_Comm_set_info,
 * MPI_Comm_get_info, MPI_Comm_dup_with_info). mpiv acts on no hint; it
 * keeps a copy of what the user set and hands it back, and MPI_Comm_dup
 * copies it to the new communicator.
 */
#include "impl.h"

int
mpiv_comm_info_dup(MPI_Comm oldc, MPI_Info info, MPI_Comm newc)
{
	(void)oldc;
	newc->info = MPI_INFO_NULL;
	if (info == MPI_INFO_NULL)
		return MPI_SUCCESS;
	return MPI_Info_dup(info, &newc->info);
}

void
mpiv_comm_info_free(MPI_Comm c)
{
	if (c->info != MPI_INFO_NULL)
		MPI_Info_free(&c->info);
	c->info = MPI_INFO_NULL;
}

int
MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	MPI_Info ni = MPI_INFO_NULL;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_info");
	if (info == MPI_INFO_NULL)
		return mpiv_err(comm, MPI_ERR_INFO, "MPI_Comm_set_info");
	if ((rc = MPI_Info_dup(info, &ni)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Comm_set_info");
	mpiv_comm_info_free(comm);
	comm->info = ni;
	return MPI_SUCCESS;
}

/* A new info object the caller frees: the hints set on comm. */
int
MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_info");
	if (info_used == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_get_info");
	rc = comm->info != MPI_INFO_NULL ? MPI_Info_dup(comm->info, info_used) :
	    MPI_Info_create(info_used);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_get_info");
}

/* MPI_Comm_dup (attributes, topology, error handler), with the hints of
   `info` instead of comm's. */
int
MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	MPI_Info ni = MPI_INFO_NULL;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_dup_with_info");
	if (newcomm == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_dup_with_info");
	if (info != MPI_INFO_NULL && (rc = MPI_Info_dup(info, &ni)) !=
	    MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Comm_dup_with_info");
	if ((rc = MPI_Comm_dup(comm, newcomm)) != MPI_SUCCESS) {
		if (ni != MPI_INFO_NULL)
			MPI_Info_free(&ni);
		return rc;	/* MPI_Comm_dup reported it */
	}
	mpiv_comm_info_free(*newcomm);
	(*newcomm)->info = ni;
	return MPI_SUCCESS;
}
