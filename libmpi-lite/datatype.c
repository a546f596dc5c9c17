/*
 * datatype.c: MPI datatypes. A datatype's typemap is kept as a list of
 * merged (displacement, length) byte blocks in typemap order, so packing
 * and unpacking are plain memcpy loops. Derived types copy the blocks of
 * the types they are built from, so an old type can be freed at once.
 * Sizes and displacements are checked for overflow while a type is built.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "impl.h"

/* ---------------- predefined types ---------------- */

/* Layouts of the pair types used by MAXLOC/MINLOC: the C compiler decides
   their padding, and MPI's extent includes it. */
struct dt_float_int { float v; int i; };
struct dt_double_int { double v; int i; };
struct dt_long_int { long v; int i; };
struct dt_2int { int v; int i; };
struct dt_short_int { short v; int i; };
struct dt_long_double_int { long double v; int i; };
struct dt_2real { float v; float i; };
struct dt_2double { double v; double i; };

#define DT_BASIC(id, ctype, kind, nm)					\
	static struct mpiv_block dt_blk_##id[1] = { { 0, sizeof(ctype) } }; \
	struct mpiv_datatype mpiv_dt_##id = {				\
		.size = sizeof(ctype), .lb = 0, .extent = sizeof(ctype),	\
		.true_lb = 0, .true_extent = sizeof(ctype),		\
		.contiguous = true, .committed = true, .predefined = true, \
		.basic = kind, .nbasic = 1, .nblocks = 1,		\
		.blocks = dt_blk_##id, .refcount = 1,			\
		.combiner = MPI_COMBINER_NAMED, .name = nm,		\
		.align = _Alignof(ctype) };

/* A pair is one block when the index follows the value without padding,
   else two blocks. The index is an int, or for Fortran's MPI_2REAL and
   MPI_2DOUBLE_PRECISION of the value's type. */
#define DT_VSZ(st) sizeof(((struct st *)0)->v)
#define DT_ISZ(st) sizeof(((struct st *)0)->i)
#define DT_PAIR_SPLIT(st) (offsetof(struct st, i) != DT_VSZ(st))
#define DT_PAIR(id, st, kind, nm)					\
	static struct mpiv_block dt_blk_##id[2] = {			\
		{ 0, DT_PAIR_SPLIT(st) ? DT_VSZ(st)			\
		    : DT_VSZ(st) + DT_ISZ(st) },			\
		{ offsetof(struct st, i), DT_ISZ(st) } };		\
	struct mpiv_datatype mpiv_dt_##id = {				\
		.size = DT_VSZ(st) + DT_ISZ(st),			\
		.lb = 0, .extent = sizeof(struct st),			\
		.true_lb = 0, .true_extent = offsetof(struct st, i) + DT_ISZ(st), \
		.contiguous = sizeof(struct st) == DT_VSZ(st) + DT_ISZ(st), \
		.committed = true, .predefined = true,			\
		.basic = kind, .nbasic = 1,				\
		.nblocks = DT_PAIR_SPLIT(st) ? 2 : 1,			\
		.blocks = dt_blk_##id, .refcount = 1,			\
		.combiner = MPI_COMBINER_NAMED, .name = nm,		\
		.align = _Alignof(struct st) };

DT_BASIC(char, char, MPIV_B_CHAR, "MPI_CHAR")
DT_BASIC(signed_char, signed char, MPIV_B_SCHAR, "MPI_SIGNED_CHAR")
DT_BASIC(unsigned_char, unsigned char, MPIV_B_UCHAR, "MPI_UNSIGNED_CHAR")
DT_BASIC(byte, unsigned char, MPIV_B_BYTE, "MPI_BYTE")
DT_BASIC(short, short, MPIV_B_SHORT, "MPI_SHORT")
DT_BASIC(unsigned_short, unsigned short, MPIV_B_USHORT, "MPI_UNSIGNED_SHORT")
DT_BASIC(int, int, MPIV_B_INT, "MPI_INT")
DT_BASIC(unsigned, unsigned, MPIV_B_UINT, "MPI_UNSIGNED")
DT_BASIC(long, long, MPIV_B_LONG, "MPI_LONG")
DT_BASIC(unsigned_long, unsigned long, MPIV_B_ULONG, "MPI_UNSIGNED_LONG")
DT_BASIC(long_long, long long, MPIV_B_LLONG, "MPI_LONG_LONG_INT")
DT_BASIC(unsigned_long_long, unsigned long long, MPIV_B_ULLONG,
    "MPI_UNSIGNED_LONG_LONG")
DT_BASIC(float, float, MPIV_B_FLOAT, "MPI_FLOAT")
DT_BASIC(double, double, MPIV_B_DOUBLE, "MPI_DOUBLE")
DT_BASIC(long_double, long double, MPIV_B_LDOUBLE, "MPI_LONG_DOUBLE")
DT_BASIC(wchar, wchar_t, MPIV_B_WCHAR, "MPI_WCHAR")
DT_BASIC(c_bool, _Bool, MPIV_B_BOOL, "MPI_C_BOOL")
DT_BASIC(int8_t, int8_t, MPIV_B_INT8, "MPI_INT8_T")
DT_BASIC(int16_t, int16_t, MPIV_B_INT16, "MPI_INT16_T")
DT_BASIC(int32_t, int32_t, MPIV_B_INT32, "MPI_INT32_T")
DT_BASIC(int64_t, int64_t, MPIV_B_INT64, "MPI_INT64_T")
DT_BASIC(uint8_t, uint8_t, MPIV_B_UINT8, "MPI_UINT8_T")
DT_BASIC(uint16_t, uint16_t, MPIV_B_UINT16, "MPI_UINT16_T")
DT_BASIC(uint32_t, uint32_t, MPIV_B_UINT32, "MPI_UINT32_T")
DT_BASIC(uint64_t, uint64_t, MPIV_B_UINT64, "MPI_UINT64_T")
DT_BASIC(c_float_complex, float _Complex, MPIV_B_CFLOAT, "MPI_C_FLOAT_COMPLEX")
DT_BASIC(c_double_complex, double _Complex, MPIV_B_CDOUBLE,
    "MPI_C_DOUBLE_COMPLEX")
DT_BASIC(c_long_double_complex, long double _Complex, MPIV_B_CLDOUBLE,
    "MPI_C_LONG_DOUBLE_COMPLEX")
DT_BASIC(aint, MPI_Aint, MPIV_B_AINT, "MPI_AINT")
DT_BASIC(offset, MPI_Offset, MPIV_B_OFFSET, "MPI_OFFSET")
DT_BASIC(count, MPI_Count, MPIV_B_COUNT, "MPI_COUNT")
DT_BASIC(packed, unsigned char, MPIV_B_PACKED, "MPI_PACKED")
DT_PAIR(float_int, dt_float_int, MPIV_B_FLOAT_INT, "MPI_FLOAT_INT")
DT_PAIR(double_int, dt_double_int, MPIV_B_DOUBLE_INT, "MPI_DOUBLE_INT")
DT_PAIR(long_int, dt_long_int, MPIV_B_LONG_INT, "MPI_LONG_INT")
DT_PAIR(2int, dt_2int, MPIV_B_2INT, "MPI_2INT")
DT_PAIR(short_int, dt_short_int, MPIV_B_SHORT_INT, "MPI_SHORT_INT")
DT_PAIR(long_double_int, dt_long_double_int, MPIV_B_LDOUBLE_INT,
    "MPI_LONG_DOUBLE_INT")

/* Fortran types (gfortran: INTEGER and LOGICAL are 4 bytes, REAL 4,
   DOUBLE PRECISION 8, COMPLEX a pair of REALs). */
DT_BASIC(integer, int32_t, MPIV_B_INT32, "MPI_INTEGER")
DT_BASIC(real, float, MPIV_B_FLOAT, "MPI_REAL")
DT_BASIC(double_precision, double, MPIV_B_DOUBLE, "MPI_DOUBLE_PRECISION")
DT_BASIC(complex, float _Complex, MPIV_B_CFLOAT, "MPI_COMPLEX")
DT_BASIC(double_complex, double _Complex, MPIV_B_CDOUBLE,
    "MPI_DOUBLE_COMPLEX")
DT_BASIC(logical, int32_t, MPIV_B_LOGICAL, "MPI_LOGICAL")
DT_BASIC(character, char, MPIV_B_CHARACTER, "MPI_CHARACTER")
DT_BASIC(integer1, int8_t, MPIV_B_INT8, "MPI_INTEGER1")
DT_BASIC(integer2, int16_t, MPIV_B_INT16, "MPI_INTEGER2")
DT_BASIC(integer4, int32_t, MPIV_B_INT32, "MPI_INTEGER4")
DT_BASIC(integer8, int64_t, MPIV_B_INT64, "MPI_INTEGER8")
DT_BASIC(real4, float, MPIV_B_FLOAT, "MPI_REAL4")
DT_BASIC(real8, double, MPIV_B_DOUBLE, "MPI_REAL8")
DT_BASIC(complex8, float _Complex, MPIV_B_CFLOAT, "MPI_COMPLEX8")
DT_BASIC(complex16, double _Complex, MPIV_B_CDOUBLE, "MPI_COMPLEX16")
DT_PAIR(2integer, dt_2int, MPIV_B_2INT, "MPI_2INTEGER")
DT_PAIR(2real, dt_2real, MPIV_B_2REAL, "MPI_2REAL")
DT_PAIR(2double_precision, dt_2double, MPIV_B_2DOUBLE,
    "MPI_2DOUBLE_PRECISION")

/* Largest data size of one element: keeps count * size inside 63 bits for
   any int count. */
#define DT_MAX_SIZE ((size_t)UINT32_MAX)
/* Largest absolute displacement or extent accepted. */
#define DT_MAX_DISP ((MPI_Aint)1 << 50)

/* ---------------- building derived types ---------------- */

/* Accumulates a typemap while a derived type is built. */
struct dt_build {
	struct mpiv_block *b;
	size_t n, cap;
	size_t size;
	MPI_Aint lb, ub, tlb, tub;
	bool any;		/* lb, ub set: an element placed */
	bool tany;		/* tlb, tub set: data placed (the true
				   extent spans data only) */
	struct mpiv_erun *er;	/* basic element runs */
	size_t ner, ercap;
	bool er_lost;		/* too many runs: not kept */
	enum mpiv_basic basic;
	bool mixed;		/* more than one basic kind */
	size_t nbasic;
	size_t align;
	int err;
};

/* Appends one byte block, merging it with the previous block when it
   follows it in memory. */
static void
dt_build_block(struct dt_build *bd, MPI_Aint disp, size_t len)
{
	if (bd->err || len == 0)
		return;
	if (bd->n > 0) {
		struct mpiv_block *last = &bd->b[bd->n - 1];
		if (last->disp + (MPI_Aint)last->len == disp) {
			last->len += len;
			return;
		}
	}
	if (bd->n == bd->cap) {
		size_t ncap = bd->cap ? bd->cap * 2 : 8;
		struct mpiv_block *nb;
		if (ncap > SIZE_MAX / sizeof(*nb) ||
		    (nb = realloc(bd->b, ncap * sizeof(*nb))) == NULL) {
			bd->err = MPI_ERR_NO_MEM;
			return;
		}
		bd->b = nb;
		bd->cap = ncap;
	}
	bd->b[bd->n].disp = disp;
	bd->b[bd->n].len = len;
	bd->n++;
}

static void
dt_build_bounds(struct dt_build *bd, MPI_Aint lo, MPI_Aint hi)
{
	if (!bd->any) {
		bd->lb = lo; bd->ub = hi;
		bd->any = true;
		return;
	}
	if (lo < bd->lb) bd->lb = lo;
	if (hi > bd->ub) bd->ub = hi;
}

static void
dt_build_tbounds(struct dt_build *bd, MPI_Aint tlo, MPI_Aint thi)
{
	if (!bd->tany) {
		bd->tlb = tlo; bd->tub = thi;
		bd->tany = true;
		return;
	}
	if (tlo < bd->tlb) bd->tlb = tlo;
	if (thi > bd->tub) bd->tub = thi;
}

/* Most basic element runs a type keeps; past it MPI_Get_elements on a
   partial element assumes elements of equal size. */
#define DT_MAX_ERUNS 65536

/* Appends n basic elements of kind, esize bytes each, to the element
   runs. */
static void
dt_build_erun(struct dt_build *bd, enum mpiv_basic kind, size_t esize,
    size_t n)
{
	if (bd->err || bd->er_lost || n == 0)
		return;
	if (bd->ner > 0 && bd->er[bd->ner - 1].size == esize &&
	    bd->er[bd->ner - 1].kind == kind) {
		bd->er[bd->ner - 1].count += n;
		return;
	}
	if (bd->ner == DT_MAX_ERUNS) {
		free(bd->er);
		bd->er = NULL;
		bd->ner = bd->ercap = 0;
		bd->er_lost = true;
		return;
	}
	if (bd->ner == bd->ercap) {
		size_t ncap = bd->ercap ? bd->ercap * 2 : 4;
		struct mpiv_erun *ne = realloc(bd->er, ncap * sizeof(*ne));
		if (ne == NULL) {
			bd->err = MPI_ERR_NO_MEM;
			return;
		}
		bd->er = ne;
		bd->ercap = ncap;
	}
	bd->er[bd->ner].size = esize;
	bd->er[bd->ner].count = n;
	bd->er[bd->ner].kind = kind;
	bd->ner++;
}

/* The element runs of count elements of old. */
static void
dt_build_eruns(struct dt_build *bd, MPI_Datatype old, size_t count)
{
	if (old->eruns_lost) {
		bd->er_lost = true;
		return;
	}
	if (old->eruns == NULL) {	/* predefined: one element */
		dt_build_erun(bd, old->basic, old->size, count);
		return;
	}
	if (old->neruns == 1) {
		dt_build_erun(bd, old->eruns[0].kind, old->eruns[0].size,
		    old->eruns[0].count * count);
		return;
	}
	for (size_t k = 0; k < count && !bd->er_lost && !bd->err; k++)
		for (size_t j = 0; j < old->neruns; j++)
			dt_build_erun(bd, old->eruns[j].kind,
			    old->eruns[j].size, old->eruns[j].count);
}

/* Places `count` consecutive elements of old (stride = old's extent)
   starting at byte displacement disp. */
static void
dt_build_run(struct dt_build *bd, MPI_Datatype old, MPI_Aint disp, int count)
{
	MPI_Aint ext = old->extent, span, first, last;
	size_t total;

	if (bd->err || count <= 0)
		return;
	if (__builtin_mul_overflow((MPI_Aint)(count - 1), ext, &span) ||
	    __builtin_add_overflow(disp, span, &last) ||
	    last > DT_MAX_DISP || last < -DT_MAX_DISP) {
		mpiv_err_detail("a displacement beyond 2^50 bytes");
		bd->err = MPI_ERR_ARG;
		return;
	}
	if (__builtin_mul_overflow((size_t)count, old->size, &total) ||
	    __builtin_add_overflow(bd->size, total, &bd->size) ||
	    bd->size > DT_MAX_SIZE) {
		mpiv_err_detail("a datatype of more than 4 GiB of data "
		    "(2^32 - 1 bytes, mpiv's largest; a message is smaller "
		    "still)");
		bd->err = MPI_ERR_ARG;
		return;
	}
	first = disp;
	/* Bounds: the first and last elements are the extremes whatever the
	   sign of the extent. */
	{
		MPI_Aint lo = first < last ? first : last;
		MPI_Aint hi = first < last ? last : first;
		dt_build_bounds(bd, lo + old->lb, hi + old->lb + old->extent);
		if (old->size > 0)
			dt_build_tbounds(bd, lo + old->true_lb,
			    hi + old->true_lb + old->true_extent);
	}
	dt_build_eruns(bd, old, (size_t)count);
	if (old->basic == MPIV_B_NONE || (bd->nbasic > 0 && bd->basic != old->basic))
		bd->mixed = true;
	bd->basic = old->basic;
	bd->nbasic += (size_t)count * old->nbasic;
	if (old->align > bd->align)
		bd->align = old->align;

	if (old->contiguous) {
		dt_build_block(bd, disp + old->true_lb, total);
		return;
	}
	for (int k = 0; k < count && !bd->err; k++) {
		MPI_Aint base = disp + (MPI_Aint)k * ext;
		for (size_t j = 0; j < old->nblocks; j++)
			dt_build_block(bd, base + old->blocks[j].disp,
			    old->blocks[j].len);
	}
}

/* The element runs of a derived type without data: not NULL, which
   means "predefined". */
static const struct mpiv_erun dt_no_eruns[1];

/* Turns a finished build into a new (uncommitted) datatype. */
static int
dt_build_finish(struct dt_build *bd, int combiner, MPI_Datatype *out)
{
	struct mpiv_datatype *dt;

	if (bd->err) {
		free(bd->b);
		free(bd->er);
		return bd->err;
	}
	if ((dt = calloc(1, sizeof(*dt))) == NULL) {
		free(bd->b);
		free(bd->er);
		return MPI_ERR_NO_MEM;
	}
	if (bd->n == 0) {
		free(bd->b);
		bd->b = NULL;
	} else if (bd->n < bd->cap) {
		struct mpiv_block *nb = realloc(bd->b, bd->n * sizeof(*nb));
		if (nb != NULL)
			bd->b = nb;
	}
	dt->size = bd->size;
	/* A type without data has lb 0 and extent 0 wherever its empty
	   parts were placed (as Open MPI has it). */
	if (bd->any && bd->size > 0) {
		dt->lb = bd->lb;
		dt->extent = bd->ub - bd->lb;
	}
	if (bd->tany) {
		dt->true_lb = bd->tlb;
		dt->true_extent = bd->tub - bd->tlb;
	}
	dt->eruns_lost = bd->er_lost;
	if (bd->ner == 0) {
		free(bd->er);
		bd->er = NULL;
	} else if (bd->ner < bd->ercap) {
		struct mpiv_erun *ne = realloc(bd->er, bd->ner * sizeof(*ne));
		if (ne != NULL)
			bd->er = ne;
	}
	dt->eruns = bd->er;
	dt->neruns = bd->ner;
	/* an empty derived type still has element runs (none) */
	if (dt->eruns == NULL && !dt->eruns_lost) {
		dt->eruns = (struct mpiv_erun *)dt_no_eruns;
		dt->neruns = 0;
	}
	dt->align = bd->align ? bd->align : 1;
	/* MPI's epsilon: a struct's extent is rounded up to the alignment of
	   its strictest member, so arrays of it match C arrays of structs. */
	if (combiner == MPI_COMBINER_STRUCT && dt->align > 1 && dt->extent > 0 &&
	    dt->extent % (MPI_Aint)dt->align != 0)
		dt->extent += (MPI_Aint)dt->align -
		    dt->extent % (MPI_Aint)dt->align;
	dt->blocks = bd->b;
	dt->nblocks = bd->n;
	dt->contiguous = bd->n == 1 && bd->b[0].len == dt->size &&
	    dt->extent == (MPI_Aint)dt->size && bd->b[0].disp == dt->true_lb;
	dt->basic = bd->mixed ? MPIV_B_NONE : bd->basic;
	dt->nbasic = bd->nbasic;
	dt->refcount = 1;
	dt->combiner = combiner;
	*out = dt;
	return MPI_SUCCESS;
}

/*
 * The general constructor: count blocks, block i holds bl[i] elements of
 * types[i] (or of `one` when types is NULL) at byte displacement disp[i].
 */
static int
dt_create(int combiner, int count, const int *bl, const MPI_Aint *disp,
    const MPI_Datatype *types, MPI_Datatype one, MPI_Datatype *out)
{
	struct dt_build bd = { 0 };

	if (out == NULL)
		return MPI_ERR_ARG;
	if (count < 0)
		return MPI_ERR_COUNT;
	for (int i = 0; i < count; i++) {
		MPI_Datatype t = types ? types[i] : one;
		if (t == MPI_DATATYPE_NULL)
			return MPI_ERR_TYPE;
		if (bl[i] < 0)
			return MPI_ERR_ARG;
		/* a zero-length block's displacement is never used */
		if (bl[i] > 0 &&
		    (disp[i] > DT_MAX_DISP || disp[i] < -DT_MAX_DISP))
			return MPI_ERR_ARG;
	}
	for (int i = 0; i < count && !bd.err; i++)
		dt_build_run(&bd, types ? types[i] : one, disp[i], bl[i]);
	return dt_build_finish(&bd, combiner, out);
}

static int
dt_fail(int code, const char *fn)
{
	return code == MPI_SUCCESS ? code : mpiv_err(NULL, code, fn);
}

int
MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPI_Aint d = 0;
	int rc;

	if (count < 0)
		return dt_fail(MPI_ERR_COUNT, "MPI_Type_contiguous");
	rc = dt_create(MPI_COMBINER_CONTIGUOUS, 1, &count, &d, NULL, oldtype,
	    newtype);
	if (rc == MPI_SUCCESS)
		rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_CONTIGUOUS, 1,
		    &count, 0, NULL, 0, NULL, 1, &oldtype);
	return dt_fail(rc, "MPI_Type_contiguous");
}

/* vector and hvector: count blocks of blocklength at stride_bytes apart. */
static int
dt_vector(int combiner, int count, int blocklength, MPI_Aint stride_bytes,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int *bl;
	MPI_Aint *disp;
	int rc;

	if (count < 0)
		return MPI_ERR_COUNT;
	if (blocklength < 0)
		return MPI_ERR_ARG;
	if (oldtype == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	bl = malloc(((size_t)count + 1) * sizeof(*bl));
	disp = malloc(((size_t)count + 1) * sizeof(*disp));
	if (bl == NULL || disp == NULL) {
		free(bl);
		free(disp);
		return MPI_ERR_NO_MEM;
	}
	rc = MPI_SUCCESS;
	for (int i = 0; i < count; i++) {
		bl[i] = blocklength;
		if (__builtin_mul_overflow((MPI_Aint)i, stride_bytes, &disp[i]))
			rc = MPI_ERR_ARG;
	}
	if (rc == MPI_SUCCESS)
		rc = dt_create(combiner, count, bl, disp, NULL, oldtype,
		    newtype);
	free(bl);
	free(disp);
	return rc;
}

int
MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	MPI_Aint sb = 0;
	int rc, args[3] = { count, blocklength, stride };

	if (oldtype != MPI_DATATYPE_NULL &&
	    __builtin_mul_overflow((MPI_Aint)stride, oldtype->extent, &sb))
		return dt_fail(MPI_ERR_ARG, "MPI_Type_vector");
	rc = dt_vector(MPI_COMBINER_VECTOR, count, blocklength, sb, oldtype,
	    newtype);
	if (rc == MPI_SUCCESS)
		rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_VECTOR, 3, args,
		    0, NULL, 0, NULL, 1, &oldtype);
	return dt_fail(rc, "MPI_Type_vector");
}

static int
dt_hvector(int count, int blocklength, MPI_Aint stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int rc, args[2] = { count, blocklength };

	rc = dt_vector(MPI_COMBINER_HVECTOR, count, blocklength, stride,
	    oldtype, newtype);
	if (rc == MPI_SUCCESS)
		rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_HVECTOR, 2, args,
		    1, &stride, 0, NULL, 1, &oldtype);
	return rc;
}

int
MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return dt_fail(dt_hvector(count, blocklength, stride, oldtype,
	    newtype), "MPI_Type_create_hvector");
}

int
MPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return dt_fail(dt_hvector(count, blocklength, stride, oldtype,
	    newtype), "MPI_Type_hvector");
}

/* Records the arguments of an indexed constructor, in the order
   MPI_Type_get_contents gives them: count, the block length(s), the
   displacements in elements (integers) or bytes (addresses). */
static int
dt_indexed_args(MPI_Datatype dt, int combiner, int count, const int *bl,
    int blconst, const int *idisp, const MPI_Aint *adisp, MPI_Datatype old)
{
	size_t nb = bl ? (size_t)count : 1;
	size_t ni = 1 + nb + (idisp ? (size_t)count : 0);
	int *ints = malloc(ni * sizeof(*ints));
	int rc;

	if (ni > INT_MAX || ints == NULL) {
		free(ints);
		mpiv_dt_release(dt);
		return MPI_ERR_NO_MEM;
	}
	ints[0] = count;
	if (bl)
		memcpy(ints + 1, bl, (size_t)count * sizeof(*ints));
	else
		ints[1] = blconst;
	if (idisp)
		memcpy(ints + 1 + nb, idisp, (size_t)count * sizeof(*ints));
	rc = mpiv_dt_set_args(dt, combiner, (int)ni, ints,
	    adisp ? count : 0, adisp, 0, NULL, 1, &old);
	free(ints);
	return rc;
}

/* indexed, indexed_block, hindexed: displacements in elements (scale =
   extent) or in bytes (idisp NULL, adisp given). */
static int
dt_indexed(int combiner, int count, const int *bl, int blconst,
    const int *idisp, const MPI_Aint *adisp, MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	int *b;
	MPI_Aint *d;
	int rc = MPI_SUCCESS;

	if (count < 0)
		return MPI_ERR_COUNT;
	if (oldtype == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	if (count > 0 && ((bl == NULL && blconst < 0) ||
	    (idisp == NULL && adisp == NULL)))
		return MPI_ERR_ARG;
	b = malloc(((size_t)count + 1) * sizeof(*b));
	d = malloc(((size_t)count + 1) * sizeof(*d));
	if (b == NULL || d == NULL) {
		free(b);
		free(d);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < count; i++) {
		b[i] = bl ? bl[i] : blconst;
		if (b[i] == 0)
			d[i] = 0;	/* not used: whatever it says */
		else if (adisp)
			d[i] = adisp[i];
		else if (__builtin_mul_overflow((MPI_Aint)idisp[i],
		    oldtype->extent, &d[i]))
			rc = MPI_ERR_ARG;
	}
	if (rc == MPI_SUCCESS)
		rc = dt_create(combiner, count, b, d, NULL, oldtype, newtype);
	if (rc == MPI_SUCCESS)
		rc = dt_indexed_args(*newtype, combiner, count, bl, blconst,
		    idisp, adisp, oldtype);
	free(b);
	free(d);
	return rc;
}

int
MPI_Type_indexed(int count, const int array_of_blocklengths[],
    const int array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	return dt_fail(dt_indexed(MPI_COMBINER_INDEXED, count,
	    array_of_blocklengths, -1, array_of_displacements, NULL, oldtype,
	    newtype), "MPI_Type_indexed");
}

int
MPI_Type_create_indexed_block(int count, int blocklength,
    const int array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	if (blocklength < 0)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_create_indexed_block");
	return dt_fail(dt_indexed(MPI_COMBINER_INDEXED_BLOCK, count, NULL,
	    blocklength, array_of_displacements, NULL, oldtype, newtype),
	    "MPI_Type_create_indexed_block");
}

int
MPI_Type_create_hindexed_block(int count, int blocklength,
    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	if (blocklength < 0)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_create_hindexed_block");
	return dt_fail(dt_indexed(MPI_COMBINER_HINDEXED_BLOCK, count, NULL,
	    blocklength, NULL, array_of_displacements, oldtype, newtype),
	    "MPI_Type_create_hindexed_block");
}

int
MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	return dt_fail(dt_indexed(MPI_COMBINER_HINDEXED, count,
	    array_of_blocklengths, -1, NULL, array_of_displacements, oldtype,
	    newtype), "MPI_Type_create_hindexed");
}

int
MPI_Type_hindexed(int count, int array_of_blocklengths[],
    MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype)
{
	return dt_fail(dt_indexed(MPI_COMBINER_HINDEXED, count,
	    array_of_blocklengths, -1, NULL, array_of_displacements, oldtype,
	    newtype), "MPI_Type_hindexed");
}

int
MPI_Type_create_struct(int count, const int array_of_blocklengths[],
    const MPI_Aint array_of_displacements[],
    const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	if (count > 0 && (array_of_blocklengths == NULL ||
	    array_of_displacements == NULL || array_of_types == NULL))
		return dt_fail(MPI_ERR_ARG, "MPI_Type_create_struct");
	int rc = dt_create(MPI_COMBINER_STRUCT, count, array_of_blocklengths,
	    array_of_displacements, array_of_types, NULL, newtype);
	int *ints;

	if (rc != MPI_SUCCESS)
		return dt_fail(rc, "MPI_Type_create_struct");
	if ((ints = malloc(((size_t)count + 1) * sizeof(*ints))) == NULL) {
		mpiv_dt_release(*newtype);
		return dt_fail(MPI_ERR_NO_MEM, "MPI_Type_create_struct");
	}
	ints[0] = count;
	if (count > 0)
		memcpy(ints + 1, array_of_blocklengths,
		    (size_t)count * sizeof(*ints));
	rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_STRUCT, count + 1, ints,
	    count, array_of_displacements, 0, NULL, count, array_of_types);
	free(ints);
	return dt_fail(rc, "MPI_Type_create_struct");
}

int
MPI_Type_struct(int count, int array_of_blocklengths[],
    MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[],
    MPI_Datatype *newtype)
{
	return MPI_Type_create_struct(count, array_of_blocklengths,
	    array_of_displacements, array_of_types, newtype);
}

/* Copies oldtype (blocks included) into a fresh, uncommitted type. */
static int
dt_copy(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct mpiv_datatype *dt;

	if (oldtype == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	if (newtype == NULL)
		return MPI_ERR_ARG;
	if ((dt = malloc(sizeof(*dt))) == NULL)
		return MPI_ERR_NO_MEM;
	*dt = *oldtype;
	dt->attrs = NULL;
	dt->blocks = NULL;
	if (oldtype->nblocks > 0) {
		dt->blocks = malloc(oldtype->nblocks * sizeof(*dt->blocks));
		if (dt->blocks == NULL) {
			free(dt);
			return MPI_ERR_NO_MEM;
		}
		memcpy(dt->blocks, oldtype->blocks,
		    oldtype->nblocks * sizeof(*dt->blocks));
	}
	dt->args = NULL;
	if (oldtype->eruns == NULL && !oldtype->eruns_lost) {
		/* predefined: one element of its size */
		dt->eruns = malloc(sizeof(*dt->eruns));
		dt->neruns = 1;
		if (dt->eruns != NULL) {
			dt->eruns[0].size = oldtype->size;
			dt->eruns[0].count = 1;
			dt->eruns[0].kind = oldtype->basic;
		}
	} else if (oldtype->neruns > 0) {
		dt->eruns = malloc(oldtype->neruns * sizeof(*dt->eruns));
		if (dt->eruns != NULL)
			memcpy(dt->eruns, oldtype->eruns,
			    oldtype->neruns * sizeof(*dt->eruns));
	}
	if (oldtype->neruns > 0 || (oldtype->eruns == NULL &&
	    !oldtype->eruns_lost)) {
		if (dt->eruns == NULL) {
			free(dt->blocks);
			free(dt);
			return MPI_ERR_NO_MEM;
		}
	}
	dt->predefined = false;
	dt->refcount = 1;
	dt->name[0] = '\0';
	*newtype = dt;
	return MPI_SUCCESS;
}

int
MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
    MPI_Datatype *newtype)
{
	int rc;

	if (lb > DT_MAX_DISP || lb < -DT_MAX_DISP || extent > DT_MAX_DISP ||
	    extent < -DT_MAX_DISP)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_create_resized");
	rc = dt_copy(oldtype, newtype);
	if (rc != MPI_SUCCESS)
		return dt_fail(rc, "MPI_Type_create_resized");
	(*newtype)->lb = lb;
	(*newtype)->extent = extent;
	(*newtype)->committed = false;
	(*newtype)->combiner = MPI_COMBINER_RESIZED;
	{
		MPI_Aint args[2] = { lb, extent };

		rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_RESIZED, 0, NULL,
		    2, args, 0, NULL, 1, &oldtype);
		if (rc != MPI_SUCCESS)
			return dt_fail(rc, "MPI_Type_create_resized");
	}
	/* An explicit extent is the user's word: structs built from it are
	   not padded further. */
	(*newtype)->align = 1;
	(*newtype)->contiguous = (*newtype)->nblocks == 1 &&
	    extent == (MPI_Aint)(*newtype)->size &&
	    (*newtype)->blocks[0].len == (*newtype)->size;
	return MPI_SUCCESS;
}

int
MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	int rc = dt_copy(oldtype, newtype);

	if (rc != MPI_SUCCESS)
		return dt_fail(rc, "MPI_Type_dup");
	(*newtype)->committed = oldtype->committed || oldtype->predefined;
	(*newtype)->combiner = MPI_COMBINER_DUP;
	rc = mpiv_dt_set_args(*newtype, MPI_COMBINER_DUP, 0, NULL, 0, NULL,
	    0, NULL, 1, &oldtype);
	if (rc == MPI_SUCCESS &&
	    (rc = mpiv_type_attr_dup(oldtype, *newtype)) != MPI_SUCCESS) {
		(void)mpiv_type_attr_free_all(*newtype);
		mpiv_dt_release(*newtype);
		*newtype = MPI_DATATYPE_NULL;
	}
	return dt_fail(rc, "MPI_Type_dup");
}

int
MPI_Type_commit(MPI_Datatype *datatype)
{
	if (datatype == NULL || *datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_commit");
	(*datatype)->committed = true;
	return MPI_SUCCESS;
}

void
mpiv_dt_retain(MPI_Datatype dt)
{
	if (dt != MPI_DATATYPE_NULL && !dt->predefined)
		dt->refcount++;
}

void
mpiv_dt_release(MPI_Datatype dt)
{
	if (dt == MPI_DATATYPE_NULL || dt->predefined)
		return;
	if (--dt->refcount == 0) {
		mpiv_dt_free_args(dt);
		free(dt->blocks);
		if (dt->eruns != dt_no_eruns)
			free(dt->eruns);
		free(dt);
	}
}

int
MPI_Type_free(MPI_Datatype *datatype)
{
	int rc;

	if (datatype == NULL || *datatype == MPI_DATATYPE_NULL ||
	    (*datatype)->predefined)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_free");
	/* The attributes' delete callbacks run now, even if a pending
	   operation keeps the type itself a while longer. */
	if ((rc = mpiv_type_attr_free_all(*datatype)) != MPI_SUCCESS)
		return dt_fail(rc, "MPI_Type_free");
	mpiv_dt_release(*datatype);
	*datatype = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}

/* ---------------- queries ---------------- */

int
MPI_Type_size(MPI_Datatype datatype, int *size)
{
	if (datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_size");
	if (size == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_size");
	*size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
	return MPI_SUCCESS;
}

int
MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	if (datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_size_x");
	if (size == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_size_x");
	*size = (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}

int
MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
	if (datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_get_extent");
	if (lb == NULL || extent == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_get_extent");
	*lb = datatype->lb;
	*extent = datatype->extent;
	return MPI_SUCCESS;
}

int
MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
    MPI_Aint *true_extent)
{
	if (datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_get_true_extent");
	if (true_lb == NULL || true_extent == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_get_true_extent");
	*true_lb = datatype->true_lb;
	*true_extent = datatype->true_extent;
	return MPI_SUCCESS;
}

int
MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
	MPI_Aint lb;

	return MPI_Type_get_extent(datatype, &lb, extent);
}

int
MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
	MPI_Aint ext;

	return MPI_Type_get_extent(datatype, displacement, &ext);
}

int
MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
	MPI_Aint lb, ext;
	int rc = MPI_Type_get_extent(datatype, &lb, &ext);

	if (rc == MPI_SUCCESS && displacement != NULL)
		*displacement = lb + ext;
	return rc;
}

int
MPI_Type_set_name(MPI_Datatype datatype, const char *name)
{
	if (datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_set_name");
	if (name == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_set_name");
	snprintf(datatype->name, sizeof(datatype->name), "%s", name);
	return MPI_SUCCESS;
}

int
MPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen)
{
	if (datatype == MPI_DATATYPE_NULL)
		return dt_fail(MPI_ERR_TYPE, "MPI_Type_get_name");
	if (name == NULL || resultlen == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Type_get_name");
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", datatype->name);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}

int
MPI_Get_address(const void *location, MPI_Aint *address)
{
	if (address == NULL)
		return dt_fail(MPI_ERR_ARG, "MPI_Get_address");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}

int
MPI_Address(void *location, MPI_Aint *address)
{
	return MPI_Get_address(location, address);
}

MPI_Aint
MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint
MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---------------- packing ---------------- */

size_t
mpiv_dt_packed_size(MPI_Datatype dt, int count)
{
	if (dt == MPI_DATATYPE_NULL || count <= 0)
		return 0;
	return (size_t)count * dt->size;
}

bool
mpiv_dt_is_contig(MPI_Datatype dt)
{
	return dt != MPI_DATATYPE_NULL && (dt->contiguous || dt->size == 0);
}

int
mpiv_dt_check(MPI_Datatype dt)
{
	if (dt == MPI_DATATYPE_NULL || (!dt->predefined && !dt->committed))
		return MPI_ERR_TYPE;
	return MPI_SUCCESS;
}

/* Address arithmetic through uintptr_t: buffers may be MPI_BOTTOM (NULL)
   with absolute displacements. */
static inline char *
dt_at(const void *base, MPI_Aint off)
{
	return (char *)((uintptr_t)base + (uintptr_t)off);
}

void
mpiv_dt_pack(const void *buf, int count, MPI_Datatype dt, void *out)
{
	char *o = out;

	if (count <= 0 || dt->size == 0)
		return;
	if (dt->contiguous) {
		memcpy(o, dt_at(buf, dt->true_lb), (size_t)count * dt->size);
		return;
	}
	for (int i = 0; i < count; i++) {
		MPI_Aint base = (MPI_Aint)i * dt->extent;
		for (size_t j = 0; j < dt->nblocks; j++) {
			memcpy(o, dt_at(buf, base + dt->blocks[j].disp),
			    dt->blocks[j].len);
			o += dt->blocks[j].len;
		}
	}
}

void
mpiv_dt_unpack(const void *in, size_t bytes, void *buf, int count,
    MPI_Datatype dt)
{
	const char *p = in;
	size_t full;

	if (count <= 0 || dt->size == 0)
		return;
	full = (size_t)count * dt->size;
	if (bytes > full)
		bytes = full;
	if (dt->contiguous) {
		memcpy(dt_at(buf, dt->true_lb), p, bytes);
		return;
	}
	for (int i = 0; i < count && bytes > 0; i++) {
		MPI_Aint base = (MPI_Aint)i * dt->extent;
		for (size_t j = 0; j < dt->nblocks && bytes > 0; j++) {
			size_t len = dt->blocks[j].len;
			if (len > bytes)
				len = bytes;
			memcpy(dt_at(buf, base + dt->blocks[j].disp), p, len);
			p += len;
			bytes -= len;
		}
	}
}

int
MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
    int outsize, int *position, MPI_Comm comm)
{
	size_t need;
	int rc;

	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Pack");
	if (incount < 0)
		return mpiv_err(comm, MPI_ERR_COUNT, "MPI_Pack");
	if (position == NULL || *position < 0 || outsize < 0)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Pack");
	need = mpiv_dt_packed_size(datatype, incount);
	if (*position > outsize || need > (size_t)(outsize - *position))
		return mpiv_err(comm, MPI_ERR_TRUNCATE, "MPI_Pack");
	mpiv_dt_pack(inbuf, incount, datatype, (char *)outbuf + *position);
	*position += (int)need;
	return MPI_SUCCESS;
}

int
MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
    int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
	size_t need;
	int rc;

	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Unpack");
	if (outcount < 0)
		return mpiv_err(comm, MPI_ERR_COUNT, "MPI_Unpack");
	if (position == NULL || *position < 0 || insize < 0 ||
	    *position > insize)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Unpack");
	need = mpiv_dt_packed_size(datatype, outcount);
	if (need > (size_t)(insize - *position))
		return mpiv_err(comm, MPI_ERR_TRUNCATE, "MPI_Unpack");
	mpiv_dt_unpack((const char *)inbuf + *position, need, outbuf, outcount,
	    datatype);
	*position += (int)need;
	return MPI_SUCCESS;
}

int
MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
	size_t need;

	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_err(comm, MPI_ERR_TYPE, "MPI_Pack_size");
	if (incount < 0)
		return mpiv_err(comm, MPI_ERR_COUNT, "MPI_Pack_size");
	if (size == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Pack_size");
	need = mpiv_dt_packed_size(datatype, incount);
	if (need > INT_MAX)
		return mpiv_err(comm, MPI_ERR_COUNT, "MPI_Pack_size");
	*size = (int)need;
	return MPI_SUCCESS;
}
