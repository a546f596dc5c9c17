/*
 * fuzz_frame.c: libFuzzer target for the frame decoder: the header check
 * on arbitrary bytes, then meta unpacking of the rest as the type the
 * header names and as every known type, re-encoding whatever decodes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

static const uint16_t fuzz_types[] = { 1, 2, 3, 4, 10, 11, 12, 13, 14, 15,
	16, 17, 30, 31, 32, 33, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
	76, 220, 221, 222 };

static void
fuzz_unpack(uint16_t type, const uint8_t *p, size_t n)
{
	const char *err = NULL;
	ProtobufCMessage *m = frame_unpack_meta(type, p, n, &err);
	uint8_t *enc;
	size_t len;

	if (m == NULL) {
		if (err == NULL)
			abort();	/* every failure must say why */
		return;
	}
	enc = frame_encode(type, m, 0, &len);
	if (enc != NULL) {
		struct frame_hdr h;
		if (frame_parse_header(enc, &h, &err) != 0 ||
		    h.type != type || h.meta_len != len - FRAME_HDR_LEN)
			abort();
		free(enc);
	}
	frame_free_meta(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_hdr h;
	const char *err = NULL;

	if (size < FRAME_HDR_LEN)
		return 0;
	if (frame_parse_header(data, &h, &err) == 0) {
		if (h.meta_len > FRAME_MAX_META ||
		    h.payload_len > frame_max_payload() ||
		    frame_descriptor(h.type) == NULL)
			abort();	/* accepted a header it must refuse */
		size_t n = size - FRAME_HDR_LEN;
		if (n > h.meta_len)
			n = h.meta_len;
		fuzz_unpack(h.type, data + FRAME_HDR_LEN, n);
	} else if (err == NULL) {
		abort();
	}
	/* the same bytes as the meta of every type */
	fuzz_unpack(fuzz_types[data[0] % (sizeof(fuzz_types) /
	    sizeof(fuzz_types[0]))], data + 1, size - 1);
	return 0;
}
