/*
 * helper.c: the node agent's privileged helper (see helper.h): the fork
 * and privilege drop, the helper's loop, spawning, signalling and
 * reaping ranks. Dumps and restores are helper_criu.c, the packets
 * helper_io.c.
 *
 * What runs where: a rank is the helper's child (a launch forks it; a
 * restore is criu's sibling, -S), so the helper reaps it and tells the
 * agent (PrivExit). A dump waits for the clone to stop and runs criu, up
 * to seconds, so it runs in a forked dump worker; a restore runs in the
 * helper's loop (criu must be the helper's child for the restored rank
 * to be the helper's too), which only delays other requests of the
 * helper, never the agent's loop (heartbeats, output).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "auth.h"
#include "criu.h"
#include "helper_priv.h"
#include "log.h"
#include "mono.h"
#include "pidns.h"
#include "proc.h"


void
helper_close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ---------------- who may be touched ---------------- */

struct htask *
helper_task(struct helper *hp, pid_t pid)
{
	for (struct htask *t = hp->tasks; t != NULL; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

/*
 * Whether every id of pid's Uid: and Gid: lines (real, effective, saved,
 * file system) is the ranks' account. Always true when the helper
 * switches no account.
 */
bool
helper_owned(const struct helper *hp, pid_t pid)
{
	char path[64], line[256];
	unsigned long id[4];
	bool uid = false, gid = false;
	FILE *f;

	if (!hp->conf->drop)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		bool isuid = strncmp(line, "Uid:", 4) == 0;
		if (!isuid && strncmp(line, "Gid:", 4) != 0)
			continue;
		if (sscanf(line + 4, "%lu %lu %lu %lu", &id[0], &id[1], &id[2],
		    &id[3]) != 4)
			break;
		for (int i = 0; i < 4; i++)
			if (id[i] != (isuid ? (unsigned long)hp->conf->uid :
			    (unsigned long)hp->conf->gid)) {
				fclose(f);
				return false;
			}
		if (isuid)
			uid = true;
		else
			gid = true;
	}
	fclose(f);
	return uid && gid;
}

/* ---------------- requests ---------------- */

static void
helper_reply_spawned(struct helper *hp, Mpiv__PrivSpawned *r, const int *fds,
    int nfds)
{
	if (helper_send(hp->fd, MPIV__MSG_TYPE__MSG_PRIV_SPAWNED, &r->base,
	    fds, nfds) < 0)
		log_warn("helper cannot answer the agent");
}

static void
helper_spawn(struct helper *hp, const Mpiv__PrivSpawn *s)
{
	/* The job says its protocol (Launch.env); the node's own setting
	   would make a relay job's ranks run direct. */
	static const char *const unset[] = { AUTH_ENV_SECRET, "MPIV_PROTOCOL",
	    NULL };
	Mpiv__PrivSpawned r = MPIV__PRIV_SPAWNED__INIT;
	struct proc_spec spec = { 0 };
	struct proc_child ch;
	struct htask *t = NULL;
	char **argv = NULL, **env = NULL, why[200];
	pid_t ns_pid = s->ns_pid;
	int fds[4];

	r.id = s->id;
	if (s->n_argv < 1 || *s->argv[0] == '\0' || s->n_argv > 1u << 16 ||
	    s->n_env > 1u << 16 ||
	    (*s->stdin_path != '\0' && *s->stdin_path != '/') ||
	    (ns_pid != 0 && (!hp->conf->pidns || ns_pid < PIDNS_PID_MIN ||
	    ns_pid > PIDNS_PID_MAX))) {
		r.error = "bad spawn request";
		helper_reply_spawned(hp, &r, NULL, 0);
		return;
	}
	if ((argv = calloc(s->n_argv + 1, sizeof(*argv))) == NULL ||
	    (env = calloc(s->n_env + 1, sizeof(*env))) == NULL ||
	    (t = calloc(1, sizeof(*t))) == NULL) {
		r.error = "node helper out of memory";
		goto out;
	}
	memcpy(argv, s->argv, s->n_argv * sizeof(*argv));
	for (size_t i = 0, k = 0; i < s->n_env; i++)
		if (strchr(s->env[i], '=') != NULL)
			env[k++] = s->env[i];
	spec.argv = argv;
	spec.path = *s->path != '\0' ? s->path : NULL;
	spec.cwd = s->cwd;
	/* opened in the child as the rank's user: no file it could not
	   read itself */
	spec.stdin_path = *s->stdin_path != '\0' ? s->stdin_path : NULL;
	spec.setenv = env;
	spec.unsetenv = unset;
	spec.pipe_out = spec.pipe_err = spec.ctrl_pipe = true;
	spec.ctrl_in_pipe = true;
	spec.set_user = hp->conf->drop;
	spec.uid = hp->conf->uid;
	spec.gid = hp->conf->gid;
	if (ns_pid > 0) {
		spec.forker = &pidns_forker;
		spec.forker_arg = &ns_pid;
	}
	if (proc_spawn(&spec, &ch) < 0) {
		snprintf(why, sizeof(why), "cannot start %s: %s", s->argv[0],
		    strerror(errno));
		r.error = why;
		goto out;
	}
	t->pid = ch.pid;
	t->task_pid = ch.task_pid > 0 ? ch.task_pid : ch.pid;
	t->nsh = ns_pid > 0;
	t->next = hp->tasks;
	hp->tasks = t;
	t = NULL;
	r.pid = ch.pid;
	r.task_pid = ch.task_pid > 0 ? ch.task_pid : ch.pid;
	r.exec_errno = ch.exec_errno;
	r.exec_step = (char *)ch.exec_step;
	fds[0] = ch.out_fd;
	fds[1] = ch.err_fd;
	fds[2] = ch.ctrl_fd;
	fds[3] = ch.ctrl_in_fd;
	helper_reply_spawned(hp, &r, fds, 4);
	helper_close_fds(fds, 4);
out:
	if (r.error != NULL && *r.error != '\0')
		helper_reply_spawned(hp, &r, NULL, 0);
	free(t);
	free(env);
	free(argv);
}

static void
helper_signal(struct helper *hp, const Mpiv__PrivSignal *s)
{
	struct htask *t = helper_task(hp, s->pid);
	int sig = s->signal;
	pid_t p;

	if (t == NULL || sig <= 0 || sig >= NSIG) {
		log_warnx("helper refusing signal %d to pid %d: not a rank of "
		    "this node", sig, (int)s->pid);
		return;
	}
	switch (s->how) {
	case MPIV__PRIV_HOW__PRIV_ALL:
		if (t->nsh || t->restored)
			(void)kill(t->pid, SIGKILL);	/* ends its namespace */
		else
			(void)killpg(t->pid, SIGKILL);
		return;
	case MPIV__PRIV_HOW__PRIV_ONE:
		if (kill(t->task_pid, sig) < 0 && errno != ESRCH)
			log_warn("helper kill pid=%d signal=%d", (int)t->task_pid,
			    sig);
		return;
	default:
		p = t->task_pid > 0 ? t->task_pid : t->pid;
		if (killpg(p, sig) == 0 || errno != ESRCH)
			return;
		if (kill(p, sig) < 0 && errno != ESRCH)
			log_warn("helper kill pid=%d signal=%d", (int)p, sig);
		return;
	}
}

static void
helper_on_read(struct ev_loop *loop, ev_io *w, int revents)
{
	struct helper *hp = w->data;
	int fds[HELPER_MAX_FDS], nfds, rc;
	ProtobufCMessage *m;
	struct frame_hdr h;
	const char *err;

	if ((rc = helper_recv(hp->fd, &h, &m, fds, &nfds, &err)) == 0) {
		/* The agent is gone; its exit comes through SIGCHLD. */
		ev_io_stop(loop, w);
		return;
	}
	if (rc < 0) {
		if (err != NULL)
			log_warnx("helper bad packet from the agent: %s", err);
		return;
	}
	switch (h.type) {
	case MPIV__MSG_TYPE__MSG_PRIV_SPAWN:
		helper_spawn(hp, (Mpiv__PrivSpawn *)m);
		break;
	case MPIV__MSG_TYPE__MSG_PRIV_SIGNAL:
		helper_signal(hp, (Mpiv__PrivSignal *)m);
		break;
	case MPIV__MSG_TYPE__MSG_PRIV_DUMP:
		helper_dump(hp, (Mpiv__PrivDump *)m);
		break;
	case MPIV__MSG_TYPE__MSG_PRIV_RESTORE:
		helper_restore(hp, (Mpiv__PrivRestore *)m, fds, nfds);
		nfds = 0;
		break;
	default:
		log_warnx("helper unexpected %s from the agent",
		    frame_type_name(h.type));
		break;
	}
	helper_close_fds(fds, nfds);
	frame_free_meta(m);
}

/* ---------------- children ---------------- */

/* The agent ended: so do the ranks, and the helper, as the agent did. */
static void __attribute__((noreturn))
helper_end(struct helper *hp, int status)
{
	struct htask *t;
	struct hdump *d;

	for (t = hp->tasks; t != NULL; t = t->next)
		if (t->nsh || t->restored)
			(void)kill(t->pid, SIGKILL);
		else
			(void)killpg(t->pid, SIGKILL);
	for (d = hp->dumps; d != NULL; d = d->next) {
		(void)kill(d->worker, SIGKILL);
		(void)kill(d->clone, SIGKILL);
	}
	for (t = hp->tasks; t != NULL; t = t->next)
		(void)waitpid(t->pid, NULL, 0);
	for (d = hp->dumps; d != NULL; d = d->next)
		(void)waitpid(d->worker, NULL, 0);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		(void)raise(WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

static void
helper_on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	struct helper *hp = w->data;
	pid_t pid = w->rpid;
	int status = w->rstatus;

	if (pid == hp->agent)
		helper_end(hp, status);
	for (struct hdump **pp = &hp->dumps; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->worker == pid) {
			struct hdump *d = *pp;
			*pp = d->next;
			helper_dump_done(hp, d, status);
			free(d);
			return;
		}
	for (struct htask **pp = &hp->tasks; *pp != NULL; pp = &(*pp)->next) {
		struct htask *t = *pp;
		Mpiv__PrivExit e = MPIV__PRIV_EXIT__INIT;

		if (t->pid != pid)
			continue;
		*pp = t->next;
		/*
		 * A rank killed by a signal may be relaunched: whatever it
		 * left in its process group dies with it. The group id stays
		 * reserved while any member lives, so this cannot hit a
		 * stranger. (In a namespace of its own, all of it died with
		 * the namespace already.)
		 */
		if (!t->nsh && !t->restored && WIFSIGNALED(status))
			(void)killpg(pid, SIGKILL);
		e.pid = pid;
		e.status = status;
		if (helper_send(hp->fd, MPIV__MSG_TYPE__MSG_PRIV_EXIT, &e.base,
		    NULL, 0) < 0)
			log_warn("helper cannot tell the agent pid %d ended",
			    (int)pid);
		free(t);
		return;
	}
	/* Anything else: a rank's clone reparented to us (we are a child
	   subreaper), reaped and forgotten. */
}

static void
helper_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct helper *hp = w->data;

	(void)kill(hp->agent, w->signum);	/* the agent stops cleanly */
}

/*
 * SIGHUP: the node's secret file again. The agent's account may not read
 * it: we open it and pass the descriptor (PrivKeys); the agent reloads.
 * Without a secret file the agent gets the signal and says so.
 */
static void
helper_on_hup(struct ev_loop *loop, ev_signal *w, int revents)
{
	Mpiv__PrivKeys pk = MPIV__PRIV_KEYS__INIT;
	struct helper *hp = w->data;
	const char *path = hp->conf->secret_path;
	int fd;

	if (path == NULL && ((path = getenv(AUTH_ENV_SECRET)) == NULL ||
	    *path == '\0')) {
		(void)kill(hp->agent, SIGHUP);
		return;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		log_warn("node reload failed, keeping the previous keys: "
		    "cannot open secret file %s", path);
		return;
	}
	pk.path = (char *)path;
	if (helper_send(hp->fd, MPIV__MSG_TYPE__MSG_PRIV_KEYS, &pk.base, &fd,
	    1) < 0)
		log_warn("helper cannot pass the secret file to the agent");
	close(fd);
}

static void __attribute__((noreturn))
helper_run(const struct helper_conf *c, int fd, pid_t agent)
{
	struct helper hp = { .conf = c, .fd = fd, .agent = agent };

	(void)prctl(PR_SET_NAME, "mpiv-node-priv");
	/* Clones of ranks (double fork) are reparented to us and reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("helper cannot become a child subreaper");
	if ((hp.loop = ev_default_loop(EVFLAG_AUTO)) == NULL) {
		log_errorx("helper cannot create an event loop");
		(void)kill(agent, SIGKILL);
		_exit(1);
	}
	ev_io_init(&hp.io_w, helper_on_read, fd, EV_READ);
	hp.io_w.data = &hp;
	ev_io_start(hp.loop, &hp.io_w);
	ev_child_init(&hp.child_w, helper_on_child, 0, 0);
	hp.child_w.data = &hp;
	ev_child_start(hp.loop, &hp.child_w);
	ev_signal_init(&hp.sigint_w, helper_on_signal, SIGINT);
	hp.sigint_w.data = &hp;
	ev_signal_start(hp.loop, &hp.sigint_w);
	ev_signal_init(&hp.sigterm_w, helper_on_signal, SIGTERM);
	hp.sigterm_w.data = &hp;
	ev_signal_start(hp.loop, &hp.sigterm_w);
	ev_signal_init(&hp.sighup_w, helper_on_hup, SIGHUP);
	hp.sighup_w.data = &hp;
	ev_signal_start(hp.loop, &hp.sighup_w);
	ev_unref(hp.loop);	/* the helper ends with the agent */
	ev_run(hp.loop, 0);
	_exit(1);	/* helper_end exits */
}

/* ---------------- start ---------------- */

int
helper_conf_user(struct helper_conf *c, const char *user, char *err, size_t n)
{
	struct passwd *pw;

	c->drop = false;
	c->uid = geteuid();
	c->gid = getegid();
	if (geteuid() != 0) {
		if (user != NULL && ((pw = getpwnam(user)) == NULL ||
		    pw->pw_uid != geteuid())) {
			snprintf(err, n, "--user %s needs root", user);
			return -1;
		}
		c->user = user != NULL ? user : "(this user)";
		return 0;
	}
	c->user = user != NULL ? user : HELPER_DEFAULT_USER;
	if ((pw = getpwnam(c->user)) == NULL) {
		snprintf(err, n, "unknown user \"%s\" (--user)", c->user);
		return -1;
	}
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	c->drop = pw->pw_uid != 0;
	return 0;
}

int
helper_start(const struct helper_conf *c, int *fd)
{
	int sv[2];
	pid_t agent, helper = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	if ((agent = fork()) < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (agent > 0) {
		close(sv[1]);
		helper_run(c, sv[0], agent);
	}
	close(sv[0]);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != helper)
		_exit(1);
	if (c->drop && (setgroups(1, &c->gid) < 0 || setgid(c->gid) < 0 ||
	    setuid(c->uid) < 0 || setuid(0) == 0)) {
		log_errorx("node cannot switch to user %s", c->user);
		_exit(1);
	}
	/* The ranks run under our account: none of them may attach to us
	   (we hold the node key), and nothing we exec gains privileges. */
	(void)prctl(PR_SET_DUMPABLE, 0);
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	*fd = sv[1];
	return 0;
}
