/* flt_exit: a job whose failure-free result is a non-zero exit code.
 *   flt_exit [ROUNDS=800] [CODE=3]
 * A ring Allreduce loop, then every rank prints one stderr line, and the
 * last rank exits with CODE after a Barrier and MPI_Finalize (the others
 * with 0). */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 800), code = flt_arg(argc, argv, 2, 3);
	long acc = 0;
	for (long r = 1; r <= rounds; r++) {
		long v = (long)(flt_burn((uint64_t)(me + r), 2000) % 1000), s;
		FLT_MPI(MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		acc += s;
		if (me == 0 && r % (rounds / 4 > 0 ? rounds / 4 : 1) == 0)
			FLT_SAY("exit: round %ld acc %ld\n", r, acc);
	}
	fprintf(stderr, "exit: rank %d leaving, acc %ld\n", me, acc);
	fflush(stderr);
	/* everything is printed before any rank can exit (a non-zero exit
	   ends the job, as with mpirun) */
	FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
	FLT_MPI(MPI_Finalize());
	return me == np - 1 ? (int)code : 0;
}
