/* attr_finalize: MPI_Finalize first deletes MPI_COMM_SELF's attributes
 * (MPI-2.2), last set first, while MPI is up: each delete callback sees
 * MPI_Finalized false, and the last one (of the first attribute set)
 * communicates (an Allreduce on MPI_COMM_WORLD, as a tool's "at exit"
 * report would). The keyvals are freed before MPI_Finalize, their
 * attributes still set. Checked after MPI_Finalize returns. */
#include "mpitest.h"

#define NKEYS 5

static int order[NKEYS], ndeleted, finalized_seen, sum = -1;

static int del_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
	int idx = (int)(intptr_t)val, flag = 1, one = 1;
	(void)keyval;
	(void)extra;
	if (comm != MPI_COMM_SELF)
		return MPI_ERR_OTHER;
	MPI_Finalized(&flag);
	finalized_seen += flag;
	if (ndeleted < NKEYS)
		order[ndeleted] = idx;
	ndeleted++;
	if (idx == 0 && MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM,
	    MPI_COMM_WORLD) != MPI_SUCCESS)
		return MPI_ERR_OTHER;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	int keys[NKEYS], errs = 0;
	t_init(&argc, &argv, "attr_finalize");
	for (int i = 0; i < NKEYS; i++) {
		MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn,
		    &keys[i], NULL));
		MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[i],
		    (void *)(intptr_t)i));
	}
	/* setting one again deletes its old value, and makes it the last
	   set: the order of setting becomes 0 1 3 4 2 */
	MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[2], (void *)(intptr_t)2));
	CHECK_INT(ndeleted, 1, "replacing a value deletes the old one");
	ndeleted = 0;
	for (int i = 0; i < NKEYS; i++)
		MPI_OK(MPI_Comm_free_keyval(&keys[i]));
	CHECK_INT(ndeleted, 0, "freeing keyvals deletes nothing");
	MPI_OK(MPI_Finalize());
	if (ndeleted != NKEYS) {
		fprintf(stderr, "FAIL: %d delete callbacks ran, want %d\n",
		    ndeleted, NKEYS);
		errs++;
	}
	static const int want[NKEYS] = { 2, 4, 3, 1, 0 };
	for (int i = 0; i < NKEYS && i < ndeleted; i++)
		if (order[i] != want[i]) {
			fprintf(stderr, "FAIL: delete %d was of attribute %d, "
			    "want %d (last set first)\n", i, order[i],
			    want[i]);
			errs++;
		}
	if (finalized_seen != 0) {
		fprintf(stderr, "FAIL: MPI_Finalized said true in %d delete "
		    "callbacks\n", finalized_seen);
		errs++;
	}
	if (sum != t_size) {
		fprintf(stderr, "FAIL: the Allreduce in a delete callback gave "
		    "%d, want %d\n", sum, t_size);
		errs++;
	}
	if (errs == 0 && t_rank == 0)
		printf("attr_finalize ok nranks=%d\n", t_size);
	return errs != 0;
}
