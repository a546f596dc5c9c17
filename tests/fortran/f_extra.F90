! tests/fortran/f_extra.F90: Fortran bindings the MPICH test suite's
! Fortran programs call: MPI_SSEND_INIT, MPI_RSEND_INIT, MPI_BSEND_INIT;
! MPI_MESSAGE_NO_PROC from MPI_MPROBE of MPI_PROC_NULL; a status's
! MPI_ERROR left as it was by calls of one status; the window calls
! MPI_WIN_SET_NAME / GET_NAME, GET_GROUP, SET_ERRHANDLER /
! GET_ERRHANDLER / CALL_ERRHANDLER, MPI_WIN_TEST (with post/start/
! complete/wait), MPI_WIN_ALLOCATE_SHARED + MPI_WIN_SHARED_QUERY of the
! own segment; MPI_TYPE_CREATE_HINDEXED_BLOCK; MPI_CART_MAP and
! MPI_GRAPH_MAP; info strings' blanks, MPI_INFO_GET of an absent key;
! MPI_LASTUSEDCODE; attribute copy and delete callbacks written in
! Fortran (communicator, MPI-1 keyval, datatype, window). Through the `mpi` module (f_extra) and include
! 'mpif.h' (f_extra_mpif); rank 0 prints a line per family. -DOTHER_MPI
! leaves out what another MPI may do otherwise.
program f_extra
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer :: ierr, rank, np, right, left, i, k, msg, win, grp, wgrp, res
  integer :: reqs(6), v(3), got(3), st(MPI_STATUS_SIZE), eh, nl
  integer :: hb, sz, newrank, dims(1), idx(1), edges(1)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), wsize, base, qsize, qbase, lb, ext
  integer :: qunit
  integer :: bbuf(1024)
  logical :: flag, periods(1)
  character(len=MPI_MAX_OBJECT_NAME) :: wname
  character(len=MPI_MAX_INFO_VAL) :: ival
  integer :: info
  integer(kind=MPI_ADDRESS_KIND) :: aval
  integer :: c1, c2, t1, t2, ival1
  integer :: ncopy, ndel, lastdel, kv, kv1, badargs
  common /fxcb/ ncopy, ndel, lastdel, kv, kv1, badargs
  external :: fx_copy, fx_delete, fx_copy1, fx_delete1, fx_tcopy, fx_tdelete
  external :: fx_wdelete

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  right = mod(rank + 1, np)
  left = mod(rank + np - 1, np)

  ! persistent sends of the three modes, started twice
  call MPI_BUFFER_ATTACH(bbuf, 4096, ierr)
  call chk(ierr == MPI_SUCCESS, 'BUFFER_ATTACH')
  do k = 1, 3
    v(k) = 100 * rank + k
  end do
  do k = 1, 3
    call MPI_RECV_INIT(got(k), 1, MPI_INTEGER, left, 10 + k, MPI_COMM_WORLD, reqs(3 + k), ierr)
  end do
  call MPI_SSEND_INIT(v(1), 1, MPI_INTEGER, right, 11, MPI_COMM_WORLD, reqs(1), ierr)
  call chk(ierr == MPI_SUCCESS, 'SSEND_INIT')
  call MPI_BSEND_INIT(v(2), 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, reqs(2), ierr)
  call chk(ierr == MPI_SUCCESS, 'BSEND_INIT')
  call MPI_RSEND_INIT(v(3), 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, reqs(3), ierr)
  call chk(ierr == MPI_SUCCESS, 'RSEND_INIT')
  do i = 1, 2
    call MPI_STARTALL(3, reqs(4:6), ierr)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)   ! the ready send's receive is posted
    call MPI_STARTALL(3, reqs(1:3), ierr)
    call MPI_WAITALL(6, reqs, MPI_STATUSES_IGNORE, ierr)
    do k = 1, 3
      call chk(got(k) == 100 * left + k, 'persistent send of each mode')
    end do
  end do
  do k = 1, 6
    call MPI_REQUEST_FREE(reqs(k), ierr)
  end do
  call MPI_BUFFER_DETACH(bbuf, sz, ierr)
  if (rank == 0) print '(a)', 'persistent modes: ok'

  ! MPI_MESSAGE_NO_PROC; MPI_ERROR kept by calls of one status
  st(MPI_ERROR) = MPI_ERR_DIMS
  call MPI_MPROBE(MPI_PROC_NULL, 0, MPI_COMM_WORLD, msg, st, ierr)
  call chk(msg == MPI_MESSAGE_NO_PROC, 'MPROBE of PROC_NULL gives MPI_MESSAGE_NO_PROC')
  call chk(st(MPI_SOURCE) == MPI_PROC_NULL, 'MPROBE of PROC_NULL: source')
  call chk(st(MPI_ERROR) == MPI_ERR_DIMS, 'MPROBE left MPI_ERROR')
  call MPI_MRECV(got, 1, MPI_INTEGER, msg, st, ierr)
  call chk(msg == MPI_MESSAGE_NULL, 'MRECV of MPI_MESSAGE_NO_PROC')
  call chk(st(MPI_ERROR) == MPI_ERR_DIMS, 'MRECV left MPI_ERROR')
  call MPI_SENDRECV(v, 1, MPI_INTEGER, right, 20, got, 1, MPI_INTEGER, left, 20, &
       MPI_COMM_WORLD, st, ierr)
  call chk(st(MPI_SOURCE) == left, 'SENDRECV source')
#ifndef OTHER_MPI
  ! (Open MPI 4.1's Fortran binding copies the whole status back)
  call chk(st(MPI_ERROR) == MPI_ERR_DIMS, 'SENDRECV left MPI_ERROR')
#endif
  if (rank == 0) print '(a)', 'status and MPI_MESSAGE_NO_PROC: ok'

  ! windows: name, group, error handler, post/start/complete/test
  wsize = 4 * 4
  call MPI_WIN_ALLOCATE_SHARED(wsize, 4, MPI_INFO_NULL, MPI_COMM_SELF, base, win, ierr)
  call chk(ierr == MPI_SUCCESS, 'WIN_ALLOCATE_SHARED')
  call MPI_WIN_SHARED_QUERY(win, 0, qsize, qunit, qbase, ierr)
  call chk(qsize == wsize .and. qunit == 4 .and. qbase == base, 'WIN_SHARED_QUERY of the own segment')
  call MPI_WIN_FREE(win, ierr)
  call MPI_WIN_CREATE(v, 12_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_WIN_SET_NAME(win, 'fortran window', ierr)
  call MPI_WIN_GET_NAME(win, wname, nl, ierr)
  call chk(wname(1:nl) == 'fortran window' .and. nl == 14, 'WIN_GET_NAME')
  call MPI_WIN_GET_GROUP(win, grp, ierr)
  call MPI_COMM_GROUP(MPI_COMM_WORLD, wgrp, ierr)
  call MPI_GROUP_COMPARE(grp, wgrp, res, ierr)
  call chk(res == MPI_IDENT, 'WIN_GET_GROUP')
  call MPI_WIN_SET_ERRHANDLER(win, MPI_ERRORS_RETURN, ierr)
  call MPI_WIN_GET_ERRHANDLER(win, eh, ierr)
  call chk(eh == MPI_ERRORS_RETURN, 'WIN_GET_ERRHANDLER')
  call MPI_WIN_CALL_ERRHANDLER(win, MPI_ERR_OTHER, ierr)
  call chk(ierr == MPI_SUCCESS, 'WIN_CALL_ERRHANDLER: the handler returned')
  call MPI_ERRHANDLER_FREE(eh, ierr)
  ! every rank exposes to all and accesses all: post, start, test
  call MPI_WIN_POST(grp, 0, win, ierr)
  call MPI_WIN_START(grp, 0, win, ierr)
  call MPI_PUT(rank, 1, MPI_INTEGER, right, 2_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win, ierr)
  call MPI_WIN_COMPLETE(win, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_WIN_TEST(win, flag, ierr)
  end do
  call chk(v(3) == left, 'WIN_TEST: the epoch''s put is in')
  call MPI_WIN_FREE(win, ierr)
  call MPI_GROUP_FREE(grp, ierr)
  call MPI_GROUP_FREE(wgrp, ierr)
  if (rank == 0) print '(a)', 'window calls: ok'

  ! hindexed_block; cart_map, graph_map
  disps(1) = 0
  disps(2) = 16
  call MPI_TYPE_CREATE_HINDEXED_BLOCK(2, 2, disps, MPI_INTEGER, hb, ierr)
  call MPI_TYPE_SIZE(hb, sz, ierr)
  call MPI_TYPE_GET_EXTENT(hb, lb, ext, ierr)
  call chk(sz == 16 .and. lb == 0 .and. ext == 24, 'TYPE_CREATE_HINDEXED_BLOCK')
  call MPI_TYPE_FREE(hb, ierr)
  dims(1) = np
  periods(1) = .true.
  call MPI_CART_MAP(MPI_COMM_WORLD, 1, dims, periods, newrank, ierr)
  call chk(newrank == rank, 'CART_MAP')
  idx(1) = 0
  call MPI_GRAPH_MAP(MPI_COMM_WORLD, 1, idx, edges, newrank, ierr)
#ifndef OTHER_MPI
  ! (Open MPI 4.1 gives the ranks beyond the graph another number)
  call chk((rank == 0 .and. newrank == 0) .or. (rank > 0 .and. newrank == MPI_UNDEFINED), 'GRAPH_MAP')
#endif
  if (rank == 0) print '(a)', 'types and topology maps: ok'

  ! info keys and values lose leading and trailing blanks; MPI_INFO_GET
  ! of an absent key leaves the value alone; MPI_LASTUSEDCODE
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, '  spaced key ', ' a value  ', ierr)
  call MPI_INFO_GET(info, 'spaced key', MPI_MAX_INFO_VAL, ival, flag, ierr)
  call chk(flag .and. ival == 'a value', 'INFO_SET strips leading blanks')
  ival = 'untouched'
  call MPI_INFO_GET(info, 'no such key', MPI_MAX_INFO_VAL, ival, flag, ierr)
  call chk(.not. flag .and. ival == 'untouched', 'INFO_GET of an absent key leaves the value')
  call MPI_INFO_FREE(info, ierr)
  call MPI_ADD_ERROR_CLASS(k, ierr)
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_LASTUSEDCODE, aval, flag, ierr)
  call chk(flag .and. aval == k, 'MPI_LASTUSEDCODE is the value of the last code added')
  ! an offset constant has the offset kind (passed to MPI_FILE_SET_VIEW,
  ! a default INTEGER would leave half of the offset undefined)
  call chk(kind(MPI_DISPLACEMENT_CURRENT) == MPI_OFFSET_KIND, 'MPI_DISPLACEMENT_CURRENT''s kind')
  if (rank == 0) print '(a)', 'info strings and MPI_LASTUSEDCODE: ok'

  ! attribute callbacks written in Fortran: a communicator's (MPI-2 and
  ! MPI-1 kinds), a datatype's, a window's; copied on dup, deleted on
  ! free and delete_attr
  ncopy = 0
  ndel = 0
  badargs = 0
  call MPI_COMM_CREATE_KEYVAL(fx_copy, fx_delete, kv, 7_MPI_ADDRESS_KIND, ierr)
  call chk(ierr == MPI_SUCCESS, 'COMM_CREATE_KEYVAL with Fortran callbacks')
  call MPI_KEYVAL_CREATE(fx_copy1, fx_delete1, kv1, 5, ierr)
  call chk(ierr == MPI_SUCCESS, 'KEYVAL_CREATE with Fortran callbacks')
  call MPI_COMM_DUP(MPI_COMM_WORLD, c1, ierr)
  call MPI_COMM_SET_ATTR(c1, kv, 100_MPI_ADDRESS_KIND, ierr)
  call MPI_ATTR_PUT(c1, kv1, 200, ierr)
  call MPI_COMM_DUP(c1, c2, ierr)
  call chk(ncopy == 2, 'both copy callbacks ran at COMM_DUP')
  call MPI_COMM_GET_ATTR(c2, kv, aval, flag, ierr)
  call chk(flag .and. aval == 100 + 7, 'COMM_DUP: the copy callback''s value')
  call MPI_ATTR_GET(c2, kv1, ival1, flag, ierr)
  call chk(flag .and. ival1 == 200 + 5, 'COMM_DUP: the MPI-1 copy callback''s value')
  call MPI_COMM_DELETE_ATTR(c2, kv, ierr)
  call chk(ndel == 1 .and. lastdel == 107, 'COMM_DELETE_ATTR ran the delete callback')
  call MPI_COMM_FREE(c2, ierr)
  call chk(ndel == 2 .and. lastdel == 205, 'COMM_FREE ran the MPI-1 delete callback')
  call MPI_COMM_FREE(c1, ierr)
  call chk(ndel == 4, 'COMM_FREE ran both delete callbacks')
  call MPI_COMM_FREE_KEYVAL(kv, ierr)
  call MPI_KEYVAL_FREE(kv1, ierr)
  call MPI_TYPE_CREATE_KEYVAL(fx_tcopy, fx_tdelete, kv, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, t1, ierr)
  call MPI_TYPE_SET_ATTR(t1, kv, 33_MPI_ADDRESS_KIND, ierr)
  call MPI_TYPE_DUP(t1, t2, ierr)
  call MPI_TYPE_GET_ATTR(t2, kv, aval, flag, ierr)
  call chk(flag .and. aval == 66, 'TYPE_DUP: the type copy callback''s value')
  call MPI_TYPE_FREE(t2, ierr)
  call MPI_TYPE_FREE(t1, ierr)
  call chk(ndel == 6, 'TYPE_FREE ran the type delete callbacks')
  call MPI_TYPE_FREE_KEYVAL(kv, ierr)
  call MPI_WIN_CREATE_KEYVAL(MPI_WIN_NULL_COPY_FN, fx_wdelete, kv, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_WIN_CREATE(v, 12_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_WIN_SET_ATTR(win, kv, 9_MPI_ADDRESS_KIND, ierr)
  call MPI_WIN_FREE(win, ierr)
  call chk(ndel == 7 .and. lastdel == 9, 'WIN_FREE ran the window delete callback')
  call MPI_WIN_FREE_KEYVAL(kv, ierr)
  call chk(badargs == 0, 'the callbacks'' arguments')
  if (rank == 0) print '(a)', 'attribute callbacks in Fortran: ok'
  call MPI_FINALIZE(ierr)
contains
#include "chk.inc"
end program f_extra

! The attribute callbacks: external procedures (an internal one passed
! as an argument would need an executable stack).
subroutine fx_copy(oldcomm, keyval, extra, valin, valout, flag, ierr)
#include "f_extra_cb.inc"
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  if (.not. (keyval == kv .and. oldcomm /= MPI_COMM_NULL .and. extra == 7)) badargs = badargs + 1
  ncopy = ncopy + 1
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine fx_copy
subroutine fx_delete(comm, keyval, val, extra, ierr)
#include "f_extra_cb.inc"
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  if (.not. (keyval == kv .and. comm /= MPI_COMM_NULL .and. extra == 7)) badargs = badargs + 1
  ndel = ndel + 1
  lastdel = int(val)
  ierr = MPI_SUCCESS
end subroutine fx_delete
subroutine fx_copy1(oldcomm, keyval, extra, valin, valout, flag, ierr)
#include "f_extra_cb.inc"
  integer :: oldcomm, keyval, extra, valin, valout, ierr
  logical :: flag
  if (.not. (keyval == kv1 .and. oldcomm /= MPI_COMM_NULL .and. extra == 5)) badargs = badargs + 1
  ncopy = ncopy + 1
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine fx_copy1
subroutine fx_delete1(comm, keyval, val, extra, ierr)
#include "f_extra_cb.inc"
  integer :: comm, keyval, val, extra, ierr
  if (.not. (keyval == kv1 .and. comm /= MPI_COMM_NULL .and. extra == 5)) badargs = badargs + 1
  ndel = ndel + 1
  lastdel = val
  ierr = MPI_SUCCESS
end subroutine fx_delete1
subroutine fx_tcopy(oldtype, keyval, extra, valin, valout, flag, ierr)
#include "f_extra_cb.inc"
  integer :: oldtype, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  if (.not. (keyval == kv .and. extra == 0)) badargs = badargs + 1
#ifndef OTHER_MPI
  ! (Open MPI 4.1 gives a datatype's callbacks a null handle)
  if (oldtype == MPI_DATATYPE_NULL) badargs = badargs + 1
#endif
  valout = 2 * valin
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine fx_tcopy
subroutine fx_tdelete(obj, keyval, val, extra, ierr)
#include "f_extra_cb.inc"
  integer :: obj, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  if (.not. (keyval == kv .and. extra == 0)) badargs = badargs + 1
#ifndef OTHER_MPI
  if (obj == MPI_DATATYPE_NULL) badargs = badargs + 1
#endif
  ndel = ndel + 1
  lastdel = int(val)
  ierr = MPI_SUCCESS
end subroutine fx_tdelete
subroutine fx_wdelete(obj, keyval, val, extra, ierr)
#include "f_extra_cb.inc"
  integer :: obj, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  if (.not. (keyval == kv .and. obj /= MPI_WIN_NULL .and. extra == 0)) badargs = badargs + 1
  ndel = ndel + 1
  lastdel = int(val)
  ierr = MPI_SUCCESS
end subroutine fx_wdelete
