/*
 * pidns: a process alone in a PID namespace of its own, under a handle,
 * so that a rank sees the same pid in every incarnation (fresh launch,
 * re-execution, CRIU restore). Used by node.c (launching ranks, through
 * proc_spawn and pidns_forker) and criu.c (restoring them). See pidns.c
 * for the process tree, what the namespace's init does and what was
 * measured.
 */
#ifndef MPIV_PIDNS_H
#define MPIV_PIDNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proc.h"

/* The pids ranks get (pidns_rank_pid): [PIDNS_PID_MIN, PIDNS_PID_MAX]. */
#define PIDNS_PID_MIN	1000
#define PIDNS_PID_MAX	30999
/* Exit code of a handle whose namespace could not be set up. */
#define PIDNS_FAILED	255

/*
 * Whether this process can run ranks in PID namespaces of their own
 * (CAP_SYS_ADMIN: new PID and mount namespaces, /proc mounted, a chosen
 * pid; pid_max above PIDNS_PID_MAX). Probed once by forking a child
 * that tries; MPIV_PIDNS=0 turns it off. why (may be NULL) gets the
 * reason it is off, or what works.
 */
bool pidns_available(char *why, size_t n);

/*
 * The pid every incarnation of (job, rank) sees: a function of the job
 * id and the rank only (the same on every node), distinct for the ranks
 * of a job, spread over PIDNS_PID_MIN..PIDNS_PID_MAX between jobs.
 */
pid_t pidns_rank_pid(const char *job, int rank);

/*
 * What the namespace's init runs to start the one process it serves:
 * called in the init (pid 1, after its mounts), it forks that process
 * and returns its pid in the namespace, or -1 (the handle then ends
 * with PIDNS_FAILED). When it returns, the init closes every fd it has.
 */
typedef pid_t (*pidns_start_fn)(void *arg);

/* Called instead when the handle or the init cannot set the namespace
 * up (err: the errno); may _exit itself after telling the caller why. */
typedef void (*pidns_fail_fn)(void *arg, int err);

/*
 * Forks the handle H, a child of the caller that dies with it
 * (PR_SET_PDEATHSIG): H enters a new PID namespace and forks its init I
 * (pid 1: fresh mount namespace, /proc of the namespace), which calls
 * start, then reaps every process of the namespace. When the started
 * process ends, I waits (at most PIDNS_GRACE_MS) for processes that are
 * stopped, being dumped, or entered from outside (a checkpoint clone
 * and the criu dumping it), then ends, and H ends as that process did:
 * its exit code, or the same signal. SIGKILL of H ends the whole
 * namespace. H keeps no fd of the caller's. Returns H's pid, or -1
 * (errno) when the fork failed.
 */
pid_t pidns_spawn(pidns_start_fn start, pidns_fail_fn fail, void *arg);

/*
 * A forker for proc_spawn (proc.h) that runs the program as pid
 * *(pid_t *)spec->forker_arg of a PID namespace of its own (pidns_spawn):
 * child->pid is then the handle, which ends as the program does and
 * whose SIGKILL ends the namespace, and child->task_pid the program's
 * host pid; a namespace that cannot be set up, or whose pid is taken, is
 * reported like a failed exec (step "set up").
 */
extern const struct proc_forker pidns_forker;

/* In a namespace's init: the next fork in the namespace gets pid (writes
 * pid - 1 to ns_last_pid; nothing else forks in there meanwhile). 0 or
 * -1 (errno). */
int pidns_set_next(pid_t pid);

/* Host pid of the process that is nspid in the namespace under handle
 * (any child of the init when nspid < 0), or -1. */
pid_t pidns_find(pid_t handle, pid_t nspid);

/* Whether pid's children are born in another PID namespace than pid
 * itself (a handle after its unshare). */
bool pidns_is_handle(pid_t pid);

/* Whether pid lives in another PID namespace than ours. */
bool pidns_is_other(pid_t pid);

/* Innermost pid of pid (last NSpid field of /proc/pid/status), or -1. */
pid_t pidns_inner_pid(pid_t pid);

#endif
