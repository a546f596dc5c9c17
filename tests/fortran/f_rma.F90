! tests/fortran/f_rma.F90: the Fortran bindings of passive-target
! one-sided communication, through the `mpi` module (f_rma) and
! include 'mpif.h' (f_rma_mpif): tickets from a counter at rank 0
! (MPI_FETCH_AND_OP under MPI_WIN_LOCK, the sorted tickets are
! 0 .. np*3-1), puts into every rank under MPI_WIN_LOCK_ALL with
! MPI_WIN_FLUSH_ALL and MPI_WIN_SYNC, MPI_RGET / MPI_RPUT /
! MPI_RACCUMULATE / MPI_RGET_ACCUMULATE with MPI_WIN_FLUSH_LOCAL, and a
! fence epoch after them; rank 0 prints a line per family.
program f_rma
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer, parameter :: nt = 3
  integer :: ierr, rank, np, win, i, j, right, t
  integer :: one, mine(nt), reqs(4), tmp
  integer, allocatable :: all(:)
  integer :: wbuf(0:63), got, fetched, seven, five
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call chk(np <= 60, 'at most 60 ranks')
  wbuf = 0
  wsize = 64 * 4
  call MPI_WIN_CREATE(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  ! tickets from a counter at rank 0, word 0
  one = 1
  disp = 0
  do i = 1, nt
    call MPI_WIN_LOCK(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call MPI_FETCH_AND_OP(one, mine(i), MPI_INTEGER, 0, disp, MPI_SUM, win, ierr)
    call MPI_WIN_UNLOCK(0, win, ierr)
  end do
  allocate(all(nt * np))
  call MPI_GATHER(mine, nt, MPI_INTEGER, all, nt, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 0, nt * np - 1
      call chk(count(all == i) == 1, 'each ticket once')
    end do
    print '(a)', 'passive tickets: ok'
  end if

  ! a put into every rank's slot rank+1 under lock_all
  call MPI_WIN_LOCK_ALL(0, win, ierr)
  do t = 0, np - 1
    tmp = 1000 * rank + t
    disp = rank + 1
    call MPI_PUT(tmp, 1, MPI_INTEGER, t, disp, 1, MPI_INTEGER, win, ierr)
  end do
  call MPI_WIN_FLUSH_ALL(win, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_WIN_SYNC(win, ierr)
  do j = 0, np - 1
    call chk(wbuf(j + 1) == 1000 * j + rank, 'slot after lock_all and flush_all')
  end do
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  ! request-based calls on the right neighbour's slot of this rank
  right = mod(rank + 1, np)
  disp = rank + 1
  seven = 7
  five = 5
  call MPI_RGET(got, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, reqs(1), ierr)
  call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
  call chk(got == 1000 * rank + right, 'rget')
  call MPI_RACCUMULATE(seven, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, MPI_REPLACE, win, reqs(1), ierr)
  call MPI_RACCUMULATE(five, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, MPI_SUM, win, reqs(2), ierr)
  call MPI_RGET_ACCUMULATE(five, 1, MPI_INTEGER, fetched, 1, MPI_INTEGER, right, disp, 1, &
    MPI_INTEGER, MPI_SUM, win, reqs(3), ierr)
  disp = 63
  call MPI_RPUT(seven, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, reqs(4), ierr)
  call MPI_WAITALL(4, reqs, MPI_STATUSES_IGNORE, ierr)
  call MPI_WIN_FLUSH_LOCAL(right, win, ierr)
  call MPI_WIN_FLUSH_LOCAL_ALL(win, ierr)
  call chk(fetched == 12, 'rget_accumulate after two raccumulates')
  call MPI_WIN_UNLOCK_ALL(win, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_WIN_SYNC(win, ierr)
  call chk(wbuf(mod(rank + np - 1, np) + 1) == 17, 'slot after the request-based calls')
  call chk(wbuf(63) == 7, 'rput')
  if (rank == 0) print '(a)', 'passive requests: ok'

  ! and a fence epoch after them
  call MPI_WIN_FENCE(0, win, ierr)
  disp = 0
  tmp = rank + 100
  call MPI_PUT(tmp, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_WIN_FENCE(0, win, ierr)
  call chk(wbuf(0) == mod(rank + np - 1, np) + 100, 'fence after passive epochs')
  if (rank == 0) print '(a)', 'fence after: ok'
  call MPI_WIN_FREE(win, ierr)
  deallocate(all)
  call MPI_FINALIZE(ierr)
contains
#include "chk.inc"
end program f_rma
