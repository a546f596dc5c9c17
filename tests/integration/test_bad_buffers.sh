#!/usr/bin/env bash
# tests/integration/test_bad_buffers.sh: an MPI call given a bad buffer or
# a message over mpiv's size limit fails as an MPI error naming the call
# and the cause (errors-are-fatal: one line, then the job ends), never as
# a lost Channel Memory: no self-kill, no restart loop.
#
#   send-null      MPI_Send(NULL, 10, MPI_INT, ...)
#   recv-null      MPI_Recv(NULL, 10, MPI_INT, ...)
#   send-efault    MPI_Send from unmapped memory, no logging (--relay-only:
#                  the kernel's EFAULT on the socket write, or, in a direct
#                  job whose link is not up yet, the kernel's answer when
#                  asked before the message is kept); with logging the
#                  digest reads the buffer first and the rank dies of
#                  SIGSEGV, as with any MPI that copies it
#   send-too-big   MPI_Send of 4 GiB (a derived type of 1 MiB x 4096: over
#                  the frame's 32-bit length)
#   return-null    the same NULL send under MPI_ERRORS_RETURN: the call
#                  returns MPI_ERR_BUFFER and the program goes on
#
#   MPIV_BUILD  build dir (default build)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init badbuf
[ -x "$MPIV" ] || { echo "$MPIV not built"; exit 1; }
cd "$T" || exit 2

cat > bad.c <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
int main(int argc, char **argv)
{
	int me, v[16] = { 0 };
	const char *mode = argv[1];
	MPI_Datatype mib;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (me == 1) {
		if (strcmp(mode, "recv-null") == 0)
			MPI_Recv(NULL, 10, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "send-null") == 0) {
		MPI_Send(NULL, 10, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "send-efault") == 0) {
		void *p = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, 1 << 20);
		MPI_Send(p, 1 << 18, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "send-too-big") == 0) {
		MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib);
		MPI_Type_commit(&mib);
		MPI_Send(v, 4096, mib, 1, 0, MPI_COMM_WORLD);	/* refused before any read */
	} else if (strcmp(mode, "return-null") == 0) {
		int cls;
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		int rc = MPI_Send(NULL, 10, MPI_INT, 1, 0, MPI_COMM_WORLD);
		MPI_Error_class(rc, &cls);
		printf("rc class %s\n", cls == MPI_ERR_BUFFER ? "MPI_ERR_BUFFER" : "other");
	}
	printf("rank %d past the call\n", me);
	MPI_Finalize();
	return 0;
}
EOF
"$B/bin/mpivcc" -o bad bad.c || { echo "cannot compile bad.c"; exit 1; }

# case_ NAME WANT_RC FILE ERE [mpiv run options]: runs ./bad NAME on 2
# ranks; the exit code, one line of FILE (err or out) matching ERE, and 0
# restarts are checked.
case_() {
	local name=$1 want=$2 f=$3 ere=$4 rc restarts
	shift 4
	timeout -k 5 60 "$MPIV" run -n 2 --timeout 30 --report r.json "$@" ./bad "$name" \
		< /dev/null > out 2> err
	rc=$?
	restarts=$(jq -r '.restarts' r.json 2> /dev/null)
	if [ "$rc" != "$want" ]; then
		notok "$name: exit $rc, want $want" err
	elif [ "$(grep -cE "$ere" "$f")" != 1 ]; then
		notok "$name: $f has not one line matching '$ere'" err out
	elif [ "$restarts" != 0 ]; then
		notok "$name: $restarts restarts, want 0" err
	else
		ok "$name: $(grep -m1 -E "$ere" "$f" | cut -c1-160)"
	fi
}

case_ send-null 1 err '^mpiv: rank 0: MPI_Send: invalid buffer pointer: NULL buffer for 40 bytes$'
case_ recv-null 1 err '^mpiv: rank 1: MPI_Recv: invalid buffer pointer: NULL buffer for 40 bytes$'
case_ send-efault 1 err '^mpiv: rank 0: MPI_Send: invalid buffer pointer: the send buffer is not readable memory' --relay-only
case_ send-too-big 2 err "^mpiv: rank 0: MPI_Send: invalid count argument: a message of 4294967296 bytes is over mpiv's limit of 4294901760 bytes per message$"
case_ return-null 0 out '^rc class MPI_ERR_BUFFER$'

[ "$fail" = 0 ]
