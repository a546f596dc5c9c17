/*
 * run_deploy.c: the embedded deployment of `mpiv run`: a dispatcher, K
 * CMs, the checkpoint servers (--cs, store under the temp dir) and M
 * node agents started as children of our own binary, each in
 * its own process group with PR_SET_PDEATHSIG and a private TMPDIR under
 * one temporary directory; torn down with SIGTERM, then SIGKILL after
 * 2 s, and the directory removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mono.h"
#include "proc.h"
#include "run_priv.h"

#define RUN_START_TIMEOUT_MS	15000	/* for a "listening on" line */
#define RUN_TERM_GRACE_MS	2000	/* SIGTERM, then SIGKILL */
#define RUN_RESPAWN_DELAY	0.3	/* s before a dead node agent returns */
#define RUN_RESPAWN_MAX		1000	/* per node agent */

static int run_deploy_node(struct run *r, struct run_daemon *d, int i);
static int run_deploy_cm(struct run *r, struct run_daemon *d, int i);
static int run_deploy_cs(struct run *r, struct run_daemon *d, int i);

static void
run_deploy_on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	struct run_daemon *d = w->data;
	char st[64], why[160];

	ev_child_stop(loop, w);
	d->pid = -1;
	proc_status_str(w->rstatus, st, sizeof(st));
	log_info("run daemon exited what=\"%s\" status=\"%s\"", d->what, st);
	/*
	 * A node agent is volatile by design (--chaos-nodes, mpiv
	 * kill-node): the dispatcher relaunches its ranks elsewhere, and a
	 * fresh agent takes its place shortly, as a rebooted machine would.
	 */
	if (!d->r->stopped && (d->node >= 0 || d->cm >= 0 || d->cs >= 0) &&
	    d->respawns < RUN_RESPAWN_MAX) {
		ev_timer_set(&d->respawn_w, RUN_RESPAWN_DELAY, 0.);
		ev_timer_start(loop, &d->respawn_w);
		return;
	}
	if (!d->r->stopped) {
		snprintf(why, sizeof(why), "deployment failed: %s exited "
		    "unexpectedly (%s)", d->what, st);
		run_stop(d->r, 1, why);
	}
}

static void
run_deploy_on_respawn(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct run_daemon *d = w->data;

	if (d->r->stopped || d->pid > 0)
		return;
	d->respawns++;
	if (d->cm >= 0) {
		/* the job starts over on it (dispatcher/disp_regen.c) */
		log_info("run starting cm %d again at %s (respawn %u)", d->cm,
		    d->addr, d->respawns);
		if (run_deploy_cm(d->r, d, d->cm) < 0 && !d->r->stopped)
			run_stop(d->r, 1, d->r->reason);
		return;
	}
	if (d->cs >= 0) {
		/* on its store: the images it had are served again */
		log_info("run starting cs %d again at %s (respawn %u)", d->cs,
		    d->addr, d->respawns);
		if (run_deploy_cs(d->r, d, d->cs) < 0 && !d->r->stopped)
			run_stop(d->r, 1, d->r->reason);
		return;
	}
	log_info("run starting node agent %d again (respawn %u)", d->node,
	    d->respawns);
	if (run_deploy_node(d->r, d, d->node) < 0 && !d->r->stopped)
		run_stop(d->r, 1, d->r->reason);
}

/*
 * Reads "listening on ADDR\n" from fd within the start timeout and
 * copies ADDR. 0, or -1 with r->reason set.
 */
static int
run_deploy_read_addr(struct run *r, struct run_daemon *d, int fd, char *addr,
    size_t addrlen)
{
	static const char want[] = "listening on ";
	char line[256];
	size_t len = 0;
	long deadline = mono_ms() + RUN_START_TIMEOUT_MS, left;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	char *nl;

	for (;;) {
		if ((left = deadline - mono_ms()) <= 0) {
			snprintf(r->reason, sizeof(r->reason), "deployment "
			    "failed: %s did not start within %d s", d->what,
			    RUN_START_TIMEOUT_MS / 1000);
			return -1;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd.revents == 0)
			continue;
		n = read(fd, line + len, sizeof(line) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		line[len] = '\0';
		if ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			if (strncmp(line, want, sizeof(want) - 1) != 0)
				break;
			snprintf(addr, addrlen, "%.120s", line + sizeof(want) - 1);
			return 0;
		}
		if (len == sizeof(line) - 1)
			break;
	}
	snprintf(r->reason, sizeof(r->reason), "deployment failed: %s exited "
	    "before it was ready", d->what);
	return -1;
}

/*
 * Starts one daemon in slot d (NULL: the next free one): `SELF args...`
 * with TMPDIR set to its own directory. With addr, waits for its
 * "listening on" line. 0 or -1 (reason set).
 */
static int
run_deploy_spawn(struct run *r, struct run_daemon *d, const char *what,
    char **args, char *addr, size_t addrlen)
{
	bool fresh = d == NULL;
	char dir[PATH_MAX], tmpenv[PATH_MAX + 16];
	char *setenv[] = { tmpenv, NULL };
	struct proc_spec spec = { 0 };
	struct proc_child ch;
	int rc = 0;

	if (fresh) {
		d = &r->daemons[r->ndaemons];
		d->node = -1;
		d->cm = -1;
		d->cs = -1;
		ev_init(&d->respawn_w, run_deploy_on_respawn);
		d->respawn_w.data = d;
	}
	snprintf(d->what, sizeof(d->what), "%s", what);
	d->r = r;
	d->pid = -1;
	snprintf(dir, sizeof(dir), "%.3000s/%.30s", r->tmpdir, what);
	for (char *p = dir + strlen(r->tmpdir); *p; p++)
		if (*p == ' ')
			*p = '-';
	if (mkdir(dir, 0700) < 0 && (fresh || errno != EEXIST)) {
		snprintf(r->reason, sizeof(r->reason), "deployment failed: "
		    "mkdir %.300s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(tmpenv, sizeof(tmpenv), "TMPDIR=%s", dir);
	spec.argv = args;
	spec.setenv = setenv;
	spec.pipe_out = addr != NULL;
	spec.stdout_fd = -1;
	spec.stderr_fd = 2;
	if (proc_spawn(&spec, &ch) < 0) {
		snprintf(r->reason, sizeof(r->reason), "deployment failed: "
		    "cannot start %s: %s", what, strerror(errno));
		return -1;
	}
	d->pid = ch.pid;
	if (fresh)
		r->ndaemons++;
	ev_child_init(&d->w, run_deploy_on_child, ch.pid, 0);
	d->w.data = d;
	ev_child_start(r->loop, &d->w);
	if (ch.exec_errno != 0) {
		snprintf(r->reason, sizeof(r->reason), "deployment failed: "
		    "cannot execute %.300s: %s", r->self, strerror(ch.exec_errno));
		rc = -1;
	} else if (addr != NULL) {
		rc = run_deploy_read_addr(r, d, ch.out_fd, addr, addrlen);
	}
	if (ch.out_fd >= 0)
		close(ch.out_fd);
	return rc;
}

/*
 * Spawns service i of `kind` ("cm", "cs") in slot d (NULL: a new one):
 * `mpiv KIND --listen ADDR --dispatcher ... --log-level ... --secret-file
 * ...` then the options in extra (NULL-terminated), listening where the
 * slot's service did before (a respawn) or on a port of its choice, whose
 * address the slot keeps. Its slot, or NULL (r->reason set).
 */
static struct run_daemon *
run_deploy_service(struct run *r, struct run_daemon *d, const char *kind,
    int i, char *const *extra)
{
	char *args[20], what[32], addr[128];
	int n = 0;

	args[n++] = r->self;
	args[n++] = (char *)kind;
	args[n++] = "--listen";
	args[n++] = d != NULL ? d->addr : "127.0.0.1:0";
	args[n++] = "--dispatcher";
	args[n++] = r->disp_addr;
	args[n++] = "--log-level";
	args[n++] = (char *)r->child_level;
	args[n++] = "--secret-file";
	args[n++] = r->secret_path;
	while (*extra != NULL && n < 19)
		args[n++] = *extra++;
	args[n] = NULL;
	snprintf(what, sizeof(what), "%s %d", kind, i);
	if (run_deploy_spawn(r, d, what, args, addr, sizeof(addr)) < 0)
		return NULL;
	if (d == NULL)
		d = &r->daemons[r->ndaemons - 1];
	snprintf(d->addr, sizeof(d->addr), "%s", addr);
	log_info("run %s addr=%s", what, addr);
	return d;
}

/*
 * Starts CM i (d NULL: a new daemon slot; else the one that died, again
 * at the address it had and on the same store, so that the dispatcher
 * takes it for the same CM coming back and the job continues on the logs
 * it recovered: dispatcher/disp_regen.c).
 */
static int
run_deploy_cm(struct run *r, struct run_daemon *d, int i)
{
	char store[PATH_MAX], journal[PATH_MAX], *extra[9] = { NULL };
	int n = 0;

	/* this user's own CMs: MPI-IO on any path the user can reach, the
	   journal in the run's directory (where CM i comes back) */
	snprintf(journal, sizeof(journal), "%.3000s/files-cm%d", r->tmpdir,
	    i);
	extra[n++] = "--files";
	extra[n++] = "any";
	extra[n++] = "--files-journal";
	extra[n++] = journal;
	if (r->cm_store != NULL && strcmp(r->cm_store, "off") != 0) {
		snprintf(store, sizeof(store), "%.3000s/store-cm%d", r->tmpdir,
		    i);
		extra[n++] = "--store";
		extra[n++] = store;
		extra[n++] = "--store-sync";
		extra[n++] = (char *)r->cm_store;
	}
	if ((d = run_deploy_service(r, d, "cm", i, extra)) == NULL)
		return -1;
	d->cm = i;
	return 0;
}

/*
 * Starts CS i (d NULL: a new daemon slot; else the one that died, again
 * at its address and on its store, whose images it serves again).
 */
static int
run_deploy_cs(struct run *r, struct run_daemon *d, int i)
{
	char store[PATH_MAX], *extra[3] = { "--store", store, NULL };

	snprintf(store, sizeof(store), "%.3000s/store-cs%d", r->tmpdir, i);
	if ((d = run_deploy_service(r, d, "cs", i, extra)) == NULL)
		return -1;
	d->cs = i;
	return 0;
}

/*
 * A run's temp dir is its own while it lives: it holds an exclusive
 * flock on the dir's run.lock (made under another name, locked, then
 * renamed, so that run.lock is never there unlocked). A run killed
 * (SIGKILL, the machine's OOM killer) cannot remove its dir; its daemons
 * die with it (PR_SET_PDEATHSIG), and the next run of this user finds
 * the lock free and removes what was left.
 */
static void
run_tmpdir_sweep(const char *base)
{
	char pat[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	glob_t g;

	if (snprintf(pat, sizeof(pat), "%s/mpiv-run.*/run.lock", base) >=
	    (int)sizeof(pat) || glob(pat, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		int fd;

		snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') -
		    path), path);
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != getuid())
			continue;
		if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_uid == getuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0) {
			log_info("run removing %s, left by a run that died",
			    dir);
			proc_rmtree(dir);
		}
		close(fd);
	}
	globfree(&g);
}

int
run_tmpdir_make(struct run *r)
{
	const char *tmp = getenv("TMPDIR");
	char lock[PATH_MAX], held[PATH_MAX];
	int fd;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	run_tmpdir_sweep(tmp);
	snprintf(r->tmpdir, sizeof(r->tmpdir), "%s/mpiv-run.XXXXXX", tmp);
	if (mkdtemp(r->tmpdir) == NULL) {
		snprintf(r->reason, sizeof(r->reason), "cannot create %.300s: "
		    "%s", r->tmpdir, strerror(errno));
		r->tmpdir[0] = '\0';
		return -1;
	}
	snprintf(lock, sizeof(lock), "%.3000s/run.lock.new", r->tmpdir);
	snprintf(held, sizeof(held), "%.3000s/run.lock", r->tmpdir);
	if ((fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) <
	    0 || flock(fd, LOCK_EX) < 0 || rename(lock, held) < 0) {
		snprintf(r->reason, sizeof(r->reason), "cannot lock %.300s: "
		    "%s", r->tmpdir, strerror(errno));
		if (fd >= 0)
			close(fd);
		proc_rmtree(r->tmpdir);
		r->tmpdir[0] = '\0';
		return -1;
	}
	r->tmplock = fd;
	return 0;
}

int
run_deploy_start(struct run *r)
{
	char store[PATH_MAX], *args[14], why[512];
	ssize_t n;

	if ((n = readlink("/proc/self/exe", r->self, sizeof(r->self) - 1)) < 0) {
		snprintf(r->reason, sizeof(r->reason), "deployment failed: "
		    "cannot find my own binary: %s", strerror(errno));
		return -1;
	}
	r->self[n] = '\0';
	if (run_tmpdir_make(r) < 0) {
		char why0[sizeof(r->reason)];

		snprintf(why0, sizeof(why0), "%s", r->reason);
		snprintf(r->reason, sizeof(r->reason), "deployment failed: "
		    "%.560s", why0);
		return -1;
	}
	/* A fresh secret per run: every daemon and every connection of the
	   embedded deployment is authenticated like a real one; the node
	   agents get only the node key derived from it. */
	snprintf(r->secret_path, sizeof(r->secret_path), "%.3000s/secret",
	    r->tmpdir);
	snprintf(r->node_key_path, sizeof(r->node_key_path),
	    "%.3000s/node.key", r->tmpdir);
	if (auth_new_secret_file(r->secret_path, why, sizeof(why)) < 0 ||
	    auth_load_cluster(&r->keys, r->secret_path, why,
	    sizeof(why)) < 0 ||
	    auth_node_key_file(&r->keys, r->node_key_path, why,
	    sizeof(why)) < 0) {
		snprintf(r->reason, sizeof(r->reason), "deployment failed: "
		    "%.400s", why);
		return -1;
	}
	r->daemons = calloc((size_t)(1 + r->ncms + r->ncs + r->nnodes),
	    sizeof(*r->daemons));
	if (r->daemons == NULL) {
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		return -1;
	}

	args[0] = r->self;
	args[1] = "dispatcher";
	args[2] = "--listen";
	args[3] = "127.0.0.1:0";
	args[4] = "--log-level";
	args[5] = (char *)r->child_level;
	args[6] = "--secret-file";
	args[7] = r->secret_path;
	args[8] = NULL;
	if (run_deploy_spawn(r, NULL, "dispatcher", args, r->disp_addr,
	    sizeof(r->disp_addr)) < 0)
		return -1;
	log_info("run dispatcher addr=%s", r->disp_addr);
	/* Lets `mpiv kill --dispatcher ADDR` of this user find the secret
	   (auth_find_embedded). */
	snprintf(store, sizeof(store), "%.3000s/dispatcher.addr", r->tmpdir);
	if (auth_write_file(store, r->disp_addr, why, sizeof(why)) < 0)
		log_warnx("run %s", why);

	/* the CMs read it as their --max-memory default */
	if (r->cm_max_memory != NULL)
		setenv("MPIV_CM_MAX_MEMORY", r->cm_max_memory, 1);
	for (int i = 0; i < r->ncms; i++)
		if (run_deploy_cm(r, NULL, i) < 0)
			return -1;

	for (int i = 0; i < r->ncs; i++)
		if (run_deploy_cs(r, NULL, i) < 0)
			return -1;

	for (int i = 0; i < r->nnodes; i++)
		if (run_deploy_node(r, NULL, i) < 0)
			return -1;
	return 0;
}

/* Starts node agent i (again, into slot d, when d is not NULL). */
static int
run_deploy_node(struct run *r, struct run_daemon *d, int i)
{
	char slots[16], name[32], what[32], *args[16];
	struct passwd *pw = getpwuid(geteuid());
	int k = 0;

	snprintf(slots, sizeof(slots), "%d",
	    (r->nranks + r->nnodes - 1) / r->nnodes);
	/* Distinct names, so logs and status tell the nodes apart. */
	snprintf(name, sizeof(name), "node%d", i);
	snprintf(what, sizeof(what), "node %d", i);
	args[k++] = r->self;
	args[k++] = "node";
	args[k++] = "--dispatcher";
	args[k++] = r->disp_addr;
	args[k++] = "--slots";
	args[k++] = slots;
	args[k++] = "--log-level";
	args[k++] = (char *)r->child_level;
	args[k++] = "--name";
	args[k++] = name;
	args[k++] = "--secret-file";
	args[k++] = r->node_key_path;
	/* Ranks run as the user of mpiv run, as under mpirun. */
	if (pw != NULL) {
		args[k++] = "--user";
		args[k++] = pw->pw_name;
	}
	args[k] = NULL;
	if (d == NULL) {
		d = &r->daemons[r->ndaemons];
		if (run_deploy_spawn(r, NULL, what, args, NULL, 0) < 0)
			return -1;
	} else if (run_deploy_spawn(r, d, what, args, NULL, 0) < 0) {
		return -1;
	}
	d->node = i;
	return 0;
}

void
run_deploy_unwatch(struct run *r)
{
	for (int i = 0; i < r->ndaemons; i++) {
		ev_child_stop(r->loop, &r->daemons[i].w);
		ev_timer_stop(r->loop, &r->daemons[i].respawn_w);
	}
}

/* SIGTERM everyone, SIGKILL what is left after the grace period. */
void
run_deploy_stop(struct run *r)
{
	long deadline = mono_ms() + RUN_TERM_GRACE_MS;
	int alive;

	run_hosts_stop(r);
	run_deploy_unwatch(r);
	for (int i = 0; i < r->ndaemons; i++)
		if (r->daemons[i].pid > 0)
			(void)kill(r->daemons[i].pid, SIGTERM);
	for (;;) {
		alive = 0;
		for (int i = 0; i < r->ndaemons; i++) {
			struct run_daemon *d = &r->daemons[i];
			if (d->pid <= 0)
				continue;
			pid_t w = waitpid(d->pid, NULL, WNOHANG);
			if (w == d->pid || (w < 0 && errno == ECHILD))
				d->pid = -1;
			else
				alive++;
		}
		if (alive == 0 || mono_ms() >= deadline)
			break;
		usleep(10000);
	}
	for (int i = 0; i < r->ndaemons; i++) {
		struct run_daemon *d = &r->daemons[i];
		if (d->pid <= 0)
			continue;
		log_warnx("run %s did not stop in time, killing it", d->what);
		(void)kill(d->pid, SIGKILL);
		(void)waitpid(d->pid, NULL, 0);
		d->pid = -1;
	}
	free(r->daemons);
	r->daemons = NULL;
	r->ndaemons = 0;
	if (r->tmpdir[0] != '\0')
		proc_rmtree(r->tmpdir);
	if (r->tmplock >= 0) {
		close(r->tmplock);	/* after the removal: never swept live */
		r->tmplock = -1;
	}
}
