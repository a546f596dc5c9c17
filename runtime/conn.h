/*
 * conn: a framed, non-blocking connection on a libev loop, shared by the
 * daemons (CM, dispatcher, CS, node agent, mpiv run). It reads frames
 * (header checked before any allocation, then meta, then payload), hands
 * each to a callback, and owns a write queue flushed when the socket is
 * writable. A bad peer costs its connection: the close callback runs
 * from the loop, never inside the caller's own callback (closed later).
 */
#ifndef MPIV_CONN_H
#define MPIV_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "frame.h"

struct conn;

struct conn_ops {
	/*
	 * A whole frame arrived. meta belongs to conn and is freed after the
	 * call. payload (NULL if payload_len == 0) was malloc'ed by conn and
	 * now belongs to the callee, unless on_header supplied the buffer.
	 */
	void (*on_frame)(struct conn *c, const struct frame_hdr *h,
	    ProtobufCMessage *meta, uint8_t *payload);
	/*
	 * Optional. Called once header and meta are read and before the
	 * payload is: return a buffer of h->payload_len bytes to read the
	 * payload into (cut-through: on_progress reports each chunk as it
	 * lands), or NULL to let conn allocate it. meta stays valid until
	 * on_frame returns.
	 */
	uint8_t *(*on_header)(struct conn *c, const struct frame_hdr *h,
	    ProtobufCMessage *meta);
	void (*on_progress)(struct conn *c, size_t have);
	/* The connection is gone (EOF, error, protocol error, conn_close).
	   Called once, from the loop; conn is freed right after it returns. */
	void (*on_close)(struct conn *c, const char *reason);
};

/* Wraps a connected socket (made non-blocking) and starts reading. */
struct conn *conn_new(struct ev_loop *loop, int fd,
    const struct conn_ops *ops, void *udata);
void *conn_udata(struct conn *c);
void conn_set_udata(struct conn *c, void *udata);
int conn_fd(struct conn *c);
/* "ip:port" of the peer, for logs. */
const char *conn_peer(struct conn *c);
/* The cipher of c's session ("aes256gcm", "chacha20poly1305"), or
   "plaintext" before the handshake agreed on one or without one. */
const char *conn_cipher(const struct conn *c);

/* Queues a frame; the payload is copied. 0, or -1 if the conn is closing. */
int conn_send(struct conn *c, uint16_t type, const ProtobufCMessage *meta,
    const void *payload, uint32_t payload_len);

/* Bytes queued and not yet written (for back-pressure decisions). */
size_t conn_queued(struct conn *c);

/* Stops/restarts reading (back-pressure). */
void conn_pause_read(struct conn *c, bool pause);

/*
 * Closes the connection later (from the loop): with flush, after the
 * write queue drained (bounded by a short timeout), e.g. after sending an
 * Error or a refusing HelloReply.
 */
void conn_close(struct conn *c, const char *reason, bool flush);

/*
 * Shared payload buffers for cut-through relays: the reader fills `data`
 * and advances `avail`; every conn that queued it with conn_send_pbuf
 * writes bytes up to `avail` as they come.
 */
struct pbuf;
struct pbuf *pbuf_new(uint32_t len);	/* refcount 1, avail 0 */
uint8_t *pbuf_data(struct pbuf *pb);
uint32_t pbuf_len(const struct pbuf *pb);
uint32_t pbuf_avail(const struct pbuf *pb);
void pbuf_advance(struct pbuf *pb, uint32_t avail);	/* wakes writers */
void pbuf_ref(struct pbuf *pb);
void pbuf_unref(struct pbuf *pb);
/*
 * Big payloads (32 KiB and more) are carved from 16 MiB arenas. A server
 * that logs (the CM) keeps them, so each arena is fresh memory whose page
 * faults would land in the loop's read(). pbuf_prefault(n) starts one
 * helper thread that keeps n arenas mapped and faulted in ahead of need;
 * call it once, before the loop runs (n <= 0: does nothing). Counters:
 * arenas faulted in and waiting, and arenas taken from them so far.
 */
int pbuf_prefault(int n);
int pbuf_prefault_ready(void);
unsigned long pbuf_prefault_used(void);
/* Queues header+meta, then the payload from pb (takes a reference). */
int conn_send_pbuf(struct conn *c, uint16_t type,
    const ProtobufCMessage *meta, struct pbuf *pb);

/*
 * Additions (conn.c):
 * - on_header is only called for frames with payload_len > 0; on_progress
 *   is called for every payload chunk, whoever supplied the buffer.
 * - pbuf_fail: the filler of a pbuf is gone for good (its connection
 *   closed mid-payload). Every conn still waiting for bytes of it closes
 *   with "relay source lost mid-payload" (a frame cannot be cut short).
 * - conn_is_closing: conn_close was called (on_close is yet to come).
 * - conn_read_paused: reading is paused by conn_pause_read.
 */
void pbuf_fail(struct pbuf *pb);
bool pbuf_failed(const struct pbuf *pb);
bool conn_is_closing(const struct conn *c);
bool conn_read_paused(const struct conn *c);

/*
 * Batching (off by default): frames queued on c while any connection of
 * this thread is processing its input (one read() and the frames it
 * completes, including payload bytes relayed through a pbuf) are written
 * when that processing ends, in one gathered sendmsg, instead of one
 * write per frame or per payload piece. conn_queued() counts them until
 * then. Sends from outside input processing (timers, idle, writability)
 * are written at once as before; a hard conn_close writes what was
 * waiting for the batch first. Meant for relays that answer reads (the
 * CM); leave it off where code pumps data while conn_queued() is low.
 */
void conn_set_batching(struct conn *c, bool on);

/*
 * fn(arg) runs at the end of every batch (input processing), before its
 * frames are written: the CM writes its store there, so that a record is
 * on disk before the answers that depend on it leave (channel-memory/
 * store.c). conn_batching_now: inside input processing (a send now is
 * deferred to the batch's end).
 */
void conn_set_batch_hook(void (*fn)(void *), void *arg);
bool conn_batching_now(void);

/*
 * Authentication (runtime/auth.h, docs/CONTRACTS.md "Authentication"),
 * done here once for every daemon and dialler.
 *
 * conn_auth_server: call right after conn_new on an accepted socket. The
 * Challenge leaves at once; the first frame must then be a Hello whose
 * proof checks with the key as->key picks for it, or the peer gets a
 * refusing HelloReply and is closed: on_frame never sees it, nor any
 * frame before a good Hello. The first HelloReply the daemon sends
 * carries the server's proof. With as NULL or disabled the Challenge
 * says auth=false and Hellos pass unchecked. as must outlive c.
 *
 * conn_auth_client: call right after conn_new on a dialled socket, before
 * the Hello is sent. With a key, the Hello (and whatever is queued after
 * it) waits for the server's Challenge and leaves with its proof, and the
 * HelloReply must prove the server holds the key too; a server without a
 * secret, or a bad proof, closes the conn with a reason starting with
 * "authentication" (conn_auth_failed says so). Without a key the Hello
 * leaves at once and the Challenge is dropped. on_frame never sees the
 * Challenge.
 */
struct auth_server;
struct auth_key;
void conn_auth_server(struct conn *c, const struct auth_server *as);
void conn_auth_client(struct conn *c, const struct auth_key *key);
bool conn_auth_failed(const struct conn *c);

/*
 * Before authentication (an accepted conn whose Hello is not proven yet,
 * a dialled conn waiting for the Challenge) a frame's meta and payload
 * together may not exceed CONN_PREAUTH_MAX_FRAME bytes: the largest
 * legitimate one, a Hello, is under 400 bytes (a 128-byte host name, a
 * job id, two 32-byte auth fields). The header is checked before
 * anything is allocated or buffered; a bigger frame closes the conn with
 * one log line. Until then an accepted conn reads through a small
 * buffer inside struct conn; the CONN_RBUF one comes with the Hello.
 * After authentication frame_max_payload() and FRAME_MAX_META apply.
 */
#define CONN_PREAUTH_MAX_FRAME 4096u

/*
 * Admission of accepted connections (the gate), per daemon. Counted are
 * the conns that went through conn_auth_server with as->gate set: all of
 * them (max_conns), and those not yet authenticated, in total
 * (max_unauth) and per peer IP address (max_unauth_per_host). A conn
 * counts as authenticated once its Hello is proven (or, on a daemon
 * without a secret, once it sent a Hello). conn_gate_admit is called on
 * each accepted socket before anything else: over a cap, it closes the
 * socket and logs at most one line per cap per CONN_GATE_LOG_S seconds
 * (with how many that cap refused since its last line).
 *
 * Defaults: 4096 conns fit a CM serving thousands of ranks (one conn per
 * rank per job) or a dispatcher with thousands of nodes; 1024 handshakes
 * at once and 256 from one address leave room for a whole job's ranks
 * dialling a CM at once (all ranks of a host share its address), while a
 * flood holds at most 1024 x ~6 KiB before the hello timeout frees it.
 */
#define CONN_DEFAULT_MAX_CONNS		 4096
#define CONN_DEFAULT_MAX_UNAUTH		 1024
#define CONN_DEFAULT_MAX_UNAUTH_PER_HOST 256
#define CONN_GATE_LOG_S			 5

struct conn_limits {
	long max_conns;
	long max_unauth;
	long max_unauth_per_host;
};

struct conn_gate;
/*
 * A gate for daemon `who` (for logs). Also raises the soft limit on open
 * files to fit max_conns (warns once if the hard limit cannot). NULL on
 * ENOMEM.
 */
struct conn_gate *conn_gate_new(const char *who, const struct conn_limits *l);
/* At the daemon's end, once its connections are gone (else left alone). */
void conn_gate_free(struct conn_gate *g);
/* 0: fd may become a conn; -1: refused, fd is closed. */
int conn_gate_admit(struct conn_gate *g, int fd);
/* Counts right now, and refusals since the gate was made (tests, logs). */
void conn_gate_counts(const struct conn_gate *g, long *conns, long *unauth,
    unsigned long *refused);

#endif
