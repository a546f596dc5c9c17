! tests/fortran/f_adi.F90: a NAS-BT-like kernel (built as f_adi with
! `use mpi` and f_adi_mpif with include 'mpif.h'). The 2-D heat equation
! u_t = u_xx + u_yy on the unit square (u = 0 on the border), N x N
! interior points, advanced by Peaceman-Rachford ADI: each half step is
! an implicit tridiagonal solve along one dimension (Thomas) and an
! explicit second difference along the other. The grid is split over a
! 2-D process grid (3 x 3 on 9 ranks): the line solves cross the
! processes of a row (x) or a column (y), pipelined in chunks of lines
! (forward elimination left to right, back substitution right to left,
! as BT's), and the explicit parts exchange halos (a strided MPI vector
! type for the x halo).
!
! The start is two eigenmodes of the discrete Laplacian, so the exact
! discrete answer is known: each mode (p, q) is multiplied per step by
! (1 - a_p)(1 - a_q) / ((1 + a_p)(1 + a_q)), a_k = dt/2 * lambda_k. The
! program checks the largest error against it and prints checksums with
! 10 digits (the same on any number of ranks).
!
!   f_adi [STEPS]     (default 40)
program f_adi
#ifndef MPIV_MPIF
  use mpi
#endif
  implicit none
#ifdef MPIV_MPIF
  include 'mpif.h'
#endif
  integer, parameter :: n = 48, nchunk = 4
  double precision, parameter :: pi = 3.14159265358979323846d0
  integer :: ierr, rank, np, cart, rowc, colc, dims(2), coords(2)
  integer :: nbx, nby, x0, y0, left, right, down, up, steps, step, i, j
  integer :: xhalo, nargs
  double precision :: h, dt, r, err, errmax, csum, gsum, t0
  double precision, allocatable :: u(:, :), w(:, :)
  character(len=32) :: arg
  logical :: periods(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  steps = 40
  if (rank == 0) then
    nargs = command_argument_count()
    if (nargs >= 1) then
      call get_command_argument(1, arg)
      read (arg, *) steps
    end if
  end if
  call MPI_BCAST(steps, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)

  dims = 0
  call MPI_DIMS_CREATE(np, 2, dims, ierr)
  if (mod(n, dims(1)) /= 0 .or. mod(n, dims(2)) /= 0) then
    if (rank == 0) write (0, '(a,i0,a,i0,a,i0)') 'f_adi: ', n, &
        ' points do not split over ', dims(1), ' x ', dims(2)
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  periods = .false.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_COMM_RANK(cart, rank, ierr)
  call MPI_CART_COORDS(cart, rank, 2, coords, ierr)
  call MPI_CART_SHIFT(cart, 0, 1, left, right, ierr)
  call MPI_CART_SHIFT(cart, 1, 1, down, up, ierr)
  call MPI_CART_SUB(cart, (/ .true., .false. /), rowc, ierr)
  call MPI_CART_SUB(cart, (/ .false., .true. /), colc, ierr)
  nbx = n / dims(1)
  nby = n / dims(2)
  x0 = coords(1) * nbx
  y0 = coords(2) * nby
  h = 1.0d0 / (n + 1)
  dt = 2.0d-3
  r = dt / (2.0d0 * h * h)

  ! u with one ghost layer; a column of x ghosts is strided in memory
  allocate (u(0:nbx + 1, 0:nby + 1), w(0:nbx + 1, 0:nby + 1))
  call MPI_TYPE_VECTOR(nby, 1, nbx + 2, MPI_DOUBLE_PRECISION, xhalo, ierr)
  call MPI_TYPE_COMMIT(xhalo, ierr)
  u = 0.0d0
  do j = 1, nby
    do i = 1, nbx
      u(i, j) = exact(x0 + i, y0 + j, 0)
    end do
  end do

  t0 = MPI_WTIME()
  do step = 1, steps
    ! half step 1: (I - dt/2 Dxx) w = (I + dt/2 Dyy) u
    call halo_y(u)
    do j = 1, nby
      do i = 1, nbx
        w(i, j) = u(i, j) + r * (u(i, j - 1) - 2.0d0 * u(i, j) + u(i, j + 1))
      end do
    end do
    call solve_x(w)
    ! half step 2: (I - dt/2 Dyy) u = (I + dt/2 Dxx) w
    call halo_x(w)
    do j = 1, nby
      do i = 1, nbx
        u(i, j) = w(i, j) + r * (w(i - 1, j) - 2.0d0 * w(i, j) + w(i + 1, j))
      end do
    end do
    call solve_y(u)
    if (mod(step, 10) == 0 .or. step == steps) then
      csum = sum(u(1:nbx, 1:nby))
      call MPI_REDUCE(csum, gsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, cart, ierr)
      if (rank == 0) print '(a,i4,a,es17.9e3)', 'step', step, '  sum', gsum
    end if
  end do

  err = 0.0d0
  do j = 1, nby
    do i = 1, nbx
      err = max(err, abs(u(i, j) - exact(x0 + i, y0 + j, steps)))
    end do
  end do
  call MPI_ALLREDUCE(err, errmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, cart, ierr)
  if (errmax > 1.0d-10) then
    if (rank == 0) write (0, '(a,es10.3)') 'FAIL: f_adi: error vs the exact answer ', errmax
    call MPI_ABORT(MPI_COMM_WORLD, 3, ierr)
  end if
  if (rank == 0) then
    print '(a,i0,a,i0,a,i0,a)', 'adi ', n, 'x', n, ' steps ', steps, &
        ': matches the exact answer (error < 1e-10)'
    write (0, '(a,i0,a,i0,a,f8.3,a)') 'f_adi: ', dims(1), ' x ', dims(2), &
        ' ranks, ', MPI_WTIME() - t0, ' s'
  end if
  call MPI_TYPE_FREE(xhalo, ierr)
  call MPI_COMM_FREE(rowc, ierr)
  call MPI_COMM_FREE(colc, ierr)
  call MPI_COMM_FREE(cart, ierr)
  call MPI_FINALIZE(ierr)

contains

  ! The exact discrete solution at global point (gi, gj) after k steps.
  double precision function exact(gi, gj, k)
    integer, intent(in) :: gi, gj, k
    exact = mode(1, 1, gi, gj, k) + 0.5d0 * mode(2, 3, gi, gj, k)
  end function exact

  double precision function mode(p, q, gi, gj, k)
    integer, intent(in) :: p, q, gi, gj, k
    double precision :: ap, aq
    ap = dt / 2.0d0 * 4.0d0 / (h * h) * sin(p * pi * h / 2.0d0) ** 2
    aq = dt / 2.0d0 * 4.0d0 / (h * h) * sin(q * pi * h / 2.0d0) ** 2
    mode = ((1.0d0 - ap) * (1.0d0 - aq) / ((1.0d0 + ap) * (1.0d0 + aq))) ** k &
        * sin(p * pi * gi * h) * sin(q * pi * gj * h)
  end function mode

  ! y ghosts (rows j = 0 and nby + 1: contiguous)
  subroutine halo_y(a)
    double precision, intent(inout) :: a(0:nbx + 1, 0:nby + 1)
    call MPI_SENDRECV(a(1, nby), nbx, MPI_DOUBLE_PRECISION, up, 1, &
        a(1, 0), nbx, MPI_DOUBLE_PRECISION, down, 1, cart, MPI_STATUS_IGNORE, ierr)
    call MPI_SENDRECV(a(1, 1), nbx, MPI_DOUBLE_PRECISION, down, 2, &
        a(1, nby + 1), nbx, MPI_DOUBLE_PRECISION, up, 2, cart, MPI_STATUS_IGNORE, ierr)
    if (down == MPI_PROC_NULL) a(:, 0) = 0.0d0
    if (up == MPI_PROC_NULL) a(:, nby + 1) = 0.0d0
  end subroutine halo_y

  ! x ghosts (columns i = 0 and nbx + 1: strided, one xhalo each),
  ! non-blocking
  subroutine halo_x(a)
    double precision, intent(inout) :: a(0:nbx + 1, 0:nby + 1)
    integer :: req(4), st(MPI_STATUS_SIZE, 4)
    call MPI_IRECV(a(0, 1), 1, xhalo, left, 3, cart, req(1), ierr)
    call MPI_IRECV(a(nbx + 1, 1), 1, xhalo, right, 4, cart, req(2), ierr)
    call MPI_ISEND(a(nbx, 1), 1, xhalo, right, 3, cart, req(3), ierr)
    call MPI_ISEND(a(1, 1), 1, xhalo, left, 4, cart, req(4), ierr)
    call MPI_WAITALL(4, req, st, ierr)
    if (left == MPI_PROC_NULL) a(0, :) = 0.0d0
    if (right == MPI_PROC_NULL) a(nbx + 1, :) = 0.0d0
  end subroutine halo_x

  ! Thomas along x for every line j, lines pipelined in nchunk chunks
  ! across the row: a = c = -r, b = 1 + 2r.
  subroutine solve_x(a)
    double precision, intent(inout) :: a(0:nbx + 1, 0:nby + 1)
    double precision :: cp(nbx, nby), msg(2 * nby), den
    integer :: ch, j1, j2, nl, i, j
    do ch = 1, nchunk
      j1 = (ch - 1) * nby / nchunk + 1
      j2 = ch * nby / nchunk
      nl = j2 - j1 + 1
      if (left /= MPI_PROC_NULL) then
        call MPI_RECV(msg, 2 * nl, MPI_DOUBLE_PRECISION, left, 10 + ch, cart, &
            MPI_STATUS_IGNORE, ierr)
      else
        msg(1:2 * nl) = 0.0d0
      end if
      do j = j1, j2
        ! msg: (c', d') of the last point of the left neighbour
        den = 1.0d0 + 2.0d0 * r + r * msg(2 * (j - j1) + 1)
        cp(1, j) = -r / den
        a(1, j) = (a(1, j) + r * msg(2 * (j - j1) + 2)) / den
        do i = 2, nbx
          den = 1.0d0 + 2.0d0 * r + r * cp(i - 1, j)
          cp(i, j) = -r / den
          a(i, j) = (a(i, j) + r * a(i - 1, j)) / den
        end do
        msg(2 * (j - j1) + 1) = cp(nbx, j)
        msg(2 * (j - j1) + 2) = a(nbx, j)
      end do
      if (right /= MPI_PROC_NULL) &
          call MPI_SEND(msg, 2 * nl, MPI_DOUBLE_PRECISION, right, 10 + ch, cart, ierr)
    end do
    do ch = 1, nchunk
      j1 = (ch - 1) * nby / nchunk + 1
      j2 = ch * nby / nchunk
      nl = j2 - j1 + 1
      if (right /= MPI_PROC_NULL) then
        call MPI_RECV(msg, nl, MPI_DOUBLE_PRECISION, right, 20 + ch, cart, &
            MPI_STATUS_IGNORE, ierr)
      else
        msg(1:nl) = 0.0d0
      end if
      do j = j1, j2
        a(nbx, j) = a(nbx, j) - cp(nbx, j) * msg(j - j1 + 1)
        do i = nbx - 1, 1, -1
          a(i, j) = a(i, j) - cp(i, j) * a(i + 1, j)
        end do
        msg(j - j1 + 1) = a(1, j)
      end do
      if (left /= MPI_PROC_NULL) &
          call MPI_SEND(msg, nl, MPI_DOUBLE_PRECISION, left, 20 + ch, cart, ierr)
    end do
  end subroutine solve_x

  ! The same along y for every line i, across the column.
  subroutine solve_y(a)
    double precision, intent(inout) :: a(0:nbx + 1, 0:nby + 1)
    double precision :: cp(nbx, nby), msg(2 * nbx), den
    integer :: ch, i1, i2, nl, i, j
    do ch = 1, nchunk
      i1 = (ch - 1) * nbx / nchunk + 1
      i2 = ch * nbx / nchunk
      nl = i2 - i1 + 1
      if (down /= MPI_PROC_NULL) then
        call MPI_RECV(msg, 2 * nl, MPI_DOUBLE_PRECISION, down, 30 + ch, cart, &
            MPI_STATUS_IGNORE, ierr)
      else
        msg(1:2 * nl) = 0.0d0
      end if
      do i = i1, i2
        den = 1.0d0 + 2.0d0 * r + r * msg(2 * (i - i1) + 1)
        cp(i, 1) = -r / den
        a(i, 1) = (a(i, 1) + r * msg(2 * (i - i1) + 2)) / den
        do j = 2, nby
          den = 1.0d0 + 2.0d0 * r + r * cp(i, j - 1)
          cp(i, j) = -r / den
          a(i, j) = (a(i, j) + r * a(i, j - 1)) / den
        end do
        msg(2 * (i - i1) + 1) = cp(i, nby)
        msg(2 * (i - i1) + 2) = a(i, nby)
      end do
      if (up /= MPI_PROC_NULL) &
          call MPI_SEND(msg, 2 * nl, MPI_DOUBLE_PRECISION, up, 30 + ch, cart, ierr)
    end do
    do ch = 1, nchunk
      i1 = (ch - 1) * nbx / nchunk + 1
      i2 = ch * nbx / nchunk
      nl = i2 - i1 + 1
      if (up /= MPI_PROC_NULL) then
        call MPI_RECV(msg, nl, MPI_DOUBLE_PRECISION, up, 40 + ch, cart, &
            MPI_STATUS_IGNORE, ierr)
      else
        msg(1:nl) = 0.0d0
      end if
      do i = i1, i2
        a(i, nby) = a(i, nby) - cp(i, nby) * msg(i - i1 + 1)
        do j = nby - 1, 1, -1
          a(i, j) = a(i, j) - cp(i, j) * a(i, j + 1)
        end do
        msg(i - i1 + 1) = a(i, 1)
      end do
      if (down /= MPI_PROC_NULL) &
          call MPI_SEND(msg, nl, MPI_DOUBLE_PRECISION, down, 40 + ch, cart, ierr)
    end do
  end subroutine solve_y

end program f_adi
