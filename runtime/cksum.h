/*
 * cksum: FNV-1a 64, the checksum of checkpoint image streams. Not a
 * cryptographic hash: it catches truncation and corruption, not forgery.
 */
#ifndef MPIV_CKSUM_H
#define MPIV_CKSUM_H

#include <stddef.h>
#include <stdint.h>

#define CKSUM_INIT 0xcbf29ce484222325ull

/* Folds len bytes into a running checksum (start from CKSUM_INIT). */
uint64_t cksum_update(uint64_t h, const void *buf, size_t len);

#endif
