/*
 * listen_line.h: for unit tests that start a real daemon in a forked
 * child: reads its "listening on ADDR" line from fd (within 5 s per
 * byte) and copies ADDR. 0, or -1 with what was read on stderr.
 */
#ifndef MPIV_TEST_LISTEN_LINE_H
#define MPIV_TEST_LISTEN_LINE_H

#include <poll.h>
#include <stdio.h>
#include <unistd.h>

static int
listen_line_read(int fd, char *addr, size_t addrlen)
{
	char line[256], fmt[32];
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	size_t n = 0;

	while (n < sizeof(line) - 1) {
		if (poll(&pf, 1, 5000) <= 0 || read(fd, line + n, 1) != 1)
			break;
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	snprintf(fmt, sizeof(fmt), "listening on %%%zus", addrlen - 1);
	if (sscanf(line, fmt, addr) != 1) {
		fprintf(stderr, "the daemon did not say where it listens: "
		    "\"%s\"\n", line);
		return -1;
	}
	return 0;
}

#endif
