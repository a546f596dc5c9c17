/*
 * sweep.c: `mpiv sweep`, fault-injection experiments over a grid.
 *
 *   mpiv sweep [--mtbf LIST] [--ckpt-interval LIST] [--seeds N]
 *              [--chaos-max K] [--chaos-nodes] [--out DIR]
 *              [--timeout DUR] [--quick] [--force] -- RUN-ARGS...
 *
 * Runs `mpiv run RUN-ARGS` once per seed in every cell of the grid
 * MTBF x checkpoint interval (each a comma-separated list of durations,
 * 0 meaning no kills / no checkpoints), adding --chaos MTBF --chaos-seed
 * SEED and --ckpt-interval C in front of RUN-ARGS (and --tag-output).
 * The failure-free cell (0, 0) is the baseline and runs first: its first
 * run's stdout is the reference, and every other run's must hold the
 * same lines for every rank, byte for byte and in the same order (how
 * the ranks' lines interleave differs from run to run under any mpirun;
 * a run that differs is "wrong" and marks its cell failed). The
 * baseline's median wall time is what slowdowns are relative to.
 *
 * Everything lands in DIR: runs/CELL-sSEED.{out,err,json} per run (the
 * job's stdout, stderr and --report) and CELL-sSEED.res once the run is
 * judged (written last, by rename: a run with a .res is never run
 * again, so an interrupted sweep started again with the same arguments
 * resumes where it stopped); then runs.csv, cells.csv, results.json and
 * index.html (sweep_html.c: slowdown against fault rate per checkpoint
 * interval, the checkpoints' cost, the table). sweep.conf holds the
 * sweep's arguments; another sweep into the same DIR is refused unless
 * --force, which starts it over.
 *
 * Exit: 0 every run judged ok, 1 some run wrong or failed, 2 usage or
 * I/O errors.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "front.h"
#include "json.h"
#include "jsonr.h"
#include "sweep.h"

#define SW_MAX_LIST	64		/* values per list */
#define SW_MAX_SEEDS	1000

const char *const sw_status_names[] = {
	[SW_OK] = "ok", [SW_WRONG] = "wrong-output", [SW_EXIT] = "exit-code",
	[SW_TIMEOUT] = "timeout", [SW_NOREPORT] = "no-report",
};

const char *const sw_times_names[SW_T_N] = {
	[SW_T_RELAUNCH] = "relaunch", [SW_T_RESTORE] = "restore",
	[SW_T_REPLAY] = "replay",
};

static void
sweep_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv sweep [options] -- RUN-ARGS...\n"
	    "  Runs `mpiv run RUN-ARGS` in every cell of the grid MTBF x "
	    "checkpoint interval,\n"
	    "  SEEDS times each, after a failure-free baseline; compares "
	    "every output with\n"
	    "  the baseline's and writes tables and plots into DIR.\n"
	    "\n"
	    "  --mtbf LIST           mean times between kills (mpiv run "
	    "--chaos), comma-\n"
	    "                        separated; 0: no kills (default 0)\n"
	    "  --ckpt-interval LIST  checkpoint intervals; 0: none (default "
	    "0)\n"
	    "  --seeds N             runs per cell, --chaos-seed 1..N "
	    "(default 3)\n"
	    "  --chaos-max K         at most K kills per run (mpiv run "
	    "--chaos-max)\n"
	    "  --chaos-nodes         kills take whole node agents (mpiv run "
	    "--chaos-nodes)\n"
	    "  --out DIR             results (default sweep-out); a sweep "
	    "interrupted and\n"
	    "                        started again with the same arguments "
	    "resumes\n"
	    "  --timeout DUR         per run (mpiv run --timeout; default "
	    "10m)\n"
	    "  --quick               1 seed, the first two values of each "
	    "list\n"
	    "  --force               DIR holds another sweep: start over\n"
	    "\n"
	    "  Durations: 30s, 500ms, 2m, 1.5 (seconds). Example:\n"
	    "    mpiv sweep --mtbf 0,60s,30s --ckpt-interval 0,10s --seeds 3 "
	    "--out sw -- -n 9 ./bt\n"
	    "  Exit: 0 every run matched the baseline, 1 some run did not, "
	    "2 usage.\n");
}

static int
sw_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mpiv sweep: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (mpiv sweep -h)\n", stderr);
	return 2;
}

/* A duration as mpiv run takes it (run_parse_ms), or "0": ms, -1. */
static int
sw_parse_ms(const char *s, uint32_t *out)
{
	if (strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	if (*s == '-' || *s == '+' || *s == ' ')
		return -1;
	return run_parse_ms(s, out);
}

/* A comma-separated list of durations into vals/ms (strdup'ed). */
static int
sw_parse_list(const char *opt, const char *s, char **vals, uint32_t *ms,
    int *n)
{
	char *copy = strdup(s), *tok, *save = NULL;

	*n = 0;
	if (copy == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (*n == SW_MAX_LIST) {
			free(copy);
			sw_usage_error("%s: more than %d values", opt,
			    SW_MAX_LIST);
			return -1;
		}
		if (sw_parse_ms(tok, &ms[*n]) < 0) {
			sw_usage_error("%s: bad duration \"%s\" (want 0, "
			    "30s, 500ms, 2m, 1.5)", opt, tok);
			free(copy);
			return -1;
		}
		for (int i = 0; i < *n; i++)
			if (ms[i] == ms[*n]) {
				sw_usage_error("%s: \"%s\" given twice", opt,
				    tok);
				free(copy);
				return -1;
			}
		vals[*n] = strdup(tok);
		(*n)++;
	}
	free(copy);
	if (*n == 0) {
		sw_usage_error("%s: empty list", opt);
		return -1;
	}
	return 0;
}

static int
sw_mkdir(const char *path)
{
	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	fprintf(stderr, "mpiv sweep: cannot make %s: %s\n", path,
	    strerror(errno));
	return -1;
}

static char *
sw_path(const struct sweep *sw, const char *fmt, ...)
{
	static char buf[4][PATH_MAX];
	static int k;
	char *b = buf[k++ % 4];
	va_list ap;
	int n;

	n = snprintf(b, PATH_MAX, "%s/", sw->out);
	va_start(ap, fmt);
	vsnprintf(b + n, PATH_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	return b;
}

static const char *
sw_run_id(const struct sweep *sw, const struct sw_run *r)
{
	static char id[64];
	const struct sw_cell *c = &sw->cells[r->cell];

	snprintf(id, sizeof(id), "m%u-c%u-s%d", c->mtbf_ms, c->ckpt_ms,
	    r->seed);
	return id;
}

/* The whole file, NUL-terminated, or NULL. */
static char *
sw_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap + 65536 + 1);

			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap += 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	if (buf == NULL && (buf = malloc(1)) == NULL)
		return NULL;
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * sweep.conf: the arguments that define this sweep. A DIR holding
 * another sweep is refused (or, with --force, its runs are dropped).
 */
static int
sw_conf(const struct sweep *sw, char **mtbf, int nm, char **ckpt, int nc,
    bool force)
{
	char *want = NULL, *have;
	size_t wlen = 0, hlen;
	FILE *f = open_memstream(&want, &wlen);
	const char *path = sw_path(sw, "sweep.conf");
	int rc = 0;

	if (f == NULL)
		return -1;
	fprintf(f, "mtbf");
	for (int i = 0; i < nm; i++)
		fprintf(f, " %s", mtbf[i]);
	fprintf(f, "\nckpt-interval");
	for (int i = 0; i < nc; i++)
		fprintf(f, " %s", ckpt[i]);
	fprintf(f, "\nseeds %d\nchaos-max %s\n%srun", sw->seeds,
	    sw->chaos_max != NULL ? sw->chaos_max : "-", sw->chaos_nodes ?
	    "chaos-nodes\n" : "");
	for (int i = 0; i < sw->nargs; i++)
		fprintf(f, " %s", sw->args[i]);
	fprintf(f, "\n");
	fclose(f);
	if ((have = sw_slurp(path, &hlen)) != NULL &&
	    (hlen != wlen || memcmp(have, want, wlen) != 0)) {
		if (!force) {
			fprintf(stderr, "mpiv sweep: %s holds another sweep "
			    "(%s); give another --out, or --force to start "
			    "over\n", sw->out, path);
			rc = -1;
			goto out;
		}
		DIR *d = opendir(sw_path(sw, "runs"));
		struct dirent *de;

		/* every judged run of the old sweep goes: none is ours */
		while (d != NULL && (de = readdir(d)) != NULL) {
			size_t n = strlen(de->d_name);

			if (n > 4 && strcmp(de->d_name + n - 4, ".res") == 0)
				(void)unlink(sw_path(sw, "runs/%s",
				    de->d_name));
		}
		if (d != NULL)
			closedir(d);
	}
	if (have == NULL || force) {
		FILE *o = fopen(path, "w");

		if (o == NULL || fwrite(want, 1, wlen, o) != wlen ||
		    fclose(o) != 0) {
			fprintf(stderr, "mpiv sweep: cannot write %s: %s\n",
			    path, strerror(errno));
			rc = -1;
		}
	}
out:
	free(have);
	free(want);
	return rc;
}

/* ---------------- one run ---------------- */

static int
sw_open_out(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		fprintf(stderr, "mpiv sweep: cannot write %s: %s\n", path,
		    strerror(errno));
	return fd;
}

static double
sw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t sw_stop;

static void
sw_on_signal(int sig)
{
	sw_stop = sig;
}

/*
 * Runs `mpiv run` for r; its exit code, or -1 when it could not start.
 * *wall: the measured time. On SIGINT/SIGTERM the job is stopped too.
 */
static int
sw_spawn(const struct sweep *sw, const struct sw_run *r,
    const char *timeout, double *wall)
{
	const struct sw_cell *c = &sw->cells[r->cell];
	const char *id = sw_run_id(sw, r);
	char self[PATH_MAX], seed[16], *argv[32 + sw->nargs];
	int n = 0, fo, fe, st;
	ssize_t len;
	pid_t pid;
	double t0;

	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
		fprintf(stderr, "mpiv sweep: /proc/self/exe: %s\n",
		    strerror(errno));
		return -1;
	}
	self[len] = '\0';
	if (len > 10 && strcmp(self + len - 10, " (deleted)") == 0) {
		/* rebuilt under us: each run would fail to start */
		fprintf(stderr, "mpiv sweep: %.*s was replaced during the "
		    "sweep (rebuilt?): start the sweep again to resume\n",
		    (int)len - 10, self);
		return -1;
	}
	argv[n++] = self;
	argv[n++] = "run";
	argv[n++] = "--report";
	argv[n++] = sw_path(sw, "runs/%s.json", id);
	argv[n++] = "--timeout";
	argv[n++] = (char *)timeout;
	argv[n++] = "--tag-output";	/* compared rank by rank */
	if (c->mtbf_ms > 0) {
		snprintf(seed, sizeof(seed), "%d", r->seed);
		argv[n++] = "--chaos";
		argv[n++] = (char *)c->mtbf;
		argv[n++] = "--chaos-seed";
		argv[n++] = seed;
		if (sw->chaos_max != NULL) {
			argv[n++] = "--chaos-max";
			argv[n++] = (char *)sw->chaos_max;
		}
		if (sw->chaos_nodes)
			argv[n++] = "--chaos-nodes";
	}
	if (c->ckpt_ms > 0) {
		argv[n++] = "--ckpt-interval";
		argv[n++] = (char *)c->ckpt;
	}
	for (int i = 0; i < sw->nargs; i++)
		argv[n++] = sw->args[i];
	argv[n] = NULL;
	(void)unlink(sw_path(sw, "runs/%s.json", id));
	if ((fo = sw_open_out(sw_path(sw, "runs/%s.out", id))) < 0)
		return -1;
	if ((fe = sw_open_out(sw_path(sw, "runs/%s.err", id))) < 0) {
		close(fo);
		return -1;
	}
	fflush(NULL);
	t0 = sw_now();
	if ((pid = fork()) < 0) {
		fprintf(stderr, "mpiv sweep: fork: %s\n", strerror(errno));
		close(fo);
		close(fe);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul >= 0)
			dup2(nul, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(self, argv);
		_exit(127);
	}
	close(fo);
	close(fe);
	for (;;) {
		pid_t w = waitpid(pid, &st, 0);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (sw_stop)
			(void)kill(pid, SIGTERM);	/* mpiv run cleans up */
	}
	*wall = sw_now() - t0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

static int
sw_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
sw_median(double *v, int n)
{
	if (n == 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), sw_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
sw_times_add(struct sw_times *t, double v)
{
	if (!(v >= 0))
		return;
	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		double *nv = realloc(t->v, (size_t)cap * sizeof(*nv));

		if (nv == NULL)
			return;
		t->v = nv;
		t->cap = cap;
	}
	t->v[t->n++] = v;
}

static void
sw_times_free(struct sw_run *r)
{
	for (int k = 0; k < SW_T_N; k++) {
		free(r->rec[k].v);
		memset(&r->rec[k], 0, sizeof(r->rec[k]));
	}
}

/* The time of the first event kind of (rank, inc) from e on, or NAN. */
static double
sw_event_t(const struct jsonr *e, const char *kind, int rank, double inc)
{
	for (; e != NULL; e = e->next) {
		const char *k = jsonr_str(e, "kind");

		if (k != NULL && strcmp(k, kind) == 0 &&
		    (int)jsonr_num(e, "rank", -2) == rank &&
		    jsonr_num(e, "incarnation", -1) == inc)
			return jsonr_num(e, "t", NAN);
	}
	return NAN;
}

/*
 * The relaunch, restore and replay times of a run (sw_times) from the
 * events of its report rep: each launch of an incarnation above 1 is a
 * relaunch, measured against the kill of the incarnation before (its
 * exit when nothing killed it: a node lost), its started and its
 * replay_done. Events are in time order; a job that ended before a
 * relaunched rank started adds nothing for it. A replay_done heard
 * before the started (the CM's report overtook the node agent's: a
 * replay of nothing or next to nothing) counts as a replay of 0 s.
 */
static void
sw_read_times(const struct jsonr *rep, struct sw_run *r)
{
	const struct jsonr *evs = jsonr_get(rep, "events");

	sw_times_free(r);
	if (evs == NULL || evs->type != JSONR_ARR)
		return;
	for (const struct jsonr *e = evs->kids; e != NULL; e = e->next) {
		const char *k = jsonr_str(e, "kind");
		int rank = (int)jsonr_num(e, "rank", -1);
		double inc = jsonr_num(e, "incarnation", 0), t, down, run, up;

		if (k == NULL || strcmp(k, "launch") != 0 || rank < 0 ||
		    inc < 2)
			continue;
		t = jsonr_num(e, "t", NAN);
		down = sw_event_t(evs->kids, "kill", rank, inc - 1);
		if (isnan(down))
			down = sw_event_t(evs->kids, "exit", rank, inc - 1);
		run = sw_event_t(e, "started", rank, inc);
		up = sw_event_t(e, "replay_done", rank, inc);
		if (!isnan(run) && !isnan(down))
			sw_times_add(&r->rec[SW_T_RELAUNCH], run - down);
		if (!isnan(run) && jsonr_num(e, "value", 0) > 0)
			sw_times_add(&r->rec[SW_T_RESTORE], run - t);
		if (!isnan(run) && !isnan(up))
			sw_times_add(&r->rec[SW_T_REPLAY], fmax(up - run, 0));
	}
}

/* The run's figures from its --report; -1 when there is none. */
static int
sw_read_report(const struct sweep *sw, struct sw_run *r)
{
	char err[300];
	struct jsonr *j = jsonr_load(sw_path(sw, "runs/%s.json",
	    sw_run_id(sw, r)), err, sizeof(err));
	const struct jsonr *log;
	double relaunch[4096];
	int nrel = 0;

	if (j == NULL)
		return -1;
	r->wall_s = jsonr_num(j, "wall_s", r->wall_s);
	r->kills = (int)jsonr_num(j, "kills", 0);
	r->restarts = (int)jsonr_num(j, "restarts", 0);
	r->checkpoints = (int)jsonr_num(j, "checkpoints", 0);
	r->ckpt_failures = (int)jsonr_num(j, "ckpt_failures", 0);
	r->replayed_events = r->replay_s = 0;
	r->restores = 0;
	if ((log = jsonr_get(j, "restart_log")) != NULL &&
	    log->type == JSONR_ARR)
		for (const struct jsonr *e = log->kids; e != NULL;
		    e = e->next) {
			r->replayed_events += jsonr_num(e, "replayed_events",
			    0);
			r->replay_s += jsonr_num(e, "replay_s", 0);
			if (jsonr_num(e, "from_ckpt", 0) > 0)
				r->restores++;
			if (nrel < 4096)
				relaunch[nrel++] = jsonr_num(e, "relaunch_ms",
				    0);
		}
	r->relaunch_ms = nrel > 0 ? sw_median(relaunch, nrel) : 0;
	sw_read_times(j, r);
	jsonr_free(j);
	return 0;
}

static int
sw_write_res(const struct sweep *sw, const struct sw_run *r)
{
	const char *id = sw_run_id(sw, r);
	char *tmp = sw_path(sw, "runs/%s.res.tmp", id);
	char dst[PATH_MAX];
	FILE *f = fopen(tmp, "w");

	snprintf(dst, sizeof(dst), "%s", sw_path(sw, "runs/%s.res", id));
	if (f == NULL)
		return -1;
	fprintf(f, "status %s\nexit_code %d\nwall_s %.6f\nkills %d\n"
	    "restarts %d\ncheckpoints %d\nckpt_failures %d\nrestores %d\n"
	    "replayed_events %.0f\nreplay_s %.6f\nrelaunch_ms %.3f\n",
	    sw_status_names[r->status], r->exit_code, r->wall_s, r->kills,
	    r->restarts, r->checkpoints, r->ckpt_failures, r->restores,
	    r->replayed_events, r->replay_s, r->relaunch_ms);
	if (fclose(f) != 0 || rename(tmp, dst) != 0)
		return -1;
	return 0;
}

/* A run judged before (resuming): true when its .res reads whole. */
static bool
sw_load_res(const struct sweep *sw, struct sw_run *r)
{
	FILE *f = fopen(sw_path(sw, "runs/%s.res", sw_run_id(sw, r)), "r");
	char key[32], val[64], err[300];
	int seen = 0, st = -1;
	struct jsonr *rep;

	if (f == NULL)
		return false;
	while (fscanf(f, "%31s %63s", key, val) == 2) {
		seen++;
		if (strcmp(key, "status") == 0) {
			for (int i = 0; i <= SW_NOREPORT; i++)
				if (strcmp(val, sw_status_names[i]) == 0)
					st = i;
		} else if (strcmp(key, "exit_code") == 0)
			r->exit_code = atoi(val);
		else if (strcmp(key, "wall_s") == 0)
			r->wall_s = strtod(val, NULL);
		else if (strcmp(key, "kills") == 0)
			r->kills = atoi(val);
		else if (strcmp(key, "restarts") == 0)
			r->restarts = atoi(val);
		else if (strcmp(key, "checkpoints") == 0)
			r->checkpoints = atoi(val);
		else if (strcmp(key, "ckpt_failures") == 0)
			r->ckpt_failures = atoi(val);
		else if (strcmp(key, "restores") == 0)
			r->restores = atoi(val);
		else if (strcmp(key, "replayed_events") == 0)
			r->replayed_events = strtod(val, NULL);
		else if (strcmp(key, "replay_s") == 0)
			r->replay_s = strtod(val, NULL);
		else if (strcmp(key, "relaunch_ms") == 0)
			r->relaunch_ms = strtod(val, NULL);
	}
	fclose(f);
	if (st < 0 || seen < 11)
		return false;
	r->status = (enum sw_status)st;
	r->done = true;
	/* the recovery times: from the report, kept beside the verdict */
	if ((rep = jsonr_load(sw_path(sw, "runs/%s.json", sw_run_id(sw, r)),
	    err, sizeof(err))) != NULL) {
		sw_read_times(rep, r);
		jsonr_free(rep);
	}
	return true;
}

struct sw_line {
	long rank;
	size_t idx, off, len;
};

static int
sw_cmp_line(const void *a, const void *b)
{
	const struct sw_line *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * A job's --tag-output stdout, each rank's lines together in rank order
 * ("RANK: text"): the lines of different ranks interleave differently
 * from run to run (as under any mpirun), each rank's own must not. A
 * line without a tag stays with the rank before it. NULL: no memory.
 */
static char *
sw_normalize(const char *buf, size_t len, size_t *outlen)
{
	struct sw_line *v = NULL;
	size_t n = 0, cap = 0, pos = 0, o = 0;
	long rank = -1;
	char *out;

	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t ll = nl != NULL ? (size_t)(nl - l) : len - pos;
		const char *t = "]<stdout>: ";
		const char *c, *e;

		pos += ll + (nl != NULL);
		if (n == cap) {
			struct sw_line *nv = realloc(v, (cap * 2 + 64) *
			    sizeof(*v));

			if (nv == NULL) {
				free(v);
				return NULL;
			}
			v = nv;
			cap = cap * 2 + 64;
		}
		v[n].off = (size_t)(l - buf);
		v[n].len = ll;
		if (ll > 0 && l[0] == '[' &&
		    (c = memchr(l, ',', ll)) != NULL &&
		    (e = memchr(c, ']', ll - (size_t)(c - l))) != NULL &&
		    (size_t)(l + ll - e) >= strlen(t) &&
		    memcmp(e, t, strlen(t)) == 0) {
			rank = strtol(c + 1, NULL, 10);
			v[n].off = (size_t)(e + strlen(t) - buf);
			v[n].len = ll - (size_t)(e + strlen(t) - l);
		}
		v[n].rank = rank;
		v[n].idx = n;
		n++;
	}
	qsort(v, n, sizeof(*v), sw_cmp_line);
	if ((out = malloc(len + n * 24 + 1)) == NULL) {
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		o += (size_t)sprintf(out + o, "%ld: ", v[i].rank);
		memcpy(out + o, buf + v[i].off, v[i].len);
		o += v[i].len;
		out[o++] = '\n';
	}
	out[o] = '\0';
	free(v);
	*outlen = o;
	return out;
}

/*
 * Runs r and judges it against the reference output ref (NULL: r is
 * the baseline's first run, which is the reference) and the baseline's
 * exit code.
 */
static int
sw_do_run(struct sweep *sw, struct sw_run *r, const char *timeout,
    const char *ref, size_t reflen, int ref_exit)
{
	double wall = 0;
	char *out;
	size_t len = 0;
	int rc = sw_spawn(sw, r, timeout, &wall);

	if (rc < 0)
		return -1;
	r->exit_code = rc;
	r->wall_s = wall;
	if (sw_stop)
		return -1;
	if (rc == 124 || (rc >= 128 && sw_stop)) {
		r->status = SW_TIMEOUT;
		(void)sw_read_report(sw, r);
	} else if (sw_read_report(sw, r) < 0) {
		r->status = SW_NOREPORT;
	} else if (ref != NULL && rc != ref_exit) {
		r->status = SW_EXIT;
	} else if (ref != NULL) {
		char *norm = NULL;
		size_t nlen = 0;

		out = sw_slurp(sw_path(sw, "runs/%s.out", sw_run_id(sw, r)),
		    &len);
		if (out != NULL)
			norm = sw_normalize(out, len, &nlen);
		r->status = norm != NULL && nlen == reflen &&
		    memcmp(norm, ref, nlen) == 0 ? SW_OK : SW_WRONG;
		free(norm);
		free(out);
	} else {
		r->status = rc == 0 ? SW_OK : SW_EXIT;	/* the baseline */
	}
	r->done = true;
	if (sw_write_res(sw, r) < 0) {
		fprintf(stderr, "mpiv sweep: cannot write %s: %s\n",
		    sw_path(sw, "runs/%s.res", sw_run_id(sw, r)),
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------- results ---------------- */

/* Mean and median of each recovery time over the cell's runs. */
static void
sw_aggregate_times(const struct sweep *sw, struct sw_cell *c, int ci)
{
	for (int k = 0; k < SW_T_N; k++) {
		double *all = NULL, sum = 0;
		int n = 0;

		for (int s = 0; s < sw->seeds; s++)
			n += sw->runs[ci * sw->seeds + s].rec[k].n;
		c->rec_n[k] = n;
		c->rec_mean[k] = c->rec_med[k] = NAN;
		if (n == 0 || (all = malloc((size_t)n * sizeof(*all))) == NULL)
			continue;
		n = 0;
		for (int s = 0; s < sw->seeds; s++) {
			const struct sw_times *t =
			    &sw->runs[ci * sw->seeds + s].rec[k];

			for (int i = 0; i < t->n; i++) {
				all[n++] = t->v[i];
				sum += t->v[i];
			}
		}
		c->rec_mean[k] = sum / n;
		c->rec_med[k] = sw_median(all, n);
		free(all);
	}
}

/* The mean of a run's times of kind k, NAN if none. */
static double
sw_run_mean(const struct sw_run *r, int k)
{
	double sum = 0;

	for (int i = 0; i < r->rec[k].n; i++)
		sum += r->rec[k].v[i];
	return r->rec[k].n > 0 ? sum / r->rec[k].n : NAN;
}

/* A figure for a CSV: empty when there is none. */
static void
sw_csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%.4f", v);
	else
		fputc(',', f);
}

/* A figure for JSON: null when there is none. */
static void
sw_json_num(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (isfinite(v))
		json_double(j, v);
	else
		json_null(j);
}

static void
sw_aggregate(struct sweep *sw)
{
	double walls[SW_MAX_SEEDS];

	for (int ci = 0; ci < sw->ncells; ci++) {
		struct sw_cell *c = &sw->cells[ci];
		int nw = 0, n = 0;

		c->runs = c->ok = c->wrong = c->failed = 0;
		c->kills = c->restarts = c->checkpoints = c->replay_s =
		    c->restores = 0;
		c->wall_min = c->wall_max = NAN;
		for (int s = 0; s < sw->seeds; s++) {
			const struct sw_run *r = &sw->runs[ci * sw->seeds + s];

			if (!r->done)
				continue;
			c->runs++;
			if (r->status == SW_OK)
				c->ok++;
			else if (r->status == SW_WRONG)
				c->wrong++;
			else
				c->failed++;
			if (r->status == SW_OK || r->status == SW_WRONG) {
				walls[nw++] = r->wall_s;
				if (!(r->wall_s >= c->wall_min))
					c->wall_min = r->wall_s;
				if (!(r->wall_s <= c->wall_max))
					c->wall_max = r->wall_s;
			}
			c->kills += r->kills;
			c->restarts += r->restarts;
			c->checkpoints += r->checkpoints;
			c->replay_s += r->replay_s;
			c->restores += r->restores;
			n++;
		}
		if (n > 0) {
			c->kills /= n;
			c->restarts /= n;
			c->checkpoints /= n;
			c->replay_s /= n;
			c->restores /= n;
		}
		c->wall_med = sw_median(walls, nw);
		if (ci == 0)
			sw->base_wall = c->wall_med;
		sw_aggregate_times(sw, c, ci);
	}
	for (int ci = 0; ci < sw->ncells; ci++) {
		struct sw_cell *c = &sw->cells[ci];
		double b = sw->base_wall > 0 ? sw->base_wall : NAN;

		c->slow_med = c->wall_med / b;
		c->slow_min = c->wall_min / b;
		c->slow_max = c->wall_max / b;
	}
}

static double
sw_s(double ms)
{
	return ms / 1000.;
}

static int
sw_write_tables(const struct sweep *sw)
{
	FILE *f;
	struct json j;

	if ((f = fopen(sw_path(sw, "runs.csv"), "w")) == NULL)
		return -1;
	fprintf(f, "mtbf_s,ckpt_interval_s,seed,status,exit_code,wall_s,"
	    "slowdown,kills,restarts,checkpoints,ckpt_failures,restores,"
	    "replayed_events,replay_s,relaunch_ms,recoveries,relaunch_mean_s,"
	    "restore_mean_s,replay_mean_s\n");
	for (int i = 0; i < sw->nruns; i++) {
		const struct sw_run *r = &sw->runs[i];
		const struct sw_cell *c = &sw->cells[r->cell];

		if (!r->done)
			continue;
		fprintf(f, "%g,%g,%d,%s,%d,%.3f,%.3f,%d,%d,%d,%d,%d,%.0f,%.3f,"
		    "%.3f", sw_s(c->mtbf_ms), sw_s(c->ckpt_ms), r->seed,
		    sw_status_names[r->status], r->exit_code, r->wall_s,
		    r->wall_s / sw->base_wall, r->kills, r->restarts,
		    r->checkpoints, r->ckpt_failures, r->restores,
		    r->replayed_events, r->replay_s, r->relaunch_ms);
		fprintf(f, ",%d", r->rec[SW_T_RELAUNCH].n);
		for (int k = 0; k < SW_T_N; k++)
			sw_csv_num(f, sw_run_mean(r, k));
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		return -1;

	if ((f = fopen(sw_path(sw, "cells.csv"), "w")) == NULL)
		return -1;
	fprintf(f, "mtbf_s,ckpt_interval_s,runs,ok,wrong_output,failed,"
	    "wall_median_s,wall_min_s,wall_max_s,slowdown_median,"
	    "slowdown_min,slowdown_max,kills_mean,restarts_mean,"
	    "checkpoints_mean,replay_s_mean,restores_mean,recoveries,"
	    "relaunch_mean_s,relaunch_median_s,restore_mean_s,"
	    "restore_median_s,replay_mean_s,replay_median_s\n");
	for (int i = 0; i < sw->ncells; i++) {
		const struct sw_cell *c = &sw->cells[i];

		fprintf(f, "%g,%g,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
		    "%.2f,%.2f,%.2f,%.3f,%.2f", sw_s(c->mtbf_ms),
		    sw_s(c->ckpt_ms), c->runs, c->ok, c->wrong, c->failed,
		    c->wall_med, c->wall_min, c->wall_max, c->slow_med,
		    c->slow_min, c->slow_max, c->kills, c->restarts,
		    c->checkpoints, c->replay_s, c->restores);
		fprintf(f, ",%d", c->rec_n[SW_T_RELAUNCH]);
		for (int k = 0; k < SW_T_N; k++) {
			sw_csv_num(f, c->rec_mean[k]);
			sw_csv_num(f, c->rec_med[k]);
		}
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		return -1;

	if ((f = fopen(sw_path(sw, "results.json"), "w")) == NULL)
		return -1;
	json_init(&j, f);
	json_obj_begin(&j);
	json_key(&j, "run_args");
	json_arr_begin(&j);
	for (int i = 0; i < sw->nargs; i++)
		json_str(&j, sw->args[i]);
	json_arr_end(&j);
	json_key(&j, "seeds");
	json_int(&j, sw->seeds);
	json_key(&j, "baseline_wall_s");
	json_double(&j, sw->base_wall);
	json_key(&j, "cells");
	json_arr_begin(&j);
	for (int i = 0; i < sw->ncells; i++) {
		const struct sw_cell *c = &sw->cells[i];

		json_obj_begin(&j);
		json_key(&j, "mtbf_s");
		json_double(&j, sw_s(c->mtbf_ms));
		json_key(&j, "ckpt_interval_s");
		json_double(&j, sw_s(c->ckpt_ms));
		json_key(&j, "runs");
		json_int(&j, c->runs);
		json_key(&j, "ok");
		json_int(&j, c->ok);
		json_key(&j, "wrong_output");
		json_int(&j, c->wrong);
		json_key(&j, "failed");
		json_int(&j, c->failed);
		json_key(&j, "wall_median_s");
		json_double(&j, c->wall_med);
		json_key(&j, "slowdown_median");
		json_double(&j, c->slow_med);
		json_key(&j, "slowdown_min");
		json_double(&j, c->slow_min);
		json_key(&j, "slowdown_max");
		json_double(&j, c->slow_max);
		json_key(&j, "kills_mean");
		json_double(&j, c->kills);
		json_key(&j, "restarts_mean");
		json_double(&j, c->restarts);
		json_key(&j, "checkpoints_mean");
		json_double(&j, c->checkpoints);
		json_key(&j, "replay_s_mean");
		json_double(&j, c->replay_s);
		json_key(&j, "restores_mean");
		json_double(&j, c->restores);
		json_key(&j, "recoveries");
		json_int(&j, c->rec_n[SW_T_RELAUNCH]);
		for (int k = 0; k < SW_T_N; k++) {
			char key[40];

			snprintf(key, sizeof(key), "%s_mean_s",
			    sw_times_names[k]);
			sw_json_num(&j, key, c->rec_mean[k]);
			snprintf(key, sizeof(key), "%s_median_s",
			    sw_times_names[k]);
			sw_json_num(&j, key, c->rec_med[k]);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "runs");
	json_arr_begin(&j);
	for (int i = 0; i < sw->nruns; i++) {
		const struct sw_run *r = &sw->runs[i];
		const struct sw_cell *c = &sw->cells[r->cell];

		if (!r->done)
			continue;
		json_obj_begin(&j);
		json_key(&j, "mtbf_s");
		json_double(&j, sw_s(c->mtbf_ms));
		json_key(&j, "ckpt_interval_s");
		json_double(&j, sw_s(c->ckpt_ms));
		json_key(&j, "seed");
		json_int(&j, r->seed);
		json_key(&j, "status");
		json_str(&j, sw_status_names[r->status]);
		json_key(&j, "exit_code");
		json_int(&j, r->exit_code);
		json_key(&j, "wall_s");
		json_double(&j, r->wall_s);
		json_key(&j, "kills");
		json_int(&j, r->kills);
		json_key(&j, "restarts");
		json_int(&j, r->restarts);
		json_key(&j, "checkpoints");
		json_int(&j, r->checkpoints);
		json_key(&j, "restores");
		json_int(&j, r->restores);
		json_key(&j, "replay_s");
		json_double(&j, r->replay_s);
		for (int k = 0; k < SW_T_N; k++) {
			char key[40];

			/* "replay_s" is the run's total above */
			snprintf(key, sizeof(key), "%s_times_s",
			    sw_times_names[k]);
			json_key(&j, key);
			json_arr_begin(&j);
			for (int i = 0; i < r->rec[k].n; i++)
				json_double(&j, r->rec[k].v[i]);
			json_arr_end(&j);
		}
		json_key(&j, "report");
		json_str(&j, sw_path(sw, "runs/%s.json", sw_run_id(sw, r)) +
		    strlen(sw->out) + 1);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fputc('\n', f);
	return fclose(f) == 0 ? 0 : -1;
}

/* ---------------- main ---------------- */

int
sweep_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "chaos-max", required_argument, NULL, 'k' },
		{ "chaos-nodes", no_argument, NULL, 'N' },
		{ "ckpt-interval", required_argument, NULL, 'c' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "mtbf", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, 'q' },
		{ "seeds", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *mtbf_s = "0", *ckpt_s = "0", *timeout = "10m";
	char *mtbf[SW_MAX_LIST], *ckpt[SW_MAX_LIST], *ref = NULL, *end;
	uint32_t mtbf_ms[SW_MAX_LIST], ckpt_ms[SW_MAX_LIST], tms;
	int nm = 0, nc = 0, nm_all = 0, nc_all = 0, ch, rc = 2, done = 0, bad = 0;
	int ran = 0, wrong = 0, failed = 0;
	bool quick = false, force = false;
	struct sweep sw = { .out = "sweep-out", .seeds = 3 };
	size_t reflen = 0;
	struct sigaction sa;
	long v;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			ckpt_s = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'N':
			sw.chaos_nodes = true;
			break;
		case 'k':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || v < 1 || v > INT_MAX)
				return sw_usage_error("bad --chaos-max \"%s\"",
				    optarg);
			sw.chaos_max = optarg;
			break;
		case 'h':
			sweep_usage(stdout);
			return 0;
		case 'm':
			mtbf_s = optarg;
			break;
		case 'o':
			sw.out = optarg;
			break;
		case 'q':
			quick = true;
			break;
		case 's':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || v < 1 ||
			    v > SW_MAX_SEEDS)
				return sw_usage_error("bad --seeds \"%s\" (1 to "
				    "%d)", optarg, SW_MAX_SEEDS);
			sw.seeds = (int)v;
			break;
		case 't':
			if (sw_parse_ms(optarg, &tms) < 0 || tms == 0)
				return sw_usage_error("bad --timeout \"%s\"",
				    optarg);
			timeout = optarg;
			break;
		default:
			return sw_usage_error("unknown option \"%s\"",
			    argv[optind - 1]);
		}
	}
	if (optind >= argc || strcmp(argv[optind - 1], "--") != 0)
		return sw_usage_error("%s", "no job: give mpiv run's "
		    "arguments after --");
	sw.args = argv + optind;
	sw.nargs = argc - optind;
	ch = sw_parse_list("--mtbf", mtbf_s, mtbf, mtbf_ms, &nm);
	nm_all = nm;
	if (ch == 0)
		ch = sw_parse_list("--ckpt-interval", ckpt_s, ckpt, ckpt_ms,
		    &nc);
	nc_all = nc;
	if (ch < 0)
		goto out;
	/* mpiv run takes --timeout in seconds */
	{
		static char tbuf[32];

		(void)sw_parse_ms(timeout, &tms);
		snprintf(tbuf, sizeof(tbuf), "%.3f", tms / 1000.);
		timeout = tbuf;
	}
	if (quick) {
		sw.seeds = 1;
		nm = nm > 2 ? 2 : nm;
		nc = nc > 2 ? 2 : nc;
	}

	/* the grid, the baseline (0, 0) first */
	sw.cells = calloc((size_t)(nm * nc + 1), sizeof(*sw.cells));
	if (sw.cells == NULL)
		return 2;
	sw.cells[0].mtbf = sw.cells[0].ckpt = "0";
	sw.ncells = 1;
	for (int i = 0; i < nm; i++)
		for (int k = 0; k < nc; k++) {
			struct sw_cell *c;

			if (mtbf_ms[i] == 0 && ckpt_ms[k] == 0)
				continue;
			c = &sw.cells[sw.ncells++];
			c->mtbf_ms = mtbf_ms[i];
			c->ckpt_ms = ckpt_ms[k];
			c->mtbf = mtbf[i];
			c->ckpt = ckpt[k];
		}
	sw.nruns = sw.ncells * sw.seeds;
	if ((sw.runs = calloc((size_t)sw.nruns, sizeof(*sw.runs))) == NULL)
		return 2;
	for (int i = 0; i < sw.nruns; i++) {
		sw.runs[i].cell = i / sw.seeds;
		sw.runs[i].seed = i % sw.seeds + 1;
	}
	if (sw_mkdir(sw.out) < 0 || sw_mkdir(sw_path(&sw, "runs")) < 0 ||
	    sw_conf(&sw, mtbf, nm, ckpt, nc, force) < 0)
		goto out;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sw_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	printf("mpiv sweep: %d cells x %d seeds = %d runs (baseline "
	    "first), into %s\n", sw.ncells, sw.seeds, sw.nruns, sw.out);
	for (int i = 0; i < sw.nruns && !sw_stop; i++) {
		struct sw_run *r = &sw.runs[i];
		const struct sw_cell *c = &sw.cells[r->cell];
		bool resumed = sw_load_res(&sw, r);

		if (!resumed) {
			if (sw_do_run(&sw, r, timeout, ref, reflen,
			    sw.runs[0].exit_code) < 0)
				break;
			ran++;
		}
		if (i == 0) {
			if (r->status != SW_OK) {
				fprintf(stderr, "mpiv sweep: the baseline "
				    "run failed (%s, exit %d): see %s\n",
				    sw_status_names[r->status], r->exit_code,
				    sw_path(&sw, "runs/%s.err",
				    sw_run_id(&sw, r)));
				(void)unlink(sw_path(&sw, "runs/%s.res",
				    sw_run_id(&sw, r)));
				rc = 1;
				goto out;
			}
			char *raw = sw_slurp(sw_path(&sw, "runs/%s.out",
			    sw_run_id(&sw, r)), &reflen);

			if (raw == NULL || (ref = sw_normalize(raw, reflen,
			    &reflen)) == NULL) {
				free(raw);
				fprintf(stderr, "mpiv sweep: cannot read the "
				    "baseline's output\n");
				goto out;
			}
			free(raw);
		}
		done++;
		if (r->status != SW_OK)
			bad++;
		printf("[%d/%d] mtbf %s ckpt %s seed %d: %.2f s (x%.2f), "
		    "%d kills, %d restarts, %d checkpoints: %s%s\n", i + 1,
		    sw.nruns, c->mtbf, c->ckpt, r->seed, r->wall_s,
		    r->wall_s / sw.runs[0].wall_s, r->kills, r->restarts,
		    r->checkpoints, sw_status_names[r->status],
		    resumed ? " (done before)" : "");
		fflush(stdout);
	}
	sw_aggregate(&sw);
	if (sw_write_tables(&sw) < 0 ||
	    sweep_write_html(&sw, sw_path(&sw, "index.html")) < 0) {
		fprintf(stderr, "mpiv sweep: cannot write the results in "
		    "%s: %s\n", sw.out, strerror(errno));
		goto out;
	}
	if (sw_stop || done < sw.nruns) {
		printf("mpiv sweep: stopped after %d of %d runs (%d run now); "
		    "the same command resumes\n", done, sw.nruns, ran);
		rc = sw_stop ? 128 + sw_stop : 2;
		goto out;
	}
	for (int i = 0; i < sw.ncells; i++) {
		wrong += sw.cells[i].wrong;
		failed += sw.cells[i].failed;
	}
	printf("mpiv sweep: %d runs, %d ok, %d wrong output, %d failed; "
	    "%s\n", sw.nruns, sw.nruns - bad, wrong, failed,
	    sw_path(&sw, "index.html"));
	rc = bad > 0 ? 1 : 0;
out:
	free(ref);
	free(sw.cells);
	for (int i = 0; sw.runs != NULL && i < sw.nruns; i++)
		sw_times_free(&sw.runs[i]);
	free(sw.runs);
	for (int i = 0; i < nm_all; i++)
		free(mtbf[i]);
	for (int i = 0; i < nc_all; i++)
		free(ckpt[i]);
	return rc;
}
