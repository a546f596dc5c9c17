! tests/fortran/f08_basic.f90: the `mpi_f08` module: TYPE(MPI_Comm) ...
! handles and their == and /=, TYPE(MPI_Status) with %MPI_SOURCE,
! optional IERROR, MPI_STATUS(ES)_IGNORE and MPI_IN_PLACE, arrays of
! TYPE(MPI_Request), a user op with the f08 signature (TYPE(C_PTR),
! VALUE buffers, TYPE(MPI_Datatype)), derived datatypes and their contents, split and cart
! communicators, a distributed graph with MPI_UNWEIGHTED, MPI_Sizeof and
! MPI_Type_match_size, a datatype attribute, strings,
! a generalized request with f08 callbacks, MPI_ERRORS_RETURN and an f08
! error handler. Checks abort; rank 0 prints.
program f08_basic
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: rank, np, i, n, ierr, next, prev, color
  integer :: ibuf(10), jbuf(10), a(4, 4), row(4)
  double precision :: d(3)
  character(len=16) :: s
  character(len=MPI_MAX_OBJECT_NAME) :: oname
  type(MPI_Status) :: st, sts(2)
  type(MPI_Request) :: req(2)
  type(MPI_Comm) :: half, dup, cart, dg
  integer :: gs(1), gd(1), nin, nout, wc(64), wd(64), ws(64), wr(64)
  type(MPI_Datatype) :: wt(64)
  logical :: wtd
  type(MPI_Datatype) :: rowt, olds(1)
  integer :: cints(3)
  integer(kind=MPI_ADDRESS_KIND) :: caddr(1), aval
  integer :: tkey
  type(MPI_Op) :: myop
  logical :: flag
  double precision :: t0
  external :: f08_sum, f08_handler, f08_gq, f08_gf, f08_gc
  integer :: ng
  common /f08gr/ ng
  type(MPI_Errhandler) :: eh
  integer :: nerr
  common /f08eh/ nerr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call chk(ierr == MPI_SUCCESS, 'ierror present')
  t0 = MPI_Wtime()
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! ---- point to point
  ibuf = (/ (rank * 100 + i, i = 1, 10) /)
  call MPI_Sendrecv(ibuf, 10, MPI_INTEGER, next, 5, jbuf, 10, MPI_INTEGER, &
      MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
  call chk(st%MPI_SOURCE == prev .and. st%MPI_TAG == 5, 'status components')
  call MPI_Get_count(st, MPI_INTEGER, n)
  call chk(n == 10 .and. jbuf(10) == prev * 100 + 10, 'get_count, data')
  call MPI_Irecv(jbuf, 10, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, req(1))
  call MPI_Isend(ibuf, 10, MPI_INTEGER, next, 6, MPI_COMM_WORLD, req(2))
  call chk(req(1) /= MPI_REQUEST_NULL, 'request set')
  call MPI_Waitall(2, req, sts)
  call chk(req(1) == MPI_REQUEST_NULL .and. req(2) == MPI_REQUEST_NULL, &
      'waitall nulls the requests')
  call chk(sts(1)%MPI_SOURCE == prev, 'waitall status')
  call MPI_Irecv(jbuf, 10, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, req(1))
  call MPI_Send(ibuf, 10, MPI_INTEGER, next, 7, MPI_COMM_WORLD)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  call MPI_F_sync_reg(jbuf)
  call chk(jbuf(1) == prev * 100 + 1, 'irecv, then MPI_F_sync_reg')
  flag = .false.
  call MPI_Test(req(1), flag, MPI_STATUS_IGNORE)
  call chk(flag, 'test on a null request')
  if (rank == 0) print '(a)', 'f08 p2p: ok'

  ! ---- collectives
  d = (/ 1.0d0, dble(rank), 2.0d0 /)
  call MPI_Allreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call chk(d(1) == np .and. d(2) == np * (np - 1) / 2, 'allreduce in place')
  s = ' '
  if (rank == 0) s = 'f08 strings'
  call MPI_Bcast(s, 16, MPI_CHARACTER, 0, MPI_COMM_WORLD)
  call chk(s == 'f08 strings', 'bcast character')
  call MPI_Op_create(f08_sum, .true., myop)
  ibuf(1:2) = rank + 1
  call MPI_Allreduce(ibuf, jbuf, 2, MPI_INTEGER, myop, MPI_COMM_WORLD)
  call chk(jbuf(1) == np * (np + 1) / 2 .and. jbuf(2) == jbuf(1), 'f08 user op')
  call MPI_Op_free(myop)
  call chk(myop == MPI_OP_NULL, 'op_free')
  if (rank == 0) print '(a)', 'f08 collectives: ok'

  ! ---- datatypes and communicators
  a = reshape((/ (i, i = 1, 16) /), (/ 4, 4 /))
  call MPI_Type_vector(4, 1, 4, MPI_INTEGER, rowt)
  call MPI_Type_commit(rowt)
  call MPI_Sendrecv(a(2, 1), 1, rowt, rank, 1, row, 4, MPI_INTEGER, rank, 1, &
      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call chk(all(row == (/ 2, 6, 10, 14 /)), 'vector type')
  call MPI_Type_get_contents(rowt, 3, 0, 1, cints, caddr, olds)
  call chk(all(cints == (/ 4, 1, 4 /)) .and. olds(1) == MPI_INTEGER, 'vector contents')
  call MPI_Type_free(rowt)
  call chk(rowt == MPI_DATATYPE_NULL, 'type_free')
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, half)
  call MPI_Comm_size(half, n)
  call chk(n == (np + 1 - color) / 2, 'split')
  call MPI_Comm_dup(half, dup)
  call MPI_Comm_set_name(dup, 'f08 dup')
  call MPI_Comm_get_name(dup, oname, n)
  call chk(oname == 'f08 dup' .and. n == 7, 'names')
  call MPI_Comm_free(dup)
  call MPI_Comm_free(half)
  call chk(half == MPI_COMM_NULL .and. dup == MPI_COMM_NULL, 'comm_free')
  call MPI_Cart_create(MPI_COMM_WORLD, 1, (/ np /), (/ .true. /), .false., cart)
  call MPI_Cart_shift(cart, 0, 1, i, n)
  call chk(i == prev .and. n == next, 'cart shift')
  call MPI_Comm_free(cart)
  ! MPI_Sizeof (optional IERROR) and the type of that size
  call MPI_Sizeof(d, n)
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, n, rowt, ierr)
  call MPI_Type_size(rowt, i)
  call chk(n == 8 .and. i == 8 .and. ierr == MPI_SUCCESS, 'sizeof and match_size')
  ! a distributed ring, unweighted
  gs(1) = prev
  gd(1) = next
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, gs, MPI_UNWEIGHTED, 1, gd, &
      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dg)
  call MPI_Dist_graph_neighbors_count(dg, nin, nout, wtd)
  call chk(nin == 1 .and. nout == 1 .and. .not. wtd, 'dist graph')
  call MPI_Dist_graph_neighbors(dg, 1, gs, MPI_UNWEIGHTED, 1, gd, MPI_UNWEIGHTED)
  call chk(gs(1) == prev .and. gd(1) == next, 'dist graph neighbors')
  call MPI_Comm_free(dg)
  ! MPI_Alltoallw: its datatypes an array of TYPE(MPI_Datatype)
  do i = 1, np
    wc(i) = 1
    wd(i) = 4 * (i - 1)
    wt(i) = MPI_INTEGER
    ws(i) = 10 * rank + i - 1
    wr(i) = -1
  end do
  call MPI_Alltoallw(ws, wc, wd, wt, wr, wc, wd, wt, MPI_COMM_WORLD)
  do i = 1, np
    call chk(wr(i) == 10 * (i - 1) + rank, 'alltoallw')
  end do
  ! an attribute of a predefined datatype
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, &
      0_MPI_ADDRESS_KIND)
  call MPI_Type_set_attr(MPI_INTEGER, tkey, 77_MPI_ADDRESS_KIND)
  call MPI_Type_get_attr(MPI_INTEGER, tkey, aval, flag)
  call chk(flag .and. aval == 77, 'type attribute')
  call MPI_Type_delete_attr(MPI_INTEGER, tkey)
  call MPI_Type_get_attr(MPI_INTEGER, tkey, aval, flag)
  call chk(.not. flag, 'type attribute deleted')
  call MPI_Type_free_keyval(tkey)
  ! a generalized request: the f08 query_fn sets the status
  ng = 0
  call MPI_Grequest_start(f08_gq, f08_gf, f08_gc, int(3 + rank, MPI_ADDRESS_KIND), req(1))
  call MPI_Grequest_complete(req(1))
  call MPI_Wait(req(1), st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call chk(ng == 11 .and. n == 3 + rank .and. st%MPI_TAG == 9 .and. &
      req(1) == MPI_REQUEST_NULL, 'f08 generalized request')
  if (rank == 0) print '(a)', 'f08 datatypes and communicators: ok'

  ! ---- errors
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(ibuf, 1, MPI_INTEGER, np + 3, 0, MPI_COMM_WORLD, ierr)
  call chk(ierr /= MPI_SUCCESS, 'bad rank returns')
  call MPI_Error_class(ierr, i)
  call chk(i == MPI_ERR_RANK, 'error class')
  call MPI_Send(ibuf, 1, MPI_Datatype(4242), 0, 0, MPI_COMM_WORLD, ierr)
  call chk(ierr == MPI_ERR_TYPE, 'bad datatype handle')
  nerr = 0
  call MPI_Comm_create_errhandler(f08_handler, eh)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh)
  call MPI_Send(ibuf, -2, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call chk(nerr == 1 .and. ierr == MPI_ERR_COUNT, 'f08 error handler')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  call MPI_Errhandler_free(eh)
  call chk(eh == MPI_ERRHANDLER_NULL, 'errhandler_free')
  call chk(MPI_Wtime() >= t0, 'wtime')
  if (rank == 0) print '(a)', 'f08 errors: ok'
  call MPI_Finalize()

contains

  subroutine chk(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a,a,a,i0)') 'FAIL: ', what, ' on rank ', rank
      call MPI_Abort(MPI_COMM_WORLD, 3)
    end if
  end subroutine chk

end program f08_basic

! An f08 MPI_User_function (buffers as TYPE(C_PTR), VALUE; the datatype
! as TYPE(MPI_Datatype)): inoutvec = invec + inoutvec.
subroutine f08_sum(invec, inoutvec, len, datatype)
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  type(c_ptr), value :: invec, inoutvec
  integer :: len
  type(MPI_Datatype) :: datatype
  integer, pointer :: a(:), b(:)
  if (datatype /= MPI_INTEGER) call MPI_Abort(MPI_COMM_WORLD, 4)
  call c_f_pointer(invec, a, (/ len /))
  call c_f_pointer(inoutvec, b, (/ len /))
  b = a + b
end subroutine f08_sum

! An f08 MPI_Comm_errhandler_function: counts MPI_ERR_COUNT on the world.
subroutine f08_handler(comm, error_code)
  use mpi_f08
  implicit none
  type(MPI_Comm) :: comm
  integer :: error_code, nerr
  common /f08eh/ nerr
  if (comm == MPI_COMM_WORLD .and. error_code == MPI_ERR_COUNT) nerr = nerr + 1
end subroutine f08_handler

! f08 generalized request callbacks: query (TYPE(MPI_Status)) counts 1,
! free 10, cancel 100 in /f08gr/.
subroutine f08_gq(extra, status, ierror)
  use mpi_f08
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  type(MPI_Status) :: status
  integer :: ierror, ng
  common /f08gr/ ng
  ng = ng + 1
  call MPI_Status_set_elements(status, MPI_INTEGER, int(extra))
  status%MPI_TAG = 9
  ierror = MPI_SUCCESS
end subroutine f08_gq

subroutine f08_gf(extra, ierror)
  use mpi_f08
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: ierror, ng
  common /f08gr/ ng
  ng = ng + 10
  if (extra < 0) ng = -1
  ierror = MPI_SUCCESS
end subroutine f08_gf

subroutine f08_gc(extra, complete, ierror)
  use mpi_f08
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: complete
  integer :: ierror, ng
  common /f08gr/ ng
  ng = ng + 100
  if (complete .or. extra < 0) ng = -1
  ierror = MPI_SUCCESS
end subroutine f08_gc
