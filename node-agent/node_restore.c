/*
 * node_restore.c: restoring a rank from its checkpoint
 * (docs/CHECKPOINT.md, "Restoring"). Launch.restore: a fetch worker
 * (forked, so the loop keeps heartbeating and serving other ranks while
 * a slow or restarting CS is retried) downloads the image: ImageGet,
 * ImageInfo, ImageData..., ImageEnd unpacked into /dev/shm as they come
 * and checked, retried a few times, and writes back the image's
 * metadata. Then the privileged helper restores it (PrivRestore, with
 * fresh pipes for stdout, stderr and both ctrl pipes in the place of the
 * old inodes: criu --inherit-fd; stdin, /dev/null or the job's stdin
 * in the cache (node_bin.c, fetched before this), is restored by path),
 * under the pid its launch had (pidns_rank_pid) in a PID namespace of
 * its own, or without PID namespaces under the clone's pid; it answers
 * with the rank stopped. `inc <n>` is written to the ctrl-in pipe
 * before the SIGCONT, so the rank reads it as soon as it wakes. A Kill
 * of the rank meanwhile is kept and applied once it runs.
 */
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
#include <unistd.h>

#include "cksum.h"
#include "criu.h"
#include "frame.h"
#include "log.h"
#include "mono.h"
#include "node_priv.h"
#include "pidns.h"
#include "proc.h"
#include "seal.h"

#define RST_IO_TIMEOUT_MS	30000	/* per frame from a CS */
#define RST_FETCH_TRIES		3	/* downloads of an image before giving up */
#define RST_FETCH_PAUSE_US	200000	/* times the try number, between them */

/* Downloads the current image of (job, rank) into dir. 0 or -1. Only an
   ImageEnd whose size and checksum match what arrived makes it 0: rc stays
   -1 through the data frames, so a stream cut anywhere before it fails. */
static int
rst_download(const Mpiv__Launch *l, const char *dir, Mpiv__ImageMeta **meta,
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
	struct seal s = { 0 };
	int fd, rc = -1;

	*metamsg = NULL;
	if ((fd = ckpt_dial_cs(l->cs, l->job_id, l->rank, l->incarnation,
	    l->image_key.len == AUTH_HASH_LEN ? l->image_key.data : NULL, &s,
	    err, n)) < 0)
		return -1;
	get.job_id = l->job_id;
	get.rank = l->rank;
	if (frame_write_s(&s, fd, MPIV__MSG_TYPE__MSG_IMAGE_GET, &get.base,
	    NULL, 0, RST_IO_TIMEOUT_MS) < 0) {
		snprintf(err, n, "checkpoint server %s: %s", l->cs,
		    strerror(errno));
		goto out;
	}
	if (ckpt_expect(&s, fd, l->cs, MPIV__MSG_TYPE__MSG_IMAGE_INFO, &m,
	    err, n) < 0)
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
		if (frame_read_s(&s, fd, &h, &m, &payload, RST_IO_TIMEOUT_MS,
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
			else if ((*meta)->content_digest != 0 &&
			    criu_unpack_stream_digest(u) !=
			    (*meta)->content_digest)
				snprintf(err, n, "image from %s: content "
				    "digest %016" PRIx64 " is not the %016"
				    PRIx64 " the node that took it computed",
				    l->cs, criu_unpack_stream_digest(u),
				    (*meta)->content_digest);
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
	seal_end(&s);
	return rc;
}

static void
rst_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void
rst_close_pair(int p[2])
{
	rst_close(&p[0]);
	rst_close(&p[1]);
}

static void
rst_failed(struct node *n, const Mpiv__Launch *l, uint64_t k,
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

/* The fetch worker's work: the download, retried; never returns. */
static void
rst_worker(const Mpiv__Launch *l, const char *dir0, int resfd)
{
	struct rst_result res = { 0 };
	ProtobufCMessage *metamsg = NULL;
	Mpiv__ImageMeta *meta = NULL;
	uint8_t *packed = NULL;
	char dir[64];
	ssize_t w;

	proc_worker_init();
	snprintf(dir, sizeof(dir), "%s", dir0);
	/*
	 * A stream cut by the network (or a CS restarting) fails the
	 * download, never the image: fetched again into the emptied
	 * directory, a few times, before the restore is reported failed.
	 */
	for (int try = 1;; try++) {
		size_t len;

		if (rst_download(l, dir, &meta, &metamsg, &res.bytes,
		    res.error, sizeof(res.error)) == 0)
			break;
		if (try == RST_FETCH_TRIES) {
			len = strlen(res.error);
			snprintf(res.error + len, sizeof(res.error) - len,
			    " (%d tries)", try);
			goto done;
		}
		log_warnx("node restore fetch failed job=%s rank=%d "
		    "incarnation=%u cs=%s try=%d/%d error=\"%s\", retrying",
		    l->job_id, l->rank, l->incarnation, l->cs, try,
		    RST_FETCH_TRIES, res.error);
		if (metamsg != NULL)
			frame_free_meta(metamsg);
		metamsg = NULL;
		proc_rmtree(dir);
		if (mkdir(dir, 0700) < 0) {
			snprintf(res.error, sizeof(res.error), "mkdir %s: %s",
			    dir, strerror(errno));
			goto done;
		}
		usleep(RST_FETCH_PAUSE_US * try);
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

static void rst_finish(struct rst_op *op);

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
	for (int i = 0; i < 4; i++)
		rst_close_pair(op->pp[i]);
	if (op->dir[0] != '\0')
		proc_rmtree(op->dir);
	if (op->meta != NULL)
		mpiv__image_meta__free_unpacked(op->meta, NULL);
	if (op->l != NULL) {
		auth_wipe(op->l->rank_key.data, op->l->rank_key.len);
		auth_wipe(op->l->image_key.data, op->l->image_key.len);
		mpiv__launch__free_unpacked(op->l, NULL);
	}
	free(op);
}

/* The fetch worker exited: its result decides what comes next. */
static void
rst_on_worker(struct ev_loop *loop, ev_child *w, int revents)
{
	struct rst_op *op = w->data;
	struct rst_result res = { 0 };
	Mpiv__ImageMeta *meta = NULL;
	uint8_t *packed = NULL;
	ssize_t r;

	ev_child_stop(loop, w);
	op->worker = 0;
	do
		r = read(op->resfd, &res, sizeof(res));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(res)) {
		snprintf(res.error, sizeof(res.error), "the fetch worker "
		    "died (status %d)", w->rstatus);
		res.ok = 0;
	} else if (res.ok && (res.meta_len > RST_META_MAX ||
	    (packed = malloc(res.meta_len + 1)) == NULL ||
	    read(op->resfd, packed, res.meta_len) != (ssize_t)res.meta_len ||
	    (meta = mpiv__image_meta__unpack(NULL, res.meta_len,
	    packed)) == NULL)) {
		snprintf(res.error, sizeof(res.error), "the fetch worker's "
		    "image metadata cannot be read");
		res.ok = 0;
	}
	free(packed);
	close(op->resfd);
	op->resfd = -1;
	res.error[sizeof(res.error) - 1] = '\0';
	if (!res.ok) {
		rst_failed(op->n, op->l, 0, res.error);
		rst_op_free(op);
		return;
	}
	op->meta = meta;
	op->bytes = res.bytes;
	op->t1 = mono_s();
	rst_finish(op);
}

/*
 * Launch.restore: the image is fetched by a worker process (forked, so
 * the loop keeps serving heartbeats, output and other ranks while a slow
 * or dead checkpoint server is retried), then restored by the helper.
 * 0, or -1 (reported).
 */
int
node_restore(struct node *n, const Mpiv__Launch *l)
{
	struct rst_op *op;
	size_t len = mpiv__launch__get_packed_size(l);
	uint8_t *copy;
	int p[2];

	if (!n->criu) {
		rst_failed(n, l, 0, "no working CRIU on this node");
		return -1;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL ||
	    (copy = malloc(len + 1)) == NULL) {
		free(op);
		rst_failed(n, l, 0, "node agent out of memory");
		return -1;
	}
	mpiv__launch__pack(l, copy);
	op->l = mpiv__launch__unpack(NULL, len, copy);
	free(copy);
	op->n = n;
	op->resfd = -1;
	op->t0 = mono_s();
	for (int i = 0; i < 4; i++)
		op->pp[i][0] = op->pp[i][1] = -1;
	if (op->l == NULL) {
		free(op);
		rst_failed(n, l, 0, "node agent out of memory");
		return -1;
	}
	if (ckpt_mkdir("rst", op->dir, sizeof(op->dir)) < 0) {
		char err[128];
		snprintf(err, sizeof(err), "mkdtemp in /dev/shm: %s",
		    strerror(errno));
		op->dir[0] = '\0';
		rst_failed(n, l, 0, err);
		rst_op_free(op);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (op->worker = fork()) < 0) {
		char err[128];
		op->worker = 0;
		snprintf(err, sizeof(err), "fetch worker: %s",
		    strerror(errno));
		rst_failed(n, l, 0, err);
		rst_op_free(op);
		return -1;
	}
	if (op->worker == 0) {
		close(p[0]);
		rst_worker(op->l, op->dir, p[1]);
	}
	close(p[1]);
	op->resfd = p[0];
	op->next = n->restores;
	n->restores = op;
	ev_child_init(&op->child_w, rst_on_worker, op->worker, 0);
	op->child_w.data = op;
	ev_child_start(n->loop, &op->child_w);
	log_debug("node restore fetching job=%s rank=%d incarnation=%u cs=%s "
	    "worker=%d", l->job_id, l->rank, l->incarnation, l->cs,
	    (int)op->worker);
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

/* Agent stopping: restores in flight are abandoned. */
void
node_restore_stop(struct node *n)
{
	struct rst_op *op;

	while ((op = n->restores) != NULL) {
		if (op->worker > 0) {
			(void)kill(op->worker, SIGKILL);
			(void)waitpid(op->worker, NULL, 0);
		}
		rst_op_free(op);
	}
}

/* The image is in op->dir: the helper restores it, with fresh pipes in
   the place of the rank's old ones. */
static void
rst_finish(struct rst_op *op)
{
	struct node *n = op->n;
	const Mpiv__Launch *l = op->l;
	const Mpiv__ImageMeta *meta = op->meta;
	Mpiv__PrivRestore rq = MPIV__PRIV_RESTORE__INIT;
	Mpiv__PipeInode map[CRIU_MAX_FDS], *mp[CRIU_MAX_FDS];
	/* The rank's ends, passed as descriptors 0-3 of the packet. */
	int fds[4], nmap = 0;
	char err[256];

	for (int i = 0; i < 4; i++)
		if (pipe2(op->pp[i], O_CLOEXEC) < 0) {
			snprintf(err, sizeof(err), "pipe: %s", strerror(errno));
			goto fail;
		}
	fds[0] = op->pp[0][1];
	fds[1] = op->pp[1][1];
	fds[2] = op->pp[2][1];
	fds[3] = op->pp[3][0];
	for (size_t i = 0; i < meta->n_pipes && nmap < CRIU_MAX_FDS; i++) {
		int k;
		switch (meta->pipes[i]->fd) {
		case 1: k = 0; break;
		case 2: k = 1; break;
		case PROC_CTRL_FD: k = 2; break;
		case PROC_CTRL_IN_FD: k = 3; break;
		default:
			snprintf(err, sizeof(err), "image has a pipe at fd %d "
			    "the node cannot provide", meta->pipes[i]->fd);
			goto fail;
		}
		mpiv__pipe_inode__init(&map[nmap]);
		map[nmap].fd = k;
		map[nmap].inode = meta->pipes[i]->inode;
		mp[nmap] = &map[nmap];
		nmap++;
	}
	rq.id = op->id = ++n->link_seq;
	rq.dir = op->dir;
	/* Under the pid every incarnation of the rank sees (pidns.h), in a
	   namespace of its own; else under the clone's. */
	rq.as_pid = op->as_pid = n->pidns ?
	    pidns_rank_pid(l->job_id, l->rank) : 0;
	rq.map = mp;
	rq.n_map = (size_t)nmap;
	if (node_link_send_fds(n, MPIV__MSG_TYPE__MSG_PRIV_RESTORE, &rq.base,
	    fds, 4) < 0) {
		snprintf(err, sizeof(err), "the node's privileged helper is "
		    "gone");
		goto fail;
	}
	/* The helper holds the rank's ends now, and the directory. */
	rst_close(&op->pp[0][1]);
	rst_close(&op->pp[1][1]);
	rst_close(&op->pp[2][1]);
	rst_close(&op->pp[3][0]);
	op->dir[0] = '\0';
	return;
fail:
	rst_failed(n, l, meta->ckpt_no, err);
	rst_op_free(op);
}

/* The helper's answer to PrivRestore: the rank exists, stopped; it is
   told its incarnation, then woken. */
void
node_restored(struct node *n, const Mpiv__PrivRestored *r)
{
	Mpiv__TaskStarted ts = MPIV__TASK_STARTED__INIT;
	const Mpiv__ImageMeta *meta;
	const Mpiv__Launch *l;
	struct rst_op *op;
	struct task *t;
	char line[96];

	for (op = n->restores; op != NULL; op = op->next)
		if (op->id == r->id && op->id != 0)
			break;
	if (op == NULL) {
		log_warnx("node helper answered an unknown restore %llu",
		    (unsigned long long)r->id);
		if (r->pid > 0)
			node_link_signal(n, r->pid, SIGKILL,
			    MPIV__PRIV_HOW__PRIV_ALL);
		return;
	}
	l = op->l;
	meta = op->meta;
	if (*r->error != '\0' || r->pid <= 0) {
		rst_failed(n, l, meta->ckpt_no, *r->error != '\0' ? r->error :
		    "the helper restored nothing");
		rst_op_free(op);
		return;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		node_link_signal(n, r->pid, SIGKILL, MPIV__PRIV_HOW__PRIV_ALL);
		rst_failed(n, l, meta->ckpt_no, "node agent out of memory");
		rst_op_free(op);
		return;
	}
	t->n = n;
	snprintf(t->job, sizeof(t->job), "%s", l->job_id);
	t->rank = l->rank;
	t->incarnation = l->incarnation;
	t->pid = r->pid;
	t->task_pid = r->task_pid;
	t->nsh = r->pid != r->task_pid;
	t->restored = true;
	t->ctrl_fd = op->pp[2][0];
	t->ctrl_in_fd = op->pp[3][1];
	t->out_count[0] = meta->out_base;
	t->out_count[1] = meta->err_base;
	snprintf(t->cs, sizeof(t->cs), "%s", l->cs);
	snprintf(t->cm, sizeof(t->cm), "%s", node_home_cm(l));
	if (l->image_key.len == AUTH_HASH_LEN) {
		memcpy(t->image_key, l->image_key.data, AUTH_HASH_LEN);
		t->has_image_key = true;
	}
	task_stream_init(t, &t->out, op->pp[0][0], 1);
	task_stream_init(t, &t->err, op->pp[1][0], 2);
	op->pp[0][0] = op->pp[1][0] = op->pp[2][0] = op->pp[3][1] = -1;
	task_ctrl_start(t);
	task_insert(n, t);
	/* The rank reads these as soon as it wakes from its SIGSTOP: first
	   this incarnation's credential (its image holds the old one's,
	   which the CMs now refuse), then its incarnation. */
	if (l->rank_key.len == AUTH_HASH_LEN) {
		memcpy(line, "key ", 4);
		auth_hex(l->rank_key.data, AUTH_HASH_LEN, line + 4);
		strcat(line, "\n");
		ckpt_write_in(t, line);
		auth_wipe(line, sizeof(line));
	}
	snprintf(line, sizeof(line), "inc %u\n", l->incarnation);
	ckpt_write_in(t, line);
	node_link_signal(n, t->pid, SIGCONT, MPIV__PRIV_HOW__PRIV_ONE);
	log_info("node restored job=%s rank=%d incarnation=%u ckpt=%" PRIu64
	    " pid=%d handle=%d getpid=%d bytes=%" PRIu64 " fetch_s=%.3f "
	    "restore_s=%.3f out_base=%" PRIu64 " err_base=%" PRIu64, l->job_id,
	    l->rank, l->incarnation, meta->ckpt_no, (int)t->task_pid,
	    (int)t->pid, (int)(op->as_pid > 0 ? op->as_pid :
	    pidns_inner_pid(t->task_pid)), op->bytes, op->t1 - op->t0,
	    mono_s() - op->t1, meta->out_base, meta->err_base);
	ts.job_id = l->job_id;
	ts.rank = l->rank;
	ts.incarnation = l->incarnation;
	ts.pid = t->task_pid;
	ts.restored_ckpt = meta->ckpt_no;
	ts.out_base = meta->out_base;
	ts.err_base = meta->err_base;
	if (n->c != NULL)
		(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_TASK_STARTED,
		    &ts.base, NULL, 0);
	if (op->kill_sig != 0) {	/* killed while it was restored */
		log_info("node killing job=%s rank=%d pid=%d signal=%d (asked "
		    "during its restore)", t->job, t->rank, (int)t->task_pid,
		    op->kill_sig);
		task_signal(t, op->kill_sig);
	}
	rst_op_free(op);
}
