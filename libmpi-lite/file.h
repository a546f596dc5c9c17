/*
 * file.h: what the files of MPI-IO share (docs/MPI.md, "Files"):
 *
 *   file.c       the file object: open, close, sizes, info, views,
 *                atomicity, error handlers, Fortran handles
 *   file_io.c    the data access calls: explicit offsets, the
 *                individual and the shared file pointer, collectives,
 *                split collectives, non-blocking ones
 *   file_op.c    one operation at the job's first Channel Memory: op
 *                numbers, the request frame, waiting for its answer,
 *                sending it again after a restore
 *   file_view.c  views: a position in etypes to extents of the file
 */
#ifndef MPIV_FILE_H
#define MPIV_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "impl.h"

#define MPIV_FILE_MAGIC		0x66696c65u	/* "file": a live file */
/* At most this much data and this many (offset, length) pairs in one
   operation; a larger access takes several, in order. */
#define MPIV_FILE_OP_DATA	(64u * 1024 * 1024)
#define MPIV_FILE_OP_EXTENTS	8192

/* ---------------- views (file_view.c) ---------------- */

struct mpiv_fview {
	MPI_Offset disp;	/* bytes from the start of the file */
	MPI_Datatype etype, ftype;	/* retained (predefined: not) */
	size_t esize;		/* etype->size */
	size_t fsize;		/* filetype's data bytes per tile */
	MPI_Aint fextent;	/* the tile's stride */
	size_t nblocks;		/* the filetype's blocks within a tile */
	const struct mpiv_block *blocks;
	struct mpiv_block one;	/* the single block of a contiguous type */
	size_t *starts;		/* data offset of each block in its tile
				   (NULL: one block) */
	bool dense;		/* one block filling its tile: the data
				   stream is one run of the file */
};

/* A cursor over the file extents of a view's data stream. */
struct mpiv_fview_iter {
	const struct mpiv_fview *v;
	uint64_t tile;
	size_t block;
	size_t within;		/* bytes of the block already passed */
};

/* Sets the view (disp, etype, filetype): checks them (MPI code,
   mpiv_err_detail says why) and retains the types. */
/* A type of a view whose typemap goes back in the file, or (writes)
   covers a byte twice: MPI_ERR_IO. */
int mpiv_fview_check_order(MPI_Datatype t, bool writes);
int mpiv_fview_set(struct mpiv_fview *v, MPI_Offset disp, MPI_Datatype etype,
    MPI_Datatype ftype);
/* Releases the types. */
void mpiv_fview_clear(struct mpiv_fview *v);
/* A cursor at data byte d of the view. */
void mpiv_fview_seek(const struct mpiv_fview *v, uint64_t d,
    struct mpiv_fview_iter *it);
/* The next extent of at most max bytes from the cursor, which moves
   past it: its file offset and length (> 0). */
void mpiv_fview_next(struct mpiv_fview_iter *it, uint64_t max,
    uint64_t *off, uint64_t *len);
/* The file offset of data byte d of the view. */
uint64_t mpiv_fview_byte(const struct mpiv_fview *v, uint64_t d);
/*
 * Extents of the data bytes [d, d + n) of the view, adjacent ones
 * merged, into ext (pairs off, len), at most max_pairs pairs and
 * max_data bytes: *npairs and the bytes taken (may be fewer than n:
 * the rest is for the next operation).
 */
uint64_t mpiv_fview_extents(const struct mpiv_fview *v, uint64_t d,
    uint64_t n, uint64_t *ext, size_t max_pairs, uint64_t max_data,
    size_t *npairs);

/* ---------------- the file object (file.c) ---------------- */

struct mpiv_file {
	uint32_t magic;		/* MPIV_FILE_MAGIC while open */
	MPI_Comm comm;		/* private: a context of its own */
	char *path;		/* as the program named it */
	int amode;
	uint64_t key;		/* the open's shared file pointer ... */
	int32_t key_rank;	/* ... with this world rank: FileOp.key_rank */
	MPI_Info info;
	MPI_Errhandler errh;
	bool atomic;
	struct mpiv_fview view;
	char datarep[MPI_MAX_DATAREP_STRING];
	MPI_Offset pos;		/* individual file pointer, in etypes */
	/* a split collective begun: its outcome, for the _end call */
	bool split;
	int split_rc;
	MPI_Status split_st;
};

/* MPI_SUCCESS, or MPI_ERR_FILE for a handle that is not an open file. */
int mpiv_file_check(MPI_File fh);
/* Reports code raised by fn on fh through its error handler (that of
   MPI_FILE_NULL when fh is not a file). */
int mpiv_file_err(MPI_File fh, int code, const char *fn);

/* ---------------- operations (file_op.c) ---------------- */

/* One operation's outcome. */
struct mpiv_file_res {
	int code;		/* MPI code the FileErr maps to */
	uint64_t value;
	size_t got;		/* payload bytes kept (READ) */
};

/*
 * Carries out op (kind, path, amode, offset, extents, key set; op_no is
 * given here) at the job's first CM: wdata/wlen is a WRITE's data, rbuf
 * (rcap bytes) takes a READ's. Blocks until the answer. MPI code: the
 * transport's, or res->code (the server's text in the error detail).
 */
int mpiv_file_op(Mpiv__FileOp *op, const void *wdata, size_t wlen,
    void *rbuf, size_t rcap, struct mpiv_file_res *res);
/* The simple ones: kind on path, with amode, offset, and the key of
   open f (NULL: none). */
int mpiv_file_op_simple(int kind, const char *path, uint32_t amode,
    uint64_t offset, const struct mpiv_file *f, struct mpiv_file_res *res);

#endif
