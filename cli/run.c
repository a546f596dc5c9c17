/*
 * run.c: `mpiv run`, the front end. Parses the mpirun-like command line,
 * starts an embedded deployment unless --dispatcher names one
 * (run_deploy.c), submits the job as a client, prints the ranks' output,
 * reports the failure reason in one line, writes --report, tears the
 * deployment down and exits with the job's code (docs/CONTRACTS.md).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../node-agent/criu.h"
#include "daemon.h"
#include "front.h"
#include "json.h"
#include "log.h"
#include "mono.h"
#include "net.h"
#include "proc.h"
#include "run_priv.h"
#include "seal.h"

#define RUN_DIAL_TIMEOUT_MS 5000
#define RUN_CANCEL_WAIT	2.0	/* s: for the JobDone of a job given up on */

static void
run_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv run -n N [options] [--] PROG [ARGS...]\n"
	    "  -n, -np, --np N          number of ranks (required)\n"
	    "  --cms K                  Channel Memory servers (default 1)\n"
	    "  --nodes M                node agents of the embedded deployment "
	    "(default 1)\n"
	    "  --tag-output             prefix each output line with "
	    "[JOB,RANK]<stdout>: / <stderr>:\n"
	    "  --timeout S              kill the job after S seconds (exit 124)\n"
	    "  --report FILE            write a JSON summary of the job to FILE\n"
	    "  --progress, --no-progress  a live status line on stderr "
	    "(default: when it\n"
	    "                           is a terminal)\n"
	    "  --timeline FILE.html     draw the run: a row per rank over time, "
	    "kills,\n"
	    "                           relaunches, replays, checkpoints "
	    "(docs/EXPERIMENTS.md)\n"
	    "  --dispatcher HOST:PORT   use a running deployment instead of an "
	    "embedded one\n"
	    "  --secret-file FILE       its cluster secret (env "
	    "MPIV_SECRET_FILE)\n"
	    "  --insecure-plaintext     do not encrypt connections, here and "
	    "in the embedded\n"
	    "                           deployment (benchmarks only; env "
	    "MPIV_INSECURE_PLAINTEXT=1)\n"
	    "  --hostfile FILE          start the daemons on the hosts of FILE "
	    "over ssh for\n"
	    "                           this run (lines: HOST [slots=N]; the "
	    "dispatcher, CMs\n"
	    "                           and CSs on the first host), stop them "
	    "after\n"
	    "  -H, --host H1[:N],H2..   the same for the hosts named (N slots, "
	    "default 1)\n"
	    "  --no-ship                with --dispatcher, --hostfile or -H: "
	    "nodes run PROG\n"
	    "                           from their own file system (default: "
	    "shipped)\n"
	    "  --max-restarts N         relaunch a killed rank at most N times "
	    "(default 50)\n"
	    "  --protocol P             relay (every message through the "
	    "receiver's CM),\n"
	    "                           direct (ranks talk to each other; "
	    "placed only on\n"
	    "                           nodes that accept connections, not "
	    "--no-listen ones)\n"
	    "                           or auto (default: direct when every "
	    "node of the job\n"
	    "                           accepts connections, else relay)\n"
	    "  --relay-only             no message logging, no restarts (a "
	    "killed rank\n"
	    "                           fails the job; the baseline for "
	    "benchmarks)\n"
	    "  --chaos MTBF             kill a random rank with SIGKILL at "
	    "random intervals\n"
	    "                           of mean MTBF (2s, 500ms, 1.5 = "
	    "seconds)\n"
	    "  --chaos-seed S           seed of the kill schedule (default: "
	    "from the clock;\n"
	    "                           the report says which)\n"
	    "  --chaos-max K            stop after K kills\n"
	    "  --chaos-nodes            --chaos kills whole node agents (and "
	    "their ranks);\n"
	    "                           embedded ones are started again "
	    "shortly after\n"
	    "  --ckpt-interval S        checkpoint every rank every S seconds "
	    "(uncoordinated;\n"
	    "                           restarts resume from the last one)\n"
	    "  --cs K                   checkpoint servers (default 1)\n"
	    "  --deadlock-after S       say the job is deadlocked once every "
	    "rank has waited\n"
	    "                           S seconds with no message moving "
	    "(default 30s;\n"
	    "                           0 or off: never)\n"
	    "  --deadlock-abort         and then end it (exit 1)\n"
	    "  --cm-max-memory BYTES    what each embedded CM holds per job "
	    "before it pauses\n"
	    "                           senders and asks for checkpoints (64M, "
	    "2G; default\n"
	    "                           half of the machine's or cgroup's "
	    "memory)\n"
	    "  --cm-store MODE          the embedded CMs' durable logs: off "
	    "(default: a lost\n"
	    "                           CM makes its jobs start over), write "
	    "(a CM killed\n"
	    "                           and started again keeps every job "
	    "going), fsync\n"
	    "                           (the same, on disk before each "
	    "answer)\n"
	    "  -v, --verbose            print \"mpiv: dispatcher HOST:PORT job "
	    "ID\" on stderr\n"
	    "                           (also with MPIV_PRINT_DISPATCHER=1)\n"
	    "  --stdin RANK|all|none    who reads our stdin (default 0; "
	    "read to its end,\n"
	    "                           at most 64 MiB, before the job "
	    "starts; a terminal:\n"
	    "                           none unless --stdin is given)\n"
	    "  -x NAME[=VALUE]          set NAME in the ranks' environment "
	    "(its value here\n"
	    "                           without =VALUE; not set here: not "
	    "forwarded)\n"
	    "  --env NAME=VALUE         the same (repeatable, like -x)\n"
	    "  --log-level LEVEL        error|warn|info|debug (default warn; "
	    "daemons: error)\n"
	    "  -h, --help               this text\n"
	    "Exit code: the job's (first failing rank's code, 128+S for a "
	    "signal,\nMPI_Abort's code), 124 timeout, 127 program not found, "
	    "2 usage, 1 deployment failure.\n");
}

/* Usage error: one line saying what is wrong, the usage, exit code 2. */
static int
run_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "mpiv run: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	run_usage(stderr);
	return 2;
}

static int
run_parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/*
 * "-np" is not a getopt option: rewrite it to "-n" among the options
 * (never in the program's own arguments).
 */
static void
run_fix_np(int argc, char **argv)
{
	static char dash_n[] = "-n";
	static const char *const with_arg[] = { "-n", "--np", "--cms",
	    "--nodes", "--timeout", "--report", "--timeline", "--dispatcher",
	    "--log-level",
	    "--max-restarts", "--chaos", "--chaos-seed", "--chaos-max",
	    "--ckpt-interval", "--cs", "--secret-file", "-x", "--env",
	    "--stdin", "--hostfile", "--host", "-H", "--protocol",
	    "--cm-store", "--cm-max-memory", "--deadlock-after", NULL };

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0 || argv[i][0] != '-')
			return;
		if (strcmp(argv[i], "-np") == 0)
			argv[i] = dash_n;
		for (int k = 0; with_arg[k] != NULL; k++)
			if (strcmp(argv[i], with_arg[k]) == 0) {
				i++;
				break;
			}
	}
}

/* "2s", "500ms", "1.5" (seconds), "1m": milliseconds, 1 .. 2^32-1. */
int
run_parse_ms(const char *s, uint32_t *out)
{
	double v, scale = 1000.;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s)
		return -1;
	if (strcmp(end, "ms") == 0)
		scale = 1.;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		scale = 60000.;
	else if (*end != '\0' && strcmp(end, "s") != 0)
		return -1;
	v *= scale;
	if (!isfinite(v) || v < 1. || v > 4294967295.)
		return -1;
	*out = (uint32_t)llround(v);
	return 0;
}

static int
run_parse(struct run *r, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "chaos", required_argument, NULL, 'C' },
		{ "chaos-max", required_argument, NULL, 'K' },
		{ "chaos-nodes", no_argument, NULL, 'N' },
		{ "no-ship", no_argument, NULL, 'P' },
		{ "chaos-seed", required_argument, NULL, 'S' },
		{ "ckpt-interval", required_argument, NULL, 'I' },
		{ "cs", required_argument, NULL, 'X' },
		{ "deadlock-after", required_argument, NULL, 0x206 },
		{ "deadlock-abort", no_argument, NULL, 0x207 },
		{ "cm-max-memory", required_argument, NULL, 'Y' },
		{ "cm-store", required_argument, NULL, 0x201 },
		{ "env", required_argument, NULL, 0x203 },
		{ "host", required_argument, NULL, 'H' },
		{ "hostfile", required_argument, NULL, 0x205 },
		{ "stdin", required_argument, NULL, 0x204 },
		{ "max-restarts", required_argument, NULL, 'M' },
		{ "protocol", required_argument, NULL, 0x202 },
		{ "relay-only", no_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "cms", required_argument, NULL, 'c' },
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "nodes", required_argument, NULL, 'm' },
		{ "np", required_argument, NULL, 'n' },
		{ "report", required_argument, NULL, 'r' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ "insecure-plaintext", no_argument, NULL, DAEMON_OPT_INSECURE },
		{ "tag-output", no_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "timeline", required_argument, NULL, 0x2a0 },
		{ "progress", no_argument, NULL, 0x2a1 },
		{ "no-progress", no_argument, NULL, 0x2a2 },
		{ NULL, 0, NULL, 0 },
	};
	const char *hostfile = NULL;
	bool nodes_set = false;
	char *end;
	int ch;

	run_fix_np(argc, argv);
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+H:hn:vx:", opts, NULL)) != -1) {
		switch (ch) {
		case 'x':
		case 0x203:
			if (run_env_add(r, ch == 'x' ? "-x" : "--env", optarg) <
			    0) {
				run_usage(stderr);
				return 2;
			}
			break;
		case 'H':
			if (run_hosts_parse_list(r, optarg) < 0) {
				run_usage(stderr);
				return 2;
			}
			break;
		case 0x205:
			if (hostfile != NULL)
				return run_usage_error("%s", "one --hostfile");
			hostfile = optarg;
			if (run_hosts_parse_file(r, optarg) < 0)
				return 2;
			break;
		case 0x204:
			if (run_stdin_parse(r, optarg) < 0)
				return run_usage_error("bad --stdin \"%s\" (a "
				    "rank, all or none)", optarg);
			break;
		case 'C':
			if (run_parse_ms(optarg, &r->chaos_mtbf_ms) < 0)
				return run_usage_error("bad --chaos \"%s\" "
				    "(want a duration: 2s, 500ms, 1.5)", optarg);
			break;
		case 'N':
			r->chaos_nodes = true;
			break;
		case 'P':
			r->no_ship = true;
			break;
		case 'K':
			if (run_parse_int(optarg, 1, INT_MAX, &r->chaos_max) < 0)
				return run_usage_error("bad --chaos-max \"%s\"",
				    optarg);
			break;
		case 'S':
			errno = 0;
			r->chaos_seed = strtoull(optarg, &end, 0);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    *optarg == '-')
				return run_usage_error("bad --chaos-seed \"%s\"",
				    optarg);
			r->chaos_seed_set = true;
			break;
		case 'I': {
			uint32_t ms;
			if (run_parse_ms(optarg, &ms) < 0)
				return run_usage_error("bad --ckpt-interval "
				    "\"%s\" (want a duration: 30s, 500ms, 0.5)",
				    optarg);
			r->ckpt_interval = ms / 1000.;
			break;
		}
		case 'Y': {
			uint64_t b;
			if (daemon_parse_bytes(optarg, &b) < 0)
				return run_usage_error("bad --cm-max-memory "
				    "\"%s\" (want bytes: 64M, 2G)", optarg);
			r->cm_max_memory = optarg;
			break;
		}
		case 0x206: {
			uint32_t ms;
			if (strcmp(optarg, "0") == 0 ||
			    strcmp(optarg, "off") == 0) {
				r->deadlock_after = -1;	/* never */
				break;
			}
			if (run_parse_ms(optarg, &ms) < 0)
				return run_usage_error("bad --deadlock-after "
				    "\"%s\" (want a duration: 30s, 2m, 0.5, "
				    "or off)", optarg);
			r->deadlock_after = ms / 1000.;
			break;
		}
		case 0x207:
			r->deadlock_abort = true;
			break;
		case 0x201:
			if (strcmp(optarg, "write") != 0 &&
			    strcmp(optarg, "fsync") != 0 &&
			    strcmp(optarg, "off") != 0)
				return run_usage_error("bad --cm-store \"%s\" "
				    "(write, fsync or off)", optarg);
			r->cm_store = optarg;
			break;
		case 'X':
			if (run_parse_int(optarg, 1, 1024, &r->ncs) < 0)
				return run_usage_error("bad --cs \"%s\"",
				    optarg);
			break;
		case 'M':
			if (run_parse_int(optarg, 0, 1000000, &r->max_restarts) <
			    0)
				return run_usage_error("bad --max-restarts "
				    "\"%s\"", optarg);
			if (r->max_restarts == 0)
				r->max_restarts = -1;	/* 0 on the wire: default */
			break;
		case 'R':
			r->relay_only = true;
			break;
		case 0x202:
			if (strcmp(optarg, "relay") != 0 &&
			    strcmp(optarg, "direct") != 0 &&
			    strcmp(optarg, "auto") != 0)
				return run_usage_error("bad --protocol \"%s\" "
				    "(relay, direct or auto)", optarg);
			r->protocol = optarg;
			break;
		case 'v':
			r->verbose = true;
			break;
		case 'c':
			if (run_parse_int(optarg, 1, 1024, &r->ncms) < 0)
				return run_usage_error("bad --cms \"%s\"",
				    optarg);
			break;
		case 'd':
			r->dispatcher = optarg;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		case 'L':
			if (log_parse_level(optarg, &r->level) < 0)
				return run_usage_error("bad --log-level "
				    "\"%s\"", optarg);
			r->child_level = optarg;
			r->log_level_set = true;
			break;
		case 'm':
			if (run_parse_int(optarg, 1, 1024, &r->nnodes) < 0)
				return run_usage_error("bad --nodes \"%s\"",
				    optarg);
			nodes_set = true;
			break;
		case 'n':
			if (run_parse_int(optarg, 1, 65536, &r->nranks) < 0)
				return run_usage_error("bad number of ranks "
				    "\"%s\" (want 1 or more)", optarg);
			break;
		case 'k':
			r->secret_file = optarg;
			break;
		case DAEMON_OPT_INSECURE:
			/* in the environment too: the embedded deployment's
			   daemons and the ranks run plaintext as well */
			seal_set_plaintext(true);
			break;
		case 'r':
			r->report = optarg;
			break;
		case 0x2a0:
			r->timeline = optarg;
			break;
		case 0x2a1:
			r->progress = 1;
			break;
		case 0x2a2:
			r->progress = 0;
			break;
		case 't':
			r->tag = true;
			break;
		case 'T':
			r->timeout = strtod(optarg, &end);
			if (*end != '\0' || !(r->timeout > 0) ||
			    !isfinite(r->timeout))
				return run_usage_error("bad --timeout \"%s\"",
				    optarg);
			r->timeout_arg = optarg;
			break;
		case ':':
			return run_usage_error("option %s needs a value",
			    argv[optind - 1]);
		default:
			return run_usage_error("unknown option %s",
			    argv[optind - 1]);
		}
	}
	if (r->nranks < 1)
		return run_usage_error("%s", "missing -n N");
	if ((r->chaos_seed_set || r->chaos_max > 0 || r->chaos_nodes) &&
	    r->chaos_mtbf_ms == 0)
		return run_usage_error("%s", "--chaos-seed, --chaos-max and "
		    "--chaos-nodes need --chaos MTBF");
	if (r->relay_only && (r->ckpt_interval > 0 || r->ncs > 0))
		return run_usage_error("%s", "--relay-only cannot take "
		    "checkpoints (--ckpt-interval, --cs)");
	if (r->cm_store != NULL && r->dispatcher != NULL)
		return run_usage_error("%s", "--cm-store sets the embedded "
		    "deployment's CMs; with --dispatcher give mpiv cm --store "
		    "DIR");
	if (r->cm_max_memory != NULL && r->dispatcher != NULL)
		return run_usage_error("%s", "--cm-max-memory sets the embedded "
		    "deployment's CMs; with --dispatcher give it to mpiv cm "
		    "(--max-memory)");
	if (r->nhosts > 0 && (r->dispatcher != NULL || nodes_set ||
	    r->cm_store != NULL))
		return run_usage_error("%s", "--hostfile and -H start a "
		    "deployment on the hosts: not with --dispatcher, --nodes "
		    "or --cm-store");
	if (r->nhosts > 0 && (r->ncms > 10 || r->ncs > 10))
		return run_usage_error("%s", "--hostfile and -H: at most 10 "
		    "--cms and 10 --cs");
	if (r->nhosts > 0 && run_hosts_check(r) < 0) {
		run_usage(stderr);
		return 2;
	}
	if (run_stdin_check(r) < 0) {
		run_usage(stderr);
		return 2;
	}
	if (optind >= argc)
		return run_usage_error("%s", "no program to run");
	r->argv = argv + optind;
	r->argc = argc - optind;
	return -1;
}

/* ---------------- output ---------------- */

static void
run_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	ssize_t w;

	while (len > 0) {
		w = write(fd, p, len);
		if (w > 0) {
			p += w;
			len -= (size_t)w;
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			(void)poll(&pfd, 1, 1000);
		} else {
			return;		/* EPIPE and friends: drop it */
		}
	}
}

/* --tag-output: emits each complete line with its prefix. */
static void
run_tagged(struct run *r, int rank, int stream, const uint8_t *data,
    size_t len, bool flush)
{
	struct run_line *l = &r->lines[rank * 2 + (stream == 2)];
	char prefix[96];
	int fd = stream == 2 ? 2 : 1, plen;
	size_t start = 0, nlines = 0, olen = 0;
	char *out;

	if (len > 0) {
		if (l->len + len > l->cap) {
			size_t cap = l->cap ? l->cap : 256;
			char *nb;
			while (cap < l->len + len)
				cap *= 2;
			if ((nb = realloc(l->buf, cap)) == NULL)
				return;
			l->buf = nb;
			l->cap = cap;
		}
		memcpy(l->buf + l->len, data, len);
		l->len += len;
	}
	plen = snprintf(prefix, sizeof(prefix), "[%s,%d]<%s>: ", r->job, rank,
	    stream == 2 ? "stderr" : "stdout");
	/* One write for every complete line of this chunk. */
	for (size_t i = 0; i < l->len; i++)
		nlines += l->buf[i] == '\n';
	if (flush && l->len > 0 && l->buf[l->len - 1] != '\n')
		nlines++;
	if (nlines == 0)
		return;
	if ((out = malloc(l->len + nlines * (size_t)plen + 1)) == NULL)
		return;
	for (size_t i = 0; i < l->len; i++) {
		bool last = flush && i + 1 == l->len;
		if (l->buf[i] != '\n' && !last)
			continue;
		memcpy(out + olen, prefix, (size_t)plen);
		olen += (size_t)plen;
		memcpy(out + olen, l->buf + start, i + 1 - start);
		olen += i + 1 - start;
		if (l->buf[i] != '\n')
			out[olen++] = '\n';
		start = i + 1;
	}
	run_write_all(fd, out, olen);
	free(out);
	if (start > 0) {
		memmove(l->buf, l->buf + start, l->len - start);
		l->len -= start;
	}
}

static void
run_output(struct run *r, const Mpiv__Output *o, const uint8_t *data,
    uint32_t len)
{
	if (o->rank < 0 || o->rank >= r->nranks)
		return;
	run_progress_clear(r);
	if (r->tag)
		run_tagged(r, o->rank, o->stream, data, len, false);
	else
		run_write_all(o->stream == 2 ? 2 : 1, data, len);
}

/* ---------------- job life ---------------- */

/*
 * From now on SIGINT/SIGTERM are ignored: the teardown is under way
 * (`timeout` sends its signal twice, to us and to our group). Stopping
 * the watchers restores SIG_DFL, so block the signals meanwhile.
 */
static void
run_ignore_signals(struct run *r)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	ev_signal_stop(r->loop, &r->sigint_w);
	ev_signal_stop(r->loop, &r->sigterm_w);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * Ends the session: stops every watcher and closes the dispatcher link,
 * so ev_run returns once the conn is freed. The first caller's code and
 * reason win, run_cancel's included.
 */
void
run_stop(struct run *r, int code, const char *reason)
{
	if (r->stopped)
		return;
	r->stopped = true;
	if (!r->cancelling) {
		r->exit_code = code;
		if (reason != NULL)
			snprintf(r->reason, sizeof(r->reason), "%s", reason);
	}
	ev_timer_stop(r->loop, &r->timeout_w);
	ev_timer_stop(r->loop, &r->cancel_w);
	run_progress_stop(r);	/* its timer would keep the loop going */
	run_ignore_signals(r);
	run_deploy_unwatch(r);
	if (r->c != NULL)
		conn_close(r->c, "mpiv run done", false);
}

static void
run_on_cancel_wait(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct run *r = w->data;

	log_info("run job=%s no JobDone %.1f s after the cancel: the report "
	    "counts no kill or restart", r->job, RUN_CANCEL_WAIT);
	run_stop(r, r->exit_code, NULL);
}

/*
 * Gives up on the job (--timeout, a signal to mpiv run): code and reason
 * are final, as for run_stop. Over a live dispatcher link, asks the
 * dispatcher to end the job (JobCancel) and waits up to RUN_CANCEL_WAIT
 * for its JobDone, so that the report counts the kills, restarts and
 * incarnations that happened; output arriving meanwhile is dropped, as
 * after run_stop. Without a link, or when the wait ends, run_stop.
 */
static void
run_cancel(struct run *r, int code, const char *reason)
{
	Mpiv__JobCancel jc = MPIV__JOB_CANCEL__INIT;

	if (r->stopped || r->cancelling)
		return;
	if (r->c == NULL || conn_is_closing(r->c)) {
		run_stop(r, code, reason);
		return;
	}
	r->cancelling = true;
	r->exit_code = code;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	ev_timer_stop(r->loop, &r->timeout_w);
	run_ignore_signals(r);
	jc.exit_code = code;
	jc.reason = r->reason;
	if (conn_send(r->c, MPIV__MSG_TYPE__MSG_JOB_CANCEL, &jc.base, NULL,
	    0) < 0) {
		run_stop(r, code, NULL);
		return;
	}
	log_info("run job=%s cancel exit_code=%d reason=\"%s\"", r->job, code,
	    r->reason);
	ev_timer_set(&r->cancel_w, RUN_CANCEL_WAIT, 0.);
	ev_timer_start(r->loop, &r->cancel_w);
}

/*
 * A job ended from here (--timeout, a signal) whose ranks were blocked
 * in MPI calls: where each was stuck, one indented line a rank under the
 * reason (at most RUN_WAITS_SHOWN; --report has them all).
 */
#define RUN_WAITS_SHOWN	16
static void
run_print_waits(const struct run *r)
{
	int shown = 0, more = 0;

	if (!r->cancelling || r->results == NULL)
		return;
	for (int i = 0; i < r->nranks; i++) {
		const struct run_result *rr = &r->results[i];

		if (!rr->known || rr->waits[0] == '\0')
			continue;
		if (shown++ >= RUN_WAITS_SHOWN) {
			more++;
			continue;
		}
		fprintf(stderr, "  rank %d was waiting %s (for %.0f s)\n", i,
		    rr->waits, rr->waited_s);
	}
	if (more > 0)
		fprintf(stderr, "  (and %d more ranks waiting: --report lists "
		    "them)\n", more);
}

static void
run_job_done(struct run *r, const Mpiv__JobDone *jd)
{
	r->done = true;
	if (*jd->mode != '\0')
		snprintf(r->mode, sizeof(r->mode), "%s", jd->mode);
	r->kills = jd->kills;
	r->ckpt_failures = jd->ckpt_failures;
	r->checkpoints = 0;
	for (size_t i = 0; i < jd->n_ranks; i++)
		r->checkpoints += jd->ranks[i]->checkpoints;
	r->restarts = jd->restarts;
	free(r->rlog);
	r->nrlog = 0;
	if (jd->n_restart_log > 0 &&
	    (r->rlog = calloc(jd->n_restart_log, sizeof(*r->rlog))) != NULL) {
		for (size_t i = 0; i < jd->n_restart_log; i++) {
			const Mpiv__RestartInfo *ri = jd->restart_log[i];
			r->rlog[i].rank = ri->rank;
			r->rlog[i].incarnation = ri->incarnation;
			r->rlog[i].relaunch_ms = ri->relaunch_ms;
			r->rlog[i].replayed_events = ri->replayed_events;
			r->rlog[i].replayed_ahead = ri->replayed_ahead;
			r->rlog[i].replay_s = ri->replay_s;
			r->rlog[i].from_ckpt = ri->from_ckpt;
		}
		r->nrlog = jd->n_restart_log;
	}
	for (size_t i = 0; i < jd->n_ranks; i++) {
		const Mpiv__RankResult *rr = jd->ranks[i];
		if (rr->rank < 0 || rr->rank >= r->nranks)
			continue;
		r->results[rr->rank].known = true;
		r->results[rr->rank].incarnations = rr->incarnations;
		r->results[rr->rank].restarts = rr->restarts;
		r->results[rr->rank].checkpoints = rr->checkpoints;
		r->results[rr->rank].exit_code = rr->exit_code;
		snprintf(r->results[rr->rank].waits,
		    sizeof(r->results[rr->rank].waits), "%s", rr->waits);
		r->results[rr->rank].waited_s = rr->waited_s;
	}
	run_stop(r, jd->exit_code, *jd->reason != '\0' ? jd->reason : NULL);
}

/*
 * A JobWarning: a condition of the job began or cleared (the dispatcher
 * rate-limits them, dispatcher/disp_warn.c). One line on stderr, and an
 * entry of the report's "warnings" (a clear closes the open one of its
 * kind).
 */
static void
run_warning(struct run *r, const Mpiv__JobWarning *jw)
{
	struct run_warning *w = NULL, *more;

	run_progress_clear(r);
	fprintf(stderr, "mpiv: %s\n", jw->text);
	log_info("run warning job=%s kind=%s active=%d since_s=%.1f "
	    "text=\"%s\"", jw->job_id, jw->kind, jw->active, jw->since_s,
	    jw->text);
	if (!jw->active) {
		for (size_t i = r->nwarns; i-- > 0 && w == NULL;)
			if (strcmp(r->warns[i].kind, jw->kind) == 0 &&
			    r->warns[i].cleared_s < 0)
				w = &r->warns[i];
		if (w != NULL) {
			w->cleared_s = jw->cleared_s;
			if (jw->count > w->count)
				w->count = jw->count;
		}
		return;
	}
	if ((more = realloc(r->warns, (r->nwarns + 1) * sizeof(*more))) ==
	    NULL)
		return;
	r->warns = more;
	w = &r->warns[r->nwarns++];
	snprintf(w->kind, sizeof(w->kind), "%s", jw->kind);
	w->since_s = jw->since_s;
	w->cleared_s = -1;
	w->count = jw->count;
	snprintf(w->text, sizeof(w->text), "%s", jw->text);
}

/*
 * A JobEvent: kept for the report's "events" and the timeline, at most
 * RUN_EVENTS_MAX of them (the rest are counted).
 */
static void
run_event(struct run *r, const Mpiv__JobEvent *je)
{
	struct tl_event *e;

	if (strcmp(je->kind, "sizes") == 0) {
		if (timeline_sizes_add(&r->sizes, je->t, je->value,
		    je->store_bytes) < 0)
			r->events_dropped++;
		if (strcmp(je->detail, "partial") == 0)
			r->sizes.partial++;
		run_progress_sizes(r, je->value, je->store_bytes);
		return;
	}
	if (r->nevents == r->capevents) {
		size_t cap = r->capevents ? r->capevents * 2 : 256;
		struct tl_event *ne;

		if (r->nevents >= RUN_EVENTS_MAX ||
		    (ne = realloc(r->events, cap * sizeof(*ne))) == NULL) {
			r->events_dropped++;
			return;
		}
		r->events = ne;
		r->capevents = cap;
	}
	e = &r->events[r->nevents++];
	memset(e, 0, sizeof(*e));
	e->t = je->t;
	snprintf(e->kind, sizeof(e->kind), "%s", je->kind);
	e->rank = je->rank;
	e->inc = je->incarnation;
	e->value = je->value;
	e->span1 = je->span1;
	e->span2 = je->span2;
	snprintf(e->node, sizeof(e->node), "%s", je->node);
	snprintf(e->detail, sizeof(e->detail), "%s", je->detail);
	run_progress_event(r, e);
}

static void
run_on_frame(struct conn *c, const struct frame_hdr *h, ProtobufCMessage *m,
    uint8_t *payload)
{
	struct run *r = conn_udata(c);
	char why[400];

	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		Mpiv__HelloReply *hr = (Mpiv__HelloReply *)m;
		if (!hr->ok) {
			snprintf(why, sizeof(why), "dispatcher %s refused us: "
			    "%s", r->disp_addr, hr->error);
			run_stop(r, 1, why);
		}
		break;
	}
	case MPIV__MSG_TYPE__MSG_JOB_STATUS: {
		Mpiv__JobStatus *st = (Mpiv__JobStatus *)m;
		snprintf(r->job, sizeof(r->job), "%s", st->job_id);
		if (*st->protocol != '\0')
			snprintf(r->protocol_run, sizeof(r->protocol_run), "%s",
			    st->protocol);
		if (r->verbose && !r->job_printed) {
			r->job_printed = true;
			fprintf(stderr, "mpiv: dispatcher %s job %s\n",
			    r->disp_addr, r->job);
		}
		log_info("run job=%s state=%s message=\"%s\"", st->job_id,
		    st->state, st->message);
		if (strncmp(st->message, "checkpoints disabled: ", 22) == 0 &&
		    !r->ckpt_said) {
			r->ckpt_said = true;
			run_progress_clear(r);
			fprintf(stderr, "mpiv: %s; restarts replay from the "
			    "beginning\n", st->message);
		}
		break;
	}
	case MPIV__MSG_TYPE__MSG_JOB_WARNING:
		if (!r->stopped && !r->cancelling)
			run_warning(r, (Mpiv__JobWarning *)m);
		break;
	case MPIV__MSG_TYPE__MSG_JOB_EVENT:
		run_event(r, (Mpiv__JobEvent *)m);
		break;
	case MPIV__MSG_TYPE__MSG_OUTPUT:
		if (!r->stopped && !r->cancelling)
			run_output(r, (Mpiv__Output *)m, payload,
			    h->payload_len);
		break;
	case MPIV__MSG_TYPE__MSG_JOB_DONE:
		snprintf(r->job, sizeof(r->job), "%s",
		    ((Mpiv__JobDone *)m)->job_id);
		run_job_done(r, (Mpiv__JobDone *)m);
		break;
	case MPIV__MSG_TYPE__MSG_ERROR:
		snprintf(why, sizeof(why), "dispatcher error: %s",
		    ((Mpiv__Error *)m)->text);
		run_stop(r, 1, why);
		break;
	case MPIV__MSG_TYPE__MSG_BINARY_GET:
		if (r->dispatcher != NULL && !r->no_ship)
			run_ship_send(r, (Mpiv__BinaryGet *)m);
		break;
	default:
		log_debug("run ignoring %s", frame_type_name(h->type));
		break;
	}
	free(payload);
}

static void
run_on_close(struct conn *c, const char *reason)
{
	struct run *r = conn_udata(c);
	char why[300];

	r->c = NULL;
	if (!r->stopped && conn_auth_failed(c)) {
		snprintf(why, sizeof(why), "dispatcher %s: %s", r->disp_addr,
		    reason);
		run_stop(r, 1, why);
	} else if (!r->stopped) {
		snprintf(why, sizeof(why), "lost connection to the dispatcher "
		    "(%s)", reason);
		run_stop(r, 1, why);
	}
}

static const struct conn_ops run_conn_ops = {
	.on_frame = run_on_frame,
	.on_close = run_on_close,
};

static void
run_on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct run *r = w->data;
	char why[128];

	snprintf(why, sizeof(why), "job timed out after %s s", r->timeout_arg);
	run_cancel(r, 124, why);
}

static void
run_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct run *r = w->data;
	char why[128];

	snprintf(why, sizeof(why), "interrupted by signal %d (%s), job killed",
	    w->signum, strsignal(w->signum));
	run_cancel(r, 128 + w->signum, why);
}

/* Dials the dispatcher and submits the job. 0 or -1 (reason set). */
static int
run_submit(struct run *r)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__JobSubmit js = MPIV__JOB_SUBMIT__INIT;
	char tmpenv[PATH_MAX + 8], **env;
	const char *tmp = getenv("TMPDIR");
	int fd;

	if ((fd = net_dial(r->disp_addr, RUN_DIAL_TIMEOUT_MS)) < 0) {
		snprintf(r->reason, sizeof(r->reason), "cannot reach the "
		    "dispatcher at %s: %s", r->disp_addr, strerror(errno));
		return -1;
	}
	if ((r->c = conn_new(r->loop, fd, &run_conn_ops, r)) == NULL) {
		close(fd);
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		return -1;
	}
	conn_auth_client(r->c, r->keys.enabled ? &r->keys.secret : NULL);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	h.rank = -1;
	h.name = "mpiv run";
	js.nranks = r->nranks;
	js.argv = r->argv;
	js.n_argv = (size_t)r->argc;
	js.cwd = r->cwd;
	js.ncms = r->ncms;
	js.relay_only = r->relay_only;
	js.protocol = (char *)(r->protocol != NULL ? r->protocol : "auto");
	js.max_restarts = r->max_restarts;
	js.chaos_mtbf_ms = r->chaos_mtbf_ms;
	js.chaos_seed = r->chaos_seed;
	js.chaos_max = r->chaos_max;
	js.chaos_nodes = r->chaos_nodes;
	js.ckpt_interval = r->ckpt_interval;
	js.ncs = r->ncs;
	js.deadlock_after = r->deadlock_after;
	js.deadlock_abort = r->deadlock_abort;
	if (r->dispatcher != NULL && !r->no_ship) {
		if (run_ship_prepare(r) < 0)
			return -1;
		js.binary_hash = r->ship_hash;
		js.binary_size = r->ship_size;
	}
	/* The embedded daemons get a private TMPDIR; ranks keep the user's.
	   Then -x and --env, in their order: the last of a name wins. */
	if ((env = calloc(r->nenv + 1, sizeof(*env))) == NULL) {
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		return -1;
	}
	if (tmp != NULL && r->dispatcher == NULL) {
		snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", tmp);
		env[js.n_env++] = tmpenv;
	}
	for (size_t i = 0; i < r->nenv; i++)
		env[js.n_env++] = r->env[i];
	js.env = env;
	if (r->in_len > 0) {
		js.stdin_hash = r->in_hash;
		js.stdin_size = r->in_len;
		js.stdin_rank = r->stdin_rank;
	}
	(void)conn_send(r->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0);
	(void)conn_send(r->c, MPIV__MSG_TYPE__MSG_JOB_SUBMIT, &js.base, r->in,
	    (uint32_t)r->in_len);
	free(env);
	return 0;
}

/* ---------------- report ---------------- */

static int
run_write_report(struct run *r, double wall)
{
	struct json j;
	FILE *f;

	if ((f = fopen(r->report, "w")) == NULL) {
		fprintf(stderr, "mpiv: cannot write report %s: %s\n", r->report,
		    strerror(errno));
		return -1;
	}
	json_init(&j, f);
	json_obj_begin(&j);
	json_key(&j, "job");
	json_str(&j, r->job);
	json_key(&j, "ranks");
	json_int(&j, r->nranks);
	json_key(&j, "exit_code");
	json_int(&j, r->exit_code);
	json_key(&j, "wall_s");
	json_double(&j, wall);
	json_key(&j, "mode");
	json_str(&j, r->mode);
	json_key(&j, "protocol");
	json_str(&j, r->protocol_run);
	json_key(&j, "restarts");
	json_int(&j, r->restarts);
	json_key(&j, "checkpoints");
	json_uint(&j, r->checkpoints);
	json_key(&j, "ckpt_interval_s");
	json_double(&j, r->ckpt_interval);
	json_key(&j, "ckpt_failures");
	json_uint(&j, r->ckpt_failures);
	json_key(&j, "warnings");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->nwarns; i++) {
		const struct run_warning *w = &r->warns[i];
		json_obj_begin(&j);
		json_key(&j, "kind");
		json_str(&j, w->kind);
		json_key(&j, "since_s");
		json_double(&j, w->since_s);
		json_key(&j, "cleared_s");
		if (w->cleared_s >= 0)
			json_double(&j, w->cleared_s);
		else
			json_null(&j);
		if (strcmp(w->kind, "ckpt_failing") == 0) {
			json_key(&j, "failures");
			json_uint(&j, w->count);
		}
		json_key(&j, "text");
		json_str(&j, w->text);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "kills");
	json_int(&j, r->kills);
	json_key(&j, "chaos_seed");
	if (r->chaos_mtbf_ms > 0)
		json_uint(&j, r->chaos_seed);
	else
		json_null(&j);
	json_key(&j, "restart_log");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->nrlog; i++) {
		const struct run_restart *e = &r->rlog[i];
		json_obj_begin(&j);
		json_key(&j, "rank");
		json_int(&j, e->rank);
		json_key(&j, "incarnation");
		json_int(&j, e->incarnation);
		json_key(&j, "relaunch_ms");
		if (e->relaunch_ms >= 0)
			json_double(&j, e->relaunch_ms);
		else
			json_null(&j);
		json_key(&j, "replayed_events");
		json_uint(&j, e->replayed_events);
		json_key(&j, "replayed_ahead");
		json_uint(&j, e->replayed_ahead);
		json_key(&j, "replay_s");
		json_double(&j, e->replay_s);
		json_key(&j, "from_ckpt");
		json_uint(&j, e->from_ckpt);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "reason");
	json_str(&j, r->reason);
	json_key(&j, "events");
	timeline_events_json(&j, r->events, r->nevents);
	json_key(&j, "events_dropped");
	json_uint(&j, r->events_dropped);
	json_key(&j, "sizes");
	timeline_sizes_json(&j, &r->sizes);
	json_key(&j, "per_rank");
	json_arr_begin(&j);
	for (int i = 0; i < r->nranks; i++) {
		const struct run_result *rr = &r->results[i];
		json_obj_begin(&j);
		json_key(&j, "rank");
		json_int(&j, i);
		json_key(&j, "incarnations");
		json_int(&j, rr->known ? rr->incarnations : 1);
		json_key(&j, "restarts");
		json_int(&j, rr->known ? rr->restarts : 0);
		json_key(&j, "checkpoints");
		json_int(&j, rr->known ? rr->checkpoints : 0);
		json_key(&j, "exit_code");
		if (rr->known && rr->exit_code >= 0)
			json_int(&j, rr->exit_code);
		else
			json_null(&j);
		if (rr->known && rr->waits[0] != '\0') {
			json_key(&j, "waits");
			json_str(&j, rr->waits);
			json_key(&j, "waited_s");
			json_double(&j, rr->waited_s);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	if (fclose(f) != 0) {
		fprintf(stderr, "mpiv: cannot write report %s: %s\n", r->report,
		    strerror(errno));
		return -1;
	}
	return 0;
}

static int
run_write_timeline(struct run *r, double wall)
{
	struct tl_job tj = {
		.job = r->job, .protocol = r->protocol_run,
		.nranks = r->nranks, .exit_code = r->exit_code,
		.wall_s = wall, .reason = r->reason, .ev = r->events,
		.nev = r->nevents, .sizes = &r->sizes,
	};

	if (timeline_write_html(&tj, r->timeline) < 0) {
		fprintf(stderr, "mpiv: cannot write timeline %s: %s\n",
		    r->timeline, strerror(errno));
		return -1;
	}
	return 0;
}

static int
run_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* After any kill: one line on stderr (stdout stays the job's). */
static void
run_summary(const struct run *r)
{
	double *lat, median = 0;
	uint64_t events = 0;
	size_t n = 0;

	if (r->kills == 0)
		return;
	if ((lat = calloc(r->nrlog + 1, sizeof(*lat))) == NULL)
		return;
	for (size_t i = 0; i < r->nrlog; i++) {
		events += r->rlog[i].replayed_events;
		if (r->rlog[i].relaunch_ms >= 0)
			lat[n++] = r->rlog[i].relaunch_ms;
	}
	qsort(lat, n, sizeof(*lat), run_cmp_double);
	if (n > 0)
		median = n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2;
	size_t nck = 0;
	for (size_t i = 0; i < r->nrlog; i++)
		nck += r->rlog[i].from_ckpt > 0;
	/* The line's start is what scripts match: the checkpoint count is
	   only appended when there is one. */
	fprintf(stderr, "mpiv: %u kill%s, %u restart%s, relaunch median %.1f "
	    "ms, replayed %llu event%s", r->kills, r->kills == 1 ? "" : "s",
	    r->restarts, r->restarts == 1 ? "" : "s", median,
	    (unsigned long long)events, events == 1 ? "" : "s");
	if (nck > 0)
		fprintf(stderr, ", %zu from a checkpoint", nck);
	fputc('\n', stderr);
	free(lat);
}

/* Checks up front that the program exists (embedded mode only). */
static int
run_check_program(struct run *r)
{
	char path[PATH_MAX];

	if (proc_resolve(r->argv[0], r->cwd, path, sizeof(path)) == 0)
		return 0;
	if (strchr(r->argv[0], '/') == NULL && errno == ENOENT)
		fprintf(stderr, "mpiv: %s: command not found\n", r->argv[0]);
	else
		fprintf(stderr, "mpiv: %s: %s\n", r->argv[0], strerror(errno));
	return errno == EACCES ? 126 : 127;
}

/* A seed from the clock and the pid, printed in the report. */
static uint64_t
run_time_seed(void)
{
	struct timespec ts;
	uint64_t z;

	clock_gettime(CLOCK_REALTIME, &ts);
	z = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^
	    ((uint64_t)getpid() << 32);
	z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;
	return (z ^ (z >> 33)) & ((1ull << 53) - 1);	/* exact in JSON */
}

int
run_main(int argc, char **argv)
{
	struct run r = { .ncms = 1, .nnodes = 1, .level = LOG_LEVEL_WARN,
	    .progress = -1, .child_level = "error", .stdin_rank = 0,
	    .tmplock = -1 };
	const char *env;
	double t0;
	int rc;

	if ((rc = run_parse(&r, argc, argv)) >= 0)
		goto out_input;
	env = getenv("MPIV_PRINT_DISPATCHER");
	if (env != NULL && strcmp(env, "1") == 0)
		r.verbose = true;
	if (r.chaos_mtbf_ms > 0 && !r.chaos_seed_set)
		r.chaos_seed = run_time_seed();
	snprintf(r.mode, sizeof(r.mode), "%s", r.relay_only ? "relay" :
	    "logging");
	log_init("run", r.level);
	signal(SIGPIPE, SIG_IGN);
	if (seal_plaintext())
		log_warnx("run: --insecure-plaintext: connections are NOT "
		    "encrypted");
	if (r.dispatcher != NULL) {
		/* The embedded deployment makes a secret of its own. */
		char why[512];
		char path[PATH_MAX];
		if (auth_load_cluster(&r.keys, r.secret_file, why,
		    sizeof(why)) < 0 || (!r.keys.enabled &&
		    auth_find_embedded(r.dispatcher, path, sizeof(path)) == 0 &&
		    auth_load_cluster(&r.keys, path, why, sizeof(why)) < 0)) {
			fprintf(stderr, "mpiv: %s\n", why);
			rc = 1;
			goto out_input;
		}
	}
	if (getcwd(r.cwd, sizeof(r.cwd)) == NULL) {
		fprintf(stderr, "mpiv: cannot get the current directory: %s\n",
		    strerror(errno));
		rc = 1;
		goto out_input;
	}
	if (r.dispatcher == NULL && (rc = run_check_program(&r)) != 0)
		goto out_input;
	if (run_stdin_read(&r) < 0) {
		rc = 1;
		goto out_input;
	}
	if (r.dispatcher == NULL && r.nhosts == 0 && r.ckpt_interval > 0) {
		/* The embedded nodes run here: the same probe says why. */
		char why[512];
		if (!criu_probe(why, sizeof(why))) {
			fprintf(stderr, "mpiv: checkpoints disabled: %s; "
			    "restarts replay from the beginning\n", why);
			r.ckpt_said = true;
		}
	}
	if (r.dispatcher == NULL && r.ncs == 0 && !r.relay_only)
		r.ncs = 1;
	t0 = mono_s();
	r.results = calloc((size_t)r.nranks, sizeof(*r.results));
	r.lines = calloc((size_t)r.nranks * 2, sizeof(*r.lines));
	if (r.results == NULL || r.lines == NULL) {
		fprintf(stderr, "mpiv: out of memory\n");
		free(r.results);
		free(r.lines);
		rc = 1;
		goto out_input;
	}
	snprintf(r.job, sizeof(r.job), "?");
	r.loop = ev_default_loop(EVFLAG_AUTO);
	r.exit_code = 1;

	ev_timer_init(&r.timeout_w, run_on_timeout, r.timeout, 0.);
	r.timeout_w.data = &r;
	ev_timer_init(&r.cancel_w, run_on_cancel_wait, RUN_CANCEL_WAIT, 0.);
	r.cancel_w.data = &r;
	ev_signal_init(&r.sigint_w, run_on_signal, SIGINT);
	r.sigint_w.data = &r;
	ev_signal_start(r.loop, &r.sigint_w);
	ev_signal_init(&r.sigterm_w, run_on_signal, SIGTERM);
	r.sigterm_w.data = &r;
	ev_signal_start(r.loop, &r.sigterm_w);

	if (r.nhosts > 0) {
		rc = run_hosts_start(&r);
	} else if (r.dispatcher != NULL) {
		snprintf(r.disp_addr, sizeof(r.disp_addr), "%s", r.dispatcher);
		rc = 0;
	} else {
		rc = run_deploy_start(&r);
	}
	if (rc == 0 && run_submit(&r) == 0) {
		if (r.timeout > 0)
			ev_timer_start(r.loop, &r.timeout_w);
		run_progress_start(&r);
		ev_run(r.loop, 0);
		run_progress_stop(&r);
	} else {
		r.stopped = true;
		r.exit_code = 1;
		run_ignore_signals(&r);
		run_deploy_unwatch(&r);
	}

	if (r.tag)
		for (int i = 0; i < r.nranks; i++) {
			run_tagged(&r, i, 1, NULL, 0, true);
			run_tagged(&r, i, 2, NULL, 0, true);
		}
	run_summary(&r);
	if (r.reason[0] != '\0')
		fprintf(stderr, "mpiv: %s\n", r.reason);
	run_print_waits(&r);
	run_deploy_stop(&r);
	if (r.report != NULL && run_write_report(&r, mono_s() - t0) < 0 &&
	    r.exit_code == 0)
		r.exit_code = 1;
	if (r.timeline != NULL && run_write_timeline(&r, mono_s() - t0) < 0 &&
	    r.exit_code == 0)
		r.exit_code = 1;
	for (int i = 0; i < r.nranks * 2; i++)
		free(r.lines[i].buf);
	free(r.lines);
	free(r.results);
	free(r.rlog);
	free(r.warns);
	free(r.events);
	timeline_sizes_free(&r.sizes);
	ev_loop_destroy(r.loop);
	rc = r.exit_code;
out_input:
	for (size_t i = 0; i < r.nenv; i++)
		free(r.env[i]);
	free(r.env);
	free(r.in);
	free(r.hosts);
	return rc;
}
