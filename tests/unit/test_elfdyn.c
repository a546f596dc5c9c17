/*
 * test_elfdyn.c: runtime/elfdyn.c, the reader of a program's DT_NEEDED
 * names and RUNPATH (or RPATH), on ELF files made here: the names and
 * the path, RUNPATH over RPATH in either order, more names than it keeps,
 * names longer than it keeps, no dynamic section, a string table outside
 * every loaded segment, not ELF, 32-bit; then every truncation of a good
 * file and random byte changes to it (never a crash, never a string that
 * is not terminated); and elfdyn_dir's $ORIGIN expansion.
 *
 *   test_elfdyn           the tests (TAP-style lines, exit 1 on a failure)
 *   test_elfdyn --seed N  the same with another random seed
 */
#include <elf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfdyn.h"

#include "unit/rng.h"
#include "unit/tap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	return rng_next(&rng_state);
}

/* What mkelf puts in the file. */
struct spec {
	const char *needed[64];
	int nneeded;
	const char *runpath, *rpath;	/* NULL: no such entry */
	bool rpath_first;		/* DT_RPATH before DT_RUNPATH */
	bool no_dynamic;		/* no PT_DYNAMIC */
	bool strtab_outside;		/* DT_STRTAB in no PT_LOAD */
};

enum { FILEMAX = 1 << 16, VADDR = 0x400000 };

/*
 * A 64-bit ELF image in buf: header, two program headers (PT_LOAD over
 * the whole file, PT_DYNAMIC), the dynamic section, the string table.
 * Its size.
 */
static size_t
mkelf(unsigned char *buf, const struct spec *sp)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	Elf64_Dyn *dyn = (Elf64_Dyn *)(buf + sizeof(*eh) + 2 * sizeof(*ph));
	size_t ndyn = 0, dynoff = (unsigned char *)dyn - buf;
	size_t stroff = dynoff + 80 * sizeof(Elf64_Dyn), strsz = 1, end;
	char *str = (char *)buf + stroff;

	memset(buf, 0, FILEMAX);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 2;
	str[0] = '\0';
#define ADDSTR(s) ({ size_t at_ = strsz; strcpy(str + strsz, (s));	\
	strsz += strlen(s) + 1; at_; })
	for (int i = 0; i < sp->nneeded; i++) {
		dyn[ndyn].d_tag = DT_NEEDED;
		dyn[ndyn++].d_un.d_val = ADDSTR(sp->needed[i]);
	}
	if (sp->rpath != NULL && sp->rpath_first) {
		dyn[ndyn].d_tag = DT_RPATH;
		dyn[ndyn++].d_un.d_val = ADDSTR(sp->rpath);
	}
	if (sp->runpath != NULL) {
		dyn[ndyn].d_tag = DT_RUNPATH;
		dyn[ndyn++].d_un.d_val = ADDSTR(sp->runpath);
	}
	if (sp->rpath != NULL && !sp->rpath_first) {
		dyn[ndyn].d_tag = DT_RPATH;
		dyn[ndyn++].d_un.d_val = ADDSTR(sp->rpath);
	}
#undef ADDSTR
	dyn[ndyn].d_tag = DT_STRTAB;
	dyn[ndyn++].d_un.d_ptr = (sp->strtab_outside ? 0x10000000 : VADDR) +
	    stroff;
	dyn[ndyn].d_tag = DT_STRSZ;
	dyn[ndyn++].d_un.d_val = strsz;
	dyn[ndyn].d_tag = DT_NULL;
	end = stroff + strsz;
	ph[0].p_type = PT_LOAD;
	ph[0].p_offset = 0;
	ph[0].p_vaddr = VADDR;
	ph[0].p_filesz = ph[0].p_memsz = end;
	ph[1].p_type = sp->no_dynamic ? PT_NOTE : PT_DYNAMIC;
	ph[1].p_offset = dynoff;
	ph[1].p_vaddr = VADDR + dynoff;
	ph[1].p_filesz = ph[1].p_memsz = (ndyn + 1) * sizeof(Elf64_Dyn);
	return end;
}

static char path[256];

static void
put(const unsigned char *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* Every string of d NUL-terminated within its buffer. */
static bool
terminated(const struct elfdyn *d)
{
	if (d->nneeded < 0 || d->nneeded > ELFDYN_MAXNEEDED ||
	    memchr(d->path, '\0', sizeof(d->path)) == NULL)
		return false;
	for (int i = 0; i < d->nneeded; i++)
		if (memchr(d->needed[i], '\0', ELFDYN_NAMEMAX) == NULL)
			return false;
	return true;
}

static unsigned char buf[FILEMAX], mut[FILEMAX];

static void
test_read(void)
{
	struct spec sp = { .needed = { "libmpi.so", "libc.so.6" },
	    .nneeded = 2, .runpath = "$ORIGIN/lib:/opt/mpiv/lib" };
	struct elfdyn d;
	char longname[300];

	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && d.nneeded == 2 &&
	    strcmp(d.needed[0], "libmpi.so") == 0 &&
	    strcmp(d.needed[1], "libc.so.6") == 0 &&
	    strcmp(d.path, "$ORIGIN/lib:/opt/mpiv/lib") == 0 && d.runpath,
	    "two names and a RUNPATH");

	sp.runpath = NULL;
	sp.rpath = "/rp";
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && strcmp(d.path, "/rp") == 0 &&
	    !d.runpath, "an RPATH alone");

	sp.runpath = "/run";
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && strcmp(d.path, "/run") == 0 &&
	    d.runpath, "RUNPATH after RPATH: the RUNPATH");
	sp.rpath_first = true;
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && strcmp(d.path, "/run") == 0 &&
	    d.runpath, "RUNPATH before RPATH: the RUNPATH");

	sp.runpath = sp.rpath = NULL;
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && d.path[0] == '\0' &&
	    d.nneeded == 2, "no path: empty");

	sp.nneeded = 40;
	for (int i = 0; i < 40; i++)
		sp.needed[i] = i % 2 ? "libx.so" : "liby.so.1";
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && d.nneeded == ELFDYN_MAXNEEDED &&
	    strcmp(d.needed[ELFDYN_MAXNEEDED - 1], "libx.so") == 0,
	    "40 names: the first %d kept", ELFDYN_MAXNEEDED);

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	sp.nneeded = 1;
	sp.needed[0] = longname;
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == 0 && d.nneeded == 1 &&
	    strlen(d.needed[0]) == ELFDYN_NAMEMAX - 1, "a 299-byte name: cut "
	    "to %d", ELFDYN_NAMEMAX - 1);

	sp.needed[0] = "libmpi.so";
	sp.no_dynamic = true;
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == -1 && d.nneeded == 0,
	    "no dynamic section (a static program): -1");
	sp.no_dynamic = false;
	sp.strtab_outside = true;
	put(buf, mkelf(buf, &sp));
	CHECK(elfdyn_read(path, &d) == -1, "a string table in no loaded "
	    "segment: -1");
	sp.strtab_outside = false;

	put((const unsigned char *)"#!/bin/sh\necho hi\n", 18);
	CHECK(elfdyn_read(path, &d) == -1, "a script: -1");
	mkelf(buf, &sp);
	buf[EI_CLASS] = ELFCLASS32;
	put(buf, FILEMAX);
	CHECK(elfdyn_read(path, &d) == -1, "a 32-bit ELF: -1");
	CHECK(elfdyn_read("/nonexistent/prog", &d) == -1, "no such file: -1");
}

static void
test_damaged(void)
{
	struct spec sp = { .needed = { "libmpi.so", "libm.so.6" },
	    .nneeded = 2, .runpath = "$ORIGIN/../lib" };
	struct elfdyn d;
	size_t len = mkelf(buf, &sp), cut;
	int bad = 0, ok0 = 0, rounds = 3000;

	for (cut = 0; cut < len; cut++) {
		put(buf, cut);
		if (elfdyn_read(path, &d) == 0)
			ok0++;
		if (!terminated(&d))
			bad++;
	}
	CHECK(bad == 0, "every truncation of a %zu-byte file: strings "
	    "terminated (%d read as a dynamic section)", len, ok0);
	bad = 0;
	for (int r = 0; r < rounds; r++) {
		memcpy(mut, buf, len);
		for (int k = 1 + (int)(rng() % 8); k > 0; k--) {
			size_t at = rng() % len;

			/* mostly the headers and the dynamic section */
			if (rng() % 2)
				at %= sizeof(Elf64_Ehdr) + 2 *
				    sizeof(Elf64_Phdr) + 12 * sizeof(Elf64_Dyn);
			mut[at] = (unsigned char)rng();
		}
		put(mut, len);
		(void)elfdyn_read(path, &d);
		if (!terminated(&d))
			bad++;
	}
	CHECK(bad == 0, "%d files with random bytes changed: no crash, "
	    "strings terminated", rounds);
}

static void
test_dir(void)
{
	char out[64];

	CHECK(elfdyn_dir("$ORIGIN/lib", "/opt/app/prog", out, sizeof(out)) ==
	    1 && strcmp(out, "/opt/app/lib") == 0, "$ORIGIN/lib: %s", out);
	CHECK(elfdyn_dir("${ORIGIN}/../lib", "/opt/app/prog", out,
	    sizeof(out)) == 1 && strcmp(out, "/opt/app/../lib") == 0,
	    "${ORIGIN}/../lib: %s", out);
	CHECK(elfdyn_dir("$ORIGIN", "prog", out, sizeof(out)) == 1 &&
	    strcmp(out, ".") == 0, "$ORIGIN of a bare name: %s", out);
	CHECK(elfdyn_dir("/usr/lib", "/opt/app/prog", out, sizeof(out)) == 0 &&
	    strcmp(out, "/usr/lib") == 0, "an absolute directory: as is");
	CHECK(elfdyn_dir("$ORIGIN/a-rather-long-directory-name-indeed",
	    "/opt/some/deeper/place/for/the/program/prog", out, sizeof(out)) ==
	    -1, "too long for out: -1");
}

int
main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	if (argc > 2 && strcmp(argv[1], "--seed") == 0)
		rng_state = strtoull(argv[2], NULL, 0) | 1;
	printf("# seed %#" PRIx64 " (--seed to repeat)\n", rng_state);
	snprintf(path, sizeof(path), "%s/test_elfdyn.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if ((fd = mkstemp(path)) < 0) {
		perror("mkstemp");
		return 2;
	}
	close(fd);
	test_read();
	test_damaged();
	test_dir();
	unlink(path);
	printf("%s\n", failures ? "# FAILED" : "# all passed");
	return failures ? 1 : 0;
}
