/*
 * dt_f90.c: the datatypes of Fortran's parameterized kinds.
 *
 * MPI_Type_create_f90_real(p, r) is the type of a REAL of kind
 * SELECTED_REAL_KIND(p, r), and likewise COMPLEX, and INTEGER of
 * SELECTED_INT_KIND(r); MPI_UNDEFINED for p or r means "not given"
 * (not both). With gfortran the kinds are REAL 4 (p <= 6, r <= 37) and
 * 8 (p <= 15, r <= 307), then 10 and 16, which libmpi-lite has no type
 * for (MPI_ERR_ARG, saying so); INTEGER 1 (r <= 2), 2 (r <= 4), 4
 * (r <= 9), 8 (r <= 18), then 16 (the same).
 *
 * As MPI asks, the type returned is predefined (MPI_Type_free refuses
 * it), the same (p, r) gives the same handle, and MPI_Type_get_envelope
 * says MPI_COMBINER_F90_REAL (_COMPLEX, _INTEGER) with the p and r given
 * (MPI_Type_get_contents gives them). It is a copy of MPI_REAL4 ...
 * otherwise: same size, same reductions.
 *
 * MPI_Type_match_size(typeclass, size) names the predefined type of a
 * class (MPI_TYPECLASS_REAL, _INTEGER, _COMPLEX) and a size in bytes.
 */
#include <stdlib.h>

#include "impl.h"

#define DT_F90_MAX	64	/* distinct (combiner, p, r) asked for */

static struct dt_f90 {
	int combiner, p, r;
	MPI_Datatype type;
} dt_f90[DT_F90_MAX];
static int dt_nf90;

/* The kind SELECTED_REAL_KIND(p, r) picks, as the size of one REAL of
   it: 4 or 8, else 0 (a kind libmpi-lite has no type for). */
static int
dt_real_size(int p, int r)
{
	if (p == MPI_UNDEFINED)
		p = 0;
	if (r == MPI_UNDEFINED)
		r = 0;
	if (p <= 6 && r <= 37)
		return 4;
	if (p <= 15 && r <= 307)
		return 8;
	return 0;
}

static int
dt_int_size(int r)
{
	if (r <= 2)
		return 1;
	if (r <= 4)
		return 2;
	if (r <= 9)
		return 4;
	if (r <= 18)
		return 8;
	return 0;
}

/* The handle for (combiner, p, r) of base, made on first use. */
static int
dt_f90_get(int combiner, int p, int r, MPI_Datatype base,
    MPI_Datatype *newtype)
{
	int ints[2] = { p, r }, rc;
	MPI_Datatype dt;

	for (int i = 0; i < dt_nf90; i++)
		if (dt_f90[i].combiner == combiner && dt_f90[i].p == p &&
		    dt_f90[i].r == r) {
			*newtype = dt_f90[i].type;
			return MPI_SUCCESS;
		}
	if (dt_nf90 == DT_F90_MAX) {
		mpiv_err_detail("more than %d distinct precisions and ranges "
		    "asked for", DT_F90_MAX);
		return MPI_ERR_NO_MEM;
	}
	if ((dt = malloc(sizeof(*dt))) == NULL)
		return MPI_ERR_NO_MEM;
	*dt = *base;	/* predefined: never released, never freed */
	dt->args = NULL;
	dt->attrs = NULL;
	if (combiner == MPI_COMBINER_F90_INTEGER)
		rc = mpiv_dt_set_args(dt, combiner, 1, &ints[1], 0, NULL, 0,
		    NULL, 0, NULL);
	else
		rc = mpiv_dt_set_args(dt, combiner, 2, ints, 0, NULL, 0, NULL,
		    0, NULL);
	if (rc != MPI_SUCCESS) {
		free(dt);
		return rc;
	}
	dt_f90[dt_nf90].combiner = combiner;
	dt_f90[dt_nf90].p = p;
	dt_f90[dt_nf90].r = r;
	dt_f90[dt_nf90++].type = dt;
	*newtype = dt;
	return MPI_SUCCESS;
}

static int
dt_f90_real(int combiner, int p, int r, MPI_Datatype *newtype,
    const char *fn)
{
	int size, rc;
	MPI_Datatype base;

	if (newtype == NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED)) {
		if (newtype != NULL)
			mpiv_err_detail("p and r are both MPI_UNDEFINED");
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	}
	if ((size = dt_real_size(p, r)) == 0) {
		mpiv_err_detail("no REAL kind of at most 8 bytes has "
		    "precision %d and range %d (mpiv has no type for REAL "
		    "kinds 10 and 16)", p, r);
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	}
	if (combiner == MPI_COMBINER_F90_REAL)
		base = size == 4 ? MPI_REAL4 : MPI_REAL8;
	else
		base = size == 4 ? MPI_COMPLEX8 : MPI_COMPLEX16;
	if ((rc = dt_f90_get(combiner, p, r, base, newtype)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, fn);
	return MPI_SUCCESS;
}

int
MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
	return dt_f90_real(MPI_COMBINER_F90_REAL, p, r, newtype,
	    "MPI_Type_create_f90_real");
}

int
MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
	return dt_f90_real(MPI_COMBINER_F90_COMPLEX, p, r, newtype,
	    "MPI_Type_create_f90_complex");
}

int
MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_f90_integer";
	MPI_Datatype base;
	int rc;

	if (newtype == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	switch (dt_int_size(r)) {
	case 1: base = MPI_INTEGER1; break;
	case 2: base = MPI_INTEGER2; break;
	case 4: base = MPI_INTEGER4; break;
	case 8: base = MPI_INTEGER8; break;
	default:
		mpiv_err_detail("no INTEGER kind of at most 8 bytes has range "
		    "%d (mpiv has no type for INTEGER kind 16)", r);
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	}
	if ((rc = dt_f90_get(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, base,
	    newtype)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, fn);
	return MPI_SUCCESS;
}

int
MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
	MPI_Datatype t = MPI_DATATYPE_NULL;

	if (datatype == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
	switch (typeclass) {
	case MPI_TYPECLASS_REAL:
		t = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 :
		    MPI_DATATYPE_NULL;
		break;
	case MPI_TYPECLASS_INTEGER:
		t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 :
		    size == 4 ? MPI_INTEGER4 : size == 8 ? MPI_INTEGER8 :
		    MPI_DATATYPE_NULL;
		break;
	case MPI_TYPECLASS_COMPLEX:
		t = size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 :
		    MPI_DATATYPE_NULL;
		break;
	default:
		mpiv_err_detail("typeclass %d is none of MPI_TYPECLASS_REAL, "
		    "_INTEGER, _COMPLEX", typeclass);
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
	}
	if (t == MPI_DATATYPE_NULL) {
		mpiv_err_detail("no type of that class has %d bytes", size);
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_match_size");
	}
	*datatype = t;
	return MPI_SUCCESS;
}
