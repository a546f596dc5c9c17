#!/usr/bin/env bash
# tests/integration/test_mpifort.sh: the Fortran build side.
#   - mpifort -show: gfortran, mpiv's include dir, -lmpi, and
#     -fallow-argument-mismatch when gfortran is 10 or later; mpif90 and
#     mpif77 are the same wrapper; no input file is a usage error
#   - every line of libmpi-lite/fortran/functions.tbl is a symbol of
#     libmpi.so and libmpi.a (mpi_NAME_ and pmpi_NAME_)
#   - a free-form program with include 'mpif.h' passing INTEGER, REAL and
#     CHARACTER buffers to the same routines (what NAS codes do) builds
#     with mpif90, and with MPIFORT_STATIC=1 (libmpi.a), and both run
#     right under mpiv run
#   - the `mpi` module's explicit interfaces reject a wrong argument type
#     at compile time, with a message naming the routine; so does
#     mpi_f08 for an INTEGER where a TYPE(MPI_Comm) goes
#   - a `use mpi_f08` program (tests/fortran/f08_basic.f90) links with
#     MPIFORT_STATIC=1 and runs
#   - mixed languages: Fortran hands a communicator, a datatype, a request
#     and a status to C (MPI_Comm_f2c, MPI_Type_f2c, MPI_Request_f2c,
#     MPI_Status_f2c/c2f), C hands back a new communicator
#     (MPI_Comm_c2f); both sides use them
# Exit 77 when gfortran was missing at build time.
#
#   MPIV_BUILD  build dir (default build)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init mpifort
# this test picks shared or static itself (common_init may set them)
unset MPIVCC_STATIC MPIFORT_STATIC
FC=$B/bin/mpifort
if [ ! -x "$FC" ]; then
	echo "no gfortran at build time: $FC not built"
	exit 77
fi

show=$("$FC" -show -c x.f90)
case $show in
*"-I$B/include"*) ok "mpifort -show: -I$B/include" ;;
*) notok "mpifort -show lacks -I$B/include: $show" ;;
esac
link=$("$FC" -show x.f90)
case $link in
*-lmpi*) ok "mpifort -show (linking): -lmpi" ;;
*) notok "mpifort -show (linking) lacks -lmpi: $link" ;;
esac
fcbin=${show%% *}
major=$("$fcbin" -dumpversion | cut -d. -f1)
if [ "$major" -ge 10 ]; then
	case $show in
	*-fallow-argument-mismatch*) ok "gfortran $major: -fallow-argument-mismatch added" ;;
	*) notok "gfortran $major but no -fallow-argument-mismatch: $show" ;;
	esac
fi
for w in mpif90 mpif77; do
	if [ "$("$B/bin/$w" -show -c x.f90)" = "$show" ]; then
		ok "$w is mpifort"
	else
		notok "$w -show differs from mpifort's"
	fi
done
"$FC" > "$T/usage" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q usage "$T/usage"; then
	ok "mpifort without input: usage, exit 2"
else
	notok "mpifort without input: exit $rc" "$T/usage"
fi

# every table line is exported
awk '!/^[ \t]*(#|$)/ { n = $1; sub(/^!/, "", n); print tolower(n) }' \
	libmpi-lite/fortran/functions.tbl > "$T/names"
nm -D --defined-only "$B/lib/libmpi.so" | awk '{ print $3 }' > "$T/so"
nm -g --defined-only "$B/lib/libmpi.a" | awk 'NF == 3 { print $3 }' > "$T/a"
missing=
while read -r n; do
	for p in mpi pmpi; do
		grep -qx "${p}_${n}_" "$T/so" || missing="$missing ${p}_${n}_(so)"
		grep -qx "${p}_${n}_" "$T/a" || missing="$missing ${p}_${n}_(a)"
	done
done < "$T/names"
if [ -z "$missing" ]; then
	ok "the $(wc -l < "$T/names") functions of functions.tbl are in libmpi.so and libmpi.a"
else
	notok "missing Fortran symbols:$missing"
fi

cat > "$T/mix.f90" <<'F'
program mix
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, np, i, iv(4)
  real :: rv(3)
  character(len=12) :: s
  double precision :: t
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  t = MPI_WTIME()
  iv = 0
  rv = 0.0
  s = ' '
  if (rank == 0) then
    iv = (/ 1, 2, 3, 4 /)
    rv = (/ 0.5, 1.5, 2.5 /)
    s = 'hello mpiv'
  end if
  call MPI_BCAST(iv, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_BCAST(rv, 3, MPI_REAL, 0, MPI_COMM_WORLD, ierr)
  call MPI_BCAST(s, 12, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 1) then
    call MPI_SEND(rv, 3, MPI_REAL, 0, 5, MPI_COMM_WORLD, ierr)
    call MPI_SEND(iv, 4, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, ierr)
  else if (rank == 0 .and. np > 1) then
    call MPI_RECV(rv, 3, MPI_REAL, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_RECV(iv, 4, MPI_INTEGER, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end if
  if (rank == 0) print '(a,4i2,3f4.1,1x,a,l2)', trim(s), iv, rv, 'wtime', MPI_WTIME() >= t
  call MPI_FINALIZE(ierr)
  i = 0
end program mix
F
want='hello mpiv 1 2 3 4 0.5 1.5 2.5 wtime T'
for how in shared static; do
	bin=$T/mix.$how
	if [ $how = static ]; then
		MPIFORT_STATIC=1 "$B/bin/mpif90" -o "$bin" "$T/mix.f90" > "$T/cc.$how" 2>&1
	else
		"$B/bin/mpif90" -o "$bin" "$T/mix.f90" > "$T/cc.$how" 2>&1
	fi
	if [ $? != 0 ]; then
		notok "mpif90 ($how) cannot build a program passing INTEGER, REAL and CHARACTER buffers to MPI_BCAST" "$T/cc.$how"
		continue
	fi
	timeout 60 "$MPIV" run -n 2 --timeout 40 "$bin" > "$T/out.$how" 2> "$T/err.$how"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/out.$how")" = "$want" ]; then
		ok "mixed-type mpif.h program ($how libmpi) runs: $want"
	else
		notok "mixed-type mpif.h program ($how libmpi): exit $rc, output '$(cat "$T/out.$how")', want '$want'" "$T/err.$how"
	fi
done
if [ -x "$T/mix.static" ] && ldd "$T/mix.static" | grep -q libmpi; then
	notok "MPIFORT_STATIC=1 still links libmpi.so"
fi

cat > "$T/bad.f90" <<'F'
program bad
  use mpi
  implicit none
  integer :: ierr
  real :: rank
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_FINALIZE(ierr)
end program bad
F
if "$FC" -o "$T/bad" "$T/bad.f90" > "$T/bad.log" 2>&1; then
	notok "use mpi: MPI_COMM_RANK with a REAL rank compiled"
elif grep -qi 'mpi_comm_rank\|rank' "$T/bad.log"; then
	ok "use mpi: a REAL rank to MPI_COMM_RANK is a compile error"
else
	notok "use mpi: the compile error does not name the argument" "$T/bad.log"
fi

cat > "$T/bad08.f90" <<'F'
program bad08
  use mpi_f08
  implicit none
  integer :: rank
  call MPI_Init()
  call MPI_Comm_rank(1, rank)
  call MPI_Finalize()
end program bad08
F
if "$FC" -o "$T/bad08" "$T/bad08.f90" > "$T/bad08.log" 2>&1; then
	notok "use mpi_f08: an INTEGER communicator compiled"
else
	ok "use mpi_f08: an INTEGER where TYPE(MPI_Comm) goes is a compile error"
fi
if MPIFORT_STATIC=1 "$FC" -o "$T/f08s" tests/fortran/f08_basic.f90 > "$T/f08s.log" 2>&1 &&
    timeout 60 "$MPIV" run -n 2 --timeout 40 "$T/f08s" > "$T/f08s.out" 2>&1 &&
    grep -q 'f08 errors: ok' "$T/f08s.out"; then
	ok "use mpi_f08 program linked with MPIFORT_STATIC=1 runs"
else
	notok "use mpi_f08 program with MPIFORT_STATIC=1" "$T/f08s.log" "$T/f08s.out"
fi

cat > "$T/side.c" <<'C'
#include <mpi.h>
/* called from Fortran as CALL C_SIDE(COMM, DTYPE, REQ, STATUS, NEWCOMM, SUM) */
void
c_side_(MPI_Fint *comm, MPI_Fint *dtype, MPI_Fint *req, MPI_Fint *fstatus,
    MPI_Fint *newcomm, int *sum)
{
	MPI_Comm c = MPI_Comm_f2c(*comm), d;
	MPI_Request r = MPI_Request_f2c(*req);
	MPI_Status st;
	int one = 1;

	MPI_Wait(&r, &st);		/* the Fortran-posted receive */
	*req = MPI_Request_c2f(r);	/* MPI_REQUEST_NULL now */
	MPI_Status_c2f(&st, fstatus);
	MPI_Allreduce(&one, sum, 1, MPI_Type_f2c(*dtype), MPI_SUM, c);
	MPI_Comm_dup(c, &d);
	*newcomm = MPI_Comm_c2f(d);
}
C
cat > "$T/mixed.f90" <<'F'
program mixed
  use mpi
  implicit none
  integer :: ierr, rank, np, req, st(MPI_STATUS_SIZE), newc, s, x, y, n
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  x = 40 + rank
  call MPI_IRECV(y, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, req, ierr)
  call MPI_SEND(x, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, ierr)
  call c_side(MPI_COMM_WORLD, MPI_INTEGER, req, st, newc, s)
  call MPI_COMM_SIZE(newc, n, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0,a,l1)', 'sum ', s, ' size ', n, &
      ' got ', y, ' tag ', st(MPI_TAG), ' null ', req == MPI_REQUEST_NULL
  call MPI_COMM_FREE(newc, ierr)
  call MPI_FINALIZE(ierr)
end program mixed
F
if "$B/bin/mpivcc" -c -o "$T/side.o" "$T/side.c" > "$T/mixed.log" 2>&1 &&
    "$FC" -o "$T/mixed" "$T/mixed.f90" "$T/side.o" >> "$T/mixed.log" 2>&1 &&
    timeout 60 "$MPIV" run -n 3 --timeout 40 "$T/mixed" > "$T/mixed.out" 2>> "$T/mixed.log" &&
    [ "$(cat "$T/mixed.out")" = "sum 3 size 3 got 40 tag 9 null T" ]; then
	ok "Fortran and C share handles and statuses (f2c/c2f): $(cat "$T/mixed.out")"
else
	notok "mixed Fortran and C program: output '$(cat "$T/mixed.out" 2>/dev/null)'" "$T/mixed.log"
fi

[ "$fail" = 0 ]
