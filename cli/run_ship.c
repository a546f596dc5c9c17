/*
 * run_ship.c: `mpiv run --dispatcher` ships the program to nodes that
 * lack it (volunteer machines share no file system): the job carries the
 * program's SHA-256 and size; when the first node asks, the dispatcher
 * asks us (BinaryGet) and we stream the file (BinaryData..., BinaryEnd),
 * hashing it again as it goes so that a program changed since submission
 * is refused rather than run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "elfdyn.h"
#include "proc.h"
#include "run_priv.h"

#define RUN_SHIP_CHUNK	(1u << 20)
#define RUN_SHIP_MAX	(1ull << 30)

/* Hashes fd from its start into hex; its size in *size. 0 or -1. */
static int
run_ship_hash(int fd, char hex[2 * AUTH_HASH_LEN + 1], uint64_t *size)
{
	struct auth_sha256 s;
	uint8_t buf[65536], sum[AUTH_HASH_LEN];
	ssize_t n;

	auth_sha256_init(&s);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		auth_sha256_update(&s, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	auth_sha256_final(&s, sum);
	auth_hex(sum, sizeof(sum), hex);
	return 0;
}

/*
 * Whether a directory of the colon-separated list holds a file name:
 * among its $ORIGIN ones (expanded for prog) when origin, else among
 * its absolute ones. The first such entry, as written, into entry.
 */
static bool
run_ship_find(const char *list, const char *prog, const char *name,
    bool origin, char *entry, size_t elen)
{
	char one[PATH_MAX], dir[PATH_MAX], full[PATH_MAX];

	for (const char *d = list, *end; d != NULL && *d != '\0'; d = end) {
		size_t len;
		int o;

		end = strchr(d, ':');
		len = end != NULL ? (size_t)(end - d) : strlen(d);
		if (end != NULL)
			end++;
		if (len == 0 || len >= sizeof(one))
			continue;
		memcpy(one, d, len);
		one[len] = '\0';
		if ((o = elfdyn_dir(one, prog, dir, sizeof(dir))) < 0 ||
		    (origin ? o != 1 : o != 0 || dir[0] != '/' ||
		    strstr(dir, "ORIGIN") != NULL))
			continue;
		if (snprintf(full, sizeof(full), "%s/%s", dir, name) <
		    (int)sizeof(full) && access(full, F_OK) == 0) {
			snprintf(entry, elen, "%s", one);
			return true;
		}
	}
	return false;
}

/*
 * A program that finds a library through an $ORIGIN directory of its
 * RUNPATH (its own directory, or one beside it) loses it when shipped:
 * the nodes run their copy from the program cache, where nothing lies
 * beside it. The loader would then take another MPI's libmpi.so, or
 * none, and every rank fail with "symbol lookup error" or "cannot open
 * shared object file". Refused here, naming the library, unless the same
 * library is also in an absolute directory of the RUNPATH or of the
 * ranks' LD_LIBRARY_PATH (-x), or, for a library other than libmpi.so,
 * in the system's directories: the nodes are expected to have what this
 * machine has at those paths, as they are for libmpi.so itself. 0, or -1
 * with r->reason set.
 */
static int
run_ship_origin_check(struct run *r)
{
	static const char sysdirs[] = "/lib/x86_64-linux-gnu:"
	    "/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib:"
	    "/usr/local/lib";
	struct elfdyn d;
	const char *llp = "";
	char origin[PATH_MAX], abs[PATH_MAX];

	if (elfdyn_read(r->ship_path, &d) < 0 || strstr(d.path, "ORIGIN") ==
	    NULL)
		return 0;
	for (size_t i = 0; i < r->nenv; i++)
		if (strncmp(r->env[i], "LD_LIBRARY_PATH=", 16) == 0)
			llp = r->env[i] + 16;	/* the last one wins */
	for (int i = 0; i < d.nneeded; i++) {
		const char *name = d.needed[i], *p = r->ship_path;

		if (strchr(name, '/') != NULL)
			continue;	/* a path: searched nowhere */
		if (!run_ship_find(d.path, p, name, true, origin,
		    sizeof(origin)) ||
		    run_ship_find(d.path, p, name, false, abs, sizeof(abs)) ||
		    run_ship_find(llp, p, name, false, abs, sizeof(abs)) ||
		    (strcmp(name, "libmpi.so") != 0 &&
		    run_ship_find(sysdirs, p, name, false, abs, sizeof(abs))))
			continue;
		snprintf(r->reason, sizeof(r->reason), "%.200s finds %s "
		    "through %.200s in its RUNPATH, which a shipped copy would not "
		    "have: the nodes run it from their program cache, where "
		    "nothing lies beside it. Link it statically "
		    "(MPIVCC_STATIC=1 mpivcc ...) or with an absolute RUNPATH "
		    "the nodes have, pass the library's directory with -x "
		    "LD_LIBRARY_PATH=DIR, or use --no-ship if every node has "
		    "the program at this path", r->argv[0], name, origin);
		return -1;
	}
	return 0;
}

/*
 * Finds and hashes the program (argv[0], from our cwd or $PATH). 0, or
 * -1 with r->reason set.
 */
int
run_ship_prepare(struct run *r)
{
	int fd;

	if (proc_resolve(r->argv[0], r->cwd, r->ship_path,
	    sizeof(r->ship_path)) < 0) {
		snprintf(r->reason, sizeof(r->reason), "%s: %s", r->argv[0],
		    strerror(errno));
		return -1;
	}
	if ((fd = open(r->ship_path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    run_ship_hash(fd, r->ship_hash, &r->ship_size) < 0) {
		snprintf(r->reason, sizeof(r->reason), "cannot read %.300s to "
		    "ship it: %s", r->ship_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (r->ship_size == 0 || r->ship_size > RUN_SHIP_MAX) {
		snprintf(r->reason, sizeof(r->reason), "%.300s: %s to ship "
		    "(use --no-ship if the nodes have it)", r->ship_path,
		    r->ship_size == 0 ? "empty" : "over 1 GiB");
		return -1;
	}
	if (run_ship_origin_check(r) < 0)
		return -1;
	log_info("run shipping program=%s hash=%.16s bytes=%llu", r->ship_path,
	    r->ship_hash, (unsigned long long)r->ship_size);
	return 0;
}

/* The dispatcher's BinaryGet: the whole file, then BinaryEnd. */
void
run_ship_send(struct run *r, const Mpiv__BinaryGet *bg)
{
	Mpiv__BinaryData bd = MPIV__BINARY_DATA__INIT;
	Mpiv__BinaryEnd be = MPIV__BINARY_END__INIT;
	struct auth_sha256 s;
	uint8_t *buf = NULL, sum[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1], err[200] = "";
	uint64_t off = 0;
	ssize_t n;
	int fd = -1;

	be.hash = bd.hash = r->ship_hash;
	if (strcmp(bg->hash, r->ship_hash) != 0) {
		snprintf(err, sizeof(err), "asked for a program we did not "
		    "submit");
		goto out;
	}
	if ((buf = malloc(RUN_SHIP_CHUNK)) == NULL ||
	    (fd = open(r->ship_path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, sizeof(err), "cannot read %.120s: %s",
		    r->ship_path, strerror(errno));
		goto out;
	}
	auth_sha256_init(&s);
	while (off < r->ship_size) {
		size_t want = r->ship_size - off < RUN_SHIP_CHUNK ?
		    (size_t)(r->ship_size - off) : RUN_SHIP_CHUNK;

		n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		auth_sha256_update(&s, buf, (size_t)n);
		bd.offset = off;
		(void)conn_send(r->c, MPIV__MSG_TYPE__MSG_BINARY_DATA, &bd.base,
		    buf, (uint32_t)n);
		off += (uint64_t)n;
	}
	auth_sha256_final(&s, sum);
	auth_hex(sum, sizeof(sum), hex);
	if (off != r->ship_size || strcmp(hex, r->ship_hash) != 0)
		snprintf(err, sizeof(err), "%.120s changed since the job was "
		    "submitted", r->ship_path);
out:
	if (err[0] != '\0')
		log_warnx("run cannot ship the program: %s", err);
	else
		log_info("run program sent bytes=%llu",
		    (unsigned long long)off);
	be.size = off;
	be.error = err;
	(void)conn_send(r->c, MPIV__MSG_TYPE__MSG_BINARY_END, &be.base, NULL,
	    0);
	if (fd >= 0)
		close(fd);
	free(buf);
}
