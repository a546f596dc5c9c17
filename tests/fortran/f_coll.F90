! tests/fortran/f_coll.F90: collectives and reductions through the `mpi`
! module (f_coll) and through include 'mpif.h' (f_coll_mpif, -DMPIV_MPIF): Bcast, Reduce/Allreduce on every Fortran type (INTEGER*1..8,
! REAL*4/8, DOUBLE PRECISION, COMPLEX*8/16, LOGICAL with LAND/LOR/LXOR),
! MAXLOC/MINLOC on 2INTEGER/2REAL/2DOUBLE_PRECISION, a user op written in
! Fortran (MPI_OP_CREATE), MPI_IN_PLACE, Gather(v), Scatter(v),
! Allgather(v), Alltoall(v), Scan/Exscan, Reduce_scatter(_block).
! Every result is checked against its closed form; rank 0 prints.
program f_coll
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer :: ierr, rank, np, i, j, root, myop, tot
  integer :: ib(8), jb(8), ia(64), ja(64), counts(16), displs(16)
  integer(kind=1) :: i1(2), j1(2)
  integer(kind=2) :: i2(2), j2(2)
  integer(kind=8) :: i8(2), j8(2)
  real :: r4(3), s4(3)
  double precision :: d(3), e(3)
  complex :: c8(2), d8(2)
  complex(kind=8) :: c16(2), d16(2)
  logical :: l(3), m(3)
  integer :: p2(2, 2), q2(2, 2)
  real :: pr(2), qr(2)
  double precision :: pd(2), qd(2)
  external :: my_absmax

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)

  ! ---- bcast from every root
  do root = 0, np - 1
    ib = -1
    if (rank == root) ib = (/ (root * 10 + i, i = 1, 8) /)
    call MPI_BCAST(ib, 8, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    do i = 1, 8
      call chk(ib(i) == root * 10 + i, 'bcast')
    end do
  end do
  if (rank == 0) print '(a)', 'bcast: ok'

  ! ---- reductions on every type: sum of (rank + 1) = np (np + 1) / 2
  tot = np * (np + 1) / 2
  i1 = int(rank + 1, 1)
  call MPI_ALLREDUCE(i1, j1, 2, MPI_INTEGER1, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(j1 == tot), 'integer1 sum')
  i2 = int(rank + 1, 2)
  call MPI_ALLREDUCE(i2, j2, 2, MPI_INTEGER2, MPI_MAX, MPI_COMM_WORLD, ierr)
  call chk(all(j2 == np), 'integer2 max')
  i8 = int(rank + 1, 8) * 10000000000_8
  call MPI_ALLREDUCE(i8, j8, 2, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(j8 == tot * 10000000000_8), 'integer8 sum')
  ib = rank + 1
  call MPI_ALLREDUCE(ib, jb, 8, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call chk(all(jb == 1), 'integer min')
  call MPI_ALLREDUCE(ib, jb, 1, MPI_INTEGER4, MPI_PROD, MPI_COMM_WORLD, ierr)
  call chk(jb(1) == product((/ (i, i = 1, np) /)), 'integer4 prod')
  r4 = real(rank + 1) * 0.5
  call MPI_ALLREDUCE(r4, s4, 3, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(s4 == real(tot) * 0.5), 'real sum')
  call MPI_ALLREDUCE(r4, s4, 3, MPI_REAL4, MPI_MAX, MPI_COMM_WORLD, ierr)
  call chk(all(s4 == real(np) * 0.5), 'real4 max')
  d = dble(rank + 1) * 0.25d0
  call MPI_ALLREDUCE(d, e, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(e == dble(tot) * 0.25d0), 'double sum')
  call MPI_ALLREDUCE(d, e, 3, MPI_REAL8, MPI_MIN, MPI_COMM_WORLD, ierr)
  call chk(all(e == 0.25d0), 'real8 min')
  c8 = cmplx(rank + 1, -(rank + 1))
  call MPI_ALLREDUCE(c8, d8, 2, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(d8 == cmplx(tot, -tot)), 'complex sum')
  call MPI_ALLREDUCE(c8, d8, 2, MPI_COMPLEX8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(d8 == cmplx(tot, -tot)), 'complex8 sum')
  c16 = (0.0d0, 1.0d0)
  call MPI_ALLREDUCE(c16, d16, 2, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, ierr)
  call chk(all(d16 == (0.0d0, 1.0d0) ** np), 'double complex prod')
  c16 = cmplx(rank, 1, kind=8)
  call MPI_ALLREDUCE(c16, d16, 2, MPI_COMPLEX16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(d16 == cmplx(tot - np, np, kind=8)), 'complex16 sum')
  l = (/ .true., rank == 0, rank == np - 1 /)
  call MPI_ALLREDUCE(l, m, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call chk(m(1) .and. (m(2) .eqv. (np == 1)), 'logical land')
  call MPI_ALLREDUCE(l, m, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call chk(all(m), 'logical lor')
  call MPI_ALLREDUCE(l, m, 3, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD, ierr)
  call chk((m(1) .eqv. (mod(np, 2) == 1)) .and. m(2) .and. m(3), 'logical lxor')
  ! an op not defined on the type is an error (returned, not fatal)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_ALLREDUCE(l, m, 3, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(ierr /= MPI_SUCCESS, 'logical sum refused')
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  if (rank == 0) print '(a)', 'reductions: ok'

  ! ---- maxloc / minloc: value peaks at rank np/2 (ties: lowest index)
  p2(1, 1) = -abs(rank - np / 2); p2(2, 1) = rank
  p2(1, 2) = 5;                   p2(2, 2) = rank
  call MPI_ALLREDUCE(p2, q2, 2, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call chk(q2(1, 1) == 0 .and. q2(2, 1) == np / 2, '2integer maxloc')
  call chk(q2(1, 2) == 5 .and. q2(2, 2) == 0, '2integer maxloc tie')
  pr = (/ real(abs(rank - np / 2)), real(rank) /)
  call MPI_ALLREDUCE(pr, qr, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call chk(qr(1) == 0.0 .and. qr(2) == real(np / 2), '2real minloc')
  pd = (/ dble(rank) * 1.5d0, dble(rank) /)
  call MPI_REDUCE(pd, qd, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call chk(qd(1) == dble(np - 1) * 1.5d0 .and. qd(2) == dble(np - 1), &
      '2double maxloc')
  if (rank == 0) print '(a)', 'maxloc: ok'

  ! ---- user op in Fortran: elementwise max of absolute values
  call MPI_OP_CREATE(my_absmax, .true., myop, ierr)
  ib = (/ (merge(-1, 1, mod(rank, 2) == 1) * (rank + i), i = 1, 8) /)
  call MPI_ALLREDUCE(ib, jb, 8, MPI_INTEGER, myop, MPI_COMM_WORLD, ierr)
  do i = 1, 8
    call chk(jb(i) == np - 1 + i, 'user op')
  end do
  call MPI_OP_FREE(myop, ierr)
  call chk(myop == MPI_OP_NULL, 'op_free')
  if (rank == 0) print '(a)', 'user op: ok'

  ! ---- in place
  ib = rank + 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, ib, 8, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(all(ib == tot), 'allreduce in place')
  ib = rank + 1
  if (rank == 0) then
    call MPI_REDUCE(MPI_IN_PLACE, ib, 8, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call chk(all(ib == tot), 'reduce in place')
  else
    call MPI_REDUCE(ib, jb, 8, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  ia = -1
  ia(rank + 1) = rank * 3
  call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ia, 1, MPI_INTEGER, &
      MPI_COMM_WORLD, ierr)
  do i = 1, np
    call chk(ia(i) == (i - 1) * 3, 'allgather in place')
  end do
  if (rank == 0) print '(a)', 'in place: ok'

  ! ---- gather / scatter and their v forms (rank r has r + 1 items)
  ib = rank
  call MPI_GATHER(ib, 2, MPI_INTEGER, ia, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, 2 * np
      call chk(ia(i) == (i - 1) / 2, 'gather')
    end do
  end if
  do i = 1, np
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  ib = rank
  ia = -1
  call MPI_GATHERV(ib, rank + 1, MPI_INTEGER, ia, counts, displs, MPI_INTEGER, &
      np - 1, MPI_COMM_WORLD, ierr)
  if (rank == np - 1) then
    do i = 1, np
      do j = 1, i
        call chk(ia(displs(i) + j) == i - 1, 'gatherv')
      end do
    end do
  end if
  do i = 1, 2 * np
    ia(i) = i
  end do
  call MPI_SCATTER(ia, 2, MPI_INTEGER, jb, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call chk(jb(1) == 2 * rank + 1 .and. jb(2) == 2 * rank + 2, 'scatter')
  do i = 1, 64
    ia(i) = 100 + i
  end do
  jb = -1
  call MPI_SCATTERV(ia, counts, displs, MPI_INTEGER, jb, rank + 1, MPI_INTEGER, &
      0, MPI_COMM_WORLD, ierr)
  do j = 1, rank + 1
    call chk(jb(j) == 100 + displs(rank + 1) + j, 'scatterv')
  end do
  ib = rank
  call MPI_ALLGATHERV(ib, rank + 1, MPI_INTEGER, ia, counts, displs, MPI_INTEGER, &
      MPI_COMM_WORLD, ierr)
  do i = 1, np
    call chk(ia(displs(i) + i) == i - 1, 'allgatherv')
  end do
  if (rank == 0) print '(a)', 'gather/scatter: ok'

  ! ---- alltoall(v): element j of rank r is 100 r + j
  do j = 1, np
    ia(j) = 100 * rank + j - 1
  end do
  call MPI_ALLTOALL(ia, 1, MPI_INTEGER, ja, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 1, np
    call chk(ja(j) == 100 * (j - 1) + rank, 'alltoall')
  end do
  ! rank r sends 1 item to everyone; receives into a gap-spaced layout
  do j = 1, np
    counts(j) = 1
    displs(j) = j - 1
  end do
  call MPI_ALLTOALLV(ia, counts, displs, MPI_INTEGER, ja, counts, &
      (/ (2 * (j - 1), j = 1, np) /), MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 1, np
    call chk(ja(2 * j - 1) == 100 * (j - 1) + rank, 'alltoallv')
  end do
  if (rank == 0) print '(a)', 'alltoall: ok'

  ! ---- scan / exscan / reduce_scatter
  call MPI_SCAN(rank + 1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(i == (rank + 1) * (rank + 2) / 2, 'scan')
  j = -7
  call MPI_EXSCAN(rank + 1, j, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call chk(j == rank * (rank + 1) / 2, 'exscan')
  do j = 1, 2 * np
    ia(j) = j
  end do
  counts(1:np) = 2
  call MPI_REDUCE_SCATTER(ia, jb, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(jb(1) == np * (2 * rank + 1) .and. jb(2) == np * (2 * rank + 2), &
      'reduce_scatter')
  call MPI_REDUCE_SCATTER_BLOCK(ia, jb, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(jb(1) == np * (2 * rank + 1), 'reduce_scatter_block')
  if (rank == 0) print '(a)', 'scan: ok'

  call MPI_FINALIZE(ierr)

contains

#include "chk.inc"

end program f_coll

subroutine my_absmax(invec, inoutvec, len, datatype)
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  if (datatype /= MPI_INTEGER) then
    write (0, '(a)') 'FAIL: user op got a datatype other than MPI_INTEGER'
    call MPI_ABORT(MPI_COMM_WORLD, 4, i)
  end if
  do i = 1, len
    inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
  end do
end subroutine my_absmax
