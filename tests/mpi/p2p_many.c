/* p2p_many: every rank exchanges M messages with every other rank at the
 * same time (Irecv with specific source and tag, Isend), sizes from 0 to
 * 16 KiB plus one 4 MiB message from rank 0 to rank 1, some receives
 * posted late (unexpected messages), all completed by one Waitall; every
 * byte checked. Exercises many outstanding requests and CM buffering. */
#include "mpitest.h"

enum { M = 8 };

static size_t msg_size(int src, int dst, int k)
{
	if (src == 0 && dst == 1 && k == 0)
		return 4u << 20;
	uint64_t s = (uint64_t)(src * 131 + dst * 7 + k * 3 + 1);
	uint32_t r = t_rand_u32(&s);
	return k == 1 ? 0 : r % 16384;
}

static unsigned char byte_at(int src, int dst, int k, size_t i)
{
	return (unsigned char)(src * 31 + dst * 17 + k * 5 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "p2p_many");
	int n = t_size, nreq = 2 * M * (n - 1), q = 0;
	MPI_Request *rq = malloc(sizeof(MPI_Request) * (nreq + 1));
	unsigned char **sb = malloc(sizeof(void *) * (nreq + 1)), **rb = malloc(sizeof(void *) * (nreq + 1));
	/* half the receives first */
	for (int p = 0; p < n; p++) {
		if (p == t_rank)
			continue;
		for (int k = 0; k < M; k += 2) {
			size_t sz = msg_size(p, t_rank, k);
			rb[q] = malloc(sz + 1);
			MPI_OK(MPI_Irecv(rb[q], (int)sz, MPI_BYTE, p, k, MPI_COMM_WORLD, &rq[q]));
			q++;
		}
	}
	int qs = q;
	for (int d = 1; d < n; d++) {
		int p = (t_rank + d) % n;
		for (int k = M - 1; k >= 0; k--) {	/* send in reverse tag order */
			size_t sz = msg_size(t_rank, p, k);
			sb[q - qs] = malloc(sz + 1);
			for (size_t i = 0; i < sz; i++)
				sb[q - qs][i] = byte_at(t_rank, p, k, i);
			MPI_OK(MPI_Isend(sb[q - qs], (int)sz, MPI_BYTE, p, k, MPI_COMM_WORLD, &rq[q]));
			q++;
		}
	}
	int qr = q;
	/* the other half of the receives, late */
	for (int p = n - 1; p >= 0; p--) {
		if (p == t_rank)
			continue;
		for (int k = 1; k < M; k += 2) {
			size_t sz = msg_size(p, t_rank, k);
			rb[q - qr + qs] = malloc(sz + 1);
			MPI_OK(MPI_Irecv(rb[q - qr + qs], (int)sz, MPI_BYTE, p, k, MPI_COMM_WORLD, &rq[q]));
			q++;
		}
	}
	CHECK_INT(q, nreq, "request count");
	MPI_Status *st = malloc(sizeof(MPI_Status) * (nreq + 1));
	MPI_OK(MPI_Waitall(nreq, rq, st));
	/* verify receives: first block (even tags), last block (odd tags) */
	q = 0;
	for (int p = 0; p < n; p++) {
		if (p == t_rank)
			continue;
		for (int k = 0; k < M; k += 2, q++) {
			size_t sz = msg_size(p, t_rank, k);
			int cnt;
			MPI_OK(MPI_Get_count(&st[q], MPI_BYTE, &cnt));
			CHECK(cnt == (int)sz && st[q].MPI_SOURCE == p && st[q].MPI_TAG == k,
			    "early recv from %d tag %d: count %d source %d", p, k, cnt, st[q].MPI_SOURCE);
			for (size_t i = 0; i < sz; i++)
				if (rb[q][i] != byte_at(p, t_rank, k, i))
					CHECK(0, "byte %zu of message %d->%d tag %d", i, p, t_rank, k);
			t_mix_int((long long)sz);
			free(rb[q]);
		}
	}
	int base = qs;
	for (int p = n - 1; p >= 0; p--) {
		if (p == t_rank)
			continue;
		for (int k = 1; k < M; k += 2, base++) {
			size_t sz = msg_size(p, t_rank, k);
			int si = base - qs + qr;
			int cnt;
			MPI_OK(MPI_Get_count(&st[si], MPI_BYTE, &cnt));
			CHECK(cnt == (int)sz && st[si].MPI_SOURCE == p && st[si].MPI_TAG == k,
			    "late recv from %d tag %d: count %d", p, k, cnt);
			for (size_t i = 0; i < sz; i++)
				if (rb[base][i] != byte_at(p, t_rank, k, i))
					CHECK(0, "byte %zu of late message %d->%d tag %d", i, p, t_rank, k);
			t_mix_int((long long)sz);
			free(rb[base]);
		}
	}
	for (int i = 0; i < qr - qs; i++)
		free(sb[i]);
	free(rq); free(sb); free(rb); free(st);
	return t_finish();
}
