/*
 * criu_img.c: the image archive (format in criu.h): a CRIU dump directory
 * packed into one zstd stream for the checkpoint server, and such a
 * stream unpacked, checked as it arrives, into a directory for a restore.
 * Running CRIU itself is criu.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <sys/stat.h>

#include "criu.h"
#include "log.h"

#define CRIU_ARCH_MAGIC CRIU_ARCH_MAGIC_STR
#define CRIU_MAX_NAME 255	/* bytes of an entry's name */
#define CRIU_HDR_LEN 12		/* u32 name length, u64 size */

int
criu_zstd_level(void)
{
	const char *s = getenv("MPIV_ZSTD_LEVEL");
	long v;

	if (s == NULL || *s == '\0')
		return 3;
	v = strtol(s, NULL, 10);
	return v >= 1 && v <= 19 ? (int)v : 3;
}

static void
criu_put_be(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t
criu_get_be(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

struct criu_packer {
	ZSTD_CStream *zc;
	unsigned char *obuf;
	size_t osz;
	int (*out)(void *ctx, const void *buf, size_t len);
	void *ctx;
	uint64_t raw;
	int out_failed;
};

/* Compresses len bytes (or, with end, finishes the frame) and hands
 * every full output buffer to out. */
static int
criu_pack_write(struct criu_packer *p, const void *buf, size_t len, int end)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	size_t rem;

	p->raw += len;
	for (;;) {
		ZSTD_outBuffer ob = { p->obuf, p->osz, 0 };

		rem = ZSTD_compressStream2(p->zc, &ob, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(rem)) {
			log_warnx("criu pack: zstd: %s", ZSTD_getErrorName(rem));
			errno = EIO;
			return -1;
		}
		if (ob.pos > 0 && p->out(p->ctx, p->obuf, ob.pos) < 0) {
			p->out_failed = 1;
			return -1;
		}
		if (end ? rem == 0 : in.pos == in.size)
			return 0;
	}
}

static int
criu_pack_filter(const struct dirent *d)
{
	size_t l = strlen(d->d_name);

	if (d->d_name[0] == '.')
		return 0;
	return !(l >= 4 && strcmp(d->d_name + l - 4, ".log") == 0);
}

int
criu_pack_dir(const char *dir, int level,
    int (*out)(void *ctx, const void *buf, size_t len), void *ctx,
    uint64_t *raw_bytes)
{
	struct criu_packer p = { 0 };
	struct dirent **names = NULL;
	unsigned char hdr[CRIU_HDR_LEN], *buf = NULL;
	int nn, i, dfd = -1, ret = -1, files = 0, e = 0;

	p.out = out;
	p.ctx = ctx;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		log_warn("criu pack: %s", dir);
		return -1;
	}
	if ((nn = scandir(dir, &names, criu_pack_filter, alphasort)) < 0) {
		log_warn("criu pack: scandir %s", dir);
		close(dfd);
		return -1;
	}
	p.zc = ZSTD_createCStream();
	p.osz = ZSTD_CStreamOutSize();
	p.obuf = malloc(p.osz);
	buf = malloc(1 << 16);
	if (p.zc == NULL || p.obuf == NULL || buf == NULL) {
		errno = ENOMEM;
		goto out_free;
	}
	ZSTD_CCtx_setParameter(p.zc, ZSTD_c_compressionLevel, level);
	/* A frame checksum: corruption inside file bytes is caught too. */
	ZSTD_CCtx_setParameter(p.zc, ZSTD_c_checksumFlag, 1);
	if (criu_pack_write(&p, CRIU_ARCH_MAGIC, 8, 0) < 0)
		goto out_free;
	for (i = 0; i < nn; i++) {
		const char *name = names[i]->d_name;
		size_t nl = strlen(name);
		struct stat sb;
		uint64_t left;
		int fd;

		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			log_warn("criu pack: %s/%s", dir, name);
			goto out_free;
		}
		if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || nl > CRIU_MAX_NAME) {
			close(fd);
			continue;	/* only plain files are part of an image */
		}
		criu_put_be(hdr, nl, 4);
		criu_put_be(hdr + 4, (uint64_t)sb.st_size, 8);
		if (criu_pack_write(&p, hdr, sizeof(hdr), 0) < 0 ||
		    criu_pack_write(&p, name, nl, 0) < 0) {
			close(fd);
			goto out_free;
		}
		for (left = (uint64_t)sb.st_size; left > 0;) {
			size_t want = left < (1 << 16) ? (size_t)left : (1 << 16);
			ssize_t r = read(fd, buf, want);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				/* The file shrank under us: the header lied. */
				log_warnx("criu pack: %s/%s changed while packed", dir, name);
				close(fd);
				errno = EIO;
				goto out_free;
			}
			if (criu_pack_write(&p, buf, (size_t)r, 0) < 0) {
				close(fd);
				goto out_free;
			}
			left -= (uint64_t)r;
		}
		close(fd);
		files++;
	}
	criu_put_be(hdr, 0, 4);
	criu_put_be(hdr + 4, (uint64_t)files, 8);
	if (criu_pack_write(&p, hdr, sizeof(hdr), 1) < 0)
		goto out_free;
	if (raw_bytes != NULL)
		*raw_bytes = p.raw;
	ret = 0;
out_free:
	e = errno;
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(buf);
	free(p.obuf);
	ZSTD_freeCStream(p.zc);
	close(dfd);
	errno = e;
	return ret;
}

enum criu_ustate {
	CRIU_U_MAGIC,		/* reading the 8-byte magic */
	CRIU_U_HDR,		/* reading an entry header */
	CRIU_U_NAME,		/* reading the name */
	CRIU_U_DATA,		/* copying file bytes */
	CRIU_U_DONE,		/* end marker seen */
	CRIU_U_ERROR,
};

struct criu_unpack {
	ZSTD_DStream *zd;
	unsigned char *obuf;
	size_t osz;
	int dfd;
	int fd;			/* file being written, or -1 */
	enum criu_ustate state;
	unsigned char hdr[CRIU_HDR_LEN];
	size_t have;		/* bytes of magic/hdr/name gathered */
	uint32_t name_len;
	char name[CRIU_MAX_NAME + 1];
	uint64_t left;		/* data bytes still due for this file */
	uint64_t files;
	uint64_t total;		/* file bytes written so far */
	uint64_t raw;
	struct criu_dig dg;	/* of the decoded archive */
	uint64_t max_entry, max_total;
	size_t zret;		/* last ZSTD_decompressStream hint: 0 = frame ended */
	char err[256];
};

static int
criu_unpack_fail(struct criu_unpack *u, const char *fmt, ...)
{
	va_list ap;

	if (u->state != CRIU_U_ERROR) {
		va_start(ap, fmt);
		vsnprintf(u->err, sizeof(u->err), fmt, ap);
		va_end(ap);
		u->state = CRIU_U_ERROR;
	}
	if (u->fd >= 0) {
		close(u->fd);
		u->fd = -1;
	}
	errno = EINVAL;
	return -1;
}

struct criu_unpack *
criu_unpack_stream_new(const char *dir, uint64_t max_entry, uint64_t max_total)
{
	struct criu_unpack *u = calloc(1, sizeof(*u));

	if (u == NULL)
		return NULL;
	u->fd = -1;
	u->max_entry = max_entry ? max_entry : CRIU_MAX_ENTRY;
	u->max_total = max_total ? max_total : CRIU_MAX_TOTAL;
	u->zret = 1;
	u->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	u->zd = ZSTD_createDStream();
	u->osz = ZSTD_DStreamOutSize();
	u->obuf = malloc(u->osz);
	if (u->dfd < 0 || u->zd == NULL || u->obuf == NULL) {
		int e = u->dfd < 0 ? errno : ENOMEM;
		criu_unpack_stream_free(u);
		errno = e;
		return NULL;
	}
	ZSTD_initDStream(u->zd);
	criu_dig_init(&u->dg, CRIU_DIG_SEED);
	return u;
}

/* A name is one plain component: no '/', not "." or "..", no NUL. */
static int
criu_name_ok(const char *name, size_t len)
{
	if (len == 0 || memchr(name, '/', len) != NULL || memchr(name, '\0', len) != NULL)
		return 0;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	return 1;
}

/* Parses len bytes of archive (decompressed). Each state consumes what
 * it needs and advances p/len itself. */
static int
criu_unpack_raw(struct criu_unpack *u, const unsigned char *p, size_t len)
{
	size_t take;
	ssize_t w;

	while (len > 0) {
		switch (u->state) {
		case CRIU_U_MAGIC:
			take = 8 - u->have < len ? 8 - u->have : len;
			if (memcmp(p, &CRIU_ARCH_MAGIC[u->have], take) != 0)
				return criu_unpack_fail(u, "not an mpiv image archive (bad magic)");
			u->have += take;
			p += take;
			len -= take;
			if (u->have == 8) {
				u->have = 0;
				u->state = CRIU_U_HDR;
			}
			break;
		case CRIU_U_HDR:
			take = CRIU_HDR_LEN - u->have < len ? CRIU_HDR_LEN - u->have : len;
			memcpy(u->hdr + u->have, p, take);
			u->have += take;
			p += take;
			len -= take;
			if (u->have < CRIU_HDR_LEN)
				break;
			u->have = 0;
			u->name_len = (uint32_t)criu_get_be(u->hdr, 4);
			u->left = criu_get_be(u->hdr + 4, 8);
			if (u->name_len == 0) {
				if (u->left != u->files)
					return criu_unpack_fail(u, "archive end says %llu files, "
					    "got %llu", (unsigned long long)u->left,
					    (unsigned long long)u->files);
				u->state = CRIU_U_DONE;
				break;
			}
			if (u->name_len > CRIU_MAX_NAME)
				return criu_unpack_fail(u, "entry name of %u bytes (max %d)",
				    u->name_len, CRIU_MAX_NAME);
			if (u->left > u->max_entry)
				return criu_unpack_fail(u, "entry of %llu bytes exceeds the "
				    "limit of %llu", (unsigned long long)u->left,
				    (unsigned long long)u->max_entry);
			if (u->left > u->max_total - u->total)
				return criu_unpack_fail(u, "image exceeds the limit of %llu "
				    "bytes", (unsigned long long)u->max_total);
			u->state = CRIU_U_NAME;
			break;
		case CRIU_U_NAME:
			take = u->name_len - u->have < len ? u->name_len - u->have : len;
			memcpy(u->name + u->have, p, take);
			u->have += take;
			p += take;
			len -= take;
			if (u->have < u->name_len)
				break;
			u->have = 0;
			u->name[u->name_len] = '\0';
			if (!criu_name_ok(u->name, u->name_len))
				return criu_unpack_fail(u, "unsafe entry name rejected "
				    "(path traversal?)");
			u->fd = openat(u->dfd, u->name, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
			if (u->fd < 0)
				return criu_unpack_fail(u, "cannot create %s: %s", u->name,
				    strerror(errno));
			u->state = CRIU_U_DATA;
			break;
		case CRIU_U_DATA:
			take = u->left < len ? (size_t)u->left : len;
			w = take > 0 ? write(u->fd, p, take) : 0;
			if (w < 0 && errno == EINTR)
				break;
			if (take > 0 && w <= 0)
				return criu_unpack_fail(u, "write %s: %s", u->name,
				    w < 0 ? strerror(errno) : "short write");
			p += w;
			len -= (size_t)w;
			u->left -= (uint64_t)w;
			u->total += (uint64_t)w;
			break;
		case CRIU_U_DONE:
			return criu_unpack_fail(u, "trailing data after the archive end");
		case CRIU_U_ERROR:
			errno = EINVAL;
			return -1;
		}
		/* A file is complete once its last byte is in (or it is empty). */
		if (u->state == CRIU_U_DATA && u->left == 0) {
			close(u->fd);
			u->fd = -1;
			u->files++;
			u->state = CRIU_U_HDR;
		}
	}
	/* An empty file whose name ended exactly at this chunk's end. */
	if (u->state == CRIU_U_DATA && u->left == 0) {
		close(u->fd);
		u->fd = -1;
		u->files++;
		u->state = CRIU_U_HDR;
	}
	return 0;
}

int
criu_unpack_stream_feed(struct criu_unpack *u, const void *buf, size_t len)
{
	ZSTD_inBuffer in = { buf, len, 0 };

	if (u->state == CRIU_U_ERROR) {
		errno = EINVAL;
		return -1;
	}
	while (in.pos < in.size) {
		ZSTD_outBuffer ob = { u->obuf, u->osz, 0 };
		size_t r = ZSTD_decompressStream(u->zd, &ob, &in);

		if (ZSTD_isError(r))
			return criu_unpack_fail(u, "corrupt image stream (zstd: %s)",
			    ZSTD_getErrorName(r));
		u->zret = r;
		u->raw += ob.pos;
		criu_dig_update(&u->dg, u->obuf, ob.pos);
		if (ob.pos > 0 && criu_unpack_raw(u, u->obuf, ob.pos) < 0)
			return -1;
		if (ob.pos == 0 && in.pos == in.size)
			break;
	}
	/* Flush what zstd still holds for the input given so far. */
	for (;;) {
		ZSTD_outBuffer ob = { u->obuf, u->osz, 0 };
		size_t r = ZSTD_decompressStream(u->zd, &ob, &in);

		if (ZSTD_isError(r))
			return criu_unpack_fail(u, "corrupt image stream (zstd: %s)",
			    ZSTD_getErrorName(r));
		/* With no input left and nothing out, r is the hint for a next
		 * frame, not the state of this one: keep the last real one. */
		if (ob.pos == 0)
			break;
		u->zret = r;
		u->raw += ob.pos;
		criu_dig_update(&u->dg, u->obuf, ob.pos);
		if (criu_unpack_raw(u, u->obuf, ob.pos) < 0)
			return -1;
	}
	return 0;
}

int
criu_unpack_stream_finish(struct criu_unpack *u)
{
	if (u->state == CRIU_U_ERROR) {
		errno = EINVAL;
		return -1;
	}
	if (u->state != CRIU_U_DONE || u->zret != 0)
		return criu_unpack_fail(u, "truncated image stream (%llu files, "
		    "%llu bytes in)", (unsigned long long)u->files,
		    (unsigned long long)u->raw);
	return 0;
}

const char *
criu_unpack_stream_error(const struct criu_unpack *u)
{
	return u->state == CRIU_U_ERROR ? u->err : "";
}

uint64_t
criu_unpack_stream_raw_bytes(const struct criu_unpack *u)
{
	return u->raw;
}

uint64_t
criu_unpack_stream_digest(const struct criu_unpack *u)
{
	return criu_dig_final(&u->dg);
}

void
criu_unpack_stream_free(struct criu_unpack *u)
{
	if (u == NULL)
		return;
	if (u->fd >= 0)
		close(u->fd);
	if (u->dfd >= 0)
		close(u->dfd);
	ZSTD_freeDStream(u->zd);
	free(u->obuf);
	free(u);
}
