/*
 * run_hosts.c: `mpiv run --hostfile FILE` and `-H HOST[:SLOTS],...`, as
 * mpirun users write them (docs/ENVIRONMENT.md, "Running on several
 * hosts"). The hosts are parsed here (Open MPI's syntax), then
 * deploy/mpiv-cluster.sh starts a deployment on them over ssh for this
 * run alone: the dispatcher, the Channel Memories and the checkpoint
 * servers on the first host, a node agent on every host with its slots
 * as capacity, a fresh cluster secret and state directory, ports from a
 * random base. The job then runs on it as with --dispatcher (the program
 * shipped unless --no-ship), and the deployment is stopped and its state
 * directories removed at the end.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "run_priv.h"
#include "seal.h"

#define RUN_HOSTS_MAX		4096	/* hosts of one run */
#define RUN_HOSTS_MAX_SLOTS	65536

/* A host name as ssh and the resolver take it: letters, digits, '.',
   '-', '_' (IPv4 addresses included), optionally after "user@". */
static bool
run_hosts_name_ok(const char *s, size_t len)
{
	const char *at = memchr(s, '@', len);
	size_t i = at != NULL ? (size_t)(at - s) + 1 : 0;

	if (at != NULL && (at == s || memchr(at + 1, '@', len - i) != NULL))
		return false;
	if (i >= len || s[i] == '-' || s[i] == '.')
		return false;
	for (; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' &&
		    s[i] != '-' && s[i] != '_')
			return false;
	for (i = 0; at != NULL && s + i < at; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' &&
		    s[i] != '-' && s[i] != '_')
			return false;
	return true;
}

/* Adds host (len bytes) with slots (0: the node's default) or merges it
   into an earlier entry of the same name. 0, or -1 (out of memory). */
static int
run_hosts_add(struct run *r, const char *s, size_t len, int slots)
{
	struct run_host *more;

	for (size_t i = 0; i < r->nhosts; i++)
		if (strlen(r->hosts[i].name) == len &&
		    memcmp(r->hosts[i].name, s, len) == 0) {
			/* "a host listed twice adds its slots" */
			if (r->hosts[i].slots > 0 && slots > 0 &&
			    r->hosts[i].slots <= RUN_HOSTS_MAX_SLOTS - slots)
				r->hosts[i].slots += slots;
			else
				r->hosts[i].slots = 0;
			return 0;
		}
	if ((more = realloc(r->hosts, (r->nhosts + 1) * sizeof(*more))) ==
	    NULL)
		return -1;
	r->hosts = more;
	snprintf(more[r->nhosts].name, sizeof(more[r->nhosts].name), "%.*s",
	    (int)len, s);
	more[r->nhosts++].slots = slots;
	return 0;
}

static int
run_hosts_slots(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 1 ||
	    v > RUN_HOSTS_MAX_SLOTS)
		return -1;
	*out = (int)v;
	return 0;
}

/* -H / --host: "host1,host2:2,user@host3". 0, or -1 after saying why. */
int
run_hosts_parse_list(struct run *r, const char *arg)
{
	const char *p = arg;

	do {
		const char *end = strchr(p, ','), *colon;
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		char num[16];
		int slots = 1;

		colon = memchr(p, ':', len);
		if (colon != NULL) {
			size_t nl = len - (size_t)(colon + 1 - p);

			if (nl == 0 || nl >= sizeof(num)) {
				fprintf(stderr, "mpiv run: -H %s: bad slot count "
				    "in \"%.*s\" (want HOST or HOST:SLOTS)\n",
				    arg, (int)len, p);
				return -1;
			}
			memcpy(num, colon + 1, nl);
			num[nl] = '\0';
			if (run_hosts_slots(num, &slots) < 0) {
				fprintf(stderr, "mpiv run: -H %s: bad slot count "
				    "in \"%.*s\" (want HOST or HOST:SLOTS)\n",
				    arg, (int)len, p);
				return -1;
			}
			len = (size_t)(colon - p);
		}
		if (len >= sizeof(r->hosts[0].name) ||
		    !run_hosts_name_ok(p, len)) {
			fprintf(stderr, "mpiv run: -H %s: bad host \"%.*s\" "
			    "(want a host name or IPv4 address, [user@]HOST"
			    "[:SLOTS])\n", arg, (int)len, p);
			return -1;
		}
		if (r->nhosts >= RUN_HOSTS_MAX ||
		    run_hosts_add(r, p, len, slots) < 0) {
			fprintf(stderr, "mpiv run: -H: too many hosts\n");
			return -1;
		}
		p = end != NULL ? end + 1 : NULL;
	} while (p != NULL);
	return 0;
}

/*
 * --hostfile FILE, Open MPI's format: one host a line, "HOST [slots=N]
 * [max_slots=N]" ('#' starts a comment; max_slots is taken and ignored),
 * a host without slots= gets its node agent's default (its CPUs). 0, or
 * -1 after saying why, with the file and line.
 */
int
run_hosts_parse_file(struct run *r, const char *path)
{
	char line[1024];
	int lineno = 0, rc = -1;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL) {
		fprintf(stderr, "mpiv run: cannot read hostfile %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *save, *w, *host;
		int slots = 0;

		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			fprintf(stderr, "mpiv run: %s:%d: line too long\n", path,
			    lineno);
			goto out;
		}
		line[strcspn(line, "#\r\n")] = '\0';
		if ((host = strtok_r(line, " \t", &save)) == NULL)
			continue;
		if (strlen(host) >= sizeof(r->hosts[0].name) ||
		    !run_hosts_name_ok(host, strlen(host))) {
			fprintf(stderr, "mpiv run: %s:%d: bad host \"%s\" (want "
			    "a host name or IPv4 address, [user@]HOST)\n", path,
			    lineno, host);
			goto out;
		}
		while ((w = strtok_r(NULL, " \t", &save)) != NULL) {
			int v;

			if (strncmp(w, "slots=", 6) == 0 &&
			    run_hosts_slots(w + 6, &v) == 0) {
				slots = v;
			} else if ((strncmp(w, "max_slots=", 10) == 0 &&
			    run_hosts_slots(w + 10, &v) == 0) ||
			    (strncmp(w, "max-slots=", 10) == 0 &&
			    run_hosts_slots(w + 10, &v) == 0)) {
				continue;
			} else {
				fprintf(stderr, "mpiv run: %s:%d: unknown or bad "
				    "\"%s\" (want HOST [slots=N] [max_slots=N])"
				    "\n", path, lineno, w);
				goto out;
			}
		}
		if (r->nhosts >= RUN_HOSTS_MAX ||
		    run_hosts_add(r, host, strlen(host), slots) < 0) {
			fprintf(stderr, "mpiv run: %s: too many hosts\n", path);
			goto out;
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "mpiv run: cannot read hostfile %s: %s\n", path,
		    strerror(errno));
		goto out;
	}
	if (r->nhosts == 0) {
		fprintf(stderr, "mpiv run: %s lists no host\n", path);
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	return rc;
}

/* Enough slots for -n when every host says how many it has. 0 or -1. */
int
run_hosts_check(const struct run *r)
{
	long total = 0;

	for (size_t i = 0; i < r->nhosts; i++) {
		if (r->hosts[i].slots == 0)
			return 0;	/* its CPUs: known on the host only */
		total += r->hosts[i].slots;
	}
	if (total < r->nranks) {
		fprintf(stderr, "mpiv run: -n %d but the hosts have %ld slot%s "
		    "(give more hosts or slots)\n", r->nranks, total,
		    total == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

/* A port base whose next RUN_HOSTS_PORTS ports nothing here listens on
   (the first host may be this one); MPIV_HOSTFILE_PORT fixes it. */
static int
run_hosts_port_base(void)
{
	const char *env = getenv("MPIV_HOSTFILE_PORT");
	int base = 0;

	if (env != NULL && run_hosts_slots(env, &base) == 0 && base >= 1024 &&
	    base <= 65535 - RUN_HOSTS_PORTS)
		return base;
	srand((unsigned)time(NULL) ^ (unsigned)getpid() << 8);
	for (int tries = 0; tries < 20; tries++) {
		bool free_ports = true;

		/* below the kernel's ephemeral range (from 32768) */
		base = 20000 + (rand() % 1200) * 10;
		for (int k = 0; k < RUN_HOSTS_PORTS && free_ports; k++) {
			struct sockaddr_in a = { .sin_family = AF_INET,
			    .sin_port = htons((uint16_t)(base + k)),
			    .sin_addr.s_addr = htonl(INADDR_ANY) };
			int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

			if (fd < 0)
				break;
			free_ports = bind(fd, (struct sockaddr *)&a,
			    sizeof(a)) == 0;
			close(fd);
		}
		if (free_ports)
			break;
	}
	return base;
}

/* Finds deploy/mpiv-cluster.sh: MPIV_CLUSTER_SCRIPT, else beside the
   binary (build tree: BIN/../../deploy; installed: BIN/../share/mpiv). */
static int
run_hosts_script(const struct run *r, char *out, size_t n)
{
	static const char *const rel[] = { "../../deploy/mpiv-cluster.sh",
	    "../share/mpiv/mpiv-cluster.sh", "mpiv-cluster.sh", NULL };
	const char *env = getenv("MPIV_CLUSTER_SCRIPT");
	char dir[PATH_MAX], *slash;

	if (env != NULL && *env != '\0') {
		snprintf(out, n, "%s", env);
		return access(out, R_OK);
	}
	snprintf(dir, sizeof(dir), "%s", r->self);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	for (int i = 0; rel[i] != NULL; i++) {
		snprintf(out, n, "%.3000s/%s", dir, rel[i]);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

static volatile sig_atomic_t run_hosts_interrupted;

static void
run_hosts_on_signal(int sig)
{
	run_hosts_interrupted = sig;
}

/*
 * Runs the cluster script with ACTION: its output goes to the log file
 * (stderr with --verbose). Returns its exit code (-1: not run).
 */
static int
run_hosts_script_run(struct run *r, const char *action)
{
	char dport[16], cmport[16], csport[16], logp[PATH_MAX];
	char *argv[32];
	int k = 0, st, fd;
	pid_t pid;

	snprintf(dport, sizeof(dport), "%d", r->hosts_port);
	snprintf(cmport, sizeof(cmport), "%d", r->hosts_port + 10);
	snprintf(csport, sizeof(csport), "%d", r->hosts_port + 20);
	snprintf(logp, sizeof(logp), "%.3000s/cluster.log", r->tmpdir);
	argv[k++] = "bash";
	argv[k++] = r->hosts_script;
	argv[k++] = "--state-dir";
	argv[k++] = r->hosts_state;
	argv[k++] = "--secret-file";
	argv[k++] = r->secret_path;
	argv[k++] = "--dispatcher-port";
	argv[k++] = dport;
	argv[k++] = "--cm-port";
	argv[k++] = cmport;
	argv[k++] = "--cs-port";
	argv[k++] = csport;
	if (r->log_level_set) {
		argv[k++] = "--log-level";
		argv[k++] = (char *)r->child_level;
	}
	if (seal_plaintext())	/* the daemons too, or they refuse us */
		argv[k++] = "--insecure-plaintext";
	if (getenv("MPIV_BIN") == NULL) {	/* else the script takes it */
		argv[k++] = "--mpiv";
		argv[k++] = r->self;
	}
	argv[k++] = (char *)action;
	argv[k++] = r->hosts_file;
	argv[k] = NULL;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		if ((fd = open("/dev/null", O_RDONLY)) >= 0)
			(void)dup2(fd, 0);
		if (!r->verbose &&
		    (fd = open(logp, O_WRONLY | O_CREAT | O_APPEND, 0600)) >= 0)
			(void)dup2(fd, 1);
		if (!r->verbose)
			(void)dup2(1, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last lines of the script's log, on stderr. */
static void
run_hosts_show_log(const struct run *r)
{
	char path[PATH_MAX], line[512], ring[12][512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%.3000s/cluster.log", r->tmpdir);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		snprintf(ring[n++ % 12], sizeof(ring[0]), "%s", line);
	fclose(f);
	for (int i = n > 12 ? n - 12 : 0; i < n; i++)
		fprintf(stderr, "mpiv:   %s", ring[i % 12]);
}

/* The cluster script's host list for our hosts. 0 or -1 (errno). */
static int
run_hosts_write_list(struct run *r)
{
	const char *first = r->hosts[0].name, *at = strchr(first, '@');
	FILE *f;

	snprintf(r->hosts_file, sizeof(r->hosts_file), "%.3000s/hosts",
	    r->tmpdir);
	if ((f = fopen(r->hosts_file, "we")) == NULL)
		return -1;
	fprintf(f, "# mpiv run --hostfile/-H: the deployment of one run\n");
	fprintf(f, "dispatcher %s\n", first);
	for (int i = 0; i < r->ncms; i++) {
		fprintf(f, "cm %s", first);
		if (r->cm_max_memory != NULL)
			fprintf(f, " -- --max-memory %s", r->cm_max_memory);
		fputc('\n', f);
	}
	for (int i = 0; i < r->ncs; i++)
		fprintf(f, "cs %s\n", first);
	for (size_t i = 0; i < r->nhosts; i++) {
		fprintf(f, "node %s", r->hosts[i].name);
		if (r->hosts[i].slots > 0)
			fprintf(f, " slots=%d", r->hosts[i].slots);
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		return -1;
	snprintf(r->disp_addr, sizeof(r->disp_addr), "%s:%d",
	    at != NULL ? at + 1 : first, r->hosts_port);
	return 0;
}

/*
 * Starts the deployment on the hosts; r->dispatcher names its
 * dispatcher. 0, or -1 with r->reason set (what did start is stopped by
 * run_deploy_stop, which calls run_hosts_stop).
 */
int
run_hosts_start(struct run *r)
{
	struct sigaction sa = { .sa_handler = run_hosts_on_signal }, oint,
	    oterm;
	char why[512];
	ssize_t n;
	int rc;

	if ((n = readlink("/proc/self/exe", r->self, sizeof(r->self) - 1)) < 0) {
		snprintf(r->reason, sizeof(r->reason), "cannot find my own "
		    "binary: %s", strerror(errno));
		return -1;
	}
	r->self[n] = '\0';
	if (run_hosts_script(r, r->hosts_script, sizeof(r->hosts_script)) <
	    0) {
		snprintf(r->reason, sizeof(r->reason), "cannot find "
		    "mpiv-cluster.sh (deploy/ of mpiv's source tree, or "
		    "MPIV_CLUSTER_SCRIPT) to start the hosts' daemons");
		return -1;
	}
	if (run_tmpdir_make(r) < 0)
		return -1;
	snprintf(r->secret_path, sizeof(r->secret_path), "%.3000s/secret",
	    r->tmpdir);
	if (auth_new_secret_file(r->secret_path, why, sizeof(why)) < 0 ||
	    auth_load_cluster(&r->keys, r->secret_path, why,
	    sizeof(why)) < 0) {
		snprintf(r->reason, sizeof(r->reason), "%.400s", why);
		return -1;
	}
	/* the same path on every host (the same home): a node's images
	   restore on any other */
	snprintf(r->hosts_state, sizeof(r->hosts_state), "~/.mpiv-run/%s",
	    strrchr(r->tmpdir, '.') + 1);
	r->hosts_port = run_hosts_port_base();
	if (run_hosts_write_list(r) < 0) {
		snprintf(r->reason, sizeof(r->reason), "cannot write %.300s: "
		    "%s", r->hosts_file, strerror(errno));
		return -1;
	}
	r->dispatcher = r->disp_addr;
	log_info("run hosts=%zu dispatcher=%s state=%s script=%s", r->nhosts,
	    r->disp_addr, r->hosts_state, r->hosts_script);
	if (r->verbose)
		fprintf(stderr, "mpiv: starting daemons on %zu host%s "
		    "(dispatcher %s)\n", r->nhosts, r->nhosts == 1 ? "" : "s",
		    r->disp_addr);
	/* Ctrl-C meanwhile: the script dies with it, we stop what began. */
	run_hosts_interrupted = 0;
	sigaction(SIGINT, &sa, &oint);
	sigaction(SIGTERM, &sa, &oterm);
	r->hosts_started = true;
	rc = run_hosts_script_run(r, "start");
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	if (run_hosts_interrupted) {
		snprintf(r->reason, sizeof(r->reason), "interrupted by signal "
		    "%d while starting the daemons", (int)run_hosts_interrupted);
		r->exit_code = 128 + run_hosts_interrupted;
		return -1;
	}
	if (rc != 0) {
		fprintf(stderr, "mpiv: the daemons did not all start on the "
		    "hosts (mpiv-cluster.sh start: exit %d):\n", rc);
		run_hosts_show_log(r);
		snprintf(r->reason, sizeof(r->reason), "deployment on the "
		    "hosts failed");
		return -1;
	}
	return 0;
}

/* Stops the deployment and removes its state directories. */
void
run_hosts_stop(struct run *r)
{
	const char *ssh = getenv("MPIV_SSH");
	int rc;

	if (!r->hosts_started)
		return;
	r->hosts_started = false;
	signal(SIGINT, SIG_IGN);	/* stop what we started, whatever comes */
	signal(SIGTERM, SIG_IGN);
	if ((rc = run_hosts_script_run(r, "stop")) != 0) {
		fprintf(stderr, "mpiv: stopping the daemons on the hosts "
		    "failed (exit %d); their logs stay in %s on each host\n",
		    rc, r->hosts_state);
		run_hosts_show_log(r);
		return;
	}
	/* logs, pid files, stores: kept only when the job failed */
	if (r->exit_code != 0) {
		fprintf(stderr, "mpiv: the daemons' logs are in %s on each "
		    "host\n", r->hosts_state);
		return;
	}
	for (size_t i = 0; i < r->nhosts; i++) {
		char cmd[sizeof(r->hosts_state) + 32];
		pid_t pid;
		int st;

		snprintf(cmd, sizeof(cmd), "rm -rf \"$HOME\"/%s",
		    r->hosts_state + 2);
		if ((pid = fork()) == 0) {
			int fd = open("/dev/null", O_RDWR);

			if (fd >= 0) {
				(void)dup2(fd, 0);
				(void)dup2(fd, 1);
				(void)dup2(fd, 2);
			}
			execl("/bin/sh", "sh", "-c", "exec $0 \"$1\" \"$2\"",
			    ssh != NULL && *ssh != '\0' ? ssh : "ssh",
			    r->hosts[i].name, cmd, (char *)NULL);
			_exit(127);
		}
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
}
