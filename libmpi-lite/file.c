/*
 * file.c: MPI-IO file objects (docs/MPI.md, "Files"): opening and
 * closing, deleting, sizes, info, views, atomicity and error handlers.
 * A file's data lives at the job's first Channel Memory, which carries
 * out every operation (file_op.c); the object here holds what is local:
 * the path, the access mode, the view, the individual file pointer and
 * a private communicator for the collective calls. The calls that move
 * data are file_io.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "transport.h"

/* The handler of MPI_FILE_NULL: errors of MPI_File_open and
   MPI_File_delete, and the one new files start with. */
static MPI_Errhandler file_null_errh = MPI_ERRORS_RETURN;

int
mpiv_file_check(MPI_File fh)
{
	if (fh == MPI_FILE_NULL || fh->magic != MPIV_FILE_MAGIC)
		return MPI_ERR_FILE;
	return MPI_SUCCESS;
}

int
mpiv_file_err(MPI_File fh, int code, const char *fn)
{
	MPI_File h = fh;

	if (code == MPI_SUCCESS)
		return mpiv_err_handler(MPI_ERRORS_RETURN, &h, code, fn);
	if (mpiv_file_check(fh) != MPI_SUCCESS) {
		h = MPI_FILE_NULL;
		return mpiv_err_handler(file_null_errh, &h, code, fn);
	}
	return mpiv_err_handler(fh->errh, &h, code, fn);
}

/* The largest of every member's code (so all return the same one):
   MPI code, the collective's own failure first. */
static int
file_agree(MPI_Comm comm, int code)
{
	int all = code, rc;

	rc = MPI_Allreduce(&code, &all, 1, MPI_INT, MPI_MAX, comm);
	return rc != MPI_SUCCESS ? rc : all;
}

/* Checks an access mode: exactly one of RDONLY, WRONLY, RDWR; no
   CREATE or EXCL with RDONLY; no SEQUENTIAL with RDWR. */
static bool
file_amode_ok(int amode)
{
	int rw = amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);

	if (rw != MPI_MODE_RDONLY && rw != MPI_MODE_WRONLY &&
	    rw != MPI_MODE_RDWR) {
		mpiv_err_detail("amode %d: exactly one of MPI_MODE_RDONLY, "
		    "MPI_MODE_WRONLY and MPI_MODE_RDWR", amode);
		return false;
	}
	if (rw == MPI_MODE_RDONLY &&
	    (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) != 0) {
		mpiv_err_detail("amode %d: MPI_MODE_RDONLY with "
		    "MPI_MODE_CREATE or MPI_MODE_EXCL", amode);
		return false;
	}
	if (amode & ~(MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY |
	    MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
	    MPI_MODE_EXCL | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL)) {
		mpiv_err_detail("amode %d: unknown bits", amode);
		return false;
	}
	return true;
}

/* Frees f (its view, info, communicator); the handle dies. */
static void
file_destroy(struct mpiv_file *f)
{
	mpiv_fview_clear(&f->view);
	if (f->info != MPI_INFO_NULL)
		(void)MPI_Info_free(&f->info);
	if (f->comm != MPI_COMM_NULL)
		mpiv_comm_destroy(f->comm);
	mpiv_errh_release(f->errh);
	free(f->path);
	f->magic = 0;
	free(f);
}

/*
 * The local part of an open, the communicator built: rank 0 opens first
 * (it alone creates the file, so that MPI_MODE_EXCL fails only when the
 * file was there before), then the others, without EXCL. Every rank
 * ends with the same code. *size: the size at the open.
 */
static int
file_open_ops(struct mpiv_file *f, int code, uint64_t *size)
{
	struct mpiv_file_res res;
	int rc;

	*size = 0;
	if (code == MPI_SUCCESS && f->comm->rank == 0) {
		code = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_OPEN,
		    f->path, (uint32_t)f->amode, 0, f, &res);
		*size = res.value;
	}
	if ((rc = MPI_Bcast(&code, 1, MPI_INT, 0, f->comm)) != MPI_SUCCESS)
		return rc;
	if (code == MPI_SUCCESS && f->comm->rank != 0) {
		code = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_OPEN,
		    f->path, (uint32_t)(f->amode & ~MPI_MODE_EXCL), 0, f,
		    &res);
		*size = res.value;
	}
	return file_agree(f->comm, code);
}

int
MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
    MPI_File *fh)
{
	static const char fn[] = "MPI_File_open";
	struct mpiv_file_res res;
	struct mpiv_file *f;
	uint32_t ctx;
	uint64_t size = 0;
	int rc, code = MPI_SUCCESS;

	if (mpiv_comm_check(comm) != MPI_SUCCESS || mpiv_comm_is_inter(comm))
		return mpiv_file_err(MPI_FILE_NULL, MPI_ERR_COMM, fn);
	if (filename == NULL || fh == NULL)
		return mpiv_file_err(MPI_FILE_NULL, MPI_ERR_ARG, fn);
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->path = strdup(filename)) == NULL) {
		free(f);
		return mpiv_file_err(MPI_FILE_NULL, MPI_ERR_NO_MEM, fn);
	}
	f->amode = amode;
	f->errh = file_null_errh;
	mpiv_errh_retain(f->errh);
	snprintf(f->datarep, sizeof(f->datarep), "native");
	/* the same key on every member, another one for every open; with
	   the world rank of the communicator's rank 0 it names the open in
	   the whole job (two communicators that share a context id, as
	   every process's MPI_COMM_SELF does, have other ranks 0) */
	f->key = (uint64_t)comm->context << 32 | comm->file_opens++;
	f->key_rank = mpiv_comm_world_rank(comm, 0);
	if (!file_amode_ok(amode))
		code = MPI_ERR_AMODE;
	if (code == MPI_SUCCESS && info != MPI_INFO_NULL &&
	    MPI_Info_dup(info, &f->info) != MPI_SUCCESS)
		code = MPI_ERR_INFO;
	if (code == MPI_SUCCESS && info == MPI_INFO_NULL &&
	    MPI_Info_create(&f->info) != MPI_SUCCESS)
		code = MPI_ERR_NO_MEM;
	if (code == MPI_SUCCESS)
		code = mpiv_fview_set(&f->view, 0, MPI_BYTE, MPI_BYTE);
	/* collective from here: a communicator of the file's own */
	if ((rc = mpiv_comm_alloc_context(comm, &ctx)) != MPI_SUCCESS ||
	    (rc = mpiv_comm_build(comm->group, ctx, MPI_ERRORS_RETURN,
	    &f->comm)) != MPI_SUCCESS) {
		file_destroy(f);
		return mpiv_file_err(MPI_FILE_NULL, rc, fn);
	}
	snprintf(f->comm->name, sizeof(f->comm->name), "mpiv file");
	code = file_agree(f->comm, code);
	if (code == MPI_SUCCESS)
		code = file_open_ops(f, code, &size);
	if (code == MPI_SUCCESS && (amode & MPI_MODE_APPEND)) {
		/* both pointers start at the end of the file */
		f->pos = (MPI_Offset)size;
		if (f->comm->rank == 0)
			code = mpiv_file_op_simple(
			    MPIV__FILE_OP_KIND__FILE_OP_SHARED_SET, f->path, 0,
			    size, f, &res);
		code = file_agree(f->comm, code);
	}
	if (code != MPI_SUCCESS) {
		if (mpiv_err_last_detail()[0] == '\0')
			mpiv_err_detail("%s: the open failed on another "
			    "process", filename);
		file_destroy(f);
		*fh = MPI_FILE_NULL;
		return mpiv_file_err(MPI_FILE_NULL, code, fn);
	}
	f->magic = MPIV_FILE_MAGIC;
	*fh = f;
	return MPI_SUCCESS;
}

int
MPI_File_close(MPI_File *fh)
{
	static const char fn[] = "MPI_File_close";
	struct mpiv_file_res res;
	struct mpiv_file *f;
	int rc;

	if (fh == NULL || mpiv_file_check(*fh) != MPI_SUCCESS)
		return mpiv_file_err(MPI_FILE_NULL, MPI_ERR_FILE, fn);
	f = *fh;
	/* nobody closes (deletes) while another still uses the file */
	if ((rc = MPI_Barrier(f->comm)) != MPI_SUCCESS)
		return mpiv_file_err(f, rc, fn);
	rc = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_CLOSE, f->path,
	    (uint32_t)f->amode, 0, f, &res);
	if (rc != MPI_SUCCESS)
		rc = mpiv_file_err(f, rc, fn);
	file_destroy(f);
	*fh = MPI_FILE_NULL;
	return rc;
}

int
MPI_File_delete(const char *filename, MPI_Info info)
{
	struct mpiv_file_res res;
	int rc;

	if (filename == NULL)
		return mpiv_file_err(MPI_FILE_NULL, MPI_ERR_ARG,
		    "MPI_File_delete");
	rc = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_DELETE, filename,
	    0, 0, NULL, &res);
	return mpiv_file_err(MPI_FILE_NULL, rc, "MPI_File_delete");
}

/* A collective operation done once, by rank 0: everyone returns its
   code (the others wait for it). */
static int
file_root_op(struct mpiv_file *f, int kind, uint64_t offset)
{
	struct mpiv_file_res res;
	int code = MPI_SUCCESS, rc;

	if (f->comm->rank == 0)
		code = mpiv_file_op_simple(kind, f->path, (uint32_t)f->amode,
		    offset, f, &res);
	if ((rc = MPI_Bcast(&code, 1, MPI_INT, 0, f->comm)) != MPI_SUCCESS)
		return rc;
	return code;
}

/* set_size and preallocate: MPI code. */
static int
file_sized(MPI_File fh, MPI_Offset size, int kind, const char *fn)
{
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	if (size < 0)
		return mpiv_file_err(fh, MPI_ERR_ARG, fn);
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpiv_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn);
	if (fh->amode & MPI_MODE_RDONLY)
		return mpiv_file_err(fh, MPI_ERR_READ_ONLY, fn);
	rc = file_root_op(fh, kind, (uint64_t)size);
	return mpiv_file_err(fh, rc, fn);
}

int
MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	return file_sized(fh, size, MPIV__FILE_OP_KIND__FILE_OP_SET_SIZE,
	    "MPI_File_set_size");
}

int
MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	return file_sized(fh, size, MPIV__FILE_OP_KIND__FILE_OP_PREALLOCATE,
	    "MPI_File_preallocate");
}

int
MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	struct mpiv_file_res res;
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, "MPI_File_get_size");
	if (size == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, "MPI_File_get_size");
	rc = mpiv_file_op_simple(MPIV__FILE_OP_KIND__FILE_OP_GET_SIZE,
	    fh->path, 0, 0, fh, &res);
	if (rc == MPI_SUCCESS)
		*size = (MPI_Offset)res.value;
	return mpiv_file_err(fh, rc, "MPI_File_get_size");
}

int
MPI_File_sync(MPI_File fh)
{
	int rc;

	if ((rc = mpiv_file_check(fh)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, "MPI_File_sync");
	/* every process's writes are at the CM already: one sync does */
	rc = file_root_op(fh, MPIV__FILE_OP_KIND__FILE_OP_SYNC, 0);
	return mpiv_file_err(fh, rc, "MPI_File_sync");
}

int
MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, "MPI_File_get_group");
	if (group == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, "MPI_File_get_group");
	mpiv_group_retain(fh->comm->group);
	*group = fh->comm->group;
	return MPI_SUCCESS;
}

int
MPI_File_get_amode(MPI_File fh, int *amode)
{
	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, "MPI_File_get_amode");
	if (amode == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, "MPI_File_get_amode");
	*amode = fh->amode;
	return MPI_SUCCESS;
}

/* ---------------- info ---------------- */

int
MPI_File_set_info(MPI_File fh, MPI_Info info)
{
	MPI_Info dup;
	int rc;

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, "MPI_File_set_info");
	if (info == MPI_INFO_NULL)
		return MPI_SUCCESS;
	/* no hint changes anything: the last ones set are kept */
	if ((rc = MPI_Info_dup(info, &dup)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, "MPI_File_set_info");
	if (fh->info != MPI_INFO_NULL)
		(void)MPI_Info_free(&fh->info);
	fh->info = dup;
	return MPI_SUCCESS;
}

int
MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
	int rc;

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, "MPI_File_get_info");
	if (info_used == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, "MPI_File_get_info");
	rc = fh->info != MPI_INFO_NULL ? MPI_Info_dup(fh->info, info_used) :
	    MPI_Info_create(info_used);
	return mpiv_file_err(fh, rc, "MPI_File_get_info");
}

/* ---------------- views ---------------- */

/* "native", or "internal" taken as native: MPI_SUCCESS, else
   MPI_ERR_UNSUPPORTED_DATAREP. */
static int
file_datarep_ok(const char *datarep)
{
	if (datarep == NULL)
		return MPI_ERR_ARG;
	if (strcmp(datarep, "native") == 0 || strcmp(datarep, "internal") == 0)
		return MPI_SUCCESS;
	mpiv_err_detail("data representation \"%s\": mpiv has \"native\" "
	    "only", datarep);
	return MPI_ERR_UNSUPPORTED_DATAREP;
}

int
MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
    MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
	static const char fn[] = "MPI_File_set_view";
	struct mpiv_file_res res;
	struct mpiv_fview v;
	bool writes;
	int code, rc;

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, fn);
	memset(&v, 0, sizeof(v));
	code = file_datarep_ok(datarep);
	if (code == MPI_SUCCESS && disp == MPI_DISPLACEMENT_CURRENT) {
		/* sequential files: where the shared pointer is */
		if (!(fh->amode & MPI_MODE_SEQUENTIAL)) {
			mpiv_err_detail("MPI_DISPLACEMENT_CURRENT needs "
			    "MPI_MODE_SEQUENTIAL");
			code = MPI_ERR_ARG;
		} else {
			code = mpiv_file_op_simple(
			    MPIV__FILE_OP_KIND__FILE_OP_SHARED_ADD, fh->path,
			    0, 0, fh, &res);
			disp = (MPI_Offset)mpiv_fview_byte(&fh->view,
			    res.value * fh->view.esize);
		}
	}
	if (code == MPI_SUCCESS)
		code = mpiv_fview_set(&v, disp, etype, filetype);
	writes = (fh->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) != 0;
	if (code == MPI_SUCCESS &&
	    (code = mpiv_fview_check_order(filetype, writes)) == MPI_SUCCESS)
		code = mpiv_fview_check_order(etype, writes);
	/* every member agrees before anything changes */
	code = file_agree(fh->comm, code);
	if (code != MPI_SUCCESS) {
		mpiv_fview_clear(&v);
		return mpiv_file_err(fh, code, fn);
	}
	mpiv_fview_clear(&fh->view);
	fh->view = v;
	if (fh->view.blocks == &v.one)
		fh->view.blocks = &fh->view.one;
	snprintf(fh->datarep, sizeof(fh->datarep), "%s", datarep);
	fh->pos = 0;
	if (info != MPI_INFO_NULL)
		(void)MPI_File_set_info(fh, info);
	/* the shared pointer goes back to 0 too, before anyone uses it */
	rc = file_root_op(fh, MPIV__FILE_OP_KIND__FILE_OP_SHARED_SET, 0);
	return mpiv_file_err(fh, rc, fn);
}

/* A handle the caller owns for a view's type: derived ones are
   duplicated (MPI_Type_free on it leaves the view's). */
static int
file_type_out(MPI_Datatype t, MPI_Datatype *out)
{
	if (t->predefined) {
		*out = t;
		return MPI_SUCCESS;
	}
	return MPI_Type_dup(t, out);
}

int
MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
    MPI_Datatype *filetype, char *datarep)
{
	static const char fn[] = "MPI_File_get_view";
	int rc;

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, fn);
	if (disp == NULL || etype == NULL || filetype == NULL ||
	    datarep == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, fn);
	if ((rc = file_type_out(fh->view.etype, etype)) != MPI_SUCCESS)
		return mpiv_file_err(fh, rc, fn);
	if ((rc = file_type_out(fh->view.ftype, filetype)) != MPI_SUCCESS) {
		if (!(*etype)->predefined)
			(void)MPI_Type_free(etype);
		return mpiv_file_err(fh, rc, fn);
	}
	*disp = fh->view.disp;
	snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", fh->datarep);
	return MPI_SUCCESS;
}

int
MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
    MPI_Aint *extent)
{
	static const char fn[] = "MPI_File_get_type_extent";

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE, fn);
	if (datatype == MPI_DATATYPE_NULL)
		return mpiv_file_err(fh, MPI_ERR_TYPE, fn);
	if (extent == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, fn);
	*extent = datatype->extent;	/* native: as in memory */
	return MPI_SUCCESS;
}

/* ---------------- atomicity ---------------- */

/* The CM carries out one operation at a time, each whole: atomic mode
   holds whatever the flag says, which is only kept. */
int
MPI_File_set_atomicity(MPI_File fh, int flag)
{
	int rc;

	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE,
		    "MPI_File_set_atomicity");
	rc = file_agree(fh->comm, MPI_SUCCESS);
	if (rc == MPI_SUCCESS)
		fh->atomic = flag != 0;
	return mpiv_file_err(fh, rc, "MPI_File_set_atomicity");
}

int
MPI_File_get_atomicity(MPI_File fh, int *flag)
{
	if (mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE,
		    "MPI_File_get_atomicity");
	if (flag == NULL)
		return mpiv_file_err(fh, MPI_ERR_ARG, "MPI_File_get_atomicity");
	*flag = fh->atomic;
	return MPI_SUCCESS;
}

/* ---------------- error handlers ---------------- */

int
MPI_File_create_errhandler(MPI_File_errhandler_function *fn,
    MPI_Errhandler *errhandler)
{
	/* the same calling convention as a communicator's: a pointer to
	   the handle, then the code */
	return MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)fn,
	    errhandler);
}

int
MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
	MPI_Errhandler *slot;

	if (file != MPI_FILE_NULL && mpiv_file_check(file) != MPI_SUCCESS)
		return mpiv_file_err(file, MPI_ERR_FILE,
		    "MPI_File_set_errhandler");
	if (errhandler == MPI_ERRHANDLER_NULL)
		return mpiv_file_err(file, MPI_ERR_ARG,
		    "MPI_File_set_errhandler");
	slot = file == MPI_FILE_NULL ? &file_null_errh : &file->errh;
	mpiv_errh_retain(errhandler);
	mpiv_errh_release(*slot);
	*slot = errhandler;
	return MPI_SUCCESS;
}

int
MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
	MPI_Errhandler e;

	if (file != MPI_FILE_NULL && mpiv_file_check(file) != MPI_SUCCESS)
		return mpiv_file_err(file, MPI_ERR_FILE,
		    "MPI_File_get_errhandler");
	if (errhandler == NULL)
		return mpiv_file_err(file, MPI_ERR_ARG,
		    "MPI_File_get_errhandler");
	e = file == MPI_FILE_NULL ? file_null_errh : file->errh;
	/* the caller owns a reference (MPI_Errhandler_free) */
	mpiv_errh_retain(e);
	*errhandler = e;
	return MPI_SUCCESS;
}

int
MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
	if (fh != MPI_FILE_NULL && mpiv_file_check(fh) != MPI_SUCCESS)
		return mpiv_file_err(fh, MPI_ERR_FILE,
		    "MPI_File_call_errhandler");
	(void)mpiv_file_err(fh, errorcode, "MPI_File_call_errhandler");
	/* as for communicators: MPI_SUCCESS once the handler returned */
	return MPI_SUCCESS;
}
