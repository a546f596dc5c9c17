/*
 * dt_external.c: MPI_Pack_external, MPI_Unpack_external and
 * MPI_Pack_external_size for the "external32" representation: every
 * basic element big-endian, of the fixed size MPI gives it (char 1,
 * short 2, int and long 4, long long 8, float 4, double 8, long double
 * 16 (IEEE quad), wchar_t 4, _Bool 1, MPI_Aint/Offset/Count 8, complex
 * two of its parts, the MINLOC/MAXLOC pairs value then a 4-byte int).
 *
 * The data is packed natively first (datatype.c), then converted one
 * basic element at a time along the type's basic element runs; unpacking
 * is the reverse. A value that does not fit its external32 size (a long
 * over 32 bits) is an error, not truncated.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

/* external32 size of one basic element of kind; 0 if not supported. */
static size_t
x32_size(enum mpiv_basic k)
{
	switch (k) {
	case MPIV_B_CHAR: case MPIV_B_SCHAR: case MPIV_B_UCHAR:
	case MPIV_B_BYTE: case MPIV_B_BOOL: case MPIV_B_INT8:
	case MPIV_B_UINT8: case MPIV_B_PACKED:
		return 1;
	case MPIV_B_SHORT: case MPIV_B_USHORT: case MPIV_B_INT16:
	case MPIV_B_UINT16:
		return 2;
	case MPIV_B_INT: case MPIV_B_UINT: case MPIV_B_INT32:
	case MPIV_B_UINT32: case MPIV_B_FLOAT: case MPIV_B_WCHAR:
	case MPIV_B_LONG: case MPIV_B_ULONG:
		return 4;
	case MPIV_B_LLONG: case MPIV_B_ULLONG: case MPIV_B_INT64:
	case MPIV_B_UINT64: case MPIV_B_DOUBLE: case MPIV_B_AINT:
	case MPIV_B_OFFSET: case MPIV_B_COUNT: case MPIV_B_CFLOAT:
		return 8;
	case MPIV_B_LDOUBLE: case MPIV_B_CDOUBLE:
		return 16;
	case MPIV_B_CLDOUBLE:
		return 32;
	case MPIV_B_FLOAT_INT: case MPIV_B_LONG_INT: case MPIV_B_2INT:
		return 8;
	case MPIV_B_DOUBLE_INT:
		return 12;
	case MPIV_B_SHORT_INT:
		return 6;
	case MPIV_B_LDOUBLE_INT:
		return 20;
	default:
		return 0;
	}
}

static bool
x32_signed(enum mpiv_basic k)
{
	switch (k) {
	case MPIV_B_CHAR: case MPIV_B_SCHAR: case MPIV_B_SHORT:
	case MPIV_B_INT: case MPIV_B_LONG: case MPIV_B_LLONG:
	case MPIV_B_INT8: case MPIV_B_INT16: case MPIV_B_INT32:
	case MPIV_B_INT64: case MPIV_B_AINT: case MPIV_B_OFFSET:
	case MPIV_B_COUNT: case MPIV_B_WCHAR:
		return (k != MPIV_B_CHAR || (char)-1 < 0) &&
		    (k != MPIV_B_WCHAR || (wchar_t)-1 < 0);
	default:
		return false;
	}
}

/* ---------------- integers and IEEE floats ---------------- */

/* Native integer of n bytes to e big-endian bytes. -1 if it does not
   fit. */
static int
x32_put_int(unsigned char *out, const unsigned char *in, size_t n, size_t e,
    bool sgn)
{
	unsigned long long u = 0;
	long long v;

	memcpy((unsigned char *)&u + (__BYTE_ORDER__ ==
	    __ORDER_BIG_ENDIAN__ ? sizeof(u) - n : 0), in, n);
	if (sgn && n < sizeof(u) && (u >> (8 * n - 1)) & 1)
		u |= ~0ULL << (8 * n);	/* sign-extend */
	if (e < sizeof(u)) {
		v = (long long)u;
		if (sgn ? (v < -(1LL << (8 * e - 1)) ||
		    v >= (1LL << (8 * e - 1))) : (u >> (8 * e)) != 0)
			return -1;
	}
	for (size_t i = 0; i < e; i++)
		out[e - 1 - i] = (unsigned char)(u >> (8 * i));
	return 0;
}

/* e big-endian bytes to a native integer of n bytes. */
static int
x32_get_int(unsigned char *out, const unsigned char *in, size_t n, size_t e,
    bool sgn)
{
	unsigned long long u = 0;

	for (size_t i = 0; i < e; i++)
		u = (u << 8) | in[i];
	if (sgn && e < sizeof(u) && (u >> (8 * e - 1)) & 1)
		u |= ~0ULL << (8 * e);
	if (n < sizeof(u)) {
		long long v = (long long)u;
		if (sgn ? (v < -(1LL << (8 * n - 1)) ||
		    v >= (1LL << (8 * n - 1))) : (u >> (8 * n)) != 0)
			return -1;
	}
	memcpy(out, (unsigned char *)&u + (__BYTE_ORDER__ ==
	    __ORDER_BIG_ENDIAN__ ? sizeof(u) - n : 0), n);
	return 0;
}

/* n bytes reversed on a little-endian host (IEEE float, double). */
static void
x32_swap(unsigned char *out, const unsigned char *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? in[i] :
		    in[n - 1 - i];
}

/* long double <-> IEEE binary128, big-endian. */
static int
x32_put_ldouble(unsigned char *out, const unsigned char *in)
{
#if LDBL_MANT_DIG == 113
	x32_swap(out, in, 16);
	return 0;
#elif LDBL_MANT_DIG == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* x87 extended: 64-bit mantissa (explicit integer bit), then
	   sign and 15-bit exponent; binary128 has the same exponent and
	   a 112-bit fraction */
	unsigned long long mant, frac_hi, frac_lo;
	unsigned se;

	memcpy(&mant, in, 8);
	se = (unsigned)in[8] | (unsigned)in[9] << 8;
	mant &= ~(1ULL << 63);		/* the integer bit is implicit */
	frac_hi = mant >> 15;		/* top 48 of the 63 bits */
	frac_lo = mant << 49;		/* the other 15 */
	out[0] = (unsigned char)(se >> 8);
	out[1] = (unsigned char)se;
	for (int i = 0; i < 6; i++)
		out[2 + i] = (unsigned char)(frac_hi >> (8 * (5 - i)));
	for (int i = 0; i < 8; i++)
		out[8 + i] = (unsigned char)(frac_lo >> (8 * (7 - i)));
	return 0;
#else
	(void)out;
	(void)in;
	return -1;
#endif
}

static int
x32_get_ldouble(unsigned char *out, const unsigned char *in)
{
#if LDBL_MANT_DIG == 113
	x32_swap(out, in, 16);
	return 0;
#elif LDBL_MANT_DIG == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned long long frac_hi = 0, frac_lo = 0, mant;
	unsigned se = (unsigned)in[0] << 8 | in[1];

	for (int i = 0; i < 6; i++)
		frac_hi = frac_hi << 8 | in[2 + i];
	for (int i = 0; i < 8; i++)
		frac_lo = frac_lo << 8 | in[8 + i];
	mant = frac_hi << 15 | frac_lo >> 49;	/* low bits rounded off */
	if ((se & 0x7fff) != 0)
		mant |= 1ULL << 63;		/* normal: integer bit set */
	memset(out, 0, sizeof(long double));
	memcpy(out, &mant, 8);
	out[8] = (unsigned char)se;
	out[9] = (unsigned char)(se >> 8);
	return 0;
#else
	(void)out;
	(void)in;
	return -1;
#endif
}

/* ---------------- one basic element ---------------- */

/* Converts one element of kind between native (n bytes) and external32
   (x32_size bytes); pack: native -> external. -1 on a value that does
   not fit or a kind without an external32 form. */
static int
x32_elem(enum mpiv_basic k, unsigned char *nat, size_t n, unsigned char *ext,
    bool pack)
{
	size_t e = x32_size(k);

	switch (k) {
	case MPIV_B_FLOAT: case MPIV_B_DOUBLE:
		if (n != e)
			return -1;
		if (pack)
			x32_swap(ext, nat, n);
		else
			x32_swap(nat, ext, n);
		return 0;
	case MPIV_B_CFLOAT: case MPIV_B_CDOUBLE:
		if (n != e)
			return -1;
		if (pack) {
			x32_swap(ext, nat, n / 2);
			x32_swap(ext + n / 2, nat + n / 2, n / 2);
		} else {
			x32_swap(nat, ext, n / 2);
			x32_swap(nat + n / 2, ext + n / 2, n / 2);
		}
		return 0;
	case MPIV_B_LDOUBLE:
		return pack ? x32_put_ldouble(ext, nat) :
		    x32_get_ldouble(nat, ext);
	case MPIV_B_CLDOUBLE: {
		size_t h = sizeof(long double);
		if (n != 2 * h)
			return -1;
		return x32_elem(MPIV_B_LDOUBLE, nat, h, ext, pack) ||
		    x32_elem(MPIV_B_LDOUBLE, nat + h, h, ext + 16, pack) ?
		    -1 : 0;
	}
	case MPIV_B_FLOAT_INT: case MPIV_B_DOUBLE_INT: case MPIV_B_LONG_INT:
	case MPIV_B_2INT: case MPIV_B_SHORT_INT: case MPIV_B_LDOUBLE_INT: {
		static const enum mpiv_basic val[] = {
			[MPIV_B_FLOAT_INT] = MPIV_B_FLOAT,
			[MPIV_B_DOUBLE_INT] = MPIV_B_DOUBLE,
			[MPIV_B_LONG_INT] = MPIV_B_LONG,
			[MPIV_B_2INT] = MPIV_B_INT,
			[MPIV_B_SHORT_INT] = MPIV_B_SHORT,
			[MPIV_B_LDOUBLE_INT] = MPIV_B_LDOUBLE,
		};
		/* packed natively: the value, then the int */
		size_t vn = n - sizeof(int), ve = e - 4;
		return x32_elem(val[k], nat, vn, ext, pack) ||
		    x32_elem(MPIV_B_INT, nat + vn, sizeof(int), ext + ve,
		    pack) ? -1 : 0;
	}
	default:
		if (e == 0)
			return -1;
		return pack ? x32_put_int(ext, nat, n, e, x32_signed(k)) :
		    x32_get_int(nat, ext, n, e, x32_signed(k));
	}
}

/*
 * Walks count elements of dt: the element runs of one element, repeated.
 * fn gets each run (kind, native size, count). Returns -1 when dt has no
 * element runs to walk (then nothing was called).
 */
struct x32_walk {
	const struct mpiv_erun *runs;
	size_t nruns;
	struct mpiv_erun one;
};

static int
x32_runs(MPI_Datatype dt, struct x32_walk *w)
{
	if (dt->eruns == NULL && !dt->eruns_lost) {	/* predefined */
		w->one.kind = dt->basic;
		w->one.size = dt->size;
		w->one.count = 1;
	} else if (dt->eruns_lost) {
		if (dt->basic == MPIV_B_NONE || dt->nbasic == 0)
			return -1;
		w->one.kind = dt->basic;
		w->one.size = dt->size / dt->nbasic;
		w->one.count = dt->nbasic;
	} else {
		w->runs = dt->eruns;
		w->nruns = dt->neruns;
		return 0;
	}
	w->runs = &w->one;
	w->nruns = 1;
	return 0;
}

/* external32 bytes of count elements of dt; -1 if a kind has none. */
static long long
x32_packed_size(MPI_Datatype dt, int count)
{
	struct x32_walk w;
	size_t one = 0;

	if (x32_runs(dt, &w) != 0)
		return -1;
	for (size_t j = 0; j < w.nruns; j++) {
		size_t e = x32_size(w.runs[j].kind);
		if (e == 0)
			return -1;
		one += e * w.runs[j].count;
	}
	return (long long)one * count;
}

/* Converts count elements between a native packed stream and external32. */
static int
x32_convert(MPI_Datatype dt, int count, unsigned char *nat,
    unsigned char *ext, bool pack)
{
	struct x32_walk w;

	if (x32_runs(dt, &w) != 0)
		return -1;
	for (int i = 0; i < count; i++)
		for (size_t j = 0; j < w.nruns; j++) {
			const struct mpiv_erun *r = &w.runs[j];
			size_t e = x32_size(r->kind);

			for (size_t k = 0; k < r->count; k++) {
				if (x32_elem(r->kind, nat, r->size, ext,
				    pack) != 0)
					return -1;
				nat += r->size;
				ext += e;
			}
		}
	return 0;
}

/* ---------------- the MPI calls ---------------- */

static int
x32_check(const char *datarep, MPI_Datatype dt, int count, const char *fn)
{
	int rc;

	if (datarep == NULL || strcmp(datarep, "external32") != 0) {
		mpiv_err_detail("data representation \"%s\": mpiv has "
		    "\"external32\" only", datarep ? datarep : "(null)");
		return mpiv_err(NULL, MPI_ERR_ARG, fn);
	}
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, fn);
	if (count < 0)
		return mpiv_err(NULL, MPI_ERR_COUNT, fn);
	if (x32_packed_size(dt, count) < 0) {
		mpiv_err_detail("the datatype holds a basic type without an "
		    "external32 form in mpiv");
		return mpiv_err(NULL, MPI_ERR_TYPE, fn);
	}
	return MPI_SUCCESS;
}

int
MPI_Pack_external_size(const char datarep[], int incount,
    MPI_Datatype datatype, MPI_Aint *size)
{
	int rc;

	if ((rc = x32_check(datarep, datatype, incount,
	    "MPI_Pack_external_size")) != MPI_SUCCESS)
		return rc;
	if (size == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Pack_external_size");
	*size = (MPI_Aint)x32_packed_size(datatype, incount);
	return MPI_SUCCESS;
}

int
MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
    MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
    MPI_Aint *position)
{
	size_t nat_bytes;
	long long need;
	unsigned char *tmp;
	int rc;

	if ((rc = x32_check(datarep, datatype, incount,
	    "MPI_Pack_external")) != MPI_SUCCESS)
		return rc;
	if (position == NULL || *position < 0 || outsize < 0)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Pack_external");
	need = x32_packed_size(datatype, incount);
	if (*position > outsize || need > outsize - *position) {
		mpiv_err_detail("%lld bytes to pack at position %ld of a "
		    "buffer of %ld", need, (long)*position, (long)outsize);
		return mpiv_err(NULL, MPI_ERR_TRUNCATE, "MPI_Pack_external");
	}
	nat_bytes = mpiv_dt_packed_size(datatype, incount);
	if ((tmp = malloc(nat_bytes > 0 ? nat_bytes : 1)) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Pack_external");
	mpiv_dt_pack(inbuf, incount, datatype, tmp);
	rc = x32_convert(datatype, incount, tmp,
	    (unsigned char *)outbuf + *position, true);
	free(tmp);
	if (rc != 0) {
		mpiv_err_detail("a value does not fit its external32 size");
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Pack_external");
	}
	*position += (MPI_Aint)need;
	return MPI_SUCCESS;
}

int
MPI_Unpack_external(const char datarep[], const void *inbuf,
    MPI_Aint insize, MPI_Aint *position, void *outbuf, int outcount,
    MPI_Datatype datatype)
{
	size_t nat_bytes;
	long long need;
	unsigned char *tmp;
	int rc;

	if ((rc = x32_check(datarep, datatype, outcount,
	    "MPI_Unpack_external")) != MPI_SUCCESS)
		return rc;
	if (position == NULL || *position < 0 || insize < 0 ||
	    *position > insize)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Unpack_external");
	need = x32_packed_size(datatype, outcount);
	if (need > insize - *position) {
		mpiv_err_detail("%lld bytes to unpack at position %ld of a "
		    "buffer of %ld", need, (long)*position, (long)insize);
		return mpiv_err(NULL, MPI_ERR_TRUNCATE, "MPI_Unpack_external");
	}
	nat_bytes = mpiv_dt_packed_size(datatype, outcount);
	if ((tmp = malloc(nat_bytes > 0 ? nat_bytes : 1)) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Unpack_external");
	rc = x32_convert(datatype, outcount, tmp,
	    (unsigned char *)inbuf + *position, false);
	if (rc == 0)
		mpiv_dt_unpack(tmp, nat_bytes, outbuf, outcount, datatype);
	free(tmp);
	if (rc != 0) {
		mpiv_err_detail("an external32 value does not fit the "
		    "native type");
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Unpack_external");
	}
	*position += (MPI_Aint)need;
	return MPI_SUCCESS;
}
