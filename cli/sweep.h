/*
 * sweep.h: what `mpiv sweep` (sweep.c) hands to its page writer
 * (sweep_html.c): one cell per (MTBF, checkpoint interval) of the grid,
 * one run per cell and seed.
 */
#ifndef MPIV_SWEEP_H
#define MPIV_SWEEP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum sw_status {
	SW_OK,			/* exit as the baseline, same output */
	SW_WRONG,		/* exit as the baseline, other output */
	SW_EXIT,		/* another exit code than the baseline's */
	SW_TIMEOUT,		/* mpiv run timed out (124), or stopped with
				   the sweep */
	SW_NOREPORT		/* no readable --report */
};

/*
 * How ranks came back, from a run's events (its report): per relaunch,
 * relaunch: from the kill (or the exit, for a lost node) to the new
 * incarnation's process running; restore: from its launch to running,
 * for a launch from a checkpoint (image download and CRIU restore);
 * replay: from running to its replay_done (re-execution caught up).
 */
enum { SW_T_RELAUNCH, SW_T_RESTORE, SW_T_REPLAY, SW_T_N };

struct sw_times {
	double *v;		/* seconds, one per relaunch that had it */
	int n, cap;
};

struct sw_run {
	int cell, seed;
	bool done;
	enum sw_status status;
	int exit_code;
	double wall_s;		/* the report's, else measured */
	int kills, restarts, checkpoints, ckpt_failures, restores;
	double replayed_events, replay_s, relaunch_ms;	/* sums, median */
	struct sw_times rec[SW_T_N];
};

struct sw_cell {
	uint32_t mtbf_ms, ckpt_ms;	/* 0: none */
	const char *mtbf, *ckpt;	/* as given ("0" for none) */
	int runs, ok, wrong, failed;
	double wall_med, wall_min, wall_max;	/* of ok and wrong runs */
	double slow_med, slow_min, slow_max;	/* over the baseline's */
	double kills, restarts, checkpoints, replay_s, restores; /* means */
	/* of every relaunch in its runs (pooled over seeds): NAN if none */
	int rec_n[SW_T_N];
	double rec_mean[SW_T_N], rec_med[SW_T_N];
};

extern const char *const sw_times_names[SW_T_N];

struct sweep {
	const char *out;		/* directory */
	char **args;			/* mpiv run's arguments */
	int nargs;
	int seeds;
	const char *chaos_max;		/* --chaos-max K of chaos cells, NULL */
	bool chaos_nodes;		/* --chaos-nodes in the chaos cells */
	struct sw_cell *cells;		/* cells[0]: the baseline */
	int ncells;
	struct sw_run *runs;		/* ncells * seeds, cell-major */
	int nruns;
	double base_wall;		/* median of the baseline's runs */
};

extern const char *const sw_status_names[];

/* sweep_html.c: DIR/index.html, the page with the plots. 0 or -1. */
int sweep_write_html(const struct sweep *sw, const char *path);

#endif
