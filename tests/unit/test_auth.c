/*
 * test_auth.c: runtime/auth.c and the conn handshake. SHA-256 against
 * FIPS 180-4 examples, HMAC-SHA256 against RFC 4231, secret files (mode,
 * emptiness, node keys), key derivations, proofs (wrong key, wrong rank,
 * replayed nonce), and the handshake of two conns over a socketpair in
 * every combination of keys, plus the blocking dialler and an impostor.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth.h"
#include "auth_client.h"
#include "conn.h"
#include "frame.h"
#include "log.h"
#include "net.h"
#include "seal.h"

static char tdir[64];

static void
check_sha(const void *p, size_t n, const char *want)
{
	uint8_t d[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1];

	auth_sha256(p, n, d);
	auth_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
}

static void
test_sha256(void **state)
{
	struct auth_sha256 s;
	uint8_t d1[AUTH_HASH_LEN], d2[AUTH_HASH_LEN];
	static char big[1000000];
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	check_sha("", 0,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", 3,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha(two, strlen(two),
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(big, 'a', sizeof(big));
	check_sha(big, sizeof(big),
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* Fed in odd pieces, across block and padding edges: the same. */
	for (size_t len = 0; len < 200; len += 7) {
		auth_sha256(big, len, d1);
		auth_sha256_init(&s);
		for (size_t off = 0, step = 1; off < len; off += step, step++)
			auth_sha256_update(&s, big + off,
			    off + step > len ? len - off : step);
		auth_sha256_final(&s, d2);
		assert_memory_equal(d1, d2, sizeof(d1));
	}
}

static void
check_hmac(const uint8_t *key, size_t klen, const void *data, size_t n,
    const char *want)
{
	uint8_t d[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1];
	struct auth_key k;

	auth_hmac_sha256(key, klen, data, n, d);
	auth_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
	/* A key kept by auth_key_set gives the same MAC (long ones too). */
	auth_key_set(&k, key, klen);
	auth_hmac_sha256(k.k, k.len, data, n, d);
	auth_hex(d, sizeof(d), hex);
	assert_string_equal(hex, want);
}

/* RFC 4231 section 4, test cases 1-4, 6 and 7 (5 is truncated output). */
static void
test_hmac_rfc4231(void **state)
{
	uint8_t key[131], data[50];
	const char *tc6 = "Test Using Larger Than Block-Size Key - Hash Key "
	    "First";
	const char *tc7 = "This is a test using a larger than block-size key "
	    "and a larger than block-size data. The key needs to be hashed "
	    "before being used by the HMAC algorithm.";

	memset(key, 0x0b, 20);
	check_hmac(key, 20, "Hi There", 8,
	    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	check_hmac((const uint8_t *)"Jefe", 4,
	    "what do ya want for nothing?", 28,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(key, 0xaa, 20);
	memset(data, 0xdd, 50);
	check_hmac(key, 20, data, 50,
	    "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
	for (int i = 0; i < 25; i++)
		key[i] = (uint8_t)(i + 1);
	memset(data, 0xcd, 50);
	check_hmac(key, 25, data, 50,
	    "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
	memset(key, 0xaa, 131);
	check_hmac(key, 131, tc6, strlen(tc6),
	    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	check_hmac(key, 131, tc7, strlen(tc7),
	    "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

static void
test_helpers(void **state)
{
	uint8_t a[32], b[32], r1[32], r2[32];
	char hex[65];

	memset(a, 1, sizeof(a));
	memcpy(b, a, sizeof(b));
	assert_true(auth_equal(a, b, sizeof(a)));
	b[31] ^= 0x80;
	assert_false(auth_equal(a, b, sizeof(a)));
	b[31] ^= 0x80;
	b[0] ^= 1;
	assert_false(auth_equal(a, b, sizeof(a)));
	assert_true(auth_equal(a, b, 0));

	auth_hex((const uint8_t *)"\x00\xff\x10", 3, hex);
	assert_string_equal(hex, "00ff10");
	assert_int_equal(auth_unhex("00FF10", a, 3), 0);
	assert_memory_equal(a, "\x00\xff\x10", 3);
	assert_int_equal(auth_unhex("00ff1", a, 3), -1);
	assert_int_equal(auth_unhex("00ff1g", a, 3), -1);
	assert_int_equal(auth_unhex("00ff1000", a, 3), -1);

	assert_int_equal(auth_random(r1, sizeof(r1)), 0);
	assert_int_equal(auth_random(r2, sizeof(r2)), 0);
	assert_false(auth_equal(r1, r2, sizeof(r1)));
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	(void)unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void
test_secret_files(void **state)
{
	struct auth_keys k, k2;
	char path[128], npath[128], err[512];
	uint8_t node[AUTH_HASH_LEN];

	snprintf(path, sizeof(path), "%s/s", tdir);
	snprintf(npath, sizeof(npath), "%s/n", tdir);

	/* No path, no environment: disabled, not an error. */
	unsetenv(AUTH_ENV_SECRET);
	assert_int_equal(auth_load(&k, NULL, err, sizeof(err)), 0);
	assert_false(k.enabled);

	write_file(path, "0123456789abcdef0123\n", 0644);
	assert_int_equal(auth_load(&k, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "group or others"));
	assert_non_null(strstr(err, "chmod 600"));
	write_file(path, "0123456789abcdef0123\n", 0604);
	assert_int_equal(auth_load(&k, path, err, sizeof(err)), -1);
	write_file(path, " \n\n", 0600);
	assert_int_equal(auth_load(&k, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty"));
	write_file(path, "short\n", 0600);
	assert_int_equal(auth_load(&k, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too short"));
	assert_int_equal(auth_load(&k, "/nonexistent/x", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open"));

	/* Trailing white space is not part of the secret. */
	write_file(path, "0123456789abcdef0123\r\n", 0600);
	assert_int_equal(auth_load(&k, path, err, sizeof(err)), 0);
	assert_true(k.enabled && k.cluster);
	assert_int_equal(k.secret.len, 20);
	assert_memory_equal(k.secret.k, "0123456789abcdef0123", 20);
	auth_node_key(&k.secret, node);
	assert_int_equal(k.node.len, AUTH_HASH_LEN);
	assert_memory_equal(k.node.k, node, AUTH_HASH_LEN);

	/* The environment is the fallback. */
	setenv(AUTH_ENV_SECRET, path, 1);
	assert_int_equal(auth_load_cluster(&k2, NULL, err, sizeof(err)), 0);
	assert_true(k2.cluster);
	assert_memory_equal(k2.secret.k, k.secret.k, k.secret.len);
	unsetenv(AUTH_ENV_SECRET);

	/* A node key file: K_node only, refused where S is needed. */
	(void)unlink(npath);
	assert_int_equal(auth_node_key_file(&k, npath, err, sizeof(err)), 0);
	assert_int_equal(auth_node_key_file(&k, npath, err, sizeof(err)), -1);
	assert_int_equal(auth_load(&k2, npath, err, sizeof(err)), 0);
	assert_true(k2.enabled);
	assert_false(k2.cluster);
	assert_memory_equal(k2.node.k, node, AUTH_HASH_LEN);
	assert_int_equal(auth_load_cluster(&k2, npath, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "node key"));
	write_file(npath, AUTH_NODE_KEY_TAG "abcd\n", 0600);
	assert_int_equal(auth_load(&k2, npath, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "damaged"));

	/* mpiv secret new: 64 hex digits, mode 0600, loads. */
	(void)unlink(path);
	assert_int_equal(auth_new_secret_file(path, err, sizeof(err)), 0);
	{
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		assert_int_equal(st.st_size, 65);
	}
	assert_int_equal(auth_load_cluster(&k2, path, err, sizeof(err)), 0);
	assert_int_equal(k2.secret.len, 64);
	(void)unlink(path);
	(void)unlink(npath);
}

static void
test_derivations(void **state)
{
	uint8_t t[AUTH_TOKEN_LEN], k1[AUTH_HASH_LEN], k1b[AUTH_HASH_LEN];
	uint8_t k2[AUTH_HASH_LEN], want[AUTH_HASH_LEN];
	struct auth_key s;

	memset(t, 7, sizeof(t));
	auth_rank_key(t, sizeof(t), 1, k1);
	auth_rank_key(t, sizeof(t), 1, k1b);
	auth_rank_key(t, sizeof(t), 2, k2);
	assert_memory_equal(k1, k1b, sizeof(k1));
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_hmac_sha256(t, sizeof(t), "rank 1", 6, want);
	assert_memory_equal(k1, want, sizeof(k1));
	/* Pair keys: symmetric, distinct per pair and from rank keys. */
	auth_pair_key(t, sizeof(t), 3, 12, k1);
	auth_pair_key(t, sizeof(t), 12, 3, k1b);
	assert_memory_equal(k1, k1b, sizeof(k1));
	auth_hmac_sha256(t, sizeof(t), "pair 3 12", 9, want);
	assert_memory_equal(k1, want, sizeof(k1));
	auth_pair_key(t, sizeof(t), 3, 13, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_pair_key(t, sizeof(t), 31, 2, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_rank_key(t, sizeof(t), 3, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_key_set(&s, "the cluster secret", 18);
	auth_node_key(&s, k1);
	auth_hmac_sha256("the cluster secret", 18, "mpiv node key v1", 16,
	    want);
	assert_memory_equal(k1, want, sizeof(k1));
}

/* Per-incarnation credentials: one per (rank, incarnation), none equal
   to the all-incarnation keys; pair keys symmetric in their two ends. */
static void
test_inc_derivations(void **state)
{
	uint8_t t[AUTH_TOKEN_LEN], k1[AUTH_HASH_LEN], k1b[AUTH_HASH_LEN];
	uint8_t k2[AUTH_HASH_LEN], want[AUTH_HASH_LEN], msg[64];
	struct auth_key s;
	size_t n = 0;

	memset(t, 7, sizeof(t));
	auth_rank_inc_key(t, sizeof(t), 1, 2, k1);
	auth_hmac_sha256(t, sizeof(t), "rank 1 inc 2", 12, want);
	assert_memory_equal(k1, want, sizeof(k1));
	auth_rank_inc_key(t, sizeof(t), 1, 3, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_rank_inc_key(t, sizeof(t), 2, 1, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_rank_key(t, sizeof(t), 1, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));

	auth_pair_inc_key(t, sizeof(t), 3, 1, 12, 2, k1);
	auth_pair_inc_key(t, sizeof(t), 12, 2, 3, 1, k1b);
	assert_memory_equal(k1, k1b, sizeof(k1));
	auth_hmac_sha256(t, sizeof(t), "pair 3 inc 1 12 inc 2", 21, want);
	assert_memory_equal(k1, want, sizeof(k1));
	auth_pair_inc_key(t, sizeof(t), 3, 2, 12, 2, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_pair_inc_key(t, sizeof(t), 3, 1, 12, 3, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_pair_key(t, sizeof(t), 3, 12, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));

	/* image key: HMAC(S, lp(label) lp(job) u32(rank) u32(inc)) */
	auth_key_set(&s, "the cluster secret", 18);
	auth_image_key(&s, "42", 5, 3, k1);
	auth_put32(msg + n, 17);
	n += 4;
	memcpy(msg + n, "mpiv image key v1", 17);
	n += 17;
	auth_put32(msg + n, 2);
	n += 4;
	memcpy(msg + n, "42", 2);
	n += 2;
	auth_put32(msg + n, 5);
	n += 4;
	auth_put32(msg + n, 3);
	n += 4;
	auth_hmac_sha256("the cluster secret", 18, msg, n, want);
	assert_memory_equal(k1, want, sizeof(k1));
	auth_image_key(&s, "42", 5, 4, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_image_key(&s, "42", 6, 3, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_image_key(&s, "43", 5, 3, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	auth_node_key(&s, k2);
	assert_memory_not_equal(k1, k2, sizeof(k1));
}

/* The proofs alone: right key, wrong key, another rank, another nonce. */
static void
test_proofs(void **state)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	uint8_t ns[AUTH_NONCE_LEN], nc[AUTH_NONCE_LEN], p[AUTH_HASH_LEN];
	uint8_t rp[AUTH_HASH_LEN], want[AUTH_HASH_LEN], t[AUTH_TOKEN_LEN];
	uint8_t kr[AUTH_HASH_LEN];
	struct auth_key k1, k2, key;

	memset(ns, 1, sizeof(ns));
	memset(nc, 2, sizeof(nc));
	memset(t, 3, sizeof(t));
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	h.job_id = "5";
	h.rank = 1;
	h.incarnation = 1;
	h.name = "host";
	h.auth_nonce.data = nc;
	h.auth_nonce.len = sizeof(nc);

	auth_rank_key(t, sizeof(t), 1, kr);
	auth_key_set(&k1, kr, sizeof(kr));
	auth_rank_key(t, sizeof(t), 2, kr);
	auth_key_set(&k2, kr, sizeof(kr));

	/* No proof at all. */
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp),
	    AUTH_ERR_REQUIRED);
	auth_hello_proof(&k1, ns, &auth_no_offer, &h, p);
	h.auth_proof.data = p;
	h.auth_proof.len = sizeof(p);
	assert_null(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp));
	auth_reply_proof(&k1, ns, nc, p, want);
	assert_memory_equal(rp, want, sizeof(rp));
	/* The reply proof is not the hello proof (no reflection). */
	assert_memory_not_equal(rp, p, sizeof(rp));

	/* Rank 1's key claiming rank 2: the CM checks with K_rank(2). */
	h.rank = 2;
	assert_string_equal(auth_check_hello(&k2, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);
	/* Even with its own key, a changed identity breaks the proof. */
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);
	h.rank = 1;
	h.job_id = "6";
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);
	h.job_id = "5";
	h.incarnation = 2;
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);
	h.incarnation = 1;
	/* A recorded Hello replayed against a fresh challenge. */
	ns[0] ^= 1;
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);
	ns[0] ^= 1;
	/* A proof of the wrong size. */
	h.auth_proof.len = 31;
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);
	h.auth_proof.len = sizeof(p);
	assert_null(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp));

	/* Length prefixes: moving a byte between job and name changes it. */
	h.job_id = "5h";
	h.name = "ost";
	assert_string_equal(auth_check_hello(&k1, ns, &auth_no_offer, &h, rp), AUTH_ERR_FAILED);

	/* Service policy: nodes prove K_node, the rest S. */
	{
		struct auth_keys ks = { 0 };
		const char *why = NULL;
		Mpiv__Hello n = MPIV__HELLO__INIT;

		ks.enabled = ks.cluster = true;
		auth_key_set(&ks.secret, "s-s-s-s-s-s-s-s-s", 17);
		auth_key_set(&ks.node, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", 32);
		n.role = MPIV__ROLE__ROLE_NODE;
		assert_int_equal(auth_key_service_nodes(&ks, &n, &key, &why), 0);
		assert_memory_equal(key.k, ks.node.k, 32);
		assert_int_equal(auth_key_service(&ks, &n, &key, &why), -1);
		n.role = MPIV__ROLE__ROLE_CLIENT;
		assert_int_equal(auth_key_service(&ks, &n, &key, &why), 0);
		assert_int_equal(key.len, 17);
		ks.cluster = false;	/* holding only K_node: serves no one */
		assert_int_equal(auth_key_service(&ks, &n, &key, &why), -1);
	}
}

/* ---------------- conn handshake over a socketpair ---------------- */

struct side {
	int frames;
	uint16_t first_type;
	bool hello_ok;
	bool got_reply;
	char error[256];
	int closed;
	char reason[256];
	bool auth_failed;
	const char *cipher;	/* at the last frame handed over */
	struct conn *c;
};

static void
side_on_frame(struct conn *c, const struct frame_hdr *h, ProtobufCMessage *m,
    uint8_t *payload)
{
	struct side *s = conn_udata(c);

	free(payload);
	s->cipher = conn_cipher(c);
	if (s->frames++ == 0)
		s->first_type = h->type;
	if (h->type == MPIV__MSG_TYPE__MSG_HELLO) {
		/* Plays a daemon: answers the Hello it was handed. */
		Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
		hr.ok = true;
		hr.version = FRAME_VERSION;
		(void)conn_send(c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base,
		    NULL, 0);
	}
	if (h->type == MPIV__MSG_TYPE__MSG_HELLO_REPLY) {
		Mpiv__HelloReply *hr = (Mpiv__HelloReply *)m;
		s->got_reply = true;
		s->hello_ok = hr->ok;
		snprintf(s->error, sizeof(s->error), "%s", hr->error);
	}
}

static void
side_on_close(struct conn *c, const char *reason)
{
	struct side *s = conn_udata(c);

	s->closed++;
	s->auth_failed = conn_auth_failed(c);
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	s->c = NULL;
}

static const struct conn_ops side_ops = {
	.on_frame = side_on_frame,
	.on_close = side_on_close,
};

static void
spin_until(struct ev_loop *loop, bool (*done)(struct side *, struct side *),
    struct side *a, struct side *b)
{
	ev_tstamp end = ev_time() + 3.0;

	while (!done(a, b) && ev_time() < end) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(500);
	}
}

static bool
client_settled(struct side *srv, struct side *cli)
{
	return cli->got_reply || cli->closed > 0;
}

static bool
both_closed(struct side *srv, struct side *cli)
{
	return srv->closed > 0 && cli->closed > 0;
}

static struct auth_keys srv_keys;

/*
 * One handshake: a server conn (with or without a secret) and a client
 * conn (with key ck or none), the client sending Hello then a Heartbeat
 * pipelined behind it.
 */
static void
handshake(bool server_auth, const struct auth_key *ck, struct side *srv,
    struct side *cli)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct auth_server as = { .enabled = server_auth,
	    .key = auth_key_service_nodes, .arg = &srv_keys };
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;
	int sv[2];

	memset(srv, 0, sizeof(*srv));
	memset(cli, 0, sizeof(*cli));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	srv->c = conn_new(loop, sv[0], &side_ops, srv);
	cli->c = conn_new(loop, sv[1], &side_ops, cli);
	assert_non_null(srv->c);
	assert_non_null(cli->c);
	conn_auth_server(srv->c, &as);
	conn_auth_client(cli->c, ck);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	h.rank = -1;
	h.name = "test";
	assert_int_equal(conn_send(cli->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0), 0);
	hb.seq = 1;
	assert_int_equal(conn_send(cli->c, MPIV__MSG_TYPE__MSG_HEARTBEAT,
	    &hb.base, NULL, 0), 0);
	spin_until(loop, client_settled, srv, cli);
	/* Let the pipelined heartbeat (or the closes) land. */
	for (int i = 0; i < 50; i++) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(200);
	}
	if (srv->c != NULL)
		conn_close(srv->c, "test over", false);
	if (cli->c != NULL)
		conn_close(cli->c, "test over", false);
	spin_until(loop, both_closed, srv, cli);
	ev_loop_destroy(loop);
}

static void
test_conn_handshake(void **state)
{
	struct side srv, cli;
	struct auth_key wrong;
	char err[256];
	char path[128];

	snprintf(path, sizeof(path), "%s/hs", tdir);
	(void)unlink(path);
	assert_int_equal(auth_new_secret_file(path, err, sizeof(err)), 0);
	assert_int_equal(auth_load_cluster(&srv_keys, path, err, sizeof(err)),
	    0);
	(void)unlink(path);
	auth_key_set(&wrong, "not the secret at all", 21);

	/* Right key: the server daemon sees the Hello and the heartbeat,
	   the client a proven HelloReply; never the Challenge. */
	handshake(true, &srv_keys.secret, &srv, &cli);
	assert_true(cli.got_reply);
	assert_true(cli.hello_ok);
	assert_int_equal(srv.first_type, MPIV__MSG_TYPE__MSG_HELLO);
	assert_int_equal(srv.frames, 2);
	assert_int_equal(cli.first_type, MPIV__MSG_TYPE__MSG_HELLO_REPLY);
	assert_false(cli.auth_failed);
	/* sealed both ways: the heartbeat behind the Hello came sealed */
	assert_string_equal(srv.cipher, seal_cipher_name(seal_pick(seal_ciphers())));
	assert_string_equal(cli.cipher, srv.cipher);

	/* Wrong key: refused with the one wording; the server daemon never
	   sees a frame (neither the Hello nor what came behind it). */
	handshake(true, &wrong, &srv, &cli);
	assert_true(cli.got_reply);
	assert_false(cli.hello_ok);
	assert_string_equal(cli.error, AUTH_ERR_FAILED);
	assert_int_equal(srv.frames, 0);
	assert_true(srv.auth_failed);

	/* A client with no secret at a server that has one. */
	handshake(true, NULL, &srv, &cli);
	assert_false(cli.hello_ok);
	assert_string_equal(cli.error, AUTH_ERR_REQUIRED);
	assert_int_equal(srv.frames, 0);

	/* A node key where the cluster secret is needed (role client). */
	handshake(true, &srv_keys.node, &srv, &cli);
	assert_false(cli.hello_ok);
	assert_int_equal(srv.frames, 0);

	/* A keyed client at a server without a secret hangs up itself. */
	handshake(false, &srv_keys.secret, &srv, &cli);
	assert_false(cli.got_reply);
	assert_true(cli.auth_failed);
	assert_string_equal(cli.reason, AUTH_ERR_NOAUTH);
	assert_int_equal(srv.frames, 0);

	/* Neither has a secret: works, encrypted (not authenticated). */
	handshake(false, NULL, &srv, &cli);
	assert_true(cli.hello_ok);
	assert_int_equal(srv.frames, 2);
	assert_string_equal(srv.cipher, seal_cipher_name(seal_pick(seal_ciphers())));
	assert_string_equal(cli.cipher, srv.cipher);

	/* ChaCha20-Poly1305 when the client has no AES-GCM */
	setenv("MPIV_SEAL_NO_AES", "1", 1);
	handshake(true, &srv_keys.secret, &srv, &cli);
	unsetenv("MPIV_SEAL_NO_AES");
	assert_true(cli.hello_ok);
	assert_string_equal(srv.cipher, "chacha20poly1305");
	assert_string_equal(cli.cipher, "chacha20poly1305");
}

/*
 * The plaintext policy (strict: no transition switch): both insecure
 * works in plaintext; an insecure client at an encrypting server is
 * refused with the reason.
 */
static void
test_conn_plaintext(void **state)
{
	struct side srv, cli;

	seal_set_plaintext(true);
	handshake(true, &srv_keys.secret, &srv, &cli);
	assert_true(cli.hello_ok);
	assert_int_equal(srv.frames, 2);
	assert_string_equal(srv.cipher, "plaintext");
	assert_string_equal(cli.cipher, "plaintext");
	seal_set_plaintext(false);
	assert_null(getenv(SEAL_ENV_PLAINTEXT));

	/* the client is insecure, the server (same process) encrypts: the
	   client picks no cipher, the server refuses */
	{
		struct ev_loop *loop = ev_loop_new(0);
		struct auth_server as = { .enabled = true,
		    .key = auth_key_service_nodes, .arg = &srv_keys };
		Mpiv__Hello h = MPIV__HELLO__INIT;
		int sv[2];

		memset(&srv, 0, sizeof(srv));
		memset(&cli, 0, sizeof(cli));
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		srv.c = conn_new(loop, sv[0], &side_ops, &srv);
		cli.c = conn_new(loop, sv[1], &side_ops, &cli);
		conn_auth_server(srv.c, &as);	/* offers ciphers */
		conn_auth_client(cli.c, &srv_keys.secret);
		seal_set_plaintext(true);	/* the client picks none */
		h.version = FRAME_VERSION;
		h.role = MPIV__ROLE__ROLE_CLIENT;
		h.rank = -1;
		assert_int_equal(conn_send(cli.c, MPIV__MSG_TYPE__MSG_HELLO,
		    &h.base, NULL, 0), 0);
		spin_until(loop, client_settled, &srv, &cli);
		seal_set_plaintext(false);
		assert_true(cli.got_reply);
		assert_false(cli.hello_ok);
		assert_string_equal(cli.error, SEAL_ERR_PLAIN_PEER);
		assert_int_equal(srv.frames, 0);
		if (srv.c != NULL && !srv.closed)
			conn_close(srv.c, "test over", false);
		if (cli.c != NULL && !cli.closed)
			conn_close(cli.c, "test over", false);
		spin_until(loop, both_closed, &srv, &cli);
		ev_loop_destroy(loop);
	}
}

/* A server that does not hold the key: the client closes on it. */
static void
test_impostor(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
	Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
	Mpiv__Hello h = MPIV__HELLO__INIT;
	struct side cli = { 0 }, none = { .closed = 1 };
	uint8_t nonce[AUTH_NONCE_LEN], fake[AUTH_HASH_LEN];
	struct seal_kx kx;
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl;
	const char *err;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(net_set_nonblock(sv[0]), 0);	/* frame_read polls */
	cli.c = conn_new(loop, sv[1], &side_ops, &cli);
	conn_auth_client(cli.c, &srv_keys.secret);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	assert_int_equal(conn_send(cli.c, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0), 0);
	/* Nothing leaves before the Challenge. */
	ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(frame_read(sv[0], &fh, &m, &pl, 100, &err), -1);
	memset(nonce, 9, sizeof(nonce));
	ch.version = AUTH_VERSION;
	ch.auth = true;
	ch.nonce.data = nonce;
	ch.nonce.len = sizeof(nonce);
	assert_int_equal(seal_kx_new(&kx), 0);
	ch.kx_pub.data = kx.pub;
	ch.kx_pub.len = sizeof(kx.pub);
	ch.ciphers = seal_ciphers();
	assert_int_equal(frame_write(sv[0], MPIV__MSG_TYPE__MSG_CHALLENGE,
	    &ch.base, NULL, 0, 1000), 0);
	for (int i = 0; i < 20; i++) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(500);
	}
	assert_int_equal(frame_read(sv[0], &fh, &m, &pl, 1000, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_HELLO);
	assert_int_equal(((Mpiv__Hello *)m)->auth_proof.len, AUTH_HASH_LEN);
	frame_free_meta(m);
	free(pl);
	/* Answers ok, with a proof it cannot have computed. */
	memset(fake, 0x42, sizeof(fake));
	hr.ok = true;
	hr.auth_proof.data = fake;
	hr.auth_proof.len = sizeof(fake);
	assert_int_equal(frame_write(sv[0], MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    &hr.base, NULL, 0, 1000), 0);
	spin_until(loop, both_closed, &none, &cli);
	assert_int_equal(cli.closed, 1);
	assert_false(cli.got_reply);	/* the daemon never saw it */
	assert_true(cli.auth_failed);
	assert_string_equal(cli.reason, AUTH_ERR_IMPOSTOR);
	close(sv[0]);
	ev_loop_destroy(loop);
}

/* The blocking dialler (tools, ranks) against a conn server. */
static void
test_blocking_client(void **state)
{
	struct auth_server as = { .enabled = true,
	    .key = auth_key_service_nodes, .arg = &srv_keys };
	struct side srv;

	for (int round = 0; round < 3; round++) {
		struct ev_loop *loop = ev_loop_new(0);
		Mpiv__Hello h = MPIV__HELLO__INIT;
		Mpiv__HelloReply *hr = NULL;
		struct seal sess = { 0 };
		struct auth_key wrong;
		char err[256];
		int sv[2], rc = -1;
		pid_t pid;

		memset(&srv, 0, sizeof(srv));
		auth_key_set(&wrong, "wrong wrong wrong", 17);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		srv.c = conn_new(loop, sv[0], &side_ops, &srv);
		conn_auth_server(srv.c, &as);
		/* The server runs in a child; we dial blockingly here. */
		if ((pid = fork()) == 0) {
			close(sv[1]);
			for (int i = 0; i < 400 && srv.closed == 0; i++) {
				ev_run(loop, EVRUN_NOWAIT);
				usleep(1000);
			}
			_exit(srv.frames == (round == 0 ? 1 : 0) ? 0 : 1);
		}
		close(sv[0]);
		h.version = FRAME_VERSION;
		h.role = round == 2 ? MPIV__ROLE__ROLE_NODE :
		    MPIV__ROLE__ROLE_CLIENT;
		h.rank = -1;
		rc = auth_client_hello(sv[1], round == 1 ? &wrong :
		    round == 2 ? &srv_keys.secret : &srv_keys.secret, &h,
		    &sess, 2000, &hr, err, sizeof(err));
		assert_int_equal(rc, 0);
		if (round == 0) {
			assert_true(hr->ok);
		} else {
			/* Wrong key; S where a node must prove K_node. */
			assert_false(hr->ok);
			assert_string_equal(hr->error, AUTH_ERR_FAILED);
		}
		assert_null(h.auth_proof.data);	/* no dangling pointers */
		frame_free_meta(&hr->base);
		seal_end(&sess);
		close(sv[1]);
		{
			int st;
			assert_int_equal(waitpid(pid, &st, 0), pid);
			assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		/* Our copy of the server side (the child served it). */
		conn_close(srv.c, "test done", false);
		for (int i = 0; i < 100 && srv.closed == 0; i++)
			ev_run(loop, EVRUN_NOWAIT);
		assert_int_equal(srv.closed, 1);
		ev_loop_destroy(loop);
	}
}

static int
setup(void **state)
{
	snprintf(tdir, sizeof(tdir), "/tmp/test_auth.XXXXXX");
	return mkdtemp(tdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	return rmdir(tdir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_secret_files),
		cmocka_unit_test(test_derivations),
		cmocka_unit_test(test_inc_derivations),
		cmocka_unit_test(test_proofs),
		cmocka_unit_test(test_conn_handshake),
		cmocka_unit_test(test_conn_plaintext),
		cmocka_unit_test(test_impostor),
		cmocka_unit_test(test_blocking_client),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_auth", getenv("AUTH_TEST_DEBUG") ? LOG_LEVEL_DEBUG :
	    LOG_LEVEL_ERROR);
	return cmocka_run_group_tests(tests, setup, teardown);
}
