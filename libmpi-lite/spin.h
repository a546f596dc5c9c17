/*
 * spin.h: how long a rank waiting for its Channel Memories polls without
 * sleeping before it sleeps in poll() (spin.c; the wait loop is in
 * transport.c). Pure logic on times the caller passes in, so that the
 * unit test drives it with synthetic histories.
 */
#ifndef MPIV_SPIN_H
#define MPIV_SPIN_H

#include <stdbool.h>

#define SPIN_DEFAULT		(-1)	/* MPIV_SPIN unset: adaptive (0: never spin) */
#define SPIN_MAX_US		100	/* the longest adaptive spin */
#define SPIN_MIN_US		10	/* the shortest adaptive spin */
#define SPIN_FIXED_MAX_US	1000000	/* MPIV_SPIN is capped at 1 s */
#define SPIN_JUMP_US		100	/* a gap between two polls this long: contended */
#define SPIN_HOLDOFF_MIN_US	10000	/* no spinning after contention, first */
#define SPIN_HOLDOFF_MAX_US	1000000	/* ... doubling up to this */
#define SPIN_ONE		1024	/* 1.0 in the fixed-point share */
#define SPIN_ON			(SPIN_ONE * 3 / 4)	/* the share of short waits to spin */

/* The controller: one per process. */
struct spin {
	long	fixed;		/* MPIV_SPIN in µs, or -1: adaptive */
	int	ncpu;		/* online CPUs */
	long	hit;		/* share (of SPIN_ONE) of waits <= SPIN_MAX_US */
	long	est8;		/* 8 x the average of those short waits, µs */
	long	holdoff;	/* the next holdoff's length, µs */
	long	holdoff_until;	/* no adaptive spin before (monotonic µs) */
};

/* One wait: from the first poll to the one that returns. */
struct spin_wait {
	long	start;		/* µs */
	long	budget;		/* µs of polls that do not sleep */
	long	last;		/* the previous poll, µs */
	long	gap;		/* the longest time between two polls */
	int	polls;
	bool	probe;		/* the first poll never sleeps */
	bool	slept;		/* the last poll was given the caller's timeout */
};

long	spin_parse(const char *);
void	spin_init(struct spin *, const char *, int);
long	spin_budget(struct spin *, long);
void	spin_record(struct spin *, long, long, bool);
void	spin_begin(struct spin *, struct spin_wait *, long);
int	spin_next(struct spin_wait *, long, int);
void	spin_end(struct spin *, struct spin_wait *, long, bool);

#endif
