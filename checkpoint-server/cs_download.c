/*
 * cs_download.c: one image leaving (ImageGet -> ImageInfo, ImageData...,
 * ImageEnd). Chunks of CS_CHUNK bytes are read from the open image only
 * while the connection's write queue holds less than one chunk, so a slow
 * reader costs about two chunks of memory. ImageEnd carries the size and
 * checksum recorded at upload: a disk that changed the bytes since is
 * caught by the reader (and logged here).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cksum.h"
#include "cs_priv.h"
#include "log.h"

struct cs_download {
	int fd;
	char job[CS_MAX_NAME + 1];
	int32_t rank;
	uint64_t ckpt_no;
	uint64_t size;		/* recorded at upload */
	uint64_t stored_sum;
	uint64_t sent;
	uint64_t sum;		/* of the bytes read back */
};

void
cs_download_free(struct cs_download *d)
{
	if (d == NULL)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

static void
cs_download_not_found(struct conn *c, const char *why)
{
	Mpiv__ImageInfo info = MPIV__IMAGE_INFO__INIT;

	info.found = false;
	info.error = (char *)why;
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_IMAGE_INFO, &info.base, NULL, 0);
}

struct cs_download *
cs_download_begin(struct cs *cs, struct conn *c, const Mpiv__ImageGet *g)
{
	Mpiv__ImageInfo info = MPIV__IMAGE_INFO__INIT;
	Mpiv__ImageMeta *meta = NULL;
	struct cs_download *d = NULL;
	char why[256], what[64];
	uint64_t k = g->ckpt_no, bytes, sum;
	int rdfd = -1, fd = -1;

	if (!cs_store_name_ok(g->job_id) || g->rank < 0 ||
	    g->rank > CS_MAX_RANK) {
		snprintf(why, sizeof(why), "bad job id or rank");
		goto not_found;
	}
	if ((rdfd = cs_store_rank_dir(cs, g->job_id, g->rank, false)) < 0) {
		snprintf(why, sizeof(why), "no checkpoint of job %s rank %"
		    PRId32 "%s", g->job_id, g->rank,
		    errno == ENOENT ? "" : " (store unreadable)");
		goto not_found;
	}
	if (k == 0 && cs_store_current(rdfd, &k) < 0) {
		snprintf(why, sizeof(why), "store: cannot read the current "
		    "checkpoint of job %s rank %" PRId32, g->job_id, g->rank);
		goto not_found;
	}
	if (k == 0) {
		snprintf(why, sizeof(why), "no checkpoint of job %s rank %"
		    PRId32, g->job_id, g->rank);
		goto not_found;
	}
	if ((fd = cs_store_open_image(rdfd, k, &meta, &bytes, &sum, what,
	    sizeof(what))) < 0) {
		snprintf(why, sizeof(why), "job %s rank %" PRId32 ": %s",
		    g->job_id, g->rank, what);
		goto not_found;
	}
	if (meta->parent_ckpt != 0) {
		/* Incremental: serve the full image rebuilt from its chain. */
		close(fd);
		if ((fd = cs_chain_rebuild(cs, rdfd, k, &bytes, &sum, why,
		    sizeof(why))) < 0) {
			log_warnx("cs cannot rebuild job=%s rank=%" PRId32
			    " ckpt=%" PRIu64 ": %s", g->job_id, g->rank, k, why);
			goto not_found;
		}
	}
	close(rdfd);
	rdfd = -1;
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		snprintf(why, sizeof(why), "out of memory");
		goto not_found;
	}
	d->fd = fd;
	snprintf(d->job, sizeof(d->job), "%s", g->job_id);
	d->rank = g->rank;
	d->ckpt_no = k;
	d->size = bytes;
	d->stored_sum = sum;
	d->sum = CKSUM_INIT;
	info.found = true;
	info.meta = meta;
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_IMAGE_INFO, &info.base, NULL, 0);
	mpiv__image_meta__free_unpacked(meta, NULL);
	log_info("cs download begins job=%s rank=%" PRId32 " ckpt=%" PRIu64
	    " bytes=%" PRIu64 " peer=%s", d->job, d->rank, k, bytes,
	    conn_peer(c));
	return d;

not_found:
	log_info("cs download refused peer=%s reason=\"%s\"", conn_peer(c),
	    why);
	if (meta != NULL)
		mpiv__image_meta__free_unpacked(meta, NULL);
	if (fd >= 0)
		close(fd);
	if (rdfd >= 0)
		close(rdfd);
	cs_download_not_found(c, why);
	return NULL;
}

/* The last frame: the recorded size and checksum. */
static void
cs_download_end(struct cs_download *d, struct conn *c)
{
	Mpiv__ImageEnd e = MPIV__IMAGE_END__INIT;

	if (d->sum != d->stored_sum)
		log_errorx("cs image changed on disk job=%s rank=%" PRId32
		    " ckpt=%" PRIu64 " recorded=%016" PRIx64 " read=%016"
		    PRIx64, d->job, d->rank, d->ckpt_no, d->stored_sum,
		    d->sum);
	e.bytes = d->size;
	e.checksum = d->stored_sum;
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_IMAGE_END, &e.base, NULL, 0);
	log_info("cs download done job=%s rank=%" PRId32 " ckpt=%" PRIu64
	    " bytes=%" PRIu64, d->job, d->rank, d->ckpt_no, d->sent);
}

bool
cs_download_pump(struct cs *cs, struct cs_download *d, struct conn *c)
{
	Mpiv__ImageData data = MPIV__IMAGE_DATA__INIT;
	size_t want;
	ssize_t n;

	while (conn_queued(c) < CS_CHUNK && !conn_is_closing(c)) {
		if (d->sent == d->size) {
			cs_download_end(d, c);
			return true;
		}
		want = d->size - d->sent < CS_CHUNK ?
		    (size_t)(d->size - d->sent) : CS_CHUNK;
		n = pread(d->fd, cs->chunk, want, (off_t)d->sent);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warnx("cs download job=%s rank=%" PRId32 " ckpt=%"
			    PRIu64 ": image unreadable at offset %" PRIu64
			    " (%s)", d->job, d->rank, d->ckpt_no, d->sent,
			    n < 0 ? strerror(errno) : "short file");
			conn_close(c, "image unreadable", false);
			return false;
		}
		d->sum = cksum_update(d->sum, cs->chunk, (size_t)n);
		d->sent += (uint64_t)n;
		if (conn_send(c, MPIV__MSG_TYPE__MSG_IMAGE_DATA, &data.base,
		    cs->chunk, (uint32_t)n) < 0) {
			conn_close(c, "cannot queue image data", false);
			return false;
		}
	}
	return false;
}
