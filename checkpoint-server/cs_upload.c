/*
 * cs_upload.c: one image arriving (ImagePut, ImageData..., ImageEnd).
 * Bytes go to a temp file in the rank's directory as they come (never a
 * whole image in memory), counted and checksummed on the way; ImageEnd
 * checks both, syncs the file and commits it through cs_store_commit,
 * then the home CM is told. Any failure leaves the current image alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cksum.h"
#include "cs_priv.h"
#include "log.h"
#include "net.h"
#include "srvfault.h"

struct cs_upload {
	int rdfd;		/* the rank's directory */
	int fd;			/* the temp file, -1 once committed */
	char tmp[64];
	char *job;
	int32_t rank;
	uint64_t ckpt_no;
	uint32_t incarnation;
	char *cm;		/* home CM, "" if none was given */
	uint8_t *meta;		/* the packed ImageMeta, for ckpt-K.meta */
	Mpiv__ImageMeta *m;	/* unpacked again: the parent checks */
	size_t metalen;
	uint64_t bytes;
	uint64_t sum;
	struct timespec t0;
};

uint64_t
cs_upload_ckpt_no(const struct cs_upload *u)
{
	return u->ckpt_no;
}

static void
cs_upload_free(struct cs_upload *u)
{
	if (u->fd >= 0) {
		close(u->fd);
		(void)unlinkat(u->rdfd, u->tmp, 0);
	}
	if (u->rdfd >= 0)
		close(u->rdfd);
	free(u->job);
	free(u->cm);
	free(u->meta);
	if (u->m != NULL)
		mpiv__image_meta__free_unpacked(u->m, NULL);
	free(u);
}

void
cs_upload_abort(struct cs_upload *u, const char *why)
{
	if (u == NULL)
		return;
	log_warnx("cs upload aborted job=%s rank=%" PRId32 " ckpt=%" PRIu64
	    " bytes=%" PRIu64 " reason=\"%s\"", u->job, u->rank, u->ckpt_no,
	    u->bytes, why);
	cs_upload_free(u);
}

/* Checks what ImagePut names; the reason goes to why. */
static bool
cs_upload_meta_ok(const Mpiv__ImageMeta *m, char *why, size_t whylen)
{
	char host[256], port[16];

	if (m == NULL) {
		snprintf(why, whylen, "ImagePut without metadata");
		return false;
	}
	if (!cs_store_name_ok(m->job_id)) {
		snprintf(why, whylen, "bad job id (1-%u characters of "
		    "[A-Za-z0-9._-], not starting with '.')", CS_MAX_NAME);
		return false;
	}
	if (m->rank < 0 || m->rank > CS_MAX_RANK) {
		snprintf(why, whylen, "bad rank %" PRId32, m->rank);
		return false;
	}
	if (m->ckpt_no == 0 || m->ckpt_no > CS_MAX_CKPT) {
		snprintf(why, whylen, "bad checkpoint number %" PRIu64,
		    m->ckpt_no);
		return false;
	}
	if (*m->cm != '\0' && net_split_hostport(m->cm, host, sizeof(host),
	    port, sizeof(port)) < 0) {
		snprintf(why, whylen, "bad home CM address \"%.64s\"", m->cm);
		return false;
	}
	return true;
}

/* Refuses a checkpoint number not above the current one. */
static bool
cs_upload_fresh(int rdfd, uint64_t k, char *why, size_t whylen)
{
	uint64_t cur;

	if (cs_store_current(rdfd, &cur) < 0) {
		snprintf(why, whylen, "store: cannot read the current "
		    "checkpoint: %s", strerror(errno));
		return false;
	}
	if (k <= cur) {
		snprintf(why, whylen, "stale checkpoint %" PRIu64 " (current "
		    "is %" PRIu64 ")", k, cur);
		return false;
	}
	return true;
}

struct cs_upload *
cs_upload_begin(struct cs *cs, const Mpiv__ImagePut *put, char *why,
    size_t whylen)
{
	const Mpiv__ImageMeta *m = put->meta;
	struct cs_upload *u;

	if (!cs_upload_meta_ok(m, why, whylen))
		return NULL;
	if (cs_job_ended(cs, m->job_id)) {
		/* its images were dropped: this one would only lie here */
		snprintf(why, whylen, "job %.64s has ended", m->job_id);
		return NULL;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	u->fd = -1;
	u->rdfd = -1;
	u->rank = m->rank;
	u->ckpt_no = m->ckpt_no;
	u->incarnation = m->incarnation;
	clock_gettime(CLOCK_MONOTONIC, &u->t0);
	u->metalen = protobuf_c_message_get_packed_size(&m->base);
	if ((u->job = strdup(m->job_id)) == NULL ||
	    (u->cm = strdup(m->cm)) == NULL ||
	    (u->meta = malloc(u->metalen ? u->metalen : 1)) == NULL) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	(void)protobuf_c_message_pack(&m->base, u->meta);
	if ((u->rdfd = cs_store_rank_dir(cs, u->job, u->rank, true)) < 0) {
		snprintf(why, whylen, "store: %s", strerror(errno));
		log_warn("cs cannot open dir job=%s rank=%" PRId32, u->job,
		    u->rank);
		goto fail;
	}
	if (!cs_upload_fresh(u->rdfd, u->ckpt_no, why, whylen))
		goto fail;
	if ((u->m = mpiv__image_meta__unpack(NULL, u->metalen, u->meta)) ==
	    NULL) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	if (cs_chain_check(u->rdfd, u->m, why, whylen) < 0)
		goto fail;
	if ((u->fd = cs_store_tmp_create(u->rdfd, u->ckpt_no, u->tmp,
	    sizeof(u->tmp))) < 0) {
		snprintf(why, whylen, "store: %s", strerror(errno));
		log_warn("cs cannot create a temp file job=%s rank=%" PRId32,
		    u->job, u->rank);
		goto fail;
	}
	u->sum = CKSUM_INIT;
	log_info("cs upload begins job=%s rank=%" PRId32 " ckpt=%" PRIu64
	    " incarnation=%" PRIu32 " parent=%" PRIu64, u->job, u->rank,
	    u->ckpt_no, u->incarnation, m->parent_ckpt);
	return u;

fail:
	cs_upload_free(u);
	return NULL;
}

int
cs_upload_data(struct cs *cs, struct cs_upload *u, const uint8_t *p,
    size_t n, char *why, size_t whylen)
{
	ssize_t w;

	if (n > cs->max_image - u->bytes) {
		snprintf(why, whylen, "image larger than the limit of %" PRIu64
		    " bytes", cs->max_image);
		return -1;
	}
	u->sum = cksum_update(u->sum, p, n);
	u->bytes += n;
	while (n > 0) {
		if ((w = write(u->fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(why, whylen, "store: write: %s",
			    strerror(errno));
			log_warn("cs write job=%s rank=%" PRId32, u->job,
			    u->rank);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * ImageEnd: size and checksum must match what arrived; then sync, commit,
 * tell the home CM. 0 when committed (u freed), -1 with why (u intact,
 * the caller aborts it).
 */
int
cs_upload_end(struct cs *cs, struct cs_upload *u, const Mpiv__ImageEnd *e,
    char *why, size_t whylen)
{
	struct timespec t1;
	double secs;

	if (e->bytes != u->bytes) {
		snprintf(why, whylen, "size mismatch: announced %" PRIu64
		    " bytes, received %" PRIu64, e->bytes, u->bytes);
		return -1;
	}
	if (e->checksum != u->sum) {
		snprintf(why, whylen, "checksum mismatch: announced %016"
		    PRIx64 ", computed %016" PRIx64, e->checksum, u->sum);
		return -1;
	}
	if (u->m->parent_ckpt != 0)
		srvfault_point("cs-delta");
	if (fsync(u->fd) < 0) {
		snprintf(why, whylen, "store: fsync: %s", strerror(errno));
		return -1;
	}
	/* Another upload of this rank may have committed meanwhile (and
	   pruned the parent). */
	if (!cs_upload_fresh(u->rdfd, u->ckpt_no, why, whylen) ||
	    cs_chain_check(u->rdfd, u->m, why, whylen) < 0)
		return -1;
	if (cs_store_commit(cs, u->rdfd, u->tmp, u->ckpt_no, u->meta,
	    u->metalen, u->bytes, u->sum, why, whylen) < 0)
		return -1;
	close(u->fd);
	u->fd = -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - u->t0.tv_sec) +
	    (double)(t1.tv_nsec - u->t0.tv_nsec) / 1e9;
	log_info("cs image durable job=%s rank=%" PRId32 " ckpt=%" PRIu64
	    " incarnation=%" PRIu32 " bytes=%" PRIu64 " secs=%.3f parent=%"
	    PRIu64 " chain=%" PRIu32, u->job, u->rank, u->ckpt_no,
	    u->incarnation, u->bytes, secs, u->m->parent_ckpt, u->m->chain);
	if (*u->cm != '\0')
		cs_notify_durable(cs, u->cm, u->job, u->rank, u->ckpt_no,
		    u->incarnation);
	else
		log_warnx("cs no home CM in the metadata job=%s rank=%" PRId32
		    " ckpt=%" PRIu64 ": nobody told it is durable", u->job,
		    u->rank, u->ckpt_no);
	cs_upload_free(u);
	return 0;
}
