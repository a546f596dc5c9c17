/* dt_external: MPI_Pack_external / MPI_Unpack_external /
 * MPI_Pack_external_size ("external32": big-endian, fixed sizes) for the
 * basic C types, checked byte for byte against hand-written encodings;
 * a struct of mixed members round trip; an external32 buffer sent to
 * another rank and unpacked there; errors for a foreign data
 * representation and a short buffer. */
#include "mpitest.h"
#include <float.h>

static unsigned char buf[4096];
static int mix = 1;

/* packs count of t from in, checks the bytes, unpacks into out */
static void enc(const void *in, void *out, int count, MPI_Datatype t, const unsigned char *want, int n, const char *what)
{
	MPI_Aint pos = 0, sz;
	MPI_OK(MPI_Pack_external_size("external32", count, t, &sz));
	CHECK(sz == n, "%s: external size %ld, want %d", what, (long)sz, n);
	memset(buf, 0xee, sizeof buf);
	MPI_OK(MPI_Pack_external("external32", in, count, t, buf, sizeof buf, &pos));
	CHECK(pos == n, "%s: position %ld, want %d", what, (long)pos, n);
	for (int i = 0; i < n; i++)
		CHECK(buf[i] == want[i], "%s: byte %d is %02x, want %02x", what, i, buf[i], want[i]);
	pos = 0;
	MPI_OK(MPI_Unpack_external("external32", buf, n, &pos, out, count, t));
	CHECK(pos == n, "%s: unpack position %ld, want %d", what, (long)pos, n);
	if (mix)
		t_mix(buf, (size_t)n);
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_external");
	{
		int v[2] = { 0x01020304, -2 }, r[2];
		const unsigned char w[] = { 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe };
		enc(v, r, 2, MPI_INT, w, 8, "int");
		CHECK(r[0] == v[0] && r[1] == v[1], "int round trip");
	}
	{
		short v = -3, r;
		const unsigned char w[] = { 0xff, 0xfd };
		enc(&v, &r, 1, MPI_SHORT, w, 2, "short");
		CHECK_INT(r, -3, "short round trip");
	}
	{
		unsigned short v = 0xabcd, r;
		const unsigned char w[] = { 0xab, 0xcd };
		enc(&v, &r, 1, MPI_UNSIGNED_SHORT, w, 2, "unsigned short");
		CHECK_INT(r, 0xabcd, "unsigned short round trip");
	}
	{
		long long v = 0x0102030405060708LL, r;
		const unsigned char w[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
		enc(&v, &r, 1, MPI_LONG_LONG, w, 8, "long long");
		CHECK(r == v, "long long round trip");
	}
	{
		double v = 1.0, r;
		const unsigned char w[] = { 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 };
		enc(&v, &r, 1, MPI_DOUBLE, w, 8, "double");
		CHECK(r == 1.0, "double round trip");
	}
	{
		float v = -2.5f, r;
		const unsigned char w[] = { 0xc0, 0x20, 0, 0 };
		enc(&v, &r, 1, MPI_FLOAT, w, 4, "float");
		CHECK(r == -2.5f, "float round trip");
	}
	{
		char v[3] = { 'a', 'b', 'c' }, r[3];
		const unsigned char w[] = { 'a', 'b', 'c' };
		enc(v, r, 3, MPI_CHAR, w, 3, "char");
		CHECK(memcmp(r, v, 3) == 0, "char round trip");
	}
	{
		int8_t v = -1, r;
		uint64_t u = 0x1122334455667788ULL, ru;
		const unsigned char w1[] = { 0xff };
		const unsigned char w2[] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
		enc(&v, &r, 1, MPI_INT8_T, w1, 1, "int8_t");
		CHECK_INT(r, -1, "int8_t round trip");
		enc(&u, &ru, 1, MPI_UINT64_T, w2, 8, "uint64_t");
		CHECK(ru == u, "uint64_t round trip");
	}
	{
		/* MPI_2INT: two 4-byte ints; MPI_DOUBLE_INT: 8 + 4 bytes */
		struct { double d; int i; } v = { 0.5, 7 }, r;
		const unsigned char w[] = { 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
		enc(&v, &r, 1, MPI_DOUBLE_INT, w, 12, "double_int");
		CHECK(r.d == 0.5 && r.i == 7, "double_int round trip");
	}
	/* a struct { int, double[2], short } round trip */
	{
		struct s { int i; double d[2]; short h; } v[2] = { { 1, { 2, 3 }, 4 }, { -5, { 6.25, -7 }, -8 } }, r[2];
		int bl[3] = { 1, 2, 1 };
		MPI_Aint d[3] = { offsetof(struct s, i), offsetof(struct s, d), offsetof(struct s, h) };
		MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_SHORT }, t;
		MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &t));
		MPI_OK(MPI_Type_commit(&t));
		const unsigned char w[44] = {
			0, 0, 0, 1, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x08, 0, 0, 0, 0, 0, 0, 0, 4,
			0xff, 0xff, 0xff, 0xfb, 0x40, 0x19, 0, 0, 0, 0, 0, 0, 0xc0, 0x1c, 0, 0, 0, 0, 0, 0, 0xff, 0xf8 };
		memset(r, 0, sizeof r);
		enc(v, r, 2, t, w, 44, "struct");
		CHECK(r[0].i == 1 && r[0].d[1] == 3 && r[0].h == 4 && r[1].i == -5 && r[1].d[0] == 6.25 && r[1].h == -8,
		    "struct round trip");

		/* to another rank: external32 bytes travel as MPI_BYTE */
		int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
		unsigned char out[64], in[64];
		MPI_Aint pos = 0;
		v[1].i = t_rank;
		MPI_OK(MPI_Pack_external("external32", v, 2, t, out, sizeof out, &pos));
		MPI_OK(MPI_Sendrecv(out, (int)pos, MPI_BYTE, right, 0, in, sizeof in, MPI_BYTE, left, 0,
		    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		pos = 0;
		MPI_OK(MPI_Unpack_external("external32", in, 44, &pos, r, 2, t));
		CHECK(r[1].i == left && r[1].d[1] == -7, "external32 from rank %d", left);
		t_mix(in, 44);
		MPI_OK(MPI_Type_free(&t));
	}
#ifdef MPIV_MPI_LITE
	/* Where Open MPI 4.1.4 (the reference run) departs from the standard:
	   it packs long in 8 bytes, long double as its x87 bytes, and takes
	   any data representation. Not in the checksum. */
	mix = 0;
	{
		long v[2] = { -7, 0x7fffffffL }, r[2];
		const unsigned char w[] = { 0xff, 0xff, 0xff, 0xf9, 0x7f, 0xff, 0xff, 0xff };
		enc(v, r, 2, MPI_LONG, w, 8, "long");
		CHECK(r[0] == -7 && r[1] == 0x7fffffffL, "long round trip");
	}
	{
		long double v[2] = { 1.5L, -0.1L }, r[2];
		/* 1.5: exponent 0x3fff, fraction .1; -0.1: sign, exponent
		   0x3ffb, fraction 0x999...9a (the x87 mantissa 0xcc...cd
		   without its integer bit, then zeros) */
		const unsigned char w[32] = { 0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0xbf, 0xfb, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a, 0, 0, 0, 0, 0, 0 };
		enc(v, r, 2, MPI_LONG_DOUBLE, w, sizeof(long double) == 16 && LDBL_MANT_DIG == 64 ? 32 : 0, "long double");
		CHECK(r[0] == 1.5L && r[1] == -0.1L, "long double round trip");
	}
	{
		long big = 1L << 40;
		int rc;
		MPI_Aint pos = 0;
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		rc = MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos);
		CHECK(rc != MPI_SUCCESS && pos == 0, "a long of 2^40 packed into 4 bytes");
		rc = MPI_Pack_external("native", &big, 1, MPI_INT, buf, sizeof buf, &pos);
		CHECK(rc != MPI_SUCCESS, "datarep \"native\" accepted");
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
	mix = 1;
#endif
	/* errors */
	{
		int v = 1, rc;
		MPI_Aint pos = 0;
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		rc = MPI_Pack_external("external32", &v, 1, MPI_INT, buf, 3, &pos);
		CHECK(rc != MPI_SUCCESS, "4 bytes packed into 3");
		MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
	return t_finish();
}
