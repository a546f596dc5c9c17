/*
 * impl.h: libmpi-lite internals shared by its files. Two halves meet here:
 *
 *   core (transport.c, p2p.c, request.c, init.c) owns the connections to
 *   the Channel Memories, requests and progress;
 *   upper (datatype.c, op.c, coll.c, comm.c, group.c, topo.c, errh.c,
 *   info.c, attr.c, win*.c, unsupported.c) owns objects, collectives and
 *   one-sided communication, built on the internal point-to-point calls
 *   declared below.
 *
 * The library never prints or exits on its own (except the MPI-mandated
 * MPI_ERRORS_ARE_FATAL handler); it returns MPI error codes.
 */
#ifndef MPIV_IMPL_H
#define MPIV_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi.h"

/* ---------------- datatypes (datatype.c) ---------------- */

/* Element kinds used by reductions (op.c). */
enum mpiv_basic {
	MPIV_B_NONE = 0,	/* derived or non-arithmetic */
	MPIV_B_CHAR, MPIV_B_SCHAR, MPIV_B_UCHAR, MPIV_B_BYTE,
	MPIV_B_SHORT, MPIV_B_USHORT, MPIV_B_INT, MPIV_B_UINT,
	MPIV_B_LONG, MPIV_B_ULONG, MPIV_B_LLONG, MPIV_B_ULLONG,
	MPIV_B_FLOAT, MPIV_B_DOUBLE, MPIV_B_LDOUBLE, MPIV_B_WCHAR, MPIV_B_BOOL,
	MPIV_B_INT8, MPIV_B_INT16, MPIV_B_INT32, MPIV_B_INT64,
	MPIV_B_UINT8, MPIV_B_UINT16, MPIV_B_UINT32, MPIV_B_UINT64,
	MPIV_B_CFLOAT, MPIV_B_CDOUBLE, MPIV_B_CLDOUBLE,
	MPIV_B_AINT, MPIV_B_OFFSET, MPIV_B_COUNT, MPIV_B_PACKED,
	MPIV_B_FLOAT_INT, MPIV_B_DOUBLE_INT, MPIV_B_LONG_INT, MPIV_B_2INT,
	MPIV_B_SHORT_INT, MPIV_B_LDOUBLE_INT,
};

/* One contiguous run of bytes in a datatype's typemap. */
struct mpiv_block {
	MPI_Aint disp;
	size_t len;
};

struct mpiv_datatype {
	size_t size;		/* bytes of data in one element */
	MPI_Aint lb, extent;	/* extent = ub - lb */
	MPI_Aint true_lb, true_extent;
	bool contiguous;	/* data is one block of `size` at true_lb, and
				   extent == size: count elements are one block */
	bool committed;
	bool predefined;
	enum mpiv_basic basic;	/* for a predefined type, or a derived type
				   made only of one basic kind: that kind;
				   else MPIV_B_NONE */
	size_t nbasic;		/* basic elements per datatype element (for
				   Get_elements, reductions on derived types) */
	size_t nblocks;		/* typemap as merged blocks */
	struct mpiv_block *blocks;
	int refcount;
	int combiner;
	char name[MPI_MAX_OBJECT_NAME];
	size_t align;		/* alignment of the strictest basic part; pads
				   the extent of struct types (MPI's epsilon) */
};

/* Packed size in bytes of count elements. */
size_t mpiv_dt_packed_size(MPI_Datatype dt, int count);
/* true if count elements are one contiguous run at buf + dt->true_lb. */
bool mpiv_dt_is_contig(MPI_Datatype dt);
/* Packs count elements of buf into out (mpiv_dt_packed_size bytes). */
void mpiv_dt_pack(const void *buf, int count, MPI_Datatype dt, void *out);
/* Unpacks `bytes` packed bytes (may be fewer than count elements' worth)
   from in into buf. */
void mpiv_dt_unpack(const void *in, size_t bytes, void *buf, int count,
    MPI_Datatype dt);
/* MPI_SUCCESS or MPI_ERR_TYPE if dt is not usable for communication. */
int mpiv_dt_check(MPI_Datatype dt);
/* A pending request holds a reference on its datatype so MPI_Type_free
   during the operation is safe: retain when posting, release when done.
   No-ops on predefined types. */
void mpiv_dt_retain(MPI_Datatype dt);
void mpiv_dt_release(MPI_Datatype dt);

/* ---------------- ops (op.c) ---------------- */

struct mpiv_op {
	MPI_User_function *user_fn;	/* NULL for predefined */
	int builtin;			/* index for predefined ops */
	bool commute;
	bool predefined;
};

/* inout[i] = in[i] op inout[i], count elements of dt. MPI_SUCCESS or
   MPI_ERR_OP when op is undefined on dt. */
int mpiv_op_apply(MPI_Op op, const void *in, void *inout, int count,
    MPI_Datatype dt);

/* ---------------- groups and communicators (group.c, comm.c) ------- */

struct mpiv_group {
	int size;
	int rank;		/* this process's rank in it, MPI_UNDEFINED if none */
	int *world;		/* group rank -> world rank */
	int refcount;
	bool predefined;
};

struct mpiv_errhandler {
	MPI_Comm_errhandler_function *fn;	/* NULL for predefined */
	int kind;		/* 0 fatal, 1 return, 2 user */
	int refcount;
	bool predefined;
};

struct mpiv_attr;		/* attr.c */
struct mpiv_topo;		/* topo.c */

struct mpiv_comm {
	uint32_t context;	/* point-to-point context id; collectives use
				   context + 1 (MPIV_COLL_CONTEXT) */
	int rank, size;
	struct mpiv_group *group;
	int *world_to_comm;	/* world rank -> comm rank or -1 (world size
				   entries); NULL for MPI_COMM_WORLD */
	MPI_Errhandler errh;
	struct mpiv_attr *attrs;
	struct mpiv_topo *topo;
	bool predefined;
	int coll_seq;		/* collective tag sequence (coll.c) */
	char name[MPI_MAX_OBJECT_NAME];
};

#define MPIV_COLL_CONTEXT(c) ((c)->context + 1)

/* comm rank -> world rank; -1 for a bad rank. */
static inline int
mpiv_comm_world_rank(MPI_Comm c, int r)
{
	return (r >= 0 && r < c->size) ? c->group->world[r] : -1;
}

/* world rank -> comm rank; -1 if not a member. */
static inline int
mpiv_comm_from_world(MPI_Comm c, int w)
{
	if (c->world_to_comm == NULL)
		return w;
	return c->world_to_comm[w];
}

/* Allocates a fresh pair of context ids agreed by every member of `parent`
   (collective over parent). */
int mpiv_comm_alloc_context(MPI_Comm parent, uint32_t *context);
/* Builds a communicator of `group` (takes a reference) with context. */
int mpiv_comm_build(struct mpiv_group *group, uint32_t context,
    MPI_Errhandler errh, MPI_Comm *out);
/* MPI_SUCCESS or MPI_ERR_COMM. */
int mpiv_comm_check(MPI_Comm c);
/* Sets up MPI_COMM_WORLD/SELF and predefined groups (called by MPI_Init). */
int mpiv_comm_init(int world_rank, int world_size);
void mpiv_comm_finalize(void);

/* Upper-half internals shared between comm.c, group.c, attr.c, topo.c
   and coll.c. */
struct mpiv_group *mpiv_group_new(int size);	/* refcount 1, rank computed
						   by mpiv_group_set_rank */
void mpiv_group_set_rank(struct mpiv_group *g);
void mpiv_group_retain(struct mpiv_group *g);
void mpiv_group_release(struct mpiv_group *g);
int mpiv_attr_dup(MPI_Comm oldc, MPI_Comm newc);	/* copy callbacks */
int mpiv_attr_free_all(MPI_Comm c);		/* delete callbacks */
int mpiv_topo_dup(MPI_Comm oldc, MPI_Comm newc);
void mpiv_topo_free(MPI_Comm c);
void mpiv_errh_retain(MPI_Errhandler e);
void mpiv_errh_release(MPI_Errhandler e);
/* Collectives without argument checks or error handler, on an explicit
   internal tag (used to build communicators). */
int mpiv_coll_allreduce(const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, int tag);
int mpiv_coll_allgather(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, MPI_Comm comm, int tag);

/* ---------------- errors (errh.c) ---------------- */

/*
 * Reports `code` raised by function `fn` on comm (MPI_COMM_WORLD if NULL):
 * runs the comm's error handler (fatal: message on stderr naming fn, then
 * the job is aborted) and returns code for ERRORS_RETURN.
 */
int mpiv_err(MPI_Comm comm, int code, const char *fn);
/* The same with an explicit handler, for objects other than a
   communicator (windows): obj is the handle's address given to a user
   handler. */
int mpiv_err_handler(MPI_Errhandler eh, void *obj, int code, const char *fn);
/* One line on what the failing call found (the buffer, the size ...):
   the next mpiv_err() prints it after the code's text, then forgets it. */
void mpiv_err_detail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* The last detail said (for a message outside an MPI call). */
const char *mpiv_err_last_detail(void);
/* Same, for functions that fail with "not supported by mpiv". */
int mpiv_unsupported(const char *fn);

/* ---------------- point to point core (p2p.c, transport.c) -------- */

enum mpiv_send_mode { MPIV_SEND_STANDARD, MPIV_SEND_SYNC, MPIV_SEND_BUFFERED,
    MPIV_SEND_READY };

/*
 * Internal non-blocking send/receive on an explicit context, used by the
 * MPI_ p2p calls (context = comm->context) and by collectives
 * (context = MPIV_COLL_CONTEXT(comm)). dest/source are comm ranks
 * (MPI_PROC_NULL allowed; source may be MPI_ANY_SOURCE). Return MPI codes
 * without calling the error handler.
 */
int mpiv_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
    MPI_Comm comm, uint32_t context, enum mpiv_send_mode mode,
    MPI_Request *req);
int mpiv_irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm, uint32_t context, MPI_Request *req);
/* Waits for all; MPI codes, no error handler. statuses may be NULL. */
int mpiv_waitall(int n, MPI_Request *reqs, MPI_Status *statuses);

/* Blocking helpers for collectives: */
int mpiv_send_coll(const void *buf, int count, MPI_Datatype dt, int dest,
    int tag, MPI_Comm comm);
int mpiv_recv_coll(void *buf, int count, MPI_Datatype dt, int source, int tag,
    MPI_Comm comm);
int mpiv_sendrecv_coll(const void *sbuf, int scount, MPI_Datatype sdt,
    int dest, void *rbuf, int rcount, MPI_Datatype rdt, int source, int tag,
    MPI_Comm comm);

/* Why a Channel Memory connection was lost, in one line (which CM, its
   address, what failed), for the MPI_ERR_PROC_FAILED message; NULL while
   every connection is up (transport.c). */
const char *mpiv_transport_error(void);

/* State of the library (init.c). */
struct mpiv_state {
	bool initialized, finalized;
	int world_rank, world_size;
	int thread_level;
};
extern struct mpiv_state mpiv_state;

/* Aborts the whole job with code (MPI_Abort path; never returns). */
void mpiv_abort_job(int code, const char *why) __attribute__((noreturn));

/* Named fault points for the fault-injection tests (fault.c): kills the
   process with SIGKILL when MPIV_FAULT asks for this hit of NAME. */
void mpiv_fault_point(const char *name);

#endif
