/*
 * Framing of the mpiv wire protocol (see runtime/proto/mpiv.proto).
 *
 *   u16 magic 0x4d56 | u16 type | u32 meta_len | u32 payload_len  (big-endian)
 *   meta_len bytes of protobuf, then payload_len raw bytes.
 *
 * Lengths are checked against FRAME_MAX_META / frame_max_payload() before
 * anything is allocated; unknown types are rejected by the one table that
 * maps a type to its protobuf descriptor.
 */
#ifndef MPIV_FRAME_H
#define MPIV_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "mpiv.pb-c.h"

#define FRAME_MAGIC	  0x4d56u
#define FRAME_VERSION	  1u
#define FRAME_HDR_LEN	  12u
#define FRAME_MAX_META	  (1u << 20)
/* Default payload cap of the frames that carry an MPI message's data
   (Send, Deliver, DSend, DData): what the header's 32-bit length holds,
   less 64 KiB (4 GiB - 64 KiB); MPIV_MAX_PAYLOAD (bytes) overrides it.
   Every other frame's payload (output, images, program pieces) stays
   under FRAME_OTHER_MAX_PAYLOAD as well. */
#define FRAME_DEFAULT_MAX_PAYLOAD 0xffff0000u
#define FRAME_OTHER_MAX_PAYLOAD	  (1u << 30)

struct frame_hdr {
	uint16_t type;
	uint32_t meta_len;
	uint32_t payload_len;
};

/* Writes the 12-byte header. */
void frame_put_header(uint8_t out[FRAME_HDR_LEN], uint16_t type,
    uint32_t meta_len, uint32_t payload_len);

/*
 * Parses and validates a header: magic, known type, meta_len and
 * payload_len within limits. Returns 0, or -1 with *err set to a static
 * human-readable reason.
 */
int frame_parse_header(const uint8_t in[FRAME_HDR_LEN], struct frame_hdr *h,
    const char **err);

/* Largest accepted payload (FRAME_DEFAULT_MAX_PAYLOAD or MPIV_MAX_PAYLOAD). */
uint32_t frame_max_payload(void);
/* The same for a frame of `type`: frame_max_payload() for the message
   data frames, at most FRAME_OTHER_MAX_PAYLOAD for the others. */
uint32_t frame_max_payload_of(uint16_t type);

/* Descriptor for a type, NULL if the type is unknown. */
const ProtobufCMessageDescriptor *frame_descriptor(uint16_t type);
const char *frame_type_name(uint16_t type);

/*
 * Unpacks meta bytes of a frame of `type`. Returns NULL (and *err) on an
 * unknown type or malformed protobuf. Free with frame_free_meta().
 */
ProtobufCMessage *frame_unpack_meta(uint16_t type, const uint8_t *buf,
    size_t len, const char **err);
void frame_free_meta(ProtobufCMessage *m);

/*
 * Encodes header + meta into a malloc'ed buffer (*outlen bytes); the
 * payload (payload_len bytes) is not included: the caller writes it right
 * after, typically with one writev. Returns NULL on ENOMEM or if `m` is
 * not the message `type` names (EINVAL).
 */
uint8_t *frame_encode(uint16_t type, const ProtobufCMessage *m,
    uint32_t payload_len, size_t *outlen);

/*
 * Encodes header + meta into `out` (capacity `cap`). Returns bytes written,
 * or 0 if it does not fit or the message does not match the type.
 */
size_t frame_encode_into(uint16_t type, const ProtobufCMessage *m,
    uint32_t payload_len, uint8_t *out, size_t cap);

/*
 * Blocking helpers for simple synchronous peers (tools, tests). fd may be
 * non-blocking: they poll. timeout_ms < 0 waits forever.
 *
 * frame_write: one gathered write of header+meta+payload. 0 or -1/errno.
 * frame_read:  reads one whole frame; *meta must be freed with
 *              frame_free_meta, *payload with free(). Returns 0, or -1
 *              with errno (ETIMEDOUT, EPROTO with *err, ECONNRESET on EOF).
 */
int frame_write(int fd, uint16_t type, const ProtobufCMessage *m,
    const void *payload, uint32_t payload_len, int timeout_ms);
int frame_read(int fd, struct frame_hdr *h, ProtobufCMessage **meta,
    uint8_t **payload, int timeout_ms, const char **err);

/*
 * The same on a connection whose session (runtime/seal.h) may be on:
 * through s when s is on, plaintext when s is NULL or off. frame_write_s
 * returns once every byte is written (nothing stays pending in s);
 * frame_read_s fails with EBADMSG (and *err) when a record does not open.
 */
struct seal;
int frame_write_s(struct seal *s, int fd, uint16_t type,
    const ProtobufCMessage *m, const void *payload, uint32_t payload_len,
    int timeout_ms);
int frame_read_s(struct seal *s, int fd, struct frame_hdr *h,
    ProtobufCMessage **meta, uint8_t **payload, int timeout_ms,
    const char **err);

#endif
