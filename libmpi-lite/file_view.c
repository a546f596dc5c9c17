/*
 * file_view.c: file views (MPI_File_set_view). A view is a displacement
 * and a filetype tiled from it: tile t starts at disp + t * extent and
 * holds the filetype's blocks (its merged typemap, datatype.c) at their
 * displacements. The data a process sees is the concatenation of those
 * blocks, tile after tile; a position in etypes is a byte of that
 * stream (position * etype size). Here such a range of the stream
 * becomes the (file offset, length) extents an operation carries.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

/*
 * A type of a view (etype, filetype) whose typemap goes back in the file
 * (MPI: displacements monotonically non-decreasing) or, in a file open
 * for writing, covers a byte twice: MPI_ERR_IO, as ROMIO answers it. Not
 * checked, as ROMIO does not: tiles that interleave (an extent resized
 * below the data's span).
 */
int
mpiv_fview_check_order(MPI_Datatype t, bool writes)
{
	for (size_t j = 1; j < t->nblocks; j++) {
		const struct mpiv_block *p = &t->blocks[j - 1];
		MPI_Aint cur = t->blocks[j].disp;

		if (cur < p->disp || (writes && cur < p->disp +
		    (MPI_Aint)p->len)) {
			mpiv_err_detail("a type of the view %s (data at byte "
			    "%lld after data at %lld)", cur < p->disp ?
			    "goes back in the file" : "covers bytes twice, "
			    "in a file open for writing", (long long)cur,
			    (long long)p->disp);
			return MPI_ERR_IO;
		}
	}
	return MPI_SUCCESS;
}

int
mpiv_fview_set(struct mpiv_fview *v, MPI_Offset disp, MPI_Datatype etype,
    MPI_Datatype ftype)
{
	size_t *starts = NULL, sum = 0;

	if (mpiv_dt_check(etype) != MPI_SUCCESS ||
	    mpiv_dt_check(ftype) != MPI_SUCCESS) {
		mpiv_err_detail("the etype and the filetype must be committed "
		    "datatypes");
		return MPI_ERR_TYPE;
	}
	if (disp < 0) {
		mpiv_err_detail("displacement %lld is negative",
		    (long long)disp);
		return MPI_ERR_ARG;
	}
	if (etype->size == 0 || ftype->size == 0 ||
	    ftype->size % etype->size != 0) {
		mpiv_err_detail("the filetype (%zu bytes) is not a whole "
		    "number of etypes (%zu bytes)", ftype->size, etype->size);
		return MPI_ERR_TYPE;
	}
	if (ftype->extent <= 0) {
		mpiv_err_detail("the filetype's extent must be positive");
		return MPI_ERR_TYPE;
	}
	for (size_t j = 0; j < ftype->nblocks; j++)
		if (ftype->blocks[j].disp < 0) {
			mpiv_err_detail("the filetype has a negative "
			    "displacement");
			return MPI_ERR_IO;	/* as ROMIO */
		}
	if (ftype->nblocks > 1) {
		if ((starts = malloc(ftype->nblocks * sizeof(*starts))) == NULL)
			return MPI_ERR_NO_MEM;
		for (size_t j = 0; j < ftype->nblocks; j++) {
			starts[j] = sum;
			sum += ftype->blocks[j].len;
		}
	}
	mpiv_fview_clear(v);
	mpiv_dt_retain(etype);
	mpiv_dt_retain(ftype);
	v->disp = disp;
	v->etype = etype;
	v->ftype = ftype;
	v->esize = etype->size;
	v->fsize = ftype->size;
	v->fextent = ftype->extent;
	v->starts = starts;
	if (ftype->nblocks > 1) {
		v->nblocks = ftype->nblocks;
		v->blocks = ftype->blocks;
	} else {
		/* one block (a contiguous type, or one with holes around
		   its data) */
		v->one.disp = ftype->nblocks == 1 ? ftype->blocks[0].disp :
		    ftype->true_lb;
		v->one.len = ftype->size;
		v->nblocks = 1;
		v->blocks = &v->one;
		v->dense = (MPI_Aint)v->one.len == v->fextent;
	}
	return MPI_SUCCESS;
}

void
mpiv_fview_clear(struct mpiv_fview *v)
{
	if (v->etype != MPI_DATATYPE_NULL)
		mpiv_dt_release(v->etype);
	if (v->ftype != MPI_DATATYPE_NULL)
		mpiv_dt_release(v->ftype);
	free(v->starts);
	memset(v, 0, sizeof(*v));
}

void
mpiv_fview_seek(const struct mpiv_fview *v, uint64_t d,
    struct mpiv_fview_iter *it)
{
	uint64_t r = d % v->fsize;
	size_t lo = 0, hi = v->nblocks;

	it->v = v;
	it->tile = d / v->fsize;
	if (v->starts != NULL) {
		/* the last block starting at or before r */
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (v->starts[mid] <= r)
				lo = mid;
			else
				hi = mid;
		}
		r -= v->starts[lo];
	}
	it->block = lo;
	it->within = (size_t)r;
}

void
mpiv_fview_next(struct mpiv_fview_iter *it, uint64_t max, uint64_t *off,
    uint64_t *len)
{
	const struct mpiv_fview *v = it->v;
	const struct mpiv_block *b = &v->blocks[it->block];
	uint64_t n = b->len - it->within, d;

	if (v->dense) {
		/* tiles abut: any length in one extent */
		*off = (uint64_t)v->disp + it->tile * (uint64_t)v->fextent +
		    (uint64_t)b->disp + it->within;
		*len = max;
		d = it->tile * v->fsize + it->within + max;
		it->tile = d / v->fsize;
		it->within = (size_t)(d % v->fsize);
		return;
	}
	if (n > max)
		n = max;
	*off = (uint64_t)v->disp + it->tile * (uint64_t)v->fextent +
	    (uint64_t)b->disp + it->within;
	*len = n;
	it->within += (size_t)n;
	if (it->within == b->len) {
		it->within = 0;
		if (++it->block == v->nblocks) {
			it->block = 0;
			it->tile++;
		}
	}
}

uint64_t
mpiv_fview_byte(const struct mpiv_fview *v, uint64_t d)
{
	struct mpiv_fview_iter it;
	uint64_t off, len;

	mpiv_fview_seek(v, d, &it);
	mpiv_fview_next(&it, 1, &off, &len);
	return off;
}

uint64_t
mpiv_fview_extents(const struct mpiv_fview *v, uint64_t d, uint64_t n,
    uint64_t *ext, size_t max_pairs, uint64_t max_data, size_t *npairs)
{
	struct mpiv_fview_iter it;
	uint64_t taken = 0, off, len;
	size_t k = 0;

	if (n > max_data)
		n = max_data;
	mpiv_fview_seek(v, d, &it);
	while (taken < n) {
		mpiv_fview_next(&it, n - taken, &off, &len);
		if (k > 0 && ext[2 * k - 2] + ext[2 * k - 1] == off) {
			ext[2 * k - 1] += len;	/* adjacent: merged */
		} else {
			if (k == max_pairs) {
				/* full: this extent starts the next op */
				break;
			}
			ext[2 * k] = off;
			ext[2 * k + 1] = len;
			k++;
		}
		taken += len;
	}
	*npairs = k;
	return taken;
}
