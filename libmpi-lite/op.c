/*
 * op.c: reduction operations. Predefined ops are applied by typed loops
 * chosen from (op, basic kind); the standard's table of which op applies
 * to which type class decides MPI_ERR_OP. Elements are read and written
 * through memcpy so the same loops serve aligned user buffers and packed
 * (unaligned) temporaries. Derived types made of one basic kind are
 * reduced on their packed form.
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "impl.h"

enum op_id {
	OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_BAND, OP_LOR, OP_BOR,
	OP_LXOR, OP_BXOR, OP_MAXLOC, OP_MINLOC, OP_REPLACE, OP_NO_OP,
};

#define OP_DEF(name, id)						\
	struct mpiv_op mpiv_op_##name = { .user_fn = NULL, .builtin = id, \
		.commute = true, .predefined = true };
OP_DEF(max, OP_MAX) OP_DEF(min, OP_MIN) OP_DEF(sum, OP_SUM)
OP_DEF(prod, OP_PROD) OP_DEF(land, OP_LAND) OP_DEF(band, OP_BAND)
OP_DEF(lor, OP_LOR) OP_DEF(bor, OP_BOR) OP_DEF(lxor, OP_LXOR)
OP_DEF(bxor, OP_BXOR) OP_DEF(maxloc, OP_MAXLOC) OP_DEF(minloc, OP_MINLOC)
OP_DEF(replace, OP_REPLACE) OP_DEF(no_op, OP_NO_OP)

/* Pair layouts, as in datatype.c. */
struct op_float_int { float v; int i; };
struct op_double_int { double v; int i; };
struct op_long_int { long v; int i; };
struct op_2int { int v; int i; };
struct op_short_int { short v; int i; };
struct op_long_double_int { long double v; int i; };
struct op_2real { float v; float i; };
struct op_2double { double v; double i; };

/* Walks n elements: a from in, b from inout, b = EXPR. */
#define OP_LOOP(T, EXPR) do {						\
	for (size_t k_ = 0; k_ < n; k_++) {				\
		T a, b;							\
		memcpy(&a, in + k_ * stride, sizeof(a));		\
		memcpy(&b, io + k_ * stride, sizeof(b));		\
		b = (EXPR);						\
		memcpy(io + k_ * stride, &b, sizeof(b));		\
	}								\
} while (0)

/* Integer arithmetic goes through unsigned long long so overflow wraps
   (as every MPI library's does) instead of being undefined. */
#define OP_INT(T) do {							\
	switch (op) {							\
	case OP_MAX: OP_LOOP(T, a > b ? a : b); return MPI_SUCCESS;	\
	case OP_MIN: OP_LOOP(T, a < b ? a : b); return MPI_SUCCESS;	\
	case OP_SUM: OP_LOOP(T, (T)((unsigned long long)a +		\
	    (unsigned long long)b)); return MPI_SUCCESS;		\
	case OP_PROD: OP_LOOP(T, (T)((unsigned long long)a *		\
	    (unsigned long long)b)); return MPI_SUCCESS;		\
	case OP_LAND: OP_LOOP(T, (T)(a && b)); return MPI_SUCCESS;	\
	case OP_LOR: OP_LOOP(T, (T)(a || b)); return MPI_SUCCESS;	\
	case OP_LXOR: OP_LOOP(T, (T)(!a != !b)); return MPI_SUCCESS;	\
	case OP_BAND: OP_LOOP(T, (T)(a & b)); return MPI_SUCCESS;	\
	case OP_BOR: OP_LOOP(T, (T)(a | b)); return MPI_SUCCESS;	\
	case OP_BXOR: OP_LOOP(T, (T)(a ^ b)); return MPI_SUCCESS;	\
	default: return MPI_ERR_OP;					\
	}								\
} while (0)

#define OP_FLOAT(T) do {						\
	switch (op) {							\
	case OP_MAX: OP_LOOP(T, a > b ? a : b); return MPI_SUCCESS;	\
	case OP_MIN: OP_LOOP(T, a < b ? a : b); return MPI_SUCCESS;	\
	case OP_SUM: OP_LOOP(T, a + b); return MPI_SUCCESS;		\
	case OP_PROD: OP_LOOP(T, a * b); return MPI_SUCCESS;		\
	default: return MPI_ERR_OP;					\
	}								\
} while (0)

#define OP_COMPLEX(T) do {						\
	switch (op) {							\
	case OP_SUM: OP_LOOP(T, a + b); return MPI_SUCCESS;		\
	case OP_PROD: OP_LOOP(T, a * b); return MPI_SUCCESS;		\
	default: return MPI_ERR_OP;					\
	}								\
} while (0)

/* MAXLOC/MINLOC on (value, index) pairs: the better value wins; on a tie
   the lower index wins. idxoff is where the index (of type I) lies. */
#define OP_PAIR(V) OP_PAIR_I(V, int)
#define OP_PAIR_I(V, I) do {							\
	if (op != OP_MAXLOC && op != OP_MINLOC)				\
		return MPI_ERR_OP;					\
	for (size_t k_ = 0; k_ < n; k_++) {				\
		V av, bv;						\
		I ai, bi;						\
		const char *pa = in + k_ * stride;			\
		char *pb = io + k_ * stride;				\
		memcpy(&av, pa, sizeof(av));				\
		memcpy(&ai, pa + idxoff, sizeof(ai));			\
		memcpy(&bv, pb, sizeof(bv));				\
		memcpy(&bi, pb + idxoff, sizeof(bi));			\
		bool take = op == OP_MAXLOC ? av > bv : av < bv;	\
		if (take || (av == bv && ai < bi)) {			\
			memcpy(pb, &av, sizeof(av));			\
			memcpy(pb + idxoff, &ai, sizeof(ai));		\
		}							\
	}								\
} while (0); return MPI_SUCCESS

/*
 * io[k] = in[k] op io[k] for n elements of basic kind b placed `stride`
 * bytes apart; idxoff is the index offset of pair kinds.
 */
static int
op_kernel(int op, enum mpiv_basic b, const char *in, char *io, size_t n,
    size_t stride, size_t idxoff)
{
	switch (b) {
	case MPIV_B_CHAR: OP_INT(char);
	case MPIV_B_SCHAR: OP_INT(signed char);
	case MPIV_B_UCHAR: OP_INT(unsigned char);
	case MPIV_B_SHORT: OP_INT(short);
	case MPIV_B_USHORT: OP_INT(unsigned short);
	case MPIV_B_INT: OP_INT(int);
	case MPIV_B_UINT: OP_INT(unsigned);
	case MPIV_B_LONG: OP_INT(long);
	case MPIV_B_ULONG: OP_INT(unsigned long);
	case MPIV_B_LLONG: OP_INT(long long);
	case MPIV_B_ULLONG: OP_INT(unsigned long long);
	case MPIV_B_INT8: OP_INT(int8_t);
	case MPIV_B_INT16: OP_INT(int16_t);
	case MPIV_B_INT32: OP_INT(int32_t);
	case MPIV_B_INT64: OP_INT(int64_t);
	case MPIV_B_UINT8: OP_INT(uint8_t);
	case MPIV_B_UINT16: OP_INT(uint16_t);
	case MPIV_B_UINT32: OP_INT(uint32_t);
	case MPIV_B_UINT64: OP_INT(uint64_t);
	case MPIV_B_AINT: OP_INT(MPI_Aint);
	case MPIV_B_OFFSET: OP_INT(MPI_Offset);
	case MPIV_B_COUNT: OP_INT(MPI_Count);
	case MPIV_B_FLOAT: OP_FLOAT(float);
	case MPIV_B_DOUBLE: OP_FLOAT(double);
	case MPIV_B_LDOUBLE: OP_FLOAT(long double);
	case MPIV_B_CFLOAT: OP_COMPLEX(float _Complex);
	case MPIV_B_CDOUBLE: OP_COMPLEX(double _Complex);
	case MPIV_B_CLDOUBLE: OP_COMPLEX(long double _Complex);
	case MPIV_B_BOOL:
		switch (op) {
		case OP_LAND: OP_LOOP(_Bool, a && b); return MPI_SUCCESS;
		case OP_LOR: OP_LOOP(_Bool, a || b); return MPI_SUCCESS;
		case OP_LXOR: OP_LOOP(_Bool, a != b); return MPI_SUCCESS;
		default: return MPI_ERR_OP;
		}
	case MPIV_B_BYTE:
		switch (op) {
		case OP_BAND: OP_LOOP(unsigned char, a & b); return MPI_SUCCESS;
		case OP_BOR: OP_LOOP(unsigned char, a | b); return MPI_SUCCESS;
		case OP_BXOR: OP_LOOP(unsigned char, a ^ b); return MPI_SUCCESS;
		default: return MPI_ERR_OP;
		}
	case MPIV_B_FLOAT_INT: OP_PAIR(float);
	case MPIV_B_DOUBLE_INT: OP_PAIR(double);
	case MPIV_B_LONG_INT: OP_PAIR(long);
	case MPIV_B_2INT: OP_PAIR(int);
	case MPIV_B_SHORT_INT: OP_PAIR(short);
	case MPIV_B_LDOUBLE_INT: OP_PAIR(long double);
	case MPIV_B_2REAL: OP_PAIR_I(float, float);
	case MPIV_B_2DOUBLE: OP_PAIR_I(double, double);
	case MPIV_B_LOGICAL:
		/* gfortran's .true. is 1, .false. 0 */
		switch (op) {
		case OP_LAND: OP_LOOP(int32_t, (int32_t)(a && b)); return MPI_SUCCESS;
		case OP_LOR: OP_LOOP(int32_t, (int32_t)(a || b)); return MPI_SUCCESS;
		case OP_LXOR: OP_LOOP(int32_t, (int32_t)(!a != !b)); return MPI_SUCCESS;
		default: return MPI_ERR_OP;
		}
	default:
		return MPI_ERR_OP;
	}
}

/* Size of the value part of a pair kind, 0 for other kinds. */
static size_t
op_pair_value_size(enum mpiv_basic b)
{
	switch (b) {
	case MPIV_B_FLOAT_INT: return sizeof(float);
	case MPIV_B_DOUBLE_INT: return sizeof(double);
	case MPIV_B_LONG_INT: return sizeof(long);
	case MPIV_B_2INT: return sizeof(int);
	case MPIV_B_SHORT_INT: return sizeof(short);
	case MPIV_B_LDOUBLE_INT: return sizeof(long double);
	case MPIV_B_2REAL: return sizeof(float);
	case MPIV_B_2DOUBLE: return sizeof(double);
	default: return 0;
	}
}

/* Size of the index part of a pair kind. */
static size_t
op_pair_index_size(enum mpiv_basic b)
{
	switch (b) {
	case MPIV_B_2REAL: return sizeof(float);
	case MPIV_B_2DOUBLE: return sizeof(double);
	default: return sizeof(int);
	}
}

/* Offset of the index in the C layout of a pair kind. */
static size_t
op_pair_index_offset(enum mpiv_basic b)
{
	switch (b) {
	case MPIV_B_FLOAT_INT: return offsetof(struct op_float_int, i);
	case MPIV_B_DOUBLE_INT: return offsetof(struct op_double_int, i);
	case MPIV_B_LONG_INT: return offsetof(struct op_long_int, i);
	case MPIV_B_2INT: return offsetof(struct op_2int, i);
	case MPIV_B_SHORT_INT: return offsetof(struct op_short_int, i);
	case MPIV_B_LDOUBLE_INT: return offsetof(struct op_long_double_int, i);
	case MPIV_B_2REAL: return offsetof(struct op_2real, i);
	case MPIV_B_2DOUBLE: return offsetof(struct op_2double, i);
	default: return 0;
	}
}

/* Copies count elements of dt from src to dst, layout to layout. */
static void
op_copy(const void *src, void *dst, int count, MPI_Datatype dt)
{
	for (int i = 0; i < count; i++) {
		MPI_Aint base = (MPI_Aint)i * dt->extent;
		for (size_t j = 0; j < dt->nblocks; j++) {
			MPI_Aint off = base + dt->blocks[j].disp;
			memmove((char *)((uintptr_t)dst + (uintptr_t)off),
			    (const char *)((uintptr_t)src + (uintptr_t)off),
			    dt->blocks[j].len);
		}
	}
}

int
mpiv_op_apply(MPI_Op op, const void *in, void *inout, int count,
    MPI_Datatype dt)
{
	enum mpiv_basic b;
	size_t vsize, esize, n;
	char *pin, *pio;
	int rc;

	if (op == MPI_OP_NULL)
		return MPI_ERR_OP;
	if (dt == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	if (!op->predefined) {
		MPI_Datatype d = dt;
		int c = count;
		if (count > 0 && op->fortran_fn != NULL) {
			MPI_Fint fd = MPI_Type_c2f(dt);
			op->fortran_fn((void *)(uintptr_t)in, inout, &c, &fd);
		} else if (count > 0) {
			op->user_fn((void *)(uintptr_t)in, inout, &c, &d);
		}
		return MPI_SUCCESS;
	}
	if (op->builtin == OP_NO_OP)
		return MPI_SUCCESS;
	if (op->builtin == OP_REPLACE) {
		op_copy(in, inout, count, dt);
		return MPI_SUCCESS;
	}
	b = dt->basic;
	if (b == MPIV_B_NONE)
		return MPI_ERR_OP;
	vsize = op_pair_value_size(b);
	if (dt->predefined) {
		/* Validate the combination even for count 0. */
		rc = op_kernel(op->builtin, b, in, inout, 0, 0, 0);
		if (rc != MPI_SUCCESS || count <= 0)
			return rc;
		return op_kernel(op->builtin, b, in, inout, (size_t)count,
		    (size_t)dt->extent, op_pair_index_offset(b));
	}
	/* A derived type of one basic kind. */
	rc = op_kernel(op->builtin, b, in, inout, 0, 0, 0);
	if (rc != MPI_SUCCESS || count <= 0 || dt->size == 0)
		return rc;
	n = (size_t)count * dt->nbasic;
	esize = vsize ? vsize + op_pair_index_size(b) : dt->size / dt->nbasic;
	if (dt->contiguous && vsize == 0) {
		/* The elements lie back to back: reduce in place. */
		return op_kernel(op->builtin, b,
		    (const char *)((uintptr_t)in + (uintptr_t)dt->true_lb),
		    (char *)((uintptr_t)inout + (uintptr_t)dt->true_lb), n,
		    esize, 0);
	}
	pin = malloc((size_t)count * dt->size);
	pio = malloc((size_t)count * dt->size);
	if (pin == NULL || pio == NULL) {
		free(pin);
		free(pio);
		return MPI_ERR_NO_MEM;
	}
	mpiv_dt_pack(in, count, dt, pin);
	mpiv_dt_pack(inout, count, dt, pio);
	rc = op_kernel(op->builtin, b, pin, pio, n, esize, vsize);
	if (rc == MPI_SUCCESS)
		mpiv_dt_unpack(pio, (size_t)count * dt->size, inout, count, dt);
	free(pin);
	free(pio);
	return rc;
}

int
MPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op)
{
	struct mpiv_op *o;

	if (function == NULL || op == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Op_create");
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Op_create");
	o->user_fn = function;
	o->commute = commute != 0;
	o->builtin = -1;
	*op = o;
	return MPI_SUCCESS;
}

int
MPI_Op_free(MPI_Op *op)
{
	if (op == NULL || *op == MPI_OP_NULL || (*op)->predefined)
		return mpiv_err(NULL, MPI_ERR_OP, "MPI_Op_free");
	free(*op);
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

int
MPI_Op_commutative(MPI_Op op, int *commute)
{
	if (op == MPI_OP_NULL)
		return mpiv_err(NULL, MPI_ERR_OP, "MPI_Op_commutative");
	if (commute == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Op_commutative");
	*commute = op->commute;
	return MPI_SUCCESS;
}

int
MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
    MPI_Datatype datatype, MPI_Op op)
{
	int rc;

	if (count < 0)
		return mpiv_err(NULL, MPI_ERR_COUNT, "MPI_Reduce_local");
	if ((rc = mpiv_dt_check(datatype)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Reduce_local");
	if (count > 0 && (inbuf == NULL || inoutbuf == NULL ||
	    inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE))
		return mpiv_err(NULL, MPI_ERR_BUFFER, "MPI_Reduce_local");
	rc = mpiv_op_apply(op, inbuf, inoutbuf, count, datatype);
	return rc == MPI_SUCCESS ? rc : mpiv_err(NULL, rc, "MPI_Reduce_local");
}
