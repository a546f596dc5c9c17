/*
 * dp_spill.c: the file the direct protocol's send log spills to past
 * MPIV_SENDLOG_MEM (sblog.c writes it; docs/DIRECT.md, "The sender's
 * payload log").
 *
 * One file per rank, made by mkstemp in MPIV_SENDLOG_DIR (else $TMPDIR,
 * else /var/tmp) and unlinked at once: nothing is left behind however
 * the rank ends, and CRIU carries a deleted file in the image of a
 * checkpoint's clone (its data, not its holes; node-agent/criu.c raises
 * --ghost-limit for it) and creates it again at a restore, on whatever
 * node (in the same directory, or the nearest one above it that
 * exists), so a restored rank has the spilled part of its log too.
 * Made the first time the log outgrows MPIV_SENDLOG_MEM (sblog's
 * spill_open), so that a rank killed while it starts, between making
 * the file and unlinking it, leaves no file behind unless it spills (a
 * test of killed starts found one when it was made at MPI_Init).
 * MPIV_SENDLOG_DIR=off: no file, the log stays in
 * memory (bounded by MPIV_SENDLOG_MAX).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "direct.h"

/* One line on stderr: the rank goes on without spilling. */
static void
dp_spill_warn(const char *dir, int err)
{
	char line[PATH_MAX + 200];
	int n;

	n = snprintf(line, sizeof(line), "mpiv: rank %d: cannot spill the "
	    "send log to %s: %s; it stays in memory (MPIV_SENDLOG_MAX bounds "
	    "it)\n", tp_rank, dir, strerror(err));
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	if (write(2, line, (size_t)n) < 0) {
		/* nothing to do */
	}
}

int
dp_spill_open(void)
{
	const char *dir = getenv("MPIV_SENDLOG_DIR");
	char path[PATH_MAX];
	int fd, n, e;

	if (dir != NULL && strcmp(dir, "off") == 0)
		return -1;
	if (dir == NULL || *dir == '\0')
		dir = getenv("TMPDIR");
	if (dir == NULL || *dir == '\0')
		dir = "/var/tmp";
	n = snprintf(path, sizeof(path), "%s/mpiv-sendlog-%d.XXXXXX", dir,
	    tp_rank);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		dp_spill_warn(dir, ENAMETOOLONG);
		return -1;
	}
	if ((fd = mkostemp(path, O_CLOEXEC)) == -1) {
		dp_spill_warn(dir, errno);
		return -1;
	}
	if (unlink(path) == -1) {
		e = errno;
		close(fd);
		dp_spill_warn(dir, e);
		return -1;
	}
	dp_debug("rank %d: the send log spills to %s (unlinked)", tp_rank,
	    path);
	return fd;
}
