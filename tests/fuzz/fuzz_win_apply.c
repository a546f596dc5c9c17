/*
 * fuzz_win_apply.c: libFuzzer target for the target side of one-sided
 * communication (libmpi-lite/win_rma.c, win_apply): the batch of records
 * an origin sends when an epoch closes (docs/ONESIDED.md), applied to a
 * window. The code run is the library's own; the harness plays the
 * window: a static one (base at offset 1024 of an arena, 512 bytes) or a
 * dynamic one (two attached regions), at a fixed address so that seeds
 * can name dynamic targets.
 *
 * Input: byte 0 picks the flavor (bit 0: dynamic) and the displacement
 * unit (bits 1-2: 1, 2, 4, 8); byte 1 is the number of records; the
 * rest is the batch. With bit 3 of byte 0 set, the rest is instead a
 * passive-target message as a target's posted receive gets it
 * (win_passive.c, win_pas_check: header, then the records inline), from
 * origin byte 1 % 5 of a window of 4 ranks: its records are applied if
 * the header passes. Checks, beyond ASan, UBSan and leaks: nothing
 * outside the window's memory changes, whatever the batch says, and the
 * reply is never longer than the message limit (MPIV_MAX_PAYLOAD, set
 * to 1 MiB here).
 *
 * MPIV_FUZZ_WRITE_SEEDS=DIR writes valid batches (put, get, accumulate
 * of every kind, compare-and-swap, strided blocks; static and dynamic)
 * and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "win.h"

#define ARENA_ADDR ((uintptr_t)0x30000000)
#define ARENA 4096
#define WBASE 1024
#define WSIZE 512

static unsigned char *arena, *shadow;
static struct mpiv_comm fz_comm;
static struct mpiv_win fz_win;
static struct win_region fz_regions[2];

static void
fz_fill(void)
{
	for (size_t i = 0; i < ARENA; i++)
		arena[i] = (unsigned char)(i * 7 + 3);
	memcpy(shadow, arena, ARENA);
}

static bool
fz_in_window(size_t off, bool dynamic)
{
	if (!dynamic)
		return off >= WBASE && off < WBASE + WSIZE;
	for (int i = 0; i < 2; i++) {
		size_t b = fz_regions[i].base - (uintptr_t)arena;
		if (off >= b && off < b + fz_regions[i].len)
			return true;
	}
	return false;
}

/* Appends a record to b (at *len); returns the new length. */
static size_t
fz_rec(char *b, size_t len, int kind, int op, int basic, uint32_t count,
    int64_t disp, int64_t extent, const struct mpiv_block *blk,
    uint32_t nblocks, const void *data, size_t dlen)
{
	struct win_rec r = { 0 };
	size_t per = 0;

	for (uint32_t j = 0; j < nblocks; j++)
		per += blk[j].len;
	r.kind = (uint8_t)kind;
	r.op = (uint8_t)op;
	r.basic = basic;
	r.count = count;
	r.nblocks = nblocks;
	r.disp = disp;
	r.extent = extent;
	r.tbytes = per * count;
	r.data = dlen;
	memcpy(b + len, &r, sizeof(r));
	len += sizeof(r);
	memcpy(b + len, blk, nblocks * sizeof(*blk));
	len += nblocks * sizeof(*blk);
	if (dlen > 0)
		memcpy(b + len, data, dlen);
	len += dlen;
	while (len % 8)
		b[len++] = 0;
	return len;
}

static void
fz_seed(const char *dir, const char *name, int mode, int nops, const char *b,
    size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL) {
		perror(path);
		exit(1);
	}
	fputc(mode, f);
	fputc(nops, f);
	fwrite(b, 1, len, f);
	fclose(f);
}

static void
fz_write_seeds(const char *dir)
{
	static char b[8192];
	struct mpiv_block one = { 0, 16 }, strided[2] = { { 0, 4 }, { 8, 4 } };
	int ints[4] = { 1, 2, 3, 4 };
	double d[2] = { 1.5, -2.25 };
	long cas[2] = { 9, 0 };
	size_t n = 0;

	/* static window, disp unit 4 (mode 2 << 1 = 4) */
	n = fz_rec(b, n, WIN_PUT, 0, MPIV_B_INT, 1, 0, 0, &one, 1, ints, 16);
	n = fz_rec(b, n, WIN_GET, 0, MPIV_B_INT, 1, 4, 0, &one, 1, NULL, 0);
	n = fz_rec(b, n, WIN_ACC, 2 /* SUM */, MPIV_B_INT, 2, 8, 16, strided,
	    2, ints, 16);
	n = fz_rec(b, n, WIN_GACC, 0 /* MAX */, MPIV_B_DOUBLE, 1, 20, 0,
	    &one, 1, d, 16);
	n = fz_rec(b, n, WIN_GACC, 13 /* NO_OP */, MPIV_B_INT, 1, 24, 0,
	    &one, 1, NULL, 0);
	{
		struct mpiv_block l = { 0, 8 };
		n = fz_rec(b, n, WIN_CAS, 12, MPIV_B_LONG, 1, 40, 0, &l, 1,
		    cas, 16);
	}
	fz_seed(dir, "static", 2 << 1, 6, b, n);
	/* dynamic: absolute addresses in the two regions */
	n = 0;
	n = fz_rec(b, n, WIN_PUT, 0, MPIV_B_INT, 1,
	    (int64_t)(ARENA_ADDR + 2048), 0, &one, 1, ints, 16);
	n = fz_rec(b, n, WIN_ACC, 2, MPIV_B_INT, 1,
	    (int64_t)(ARENA_ADDR + 1100), 0, &one, 1, ints, 16);
	n = fz_rec(b, n, WIN_GET, 0, MPIV_B_INT, 1,
	    (int64_t)(ARENA_ADDR + 3000), 0, &one, 1, NULL, 0);
	fz_seed(dir, "dynamic", 1, 3, b, n);
	/* a passive-target message from rank 1 to a static window: its
	   header (win_passive.c's struct pas_msg: magic, flags = exclusive
	   lock and release, nops, pad, bytes, reply bytes), then a put and a
	   fetch-and-op's record */
	{
		static char m[8192];
		uint32_t hd[4] = { 0x6d77706dU, 2 | 4, 2, 0 };
		uint64_t lens[2];
		long one_l = 1;
		struct mpiv_block l = { 0, 8 };

		n = 0;
		n = fz_rec(b, n, WIN_PUT, 0, MPIV_B_INT, 1, 0, 0, &one, 1,
		    ints, 16);
		n = fz_rec(b, n, WIN_GACC, 2, MPIV_B_LONG, 1, 8, 0, &l, 1,
		    &one_l, 8);
		lens[0] = n;
		lens[1] = 8;
		memcpy(m, hd, sizeof(hd));
		memcpy(m + sizeof(hd), lens, sizeof(lens));
		memcpy(m + sizeof(hd) + sizeof(lens), b, n);
		fz_seed(dir, "passive", 8 | (2 << 1), 1, m,
		    sizeof(hd) + sizeof(lens) + n);
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("MPIV_FUZZ_WRITE_SEEDS");

	if (dir != NULL) {
		fz_write_seeds(dir);
		exit(0);
	}
	/* replies are bounded by the message limit: a small one here */
	setenv("MPIV_MAX_PAYLOAD", "1048576", 1);
	arena = mmap((void *)ARENA_ADDR, ARENA, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (arena == MAP_FAILED || (uintptr_t)arena != ARENA_ADDR) {
		perror("fuzz_win_apply: mmap of the arena");
		exit(1);
	}
	shadow = malloc(ARENA);
	fz_comm.rank = 1;
	fz_comm.size = 2;
	fz_win.comm = &fz_comm;
	fz_regions[0].base = (uintptr_t)arena + 1024;
	fz_regions[0].len = 256;
	fz_regions[1].base = (uintptr_t)arena + 2048;
	fz_regions[1].len = 128;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool dynamic;
	char *batch, *reply = NULL;
	size_t len, rlen = 0;
	int rc;

	if (size < 2)
		return 0;
	dynamic = data[0] & 1;
	fz_win.flavor = dynamic ? MPI_WIN_FLAVOR_DYNAMIC : MPI_WIN_FLAVOR_CREATE;
	fz_win.disp_unit = 1 << ((data[0] >> 1) & 3);
	fz_win.base = dynamic ? MPI_BOTTOM : arena + WBASE;
	fz_win.size = dynamic ? 0 : WSIZE;
	fz_win.regions = fz_regions;
	fz_win.nregions = dynamic ? 2 : 0;
	len = size - 2;
	/* a malloc'd copy, as the payload a receive fills */
	if ((batch = malloc(len + 1)) == NULL)
		return 0;
	memcpy(batch, data + 2, len);
	fz_fill();
	if (data[0] & 8) {
		uint32_t flags, nops;
		size_t bytes;
		const char *bad = win_pas_check(batch, len, data[1] % 5, 0, 4,
		    &flags, &nops, &bytes);

		rc = MPI_ERR_INTERN;
		if (bad == NULL && !(flags & 8) && bytes > len)
			abort();	/* said well-formed, but too long */
		if (bad == NULL && !(flags & 8)) {
			/* the records, at a multiple of 8 as pas_serve has them */
			char *recs = malloc(bytes + 1);

			if (recs != NULL) {
				memcpy(recs, batch + (len - bytes), bytes);
				rc = win_apply(&fz_win, 0, recs, bytes, nops,
				    &reply, &rlen);
				free(recs);
			}
		}
	} else {
		rc = win_apply(&fz_win, 0, batch, len, data[1], &reply, &rlen);
	}
	if (getenv("FUZZ_WIN_VERBOSE") != NULL)
		fprintf(stderr, "win_apply: rc %d, reply %zu bytes\n", rc, rlen);
	for (size_t i = 0; i < ARENA; i++)
		if (arena[i] != shadow[i] && !fz_in_window(i, dynamic)) {
			fprintf(stderr, "fuzz_win_apply: byte %zu outside the "
			    "window changed\n", i);
			abort();
		}
	if (rlen > 1048576) {
		fprintf(stderr, "fuzz_win_apply: reply of %zu bytes\n", rlen);
		abort();
	}
	free(reply);
	free(batch);
	return 0;
}
