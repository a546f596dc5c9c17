/*
 * criu_delta.c: incremental images (format in criu.h). The node agent
 * scans a dump directory (criu_scan_dir: the hash of every block and the
 * digest of the full archive), looks its blocks up in the parent's
 * (criu_dedup_*) and packs only the new ones (criu_pack_delta). The
 * checkpoint server rebuilds a full archive from a chain of them
 * (criu_expand_full, criu_apply_delta, criu_compress_fd) and checks the
 * digest the node computed from the real bytes.
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

#include "cksum.h"
#include "criu.h"
#include "log.h"

#define CD_P1 0x9e3779b185ebca87ull
#define CD_P2 0xc2b2ae3d27d4eb4full
#define CD_P3 0x165667b19e3779f9ull
#define CD_P4 0x85ebca77c2b2ae63ull
#define CD_SEED_DIGEST CRIU_DIG_SEED
#define CD_SEED_BLOCK  0x6d706976626c6b31ull	/* "mpivblk1" */
#define CD_HDR_LEN 12
#define CD_IO (1u << 16)

static inline uint64_t
cd_rotl(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

static inline uint64_t
cd_round(uint64_t v, uint64_t x)
{
	return cd_rotl(v + x * CD_P2, 31) * CD_P1;
}

static inline uint64_t
cd_load(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t
cd_avalanche(uint64_t h)
{
	h ^= h >> 33;
	h *= CD_P2;
	h ^= h >> 29;
	h *= CD_P3;
	h ^= h >> 32;
	return h;
}

static void
cd_put_be(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t
cd_get_be(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static void
cd_seterr(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || n == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

/* ---------------- hashing ---------------- */

static void
cd_lanes_init(uint64_t v[4], uint64_t seed)
{
	v[0] = seed + CD_P1 + CD_P2;
	v[1] = seed + CD_P2;
	v[2] = seed;
	v[3] = seed - CD_P1;
}

/* Folds whole 32-byte stripes of p into the lanes. */
static void
cd_stripes(uint64_t v[4], const unsigned char *p, size_t stripes)
{
	uint64_t a = v[0], b = v[1], c = v[2], d = v[3];

	for (size_t i = 0; i < stripes; i++, p += 32) {
		a = cd_round(a, cd_load(p));
		b = cd_round(b, cd_load(p + 8));
		c = cd_round(c, cd_load(p + 16));
		d = cd_round(d, cd_load(p + 24));
	}
	v[0] = a;
	v[1] = b;
	v[2] = c;
	v[3] = d;
}

static uint64_t
cd_merge(const uint64_t v[4], uint64_t total, const unsigned char *tail,
    size_t n)
{
	uint64_t h = cd_rotl(v[0], 1) + cd_rotl(v[1], 7) + cd_rotl(v[2], 12) +
	    cd_rotl(v[3], 18);

	for (int i = 0; i < 4; i++)
		h = (h ^ cd_round(0, v[i])) * CD_P1 + CD_P4;
	h += total;
	for (; n >= 8; n -= 8, tail += 8)
		h = cd_rotl(h ^ cd_round(0, cd_load(tail)), 27) * CD_P1 + CD_P4;
	for (; n > 0; n--, tail++)
		h = cd_rotl(h ^ (*tail * CD_P3), 11) * CD_P1;
	return cd_avalanche(h);
}

void
criu_dig_init(struct criu_dig *d, uint64_t seed)
{
	memset(d, 0, sizeof(*d));
	cd_lanes_init(d->v, seed);
}

void
criu_dig_update(struct criu_dig *d, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t take;

	d->total += len;
	if (d->n > 0) {
		take = 32 - d->n < len ? 32 - d->n : len;
		memcpy(d->buf + d->n, p, take);
		d->n += take;
		p += take;
		len -= take;
		if (d->n < 32)
			return;
		cd_stripes(d->v, d->buf, 1);
		d->n = 0;
	}
	cd_stripes(d->v, p, len / 32);
	p += len / 32 * 32;
	len %= 32;
	memcpy(d->buf, p, len);
	d->n = len;
}

uint64_t
criu_dig_final(const struct criu_dig *d)
{
	return cd_merge(d->v, d->total, d->buf, d->n);
}

void
criu_block_hash(const void *p, size_t len, struct criu_bhash *h)
{
	uint64_t v[4], w[4];

	cd_lanes_init(v, CD_SEED_BLOCK);
	cd_stripes(v, p, len / 32);
	h->a = cd_merge(v, len, (const unsigned char *)p + len / 32 * 32,
	    len % 32);
	/* A second merge of the same lanes, in another order and seed. */
	w[0] = v[3] ^ CD_P4;
	w[1] = v[2] + CD_P3;
	w[2] = v[1] ^ CD_P2;
	w[3] = v[0] + CD_P1;
	h->b = cd_merge(w, len ^ CD_P3, (const unsigned char *)p + len / 32 *
	    32, len % 32);
	if (h->a == 0 && h->b == 0)
		h->a = 1;
}

/* ---------------- the node: scan, dedup, pack ---------------- */

/* The same selection and order as criu_pack_dir (criu_img.c). */
static int
cd_filter(const struct dirent *d)
{
	size_t l = strlen(d->d_name);

	if (d->d_name[0] == '.')
		return 0;
	return !(l >= 4 && strcmp(d->d_name + l - 4, ".log") == 0);
}

/* Opens entry name of dfd if it is part of an archive: fd and size, or
 * -1 (skip it: not a plain file, name too long) with errno 0, or -1 with
 * errno on a real error. */
static int
cd_open_entry(int dfd, const char *name, uint64_t *size)
{
	struct stat sb;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || strlen(name) > 255) {
		close(fd);
		errno = 0;
		return -1;
	}
	*size = (uint64_t)sb.st_size;
	return fd;
}

static int
cd_read_full(int fd, void *buf, size_t n)
{
	unsigned char *p = buf;
	ssize_t r;

	while (n > 0) {
		r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int
criu_scan_dir(const char *dir, struct criu_scan *s)
{
	struct dirent **names = NULL;
	struct criu_dig dg;
	unsigned char hdr[CD_HDR_LEN], *buf = NULL;
	uint64_t files = 0, cap = 0;
	int nn, dfd, ret = -1, e;

	memset(s, 0, sizeof(*s));
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if ((nn = scandir(dir, &names, cd_filter, alphasort)) < 0) {
		close(dfd);
		return -1;
	}
	if ((buf = malloc(CD_IO)) == NULL)
		goto out;
	criu_dig_init(&dg, CD_SEED_DIGEST);
	criu_dig_update(&dg, CRIU_ARCH_MAGIC_STR, 8);
	s->raw_bytes = 8;
	for (int i = 0; i < nn; i++) {
		const char *name = names[i]->d_name;
		uint64_t size, left, nb;
		int fd = cd_open_entry(dfd, name, &size);

		if (fd < 0) {
			if (errno == 0)
				continue;
			goto out;
		}
		nb = (size + CRIU_BLOCK - 1) / CRIU_BLOCK;
		if (s->nblocks + nb > cap) {
			struct criu_bhash *nv;
			cap = (s->nblocks + nb) * 2 + 64;
			if ((nv = realloc(s->blocks, cap * sizeof(*nv))) == NULL) {
				close(fd);
				goto out;
			}
			s->blocks = nv;
		}
		cd_put_be(hdr, strlen(name), 4);
		cd_put_be(hdr + 4, size, 8);
		criu_dig_update(&dg, hdr, sizeof(hdr));
		criu_dig_update(&dg, name, strlen(name));
		s->raw_bytes += sizeof(hdr) + strlen(name) + size;
		for (left = size; left > 0;) {
			size_t want = left < CD_IO ? (size_t)left : CD_IO;

			if (cd_read_full(fd, buf, want) < 0) {
				close(fd);
				goto out;
			}
			criu_dig_update(&dg, buf, want);
			for (size_t off = 0; off < want; off += CRIU_BLOCK) {
				struct criu_bhash *h = &s->blocks[s->nblocks++];
				if (want - off >= CRIU_BLOCK)
					criu_block_hash(buf + off, CRIU_BLOCK, h);
				else
					h->a = h->b = 0;	/* a short tail */
			}
			left -= want;
		}
		close(fd);
		files++;
	}
	cd_put_be(hdr, 0, 4);
	cd_put_be(hdr + 4, files, 8);
	criu_dig_update(&dg, hdr, sizeof(hdr));
	s->raw_bytes += sizeof(hdr);
	s->digest = criu_dig_final(&dg);
	ret = 0;
out:
	e = errno;
	for (int i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(buf);
	close(dfd);
	if (ret < 0) {
		criu_scan_free(s);
		errno = e ? e : EIO;
	}
	return ret;
}

void
criu_scan_free(struct criu_scan *s)
{
	free(s->blocks);
	memset(s, 0, sizeof(*s));
}

/* Open addressing over the parent's full blocks: slot = block number + 1. */
struct criu_dedup {
	const struct criu_bhash *blocks;
	uint64_t n;
	uint64_t mask;
	uint32_t *slot;
};

struct criu_dedup *
criu_dedup_new(const struct criu_bhash *blocks, uint64_t n)
{
	struct criu_dedup *d;
	uint64_t size = 64;

	if (n >= UINT32_MAX / 4) {
		errno = EFBIG;
		return NULL;
	}
	while (size < n * 2)
		size <<= 1;
	if ((d = calloc(1, sizeof(*d))) == NULL ||
	    (d->slot = calloc(size, sizeof(*d->slot))) == NULL) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->blocks = blocks;
	d->n = n;
	d->mask = size - 1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t j;

		if (blocks[i].a == 0 && blocks[i].b == 0)
			continue;
		for (j = blocks[i].a & d->mask; d->slot[j] != 0;
		    j = (j + 1) & d->mask) {
			const struct criu_bhash *o = &blocks[d->slot[j] - 1];
			if (o->a == blocks[i].a && o->b == blocks[i].b)
				break;	/* the same bytes twice: keep the first */
		}
		if (d->slot[j] == 0)
			d->slot[j] = (uint32_t)(i + 1);
	}
	return d;
}

void
criu_dedup_free(struct criu_dedup *d)
{
	if (d == NULL)
		return;
	free(d->slot);
	free(d);
}

int64_t
criu_dedup_find(const struct criu_dedup *d, const struct criu_bhash *h)
{
	if (d == NULL || (h->a == 0 && h->b == 0))
		return -1;
	for (uint64_t j = h->a & d->mask; d->slot[j] != 0;
	    j = (j + 1) & d->mask) {
		const struct criu_bhash *o = &d->blocks[d->slot[j] - 1];
		if (o->a == h->a && o->b == h->b)
			return (int64_t)d->slot[j] - 1;
	}
	return -1;
}

uint64_t
criu_dedup_count(const struct criu_dedup *d, const struct criu_scan *s)
{
	uint64_t c = 0;

	for (uint64_t i = 0; i < s->nblocks; i++)
		c += criu_dedup_find(d, &s->blocks[i]) >= 0;
	return c;
}

/* A zstd stream to a callback (criu_img.c has the same for full ones). */
struct cd_z {
	ZSTD_CStream *zc;
	unsigned char *obuf;
	size_t osz;
	int (*out)(void *ctx, const void *buf, size_t len);
	void *ctx;
	uint64_t raw;
};

static int
cd_z_write(struct cd_z *z, const void *buf, size_t len, int end)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	size_t rem;

	z->raw += len;
	for (;;) {
		ZSTD_outBuffer ob = { z->obuf, z->osz, 0 };

		rem = ZSTD_compressStream2(z->zc, &ob, &in, end ? ZSTD_e_end :
		    ZSTD_e_continue);
		if (ZSTD_isError(rem)) {
			log_warnx("criu delta: zstd: %s", ZSTD_getErrorName(rem));
			errno = EIO;
			return -1;
		}
		if (ob.pos > 0 && z->out(z->ctx, z->obuf, ob.pos) < 0)
			return -1;
		if (end ? rem == 0 : in.pos == in.size)
			return 0;
	}
}

static int
cd_z_init(struct cd_z *z, int level)
{
	z->zc = ZSTD_createCStream();
	z->osz = ZSTD_CStreamOutSize();
	z->obuf = malloc(z->osz);
	if (z->zc == NULL || z->obuf == NULL) {
		errno = ENOMEM;
		return -1;
	}
	ZSTD_CCtx_setParameter(z->zc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(z->zc, ZSTD_c_checksumFlag, 1);
	return 0;
}

static void
cd_z_free(struct cd_z *z)
{
	ZSTD_freeCStream(z->zc);
	free(z->obuf);
}

/* Emits one op: 'L' n, or 'C' p n. */
static int
cd_op(struct cd_z *z, int kind, uint64_t p, uint32_t n)
{
	unsigned char op[13];

	op[0] = (unsigned char)kind;
	if (kind == 'L') {
		cd_put_be(op + 1, n, 4);
		return cd_z_write(z, op, 5, 0);
	}
	cd_put_be(op + 1, p, 8);
	cd_put_be(op + 9, n, 4);
	return cd_z_write(z, op, 13, 0);
}

int
criu_pack_delta(const char *dir, const struct criu_scan *s,
    const struct criu_dedup *d, int level,
    int (*out)(void *ctx, const void *buf, size_t len), void *ctx,
    uint64_t *raw_bytes)
{
	struct dirent **names = NULL;
	struct cd_z z = { 0 };
	unsigned char hdr[CD_HDR_LEN], *buf = NULL;
	uint64_t g = 0, files = 0;
	int nn, dfd, ret = -1, e;

	z.out = out;
	z.ctx = ctx;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if ((nn = scandir(dir, &names, cd_filter, alphasort)) < 0) {
		close(dfd);
		return -1;
	}
	if ((buf = malloc(CD_IO)) == NULL || cd_z_init(&z, level) < 0)
		goto out;
	if (cd_z_write(&z, CRIU_DELTA_MAGIC, 8, 0) < 0)
		goto out;
	for (int i = 0; i < nn; i++) {
		const char *name = names[i]->d_name;
		uint64_t size, nb, j = 0;
		int fd = cd_open_entry(dfd, name, &size);

		if (fd < 0) {
			if (errno == 0)
				continue;
			goto out;
		}
		nb = (size + CRIU_BLOCK - 1) / CRIU_BLOCK;
		if (g + nb > s->nblocks) {	/* changed since the scan */
			close(fd);
			errno = ESTALE;
			goto out;
		}
		cd_put_be(hdr, strlen(name), 4);
		cd_put_be(hdr + 4, size, 8);
		if (cd_z_write(&z, hdr, sizeof(hdr), 0) < 0 ||
		    cd_z_write(&z, name, strlen(name), 0) < 0) {
			close(fd);
			goto out;
		}
		while (j < nb) {
			int64_t p = criu_dedup_find(d, &s->blocks[g + j]);
			uint64_t k = j + 1;

			if (p >= 0) {
				/* A run of consecutive parent blocks. */
				while (k < nb && k - j < UINT32_MAX &&
				    criu_dedup_find(d, &s->blocks[g + k]) ==
				    p + (int64_t)(k - j))
					k++;
				if (cd_op(&z, 'C', (uint64_t)p,
				    (uint32_t)(k - j)) < 0 ||
				    lseek(fd, (off_t)(k * CRIU_BLOCK),
				    SEEK_SET) < 0) {
					close(fd);
					goto out;
				}
			} else {
				uint64_t left;

				while (k < nb && k - j < CD_IO / CRIU_BLOCK &&
				    criu_dedup_find(d, &s->blocks[g + k]) < 0)
					k++;
				left = (k == nb ? size : k * CRIU_BLOCK) -
				    j * CRIU_BLOCK;
				if (cd_op(&z, 'L', 0, (uint32_t)(k - j)) < 0 ||
				    cd_read_full(fd, buf, (size_t)left) < 0 ||
				    cd_z_write(&z, buf, (size_t)left, 0) < 0) {
					close(fd);
					goto out;
				}
			}
			j = k;
		}
		close(fd);
		g += nb;
		files++;
	}
	if (g != s->nblocks) {
		errno = ESTALE;
		goto out;
	}
	cd_put_be(hdr, 0, 4);
	cd_put_be(hdr + 4, files, 8);
	if (cd_z_write(&z, hdr, sizeof(hdr), 1) < 0)
		goto out;
	if (raw_bytes != NULL)
		*raw_bytes = z.raw;
	ret = 0;
out:
	e = errno;
	for (int i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(buf);
	cd_z_free(&z);
	close(dfd);
	errno = e;
	return ret;
}

/* ---------------- the checkpoint server: rebuild ---------------- */

/* Reads a zstd stream from an fd, exactly n bytes at a time. */
struct cd_zr {
	ZSTD_DStream *zd;
	int fd;
	unsigned char *ibuf, *obuf;
	size_t isz, osz;
	ZSTD_inBuffer in;
	size_t opos, olen;
	size_t last;		/* last decompress hint: 0 = frame ended */
	int eof;
};

static int
cd_zr_init(struct cd_zr *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->zd = ZSTD_createDStream();
	r->isz = ZSTD_DStreamInSize();
	r->osz = ZSTD_DStreamOutSize();
	r->ibuf = malloc(r->isz);
	r->obuf = malloc(r->osz);
	r->last = 1;
	if (r->zd == NULL || r->ibuf == NULL || r->obuf == NULL)
		return -1;
	ZSTD_initDStream(r->zd);
	r->in.src = r->ibuf;
	return 0;
}

static void
cd_zr_free(struct cd_zr *r)
{
	ZSTD_freeDStream(r->zd);
	free(r->ibuf);
	free(r->obuf);
}

/* Refills the output buffer. 1 with bytes, 0 at the end of input, -1. */
static int
cd_zr_fill(struct cd_zr *r, char *err, size_t n)
{
	for (;;) {
		ZSTD_outBuffer ob = { r->obuf, r->osz, 0 };
		size_t z, pos0;

		if (r->in.pos == r->in.size && !r->eof) {
			ssize_t got = read(r->fd, r->ibuf, r->isz);

			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				cd_seterr(err, n, "read: %s", strerror(errno));
				return -1;
			}
			r->in.size = (size_t)got;
			r->in.pos = 0;
			r->eof = got == 0;
		}
		/* Called with no input left too: zstd may still hold output. */
		pos0 = r->in.pos;
		z = ZSTD_decompressStream(r->zd, &ob, &r->in);
		if (ZSTD_isError(z)) {
			cd_seterr(err, n, "corrupt stream (zstd: %s)",
			    ZSTD_getErrorName(z));
			return -1;
		}
		/* The hint of a call that did something: one that only read
		   the frame's checksum (a read of its own: no output) ends the
		   frame. A call with nothing in and nothing out returns the
		   hint of a next frame: not this one's state. */
		if (ob.pos > 0 || r->in.pos > pos0)
			r->last = z;
		if (ob.pos > 0) {
			r->opos = 0;
			r->olen = ob.pos;
			return 1;
		}
		if (r->eof && r->in.pos == r->in.size)
			return 0;
	}
}

/* Exactly len bytes, or -1 (truncated or corrupt). */
static int
cd_zr_read(struct cd_zr *r, void *buf, size_t len, char *err, size_t n)
{
	unsigned char *p = buf;

	while (len > 0) {
		size_t take;

		if (r->opos == r->olen) {
			int f = cd_zr_fill(r, err, n);

			if (f <= 0) {
				if (f == 0)
					cd_seterr(err, n, "truncated stream");
				return -1;
			}
		}
		take = r->olen - r->opos < len ? r->olen - r->opos : len;
		memcpy(p, r->obuf + r->opos, take);
		r->opos += take;
		p += take;
		len -= take;
	}
	return 0;
}

/* The stream must end here: frame complete, nothing after. */
static int
cd_zr_end(struct cd_zr *r, char *err, size_t n)
{
	int f;

	if (r->opos != r->olen || (f = cd_zr_fill(r, err, n)) != 0 ||
	    r->last != 0) {
		cd_seterr(err, n, "%s", r->last != 0 ? "truncated stream" :
		    "trailing data after the archive end");
		return -1;
	}
	return 0;
}

/* Writes to the rebuilt archive, folding the bytes into its digest. */
struct cd_w {
	int fd;
	struct criu_dig dg;
	uint64_t bytes, max;
};

static int
cd_w_put(struct cd_w *w, const void *buf, size_t len, char *err, size_t n)
{
	const unsigned char *p = buf;

	if (len > w->max - w->bytes) {
		cd_seterr(err, n, "image larger than the limit of %llu bytes",
		    (unsigned long long)w->max);
		return -1;
	}
	criu_dig_update(&w->dg, buf, len);
	w->bytes += len;
	while (len > 0) {
		ssize_t r = write(w->fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			cd_seterr(err, n, "write: %s", r < 0 ? strerror(errno) :
			    "short write");
			return -1;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* One file of a parent archive: where its bytes are, its first block. */
struct cd_ent {
	uint64_t off, size, first;
};

/* Reads an entry header and name; *end set at the end marker. */
static int
cd_read_hdr(struct cd_zr *r, struct cd_w *w, char *name, uint64_t *size,
    uint64_t files, int *end, char *err, size_t n)
{
	unsigned char hdr[CD_HDR_LEN];
	uint32_t nl;

	if (cd_zr_read(r, hdr, sizeof(hdr), err, n) < 0)
		return -1;
	nl = (uint32_t)cd_get_be(hdr, 4);
	*size = cd_get_be(hdr + 4, 8);
	*end = nl == 0;
	if (nl == 0) {
		if (*size != files) {
			cd_seterr(err, n, "archive end says %llu files, got %llu",
			    (unsigned long long)*size, (unsigned long long)files);
			return -1;
		}
		return cd_w_put(w, hdr, sizeof(hdr), err, n);
	}
	if (nl > 255 || files >= CRIU_MAX_FILES) {
		cd_seterr(err, n, "bad entry (name of %u bytes, %llu files)", nl,
		    (unsigned long long)files);
		return -1;
	}
	if (cd_zr_read(r, name, nl, err, n) < 0)
		return -1;
	name[nl] = '\0';
	if (memchr(name, '\0', nl) != NULL || memchr(name, '/', nl) != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		cd_seterr(err, n, "unsafe entry name rejected");
		return -1;
	}
	if (*size > w->max - w->bytes) {
		cd_seterr(err, n, "image larger than the limit of %llu bytes",
		    (unsigned long long)w->max);
		return -1;
	}
	if (cd_w_put(w, hdr, sizeof(hdr), err, n) < 0 ||
	    cd_w_put(w, name, nl, err, n) < 0)
		return -1;
	return 0;
}

static int
cd_copy_stream(struct cd_zr *r, struct cd_w *w, uint64_t len,
    unsigned char *buf, char *err, size_t n)
{
	while (len > 0) {
		size_t take = len < CD_IO ? (size_t)len : CD_IO;

		if (cd_zr_read(r, buf, take, err, n) < 0 ||
		    cd_w_put(w, buf, take, err, n) < 0)
			return -1;
		len -= take;
	}
	return 0;
}

int
criu_expand_full(int zfd, int rawfd, uint64_t max_total, uint64_t *digest,
    char *err, size_t n)
{
	struct cd_zr r;
	struct cd_w w = { .fd = rawfd, .max = max_total ? max_total :
	    CRIU_MAX_TOTAL };
	unsigned char magic[8], *buf = malloc(CD_IO);
	char name[256];
	uint64_t size, files = 0;
	int end = 0, ret = -1;

	criu_dig_init(&w.dg, CD_SEED_DIGEST);
	if (cd_zr_init(&r, zfd) < 0 || buf == NULL) {
		cd_seterr(err, n, "out of memory");
		goto out;
	}
	if (cd_zr_read(&r, magic, 8, err, n) < 0)
		goto out;
	if (memcmp(magic, CRIU_ARCH_MAGIC_STR, 8) != 0) {
		cd_seterr(err, n, "not a full image archive (bad magic)");
		goto out;
	}
	if (cd_w_put(&w, magic, 8, err, n) < 0)
		goto out;
	for (;;) {
		if (cd_read_hdr(&r, &w, name, &size, files, &end, err, n) < 0)
			goto out;
		if (end)
			break;
		if (cd_copy_stream(&r, &w, size, buf, err, n) < 0)
			goto out;
		files++;
	}
	if (cd_zr_end(&r, err, n) < 0)
		goto out;
	*digest = criu_dig_final(&w.dg);
	ret = 0;
out:
	cd_zr_free(&r);
	free(buf);
	return ret;
}

static int
cd_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	unsigned char *p = buf;

	while (len > 0) {
		ssize_t r = pread(fd, p, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Indexes a full raw archive (made by criu_expand_full or
 * criu_apply_delta, so already checked): its entries, in order. */
static int
cd_index(int rawfd, struct cd_ent **out, size_t *nout, uint64_t *nblocks,
    char *err, size_t n)
{
	struct cd_ent *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	unsigned char hdr[CD_HDR_LEN];
	uint64_t off = 8, blocks = 0;

	for (;;) {
		uint32_t nl;
		uint64_t size;

		if (cd_pread_full(rawfd, hdr, sizeof(hdr), off) < 0)
			goto bad;
		nl = (uint32_t)cd_get_be(hdr, 4);
		size = cd_get_be(hdr + 4, 8);
		if (nl == 0)
			break;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			if (cap > CRIU_MAX_FILES ||
			    (nv = realloc(v, cap * sizeof(*v))) == NULL)
				goto bad;
			v = nv;
		}
		off += sizeof(hdr) + nl;
		v[cnt].off = off;
		v[cnt].size = size;
		v[cnt].first = blocks;
		cnt++;
		blocks += (size + CRIU_BLOCK - 1) / CRIU_BLOCK;
		off += size;
	}
	*out = v;
	*nout = cnt;
	*nblocks = blocks;
	return 0;
bad:
	free(v);
	cd_seterr(err, n, "parent archive unreadable");
	return -1;
}

/* Offset in the parent archive of its full block p, or -1. */
static int64_t
cd_block_off(const struct cd_ent *e, size_t ne, uint64_t p)
{
	size_t lo = 0, hi = ne;

	while (lo < hi) {	/* last entry whose first block <= p */
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid].first <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	e += lo - 1;
	if ((p - e->first + 1) * CRIU_BLOCK > e->size)
		return -1;	/* past the file, or its short tail */
	return (int64_t)(e->off + (p - e->first) * CRIU_BLOCK);
}

int
criu_apply_delta(int prawfd, int zfd, int rawfd, uint64_t max_total,
    uint64_t *digest, char *err, size_t n)
{
	struct cd_zr r;
	struct cd_w w = { .fd = rawfd, .max = max_total ? max_total :
	    CRIU_MAX_TOTAL };
	struct cd_ent *ents = NULL;
	size_t nents = 0;
	unsigned char magic[8], op[13], *buf = malloc(CD_IO);
	char name[256];
	uint64_t size, files = 0, pblocks = 0;
	int end = 0, ret = -1;

	criu_dig_init(&w.dg, CD_SEED_DIGEST);
	if (cd_zr_init(&r, zfd) < 0 || buf == NULL) {
		cd_seterr(err, n, "out of memory");
		goto out;
	}
	if (cd_index(prawfd, &ents, &nents, &pblocks, err, n) < 0)
		goto out;
	if (cd_zr_read(&r, magic, 8, err, n) < 0)
		goto out;
	if (memcmp(magic, CRIU_DELTA_MAGIC, 8) != 0) {
		cd_seterr(err, n, "not a delta archive (bad magic)");
		goto out;
	}
	if (cd_w_put(&w, CRIU_ARCH_MAGIC_STR, 8, err, n) < 0)
		goto out;
	for (;;) {
		uint64_t done = 0;

		if (cd_read_hdr(&r, &w, name, &size, files, &end, err, n) < 0)
			goto out;
		if (end)
			break;
		while (done < size) {
			uint64_t cnt, bytes, p;

			if (cd_zr_read(&r, op, 1, err, n) < 0)
				goto out;
			if (op[0] == 'L') {
				if (cd_zr_read(&r, op + 1, 4, err, n) < 0)
					goto out;
				cnt = cd_get_be(op + 1, 4);
				bytes = cnt * CRIU_BLOCK;
				if (cnt == 0 || bytes >= size - done + CRIU_BLOCK) {
					cd_seterr(err, n, "bad literal run of %llu "
					    "blocks", (unsigned long long)cnt);
					goto out;
				}
				if (bytes > size - done)
					bytes = size - done;
				if (cd_copy_stream(&r, &w, bytes, buf, err, n) < 0)
					goto out;
				done += bytes;
				continue;
			}
			if (op[0] != 'C') {
				cd_seterr(err, n, "unknown delta op 0x%02x", op[0]);
				goto out;
			}
			if (cd_zr_read(&r, op + 1, 12, err, n) < 0)
				goto out;
			p = cd_get_be(op + 1, 8);
			cnt = cd_get_be(op + 9, 4);
			if (cnt == 0 || cnt > (size - done) / CRIU_BLOCK ||
			    p >= pblocks || cnt > pblocks - p) {
				cd_seterr(err, n, "bad copy of %llu blocks from "
				    "parent block %llu", (unsigned long long)cnt,
				    (unsigned long long)p);
				goto out;
			}
			for (uint64_t i = 0; i < cnt; i++) {
				int64_t off = cd_block_off(ents, nents, p + i);

				if (off < 0) {
					cd_seterr(err, n, "parent block %llu is not "
					    "a full block", (unsigned long long)(p + i));
					goto out;
				}
				if (cd_pread_full(prawfd, buf, CRIU_BLOCK,
				    (uint64_t)off) < 0) {
					cd_seterr(err, n, "parent archive "
					    "unreadable");
					goto out;
				}
				if (cd_w_put(&w, buf, CRIU_BLOCK, err, n) < 0)
					goto out;
			}
			done += cnt * CRIU_BLOCK;
		}
		files++;
	}
	if (cd_zr_end(&r, err, n) < 0)
		goto out;
	*digest = criu_dig_final(&w.dg);
	ret = 0;
out:
	cd_zr_free(&r);
	free(ents);
	free(buf);
	return ret;
}

int
criu_compress_fd(int rawfd, int zfd, int level, uint64_t *bytes,
    uint64_t *sum, char *err, size_t n)
{
	ZSTD_CStream *zc = ZSTD_createCStream();
	size_t osz = ZSTD_CStreamOutSize();
	unsigned char *ibuf = malloc(CD_IO), *obuf = malloc(osz);
	uint64_t off = 0;
	int ret = -1;

	*bytes = 0;
	*sum = CKSUM_INIT;
	if (zc == NULL || ibuf == NULL || obuf == NULL) {
		cd_seterr(err, n, "out of memory");
		goto out;
	}
	ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1);
	for (;;) {
		ssize_t got = pread(rawfd, ibuf, CD_IO, (off_t)off);
		ZSTD_inBuffer in = { ibuf, got > 0 ? (size_t)got : 0, 0 };
		int end = got == 0;
		size_t rem;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cd_seterr(err, n, "read: %s", strerror(errno));
			goto out;
		}
		off += (uint64_t)got;
		do {
			ZSTD_outBuffer ob = { obuf, osz, 0 };
			const unsigned char *p = obuf;

			rem = ZSTD_compressStream2(zc, &ob, &in, end ? ZSTD_e_end :
			    ZSTD_e_continue);
			if (ZSTD_isError(rem)) {
				cd_seterr(err, n, "zstd: %s",
				    ZSTD_getErrorName(rem));
				goto out;
			}
			*sum = cksum_update(*sum, obuf, ob.pos);
			*bytes += ob.pos;
			while (ob.pos > 0) {
				ssize_t wr = write(zfd, p, ob.pos);
				if (wr < 0 && errno == EINTR)
					continue;
				if (wr <= 0) {
					cd_seterr(err, n, "write: %s",
					    wr < 0 ? strerror(errno) : "short");
					goto out;
				}
				p += wr;
				ob.pos -= (size_t)wr;
			}
		} while (end ? rem != 0 : in.pos < in.size);
		if (end)
			break;
	}
	ret = 0;
out:
	ZSTD_freeCStream(zc);
	free(ibuf);
	free(obuf);
	return ret;
}
