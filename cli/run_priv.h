/*
 * run_priv.h: state of one `mpiv run`, shared by run.c (options, client,
 * output, report) and run_deploy.c (the embedded deployment).
 */
#ifndef MPIV_RUN_PRIV_H
#define MPIV_RUN_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "auth.h"
#include "conn.h"
#include "log.h"
#include "timeline.h"

struct run;

/* A daemon of the embedded deployment. */
struct run_daemon {
	struct run *r;
	char what[32];		/* "dispatcher", "cm 0", "node 1" */
	pid_t pid;		/* -1 once reaped */
	ev_child w;
	int node;		/* node agent index, -1 for a service */
	int cm;			/* CM index, -1 for anything else */
	int cs;			/* CS index, -1 for anything else */
	char addr[128];		/* a CM, CS: where it listens (again if
				   respawned) */
	unsigned respawns;	/* node agents, CMs, CSs: started again after
				   dying */
	ev_timer respawn_w;
};

/* --tag-output: a partial line per (rank, stream). */
struct run_line {
	char *buf;
	size_t len, cap;
};

struct run_result {
	bool known;
	uint32_t incarnations, restarts, checkpoints;
	int exit_code;
	char waits[200];	/* what it waited for as the job ended */
	double waited_s;
};

/* One relaunch, from JobDone.restart_log. */
struct run_restart {
	int rank;
	uint32_t incarnation;
	double relaunch_ms;	/* < 0: never started */
	uint64_t replayed_events;
	uint64_t replayed_ahead;
	double replay_s;
	uint64_t from_ckpt;
};

/* A warning the dispatcher told (JobWarning), for the report. */
struct run_warning {
	char kind[24];
	double since_s;		/* after the submission */
	double cleared_s;	/* < 0: still active at the end */
	uint32_t count;		/* ckpt_failing: failures when last told */
	char text[400];
};

/* A host of --hostfile / -H (run_hosts.c). */
struct run_host {
	char name[100];		/* [user@]host, as ssh takes it */
	int slots;		/* 0: the node agent's default (its CPUs) */
};

struct run {
	struct ev_loop *loop;
	/* options */
	int nranks, ncms, nnodes;
	bool tag;
	bool verbose;		/* --verbose or MPIV_PRINT_DISPATCHER=1 */
	bool relay_only;
	int max_restarts;	/* 0: the dispatcher's default; -1: none */
	uint32_t chaos_mtbf_ms;	/* 0: no chaos */
	uint64_t chaos_seed;
	bool chaos_seed_set;
	int chaos_max;
	bool chaos_nodes;	/* --chaos-nodes: kill node agents */
	/* program shipping (run_ship.c), with --dispatcher */
	bool no_ship;		/* --no-ship: the nodes have the program */
	char ship_path[PATH_MAX];
	char ship_hash[65];
	uint64_t ship_size;
	double ckpt_interval;	/* --ckpt-interval, 0: off */
	double deadlock_after;	/* --deadlock-after, 0: default, < 0: off */
	bool deadlock_abort;	/* --deadlock-abort */
	const char *cm_max_memory;	/* --cm-max-memory, NULL: the CMs' default */
	const char *cm_store;	/* --cm-store write|fsync|off, NULL: off */
	int ncs;		/* --cs K (embedded: started) */
	bool ckpt_said;		/* "checkpoints disabled" printed */
	double timeout;
	const char *timeout_arg;
	const char *report;
	const char *timeline;	/* --timeline FILE.html */
	int progress;		/* --progress 1, --no-progress 0, -1 auto */
	const char *dispatcher;
	const char *secret_file;	/* --secret-file (with --dispatcher) */
	struct auth_keys keys;	/* S: what proves us to the dispatcher */
	enum log_level level;
	const char *child_level;
	char **argv;
	int argc;
	char cwd[PATH_MAX];
	/* what the job takes from us (run_input.c) */
	char **env;		/* -x, --env: "NAME=VALUE" */
	size_t nenv;
	int stdin_rank;		/* --stdin: a rank (default 0), -1 all, -2 none */
	bool stdin_set;		/* --stdin given */
	uint8_t *in;		/* our stdin, read to its end */
	size_t in_len;
	char in_hash[65];
	/* --hostfile / -H: a deployment on those hosts (run_hosts.c) */
	struct run_host *hosts;
	size_t nhosts;
	int hosts_port;		/* dispatcher; CMs +10.., CSs +20.. */
	char hosts_script[PATH_MAX];
	char hosts_state[128];	/* each host's state dir ("~/...") */
	char hosts_file[PATH_MAX];	/* the script's host list */
	bool hosts_started;
	bool log_level_set;	/* --log-level given */
	/* embedded deployment */
	char self[PATH_MAX];
	char tmpdir[PATH_MAX];
	int tmplock;		/* flock on tmpdir/run.lock, -1: none */
	char secret_path[PATH_MAX];	/* embedded: the run's secret */
	char node_key_path[PATH_MAX];	/* and the node key derived from it */
	char disp_addr[128];
	struct run_daemon *daemons;
	int ndaemons;
	/* client */
	struct conn *c;
	char job[64];
	ev_timer timeout_w;
	ev_signal sigint_w, sigterm_w;
	bool done, stopped;
	/* --timeout or a signal: JobCancel sent, its JobDone awaited for
	   at most cancel_w (exit_code and reason are already final) */
	bool cancelling;
	ev_timer cancel_w;
	bool job_printed;	/* the "dispatcher ... job ..." line */
	int exit_code;
	/* from JobDone */
	char mode[16];
	const char *protocol;	/* --protocol as asked (NULL: auto) */
	char protocol_run[16];	/* what the dispatcher runs (JobStatus) */
	uint32_t kills, restarts, checkpoints;
	struct run_restart *rlog;
	size_t nrlog;
	char reason[1024];
	struct run_result *results;
	struct run_line *lines;
	/* warnings (JobWarning) and JobDone.ckpt_failures */
	struct run_warning *warns;
	size_t nwarns;
	uint32_t ckpt_failures;
	/* JobEvents, for the report and the timeline */
	struct tl_event *events;
	size_t nevents, capevents;
	uint64_t events_dropped;
	/* "sizes" events: the CMs' logs and CSs' images over time */
	struct tl_sizes sizes;
	/* the live status line (run_progress.c) */
	ev_timer progress_w;
	uint8_t *pstate;	/* per rank */
	uint32_t pkills, prestarts, pckpts;
	uint64_t plog, pstore;	/* the last "sizes" sample */
	bool psized;		/* one came */
	double pt0;
	bool pshown;
};

#define RUN_EVENTS_MAX	200000	/* kept; later ones are counted */

/* run.c */
void run_stop(struct run *r, int code, const char *reason);

/* run_progress.c */
void run_progress_start(struct run *r);
void run_progress_event(struct run *r, const struct tl_event *e);
void run_progress_sizes(struct run *r, uint64_t log, uint64_t store);
void run_progress_clear(struct run *r);
void run_progress_stop(struct run *r);

/* run_input.c */
#define RUN_STDIN_MAX	(64u << 20)	/* bytes of stdin a job takes */
int run_env_add(struct run *r, const char *opt, const char *arg);
int run_stdin_parse(struct run *r, const char *arg);
int run_stdin_check(const struct run *r);
int run_stdin_read(struct run *r);

/* run_hosts.c */
#define RUN_HOSTS_PORTS	30	/* ports from the base: dispatcher, CMs, CSs */
int run_hosts_parse_list(struct run *r, const char *arg);
int run_hosts_parse_file(struct run *r, const char *path);
int run_hosts_check(const struct run *r);
int run_hosts_start(struct run *r);
void run_hosts_stop(struct run *r);

/* run_ship.c */
int run_ship_prepare(struct run *r);
void run_ship_send(struct run *r, const Mpiv__BinaryGet *bg);

/* run_deploy.c */
/* Sweeps dead runs' temp dirs, makes and locks r->tmpdir; -1 with
   r->reason. */
int run_tmpdir_make(struct run *r);
int run_deploy_start(struct run *r);
void run_deploy_unwatch(struct run *r);
void run_deploy_stop(struct run *r);

#endif
