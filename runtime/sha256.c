/*
 * sha256.c: SHA-256 and HMAC-SHA256 of auth.h.
 *
 * SHA-256 follows FIPS 180-4 section 6.2 (message schedule of 64 words,
 * eight working variables, padding with 0x80, zeros and the 64-bit bit
 * length); HMAC follows RFC 2104 (keys longer than a block are hashed,
 * ipad 0x36, opad 0x5c).
 */
#include <string.h>

#include "auth.h"

/* ---------------- SHA-256 (FIPS 180-4) ---------------- */

/* First 32 bits of the fractional parts of the cube roots of the first
   64 primes (FIPS 180-4 4.2.2). */
static const uint32_t auth_k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
auth_ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t
auth_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* One 64-byte block into the state (FIPS 180-4 6.2.2). */
static void
auth_sha256_block(uint32_t h[8], const uint8_t *blk)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2, s0, s1;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = auth_get32(blk + 4 * i);
	for (i = 16; i < 64; i++) {
		s0 = auth_ror(w[i - 15], 7) ^ auth_ror(w[i - 15], 18) ^
		    (w[i - 15] >> 3);
		s1 = auth_ror(w[i - 2], 17) ^ auth_ror(w[i - 2], 19) ^
		    (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		s1 = auth_ror(e, 6) ^ auth_ror(e, 11) ^ auth_ror(e, 25);
		t1 = hh + s1 + ((e & f) ^ (~e & g)) + auth_k256[i] + w[i];
		s0 = auth_ror(a, 2) ^ auth_ror(a, 13) ^ auth_ror(a, 22);
		t2 = s0 + ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void
auth_sha256_init(struct auth_sha256 *s)
{
	/* First 32 bits of the fractional parts of the square roots of the
	   first 8 primes (FIPS 180-4 5.3.3). */
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->nbytes = 0;
	s->nbuf = 0;
}

void
auth_sha256_update(struct auth_sha256 *s, const void *p, size_t n)
{
	const uint8_t *in = p;
	size_t take;

	s->nbytes += n;
	if (s->nbuf > 0) {
		take = sizeof(s->buf) - s->nbuf;
		if (take > n)
			take = n;
		memcpy(s->buf + s->nbuf, in, take);
		s->nbuf += take;
		in += take;
		n -= take;
		if (s->nbuf < sizeof(s->buf))
			return;
		auth_sha256_block(s->h, s->buf);
		s->nbuf = 0;
	}
	for (; n >= 64; in += 64, n -= 64)
		auth_sha256_block(s->h, in);
	memcpy(s->buf, in, n);
	s->nbuf = n;
}

/* Pads (0x80, zeros, 64-bit big-endian bit length) and writes the digest. */
void
auth_sha256_final(struct auth_sha256 *s, uint8_t out[AUTH_HASH_LEN])
{
	uint64_t bits = s->nbytes * 8;
	int i;

	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > 56) {
		memset(s->buf + s->nbuf, 0, sizeof(s->buf) - s->nbuf);
		auth_sha256_block(s->h, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, 56 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	auth_sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++)
		auth_put32(out + 4 * i, s->h[i]);
	auth_wipe(s, sizeof(*s));
}

void
auth_sha256(const void *p, size_t n, uint8_t out[AUTH_HASH_LEN])
{
	struct auth_sha256 s;

	auth_sha256_init(&s);
	auth_sha256_update(&s, p, n);
	auth_sha256_final(&s, out);
}

/* ---------------- HMAC-SHA256 (RFC 2104) ---------------- */

void
auth_hmac_init(struct auth_hmac *m, const void *key, size_t keylen)
{
	uint8_t k[AUTH_BLOCK_LEN], pad[AUTH_BLOCK_LEN];
	size_t i;

	memset(k, 0, sizeof(k));
	if (keylen > AUTH_BLOCK_LEN)
		auth_sha256(key, keylen, k);
	else if (keylen > 0)
		memcpy(k, key, keylen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	auth_sha256_init(&m->inner);
	auth_sha256_update(&m->inner, pad, sizeof(pad));
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	auth_sha256_init(&m->outer);
	auth_sha256_update(&m->outer, pad, sizeof(pad));
	auth_wipe(k, sizeof(k));
	auth_wipe(pad, sizeof(pad));
}

void
auth_hmac_update(struct auth_hmac *m, const void *p, size_t n)
{
	auth_sha256_update(&m->inner, p, n);
}

void
auth_hmac_final(struct auth_hmac *m, uint8_t out[AUTH_HASH_LEN])
{
	uint8_t ih[AUTH_HASH_LEN];

	auth_sha256_final(&m->inner, ih);
	auth_sha256_update(&m->outer, ih, sizeof(ih));
	auth_sha256_final(&m->outer, out);
	auth_wipe(ih, sizeof(ih));
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

