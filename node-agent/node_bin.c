/*
 * node_bin.c: the node agent's content-addressed program cache.
 * Volunteer machines share no file system with the submitter: a Launch
 * whose binary_hash is set runs the program from CACHE/HASH/prog, where
 * HASH is the hex SHA-256 of its bytes. A missing program is asked for
 * once (BinaryGet to the dispatcher, which asks the client once per
 * job), written to a temporary file as BinaryData frames arrive, checked
 * against the hash, made executable and renamed into place; the launches
 * that waited for it then run. Every node uses the same cache path, so a
 * CRIU image taken on one node (which maps the program from there)
 * restores on another. The cache is the node user's alone: directories
 * 0700, programs 0700 (explicit modes, so no umask widens them).
 *
 * A job's stdin is fetched the same way into CACHE/HASH/stdin (0400), the
 * rank's fd 0: the same path on every node, so that a checkpoint image,
 * which names the file and its read offset, restores on any node.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "log.h"
#include "node_priv.h"

#define NODE_BIN_MAX	(1ull << 30)	/* largest program we take */
#define NODE_STDIN_MAX	(64ull << 20)	/* largest stdin we take */

/* A program (or stdin) being fetched, and the launches waiting for it. */
struct node_bin {
	enum node_blob kind;
	char hash[2 * AUTH_HASH_LEN + 1];
	char tmp[PATH_MAX];
	int fd;			/* the temporary file, -1 before data */
	uint64_t size, have;
	struct auth_sha256 sha;
	uint8_t **launches;	/* packed Launch messages */
	size_t *lens;
	size_t nlaunch;
	struct node_bin *next;
};

/* mkdir -p with mode 0700 for what we create. 0 or -1 (errno). */
static int
node_bin_mkdirs(const char *path)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* The default cache: /var/cache/mpiv for root, else ~/.cache/mpiv. */
void
node_bin_default_dir(char *out, size_t n)
{
	const char *home = getenv("HOME");

	if (geteuid() == 0 || home == NULL || *home == '\0')
		snprintf(out, n, "/var/cache/mpiv");
	else
		snprintf(out, n, "%s/.cache/mpiv", home);
}

int
node_bin_prepare(struct node *n)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (node_bin_mkdirs(n->cache_dir) < 0 || lstat(n->cache_dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode)) {
		log_warn("node cannot make the cache directory %s",
		    n->cache_dir);
		return -1;
	}
	/* The agent fills it; the ranks (same account) run from it. What
	   an agent of another account cached there becomes ours too. */
	if (!n->priv.drop)
		return 0;
	if (chown(n->cache_dir, n->priv.uid, n->priv.gid) < 0 ||
	    chmod(n->cache_dir, 0700) < 0) {
		log_warn("node cannot give %s to user %s", n->cache_dir,
		    n->priv.user);
		return -1;
	}
	if ((d = opendir(n->cache_dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char p[PATH_MAX];
		if (de->d_name[0] == '.' || strlen(de->d_name) !=
		    2 * AUTH_HASH_LEN)
			continue;
		snprintf(p, sizeof(p), "%.3900s/%.64s", n->cache_dir, de->d_name);
		(void)lchown(p, n->priv.uid, n->priv.gid);
		snprintf(p, sizeof(p), "%.3900s/%.64s/prog", n->cache_dir,
		    de->d_name);
		(void)lchown(p, n->priv.uid, n->priv.gid);
		snprintf(p, sizeof(p), "%.3900s/%.64s/stdin", n->cache_dir,
		    de->d_name);
		(void)lchown(p, n->priv.uid, n->priv.gid);
	}
	closedir(d);
	return 0;
}

static const char *
node_bin_name(enum node_blob kind)
{
	return kind == NODE_BLOB_STDIN ? "stdin" : "prog";
}

/* CACHE/HASH/prog or CACHE/HASH/stdin. */
static void
node_bin_file(const struct node *n, enum node_blob kind, const char *hash,
    char *out, size_t len)
{
	snprintf(out, len, "%.3900s/%s/%s", n->cache_dir, hash,
	    node_bin_name(kind));
}

static void
node_bin_free(struct node *n, struct node_bin *b)
{
	struct node_bin **pp;

	for (pp = &n->bins; *pp != NULL; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	if (b->fd >= 0) {
		close(b->fd);
		(void)unlink(b->tmp);
	}
	for (size_t i = 0; i < b->nlaunch; i++)
		free(b->launches[i]);
	free(b->launches);
	free(b->lens);
	free(b);
}

/*
 * Ends a fetch: on success (why == NULL) runs every launch that waited,
 * otherwise fails each with the reason.
 */
static void
node_bin_done(struct node *n, struct node_bin *b, const char *why)
{
	char msg[300];

	for (size_t i = 0; i < b->nlaunch; i++) {
		Mpiv__Launch *l = mpiv__launch__unpack(NULL, b->lens[i],
		    b->launches[i]);

		if (l == NULL)
			continue;
		if (why == NULL) {
			node_launch(n, l);
		} else if (b->kind == NODE_BLOB_STDIN) {
			snprintf(msg, sizeof(msg), "cannot get the job's stdin: "
			    "%s", why);
			node_launch_failed(n, l, msg);
		} else {
			snprintf(msg, sizeof(msg), "cannot get the program %s: "
			    "%s", l->argv[0], why);
			node_launch_failed(n, l, msg);
		}
		mpiv__launch__free_unpacked(l, NULL);
	}
	node_bin_free(n, b);
}

/*
 * The program a Launch runs, or the stdin its rank reads (kind): 0 with
 * its cache path in path (ready), 1 when the launch was queued until it
 * arrives (node_launch is called again then), -1 when it failed (already
 * reported).
 */
int
node_bin_need(struct node *n, const Mpiv__Launch *l, enum node_blob kind,
    char *path, size_t len)
{
	Mpiv__BinaryGet bg = MPIV__BINARY_GET__INIT;
	bool in = kind == NODE_BLOB_STDIN;
	const char *hash = in ? l->stdin_hash : l->binary_hash;
	uint64_t size = in ? l->stdin_size : l->binary_size;
	struct node_bin *b;
	uint8_t *packed, **nl;
	size_t plen, *nlen;

	if (!auth_hash_hex_ok(hash) || size == 0 ||
	    size > (in ? NODE_STDIN_MAX : NODE_BIN_MAX)) {
		node_launch_failed(n, l, in ? "bad stdin hash or size in "
		    "launch" : "bad program hash or size in launch");
		return -1;
	}
	node_bin_file(n, kind, hash, path, len);
	if (access(path, in ? R_OK : X_OK) == 0)
		return 0;
	for (b = n->bins; b != NULL; b = b->next)
		if (b->kind == kind && strcmp(b->hash, hash) == 0)
			break;
	if (b == NULL) {
		if ((b = calloc(1, sizeof(*b))) == NULL)
			goto out_nomem;
		b->kind = kind;
		snprintf(b->hash, sizeof(b->hash), "%s", hash);
		b->fd = -1;
		b->size = size;
		b->next = n->bins;
		n->bins = b;
		bg.hash = b->hash;
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_BINARY_GET, &bg.base,
		    NULL, 0);
		log_info("node fetching %s hash=%.16s size=%llu for job=%s",
		    in ? "stdin" : "program", b->hash,
		    (unsigned long long)b->size, l->job_id);
	}
	plen = mpiv__launch__get_packed_size(l);
	if ((packed = malloc(plen)) == NULL)
		goto out_nomem;
	nl = realloc(b->launches, (b->nlaunch + 1) * sizeof(*nl));
	if (nl != NULL)
		b->launches = nl;
	nlen = realloc(b->lens, (b->nlaunch + 1) * sizeof(*nlen));
	if (nlen != NULL)
		b->lens = nlen;
	if (nl == NULL || nlen == NULL) {
		free(packed);
		goto out_nomem;
	}
	mpiv__launch__pack(l, packed);
	b->launches[b->nlaunch] = packed;
	b->lens[b->nlaunch++] = plen;
	return 1;
out_nomem:
	node_launch_failed(n, l, "node agent out of memory");
	return -1;
}

static struct node_bin *
node_bin_find(struct node *n, const char *hash)
{
	for (struct node_bin *b = n->bins; b != NULL; b = b->next)
		if (strcmp(b->hash, hash) == 0)
			return b;
	return NULL;
}

/* BinaryData: the next piece, written at its offset (in order only). */
void
node_bin_data(struct node *n, const Mpiv__BinaryData *bd,
    const uint8_t *payload, uint32_t len)
{
	struct node_bin *b = node_bin_find(n, bd->hash);
	char dir[PATH_MAX], why[200];
	ssize_t w;

	if (b == NULL)
		return;		/* not asked for (or given up): ignore */
	if (bd->offset != b->have || len > b->size - b->have) {
		node_bin_done(n, b, "pieces out of order or too long");
		return;
	}
	if (b->fd < 0) {
		snprintf(dir, sizeof(dir), "%.3900s/%s", n->cache_dir, b->hash);
		if (node_bin_mkdirs(dir) < 0) {
			snprintf(why, sizeof(why), "cannot create %.120s: %s",
			    dir, strerror(errno));
			node_bin_done(n, b, why);
			return;
		}
		snprintf(b->tmp, sizeof(b->tmp), "%.3990s/.%s.%d", dir,
		    node_bin_name(b->kind), (int)getpid());
		b->fd = open(b->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0700);
		if (b->fd < 0) {
			snprintf(why, sizeof(why), "cannot create %.120s: %s",
			    b->tmp, strerror(errno));
			node_bin_done(n, b, why);
			return;
		}
		auth_sha256_init(&b->sha);
	}
	for (uint32_t off = 0; off < len; off += (uint32_t)w) {
		w = write(b->fd, payload + off, len - off);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0) {
			snprintf(why, sizeof(why), "cannot write %.120s: %s",
			    b->tmp, w < 0 ? strerror(errno) : "short write");
			node_bin_done(n, b, why);
			return;
		}
	}
	auth_sha256_update(&b->sha, payload, len);
	b->have += len;
}

/* BinaryEnd: checks size and hash, then installs the program. */
void
node_bin_end(struct node *n, const Mpiv__BinaryEnd *be)
{
	struct node_bin *b = node_bin_find(n, be->hash);
	uint8_t sum[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1], path[PATH_MAX], why[200];
	int rc;

	if (b == NULL)
		return;
	if (*be->error != '\0') {
		node_bin_done(n, b, be->error);
		return;
	}
	if (b->fd < 0 || b->have != b->size) {
		snprintf(why, sizeof(why), "got %llu of %llu bytes",
		    (unsigned long long)b->have, (unsigned long long)b->size);
		node_bin_done(n, b, why);
		return;
	}
	auth_sha256_final(&b->sha, sum);
	auth_hex(sum, sizeof(sum), hex);
	if (strcmp(hex, b->hash) != 0) {
		node_bin_done(n, b, "its bytes do not match its hash");
		return;
	}
	node_bin_file(n, b->kind, b->hash, path, sizeof(path));
	/* Closed before it is in place: another agent sharing the cache
	   may run it as soon as it is, and a program still open for writing
	   cannot be executed (ETXTBSY). */
	rc = fsync(b->fd) < 0 ||
	    fchmod(b->fd, b->kind == NODE_BLOB_STDIN ? 0400 : 0700) < 0 ? -1 : 0;
	if (close(b->fd) < 0)
		rc = -1;
	b->fd = -1;
	if (rc < 0 || rename(b->tmp, path) < 0) {
		snprintf(why, sizeof(why), "cannot install %.120s: %s", path,
		    strerror(errno));
		(void)unlink(b->tmp);
		node_bin_done(n, b, why);
		return;
	}
	log_info("node %s cached hash=%.16s size=%llu path=%s",
	    b->kind == NODE_BLOB_STDIN ? "stdin" : "program", b->hash,
	    (unsigned long long)b->size, path);
	node_bin_done(n, b, NULL);
}

/* The dispatcher link is gone: launches waiting for programs are moot. */
void
node_bin_drop_all(struct node *n)
{
	while (n->bins != NULL)
		node_bin_free(n, n->bins);
}
