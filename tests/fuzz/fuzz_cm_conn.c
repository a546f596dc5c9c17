/*
 * fuzz_cm_conn.c: libFuzzer target for the Channel Memory's handling of
 * one connection. An in-process CM (no listening socket) serves job "f"
 * of 4 ranks; rank 1 is connected on a socketpair as a receiver; the
 * fuzz input is written on another socketpair as one peer's bytes, then
 * that peer hangs up. The first input byte picks a prefix: none (raw
 * bytes), a valid rank-0 Hello, or a control Hello, so the fuzzer spends
 * its time past the handshake. Everything must close cleanly, leak-free.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../channel-memory/cm_priv.h"
#include "frame.h"
#include "log.h"

static struct ev_loop *fuzz_loop;

static void
fuzz_write_hello(int fd, Mpiv__Role role, int rank)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;

	h.version = FRAME_VERSION;
	h.role = role;
	h.job_id = "f";
	h.rank = rank;
	h.incarnation = 1;
	(void)frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0,
	    100);
}

static void
fuzz_spin(int rounds)
{
	for (int i = 0; i < rounds; i++)
		ev_run(fuzz_loop, EVRUN_NOWAIT);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cm cm = { .lfd = -1, .max_memory = 1 << 16 };
	const char *err;
	int a[2], b[2];
	size_t off = 0;

	if (fuzz_loop == NULL) {
		signal(SIGPIPE, SIG_IGN);
		log_init("fuzz", LOG_LEVEL_ERROR);
		fuzz_loop = ev_loop_new(EVFLAG_AUTO);
	}
	if (size < 1 || size > 60000)
		return 0;
	cm.loop = fuzz_loop;
	strcpy(cm.bound, "fuzz:0");
	if (job_setup(&cm, "f", 4, 1, 0, false, &err) < 0)
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, b) < 0)
		abort();
	/* rank 1, a well-behaved receiver */
	(void)session_new(&cm, b[0], false);
	fuzz_write_hello(b[1], MPIV__ROLE__ROLE_RANK, 1);
	(void)session_new(&cm, a[0], false);
	switch (data[0] % 3) {
	case 1:
		fuzz_write_hello(a[1], MPIV__ROLE__ROLE_RANK, 0);
		break;
	case 2:
		fuzz_write_hello(a[1], MPIV__ROLE__ROLE_CONTROL, -1);
		break;
	}
	off = 1;
	fcntl(a[1], F_SETFL, O_NONBLOCK);
	while (off < size) {
		ssize_t w = write(a[1], data + off, size - off);
		if (w <= 0)
			break;	/* the CM closed on us, or the buffer is full */
		off += (size_t)w;
		fuzz_spin(2);
	}
	shutdown(a[1], SHUT_WR);
	fuzz_spin(20);
	close(a[1]);
	close(b[1]);
	fuzz_spin(5);
	session_kill_all(&cm);
	ev_run(fuzz_loop, 0);	/* returns once every connection is freed */
	if (cm.sessions != NULL)
		abort();
	job_free_all(&cm);
	return 0;
}
