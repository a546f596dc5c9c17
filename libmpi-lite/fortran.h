/*
 * fortran.h: what the Fortran bindings share: the handle tables
 * (fhandle.c), the predefined handles' fixed Fortran values (which
 * libmpi-lite/fortran/fconst.c writes into mpif.h), the special
 * addresses of mpif.h's COMMON blocks, and the helpers the generated
 * wrappers (build/gen/fortran_wrap.c, from libmpi-lite/fortran/
 * functions.tbl) and the hand-written ones (fbind.c) call.
 */
#ifndef MPIV_FORTRAN_H
#define MPIV_FORTRAN_H

#include <stdbool.h>
#include <stddef.h>

#include "mpi.h"

/* Handle kinds: one table each. */
enum mpiv_fkind {
	MPIV_F_COMM, MPIV_F_GROUP, MPIV_F_TYPE, MPIV_F_OP, MPIV_F_REQUEST,
	MPIV_F_ERRH, MPIV_F_INFO, MPIV_F_WIN, MPIV_F_MESSAGE, MPIV_F_FILE,
	MPIV_F_NKINDS
};

/*
 * The predefined handles: X(kind, C name, Fortran value). Every kind's
 * null handle is 0, so a Fortran handle never set is the null one. The
 * values are part of the Fortran ABI (compiled into programs through
 * mpif.h and mpi.mod): only append.
 */
#define MPIV_F_PREDEFINED(X)						\
	X(COMM, MPI_COMM_NULL, 0) X(COMM, MPI_COMM_WORLD, 1)		\
	X(COMM, MPI_COMM_SELF, 2)					\
	X(GROUP, MPI_GROUP_NULL, 0) X(GROUP, MPI_GROUP_EMPTY, 1)	\
	X(ERRH, MPI_ERRHANDLER_NULL, 0) X(ERRH, MPI_ERRORS_ARE_FATAL, 1) \
	X(ERRH, MPI_ERRORS_RETURN, 2)					\
	X(INFO, MPI_INFO_NULL, 0) X(INFO, MPI_INFO_ENV, 1)		\
	X(REQUEST, MPI_REQUEST_NULL, 0)					\
	X(WIN, MPI_WIN_NULL, 0)						\
	X(MESSAGE, MPI_MESSAGE_NULL, 0)					\
	X(FILE, MPI_FILE_NULL, 0)					\
	X(OP, MPI_OP_NULL, 0) X(OP, MPI_MAX, 1) X(OP, MPI_MIN, 2)	\
	X(OP, MPI_SUM, 3) X(OP, MPI_PROD, 4) X(OP, MPI_LAND, 5)	\
	X(OP, MPI_BAND, 6) X(OP, MPI_LOR, 7) X(OP, MPI_BOR, 8)		\
	X(OP, MPI_LXOR, 9) X(OP, MPI_BXOR, 10) X(OP, MPI_MAXLOC, 11)	\
	X(OP, MPI_MINLOC, 12) X(OP, MPI_REPLACE, 13) X(OP, MPI_NO_OP, 14) \
	X(TYPE, MPI_DATATYPE_NULL, 0)					\
	X(TYPE, MPI_INTEGER, 1) X(TYPE, MPI_REAL, 2)			\
	X(TYPE, MPI_DOUBLE_PRECISION, 3) X(TYPE, MPI_COMPLEX, 4)	\
	X(TYPE, MPI_DOUBLE_COMPLEX, 5) X(TYPE, MPI_LOGICAL, 6)		\
	X(TYPE, MPI_CHARACTER, 7) X(TYPE, MPI_BYTE, 8)			\
	X(TYPE, MPI_PACKED, 9) X(TYPE, MPI_2INTEGER, 10)		\
	X(TYPE, MPI_2REAL, 11) X(TYPE, MPI_2DOUBLE_PRECISION, 12)	\
	X(TYPE, MPI_INTEGER1, 13) X(TYPE, MPI_INTEGER2, 14)		\
	X(TYPE, MPI_INTEGER4, 15) X(TYPE, MPI_INTEGER8, 16)		\
	X(TYPE, MPI_REAL4, 17) X(TYPE, MPI_REAL8, 18)			\
	X(TYPE, MPI_COMPLEX8, 19) X(TYPE, MPI_COMPLEX16, 20)		\
	X(TYPE, MPI_CHAR, 21) X(TYPE, MPI_SIGNED_CHAR, 22)		\
	X(TYPE, MPI_UNSIGNED_CHAR, 23) X(TYPE, MPI_SHORT, 24)		\
	X(TYPE, MPI_UNSIGNED_SHORT, 25) X(TYPE, MPI_INT, 26)		\
	X(TYPE, MPI_UNSIGNED, 27) X(TYPE, MPI_LONG, 28)			\
	X(TYPE, MPI_UNSIGNED_LONG, 29) X(TYPE, MPI_LONG_LONG_INT, 30)	\
	X(TYPE, MPI_UNSIGNED_LONG_LONG, 31) X(TYPE, MPI_FLOAT, 32)	\
	X(TYPE, MPI_DOUBLE, 33) X(TYPE, MPI_LONG_DOUBLE, 34)		\
	X(TYPE, MPI_WCHAR, 35) X(TYPE, MPI_C_BOOL, 36)			\
	X(TYPE, MPI_INT8_T, 37) X(TYPE, MPI_INT16_T, 38)		\
	X(TYPE, MPI_INT32_T, 39) X(TYPE, MPI_INT64_T, 40)		\
	X(TYPE, MPI_UINT8_T, 41) X(TYPE, MPI_UINT16_T, 42)		\
	X(TYPE, MPI_UINT32_T, 43) X(TYPE, MPI_UINT64_T, 44)		\
	X(TYPE, MPI_C_FLOAT_COMPLEX, 45) X(TYPE, MPI_C_DOUBLE_COMPLEX, 46) \
	X(TYPE, MPI_C_LONG_DOUBLE_COMPLEX, 47) X(TYPE, MPI_AINT, 48)	\
	X(TYPE, MPI_OFFSET, 49) X(TYPE, MPI_COUNT, 50)			\
	X(TYPE, MPI_FLOAT_INT, 51) X(TYPE, MPI_DOUBLE_INT, 52)		\
	X(TYPE, MPI_LONG_INT, 53) X(TYPE, MPI_2INT, 54)			\
	X(TYPE, MPI_SHORT_INT, 55) X(TYPE, MPI_LONG_DOUBLE_INT, 56)	\
	X(MESSAGE, MPI_MESSAGE_NO_PROC, 1)

/* Aliases that are the same C object as a handle above (mpif.h gives
   them that handle's value). */
#define MPIV_F_ALIASES(X)						\
	X(MPI_LONG_LONG, MPI_LONG_LONG_INT)				\
	X(MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX)

/* Fortran handle of a C handle: its slot, a new one if it has none;
   0 for the null handle, -1 when the table cannot grow. */
MPI_Fint mpiv_f_c2f(enum mpiv_fkind kind, void *c);
/* The C handle of a Fortran one into *c: 0, or -1 when f names no live
   slot (*c is then the null handle). */
int mpiv_f_f2c(enum mpiv_fkind kind, MPI_Fint f, void **c);
/* The same for a handle an MPI call gives the program (a handle out):
   the slot counts it, so that an object handed out twice (two
   MPI_COMM_GROUP of one communicator) is freed twice before its slot
   goes. */
MPI_Fint mpiv_f_out(enum mpiv_fkind kind, void *c);
/* One handle of f's slot freed (MPI_COMM_FREE, a completed request ...):
   the slot goes with the last; predefined slots stay. */
void mpiv_f_release(enum mpiv_fkind kind, MPI_Fint f);
/* After a call that may have replaced or freed the C handle behind the
   Fortran handle *f (old: the C handle before the call, now: after):
   updates *f and the table. */
void mpiv_f_update(enum mpiv_fkind kind, MPI_Fint *f, void *old, void *now);
/* MPI error class for a bad handle of kind (MPI_ERR_COMM ...). */
int mpiv_f_kind_err(enum mpiv_fkind kind);

/* The special addresses of mpif.h (COMMON blocks /MPI_FORTRAN_BOTTOM/ ...):
   gfortran names a COMMON block's symbol in lower case plus "_". */
extern MPI_Fint mpi_fortran_bottom_;
extern MPI_Fint mpi_fortran_in_place_;
extern MPI_Fint mpi_fortran_status_ignore_[];
extern MPI_Fint mpi_fortran_statuses_ignore_[];
extern MPI_Fint mpi_fortran_errcodes_ignore_[];
extern char mpi_fortran_argv_null_[];
extern MPI_Fint mpi_fortran_unweighted_[];
extern MPI_Fint mpi_fortran_weights_empty_[];
extern char mpi_fortran_argvs_null_[];

/* A choice buffer from Fortran: MPI_BOTTOM and MPI_IN_PLACE become C's. */
static inline void *
mpiv_f_buf(void *p)
{
	if (p == (void *)&mpi_fortran_bottom_)
		return MPI_BOTTOM;
	if (p == (void *)&mpi_fortran_in_place_)
		return MPI_IN_PLACE;
	return p;
}

/* A weights array from Fortran: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY
   become C's. */
static inline int *
mpiv_f_weights(MPI_Fint *w)
{
	if (w == mpi_fortran_unweighted_)
		return MPI_UNWEIGHTED;
	if (w == mpi_fortran_weights_empty_)
		return MPI_WEIGHTS_EMPTY;
	return w;
}

static inline int
mpiv_f_status_ignored(const MPI_Fint *f)
{
	return f == mpi_fortran_status_ignore_ ||
	    f == mpi_fortran_statuses_ignore_;
}

/* A Fortran string in (blank padded, len bytes): a NUL-terminated copy
   without the trailing blanks, or NULL when out of memory (free it). */
char *mpiv_f_str_in(const char *s, size_t len, bool lead);
/* A C string out into a Fortran one: copied, blank padded to len. */
void mpiv_f_str_out(const char *c, char *f, size_t len);

/* ---- helpers of the wrappers (fbind.c) ----
   Each returns MPI_SUCCESS or the code mpiv_err() gave for fn. */
/* The C handle of Fortran handle f into *c; a bad handle is an error. */
int mpiv_fw_in(enum mpiv_fkind kind, MPI_Fint f, void **c, const char *fn);
/* n handles of f into a new array *c (2n entries when keep_old: the
   second half keeps the first's values for mpiv_fw_updatea). */
int mpiv_fw_ina(enum mpiv_fkind kind, const MPI_Fint *f, MPI_Fint n,
    void ***c, bool keep_old, const char *fn);
/* After the call: each f[i] whose C handle changed is updated. */
void mpiv_fw_updatea(enum mpiv_fkind kind, MPI_Fint *f, MPI_Fint n,
    void **c);
/* n C statuses for the Fortran array f, or NULL for MPI_STATUSES_IGNORE. */
int mpiv_fw_statuses(const MPI_Fint *f, MPI_Fint n, MPI_Status **c,
    const char *fn);
/* n default INTEGERs widened to MPI_Aint (MPI-1 type constructors). */
int mpiv_fw_aints(const MPI_Fint *f, MPI_Fint n, MPI_Aint **c,
    const char *fn);

#endif
