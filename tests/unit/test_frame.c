/*
 * test_frame.c: runtime/frame.c edge cases: header round trip, bad magic,
 * unknown type, length caps (including MPIV_MAX_PAYLOAD), malformed and
 * empty meta, encode mismatches, and frame_write/frame_read over a
 * socketpair including truncation and timeouts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"

static void
test_header_round_trip(void **state)
{
	uint8_t b[FRAME_HDR_LEN];
	struct frame_hdr h;
	const char *err = NULL;

	frame_put_header(b, MPIV__MSG_TYPE__MSG_SEND, 17, 1234567);
	assert_int_equal(b[0], 0x4d);
	assert_int_equal(b[1], 0x56);
	assert_int_equal(frame_parse_header(b, &h, &err), 0);
	assert_int_equal(h.type, MPIV__MSG_TYPE__MSG_SEND);
	assert_int_equal(h.meta_len, 17);
	assert_int_equal(h.payload_len, 1234567);
}

static void
test_header_rejects(void **state)
{
	uint8_t b[FRAME_HDR_LEN];
	struct frame_hdr h;
	const char *err = NULL;

	frame_put_header(b, MPIV__MSG_TYPE__MSG_SEND, 0, 0);
	b[0] ^= 1;
	assert_int_equal(frame_parse_header(b, &h, &err), -1);
	assert_non_null(strstr(err, "magic"));

	frame_put_header(b, 0, 0, 0);
	assert_int_equal(frame_parse_header(b, &h, &err), -1);
	assert_non_null(strstr(err, "unknown"));
	frame_put_header(b, 9, 0, 0);
	assert_int_equal(frame_parse_header(b, &h, &err), -1);
	frame_put_header(b, 0xffff, 0, 0);
	assert_int_equal(frame_parse_header(b, &h, &err), -1);

	frame_put_header(b, MPIV__MSG_TYPE__MSG_HELLO, FRAME_MAX_META, 0);
	assert_int_equal(frame_parse_header(b, &h, &err), 0);
	frame_put_header(b, MPIV__MSG_TYPE__MSG_HELLO, FRAME_MAX_META + 1, 0);
	assert_int_equal(frame_parse_header(b, &h, &err), -1);
	assert_non_null(strstr(err, "oversized"));

	frame_put_header(b, MPIV__MSG_TYPE__MSG_SEND, 0, frame_max_payload());
	assert_int_equal(frame_parse_header(b, &h, &err), 0);
	frame_put_header(b, MPIV__MSG_TYPE__MSG_SEND, 0, 0xffffffffu);
	assert_int_equal(frame_parse_header(b, &h, &err), -1);
	assert_non_null(strstr(err, "payload"));
	/* only the message data frames may pass FRAME_OTHER_MAX_PAYLOAD */
	frame_put_header(b, MPIV__MSG_TYPE__MSG_OUTPUT, 0,
	    frame_max_payload_of(MPIV__MSG_TYPE__MSG_OUTPUT) + 1);
	assert_int_equal(frame_parse_header(b, &h, &err), -1);
	assert_true(frame_max_payload_of(MPIV__MSG_TYPE__MSG_OUTPUT) <=
	    FRAME_OTHER_MAX_PAYLOAD);
	assert_int_equal(frame_max_payload_of(MPIV__MSG_TYPE__MSG_DSEND),
	    frame_max_payload());
}

static void
test_every_type_known(void **state)
{
	const uint16_t types[] = { 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17,
	    30, 31, 32, 33, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60 };
	const char *err;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ProtobufCMessage *m;
		assert_non_null(frame_descriptor(types[i]));
		assert_string_not_equal(frame_type_name(types[i]), "unknown");
		/* empty meta is a valid all-defaults message */
		m = frame_unpack_meta(types[i], (const uint8_t *)"", 0, &err);
		assert_non_null(m);
		frame_free_meta(m);
	}
	assert_null(frame_descriptor(6));
	assert_string_equal(frame_type_name(6), "unknown");
}

static void
test_meta_malformed(void **state)
{
	const char *err = NULL;
	/* field 3 (job_id) length 200 with 1 byte present */
	const uint8_t bad[] = { 0x1a, 0xc8, 0x01, 'x' };

	assert_null(frame_unpack_meta(MPIV__MSG_TYPE__MSG_HELLO, bad,
	    sizeof(bad), &err));
	assert_non_null(err);
	err = NULL;
	assert_null(frame_unpack_meta(77, bad, 0, &err));
	assert_non_null(strstr(err, "unknown"));
}

static void
test_encode(void **state)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__Bye bye = MPIV__BYE__INIT;
	uint8_t small[8], buf[256];
	struct frame_hdr fh;
	const char *err;
	size_t n, len;
	uint8_t *enc;
	ProtobufCMessage *m;

	h.job_id = "job";
	h.rank = 3;
	/* type and message disagree */
	assert_int_equal(frame_encode_into(MPIV__MSG_TYPE__MSG_BYE, &h.base, 0,
	    buf, sizeof(buf)), 0);
	errno = 0;
	assert_null(frame_encode(MPIV__MSG_TYPE__MSG_BYE, &h.base, 0, &len));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(frame_encode_into(MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    0, small, sizeof(small)), 0);
	n = frame_encode_into(MPIV__MSG_TYPE__MSG_HELLO, &h.base, 5, buf,
	    sizeof(buf));
	assert_true(n > FRAME_HDR_LEN);
	assert_int_equal(frame_parse_header(buf, &fh, &err), 0);
	assert_int_equal(fh.meta_len, n - FRAME_HDR_LEN);
	assert_int_equal(fh.payload_len, 5);
	m = frame_unpack_meta(fh.type, buf + FRAME_HDR_LEN, fh.meta_len, &err);
	assert_non_null(m);
	assert_string_equal(((Mpiv__Hello *)m)->job_id, "job");
	assert_int_equal(((Mpiv__Hello *)m)->rank, 3);
	frame_free_meta(m);
	enc = frame_encode(MPIV__MSG_TYPE__MSG_BYE, &bye.base, 0, &len);
	assert_non_null(enc);
	assert_int_equal(len, FRAME_HDR_LEN);	/* all defaults: empty meta */
	free(enc);
}

static void
test_write_read(void **state)
{
	Mpiv__Output o = MPIV__OUTPUT__INIT;
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p, hdr[FRAME_HDR_LEN];
	const char *err;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	o.job_id = "j";
	o.rank = 1;
	o.stream = 2;
	assert_int_equal(frame_write(sv[0], MPIV__MSG_TYPE__MSG_OUTPUT, &o.base,
	    "out\n", 4, 1000), 0);
	assert_int_equal(frame_read(sv[1], &h, &m, &p, 1000, &err), 0);
	assert_int_equal(h.type, MPIV__MSG_TYPE__MSG_OUTPUT);
	assert_int_equal(((Mpiv__Output *)m)->stream, 2);
	assert_memory_equal(p, "out\n", 4);
	frame_free_meta(m);
	free(p);

	/* nothing to read: timeout (honoured on non-blocking fds only) */
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(frame_read(sv[1], &h, &m, &p, 50, &err), -1);
	assert_int_equal(errno, ETIMEDOUT);

	/* truncated payload then EOF */
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_OUTPUT, 0, 10);
	assert_int_equal(write(sv[0], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	assert_int_equal(write(sv[0], "abc", 3), 3);
	close(sv[0]);
	assert_int_equal(frame_read(sv[1], &h, &m, &p, 1000, &err), -1);
	assert_int_equal(errno, ECONNRESET);
	assert_null(m);
	assert_null(p);
	close(sv[1]);

	/* garbage header: EPROTO with a reason */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[0], "xxxxxxxxxxxxxxxx", 16), 16);
	assert_int_equal(frame_read(sv[1], &h, &m, &p, 1000, &err), -1);
	assert_int_equal(errno, EPROTO);
	assert_non_null(err);
	close(sv[0]);
	close(sv[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_round_trip),
		cmocka_unit_test(test_header_rejects),
		cmocka_unit_test(test_every_type_known),
		cmocka_unit_test(test_meta_malformed),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_write_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
