/*
 * test_datatype.c: the pure-logic parts of libmpi-lite's upper half,
 * compiled in directly (the unit tests link only libmpivrt.a): datatypes
 * (typemaps, extents, pack/unpack), reduction ops (every op x type class,
 * MAXLOC/MINLOC ties, derived types), groups (set operations, translate,
 * compare) and MPI_Dims_create. The communication calls they reference are
 * stubbed below.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <complex.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../libmpi-lite/datatype.c"
#include "../../libmpi-lite/dt_envelope.c"
#include "../../libmpi-lite/dt_large.c"
#include "../../libmpi-lite/dt_darray.c"
#include "../../libmpi-lite/dt_external.c"
#include "../../libmpi-lite/op.c"
#include "../../libmpi-lite/group.c"
#include "../../libmpi-lite/topo.c"

/* ---- stubs for what these files call in the rest of the library ---- */

/* attr.c: these types carry no attributes */
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

struct mpiv_state mpiv_state = { .initialized = true, .world_rank = 0,
	.world_size = 8 };
struct mpiv_comm mpiv_comm_world;

static int last_err;

void
mpiv_err_detail(const char *fmt, ...)
{
	(void)fmt;
}

int
mpiv_err(MPI_Comm comm, int code, const char *fn)
{
	(void)comm;
	(void)fn;
	last_err = code;
	return code;
}

int
mpiv_comm_check(MPI_Comm c)
{
	return c == MPI_COMM_NULL ? MPI_ERR_COMM : MPI_SUCCESS;
}

int
mpiv_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	(void)comm; (void)color; (void)key;
	*newcomm = MPI_COMM_NULL;
	return MPI_ERR_INTERN;
}

int
MPI_Comm_free(MPI_Comm *comm)
{
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* fhandle.c: a Fortran user op gets the datatype as a Fortran handle */
MPI_Fint
MPI_Type_c2f(MPI_Datatype dt)
{
	return dt == MPI_INTEGER ? 1 : 99;
}

void mpiv_topo_graph_free(struct mpiv_topo *t) { (void)t; }

int
mpiv_topo_graph_dup(const struct mpiv_topo *t, struct mpiv_topo **out)
{
	(void)t;
	*out = NULL;
	return MPI_ERR_INTERN;
}

/* ---- datatypes ---- */

static void
test_predefined(void **state)
{
	struct { double v; int i; } di;
	struct { short v; int i; } si;
	struct { long double v; int i; } ldi;
	MPI_Aint lb, ext;
	int sz;

	(void)state;
	MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, sizeof(di));
	MPI_Type_size(MPI_DOUBLE_INT, &sz);
	assert_int_equal(sz, sizeof(double) + sizeof(int));
	assert_false(mpiv_dt_is_contig(MPI_DOUBLE_INT));
	MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext);
	assert_int_equal(ext, sizeof(si));
	MPI_Type_size(MPI_SHORT_INT, &sz);
	assert_int_equal(sz, sizeof(short) + sizeof(int));
	MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext);
	assert_int_equal(ext, sizeof(ldi));
	MPI_Type_get_extent(MPI_2INT, &lb, &ext);
	assert_int_equal(ext, 2 * sizeof(int));
	assert_true(mpiv_dt_is_contig(MPI_2INT));
	MPI_Type_size(MPI_C_DOUBLE_COMPLEX, &sz);
	assert_int_equal(sz, 16);
	MPI_Type_size(MPI_C_BOOL, &sz);
	assert_int_equal(sz, 1);
	assert_int_equal(mpiv_dt_check(MPI_INT), MPI_SUCCESS);
	assert_int_equal(mpiv_dt_check(MPI_DATATYPE_NULL), MPI_ERR_TYPE);

	/* packing a pair array drops the padding */
	struct { double v; int i; } arr[2] = { { 1.5, 7 }, { -2.0, 9 } }, back[2];
	unsigned char packed[24];
	memset(back, 0, sizeof(back));
	mpiv_dt_pack(arr, 2, MPI_DOUBLE_INT, packed);
	mpiv_dt_unpack(packed, sizeof(packed), back, 2, MPI_DOUBLE_INT);
	assert_true(back[0].v == 1.5 && back[0].i == 7);
	assert_true(back[1].v == -2.0 && back[1].i == 9);
}

static void
test_vector(void **state)
{
	MPI_Datatype v;
	int a[12], out[6], back[12], sz;
	MPI_Aint lb, ext, tlb, text;

	(void)state;
	for (int i = 0; i < 12; i++)
		a[i] = i;
	/* 3 blocks of 2 ints, stride 4: 0 1 . . 4 5 . . 8 9 */
	assert_int_equal(MPI_Type_vector(3, 2, 4, MPI_INT, &v), MPI_SUCCESS);
	assert_int_equal(mpiv_dt_check(v), MPI_ERR_TYPE);	/* uncommitted */
	MPI_Type_commit(&v);
	assert_int_equal(mpiv_dt_check(v), MPI_SUCCESS);
	MPI_Type_size(v, &sz);
	assert_int_equal(sz, 6 * sizeof(int));
	MPI_Type_get_extent(v, &lb, &ext);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, 10 * sizeof(int));
	MPI_Type_get_true_extent(v, &tlb, &text);
	assert_int_equal(text, 10 * sizeof(int));
	assert_int_equal(v->nblocks, 3);
	mpiv_dt_pack(a, 1, v, out);
	int want[6] = { 0, 1, 4, 5, 8, 9 };
	assert_memory_equal(out, want, sizeof(want));
	memset(back, -1, sizeof(back));
	mpiv_dt_unpack(out, sizeof(out), back, 1, v);
	assert_int_equal(back[4], 4);
	assert_int_equal(back[2], -1);
	/* partial unpack: 3 ints only */
	memset(back, -1, sizeof(back));
	mpiv_dt_unpack(out, 3 * sizeof(int), back, 1, v);
	assert_int_equal(back[1], 1);
	assert_int_equal(back[4], 4);
	assert_int_equal(back[5], -1);
	MPI_Type_free(&v);
	assert_null(v);

	/* vector with stride == blocklength merges to one block */
	MPI_Type_vector(4, 3, 3, MPI_INT, &v);
	assert_int_equal(v->nblocks, 1);
	assert_true(v->contiguous);
	MPI_Type_free(&v);

	/* negative stride */
	MPI_Type_vector(3, 1, -2, MPI_INT, &v);
	MPI_Type_get_extent(v, &lb, &ext);
	assert_int_equal(lb, -4 * (MPI_Aint)sizeof(int));
	assert_int_equal(ext, 5 * sizeof(int));
	MPI_Type_commit(&v);
	mpiv_dt_pack(&a[6], 1, v, out);
	assert_int_equal(out[0], 6);
	assert_int_equal(out[1], 4);
	assert_int_equal(out[2], 2);
	MPI_Type_free(&v);
	assert_int_equal(MPI_Type_vector(-1, 1, 1, MPI_INT, &v), MPI_ERR_COUNT);
}

static void
test_indexed_struct(void **state)
{
	MPI_Datatype t, s, r, c;
	int bl[3] = { 2, 1, 3 }, disp[3] = { 5, 0, 8 };
	int a[12], out[6], sz;
	MPI_Aint lb, ext;

	(void)state;
	for (int i = 0; i < 12; i++)
		a[i] = 100 + i;
	MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
	MPI_Type_commit(&t);
	mpiv_dt_pack(a, 1, t, out);
	int want[6] = { 105, 106, 100, 108, 109, 110 };
	assert_memory_equal(out, want, sizeof(want));
	MPI_Type_get_extent(t, &lb, &ext);
	assert_int_equal(lb, 0);
	assert_int_equal(ext, 11 * sizeof(int));
	MPI_Type_free(&t);

	int idisp[2] = { 3, 0 };
	MPI_Type_create_indexed_block(2, 2, idisp, MPI_INT, &t);
	MPI_Type_commit(&t);
	mpiv_dt_pack(a, 1, t, out);
	assert_int_equal(out[0], 103);
	assert_int_equal(out[2], 100);
	MPI_Type_free(&t);

	/* struct {char c; double d; int i;} with padding */
	struct sx { char c; double d; int i; } x[2] = { { 'a', 1.25, 3 },
		{ 'b', 2.5, 4 } }, y[2];
	int sbl[3] = { 1, 1, 1 };
	MPI_Aint sd[3] = { offsetof(struct sx, c), offsetof(struct sx, d),
		offsetof(struct sx, i) };
	MPI_Datatype st[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT };
	MPI_Type_create_struct(3, sbl, sd, st, &s);
	MPI_Type_commit(&s);
	MPI_Type_size(s, &sz);
	assert_int_equal(sz, 1 + 8 + 4);
	MPI_Type_get_extent(s, &lb, &ext);
	assert_int_equal(ext, sizeof(struct sx));	/* alignment epsilon */
	assert_int_equal(s->basic, MPIV_B_NONE);
	unsigned char pk[26];
	mpiv_dt_pack(x, 2, s, pk);
	memset(y, 0, sizeof(y));
	mpiv_dt_unpack(pk, sizeof(pk), y, 2, s);
	assert_true(y[1].c == 'b' && y[1].d == 2.5 && y[1].i == 4);
	assert_true(y[0].c == 'a' && y[0].d == 1.25 && y[0].i == 3);

	/* resized: one int every 3 ints */
	MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &r);
	MPI_Type_commit(&r);
	MPI_Type_get_extent(r, &lb, &ext);
	assert_int_equal(ext, 3 * sizeof(int));
	assert_false(mpiv_dt_is_contig(r));
	mpiv_dt_pack(a, 4, r, out);
	assert_int_equal(out[0], 100);
	assert_int_equal(out[1], 103);
	assert_int_equal(out[3], 109);
	/* contiguous of the resized type keeps the stride */
	MPI_Type_contiguous(2, r, &c);
	MPI_Type_commit(&c);
	MPI_Type_get_extent(c, &lb, &ext);
	assert_int_equal(ext, 6 * sizeof(int));
	mpiv_dt_pack(a, 2, c, out);
	assert_int_equal(out[2], 106);
	assert_int_equal(out[3], 109);
	assert_int_equal(c->basic, MPIV_B_INT);
	assert_int_equal(c->nbasic, 2);

	/* freeing a type used by a pending request is safe */
	MPI_Datatype held = c;
	mpiv_dt_retain(c);
	MPI_Type_free(&c);
	assert_null(c);
	MPI_Type_free(&r);
	mpiv_dt_pack(a, 2, held, out);	/* still alive: the request's ref */
	assert_int_equal(out[3], 109);
	mpiv_dt_release(held);
	MPI_Type_free(&s);

	/* predefined types cannot be freed */
	MPI_Datatype p = MPI_INT;
	assert_int_equal(MPI_Type_free(&p), MPI_ERR_TYPE);
}

/* Element runs: Get_elements of partial elements, the bytes of n
   elements (Status_set_elements), runs merged, copied by dup. */
static void
test_elements(void **state)
{
	int bl[3] = { 1, 3, 2 };
	MPI_Aint d[3] = { 0, 8, 32 };
	MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_SHORT }, s, v, dup;

	(void)state;
	assert_int_equal(MPI_Type_create_struct(3, bl, d, ty, &s), MPI_SUCCESS);
	assert_int_equal(MPI_Type_commit(&s), MPI_SUCCESS);
	assert_int_equal(s->neruns, 3);
	assert_int_equal(s->nbasic, 6);
	/* size 4 + 24 + 4 = 32 */
	assert_int_equal(mpiv_dt_elements(s, 0), 0);
	assert_int_equal(mpiv_dt_elements(s, 4), 1);
	assert_int_equal(mpiv_dt_elements(s, 12), 2);
	assert_int_equal(mpiv_dt_elements(s, 28), 4);
	assert_int_equal(mpiv_dt_elements(s, 30), 5);
	assert_int_equal(mpiv_dt_elements(s, 32), 6);
	assert_int_equal(mpiv_dt_elements(s, 32 + 12), 8);
	assert_int_equal(mpiv_dt_elements(s, 6), -1);	/* inside a double */
	assert_int_equal(mpiv_dt_elements(MPI_INT, 6), -1);
	assert_int_equal(mpiv_dt_elements(MPI_INT, 8), 2);
	assert_int_equal(mpiv_dt_elements_bytes(s, 5), 30);
	assert_int_equal(mpiv_dt_elements_bytes(s, 8), 44);
	assert_int_equal(mpiv_dt_elements_bytes(MPI_DOUBLE, 3), 24);
	/* a vector of it repeats the runs; a dup copies them */
	assert_int_equal(MPI_Type_vector(2, 1, 2, s, &v), MPI_SUCCESS);
	assert_int_equal(v->neruns, 6);
	assert_int_equal(mpiv_dt_elements(v, 32 + 4), 7);
	assert_int_equal(MPI_Type_dup(s, &dup), MPI_SUCCESS);
	assert_int_equal(dup->neruns, 3);
	assert_int_equal(mpiv_dt_elements(dup, 30), 5);
	MPI_Type_free(&dup);
	MPI_Type_free(&v);
	MPI_Type_free(&s);
	/* equal kinds merge: contiguous(5, int) is one run of 5 */
	assert_int_equal(MPI_Type_contiguous(5, MPI_INT, &v), MPI_SUCCESS);
	assert_int_equal(v->neruns, 1);
	assert_int_equal(v->eruns[0].count, 5);
	MPI_Type_free(&v);
	/* a dup of a predefined type is one element of its size */
	assert_int_equal(MPI_Type_dup(MPI_DOUBLE, &dup), MPI_SUCCESS);
	assert_int_equal(mpiv_dt_elements(dup, 16), 2);
	assert_int_equal(mpiv_dt_elements(dup, 4), -1);
	MPI_Type_free(&dup);
}

/* Empty members: no true extent; a type without data is lb 0 extent 0. */
static void
test_empty_bounds(void **state)
{
	MPI_Datatype e, s, h;
	int bl[2] = { 1, 1 }, hb[2] = { 0, 2 };
	MPI_Aint d[2] = { 0, 40 }, hd[2] = { 100, 8 };
	MPI_Datatype ty[2];

	(void)state;
	assert_int_equal(MPI_Type_contiguous(0, MPI_INT, &e), MPI_SUCCESS);
	ty[0] = e;
	ty[1] = MPI_INT;
	assert_int_equal(MPI_Type_create_struct(2, bl, d, ty, &s), MPI_SUCCESS);
	assert_int_equal(s->lb, 0);
	assert_int_equal(s->extent, 44);
	assert_int_equal(s->true_lb, 40);
	assert_int_equal(s->true_extent, 4);
	MPI_Type_free(&s);
	/* hindexed of the empty type only: no data, lb 0 extent 0 */
	assert_int_equal(MPI_Type_create_hindexed(2, bl, d, e, &s), MPI_SUCCESS);
	assert_int_equal(s->lb, 0);
	assert_int_equal(s->extent, 0);
	MPI_Type_free(&s);
	/* a leading zero-length block adds nothing */
	assert_int_equal(MPI_Type_create_hindexed(2, hb, hd, MPI_INT, &h),
	    MPI_SUCCESS);
	assert_int_equal(h->lb, 8);
	assert_int_equal(h->extent, 8);
	assert_true(h->contiguous);
	MPI_Type_free(&h);
	MPI_Type_free(&e);
}

/* external32 conversions, one element at a time. */
static void
test_external32(void **state)
{
	unsigned char ext[32], nat[32];
	long l;
	long double ld = -0.1L, back;

	(void)state;
	l = -2;
	assert_int_equal(x32_elem(MPIV_B_LONG, (unsigned char *)&l, sizeof(l),
	    ext, true), 0);
	assert_memory_equal(ext, "\xff\xff\xff\xfe", 4);
	l = 0;
	assert_int_equal(x32_elem(MPIV_B_LONG, (unsigned char *)&l, sizeof(l),
	    ext, false), 0);
	assert_int_equal(l, -2);
	l = 1L << 33;
	assert_int_equal(x32_elem(MPIV_B_LONG, (unsigned char *)&l, sizeof(l),
	    ext, true), -1);
	/* an unsigned 4-byte value over 2^31 unpacked into a long */
	memcpy(ext, "\x80\0\0\1", 4);
	assert_int_equal(x32_elem(MPIV_B_ULONG, (unsigned char *)&l, sizeof(l),
	    ext, false), 0);
	assert_int_equal(l, 0x80000001L);
	if (LDBL_MANT_DIG == 64) {
		assert_int_equal(x32_elem(MPIV_B_LDOUBLE, (unsigned char *)&ld,
		    sizeof(ld), ext, true), 0);
		assert_int_equal(ext[0], 0xbf);
		assert_int_equal(ext[1], 0xfb);
		memset(nat, 0, sizeof(nat));
		assert_int_equal(x32_elem(MPIV_B_LDOUBLE, nat, sizeof(ld), ext,
		    false), 0);
		memcpy(&back, nat, sizeof(back));
		assert_true(back == ld);
	}
	assert_int_equal(x32_size(MPIV_B_NONE), 0);
	assert_int_equal(x32_size(MPIV_B_SHORT_INT), 6);
}

/* Bad arguments of the new constructors and queries. */
static void
test_dt_errors(void **state)
{
	int sz = 4, sub = 2, st = 3, gs = 10, di = MPI_DISTRIBUTE_BLOCK,
	    da = 3, ps = 3, ints[4];
	MPI_Aint addrs[4];
	MPI_Datatype t, types[2];

	(void)state;
	assert_int_not_equal(MPI_Type_create_subarray(1, &sz, &sub, &st,
	    MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
	assert_int_not_equal(MPI_Type_create_subarray(1, &sz, &sub, &sub,
	    77, MPI_INT, &t), MPI_SUCCESS);
	assert_int_not_equal(MPI_Type_create_subarray(0, &sz, &sub, &sub,
	    MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
	/* block 3 x 3 processes < 10 elements */
	assert_int_not_equal(MPI_Type_create_darray(3, 0, 1, &gs, &di, &da,
	    &ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
	/* grid of 3 for size 4 */
	da = MPI_DISTRIBUTE_DFLT_DARG;
	assert_int_not_equal(MPI_Type_create_darray(4, 0, 1, &gs, &di, &da,
	    &ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
	/* NONE over 3 processes */
	di = MPI_DISTRIBUTE_NONE;
	assert_int_not_equal(MPI_Type_create_darray(3, 0, 1, &gs, &di, &da,
	    &ps, MPI_ORDER_C, MPI_INT, &t), MPI_SUCCESS);
	/* get_contents: predefined, arrays too small */
	assert_int_not_equal(MPI_Type_get_contents(MPI_INT, 4, 4, 2, ints,
	    addrs, types), MPI_SUCCESS);
	assert_int_equal(MPI_Type_vector(2, 1, 3, MPI_INT, &t), MPI_SUCCESS);
	assert_int_not_equal(MPI_Type_get_contents(t, 2, 0, 1, ints, addrs,
	    types), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_contents(t, 3, 0, 1, ints, addrs,
	    types), MPI_SUCCESS);
	assert_int_equal(ints[2], 3);
	assert_ptr_equal(types[0], MPI_INT);
	MPI_Type_free(&t);
}

static void
test_pack_api(void **state)
{
	int a[3] = { 1, 2, 3 }, b[3] = { 0 }, pos = 0, sz;
	double d = 4.5, e = 0;
	char buf[64];

	(void)state;
	MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &sz);
	assert_int_equal(sz, 12);
	assert_int_equal(MPI_Pack(a, 3, MPI_INT, buf, sizeof(buf), &pos,
	    MPI_COMM_WORLD), MPI_SUCCESS);
	MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
	assert_int_equal(pos, 20);
	assert_int_equal(MPI_Pack(a, 3, MPI_INT, buf, 24, &pos,
	    MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
	pos = 0;
	MPI_Unpack(buf, 20, &pos, b, 3, MPI_INT, MPI_COMM_WORLD);
	MPI_Unpack(buf, 20, &pos, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD);
	assert_int_equal(b[2], 3);
	assert_true(e == 4.5);
	assert_int_equal(MPI_Unpack(buf, 20, &pos, &e, 1, MPI_DOUBLE,
	    MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
}

static void
test_overflow(void **state)
{
	MPI_Datatype a, b, c;

	(void)state;
	MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &a);	/* 8 MiB */
	/* 8 TiB of data in one element: refused */
	assert_int_equal(MPI_Type_contiguous(1 << 20, a, &b), MPI_ERR_ARG);
	MPI_Type_vector(1 << 16, 1, 1 << 16, a, &c);	/* 512 GiB: too */
	assert_int_equal(last_err, MPI_ERR_ARG);
	MPI_Type_free(&a);
}

/* ---- ops ---- */

static void
test_ops_int(void **state)
{
	int in[3] = { 5, -2, 0 }, io[3];
	(void)state;
#define T(op, a0, a1, a2, r0, r1, r2) do {				\
	io[0] = a0; io[1] = a1; io[2] = a2;				\
	assert_int_equal(mpiv_op_apply(op, in, io, 3, MPI_INT), 0);	\
	assert_int_equal(io[0], r0); assert_int_equal(io[1], r1);	\
	assert_int_equal(io[2], r2);					\
} while (0)
	T(MPI_MAX, 3, 4, -1, 5, 4, 0);
	T(MPI_MIN, 3, 4, -1, 3, -2, -1);
	T(MPI_SUM, 3, 4, -1, 8, 2, -1);
	T(MPI_PROD, 3, 4, -1, 15, -8, 0);
	T(MPI_LAND, 3, 0, 1, 1, 0, 0);
	T(MPI_LOR, 0, 0, 0, 1, 1, 0);
	T(MPI_LXOR, 1, 1, 1, 0, 0, 1);
	T(MPI_BAND, 4, 3, 1, 4, 2, 0);
	T(MPI_BOR, 2, 1, 1, 7, -1, 1);
	T(MPI_BXOR, 5, -2, 3, 0, 0, 3);
	T(MPI_REPLACE, 9, 9, 9, 5, -2, 0);
	T(MPI_NO_OP, 9, 8, 7, 9, 8, 7);
#undef T
	/* signed overflow wraps instead of being undefined */
	int big = 0x7fffffff, one = 1;
	assert_int_equal(mpiv_op_apply(MPI_SUM, &one, &big, 1, MPI_INT), 0);
	assert_int_equal(big, (int)0x80000000);
	unsigned char ua = 200, ub = 100;
	mpiv_op_apply(MPI_SUM, &ua, &ub, 1, MPI_UNSIGNED_CHAR);
	assert_int_equal(ub, 44);
	int64_t x = 3, y = 1LL << 40;
	mpiv_op_apply(MPI_PROD, &x, &y, 1, MPI_INT64_T);
	assert_true(y == 3LL << 40);
}

static void
test_ops_classes(void **state)
{
	double din = 2.5, dio = 4.0;
	float fin = 1.5f, fio = -3.0f;
	long double lin = 2, lio = 3;
	double complex cin = 1 + 2 * I, cio = 3 - 1 * I;
	_Bool bin = 1, bio = 0;
	unsigned char yin = 0xf0, yio = 0x3c;

	(void)state;
	assert_int_equal(mpiv_op_apply(MPI_MAX, &din, &dio, 1, MPI_DOUBLE), 0);
	assert_true(dio == 4.0);
	assert_int_equal(mpiv_op_apply(MPI_PROD, &fin, &fio, 1, MPI_FLOAT), 0);
	assert_true(fio == -4.5f);
	assert_int_equal(mpiv_op_apply(MPI_SUM, &lin, &lio, 1,
	    MPI_LONG_DOUBLE), 0);
	assert_true(lio == 5);
	/* floats: no logical or bitwise ops */
	assert_int_equal(mpiv_op_apply(MPI_BAND, &din, &dio, 1, MPI_DOUBLE),
	    MPI_ERR_OP);
	assert_int_equal(mpiv_op_apply(MPI_LAND, &din, &dio, 1, MPI_DOUBLE),
	    MPI_ERR_OP);
	/* complex: sum and prod only */
	assert_int_equal(mpiv_op_apply(MPI_PROD, &cin, &cio, 1,
	    MPI_C_DOUBLE_COMPLEX), 0);
	assert_true(creal(cio) == 5 && cimag(cio) == 5);
	assert_int_equal(mpiv_op_apply(MPI_MAX, &cin, &cio, 1,
	    MPI_C_DOUBLE_COMPLEX), MPI_ERR_OP);
	/* bool: logical only */
	assert_int_equal(mpiv_op_apply(MPI_LOR, &bin, &bio, 1, MPI_C_BOOL), 0);
	assert_true(bio);
	assert_int_equal(mpiv_op_apply(MPI_LXOR, &bin, &bio, 1, MPI_C_BOOL), 0);
	assert_false(bio);
	assert_int_equal(mpiv_op_apply(MPI_SUM, &bin, &bio, 1, MPI_C_BOOL),
	    MPI_ERR_OP);
	/* byte: bitwise only */
	assert_int_equal(mpiv_op_apply(MPI_BXOR, &yin, &yio, 1, MPI_BYTE), 0);
	assert_int_equal(yio, 0xcc);
	assert_int_equal(mpiv_op_apply(MPI_SUM, &yin, &yio, 1, MPI_BYTE),
	    MPI_ERR_OP);
	assert_int_equal(mpiv_op_apply(MPI_MAX, &yin, &yio, 1, MPI_PACKED),
	    MPI_ERR_OP);
	/* MAXLOC on non-pairs, MAX on pairs */
	assert_int_equal(mpiv_op_apply(MPI_MAXLOC, &din, &dio, 1, MPI_DOUBLE),
	    MPI_ERR_OP);
	assert_int_equal(mpiv_op_apply(MPI_MAX, &din, &dio, 0, MPI_2INT),
	    MPI_ERR_OP);
	/* validation happens even for count 0 */
	assert_int_equal(mpiv_op_apply(MPI_BAND, NULL, NULL, 0, MPI_DOUBLE),
	    MPI_ERR_OP);
	/* every integer type accepts every integer op */
	MPI_Datatype ints[] = { MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,
		MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG,
		MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
		MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
		MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET,
		MPI_COUNT };
	MPI_Op iops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
		MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
	for (size_t t = 0; t < sizeof(ints) / sizeof(ints[0]); t++)
		for (size_t o = 0; o < sizeof(iops) / sizeof(iops[0]); o++) {
			unsigned char a[16] = { 3 }, b[16] = { 6 };
			assert_int_equal(mpiv_op_apply(iops[o], a, b, 1,
			    ints[t]), MPI_SUCCESS);
		}
	for (size_t t = 0; t < sizeof(ints) / sizeof(ints[0]); t++) {
		unsigned char a[16] = { 3 }, b[16] = { 6 };
		mpiv_op_apply(MPI_SUM, a, b, 1, ints[t]);
		assert_int_equal(b[0], 9);	/* little endian */
	}
}

static void
test_maxloc(void **state)
{
	struct { double v; int i; } in[4] = { { 1, 5 }, { 2, 1 }, { 3, 3 },
		{ 7, 0 } }, io[4] = { { 1, 2 }, { 2, 4 }, { 4, 9 }, { 6, 8 } };
	struct { short v; int i; } sin_[2] = { { 3, 1 }, { 3, 0 } },
	    sio[2] = { { 3, 0 }, { 3, 2 } };

	(void)state;
	assert_int_equal(mpiv_op_apply(MPI_MAXLOC, in, io, 4,
	    MPI_DOUBLE_INT), 0);
	assert_true(io[0].v == 1 && io[0].i == 2);	/* tie: lower index */
	assert_true(io[1].v == 2 && io[1].i == 1);	/* tie: lower index */
	assert_true(io[2].v == 4 && io[2].i == 9);
	assert_true(io[3].v == 7 && io[3].i == 0);
	assert_int_equal(mpiv_op_apply(MPI_MINLOC, sin_, sio, 2,
	    MPI_SHORT_INT), 0);
	assert_int_equal(sio[0].i, 0);
	assert_int_equal(sio[1].i, 0);
	int p[2] = { 5, 3 }, q[2] = { 5, 1 };
	mpiv_op_apply(MPI_MINLOC, p, q, 1, MPI_2INT);
	assert_int_equal(q[1], 1);

	/* a derived type of pairs is reduced on its packed form */
	MPI_Datatype v;
	struct { float v; int i; } fa[3] = { { 1, 1 }, { 9, 9 }, { 5, 2 } },
	    fb[3] = { { 2, 0 }, { 0, 0 }, { 5, 0 } };
	MPI_Type_vector(2, 1, 2, MPI_FLOAT_INT, &v);
	MPI_Type_commit(&v);
	assert_int_equal(mpiv_op_apply(MPI_MAXLOC, fa, fb, 1, v), 0);
	assert_true(fb[0].v == 2 && fb[0].i == 0);
	assert_true(fb[1].v == 0);			/* gap untouched */
	assert_true(fb[2].v == 5 && fb[2].i == 0);
	MPI_Type_free(&v);
}

static void
test_ops_derived(void **state)
{
	MPI_Datatype v, s;
	int a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 10, 20, 30, 40, 50, 60 };

	(void)state;
	MPI_Type_vector(3, 1, 2, MPI_INT, &v);
	MPI_Type_commit(&v);
	assert_int_equal(mpiv_op_apply(MPI_SUM, a, b, 1, v), 0);
	assert_int_equal(b[0], 11);
	assert_int_equal(b[1], 20);
	assert_int_equal(b[2], 33);
	assert_int_equal(b[4], 55);
	MPI_Type_free(&v);
	MPI_Type_contiguous(2, MPI_INT, &v);
	MPI_Type_commit(&v);
	assert_int_equal(mpiv_op_apply(MPI_MAX, a, b, 3, v), 0);
	assert_int_equal(b[5], 60);
	MPI_Type_free(&v);
	/* mixed struct: no predefined op */
	int bl[2] = { 1, 1 };
	MPI_Aint d[2] = { 0, 8 };
	MPI_Datatype t[2] = { MPI_INT, MPI_DOUBLE };
	MPI_Type_create_struct(2, bl, d, t, &s);
	MPI_Type_commit(&s);
	assert_int_equal(mpiv_op_apply(MPI_SUM, a, b, 1, s), MPI_ERR_OP);
	MPI_Type_free(&s);
}

static int user_calls;

static void
user_concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *a = in, *b = inout;

	(void)dt;
	user_calls++;
	for (int i = 0; i < *len; i++)
		b[i] = a[i] * 10 + b[i];	/* non-commutative */
}

static void
test_user_op(void **state)
{
	MPI_Op op;
	int c, a[2] = { 1, 2 }, b[2] = { 3, 4 };

	(void)state;
	assert_int_equal(MPI_Op_create(user_concat, 0, &op), 0);
	MPI_Op_commutative(op, &c);
	assert_int_equal(c, 0);
	assert_int_equal(MPI_Reduce_local(a, b, 2, MPI_INT, op), 0);
	assert_int_equal(b[0], 13);
	assert_int_equal(b[1], 24);
	assert_int_equal(user_calls, 1);
	MPI_Op_free(&op);
	assert_null(op);
	MPI_Op pre = MPI_SUM;
	assert_int_equal(MPI_Op_free(&pre), MPI_ERR_OP);
	MPI_Op_commutative(MPI_SUM, &c);
	assert_int_equal(c, 1);
}

/* ---- groups ---- */

static MPI_Group
world_group(int n)
{
	struct mpiv_group *g = mpiv_group_new(n);

	for (int i = 0; i < n; i++)
		g->world[i] = i;
	mpiv_group_set_rank(g);
	return g;
}

static void
test_groups(void **state)
{
	MPI_Group w = world_group(8), a, b, u, x, d, e;
	int ra[3] = { 5, 0, 3 }, rb[3] = { 3, 6, 1 }, out[3], r, sz;

	(void)state;
	MPI_Group_incl(w, 3, ra, &a);
	MPI_Group_incl(w, 3, rb, &b);
	MPI_Group_rank(a, &r);
	assert_int_equal(r, 1);		/* world 0 is a's rank 1 */
	MPI_Group_rank(b, &r);
	assert_int_equal(r, MPI_UNDEFINED);
	MPI_Group_union(a, b, &u);
	MPI_Group_size(u, &sz);
	assert_int_equal(sz, 5);
	assert_int_equal(u->world[0], 5);
	assert_int_equal(u->world[3], 6);
	assert_int_equal(u->world[4], 1);
	MPI_Group_intersection(a, b, &x);
	MPI_Group_size(x, &sz);
	assert_int_equal(sz, 1);
	assert_int_equal(x->world[0], 3);
	MPI_Group_difference(a, b, &d);
	MPI_Group_size(d, &sz);
	assert_int_equal(sz, 2);
	assert_int_equal(d->world[1], 0);
	MPI_Group_difference(a, a, &e);
	assert_ptr_equal(e, MPI_GROUP_EMPTY);
	int q[3] = { 0, 1, 2 };
	MPI_Group_translate_ranks(a, 3, q, b, out);
	assert_int_equal(out[0], MPI_UNDEFINED);
	assert_int_equal(out[2], 0);
	int pn = MPI_PROC_NULL;
	MPI_Group_translate_ranks(a, 1, &pn, b, out);
	assert_int_equal(out[0], MPI_PROC_NULL);
	MPI_Group_compare(a, a, &r);
	assert_int_equal(r, MPI_IDENT);
	MPI_Group_compare(a, b, &r);
	assert_int_equal(r, MPI_UNEQUAL);
	int ra2[3] = { 0, 3, 5 };
	MPI_Group a2;
	MPI_Group_incl(w, 3, ra2, &a2);
	MPI_Group_compare(a, a2, &r);
	assert_int_equal(r, MPI_SIMILAR);
	/* excl, ranges */
	MPI_Group ex, rg, rx;
	MPI_Group_excl(w, 3, ra, &ex);
	MPI_Group_size(ex, &sz);
	assert_int_equal(sz, 5);
	assert_int_equal(ex->world[0], 1);
	int ranges[2][3] = { { 0, 6, 3 }, { 7, 7, 1 } };	/* 0 3 6 7 */
	MPI_Group_range_incl(w, 2, ranges, &rg);
	MPI_Group_size(rg, &sz);
	assert_int_equal(sz, 4);
	assert_int_equal(rg->world[3], 7);
	MPI_Group_free(&rg);
	MPI_Group_range_excl(w, 1, ranges, &rx);
	MPI_Group_size(rx, &sz);
	assert_int_equal(sz, 5);
	/* errors */
	int dup[2] = { 1, 1 };
	MPI_Group bad;
	assert_int_equal(MPI_Group_incl(w, 2, dup, &bad), MPI_ERR_RANK);
	int oob = 8;
	assert_int_equal(MPI_Group_incl(w, 1, &oob, &bad), MPI_ERR_RANK);
	MPI_Group_incl(w, 0, NULL, &bad);
	assert_ptr_equal(bad, MPI_GROUP_EMPTY);
	assert_int_equal(MPI_Group_free(&bad), MPI_SUCCESS);
	MPI_Group gs[] = { a, b, u, x, d, a2, ex, rx, w };
	for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++)
		assert_int_equal(MPI_Group_free(&gs[i]), MPI_SUCCESS);
}

static void
test_group_ranges_overlap(void **state)
{
	MPI_Group w = world_group(8), rg;
	int ranges[2][3] = { { 0, 6, 3 }, { 7, 5, -1 } };	/* 0 3 6 | 7 6 5 */

	(void)state;
	/* 6 appears twice: an error */
	assert_int_equal(MPI_Group_range_incl(w, 2, ranges, &rg),
	    MPI_ERR_RANK);
	int ok[1][3] = { { 7, 1, -3 } };	/* 7 4 1 */
	assert_int_equal(MPI_Group_range_incl(w, 1, ok, &rg), MPI_SUCCESS);
	assert_int_equal(rg->size, 3);
	assert_int_equal(rg->world[1], 4);
	MPI_Group_free(&rg);
	MPI_Group_free(&w);
}

/* ---- Dims_create ---- */

static void
dims_case(int n, int nd, const int *preset, const int *want)
{
	int d[8];

	memcpy(d, preset, (size_t)nd * sizeof(int));
	assert_int_equal(MPI_Dims_create(n, nd, d), MPI_SUCCESS);
	assert_memory_equal(d, want, (size_t)nd * sizeof(int));
}

/* Fortran types: LOGICAL's logical ops (gfortran .true. = 1, any non-zero
   is true), no SUM on LOGICAL or CHARACTER, COMPLEX sums, MAXLOC on
   2REAL/2DOUBLE_PRECISION (index of the value's type), sizes and
   extents, and a Fortran user op getting the Fortran datatype handle. */
static int fortran_op_calls;

static void
fortran_op(void *in, void *inout, MPI_Fint *len, MPI_Fint *dt)
{
	assert_int_equal(*dt, 1);
	for (int i = 0; i < *len; i++)
		((int32_t *)inout)[i] += 10 * ((int32_t *)in)[i];
	fortran_op_calls++;
}

static void
test_fortran_types(void **state)
{
	int32_t la[3] = { 1, 0, 5 }, lb[3] = { 1, 1, 0 };
	float _Complex ca[2] = { 1 + 2 * I, 3 }, cb[2] = { 1, -1 * I };
	float ra[4] = { 2.5f, 7.0f, 1.0f, 3.0f }, rb[4] = { 2.5f, 1.0f, 4.0f, 2.0f };
	double da[2] = { -1.0, 9.0 }, db[2] = { -2.0, 4.0 };
	char ch[2] = { 'a', 'b' }, chb[2] = { 'c', 'd' };
	int32_t ia[2] = { 1, 2 }, ib[2] = { 3, 4 };
	struct mpiv_op fop = { .user_fn = NULL, .builtin = -1 };
	MPI_Aint lb0, ext;
	int sz;

	(void)state;
	assert_int_equal(mpiv_op_apply(MPI_LAND, la, lb, 3, MPI_LOGICAL),
	    MPI_SUCCESS);
	assert_int_equal(lb[0], 1); assert_int_equal(lb[1], 0);
	assert_int_equal(lb[2], 0);
	lb[0] = 0; lb[1] = 0; lb[2] = 1;
	assert_int_equal(mpiv_op_apply(MPI_LXOR, la, lb, 3, MPI_LOGICAL),
	    MPI_SUCCESS);
	assert_int_equal(lb[0], 1); assert_int_equal(lb[1], 0);
	assert_int_equal(lb[2], 0);
	assert_int_equal(mpiv_op_apply(MPI_SUM, la, lb, 3, MPI_LOGICAL),
	    MPI_ERR_OP);
	assert_int_equal(mpiv_op_apply(MPI_MAX, ch, chb, 2, MPI_CHARACTER),
	    MPI_ERR_OP);
	assert_int_equal(mpiv_op_apply(MPI_SUM, ca, cb, 2, MPI_COMPLEX),
	    MPI_SUCCESS);
	assert_true(cb[0] == 2 + 2 * I && cb[1] == 3 - 1 * I);
	assert_int_equal(mpiv_op_apply(MPI_MAX, ca, cb, 2, MPI_COMPLEX8),
	    MPI_ERR_OP);
	/* (2.5, 7) vs (2.5, 1): tie, lower index 1 wins; (1, 3) vs (4, 2) */
	assert_int_equal(mpiv_op_apply(MPI_MAXLOC, ra, rb, 2, MPI_2REAL),
	    MPI_SUCCESS);
	assert_true(rb[0] == 2.5f && rb[1] == 1.0f && rb[2] == 4.0f &&
	    rb[3] == 2.0f);
	assert_int_equal(mpiv_op_apply(MPI_MINLOC, da, db, 1,
	    MPI_2DOUBLE_PRECISION), MPI_SUCCESS);
	assert_true(db[0] == -2.0 && db[1] == 4.0);
	MPI_Type_size(MPI_2DOUBLE_PRECISION, &sz);
	assert_int_equal(sz, 16);
	MPI_Type_get_extent(MPI_2REAL, &lb0, &ext);
	assert_int_equal(ext, 8);
	MPI_Type_size(MPI_DOUBLE_COMPLEX, &sz);
	assert_int_equal(sz, 16);
	MPI_Type_size(MPI_LOGICAL, &sz);
	assert_int_equal(sz, 4);
	MPI_Type_size(MPI_INTEGER8, &sz);
	assert_int_equal(sz, 8);
	assert_int_equal(mpiv_op_apply(MPI_SUM, ia, ib, 2, MPI_INTEGER),
	    MPI_SUCCESS);
	assert_int_equal(ib[0], 4);
	fop.fortran_fn = fortran_op;
	assert_int_equal(mpiv_op_apply(&fop, ia, ib, 2, MPI_INTEGER),
	    MPI_SUCCESS);
	assert_int_equal(fortran_op_calls, 1);
	assert_int_equal(ib[0], 14);
	assert_int_equal(ib[1], 26);
}

static void
test_dims(void **state)
{
	(void)state;
	dims_case(6, 2, (int[]){ 0, 0 }, (int[]){ 3, 2 });
	dims_case(7, 2, (int[]){ 0, 0 }, (int[]){ 7, 1 });
	dims_case(6, 3, (int[]){ 0, 3, 0 }, (int[]){ 2, 3, 1 });
	dims_case(16, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 2, 2 });
	dims_case(72, 2, (int[]){ 0, 0 }, (int[]){ 9, 8 });
	dims_case(12, 2, (int[]){ 0, 0 }, (int[]){ 4, 3 });
	dims_case(1, 3, (int[]){ 0, 0, 0 }, (int[]){ 1, 1, 1 });
	dims_case(24, 1, (int[]){ 0 }, (int[]){ 24 });
	dims_case(64, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 4, 4 });
	dims_case(8, 2, (int[]){ 2, 4 }, (int[]){ 2, 4 });
	dims_case(30, 3, (int[]){ 0, 0, 0 }, (int[]){ 5, 3, 2 });
	dims_case(1000000, 2, (int[]){ 0, 0 }, (int[]){ 1000, 1000 });
	int d[2] = { 0, 4 };
	assert_int_equal(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
	int e[2] = { 3, 3 };
	assert_int_equal(MPI_Dims_create(8, 2, e), MPI_ERR_DIMS);
	int f[1] = { -1 };
	assert_int_equal(MPI_Dims_create(8, 1, f), MPI_ERR_DIMS);
	assert_int_equal(MPI_Dims_create(8, 0, NULL), MPI_ERR_DIMS);
	assert_int_equal(MPI_Dims_create(1, 0, NULL), MPI_SUCCESS);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_predefined),
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_indexed_struct),
		cmocka_unit_test(test_pack_api),
		cmocka_unit_test(test_elements),
		cmocka_unit_test(test_empty_bounds),
		cmocka_unit_test(test_external32),
		cmocka_unit_test(test_dt_errors),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_ops_int),
		cmocka_unit_test(test_ops_classes),
		cmocka_unit_test(test_maxloc),
		cmocka_unit_test(test_ops_derived),
		cmocka_unit_test(test_user_op),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_group_ranges_overlap),
		cmocka_unit_test(test_dims),
		cmocka_unit_test(test_fortran_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
