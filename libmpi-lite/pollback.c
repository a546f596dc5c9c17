/*
 * pollback.c: backoff of fruitless non-blocking calls, i.e. what a rank
 * does after a Test, Testany, Testsome, Testall, Request_get_status or
 * Iprobe that found nothing, before that call returns.
 *
 * Why: a program that waits by polling (a loop of MPI_Testany, of
 * MPI_Iprobe) calls the library millions of times a second. Each call
 * looks at the sockets without sleeping, so the rank never leaves the
 * CPU; when ranks and servers outnumber the cores, the core it holds is
 * the one the Channel Memory or the peer needs to move the very message
 * the rank waits for (measured: a 4-rank polling program on 2 cores 46
 * times slower than Open MPI, docs/BENCHMARKS.md "Waiting").
 *
 * The policy (MPIV_POLL_BACKOFF: unset or `auto` caps the sleeps at
 * PB_CAP_DEFAULT_US, a decimal number of µs at that, `off` or 0 turns
 * it off):
 *
 *  - a run is a series of fruitless calls with less than PB_TIGHT_US of
 *    the program's own time between the return of one and the entry of
 *    the next: a loop that only polls. A call that found something, or
 *    one the program reached after computing longer, starts afresh and
 *    never waits (so a program that computes between its polls is not
 *    slowed);
 *  - contended (the job's ranks at least as many as the online CPUs:
 *    with the Channel Memory and the node agent, some process lacks a
 *    core): the first PB_FREE_POLLS calls of a run return at once; in a
 *    direct job each then yields the CPU (sched_yield) up to
 *    PB_CYIELD_US of the run; then each sleeps, PB_SLEEP_MIN_US first,
 *    doubling up to the cap. A relay job sleeps at once: its every
 *    Iprobe needs the Channel Memory, which yielding ranks keep from the
 *    cores, and relay jobs are the ones on shared desktops (measured on
 *    2 cores beside two busy processes: 7-13 % slower with the yields,
 *    where a direct job lost 0-3 %; docs/BENCHMARKS.md);
 *  - uncontended: the run returns at once for PB_SPIN_US, then yields
 *    on each call up to PB_YIELD_US, then sleeps with the same backoff;
 *  - a yield hands the core to whatever else is runnable on it: a peer
 *    or the Channel Memory that moves the awaited message (the point),
 *    or a program outside the job that keeps it for its whole time
 *    slice, milliseconds, where a sleeping rank woken by its data gets
 *    the core back at once. A yield that returns PB_JUMP_US or more
 *    after it was decided lost the core that way: the rest of its run
 *    sleeps, and when another did within PB_LOST_WINDOW_US (once is
 *    noise: a daemon's tick), no run yields for PB_HOLDOFF_US;
 *  - a sleep is a poll() on the rank's sockets (transport.c): it ends
 *    the moment data arrives or a queued frame can be written, so it adds
 *    no latency to a message the rank's sockets see. What it delays is a
 *    relay Iprobe, whose answer the Channel Memory gives only when asked:
 *    by at most the cap.
 *
 * The outcome of the call is decided (and logged, docs/REPLAY.md) before
 * any of this: the sleep comes after, so a fruitless call that sleeps is
 * the same fruitless call, and a re-execution that imposes logged
 * outcomes does not sleep at all (transport.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pollback.h"

/*
 * MPIV_POLL_BACKOFF: the cap in µs (at most PB_CAP_MAX_US), 0 for `off`
 * or 0, PB_CAP_DEFAULT_US when unset, empty, `auto` or not a decimal
 * number.
 */
long
pollback_parse(const char *e)
{
	char *end;
	long v;

	if (e == NULL || *e == '\0' || strcmp(e, "auto") == 0)
		return PB_CAP_DEFAULT_US;
	if (strcmp(e, "off") == 0)
		return 0;
	if (*e < '0' || *e > '9')
		return PB_CAP_DEFAULT_US;
	errno = 0;
	v = strtol(e, &end, 10);
	if (*end != '\0')
		return PB_CAP_DEFAULT_US;
	if (errno == ERANGE || v > PB_CAP_MAX_US)
		v = PB_CAP_MAX_US;
	return v;
}

/* env: MPIV_POLL_BACKOFF (NULL when unset); ncpu: online CPUs; nranks:
   the job's ranks; direct: a direct job (contended, it yields too). */
void
pollback_init(struct pollback *pb, const char *env, int ncpu, int nranks,
    bool direct)
{
	pb->cap = pollback_parse(env);
	pb->contended = ncpu < 2 || nranks >= ncpu;
	pb->cyield = direct && ncpu >= 2;
	pb->last_ret = -1;
	pb->run_start = 0;
	pb->polls = 0;
	pb->sleep = PB_SLEEP_MIN_US;
	pb->yield_at = -1;
	pb->run_lost = false;
	pb->lost_at = -1;
	pb->holdoff_until = 0;
}

/* A yield is allowed at now (and noted, to be timed when it returns). */
static bool
pollback_may_yield(struct pollback *pb, long now)
{
	if (pb->run_lost || now < pb->holdoff_until)
		return false;
	pb->yield_at = now;
	return true;
}

/*
 * A non-blocking call entered at entry and decided at now (µs); found:
 * it found something. Returns what to do before it returns, with the
 * sleep's length in *us for PB_SLEEP.
 */
enum pb_action
pollback_next(struct pollback *pb, long entry, long now, bool found, long *us)
{
	long run;

	*us = 0;
	if (found || pb->last_ret < 0 || entry - pb->last_ret >= PB_TIGHT_US ||
	    entry < pb->last_ret) {
		pb->polls = 0;
		pb->sleep = PB_SLEEP_MIN_US;
		pb->run_lost = false;
		if (entry < pb->last_ret) {	/* another clock */
			pb->holdoff_until = 0;
			pb->lost_at = -1;
		}
	}
	if (found || pb->cap <= 0)
		return PB_NONE;
	if (pb->polls++ == 0)
		pb->run_start = now;
	run = now - pb->run_start;
	if (pb->contended) {
		if (pb->polls <= PB_FREE_POLLS)
			return PB_NONE;
		if (pb->cyield && run < PB_CYIELD_US &&
		    pollback_may_yield(pb, now))
			return PB_YIELD;
	} else {
		if (run < PB_SPIN_US)
			return PB_NONE;
		if (run < PB_YIELD_US && pollback_may_yield(pb, now))
			return PB_YIELD;
	}
	*us = pb->sleep < pb->cap ? pb->sleep : pb->cap;
	if (pb->sleep < pb->cap)
		pb->sleep *= 2;
	return PB_SLEEP;
}

/* The call returns at now (after its yield or sleep). */
void
pollback_returned(struct pollback *pb, long now)
{
	if (pb->yield_at >= 0 && now - pb->yield_at >= PB_JUMP_US) {
		/* another task held the core: this run sleeps from here,
		   and every run for a while if it is not the first time */
		pb->run_lost = true;
		if (pb->lost_at >= 0 && now - pb->lost_at < PB_LOST_WINDOW_US)
			pb->holdoff_until = now + PB_HOLDOFF_US;
		pb->lost_at = now;
	}
	pb->yield_at = -1;
	pb->last_ret = now;
}
