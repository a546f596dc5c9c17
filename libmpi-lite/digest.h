/*
 * digest.h: the 64-bit digest of a message that lets a Channel Memory
 * tell a re-executed send from the one it logged (libmpi-lite/digest.c).
 */
#ifndef MPIV_DIGEST_H
#define MPIV_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* Digest of n bytes at buf, starting from seed. Not cryptographic: it
   catches a re-execution that computed something else, not an attacker. */
uint64_t mpiv_digest(uint64_t seed, const void *buf, size_t n);

/* Digest of a send: its context, tag, byte size and payload. */
uint64_t mpiv_digest_send(uint32_t context, int32_t tag, const void *buf,
    size_t n);

#endif
