/*
 * helper.c: the node agent's privileged half (see helper.h): the fork
 * and privilege drop, the packets between the halves, and the helper's
 * loop: spawn, signal, reap, dump, restore.
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
#include "helper.h"
#include "log.h"
#include "mono.h"
#include "pidns.h"
#include "proc.h"

#define HELPER_STOP_WAIT_MS	10000	/* a clone must stop within this */
#define HELPER_NPIPES		5	/* fds 0-2 and the two ctrl pipes */

/* A rank the helper started or restored. */
struct htask {
	pid_t pid;		/* what the agent names it by; our child */
	pid_t task_pid;		/* the program's host pid */
	bool nsh;		/* pid is a PID namespace's handle */
	bool restored;
	struct htask *next;
};

/* What a dump worker writes back (one write, < PIPE_BUF). */
struct hdump_result {
	int ok;
	int npipes;
	int pipe_fd[HELPER_NPIPES];
	uint64_t pipe_ino[HELPER_NPIPES];
	double dump_s;
	char dir[64];
	char error[300];
};

struct hdump {
	uint64_t id;
	pid_t worker;
	pid_t clone;
	int resfd;
	struct hdump *next;
};

struct helper {
	struct ev_loop *loop;
	const struct helper_conf *conf;
	int fd;
	pid_t agent;
	ev_io io_w;
	ev_child child_w;
	ev_signal sigint_w, sigterm_w;
	struct htask *tasks;
	struct hdump *dumps;
};

/* ---------------- packets ---------------- */

int
helper_send(int fd, uint16_t type, const ProtobufCMessage *m, const int *fds,
    int nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HELPER_MAX_FDS)];
	} cm;
	struct msghdr msg = { 0 };
	struct iovec iov;
	uint8_t *buf;
	size_t len;
	ssize_t w;

	if (nfds < 0 || nfds > HELPER_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if ((buf = frame_encode(type, m, 0, &len)) == NULL)
		return -1;
	if (len > HELPER_MAX_PACKET) {
		free(buf);
		errno = EMSGSIZE;
		return -1;
	}
	iov.iov_base = buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	do
		w = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	free(buf);
	return w == (ssize_t)len ? 0 : -1;
}

int
helper_decode(const uint8_t *buf, size_t len, struct frame_hdr *h,
    ProtobufCMessage **m, const char **err)
{
	*m = NULL;
	if (len < FRAME_HDR_LEN) {
		*err = "short packet";
		return -1;
	}
	if (frame_parse_header(buf, h, err) < 0)
		return -1;
	if (h->payload_len != 0 || (size_t)h->meta_len != len - FRAME_HDR_LEN) {
		*err = "packet length does not match its header";
		return -1;
	}
	if (h->type < MPIV__MSG_TYPE__MSG_PRIV_SPAWN ||
	    h->type > MPIV__MSG_TYPE__MSG_PRIV_EXIT) {
		*err = "not a message between the node agent's halves";
		return -1;
	}
	if ((*m = frame_unpack_meta(h->type, buf + FRAME_HDR_LEN, h->meta_len,
	    err)) == NULL)
		return -1;
	return 0;
}

int
helper_recv(int fd, struct frame_hdr *h, ProtobufCMessage **m, int *fds,
    int *nfds, const char **err)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HELPER_MAX_FDS)];
	} cm;
	struct msghdr msg = { 0 };
	struct iovec iov;
	uint8_t *buf;
	ssize_t r;
	int rc = -1;

	*nfds = 0;
	*m = NULL;
	*err = NULL;
	if ((buf = malloc(HELPER_MAX_PACKET)) == NULL) {
		*err = "out of memory";
		return -1;
	}
	iov.iov_base = buf;
	iov.iov_len = HELPER_MAX_PACKET;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	do
		r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		free(buf);
		if (r == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			*err = strerror(errno);
			return errno == ECONNRESET ? 0 : -1;
		}
		return -1;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL;
	    c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k && *nfds < HELPER_MAX_FDS; i++)
			memcpy(&fds[(*nfds)++], CMSG_DATA(c) + i * sizeof(int),
			    sizeof(int));
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		*err = "packet too large";
	else if (helper_decode(buf, (size_t)r, h, m, err) == 0)
		rc = 1;
	free(buf);
	if (rc < 0) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		errno = EPROTO;
	}
	return rc;
}

static void
helper_close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ---------------- who may be touched ---------------- */

static struct htask *
helper_task(struct helper *hp, pid_t pid)
{
	for (struct htask *t = hp->tasks; t != NULL; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

/*
 * Whether every id of pid's (and each thread's) Uid: and Gid: lines is
 * the ranks' account. Always true when the helper switches no account.
 */
static bool
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
 * by the ranks' account (never a guess).
 */
static pid_t
helper_clone_pid(const struct helper *hp, const struct htask *t, pid_t nspid)
{
	char want[64], have[64], path[64], line[256];
	struct dirent *de;
	pid_t found = -1;
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
	static const char *const unset[] = { AUTH_ENV_SECRET, NULL };
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

	signal(SIGCHLD, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
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
			continue;	/* not a pipe (stdin is /dev/null) */
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

static void
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
static void
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

static void
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
	if (helper_take_dir(hp, rq->dir, dir, sizeof(dir), err,
	    sizeof(err)) < 0) {
		dir[0] = '\0';
		goto out;
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
