/*
 * helper_criu.c: what the privileged helper does with CRIU (helper.h).
 * A dump: the clone found by the pid its rank names it by, only inside
 * that rank's PID namespace and only when it is the ranks' account's,
 * then dumped by a forked worker (it waits for the clone to stop, and
 * criu takes up to seconds) into a directory of the helper's, handed to
 * the agent's account afterwards. A restore: the agent's image
 * directory taken over first (renamed to a name of the helper's, made
 * root's, emptied of all but plain files), then restored in the helper
 * itself, so that the rank is the helper's child, and killed before it
 * ever runs unless every process and thread restored carries the ranks'
 * ids.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu.h"
#include "helper_priv.h"
#include "log.h"
#include "mono.h"
#include "pidns.h"
#include "proc.h"

/*
 * A restored process, still stopped, and everything under it: every
 * thread and child must carry the ranks' credentials before it may run
 * (an image says which ids its process gets, and criu runs as root).
 */
static bool
helper_tree_owned(const struct helper *hp, pid_t pid, int depth)
{
	char path[80], buf[1024], *p, *end;
	struct dirent *de;
	bool ok = true;
	DIR *d;

	if (!hp->conf->drop)
		return true;
	if (depth > 16 || !helper_owned(hp, pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return false;
	while (ok && (de = readdir(d)) != NULL) {
		long tid = strtol(de->d_name, &end, 10);
		int fd;
		ssize_t r;

		if (*end != '\0' || tid <= 0)
			continue;
		if (tid != pid && !helper_owned(hp, (pid_t)tid))
			ok = false;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/children",
		    (int)pid, tid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[r > 0 ? r : 0] = '\0';
		for (p = buf; ok && *p != '\0'; p = end) {
			long c = strtol(p, &end, 10);
			if (end == p)
				break;
			ok = helper_tree_owned(hp, (pid_t)c, depth + 1);
		}
	}
	closedir(d);
	return ok;
}

/* pid namespace of a process ("pid:[N]"), or "". */
static void
helper_ns(pid_t pid, const char *which, char *out, size_t n)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, which);
	r = readlink(path, out, n - 1);
	out[r > 0 ? r : 0] = '\0';
}

/*
 * Host pid of the clone the rank under handle t names nspid (its pid in
 * the rank's namespace), or -1: only a process of that namespace, owned
 * by the ranks' account, never the rank itself (never a guess). A rank
 * without a namespace of its own shares ours: its clone must then be our
 * child too (the rank's middle process is gone before the rank names the
 * clone, so the clone was reparented to us, a child subreaper), so that
 * no other process of the account can be named.
 */
static pid_t
helper_clone_pid(const struct helper *hp, const struct htask *t, pid_t nspid)
{
	char want[64], have[64], path[64], line[256];
	struct dirent *de;
	pid_t found = -1, parent = 0;
	DIR *d;

	helper_ns(t->pid, "pid_for_children", want, sizeof(want));
	helper_ns(getpid(), "pid", have, sizeof(have));
	if (want[0] == '\0' || nspid <= 0)
		return -1;
	if (strcmp(want, have) == 0)
		found = nspid;
	else if ((d = opendir("/proc")) != NULL) {
		while (found < 0 && (de = readdir(d)) != NULL) {
			char *end;
			long p = strtol(de->d_name, &end, 10);
			FILE *f;
			if (*end != '\0' || p <= 0)
				continue;
			helper_ns((pid_t)p, "pid", have, sizeof(have));
			if (strcmp(want, have) != 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/status", p);
			if ((f = fopen(path, "re")) == NULL)
				continue;
			while (fgets(line, sizeof(line), f) != NULL) {
				if (strncmp(line, "NSpid:", 6) != 0)
					continue;
				char *last = strrchr(line, '\t');
				if (last != NULL &&
				    strtol(last + 1, NULL, 10) == nspid)
					found = (pid_t)p;
				break;
			}
			fclose(f);
		}
		closedir(d);
	}
	if (found > 0 && (found == t->pid || found == t->task_pid ||
	    !helper_owned(hp, found)))
		return -1;
	if (found > 0 && !t->nsh && (proc_task_state(found, &parent) == 0 ||
	    parent != getpid()))
		return -1;
	return found;
}

/*
 * A directory the agent made for an image, /dev/shm/mpiv-KIND-PID-XXXXXX:
 * renamed to a name of ours, made root's and emptied of anything that
 * is not a plain file, so nothing the agent does later can point criu,
 * which runs as root, at another place. 0 with the new path in out, or
 * -1 (err).
 */
static int
helper_take_dir(const struct helper *hp, const char *dir, char *out,
    size_t n, char *err, size_t errn)
{
	const char *base = dir + sizeof("/dev/shm/") - 1;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (strncmp(dir, "/dev/shm/mpiv-", 14) != 0 || strchr(base, '/') ||
	    strstr(base, "..") != NULL || strlen(dir) > 60) {
		snprintf(err, errn, "not an image directory: %.80s", dir);
		return -1;
	}
	snprintf(out, n, "/dev/shm/mpiv-held-%d-%s", (int)getpid(), base + 5);
	if (rename(dir, out) < 0) {
		snprintf(err, errn, "rename %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (hp->conf->drop && st.st_uid != hp->conf->uid) ||
	    chown(out, 0, 0) < 0 || chmod(out, 0700) < 0) {
		snprintf(err, errn, "%s is not the agent's directory", dir);
		(void)rename(out, dir);
		return -1;
	}
	if ((d = opendir(out)) == NULL) {
		snprintf(err, errn, "opendir %s: %s", out, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char p[PATH_MAX];
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", out, de->d_name);
		if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_nlink != 1 || strstr(de->d_name, ".log") != NULL)
			(void)unlink(p);
	}
	closedir(d);
	return 0;
}

/* Gives the agent's account what criu wrote as root. */
static void
helper_chown_dir(const struct helper_conf *c, const char *dir)
{
	struct dirent *de;
	DIR *d;

	if (!c->drop || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char p[PATH_MAX];
		if (strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		(void)lchown(p, c->uid, c->gid);
	}
	closedir(d);
}

/* A dump worker: waits for the clone to stop, dumps it into a directory
   of its own, hands that to the agent's account. Never returns. */
static void
helper_dump_worker(const struct helper_conf *c, pid_t clone, int resfd)
{
	static const int fds[HELPER_NPIPES] = { 0, 1, 2, PROC_CTRL_FD,
	    PROC_CTRL_IN_FD };
	struct hdump_result res = { 0 };
	double t0 = mono_s();
	ssize_t w;
	char st;

	proc_worker_init();
	/* The clone stops itself (SIGSTOP) right after the fork. */
	while ((st = proc_task_state(clone, NULL)) != 'T') {
		if (st == 0 || st == 'Z' || st == 'X') {
			snprintf(res.error, sizeof(res.error), "clone %d died "
			    "before it stopped", (int)clone);
			goto done;
		}
		if (mono_s() - t0 > HELPER_STOP_WAIT_MS / 1000.) {
			snprintf(res.error, sizeof(res.error), "clone %d did "
			    "not stop within %d s", (int)clone,
			    HELPER_STOP_WAIT_MS / 1000);
			goto kill_clone;
		}
		usleep(1000);
	}
	for (int i = 0; i < HELPER_NPIPES; i++) {
		uint64_t ino;
		if (criu_pipe_inode(clone, fds[i], &ino) < 0)
			continue;	/* not a pipe (stdin: a file) */
		res.pipe_fd[res.npipes] = fds[i];
		res.pipe_ino[res.npipes++] = ino;
	}
	snprintf(res.dir, sizeof(res.dir), "/dev/shm/mpiv-ckpt-%d-XXXXXX",
	    (int)getppid());
	if (mkdtemp(res.dir) == NULL) {
		snprintf(res.error, sizeof(res.error), "mkdtemp in /dev/shm: "
		    "%s", strerror(errno));
		goto kill_clone;
	}
	t0 = mono_s();
	if (criu_dump(clone, res.dir, res.error, sizeof(res.error)) < 0) {
		proc_rmtree(res.dir);
		goto kill_clone;
	}
	res.dump_s = mono_s() - t0;
	helper_chown_dir(c, res.dir);
	res.ok = 1;
	goto done;
kill_clone:
	(void)kill(clone, SIGKILL);
done:
	do
		w = write(resfd, &res, sizeof(res));
	while (w < 0 && errno == EINTR);
	_exit(0);
}

static void
helper_reply_dumped(struct helper *hp, Mpiv__PrivDumped *r)
{
	if (helper_send(hp->fd, MPIV__MSG_TYPE__MSG_PRIV_DUMPED, &r->base,
	    NULL, 0) < 0)
		log_warn("helper cannot answer the agent");
}

void
helper_dump(struct helper *hp, const Mpiv__PrivDump *dr)
{
	Mpiv__PrivDumped r = MPIV__PRIV_DUMPED__INIT;
	struct htask *t = helper_task(hp, dr->pid);
	struct hdump *d = NULL;
	pid_t clone = t != NULL ? helper_clone_pid(hp, t, dr->clone_ns) : -1;
	char why[160];
	int p[2];

	r.id = dr->id;
	if (clone <= 0) {
		snprintf(why, sizeof(why), "clone pid %d not found",
		    (int)dr->clone_ns);
		r.error = why;
		if (!dr->discard)
			helper_reply_dumped(hp, &r);
		return;
	}
	r.clone = clone;
	if (!dr->discard)
		log_info("helper dumping job=%s rank=%d k=%llu clone=%d "
		    "clone_getpid=%d", dr->job_id, dr->rank,
		    (unsigned long long)dr->ckpt_no, (int)clone,
		    (int)dr->clone_ns);
	if (dr->discard || !hp->conf->criu) {
		(void)kill(clone, SIGKILL);
		if (!dr->discard) {
			r.error = "no working CRIU on this node";
			helper_reply_dumped(hp, &r);
		}
		return;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL || pipe2(p, O_CLOEXEC) < 0 ||
	    (d->worker = fork()) < 0) {
		snprintf(why, sizeof(why), "node helper: %s", strerror(errno));
		r.error = why;
		free(d);
		(void)kill(clone, SIGKILL);
		helper_reply_dumped(hp, &r);
		return;
	}
	if (d->worker == 0) {
		close(p[0]);
		helper_dump_worker(hp->conf, clone, p[1]);
	}
	close(p[1]);
	d->id = dr->id;
	d->clone = clone;
	d->resfd = p[0];
	d->next = hp->dumps;
	hp->dumps = d;
}

/* A dump worker ended: its result goes to the agent. */
void
helper_dump_done(struct helper *hp, struct hdump *d, int status)
{
	Mpiv__PrivDumped r = MPIV__PRIV_DUMPED__INIT;
	Mpiv__PipeInode pi[HELPER_NPIPES], *pp[HELPER_NPIPES];
	struct hdump_result res = { 0 };
	ssize_t n;

	do
		n = read(d->resfd, &res, sizeof(res));
	while (n < 0 && errno == EINTR);
	close(d->resfd);
	if (n != (ssize_t)sizeof(res)) {
		memset(&res, 0, sizeof(res));
		snprintf(res.error, sizeof(res.error), "dump worker ended "
		    "without a result (status 0x%x)", status);
		(void)kill(d->clone, SIGKILL);
	}
	res.error[sizeof(res.error) - 1] = '\0';
	res.dir[sizeof(res.dir) - 1] = '\0';
	r.id = d->id;
	r.ok = res.ok;
	r.clone = d->clone;
	r.dump_s = res.dump_s;
	r.error = res.error;
	r.dir = res.dir;
	for (int i = 0; i < res.npipes && i < HELPER_NPIPES; i++) {
		mpiv__pipe_inode__init(&pi[i]);
		pi[i].fd = res.pipe_fd[i];
		pi[i].inode = res.pipe_ino[i];
		pp[i] = &pi[i];
	}
	r.n_pipes = res.ok && res.npipes <= HELPER_NPIPES ? (size_t)res.npipes :
	    0;
	r.pipes = pp;
	helper_reply_dumped(hp, &r);
}

void
helper_restore(struct helper *hp, const Mpiv__PrivRestore *rq, int *fds,
    int nfds)
{
	Mpiv__PrivRestored r = MPIV__PRIV_RESTORED__INIT;
	struct criu_fdmap map[CRIU_MAX_FDS];
	char dir[96], err[512];
	struct htask *t = NULL;
	pid_t handle, task;
	int nmap = 0;

	r.id = rq->id;
	r.error = err;
	err[0] = '\0';
	dir[0] = '\0';
	/* The directory first: whatever happens next, it is ours to remove
	   (the agent has let go of it). */
	if (helper_take_dir(hp, rq->dir, dir, sizeof(dir), err,
	    sizeof(err)) < 0) {
		dir[0] = '\0';
		goto out;
	}
	if (!hp->conf->criu) {
		snprintf(err, sizeof(err), "no working CRIU on this node");
		goto out;
	}
	if (rq->n_map > CRIU_MAX_FDS ||
	    (rq->as_pid != 0 && (!hp->conf->pidns ||
	    rq->as_pid < PIDNS_PID_MIN || rq->as_pid > PIDNS_PID_MAX))) {
		snprintf(err, sizeof(err), "bad restore request");
		goto out;
	}
	for (size_t i = 0; i < rq->n_map; i++) {
		if (rq->map[i]->fd < 0 || rq->map[i]->fd >= nfds) {
			snprintf(err, sizeof(err), "bad restore request");
			goto out;
		}
		map[nmap].fd = fds[rq->map[i]->fd];
		map[nmap++].ino = rq->map[i]->inode;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, sizeof(err), "node helper out of memory");
		goto out;
	}
	if (rq->as_pid > 0) {
		if (criu_restore_as(dir, map, nmap, rq->as_pid, &handle, &task,
		    err, sizeof(err)) < 0)
			goto out;
	} else if (criu_restore_stopped(dir, map, nmap, &handle, &task, err,
	    sizeof(err)) < 0)
		goto out;
	if (!helper_tree_owned(hp, task, 0)) {
		snprintf(err, sizeof(err), "the restored process is not %s's: "
		    "killed before it ran", hp->conf->user);
		(void)kill(handle, SIGKILL);
		(void)waitpid(handle, NULL, 0);
		goto out;
	}
	t->pid = handle;
	t->task_pid = task;
	t->nsh = handle != task;
	t->restored = true;
	t->next = hp->tasks;
	hp->tasks = t;
	t = NULL;
	r.pid = handle;
	r.task_pid = task;
out:
	free(t);
	if (dir[0] != '\0')
		proc_rmtree(dir);
	helper_close_fds(fds, nfds);
	if (helper_send(hp->fd, MPIV__MSG_TYPE__MSG_PRIV_RESTORED, &r.base,
	    NULL, 0) < 0)
		log_warn("helper cannot answer the agent");
}
