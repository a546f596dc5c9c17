/*
 * spin.c: the spin budget of a rank's waits, i.e. how long a rank that
 * waits in a blocking MPI call polls its sockets without sleeping before
 * it sleeps in poll().
 *
 * Why: on a small VM a wake-up from poll() costs tens of µs, more than a
 * short reply takes to come; but a spinning rank takes a core, and when
 * ranks and servers outnumber the cores the core it takes is the one the
 * peer or the Channel Memory needs to produce the data, and on a long
 * wait the spin is pure waste.
 *
 * The policy. MPIV_SPIN set to a decimal number of µs is a fixed budget
 * (0: never spin, always sleep); `auto` is adaptive; unset or anything
 * else is SPIN_DEFAULT (spin.h: adaptive, in both protocols since the
 * Channel Memory yields its core while it spins: docs/BENCHMARKS.md,
 * "Relay ranks spin too"). Adaptive:
 *
 *  - a wait is one call that found nothing to do on its first look; a
 *    call that did is no wait and teaches nothing. Its length runs to the
 *    poll that returned, a sleep and a wake-up included; a poll that
 *    timed out counts as a long wait;
 *  - two moving averages (weight 1/8) over the waits: the share of them
 *    no longer than SPIN_MAX_US, and the mean length of those;
 *  - the budget is twice that mean, within SPIN_MIN_US..SPIN_MAX_US,
 *    while at least three waits in four are short (a spin that fails
 *    wastes up to SPIN_MAX_US, one that succeeds saves a wake-up of some
 *    25 µs); 0 otherwise. Waits longer than any budget stop the spinning
 *    after three of them; about ten short ones bring it back (the waits
 *    are measured when sleeping too, wake-up included);
 *  - between two polls of a spin the rank calls sched_yield(), so that a
 *    Channel Memory or a peer sharing the core runs. When the time
 *    between two polls jumps to SPIN_JUMP_US or more, another task held
 *    the core for that long: the machine is oversubscribed, and the rank
 *    does not spin for a holdoff (10 ms, doubling while contention
 *    persists up to 1 s, back to 10 ms after a spin that saw none);
 *  - on a single online CPU the rank never spins.
 *
 * Whatever the budget, every wait ends in poll() with the caller's
 * timeout, and a spin ends the moment a poll sees data.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

/*
 * MPIV_SPIN: a fixed budget in µs (capped at SPIN_FIXED_MAX_US), -1
 * (adaptive) for "auto", SPIN_DEFAULT when unset, empty, negative or not
 * a decimal number.
 */
long
spin_parse(const char *e)
{
	char *end;
	long v;

	if (e != NULL && strcmp(e, "auto") == 0)
		return -1;
	if (e == NULL || *e < '0' || *e > '9')
		return SPIN_DEFAULT;
	errno = 0;
	v = strtol(e, &end, 10);
	if (*end != '\0')
		return SPIN_DEFAULT;
	if (errno == ERANGE || v > SPIN_FIXED_MAX_US)
		v = SPIN_FIXED_MAX_US;
	return v;
}

/* env: MPIV_SPIN's value (NULL when unset); ncpu: online CPUs. */
void
spin_init(struct spin *s, const char *env, int ncpu)
{
	s->fixed = spin_parse(env);
	s->ncpu = ncpu;
	/* Start neutral: the first short waits turn the spin on. */
	s->hit = SPIN_ON - 1;
	s->est8 = 8 * SPIN_MIN_US;
	s->holdoff = SPIN_HOLDOFF_MIN_US;
	s->holdoff_until = 0;
}

/* The budget of a wait that starts at now (µs). */
long
spin_budget(struct spin *s, long now)
{
	long b;

	if (s->fixed >= 0)
		return s->fixed;
	if (s->ncpu < 2)
		return 0;
	/* A holdoff further ahead than any can be is from another clock
	   (a process restored on another machine): it is over. */
	if (s->holdoff_until - now > SPIN_HOLDOFF_MAX_US)
		s->holdoff_until = 0;
	if (now < s->holdoff_until)
		return 0;
	if (s->hit < SPIN_ON)
		return 0;
	b = s->est8 / 4;
	if (b < SPIN_MIN_US)
		b = SPIN_MIN_US;
	if (b > SPIN_MAX_US)
		b = SPIN_MAX_US;
	return b;
}

/*
 * One wait is over: it lasted waited µs; contended says whether another
 * task held the core during its spin.
 */
void
spin_record(struct spin *s, long now, long waited, bool contended)
{
	if (waited < 0)
		waited = 0;
	if (waited <= SPIN_MAX_US) {
		s->hit += (SPIN_ONE - s->hit) / 8 + 1;
		if (s->hit > SPIN_ONE)
			s->hit = SPIN_ONE;
		s->est8 += waited - s->est8 / 8;
	} else
		s->hit -= s->hit / 8 + 1;
	if (s->hit < 0)
		s->hit = 0;
	if (contended) {
		s->holdoff_until = now + s->holdoff;
		s->holdoff *= 2;
		if (s->holdoff > SPIN_HOLDOFF_MAX_US)
			s->holdoff = SPIN_HOLDOFF_MAX_US;
	}
}

/* A wait starts at now: its budget is fixed for its whole length. */
void
spin_begin(struct spin *s, struct spin_wait *w, long now)
{
	w->start = w->last = now;
	w->budget = spin_budget(s, now);
	w->gap = 0;
	w->polls = 0;
	w->probe = s->fixed < 0;
	w->slept = false;
}

/*
 * The timeout of the next poll of the wait, at now: 0 (poll without
 * sleeping; the caller yields the CPU between two of those) while the
 * spin lasts or for the first look, then the caller's timeout_ms.
 */
int
spin_next(struct spin_wait *w, long now, int timeout_ms)
{
	if (w->polls > 0 && !w->slept && now - w->last > w->gap)
		w->gap = now - w->last;
	w->last = now;
	w->polls++;
	if ((w->probe && w->polls == 1) || now - w->start < w->budget)
		return 0;
	w->slept = true;
	return timeout_ms;
}

/*
 * The wait is over at now; ready: the last poll saw something (else it
 * timed out). A fixed budget learns nothing, nor does a first look that
 * found work.
 */
void
spin_end(struct spin *s, struct spin_wait *w, long now, bool ready)
{
	long waited = now - w->start;
	bool contended;

	if (s->fixed >= 0 || (ready && w->polls == 1 && !w->slept))
		return;
	if (!ready && waited <= SPIN_MAX_US)
		waited = SPIN_MAX_US + 1;
	contended = w->gap >= SPIN_JUMP_US;
	if (!contended && w->budget > 0 && w->polls > 2)
		s->holdoff = SPIN_HOLDOFF_MIN_US;
	spin_record(s, now, waited, contended);
}
