! tests/fortran/file_io.F90: the Fortran bindings of MPI-IO, through the
! `mpi` module (file_io) and include 'mpif.h' (file_io_mpif). Each rank
! writes its block of INTEGERs at an explicit INTEGER(MPI_OFFSET_KIND)
! offset (collective), reads its right neighbour's back, reads through
! views (contiguous and strided), checks sizes, preallocation, the
! shared file pointer (ordered and shared writes), non-blocking and
! split collective calls, atomicity, group, info, amode and the error
! handlers (a missing file without MPI_MODE_CREATE is
! MPI_ERR_NO_SUCH_FILE, returned by default; a closed handle is
! MPI_ERR_FILE), then deletes the file. The file is in $TMPDIR (mpiv's
! own for each run), else in the current directory. Checks abort; rank 0
! prints a line per family.
program file_io
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer, parameter :: n = 16
  integer :: ierr, rank, np, i, right, cls, cnt, amode, fh, fh2, old
  integer :: grp, res, info, etype, ftype, strided, eh, req, ssum
  integer :: buf(n), got(n), all(64), st(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: off, sz, pos, disp, total
  integer(kind=MPI_ADDRESS_KIND) :: ext
  logical :: flag
  character(len=512) :: fname, dir
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  external :: file_io_handler

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call chk(np <= 64 / 2, 'at most 32 ranks')

  ! the file: in rank 0's $TMPDIR, which mpiv makes for each run (the
  ! same for a rank's every incarnation: no clock, the name must not
  ! change when a rank is re-executed), else in the current directory
  call get_environment_variable('TMPDIR', dir, status=i)
  if (i /= 0 .or. len_trim(dir) == 0) dir = '.'
#ifdef MPIV_MPIF
  fname = trim(dir) // '/mpiv_ffile_h.dat'
#else
  fname = trim(dir) // '/mpiv_ffile_m.dat'
#endif
  call MPI_BCAST(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)

  ! a missing file without MPI_MODE_CREATE: files return errors
  call MPI_FILE_OPEN(MPI_COMM_WORLD, trim(fname) // '.missing', &
      MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call chk(ierr /= MPI_SUCCESS, 'open missing: succeeded')
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  call chk(cls == MPI_ERR_NO_SUCH_FILE, 'open missing: class')
  call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY + &
      MPI_MODE_CREATE, MPI_INFO_NULL, fh, ierr)
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  call chk(cls == MPI_ERR_AMODE, 'RDONLY with CREATE')

  call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + &
      MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call chk(ierr == MPI_SUCCESS, 'open')
  call chk(fh /= MPI_FILE_NULL, 'open: handle')
  call MPI_FILE_GET_AMODE(fh, amode, ierr)
  call chk(amode == MPI_MODE_CREATE + MPI_MODE_RDWR, 'get_amode')
  call MPI_FILE_GET_GROUP(fh, grp, ierr)
  call MPI_GROUP_SIZE(grp, res, ierr)
  call chk(res == np, 'get_group: size')
  call MPI_GROUP_RANK(grp, res, ierr)
  call chk(res == rank, 'get_group: rank')
  call MPI_GROUP_FREE(grp, ierr)
  call chk(grp == MPI_GROUP_NULL, 'get_group: free')
  call MPI_FILE_GET_INFO(fh, info, ierr)
  call chk(ierr == MPI_SUCCESS .and. info /= MPI_INFO_NULL, 'get_info')
  call MPI_FILE_SET_INFO(fh, info, ierr)
  call chk(ierr == MPI_SUCCESS, 'set_info')
  call MPI_INFO_FREE(info, ierr)
  call MPI_FILE_SET_ATOMICITY(fh, .true., ierr)
  call MPI_FILE_GET_ATOMICITY(fh, flag, ierr)
  call chk(flag, 'get_atomicity true')
  call MPI_FILE_SET_ATOMICITY(fh, .false., ierr)
  call MPI_FILE_GET_ATOMICITY(fh, flag, ierr)
  call chk(.not. flag, 'get_atomicity false')
  call MPI_FILE_GET_TYPE_EXTENT(fh, MPI_INTEGER, ext, ierr)
  call chk(ext == 4, 'get_type_extent')
  if (rank == 0) print '(a)', 'open: ok'

  ! explicit offsets: each rank its block, collectively
  do i = 1, n
    buf(i) = rank * 1000 + i
  end do
  off = int(rank, kind=MPI_OFFSET_KIND) * n * 4
  call MPI_FILE_WRITE_AT_ALL(fh, off, buf, n, MPI_INTEGER, st, ierr)
  call chk(ierr == MPI_SUCCESS, 'write_at_all')
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  call chk(cnt == n, 'write_at_all: count')
  call settle()
  right = mod(rank + 1, np)
  off = int(right, kind=MPI_OFFSET_KIND) * n * 4
  got = -1
  call MPI_FILE_READ_AT(fh, off, got, n, MPI_INTEGER, st, ierr)
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  call chk(cnt == n, 'read_at: count')
  do i = 1, n
    call chk(got(i) == right * 1000 + i, 'read_at: neighbour')
  end do
  total = int(np, kind=MPI_OFFSET_KIND) * n * 4
  call MPI_FILE_GET_SIZE(fh, sz, ierr)
  call chk(sz == total, 'get_size')
  ! past the end: fewer elements, no error
  call MPI_FILE_READ_AT(fh, total - 8, got, n, MPI_INTEGER, st, ierr)
  call chk(ierr == MPI_SUCCESS, 'read_at past the end')
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  call chk(cnt == 2, 'read_at past the end: count')
  ! (a barrier around each change of size: the others are reading it)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FILE_PREALLOCATE(fh, total + 40, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FILE_GET_SIZE(fh, sz, ierr)
  call chk(sz == total + 40, 'preallocate')
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FILE_SET_SIZE(fh, total, ierr)
  call MPI_FILE_GET_SIZE(fh, sz, ierr)
  call chk(sz == total, 'set_size')
  if (rank == 0) print '(a)', 'explicit offsets: ok'

  ! a view of its own block: the individual file pointer counts INTEGERs
  disp = int(rank, kind=MPI_OFFSET_KIND) * n * 4
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', &
      MPI_INFO_NULL, ierr)
  call chk(ierr == MPI_SUCCESS, 'set_view')
  call MPI_FILE_GET_VIEW(fh, pos, etype, ftype, rep, ierr)
  call chk(pos == disp, 'get_view: disp')
  call chk(etype == MPI_INTEGER .and. ftype == MPI_INTEGER, 'get_view: types')
  call chk(rep == 'native', 'get_view: datarep')
  got = -1
  call MPI_FILE_READ_ALL(fh, got, n / 2, MPI_INTEGER, st, ierr)
  call MPI_FILE_READ(fh, got(n / 2 + 1), n / 2, MPI_INTEGER, st, ierr)
  do i = 1, n
    call chk(got(i) == rank * 1000 + i, 'read_all in a view')
  end do
  call MPI_FILE_GET_POSITION(fh, pos, ierr)
  call chk(pos == n, 'get_position')
  call MPI_FILE_GET_BYTE_OFFSET(fh, pos, off, ierr)
  call chk(off == disp + n * 4, 'get_byte_offset')
  call MPI_FILE_SEEK(fh, -4_MPI_OFFSET_KIND, MPI_SEEK_CUR, ierr)
  call MPI_FILE_READ(fh, got, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call chk(got(1) == rank * 1000 + n - 3, 'seek cur')
  ! writes through the individual pointer: the last two of its block
  call MPI_FILE_SEEK(fh, int(n - 2, kind=MPI_OFFSET_KIND), MPI_SEEK_SET, ierr)
  buf(1) = -rank
  buf(2) = -rank - 1
  call MPI_FILE_WRITE(fh, buf, 1, MPI_INTEGER, st, ierr)
  call MPI_FILE_WRITE_ALL(fh, buf(2), 1, MPI_INTEGER, st, ierr)
  call chk(ierr == MPI_SUCCESS, 'write_all')
  call settle()
  ! a strided view: the first INTEGER of every block
  call MPI_TYPE_CREATE_RESIZED(MPI_INTEGER, 0_MPI_ADDRESS_KIND, &
      int(n * 4, kind=MPI_ADDRESS_KIND), strided, ierr)
  call MPI_TYPE_COMMIT(strided, ierr)
  call MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, strided, &
      'native', MPI_INFO_NULL, ierr)
  all = -1
  call MPI_FILE_READ_AT_ALL(fh, 0_MPI_OFFSET_KIND, all, np, MPI_INTEGER, &
      st, ierr)
  do i = 1, np
    call chk(all(i) == (i - 1) * 1000 + 1, 'strided view')
  end do
  call MPI_FILE_GET_BYTE_OFFSET(fh, 2_MPI_OFFSET_KIND, off, ierr)
  call chk(off == 2 * n * 4, 'get_byte_offset strided')
  call MPI_TYPE_FREE(strided, ierr)
  call MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, &
      'native', MPI_INFO_NULL, ierr)
  off = int(rank, kind=MPI_OFFSET_KIND) * n + n - 2
  call MPI_FILE_READ_AT(fh, off, got, 2, MPI_INTEGER, st, ierr)
  call chk(got(1) == -rank .and. got(2) == -rank - 1, 'write, write_all')
  if (rank == 0) print '(a)', 'views: ok'

  ! the shared file pointer, after everyone's blocks (the view counts
  ! INTEGERs): ordered writes in rank order, then one shared write each
  call MPI_FILE_SEEK_SHARED(fh, int(np * n, kind=MPI_OFFSET_KIND), &
      MPI_SEEK_SET, ierr)
  buf(1) = rank
  buf(2) = 100 + rank
  call MPI_FILE_WRITE_ORDERED(fh, buf, 2, MPI_INTEGER, st, ierr)
  call chk(ierr == MPI_SUCCESS, 'write_ordered')
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  call chk(cnt == 2, 'write_ordered: count')
  call MPI_FILE_GET_POSITION_SHARED(fh, pos, ierr)
  call chk(pos == np * n + 2 * np, 'get_position_shared')
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  buf(1) = 500 + rank
  call MPI_FILE_WRITE_SHARED(fh, buf, 1, MPI_INTEGER, st, ierr)
  call settle()
  call MPI_FILE_GET_POSITION_SHARED(fh, pos, ierr)
  call chk(pos == np * n + 3 * np, 'write_shared: position')
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  all = -1
  call MPI_FILE_READ_AT_ALL(fh, int(np * n, kind=MPI_OFFSET_KIND), all, &
      3 * np, MPI_INTEGER, st, ierr)
  do i = 0, np - 1
    call chk(all(2 * i + 1) == i .and. all(2 * i + 2) == 100 + i, &
        'write_ordered: data')
  end do
  ssum = 0
  do i = 2 * np + 1, 3 * np
    ssum = ssum + all(i)
  end do
  call chk(ssum == 500 * np + np * (np - 1) / 2, 'write_shared: data')
  ! ordered reads of the same: each rank its own pair
  call MPI_FILE_SEEK_SHARED(fh, int(np * n, kind=MPI_OFFSET_KIND), &
      MPI_SEEK_SET, ierr)
  call MPI_FILE_READ_ORDERED(fh, got, 2, MPI_INTEGER, st, ierr)
  call chk(got(1) == rank .and. got(2) == 100 + rank, 'read_ordered')
  call MPI_FILE_GET_SIZE(fh, sz, ierr)
  call chk(sz == (np * n + 3 * np) * 4, 'get_size after shared writes')
  if (rank == 0) print '(a)', 'shared pointer: ok'

  ! non-blocking and split collective calls
  off = int(right, kind=MPI_OFFSET_KIND) * n
  got = -1
  call MPI_FILE_IREAD_AT(fh, off, got, n - 2, MPI_INTEGER, req, ierr)
  call MPI_WAIT(req, st, ierr)
  call chk(req == MPI_REQUEST_NULL, 'iread_at: request')
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  call chk(cnt == n - 2, 'iread_at: count')
  do i = 1, n - 2
    call chk(got(i) == right * 1000 + i, 'iread_at: data')
  end do
  do i = 1, n
    buf(i) = 7000 + rank * 100 + i
  end do
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)  ! the neighbour has read
  off = int(rank, kind=MPI_OFFSET_KIND) * n
  call MPI_FILE_IWRITE_AT_ALL(fh, off, buf, n, MPI_INTEGER, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  call settle()
  got = -1
  call MPI_FILE_READ_AT_ALL_BEGIN(fh, off, got, n, MPI_INTEGER, ierr)
  call MPI_FILE_READ_AT_ALL_END(fh, got, st, ierr)
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  call chk(cnt == n, 'read_at_all_end: count')
  do i = 1, n
    call chk(got(i) == buf(i), 'iwrite_at_all, read_at_all_begin')
  end do
  call MPI_FILE_SEEK(fh, off, MPI_SEEK_SET, ierr)
  got = -1
  call MPI_FILE_IREAD(fh, got, 2, MPI_INTEGER, req, ierr)
  call MPI_WAIT(req, st, ierr)
  call MPI_FILE_READ_ALL_BEGIN(fh, got(3), 2, MPI_INTEGER, ierr)
  call MPI_FILE_READ_ALL_END(fh, got(3), st, ierr)
  do i = 1, 4
    call chk(got(i) == buf(i), 'iread, read_all_begin')
  end do
  call MPI_FILE_GET_POSITION(fh, pos, ierr)
  call chk(pos == off + 4, 'position after iread, read_all_end')
  if (rank == 0) print '(a)', 'nonblocking: ok'

  ! error handlers: MPI_ERRORS_RETURN by default; a closed handle
  call MPI_FILE_GET_ERRHANDLER(fh, eh, ierr)
  call chk(eh == MPI_ERRORS_RETURN, 'get_errhandler')
  call MPI_ERRHANDLER_FREE(eh, ierr)
  call MPI_FILE_SET_ERRHANDLER(fh, MPI_ERRORS_RETURN, ierr)
  call chk(ierr == MPI_SUCCESS, 'set_errhandler')
  call MPI_FILE_CALL_ERRHANDLER(fh, MPI_ERR_IO, ierr)
#ifndef OTHER_MPI
  ! erroneous (a communicator's handler on a file): mpiv refuses it
  ! (-DOTHER_MPI leaves it out, to run this under another MPI)
  call MPI_COMM_CREATE_ERRHANDLER(file_io_handler, eh, ierr)
  call MPI_FILE_SET_ERRHANDLER(fh, eh, ierr)
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  call chk(cls == MPI_ERR_ARG, 'a communicator handler on a file')
  call MPI_ERRHANDLER_FREE(eh, ierr)
#endif
  call MPI_FILE_SET_VIEW(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, &
      'external99', MPI_INFO_NULL, ierr)
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  call chk(cls == MPI_ERR_UNSUPPORTED_DATAREP, 'unknown datarep')
  old = fh
  call MPI_FILE_CLOSE(fh, ierr)
  call chk(ierr == MPI_SUCCESS, 'close')
  call chk(fh == MPI_FILE_NULL, 'close: handle')
  call MPI_FILE_GET_SIZE(old, sz, ierr)
  call chk(ierr /= MPI_SUCCESS, 'closed handle: succeeded')
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  call chk(cls == MPI_ERR_FILE, 'closed handle: class')

  ! another open, read-only, then delete
  call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, &
      MPI_INFO_NULL, fh2, ierr)
  call chk(ierr == MPI_SUCCESS, 'open read-only')
  call MPI_FILE_READ_AT(fh2, int(right, kind=MPI_OFFSET_KIND) * n * 4, got, &
      1, MPI_INTEGER, st, ierr)
  call chk(got(1) == 7000 + right * 100 + 1, 'read-only read')
  call MPI_FILE_WRITE_AT(fh2, 0_MPI_OFFSET_KIND, buf, 1, MPI_INTEGER, st, ierr)
  call chk(ierr /= MPI_SUCCESS, 'write to read-only: succeeded')
  call MPI_FILE_CLOSE(fh2, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_FILE_DELETE(fname, MPI_INFO_NULL, ierr)
    call chk(ierr == MPI_SUCCESS, 'delete')
    call MPI_FILE_DELETE(fname, MPI_INFO_NULL, ierr)
    call MPI_ERROR_CLASS(ierr, cls, ierr)
    call chk(cls == MPI_ERR_NO_SUCH_FILE, 'delete again')
  end if
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, &
      MPI_INFO_NULL, fh, ierr)
  call MPI_ERROR_CLASS(ierr, cls, ierr)
  call chk(cls == MPI_ERR_NO_SUCH_FILE, 'open deleted')
  if (rank == 0) print '(a)', 'errors: ok'

  call MPI_FINALIZE(ierr)

contains

  ! MPI's consistency rule between ranks: sync, barrier, sync
  subroutine settle()
    integer :: e
    call MPI_FILE_SYNC(fh, e)
    call chk(e == MPI_SUCCESS, 'sync')
    call MPI_BARRIER(MPI_COMM_WORLD, e)
    call MPI_FILE_SYNC(fh, e)
  end subroutine settle

#include "chk.inc"

end program file_io

subroutine file_io_handler(comm, code)
  implicit none
  integer :: comm, code
  write (0, '(a,i0,a,i0)') 'FAIL: handler called: comm ', comm, ' code ', code
  stop 3
end subroutine file_io_handler
