/*
 * fault.c: named fault points for the fault-injection tests (in the
 * spirit of CRIU_FAULT).
 *
 *   MPIV_FAULT=NAME:N[:RANK[:INC]][,NAME:N[:RANK[:INC]]...]
 *
 * The N-th time (N >= 1) this process reaches the point NAME, if its world
 * rank is RANK and its incarnation is INC, it kills itself with SIGKILL,
 * exactly as an external kill would. RANK defaults to any rank, INC to 1
 * (the first launch), so a restarted rank does not die again at the same
 * place unless asked to; "*" (or an empty field) means any for both. The
 * process reads its rank and incarnation from MPIV_RANK and
 * MPIV_INCARNATION (docs/CONTRACTS.md). Hits are counted per name in
 * each process (each incarnation counts from 0 again).
 *
 * If MPIV_FAULT_LOG names a file, a line
 *   "fault NAME:N rank R inc I pid P"
 * is appended to it just before the kill (tests use it to check that the
 * kill happened where they asked; nothing is printed on stdout/stderr,
 * since those are compared with a failure-free run).
 *
 * The points (mpiv_fault_point("NAME") calls in the library):
 *
 *   send          before a Send frame is written (the message has not left)
 *   send-partial  after part of a large Send payload was written
 *   post          after a RecvPost was written to the home CM
 *   deliver       after a Deliver header was read, before its payload
 *   nd            after a non-deterministic outcome (Test*, Wait{any,some},
 *                 Iprobe ...) was decided, before it is recorded
 *   coll          entering a collective operation
 *   nbc           non-blocking collectives' steps decided and recorded
 *                 (not yet sent), before they are taken
 *   finalize      entering MPI_Finalize
 *   bye           direct jobs: in MPI_Finalize, every peer's DBye came,
 *                 the commit is not stored yet
 *   committed     direct jobs: MPI_Finalize's commit is stored at the
 *                 home CM, the wait for the end of the job not begun
 *   returned      direct jobs: in the program's process forked at the
 *                 end of MPI_Finalize (dp_fin.c), before it returns; the
 *                 rank's process keeps the log and waits for it
 *   closed        direct jobs: the first CM said every rank finished
 *                 (FinGo), the rank has not left yet
 *   ckpt-before-fork  checkpoint: the mark was sent, the clone not forked
 *   ckpt-after-fork   checkpoint: the parent, once the clone exists and
 *                 the node was told (ckpt-clone)
 *   file          an MPI-IO operation was sent to the job's first CM, its
 *                 answer not read yet (libmpi-lite/file_op.c)
 *   rma           a target decided and recorded a passive-target service
 *                 (not yet sent), before it applies the message and
 *                 answers (libmpi-lite/win_passive.c)
 *   restore-woken a clone restored from a checkpoint, once it knows its
 *                 new incarnation, before it reconnects (MPIV_FAULT is
 *                 read again for that incarnation)
 *
 * A malformed entry or an unknown point name is reported once on stderr
 * ("mpiv: MPIV_FAULT: ...") and ignored. The variable is parsed on the
 * first call; when it is unset every later call costs one branch.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl.h"

#define FAULT_MAX	16

static const char *const fault_names[] = {
	"send", "send-partial", "post", "deliver", "nd", "coll", "finalize",
	"ckpt-before-fork", "ckpt-after-fork", "restore-woken", "committed",
	"bye", "closed", "returned", "nbc", "nbc-wait", "file", "rma",
};

struct fault_entry {
	char name[24];
	unsigned long n;	/* fire at this hit */
	unsigned long hits;
};

enum { FAULT_UNPARSED = 0, FAULT_OFF, FAULT_ON };

static int fault_mode;		/* FAULT_* */
static int fault_count;
static struct fault_entry fault_tab[FAULT_MAX];
static long fault_rank = -1, fault_inc = 1;	/* this process */

static int
fault_known(const char *name)
{
	for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++)
		if (strcmp(fault_names[i], name) == 0)
			return 1;
	return 0;
}

/* "*" or "" = any (-1); else a decimal >= lo. 0 ok, -1 bad. */
static int
fault_num(const char *s, long lo, long *out)
{
	char *end;
	long v;

	if (*s == '\0' || strcmp(s, "*") == 0) {
		*out = -1;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo)
		return -1;
	*out = v;
	return 0;
}

static void
fault_warn(const char *entry, const char *why)
{
	fprintf(stderr, "mpiv: MPIV_FAULT: ignoring '%s': %s\n", entry, why);
}

/* Parses one "NAME:N[:RANK[:INC]]" (modified in place); adds it to the
   table if it applies to this process. */
static void
fault_parse_one(char *entry)
{
	char copy[128];
	char *f[5];
	int nf = 0;
	long n, rank = -1, inc = 1;
	char *p = entry;

	snprintf(copy, sizeof copy, "%s", entry);
	while (nf < 5) {
		f[nf++] = p;
		p = strchr(p, ':');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	if (p != NULL || nf < 2 || nf > 4) {
		fault_warn(copy, "want NAME:N[:RANK[:INC]]");
		return;
	}
	if (!fault_known(f[0])) {
		fault_warn(copy, "unknown fault point");
		return;
	}
	if (fault_num(f[1], 1, &n) != 0 || n < 1) {
		fault_warn(copy, "N must be a number >= 1");
		return;
	}
	if (nf > 2 && fault_num(f[2], 0, &rank) != 0) {
		fault_warn(copy, "RANK must be a number >= 0 or *");
		return;
	}
	if (nf > 3 && fault_num(f[3], 1, &inc) != 0) {
		fault_warn(copy, "INC must be a number >= 1 or *");
		return;
	}
	if (rank >= 0 && rank != fault_rank)
		return;
	if (inc >= 0 && inc != fault_inc)
		return;
	if (fault_count == FAULT_MAX) {
		fault_warn(copy, "too many entries");
		return;
	}
	snprintf(fault_tab[fault_count].name, sizeof fault_tab[0].name, "%s", f[0]);
	fault_tab[fault_count].n = (unsigned long)n;
	fault_tab[fault_count].hits = 0;
	fault_count++;
}

static void
fault_parse(void)
{
	const char *spec = getenv("MPIV_FAULT");
	const char *s;
	char *buf, *tok, *save;
	long v;

	fault_count = 0;
	fault_mode = FAULT_OFF;
	if (spec == NULL || *spec == '\0')
		return;
	fault_rank = -1;
	fault_inc = 1;
	if ((s = getenv("MPIV_RANK")) != NULL && fault_num(s, 0, &v) == 0)
		fault_rank = v;
	if ((s = getenv("MPIV_INCARNATION")) != NULL && fault_num(s, 1, &v) == 0)
		fault_inc = v;
	if ((buf = strdup(spec)) == NULL)
		return;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save))
		fault_parse_one(tok);
	free(buf);
	if (fault_count > 0)
		fault_mode = FAULT_ON;
}

static void __attribute__((noreturn))
fault_fire(const struct fault_entry *e)
{
	const char *log = getenv("MPIV_FAULT_LOG");

	if (log != NULL && *log != '\0') {
		char line[160];
		int fd, len;

		len = snprintf(line, sizeof line, "fault %s:%lu rank %ld inc %ld pid %ld\n",
		    e->name, e->n, fault_rank, fault_inc, (long)getpid());
		fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			if (len > 0 && write(fd, line, (size_t)len) < 0) {
				/* nothing to do: we are about to die anyway */
			}
			close(fd);
		}
	}
	raise(SIGKILL);
	_exit(137);		/* not reached */
}

void
mpiv_fault_point(const char *name)
{
	if (__builtin_expect(fault_mode == FAULT_OFF, 1))
		return;
	if (fault_mode == FAULT_UNPARSED) {
		fault_parse();
		if (fault_mode != FAULT_ON)
			return;
	}
	for (int i = 0; i < fault_count; i++) {
		struct fault_entry *e = &fault_tab[i];
		if (strcmp(e->name, name) != 0)
			continue;
		if (__atomic_add_fetch(&e->hits, 1, __ATOMIC_RELAXED) == e->n)
			fault_fire(e);
	}
}

/* Forget the parsed state so the next call reads the environment again
   (tests; a clone restored from a checkpoint with a new incarnation). */
static void
fault_reset(void)
{
	fault_mode = FAULT_UNPARSED;
	fault_count = 0;
}

void mpiv_fault_reset(void);

void
mpiv_fault_reset(void)
{
	fault_reset();
}
