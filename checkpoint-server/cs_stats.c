/*
 * cs_stats.c: what a job's images take in the store, for the
 * dispatcher's StoreStatsReq (sampled a few times a second while the job
 * runs: the timeline's store panel, docs/EXPERIMENTS.md). Counted from
 * the files themselves, so it is right after a crash and a recovery too:
 * every committed ckpt-K.img of every rank of the job (temp files of
 * uploads in flight are not stored yet). A job has a directory per rank
 * and --keep images in each, so a scan is a few stat calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cs_priv.h"
#include "frame.h"
#include "log.h"

/* Whether name is ckpt-K.img. */
static bool
cs_stats_is_image(const char *name)
{
	size_t n = strlen(name);

	return n > 9 && strncmp(name, "ckpt-", 5) == 0 &&
	    strcmp(name + n - 4, ".img") == 0;
}

/* Adds the images of the rank directory rdfd (closed here). */
static void
cs_stats_rank(int rdfd, uint64_t *images, uint64_t *bytes)
{
	DIR *d = fdopendir(rdfd);
	struct dirent *de;
	struct stat st;

	if (d == NULL) {
		close(rdfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!cs_stats_is_image(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		(*images)++;
		*bytes += (uint64_t)st.st_size;
	}
	closedir(d);
}

/*
 * The images of job (a checked name) and their bytes; a job with no
 * directory has none. 0, or -1 when the store cannot be read.
 */
int
cs_stats_job(struct cs *cs, const char *job, uint64_t *images,
    uint64_t *bytes)
{
	struct dirent *de;
	DIR *d;
	int jfd, rfd;

	*images = *bytes = 0;
	if ((jfd = openat(cs->store_fd, job, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -1;
	if ((d = fdopendir(jfd)) == NULL) {
		close(jfd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		rfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC | O_NOFOLLOW);
		if (rfd >= 0)
			cs_stats_rank(rfd, images, bytes);
	}
	closedir(d);
	return 0;
}

/* StoreStatsReq from the dispatcher: StoreStats back (zeros if unknown). */
void
cs_stats_answer(struct cs *cs, struct conn *c, const Mpiv__StoreStatsReq *rq)
{
	Mpiv__StoreStats ss = MPIV__STORE_STATS__INIT;
	uint64_t images = 0, bytes = 0;

	ss.job_id = rq->job_id;
	if (cs_store_name_ok(rq->job_id) &&
	    cs_stats_job(cs, rq->job_id, &images, &bytes) < 0)
		log_warn("cs stats job=%s", rq->job_id);
	ss.images = images;
	ss.bytes = bytes;
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_STORE_STATS, &ss.base, NULL, 0);
}
