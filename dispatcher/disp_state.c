/*
 * disp_state.c: `--state-dir DIR`, what the dispatcher keeps across its
 * own restart. Only the job counter: job ids then never repeat, so a
 * checkpoint server's images (stored by job id and rank) and logs of an
 * earlier job are never taken for a new one's. Running jobs do NOT
 * survive a dispatcher restart (README, "Dispatcher restart"): their
 * clients end with "dispatcher link lost", node agents kill the ranks
 * and register again, CMs drop the jobs' logs, and new jobs run as
 * usual. The file is replaced atomically (write, fsync, rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disp_priv.h"
#include "log.h"

#define DSTATE_FILE	"next_job"

/* Reads DIR/next_job (absent: a fresh state). 0, or -1 (logged). */
int
dstate_load(struct disp *d)
{
	char path[PATH_MAX], buf[32], *end;
	unsigned long v;
	ssize_t n;
	int fd;

	if (d->state_dir == NULL)
		return 0;
	if (mkdir(d->state_dir, 0700) < 0 && errno != EEXIST) {
		log_warn("dispatcher cannot create state dir %s", d->state_dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", d->state_dir, DSTATE_FILE);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return dstate_save(d);
		log_warn("dispatcher cannot read %s", path);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 10);
	/* dstate_save always ends it with a newline: a file cut short (the
	   disk, an operator) could have lost digits, and a smaller counter
	   would hand out job ids again */
	if (n <= 0 || errno != 0 || *end != '\n' || end[1] != '\0' ||
	    buf[0] < '0' || buf[0] > '9' || v < 1 || v > 4000000000ul) {
		log_warnx("dispatcher state file %s is corrupt or cut short "
		    "(\"%.20s\"): not starting, so that no job id is used "
		    "twice; check it, or remove it to count from 1 again",
		    path, buf);
		return -1;
	}
	d->next_job = (unsigned)v;
	log_info("dispatcher state loaded dir=%s next_job=%u", d->state_dir,
	    d->next_job);
	return 0;
}

/* Writes DIR/next_job atomically. 0, or -1 (logged). */
int
dstate_save(struct disp *d)
{
	char path[PATH_MAX], tmp[PATH_MAX], buf[32];
	int fd, len;

	if (d->state_dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", d->state_dir, DSTATE_FILE);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", d->state_dir, DSTATE_FILE);
	len = snprintf(buf, sizeof(buf), "%u\n", d->next_job);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0)
		goto fail;
	if (write(fd, buf, (size_t)len) != len || fsync(fd) < 0) {
		close(fd);
		goto fail;
	}
	close(fd);
	if (rename(tmp, path) < 0)
		goto fail;
	return 0;
fail:
	log_warn("dispatcher cannot write %s", path);
	return -1;
}
