/* flt_finfork: where a direct rank's program goes on past MPI_Finalize
 * (libmpi-lite/dp_fin.c).
 *   flt_finfork [THREAD=0]
 * Every rank prints its pid before and after MPI_Finalize: in a direct
 * job the pids differ (the program went on in a forked process), unless
 * THREAD=1 kept a second thread alive across MPI_Finalize (no fork: the
 * child would have only one thread). */
#include <pthread.h>

#include "flt.h"

static void *
idle(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	flt_init(&argc, &argv);
	if (flt_arg(argc, argv, 1, 0) && pthread_create(&t, NULL, idle, NULL) != 0) {
		fprintf(stderr, "flt_finfork: pthread_create failed\n");
		return 1;
	}
	printf("rank %d pid %ld before\n", me, (long)getpid());
	fflush(stdout);
	FLT_MPI(MPI_Finalize());
	printf("rank %d pid %ld after\n", me, (long)getpid());
	return 0;
}
