/*
 * cs_priv.h: checkpoint server internals, prototypes grouped by file.
 *
 *   cs.c           options, listening socket, signals, the pump watcher
 *   cs_disp.c      the link to the dispatcher (register, redial)
 *   cs_peer.c      one accepted connection: hello, state machine, dispatch
 *   cs_upload.c    an image arriving: temp file, limits, commit
 *   cs_download.c  an image leaving: info, chunks with back-pressure, end
 *   cs_store.c     the on-disk layout: names, current, commit, prune,
 *                  crash recovery
 *   cs_notify.c    CkptDurable to home CMs: one link per (CM, job), retries
 *   cs_chain.c     incremental images: checks of an upload's parent, the
 *                  rebuild of a full image from a chain for a download
 *   cs_grant.c     which node may move which images: image keys, the
 *                  current incarnation of each rank (ImageGrant)
 *   cs_stats.c     what a job's images take (StoreStats, the dispatcher's
 *                  samples)
 *
 * Store layout: STORE/JOB/RANK/{ckpt-K.img, ckpt-K.meta (packed ImageMeta),
 * ckpt-K.sum ("BYTES CHECKSUM"), current ("K"), tmp-*}. The rename of
 * tmp-* to ckpt-K.img is the commit point; meta and sum are written and
 * synced before it. Anything named tmp-* is garbage after a crash.
 * An incremental image's meta names its parent (ImageMeta.parent_ckpt):
 * pruning keeps every image a kept one needs, recovery removes an image
 * whose parent is gone.
 */
#ifndef MPIV_CS_PRIV_H
#define MPIV_CS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "auth.h"
#include "conn.h"
#include "dial.h"

#define CS_DEFAULT_KEEP	     3u
#define CS_DEFAULT_MAX_IMAGE (4ull << 30)
#define CS_CHUNK	     (256u * 1024)	/* download chunk */
#define CS_MAX_CHUNK	     (16u << 20)	/* largest ImageData accepted */
#define CS_MAX_NAME	     128u		/* job id length */
#define CS_MAX_RANK	     (1 << 24)
#define CS_DISP_ID_MAX	     48u		/* a dispatcher's instance id */
#define CS_ENDED_KEEP	     64u		/* ended jobs remembered */
#define CS_MAX_CKPT	     999999999999999999ull	/* 18 digits in names */
#define CS_HELLO_TIMEOUT     10.0	/* seconds to say Hello */
#define CS_IDLE_TIMEOUT	     60.0	/* seconds a transfer may stall */
#define CS_MAX_CHAIN	     32u	/* deltas between a full image and any */

struct cs_peer;
struct cs_cmlink;
struct cs_grants;
struct dial;

struct cs {
	struct ev_loop *loop;
	int lfd;
	char bound[128];
	/* Given to the dispatcher (so to nodes) and named to CMs: --advertise,
	   else bound (a NAT or a relay in front of the CS). */
	char addr[128];
	const char *advertise;
	const char *store;
	int store_fd;
	unsigned keep;
	uint64_t max_image;
	double idle_timeout;
	uint8_t *chunk;		/* CS_CHUNK bytes, read buffer of downloads */
	ev_io accept_w;
	ev_timer accept_retry_w;	/* after EMFILE */
	ev_signal sigint_w, sigterm_w;
	ev_prepare pump_w;	/* downloads and notices, once per iteration */
	struct cs_peer *peers;
	struct cs_cmlink *cmlinks;
	bool stopping;

	/* --secret-file: node agents prove K_node, we prove S when dialling */
	const char *secret_file;
	struct auth_keys keys;
	struct auth_server as;
	struct cs_grants *grants;	/* cs_grant.c */

	/* --dispatcher: the link we dial and keep up */
	char disp_id[CS_DISP_ID_MAX + 1];	/* its instance (CsJobs); ""
						   before it said */
	/* jobs it said ended (JobEnd): a late upload of theirs is refused */
	char ended[CS_ENDED_KEEP][CS_MAX_NAME + 1];
	unsigned nended;	/* ever; ended[nended % CS_ENDED_KEEP] next */
	const char *dispatcher;
	struct conn *disp;
	struct dial *disp_dial;
	ev_timer disp_redial_w;
	double disp_backoff;
};

/* cs_disp.c */
void cs_disp_start(struct cs *cs);
/* Whether the dispatcher said job ended (among the last CS_ENDED_KEEP). */
bool cs_job_ended(const struct cs *cs, const char *job);
void cs_disp_stop(struct cs *cs);

/* cs_peer.c */
struct cs_peer *cs_peer_new(struct cs *cs, int fd);
void cs_peer_pump_all(struct cs *cs);
void cs_peer_kill_all(struct cs *cs);
struct conn *cs_peer_conn(struct cs_peer *p);
void cs_peer_touch(struct cs_peer *p);

/* cs_upload.c */
struct cs_upload;
struct cs_upload *cs_upload_begin(struct cs *cs, const Mpiv__ImagePut *put,
    char *why, size_t whylen);
int cs_upload_data(struct cs *cs, struct cs_upload *u, const uint8_t *p,
    size_t n, char *why, size_t whylen);
int cs_upload_end(struct cs *cs, struct cs_upload *u,
    const Mpiv__ImageEnd *e, char *why, size_t whylen);
uint64_t cs_upload_ckpt_no(const struct cs_upload *u);
/* Deletes the temp file (if still there) and frees. */
void cs_upload_abort(struct cs_upload *u, const char *why);

/* cs_download.c */
struct cs_download;
/* Answers ImageInfo; NULL when nothing follows (not found). */
struct cs_download *cs_download_begin(struct cs *cs, struct conn *c,
    const Mpiv__ImageGet *g);
/* Queues chunks while the write queue is small; true once ImageEnd left. */
bool cs_download_pump(struct cs *cs, struct cs_download *d, struct conn *c);
void cs_download_free(struct cs_download *d);

/* cs_store.c */
int cs_store_open(struct cs *cs);
bool cs_store_name_ok(const char *s);
int cs_store_rank_dir(struct cs *cs, const char *job, int32_t rank,
    bool create);
int cs_store_current(int rdfd, uint64_t *k);
int cs_store_tmp_create(int rdfd, uint64_t k, char *name, size_t namelen);
int cs_store_commit(struct cs *cs, int rdfd, const char *tmpname, uint64_t k,
    const uint8_t *meta, size_t metalen, uint64_t bytes, uint64_t sum,
    char *why, size_t whylen);
int cs_store_open_image(int rdfd, uint64_t k, Mpiv__ImageMeta **meta,
    uint64_t *bytes, uint64_t *sum, char *why, size_t whylen);
void cs_store_recover(struct cs *cs);
/* Removes STORE/JOB and everything in it, logged with why. */
void cs_store_drop_job(struct cs *cs, const char *job, const char *why);
/*
 * CsJobs from the dispatcher disp_id: drops every job directory whose
 * owner file names another dispatcher (gone: jobs never outlive theirs,
 * and a new one numbers jobs from 1 again), or this one but a job not in
 * live (ended while we were away). Directories without an owner file are
 * left alone.
 */
void cs_store_sweep(struct cs *cs, const char *disp_id, char *const *live,
    size_t nlive);
/* The parent checkpoint named by ckpt-K.meta (0: full). 0 or -1. */
int cs_store_parent(int rdfd, uint64_t k, uint64_t *parent);

/* cs_chain.c */
/* 0 when m is a full image or a delta over a parent stored here with the
 * digest and chain it names; -1 with why. */
int cs_chain_check(int rdfd, const Mpiv__ImageMeta *m, char *why,
    size_t whylen);
/* The full image of checkpoint k (stored full or rebuilt from its chain)
 * as an unlinked temp file: fd, its size and checksum. -1 with why. */
int cs_chain_rebuild(struct cs *cs, int rdfd, uint64_t k, uint64_t *bytes,
    uint64_t *sum, char *why, size_t whylen);

/* cs_grant.c */
int cs_grant_auth_key(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why);
/* The same image key derived from another secret s (auth_server.derive:
   secrets being rotated); out->len 0 when the Hello proves none. */
void cs_grant_derive(void *arg, const struct auth_key *s,
    const Mpiv__Hello *h, struct auth_key *out);
uint32_t cs_grant_current(struct cs *cs, const char *job, int32_t rank);
/* The current incarnation of (job, rank) is at least inc. */
void cs_grant_raise(struct cs *cs, const char *job, int32_t rank,
    uint32_t inc);
void cs_grant_from_dispatcher(struct cs *cs, const Mpiv__ImageGrant *ig);
bool cs_grant_allows(struct cs *cs, const char *pjob, int32_t prank,
    uint32_t pinc, const char *job, int32_t rank, char *why, size_t whylen);
/* Forgets the ranks of a job that ended; of every job but the n live
   ones. How many entries went. */
size_t cs_grant_forget(struct cs *cs, const char *job);
size_t cs_grant_keep(struct cs *cs, char **live, size_t n);
void cs_grant_free(struct cs *cs);
/* cs_stats.c */
int cs_stats_job(struct cs *cs, const char *job, uint64_t *images,
    uint64_t *bytes);
void cs_stats_answer(struct cs *cs, struct conn *c,
    const Mpiv__StoreStatsReq *rq);

/* cs_notify.c */
void cs_notify_durable(struct cs *cs, const char *cm, const char *job,
    int32_t rank, uint64_t ckpt_no, uint32_t incarnation);
void cs_notify_pump(struct cs *cs);
void cs_notify_close_all(struct cs *cs);
void cs_notify_forget(struct cs *cs, const char *job);

#endif
