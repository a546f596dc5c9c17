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
	char *const *setenv;	/* KEY=VALUE to set (NULL-terminated or NULL) */
	const char *const *unsetenv;	/* keys to remove (NULL-terminated or NULL) */
	bool pipe_out;		/* stdout to a pipe (else stdout_fd) */
	bool pipe_err;		/* stderr to a pipe (else stderr_fd) */
	int stdout_fd;		/* used when !pipe_out; -1 = /dev/null */
	int stderr_fd;		/* used when !pipe_err; -1 = /dev/null */
	bool ctrl_pipe;		/* a pipe whose write end is the child's fd 3 */
	bool ctrl_in_pipe;	/* a pipe whose read end is the child's fd 4
				   (needs ctrl_pipe) */
	pid_t ns_pid;		/* > 0: run as this pid of a PID namespace of
				   its own, under a handle (pidns.h) */
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
	const char *exec_step;	/* "execute" or "change directory to" */
};

/* fd number the child sees the ctrl pipe on (MPIV_CTRL_FD). */
#define PROC_CTRL_FD 3
/* fd number the child sees the ctrl-in pipe on (MPIV_CTRL_IN_FD). */
#define PROC_CTRL_IN_FD 4

/*
 * Forks and execs spec->argv in a session of its own with stdin from
 * /dev/null, PR_SET_PDEATHSIG(SIGKILL), default signal dispositions and
 * only fds 0-2 (and the ctrl pipes) open. A failed chdir/exec is reported
 * through a close-on-exec pipe: returns 0 with child->exec_errno set (the
 * child then _exits 127 and must still be reaped). Returns -1 (errno) if
 * the fork itself failed; nothing is left open then.
 *
 * With spec->ns_pid, the program runs as that pid in a PID namespace of
 * its own (pidns_spawn): child->pid is then the handle, which ends as
 * the program does and whose SIGKILL ends the namespace, and
 * child->task_pid the program's host pid; a namespace that cannot be
 * set up is reported like a failed exec (step "set up").
 */
int proc_spawn(const struct proc_spec *spec, struct proc_child *child);

/*
 * Finds what exec would run for `prog` from directory `cwd` (NULL = here):
 * with a '/', the file itself; without, the first executable match in
 * $PATH. Writes the path into out. 0, or -1 with errno (ENOENT, EACCES).
 */
int proc_resolve(const char *prog, const char *cwd, char *out, size_t outlen);

/* Text for a wait status: "exit 3", "signal 9 (Killed)". */
void proc_status_str(int status, char *buf, size_t len);

/* Removes a directory tree (best effort). */
void proc_rmtree(const char *path);

#endif
