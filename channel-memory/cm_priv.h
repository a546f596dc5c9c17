/*
 * cm_priv.h: Channel Memory internals, prototypes grouped by file.
 *
 *   cm.c       options, listening socket, signals, the dispatcher link
 *   session.c  one accepted connection: hello, fencing, frame dispatch
 *   job.c      jobs served, per-rank state, memory accounting, stats
 *   relay.c    the message path: sends, receives, probes, cancels,
 *              deliveries and the per-receiver log
 *   match.c    the MPI matching engine (match.h)
 */
#ifndef MPIV_CM_PRIV_H
#define MPIV_CM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "conn.h"
#include "match.h"

#define CM_DEFAULT_MAX_MEMORY (8ull << 30)
#define CM_MAX_NRANKS	      (1 << 20)
#define CM_HELLO_TIMEOUT      10.0	/* seconds to say Hello */

struct job;
struct session;

struct cm {
	struct ev_loop *loop;
	int lfd;
	char bound[128];
	uint64_t max_memory;	/* cap on unexpected bytes per job */
	ev_io accept_w;
	ev_signal sigint_w, sigterm_w;
	struct job *jobs;
	struct session *sessions;	/* every live session */
	bool stopping;

	/* --dispatcher: the link we dial and keep up */
	char *dispatcher;
	struct session *disp;
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
};

enum log_kind { LOG_DELIVER, LOG_PROBE };

/* One ordering decision of a receiver, kept until a checkpoint frees it. */
struct logent {
	struct logent *next;
	enum log_kind kind;
	uint64_t event;
	uint64_t req_id;
	int32_t src;
	int32_t tag;
	uint32_t context;
	uint64_t seq;
	bool found;		/* probe answers */
	uint64_t size;
	struct pbuf *pb;	/* deliveries: shares the message's buffer */
};

/* State of one rank of a job as this CM sees it. */
struct rank_state {
	struct session *sess;	/* its live connection to this CM */
	uint32_t incarnation;	/* highest seen */
	bool home;		/* this CM is its home CM */
	/* home only: */
	struct match_queue mq;
	uint64_t next_event;
	struct logent *log_head, *log_tail;
};

struct job {
	struct job *next;
	struct cm *cm;
	char *id;
	int32_t nranks, ncms, cm_index;
	struct rank_state *ranks;
	uint64_t unexpected_bytes;
	bool throttled;
	uint64_t throttle_episodes;	/* warn on the first, then rarely */
	/* counters (CmStats) */
	uint64_t messages, bytes, log_entries, log_bytes;
	uint64_t duplicates;
};

enum session_state {
	SESS_NEW,		/* waiting for Hello */
	SESS_RANK,
	SESS_CONTROL,
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
	/* a Send whose payload is streaming in */
	struct pbuf *in_pb;
	struct msg *in_msg;	/* while still unexpected */
};

/* cm.c */
void cm_dispatcher_lost(struct cm *cm);

/* session.c */
struct session *session_new(struct cm *cm, int fd, bool dispatcher);
void session_refuse(struct session *s, const char *why);
void session_error(struct session *s, const char *why);
void session_kill_all(struct cm *cm);
void session_send_hello(struct session *s);

/* job.c */
struct job *job_find(struct cm *cm, const char *id);
int job_setup(struct cm *cm, const char *id, int32_t nranks, int32_t ncms,
    int32_t cm_index, const char **err);
void job_end(struct cm *cm, struct job *j);
void job_free_all(struct cm *cm);
bool job_is_home(const struct job *j, int32_t rank);
void job_unexpected_add(struct job *j, struct session *sender, uint64_t n);
void job_unexpected_sub(struct job *j, uint64_t n);
void job_detach_session(struct job *j, struct session *s);

/* relay.c */
int relay_send_begin(struct session *s, const Mpiv__Send *snd,
    uint32_t len);
void relay_send_end(struct session *s);
void relay_send_abort(struct session *s);
void relay_recv_post(struct session *s, const Mpiv__RecvPost *rp);
void relay_probe(struct session *s, const Mpiv__Probe *p);
void relay_cancel(struct session *s, const Mpiv__Cancel *cn);
void relay_msg_free(struct msg *m);
void relay_free_msg_cb(struct match_msg *mm, void *arg);
void relay_log_free(struct rank_state *rs);

#endif
