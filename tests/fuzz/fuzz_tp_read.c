/*
 * fuzz_tp_read.c: libFuzzer target for libmpi-lite's reader of what a
 * Channel Memory sends a rank: transport.c's tp_read and tp_parse (frame
 * header, meta unpacking, payloads buffered or read straight into user
 * memory) and the dispatch of Deliver, SyncAck, ProbeReply, CancelReply,
 * NdAck, FlushAck, CkptDurable, Error, Bye and HelloReply into the
 * rank's state. The code run is the library's own, not a copy.
 *
 * Rank 1 of 4 is set up as MPI_Init leaves it, with one CM connection: a
 * socketpair whose other end is the harness's. Requests wait on it: a
 * contiguous receive, a non-contiguous one, a one-int one (truncation),
 * an empty one, one on MPI_COMM_SELF, one being cancelled, a probe, an
 * Ssend waiting for its SyncAck, and a persistent receive not started
 * (in slot 0: its id, 0, is what a field left out reads as).
 * The wire ids of the started ones are pinned to FUZZ_ID(slot), so that
 * an input can name them (a real id carries a start serial that grows
 * over the whole process).
 *
 * Input: byte 0 picks options (the input buffer the connection starts
 * with, message logging on or off), byte 1 how the rest is cut into
 * writes; the rest is the CM's bytes. The real progress engine reads
 * after every write; then the CM hangs up. Where the library ends the
 * process (fenced, or a CM lost while logging) tp_test_exit_hook
 * longjmps back here. Every request must then be in a sane state and
 * everything is freed (leaks are reported).
 *
 * MPIV_FUZZ_WRITE_SEEDS=DIR fuzz_tp_read writes the seed corpus (valid
 * frames of every type the library receives, encoded with the frame
 * encoder) into DIR and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp_priv.h"
#include "transport.h"

/* The wire id of the request in slot s (start serial 1). */
#define FUZZ_ID(s)	((1ull << 32) | (uint64_t)(s))

/* Byte 0 of an input. */
#define FUZZ_OPT_INCAP	 0x03	/* input buffer: TP_IN_CAP, 16, 64, 512 */
#define FUZZ_OPT_LOGGING 0x04	/* message logging on (lost CM: SIGKILL) */

#define FUZZ_WORLD	4
#define FUZZ_RANK	1

/* The requests, in slot order. */
enum {
	FZ_INIT,	/* MPI_Recv_init, never started: its id is 0 */
	FZ_CONTIG,	/* 16 ints, any source, any tag */
	FZ_VECTOR,	/* 2 x vector(3, 1, 2) of int, from 0, tag 1 */
	FZ_ONE,		/* 1 int, from 2 */
	FZ_EMPTY,	/* 0 ints, tag 3 */
	FZ_SELF,	/* 2 ints on MPI_COMM_SELF */
	FZ_CANCEL,	/* 2 ints, Cancel sent, CancelReply due */
	FZ_PROBE,	/* an Iprobe's round trip */
	FZ_SSEND,	/* 2 ints to rank 0, SyncAck due */
	FZ_NREQ
};

/* Bytes each request's buffer spans (exactly: ASan sees overruns). */
static const size_t fz_span[FZ_NREQ] = { 8, 64, 40, 4, 0, 8, 8, 0, 8 };

static jmp_buf fz_jmp;
static int fz_ended;		/* how many inputs ended the process */

static void
fz_exit_hook(void)
{
	longjmp(fz_jmp, 1);
}

/* Discards whatever the library wrote to the CM. */
static void
fz_drain(int fd)
{
	uint8_t sink[4096];

	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
}

/* Rank FUZZ_RANK with one CM connection on fd, as after MPI_Init. */
static void
fz_setup(int fd, uint8_t opt)
{
	static const size_t caps[] = { TP_IN_CAP, 16, 64, 512 };
	struct tp_conn *c;

	setenv("MPIV_LOGGING", opt & FUZZ_OPT_LOGGING ? "1" : "0", 1);
	mpiv_ndlog_init();
	tp_world_size = FUZZ_WORLD;
	tp_rank = FUZZ_RANK;
	tp_err = NULL;
	tp_last_event = 0;
	tp_nconns = 1;
	tp_conns = calloc(1, sizeof(*tp_conns));
	tp_last_seq = calloc(FUZZ_WORLD, sizeof(*tp_last_seq));
	if (tp_conns == NULL || tp_last_seq == NULL)
		abort();
	c = &tp_conns[0];
	c->fd = fd;
	snprintf(c->addr, sizeof(c->addr), "fuzz:0");
	c->incap = caps[opt & FUZZ_OPT_INCAP];
	if ((c->in = malloc(c->incap)) == NULL)
		abort();
	if (mpiv_p2p_init(FUZZ_WORLD) != MPI_SUCCESS ||
	    mpiv_comm_init(FUZZ_RANK, FUZZ_WORLD) != MPI_SUCCESS)
		abort();
	mpiv_state.world_rank = FUZZ_RANK;
	mpiv_state.world_size = FUZZ_WORLD;
	mpiv_state.initialized = true;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

/* Starts the requests through the MPI calls and pins their ids. */
static void
fz_post(MPI_Request *req, void **buf)
{
	MPI_Datatype vec;
	int rc = MPI_SUCCESS;

	for (int k = 0; k < FZ_NREQ; k++)
		if ((buf[k] = calloc(1, fz_span[k] > 0 ? fz_span[k] : 1)) ==
		    NULL)
			abort();
	if (MPI_Type_vector(3, 1, 2, MPI_INT, &vec) != MPI_SUCCESS ||
	    MPI_Type_commit(&vec) != MPI_SUCCESS)
		abort();
	rc |= MPI_Recv_init(buf[FZ_INIT], 2, MPI_INT, MPI_ANY_SOURCE,
	    MPI_ANY_TAG, MPI_COMM_WORLD, &req[FZ_INIT]);
	rc |= MPI_Irecv(buf[FZ_CONTIG], 16, MPI_INT, MPI_ANY_SOURCE,
	    MPI_ANY_TAG, MPI_COMM_WORLD, &req[FZ_CONTIG]);
	rc |= MPI_Irecv(buf[FZ_VECTOR], 2, vec, 0, 1, MPI_COMM_WORLD,
	    &req[FZ_VECTOR]);
	rc |= MPI_Irecv(buf[FZ_ONE], 1, MPI_INT, 2, MPI_ANY_TAG,
	    MPI_COMM_WORLD, &req[FZ_ONE]);
	rc |= MPI_Irecv(buf[FZ_EMPTY], 0, MPI_INT, MPI_ANY_SOURCE, 3,
	    MPI_COMM_WORLD, &req[FZ_EMPTY]);
	rc |= MPI_Irecv(buf[FZ_SELF], 2, MPI_INT, 0, MPI_ANY_TAG,
	    MPI_COMM_SELF, &req[FZ_SELF]);
	rc |= MPI_Irecv(buf[FZ_CANCEL], 2, MPI_INT, MPI_ANY_SOURCE,
	    MPI_ANY_TAG, MPI_COMM_WORLD, &req[FZ_CANCEL]);
	if (rc != MPI_SUCCESS)
		abort();
	/* MPI_Cancel's state while it waits for the CancelReply. */
	req[FZ_CANCEL]->cancel_wait = true;
	/* p2p_probe's request while it waits for the ProbeReply. */
	if ((req[FZ_PROBE] = mpiv_req_alloc(MPIV_REQ_PROBE)) == NULL)
		abort();
	req[FZ_PROBE]->comm = MPI_COMM_WORLD;
	req[FZ_PROBE]->active = true;
	if (MPI_Issend(buf[FZ_SSEND], 2, MPI_INT, 0, 4, MPI_COMM_WORLD,
	    &req[FZ_SSEND]) != MPI_SUCCESS)
		abort();
	MPI_Type_free(&vec);	/* the receive keeps it */
	for (int k = 0; k < FZ_NREQ; k++) {
		if (req[k]->slot != (uint32_t)k)
			abort();	/* a request leaked from the last run */
		if (req[k]->active)
			req[k]->id = FUZZ_ID(k);
	}
}

/*
 * Writes the CM's bytes cut as `split` says, letting the library read
 * after each write, then hangs up. The exit hook may longjmp out.
 */
static void
fz_feed(int fd, const uint8_t *p, size_t n, uint8_t split)
{
	uint32_t rng = split * 2654435761u + 1;
	size_t max = (size_t)1 << (split % 13);
	int stuck = 0;

	while (n > 0 && tp_err == NULL && stuck < 100) {
		size_t k = n;
		ssize_t w;

		if (split != 0) {
			rng ^= rng << 13;
			rng ^= rng >> 17;
			rng ^= rng << 5;
			k = 1 + rng % max;
			if (k > n)
				k = n;
		}
		if ((w = send(fd, p, k, MSG_DONTWAIT | MSG_NOSIGNAL)) < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				break;
			stuck++;
		} else {
			p += w;
			n -= (size_t)w;
		}
		(void)mpiv_tp_progress(0);
		fz_drain(fd);
	}
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 4 && tp_err == NULL; i++)
		(void)mpiv_tp_progress(0);
}

/* What the dispatch may have left must be consistent. */
static void
fz_check(MPI_Request *req, void **buf)
{
	const struct tp_conn *c = &tp_conns[0];

	for (int k = 0; k < FZ_NREQ; k++) {
		struct mpiv_request *r = req[k];
		const uint8_t *b = buf[k];

		if (r->magic != MPIV_REQ_MAGIC)
			abort();	/* released behind the program's back */
		if (r->kind == MPIV_REQ_RECV && r->status.mpiv_count > r->cap)
			abort();	/* more bytes counted than kept */
		if (r->tmp != NULL && !(c->in_payload && c->preq == r))
			abort();	/* staging outlives its payload */
		if (r->status.mpiv_cancelled && r->kind != MPIV_REQ_RECV)
			abort();	/* only a receive can be cancelled */
		if (r->kind == MPIV_REQ_SEND && r->complete && (!r->written ||
		    (r->need_ack && !r->acked)))
			abort();	/* done before it left or was matched */
		if (!r->active && r->complete)
			abort();	/* a request never started got an answer */
		for (size_t i = 0; !r->active && i < fz_span[k]; i++)
			if (b[i] != 0)
				abort();	/* ... or data */
		if (r->complete && r->kind == MPIV_REQ_RECV) {
			int n;

			if (MPI_Get_count(&r->status, MPI_INT, &n) !=
			    MPI_SUCCESS)
				abort();
		}
	}
	if (mpiv_p2p_pending_acks != (req[FZ_SSEND]->acked ? 0 : 1))
		abort();
}

static void fz_write_seeds(const char *dir);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("MPIV_FUZZ_WRITE_SEEDS");

	if (dir != NULL) {
		fz_write_seeds(dir);
		exit(0);
	}
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	MPI_Request req[FZ_NREQ];
	void *buf[FZ_NREQ];
	int sv[2];

	if (size < 2 || size > 60000)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		abort();
	fz_setup(sv[0], data[0]);
	fz_post(req, buf);
	fz_drain(sv[1]);

	if (setjmp(fz_jmp) == 0) {
		tp_test_exit_hook = fz_exit_hook;
		fz_feed(sv[1], data + 2, size - 2, data[1]);
	} else {
		fz_ended++;
	}
	tp_test_exit_hook = NULL;
	fz_check(req, buf);

	/* MPI_Finalize's teardown, without the Bye. */
	if (tp_err == NULL)
		mpiv_tp_set_error("fuzz: the input is over");
	close(sv[1]);
	mpiv_tp_close(0);
	for (int k = FZ_NREQ; k-- > 0;)
		mpiv_req_release(req[k]);
	mpiv_comm_finalize();
	mpiv_p2p_fini();
	mpiv_ndlog_fini();
	mpiv_state.initialized = false;
	for (int k = 0; k < FZ_NREQ; k++)
		free(buf[k]);
	if (mpiv_req_live() != 0)
		abort();
	return 0;
}

/* ---------------- seeds ---------------- */

struct fz_seed {
	uint8_t b[8192];
	size_t n;
};

/* Starts a seed: the option byte and the cut. */
static void
fz_start(struct fz_seed *s, uint8_t opt, uint8_t split)
{
	s->b[0] = opt;
	s->b[1] = split;
	s->n = 2;
}

static void
fz_frame(struct fz_seed *s, uint16_t type, const ProtobufCMessage *m,
    size_t paylen)
{
	size_t len;
	uint8_t *enc = frame_encode(type, m, (uint32_t)paylen, &len);

	if (enc == NULL || s->n + len + paylen > sizeof(s->b))
		abort();
	memcpy(s->b + s->n, enc, len);
	s->n += len;
	for (size_t i = 0; i < paylen; i++)
		s->b[s->n++] = (uint8_t)(i * 7 + 1);
	free(enc);
}

static void
fz_deliver(struct fz_seed *s, uint64_t id, int src, int tag, uint64_t ev,
    size_t paylen)
{
	Mpiv__Deliver d = MPIV__DELIVER__INIT;

	d.req_id = id;
	d.src = src;
	d.tag = tag;
	d.event = ev;
	d.seq = ev;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DELIVER, &d.base, paylen);
}

/* A streaming replay's Deliver: no request, the post it answers. */
static void
fz_deliver_ahead(struct fz_seed *s, uint64_t post, int src, int tag,
    uint64_t ev, size_t paylen)
{
	Mpiv__Deliver d = MPIV__DELIVER__INIT;

	d.src = src;
	d.tag = tag;
	d.event = ev;
	d.seq = ev;
	d.replayed = true;
	d.ahead_post = post;
	d.req_source = -1;
	d.req_tag = -1;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DELIVER, &d.base, paylen);
}

static void
fz_error(struct fz_seed *s, int code, const char *text)
{
	Mpiv__Error e = MPIV__ERROR__INIT;

	e.code = code;
	e.text = (char *)text;
	fz_frame(s, MPIV__MSG_TYPE__MSG_ERROR, &e.base, 0);
}

/* Every answer the rank waits for, one of each. */
static void
fz_answers(struct fz_seed *s)
{
	Mpiv__SyncAck sa = MPIV__SYNC_ACK__INIT;
	Mpiv__ProbeReply pr = MPIV__PROBE_REPLY__INIT;
	Mpiv__CancelReply cr = MPIV__CANCEL_REPLY__INIT;
	Mpiv__NdAck na = MPIV__ND_ACK__INIT;
	Mpiv__FlushAck fa = MPIV__FLUSH_ACK__INIT;
	Mpiv__CkptDurable cd = MPIV__CKPT_DURABLE__INIT;
	Mpiv__FileRes fr = MPIV__FILE_RES__INIT;

	fz_deliver(s, FUZZ_ID(FZ_CONTIG), 3, 7, 1, 64);
	fz_deliver(s, FUZZ_ID(FZ_VECTOR), 0, 1, 2, 24);
	fz_deliver(s, FUZZ_ID(FZ_ONE), 2, 9, 3, 16);
	fz_deliver(s, FUZZ_ID(FZ_EMPTY), 0, 3, 4, 0);
	fz_deliver(s, FUZZ_ID(FZ_SELF), FUZZ_RANK, 5, 5, 8);
	sa.send_id = FUZZ_ID(FZ_SSEND);
	sa.dst = 0;
	fz_frame(s, MPIV__MSG_TYPE__MSG_SYNC_ACK, &sa.base, 0);
	pr.req_id = FUZZ_ID(FZ_PROBE);
	pr.found = true;
	pr.src = 2;
	pr.tag = 11;
	pr.size = 12;
	pr.event = 6;
	fz_frame(s, MPIV__MSG_TYPE__MSG_PROBE_REPLY, &pr.base, 0);
	cr.req_id = FUZZ_ID(FZ_CANCEL);
	cr.cancelled = true;
	cr.event = 7;
	fz_frame(s, MPIV__MSG_TYPE__MSG_CANCEL_REPLY, &cr.base, 0);
	na.ack_id = 1;
	fz_frame(s, MPIV__MSG_TYPE__MSG_ND_ACK, &na.base, 0);
	fa.id = 1;
	fz_frame(s, MPIV__MSG_TYPE__MSG_FLUSH_ACK, &fa.base, 0);
	cd.job_id = "f";
	cd.rank = FUZZ_RANK;
	cd.ckpt_no = 2;
	cd.incarnation = 1;
	fz_frame(s, MPIV__MSG_TYPE__MSG_CKPT_DURABLE, &cd.base, 0);
	/* an MPI-IO answer no operation waits for: dropped */
	fr.op_no = 1;
	fr.value = 16;
	fz_frame(s, MPIV__MSG_TYPE__MSG_FILE_RES, &fr.base, 16);
}

static void
fz_put(const char *dir, const char *name, const struct fz_seed *s)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL ||
	    fwrite(s->b, 1, s->n, f) != s->n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
fz_write_seeds(const char *dir)
{
	static const char *long_text = "replay diverged: the program's "
	    "call does not match the log, at every step of a long story "
	    "told twice to make the metadata outgrow a small input buffer";
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	Mpiv__NdLog nl = MPIV__ND_LOG__INIT;
	Mpiv__Bye bye = MPIV__BYE__INIT;
	Mpiv__CancelReply cr = MPIV__CANCEL_REPLY__INIT;
	uint64_t seqs[64];
	struct fz_seed s;

	/* every answer at once, then the same cut small, small buffer,
	   logging on (the hang-up then ends the process) */
	fz_start(&s, 0, 0);
	fz_answers(&s);
	fz_put(dir, "answers", &s);
	s.b[0] = FUZZ_OPT_LOGGING | 1;
	s.b[1] = 3;
	fz_put(dir, "answers_cut", &s);
	s.b[0] = 2;
	s.b[1] = 9;
	fz_put(dir, "answers_cut_big", &s);

	/* Deliveries nobody waits for (unknown, stale, twice) */
	fz_start(&s, 3, 5);
	fz_deliver(&s, 99, 0, 0, 1, 100);
	fz_deliver(&s, (2ull << 32) | FZ_CONTIG, 0, 0, 2, 10);
	fz_deliver(&s, FUZZ_ID(FZ_PROBE), 0, 0, 3, 4);
	fz_deliver(&s, FUZZ_ID(FZ_CONTIG), 0, 0, 4, 8);
	fz_deliver(&s, FUZZ_ID(FZ_CONTIG), 0, 0, 5, 8);
	fz_put(dir, "deliver_nobody", &s);

	/* Streaming replay: deliveries ahead of posts (held, some empty),
	   one for a post number already used, and one cut mid-payload */
	fz_start(&s, FUZZ_OPT_LOGGING, 0);
	fz_deliver_ahead(&s, 1, 0, 0, 1, 16);
	fz_deliver_ahead(&s, 2, 1, 3, 2, 0);
	fz_deliver_ahead(&s, 1, 0, 0, 3, 8);
	fz_deliver_ahead(&s, 7, 0, 5, 4, 200);
	fz_put(dir, "deliver_ahead", &s);
	s.n -= 100;
	fz_put(dir, "deliver_ahead_cut", &s);

	/* A payload cut by the hang-up, read straight into the buffer */
	fz_start(&s, FUZZ_OPT_LOGGING, 0);
	fz_deliver(&s, FUZZ_ID(FZ_CONTIG), 0, 0, 1, 64);
	s.n -= 30;
	fz_put(dir, "deliver_cut", &s);

	/* The CM's refusals: each ends the connection or the process */
	fz_start(&s, 0, 0);
	fz_error(&s, MPIV__ERROR_CODE__ERR_PROTOCOL, "bad frame");
	fz_put(dir, "error_protocol", &s);
	fz_start(&s, 1, 0);
	fz_error(&s, MPIV__ERROR_CODE__ERR_DIVERGED, long_text);
	fz_put(dir, "error_diverged", &s);
	fz_start(&s, 0, 0);
	fz_error(&s, MPIV__ERROR_CODE__ERR_FENCED, "incarnation 2 exists");
	fz_put(dir, "error_fenced", &s);
	fz_start(&s, 0, 0);
	bye.exit_code = 0;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_BYE, &bye.base, 0);
	fz_put(dir, "bye", &s);
	fz_start(&s, 0, 0);
	hr.ok = false;
	hr.error = "fenced: a newer incarnation";
	hr.code = MPIV__ERROR_CODE__ERR_FENCED;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "hello_reply_refused", &s);

	/* A HelloReply with a big meta (ignored once connected), small
	   buffer; then a frame the rank never gets after Hello */
	fz_start(&s, 1, 7);
	for (size_t i = 0; i < 64; i++)
		seqs[i] = 1000000007ull * (i + 1);
	hr.ok = true;
	hr.error = "";
	hr.code = 0;
	hr.n_last_seq = 64;
	hr.last_seq = seqs;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_deliver(&s, FUZZ_ID(FZ_VECTOR), 0, 1, 1, 24);
	nl.last = true;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_ND_LOG, &nl.base, 0);
	fz_put(dir, "hello_reply_then_nd_log", &s);

	/* Regressions: a Deliver without req_id (the request in slot 0 is
	   not started: its id is 0); a CancelReply naming a send or a
	   probe */
	fz_start(&s, FUZZ_OPT_LOGGING, 0);
	fz_deliver(&s, 0, 0, 0, 0, 8);
	fz_put(dir, "regress_deliver_no_id", &s);
	fz_start(&s, 0, 0);
	cr.req_id = FUZZ_ID(FZ_SSEND);
	cr.cancelled = true;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CANCEL_REPLY, &cr.base, 0);
	fz_put(dir, "regress_cancel_reply_send", &s);
	fz_start(&s, 0, 0);
	cr.req_id = FUZZ_ID(FZ_PROBE);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CANCEL_REPLY, &cr.base, 0);
	fz_put(dir, "regress_cancel_reply_probe", &s);
}
