/*
 * conn_auth.c: the authentication handshake of a connection (conn.h,
 * conn_auth_server / conn_auth_client; runtime/auth.h has the proofs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth_rotate.h"
#include "conn_priv.h"
#include "log.h"

static const char *const conn_astate_names[] = {
	[CONN_A_OFF] = "off",
	[CONN_A_S_HELLO] = "server-hello",
	[CONN_A_S_REPLY] = "server-reply",
	[CONN_A_C_CHALLENGE] = "client-challenge",
	[CONN_A_C_REPLY] = "client-reply",
	[CONN_A_DONE] = "done",
};

/* The one place a connection's handshake state changes, traced. */
void
conn_auth_set(struct conn *c, enum conn_astate st)
{
	if (c->astate == st)
		return;
	log_debug("conn peer=%s auth %s -> %s", c->peer,
	    conn_astate_names[c->astate], conn_astate_names[st]);
	c->astate = st;
}

/* ---------------- authentication ---------------- */

bool
conn_auth_failed(const struct conn *c)
{
	return c->auth_failed;
}

void
conn_auth_server(struct conn *c, const struct auth_server *as)
{
	Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;

	c->as = as;
	ch.version = AUTH_VERSION;
	/* the nonce and the key exchange go out with or without a secret:
	   a connection without one is encrypted, not authenticated */
	if (auth_random(c->nonce_s, sizeof(c->nonce_s)) < 0) {
		log_warn("conn peer=%s getrandom", c->peer);
		conn_close(c, "no random nonce", false);
		return;
	}
	ch.nonce.data = c->nonce_s;
	ch.nonce.len = sizeof(c->nonce_s);
	ch.auth = as != NULL && as->enabled;
	c->offer = seal_ciphers();
	if (c->offer != 0) {
		if (seal_kx_new(&c->kx) < 0) {
			log_warnx("conn peer=%s: no key exchange (libsodium)",
			    c->peer);
			conn_close(c, "no key exchange", false);
			return;
		}
		ch.kx_pub.data = c->kx.pub;
		ch.kx_pub.len = sizeof(c->kx.pub);
		ch.ciphers = c->offer;
	}
	conn_auth_set(c, CONN_A_S_HELLO);
	if (as != NULL && as->gate != NULL)
		conn_gate_join(as->gate, c);
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, NULL, 0);
}

/*
 * A dialler, with a key or without (then it proves nothing but still
 * waits for the Challenge: the key exchange is in it).
 */
void
conn_auth_client(struct conn *c, const struct auth_key *key)
{
	if (key != NULL)
		c->akey = *key;
	else
		memset(&c->akey, 0, sizeof(c->akey));
	conn_auth_set(c, CONN_A_C_CHALLENGE);
}

/* Server: refuses the peer with a HelloReply it can read, then closes. */
static void
conn_auth_refuse(struct conn *c, const Mpiv__Hello *h, const char *why)
{
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;

	log_warnx("auth refused peer=%s role=%d job=%s rank=%d name=\"%.64s\" "
	    "reason=\"%s\"", c->peer, h != NULL ? (int)h->role : -1,
	    h != NULL && *h->job_id != '\0' ? h->job_id : "-",
	    h != NULL ? h->rank : -1, h != NULL ? h->name : "", why);
	conn_auth_set(c, CONN_A_DONE);
	c->auth_failed = true;
	hr.ok = false;
	hr.version = FRAME_VERSION;
	hr.error = (char *)why;
	(void)conn_send(c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base, NULL, 0);
	conn_close(c, why, true);
}

/* Client: the handshake failed on our side; nothing more goes out. */
static void
conn_auth_fail(struct conn *c, const char *why)
{
	conn_auth_set(c, CONN_A_DONE);
	c->auth_failed = true;
	conn_close(c, why, false);
}

/*
 * Sends the held Hello with its proof, ahead of whatever was queued
 * behind it, once both it and the Challenge are there.
 */
/*
 * Sends the held Hello with its proof, ahead of whatever was queued
 * behind it, once both it and the Challenge are there. The Hello carries
 * our key exchange and cipher pick; once it is out, we write sealed.
 */
static void
conn_auth_release(struct conn *c)
{
	struct auth_offer offer = { c->kx_peer, c->offer ? SEAL_PUB_LEN : 0,
	    c->offer };
	struct conn_wbuf *wb;
	Mpiv__Hello *h = c->hello;
	enum seal_cipher ci;
	uint8_t mine[SEAL_PUB_LEN];

	if (h == NULL || !c->have_challenge)
		return;
	if (auth_random(c->nonce_c, sizeof(c->nonce_c)) < 0) {
		log_warn("conn peer=%s getrandom", c->peer);
		conn_auth_fail(c, "authentication: no random nonce");
		return;
	}
	ci = seal_pick(c->offer);
	if (ci == SEAL_NONE && !seal_plaintext()) {
		log_warnx("conn peer=%s: %s", c->peer, c->offer ?
		    "encryption: no cipher in common with the server" :
		    SEAL_ERR_PLAIN_SERVER);
		conn_auth_fail(c, c->offer ? "encryption: no cipher in common "
		    "with the server" : SEAL_ERR_PLAIN_SERVER);
		return;
	}
	if (ci != SEAL_NONE && seal_kx_new(&c->kx) < 0) {
		conn_auth_fail(c, "encryption: no key exchange (libsodium)");
		return;
	}
	h->auth_nonce.data = c->nonce_c;
	h->auth_nonce.len = sizeof(c->nonce_c);
	h->cipher = ci;
	if (ci != SEAL_NONE) {
		memcpy(mine, c->kx.pub, sizeof(mine));
		h->kx_pub.data = mine;
		h->kx_pub.len = sizeof(mine);
	}
	if (c->akey.len > 0) {
		auth_hello_proof(&c->akey, c->nonce_s, &offer, h, c->proof_c);
		h->auth_proof.data = c->proof_c;
		h->auth_proof.len = sizeof(c->proof_c);
	}
	if ((wb = calloc(1, sizeof(*wb))) != NULL &&
	    (wb->buf = frame_encode(MPIV__MSG_TYPE__MSG_HELLO, &h->base, 0,
	    &wb->len)) == NULL) {
		free(wb);
		wb = NULL;
	}
	/* Ours, not the unpacker's: never freed as part of h. */
	h->auth_nonce.data = h->auth_proof.data = h->kx_pub.data = NULL;
	h->auth_nonce.len = h->auth_proof.len = h->kx_pub.len = 0;
	frame_free_meta(&h->base);
	c->hello = NULL;
	if (wb == NULL) {
		conn_auth_fail(c, "authentication: out of memory");
		return;
	}
	if (ci != SEAL_NONE) {
		if (seal_start(&c->seal, true, ci, c->akey.k, c->akey.len,
		    &c->kx, c->kx_peer, mine, c->kx_peer, c->nonce_s,
		    sizeof(c->nonce_s), c->nonce_c, sizeof(c->nonce_c)) < 0) {
			free(wb->buf);
			free(wb);
			conn_auth_fail(c, "encryption: the server's key "
			    "exchange is degenerate");
			return;
		}
		wb->seal_after = true;
	}
	wb->next = c->wq_head;
	c->wq_head = wb;
	if (c->wq_tail == &c->wq_head)
		c->wq_tail = &wb->next;
	c->queued += wb->len;
	conn_auth_set(c, CONN_A_C_REPLY);
	conn_want_flush(c);
}

/* Keyed client: keeps a copy of the Hello until the Challenge came. */
int
conn_auth_hold_hello(struct conn *c, const ProtobufCMessage *meta)
{
	size_t n = protobuf_c_message_get_packed_size(meta);
	const char *err = NULL;
	uint8_t *buf;

	if ((buf = malloc(n ? n : 1)) == NULL)
		return -1;
	(void)protobuf_c_message_pack(meta, buf);
	c->hello = (Mpiv__Hello *)frame_unpack_meta(MPIV__MSG_TYPE__MSG_HELLO,
	    buf, n, &err);
	free(buf);
	if (c->hello == NULL)
		return -1;
	conn_auth_release(c);
	return 0;
}

/*
 * A header before authentication announcing more than
 * CONN_PREAUTH_MAX_FRAME bytes: closes at once, before a byte of it is
 * buffered. Not on the HelloReply a dialler waits for (it can carry a
 * CM's per-rank table, and comes from the server the dialler chose).
 */
static int
conn_auth_too_big(struct conn *c)
{
	uint64_t n = (uint64_t)c->h.meta_len + c->h.payload_len;

	if (n <= CONN_PREAUTH_MAX_FRAME)
		return 0;
	log_warnx("conn refused peer=%s reason=\"frame too big before "
	    "authentication\" type=%s bytes=%llu cap=%u", c->peer,
	    frame_type_name(c->h.type), (unsigned long long)n,
	    CONN_PREAUTH_MAX_FRAME);
	if (c->astate == CONN_A_S_HELLO) {
		conn_auth_set(c, CONN_A_DONE);
		c->auth_failed = true;
		conn_close(c, "frame too big before authentication", false);
	} else {
		conn_auth_fail(c, "authentication: frame too big before "
		    "authentication");
	}
	return -1;
}

/* A frame header during the handshake: only the expected type passes. */
int
conn_auth_header(struct conn *c)
{
	uint16_t want;
	char why[160];

	switch (c->astate) {
	case CONN_A_S_HELLO:
		want = MPIV__MSG_TYPE__MSG_HELLO;
		break;
	case CONN_A_C_CHALLENGE:
		want = MPIV__MSG_TYPE__MSG_CHALLENGE;
		break;
	case CONN_A_C_REPLY:
		want = MPIV__MSG_TYPE__MSG_HELLO_REPLY;
		break;
	default:
		return 0;
	}
	if (c->astate != CONN_A_C_REPLY && conn_auth_too_big(c) < 0)
		return -1;
	if (c->h.type == want && c->h.payload_len == 0)
		return 0;
	snprintf(why, sizeof(why), "%sexpected %s as the first frame, got %s",
	    c->astate == CONN_A_S_HELLO ? "" : "authentication: ",
	    frame_type_name(want), frame_type_name(c->h.type));
	if (c->astate == CONN_A_S_HELLO)
		conn_auth_refuse(c, NULL, why);
	else
		conn_auth_fail(c, why);
	return -1;
}

/*
 * Server: the Hello, checked against our Challenge (the proof when we
 * have a secret, the cipher pick and key exchange always). A proven
 * Hello turns our reading sealed at once (what follows it is
 * ciphertext) and our writing after the HelloReply. Returns true when
 * it was refused (consumed), false to hand it to on_frame.
 */
static bool
conn_auth_hello(struct conn *c, const Mpiv__Hello *hello)
{
	struct auth_offer offer = { c->kx.pub, c->offer ? SEAL_PUB_LEN : 0,
	    c->offer };
	bool keyed = c->as != NULL && c->as->enabled;
	struct auth_key key = { .len = 0 };
	uint8_t mine[SEAL_PUB_LEN];
	const char *why = NULL;
	uint32_t ci = hello->cipher;
	char vwhy[96];

	/* Another protocol version first: its peer may not speak our
	   handshake at all, and the version is what it must be told. */
	if (hello->version != FRAME_VERSION) {
		snprintf(vwhy, sizeof(vwhy), "protocol version %u: version "
		    "mismatch (this server speaks %u)", hello->version,
		    FRAME_VERSION);
		conn_auth_refuse(c, hello, vwhy);
		return true;
	}
	if (keyed) {
		if (hello->auth_proof.len == 0) {
			conn_auth_refuse(c, hello, AUTH_ERR_REQUIRED);
			return true;
		}
		if (c->as->key(c->as->arg, hello, &key, &why) < 0) {
			conn_auth_refuse(c, hello, why);
			return true;
		}
	}
	if (ci == SEAL_NONE) {
		if (c->offer != 0)
			why = SEAL_ERR_PLAIN_PEER;
	} else if (ci > 31 || !(c->offer & (1u << ci))) {
		why = "encryption: the Hello picked a cipher we did not offer";
	} else if (hello->kx_pub.len != SEAL_PUB_LEN ||
	    hello->auth_nonce.len != AUTH_NONCE_LEN) {
		why = "encryption: the Hello lacks its key exchange";
	}
	if (why == NULL && keyed) {
		/* Any key the server still accepts (a secret being
		   rotated); key becomes the one that fits. */
		why = auth_check_hello_any(c->as, &key, c->nonce_s,
		    &offer, hello, c->proof_s);
	}
	if (why == NULL && ci != SEAL_NONE) {
		memcpy(mine, c->kx.pub, sizeof(mine));
		if (seal_start(&c->seal, false, ci, key.k, key.len, &c->kx,
		    hello->kx_pub.data, hello->kx_pub.data, mine, c->nonce_s,
		    sizeof(c->nonce_s), hello->auth_nonce.data,
		    hello->auth_nonce.len) < 0)
			why = "encryption: the Hello's key exchange is "
			    "degenerate";
	}
	auth_wipe(&key, sizeof(key));
	seal_kx_wipe(&c->kx);
	if (why != NULL) {
		conn_auth_refuse(c, hello, why);
		return true;
	}
	log_debug("auth ok peer=%s role=%d job=%s rank=%d", c->peer,
	    (int)hello->role, hello->job_id, hello->rank);
	if (c->seal.on) {
		conn_seal_rd_start(c);
		log_info("conn peer=%s sealed %s role=%d rank=%d", c->peer,
		    seal_cipher_name(c->seal.rx.cipher), (int)hello->role,
		    hello->rank);
	}
	conn_auth_set(c, CONN_A_S_REPLY);
	conn_gate_authed(c);
	return false;
}

/*
 * A whole frame during the handshake. Returns true when conn consumed it
 * (a Challenge, or a frame that failed the handshake), false to hand it
 * to on_frame.
 */
bool
conn_auth_frame(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *meta)
{
	const Mpiv__Challenge *ch;
	const Mpiv__HelloReply *hr;
	uint8_t want[AUTH_HASH_LEN];
	bool ok;

	switch (c->astate) {
	case CONN_A_S_HELLO:
		return conn_auth_hello(c, (const Mpiv__Hello *)meta);
	case CONN_A_C_CHALLENGE:
		ch = (const Mpiv__Challenge *)meta;
		if (!ch->auth && c->akey.len > 0) {
			conn_auth_fail(c, AUTH_ERR_NOAUTH);
			return true;
		}
		if (ch->version != AUTH_VERSION ||
		    ch->nonce.len != AUTH_NONCE_LEN) {
			conn_auth_fail(c, "authentication: the server speaks "
			    "another version of the handshake");
			return true;
		}
		if (ch->ciphers != 0 && ch->kx_pub.len != SEAL_PUB_LEN) {
			conn_auth_fail(c, "encryption: the Challenge offers "
			    "ciphers without a key exchange");
			return true;
		}
		memcpy(c->nonce_s, ch->nonce.data, AUTH_NONCE_LEN);
		if (ch->ciphers != 0)
			memcpy(c->kx_peer, ch->kx_pub.data, SEAL_PUB_LEN);
		c->offer = ch->ciphers;
		c->have_challenge = true;
		conn_auth_release(c);
		return true;
	case CONN_A_C_REPLY:
		hr = (const Mpiv__HelloReply *)meta;
		conn_auth_set(c, CONN_A_DONE);
		if (!hr->ok)
			return false;	/* a refusal: the daemon reports it */
		if (c->akey.len > 0) {
			auth_reply_proof(&c->akey, c->nonce_s, c->nonce_c,
			    c->proof_c, want);
			ok = hr->auth_proof.len == AUTH_HASH_LEN &&
			    auth_equal(want, hr->auth_proof.data,
			    AUTH_HASH_LEN);
			if (!ok) {
				log_warnx("auth peer=%s: %s", c->peer,
				    AUTH_ERR_IMPOSTOR);
				conn_auth_fail(c, AUTH_ERR_IMPOSTOR);
				return true;
			}
		}
		if (c->seal.on) {
			conn_seal_rd_start(c);
			log_info("conn peer=%s sealed %s", c->peer,
			    seal_cipher_name(c->seal.rx.cipher));
		}
		return false;
	default:
		return false;
	}
}
