/* dt_f90: the datatypes of Fortran's parameterized kinds and of a class
 * and size: MPI_Type_create_f90_real/complex/integer give predefined
 * types of the right size, the same handle for the same arguments, an
 * envelope of MPI_COMBINER_F90_* with the arguments given, usable in
 * point-to-point and reductions; MPI_Type_match_size names MPI_REAL8 ...;
 * both refuse what no kind or size matches. */
#include "mpitest.h"

static void f90_is(MPI_Datatype t, int size, int combiner, int ni, int p, int r,
    const char *what)
{
	int s, a, b, c, comb, ints[2];
	MPI_Datatype none;
	MPI_OK(MPI_Type_size(t, &s));
	CHECK_INT(s, size, what);
	MPI_OK(MPI_Type_get_envelope(t, &a, &b, &c, &comb));
	CHECK_INT(comb, combiner, what);
	CHECK_INT(a, ni, what);
	CHECK_INT(b, 0, what);
	CHECK_INT(c, 0, what);
	MPI_OK(MPI_Type_get_contents(t, ni, 0, 0, ints, NULL, &none));
	if (ni == 2) {
		CHECK_INT(ints[0], p, what);
		CHECK_INT(ints[1], r, what);
	} else {
		CHECK_INT(ints[0], r, what);
	}
	t_mix_int(s);
	t_mix_int(a);
}

int main(int argc, char **argv)
{
	MPI_Datatype r4, r4b, r8, c16, i4, i8, i1, t;
	t_init(&argc, &argv, "dt_f90");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r4));
	MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r4b));
	CHECK(r4 == r4b, "f90_real(6): two handles for the same arguments");
	f90_is(r4, 4, MPI_COMBINER_F90_REAL, 2, 6, MPI_UNDEFINED, "f90_real(6)");
	MPI_OK(MPI_Type_create_f90_real(15, 307, &r8));
	f90_is(r8, 8, MPI_COMBINER_F90_REAL, 2, 15, 307, "f90_real(15, 307)");
	MPI_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 100, &t));
	f90_is(t, 8, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 100, "f90_real(r 100)");
	MPI_OK(MPI_Type_create_f90_complex(10, MPI_UNDEFINED, &c16));
	f90_is(c16, 16, MPI_COMBINER_F90_COMPLEX, 2, 10, MPI_UNDEFINED, "f90_complex(10)");
	MPI_OK(MPI_Type_create_f90_integer(9, &i4));
	f90_is(i4, 4, MPI_COMBINER_F90_INTEGER, 1, 0, 9, "f90_integer(9)");
	MPI_OK(MPI_Type_create_f90_integer(10, &i8));
	f90_is(i8, 8, MPI_COMBINER_F90_INTEGER, 1, 0, 10, "f90_integer(10)");
	MPI_OK(MPI_Type_create_f90_integer(2, &i1));
	f90_is(i1, 1, MPI_COMBINER_F90_INTEGER, 1, 0, 2, "f90_integer(2)");
	/* predefined: not freed */
	t = r8;
	CHECK(MPI_Type_free(&t) != MPI_SUCCESS, "MPI_Type_free took an f90 type");
	CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t) != MPI_SUCCESS,
	    "f90_real with neither p nor r");

	/* match_size: a named type of that size (MPI_REAL or MPI_REAL4 ...:
	   the library picks among those that match) */
	{
		static const int cls[] = { MPI_TYPECLASS_REAL, MPI_TYPECLASS_REAL,
		    MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_INTEGER,
		    MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_COMPLEX };
		static const int sz[] = { 4, 8, 2, 8, 4, 16 };
		for (int i = 0; i < 6; i++) {
			int s, a, b, c, comb;
			MPI_OK(MPI_Type_match_size(cls[i], sz[i], &t));
			MPI_OK(MPI_Type_size(t, &s));
			CHECK(s == sz[i], "match_size(class %d, %d) has size %d", cls[i], sz[i], s);
			MPI_OK(MPI_Type_get_envelope(t, &a, &b, &c, &comb));
			CHECK(comb == MPI_COMBINER_NAMED, "match_size(class %d, %d) is not named", cls[i], sz[i]);
			t_mix_int(s);
		}
	}
	CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t) != MPI_SUCCESS,
	    "match_size(REAL, 3) matched");
	CHECK(MPI_Type_match_size(99, 4, &t) != MPI_SUCCESS, "match_size(99, 4) matched");

	/* in use: a ring of doubles and of 8-byte integers, and a sum */
	double dv[5], dr[5];
	long long iv[3], ir[3];
	int next = (t_rank + 1) % t_size, prev = (t_rank + t_size - 1) % t_size;
	for (int i = 0; i < 5; i++)
		dv[i] = t_rank * 10.0 + i / 4.0;
	for (int i = 0; i < 3; i++)
		iv[i] = (long long)t_rank << (20 + i * 10);
	MPI_OK(MPI_Sendrecv(dv, 5, r8, next, 1, dr, 5, r8, prev, 1, MPI_COMM_WORLD,
	    MPI_STATUS_IGNORE));
	MPI_OK(MPI_Sendrecv(iv, 3, i8, next, 2, ir, 3, i8, prev, 2, MPI_COMM_WORLD,
	    MPI_STATUS_IGNORE));
	for (int i = 0; i < 5; i++)
		CHECK(dr[i] == prev * 10.0 + i / 4.0, "received double %d", i);
	for (int i = 0; i < 3; i++)
		CHECK(ir[i] == (long long)prev << (20 + i * 10), "received integer %d", i);
	MPI_OK(MPI_Allreduce(dv, dr, 5, r8, MPI_SUM, MPI_COMM_WORLD));
	MPI_OK(MPI_Allreduce(iv, ir, 3, i8, MPI_SUM, MPI_COMM_WORLD));
	t_mix(dr, sizeof(dr));
	t_mix(ir, sizeof(ir));
	return t_finish();
}
