/*
 * ckpt.c: the rank's side of uncoordinated checkpoints
 * (docs/CHECKPOINT.md).
 *
 * The node agent and the rank talk over two pipes: MPIV_CTRL_FD (rank ->
 * node: "ckpt-sync k", "ckpt-clone k pid event nd post", "ckpt-skip k
 * why", and init.c's "abort code") and MPIV_CTRL_IN_FD (node -> rank:
 * "ckpt", "go k", "key HEX", "inc n"). The progress engine polls the second one
 * with the CM sockets, so a request wakes a rank asleep in a Wait.
 *
 * A checkpoint is taken at a safe point (mpiv_ckpt_point(): the entry of
 * a send, receive, probe, cancel, non-deterministic call, and a Wait
 * that sleeps), never with an incoming frame half read:
 *
 *   1. drain: pending outcomes go to the home CM and are acked, every
 *      CM sent to since the last checkpoint answers a Flush (every Send
 *      before it is complete there, and in its --store);
 *   2. "ckpt-sync k" to the node, which empties our stdout/stderr pipes
 *      and answers "go k" (the sockets are serviced meanwhile);
 *   3. CkptMark{k, event, nd_no, post_no} is written on the home
 *      connection without reading anything more, so the mark describes
 *      exactly the memory about to be copied;
 *   4. fork twice: the middle child exits at once (the clone is
 *      reparented to the pid 1 of the rank's PID namespace, or, on a node
 *      without namespaces, to the node agent, a subreaper); the parent
 *      reaps it, writes "ckpt-clone ..." and returns to the application.
 *      Its stall is steps 1-4.
 *
 * The clone closes its CM sockets (close only: the parent shares them),
 * makes itself the leader of its own process group, waits until the
 * middle one is gone, sets PR_SET_PDEATHSIG SIGKILL and stops itself.
 * The node dumps it with a CRIU that enters the rank's namespaces
 * (node-agent/pidns.c, node-agent/criu.c) and kills it. The group and the
 * pdeath signal are in the image: the node restores the clone into a
 * fresh PID namespace of the rank, under the rank's pid (every
 * incarnation of a rank sees the same getpid()), the leader of its own
 * group like a freshly launched rank, killed by the kernel if the node
 * dies; and such a restored rank takes further checkpoints the same way
 * (its clones are dumped like any other). No setsid: the session stays
 * the rank's, which criu's --shell-job accepts. On a node without PID
 * namespaces (not root, MPIV_PIDNS=0) a clone is restored under its own
 * pid as the node's child, or, when that pid is taken, into a fresh
 * namespace whose rank cannot be dumped again (its session is outside:
 * later dumps fail cleanly, the node says why, the older image stays).
 * If the clone is ever continued without a restore (the dump failed),
 * it exits quietly: a restored clone has a new ctrl-in pipe or PID
 * namespace, a merely continued one has neither. A
 * restored clone reads "key HEX" (its new incarnation's credential,
 * which overwrites the old one) and "inc n", dials every CM again as
 * incarnation n
 * with Hello{resume_event, resume_nd},
 * takes the outcomes logged after its mark, posts again every receive
 * and probe still pending in its memory, and returns from the MPI call
 * that checkpointed. The CM answers those posts from its log.
 *
 * Off unless message logging is on and both ctrl pipes are given;
 * MPIV_CKPT_INTERVAL (seconds, may be fractional) adds periodic ones,
 * the first at interval * (0.5 + rank / size) after MPI_Init so ranks
 * do not all checkpoint at once. MPIV_CKPT_LOG names a file that gets
 * one line of timings per checkpoint (for measurements).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "mono.h"
#include "proto.h"
#include "transport.h"

#define CK_GO_MS	30000	/* the node answers ckpt-sync within this */
#define CK_INC_MS	30000	/* a restored clone gets inc within this */
#define CK_LINE_MAX	128
#define CK_REPARENT_MS	5000	/* the middle child is gone within this */

bool mpiv_ckpt_armed;

static int ck_in = -1, ck_out = -1;
static int ck_rank;
static long ck_interval_us;	/* 0: only on request */
static long ck_next_us;		/* next periodic one is due (monotonic) */
static bool ck_requested;	/* "ckpt" arrived */
static bool ck_busy;
static uint64_t ck_no;		/* last checkpoint number used */
static uint64_t ck_go;		/* highest "go k" seen */
static uint64_t ck_inc_line;	/* "inc n" seen (restored clone), 0: none */
static uint64_t ck_outsync_sent, ck_outsync_got;	/* "out-sync n" */
static char ck_line[CK_LINE_MAX];
static size_t ck_linelen;
static bool ck_line_skip;	/* inside an overlong line: dropped */
static pid_t ck_middle = -1;	/* middle child not reaped yet */

/*
 * The send sequences (per receiver) of the last few checkpoints, taken
 * with their marks. When the home CM says checkpoint k is durable, the
 * rank tells every CM the sequences of k (DigestTrim): a restore never
 * goes back further, so the digests of older sends are useless there.
 */
#define CK_SNAPS	4
static struct ck_snap {
	uint64_t k;		/* 0: free */
	uint64_t *seqs;		/* world_size entries */
} ck_snaps[CK_SNAPS];
static uint64_t ck_durable;	/* highest durable k announced by the CM */
static uint64_t ck_trimmed;	/* highest k whose DigestTrim went out */

/* An open fd number from the environment, or -1. */
static int
ck_env_fd(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
		return -1;
	if (fcntl((int)v, F_GETFD) < 0)
		return -1;
	return (int)v;
}

static void
ck_disable(void)
{
	mpiv_ckpt_armed = false;
	ck_in = -1;
}

/* The node closed a control pipe it had given us (or a write to it
   failed): the node agent is gone. */
static bool ck_node_closed;

static void
ck_node_lost(void)
{
	ck_node_closed = true;
	ck_disable();
}

void
mpiv_ckpt_init(int rank, int size, uint32_t incarnation)
{
	const char *iv = getenv("MPIV_CKPT_INTERVAL");
	const char *base;
	int fl;

	(void)incarnation;
	ck_disable();
	ck_out = -1;
	ck_node_closed = false;
	ck_rank = rank;
	ck_requested = ck_busy = false;
	ck_no = ck_go = ck_inc_line = 0;
	ck_outsync_sent = ck_outsync_got = 0;
	ck_linelen = 0;
	ck_line_skip = false;
	ck_interval_us = 0;
	ck_next_us = 0;
	if (!mpiv_ndlog_enabled())
		return;		/* relay only: nothing to restore from */
	if ((ck_out = ck_env_fd("MPIV_CTRL_FD")) < 0 ||
	    (ck_in = ck_env_fd("MPIV_CTRL_IN_FD")) < 0) {
		ck_in = -1;
		return;
	}
	if ((fl = fcntl(ck_in, F_GETFL)) >= 0)
		fcntl(ck_in, F_SETFL, fl | O_NONBLOCK);
	/* A job that started over after a lost CM numbers its checkpoints
	   above the old run's, so that no old image is ever current. */
	if ((base = getenv("MPIV_CKPT_BASE")) != NULL && *base >= '0' &&
	    *base <= '9') {
		char *end;
		unsigned long long b = strtoull(base, &end, 10);

		if (*end == '\0')
			ck_no = b;
	}
	if (iv != NULL && *iv != '\0') {
		char *end;
		double s = strtod(iv, &end);

		if (*end == '\0' && isfinite(s) && s > 0 && s < 1e9)
			ck_interval_us = (long)(s * 1e6);
	}
	if (ck_interval_us > 0)
		ck_next_us = mono_us() + (long)((double)ck_interval_us *
		    (0.5 + (double)rank / (double)(size > 0 ? size : 1)));
	mpiv_ckpt_armed = true;
}

/* Reaps the middle child of the last checkpoint (it exits at once). */
static void
ck_reap_middle(void)
{
	int st;

	if (ck_middle <= 0)
		return;
	while (waitpid(ck_middle, &st, 0) < 0 && errno == EINTR)
		;
	ck_middle = -1;
}

void
mpiv_ckpt_fini(void)
{
	ck_reap_middle();
	/* No more checkpoints; the pipes stay for mpiv_ckpt_output_sync. */
	mpiv_ckpt_armed = false;
	for (int i = 0; i < CK_SNAPS; i++) {
		free(ck_snaps[i].seqs);
		ck_snaps[i].seqs = NULL;
		ck_snaps[i].k = 0;
	}
}

int
mpiv_ckpt_ctrl_fd(void)
{
	return mpiv_ckpt_armed ? ck_in : -1;
}

/* ---------------- the ctrl pipes ---------------- */

static void
ck_line_done(void)
{
	unsigned long long v;
	char word[8];

	ck_line[ck_linelen] = '\0';
	if (strcmp(ck_line, "ckpt") == 0)
		ck_requested = true;
	else if (strncmp(ck_line, "key ", 4) == 0) {
		/* a restored clone's new credential, just before "inc n" */
		(void)mpiv_tp_set_key(ck_line + 4);
		auth_wipe(ck_line, sizeof(ck_line));
	}
	else if (sscanf(ck_line, "%7s %llu", word, &v) == 2) {
		if (strcmp(word, "go") == 0 && v > ck_go)
			ck_go = v;
		else if (strcmp(word, "inc") == 0 && v > 0 && v <= UINT32_MAX)
			ck_inc_line = v;
		else if (strcmp(word, "synced") == 0 && v > ck_outsync_got)
			ck_outsync_got = v;
	}
	/* anything else: a newer node's line, ignored */
}

void
mpiv_ckpt_ctrl_input(void)
{
	char buf[256];

	while (ck_in >= 0) {
		ssize_t n = read(ck_in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			ck_node_lost();	/* the node closed it: no more */
			return;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				if (!ck_line_skip)
					ck_line_done();
				ck_linelen = 0;
				ck_line_skip = false;
			} else if (ck_linelen < sizeof(ck_line) - 1) {
				ck_line[ck_linelen++] = buf[i];
			} else {
				ck_line_skip = true;
			}
		}
		auth_wipe(buf, (size_t)n);	/* it may have held a key */
	}
}

/* One line to the node (pipe writes under PIPE_BUF are atomic). */
static int __attribute__((format(printf, 1, 2)))
ck_write(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -1;
	for (;;) {
		ssize_t w = write(ck_out, line, (size_t)n);

		if (w == n)
			return 0;
		if (w < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

/* Appends one line of timings to $MPIV_CKPT_LOG, if set. */
static void
ck_log(uint64_t k, long drain, long sync, long fork, pid_t clone)
{
	const char *path = getenv("MPIV_CKPT_LOG");
	char line[256];
	int fd, n;

	if (path == NULL || *path == '\0')
		return;
	n = snprintf(line, sizeof(line), "ckpt %llu rank %d clone %ld "
	    "drain_us %ld sync_us %ld fork_us %ld stall_us %ld\n",
	    (unsigned long long)k, ck_rank, (long)clone, drain, sync, fork,
	    drain + sync + fork);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (n > 0 && write(fd, line, (size_t)n) < 0) {
		/* measurements only */
	}
	close(fd);
}

/* ---------------- the clone ---------------- */

/* What tells a restored clone from one merely continued. */
struct ck_ident {
	dev_t dev;
	ino_t ino;
	char pidns[64];
};

static void
ck_ident_get(struct ck_ident *id)
{
	struct stat st;
	ssize_t n;

	memset(id, 0, sizeof(*id));
	if (fstat(ck_in, &st) == 0) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
	n = readlink("/proc/self/ns/pid", id->pidns, sizeof(id->pidns) - 1);
	if (n > 0)
		id->pidns[n] = '\0';
}

/* A restored clone waits for "inc n"; no answer means no restore. */
static uint32_t
ck_wait_inc(void)
{
	long deadline = mono_us() + CK_INC_MS * 1000L;
	int fl;

	if ((fl = fcntl(ck_in, F_GETFL)) >= 0)
		fcntl(ck_in, F_SETFL, fl | O_NONBLOCK);
	ck_linelen = 0;
	ck_line_skip = false;
	ck_inc_line = 0;
	while (ck_inc_line == 0 && ck_in >= 0) {
		struct pollfd p = { .fd = ck_in, .events = POLLIN };
		long left = (deadline - mono_us()) / 1000;

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) > 0)
			mpiv_ckpt_ctrl_input();
	}
	return (uint32_t)ck_inc_line;
}

/*
 * The restored clone reconnects as incarnation inc and puts back what
 * the CMs must know about its pending requests. A failure makes every
 * later call fail through the error handler with the reason.
 */
static void
ck_restore(const Mpiv__CkptMark *mark, uint32_t inc)
{
	char err[512], num[16];
	int rc;

	snprintf(num, sizeof(num), "%u", inc);
	setenv("MPIV_INCARNATION", num, 1);
	mpiv_fault_reset();	/* MPIV_FAULT again, for this incarnation */
	mpiv_fault_point("restore-woken");
	mpiv_ndlog_restore_reset();
	if (mpiv_proto->restore_prepare != NULL &&
	    (rc = mpiv_proto->restore_prepare(inc)) != MPI_SUCCESS) {
		mpiv_tp_set_error("rank %d: restored from checkpoint %llu: %s",
		    ck_rank, (unsigned long long)mark->ckpt_no,
		    mpiv_err_last_detail());
		return;
	}
	if (mpiv_tp_reopen(inc, mark->event, mark->nd_no, err,
	    sizeof(err)) < 0) {
		mpiv_tp_set_error("rank %d: restored from checkpoint %llu: %s",
		    ck_rank, (unsigned long long)mark->ckpt_no, err);
		return;
	}
	if ((rc = mpiv_p2p_restore()) != MPI_SUCCESS) {
		mpiv_tp_set_error("rank %d: restored from checkpoint %llu: "
		    "cannot post pending requests again (error %d)", ck_rank,
		    (unsigned long long)mark->ckpt_no, rc);
		return;
	}
	/* an MPI-IO operation waiting for its answer asks again */
	if ((rc = mpiv_file_restore()) != MPI_SUCCESS)
		mpiv_tp_set_error("rank %d: restored from checkpoint %llu: "
		    "cannot send the file operation again (error %d)", ck_rank,
		    (unsigned long long)mark->ckpt_no, rc);
}

/*
 * Runs in the clone (middle: the pid of the middle child): drops the CM
 * sockets, leads its own process group, dies with the node once it is
 * the node's child, and stops. Returns only in a restored clone, with
 * its new incarnation.
 */
static uint32_t
ck_clone(pid_t middle)
{
	struct ck_ident before, after;
	struct timespec nap = { 0, 200000 };
	long deadline = mono_us() + CK_REPARENT_MS * 1000L;
	uint32_t inc;
	pid_t parent;

	ck_ident_get(&before);
	mpiv_tp_clone_detach();
	if (mpiv_proto->clone_detach != NULL)
		mpiv_proto->clone_detach();
	(void)setpgid(0, 0);
	/* A pdeath signal set while the middle child lives would fire at
	   its exit: wait for the reparenting to the node (a subreaper). */
	while ((parent = getppid()) == middle && mono_us() < deadline)
		nanosleep(&nap, NULL);
	if (parent != middle) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);	/* the node died meanwhile */
	}
	raise(SIGSTOP);
	/* Continued: by a restore, or after a failed dump. */
	ck_ident_get(&after);
	if (after.ino == before.ino && after.dev == before.dev &&
	    strcmp(after.pidns, before.pidns) == 0)
		_exit(0);	/* never restored: the parent lives on */
	if ((inc = ck_wait_inc()) == 0) {
		/* Restored but the node never said who we are: die like a
		   killed rank so the dispatcher starts it again. */
		raise(SIGKILL);
		_exit(137);
	}
	/* Normally restored from the image already; the parent is now the
	   node (or, in a fallback namespace, its init). */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	return inc;
}

/*
 * The clone shares its open files' offsets with the rank (fork shares
 * open file descriptions): a rank that reads on while its clone waits
 * for its dump would move the read offset the image records. stdin, a
 * regular file when the job has one (docs/ENVIRONMENT.md, "Standard
 * input"), gets a description of its own in the clone, at the offset it
 * had at the fork. The offset before the fork: -1 when stdin is no
 * regular file (a pipe, /dev/null: nothing to keep).
 */
static off_t
ck_stdin_offset(void)
{
	struct stat st;

	if (fstat(0, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return lseek(0, 0, SEEK_CUR);
}

/* In the clone: stdin opened again at off. 0 or -1. */
static int
ck_stdin_own(off_t off)
{
	int fl, fd;

	if (off < 0)
		return 0;
	if ((fl = fcntl(0, F_GETFL)) < 0 ||
	    (fd = open("/proc/self/fd/0", (fl & O_ACCMODE) | O_CLOEXEC)) < 0)
		return -1;
	if (lseek(fd, off, SEEK_SET) != off || dup2(fd, 0) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * Forks the clone (through a middle child that exits at once). Returns
 * the clone's pid in the parent, 0 in the restored clone (with *inc),
 * -1 with errno when no clone exists.
 */
static pid_t
ck_fork(uint32_t *inc)
{
	off_t in_off = ck_stdin_offset();
	int p[2], st;
	pid_t a, b = -1;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if ((a = fork()) < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (a == 0) {
		pid_t middle = getpid();

		b = fork();
		if (b == 0) {
			close(p[0]);
			close(p[1]);
			/* A clone that cannot keep stdin's offset dies
			   before it stops: a failed checkpoint, no wrong
			   image. */
			if (ck_stdin_own(in_off) < 0)
				_exit(1);
			*inc = ck_clone(middle);
			return 0;
		}
		n = write(p[1], &b, sizeof(b));
		_exit(n == (ssize_t)sizeof(b) && b > 0 ? 0 : 1);
	}
	close(p[1]);
	/* The clone's pid comes as soon as it exists; the middle child's
	   exit (the teardown of its copy of our memory) is not waited for:
	   it is reaped at the next checkpoint or at MPI_Finalize. */
	do
		n = read(p[0], &b, sizeof(b));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (waitpid(a, &st, WNOHANG) == 0)
		ck_middle = a;
	if (n != (ssize_t)sizeof(b) || b <= 0) {
		errno = ECHILD;
		return -1;
	}
	return b;
}

/* ---------------- send digests of durable checkpoints ---------------- */

/* Keeps the send sequences of checkpoint k in the oldest slot. */
static void
ck_snap_take(uint64_t k)
{
	struct ck_snap *o = &ck_snaps[0];
	int n = mpiv_state.world_size;

	for (int i = 1; i < CK_SNAPS; i++)
		if (ck_snaps[i].k < o->k)
			o = &ck_snaps[i];
	if (o->seqs == NULL && (o->seqs = calloc((size_t)n,
	    sizeof(*o->seqs))) == NULL) {
		o->k = 0;
		return;		/* no trim for k: the digests stay longer */
	}
	mpiv_p2p_seq_copy(o->seqs, n);
	o->k = k;
}

void
mpiv_ckpt_ask(void)
{
	if (mpiv_ckpt_armed)
		ck_requested = true;
}

void
mpiv_ckpt_durable(uint64_t k)
{
	if (k > ck_durable)
		ck_durable = k;
}

/* Sends DigestTrim for the newest durable checkpoint we have sequences
   of, to every CM. Errors surface through the transport. MPI code. */
static void
ck_send_trim(void)
{
	Mpiv__DigestTrim t = MPIV__DIGEST_TRIM__INIT;
	struct ck_snap *best = NULL;

	for (int i = 0; i < CK_SNAPS; i++)
		if (ck_snaps[i].k > ck_trimmed &&
		    ck_snaps[i].k <= ck_durable &&
		    (best == NULL || ck_snaps[i].k > best->k))
			best = &ck_snaps[i];
	if (mpiv_proto->ckpt_durable != NULL)
		mpiv_proto->ckpt_durable(ck_durable);
	ck_trimmed = ck_durable;
	if (best == NULL)
		return;
	t.ckpt_no = best->k;
	t.n_seqs = (size_t)mpiv_state.world_size;
	t.seqs = best->seqs;
	for (int cm = 0; cm < mpiv_tp_ncms(); cm++)
		if (mpiv_tp_send(cm, MPIV__MSG_TYPE__MSG_DIGEST_TRIM, &t.base,
		    NULL, 0, NULL, NULL) != MPI_SUCCESS)
			return;
}

/* ---------------- taking one ---------------- */

static void
ck_take(void)
{
	Mpiv__CkptMark mark = MPIV__CKPT_MARK__INIT;
	int home = mpiv_tp_home(mpiv_state.world_rank);
	long t0, t1, t2, t3, deadline;
	uint64_t k = ++ck_no;
	uint32_t inc = 0;
	pid_t clone;
	int rc;

	ck_busy = true;
	ck_requested = false;
	ck_reap_middle();
	t0 = mono_us();
	/* 1. Nothing of ours is on the way: outcomes stored, every message
	   sent complete at its CM (and in its store: a CM restarted on its
	   store still holds what the image counts as sent). */
	if ((rc = mpiv_ndlog_sync()) != MPI_SUCCESS ||
	    (rc = mpiv_tp_sync_cms()) != MPI_SUCCESS)
		goto out;
	t1 = mono_us();
	/* 2. The node empties our output pipes and says go. */
	if (ck_write("ckpt-sync %llu\n", (unsigned long long)k) < 0) {
		ck_node_lost();
		goto out;
	}
	deadline = mono_us() + CK_GO_MS * 1000L;
	while (ck_go < k) {
		long left = (deadline - mono_us()) / 1000;

		if (ck_in < 0)
			goto out;	/* the node went away */
		if (left <= 0) {
			ck_write("ckpt-skip %llu no go from the node\n",
			    (unsigned long long)k);
			goto out;
		}
		if ((rc = mpiv_tp_progress((int)left)) != MPI_SUCCESS)
			goto out;
	}
	t2 = mono_us();
	if (mpiv_ahead_pending()) {
		/* a streaming replay is on: deliveries held for posts still
		   to come are no clean resume point (rp_ahead.c) */
		ck_write("ckpt-skip %llu replaying\n", (unsigned long long)k);
		goto out;
	}
	/* 3. The mark: from here on nothing is read until the fork. */
	mark.ckpt_no = k;
	mark.event = mpiv_tp_last_event();
	mark.nd_no = mpiv_ndlog_done();
	mark.post_no = mpiv_p2p_post_count();
	if (mpiv_tp_send_now(home, MPIV__MSG_TYPE__MSG_CKPT_MARK,
	    &mark.base) != MPI_SUCCESS)
		goto out;
	ck_snap_take(k);
	if (mpiv_proto->ckpt_marked != NULL)
		mpiv_proto->ckpt_marked(k);
	mpiv_fault_point("ckpt-before-fork");
	/* 4. The clone. */
	clone = ck_fork(&inc);
	if (clone == 0) {
		ck_restore(&mark, inc);
		goto out;
	}
	if (clone < 0) {
		ck_write("ckpt-skip %llu fork: %s\n", (unsigned long long)k,
		    strerror(errno));
		goto out;
	}
	t3 = mono_us();
	if (ck_write("ckpt-clone %llu %ld %llu %llu %llu\n",
	    (unsigned long long)k, (long)clone,
	    (unsigned long long)mark.event, (unsigned long long)mark.nd_no,
	    (unsigned long long)mark.post_no) < 0)
		ck_node_lost();
	mpiv_fault_point("ckpt-after-fork");
	ck_log(k, t1 - t0, t2 - t1, t3 - t2, clone);
out:
	if (ck_interval_us > 0)
		ck_next_us = mono_us() + ck_interval_us;
	ck_busy = false;
}

int
mpiv_ckpt_due_ms(void)
{
	long left;

	if (!mpiv_ckpt_armed || ck_busy || ck_interval_us == 0)
		return -1;
	left = (ck_next_us - mono_us()) / 1000;
	return left <= 0 ? 1 : left > INT_MAX ? INT_MAX : (int)left + 1;
}

void
mpiv_ckpt_check(void)
{
	if (ck_busy || !mpiv_state.initialized || mpiv_state.finalized)
		return;
	if (ck_durable > ck_trimmed && mpiv_tp_error() == NULL &&
	    !mpiv_tp_reading_frame())
		ck_send_trim();
	if (!ck_requested && (ck_interval_us == 0 || mono_us() < ck_next_us))
		return;
	if (mpiv_tp_error() != NULL || mpiv_tp_reading_frame())
		return;		/* not now: at a later safe point */
	ck_take();
}

/*
 * The node agent is gone (killed, crashed) while our output may still
 * lie in pipes it never read: going on to the job's close could close
 * it on output nobody will print (the dispatcher relaunches this rank,
 * and a relaunch after the close exits at MPI_Init). A node kill sends
 * SIGKILL to its ranks too, but a rank on another core may still run
 * for a moment after the agent's end closed its pipes. This incarnation
 * leaves now, quietly; its successor runs again and prints it all (once).
 */
static void __attribute__((noreturn))
ck_node_gone(void)
{
	_exit(70);
}

/*
 * Everything this rank wrote on stdout and stderr so far has reached the
 * dispatcher: "out-sync n" to the node, which drains the rank's pipes
 * into Output frames, then asks the dispatcher (OutputSync after them on
 * the same connection) and writes "synced n" back. Serves the transport
 * while it waits. Without a node to ask (never had control pipes),
 * nothing to wait for; a node that closed them is gone (ck_node_gone).
 * MPI code.
 */
int
mpiv_ckpt_output_sync(void)
{
	int rc;

	if (ck_node_closed)
		ck_node_gone();
	if (ck_in < 0 || ck_out < 0)
		return MPI_SUCCESS;
	fflush(stdout);
	fflush(stderr);
	if (ck_write("out-sync %llu\n",
	    (unsigned long long)++ck_outsync_sent) < 0)
		ck_node_gone();
	/* (the transport no longer polls ck_in: no checkpoints from the
	   start of MPI_Finalize on) */
	while (ck_outsync_got < ck_outsync_sent) {
		struct pollfd p = { .fd = ck_in, .events = POLLIN };

		if (ck_in < 0)
			ck_node_gone();
		if ((rc = mpiv_tp_progress(0)) != MPI_SUCCESS)
			return rc;
		(void)poll(&p, 1, 20);
		mpiv_ckpt_ctrl_input();
	}
	return MPI_SUCCESS;
}
