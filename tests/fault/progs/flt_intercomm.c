/* flt_intercomm: intercommunicators under fault injection.
 *   flt_intercomm [ROUNDS=200]
 * The even and the odd ranks of WORLD are joined by Intercomm_create.
 * Each round: a message to every remote member received with
 * MPI_ANY_SOURCE (the status names the remote rank), Allreduce, Bcast
 * from a round-dependent root (MPI_ROOT / MPI_PROC_NULL), Alltoall and
 * Reduce across the groups; every 10th round an intercommunicator is
 * duplicated, split and merged, used and freed. Checks every value; rank
 * 0 prints a digest every ROUNDS/5 rounds. Needs 2 ranks or more. */
#include "flt.h"

static int color, lsize, rsize, lrank;

static int wr(int g, int r) { return 2 * r + g; }

static uint64_t round_of(MPI_Comm ic, long r)
{
	uint64_t h = 0;
	long acc = 0;
	long *in = malloc(sizeof(long) * (size_t)rsize), *out = malloc(sizeof(long) * (size_t)rsize);
	MPI_Request *rq = malloc(sizeof(*rq) * (size_t)rsize);
	for (int q = 0; q < rsize; q++) {
		out[q] = (long)me * 1000 + q + r;
		FLT_MPI(MPI_Isend(&out[q], 1, MPI_LONG, q, 3, ic, &rq[q]));
	}
	for (int k = 0; k < rsize; k++) {
		long v;
		MPI_Status st;
		FLT_MPI(MPI_Recv(&v, 1, MPI_LONG, MPI_ANY_SOURCE, 3, ic, &st));
		FLT_ASSERT(v == (long)wr(1 - color, st.MPI_SOURCE) * 1000 + lrank + r,
		    "round %ld: got %ld from remote %d", r, v, st.MPI_SOURCE);
		acc += v;	/* arrival order is not deterministic */
	}
	h = flt_mix(h, (uint64_t)acc);
	FLT_MPI(MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE));
	long s = me + r, sum = 0, want = 0;
	FLT_MPI(MPI_Allreduce(&s, &sum, 1, MPI_LONG, MPI_SUM, ic));
	for (int q = 0; q < rsize; q++)
		want += wr(1 - color, q) + r;
	FLT_ASSERT(sum == want, "round %ld: allreduce %ld want %ld", r, sum, want);
	/* Bcast from group (r % 2), its member r % size */
	int g = (int)(r % 2), gsize = g == color ? lsize : rsize, gr = (int)(r % gsize);
	int root = g == color ? (lrank == gr ? MPI_ROOT : MPI_PROC_NULL) : gr;
	long b = g == color && lrank == gr ? r * 7 : -1;
	FLT_MPI(MPI_Bcast(&b, 1, MPI_LONG, root, ic));
	if (g != color)
		FLT_ASSERT(b == r * 7, "round %ld: bcast %ld", r, b);
	for (int q = 0; q < rsize; q++)
		out[q] = (long)me * 100 + q * 10 + r;
	FLT_MPI(MPI_Alltoall(out, 1, MPI_LONG, in, 1, MPI_LONG, ic));
	for (int q = 0; q < rsize; q++) {
		FLT_ASSERT(in[q] == (long)wr(1 - color, q) * 100 + lrank * 10 + r, "round %ld: alltoall", r);
		h = flt_mix(h, (uint64_t)in[q]);
	}
	long red = -1;
	root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
	FLT_MPI(MPI_Reduce(&s, &red, 1, MPI_LONG, MPI_MAX, root, ic));
	if (color == 0 && lrank == 0)
		FLT_ASSERT(red == wr(1, rsize - 1) + r, "round %ld: reduce %ld", r, red);
	free(in);
	free(out);
	free(rq);
	return flt_mix(h, (uint64_t)sum);
}

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 200);
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	uint64_t h = 0;
	FLT_ASSERT(np >= 2, "needs 2 ranks");
	MPI_Comm local, ic;
	color = me % 2;
	FLT_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, me, &local));
	FLT_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 9, &ic));
	FLT_MPI(MPI_Comm_size(ic, &lsize));
	FLT_MPI(MPI_Comm_rank(ic, &lrank));
	FLT_MPI(MPI_Comm_remote_size(ic, &rsize));
	for (long r = 1; r <= rounds; r++) {
		h = flt_mix(h, round_of(ic, r));
		if (r % 10 == 0) {
			MPI_Comm dup, sp, m;
			FLT_MPI(MPI_Comm_dup(ic, &dup));
			h = flt_mix(h, round_of(dup, r));
			FLT_MPI(MPI_Comm_split(dup, 0, -lrank, &sp));
			int n;
			FLT_MPI(MPI_Comm_remote_size(sp, &n));
			FLT_ASSERT(n == rsize, "split remote size %d", n);
			FLT_MPI(MPI_Barrier(sp));
			FLT_MPI(MPI_Intercomm_merge(sp, (int)((r / 10 + color) % 2), &m));
			long v = me, tot = 0;
			FLT_MPI(MPI_Allreduce(&v, &tot, 1, MPI_LONG, MPI_SUM, m));
			FLT_ASSERT(tot == (long)np * (np - 1) / 2, "merged allreduce %ld", tot);
			FLT_MPI(MPI_Comm_free(&m));
			FLT_MPI(MPI_Comm_free(&sp));
			FLT_MPI(MPI_Comm_free(&dup));
		}
		if (r % every == 0) {
			uint64_t all = 0;
			FLT_MPI(MPI_Reduce(&h, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD));
			if (me == 0)
				FLT_SAY("intercomm: round %ld digest %016llx\n", r, (unsigned long long)all);
		}
	}
	FLT_MPI(MPI_Comm_free(&ic));
	FLT_MPI(MPI_Comm_free(&local));
	FLT_MPI(MPI_Finalize());
	return 0;
}
