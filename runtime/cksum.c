/*
 * cksum.c: FNV-1a 64 over a byte stream, incrementally.
 */
#include "cksum.h"

uint64_t
cksum_update(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
