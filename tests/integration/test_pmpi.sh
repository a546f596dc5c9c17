#!/usr/bin/env bash
# tests/integration/test_pmpi.sh: the profiling interface. Every MPI_
# function mpi.h declares is also a PMPI_ function, in libmpi.so and in
# libmpi.a, and mpi.h declares it. A profiling layer (a tool) defines
# MPI_Init, MPI_Send, MPI_Recv, MPI_Bcast, MPI_Allreduce and
# MPI_Finalize, counts them and calls PMPI_; the application's calls,
# and only those (not the sends inside a collective), reach it, and the
# job gives the right answer: the tool linked into the program (shared
# and static libmpi), and the tool as a shared library linked before
# libmpi.so. A Fortran program's calls reach the Fortran profiling names
# (pmpi_send_) the same way.
#
#   MPIV_BUILD  build dir (default build)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init pmpi
unset MPIVCC_STATIC MPIFORT_STATIC
SO=$B/lib/libmpi.so
A=$B/lib/libmpi.a
H=$B/include/mpi.h

# Every MPI_ function has its PMPI_ twin, at the same code in libmpi.so.
nm -D --defined-only "$SO" | awk '$3 ~ /^MPI_/ { print $3 }' | sort > "$T/mpi"
nm -D --defined-only "$SO" | awk '$3 ~ /^PMPI_/ { print substr($3, 2) }' | sort > "$T/pmpi"
n=$(wc -l < "$T/mpi")
if [ "$n" -gt 400 ] && cmp -s "$T/mpi" "$T/pmpi"; then
	ok "libmpi.so: each of its $n MPI_ functions is also PMPI_"
else
	notok "libmpi.so: MPI_ and PMPI_ functions differ ($n MPI_): $(diff "$T/mpi" "$T/pmpi" | head -3 | tr '\n' ' ')"
fi
nm -D --defined-only "$SO" | awk '$3 ~ /^P?MPI_/ { print $1, $3 }' |
    awk '{ k = $2; sub(/^P/, "", k); if (k in a && a[k] != $1) bad++; a[k] = $1 } END { exit bad > 0 }' &&
	ok "libmpi.so: PMPI_X is the code of MPI_X" ||
	notok "libmpi.so: some PMPI_X is not at MPI_X's address"
# libmpi.a: PMPI_X defined, MPI_X a weak alias (a tool's own MPI_X wins).
nm "$A" | awk '$2 == "T" && $3 ~ /^PMPI_/ { t++ } $2 == "W" && $3 ~ /^MPI_/ { w++ }
    $2 == "T" && $3 ~ /^MPI_/ { s++ } END { print t + 0, w + 0, s + 0 }' > "$T/a"
read -r at aw as < "$T/a"
if [ "$at" = "$n" ] && [ "$aw" = "$n" ] && [ "$as" = 0 ]; then
	ok "libmpi.a: $at PMPI_ functions, each MPI_ a weak alias"
else
	notok "libmpi.a: PMPI_ defined $at, MPI_ weak $aw, MPI_ strong $as (want $n, $n, 0)"
fi
# mpi.h declares each PMPI_ function.
grep -o 'P\(MPI_[A-Za-z0-9_]*\);$' "$H" | sed 's/^P//; s/;$//' | sort > "$T/decl"
if cmp -s "$T/mpi" "$T/decl"; then
	ok "mpi.h declares the $n PMPI_ functions"
else
	notok "mpi.h's PMPI_ declarations differ from the library's: $(diff "$T/mpi" "$T/decl" | head -3 | tr '\n' ' ')"
fi

cat > "$T/tool.c" <<'C'
/* A profiling layer: counts six calls, forwards to PMPI_. */
#include <mpi.h>
#include <stdio.h>
static int n_send, n_recv, n_bcast, n_allred, n_init;
int MPI_Init(int *argc, char ***argv)
{
	n_init++;
	return PMPI_Init(argc, argv);
}
int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm m)
{
	n_send++;
	return PMPI_Send(b, c, t, d, tag, m);
}
int MPI_Recv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm m,
    MPI_Status *st)
{
	n_recv++;
	return PMPI_Recv(b, c, t, s, tag, m, st);
}
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm m)
{
	n_bcast++;
	return PMPI_Bcast(b, c, t, root, m);
}
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op o,
    MPI_Comm m)
{
	n_allred++;
	return PMPI_Allreduce(s, r, c, t, o, m);
}
int MPI_Finalize(void)
{
	int me;
	PMPI_Comm_rank(MPI_COMM_WORLD, &me);
	printf("tool rank %d init %d send %d recv %d bcast %d allreduce %d\n",
	    me, n_init, n_send, n_recv, n_bcast, n_allred);
	fflush(stdout);
	return PMPI_Finalize();
}
C
cat > "$T/app.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	int me, n, v = 0, sum = 0, big[4096];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int i = 0; i < 7; i++) {
		if (me == 0) {
			v++;
			MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (me == 1) {
			MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			v++;
			MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		}
	}
	/* collectives whose insides send and receive */
	for (int i = 0; i < 4096; i++)
		big[i] = me == 2 ? i : -1;
	MPI_Bcast(big, 4096, MPI_INT, 2, MPI_COMM_WORLD);
	for (int i = 0; i < 3; i++)
		MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (me == 0)
		printf("v %d sum %d big %d\n", v, sum, big[4095]);
	MPI_Finalize();
	return 0;
}
C
want=$(printf 'tool rank 0 init 1 send 7 recv 7 bcast 1 allreduce 3\ntool rank 1 init 1 send 7 recv 7 bcast 1 allreduce 3\ntool rank 2 init 1 send 0 recv 0 bcast 1 allreduce 3\ntool rank 3 init 1 send 0 recv 0 bcast 1 allreduce 3\nv 14 sum 6 big 4095')

# run NAME PROG: the job's sorted output against want
run() {
	local out
	out=$(timeout 90 "$MPIV" run -n 4 --timeout 60 "$2" 2> "$T/$1.err" | sort)
	if [ "$out" = "$want" ]; then
		ok "$1: the tool sees the application's calls only, the job's answer is right"
	else
		echo "$out" > "$T/$1.out"
		notok "$1: output differs from the expected counts and answer" "$T/$1.out" "$T/$1.err"
	fi
}

CC="$B/bin/mpivcc"
if "$CC" -Wall -Werror -o "$T/app-shared" "$T/app.c" "$T/tool.c" 2> "$T/cc1.err"; then
	run shared "$T/app-shared"
else
	notok "a tool calling PMPI_ does not compile or link against libmpi.so" "$T/cc1.err"
fi
if MPIVCC_STATIC=1 "$CC" -Wall -Werror -o "$T/app-static" "$T/app.c" "$T/tool.c" 2> "$T/cc2.err"; then
	run static "$T/app-static"
else
	notok "a tool defining MPI_Send does not link with libmpi.a (the MPI_ names must be weak)" "$T/cc2.err"
fi
# the tool as a library of its own, linked before libmpi.so
if "$CC" -Wall -Werror -fPIC -shared -o "$T/libtool.so" "$T/tool.c" 2> "$T/cc3.err" &&
    "$CC" -Wall -Werror -o "$T/app-lib" "$T/app.c" -L"$T" -Wl,-rpath,"$T" -ltool -lmpi 2>> "$T/cc3.err"; then
	run library "$T/app-lib"
else
	notok "a tool library (libtool.so) does not build or link" "$T/cc3.err"
fi
# Without a tool the same program runs, static too (the weak MPI_ names).
if MPIVCC_STATIC=1 "$CC" -o "$T/plain" "$T/app.c" 2> "$T/cc4.err"; then
	out=$(timeout 90 "$MPIV" run -n 4 --timeout 60 "$T/plain" 2> "$T/plain.err")
	[ "$out" = "v 14 sum 6 big 4095" ] &&
		ok "static: without a tool the MPI_ aliases are the library's calls" ||
		notok "static without a tool: output '$out'" "$T/plain.err"
else
	notok "the program alone does not link with libmpi.a" "$T/cc4.err"
fi

# Fortran: a C tool of the Fortran names (its mpi_send_ calls pmpi_send_,
# its mpi_finalize_ pmpi_finalize_).
if [ -x "$B/bin/mpifort" ] && command -v gfortran > /dev/null; then
	cat > "$T/ftool.c" <<'C'
#include <stdio.h>
#include <mpi.h>
extern void pmpi_send_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
static int fsends;
void mpi_send_(void *b, MPI_Fint *c, MPI_Fint *t, MPI_Fint *d, MPI_Fint *tag, MPI_Fint *m, MPI_Fint *e)
{
	fsends++;
	pmpi_send_(b, c, t, d, tag, m, e);
}
extern void pmpi_finalize_(MPI_Fint *);
void mpi_finalize_(MPI_Fint *e)
{
	printf("fortran sends %d\n", fsends);
	fflush(stdout);
	pmpi_finalize_(e);
}
C
	cat > "$T/fapp.f90" <<'F'
program fapp
  use mpi
  integer :: ierr, me, v, i, st(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  v = 0
  do i = 1, 5
    if (me == 0) then
      v = v + 1
      call MPI_Send(v, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
      call MPI_Recv(v, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(v, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, st, ierr)
      v = v + 1
      call MPI_Send(v, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
    end if
  end do
  if (me == 0) print '(a,i0)', 'v ', v
  call MPI_Finalize(ierr)
end program fapp
F
	for how in shared static; do
		st=0; [ "$how" = static ] && st=1
		if "$CC" -c -o "$T/ftool-$how.o" "$T/ftool.c" 2> "$T/fc.err" &&
		    (cd "$T" && MPIFORT_STATIC=$st "$B/bin/mpifort" -o "fapp-$how" fapp.f90 "ftool-$how.o") 2>> "$T/fc.err"; then
			out=$(timeout 90 "$MPIV" run -n 2 --timeout 60 "$T/fapp-$how" 2> "$T/f.err" | sort | tr '\n' ' ')
			[ "$out" = "fortran sends 5 fortran sends 5 v 10 " ] &&
				ok "Fortran ($how): mpi_send_ of a tool sees the program's MPI_SEND, pmpi_send_ sends" ||
				notok "Fortran ($how): output '$out'" "$T/f.err"
		else
			notok "Fortran ($how): the tool or the program does not build" "$T/fc.err"
		fi
	done
else
	ok "# skip Fortran: no gfortran or mpifort"
fi
[ "$fail" = 0 ]
