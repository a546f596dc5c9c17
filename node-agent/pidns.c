/*
 * pidns.c: one process in a PID namespace of its own, so that getpid()
 * is a number we choose and every incarnation of a rank sees the same
 * one (README "What a program must not depend on").
 *
 * The tree, for a launch (pidns_forker) and a restore (criu.c) alike:
 *
 *   caller (node agent)
 *     H  the handle: the caller's child, in the caller's namespace;
 *        PR_SET_PDEATHSIG SIGKILL; unshare(CLONE_NEWPID), then
 *       I  the namespace's init, pid 1: a mount namespace of its own
 *          (MS_SLAVE, so the host's later mounts still come in and ours
 *          never go out) with the namespace's /proc on /proc, then
 *          start(): a launch writes ns_last_pid and forks the rank at
 *          the pid it wants; a restore runs criu, which restores the
 *          rank as I's child (-S) under the pid in the image
 *         R  the rank (and whatever it forks: its checkpoint clones)
 *
 * Why each piece:
 *   - R is not pid 1, so it keeps ordinary signal semantics: SIGTERM and
 *     SIGINT kill it, abort() dumps core, as outside a namespace (a pid
 *     1 ignores every signal it has no handler for, except SIGKILL and
 *     SIGSTOP from outside).
 *   - I reaps everything: an orphan of the program is I's (not the
 *     node's, which is a child subreaper outside), so is a checkpoint
 *     clone once its middle process exited. When I ends, the kernel
 *     SIGKILLs every process left in the namespace: nothing a rank
 *     started outlives it.
 *   - I cannot pass a death by signal on by dying of it (an init is
 *     immune to its own signals), so it writes the signal number on a
 *     pipe to H and H raises it on itself: the caller sees H end exactly
 *     as R did (exit code, or WIFSIGNALED with the same signal).
 *   - When R ends, I lingers (PIDNS_GRACE_MS at most) while a process of
 *     the namespace is stopped or traced, or came in from outside (its
 *     parent is not in the namespace): a checkpoint clone waiting for its
 *     dump, or under it, and the criu that the node runs inside the
 *     namespace to dump it (criu.c). A rank that ends (or is killed)
 *     right after a checkpoint thus keeps that checkpoint, as before.
 *   - The mount namespace with the namespace's /proc is what lets criu,
 *     entering both namespaces, see the clone under its pid in there and
 *     dump it as a process of its own namespace ("Can't dump a pid
 *     namespace without the process init" otherwise); the rank's own
 *     /proc/self then names its pid in there too.
 *
 * Measured here (kernel 6.18, CRIU 4.1.1): a clone in such a namespace,
 * whose session leader (the rank, setsid) is in it too, dumps from
 * inside it; an image whose pid was rewritten (criu.c) restores under
 * the new pid in a fresh namespace and that process dumps again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mono.h"
#include "pidns.h"
#include "proc.h"

#define PIDNS_GRACE_MS	10000	/* I waits this long for clones and criu */
#define PIDNS_NAP_NS	5000000	/* between two looks at the namespace */

static int pidns_probed;
static bool pidns_works;
static char pidns_why[256];

/* Reads a small /proc file into buf (NUL-terminated); length or -1. */
static ssize_t
pidns_read(const char *path, char *buf, size_t n)
{
	ssize_t r;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	return r;
}

int
pidns_set_next(pid_t pid)
{
	char buf[16];
	int fd, len, e;
	ssize_t w;

	len = snprintf(buf, sizeof(buf), "%d", (int)pid - 1);
	if ((fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	w = write(fd, buf, (size_t)len);
	e = errno;
	close(fd);
	errno = w == len ? 0 : w < 0 ? e : EIO;
	return w == len ? 0 : -1;
}

/* ---------------- probe ---------------- */

/* The probe's namespace init: what pidns_init and a launch need. */
static int
pidns_probe_child(void)
{
	pid_t c, r;
	int st;

	if (unshare(CLONE_NEWPID) < 0)
		return 1;
	if ((c = fork()) < 0)
		return 1;
	if (c == 0) {
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
			_exit(2);
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV |
		    MS_NOEXEC, NULL) < 0)
			_exit(3);
		if (pidns_set_next(PIDNS_PID_MAX) < 0)
			_exit(4);
		if ((r = fork()) < 0)
			_exit(5);
		if (r == 0)
			_exit(0);
		(void)waitpid(r, NULL, 0);
		_exit(r == PIDNS_PID_MAX ? 0 : 6);
	}
	while ((r = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	return r == c && WIFEXITED(st) ? WEXITSTATUS(st) : 7;
}

static void
pidns_probe(void)
{
	static const char *const step[] = { "", "unshare(CLONE_NEWPID)",
	    "a mount namespace", "mounting /proc", "setting ns_last_pid",
	    "fork", "a chosen pid", "the probe died" };
	const char *env = getenv("MPIV_PIDNS");
	char buf[32];
	pid_t c, r;
	int st, code;

	pidns_works = false;
	if (env != NULL && strcmp(env, "0") == 0) {
		snprintf(pidns_why, sizeof(pidns_why), "MPIV_PIDNS=0");
		return;
	}
	if (geteuid() != 0) {
		snprintf(pidns_why, sizeof(pidns_why), "not root");
		return;
	}
	if (pidns_read("/proc/sys/kernel/pid_max", buf, sizeof(buf)) > 0 &&
	    strtol(buf, NULL, 10) <= PIDNS_PID_MAX) {
		snprintf(pidns_why, sizeof(pidns_why), "kernel.pid_max %ld is "
		    "not above %d", strtol(buf, NULL, 10), PIDNS_PID_MAX);
		return;
	}
	if ((c = fork()) < 0) {
		snprintf(pidns_why, sizeof(pidns_why), "fork: %s",
		    strerror(errno));
		return;
	}
	if (c == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(pidns_probe_child());
	}
	while ((r = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	code = r == c && WIFEXITED(st) ? WEXITSTATUS(st) : 7;
	if (code != 0) {
		snprintf(pidns_why, sizeof(pidns_why), "%s failed",
		    step[code < 8 ? code : 7]);
		return;
	}
	pidns_works = true;
	snprintf(pidns_why, sizeof(pidns_why), "ranks run in pid namespaces "
	    "of their own");
}

bool
pidns_available(char *why, size_t n)
{
	if (!pidns_probed) {
		pidns_probe();
		pidns_probed = 1;
	}
	if (why != NULL && n > 0)
		snprintf(why, n, "%s", pidns_why);
	return pidns_works;
}

pid_t
pidns_rank_pid(const char *job, int rank)
{
	const unsigned span = PIDNS_PID_MAX - PIDNS_PID_MIN + 1;
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)job; *p; p++)
		h = (h ^ *p) * 16777619u;
	return (pid_t)(PIDNS_PID_MIN +
	    (h % span + (unsigned)rank % span) % span);
}

/* ---------------- the handle and the init ---------------- */

/* Whether a process of our namespace is stopped or traced (a clone
 * waiting for, or under, its dump) or entered from outside (the criu
 * dumping it): NSpid-free, from our own /proc. */
static bool
pidns_busy(void)
{
	char path[64], buf[512], *p;
	struct dirent *de;
	bool busy = false;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return false;
	while (!busy && (de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (pidns_read(path, buf, sizeof(buf)) <= 0 ||
		    (p = strrchr(buf, ')')) == NULL || p[1] != ' ' ||
		    p[2] == '\0' || p[3] != ' ')
			continue;
		busy = p[2] == 'T' || p[2] == 't' ||
		    strtol(p + 4, NULL, 10) == 0;
	}
	closedir(d);
	return busy;
}

/* In the handle or the init: the namespace cannot be made. */
static void __attribute__((noreturn))
pidns_fail_now(pidns_fail_fn fail, void *arg, int err)
{
	if (fail != NULL)
		fail(arg, err);
	_exit(PIDNS_FAILED);
}

/* Keeps fd alone open, as fd 0. */
static void
pidns_keep_only(int fd)
{
	if (fd != 0) {
		if (dup2(fd, 0) < 0)
			_exit(PIDNS_FAILED);
	}
	close_range(1, ~0u, 0);
}

/* The init (pid 1); never returns. sigw: the pipe to the handle. */
static void __attribute__((noreturn))
pidns_init(pidns_start_fn start, pidns_fail_fn fail, void *arg, int sigw)
{
	struct timespec nap = { 0, PIDNS_NAP_NS };
	unsigned char sig;
	long end;
	pid_t root, r;
	int st = 0;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	(void)prctl(PR_SET_NAME, "mpiv-init");
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) < 0)
		pidns_fail_now(fail, arg, errno);
	if ((root = start(arg)) < 0)
		_exit(PIDNS_FAILED);
	pidns_keep_only(sigw);
	for (;;) {
		r = waitpid(-1, &st, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			_exit(PIDNS_FAILED);
		if (r == root)
			break;
	}
	/* A clone still to be dumped, or the criu dumping it. */
	end = mono_ms() + PIDNS_GRACE_MS;
	while (pidns_busy() && mono_ms() < end) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		nanosleep(&nap, NULL);
	}
	if (WIFSIGNALED(st)) {
		sig = (unsigned char)WTERMSIG(st);
		if (write(0, &sig, 1) != 1)
			_exit(128 + sig);
		_exit(0);
	}
	_exit(WEXITSTATUS(st));
}

/* The handle; never returns. */
static void __attribute__((noreturn))
pidns_handle(pidns_start_fn start, pidns_fail_fn fail, void *arg,
    pid_t caller)
{
	unsigned char sig = 0;
	sigset_t none;
	int sp[2], st, s;
	pid_t init, r;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != caller)
		_exit(PIDNS_FAILED);
	(void)prctl(PR_SET_NAME, "mpiv-pidns");	/* in ps, not "mpiv" */
	if (pipe2(sp, O_CLOEXEC) < 0 || unshare(CLONE_NEWPID) < 0 ||
	    (init = fork()) < 0)
		pidns_fail_now(fail, arg, errno);
	if (init == 0) {
		close(sp[0]);
		pidns_init(start, fail, arg, sp[1]);
	}
	/* Nothing of the caller's: only the signal pipe from the init. */
	close(sp[1]);
	pidns_keep_only(sp[0]);
	while ((r = waitpid(init, &st, 0)) < 0 && errno == EINTR)
		;
	if (r != init)
		_exit(PIDNS_FAILED);
	if (WIFEXITED(st) && read(0, &sig, 1) == 1 && sig > 0 && sig < NSIG) {
		kill(getpid(), sig);
		_exit(128 + sig);	/* SIGSTOP-like signals do not end us */
	}
	if (WIFSIGNALED(st)) {	/* the init itself was killed */
		kill(getpid(), WTERMSIG(st));
		_exit(128 + WTERMSIG(st));
	}
	_exit(WEXITSTATUS(st));
}

pid_t
pidns_spawn(pidns_start_fn start, pidns_fail_fn fail, void *arg)
{
	pid_t caller = getpid(), h;

	if ((h = fork()) == 0)
		pidns_handle(start, fail, arg, caller);
	return h;
}

/* ---------------- launching a program (proc_spawn) ---------------- */

/* What the namespace's init needs to start the program. */
struct pidns_launch {
	struct proc_exec *x;
	pid_t pid;		/* the pid the program gets in there */
};

/* pidns fail callback of a launch: the namespace could not be set up. */
static void
pidns_launch_fail(void *arg, int err)
{
	struct pidns_launch *a = arg;

	proc_exec_fail(a->x, err);
}

/*
 * pidns start callback of a launch, in the namespace's init: the program
 * is forked at a->pid (nothing else forks in a namespace this young).
 */
static pid_t
pidns_launch_start(void *arg)
{
	struct pidns_launch *a = arg;
	pid_t pid;

	if (pidns_set_next(a->pid) < 0 || (pid = fork()) < 0)
		proc_exec_fail(a->x, errno);
	if (pid == 0)
		proc_exec(a->x, 1);
	if (pid != a->pid) {
		(void)kill(pid, SIGKILL);
		proc_exec_fail(a->x, EADDRINUSE);
	}
	return pid;
}

/* pidns_forker's fork: the handle, whose namespace's init starts the
   program (the struct is copied by the fork, so the stack is fine). */
static pid_t
pidns_forker_fork(struct proc_exec *x, void *arg)
{
	struct pidns_launch a = { x, *(const pid_t *)arg };

	return pidns_spawn(pidns_launch_start, pidns_launch_fail, &a);
}

static pid_t
pidns_forker_task_pid(pid_t handle, void *arg)
{
	return pidns_find(handle, *(const pid_t *)arg);
}

const struct proc_forker pidns_forker = {
	pidns_forker_fork, pidns_forker_task_pid
};

/* ---------------- finding processes ---------------- */

/* Children of pid (its first thread) as the kernel lists them, up to max. */
static int
pidns_children(pid_t pid, pid_t *out, int max)
{
	char path[64], buf[1024], *p, *end;
	int k = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if (pidns_read(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; k < max; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		out[k++] = (pid_t)v;
	}
	return k;
}

pid_t
pidns_inner_pid(pid_t pid)
{
	char path[64], buf[2048], *p, *e;
	pid_t last = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (pidns_read(path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "\nNSpid:")) == NULL)
		return -1;
	for (p += 7; *p != '\n' && *p != '\0'; p = e) {
		long v = strtol(p, &e, 10);
		if (e == p)
			break;
		last = (pid_t)v;
	}
	return last;
}

pid_t
pidns_find(pid_t handle, pid_t nspid)
{
	pid_t init[4], c[64];
	int nc, i;

	if (pidns_children(handle, init, 4) < 1)
		return -1;
	nc = pidns_children(init[0], c, 64);
	for (i = 0; i < nc; i++)
		if (nspid < 0 || pidns_inner_pid(c[i]) == nspid)
			return c[i];
	return -1;
}

/* Whether the two /proc/.../ns links differ (false when unreadable). */
static bool
pidns_links_differ(const char *a, const char *b)
{
	char l1[64], l2[64];
	ssize_t r1, r2;

	r1 = readlink(a, l1, sizeof(l1) - 1);
	r2 = readlink(b, l2, sizeof(l2) - 1);
	if (r1 <= 0 || r2 <= 0)
		return false;
	return r1 != r2 || memcmp(l1, l2, (size_t)r1) != 0;
}

bool
pidns_is_handle(pid_t pid)
{
	char p1[64], p2[64];

	snprintf(p1, sizeof(p1), "/proc/%d/ns/pid", (int)pid);
	snprintf(p2, sizeof(p2), "/proc/%d/ns/pid_for_children", (int)pid);
	return pidns_links_differ(p1, p2);
}

bool
pidns_is_other(pid_t pid)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)pid);
	return pidns_links_differ(p, "/proc/self/ns/pid");
}
