/*
 * srvfault.c: named fault points in the servers, for the tests of their
 * durability windows (the library's are libmpi-lite/fault.c).
 *
 *   MPIV_SERVER_FAULT=NAME:N[,NAME:N...]
 *
 * The N-th time (N >= 1) this process reaches the point NAME it kills
 * itself with SIGKILL, as a crash or an operator would. With
 * MPIV_SERVER_FAULT_DIR set, each entry fires once per directory, not
 * once per process: the first process to reach it creates DIR/NAME
 * (O_EXCL) and dies, the ones started after it (a CM started again on
 * its store, with the same environment) pass. A malformed entry or an
 * unknown name is said once on stderr and ignored; unset, a point costs
 * one branch.
 *
 * The points:
 *   cm-stored     a CM wrote the records of one read of input (the store's
 *                 batch hook), before that read's answers leave
 *   cm-payload    a CM wrote a message's payload to its store
 *   cm-flush      a CM got a Flush, before its FlushAck
 *   cm-trim       a CM stored a durable checkpoint's trim, before it
 *                 frees (and punches out) the payloads
 *   cm-recovered  a CM rebuilt its jobs from its store, before it listens
 *                 (a kill during recovery)
 *   cm-file-op    a job's first CM is about to carry out a rank's file
 *                 operation (channel-memory/fileserv.c)
 *   cm-file-logged  it carried one out and logged its outcome, before the
 *                 answer leaves
 *   cs-delta      a CS received a whole incremental image, before it
 *                 checks and commits it
 *   cs-gc         a CS deleted an image file while pruning, before its
 *                 meta and sum
 *   cs-stored     a CS renamed an image into place, before it tells the
 *                 node and the home CM
 *   node-out-sync a node agent got a rank's "out-sync" (MPI_Finalize of a
 *                 direct rank): it closes the rank's control pipes, stops
 *                 (reading nothing, reaping nothing) for a second and
 *                 dies, as an agent killed under a rank that still runs
 *                 for a moment would look to that rank
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srvfault.h"

#define SRVFAULT_MAX 16

static const char *const srvfault_names[] = {
	"cm-stored", "cm-payload", "cm-flush", "cm-trim", "cm-recovered",
	"cs-stored", "cs-delta", "cs-gc", "node-out-sync", "cm-file-op",
	"cm-file-logged",
};

static struct {
	char name[32];
	unsigned long at, hits;
	bool done;
} srvfault[SRVFAULT_MAX];
static int srvfault_n = -1;	/* -1: not parsed yet */

static bool
srvfault_known(const char *name)
{
	for (size_t i = 0; i < sizeof(srvfault_names) /
	    sizeof(srvfault_names[0]); i++)
		if (strcmp(name, srvfault_names[i]) == 0)
			return true;
	return false;
}

static void
srvfault_parse(void)
{
	const char *env = getenv("MPIV_SERVER_FAULT");
	char *copy, *tok, *save = NULL;

	srvfault_n = 0;
	if (env == NULL || *env == '\0' || (copy = strdup(env)) == NULL)
		return;
	for (tok = strtok_r(copy, ",", &save); tok != NULL &&
	    srvfault_n < SRVFAULT_MAX; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':'), *end;
		unsigned long n;

		if (colon == NULL)
			goto bad;
		*colon = '\0';
		errno = 0;
		n = strtoul(colon + 1, &end, 10);
		if (errno != 0 || *end != '\0' || n == 0 ||
		    !srvfault_known(tok) || strlen(tok) >= 32)
			goto bad;
		snprintf(srvfault[srvfault_n].name, 32, "%s", tok);
		srvfault[srvfault_n].at = n;
		srvfault_n++;
		continue;
bad:
		fprintf(stderr, "mpiv: MPIV_SERVER_FAULT: ignoring \"%s\" "
		    "(want NAME:N, N >= 1, NAME one of", tok);
		for (size_t i = 0; i < sizeof(srvfault_names) /
		    sizeof(srvfault_names[0]); i++)
			fprintf(stderr, " %s", srvfault_names[i]);
		fprintf(stderr, ")\n");
	}
	free(copy);
}

/* Dies when this point's entry is due (and, with a directory, not yet
   fired by another process). */
void
srvfault_point(const char *name)
{
	if (srvfault_due(name)) {
		kill(getpid(), SIGKILL);
		_exit(137);
	}
}

bool
srvfault_due(const char *name)
{
	const char *dir;

	if (srvfault_n == 0)
		return false;
	if (srvfault_n < 0)
		srvfault_parse();
	for (int i = 0; i < srvfault_n; i++) {
		char path[4200];
		int fd;

		if (srvfault[i].done || strcmp(srvfault[i].name, name) != 0 ||
		    ++srvfault[i].hits != srvfault[i].at)
			continue;
		srvfault[i].done = true;
		if ((dir = getenv("MPIV_SERVER_FAULT_DIR")) != NULL &&
		    *dir != '\0') {
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL,
			    0600)) < 0)
				continue;	/* fired by an earlier process */
			close(fd);
		}
		return true;
	}
	return false;
}
