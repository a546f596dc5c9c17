/*
 * conn_priv.h: what the files of a connection share (conn.h is the
 * interface): the structures, and the few calls between
 *
 *   conn.c       connection life, batching, reading, writing
 *   pbuf.c       payload buffers and the memory big payloads live in
 *   conn_auth.c  the authentication handshake on a connection
 *   conn_gate.c  admission: connection caps per daemon and peer address
 */
#ifndef MPIV_CONN_PRIV_H
#define MPIV_CONN_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "auth.h"
#include "conn.h"
#include "seal.h"

/* Read buffer of a conn not yet authenticated (inside struct conn): a
   Hello fits, anything longer goes through mbuf, capped by
   CONN_PREAUTH_MAX_FRAME. */
#define CONN_RBUF_SMALL	  512u

struct pb_region;

struct pbuf {
	uint8_t *data;
	struct pb_region *region;	/* big payloads: where data lives */
	uint32_t len;
	uint32_t avail;
	unsigned refs;
	bool failed;
	struct conn *waiters;	/* conns whose queue head waits for bytes */
};

struct conn_wbuf {
	struct conn_wbuf *next;
	uint8_t *buf;		/* header + meta, and a copied payload */
	size_t len;
	size_t off;
	struct pbuf *pb;	/* payload by reference, or NULL */
	uint32_t poff;
	bool seal_after;	/* the last plaintext frame: seal what follows */
};

enum conn_rstate { CONN_R_HDR, CONN_R_META, CONN_R_PAYLOAD };

/* Where the authentication handshake stands (conn_auth_*). */
enum conn_astate {
	CONN_A_OFF = 0,		/* no handshake on this conn */
	CONN_A_S_HELLO,		/* server: Challenge sent, Hello expected */
	CONN_A_S_REPLY,		/* server: Hello proven, reply gets our proof */
	CONN_A_C_CHALLENGE,	/* client: Hello held for the Challenge */
	CONN_A_C_REPLY,		/* client: HelloReply (keyed: must prove) */
	CONN_A_DONE,
};

struct conn {
	struct ev_loop *loop;
	int fd;
	bool is_sock;
	const struct conn_ops *ops;
	void *udata;
	char peer[96];

	ev_io rio;
	ev_io wio;
	ev_idle idle;		/* deferred work: close, resume */
	ev_timer flush_tmr;

	/* reading */
	enum conn_rstate rstate;
	uint8_t hdr[FRAME_HDR_LEN];
	size_t hdr_have;
	struct frame_hdr h;
	uint8_t *mbuf;
	size_t m_have;
	ProtobufCMessage *meta;
	uint8_t *payload;
	size_t p_have;
	bool payload_owned;	/* conn allocated it (free on close) */
	bool paused;
	bool resume_pending;
	size_t r_off, r_len;
	uint8_t *rbuf;		/* rsmall until authenticated, then malloc'ed */
	size_t rcap;
	uint8_t rsmall[CONN_RBUF_SMALL];

	/* writing */
	struct conn_wbuf *wq_head;
	struct conn_wbuf **wq_tail;
	size_t queued;
	struct pbuf *wait_pb;
	struct conn *wait_prev, *wait_next;
	bool batch;		/* conn_set_batching */
	bool pending;		/* on the batch's list of conns to flush */
	struct conn *pend_next;

	/* closing */
	bool closing;
	bool flushing;
	bool lingering;		/* flushed: our FIN sent, reading to the peer's */
	char reason[192];

	/* authentication */
	enum conn_astate astate;
	const struct auth_server *as;
	struct auth_key akey;		/* client: ours */
	bool have_challenge;
	bool auth_failed;
	Mpiv__Hello *hello;		/* client: the Hello held back */
	uint8_t nonce_s[AUTH_NONCE_LEN];
	uint8_t nonce_c[AUTH_NONCE_LEN];
	uint8_t proof_c[AUTH_HASH_LEN];
	uint8_t proof_s[AUTH_HASH_LEN];

	/* encryption (runtime/seal.h): keys once the handshake agreed on a
	   cipher; each direction switches at its last plaintext frame */
	struct seal seal;
	struct seal_kx kx;		/* our ephemeral key until seal_start */
	uint8_t kx_peer[SEAL_PUB_LEN];	/* client: the server's (Challenge) */
	uint32_t offer;			/* the Challenge's cipher mask */
	bool seal_rd, seal_wr;		/* reads / writes go through seal */
	bool seal_more;			/* opened plaintext waits: read on */

	/* admission (conn_gate) */
	struct conn_gate *gate;
	struct gate_host *ghost;	/* while counted as unauthenticated */
	bool gate_unauth;
};

/* conn.c */
void conn_want_flush(struct conn *c);

/* pbuf.c: a writer parked on a pbuf's filled edge */
void pbuf_wait_add(struct pbuf *pb, struct conn *c);
void pbuf_wait_del(struct conn *c);

/* conn_auth.c */
void conn_auth_set(struct conn *c, enum conn_astate st);
int conn_auth_header(struct conn *c);
bool conn_auth_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *meta);
int conn_auth_hold_hello(struct conn *c, const ProtobufCMessage *meta);
void conn_seal_rd_start(struct conn *c);

/* conn_gate.c */
void conn_gate_join(struct conn_gate *g, struct conn *c);
void conn_gate_authed(struct conn *c);
void conn_gate_leave(struct conn *c);

#endif
