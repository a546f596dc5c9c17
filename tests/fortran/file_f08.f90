! tests/fortran/file_f08.f90: MPI-IO through the `mpi_f08` module:
! TYPE(MPI_File) and its == and /=, MPI_FILE_NULL, optional IERROR,
! INTEGER(MPI_OFFSET_KIND) offsets, TYPE(MPI_Status) out of a read, a
! view, the shared file pointer, a non-blocking read, the error class of
! a missing file, close and delete. The file is in $TMPDIR (mpiv's own
! for each run), else in the current directory. Checks abort; rank 0
! prints.
program file_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 8
  integer :: rank, np, i, ierr, cls, cnt, right
  integer :: buf(n), got(n)
  integer(kind=MPI_OFFSET_KIND) :: off, sz, pos
  type(MPI_File) :: fh, gone
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  type(MPI_Datatype) :: et, ft
  type(MPI_Errhandler) :: eh
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  character(len=512) :: fname, dir

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  ! in rank 0's $TMPDIR (mpiv's own for each run), else the current
  ! directory
  call get_environment_variable('TMPDIR', dir, status=i)
  if (i /= 0 .or. len_trim(dir) == 0) dir = '.'
  fname = trim(dir) // '/mpiv_ffile_8.dat'
  call MPI_Bcast(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD)

  call MPI_File_open(MPI_COMM_WORLD, trim(fname) // '.missing', &
      MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, cls)
  call chk(cls == MPI_ERR_NO_SUCH_FILE, 'open missing')

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, &
      MPI_INFO_NULL, fh)
  call chk(fh /= MPI_FILE_NULL, 'open')
  call MPI_File_get_errhandler(fh, eh)
  call chk(eh == MPI_ERRORS_RETURN, 'get_errhandler')
  call MPI_Errhandler_free(eh)
  do i = 1, n
    buf(i) = rank * 100 + i
  end do
  off = int(rank, kind=MPI_OFFSET_KIND) * n * 4
  call MPI_File_write_at_all(fh, off, buf, n, MPI_INTEGER, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call chk(cnt == n, 'write_at_all: count')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  right = mod(rank + 1, np)
  call MPI_File_read_at(fh, int(right, kind=MPI_OFFSET_KIND) * n * 4, got, &
      n, MPI_INTEGER, st, ierr)
  call chk(ierr == MPI_SUCCESS, 'read_at')
  do i = 1, n
    call chk(got(i) == right * 100 + i, 'read_at: data')
  end do
  call MPI_File_get_size(fh, sz)
  call chk(sz == int(np, kind=MPI_OFFSET_KIND) * n * 4, 'get_size')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'f08 files: ok'

  ! a view of its own block, read collectively
  call MPI_File_set_view(fh, off, MPI_INTEGER, MPI_INTEGER, 'native', &
      MPI_INFO_NULL)
  call MPI_File_get_view(fh, pos, et, ft, rep)
  call chk(pos == off .and. et == MPI_INTEGER .and. ft == MPI_INTEGER, &
      'get_view')
  call chk(rep == 'native', 'get_view: datarep')
  got = -1
  call MPI_File_read_all(fh, got, n, MPI_INTEGER, st)
  do i = 1, n
    call chk(got(i) == buf(i), 'read_all in a view')
  end do
  call MPI_File_get_position(fh, pos)
  call chk(pos == n, 'get_position')
  ! the shared pointer: one INTEGER each after the blocks, in rank order
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, &
      'native', MPI_INFO_NULL)
  call MPI_File_seek_shared(fh, int(np * n, kind=MPI_OFFSET_KIND), &
      MPI_SEEK_SET)
  buf(1) = -rank
  call MPI_File_write_ordered(fh, buf, 1, MPI_INTEGER, MPI_STATUS_IGNORE)
  call MPI_File_get_position_shared(fh, pos)
  call chk(pos == np * n + np, 'get_position_shared')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)
  call MPI_File_iread_at(fh, int(np * n + right, kind=MPI_OFFSET_KIND), &
      got, 1, MPI_INTEGER, req)
  call MPI_Wait(req, st)
  call chk(req == MPI_REQUEST_NULL, 'iread_at: request')
  call chk(got(1) == -right, 'write_ordered, iread_at')
  if (rank == 0) print '(a)', 'f08 views and shared pointer: ok'

  gone = fh
  call MPI_File_close(fh)
  call chk(fh == MPI_FILE_NULL, 'close')
  call MPI_File_get_size(gone, sz, ierr)
  call MPI_Error_class(ierr, cls)
  call chk(cls == MPI_ERR_FILE, 'closed handle')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
    call chk(ierr == MPI_SUCCESS, 'delete')
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &
      fh, ierr)
  call MPI_Error_class(ierr, cls)
  call chk(cls == MPI_ERR_NO_SUCH_FILE, 'open deleted')
  if (rank == 0) print '(a)', 'f08 file errors: ok'
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

end program file_f08
