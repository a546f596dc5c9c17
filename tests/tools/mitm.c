/*
 * tests/tools/mitm.c: a man in the middle for the tests (built by `make
 * tests-build` into $(BUILD)/tests/tools/mitm). A TCP relay that plays
 * the attacker on the wire between two mpiv components:
 *
 *   mitm --listen HOST:PORT --to HOST:PORT|@FILE [--log FILE]
 *        [--marker HEX]... [--flip N [--flip-dir c2s|s2c]]
 *        [--flip-every K] [--drop-after N] [--record FILE]
 *   mitm --replay FILE --to HOST:PORT [--timeout S]
 *
 * Relay: prints "listening on HOST:PORT" once it accepts (port 0 picks
 * one), then relays every connection both ways (many at once, one poll
 * loop, half-closes passed on). --to @FILE reads the target from FILE at
 * each connection, so the relay can listen before the server it fronts.
 *
 * --log FILE: one text line per event in FILE (open, handshake end,
 * marker, flip, drop, close) and every byte relayed in FILE.cN.c2s and
 * FILE.cN.s2c (connection N counted from 1 in accept order; c2s: from
 * the dialler to the server), for the test to search afterwards.
 *
 * --marker HEX: bytes to look for in everything relayed (repeatable, at
 * most 8, 1 to 64 bytes each), found across read boundaries; each hit is
 * a "marker" line in the log and counted in the summary.
 *
 * The handshake: the relay follows the mpiv frames (12-byte header: u16
 * magic 0x4d56, u16 type, u32 meta length, u32 payload length, big
 * endian) at the start of each direction. The client's handshake ends
 * after its Hello (type 1), the server's after its HelloReply (type 2);
 * a stream that does not start with an mpiv frame has none. Offsets of
 * --flip and --drop-after count from there: they hit what comes after
 * the handshake (records once a connection is encrypted).
 *
 * --flip N: inverts the byte at offset N after the handshake of the
 * --flip-dir direction (default c2s), once: in the first connection that
 * gets that far. --flip-every K: in every K-th connection instead
 * (connections 1, 1+K, 1+2K, ...; K = 1: all of them).
 * --drop-after N: closes the connection after N bytes past the handshake
 * in the --flip-dir direction (same choice of connections as --flip).
 *
 * --record FILE: the whole client->server stream of the first connection
 * (handshake included), written to FILE once the client's handshake has
 * passed and again when that connection ends (FILE appears whole each
 * time, through a rename).
 *
 * Replay: dials --to, waits for the server's first frame, sends the
 * recorded client's handshake (its first frame) verbatim, reads the
 * answer, sends the rest if the server accepted, and prints one line:
 *   "refused: TEXT"   a HelloReply with ok false (TEXT its error)
 *   "accepted"        a HelloReply with ok true (the replay worked!)
 *   "closed"          the server hung up without a HelloReply
 * Exit 0 with an answer, 2 on a usage error, a failed dial or timeout.
 *
 * SIGTERM or SIGINT: closes everything, writes a "stopped" summary line
 * to the log and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MITM_BUF	  65536
#define MITM_MAX_MARKERS  8
#define MITM_MAX_MARKER	  64
#define MITM_HS_MAX	  65536	/* a handshake longer than this: none */
#define MITM_REC_MAX	  (16u << 20)	/* bytes of a recorded stream kept */
#define FRAME_MAGIC	  0x4d56u
#define FRAME_HDR	  12
#define T_HELLO		  1
#define T_HELLO_REPLY	  2

enum { C2S = 0, S2C = 1 };
static const char *dir_name[2] = { "c2s", "s2c" };

struct marker {
	uint8_t b[MITM_MAX_MARKER];
	size_t len;
	unsigned long hits;
};

/* One direction of a connection: from its source to its destination. */
struct dir {
	uint8_t buf[MITM_BUF];	/* read, not yet written */
	size_t off, len;
	uint64_t pos;		/* bytes read from the source so far */
	/* The handshake follower: the frame header being read, the body
	   bytes still to skip, and where the handshake ended. */
	uint8_t hdr[FRAME_HDR];
	size_t hdr_have;
	uint64_t body_left;
	int last_type;
	bool hs_done;
	bool hs_end_seen;	/* --record: the handshake was saved */
	uint64_t hs_end;
	bool eof;		/* the source ended */
	bool shut;		/* the end was passed on */
	uint8_t tail[MITM_MAX_MARKER];	/* last bytes, for markers across reads */
	size_t tail_len;
	FILE *raw;
};

struct conn {
	unsigned id;
	int fd[2];		/* [C2S]: the client's socket, [S2C]: the server's */
	bool connecting;
	bool every;		/* --flip-every picked this one */
	bool flipped, dropped, dead;
	const char *why;	/* why it closed, when not both ends */
	struct dir d[2];	/* d[C2S] reads fd[C2S], writes fd[S2C] */
	uint8_t *rec;		/* --record: the client's stream */
	size_t rec_len, rec_cap;
	char peer[64];
};

static struct {
	const char *listen, *to, *log, *record, *replay;
	struct marker mk[MITM_MAX_MARKERS];
	int nmk;
	long long flip, drop;	/* -1: off */
	int flip_dir;
	unsigned long flip_every;
	int timeout;
	FILE *logf;
	unsigned nconn;
	unsigned long flips, drops, hits;
	bool recorded;
} g = { .flip = -1, .drop = -1, .timeout = 10 };

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
logf_(const char *fmt, ...)
{
	va_list ap;

	if (g.logf == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(g.logf, fmt, ap);
	va_end(ap);
	fputc('\n', g.logf);
	fflush(g.logf);
}

static void
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mitm: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: mitm --listen HOST:PORT --to HOST:PORT|@FILE [--log FILE]\n"
	    "            [--marker HEX]... [--flip N] [--flip-dir c2s|s2c]\n"
	    "            [--flip-every K] [--drop-after N] [--record FILE]\n"
	    "       mitm --replay FILE --to HOST:PORT [--timeout S]\n");
	exit(2);
}

static long long
parse_num(const char *opt, const char *s, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		die("bad %s \"%s\" (0 to %lld)", opt, s, max);
	return v;
}

static void
parse_marker(const char *hex)
{
	struct marker *m;
	size_t n = strlen(hex);

	if (g.nmk == MITM_MAX_MARKERS)
		die("at most %d --marker", MITM_MAX_MARKERS);
	if (n == 0 || n % 2 != 0 || n / 2 > MITM_MAX_MARKER)
		die("bad --marker \"%s\" (1 to %d bytes in hex)", hex,
		    MITM_MAX_MARKER);
	m = &g.mk[g.nmk++];
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdefABCDEF", hex[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", hex[2 * i + 1]))
			die("bad --marker \"%s\" (hex digits)", hex);
		m->b[i] = (uint8_t)v;
	}
	m->len = n / 2;
}

/* HOST:PORT (or [V6]:PORT) into a sockaddr. 0 or -1. */
static int
resolve(const char *addr, struct sockaddr_storage *ss, socklen_t *sl)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	size_t hl;

	if (colon == NULL || colon[1] == '\0')
		return -1;
	hl = (size_t)(colon - addr);
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	if (getaddrinfo(*host != '\0' ? host : "0.0.0.0", colon + 1, &hints,
	    &ai) != 0)
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sl = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static void
addr_text(const struct sockaddr_storage *ss, char *out, size_t n)
{
	char h[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof(h));
		port = ntohs(s4->sin_port);
		snprintf(out, n, "%s:%d", h, port);
	} else {
		const struct sockaddr_in6 *s6 = (const void *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		port = ntohs(s6->sin6_port);
		snprintf(out, n, "[%s]:%d", h, port);
	}
}

/* The target: --to, or the first line of the file it names with @. */
static int
target(char *out, size_t n)
{
	FILE *f;

	if (g.to[0] != '@') {
		snprintf(out, n, "%s", g.to);
		return 0;
	}
	if ((f = fopen(g.to + 1, "r")) == NULL)
		return -1;
	if (fgets(out, (int)n, f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	out[strcspn(out, " \t\r\n")] = '\0';
	return *out != '\0' ? 0 : -1;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/*
 * Follows the frames of a direction's start over n bytes at d->pos
 * until the handshake's last frame (want) has passed; sets hs_end.
 */
static void
hs_follow(struct conn *c, int which, const uint8_t *p, size_t n)
{
	struct dir *d = &c->d[which];
	int want = which == C2S ? T_HELLO : T_HELLO_REPLY;
	size_t i = 0;

	while (!d->hs_done && i < n) {
		if (d->body_left > 0) {
			size_t take = d->body_left < n - i ?
			    (size_t)d->body_left : n - i;
			d->body_left -= take;
			i += take;
		} else {
			size_t take = FRAME_HDR - d->hdr_have;
			if (take > n - i)
				take = n - i;
			memcpy(d->hdr + d->hdr_have, p + i, take);
			d->hdr_have += take;
			i += take;
			if (d->hdr_have < FRAME_HDR)
				break;
			d->hdr_have = 0;
			if ((d->hdr[0] << 8 | d->hdr[1]) != FRAME_MAGIC) {
				/* not mpiv: no handshake to skip */
				d->hs_done = true;
				d->hs_end = 0;
				logf_("conn=%u handshake dir=%s none", c->id,
				    dir_name[which]);
				return;
			}
			d->last_type = d->hdr[2] << 8 | d->hdr[3];
			d->body_left = (uint64_t)get32(d->hdr + 4) +
			    get32(d->hdr + 8);
		}
		if (d->body_left == 0 && d->hdr_have == 0 &&
		    d->last_type == want) {
			d->hs_done = true;
			d->hs_end = d->pos + i;
			logf_("conn=%u handshake dir=%s end=%llu", c->id,
			    dir_name[which], (unsigned long long)d->hs_end);
			return;
		}
		if (d->pos + i > MITM_HS_MAX) {
			d->hs_done = true;
			d->hs_end = d->pos + i;
			logf_("conn=%u handshake dir=%s too-long end=%llu",
			    c->id, dir_name[which],
			    (unsigned long long)d->hs_end);
			return;
		}
	}
}

/* Markers in p[0..n) (bytes at d->pos), counting matches that end in
   it: the tail holds the last bytes of the previous read. */
static void
markers_scan(struct conn *c, int which, const uint8_t *p, size_t n)
{
	struct dir *d = &c->d[which];
	uint8_t win[MITM_MAX_MARKER + MITM_BUF];
	size_t wl, maxl = 0;

	if (g.nmk == 0)
		return;
	memcpy(win, d->tail, d->tail_len);
	memcpy(win + d->tail_len, p, n);
	wl = d->tail_len + n;
	for (int k = 0; k < g.nmk; k++) {
		struct marker *m = &g.mk[k];
		const uint8_t *at = win, *hit;

		if (m->len > maxl)
			maxl = m->len;
		while ((hit = memmem(at, wl - (size_t)(at - win), m->b,
		    m->len)) != NULL) {
			size_t s = (size_t)(hit - win);

			if (s + m->len > d->tail_len) {
				m->hits++;
				g.hits++;
				logf_("conn=%u marker=%d dir=%s offset=%llu",
				    c->id, k, dir_name[which],
				    (unsigned long long)(d->pos + s -
				    d->tail_len));
			}
			at = hit + 1;
		}
	}
	/* keep the last maxl - 1 bytes */
	if (maxl > 0) {
		size_t keep = maxl - 1 < wl ? maxl - 1 : wl;
		memcpy(d->tail, win + wl - keep, keep);
		d->tail_len = keep;
	}
}

/* The recorded stream so far into --record FILE, whole (a rename). */
static int
rec_save(struct conn *c)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", g.record);
	if ((f = fopen(tmp, "w")) == NULL)
		return -1;
	fwrite(c->rec, 1, c->rec_len, f);
	if (fclose(f) != 0 || rename(tmp, g.record) != 0)
		return -1;
	logf_("conn=%u recorded bytes=%zu file=%s", c->id, c->rec_len,
	    g.record);
	return 0;
}

static void
rec_add(struct conn *c, const uint8_t *p, size_t n)
{
	if (c->rec_len + n > MITM_REC_MAX)
		n = MITM_REC_MAX - c->rec_len;
	if (c->rec_len + n > c->rec_cap) {
		size_t cap = c->rec_cap ? c->rec_cap : 4096;
		uint8_t *r;

		while (cap < c->rec_len + n)
			cap *= 2;
		if ((r = realloc(c->rec, cap)) == NULL)
			return;
		c->rec = r;
		c->rec_cap = cap;
	}
	memcpy(c->rec + c->rec_len, p, n);
	c->rec_len += n;
}

/* Flips and drops hit this connection: with --flip-every, by its
   number; else while no connection was hit yet, and the one that was. */
static bool
conn_chosen(const struct conn *c)
{
	if (g.flip_every > 0)
		return c->every;
	return c->flipped || c->dropped || (g.flips == 0 && g.drops == 0);
}

/*
 * What the relay does to n bytes just read into the direction's buffer
 * (at d->buf + d->len): follow the handshake, log, search, record,
 * flip, and cut for a drop. Returns the bytes to pass on (fewer than n
 * after a drop point).
 */
static size_t
process(struct conn *c, int which, size_t n)
{
	struct dir *d = &c->d[which];
	uint8_t *p = d->buf + d->len;
	uint64_t start = d->pos;
	bool mine = which == g.flip_dir && conn_chosen(c);

	hs_follow(c, which, p, n);
	markers_scan(c, which, p, n);
	if (d->raw != NULL)
		fwrite(p, 1, n, d->raw);
	if (which == C2S && c->rec != NULL) {
		bool before = d->hs_end_seen;

		rec_add(c, p, n);
		/* the handshake as soon as it is whole: a replay while the
		   job it belongs to still runs */
		d->hs_end_seen = d->hs_done;
		if (d->hs_done && !before)
			(void)rec_save(c);
	}
	d->pos += n;
	if (!mine || !d->hs_done)
		return n;
	if (g.flip >= 0 && !c->flipped) {
		uint64_t at = d->hs_end + (uint64_t)g.flip;

		if (at >= start && at < start + n) {
			uint8_t *b = p + (at - start);
			uint8_t old = *b;

			*b = (uint8_t)~old;
			c->flipped = true;
			g.flips++;
			logf_("conn=%u flip dir=%s offset=%llu after_handshake="
			    "%lld old=0x%02x new=0x%02x", c->id,
			    dir_name[which], (unsigned long long)at, g.flip,
			    old, *b);
		}
	}
	if (g.drop >= 0 && !c->dropped) {
		uint64_t at = d->hs_end + (uint64_t)g.drop;

		if (at >= start && at <= start + n) {
			c->dropped = true;
			g.drops++;
			logf_("conn=%u drop dir=%s offset=%llu after_handshake="
			    "%lld", c->id, dir_name[which],
			    (unsigned long long)at, g.drop);
			return (size_t)(at - start);
		}
	}
	return n;
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static struct conn *
conn_new(int cfd, const struct sockaddr_storage *peer)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char to[256];
	struct conn *c;
	int one = 1;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(cfd);
		return NULL;
	}
	c->id = ++g.nconn;
	c->fd[C2S] = cfd;
	c->fd[S2C] = -1;
	addr_text(peer, c->peer, sizeof(c->peer));
	c->every = g.flip_every > 0 && (c->id - 1) % g.flip_every == 0;
	if (g.record != NULL && c->id == 1 &&
	    (c->rec = malloc(4096)) != NULL)
		c->rec_cap = 4096;
	if (target(to, sizeof(to)) < 0 || resolve(to, &ss, &sl) < 0) {
		logf_("conn=%u open peer=%s to=%s error=\"bad target\"",
		    c->id, c->peer, g.to);
		c->dead = true;
		c->why = "bad target";
		return c;
	}
	logf_("conn=%u open peer=%s to=%s", c->id, c->peer, to);
	if (g.log != NULL) {
		char path[4200];

		for (int w = 0; w < 2; w++) {
			snprintf(path, sizeof(path), "%s.c%u.%s", g.log, c->id,
			    dir_name[w]);
			/* unbuffered: a live connection's file is whole too */
			if ((c->d[w].raw = fopen(path, "w")) != NULL)
				setvbuf(c->d[w].raw, NULL, _IONBF, 0);
		}
	}
	set_nonblock(cfd);
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((c->fd[S2C] = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0) {
		c->dead = true;
		c->why = "socket";
		return c;
	}
	setsockopt(c->fd[S2C], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd[S2C], (struct sockaddr *)&ss, sl) < 0) {
		if (errno != EINPROGRESS) {
			c->dead = true;
			c->why = strerror(errno);
			return c;
		}
		c->connecting = true;
	}
	return c;
}

static void
conn_free(struct conn *c)
{
	logf_("conn=%u close c2s=%llu s2c=%llu reason=\"%s\"", c->id,
	    (unsigned long long)c->d[C2S].pos,
	    (unsigned long long)c->d[S2C].pos,
	    c->why != NULL ? c->why : "both ends closed");
	for (int w = 0; w < 2; w++) {
		if (c->fd[w] >= 0) {
			shutdown(c->fd[w], SHUT_RDWR);
			close(c->fd[w]);
		}
		if (c->d[w].raw != NULL)
			fclose(c->d[w].raw);
	}
	if (c->rec != NULL && !g.recorded && rec_save(c) == 0)
		g.recorded = true;
	free(c->rec);
	free(c);
}

/* Writes what the direction holds; passes its end on once drained.
   0, or -1 (the connection must close). */
static int
dir_flush(struct conn *c, int which)
{
	struct dir *d = &c->d[which];
	int to = c->fd[which ^ 1];

	while (d->len > d->off) {
		ssize_t w = send(to, d->buf + d->off, d->len - d->off,
		    MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			c->why = which == C2S ? "server write failed" :
			    "client write failed";
			return -1;
		}
		d->off += (size_t)w;
	}
	d->off = d->len = 0;
	if (c->dropped && (which == g.flip_dir)) {
		c->why = "dropped";
		return -1;
	}
	if (d->eof && !d->shut) {
		shutdown(to, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

/* Reads into the direction (empty buffer) and relays. 0 or -1. */
static int
dir_read(struct conn *c, int which)
{
	struct dir *d = &c->d[which];
	ssize_t r = read(c->fd[which], d->buf, sizeof(d->buf));

	if (r < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		c->why = which == C2S ? "client read failed" :
		    "server read failed";
		return -1;
	}
	d->off = d->len = 0;
	if (r == 0) {
		d->eof = true;
		return dir_flush(c, which);
	}
	d->len = process(c, which, (size_t)r);
	return dir_flush(c, which);
}

static bool
conn_done(const struct conn *c)
{
	return c->d[C2S].eof && c->d[C2S].shut && c->d[S2C].eof &&
	    c->d[S2C].shut;
}

static int
do_listen(const char *addr, char *bound, size_t bl)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1;

	if (resolve(addr, &ss, &sl) < 0)
		die("bad --listen \"%s\" (HOST:PORT)", addr);
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 128) < 0)
		die("cannot listen on %s: %s", addr, strerror(errno));
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	addr_text(&ss, bound, bl);
	set_nonblock(fd);
	return fd;
}

static int
relay(void)
{
	struct conn **cs = NULL;
	struct pollfd *pf = NULL;
	size_t nc = 0, ccap = 0, pcap = 0;
	char bound[128];
	int lfd = do_listen(g.listen, bound, sizeof(bound));

	printf("listening on %s\n", bound);
	fflush(stdout);
	logf_("mitm listening on %s to=%s", bound, g.to);
	while (!stop) {
		size_t np = 0;
		int n;

		if (pcap < 2 * nc + 1) {
			pcap = 2 * nc + 16;
			if ((pf = realloc(pf, pcap * sizeof(*pf))) == NULL)
				die("out of memory");
		}
		pf[np++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (size_t i = 0; i < nc; i++) {
			struct conn *c = cs[i];

			for (int w = 0; w < 2; w++) {
				short ev = 0;

				if (c->connecting) {
					if (w == S2C)
						ev = POLLOUT;
				} else {
					if (c->d[w].len == 0 && !c->d[w].eof)
						ev |= POLLIN;
					if (c->d[w ^ 1].len > 0)
						ev |= POLLOUT;
				}
				/* nothing wanted: left out, or an error or
				   hang-up would wake the loop again and again */
				pf[np++] = (struct pollfd){
				    .fd = ev != 0 ? c->fd[w] : -1,
				    .events = ev };
			}
		}
		n = poll(pf, np, 1000);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		for (size_t i = 0; i < nc; i++) {
			struct conn *c = cs[i];
			struct pollfd *p = &pf[1 + 2 * i];

			if (c->dead)
				continue;
			if (c->connecting) {
				int err = 0;
				socklen_t el = sizeof(err);

				if (p[S2C].revents == 0)
					continue;
				getsockopt(c->fd[S2C], SOL_SOCKET, SO_ERROR,
				    &err, &el);
				if (err != 0) {
					c->why = strerror(err);
					c->dead = true;
					continue;
				}
				c->connecting = false;
				continue;
			}
			for (int w = 0; w < 2 && !c->dead; w++) {
				short re = p[w].revents;

				if ((re & (POLLOUT | POLLERR | POLLHUP)) &&
				    c->d[w ^ 1].len > 0 &&
				    dir_flush(c, w ^ 1) < 0)
					c->dead = true;
				else if ((re & (POLLIN | POLLHUP | POLLERR)) &&
				    c->d[w].len == 0 && !c->d[w].eof &&
				    dir_read(c, w) < 0)
					c->dead = true;
			}
			if (!c->dead && conn_done(c))
				c->dead = true;
		}
		/* reap */
		for (size_t i = 0; i < nc;) {
			if (cs[i]->dead) {
				conn_free(cs[i]);
				cs[i] = cs[--nc];
			} else {
				i++;
			}
		}
		if (pf[0].revents & POLLIN) {
			for (;;) {
				struct sockaddr_storage peer;
				socklen_t pl = sizeof(peer);
				int cfd = accept4(lfd, (struct sockaddr *)&peer,
				    &pl, SOCK_CLOEXEC);
				struct conn *c;

				if (cfd < 0)
					break;
				if ((c = conn_new(cfd, &peer)) == NULL)
					continue;
				if (nc == ccap) {
					struct conn **ncs = realloc(cs,
					    (ccap + 16) * sizeof(*cs));
					if (ncs == NULL)
						die("out of memory");
					cs = ncs;
					ccap += 16;
				}
				cs[nc++] = c;
			}
		}
	}
	for (size_t i = 0; i < nc; i++) {
		cs[i]->why = "mitm stopped";
		conn_free(cs[i]);
	}
	free(cs);
	free(pf);
	close(lfd);
	logf_("mitm stopped conns=%u markers=%lu flips=%lu drops=%lu",
	    g.nconn, g.hits, g.flips, g.drops);
	for (int k = 0; k < g.nmk; k++)
		logf_("mitm marker=%d hits=%lu", k, g.mk[k].hits);
	return 0;
}

/* ---- replay ---- */

static int
read_full(int fd, uint8_t *p, size_t n, int ms)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pf, 1, ms) <= 0)
			return -2;	/* timeout */
		r = read(fd, p + got, n - got);
		if (r <= 0)
			return -1;	/* closed or reset */
		got += (size_t)r;
	}
	return 0;
}

/* One frame: type and body (meta then payload, at most cap bytes kept;
   *len the meta length). 0, -1 closed, -2 timeout or not a frame. */
static int
read_frame(int fd, int *type, uint8_t *body, size_t cap, size_t *mlen,
    int ms)
{
	uint8_t h[FRAME_HDR], skip[4096];
	uint64_t ml, pl, left;
	int rc;

	if ((rc = read_full(fd, h, sizeof(h), ms)) < 0)
		return rc;
	if ((h[0] << 8 | h[1]) != FRAME_MAGIC)
		return -2;
	*type = h[2] << 8 | h[3];
	ml = get32(h + 4);
	pl = get32(h + 8);
	*mlen = ml < cap ? (size_t)ml : cap;
	if ((rc = read_full(fd, body, *mlen, ms)) < 0)
		return rc;
	for (left = ml + pl - *mlen; left > 0;) {
		size_t t = left < sizeof(skip) ? (size_t)left : sizeof(skip);

		if ((rc = read_full(fd, skip, t, ms)) < 0)
			return rc;
		left -= t;
	}
	return 0;
}

static bool
pb_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *i < n; s += 7) {
		uint8_t b = p[(*i)++];

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* HelloReply: ok (field 1) and error (field 2). false: malformed. */
static bool
parse_reply(const uint8_t *p, size_t n, bool *ok, char *err, size_t el)
{
	size_t i = 0;

	*ok = false;
	*err = '\0';
	while (i < n) {
		uint64_t key, v;

		if (!pb_varint(p, n, &i, &key))
			return false;
		switch (key & 7) {
		case 0:
			if (!pb_varint(p, n, &i, &v))
				return false;
			if (key >> 3 == 1)
				*ok = v != 0;
			break;
		case 1:
			i += 8;
			break;
		case 5:
			i += 4;
			break;
		case 2:
			if (!pb_varint(p, n, &i, &v) || v > n - i)
				return false;
			if (key >> 3 == 2)
				snprintf(err, el, "%.*s", (int)v, p + i);
			i += (size_t)v;
			break;
		default:
			return false;
		}
	}
	return i == n;
}

static int
replay(void)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	uint8_t *rec, body[8192];
	size_t n = 0, first, mlen;
	int fd, type, rc, ms = g.timeout * 1000;
	FILE *f;
	struct stat st;
	char to[256], err[1024];
	bool ok;

	if ((f = fopen(g.replay, "r")) == NULL || fstat(fileno(f), &st) < 0)
		die("cannot read %s: %s", g.replay, strerror(errno));
	if (st.st_size < FRAME_HDR || st.st_size > (off_t)MITM_REC_MAX)
		die("%s: not a recorded mpiv stream (%lld bytes)", g.replay,
		    (long long)st.st_size);
	if ((rec = malloc((size_t)st.st_size)) == NULL)
		die("out of memory");
	n = fread(rec, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size || (rec[0] << 8 | rec[1]) != FRAME_MAGIC)
		die("%s: not a recorded mpiv stream", g.replay);
	first = FRAME_HDR + (size_t)get32(rec + 4) + get32(rec + 8);
	if (first > n)
		die("%s: its first frame is cut", g.replay);
	if (target(to, sizeof(to)) < 0 || resolve(to, &ss, &sl) < 0)
		die("bad --to \"%s\"", g.to);
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		fprintf(stderr, "mitm: cannot reach %s: %s\n", to,
		    strerror(errno));
		return 2;
	}
	/* the server speaks first when it authenticates (its Challenge) */
	rc = read_frame(fd, &type, body, sizeof(body), &mlen, ms);
	if (rc == -1) {
		printf("closed\n");
		return 0;
	}
	if (rc == 0 && type == T_HELLO_REPLY)
		goto reply;	/* no Challenge (a server without secret) */
	if (send(fd, rec, first, MSG_NOSIGNAL) != (ssize_t)first) {
		printf("closed\n");
		return 0;
	}
	rc = read_frame(fd, &type, body, sizeof(body), &mlen, ms);
	if (rc == -1) {
		printf("closed\n");
		return 0;
	}
	if (rc < 0 || type != T_HELLO_REPLY) {
		fprintf(stderr, "mitm: no HelloReply from %s (%s)\n", to,
		    rc < 0 ? "timeout" : "another frame");
		return 2;
	}
reply:
	if (!parse_reply(body, mlen, &ok, err, sizeof(err))) {
		fprintf(stderr, "mitm: a malformed HelloReply from %s\n", to);
		return 2;
	}
	if (!ok) {
		printf("refused: %s\n", err);
		return 0;
	}
	/* accepted: the rest of the stream, as recorded */
	(void)!send(fd, rec + first, n - first, MSG_NOSIGNAL);
	printf("accepted\n");
	free(rec);
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "drop-after", required_argument, NULL, 'D' },
		{ "flip", required_argument, NULL, 'f' },
		{ "flip-dir", required_argument, NULL, 'F' },
		{ "flip-every", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, 'l' },
		{ "log", required_argument, NULL, 'L' },
		{ "marker", required_argument, NULL, 'm' },
		{ "record", required_argument, NULL, 'r' },
		{ "replay", required_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "to", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int ch;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'D':
			g.drop = parse_num("--drop-after", optarg, 1LL << 40);
			break;
		case 'e':
			g.flip_every = (unsigned long)parse_num("--flip-every",
			    optarg, 1000000);
			if (g.flip_every == 0)
				die("bad --flip-every 0 (1 or more)");
			break;
		case 'f':
			g.flip = parse_num("--flip", optarg, 1LL << 40);
			break;
		case 'F':
			if (strcmp(optarg, "c2s") == 0)
				g.flip_dir = C2S;
			else if (strcmp(optarg, "s2c") == 0)
				g.flip_dir = S2C;
			else
				die("bad --flip-dir \"%s\" (c2s or s2c)",
				    optarg);
			break;
		case 'l':
			g.listen = optarg;
			break;
		case 'L':
			g.log = optarg;
			break;
		case 'm':
			parse_marker(optarg);
			break;
		case 'r':
			g.record = optarg;
			break;
		case 'R':
			g.replay = optarg;
			break;
		case 'T':
			g.timeout = (int)parse_num("--timeout", optarg, 3600);
			if (g.timeout == 0)
				die("bad --timeout 0 (1 or more)");
			break;
		case 't':
			g.to = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || g.to == NULL)
		usage();
	if (g.replay != NULL) {
		if (g.listen != NULL)
			die("--replay dials --to itself: no --listen");
		return replay();
	}
	if (g.listen == NULL)
		usage();
	if (g.log != NULL && (g.logf = fopen(g.log, "a")) == NULL)
		die("cannot open --log %s: %s", g.log, strerror(errno));
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return relay();
}
