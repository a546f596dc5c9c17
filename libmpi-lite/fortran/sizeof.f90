! libmpi-lite/fortran/sizeof.f90: MPI_SIZEOF, the module procedure of the
! `mpi` module (after its "contains"; mpi_f08's MPI_Sizeof is the same
! with IERROR optional, made from this text by the Makefile). The size in
! bytes of one element of X, of any intrinsic type and any rank (one
! character of a CHARACTER): what MPI_TYPE_MATCH_SIZE takes.
  subroutine MPI_SIZEOF(x, size, ierror)
    class(*), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    ierror = MPI_SUCCESS
  end subroutine MPI_SIZEOF
