/*
 * node_task.c: the ranks of a node agent. A Launch becomes a PrivSpawn
 * to the privileged helper (helper.h), which starts the rank and hands
 * back its pipe ends; stdout/stderr are forwarded as Output frames, the
 * control pipe (MPIV_CTRL_FD) carries "abort" and the checkpoint lines,
 * and a TaskExit goes once the helper reaped the rank (PrivExit) and its
 * pipes reached EOF, so no output is ever reported after the exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "conn.h"
#include "log.h"
#include "srvfault.h"
#include "net.h"
#include "pidns.h"
#include "proc.h"
#include "node_priv.h"

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
	ev_timer_stop(n->loop, &t->drain_w);
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		n->tasks = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	auth_wipe(t->image_key, sizeof(t->image_key));
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
	te.finalized = t->finalized;
	log_info("node task exit job=%s rank=%d incarnation=%u pid=%d "
	    "code=%d signal=%d aborted=%d finalized=%d restored=%d", t->job,
	    t->rank, t->incarnation, (int)t->task_pid, te.exit_code,
	    te.signal, te.aborted, te.finalized, t->restored);
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

/* Forwards now whatever the rank wrote on stdout and stderr so far. */
void
task_drain(struct task *t)
{
	ssize_t r;

	do
		r = task_read_stream(&t->out);
	while (r > 0);
	do
		r = task_read_stream(&t->err);
	while (r > 0);
}

/*
 * "out-sync n": whatever the rank wrote before it goes out now, then the
 * dispatcher is asked to say it has all of it (OutputSync after those
 * Output frames); its answer becomes "synced n" (node_output_synced).
 * Without a dispatcher the rank waits: it will be relaunched or killed.
 */
static void
task_output_sync(struct task *t, uint64_t k)
{
	Mpiv__OutputSync os = MPIV__OUTPUT_SYNC__INIT;

	if (srvfault_due("node-out-sync")) {
		task_close_ctrl(t);
		if (t->ctrl_in_fd >= 0)
			close(t->ctrl_in_fd);
		t->ctrl_in_fd = -1;
		sleep(1);
		kill(getpid(), SIGKILL);
	}
	task_drain(t);
	if (t->n->c == NULL)
		return;
	os.job_id = t->job;
	os.rank = t->rank;
	os.incarnation = t->incarnation;
	os.n = k;
	(void)conn_send(t->n->c, MPIV__MSG_TYPE__MSG_OUTPUT_SYNC, &os.base,
	    NULL, 0);
}

void
node_output_synced(struct node *n, const Mpiv__OutputSync *os)
{
	char line[48];

	for (struct task *t = n->tasks; t != NULL; t = t->next)
		if (strcmp(t->job, os->job_id) == 0 && t->rank == os->rank &&
		    t->incarnation == os->incarnation && !t->reaped) {
			snprintf(line, sizeof(line), "synced %" PRIu64 "\n",
			    os->n);
			ckpt_write_in(t, line);
			return;
		}
}

/*
 * Parses the lines of the rank's control pipe: "abort <code>", "out-sync
 * n", "finalized" and the checkpoint lines (docs/CHECKPOINT.md).
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
		} else if (strncmp(t->ctrl_buf, "out-sync ", 9) == 0) {
			k = strtoull(t->ctrl_buf + 9, &end, 10);
			if (end != t->ctrl_buf + 9 && *end == '\0')
				task_output_sync(t, k);
		} else if (strcmp(t->ctrl_buf, "finalized") == 0) {
			t->finalized = true;
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

void
task_on_resume(struct ev_loop *loop, ev_timer *w, int revents)
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

/* The helper reaped a rank (PrivExit): its TaskExit goes once its pipes
   reached EOF. */
void
node_task_exit(struct node *n, pid_t pid, int status)
{
	struct task *t;

	for (t = n->tasks; t != NULL; t = t->next)
		if (t->pid == pid && !t->reaped)
			break;
	if (t == NULL) {
		log_debug("node exit of pid=%d that is no task", (int)pid);
		return;
	}
	t->reaped = true;
	t->status = status;
	node_ckpt_forget(t->job, t->rank);
	task_ctrl_read(t);	/* the abort line was written before _exit */
	task_close_ctrl(t);
	ev_timer_start(n->loop, &t->drain_w);
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
 * Sends sig to a running rank, through the helper: to its process group
 * (a rank leads one of its own), else to the rank alone. What a rank in
 * a PID namespace of its own leaves behind dies with the namespace, once
 * a checkpoint clone it forked has been dumped (pidns.c); task_kill ends
 * it all at once.
 */
void
task_signal(struct task *t, int sig)
{
	node_link_signal(t->n, t->pid, sig, MPIV__PRIV_HOW__PRIV_GROUP);
}

/* SIGKILL to a rank and everything it started, at once. */
static void
task_kill(struct task *t)
{
	node_link_signal(t->n, t->pid, SIGKILL, MPIV__PRIV_HOW__PRIV_ALL);
}

/* Launches the helper is starting: a kill meanwhile is kept (sig) and
   applied as soon as the rank exists. */
static void
node_spawn_kill(struct node *n, const char *job, int rank, uint32_t inc,
    int sig)
{
	for (struct spawn_wait *w = n->spawns; w != NULL; w = w->next)
		if (strcmp(w->job, job) == 0 && (rank < 0 || w->rank == rank) &&
		    w->incarnation < inc)
			w->kill_sig = sig;
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
	node_spawn_kill(n, l->job_id, l->rank, l->incarnation, SIGKILL);
	node_restore_kill(n, l->job_id, l->rank, l->incarnation, SIGKILL);
}

void
node_launch(struct node *n, const Mpiv__Launch *l)
{
	Mpiv__PrivSpawn sp = MPIV__PRIV_SPAWN__INIT;
	char vjob[96], vrank[32], vsize[32], vinc[32], vctrl[32], vnode[96];
	char vctrlin[32], vival[64], vkey[sizeof(AUTH_ENV_RANK) +
	    2 * AUTH_HASH_LEN + 1];
	char *vcms, **env = NULL, binpath[PATH_MAX], inpath[PATH_MAX];
	struct spawn_wait *w = NULL;
	size_t len = 16, k = 0;

	if (l->n_argv < 1 || *l->argv[0] == '\0') {
		node_launch_failed(n, l, "empty command line");
		return;
	}
	/* A shipped program runs from the cache: fetched first if missing
	   (node_launch runs again once it is there). */
	if (*l->binary_hash != '\0' &&
	    node_bin_need(n, l, NODE_BLOB_PROG, binpath, sizeof(binpath)) != 0)
		return;
	/* So is the job's stdin for the rank that reads it: a restore
	   finds it where the image says, the same path on every node. */
	inpath[0] = '\0';
	if (*l->stdin_hash != '\0' &&
	    node_bin_need(n, l, NODE_BLOB_STDIN, inpath, sizeof(inpath)) != 0)
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
	    (w = calloc(1, sizeof(*w))) == NULL) {
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
	sp.id = w->id = ++n->link_seq;
	sp.job_id = l->job_id;
	sp.rank = l->rank;
	sp.incarnation = l->incarnation;
	sp.n_argv = l->n_argv;
	sp.argv = l->argv;
	sp.n_env = k;
	sp.env = env;
	sp.path = *l->binary_hash != '\0' ? binpath : "";
	sp.stdin_path = inpath;
	sp.cwd = l->cwd;
	/* A shipped program may come from a machine whose directories this
	   one lacks: it then runs in the cache directory. */
	if (*sp.path != '\0' && access(l->cwd, X_OK) != 0)
		sp.cwd = n->cache_dir;
	/* The same getpid() in every incarnation (README "What a program
	   must not depend on"). */
	sp.ns_pid = n->pidns ? pidns_rank_pid(l->job_id, l->rank) : 0;
	if (node_link_send(n, MPIV__MSG_TYPE__MSG_PRIV_SPAWN, &sp.base) < 0) {
		node_launch_failed(n, l, "the node's privileged helper is gone");
		goto out_free;
	}
	snprintf(w->job, sizeof(w->job), "%s", l->job_id);
	w->rank = l->rank;
	w->incarnation = l->incarnation;
	w->ns_pid = sp.ns_pid;
	snprintf(w->cs, sizeof(w->cs), "%s", l->cs);
	snprintf(w->cm, sizeof(w->cm), "%s", node_home_cm(l));
	if (l->image_key.len == AUTH_HASH_LEN) {
		memcpy(w->image_key, l->image_key.data, AUTH_HASH_LEN);
		w->has_image_key = true;
	}
	snprintf(w->argv0, sizeof(w->argv0), "%s", l->argv[0]);
	snprintf(w->cwd, sizeof(w->cwd), "%s", sp.cwd);
	w->next = n->spawns;
	n->spawns = w;
	w = NULL;
out_free:
	free(w);
	free(env);
	free(vcms);
}

/* The helper's answer to a PrivSpawn: the rank runs (or could not even
   start), with its four pipe ends in fds. */
void
node_spawned(struct node *n, const Mpiv__PrivSpawned *r, int *fds, int nfds)
{
	Mpiv__TaskStarted ts = MPIV__TASK_STARTED__INIT;
	Mpiv__TaskExit te = MPIV__TASK_EXIT__INIT;
	struct spawn_wait *w, **pp;
	struct task *t = NULL;

	for (pp = &n->spawns; (w = *pp) != NULL; pp = &w->next)
		if (w->id == r->id)
			break;
	if (w == NULL) {
		log_warnx("node helper answered an unknown spawn %llu",
		    (unsigned long long)r->id);
		return;
	}
	*pp = w->next;
	if (*r->error != '\0' || nfds != 4 ||
	    (t = calloc(1, sizeof(*t))) == NULL) {
		te.job_id = w->job;
		te.rank = w->rank;
		te.incarnation = w->incarnation;
		te.exit_code = 1;
		te.reason = *r->error != '\0' ? r->error :
		    "node agent out of memory";
		log_warnx("node %s", te.reason);
		if (n->c != NULL)
			(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_EXIT,
			    &te.base, NULL, 0);
		if (r->pid > 0)	/* started, but we cannot watch it */
			node_link_signal(n, r->pid, SIGKILL,
			    MPIV__PRIV_HOW__PRIV_ALL);
		auth_wipe(w->image_key, sizeof(w->image_key));
		free(w);
		return;
	}
	t->n = n;
	snprintf(t->job, sizeof(t->job), "%s", w->job);
	t->rank = w->rank;
	t->incarnation = w->incarnation;
	t->pid = r->pid;
	t->task_pid = r->task_pid > 0 ? r->task_pid : r->pid;
	t->nsh = w->ns_pid > 0;
	t->ctrl_fd = fds[2];
	t->ctrl_in_fd = fds[3];
	snprintf(t->cs, sizeof(t->cs), "%s", w->cs);
	snprintf(t->cm, sizeof(t->cm), "%s", w->cm);
	memcpy(t->image_key, w->image_key, sizeof(t->image_key));
	t->has_image_key = w->has_image_key;
	if (r->exec_errno != 0 && r->exec_step[0] == 'o')
		snprintf(t->reason, sizeof(t->reason), "cannot open the "
		    "job's stdin: %s", strerror(r->exec_errno));
	else if (r->exec_errno != 0)
		snprintf(t->reason, sizeof(t->reason), "cannot %s %.200s: %s",
		    r->exec_step, r->exec_step[0] == 'c' ? w->cwd : w->argv0,
		    strerror(r->exec_errno));
	task_stream_init(t, &t->out, fds[0], 1);
	task_stream_init(t, &t->err, fds[1], 2);
	fds[0] = fds[1] = fds[2] = fds[3] = -1;
	task_ctrl_start(t);
	task_insert(n, t);
	log_info("node launched job=%s rank=%d incarnation=%u pid=%d "
	    "getpid=%d%s%s", t->job, t->rank, t->incarnation,
	    (int)t->task_pid, (int)(w->ns_pid > 0 ? w->ns_pid : t->task_pid),
	    r->exec_errno ? " error=" : "", r->exec_errno ? "exec" : "");
	if (r->exec_errno == 0 && n->c != NULL) {
		ts.job_id = t->job;
		ts.rank = t->rank;
		ts.incarnation = t->incarnation;
		ts.pid = t->task_pid;
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_STARTED,
		    &ts.base, NULL, 0);
	}
	if (w->kill_sig != 0) {	/* killed while it was being started */
		log_info("node killing job=%s rank=%d pid=%d signal=%d (asked "
		    "during its start)", t->job, t->rank, (int)t->task_pid,
		    w->kill_sig);
		if (w->kill_sig == SIGKILL)
			task_kill(t);
		else
			task_signal(t, w->kill_sig);
	}
	auth_wipe(w->image_key, sizeof(w->image_key));
	free(w);
}

void
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
	node_spawn_kill(n, k->job_id, k->rank, UINT32_MAX, sig);
	node_restore_kill(n, k->job_id, k->rank, UINT32_MAX, sig);
}

/*
 * Kills every rank (the ones being started too). With forget, the agent
 * is ending: its tasks are dropped without a report (the helper reaps
 * them, and kills whatever is left when the agent is gone).
 */
void
node_kill_all(struct node *n, bool forget)
{
	struct task *t;

	for (t = n->tasks; t != NULL; t = t->next)
		if (!t->reaped)
			task_kill(t);
	for (struct spawn_wait *w = n->spawns; w != NULL; w = w->next)
		w->kill_sig = SIGKILL;
	if (!forget)
		return;
	while ((t = n->tasks) != NULL)
		task_free(t);
}
