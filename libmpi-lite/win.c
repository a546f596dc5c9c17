/*
 * win.c: one-sided windows as objects. A window owns a private
 * communicator over the group of the one it was created from (a fresh
 * context, so its messages never meet the program's), the sizes and
 * displacement units of every rank's window (for the origin's range
 * checks), the regions attached to a dynamic window, a name, an info and
 * an error handler. Communication and synchronization: win_rma.c and
 * win_sync.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "win.h"

/* Tag of the allgather of sizes on the private communicator (nothing
   else runs collectives there). */
#define WIN_TAG_SIZES 1

int
win_err(MPI_Win win, int code, const char *fn)
{
	if (win == MPI_WIN_NULL || win == &mpiv_win_null)
		return mpiv_err(NULL, code, fn);
	return mpiv_err_handler(win->errh, &win, code, fn);
}

int
win_check(MPI_Win win)
{
	if (win == MPI_WIN_NULL || win == &mpiv_win_null || win->comm == NULL)
		return MPI_ERR_WIN;
	return MPI_SUCCESS;
}

bool
win_local_range(MPI_Win win, uintptr_t addr, size_t len)
{
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
		uintptr_t b = (uintptr_t)win->base;
		return addr >= b && len <= (size_t)win->size &&
		    addr - b <= (size_t)win->size - len;
	}
	/* attached regions side by side cover a range together: walk it
	   from region to region */
	for (;;) {
		size_t i, in;

		for (i = 0; i < win->nregions; i++) {
			const struct win_region *r = &win->regions[i];

			if (addr >= r->base && addr - r->base <= r->len &&
			    (addr - r->base < r->len || len == 0))
				break;
		}
		if (i == win->nregions)
			return false;
		in = win->regions[i].len - (addr - win->regions[i].base);
		if (len <= in)
			return true;
		addr += in;
		len -= in;
	}
}

void
win_batch_clear(struct win_batch *b)
{
	for (size_t i = 0; i < b->ngets; i++)
		mpiv_dt_release(b->gets[i].dt);
	free(b->buf);
	free(b->gets);
	free(b->reply);
	memset(b, 0, sizeof(*b));
}

/* The predefined null window: MPI_WIN_NULL is NULL, this object only
   makes mpi.h's declaration whole. */
struct mpiv_win mpiv_win_null;

/* Windows created so far by this rank: each one's serial names it in
   the log of passive-target services (creation is collective, so a
   re-execution numbers them the same). */
static uint32_t win_serials;

static void
win_destroy(struct mpiv_win *w)
{
	if (w->out != NULL && w->comm != NULL)
		for (int i = 0; i < w->comm->size; i++)
			win_batch_clear(&w->out[i]);
	free(w->out);
	win_pas_free(w);
	win_batch_clear(&w->self_in);
	free(w->sizes);
	free(w->units);
	free(w->regions);
	free(w->access);
	free(w->expose);
	free(w->post_hdrs);
	free(w->post_reqs);
	if (w->info != NULL)
		MPI_Info_free(&w->info);
	mpiv_errh_release(w->errh);
	if (w->comm != NULL)
		MPI_Comm_free(&w->comm);
	if (w->owns_base)
		free(w->base);
	free(w);
}

/*
 * Collective over comm: a window of `flavor` over base/size/disp_unit
 * (base already allocated by the caller for Win_allocate; owned then).
 * Every rank learns every other's size and unit. MPI code, no handler.
 */
static int
win_new(MPI_Comm comm, void *base, MPI_Aint size, int disp_unit, int flavor,
    MPI_Info info, MPI_Win *out)
{
	struct mpiv_win *w;
	uint32_t ctx;
	MPI_Aint mine[2], *all;
	int rc, n = comm->size;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return MPI_ERR_NO_MEM;
	w->base = base;
	w->size = size;
	w->disp_unit = disp_unit;
	w->flavor = flavor;
	w->model = MPI_WIN_SEPARATE;
	w->errh = MPI_ERRORS_ARE_FATAL;
	if ((rc = mpiv_comm_alloc_context(comm, &ctx)) != MPI_SUCCESS)
		goto out_free;
	if ((rc = mpiv_comm_build(comm->group, ctx, MPI_ERRORS_RETURN,
	    &w->comm)) != MPI_SUCCESS)
		goto out_free;
	snprintf(w->comm->name, sizeof(w->comm->name), "mpiv window");
	w->comm->of_window = true;	/* what its blocked ranks say */
	w->out = calloc((size_t)n, sizeof(*w->out));
	w->sizes = calloc((size_t)n, sizeof(*w->sizes));
	w->units = calloc((size_t)n, sizeof(*w->units));
	all = calloc((size_t)n * 2, sizeof(*all));
	if (w->out == NULL || w->sizes == NULL || w->units == NULL ||
	    all == NULL) {
		free(all);
		rc = MPI_ERR_NO_MEM;
		goto out_free;
	}
	mine[0] = size;
	mine[1] = disp_unit;
	rc = mpiv_coll_allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, w->comm,
	    WIN_TAG_SIZES);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
		w->sizes[i] = all[2 * i];
		w->units[i] = (int)all[2 * i + 1];
	}
	free(all);
	if (rc != MPI_SUCCESS)
		goto out_free;
	if (info != MPI_INFO_NULL &&
	    (rc = MPI_Info_dup(info, &w->info)) != MPI_SUCCESS)
		goto out_free;
	w->serial = ++win_serials;
	if ((rc = win_pas_init(w)) != MPI_SUCCESS)
		goto out_free;
	*out = w;
	return MPI_SUCCESS;

out_free:
	w->owns_base = false;	/* the caller frees what it allocated */
	win_destroy(w);
	return rc;
}

/* Argument checks shared by the creation calls. */
static int
win_check_create(MPI_Comm comm, MPI_Aint size, int disp_unit, MPI_Info info,
    const void *out)
{
	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return MPI_ERR_COMM;
	if (comm->remote != NULL) {
		mpiv_err_detail("not supported on an intercommunicator by mpiv");
		return MPI_ERR_COMM;
	}
	if (out == NULL)
		return MPI_ERR_ARG;
	if (size < 0) {
		mpiv_err_detail("size %lld is negative", (long long)size);
		return MPI_ERR_SIZE;
	}
	if (disp_unit <= 0) {
		mpiv_err_detail("disp_unit %d is not positive", disp_unit);
		return MPI_ERR_DISP;
	}
	if (info == &mpiv_info_null)
		return MPI_ERR_INFO;
	return MPI_SUCCESS;
}

int
MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
    MPI_Comm comm, MPI_Win *win)
{
	int rc;

	if ((rc = win_check_create(comm, size, disp_unit, info, win)) !=
	    MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Win_create");
	if (base == NULL && size > 0)
		return mpiv_err(comm, MPI_ERR_BASE, "MPI_Win_create");
	rc = win_new(comm, base, size, disp_unit, MPI_WIN_FLAVOR_CREATE, info,
	    win);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Win_create");
}

/* Win_allocate and Win_allocate_shared: the memory is the library's. */
static int
win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
    void *baseptr, MPI_Win *win, int flavor, const char *fn)
{
	void *mem;
	int rc;

	if ((rc = win_check_create(comm, size, disp_unit, info, win)) !=
	    MPI_SUCCESS || (rc = baseptr == NULL ? MPI_ERR_ARG : 0) != 0)
		return mpiv_err(comm, rc, fn);
	/* Zeroed, so that a replayed rank starts from the same bytes. */
	if ((mem = calloc(1, size > 0 ? (size_t)size : 1)) == NULL) {
		mpiv_err_detail("%lld bytes", (long long)size);
		return mpiv_err(comm, MPI_ERR_NO_MEM, fn);
	}
	if ((rc = win_new(comm, mem, size, disp_unit, flavor, info, win)) !=
	    MPI_SUCCESS) {
		free(mem);
		return mpiv_err(comm, rc, fn);
	}
	(*win)->owns_base = true;
	memcpy(baseptr, &mem, sizeof(mem));
	return MPI_SUCCESS;
}

int
MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
    void *baseptr, MPI_Win *win)
{
	return win_allocate(size, disp_unit, info, comm, baseptr, win,
	    MPI_WIN_FLAVOR_ALLOCATE, "MPI_Win_allocate");
}

/* The ranks of an mpiv job share no memory (each may be relaunched on
   any node): a "shared" window is an allocated one whose only directly
   addressable segment is the caller's own. */
int
MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
    MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	return win_allocate(size, disp_unit, info, comm, baseptr, win,
	    MPI_WIN_FLAVOR_SHARED, "MPI_Win_allocate_shared");
}

int
MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
    void *baseptr)
{
	int me;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_shared_query");
	if (size == NULL || disp_unit == NULL || baseptr == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_shared_query");
	if (win->flavor != MPI_WIN_FLAVOR_SHARED)
		return win_err(win, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query");
	me = win->comm->rank;
	if (rank == MPI_PROC_NULL && win->comm->size == 1)
		rank = me;
	if (rank != me) {
		mpiv_err_detail("rank %d's segment: mpiv ranks share no memory, "
		    "only the caller's own segment (rank %d) can be queried",
		    rank, me);
		return win_err(win, MPI_ERR_RMA_SHARED, "MPI_Win_shared_query");
	}
	*size = win->size;
	*disp_unit = win->disp_unit;
	memcpy(baseptr, &win->base, sizeof(win->base));
	return MPI_SUCCESS;
}

int
MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	int rc;

	if ((rc = win_check_create(comm, 0, 1, info, win)) != MPI_SUCCESS)
		return mpiv_err(comm, rc, "MPI_Win_create_dynamic");
	rc = win_new(comm, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, info, win);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(comm, rc, "MPI_Win_create_dynamic");
}

int
MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	struct win_region *r;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_attach");
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return win_err(win, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");
	if (size < 0 || (base == NULL && size > 0)) {
		mpiv_err_detail("base %p size %lld", base, (long long)size);
		return win_err(win, MPI_ERR_RMA_ATTACH, "MPI_Win_attach");
	}
	for (size_t i = 0; i < win->nregions; i++) {
		r = &win->regions[i];
		if ((uintptr_t)base < r->base + r->len &&
		    r->base < (uintptr_t)base + (size_t)size) {
			mpiv_err_detail("[%p, +%lld) overlaps an attached region",
			    base, (long long)size);
			return win_err(win, MPI_ERR_RMA_ATTACH,
			    "MPI_Win_attach");
		}
	}
	if (win->nregions == win->capregions) {
		size_t cap = win->capregions ? win->capregions * 2 : 4;
		r = realloc(win->regions, cap * sizeof(*r));
		if (r == NULL)
			return win_err(win, MPI_ERR_NO_MEM, "MPI_Win_attach");
		win->regions = r;
		win->capregions = cap;
	}
	win->regions[win->nregions].base = (uintptr_t)base;
	win->regions[win->nregions].len = (size_t)size;
	win->nregions++;
	return MPI_SUCCESS;
}

int
MPI_Win_detach(MPI_Win win, const void *base)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_detach");
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return win_err(win, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach");
	for (size_t i = 0; i < win->nregions; i++) {
		if (win->regions[i].base != (uintptr_t)base)
			continue;
		win->regions[i] = win->regions[--win->nregions];
		return MPI_SUCCESS;
	}
	mpiv_err_detail("%p is not the base of an attached region", base);
	return win_err(win, MPI_ERR_RMA_ATTACH, "MPI_Win_detach");
}

int
MPI_Win_free(MPI_Win *win)
{
	struct mpiv_win *w;
	int rc;

	if (win == NULL || win_check(*win) != MPI_SUCCESS)
		return win_err(win ? *win : NULL, MPI_ERR_WIN, "MPI_Win_free");
	w = *win;
	if (w->access_open || w->expose_open || win_pas_open(w)) {
		mpiv_err_detail("an epoch is still open (%s)", w->access_open ?
		    "MPI_Win_start without MPI_Win_complete" :
		    win_pas_open(w) ? "MPI_Win_lock without MPI_Win_unlock" :
		    "MPI_Win_post without MPI_Win_wait");
		return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_free");
	}
	for (int i = 0; i < w->comm->size; i++)
		if (w->out[i].nops > 0) {
			mpiv_err_detail("operations to rank %d were never "
			    "synchronized (call MPI_Win_fence first)", i);
			return win_err(w, MPI_ERR_RMA_SYNC, "MPI_Win_free");
		}
	/* The attributes' delete callbacks, before the collective part (a
	   failing one leaves the window as it was). */
	if ((rc = mpiv_win_attr_free_all(w)) != MPI_SUCCESS)
		return win_err(w, rc, "MPI_Win_free");
	/* Collective: nobody leaves while a peer may still reach it. */
	if ((rc = MPI_Barrier(w->comm)) != MPI_SUCCESS)
		return win_err(w, rc, "MPI_Win_free");
	/* every origin had its answers: the posted receive can go */
	rc = win_pas_fini(w);
	win_destroy(w);
	*win = MPI_WIN_NULL;
	if (rc != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Win_free");
	*win = MPI_WIN_NULL;
	return MPI_SUCCESS;
}

int
MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_get_group");
	if (group == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_get_group");
	mpiv_group_retain(win->comm->group);
	*group = win->comm->group;
	return MPI_SUCCESS;
}

int
MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
	void *v;
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_get_attr");
	if (attribute_val == NULL || flag == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_get_attr");
	switch (keyval) {
	case MPI_WIN_BASE:
		v = win->base;
		break;
	case MPI_WIN_SIZE:
		v = &win->size;
		break;
	case MPI_WIN_DISP_UNIT:
		v = &win->disp_unit;
		break;
	case MPI_WIN_CREATE_FLAVOR:
		v = &win->flavor;
		break;
	case MPI_WIN_MODEL:
		v = &win->model;
		break;
	default:
		rc = mpiv_win_attr_get(win, keyval, attribute_val, flag);
		return rc == MPI_SUCCESS ? rc :
		    win_err(win, rc, "MPI_Win_get_attr");
	}
	*flag = 1;
	memcpy(attribute_val, &v, sizeof(v));
	return MPI_SUCCESS;
}

int
MPI_Win_set_name(MPI_Win win, const char *name)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_set_name");
	if (name == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_set_name");
	snprintf(win->name, sizeof(win->name), "%s", name);
	return MPI_SUCCESS;
}

int
MPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_get_name");
	if (name == NULL || resultlen == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_get_name");
	snprintf(name, MPI_MAX_OBJECT_NAME, "%s", win->name);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}

int
MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	MPI_Info dup = MPI_INFO_NULL;
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_set_info");
	if (info == MPI_INFO_NULL || info == &mpiv_info_null)
		return win_err(win, MPI_ERR_INFO, "MPI_Win_set_info");
	if ((rc = MPI_Info_dup(info, &dup)) != MPI_SUCCESS)
		return win_err(win, rc, "MPI_Win_set_info");
	if (win->info != NULL)
		MPI_Info_free(&win->info);
	win->info = dup;
	return MPI_SUCCESS;
}

/* The hints the window uses: the ones the program set are handed back
   (a new info object the caller frees); mpiv reads no_locks only when
   the window is created (win_passive.c). */
int
MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_get_info");
	if (info_used == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_get_info");
	static const char *const dflt[][2] = {
		/* the standard's defaults, unless the program set them */
		{ "no_locks", "false" },
		{ "accumulate_ordering", "rar,raw,war,waw" },
		{ "accumulate_ops", "same_op_no_op" },
	};

	if (win->info != NULL)
		rc = MPI_Info_dup(win->info, info_used);
	else
		rc = MPI_Info_create(info_used);
	for (size_t i = 0; rc == MPI_SUCCESS && i < sizeof(dflt) /
	    sizeof(dflt[0]); i++) {
		char v[2];
		int flag;

		if ((rc = MPI_Info_get(*info_used, dflt[i][0], 1, v, &flag)) ==
		    MPI_SUCCESS && !flag)
			rc = MPI_Info_set(*info_used, dflt[i][0], dflt[i][1]);
	}
	return rc == MPI_SUCCESS ? rc : win_err(win, rc, "MPI_Win_get_info");
}

int
MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn,
    MPI_Errhandler *errhandler)
{
	/* Same object as a communicator's: errh.c calls fn with the
	   handle's address and the code. */
	return MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn,
	    errhandler);
}

int
MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_set_errhandler");
	if (errhandler == MPI_ERRHANDLER_NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_set_errhandler");
	mpiv_errh_retain(errhandler);
	mpiv_errh_release(win->errh);
	win->errh = errhandler;
	return MPI_SUCCESS;
}

int
MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_get_errhandler");
	if (errhandler == NULL)
		return win_err(win, MPI_ERR_ARG, "MPI_Win_get_errhandler");
	mpiv_errh_retain(win->errh);
	*errhandler = win->errh;
	return MPI_SUCCESS;
}

int
MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_call_errhandler");
	win_err(win, errorcode, "MPI_Win_call_errhandler");
	/* As for communicators: MPI_SUCCESS if the handler returned. */
	return MPI_SUCCESS;
}
