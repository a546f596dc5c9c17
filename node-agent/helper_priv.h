/*
 * helper_priv.h: the privileged helper's state, shared by helper.c (the
 * loop, spawning, signals, reaping, start) and helper_criu.c (dumps and
 * restores). See helper.h.
 */
#ifndef MPIV_HELPER_PRIV_H
#define MPIV_HELPER_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "helper.h"

#define HELPER_STOP_WAIT_MS	10000	/* a clone must stop within this */
#define HELPER_NPIPES		5	/* fds 0-2 and the two ctrl pipes */

/* A rank the helper started or restored. */
struct htask {
	pid_t pid;		/* what the agent names it by; our child */
	pid_t task_pid;		/* the program's host pid */
	bool nsh;		/* pid is a PID namespace's handle */
	bool restored;
	struct htask *next;
};

/* What a dump worker writes back (one write, < PIPE_BUF). */
struct hdump_result {
	int ok;
	int npipes;
	int pipe_fd[HELPER_NPIPES];
	uint64_t pipe_ino[HELPER_NPIPES];
	double dump_s;
	char dir[64];
	char error[300];
};

struct hdump {
	uint64_t id;
	pid_t worker;
	pid_t clone;
	int resfd;
	struct hdump *next;
};

struct helper {
	struct ev_loop *loop;
	const struct helper_conf *conf;
	int fd;
	pid_t agent;
	ev_io io_w;
	ev_child child_w;
	ev_signal sigint_w, sigterm_w, sighup_w;
	struct htask *tasks;
	struct hdump *dumps;
};

/* helper.c */
struct htask *helper_task(struct helper *hp, pid_t pid);
/* Whether every id of pid is the ranks' account (always, without one). */
bool helper_owned(const struct helper *hp, pid_t pid);
void helper_close_fds(int *fds, int n);

/* helper_criu.c */
void helper_dump(struct helper *hp, const Mpiv__PrivDump *dr);
/* A dump worker ended: its result goes to the agent; d is freed by the
   caller. */
void helper_dump_done(struct helper *hp, struct hdump *d, int status);
void helper_restore(struct helper *hp, const Mpiv__PrivRestore *rq,
    int *fds, int nfds);

#endif
