/*
 * pollback.h: what a rank does after a non-blocking call (Test, Testany,
 * Testsome, Testall, Request_get_status, Iprobe) found nothing: return at
 * once, yield the CPU, or sleep briefly in poll() on its sockets, with a
 * backoff over a run of such calls (pollback.c; the sleep itself is
 * mpiv_tp_poll_done in transport.c). Pure logic on times the caller
 * passes in, so that the unit test drives it with synthetic histories.
 */
#ifndef MPIV_POLLBACK_H
#define MPIV_POLLBACK_H

#include <stdbool.h>

#define PB_CAP_DEFAULT_US	100	/* the longest sleep, MPIV_POLL_BACKOFF unset */
#define PB_CAP_MAX_US		10000	/* MPIV_POLL_BACKOFF is capped at 10 ms */
#define PB_SLEEP_MIN_US		10	/* the first sleep of a run */
#define PB_TIGHT_US		5	/* the program ran longer than this
					   between two calls: a new run */
#define PB_FREE_POLLS		2	/* contended: calls of a run that
					   return at once ... */
#define PB_CYIELD_US		300	/* ... then (direct) yields until this
					   long */
#define PB_SPIN_US		50	/* uncontended: a run returns at once
					   this long ... */
#define PB_YIELD_US		1000	/* ... then yields until this long */
#define PB_JUMP_US		500	/* a yield this long: another task
					   held the core */
#define PB_LOST_WINDOW_US	100000	/* two such yields within this ... */
#define PB_HOLDOFF_US		1000000	/* ... and no yields for this long */

enum pb_action {
	PB_NONE,	/* return at once */
	PB_YIELD,	/* sched_yield(), then return */
	PB_SLEEP,	/* poll() the sockets for at most the given µs */
};

/* The controller: one per process. */
struct pollback {
	long	cap;		/* the longest sleep, µs; 0: off */
	bool	contended;	/* ranks outnumber CPUs (pollback_init) */
	bool	cyield;		/* contended, and yields (direct job) */
	long	last_ret;	/* the previous call returned (µs), -1: none */
	long	run_start;	/* the first fruitless call of the run */
	int	polls;		/* fruitless calls in the run */
	long	sleep;		/* the next sleep of the run, µs */
	long	yield_at;	/* a yield was decided then, -1: none */
	bool	run_lost;	/* a yield of this run lost the core */
	long	lost_at;	/* the last yield that lost it, -1: none */
	long	holdoff_until;	/* no yields before then */
};

long		pollback_parse(const char *);
void		pollback_init(struct pollback *, const char *, int, int, bool);
enum pb_action	pollback_next(struct pollback *, long, long, bool, long *);
void		pollback_returned(struct pollback *, long);

#endif
