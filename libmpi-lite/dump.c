/*
 * dump.c: what a rank is waiting for, on request, for people chasing a
 * hang. With MPIV_DUMP_SIGNAL set to a signal number (e.g. 12 for
 * SIGUSR2), that signal makes the rank write its state to stderr and go
 * on: its incarnation and protocol, the non-deterministic outcomes it
 * still replays, every active request (what it waits for), and in a
 * direct job every peer's link state and sequence numbers. The test
 * scripts send it to a job's ranks just before a timeout ends the job
 * (tests/fault/common.bash), so a hang in CI leaves its reason in the
 * log. Unset: no handler, nothing changes.
 *
 * The lines are made inside the signal handler, reading state the
 * interrupted code may be changing: good enough to read a hang, where
 * the rank sleeps in poll(); not a way to observe a running program.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "direct.h"
#include "proto.h"
#include "transport.h"

static void
dump_line(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

static const char *const dump_kinds[] = { "?", "send", "recv", "probe",
	"done", "nbc" };

static void
dump_req(struct mpiv_request *r, void *arg)
{
	(void)arg;
	if (!r->active)
		return;
	dump_line("mpiv-dump: rank %d: request %s peer %d tag %d complete %d "
	    "post %llu src %d seq %llu dst %d written %d ack %d/%d posted %d "
	    "hold %d",
	    mpiv_state.world_rank, dump_kinds[r->kind <= MPIV_REQ_COLL ?
	    r->kind : 0], r->peer, r->tag, r->complete,
	    (unsigned long long)r->post_no, (int)r->post_src,
	    (unsigned long long)r->dp_seq,
	    r->dp_dst, r->written, r->need_ack, r->acked, r->dp_posted,
	    r->dp_hold);
}

static void
dump_now(int sig)
{
	(void)sig;
	dump_line("mpiv-dump: rank %d incarnation %u protocol %s: nd "
	    "replaying %d (%llu outcomes left), last event %llu",
	    mpiv_state.world_rank, tp_incarnation, mpiv_proto != NULL ?
	    mpiv_proto->name : "?", mpiv_ndlog_replaying(),
	    (unsigned long long)mpiv_ndlog_replay_left(),
	    (unsigned long long)mpiv_tp_last_event());
	{
		const Mpiv__NdOutcome *o = mpiv_ndlog_peek();
		uint64_t pos, seg;

		mpiv_nbc_where(&pos, &seg);
		dump_line("mpiv-dump: rank %d: position %llu call %llu, next "
		    "logged outcome %s at %llu (nd %llu)", mpiv_state.world_rank,
		    (unsigned long long)pos, (unsigned long long)seg,
		    o != NULL ? mpiv_ndlog_kind_name(o->kind) : "none",
		    o != NULL ? (unsigned long long)o->post_no : 0ULL,
		    o != NULL ? (unsigned long long)o->nd_no : 0ULL);
	}
	mpiv_req_foreach(dump_req, NULL);
	if (!dp_active || dp_peers == NULL)
		return;
	for (int p = 0; p < dp_world; p++) {
		const struct dp_peer *pp = &dp_peers[p];

		if (p == dp_rank)
			continue;
		dump_line("mpiv-dump: rank %d: peer %d up %d want %d dialing "
		    "%d inc %u bye %d recv_last %llu peer_has %llu wire_last "
		    "%llu logged %llu", dp_rank, p, pp->up != NULL, pp->want,
		    pp->dialing, pp->inc, pp->bye,
		    (unsigned long long)pp->recv_last,
		    (unsigned long long)pp->peer_has,
		    (unsigned long long)pp->wire_last,
		    (unsigned long long)dpx_logged(p));
	}
	dpx_dump_queues(dump_line);
}

void
mpiv_dump_init(void)
{
	const char *e = getenv("MPIV_DUMP_SIGNAL");
	struct sigaction sa;
	long sig;
	char *end;

	if (e == NULL || *e == '\0')
		return;
	sig = strtol(e, &end, 10);
	if (*end != '\0' || sig <= 0 || sig >= NSIG || sig == SIGKILL ||
	    sig == SIGSTOP)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dump_now;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	(void)sigaction((int)sig, &sa, NULL);
}
