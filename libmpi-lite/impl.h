/*
 * impl.h: libmpi-lite internals shared by its files. Two halves meet here:
 *
 *   core (transport.c, p2p.c, request.c, nbc.c, init.c) owns the
 *   connections to the Channel Memories, requests and progress;
 *   upper (datatype.c, op.c, coll.c, coll_nbc.c, comm.c, group.c, topo.c,
 *   errh.c, info.c, attr.c, win*.c, unsupported.c) owns objects,
 *   collectives and one-sided communication, built on the internal
 *   point-to-point calls declared below.
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
	/* Fortran: LOGICAL (gfortran: an int, .true. = 1), CHARACTER (no
	   reductions), and the pairs whose index has the value's type */
	MPIV_B_LOGICAL, MPIV_B_CHARACTER, MPIV_B_2REAL, MPIV_B_2DOUBLE,
};

/* One contiguous run of bytes in a datatype's typemap. */
struct mpiv_block {
	MPI_Aint disp;
	size_t len;
};

/* `count` consecutive basic elements of one kind, `size` bytes each, in
   typemap order (MPI_Get_elements on a partial element walks these). */
struct mpiv_erun {
	size_t size;
	size_t count;
	enum mpiv_basic kind;	/* (MPI_Pack_external converts by kind) */
};

struct mpiv_dt_args;		/* constructor arguments (dt_envelope.c) */

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
	size_t neruns;		/* basic element sizes in typemap order; */
	struct mpiv_erun *eruns;/* NULL: predefined (one element of size),
				   or too many runs (eruns_lost) */
	bool eruns_lost;
	struct mpiv_dt_args *args;	/* how it was built (get_contents) */
	struct mpiv_attr *attrs;	/* attr.c */
};

/* Records how a derived type was built, for MPI_Type_get_envelope and
   MPI_Type_get_contents (retains the types). MPI_SUCCESS or
   MPI_ERR_NO_MEM (then the type is freed). */
int mpiv_dt_set_args(MPI_Datatype dt, int combiner, int ni, const int *ints,
    int na, const MPI_Aint *aints, int nc, const MPI_Count *counts, int nt,
    const MPI_Datatype *types);
void mpiv_dt_free_args(MPI_Datatype dt);
/* Basic elements in `bytes` packed bytes of dt (whole elements and the
   basic elements of a partial one), -1 when that is not a whole number
   of basic elements (dt_large.c). */
MPI_Count mpiv_dt_elements(MPI_Datatype dt, size_t bytes);
/* Packed bytes of the first n basic elements of dt, count elements at
   most: what MPI_Status_set_elements records; -1 if n is over that. */
long long mpiv_dt_elements_bytes(MPI_Datatype dt, MPI_Count n);

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
	/* A Fortran user function (MPI_OP_CREATE from Fortran): called
	   instead of user_fn with the datatype as a Fortran handle. */
	void (*fortran_fn)(void *in, void *inout, MPI_Fint *len,
	    MPI_Fint *datatype);
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
	/* A Fortran handler (MPI_COMM_CREATE_ERRHANDLER from Fortran):
	   called instead of fn with the communicator as a Fortran handle. */
	void (*fortran_fn)(MPI_Fint *comm, MPI_Fint *code);
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
	int nbc_seq;		/* non-blocking collectives started on it:
				   the tag of the next one (nbc.c) */
	int nbc_busy;		/* of those, not ended yet */
	bool free_pending;	/* MPI_Comm_free came while nbc_busy */
	char name[MPI_MAX_OBJECT_NAME];
	bool of_window;		/* a window's private one (win.c) */
	/* Intercommunicators (intercomm.c): group, rank and size are the
	   local group's; point-to-point ranks name the remote group, and
	   world_to_comm maps the remote group's world ranks. */
	struct mpiv_group *remote;	/* NULL for an intracommunicator */
	struct mpiv_comm *local;	/* intracommunicator of the local
					   group (internal use) */
	MPI_Info info;		/* hints set by the user (comm_info.c) */
	uint32_t file_opens;	/* MPI_File_open calls on it (file.c): the
				   same count on every member */
};

#define MPIV_COLL_CONTEXT(c) ((c)->context + 1)
/* Non-blocking collectives' hidden context: never matches user messages
   nor blocking collectives (contexts stay below 2^31, comm.c). */
#define MPIV_NBC_CONTEXT_BIT	0x80000000u
#define MPIV_NBC_CONTEXT(c)	((c)->context | MPIV_NBC_CONTEXT_BIT)

/* The group point-to-point ranks name: the remote group of an
   intercommunicator, else the communicator's own group. */
static inline struct mpiv_group *
mpiv_comm_peer_group(MPI_Comm c)
{
	return c->remote != NULL ? c->remote : c->group;
}

/* true for a valid intercommunicator handle. */
static inline bool
mpiv_comm_is_inter(MPI_Comm c)
{
	return c != NULL && c->group != NULL && c->remote != NULL;
}

/* comm rank (of the peer group) -> world rank; -1 for a bad rank. */
static inline int
mpiv_comm_world_rank(MPI_Comm c, int r)
{
	struct mpiv_group *g = mpiv_comm_peer_group(c);

	return (r >= 0 && r < g->size) ? g->world[r] : -1;
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
/* The last non-blocking collective on c ended: a communicator the
   program freed meanwhile goes now (MPI frees it once pending
   operations complete). */
void mpiv_comm_nbc_done(MPI_Comm c);

/* Frees a communicator built by mpiv_comm_build whose attributes are
   gone (internal ones, failed constructions). */
void mpiv_comm_destroy(MPI_Comm c);
/* Sets up MPI_COMM_WORLD/SELF and predefined groups (called by MPI_Init). */
int mpiv_comm_init(int world_rank, int world_size);
void mpiv_comm_finalize(void);
/* Context ids: the next one this process may use, and moving past
   `used` (intercommunicators agree on them over two groups). */
uint32_t mpiv_comm_next_context(void);
void mpiv_comm_skip_context(uint32_t used);
/* Split without checks or error handler (comm.c). */
int mpiv_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
/* Intercommunicators (intercomm.c): what comm.c delegates. */
void mpiv_inter_clear(MPI_Comm c);
int mpiv_inter_dup(MPI_Comm comm, MPI_Comm *newcomm);
int mpiv_inter_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int mpiv_inter_compare(MPI_Comm c1, MPI_Comm c2);
/* The collectives on an intercommunicator (intercomm_coll.c; the MPI_
   calls of coll.c hand an intercommunicator over; they check and report
   errors). */
int mpiv_inter_barrier(MPI_Comm ic);
int mpiv_inter_bcast(void *buf, int count, MPI_Datatype dt, int root,
    MPI_Comm ic);
int mpiv_inter_reduce(const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, int root, MPI_Comm ic);
int mpiv_inter_allreduce(const void *sbuf, void *rbuf, int count,
    MPI_Datatype dt, MPI_Op op, MPI_Comm ic);
int mpiv_inter_gather(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm ic);
int mpiv_inter_gatherv(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rdt,
    int root, MPI_Comm ic);
int mpiv_inter_scatter(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt, int root, MPI_Comm ic);
int mpiv_inter_scatterv(const void *sbuf, const int *scounts,
    const int *displs, MPI_Datatype sdt, void *rbuf, int rcount,
    MPI_Datatype rdt, int root, MPI_Comm ic);
int mpiv_inter_allgatherv(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, const int *rcounts, const int *displs,
    MPI_Datatype rdt, MPI_Comm ic);
int mpiv_inter_reduce_scatter(const void *sbuf, void *rbuf, int rcount,
    const int *rcounts, MPI_Datatype dt, MPI_Op op, MPI_Comm ic);
int mpiv_inter_alltoallv(const void *sbuf, int scount, const int *scounts,
    const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount,
    const int *rcounts, const int *rdispls, MPI_Datatype rdt, MPI_Comm ic);
int mpiv_inter_alltoallw(const void *sbuf, const int *scounts,
    const int *sdispls, const MPI_Datatype *stypes, void *rbuf,
    const int *rcounts, const int *rdispls, const MPI_Datatype *rtypes,
    MPI_Comm ic);
/* Communicator hints (comm_info.c). */
int mpiv_comm_info_dup(MPI_Comm oldc, MPI_Info info, MPI_Comm newc);
void mpiv_comm_info_free(MPI_Comm c);

/* Upper-half internals shared between comm.c, group.c, attr.c, topo.c
   and coll.c. */
struct mpiv_group *mpiv_group_new(int size);	/* refcount 1, rank computed
						   by mpiv_group_set_rank */
void mpiv_group_set_rank(struct mpiv_group *g);
void mpiv_group_retain(struct mpiv_group *g);
void mpiv_group_release(struct mpiv_group *g);
int mpiv_attr_dup(MPI_Comm oldc, MPI_Comm newc);	/* copy callbacks */
int mpiv_attr_free_all(MPI_Comm c);		/* delete callbacks */
int mpiv_type_attr_dup(MPI_Datatype oldt, MPI_Datatype newt);
int mpiv_type_attr_free_all(MPI_Datatype t);
int mpiv_win_attr_get(MPI_Win win, int keyval, void *attribute_val,
    int *flag);
int mpiv_win_attr_free_all(MPI_Win win);
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

/* ---------------- non-blocking collectives (nbc.c) ---------------- */

/*
 * A schedule: numbered rounds of sends and receives (named peers, on
 * the communicator's hidden context, one tag per collective) and local
 * steps (a reduction, a copy). Round k begins once every operation of
 * round k-1 completed: its local steps run in the order added, then its
 * sends and receives are posted. coll_nbc.c builds them; nbc.c runs
 * them (docs/COLLECTIVES.md, "Non-blocking collectives").
 */
struct mpiv_nbc;

/* A new empty schedule on comm (NULL: out of memory). */
struct mpiv_nbc *mpiv_nbc_new(MPI_Comm comm);
/* Adds to round `round`; MPI code (the schedule stays usable). */
int mpiv_nbc_send(struct mpiv_nbc *s, int round, const void *buf, int count,
    MPI_Datatype dt, int peer);
int mpiv_nbc_recv(struct mpiv_nbc *s, int round, void *buf, int count,
    MPI_Datatype dt, int peer);
/* The same data to the n comm ranks peers (distinct, not us) in round:
   one multicast where the protocol has one (mpiv_imcast), else n sends.
   The array is copied. */
int mpiv_nbc_mcast(struct mpiv_nbc *s, int round, const void *buf, int count,
    MPI_Datatype dt, const int *peers, int n);
/* inout = in op inout, at the beginning of round. */
int mpiv_nbc_reduce(struct mpiv_nbc *s, int round, const void *in,
    void *inout, int count, MPI_Datatype dt, MPI_Op op);
/* (sbuf, scount, sdt) copied to (rbuf, rcount, rdt). */
int mpiv_nbc_copy(struct mpiv_nbc *s, int round, const void *sbuf,
    int scount, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt);
/* Memory owned by the schedule, freed when it ends: room for count
   elements of dt in dt's layout (zero-filled); NULL when out of memory
   (or count 0). */
void *mpiv_nbc_temp(struct mpiv_nbc *s, int count, MPI_Datatype dt);
/* Hands malloc'd memory to the schedule (freed when it ends). */
int mpiv_nbc_own(struct mpiv_nbc *s, void *raw);
/* A request started already (a matched receive, MPI_Imrecv) that round
   also waits for; the schedule owns it from here. */
int mpiv_nbc_adopt(struct mpiv_nbc *s, int round, MPI_Request r);
/* A point-to-point operation's schedule (MPI_Imrecv): its request may be
   freed while active, and cancelling it does nothing. */
void mpiv_nbc_mark_p2p(struct mpiv_nbc *s);
/* The status the request reports when it ends (default: empty). */
void mpiv_nbc_set_status(struct mpiv_nbc *s, const MPI_Status *st);
/* Starts the schedule as the request *req (it owns s from here, also
   on failure). MPI code. */
int mpiv_nbc_start(struct mpiv_nbc *s, MPI_Request *req);
/* Frees a schedule never started. */
void mpiv_nbc_discard(struct mpiv_nbc *s);

/* Local copy between (type, count) pairs (coll.c). MPI code. */
int mpiv_coll_copy(const void *sbuf, int scount, MPI_Datatype sdt,
    void *rbuf, int rcount, MPI_Datatype rdt);

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
/* Error classes and codes the program added (errclass.c): true if code
   is one, with its class and string ("" when none was set). */
bool mpiv_errclass_lookup(int code, int *errclass, const char **string);
int mpiv_errclass_lastused(void);

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
int mpiv_mcast_coll(const void *buf, int count, MPI_Datatype dt,
    const int *dests, int n, int tag, MPI_Comm comm);
/* Whether the protocol has a multicast (the relay). */
bool mpiv_can_mcast(void);
/* mpiv_mcast_coll's multicast on any context, not waited for: one
   request (n >= 2 and mpiv_can_mcast() only). MPI code. */
int mpiv_imcast(const void *buf, int count, MPI_Datatype dt, const int *dests,
    int n, int tag, MPI_Comm comm, uint32_t context, MPI_Request *req);
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
/* Tells the node agent that this rank finished MPI_Finalize: however the
   program ends from here, the other ranks may end before the job fails. */
void mpiv_say_finalized(void);

/* The MPI call of a blocking collective's internal tag, NULL: none
   (coll.c; what a blocked rank reports, waitrep.c). */
const char *mpiv_coll_tag_name(int tag);

/* Named fault points for the fault-injection tests (fault.c): kills the
   process with SIGKILL when MPIV_FAULT asks for this hit of NAME. */
void mpiv_fault_point(const char *name);

#endif
