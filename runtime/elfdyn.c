/*
 * elfdyn.c: a program's DT_NEEDED names and its RUNPATH or RPATH, read
 * with pread into the caller's struct (no allocation: the node agent
 * calls it in a forked child, after switching to the rank's user).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfdyn.h"

/* pread of exactly n bytes at off: 0, or -1. */
static int
elfdyn_pread(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off) == (ssize_t)n ? 0 : -1;
}

/* The NUL-terminated string at off of the string table, cut to len - 1
   bytes. 0, or -1 when nothing could be read. */
static int
elfdyn_str(int fd, uint64_t stroff, uint64_t off, char *out, size_t len)
{
	ssize_t n = pread(fd, out, len - 1, (off_t)(stroff + off));

	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

int
elfdyn_read(const char *file, struct elfdyn *d)
{
	enum { MAXPH = 64, MAXDYN = 512 };
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAXPH];
	Elf64_Dyn dyn[MAXDYN];
	uint64_t strtab = 0, strsz = 0, rpoff = 0, stroff = 0;
	bool haverp = false;
	size_t ndyn = 0;
	int fd, rc = -1;

	memset(d, 0, sizeof(*d));
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (elfdyn_pread(fd, &eh, sizeof(eh), 0) < 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phnum == 0 ||
	    eh.e_phnum > MAXPH || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    elfdyn_pread(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr),
	    (off_t)eh.e_phoff) < 0)
		goto out;
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC) {
			ndyn = ph[i].p_filesz / sizeof(Elf64_Dyn);
			if (ndyn > MAXDYN)
				ndyn = MAXDYN;
			if (elfdyn_pread(fd, dyn, ndyn * sizeof(Elf64_Dyn),
			    (off_t)ph[i].p_offset) < 0)
				goto out;
		}
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_RUNPATH || (dyn[i].d_tag ==
		    DT_RPATH && !d->runpath)) {
			/* a RUNPATH makes the loader ignore the RPATH */
			rpoff = dyn[i].d_un.d_val;
			d->runpath = dyn[i].d_tag == DT_RUNPATH;
			haverp = true;
		}
	/* the string table's place in the file, from the segment it is in */
	for (int i = 0; i < eh.e_phnum && strtab != 0; i++)
		if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr &&
		    strtab < ph[i].p_vaddr + ph[i].p_filesz) {
			stroff = strtab - ph[i].p_vaddr + ph[i].p_offset;
			break;
		}
	if (stroff == 0)
		goto out;
	rc = 0;
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_NEEDED && dyn[i].d_un.d_val < strsz &&
		    d->nneeded < ELFDYN_MAXNEEDED &&
		    elfdyn_str(fd, stroff, dyn[i].d_un.d_val,
		    d->needed[d->nneeded], ELFDYN_NAMEMAX) == 0)
			d->nneeded++;
	if (haverp && rpoff < strsz &&
	    elfdyn_str(fd, stroff, rpoff, d->path, sizeof(d->path)) < 0)
		d->path[0] = '\0';
out:
	close(fd);
	return rc;
}

int
elfdyn_dir(const char *dir, const char *prog, char *out, size_t outlen)
{
	const char *slash = strrchr(prog, '/'), *rest = NULL;
	int n;

	if (strncmp(dir, "$ORIGIN", 7) == 0)
		rest = dir + 7;
	else if (strncmp(dir, "${ORIGIN}", 9) == 0)
		rest = dir + 9;
	if (rest == NULL)
		n = snprintf(out, outlen, "%s", dir);
	else if (slash == NULL)
		n = snprintf(out, outlen, ".%s", rest);
	else
		n = snprintf(out, outlen, "%.*s%s", slash == prog ? 1 :
		    (int)(slash - prog), prog, rest);
	if (n < 0 || (size_t)n >= outlen)
		return -1;
	return rest != NULL;
}
