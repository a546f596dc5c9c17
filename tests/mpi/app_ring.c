/* app_ring: a token goes around the ring ROUNDS times; each rank adds
 * its contribution and checks what it receives. Blocking Send/Recv on
 * the token, plus a Bsend-free pipelined counter-rotating ring with
 * Sendrecv. Deterministic output. */
#include "mpitest.h"

enum { ROUNDS = 30 };

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "app_ring");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	unsigned long long token = 0;	/* unsigned: wraps without UB */
	for (int r = 0; r < ROUNDS; r++) {
		if (t_rank == 0) {
			token = token * 31 + r;
			if (t_size > 1) {
				MPI_OK(MPI_Send(&token, 1, MPI_UNSIGNED_LONG_LONG, right, r, MPI_COMM_WORLD));
				MPI_OK(MPI_Recv(&token, 1, MPI_UNSIGNED_LONG_LONG, left, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			}
		} else {
			MPI_OK(MPI_Recv(&token, 1, MPI_UNSIGNED_LONG_LONG, left, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			token += (unsigned long long)t_rank * (r + 1);
			MPI_OK(MPI_Send(&token, 1, MPI_UNSIGNED_LONG_LONG, right, r, MPI_COMM_WORLD));
		}
	}
	/* replay the token arithmetic serially */
	unsigned long long want = 0;
	for (int r = 0; r < ROUNDS; r++) {
		want = want * 31 + r;
		for (int k = 1; k < t_size; k++)
			want += (unsigned long long)k * (r + 1);
	}
	if (t_rank == 0)
		CHECK(token == want, "token %llu, want %llu", token, want);
	/* counter-rotating values with Sendrecv: after size steps each rank
	 * has seen every rank's value once */
	long long v = t_rank * 1000 + 1, acc = 0;
	for (int s = 0; s < t_size; s++) {
		acc += v;
		MPI_OK(MPI_Sendrecv_replace(&v, 1, MPI_LONG_LONG, left, 7, right, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	CHECK_INT(acc, 1000LL * t_size * (t_size - 1) / 2 + t_size, "counter-rotating ring sum");
	CHECK_INT(v, t_rank * 1000 + 1, "value back home after a full turn");
	if (t_rank == 0)
		printf("app_ring: %d rounds, token %llu\n", ROUNDS, token);
	t_mix(&token, sizeof token);
	t_mix_int(acc);
	return t_finish();
}
