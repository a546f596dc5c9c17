/*
 * win_rma.c: the one-sided communication calls and their target side.
 *
 * At the origin, each call checks its arguments and the epoch, then
 * appends one record to the batch of its target (win.h): the kind, the
 * op, the target displacement, the target datatype flattened to its
 * blocks (the origin's definition of it is the one that counts), and the
 * origin's data packed. Reads (Get, Get_accumulate, Fetch_and_op,
 * Compare_and_swap) also note where their part of the target's reply
 * goes. Nothing is sent here: win_sync.c sends the batches when the
 * epoch closes.
 *
 * At the target, win_apply walks a batch in order: writes scatter the
 * packed bytes over the blocks, reads gather them into the reply, and
 * accumulates combine element by element in the basic predefined type,
 * through op.c.
 */
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "win.h"

/* The predefined types and ops, to find them again from a record. */
static const MPI_Datatype rma_basics[] = {
	MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT,
	MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
	MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE,
	MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T,
	MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T,
	MPI_UINT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
	MPI_C_LONG_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT,
	MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
	MPI_LONG_DOUBLE_INT,
};
static const MPI_Op rma_ops[] = {
	MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
	MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE,
	MPI_NO_OP,
};

static MPI_Datatype
rma_basic_dt(int basic)
{
	for (size_t i = 0; i < sizeof(rma_basics) / sizeof(rma_basics[0]); i++)
		if ((int)rma_basics[i]->basic == basic)
			return rma_basics[i];
	return MPI_DATATYPE_NULL;
}

static MPI_Op
rma_op(int builtin)
{
	for (size_t i = 0; i < sizeof(rma_ops) / sizeof(rma_ops[0]); i++)
		if (rma_ops[i]->builtin == builtin)
			return rma_ops[i];
	return MPI_OP_NULL;
}

static inline char *
rma_at(uintptr_t base, MPI_Aint off)
{
	return (char *)(base + (uintptr_t)off);
}

/* Lowest and highest byte offsets (hi exclusive) that count elements of
   the block list touch. false if they do not fit in 62 bits (only a
   corrupt record can say so: the origin's types are bounded). */
static bool
rma_span(const struct mpiv_block *blk, size_t nblocks, uint32_t count,
    int64_t extent, int64_t *lo, int64_t *hi)
{
	const int64_t lim = (int64_t)1 << 62;
	int64_t l = INT64_MAX, h = INT64_MIN, span = 0;

	for (size_t j = 0; j < nblocks; j++) {
		if (blk[j].len == 0)
			continue;
		if (blk[j].disp < -lim || blk[j].disp > lim ||
		    blk[j].len > (size_t)lim)
			return false;
		if (blk[j].disp < l)
			l = blk[j].disp;
		if (blk[j].disp + (int64_t)blk[j].len > h)
			h = blk[j].disp + (int64_t)blk[j].len;
	}
	if (l > h) {
		*lo = *hi = 0;
		return true;
	}
	if (extent < -lim || extent > lim || (count > 1 &&
	    __builtin_mul_overflow((int64_t)(count - 1), extent, &span)) ||
	    span < -lim || span > lim)
		return false;
	if (span > 0)
		h += span;
	else
		l += span;
	*lo = l;
	*hi = h;
	return true;
}

static void
rma_gather(uintptr_t base, const struct mpiv_block *blk, size_t nblocks,
    uint32_t count, int64_t extent, char *out)
{
	for (uint32_t i = 0; i < count; i++)
		for (size_t j = 0; j < nblocks; j++) {
			memcpy(out, rma_at(base, (MPI_Aint)i * extent +
			    blk[j].disp), blk[j].len);
			out += blk[j].len;
		}
}

static void
rma_scatter(uintptr_t base, const struct mpiv_block *blk, size_t nblocks,
    uint32_t count, int64_t extent, const char *in)
{
	for (uint32_t i = 0; i < count; i++)
		for (size_t j = 0; j < nblocks; j++) {
			memcpy(rma_at(base, (MPI_Aint)i * extent + blk[j].disp),
			    in, blk[j].len);
			in += blk[j].len;
		}
}

/* ---------------- origin ---------------- */

static int
rma_grow(struct win_batch *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->len + more <= b->cap)
		return MPI_SUCCESS;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	if ((p = realloc(b->buf, cap)) == NULL)
		return MPI_ERR_NO_MEM;
	b->buf = p;
	b->cap = cap;
	return MPI_SUCCESS;
}

static int
rma_add_get(struct win_batch *b, void *buf, int count, MPI_Datatype dt,
    size_t bytes)
{
	struct win_get *g;

	if (b->ngets == b->capgets) {
		size_t cap = b->capgets ? b->capgets * 2 : 8;
		if ((g = realloc(b->gets, cap * sizeof(*g))) == NULL)
			return MPI_ERR_NO_MEM;
		b->gets = g;
		b->capgets = cap;
	}
	g = &b->gets[b->ngets++];
	g->buf = buf;
	g->count = count;
	g->dt = dt;
	mpiv_dt_retain(dt);
	g->off = b->reply_bytes;
	g->bytes = bytes;
	b->reply_bytes += bytes;
	return MPI_SUCCESS;
}

/* Everything one call says, checked by rma_check and recorded by
   rma_record. */
struct rma_call {
	const char *fn;
	enum win_kind kind;
	const void *oaddr;
	int ocount;
	MPI_Datatype odt;
	const void *caddr;	/* Compare_and_swap's compare value */
	void *raddr;		/* where a read lands */
	int rcount;
	MPI_Datatype rdt;
	int target;
	MPI_Aint tdisp;
	int tcount;
	MPI_Datatype tdt;
	MPI_Op op;
};

static bool
rma_in(const int *ranks, int n, int r)
{
	for (int i = 0; i < n; i++)
		if (ranks[i] == r)
			return true;
	return false;
}

static bool
rma_sends_data(const struct rma_call *c)
{
	return c->kind == WIN_PUT || c->kind == WIN_ACC ||
	    (c->kind == WIN_GACC && c->op != MPI_NO_OP);
}

/* Checks a call against its window and epoch; MPI code (and detail). */
static int
rma_check(MPI_Win win, const struct rma_call *c)
{
	size_t tbytes;
	int rc;

	if (c->target < 0 || c->target >= win->comm->size) {
		mpiv_err_detail("target rank %d, window of %d ranks", c->target,
		    win->comm->size);
		return MPI_ERR_RANK;
	}
	if (!win->fence_open && !(win->access_open &&
	    rma_in(win->access, win->naccess, c->target)) &&
	    !win_pas_target(win, c->target)) {
		mpiv_err_detail("no access epoch to rank %d: call MPI_Win_fence, "
		    "MPI_Win_start or MPI_Win_lock first", c->target);
		return MPI_ERR_RMA_SYNC;
	}
	if (c->tcount < 0 || c->ocount < 0 || c->rcount < 0)
		return MPI_ERR_COUNT;
	if (mpiv_dt_check(c->tdt) != MPI_SUCCESS ||
	    (c->odt != MPI_DATATYPE_NULL && mpiv_dt_check(c->odt)) ||
	    (c->rdt != MPI_DATATYPE_NULL && mpiv_dt_check(c->rdt)))
		return MPI_ERR_TYPE;
	tbytes = mpiv_dt_packed_size(c->tdt, c->tcount);
	if ((rma_sends_data(c) || c->kind == WIN_GET) &&
	    mpiv_dt_packed_size(c->odt, c->ocount) != tbytes) {
		mpiv_err_detail("origin %zu bytes, target %zu bytes",
		    mpiv_dt_packed_size(c->odt, c->ocount), tbytes);
		return MPI_ERR_TYPE;
	}
	if (c->kind == WIN_GACC &&
	    mpiv_dt_packed_size(c->rdt, c->rcount) != tbytes) {
		mpiv_err_detail("result %zu bytes, target %zu bytes",
		    mpiv_dt_packed_size(c->rdt, c->rcount), tbytes);
		return MPI_ERR_TYPE;
	}
	if (c->kind == WIN_ACC || c->kind == WIN_GACC || c->kind == WIN_CAS) {
		MPI_Datatype b = rma_basic_dt(c->tdt->basic);

		if (c->op == MPI_OP_NULL || !c->op->predefined) {
			mpiv_err_detail("accumulate operations take predefined "
			    "ops only");
			return MPI_ERR_OP;
		}
		/* Where nothing moves (a zero count, a type of no data) what
		   the types are made of does not matter. */
		if (tbytes > 0 && c->op != MPI_REPLACE && c->op != MPI_NO_OP) {
			if (b == MPI_DATATYPE_NULL || (rma_sends_data(c) &&
			    c->odt->basic != c->tdt->basic)) {
				mpiv_err_detail("origin and target must be made "
				    "of the same predefined type");
				return MPI_ERR_TYPE;
			}
			if ((rc = mpiv_op_apply(c->op, NULL, NULL, 0, b)) !=
			    MPI_SUCCESS)
				return rc;
		}
	}
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC && tbytes > 0) {
		const struct mpiv_block *blk = c->tdt->blocks;
		size_t nb = c->tdt->nblocks;
		int64_t lo, hi, off;

		off = (int64_t)c->tdisp * win->units[c->target];
		if (!rma_span(blk, nb, (uint32_t)c->tcount, c->tdt->extent,
		    &lo, &hi) || c->tdisp < 0 || off + lo < 0 ||
		    off + hi > (int64_t)win->sizes[c->target]) {
			mpiv_err_detail("bytes [%lld, %lld) of rank %d's window "
			    "of %lld bytes", (long long)(off + lo),
			    (long long)(off + hi), c->target,
			    (long long)win->sizes[c->target]);
			return MPI_ERR_RMA_RANGE;
		}
	}
	return MPI_SUCCESS;
}

/* Appends the record of a checked call to its target's batch. */
static int
rma_record(MPI_Win win, const struct rma_call *c)
{
	struct win_batch *b = &win->out[c->target];
	struct win_rec rec = { 0 };
	struct mpiv_block one;
	const struct mpiv_block *blk;
	size_t tbytes = mpiv_dt_packed_size(c->tdt, c->tcount), need, pad;
	char *p;
	int rc;

	rec.kind = (uint8_t)c->kind;
	rec.op = c->op != MPI_OP_NULL ? (uint8_t)c->op->builtin : 0;
	rec.basic = (int32_t)c->tdt->basic;
	rec.disp = c->tdisp;
	rec.tbytes = tbytes;
	if (mpiv_dt_is_contig(c->tdt)) {
		one.disp = c->tdt->true_lb;
		one.len = tbytes;
		blk = &one;
		rec.nblocks = 1;
		rec.count = 1;
		rec.extent = 0;
	} else {
		blk = c->tdt->blocks;
		rec.nblocks = (uint32_t)c->tdt->nblocks;
		rec.count = (uint32_t)c->tcount;
		rec.extent = c->tdt->extent;
	}
	if (rma_sends_data(c))
		rec.data = tbytes;
	else if (c->kind == WIN_CAS)
		rec.data = 2 * tbytes;
	need = sizeof(rec) + rec.nblocks * sizeof(*blk) + rec.data;
	pad = (8 - need % 8) % 8;
	if ((rc = rma_grow(b, need + pad)) != MPI_SUCCESS)
		return rc;
	p = b->buf + b->len;
	memcpy(p, &rec, sizeof(rec));
	p += sizeof(rec);
	memcpy(p, blk, rec.nblocks * sizeof(*blk));
	p += rec.nblocks * sizeof(*blk);
	if (rma_sends_data(c)) {
		mpiv_dt_pack(c->oaddr, c->ocount, c->odt, p);
	} else if (c->kind == WIN_CAS) {
		mpiv_dt_pack(c->oaddr, 1, c->tdt, p);
		mpiv_dt_pack(c->caddr, 1, c->tdt, p + tbytes);
	}
	memset(p + rec.data, 0, pad);
	switch (c->kind) {
	case WIN_GET:
		rc = rma_add_get(b, (void *)(uintptr_t)c->oaddr, c->ocount,
		    c->odt, tbytes);
		break;
	case WIN_GACC:
	case WIN_CAS:
		rc = rma_add_get(b, c->raddr, c->rcount, c->rdt, tbytes);
		break;
	default:
		break;
	}
	if (rc != MPI_SUCCESS)
		return rc;
	b->len += need + pad;
	b->nops++;
	return MPI_SUCCESS;
}

/* Checks and records c (a valid window's); MPI code, no handler. */
static int
rma_issue(MPI_Win win, struct rma_call *c)
{
	int rc;

	if (c->target == MPI_PROC_NULL)
		return MPI_SUCCESS;
	/* With MPI_NO_OP the origin buffer is not used. */
	if (c->kind == WIN_GACC && c->op == MPI_NO_OP) {
		c->ocount = 0;
		c->odt = MPI_DATATYPE_NULL;
	}
	if ((rc = rma_check(win, c)) != MPI_SUCCESS)
		return rc;
	if (mpiv_dt_packed_size(c->tdt, c->tcount) == 0)
		return MPI_SUCCESS;	/* nothing to do at the target */
	return rma_record(win, c);
}

static int
rma_call(MPI_Win win, struct rma_call *c)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, c->fn);
	if ((rc = rma_issue(win, c)) != MPI_SUCCESS)
		return win_err(win, rc, c->fn);
	return MPI_SUCCESS;
}

int
MPI_Put(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
	struct rma_call c = { .fn = "MPI_Put", .kind = WIN_PUT,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .target = target_rank,
		.tdisp = target_disp, .tcount = target_count,
		.tdt = target_datatype };

	return rma_call(win, &c);
}

int
MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Win win)
{
	struct rma_call c = { .fn = "MPI_Get", .kind = WIN_GET,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .target = target_rank,
		.tdisp = target_disp, .tcount = target_count,
		.tdt = target_datatype };

	return rma_call(win, &c);
}

int
MPI_Accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	struct rma_call c = { .fn = "MPI_Accumulate", .kind = WIN_ACC,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .target = target_rank,
		.tdisp = target_disp, .tcount = target_count,
		.tdt = target_datatype, .op = op };

	return rma_call(win, &c);
}

int
MPI_Get_accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, void *result_addr, int result_count,
    MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	struct rma_call c = { .fn = "MPI_Get_accumulate", .kind = WIN_GACC,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .raddr = result_addr,
		.rcount = result_count, .rdt = result_datatype,
		.target = target_rank, .tdisp = target_disp,
		.tcount = target_count, .tdt = target_datatype, .op = op };

	return rma_call(win, &c);
}

int
MPI_Fetch_and_op(const void *origin_addr, void *result_addr,
    MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op,
    MPI_Win win)
{
	struct rma_call c = { .fn = "MPI_Fetch_and_op", .kind = WIN_GACC,
		.oaddr = origin_addr, .ocount = 1, .odt = datatype,
		.raddr = result_addr, .rcount = 1, .rdt = datatype,
		.target = target_rank, .tdisp = target_disp, .tcount = 1,
		.tdt = datatype, .op = op };

	return rma_call(win, &c);
}

int
MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
    void *result_addr, MPI_Datatype datatype, int target_rank,
    MPI_Aint target_disp, MPI_Win win)
{
	struct rma_call c = { .fn = "MPI_Compare_and_swap", .kind = WIN_CAS,
		.oaddr = origin_addr, .caddr = compare_addr,
		.raddr = result_addr, .rcount = 1, .rdt = datatype,
		.target = target_rank, .tdisp = target_disp, .tcount = 1,
		.tdt = datatype, .op = MPI_REPLACE };

	if (datatype != MPI_DATATYPE_NULL && !datatype->predefined) {
		mpiv_err_detail("compare-and-swap takes a predefined type");
		return win_err(win, MPI_ERR_TYPE, c.fn);
	}
	return rma_call(win, &c);
}

/* ---------------- target ---------------- */

static int
rma_reply_grow(char **reply, size_t *len, size_t *cap, size_t more)
{
	size_t c = *cap ? *cap : 256;
	char *p;

	if (*len + more <= *cap)
		return MPI_SUCCESS;
	while (c < *len + more)
		c *= 2;
	if ((p = realloc(*reply, c)) == NULL)
		return MPI_ERR_NO_MEM;
	*reply = p;
	*cap = c;
	return MPI_SUCCESS;
}

/* old = data op old, tbytes of packed elements of the basic type. */
static int
rma_combine(const struct win_rec *rec, const char *data, char *old)
{
	MPI_Datatype b = rma_basic_dt(rec->basic);
	MPI_Op op = rma_op(rec->op);
	size_t n;
	char *tin, *tio;
	int rc;

	if (b == MPI_DATATYPE_NULL || op == MPI_OP_NULL || b->size == 0)
		return MPI_ERR_INTERN;
	n = rec->tbytes / b->size;
	tin = malloc(n * (size_t)b->extent + 1);
	tio = malloc(n * (size_t)b->extent + 1);
	if (tin == NULL || tio == NULL) {
		free(tin);
		free(tio);
		return MPI_ERR_NO_MEM;
	}
	mpiv_dt_unpack(data, rec->tbytes, tin, (int)n, b);
	mpiv_dt_unpack(old, rec->tbytes, tio, (int)n, b);
	rc = mpiv_op_apply(op, tin, tio, (int)n, b);
	mpiv_dt_pack(tio, (int)n, b, old);
	free(tin);
	free(tio);
	return rc;
}

/* Applies one record whose target memory was checked. old: tbytes of
   room. Appends a read's answer to the reply. */
static int
rma_apply_one(const struct win_rec *rec, const struct mpiv_block *blk,
    const char *data, uintptr_t tb, char *old, char *reply)
{
	MPI_Op op = rma_op(rec->op);
	int rc = MPI_SUCCESS;

	switch (rec->kind) {
	case WIN_PUT:
		rma_scatter(tb, blk, rec->nblocks, rec->count, rec->extent,
		    data);
		return MPI_SUCCESS;
	case WIN_GET:
		rma_gather(tb, blk, rec->nblocks, rec->count, rec->extent,
		    reply);
		return MPI_SUCCESS;
	case WIN_ACC:
	case WIN_GACC:
		rma_gather(tb, blk, rec->nblocks, rec->count, rec->extent, old);
		if (rec->kind == WIN_GACC)
			memcpy(reply, old, rec->tbytes);
		if (op == MPI_NO_OP)
			return MPI_SUCCESS;
		if (op == MPI_REPLACE) {
			rma_scatter(tb, blk, rec->nblocks, rec->count,
			    rec->extent, data);
			return MPI_SUCCESS;
		}
		if ((rc = rma_combine(rec, data, old)) == MPI_SUCCESS)
			rma_scatter(tb, blk, rec->nblocks, rec->count,
			    rec->extent, old);
		return rc;
	case WIN_CAS:
		rma_gather(tb, blk, rec->nblocks, rec->count, rec->extent, old);
		memcpy(reply, old, rec->tbytes);
		if (memcmp(old, data + rec->tbytes, rec->tbytes) == 0)
			rma_scatter(tb, blk, rec->nblocks, rec->count,
			    rec->extent, data);
		return MPI_SUCCESS;
	default:
		return MPI_ERR_INTERN;
	}
}

/* A record agrees with itself: its blocks cover tbytes, its data is
   what its kind carries, its op and type exist. */
static bool
rma_rec_valid(const struct win_rec *rec, const struct mpiv_block *blk)
{
	size_t per = 0, total, want;

	for (uint32_t j = 0; j < rec->nblocks; j++)
		if (__builtin_add_overflow(per, blk[j].len, &per))
			return false;
	if (__builtin_mul_overflow(per, (size_t)rec->count, &total) ||
	    total != rec->tbytes)
		return false;
	switch (rec->kind) {
	case WIN_PUT:
		want = rec->tbytes;
		break;
	case WIN_GET:
		want = 0;
		break;
	case WIN_ACC:
	case WIN_GACC:
		if (rma_op(rec->op) == MPI_OP_NULL)
			return false;
		want = rma_op(rec->op) == MPI_NO_OP && rec->kind == WIN_GACC ?
		    0 : rec->tbytes;
		if (rma_op(rec->op) != MPI_NO_OP &&
		    rma_op(rec->op) != MPI_REPLACE &&
		    rma_basic_dt(rec->basic) == MPI_DATATYPE_NULL)
			return false;
		break;
	case WIN_CAS:
		want = 2 * rec->tbytes;
		break;
	default:
		return false;
	}
	return rec->data == want;
}

/* The detail of an access outside the target's memory (only dynamic
   windows get here from a correct origin). A relaunched rank that
   re-executes gets other addresses than its first run gave out (ASLR):
   say so, it is the likely cause. */
static void
rma_range_detail(MPI_Win win, int origin, uintptr_t addr,
    unsigned long long len)
{
	const char *inc = getenv("MPIV_INCARNATION");
	bool again = inc != NULL && strtol(inc, NULL, 10) > 1;

	mpiv_err_detail("rank %d's operation on [%#lx, +%llu) of rank %d: "
	    "not in the window (not attached?)%s", origin,
	    (unsigned long)addr, len, win->comm->rank,
	    again && win->flavor == MPI_WIN_FLAVOR_DYNAMIC ?
	    "; this rank was relaunched, and a dynamic window's addresses "
	    "differ when a rank re-executes (docs/ONESIDED.md)" : "");
}

int
win_apply(MPI_Win win, int origin, const char *buf, size_t len,
    uint32_t nops, char **reply, size_t *reply_len)
{
	size_t pos = 0, cap = 0;
	char *old = NULL;
	int err = MPI_SUCCESS, rc = MPI_SUCCESS;

	*reply = NULL;
	*reply_len = 0;
	for (uint32_t k = 0; k < nops; k++) {
		struct win_rec rec;
		const struct mpiv_block *blk;
		const char *data;
		size_t need, rlen = 0;
		uintptr_t tb;
		int64_t lo, hi;
		char *o;

		/* Lengths first, before anything is read or allocated. */
		rc = MPI_ERR_INTERN;
		if (len - pos < sizeof(rec))
			goto out_free;
		memcpy(&rec, buf + pos, sizeof(rec));
		if (rec.nblocks > (len - pos - sizeof(rec)) / sizeof(*blk))
			goto out_free;
		need = sizeof(rec) + rec.nblocks * sizeof(*blk);
		if (rec.data > len - pos - need)
			goto out_free;
		need += rec.data;
		need += (8 - need % 8) % 8;
		/* Records sit at multiples of 8 in a malloc'd buffer: the
		   blocks are aligned. */
		blk = (const struct mpiv_block *)(const void *)(buf + pos +
		    sizeof(rec));
		data = (const char *)(blk + rec.nblocks);
		pos += need > len - pos ? len - pos : need;
		if (!rma_rec_valid(&rec, blk) || rec.tbytes > SIZE_MAX / 4)
			goto out_free;
		if (rec.kind == WIN_GET || rec.kind == WIN_GACC ||
		    rec.kind == WIN_CAS)
			rlen = rec.tbytes;
		/* The origin's reads fit one reply message (sync_send). */
		if (rlen > SIZE_MAX / 4 - *reply_len ||
		    mpiv_p2p_too_big(*reply_len + rlen))
			goto out_free;
		if ((rc = rma_reply_grow(reply, reply_len, &cap, rlen)) !=
		    MPI_SUCCESS)
			goto out_free;
		o = *reply + *reply_len;
		if (rlen > 0)
			memset(o, 0, rlen);
		*reply_len += rlen;
		if (rec.tbytes == 0)
			continue;
		if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
			tb = (uintptr_t)rec.disp;
		else
			tb = (uintptr_t)win->base + (uintptr_t)rec.disp *
			    (uintptr_t)win->disp_unit;
		if (!rma_span(blk, rec.nblocks, rec.count, rec.extent, &lo,
		    &hi) || !win_local_range(win, tb + (uintptr_t)lo,
		    (size_t)(hi - lo))) {
			if (err == MPI_SUCCESS) {
				rma_range_detail(win, origin,
				    tb + (uintptr_t)lo, rec.tbytes);
				err = MPI_ERR_RMA_RANGE;
			}
			continue;
		}
		free(old);
		if ((old = malloc(rec.tbytes)) == NULL) {
			rc = MPI_ERR_NO_MEM;
			goto out_free;
		}
		rc = rma_apply_one(&rec, blk, data, tb, old, o);
		if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
			err = rc;
	}
	rc = err;
out_free:
	free(old);
	return rc;
}

int
win_apply_own(MPI_Win win, struct win_batch *b)
{
	char *reply = NULL;
	size_t rlen = 0;
	int rc;

	rc = win_apply(win, win->comm->rank, b->buf, b->len, b->nops, &reply,
	    &rlen);
	if (rc == MPI_SUCCESS && rlen != b->reply_bytes)
		rc = MPI_ERR_INTERN;
	if (rc == MPI_SUCCESS) {
		b->reply = reply;
		win_finish_gets(b);
	} else {
		free(reply);
	}
	win_batch_clear(b);
	return rc;
}

void
win_finish_gets(struct win_batch *b)
{
	for (size_t i = 0; i < b->ngets; i++) {
		struct win_get *g = &b->gets[i];

		if (b->reply != NULL)
			mpiv_dt_unpack(b->reply + g->off, g->bytes, g->buf,
			    g->count, g->dt);
	}
}

/* ---------------- request-based operations ----------------
 *
 * Allowed in passive-target epochs only (the standard). A write is
 * complete at the origin once recorded (its data is packed): its request
 * is handed back complete. A read flushes its target first, so that its
 * request too is complete when handed back (a flush completes the other
 * operations to that target as well, which the standard allows).
 */
static int
rma_request(MPI_Win win, struct rma_call *c, MPI_Request *request)
{
	struct mpiv_request *r;
	int rc;

	if (request == NULL)
		return win_err(win, MPI_ERR_ARG, c->fn);
	*request = MPI_REQUEST_NULL;
	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, c->fn);
	if (c->target != MPI_PROC_NULL && !win_pas_target(win, c->target)) {
		mpiv_err_detail("request-based RMA needs a passive-target "
		    "epoch (MPI_Win_lock or MPI_Win_lock_all) to rank %d",
		    c->target);
		return win_err(win, MPI_ERR_RMA_SYNC, c->fn);
	}
	if ((rc = rma_issue(win, c)) != MPI_SUCCESS)
		return win_err(win, rc, c->fn);
	if (c->target != MPI_PROC_NULL &&
	    (c->kind == WIN_GET || c->kind == WIN_GACC) &&
	    (rc = win_pas_flush(win, c->target)) != MPI_SUCCESS)
		return win_err(win, rc, c->fn);
	if ((r = mpiv_req_done(NULL)) == NULL)
		return win_err(win, MPI_ERR_NO_MEM, c->fn);
	*request = r;
	return MPI_SUCCESS;
}

int
MPI_Rput(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Win win,
    MPI_Request *request)
{
	struct rma_call c = { .fn = "MPI_Rput", .kind = WIN_PUT,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .target = target_rank,
		.tdisp = target_disp, .tcount = target_count,
		.tdt = target_datatype };

	return rma_request(win, &c, request);
}

int
MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
	struct rma_call c = { .fn = "MPI_Rget", .kind = WIN_GET,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .target = target_rank,
		.tdisp = target_disp, .tcount = target_count,
		.tdt = target_datatype };

	return rma_request(win, &c, request);
}

int
MPI_Raccumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
    MPI_Request *request)
{
	struct rma_call c = { .fn = "MPI_Raccumulate", .kind = WIN_ACC,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .target = target_rank,
		.tdisp = target_disp, .tcount = target_count,
		.tdt = target_datatype, .op = op };

	return rma_request(win, &c, request);
}

int
MPI_Rget_accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, void *result_addr, int result_count,
    MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
    MPI_Request *request)
{
	struct rma_call c = { .fn = "MPI_Rget_accumulate", .kind = WIN_GACC,
		.oaddr = origin_addr, .ocount = origin_count,
		.odt = origin_datatype, .raddr = result_addr,
		.rcount = result_count, .rdt = result_datatype,
		.target = target_rank, .tdisp = target_disp,
		.tcount = target_count, .tdt = target_datatype, .op = op };

	return rma_request(win, &c, request);
}
