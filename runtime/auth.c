/*
 * auth.c: hashing, keys and proofs of the connection handshake (see
 * auth.h and docs/CONTRACTS.md, "Authentication").
 *
 * SHA-256 follows FIPS 180-4 section 6.2 (message schedule of 64 words,
 * eight working variables, padding with 0x80, zeros and the 64-bit bit
 * length); HMAC follows RFC 2104 (keys longer than a block are hashed,
 * ipad 0x36, opad 0x5c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "frame.h"

/* ---------------- SHA-256 (FIPS 180-4) ---------------- */

/* First 32 bits of the fractional parts of the cube roots of the first
   64 primes (FIPS 180-4 4.2.2). */
static const uint32_t auth_k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
auth_ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t
auth_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void
auth_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One 64-byte block into the state (FIPS 180-4 6.2.2). */
static void
auth_sha256_block(uint32_t h[8], const uint8_t *blk)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2, s0, s1;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = auth_get32(blk + 4 * i);
	for (i = 16; i < 64; i++) {
		s0 = auth_ror(w[i - 15], 7) ^ auth_ror(w[i - 15], 18) ^
		    (w[i - 15] >> 3);
		s1 = auth_ror(w[i - 2], 17) ^ auth_ror(w[i - 2], 19) ^
		    (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		s1 = auth_ror(e, 6) ^ auth_ror(e, 11) ^ auth_ror(e, 25);
		t1 = hh + s1 + ((e & f) ^ (~e & g)) + auth_k256[i] + w[i];
		s0 = auth_ror(a, 2) ^ auth_ror(a, 13) ^ auth_ror(a, 22);
		t2 = s0 + ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void
auth_sha256_init(struct auth_sha256 *s)
{
	/* First 32 bits of the fractional parts of the square roots of the
	   first 8 primes (FIPS 180-4 5.3.3). */
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->nbytes = 0;
	s->nbuf = 0;
}

void
auth_sha256_update(struct auth_sha256 *s, const void *p, size_t n)
{
	const uint8_t *in = p;
	size_t take;

	s->nbytes += n;
	if (s->nbuf > 0) {
		take = sizeof(s->buf) - s->nbuf;
		if (take > n)
			take = n;
		memcpy(s->buf + s->nbuf, in, take);
		s->nbuf += take;
		in += take;
		n -= take;
		if (s->nbuf < sizeof(s->buf))
			return;
		auth_sha256_block(s->h, s->buf);
		s->nbuf = 0;
	}
	for (; n >= 64; in += 64, n -= 64)
		auth_sha256_block(s->h, in);
	memcpy(s->buf, in, n);
	s->nbuf = n;
}

/* Pads (0x80, zeros, 64-bit big-endian bit length) and writes the digest. */
void
auth_sha256_final(struct auth_sha256 *s, uint8_t out[AUTH_HASH_LEN])
{
	uint64_t bits = s->nbytes * 8;
	int i;

	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > 56) {
		memset(s->buf + s->nbuf, 0, sizeof(s->buf) - s->nbuf);
		auth_sha256_block(s->h, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, 56 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	auth_sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++)
		auth_put32(out + 4 * i, s->h[i]);
	auth_wipe(s, sizeof(*s));
}

void
auth_sha256(const void *p, size_t n, uint8_t out[AUTH_HASH_LEN])
{
	struct auth_sha256 s;

	auth_sha256_init(&s);
	auth_sha256_update(&s, p, n);
	auth_sha256_final(&s, out);
}

/* ---------------- HMAC-SHA256 (RFC 2104) ---------------- */

void
auth_hmac_init(struct auth_hmac *m, const void *key, size_t keylen)
{
	uint8_t k[AUTH_BLOCK_LEN], pad[AUTH_BLOCK_LEN];
	size_t i;

	memset(k, 0, sizeof(k));
	if (keylen > AUTH_BLOCK_LEN)
		auth_sha256(key, keylen, k);
	else if (keylen > 0)
		memcpy(k, key, keylen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	auth_sha256_init(&m->inner);
	auth_sha256_update(&m->inner, pad, sizeof(pad));
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	auth_sha256_init(&m->outer);
	auth_sha256_update(&m->outer, pad, sizeof(pad));
	auth_wipe(k, sizeof(k));
	auth_wipe(pad, sizeof(pad));
}

void
auth_hmac_update(struct auth_hmac *m, const void *p, size_t n)
{
	auth_sha256_update(&m->inner, p, n);
}

void
auth_hmac_final(struct auth_hmac *m, uint8_t out[AUTH_HASH_LEN])
{
	uint8_t ih[AUTH_HASH_LEN];

	auth_sha256_final(&m->inner, ih);
	auth_sha256_update(&m->outer, ih, sizeof(ih));
	auth_sha256_final(&m->outer, out);
	auth_wipe(ih, sizeof(ih));
}

void
auth_hmac_sha256(const void *key, size_t keylen, const void *p, size_t n,
    uint8_t out[AUTH_HASH_LEN])
{
	struct auth_hmac m;

	auth_hmac_init(&m, key, keylen);
	auth_hmac_update(&m, p, n);
	auth_hmac_final(&m, out);
}

/* ---------------- small helpers ---------------- */

bool
auth_equal(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

void
auth_wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;

	while (n-- > 0)
		*v++ = 0;
}

int
auth_random(void *buf, size_t n)
{
	uint8_t *p = buf;
	ssize_t r;

	while (n > 0) {
		r = getrandom(p, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

void
auth_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int
auth_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
auth_hash_hex_ok(const char *hex)
{
	size_t i;

	for (i = 0; hex[i] != '\0'; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') ||
		    (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	return i == 2 * AUTH_HASH_LEN;
}

int
auth_unhex(const char *hex, uint8_t *out, size_t n)
{
	int hi, lo;

	if (strlen(hex) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if ((hi = auth_nibble(hex[2 * i])) < 0 ||
		    (lo = auth_nibble(hex[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* ---------------- keys ---------------- */

void
auth_key_set(struct auth_key *k, const void *p, size_t n)
{
	memset(k, 0, sizeof(*k));
	if (n > AUTH_BLOCK_LEN) {
		/* What HMAC would do with it anyway (RFC 2104 section 2). */
		auth_sha256(p, n, k->k);
		k->len = AUTH_HASH_LEN;
		return;
	}
	memcpy(k->k, p, n);
	k->len = n;
}

void
auth_node_key(const struct auth_key *s, uint8_t out[AUTH_HASH_LEN])
{
	static const char label[] = "mpiv node key v1";

	auth_hmac_sha256(s->k, s->len, label, sizeof(label) - 1, out);
}

void
auth_rank_key(const uint8_t *token, size_t tokenlen, int32_t rank,
    uint8_t out[AUTH_HASH_LEN])
{
	char label[32];
	int n;

	n = snprintf(label, sizeof(label), "rank %d", (int)rank);
	auth_hmac_sha256(token, tokenlen, label, (size_t)n, out);
}

/* Reads a small secret file, refusing one others could read. */
static int
auth_read_file(const char *path, char *buf, size_t cap, size_t *len,
    char *err, size_t errlen)
{
	struct stat st;
	ssize_t r;
	size_t n = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		snprintf(err, errlen, "cannot open secret file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "secret file %s is not a regular file",
		    path);
		goto out_close;
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(err, errlen, "secret file %s is accessible by group "
		    "or others (mode %04o): run chmod 600 %s", path,
		    (unsigned)(st.st_mode & 07777), path);
		goto out_close;
	}
	for (;;) {
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "cannot read secret file %s: %s",
			    path, strerror(errno));
			goto out_close;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			snprintf(err, errlen, "secret file %s is too big (more "
			    "than %zu bytes)", path, cap - 1);
			goto out_close;
		}
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
	    buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	if (n == 0) {
		snprintf(err, errlen, "secret file %s is empty", path);
		return -1;
	}
	*len = n;
	return 0;
out_close:
	close(fd);
	return -1;
}

int
auth_load(struct auth_keys *k, const char *path, char *err, size_t errlen)
{
	char buf[AUTH_MAX_FILE + 1];
	uint8_t node[AUTH_HASH_LEN];
	size_t n, tag = strlen(AUTH_NODE_KEY_TAG);

	memset(k, 0, sizeof(*k));
	if (path == NULL && (path = getenv(AUTH_ENV_SECRET)) != NULL &&
	    *path == '\0')
		path = NULL;
	if (path == NULL)
		return 0;
	if (auth_read_file(path, buf, sizeof(buf), &n, err, errlen) < 0)
		return -1;
	if (n >= tag && memcmp(buf, AUTH_NODE_KEY_TAG, tag) == 0) {
		if (auth_unhex(buf + tag, node, sizeof(node)) < 0) {
			snprintf(err, errlen, "node key file %s is damaged "
			    "(want \"%s\" and 64 hex digits)", path,
			    AUTH_NODE_KEY_TAG);
			auth_wipe(buf, sizeof(buf));
			return -1;
		}
		auth_key_set(&k->node, node, sizeof(node));
		k->enabled = true;
		auth_wipe(node, sizeof(node));
		auth_wipe(buf, sizeof(buf));
		return 0;
	}
	if (n < AUTH_MIN_SECRET) {
		snprintf(err, errlen, "secret in %s is too short (%zu bytes, "
		    "want at least %u; mpiv secret new FILE makes one)", path,
		    n, AUTH_MIN_SECRET);
		auth_wipe(buf, sizeof(buf));
		return -1;
	}
	auth_key_set(&k->secret, buf, n);
	auth_node_key(&k->secret, node);
	auth_key_set(&k->node, node, sizeof(node));
	k->enabled = true;
	k->cluster = true;
	auth_wipe(node, sizeof(node));
	auth_wipe(buf, sizeof(buf));
	return 0;
}

int
auth_load_cluster(struct auth_keys *k, const char *path, char *err,
    size_t errlen)
{
	if (auth_load(k, path, err, errlen) < 0)
		return -1;
	if (k->enabled && !k->cluster) {
		snprintf(err, errlen, "%s holds a node key: only node agents "
		    "take one, this needs the cluster secret",
		    path != NULL ? path : getenv(AUTH_ENV_SECRET));
		auth_wipe(k, sizeof(*k));
		return -1;
	}
	return 0;
}

int
auth_write_file(const char *path, const char *data, char *err,
    size_t errlen)
{
	size_t n = strlen(data), off = 0;
	ssize_t w;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path,
		    strerror(errno));
		return -1;
	}
	while (off < n) {
		if ((w = write(fd, data + off, n - off)) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "cannot write %s: %s", path,
			    strerror(errno));
			close(fd);
			(void)unlink(path);
			return -1;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path,
		    strerror(errno));
		(void)unlink(path);
		return -1;
	}
	return 0;
}

int
auth_new_secret_file(const char *path, char *err, size_t errlen)
{
	uint8_t s[32];
	char hex[2 * sizeof(s) + 2];
	int rc;

	if (auth_random(s, sizeof(s)) < 0) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	auth_hex(s, sizeof(s), hex);
	strcat(hex, "\n");
	rc = auth_write_file(path, hex, err, errlen);
	auth_wipe(s, sizeof(s));
	auth_wipe(hex, sizeof(hex));
	return rc;
}

int
auth_node_key_file(const struct auth_keys *k, const char *path, char *err,
    size_t errlen)
{
	char text[sizeof(AUTH_NODE_KEY_TAG) + 2 * AUTH_HASH_LEN + 2];
	size_t tag = strlen(AUTH_NODE_KEY_TAG);
	int rc;

	if (!k->enabled || k->node.len != AUTH_HASH_LEN) {
		snprintf(err, errlen, "no key to derive the node key from");
		return -1;
	}
	memcpy(text, AUTH_NODE_KEY_TAG, tag);
	auth_hex(k->node.k, AUTH_HASH_LEN, text + tag);
	strcat(text, "\n");
	rc = auth_write_file(path, text, err, errlen);
	auth_wipe(text, sizeof(text));
	return rc;
}

/*
 * The inode of the TCP socket listening on 127.0.0.1:port (from
 * /proc/net/tcp, where addresses are hex in host order), or 0.
 */
static unsigned long
auth_listen_inode(unsigned port)
{
	char line[512];
	unsigned long inode = 0, ino;
	unsigned addr, lport, st;
	FILE *f = fopen("/proc/net/tcp", "r");

	if (f == NULL)
		return 0;
	while (inode == 0 && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, " %*u: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x "
		    "%*u %*u %lu", &addr, &lport, &st, &ino) == 4 &&
		    addr == 0x0100007fu && lport == port && st == 0x0a)
			inode = ino;
	fclose(f);
	return inode;
}

/*
 * The --secret-file argument of our own process that owns the listening
 * socket inode, found through /proc/PID/fd. 0 or -1.
 */
static int
auth_owner_secret(unsigned long inode, char *path, size_t pathlen)
{
	char want[64], link[PATH_MAX], fdir[64], cmd[8192];
	struct dirent *p, *fd;
	struct stat st;
	DIR *procs, *fds;
	int rc = -1;

	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	if ((procs = opendir("/proc")) == NULL)
		return -1;
	while (rc < 0 && (p = readdir(procs)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(fdir, sizeof(fdir), "/proc/%.20s", p->d_name);
		if (stat(fdir, &st) < 0 || st.st_uid != getuid())
			continue;
		snprintf(fdir, sizeof(fdir), "/proc/%.20s/fd", p->d_name);
		if ((fds = opendir(fdir)) == NULL)
			continue;
		while ((fd = readdir(fds)) != NULL) {
			char fp[128];
			ssize_t n;

			snprintf(fp, sizeof(fp), "%s/%.20s", fdir, fd->d_name);
			n = readlink(fp, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, want) == 0)
				break;
		}
		closedir(fds);
		if (fd == NULL)
			continue;
		/* Found the owner: its argv, NUL-separated. */
		snprintf(fdir, sizeof(fdir), "/proc/%.20s/cmdline", p->d_name);
		int cfd = open(fdir, O_RDONLY | O_CLOEXEC);
		ssize_t len = cfd >= 0 ? read(cfd, cmd, sizeof(cmd) - 1) : -1;

		if (cfd >= 0)
			close(cfd);
		if (len <= 0)
			break;
		cmd[len] = '\0';
		for (char *a = cmd; a < cmd + len; a += strlen(a) + 1)
			if (strcmp(a, "--secret-file") == 0 &&
			    a + strlen(a) + 1 < cmd + len &&
			    snprintf(path, pathlen, "%s", a + strlen(a) + 1) <
			    (int)pathlen)
				rc = 0;
		break;
	}
	closedir(procs);
	return rc;
}

/*
 * Only an embedded deployment's secret is found this way: it sits in the
 * run's temp dir beside `dispatcher.addr`, which names disp (a dispatcher
 * started by hand with a secret file stays out of reach without it).
 */
static bool
auth_is_embedded(const char *secret, const char *disp)
{
	char addr[PATH_MAX], buf[256], err[256];
	const char *slash = strrchr(secret, '/');
	struct stat st;
	size_t n;

	if (slash == NULL || snprintf(addr, sizeof(addr), "%.*s/dispatcher.addr",
	    (int)(slash - secret), secret) >= (int)sizeof(addr))
		return false;
	return stat(addr, &st) == 0 && st.st_uid == getuid() &&
	    auth_read_file(addr, buf, sizeof(buf), &n, err, sizeof(err)) == 0 &&
	    strcmp(buf, disp) == 0;
}

int
auth_find_embedded(const char *disp, char *path, size_t pathlen)
{
	const char *tmp = getenv("TMPDIR");
	struct stat pst;
	unsigned long inode;
	unsigned port;
	char host[32];

	/*
	 * A dispatcher of ours on this machine (an embedded deployment,
	 * whatever TMPDIR it was given): the secret file it was started
	 * with, if it is ours and private.
	 */
	if (sscanf(disp, "%31[^:]:%u", host, &port) == 2 &&
	    (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "localhost") == 0) &&
	    (inode = auth_listen_inode(port)) != 0 &&
	    auth_owner_secret(inode, path, pathlen) == 0 &&
	    stat(path, &pst) == 0 && pst.st_uid == getuid() &&
	    (pst.st_mode & 077) == 0 && auth_is_embedded(path, disp))
		return 0;

	char pat[4096], buf[256], err[256];
	struct stat st;
	size_t n;
	glob_t g;
	int rc = -1;

	snprintf(pat, sizeof(pat), "%s/mpiv-run.*/dispatcher.addr",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (glob(pat, 0, NULL, &g) != 0)
		return -1;
	for (size_t i = 0; i < g.gl_pathc && rc < 0; i++) {
		/* auth_read_file: ours only if nobody else can read it. */
		if (stat(g.gl_pathv[i], &st) < 0 || st.st_uid != getuid() ||
		    auth_read_file(g.gl_pathv[i], buf, sizeof(buf), &n, err,
		    sizeof(err)) < 0 || strcmp(buf, disp) != 0)
			continue;
		n = strlen(g.gl_pathv[i]) - strlen("dispatcher.addr");
		if (snprintf(path, pathlen, "%.*ssecret", (int)n,
		    g.gl_pathv[i]) >= (int)pathlen)
			continue;
		if (stat(path, &st) == 0 && st.st_uid == getuid())
			rc = 0;
	}
	globfree(&g);
	return rc;
}

/* ---------------- proofs ---------------- */

static void
auth_lp(struct auth_hmac *m, const void *p, size_t n)
{
	uint8_t len[4];

	auth_put32(len, (uint32_t)n);
	auth_hmac_update(m, len, sizeof(len));
	if (n > 0)
		auth_hmac_update(m, p, n);
}

static void
auth_lps(struct auth_hmac *m, const char *s)
{
	auth_lp(m, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

static void
auth_u32(struct auth_hmac *m, uint32_t v)
{
	uint8_t b[4];

	auth_put32(b, v);
	auth_hmac_update(m, b, sizeof(b));
}

void
auth_hello_proof(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const Mpiv__Hello *h,
    uint8_t out[AUTH_HASH_LEN])
{
	struct auth_hmac m;

	auth_hmac_init(&m, key->k, key->len);
	auth_lps(&m, "mpiv-auth-v1 hello");
	auth_lp(&m, nonce_s, AUTH_NONCE_LEN);
	auth_lp(&m, h->auth_nonce.data, h->auth_nonce.len);
	auth_u32(&m, (uint32_t)h->role);
	auth_lps(&m, h->job_id);
	auth_u32(&m, (uint32_t)h->rank);
	auth_u32(&m, h->incarnation);
	auth_lps(&m, h->name);
	auth_hmac_final(&m, out);
}

void
auth_reply_proof(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN],
    const uint8_t nonce_c[AUTH_NONCE_LEN],
    const uint8_t client_proof[AUTH_HASH_LEN], uint8_t out[AUTH_HASH_LEN])
{
	struct auth_hmac m;

	auth_hmac_init(&m, key->k, key->len);
	auth_lps(&m, "mpiv-auth-v1 reply");
	auth_lp(&m, nonce_s, AUTH_NONCE_LEN);
	auth_lp(&m, nonce_c, AUTH_NONCE_LEN);
	auth_lp(&m, client_proof, AUTH_HASH_LEN);
	auth_hmac_final(&m, out);
}

const char *
auth_check_hello(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const Mpiv__Hello *h,
    uint8_t reply_proof[AUTH_HASH_LEN])
{
	uint8_t want[AUTH_HASH_LEN];
	bool ok;

	if (h->auth_proof.len == 0)
		return AUTH_ERR_REQUIRED;
	if (h->auth_proof.len != AUTH_HASH_LEN ||
	    h->auth_nonce.len != AUTH_NONCE_LEN)
		return AUTH_ERR_FAILED;
	auth_hello_proof(key, nonce_s, h, want);
	ok = auth_equal(want, h->auth_proof.data, AUTH_HASH_LEN);
	auth_wipe(want, sizeof(want));
	if (!ok)
		return AUTH_ERR_FAILED;
	auth_reply_proof(key, nonce_s, h->auth_nonce.data, h->auth_proof.data,
	    reply_proof);
	return NULL;
}

static int
auth_key_policy(const struct auth_keys *k, const Mpiv__Hello *h,
    bool node_ok, struct auth_key *key, const char **why)
{
	if (h->role == MPIV__ROLE__ROLE_NODE) {
		if (!node_ok) {
			*why = "node agents cannot connect here";
			return -1;
		}
		*key = k->node;
		return 0;
	}
	if (!k->cluster) {
		*why = "this server holds no cluster secret";
		return -1;
	}
	*key = k->secret;
	return 0;
}

int
auth_key_service(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why)
{
	return auth_key_policy(arg, h, false, key, why);
}

int
auth_key_service_nodes(void *arg, const Mpiv__Hello *h,
    struct auth_key *key, const char **why)
{
	return auth_key_policy(arg, h, true, key, why);
}

/* ---------------- blocking dialler ---------------- */

int
auth_client_hello(int fd, const struct auth_key *key, Mpiv__Hello *h,
    int timeout_ms, Mpiv__HelloReply **reply, char *err, size_t errlen)
{
	uint8_t nonce_s[AUTH_NONCE_LEN], nonce_c[AUTH_NONCE_LEN];
	uint8_t proof[AUTH_HASH_LEN], want[AUTH_HASH_LEN];
	struct frame_hdr fh;
	ProtobufCMessage *m;
	Mpiv__Challenge *ch;
	Mpiv__HelloReply *hr;
	uint8_t *payload;
	const char *ferr = NULL;
	bool ok;

	*reply = NULL;
	if (key != NULL) {
		if (frame_read(fd, &fh, &m, &payload, timeout_ms, &ferr) < 0)
			goto out_io;
		free(payload);
		if (fh.type != MPIV__MSG_TYPE__MSG_CHALLENGE) {
			snprintf(err, errlen, "authentication: expected a "
			    "challenge, got %s (not an mpiv server, or an old "
			    "one?)", frame_type_name(fh.type));
			frame_free_meta(m);
			return -1;
		}
		ch = (Mpiv__Challenge *)m;
		if (!ch->auth) {
			snprintf(err, errlen, "%s", AUTH_ERR_NOAUTH);
			frame_free_meta(m);
			return -1;
		}
		if (ch->version != AUTH_VERSION ||
		    ch->nonce.len != AUTH_NONCE_LEN) {
			snprintf(err, errlen, "authentication: server speaks "
			    "version %u, we speak %u", ch->version,
			    AUTH_VERSION);
			frame_free_meta(m);
			return -1;
		}
		memcpy(nonce_s, ch->nonce.data, AUTH_NONCE_LEN);
		frame_free_meta(m);
		if (auth_random(nonce_c, sizeof(nonce_c)) < 0) {
			snprintf(err, errlen, "getrandom: %s", strerror(errno));
			return -1;
		}
		h->auth_nonce.data = nonce_c;
		h->auth_nonce.len = sizeof(nonce_c);
		auth_hello_proof(key, nonce_s, h, proof);
		h->auth_proof.data = proof;
		h->auth_proof.len = sizeof(proof);
	}
	if (frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h->base, NULL, 0,
	    timeout_ms) < 0)
		goto out_io;
	h->auth_nonce.data = NULL;	/* they point into this frame */
	h->auth_nonce.len = 0;
	h->auth_proof.data = NULL;
	h->auth_proof.len = 0;
	for (;;) {
		if (frame_read(fd, &fh, &m, &payload, timeout_ms, &ferr) < 0)
			goto out_io;
		free(payload);
		if (fh.type == MPIV__MSG_TYPE__MSG_CHALLENGE && key == NULL) {
			frame_free_meta(m);
			continue;
		}
		break;
	}
	if (fh.type != MPIV__MSG_TYPE__MSG_HELLO_REPLY) {
		snprintf(err, errlen, "expected a hello reply, got %s",
		    frame_type_name(fh.type));
		frame_free_meta(m);
		return -1;
	}
	hr = (Mpiv__HelloReply *)m;
	if (key != NULL && hr->ok) {
		auth_reply_proof(key, nonce_s, nonce_c, proof, want);
		ok = hr->auth_proof.len == AUTH_HASH_LEN &&
		    auth_equal(want, hr->auth_proof.data, AUTH_HASH_LEN);
		if (!ok) {
			snprintf(err, errlen, "%s", AUTH_ERR_IMPOSTOR);
			frame_free_meta(m);
			return -1;
		}
	}
	*reply = hr;
	return 0;
out_io:
	snprintf(err, errlen, "%s", ferr != NULL ? ferr :
	    errno == ECONNRESET ? "connection closed" : strerror(errno));
	return -1;
}
