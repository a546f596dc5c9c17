/*
 * env_show.c: prints, for every rank, the values of the variables named
 * on its command line (tests/integration/test_run_env.sh), read after
 * some work, so that a rank relaunched by a kill meanwhile prints what
 * its new incarnation got.
 *
 *   env_show ROUNDS NAP_US NAME...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define LINE 1024

int
main(int argc, char **argv)
{
	int rank, size, rounds, nap;
	char mine[LINE], *all = NULL;
	long long v = 1, s;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rounds = argc > 1 ? atoi(argv[1]) : 0;
	nap = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < rounds; i++) {
		MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM,
		    MPI_COMM_WORLD);
		if (nap > 0)
			usleep((useconds_t)nap);
	}
	mine[0] = '\0';
	for (int i = 3; i < argc; i++) {
		const char *val = getenv(argv[i]);
		size_t n = strlen(mine);

		snprintf(mine + n, sizeof(mine) - n, "%s%s=%s", i > 3 ? " " :
		    "", argv[i], val != NULL ? val : "(unset)");
	}
	if (rank == 0 && (all = malloc((size_t)size * LINE)) == NULL)
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_Gather(mine, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0,
	    MPI_COMM_WORLD);
	for (int r = 0; rank == 0 && r < size; r++)
		printf("rank %d: %s\n", r, all + (size_t)r * LINE);
	free(all);
	MPI_Finalize();
	return 0;
}
