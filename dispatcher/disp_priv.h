/*
 * disp_priv.h: the dispatcher's private state and prototypes, grouped by
 * file. One struct disp per daemon, passed around; peers and jobs are
 * lists hanging off it.
 */
#ifndef MPIV_DISP_PRIV_H
#define MPIV_DISP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "auth.h"
#include "conn.h"
#include "frame.h"

#define DISP_HELLO_TIMEOUT	10.0	/* s to say Hello */
#define DISP_HB_TIMEOUT		10.0	/* s of node silence = node lost */
#define DISP_KILL_GRACE		3.0	/* s to wait for killed ranks */
#define DISP_REPLAY_WAIT	1.0	/* s to wait for a late ReplayDone */
#define DISP_MAX_RANKS		65536
#define DISP_MAX_CMS		1024
#define DISP_OUT_HIGH		(16u << 20)	/* client queue: pause nodes */
#define DISP_OUT_LOW		(4u << 20)	/* resume them below this */
#define DISP_MAX_RESTARTS	50	/* per rank, unless the job says */
#define DISP_DEADLOCK_AFTER	30.0	/* s of a deadlock before it is told */
#define DISP_DEAD_KEEP		256	/* declared-dead node ids remembered */
#define DISP_MAX_BINARY		(1ull << 30)	/* largest program shipped */
#define DISP_MAX_STDIN		(64ull << 20)	/* largest stdin a job carries */
#define DISP_WARN_INTERVAL	10.0	/* s: one begin line per warning kind */
#define DISP_STALL_AFTER	5.0	/* s unanswered: a CM/CS stalls */

enum disp_role {
	DPEER_NEW = 0,		/* no Hello yet */
	DPEER_CM,
	DPEER_NODE,
	DPEER_CLIENT,
	DPEER_CS,		/* checkpoint server */
	DPEER_DEAD,		/* closing */
};

struct djob;

struct dpeer {
	struct disp *d;
	struct conn *c;
	enum disp_role role;
	char name[64];
	ev_timer hello_w;	/* Hello deadline, then node heartbeat idle */
	/* CM, CS */
	char addr[128];		/* host:port ranks dial; "" until registered */
	int njobs;		/* jobs it serves (for spreading) */
	double heard;		/* ev_now() of its last frame */
	double probe_out;	/* first unanswered probe (0: none) */
	bool answers;		/* answered a probe once: can stall */
	bool stalled;		/* silent past --stall-after */
	/* node */
	char node_id[80];	/* "NAME#N", "" until NodeRegister */
	double last_seen;	/* ev_now() of its last frame */
	int slots;		/* 0 until NodeRegister */
	bool criu;		/* NodeRegister.criu: can dump and restore */
	bool no_listen;		/* NodeRegister.no_listen: behind a firewall */
	int used;		/* launched or assigned ranks not yet exited */
	/* client */
	struct djob *job;
	struct dpeer *prev, *next;
};

/*
 * Conditions of a job the user is told about (disp_warn.c): each begins
 * and clears; the client hears of it at most once per kind per
 * warn_interval, mpiv status shows the active ones.
 */
enum dwarn_kind {
	DWARN_CKPT = 0,		/* "ckpt_failing" */
	DWARN_WAITING,		/* "waiting": services, slots */
	DWARN_STALLED,		/* "stalled": a CM or CS not answering */
	DWARN_PRESSURE,		/* "log_pressure": a CM log at its cap */
	DWARN_DEADLOCK,		/* "deadlock": every rank waits, nothing
				   moves (disp_deadlock.c) */
	DWARN_NKINDS,
};

struct dwarn {
	double seen;		/* condition holds since (0: does not) */
	bool active;		/* held past its grace: begun */
	double since, cleared;	/* of the current or last episode */
	char text[700];		/* the line that says it began */
	bool told;		/* what the client was last told */
	double told_at;		/* when it was last told a begin (0: never) */
};

enum djob_state {
	DJOB_WAITING = 0,	/* not enough CMs or slots */
	DJOB_SETUP,		/* JobSetup sent, waiting for every ready */
	DJOB_RUNNING,		/* Launch sent */
	DJOB_FINISHING,		/* a rank failed, others being killed */
	DJOB_REGEN,		/* a CM was lost: starting over (disp_regen.c) */
};

struct drank {
	struct dpeer *node;	/* NULL: unassigned, node lost, or waiting
				   for a slot to be relaunched on */
	uint32_t incarnation;	/* current one; 1 at the first launch */
	uint32_t restarts;
	bool launched;		/* Launch of the current incarnation sent */
	bool started;		/* its TaskStarted arrived */
	bool relaunch;		/* killed, waiting for a free slot */
	bool kill_sent;		/* a Kill went to the current incarnation */
	bool exited;		/* for good (never while being restarted) */
	int exit_code;
	int restart_idx;	/* restart_log entry of the current
				   incarnation, -1 for the first */
	/* checkpoints (docs/CHECKPOINT.md) */
	int cs;			/* index into djob.css, -1: none */
	uint64_t last_ckpt;	/* last durable checkpoint (0: none) */
	uint32_t checkpoints;	/* durable ones, from CkptTaken{ok} */
	uint32_t ckpt_streak;	/* failed in a row (skips not counted) */
	bool restoring;		/* current incarnation launched with restore */
	struct dpeer *prev_node;	/* where it ran last (relaunch there) */
	/* a job that started over (disp_regen.c) */
	uint32_t gen_inc;	/* first incarnation of the current run */
	uint64_t ckpt_seen;	/* highest checkpoint number ever reported */
	uint64_t ckpt_base;	/* MPIV_CKPT_BASE of its launches (0: none) */
	/*
	 * Exactly-once output, per stream (0 stdout, 1 stderr): bytes
	 * forwarded to the client, and the incarnation whose bytes are
	 * being counted with how many it produced so far.
	 */
	uint64_t out_fwd[2];
	uint32_t out_inc[2];
	uint64_t out_off[2];
	/* the re-printed part checked against it (disp_outchk.c) */
	uint64_t out_hash[2];	/* of every byte forwarded */
	bool chk_on[2];
	uint64_t chk_len[2], chk_hash[2], re_hash[2];
	/* what it waits for (its WaitState frames, disp_deadlock.c) */
	bool waiting;		/* told a wait not over yet */
	uint32_t wait_inc;	/* of this incarnation */
	uint64_t wait_no, wait_moved;
	double wait_heard;	/* the last WaitState (ev_now) */
	double wait_quiet;	/* since when wait_no and moved held */
	double waited_s;	/* as the rank counted at wait_heard */
	char wait_what[200];
	bool end_waiting;	/* it waited when the job began to end */
	double end_waited;	/* for this long */
};

/* One relaunch of a rank, for JobDone.restart_log. */
struct drestart {
	int rank;
	uint32_t incarnation;	/* the new one */
	double t_exit;		/* ev_time() when the death was reported */
	double relaunch_ms;	/* to its TaskStarted; -1 until then */
	bool replay_seen;	/* the CM's ReplayDone came */
	uint64_t replayed_events;
	uint64_t replayed_ahead;	/* of those, streamed before the post */
	double replay_s;
	uint64_t from_ckpt;	/* restored checkpoint (0: from the start) */
};

struct djob {
	struct disp *d;
	char id[32];
	uint8_t token[AUTH_TOKEN_LEN];	/* T: ranks prove HMAC(T, "rank R") */
	bool has_token;		/* only when the dispatcher has a secret */
	/*
	 * What the ranks run (docs/DIRECT.md): "relay" or "direct"; "auto"
	 * until the job is placed, when djob_auto_protocol decides. A
	 * direct job runs only on nodes that accept connections.
	 */
	const char *protocol;
	double t_submit;	/* ev_now() at submission */
	/* the shipped program (disp_bin.c); bin_size 0: not shipped */
	char bin_hash[65];
	uint64_t bin_size, bin_have;
	uint8_t *bin;
	bool bin_asked, bin_ok;
	char bin_err[128];
	char (*bin_wait)[80];	/* node_ids waiting for it */
	size_t nbin_wait;
	/* the client's stdin (disp_bin.c); in_size 0: every rank reads
	   /dev/null. in_rank: the rank that reads it, -1 every rank. */
	char in_hash[65];
	uint64_t in_size;
	uint8_t *in;
	int in_rank;
	bool chaos_nodes;	/* chaos kills whole node agents */
	enum djob_state state;
	int nranks;
	int ncms;
	char **argv;		/* NULL-terminated */
	size_t argc;
	char **env;
	size_t nenv;
	char *cwd;
	struct dpeer *client;	/* NULL once the client left */
	struct dpeer **cms;	/* ncms, NULL until assigned or once lost */
	bool *cm_ready;
	int nready;
	struct drank *ranks;
	int nexited;
	bool failed;
	int exit_code;		/* first failure's code */
	char reason[512];	/* first failure's reason */
	/* A rank that failed past MPI_Finalize: the job fails with it once
	   every rank ended (or at the next failure), not at once. */
	int fin_code;		/* 0: none */
	char fin_reason[400];
	char waitmsg[128];	/* last "waiting" message sent */
	ev_timer grace_w;	/* FINISHING: stop waiting for killed ranks */
	ev_timer replay_w;	/* every rank exited: stop waiting for the
				   last ReplayDone reports */
	/* restarts and fault injection (docs/REPLAY.md) */
	bool relay_only;	/* no logging at the CMs, no restarts */
	int max_restarts;	/* per rank */
	uint32_t kills;		/* Kills sent by chaos or `mpiv kill` */
	uint32_t restarts;
	struct drestart *rlog;
	size_t nrlog, caprlog;
	uint32_t chaos_mtbf_ms;	/* 0: no chaos */
	int chaos_max;		/* 0: unlimited */
	uint32_t chaos_kills;
	uint64_t chaos_rng;	/* splitmix64 state */
	ev_timer chaos_w;
	/* checkpoints */
	double ckpt_interval;	/* seconds, 0: only on request */
	int ncs;		/* CSs the job waits for (0: any there are) */
	int ncss;		/* CSs assigned (css[0 .. ncss-1]) */
	struct dpeer **css;	/* NULL once lost */
	char (*css_addr)[128];	/* where css[i] listens: a CS that comes
				   back there (restarted on its store) is
				   the same server again */
	uint32_t checkpoints;
	bool ckpt_warned;	/* "no criu/cs" said once */
	/* warnings (disp_warn.c) */
	struct dwarn warn[DWARN_NKINDS];
	uint32_t ckpt_failures;	/* CkptTaken{ok = false}, skips aside */
	char ckpt_err[300];	/* the last failure: "rank R: error" */
	double deadlock_after;	/* s, <= 0: never (disp_deadlock.c) */
	bool deadlock_abort;	/* a deadlock fails the job */
	double pressure_at;	/* last CmPressure (0: none) */
	char pressure_text[400];
	uint32_t out_diverged;	/* re-executions that printed otherwise */
	/* sizes sampled while it runs (disp_events.c) */
	ev_timer sample_w;
	struct dsample *samples;	/* one per CM and CS asked */
	int nsamples, sample_due;	/* answers still due this round */
	/* starting over after a lost CM (disp_regen.c) */
	int regens;
	double regen_t0;
	int regen_idx;		/* the lost CM's index */
	char regen_addr[128];	/* where it listened */
	ev_timer regen_w;
	unsigned regen_ticks;
	struct dpeer *regen_asked;	/* the CM back at regen_addr, asked
					   whether its store kept the job */
	struct djob *prev, *next;
};

/* What one CM or CS of a job said last (disp_events.c). */
struct dsample {
	struct dpeer *p;	/* compared, never followed: it may be gone */
	bool cm;		/* a CM (else a CS) */
	uint64_t bytes;		/* CM: its logs of the job; CS: its images */
	bool due;		/* asked this round, no answer yet */
};

/* A node declared dead, remembered so that it is told if it returns. */
struct ddead {
	char node_id[80];
	char reason[96];
};

struct disp {
	struct ev_loop *loop;
	struct auth_keys keys;	/* --secret-file (disabled: none) */
	struct auth_server as;	/* how peers prove themselves */
	double t_start;
	unsigned next_node;	/* node_id counter */
	struct ddead dead[DISP_DEAD_KEEP];	/* ring */
	unsigned ndead;		/* ever declared dead */
	int lfd;
	char bound[128];
	ev_io accept_w;
	ev_signal sigint_w, sigterm_w;
	ev_timer bp_w;		/* polls client queues while nodes are paused */
	ev_timer warn_w;	/* probes services, updates warnings */
	double warn_interval;	/* s between lines of one warning kind */
	double stall_after;	/* s a probed CM/CS may stay silent */
	uint64_t probe_seq;
	double hb_timeout;
	struct dpeer *peers;
	struct djob *jobs;
	unsigned next_job;
	char instance[33];	/* random, made at start: told to CSs (CsJobs)
				   so that they drop the images of a
				   dispatcher that is gone */
	const char *state_dir;	/* --state-dir, or NULL */
	bool stopping;
};

/* disp_peer.c */
void dpeer_set_role(struct dpeer *p, enum disp_role role);
struct dpeer *dpeer_new(struct disp *d, int fd);
void dpeer_close_all(struct disp *d);
void dpeer_backpressure(struct disp *d, struct dpeer *node);
void dpeer_on_backpressure(struct ev_loop *loop, ev_timer *w, int revents);

/* disp_node.c */
void dnode_register(struct dpeer *p, const Mpiv__NodeRegister *nr);
void dnode_declare_dead(struct dpeer *p, const char *reason);
struct dpeer *dnode_find(struct disp *d, const char *name);
void dnode_kill(struct dpeer *node, const char *reason);
void dnode_client_kill(struct dpeer *client, const Mpiv__NodeKill *nk);
bool dnode_is_dead_id(const struct disp *d, const char *node_id);

/* disp_bin.c */
int dbin_submit(struct djob *j, const Mpiv__JobSubmit *js,
    const uint8_t *payload, uint32_t len, const char **err);
bool dbin_stdin_for(const struct djob *j, int rank);
void dbin_node_get(struct dpeer *node, const Mpiv__BinaryGet *bg);
void dbin_client_data(struct dpeer *client, const Mpiv__BinaryData *bd,
    const uint8_t *payload, uint32_t len);
void dbin_client_end(struct dpeer *client, const Mpiv__BinaryEnd *be);
void dbin_free(struct djob *j);

/* disp_events.c: a JobEvent to the job's client (fmt: its detail). */
void djob_event(struct djob *j, const char *kind, int rank, uint32_t inc,
    uint64_t value, const char *node, double span1, double span2,
    const char *fmt, ...) __attribute__((format(printf, 9, 10)));

void devents_sample_start(struct djob *j);
void devents_sample_stop(struct djob *j);
void devents_cm_stats(struct dpeer *cm, const Mpiv__CmStats *cs);
void devents_store_stats(struct dpeer *cs, const Mpiv__StoreStats *ss);

/* disp_job.c, for disp_regen.c, disp_chaos.c, disp_ckpt.c, disp_warn.c */
void djob_kill_rank(struct djob *j, int r, int sig);
void djob_set_state(struct djob *j, enum djob_state st);
void djob_restart(struct djob *j, int r, double t_exit);
void djob_bad_claim(struct dpeer *node, struct djob *j, int r, uint32_t inc,
    const char *what);
bool djob_direct(const struct djob *j);

/* disp_chaos.c */
void djob_chaos_arm(struct djob *j);
void djob_on_chaos(struct ev_loop *loop, ev_timer *w, int revents);
bool djob_rank_live(const struct drank *rk);
void djob_kill_reply(struct dpeer *client, const char *job, bool ok,
    const char *msg);
void djob_client_kill(struct dpeer *client, const Mpiv__Kill *k);

/* disp_ckpt.c */
void djob_ckpt_why(const struct djob *j, char *why, size_t n);
void djob_ckpt_taken(struct dpeer *node, const Mpiv__CkptTaken *ct);
void djob_client_ckpt(struct dpeer *client, const Mpiv__CkptRequest *cr);
void djob_cm_pressure(struct dpeer *cm, const Mpiv__CmPressure *p);
void djob_setup_cms(struct djob *j);
void djob_fill_setup(const struct djob *j, Mpiv__JobSetup *js);
void djob_fail(struct djob *j, int code, const char *reason);

/* disp_deadlock.c */
void ddl_wait_state(struct dpeer *cm, const Mpiv__WaitState *ws);
bool ddl_rank_waits(const struct djob *j, const struct drank *rk,
    double now);
bool ddl_holds(const struct djob *j, double now, char *text, size_t n);

/* disp_outchk.c */
void dout_init(struct drank *rk);
void dout_begin(struct drank *rk, int s, uint64_t from);
void dout_check(struct djob *j, int r, int s, uint64_t off, const uint8_t *p,
    size_t len);
void dout_forwarded(struct drank *rk, int s, const uint8_t *p, size_t len);

/* disp_regen.c */
bool djob_regen_begin(struct djob *j, int i, const char *addr, char *why,
    size_t n);
void djob_regen_exited(struct djob *j, int r);
void djob_regen_answer(struct djob *j, struct dpeer *cm, const char *state);
void djob_regen_stop(struct djob *j);

/* disp_state.c */
int dstate_load(struct disp *d);
int dstate_save(struct disp *d);

/* disp_warn.c */
void dwarn_start(struct disp *d);
void dwarn_heard(struct dpeer *p);
void dwarn_ckpt_taken(struct djob *j, int r, const Mpiv__CkptTaken *ct);
void dwarn_pressure(struct dpeer *cm, const Mpiv__CmPressure *p);
void dwarn_update(struct djob *j);
void dwarn_event(struct djob *j, const char *kind, bool active,
    const char *text, double since);
const char *dwarn_kind_name(enum dwarn_kind k);

/* disp_status.c */
const char *djob_state_name(enum djob_state st);
void dstatus_reply(struct dpeer *client, const Mpiv__StatusRequest *sr);

/* disp_job.c */
struct djob *djob_submit(struct disp *d, struct dpeer *client,
    const Mpiv__JobSubmit *js, const uint8_t *payload, uint32_t len,
    const char **err);
struct djob *djob_find(struct disp *d, const char *id);
void djob_schedule(struct disp *d);
void djob_cm_status(struct dpeer *cm, const Mpiv__JobStatus *st);
void djob_cm_error(struct dpeer *cm, const char *text);
void djob_cs_jobs(struct dpeer *p);
void djob_cs_returned(struct dpeer *cs);
void djob_task_exit(struct dpeer *node, const Mpiv__TaskExit *te);
void djob_task_started(struct dpeer *node, const Mpiv__TaskStarted *ts);
void djob_replay_done(struct dpeer *cm, const Mpiv__ReplayDone *rd);
void djob_output(struct dpeer *node, const Mpiv__Output *o,
    const uint8_t *payload, uint32_t len);
void djob_peer_lost(struct dpeer *p);
void djob_free_all(struct disp *d);

#endif
