/*
 * test_conn_preauth.c: runtime/conn.c before authentication.
 * A header announcing a 1 MiB Hello closes the connection as
 * soon as the header is read, before any meta byte is sent or buffered;
 * a Hello of exactly CONN_PREAUTH_MAX_FRAME bytes passes the size check
 * and one byte more does not; after the handshake a frame much bigger
 * than the cap (pipelined right behind the Hello) arrives whole; and the
 * gate (conn_gate) refuses accepted sockets over its caps per address,
 * unauthenticated in total and in all, counting a conn as authenticated
 * once its Hello came and forgetting it once it closed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "conn.h"
#include "frame.h"
#include "log.h"
#include "net.h"
#include "seal.h"

#if defined(__SANITIZE_ADDRESS__)
#define PREAUTH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PREAUTH_ASAN 1
#endif
#endif

struct side {
	int frames;
	uint16_t last_type;
	uint32_t last_plen;
	int closed;
	char reason[256];
	struct conn *c;
};

static void
side_on_frame(struct conn *c, const struct frame_hdr *h, ProtobufCMessage *m,
    uint8_t *payload)
{
	struct side *s = conn_udata(c);

	free(payload);
	s->frames++;
	s->last_type = h->type;
	s->last_plen = h->payload_len;
	if (h->type == MPIV__MSG_TYPE__MSG_HELLO) {
		/* Plays a daemon: answers the Hello it was handed. */
		Mpiv__HelloReply hr = MPIV__HELLO_REPLY__INIT;
		hr.ok = true;
		hr.version = FRAME_VERSION;
		(void)conn_send(c, MPIV__MSG_TYPE__MSG_HELLO_REPLY, &hr.base,
		    NULL, 0);
	}
}

static void
side_on_close(struct conn *c, const char *reason)
{
	struct side *s = conn_udata(c);

	s->closed++;
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	s->c = NULL;
}

static const struct conn_ops side_ops = {
	.on_frame = side_on_frame,
	.on_close = side_on_close,
};

/* Runs the loop until *flag >= want or 3 s pass. */
static void
spin(struct ev_loop *loop, int *flag, int want)
{
	ev_tstamp end = ev_time() + 3.0;

	while (*flag < want && ev_time() < end) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(500);
	}
}

static void
spin_for(struct ev_loop *loop, int ms)
{
	for (int i = 0; i < ms; i++) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(1000);
	}
}

static struct auth_keys srv_keys;

static void
keys_init(void)
{
	srv_keys.enabled = true;
	srv_keys.cluster = true;
	auth_key_set(&srv_keys.secret, "0123456789abcdef0123456789abcdef",
	    32);
	auth_node_key(&srv_keys.secret, srv_keys.node.k);
	srv_keys.node.len = AUTH_HASH_LEN;
}

/* Bytes malloc holds (heap and mmapped chunks); 0 under ASan. */
static size_t
heap_bytes(void)
{
#ifdef PREAUTH_ASAN
	return 0;
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/* A Hello whose packed meta is exactly want bytes (name padded). */
static uint8_t *
hello_of_size(size_t want)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	char *name = calloc(1, want + 1);
	uint8_t *buf;
	size_t n;

	assert_non_null(name);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	h.rank = -1;
	h.name = name;
	for (size_t len = 0; len <= want; len++) {
		memset(name, 'n', len);
		name[len] = '\0';
		if ((n = protobuf_c_message_get_packed_size(&h.base)) != want)
			continue;
		buf = malloc(FRAME_HDR_LEN + n);
		assert_non_null(buf);
		frame_put_header(buf, MPIV__MSG_TYPE__MSG_HELLO, (uint32_t)n, 0);
		(void)protobuf_c_message_pack(&h.base, buf + FRAME_HDR_LEN);
		free(name);
		return buf;
	}
	fail_msg("no Hello of %zu bytes", want);
	return NULL;
}

/*
 * A header announcing a 1 MiB Hello and not one meta byte after it: the
 * server conn closes at once (before, it waited for the meta to buffer
 * it), and malloc holds nothing like 1 MiB more.
 */
static void
test_big_header_closes(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct auth_server as = { .enabled = true,
	    .key = auth_key_service_nodes, .arg = &srv_keys };
	struct side srv = { 0 };
	uint8_t hdr[FRAME_HDR_LEN], buf[256];
	size_t before, peak = 0, now;
	int sv[2];
	ssize_t n;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	srv.c = conn_new(loop, sv[0], &side_ops, &srv);
	assert_non_null(srv.c);
	conn_auth_server(srv.c, &as);
	spin_for(loop, 5);
	before = heap_bytes();
	frame_put_header(hdr, MPIV__MSG_TYPE__MSG_HELLO, 1u << 20, 0);
	assert_int_equal(write(sv[1], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	for (int i = 0; i < 3000 && srv.closed == 0; i++) {
		ev_run(loop, EVRUN_NOWAIT);
		if ((now = heap_bytes()) > peak)
			peak = now;
		usleep(1000);
	}
	assert_int_equal(srv.closed, 1);
	assert_non_null(strstr(srv.reason, "too big before authentication"));
	assert_int_equal(srv.frames, 0);
	/* well under the 1 MiB announced (0 - 0 under ASan) */
	assert_true(peak < before + 64 * 1024);
	/* The peer sees the Challenge, then the end. */
	n = read(sv[1], buf, sizeof(buf));
	assert_true(n > 0);
	while ((n = read(sv[1], buf, sizeof(buf))) > 0)
		;
	assert_int_equal(n, 0);
	close(sv[1]);
	ev_loop_destroy(loop);
}

/*
 * The cap's edge: a Hello of exactly CONN_PREAUTH_MAX_FRAME bytes gets
 * to the proof check (refused for having none), one byte more is too
 * big. No secret: a Hello of the cap's size passes and is answered.
 */
static void
test_cap_edge(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct auth_server as = { .enabled = true,
	    .key = auth_key_service_nodes, .arg = &srv_keys };
	struct auth_server open_as = { .enabled = false };
	const size_t sizes[] = { CONN_PREAUTH_MAX_FRAME,
	    CONN_PREAUTH_MAX_FRAME + 1, CONN_PREAUTH_MAX_FRAME };
	const struct auth_server *ases[] = { &as, &as, &open_as };

	/* the raw Hellos below are plaintext: the server offers no cipher */
	seal_set_plaintext(true);
	for (int i = 0; i < 3; i++) {
		struct side srv = { 0 };
		uint8_t *f = hello_of_size(sizes[i]);
		size_t len = FRAME_HDR_LEN + sizes[i];
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		srv.c = conn_new(loop, sv[0], &side_ops, &srv);
		assert_non_null(srv.c);
		conn_auth_server(srv.c, ases[i]);
		assert_int_equal(write(sv[1], f, len), (ssize_t)len);
		free(f);
		if (i == 2) {
			spin(loop, &srv.frames, 1);
			assert_int_equal(srv.frames, 1);
			assert_int_equal(srv.closed, 0);
			conn_close(srv.c, "test over", false);
		}
		spin(loop, &srv.closed, 1);
		assert_int_equal(srv.closed, 1);
		if (i == 0)
			assert_string_equal(srv.reason, AUTH_ERR_REQUIRED);
		if (i == 1)
			assert_non_null(strstr(srv.reason, "too big"));
		close(sv[1]);
	}
	seal_set_plaintext(false);
	ev_loop_destroy(loop);
}

/*
 * After the handshake the normal limits apply: a client conn (with the
 * secret) sends its Hello and, pipelined right behind it in the same
 * write, a frame with a 200 KiB payload; the server, which read the
 * Hello through its small pre-auth buffer, gets both whole.
 */
static void
test_big_frame_after_auth(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct auth_server as = { .enabled = true,
	    .key = auth_key_service_nodes, .arg = &srv_keys };
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__Deliver d = MPIV__DELIVER__INIT;
	struct side srv = { 0 }, cli = { 0 };
	uint32_t plen = 200 * 1024;
	uint8_t *p = calloc(1, plen);
	int sv[2];

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	srv.c = conn_new(loop, sv[0], &side_ops, &srv);
	cli.c = conn_new(loop, sv[1], &side_ops, &cli);
	assert_non_null(srv.c);
	assert_non_null(cli.c);
	conn_auth_server(srv.c, &as);
	conn_auth_client(cli.c, &srv_keys.secret);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	h.rank = -1;
	h.name = "test";
	assert_int_equal(conn_send(cli.c, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0), 0);
	d.req_id = 9;
	assert_int_equal(conn_send(cli.c, MPIV__MSG_TYPE__MSG_DELIVER, &d.base,
	    p, plen), 0);
	free(p);
	spin(loop, &srv.frames, 2);
	spin(loop, &cli.frames, 1);
	assert_int_equal(srv.closed, 0);
	assert_int_equal(srv.frames, 2);
	assert_int_equal(srv.last_type, MPIV__MSG_TYPE__MSG_DELIVER);
	assert_int_equal(srv.last_plen, plen);
	assert_int_equal(cli.frames, 1);	/* the HelloReply, proven */
	assert_int_equal(cli.closed, 0);
	conn_close(srv.c, "test over", false);
	conn_close(cli.c, "test over", false);
	spin(loop, &cli.closed, 1);
	spin(loop, &srv.closed, 1);
	ev_loop_destroy(loop);
}

/* ---------------- the gate ---------------- */

struct gated {
	struct side s;
	int cfd;	/* our dialled end */
};

/* A TCP connection to port from source address src (127.x.y.z). */
static int
dial_from(const char *src, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, src, &a.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	a.sin_port = htons((uint16_t)port);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &a.sin_addr), 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/*
 * Dials from src, accepts, and lets the gate decide: 0 with g->s.c set
 * (the server conn, handshake started), or -1 when refused (and the
 * dialled end then reads EOF without a byte).
 */
static int
gate_one(struct ev_loop *loop, struct conn_gate *gate, int lfd, int port,
    const struct auth_server *as, const char *src, struct gated *g)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	char b;
	int fd;

	memset(g, 0, sizeof(*g));
	g->cfd = dial_from(src, port);
	assert_int_equal(poll(&pfd, 1, 2000), 1);
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	if (conn_gate_admit(gate, fd) < 0) {
		pfd.fd = g->cfd;
		assert_int_equal(poll(&pfd, 1, 2000), 1);
		assert_int_equal(read(g->cfd, &b, 1), 0);
		close(g->cfd);
		g->cfd = -1;
		return -1;
	}
	g->s.c = conn_new(loop, fd, &side_ops, &g->s);
	assert_non_null(g->s.c);
	conn_auth_server(g->s.c, as);
	return 0;
}

static void
expect_counts(struct conn_gate *gate, long conns, long unauth,
    unsigned long refused)
{
	long c, u;
	unsigned long r;

	conn_gate_counts(gate, &c, &u, &r);
	assert_int_equal(c, conns);
	assert_int_equal(u, unauth);
	assert_int_equal(r, refused);
}

static void
test_gate(void **state)
{
	struct ev_loop *loop = ev_loop_new(0);
	struct conn_limits lim = { .max_conns = 4, .max_unauth = 3,
	    .max_unauth_per_host = 2 };
	struct conn_gate *gate = conn_gate_new("test", &lim);
	/* No secret: a conn counts as authenticated once its Hello came. */
	struct auth_server as = { .enabled = false, .gate = gate };
	Mpiv__Hello h = MPIV__HELLO__INIT;
	struct gated a, b, c, d, e;
	char bound[64], *colon;
	int lfd, port;

	assert_non_null(gate);
	seal_set_plaintext(true);	/* raw plaintext Hellos below */
	lfd = net_listen("127.0.0.1:0", bound, sizeof(bound));
	assert_true(lfd >= 0);
	assert_non_null(colon = strrchr(bound, ':'));
	port = atoi(colon + 1);

	/* Two from 127.0.0.1, the third from it is one too many. */
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.1", &a), 0);
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.1", &b), 0);
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.1", &e), -1);
	expect_counts(gate, 2, 2, 1);
	/* Another address may: then three are unauthenticated, the cap. */
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.2", &c), 0);
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.3", &e), -1);
	expect_counts(gate, 3, 3, 2);

	/* a says Hello: authenticated, so 127.0.0.1 has room for one more. */
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_CLIENT;
	h.rank = -1;
	h.name = "gate";
	assert_int_equal(frame_write(a.cfd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, 2000), 0);
	spin(loop, &a.s.frames, 1);
	assert_int_equal(a.s.frames, 1);
	expect_counts(gate, 3, 2, 2);
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.1", &d), 0);
	expect_counts(gate, 4, 3, 2);
	/* Four in all: the total cap, whatever the address. */
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.4", &e), -1);
	expect_counts(gate, 4, 3, 3);

	/* Closed conns are forgotten, authenticated or not. */
	close(a.cfd);
	close(b.cfd);
	spin(loop, &a.s.closed, 1);
	spin(loop, &b.s.closed, 1);
	expect_counts(gate, 2, 2, 3);
	assert_int_equal(gate_one(loop, gate, lfd, port, &as, "127.0.0.1", &a), 0);
	expect_counts(gate, 3, 3, 3);

	close(a.cfd);
	close(c.cfd);
	close(d.cfd);
	spin(loop, &a.s.closed, 1);
	spin(loop, &c.s.closed, 1);
	spin(loop, &d.s.closed, 1);
	expect_counts(gate, 0, 0, 3);
	close(lfd);
	seal_set_plaintext(false);
	ev_loop_destroy(loop);
	free(gate);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_big_header_closes),
		cmocka_unit_test(test_cap_edge),
		cmocka_unit_test(test_big_frame_after_auth),
		cmocka_unit_test(test_gate),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_conn_preauth", getenv("PREAUTH_TEST_DEBUG") ?
	    LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR);
	keys_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
