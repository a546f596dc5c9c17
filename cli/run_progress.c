/*
 * run_progress.c: `mpiv run`'s live status line on a terminal.
 *
 * Only when stderr is a terminal (or --progress), never in pipes, files
 * or CI logs (--no-progress turns it off): one line on stderr, redrawn 4
 * times a second, cut to the terminal's width:
 *
 *   mpiv: 12.4 s | 4 ranks: 3 running, 1 replaying | 5 kills, 5 restarts | 12 checkpoints | log 1.2 MB, store 3.4 MB
 *
 * The ranks' states come from the job's events (JobEvent, as the
 * timeline draws them): launched and not started yet ("starting", or
 * "restoring" a checkpoint), "replaying" from a relaunch's start to its
 * replay_done, "running", "down" from an exit by a kill to the next
 * launch, "done" once exited for good; "waiting" before the first
 * launch; "blocked", a running or replaying rank that waits in an MPI
 * call for a second or more ("wait" to "wait_over"). The log and store
 * sizes are the last "sizes" sample, the one the timeline's panels
 * are drawn from (the dispatcher asks the job's CMs and CSs a few times
 * a second); absent until the first.
 * Program output clears the line before it is written, so the
 * line never mixes with it; the job's end clears it for good.
 */
#include <sys/ioctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mono.h"
#include "run_priv.h"

enum { PS_WAIT, PS_START, PS_RESTORE, PS_REPLAY, PS_RUN, PS_DOWN, PS_DONE,
	PS_BLOCKED, PS_N };

static const char *const ps_names[PS_N] = {
	"waiting", "starting", "restoring", "replaying", "running", "down",
	"done", "blocked",
};

/* the order the line names them in */
static const int ps_order[] = {
	PS_RUN, PS_BLOCKED, PS_REPLAY, PS_RESTORE, PS_START, PS_DOWN, PS_WAIT,
	PS_DONE,
};

/* pstate[i]: a state, with PS_BLOCKED_BIT while a running or replaying
   rank waits in an MPI call ("wait" to "wait_over" events) */
#define PS_BLOCKED_BIT	0x80

static void
run_progress_draw(struct run *r)
{
	int n[PS_N] = { 0 }, cols = 0, len;
	char line[512];
	struct winsize ws;
	bool first = true;

	for (int i = 0; i < r->nranks; i++) {
		int st = r->pstate[i] & ~PS_BLOCKED_BIT;

		if ((r->pstate[i] & PS_BLOCKED_BIT) &&
		    (st == PS_RUN || st == PS_REPLAY))
			st = PS_BLOCKED;
		n[st < PS_N ? st : PS_WAIT]++;
	}
	len = snprintf(line, sizeof(line), "mpiv: %.1f s | %d rank%s:",
	    mono_s() - r->pt0, r->nranks, r->nranks == 1 ? "" : "s");
	for (size_t k = 0; k < sizeof(ps_order) / sizeof(ps_order[0]); k++) {
		int s = ps_order[k];

		if (n[s] > 0 && len < (int)sizeof(line)) {
			len += snprintf(line + len, sizeof(line) - (size_t)len,
			    "%s %d %s", first ? "" : ",", n[s], ps_names[s]);
			first = false;
		}
	}
	if (len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len,
		    " | %u kill%s, %u restart%s | %u checkpoint%s", r->pkills,
		    r->pkills == 1 ? "" : "s", r->prestarts,
		    r->prestarts == 1 ? "" : "s", r->pckpts,
		    r->pckpts == 1 ? "" : "s");
	if (r->psized && len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len,
		    " | log %.1f MB, store %.1f MB", r->plog / 1e6,
		    r->pstore / 1e6);
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		cols = ws.ws_col - 1;	/* no wrap on the last column */
	if (cols > 0 && len > cols)
		len = cols;
	fprintf(stderr, "\r\033[K%.*s", len, line);
	fflush(stderr);
	r->pshown = true;
}

static void
run_on_progress(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	run_progress_draw(w->data);
}

void
run_progress_start(struct run *r)
{
	const char *term = getenv("TERM");

	if (r->progress < 0)
		r->progress = isatty(2) && term != NULL &&
		    strcmp(term, "dumb") != 0;
	if (r->progress != 1 || r->nranks <= 0)
		return;
	if ((r->pstate = calloc((size_t)r->nranks, 1)) == NULL) {
		r->progress = 0;
		return;
	}
	r->pt0 = mono_s();
	ev_timer_init(&r->progress_w, run_on_progress, 0., 0.25);
	r->progress_w.data = r;
	ev_timer_start(r->loop, &r->progress_w);
}

/* Before any output: the line goes (the next tick draws it again). */
void
run_progress_clear(struct run *r)
{
	if (!r->pshown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	r->pshown = false;
}

void
run_progress_stop(struct run *r)
{
	if (r->progress != 1)
		return;
	ev_timer_stop(r->loop, &r->progress_w);
	run_progress_clear(r);
	free(r->pstate);
	r->pstate = NULL;
	r->progress = 0;
}

void
run_progress_event(struct run *r, const struct tl_event *e)
{
	uint8_t *st;

	if (r->pstate == NULL)
		return;
	if (strcmp(e->kind, "kill") == 0 || strcmp(e->kind, "kill_node") == 0)
		r->pkills++;
	else if (strcmp(e->kind, "ckpt") == 0)
		r->pckpts++;
	if (e->rank < 0 || e->rank >= r->nranks)
		return;
	st = &r->pstate[e->rank];
	if (strcmp(e->kind, "wait") == 0) {
		*st |= PS_BLOCKED_BIT;
		return;
	}
	*st &= ~PS_BLOCKED_BIT;	/* wait_over, or a change of state */
	if (strcmp(e->kind, "launch") == 0) {
		*st = e->value > 0 ? PS_RESTORE : PS_START;
		if (e->inc > 1)
			r->prestarts++;
	} else if (strcmp(e->kind, "started") == 0) {
		*st = e->inc > 1 ? PS_REPLAY : PS_RUN;
	} else if (strcmp(e->kind, "replay_done") == 0) {
		if (*st == PS_REPLAY)
			*st = PS_RUN;
	} else if (strcmp(e->kind, "exit") == 0) {
		/* killed from outside: relaunched, unless the job ends */
		*st = strcmp(e->detail, "signal 9") == 0 ||
		    strcmp(e->detail, "signal 15") == 0 ||
		    strcmp(e->detail, "node lost") == 0 ? PS_DOWN : PS_DONE;
	}
}

/* A "sizes" sample: the line's log and store. */
void
run_progress_sizes(struct run *r, uint64_t log, uint64_t store)
{
	r->plog = log;
	r->pstore = store;
	r->psized = true;
}
