/*
 * file_io.c: the MPI-IO data access calls. Every one comes down to
 * fio_access: the user's (buf, count, datatype) is packed (a write) or
 * will be unpacked (a read), the view turns the data's place into file
 * extents (file_view.c), and one or more READ/WRITE operations go to the
 * job's first Channel Memory (file_op.c), at most MPIV_FILE_OP_DATA bytes
 * and MPIV_FILE_OP_EXTENTS extents each.
 *
 * Where the data goes: an explicit offset (the _at calls), the
 * individual file pointer (local), or the shared file pointer (a
 * fetch-and-add at the CM; the ordered calls take their places in rank
 * order with one addition by rank 0). The collective calls do what the
 * independent ones do; the non-blocking ones are carried out at once
 * and return a request that is complete already; a split collective
 * does its work in _begin and hands the status over in _end.
 */
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "transport.h"

/* Where an access goes. */
enum fio_where { FIO_AT, FIO_INDIV, FIO_SHARED };

/* Sets st (unless ignored) to the status of an access of bytes. */
static void
fio_status(MPI_Status *st, size_t bytes)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	mpiv_req_empty_status(st);
	st->mpiv_count = bytes;
}

/* The argument and mode checks every access makes. MPI code. */
static int
fio_check(MPI_File fh, bool write, int count, MPI_Datatype dt,
    enum fio_where where)
{
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return rc;
	if (count < 0)
		return MPI_ERR_COUNT;
	if ((rc = mpiv_dt_check(dt)) != MPI_SUCCESS)
		return rc;
	if (dt->size % fh->view.esize != 0) {
		mpiv_err_detail("the datatype (%zu bytes) is not a whole "
		    "number of etypes (%zu bytes)", dt->size, fh->view.esize);
		return MPI_ERR_TYPE;
	}
	if (write && (fh->amode & MPI_MODE_RDONLY)) {
		mpiv_err_detail("the file was opened MPI_MODE_RDONLY");
		return MPI_ERR_READ_ONLY;
	}
	if (!write && (fh->amode & MPI_MODE_WRONLY)) {
		mpiv_err_detail("the file was opened MPI_MODE_WRONLY");
		return MPI_ERR_ACCESS;
	}
	if (where != FIO_SHARED && (fh->amode & MPI_MODE_SEQUENTIAL)) {
		mpiv_err_detail("a file opened MPI_MODE_SEQUENTIAL takes the "
		    "shared file pointer calls only");
		return MPI_ERR_UNSUPPORTED_OPERATION;
	}
	return MPI_SUCCESS;
}

/*
 * Reads or writes count elements of dt at buf from (to) data byte d of
 * fh's view. *done: the bytes read (fewer at the end of the file) or
 * written. MPI code.
 */
static int
fio_access(MPI_File fh, bool write, uint64_t d, void *buf, int count,
    MPI_Datatype dt, size_t *done)
{
	Mpiv__FileOp op = MPIV__FILE_OP__INIT;
	struct mpiv_file_res res;
	size_t total = mpiv_dt_packed_size(dt, count), off = 0, npairs;
	uint64_t *ext;
	uint8_t *data, *tmp = NULL;
	bool contig = mpiv_dt_is_contig(dt);
	int rc = MPI_SUCCESS;

	*done = 0;
	if (total == 0)
		return MPI_SUCCESS;
	ext = malloc(2 * MPIV_FILE_OP_EXTENTS * sizeof(*ext));
	if (ext == NULL)
		return MPI_ERR_NO_MEM;
	if (contig) {
		data = (uint8_t *)((uintptr_t)buf + (uintptr_t)dt->true_lb);
	} else {
		if ((tmp = malloc(total)) == NULL) {
			free(ext);
			return MPI_ERR_NO_MEM;
		}
		if (write)
			mpiv_dt_pack(buf, count, dt, tmp);
		data = tmp;
	}
	op.kind = write ? MPIV__FILE_OP_KIND__FILE_OP_WRITE :
	    MPIV__FILE_OP_KIND__FILE_OP_READ;
	op.path = fh->path;
	op.amode = (uint32_t)fh->amode;
	op.key = fh->key;
	op.key_rank = fh->key_rank;
	op.extents = ext;
	while (off < total) {
		uint64_t n = mpiv_fview_extents(&fh->view, d + off,
		    total - off, ext, MPIV_FILE_OP_EXTENTS, MPIV_FILE_OP_DATA,
		    &npairs);

		op.n_extents = 2 * npairs;
		if (write)
			rc = mpiv_file_op(&op, data + off, (size_t)n, NULL, 0,
			    &res);
		else
			rc = mpiv_file_op(&op, NULL, 0, data + off, (size_t)n,
			    &res);
		if (rc != MPI_SUCCESS)
			break;
		if (write) {
			off += (size_t)n;
			continue;
		}
		/* a read: short at the end of the file */
		off += res.got < n ? res.got : (size_t)n;
		if (res.got < n)
			break;
	}
	if (!write && tmp != NULL && off > 0)
		mpiv_dt_unpack(tmp, off, buf, count, dt);
	*done = off;
	free(tmp);
	free(ext);
	return rc;
}

/* A fetch-and-add of inc etypes on fh's shared file pointer: *before.
   MPI code. */
static int
fio_shared_add(MPI_File fh, uint64_t inc, uint64_t *before)
{
	struct mpiv_file_res res;
	int rc;

	rc = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_SHARED_ADD,
	    fh->path, 0, inc, fh, &res);
	*before = res.value;
	return rc;
}

/*
 * One access at offset (FIO_AT, in etypes), the individual or the shared
 * file pointer. MPI code, the error handler not called.
 */
static int
fio_do(MPI_File fh, bool write, enum fio_where where, MPI_Offset offset,
    void *buf, int count, MPI_Datatype dt, MPI_Status *st)
{
	uint64_t pos, esize;
	size_t done = 0;
	int rc;

	if ((rc = fio_check(fh, write, count, dt, where)) != MPI_SUCCESS)
		return rc;
	esize = fh->view.esize;
	switch (where) {
	case FIO_AT:
		if (offset < 0)
			return MPI_ERR_ARG;
		pos = (uint64_t)offset;
		break;
	case FIO_INDIV:
		pos = (uint64_t)fh->pos;
		break;
	case FIO_SHARED:
	default:
		rc = fio_shared_add(fh, mpiv_dt_packed_size(dt, count) / esize,
		    &pos);
		if (rc != MPI_SUCCESS)
			return rc;
		break;
	}
	rc = fio_access(fh, write, pos * esize, buf, count, dt, &done);
	if (where == FIO_INDIV)
		fh->pos += (MPI_Offset)(done / esize);
	fio_status(st, done);
	return rc;
}

/* A blocking call: its error through fh's handler. */
static int
fio_call(MPI_File fh, bool write, enum fio_where where, MPI_Offset offset,
    void *buf, int count, MPI_Datatype dt, MPI_Status *st, const char *fn)
{
	int rc = fio_do(fh, write, where, offset, buf, count, dt, st);

	return mpiv_file_err(fh, rc, fn);
}

/* A non-blocking call: done now, a complete request handed back. */
static int
fio_icall(MPI_File fh, bool write, enum fio_where where, MPI_Offset offset,
    void *buf, int count, MPI_Datatype dt, MPI_Request *request,
    const char *fn)
{
	struct mpiv_request *r;
	MPI_Status st;
	int rc;

	if (request == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, fn);
	*request = MPI_REQUEST_NULL;
	if ((rc = fio_do(fh, write, where, offset, buf, count, dt, &st)) !=
	    MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	if ((r = mpiv_req_done(&st)) == NULL)
		return mpiv_file_err(fh, MPI_ERR_NO_MEM, fn);
	*request = r;
	return MPI_SUCCESS;
}

/* ---------------- explicit offsets ---------------- */

int
MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, false, FIO_AT, offset, buf, count, datatype,
	    status, "MPI_File_read_at");
}

int
MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, false, FIO_AT, offset, buf, count, datatype,
	    status, "MPI_File_read_at_all");
}

int
MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, true, FIO_AT, offset, (void *)buf, count,
	    datatype, status, "MPI_File_write_at");
}

int
MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, true, FIO_AT, offset, (void *)buf, count,
	    datatype, status, "MPI_File_write_at_all");
}

int
MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, false, FIO_AT, offset, buf, count, datatype,
	    request, "MPI_File_iread_at");
}

int
MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, true, FIO_AT, offset, (void *)buf, count,
	    datatype, request, "MPI_File_iwrite_at");
}

int
MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, false, FIO_AT, offset, buf, count, datatype,
	    request, "MPI_File_iread_at_all");
}

int
MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, true, FIO_AT, offset, (void *)buf, count,
	    datatype, request, "MPI_File_iwrite_at_all");
}

/* ---------------- the individual file pointer ---------------- */

int
MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
    MPI_Status *status)
{
	return fio_call(fh, false, FIO_INDIV, 0, buf, count, datatype,
	    status, "MPI_File_read");
}

int
MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
    MPI_Status *status)
{
	return fio_call(fh, false, FIO_INDIV, 0, buf, count, datatype,
	    status, "MPI_File_read_all");
}

int
MPI_File_write(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, true, FIO_INDIV, 0, (void *)buf, count, datatype,
	    status, "MPI_File_write");
}

int
MPI_File_write_all(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, true, FIO_INDIV, 0, (void *)buf, count, datatype,
	    status, "MPI_File_write_all");
}

int
MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
    MPI_Request *request)
{
	return fio_icall(fh, false, FIO_INDIV, 0, buf, count, datatype,
	    request, "MPI_File_iread");
}

int
MPI_File_iwrite(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, true, FIO_INDIV, 0, (void *)buf, count,
	    datatype, request, "MPI_File_iwrite");
}

int
MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
    MPI_Request *request)
{
	return fio_icall(fh, false, FIO_INDIV, 0, buf, count, datatype,
	    request, "MPI_File_iread_all");
}

int
MPI_File_iwrite_all(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, true, FIO_INDIV, 0, (void *)buf, count,
	    datatype, request, "MPI_File_iwrite_all");
}

/*
 * The view position (etypes) of the end of the file (size bytes): the
 * view's data bytes that lie before it, rounded up to an etype.
 */
static uint64_t
fio_end_pos(const struct mpiv_fview *v, uint64_t size)
{
	uint64_t rel, tiles, in, data;

	if (size <= (uint64_t)v->disp)
		return 0;
	rel = size - (uint64_t)v->disp;
	tiles = rel / (uint64_t)v->fextent;
	in = rel % (uint64_t)v->fextent;
	data = tiles * v->fsize;
	for (size_t j = 0; j < v->nblocks; j++) {
		uint64_t bd = (uint64_t)v->blocks[j].disp;

		if (in > bd)
			data += in - bd < v->blocks[j].len ? in - bd :
			    v->blocks[j].len;
	}
	return (data + v->esize - 1) / v->esize;
}

/* The new position of a seek from cur (etypes): MPI code. */
static int
fio_seek_pos(MPI_File fh, MPI_Offset offset, int whence, MPI_Offset cur,
    MPI_Offset *out)
{
	struct mpiv_file_res res;
	MPI_Offset base;
	int rc;

	switch (whence) {
	case MPI_SEEK_SET:
		base = 0;
		break;
	case MPI_SEEK_CUR:
		base = cur;
		break;
	case MPI_SEEK_END:
		rc = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_GET_SIZE,
		    fh->path, 0, 0, fh, &res);
		if (rc != MPI_SUCCESS)
			return rc;
		base = (MPI_Offset)fio_end_pos(&fh->view, res.value);
		break;
	default:
		mpiv_err_detail("whence %d", whence);
		return MPI_ERR_ARG;
	}
	if (base + offset < 0) {
		mpiv_err_detail("the position would be negative");
		return MPI_ERR_ARG;
	}
	*out = base + offset;
	return MPI_SUCCESS;
}

int
MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	MPI_Offset pos;
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, "MPI_File_seek");
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpiv_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION,
		    "MPI_File_seek");
	rc = fio_seek_pos(fh, offset, whence, fh->pos, &pos);
	if (rc == MPI_SUCCESS)
		fh->pos = pos;
	return mpiv_file_err(fh, rc, "MPI_File_seek");
}

int
MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, "MPI_File_get_position");
	if (offset == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, "MPI_File_get_position");
	*offset = fh->pos;
	return MPI_SUCCESS;
}

int
MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	static const char fn[] = "MPI_File_get_byte_offset";

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, fn);
	if (offset < 0 || disp == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, fn);
	*disp = (MPI_Offset)mpiv_fview_byte(&fh->view,
	    (uint64_t)offset * fh->view.esize);
	return MPI_SUCCESS;
}

/* ---------------- the shared file pointer ---------------- */

int
MPI_File_read_shared(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, false, FIO_SHARED, 0, buf, count, datatype,
	    status, "MPI_File_read_shared");
}

int
MPI_File_write_shared(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return fio_call(fh, true, FIO_SHARED, 0, (void *)buf, count,
	    datatype, status, "MPI_File_write_shared");
}

int
MPI_File_iread_shared(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, false, FIO_SHARED, 0, buf, count, datatype,
	    request, "MPI_File_iread_shared");
}

int
MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request)
{
	return fio_icall(fh, true, FIO_SHARED, 0, (void *)buf, count,
	    datatype, request, "MPI_File_iwrite_shared");
}

/*
 * An ordered access: the ranks' data follow each other in rank order
 * from the shared file pointer, which moves past all of it. Every rank's
 * size is known to all (allgather); rank 0 alone adds the total and says
 * where it began. MPI code.
 */
static int
fio_ordered(MPI_File fh, bool write, void *buf, int count, MPI_Datatype dt,
    MPI_Status *st)
{
	long long mine, *all, msg[2] = { MPI_SUCCESS, 0 }, before = 0,
	    total = 0;
	uint64_t base;
	size_t done = 0;
	int rc, code, n;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return rc;	/* no communicator to take part with */
	n = fh->comm->size;
	code = fio_check(fh, write, count, dt, FIO_SHARED);
	mine = code == MPI_SUCCESS ? (long long)(mpiv_dt_packed_size(dt,
	    count) / fh->view.esize) : 0;
	if ((all = malloc((size_t)n * sizeof(*all))) == NULL)
		return MPI_ERR_NO_MEM;
	rc = MPI_Allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG,
	    fh->comm);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++) {
		if (i < fh->comm->rank)
			before += all[i];
		total += all[i];
	}
	free(all);
	if (rc != MPI_SUCCESS)
		return rc;
	if (fh->comm->rank == 0) {
		msg[0] = fio_shared_add(fh, (uint64_t)total, &base);
		msg[1] = (long long)base;
	}
	if ((rc = MPI_Bcast(msg, 2, MPI_LONG_LONG, 0, fh->comm)) !=
	    MPI_SUCCESS)
		return rc;
	if (msg[0] != MPI_SUCCESS)
		return (int)msg[0];
	if (code != MPI_SUCCESS)
		return code;
	rc = fio_access(fh, write, (uint64_t)(msg[1] + before) *
	    fh->view.esize, buf, count, dt, &done);
	fio_status(st, done);
	return rc;
}

int
MPI_File_read_ordered(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return mpiv_file_err(fh, fio_ordered(fh, false, buf, count, datatype,
	    status), "MPI_File_read_ordered");
}

int
MPI_File_write_ordered(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status)
{
	return mpiv_file_err(fh, fio_ordered(fh, true, (void *)buf, count,
	    datatype, status), "MPI_File_write_ordered");
}

int
MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	static const char fn[] = "MPI_File_seek_shared";
	struct mpiv_file_res res;
	uint64_t cur = 0;
	MPI_Offset pos = 0;
	int rc, code = MPI_SUCCESS;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	/* rank 0 moves it; the others learn how that went */
	if (fh->comm->rank == 0) {
		if (whence == MPI_SEEK_CUR)
			code = fio_shared_add(fh, 0, &cur);
		if (code == MPI_SUCCESS)
			code = fio_seek_pos(fh, offset, whence,
			    (MPI_Offset)cur, &pos);
		if (code == MPI_SUCCESS)
			code = mpiv_file_op_simple(
			    MPIV__FILE_OP_KIND__FILE_OP_SHARED_SET, fh->path,
			    0, (uint64_t)pos, fh, &res);
	}
	if ((rc = MPI_Bcast(&code, 1, MPI_INT, 0, fh->comm)) != MPI_SUCCESS)
		code = rc;
	return mpiv_file_err(fh, code, fn);
}

int
MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	static const char fn[] = "MPI_File_get_position_shared";
	uint64_t cur;
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	if (offset == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, fn);
	if ((rc = fio_shared_add(fh, 0, &cur)) == MPI_SUCCESS)
		*offset = (MPI_Offset)cur;
	return mpiv_file_err(fh, rc, fn);
}

/* ---------------- split collectives ---------------- */

/* _begin: the access done now, its outcome kept for _end. */
static int
fio_begin(MPI_File fh, bool write, int how, MPI_Offset offset, void *buf,
    int count, MPI_Datatype dt, const char *fn)
{
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	if (fh->split) {
		mpiv_err_detail("a split collective is already active on "
		    "this file");
		return mpiv_file_err(fh, MPI_ERR_OTHER, fn);
	}
	if (how == 2)
		rc = fio_ordered(fh, write, buf, count, dt, &fh->split_st);
	else
		rc = fio_do(fh, write, how == 0 ? FIO_AT : FIO_INDIV, offset,
		    buf, count, dt, &fh->split_st);
	fh->split = true;
	fh->split_rc = rc;
	return MPI_SUCCESS;
}

/* _end: the outcome of the _begin. */
static int
fio_end(MPI_File fh, MPI_Status *st, const char *fn)
{
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	if (!fh->split) {
		mpiv_err_detail("no split collective was begun on this file");
		return mpiv_file_err(fh, MPI_ERR_OTHER, fn);
	}
	fh->split = false;
	if (st != MPI_STATUS_IGNORE)
		*st = fh->split_st;
	return mpiv_file_err(fh, fh->split_rc, fn);
}

int
MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf,
    int count, MPI_Datatype datatype)
{
	return fio_begin(fh, false, 0, offset, buf, count, datatype,
	    "MPI_File_read_at_all_begin");
}

int
MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	return fio_end(fh, status, "MPI_File_read_at_all_end");
}

int
MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset,
    const void *buf, int count, MPI_Datatype datatype)
{
	return fio_begin(fh, true, 0, offset, (void *)buf, count, datatype,
	    "MPI_File_write_at_all_begin");
}

int
MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	return fio_end(fh, status, "MPI_File_write_at_all_end");
}

int
MPI_File_read_all_begin(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype)
{
	return fio_begin(fh, false, 1, 0, buf, count, datatype,
	    "MPI_File_read_all_begin");
}

int
MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	return fio_end(fh, status, "MPI_File_read_all_end");
}

int
MPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype)
{
	return fio_begin(fh, true, 1, 0, (void *)buf, count, datatype,
	    "MPI_File_write_all_begin");
}

int
MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	return fio_end(fh, status, "MPI_File_write_all_end");
}

int
MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype)
{
	return fio_begin(fh, false, 2, 0, buf, count, datatype,
	    "MPI_File_read_ordered_begin");
}

int
MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
	return fio_end(fh, status, "MPI_File_read_ordered_end");
}

int
MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype)
{
	return fio_begin(fh, true, 2, 0, (void *)buf, count, datatype,
	    "MPI_File_write_ordered_begin");
}

int
MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	return fio_end(fh, status, "MPI_File_write_ordered_end");
}
