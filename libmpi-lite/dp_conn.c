/*
 * dp_conn.c: the links of a direct-protocol rank to its peers
 * (docs/DIRECT.md, "Connections").
 *
 * Each rank listens on a TCP port and says where in its Hello to the CMs.
 * To reach peer p it asks p's home CM (PeerLookup), which answers with
 * p's address, live incarnation and the pair key K_ij; then it dials, in
 * the background: every step is driven by the progress engine
 * (transport.c), nothing here blocks. The handshake is the one of the
 * CMs with K_ij as the key: Challenge from the accepting side, Hello
 * (rank, incarnation, the peer dialled, the last seq delivered from it)
 * with its proof, HelloReply (incarnation, the last seq delivered from
 * the dialler) with the acceptor's proof. The acceptor learns K_ij and
 * the dialler's live incarnation by its own lookup: a dialler below that
 * incarnation is refused as fenced and exits, as a CM fences it. The
 * Challenge and the Hello carry the key exchange (runtime/seal.h): from
 * the HelloReply on, the link is sealed both ways with keys only these
 * two ranks hold, K_ij and the ephemeral secrets.
 *
 * Who dials: at a first start each rank dials the ranks above it; a
 * relaunched rank (incarnation > 1) dials every peer, since peers do not
 * know it came back. A lost link is dialled again by the side that
 * dials. When two links to one peer come up (both sides dialled), the
 * one to the newer incarnation wins, and between equals the one the
 * lower rank dialled: both sides apply the same rule. Whichever link is
 * in use, the peer is sent its messages above the seq it said it holds
 * (p2p_direct.c), so a switch loses nothing and repeats nothing it keeps.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth_client.h"
#include "direct.h"
#include "mono.h"
#include "net.h"
#include "transport.h"

#define DP_HANDSHAKE_MS	10000	/* a handshake must end within this */
#define DP_RETRY_MIN_MS	5
#define DP_RETRY_MAX_MS	200
#define DP_UNAUTH_MAX	64	/* accepted links in handshake, plus 2 per rank */

enum dp_lstate {
	L_CONNECTING = 1,	/* dialled: non-blocking connect in flight */
	L_WAIT_CHALLENGE,	/* dialled: the acceptor's Challenge due */
	L_WAIT_REPLY,		/* dialled: Hello sent, HelloReply due */
	L_WAIT_HELLO,		/* accepted: Challenge sent, Hello due */
	L_WAIT_KEY,		/* accepted: our lookup of the dialler out */
	L_UP,			/* handshake done */
};

struct dp_link {
	struct tp_conn c;	/* first: dp_link_of casts back */
	struct dp_link *next;
	enum dp_lstate st;
	bool dialled;
	bool gone;		/* closed, freed at the next reap */
	uint32_t peer_inc;
	uint64_t peer_delivered;	/* from its Hello or HelloReply */
	uint64_t peer_needed;		/* the same: its log's matches name */
	uint8_t nonce_s[AUTH_NONCE_LEN], nonce_c[AUTH_NONCE_LEN];
	size_t nonce_s_len;	/* 0: the Challenge had none (unkeyed) */
	uint8_t proof[AUTH_HASH_LEN];	/* the dialler's, to check the reply */
	/* The key exchange: our ephemeral pair, the acceptor's offer (its
	   key and cipher mask, as sent), the cipher the dialler picked. */
	struct seal_kx kx;
	uint8_t server_pub[SEAL_PUB_LEN];
	uint32_t offered;
	enum seal_cipher cipher;
	Mpiv__Hello *hello;	/* accepted: its Hello, until our lookup */
	long deadline;		/* mono_us by which the handshake ends */
};

struct dp_peer *dp_peers;
int dp_world, dp_rank;
uint32_t dp_inc;
bool dp_active;
char dp_listen_addr[256];

static int dp_lfd = -1;			/* the listener */
static char *dp_cms;			/* MPIV_CMS, to listen again */
static struct dp_link *dp_links;
/* What dp_poll_fill put in the pollfd array, in order: NULL for the
   listener, else the link. */
static struct dp_link **dp_pollobj;
static int dp_pollcap;

void
dp_debug(const char *fmt, ...)
{
	static int on = -1;
	char line[400];
	va_list ap;
	int n;

	if (on < 0)
		on = getenv("MPIV_DIRECT_DEBUG") != NULL;
	if (!on)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0) {
		/* nothing to do */
	}
}

struct dp_link *
dp_link_of(struct tp_conn *c)
{
	return (struct dp_link *)c;
}

/* ---------------- the listener ---------------- */

/*
 * The address peers reach us at: MPIV_LISTEN_HOST when the node says
 * it, else the local address the kernel would use toward the first CM
 * (a UDP connect sends nothing).
 */
static int
dp_local_host(const char *cms, char *host, size_t hostlen)
{
	const char *e = getenv("MPIV_LISTEN_HOST");
	char first[256], h[200], port[32];
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	size_t n;
	int fd, rc = -1;

	if (e != NULL && *e != '\0') {
		snprintf(host, hostlen, "%s", e);
		return 0;
	}
	n = strcspn(cms, ",");
	if (n >= sizeof(first))
		return -1;
	memcpy(first, cms, n);
	first[n] = '\0';
	if (net_split_hostport(first, h, sizeof(h), port, sizeof(port)) < 0)
		return -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_DGRAM;
	if (getaddrinfo(*h ? h : "127.0.0.1", port, &hints, &ai) != 0)
		return -1;
	fd = socket(ai->ai_family, SOCK_DGRAM, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), NULL, 0,
	    NI_NUMERICHOST) == 0) {
		if (ss.ss_family == AF_INET6)
			snprintf(host, hostlen, "[%s]", h);
		else
			snprintf(host, hostlen, "%s", h);
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

static void dp_sock_tune(int fd);

int
dp_listen_open(const char *cms)
{
	char host[256], bound[300], bh[200], bp[32];

	dp_active = true;
	if (dp_cms == NULL && (dp_cms = strdup(cms)) == NULL)
		return MPI_ERR_NO_MEM;
	if (dp_local_host(cms, host, sizeof(host)) < 0) {
		mpiv_err_detail("cannot tell this node's address toward the "
		    "Channel Memories (set MPIV_LISTEN_HOST)");
		return MPI_ERR_OTHER;
	}
	dp_lfd = net_listen(strchr(host, ':') != NULL && host[0] != '[' ?
	    "[::]:0" : host[0] == '[' ? "[::]:0" : "0.0.0.0:0", bound,
	    sizeof(bound));
	if (dp_lfd < 0 || net_split_hostport(bound, bh, sizeof(bh), bp,
	    sizeof(bp)) < 0) {
		mpiv_err_detail("cannot listen for peer ranks: %s",
		    strerror(errno));
		return MPI_ERR_OTHER;
	}
	dp_sock_tune(dp_lfd);	/* the links it accepts inherit it */
	snprintf(dp_listen_addr, sizeof(dp_listen_addr), "%.200s:%.31s", host,
	    bp);
	return MPI_SUCCESS;
}

/* ---------------- links ---------------- */

/* No Nagle; send and receive buffers that take a large message whole:
   its bytes travel while the sender copies it into its log, and the
   receiver copies the first pieces out while the next ones come (with
   the kernel's own receive buffer sizing a 1 MiB ping-pong took 1.7x as
   long; docs/BENCHMARKS.md). MPIV_SOCKBUF, bytes, 0: the kernel's own
   sizing for both. Each buffer only where net.core.rmem_max (receive)
   or wmem_max (send) allows that much: a smaller one would only turn
   the kernel's own sizing (up to tcp_rmem's or tcp_wmem's maximum) off,
   and Debian's default for both is 212992. Set before the handshake: on
   a dialled socket before connect, on the listener for the links it
   accepts. */
static bool
dp_sysctl_allows(const char *path, int v)
{
	FILE *f = fopen(path, "re");
	long max = 0;
	bool ok;

	ok = f != NULL && fscanf(f, "%ld", &max) == 1 && max >= v;
	if (f != NULL)
		fclose(f);
	return ok;
}

static void
dp_sock_tune(int fd)
{
	static long buf = -1;
	static int rcv = -1, snd = -1;

	(void)net_set_nodelay(fd);
	if (buf < 0) {
		const char *e = getenv("MPIV_SOCKBUF");

		buf = e != NULL && *e != '\0' ? atol(e) : 4L << 20;
		if (buf < 0)
			buf = 0;
	}
	if (buf > 0) {
		int v = buf > (1L << 30) ? 1 << 30 : (int)buf;

		if (snd < 0)
			snd = dp_sysctl_allows("/proc/sys/net/core/wmem_max",
			    v);
		if (rcv < 0)
			rcv = dp_sysctl_allows("/proc/sys/net/core/rmem_max",
			    v);
		if (snd)
			(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v,
			    sizeof(v));
		if (rcv)
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v,
			    sizeof(v));
	}
}

static struct dp_link *
dp_link_new(int fd, bool dialled, int peer)
{
	struct dp_link *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->c.incap = TP_PREAUTH_MAX;	/* grows once the handshake ends */
	if ((l->c.in = malloc(l->c.incap)) == NULL) {
		free(l);
		return NULL;
	}
	l->c.fd = fd;
	l->c.index = -1;
	l->c.is_peer = true;
	l->c.preauth = true;
	l->c.peer = peer;
	l->dialled = dialled;
	l->deadline = mono_us() + DP_HANDSHAKE_MS * 1000L;
	l->next = dp_links;
	dp_links = l;
	if (peer >= 0)
		snprintf(l->c.addr, sizeof(l->c.addr), "rank %d", peer);
	return l;
}

/* The next lookup of p in a while, longer each time up to a cap. */
static void
dp_retry_later(struct dp_peer *pp)
{
	pp->dialing = false;
	pp->backoff_ms = pp->backoff_ms == 0 ? DP_RETRY_MIN_MS :
	    pp->backoff_ms * 2 > DP_RETRY_MAX_MS ? DP_RETRY_MAX_MS :
	    pp->backoff_ms * 2;
	pp->retry_at = mono_us() + pp->backoff_ms * 1000L;
}

/* Closes l (freed by dp_reap). What it was in the middle of is undone;
   a link in use leaves its peer without one. */
static void
dp_link_close(struct dp_link *l)
{
	struct tp_frame *f, *next;
	int p = l->c.peer;

	if (l->gone)
		return;
	l->gone = true;
	l->c.dead = true;
	if (p >= 0 && p < dp_world && dp_peers[p].up == l) {
		dp_peers[p].up = NULL;
		dpx_link_down(p, &l->c);
	}
	if (p >= 0 && p < dp_world && l->dialled && l->st != L_UP &&
	    dp_peers[p].dialing)
		dp_retry_later(&dp_peers[p]);
	/* Sends queued here are in the log: they count as written (the
	   next link resends them). */
	for (f = l->c.qhead; f != NULL; f = next) {
		next = f->next;
		if (f->req != NULL)
			mpiv_p2p_send_written(f->req);
		tp_frame_put(f);
	}
	l->c.qhead = l->c.qtail = l->c.utail = NULL;
	if (l->c.meta != NULL)
		frame_free_meta(l->c.meta);
	l->c.meta = NULL;
	if (l->hello != NULL)
		frame_free_meta(&l->hello->base);
	l->hello = NULL;
	if (l->c.fd >= 0)
		close(l->c.fd);
	l->c.fd = -1;
	seal_kx_wipe(&l->kx);
	seal_end(&l->c.seal);
}

/* Frees the closed links. */
static void
dp_reap(void)
{
	struct dp_link **lp = &dp_links;

	while (*lp != NULL) {
		struct dp_link *l = *lp;

		if (!l->gone) {
			lp = &l->next;
			continue;
		}
		*lp = l->next;
		free(l->c.in);
		free(l);
	}
}

void
dp_link_lost(struct tp_conn *c, const char *what, const char *why)
{
	struct dp_link *l = dp_link_of(c);

	if (l->gone)
		return;
	dp_debug("rank %d: link to rank %d lost (%s: %s)", dp_rank,
	    c->peer, what != NULL ? what : "closed", why);
	dp_link_close(l);
}

/* ---------------- lookups and dialling ---------------- */

int
dp_lookup(int p)
{
	Mpiv__PeerLookup pl = MPIV__PEER_LOOKUP__INIT;

	/* p's home CM: it keeps p's outcomes (the Finalize commit). */
	pl.rank = p;
	return mpiv_tp_send(mpiv_tp_home(p),
	    MPIV__MSG_TYPE__MSG_PEER_LOOKUP, &pl.base, NULL, 0, NULL, NULL);
}

/* Starts a non-blocking connect to p at pp->addr. */
static void
dp_dial(int p)
{
	struct dp_peer *pp = &dp_peers[p];
	char host[200], port[32];
	struct addrinfo hints, *ai = NULL;
	struct dp_link *l;
	int fd;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (net_split_hostport(pp->addr, host, sizeof(host), port,
	    sizeof(port)) < 0 || getaddrinfo(host, port, &hints, &ai) != 0) {
		dp_retry_later(pp);
		return;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd >= 0)
		dp_sock_tune(fd);
	if (fd < 0 || (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 &&
	    errno != EINPROGRESS) || (l = dp_link_new(fd, true, p)) == NULL) {
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		dp_retry_later(pp);
		return;
	}
	freeaddrinfo(ai);
	l->st = L_CONNECTING;
	l->peer_inc = pp->inc;
	snprintf(l->c.addr, sizeof(l->c.addr), "rank %d at %.200s", p,
	    pp->addr);
}

/* Refuses an accepted link with a HelloReply, then closes it. */
static void
dp_refuse(struct dp_link *l, int code, const char *why,
    const uint8_t proof[AUTH_HASH_LEN])
{
	Mpiv__HelloReply r = MPIV__HELLO_REPLY__INIT;

	r.ok = false;
	r.error = (char *)why;
	r.code = code;
	r.version = FRAME_VERSION;
	if (proof != NULL) {
		r.auth_proof.data = (uint8_t *)proof;
		r.auth_proof.len = AUTH_HASH_LEN;
	}
	(void)tp_conn_send(&l->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &r.base,
	    NULL, 0, NULL, NULL, false);
	dp_debug("rank %d: refused a link from rank %d: %s", dp_rank,
	    l->c.peer, why);
	dp_link_close(l);
}

/* l's handshake is done: it becomes p's link in use unless the one in
   use wins (newer incarnation; between equals, the lower rank's dial). */
static void
dp_link_up(struct dp_link *l)
{
	int p = l->c.peer;
	struct dp_peer *pp = &dp_peers[p];
	struct dp_link *o = pp->up;

	l->st = L_UP;
	l->c.preauth = false;
	if (l->c.incap < TP_IN_CAP) {
		uint8_t *in = realloc(l->c.in, TP_IN_CAP);

		if (in != NULL) {
			l->c.in = in;
			l->c.incap = TP_IN_CAP;
		}
	}
	if (l->dialled) {
		pp->dialing = false;
		pp->backoff_ms = 0;
	}
	if (o != NULL && o != l) {
		bool keep_new = l->peer_inc != o->peer_inc ?
		    l->peer_inc > o->peer_inc :
		    l->dialled == (dp_rank < p);

		if (!keep_new) {
			dp_link_close(l);
			return;
		}
		dp_link_close(o);
	}
	pp->up = l;
	pp->peer_has = l->peer_delivered;
	if (l->peer_needed > pp->peer_needs)
		pp->peer_needs = l->peer_needed;
	pp->inc = l->peer_inc;
	snprintf(l->c.addr, sizeof(l->c.addr), "rank %d (incarnation %u)", p,
	    l->peer_inc);
	dp_debug("rank %d: link to rank %d up (%s, it holds our seq %llu)",
	    dp_rank, p, l->dialled ? "dialled" : "accepted",
	    (unsigned long long)l->peer_delivered);
	dpx_link_up(p);
}

/*
 * Turns l's session on, its handshake done: keys from K_ij (without a
 * job token none: sealed, not authenticated), both ephemeral keys and
 * both nonces as they went on the wire. Bytes read past the HelloReply
 * are its first records. A link that picked no cipher stays plaintext.
 * 0, or -1 with l lost.
 */
static int
dp_seal_on(struct dp_link *l, const uint8_t *peer_pub,
    const uint8_t *nonce_c, size_t nonce_c_len)
{
	const struct auth_key *k = tp_keyed ? &dp_peers[l->c.peer].key : NULL;
	uint8_t own[SEAL_PUB_LEN], peer[SEAL_PUB_LEN];
	struct tp_conn *c = &l->c;
	char who[48];
	int rc;

	snprintf(who, sizeof(who), "rank %d incarnation %u", dp_rank, dp_inc);
	auth_client_trace(who, c->addr, l->cipher);
	if (l->cipher == SEAL_NONE)
		return 0;
	memcpy(own, l->kx.pub, SEAL_PUB_LEN);
	memcpy(peer, peer_pub, SEAL_PUB_LEN);
	rc = seal_start(&c->seal, l->dialled, l->cipher, k != NULL ? k->k :
	    NULL, k != NULL ? k->len : 0, &l->kx, peer, l->dialled ? own :
	    peer, l->dialled ? peer : own, l->nonce_s, l->nonce_s_len,
	    nonce_c, nonce_c_len);
	if (rc < 0) {
		dp_link_lost(c, "handshake", "degenerate key exchange key");
		return -1;
	}
	if (c->inpos < c->inlen && seal_feed(&c->seal, c->in + c->inpos,
	    c->inlen - c->inpos) < 0) {
		dp_link_lost(c, "handshake", "out of memory");
		return -1;
	}
	c->inpos = c->inlen = 0;
	return 0;
}

/*
 * The cipher an accepted link's Hello picked must be one we offered,
 * with its key; none only when we offered none or may talk plaintext.
 * NULL, or why not.
 */
static const char *
dp_check_pick(struct dp_link *l, const Mpiv__Hello *h)
{
	if (h->cipher == SEAL_NONE) {
		if (l->offered != 0 && !auth_client_plain_ok())
			return SEAL_ERR_PLAIN_PEER;
		l->cipher = SEAL_NONE;
		return NULL;
	}
	if (h->cipher >= 32 || (l->offered & (1u << h->cipher)) == 0)
		return "a cipher we did not offer";
	if (h->kx_pub.len != SEAL_PUB_LEN ||
	    h->auth_nonce.len != AUTH_NONCE_LEN)
		return "a cipher without its key exchange";
	l->cipher = (enum seal_cipher)h->cipher;
	return NULL;
}

/* Our lookup of p answered an accepted link waiting for it. */
static void
dp_accept_keyed(struct dp_link *l, const Mpiv__PeerInfo *pi)
{
	Mpiv__HelloReply r = MPIV__HELLO_REPLY__INIT;
	Mpiv__Hello *h = l->hello;
	int p = l->c.peer;
	struct auth_offer offer;
	uint8_t proof[AUTH_HASH_LEN];
	const char *why;
	char text[160];

	if (!pi->found) {
		snprintf(text, sizeof(text), "rank %d is not known to our "
		    "Channel Memory now (%s)", p, pi->error ? pi->error : "?");
		dp_refuse(l, MPIV__ERROR_CODE__ERR_UNSPECIFIED, text, NULL);
		return;
	}
	/* Who it is first: an unproven peer learns nothing more. */
	if (tp_keyed) {
		if (pi->pair_key.len != AUTH_HASH_LEN) {
			dp_refuse(l, MPIV__ERROR_CODE__ERR_UNSPECIFIED,
			    "our Channel Memory gave no pair key", NULL);
			return;
		}
		auth_key_set(&dp_peers[p].key, pi->pair_key.data,
		    pi->pair_key.len);
		dp_peers[p].have_key = true;
		offer.kx_pub = l->kx.pub;
		offer.kx_pub_len = l->offered != 0 ? SEAL_PUB_LEN : 0;
		offer.ciphers = l->offered;
		if ((why = auth_check_hello(&dp_peers[p].key, l->nonce_s,
		    &offer, h, proof)) != NULL) {
			dp_refuse(l, MPIV__ERROR_CODE__ERR_UNSPECIFIED, why,
			    NULL);
			return;
		}
		r.auth_proof.data = proof;
		r.auth_proof.len = sizeof(proof);
	}
	if ((why = dp_check_pick(l, h)) != NULL) {
		dp_refuse(l, MPIV__ERROR_CODE__ERR_UNSPECIFIED, why, NULL);
		return;
	}
	if (h->incarnation < pi->incarnation) {
		/* Proven (with a token): the dialler may believe it. */
		snprintf(text, sizeof(text), "incarnation %u of rank %d is "
		    "stale: %u is running", h->incarnation, p, pi->incarnation);
		dp_refuse(l, MPIV__ERROR_CODE__ERR_FENCED, text,
		    tp_keyed ? proof : NULL);
		return;
	}
	if (h->incarnation > pi->incarnation) {
		dp_refuse(l, MPIV__ERROR_CODE__ERR_UNSPECIFIED, "incarnation "
		    "not known to our Channel Memory yet", NULL);
		return;
	}
	r.ok = true;
	r.version = FRAME_VERSION;
	r.nranks = dp_world;
	r.incarnation = dp_inc;
	r.peer_delivered = dpx_held(p);
	r.peer_needed = mpiv_ndlog_bind_seq_max(p);
	l->peer_inc = h->incarnation;
	l->peer_delivered = h->peer_delivered;
	l->peer_needed = h->peer_needed;
	if (tp_conn_send(&l->c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &r.base, NULL,
	    0, NULL, NULL, false) != MPI_SUCCESS || l->c.dead) {
		dp_link_close(l);
		return;
	}
	/* The reply is our last plaintext: it must be out before the
	   session starts (a fresh socket takes it at once; if not, the
	   dialler dials again). */
	if (l->c.qhead != NULL) {
		dp_link_lost(&l->c, "handshake", "the reply did not go out "
		    "at once");
		return;
	}
	if (dp_seal_on(l, h->kx_pub.data, h->auth_nonce.data,
	    h->auth_nonce.len) < 0)
		return;
	frame_free_meta(&h->base);
	l->hello = NULL;
	dp_link_up(l);
}

void
dp_peer_info(const Mpiv__PeerInfo *pi)
{
	struct dp_peer *pp;
	int p = pi->rank;

	if (!dp_active || p < 0 || p >= dp_world || p == dp_rank)
		return;
	pp = &dp_peers[p];
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		if (!l->gone && l->st == L_WAIT_KEY && l->c.peer == p)
			dp_accept_keyed(l, pi);
	if (!pp->dialing || pp->up != NULL)
		return;
	/* Our own dial's lookup: no dialled link of p is in flight. */
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		if (!l->gone && l->dialled && l->c.peer == p)
			return;
	if (!pi->found || pi->addr == NULL || *pi->addr == '\0' ||
	    (tp_keyed && pi->pair_key.len != AUTH_HASH_LEN)) {
		dp_retry_later(pp);
		return;
	}
	snprintf(pp->addr, sizeof(pp->addr), "%s", pi->addr);
	pp->inc = pi->incarnation;
	if (tp_keyed) {
		auth_key_set(&pp->key, pi->pair_key.data, pi->pair_key.len);
		pp->have_key = true;
	}
	dp_dial(p);
}

/* ---------------- handshake frames ---------------- */

static void
dp_send_hello(struct dp_link *l, const Mpiv__Challenge *ch)
{
	struct dp_peer *pp = &dp_peers[l->c.peer];
	Mpiv__Hello h = MPIV__HELLO__INIT;

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = tp_job;
	h.rank = dp_rank;
	h.incarnation = dp_inc;
	h.peer = l->c.peer;
	h.peer_delivered = dpx_held(l->c.peer);
	h.peer_needed = mpiv_ndlog_bind_seq_max(l->c.peer);
	l->peer_delivered = 0;
	l->peer_needed = 0;
	/* The key exchange: our ephemeral key and the cipher we pick. */
	l->offered = ch->ciphers;
	l->cipher = ch->ciphers != 0 && seal_init() == 0 ?
	    seal_pick(ch->ciphers) : SEAL_NONE;
	if (l->cipher != SEAL_NONE) {
		if (ch->kx_pub.len != SEAL_PUB_LEN || seal_kx_new(&l->kx) < 0) {
			dp_link_lost(&l->c, "handshake", "no usable key "
			    "exchange offer");
			return;
		}
		memcpy(l->server_pub, ch->kx_pub.data, SEAL_PUB_LEN);
		h.kx_pub.data = l->kx.pub;
		h.kx_pub.len = SEAL_PUB_LEN;
		h.cipher = (uint32_t)l->cipher;
	} else if (ch->ciphers != 0 ? !seal_plaintext() :
	    !auth_client_plain_ok()) {
		/* (we pick none when we run --insecure-plaintext: the
		   acceptor says whether it talks plaintext) */
		dp_link_lost(&l->c, "handshake", ch->ciphers != 0 ?
		    "no cipher in common with the peer" : AUTH_ERR_PLAIN);
		return;
	}
	/* Both nonces go into the keys whenever there is one of each. */
	l->nonce_s_len = ch->nonce.len == AUTH_NONCE_LEN ? AUTH_NONCE_LEN : 0;
	if (l->nonce_s_len > 0)
		memcpy(l->nonce_s, ch->nonce.data, AUTH_NONCE_LEN);
	if (l->cipher != SEAL_NONE && !tp_keyed) {
		if (auth_random(l->nonce_c, sizeof(l->nonce_c)) < 0) {
			dp_link_lost(&l->c, "handshake", "no random nonce");
			return;
		}
		h.auth_nonce.data = l->nonce_c;
		h.auth_nonce.len = sizeof(l->nonce_c);
	}
	if (tp_keyed) {
		struct auth_offer offer = { ch->kx_pub.data, ch->kx_pub.len,
		    ch->ciphers };

		if (!ch->auth) {
			dp_link_lost(&l->c, "handshake", AUTH_ERR_NOAUTH);
			return;
		}
		if (ch->version != AUTH_VERSION ||
		    ch->nonce.len != AUTH_NONCE_LEN ||
		    auth_random(l->nonce_c, sizeof(l->nonce_c)) < 0) {
			dp_link_lost(&l->c, "handshake", "bad challenge");
			return;
		}
		memcpy(l->nonce_s, ch->nonce.data, AUTH_NONCE_LEN);
		h.auth_nonce.data = l->nonce_c;
		h.auth_nonce.len = sizeof(l->nonce_c);
		auth_hello_proof(&pp->key, l->nonce_s, &offer, &h, l->proof);
		h.auth_proof.data = l->proof;
		h.auth_proof.len = sizeof(l->proof);
	}
	l->st = L_WAIT_REPLY;
	if (tp_conn_send(&l->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0,
	    NULL, NULL, false) != MPI_SUCCESS)
		dp_link_close(l);
}

/* A peer refused us as stale: a newer incarnation of this rank runs, so
   this one stops at once, as when a CM fences it. */
static void __attribute__((noreturn))
dp_fenced(struct dp_link *l, const char *text)
{
	char line[600];
	int n;

	n = snprintf(line, sizeof(line), "mpiv: rank %d: %s fenced this "
	    "process: %s; exiting\n", dp_rank, l->c.addr, text);
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n :
	    sizeof(line) - 1) < 0) {
		/* exiting anyway */
	}
	tp_end_process(0, 1);
}

/* The reply proves the pair key over both nonces and our proof. */
static bool
dp_reply_proven(struct dp_link *l, const Mpiv__HelloReply *r)
{
	uint8_t want[AUTH_HASH_LEN];
	bool ok;

	auth_reply_proof(&dp_peers[l->c.peer].key, l->nonce_s, l->nonce_c,
	    l->proof, want);
	ok = r->auth_proof.len == AUTH_HASH_LEN &&
	    auth_equal(want, r->auth_proof.data, AUTH_HASH_LEN);
	auth_wipe(want, sizeof(want));
	return ok;
}

static void
dp_got_reply(struct dp_link *l, const Mpiv__HelloReply *r)
{
	struct dp_peer *pp = &dp_peers[l->c.peer];

	if (!r->ok) {
		/* Fenced only on the word of the peer we meant to reach
		   (it proves the pair key): anyone else is just refused. */
		if (r->code == MPIV__ERROR_CODE__ERR_FENCED && (!tp_keyed ||
		    dp_reply_proven(l, r)))
			dp_fenced(l, r->error && *r->error ? r->error :
			    "stale incarnation");
		dp_link_lost(&l->c, "refused", r->error && *r->error ?
		    r->error : "(no reason)");
		return;
	}
	if (tp_keyed && !dp_reply_proven(l, r)) {
		dp_link_lost(&l->c, "handshake", AUTH_ERR_IMPOSTOR);
		return;
	}
	if (r->incarnation < pp->inc) {
		dp_link_lost(&l->c, "handshake", "the peer there is a stale "
		    "incarnation");
		return;
	}
	l->peer_inc = r->incarnation;
	l->peer_delivered = r->peer_delivered;
	l->peer_needed = r->peer_needed;
	if (dp_seal_on(l, l->server_pub, l->nonce_c, AUTH_NONCE_LEN) < 0)
		return;
	dp_link_up(l);
}

static void
dp_got_hello(struct dp_link *l)
{
	Mpiv__Hello *h = (Mpiv__Hello *)l->c.meta;
	char why[160];

	if (h->role != MPIV__ROLE__ROLE_RANK || h->job_id == NULL ||
	    strcmp(h->job_id, tp_job) != 0 || h->rank < 0 ||
	    h->rank >= dp_world || h->rank == dp_rank || h->peer != dp_rank) {
		snprintf(why, sizeof(why), "not a peer of this job for rank "
		    "%d (job \"%.40s\", rank %d, dialling rank %d)", dp_rank,
		    h->job_id ? h->job_id : "", (int)h->rank, (int)h->peer);
		dp_refuse(l, MPIV__ERROR_CODE__ERR_PROTOCOL, why, NULL);
		return;
	}
	l->c.peer = h->rank;
	snprintf(l->c.addr, sizeof(l->c.addr), "rank %d", (int)h->rank);
	l->hello = h;
	l->c.meta = NULL;		/* kept until our lookup answers */
	l->st = L_WAIT_KEY;
	if (dp_lookup(h->rank) != MPI_SUCCESS)
		dp_link_close(l);
}

void
dp_frame_begin(struct tp_conn *c)
{
	struct dp_link *l = dp_link_of(c);

	if (l->st == L_UP) {
		dpx_frame_begin(c);
		return;
	}
	if (c->h.payload_len > 0)
		dp_link_lost(c, "protocol", "payload during the handshake");
}

void
dp_frame_done(struct tp_conn *c)
{
	struct dp_link *l = dp_link_of(c);
	uint16_t t = c->h.type;

	if (l->gone)
		return;
	switch (l->st) {
	case L_WAIT_CHALLENGE:
		if (t == MPIV__MSG_TYPE__MSG_CHALLENGE)
			dp_send_hello(l, (const Mpiv__Challenge *)c->meta);
		else
			dp_link_lost(c, "handshake", frame_type_name(t));
		return;
	case L_WAIT_REPLY:
		if (t == MPIV__MSG_TYPE__MSG_HELLO_REPLY)
			dp_got_reply(l, (const Mpiv__HelloReply *)c->meta);
		else
			dp_link_lost(c, "handshake", frame_type_name(t));
		return;
	case L_WAIT_HELLO:
		if (t == MPIV__MSG_TYPE__MSG_HELLO)
			dp_got_hello(l);
		else
			dp_link_lost(c, "handshake", frame_type_name(t));
		return;
	case L_UP:
		dpx_frame_done(c);
		return;
	default:
		dp_link_lost(c, "handshake", frame_type_name(t));
		return;
	}
}

/* ---------------- accepting ---------------- */

/* Accepted links whose handshake has not ended. */
static int
dp_unauth_count(void)
{
	int n = 0;

	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		if (!l->gone && !l->dialled && l->st != L_UP)
			n++;
	return n;
}

static void
dp_accept(void)
{
	for (;;) {
		Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
		struct dp_link *l;
		int fd = accept4(dp_lfd, NULL, NULL, SOCK_NONBLOCK |
		    SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (dp_unauth_count() >= DP_UNAUTH_MAX + 2 * dp_world) {
			close(fd);	/* a flood: the real peers retry */
			continue;
		}
		dp_sock_tune(fd);
		if ((l = dp_link_new(fd, false, -1)) == NULL) {
			close(fd);
			continue;
		}
		snprintf(l->c.addr, sizeof(l->c.addr), "a peer dialling in");
		l->st = L_WAIT_HELLO;
		ch.version = AUTH_VERSION;
		ch.auth = tp_keyed;
		/* a nonce with or without a token: it goes into the keys */
		if (auth_random(l->nonce_s, sizeof(l->nonce_s)) < 0) {
			dp_link_close(l);
			continue;
		}
		l->nonce_s_len = sizeof(l->nonce_s);
		ch.nonce.data = l->nonce_s;
		ch.nonce.len = sizeof(l->nonce_s);
		if ((l->offered = auth_client_serve_ciphers()) != 0) {
			if (seal_kx_new(&l->kx) < 0) {
				dp_link_close(l);
				continue;
			}
			ch.kx_pub.data = l->kx.pub;
			ch.kx_pub.len = SEAL_PUB_LEN;
			ch.ciphers = l->offered;
		}
		if (tp_conn_send(&l->c, MPIV__MSG_TYPE__MSG_CHALLENGE,
		    &ch.base, NULL, 0, NULL, NULL, false) != MPI_SUCCESS)
			dp_link_close(l);
	}
}

/* ---------------- the progress engine's hooks ---------------- */

int
dp_poll_count(void)
{
	int n = 0;

	if (!dp_active)
		return 0;
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		n++;
	return n + 1;
}

int
dp_poll_fill(struct pollfd *pfd, int max)
{
	int n = 0;

	if (!dp_active || max <= 0)
		return 0;
	if (dp_pollcap < max) {
		struct dp_link **v = realloc(dp_pollobj, (size_t)max *
		    sizeof(*v));

		if (v == NULL)
			return 0;
		dp_pollobj = v;
		dp_pollcap = max;
	}
	if (dp_lfd >= 0) {
		pfd[n].fd = dp_lfd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		dp_pollobj[n++] = NULL;
	}
	for (struct dp_link *l = dp_links; l != NULL && n < max; l = l->next) {
		if (l->gone)
			continue;
		pfd[n].fd = l->c.fd;
		pfd[n].events = l->st == L_CONNECTING ? POLLOUT :
		    POLLIN | (tp_conn_out_due(&l->c) ? POLLOUT : 0);
		pfd[n].revents = 0;
		dp_pollobj[n++] = l;
	}
	return n;
}

/* A dialled connect finished (or failed). */
static void
dp_connected(struct dp_link *l)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(l->c.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0) {
		dp_link_lost(&l->c, "connect", strerror(err));
		return;
	}
	l->st = L_WAIT_CHALLENGE;
}

/* Lookups due, handshakes overdue. */
static void
dp_timed(void)
{
	long now = mono_us();

	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		if (!l->gone && l->st != L_UP && now > l->deadline)
			dp_link_lost(&l->c, "handshake", "timed out");
	for (int p = 0; p < dp_world; p++) {
		struct dp_peer *pp = &dp_peers[p];

		if (p == dp_rank || !pp->want || pp->up != NULL ||
		    pp->dialing || now < pp->retry_at)
			continue;
		pp->dialing = true;
		if (dp_lookup(p) != MPI_SUCCESS)
			pp->dialing = false;
	}
}

void
dp_poll_handle(struct pollfd *pfd, int n)
{
	if (!dp_active)
		return;
	for (int i = 0; i < n; i++) {
		struct dp_link *l = dp_pollobj[i];
		short ev = pfd[i].revents;

		if (l != NULL && !l->gone && tp_conn_in_ready(&l->c))
			ev |= POLLIN;
		if (ev == 0)
			continue;
		if (l == NULL) {
			dp_accept();
			continue;
		}
		if (l->gone)
			continue;
		if (l->st == L_CONNECTING) {
			dp_connected(l);
			continue;
		}
		if (ev & (POLLIN | POLLHUP | POLLERR))
			(void)tp_read(&l->c);
		if (!l->gone && !l->c.dead && tp_conn_out_due(&l->c))
			(void)tp_write(&l->c);
	}
	dp_timed();
	dpx_tick();
	dp_reap();
}

bool
dp_poll_ready(void)
{
	if (!dp_active)
		return false;
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		if (!l->gone && tp_conn_in_ready(&l->c))
			return true;
	return false;
}

int
dp_timeout_ms(void)
{
	long now, next = -1;

	if (!dp_active)
		return -1;
	now = mono_us();
	for (int p = 0; p < dp_world; p++) {
		struct dp_peer *pp = &dp_peers[p];

		if (p == dp_rank || !pp->want || pp->up != NULL || pp->dialing)
			continue;
		if (next < 0 || pp->retry_at < next)
			next = pp->retry_at;
	}
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		if (!l->gone && l->st != L_UP && (next < 0 ||
		    l->deadline < next))
			next = l->deadline;
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999) / 1000);
}

/* ---------------- setup ---------------- */

void
dp_dial_due(void)
{
	dp_timed();
}

int
dp_links_start(int world, int rank, uint32_t inc)
{
	dp_peers = calloc((size_t)world, sizeof(*dp_peers));
	if (dp_peers == NULL)
		return MPI_ERR_NO_MEM;
	dp_world = world;
	dp_rank = rank;
	dp_inc = inc;
	for (int p = 0; p < world; p++)
		dp_peers[p].want = p != rank && (inc > 1 || p > rank);
	dp_timed();
	return MPI_SUCCESS;
}

int
dp_send_up(int p, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned, struct mpiv_request *req)
{
	struct dp_link *l = dp_peers[p].up;
	int rc;

	if (l == NULL || l->gone) {
		free(owned);
		return MPI_SUCCESS;
	}
	rc = tp_conn_send(&l->c, type, m, payload, paylen, owned, req, false);
	/* A peer's link going down is not this call's failure: the log
	   resends on the next link. */
	return rc == MPI_ERR_PROC_FAILED && tp_err == NULL ? MPI_SUCCESS : rc;
}

/* The clone of a checkpoint: its copies of our sockets go (close only:
   the parent keeps using them). */
void
dp_clone_detach(void)
{
	if (!dp_active)
		return;
	for (struct dp_link *l = dp_links; l != NULL; l = l->next) {
		if (l->c.fd >= 0)
			close(l->c.fd);
		l->c.fd = -1;
		/* no session keys in the image */
		seal_kx_wipe(&l->kx);
		seal_end(&l->c.seal);
	}
	if (dp_lfd >= 0)
		close(dp_lfd);
	dp_lfd = -1;
}

int
dp_links_restart(uint32_t inc)
{
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		dp_link_close(l);
	dp_reap();
	dp_inc = inc;
	for (int p = 0; p < dp_world; p++) {
		struct dp_peer *pp = &dp_peers[p];

		pp->up = NULL;
		pp->dialing = false;
		pp->retry_at = 0;
		pp->backoff_ms = 0;
		pp->bye = false;
		pp->want = p != dp_rank;
		/* the image's pair keys were bound to its old incarnation */
		auth_wipe(&pp->key, sizeof(pp->key));
		pp->have_key = false;
	}
	return dp_listen_open(dp_cms);
}

void
dp_links_close(void)
{
	for (struct dp_link *l = dp_links; l != NULL; l = l->next)
		dp_link_close(l);
	dp_reap();
	if (dp_lfd >= 0)
		close(dp_lfd);
	dp_lfd = -1;
	free(dp_pollobj);
	dp_pollobj = NULL;
	dp_pollcap = 0;
	free(dp_peers);
	dp_peers = NULL;
	free(dp_cms);
	dp_cms = NULL;
	dp_active = false;
}
