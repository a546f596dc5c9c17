/* flt_nbc: non-blocking collectives whose completion order depends on
 * timing, with a timing-independent result.
 *   flt_nbc [ROUNDS=100] [LEN=64]
 * Each round every rank starts an Iallreduce, an Ibcast (root = round
 * mod np), an Iallgather, an Ialltoall, an Iscan and an Ibarrier on
 * MPI_COMM_WORLD, passes a token around the ring with Isend/Irecv while
 * they run, then completes them in an order chosen by the round: all in
 * reverse with Wait, by a Testany polling loop (counting its fruitless
 * polls, which depend on timing), or by Waitsome, while an ANY_SOURCE
 * receive waits for a value from two ranks back. Odd rounds also run an
 * Iallreduce on a communicator made by Comm_idup. Every result is
 * checked; rank 0 prints a running digest every ROUNDS/5 rounds and a
 * last line with the total. */
#include "flt.h"

enum { NCOLL = 6 };

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 100), len = flt_arg(argc, argv, 2, 64);
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	int64_t *in = malloc(sizeof(int64_t) * (size_t)len);
	int64_t *sum = malloc(sizeof(int64_t) * (size_t)len);
	int64_t *bc = malloc(sizeof(int64_t) * (size_t)len);
	int64_t *scan = malloc(sizeof(int64_t) * (size_t)len);
	int64_t *ag = malloc(sizeof(int64_t) * (size_t)np);
	int64_t *a2s = malloc(sizeof(int64_t) * (size_t)np);
	int64_t *a2r = malloc(sizeof(int64_t) * (size_t)np);
	uint64_t digest = 0;
	long polls = 0;

	for (long r = 1; r <= rounds; r++) {
		MPI_Request q[NCOLL], p[2];
		int64_t mine = (int64_t)me * 1000 + r, tok = mine, got = -1;
		int root = (int)(r % np);
		for (long i = 0; i < len; i++) {
			in[i] = (int64_t)(me + 1) * (i + 1) + r;
			bc[i] = me == root ? r * 7 + i : -1;
		}
		for (int j = 0; j < np; j++)
			a2s[j] = (int64_t)me * 100 + j + r;
		FLT_MPI(MPI_Iallreduce(in, sum, (int)len, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &q[0]));
		FLT_MPI(MPI_Ibcast(bc, (int)len, MPI_INT64_T, root, MPI_COMM_WORLD, &q[1]));
		FLT_MPI(MPI_Iallgather(&mine, 1, MPI_INT64_T, ag, 1, MPI_INT64_T, MPI_COMM_WORLD, &q[2]));
		FLT_MPI(MPI_Ialltoall(a2s, 1, MPI_INT64_T, a2r, 1, MPI_INT64_T, MPI_COMM_WORLD, &q[3]));
		FLT_MPI(MPI_Iscan(in, scan, (int)len, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &q[4]));
		FLT_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &q[5]));
		/* point-to-point traffic while they run */
		FLT_MPI(MPI_Irecv(&got, 1, MPI_INT64_T, (me + np - 1) % np, 1, MPI_COMM_WORLD, &p[0]));
		FLT_MPI(MPI_Isend(&tok, 1, MPI_INT64_T, (me + 1) % np, 1, MPI_COMM_WORLD, &p[1]));
		FLT_MPI(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
		FLT_ASSERT(got == (int64_t)((me + np - 1) % np) * 1000 + r, "round %ld: token %lld", r, (long long)got);
		/* a wildcard receive (its match logged) while they run */
		int64_t wv = -1, wo = mine;
		MPI_Request w[2];
		FLT_MPI(MPI_Irecv(&wv, 1, MPI_INT64_T, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &w[0]));
		FLT_MPI(MPI_Isend(&wo, 1, MPI_INT64_T, (me + 2) % np, 3, MPI_COMM_WORLD, &w[1]));
		switch (r % 3) {
		case 0:
			for (int k = NCOLL - 1; k >= 0; k--)
				FLT_MPI(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
			break;
		case 1:
			for (int done = 0; done < NCOLL;) {
				int idx, flag;
				FLT_MPI(MPI_Testany(NCOLL, q, &idx, &flag, MPI_STATUS_IGNORE));
				if (flag && idx != MPI_UNDEFINED)
					done++;
				else
					polls++;
			}
			break;
		default:
			for (int done = 0; done < NCOLL;) {
				int idx[NCOLL], n;
				FLT_MPI(MPI_Waitsome(NCOLL, q, &n, idx, MPI_STATUSES_IGNORE));
				FLT_ASSERT(n != MPI_UNDEFINED && n > 0, "Waitsome: %d", n);
				done += n;
			}
		}
		FLT_MPI(MPI_Waitall(2, w, MPI_STATUSES_IGNORE));
		FLT_ASSERT(wv == (int64_t)((me + 2 * np - 2) % np) * 1000 + r, "round %ld: wildcard got %lld", r, (long long)wv);
		for (long i = 0; i < len; i++) {
			int64_t s = 0, sc = 0;
			for (int k = 0; k < np; k++) {
				s += (int64_t)(k + 1) * (i + 1) + r;
				if (k <= me)
					sc += (int64_t)(k + 1) * (i + 1) + r;
			}
			FLT_ASSERT(sum[i] == s, "round %ld: Iallreduce[%ld] %lld != %lld", r, i, (long long)sum[i], (long long)s);
			FLT_ASSERT(scan[i] == sc, "round %ld: Iscan[%ld]", r, i);
			FLT_ASSERT(bc[i] == r * 7 + i, "round %ld: Ibcast[%ld]", r, i);
		}
		for (int j = 0; j < np; j++) {
			FLT_ASSERT(ag[j] == (int64_t)j * 1000 + r, "round %ld: Iallgather[%d]", r, j);
			FLT_ASSERT(a2r[j] == (int64_t)j * 100 + me + r, "round %ld: Ialltoall[%d]", r, j);
		}
		if (r % 2 == 1) {
			MPI_Comm dup;
			MPI_Request d;
			int64_t x = r + me, y = 0;
			FLT_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &d));
			FLT_MPI(MPI_Wait(&d, MPI_STATUS_IGNORE));
			FLT_MPI(MPI_Iallreduce(&x, &y, 1, MPI_INT64_T, MPI_MAX, dup, &d));
			FLT_MPI(MPI_Wait(&d, MPI_STATUS_IGNORE));
			FLT_ASSERT(y == r + np - 1, "round %ld: idup Iallreduce", r);
			FLT_MPI(MPI_Comm_free(&dup));
		}
		digest = flt_mix(digest, (uint64_t)sum[len - 1]);
		digest = flt_mix(digest, (uint64_t)scan[0]);
		digest = flt_mix(digest, (uint64_t)ag[np - 1]);
		digest = flt_mix(digest, (uint64_t)a2r[0]);
		if (me == 0 && r % every == 0)
			FLT_SAY("flt_nbc round %ld digest %016llx\n", r, (unsigned long long)digest);
	}
	/* the polls differ from run to run; the results must not */
	(void)polls;
	if (me == 0)
		FLT_SAY("flt_nbc done rounds=%ld np=%d digest %016llx\n", rounds, np, (unsigned long long)digest);
	free(in); free(sum); free(bc); free(scan); free(ag); free(a2s); free(a2r);
	MPI_Finalize();
	return 0;
}
