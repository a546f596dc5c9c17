/*
 * dt_large.c: element counts of a status (MPI_Get_elements on partially
 * received derived types), MPI_Status_set_elements/_cancelled, and the
 * MPI_Count ("_x", MPI-4 "_c") forms of the datatype queries.
 *
 * A derived type keeps its basic element sizes in typemap order as runs
 * (struct mpiv_erun), so a partial element counts exactly the basic
 * elements its bytes hold, whatever their sizes.
 */
#include <limits.h>
#include <stdint.h>

#include "impl.h"

/* Basic elements in `bytes` of one element of dt (bytes < dt->size);
   -1 when bytes end inside a basic element. */
static MPI_Count
dt_partial_elements(MPI_Datatype dt, size_t bytes)
{
	MPI_Count n = 0;
	size_t esize;

	if (bytes == 0)
		return 0;
	if (dt->eruns == NULL && !dt->eruns_lost)	/* predefined */
		return -1;
	if (dt->eruns_lost) {
		/* runs not kept: elements assumed of equal size */
		if (dt->nbasic == 0 || dt->size % dt->nbasic != 0)
			return -1;
		esize = dt->size / dt->nbasic;
		return bytes % esize != 0 ? -1 : (MPI_Count)(bytes / esize);
	}
	for (size_t j = 0; j < dt->neruns && bytes > 0; j++) {
		const struct mpiv_erun *e = &dt->eruns[j];
		size_t all = e->size * e->count;

		if (bytes >= all) {
			n += (MPI_Count)e->count;
			bytes -= all;
			continue;
		}
		if (e->size == 0 || bytes % e->size != 0)
			return -1;
		return n + (MPI_Count)(bytes / e->size);
	}
	return bytes == 0 ? n : -1;
}

MPI_Count
mpiv_dt_elements(MPI_Datatype dt, size_t bytes)
{
	MPI_Count part;

	if (dt->size == 0 || dt->nbasic == 0)
		return bytes == 0 ? 0 : -1;
	part = dt_partial_elements(dt, bytes % dt->size);
	if (part < 0)
		return -1;
	if ((bytes / dt->size) > (size_t)(LLONG_MAX - part) / dt->nbasic)
		return -1;
	return (MPI_Count)((bytes / dt->size) * dt->nbasic) + part;
}

long long
mpiv_dt_elements_bytes(MPI_Datatype dt, MPI_Count n)
{
	size_t whole, rest, bytes;

	if (n < 0)
		return -1;
	if (dt->size == 0 || dt->nbasic == 0)
		return n == 0 ? 0 : -1;
	whole = (size_t)n / dt->nbasic;
	rest = (size_t)n % dt->nbasic;
	if (whole > (size_t)LLONG_MAX / dt->size)
		return -1;
	bytes = whole * dt->size;
	if (rest == 0)
		return (long long)bytes;
	if (dt->eruns == NULL || dt->eruns_lost) {
		/* equal-size elements assumed (predefined: nbasic is 1) */
		return (long long)(bytes + rest * (dt->size / dt->nbasic));
	}
	for (size_t j = 0; j < dt->neruns && rest > 0; j++) {
		const struct mpiv_erun *e = &dt->eruns[j];
		size_t k = rest < e->count ? rest : e->count;

		bytes += k * e->size;
		rest -= k;
	}
	return (long long)bytes;
}

/* ---------------- status ---------------- */

static int
dt_get_elements(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count,
    const char *fn)
{
	MPI_Count n;
	int rc;

	if (status == NULL || count == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, fn);
	n = mpiv_dt_elements(dt, status->mpiv_count);
	*count = n < 0 ? MPI_UNDEFINED : n;
	return MPI_SUCCESS;
}

int
MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype,
    MPI_Count *count)
{
	return dt_get_elements(status, datatype, count, "MPI_Get_elements_x");
}

int
MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype,
    MPI_Count *count)
{
	return dt_get_elements(status, datatype, count, "MPI_Get_elements_c");
}

int
MPI_Get_count_c(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
	int rc;

	if (status == NULL || count == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Get_count_c");
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Get_count_c");
	if (dt->size == 0)
		*count = status->mpiv_count == 0 ? 0 : MPI_UNDEFINED;
	else if (status->mpiv_count % dt->size != 0)
		*count = MPI_UNDEFINED;
	else
		*count = (MPI_Count)(status->mpiv_count / dt->size);
	return MPI_SUCCESS;
}

static int
dt_set_elements(MPI_Status *status, MPI_Datatype dt, MPI_Count count,
    const char *fn)
{
	long long bytes;
	int rc;

	if (status == NULL || count < 0)
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, fn);
	if ((bytes = mpiv_dt_elements_bytes(dt, count)) < 0)
		return mpiv_err(NULL, MPI_ERR_COUNT, fn);
	status->mpiv_count = (size_t)bytes;
	return MPI_SUCCESS;
}

int
MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
	return dt_set_elements(status, datatype, count,
	    "MPI_Status_set_elements");
}

int
MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype,
    MPI_Count count)
{
	return dt_set_elements(status, datatype, count,
	    "MPI_Status_set_elements_x");
}

int
MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	if (status == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled");
	status->mpiv_cancelled = flag != 0;
	return MPI_SUCCESS;
}

/* ---------------- MPI_Count queries ---------------- */

static int
dt_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent, bool truex,
    const char *fn)
{
	if (dt == MPI_DATATYPE_NULL)
		return mpiv_err(NULL, MPI_ERR_TYPE, fn);
	if (lb == NULL || extent == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	*lb = truex ? dt->true_lb : dt->lb;
	*extent = truex ? dt->true_extent : dt->extent;
	return MPI_SUCCESS;
}

int
MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
    MPI_Count *extent)
{
	return dt_extent_x(datatype, lb, extent, false,
	    "MPI_Type_get_extent_x");
}

int
MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
    MPI_Count *true_extent)
{
	return dt_extent_x(datatype, true_lb, true_extent, true,
	    "MPI_Type_get_true_extent_x");
}

int
MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb,
    MPI_Count *extent)
{
	return dt_extent_x(datatype, lb, extent, false,
	    "MPI_Type_get_extent_c");
}

int
MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
    MPI_Count *true_extent)
{
	return dt_extent_x(datatype, true_lb, true_extent, true,
	    "MPI_Type_get_true_extent_c");
}

int
MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_size_c");
	if (size == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_size_c");
	*size = (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}
