/*
 * node_ckpt.c: the node agent's side of checkpoints (docs/CHECKPOINT.md).
 *
 * Taking one: on `ckpt-sync k` the rank's stdout/stderr pipes are read
 * empty, their byte counts noted, and `go k` answered on the ctrl-in
 * pipe. On `ckpt-clone k pid event nd post` a helper process (forked
 * from the agent, so the loop never waits for criu or the network)
 * waits for the clone to stop, reads its pipe inodes, dumps it with
 * criu into a fresh /dev/shm directory, streams the packed, zstd'ed
 * image to the rank's checkpoint server (ImagePut, ImageData...,
 * ImageEnd), waits for ImageAck, removes the directory and writes one
 * result record on a pipe; the agent reaps the helper and sends
 * CkptTaken. A failed dump kills the clone. The rank names the clone
 * by its pid in the rank's own PID namespace: the agent finds its host
 * pid there (ckpt_host_pid) and criu dumps it from inside that
 * namespace (criu.c), whose init reaps it (pidns.c). Without PID
 * namespaces the clone is a child of ours by reparenting (we are a child
 * subreaper), reaped by libev's SIGCHLD handler like every other child.
 *
 * Restoring one (Launch.restore): a fetch helper (forked, so the loop
 * keeps heartbeating and serving other ranks while a slow or restarting
 * CS is retried) downloads the image: ImageGet, ImageInfo, ImageData...,
 * ImageEnd unpacked into /dev/shm as they come and checked, retried a
 * few times, and writes back the image's metadata; a Kill of the rank
 * meanwhile is kept and applied once it runs. Then, in the loop (criu
 * restore takes well under a second here): fresh pipes for stdout, stderr and both ctrl pipes take
 * the place of the old inodes (criu --inherit-fd; stdin is /dev/null,
 * restored by path); `inc <n>` is written to the ctrl-in pipe before the
 * SIGCONT, so the rank reads it as soon as it wakes. It is restored
 * under the pid its launch had (pidns_rank_pid), in a PID namespace of
 * its own whose handle becomes the task's pid (criu_restore_as); without
 * PID namespaces under the clone's pid (criu_restore_stopped).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cksum.h"
#include "criu.h"
#include "frame.h"
#include "log.h"
#include "mono.h"
#include "net.h"
#include "node_priv.h"
#include "pidns.h"
#include "proc.h"

#define CKPT_STOP_WAIT_MS	10000	/* clone must stop within this */
#define CKPT_IO_TIMEOUT_MS	30000	/* per frame to/from a CS */
#define CKPT_DIAL_TIMEOUT_MS	5000
#define CKPT_FETCH_TRIES	3	/* downloads of an image before giving up */
#define CKPT_FETCH_PAUSE_US	200000	/* times the try number, between them */
#define CKPT_CHUNK		(256u << 10)	/* ImageData payload */
#define CKPT_HELPER_LIMIT	300.	/* s before a helper is killed */
#define CKPT_NFDS		5	/* fds 0-4: stdio and ctrl pipes */

/* What a helper writes back (one write, < PIPE_BUF). */
struct ckpt_result {
	int ok;
	int skipped;		/* back-pressure: not a failure */
	uint64_t bytes, raw_bytes;
	double dump_s, upload_s;
	char error[400];
};

/* One dump + upload in flight. */
struct ckpt_op {
	struct node *n;
	char job[64];
	int rank;
	uint32_t incarnation;
	uint64_t k;
	pid_t clone;
	pid_t helper;
	int resfd;		/* read end of the result pipe */
	char dir[64];		/* the dump directory, removed by the agent */
	ev_child child_w;
	ev_timer limit_w;
	struct ckpt_op *next;
};

/* Everything the helper needs, copied before the fork. */
struct ckpt_args {
	char job[64];
	int rank;
	uint32_t incarnation;
	uint64_t k, event, nd, post;
	uint64_t out_base, err_base;
	pid_t clone;		/* host pid of the clone (-1: not found) */
	pid_t clone_ns;		/* its pid as the rank reported it */
	char cs[128], cm[128];
	char dir[64];		/* made by the agent (ckpt_mkdir) */
};

/*
 * Makes /dev/shm/mpiv-KIND-<agent pid>-XXXXXX (images never touch the
 * disk). The pid lets a later agent recognise and remove what a dead one
 * left behind (ckpt_sweep). 0 or -1.
 */
static int
ckpt_mkdir(const char *kind, char *dir, size_t n)
{
	if ((size_t)snprintf(dir, n, "/dev/shm/mpiv-%s-%d-XXXXXX", kind,
	    (int)getpid()) >= n) {
		errno = ENAMETOOLONG;
		dir[0] = '\0';
		return -1;
	}
	if (mkdtemp(dir) == NULL) {
		dir[0] = '\0';
		return -1;
	}
	return 0;
}

/* Removes dump/restore directories of node agents that are gone. */
static void
ckpt_sweep(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	char path[300], kind[8];
	int pid;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (sscanf(e->d_name, "mpiv-%7[a-z]-%d-", kind, &pid) != 2 ||
		    (strcmp(kind, "ckpt") != 0 && strcmp(kind, "rst") != 0) ||
		    pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		log_info("node removing leftover %s", path);
		proc_rmtree(path);
	}
	closedir(d);
}

/* K_node, proven to checkpoint servers (NULL: no secret). The node
   outlives every helper, which are forks of it. */
static const struct auth_key *ckpt_key;

void
node_ckpt_init(struct node *n)
{
	char why[512];

	ckpt_key = n->keys.enabled ? &n->keys.node : NULL;
	ckpt_sweep();
	n->criu = criu_probe(why, sizeof(why)) == 1;
	if (n->criu)
		log_info("node criu ok: %s", why);
	else
		log_warnx("checkpoints disabled: %s", why);
}

/* ---------------- ckpt-sync ---------------- */

static void
ckpt_write_in(struct task *t, const char *line)
{
	size_t len = strlen(line), off = 0;
	ssize_t w;

	while (t->ctrl_in_fd >= 0 && off < len) {
		w = write(t->ctrl_in_fd, line + off, len - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		/* A full ctrl-in pipe means the rank stopped reading it. */
		log_warnx("node cannot write \"%.*s\" to rank=%d job=%s: %s",
		    (int)strcspn(line, "\n"), line, t->rank, t->job,
		    w < 0 ? strerror(errno) : "short write");
		return;
	}
}

void
node_ckpt_sync(struct task *t, uint64_t k)
{
	char line[48];
	ssize_t r;

	/* Whatever the rank wrote before the sync is forwarded now. */
	do
		r = task_read_stream(&t->out);
	while (r > 0);
	do
		r = task_read_stream(&t->err);
	while (r > 0);
	t->sync_k = k;
	t->sync_base[0] = t->out_count[0];
	t->sync_base[1] = t->out_count[1];
	log_debug("node ckpt-sync job=%s rank=%d k=%" PRIu64 " out_base=%"
	    PRIu64 " err_base=%" PRIu64, t->job, t->rank, k, t->sync_base[0],
	    t->sync_base[1]);
	snprintf(line, sizeof(line), "go %" PRIu64 "\n", k);
	ckpt_write_in(t, line);
}

void
node_ckpt_request(struct node *n, const Mpiv__CkptRequest *cr)
{
	for (struct task *t = n->tasks; t != NULL; t = t->next) {
		if (strcmp(t->job, cr->job_id) != 0 || t->reaped ||
		    (cr->rank >= 0 && t->rank != cr->rank))
			continue;
		log_info("node checkpoint requested job=%s rank=%d", t->job,
		    t->rank);
		ckpt_write_in(t, "ckpt\n");
	}
}

/* ---------------- the helper (a forked process) ---------------- */

/* pid namespace id of a process ("pid:[N]"), or "" */
static void
ckpt_pidns(pid_t pid, char *out, size_t n)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	r = readlink(path, out, n - 1);
	out[r > 0 ? r : 0] = '\0';
}

/*
 * The pid namespace a task's rank and its clones live in: the one the
 * task's process makes its children in (a namespace handle's, pidns.h;
 * ours for a rank launched without one). "" when it is gone. Read while
 * the handle lives, so that a clone can be found after its rank died.
 */
static void
ckpt_task_pidns(const struct task *t, char *out, size_t n)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid_for_children",
	    (int)t->pid);
	r = readlink(path, out, n - 1);
	out[r > 0 ? r : 0] = '\0';
}

/*
 * Host pid of the process that is `nspid` in pid namespace want (from
 * ckpt_task_pidns), or -1 (never a guess: want "" finds nothing).
 */
static pid_t
ckpt_host_pid(const char *want, pid_t nspid)
{
	char have[64], path[64], line[256];
	struct dirent *de;
	pid_t found = -1;
	DIR *d;

	ckpt_pidns(getpid(), have, sizeof(have));
	if (want[0] == '\0')
		return -1;
	if (strcmp(want, have) == 0)
		return nspid;
	if ((d = opendir("/proc")) == NULL)
		return -1;
	while (found < 0 && (de = readdir(d)) != NULL) {
		char *end;
		long p = strtol(de->d_name, &end, 10);
		FILE *f;
		if (*end != '\0' || p <= 0)
			continue;
		ckpt_pidns((pid_t)p, have, sizeof(have));
		if (strcmp(want, have) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/status", p);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "NSpid:", 6) != 0)
				continue;
			char *last = strrchr(line, '\t');
			if (last != NULL && strtol(last + 1, NULL, 10) == nspid)
				found = (pid_t)p;
			break;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* Size of the archive criu_pack_dir makes of dir (see criu.h). */
static uint64_t
ckpt_raw_size(const char *dir)
{
	struct dirent *de;
	struct stat st;
	uint64_t total = 8 + 4 + 8;
	char path[PATH_MAX];
	DIR *d;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' ||
		    (l >= 4 && strcmp(de->d_name + l - 4, ".log") == 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		total += 4 + 8 + l + (uint64_t)st.st_size;
	}
	closedir(d);
	return total;
}

struct ckpt_up {
	int fd;
	uint64_t bytes, sum;
	uint8_t buf[CKPT_CHUNK];
	size_t len;
};

static int
ckpt_up_flush(struct ckpt_up *u)
{
	Mpiv__ImageData d = MPIV__IMAGE_DATA__INIT;

	if (u->len == 0)
		return 0;
	if (frame_write(u->fd, MPIV__MSG_TYPE__MSG_IMAGE_DATA, &d.base, u->buf,
	    (uint32_t)u->len, CKPT_IO_TIMEOUT_MS) < 0)
		return -1;
	u->len = 0;
	return 0;
}

static int
ckpt_up_out(void *ctx, const void *buf, size_t len)
{
	struct ckpt_up *u = ctx;
	const uint8_t *p = buf;

	u->sum = cksum_update(u->sum, buf, len);
	u->bytes += len;
	while (len > 0) {
		size_t m = sizeof(u->buf) - u->len;
		if (m > len)
			m = len;
		memcpy(u->buf + u->len, p, m);
		u->len += m;
		p += m;
		len -= m;
		if (u->len == sizeof(u->buf) && ckpt_up_flush(u) < 0)
			return -1;
	}
	return 0;
}

/* Reads frames until one of type want; Error or EOF fail (naming cs). */
static int
ckpt_expect(int fd, const char *cs, uint16_t want, ProtobufCMessage **out,
    char *err, size_t n)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *payload;
	const char *e = NULL;

	for (;;) {
		if (frame_read(fd, &h, &m, &payload, CKPT_IO_TIMEOUT_MS,
		    &e) < 0) {
			snprintf(err, n, "checkpoint server %s: %s", cs,
			    e != NULL ? e : errno == ECONNRESET ?
			    "connection closed" : strerror(errno));
			return -1;
		}
		free(payload);
		if (h.type == want) {
			*out = m;
			return 0;
		}
		if (h.type == MPIV__MSG_TYPE__MSG_ERROR) {
			snprintf(err, n, "checkpoint server %s error: %s", cs,
			    ((Mpiv__Error *)m)->text);
			frame_free_meta(m);
			return -1;
		}
		frame_free_meta(m);
	}
}

/*
 * Dials a CS and says Hello as a node, proving K_node when we have it
 * (the handshake is done before any image byte goes). fd or -1.
 */
static int
ckpt_dial_cs(const char *cs, const char *name, char *err, size_t n)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__HelloReply *hr;
	char why[256];
	int fd;

	if (*cs == '\0') {
		snprintf(err, n, "no checkpoint server for this rank");
		return -1;
	}
	if ((fd = net_dial(cs, CKPT_DIAL_TIMEOUT_MS)) < 0) {
		snprintf(err, n, "cannot reach checkpoint server %s: %s", cs,
		    strerror(errno));
		return -1;
	}
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_NODE;
	h.rank = -1;
	h.name = (char *)name;
	if (auth_client_hello(fd, ckpt_key, &h, CKPT_IO_TIMEOUT_MS, &hr, why,
	    sizeof(why)) < 0) {
		snprintf(err, n, "checkpoint server %s: %s", cs, why);
		close(fd);
		return -1;
	}
	if (!hr->ok) {
		snprintf(err, n, "checkpoint server %s refused us: %s", cs,
		    hr->error);
		frame_free_meta(&hr->base);
		close(fd);
		return -1;
	}
	frame_free_meta(&hr->base);
	return fd;
}

/* Uploads dir; fills res. 0 or -1 (res->error). */
static int
ckpt_upload(const struct ckpt_args *a, const char *dir,
    Mpiv__PipeInode **pipes, size_t npipes, struct ckpt_result *res)
{
	Mpiv__ImagePut put = MPIV__IMAGE_PUT__INIT;
	Mpiv__ImageMeta meta = MPIV__IMAGE_META__INIT;
	Mpiv__ImageEnd end = MPIV__IMAGE_END__INIT;
	Mpiv__ImageAck *ack;
	ProtobufCMessage *m;
	struct ckpt_up *u;
	int level = criu_zstd_level(), rc = -1;

	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		return -1;
	}
	u->sum = CKSUM_INIT;
	if ((u->fd = ckpt_dial_cs(a->cs, "node", res->error,
	    sizeof(res->error))) < 0)
		goto out;
	meta.job_id = (char *)a->job;
	meta.rank = a->rank;
	meta.ckpt_no = a->k;
	meta.incarnation = a->incarnation;
	meta.event = a->event;
	meta.nd_no = a->nd;
	meta.out_base = a->out_base;
	meta.err_base = a->err_base;
	meta.pipes = pipes;
	meta.n_pipes = npipes;
	meta.cm = (char *)a->cm;
	meta.raw_bytes = ckpt_raw_size(dir);
	meta.zstd_level = level;
	put.meta = &meta;
	if (frame_write(u->fd, MPIV__MSG_TYPE__MSG_IMAGE_PUT, &put.base, NULL,
	    0, CKPT_IO_TIMEOUT_MS) < 0) {
		snprintf(res->error, sizeof(res->error), "upload to %s: %s",
		    a->cs, strerror(errno));
		goto out;
	}
	if (criu_pack_dir(dir, level, ckpt_up_out, u, &res->raw_bytes) < 0 ||
	    ckpt_up_flush(u) < 0) {
		snprintf(res->error, sizeof(res->error), "upload to %s: %s",
		    a->cs, strerror(errno));
		goto out;
	}
	end.bytes = u->bytes;
	end.checksum = u->sum;
	if (frame_write(u->fd, MPIV__MSG_TYPE__MSG_IMAGE_END, &end.base, NULL,
	    0, CKPT_IO_TIMEOUT_MS) < 0) {
		snprintf(res->error, sizeof(res->error), "upload to %s: %s",
		    a->cs, strerror(errno));
		goto out;
	}
	if (ckpt_expect(u->fd, a->cs, MPIV__MSG_TYPE__MSG_IMAGE_ACK, &m,
	    res->error, sizeof(res->error)) < 0)
		goto out;
	ack = (Mpiv__ImageAck *)m;
	if (!ack->ok)
		snprintf(res->error, sizeof(res->error), "checkpoint server "
		    "%s refused the image: %s", a->cs, ack->error);
	else
		rc = 0;
	frame_free_meta(m);
	res->bytes = u->bytes;
	if (rc == 0) {
		Mpiv__Bye bye = MPIV__BYE__INIT;
		(void)frame_write(u->fd, MPIV__MSG_TYPE__MSG_BYE, &bye.base,
		    NULL, 0, 1000);
	}
out:
	if (u->fd >= 0)
		close(u->fd);
	free(u);
	return rc;
}

/* The helper's work; never returns. */
static void
ckpt_helper(const struct ckpt_args *a, int resfd)
{
	static const int fds[CKPT_NFDS] = { 0, 1, 2, PROC_CTRL_FD,
	    PROC_CTRL_IN_FD };
	Mpiv__PipeInode pi[CKPT_NFDS], *pp[CKPT_NFDS];
	struct ckpt_result res = { 0 };
	const char *dir = a->dir;
	size_t np = 0;
	double t0, t1;
	pid_t clone;
	ssize_t w;
	char st;

	/* The agent's handlers are not ours (libev's would wake it). */
	signal(SIGCHLD, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	(void)setpgid(0, 0);
	/* A helper outliving its agent would hold the dump directory. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	t0 = mono_s();
	if ((clone = a->clone) <= 0) {
		snprintf(res.error, sizeof(res.error), "clone pid %d not "
		    "found", (int)a->clone_ns);
		goto done;
	}
	/* The clone stops itself (SIGSTOP) right after the fork. */
	while ((st = proc_task_state(clone, NULL)) != 'T') {
		if (st == 0 || st == 'Z' || st == 'X') {
			snprintf(res.error, sizeof(res.error), "clone %d died "
			    "before it stopped", (int)clone);
			goto done;
		}
		if (mono_s() - t0 > CKPT_STOP_WAIT_MS / 1000.) {
			snprintf(res.error, sizeof(res.error), "clone %d did "
			    "not stop within %d s", (int)clone,
			    CKPT_STOP_WAIT_MS / 1000);
			goto kill_clone;
		}
		usleep(1000);
	}
	for (int i = 0; i < CKPT_NFDS; i++) {
		uint64_t ino;
		if (criu_pipe_inode(clone, fds[i], &ino) < 0)
			continue;	/* not a pipe (stdin is /dev/null) */
		mpiv__pipe_inode__init(&pi[np]);
		pi[np].fd = fds[i];
		pi[np].inode = ino;
		pp[np] = &pi[np];
		np++;
	}
	t0 = mono_s();
	if (criu_dump(clone, dir, res.error, sizeof(res.error)) < 0) {
		proc_rmtree(dir);
		goto kill_clone;
	}
	t1 = mono_s();
	res.dump_s = t1 - t0;
	if (ckpt_upload(a, dir, pp, np, &res) == 0)
		res.ok = 1;
	res.upload_s = mono_s() - t1;
	proc_rmtree(dir);
	goto done;
kill_clone:
	(void)kill(clone, SIGKILL);
done:
	do
		w = write(resfd, &res, sizeof(res));
	while (w < 0 && errno == EINTR);
	_exit(0);
}

/* ---------------- ckpt-clone, in the agent ---------------- */

static void
ckpt_op_free(struct ckpt_op *op)
{
	struct node *n = op->n;

	for (struct ckpt_op **pp = &n->ckpts; *pp != NULL; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	ev_child_stop(n->loop, &op->child_w);
	ev_timer_stop(n->loop, &op->limit_w);
	if (op->resfd >= 0)
		close(op->resfd);
	/* The helper removes it when it finishes; not when it was killed. */
	proc_rmtree(op->dir);
	free(op);
}

static void
ckpt_send_taken(struct node *n, const char *job, int rank, uint32_t inc,
    uint64_t k, const struct ckpt_result *res)
{
	Mpiv__CkptTaken ct = MPIV__CKPT_TAKEN__INIT;

	ct.job_id = (char *)job;
	ct.rank = rank;
	ct.incarnation = inc;
	ct.ckpt_no = k;
	ct.ok = res->ok;
	ct.skipped = res->skipped;
	ct.bytes = res->bytes;
	ct.raw_bytes = res->raw_bytes;
	ct.dump_s = res->dump_s;
	ct.upload_s = res->upload_s;
	ct.error = (char *)res->error;
	if (res->ok)
		log_info("node checkpoint taken job=%s rank=%d k=%" PRIu64
		    " bytes=%" PRIu64 " raw_bytes=%" PRIu64 " dump_s=%.3f "
		    "upload_s=%.3f inc=%u", job, rank, k, res->bytes,
		    res->raw_bytes, res->dump_s, res->upload_s, inc);
	else
		log_warnx("node checkpoint failed job=%s rank=%d k=%" PRIu64
		    " error=\"%s\" inc=%u", job, rank, k, res->error, inc);
	if (n->c != NULL)
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_CKPT_TAKEN, &ct.base,
		    NULL, 0);
}

/* Whether the incarnation op was taken from still runs here. */
static bool
ckpt_rank_lives(const struct ckpt_op *op)
{
	for (struct task *t = op->n->tasks; t != NULL; t = t->next)
		if (t->rank == op->rank && t->incarnation == op->incarnation &&
		    strcmp(t->job, op->job) == 0)
			return !t->reaped;
	return false;
}

static void
ckpt_on_helper(struct ev_loop *loop, ev_child *w, int revents)
{
	struct ckpt_op *op = w->data;
	struct ckpt_result res = { 0 };
	ssize_t r;

	do
		r = read(op->resfd, &res, sizeof(res));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(res)) {
		memset(&res, 0, sizeof(res));
		snprintf(res.error, sizeof(res.error), "checkpoint helper "
		    "ended without a result (status 0x%x)", w->rstatus);
		if (op->clone > 0)
			(void)kill(op->clone, SIGKILL);
	}
	res.error[sizeof(res.error) - 1] = '\0';
	if (!res.ok && !res.skipped && res.dump_s == 0 &&
	    !ckpt_rank_lives(op)) {
		/* No dump: the clone died with its rank's namespace (a kill
		   of the whole rank, or a dump longer than the namespace
		   lingers; pidns.c). No failure of checkpointing. */
		char e[sizeof(res.error)];
		int len;

		memcpy(e, res.error, sizeof(e));
		len = snprintf(res.error, sizeof(res.error), "skipped: rank %d "
		    "ended during checkpoint %" PRIu64 ": ", op->rank, op->k);
		if (len > 0 && (size_t)len < sizeof(res.error))
			snprintf(res.error + len, sizeof(res.error) - (size_t)len,
			    "%.*s", (int)(sizeof(res.error) - (size_t)len - 1), e);
		res.skipped = 1;
	}
	ckpt_send_taken(op->n, op->job, op->rank, op->incarnation, op->k,
	    &res);
	ckpt_op_free(op);
}

static void
ckpt_on_limit(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ckpt_op *op = w->data;

	log_warnx("node checkpoint helper of job=%s rank=%d k=%" PRIu64
	    " still busy after %.0f s: killing it", op->job, op->rank, op->k,
	    CKPT_HELPER_LIMIT);
	(void)kill(op->helper, SIGKILL);
}

void
node_ckpt_clone(struct task *t, const char *args)
{
	struct node *n = t->n;
	struct ckpt_args a = { 0 };
	struct ckpt_result res = { 0 };
	unsigned long long k, ev, nd, post;
	char pidns[64];
	struct ckpt_op *op;
	int pid, p[2];
	pid_t h;
	bool busy = false;

	if (sscanf(args, "%llu %d %llu %llu %llu", &k, &pid, &ev, &nd,
	    &post) != 5 || pid <= 0) {
		log_warnx("node bad ckpt-clone line \"%s\" rank=%d", args,
		    t->rank);
		return;
	}
	snprintf(a.job, sizeof(a.job), "%s", t->job);
	a.rank = t->rank;
	a.incarnation = t->incarnation;
	a.k = k;
	a.event = ev;
	a.nd = nd;
	a.post = post;
	a.out_base = t->sync_k == k ? t->sync_base[0] : t->out_count[0];
	a.err_base = t->sync_k == k ? t->sync_base[1] : t->out_count[1];
	/* The rank says the clone's pid in its own namespace. */
	ckpt_task_pidns(t, pidns, sizeof(pidns));
	a.clone = ckpt_host_pid(pidns, pid);
	a.clone_ns = pid;
	snprintf(a.cs, sizeof(a.cs), "%s", t->cs);
	snprintf(a.cm, sizeof(a.cm), "%s", t->cm);
	log_info("node ckpt-clone job=%s rank=%d incarnation=%u k=%llu "
	    "clone=%d clone_getpid=%d event=%llu nd=%llu post=%llu out_base=%"
	    PRIu64 " err_base=%" PRIu64, t->job, t->rank, t->incarnation, k,
	    (int)a.clone, pid, ev, nd, post, a.out_base, a.err_base);
	/*
	 * One checkpoint of a rank in flight at a time: when dump + upload
	 * take longer than the interval, later clones are dropped instead of
	 * piling up helpers that compete for the CPU and the CS.
	 */
	for (struct ckpt_op *o = n->ckpts; o != NULL; o = o->next)
		busy |= o->rank == t->rank && strcmp(o->job, t->job) == 0;
	if (!n->criu || *t->cs == '\0' || busy) {
		snprintf(res.error, sizeof(res.error), "%s", !n->criu ?
		    "no working CRIU on this node" : *t->cs == '\0' ?
		    "no checkpoint server for this rank" :
		    "skipped: the previous checkpoint of this rank is still "
		    "being taken");
		res.skipped = n->criu && *t->cs != '\0';
		if (a.clone > 0)
			(void)kill(a.clone, SIGKILL);
		ckpt_send_taken(n, t->job, t->rank, t->incarnation, k, &res);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL ||
	    ckpt_mkdir("ckpt", op->dir, sizeof(op->dir)) < 0 ||
	    pipe2(p, O_CLOEXEC) < 0) {
		if (op != NULL)
			proc_rmtree(op->dir);
		free(op);
		snprintf(res.error, sizeof(res.error), "node agent: %s",
		    strerror(errno));
		if (a.clone > 0)
			(void)kill(a.clone, SIGKILL);
		ckpt_send_taken(n, t->job, t->rank, t->incarnation, k, &res);
		return;
	}
	snprintf(a.dir, sizeof(a.dir), "%s", op->dir);
	if ((h = fork()) < 0) {
		snprintf(res.error, sizeof(res.error), "fork: %s",
		    strerror(errno));
		close(p[0]);
		close(p[1]);
		proc_rmtree(op->dir);
		free(op);
		if (a.clone > 0)
			(void)kill(a.clone, SIGKILL);
		ckpt_send_taken(n, t->job, t->rank, t->incarnation, k, &res);
		return;
	}
	if (h == 0) {
		close(p[0]);
		ckpt_helper(&a, p[1]);
	}
	close(p[1]);
	op->n = n;
	snprintf(op->job, sizeof(op->job), "%s", t->job);
	op->rank = t->rank;
	op->incarnation = t->incarnation;
	op->k = k;
	op->clone = a.clone;
	op->helper = h;
	op->resfd = p[0];
	ev_child_init(&op->child_w, ckpt_on_helper, h, 0);
	op->child_w.data = op;
	ev_child_start(n->loop, &op->child_w);
	ev_timer_init(&op->limit_w, ckpt_on_limit, CKPT_HELPER_LIMIT, 0.);
	op->limit_w.data = op;
	ev_timer_start(n->loop, &op->limit_w);
	op->next = n->ckpts;
	n->ckpts = op;
}

/* Agent stopping: helpers die (their clones are killed with the ranks'
   process groups or stay stopped until criu is gone; kill them too). */
void
node_ckpt_stop(struct node *n)
{
	struct ckpt_op *op;

	while ((op = n->ckpts) != NULL) {
		(void)kill(op->helper, SIGKILL);
		if (op->clone > 0)
			(void)kill(op->clone, SIGKILL);
		(void)waitpid(op->helper, NULL, 0);
		ckpt_op_free(op);
	}
}

/* ---------------- restore ---------------- */

/* Downloads the current image of (job, rank) into dir. 0 or -1. Only an
   ImageEnd whose size and checksum match what arrived makes it 0: rc stays
   -1 through the data frames, so a stream cut anywhere before it fails. */
static int
ckpt_download(const Mpiv__Launch *l, const char *dir, Mpiv__ImageMeta **meta,
    ProtobufCMessage **metamsg, uint64_t *bytes, char *err, size_t n)
{
	Mpiv__ImageGet get = MPIV__IMAGE_GET__INIT;
	struct criu_unpack *u = NULL;
	ProtobufCMessage *m = NULL;
	Mpiv__ImageInfo *info;
	uint64_t sum = CKSUM_INIT, got = 0;
	struct frame_hdr h;
	uint8_t *payload;
	const char *e = NULL;
	int fd, rc = -1;

	*metamsg = NULL;
	if ((fd = ckpt_dial_cs(l->cs, "node", err, n)) < 0)
		return -1;
	get.job_id = l->job_id;
	get.rank = l->rank;
	if (frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_GET, &get.base, NULL, 0,
	    CKPT_IO_TIMEOUT_MS) < 0) {
		snprintf(err, n, "checkpoint server %s: %s", l->cs,
		    strerror(errno));
		goto out;
	}
	if (ckpt_expect(fd, l->cs, MPIV__MSG_TYPE__MSG_IMAGE_INFO, &m, err,
	    n) < 0)
		goto out;
	info = (Mpiv__ImageInfo *)m;
	if (!info->found || info->meta == NULL) {
		snprintf(err, n, "no image at %s: %s", l->cs, info->error);
		frame_free_meta(m);
		goto out;
	}
	if (strcmp(info->meta->job_id, l->job_id) != 0 ||
	    info->meta->rank != l->rank) {
		snprintf(err, n, "image at %s is of job %s rank %d", l->cs,
		    info->meta->job_id, info->meta->rank);
		frame_free_meta(m);
		goto out;
	}
	*metamsg = m;
	*meta = info->meta;
	if ((u = criu_unpack_stream_new(dir, 0, 0)) == NULL) {
		snprintf(err, n, "unpack: %s", strerror(errno));
		goto out;
	}
	for (;;) {
		if (frame_read(fd, &h, &m, &payload, CKPT_IO_TIMEOUT_MS,
		    &e) < 0) {
			snprintf(err, n, "download from %s: %s", l->cs,
			    e != NULL ? e : errno == ECONNRESET ?
			    "connection closed" : strerror(errno));
			goto out;
		}
		if (h.type == MPIV__MSG_TYPE__MSG_IMAGE_DATA) {
			sum = cksum_update(sum, payload, h.payload_len);
			got += h.payload_len;
			int fed = criu_unpack_stream_feed(u, payload,
			    h.payload_len);
			free(payload);
			frame_free_meta(m);
			if (fed < 0) {
				snprintf(err, n, "unpack: %s",
				    criu_unpack_stream_error(u));
				goto out;
			}
			continue;
		}
		free(payload);
		if (h.type == MPIV__MSG_TYPE__MSG_IMAGE_END) {
			Mpiv__ImageEnd *ie = (Mpiv__ImageEnd *)m;
			rc = -1;
			if (ie->bytes != got || ie->checksum != sum)
				snprintf(err, n, "image from %s is corrupt "
				    "(%" PRIu64 " bytes, checksum %016" PRIx64
				    "; expected %" PRIu64 ", %016" PRIx64 ")",
				    l->cs, got, sum, ie->bytes, ie->checksum);
			else if (criu_unpack_stream_finish(u) < 0)
				snprintf(err, n, "unpack: %s",
				    criu_unpack_stream_error(u));
			else
				rc = 0;
			frame_free_meta(m);
			break;
		}
		if (h.type == MPIV__MSG_TYPE__MSG_ERROR)
			snprintf(err, n, "checkpoint server %s error: %s",
			    l->cs, ((Mpiv__Error *)m)->text);
		else
			snprintf(err, n, "unexpected %s during a download "
			    "from %s", frame_type_name(h.type), l->cs);
		frame_free_meta(m);
		rc = -1;
		goto out;
	}
	*bytes = got;
out:
	if (rc < 0 && *metamsg != NULL) {
		frame_free_meta(*metamsg);
		*metamsg = NULL;
	}
	criu_unpack_stream_free(u);
	close(fd);
	return rc;
}

static void
ckpt_close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

static void
ckpt_restore_failed(struct node *n, const Mpiv__Launch *l, uint64_t k,
    const char *why)
{
	Mpiv__TaskStarted ts = MPIV__TASK_STARTED__INIT;
	char msg[700];

	if (k > 0)
		snprintf(msg, sizeof(msg), "restore of checkpoint %" PRIu64
		    " failed: %s", k, why);
	else
		snprintf(msg, sizeof(msg), "restore failed: %s", why);
	log_warnx("node job=%s rank=%d incarnation=%u %s", l->job_id, l->rank,
	    l->incarnation, msg);
	ts.job_id = l->job_id;
	ts.rank = l->rank;
	ts.incarnation = l->incarnation;
	ts.error = msg;
	if (n->c != NULL)
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_STARTED,
		    &ts.base, NULL, 0);
}

/* What a fetch helper writes back, then meta_len bytes of ImageMeta. */
struct rst_result {
	int ok;
	uint64_t bytes;
	uint32_t meta_len;
	char error[512];
};

#define RST_META_MAX	(48u << 10)	/* the result must fit the pipe */

/* The fetch helper's work: the download, retried; never returns. */
static void
rst_helper(const Mpiv__Launch *l, const char *dir0, int resfd)
{
	struct rst_result res = { 0 };
	ProtobufCMessage *metamsg = NULL;
	Mpiv__ImageMeta *meta = NULL;
	uint8_t *packed = NULL;
	char dir[64];
	ssize_t w;

	signal(SIGCHLD, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(dir, sizeof(dir), "%s", dir0);
	/*
	 * A stream cut by the network (or a CS restarting) fails the
	 * download, never the image: fetched again into the emptied
	 * directory, a few times, before the restore is reported failed.
	 */
	for (int try = 1;; try++) {
		size_t len;

		if (ckpt_download(l, dir, &meta, &metamsg, &res.bytes,
		    res.error, sizeof(res.error)) == 0)
			break;
		if (try == CKPT_FETCH_TRIES) {
			len = strlen(res.error);
			snprintf(res.error + len, sizeof(res.error) - len,
			    " (%d tries)", try);
			goto done;
		}
		log_warnx("node restore fetch failed job=%s rank=%d "
		    "incarnation=%u cs=%s try=%d/%d error=\"%s\", retrying",
		    l->job_id, l->rank, l->incarnation, l->cs, try,
		    CKPT_FETCH_TRIES, res.error);
		if (metamsg != NULL)
			frame_free_meta(metamsg);
		metamsg = NULL;
		proc_rmtree(dir);
		if (mkdir(dir, 0700) < 0) {
			snprintf(res.error, sizeof(res.error), "mkdir %s: %s",
			    dir, strerror(errno));
			goto done;
		}
		usleep(CKPT_FETCH_PAUSE_US * try);
	}
	res.meta_len = (uint32_t)mpiv__image_meta__get_packed_size(meta);
	if (res.meta_len > RST_META_MAX ||
	    (packed = malloc(res.meta_len + 1)) == NULL) {
		snprintf(res.error, sizeof(res.error), "image metadata of %u "
		    "bytes", res.meta_len);
		res.meta_len = 0;
		goto done;
	}
	mpiv__image_meta__pack(meta, packed);
	res.ok = 1;
done:
	do
		w = write(resfd, &res, sizeof(res));
	while (w < 0 && errno == EINTR);
	if (res.ok && w == (ssize_t)sizeof(res))
		do
			w = write(resfd, packed, res.meta_len);
		while (w < 0 && errno == EINTR);
	_exit(0);
}

static void rst_finish(struct rst_op *op, Mpiv__ImageMeta *meta,
    uint64_t bytes);

static void
rst_op_free(struct rst_op *op)
{
	struct node *n = op->n;

	for (struct rst_op **pp = &n->restores; *pp != NULL;
	    pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	ev_child_stop(n->loop, &op->child_w);
	if (op->resfd >= 0)
		close(op->resfd);
	if (op->dir[0] != '\0')
		proc_rmtree(op->dir);
	if (op->l != NULL)
		mpiv__launch__free_unpacked(op->l, NULL);
	free(op);
}

/* The fetch helper exited: its result decides what comes next. */
static void
rst_on_helper(struct ev_loop *loop, ev_child *w, int revents)
{
	struct rst_op *op = w->data;
	struct rst_result res = { 0 };
	Mpiv__ImageMeta *meta = NULL;
	uint8_t *packed = NULL;
	ssize_t r;

	ev_child_stop(loop, w);
	do
		r = read(op->resfd, &res, sizeof(res));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(res)) {
		snprintf(res.error, sizeof(res.error), "the fetch helper "
		    "died (status %d)", w->rstatus);
		res.ok = 0;
	} else if (res.ok && (res.meta_len > RST_META_MAX ||
	    (packed = malloc(res.meta_len + 1)) == NULL ||
	    read(op->resfd, packed, res.meta_len) != (ssize_t)res.meta_len ||
	    (meta = mpiv__image_meta__unpack(NULL, res.meta_len,
	    packed)) == NULL)) {
		snprintf(res.error, sizeof(res.error), "the fetch helper's "
		    "image metadata cannot be read");
		res.ok = 0;
	}
	free(packed);
	res.error[sizeof(res.error) - 1] = '\0';
	if (!res.ok)
		ckpt_restore_failed(op->n, op->l, 0, res.error);
	else
		rst_finish(op, meta, res.bytes);
	if (meta != NULL)
		mpiv__image_meta__free_unpacked(meta, NULL);
	rst_op_free(op);
}

/*
 * Launch.restore: the image is fetched by a helper process (forked, so
 * the loop keeps serving heartbeats, output and other ranks while a slow
 * or dead checkpoint server is retried), then restored here. 0, or -1
 * (reported).
 */
int
node_restore(struct node *n, const Mpiv__Launch *l)
{
	struct rst_op *op;
	size_t len = mpiv__launch__get_packed_size(l);
	uint8_t *copy;
	int p[2];

	if (!n->criu) {
		ckpt_restore_failed(n, l, 0, "no working CRIU on this node");
		return -1;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL ||
	    (copy = malloc(len + 1)) == NULL) {
		free(op);
		ckpt_restore_failed(n, l, 0, "node agent out of memory");
		return -1;
	}
	mpiv__launch__pack(l, copy);
	op->l = mpiv__launch__unpack(NULL, len, copy);
	free(copy);
	op->n = n;
	op->resfd = -1;
	op->t0 = mono_s();
	if (op->l == NULL) {
		free(op);
		ckpt_restore_failed(n, l, 0, "node agent out of memory");
		return -1;
	}
	if (ckpt_mkdir("rst", op->dir, sizeof(op->dir)) < 0) {
		char err[128];
		snprintf(err, sizeof(err), "mkdtemp in /dev/shm: %s",
		    strerror(errno));
		op->dir[0] = '\0';
		ckpt_restore_failed(n, l, 0, err);
		rst_op_free(op);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (op->helper = fork()) < 0) {
		char err[128];
		snprintf(err, sizeof(err), "fetch helper: %s",
		    strerror(errno));
		ckpt_restore_failed(n, l, 0, err);
		rst_op_free(op);
		return -1;
	}
	if (op->helper == 0) {
		close(p[0]);
		rst_helper(op->l, op->dir, p[1]);
	}
	close(p[1]);
	op->resfd = p[0];
	op->next = n->restores;
	n->restores = op;
	ev_child_init(&op->child_w, rst_on_helper, op->helper, 0);
	op->child_w.data = op;
	ev_child_start(n->loop, &op->child_w);
	log_debug("node restore fetching job=%s rank=%d incarnation=%u cs=%s "
	    "helper=%d", l->job_id, l->rank, l->incarnation, l->cs,
	    (int)op->helper);
	return 0;
}

/* Rank (job, rank) of incarnations below inc (all: UINT32_MAX) is being
   fetched: it gets sig once it runs (kills keep their order). */
void
node_restore_kill(struct node *n, const char *job, int rank, uint32_t inc,
    int sig)
{
	for (struct rst_op *op = n->restores; op != NULL; op = op->next)
		if (strcmp(op->l->job_id, job) == 0 &&
		    (rank < 0 || op->l->rank == rank) &&
		    op->l->incarnation < inc)
			op->kill_sig = sig;
}

/* Agent stopping: fetches in flight are abandoned. */
void
node_restore_stop(struct node *n)
{
	struct rst_op *op;

	while ((op = n->restores) != NULL) {
		(void)kill(op->helper, SIGKILL);
		(void)waitpid(op->helper, NULL, 0);
		rst_op_free(op);
	}
}

/* The image is in op->dir: restore it, here. */
static void
rst_finish(struct rst_op *op, Mpiv__ImageMeta *meta, uint64_t bytes)
{
	struct node *n = op->n;
	const Mpiv__Launch *l = op->l;
	Mpiv__TaskStarted ts = MPIV__TASK_STARTED__INIT;
	/* pipes: 0 stdout, 1 stderr, 2 ctrl (rank -> node), 3 ctrl-in */
	int pp[4][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } };
	char *dir = op->dir, err[512], line[48];
	struct criu_fdmap map[CRIU_MAX_FDS];
	uint64_t k = 0;
	double t0 = op->t0, t1;
	struct task *t = NULL;
	pid_t handle, task, as = 0;
	int nmap = 0;

	k = meta->ckpt_no;
	t1 = mono_s();
	for (int i = 0; i < 4; i++)
		if (pipe2(pp[i], O_CLOEXEC) < 0) {
			snprintf(err, sizeof(err), "pipe: %s", strerror(errno));
			goto fail;
		}
	for (size_t i = 0; i < meta->n_pipes && nmap < CRIU_MAX_FDS; i++) {
		int fd;
		switch (meta->pipes[i]->fd) {
		case 1: fd = pp[0][1]; break;
		case 2: fd = pp[1][1]; break;
		case PROC_CTRL_FD: fd = pp[2][1]; break;
		case PROC_CTRL_IN_FD: fd = pp[3][0]; break;
		default:
			snprintf(err, sizeof(err), "image has a pipe at fd %d "
			    "the node cannot provide", meta->pipes[i]->fd);
			goto fail;
		}
		map[nmap].fd = fd;
		map[nmap].ino = meta->pipes[i]->inode;
		nmap++;
	}
	/* Under the pid every incarnation of the rank sees (pidns.h), in a
	   namespace of its own; else under the clone's. */
	if (n->pidns) {
		as = pidns_rank_pid(l->job_id, l->rank);
		if (criu_restore_as(dir, map, nmap, as, &handle, &task, err,
		    sizeof(err)) < 0)
			goto fail;
	} else if (criu_restore_stopped(dir, map, nmap, &handle, &task, err,
	    sizeof(err)) < 0)
		goto fail;
	/* criu holds the rank's ends now; ours go. */
	close(pp[0][1]);
	close(pp[1][1]);
	close(pp[2][1]);
	close(pp[3][0]);
	pp[0][1] = pp[1][1] = pp[2][1] = pp[3][0] = -1;
	proc_rmtree(dir);
	dir[0] = '\0';
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		(void)kill(handle, SIGKILL);
		(void)waitpid(handle, NULL, 0);
		snprintf(err, sizeof(err), "node agent out of memory");
		goto fail;
	}
	t->n = n;
	snprintf(t->job, sizeof(t->job), "%s", l->job_id);
	t->rank = l->rank;
	t->incarnation = l->incarnation;
	t->pid = handle;
	t->task_pid = task;
	t->nsh = handle != task;
	t->restored = true;
	t->ctrl_fd = pp[2][0];
	t->ctrl_in_fd = pp[3][1];
	t->out_count[0] = meta->out_base;
	t->out_count[1] = meta->err_base;
	snprintf(t->cs, sizeof(t->cs), "%s", l->cs);
	snprintf(t->cm, sizeof(t->cm), "%s", node_home_cm(l));
	task_stream_init(t, &t->out, pp[0][0], 1);
	task_stream_init(t, &t->err, pp[1][0], 2);
	task_ctrl_start(t);
	task_insert(n, t);
	/* The rank reads this as soon as it wakes from its SIGSTOP. */
	snprintf(line, sizeof(line), "inc %u\n", l->incarnation);
	ckpt_write_in(t, line);
	if (kill(task, SIGCONT) < 0)
		log_warn("node SIGCONT to restored pid=%d", (int)task);
	log_info("node restored job=%s rank=%d incarnation=%u ckpt=%" PRIu64
	    " pid=%d handle=%d getpid=%d bytes=%" PRIu64 " fetch_s=%.3f "
	    "restore_s=%.3f out_base=%" PRIu64 " err_base=%" PRIu64, l->job_id,
	    l->rank, l->incarnation, k, (int)task, (int)handle,
	    (int)(as > 0 ? as : pidns_inner_pid(task)), bytes, t1 - t0,
	    mono_s() - t1, meta->out_base, meta->err_base);
	ts.job_id = l->job_id;
	ts.rank = l->rank;
	ts.incarnation = l->incarnation;
	ts.pid = task;
	ts.restored_ckpt = k;
	ts.out_base = meta->out_base;
	ts.err_base = meta->err_base;
	if (n->c != NULL)
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_STARTED,
		    &ts.base, NULL, 0);
	if (op->kill_sig != 0) {	/* killed while it was fetched */
		log_info("node killing job=%s rank=%d pid=%d signal=%d (asked "
		    "during its restore)", t->job, t->rank, (int)t->task_pid,
		    op->kill_sig);
		task_signal(t, op->kill_sig);
	}
	return;
fail:
	for (int i = 0; i < 4; i++)
		ckpt_close_pair(pp[i]);
	if (dir[0] != '\0')
		proc_rmtree(dir);
	dir[0] = '\0';
	ckpt_restore_failed(n, l, k, err);
}
