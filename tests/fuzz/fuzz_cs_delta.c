/*
 * fuzz_cs_delta.c: libFuzzer target for what a checkpoint server decodes
 * of an incremental image (node-agent/criu_delta.c): the first byte picks
 * criu_apply_delta (over a fixed parent archive: a 300-byte file and a
 * pages file of 3 full blocks and a short tail) or criu_expand_full; the
 * rest, compressed with zstd, is the stored image. Either may fail with a
 * reason; when it succeeds the output is a well-formed full archive that
 * expands again to the same digest, and a delta never wrote more bytes
 * than the announced sizes allow.
 * MPIV_FUZZ_WRITE_SEEDS=DIR writes a valid delta and a valid full
 * archive (the seeds in tests/fuzz/seeds/fuzz_cs_delta) and exits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../../node-agent/criu.h"

static int parent_raw = -1;

static size_t
be(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
	return (size_t)bytes;
}

static int
memfd_of(const void *p, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0 || (len > 0 && write(fd, p, len) != (ssize_t)len))
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The parent: "core-1.img" (300 bytes), "pages-1.img" (3 blocks + 10). */
static size_t
make_parent(unsigned char *b)
{
	size_t n = 0;

	memcpy(b, CRIU_ARCH_MAGIC_STR, 8);
	n = 8;
	n += be(b + n, 10, 4);
	n += be(b + n, 300, 8);
	memcpy(b + n, "core-1.img", 10);
	n += 10;
	for (int i = 0; i < 300; i++)
		b[n++] = (unsigned char)(i * 7);
	n += be(b + n, 11, 4);
	n += be(b + n, 3 * CRIU_BLOCK + 10, 8);
	memcpy(b + n, "pages-1.img", 11);
	n += 11;
	for (size_t i = 0; i < 3 * CRIU_BLOCK + 10; i++)
		b[n++] = (unsigned char)(i * 13 + i / 4096);
	n += be(b + n, 0, 4);
	n += be(b + n, 2, 8);
	return n;
}

/* A delta over the parent: a file of 2 blocks copied + 5 literal bytes. */
static size_t
make_delta(unsigned char *b)
{
	size_t n = 0;

	memcpy(b, CRIU_DELTA_MAGIC, 8);
	n = 8;
	n += be(b + n, 11, 4);
	n += be(b + n, 2 * CRIU_BLOCK + 5, 8);
	memcpy(b + n, "pages-1.img", 11);
	n += 11;
	b[n++] = 'C';
	n += be(b + n, 1, 8);
	n += be(b + n, 2, 4);
	b[n++] = 'L';
	n += be(b + n, 1, 4);
	memcpy(b + n, "hello", 5);
	n += 5;
	n += be(b + n, 0, 4);
	n += be(b + n, 1, 8);
	return n;
}

static void
write_seed(const char *dir, const char *name, int kind, const void *p,
    size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		exit(1);
	fputc(kind, f);
	fwrite(p, 1, len, f);
	fclose(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static unsigned char b[4 * CRIU_BLOCK + 512];
	const char *dir = getenv("MPIV_FUZZ_WRITE_SEEDS");
	size_t n = make_parent(b);

	if (dir != NULL) {
		write_seed(dir, "full", 1, b, n);
		n = make_delta(b);
		write_seed(dir, "delta", 0, b, n);
		exit(0);
	}
	parent_raw = memfd_of(b, n);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cap, zl;
	void *z;
	char err[256];
	uint64_t dig, dig2;
	int zfd, out, rc;

	if (size < 1 || size > 65536)
		return 0;
	cap = ZSTD_compressBound(size - 1);
	if ((z = malloc(cap)) == NULL)
		return 0;
	zl = ZSTD_compress(z, cap, data + 1, size - 1, 1);
	if (ZSTD_isError(zl)) {
		free(z);
		return 0;
	}
	zfd = memfd_of(z, zl);
	free(z);
	err[0] = '\0';
	out = memfd_create("out", MFD_CLOEXEC);
	/* a small cap: a delta may not make the output grow without bound */
	if (data[0] & 1)
		rc = criu_expand_full(zfd, out, 1 << 20, &dig, err, sizeof(err));
	else
		rc = criu_apply_delta(parent_raw, zfd, out, 1 << 20, &dig, err,
		    sizeof(err));
	if (rc == 0) {
		/* The output expands again (well-formed) to the same digest. */
		struct stat st;
		int z2 = memfd_create("z2", MFD_CLOEXEC), again;
		uint64_t bytes, sum;

		if (fstat(out, &st) < 0 || st.st_size > (1 << 20))
			abort();
		if (criu_compress_fd(out, z2, 1, &bytes, &sum, err,
		    sizeof(err)) < 0)
			abort();
		lseek(z2, 0, SEEK_SET);
		again = memfd_create("again", MFD_CLOEXEC);
		if (criu_expand_full(z2, again, 1 << 20, &dig2, err,
		    sizeof(err)) < 0 || dig2 != dig)
			abort();
		close(again);
		close(z2);
	} else if (err[0] == '\0')
		abort();	/* a failure always says why */
	close(zfd);
	close(out);
	return 0;
}
