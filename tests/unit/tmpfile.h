/*
 * tmpfile.h: for unit tests of code that writes a file: an unlinked
 * temporary file opened O_RDWR (in $TMPDIR, else /tmp; exits 2 when it
 * cannot be made), its size, and the blocks it holds.
 */
#ifndef MPIV_TEST_TMPFILE_H
#define MPIV_TEST_TMPFILE_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int
tmpfile_fd(const char *name)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s.XXXXXX",
	    dir != NULL && *dir != '\0' ? dir : "/tmp", name);
	if ((fd = mkstemp(path)) == -1) {
		perror("mkstemp");
		exit(2);
	}
	unlink(path);
	return fd;
}

static off_t
file_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

/* 512-byte blocks the file holds (not its size), -1 on error. */
static blkcnt_t
file_blocks(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_blocks : -1;
}

#endif
