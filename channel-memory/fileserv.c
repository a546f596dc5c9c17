/*
 * fileserv.c: MPI-IO at the job's first Channel Memory.
 *
 * A rank's MPI_File_* calls become FileOp frames to its job's first CM,
 * which carries each out on the real file (paths not absolute are taken
 * from the job's cwd) and answers with a FileRes. Two things make that
 * survive failures (docs/CONTRACTS.md "Files"):
 *
 * - The outcome log. Each rank numbers its operations from 1; the CM
 *   keeps every outcome (a read's bytes in an unlinked file beside it)
 *   and answers an op_no it has seen from the log, without touching the
 *   file again. A re-executed rank, which sends the same operations in
 *   the same order, so sees what its failed incarnation saw, however the
 *   file changed since; a rank sends op n + 1 only after the outcomes it
 *   decided before are stored (libmpi-lite's pessimistic rule), so the
 *   only operation a failure can leave unanswered is its last one.
 * - The journal. Before the job first changes a file (creates, writes,
 *   truncates, deletes it), the CM notes it in a manifest in the job's
 *   journal directory, with a copy of the file as it was when it existed.
 *   A job that starts over (a lost CM without a store: every log is gone)
 *   finds the journal at its new setup and puts every file back as it was
 *   before the job, so the new run reads what the first one read. The
 *   journal goes when the job ends. A first CM that comes back on its
 *   store cannot vouch for its outcome log (kept in memory), so such a
 *   job starts over too (fileserv_drop_recovered).
 *
 * Ops of every rank are carried out one at a time, in arrival order: the
 * atomic mode of MPI-IO holds whatever the program asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "auth.h"
#include "cm_priv.h"
#include "log.h"
#include "srvfault.h"

#define FS_NFD		8		/* cached open files per job */
#define FS_MAX_DATA	(256u << 20)	/* one op's bytes, either way */
#define FS_MAN_NAME	"manifest"

/* MPI_MODE_* bits the server acts on (libmpi-lite/mpi.h). */
#define FS_MODE_CREATE		1
#define FS_MODE_RDONLY		2
#define FS_MODE_WRONLY		4
#define FS_MODE_RDWR		8
#define FS_MODE_DELETE_ON_CLOSE 16
#define FS_MODE_EXCL		64

struct fs_op {
	uint64_t value;
	uint64_t data_off;	/* READ: its bytes in the data file */
	uint32_t kind;
	uint32_t err;
	char *text;		/* the error's words, or NULL */
};

struct fs_rank {
	struct fs_op *op;	/* op[k - 1]: the outcome of op_no k */
	uint64_t n, cap;
};

/* The shared file pointer of one open (FileOp.key and key_rank). */
struct fs_shared {
	uint64_t key;
	int32_t key_rank;
	uint64_t ptr;
};

struct fs_fd {
	char *path;
	int fd;
	int acc;		/* O_RDONLY, O_WRONLY or O_RDWR */
	uint64_t used;
};

struct fsrv {
	char dir[PATH_MAX];	/* the job's journal */
	char *cwd;
	int man_fd;		/* -1 until the job first changes a file */
	uint32_t nsaved;
	char **touched;		/* paths the manifest has */
	size_t ntouched, touched_cap;
	int data_fd;		/* reads' bytes (O_TMPFILE), -1 until one */
	uint64_t data_end;
	struct fs_rank *ranks;
	int32_t nranks;
	struct fs_shared *shared;
	size_t nshared, shared_cap;
	struct fs_fd fds[FS_NFD];
	uint64_t clock;
	int root_fd;		/* --files DIR: paths must stay beneath it */
};

/* ---------------- the journal directory ---------------- */

/* The journal's base directory of this CM: --files-journal, else the
   store's, else /var/tmp/mpiv-files-UID. */
static int
fs_base(const struct cm *cm, char *out, size_t n)
{
	int len;

	if (cm->files_journal != NULL)
		len = snprintf(out, n, "%s", cm->files_journal);
	else if (cm->store_dir != NULL)
		len = snprintf(out, n, "%s/files", cm->store_dir);
	else
		len = snprintf(out, n, "/var/tmp/mpiv-files-%u",
		    (unsigned)getuid());
	if (len < 0 || (size_t)len >= n)
		return -1;
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* The job's journal directory: named by its id and a hash of its token,
   so that no other job (another dispatcher's of the same id) takes it. */
static int
fs_jdir(const struct job *j, char *out, size_t n)
{
	uint8_t h[AUTH_HASH_LEN];
	char base[PATH_MAX], hex[17], id[64];
	size_t k = 0;
	int len;

	if (fs_base(j->cm, base, sizeof(base)) < 0)
		return -1;
	auth_hmac_sha256(j->token, j->has_token ? sizeof(j->token) : 0,
	    "mpiv files journal", 18, h);
	auth_hex(h, 8, hex);
	for (const char *p = j->id; *p != '\0' && k < sizeof(id) - 1; p++)
		id[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' ? *p : '_';
	id[k] = '\0';
	len = snprintf(out, n, "%s/job-%s-%s", base, id, hex);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

int
fileserv_journal_dir(const struct job *j, char *out, size_t n)
{
	return fs_jdir(j, out, n);
}

/*
 * Copies the file sfd to a new file dst (mode 0600): a clone sharing its
 * blocks where the file system can (btrfs, XFS), else copy_file_range
 * (in the kernel), else read and write. 0, or -1 (errno).
 */
static int
fs_copy(int sfd, const char *dst)
{
	char buf[1 << 16];
	int dfd, e;
	ssize_t r;

	if ((dfd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0)
		return -1;
	if (ioctl(dfd, FICLONE, sfd) == 0)
		return close(dfd);
	if (lseek(sfd, 0, SEEK_SET) < 0)
		goto fail;
	while ((r = copy_file_range(sfd, NULL, dfd, NULL, 1 << 30, 0)) > 0)
		;
	if (r == 0)
		return close(dfd);
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
	    errno != EOPNOTSUPP)
		goto fail;
	/* from the start again, the plain way */
	if (lseek(sfd, 0, SEEK_SET) < 0 || lseek(dfd, 0, SEEK_SET) < 0 ||
	    ftruncate(dfd, 0) < 0)
		goto fail;
	while ((r = read(sfd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(dfd, buf + off, (size_t)(r - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				goto fail;
			}
			off += w;
		}
	}
	return close(dfd);
fail:
	e = errno;
	close(dfd);
	unlink(dst);
	errno = e;
	return -1;
}

/* Removes the journal directory dir and what it holds (one level). */
static void
fs_rmjournal(const char *dir)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, FS_MAN_NAME);
	unlink(path);
	for (uint32_t i = 1;; i++) {
		snprintf(path, sizeof(path), "%s/saved-%u", dir, i);
		if (unlink(path) < 0 && errno == ENOENT)
			break;
	}
	if (rmdir(dir) < 0 && errno != ENOENT)
		log_warn("cm files: cannot remove the journal %s", dir);
}

/* Puts the copy saved-N of the journal dir back at target (mode kept).
   0, or -1 (errno). */
static int
fs_put_back(const char *dir, unsigned long n, const char *target)
{
	char saved[PATH_MAX + 64], tmp[PATH_MAX + 32];
	struct stat st;
	int sfd, rc = -1, e;

	snprintf(saved, sizeof(saved), "%s/saved-%lu", dir, n);
	if (snprintf(tmp, sizeof(tmp), "%s.mpiv-undo", target) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((sfd = open(saved, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(sfd, &st) == 0 && fs_copy(sfd, tmp) == 0 &&
	    chmod(tmp, st.st_mode & 07777) == 0 && rename(tmp, target) == 0)
		rc = 0;
	e = errno;
	if (rc < 0)
		(void)unlink(tmp);
	close(sfd);
	errno = e;
	return rc;
}

/*
 * Puts every file the journal names back as it was before the job:
 * newest record first, so that a file reached by two names ends as the
 * oldest copy says. Then removes the journal. Returns how many files
 * could not be put back (said in the log): the journal then stays.
 */
static int
fs_rollback(const char *dir)
{
	char path[PATH_MAX + 64], *man = NULL, **recs = NULL;
	size_t len = 0, nrec = 0;
	struct stat st;
	int fd, undone = 0, failed = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, FS_MAN_NAME);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (fstat(fd, &st) == 0 && st.st_size > 0 &&
		    (man = malloc((size_t)st.st_size + 1)) != NULL) {
			ssize_t r = pread(fd, man, (size_t)st.st_size, 0);
			len = r > 0 ? (size_t)r : 0;
			man[len] = '\0';
		}
		close(fd);
	}
	/* records: "C <path>\n" (created by the job) or
	   "S <n> <path>\n" (saved-<n> is the file as it was) */
	for (char *p = man; p != NULL && p < man + len;) {
		char *nl = memchr(p, '\n', (size_t)(man + len - p));
		char **nr;

		if (nl == NULL)
			break;		/* a record cut short: never acted on */
		*nl = '\0';
		if ((nr = realloc(recs, (nrec + 1) * sizeof(*recs))) == NULL) {
			failed++;
			break;
		}
		recs = nr;
		recs[nrec++] = p;
		p = nl + 1;
	}
	for (size_t i = nrec; i-- > 0;) {
		char *r = recs[i], *target;
		unsigned long n;

		if (r[0] == 'C' && r[1] == ' ') {
			if (unlink(r + 2) < 0 && errno != ENOENT) {
				log_warn("cm files: cannot remove %s", r + 2);
				failed++;
			} else {
				undone++;
			}
		} else if (r[0] == 'S' && r[1] == ' ' &&
		    (n = strtoul(r + 2, &target, 10)) > 0 && *target == ' ') {
			if (fs_put_back(dir, n, target + 1) < 0) {
				log_warn("cm files: cannot put %s back",
				    target + 1);
				failed++;
			} else {
				undone++;
			}
		}
	}
	if (nrec > 0)
		log_info("cm files: the job starts over: %d files put back as "
		    "they were before it, %d could not be (journal %s)",
		    undone, failed, dir);
	free(recs);
	free(man);
	if (failed == 0)
		fs_rmjournal(dir);
	return failed;
}

/* ---------------- set-up and end ---------------- */

int
fileserv_setup(struct job *j, const char *cwd, const char **err)
{
	struct fsrv *fs;
	struct stat st;

	if (j->cm_index != 0 || j->fs != NULL)
		return 0;
	if ((fs = calloc(1, sizeof(*fs))) == NULL ||
	    (fs->ranks = calloc((size_t)j->nranks, sizeof(*fs->ranks))) ==
	    NULL || (fs->cwd = strdup(cwd != NULL ? cwd : "")) == NULL) {
		if (fs != NULL) {
			free(fs->ranks);
			free(fs);
		}
		*err = "out of memory for the job's files";
		return -1;
	}
	fs->nranks = j->nranks;
	fs->man_fd = fs->data_fd = fs->root_fd = -1;
	for (int i = 0; i < FS_NFD; i++)
		fs->fds[i].fd = -1;
	if (fs_jdir(j, fs->dir, sizeof(fs->dir)) < 0) {
		log_warn("cm files: no journal directory for job=%s", j->id);
		fs->dir[0] = '\0';
	} else if (stat(fs->dir, &st) == 0 && fs_rollback(fs->dir) > 0) {
		/* a journal of this very job: it starts over, and must not
		   read files its first run changed */
		*err = "cannot put back the files the job changed before it "
		    "started over (the first CM's log says which)";
		free(fs->ranks);
		free(fs->cwd);
		free(fs);
		return -1;
	}
	if (j->cm->files_root != NULL && strcmp(j->cm->files_root, "/") != 0 &&
	    (fs->root_fd = open(j->cm->files_root, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		log_warn("cm files: --files %s", j->cm->files_root);
	j->fs = fs;
	return 0;
}

/*
 * A job rebuilt from the store whose first CM we are and which changed
 * files: the outcome log did not survive, so it must start over (the
 * JobSetup that follows finds the journal and undoes its changes).
 */
void
fileserv_drop_recovered(struct cm *cm, const char *job_id)
{
	char dir[PATH_MAX];
	struct job *j = job_find(cm, job_id);
	struct stat st;

	if (j == NULL || !j->recovered || j->cm_index != 0 ||
	    fs_jdir(j, dir, sizeof(dir)) < 0 || stat(dir, &st) < 0)
		return;
	log_warnx("cm store job=%s: its files' outcome log was not kept: "
	    "the job starts over", j->id);
	job_end(cm, j);
}

void
fileserv_free(struct job *j)
{
	struct fsrv *fs = j->fs;

	if (fs == NULL)
		return;
	for (int32_t r = 0; r < fs->nranks; r++) {
		for (uint64_t k = 0; k < fs->ranks[r].n; k++)
			free(fs->ranks[r].op[k].text);
		free(fs->ranks[r].op);
	}
	for (int i = 0; i < FS_NFD; i++)
		if (fs->fds[i].fd >= 0) {
			close(fs->fds[i].fd);
			free(fs->fds[i].path);
		}
	for (size_t i = 0; i < fs->ntouched; i++)
		free(fs->touched[i]);
	if (fs->man_fd >= 0)
		close(fs->man_fd);
	if (fs->data_fd >= 0)
		close(fs->data_fd);
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	free(fs->touched);
	free(fs->shared);
	free(fs->ranks);
	free(fs->cwd);
	free(fs);
	j->fs = NULL;
}

/* The job ended for good (JobEnd without `again`): its changes stay. */
void
fileserv_end(struct job *j)
{
	if (j->fs == NULL || j->fs->dir[0] == '\0')
		return;
	if (j->fs->man_fd >= 0) {
		close(j->fs->man_fd);
		j->fs->man_fd = -1;
	}
	fs_rmjournal(j->fs->dir);
}

/* ---------------- paths ---------------- */

/* FileErr of errno e. */
static uint32_t
fs_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return MPIV__FILE_ERR__FILE_ERR_NO_SUCH_FILE;
	case EEXIST:
		return MPIV__FILE_ERR__FILE_ERR_FILE_EXISTS;
	case EACCES:
	case EPERM:
	case EXDEV:	/* RESOLVE_BENEATH: outside --files */
	case ELOOP:
		return MPIV__FILE_ERR__FILE_ERR_ACCESS;
	case ENOSPC:
		return MPIV__FILE_ERR__FILE_ERR_NO_SPACE;
	case EDQUOT:
		return MPIV__FILE_ERR__FILE_ERR_QUOTA;
	case EROFS:
		return MPIV__FILE_ERR__FILE_ERR_READ_ONLY;
	case EISDIR:
	case ENAMETOOLONG:
	case EINVAL:
		return MPIV__FILE_ERR__FILE_ERR_BAD_FILE;
	default:
		return MPIV__FILE_ERR__FILE_ERR_IO;
	}
}

/*
 * The absolute path of `path` (relative ones from the job's cwd),
 * lexically cleaned ("//", ".", ".." folded). 0, or -1 when too long or
 * empty.
 */
static int
fs_abspath(const struct fsrv *fs, const char *path, char *out, size_t n)
{
	char tmp[PATH_MAX];
	size_t k = 0;
	int len;

	if (*path == '\0')
		return -1;
	if (*path == '/' || *fs->cwd == '\0')
		len = snprintf(tmp, sizeof(tmp), "%s", path);
	else
		len = snprintf(tmp, sizeof(tmp), "%s/%s", fs->cwd, path);
	if (len < 0 || (size_t)len >= sizeof(tmp) || n < 2)
		return -1;
	if (tmp[0] != '/') {
		/* relative to a CM without the job's cwd: its own */
		char cwd[PATH_MAX], t2[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return -1;
		len = snprintf(t2, sizeof(t2), "%s/%s", cwd, tmp);
		if (len < 0 || (size_t)len >= sizeof(t2))
			return -1;
		memcpy(tmp, t2, (size_t)len + 1);
	}
	for (char *p = tmp; *p != '\0';) {
		char *e;
		size_t l;

		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, '/');
		l = e != NULL ? (size_t)(e - p) : strlen(p);
		if (l == 1 && p[0] == '.') {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			while (k > 0 && out[k - 1] != '/')
				k--;
			if (k > 0)
				k--;
		} else {
			if (k + 1 + l >= n)
				return -1;
			out[k++] = '/';
			memcpy(out + k, p, l);
			k += l;
		}
		p += l;
	}
	if (k == 0)
		out[k++] = '/';
	out[k] = '\0';
	return 0;
}

/* The part of abs beneath --files DIR (NULL: outside it). */
static const char *
fs_beneath(const struct cm *cm, const char *abs)
{
	size_t l = strlen(cm->files_root);

	while (l > 1 && cm->files_root[l - 1] == '/')
		l--;
	if (strncmp(abs, cm->files_root, l) != 0 || abs[l] != '/')
		return NULL;
	return abs + l + 1;
}

/* open(2) of abs, confined beneath --files DIR when one is set. */
static int
fs_open(struct job *j, const char *abs, int flags, mode_t mode)
{
	struct fsrv *fs = j->fs;
	struct open_how how = { 0 };
	const char *rel;

	if (fs->root_fd < 0)
		return open(abs, flags | O_CLOEXEC, mode);
	if ((rel = fs_beneath(j->cm, abs)) == NULL) {
		errno = EACCES;
		return -1;
	}
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, fs->root_fd, *rel != '\0' ? rel : ".",
	    &how, sizeof(how));
}

/* unlink(2) of abs, confined the same way. */
static int
fs_unlink(struct job *j, const char *abs)
{
	char dir[PATH_MAX];
	const char *base;
	int dfd, rc, e;

	if (j->fs->root_fd < 0)
		return unlink(abs);
	base = strrchr(abs, '/');
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - abs), abs);
	if (*dir == '\0')
		strcpy(dir, "/");
	if ((dfd = fs_open(j, dir, O_PATH | O_DIRECTORY, 0)) < 0)
		return -1;
	rc = unlinkat(dfd, base + 1, 0);
	e = errno;
	close(dfd);
	errno = e;
	return rc;
}

/* Closes every cached descriptor of abs (deleted, or to reopen). */
static void
fs_forget_fds(struct fsrv *fs, const char *abs)
{
	for (int i = 0; i < FS_NFD; i++)
		if (fs->fds[i].fd >= 0 && strcmp(fs->fds[i].path, abs) == 0) {
			close(fs->fds[i].fd);
			free(fs->fds[i].path);
			fs->fds[i].fd = -1;
			fs->fds[i].path = NULL;
		}
}

/* A descriptor of abs open for acc (O_RDONLY, O_WRONLY; O_RDWR serves
   both), from the cache or opened now. -1 (errno). */
static int
fs_fd(struct job *j, const char *abs, int acc)
{
	struct fsrv *fs = j->fs;
	struct fs_fd *slot = &fs->fds[0];
	int fd;

	fs->clock++;
	for (int i = 0; i < FS_NFD; i++) {
		struct fs_fd *f = &fs->fds[i];
		if (f->fd >= 0 && strcmp(f->path, abs) == 0 &&
		    (f->acc == acc || f->acc == O_RDWR)) {
			f->used = fs->clock;
			return f->fd;
		}
		if (f->fd < 0 || (slot->fd >= 0 && f->used < slot->used))
			slot = f;
	}
	if ((fd = fs_open(j, abs, O_RDWR, 0)) < 0 &&
	    (fd = fs_open(j, abs, acc, 0)) < 0)
		return -1;
	if (slot->fd >= 0) {
		close(slot->fd);
		free(slot->path);
	}
	if ((slot->path = strdup(abs)) == NULL) {
		close(fd);
		slot->fd = -1;
		errno = ENOMEM;
		return -1;
	}
	slot->fd = fd;
	slot->acc = fcntl(fd, F_GETFL) & O_ACCMODE;
	slot->used = fs->clock;
	return fd;
}

/*
 * Before the job first changes abs: the manifest says so, with a copy of
 * the file if it exists. 0, or -1 (errno) when the change must not be
 * made (it could not be undone).
 */
static int
fs_touch(struct job *j, const char *abs)
{
	struct fsrv *fs = j->fs;
	char rec[PATH_MAX + 64], saved[PATH_MAX + 64];
	char **nt;
	int fd, len;

	for (size_t i = 0; i < fs->ntouched; i++)
		if (strcmp(fs->touched[i], abs) == 0)
			return 0;
	if (fs->dir[0] == '\0') {
		errno = EIO;
		return -1;
	}
	if (fs->man_fd < 0) {
		if (mkdir(fs->dir, 0700) < 0 && errno != EEXIST)
			return -1;
		snprintf(rec, sizeof(rec), "%s/%s", fs->dir, FS_MAN_NAME);
		if ((fs->man_fd = open(rec, O_WRONLY | O_CREAT | O_APPEND |
		    O_CLOEXEC, 0600)) < 0)
			return -1;
	}
	if (fs->ntouched == fs->touched_cap) {
		size_t cap = fs->touched_cap ? fs->touched_cap * 2 : 16;
		if ((nt = realloc(fs->touched, cap * sizeof(*nt))) == NULL)
			return -1;
		fs->touched = nt;
		fs->touched_cap = cap;
	}
	if ((fd = fs_open(j, abs, O_RDONLY, 0)) >= 0) {
		snprintf(saved, sizeof(saved), "%s/saved-%u", fs->dir,
		    fs->nsaved + 1);
		if (fs_copy(fd, saved) < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		struct stat st;
		if (fstat(fd, &st) == 0)
			(void)chmod(saved, st.st_mode & 07777);
		close(fd);
		fs->nsaved++;
		len = snprintf(rec, sizeof(rec), "S %u %s\n", fs->nsaved, abs);
	} else if (errno == ENOENT) {
		len = snprintf(rec, sizeof(rec), "C %s\n", abs);
	} else {
		return -1;
	}
	if (len < 0 || (size_t)len >= sizeof(rec) ||
	    write(fs->man_fd, rec, (size_t)len) != len)
		return -1;
	if (j->cm->store_fsync)
		(void)fdatasync(fs->man_fd);
	if ((fs->touched[fs->ntouched] = strdup(abs)) == NULL)
		return -1;
	fs->ntouched++;
	return 0;
}

/* ---------------- shared file pointers ---------------- */

/* The shared file pointer of op's open: a new one (0) if none. */
static struct fs_shared *
fs_shared_ptr(struct fsrv *fs, const Mpiv__FileOp *op)
{
	struct fs_shared *ns;

	for (size_t i = 0; i < fs->nshared; i++)
		if (fs->shared[i].key == op->key &&
		    fs->shared[i].key_rank == op->key_rank)
			return &fs->shared[i];
	if (fs->nshared == fs->shared_cap) {
		size_t cap = fs->shared_cap ? fs->shared_cap * 2 : 8;
		if ((ns = realloc(fs->shared, cap * sizeof(*ns))) == NULL)
			return NULL;
		fs->shared = ns;
		fs->shared_cap = cap;
	}
	ns = &fs->shared[fs->nshared++];
	ns->key = op->key;
	ns->key_rank = op->key_rank;
	ns->ptr = 0;
	return ns;
}

/* ---------------- the operations ---------------- */

struct fs_out {
	uint32_t err;
	char text[PATH_MAX + 128];
	uint64_t value;
	uint8_t *data;		/* READ */
	size_t len;
};

static void
fs_fail(struct fs_out *o, uint32_t err, const char *what, const char *path,
    int e)
{
	o->err = err;
	snprintf(o->text, sizeof(o->text), "%s %s: %s", what, path,
	    e != 0 ? strerror(e) : "refused");
}

static void
fs_do_open(struct job *j, const Mpiv__FileOp *op, const char *abs,
    struct fs_out *o)
{
	uint32_t acc = op->amode & (FS_MODE_RDONLY | FS_MODE_WRONLY |
	    FS_MODE_RDWR);
	struct stat st;
	int fd, flags;

	flags = acc == FS_MODE_RDONLY ? O_RDONLY : acc == FS_MODE_WRONLY ?
	    O_WRONLY : O_RDWR;
	if ((fd = fs_open(j, abs, flags, 0)) >= 0) {
		if ((op->amode & FS_MODE_CREATE) &&
		    (op->amode & FS_MODE_EXCL)) {
			close(fd);
			fs_fail(o, MPIV__FILE_ERR__FILE_ERR_FILE_EXISTS,
			    "open", abs, EEXIST);
			return;
		}
	} else if (errno == ENOENT && (op->amode & FS_MODE_CREATE)) {
		if (fs_touch(j, abs) < 0 || (fd = fs_open(j, abs, flags |
		    O_CREAT | O_EXCL, 0666)) < 0) {
			fs_fail(o, fs_errno(errno), "create", abs, errno);
			return;
		}
	} else {
		fs_fail(o, errno == EACCES && acc != FS_MODE_RDONLY ?
		    MPIV__FILE_ERR__FILE_ERR_ACCESS : fs_errno(errno), "open",
		    abs, errno);
		return;
	}
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			fs_fail(o, MPIV__FILE_ERR__FILE_ERR_BAD_FILE, "open",
			    abs, EISDIR);
			close(fd);
			return;
		}
		o->value = (uint64_t)st.st_size;
	}
	close(fd);
}

static void
fs_do_delete(struct job *j, const char *abs, bool missing_ok,
    struct fs_out *o)
{
	struct stat st;
	int fd;

	if ((fd = fs_open(j, abs, O_PATH, 0)) < 0) {
		if (!(missing_ok && errno == ENOENT))
			fs_fail(o, fs_errno(errno), "delete", abs, errno);
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		fs_fail(o, MPIV__FILE_ERR__FILE_ERR_BAD_FILE, "delete", abs,
		    EISDIR);
		return;
	}
	close(fd);
	fs_forget_fds(j->fs, abs);
	if (fs_touch(j, abs) < 0 || fs_unlink(j, abs) < 0) {
		if (!(missing_ok && errno == ENOENT))
			fs_fail(o, fs_errno(errno), "delete", abs, errno);
	}
}

/* READ and WRITE: the extents, checked. -1 with o->err set. */
static int
fs_extents(const Mpiv__FileOp *op, size_t paylen, bool write,
    uint64_t *total, struct fs_out *o)
{
	uint64_t sum = 0;

	if (op->n_extents % 2 != 0) {
		o->err = MPIV__FILE_ERR__FILE_ERR_IO;
		snprintf(o->text, sizeof(o->text), "an odd count of extent "
		    "numbers");
		return -1;
	}
	for (size_t i = 0; i < op->n_extents; i += 2) {
		uint64_t off = op->extents[i], len = op->extents[i + 1];
		if (off > (uint64_t)INT64_MAX || len > FS_MAX_DATA ||
		    off + len > (uint64_t)INT64_MAX || sum + len > FS_MAX_DATA) {
			o->err = MPIV__FILE_ERR__FILE_ERR_IO;
			snprintf(o->text, sizeof(o->text), "an extent out of "
			    "range (at most %u bytes an operation)",
			    FS_MAX_DATA);
			return -1;
		}
		sum += len;
	}
	if (write && sum != paylen) {
		o->err = MPIV__FILE_ERR__FILE_ERR_IO;
		snprintf(o->text, sizeof(o->text), "extents of %llu bytes "
		    "with %zu bytes of data", (unsigned long long)sum, paylen);
		return -1;
	}
	*total = sum;
	return 0;
}

static void
fs_do_read(struct job *j, const Mpiv__FileOp *op, const char *abs,
    struct fs_out *o)
{
	uint64_t total;
	size_t got = 0;
	int fd;

	if (fs_extents(op, 0, false, &total, o) < 0)
		return;
	if ((fd = fs_fd(j, abs, O_RDONLY)) < 0) {
		fs_fail(o, fs_errno(errno), "read", abs, errno);
		return;
	}
	if (total > 0 && (o->data = malloc((size_t)total)) == NULL) {
		fs_fail(o, MPIV__FILE_ERR__FILE_ERR_IO, "read", abs, ENOMEM);
		return;
	}
	for (size_t i = 0; i < op->n_extents; i += 2) {
		uint64_t off = op->extents[i], len = op->extents[i + 1];
		size_t have = 0;

		while (have < len) {
			ssize_t r = pread(fd, o->data + got + have,
			    (size_t)(len - have), (off_t)(off + have));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				fs_fail(o, fs_errno(errno), "read", abs, errno);
				return;
			}
			if (r == 0)
				break;
			have += (size_t)r;
		}
		got += have;
		if (have < len)
			break;		/* the end of the file */
	}
	o->len = got;
	o->value = got;
}

static void
fs_do_write(struct job *j, const Mpiv__FileOp *op, const char *abs,
    const uint8_t *data, size_t paylen, struct fs_out *o)
{
	uint64_t total;
	size_t done = 0;
	int fd;

	if (fs_extents(op, paylen, true, &total, o) < 0)
		return;
	if (fs_touch(j, abs) < 0 || (fd = fs_fd(j, abs, O_WRONLY)) < 0) {
		fs_fail(o, fs_errno(errno), "write", abs, errno);
		return;
	}
	for (size_t i = 0; i < op->n_extents; i += 2) {
		uint64_t off = op->extents[i], len = op->extents[i + 1];
		size_t have = 0;

		while (have < len) {
			ssize_t w = pwrite(fd, data + done + have,
			    (size_t)(len - have), (off_t)(off + have));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				fs_fail(o, fs_errno(w < 0 ? errno : ENOSPC),
				    "write", abs, w < 0 ? errno : ENOSPC);
				return;
			}
			have += (size_t)w;
		}
		done += have;
	}
	o->value = done;
}

static void
fs_do_size(struct job *j, const Mpiv__FileOp *op, const char *abs,
    struct fs_out *o)
{
	struct stat st;
	int fd, kind = op->kind;

	if (kind != MPIV__FILE_OP_KIND__FILE_OP_GET_SIZE &&
	    fs_touch(j, abs) < 0) {
		fs_fail(o, fs_errno(errno), "resize", abs, errno);
		return;
	}
	if ((fd = fs_fd(j, abs, kind == MPIV__FILE_OP_KIND__FILE_OP_GET_SIZE ?
	    O_RDONLY : O_WRONLY)) < 0 || fstat(fd, &st) < 0) {
		fs_fail(o, fs_errno(errno), "size of", abs, errno);
		return;
	}
	if (op->offset > (uint64_t)INT64_MAX) {
		fs_fail(o, MPIV__FILE_ERR__FILE_ERR_BAD_FILE, "resize", abs,
		    EFBIG);
		return;
	}
	if (kind == MPIV__FILE_OP_KIND__FILE_OP_SET_SIZE) {
		if (ftruncate(fd, (off_t)op->offset) < 0) {
			fs_fail(o, fs_errno(errno), "resize", abs, errno);
			return;
		}
		st.st_size = (off_t)op->offset;
	} else if (kind == MPIV__FILE_OP_KIND__FILE_OP_PREALLOCATE &&
	    (uint64_t)st.st_size < op->offset) {
		int e = posix_fallocate(fd, 0, (off_t)op->offset);
		if (e != 0 && ftruncate(fd, (off_t)op->offset) < 0) {
			fs_fail(o, fs_errno(e), "preallocate", abs, e);
			return;
		}
		st.st_size = (off_t)op->offset;
	}
	o->value = (uint64_t)st.st_size;
}

static void
fs_do_sync(struct job *j, const char *abs, struct fs_out *o)
{
	int fd;

	if ((fd = fs_fd(j, abs, O_RDONLY)) < 0 || fsync(fd) < 0)
		fs_fail(o, fs_errno(errno), "sync", abs, errno);
}

static void
fs_do_shared(struct job *j, const Mpiv__FileOp *op, struct fs_out *o)
{
	struct fs_shared *sp = fs_shared_ptr(j->fs, op);

	if (sp == NULL) {
		o->err = MPIV__FILE_ERR__FILE_ERR_IO;
		snprintf(o->text, sizeof(o->text), "out of memory");
		return;
	}
	o->value = sp->ptr;
	if (op->kind == MPIV__FILE_OP_KIND__FILE_OP_SHARED_SET)
		sp->ptr = op->offset;
	else
		sp->ptr += op->offset;
}

/* Carries out op (never seen before) into o. */
static void
fs_do(struct job *j, const Mpiv__FileOp *op, const uint8_t *data,
    size_t paylen, struct fs_out *o)
{
	char abs[PATH_MAX];

	if (op->kind == MPIV__FILE_OP_KIND__FILE_OP_SHARED_ADD ||
	    op->kind == MPIV__FILE_OP_KIND__FILE_OP_SHARED_SET) {
		fs_do_shared(j, op, o);
		return;
	}
	if (op->path == NULL || fs_abspath(j->fs, op->path, abs,
	    sizeof(abs)) < 0) {
		fs_fail(o, MPIV__FILE_ERR__FILE_ERR_BAD_FILE, "name",
		    op->path != NULL ? op->path : "", ENAMETOOLONG);
		return;
	}
	if (j->fs->root_fd >= 0 && fs_beneath(j->cm, abs) == NULL) {
		o->err = MPIV__FILE_ERR__FILE_ERR_ACCESS;
		snprintf(o->text, sizeof(o->text), "%s is outside the "
		    "directory this deployment serves files from (mpiv cm "
		    "--files %s)", abs, j->cm->files_root);
		return;
	}
	switch (op->kind) {
	case MPIV__FILE_OP_KIND__FILE_OP_OPEN:
		fs_do_open(j, op, abs, o);
		break;
	case MPIV__FILE_OP_KIND__FILE_OP_CLOSE:
		fs_forget_fds(j->fs, abs);
		if (op->amode & FS_MODE_DELETE_ON_CLOSE)
			fs_do_delete(j, abs, true, o);
		break;
	case MPIV__FILE_OP_KIND__FILE_OP_DELETE:
		fs_do_delete(j, abs, false, o);
		break;
	case MPIV__FILE_OP_KIND__FILE_OP_GET_SIZE:
	case MPIV__FILE_OP_KIND__FILE_OP_SET_SIZE:
	case MPIV__FILE_OP_KIND__FILE_OP_PREALLOCATE:
		fs_do_size(j, op, abs, o);
		break;
	case MPIV__FILE_OP_KIND__FILE_OP_READ:
		fs_do_read(j, op, abs, o);
		break;
	case MPIV__FILE_OP_KIND__FILE_OP_WRITE:
		fs_do_write(j, op, abs, data, paylen, o);
		break;
	case MPIV__FILE_OP_KIND__FILE_OP_SYNC:
		fs_do_sync(j, abs, o);
		break;
	default:
		o->err = MPIV__FILE_ERR__FILE_ERR_IO;
		snprintf(o->text, sizeof(o->text), "unknown file operation "
		    "%d", (int)op->kind);
		break;
	}
}

/* The unlinked file that keeps the bytes reads returned: in the
   journal's directory, else /var/tmp. -1 (errno). */
static int
fs_datafile(struct fsrv *fs)
{
	int fd;

	if (fs->dir[0] != '\0' && (mkdir(fs->dir, 0700) == 0 ||
	    errno == EEXIST) && (fd = open(fs->dir, O_TMPFILE | O_RDWR |
	    O_CLOEXEC, 0600)) >= 0)
		return fd;
	return open("/var/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

/* Keeps o as the outcome of op (the next of rank r). -1: out of memory
   or the data file failed (the answer is then an error). */
static int
fs_log(struct fsrv *fs, int32_t r, const Mpiv__FileOp *op,
    const struct fs_out *o)
{
	struct fs_rank *fr = &fs->ranks[r];
	struct fs_op *e;

	if (fr->n == fr->cap) {
		uint64_t cap = fr->cap ? fr->cap * 2 : 16;
		struct fs_op *n = realloc(fr->op, (size_t)cap * sizeof(*n));
		if (n == NULL)
			return -1;
		fr->op = n;
		fr->cap = cap;
	}
	e = &fr->op[fr->n];
	memset(e, 0, sizeof(*e));
	e->kind = (uint32_t)op->kind;
	e->err = o->err;
	e->value = o->value;
	if (o->err != 0 && (e->text = strdup(o->text)) == NULL)
		return -1;
	if (o->len > 0) {
		struct iovec v = { .iov_base = o->data, .iov_len = o->len };

		if ((fs->data_fd < 0 && (fs->data_fd = fs_datafile(fs)) < 0) ||
		    store_write_all(fs->data_fd, &v, 1, fs->data_end) < 0)
			goto fail;
		e->data_off = fs->data_end;
		fs->data_end += o->len;
	}
	fr->n++;
	return 0;
fail:
	free(e->text);
	e->text = NULL;
	return -1;
}

/* The logged outcome of op_no k of rank r into o (its bytes read back). */
static void
fs_replay(struct fsrv *fs, int32_t r, uint64_t k, struct fs_out *o)
{
	const struct fs_op *e = &fs->ranks[r].op[k - 1];

	o->err = e->err;
	o->value = e->value;
	if (e->text != NULL)
		snprintf(o->text, sizeof(o->text), "%s", e->text);
	if (e->kind == MPIV__FILE_OP_KIND__FILE_OP_READ && e->err == 0 &&
	    e->value > 0) {
		if ((o->data = malloc((size_t)e->value)) == NULL ||
		    store_pread(fs->data_fd, o->data, (size_t)e->value,
		    e->data_off) < 0)
			goto fail;
		o->len = (size_t)e->value;
	}
	return;
fail:
	free(o->data);
	o->data = NULL;
	o->len = 0;
	o->value = 0;
	o->err = MPIV__FILE_ERR__FILE_ERR_IO;
	snprintf(o->text, sizeof(o->text), "the logged bytes of a read "
	    "could not be read back");
}

/*
 * A rank's FileOp with its payload (`data`, `paylen` bytes; the caller
 * frees it): carried out or answered from the log, then FileRes.
 */
void
fileserv_op(struct session *s, const Mpiv__FileOp *op, const uint8_t *data,
    size_t paylen)
{
	Mpiv__FileRes res = MPIV__FILE_RES__INIT;
	struct job *j = s->job;
	struct fs_out *o;
	struct fs_rank *fr;

	if ((o = calloc(1, sizeof(*o))) == NULL) {
		session_error(s, "out of memory for a file operation");
		return;
	}
	if (j == NULL || j->fs == NULL || s->rank < 0 ||
	    s->rank >= j->fs->nranks) {
		o->err = MPIV__FILE_ERR__FILE_ERR_OFF;
		snprintf(o->text, sizeof(o->text), "%s",
		    j != NULL && j->cm_index != 0 ? "file operations go to "
		    "the job's first Channel Memory" : "this Channel Memory "
		    "serves no files");
		goto answer;
	}
	if (j->cm->files_root == NULL) {
		o->err = MPIV__FILE_ERR__FILE_ERR_OFF;
		snprintf(o->text, sizeof(o->text), "this deployment's "
		    "Channel Memory serves no files (mpiv cm --files)");
		goto answer;
	}
	fr = &j->fs->ranks[s->rank];
	if (op->op_no == 0 || op->op_no > fr->n + 1) {
		o->err = MPIV__FILE_ERR__FILE_ERR_DIVERGED;
		snprintf(o->text, sizeof(o->text), "file operation %llu of "
		    "rank %d arrived after %llu", (unsigned long long)op->op_no,
		    s->rank, (unsigned long long)fr->n);
		goto answer;
	}
	if (op->op_no <= fr->n) {
		/* a re-executed rank: what its first incarnation saw */
		if (fr->op[op->op_no - 1].kind != (uint32_t)op->kind) {
			o->err = MPIV__FILE_ERR__FILE_ERR_DIVERGED;
			snprintf(o->text, sizeof(o->text), "a re-execution "
			    "diverged: file operation %llu of rank %d was of "
			    "another kind", (unsigned long long)op->op_no,
			    s->rank);
		} else {
			fs_replay(j->fs, s->rank, op->op_no, o);
		}
		goto answer;
	}
	srvfault_point("cm-file-op");
	fs_do(j, op, data, paylen, o);
	if (fs_log(j->fs, s->rank, op, o) < 0) {
		/* carried out but not logged: a re-execution would not see
		   it again, so the rank must not go on */
		session_error(s, "cannot log a file operation's outcome");
		free(o->data);
		free(o);
		return;
	}
	srvfault_point("cm-file-logged");
answer:
	res.op_no = op->op_no;
	res.error = (Mpiv__FileErr)o->err;
	res.text = o->text;
	res.value = o->value;
	if (o->err != 0 && o->err != MPIV__FILE_ERR__FILE_ERR_DIVERGED)
		log_debug("cm file op job=%s rank=%d op=%llu error=\"%s\"",
		    j != NULL ? j->id : "-", s->rank,
		    (unsigned long long)op->op_no, o->text);
	(void)conn_send(s->c, MPIV__MSG_TYPE__MSG_FILE_RES, &res.base,
	    o->data, (uint32_t)o->len);
	free(o->data);
	free(o);
}
