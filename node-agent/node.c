/*
 * node.c: `mpiv node`, the node agent. Dials the dispatcher (nothing
 * ever connects to a node), registers its slots, heartbeats every
 * second, and runs the ranks it is told to launch: stdout/stderr through
 * pipes forwarded as Output frames, an abort pipe (MPIV_CTRL_FD), and a
 * TaskExit once the rank was reaped and its pipes reached EOF, so no
 * output is ever reported after the exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "conn.h"
#include "daemon.h"
#include "log.h"
#include "net.h"
#include "pidns.h"
#include "proc.h"
#include "version.h"
#include "node.h"
#include "node_priv.h"

static void node_dial(struct node *n);

static void
node_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv node [-h] --dispatcher HOST:PORT [--slots N] "
	    "[--name NAME]\n"
	    "                 [--log-level error|warn|info|debug]\n"
	    "  --dispatcher HOST:PORT  the dispatcher to register with\n"
	    "  --slots N               ranks this node runs at once "
	    "(default: number of CPUs)\n"
	    "  --name NAME             node name (default: host name)\n"
	    "  --heartbeat-interval S  seconds between heartbeats "
	    "(default 1)\n"
	    "  --cache-dir DIR         shipped programs (default "
	    "/var/cache/mpiv as root,\n"
	    "                          else ~/.cache/mpiv)\n"
	    "  --log-level LEVEL       default info (MPIV_LOG overrides)\n"
	    "  --secret-file FILE      node key (mpiv secret node-key) or "
	    "cluster secret\n"
	    "                          (env MPIV_SECRET_FILE)\n");
}

/* ---------------- tasks ---------------- */

static void
task_close_stream(struct task_stream *s)
{
	if (s->fd < 0)
		return;
	ev_io_stop(s->t->n->loop, &s->w);
	close(s->fd);
	s->fd = -1;
}

static void
task_close_ctrl(struct task *t)
{
	if (t->ctrl_fd < 0)
		return;
	ev_io_stop(t->n->loop, &t->ctrl_w);
	close(t->ctrl_fd);
	t->ctrl_fd = -1;
}

static void
task_free(struct task *t)
{
	struct node *n = t->n;

	task_close_stream(&t->out);
	task_close_stream(&t->err);
	task_close_ctrl(t);
	if (t->ctrl_in_fd >= 0)
		close(t->ctrl_in_fd);
	ev_child_stop(n->loop, &t->child_w);
	ev_timer_stop(n->loop, &t->drain_w);
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		n->tasks = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	free(t);
}

/* Sends TaskExit for a reaped task and frees it. */
static void
task_report(struct task *t)
{
	Mpiv__TaskExit te = MPIV__TASK_EXIT__INIT;
	struct node *n = t->n;

	te.job_id = t->job;
	te.rank = t->rank;
	te.incarnation = t->incarnation;
	/* A namespace handle ends as the rank did (pidns.h). */
	if (WIFEXITED(t->status))
		te.exit_code = WEXITSTATUS(t->status);
	else if (WIFSIGNALED(t->status))
		te.signal = WTERMSIG(t->status);
	te.aborted = t->aborted;
	te.abort_code = t->abort_code;
	te.reason = t->reason;
	log_info("node task exit job=%s rank=%d incarnation=%u pid=%d "
	    "code=%d signal=%d aborted=%d restored=%d", t->job, t->rank,
	    t->incarnation, (int)t->task_pid, te.exit_code, te.signal,
	    te.aborted, t->restored);
	if (n->c != NULL)
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_EXIT, &te.base,
		    NULL, 0);
	task_free(t);
}

static void
task_check_done(struct task *t)
{
	if (t->reaped && t->out.fd < 0 && t->err.fd < 0)
		task_report(t);
}

/*
 * Parses the lines of the rank's control pipe: "abort <code>" and the
 * checkpoint lines (docs/CHECKPOINT.md).
 */
static void
task_ctrl_parse(struct task *t)
{
	char *nl, *end;
	long code;
	unsigned long long k;

	while ((nl = memchr(t->ctrl_buf, '\n', t->ctrl_len)) != NULL) {
		*nl = '\0';
		if (strncmp(t->ctrl_buf, "abort ", 6) == 0) {
			code = strtol(t->ctrl_buf + 6, &end, 10);
			if (end != t->ctrl_buf + 6) {
				t->aborted = true;
				t->abort_code = (int)code;
			}
		} else if (strncmp(t->ctrl_buf, "ckpt-sync ", 10) == 0) {
			k = strtoull(t->ctrl_buf + 10, &end, 10);
			if (end != t->ctrl_buf + 10 && *end == '\0')
				node_ckpt_sync(t, k);
		} else if (strncmp(t->ctrl_buf, "ckpt-clone ", 11) == 0) {
			node_ckpt_clone(t, t->ctrl_buf + 11);
		} else if (strncmp(t->ctrl_buf, "ckpt-skip ", 10) == 0) {
			log_info("node checkpoint skipped job=%s rank=%d "
			    "incarnation=%u what=\"%s\"", t->job, t->rank,
			    t->incarnation, t->ctrl_buf + 10);
		} else {
			log_debug("node ignoring control line \"%s\" rank=%d",
			    t->ctrl_buf, t->rank);
		}
		t->ctrl_len -= (size_t)(nl + 1 - t->ctrl_buf);
		memmove(t->ctrl_buf, nl + 1, t->ctrl_len);
	}
	if (t->ctrl_len == sizeof(t->ctrl_buf))	/* garbage: drop it */
		t->ctrl_len = 0;
}

static void
task_ctrl_read(struct task *t)
{
	ssize_t r;

	while (t->ctrl_fd >= 0) {
		r = read(t->ctrl_fd, t->ctrl_buf + t->ctrl_len,
		    sizeof(t->ctrl_buf) - t->ctrl_len);
		if (r > 0) {
			t->ctrl_len += (size_t)r;
			task_ctrl_parse(t);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		task_close_ctrl(t);
	}
}

static void
task_on_ctrl(struct ev_loop *loop, ev_io *w, int revents)
{
	task_ctrl_read(w->data);
}

static void
task_pause_all(struct node *n, bool pause)
{
	for (struct task *t = n->tasks; t != NULL; t = t->next) {
		struct task_stream *ss[2] = { &t->out, &t->err };
		for (int i = 0; i < 2; i++) {
			if (ss[i]->fd < 0 || ss[i]->paused == pause)
				continue;
			ss[i]->paused = pause;
			if (pause)
				ev_io_stop(n->loop, &ss[i]->w);
			else
				ev_io_start(n->loop, &ss[i]->w);
		}
	}
}

/*
 * Reads one chunk of a rank's stdout/stderr and forwards it. Does not
 * report a task whose stream reached EOF (the caller does).
 */
ssize_t
task_read_stream(struct task_stream *s)
{
	struct task *t = s->t;
	struct node *n = t->n;
	Mpiv__Output o = MPIV__OUTPUT__INIT;
	static uint8_t buf[NODE_READ_CHUNK];
	ssize_t r;

	if (s->fd < 0)
		return 0;
	r = read(s->fd, buf, sizeof(buf));
	if (r < 0 && (errno == EINTR || errno == EAGAIN ||
	    errno == EWOULDBLOCK))
		return -1;
	if (r <= 0) {
		task_close_stream(s);
		return 0;
	}
	t->out_count[s->stream == 2] += (uint64_t)r;
	if (n->c == NULL)
		return r;	/* dispatcher gone: nobody to tell */
	o.job_id = t->job;
	o.rank = t->rank;
	o.stream = s->stream;
	o.incarnation = t->incarnation;
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_OUTPUT, &o.base, buf,
	    (uint32_t)r);
	if (conn_queued(n->c) > NODE_OUT_HIGH && !ev_is_active(&n->resume_w)) {
		task_pause_all(n, true);
		ev_timer_again(n->loop, &n->resume_w);
	}
	return r;
}

static void
task_on_output(struct ev_loop *loop, ev_io *w, int revents)
{
	struct task_stream *s = w->data;

	if (task_read_stream(s) == 0)
		task_check_done(s->t);
}

static void
node_on_resume(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct node *n = w->data;

	if (n->c != NULL && conn_queued(n->c) > NODE_OUT_LOW)
		return;		/* repeat timer: check again later */
	ev_timer_stop(loop, w);
	task_pause_all(n, false);
}

/* Pipes of a reaped rank that stay open (a daemonized grandchild). */
static void
task_on_drain_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct task *t = w->data;

	log_warnx("node rank=%d job=%s exited but its output pipes stay "
	    "open; reporting the exit anyway", t->rank, t->job);
	task_close_stream(&t->out);
	task_close_stream(&t->err);
	task_check_done(t);
}

static void
task_on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	struct task *t = w->data;

	ev_child_stop(loop, w);
	t->reaped = true;
	t->status = w->rstatus;
	/*
	 * A rank killed by a signal may be relaunched: whatever it left in
	 * its process group (helpers, children) dies with it. The group id
	 * stays reserved while any member lives, so this cannot hit a
	 * stranger; ESRCH just means nothing was left. (In a namespace of
	 * its own, all of it died with the namespace already.)
	 */
	if (!t->nsh && !t->restored && WIFSIGNALED(t->status) &&
	    killpg(t->pid, SIGKILL) == 0)
		log_info("node killed leftovers of job=%s rank=%d "
		    "incarnation=%u pgid=%d", t->job, t->rank,
		    t->incarnation, (int)t->pid);
	task_ctrl_read(t);	/* the abort line was written before _exit */
	task_close_ctrl(t);
	ev_timer_start(loop, &t->drain_w);
	task_check_done(t);
}

void
task_stream_init(struct task *t, struct task_stream *s, int fd, int stream)
{
	s->t = t;
	s->fd = fd;
	s->stream = stream;
	ev_io_init(&s->w, task_on_output, fd, EV_READ);
	s->w.data = s;
	if (fd >= 0) {
		(void)net_set_nonblock(fd);
		ev_io_start(t->n->loop, &s->w);
	}
}

/* Reports a task that could not even be forked. */
void
node_launch_failed(struct node *n, const Mpiv__Launch *l, const char *why)
{
	Mpiv__TaskExit te = MPIV__TASK_EXIT__INIT;

	te.job_id = l->job_id;
	te.rank = l->rank;
	te.incarnation = l->incarnation;
	te.exit_code = 1;
	te.reason = (char *)why;
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_EXIT, &te.base, NULL, 0);
}

#define NODE_NENV 10

/* Starts watching a new task (ctrl pipe, child, drain timer) and links
   it into the node's list. */
void
task_ctrl_start(struct task *t)
{
	struct node *n = t->n;

	ev_io_init(&t->ctrl_w, task_on_ctrl, t->ctrl_fd, EV_READ);
	t->ctrl_w.data = t;
	if (t->ctrl_fd >= 0) {
		(void)net_set_nonblock(t->ctrl_fd);
		ev_io_start(n->loop, &t->ctrl_w);
	}
	if (t->ctrl_in_fd >= 0)
		(void)net_set_nonblock(t->ctrl_in_fd);
	ev_child_init(&t->child_w, task_on_child, t->pid, 0);
	t->child_w.data = t;
	ev_child_start(n->loop, &t->child_w);
	ev_timer_init(&t->drain_w, task_on_drain_timeout, NODE_DRAIN_TIMEOUT,
	    0.);
	t->drain_w.data = t;
}

void
task_insert(struct node *n, struct task *t)
{
	t->next = n->tasks;
	if (n->tasks != NULL)
		n->tasks->prev = t;
	n->tasks = t;
}

const char *
node_home_cm(const Mpiv__Launch *l)
{
	if (l->n_cms == 0 || l->rank < 0)
		return "";
	return l->cms[(size_t)l->rank % l->n_cms];
}

/*
 * Sends sig to a running rank: to its process group (a rank leads one
 * of its own), else to the rank alone. What a rank in a PID namespace of
 * its own leaves behind dies with the namespace, once a checkpoint clone
 * it forked has been dumped (pidns.c); task_kill ends it all at once.
 */
void
task_signal(struct task *t, int sig)
{
	pid_t p = t->task_pid > 0 ? t->task_pid : t->pid;

	if (killpg(p, sig) == 0 || errno != ESRCH)
		return;
	if (kill(p, sig) < 0 && errno != ESRCH)
		log_warn("node kill pid=%d signal=%d", (int)p, sig);
}

/* SIGKILL to a rank and everything it started, at once. */
static void
task_kill(struct task *t)
{
	if (t->nsh || t->restored)
		(void)kill(t->pid, SIGKILL);	/* a handle ends its namespace */
	else
		(void)killpg(t->pid, SIGKILL);
}

/* Kills an older incarnation of the rank still running here. */
static void
node_fence(struct node *n, const Mpiv__Launch *l)
{
	for (struct task *t = n->tasks; t != NULL; t = t->next) {
		if (strcmp(t->job, l->job_id) != 0 || t->rank != l->rank ||
		    t->incarnation >= l->incarnation || t->reaped)
			continue;
		log_warnx("node job=%s rank=%d incarnation=%u still runs at "
		    "the launch of incarnation %u: killing it", t->job,
		    t->rank, t->incarnation, l->incarnation);
		task_kill(t);
	}
	node_restore_kill(n, l->job_id, l->rank, l->incarnation, SIGKILL);
}

void
node_launch(struct node *n, const Mpiv__Launch *l)
{
	Mpiv__TaskStarted ts = MPIV__TASK_STARTED__INIT;
	char vjob[96], vrank[32], vsize[32], vinc[32], vctrl[32], vnode[96];
	char vctrlin[32], vival[64], vkey[sizeof(AUTH_ENV_RANK) +
	    2 * AUTH_HASH_LEN + 1];
	static const char *const unset[] = { AUTH_ENV_SECRET, NULL };
	char *vcms, **env = NULL, **argv = NULL, why[320], binpath[PATH_MAX];
	struct proc_spec spec = { 0 };
	struct proc_child ch;
	struct task *t = NULL;
	size_t len = 16, k = 0;
	pid_t ns_pid;

	if (l->n_argv < 1 || *l->argv[0] == '\0') {
		node_launch_failed(n, l, "empty command line");
		return;
	}
	/* A shipped program runs from the cache: fetched first if missing
	   (node_launch runs again once it is there). */
	if (*l->binary_hash != '\0' &&
	    node_bin_need(n, l, binpath, sizeof(binpath)) != 0)
		return;
	/* Fencing: an older incarnation of this rank must not live on. */
	node_fence(n, l);
	if (l->restore) {
		(void)node_restore(n, l);
		return;
	}
	for (size_t i = 0; i < l->n_cms; i++)
		len += strlen(l->cms[i]) + 1;
	if ((vcms = malloc(len)) == NULL ||
	    (env = calloc(l->n_env + NODE_NENV + 1, sizeof(*env))) == NULL ||
	    (argv = calloc(l->n_argv + 1, sizeof(*argv))) == NULL ||
	    (t = calloc(1, sizeof(*t))) == NULL) {
		node_launch_failed(n, l, "node agent out of memory");
		goto out_free;
	}
	strcpy(vcms, "MPIV_CMS=");
	for (size_t i = 0; i < l->n_cms; i++) {
		if (i > 0)
			strcat(vcms, ",");
		strcat(vcms, l->cms[i]);
	}
	for (size_t i = 0; i < l->n_env; i++)
		if (strchr(l->env[i], '=') != NULL)
			env[k++] = l->env[i];
	snprintf(vjob, sizeof(vjob), "MPIV_JOB=%s", l->job_id);
	snprintf(vrank, sizeof(vrank), "MPIV_RANK=%d", l->rank);
	snprintf(vsize, sizeof(vsize), "MPIV_SIZE=%d", l->nranks);
	snprintf(vinc, sizeof(vinc), "MPIV_INCARNATION=%u", l->incarnation);
	snprintf(vctrl, sizeof(vctrl), "MPIV_CTRL_FD=%d", PROC_CTRL_FD);
	snprintf(vnode, sizeof(vnode), "MPIV_NODE=%s", n->name);
	snprintf(vctrlin, sizeof(vctrlin), "MPIV_CTRL_IN_FD=%d",
	    PROC_CTRL_IN_FD);
	snprintf(vival, sizeof(vival), "MPIV_CKPT_INTERVAL=%.6g",
	    n->criu && *l->cs != '\0' ? l->ckpt_interval : 0.);
	env[k++] = vjob;
	env[k++] = vrank;
	env[k++] = vsize;
	env[k++] = vinc;
	env[k++] = vcms;
	env[k++] = vctrl;
	env[k++] = vnode;
	env[k++] = vctrlin;
	env[k++] = vival;
	vkey[0] = '\0';
	if (l->rank_key.len == AUTH_HASH_LEN) {
		/* The rank's only credential: K_rank of its job and rank. */
		memcpy(vkey, AUTH_ENV_RANK "=", sizeof(AUTH_ENV_RANK));
		auth_hex(l->rank_key.data, AUTH_HASH_LEN,
		    vkey + sizeof(AUTH_ENV_RANK));
		env[k++] = vkey;
	}

	/* protobuf-c arrays are counted, exec wants a NULL at the end. */
	memcpy(argv, l->argv, l->n_argv * sizeof(*argv));
	spec.argv = argv;
	spec.path = *l->binary_hash != '\0' ? binpath : NULL;
	spec.cwd = l->cwd;
	/* A shipped program may come from a machine whose directories this
	   one lacks: it then runs in the cache directory. */
	if (spec.path != NULL && access(l->cwd, X_OK) != 0)
		spec.cwd = n->cache_dir;
	spec.setenv = env;
	spec.unsetenv = unset;	/* our secret file is none of the rank's business */
	spec.pipe_out = spec.pipe_err = spec.ctrl_pipe = true;
	spec.ctrl_in_pipe = true;
	/* The same getpid() in every incarnation (README "What a program
	   must not depend on"). */
	ns_pid = n->pidns ? pidns_rank_pid(l->job_id, l->rank) : 0;
	if (ns_pid > 0) {
		spec.forker = &pidns_forker;
		spec.forker_arg = &ns_pid;
	}
	if (proc_spawn(&spec, &ch) < 0) {
		snprintf(why, sizeof(why), "cannot start %s: %s", l->argv[0],
		    strerror(errno));
		log_warnx("node %s", why);
		node_launch_failed(n, l, why);
		goto out_free;
	}
	t->n = n;
	snprintf(t->job, sizeof(t->job), "%s", l->job_id);
	t->rank = l->rank;
	t->incarnation = l->incarnation;
	t->pid = ch.pid;
	t->task_pid = ch.task_pid > 0 ? ch.task_pid : ch.pid;
	t->nsh = ns_pid > 0;
	t->ctrl_fd = ch.ctrl_fd;
	t->ctrl_in_fd = ch.ctrl_in_fd;
	snprintf(t->cs, sizeof(t->cs), "%s", l->cs);
	snprintf(t->cm, sizeof(t->cm), "%s", node_home_cm(l));
	if (ch.exec_errno != 0)
		snprintf(t->reason, sizeof(t->reason), "cannot %s %s: %s",
		    ch.exec_step, ch.exec_step[0] == 'c' ? l->cwd : l->argv[0],
		    strerror(ch.exec_errno));
	task_stream_init(t, &t->out, ch.out_fd, 1);
	task_stream_init(t, &t->err, ch.err_fd, 2);
	task_ctrl_start(t);
	task_insert(n, t);
	t = NULL;
	log_info("node launched job=%s rank=%d incarnation=%u pid=%d "
	    "getpid=%d%s%s", l->job_id, l->rank, l->incarnation,
	    (int)(ch.task_pid > 0 ? ch.task_pid : ch.pid),
	    (int)(ns_pid > 0 ? ns_pid : ch.pid),
	    ch.exec_errno ? " error=" : "", ch.exec_errno ? "exec" : "");
	if (ch.exec_errno == 0) {
		ts.job_id = l->job_id;
		ts.rank = l->rank;
		ts.incarnation = l->incarnation;
		ts.pid = ch.task_pid > 0 ? ch.task_pid : ch.pid;
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_STARTED,
		    &ts.base, NULL, 0);
	}
out_free:
	free(t);
	free(argv);
	free(env);
	free(vcms);
}

static void
node_kill(struct node *n, const Mpiv__Kill *k)
{
	int sig = k->signal > 0 && k->signal < NSIG ? k->signal : SIGKILL;

	for (struct task *t = n->tasks; t != NULL; t = t->next) {
		if (strcmp(t->job, k->job_id) != 0 ||
		    (k->rank >= 0 && t->rank != k->rank) || t->reaped)
			continue;
		log_info("node killing job=%s rank=%d pid=%d signal=%d", t->job,
		    t->rank, (int)t->task_pid, sig);
		task_signal(t, sig);
	}
	node_restore_kill(n, k->job_id, k->rank, UINT32_MAX, sig);
}

/* Kills every rank and waits for it: nothing outlives the agent. */
static void
node_kill_all(struct node *n, bool wait)
{
	struct task *t;

	for (t = n->tasks; t != NULL; t = t->next)
		if (!t->reaped)
			task_kill(t);
	if (!wait)
		return;
	while ((t = n->tasks) != NULL) {
		if (!t->reaped)
			(void)waitpid(t->pid, NULL, 0);
		task_free(t);
	}
}

/*
 * Whether ranks run in PID namespaces of their own, said once: without,
 * a rank's pid changes with every incarnation, and a program that
 * depends on it fails with "replay diverged" when re-executed.
 */
static void
node_pidns_init(struct node *n)
{
	char why[256];

	n->pidns = pidns_available(why, sizeof(why));
	if (n->pidns)
		log_info("node pid namespaces ok: %s", why);
	else
		log_warnx("node ranks run in the node's own pid namespace (%s): "
		    "each incarnation of a rank gets another pid", why);
}

/* ---------------- dispatcher link ---------------- */

/*
 * NodeWelcome: our identity for this registration, and how long the
 * dispatcher waits for our heartbeats before it declares us dead: a
 * dispatcher silent that long has done so (or is gone), so we then give
 * up the link ourselves (node_on_silence).
 */
static void
node_welcome(struct node *n, const Mpiv__NodeWelcome *w)
{
	if (w->was_dead)
		log_warnx("node the dispatcher had declared us dead "
		    "previous=%s reason=\"%s\"; our ranks of then were "
		    "killed, we join as a fresh node", n->node_id,
		    w->dead_reason);
	snprintf(n->node_id, sizeof(n->node_id), "%s", w->node_id);
	if (w->heartbeat_timeout > 0 && w->heartbeat_timeout < 1e6) {
		n->silence_w.repeat = w->heartbeat_timeout;
		ev_timer_again(n->loop, &n->silence_w);
		/* Three heartbeats per timeout at least, or a node that is
		   merely slow gets declared dead over and over. */
		if (n->hb_w.repeat > w->heartbeat_timeout / 3) {
			log_warnx("node heartbeat interval %g s is too long for "
			    "the dispatcher's %g s timeout: using %g s",
			    n->hb_w.repeat, w->heartbeat_timeout,
			    w->heartbeat_timeout / 3);
			n->hb_w.repeat = w->heartbeat_timeout / 3;
			ev_timer_again(n->loop, &n->hb_w);
		}
	}
	log_info("node welcome node=%s heartbeat_timeout=%g", n->node_id,
	    w->heartbeat_timeout);
}

/*
 * Nothing from the dispatcher for its heartbeat timeout (it echoes each
 * heartbeat): partitioned or gone, it has declared us dead and relaunched
 * our ranks elsewhere. Ours are stale: node_on_close kills them, and we
 * register again as a fresh node once it answers.
 */
static void
node_on_silence(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct node *n = w->data;

	ev_timer_stop(loop, w);
	if (n->c == NULL || conn_is_closing(n->c))
		return;
	log_warnx("node dispatcher=%s silent for %g s: we are presumed dead",
	    n->dispatcher, w->repeat);
	conn_close(n->c, "dispatcher silent", false);
}

static void
node_on_frame(struct conn *c, const struct frame_hdr *h, ProtobufCMessage *m,
    uint8_t *payload)
{
	struct node *n = conn_udata(c);

	ev_timer_again(n->loop, &n->silence_w);	/* the dispatcher lives */
	if (h->type == MPIV__MSG_TYPE__MSG_BINARY_DATA)
		node_bin_data(n, (Mpiv__BinaryData *)m, payload,
		    h->payload_len);
	free(payload);
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		Mpiv__HelloReply *hr = (Mpiv__HelloReply *)m;
		if (!hr->ok) {
			log_errorx("node dispatcher=%s refused us: %s",
			    n->dispatcher, hr->error);
			n->exit_code = 1;
			n->stopping = true;
			conn_close(c, "refused", false);
		}
		return;
	}
	case MPIV__MSG_TYPE__MSG_LAUNCH:
		node_launch(n, (Mpiv__Launch *)m);
		return;
	case MPIV__MSG_TYPE__MSG_KILL:
		node_kill(n, (Mpiv__Kill *)m);
		return;
	case MPIV__MSG_TYPE__MSG_CKPT_REQUEST:
		node_ckpt_request(n, (Mpiv__CkptRequest *)m);
		return;
	case MPIV__MSG_TYPE__MSG_ERROR:
		log_warnx("node dispatcher error text=\"%s\"",
		    ((Mpiv__Error *)m)->text);
		return;
	case MPIV__MSG_TYPE__MSG_NODE_WELCOME:
		node_welcome(n, (Mpiv__NodeWelcome *)m);
		return;
	case MPIV__MSG_TYPE__MSG_NODE_KILL:
		/* Fault injection: die as a crashed machine would. */
		log_warnx("node killed by the dispatcher reason=\"%s\"; "
		    "SIGKILL to every rank and to the agent",
		    ((Mpiv__NodeKill *)m)->reason);
		node_kill_all(n, false);
		(void)kill(getpid(), SIGKILL);
		return;
	case MPIV__MSG_TYPE__MSG_HEARTBEAT:
		return;		/* the echo: silence_w was pushed back */
	case MPIV__MSG_TYPE__MSG_BINARY_DATA:
		return;		/* taken above, before its payload went */
	case MPIV__MSG_TYPE__MSG_BINARY_END:
		node_bin_end(n, (Mpiv__BinaryEnd *)m);
		return;
	default:
		log_debug("node ignoring %s from the dispatcher",
		    frame_type_name(h->type));
		return;
	}
}

static void
node_stop(struct node *n)
{
	n->stopping = true;
	node_kill_all(n, true);
	node_ckpt_stop(n);
	node_restore_stop(n);
	ev_timer_stop(n->loop, &n->hb_w);
	ev_timer_stop(n->loop, &n->silence_w);
	ev_timer_stop(n->loop, &n->resume_w);
	ev_signal_stop(n->loop, &n->sigint_w);
	ev_signal_stop(n->loop, &n->sigterm_w);
	if (n->c != NULL)
		conn_close(n->c, "node agent stopping", false);
}

static void
node_on_close(struct conn *c, const char *reason)
{
	struct node *n = conn_udata(c);

	n->c = NULL;
	if (n->stopping) {
		node_stop(n);
		return;
	}
	ev_timer_stop(n->loop, &n->silence_w);
	node_bin_drop_all(n);
	log_warnx("node lost dispatcher=%s reason=\"%s\"; killing ranks, "
	    "redialling", n->dispatcher, reason);
	node_kill_all(n, false);
	node_restore_stop(n);
	n->dial_warned = false;
}

static const struct conn_ops node_conn_ops = {
	.on_frame = node_on_frame,
	.on_close = node_on_close,
};

static void
node_dial(struct node *n)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__NodeRegister nr = MPIV__NODE_REGISTER__INIT;
	int fd;

	if ((fd = net_dial(n->dispatcher, NODE_DIAL_TIMEOUT_MS)) < 0) {
		if (!n->dial_warned)
			log_warn("node cannot reach dispatcher=%s, retrying",
			    n->dispatcher);
		n->dial_warned = true;
		return;
	}
	if ((n->c = conn_new(n->loop, fd, &node_conn_ops, n)) == NULL) {
		close(fd);
		return;
	}
	conn_auth_client(n->c, n->keys.enabled ? &n->keys.node : NULL);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_NODE;
	h.rank = -1;
	h.name = n->name;
	nr.name = n->name;
	nr.slots = n->slots;
	nr.criu = n->criu;
	nr.previous_id = n->node_id;
	nr.version = (char *)MPIV_VERSION;
	ev_timer_again(n->loop, &n->silence_w);
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0);
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_NODE_REGISTER, &nr.base,
	    NULL, 0);
	log_info("node registered dispatcher=%s name=%s slots=%d criu=%d",
	    n->dispatcher, n->name, n->slots, n->criu);
}

static void
node_on_heartbeat(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct node *n = w->data;
	Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;

	if (n->c == NULL) {
		node_dial(n);
		return;
	}
	hb.seq = ++n->hb_seq;
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_HEARTBEAT, &hb.base, NULL, 0);
}

static void
node_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct node *n = w->data;

	log_info("node stopping signal=%d", w->signum);
	node_stop(n);
}

int
node_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "heartbeat-interval", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "name", required_argument, NULL, 'N' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ "slots", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct node n = { .slots = 0, .hb_interval = NODE_HB_INTERVAL };
	const char *secret = NULL;
	enum log_level level = LOG_LEVEL_INFO;
	char *end;
	long v;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:d:hH:k:L:N:s:", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			n.dispatcher = optarg;
			break;
		case 'c':
			if (*optarg == '\0' || strlen(optarg) > PATH_MAX - 128) {
				fprintf(stderr, "mpiv node: bad --cache-dir "
				    "\"%s\"\n", optarg);
				return 2;
			}
			snprintf(n.cache_dir, sizeof(n.cache_dir), "%s", optarg);
			break;
		case 'H':
			n.hb_interval = strtod(optarg, &end);
			if (*end != '\0' || !(n.hb_interval >= 0.01) ||
			    n.hb_interval > 3600) {
				fprintf(stderr, "mpiv node: bad "
				    "--heartbeat-interval \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'h':
			node_usage(stdout);
			return 0;
		case 'L':
			if (log_parse_level(optarg, &level) < 0) {
				fprintf(stderr, "mpiv node: bad log level "
				    "\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'k':
			secret = optarg;
			break;
		case 'N':
			snprintf(n.name, sizeof(n.name), "%s", optarg);
			break;
		case 's':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > 65536) {
				fprintf(stderr, "mpiv node: bad --slots "
				    "\"%s\"\n", optarg);
				return 2;
			}
			n.slots = (int)v;
			break;
		default:
			node_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || n.dispatcher == NULL) {
		node_usage(stderr);
		return 2;
	}
	if (n.cache_dir[0] == '\0')
		node_bin_default_dir(n.cache_dir, sizeof(n.cache_dir));
	if (n.slots == 0 && (n.slots = (int)sysconf(_SC_NPROCESSORS_ONLN)) < 1)
		n.slots = 1;
	if (n.name[0] == '\0' && gethostname(n.name, sizeof(n.name) - 1) < 0)
		snprintf(n.name, sizeof(n.name), "node");
	log_init("node", level);
	signal(SIGPIPE, SIG_IGN);
	/* The cluster secret or, better on a volunteer machine, the node key
	   derived from it (mpiv secret node-key). */
	if (daemon_auth_load("node", secret, true, &n.keys) < 0)
		return 1;
	/* Clones of ranks (double fork) are reparented to us and reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("node cannot become a child subreaper");
	node_ckpt_init(&n);
	node_pidns_init(&n);

	/* ev_child needs the default loop. */
	if ((n.loop = ev_default_loop(EVFLAG_AUTO)) == NULL) {
		log_errorx("node cannot create an event loop");
		return 1;
	}
	ev_timer_init(&n.hb_w, node_on_heartbeat, n.hb_interval,
	    n.hb_interval);
	n.hb_w.data = &n;
	ev_init(&n.silence_w, node_on_silence);
	n.silence_w.repeat = NODE_SILENCE_DEFAULT;
	n.silence_w.data = &n;
	ev_timer_start(n.loop, &n.hb_w);
	ev_timer_init(&n.resume_w, node_on_resume, 0.05, 0.05);
	n.resume_w.data = &n;
	ev_signal_init(&n.sigint_w, node_on_signal, SIGINT);
	n.sigint_w.data = &n;
	ev_signal_start(n.loop, &n.sigint_w);
	ev_signal_init(&n.sigterm_w, node_on_signal, SIGTERM);
	n.sigterm_w.data = &n;
	ev_signal_start(n.loop, &n.sigterm_w);
	node_dial(&n);

	ev_run(n.loop, 0);

	node_kill_all(&n, true);
	node_ckpt_stop(&n);
	node_restore_stop(&n);
	ev_loop_destroy(n.loop);
	log_info("node stopped");
	return n.exit_code;
}
