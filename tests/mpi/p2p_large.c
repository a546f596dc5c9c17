/* p2p_large: a 64 MiB message (rank 0 -> last rank, and back with
 * Sendrecv_replace), content checked word by word and checksummed. With
 * one rank, the message goes to self. */
#include "mpitest.h"

#define NBYTES (64u << 20)

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_large");
	size_t nw = NBYTES / sizeof(uint64_t);
	uint64_t *buf = malloc(NBYTES);
	CHECK(buf != NULL, "malloc 64 MiB");
	int peer = t_size - 1;
	MPI_Status st;
	int cnt;

	if (t_rank == 0) {
		for (size_t i = 0; i < nw; i++)
			buf[i] = i * 0x9E3779B97F4A7C15ULL + 1;
		MPI_Request rq;
		MPI_OK(MPI_Isend(buf, NBYTES, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq));
		if (peer == 0) {
			uint64_t *in = malloc(NBYTES);
			MPI_OK(MPI_Recv(in, NBYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
			memcpy(buf, in, NBYTES);
			free(in);
			for (size_t i = 0; i < nw; i++)
				buf[i] = ~buf[i];
		} else {
			MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
			memset(buf, 0, NBYTES);
			/* the peer sends back the complement */
			MPI_OK(MPI_Recv(buf, (int)nw, MPI_UINT64_T, peer, 2, MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Get_count(&st, MPI_UINT64_T, &cnt));
			CHECK_INT(cnt, nw, "returned count");
		}
		for (size_t i = 0; i < nw; i++)
			if (buf[i] != ~(i * 0x9E3779B97F4A7C15ULL + 1))
				CHECK(0, "returned word %zu = %llx", i, (unsigned long long)buf[i]);
		t_mix(buf, NBYTES);
	} else if (t_rank == peer) {
		MPI_OK(MPI_Recv(buf, NBYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		CHECK_INT(cnt, NBYTES, "64 MiB Get_count");
		for (size_t i = 0; i < nw; i++)
			if (buf[i] != i * 0x9E3779B97F4A7C15ULL + 1)
				CHECK(0, "received word %zu = %llx", i, (unsigned long long)buf[i]);
		for (size_t i = 0; i < nw; i++)
			buf[i] = ~buf[i];
		MPI_OK(MPI_Send(buf, (int)nw, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD));
	}
	free(buf);

	/* 1 MiB Sendrecv_replace around the ring */
	size_t n1 = (1u << 20) / sizeof(int);
	int *ring = malloc(n1 * sizeof(int));
	for (size_t i = 0; i < n1; i++)
		ring[i] = (int)(i ^ (size_t)t_rank * 7919);
	int left = (t_rank + t_size - 1) % t_size, right = (t_rank + 1) % t_size;
	MPI_OK(MPI_Sendrecv_replace(ring, (int)n1, MPI_INT, right, 3, left, 3, MPI_COMM_WORLD, &st));
	for (size_t i = 0; i < n1; i++)
		if (ring[i] != (int)(i ^ (size_t)left * 7919))
			CHECK(0, "ring word %zu", i);
	t_mix(ring, n1 * sizeof(int));
	free(ring);
	return t_finish();
}
