/*
 * node_priv.h: state of the node agent (the unprivileged half; the
 * privileged one is helper.c), shared by node.c (options, dispatcher
 * link), node_task.c (ranks, output), node_link.c (the socket to the
 * helper), node_bin.c (shipped programs) and node_ckpt.c (checkpoints:
 * dump through the helper, upload and image fetch in worker processes,
 * restore through the helper).
 */
#ifndef MPIV_NODE_PRIV_H
#define MPIV_NODE_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "auth.h"
#include "conn.h"
#include "helper.h"

#define NODE_HB_INTERVAL	1.0	/* s between heartbeats / redials */
#define NODE_DIAL_TIMEOUT_MS	2000
#define NODE_SILENCE_DEFAULT	30.0	/* s, until NodeWelcome says */
#define NODE_DRAIN_TIMEOUT	2.0	/* s to wait for pipe EOF after exit */
#define NODE_READ_CHUNK		65536	/* bytes per Output frame at most */
#define NODE_OUT_HIGH		(8u << 20)	/* stop reading pipes above */
#define NODE_OUT_LOW		(1u << 20)	/* resume below */

struct task;

struct task_stream {
	struct task *t;
	int fd;
	int stream;		/* 1 stdout, 2 stderr */
	ev_io w;
	bool paused;
};

struct task {
	struct node *n;
	char job[64];
	int rank;
	uint32_t incarnation;
	pid_t pid;
	struct task_stream out, err;
	int ctrl_fd;
	ev_io ctrl_w;
	char ctrl_buf[256];
	size_t ctrl_len;
	int ctrl_in_fd;		/* write end of the rank's ctrl-in pipe */
	ev_timer drain_w;
	bool reaped;
	int status;
	bool nsh;		/* pid is the handle of the rank's own PID
				   namespace (pidns.h) */
	/* pid is what the helper knows the rank by (PrivSignal, PrivExit) */
	/* checkpoints (node_ckpt.c) */
	bool restored;		/* restored from a checkpoint */
	pid_t task_pid;		/* the rank's host pid (== pid unless nsh, or
				   a restore into a fallback namespace) */
	char cs[128];		/* Launch.cs, "" when none */
	char cm[128];		/* home CM address */
	/* Launch.image_key: proves this incarnation to cs (none: K_node) */
	uint8_t image_key[AUTH_HASH_LEN];
	bool has_image_key;
	uint64_t out_count[2];	/* this incarnation's stream bytes, with base */
	uint64_t sync_k;	/* last ckpt-sync answered */
	uint64_t sync_base[2];	/* out_count at that ckpt-sync */
	bool aborted;
	int abort_code;
	bool finalized;		/* said "finalized": past MPI_Finalize */
	char reason[320];
	struct task *prev, *next;
};

/* A launch the helper is starting (node_task.c). */
struct spawn_wait {
	uint64_t id;		/* PrivSpawn.id */
	char job[64];
	int rank;
	uint32_t incarnation;
	pid_t ns_pid;
	char cs[128], cm[128];
	uint8_t image_key[AUTH_HASH_LEN];	/* Launch.image_key */
	bool has_image_key;
	char argv0[256], cwd[PATH_MAX];
	int kill_sig;		/* a Kill that came meanwhile (0: none) */
	struct spawn_wait *next;
};

/* One restore: its image fetched by a worker, then restored by the
   helper (node_ckpt.c). */
struct rst_op {
	struct rst_op *next;
	struct node *n;
	Mpiv__Launch *l;	/* a copy of the Launch */
	char dir[64];		/* where the image is unpacked */
	pid_t worker;		/* the fetch worker, 0 once it ended */
	int resfd;		/* read end of the result pipe */
	int kill_sig;		/* a Kill that came meanwhile (0: none) */
	double t0, t1;		/* start, fetch done */
	ev_child child_w;
	uint64_t id;		/* PrivRestore.id, 0 before */
	pid_t as_pid;		/* PrivRestore.as_pid */
	int pp[4][2];		/* stdout, stderr, ctrl, ctrl-in pipes */
	Mpiv__ImageMeta *meta;	/* of the fetched image */
	uint64_t bytes;
};

struct node {
	struct ev_loop *loop;
	const char *dispatcher;
	struct auth_keys keys;	/* --secret-file: K_node proves us */
	char name[64];
	int slots;
	struct conn *c;
	struct dial *dialing;	/* a dial to the dispatcher in progress */
	bool dial_warned;
	uint64_t hb_seq;
	double hb_interval;	/* --heartbeat-interval */
	ev_timer hb_w;		/* heartbeat, or redial while c == NULL */
	ev_timer silence_w;	/* dispatcher silent this long: given up */
	char node_id[80];	/* from NodeWelcome; sent as previous_id */
	char cache_dir[PATH_MAX];	/* shipped programs (node_bin.c) */
	struct node_bin *bins;	/* programs being fetched */
	ev_timer resume_w;	/* output back-pressure check */
	ev_signal sigint_w, sigterm_w;
	struct task *tasks;
	struct ckpt_op *ckpts;	/* dumps/uploads in flight */
	struct rst_op *restores;	/* restores in flight */
	struct spawn_wait *spawns;	/* launches in flight */
	struct helper_conf priv;	/* the helper's account and probes */
	int link_fd;		/* socket to the helper */
	ev_io link_w;
	uint64_t link_seq;	/* request ids */
	bool criu;		/* criu_probe said yes */
	bool no_listen;		/* --no-listen: behind a firewall or NAT */
	bool pidns;		/* pidns_available said yes */
	bool stopping;
	int exit_code;
};


/* node_task.c */
void task_stream_init(struct task *t, struct task_stream *s, int fd,
    int stream);
/* Reads one chunk of a stream and forwards it: >0 bytes, 0 EOF (closed),
   -1 nothing now (EAGAIN). */
ssize_t task_read_stream(struct task_stream *s);
void task_insert(struct node *n, struct task *t);
/* n->resume_w: output back-pressure is over, read the pipes again. */
void task_on_resume(struct ev_loop *loop, ev_timer *w, int revents);
void task_ctrl_start(struct task *t);

void node_launch(struct node *n, const Mpiv__Launch *l);
void node_launch_failed(struct node *n, const Mpiv__Launch *l,
    const char *why);
void node_spawned(struct node *n, const Mpiv__PrivSpawned *r, int *fds,
    int nfds);
void node_task_exit(struct node *n, pid_t pid, int status);
void node_kill(struct node *n, const Mpiv__Kill *k);
void node_kill_all(struct node *n, bool forget);
void task_signal(struct task *t, int sig);
/* Home CM of a rank from a Launch. */
const char *node_home_cm(const Mpiv__Launch *l);

/* node_link.c */
void node_link_start(struct node *n, int fd);
int node_link_send(struct node *n, uint16_t type, const ProtobufCMessage *m);
int node_link_send_fds(struct node *n, uint16_t type,
    const ProtobufCMessage *m, const int *fds, int nfds);
void node_link_signal(struct node *n, pid_t pid, int sig, int how);
/* node.c: reload the keys from the secret file the helper opened (fd,
   closed here; runtime/daemon.h, daemon_auth_reload). */
void node_keys_reload(struct node *n, int fd);

/* node_bin.c */
void node_bin_default_dir(char *out, size_t n);
/* Before the split, as root: the cache directory exists and is the
   agent's account's. 0, or -1 (logged). */
int node_bin_prepare(struct node *n);
/* What of a Launch node_bin_need fetches: its program or its stdin. */
enum node_blob {
	NODE_BLOB_PROG,
	NODE_BLOB_STDIN,
};
int node_bin_need(struct node *n, const Mpiv__Launch *l, enum node_blob kind,
    char *path, size_t len);
void node_bin_data(struct node *n, const Mpiv__BinaryData *bd,
    const uint8_t *payload, uint32_t len);
void node_bin_end(struct node *n, const Mpiv__BinaryEnd *be);
void node_bin_drop_all(struct node *n);

/* node_ckpt.c */
void node_ckpt_init(struct node *n);
/* /dev/shm/mpiv-KIND-<pid>-XXXXXX, ours. 0 or -1 (errno). */
int ckpt_mkdir(const char *kind, char *dir, size_t n);
/* A line to the rank's ctrl-in pipe. */
void ckpt_write_in(struct task *t, const char *line);
void node_output_synced(struct node *n, const Mpiv__OutputSync *os);
void task_drain(struct task *t);
/* A CS connection, Hello'ed as a node: for the images of incarnation
   inc of rank of job, proving image_key (Launch.image_key), or, when
   image_key is NULL, as any node (K_node). fd, its session in s (off
   before; seal_end it after closing), or -1 (err). */
struct seal;
int ckpt_dial_cs(const char *cs, const char *job, int32_t rank,
    uint32_t inc, const uint8_t *image_key, struct seal *s, char *err,
    size_t n);
/* Reads frames until one of type want; Error or EOF fail (naming cs). */
int ckpt_expect(struct seal *s, int fd, const char *cs, uint16_t want,
    ProtobufCMessage **out, char *err, size_t n);
void node_ckpt_sync(struct task *t, uint64_t k);
void node_ckpt_clone(struct task *t, const char *args);
void node_ckpt_request(struct node *n, const Mpiv__CkptRequest *cr);

/* node_restore.c */
/* Launch{restore}: 0 when the restore began (TaskStarted follows), -1
   when it failed (TaskStarted{error} sent). */
int node_restore(struct node *n, const Mpiv__Launch *l);
void node_restore_kill(struct node *n, const char *job, int rank,
    uint32_t inc, int sig);
void node_restore_stop(struct node *n);
void node_restored(struct node *n, const Mpiv__PrivRestored *r);
void node_ckpt_dumped(struct node *n, const Mpiv__PrivDumped *r);
void node_ckpt_stop(struct node *n);
/* Drops the block index of a rank whose task ended here. */
void node_ckpt_forget(const char *job, int rank);

#endif
