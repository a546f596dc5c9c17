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

struct tl_job {
	const char *job;
	const char *protocol;
	int nranks;
	int exit_code;
	double wall_s;
	const char *reason;
	const struct tl_event *ev;
	size_t nev;
};

struct json;

/* The events as the report's "events" array (also embedded in the page). */
void timeline_events_json(struct json *j, const struct tl_event *ev,
    size_t n);

/* Writes the page (one self-contained HTML file, inline SVG). 0, -1. */
int timeline_write_html(const struct tl_job *job, const char *path);

/* `mpiv report REPORT.json --html FILE`: the page of a saved report. */
int report_main(int argc, char **argv);

#endif
