/*
 * node_ckpt.c: the node agent's side of checkpoints (docs/CHECKPOINT.md).
 *
 * Taking one: on `ckpt-sync k` the rank's stdout/stderr pipes are read
 * empty, their byte counts noted, and `go k` answered on the ctrl-in
 * pipe. On `ckpt-clone k pid event nd post` the privileged helper is
 * asked for the dump (PrivDump): it finds the clone by the pid the rank
 * names it by (in the rank's own PID namespace), waits for it to stop,
 * reads its pipe inodes, dumps it with criu into a fresh /dev/shm
 * directory and gives that to the agent's account (helper.c); a failed
 * dump kills the clone. Then an upload worker (forked from the agent, so
 * the loop never waits for the network) streams the packed, zstd'ed
 * image to the rank's checkpoint server (ImagePut, ImageData...,
 * ImageEnd), waits for ImageAck, removes the directory and writes one
 * result record on a pipe; the agent reaps it and sends CkptTaken.
 *
 * Restoring one: node_restore.c.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cksum.h"
#include "auth_client.h"
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
	uint64_t parent;	/* incremental over this checkpoint, 0: full */
	uint32_t chain;
	uint64_t blocks, reused;	/* of the image; found in the parent */
	double cpu_s;		/* the worker's CPU: scan, archive, zstd, send */
	char error[400];
};


/* Everything the upload worker needs, copied before the fork. */
struct ckpt_args {
	char job[64];
	int rank;
	uint32_t incarnation;
	uint64_t k, event, nd, post;
	uint64_t out_base, err_base;
	char cs[128], cm[128];
	uint8_t image_key[AUTH_HASH_LEN];	/* the task's, if has_image_key */
	bool has_image_key;
	char dir[64];		/* the dump, made by the helper */
	Mpiv__PipeInode pipes[CKPT_NFDS];
	size_t npipes;
	pid_t agent;		/* names the block index files */
};

/* One dump (by the helper) + upload (by a worker) in flight. */
struct ckpt_op {
	struct node *n;
	char job[64];
	int rank;
	uint32_t incarnation;
	uint64_t k;
	uint64_t id;		/* PrivDump.id */
	struct ckpt_args a;	/* for the upload worker */
	double dump_s;
	pid_t worker;		/* the upload worker, 0 while dumping */
	int resfd;		/* read end of the result pipe */
	char dir[64];		/* the dump directory, removed by the agent */
	ev_child child_w;
	ev_timer limit_w;
	struct ckpt_op *next;
};

/*
 * Makes /dev/shm/mpiv-KIND-<agent pid>-XXXXXX (images never touch the
 * disk). The pid lets a later agent recognise and remove what a dead one
 * left behind (ckpt_sweep). 0 or -1.
 */
int
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
		    (strcmp(kind, "ckpt") != 0 && strcmp(kind, "rst") != 0 &&
		    strcmp(kind, "held") != 0 && strcmp(kind, "idx") != 0) ||
		    pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		log_info("node removing leftover %s", path);
		if (strcmp(kind, "idx") == 0)
			(void)unlink(path);
		else
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

void
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

	/* Whatever the rank wrote before the sync is forwarded now. */
	task_drain(t);
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
	struct seal seal;
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
	if (frame_write_s(&u->seal, u->fd, MPIV__MSG_TYPE__MSG_IMAGE_DATA,
	    &d.base, u->buf, (uint32_t)u->len, CKPT_IO_TIMEOUT_MS) < 0)
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
int
ckpt_expect(struct seal *s, int fd, const char *cs, uint16_t want,
    ProtobufCMessage **out, char *err, size_t n)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *payload;
	const char *e = NULL;

	for (;;) {
		if (frame_read_s(s, fd, &h, &m, &payload, CKPT_IO_TIMEOUT_MS,
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
 * Dials a CS and says Hello as a node (the handshake is done before any
 * image byte goes): with image_key, as the node of incarnation inc of
 * rank of job, proving that key, so that the CS serves this connection
 * that rank's images; without, proving K_node when we have it. fd or -1.
 */
int
ckpt_dial_cs(const char *cs, const char *job, int32_t rank, uint32_t inc,
    const uint8_t *image_key, struct seal *s, char *err, size_t n)
{
	struct auth_key ik;
	const struct auth_key *key = ckpt_key;
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__HelloReply *hr;
	char why[256];
	int fd, rc;

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
	h.name = "node";
	if (image_key != NULL && ckpt_key != NULL) {
		h.job_id = (char *)job;
		h.rank = rank;
		h.incarnation = inc;
		auth_key_set(&ik, image_key, AUTH_HASH_LEN);
		key = &ik;
	}
	rc = auth_client_hello(fd, key, &h, s, CKPT_IO_TIMEOUT_MS, &hr, why,
	    sizeof(why));
	if (key == &ik)
		auth_wipe(&ik, sizeof(ik));
	if (rc < 0) {
		snprintf(err, n, "checkpoint server %s: %s", cs, why);
		close(fd);
		return -1;
	}
	if (!hr->ok) {
		snprintf(err, n, "checkpoint server %s refused us: %s", cs,
		    hr->error);
		frame_free_meta(&hr->base);
		seal_end(s);
		close(fd);
		return -1;
	}
	frame_free_meta(&hr->base);
	auth_client_trace("node", cs, s->on ? s->tx.cipher : SEAL_NONE);
	return fd;
}

/* The image an upload sends: full (d == NULL) or a delta over parent. */
struct ckpt_img {
	const struct criu_scan *scan;	/* NULL: not scanned, no digest */
	const struct criu_dedup *d;
	uint64_t parent, parent_digest;
	uint32_t chain;
};

/* Uploads dir; fills res. 0, or -1 (res->error) with *refused when the
 * CS answered ImageAck{ok = false}. */
static int
ckpt_upload(const struct ckpt_args *a, const char *dir,
    Mpiv__PipeInode **pipes, size_t npipes, const struct ckpt_img *img,
    struct ckpt_result *res, bool *refused)
{
	Mpiv__ImagePut put = MPIV__IMAGE_PUT__INIT;
	Mpiv__ImageMeta meta = MPIV__IMAGE_META__INIT;
	Mpiv__ImageEnd end = MPIV__IMAGE_END__INIT;
	Mpiv__ImageAck *ack;
	ProtobufCMessage *m;
	struct ckpt_up *u;
	uint64_t raw = 0;
	int level = criu_zstd_level(), rc = -1, packed;

	*refused = false;
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		return -1;
	}
	u->sum = CKSUM_INIT;
	if ((u->fd = ckpt_dial_cs(a->cs, a->job, a->rank, a->incarnation,
	    a->has_image_key ? a->image_key : NULL, &u->seal, res->error,
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
	meta.raw_bytes = img->scan != NULL ? img->scan->raw_bytes :
	    ckpt_raw_size(dir);
	meta.zstd_level = level;
	meta.content_digest = img->scan != NULL ? img->scan->digest : 0;
	if (img->d != NULL) {
		meta.parent_ckpt = img->parent;
		meta.parent_digest = img->parent_digest;
		meta.chain = img->chain;
	}
	put.meta = &meta;
	if (frame_write_s(&u->seal, u->fd, MPIV__MSG_TYPE__MSG_IMAGE_PUT,
	    &put.base, NULL, 0, CKPT_IO_TIMEOUT_MS) < 0) {
		snprintf(res->error, sizeof(res->error), "upload to %s: %s",
		    a->cs, strerror(errno));
		goto out;
	}
	if (img->d != NULL)
		packed = criu_pack_delta(dir, img->scan, img->d, level,
		    ckpt_up_out, u, &raw);
	else
		packed = criu_pack_dir(dir, level, ckpt_up_out, u, &raw);
	if (packed < 0 || ckpt_up_flush(u) < 0) {
		snprintf(res->error, sizeof(res->error), "upload to %s: %s",
		    a->cs, strerror(errno));
		goto out;
	}
	res->raw_bytes = meta.raw_bytes;
	end.bytes = u->bytes;
	end.checksum = u->sum;
	if (frame_write_s(&u->seal, u->fd, MPIV__MSG_TYPE__MSG_IMAGE_END,
	    &end.base, NULL, 0, CKPT_IO_TIMEOUT_MS) < 0) {
		snprintf(res->error, sizeof(res->error), "upload to %s: %s",
		    a->cs, strerror(errno));
		goto out;
	}
	if (ckpt_expect(&u->seal, u->fd, a->cs, MPIV__MSG_TYPE__MSG_IMAGE_ACK, &m,
	    res->error, sizeof(res->error)) < 0)
		goto out;
	ack = (Mpiv__ImageAck *)m;
	if (!ack->ok) {
		snprintf(res->error, sizeof(res->error), "checkpoint server "
		    "%s refused the image: %s", a->cs, ack->error);
		*refused = true;
	} else
		rc = 0;
	frame_free_meta(m);
	res->bytes = u->bytes;
	if (rc == 0) {
		Mpiv__Bye bye = MPIV__BYE__INIT;
		(void)frame_write_s(&u->seal, u->fd, MPIV__MSG_TYPE__MSG_BYE,
		    &bye.base, NULL, 0, 1000);
	}
out:
	if (u->fd >= 0)
		close(u->fd);
	seal_end(&u->seal);
	free(u);
	return rc;
}

/* ---------------- incremental images: the rank's block index ------------
 *
 * After an image is acknowledged, the worker leaves the hash of each of
 * its blocks in /dev/shm/mpiv-idx-<agent pid>-<job>-<rank> (tmpfs, a few
 * tens of KB per rank); the next checkpoint of the rank on this node
 * sends only the blocks that file does not list, as a delta over that
 * image. One checkpoint of a rank is in flight at a time, so one worker
 * at a time uses a rank's file. The CS checks that the parent it names
 * is stored with that digest; the node never trusts the file beyond
 * choosing what to send.
 */

#define CKPT_IDX_MAGIC "MPIVIDX1"
#define CKPT_FULL_EVERY 8	/* default of MPIV_CKPT_FULL_EVERY */

struct ckpt_idx_hdr {
	char magic[8];
	uint64_t ckpt_no;
	uint64_t digest;
	uint32_t chain;
	uint32_t pad;
	char cs[128];
	uint64_t nblocks;
};

/* A full image at least every K checkpoints: MPIV_CKPT_FULL_EVERY (1 =
 * every image full, incremental images off). */
static unsigned
ckpt_full_every(void)
{
	const char *s = getenv("MPIV_CKPT_FULL_EVERY");
	long v;

	if (s == NULL || *s == '\0')
		return CKPT_FULL_EVERY;
	v = strtol(s, NULL, 10);
	return v >= 1 && v <= 1000 ? (unsigned)v : CKPT_FULL_EVERY;
}

/* The index file of (job, rank); false when the job id cannot name one. */
static bool
ckpt_idx_path(const char *job, int rank, pid_t agent, char *path, size_t n)
{
	for (const char *p = job; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		    *p == '-'))
			return false;
	return *job != '\0' && (size_t)snprintf(path, n,
	    "/dev/shm/mpiv-idx-%d-%s-%d", (int)agent, job, rank) < n;
}

/* Loads the index of the rank's last acknowledged image. NULL if none. */
static struct criu_bhash *
ckpt_idx_load(const char *path, struct ckpt_idx_hdr *h)
{
	struct criu_bhash *b = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || read(fd, h, sizeof(*h)) != sizeof(*h) ||
	    memcmp(h->magic, CKPT_IDX_MAGIC, 8) != 0 ||
	    h->nblocks > (uint64_t)st.st_size / sizeof(*b) ||
	    (uint64_t)st.st_size != sizeof(*h) + h->nblocks * sizeof(*b) ||
	    (b = malloc(h->nblocks * sizeof(*b) + 1)) == NULL ||
	    read(fd, b, h->nblocks * sizeof(*b)) !=
	    (ssize_t)(h->nblocks * sizeof(*b))) {
		free(b);
		b = NULL;
	}
	close(fd);
	h->cs[sizeof(h->cs) - 1] = '\0';
	return b;
}

/* Replaces the index (temp file, rename). Failing only costs a full image
 * next time, so errors are logged and dropped. */
static void
ckpt_idx_save(const char *path, const struct ckpt_args *a,
    const struct criu_scan *s, uint32_t chain)
{
	struct ckpt_idx_hdr h = { 0 };
	char tmp[PATH_MAX + 8];
	size_t len = s->nblocks * sizeof(*s->blocks);
	int fd;

	memcpy(h.magic, CKPT_IDX_MAGIC, 8);
	h.ckpt_no = a->k;
	h.digest = s->digest;
	h.chain = chain;
	snprintf(h.cs, sizeof(h.cs), "%s", a->cs);
	h.nblocks = s->nblocks;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h) ||
	    (len > 0 && write(fd, s->blocks, len) != (ssize_t)len) ||
	    close(fd) < 0 || rename(tmp, path) < 0) {
		log_warn("node cannot save the block index %s", path);
		if (fd >= 0)
			(void)unlink(tmp);
		(void)unlink(path);
	}
}

/* Removes the block indexes of this agent (of one job, or all). */
void
node_ckpt_forget(const char *job, int rank)
{
	char path[PATH_MAX];

	if (job != NULL && ckpt_idx_path(job, rank, getpid(), path,
	    sizeof(path)))
		(void)unlink(path);
}

/*
 * Uploads the dump in a->dir: a delta over the rank's last acknowledged
 * image when its index is here, names the same CS, the chain is shorter
 * than MPIV_CKPT_FULL_EVERY and at least a quarter of the blocks are
 * found in it; else (or when the CS refuses the delta: its parent gone,
 * not matching) a full image. 0 or -1.
 */
static int
ckpt_upload_image(const struct ckpt_args *a, Mpiv__PipeInode **pp,
    struct ckpt_result *res)
{
	struct criu_scan scan;
	struct ckpt_idx_hdr h;
	struct ckpt_img img = { 0 };
	struct criu_bhash *pb = NULL;
	struct criu_dedup *d = NULL;
	char path[PATH_MAX];
	unsigned every = ckpt_full_every();
	bool have_path, scanned, refused = false;
	int rc;

	have_path = every > 1 && ckpt_idx_path(a->job, a->rank, a->agent,
	    path, sizeof(path));
	scanned = criu_scan_dir(a->dir, &scan) == 0;
	if (!scanned)
		log_warn("node cannot scan %s: full image, no digest", a->dir);
	else {
		img.scan = &scan;
		res->blocks = scan.nblocks;
	}
	if (scanned && have_path && (pb = ckpt_idx_load(path, &h)) != NULL &&
	    strcmp(h.cs, a->cs) == 0 && h.chain + 1 < every &&
	    h.ckpt_no < a->k && (d = criu_dedup_new(pb, h.nblocks)) != NULL) {
		res->reused = criu_dedup_count(d, &scan);
		if (res->reused * 4 >= scan.nblocks && res->reused > 0) {
			img.d = d;
			img.parent = h.ckpt_no;
			img.parent_digest = h.digest;
			img.chain = h.chain + 1;
		}
	}
	rc = ckpt_upload(a, a->dir, pp, a->npipes, &img, res, &refused);
	if (rc < 0 && refused && img.d != NULL) {
		log_warnx("node incremental image refused job=%s rank=%d k=%"
		    PRIu64 " parent=%" PRIu64 " error=\"%s\": sending a full "
		    "one", a->job, a->rank, a->k, img.parent, res->error);
		img.d = NULL;
		img.chain = 0;
		res->error[0] = '\0';
		rc = ckpt_upload(a, a->dir, pp, a->npipes, &img, res, &refused);
	}
	if (rc == 0) {
		res->parent = img.d != NULL ? img.parent : 0;
		res->chain = img.d != NULL ? img.chain : 0;
		if (scanned && have_path)
			ckpt_idx_save(path, a, &scan, res->chain);
	}
	criu_dedup_free(d);
	free(pb);
	if (scanned)
		criu_scan_free(&scan);
	return rc;
}

/* The upload worker's work (the dump is done); never returns. */
static void
ckpt_worker(const struct ckpt_args *a, int resfd)
{
	Mpiv__PipeInode *pp[CKPT_NFDS];
	struct ckpt_result res = { 0 };
	double t0 = mono_s();
	struct rusage ru;
	ssize_t w;

	proc_worker_init();
	for (size_t i = 0; i < a->npipes; i++)
		pp[i] = (Mpiv__PipeInode *)&a->pipes[i];
	if (ckpt_upload_image(a, pp, &res) == 0)
		res.ok = 1;
	res.upload_s = mono_s() - t0;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		res.cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec /
		    1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	proc_rmtree(a->dir);
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
	/* The worker removes it when it finishes; not when it was killed. */
	if (op->dir[0] != '\0')
		proc_rmtree(op->dir);
	auth_wipe(op->a.image_key, sizeof(op->a.image_key));
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
		    "upload_s=%.3f inc=%u parent=%" PRIu64 " chain=%u blocks=%"
		    PRIu64 " reused=%" PRIu64 " upload_cpu_s=%.3f", job, rank, k,
		    res->bytes, res->raw_bytes, res->dump_s, res->upload_s, inc,
		    res->parent, res->chain, res->blocks, res->reused,
		    res->cpu_s);
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

/* Reports op's checkpoint (taken, failed or skipped: res) and frees op. */
static void
ckpt_op_report(struct ckpt_op *op, struct ckpt_result *res)
{
	res->error[sizeof(res->error) - 1] = '\0';
	if (!res->ok && !res->skipped && res->dump_s == 0 &&
	    !ckpt_rank_lives(op)) {
		/* No dump: the clone died with its rank's namespace (a kill
		   of the whole rank, or a dump longer than the namespace
		   lingers; pidns.c). No failure of checkpointing. */
		char e[sizeof(res->error)];
		int len;

		memcpy(e, res->error, sizeof(e));
		len = snprintf(res->error, sizeof(res->error), "skipped: rank %d "
		    "ended during checkpoint %" PRIu64 ": ", op->rank, op->k);
		if (len > 0 && (size_t)len < sizeof(res->error))
			snprintf(res->error + len, sizeof(res->error) -
			    (size_t)len, "%.*s", (int)(sizeof(res->error) -
			    (size_t)len - 1), e);
		res->skipped = 1;
	}
	ckpt_send_taken(op->n, op->job, op->rank, op->incarnation, op->k, res);
	ckpt_op_free(op);
}

static void
ckpt_on_worker(struct ev_loop *loop, ev_child *w, int revents)
{
	struct ckpt_op *op = w->data;
	struct ckpt_result res = { 0 };
	ssize_t r;

	do
		r = read(op->resfd, &res, sizeof(res));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(res)) {
		memset(&res, 0, sizeof(res));
		snprintf(res.error, sizeof(res.error), "checkpoint upload "
		    "worker ended without a result (status 0x%x)",
		    w->rstatus);
	}
	res.dump_s = op->dump_s;
	if (res.ok)
		op->dir[0] = '\0';	/* the worker removed it */
	ckpt_op_report(op, &res);
}

static void
ckpt_on_limit(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ckpt_op *op = w->data;
	struct ckpt_result res = { 0 };

	log_warnx("node checkpoint of job=%s rank=%d k=%" PRIu64 " still "
	    "busy after %.0f s: abandoned", op->job, op->rank, op->k,
	    CKPT_HELPER_LIMIT);
	if (op->worker > 0) {
		(void)kill(op->worker, SIGKILL);	/* ckpt_on_worker reports */
		return;
	}
	snprintf(res.error, sizeof(res.error), "dump still busy after %.0f s",
	    CKPT_HELPER_LIMIT);
	res.dump_s = -1;	/* not "no dump": it may have begun */
	ckpt_op_report(op, &res);
}

/* The helper's answer to PrivDump: upload the image, or report why not. */
void
node_ckpt_dumped(struct node *n, const Mpiv__PrivDumped *r)
{
	struct ckpt_result res = { 0 };
	struct ckpt_op *op;
	int p[2];

	for (op = n->ckpts; op != NULL; op = op->next)
		if (op->id == r->id && op->worker == 0)
			break;
	if (op == NULL) {	/* abandoned meanwhile */
		if (r->ok && strncmp(r->dir, "/dev/shm/mpiv-", 14) == 0 &&
		    strstr(r->dir, "..") == NULL)
			proc_rmtree(r->dir);
		return;
	}
	if (!r->ok) {
		snprintf(res.error, sizeof(res.error), "%s", r->error);
		ckpt_op_report(op, &res);
		return;
	}
	op->dump_s = r->dump_s;
	snprintf(op->dir, sizeof(op->dir), "%s", r->dir);
	snprintf(op->a.dir, sizeof(op->a.dir), "%s", r->dir);
	for (size_t i = 0; i < r->n_pipes && i < CKPT_NFDS; i++) {
		mpiv__pipe_inode__init(&op->a.pipes[i]);
		op->a.pipes[i].fd = r->pipes[i]->fd;
		op->a.pipes[i].inode = r->pipes[i]->inode;
		op->a.npipes = i + 1;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (op->worker = fork()) < 0) {
		snprintf(res.error, sizeof(res.error), "upload worker: %s",
		    strerror(errno));
		res.dump_s = op->dump_s;
		op->worker = 0;
		ckpt_op_report(op, &res);
		return;
	}
	if (op->worker == 0) {
		close(p[0]);
		ckpt_worker(&op->a, p[1]);
	}
	close(p[1]);
	op->resfd = p[0];
	ev_child_init(&op->child_w, ckpt_on_worker, op->worker, 0);
	op->child_w.data = op;
	ev_child_start(n->loop, &op->child_w);
}

/* The clone of a checkpoint that is not taken dies (through the helper). */
static void
ckpt_discard(struct task *t, pid_t clone_ns)
{
	Mpiv__PrivDump d = MPIV__PRIV_DUMP__INIT;

	d.pid = t->pid;
	d.clone_ns = clone_ns;
	d.discard = true;
	(void)node_link_send(t->n, MPIV__MSG_TYPE__MSG_PRIV_DUMP, &d.base);
}

void
node_ckpt_clone(struct task *t, const char *args)
{
	struct node *n = t->n;
	Mpiv__PrivDump d = MPIV__PRIV_DUMP__INIT;
	struct ckpt_result res = { 0 };
	unsigned long long k, ev, nd, post;
	struct ckpt_op *op;
	bool busy = false;
	int pid;

	if (sscanf(args, "%llu %d %llu %llu %llu", &k, &pid, &ev, &nd,
	    &post) != 5 || pid <= 0) {
		log_warnx("node bad ckpt-clone line \"%s\" rank=%d", args,
		    t->rank);
		return;
	}
	/*
	 * One checkpoint of a rank in flight at a time: when dump + upload
	 * take longer than the interval, later clones are dropped instead of
	 * piling up workers that compete for the CPU and the CS.
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
		ckpt_discard(t, pid);
		ckpt_send_taken(n, t->job, t->rank, t->incarnation, k, &res);
		return;
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		snprintf(res.error, sizeof(res.error), "node agent: %s",
		    strerror(errno));
		ckpt_discard(t, pid);
		ckpt_send_taken(n, t->job, t->rank, t->incarnation, k, &res);
		return;
	}
	op->n = n;
	snprintf(op->job, sizeof(op->job), "%s", t->job);
	op->rank = t->rank;
	op->incarnation = t->incarnation;
	op->k = k;
	op->resfd = -1;
	snprintf(op->a.job, sizeof(op->a.job), "%s", t->job);
	op->a.rank = t->rank;
	op->a.incarnation = t->incarnation;
	op->a.k = k;
	op->a.agent = getpid();
	op->a.event = ev;
	op->a.nd = nd;
	op->a.post = post;
	op->a.out_base = t->sync_k == k ? t->sync_base[0] : t->out_count[0];
	op->a.err_base = t->sync_k == k ? t->sync_base[1] : t->out_count[1];
	snprintf(op->a.cs, sizeof(op->a.cs), "%s", t->cs);
	memcpy(op->a.image_key, t->image_key, sizeof(op->a.image_key));
	op->a.has_image_key = t->has_image_key;
	snprintf(op->a.cm, sizeof(op->a.cm), "%s", t->cm);
	log_info("node ckpt-clone job=%s rank=%d incarnation=%u k=%llu "
	    "clone_getpid=%d event=%llu nd=%llu post=%llu out_base=%"
	    PRIu64 " err_base=%" PRIu64, t->job, t->rank, t->incarnation, k,
	    pid, ev, nd, post, op->a.out_base, op->a.err_base);
	/* The helper finds the clone (by its pid in the rank's namespace),
	   waits for it to stop and dumps it; then ours uploads. */
	d.id = op->id = ++n->link_seq;
	d.pid = t->pid;
	d.clone_ns = pid;
	d.job_id = t->job;
	d.rank = t->rank;
	d.ckpt_no = k;
	if (node_link_send(n, MPIV__MSG_TYPE__MSG_PRIV_DUMP, &d.base) < 0) {
		snprintf(res.error, sizeof(res.error), "the node's privileged "
		    "helper is gone");
		ckpt_send_taken(n, t->job, t->rank, t->incarnation, k, &res);
		auth_wipe(op->a.image_key, sizeof(op->a.image_key));
		free(op);
		return;
	}
	ev_init(&op->child_w, ckpt_on_worker);
	ev_timer_init(&op->limit_w, ckpt_on_limit, CKPT_HELPER_LIMIT, 0.);
	op->limit_w.data = op;
	ev_timer_start(n->loop, &op->limit_w);
	op->next = n->ckpts;
	n->ckpts = op;
}

/* Agent stopping: workers die (the helper kills the clones it holds),
 * the block indexes go. */
void
node_ckpt_stop(struct node *n)
{
	struct ckpt_op *op;
	char prefix[64], path[300];
	struct dirent *e;
	DIR *dir;

	while ((op = n->ckpts) != NULL) {
		if (op->worker > 0) {
			(void)kill(op->worker, SIGKILL);
			(void)waitpid(op->worker, NULL, 0);
		}
		ckpt_op_free(op);
	}
	snprintf(prefix, sizeof(prefix), "mpiv-idx-%d-", (int)getpid());
	if ((dir = opendir("/dev/shm")) == NULL)
		return;
	while ((e = readdir(dir)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			(void)unlink(path);
		}
	closedir(dir);
}
