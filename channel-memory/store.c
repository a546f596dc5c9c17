/*
 * store.c: the Channel Memory's durable log, so that a CM killed and
 * started again on the same --store directory still holds every message
 * and every ordering decision it ever answered (docs/CONTRACTS.md,
 * "The Channel Memory's store").
 *
 * One append-only file per job, DIR/job-<hex id>.log (0600, DIR 0700),
 * of records:
 *
 *   u32 magic "MVS1" | u16 type | u16 0 | u32 meta_len | u32 payload_len
 *   | u64 check (mpiv_digest of the 16 bytes before it and the meta)
 *   | meta (a Store* protobuf of runtime/proto/mpiv.proto) | payload
 *
 * StoreJob first, then in the order things happened: StoreMsg (a message
 * whose payload is complete, payload attached, its own digest inside),
 * StoreEvent (a delivery, probe or cancel answer; fold: one more Iprobe
 * miss folded into the last one), StoreNd (an outcome decided inside a
 * rank), StoreRank (an incarnation connected), StoreTrim (a durable
 * checkpoint freed a rank's log), StoreDigestTrim.
 *
 * The pessimistic rule: a record is written before anything that depends
 * on it leaves the CM. Records are gathered in a buffer while the CM
 * processes one read of input (conn batching, runtime/conn.h) and written
 * (and with --store-sync fsync, fdatasync'ed) by the hook that runs right
 * before the answers of that read are sent; a record made outside input
 * processing is written at once. A payload goes straight to the file
 * (after the buffered records before it) when it is complete; a delivery
 * may be logged before its payload is (cut-through): such a payload is
 * fetched again from its sender after a crash, as when the sender dies
 * mid-payload. A rank flushes every CM before a checkpoint (Flush /
 * FlushAck): what its image counts as sent is in the stores by then.
 *
 * A durable checkpoint frees payloads: their bytes are punched out of the
 * file, which keeps the (small) records. The file goes when the job ends
 * (JobEnd); a CM stopped or killed leaves it for the next start, which
 * rebuilds each job (store_recover) before it listens. A torn last record
 * (killed mid-write) is cut off: its answer never left. A bad record in
 * the middle, or a write that failed (disk full), makes the store
 * unusable: the file is removed, and the dispatcher's start-over
 * (dispatcher/disp_regen.c) is the fallback, as without a store. A
 * recovered job nobody claims within 120 s is dropped (job.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cm_priv.h"
#include "digest.h"
#include "frame.h"
#include "log.h"
#include "srvfault.h"

#define STORE_MAGIC	0x4d565331u	/* "MVS1" */
#define STORE_HDR_LEN	24u
#define STORE_BUF_MAX	(256u << 10)	/* buffered records written at once */

struct store {
	struct job *job;	/* whose log it is */
	int fd;
	char *path;
	uint64_t end;		/* where the next record goes */
	uint8_t *buf;		/* records not written yet */
	size_t len, cap;
	bool dirty;		/* written since the last fdatasync */
	bool failed;
	struct store *next_dirty;	/* on cm's list of buffered stores */
	bool listed;
};

static const ProtobufCMessageDescriptor *
store_desc(uint16_t type)
{
	switch (type) {
	case STORE_REC_JOB:
		return &mpiv__store_job__descriptor;
	case STORE_REC_MSG:
		return &mpiv__store_msg__descriptor;
	case STORE_REC_EVENT:
		return &mpiv__store_event__descriptor;
	case STORE_REC_ND:
		return &mpiv__store_nd__descriptor;
	case STORE_REC_RANK:
		return &mpiv__store_rank__descriptor;
	case STORE_REC_TRIM:
		return &mpiv__store_trim__descriptor;
	case STORE_REC_DIGEST_TRIM:
		return &mpiv__store_digest_trim__descriptor;
	default:
		return NULL;
	}
}

static void
store_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t
store_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static void
store_header(uint8_t h[STORE_HDR_LEN], uint16_t type, const uint8_t *meta,
    uint32_t meta_len, uint32_t payload_len)
{
	uint64_t ck;

	store_put32(h, STORE_MAGIC);
	h[4] = type >> 8;
	h[5] = type & 0xff;
	h[6] = h[7] = 0;
	store_put32(h + 8, meta_len);
	store_put32(h + 12, payload_len);
	ck = mpiv_digest(mpiv_digest(0, h, 16), meta, meta_len);
	memcpy(h + 16, &ck, sizeof(ck));
}

/* The store cannot keep its promise any more: it goes, said once. */
static void
store_fail(struct job *j, const char *what)
{
	struct store *st = j->store;

	if (st == NULL || st->failed)
		return;
	log_warn("cm store of job=%s unusable (%s): removed; a crash of this "
	    "CM now makes the job start over", j->id, what);
	st->failed = true;
	st->len = 0;
	(void)unlink(st->path);
}

int
store_write_all(int fd, const struct iovec *iov, int n, uint64_t off)
{
	struct iovec v[3];
	uint64_t left = 0;

	memcpy(v, iov, (size_t)n * sizeof(*v));
	for (int i = 0; i < n; i++)
		left += v[i].iov_len;
	while (left > 0) {
		ssize_t w = pwritev(fd, v, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (uint64_t)w;
		left -= (uint64_t)w;
		while (n > 0 && (size_t)w >= v[0].iov_len) {
			w -= (ssize_t)v[0].iov_len;
			memmove(v, v + 1, (size_t)(n - 1) * sizeof(*v));
			n--;
		}
		if (n > 0) {
			v[0].iov_base = (uint8_t *)v[0].iov_base + w;
			v[0].iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Writes the buffered records (and syncs with --store-sync fsync). */
static int
store_flush_job(struct job *j, bool sync)
{
	struct store *st = j->store;
	struct iovec v;

	if (st == NULL || st->failed)
		return -1;
	if (st->len > 0) {
		v.iov_base = st->buf;
		v.iov_len = st->len;
		if (store_write_all(st->fd, &v, 1, st->end) < 0) {
			store_fail(j, strerror(errno));
			return -1;
		}
		st->end += st->len;
		st->len = 0;
		st->dirty = true;
	}
	if (sync && st->dirty && j->cm->store_fsync) {
		if (fdatasync(st->fd) < 0) {
			store_fail(j, strerror(errno));
			return -1;
		}
		st->dirty = false;
	}
	return 0;
}

/* What is buffered goes to the file (and disk, with fsync) now. */
void
store_sync(struct job *j)
{
	if (j->store != NULL)
		(void)store_flush_job(j, true);
}

/* conn's batch hook: before the answers of one read leave. */
static void
store_batch_end(void *arg)
{
	struct cm *cm = arg;
	struct store *st;

	if (cm->store_dirty == NULL)
		return;
	while ((st = cm->store_dirty) != NULL) {
		cm->store_dirty = st->next_dirty;
		st->listed = false;
		st->next_dirty = NULL;
		(void)store_flush_job(st->job, true);	/* store_close unlists */
	}
	srvfault_point("cm-stored");
}

/* Puts st on its CM's list for the batch hook (once). */
static void
store_list(struct store *st)
{
	struct cm *cm = st->job->cm;

	if (st->listed)
		return;
	st->listed = true;
	st->next_dirty = cm->store_dirty;
	cm->store_dirty = st;
}

/* Appends one record to the buffer, flushed by the batch hook (or now). */
static void
store_put(struct job *j, uint16_t type, const ProtobufCMessage *m)
{
	struct store *st = j->store;
	size_t mlen;

	if (st == NULL || st->failed)
		return;
	mlen = protobuf_c_message_get_packed_size(m);
	if (st->len + STORE_HDR_LEN + mlen > st->cap) {
		size_t cap = st->cap ? st->cap : 4096;
		uint8_t *nb;

		while (cap < st->len + STORE_HDR_LEN + mlen)
			cap *= 2;
		if ((nb = realloc(st->buf, cap)) == NULL) {
			store_fail(j, "out of memory");
			return;
		}
		st->buf = nb;
		st->cap = cap;
	}
	protobuf_c_message_pack(m, st->buf + st->len + STORE_HDR_LEN);
	store_header(st->buf + st->len, type, st->buf + st->len +
	    STORE_HDR_LEN, (uint32_t)mlen, 0);
	st->len += STORE_HDR_LEN + mlen;
	if (!conn_batching_now()) {	/* an answer may follow at once */
		(void)store_flush_job(j, true);
		return;
	}
	if (st->len >= STORE_BUF_MAX)
		(void)store_flush_job(j, false);
	store_list(st);
}

/* ---- what the CM records ------------------------------------------- */

static char *
store_path(const char *dir, const char *id)
{
	size_t n = strlen(id), dl = strlen(dir);
	char *p = malloc(dl + 2 * n + 16);

	if (p == NULL)
		return NULL;
	memcpy(p, dir, dl);
	memcpy(p + dl, "/job-", 5);
	for (size_t i = 0; i < n; i++)
		sprintf(p + dl + 5 + 2 * i, "%02x", (unsigned char)id[i]);
	strcpy(p + dl + 5 + 2 * n, ".log");
	return p;
}

static struct store *
store_new(struct job *j, int fd, char *path)
{
	struct store *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	st->job = j;
	st->fd = fd;
	st->path = path;
	return st;
}

int
store_open(struct job *j)
{
	Mpiv__StoreJob sj = MPIV__STORE_JOB__INIT;
	char *path;
	int fd;

	if (j->cm->store_dir == NULL || j->relay_only || j->store != NULL)
		return 0;
	if ((path = store_path(j->cm->store_dir, j->id)) == NULL)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (j->store = store_new(j, fd, path)) == NULL) {
		log_warn("cm store of job=%s: cannot create %s: a crash of "
		    "this CM makes the job start over", j->id, path);
		if (fd >= 0)
			close(fd);
		free(path);
		return -1;
	}
	sj.job_id = j->id;
	sj.nranks = j->nranks;
	sj.ncms = j->ncms;
	sj.cm_index = j->cm_index;
	store_put(j, STORE_REC_JOB, &sj.base);
	(void)store_flush_job(j, true);
	log_info("cm store job=%s file=%s sync=%s", j->id, path,
	    j->cm->store_fsync ? "fsync" : "write");
	return 0;
}

/* The job token is known after JobSetup: it goes into a second StoreJob
   (the last one read wins). */
void
store_token(struct job *j)
{
	Mpiv__StoreJob sj = MPIV__STORE_JOB__INIT;

	if (j->store == NULL || !j->has_token)
		return;
	sj.job_id = j->id;
	sj.nranks = j->nranks;
	sj.ncms = j->ncms;
	sj.cm_index = j->cm_index;
	sj.job_token.data = j->token;
	sj.job_token.len = sizeof(j->token);
	store_put(j, STORE_REC_JOB, &sj.base);
}

void
store_close(struct job *j, bool remove)
{
	struct store *st = j->store, **pp;

	if (st == NULL)
		return;
	for (pp = &j->cm->store_dirty; *pp != NULL; pp = &(*pp)->next_dirty)
		if (*pp == st) {
			*pp = st->next_dirty;
			break;
		}
	if (!remove && !st->failed)
		(void)store_flush_job(j, true);
	if (remove && !st->failed)
		(void)unlink(st->path);
	close(st->fd);
	free(st->buf);
	free(st->path);
	free(st);
	j->store = NULL;
}

/*
 * The payload of message `sm` is complete in pb: the record and the
 * payload go to the file now. Returns the payload's offset in the file
 * (0: not stored).
 */
uint64_t
store_msg(struct job *j, Mpiv__StoreMsg *sm, struct pbuf *pb)
{
	struct store *st = j->store;
	uint8_t hdr[STORE_HDR_LEN], *meta;
	uint32_t plen = pbuf_len(pb);
	struct iovec v[3];
	uint64_t off;
	size_t mlen;

	if (st == NULL || st->failed || pbuf_failed(pb))
		return 0;
	if (store_flush_job(j, false) < 0)
		return 0;
	sm->check = mpiv_digest(0, pbuf_data(pb), plen);
	mlen = protobuf_c_message_get_packed_size(&sm->base);
	if ((meta = malloc(mlen + 1)) == NULL) {
		store_fail(j, "out of memory");
		return 0;
	}
	protobuf_c_message_pack(&sm->base, meta);
	store_header(hdr, STORE_REC_MSG, meta, (uint32_t)mlen, plen);
	v[0].iov_base = hdr;
	v[0].iov_len = sizeof(hdr);
	v[1].iov_base = meta;
	v[1].iov_len = mlen;
	v[2].iov_base = pbuf_data(pb);
	v[2].iov_len = plen;
	if (store_write_all(st->fd, v, 3, st->end) < 0) {
		free(meta);
		store_fail(j, strerror(errno));
		return 0;
	}
	free(meta);
	off = st->end + STORE_HDR_LEN + mlen;
	st->end = off + plen;
	st->dirty = true;
	srvfault_point("cm-payload");
	if (!conn_batching_now())
		(void)store_flush_job(j, true);
	else
		store_list(st);		/* the hook syncs it */
	return off;
}

/* Log entry e is filled in (fold: one more miss folded into it). */
void
store_event(struct job *j, const struct logent *e, bool fold)
{
	Mpiv__StoreEvent se = MPIV__STORE_EVENT__INIT;

	if (j->store == NULL)
		return;
	se.rcv = e->rcv;
	se.kind = (uint32_t)e->kind;
	se.event = fold ? e->event + e->count - 1 : e->event;
	se.fold = fold;
	if (!fold) {
		se.post_no = e->post_no;
		se.req_context = e->req_context;
		se.req_source = e->req_source;
		se.req_tag = e->req_tag;
		se.blocking = e->blocking;
		se.found = e->found;
		se.src = e->src;
		se.tag = e->tag;
		se.context = e->context;
		se.seq = e->seq;
		se.size = e->size;
		se.victim_post = e->victim_post;
	}
	store_put(j, STORE_REC_EVENT, &se.base);
}

void
store_nd(struct job *j, int32_t rank, const Mpiv__NdOutcome *o,
    uint64_t nd_no, uint64_t repeat)
{
	Mpiv__StoreNd sn = MPIV__STORE_ND__INIT;
	Mpiv__NdOutcome out = *o;

	if (j->store == NULL)
		return;
	out.nd_no = nd_no;
	out.repeat = repeat;
	sn.rank = rank;
	sn.outcome = &out;
	store_put(j, STORE_REC_ND, &sn.base);
}

void
store_rank(struct job *j, int32_t rank, uint32_t inc, uint64_t resume_event,
    uint64_t resume_nd)
{
	Mpiv__StoreRank sr = MPIV__STORE_RANK__INIT;

	if (j->store == NULL)
		return;
	sr.rank = rank;
	sr.incarnation = inc;
	sr.resume_event = resume_event;
	sr.resume_nd = resume_nd;
	store_put(j, STORE_REC_RANK, &sr.base);
}

void
store_trim(struct job *j, int32_t rank, const struct ckpt_state *ck)
{
	Mpiv__StoreTrim t = MPIV__STORE_TRIM__INIT;

	if (j->store == NULL)
		return;
	t.rank = rank;
	t.event = ck->freed_event;
	t.nd_no = ck->freed_nd;
	t.ckpt_no = ck->freed_ckpt;
	t.incarnation = ck->freed_inc;
	store_put(j, STORE_REC_TRIM, &t.base);
}

void
store_digest_trim(struct job *j, int32_t src, const uint64_t *seqs, size_t n)
{
	Mpiv__StoreDigestTrim t = MPIV__STORE_DIGEST_TRIM__INIT;

	if (j->store == NULL)
		return;
	t.src = src;
	t.n_seqs = n;
	t.seqs = (uint64_t *)seqs;
	store_put(j, STORE_REC_DIGEST_TRIM, &t.base);
}

/* A freed payload's bytes leave the disk (the record stays). */
void
store_forget(struct job *j, struct logent *e)
{
	if (j->store == NULL || j->store->failed || e->store_off == 0 ||
	    e->size == 0)
		return;
	(void)fallocate(j->store->fd, FALLOC_FL_PUNCH_HOLE |
	    FALLOC_FL_KEEP_SIZE, (off_t)e->store_off, (off_t)e->size);
	e->store_off = 0;
}

/* A payload back from the file (spill.c: entries spilled to the store). */
struct pbuf *
store_load(struct job *j, uint64_t off, uint64_t size)
{
	struct pbuf *pb;
	uint64_t done = 0;

	if (j->store == NULL || size > UINT32_MAX ||
	    (pb = pbuf_new((uint32_t)size)) == NULL)
		return NULL;
	while (done < size) {
		ssize_t n = pread(j->store->fd, pbuf_data(pb) + done,
		    size - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warn("cm store read failed job=%s offset=%" PRIu64,
			    j->id, off);
			pbuf_unref(pb);
			return NULL;
		}
		done += (uint64_t)n;
	}
	pbuf_advance(pb, (uint32_t)size);
	return pb;
}

/* ---- reading back (recover.c) ----------------------------------------- */

int
store_pread(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (uint8_t *)buf + done, n - done,
		    (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/*
 * Reads the record at off of a file of `size` bytes into r (meta
 * unpacked, payload located, r->next after it). 1: a record; 0: the end;
 * 2: a torn record (it runs past the end); -1: a bad record (*err).
 */
int
store_read(int fd, uint64_t off, uint64_t size, struct store_rec *r,
    const char **err)
{
	uint8_t h[STORE_HDR_LEN], *meta = NULL;
	const ProtobufCMessageDescriptor *desc;
	uint32_t mlen, plen;
	uint64_t ck, want;
	uint16_t type;

	memset(r, 0, sizeof(*r));
	if (off >= size)
		return 0;
	if (size - off < STORE_HDR_LEN)
		return 2;
	if (store_pread(fd, h, sizeof(h), off) < 0) {
		*err = "read error";
		return -1;
	}
	type = (uint16_t)(h[4] << 8 | h[5]);
	mlen = store_get32(h + 8);
	plen = store_get32(h + 12);
	if (store_get32(h) != STORE_MAGIC || h[6] != 0 || h[7] != 0) {
		*err = "not a record (bad magic)";
		return -1;
	}
	if ((desc = store_desc(type)) == NULL) {
		*err = "unknown record type";
		return -1;
	}
	if (mlen > FRAME_MAX_META || plen > frame_max_payload() ||
	    (plen > 0 && type != STORE_REC_MSG)) {
		*err = "record lengths out of range";
		return -1;
	}
	if (size - off - STORE_HDR_LEN < (uint64_t)mlen + plen)
		return 2;
	if ((meta = malloc(mlen + 1)) == NULL ||
	    store_pread(fd, meta, mlen, off + STORE_HDR_LEN) < 0) {
		free(meta);
		*err = "read error";
		return -1;
	}
	ck = mpiv_digest(mpiv_digest(0, h, 16), meta, mlen);
	memcpy(&want, h + 16, sizeof(want));
	if (ck != want) {
		free(meta);
		*err = "record checksum mismatch";
		return -1;
	}
	r->meta = protobuf_c_message_unpack(desc, NULL, mlen, meta);
	free(meta);
	if (r->meta == NULL) {
		*err = "malformed record";
		return -1;
	}
	r->type = type;
	r->payload_off = off + STORE_HDR_LEN + mlen;
	r->payload_len = plen;
	r->next = r->payload_off + plen;
	return 1;
}

void
store_rec_free(struct store_rec *r)
{
	if (r->meta != NULL)
		protobuf_c_message_free_unpacked(r->meta, NULL);
	r->meta = NULL;
}

/* A recovered job keeps writing to the file it was read from (path is
   the store's from here on, end where the next record goes). 0, or -1
   (out of memory: fd closed, path freed and removed). */
int
store_adopt(struct job *j, int fd, char *path, uint64_t end)
{
	if ((j->store = store_new(j, fd, path)) == NULL) {
		close(fd);
		(void)unlink(path);
		free(path);
		return -1;
	}
	j->store->end = end;
	return 0;
}

int
store_fd(const struct job *j)
{
	return j->store != NULL ? j->store->fd : -1;
}

void
store_set_end(struct job *j, uint64_t end)
{
	if (j->store != NULL)
		j->store->end = end;
}

void
store_hook(struct cm *cm)
{
	conn_set_batch_hook(store_batch_end, cm);
}
