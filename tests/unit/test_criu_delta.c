/*
 * test_criu_delta.c: incremental images (node-agent/criu_delta.c): the
 * digest is the same however the bytes are cut; a delta packed over a
 * parent (blocks changed, shifted, a file added, a short tail) and
 * applied to the parent's full archive gives exactly the full archive of
 * the new directory, through a chain of two; the rebuilt image unpacks
 * to the same files with the digest the scan computed; and bad deltas
 * (unknown op, copy past the parent, copy of a short block, truncated,
 * trailing bytes, wrong magic, a full image where a delta is expected)
 * fail with a reason instead of producing bytes. Prints TAP lines.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../node-agent/criu.h"
#include "tap.h"

static char root[64];

struct mem {
	unsigned char *p;
	size_t len, cap;
};

static int
mem_out(void *ctx, const void *buf, size_t len)
{
	struct mem *m = ctx;

	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->p = realloc(m->p, m->cap);
		if (m->p == NULL)
			return -1;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

/* A temp file holding len bytes, at offset 0. */
static int
fd_of(const void *p, size_t len)
{
	char name[128];
	int fd;

	snprintf(name, sizeof(name), "%s/f-XXXXXX", root);
	fd = mkstemp(name);
	unlink(name);
	if (len > 0 && write(fd, p, len) != (ssize_t)len)
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The read end of a pipe a child fills with len bytes in two writes:
 * [0, cut), a pause, then the rest; so a reader's last read before the
 * pause ends exactly at cut. */
static int
fd_split(const void *p, size_t len, size_t cut)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd) < 0 || (pid = fork()) < 0)
		abort();
	if (pid == 0) {
		close(pfd[0]);
		if (write(pfd[1], p, cut) != (ssize_t)cut)
			_exit(1);
		usleep(150 * 1000);
		if (write(pfd[1], (const char *)p + cut, len - cut) !=
		    (ssize_t)(len - cut))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	return pfd[0];
}

static int
tmp_fd(void)
{
	return fd_of(NULL, 0);
}

static uint64_t rng = 0x12345678;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
put_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, len) != (ssize_t)len)
		abort();
	close(fd);
}

static unsigned char *
rand_bytes(size_t n)
{
	unsigned char *b = malloc(n);

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)rnd();
	return b;
}

/* The raw full archive of a directory, via criu_pack_dir + expand. */
static int
raw_of_dir(const char *dir, uint64_t *dig)
{
	struct mem m = { 0 };
	char err[256];
	int z, raw = tmp_fd();

	if (criu_pack_dir(dir, 1, mem_out, &m, NULL) < 0)
		return -1;
	z = fd_of(m.p, m.len);
	free(m.p);
	if (criu_expand_full(z, raw, 0, dig, err, sizeof(err)) < 0) {
		printf("# expand: %s\n", err);
		close(z);
		return -1;
	}
	close(z);
	return raw;
}

static bool
same_fd(int a, int b)
{
	struct stat sa, sb;
	unsigned char *pa, *pb;
	bool eq;

	fstat(a, &sa);
	fstat(b, &sb);
	if (sa.st_size != sb.st_size)
		return false;
	pa = malloc((size_t)sa.st_size + 1);
	pb = malloc((size_t)sb.st_size + 1);
	eq = pread(a, pa, (size_t)sa.st_size, 0) == sa.st_size &&
	    pread(b, pb, (size_t)sb.st_size, 0) == sb.st_size &&
	    memcmp(pa, pb, (size_t)sa.st_size) == 0;
	free(pa);
	free(pb);
	return eq;
}

/* Applies a raw (uncompressed) delta body to parent raw fd: 0 or -1. */
static int
apply_raw(int praw, const void *body, size_t len, char *err, size_t n)
{
	size_t cap = ZSTD_compressBound(len);
	void *z = malloc(cap);
	size_t zl = ZSTD_compress(z, cap, body, len, 1);
	int zfd = fd_of(z, zl), out = tmp_fd(), rc;
	uint64_t dig;

	rc = criu_apply_delta(praw, zfd, out, 0, &dig, err, n);
	free(z);
	close(zfd);
	close(out);
	return rc;
}

static size_t
be(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
	return (size_t)bytes;
}

int
main(void)
{
	char p[128], c[128], d[128], u[128], err[256];
	size_t pages = 64 * CRIU_BLOCK + 100;
	unsigned char *pg = rand_bytes(pages), *core = rand_bytes(300);
	struct criu_scan sp, sc, sd;
	struct criu_dedup *dd;
	struct criu_dig g1, g2;
	struct mem m = { 0 }, full = { 0 };
	uint64_t dig, digc, bytes, sum, reused;
	int praw, craw, draw, zfd, out, ref;

	snprintf(root, sizeof(root), "/tmp/test_criu_delta-XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	snprintf(p, sizeof(p), "%s/p", root);
	snprintf(c, sizeof(c), "%s/c", root);
	snprintf(d, sizeof(d), "%s/d", root);
	snprintf(u, sizeof(u), "%s/u", root);
	mkdir(p, 0700);
	mkdir(c, 0700);
	mkdir(d, 0700);
	mkdir(u, 0700);

	/* the digest does not depend on how the bytes are cut */
	criu_dig_init(&g1, CRIU_DIG_SEED);
	criu_dig_update(&g1, pg, pages);
	criu_dig_init(&g2, CRIU_DIG_SEED);
	for (size_t off = 0, step = 1; off < pages; off += step, step = step * 3 % 97 + 1)
		criu_dig_update(&g2, pg + off, off + step > pages ? pages - off : step);
	CHECK(criu_dig_final(&g1) == criu_dig_final(&g2), "digest independent of the cuts");
	pg[5] ^= 1;
	criu_dig_init(&g2, CRIU_DIG_SEED);
	criu_dig_update(&g2, pg, pages);
	pg[5] ^= 1;
	CHECK(criu_dig_final(&g1) != criu_dig_final(&g2), "one bit changes the digest");

	/* parent: pages (64 blocks + a 100-byte tail), core, a log skipped */
	put_file(p, "pages-1.img", pg, pages);
	put_file(p, "core-1.img", core, 300);
	put_file(p, "dump.log", "x", 1);
	CHECK(criu_scan_dir(p, &sp) == 0 && sp.nblocks == 65 + 1,
	    "scan of the parent: %llu blocks", (unsigned long long)sp.nblocks);
	praw = raw_of_dir(p, &dig);
	CHECK(praw >= 0 && dig == sp.digest, "the scan's digest is the full archive's");
	{
		struct stat st;
		fstat(praw, &st);
		CHECK((uint64_t)st.st_size == sp.raw_bytes, "scan's raw size %llu",
		    (unsigned long long)sp.raw_bytes);
	}

	/* child: 3 blocks changed, one block inserted in front (the rest
	   shifted), the tail changed, a new file, core the same */
	{
		size_t n2 = pages + CRIU_BLOCK;
		unsigned char *pg2 = malloc(n2), *extra = rand_bytes(2 * CRIU_BLOCK);

		memcpy(pg2 + CRIU_BLOCK, pg, pages);
		memcpy(pg2, extra, CRIU_BLOCK);
		pg2[CRIU_BLOCK * 10 + 7] ^= 0xff;
		pg2[CRIU_BLOCK * 20] ^= 0x01;
		pg2[CRIU_BLOCK * 40 + 4095] ^= 0x80;
		pg2[n2 - 1] ^= 0x55;
		put_file(c, "pages-1.img", pg2, n2);
		put_file(c, "core-1.img", core, 300);
		put_file(c, "ghost-file-2.img", extra, 2 * CRIU_BLOCK);
		free(pg2);
		free(extra);
	}
	CHECK(criu_scan_dir(c, &sc) == 0, "scan of the child");
	dd = criu_dedup_new(sp.blocks, sp.nblocks);
	reused = criu_dedup_count(dd, &sc);
	/* 64 full parent blocks, 3 changed: 61 found; extra[0] is new */
	CHECK(reused == 61, "blocks found in the parent: %llu (want 61)",
	    (unsigned long long)reused);
	CHECK(criu_pack_delta(c, &sc, dd, 3, mem_out, &m, NULL) == 0, "delta packed");
	criu_pack_dir(c, 3, mem_out, &full, NULL);
	CHECK(m.len * 5 < full.len, "delta %zu bytes, full %zu bytes", m.len, full.len);
	zfd = fd_of(m.p, m.len);
	craw = tmp_fd();
	CHECK(criu_apply_delta(praw, zfd, craw, 0, &digc, err, sizeof(err)) == 0,
	    "delta applied");
	close(zfd);
	CHECK(digc == sc.digest, "rebuilt child digest is the scan's");
	ref = raw_of_dir(c, &dig);
	CHECK(ref >= 0 && same_fd(craw, ref), "rebuilt child archive byte-identical to a full pack");
	close(ref);

	/* grandchild over the child: a chain of two */
	{
		struct criu_dedup *d2 = criu_dedup_new(sc.blocks, sc.nblocks);
		struct mem m2 = { 0 };
		unsigned char *pg3 = rand_bytes(3 * CRIU_BLOCK);

		put_file(d, "core-1.img", core, 300);
		put_file(d, "pages-1.img", pg3, 3 * CRIU_BLOCK);
		free(pg3);
		/* half of the child's pages, at another offset */
		{
			unsigned char *h = malloc(32 * CRIU_BLOCK);
			int fd = open(c, O_RDONLY);
			char path[256];
			snprintf(path, sizeof(path), "%s/pages-1.img", c);
			close(fd);
			fd = open(path, O_RDONLY);
			if (pread(fd, h, 32 * CRIU_BLOCK, 8 * CRIU_BLOCK) != 32 * CRIU_BLOCK)
				abort();
			close(fd);
			put_file(d, "pages-2.img", h, 32 * CRIU_BLOCK);
			free(h);
		}
		criu_scan_dir(d, &sd);
		CHECK(criu_pack_delta(d, &sd, d2, 1, mem_out, &m2, NULL) == 0,
		    "second delta packed (%zu bytes)", m2.len);
		zfd = fd_of(m2.p, m2.len);
		draw = tmp_fd();
		CHECK(criu_apply_delta(craw, zfd, draw, 0, &dig, err, sizeof(err)) == 0 &&
		    dig == sd.digest, "chain of two rebuilt, digest matches");
		close(zfd);
		/* the same delta over the wrong parent: bytes come out, but
		   not the digest the node computed */
		zfd = fd_of(m2.p, m2.len);
		out = tmp_fd();
		if (criu_apply_delta(praw, zfd, out, 0, &dig, err, sizeof(err)) == 0)
			CHECK(dig != sd.digest, "over the wrong parent: the digest differs");
		else
			CHECK(1, "over the wrong parent: refused (%s)", err);
		close(zfd);
		close(out);
		/* compress, unpack like a restore, compare */
		out = tmp_fd();
		CHECK(criu_compress_fd(draw, out, 1, &bytes, &sum, err, sizeof(err)) == 0,
		    "rebuilt image compressed (%llu bytes)", (unsigned long long)bytes);
		{
			struct criu_unpack *up = criu_unpack_stream_new(u, 0, 0);
			unsigned char *buf = malloc(bytes);
			if (pread(out, buf, bytes, 0) != (ssize_t)bytes)
				abort();
			CHECK(criu_unpack_stream_feed(up, buf, bytes) == 0 &&
			    criu_unpack_stream_finish(up) == 0 &&
			    criu_unpack_stream_digest(up) == sd.digest,
			    "rebuilt image unpacks, with the node's digest");
			criu_unpack_stream_free(up);
			free(buf);
		}
		{
			struct criu_scan su;
			CHECK(criu_scan_dir(u, &su) == 0 && su.digest == sd.digest,
			    "unpacked files are the grandchild's");
			criu_scan_free(&su);
		}
		close(out);
		close(draw);
		criu_dedup_free(d2);
		free(m2.p);
	}

	/* bad deltas */
	{
		unsigned char b[256];
		size_t n;

		/* header for one file of 2 full blocks, then one op */
#define HDR() do { n = 0; memcpy(b, CRIU_DELTA_MAGIC, 8); n = 8;	\
		n += be(b + n, 1, 4); n += be(b + n, 2 * CRIU_BLOCK, 8);	\
		b[n++] = 'x'; } while (0)
		HDR();
		b[n++] = 'Z';
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) < 0, "unknown op refused: %s", err);
		HDR();
		b[n++] = 'C';
		n += be(b + n, 1000, 8);
		n += be(b + n, 2, 4);
		n += be(b + n, 0, 4);
		n += be(b + n, 1, 8);
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) < 0, "copy past the parent refused: %s", err);
		HDR();
		b[n++] = 'C';
		n += be(b + n, 0, 8);	/* core-1.img's block 0: 300 bytes */
		n += be(b + n, 2, 4);
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) < 0 && strstr(err, "not a full block"),
		    "copy of a short block refused: %s", err);
		HDR();
		b[n++] = 'C';
		n += be(b + n, 64, 8);	/* pages-1.img's last full block, then its tail */
		n += be(b + n, 2, 4);
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) < 0 && strstr(err, "not a full block"),
		    "copy of a file's tail refused: %s", err);
		HDR();
		b[n++] = 'C';
		n += be(b + n, 1, 8);
		n += be(b + n, 3, 4);	/* more than the file holds */
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) < 0, "copy beyond the file's size refused: %s", err);
		HDR();
		b[n++] = 'C';
		n += be(b + n, 2, 8);
		n += be(b + n, 2, 4);
		n += be(b + n, 0, 4);
		n += be(b + n, 1, 8);
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) == 0, "a well-formed copy is taken (%s)",
		    err);
		b[n++] = 0;
		CHECK(apply_raw(praw, b, n, err, sizeof(err)) < 0, "trailing bytes refused: %s", err);
		CHECK(apply_raw(praw, b, n - 5, err, sizeof(err)) < 0, "truncated delta refused: %s", err);
		memcpy(b, CRIU_ARCH_MAGIC_STR, 8);
		CHECK(apply_raw(praw, b, n - 1, err, sizeof(err)) < 0, "a full archive is not a delta: %s",
		    err);
		/* the stream arriving in two reads, the second holding only
		   the end of the frame (its checksum, or part of it): no
		   output comes from that read, the frame still ends */
		for (size_t tail = 1; tail <= 5; tail++) {
			zfd = fd_split(m.p, m.len, m.len - tail);
			out = tmp_fd();
			CHECK(criu_apply_delta(praw, zfd, out, 0, &dig, err, sizeof(err)) == 0 &&
			    dig == sc.digest, "delta whose last %zu bytes come in a read of their own: %s",
			    tail, dig == sc.digest ? "applied" : err);
			close(zfd);
			close(out);
			while (wait(NULL) > 0)
				;
			zfd = fd_split(full.p, full.len, full.len - tail);
			out = tmp_fd();
			CHECK(criu_expand_full(zfd, out, 0, &dig, err, sizeof(err)) == 0 &&
			    dig == sc.digest, "full image whose last %zu bytes come in a read of their own: %s",
			    tail, dig == sc.digest ? "expanded" : err);
			close(zfd);
			close(out);
			while (wait(NULL) > 0)
				;
		}
		/* the compressed stream cut short */
		zfd = fd_of(m.p, m.len / 2);
		out = tmp_fd();
		CHECK(criu_apply_delta(praw, zfd, out, 0, &dig, err, sizeof(err)) < 0,
		    "cut compressed stream refused: %s", err);
		close(zfd);
		close(out);
	}

	criu_dedup_free(dd);
	criu_scan_free(&sp);
	criu_scan_free(&sc);
	criu_scan_free(&sd);
	close(praw);
	close(craw);
	free(m.p);
	free(full.p);
	free(pg);
	free(core);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		if (system(cmd) != 0)
			failures++;
	}
	return failures != 0;
}
