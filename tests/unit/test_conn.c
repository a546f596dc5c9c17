/*
 * test_conn.c: runtime/conn.c over socketpairs: frames in, frames out,
 * garbage and truncation closing with a reason, pause/resume, and a
 * cut-through relay through a pbuf filled while it is being written, and
 * big payload arenas faulted in ahead of need by pbuf_prefault's helper.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "log.h"
#include "net.h"

struct rec {
	int frames;
	uint16_t last_type;
	uint32_t last_plen;
	uint8_t *last_payload;
	int closed;
	char reason[256];
	/* relay */
	struct conn *out;
	struct pbuf *pb;
	size_t progress_calls;
};

static void
rec_on_frame(struct conn *c, const struct frame_hdr *h, ProtobufCMessage *m,
    uint8_t *payload)
{
	struct rec *r = conn_udata(c);

	r->frames++;
	r->last_type = h->type;
	r->last_plen = h->payload_len;
	if (r->pb != NULL) {
		/* relay mode: payload is the pbuf's, not ours */
		pbuf_unref(r->pb);
		r->pb = NULL;
		return;
	}
	free(r->last_payload);
	r->last_payload = payload;
}

static void
rec_on_close(struct conn *c, const char *reason)
{
	struct rec *r = conn_udata(c);

	r->closed++;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
}

static uint8_t *
relay_on_header(struct conn *c, const struct frame_hdr *h,
    ProtobufCMessage *m)
{
	struct rec *r = conn_udata(c);
	Mpiv__Deliver d = MPIV__DELIVER__INIT;

	r->pb = pbuf_new(h->payload_len);
	assert_non_null(r->pb);
	d.req_id = 7;
	assert_int_equal(conn_send_pbuf(r->out, MPIV__MSG_TYPE__MSG_DELIVER,
	    &d.base, r->pb), 0);
	return pbuf_data(r->pb);
}

static void
relay_on_progress(struct conn *c, size_t have)
{
	struct rec *r = conn_udata(c);

	r->progress_calls++;
	pbuf_advance(r->pb, (uint32_t)have);
}

static const struct conn_ops rec_ops = {
	.on_frame = rec_on_frame,
	.on_close = rec_on_close,
};

static const struct conn_ops relay_ops = {
	.on_frame = rec_on_frame,
	.on_header = relay_on_header,
	.on_progress = relay_on_progress,
	.on_close = rec_on_close,
};

/* Runs the loop until *flag >= want or 3 s pass. */
static void
spin(struct ev_loop *loop, int *flag, int want)
{
	ev_tstamp end = ev_time() + 3.0;

	while (*flag < want && ev_time() < end) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(1000);
	}
}

static void
test_frames_in_and_out(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct rec r = { 0 };
	int sv[2];
	Mpiv__Hello hello = MPIV__HELLO__INIT;
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err;
	struct conn *c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c = conn_new(loop, sv[0], &rec_ops, &r);
	assert_non_null(c);
	hello.job_id = "j1";
	assert_int_equal(frame_write(sv[1], MPIV__MSG_TYPE__MSG_HELLO,
	    &hello.base, "abc", 3, 1000), 0);
	assert_int_equal(frame_write(sv[1], MPIV__MSG_TYPE__MSG_HELLO,
	    &hello.base, NULL, 0, 1000), 0);
	spin(loop, &r.frames, 2);
	assert_int_equal(r.frames, 2);
	assert_int_equal(r.last_plen, 0);

	/* out: one frame with payload */
	assert_int_equal(conn_send(c, MPIV__MSG_TYPE__MSG_HELLO, &hello.base,
	    "xyz", 3), 0);
	ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(frame_read(sv[1], &h, &m, &p, 1000, &err), 0);
	assert_int_equal(h.type, MPIV__MSG_TYPE__MSG_HELLO);
	assert_int_equal(h.payload_len, 3);
	assert_memory_equal(p, "xyz", 3);
	assert_string_equal(((Mpiv__Hello *)m)->job_id, "j1");
	frame_free_meta(m);
	free(p);

	/* garbage closes with a reason */
	assert_int_equal(write(sv[1], "GARBAGE-GARBAGE", 15), 15);
	spin(loop, &r.closed, 1);
	assert_int_equal(r.closed, 1);
	assert_non_null(strstr(r.reason, "bad magic"));
	close(sv[1]);
	free(r.last_payload);
	ev_loop_destroy(loop);
}

static void
test_truncated_and_oversized(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct rec r = { 0 };
	int sv[2];
	uint8_t hdr[FRAME_HDR_LEN];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_non_null(conn_new(loop, sv[0], &rec_ops, &r));
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_HELLO, 0, 100);
	assert_int_equal(write(sv[1], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	assert_int_equal(write(sv[1], "12345", 5), 5);
	close(sv[1]);
	spin(loop, &r.closed, 1);
	assert_non_null(strstr(r.reason, "truncated"));

	memset(&r, 0, sizeof(r));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_non_null(conn_new(loop, sv[0], &rec_ops, &r));
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_HELLO, FRAME_MAX_META + 1, 0);
	assert_int_equal(write(sv[1], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	spin(loop, &r.closed, 1);
	assert_non_null(strstr(r.reason, "oversized"));

	memset(&r, 0, sizeof(r));
	assert_non_null(conn_new(loop, sv[1], &rec_ops, &r));
	frame_put_header(hdr, 999, 0, 0);
	spin(loop, &r.closed, 1);	/* peer sv[0] is closed: EOF */
	assert_int_equal(r.closed, 1);
	ev_loop_destroy(loop);
}

static void
test_pause_resume(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct rec r = { 0 };
	Mpiv__Bye bye = MPIV__BYE__INIT;
	struct conn *c;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c = conn_new(loop, sv[0], &rec_ops, &r);
	conn_pause_read(c, true);
	for (int i = 0; i < 5; i++)
		assert_int_equal(frame_write(sv[1], MPIV__MSG_TYPE__MSG_BYE,
		    &bye.base, NULL, 0, 1000), 0);
	for (int i = 0; i < 20; i++)
		ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(r.frames, 0);
	conn_pause_read(c, false);
	spin(loop, &r.frames, 5);
	assert_int_equal(r.frames, 5);
	conn_close(c, "test done", true);
	spin(loop, &r.closed, 1);
	assert_string_equal(r.reason, "test done");
	close(sv[1]);
	ev_loop_destroy(loop);
}

/* in -> relay conn (on_header gives a pbuf) -> out conn -> reader. */
static void
test_pbuf_relay(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct rec rin = { 0 }, rout = { 0 };
	Mpiv__Send s = MPIV__SEND__INIT;
	int a[2], b[2];
	size_t n = 3u << 20;	/* bigger than socket buffers */
	uint8_t *big = malloc(n), *got = malloc(n), hdr[FRAME_HDR_LEN];
	size_t sent = 0, rcvd = 0, mlen;
	uint8_t *enc;
	struct frame_hdr h;
	const char *err;

	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	net_set_nonblock(a[1]);
	net_set_nonblock(b[1]);
	rin.out = conn_new(loop, b[0], &rec_ops, &rout);
	assert_non_null(conn_new(loop, a[0], &relay_ops, &rin));
	enc = frame_encode(MPIV__MSG_TYPE__MSG_SEND, &s.base, (uint32_t)n, &mlen);
	assert_int_equal(write(a[1], enc, mlen), (ssize_t)mlen);
	free(enc);

	/* Pump: write the payload in pieces while reading the relayed frame. */
	size_t want = 0;
	ev_tstamp end = ev_time() + 10;
	uint8_t *rbuf = NULL;
	size_t rb = 0, rb_need = FRAME_HDR_LEN;
	rbuf = malloc(1 << 20);
	while ((sent < n || rcvd < n) && ev_time() < end) {
		if (sent < n) {
			ssize_t w = write(a[1], big + sent, n - sent > 65536 ?
			    65536 : n - sent);
			if (w > 0)
				sent += (size_t)w;
		}
		ev_run(loop, EVRUN_NOWAIT);
		/* read header+meta, then payload */
		if (want == 0) {
			ssize_t r = read(b[1], rbuf + rb, rb_need - rb);
			if (r > 0)
				rb += (size_t)r;
			if (rb == FRAME_HDR_LEN && rb_need == FRAME_HDR_LEN) {
				assert_int_equal(frame_parse_header(rbuf, &h, &err), 0);
				assert_int_equal(h.type, MPIV__MSG_TYPE__MSG_DELIVER);
				assert_int_equal(h.payload_len, n);
				rb_need = FRAME_HDR_LEN + h.meta_len;
			}
			if (rb_need > FRAME_HDR_LEN && rb == rb_need)
				want = 1;
		} else {
			ssize_t r = read(b[1], got + rcvd, n - rcvd);
			if (r > 0)
				rcvd += (size_t)r;
		}
	}
	assert_int_equal(sent, n);
	assert_int_equal(rcvd, n);
	assert_memory_equal(got, big, n);
	assert_true(rin.progress_calls > 1);
	assert_int_equal(rin.frames, 1);
	(void)hdr;
	free(rbuf);
	free(big);
	free(got);
	close(a[1]);
	close(b[1]);
	spin(loop, &rout.closed, 1);
	spin(loop, &rin.closed, 1);
	assert_int_equal(rout.closed, 1);
	assert_int_equal(rin.closed, 1);
	ev_loop_destroy(loop);
}

/* The relay source dies mid-payload: the writer closes, nothing hangs. */
static void
test_pbuf_fail(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct rec rout = { 0 };
	Mpiv__Deliver d = MPIV__DELIVER__INIT;
	struct pbuf *pb = pbuf_new(100);
	struct conn *c;
	int b[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	c = conn_new(loop, b[0], &rec_ops, &rout);
	assert_int_equal(conn_send_pbuf(c, MPIV__MSG_TYPE__MSG_DELIVER, &d.base,
	    pb), 0);
	pbuf_advance(pb, 10);
	ev_run(loop, EVRUN_NOWAIT);
	pbuf_fail(pb);
	spin(loop, &rout.closed, 1);
	assert_non_null(strstr(rout.reason, "relay source lost"));
	pbuf_unref(pb);
	close(b[1]);
	ev_loop_destroy(loop);
}

/* Waits (at most 10 s) until the helper holds n ready arenas. */
static bool
prefault_ready(int n)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };

	for (int i = 0; i < 2000; i++) {
		if (pbuf_prefault_ready() == n)
			return true;
		nanosleep(&tick, NULL);
	}
	return false;
}

/*
 * pbuf_prefault: the helper fills its ready list, big pbufs take arenas
 * from it once warm spares run out, the memory is usable, and the list
 * is refilled after. 100 live 1 MiB pbufs need 7 arenas; at most 4 can
 * be spares (64 MiB) left by earlier tests, so both ready ones are taken.
 */
#define PF_BUFS 100
static void
test_pbuf_prefault(void **state)
{
	struct pbuf *pb[PF_BUFS];
	unsigned long used0;
	uint32_t len = 1u << 20;

	(void)state;
	assert_int_equal(pbuf_prefault(2), 0);
	assert_true(prefault_ready(2));
	used0 = pbuf_prefault_used();
	for (int i = 0; i < PF_BUFS; i++) {
		pb[i] = pbuf_new(len);
		assert_non_null(pb[i]);
		memset(pbuf_data(pb[i]), i, len);
	}
	for (int i = 0; i < PF_BUFS; i++) {
		uint8_t *d = pbuf_data(pb[i]);
		assert_int_equal(d[0], (uint8_t)i);
		assert_int_equal(d[len - 1], (uint8_t)i);
	}
	assert_true(pbuf_prefault_used() - used0 >= 2);
	for (int i = 0; i < PF_BUFS; i++)
		pbuf_unref(pb[i]);
	assert_true(prefault_ready(2));
	/* A second call changes nothing: the list never grows past 2. */
	assert_int_equal(pbuf_prefault(5), 0);
	for (int i = 0; i < 40; i++) {
		struct timespec tick = { 0, 5 * 1000 * 1000 };

		assert_int_equal(pbuf_prefault_ready(), 2);
		nanosleep(&tick, NULL);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_in_and_out),
		cmocka_unit_test(test_truncated_and_oversized),
		cmocka_unit_test(test_pause_resume),
		cmocka_unit_test(test_pbuf_relay),
		cmocka_unit_test(test_pbuf_fail),
		cmocka_unit_test(test_pbuf_prefault),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_conn", LOG_LEVEL_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
