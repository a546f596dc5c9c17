/*
 * test_auth_client.c: the blocking dialler of runtime/auth_client.c and
 * the sealed frames of runtime/frame.c (frame_read_s, frame_write_s)
 * against a small server written here from the contract alone
 * (runtime/seal.h, runtime/auth.h), in a child over a socketpair:
 * keyed and keyless handshakes end sealed both ways, frames of every
 * size (records spanning frames, frames spanning records) echo back
 * intact on a non-blocking socket, a server offering no cipher is
 * refused unless plaintext is allowed, a reply without the server's
 * proof is refused, and a record altered on the way fails to open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth.h"
#include "auth_client.h"
#include "frame.h"
#include "seal.h"

#define TMO 5000

enum srv_mode {
	SRV_ECHO,		/* echo frames until Bye */
	SRV_BAD_PROOF,		/* a reply proof that proves nothing */
	SRV_TAMPER,		/* one sealed frame with a byte flipped */
};

/* The server side of one connection, in the child: exit status 0 when
   everything it saw was right. */
static int
srv_run(int fd, const struct auth_key *key, uint32_t ciphers,
    enum srv_mode mode)
{
	Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
	Mpiv__HelloReply r = MPIV__HELLO_REPLY__INIT;
	uint8_t nonce_s[AUTH_NONCE_LEN], proof[AUTH_HASH_LEN];
	uint8_t server_pub[SEAL_PUB_LEN];
	struct auth_offer offer = { NULL, 0, ciphers };
	struct seal s = { 0 };
	struct seal_kx kx;
	struct frame_hdr fh;
	ProtobufCMessage *m;
	Mpiv__Hello *h;
	uint8_t *payload;
	const char *err;

	if (seal_kx_new(&kx) < 0 || auth_random(nonce_s, sizeof(nonce_s)) < 0)
		return 10;
	memcpy(server_pub, kx.pub, SEAL_PUB_LEN);
	ch.version = AUTH_VERSION;
	ch.auth = key != NULL;
	if (key != NULL) {
		ch.nonce.data = nonce_s;
		ch.nonce.len = sizeof(nonce_s);
	}
	if (ciphers != 0) {
		ch.kx_pub.data = server_pub;
		ch.kx_pub.len = SEAL_PUB_LEN;
		ch.ciphers = ciphers;
		offer.kx_pub = server_pub;
		offer.kx_pub_len = SEAL_PUB_LEN;
	}
	if (frame_write(fd, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base, NULL, 0,
	    TMO) < 0)
		return 11;
	if (frame_read(fd, &fh, &m, &payload, TMO, &err) < 0)
		return 0;	/* the client hung up: its choice */
	free(payload);
	if (fh.type != MPIV__MSG_TYPE__MSG_HELLO)
		return 12;
	h = (Mpiv__Hello *)m;
	if (key != NULL && auth_check_hello(key, nonce_s, &offer, h,
	    proof) != NULL)
		return 13;
	if (ciphers != 0 && ((ciphers & (1u << h->cipher)) == 0 ||
	    h->kx_pub.len != SEAL_PUB_LEN))
		return 14;
	r.ok = true;
	r.version = FRAME_VERSION;
	if (key != NULL) {
		if (mode == SRV_BAD_PROOF)
			proof[0] ^= 1;
		r.auth_proof.data = proof;
		r.auth_proof.len = sizeof(proof);
	}
	if (frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &r.base, NULL, 0,
	    TMO) < 0)
		return 15;
	if (h->cipher != SEAL_NONE && seal_start(&s, false, h->cipher,
	    key != NULL ? key->k : NULL, key != NULL ? key->len : 0, &kx,
	    h->kx_pub.data, h->kx_pub.data, server_pub, ch.nonce.data,
	    ch.nonce.len, h->auth_nonce.data, h->auth_nonce.len) < 0)
		return 16;
	frame_free_meta(m);
	if (mode == SRV_BAD_PROOF) {
		seal_end(&s);
		return 0;	/* the client hangs up */
	}
	if (mode == SRV_TAMPER) {
		Mpiv__Output o = MPIV__OUTPUT__INIT;
		uint8_t rec[SEAL_REC_LEN(256)], plain[256];
		size_t hl = frame_encode_into(MPIV__MSG_TYPE__MSG_OUTPUT,
		    &o.base, 0, plain, sizeof(plain));

		/* one record, by hand, its last ciphertext byte flipped */
		seal_record(&s.tx, plain, hl, rec);
		rec[SEAL_REC_LEN(hl) - 1] ^= 0x40;
		if (write(fd, rec, SEAL_REC_LEN(hl)) != (ssize_t)SEAL_REC_LEN(hl))
			return 17;
		usleep(200 * 1000);
		seal_end(&s);
		return 0;
	}
	for (;;) {
		if (frame_read_s(&s, fd, &fh, &m, &payload, TMO, &err) < 0)
			return 18;
		if (fh.type == MPIV__MSG_TYPE__MSG_BYE) {
			frame_free_meta(m);
			free(payload);
			break;
		}
		if (frame_write_s(&s, fd, fh.type, m, payload, fh.payload_len,
		    TMO) < 0)
			return 19;
		frame_free_meta(m);
		free(payload);
	}
	seal_end(&s);
	return 0;
}

struct pair {
	int fd;
	pid_t pid;
};

static void
pair_start(struct pair *p, const struct auth_key *key, uint32_t ciphers,
    enum srv_mode mode)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		close(sv[0]);
		_exit(srv_run(sv[1], key, ciphers, mode));
	}
	close(sv[1]);
	p->fd = sv[0];
	/* the reads and writes of a rank: non-blocking */
	assert_int_equal(fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) |
	    O_NONBLOCK), 0);
}

static int
pair_end(struct pair *p)
{
	int st;

	close(p->fd);
	assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static Mpiv__HelloReply *
dial(struct pair *p, const struct auth_key *key, struct seal *s,
    char *err, size_t errlen)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__HelloReply *hr = NULL;

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	h.rank = -1;
	h.name = "test";
	if (auth_client_hello(p->fd, key, &h, s, TMO, &hr, err, errlen) < 0)
		return NULL;
	/* the handshake's pointers are gone from the caller's Hello */
	assert_null(h.auth_proof.data);
	assert_null(h.kx_pub.data);
	return hr;
}

/* Frames of sizes around the record size echo back intact. */
static void
echo_sizes(int fd, struct seal *s)
{
	static const size_t sizes[] = { 0, 1, 100, SEAL_REC_MAX - 40,
	    SEAL_REC_MAX, SEAL_REC_MAX + 1, 3 * SEAL_REC_MAX + 7,
	    2u << 20 };
	Mpiv__Output o = MPIV__OUTPUT__INIT;
	Mpiv__Bye bye = MPIV__BYE__INIT;
	uint8_t *buf = malloc(2u << 20);

	assert_non_null(buf);
	for (size_t i = 0; i < (2u << 20); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct frame_hdr fh;
		ProtobufCMessage *m;
		uint8_t *payload;
		const char *err;

		o.job_id = "job";
		o.rank = (int32_t)i;
		assert_int_equal(frame_write_s(s, fd,
		    MPIV__MSG_TYPE__MSG_OUTPUT, &o.base, buf,
		    (uint32_t)sizes[i], TMO), 0);
		/* nothing left for a later write to push */
		assert_int_equal(seal_pending(s), 0);
		assert_int_equal(frame_read_s(s, fd, &fh, &m, &payload, TMO,
		    &err), 0);
		assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_OUTPUT);
		assert_int_equal(((Mpiv__Output *)m)->rank, (int32_t)i);
		assert_int_equal(fh.payload_len, sizes[i]);
		if (sizes[i] > 0)
			assert_memory_equal(payload, buf, sizes[i]);
		frame_free_meta(m);
		free(payload);
	}
	assert_int_equal(frame_write_s(s, fd, MPIV__MSG_TYPE__MSG_BYE,
	    &bye.base, NULL, 0, TMO), 0);
	free(buf);
}

static void
test_sealed_keyed(void **state)
{
	struct auth_key key;
	uint32_t masks[] = { seal_ciphers(), 1u << SEAL_CHACHA20POLY1305 };

	auth_key_set(&key, "the cluster secret, 32 bytes ...", 32);
	for (size_t i = 0; i < 2; i++) {
		struct seal s = { 0 };
		struct pair p;
		char err[300];
		Mpiv__HelloReply *hr;

		pair_start(&p, &key, masks[i], SRV_ECHO);
		hr = dial(&p, &key, &s, err, sizeof(err));
		assert_non_null(hr);
		assert_true(hr->ok);
		frame_free_meta(&hr->base);
		assert_true(s.on);
		assert_int_equal(s.tx.cipher, seal_pick(masks[i]));
		echo_sizes(p.fd, &s);
		seal_end(&s);
		assert_false(s.on);
		assert_int_equal(pair_end(&p), 0);
	}
}

/* No secret: still sealed (not authenticated). */
static void
test_sealed_keyless(void **state)
{
	struct seal s = { 0 };
	struct pair p;
	char err[300];
	Mpiv__HelloReply *hr;

	pair_start(&p, NULL, seal_ciphers(), SRV_ECHO);
	hr = dial(&p, NULL, &s, err, sizeof(err));
	assert_non_null(hr);
	assert_true(hr->ok);
	frame_free_meta(&hr->base);
	assert_true(s.on);
	echo_sizes(p.fd, &s);
	seal_end(&s);
	assert_int_equal(pair_end(&p), 0);
}

/* A server offering no cipher: refused, unless plaintext is allowed. */
static void
test_plaintext_policy(void **state)
{
	struct auth_key key;
	struct seal s = { 0 };
	struct pair p;
	char err[300];
	Mpiv__HelloReply *hr;

	auth_key_set(&key, "the cluster secret, 32 bytes ...", 32);
	unsetenv("MPIV_INSECURE_PLAINTEXT");
	pair_start(&p, &key, 0, SRV_ECHO);
	assert_null(dial(&p, &key, &s, err, sizeof(err)));
	assert_string_equal(err, AUTH_ERR_PLAIN);
	assert_false(s.on);
	assert_int_equal(pair_end(&p), 0);

	setenv("MPIV_INSECURE_PLAINTEXT", "1", 1);
	pair_start(&p, &key, 0, SRV_ECHO);
	hr = dial(&p, &key, &s, err, sizeof(err));
	unsetenv("MPIV_INSECURE_PLAINTEXT");
	assert_non_null(hr);
	assert_true(hr->ok);
	frame_free_meta(&hr->base);
	assert_false(s.on);		/* plaintext, as allowed */
	echo_sizes(p.fd, &s);
	assert_int_equal(pair_end(&p), 0);
}

static void
test_bad_reply_proof(void **state)
{
	struct auth_key key;
	struct seal s = { 0 };
	struct pair p;
	char err[300];

	auth_key_set(&key, "the cluster secret, 32 bytes ...", 32);
	pair_start(&p, &key, seal_ciphers(), SRV_BAD_PROOF);
	assert_null(dial(&p, &key, &s, err, sizeof(err)));
	assert_string_equal(err, AUTH_ERR_IMPOSTOR);
	assert_false(s.on);
	assert_int_equal(pair_end(&p), 0);
}

static void
test_tampered_record(void **state)
{
	struct auth_key key;
	struct seal s = { 0 };
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *payload;
	const char *ferr;
	struct pair p;
	char err[300];
	Mpiv__HelloReply *hr;

	auth_key_set(&key, "the cluster secret, 32 bytes ...", 32);
	pair_start(&p, &key, seal_ciphers(), SRV_TAMPER);
	hr = dial(&p, &key, &s, err, sizeof(err));
	assert_non_null(hr);
	frame_free_meta(&hr->base);
	assert_int_equal(frame_read_s(&s, p.fd, &fh, &m, &payload, TMO,
	    &ferr), -1);
	assert_int_equal(errno, EBADMSG);
	assert_non_null(ferr);
	seal_end(&s);
	assert_int_equal(pair_end(&p), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sealed_keyed),
		cmocka_unit_test(test_sealed_keyless),
		cmocka_unit_test(test_plaintext_policy),
		cmocka_unit_test(test_bad_reply_proof),
		cmocka_unit_test(test_tampered_record),
	};

	assert_int_equal(seal_init(), 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
