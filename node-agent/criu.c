/*
 * criu.c: running CRIU for the node agent (the image archive is
 * criu_img.c).
 *
 * CRIU is the private 4.1.1 that deploy/install-criu.sh unpacks under
 * /opt/mpiv/criu (Debian 12's 3.17 fails on this kernel). What follows
 * was measured here (kernel 6.18, CRIU 4.1.1, util-linux 2.38 unshare)
 * by tests/unit/test_criu.c and by hand:
 *
 * Dump: `criu dump -t PID -D DIR -o dump.log -v2 --shell-job
 *   --ghost-limit 3G`.
 *   --shell-job because the clone shares the node's session/process
 *   group. No --tcp-established (the clone closed its sockets; a TCP
 *   socket left open makes the dump fail clearly), no --ext-unix-sk (no
 *   unix sockets), no --leave-running: criu kills the dumped tree after a
 *   successful dump and the caller reaps the SIGKILLed clone. The pipes
 *   (fds 0-2 and the ctrl pipes, whose other ends stay outside the tree)
 *   are dumped as pipes with their unread bytes. A stopped task is
 *   recorded as stopped.
 *   --ghost-limit for the send log's spill file of a direct job's rank
 *   (libmpi-lite/dp_spill.c), which is unlinked: criu copies a deleted
 *   file's data into the image (ghost-file-N.img; holes are skipped with
 *   SEEK_DATA/SEEK_HOLE, and the limit counts the blocks the file holds,
 *   st_blocks, not its size: measured, a file of 16 MiB data and 100 GiB
 *   size makes a 16 MiB ghost image) and at a restore creates it again
 *   next to where it was (or in the nearest directory above that
 *   exists), opens it and unlinks it: the restore needs no option.
 *   criu's default limit, 1 MiB, fails every dump of a rank that has
 *   spilled. 3G: above what a spill file holds under the default log cap
 *   (MPIV_SENDLOG_MAX 1 GiB, plus what trims free while a clone is being
 *   dumped), below CRIU_MAX_ENTRY (4 GiB), the largest file a restore
 *   unpacks, so that a bigger file fails the dump rather than make an
 *   image no node can restore. criu 4.1.1 takes K, M and G suffixes,
 *   not T (with "1T" a 2 MiB ghost file failed the dump).
 *   A task in another PID namespace than ours (a rank's own, pidns.c) is
 *   dumped by a criu that entered that namespace and its mount
 *   namespace (setns, then a fork: criu_enter), with -t the task's pid in
 *   there: from our namespace criu refuses ("Can't dump a pid namespace
 *   without the process init"; with the mount namespace apart, "has
 *   unreachable sharing"). In there the clone's session leader (the rank,
 *   which leads its session) is visible, as criu needs.
 *
 * Restore, normally into our own PID namespace (measured here): a task
 *   dumped from our namespace is restored under the pid it had, which is
 *   normally free (pids grow to pid_max, 32768 here, before
 *   they wrap; criu killed the dumped clone and its parent reaped it).
 *   criu_restore_stopped then runs, as the caller's child,
 *     criu restore -d -S -D DIR -o restore.log -v2 --shell-job
 *          --inherit-fd fd[3]:pipe:[INODE] --inherit-fd fd[4]:pipe:[INODE]...
 *   -S (--restore-sibling) makes the restored task criu's sibling: the
 *   caller's own child, born so (no reparenting). So the handle IS the
 *   task: the caller waits for it directly and its wait status is the
 *   task's (criu_decode_status only decodes it), SIGKILL of the handle
 *   is SIGKILL of the task, and the task, found in state T once criu
 *   exited 0, is left stopped (it stopped itself before the dump) for
 *   criu_restore_stopped's caller. A task restored this way can be
 *   dumped again, and restored again, any number of times
 *   (tests/unit/test_criu, test_criu_generations).
 *   Death of the caller: criu dumps and restores the task's
 *   PR_SET_PDEATHSIG (libmpi-lite's clone sets SIGKILL once it is the
 *   node's child). Restored as the caller's child by -S, the task is then
 *   killed by the kernel when the caller dies; without -S criu would be
 *   the parent and its own exit would fire it. A task whose image carries
 *   no pdeath signal outlives its restorer (measured both ways).
 *   Process group and session: with --shell-job a task whose group (or
 *   session) leader is not in the dump gets criu's, i.e. the caller's; a
 *   clone that made itself a group leader (setpgid(0, 0), as libmpi-lite's
 *   does) comes back as the leader of its own group, pgid == pid, like a
 *   freshly launched rank. Its session is criu's: criu_spawn starts
 *   criu in a session of its own, so that session's id is a pid of our
 *   namespace and the restored task can be dumped again. (With the
 *   caller's session instead, a caller whose session leader lies outside
 *   the namespace, as in CI's containers, makes every dump fail with "A
 *   session leader of P(Q) is outside of its pid namespace".)
 *
 * Into a fresh PID namespace: criu_restore_as always (the rank's pid of
 *   every incarnation, pidns_rank_pid), criu_restore_stopped when the
 *   dumped pid is taken here (checked with kill(pid, 0) before, and again
 *   when criu failed). Measured: `unshare --pid --fork --mount-proc criu
 *   restore` with criu attached does not work for us, that handle exits 0
 *   whether the restored process exits 7, is SIGKILLed or SIGTERMed;
 *   criu's attached mode only does wait(NULL) / reap_zombies() and
 *   returns 0. Instead pidns_spawn (pidns.c) forks the handle H, whose
 *   namespace's init I runs the same criu command line as pid 2
 *   (criu_ns_start); the restored task keeps the image's pid inside the
 *   namespace and is I's child (-S; the pdeath signal from the image then
 *   fires with I, i.e. with the namespace). I reaps until that task ends
 *   and passes its end to H, and H ends the same way. Measured here:
 *     task exits with c        -> H: WIFEXITED, WEXITSTATUS == c
 *     task killed by SIGKILL   -> H: WIFSIGNALED, WTERMSIG == 9 (15 for TERM)
 *     caller SIGKILLs H        -> I dies (pdeath signal), so does the
 *                                 namespace; the rank's pipes reach EOF
 *     restore fails            -> criu_restore returns -1 with criu's
 *                                 error line; H is already reaped
 *   A task restored this way is dumped again from inside its namespace
 *   (test_criu_pid_taken): its session is criu's, whose id is a pid of
 *   that namespace.
 *   The pid of the image: criu restores a task under the pid in
 *   pstree.img and has no option for another. criu_image_set_pid
 *   rewrites it: pstree.img's pid, pgid, sid and thread ids equal to the
 *   old pid, and the files named after it (core-PID.img, ids-, mm-, fs-,
 *   pagemap-). Measured: nothing else in an image of a stopped clone
 *   holds the pid but the registers of the raise(SIGSTOP) it stopped in
 *   (spent values) and its memory, where glibc keeps the main thread's
 *   id (struct pthread's tid; getpid(), gettid() and raise() ask the
 *   kernel, but pthread_setaffinity_np(pthread_self(), ...) failed with
 *   ESRCH after such a restore). criu_fix_tid writes the new pid there
 *   before the task continues: the image's clear_tid_addr points at it.
 *   A clone that led its group (setpgid) or session (setsid) leads them
 *   under the new pid.
 *   --status-fd does not work for restore (criu honours it only for
 *   page-server/lazy-pages), so "restored" is: criu -d exited 0 (I tells
 *   the caller on a pipe), then the task is found as I's child whose
 *   innermost NSpid equals the root pid of pstree.img, in state T.
 *   (Matching the pid matters: criu's own kernel-feature probes fork
 *   children that stop themselves.)
 *
 * Figures (small C process, tests/unit/test_criu, tmpfs): dump 0.04-0.08
 * s, restore 0.03-0.06 s, image 180 KB raw for a tiny process (2.4 MB raw
 * / 68 KB zstd-3 for the cmocka test binary, 25 MB / 460 KB under ASan).
 *
 * The image archive is described in criu.h.
 */
#include "criu.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "log.h"
#include "mono.h"
#include "pidns.h"

#define CRIU_TIMEOUT_MS_DEFAULT 60000
#define CRIU_FD_BASE 3		/* inherited fds land at 3, 4, ... in criu */
#define CRIU_INIT_FAILED 255	/* exit code of a handle whose restore failed */
#define CRIU_GHOST_LIMIT "3G"	/* deleted files a dump carries (see above) */

static int criu_probed;		/* 0 not yet, 1 done */
static int criu_works;
static char criu_why[512];
static char criu_bin[PATH_MAX];

static void
criu_seterr(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || n == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

static int
criu_timeout_ms(void)
{
	const char *s = getenv("MPIV_CRIU_TIMEOUT");
	long v;

	if (s == NULL || *s == '\0')
		return CRIU_TIMEOUT_MS_DEFAULT;
	v = strtol(s, NULL, 10);
	if (v <= 0 || v > 3600)
		return CRIU_TIMEOUT_MS_DEFAULT;
	return (int)(v * 1000);
}

/*
 * In criu_spawn's child, with nsref: enters the PID and mount namespaces
 * of process nsref and forks; the parent (still outside) waits for the
 * child (inside) and ends the same way. Returns in the child only.
 */
static void
criu_enter(pid_t nsref)
{
	char path[64];
	int pfd, mfd, st;
	pid_t c, r;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)nsref);
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)nsref);
	mfd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd < 0 || mfd < 0 || setns(pfd, CLONE_NEWPID) < 0 ||
	    setns(mfd, CLONE_NEWNS) < 0)
		_exit(126);
	close(pfd);
	close(mfd);
	if ((c = fork()) < 0)
		_exit(126);
	if (c == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void)setsid();
		return;
	}
	while ((r = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	if (r == c && WIFSIGNALED(st)) {
		kill(getpid(), WTERMSIG(st));
		_exit(128 + WTERMSIG(st));
	}
	_exit(r == c && WIFEXITED(st) ? WEXITSTATUS(st) : 126);
}

/*
 * In criu's process, before the exec: become uid/gid but keep every
 * capability we have, as ambient ones, so that the criu we exec holds
 * them too. A dump of another user's process needs that where root
 * lacks CAP_SYS_RESOURCE (containers): the kernel lets criu read the
 * target's resource limits only with that capability or the target's
 * own ids. criu then runs with --unprivileged (it refuses a non-root
 * uid without it), its capabilities making up for root. 0 or -1.
 */
static int
criu_become(uid_t uid, gid_t gid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
	    setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0 ||
	    syscall(SYS_capget, &h, d) < 0)
		return -1;
	for (int i = 0; i < 2; i++)
		d[i].effective = d[i].inheritable = d[i].permitted;
	if (syscall(SYS_capset, &h, d) < 0)
		return -1;
	for (int cap = 0; cap < 64; cap++)
		if (d[cap / 32].permitted & (1u << (cap % 32)))
			(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE,
			    (unsigned long)cap, 0UL, 0UL);
	return 0;
}

/* The ids a dump's criu takes (criu_become); none when uid is ours. */
struct criu_owner {
	uid_t uid;
	gid_t gid;
};

/*
 * Forks and execs argv (execvp). In the child: default signal
 * dispositions and an empty mask (the node may ignore SIGPIPE/SIGCHLD,
 * which exec would pass on), stdin /dev/null, stdout and stderr to outfd
 * (or /dev/null), fds[i] at CRIU_FD_BASE + i, every other fd closed.
 * With nsref > 0, criu runs inside the PID and mount namespaces of that
 * process (criu_enter; the pid returned is then the waiting parent
 * outside, which ends as criu does). Returns the pid or -1.
 */
static pid_t
criu_spawn(char *const argv[], int outfd, const int *fds, int nfds,
    pid_t nsref, const struct criu_owner *own, char *err, size_t n)
{
	sigset_t all;
	pid_t pid;

	if (nfds < 0 || nfds > CRIU_MAX_FDS) {
		criu_seterr(err, n, "criu: too many fds to hand over (%d)", nfds);
		errno = EINVAL;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		criu_seterr(err, n, "criu: fork: %s", strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;

	/* Child: only system calls from here on. */
	int tmp[CRIU_MAX_FDS], tout, nul, i, sig;

	/* criu in a session of its own: a task it restores with --shell-job
	 * joins criu's session, whose leader (criu's pid, held while the
	 * session lives) must be visible in our PID namespace for that
	 * task's later dumps; the caller's own session leader may not be. */
	(void)setsid();
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (nsref > 0)
		criu_enter(nsref);
	/* Park every fd we keep above the targets first, so that no dup2
	 * below overwrites one still to be moved. */
	for (i = 0; i < nfds; i++)
		if ((tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 1000)) < 0)
			_exit(126);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		_exit(126);
	tout = outfd >= 0 ? fcntl(outfd, F_DUPFD_CLOEXEC, 1000) : nul;
	if (tout < 0 || dup2(nul, 0) < 0 || dup2(tout, 1) < 0 || dup2(tout, 2) < 0)
		_exit(126);
	for (i = 0; i < nfds; i++)
		if (dup2(tmp[i], CRIU_FD_BASE + i) < 0)
			_exit(126);
	close_range(CRIU_FD_BASE + nfds, ~0u, 0);
	if (own != NULL && criu_become(own->uid, own->gid) < 0)
		_exit(126);
	execvp(argv[0], argv);
	_exit(127);
}

/* Waits for pid up to timeout_ms; on timeout kills it (SIGKILL), reaps
 * it and fails with ETIMEDOUT. */
static int
criu_wait(pid_t pid, int *status, int timeout_ms)
{
	long end = mono_ms() + timeout_ms;
	struct timespec nap = { 0, 1000000 };
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (mono_ms() >= end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 10000000)
			nap.tv_nsec += 1000000;
	}
}

/* Keeps the tail of a line of criu output: drops the "(00.123456) "
 * time stamp and the newline. */
static void
criu_clean_line(char *dst, size_t n, const char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len > 0 && line[0] == '(') {
		const char *p = memchr(line, ')', len);
		if (p != NULL && p - line < 20) {
			len -= (size_t)(p + 1 - line);
			line = p + 1;
			while (len > 0 && *line == ' ')
				line++, len--;
		}
	}
	if (len >= n)
		len = n - 1;
	memcpy(dst, line, len);
	dst[len] = '\0';
}

/* Whether needle occurs in the len bytes at l. */
static int
criu_line_has(const char *l, size_t len, const char *needle)
{
	size_t nl = strlen(needle), i;

	for (i = 0; i + nl <= len; i++)
		if (memcmp(l + i, needle, nl) == 0)
			return 1;
	return 0;
}

/*
 * The most telling line of criu output in text: the last "Error" line
 * other than the closing "... FAILED." one, else the last line that is not the harmless RLIMIT_NOFILE warning.
 * Empty when there is none.
 */
static void
criu_last_error(const char *text, size_t len, char *dst, size_t n)
{
	const char *err_line = NULL, *last = NULL;
	size_t err_len = 0, last_len = 0;
	size_t i = 0;

	dst[0] = '\0';
	if (text == NULL)
		return;
	while (i < len) {
		const char *l = text + i;
		const char *nl = memchr(l, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - l) : len - i;

		i += ll + 1;
		if (ll == 0 || criu_line_has(l, ll, "RLIMIT_NOFILE"))
			continue;
		/* "Dumping FAILED." / "Restoring FAILED." say nothing new. */
		if (criu_line_has(l, ll, "Error") &&
		    (!criu_line_has(l, ll, "FAILED.") || err_line == NULL)) {
			err_line = l;
			err_len = ll;
		}
		last = l;
		last_len = ll;
	}
	if (err_line != NULL)
		criu_clean_line(dst, n, err_line, err_len);
	else if (last != NULL)
		criu_clean_line(dst, n, last, last_len);
}

/* criu_last_error over the last 64 KiB of a log file. */
static void
criu_log_error(const char *path, char *dst, size_t n)
{
	char buf[65536];
	ssize_t r;
	off_t size;
	int fd;

	dst[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size > (off_t)sizeof(buf))
		lseek(fd, size - (off_t)sizeof(buf), SEEK_SET);
	else
		lseek(fd, 0, SEEK_SET);
	r = read(fd, buf, sizeof(buf));
	close(fd);
	if (r > 0)
		criu_last_error(buf, (size_t)r, dst, n);
}

/* Runs argv with output captured (first 16 KiB) into out; returns the
 * wait status or -1. */
static int
criu_run_capture(char *const argv[], char *out, size_t outsz, size_t *outlen,
    int timeout_ms)
{
	int p[2], status = 0;
	size_t len = 0;
	long end = mono_ms() + timeout_ms;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = criu_spawn(argv, p[1], NULL, 0, 0, NULL, NULL, 0);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	for (;;) {
		struct pollfd pf = { p[0], POLLIN, 0 };
		long left = end - mono_ms();
		char sink[4096];
		ssize_t r;

		if (left <= 0 || poll(&pf, 1, (int)left) == 0)
			break;
		if (len + 1 < outsz)
			r = read(p[0], out + len, outsz - 1 - len);
		else
			r = read(p[0], sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (len + 1 < outsz)
			len += (size_t)r;
	}
	close(p[0]);
	out[len] = '\0';
	*outlen = len;
	if (criu_wait(pid, &status, (int)(end > mono_ms() ? end - mono_ms() : 1)) < 0)
		return -1;
	return status;
}

/* Version of the criu at path as major*100+minor, or -1. */
static int
criu_version(const char *path)
{
	char *argv[] = { (char *)path, "--version", NULL };
	char out[1024];
	size_t len;
	int st, maj, min;
	const char *v;

	st = criu_run_capture(argv, out, sizeof(out), &len, 10000);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	if ((v = strstr(out, "Version:")) == NULL)
		return -1;
	if (sscanf(v, "Version: %d.%d", &maj, &min) != 2)
		return -1;
	return maj * 100 + min;
}

/* First executable "criu" in PATH, into dst. */
static int
criu_find_in_path(char *dst, size_t n)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (path == NULL)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path != '\0') {
		const char *c = strchr(path, ':');
		size_t l = c ? (size_t)(c - path) : strlen(path);

		if (l > 0 && l + 6 < sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/criu", (int)l, path);
			if (access(buf, X_OK) == 0) {
				snprintf(dst, n, "%s", buf);
				return 0;
			}
		}
		path += l + (c ? 1 : 0);
	}
	return -1;
}

static void
criu_probe_run(void)
{
	const char *env = getenv("MPIV_CRIU");
	char out[16384], line[400];
	size_t len;
	int st;

	criu_works = 0;
	criu_bin[0] = '\0';
	if (env != NULL && *env != '\0') {
		if (access(env, X_OK) != 0) {
			snprintf(criu_why, sizeof(criu_why),
			    "MPIV_CRIU=%.300s is not executable: %s", env, strerror(errno));
			return;
		}
		snprintf(criu_bin, sizeof(criu_bin), "%s", env);
	} else if (access(CRIU_DEFAULT_PATH, X_OK) == 0) {
		snprintf(criu_bin, sizeof(criu_bin), "%s", CRIU_DEFAULT_PATH);
	} else if (criu_find_in_path(criu_bin, sizeof(criu_bin)) == 0) {
		int v = criu_version(criu_bin);
		if (v < 401) {
			snprintf(criu_why, sizeof(criu_why),
			    "%.300s is too old (%s; need >= 4.1, this kernel breaks 3.x): "
			    "run deploy/install-criu.sh", criu_bin,
			    v < 0 ? "version unknown" : "version < 4.1");
			criu_bin[0] = '\0';
			return;
		}
	} else {
		snprintf(criu_why, sizeof(criu_why), "no criu: neither %.300s nor criu "
		    "in PATH (run deploy/install-criu.sh as root)", CRIU_DEFAULT_PATH);
		return;
	}
	if (geteuid() != 0) {
		snprintf(criu_why, sizeof(criu_why), "not root (CRIU needs root)");
		return;
	}
	char *argv[] = { criu_bin, "check", NULL };
	st = criu_run_capture(argv, out, sizeof(out), &len, 30000);
	if (st < 0) {
		snprintf(criu_why, sizeof(criu_why), "%.300s check: %s", criu_bin,
		    strerror(errno));
		return;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		criu_last_error(out, len, line, sizeof(line));
		snprintf(criu_why, sizeof(criu_why), "%.300s check failed: %.190s", criu_bin,
		    line[0] ? line : "no output");
		return;
	}
	criu_works = 1;
	snprintf(criu_why, sizeof(criu_why), "%.300s check passed", criu_bin);
}

int
criu_probe(char *why, size_t n)
{
	if (!criu_probed) {
		criu_probe_run();
		criu_probed = 1;
	}
	criu_seterr(why, n, "%s", criu_why);
	return criu_works;
}

const char *
criu_path(void)
{
	if (!criu_probed)
		criu_probe(NULL, 0);
	return criu_bin[0] ? criu_bin : NULL;
}

int
criu_pipe_inode(pid_t pid, int fd, uint64_t *ino)
{
	char path[64], link[64], *end;
	unsigned long long v;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	r = readlink(path, link, sizeof(link) - 1);
	if (r < 0)
		return -1;
	link[r] = '\0';
	if (strncmp(link, "pipe:[", 6) != 0 || !isdigit((unsigned char)link[6])) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoull(link + 6, &end, 10);
	if (errno != 0 || strcmp(end, "]") != 0) {
		errno = EINVAL;
		return -1;
	}
	*ino = v;
	return 0;
}

/* The real uid and gid of pid. 0 or -1. */
static int
criu_task_owner(pid_t pid, struct criu_owner *own)
{
	char path[64], line[256];
	unsigned long u = 0, g = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "Uid: %lu", &u) == 1)
			found |= 1;
		else if (sscanf(line, "Gid: %lu", &g) == 1)
			found |= 2;
	}
	fclose(f);
	if (found != 3)
		return -1;
	own->uid = (uid_t)u;
	own->gid = (gid_t)g;
	return 0;
}

int
criu_dump(pid_t pid, const char *dir, char *err, size_t n)
{
	struct criu_owner own;
	char pidbuf[24], outpath[PATH_MAX], logpath[PATH_MAX], line[400], why[512];
	pid_t cp, nsref = 0, target = pid;
	int outfd, st;

	if (!criu_probe(why, sizeof(why))) {
		criu_seterr(err, n, "criu unavailable: %s", why);
		errno = ENOTSUP;
		return -1;
	}
	/* A rank in a PID namespace of its own: criu runs in there and
	   sees the process as one of its own namespace (pidns.c). */
	if (pidns_is_other(pid)) {
		if ((target = pidns_inner_pid(pid)) <= 0) {
			criu_seterr(err, n, "criu dump: pid %d is gone",
			    (int)pid);
			errno = ESRCH;
			return -1;
		}
		nsref = pid;
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
	snprintf(outpath, sizeof(outpath), "%s/dump-stderr.log", dir);
	snprintf(logpath, sizeof(logpath), "%s/dump.log", dir);
	outfd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (outfd < 0) {
		criu_seterr(err, n, "criu dump: %s: %s", outpath, strerror(errno));
		return -1;
	}
	char *argv[] = { criu_bin, "dump", "-t", pidbuf, "-D", (char *)dir,
	    "-o", "dump.log", "-v2", "--shell-job", "--ghost-limit",
	    CRIU_GHOST_LIMIT, NULL, NULL };
	/* Another user's process: dumped by a criu of that user's ids. */
	if (criu_task_owner(pid, &own) == 0 && own.uid != geteuid() &&
	    geteuid() == 0)
		argv[12] = "--unprivileged";
	cp = criu_spawn(argv, outfd, NULL, 0, nsref, argv[12] != NULL ?
	    &own : NULL, err, n);
	close(outfd);
	if (cp < 0)
		return -1;
	if (criu_wait(cp, &st, criu_timeout_ms()) < 0) {
		criu_seterr(err, n, "criu dump of pid %d: %s", (int)pid,
		    strerror(errno));
		return -1;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	criu_log_error(logpath, line, sizeof(line));
	if (line[0] == '\0')
		criu_log_error(outpath, line, sizeof(line));
	if (WIFSIGNALED(st))
		criu_seterr(err, n, "criu dump of pid %d killed by signal %d: %s",
		    (int)pid, WTERMSIG(st), line[0] ? line : "no log");
	else
		criu_seterr(err, n, "criu dump of pid %d failed (exit %d): %s",
		    (int)pid, WEXITSTATUS(st), line[0] ? line : "no log");
	errno = EIO;
	return -1;
}

/*
 * Pid of the root task recorded in dir/pstree.img: the image starts with
 * two u32 magics, then a u32 (little-endian) length and the first
 * PstreeEntry, whose field 1 (varint) is the pid. -1 when unreadable.
 */
static pid_t
criu_image_root_pid(const char *dir)
{
	unsigned char b[256];
	char path[PATH_MAX];
	uint32_t len;
	uint64_t v = 0;
	ssize_t r;
	size_t i;
	int fd, shift;

	snprintf(path, sizeof(path), "%s/pstree.img", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = read(fd, b, sizeof(b));
	close(fd);
	if (r < 14)
		return -1;
	len = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
	    (uint32_t)b[11] << 24;
	if (len < 2 || len > (size_t)r - 12 || b[12] != 0x08)
		return -1;
	for (i = 13, shift = 0; i < 12 + (size_t)len && shift < 35; i++, shift += 7) {
		v |= (uint64_t)(b[i] & 0x7f) << shift;
		if (!(b[i] & 0x80))
			return v > 0 && v <= INT_MAX ? (pid_t)v : -1;
	}
	return -1;
}

pid_t
criu_restored_task(pid_t handle)
{
	if (!pidns_is_handle(handle))
		return kill(handle, 0) == 0 ? handle : -1;
	return pidns_find(handle, -1);
}

/* Reads a varint at b[*i] (below end) into *v. 0, or -1 when cut. */
static int
criu_get_varint(const unsigned char *b, size_t end, size_t *i, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; *i < end && shift < 64; shift += 7) {
		unsigned char c = b[(*i)++];

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

static size_t
criu_put_varint(unsigned char *b, uint64_t v)
{
	size_t k = 0;

	do {
		b[k] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			b[k] |= 0x80;
		k++;
	} while (v != 0);
	return k;
}

/*
 * pstree.img with every pid, pgid, sid and thread id equal to from
 * made to, into out (its size, or 0 when the image is not what we
 * know: PstreeEntry's five uint32 fields, varints only; or to is taken
 * by another process of the tree).
 */
static size_t
criu_pstree_rewrite(const unsigned char *b, size_t len, pid_t from,
    pid_t to, unsigned char *out, size_t cap)
{
	size_t i = 8, o = 8;

	if (len < 8 || cap < len * 2 + 8)
		return 0;
	memcpy(out, b, 8);
	while (i < len) {
		uint32_t el;
		size_t end, start;

		if (len - i < 4)
			return 0;
		el = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 |
		    (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;
		i += 4;
		if (el > len - i)
			return 0;
		end = i + el;
		start = o;
		o += 4;
		while (i < end) {
			uint64_t key, v;

			if (criu_get_varint(b, end, &i, &key) < 0 ||
			    (key & 7) != 0 || key >> 3 < 1 || key >> 3 > 5 ||
			    criu_get_varint(b, end, &i, &v) < 0)
				return 0;
			if (key >> 3 == 1 && v == (uint64_t)to)
				return 0;	/* to is another task's */
			if (v == (uint64_t)from)
				v = (uint64_t)to;
			o += criu_put_varint(out + o, key);
			o += criu_put_varint(out + o, v);
		}
		el = (uint32_t)(o - start - 4);
		out[start] = (unsigned char)el;
		out[start + 1] = (unsigned char)(el >> 8);
		out[start + 2] = (unsigned char)(el >> 16);
		out[start + 3] = (unsigned char)(el >> 24);
	}
	return o;
}

int
criu_image_set_pid(const char *dir, pid_t to, char *err, size_t n)
{
	/* CRIU's image files named after a task's pid (criu/image-desc.c;
	   the last five only in images of older versions). */
	static const char *const per_pid[] = { "core", "ids", "mm", "fs",
	    "pagemap", "creds", "sigacts", "rlimit", "itimers",
	    "posix-timers" };
	unsigned char in[8192], out[2 * 8192 + 8];
	char path[PATH_MAX], tmp[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	pid_t from = criu_image_root_pid(dir);
	size_t olen;
	ssize_t r;
	int fd;

	if (from <= 0) {
		criu_seterr(err, n, "criu image: no readable pstree.img in %s",
		    dir);
		errno = EINVAL;
		return -1;
	}
	if (to == from)
		return 0;
	snprintf(path, sizeof(path), "%s/pstree.img", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto io;
	r = read(fd, in, sizeof(in));
	close(fd);
	if (r < 0)
		goto io;
	if (r == (ssize_t)sizeof(in) || (olen = criu_pstree_rewrite(in,
	    (size_t)r, from, to, out, sizeof(out))) == 0) {
		criu_seterr(err, n, "criu image: cannot give pid %d to the "
		    "process tree in %s (pstree.img not understood, or pid "
		    "taken)", (int)to, dir);
		errno = EINVAL;
		return -1;
	}
	/* The files first, so that a failure leaves pstree.img naming the
	   pid the files still have (renamed back). */
	for (size_t i = 0; i < sizeof(per_pid) / sizeof(per_pid[0]); i++) {
		snprintf(a, sizeof(a), "%s/%s-%d.img", dir, per_pid[i],
		    (int)from);
		snprintf(b, sizeof(b), "%s/%s-%d.img", dir, per_pid[i],
		    (int)to);
		if (access(a, F_OK) != 0)
			continue;
		if (access(b, F_OK) == 0 || rename(a, b) < 0) {
			int e = access(b, F_OK) == 0 ? EEXIST : errno;

			criu_seterr(err, n, "criu image: %s: %s", b,
			    strerror(e));
			while (i-- > 0) {
				snprintf(a, sizeof(a), "%s/%s-%d.img", dir,
				    per_pid[i], (int)from);
				snprintf(b, sizeof(b), "%s/%s-%d.img", dir,
				    per_pid[i], (int)to);
				(void)rename(b, a);
			}
			errno = e;
			return -1;
		}
	}
	snprintf(tmp, sizeof(tmp), "%s/pstree.img.new", dir);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0)
		goto io;
	if (write(fd, out, olen) != (ssize_t)olen) {
		close(fd);
		goto io;
	}
	close(fd);
	if (rename(tmp, path) < 0)
		goto io;
	return 0;
io:
	criu_seterr(err, n, "criu image: %s: %s", path, strerror(errno));
	return -1;
}

/*
 * Whether pid can be given to a restored task in our PID namespace:
 * below pid_max and used by nobody (no process, thread or zombie: kill
 * finds all of them).
 */
static int
criu_pid_free(pid_t pid)
{
	char buf[32];
	long max = 32768;
	ssize_t r;
	int fd;

	if ((fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC)) >= 0) {
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r > 0) {
			buf[r] = '\0';
			max = strtol(buf, NULL, 10);
		}
	}
	if (pid <= 1 || pid >= max)
		return 0;
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/* What the namespace's init needs to run criu (criu_ns_start). */
struct criu_ns {
	char *const *argv;
	int outfd;
	const int *keep;
	int nkeep;
	pid_t root;
	int ready;
};

/*
 * pidns start callback, in the namespace's init (pid 1): `criu restore
 * -d -S` as pid 2 restores the root task as the init's child (-S); one
 * byte on ready once criu exited 0. The root's pid, or -1.
 */
static pid_t
criu_ns_start(void *arg)
{
	struct criu_ns *a = arg;
	pid_t c, r;
	int st;

	c = criu_spawn(a->argv, a->outfd, a->keep, a->nkeep, 0, NULL, NULL, 0);
	/* The rank's pipes belong to the restored task alone. */
	for (int i = 0; i < a->nkeep; i++)
		close(a->keep[i]);
	close(a->outfd);
	if (c < 0)
		return -1;
	while ((r = waitpid(c, &st, 0)) < 0 && errno == EINTR)
		;
	if (r != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	if (write(a->ready, "r", 1) != 1)
		return -1;
	return a->root;
}

/* criu's most telling line for a failed restore of dir (restore.log,
 * else its stderr). */
static void
criu_restore_error(const char *dir, char *line, size_t n)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/restore.log", dir);
	criu_log_error(path, line, n);
	if (line[0] != '\0')
		return;
	snprintf(path, sizeof(path), "%s/restore-stderr.log", dir);
	criu_log_error(path, line, n);
}

/*
 * Restore into our own PID namespace: criu (our child) restores the
 * root task under its old pid as our child (-S), and exits. The task is
 * then waited for stopped. 0, or -1 with the reason in err (whatever
 * criu created is gone).
 */
static int
criu_restore_host(char *const argv[], int outfd, const int *keep, int nkeep,
    const char *dir, pid_t root, char *err, size_t n)
{
	struct timespec nap = { 0, 500000 };
	char line[400];
	long end;
	pid_t cp, ppid = -1;
	int st, e = 0;
	char state = 0;

	cp = criu_spawn(argv, outfd, keep, nkeep, 0, NULL, err, n);
	if (cp < 0)
		return -1;
	if (criu_wait(cp, &st, criu_timeout_ms()) < 0)
		e = errno;
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		/* Normally stopped already; allow criu's stop to land. */
		end = mono_ms() + 5000;
		while (mono_ms() < end) {
			state = proc_task_state(root, &ppid);
			if (state == 'T' && ppid == getpid())
				return 0;
			if (state == 0 || state == 'Z' || state == 'X' ||
			    ppid != getpid())
				break;
			nanosleep(&nap, NULL);
		}
	}
	/* Only a task of ours is killed (the pid may be a stranger's). */
	if (proc_task_state(root, &ppid) != 0 && ppid == getpid()) {
		kill(root, SIGKILL);
		while (waitpid(root, &st, 0) < 0 && errno == EINTR)
			;
	}
	criu_restore_error(dir, line, sizeof(line));
	criu_seterr(err, n, "criu restore from %s (pid %d) failed%s%s: %s", dir,
	    (int)root, e ? ": " : (state != 0 ? ": restored task not found "
	    "stopped" : ""), e ? strerror(e) : "", line[0] ? line : "no log");
	errno = e ? e : EIO;
	return -1;
}

/* Restore into a fresh PID namespace under a handle (see criu.c's
 * header). 0 with *handle and *task, or -1 with the reason in err. */
static int
criu_restore_ns(char *const argv[], int outfd, const int *keep, int nkeep,
    const char *dir, pid_t root, pid_t *handle, pid_t *task_out, char *err,
    size_t n)
{
	struct criu_ns a = { argv, outfd, keep, nkeep, root, -1 };
	struct timespec nap = { 0, 500000 };
	int rp[2], st;
	char line[400];
	long end;
	pid_t h, task = -1;
	ssize_t r;
	char c;

	if (pipe2(rp, O_CLOEXEC) < 0) {
		criu_seterr(err, n, "criu restore: pipe: %s", strerror(errno));
		return -1;
	}
	a.ready = rp[1];
	h = pidns_spawn(criu_ns_start, NULL, &a);
	close(rp[1]);
	if (h < 0) {
		criu_seterr(err, n, "criu restore: fork: %s", strerror(errno));
		close(rp[0]);
		return -1;
	}

	/* One byte once criu -d exited 0; EOF when anything failed. */
	end = mono_ms() + criu_timeout_ms();
	for (;;) {
		struct pollfd pf = { rp[0], POLLIN, 0 };
		long left = end - mono_ms();

		if (left <= 0 || poll(&pf, 1, (int)left) == 0) {
			r = -1;
			errno = ETIMEDOUT;
		} else if ((r = read(rp[0], &c, 1)) < 0 && errno == EINTR) {
			continue;
		}
		break;
	}
	close(rp[0]);
	if (r == 1) {
		/* criu is done; the task shows T once criu's stop landed. */
		end = mono_ms() + 5000;
		while (mono_ms() < end) {
			task = pidns_find(h, root);
			if (task > 0 && proc_task_state(task, NULL) == 'T')
				break;
			task = -1;
			nanosleep(&nap, NULL);
		}
	}
	if (task < 0) {
		int e = r < 0 ? errno : 0;

		kill(h, SIGKILL);
		while (waitpid(h, &st, 0) < 0 && errno == EINTR)
			;
		criu_restore_error(dir, line, sizeof(line));
		criu_seterr(err, n, "criu restore from %s failed%s%s: %s", dir,
		    e ? ": " : (r == 1 ? ": restored task not found stopped" : ""),
		    e ? strerror(e) : "", line[0] ? line : "no log");
		errno = e ? e : EIO;
		return -1;
	}
	*handle = h;
	*task_out = task;
	return 0;
}

/*
 * Field `want` of the protobuf message in b[0, len): its bytes (wire
 * type 2: *p, *plen) or its value (varint: *v). 0, or -1 when absent or
 * the message is not well formed.
 */
static int
criu_pb_field(const unsigned char *b, size_t len, unsigned want,
    const unsigned char **p, size_t *plen, uint64_t *v)
{
	size_t i = 0;
	uint64_t key, x;

	while (i < len) {
		if (criu_get_varint(b, len, &i, &key) < 0)
			return -1;
		switch (key & 7) {
		case 0:
			if (criu_get_varint(b, len, &i, &x) < 0)
				return -1;
			if (key >> 3 == want && v != NULL) {
				*v = x;
				return 0;
			}
			break;
		case 1:
			i += 8;
			break;
		case 2:
			if (criu_get_varint(b, len, &i, &x) < 0 || x > len - i)
				return -1;
			if (key >> 3 == want && p != NULL) {
				*p = b + i;
				*plen = (size_t)x;
				return 0;
			}
			i += (size_t)x;
			break;
		case 5:
			i += 4;
			break;
		default:
			return -1;
		}
	}
	return -1;
}

/*
 * A task restored under another pid than it was dumped with still has
 * the old one where the C library keeps the main thread's id (glibc's
 * struct pthread tid, which fork wrote through CLONE_CHILD_SETTID and
 * which the kernel clears at exit: the image's clear_tid_addr points at
 * it). Writes the new pid there while the task is stopped, if the old
 * one is what it holds; else leaves it (another C library). Best effort:
 * pthread_self()'s id is all that depends on it.
 */
static void
criu_fix_tid(const char *dir, pid_t task, pid_t from, pid_t to)
{
	unsigned char b[8192];
	const unsigned char *ti;
	char path[PATH_MAX];
	uint64_t addr = 0;
	uint32_t len;
	int32_t cur, nw = (int32_t)to;
	size_t tilen;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/core-%d.img", dir, (int)to);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	r = read(fd, b, sizeof(b));
	close(fd);
	if (r < 12)
		return;
	len = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
	    (uint32_t)b[11] << 24;
	/* CoreEntry.thread_info (2), ThreadInfoX86.clear_tid_addr (1) */
	if (len > (size_t)r - 12 ||
	    criu_pb_field(b + 12, len, 2, &ti, &tilen, NULL) < 0 ||
	    criu_pb_field(ti, tilen, 1, NULL, NULL, &addr) < 0 || addr == 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)task);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return;
	if (pread(fd, &cur, sizeof(cur), (off_t)addr) == sizeof(cur) &&
	    cur == (int32_t)from &&
	    pwrite(fd, &nw, sizeof(nw), (off_t)addr) != sizeof(nw))
		log_info("criu restore: pid %d keeps thread id %d in memory",
		    (int)task, (int)from);
	close(fd);
}

/*
 * criu_restore_stopped (as 0: under the image's pid, in our namespace
 * if it is free) and criu_restore_as (as > 0: the image's pid rewritten
 * to as, always in a fresh namespace).
 */
static int
criu_restore_at(const char *dir, const struct criu_fdmap *fds, int nfds,
    pid_t as, pid_t *pid_out, pid_t *task_out, char *err, size_t n)
{
	char outpath[PATH_MAX], why[512];
	char inh[CRIU_MAX_FDS][64];
	char *argv[24 + 2 * CRIU_MAX_FDS];
	int keep[CRIU_MAX_FDS], outfd, i, k = 0, rc;
	pid_t root, from, h = -1, task = -1;

	if (!criu_probe(why, sizeof(why))) {
		criu_seterr(err, n, "criu unavailable: %s", why);
		errno = ENOTSUP;
		return -1;
	}
	if (nfds < 0 || nfds > CRIU_MAX_FDS) {
		criu_seterr(err, n, "criu restore: %d fds is too many", nfds);
		errno = EINVAL;
		return -1;
	}
	if ((root = criu_image_root_pid(dir)) < 0) {
		criu_seterr(err, n, "criu restore: no readable pstree.img in %s", dir);
		errno = EINVAL;
		return -1;
	}
	from = root;
	if (as > 0 && as != root) {
		if (criu_image_set_pid(dir, as, err, n) < 0)
			return -1;
		root = as;
	}
	argv[k++] = criu_bin;
	argv[k++] = "restore";
	argv[k++] = "-d";
	argv[k++] = "-S";
	argv[k++] = "-D";
	argv[k++] = (char *)dir;
	argv[k++] = "-o";
	argv[k++] = "restore.log";
	argv[k++] = "-v2";
	argv[k++] = "--shell-job";
	for (i = 0; i < nfds; i++) {
		keep[i] = fds[i].fd;
		snprintf(inh[i], sizeof(inh[i]), "fd[%d]:pipe:[%llu]",
		    CRIU_FD_BASE + i, (unsigned long long)fds[i].ino);
		argv[k++] = "--inherit-fd";
		argv[k++] = inh[i];
	}
	argv[k] = NULL;

	snprintf(outpath, sizeof(outpath), "%s/restore-stderr.log", dir);
	outfd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (outfd < 0) {
		criu_seterr(err, n, "criu restore: %s: %s", outpath, strerror(errno));
		return -1;
	}
	if (as <= 0 && criu_pid_free(root)) {
		rc = criu_restore_host(argv, outfd, keep, nfds, dir, root, err, n);
		if (rc == 0) {
			close(outfd);
			*pid_out = root;
			if (task_out != NULL)
				*task_out = root;
			return 0;
		}
		if (criu_pid_free(root)) {
			close(outfd);
			return -1;	/* not the pid: a namespace would not help */
		}
		log_info("criu restore: pid %d was taken during the restore; "
		    "restoring into a new pid namespace", (int)root);
		if (ftruncate(outfd, 0) < 0) {
			/* the log only */
		}
	}
	rc = criu_restore_ns(argv, outfd, keep, nfds, dir, root, &h, &task, err, n);
	close(outfd);
	if (rc < 0)
		return -1;
	if (root != from)
		criu_fix_tid(dir, task, from, root);
	*pid_out = h;
	if (task_out != NULL)
		*task_out = task;
	return 0;
}

int
criu_restore_stopped(const char *dir, const struct criu_fdmap *fds, int nfds,
    pid_t *pid_out, pid_t *task_out, char *err, size_t n)
{
	return criu_restore_at(dir, fds, nfds, 0, pid_out, task_out, err, n);
}

int
criu_restore_as(const char *dir, const struct criu_fdmap *fds, int nfds,
    pid_t as, pid_t *pid_out, pid_t *task_out, char *err, size_t n)
{
	if (as <= 0) {
		criu_seterr(err, n, "criu restore: bad pid %d", (int)as);
		errno = EINVAL;
		return -1;
	}
	return criu_restore_at(dir, fds, nfds, as, pid_out, task_out, err, n);
}

int
criu_restore(const char *dir, const struct criu_fdmap *fds, int nfds,
    pid_t *pid_out, char *err, size_t n)
{
	pid_t task;

	if (criu_restore_stopped(dir, fds, nfds, pid_out, &task, err, n) < 0)
		return -1;
	if (kill(task, SIGCONT) < 0) {
		criu_seterr(err, n, "criu restore: SIGCONT to pid %d: %s", (int)task,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
criu_decode_status(int wstatus, int *code, int *sig)
{
	*code = -1;
	*sig = 0;
	if (WIFSIGNALED(wstatus)) {
		*sig = WTERMSIG(wstatus);
		return 0;
	}
	if (WIFEXITED(wstatus)) {
		*code = WEXITSTATUS(wstatus);
		return 0;
	}
	errno = EINVAL;
	return -1;
}
