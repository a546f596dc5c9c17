/* flt_mprobe: matched probes with wildcards, whose matches depend on
 * timing, with a timing-independent result.
 *   flt_mprobe [ROUNDS=150] [MSGS=6]
 * Each round every rank but 0 sends MSGS messages to rank 0 (tags vary);
 * rank 0 takes them with MPI_Mprobe or an MPI_Improbe polling loop on
 * (ANY_SOURCE, ANY_TAG), then MPI_Mrecv or MPI_Imrecv, checks each
 * payload against its probed source and tag and sums them (the order
 * differs from run to run, the sum does not). A persistent synchronous
 * send (Ssend_init) passes a value around the ring every round. Rank 0
 * prints the running digest every ROUNDS/5 rounds. */
#include "flt.h"

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	long rounds = flt_arg(argc, argv, 1, 150), msgs = flt_arg(argc, argv, 2, 6);
	long every = rounds / 5 > 0 ? rounds / 5 : 1;
	int64_t *out = malloc(sizeof(int64_t) * 2 * (size_t)msgs);
	MPI_Request *sq = malloc(sizeof(MPI_Request) * (size_t)msgs);
	MPI_Request ps, pr;
	int64_t ring_out = 0, ring_in = 0;
	uint64_t digest = 0;
	MPI_Comm ring;	/* apart from the wildcard probes */
	FLT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &ring));
	FLT_MPI(MPI_Ssend_init(&ring_out, 1, MPI_INT64_T, (me + 1) % np, 2, ring, &ps));
	FLT_MPI(MPI_Recv_init(&ring_in, 1, MPI_INT64_T, (me + np - 1) % np, 2, ring, &pr));
	for (long r = 1; r <= rounds; r++) {
		int64_t total = 0;
		if (me != 0) {
			for (long k = 0; k < msgs; k++) {
				out[2 * k] = me;
				out[2 * k + 1] = r * 1000 + me * 10 + k;
				FLT_MPI(MPI_Isend(&out[2 * k], 2, MPI_INT64_T, 0, (int)((r + k) % 7), MPI_COMM_WORLD, &sq[k]));
			}
			FLT_MPI(MPI_Waitall((int)msgs, sq, MPI_STATUSES_IGNORE));
		} else {
			for (long got = 0; got < msgs * (np - 1); got++) {
				MPI_Message m;
				MPI_Status st;
				int64_t v[2] = { -1, -1 };
				if (got % 2 == 0) {
					FLT_MPI(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
				} else {
					int flag = 0;
					while (!flag)
						FLT_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
				}
				if (got % 3 == 0) {
					MPI_Request q;
					FLT_MPI(MPI_Imrecv(v, 2, MPI_INT64_T, &m, &q));
					FLT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
				} else {
					FLT_MPI(MPI_Mrecv(v, 2, MPI_INT64_T, &m, MPI_STATUS_IGNORE));
				}
				long k = (long)(v[1] % 10);
				FLT_ASSERT(v[0] == st.MPI_SOURCE && v[1] / 1000 == r &&
				    st.MPI_TAG == (int)((r + k) % 7),
				    "round %ld: got (%lld, %lld) probed from %d tag %d", r,
				    (long long)v[0], (long long)v[1], st.MPI_SOURCE, st.MPI_TAG);
				total += v[1];
			}
		}
		ring_out = r * 10 + me;
		FLT_MPI(MPI_Start(&pr));
		FLT_MPI(MPI_Start(&ps));
		FLT_MPI(MPI_Wait(&ps, MPI_STATUS_IGNORE));
		FLT_MPI(MPI_Wait(&pr, MPI_STATUS_IGNORE));
		FLT_ASSERT(ring_in == r * 10 + (me + np - 1) % np, "round %ld: ring", r);
		FLT_MPI(MPI_Bcast(&total, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
		digest = flt_mix(digest, (uint64_t)total);
		if (me == 0 && r % every == 0)
			FLT_SAY("flt_mprobe round %ld digest %016llx\n", r, (unsigned long long)digest);
	}
	FLT_MPI(MPI_Request_free(&ps));
	FLT_MPI(MPI_Request_free(&pr));
	FLT_MPI(MPI_Comm_free(&ring));
	if (me == 0)
		FLT_SAY("flt_mprobe done rounds=%ld np=%d digest %016llx\n", rounds, np, (unsigned long long)digest);
	free(out);
	free(sq);
	MPI_Finalize();
	return 0;
}
