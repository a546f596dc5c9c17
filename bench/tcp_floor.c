/*
 * tcp_floor.c: not an MPI program. The floor of mpiv's architecture on
 * this machine: TCP ping-pong half round trip between two processes,
 * directly and through a third relay process (epoll, read/write of up to
 * 64 KiB, like a Channel Memory that does nothing else). By default every
 * wait is a blocking poll/epoll_wait, as in libmpi-lite and the CM; WAIT
 * "spin" makes every process (ends and relay) busy-poll instead, as Open
 * MPI's ranks do, and "yield" busy-polls with a sched_yield() between
 * polls (what three spinners can do on two cores).
 *
 * MODE 2 and 3 relay without copying through user space: splice() from
 * the sender's socket into a pipe and from the pipe into the receiver's
 * socket (the pages move by reference). MODE 3 also keeps every byte, as
 * a logging Channel Memory must, by tee() into log pipes that stay open
 * to the end: a relay that logs with no copy and no page faults of its
 * own, the best any design where a server keeps each message can do.
 *
 * CHUNK > 0 (MODE 0 and 4) writes each message CHUNK bytes per send(),
 * with 4 MiB send and receive buffers set before the handshake, as
 * mpiv's direct links have: the receiver copies the first pieces out
 * while the sender copies the next ones in. On the 2-core VM of
 * 2026-11-27 that made a 1 MiB half round trip about 100 µs busy-
 * polling, against 170-210 µs for one send() of the whole message into
 * the kernel's own buffer sizing (docs/BENCHMARKS.md).
 *
 * MODE 4 is MODE 0 with a sender's log: after each send() of a message
 * both ends copy it into memory the process never used before (faulted
 * in by MADV_POPULATE_WRITE first, then memcpy), as the direct
 * protocol's log of sent messages must while no checkpoint frees any of
 * it: the floor of logging every payload in memory, with no MPI.
 *
 *   cc -O2 -o tcp_floor bench/tcp_floor.c
 *   ./tcp_floor MODE SIZE ITERS [WAIT [CHUNK]]
 *                                        MODE 0 = direct, 1 = through a
 *                                        relay, 2 = relay by splice,
 *                                        3 = relay by splice, logging by
 *                                        tee, 4 = direct, logging by
 *                                        copy; WAIT block|spin|yield
 *
 * Prints "<mode> size=<bytes> wait=<WAIT> half_rtt_us=<µs>", <mode> one
 * of direct, relay, splice, splicelog, directlog, or direct-<CHUNK/1024>k
 * (directlog-<CHUNK/1024>k).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int wait_mode;		/* 0 block, 1 spin, 2 spin + yield */
static size_t chunk;		/* bytes per send(), 0: the whole message */
static char *logbuf;		/* MODE 4: every message sent, in order */
static size_t logged;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* MODE 4: keep a copy of the n bytes just sent, in fresh memory. */
static void
keep(const char *b, size_t n)
{
	if (logbuf == NULL)
		return;
	(void)madvise(logbuf + logged, n, MADV_POPULATE_WRITE);
	memcpy(logbuf + logged, b, n);
	logged += n;
}

static void
idle(void)
{
	if (wait_mode == 2)
		sched_yield();
}

static void
nodelay(int s)
{
	int one = 1;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* With CHUNK: 4 MiB buffers, set before listen() or connect(). */
static void
bigbuf(int s)
{
	int big = 4 << 20;

	if (chunk == 0)
		return;
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
}

static int
listen_any(int *port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof a;

	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	bigbuf(s);
	if (bind(s, (void *)&a, sizeof a) || listen(s, 8))
		perror("listen"), exit(1);
	getsockname(s, (void *)&a, &l);
	*port = ntohs(a.sin_port);
	return s;
}

static int
dial(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	bigbuf(s);
	if (connect(s, (void *)&a, sizeof a))
		perror("connect"), exit(1);
	nodelay(s);
	return s;
}

static void
recv_all(int s, char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { s, POLLIN, 0 };
		if (wait_mode == 0)
			poll(&p, 1, -1);
		ssize_t r = recv(s, b + got, n - got, MSG_DONTWAIT);
		if (r > 0)
			got += r;
		else if (r == 0)
			exit(0);
		else
			idle();
	}
}

static void
send_all(int s, const char *b, size_t n)
{
	size_t put = 0;

	while (put < n) {
		size_t m = chunk > 0 && n - put > chunk ? chunk : n - put;
		ssize_t w = send(s, b + put, m, 0);
		if (w > 0)
			put += w;
	}
	keep(b, n);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void
echo(int port, char *buf, size_t n, int iters)
{
	int s = dial(port);

	for (int i = 0; i < iters; i++) {
		recv_all(s, buf, n);
		send_all(s, buf, n);
	}
	exit(0);
}

#define PIPE_BYTES (1 << 20)

static int
pipe_big(int p[2])
{
	if (pipe(p))
		perror("pipe"), exit(1);
	/* Root may exceed /proc/sys/fs/pipe-max-size; others get 1 MiB. */
	(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_BYTES);
	return fcntl(p[1], F_GETPIPE_SZ);
}

/* Keep the r bytes at the head of pipe in (not consumed) in the log. */
static void
log_tee(int in, ssize_t r)
{
	static int lg[2] = { -1, -1 };
	static long room;	/* pipe slots (pages) left, estimated */
	long need = r / 4096 + 2;
	ssize_t t;

	if (lg[1] < 0 || need > room) {
		if (lg[1] >= 0)
			close(lg[1]);	/* read end stays open: the log */
		room = pipe_big(lg) / 4096;
	}
	t = tee(in, lg[1], (size_t)r, 0);
	if (t != r)
		fprintf(stderr, "tcp_floor: tee kept %zd of %zd bytes\n", t, r),
		    exit(1);
	room -= need;
}

/* One chunk from one end to the other: read/write (MODE 1), or splice
   through a pipe (2), keeping a copy in the log by tee (3). */
static void
forward(int from, int to, int mode)
{
	static char rb[1 << 16];
	static int p[2] = { -1, -1 };
	static size_t cap;
	ssize_t r;

	if (mode == 1) {
		r = read(from, rb, sizeof rb);
		if (r <= 0)
			exit(0);
		send_all(to, rb, (size_t)r);
		return;
	}
	if (p[0] < 0)
		cap = (size_t)pipe_big(p);
	r = splice(from, NULL, p[1], NULL, cap,
	    SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	if (r == 0)
		exit(0);
	if (r < 0)
		return;
	if (mode == 3)
		log_tee(p[0], r);
	while (r > 0) {
		ssize_t w = splice(p[0], NULL, to, NULL, (size_t)r,
		    SPLICE_F_MOVE);
		if (w <= 0)
			perror("splice"), exit(1);
		r -= w;
	}
}

static void
relay(int ls, int mode)
{
	int a = accept(ls, 0, 0), b = accept(ls, 0, 0), ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };

	nodelay(a);
	nodelay(b);
	e.data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, a, &e);
	e.data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, b, &e);
	for (;;) {
		struct epoll_event ev[2];
		int k = epoll_wait(ep, ev, 2, wait_mode ? 0 : -1);
		if (k == 0)
			idle();
		for (int j = 0; j < k; j++) {
			if (ev[j].data.u32)
				forward(b, a, mode);
			else
				forward(a, b, mode);
		}
	}
}

int
main(int argc, char **argv)
{
	static const char *names[] = { "direct", "relay ", "splice",
	    "splicelog", "directlog" };
	int through = argc > 1 ? atoi(argv[1]) : 0;
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
	int iters = argc > 3 ? atoi(argv[3]) : 5000, port, s;
	char *buf = calloc(1, n + 1);
	const char *w = argc > 4 ? argv[4] : "block";
	char name[32];
	int ls;

	chunk = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
	if (through < 0 || through > 4 || (through % 4 > 0 && chunk > 0))
		fprintf(stderr, "tcp_floor: MODE is 0..4, CHUNK only with "
		    "MODE 0 or 4\n"), exit(2);
	if (through == 4) {
		/* page-aligned, never touched: what a growing log gets */
		logbuf = mmap(NULL, n * (size_t)iters + 4096, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
		if (logbuf == MAP_FAILED)
			perror("tcp_floor: mmap"), exit(1);
		through = 0;
		names[0] = names[4];
	}
	ls = listen_any(&port);
	wait_mode = strcmp(w, "spin") == 0 ? 1 : strcmp(w, "yield") == 0 ? 2 : 0;

	if (fork() == 0) {
		if (through)
			relay(ls, through);
		int c = accept(ls, 0, 0);
		nodelay(c);
		for (int i = 0; i < iters; i++) {
			recv_all(c, buf, n);
			send_all(c, buf, n);
		}
		exit(0);
	}
	if (through && fork() == 0)
		echo(port, buf, n, iters);
	s = dial(port);
	if (through)
		usleep(1000);	/* both ends connected before timing */
	double t0 = now();
	for (int i = 0; i < iters; i++) {
		send_all(s, buf, n);
		recv_all(s, buf, n);
	}
	if (chunk > 0)
		snprintf(name, sizeof name, "%s-%zuk", names[through],
		    chunk / 1024);
	else
		snprintf(name, sizeof name, "%s", names[through]);
	printf("%s size=%zu wait=%s half_rtt_us=%.2f\n",
	    name, n, w, (now() - t0) / iters / 2 * 1e6);
	close(s);
	while (wait(NULL) > 0)
		;
	return 0;
}
