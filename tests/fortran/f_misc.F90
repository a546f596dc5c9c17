! tests/fortran/f_misc.F90: the rest of the bindings through the `mpi`
! module (f_misc) and through include 'mpif.h' (f_misc_mpif, -DMPIV_MPIF): derived datatypes (contiguous, vector, indexed, create_struct
! with MPI_BOTTOM and Get_address, resized, Pack/Unpack), communicators
! (dup, split, compare, names, groups, cart: create/coords/shift/sub),
! strings in and out, MPI_ERRORS_RETURN and a Fortran error handler,
! Error_string/class, info, attributes, Wtime, handles freed and reused.
program f_misc
#ifndef MPIV_MPIF
  use mpi
#endif
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  type(c_ptr) :: cp
  integer, pointer :: mem(:)
  integer :: ierr, rank, np, i, j, t1, t2, t3, newc, dupc, cart, rowc, res
  integer :: grp, grp2, n, eh, info, pos, ks
  integer :: a(10, 10), b(100), types(2), blens(2), dims(2), coords(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), lb, ext, tagub, addr
  logical :: periods(2), remain(2), flag
  character(len=MPI_MAX_PROCESSOR_NAME) :: pname
  character(len=MPI_MAX_OBJECT_NAME) :: oname
  character(len=MPI_MAX_ERROR_STRING) :: estr
  character(len=40) :: val
  character(len=64) :: packbuf
  integer :: src, dst, first_t, reused_t, ecount
  double precision :: t0
  ! changed by MPI through MPI_BOTTOM, behind the compiler's back
  double precision, volatile :: s(3)
  integer, volatile :: ival
  common /ehcount/ ecount
  external :: my_handler

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  t0 = MPI_WTIME()
  call chk(MPI_WTICK() > 0.0d0, 'wtick')

  ! ---- vector: column 3 of a 10x10 array is contiguous in Fortran, a row
  ! is a vector of stride 10
  do j = 1, 10
    do i = 1, 10
      a(i, j) = 100 * i + j
    end do
  end do
  call MPI_TYPE_VECTOR(10, 1, 10, MPI_INTEGER, t1, ierr)
  call MPI_TYPE_COMMIT(t1, ierr)
  call MPI_TYPE_SIZE(t1, n, ierr)
  call chk(n == 40, 'vector size')
  call MPI_TYPE_GET_EXTENT(t1, lb, ext, ierr)
  call chk(lb == 0 .and. ext == 364, 'vector extent')
  call MPI_SENDRECV(a(4, 1), 1, t1, rank, 1, b, 10, MPI_INTEGER, rank, 1, &
      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, 10
    call chk(b(j) == 400 + j, 'vector row')
  end do
  first_t = t1
  call MPI_TYPE_FREE(t1, ierr)
  call chk(t1 == MPI_DATATYPE_NULL, 'type_free')
  ! the freed handle's slot is reused by the next new type
  call MPI_TYPE_CONTIGUOUS(3, MPI_INTEGER, t1, ierr)
  reused_t = t1
  call chk(reused_t == first_t, 'handle slot reused')
  call MPI_TYPE_COMMIT(t1, ierr)
  ! indexed: diagonal elements a(1,1), a(3,3) ... (displacements in INTEGERs)
  call MPI_TYPE_INDEXED(2, (/ 1, 2 /), (/ 0, 22 /), MPI_INTEGER, t2, ierr)
  call MPI_TYPE_COMMIT(t2, ierr)
  call MPI_SENDRECV(a, 1, t2, rank, 2, b, 3, MPI_INTEGER, rank, 2, &
      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call chk(b(1) == 101 .and. b(2) == 303 .and. b(3) == 403, 'indexed')
  ! struct on absolute addresses: an INTEGER and 3 DOUBLEs, sent from
  ! MPI_BOTTOM
  call MPI_GET_ADDRESS(ival, disps(1), ierr)
  call MPI_GET_ADDRESS(s, disps(2), ierr)
  blens = (/ 1, 3 /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_TYPE_CREATE_STRUCT(2, blens, disps, types, t3, ierr)
  call MPI_TYPE_COMMIT(t3, ierr)
  if (np > 1) then
    src = mod(rank + np - 1, np)
    dst = mod(rank + 1, np)
  else
    src = 0
    dst = 0
  end if
  ival = rank
  s = (/ rank * 1.0d0, rank * 2.0d0, rank * 3.0d0 /)
  call MPI_SENDRECV_REPLACE(MPI_BOTTOM, 1, t3, dst, 3, src, 3, MPI_COMM_WORLD, &
      MPI_STATUS_IGNORE, ierr)
  call chk(ival == src .and. s(3) == src * 3.0d0, 'struct from MPI_BOTTOM')
  call MPI_TYPE_CREATE_RESIZED(MPI_INTEGER, 0_MPI_ADDRESS_KIND, &
      8_MPI_ADDRESS_KIND, t2, ierr)
  call MPI_TYPE_GET_EXTENT(t2, lb, ext, ierr)
  call chk(ext == 8, 'resized extent')
  call MPI_TYPE_SET_NAME(t2, 'every other int   ', ierr)
  call MPI_TYPE_GET_NAME(t2, oname, n, ierr)
  call chk(oname == 'every other int' .and. n == 15, 'type name')
  call MPI_TYPE_GET_NAME(MPI_DOUBLE_PRECISION, oname, n, ierr)
  call chk(oname == 'MPI_DOUBLE_PRECISION', 'predefined type name')
  call MPI_TYPE_FREE(t1, ierr)
  call MPI_TYPE_FREE(t2, ierr)
  call MPI_TYPE_FREE(t3, ierr)
  ! pack / unpack
  pos = 0
  call MPI_PACK(rank, 1, MPI_INTEGER, packbuf, 64, pos, MPI_COMM_WORLD, ierr)
  call MPI_PACK(s, 3, MPI_DOUBLE_PRECISION, packbuf, 64, pos, MPI_COMM_WORLD, ierr)
  call chk(pos == 28, 'pack position')
  call MPI_PACK_SIZE(3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, n, ierr)
  call chk(n >= 24, 'pack_size')
  pos = 0
  call MPI_UNPACK(packbuf, 64, pos, i, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call chk(i == rank, 'unpack')
  if (rank == 0) print '(a)', 'datatypes: ok'

  ! ---- communicators and groups
  call MPI_COMM_DUP(MPI_COMM_WORLD, dupc, ierr)
  call MPI_COMM_COMPARE(MPI_COMM_WORLD, dupc, res, ierr)
  call chk(res == MPI_CONGRUENT, 'dup congruent')
  call MPI_COMM_SET_NAME(dupc, 'my dup', ierr)
  call MPI_COMM_GET_NAME(dupc, oname, n, ierr)
  call chk(oname == 'my dup' .and. n == 6, 'comm name')
  call MPI_COMM_GET_NAME(MPI_COMM_WORLD, oname, n, ierr)
  call chk(oname == 'MPI_COMM_WORLD', 'world name')
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), -rank, newc, ierr)
  call MPI_COMM_SIZE(newc, n, ierr)
  call chk(n == (np + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_COMM_RANK(newc, i, ierr)
  ! key -rank: ranks in reverse order; the highest of my color is first
  j = merge(np - 1, np - 2, mod(np - 1, 2) == mod(rank, 2))
  call chk(i == (j - rank) / 2, 'split rank order')
  call MPI_ALLREDUCE(rank, j, 1, MPI_INTEGER, MPI_MAX, newc, ierr)
  call chk(mod(j, 2) == mod(rank, 2), 'split allreduce')
  call MPI_COMM_GROUP(MPI_COMM_WORLD, grp, ierr)
  call MPI_GROUP_INCL(grp, 1, (/ np - 1 /), grp2, ierr)
  call MPI_GROUP_SIZE(grp2, n, ierr)
  call MPI_GROUP_RANK(grp2, i, ierr)
  call chk(n == 1 .and. (i == 0 .eqv. rank == np - 1), 'group incl')
  call chk(i == 0 .or. i == MPI_UNDEFINED, 'group rank undefined')
  call MPI_GROUP_FREE(grp2, ierr)
  ! the same group handed out twice: each handle freed on its own
  call MPI_COMM_GROUP(MPI_COMM_WORLD, grp2, ierr)
  call MPI_GROUP_FREE(grp2, ierr)
  call chk(ierr == MPI_SUCCESS .and. grp2 == MPI_GROUP_NULL, 'second group freed')
  call MPI_GROUP_SIZE(grp, n, ierr)
  call chk(ierr == MPI_SUCCESS .and. n == np, 'first group still there')
  call MPI_GROUP_FREE(grp, ierr)
  call chk(ierr == MPI_SUCCESS .and. grp == MPI_GROUP_NULL, 'group_free')
  call MPI_COMM_FREE(newc, ierr)
  call MPI_COMM_FREE(dupc, ierr)
  call chk(dupc == MPI_COMM_NULL, 'comm_free')
  ! cart: as square as possible, periodic in dim 1
  dims = 0
  call MPI_DIMS_CREATE(np, 2, dims, ierr)
  call chk(dims(1) * dims(2) == np, 'dims_create')
  periods = (/ .true., .false. /)
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_CART_COORDS(cart, rank, 2, coords, ierr)
  call MPI_CART_RANK(cart, coords, i, ierr)
  call chk(i == rank, 'cart rank')
  call MPI_CART_SHIFT(cart, 0, 1, src, dst, ierr)
  call chk(dst == mod(coords(1) + 1, dims(1)) * dims(2) + coords(2), 'cart shift')
  call MPI_CART_SHIFT(cart, 1, 1, src, dst, ierr)
  if (coords(2) == dims(2) - 1) call chk(dst == MPI_PROC_NULL, 'cart edge')
  call MPI_CART_GET(cart, 2, dims, periods, coords, ierr)
  call chk(periods(1) .and. .not. periods(2), 'cart_get periods')
  call MPI_TOPO_TEST(cart, i, ierr)
  call chk(i == MPI_CART, 'topo_test')
  remain = (/ .false., .true. /)
  call MPI_CART_SUB(cart, remain, rowc, ierr)
  call MPI_COMM_SIZE(rowc, n, ierr)
  call chk(n == dims(2), 'cart_sub')
  call MPI_COMM_FREE(rowc, ierr)
  call MPI_COMM_FREE(cart, ierr)
  if (rank == 0) print '(a)', 'communicators: ok'

  ! ---- strings, errors, info, attributes
  call MPI_GET_PROCESSOR_NAME(pname, n, ierr)
  call chk(n > 0 .and. len_trim(pname) == n, 'processor name')
  call MPI_ERROR_STRING(MPI_ERR_RANK, estr, n, ierr)
  call chk(n > 0 .and. len_trim(estr) == n, 'error string')
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(b, 1, MPI_INTEGER, np + 5, 0, MPI_COMM_WORLD, ierr)
  call chk(ierr /= MPI_SUCCESS, 'bad rank returns')
  call MPI_ERROR_CLASS(ierr, i, ierr)
  call chk(i == MPI_ERR_RANK, 'error class rank')
  call MPI_SEND(b, 1, 12345, 0, 0, MPI_COMM_WORLD, ierr)
  call chk(ierr == MPI_ERR_TYPE, 'bad Fortran datatype handle')
  call MPI_BARRIER(777, ierr)
  call chk(ierr == MPI_ERR_COMM, 'bad Fortran comm handle')
  ecount = 0
  call MPI_COMM_CREATE_ERRHANDLER(my_handler, eh, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, eh, ierr)
  call MPI_SEND(b, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call chk(ecount == 1 .and. ierr == MPI_ERR_COUNT, 'Fortran error handler')
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_ERRHANDLER_FREE(eh, ierr)
  call chk(eh == MPI_ERRHANDLER_NULL, 'errhandler_free')
  call MPI_INFO_CREATE(info, ierr)
  call MPI_INFO_SET(info, 'color ', 'blue green', ierr)
  call MPI_INFO_GET(info, 'color', 40, val, flag, ierr)
  call chk(flag .and. val == 'blue green', 'info get')
  call MPI_INFO_GET(info, 'size', 40, val, flag, ierr)
  call chk(.not. flag, 'info missing key')
  call MPI_INFO_GET_VALUELEN(info, 'color', n, flag, ierr)
  call chk(flag .and. n == 10, 'info get_valuelen')
  call MPI_INFO_GET_NKEYS(info, n, ierr)
  call MPI_INFO_GET_NTHKEY(info, 0, val, ierr)
  call chk(n == 1 .and. val == 'color', 'info keys')
  call MPI_INFO_FREE(info, ierr)
  call chk(info == MPI_INFO_NULL, 'info_free')
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag, ierr)
  call chk(flag .and. tagub >= 32767, 'tag_ub')
  call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, ks, &
      0_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, ks, 4242_MPI_ADDRESS_KIND, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, dupc, ierr)
  call MPI_COMM_GET_ATTR(dupc, ks, addr, flag, ierr)
  call chk(flag .and. addr == 4242, 'attribute copied by MPI_COMM_DUP_FN')
  call MPI_COMM_FREE(dupc, ierr)
  call MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, ks, ierr)
  call MPI_COMM_FREE_KEYVAL(ks, ierr)
  ! MPI_ALLOC_MEM gives the address; the program maps an array on it
  call MPI_ALLOC_MEM(400_MPI_ADDRESS_KIND, MPI_INFO_NULL, addr, ierr)
  call chk(ierr == MPI_SUCCESS .and. addr /= 0, 'alloc_mem')
  cp = transfer(addr, cp)
  call c_f_pointer(cp, mem, (/ 100 /))
  mem = rank
  call MPI_ALLREDUCE(MPI_IN_PLACE, mem, 100, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call chk(mem(100) == np * (np - 1) / 2, 'reduce in alloc_mem memory')
  call MPI_FREE_MEM(mem, ierr)
  call chk(ierr == MPI_SUCCESS, 'free_mem')
  call chk(MPI_WTIME() >= t0, 'wtime')
  if (rank == 0) print '(a)', 'strings, errors, info, attributes: ok'

  call MPI_FINALIZE(ierr)
  call MPI_FINALIZED(flag, ierr)
  call chk(flag, 'finalized')

contains

#include "chk.inc"

end program f_misc

subroutine my_handler(comm, code)
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer :: comm, code, ecount
  common /ehcount/ ecount
  if (comm == MPI_COMM_WORLD .and. code == MPI_ERR_COUNT) ecount = ecount + 1
end subroutine my_handler
