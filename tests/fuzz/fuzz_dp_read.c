/*
 * fuzz_dp_read.c: libFuzzer target for the reader of a direct-protocol
 * rank's links to its peers (docs/DIRECT.md): transport.c's tp_read and
 * tp_parse on a peer link, dp_conn.c's handshake states (dp_frame_begin,
 * dp_frame_done: the Challenge, the Hello and its checks, the lookup of
 * the dialler, the refusals, the HelloReply) and p2p_direct.c's data
 * frames (dpx_frame_begin, dpx_frame_done: DSend, DSyncAck, DBye, DTrim,
 * DCkptAsk, Error; duplicates, gaps, matching in the rank). The code run
 * is the library's own; the harness plays the other ends.
 *
 * Rank 1 of 4 is set up as MPI_Init leaves it in a direct job: listening
 * on a TCP port (dp_listen_open, MPIV_LISTEN_HOST=127.0.0.1), with one CM
 * connection (a socketpair: the harness answers the rank's PeerLookups
 * with PeerInfo), six receives posted and an Issend to the peer waiting
 * in the send log. The harness is the peer: it dials the rank's listener
 * (an accepted link; the peer is rank 0) or is dialled by it (rank 2, at
 * the harness's own listener, which its PeerInfo gives), over loopback
 * TCP, and speaks the handshake with the pair key K = HMAC(job token,
 * "pair 1 p") (auth_pair_key), as a CM would give it.
 *
 * Input: byte 0 picks the mode (where the fuzzed bytes start), whether
 * the job has a token (keyed), message logging, and a variant; byte 1
 * how the rest is cut into writes; the rest is what the peer sends:
 *   0 ACC_HELLO   accepted link, Challenge sent: the bytes are the Hello
 *   1 ACC_KEY     accepted link, a Hello in and the rank's lookup of the
 *                 dialler out: the bytes come before the PeerInfo, which
 *                 the variant makes good or a refusal (not found, no key,
 *                 wrong key, no proof; stale or unknown incarnation),
 *                 and the top two bits of byte 1 may make the Hello's
 *                 incarnation stale or unknown as well (1, 2), so that
 *                 an unproven Hello of any incarnation is tried
 *   2 ACC_UP      accepted link, handshake done: the bytes are data frames
 *   3 DIAL_CHAL   dialled link: the bytes are the acceptor's, Challenge on
 *   4 DIAL_REPLY  dialled link, Hello sent: the bytes are the HelloReply on;
 *                 keyed with variant bit VAR_PROVE, a first HelloReply
 *                 that carries a proof of 32 bytes gets the acceptor's
 *                 true one instead (the bytes cannot know the rank's
 *                 fresh nonce), so that proven replies are fuzzed too
 *   5 DIAL_UP     dialled link, handshake done: data frames
 *
 * Checks, beyond ASan, UBSan and leaks: a model computes from the bytes
 * alone (fz_model) whether the link comes up (never without the pair
 * key when keyed), whether the rank closes it before the harness hangs
 * up (every bad frame closes it, and nothing else does; before the
 * handshake ends, a header announcing more than TP_PREAUTH_MAX -
 * FRAME_HDR_LEN bytes of meta and payload is bad at once), whether the
 * dialling rank ends the process (tp_end_process calls
 * tp_test_exit_hook, which longjmps back here) on a HelloReply refusing
 * it as fenced, which it must believe unkeyed or with the acceptor's
 * reply proof and only then, which messages are delivered (the DSends
 * in seq order, duplicates and checks dropped, nothing after a gap or a
 * bad frame; a DSend sent again, or checked, whose digest differs from
 * the one taken first and not let go by a DTrim's `sent` fails the rank
 * with "replay diverged", after which it reads no more), into which
 * receive (post order, truncated to the buffer, unpacked) or left
 * unexpected (drained with Iprobe and compared), whether the Issend was
 * acknowledged, whether DBye was seen, the rank's last delivered seq,
 * and what the rank itself wrote: its Hello
 * and HelloReply (fields and proofs; an accepting rank proves the pair
 * key before it judges an incarnation, so an unproven Hello is refused
 * with code 0 whatever incarnation it claims, a proven stale one as
 * ERR_FENCED with the reply proof, and no other refusal carries a
 * proof), one resend of the Issend once up, with its digest, and one
 * check of it (no payload) when the peer holds it, DSyncAcks only for
 * synchronous DSends it got.
 *
 * Not covered: the cap on accepted links still in their handshake
 * (dp_accept: DP_UNAUTH_MAX + 2 per rank), as the harness opens one
 * link per input. A DSend on MPI_COMM_SELF's context is delivered to a
 * COMM_SELF receive posted with ANY_SOURCE, as from MPI_SOURCE -1
 * (dp_matches checks no membership); the model expects it, unless
 * MPIV_FUZZ_STRICT_CONTEXT=1, which makes it fail.
 *
 * MPIV_FUZZ_WRITE_SEEDS=DIR fuzz_dp_read writes the seed corpus into DIR
 * and exits.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "digest.h"
#include "direct.h"
#include "proto.h"
#include "tp_priv.h"
#include "transport.h"

#define FZ_WORLD	4
#define FZ_RANK		1		/* the rank under test */
#define FZ_JOB		"fz"
#define FZ_ACC_PEER	0		/* the harness, dialling the rank */
#define FZ_DIAL_PEER	2		/* the harness, dialled by the rank */
#define FZ_SPINS	200		/* bounded waits: progress rounds */

enum fz_mode {
	M_ACC_HELLO, M_ACC_KEY, M_ACC_UP, M_DIAL_CHAL, M_DIAL_REPLY,
	M_DIAL_UP, M_NMODES
};

/* Byte 0 of an input. */
#define OPT_MODE(b)	(((b) & 0x07) % M_NMODES)
#define OPT_UNKEYED	0x08	/* the job has no token: no proofs */
#define OPT_LOGGING	0x10	/* MPIV_LOGGING=1 */
#define OPT_VAR(b)	((b) >> 5)
/* variant bits outside ACC_KEY */
#define VAR_INC2	1	/* the peer runs incarnation 2 */
#define VAR_HOLDS1	2	/* the peer says it holds our seq 1 */
#define VAR_PROVE	4	/* DIAL_REPLY keyed: the first HelloReply's
				   proof made the true one */

/* ACC_KEY variants: what the PeerInfo (or the Hello) gets wrong. */
enum {
	K_GOOD, K_NOT_FOUND, K_STALE, K_UNKNOWN_INC, K_NO_KEY, K_WRONG_KEY,
	K_OTHER_PAIR, K_NO_PROOF
};
/* ACC_KEY: the Hello's incarnation against the PeerInfo's (byte 1). */
enum { KI_SAME, KI_STALE, KI_AHEAD };
#define OPT_KINC(b)	((b) >> 6 == 3 ? KI_SAME : (b) >> 6)

/* The receives, in post order, and the Issend. */
enum { R_TAG7, R_VEC, R_ONE, R_EMPTY, R_BIG, R_SELF, R_SSEND, R_NREQ };
#define R_NRECV	R_SSEND

struct fz_recv_def {
	uint32_t ctx;
	bool any_src;
	int tag;		/* -1: any */
	size_t cap;		/* bytes the datatype holds */
	size_t span;		/* bytes the buffer spans */
};
static const struct fz_recv_def fz_recvs[R_NRECV] = {
	[R_TAG7] = { 0, true, 7, 64, 64 },
	[R_VEC] = { 0, false, -1, 24, 40 },	/* 2 x vector(3, 1, 2) */
	[R_ONE] = { 0, false, -1, 4, 4 },
	[R_EMPTY] = { 0, true, -1, 0, 0 },
	[R_BIG] = { 0, false, -1, 256, 256 },
	[R_SELF] = { 2, true, -1, 8, 8 },	/* MPI_COMM_SELF */
};
/* Ints of the vector receive that take the data, in order. */
static const int fz_vec_ints[6] = { 0, 2, 4, 5, 7, 9 };
static const uint8_t fz_ssend_data[8] = { 's', 'y', 'n', 'c', 1, 2, 3, 4 };

/* Bytes a peer's frames may not outgrow (the input cap is 60000). */
#define FZ_IN_CAP	(1u << 21)

struct fz_in {
	int fd;
	uint8_t *b;
	size_t pos, n, cap;
	bool eof;		/* the rank closed it (EOF or reset) */
};

struct fz_msg {
	uint64_t seq;
	uint32_t ctx;
	int32_t tag;
	bool sync;
	const uint8_t *p;
	size_t len;
};

#define FZ_MAXMSG	8192
#define FZ_R_ANY	(-2)	/* not known from the bytes alone */
#define FZ_R_NONE	(-1)	/* no HelloReply at all */

/* What the bytes must do (fz_model). */
struct fz_model {
	bool det;		/* decided by the bytes alone */
	bool up;		/* the link comes up */
	bool closed;		/* the rank closes it before the hang-up */
	bool exit;		/* the rank ends the process, fenced */
	int reply;		/* ACC_HELLO: the HelloReply due (FZ_R_*, or
				   the code of a refusal) */
	bool any_frame;		/* a whole frame (ACC_KEY: the link is lost) */
	bool chal;		/* DIAL_CHAL: a Challenge was answered */
	uint8_t chal_nonce[AUTH_NONCE_LEN];
	/* its offer of encryption (kx_pub, ciphers), which the rank's
	   Hello proof covers */
	uint8_t chal_kx[SEAL_PUB_LEN];
	size_t chal_kx_len;
	uint32_t chal_ciphers;
	bool bye, acked1;
	uint64_t last;		/* the last seq delivered */
	uint64_t peer_has;	/* of our seqs, the peer holds up to this */
	/* digests of the DSends taken, by seq; those up to dg_trim are
	   forgotten (DTrim.sent) */
	uint64_t dg[FZ_MAXMSG], dg_trim;
	bool diverged;		/* a DSend sent again differs: the rank
				   fails (replay diverged), reads no more */
	uint64_t diverged_seq;
	bool may_diverge;	/* !det: it may (ACC_HELLO, up, racing) */
	struct fz_msg msg[FZ_MAXMSG];
	size_t nmsg;
	uint64_t sync[FZ_MAXMSG];	/* seqs of synchronous DSends */
	size_t nsync;
};

struct fz {
	int mode, var;
	int kinc;		/* ACC_KEY: KI_* */
	bool keyed, logging, dial;
	bool prove;		/* DIAL_REPLY: VAR_PROVE, keyed */
	int prank;		/* the rank the harness plays */
	uint32_t pinc;		/* its incarnation */
	uint64_t holds;		/* the peer_delivered it says */
	struct auth_key key;	/* K of (1, prank) */
	int cm;			/* harness end of the CM connection */
	int peer;		/* harness end of the link, -1 before */
	struct fz_in cmin, pin;
	/* the rank's Hello picked a cipher (a Challenge of the bytes
	   offered one): what it writes after it is records the harness
	   cannot open, read and dropped */
	bool rank_sealed;
	bool answer;		/* answer lookups of prank now */
	bool lookup_due;	/* one came while !answer */
	int nanswered;
	MPI_Request req[R_NREQ];
	uint8_t *buf[R_NREQ];
	/* handshake */
	uint8_t nonce_s[AUTH_NONCE_LEN], nonce_c[AUTH_NONCE_LEN];
	uint8_t cproof[AUTH_HASH_LEN];
	bool challenged, challenge_auth;
	Mpiv__Hello *hello;	/* dialled: the rank's Hello */
	int nhello;
	int nreply_ok, nreply_no, reply_code;
	char reply_text[200];
	bool reply_proof_ok;	/* ok: proven, or unkeyed */
	size_t reply_proof_len;
	bool reply_proven;	/* the proof over our Hello's nonces */
	uint32_t reply_inc;
	uint64_t reply_delivered;
	/* data the rank wrote */
	int ndsend;		/* the Issend, whole */
	int ncheck;		/* the Issend as a check (peer holds it) */
	uint64_t acks[FZ_MAXMSG];
	size_t nacks;
};

static uint8_t fz_token[32];
static int fz_lfd = -1;		/* the harness's listener (dialled modes) */
static char fz_laddr[64];
static bool fz_strict_context;
static struct fz_model fz_md, fz_md2;
static struct fz fz_z;		/* static: it lives across the longjmp */
static jmp_buf fz_jmp;

#define FZ_FAIL(...) do {						\
	fprintf(stderr, "fuzz_dp_read: " __VA_ARGS__);			\
	fputc('\n', stderr);						\
	abort();							\
} while (0)

/* tp_end_process: only a believed fenced refusal may end the rank (a
   CM is never lost here). */
static void
fz_exit_hook(void)
{
	if (!fz_md.exit)
		FZ_FAIL("the library ended the process, want it %s",
		    fz_md.closed ? "to close the link" : "running");
	longjmp(fz_jmp, 1);
}

static void
fz_pair_key(int a, int b, struct auth_key *k)
{
	uint8_t raw[AUTH_HASH_LEN];

	auth_pair_key(fz_token, sizeof(fz_token), a, b, raw);
	auth_key_set(k, raw, sizeof(raw));
}

static void
fz_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		abort();
}

static void fz_in_init(struct fz_in *in, int fd);

/* The harness's end of a link: every write goes out at once (Nagle
   would hold the bytes of a cut input until the rank's delayed ACK). */
static void
fz_link_fd(struct fz *z, int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		abort();
	fz_nonblock(fd);
	z->peer = fd;
	fz_in_init(&z->pin, fd);
}

/* Closes with a reset: no TIME_WAIT left behind by a million runs. */
static void
fz_close_rst(int fd)
{
	struct linger lg = { 1, 0 };

	if (fd < 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* Writes a whole frame (small: handshake and CM answers). */
static void
fz_send(int fd, uint16_t type, const ProtobufCMessage *m)
{
	size_t len, off = 0;
	uint8_t *enc = frame_encode(type, m, 0, &len);

	if (enc == NULL)
		abort();
	while (off < len) {
		ssize_t w = send(fd, enc + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			(void)poll(&p, 1, 10);
			continue;
		}
		if (w <= 0)
			break;		/* the rank closed it: its business */
		off += (size_t)w;
	}
	free(enc);
}

/* ---------------- reading what the rank writes ---------------- */

static void
fz_in_init(struct fz_in *in, int fd)
{
	memset(in, 0, sizeof(*in));
	in->fd = fd;
	in->cap = 65536;
	if ((in->b = malloc(in->cap)) == NULL)
		abort();
}

static void
fz_in_fill(struct fz_in *in)
{
	if (in->fd < 0)
		return;
	for (;;) {
		ssize_t r;

		if (in->pos > 0) {
			memmove(in->b, in->b + in->pos, in->n - in->pos);
			in->n -= in->pos;
			in->pos = 0;
		}
		if (in->n == in->cap) {
			if (in->cap >= FZ_IN_CAP)
				FZ_FAIL("the rank wrote over %u bytes unread",
				    FZ_IN_CAP);
			in->cap *= 2;
			if ((in->b = realloc(in->b, in->cap)) == NULL)
				abort();
		}
		r = recv(in->fd, in->b + in->n, in->cap - in->n, MSG_DONTWAIT);
		if (r > 0) {
			in->n += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			in->eof = true;
		return;
	}
}

/*
 * The next whole frame the rank wrote: 1 with *t, *m (to free) and the
 * payload (valid until the next fill), 0 when none is whole yet. The
 * rank must never write a malformed frame.
 */
static int
fz_in_frame(struct fz_in *in, uint16_t *t, ProtobufCMessage **m,
    const uint8_t **pl, size_t *plen)
{
	struct frame_hdr h;
	const char *err;
	size_t avail = in->n - in->pos;

	if (avail < FRAME_HDR_LEN)
		return 0;
	if (frame_parse_header(in->b + in->pos, &h, &err) < 0)
		FZ_FAIL("the rank wrote a bad header: %s", err);
	if (avail < FRAME_HDR_LEN + (size_t)h.meta_len + h.payload_len)
		return 0;
	*m = frame_unpack_meta(h.type, in->b + in->pos + FRAME_HDR_LEN,
	    h.meta_len, &err);
	if (*m == NULL)
		FZ_FAIL("the rank wrote a bad %s: %s", frame_type_name(h.type),
		    err);
	*t = h.type;
	*pl = in->b + in->pos + FRAME_HDR_LEN + h.meta_len;
	*plen = h.payload_len;
	in->pos += FRAME_HDR_LEN + (size_t)h.meta_len + h.payload_len;
	return 1;
}

/* ---------------- the harness as the CM ---------------- */

static void
fz_peer_info(struct fz *z, int q)
{
	Mpiv__PeerInfo pi = MPIV__PEER_INFO__INIT;
	struct auth_key k;

	pi.rank = q;
	if (q != z->prank) {
		pi.found = false;
		pi.error = "fuzz: not here";
		fz_send(z->cm, MPIV__MSG_TYPE__MSG_PEER_INFO, &pi.base);
		return;
	}
	pi.found = true;
	pi.addr = z->dial ? fz_laddr : "127.0.0.1:9";
	pi.incarnation = z->pinc;
	k = z->key;
	if (z->mode == M_ACC_KEY) {
		switch (z->var) {
		case K_NOT_FOUND:
			pi.found = false;
			pi.addr = "";
			pi.error = "gone";
			break;
		case K_WRONG_KEY:
			fz_pair_key(1, 3, &k);
			break;
		}
		if (z->kinc == KI_STALE)
			pi.incarnation = z->pinc + 1;
		else if (z->kinc == KI_AHEAD)
			pi.incarnation = z->pinc - 1;
	}
	if (z->keyed && !(z->mode == M_ACC_KEY && z->var == K_NO_KEY)) {
		pi.pair_key.data = k.k;
		pi.pair_key.len = k.len;
	}
	fz_send(z->cm, MPIV__MSG_TYPE__MSG_PEER_INFO, &pi.base);
	z->nanswered++;
}

/* Answers the rank's PeerLookups (of prank: as the mode says). */
static void
fz_cm_serve(struct fz *z)
{
	uint16_t t;
	ProtobufCMessage *m;
	const uint8_t *pl;
	size_t plen;

	fz_in_fill(&z->cmin);
	if (z->cmin.eof)
		FZ_FAIL("the rank closed its CM connection");
	while (fz_in_frame(&z->cmin, &t, &m, &pl, &plen) == 1) {
		if (t == MPIV__MSG_TYPE__MSG_PEER_LOOKUP) {
			int q = ((Mpiv__PeerLookup *)m)->rank;

			if (q < 0 || q >= FZ_WORLD || q == FZ_RANK)
				FZ_FAIL("the rank looked up rank %d", q);
			if (q != z->prank)
				fz_peer_info(z, q);
			else if (!z->answer)
				z->lookup_due = true;
			/* dialled: one answer, so one dial; later lookups
			   (after a lost link) stay unanswered */
			else if (!z->dial || z->nanswered == 0)
				fz_peer_info(z, q);
		}
		/* NdRecords (logging) need no answer here */
		frame_free_meta(m);
	}
}

/* ---------------- the harness as the peer ---------------- */

static void
fz_got(struct fz *z, uint16_t t, ProtobufCMessage *m, const uint8_t *pl,
    size_t plen)
{
	switch (t) {
	case MPIV__MSG_TYPE__MSG_CHALLENGE: {
		const Mpiv__Challenge *c = (const Mpiv__Challenge *)m;

		if (z->dial || z->challenged)
			FZ_FAIL("a Challenge from the rank unasked");
		if (c->version != AUTH_VERSION || c->auth != z->keyed ||
		    (z->keyed && c->nonce.len != AUTH_NONCE_LEN))
			FZ_FAIL("a bad Challenge from the rank");
		if (z->keyed)
			memcpy(z->nonce_s, c->nonce.data, AUTH_NONCE_LEN);
		z->challenged = true;
		break;
	}
	case MPIV__MSG_TYPE__MSG_HELLO:
		if (!z->dial || z->hello != NULL)
			FZ_FAIL("a Hello from the rank unasked");
		z->hello = (Mpiv__Hello *)m;
		z->nhello++;
		z->rank_sealed = z->hello->cipher != SEAL_NONE;
		return;		/* kept */
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		const Mpiv__HelloReply *r = (const Mpiv__HelloReply *)m;
		uint8_t want[AUTH_HASH_LEN];

		if (z->dial)
			FZ_FAIL("a HelloReply from the dialling rank");
		/* the proof over our Hello (ACC_KEY, ACC_UP: the bytes of
		   ACC_HELLO cannot be proven) */
		auth_reply_proof(&z->key, z->nonce_s, z->nonce_c, z->cproof,
		    want);
		z->reply_proof_len = r->auth_proof.len;
		z->reply_proven = r->auth_proof.len == AUTH_HASH_LEN &&
		    memcmp(want, r->auth_proof.data, sizeof(want)) == 0;
		if (r->ok) {
			z->nreply_ok++;
			z->reply_inc = r->incarnation;
			z->reply_delivered = r->peer_delivered;
			z->reply_proof_ok = !z->keyed || z->reply_proven;
		} else {
			z->nreply_no++;
			z->reply_code = r->code;
			snprintf(z->reply_text, sizeof(z->reply_text), "%s",
			    r->error != NULL ? r->error : "");
		}
		break;
	}
	case MPIV__MSG_TYPE__MSG_DSEND: {
		const Mpiv__DSend *d = (const Mpiv__DSend *)m;

		/* Only the Issend, sent again once the link is up, with
		   its digest (none without logging: nothing runs again);
		   as a check without payload too when the peer holds it. */
		if (d->seq != 1 || d->context != 0 || d->tag != 4 ||
		    d->digest != (z->logging ? mpiv_digest_send(0, 4,
		    fz_ssend_data, sizeof(fz_ssend_data)) : 0))
			FZ_FAIL("the rank sent a DSend that is not its Issend");
		if (d->check) {
			if (plen != 0)
				FZ_FAIL("the rank sent a check with a payload");
			z->ncheck++;
			break;
		}
		if (!d->sync || plen != sizeof(fz_ssend_data) ||
		    memcmp(pl, fz_ssend_data, plen) != 0)
			FZ_FAIL("the rank sent its Issend wrong");
		z->ndsend++;
		break;
	}
	case MPIV__MSG_TYPE__MSG_DSYNC_ACK:
		if (z->nacks < FZ_MAXMSG)
			z->acks[z->nacks++] = ((Mpiv__DSyncAck *)m)->seq;
		break;
	case MPIV__MSG_TYPE__MSG_DDATA:
		/* a pull served from the log: only the Issend is in it */
		if (((Mpiv__DData *)m)->seq != 1 ||
		    plen != sizeof(fz_ssend_data) ||
		    memcmp(pl, fz_ssend_data, plen) != 0)
			FZ_FAIL("the rank served a pull with data not its "
			    "Issend's");
		break;
	default:
		FZ_FAIL("the rank sent a %s on a link", frame_type_name(t));
	}
	frame_free_meta(m);
}

static void
fz_peer_read(struct fz *z)
{
	uint16_t t;
	ProtobufCMessage *m;
	const uint8_t *pl;
	size_t plen;

	if (z->peer < 0)
		return;
	fz_in_fill(&z->pin);
	while (!z->rank_sealed &&
	    fz_in_frame(&z->pin, &t, &m, &pl, &plen) == 1)
		fz_got(z, t, m, pl, plen);
	if (z->rank_sealed)
		z->pin.pos = z->pin.n;
}

/* One round: the rank's progress engine, then both harness ends. */
static void
fz_pump(struct fz *z)
{
	(void)mpiv_tp_progress(0);
	fz_cm_serve(z);
	fz_peer_read(z);
}

/* ---------------- setup ---------------- */

static void
fz_post(struct fz *z)
{
	MPI_Datatype vec;
	int rc = MPI_SUCCESS, p = z->prank;

	for (int k = 0; k < R_NREQ; k++) {
		size_t span = k < R_NRECV ? fz_recvs[k].span : 8;

		if ((z->buf[k] = calloc(1, span > 0 ? span : 1)) == NULL)
			abort();
	}
	memcpy(z->buf[R_SSEND], fz_ssend_data, sizeof(fz_ssend_data));
	if (MPI_Type_vector(3, 1, 2, MPI_INT, &vec) != MPI_SUCCESS ||
	    MPI_Type_commit(&vec) != MPI_SUCCESS)
		abort();
	rc |= MPI_Irecv(z->buf[R_TAG7], 16, MPI_INT, MPI_ANY_SOURCE, 7,
	    MPI_COMM_WORLD, &z->req[R_TAG7]);
	rc |= MPI_Irecv(z->buf[R_VEC], 2, vec, p, MPI_ANY_TAG, MPI_COMM_WORLD,
	    &z->req[R_VEC]);
	rc |= MPI_Irecv(z->buf[R_ONE], 1, MPI_INT, p, MPI_ANY_TAG,
	    MPI_COMM_WORLD, &z->req[R_ONE]);
	rc |= MPI_Irecv(z->buf[R_EMPTY], 0, MPI_INT, MPI_ANY_SOURCE,
	    MPI_ANY_TAG, MPI_COMM_WORLD, &z->req[R_EMPTY]);
	rc |= MPI_Irecv(z->buf[R_BIG], 64, MPI_INT, p, MPI_ANY_TAG,
	    MPI_COMM_WORLD, &z->req[R_BIG]);
	rc |= MPI_Irecv(z->buf[R_SELF], 2, MPI_INT, MPI_ANY_SOURCE,
	    MPI_ANY_TAG, MPI_COMM_SELF, &z->req[R_SELF]);
	/* no link yet: it goes into the log, and out once one is up */
	rc |= MPI_Issend(z->buf[R_SSEND], 2, MPI_INT, p, 4, MPI_COMM_WORLD,
	    &z->req[R_SSEND]);
	if (rc != MPI_SUCCESS)
		FZ_FAIL("posting the requests failed");
	MPI_Type_free(&vec);
}

/* Rank FZ_RANK of a direct job, as after MPI_Init, CM end on cm_fd. */
static void
fz_setup(struct fz *z, int cm_fd)
{
	struct tp_conn *c;

	/* Always logging: without it a lost link fails the rank at once
	   (nothing could send its messages again), which this model of
	   links that come and go does not follow. */
	z->logging = true;
	setenv("MPIV_LOGGING", "1", 1);
	mpiv_proto = &mpiv_proto_direct;
	if (dp_listen_open("127.0.0.1:9") != MPI_SUCCESS)
		FZ_FAIL("dp_listen_open: %s", mpiv_err_last_detail());
	mpiv_ndlog_init();
	tp_world_size = FZ_WORLD;
	tp_rank = FZ_RANK;
	tp_incarnation = 1;
	tp_keyed = z->keyed;
	tp_err = NULL;
	tp_last_event = 0;
	tp_nconns = 1;
	tp_conns = calloc(1, sizeof(*tp_conns));
	tp_last_seq = calloc(FZ_WORLD, sizeof(*tp_last_seq));
	tp_job = strdup(FZ_JOB);
	if (tp_conns == NULL || tp_last_seq == NULL || tp_job == NULL)
		abort();
	c = &tp_conns[0];
	c->fd = cm_fd;
	c->index = 0;
	snprintf(c->addr, sizeof(c->addr), "fuzz-cm:0");
	c->incap = TP_IN_CAP;
	if ((c->in = malloc(c->incap)) == NULL)
		abort();
	/* direct_init: the send log, the peers, lookups of ranks 2 and 3 */
	if (mpiv_p2p_init(FZ_WORLD) != MPI_SUCCESS ||
	    mpiv_comm_init(FZ_RANK, FZ_WORLD) != MPI_SUCCESS)
		abort();
	mpiv_state.world_rank = FZ_RANK;
	mpiv_state.world_size = FZ_WORLD;
	mpiv_state.initialized = true;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	fz_post(z);
}

/* The harness's Hello as prank, proven as the mode says. */
static void
fz_send_hello(struct fz *z)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	struct auth_key k = z->key;

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = FZ_JOB;
	h.rank = z->prank;
	h.incarnation = z->pinc;
	h.name = "fuzz peer";
	h.peer = FZ_RANK;
	h.peer_delivered = z->holds;
	for (size_t i = 0; i < sizeof(z->nonce_c); i++)
		z->nonce_c[i] = (uint8_t)(0xc0 + i);
	if (z->keyed && !(z->mode == M_ACC_KEY && z->var == K_NO_PROOF)) {
		if (z->mode == M_ACC_KEY && z->var == K_OTHER_PAIR)
			fz_pair_key(0, 2, &k);
		h.auth_nonce.data = z->nonce_c;
		h.auth_nonce.len = sizeof(z->nonce_c);
		auth_hello_proof(&k, z->nonce_s, &auth_no_offer, &h, z->cproof);
		h.auth_proof.data = z->cproof;
		h.auth_proof.len = sizeof(z->cproof);
	}
	fz_send(z->peer, MPIV__MSG_TYPE__MSG_HELLO, &h.base);
}

/* Accepted modes: dials the rank and gets its Challenge; further as the
   mode says. */
static void
fz_accepted(struct fz *z)
{
	struct sockaddr_in sa;
	const char *colon = strrchr(dp_listen_addr, ':');
	int fd, i;

	if (colon == NULL)
		FZ_FAIL("dp_listen_addr \"%s\"", dp_listen_addr);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* non-blocking: libFuzzer's SIGALRM would interrupt a blocking
	   connect (EINTR) */
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	    errno != EINPROGRESS))
		FZ_FAIL("connect to %s: %s", dp_listen_addr, strerror(errno));
	fz_link_fd(z, fd);
	for (i = 0; i < FZ_SPINS && !z->challenged; i++)
		fz_pump(z);
	if (!z->challenged)
		FZ_FAIL("no Challenge from the rank");
	if (z->mode == M_ACC_HELLO)
		return;
	fz_send_hello(z);
	if (z->mode == M_ACC_KEY) {
		for (i = 0; i < FZ_SPINS && !z->lookup_due; i++)
			fz_pump(z);
		if (!z->lookup_due)
			FZ_FAIL("the rank did not look up its dialler");
		return;
	}
	for (i = 0; i < FZ_SPINS && z->nreply_ok + z->nreply_no == 0; i++)
		fz_pump(z);
	if (z->nreply_ok != 1 || !z->reply_proof_ok ||
	    z->reply_inc != 1 || z->reply_delivered != 0 ||
	    dp_peers[z->prank].up == NULL)
		FZ_FAIL("the handshake of an accepted link failed (%d ok, "
		    "%d refused: %s)", z->nreply_ok, z->nreply_no,
		    z->reply_text);
}

struct fz_model;
static void fz_check_hello(const struct fz *z,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const struct fz_model *md);

/* Dialled modes: waits for the rank's dial; further as the mode says. */
static void
fz_dialled(struct fz *z)
{
	Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
	Mpiv__HelloReply r = MPIV__HELLO_REPLY__INIT;
	uint8_t proof[AUTH_HASH_LEN];
	int fd = -1, i;

	z->answer = true;
	for (i = 0; i < FZ_SPINS && fd < 0; i++) {
		struct pollfd p = { .fd = fz_lfd, .events = POLLIN };

		fz_pump(z);
		if (poll(&p, 1, i < 10 ? 0 : 1) > 0)
			fd = accept4(fz_lfd, NULL, NULL, SOCK_NONBLOCK |
			    SOCK_CLOEXEC);
	}
	if (fd < 0)
		FZ_FAIL("the rank did not dial");
	fz_link_fd(z, fd);
	fz_pump(z);		/* its connect is done: a Challenge is due */
	fz_pump(z);
	if (z->mode == M_DIAL_CHAL)
		return;
	for (size_t k = 0; k < sizeof(z->nonce_s); k++)
		z->nonce_s[k] = (uint8_t)(0x50 + k);
	ch.version = AUTH_VERSION;
	ch.auth = z->keyed;
	if (z->keyed) {
		ch.nonce.data = z->nonce_s;
		ch.nonce.len = sizeof(z->nonce_s);
	}
	fz_send(z->peer, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base);
	for (i = 0; i < FZ_SPINS && z->hello == NULL; i++)
		fz_pump(z);
	if (z->hello == NULL)
		FZ_FAIL("no Hello from the dialling rank");
	fz_check_hello(z, z->nonce_s, NULL);
	if (z->mode == M_DIAL_REPLY)
		return;
	r.ok = true;
	r.version = FRAME_VERSION;
	r.nranks = FZ_WORLD;
	r.incarnation = z->pinc;
	r.peer_delivered = z->holds;
	if (z->keyed) {
		auth_reply_proof(&z->key, z->nonce_s, z->hello->auth_nonce.data,
		    z->hello->auth_proof.data, proof);
		r.auth_proof.data = proof;
		r.auth_proof.len = sizeof(proof);
	}
	fz_send(z->peer, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &r.base);
	for (i = 0; i < FZ_SPINS && dp_peers[z->prank].up == NULL; i++)
		fz_pump(z);
	if (dp_peers[z->prank].up == NULL)
		FZ_FAIL("the dialled link did not come up");
}

/* The rank's Hello as a dialler, against the Challenge nonce it got and
   the offer of encryption it had (md: the bytes' Challenge; NULL: the
   harness's, which offers none). */
static void
fz_check_hello(const struct fz *z, const uint8_t nonce_s[AUTH_NONCE_LEN],
    const struct fz_model *md)
{
	const Mpiv__Hello *h = z->hello;
	struct auth_offer offer = auth_no_offer;
	uint8_t want[AUTH_HASH_LEN];

	if (md != NULL && md->chal) {
		offer.kx_pub = md->chal_kx;
		offer.kx_pub_len = md->chal_kx_len;
		offer.ciphers = md->chal_ciphers;
	}
	/* a cipher and our key when offered one, else neither */
	if ((h->cipher != SEAL_NONE) != (offer.ciphers != 0) ||
	    h->kx_pub.len != (offer.ciphers != 0 ? SEAL_PUB_LEN : 0) ||
	    (h->cipher != SEAL_NONE && (h->cipher >= 32 ||
	    (offer.ciphers & (1u << h->cipher)) == 0)))
		FZ_FAIL("the rank's Hello picks cipher %u from mask 0x%x",
		    h->cipher, offer.ciphers);

	if (h->role != MPIV__ROLE__ROLE_RANK || h->job_id == NULL ||
	    strcmp(h->job_id, FZ_JOB) != 0 || h->rank != FZ_RANK ||
	    h->incarnation != 1 || h->peer != z->prank ||
	    h->peer_delivered != 0 || h->version != FRAME_VERSION)
		FZ_FAIL("the rank's Hello names the wrong things");
	if (!z->keyed)
		return;
	auth_hello_proof(&z->key, nonce_s, &offer, h, want);
	if (h->auth_nonce.len != AUTH_NONCE_LEN ||
	    h->auth_proof.len != AUTH_HASH_LEN ||
	    memcmp(want, h->auth_proof.data, sizeof(want)) != 0)
		FZ_FAIL("the rank's Hello proof is not K_1%d's", z->prank);
}

/* ---------------- the model ---------------- */

/*
 * The frame at off: -1 bad (the rank closes the link), 0 not whole yet
 * (header and meta), 1 with *h, *m (to free) and *next (past the
 * payload, which may lie beyond n). The library's order of checks;
 * preauth (the handshake not ended), a header announcing more than
 * TP_PREAUTH_MAX bytes in all is bad before its meta is read.
 */
static int
fz_frame_at(const uint8_t *p, size_t n, size_t off, bool preauth,
    struct frame_hdr *h, ProtobufCMessage **m, size_t *next)
{
	const char *err;

	if (n - off < FRAME_HDR_LEN)
		return 0;
	if (frame_parse_header(p + off, h, &err) < 0)
		return -1;
	if (preauth && (size_t)h->meta_len + h->payload_len >
	    TP_PREAUTH_MAX - FRAME_HDR_LEN)
		return -1;
	if (n - off - FRAME_HDR_LEN < h->meta_len)
		return 0;
	*m = frame_unpack_meta(h->type, p + off + FRAME_HDR_LEN, h->meta_len,
	    &err);
	if (*m == NULL)
		return -1;
	*next = off + FRAME_HDR_LEN + h->meta_len + h->payload_len;
	return 1;
}

/* Whether a whole frame or a bad one lies at off (before the handshake
   ends): one the rank acts on. */
static bool
fz_frame_follows(const uint8_t *p, size_t n, size_t off)
{
	struct frame_hdr h;
	ProtobufCMessage *m = NULL;
	size_t next;
	int k = fz_frame_at(p, n, off, true, &h, &m, &next);

	frame_free_meta(m);
	return k != 0;
}

/* An accepted Hello that names a peer of this job (dp_got_hello): the
   rank looks its dialler up. */
static bool
fz_hello_names_peer(const Mpiv__Hello *h)
{
	return h->role == MPIV__ROLE__ROLE_RANK && h->job_id != NULL &&
	    strcmp(h->job_id, FZ_JOB) == 0 && h->rank >= 0 &&
	    h->rank < FZ_WORLD && h->rank != FZ_RANK && h->peer == FZ_RANK;
}

/* An accepted Hello the rank's lookup would let through unkeyed. */
static bool
fz_hello_passes(const struct fz *z, const Mpiv__Hello *h)
{
	return fz_hello_names_peer(h) && h->rank == z->prank &&
	    h->incarnation == z->pinc && h->cipher == SEAL_NONE;
}

/*
 * ACC_HELLO: the HelloReply due to the Hello h of the bytes once the
 * harness, as the CM, answers the lookup: it gives prank at pinc with
 * K, any other rank is not found; keyed, the bytes' proof fails (they
 * cannot know the Challenge's nonce), and that comes before the
 * incarnation. FZ_R_ANY: it comes up (unkeyed).
 */
static int
fz_hello_reply(const struct fz *z, const Mpiv__Hello *h)
{
	if (!fz_hello_names_peer(h))
		return MPIV__ERROR_CODE__ERR_PROTOCOL;
	if (h->rank != z->prank || z->keyed)
		return MPIV__ERROR_CODE__ERR_UNSPECIFIED;
	/* the rank offers no cipher (MPIV_INSECURE_PLAINTEXT here): a
	   pick is refused after the proof, before the incarnation */
	if (h->cipher != SEAL_NONE)
		return MPIV__ERROR_CODE__ERR_UNSPECIFIED;
	if (h->incarnation < z->pinc)
		return MPIV__ERROR_CODE__ERR_FENCED;
	if (h->incarnation > z->pinc)
		return MPIV__ERROR_CODE__ERR_UNSPECIFIED;
	return FZ_R_ANY;
}

enum { S_ACC_HELLO, S_ACC_KEY, S_CHAL, S_REPLY, S_UP };

/* ACC_KEY: whether the rank can prove the Hello with the PeerInfo's key
   (unkeyed: nothing to prove). */
static bool
fz_key_proven(const struct fz *z)
{
	switch (z->var) {
	case K_NOT_FOUND:
		return false;
	case K_NO_KEY: case K_WRONG_KEY: case K_OTHER_PAIR: case K_NO_PROOF:
		return !z->keyed;
	default:
		return true;
	}
}

/* Whether the outcome of ACC_KEY's PeerInfo is a good handshake. */
static bool
fz_key_ok(const struct fz *z)
{
	return fz_key_proven(z) && z->kinc == KI_SAME;
}

/* Whether r carries proof, the acceptor's reply proof over the dialling
   rank's Hello (NULL: none the bytes can hold). */
static bool
fz_reply_proven(const Mpiv__HelloReply *r, const uint8_t *proof)
{
	return proof != NULL && r->auth_proof.len == AUTH_HASH_LEN &&
	    memcmp(r->auth_proof.data, proof, AUTH_HASH_LEN) == 0;
}

/*
 * What the peer's bytes p[off, n) must do to the rank from link state
 * st, as dp_conn.c and p2p_direct.c define it. proof: DIAL_REPLY keyed,
 * the reply proof the rank wants (else NULL).
 */
static void
fz_model_at(const struct fz *z, const uint8_t *p, size_t n, size_t off,
    int st, const uint8_t *proof, struct fz_model *md)
{
	md->det = true;
	md->up = st == S_UP;
	md->closed = md->exit = md->any_frame = md->chal = false;
	md->chal_ciphers = 0;
	md->chal_kx_len = 0;
	md->reply = z->mode == M_ACC_HELLO ? FZ_R_NONE : FZ_R_ANY;
	md->bye = md->acked1 = false;
	md->last = 0;
	md->peer_has = z->holds;
	md->dg_trim = 0;
	md->diverged = md->may_diverge = false;
	md->diverged_seq = 0;
	md->nmsg = md->nsync = 0;
	for (;;) {
		struct frame_hdr h;
		ProtobufCMessage *m = NULL;
		size_t next = 0;
		int k = fz_frame_at(p, n, off, st != S_UP, &h, &m, &next);
		bool whole = next <= n;

		if (k < 0) {
			md->any_frame = true;
			md->closed = true;
			break;
		}
		if (k == 0)
			break;
		md->any_frame = true;
		if (st != S_UP && h.payload_len > 0) {
			md->closed = true;	/* no payload in a handshake */
		} else if (st == S_ACC_HELLO) {
			/* keyed, every frame ends it: a Hello at the
			   lookup's answer (no proof can pass) */
			if (h.type == MPIV__MSG_TYPE__MSG_HELLO) {
				const Mpiv__Hello *hh = (const Mpiv__Hello *)m;
				int want = fz_hello_reply(z, hh);

				if (!z->keyed && fz_hello_passes(z, hh)) {
					/* up, racing its frames: those it
					   takes as up might fail it */
					md->det = false;
					fz_model_at(z, p, n, next, S_UP, NULL,
					    &fz_md2);
					md->may_diverge = fz_md2.diverged;
				}
				/* Refused at once, or at the lookup's
				   answer unless a frame after it closes the
				   link first. */
				if (want != MPIV__ERROR_CODE__ERR_PROTOCOL &&
				    fz_frame_follows(p, n, next))
					want = FZ_R_ANY;
				md->reply = want;
			}
			md->closed = true;
		} else if (st == S_ACC_KEY) {
			md->closed = true;	/* no frame while it waits */
		} else if (st == S_CHAL) {
			const Mpiv__Challenge *c = (const Mpiv__Challenge *)m;

			if (h.type != MPIV__MSG_TYPE__MSG_CHALLENGE ||
			    (z->keyed && (!c->auth ||
			    c->version != AUTH_VERSION ||
			    c->nonce.len != AUTH_NONCE_LEN))) {
				md->closed = true;
			} else if (c->ciphers != 0 &&
			    (c->kx_pub.len != SEAL_PUB_LEN ||
			    seal_pick(c->ciphers) == SEAL_NONE)) {
				md->closed = true;	/* no usable offer */
			} else {
				md->chal = true;
				if (z->keyed)
					memcpy(md->chal_nonce, c->nonce.data,
					    AUTH_NONCE_LEN);
				md->chal_ciphers = c->ciphers;
				md->chal_kx_len = c->kx_pub.len;
				if (c->kx_pub.len > 0)
					memcpy(md->chal_kx, c->kx_pub.data,
					    SEAL_PUB_LEN);
				st = S_REPLY;
			}
		} else if (st == S_REPLY) {
			const Mpiv__HelloReply *r =
			    (const Mpiv__HelloReply *)m;

			/* keyed, a proof only as VAR_PROVE makes it: the
			   bytes cannot know the rank's fresh nonce */
			bool is_reply =
			    h.type == MPIV__MSG_TYPE__MSG_HELLO_REPLY;
			bool proven = is_reply && (!z->keyed ||
			    fz_reply_proven(r, proof));

			if (!is_reply) {
				md->closed = true;
			} else if (!r->ok) {
				/* fenced on the word of the peer it meant
				   to reach; anyone else just refuses it */
				if (r->code == MPIV__ERROR_CODE__ERR_FENCED &&
				    proven)
					md->exit = true;
				else
					md->closed = true;
			} else if (!proven || r->incarnation < z->pinc) {
				md->closed = true;
			} else if (md->chal_ciphers != 0) {
				/* sealed from here on, with keys of the rank's
				   ephemeral secret: the bytes after the reply
				   cannot be records, and a degenerate key of
				   theirs fails it; not the model's to say */
				md->det = false;
			} else {
				md->up = true;
				md->peer_has = r->peer_delivered;
				st = S_UP;
			}
		} else if (h.type == MPIV__MSG_TYPE__MSG_DSEND) {
			const Mpiv__DSend *d = (const Mpiv__DSend *)m;

			if (d->check && h.payload_len > 0) {
				md->closed = true;
			} else if (d->seq <= md->last || d->check) {
				/* sent again, or a check (a re-execution's
				   message it holds): compared with the first
				   unless trimmed (or the job has no logging:
				   no digests kept), dropped; a synchronous
				   one (not a check) is acknowledged again */
				if (z->logging && d->seq <= md->last &&
				    d->seq > md->dg_trim &&
				    md->dg[d->seq] != d->digest) {
					md->diverged = true;
					md->diverged_seq = d->seq;
					md->det = false;
				}
				if (d->sync && !d->check && d->seq <= md->last)
					md->sync[md->nsync++] = d->seq;
			} else if (d->seq != md->last + 1) {
				md->closed = true;
			} else if (whole) {
				struct fz_msg *g = &md->msg[md->nmsg++];

				g->seq = d->seq;
				g->ctx = d->context;
				g->tag = d->tag;
				g->sync = d->sync;
				g->p = p + off + FRAME_HDR_LEN + h.meta_len;
				g->len = h.payload_len;
				if (d->sync)
					md->sync[md->nsync++] = d->seq;
				md->last = d->seq;
				md->dg[d->seq] = d->digest;
			}
		} else if (h.type == MPIV__MSG_TYPE__MSG_DDATA) {
			/* a pull's data: none was asked here (the unexpected
			   messages stay under MPIV_UNEXPECTED_MAX): read past */
		} else if (h.payload_len > 0) {
			md->closed = true;
		} else if (h.type == MPIV__MSG_TYPE__MSG_DPULL) {
			/* seq 1 is the Issend's, served from the log; later
			   ones wait for sends this run has not made */
			if (((const Mpiv__DPull *)m)->seq == 0)
				md->closed = true;
		} else if (h.type == MPIV__MSG_TYPE__MSG_DSYNC_ACK) {
			if (((const Mpiv__DSyncAck *)m)->seq == 1)
				md->acked1 = true;
		} else if (h.type == MPIV__MSG_TYPE__MSG_DBYE) {
			md->bye = true;
		} else if (h.type == MPIV__MSG_TYPE__MSG_DTRIM) {
			/* the log of our sends to it trimmed; the digests of
			   its sends up to `sent` (those taken) forgotten */
			uint64_t t = ((const Mpiv__DTrim *)m)->sent;

			if (t > md->last)
				t = md->last;
			if (t > md->dg_trim)
				md->dg_trim = t;
		} else if (h.type == MPIV__MSG_TYPE__MSG_DCKPT_ASK) {
			/* a checkpoint asked for (none is armed here) */
		} else {
			md->closed = true;	/* Error, or not for a link */
		}
		frame_free_meta(m);
		if (md->closed || md->exit || !md->det || !whole)
			break;
		off = next;
	}
	if (z->mode == M_ACC_KEY && !md->any_frame) {
		/* the PeerInfo decides */
		md->up = fz_key_ok(z);
		md->closed = !md->up;
	}
}

/* What the peer's bytes p[0, n) must do to the rank. */
static void
fz_model(const struct fz *z, const uint8_t *p, size_t n,
    const uint8_t *proof, struct fz_model *md)
{
	static const int start[M_NMODES] = {
		[M_ACC_HELLO] = S_ACC_HELLO, [M_ACC_KEY] = S_ACC_KEY,
		[M_ACC_UP] = S_UP, [M_DIAL_CHAL] = S_CHAL,
		[M_DIAL_REPLY] = S_REPLY, [M_DIAL_UP] = S_UP,
	};

	fz_model_at(z, p, n, 0, start[z->mode], proof, md);
}

/* ---------------- the checks ---------------- */

static bool
fz_recv_matches(const struct fz *z, int k, const struct fz_msg *m)
{
	const struct fz_recv_def *d = &fz_recvs[k];

	(void)z;
	return d->ctx == m->ctx && (d->tag < 0 || d->tag == m->tag);
}

/* The image of receive k's buffer after it got m. */
static void
fz_expect_buf(int k, const struct fz_msg *m, uint8_t *want)
{
	const struct fz_recv_def *d = &fz_recvs[k];
	size_t keep = m->len < d->cap ? m->len : d->cap;

	memset(want, 0, d->span);
	for (size_t i = 0; i < keep; i++) {
		size_t at = k == R_VEC ?
		    (size_t)fz_vec_ints[i / 4] * 4 + i % 4 : i;

		want[at] = m->p[i];
	}
}

static void
fz_check_recv(const struct fz *z, int k, const struct fz_msg *m)
{
	const struct fz_recv_def *d = &fz_recvs[k];
	struct mpiv_request *r = z->req[k];
	uint8_t want[256];
	size_t keep;
	MPI_Comm comm = k == R_SELF ? MPI_COMM_SELF : MPI_COMM_WORLD;

	if (m == NULL) {
		if (r->complete)
			FZ_FAIL("receive %d complete, nothing for it", k);
		return;
	}
	if (!r->complete)
		FZ_FAIL("receive %d did not get seq %llu", k,
		    (unsigned long long)m->seq);
	if (k == R_SELF && fz_strict_context)
		FZ_FAIL("a DSend from rank %d matched a receive on "
		    "MPI_COMM_SELF", z->prank);
	keep = m->len < d->cap ? m->len : d->cap;
	if (r->status.mpiv_count != keep || r->status.MPI_TAG != m->tag ||
	    r->status.MPI_SOURCE != mpiv_comm_from_world(comm, z->prank) ||
	    r->status.MPI_ERROR != (m->len > d->cap ? MPI_ERR_TRUNCATE :
	    MPI_SUCCESS))
		FZ_FAIL("receive %d: wrong status for seq %llu", k,
		    (unsigned long long)m->seq);
	fz_expect_buf(k, m, want);
	if (memcmp(z->buf[k], want, d->span) != 0)
		FZ_FAIL("receive %d: wrong data for seq %llu", k,
		    (unsigned long long)m->seq);
}

/*
 * Takes every unexpected message of comm (Iprobe, then a receive that
 * must complete at once) and compares them with want[0, n).
 */
static void
fz_drain_unexpected(const struct fz *z, MPI_Comm comm,
    const struct fz_msg *const *want, size_t n, bool det)
{
	size_t got = 0;

	for (;;) {
		MPI_Status st;
		MPI_Request rq;
		uint8_t *b;
		size_t len;
		int flag = 0;

		if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag,
		    &st) != MPI_SUCCESS)
			FZ_FAIL("MPI_Iprobe failed");
		if (!flag)
			break;
		len = st.mpiv_count;
		if (len > 65536 || (b = malloc(len ? len : 1)) == NULL)
			FZ_FAIL("an unexpected message of %zu bytes", len);
		if (MPI_Irecv(b, (int)len, MPI_BYTE, MPI_ANY_SOURCE,
		    st.MPI_TAG, comm, &rq) != MPI_SUCCESS || !rq->complete)
			FZ_FAIL("the message Iprobe saw is not there");
		if (rq->status.mpiv_count != len ||
		    rq->status.MPI_TAG != st.MPI_TAG)
			FZ_FAIL("the message Iprobe saw changed");
		if (det) {
			const struct fz_msg *m = got < n ? want[got] : NULL;

			if (m == NULL || m->len != len || m->tag != st.MPI_TAG ||
			    (len > 0 && memcmp(b, m->p, len) != 0) ||
			    st.MPI_SOURCE != mpiv_comm_from_world(comm,
			    z->prank))
				FZ_FAIL("unexpected message %zu is wrong", got);
		}
		got++;
		mpiv_req_release(rq);
		free(b);
	}
	if (det && got != n)
		FZ_FAIL("%zu unexpected messages, want %zu", got, n);
}

/* After the hang-up: the requests, the data, the unexpected ones. */
static void
fz_check_end(const struct fz *z, const struct fz_model *md)
{
	const struct fz_msg *taken[R_NRECV] = { 0 };
	static const struct fz_msg *unx[2][FZ_MAXMSG];
	size_t nunx[2] = { 0, 0 };
	const struct dp_peer *pp = &dp_peers[z->prank];

	for (int k = 0; k < R_NREQ; k++) {
		struct mpiv_request *r = z->req[k];

		if (r->magic != MPIV_REQ_MAGIC)
			FZ_FAIL("request %d released behind our back", k);
		if (r->tmp != NULL)
			FZ_FAIL("request %d: staging outlives its payload", k);
		if (r->kind == MPIV_REQ_RECV && r->status.mpiv_count > r->cap)
			FZ_FAIL("request %d: more bytes counted than kept", k);
	}
	if (pp->up != NULL)
		FZ_FAIL("a link to rank %d after the hang-up", z->prank);
	if (md->det) {
		/* matching in post order; the rest unexpected, per
		   communicator, in arrival order */
		for (size_t i = 0; i < md->nmsg; i++) {
			const struct fz_msg *m = &md->msg[i];
			int k;

			for (k = 0; k < R_NRECV; k++)
				if (taken[k] == NULL && fz_recv_matches(z, k, m))
					break;
			if (k < R_NRECV)
				taken[k] = m;
			else if (m->ctx == 0 || m->ctx == 2)
				unx[m->ctx / 2][nunx[m->ctx / 2]++] = m;
		}
		for (int k = 0; k < R_NRECV; k++)
			fz_check_recv(z, k, taken[k]);
		if (z->req[R_SSEND]->complete != md->acked1)
			FZ_FAIL("the Issend is %scomplete",
			    md->acked1 ? "not " : "");
		if (pp->bye != md->bye)
			FZ_FAIL("DBye %sseen", md->bye ? "not " : "");
		if (pp->recv_last != md->last)
			FZ_FAIL("recv_last %llu, want %llu",
			    (unsigned long long)pp->recv_last,
			    (unsigned long long)md->last);
		if (z->ndsend != (md->up ? 1 : 0))
			FZ_FAIL("the rank resent its Issend %d times",
			    z->ndsend);
		if (z->ncheck != (md->up && md->peer_has >= 1 ? 1 : 0))
			FZ_FAIL("the rank sent its Issend as a check %d "
			    "times, the peer holding up to %llu", z->ncheck,
			    (unsigned long long)md->peer_has);
	}
	if (z->ndsend > 1 || z->ncheck > 1)
		FZ_FAIL("the rank resent its Issend %d times, %d as a check",
		    z->ndsend, z->ncheck);
	for (size_t i = 0; i < z->nacks; i++) {
		size_t j;

		for (j = 0; j < md->nsync && md->sync[j] != z->acks[i]; j++)
			;
		if (md->det && j == md->nsync)
			FZ_FAIL("a DSyncAck for seq %llu, no synchronous "
			    "DSend had it", (unsigned long long)z->acks[i]);
	}
	fz_drain_unexpected(z, MPI_COMM_WORLD, unx[0], nunx[0], md->det);
	fz_drain_unexpected(z, MPI_COMM_SELF, unx[1], nunx[1], md->det);
}

/* Before the hang-up: who closed what, what the handshake answered. */
static void
fz_check_link(struct fz *z, const struct fz_model *md)
{
	bool up = dp_peers[z->prank].up != NULL;

	bool may_be_up = z->mode == M_ACC_UP || z->mode == M_DIAL_UP ||
	    (z->mode == M_ACC_KEY && !md->any_frame && fz_key_ok(z)) ||
	    (z->mode == M_DIAL_REPLY && z->prove);

	if (z->keyed && (up || z->nreply_ok > 0) && !may_be_up)
		FZ_FAIL("a link came up without the pair key");
	/* The rank fails only on a message sent again unlike the first
	   (p2p_direct.c, dp_digest_check), and then must. */
	if (tp_err != NULL && (!(md->diverged || md->may_diverge) ||
	    strstr(tp_err, "replay diverged") == NULL))
		FZ_FAIL("the rank failed: %s", tp_err);
	if (md->diverged) {
		char want[64];

		snprintf(want, sizeof(want), "a message %llu unlike",
		    (unsigned long long)md->diverged_seq);
		if (tp_err == NULL || strstr(tp_err, want) == NULL)
			FZ_FAIL("DSend %llu sent again unlike the first, and "
			    "the rank did not fail (%s)",
			    (unsigned long long)md->diverged_seq,
			    tp_err != NULL ? tp_err : "no error");
	}
	/* A refusal proves the pair key only as fenced, keyed, and then
	   must (the Hello was proven first); nothing unproven is fenced. */
	if (z->nreply_no > 0) {
		bool fenced = z->reply_code == MPIV__ERROR_CODE__ERR_FENCED;

		if (z->keyed && fenced && (z->mode != M_ACC_KEY ||
		    !fz_key_proven(z)))
			FZ_FAIL("an unproven Hello refused as fenced: \"%s\"",
			    z->reply_text);
		if (z->keyed && fenced && !z->reply_proven)
			FZ_FAIL("a fenced refusal without the reply proof "
			    "(%zu bytes)", z->reply_proof_len);
		if (!(z->keyed && fenced) && z->reply_proof_len != 0)
			FZ_FAIL("a refusal (code %d) with a proof",
			    z->reply_code);
	}
	if (z->mode == M_DIAL_CHAL) {
		if (md->det && z->nhello != (md->chal ? 1 : 0))
			FZ_FAIL("%d Hellos from the rank for %d Challenges",
			    z->nhello, md->chal);
		if (z->hello != NULL)
			fz_check_hello(z, md->chal_nonce, md);
	}
	if (!md->det)
		return;
	if (md->closed != z->pin.eof)
		FZ_FAIL("the link is %s, want %s", z->pin.eof ? "closed" :
		    "open", md->closed ? "closed" : "open");
	if (up != (md->up && !md->closed))
		FZ_FAIL("the link is %s, want %s", up ? "up" : "not up",
		    md->up && !md->closed ? "up" : "not up");
	if (z->mode == M_ACC_HELLO && z->nreply_ok > 0)
		FZ_FAIL("a HelloReply ok to the bytes after a Challenge");
	if (z->mode == M_ACC_HELLO && md->reply != FZ_R_ANY &&
	    (md->reply == FZ_R_NONE ? z->nreply_no != 0 :
	    z->nreply_no != 1 || z->reply_code != md->reply))
		FZ_FAIL("%d refusals (code %d \"%s\"), want %s %d",
		    z->nreply_no, z->reply_code, z->reply_text,
		    md->reply == FZ_R_NONE ? "none" : "one, code",
		    md->reply);
	if (z->mode == M_ACC_KEY) {
		if (md->any_frame) {
			if (z->nreply_ok + z->nreply_no > 0)
				FZ_FAIL("a HelloReply to a lost link");
		} else if (md->up) {
			if (z->nreply_ok != 1 || !z->reply_proof_ok ||
			    z->reply_inc != 1)
				FZ_FAIL("no good HelloReply (variant %d)",
				    z->var);
		} else {
			/* who it is first (dp_accept_keyed), then its
			   incarnation */
			bool proven = fz_key_proven(z);
			const char *want = z->var == K_NOT_FOUND ?
			    "is not known to our" : !proven ?
			    (z->var == K_WRONG_KEY || z->var == K_OTHER_PAIR ?
			    AUTH_ERR_FAILED : z->var == K_NO_PROOF ?
			    "authentication required" : "no pair key") :
			    z->kinc == KI_STALE ? "is stale" :
			    "not known to our Channel Memory yet";
			bool fenced = proven && z->kinc == KI_STALE;

			if (z->nreply_no != 1 || z->nreply_ok != 0 ||
			    (z->reply_code == MPIV__ERROR_CODE__ERR_FENCED) !=
			    fenced || (!fenced && z->reply_code !=
			    MPIV__ERROR_CODE__ERR_UNSPECIFIED) ||
			    strstr(z->reply_text, want) == NULL)
				FZ_FAIL("variant %d, incarnation %d: refused "
				    "with code %d \"%s\", want \"%s\"",
				    z->var, z->kinc, z->reply_code,
				    z->reply_text, want);
		}
	}
}

/* ---------------- one input ---------------- */

/*
 * Writes the peer's bytes cut as `split` says, letting the rank read
 * after each write. Stops early when the rank closed the link.
 */
static void
fz_feed(struct fz *z, const uint8_t *p, size_t n, uint8_t split)
{
	uint32_t rng = split * 2654435761u + 1;
	size_t max = (size_t)1 << (split % 13);
	int stuck = 0;

	while (n > 0 && !z->pin.eof && stuck < 100) {
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
		w = send(z->peer, p, k, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				break;
			stuck++;
		} else {
			p += w;
			n -= (size_t)w;
		}
		fz_pump(z);
	}
}

static void
fz_teardown(struct fz *z)
{
	fz_close_rst(z->peer);
	close(z->cm);
	/* MPI_Finalize's teardown, without the rounds: links first (a
	   queued frame returns to the pool tp_close frees) */
	mpiv_tp_set_error("fuzz: the input is over");
	mpiv_p2p_fini();
	mpiv_tp_close(0);
	for (int k = R_NREQ; k-- > 0;)
		mpiv_req_release(z->req[k]);
	mpiv_comm_finalize();
	mpiv_ndlog_fini();
	mpiv_state.initialized = false;
	for (int k = 0; k < R_NREQ; k++)
		free(z->buf[k]);
	frame_free_meta(z->hello ? &z->hello->base : NULL);
	free(z->cmin.b);
	free(z->pin.b);
	if (mpiv_req_live() != 0)
		FZ_FAIL("%d requests live after the teardown", mpiv_req_live());
}

/*
 * DIAL_REPLY keyed with VAR_PROVE: the bytes to send, a first HelloReply
 * that carries 32 bytes of proof given proof instead (re-encoded: its
 * meta length may change). Else p itself. *n in and out; free what
 * differs from p.
 */
static const uint8_t *
fz_prove(const struct fz *z, const uint8_t *p, size_t *n,
    const uint8_t proof[AUTH_HASH_LEN])
{
	struct frame_hdr h;
	ProtobufCMessage *m = NULL;
	Mpiv__HelloReply *r;
	uint8_t *enc, *out;
	size_t next, len, rest, skip;

	if (!z->prove || fz_frame_at(p, *n, 0, true, &h, &m, &next) != 1)
		return p;
	r = (Mpiv__HelloReply *)m;
	if (h.type != MPIV__MSG_TYPE__MSG_HELLO_REPLY ||
	    r->auth_proof.len != AUTH_HASH_LEN) {
		frame_free_meta(m);
		return p;
	}
	memcpy(r->auth_proof.data, proof, AUTH_HASH_LEN);
	enc = frame_encode(h.type, m, h.payload_len, &len);
	frame_free_meta(m);
	skip = FRAME_HDR_LEN + (size_t)h.meta_len;
	rest = *n - skip;
	if (enc == NULL || (out = malloc(len + rest + 1)) == NULL)
		abort();
	memcpy(out, enc, len);
	memcpy(out + len, p + skip, rest);
	free(enc);
	*n = len + rest;
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz *z = &fz_z;
	const uint8_t *feed;
	size_t nfeed = size - 2;
	uint8_t proof[AUTH_HASH_LEN];
	int sv[2];

	if (size < 2 || size > 60000)
		return 0;
	memset(z, 0, sizeof(*z));
	z->mode = OPT_MODE(data[0]);
	z->keyed = !(data[0] & OPT_UNKEYED);
	z->logging = (data[0] & OPT_LOGGING) != 0;
	z->var = OPT_VAR(data[0]);
	z->dial = z->mode >= M_DIAL_CHAL;
	z->prank = z->dial ? FZ_DIAL_PEER : FZ_ACC_PEER;
	z->pinc = 1;
	if (z->mode == M_ACC_KEY) {
		z->kinc = z->var == K_STALE ? KI_STALE :
		    z->var == K_UNKNOWN_INC ? KI_AHEAD : OPT_KINC(data[1]);
		if (z->kinc == KI_AHEAD)
			z->pinc = 2;
	} else {
		if (z->var & VAR_INC2)
			z->pinc = 2;
		if (z->var & VAR_HOLDS1)
			z->holds = 1;
		z->prove = z->mode == M_DIAL_REPLY && z->keyed &&
		    (z->var & VAR_PROVE) != 0;
	}
	z->peer = -1;
	z->answer = z->mode != M_ACC_KEY;
	fz_pair_key(FZ_RANK, z->prank, &z->key);
	fz_md.exit = false;

	if (z->dial)		/* dials left by earlier runs */
		for (int fd; (fd = accept4(fz_lfd, NULL, NULL,
		    SOCK_NONBLOCK)) >= 0;)
			fz_close_rst(fd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	z->cm = sv[1];
	fz_in_init(&z->cmin, sv[1]);
	fz_nonblock(sv[1]);
	tp_test_exit_hook = fz_exit_hook;
	fz_setup(z, sv[0]);
	if (z->dial)
		fz_dialled(z);
	else
		fz_accepted(z);

	/* The model of the bytes as sent (DIAL_REPLY: after the rank's
	   Hello, whose nonce a proof covers). */
	feed = data + 2;
	if (z->mode == M_DIAL_REPLY && z->keyed) {
		auth_reply_proof(&z->key, z->nonce_s,
		    z->hello->auth_nonce.data, z->hello->auth_proof.data,
		    proof);
		feed = fz_prove(z, feed, &nfeed, proof);
	}
	fz_model(z, feed, nfeed, z->mode == M_DIAL_REPLY && z->keyed ?
	    proof : NULL, &fz_md);

	if (setjmp(fz_jmp) == 0) {
		fz_feed(z, feed, nfeed, data[1]);
		if (z->mode == M_ACC_KEY) {
			z->answer = true;
			if (z->lookup_due)
				fz_peer_info(z, z->prank);
		}
		for (int i = 0; i < 4; i++)
			fz_pump(z);
		for (int i = 0; i < FZ_SPINS && fz_md.det && fz_md.closed &&
		    !z->pin.eof; i++)
			fz_pump(z);
		if (fz_md.exit)
			FZ_FAIL("the rank did not end on a fenced refusal "
			    "that it must believe");
		fz_check_link(z, &fz_md);
		if (tp_err != NULL)
			goto failed;	/* replay diverged: reads no more */

		/* The peer hangs up: whatever is half read is undone. */
		shutdown(z->peer, SHUT_WR);
		for (int i = 0; i < FZ_SPINS && dp_peers[z->prank].up != NULL;
		    i++)
			fz_pump(z);
		for (int i = 0; i < 2; i++)
			fz_pump(z);
		fz_check_end(z, &fz_md);
	} else if (z->hello != NULL) {
		/* Ended (fz_exit_hook checked that it had to): what it
		   said before still counts. */
		fz_check_hello(z, z->mode == M_DIAL_CHAL ? fz_md.chal_nonce :
		    z->nonce_s, z->mode == M_DIAL_CHAL ? &fz_md : NULL);
	}
failed:
	tp_test_exit_hook = NULL;
	fz_teardown(z);
	if (feed != data + 2)
		free((void *)feed);
	return 0;
}

static void fz_write_seeds(const char *dir);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("MPIV_FUZZ_WRITE_SEEDS");
	const char *strict = getenv("MPIV_FUZZ_STRICT_CONTEXT");
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	if (dir != NULL) {
		fz_write_seeds(dir);
		exit(0);
	}
	fz_strict_context = strict != NULL && strcmp(strict, "1") == 0;
	signal(SIGPIPE, SIG_IGN);
	setenv("MPIV_LISTEN_HOST", "127.0.0.1", 1);
	/* The plaintext reader and handshake are what is fuzzed: the rank
	   offers no cipher and takes a Challenge that offers none (a
	   Challenge of the bytes that offers one is followed as far as
	   the model can: its Hello and proof). */
	setenv("MPIV_INSECURE_PLAINTEXT", "1", 1);
	for (size_t i = 0; i < sizeof(fz_token); i++)
		fz_token[i] = (uint8_t)(i * 13 + 7);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fz_lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fz_lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fz_lfd, 64) < 0 ||
	    getsockname(fz_lfd, (struct sockaddr *)&sa, &sl) < 0) {
		perror("fuzz_dp_read: listener");
		exit(1);
	}
	snprintf(fz_laddr, sizeof(fz_laddr), "127.0.0.1:%u",
	    (unsigned)ntohs(sa.sin_port));
	return 0;
}

/* ---------------- seeds ---------------- */

struct fz_seed {
	uint8_t b[8192];
	size_t n;
};

static void
fz_start(struct fz_seed *s, uint8_t opt, uint8_t split)
{
	s->b[0] = opt;
	s->b[1] = split;
	s->n = 2;
}

/* A frame whose header says paylen; `have` payload bytes follow. */
static void
fz_frame_cut(struct fz_seed *s, uint16_t type, const ProtobufCMessage *m,
    uint32_t paylen, size_t have)
{
	size_t len;
	uint8_t *enc = frame_encode(type, m, paylen, &len);

	if (enc == NULL || s->n + len + have > sizeof(s->b))
		abort();
	memcpy(s->b + s->n, enc, len);
	s->n += len;
	for (size_t i = 0; i < have; i++)
		s->b[s->n++] = (uint8_t)(i * 7 + 1);
	free(enc);
}

static void
fz_frame(struct fz_seed *s, uint16_t type, const ProtobufCMessage *m,
    size_t paylen)
{
	fz_frame_cut(s, type, m, (uint32_t)paylen, paylen);
}

/* A DSend with a digest (the receiver compares a message sent again
   with the first by it), or a check of one (no payload). */
static void
fz_dsend_dg(struct fz_seed *s, uint64_t seq, uint32_t ctx, int tag,
    bool sync, size_t paylen, uint64_t digest, bool check)
{
	Mpiv__DSend d = MPIV__DSEND__INIT;

	d.seq = seq;
	d.context = ctx;
	d.tag = tag;
	d.sync = sync;
	d.digest = digest;
	d.check = check;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DSEND, &d.base, paylen);
}

static void
fz_dsend(struct fz_seed *s, uint64_t seq, uint32_t ctx, int tag, bool sync,
    size_t paylen)
{
	fz_dsend_dg(s, seq, ctx, tag, sync, paylen, 0, false);
}

static void
fz_sync_ack(struct fz_seed *s, uint64_t seq)
{
	Mpiv__DSyncAck a = MPIV__DSYNC_ACK__INIT;

	a.seq = seq;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DSYNC_ACK, &a.base, 0);
}

static void
fz_dbye(struct fz_seed *s)
{
	Mpiv__DBye b = MPIV__DBYE__INIT;

	b.incarnation = 1;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DBYE, &b.base, 0);
}

static void
fz_dtrim_sent(struct fz_seed *s, uint64_t upto, uint64_t sent)
{
	Mpiv__DTrim t = MPIV__DTRIM__INIT;

	t.upto = upto;
	t.sent = sent;
	t.ckpt_no = 1;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DTRIM, &t.base, 0);
}

static void
fz_dtrim(struct fz_seed *s, uint64_t upto)
{
	fz_dtrim_sent(s, upto, 0);
}

static void
fz_dckpt_ask(struct fz_seed *s)
{
	Mpiv__DCkptAsk a = MPIV__DCKPT_ASK__INIT;

	a.log_bytes = 1u << 30;
	fz_frame(s, MPIV__MSG_TYPE__MSG_DCKPT_ASK, &a.base, 0);
}

static void
fz_error(struct fz_seed *s, const char *text)
{
	Mpiv__Error e = MPIV__ERROR__INIT;

	e.code = MPIV__ERROR_CODE__ERR_PROTOCOL;
	e.text = (char *)text;
	fz_frame(s, MPIV__MSG_TYPE__MSG_ERROR, &e.base, 0);
}

/* A Hello from rank `rank` to FZ_RANK with a made-up proof (or none). */
static void
fz_hello_inc(struct fz_seed *s, const char *job, int rank, int peer,
    bool proof, uint32_t inc)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	uint8_t junk[AUTH_HASH_LEN];

	memset(junk, 0xa5, sizeof(junk));
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = (char *)job;
	h.rank = rank;
	h.incarnation = inc;
	h.peer = peer;
	if (proof) {
		h.auth_nonce.data = junk;
		h.auth_nonce.len = sizeof(junk);
		h.auth_proof.data = junk;
		h.auth_proof.len = sizeof(junk);
	}
	fz_frame(s, MPIV__MSG_TYPE__MSG_HELLO, &h.base, 0);
}

static void
fz_hello(struct fz_seed *s, const char *job, int rank, int peer, bool proof)
{
	fz_hello_inc(s, job, rank, peer, proof, 1);
}

/* A bare header announcing meta_len and payload_len, then `have` bytes
   of junk. */
static void
fz_header(struct fz_seed *s, uint16_t type, uint32_t meta_len,
    uint32_t payload_len, size_t have)
{
	frame_put_header(s->b + s->n, type, meta_len, payload_len);
	s->n += FRAME_HDR_LEN;
	for (size_t i = 0; i < have; i++)
		s->b[s->n++] = (uint8_t)(i * 11 + 3);
}

/* Every data frame a link carries, in a good order. */
static void
fz_data(struct fz_seed *s)
{
	fz_dsend(s, 1, 0, 7, false, 40);	/* R_TAG7 */
	fz_dsend(s, 2, 0, 3, true, 24);		/* R_VEC, synchronous */
	fz_dsend(s, 3, 0, 9, false, 16);	/* R_ONE, truncated */
	fz_dsend(s, 4, 0, 5, false, 0);		/* R_EMPTY */
	fz_dsend(s, 5, 0, 6, false, 200);	/* R_BIG */
	fz_dsend(s, 6, 0, 8, true, 12);		/* unexpected */
	fz_dsend(s, 6, 0, 8, true, 12);		/* a duplicate */
	fz_dsend(s, 7, 6, 1, false, 4);		/* a later communicator */
	fz_sync_ack(s, 1);
	fz_dtrim(s, 1);
	fz_dckpt_ask(s);
	fz_dbye(s);
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
	Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	uint8_t nonce[AUTH_NONCE_LEN], proof[AUTH_HASH_LEN];
	struct fz_seed s;
	char name[64];

	memset(nonce, 0x3c, sizeof(nonce));
	memset(proof, 0x77, sizeof(proof));

	/* ACC_HELLO: garbage, a DSend first, Hellos that must be
	   refused, a Hello cut short */
	fz_start(&s, M_ACC_HELLO, 0);
	for (int i = 0; i < 40; i++)
		s.b[s.n++] = (uint8_t)(i * 37 + 11);
	fz_put(dir, "acc_hello_garbage", &s);
	fz_start(&s, M_ACC_HELLO, 0);
	fz_dsend(&s, 1, 0, 7, false, 8);
	fz_put(dir, "acc_hello_dsend", &s);
	fz_start(&s, M_ACC_HELLO, 3);
	fz_hello(&s, FZ_JOB, FZ_ACC_PEER, FZ_RANK, true);
	fz_dsend(&s, 1, 0, 7, false, 8);
	fz_put(dir, "acc_hello_bad_proof", &s);
	fz_start(&s, M_ACC_HELLO | OPT_UNKEYED, 0);
	fz_hello(&s, FZ_JOB, FZ_ACC_PEER, FZ_RANK, false);
	fz_put(dir, "acc_hello_unkeyed", &s);
	{
		/* a pick of a cipher the rank did not offer: refused */
		Mpiv__Hello h = MPIV__HELLO__INIT;
		uint8_t pub[SEAL_PUB_LEN] = { 9 };

		fz_start(&s, M_ACC_HELLO | OPT_UNKEYED, 0);
		h.version = FRAME_VERSION;
		h.role = MPIV__ROLE__ROLE_RANK;
		h.job_id = FZ_JOB;
		h.rank = FZ_ACC_PEER;
		h.incarnation = 1;
		h.peer = FZ_RANK;
		h.kx_pub.data = pub;
		h.kx_pub.len = sizeof(pub);
		h.cipher = SEAL_CHACHA20POLY1305;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO, &h.base, 0);
		fz_put(dir, "acc_hello_unkeyed_cipher", &s);
	}
	fz_start(&s, M_ACC_HELLO, 0);
	fz_hello(&s, "other", FZ_ACC_PEER, FZ_RANK, true);
	fz_put(dir, "acc_hello_other_job", &s);
	fz_start(&s, M_ACC_HELLO, 0);
	fz_hello(&s, FZ_JOB, 7, FZ_RANK, true);
	fz_put(dir, "acc_hello_rank_out_of_range", &s);
	fz_start(&s, M_ACC_HELLO, 0);
	fz_hello(&s, FZ_JOB, 3, FZ_RANK, true);
	fz_put(dir, "acc_hello_rank_unknown", &s);
	fz_start(&s, M_ACC_HELLO, 0);
	fz_hello(&s, FZ_JOB, FZ_ACC_PEER, FZ_RANK, true);
	s.n -= 5;
	fz_put(dir, "acc_hello_cut", &s);
	/* stale Hellos (the peer runs incarnation 2): unkeyed, refused as
	   fenced; keyed, unproven, refused for that whatever it claims */
	fz_start(&s, M_ACC_HELLO | OPT_UNKEYED | VAR_INC2 << 5, 0);
	fz_hello_inc(&s, FZ_JOB, FZ_ACC_PEER, FZ_RANK, false, 1);
	fz_put(dir, "acc_hello_stale_unkeyed", &s);
	fz_start(&s, M_ACC_HELLO | VAR_INC2 << 5, 0);
	fz_hello_inc(&s, FZ_JOB, FZ_ACC_PEER, FZ_RANK, true, 1);
	fz_put(dir, "acc_hello_stale_bad_proof", &s);
	fz_start(&s, M_ACC_HELLO | OPT_UNKEYED, 0);
	fz_hello_inc(&s, FZ_JOB, FZ_ACC_PEER, FZ_RANK, false, 5);
	fz_put(dir, "acc_hello_ahead_unkeyed", &s);
	/* before the handshake: a header one byte over TP_PREAUTH_MAX
	   closes the link at once; one at it waits for its meta */
	fz_start(&s, M_ACC_HELLO, 0);
	fz_header(&s, MPIV__MSG_TYPE__MSG_HELLO,
	    TP_PREAUTH_MAX - FRAME_HDR_LEN + 1, 0, 20);
	fz_put(dir, "acc_hello_too_big", &s);
	fz_start(&s, M_ACC_HELLO, 0);
	fz_header(&s, MPIV__MSG_TYPE__MSG_HELLO,
	    TP_PREAUTH_MAX - FRAME_HDR_LEN, 0, 20);
	fz_put(dir, "acc_hello_at_limit_waits", &s);
	fz_start(&s, M_ACC_HELLO | OPT_UNKEYED, 0);
	fz_header(&s, MPIV__MSG_TYPE__MSG_HELLO, 100,
	    TP_PREAUTH_MAX - FRAME_HDR_LEN - 99, 20);
	fz_put(dir, "acc_hello_too_big_payload", &s);

	/* ACC_KEY: each PeerInfo variant with nothing in between, keyed
	   and not; a frame while the lookup is out */
	for (int v = 0; v < 8; v++) {
		fz_start(&s, (uint8_t)(M_ACC_KEY | v << 5), 0);
		snprintf(name, sizeof(name), "acc_key_var%d", v);
		fz_put(dir, name, &s);
		s.b[0] |= OPT_UNKEYED;
		snprintf(name, sizeof(name), "acc_key_var%d_unkeyed", v);
		fz_put(dir, name, &s);
	}
	/* the Hello's proof against its incarnation: stale or unknown
	   and proven, or not (byte 1's top bits) */
	for (int v = 0; v < 8; v++) {
		if (v == K_NOT_FOUND || v == K_STALE || v == K_UNKNOWN_INC)
			continue;
		for (int ki = KI_STALE; ki <= KI_AHEAD; ki++) {
			fz_start(&s, (uint8_t)(M_ACC_KEY | v << 5),
			    (uint8_t)(ki << 6));
			snprintf(name, sizeof(name), "acc_key_var%d_inc%d",
			    v, ki);
			fz_put(dir, name, &s);
			s.b[0] |= OPT_UNKEYED;
			snprintf(name, sizeof(name),
			    "acc_key_var%d_inc%d_unkeyed", v, ki);
			fz_put(dir, name, &s);
		}
	}
	fz_start(&s, M_ACC_KEY, 0);
	fz_dsend(&s, 1, 0, 7, false, 0);
	fz_put(dir, "acc_key_dsend", &s);
	fz_start(&s, M_ACC_KEY, 0);
	fz_header(&s, MPIV__MSG_TYPE__MSG_DSEND, 4, 1u << 20, 4);
	fz_put(dir, "acc_key_too_big", &s);

	/* ACC_UP and DIAL_UP: the data, cut and whole, logging on and
	   off, the peer at incarnation 2 holding our seq 1 */
	fz_start(&s, M_ACC_UP, 0);
	fz_data(&s);
	fz_put(dir, "acc_up_data", &s);
	s.b[0] = M_ACC_UP | OPT_LOGGING | (VAR_INC2 | VAR_HOLDS1) << 5;
	s.b[1] = 5;
	fz_put(dir, "acc_up_data_cut_logging", &s);
	s.b[0] = M_DIAL_UP | OPT_UNKEYED;
	s.b[1] = 9;
	fz_put(dir, "dial_up_data", &s);

	/* wrong seqs: a gap after a duplicate */
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend(&s, 1, 0, 7, false, 4);
	fz_dsend(&s, 1, 0, 7, true, 4);
	fz_dsend(&s, 3, 0, 7, false, 4);
	fz_dsend(&s, 2, 0, 7, false, 4);
	fz_put(dir, "up_seq_gap", &s);
	/* seq 0 and a huge one */
	fz_start(&s, M_DIAL_UP, 0);
	fz_dsend(&s, 0, 0, 7, true, 4);
	fz_dsend(&s, UINT64_MAX, 0, 7, false, 4);
	fz_put(dir, "up_seq_extremes", &s);
	/* huge lengths: an unexpected payload of the cap, cut; a meta
	   length of 1 MiB */
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend(&s, 1, 5, 1, false, 0);
	{
		Mpiv__DSend d = MPIV__DSEND__INIT;

		d.seq = 2;
		d.context = 5;
		fz_frame_cut(&s, MPIV__MSG_TYPE__MSG_DSEND, &d.base,
		    FRAME_DEFAULT_MAX_PAYLOAD, 100);
	}
	fz_put(dir, "up_huge_payload", &s);
	fz_start(&s, M_ACC_UP, 0);
	frame_put_header(s.b + s.n, MPIV__MSG_TYPE__MSG_DSEND, FRAME_MAX_META,
	    0);
	s.n += FRAME_HDR_LEN;
	for (int i = 0; i < 64; i++)
		s.b[s.n++] = 0;
	fz_put(dir, "up_huge_meta", &s);
	fz_start(&s, M_ACC_UP, 0);
	frame_put_header(s.b + s.n, MPIV__MSG_TYPE__MSG_DSEND, 2,
	    0xffffffffu);
	s.n += FRAME_HDR_LEN;
	s.b[s.n++] = 0x08;
	s.b[s.n++] = 0x01;
	fz_put(dir, "up_over_cap_payload", &s);
	/* a payload cut short into a posted receive, then the hang-up */
	fz_start(&s, M_DIAL_UP, 2);
	fz_dsend(&s, 1, 0, 7, false, 64);
	s.n -= 20;
	fz_put(dir, "up_cut_into_receive", &s);
	/* control frames with a payload, an Error, a frame not for a link,
	   an unknown type, garbage after good data */
	fz_start(&s, M_ACC_UP, 0);
	{
		Mpiv__DSyncAck a = MPIV__DSYNC_ACK__INIT;

		a.seq = 1;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_DSYNC_ACK, &a.base, 3);
	}
	fz_put(dir, "up_ack_with_payload", &s);
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend(&s, 1, 0, 7, false, 4);
	fz_error(&s, "peer says no");
	fz_dsend(&s, 2, 0, 7, false, 4);
	fz_put(dir, "up_error", &s);
	fz_start(&s, M_DIAL_UP, 0);
	fz_dsend(&s, 1, 0, 7, false, 4);
	hr.ok = true;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "up_hello_reply", &s);
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend(&s, 1, 0, 7, false, 4);
	frame_put_header(s.b + s.n, 999, 0, 0);
	s.n += FRAME_HDR_LEN;
	fz_put(dir, "up_unknown_type", &s);
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend(&s, 1, 0, 7, false, 4);
	memcpy(s.b + s.n, "GET / HTTP/1.0\r\n\r\n", 18);
	s.n += 18;
	fz_put(dir, "up_garbage_after", &s);
	/* a DSend on MPI_COMM_SELF's context */
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend(&s, 1, 2, 0, false, 8);
	fz_dsend(&s, 2, 2, 0, false, 8);
	fz_put(dir, "up_self_context", &s);
	/* trims of our log beyond what it holds, then a DSyncAck for the
	   Issend it trimmed */
	fz_start(&s, M_DIAL_UP | OPT_LOGGING, 0);
	fz_dtrim(&s, UINT64_MAX);
	fz_dtrim(&s, 0);
	fz_sync_ack(&s, 1);
	fz_sync_ack(&s, 1);
	fz_sync_ack(&s, 2);
	fz_put(dir, "up_trim_then_ack", &s);
	/* messages sent again: the same digest (dropped), another (the
	   rank fails: replay diverged), or one whose digest the sender's
	   checkpoint let go (DTrim.sent); checks: ahead of what it took
	   (dropped), of one it took, with a payload (closed) */
	fz_start(&s, M_ACC_UP, 0);
	fz_dsend_dg(&s, 1, 0, 7, false, 4, 0x1111, false);
	fz_dsend_dg(&s, 2, 0, 3, true, 4, 0x2222, false);
	fz_dsend_dg(&s, 1, 0, 7, false, 4, 0x1111, false);
	fz_dsend_dg(&s, 2, 0, 3, true, 0, 0x2222, true);
	fz_dsend_dg(&s, 1, 0, 7, false, 4, 0x1112, false);
	fz_dsend_dg(&s, 3, 0, 5, false, 4, 0x3333, false);
	fz_put(dir, "up_again_diverged", &s);
	fz_start(&s, M_DIAL_UP | OPT_UNKEYED, 0);
	fz_dsend_dg(&s, 1, 0, 7, false, 4, 0x1111, false);
	fz_dsend_dg(&s, 2, 0, 3, false, 4, 0x2222, false);
	fz_dtrim_sent(&s, 0, 1);
	fz_dsend_dg(&s, 1, 0, 7, false, 4, 0x9999, false);
	fz_dsend_dg(&s, 2, 0, 3, false, 0, 0x9999, true);
	fz_put(dir, "up_trimmed_then_diverged", &s);
	fz_start(&s, M_ACC_UP | OPT_LOGGING, 0);
	fz_dsend_dg(&s, 5, 0, 7, true, 0, 0x5555, true);
	fz_dsend_dg(&s, 1, 0, 7, true, 4, 0x1111, false);
	fz_dsend_dg(&s, 1, 0, 7, true, 0, 0x1111, true);
	fz_dtrim_sent(&s, 0, UINT64_MAX);
	fz_dsend_dg(&s, 2, 0, 7, false, 4, 0x2222, false);
	fz_dsend_dg(&s, 2, 0, 7, false, 0, 0x2222, true);
	fz_dsend_dg(&s, 3, 0, 7, false, 2, 0x3333, true);
	fz_put(dir, "up_checks", &s);
	/* pulls: of the Issend (served from the log), of a message this
	   run has not sent (kept for later), of message 0 (closed); data
	   nobody asked for (read past), with and without a payload */
	{
		Mpiv__DPull pl = MPIV__DPULL__INIT;
		Mpiv__DData dd = MPIV__DDATA__INIT;

		fz_start(&s, M_ACC_UP | OPT_LOGGING, 0);
		fz_dsend(&s, 1, 0, 7, false, 4);
		pl.seq = 1;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_DPULL, &pl.base, 0);
		pl.seq = 9;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_DPULL, &pl.base, 0);
		dd.seq = 1;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_DDATA, &dd.base, 16);
		dd.seq = 2;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_DDATA, &dd.base, 0);
		fz_dsend(&s, 2, 0, 3, false, 4);
		fz_put(dir, "up_pulls", &s);
		fz_start(&s, M_DIAL_UP, 0);
		pl.seq = 0;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_DPULL, &pl.base, 0);
		fz_put(dir, "up_pull_zero", &s);
	}

	/* DIAL_CHAL: a Challenge, then a reply with a made-up proof;
	   unkeyed, a Challenge without auth and an ok reply, then data */
	fz_start(&s, M_DIAL_CHAL, 0);
	ch.version = AUTH_VERSION;
	ch.auth = true;
	ch.nonce.data = nonce;
	ch.nonce.len = sizeof(nonce);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
	hr.ok = true;
	hr.incarnation = 1;
	hr.auth_proof.data = proof;
	hr.auth_proof.len = sizeof(proof);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_data(&s);
	fz_put(dir, "dial_chal_forged_reply", &s);
	fz_start(&s, M_DIAL_CHAL | OPT_UNKEYED, 1);
	ch.auth = false;
	ch.nonce.len = 0;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
	hr.auth_proof.len = 0;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_data(&s);
	fz_put(dir, "dial_chal_unkeyed_up", &s);
	fz_start(&s, M_DIAL_CHAL, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
	fz_put(dir, "dial_chal_noauth", &s);
	/* unkeyed Challenges that offer encryption: a usable offer (the
	   rank picks, proves it, and after the reply seals the link),
	   ciphers without a key, a key with no cipher we run */
	{
		uint8_t pub[SEAL_PUB_LEN] = { 9 };	/* X25519's base point */

		fz_start(&s, M_DIAL_CHAL | OPT_UNKEYED, 0);
		ch.kx_pub.data = pub;
		ch.kx_pub.len = sizeof(pub);
		ch.ciphers = 1u << SEAL_CHACHA20POLY1305;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
		hr.auth_proof.len = 0;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
		fz_data(&s);
		fz_put(dir, "dial_chal_offer_sealed", &s);
		fz_start(&s, M_DIAL_CHAL | OPT_UNKEYED, 0);
		ch.kx_pub.len = 0;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
		fz_put(dir, "dial_chal_offer_nokey", &s);
		fz_start(&s, M_DIAL_CHAL | OPT_UNKEYED, 0);
		ch.kx_pub.len = sizeof(pub);
		ch.ciphers = 1u << 7;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
		fz_put(dir, "dial_chal_offer_unknown", &s);
		ch.kx_pub.data = NULL;
		ch.kx_pub.len = 0;
		ch.ciphers = 0;
	}
	/* before the handshake: too big a Challenge; unkeyed, one of
	   nearly TP_PREAUTH_MAX (a long nonce, unused), then up and data
	   the grown buffer takes */
	fz_start(&s, M_DIAL_CHAL, 0);
	fz_header(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, 5000, 0, 40);
	fz_put(dir, "dial_chal_too_big", &s);
	{
		static uint8_t longnonce[3600];

		memset(longnonce, 0x5a, sizeof(longnonce));
		fz_start(&s, M_DIAL_CHAL | OPT_UNKEYED, 0);
		ch.nonce.data = longnonce;
		ch.nonce.len = sizeof(longnonce);
		fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
		ch.nonce.data = nonce;
		ch.nonce.len = 0;
		hr.ok = true;
		hr.incarnation = 1;
		fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
		fz_dsend(&s, 1, 0, 7, false, 40);
		fz_dsend(&s, 2, 0, 3, true, 24);
		fz_put(dir, "dial_chal_big_unkeyed_up", &s);
	}
	/* fenced after a Challenge: unkeyed, believed (the rank ends);
	   keyed, the proof cannot be right: refused only */
	hr.ok = false;
	hr.code = MPIV__ERROR_CODE__ERR_FENCED;
	hr.error = "incarnation 1 of rank 1 is stale: 2 is running";
	fz_start(&s, M_DIAL_CHAL | OPT_UNKEYED, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_chal_fenced_unkeyed", &s);
	fz_start(&s, M_DIAL_CHAL, 0);
	ch.auth = true;
	ch.nonce.len = sizeof(nonce);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, 0);
	hr.auth_proof.data = proof;
	hr.auth_proof.len = sizeof(proof);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_chal_fenced_keyed", &s);
	hr.auth_proof.len = 0;
	hr.code = 0;
	hr.error = NULL;

	/* DIAL_REPLY: refusals (not as fenced), a stale incarnation */
	fz_start(&s, M_DIAL_REPLY, 0);
	hr.ok = false;
	hr.error = "go away";
	hr.code = MPIV__ERROR_CODE__ERR_PROTOCOL;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_reply_refused", &s);
	fz_start(&s, M_DIAL_REPLY | OPT_UNKEYED | VAR_INC2 << 5, 0);
	hr.ok = true;
	hr.error = NULL;
	hr.code = 0;
	hr.incarnation = 1;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_reply_stale_peer", &s);
	fz_start(&s, M_DIAL_REPLY | OPT_UNKEYED, 4);
	hr.incarnation = 3;
	hr.peer_delivered = 1;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_data(&s);
	fz_put(dir, "dial_reply_unkeyed_up", &s);
	hr.peer_delivered = 0;

	/* DIAL_REPLY, fenced: unkeyed and proven (VAR_PROVE puts the true
	   proof in) the rank ends; a made-up proof or none, keyed: the
	   link is refused only */
	hr.ok = false;
	hr.incarnation = 0;
	hr.code = MPIV__ERROR_CODE__ERR_FENCED;
	hr.error = "incarnation 1 of rank 1 is stale: 2 is running";
	fz_start(&s, M_DIAL_REPLY | OPT_UNKEYED, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_reply_fenced_unkeyed", &s);
	hr.auth_proof.data = proof;
	hr.auth_proof.len = sizeof(proof);
	fz_start(&s, M_DIAL_REPLY | VAR_PROVE << 5, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_reply_fenced_proven", &s);
	s.b[0] = M_DIAL_REPLY;
	fz_put(dir, "dial_reply_fenced_unproven", &s);
	fz_start(&s, M_DIAL_REPLY | VAR_PROVE << 5, 0);
	hr.auth_proof.len = 0;
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_reply_fenced_no_proof", &s);
	/* refused, not fenced, with the true proof: refused only */
	fz_start(&s, M_DIAL_REPLY | VAR_PROVE << 5, 0);
	hr.code = MPIV__ERROR_CODE__ERR_UNSPECIFIED;
	hr.error = "incarnation not known to our Channel Memory yet";
	hr.auth_proof.len = sizeof(proof);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_put(dir, "dial_reply_refused_proven", &s);

	/* DIAL_REPLY keyed, proven: up, then the data; from a stale
	   peer; up, then frames bigger than the buffer a handshake has */
	hr.ok = true;
	hr.code = 0;
	hr.error = NULL;
	hr.incarnation = 1;
	fz_start(&s, M_DIAL_REPLY | VAR_PROVE << 5, 3);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_data(&s);
	fz_put(dir, "dial_reply_proven_up", &s);
	fz_start(&s, M_DIAL_REPLY | (VAR_PROVE | VAR_INC2) << 5, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_dsend(&s, 1, 0, 7, false, 4);
	fz_put(dir, "dial_reply_proven_stale_peer", &s);
	fz_start(&s, M_DIAL_REPLY | VAR_PROVE << 5, 0);
	fz_frame(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, 0);
	fz_dsend(&s, 1, 4, 2, false, 3000);	/* unexpected */
	{
		Mpiv__DSend d = MPIV__DSEND__INIT;

		d.seq = 2;
		d.context = 4;
		fz_frame_cut(&s, MPIV__MSG_TYPE__MSG_DSEND, &d.base,
		    TP_IN_CAP * 2, 600);
	}
	fz_put(dir, "dial_reply_proven_big", &s);
	fz_start(&s, M_DIAL_REPLY, 0);
	fz_header(&s, MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    TP_PREAUTH_MAX - FRAME_HDR_LEN + 1, 0, 100);
	fz_put(dir, "dial_reply_too_big", &s);
}
