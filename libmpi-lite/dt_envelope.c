/*
 * dt_envelope.c: how a derived datatype was built. Every constructor
 * records its combiner and arguments (mpiv_dt_set_args); MPI_Type_get_
 * envelope and MPI_Type_get_contents give them back. The types a
 * derived type was built from are retained while it lives, so the
 * handles get_contents returns stay valid after the user freed them;
 * a returned derived type is one more reference the caller frees with
 * MPI_Type_free, as MPI requires.
 */
#include <stdlib.h>
#include <string.h>

#include "impl.h"

struct mpiv_dt_args {
	int combiner;
	int ni, na, nc, nt;
	int *ints;
	MPI_Aint *aints;
	MPI_Count *counts;
	MPI_Datatype *types;
};

void
mpiv_dt_free_args(MPI_Datatype dt)
{
	struct mpiv_dt_args *a = dt->args;

	if (a == NULL)
		return;
	dt->args = NULL;
	for (int i = 0; i < a->nt; i++)
		mpiv_dt_release(a->types[i]);
	free(a->ints);
	free(a->aints);
	free(a->counts);
	free(a->types);
	free(a);
}

/* malloc of n elements of size sz (at least one byte), copied from src. */
static void *
dt_dup_array(const void *src, int n, size_t sz)
{
	void *p = malloc(n > 0 ? (size_t)n * sz : 1);

	if (p != NULL && n > 0)
		memcpy(p, src, (size_t)n * sz);
	return p;
}

int
mpiv_dt_set_args(MPI_Datatype dt, int combiner, int ni, const int *ints,
    int na, const MPI_Aint *aints, int nc, const MPI_Count *counts, int nt,
    const MPI_Datatype *types)
{
	struct mpiv_dt_args *a = calloc(1, sizeof(*a));

	if (a == NULL)
		goto nomem;
	a->combiner = combiner;
	a->ni = ni;
	a->na = na;
	a->nc = nc;
	a->ints = dt_dup_array(ints, ni, sizeof(*ints));
	a->aints = dt_dup_array(aints, na, sizeof(*aints));
	a->counts = dt_dup_array(counts, nc, sizeof(*counts));
	a->types = dt_dup_array(types, nt, sizeof(*types));
	if (a->ints == NULL || a->aints == NULL || a->counts == NULL ||
	    a->types == NULL) {
		free(a->ints);
		free(a->aints);
		free(a->counts);
		free(a->types);
		free(a);
		goto nomem;
	}
	a->nt = nt;
	for (int i = 0; i < nt; i++)
		mpiv_dt_retain(types[i]);
	mpiv_dt_free_args(dt);
	dt->args = a;
	dt->combiner = combiner;
	return MPI_SUCCESS;
nomem:
	mpiv_dt_release(dt);
	return MPI_ERR_NO_MEM;
}

int
MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
    int *num_addresses, int *num_datatypes, int *combiner)
{
	const struct mpiv_dt_args *a;

	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_envelope");
	if (num_integers == NULL || num_addresses == NULL ||
	    num_datatypes == NULL || combiner == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope");
	a = datatype->args;
	if (a == NULL) {	/* predefined, but MPI_Type_create_f90_* */
		*num_integers = *num_addresses = *num_datatypes = 0;
		*combiner = MPI_COMBINER_NAMED;
		return MPI_SUCCESS;
	}
	if (a->nc > 0) {
		/* built by a large-count (_c) constructor: its counts are
		   MPI_Count, only MPI_Type_get_envelope_c describes them */
		mpiv_err_detail("the type was built by a large-count "
		    "constructor: use MPI_Type_get_envelope_c");
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_envelope");
	}
	*num_integers = a->ni;
	*num_addresses = a->na;
	*num_datatypes = a->nt;
	*combiner = a->combiner;
	return MPI_SUCCESS;
}

int
MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
    MPI_Count *num_addresses, MPI_Count *num_large_counts,
    MPI_Count *num_datatypes, int *combiner)
{
	const struct mpiv_dt_args *a;

	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_envelope_c");
	if (num_integers == NULL || num_addresses == NULL ||
	    num_large_counts == NULL || num_datatypes == NULL ||
	    combiner == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_get_envelope_c");
	a = datatype->args;
	if (a == NULL) {	/* predefined, but MPI_Type_create_f90_* */
		*num_integers = *num_addresses = *num_large_counts = 0;
		*num_datatypes = 0;
		*combiner = MPI_COMBINER_NAMED;
		return MPI_SUCCESS;
	}
	*num_integers = a->ni;
	*num_addresses = a->na;
	*num_large_counts = a->nc;
	*num_datatypes = a->nt;
	*combiner = a->combiner;
	return MPI_SUCCESS;
}

/* Copies the arguments out; returned derived types gain a reference. */
static void
dt_contents_out(const struct mpiv_dt_args *a, int *ints, MPI_Aint *aints,
    MPI_Count *counts, MPI_Datatype *types)
{
	if (a->ni > 0)
		memcpy(ints, a->ints, (size_t)a->ni * sizeof(*ints));
	if (a->na > 0)
		memcpy(aints, a->aints, (size_t)a->na * sizeof(*aints));
	if (a->nc > 0)
		memcpy(counts, a->counts, (size_t)a->nc * sizeof(*counts));
	for (int i = 0; i < a->nt; i++) {
		types[i] = a->types[i];
		mpiv_dt_retain(types[i]);
	}
}

int
MPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
    int max_addresses, int max_datatypes, int array_of_integers[],
    MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
	const struct mpiv_dt_args *a;

	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_contents");
	a = datatype->args;
	if (a == NULL) {	/* predefined, but MPI_Type_create_f90_* */
		mpiv_err_detail("the type is predefined (combiner "
		    "MPI_COMBINER_NAMED): it has no contents");
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_contents");
	}
	if (a->nc > 0) {
		mpiv_err_detail("the type was built by a large-count "
		    "constructor: use MPI_Type_get_contents_c");
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_contents");
	}
	if (max_integers < a->ni || max_addresses < a->na ||
	    max_datatypes < a->nt) {
		mpiv_err_detail("the arrays hold %d integers, %d addresses, "
		    "%d datatypes; the type has %d, %d, %d", max_integers,
		    max_addresses, max_datatypes, a->ni, a->na, a->nt);
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_get_contents");
	}
	if ((a->ni > 0 && array_of_integers == NULL) ||
	    (a->na > 0 && array_of_addresses == NULL) ||
	    (a->nt > 0 && array_of_datatypes == NULL))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_get_contents");
	dt_contents_out(a, array_of_integers, array_of_addresses, NULL,
	    array_of_datatypes);
	return MPI_SUCCESS;
}

int
MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
    MPI_Count max_addresses, MPI_Count max_large_counts,
    MPI_Count max_datatypes, int array_of_integers[],
    MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
    MPI_Datatype array_of_datatypes[])
{
	const struct mpiv_dt_args *a;

	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_contents_c");
	a = datatype->args;
	if (a == NULL) {	/* predefined, but MPI_Type_create_f90_* */
		mpiv_err_detail("the type is predefined (combiner "
		    "MPI_COMBINER_NAMED): it has no contents");
		return mpiv_err(NULL, MPI_ERR_TYPE, "MPI_Type_get_contents_c");
	}
	if (max_integers < a->ni || max_addresses < a->na ||
	    max_large_counts < a->nc || max_datatypes < a->nt ||
	    (a->ni > 0 && array_of_integers == NULL) ||
	    (a->na > 0 && array_of_addresses == NULL) ||
	    (a->nc > 0 && array_of_large_counts == NULL) ||
	    (a->nt > 0 && array_of_datatypes == NULL))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Type_get_contents_c");
	dt_contents_out(a, array_of_integers, array_of_addresses,
	    array_of_large_counts, array_of_datatypes);
	return MPI_SUCCESS;
}
