/*
 * fhandle.c: Fortran handles. C handles are pointers; a Fortran handle is
 * an INTEGER naming a slot of a table per kind (communicators, datatypes
 * ...). The first slots hold the predefined handles at the fixed values
 * of fortran.h (mpif.h's PARAMETERs); a C handle seen for the first time
 * gets the most recently freed slot, else a new one at the end; freeing
 * the object (MPI_COMM_FREE, a completed request ...) frees its slot. A
 * slot counts the handles MPI calls gave out for it (an object handed
 * out twice, as two MPI_COMM_GROUP of one communicator give the same
 * group, is freed twice, as in C), and goes with the last. A hash from
 * pointer to slot makes c2f O(1).
 *
 * The tables live in process memory: a checkpoint image carries them,
 * and a re-executed rank, making the same calls in the same order,
 * numbers its handles the same (the free list is LIFO and nothing
 * depends on addresses but the hash's layout, which nobody sees).
 *
 * Also here: MPI_Status_c2f/f2c, the COMMON blocks of mpif.h's special
 * addresses, and the Fortran string helpers.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fortran.h"
#include "impl.h"

_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0,
    "MPI_Status must be a whole number of Fortran INTEGERs");
_Static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Count) == 8,
    "mpif.h says MPI_ADDRESS_KIND = MPI_COUNT_KIND = 8");

/* mpif.h's COMMON blocks: their addresses are the special values. The
   sizes are those mpif.h declares (MPI_STATUS_SIZE INTEGERs ...). */
MPI_Fint mpi_fortran_bottom_;
MPI_Fint mpi_fortran_in_place_;
MPI_Fint mpi_fortran_status_ignore_[sizeof(MPI_Status) / sizeof(MPI_Fint)];
MPI_Fint mpi_fortran_statuses_ignore_[sizeof(MPI_Status) / sizeof(MPI_Fint)];
MPI_Fint mpi_fortran_errcodes_ignore_[1];
char mpi_fortran_argv_null_[1];
MPI_Fint mpi_fortran_unweighted_[1];
MPI_Fint mpi_fortran_weights_empty_[1];
char mpi_fortran_argvs_null_[1];

#define FH_TOMB ((void *)(uintptr_t)1)	/* a deleted hash entry */

struct fh_hent {
	void *p;		/* NULL: empty; FH_TOMB: deleted */
	MPI_Fint idx;
};

struct fh_table {
	void **obj;		/* slot -> C handle (NULL: free) */
	MPI_Fint *refs;		/* handles given out for the slot (0: none
				   counted, as by MPI_Comm_c2f) */
	MPI_Fint n, cap;	/* slots in use or freed: 0..n-1 */
	MPI_Fint npredef;	/* slots 0..npredef-1 are fixed */
	MPI_Fint *freel;	/* freed slots, LIFO */
	MPI_Fint nfree, freecap;
	struct fh_hent *hash;	/* pointer -> slot, open addressing */
	size_t hcap, hused;	/* hused counts live and deleted entries */
};

static struct fh_table fh_tabs[MPIV_F_NKINDS];
static bool fh_ready;
static pthread_mutex_t fh_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t
fh_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

/* The hash entry of p, or NULL. */
static struct fh_hent *
fh_hfind(struct fh_table *t, const void *p)
{
	if (t->hcap == 0)
		return NULL;
	for (size_t i = fh_hash(p, t->hcap);; i = (i + 1) & (t->hcap - 1)) {
		if (t->hash[i].p == NULL)
			return NULL;
		if (t->hash[i].p == p)
			return &t->hash[i];
	}
}

static int fh_hput(struct fh_table *t, void *p, MPI_Fint idx);

/* Rebuilds the hash at twice the live entries' room (drops tombstones). */
static int
fh_hgrow(struct fh_table *t)
{
	size_t live = 0, ncap = 64;
	struct fh_hent *old = t->hash;
	size_t ocap = t->hcap;

	for (size_t i = 0; i < ocap; i++)
		if (old[i].p != NULL && old[i].p != FH_TOMB)
			live++;
	while (ncap < 4 * (live + 1))
		ncap *= 2;
	if ((t->hash = calloc(ncap, sizeof(*t->hash))) == NULL) {
		t->hash = old;
		return -1;
	}
	t->hcap = ncap;
	t->hused = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].p != NULL && old[i].p != FH_TOMB)
			fh_hput(t, old[i].p, old[i].idx);
	free(old);
	return 0;
}

static int
fh_hput(struct fh_table *t, void *p, MPI_Fint idx)
{
	size_t i;

	if ((t->hused + 1) * 2 > t->hcap && fh_hgrow(t) != 0)
		return -1;
	for (i = fh_hash(p, t->hcap); t->hash[i].p != NULL &&
	    t->hash[i].p != FH_TOMB; i = (i + 1) & (t->hcap - 1))
		;
	if (t->hash[i].p == NULL)
		t->hused++;
	t->hash[i].p = p;
	t->hash[i].idx = idx;
	return 0;
}

/* Room for slot t->n. -1 if out of memory. */
static int
fh_room(struct fh_table *t)
{
	MPI_Fint ncap, *nr;
	void **no;

	if (t->n < t->cap)
		return 0;
	ncap = t->cap ? t->cap * 2 : 64;
	if (ncap < t->cap ||
	    (nr = realloc(t->refs, (size_t)ncap * sizeof(*nr))) == NULL)
		return -1;
	t->refs = nr;
	if ((no = realloc(t->obj, (size_t)ncap * sizeof(*no))) == NULL)
		return -1;
	t->obj = no;
	t->cap = ncap;
	return 0;
}

/* A slot for p (not NULL): the last freed one, else a new one. -1 if out
   of memory. */
static MPI_Fint
fh_slot_new(struct fh_table *t, void *p)
{
	bool reused = t->nfree > 0;
	MPI_Fint idx;

	if (reused)
		idx = t->freel[--t->nfree];
	else if (fh_room(t) != 0)
		return -1;
	else
		idx = t->n++;
	if (fh_hput(t, p, idx) != 0) {
		if (reused)
			t->nfree++;	/* still in freel[] */
		else
			t->n--;
		return -1;
	}
	t->obj[idx] = p;
	t->refs[idx] = 0;
	return idx;
}

#define FH_SET(kind, cname, val) fh_predef(MPIV_F_##kind, (void *)(cname), val);

/* Predefined slot val of kind holds c (the X list gives each kind's
   values in order from 0). */
static void
fh_predef(enum mpiv_fkind kind, void *c, MPI_Fint val)
{
	struct fh_table *t = &fh_tabs[kind];

	if (val != t->n || fh_room(t) != 0 ||
	    (c != NULL && fh_hput(t, c, val) != 0))
		mpiv_abort_job(1, "libmpi: cannot set up the Fortran handles");
	t->refs[t->n] = 0;
	t->obj[t->n++] = c;
	t->npredef = t->n;
}

/* Fills the predefined slots (once, under fh_lock). The null handles
   (slot 0, C NULL) are not in the hash: c2f(NULL) is 0 directly. */
static void
fh_init(void)
{
	if (fh_ready)
		return;
	MPIV_F_PREDEFINED(FH_SET)
	fh_ready = true;
}

/* c's slot, a new one if none; counted as given out when out. */
static MPI_Fint
fh_c2f(enum mpiv_fkind kind, void *c, bool out)
{
	struct fh_table *t = &fh_tabs[kind];
	struct fh_hent *e;
	MPI_Fint idx;

	if (c == NULL)
		return 0;
	pthread_mutex_lock(&fh_lock);
	fh_init();
	if ((e = fh_hfind(t, c)) != NULL)
		idx = e->idx;
	else
		idx = fh_slot_new(t, c);
	if (out && idx >= t->npredef)
		t->refs[idx]++;
	pthread_mutex_unlock(&fh_lock);
	return idx;
}

MPI_Fint
mpiv_f_c2f(enum mpiv_fkind kind, void *c)
{
	return fh_c2f(kind, c, false);
}

MPI_Fint
mpiv_f_out(enum mpiv_fkind kind, void *c)
{
	return fh_c2f(kind, c, true);
}

int
mpiv_f_f2c(enum mpiv_fkind kind, MPI_Fint f, void **c)
{
	struct fh_table *t = &fh_tabs[kind];
	int rc = 0;

	*c = NULL;
	if (f == 0)
		return 0;
	pthread_mutex_lock(&fh_lock);
	fh_init();
	if (f < 0 || f >= t->n || t->obj[f] == NULL)
		rc = -1;
	else
		*c = t->obj[f];
	pthread_mutex_unlock(&fh_lock);
	return rc;
}

void
mpiv_f_release(enum mpiv_fkind kind, MPI_Fint f)
{
	struct fh_table *t = &fh_tabs[kind];
	struct fh_hent *e;

	pthread_mutex_lock(&fh_lock);
	fh_init();
	if (f >= t->npredef && f < t->n && t->obj[f] != NULL &&
	    t->refs[f] > 1) {
		t->refs[f]--;	/* handed out again: not the last */
	} else if (f >= t->npredef && f < t->n && t->obj[f] != NULL) {
		if ((e = fh_hfind(t, t->obj[f])) != NULL)
			e->p = FH_TOMB;
		t->obj[f] = NULL;
		if (t->nfree == t->freecap) {
			MPI_Fint ncap = t->freecap ? t->freecap * 2 : 64;
			MPI_Fint *nf = realloc(t->freel,
			    (size_t)ncap * sizeof(*nf));
			if (nf == NULL) {	/* the slot is lost, not reused */
				pthread_mutex_unlock(&fh_lock);
				return;
			}
			t->freel = nf;
			t->freecap = ncap;
		}
		t->freel[t->nfree++] = f;
	}
	pthread_mutex_unlock(&fh_lock);
}

void
mpiv_f_update(enum mpiv_fkind kind, MPI_Fint *f, void *old, void *now)
{
	if (now == old)
		return;
	if (old != NULL)
		mpiv_f_release(kind, *f);
	*f = mpiv_f_out(kind, now);
}

int
mpiv_f_kind_err(enum mpiv_fkind kind)
{
	switch (kind) {
	case MPIV_F_COMM: return MPI_ERR_COMM;
	case MPIV_F_GROUP: return MPI_ERR_GROUP;
	case MPIV_F_TYPE: return MPI_ERR_TYPE;
	case MPIV_F_OP: return MPI_ERR_OP;
	case MPIV_F_REQUEST: return MPI_ERR_REQUEST;
	case MPIV_F_INFO: return MPI_ERR_INFO;
	case MPIV_F_WIN: return MPI_ERR_WIN;
	case MPIV_F_FILE: return MPI_ERR_FILE;
	default: return MPI_ERR_ARG;
	}
}

/* ---------------- the C API ---------------- */

#define FH_API(Name, CType, kind)					\
	MPI_Fint MPI_##Name##_c2f(CType c)				\
	{								\
		return mpiv_f_c2f(kind, (void *)c);			\
	}								\
	CType MPI_##Name##_f2c(MPI_Fint f)				\
	{								\
		void *c;						\
		(void)mpiv_f_f2c(kind, f, &c);				\
		return (CType)c;					\
	}
FH_API(Comm, MPI_Comm, MPIV_F_COMM)
FH_API(Group, MPI_Group, MPIV_F_GROUP)
FH_API(Type, MPI_Datatype, MPIV_F_TYPE)
FH_API(Op, MPI_Op, MPIV_F_OP)
FH_API(Request, MPI_Request, MPIV_F_REQUEST)
FH_API(Errhandler, MPI_Errhandler, MPIV_F_ERRH)
FH_API(Info, MPI_Info, MPIV_F_INFO)
FH_API(Win, MPI_Win, MPIV_F_WIN)
FH_API(Message, MPI_Message, MPIV_F_MESSAGE)
FH_API(File, MPI_File, MPIV_F_FILE)

/* A Fortran status is the C one's bytes (MPI_STATUS_SIZE INTEGERs):
   MPI_SOURCE, MPI_TAG, MPI_ERROR at Fortran indices 1, 2, 3. */
int
MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
	if (c_status == NULL || f_status == NULL ||
	    mpiv_f_status_ignored(f_status))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Status_c2f");
	memcpy(f_status, c_status, sizeof(*c_status));
	return MPI_SUCCESS;
}

int
MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
	if (c_status == NULL || f_status == NULL ||
	    mpiv_f_status_ignored(f_status))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Status_f2c");
	memcpy(c_status, f_status, sizeof(*c_status));
	return MPI_SUCCESS;
}

/* ---------------- strings ---------------- */

char *
mpiv_f_str_in(const char *s, size_t len, bool lead)
{
	char *c;

	while (len > 0 && s[len - 1] == ' ')
		len--;
	while (lead && len > 0 && *s == ' ') {
		s++;
		len--;
	}
	if ((c = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(c, s, len);
	c[len] = '\0';
	return c;
}

void
mpiv_f_str_out(const char *c, char *f, size_t len)
{
	size_t n = strlen(c);

	if (n > len)
		n = len;
	memcpy(f, c, n);
	memset(f + n, ' ', len - n);
}
