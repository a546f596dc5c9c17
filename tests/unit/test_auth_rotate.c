/*
 * test_auth_rotate.c: runtime/auth_rotate.c. The parser of secret files
 * in every format (the one-line ones unchanged, mpiv-secrets v1 and
 * mpiv-node-keys v1, and what each malformed file is told), times and
 * durations, writing a file back, the multi-key check of a Hello (an
 * older key accepted and used, a retired one refused with its time),
 * rotate and node-key on real files, and a daemon's reload keeping its
 * keys when the file is bad.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "auth_rotate.h"
#include "daemon.h"
#include "log.h"

#define S1 "0123456789abcdef0123456789abcdef"
#define S2 "fedcba9876543210fedcba9876543210"
#define S3 "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb"
#define NK1 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define NK2 "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"

static char tdir[64];

static int
parse(const char *text, struct auth_file *f, char *err, size_t errlen)
{
	return auth_file_parse(f, text, strlen(text), "F", err, errlen);
}

/* The file text fails to parse with a message containing want. */
static void
bad(const char *text, const char *want)
{
	struct auth_file f;
	char err[512] = "";

	if (parse(text, &f, err, sizeof(err)) == 0)
		fail_msg("parsed: %s", text);
	if (strstr(err, want) == NULL)
		fail_msg("for %s: got \"%s\", want \"%s\"", text, err, want);
}

static void
test_one_line(void **state)
{
	struct auth_file f;
	struct auth_keys k;
	struct auth_key s;
	uint8_t node[AUTH_HASH_LEN];
	char err[512];

	/* The cluster secret: the whole text, trailing white space dropped,
	   inner white space kept. */
	assert_int_equal(parse("my long pass phrase here\n", &f, err,
	    sizeof(err)), 0);
	assert_int_equal(f.version, 0);
	assert_false(f.node);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.e[0].len, strlen("my long pass phrase here"));
	assert_int_equal(auth_parse_keys(&k, S1 "\n", strlen(S1) + 1, "F", err,
	    sizeof(err)), 0);
	assert_true(k.enabled && k.cluster);
	assert_int_equal(k.naccept, 0);
	auth_key_set(&s, S1, strlen(S1));
	assert_true(auth_key_equal(&k.secret, &s));
	auth_node_key(&s, node);
	assert_int_equal(k.node.len, AUTH_HASH_LEN);
	assert_memory_equal(k.node.k, node, AUTH_HASH_LEN);
	/* The node key line. */
	assert_int_equal(auth_parse_keys(&k, AUTH_NODE_KEY_TAG NK1 "\n",
	    strlen(AUTH_NODE_KEY_TAG NK1 "\n"), "F", err, sizeof(err)), 0);
	assert_true(k.enabled);
	assert_false(k.cluster);
	assert_int_equal(k.node.k[1], 0x11);
	/* Their errors, word for word as before. */
	bad("short", "secret in F is too short (5 bytes, want at least 16");
	bad(AUTH_NODE_KEY_TAG "0011", "node key file F is damaged");
	bad(AUTH_NODE_KEY_TAG NK1 "00", "node key file F is damaged");
	bad("\n \t\n", "secret file F is empty");
}

static void
test_v1(void **state)
{
	struct auth_file f;
	struct auth_keys k;
	struct auth_key s;
	char err[512];

	/* Current not first, comments, blank lines, CRLF, tabs. */
	assert_int_equal(parse("mpiv-secrets v1\r\n# a comment\n\n"
	    "accept-until 2026-11-28T03:30:00Z " S2 "\n"
	    "  current\t" S1 "  \r\n"
	    "next " S3 "\n", &f, err, sizeof(err)), 0);
	assert_int_equal(f.version, 1);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.e[0].kind, AUTH_E_CURRENT);
	assert_int_equal(f.e[0].len, strlen(S1));
	assert_memory_equal(f.e[0].val, S1, strlen(S1));
	assert_int_equal(f.e[1].kind, AUTH_E_ACCEPT);
	assert_true(f.e[1].until == 1795836600);
	assert_int_equal(f.e[2].kind, AUTH_E_NEXT);
	assert_true(f.e[2].until == AUTH_NO_DEADLINE);
	assert_int_equal(auth_file_keys(&f, &k, "F", err, sizeof(err)), 0);
	assert_true(k.enabled && k.cluster);
	assert_int_equal(k.naccept, 2);
	auth_key_set(&s, S2, strlen(S2));
	assert_true(auth_key_equal(&k.accept[0].secret, &s));
	assert_true(k.accept[0].until == 1795836600);
	auth_key_set(&s, S3, strlen(S3));
	assert_true(auth_key_equal(&k.accept[1].secret, &s));

	/* Node keys. */
	assert_int_equal(parse("mpiv-node-keys v1\ncurrent " NK1 "\n"
	    "accept-until 1795836600 " NK2 "\n", &f, err, sizeof(err)), 0);
	assert_true(f.node);
	assert_int_equal(auth_file_keys(&f, &k, "F", err, sizeof(err)), 0);
	assert_false(k.cluster);
	assert_int_equal(k.node.k[0], 0x00);
	assert_int_equal(k.accept[0].node.k[0], 0xff);

	/* Malformed files: each says what and where. */
	bad("mpiv-secrets v2\ncurrent " S1, "format version 2; this mpiv "
	    "reads version 1");
	bad("mpiv-secrets vx\ncurrent " S1, "line 1: want \"mpiv-secrets v1\"");
	bad("mpiv-secrets v1\n# nothing", "has no current key");
	bad("mpiv-secrets v1\ncurrent " S1 "\ncurrent " S2,
	    "line 3: a second current key");
	bad("mpiv-secrets v1\ncurrent " S1 "\nnext " S2 "\nnext " S3,
	    "line 4: a second next key");
	bad("mpiv-secrets v1\ncurrent " S1 "\nnext " S1, "line 3: the key of "
	    "line 2 again");
	bad("mpiv-secrets v1\ncurrent short", "line 2: a secret has 16 to");
	bad("mpiv-secrets v1\ncurrent " S1 " extra", "line 2: want \"current "
	    "KEY\"");
	bad("mpiv-secrets v1\ncurrent " S1 " a b", "too many fields");
	bad("mpiv-secrets v1\ncurrent", "want \"current KEY\"");
	bad("mpiv-secrets v1\ncurrent " S1 "\naccept-until " S2,
	    "want \"accept-until TIME KEY\"");
	bad("mpiv-secrets v1\ncurrent " S1 "\naccept-until tomorrow " S2,
	    "line 3: bad time \"tomorrow");
	bad("mpiv-secrets v1\ncurrent " S1 "\nretire " S2,
	    "unknown keyword \"retire\"");
	bad("mpiv-secrets v1\ncurrent " S1 "\x01xx",
	    "no control characters");
	bad("mpiv-node-keys v1\ncurrent " S1, "a node key is 64 hex digits");
	bad("mpiv-node-keys v1\ncurrent " NK1 "0", "64 hex digits");
	{
		char big[2048];
		size_t off;

		off = (size_t)snprintf(big, sizeof(big), "mpiv-secrets v1\n");
		for (int i = 0; i <= (int)AUTH_MAX_KEYS; i++)
			off += (size_t)snprintf(big + off, sizeof(big) - off,
			    "%s %032d\n", i == 0 ? "current" :
			    "accept-until 1 ", i);
		bad(big, "more than 8 keys");
	}
	{
		static const char nul[] = "mpiv-secrets v1\ncurrent " S1
		    "\n#\0x\n";
		char err2[512];

		assert_int_equal(auth_file_parse(&f, nul, sizeof(nul) - 1, "F",
		    err2, sizeof(err2)), -1);
		assert_non_null(strstr(err2, "line 3: a NUL byte"));
	}
}

static void
test_times(void **state)
{
	int64_t t, d;
	char out[AUTH_TIME_LEN];
	static const char *const no[] = {
		"", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
		"2026-01-01T00:00:00", "2026-01-01 00:00:00Z",
		"2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+0100",
		"2026-01-01T00:00:00ZZ", "1969-12-31T23:59:59Z", "1234567890123",
		"-5", "12a", "10000-01-01T00:00:00Z",
	};

#define T(s) auth_parse_time(s, strlen(s), &t)
	assert_int_equal(T("0"), 0);
	assert_true(t == 0);
	assert_int_equal(T("1795836600"), 0);
	assert_true(t == 1795836600);
	assert_int_equal(T("2026-11-28T03:30:00Z"), 0);
	assert_true(t == 1795836600);
	assert_int_equal(T("2026-11-28t03:30:00.999z"), 0);
	assert_true(t == 1795836600);
	assert_int_equal(T("2026-11-28T04:30:00+01:00"), 0);
	assert_true(t == 1795836600);
	assert_int_equal(T("2026-11-27T22:00:00-05:30"), 0);
	assert_true(t == 1795836600);
	assert_int_equal(T("2024-02-29T12:00:00Z"), 0);
	assert_true(t == 1709208000);
	assert_int_equal(T("2000-03-01T00:00:00Z"), 0);
	assert_true(t == 951868800);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (T(no[i]) == 0)
			fail_msg("parsed time \"%s\"", no[i]);
#undef T
	/* Only n bytes are looked at. */
	assert_int_equal(auth_parse_time("17958366009", 10, &t), 0);
	assert_true(t == 1795836600);
	auth_format_time(1795836600, out, sizeof(out));
	assert_string_equal(out, "2026-11-28T03:30:00Z");
	assert_int_equal(auth_parse_time(out, strlen(out), &t), 0);
	assert_true(t == 1795836600);

	assert_int_equal(auth_parse_duration("90", &d), 0);
	assert_true(d == 90);
	assert_int_equal(auth_parse_duration("2s", &d), 0);
	assert_true(d == 2);
	assert_int_equal(auth_parse_duration("15m", &d), 0);
	assert_true(d == 900);
	assert_int_equal(auth_parse_duration("24h", &d), 0);
	assert_true(d == 86400);
	assert_int_equal(auth_parse_duration("7d", &d), 0);
	assert_true(d == 7 * 86400);
	assert_int_equal(auth_parse_duration("0", &d), 0);
	assert_int_equal(auth_parse_duration("", &d), -1);
	assert_int_equal(auth_parse_duration("h", &d), -1);
	assert_int_equal(auth_parse_duration("1w", &d), -1);
	assert_int_equal(auth_parse_duration("1hh", &d), -1);
	assert_int_equal(auth_parse_duration("-1s", &d), -1);
	assert_int_equal(auth_parse_duration("99999999999999999999", &d), -1);
	assert_int_equal(auth_parse_duration("4000d", &d), -1);
}

static void
test_text_roundtrip(void **state)
{
	static const char in[] = "mpiv-secrets v1\nnext " S3 "\ncurrent " S1
	    "\naccept-until 2026-11-28T04:30:00+01:00 " S2 "\n";
	struct auth_file f, g;
	char text[AUTH_MAX_FILE + 1], err[512];

	assert_int_equal(parse(in, &f, err, sizeof(err)), 0);
	assert_int_equal(auth_file_text(&f, text, sizeof(text), err,
	    sizeof(err)), 0);
	assert_non_null(strstr(text, "\ncurrent " S1 "\n"));
	assert_non_null(strstr(text, "\naccept-until 2026-11-28T03:30:00Z " S2
	    "\n"));
	assert_int_equal(parse(text, &g, err, sizeof(err)), 0);
	assert_int_equal(g.n, f.n);
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(g.e[i].kind, f.e[i].kind);
		assert_true(g.e[i].until == f.e[i].until);
		assert_int_equal(g.e[i].len, f.e[i].len);
		assert_memory_equal(g.e[i].val, f.e[i].val, f.e[i].len);
	}
	/* A one-line secret with white space cannot be written as v1. */
	assert_int_equal(parse("pass phrase of sixteen", &f, err, sizeof(err)),
	    0);
	assert_int_equal(auth_file_text(&f, text, sizeof(text), err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "white space"));
	/* Nor into too small a buffer. */
	assert_int_equal(parse(in, &f, err, sizeof(err)), 0);
	assert_int_equal(auth_file_text(&f, text, 64, err, sizeof(err)), -1);
}

/* A Hello proven with key for nonce_s. */
static void
hello_with(Mpiv__Hello *h, uint8_t *nonce_c, uint8_t *proof,
    const struct auth_key *key, const uint8_t *nonce_s, Mpiv__Role role)
{
	*h = (Mpiv__Hello)MPIV__HELLO__INIT;
	h->role = role;
	h->job_id = "";
	h->name = "t";
	h->rank = -1;
	memset(nonce_c, 7, AUTH_NONCE_LEN);
	h->auth_nonce.data = nonce_c;
	h->auth_nonce.len = AUTH_NONCE_LEN;
	auth_hello_proof(key, nonce_s, &auth_no_offer, h, proof);
	h->auth_proof.data = proof;
	h->auth_proof.len = AUTH_HASH_LEN;
}

/* A derivation from S like a CS's image keys, for node Hellos only. */
static void
test_derive(void *arg, const struct auth_key *s, const Mpiv__Hello *h,
    struct auth_key *out)
{
	uint8_t k[AUTH_HASH_LEN];

	out->len = 0;
	if (h->role != MPIV__ROLE__ROLE_NODE)
		return;
	auth_hmac_sha256(s->k, s->len, "image", 5, k);
	auth_key_set(out, k, sizeof(k));
}

static void
test_check_any(void **state)
{
	struct auth_keys ring;
	struct auth_server as = { .ring = &ring };
	struct auth_key key, other;
	uint8_t nonce_s[AUTH_NONCE_LEN], nonce_c[AUTH_NONCE_LEN];
	uint8_t proof[AUTH_HASH_LEN], reply[AUTH_HASH_LEN], want[AUTH_HASH_LEN];
	char text[512], err[512];
	const char *why;
	Mpiv__Hello h;
	int64_t now = (int64_t)time(NULL);

	memset(nonce_s, 3, sizeof(nonce_s));
	snprintf(text, sizeof(text), "mpiv-secrets v1\ncurrent " S1
	    "\naccept-until %lld " S2 "\naccept-until %lld " S3 "\n",
	    (long long)now + 3600, (long long)now - 10);
	assert_int_equal(auth_parse_keys(&ring, text, strlen(text), "F", err,
	    sizeof(err)), 0);

	/* The current key: as ever. */
	hello_with(&h, nonce_c, proof, &ring.secret, nonce_s,
	    MPIV__ROLE__ROLE_CLIENT);
	key = ring.secret;
	assert_null(auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer,
	    &h, reply));
	assert_true(auth_key_equal(&key, &ring.secret));

	/* An older key still accepted: passes, and the session goes on with
	   it (the reply proof is made with it). */
	hello_with(&h, nonce_c, proof, &ring.accept[0].secret, nonce_s,
	    MPIV__ROLE__ROLE_CLIENT);
	key = ring.secret;
	assert_null(auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer,
	    &h, reply));
	assert_true(auth_key_equal(&key, &ring.accept[0].secret));
	auth_reply_proof(&ring.accept[0].secret, nonce_s, nonce_c, proof,
	    want);
	assert_memory_equal(reply, want, AUTH_HASH_LEN);
	/* Without the ring: refused. */
	key = ring.secret;
	assert_string_equal(auth_check_hello_any(NULL, &key, nonce_s,
	    &auth_no_offer, &h, reply), AUTH_ERR_FAILED);

	/* A retired one: refused, saying when it retired. */
	hello_with(&h, nonce_c, proof, &ring.accept[1].secret, nonce_s,
	    MPIV__ROLE__ROLE_CLIENT);
	key = ring.secret;
	why = auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer, &h,
	    reply);
	assert_non_null(why);
	assert_non_null(strstr(why, "authentication failed: secret retired "
	    "at "));
	assert_true(auth_key_equal(&key, &ring.secret));

	/* Node agents: the older K_node the same way. */
	hello_with(&h, nonce_c, proof, &ring.accept[0].node, nonce_s,
	    MPIV__ROLE__ROLE_NODE);
	key = ring.node;
	assert_null(auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer,
	    &h, reply));
	assert_true(auth_key_equal(&key, &ring.accept[0].node));
	hello_with(&h, nonce_c, proof, &ring.accept[1].node, nonce_s,
	    MPIV__ROLE__ROLE_NODE);
	key = ring.node;
	why = auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer, &h,
	    reply);
	assert_non_null(why);
	assert_non_null(strstr(why, "node key retired at"));
	/* A node key never passes for S, nor S for a node key. */
	hello_with(&h, nonce_c, proof, &ring.accept[0].node, nonce_s,
	    MPIV__ROLE__ROLE_CLIENT);
	key = ring.secret;
	assert_string_equal(auth_check_hello_any(&as, &key, nonce_s,
	    &auth_no_offer, &h, reply), AUTH_ERR_FAILED);

	/* A key the ring does not hold (a rank key): no older ones tried. */
	auth_key_set(&other, "some rank key 0123456789", 24);
	hello_with(&h, nonce_c, proof, &ring.accept[0].secret, nonce_s,
	    MPIV__ROLE__ROLE_RANK);
	key = other;
	assert_string_equal(auth_check_hello_any(&as, &key, nonce_s,
	    &auth_no_offer, &h, reply), AUTH_ERR_FAILED);
	/* A key the server derives from S (a CS's image keys): derived
	   from an accepted S passes, from a retired one is refused, and a
	   Hello the derivation does not cover tries nothing more. */
	as.derive = test_derive;
	test_derive(NULL, &ring.secret, &h, &key);
	hello_with(&h, nonce_c, proof, &key, nonce_s, MPIV__ROLE__ROLE_NODE);
	assert_null(auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer,
	    &h, reply));
	test_derive(NULL, &ring.accept[0].secret, &h, &other);
	hello_with(&h, nonce_c, proof, &other, nonce_s, MPIV__ROLE__ROLE_NODE);
	test_derive(NULL, &ring.secret, &h, &key);
	assert_null(auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer,
	    &h, reply));
	assert_true(auth_key_equal(&key, &other));
	test_derive(NULL, &ring.accept[1].secret, &h, &other);
	hello_with(&h, nonce_c, proof, &other, nonce_s, MPIV__ROLE__ROLE_NODE);
	test_derive(NULL, &ring.secret, &h, &key);
	why = auth_check_hello_any(&as, &key, nonce_s, &auth_no_offer, &h,
	    reply);
	assert_non_null(why);
	assert_non_null(strstr(why, "secret retired at"));
	test_derive(NULL, &ring.accept[0].secret, &h, &other);
	test_derive(NULL, &ring.secret, &h, &key);
	hello_with(&h, nonce_c, proof, &other, nonce_s,
	    MPIV__ROLE__ROLE_CLIENT);	/* test_derive covers no client */
	assert_string_equal(auth_check_hello_any(&as, &key, nonce_s,
	    &auth_no_offer, &h, reply), AUTH_ERR_FAILED);
	as.derive = NULL;

	/* No proof at all: the usual words. */
	h.auth_proof.len = 0;
	key = ring.secret;
	assert_string_equal(auth_check_hello_any(&as, &key, nonce_s,
	    &auth_no_offer, &h, reply), AUTH_ERR_REQUIRED);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	(void)unlink(path);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
}

static void
test_rotate_files(void **state)
{
	char p[128], nk[128], err[512], newfp[AUTH_FP_HEX + 1];
	char oldfp[AUTH_FP_HEX + 1], fp[AUTH_FP_HEX + 1];
	struct auth_keys k, k2;
	struct auth_key s;
	struct stat st;
	uint8_t node[AUTH_HASH_LEN];
	int64_t now = (int64_t)time(NULL);

	snprintf(p, sizeof(p), "%s/secret", tdir);
	snprintf(nk, sizeof(nk), "%s/node.key", tdir);
	write_file(p, S1 "\n");

	/* A one-line file rotated: a new current, S1 accepted until now +
	   grace; mode 0600. */
	assert_int_equal(auth_rotate_file(p, now, 60, false, newfp, oldfp, err,
	    sizeof(err)), 0);
	auth_key_set(&s, S1, strlen(S1));
	auth_fingerprint(&s, fp);
	assert_string_equal(oldfp, fp);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(auth_load(&k, p, err, sizeof(err)), 0);
	assert_int_equal(k.naccept, 1);
	assert_true(auth_key_equal(&k.accept[0].secret, &s));
	assert_true(k.accept[0].until == now + 60);
	auth_fingerprint(&k.secret, fp);
	assert_string_equal(newfp, fp);
	assert_int_equal(k.secret.len, 64);	/* 32 random bytes as hex */

	/* Stage, then rotate: the staged one becomes current. */
	assert_int_equal(auth_rotate_file(p, now, 60, true, newfp, oldfp, err,
	    sizeof(err)), 0);
	assert_int_equal(auth_rotate_file(p, now, 60, true, fp, oldfp, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "already stages a next secret"));
	assert_int_equal(auth_load(&k2, p, err, sizeof(err)), 0);
	assert_int_equal(k2.naccept, 2);
	assert_true(k2.accept[1].until == AUTH_NO_DEADLINE);
	assert_true(auth_key_equal(&k2.secret, &k.secret));
	assert_int_equal(auth_rotate_file(p, now + 5, 30, false, fp, oldfp,
	    err, sizeof(err)), 0);
	assert_string_equal(fp, newfp);		/* the staged one */
	assert_int_equal(auth_load(&k2, p, err, sizeof(err)), 0);
	assert_int_equal(k2.naccept, 2);
	assert_true(auth_key_equal(&k2.accept[0].secret, &k.secret));
	assert_true(k2.accept[0].until == now + 35);
	assert_true(auth_key_equal(&k2.accept[1].secret, &s));

	/* The node key file of it: every K_node with its deadline. */
	assert_int_equal(auth_node_keys_file(&k2, nk, false, err, sizeof(err)),
	    0);
	assert_int_equal(auth_node_keys_file(&k2, nk, false, err, sizeof(err)),
	    -1);
	assert_int_equal(auth_node_keys_file(&k2, nk, true, err, sizeof(err)),
	    0);
	assert_int_equal(auth_load(&k, nk, err, sizeof(err)), 0);
	assert_false(k.cluster);
	assert_int_equal(k.naccept, 2);
	assert_true(auth_key_equal(&k.node, &k2.node));
	auth_node_key(&s, node);
	assert_memory_equal(k.accept[1].node.k, node, AUTH_HASH_LEN);
	assert_true(k.accept[1].until == now + 60);
	assert_int_equal(auth_load_cluster(&k, nk, err, sizeof(err)), -1);
	/* A node key file is not rotated. */
	assert_int_equal(auth_rotate_file(nk, now, 60, false, fp, oldfp, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "holds node keys"));

	/* Full: the keys retired longest ago make room; none retired: no. */
	{
		char text[2048];
		size_t off;

		off = (size_t)snprintf(text, sizeof(text),
		    "mpiv-secrets v1\ncurrent %s\n", S1);
		for (int i = 1; i < (int)AUTH_MAX_KEYS; i++)
			off += (size_t)snprintf(text + off, sizeof(text) - off,
			    "accept-until %lld %032d\n",
			    (long long)(i == 3 ? now - 100 : i == 5 ? now - 50 :
			    now + 100), i);
		write_file(p, text);
		assert_int_equal(auth_rotate_file(p, now, 60, false, fp,
		    oldfp, err, sizeof(err)), 0);
		assert_int_equal(auth_load(&k, p, err, sizeof(err)), 0);
		assert_int_equal(k.naccept, AUTH_MAX_KEYS - 1);
		for (size_t i = 0; i < k.naccept; i++)
			assert_true(k.accept[i].until != now - 100);
		assert_int_equal(auth_rotate_file(p, now, 60, false, fp,
		    oldfp, err, sizeof(err)), 0);	/* the other one */
		assert_int_equal(auth_rotate_file(p, now, 60, false, fp,
		    oldfp, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "still accepted"));
	}

	/* A group-readable file is refused as everywhere. */
	write_file(p, S1 "\n");
	assert_int_equal(chmod(p, 0640), 0);
	assert_int_equal(auth_rotate_file(p, now, 60, false, fp, oldfp, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "accessible by group or others"));
}

static void
test_reload(void **state)
{
	struct daemon_reload r = { 0 };
	struct auth_keys k, before;
	char p[128], err[512];

	snprintf(p, sizeof(p), "%s/reload", tdir);
	write_file(p, S1 "\n");
	assert_int_equal(auth_load(&k, p, err, sizeof(err)), 0);
	r.who = "test";
	r.path = p;
	r.keys = &k;
	write_file(p, "mpiv-secrets v1\ncurrent " S2 "\naccept-until "
	    "2026-11-28T03:30:00Z " S1 "\n");
	assert_int_equal(daemon_auth_reload(&r, -1), 0);
	assert_int_equal(k.naccept, 1);
	before = k;
	/* Malformed, missing, a node key for a service: keys kept. */
	write_file(p, "mpiv-secrets v1\ncurrent tooshort\n");
	assert_int_equal(daemon_auth_reload(&r, -1), -1);
	assert_memory_equal(&k, &before, sizeof(k));
	write_file(p, AUTH_NODE_KEY_TAG NK1 "\n");
	assert_int_equal(daemon_auth_reload(&r, -1), -1);
	assert_memory_equal(&k, &before, sizeof(k));
	r.node_key_ok = true;	/* a node agent takes it */
	assert_int_equal(daemon_auth_reload(&r, -1), 0);
	assert_false(k.cluster);
	(void)unlink(p);
	assert_int_equal(daemon_auth_reload(&r, -1), -1);
	assert_true(k.enabled);
	/* A daemon started without a secret stays without. */
	memset(&k, 0, sizeof(k));
	write_file(p, S1 "\n");
	assert_int_equal(daemon_auth_reload(&r, -1), -1);
	assert_false(k.enabled);
}

static void
test_fingerprint(void **state)
{
	struct auth_key a, b;
	char fa[AUTH_FP_HEX + 1], fb[AUTH_FP_HEX + 1];

	auth_key_set(&a, S1, strlen(S1));
	auth_key_set(&b, S2, strlen(S2));
	auth_fingerprint(&a, fa);
	auth_fingerprint(&b, fb);
	assert_int_equal(strlen(fa), AUTH_FP_HEX);
	assert_string_not_equal(fa, fb);
	assert_null(strstr(S1, fa));
	assert_true(auth_key_equal(&a, &a));
	assert_false(auth_key_equal(&a, &b));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_text_roundtrip),
		cmocka_unit_test(test_check_any),
		cmocka_unit_test(test_rotate_files),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_fingerprint),
	};
	int rc;

	log_init("test", LOG_LEVEL_WARN);
	snprintf(tdir, sizeof(tdir), "/tmp/mpiv-rot.XXXXXX");
	if (mkdtemp(tdir) == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tdir);
	if (system(cmd) != 0)
		rc = rc != 0 ? rc : 1;
	return rc;
}
