/*
 * file_op.c: one MPI-IO operation at the job's first Channel Memory
 * (connection 0). The rank numbers its operations 1, 2, 3 ... (op_no,
 * in its memory, so a checkpoint image carries it); each goes out as one
 * FileOp frame and waits for the FileRes of the same number. The CM
 * carries each number out once and logs its outcome: a re-executed rank
 * sends the same numbers again and gets the logged answers, so nothing
 * here replays. One operation at most is in flight (every call blocks);
 * a clone restored from a checkpoint taken during the wait sends it
 * again (its answer was lost with the old connection).
 */
#include <stdio.h>
#include <string.h>

#include "file.h"
#include "transport.h"

/* The operation in flight. */
static struct {
	bool busy;		/* sent, not answered */
	bool done;		/* the answer came */
	Mpiv__FileOp *op;	/* the caller's, kept until answered */
	const void *wdata;
	size_t wlen;
	void *rbuf;
	size_t rcap;
	Mpiv__FileErr error;
	char text[200];
	uint64_t value;
	size_t got;
} fo_cur;

static uint64_t fo_op_no;	/* the last op_no used */

/* Sends the operation in flight (again). MPI code. */
static int
fo_send(void)
{
	int rc;

	if ((rc = mpiv_ndlog_before_frame(0)) != MPI_SUCCESS)
		return rc;
	return mpiv_tp_send(0, MPIV__MSG_TYPE__MSG_FILE_OP, &fo_cur.op->base,
	    fo_cur.wdata, fo_cur.wlen, NULL, NULL);
}

/* The MPI error class of a FileErr. */
static int
fo_code(Mpiv__FileErr e)
{
	switch (e) {
	case MPIV__FILE_ERR__FILE_OK:
		return MPI_SUCCESS;
	case MPIV__FILE_ERR__FILE_ERR_NO_SUCH_FILE:
		return MPI_ERR_NO_SUCH_FILE;
	case MPIV__FILE_ERR__FILE_ERR_FILE_EXISTS:
		return MPI_ERR_FILE_EXISTS;
	case MPIV__FILE_ERR__FILE_ERR_ACCESS:
		return MPI_ERR_ACCESS;
	case MPIV__FILE_ERR__FILE_ERR_NO_SPACE:
		return MPI_ERR_NO_SPACE;
	case MPIV__FILE_ERR__FILE_ERR_QUOTA:
		return MPI_ERR_QUOTA;
	case MPIV__FILE_ERR__FILE_ERR_READ_ONLY:
		return MPI_ERR_READ_ONLY;
	case MPIV__FILE_ERR__FILE_ERR_BAD_FILE:
		return MPI_ERR_BAD_FILE;
	case MPIV__FILE_ERR__FILE_ERR_AMODE:
		return MPI_ERR_AMODE;
	case MPIV__FILE_ERR__FILE_ERR_OFF:
		return MPI_ERR_UNSUPPORTED_OPERATION;
	case MPIV__FILE_ERR__FILE_ERR_DIVERGED:
		return MPI_ERR_INTERN;
	case MPIV__FILE_ERR__FILE_ERR_IO:
	default:
		return MPI_ERR_IO;
	}
}

int
mpiv_file_op(Mpiv__FileOp *op, const void *wdata, size_t wlen, void *rbuf,
    size_t rcap, struct mpiv_file_res *res)
{
	int rc;

	memset(res, 0, sizeof(*res));
	if (fo_cur.busy)
		return MPI_ERR_INTERN;	/* calls block: never two */
	op->op_no = ++fo_op_no;
	memset(&fo_cur, 0, sizeof(fo_cur));
	fo_cur.op = op;
	fo_cur.wdata = wdata;
	fo_cur.wlen = wlen;
	fo_cur.rbuf = rbuf;
	fo_cur.rcap = rcap;
	fo_cur.busy = true;
	rc = fo_send();
	if (rc == MPI_SUCCESS)
		mpiv_fault_point("file");	/* sent, its answer not read */
	/* A safe point while waiting, as in a Wait: a checkpoint taken
	   here is restored with the operation sent again. */
	while (rc == MPI_SUCCESS && !fo_cur.done) {
		mpiv_ckpt_point();
		if (fo_cur.done)
			break;
		rc = mpiv_tp_progress(mpiv_ckpt_due_ms());
	}
	fo_cur.busy = false;
	fo_cur.op = NULL;
	if (rc != MPI_SUCCESS)
		return rc;
	res->value = fo_cur.value;
	res->got = fo_cur.got;
	res->code = fo_code(fo_cur.error);
	if (fo_cur.error == MPIV__FILE_ERR__FILE_ERR_DIVERGED) {
		mpiv_tp_set_error("rank %d: MPI-IO operation %llu diverged "
		    "from the logged one: %s", mpiv_state.world_rank,
		    (unsigned long long)op->op_no, fo_cur.text[0] != '\0' ?
		    fo_cur.text : "(no text)");
	} else if (res->code != MPI_SUCCESS) {
		mpiv_err_detail("%s", fo_cur.text[0] != '\0' ? fo_cur.text :
		    op->path);
	}
	return res->code;
}

int
mpiv_file_op_simple(int kind, const char *path, uint32_t amode,
    uint64_t offset, const struct mpiv_file *f, struct mpiv_file_res *res)
{
	Mpiv__FileOp op = MPIV__FILE_OP__INIT;

	op.kind = (Mpiv__FileOpKind)kind;
	op.path = (char *)path;
	op.amode = amode;
	op.offset = offset;
	if (f != NULL) {
		op.key = f->key;
		op.key_rank = f->key_rank;
	}
	return mpiv_file_op(&op, NULL, 0, NULL, 0, res);
}

/* ---------------- transport hooks ---------------- */

void
mpiv_file_reply_dst(const Mpiv__FileRes *r, size_t paylen, uint8_t **dst,
    size_t *keep)
{
	*dst = NULL;
	*keep = 0;
	if (!fo_cur.busy || fo_cur.done || r->op_no != fo_cur.op->op_no ||
	    fo_cur.rbuf == NULL)
		return;
	*dst = fo_cur.rbuf;
	*keep = paylen < fo_cur.rcap ? paylen : fo_cur.rcap;
}

void
mpiv_file_reply(const Mpiv__FileRes *r, size_t got)
{
	if (!fo_cur.busy || fo_cur.done || r->op_no != fo_cur.op->op_no)
		return;		/* not the operation in flight: ignored */
	fo_cur.error = r->error;
	fo_cur.value = r->value;
	fo_cur.got = got;
	snprintf(fo_cur.text, sizeof(fo_cur.text), "%s",
	    r->text != NULL ? r->text : "");
	fo_cur.done = true;
}

int
mpiv_file_restore(void)
{
	if (!fo_cur.busy || fo_cur.done)
		return MPI_SUCCESS;
	return fo_send();
}
