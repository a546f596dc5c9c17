#!/usr/bin/env bash
# tests/integration/test_symbols.sh: libmpi.so and libmpi.a show an
# application only MPI: their global symbols are the MPI_* and PMPI_*
# functions, the Fortran bindings (mpi_*_ and pmpi_*_, gfortran's names,
# and mpif.h's COMMON blocks mpi_fortran_*_) and the predefined objects
# mpi.h declares, and libmpi.so
# neither exports nor imports anything of protobuf-c (linked in, hidden;
# libmpi.a carries the members it uses, local). An application that
# defines functions named like the library's insides (frame_encode,
# auth_random, net_dial) and like protobuf-c's (protobuf_c_message_pack),
# each of which aborts when called, runs a ping-pong under mpiv run to
# the right answer, linked against either.
#
#   MPIV_BUILD  build dir (default build)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init symbols
# this test picks shared or static itself (common_init may set them)
unset MPIVCC_STATIC MPIFORT_STATIC
SO=$B/lib/libmpi.so
[ -f "$SO" ] || { echo "$SO not built"; exit 1; }
pred='^(MPI_|PMPI_|p?mpi_[a-z0-9_]*_$|mpiv_(comm|group|errors|errhandler|info|request|win|message|dt|op)_)'
nm -D --defined-only "$SO" | awk '{ print $3 }' | grep -Ev "$pred" > "$T/extra"
if [ -s "$T/extra" ]; then
	notok "libmpi.so exports $(wc -l < "$T/extra") symbols besides MPI: $(head -5 "$T/extra" | tr '\n' ' ')"
else
	ok "libmpi.so exports only MPI_*, PMPI_*, the Fortran mpi_*_ and mpi.h's predefined objects ($(nm -D --defined-only "$SO" | wc -l) symbols)"
fi
A=$B/lib/libmpi.a
nm -g --defined-only "$A" | awk 'NF == 3 { print $3 }' | grep -Ev "$pred" > "$T/extra.a"
if [ -s "$T/extra.a" ]; then
	notok "libmpi.a defines $(wc -l < "$T/extra.a") global symbols besides MPI: $(head -5 "$T/extra.a" | tr '\n' ' ')"
else
	ok "libmpi.a defines only MPI_*, PMPI_*, the Fortran mpi_*_ and mpi.h's predefined objects globally"
fi
if nm -D "$SO" | grep -qi protobuf || ldd "$SO" | grep -q protobuf; then
	notok "libmpi.so exports, imports or needs protobuf-c"
else
	ok "no protobuf-c symbol in libmpi.so's dynamic table, no libprotobuf-c dependency"
fi

cat > "$T/app.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
/* the application's own functions of the library's names */
size_t frame_encode(void) { abort(); }
int auth_random(void) { abort(); }
int net_dial(void) { abort(); }
size_t protobuf_c_message_pack(void) { abort(); }
size_t protobuf_c_message_get_packed_size(void) { abort(); }
int main(int argc, char **argv)
{
	int me, v = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	for (int i = 0; i < 100; i++) {
		if (me == 0) {
			v++;
			MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			v++;
			MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		}
	}
	if (me == 0)
		printf("v %d\n", v);
	MPI_Finalize();
	return 0;
}
C
# the same with libmpi.so and with libmpi.a (MPIVCC_STATIC=1)
for how in shared static; do
	st=0; [ "$how" = static ] && st=1
	if ! MPIVCC_STATIC=$st "$B/bin/mpivcc" -o "$T/app-$how" "$T/app.c" 2> "$T/cc.err"; then
		notok "$how: an application with its own frame_encode/auth_random/net_dial/protobuf_c_* does not link" "$T/cc.err"
		continue
	fi
	out=$(timeout 60 "$B/bin/mpiv" run -n 2 --timeout 30 "$T/app-$how" 2> "$T/run.err")
	if [ "$out" = "v 200" ]; then
		ok "$how: an application defining frame_encode, auth_random, net_dial and protobuf_c_* runs correctly"
	else
		notok "$how: application with colliding names: output '$out'" "$T/run.err"
	fi
done
[ "$fail" = 0 ]
