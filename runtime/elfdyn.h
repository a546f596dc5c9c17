/*
 * elfdyn: what the dynamic loader reads from a program before it runs
 * it: the libraries it needs (DT_NEEDED) and the directories it searches
 * first (DT_RUNPATH, else DT_RPATH), with $ORIGIN. System calls and the
 * caller's memory only, so a forked child may use it.
 */
#ifndef MPIV_ELFDYN_H
#define MPIV_ELFDYN_H

#include <stdbool.h>
#include <stddef.h>

#define ELFDYN_MAXNEEDED	32
#define ELFDYN_NAMEMAX		128
#define ELFDYN_PATHMAX		4096

struct elfdyn {
	int nneeded;		/* names past ELFDYN_MAXNEEDED are left out */
	char needed[ELFDYN_MAXNEEDED][ELFDYN_NAMEMAX];
	char path[ELFDYN_PATHMAX];	/* colon-separated; "" when none */
	bool runpath;		/* path is a DT_RUNPATH (else an RPATH) */
};

/*
 * Reads file's dynamic section into *d. 0; -1 when it cannot be opened,
 * or is not a 64-bit ELF file with a dynamic section and string table (a
 * static program, a script). Names or a path too long for *d are cut.
 */
int elfdyn_read(const char *file, struct elfdyn *d);

/*
 * One directory of a search path, with a leading $ORIGIN or ${ORIGIN}
 * replaced by the directory of prog (as the loader does for a program
 * run as prog), into out. 1 when it began with $ORIGIN, 0 when not, -1
 * when it does not fit in outlen.
 */
int elfdyn_dir(const char *dir, const char *prog, char *out, size_t outlen);

#endif
