/*
 * digest.c: a fast 64-bit digest of a message (digest.h).
 *
 * Every logged send carries one, so that a re-executing rank's sends can
 * be compared with what its failed incarnation sent (Send.check). It runs
 * over every payload a rank sends, so it must cost little next to the
 * copy into the socket: four independent lanes take 32 bytes per round,
 * each word folded in by xor, an odd multiply and a rotation. Each step
 * is a bijection of the word for a fixed lane and of the lane for a fixed
 * word, so two inputs that differ in one word always leave different
 * lanes; the lanes, the tail and the length are then mixed into one value
 * whose bits all depend on every lane. Not a cryptographic hash: it finds
 * a program that computed something else, not a forger.
 */
#include <string.h>

#include "digest.h"

#define DG_K1	0x9e3779b97f4a7c15ull	/* odd multipliers with */
#define DG_K2	0xd6e8feb86659fd93ull	/* well spread bits */
#define DG_K3	0xa0761d6478bd642full

static inline uint64_t
dg_rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
dg_word(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));	/* unaligned, host order */
	return w;
}

static inline uint64_t
dg_step(uint64_t lane, uint64_t w)
{
	return dg_rotl((lane ^ w) * DG_K1, 29);
}

/* Spreads every bit of x over the whole word. */
static inline uint64_t
dg_final(uint64_t x)
{
	x ^= x >> 32;
	x *= DG_K2;
	x ^= x >> 29;
	x *= DG_K3;
	x ^= x >> 32;
	return x;
}

uint64_t
mpiv_digest(uint64_t seed, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint64_t a0 = seed ^ DG_K1, a1 = seed ^ DG_K2, a2 = seed ^ DG_K3;
	uint64_t a3 = ~seed, h, w;
	size_t left = n;

	for (; left >= 32; p += 32, left -= 32) {
		a0 = dg_step(a0, dg_word(p));
		a1 = dg_step(a1, dg_word(p + 8));
		a2 = dg_step(a2, dg_word(p + 16));
		a3 = dg_step(a3, dg_word(p + 24));
	}
	for (; left >= 8; p += 8, left -= 8)
		a0 = dg_step(a0, dg_word(p));
	if (left > 0) {
		w = 0;
		memcpy(&w, p, left);
		a1 = dg_step(a1, w ^ ((uint64_t)left << 56));
	}
	h = (uint64_t)n * DG_K3;
	h = (h ^ dg_final(a0)) * DG_K1;
	h = (h ^ dg_final(a1)) * DG_K1;
	h = (h ^ dg_final(a2)) * DG_K1;
	h = (h ^ dg_final(a3)) * DG_K1;
	return dg_final(h);
}

uint64_t
mpiv_digest_send(uint32_t context, int32_t tag, const void *buf, size_t n)
{
	uint64_t seed = dg_final(((uint64_t)context << 32 | (uint32_t)tag) *
	    DG_K2 ^ (uint64_t)n);

	return mpiv_digest(seed, buf, n);
}
