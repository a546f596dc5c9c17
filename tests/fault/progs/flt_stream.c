/* flt_stream: a receiver whose replay exercises every kind of logged
 * decision, for the streaming replay of the relay protocol.
 *   flt_stream [MSGS=600]
 * Every rank but 1 sends rank 1 MSGS messages (sizes 0 B to 70 KB, tags
 * 0-4, contents a function of sender and index). Rank 1 takes them with
 * a mix of styles, by index: Recv(ANY_SOURCE, ANY_TAG); an Iprobe loop
 * then Recv of what it found; Probe(ANY_SOURCE) then Recv; two Irecvs and
 * Waitall; Irecv and a Test loop. Every 50 messages it also cancels an
 * Irecv (tag 99) that nothing matches. It checks each payload and that
 * each sender's messages come in order, and prints an order-independent
 * digest: the same in every run. */
#include "flt.h"

enum { BIG = 70000 };

static int msg_size(int i)
{
	if (i % 7 == 0)
		return 0;
	if (i % 13 == 0)
		return BIG;
	return 8 + i % 50;
}

static void fill(unsigned char *b, int n, int src, int i)
{
	for (int k = 0; k < n; k++)
		b[k] = (unsigned char)(src * 31 + i * 7 + k);
}

static uint64_t got_sum;
static long got_n;
static int *next_from;

/* One message received: check it against its sender's next index. */
static void take(const unsigned char *b, MPI_Status *st)
{
	int n, src = st->MPI_SOURCE, i = next_from[src]++;
	FLT_MPI(MPI_Get_count(st, MPI_BYTE, &n));
	FLT_ASSERT(src != 1 && src < np, "message from rank %d", src);
	FLT_ASSERT(n == msg_size(i) && st->MPI_TAG == i % 5,
	    "from %d: message %d has %d bytes tag %d (want %d tag %d)", src, i,
	    n, st->MPI_TAG, msg_size(i), i % 5);
	for (int k = 0; k < n; k++)
		FLT_ASSERT(b[k] == (unsigned char)(src * 31 + i * 7 + k),
		    "from %d: message %d byte %d wrong", src, i, k);
	got_sum += flt_mix((uint64_t)src << 32 | (uint64_t)i, (uint64_t)n);
	got_n++;
}

int main(int argc, char **argv)
{
	flt_init(&argc, &argv);
	int msgs = (int)flt_arg(argc, argv, 1, 600);
	FLT_ASSERT(np >= 2, "needs 2 ranks at least");
	unsigned char *b = malloc(BIG), *b2 = malloc(BIG);
	if (me != 1) {
		for (int i = 0; i < msgs; i++) {
			fill(b, msg_size(i), me, i);
			FLT_MPI(MPI_Send(b, msg_size(i), MPI_BYTE, 1, i % 5, MPI_COMM_WORLD));
		}
	} else {
		long total = (long)msgs * (np - 1);
		next_from = calloc((size_t)np, sizeof(int));
		for (long i = 0; got_n < total; i++) {
			MPI_Status st, st2;
			MPI_Request rq[2];
			int flag = 0;
			if (i % 50 == 49) {
				MPI_Request c;
				FLT_MPI(MPI_Irecv(b, 1, MPI_BYTE, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &c));
				FLT_MPI(MPI_Cancel(&c));
				FLT_MPI(MPI_Wait(&c, &st));
				FLT_MPI(MPI_Test_cancelled(&st, &flag));
				FLT_ASSERT(flag, "the cancel of a receive nothing matches failed");
				flag = 0;
			}
			switch (i % 5) {
			case 0:
				FLT_MPI(MPI_Recv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
				take(b, &st);
				break;
			case 1:
				while (!flag)
					FLT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
				FLT_MPI(MPI_Recv(b, BIG, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
				take(b, &st);
				break;
			case 2:
				FLT_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
				FLT_MPI(MPI_Recv(b, BIG, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
				take(b, &st);
				break;
			case 3:
				if (total - got_n < 2) {
					FLT_MPI(MPI_Recv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
					take(b, &st);
					break;
				}
				FLT_MPI(MPI_Irecv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
				FLT_MPI(MPI_Irecv(b2, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[1]));
				MPI_Status sts[2];
				FLT_MPI(MPI_Waitall(2, rq, sts));
				/* from one sender, the first posted gets the
				   earlier message (non-overtaking) */
				take(b, &sts[0]);
				take(b2, &sts[1]);
				break;
			default:
				FLT_MPI(MPI_Irecv(b, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
				while (!flag)
					FLT_MPI(MPI_Test(&rq[0], &flag, &st2));
				take(b, &st2);
				break;
			}
		}
		printf("stream: rank 1 got %ld messages from %d senders, digest %016llx\n",
		    got_n, np - 1, (unsigned long long)got_sum);
		for (int r = 0; r < np; r++)
			if (r != 1)
				printf("stream: from rank %d: %d messages\n", r, next_from[r]);
	}
	FLT_MPI(MPI_Barrier(MPI_COMM_WORLD));
	MPI_Finalize();
	return 0;
}
