/*
 * auth_client.c: the blocking dialler's side of the handshake
 * (auth_client.h): Challenge, Hello with the key exchange and its proof,
 * HelloReply, then the session of runtime/seal.h. The event-driven
 * dialler of the daemons is conn_auth.c; the non-blocking one of ranks
 * dialling ranks is libmpi-lite/dp_conn.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth_client.h"
#include "frame.h"

bool
auth_client_plain_ok(void)
{
	return seal_plaintext();
}

uint32_t
auth_client_serve_ciphers(void)
{
	return seal_ciphers();	/* 0 under --insecure-plaintext */
}

void
auth_client_trace(const char *who, const char *peer, enum seal_cipher c)
{
	const char *e = getenv("MPIV_SEAL_DEBUG");
	char line[320];
	int n, fd = 2;

	if (e == NULL || *e == '\0')
		return;
	n = snprintf(line, sizeof(line), "mpiv-seal: %s to %s %s%s\n", who,
	    peer, c != SEAL_NONE ? "sealed " : "plaintext",
	    c != SEAL_NONE ? seal_cipher_name(c) : "");
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* A path: appended there (one write, O_APPEND: whole lines from
	   every process), away from a rank's stderr, which is the
	   program's output. */
	if (*e == '/' && (fd = open(e, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0600)) < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* a debugging aid only */
	}
	if (fd != 2)
		close(fd);
}

/* The Challenge's offer, copied out of its frame. */
struct auth_client_offer {
	bool auth;
	uint8_t nonce_s[AUTH_NONCE_LEN];
	size_t nonce_s_len;
	uint8_t kx_pub[SEAL_PUB_LEN];
	size_t kx_pub_len;
	uint32_t ciphers;
};

/* Reads the Challenge into o. 0, or -1 with err. */
static int
auth_client_challenge(int fd, bool keyed, int timeout_ms,
    struct auth_client_offer *o, char *err, size_t errlen)
{
	struct frame_hdr fh;
	ProtobufCMessage *m;
	Mpiv__Challenge *ch;
	uint8_t *payload;
	const char *ferr = NULL;
	int rc = -1;

	if (frame_read(fd, &fh, &m, &payload, timeout_ms, &ferr) < 0) {
		snprintf(err, errlen, "%s", ferr != NULL ? ferr :
		    errno == ECONNRESET ? "connection closed" :
		    strerror(errno));
		return -1;
	}
	free(payload);
	if (fh.type != MPIV__MSG_TYPE__MSG_CHALLENGE) {
		snprintf(err, errlen, "authentication: expected a challenge, "
		    "got %s (not an mpiv server, or an old one?)",
		    frame_type_name(fh.type));
		goto out;
	}
	ch = (Mpiv__Challenge *)m;
	if (keyed && !ch->auth) {
		snprintf(err, errlen, "%s", AUTH_ERR_NOAUTH);
		goto out;
	}
	if (ch->version != AUTH_VERSION || (ch->auth &&
	    ch->nonce.len != AUTH_NONCE_LEN) ||
	    ch->nonce.len > AUTH_NONCE_LEN) {
		snprintf(err, errlen, "authentication: server speaks version "
		    "%u, we speak %u", ch->version, AUTH_VERSION);
		goto out;
	}
	if (ch->ciphers != 0 && ch->kx_pub.len != SEAL_PUB_LEN) {
		snprintf(err, errlen, "encryption: the server's key exchange "
		    "key is %zu bytes, not %u", ch->kx_pub.len, SEAL_PUB_LEN);
		goto out;
	}
	o->auth = ch->auth;
	o->nonce_s_len = ch->nonce.len;
	if (ch->nonce.len > 0)
		memcpy(o->nonce_s, ch->nonce.data, ch->nonce.len);
	o->ciphers = ch->ciphers;
	o->kx_pub_len = ch->ciphers != 0 ? SEAL_PUB_LEN : 0;
	if (o->kx_pub_len > 0)
		memcpy(o->kx_pub, ch->kx_pub.data, SEAL_PUB_LEN);
	rc = 0;
out:
	frame_free_meta(m);
	return rc;
}

int
auth_client_hello(int fd, const struct auth_key *key, Mpiv__Hello *h,
    struct seal *s, int timeout_ms, Mpiv__HelloReply **reply, char *err,
    size_t errlen)
{
	struct auth_client_offer o;
	struct auth_offer offer;
	uint8_t nonce_c[AUTH_NONCE_LEN], client_pub[SEAL_PUB_LEN];
	uint8_t proof[AUTH_HASH_LEN], want[AUTH_HASH_LEN];
	enum seal_cipher cipher = SEAL_NONE;
	struct seal_kx kx;
	struct frame_hdr fh;
	ProtobufCMessage *m = NULL;
	Mpiv__HelloReply *hr;
	uint8_t *payload;
	const char *ferr = NULL;
	bool ok;

	*reply = NULL;
	memset(&kx, 0, sizeof(kx));
	if (s == NULL) {
		snprintf(err, errlen, "no session to fill");
		return -1;
	}
	if (auth_client_challenge(fd, key != NULL, timeout_ms, &o, err,
	    errlen) < 0)
		return -1;
	/* We pick none when we run --insecure-plaintext: a server that
	   offers ciphers then says whether it talks plaintext. */
	if (o.ciphers != 0 && seal_init() == 0)
		cipher = seal_pick(o.ciphers);
	if (o.ciphers != 0 && cipher == SEAL_NONE && !seal_plaintext()) {
		snprintf(err, errlen, "encryption: no cipher in common with "
		    "the server (it offers mask 0x%x)", o.ciphers);
		return -1;
	}
	if (cipher != SEAL_NONE) {
		if (seal_kx_new(&kx) < 0) {
			snprintf(err, errlen, "encryption: no key pair");
			return -1;
		}
		memcpy(client_pub, kx.pub, SEAL_PUB_LEN);
		h->kx_pub.data = client_pub;
		h->kx_pub.len = SEAL_PUB_LEN;
		h->cipher = (uint32_t)cipher;
	} else if (o.ciphers == 0 && !auth_client_plain_ok()) {
		snprintf(err, errlen, "%s", AUTH_ERR_PLAIN);
		return -1;
	}
	/* Our nonce goes whenever it counts: in the proof, in the keys. */
	if (key != NULL || cipher != SEAL_NONE) {
		if (auth_random(nonce_c, sizeof(nonce_c)) < 0) {
			snprintf(err, errlen, "getrandom: %s", strerror(errno));
			h->kx_pub.data = NULL;
			h->kx_pub.len = 0;
			h->cipher = 0;
			goto fail;
		}
		h->auth_nonce.data = nonce_c;
		h->auth_nonce.len = sizeof(nonce_c);
	}
	if (key != NULL) {
		offer.kx_pub = o.kx_pub;
		offer.kx_pub_len = o.kx_pub_len;
		offer.ciphers = o.ciphers;
		auth_hello_proof(key, o.nonce_s, &offer, h, proof);
		h->auth_proof.data = proof;
		h->auth_proof.len = sizeof(proof);
	}
	ok = frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h->base, NULL, 0,
	    timeout_ms) == 0;
	/* h's handshake fields point into this frame: not the caller's. */
	h->auth_nonce.data = NULL;
	h->auth_nonce.len = 0;
	h->auth_proof.data = NULL;
	h->auth_proof.len = 0;
	h->kx_pub.data = NULL;
	h->kx_pub.len = 0;
	h->cipher = 0;
	if (!ok || frame_read(fd, &fh, &m, &payload, timeout_ms, &ferr) < 0)
		goto out_io;
	free(payload);
	if (fh.type != MPIV__MSG_TYPE__MSG_HELLO_REPLY) {
		snprintf(err, errlen, "expected a hello reply, got %s",
		    frame_type_name(fh.type));
		goto fail;
	}
	hr = (Mpiv__HelloReply *)m;
	if (key != NULL && hr->ok) {
		auth_reply_proof(key, o.nonce_s, nonce_c, proof, want);
		ok = hr->auth_proof.len == AUTH_HASH_LEN &&
		    auth_equal(want, hr->auth_proof.data, AUTH_HASH_LEN);
		auth_wipe(want, sizeof(want));
		if (!ok) {
			snprintf(err, errlen, "%s", AUTH_ERR_IMPOSTOR);
			goto fail;
		}
	}
	/* The reply was the server's last plaintext frame, the Hello ours:
	   from here on both directions are records. */
	if (hr->ok && cipher != SEAL_NONE && seal_start(s, true, cipher,
	    key != NULL ? key->k : NULL, key != NULL ? key->len : 0, &kx,
	    o.kx_pub, client_pub, o.kx_pub, o.nonce_s, o.nonce_s_len,
	    nonce_c, sizeof(nonce_c)) < 0) {
		snprintf(err, errlen, "encryption: the server's key exchange "
		    "key is degenerate");
		goto fail;
	}
	seal_kx_wipe(&kx);
	*reply = hr;
	return 0;
out_io:
	snprintf(err, errlen, "%s", ferr != NULL ? ferr :
	    errno == ECONNRESET ? "connection closed" : strerror(errno));
fail:
	seal_kx_wipe(&kx);
	frame_free_meta(m);
	return -1;
}
