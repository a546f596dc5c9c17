! tests/fortran/f_kinds.F90: datatypes of Fortran's parameterized kinds,
! through the `mpi` module (f_kinds) and include 'mpif.h' (f_kinds_mpif):
! MPI_TYPE_CREATE_F90_REAL/COMPLEX/INTEGER for kinds chosen by
! SELECTED_REAL_KIND and SELECTED_INT_KIND (the way programs name their
! kinds), used in a ring and a reduction; MPI_TYPE_MATCH_SIZE from the
! sizes of those variables, and from MPI_SIZEOF (the `mpi` module only);
! envelope and contents of an F90 type; the refusal of a size no type has. Rank 0
! prints a line per family.
program f_kinds
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer, parameter :: dp = selected_real_kind(15, 307)
  integer, parameter :: sp = selected_real_kind(6)
  integer, parameter :: i8 = selected_int_kind(18)
  integer :: ierr, rank, np, next, prev, i, s, tdp, tsp, tcx, ti8, t2, tm
  integer :: ni, na, nd, comb, cints(2), ctypes(1)
  integer(kind=MPI_ADDRESS_KIND) :: caddr(1)
  real(dp) :: x(4), y(4)
  real(sp) :: f(3), g(3)
  complex(dp) :: z(2), w(2)
  integer(i8) :: k(2), m(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  call MPI_TYPE_CREATE_F90_REAL(15, 307, tdp, ierr)
  call chk(ierr == MPI_SUCCESS, 'f90_real(15, 307)')
  call MPI_TYPE_CREATE_F90_REAL(15, 307, t2, ierr)
  call chk(t2 == tdp, 'the same handle for the same arguments')
  call MPI_TYPE_CREATE_F90_REAL(6, MPI_UNDEFINED, tsp, ierr)
  call MPI_TYPE_CREATE_F90_COMPLEX(15, MPI_UNDEFINED, tcx, ierr)
  call MPI_TYPE_CREATE_F90_INTEGER(18, ti8, ierr)
  call MPI_TYPE_SIZE(tdp, s, ierr)
  call chk(s == storage_size(x(1)) / 8, 'size of real(dp)')
  call MPI_TYPE_SIZE(tsp, s, ierr)
  call chk(s == storage_size(f(1)) / 8, 'size of real(sp)')
  call MPI_TYPE_SIZE(tcx, s, ierr)
  call chk(s == storage_size(z(1)) / 8, 'size of complex(dp)')
  call MPI_TYPE_SIZE(ti8, s, ierr)
  call chk(s == storage_size(k(1)) / 8, 'size of integer(i8)')
  call MPI_TYPE_GET_ENVELOPE(tdp, ni, na, nd, comb, ierr)
  call chk(comb == MPI_COMBINER_F90_REAL .and. ni == 2 .and. na == 0 .and. nd == 0, &
      'envelope of f90_real')
  call MPI_TYPE_GET_CONTENTS(tdp, 2, 0, 0, cints, caddr, ctypes, ierr)
  call chk(ierr == MPI_SUCCESS .and. cints(1) == 15 .and. cints(2) == 307, 'contents of f90_real')
  if (rank == 0) write (*, '(a)') 'create_f90: ok'

  do i = 1, 4
    x(i) = rank * 100 + i * 0.25_dp
  end do
  f = [(real(rank * 3 + i, sp), i = 1, 3)]
  z = [(cmplx(rank, i, kind=dp), i = 1, 2)]
  k = [(int(rank, i8) * 2_i8**40 + i, i = 1, 2)]
  call MPI_SENDRECV(x, 4, tdp, next, 1, y, 4, tdp, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_SENDRECV(f, 3, tsp, next, 2, g, 3, tsp, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_SENDRECV(z, 2, tcx, next, 3, w, 2, tcx, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_SENDRECV(k, 2, ti8, next, 4, m, 2, ti8, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do i = 1, 4
    call chk(y(i) == prev * 100 + i * 0.25_dp, 'ring of real(dp)')
  end do
  do i = 1, 3
    call chk(g(i) == real(prev * 3 + i, sp), 'ring of real(sp)')
  end do
  do i = 1, 2
    call chk(w(i) == cmplx(prev, i, kind=dp), 'ring of complex(dp)')
    call chk(m(i) == int(prev, i8) * 2_i8**40 + i, 'ring of integer(i8)')
  end do
  call MPI_ALLREDUCE(x, y, 4, tdp, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_ALLREDUCE(k, m, 2, ti8, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call chk(y(i) == 100 * (np * (np - 1) / 2) + np * i * 0.25_dp, 'sum of real(dp)')
  end do
  do i = 1, 2
    call chk(m(i) == int(np * (np - 1) / 2, i8) * 2_i8**40 + np * i, 'sum of integer(i8)')
  end do
  if (rank == 0) write (*, '(a)') 'f90 types in use: ok'

#ifndef MPIV_MPIF
  ! the idiom: the size of a variable, then the type of that size
  call MPI_SIZEOF(x, s, ierr)
  call chk(ierr == MPI_SUCCESS .and. s == 8, 'sizeof real(dp) array')
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, s, tm, ierr)
  call MPI_SENDRECV(x, 4, tm, next, 5, y, 4, tm, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call chk(y(4) == prev * 100 + 1.0_dp, 'ring of match_size(sizeof)')
  call MPI_SIZEOF(k(1), s, ierr)
  call chk(s == 8, 'sizeof integer(i8)')
  call MPI_SIZEOF(f(2), s, ierr)
  call chk(s == 4, 'sizeof real(sp)')
  call MPI_SIZEOF(z, s, ierr)
  call chk(s == 16, 'sizeof complex(dp)')
#endif
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, storage_size(x(1)) / 8, tm, ierr)
  call MPI_TYPE_SIZE(tm, s, ierr)
  call chk(ierr == MPI_SUCCESS .and. s == 8, 'match_size(real, 8)')
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_INTEGER, storage_size(k(1)) / 8, tm, ierr)
  call MPI_TYPE_SIZE(tm, s, ierr)
  call chk(s == 8, 'match_size(integer, 8)')
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_COMPLEX, storage_size(z(1)) / 8, tm, ierr)
  call MPI_TYPE_SIZE(tm, s, ierr)
  call chk(s == 16, 'match_size(complex, 16)')
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, 3, tm, ierr)
  call chk(ierr /= MPI_SUCCESS, 'match_size(real, 3) refused')
  if (rank == 0) write (*, '(a)') 'match_size: ok'

  call MPI_FINALIZE(ierr)

contains

#include "chk.inc"

end program f_kinds
