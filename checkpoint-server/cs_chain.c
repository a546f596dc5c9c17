/*
 * cs_chain.c: incremental images in the store (docs/CHECKPOINT.md,
 * "Incremental images"). A delta checkpoint K is stored as the node sent
 * it (ckpt-K.img, a zstd'ed delta archive, node-agent/criu.h) with its
 * parent's number, the parent's digest and its own in ckpt-K.meta. An
 * upload of a delta is accepted only over a parent that is stored with
 * the digest the node names, at most CS_MAX_CHAIN deltas from a full
 * image. A download of K rebuilds the full archive: the chain's full
 * image expanded, each delta applied in turn, every step's digest
 * checked against the one its node computed from the real bytes, and
 * the result compressed into an unlinked temp file that is served like
 * a stored full image. A chain with a missing, unreadable or mismatched
 * link fails the download with the reason; wrong memory is never served.
 *
 * The rebuild runs in the server's loop (a 16 MB image with a short
 * chain takes a few tens of ms), like the downloads' disk reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../node-agent/criu.h"
#include "cksum.h"
#include "cs_priv.h"
#include "log.h"

#define CS_REBUILD_LEVEL 1	/* zstd level of a rebuilt image */

/* An unlinked read-write temp file in the rank's directory. */
static int
cs_chain_tmpfile(int rdfd)
{
	char name[64];
	int fd;

#ifdef O_TMPFILE
	fd = openat(rdfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL))
		return fd;
#endif
	if ((fd = cs_store_tmp_create(rdfd, 0, name, sizeof(name))) < 0)
		return -1;
	(void)unlinkat(rdfd, name, 0);
	/* tmp_create opened it write-only: reopen through /proc. */
	{
		char path[64];
		int rw;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		rw = open(path, O_RDWR | O_CLOEXEC);
		close(fd);
		return rw;
	}
}

int
cs_chain_check(int rdfd, const Mpiv__ImageMeta *m, char *why, size_t whylen)
{
	Mpiv__ImageMeta *pm = NULL;
	uint64_t bytes, sum;
	char what[128];
	int fd;

	if (m->parent_ckpt == 0)
		return 0;
	if (m->parent_ckpt >= m->ckpt_no || m->chain == 0 ||
	    m->chain > CS_MAX_CHAIN || m->content_digest == 0) {
		snprintf(why, whylen, "bad incremental image (parent %" PRIu64
		    ", chain %" PRIu32 ", max %u, digest %s)", m->parent_ckpt,
		    m->chain, CS_MAX_CHAIN, m->content_digest ? "set" :
		    "missing");
		return -1;
	}
	if ((fd = cs_store_open_image(rdfd, m->parent_ckpt, &pm, &bytes, &sum,
	    what, sizeof(what))) < 0) {
		snprintf(why, whylen, "parent of incremental image: %s", what);
		return -1;
	}
	close(fd);
	if (pm->content_digest != m->parent_digest ||
	    pm->chain + 1 != m->chain) {
		snprintf(why, whylen, "parent checkpoint %" PRIu64 " stored here "
		    "is not the one the incremental image names (digest %016"
		    PRIx64 " chain %" PRIu32 ", named %016" PRIx64 " chain %"
		    PRIu32 ")", m->parent_ckpt, pm->content_digest,
		    pm->chain, m->parent_digest, m->chain - 1);
		mpiv__image_meta__free_unpacked(pm, NULL);
		return -1;
	}
	mpiv__image_meta__free_unpacked(pm, NULL);
	return 0;
}

/* The checksum of a stored image file against its record. */
static int
cs_chain_verify_sum(int fd, uint64_t bytes, uint64_t sum, uint8_t *buf)
{
	uint64_t off = 0, s = CKSUM_INIT;
	ssize_t r;

	while (off < bytes) {
		size_t want = bytes - off < CS_CHUNK ? (size_t)(bytes - off) :
		    CS_CHUNK;
		r = pread(fd, buf, want, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		s = cksum_update(s, buf, (size_t)r);
		off += (uint64_t)r;
	}
	return s == sum ? 0 : -1;
}

int
cs_chain_rebuild(struct cs *cs, int rdfd, uint64_t k, uint64_t *bytes,
    uint64_t *sum, char *why, size_t whylen)
{
	uint64_t ks[CS_MAX_CHAIN + 1], digests[CS_MAX_CHAIN + 1], b, s, dig;
	Mpiv__ImageMeta *m = NULL;
	uint64_t want_parent_digest = 0;
	struct timespec t0, t1;
	char what[160];
	int n = 0, raw = -1, next = -1, zfd = -1, out = -1, i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Walk from k to the full image, each link checked. */
	for (uint64_t cur = k;;) {
		int fd = cs_store_open_image(rdfd, cur, &m, &b, &s, what,
		    sizeof(what));

		if (fd < 0) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": %s", k, what);
			goto fail;
		}
		close(fd);
		if (n > 0 && m->content_digest != want_parent_digest) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": checkpoint %" PRIu64 " is not the parent its "
			    "child names (digest)", k, cur);
			goto fail;
		}
		ks[n] = cur;
		digests[n] = m->content_digest;
		n++;
		if (m->parent_ckpt == 0)
			break;
		if (n > (int)CS_MAX_CHAIN || m->parent_ckpt >= cur) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": bad link %" PRIu64 " -> %" PRIu64, k, cur,
			    m->parent_ckpt);
			goto fail;
		}
		want_parent_digest = m->parent_digest;
		cur = m->parent_ckpt;
		mpiv__image_meta__free_unpacked(m, NULL);
		m = NULL;
	}
	mpiv__image_meta__free_unpacked(m, NULL);
	m = NULL;
	/* From the full image up. */
	for (i = n - 1; i >= 0; i--) {
		Mpiv__ImageMeta *mm;

		if ((zfd = cs_store_open_image(rdfd, ks[i], &mm, &b, &s, what,
		    sizeof(what))) < 0) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": %s", k, what);
			goto fail;
		}
		mpiv__image_meta__free_unpacked(mm, NULL);
		if (cs_chain_verify_sum(zfd, b, s, cs->chunk) < 0) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": checkpoint %" PRIu64 " changed on disk "
			    "(checksum)", k, ks[i]);
			goto fail;
		}
		if ((next = cs_chain_tmpfile(rdfd)) < 0) {
			snprintf(why, whylen, "store: temp file: %s",
			    strerror(errno));
			goto fail;
		}
		if ((i == n - 1 ? criu_expand_full(zfd, next, 0, &dig, what,
		    sizeof(what)) : criu_apply_delta(raw, zfd, next, 0, &dig,
		    what, sizeof(what))) < 0) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": checkpoint %" PRIu64 ": %s", k, ks[i], what);
			goto fail;
		}
		if (digests[i] != 0 && dig != digests[i]) {
			snprintf(why, whylen, "chain of checkpoint %" PRIu64
			    ": checkpoint %" PRIu64 " rebuilt with digest %016"
			    PRIx64 ", its node computed %016" PRIx64, k, ks[i],
			    dig, digests[i]);
			goto fail;
		}
		close(zfd);
		zfd = -1;
		if (raw >= 0)
			close(raw);
		raw = next;
		next = -1;
	}
	if ((out = cs_chain_tmpfile(rdfd)) < 0) {
		snprintf(why, whylen, "store: temp file: %s", strerror(errno));
		goto fail;
	}
	if (criu_compress_fd(raw, out, CS_REBUILD_LEVEL, bytes, sum, what,
	    sizeof(what)) < 0) {
		snprintf(why, whylen, "rebuilding checkpoint %" PRIu64 ": %s",
		    k, what);
		goto fail;
	}
	close(raw);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_info("cs image rebuilt ckpt=%" PRIu64 " chain=%d bytes=%" PRIu64
	    " secs=%.3f", k, n - 1, *bytes, (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return out;

fail:
	if (m != NULL)
		mpiv__image_meta__free_unpacked(m, NULL);
	if (raw >= 0)
		close(raw);
	if (next >= 0)
		close(next);
	if (zfd >= 0)
		close(zfd);
	if (out >= 0)
		close(out);
	return -1;
}
