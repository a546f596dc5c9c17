! libmpi-lite/fortran/procs.f90: the module procedures of the `mpi`
! module (after its "contains"; mpi_f08 has the same, with IERROR
! optional, made from this text by the Makefile).
!
! MPI_SIZEOF: the size in bytes of one element of X, of any intrinsic
! type and any rank (one character of a CHARACTER): what
! MPI_TYPE_MATCH_SIZE takes.
  subroutine MPI_SIZEOF(x, size, ierror)
    class(*), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = int(storage_size(x) / 8)
    ierror = MPI_SUCCESS
  end subroutine MPI_SIZEOF

! MPI_F_SYNC_REG: a call the compiler cannot see through (a C function
! of libmpi.so takes BUF), so a copy of BUF it holds in a register is
! stored before and loaded again after: what a program calls around a
! non-blocking operation's buffer that it touches itself. mpif.h
! programs get the C function mpi_f_sync_reg_ directly (fbind.c).
  subroutine MPI_F_SYNC_REG(buf)
    type(*), dimension(..) :: buf
    interface
      subroutine mpi_f_sync_reg_cdesc(b) bind(C, name='mpi_f_sync_reg_cdesc_')
        type(*), dimension(..) :: b
      end subroutine mpi_f_sync_reg_cdesc
    end interface
    call mpi_f_sync_reg_cdesc(buf)
  end subroutine MPI_F_SYNC_REG
