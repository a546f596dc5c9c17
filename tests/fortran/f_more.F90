! tests/fortran/f_more.F90: the Fortran bindings of the non-blocking
! collectives (and MPI_F_SYNC_REG), Comm_idup, intercommunicators, matched probes,
! neighbourhood collectives (blocking and not), error classes, subarray types and their
! envelope and contents, graph topologies and external32 packing,
! datatype and window attributes, distributed graphs (weighted,
! MPI_UNWEIGHTED), communicator and window hints, the w collectives
! (arrays of datatypes), generalized requests (Fortran callbacks,
! MPI_STATUS_SET_ELEMENTS / _CANCELLED), through the `mpi` module
! (f_more) and include 'mpif.h' (f_more_mpif). Each result is checked
! against its blocking twin or a known value; rank 0 prints a line per
! family.
program f_more
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer :: ierr, rank, np, i, req, dupc, inter, merged, rsize, msg
  integer :: sum1, sum2, cls, code, cart, half, src
  integer :: buf(64), got(64), want(64), st(MPI_STATUS_SIZE)
  integer :: reqs(3), dims(1)
  logical :: flag, periods(1)
  character(len=MPI_MAX_ERROR_STRING) :: estr
  integer :: elen
  integer :: a(4, 4), sizes(2), subs(2), starts(2), sub, packed(4), pos
  integer :: ni, na, nd, comb, gsz, idx(64), edges(128), graph, nn, nbrs(8)
  integer :: cints(8), ctypes(1)
  integer(kind=MPI_ADDRESS_KIND) :: caddr(1)
  integer(kind=MPI_ADDRESS_KIND) :: xpos, xsize
  character(len=8) :: ext
  integer :: tkey, tkey2, wkey, tdup, win, wbuf(4)
  integer(kind=MPI_ADDRESS_KIND) :: aval, wsize
  integer :: gsrc(2), gdst(2), wts(2), isrc(2), idst(2), iw(2), ow(2), dg, nin, nout
  integer :: hinfo, hinfo2
  character(len=20) :: hval
  integer :: wcnt(64), wdsp(64), wtyp(64), wsb(64), wrb(64)
  integer(kind=MPI_ADDRESS_KIND) :: wadsp(2), wardsp(2)
  double precision :: wdd(2)
  integer :: nq, nf, nc, gcnt
  common /fm_greq/ nq, nf, nc
  external :: fm_query, fm_free, fm_cancel

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)

  ! non-blocking collectives against the blocking ones
  buf(1) = rank + 1
  call MPI_IREDUCE(buf, sum1, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IALLGATHER(buf, 1, MPI_INTEGER, got, 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_ISCAN(buf, sum2, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_WAITALL(3, reqs, MPI_STATUSES_IGNORE, ierr)
  if (rank == 0) call chk(sum1 == np * (np + 1) / 2, 'ireduce')
  do i = 1, np
    call chk(got(i) == i, 'iallgather')
  end do
  call chk(sum2 == (rank + 1) * (rank + 2) / 2, 'iscan')
  call MPI_IBCAST(np, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call MPI_F_SYNC_REG(np)
  call chk(np > 0, 'ibcast, then MPI_F_SYNC_REG')
  call MPI_COMM_IDUP(MPI_COMM_WORLD, dupc, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call MPI_ALLREDUCE(buf, sum1, 1, MPI_INTEGER, MPI_SUM, dupc, ierr)
  call chk(sum1 == np * (np + 1) / 2, 'comm_idup')
  call MPI_COMM_FREE(dupc, ierr)
  if (rank == 0) write (*, '(a)') 'nonblocking collectives: ok'

  ! intercommunicator of the even and the odd ranks
  if (np >= 2) then
    call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
    call MPI_INTERCOMM_CREATE(half, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 7, inter, ierr)
    call MPI_COMM_REMOTE_SIZE(inter, rsize, ierr)
    if (mod(rank, 2) == 0) then
      call chk(rsize == np / 2, 'remote size (even)')
    else
      call chk(rsize == (np + 1) / 2, 'remote size (odd)')
    end if
    call MPI_COMM_TEST_INTER(inter, flag, ierr)
    call chk(flag, 'test_inter')
    call MPI_INTERCOMM_MERGE(inter, mod(rank, 2) == 1, merged, ierr)
    call MPI_COMM_SIZE(merged, rsize, ierr)
    call chk(rsize == np, 'merged size')
    call MPI_COMM_FREE(merged, ierr)
    call MPI_COMM_FREE(inter, ierr)
    call MPI_COMM_FREE(half, ierr)
  end if
  if (rank == 0) write (*, '(a)') 'intercommunicators: ok'

  ! matched probes: rank 0 takes one message from every other rank
  if (rank == 0) then
    want = 0
    do i = 1, np - 1
      call MPI_MPROBE(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, msg, st, ierr)
      src = st(MPI_SOURCE)
      call MPI_MRECV(got, 2, MPI_INTEGER, msg, st, ierr)
      call chk(msg == MPI_MESSAGE_NULL, 'mrecv frees the message')
      call chk(got(1) == src .and. got(2) == 10 * src, 'mrecv data')
      want(src + 1) = want(src + 1) + 1
    end do
    do i = 2, np
      call chk(want(i) == 1, 'one message from each rank')
    end do
    call MPI_IMPROBE(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, flag, msg, st, ierr)
    call chk(.not. flag, 'improbe finds nothing more')
  else
    buf(1) = rank
    buf(2) = 10 * rank
    call MPI_SEND(buf, 2, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 0) write (*, '(a)') 'matched probes: ok'

  ! neighbourhood allgather on a periodic ring
  dims(1) = np
  periods(1) = .true.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  buf(1) = rank
  call MPI_NEIGHBOR_ALLGATHER(buf, 1, MPI_INTEGER, got, 1, MPI_INTEGER, cart, ierr)
  call chk(got(1) == mod(rank - 1 + np, np) .and. got(2) == mod(rank + 1, np), &
      'neighbor_allgather')
  got(1:2) = -1
  call MPI_INEIGHBOR_ALLGATHER(buf, 1, MPI_INTEGER, got, 1, MPI_INTEGER, cart, req, ierr)
  call MPI_WAIT(req, st, ierr)
  call chk(got(1) == mod(rank - 1 + np, np) .and. got(2) == mod(rank + 1, np), &
      'ineighbor_allgather')
  call MPI_COMM_FREE(cart, ierr)
  if (rank == 0) write (*, '(a)') 'neighbourhood collectives: ok'

  ! an error class and code of our own, with its string
  call MPI_ADD_ERROR_CLASS(cls, ierr)
  call MPI_ADD_ERROR_CODE(cls, code, ierr)
  call MPI_ADD_ERROR_STRING(code, 'f_more: our own error', ierr)
  call MPI_ERROR_STRING(code, estr, elen, ierr)
  call chk(estr(1:elen) == 'f_more: our own error', 'error string')
  call MPI_ERROR_CLASS(code, i, ierr)
  call chk(i == cls, 'error class')
  if (rank == 0) write (*, '(a)') 'error classes: ok'

  ! a subarray in Fortran order, its envelope, graphs, external32
  a = reshape([(i, i = 1, 16)], [4, 4])    ! column by column: 1 .. 16
  sizes = 4
  subs = 2
  starts = 1
  call MPI_TYPE_CREATE_SUBARRAY(2, sizes, subs, starts, MPI_ORDER_FORTRAN, &
      MPI_INTEGER, sub, ierr)
  call MPI_TYPE_COMMIT(sub, ierr)
  pos = 0
  call MPI_PACK(a, 1, sub, packed, 16, pos, MPI_COMM_SELF, ierr)
  call chk(pos == 16 .and. packed(1) == a(2, 2) .and. packed(2) == a(3, 2) &
      .and. packed(3) == a(2, 3) .and. packed(4) == a(3, 3), 'subarray')
  call MPI_TYPE_GET_ENVELOPE(sub, ni, na, nd, comb, ierr)
  call chk(comb == MPI_COMBINER_SUBARRAY .and. ni == 8 .and. nd == 1, 'envelope')
  ! (the sizes the envelope gave: Open MPI 4.1.4 crashes on larger ones)
  call MPI_TYPE_GET_CONTENTS(sub, ni, na, nd, cints, caddr, ctypes, ierr)
  call chk(ierr == MPI_SUCCESS .and. all(cints == [2, 4, 4, 2, 2, 1, 1, MPI_ORDER_FORTRAN]) &
      .and. ctypes(1) == MPI_INTEGER, 'contents')
  call MPI_TYPE_FREE(sub, ierr)
  if (np >= 3) then
    do i = 1, np
      idx(i) = 2 * i
      edges(2 * i - 1) = mod(i - 2 + np, np)
      edges(2 * i) = mod(i, np)
    end do
    call MPI_GRAPH_CREATE(MPI_COMM_WORLD, np, idx, edges, .false., graph, ierr)
    call MPI_GRAPHDIMS_GET(graph, nn, gsz, ierr)
    call chk(nn == np .and. gsz == 2 * np, 'graphdims')
    call MPI_GRAPH_NEIGHBORS_COUNT(graph, rank, nn, ierr)
    call MPI_GRAPH_NEIGHBORS(graph, rank, 8, nbrs, ierr)
    call chk(nn == 2 .and. nbrs(1) == mod(rank - 1 + np, np) .and. &
        nbrs(2) == mod(rank + 1, np), 'graph neighbors')
    call MPI_COMM_FREE(graph, ierr)
  end if
  xpos = 0
  xsize = 8
  call MPI_PACK_EXTERNAL('external32', 258, 1, MPI_INTEGER, ext, xsize, xpos, ierr)
  call chk(xpos == 4 .and. ichar(ext(3:3)) == 1 .and. ichar(ext(4:4)) == 2, &
      'pack_external')
  if (rank == 0) write (*, '(a)') 'arrays, graphs, external32: ok'

  ! datatype and window attributes, with the predefined callbacks
  call MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, &
      0_MPI_ADDRESS_KIND, ierr)
  call MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &
      tkey2, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, sub, ierr)
  aval = 1000 + rank
  call MPI_TYPE_SET_ATTR(sub, tkey, aval, ierr)
  aval = 7
  call MPI_TYPE_SET_ATTR(sub, tkey2, aval, ierr)
  call MPI_TYPE_DUP(sub, tdup, ierr)
  call MPI_TYPE_GET_ATTR(tdup, tkey, aval, flag, ierr)
  call chk(flag .and. aval == 1000 + rank, 'type attribute copied by MPI_TYPE_DUP_FN')
  call MPI_TYPE_GET_ATTR(tdup, tkey2, aval, flag, ierr)
  call chk(.not. flag, 'MPI_TYPE_NULL_COPY_FN copies nothing')
  call MPI_TYPE_GET_ATTR(sub, tkey2, aval, flag, ierr)
  call chk(flag .and. aval == 7, 'type attribute')
  call MPI_TYPE_DELETE_ATTR(sub, tkey, ierr)
  call MPI_TYPE_GET_ATTR(sub, tkey, aval, flag, ierr)
  call chk(.not. flag, 'type attribute deleted')
  call MPI_TYPE_FREE(tdup, ierr)
  call MPI_TYPE_FREE(sub, ierr)
  call MPI_TYPE_FREE_KEYVAL(tkey, ierr)
  call MPI_TYPE_FREE_KEYVAL(tkey2, ierr)
  call chk(tkey == MPI_KEYVAL_INVALID, 'type_free_keyval')
  call MPI_WIN_CREATE_KEYVAL(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, wkey, &
      0_MPI_ADDRESS_KIND, ierr)
  wsize = 16
  call MPI_WIN_CREATE(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  aval = 42 + rank
  call MPI_WIN_SET_ATTR(win, wkey, aval, ierr)
  call MPI_WIN_GET_ATTR(win, wkey, aval, flag, ierr)
  call chk(flag .and. aval == 42 + rank, 'window attribute')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, aval, flag, ierr)
  call chk(flag .and. aval == 16, 'MPI_WIN_SIZE')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_DISP_UNIT, aval, flag, ierr)
  call chk(flag .and. aval == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_CREATE_FLAVOR, aval, flag, ierr)
  call chk(flag .and. aval == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_WIN_DELETE_ATTR(win, wkey, ierr)
  call MPI_WIN_GET_ATTR(win, wkey, aval, flag, ierr)
  call chk(.not. flag, 'window attribute deleted')
  call MPI_WIN_FREE(win, ierr)
  call MPI_WIN_FREE_KEYVAL(wkey, ierr)
  call chk(wkey == MPI_KEYVAL_INVALID, 'win_free_keyval')
  if (rank == 0) write (*, '(a)') 'type and window attributes: ok'

  ! distributed graphs: sources rank-1, rank-2; destinations rank+1, rank+2
  gsrc(1) = mod(rank - 1 + np, np)
  gsrc(2) = mod(rank - 2 + 2 * np, np)
  gdst(1) = mod(rank + 1, np)
  gdst(2) = mod(rank + 2, np)
  wts(1) = 1
  wts(2) = 2
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, gsrc, wts, 2, gdst, wts, &
      MPI_INFO_NULL, .false., dg, ierr)
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, nin, nout, flag, ierr)
  call chk(nin == 2 .and. nout == 2 .and. flag, 'dist_graph_neighbors_count')
  call MPI_DIST_GRAPH_NEIGHBORS(dg, 2, isrc, iw, 2, idst, ow, ierr)
  call chk(all(isrc == gsrc) .and. all(idst == gdst) .and. all(iw == wts) &
      .and. all(ow == wts), 'dist_graph_neighbors')
  buf(1) = rank
  call MPI_NEIGHBOR_ALLGATHER(buf, 1, MPI_INTEGER, got, 1, MPI_INTEGER, dg, ierr)
  call chk(got(1) == gsrc(1) .and. got(2) == gsrc(2), 'neighbor_allgather on a dist graph')
  call MPI_COMM_FREE(dg, ierr)
  call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, gsrc, MPI_UNWEIGHTED, 2, gdst, &
      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dg, ierr)
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, nin, nout, flag, ierr)
  call chk(nin == 2 .and. nout == 2 .and. .not. flag, 'MPI_UNWEIGHTED')
  call MPI_COMM_FREE(dg, ierr)
  ! each rank names one edge, its own to rank+1
  isrc(1) = rank
  iw(1) = 1
  idst(1) = mod(rank + 1, np)
  call MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, isrc, iw, idst, MPI_UNWEIGHTED, &
      MPI_INFO_NULL, .false., dg, ierr)
  call MPI_DIST_GRAPH_NEIGHBORS_COUNT(dg, nin, nout, flag, ierr)
  call chk(nin == 1 .and. nout == 1 .and. .not. flag, 'dist_graph_create')
  call MPI_DIST_GRAPH_NEIGHBORS(dg, 1, isrc, MPI_UNWEIGHTED, 1, idst, MPI_UNWEIGHTED, ierr)
  call chk(isrc(1) == mod(rank - 1 + np, np) .and. idst(1) == mod(rank + 1, np), &
      'dist_graph_neighbors (create)')
  call MPI_COMM_FREE(dg, ierr)
  if (rank == 0) write (*, '(a)') 'distributed graphs: ok'

  ! hints of communicators and windows
  call MPI_INFO_CREATE(hinfo, ierr)
  call MPI_INFO_SET(hinfo, 'f_more_hint', 'yes', ierr)
  call MPI_COMM_DUP_WITH_INFO(MPI_COMM_WORLD, hinfo, dupc, ierr)
  call MPI_COMM_GET_INFO(dupc, hinfo2, ierr)
  call MPI_INFO_GET(hinfo2, 'f_more_hint', 20, hval, flag, ierr)
  call chk(flag .and. hval == 'yes', 'comm_dup_with_info, comm_get_info')
  call MPI_INFO_FREE(hinfo2, ierr)
  ! (which hints get_info then gives is the library's choice: Open MPI
  ! 4.1 drops those it does not know)
  call MPI_INFO_SET(hinfo, 'f_more_other', 'no', ierr)
  call MPI_COMM_SET_INFO(dupc, hinfo, ierr)
  call chk(ierr == MPI_SUCCESS, 'comm_set_info')
  call MPI_COMM_GET_INFO(dupc, hinfo2, ierr)
  call chk(ierr == MPI_SUCCESS .and. hinfo2 /= MPI_INFO_NULL, 'comm_get_info')
  call MPI_INFO_FREE(hinfo2, ierr)
  call MPI_COMM_FREE(dupc, ierr)
  wsize = 16
  call MPI_WIN_CREATE(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_WIN_SET_INFO(win, hinfo, ierr)
  call MPI_WIN_GET_INFO(win, hinfo2, ierr)
  call chk(ierr == MPI_SUCCESS .and. hinfo2 /= MPI_INFO_NULL, 'win_set_info, win_get_info')
  call MPI_INFO_FREE(hinfo2, ierr)
  call MPI_WIN_FREE(win, ierr)
  call MPI_INFO_FREE(hinfo, ierr)
  if (rank == 0) write (*, '(a)') 'communicator and window hints: ok'

  ! MPI_ALLTOALLW: block i of rank r is 10 * r + i, one integer each
  do i = 1, np
    wcnt(i) = 1
    wdsp(i) = 4 * (i - 1)
    wtyp(i) = MPI_INTEGER
    wsb(i) = 10 * rank + i - 1
    wrb(i) = -1
  end do
  call MPI_ALLTOALLW(wsb, wcnt, wdsp, wtyp, wrb, wcnt, wdsp, wtyp, MPI_COMM_WORLD, ierr)
  do i = 1, np
    call chk(wrb(i) == 10 * (i - 1) + rank, 'alltoallw')
  end do
  wrb(1:np) = -1
  call MPI_IALLTOALLW(wsb, wcnt, wdsp, wtyp, wrb, wcnt, wdsp, wtyp, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, st, ierr)
  do i = 1, np
    call chk(wrb(i) == 10 * (i - 1) + rank, 'ialltoallw')
  end do
  ! MPI_NEIGHBOR_ALLTOALLW on a distributed ring: an integer to the
  ! right, a double to the left; types differ per neighbour (not on one
  ! rank: Open MPI 4.1's binding converts as many types as the
  ! communicator's size, not its degree, and fails there)
  if (np >= 2) then
    gsrc(1) = mod(rank - 1 + np, np)
    gsrc(2) = mod(rank + 1, np)
    call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, gsrc, MPI_UNWEIGHTED, 2, &
        gsrc(2:1:-1), MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dg, ierr)
    wdd(1) = rank + 0.5d0
    wdd(2) = -1d0
    wsb(1) = 100 + rank
    wrb(1) = -1
    wcnt(1:2) = 1
    wtyp(1) = MPI_INTEGER
    wtyp(2) = MPI_DOUBLE_PRECISION
    ! send: block 1 (to the right neighbour) the integer, block 2 the double
    call MPI_GET_ADDRESS(wsb(1), wadsp(1), ierr)
    call MPI_GET_ADDRESS(wdd(1), wadsp(2), ierr)
    ! receive: from the left the integer, from the right the double
    call MPI_GET_ADDRESS(wrb(1), wardsp(1), ierr)
    call MPI_GET_ADDRESS(wdd(2), wardsp(2), ierr)
    call MPI_NEIGHBOR_ALLTOALLW(MPI_BOTTOM, wcnt, wadsp, wtyp, MPI_BOTTOM, wcnt, wardsp, &
        wtyp, dg, ierr)
    ! (received through MPI_BOTTOM: the compiler must not keep them)
    call MPI_F_SYNC_REG(wrb)
    call MPI_F_SYNC_REG(wdd)
    call chk(wrb(1) == 100 + gsrc(1) .and. wdd(2) == gsrc(2) + 0.5d0, 'neighbor_alltoallw')
    wrb(1) = -1
    wdd(2) = -1d0
    call MPI_INEIGHBOR_ALLTOALLW(MPI_BOTTOM, wcnt, wadsp, wtyp, MPI_BOTTOM, wcnt, wardsp, &
        wtyp, dg, req, ierr)
    call MPI_WAIT(req, st, ierr)
    call MPI_F_SYNC_REG(wrb)
    call MPI_F_SYNC_REG(wdd)
    call chk(wrb(1) == 100 + gsrc(1) .and. wdd(2) == gsrc(2) + 0.5d0, 'ineighbor_alltoallw')
    call MPI_COMM_FREE(dg, ierr)
  end if
  if (rank == 0) write (*, '(a)') 'w collectives: ok'

  ! generalized requests: the callbacks (below the program) count their
  ! calls in /fm_greq/; query_fn sets the status from EXTRA_STATE
  nq = 0
  nf = 0
  nc = 0
  call MPI_GREQUEST_START(fm_query, fm_free, fm_cancel, int(5 + rank, MPI_ADDRESS_KIND), &
      req, ierr)
  call chk(ierr == MPI_SUCCESS, 'grequest_start')
  call MPI_TEST(req, flag, st, ierr)
  call chk(.not. flag .and. nq == 0, 'test of a pending grequest')
  call MPI_GREQUEST_COMPLETE(req, ierr)
  call MPI_WAIT(req, st, ierr)
  call chk(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'wait on a grequest')
  call chk(nq == 1 .and. nf == 1 .and. nc == 0, 'grequest callbacks')
  call chk(st(MPI_SOURCE) == 7 .and. st(MPI_TAG) == 8, 'grequest status')
  call MPI_GET_COUNT(st, MPI_INTEGER, gcnt, ierr)
  call chk(gcnt == 5 + rank, 'grequest status_set_elements')
  call MPI_TEST_CANCELLED(st, flag, ierr)
  call chk(.not. flag, 'grequest not cancelled')
  ! cancelled while pending (cancel_fn told so), completed, then freed
  call MPI_GREQUEST_START(fm_query, fm_free, fm_cancel, int(1, MPI_ADDRESS_KIND), req, ierr)
  call MPI_CANCEL(req, ierr)
  call chk(nc == 1, 'grequest cancel_fn (pending)')
  call MPI_GREQUEST_COMPLETE(req, ierr)
  call MPI_REQUEST_FREE(req, ierr)
  call chk(nf == 2 .and. nq == 1 .and. req == MPI_REQUEST_NULL, 'grequest freed after completion')
  if (rank == 0) write (*, '(a)') 'generalized requests: ok'

  call MPI_FINALIZE(ierr)

contains

#include "chk.inc"

end program f_more

! The generalized request callbacks of f_more (external: an internal
! procedure as an actual argument needs an executable stack).
subroutine fm_query(extra, status, ierr)
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr
  integer :: nq, nf, nc, e
  common /fm_greq/ nq, nf, nc
  nq = nq + 1
  call MPI_STATUS_SET_ELEMENTS(status, MPI_INTEGER, int(extra), e)
  call MPI_STATUS_SET_CANCELLED(status, .false., e)
  status(MPI_SOURCE) = 7
  status(MPI_TAG) = 8
  ierr = MPI_SUCCESS
end subroutine fm_query

subroutine fm_free(extra, ierr)
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierr
  integer :: nq, nf, nc
  common /fm_greq/ nq, nf, nc
  nf = nf + 1
  if (extra < 0) nf = -1
  ierr = MPI_SUCCESS
end subroutine fm_free

subroutine fm_cancel(extra, complete, ierr)
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierr
  integer :: nq, nf, nc
  common /fm_greq/ nq, nf, nc
  nc = nc + 1
  if (complete) nc = nc + 10
  if (extra < 0) nc = -1
  ierr = MPI_SUCCESS
end subroutine fm_cancel
