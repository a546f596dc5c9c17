/*
 * transport.h: private header of the point-to-point core of libmpi-lite
 * (transport.c, request.c, p2p.c, init.c). Nothing here is seen by the
 * upper half (datatype.c, coll.c, ...), which only uses impl.h.
 *
 *   transport.c  the connections to the Channel Memories: one FIFO output
 *                queue each, buffered input with payloads read straight
 *                into user memory, and the one progress function (poll).
 *   request.c    the request pool, completion, the Wait and Test family,
 *                and the one place each non-deterministic outcome is made.
 *   p2p.c        starting sends, receives, probes and cancels; the MPI_
 *                point-to-point calls; the per-destination seq table and
 *                the post numbers of RecvPost/Probe/Cancel.
 *   ndlog.c      logging and replay of the outcomes the rank decides
 *                itself (docs/REPLAY.md).
 *   nbc.c        running the schedules of non-blocking collectives: their
 *                steps, logged and replayed (docs/COLLECTIVES.md).
 *   p2p_mprobe.c matched probes and their receives.
 *   init.c       MPI_Init/Finalize/Abort and the small environment calls.
 *   ckpt.c       checkpoints of this rank (docs/CHECKPOINT.md): the ctrl
 *                pipes, the trigger, the forked clone and its restore.
 */
#ifndef MPIV_TRANSPORT_H
#define MPIV_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "impl.h"

/* ---------------- requests (request.c) ---------------- */

#define MPIV_REQ_MAGIC	0x72657175u	/* "requ": a live request */

enum mpiv_req_kind {
	MPIV_REQ_SEND = 1,
	MPIV_REQ_RECV,
	MPIV_REQ_PROBE,		/* internal: one Probe/Iprobe round trip */
	MPIV_REQ_DONE,		/* internal: born complete (MPI_PROC_NULL) */
	MPIV_REQ_COLL,		/* a non-blocking collective (nbc.c) */
};

struct mpiv_request {
	uint32_t magic;		/* MPIV_REQ_MAGIC while allocated */
	uint32_t slot;		/* index in the request table */
	enum mpiv_req_kind kind;
	uint64_t id;		/* req_id / send_id of the current start */

	bool persistent;	/* Send_init/Recv_init: survives completion */
	bool active;		/* started, completion not yet reported */
	bool complete;		/* the operation is over; status is final */
	bool freed;		/* MPI_Request_free while active: release
				   on completion */

	/* The operation, as the user described it. */
	void *buf;
	int count;
	MPI_Datatype dt;
	int peer;		/* comm rank, MPI_ANY_SOURCE or MPI_PROC_NULL */
	int tag;
	MPI_Comm comm;
	uint32_t context;
	enum mpiv_send_mode mode;

	/* send progress */
	bool written;		/* the frame left for the socket */
	bool need_ack;		/* synchronous: wait for SyncAck too */
	bool acked;
	int frames_left;	/* a multicast: its frames not yet written
				   (0: one frame, the usual) */

	/* receive progress */
	size_t cap;		/* bytes the user buffer holds */
	void *tmp;		/* staging for a non-contiguous receive */
	bool cancel_wait;	/* Cancel sent, CancelReply not yet seen */

	/* probe answer */
	bool found;

	/* What was posted at the home CM, kept so that a clone restored
	   from a checkpoint can post it again with the same numbers. */
	uint64_t post_no;	/* RecvPost/Probe of the current start, 0: none */
	uint64_t cancel_post_no;	/* Cancel in flight (cancel_wait) */
	int32_t post_src, post_tag;	/* world source / tag as posted (-1 any) */
	bool post_blocking;	/* Probe (not Iprobe) */

	/* Direct protocol (p2p_direct.c). A receive waits in the posted
	   list; a send remembers where and as which seq it went. */
	struct mpiv_request *dp_prev, *dp_next;
	bool dp_posted;		/* in the posted list */
	bool dp_wild;		/* ANY_SOURCE or ANY_TAG: its match is logged */
	bool dp_hold;		/* held back while replay imposes outcomes */
	uint64_t dp_seq;	/* receive: only this seq (a logged match) or
				   0; send: its seq */
	int dp_dst;		/* send: world rank of the receiver */
	uint64_t dp_digest;	/* synchronous send whose seq a trim covered:
				   the digest of its bytes, which are kept
				   nowhere (sent again without them) */

	/* A non-blocking collective: its schedule, freed when it ends;
	   nbc_p2p: MPI_Imrecv's (may be freed or cancelled). */
	struct mpiv_nbc *nbc;
	bool nbc_p2p;

	MPI_Status status;
	struct mpiv_request *next_free;
	struct mpiv_greq *greq;	/* generalized request (grequest.c) */
};

struct mpiv_request *mpiv_req_alloc(enum mpiv_req_kind kind);
/* Generalized requests (grequest.c): Wait/Test report one (query_fn,
   then free_fn), Request_free, Cancel, Request_get_status. */
int mpiv_greq_report(struct mpiv_request *r, MPI_Status *st);
int mpiv_greq_free(struct mpiv_request *r);
int mpiv_greq_cancel(struct mpiv_request *r);
int mpiv_greq_query(struct mpiv_request *r);
void mpiv_req_release(struct mpiv_request *r);
/* Gives r a fresh wire id for its next start and returns it. */
uint64_t mpiv_req_new_id(struct mpiv_request *r);
/* The live request a wire id names, NULL if none (stale or unknown). */
struct mpiv_request *mpiv_req_lookup(uint64_t id);
bool mpiv_req_valid(MPI_Request r);
/* A request handed back complete, with status st (NULL: the empty one):
   what a non-blocking call done at once returns. NULL: out of memory. */
struct mpiv_request *mpiv_req_done(const MPI_Status *st);
/* Marks r complete; releases it if the user already freed it. */
void mpiv_req_complete(struct mpiv_request *r);
/* Sets status to the empty status of the standard. */
void mpiv_req_empty_status(MPI_Status *st);
/* *dst = *src but for MPI_ERROR, which calls of one status leave as it
   was (MPI: only those of several statuses set it). */
void mpiv_status_out(MPI_Status *dst, const MPI_Status *src);
/* The status of a call on MPI_PROC_NULL (source MPI_PROC_NULL, tag
   MPI_ANY_TAG, nothing received), MPI_ERROR left as it was. */
void mpiv_status_proc_null(MPI_Status *st);
/* Blocks (progressing) until r is complete. MPI code. */
int mpiv_req_wait_complete(struct mpiv_request *r);
/* Iprobe's answer: chosen (and logged) by the home CM. */
bool mpiv_nd_iprobe(bool found);
/* Number of live requests (Finalize checks nothing is pending). */
int mpiv_req_live(void);
/* Calls fn on every live request, in slot order. */
void mpiv_req_foreach(void (*fn)(struct mpiv_request *r, void *arg),
    void *arg);

/* ---------------- non-deterministic outcomes (ndlog.c) ---------------- */

/* NdOutcome.kind */
enum mpiv_nd_kind {
	MPIV_ND_TEST = 1,
	MPIV_ND_TESTANY = 2,
	MPIV_ND_TESTSOME = 3,
	MPIV_ND_TESTALL = 4,
	MPIV_ND_WAITANY = 5,
	MPIV_ND_WAITSOME = 6,
	MPIV_ND_GET_STATUS = 7,
	/* direct protocol (docs/DIRECT.md) */
	MPIV_ND_BIND = 8,	/* wildcard receive post_no matched (src, seq) */
	MPIV_ND_PROBE = 9,	/* flag: found (src, seq) */
	MPIV_ND_IPROBE = 10,
	MPIV_ND_CANCEL = 11,	/* flag: receive post_no was cancelled */
	MPIV_ND_FINALIZE = 12,	/* MPI_Finalize committed */
	/* non-blocking collectives (nbc.c): at position post_no - 1, the
	   schedules whose serials are the indices each took one step */
	MPIV_ND_NBC = 13,
	/* passive target (win_passive.c): at position post_no - 1, the
	   windows whose serials are the indices each served one message */
	MPIV_ND_RMA = 14,
};

/* Reads MPIV_LOGGING (0: record nothing) and resets the counters. */
void mpiv_ndlog_init(void);
void mpiv_ndlog_fini(void);
bool mpiv_ndlog_enabled(void);
/* Takes an NdLog chunk read after HelloReply (kept until replayed).
   -1 when out of memory. */
int mpiv_ndlog_load(Mpiv__NdLog *chunk);
/* Logged outcomes not yet replayed. */
uint64_t mpiv_ndlog_replay_left(void);
/*
 * Starts the next non-deterministic call (gives it its nd_no). Returns 1
 * with *out = the logged outcome to impose (valid until the next call),
 * 0 when the log does not cover it (decide live, then record), -1 when
 * the log contradicts the call (divergence: mpiv_tp_set_error was called).
 */
int mpiv_ndlog_next(uint32_t kind, const Mpiv__NdOutcome **out);
/* The logged call the next mpiv_ndlog_next() would meet (not taken),
   NULL when the log has no call left. */
const Mpiv__NdOutcome *mpiv_ndlog_peek(void);
/* Takes the next number (the log must not cover it: a live decision)
   and records an MPIV_ND_NBC (or MPIV_ND_RMA) outcome for it: at
   position pos the schedules serials[0..n) each took one step (the
   windows each served one passive message). MPI code. */
int mpiv_ndlog_record_at(uint32_t kind, uint64_t pos, int n,
    const int *serials);
/* nd_no of the current call. */
uint64_t mpiv_ndlog_current(void);
const char *mpiv_ndlog_kind_name(uint32_t kind);
/* Records the live outcome of the current call: flag = something
   completed, idx[0..n) = which (Testany/Testsome/Waitany/Waitsome). An
   outcome with flag set is sent at once. MPI code. */
int mpiv_ndlog_record(uint32_t kind, bool flag, int n, const int *idx);
/* The same for the direct kinds that name a message or a post. */
int mpiv_ndlog_record_msg(uint32_t kind, bool flag, uint64_t post_no,
    int32_t src, uint64_t seq);
/* A wildcard receive (post post_no) matched (src, seq): takes the next
   number, leaves as soon as the lower numbers have (not waited for). */
int mpiv_ndlog_record_bind(uint64_t post_no, int32_t src, uint64_t seq);
/* The logged match of wildcard receive post_no, if the log has one. */
bool mpiv_ndlog_bind_of(uint64_t post_no, int32_t *src, uint64_t *seq);
/* The highest seq from world rank src that a logged wildcard match names
   (0: none). */
uint64_t mpiv_ndlog_bind_seq_max(int32_t src);
/* The highest post number a logged wildcard match names (0: none). */
uint64_t mpiv_ndlog_bind_max(void);
/* True while logged calls remain to be replayed. */
bool mpiv_ndlog_replaying(void);
/* The log says an earlier incarnation committed MPI_Finalize. */
bool mpiv_ndlog_committed(void);
/* Nothing pending and every record acknowledged. */
bool mpiv_ndlog_acked(void);
/* Records sent so far / acknowledged so far (ack ids). */
/* Whether outcome number `no` is stored at the home CM (acknowledged). */
bool mpiv_ndlog_stored(uint64_t no);
/* Before a frame to CM `cm` leaves: pending outcomes go to the home CM;
   for another CM, waits for their NdAck. MPI code. */
int mpiv_ndlog_before_frame(int cm);
/* Sends whatever is pending (Finalize). MPI code. */
int mpiv_ndlog_flush(void);
/* NdAck from the home CM. */
void mpiv_ndlog_ack(uint64_t ack_id);
/* Checkpoint: sends what is pending and waits until the home CM acked
   every record. MPI code. */
int mpiv_ndlog_sync(void);
/* nd_no of the last call recorded or replayed (at a safe point). */
uint64_t mpiv_ndlog_done(void);
/* A restored clone: forgets the replay log it had in memory (the home
   CM sends the outcomes after the checkpoint again) and anything
   pending. */
void mpiv_ndlog_restore_reset(void);

/* ---------------- non-blocking collectives (nbc.c) ---------------- */

/* A deterministic point of the program: the start of one of its own
   operations (a send, a receive, a probe, a cancel, a non-blocking
   collective). Replays the collectives' steps logged at the position
   reached, then moves to the next position. MPI code. */
int mpiv_nbc_tick(void);
/* Lets every active schedule take the steps it can (live: recorded;
   replay: exactly the logged ones at this position). Called wherever
   the library waits or polls. MPI code. */
int mpiv_nbc_progress(void);
/* The entry of a call of the program's that waits or polls without
   starting an operation (MPI_Wait, the Test family ...): a new place for
   passive-target services, and an advance point. MPI code. */
int mpiv_nbc_call(void);
/* An operation of the program's own has left (its frame is out): the
   passive-target services logged for this call are replayed here if
   nothing in the call waits. A failure becomes the transport's error
   (mpiv_tp_set_error): the operation itself is started. */
void mpiv_nbc_started(void);
/* Inside an advance point or a step: the sends and receives started
   are a schedule's, not the program's (and no checkpoint is taken in
   the middle of a step). */
bool mpiv_nbc_stepping(void);
/* Active non-blocking collectives and windows served at advance points
   (0: the hooks cost one branch). */
extern int mpiv_nbc_active;
/* For the state dump: the position and the count of calls (nbc.c). */
void mpiv_nbc_where(uint64_t *pos, uint64_t *seg);
/* A window that may be served at advance points comes (+1) or goes. */
void mpiv_nbc_bg(int delta);
/* Marks what follows as the library's own, not the program's (no
   position, no checkpoint) until mpiv_nbc_leave(the value returned). */
bool mpiv_nbc_enter(void);
void mpiv_nbc_leave(bool was);
/* win_passive.c, at advance points: serves the windows whose message
   came (one logged outcome at position pos; *served: any), or replays
   the logged outcome at the head of the log. MPI code. */
int mpiv_win_serve_live(uint64_t pos, bool *served);
int mpiv_win_serve_replay(void);
/* The request a blocking wait (mpiv_req_wait_complete) waits for, NULL:
   when it is the one active schedule's, its steps are not logged. */
extern struct mpiv_request *mpiv_nbc_waited;
/* r is a non-blocking collective's request (not MPI_Imrecv's). */
bool mpiv_nbc_is_collective(const struct mpiv_request *r);
/* The request r of a schedule is released before it ended. */
void mpiv_nbc_drop(struct mpiv_request *r);

/* ---------------- p2p (p2p.c) ---------------- */

int mpiv_p2p_init(int world_size);
void mpiv_p2p_fini(void);
/* Starts r (fresh Isend/Irecv or MPI_Start of a persistent one). */
int mpiv_p2p_start(struct mpiv_request *r);
/* One probe of (comm rank source, tag) on comm's point-to-point
   context, logged and replayed as MPI_Probe/MPI_Iprobe. MPI code. */
int mpiv_p2p_probe(int source, int tag, MPI_Comm comm, bool blocking,
    bool *found, MPI_Status *status);
/* Transport callbacks. */
void mpiv_p2p_send_written(struct mpiv_request *r);
void mpiv_p2p_sync_ack(uint64_t send_id);
/* Synchronous sends still waiting for their SyncAck. */
extern int mpiv_p2p_pending_acks;
/* The last send sequence used for receiver dst (relay). */
uint64_t mpiv_p2p_sent_seq(int dst);
/* Copies the last send sequence used per receiver (n world ranks). */
void mpiv_p2p_seq_copy(uint64_t *out, int n);
/* RecvPost/Probe/Cancel issued so far (the last post_no). */
uint64_t mpiv_p2p_post_count(void);
/* A restored clone: posts again every receive, probe and cancel still
   pending (original post numbers, in their order) and treats written
   synchronous sends as acknowledged. MPI code. */
int mpiv_p2p_restore(void);

/* ---------------- transport (transport.c) ---------------- */

/*
 * Dials every CM of "host:port,host:port,..." and says Hello. On failure
 * returns -1 with a one-line reason in err (the CM's text when refused).
 */
int mpiv_tp_open(const char *cms, const char *job, int rank, int size,
    uint32_t incarnation, char *err, size_t errlen);
int mpiv_tp_ncms(void);
/* mpiv_tp_open failed because a CM freed the log this incarnation would
   replay (a durable checkpoint the dispatcher had not heard of yet when
   it launched us from the beginning): it must be restored instead. */
bool mpiv_tp_restore_needed(void);
/* Direct jobs: the job's first CM said (HelloReply.fin_closed, FinGo)
   that every rank waits at the end of MPI_Finalize: leave. */
bool mpiv_tp_fin_closed(void);
/* With it, at MPI_Init: the exit code this rank's program ended with
   (its waiting incarnation's FinWait), which the leaving one exits with. */
int mpiv_tp_fin_code(void);
/* Index of the CM that is home of world rank r. */
int mpiv_tp_home(int world_rank);

/*
 * Queues one frame for CM `cm`: type/m encoded now, then `paylen` bytes at
 * `payload` (not copied: they must stay valid until written). `owned` is
 * freed once written; `req` (if not NULL) gets mpiv_p2p_send_written().
 * Writing starts at once if the queue was empty. MPI code; on failure
 * `owned` is freed and req is not notified.
 */
int mpiv_tp_send(int cm, uint16_t type, const ProtobufCMessage *m,
    const void *payload, size_t paylen, void *owned,
    struct mpiv_request *req);

/*
 * Queues a frame without payload ahead of every frame not yet started on
 * that connection (NdRecord: it must not wait behind large payloads, and
 * the frames it jumps were issued before it, so none depends on it).
 * Urgent frames keep their order among themselves. MPI code.
 */
int mpiv_tp_send_urgent(int cm, uint16_t type, const ProtobufCMessage *m);
/* Progresses until every urgent frame to `cm` is in the kernel. MPI code. */
int mpiv_tp_wait_urgent(int cm);

/*
 * The progress engine: polls every CM socket for at most timeout_ms
 * (0: just look, <0: sleep until something happens), writes queued
 * output and dispatches every complete incoming frame. MPI_SUCCESS or
 * MPI_ERR_PROC_FAILED once a CM connection is lost.
 */
int mpiv_tp_progress(int timeout_ms);
/* One more fd in every wait of mpiv_tp_progress: when it is readable the
   wait returns (the Finalize keeper's pidfd of its child); -1: none. */
void mpiv_tp_wake_fd(int fd);
/*
 * The end of a non-blocking call (Test*, Request_get_status, Iprobe)
 * that entered at entry (mono_us) and found something or not, after its
 * outcome is decided and logged: a run of fruitless calls yields the CPU
 * or sleeps briefly in poll() on the sockets (pollback.c). MPI code; a
 * lost connection shows in the next call.
 */
void mpiv_tp_poll_done(long entry, bool found);
/* Progresses until every output queue is empty. MPI code. */
int mpiv_tp_flush(void);
/* Every message sent so far is stored at its CM (Flush/FlushAck to the
   CMs sent to since the last call). MPI code. */
int mpiv_tp_sync_cms(void);
/* Says Bye, shuts the connections down and frees everything. */
void mpiv_tp_close(int exit_code);
/* Non-NULL once a connection is lost: why, in one line. */
const char *mpiv_tp_error(void);
/* Highest seq CM holds from us for receiver dst (HelloReply.last_seq). */
uint64_t mpiv_tp_last_seq(int dst);
/* CM cm takes Send frames with several receivers (Send.mdst). */
bool mpiv_tp_mcast(int cm);
/* Last event number (Deliver, ProbeReply, CancelReply) fully received. */
/* A relay receive got its message: status (src a world rank, got bytes
   kept of len sent: truncated past r->cap) and completion. */
void mpiv_tp_recv_done(struct mpiv_request *r, int src, int tag, size_t got,
    size_t len);
uint64_t mpiv_tp_last_event(void);
/* A relay re-execution has not yet issued again everything the CMs hold
   from its failed incarnation: logged decisions not yet answered (or
   pushed ahead of a post not made yet), or sends below the sequences a
   CM holds. */
bool mpiv_tp_replaying(void);
/* True while some connection is in the middle of an incoming frame. */
bool mpiv_tp_reading_frame(void);
/* Sends `m` to CM `cm` and waits until it is in the kernel, without
   reading anything (the state a checkpoint mark describes must not move).
   Every queue must be empty. MPI code. */
int mpiv_tp_send_now(int cm, uint16_t type, const ProtobufCMessage *m);
/* The clone of a checkpoint: closes every CM socket (close only: the
   parent goes on using the connections). */
void mpiv_tp_clone_detach(void);
/*
 * A restored clone: drops the read state (a half-read frame is lost, the
 * CM sends it again), dials every CM again with Hello{incarnation,
 * resume_event, resume_nd} and reads the home CM's NdLog. -1 with the
 * reason in err; a fenced clone exits.
 */
int mpiv_tp_reopen(uint32_t incarnation, uint64_t resume_event,
    uint64_t resume_nd, char *err, size_t errlen);
/* A restored clone's new credential (hex, from its node): replaces the
   old incarnation's in place. 0, or -1 when hex is not a key. */
int mpiv_tp_set_key(const char *hex);
/* Fails every later call with this one-line reason, like a lost
   connection (a replay that contradicts the log, a failed restore); the
   first reason stays. */
void mpiv_tp_set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* ---------------- MPI-IO (file_op.c) ---------------- */

/* Where the payload of FileRes r (paylen bytes) goes: the buffer of the
   operation in flight, at most what it takes (*keep); NULL/0 for any
   other answer (dropped). */
void mpiv_file_reply_dst(const Mpiv__FileRes *r, size_t paylen,
    uint8_t **dst, size_t *keep);
/* FileRes r arrived with got payload bytes kept: the answer of the
   operation in flight, or ignored. */
void mpiv_file_reply(const Mpiv__FileRes *r, size_t got);
/* A restored clone: sends the operation in flight again (same op_no),
   its answer was lost with the old connection. MPI code. */
int mpiv_file_restore(void);

/* ---------------- checkpoints (ckpt.c) ---------------- */

/* Reads MPIV_CTRL_FD, MPIV_CTRL_IN_FD, MPIV_CKPT_INTERVAL (after the
   transport is open). */
void mpiv_ckpt_init(int rank, int size, uint32_t incarnation);
void mpiv_ckpt_fini(void);
/* The node -> rank ctrl pipe while checkpoints are possible, else -1:
   the progress engine polls it and calls mpiv_ckpt_ctrl_input(). */
int mpiv_ckpt_ctrl_fd(void);
/* Waits until the rank's stdout/stderr so far reached the dispatcher
   (asked through the node; nothing to wait for without one). MPI code. */
int mpiv_ckpt_output_sync(void);
void mpiv_ckpt_ctrl_input(void);

extern bool mpiv_ckpt_armed;
void mpiv_ckpt_check(void);
/* Milliseconds until the next periodic checkpoint is due (at least 1),
   -1 when none: the timeout of a sleep at a safe point, so that a rank
   blocked inside an MPI call (a receive waiting for a busy peer, a send
   its CM holds back) is checkpointed on time. */
int mpiv_ckpt_due_ms(void);
/* A peer asks for a checkpoint (its log of messages to us is full):
   one is taken at the next safe point, when checkpoints are possible. */
void mpiv_ckpt_ask(void);
/* The home CM says checkpoint k of this rank is durable: the next safe
   point sends every CM the DigestTrim of k. */
void mpiv_ckpt_durable(uint64_t k);
/*
 * A safe point: at the entry of an MPI operation (and while a Wait
 * sleeps), nothing of the rank's own is half done. Takes a checkpoint
 * when one is due or was asked for. Errors surface through the
 * transport (later calls fail). One branch when checkpoints are off.
 */
static inline void
mpiv_ckpt_point(void)
{
	if (__builtin_expect(mpiv_ckpt_armed, 0))
		mpiv_ckpt_check();
}

/* fault.c: forget the parsed MPIV_FAULT (a restored clone reads it
   again for its new incarnation; hits count from 0). */
void mpiv_fault_reset(void);

#endif
