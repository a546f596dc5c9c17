/*
 * run_input.c: what a job takes from `mpiv run` besides its command
 * line: its stdin (--stdin) and environment (-x, --env), as mpirun users
 * expect (docs/ENVIRONMENT.md, "Standard input" and "Environment").
 *
 * stdin is read to its end before the job is submitted and travels with
 * the submission: a rank executed again from the start, or restored from
 * a checkpoint on another node, must read the same bytes from the same
 * offset as its first execution, so the ranks read a file of it, never a
 * stream that is gone once read.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "run_priv.h"

#define RUN_STDIN_HINT_MS 5000	/* no end of stdin yet: say why we wait */

/* A variable name as a shell takes it: [A-Za-z_][A-Za-z0-9_]*. */
static bool
run_env_name_ok(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' &&
		    s[i] <= '9')))
			return false;
	return true;
}

/*
 * -x VAR (VAR's value here), -x VAR=VALUE and --env VAR=VALUE (opt says
 * which was given, for messages). Adds "VAR=VALUE" to the job's
 * environment; a VAR not set here is not forwarded (one line says so, as
 * Open MPI forwards nothing then). 0, or -1 after printing why (usage).
 */
int
run_env_add(struct run *r, const char *opt, const char *arg)
{
	const char *eq = strchr(arg, '='), *val;
	size_t nlen = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	char **more, *kv;

	if (!run_env_name_ok(arg, nlen)) {
		fprintf(stderr, "mpiv run: bad %s \"%s\" (want NAME or "
		    "NAME=VALUE, NAME of letters, digits and _)\n", opt, arg);
		return -1;
	}
	if (eq == NULL && strcmp(opt, "--env") == 0) {
		fprintf(stderr, "mpiv run: bad --env \"%s\" (want NAME=VALUE; "
		    "-x NAME forwards NAME's value)\n", arg);
		return -1;
	}
	if (nlen == 13 && strncmp(arg, "MPIV_PROTOCOL", 13) == 0) {
		fprintf(stderr, "mpiv run: %s MPIV_PROTOCOL: the protocol is "
		    "chosen with --protocol\n", opt);
		return -1;
	}
	if (eq == NULL) {
		if ((val = getenv(arg)) == NULL) {
			fprintf(stderr, "mpiv: -x %s: %s is not set here, not "
			    "forwarded\n", arg, arg);
			return 0;
		}
		if ((kv = malloc(nlen + strlen(val) + 2)) != NULL)
			sprintf(kv, "%s=%s", arg, val);
	} else {
		kv = strdup(arg);
	}
	if (kv == NULL || (more = realloc(r->env, (r->nenv + 1) *
	    sizeof(*more))) == NULL) {
		free(kv);
		fprintf(stderr, "mpiv: out of memory\n");
		return -1;
	}
	r->env = more;
	r->env[r->nenv++] = kv;
	return 0;
}

/* --stdin RANK|all|none. 0, or -1 (bad value). The rank is checked
   against -n once every option is read (run_stdin_check). */
int
run_stdin_parse(struct run *r, const char *arg)
{
	char *end;
	long v;

	r->stdin_set = true;
	if (strcmp(arg, "all") == 0) {
		r->stdin_rank = -1;
		return 0;
	}
	if (strcmp(arg, "none") == 0) {
		r->stdin_rank = -2;
		return 0;
	}
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < 0 || v > 65535)
		return -1;
	r->stdin_rank = (int)v;
	return 0;
}

int
run_stdin_check(const struct run *r)
{
	if (r->stdin_rank >= r->nranks) {
		fprintf(stderr, "mpiv run: --stdin %d: the job has %d rank%s "
		    "(0..%d)\n", r->stdin_rank, r->nranks,
		    r->nranks == 1 ? "" : "s", r->nranks - 1);
		return -1;
	}
	return 0;
}

/*
 * Reads our stdin to its end into r->in (at most RUN_STDIN_MAX bytes)
 * when a rank is to read it: --stdin none, a closed stdin, or a terminal
 * without --stdin give none. A pipe that stays open without data for a
 * while gets one line saying what we wait for. 0, or -1 with the reason
 * printed.
 */
int
run_stdin_read(struct run *r)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	uint8_t sum[AUTH_HASH_LEN];
	bool hinted = false;
	char who[32];
	size_t cap = 0;
	ssize_t n;

	if (r->stdin_rank == -2 || fcntl(0, F_GETFD) < 0)
		return 0;
	if (r->stdin_rank < 0)
		snprintf(who, sizeof(who), "every rank");
	else
		snprintf(who, sizeof(who), "rank %d", r->stdin_rank);
	if (isatty(0)) {
		if (!r->stdin_set)
			return 0;	/* a terminal: only when asked */
		fprintf(stderr, "mpiv: reading stdin for %s until end of "
		    "file (Ctrl-D)\n", who);
		hinted = true;
	}
	for (;;) {
		if (!hinted) {
			int k = poll(&pfd, 1, RUN_STDIN_HINT_MS);

			if (k < 0 && errno == EINTR)
				continue;
			if (k == 0) {
				fprintf(stderr, "mpiv: waiting for the end of "
				    "stdin to give it to %s (--stdin none if "
				    "the program does not read it)\n", who);
				hinted = true;
				continue;
			}
		}
		if (r->in_len == cap) {
			uint8_t *more;

			if (cap == RUN_STDIN_MAX + 1)
				break;
			cap = cap == 0 ? 65536 : cap * 2;
			if (cap > RUN_STDIN_MAX + 1)
				cap = RUN_STDIN_MAX + 1;
			if ((more = realloc(r->in, cap)) == NULL) {
				fprintf(stderr, "mpiv: out of memory reading "
				    "stdin\n");
				return -1;
			}
			r->in = more;
		}
		n = read(0, r->in + r->in_len, cap - r->in_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			(void)poll(&pfd, 1, 1000);
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "mpiv: cannot read stdin: %s\n",
			    strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		r->in_len += (size_t)n;
	}
	if (r->in_len > RUN_STDIN_MAX) {
		fprintf(stderr, "mpiv: stdin is over %d MiB, more than a job "
		    "takes: give the program a file to read instead (or "
		    "--stdin none)\n", (int)(RUN_STDIN_MAX >> 20));
		return -1;
	}
	if (r->in_len > 0) {
		auth_sha256(r->in, r->in_len, sum);
		auth_hex(sum, sizeof(sum), r->in_hash);
		log_info("run stdin bytes=%zu hash=%.16s", r->in_len,
		    r->in_hash);
	}
	return 0;
}
