/*
 * proc: spawning helpers shared by the node agent (ranks) and `mpiv run`
 * (the embedded deployment's daemons).
 */
#ifndef MPIV_PROC_H
#define MPIV_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What proc_spawn should set up in the child. */
struct proc_spec {
	char *const *argv;	/* argv[0] resolved via PATH when it has no '/' */
	const char *path;	/* run this file instead of argv[0] (NULL: no) */
	const char *cwd;	/* NULL: stay where we are */
	const char *stdin_path;	/* fd 0, read-only, opened after the switch
				   to uid (NULL: /dev/null) */
	char *const *setenv;	/* KEY=VALUE to set (NULL-terminated or NULL) */
	const char *const *unsetenv;	/* keys to remove (NULL-terminated or NULL) */
	bool pipe_out;		/* stdout to a pipe (else stdout_fd) */
	bool pipe_err;		/* stderr to a pipe (else stderr_fd) */
	int stdout_fd;		/* used when !pipe_out; -1 = /dev/null */
	int stderr_fd;		/* used when !pipe_err; -1 = /dev/null */
	bool ctrl_pipe;		/* a pipe whose write end is the child's fd 3 */
	bool ctrl_in_pipe;	/* a pipe whose read end is the child's fd 4
				   (needs ctrl_pipe) */
	bool set_user;		/* run as uid/gid (groups: just gid) */
	uid_t uid;
	gid_t gid;
	const struct proc_forker *forker;	/* NULL: a plain fork */
	void *forker_arg;	/* passed to forker's functions */
};

/* The child's half of one proc_spawn (its fds and spec), for a forker. */
struct proc_exec;

/*
 * Another way than a plain fork to make the child of proc_spawn (the node
 * agent runs ranks as a chosen pid of a PID namespace of their own). fork
 * forks the process proc_spawn's caller will wait for (child->pid) and
 * has the program's process call proc_exec, or proc_exec_fail wherever a
 * step before it fails; it returns that pid, or -1 (errno) when the fork
 * itself failed. task_pid gives the program's host pid once it has
 * exec'd or failed (-1: gone already).
 */
struct proc_forker {
	pid_t (*fork)(struct proc_exec *x, void *arg);
	pid_t (*task_pid)(pid_t pid, void *arg);
};

/* What the parent gets back. Unused fds are -1. */
struct proc_child {
	pid_t pid;		/* the child: the program, or its handle */
	pid_t task_pid;		/* the program's host pid (-1: gone already) */
	int out_fd;		/* read end of stdout */
	int err_fd;		/* read end of stderr */
	int ctrl_fd;		/* read end of the ctrl pipe */
	int ctrl_in_fd;		/* write end of the ctrl-in pipe */
	int exec_errno;		/* 0, or errno of the failed step */
	const char *exec_step;	/* "execute", "change directory to", "set up"
				   or "open stdin" */
};

/* fd number the child sees the ctrl pipe on (MPIV_CTRL_FD). */
#define PROC_CTRL_FD 3
/* fd number the child sees the ctrl-in pipe on (MPIV_CTRL_IN_FD). */
#define PROC_CTRL_IN_FD 4

/*
 * Forks and execs spec->argv in a session of its own with stdin from
 * /dev/null (or spec->stdin_path), PR_SET_PDEATHSIG(SIGKILL), default
 * signal dispositions and only fds 0-2 (and the ctrl pipes) open. A
 * failed chdir/exec/open of stdin is reported through a close-on-exec
 * pipe: returns 0 with child->exec_errno set (the child then _exits 127
 * and must still be reaped). Returns -1 (errno) if
 * the fork itself failed; nothing is left open then.
 *
 * With spec->forker, the forker makes the child instead: child->pid is
 * what its fork returned, child->task_pid what its task_pid says, and a
 * step of its own that fails is reported like a failed exec (step
 * "set up").
 */
int proc_spawn(const struct proc_spec *spec, struct proc_child *child);

/*
 * For a forker, in the program's process: sets it up and execs the
 * program as proc_spawn says. parent is the pid its parent has as this
 * process sees it (the process dies if its parent is already gone).
 * Never returns.
 */
void proc_exec(struct proc_exec *x, pid_t parent) __attribute__((noreturn));

/* For a forker, in any process it made: reports err as the failure of
   step "set up" to proc_spawn and _exits 127. Never returns. */
void proc_exec_fail(struct proc_exec *x, int err) __attribute__((noreturn));

/*
 * Finds what exec would run for `prog` from directory `cwd` (NULL = here):
 * with a '/', the file itself; without, the first executable match in
 * $PATH. Writes the path into out. 0, or -1 with errno (ENOENT, EACCES).
 */
int proc_resolve(const char *prog, const char *cwd, char *out, size_t outlen);

/* Text for a wait status: "exit 3", "signal 9 (Killed)". */
void proc_status_str(int status, char *buf, size_t len);

/*
 * In a worker just forked from a process with an event loop (the node
 * agent's upload and fetch workers, the helper's dump workers): the
 * loop's signal handlers are not its own (SIGCHLD, SIGINT, SIGTERM back
 * to their defaults, SIGPIPE ignored), a process group of its own, and
 * death with its parent (it would hold a directory nobody removes).
 */
void proc_worker_init(void);

/* Removes a directory tree (best effort). */
void proc_rmtree(const char *path);

/* The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 't'
   traced, 'Z'...) and, in *ppid (may be NULL), its parent; 0 when the
   process is gone or unreadable. */
char proc_task_state(pid_t pid, pid_t *ppid);

#endif
