/* p2p_huge [BYTES [c]]: one message of 2 GiB + 16 bytes (count 1 of a
 * derived type of 2^31 + 16 bytes: 2 x 1 GiB then 16 bytes; with "c",
 * MPI_Send_c/MPI_Recv_c of that many MPI_BYTEs), or BYTES,
 * from rank 0 to rank 1, checked by a checksum of the data received;
 * MPI_Type_size_x, MPI_Get_count and MPI_Get_elements_x on it. Too big
 * for cases.txt (and the ASan pass): tests/integration/test_huge_msg.sh
 * runs it in both protocols. */
#include "mpitest.h"

#define BIG (((size_t)1 << 31) + 16)

static uint64_t sum_of(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	const uint64_t *q = (const uint64_t *)p;
	for (size_t i = 0; i < n / 8; i++)
		h = (h ^ q[i]) * 1099511628211ULL;
	for (size_t i = n / 8 * 8; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_huge");
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : BIG;
	int use_c = argc > 2 && strcmp(argv[2], "c") == 0;
	(void)use_c;	/* the _c calls are mpiv's (MPI 4) */
	size_t cs = n >= BIG ? (size_t)1 << 30 : n / 2 + 1;
	MPI_Datatype big, chunk;
	unsigned char *buf;
	/* n bytes: chunks of cs bytes (2 x 2^30 for 2^31 + 16), then the rest */
	CHECK(n / cs <= INT32_MAX, "%zu bytes: too many chunks", n);
	MPI_OK(MPI_Type_contiguous((int)cs, MPI_BYTE, &chunk));
	{
		int bl[2] = { (int)(n / cs), (int)(n % cs) };
		MPI_Aint d[2] = { 0, (MPI_Aint)(n / cs * cs) };
		MPI_Datatype ty[2] = { chunk, MPI_BYTE };
		MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &big));
	}
	MPI_OK(MPI_Type_commit(&big));
	{
		MPI_Count sz;
		MPI_OK(MPI_Type_size_x(big, &sz));
		CHECK(sz == (MPI_Count)n, "size %lld, want %zu", sz, n);
	}
	if (t_size >= 2 && t_rank < 2) {
		buf = malloc(n);
		CHECK(buf != NULL, "malloc of %zu bytes", n);
		if (t_rank == 0) {
			uint64_t x = 88172645463325252ULL;
			for (size_t i = 0; i < n / 8; i++) {
				x ^= x << 13; x ^= x >> 7; x ^= x << 17;
				((uint64_t *)buf)[i] = x;
			}
			memset(buf + n / 8 * 8, 0x5a, n % 8);
			uint64_t s = sum_of(buf, n);
#ifdef MPIV_MPI_LITE
			if (use_c)
				MPI_OK(MPI_Send_c(buf, (MPI_Count)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
			else
#endif
				MPI_OK(MPI_Send(buf, 1, big, 1, 9, MPI_COMM_WORLD));
			MPI_OK(MPI_Send(&s, 1, MPI_UINT64_T, 1, 10, MPI_COMM_WORLD));
		} else {
			MPI_Status st;
			MPI_Count c;
			uint64_t s;
			int cnt;
			memset(buf, 0, n);
#ifdef MPIV_MPI_LITE
			if (use_c) {
				MPI_OK(MPI_Recv_c(buf, (MPI_Count)n, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &st));
				MPI_OK(MPI_Get_count_c(&st, MPI_BYTE, &c));
				CHECK(c == (MPI_Count)n, "Get_count_c %lld, want %zu", c, n);
			} else
#endif
				MPI_OK(MPI_Recv(buf, 1, big, 0, 9, MPI_COMM_WORLD, &st));
			MPI_OK(MPI_Recv(&s, 1, MPI_UINT64_T, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			MPI_OK(MPI_Get_count(&st, big, &cnt));
			CHECK_INT(cnt, 1, "Get_count of the big message");
			MPI_OK(MPI_Get_elements_x(&st, MPI_BYTE, &c));
			CHECK(c == (MPI_Count)n, "Get_elements_x %lld bytes, want %zu", c, n);
			CHECK(sum_of(buf, n) == s, "checksum of the %zu bytes received", n);
			t_mix(&s, sizeof s);
		}
		free(buf);
	}
	MPI_OK(MPI_Type_free(&big));
	MPI_OK(MPI_Type_free(&chunk));
	return t_finish();
}
