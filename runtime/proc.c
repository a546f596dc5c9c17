/*
 * proc.c: fork/exec with pipes, used for ranks (node agent) and for the
 * daemons of `mpiv run`'s embedded deployment. How a rank's process is
 * forked into a PID namespace of its own is the node agent's business
 * (a proc_forker, node-agent/pidns.c); here it is only a hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfdyn.h"
#include "proc.h"

/* What the child writes on the error pipe when a step fails. */
struct proc_err {
	int step;		/* 0 chdir, 1 exec, 2 setup, 3 open stdin,
				   4 the program's libmpi */
	int err;
};

static void
proc_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: report a failed step and die. Never returns. */
static void __attribute__((noreturn))
proc_child_fail(int errfd, int step, int err)
{
	struct proc_err pe = { step, err };
	ssize_t r;

	do
		r = write(errfd, &pe, sizeof(pe));
	while (r < 0 && errno == EINTR);
	_exit(127);
}

/*
 * The colon-separated directories of list (changed in place; $ORIGIN is
 * prog's directory): whether one holds a libmpi.so this user can read.
 * The first that holds one it may not read goes into blocked (*nblocked
 * set), unless *nblocked was set already.
 */
static bool
proc_libmpi_scan(char *list, const char *prog, char *blocked, size_t blen,
    bool *nblocked)
{
	char full[PATH_MAX];

	for (char *d = list, *end; d != NULL; d = end) {
		size_t n;

		if ((end = strchr(d, ':')) != NULL)
			*end++ = '\0';
		if (*d == '\0' || elfdyn_dir(d, prog, full, sizeof(full) -
		    sizeof("/libmpi.so")) < 0)
			continue;
		n = strlen(full);
		memcpy(full + n, "/libmpi.so", sizeof("/libmpi.so"));
		if (access(full, R_OK) == 0)
			return true;
		if (errno == EACCES && !*nblocked) {
			snprintf(blocked, blen, "%s", full);
			*nblocked = true;
		}
	}
	return false;
}

/*
 * In the child, as the user it runs as: whether prog (a 64-bit ELF) needs
 * libmpi.so, finds one in a directory of its RUNPATH (or RPATH) that this
 * user may not read, and no readable one there or in LD_LIBRARY_PATH (the
 * loader searches that before a RUNPATH, and after an RPATH it could not
 * read). The loader would go on to the system's directories and load
 * another MPI's libmpi.so, or none: a "symbol lookup error", exit 127,
 * with nothing to say why. Fills blocked with the path; 1 when so, 0
 * otherwise (not ELF, not linked with libmpi.so, readable, not found).
 * System calls and stack buffers only.
 */
static int
proc_libmpi_blocked(const char *prog, char *blocked, size_t blen)
{
	struct elfdyn d;
	char llp[ELFDYN_PATHMAX];
	bool needs = false, isblocked = false;

	if (elfdyn_read(prog, &d) < 0 || d.path[0] == '\0')
		return 0;
	for (int i = 0; i < d.nneeded; i++)
		if (strcmp(d.needed[i], "libmpi.so") == 0)
			needs = true;
	if (!needs || proc_libmpi_scan(d.path, prog, blocked, blen,
	    &isblocked) || !isblocked)
		return 0;
	if (getenv("LD_LIBRARY_PATH") != NULL) {
		snprintf(llp, sizeof(llp), "%s", getenv("LD_LIBRARY_PATH"));
		if (proc_libmpi_scan(llp, prog, blocked, blen, &isblocked))
			return 0;
	}
	return 1;
}

/* In the child, after fork: never returns. */
static void __attribute__((noreturn))
proc_child(const struct proc_spec *spec, pid_t parent, int outw, int errw,
    int ctrlw, int ctrlr, int epw)
{
	sigset_t all;
	int devnull, fd, ep, cw = -1, cr = -1;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	/*
	 * A session of its own (and so a group of its own, pgid == pid): the
	 * session a rank's checkpoint clone belongs to must have its leader
	 * inside the PID namespace, or criu refuses the dump ("A session
	 * leader of P(Q) is outside of its pid namespace"). Ours may not
	 * (CI runs us in a namespace whose session leader is outside).
	 */
	if (setsid() < 0)
		(void)setpgid(0, 0);
	sigemptyset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void)signal(s, SIG_DFL);

	/* Move what we keep above the low fds before any dup2 clobbers. */
	if ((ep = fcntl(epw, F_DUPFD_CLOEXEC, 64)) < 0)
		_exit(127);
	if (ctrlw >= 0 && (cw = fcntl(ctrlw, F_DUPFD, 64)) < 0)
		proc_child_fail(ep, 2, errno);
	if (ctrlr >= 0 && (cr = fcntl(ctrlr, F_DUPFD, 64)) < 0)
		proc_child_fail(ep, 2, errno);
	if (outw >= 0 && (outw = fcntl(outw, F_DUPFD, 64)) < 0)
		proc_child_fail(ep, 2, errno);
	if (errw >= 0 && (errw = fcntl(errw, F_DUPFD, 64)) < 0)
		proc_child_fail(ep, 2, errno);
	if ((devnull = open("/dev/null", O_RDWR)) < 0)
		proc_child_fail(ep, 2, errno);
	if (dup2(devnull, 0) < 0 ||
	    dup2(outw >= 0 ? outw : devnull, 1) < 0 ||
	    dup2(errw >= 0 ? errw : devnull, 2) < 0)
		proc_child_fail(ep, 2, errno);
	fd = 3;
	if (cw >= 0) {
		if (dup2(cw, PROC_CTRL_FD) < 0)
			proc_child_fail(ep, 2, errno);
		fd = PROC_CTRL_FD + 1;
		if (cr >= 0) {
			if (dup2(cr, PROC_CTRL_IN_FD) < 0)
				proc_child_fail(ep, 2, errno);
			fd = PROC_CTRL_IN_FD + 1;
		}
	}
	if (dup2(ep, fd) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		proc_child_fail(ep, 2, errno);
	ep = fd;
	for (int i = ep + 1; i < 1024; i++)
		(void)close(i);
	(void)close_range(1024, ~0u, 0);

	if (spec->unsetenv != NULL)
		for (const char *const *k = spec->unsetenv; *k != NULL; k++)
			(void)unsetenv(*k);
	if (spec->setenv != NULL)
		for (char *const *e = spec->setenv; *e != NULL; e++)
			(void)putenv(*e);
	/* The user's identity before chdir, so that its rights, not ours,
	   decide where it may go and what it may run. */
	if (spec->set_user && (setgroups(1, &spec->gid) < 0 ||
	    setgid(spec->gid) < 0 || setuid(spec->uid) < 0))
		proc_child_fail(ep, 2, errno);
	/* A change of ids clears the parent-death signal: set it again (and
	   die now if the parent went meanwhile). */
	if (spec->set_user && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    getppid() != parent))
		_exit(127);
	if (spec->stdin_path != NULL) {
		if ((fd = open(spec->stdin_path, O_RDONLY | O_CLOEXEC)) < 0)
			proc_child_fail(ep, 3, errno);
		if (dup2(fd, 0) < 0)
			proc_child_fail(ep, 3, errno);
		(void)close(fd);
	}
	if (spec->cwd != NULL && *spec->cwd != '\0' && chdir(spec->cwd) < 0)
		proc_child_fail(ep, 0, errno);
	if (spec->set_user) {
		const char *prog = spec->path != NULL ? spec->path :
		    strchr(spec->argv[0], '/') != NULL ? spec->argv[0] : NULL;
		char blocked[PATH_MAX];

		if (prog != NULL && proc_libmpi_blocked(prog, blocked,
		    sizeof(blocked))) {
			dprintf(2, "mpiv: %s is linked with %s, which this "
			    "rank's user (uid %u) cannot read: make it "
			    "readable to that user, give the node agent a "
			    "--user that can read it, or link the program "
			    "with MPIVCC_STATIC=1\n", spec->argv[0], blocked,
			    (unsigned)getuid());
			proc_child_fail(ep, 4, EACCES);
		}
	}
	if (spec->path != NULL)
		execv(spec->path, spec->argv);
	else
		execvp(spec->argv[0], spec->argv);
	proc_child_fail(ep, 1, errno);
}

/* What the program's process needs from proc_spawn (see proc.h). */
struct proc_exec {
	const struct proc_spec *spec;
	int outw, errw, ctrlw, ctrlr, epw;
};

void
proc_exec(struct proc_exec *x, pid_t parent)
{
	proc_child(x->spec, parent, x->outw, x->errw, x->ctrlw, x->ctrlr,
	    x->epw);
}

void
proc_exec_fail(struct proc_exec *x, int err)
{
	proc_child_fail(x->epw, 2, err);
}

int
proc_spawn(const struct proc_spec *spec, struct proc_child *child)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int ctrlp[2] = { -1, -1 }, ep[2] = { -1, -1 }, inp[2] = { -1, -1 };
	int outw, errw, saved;
	struct proc_err pe;
	pid_t parent = getpid(), pid;
	ssize_t r;

	child->pid = child->task_pid = -1;
	child->out_fd = child->err_fd = child->ctrl_fd = -1;
	child->ctrl_in_fd = -1;
	child->exec_errno = 0;
	child->exec_step = "execute";
	if ((spec->pipe_out && pipe2(outp, O_CLOEXEC) < 0) ||
	    (spec->pipe_err && pipe2(errp, O_CLOEXEC) < 0) ||
	    (spec->ctrl_pipe && pipe2(ctrlp, O_CLOEXEC) < 0) ||
	    (spec->ctrl_pipe && spec->ctrl_in_pipe &&
	    pipe2(inp, O_CLOEXEC) < 0) ||
	    pipe2(ep, O_CLOEXEC) < 0)
		goto out_close;
	outw = spec->pipe_out ? outp[1] : spec->stdout_fd;
	errw = spec->pipe_err ? errp[1] : spec->stderr_fd;
	if (spec->forker != NULL) {
		struct proc_exec x = { spec, outw, errw, ctrlp[1], inp[0],
		    ep[1] };

		if ((pid = spec->forker->fork(&x, spec->forker_arg)) < 0)
			goto out_close;
	} else {
		if ((pid = fork()) < 0)
			goto out_close;
		if (pid == 0)
			proc_child(spec, parent, outw, errw, ctrlp[1], inp[0],
			    ep[1]);
	}

	/* No setpgid(pid, pid) here: it would make the child a group leader
	 * and its setsid fail. The read below waits for the exec anyway, so
	 * nothing can killpg the child before its group exists. */
	proc_close(&outp[1]);
	proc_close(&errp[1]);
	proc_close(&ctrlp[1]);
	proc_close(&inp[0]);
	proc_close(&ep[1]);
	do
		r = read(ep[0], &pe, sizeof(pe));
	while (r < 0 && errno == EINTR);
	proc_close(&ep[0]);
	child->pid = pid;
	/* Past the exec (or its failure): the program exists (under what
	   the forker made), or has already ended. */
	child->task_pid = spec->forker != NULL ?
	    spec->forker->task_pid(pid, spec->forker_arg) : pid;
	child->out_fd = outp[0];
	child->err_fd = errp[0];
	child->ctrl_fd = ctrlp[0];
	child->ctrl_in_fd = inp[1];
	if (r == (ssize_t)sizeof(pe)) {
		child->exec_errno = pe.err != 0 ? pe.err : EIO;
		child->exec_step = pe.step == 0 ? "change directory to" :
		    pe.step == 1 ? "execute" : pe.step == 3 ? "open stdin" :
		    pe.step == 4 ? "load the MPI library of" : "set up";
	}
	return 0;

out_close:
	saved = errno;
	proc_close(&outp[0]);
	proc_close(&outp[1]);
	proc_close(&errp[0]);
	proc_close(&errp[1]);
	proc_close(&ctrlp[0]);
	proc_close(&ctrlp[1]);
	proc_close(&inp[0]);
	proc_close(&inp[1]);
	proc_close(&ep[0]);
	proc_close(&ep[1]);
	errno = saved;
	return -1;
}

void
proc_worker_init(void)
{
	signal(SIGCHLD, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* True when path names an executable regular file; errno otherwise. */
static bool
proc_is_exec(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		errno = EACCES;
		return false;
	}
	return access(path, X_OK) == 0;
}

int
proc_resolve(const char *prog, const char *cwd, char *out, size_t outlen)
{
	const char *path, *p, *end;
	char buf[PATH_MAX];
	int err = ENOENT;

	if (*prog == '\0') {
		errno = ENOENT;
		return -1;
	}
	if (strchr(prog, '/') != NULL) {
		if (prog[0] == '/' || cwd == NULL || *cwd == '\0')
			snprintf(buf, sizeof(buf), "%s", prog);
		else
			snprintf(buf, sizeof(buf), "%s/%s", cwd, prog);
		if (!proc_is_exec(buf))
			return -1;
		snprintf(out, outlen, "%s", buf);
		return 0;
	}
	if ((path = getenv("PATH")) == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (end == p)
			snprintf(buf, sizeof(buf), "%s/%s",
			    cwd != NULL ? cwd : ".", prog);
		else if (*p != '/' && cwd != NULL)
			snprintf(buf, sizeof(buf), "%s/%.*s/%s", cwd,
			    (int)(end - p), p, prog);
		else
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)(end - p), p,
			    prog);
		if (proc_is_exec(buf)) {
			snprintf(out, outlen, "%s", buf);
			return 0;
		}
		if (errno == EACCES)
			err = EACCES;
		if (*end == '\0')
			break;
	}
	errno = err;
	return -1;
}

void
proc_status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
}

static int
proc_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)remove(path);
	return 0;
}

void
proc_rmtree(const char *path)
{
	(void)nftw(path, proc_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char
proc_task_state(pid_t pid, pid_t *ppid)
{
	char path[64], buf[512], *p;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	/* the name may hold spaces and parentheses: the last ')' ends it */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return 0;
	if (ppid != NULL)
		*ppid = p[3] == ' ' ? (pid_t)strtol(p + 4, NULL, 10) : -1;
	return p[2];
}
