/*
 * cs_store.c: the checkpoint store on disk (layout in cs_priv.h). Every
 * path is relative to a directory fd (the store, or one rank's directory)
 * so that names from the wire are only ever single, checked components.
 *
 * Commit of checkpoint K: the temp image is synced by the upload; here
 * ckpt-K.meta and ckpt-K.sum are written and synced, the directory is
 * synced, tmp -> ckpt-K.img is renamed (the commit point), the directory
 * is synced again, `current` is replaced atomically, old images beyond
 * --keep are deleted. On start, temp files and orphans a crash left are
 * removed and `current` is made to name the newest complete image.
 *
 * Modes: an image is a rank's whole memory (its rank key included), so
 * every file here is created 0600 and every directory 0700, whatever the
 * umask (explicit modes; a umask only ever narrows them). Job and rank
 * directories an older CS left wider are narrowed at recovery.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cs_priv.h"
#include "frame.h"
#include "log.h"
#include "srvfault.h"

#define CS_STORE_SMALL 64	/* bytes of `current` and ckpt-K.sum */
#define CS_STORE_FILE_MODE 0600
#define CS_STORE_DIR_MODE  0700
#define CS_STORE_OWNER	   "owner"	/* in a job directory: the instance
					   of the dispatcher whose job it is */

enum cs_store_kind { CSK_OTHER, CSK_TMP, CSK_IMG, CSK_META, CSK_SUM };

/*
 * A job id is safe as one path component: 1..CS_MAX_NAME characters out
 * of [A-Za-z0-9._-], not starting with a dot (so never "." or "..").
 */
bool
cs_store_name_ok(const char *s)
{
	size_t n;

	if (s == NULL || *s == '\0' || *s == '.')
		return false;
	for (n = 0; s[n] != '\0'; n++) {
		char ch = s[n];
		if (n >= CS_MAX_NAME)
			return false;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
		    ch == '-'))
			return false;
	}
	return true;
}

/* Parses a decimal number that is the whole string. */
static bool
cs_store_parse_u64(const char *s, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (s == end || end - s > 19)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

/* Classifies a file name of a rank directory; *k for ckpt-K.*. */
static enum cs_store_kind
cs_store_kind_of(const char *name, uint64_t *k)
{
	const char *dot;

	if (strncmp(name, "tmp-", 4) == 0)
		return CSK_TMP;
	if (strncmp(name, "ckpt-", 5) != 0 || (dot = strchr(name, '.')) == NULL)
		return CSK_OTHER;
	if (!cs_store_parse_u64(name + 5, dot, k) || *k == 0)
		return CSK_OTHER;
	if (strcmp(dot, ".img") == 0)
		return CSK_IMG;
	if (strcmp(dot, ".meta") == 0)
		return CSK_META;
	if (strcmp(dot, ".sum") == 0)
		return CSK_SUM;
	return CSK_OTHER;
}

static int
cs_store_write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t w;

	while (len > 0) {
		if ((w = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Creates (or replaces) dfd/name with buf, synced. 0 or -1/errno. */
static int
cs_store_write_file(int dfd, const char *name, const void *buf, size_t len)
{
	int fd, saved;

	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    CS_STORE_FILE_MODE);
	if (fd < 0)
		return -1;
	if (cs_store_write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		saved = errno;
		close(fd);
		(void)unlinkat(dfd, name, 0);
		errno = saved;
		return -1;
	}
	return close(fd);
}

/* Reads a small file into buf (NUL-terminated). Bytes read or -1. */
static ssize_t
cs_store_read_small(int dfd, const char *name, char *buf, size_t cap)
{
	int fd;
	ssize_t n;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static void
cs_store_ckpt_name(char *out, size_t cap, uint64_t k, const char *ext)
{
	snprintf(out, cap, "ckpt-%" PRIu64 ".%s", k, ext);
}

/* mkdir that tolerates an existing directory; syncs the parent if new. */
static int
cs_store_mkdir(int pfd, const char *name)
{
	if (mkdirat(pfd, name, CS_STORE_DIR_MODE) == 0)
		return fsync(pfd);
	return errno == EEXIST ? 0 : -1;
}

/*
 * Opens (optionally creating) STORE/JOB/RANK. Returns a directory fd, or
 * -1 with errno (ENOENT when it does not exist and create is false).
 */
int
cs_store_rank_dir(struct cs *cs, const char *job, int32_t rank, bool create)
{
	char rname[16];
	bool created = false;
	int jfd, rfd, saved;

	if (!cs_store_name_ok(job) || rank < 0 || rank > CS_MAX_RANK) {
		errno = EINVAL;
		return -1;
	}
	snprintf(rname, sizeof(rname), "%" PRId32, rank);
	if (create && mkdirat(cs->store_fd, job, CS_STORE_DIR_MODE) == 0) {
		if (fsync(cs->store_fd) < 0)
			return -1;
		created = true;
	} else if (create && errno != EEXIST) {
		return -1;
	}
	jfd = openat(cs->store_fd, job, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (jfd < 0)
		return -1;
	/* a new one: whose job it is (cs_store_sweep) */
	if (created && cs->disp_id[0] != '\0' && cs_store_write_file(jfd,
	    CS_STORE_OWNER, cs->disp_id, strlen(cs->disp_id)) < 0)
		log_warn("cs cannot write %s/%s", job, CS_STORE_OWNER);
	if (create && cs_store_mkdir(jfd, rname) < 0) {
		saved = errno;
		close(jfd);
		errno = saved;
		return -1;
	}
	rfd = openat(jfd, rname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	saved = errno;
	close(jfd);
	errno = saved;
	return rfd;
}

/* The current checkpoint number of a rank, 0 if none. 0, or -1 if corrupt. */
int
cs_store_current(int rdfd, uint64_t *k)
{
	char buf[CS_STORE_SMALL];
	char *end;
	ssize_t n;

	*k = 0;
	if ((n = cs_store_read_small(rdfd, "current", buf, sizeof(buf))) < 0)
		return errno == ENOENT ? 0 : -1;
	end = buf + n;
	while (end > buf && end[-1] == '\n')
		end--;
	if (!cs_store_parse_u64(buf, end, k)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Replaces `current` atomically (temp file, rename, directory sync). */
static int
cs_store_set_current(int rdfd, uint64_t k)
{
	char buf[CS_STORE_SMALL];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", k);

	if (cs_store_write_file(rdfd, "tmp-current", buf, (size_t)n) < 0)
		return -1;
	if (renameat(rdfd, "tmp-current", rdfd, "current") < 0)
		return -1;
	return fsync(rdfd);
}

/* Creates tmp-K-RANDOM for writing; its name goes to `name`. fd or -1. */
int
cs_store_tmp_create(int rdfd, uint64_t k, char *name, size_t namelen)
{
	uint64_t rnd;
	int fd;

	for (int tries = 0; tries < 8; tries++) {
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(rnd))
			rnd = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^
			    (uint64_t)tries;
		snprintf(name, namelen, "tmp-%" PRIu64 "-%016" PRIx64, k, rnd);
		fd = openat(rdfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    CS_STORE_FILE_MODE);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

static int
cs_store_cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * A directory stream over dfd, which stays open: on a dup, rewound,
 * since a dup shares the read offset an earlier stream on dfd left (a
 * second listing would otherwise start at the end). NULL with errno.
 */
static DIR *
cs_store_opendir(int dfd)
{
	DIR *d;
	int fd, saved;

	if ((fd = dup(dfd)) < 0)
		return NULL;
	if ((d = fdopendir(fd)) == NULL) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	rewinddir(d);
	return d;
}

/*
 * Lists the numbers of the ckpt-K.img of a rank directory, newest first,
 * into a malloc'ed array. Also reports the other kinds through the
 * optional callback (recovery). Returns the count, or -1.
 */
static ssize_t
cs_store_list(int rdfd, uint64_t **out,
    void (*other)(int rdfd, const char *name, enum cs_store_kind kind,
    uint64_t k, void *arg), void *arg)
{
	DIR *d;
	struct dirent *de;
	uint64_t *v = NULL, *nv, k = 0;
	size_t n = 0, cap = 0;
	enum cs_store_kind kind;

	*out = NULL;
	if ((d = cs_store_opendir(rdfd)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		kind = cs_store_kind_of(de->d_name, &k);
		if (kind != CSK_IMG) {
			if (other != NULL)
				other(rdfd, de->d_name, kind, k, arg);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL) {
				free(v);
				closedir(d);
				return -1;
			}
			v = nv;
		}
		v[n++] = k;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cs_store_cmp_desc);
	*out = v;
	return (ssize_t)n;
}

static void
cs_store_unlink_ckpt(int rdfd, uint64_t k)
{
	char name[64];

	cs_store_ckpt_name(name, sizeof(name), k, "img");
	(void)unlinkat(rdfd, name, 0);
	srvfault_point("cs-gc");	/* an image half deleted */
	cs_store_ckpt_name(name, sizeof(name), k, "meta");
	(void)unlinkat(rdfd, name, 0);
	cs_store_ckpt_name(name, sizeof(name), k, "sum");
	(void)unlinkat(rdfd, name, 0);
}

static bool
cs_store_in(const uint64_t *v, ssize_t n, uint64_t k)
{
	for (ssize_t i = 0; i < n; i++)
		if (v[i] == k)
			return true;
	return false;
}

/*
 * Deletes images beyond the newest `keep`, except `current` and every
 * image a kept one is a delta over (its chain, walked through the metas;
 * an unreadable meta keeps everything older, never deletes a parent).
 */
static void
cs_store_prune(struct cs *cs, int rdfd, uint64_t current)
{
	uint64_t *v, *need, p;
	ssize_t n, nneed = 0;

	if ((n = cs_store_list(rdfd, &v, NULL, NULL)) < 0) {
		log_warn("cs prune: cannot list a rank directory");
		return;
	}
	if ((need = calloc((size_t)n + 1, sizeof(*need))) == NULL) {
		free(v);
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (i >= (ssize_t)cs->keep && v[i] != current)
			continue;
		for (uint64_t k = v[i]; k != 0 && !cs_store_in(need, nneed, k);
		    k = p) {
			need[nneed++] = k;
			if (cs_store_parent(rdfd, k, &p) < 0) {
				log_warnx("cs prune: ckpt=%" PRIu64 " meta "
				    "unreadable: keeping the older images", k);
				goto out;
			}
			if (p >= k || !cs_store_in(v, n, p))
				break;
		}
	}
	for (ssize_t i = 0; i < n; i++) {
		if (cs_store_in(need, nneed, v[i]))
			continue;
		log_debug("cs prune ckpt=%" PRIu64, v[i]);
		cs_store_unlink_ckpt(rdfd, v[i]);
	}
out:
	free(need);
	free(v);
}

int
cs_store_commit(struct cs *cs, int rdfd, const char *tmpname, uint64_t k,
    const uint8_t *meta, size_t metalen, uint64_t bytes, uint64_t sum,
    char *why, size_t whylen)
{
	char name[64], buf[CS_STORE_SMALL];
	int n;

	cs_store_ckpt_name(name, sizeof(name), k, "meta");
	if (cs_store_write_file(rdfd, name, meta, metalen) < 0)
		goto fail_meta;
	cs_store_ckpt_name(name, sizeof(name), k, "sum");
	n = snprintf(buf, sizeof(buf), "%" PRIu64 " %016" PRIx64 "\n", bytes,
	    sum);
	if (cs_store_write_file(rdfd, name, buf, (size_t)n) < 0)
		goto fail_meta;
	if (fsync(rdfd) < 0)
		goto fail_meta;
	cs_store_ckpt_name(name, sizeof(name), k, "img");
	if (renameat(rdfd, tmpname, rdfd, name) < 0)
		goto fail_meta;
	/* Committed: from here on the image is the rank's newest. */
	if (fsync(rdfd) < 0)
		log_warn("cs commit ckpt=%" PRIu64 ": directory sync", k);
	if (cs_store_set_current(rdfd, k) < 0)
		log_warn("cs commit ckpt=%" PRIu64 ": cannot update current "
		    "(repaired on restart)", k);
	cs_store_prune(cs, rdfd, k);
	srvfault_point("cs-stored");	/* before the node and the CM know */
	return 0;

fail_meta:
	snprintf(why, whylen, "store: %s", strerror(errno));
	cs_store_ckpt_name(name, sizeof(name), k, "meta");
	(void)unlinkat(rdfd, name, 0);
	cs_store_ckpt_name(name, sizeof(name), k, "sum");
	(void)unlinkat(rdfd, name, 0);
	return -1;
}

/* Reads ckpt-K.meta. NULL when missing or corrupt. */
static Mpiv__ImageMeta *
cs_store_read_meta(int rdfd, uint64_t k)
{
	Mpiv__ImageMeta *meta = NULL;
	char name[64];
	uint8_t *mbuf = NULL;
	struct stat st;
	ssize_t n;
	int mfd;

	cs_store_ckpt_name(name, sizeof(name), k, "meta");
	if ((mfd = openat(rdfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(mfd, &st) == 0 && st.st_size <= FRAME_MAX_META &&
	    (mbuf = malloc((size_t)st.st_size + 1)) != NULL &&
	    (n = pread(mfd, mbuf, (size_t)st.st_size, 0)) == st.st_size)
		meta = mpiv__image_meta__unpack(NULL, (size_t)n, mbuf);
	free(mbuf);
	close(mfd);
	return meta;
}

int
cs_store_parent(int rdfd, uint64_t k, uint64_t *parent)
{
	Mpiv__ImageMeta *m = cs_store_read_meta(rdfd, k);

	if (m == NULL)
		return -1;
	*parent = m->parent_ckpt;
	mpiv__image_meta__free_unpacked(m, NULL);
	return 0;
}

/*
 * Opens ckpt-K.img for reading with its metadata and recorded size and
 * checksum, all checked against each other. Returns the fd, or -1 with a
 * reason in why.
 */
int
cs_store_open_image(int rdfd, uint64_t k, Mpiv__ImageMeta **meta,
    uint64_t *bytes, uint64_t *sum, char *why, size_t whylen)
{
	char name[64], buf[CS_STORE_SMALL];
	struct stat st;
	int fd = -1;

	*meta = NULL;
	cs_store_ckpt_name(name, sizeof(name), k, "img");
	if ((fd = openat(rdfd, name, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "checkpoint %" PRIu64 " is not stored%s",
		    k, errno == ENOENT ? "" : " (cannot open it)");
		return -1;
	}
	cs_store_ckpt_name(name, sizeof(name), k, "sum");
	if (cs_store_read_small(rdfd, name, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%" SCNu64 " %" SCNx64, bytes, sum) != 2) {
		snprintf(why, whylen, "checkpoint %" PRIu64 ": checksum record "
		    "missing or corrupt", k);
		goto fail;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != *bytes) {
		snprintf(why, whylen, "checkpoint %" PRIu64 ": image size does "
		    "not match its record", k);
		goto fail;
	}
	if ((*meta = cs_store_read_meta(rdfd, k)) == NULL) {
		snprintf(why, whylen, "checkpoint %" PRIu64 ": metadata missing "
		    "or corrupt", k);
		goto fail;
	}
	return fd;

fail:
	close(fd);
	return -1;
}

struct cs_store_scan {
	uint64_t *img;		/* complete images, newest first */
	ssize_t nimg;
	int pass;		/* 1: temp files, 2: orphans */
};

static bool
cs_store_has(const struct cs_store_scan *sc, uint64_t k)
{
	for (ssize_t i = 0; i < sc->nimg; i++)
		if (sc->img[i] == k)
			return true;
	return false;
}

static void
cs_store_scan_other(int rdfd, const char *name, enum cs_store_kind kind,
    uint64_t k, void *arg)
{
	struct cs_store_scan *sc = arg;

	if (sc->pass == 1 && kind == CSK_TMP) {
		log_info("cs recovery: removing temp file name=%s", name);
		(void)unlinkat(rdfd, name, 0);
	} else if (sc->pass == 2 && (kind == CSK_META || kind == CSK_SUM) &&
	    !cs_store_has(sc, k)) {
		log_info("cs recovery: removing orphan name=%s", name);
		(void)unlinkat(rdfd, name, 0);
	}
}

/* Repairs one rank directory after a crash (see the head of the file). */
static void
cs_store_recover_rank(struct cs *cs, int rdfd, const char *where)
{
	struct cs_store_scan sc = { .pass = 1 };
	char name[64];
	uint64_t cur = 0, newest = 0, *again;
	ssize_t i, j;

	if ((sc.nimg = cs_store_list(rdfd, &sc.img, cs_store_scan_other,
	    &sc)) < 0) {
		log_warn("cs recovery: cannot list dir=%s", where);
		return;
	}
	/* An image whose meta or sum is missing is not complete. */
	for (i = 0, j = 0; i < sc.nimg; i++) {
		bool ok = true;
		cs_store_ckpt_name(name, sizeof(name), sc.img[i], "meta");
		ok = ok && faccessat(rdfd, name, F_OK, 0) == 0;
		cs_store_ckpt_name(name, sizeof(name), sc.img[i], "sum");
		ok = ok && faccessat(rdfd, name, F_OK, 0) == 0;
		if (ok) {
			sc.img[j++] = sc.img[i];
			continue;
		}
		log_warnx("cs recovery: dir=%s ckpt=%" PRIu64 " incomplete, "
		    "removed", where, sc.img[i]);
		cs_store_unlink_ckpt(rdfd, sc.img[i]);
	}
	sc.nimg = j;
	sc.pass = 2;
	/* Orphans: meta or sum of an image not (or no longer) there. */
	if (cs_store_list(rdfd, &again, cs_store_scan_other, &sc) < 0) {
		free(sc.img);
		return;
	}
	free(again);
	/* Oldest first: an incremental image whose parent is gone (a crash
	   during a prune, a lost file) cannot be rebuilt: removed. */
	for (i = sc.nimg - 1; i >= 0; i--) {
		uint64_t p = 0;
		bool ok = cs_store_parent(rdfd, sc.img[i], &p) == 0;

		ok = ok && (p == 0 || (p < sc.img[i] &&
		    cs_store_has(&sc, p)));
		if (ok)
			continue;
		log_warnx("cs recovery: dir=%s ckpt=%" PRIu64 " parent=%"
		    PRIu64 " %s, removed", where, sc.img[i], p,
		    p == 0 ? "meta unreadable" : "missing");
		cs_store_unlink_ckpt(rdfd, sc.img[i]);
		memmove(&sc.img[i], &sc.img[i + 1], (size_t)(sc.nimg - i - 1) *
		    sizeof(*sc.img));
		sc.nimg--;
	}
	/* The image renamed last is committed even if `current` lags. */
	newest = sc.nimg > 0 ? sc.img[0] : 0;
	if (cs_store_current(rdfd, &cur) < 0 || cur != newest) {
		log_info("cs recovery: dir=%s current=%" PRIu64, where, newest);
		if (newest == 0)
			(void)unlinkat(rdfd, "current", 0);
		else if (cs_store_set_current(rdfd, newest) < 0)
			log_warn("cs recovery: dir=%s cannot set current",
			    where);
	}
	free(sc.img);
	if (newest > 0)
		cs_store_prune(cs, rdfd, newest);
}

/* A job or rank directory an older CS made 0755 becomes 0700. */
static void
cs_store_narrow(int dfd, const char *where)
{
	struct stat st;

	if (fstat(dfd, &st) < 0 || (st.st_mode & 077) == 0)
		return;
	if (fchmod(dfd, CS_STORE_DIR_MODE) < 0)
		log_warn("cs recovery: cannot make dir=%s private", where);
	else
		log_info("cs recovery: dir=%s mode %03o -> %03o", where,
		    (unsigned)(st.st_mode & 0777), CS_STORE_DIR_MODE);
}

/* Every STORE/JOB/RANK directory: temp files and orphans out, made private. */
void
cs_store_recover(struct cs *cs)
{
	DIR *sd, *jd;
	struct dirent *je, *re;
	char where[2 * 256 + 2];
	uint64_t rank;
	int jfd, rfd;

	if ((sd = cs_store_opendir(cs->store_fd)) == NULL) {
		log_warn("cs recovery: cannot read store=%s", cs->store);
		return;
	}
	while ((je = readdir(sd)) != NULL) {
		if (!cs_store_name_ok(je->d_name))
			continue;
		jfd = openat(cs->store_fd, je->d_name,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (jfd < 0)
			continue;
		cs_store_narrow(jfd, je->d_name);
		if ((jd = fdopendir(jfd)) == NULL) {
			close(jfd);
			continue;
		}
		while ((re = readdir(jd)) != NULL) {
			if (!cs_store_parse_u64(re->d_name,
			    re->d_name + strlen(re->d_name), &rank))
				continue;
			rfd = openat(jfd, re->d_name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (rfd < 0)
				continue;
			snprintf(where, sizeof(where), "%s/%s", je->d_name,
			    re->d_name);
			cs_store_narrow(rfd, where);
			cs_store_recover_rank(cs, rfd, where);
			close(rfd);
		}
		closedir(jd);
	}
	closedir(sd);
}

/* Removes every entry of dfd (rank directories: one level deeper). The
   number of images (ckpt-K.img) removed. */
static unsigned
cs_store_empty_dir(int dfd, int depth)
{
	DIR *d;
	struct dirent *de;
	unsigned n = 0;
	uint64_t k;
	int sub;

	if ((d = cs_store_opendir(dfd)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0) {
			n += cs_store_kind_of(de->d_name, &k) == CSK_IMG;
			continue;
		}
		if (depth > 0 && (sub = openat(dfd, de->d_name, O_RDONLY |
		    O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
			n += cs_store_empty_dir(sub, depth - 1);
			close(sub);
			(void)unlinkat(dfd, de->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
	return n;
}

void
cs_store_drop_job(struct cs *cs, const char *job, const char *why)
{
	unsigned n;
	int jfd;

	if (!cs_store_name_ok(job))
		return;
	if ((jfd = openat(cs->store_fd, job, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno != ENOENT)
			log_warn("cs cannot open job=%s to drop it", job);
		return;
	}
	n = cs_store_empty_dir(jfd, 1);
	close(jfd);
	if (unlinkat(cs->store_fd, job, AT_REMOVEDIR) < 0) {
		log_warn("cs cannot remove the images of job=%s", job);
		return;
	}
	(void)fsync(cs->store_fd);
	log_info("cs dropped job=%s images=%u reason=\"%s\"", job, n, why);
}

void
cs_store_sweep(struct cs *cs, const char *disp_id, char *const *live,
    size_t nlive)
{
	DIR *sd;
	struct dirent *je;
	char owner[CS_STORE_SMALL], name[CS_MAX_NAME + 1];
	size_t i;
	int jfd;

	if ((sd = cs_store_opendir(cs->store_fd)) == NULL) {
		log_warn("cs cannot read store=%s", cs->store);
		return;
	}
	while ((je = readdir(sd)) != NULL) {
		if (!cs_store_name_ok(je->d_name) || (jfd = openat(cs->store_fd,
		    je->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
		    O_NOFOLLOW)) < 0)
			continue;
		/* no owner: an older CS's, or made before any dispatcher
		   spoke to us: left alone */
		if (cs_store_read_small(jfd, CS_STORE_OWNER, owner,
		    sizeof(owner)) <= 0) {
			close(jfd);
			continue;
		}
		close(jfd);
		for (i = 0; i < nlive; i++)
			if (strcmp(live[i], je->d_name) == 0)
				break;
		if (strcmp(owner, disp_id) == 0 && i < nlive)
			continue;
		snprintf(name, sizeof(name), "%.128s", je->d_name);
		/* removing entries while reading the directory: readdir may
		   or may not return the others again, never a removed one */
		cs_store_drop_job(cs, name, strcmp(owner, disp_id) != 0 ?
		    "a previous dispatcher's job" : "the job has ended");
	}
	closedir(sd);
}

/* Creates the store directory if needed and opens it. 0 or -1. */
int
cs_store_open(struct cs *cs)
{
	struct stat st;

	if (mkdir(cs->store, CS_STORE_DIR_MODE) < 0 && errno != EEXIST) {
		log_warn("cs cannot create store=%s", cs->store);
		return -1;
	}
	cs->store_fd = open(cs->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cs->store_fd < 0) {
		log_warn("cs cannot open store=%s", cs->store);
		return -1;
	}
	/* An existing store is the operator's directory (it may be shared):
	   never chmod'ed, only reported; what the CS makes in it is 0700. */
	if (fstat(cs->store_fd, &st) == 0 && (st.st_mode & 077) != 0)
		log_info("cs store=%s mode=%03o (not changed; images stay "
		    "private in 0700 job directories)", cs->store,
		    (unsigned)(st.st_mode & 0777));
	return 0;
}
