/*
 * disp_outchk.c: a re-executed rank must print what it printed before.
 *
 * The dispatcher forwards each rank's output exactly once: a new
 * incarnation's bytes below what was already forwarded are dropped
 * (djob_output). That is right only if the re-execution prints the same
 * bytes; a program that prints its pid, the time or random numbers would
 * otherwise splice two different outputs together without a word. So the
 * dispatcher keeps a running hash of every byte it forwarded per rank and
 * stream, and when an incarnation that starts from the beginning has
 * printed as many bytes as were forwarded before it began, compares the
 * hash of those bytes with the one kept. A difference is told to the
 * client once per job (JobWarning "output_diverged": mpiv run prints it,
 * the report lists it) and logged; the job goes on, since timing lines of
 * a benchmark are a common and harmless cause. A restored incarnation
 * does not print again what its image had printed, so it cannot be
 * checked this way (send digests check it: docs/REPLAY.md).
 */
#include <stdio.h>

#include "disp_priv.h"
#include "log.h"

#define DOUT_FNV_INIT	0xcbf29ce484222325ull
#define DOUT_FNV_PRIME	0x100000001b3ull

static uint64_t
dout_hash(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * DOUT_FNV_PRIME;
	return h;
}

void
dout_init(struct drank *rk)
{
	rk->out_hash[0] = rk->out_hash[1] = DOUT_FNV_INIT;
	rk->chk_on[0] = rk->chk_on[1] = false;
}

/* A new incarnation's output on stream s begins at byte `from` (0: from
   the beginning, checkable; else restored from an image: not). */
void
dout_begin(struct drank *rk, int s, uint64_t from)
{
	rk->chk_on[s] = from == 0 && rk->out_fwd[s] > 0;
	rk->chk_len[s] = rk->out_fwd[s];
	rk->chk_hash[s] = rk->out_hash[s];
	rk->re_hash[s] = DOUT_FNV_INIT;
}

static void
dout_diverged(struct djob *j, int r, int s)
{
	char text[300];

	snprintf(text, sizeof(text), "rank %d's re-execution printed other "
	    "%s than it had before (in its first %llu bytes): the job's "
	    "output may not be that of a failure-free run (a program that "
	    "prints its pid, the time or random numbers)", r,
	    s ? "stderr" : "stdout",
	    (unsigned long long)j->ranks[r].chk_len[s]);
	log_warnx("dispatcher output diverged job=%s rank=%d stream=%s "
	    "bytes=%llu", j->id, r, s ? "stderr" : "stdout",
	    (unsigned long long)j->ranks[r].chk_len[s]);
	j->out_diverged++;
	if (j->out_diverged > 1)
		return;
	dwarn_event(j, "output_diverged", true, text, ev_now(j->d->loop));
}

/* Bytes [off, off + len) of the current incarnation of rank r arrived on
   stream s: the part below what was forwarded before is checked. */
void
dout_check(struct djob *j, int r, int s, uint64_t off, const uint8_t *p,
    size_t len)
{
	struct drank *rk = &j->ranks[r];
	uint64_t end = rk->chk_len[s];

	if (!rk->chk_on[s] || off >= end)
		return;
	if (off + len < end) {
		rk->re_hash[s] = dout_hash(rk->re_hash[s], p, len);
		return;
	}
	rk->re_hash[s] = dout_hash(rk->re_hash[s], p, (size_t)(end - off));
	rk->chk_on[s] = false;
	if (rk->re_hash[s] != rk->chk_hash[s])
		dout_diverged(j, r, s);
}

/* len bytes forwarded to the client on stream s of rank rk. */
void
dout_forwarded(struct drank *rk, int s, const uint8_t *p, size_t len)
{
	rk->out_hash[s] = dout_hash(rk->out_hash[s], p, len);
}
