/*
 * auth_keys.c: the keys of auth.h: the cluster secret and its files, the
 * node key derived from it, a job's token and its ranks' keys, and where
 * an embedded deployment keeps its secret (auth_find_embedded).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "auth_rotate.h"
#include "frame.h"

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

void
auth_pair_key(const uint8_t *token, size_t tokenlen, int32_t a, int32_t b,
    uint8_t out[AUTH_HASH_LEN])
{
	char label[40];
	int n;

	n = snprintf(label, sizeof(label), "pair %d %d", (int)(a < b ? a : b),
	    (int)(a < b ? b : a));
	auth_hmac_sha256(token, tokenlen, label, (size_t)n, out);
}

void
auth_rank_inc_key(const uint8_t *token, size_t tokenlen, int32_t r,
    uint32_t inc, uint8_t out[AUTH_HASH_LEN])
{
	char label[48];
	int n;

	n = snprintf(label, sizeof(label), "rank %d inc %u", (int)r,
	    (unsigned)inc);
	auth_hmac_sha256(token, tokenlen, label, (size_t)n, out);
}

void
auth_pair_inc_key(const uint8_t *token, size_t tokenlen, int32_t a,
    uint32_t ia, int32_t b, uint32_t ib, uint8_t out[AUTH_HASH_LEN])
{
	char label[80];
	int n;

	if (b < a) {
		int32_t t = a;
		uint32_t ti = ia;

		a = b;
		ia = ib;
		b = t;
		ib = ti;
	}
	n = snprintf(label, sizeof(label), "pair %d inc %u %d inc %u", (int)a,
	    (unsigned)ia, (int)b, (unsigned)ib);
	auth_hmac_sha256(token, tokenlen, label, (size_t)n, out);
}

/* lp(x) into an HMAC: 4-byte big-endian length, then x. */
static void
auth_hmac_lp(struct auth_hmac *m, const void *p, size_t n)
{
	uint8_t len[4];

	auth_put32(len, (uint32_t)n);
	auth_hmac_update(m, len, sizeof(len));
	auth_hmac_update(m, p, n);
}

void
auth_image_key(const struct auth_key *s, const char *job, int32_t r,
    uint32_t inc, uint8_t out[AUTH_HASH_LEN])
{
	static const char label[] = "mpiv image key v1";
	struct auth_hmac m;
	uint8_t v[8];

	auth_hmac_init(&m, s->k, s->len);
	auth_hmac_lp(&m, label, sizeof(label) - 1);
	auth_hmac_lp(&m, job, strlen(job));
	auth_put32(v, (uint32_t)r);
	auth_put32(v + 4, inc);
	auth_hmac_update(&m, v, sizeof(v));
	auth_hmac_final(&m, out);
	auth_wipe(&m, sizeof(m));
}

/* Reads a small secret file, refusing one others could read. */
int
auth_read_file(const char *path, char *buf, size_t cap, size_t *len,
    char *err, size_t errlen)
{
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		snprintf(err, errlen, "cannot open secret file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	return auth_read_fd(fd, path, buf, cap, len, err, errlen);
}

int
auth_read_fd(int fd, const char *path, char *buf, size_t cap, size_t *len,
    char *err, size_t errlen)
{
	struct stat st;
	ssize_t r;
	size_t n = 0;

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
	size_t n;
	int rc;

	memset(k, 0, sizeof(*k));
	if (path == NULL && (path = getenv(AUTH_ENV_SECRET)) != NULL &&
	    *path == '\0')
		path = NULL;
	if (path == NULL)
		return 0;
	if (auth_read_file(path, buf, sizeof(buf), &n, err, errlen) < 0)
		return -1;
	/* Every format, the one-line ones and the multi-key one. */
	rc = auth_parse_keys(k, buf, n, path, err, errlen);
	auth_wipe(buf, sizeof(buf));
	return rc;
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
 * socket inode, found through /proc/PID/fd: 0; 1 when that process is
 * ours but was started without one; -1 when no process of ours owns it.
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
		rc = 1;
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
	int own;

	/*
	 * A dispatcher of ours on this machine (an embedded deployment,
	 * whatever TMPDIR it was given): the secret file it was started
	 * with, if it is ours and private. When a process of ours owns the
	 * port, it alone decides: a run's record below that names the same
	 * address may be a dead run's, whose port was given out again.
	 */
	if (sscanf(disp, "%31[^:]:%u", host, &port) == 2 &&
	    (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "localhost") == 0) &&
	    (inode = auth_listen_inode(port)) != 0 &&
	    (own = auth_owner_secret(inode, path, pathlen)) >= 0)
		return own == 0 && stat(path, &pst) == 0 &&
		    pst.st_uid == getuid() && (pst.st_mode & 077) == 0 &&
		    auth_is_embedded(path, disp) ? 0 : -1;

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

