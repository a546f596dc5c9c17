/*
 * auth.c: the proofs of the connection handshake and the small helpers
 * of auth.h (see docs/CONTRACTS.md, "Authentication"), the hashes and
 * randomness on libsodium; the keys and their files in auth_keys.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "frame.h"

/* ---------------- small helpers ---------------- */

bool
auth_equal(const void *a, const void *b, size_t n)
{
	return sodium_memcmp(a, b, n) == 0;
}

void
auth_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}

int
auth_random(void *buf, size_t n)
{
	if (sodium_init() < 0) {
		errno = ENOSYS;
		return -1;
	}
	randombytes_buf(buf, n);
	return 0;
}

/* ---------------- hashes (libsodium) ---------------- */

void
auth_sha256_init(struct auth_sha256 *s)
{
	crypto_hash_sha256_init(&s->st);
}

void
auth_sha256_update(struct auth_sha256 *s, const void *p, size_t n)
{
	crypto_hash_sha256_update(&s->st, p, n);
}

void
auth_sha256_final(struct auth_sha256 *s, uint8_t out[AUTH_HASH_LEN])
{
	crypto_hash_sha256_final(&s->st, out);
}

void
auth_sha256(const void *p, size_t n, uint8_t out[AUTH_HASH_LEN])
{
	crypto_hash_sha256(out, p, n);
}

/* Keys longer than a block are hashed first (RFC 2104), in libsodium. */
void
auth_hmac_init(struct auth_hmac *m, const void *key, size_t keylen)
{
	crypto_auth_hmacsha256_init(&m->st, key, keylen);
}

void
auth_hmac_update(struct auth_hmac *m, const void *p, size_t n)
{
	crypto_auth_hmacsha256_update(&m->st, p, n);
}

void
auth_hmac_final(struct auth_hmac *m, uint8_t out[AUTH_HASH_LEN])
{
	crypto_auth_hmacsha256_final(&m->st, out);
	sodium_memzero(m, sizeof(*m));
}

void
auth_hmac_sha256(const void *key, size_t keylen, const void *p, size_t n,
    uint8_t out[AUTH_HASH_LEN])
{
	struct auth_hmac m;

	auth_hmac_init(&m, key, keylen);
	auth_hmac_update(&m, p, n);
	auth_hmac_final(&m, out);
}

void
auth_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int
auth_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
auth_hash_hex_ok(const char *hex)
{
	size_t i;

	for (i = 0; hex[i] != '\0'; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') ||
		    (hex[i] >= 'a' && hex[i] <= 'f')))
			return false;
	return i == 2 * AUTH_HASH_LEN;
}

int
auth_unhex(const char *hex, uint8_t *out, size_t n)
{
	int hi, lo;

	if (strlen(hex) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if ((hi = auth_nibble(hex[2 * i])) < 0 ||
		    (lo = auth_nibble(hex[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* ---------------- proofs ---------------- */

const struct auth_offer auth_no_offer = { NULL, 0, 0 };

static void
auth_lp(struct auth_hmac *m, const void *p, size_t n)
{
	uint8_t len[4];

	auth_put32(len, (uint32_t)n);
	auth_hmac_update(m, len, sizeof(len));
	if (n > 0)
		auth_hmac_update(m, p, n);
}

static void
auth_lps(struct auth_hmac *m, const char *s)
{
	auth_lp(m, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

static void
auth_u32(struct auth_hmac *m, uint32_t v)
{
	uint8_t b[4];

	auth_put32(b, v);
	auth_hmac_update(m, b, sizeof(b));
}

void
auth_hello_proof(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const struct auth_offer *offer,
    const Mpiv__Hello *h, uint8_t out[AUTH_HASH_LEN])
{
	struct auth_hmac m;

	auth_hmac_init(&m, key->k, key->len);
	auth_lps(&m, "mpiv-auth-v2 hello");
	auth_lp(&m, nonce_s, AUTH_NONCE_LEN);
	auth_lp(&m, offer->kx_pub, offer->kx_pub_len);
	auth_u32(&m, offer->ciphers);
	auth_lp(&m, h->kx_pub.data, h->kx_pub.len);
	auth_u32(&m, h->cipher);
	auth_lp(&m, h->auth_nonce.data, h->auth_nonce.len);
	auth_u32(&m, (uint32_t)h->role);
	auth_lps(&m, h->job_id);
	auth_u32(&m, (uint32_t)h->rank);
	auth_u32(&m, h->incarnation);
	auth_lps(&m, h->name);
	auth_hmac_final(&m, out);
}

void
auth_reply_proof(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN],
    const uint8_t nonce_c[AUTH_NONCE_LEN],
    const uint8_t client_proof[AUTH_HASH_LEN], uint8_t out[AUTH_HASH_LEN])
{
	struct auth_hmac m;

	auth_hmac_init(&m, key->k, key->len);
	auth_lps(&m, "mpiv-auth-v2 reply");
	auth_lp(&m, nonce_s, AUTH_NONCE_LEN);
	auth_lp(&m, nonce_c, AUTH_NONCE_LEN);
	auth_lp(&m, client_proof, AUTH_HASH_LEN);
	auth_hmac_final(&m, out);
}

const char *
auth_check_hello(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const struct auth_offer *offer,
    const Mpiv__Hello *h, uint8_t reply_proof[AUTH_HASH_LEN])
{
	uint8_t want[AUTH_HASH_LEN];
	bool ok;

	if (h->auth_proof.len == 0)
		return AUTH_ERR_REQUIRED;
	if (h->auth_proof.len != AUTH_HASH_LEN ||
	    h->auth_nonce.len != AUTH_NONCE_LEN)
		return AUTH_ERR_FAILED;
	auth_hello_proof(key, nonce_s, offer, h, want);
	ok = auth_equal(want, h->auth_proof.data, AUTH_HASH_LEN);
	auth_wipe(want, sizeof(want));
	if (!ok)
		return AUTH_ERR_FAILED;
	auth_reply_proof(key, nonce_s, h->auth_nonce.data, h->auth_proof.data,
	    reply_proof);
	return NULL;
}

static int
auth_key_policy(const struct auth_keys *k, const Mpiv__Hello *h,
    bool node_ok, struct auth_key *key, const char **why)
{
	if (h->role == MPIV__ROLE__ROLE_NODE) {
		if (!node_ok) {
			*why = "node agents cannot connect here";
			return -1;
		}
		*key = k->node;
		return 0;
	}
	if (!k->cluster) {
		*why = "this server holds no cluster secret";
		return -1;
	}
	*key = k->secret;
	return 0;
}

int
auth_key_service(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why)
{
	return auth_key_policy(arg, h, false, key, why);
}

int
auth_key_service_nodes(void *arg, const Mpiv__Hello *h,
    struct auth_key *key, const char **why)
{
	return auth_key_policy(arg, h, true, key, why);
}
