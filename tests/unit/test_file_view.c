/*
 * test_file_view.c: MPI-IO views (libmpi-lite/file_view.c) compiled in
 * with the datatypes: a range of a view's data stream becomes the right
 * file extents (tiles, holes, displacement, merging of adjacent blocks,
 * the per-operation caps), and positions map to the right bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../libmpi-lite/datatype.c"
#include "../../libmpi-lite/file_view.c"

/* ---- stubs for what these files call in the rest of the library ---- */

int
mpiv_type_attr_dup(MPI_Datatype oldt, MPI_Datatype newt)
{
	(void)oldt;
	(void)newt;
	return MPI_SUCCESS;
}

int
mpiv_type_attr_free_all(MPI_Datatype t)
{
	(void)t;
	return MPI_SUCCESS;
}

int
mpiv_err(MPI_Comm comm, int code, const char *fn)
{
	(void)comm;
	(void)fn;
	return code;
}

void
mpiv_err_detail(const char *fmt, ...)
{
	(void)fmt;
}

int
mpiv_dt_set_args(MPI_Datatype dt, int combiner, int ni, const int *ints,
    int na, const MPI_Aint *aints, int nc, const MPI_Count *counts, int nt,
    const MPI_Datatype *types)
{
	(void)dt; (void)combiner; (void)ni; (void)ints; (void)na; (void)aints;
	(void)nc; (void)counts; (void)nt; (void)types;
	return MPI_SUCCESS;
}

void
mpiv_dt_free_args(MPI_Datatype dt)
{
	(void)dt;
}

/* ---- tests ---- */

/* The default view: bytes from 0, one extent whatever the length. */
static void
test_bytes(void **state)
{
	struct mpiv_fview v;
	uint64_t ext[8], n;
	size_t np;

	(void)state;
	memset(&v, 0, sizeof(v));
	assert_int_equal(mpiv_fview_set(&v, 0, MPI_BYTE, MPI_BYTE), MPI_SUCCESS);
	n = mpiv_fview_extents(&v, 100, 1000000, ext, 4, 1u << 30, &np);
	assert_int_equal(n, 1000000);
	assert_int_equal(np, 1);
	assert_int_equal(ext[0], 100);
	assert_int_equal(ext[1], 1000000);
	/* the data cap */
	n = mpiv_fview_extents(&v, 0, 1000, ext, 4, 300, &np);
	assert_int_equal(n, 300);
	assert_int_equal(mpiv_fview_byte(&v, 77), 77);
	mpiv_fview_clear(&v);
}

/* A vector filetype of ints with a displacement: one extent per block,
   across tiles; a start inside a block; the pair cap. */
static void
test_vector(void **state)
{
	struct mpiv_fview v;
	MPI_Datatype vec;
	uint64_t ext[16], n;
	size_t np;

	(void)state;
	memset(&v, 0, sizeof(v));
	/* 3 blocks of 2 ints, stride 5 ints: tile extent 12 ints = 48 B
	   (((3 - 1) * 5 + 2) ints) */
	assert_int_equal(MPI_Type_vector(3, 2, 5, MPI_INT, &vec), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&vec), MPI_SUCCESS);
	assert_int_equal(mpiv_fview_set(&v, 16, MPI_INT, vec), MPI_SUCCESS);
	/* 8 ints from etype 1: 1 int of block 0, block 1, block 2, then
	   tile 1: block 0 (merged with the last), 1 int of block 1 */
	n = mpiv_fview_extents(&v, 4, 32, ext, 8, 1u << 30, &np);
	assert_int_equal(n, 32);
	assert_int_equal(np, 4);
	assert_int_equal(ext[0], 16 + 4);	assert_int_equal(ext[1], 4);
	assert_int_equal(ext[2], 16 + 20);	assert_int_equal(ext[3], 8);
	/* block 2 of tile 0 (40..48) and block 0 of tile 1 (48..56) abut */
	assert_int_equal(ext[4], 16 + 40);	assert_int_equal(ext[5], 16);
	assert_int_equal(ext[6], 16 + 48 + 20);	assert_int_equal(ext[7], 4);
	/* the pair cap: two pairs, the rest for the next operation */
	n = mpiv_fview_extents(&v, 4, 32, ext, 2, 1u << 30, &np);
	assert_int_equal(np, 2);
	assert_int_equal(n, 12);
	/* the data cap cuts inside a block */
	n = mpiv_fview_extents(&v, 4, 32, ext, 8, 6, &np);
	assert_int_equal(n, 6);
	assert_int_equal(np, 2);
	assert_int_equal(ext[3], 2);
	/* positions */
	assert_int_equal(mpiv_fview_byte(&v, 0), 16);
	assert_int_equal(mpiv_fview_byte(&v, 2 * 4), 16 + 20);
	assert_int_equal(mpiv_fview_byte(&v, 6 * 4), 16 + 48);
	assert_int_equal(mpiv_fview_byte(&v, 7 * 4 + 2), 16 + 48 + 6);
	MPI_Type_free(&vec);
	/* the view keeps its own reference */
	assert_int_equal(mpiv_fview_byte(&v, 9 * 4), 16 + 48 + 24);
	mpiv_fview_clear(&v);
}

/* One int every 4: the resized type tiles with holes between ints. */
static void
test_resized(void **state)
{
	struct mpiv_fview v;
	MPI_Datatype one;
	uint64_t ext[16], n;
	size_t np;

	(void)state;
	memset(&v, 0, sizeof(v));
	assert_int_equal(MPI_Type_create_resized(MPI_INT, 0, 16, &one),
	    MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&one), MPI_SUCCESS);
	assert_int_equal(mpiv_fview_set(&v, 8, MPI_INT, one), MPI_SUCCESS);
	assert_false(v.dense);
	n = mpiv_fview_extents(&v, 8, 12, ext, 16, 1u << 30, &np);
	assert_int_equal(n, 12);
	assert_int_equal(np, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ext[2 * i], 8 + 16 * (2 + i));
		assert_int_equal(ext[2 * i + 1], 4);
	}
	MPI_Type_free(&one);
	mpiv_fview_clear(&v);
}

/* What a view refuses. */
static void
test_refused(void **state)
{
	struct mpiv_fview v;
	MPI_Datatype c3;

	(void)state;
	memset(&v, 0, sizeof(v));
	assert_int_equal(mpiv_fview_set(&v, -1, MPI_BYTE, MPI_BYTE), MPI_ERR_ARG);
	/* 3 bytes are not a whole number of ints */
	assert_int_equal(MPI_Type_contiguous(3, MPI_BYTE, &c3), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&c3), MPI_SUCCESS);
	assert_int_equal(mpiv_fview_set(&v, 0, MPI_INT, c3), MPI_ERR_TYPE);
	MPI_Type_free(&c3);
	mpiv_fview_clear(&v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_resized),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
