/*
 * timeline.h: a job's events (JobEvent, as `mpiv run` receives them and
 * as its --report keeps them) and the page drawn from them
 * (`mpiv run --timeline FILE`, `mpiv report REPORT --html FILE`).
 */
#ifndef MPIV_TIMELINE_H
#define MPIV_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

struct tl_event {
	double t;		/* seconds after the submission */
	char kind[16];
	int rank;		/* -1: the job or a node */
	uint32_t inc;
	uint64_t value;
	double span1, span2;
	char node[64];
	char detail[160];
};

/*
 * The job's sizes over time ("sizes" events: the dispatcher samples its
 * CMs' logs and its CSs' images a few times a second). Kept apart from
 * the events and bounded: past TL_SIZES_MAX samples every other one goes
 * and only every stride-th later one is kept, so a long job's report
 * stays small and still spans the whole run.
 */
#define TL_SIZES_MAX	2000

struct tl_sizes {
	double *t;
	uint64_t *log, *store;	/* bytes: CM logs, checkpoint images */
	size_t n, cap;
	unsigned stride;	/* 1 + decimations: every stride-th kept */
	uint64_t seen;		/* samples received */
	uint64_t partial;	/* of them, with a CM or CS silent */
};

struct tl_job {
	const char *job;
	const char *protocol;
	int nranks;
	int exit_code;
	double wall_s;
	const char *reason;
	const struct tl_event *ev;
	size_t nev;
	const struct tl_sizes *sizes;	/* NULL: none */
};

struct json;

/* The events as the report's "events" array (also embedded in the page). */
void timeline_events_json(struct json *j, const struct tl_event *ev,
    size_t n);

/* Adds a sample (decimating past TL_SIZES_MAX). 0, -1: no memory. */
int timeline_sizes_add(struct tl_sizes *s, double t, uint64_t log,
    uint64_t store);
void timeline_sizes_free(struct tl_sizes *s);
/* The report's "sizes": {"stride", "samples", "partial", "t",
 * "cm_log_bytes", "store_bytes"} (arrays of the kept samples). */
void timeline_sizes_json(struct json *j, const struct tl_sizes *s);

/* Writes the page (one self-contained HTML file, inline SVG). 0, -1. */
int timeline_write_html(const struct tl_job *job, const char *path);

/* `mpiv report REPORT.json --html FILE`: the page of a saved report. */
int report_main(int argc, char **argv);

#endif
