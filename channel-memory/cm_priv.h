/*
 * cm_priv.h: Channel Memory internals, prototypes grouped by file.
 *
 *   cm.c       options, listening socket, signals, the dispatcher link
 *   memcap.c   the default --max-memory, from the machine or cgroup
 *   session.c  one accepted connection: hello, fencing, frame dispatch
 *   job.c      jobs served, per-rank state, memory accounting, stats
 *   relay.c    the live message path: sends, receives, probes, cancels,
 *              deliveries
 *   evlog.c    the per-receiver log of ordering decisions, its memory
 *   ndstore.c  outcomes decided inside a rank (NdRecord, NdAck, NdLog)
 *   replay.c   answering a restarted rank's posts from its log
 *   spill.c    logged payloads moved to a file beyond half the cap
 *   store.c    --store: the durable per-job log, written before answers
 *   recover.c  --store: jobs rebuilt from their files at start
 *   pressure.c a log over --max-memory: asks checkpoints, or gives up
 *   digest.c   send digests, the check of a re-executing sender
 *   ckpt.c     checkpoint marks, durable notices from checkpoint servers,
 *              freeing the log a durable checkpoint made useless
 *   peers.c    where a rank's peers listen, for direct connections
 *   match.c    (runtime/) the MPI matching engine (match.h)
 */
#ifndef MPIV_CM_PRIV_H
#define MPIV_CM_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "auth.h"
#include "conn.h"
#include "match.h"

#define CM_DEFAULT_MAX_MEMORY (8ull << 30)	/* when memcap.c finds nothing */
#define CM_LOG_FULL_TIMEOUT   30	/* seconds: --log-full-timeout */
#define CM_MAX_NRANKS	      (1 << 20)
#define CM_HELLO_TIMEOUT      10.0	/* seconds to say Hello */

/* How the event loop polls after activity (cm.c, cm_spin_mode). */
enum { CM_SPIN_NONE, CM_SPIN_POLL, CM_SPIN_YIELD };
int cm_spin_decide(long busy, long running, long ncpu);

struct job;
struct store;
struct session;

struct cm {
	struct ev_loop *loop;
	int lfd;
	char bound[128];
	/* Given to the dispatcher (so to ranks and CSs): --advertise, else
	   bound (a NAT, a relay or a test's proxy in front of the CM). */
	char addr[128];
	uint64_t max_memory;	/* cap on bytes held per job (messages, log) */
	double log_full_timeout;	/* give up when no checkpoint frees for this */
	const char *spill_dir;	/* NULL: payloads never leave memory */
	const char *store_dir;	/* --store: NULL, nothing survives a crash */
	bool store_fsync;	/* --store-sync fsync: fdatasync before answers */
	/* --files: NULL serves no files, "/" any path, else paths beneath
	   it; --files-journal: where jobs' file journals go (fileserv.c) */
	const char *files_root;
	const char *files_journal;
	struct store *store_dirty;	/* stores with records to write */
	ev_io accept_w;
	ev_signal sigint_w, sigterm_w;
	struct job *jobs;
	struct session *sessions;	/* every live session */
	bool stopping;
	uint64_t activity;	/* frames and payload pieces received */
	long spin_us;		/* --spin: busy-poll this long after activity */
	long ncpu;
	long spin_eval_us;	/* when spin_mode was last decided */
	int spin_mode;		/* CM_SPIN_* decided at the last look */

	/* --secret-file: ranks prove K_rank of their job, others S */
	struct auth_keys keys;
	struct auth_server as;

	/* --dispatcher: the link we dial and keep up */
	char *dispatcher;
	struct session *disp;
	struct dial *disp_dial;	/* a dial in progress */
	ev_timer redial_w;
};

/* A message held by the CM for its receiver until it is matched. */
struct msg {
	struct match_msg m;	/* first: container of the match entry */
	int32_t dst;
	uint64_t seq;
	uint64_t send_id;
	bool sync;
	struct pbuf *pb;	/* the one copy of the payload */
	struct session *filler;	/* sender still streaming the payload */
	uint64_t store_off;	/* payload's offset in the job's store, 0: none */
};

/* A request from a rank to its home CM, as posted (RecvPost, Probe, Cancel). */
enum post_kind { POST_RECV, POST_PROBE, POST_CANCEL };

struct post {
	enum post_kind kind;
	uint64_t req_id;
	uint64_t post_no;	/* the rank's count of posts, 0 = unnumbered */
	uint32_t context;
	int32_t source;
	int32_t tag;
	bool blocking;		/* probes */
};

enum log_kind { LOG_DELIVER, LOG_PROBE, LOG_CANCEL };

/*
 * One ordering decision of a receiver, kept until a checkpoint frees it.
 * `count` > 1 folds identical Iprobe "not found" answers of consecutive
 * posts and events: posts post_no .. post_no+count-1 got events
 * event .. event+count-1.
 */
struct logent {
	struct logent *next;
	enum log_kind kind;
	int32_t rcv;		/* the receiver whose log it is */
	uint64_t event;
	uint64_t post_no;
	uint64_t count;
	/* the request as posted */
	uint32_t req_context;
	int32_t req_source;
	int32_t req_tag;
	bool blocking;
	/* the answer */
	bool found;		/* probes: found; cancels: cancelled */
	int32_t src;
	int32_t tag;
	uint32_t context;
	uint64_t seq;
	uint64_t size;
	uint64_t victim_post;	/* cancels that won: the receive's post_no */
	bool refill;		/* sender died mid-payload: awaiting its re-send */
	bool spilled;		/* the payload is in the spill file, pb NULL */
	uint64_t spill_off;
	uint64_t store_off;	/* payload's offset in the job's store, 0: none */
	struct pbuf *pb;	/* deliveries: shares the message's buffer */
};

/* NdOutcome.kind (runtime/proto/mpiv.proto): 1-7 the outcomes of Test*,
   Wait{any,some} and Request_get_status; from ND_KIND_RECV_BIND on, the
   direct protocol's, which a rank decides itself too. */
enum nd_kind {
	ND_KIND_TEST = 1,
	ND_KIND_GET_STATUS = 7,
	ND_KIND_RECV_BIND = 8,	/* post_no bound to message (src, seq) */
	ND_KIND_PROBE = 9,	/* flag: found (src, seq) */
	ND_KIND_IPROBE = 10,
	ND_KIND_CANCEL = 11,	/* flag: the cancel of post_no succeeded */
	ND_KIND_FINALIZE = 12,	/* the rank committed its MPI_Finalize */
	ND_KIND_NBC = 13,	/* non-blocking collectives stepped at a
				   position (post_no), by serial (indices) */
	ND_KIND_RMA = 14,	/* windows served a passive-target message
				   at a position (post_no), by serial */
	ND_KIND_MAX = ND_KIND_RMA
};

/* One outcome a rank decided itself (NdOutcome), stored in order. */
struct nd_out {
	uint64_t nd_no;
	uint64_t repeat;
	uint64_t post_no;	/* direct protocol kinds, else 0 */
	uint64_t seq;
	int32_t src;
	uint32_t kind;
	bool flag;
	size_t nidx;
	int32_t *idx;
};

/* A post of a replaying rank: parked until its event's turn, or deferred
   (no log entry) until the replay ends. */
struct replay_wait {
	struct replay_wait *next;
	struct post p;
	struct logent *e;
	uint64_t event;
};

struct replay {
	bool active;
	uint32_t incarnation;
	uint64_t from;		/* events up to this are in the rank already */
	uint64_t end;		/* last logged event answered from the log */
	uint64_t next;		/* next event to release */
	double t0;
	struct logent **index;	/* entries sorted by post_no */
	size_t nindex;
	struct replay_wait *parked;	/* sorted by event */
	struct replay_wait *deferred, *deferred_tail;	/* in post order */
	/* Streaming (Hello.replay_window > 0): deliveries pushed before
	   their post, in event order; byev holds the index's entries in
	   event order, ev_pos the first one not yet wholly answered. */
	uint32_t window;	/* at most this many pushed and not posted */
	uint64_t ahead_n;	/* pushed, their post not seen yet */
	uint64_t ahead_bytes;	/* ... and their payload bytes */
	uint64_t pushed;	/* deliveries pushed ahead in this replay */
	uint64_t nd;		/* the rank's own outcomes in its NdLog */
	struct logent **byev;
	size_t nbyev, ev_pos;
};

/* Streaming replay: the most entries a rank may ask to have pushed ahead,
   and the payload bytes pushed ahead beyond which only one more goes
   (more would cost big messages a copy more than the round trip saved:
   2000 x 64 KiB replayed 2x slower with 8 MiB ahead). */
#define REPLAY_WINDOW_MAX	4096
#define REPLAY_AHEAD_BYTES	(256u << 10)

/* CkptMark of a rank, kept until a durable notice applies or drops it. */
struct ckpt_mark {
	struct ckpt_mark *next;
	uint32_t incarnation;	/* the incarnation that sent it */
	uint64_t ckpt_no;
	uint64_t event;
	uint64_t nd_no;
	uint64_t post_no;
};

/* Checkpoint state of a home rank (ckpt.c). */
struct ckpt_state {
	struct ckpt_mark *marks, *marks_tail;	/* ckpt_no order */
	uint32_t nmarks;
	uint64_t last_ckpt;	/* highest ckpt_no marked by the incarnation */
	uint64_t floor_event;	/* a mark's event and nd_no may not go below */
	uint64_t floor_nd;
	/* a durable notice whose mark has not arrived yet (0: none) */
	uint64_t early_ckpt;
	uint32_t early_inc;
	/* what durable checkpoints freed */
	uint64_t freed_event;	/* every log entry up to this event is gone */
	uint64_t freed_nd;	/* every outcome up to this nd_no is gone */
	uint64_t freed_ckpt;	/* the checkpoint that freed them */
	uint32_t freed_inc;
};

/* The digests of one channel's sends: sequences base .. base+n-1. */
struct dighist {
	uint64_t base;
	uint64_t *d;
	uint32_t n, cap;
};

/* State of one rank of a job as this CM sees it. */
struct rank_state {
	struct session *sess;	/* its live connection to this CM */
	uint32_t incarnation;	/* highest seen */
	bool home;		/* this CM is its home CM */
	/* home only: */
	struct match_queue mq;
	uint64_t next_event;
	uint64_t last_post;	/* highest post_no of the live session */
	struct logent *log_head, *log_tail;
	bool log_broken;	/* a decision could not be logged (ENOMEM) */
	uint32_t nrefill;	/* logged deliveries awaiting a re-sent payload */
	struct replay rp;
	struct nd_out *nd;
	size_t nnd, nd_cap;
	uint64_t nd_end;	/* highest nd_no stored */
	/* the connected incarnation was restored from a checkpoint: it has
	   every event up to resume_event and outcome up to resume_nd */
	uint64_t resume_event, resume_nd;
	struct ckpt_state ck;
	struct dighist *dig;	/* per sender, NULL until a digest came */
	uint64_t log_bytes;	/* payload bytes of its log in memory (home) */
	struct logent *spill_next;	/* first log entry not spilled yet */
	bool ck_asked;		/* log pressure asked a checkpoint: not paused */
	double ck_asked_at;
	char listen_addr[64];	/* Hello.listen_addr of the live incarnation */
	/* first CM only (finish.c): the incarnation waiting at the end of
	   MPI_Finalize (FinWait), 0: none */
	uint32_t fin_inc;
	int32_t fin_code;	/* its FinWait.exit_code */
};

struct job {
	struct job *next;
	struct cm *cm;
	char *id;
	int32_t nranks, ncms, cm_index;
	bool relay_only;	/* keep no log, no replay */
	uint8_t token[AUTH_TOKEN_LEN];	/* JobSetup.job_token: T */
	bool has_token;
	struct rank_state *ranks;
	uint64_t unexpected_bytes;
	bool throttled;
	uint64_t throttle_episodes;	/* warn on the first, then rarely */
	/* counters (CmStats) */
	uint64_t messages, bytes, log_entries, log_bytes;
	uint64_t duplicates;
	uint64_t log_meta_bytes;	/* entries and nd outcomes */
	bool log_cap_said;	/* the log outgrew --max-memory (said once) */
	int spill_fd;		/* spill.c: -1 until the first spill */
	uint64_t spill_end, spill_bytes;	/* file size, live bytes in it */
	bool spill_failed, spilling;
	struct store *store;	/* --store: its file (store.c), NULL: none */
	bool recovered;		/* rebuilt from the store, JobSetup not seen */
	ev_timer claim_w;	/* drops a recovered job nobody claims */
	ev_timer pressure_w;	/* while paused: pressure.c */
	double pressure_t0;	/* since when no checkpoint freed anything */
	bool fin_closed;	/* first CM: every rank waited at the end of
				   MPI_Finalize, FinGo given (finish.c) */
	struct fsrv *fs;	/* first CM: the job's files (fileserv.c) */
};

enum session_state {
	SESS_NEW,		/* waiting for Hello */
	SESS_RANK,
	SESS_CONTROL,
	SESS_CS,		/* a checkpoint server's link for one job */
	SESS_DISPATCHER,	/* our own link to the dispatcher */
	SESS_DEAD,		/* refused or closing */
};

struct session {
	struct session *prev, *next;
	struct cm *cm;
	struct conn *c;
	enum session_state state;
	ev_timer hello_w;
	struct job *job;
	int32_t rank;
	uint32_t incarnation;
	bool paused;		/* reading paused by back-pressure */
	uint64_t frames;	/* frames received (busy-poll back-off) */
	uint64_t frames_seen;	/* frames at the last back-off look */
	/* a Send whose payload is streaming in */
	struct pbuf *in_pb;
	struct msg *in_msg;	/* while still unexpected */
	struct logent *in_ent;	/* once delivered (cut-through) */
	Mpiv__StoreMsg in_sm;	/* its record for the store, when complete */
	bool in_store;
	bool in_mcast;		/* a multicast: taken once whole (relay.c) */
};

/* cm.c */
void cm_dispatcher_lost(struct cm *cm);

/* fileserv.c */
int fileserv_setup(struct job *j, const char *cwd, const char **err);
/* The job's journal directory (made if its base is missing). 0, or -1. */
int fileserv_journal_dir(const struct job *j, char *out, size_t n);
void fileserv_drop_recovered(struct cm *cm, const char *job_id);
void fileserv_free(struct job *j);
void fileserv_end(struct job *j);
void fileserv_op(struct session *s, const Mpiv__FileOp *op,
    const uint8_t *data, size_t paylen);

/* session.c */
struct session *session_new(struct cm *cm, int fd, bool dispatcher);
int session_auth_key(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why);
void session_refuse(struct session *s, const char *why);
void session_error(struct session *s, const char *why);
void session_error_code(struct session *s, int code, const char *why);
void session_kill_all(struct cm *cm);
void session_send_hello(struct session *s);

/* job.c */
struct job *job_find(struct cm *cm, const char *id);
int job_setup(struct cm *cm, const char *id, int32_t nranks, int32_t ncms,
    int32_t cm_index, bool relay_only, const char **err);
void job_end(struct cm *cm, struct job *j);
void job_free_all(struct cm *cm);
bool job_is_home(const struct job *j, int32_t rank);
void job_unexpected_add(struct job *j, struct session *sender, uint64_t n);
void job_unexpected_sub(struct job *j, uint64_t n);
void job_detach_session(struct job *j, struct session *s);
void job_unexpected_take(struct job *j, uint64_t n);
void job_log_grew(struct job *j);
void job_memory_check(struct job *j);
uint64_t job_held_bytes(const struct job *j);
void job_recovered(struct job *j);

/* relay.c */
int relay_send_begin(struct session *s, const Mpiv__Send *snd,
    uint32_t len);
void relay_send_end(struct session *s, const Mpiv__Send *snd);
void relay_send_abort(struct session *s);
void relay_live_post(struct session *s, const struct post *p);
void relay_msg_free(struct msg *m);
void relay_free_msg_cb(struct match_msg *mm, void *arg);

/* evlog.c */
struct logent *evlog_new(struct job *j, int32_t rcv, enum log_kind kind,
    uint64_t event, const struct post *p);
bool evlog_fold_probe_miss(struct job *j, struct rank_state *rs,
    uint64_t event, const struct post *p);
void evlog_free(struct job *j, struct rank_state *rs);
uint64_t evlog_trimmable(const struct rank_state *rs, uint64_t upto);
uint64_t evlog_trim(struct job *j, struct rank_state *rs, uint64_t upto,
    uint64_t *entries, uint64_t *bytes);
struct logent *evlog_refill_find(struct rank_state *rs, int32_t src,
    uint64_t seq);
int evlog_index(struct rank_state *rs, uint64_t from, uint64_t upto,
    struct logent ***out, size_t *n);
struct logent *evlog_lookup(struct logent **index, size_t n,
    uint64_t post_no, uint64_t *event);
int evlog_describe_post(char *buf, size_t cap, const struct post *p);
int evlog_describe_entry(char *buf, size_t cap, const struct logent *e);

/* ndstore.c */
void nd_record(struct session *s, const Mpiv__NdRecord *r);
int nd_restore(struct job *j, struct rank_state *rs,
    const Mpiv__NdOutcome *o);
void nd_send_log(struct session *s, struct rank_state *rs, uint64_t after);
void nd_free(struct job *j, struct rank_state *rs);
uint64_t nd_trim(struct job *j, struct rank_state *rs, uint64_t upto);

/* replay.c */
bool replay_check(const struct job *j, int32_t rank, uint32_t incarnation,
    char *why, size_t cap);
void replay_begin(struct session *s, struct rank_state *rs, uint32_t window);
void replay_reset(struct rank_state *rs);
void replay_post(struct session *s, const struct post *p);
void replay_refilled(struct job *j, int32_t rcv);
uint64_t replay_log_events(const struct job *j, const struct rank_state *rs);
uint64_t replay_delivered(const struct rank_state *rs);

/* memcap.c */
uint64_t cm_memcap_default(void);

/* spill.c */
void spill_check(struct job *j);
struct pbuf *spill_load(struct job *j, const struct logent *e);
void spill_forget(struct job *j, struct rank_state *rs, struct logent *e);
void spill_close(struct job *j);

/* store.c */
enum store_rec_type {
	STORE_REC_JOB = 1,
	STORE_REC_MSG,
	STORE_REC_EVENT,
	STORE_REC_ND,
	STORE_REC_RANK,
	STORE_REC_TRIM,
	STORE_REC_DIGEST_TRIM,
};

struct store_rec {
	uint16_t type;
	ProtobufCMessage *meta;	/* the Store* message of the type */
	uint64_t payload_off;
	uint32_t payload_len;
	uint64_t next;		/* offset of the next record */
};

void store_hook(struct cm *cm);
/* Writes the n (at most 3) buffers of iov whole at off; reads n bytes
   whole at off (fileserv.c's outcome log uses them too). 0, or -1
   (errno). */
struct iovec;
int store_write_all(int fd, const struct iovec *iov, int n, uint64_t off);
int store_pread(int fd, void *buf, size_t n, uint64_t off);
int store_open(struct job *j);
void store_token(struct job *j);
void store_close(struct job *j, bool remove);
void store_sync(struct job *j);
uint64_t store_msg(struct job *j, Mpiv__StoreMsg *sm, struct pbuf *pb);
void store_event(struct job *j, const struct logent *e, bool fold);
void store_nd(struct job *j, int32_t rank, const Mpiv__NdOutcome *o,
    uint64_t nd_no, uint64_t repeat);
void store_rank(struct job *j, int32_t rank, uint32_t inc,
    uint64_t resume_event, uint64_t resume_nd);
void store_trim(struct job *j, int32_t rank, const struct ckpt_state *ck);
void store_digest_trim(struct job *j, int32_t src, const uint64_t *seqs,
    size_t n);
void store_forget(struct job *j, struct logent *e);
struct pbuf *store_load(struct job *j, uint64_t off, uint64_t size);
int store_read(int fd, uint64_t off, uint64_t size, struct store_rec *r,
    const char **err);
void store_rec_free(struct store_rec *r);
int store_adopt(struct job *j, int fd, char *path, uint64_t end);
int store_fd(const struct job *j);
void store_set_end(struct job *j, uint64_t end);

/* recover.c */
int store_recover(struct cm *cm);

/* pressure.c */
void pressure_begin(struct job *j);
void pressure_end(struct job *j);
void pressure_relieved(struct job *j, int32_t rank);

/* peers.c */
/* PeerLookup from a rank: where its peer listens, and their pair key. */
void peers_lookup(struct session *s, const Mpiv__PeerLookup *pl);

/* finish.c */
/* A rank's Hello: whether the job is closed (the incarnation leaves),
   and then the exit code its program ended with (*code). */
bool finish_hello(struct job *j, int32_t rank, uint32_t incarnation,
    int32_t *code);
void finish_wait(struct session *s, const Mpiv__FinWait *fw);
void finish_setup(struct job *j, bool closed);

/* digest.c */
int digest_put(struct job *j, int32_t dst, int32_t src, uint64_t seq,
    uint64_t d, char *why, size_t cap);
int digest_check(struct job *j, const Mpiv__Send *snd, char *why,
    size_t cap);
void digest_truncate(struct job *j, int32_t dst, int32_t src, uint64_t seq);
void digest_trim(struct session *s, const Mpiv__DigestTrim *t);
void digest_trim_apply(struct job *j, int32_t src, const uint64_t *seqs,
    size_t n);
void digest_free(struct job *j, struct rank_state *rs);

/* ckpt.c */
bool ckpt_restore_needed(const struct job *j, int32_t rank,
    uint64_t resume_event, uint64_t resume_nd);
bool ckpt_resume_check(const struct job *j, int32_t rank, uint32_t inc,
    uint64_t resume_event, uint64_t resume_nd, char *why, size_t cap);
void ckpt_hello(struct job *j, int32_t rank, uint32_t inc,
    uint64_t resume_event, uint64_t resume_nd);
void ckpt_mark(struct session *s, const Mpiv__CkptMark *mk);
void ckpt_durable(struct session *s, const Mpiv__CkptDurable *d);
void ckpt_free(struct job *j, struct rank_state *rs);

#endif
