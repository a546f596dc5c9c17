/*
 * seal_floor.c: the cost of encryption on this CPU, the floor under any
 * encrypted mpiv connection (runtime/seal.c, not MPI): for each cipher
 * the machine runs, the throughput of sealing and of opening 1 MiB in
 * records of SEAL_REC_MAX bytes (what a large payload costs), and the
 * time to seal and open one 64 B record (what a small message adds),
 * next to memcpy of the same 1 MiB. AES-256-GCM twice: as mpiv runs it
 * (OpenSSL for records of SEAL_EVP_MIN bytes and more, libsodium below)
 * and libsodium alone (cipher=aes256gcm-libsodium, what
 * MPIV_SEAL_NO_OPENSSL=1 runs).
 *
 *   seal_floor [SECONDS_PER_MEASURE (default 0.3)]
 *
 * Lines: RESULT seal_floor cipher=C op=seal|open|memcpy size=1048576
 * MBps=X, and RESULT seal_floor cipher=C op=rec64 size=64 ns=X (seal +
 * open of one record).
 *
 * Then the floor of an encrypted transfer, not only of its crypto: two
 * processes ping-pong 1 MiB over loopback TCP, plaintext (cipher=none)
 * and through the record layer as the rank transport uses it (256 KiB
 * handed to seal_writev at a time, so the receiver opens the first
 * records while the sender seals the next; seal_read straight into the
 * destination): RESULT seal_floor cipher=C op=pingpong size=1048576
 * half_rtt_us=X. The ratio of the two is the best encrypted/plaintext
 * bandwidth ratio a transport built on runtime/seal.c can reach here.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "seal.h"

#define MIB	(1u << 20)

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A session of cipher c with itself (tx seals what rx opens); with
   sodium_only, every record on libsodium. */
static void
pair(enum seal_cipher c, bool sodium_only, struct seal *a, struct seal *b)
{
	static const uint8_t key[32] = "seal_floor seal_floor seal_floo";
	static const uint8_t ns[32], nc[32] = { 1 };
	struct seal_kx ka, kb;
	uint8_t pa[SEAL_PUB_LEN], pb[SEAL_PUB_LEN];

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (seal_kx_new(&ka) < 0 || seal_kx_new(&kb) < 0)
		exit(1);
	memcpy(pa, ka.pub, sizeof(pa));
	memcpy(pb, kb.pub, sizeof(pb));
	if (sodium_only)
		setenv("MPIV_SEAL_NO_OPENSSL", "1", 1);
	else
		unsetenv("MPIV_SEAL_NO_OPENSSL");
	if (seal_start(a, true, c, key, sizeof(key), &ka, pb, pa, pb, ns, 32,
	    nc, 32) < 0 || seal_start(b, false, c, key, sizeof(key), &kb, pa,
	    pa, pb, ns, 32, nc, 32) < 0) {
		fprintf(stderr, "seal_floor: seal_start failed\n");
		exit(1);
	}
}

#define PP_CHUNK	(256u * 1024u)	/* what the rank transport seals per call */

/* All n bytes of buf to fd, sealed through s when on. 0 or -1. */
static int
pp_send(struct seal *s, int fd, const uint8_t *buf, size_t n)
{
	size_t off = 0;

	while (off < n) {
		struct iovec iov = { (void *)(buf + off), n - off };
		ssize_t w;

		if (s != NULL && iov.iov_len > PP_CHUNK)
			iov.iov_len = PP_CHUNK;
		w = s != NULL ? seal_writev(s, fd, &iov, 1) :
		    write(fd, iov.iov_base, iov.iov_len);
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return s != NULL && seal_flush(s, fd) < 0 ? -1 : 0;
}

static int
pp_recv(struct seal *s, int fd, uint8_t *buf, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t r = s != NULL ? seal_read(s, fd, buf + off, n - off) :
		    read(fd, buf + off, n - off);

		if (r <= 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

/* A connected loopback TCP pair (fds[0] dialled fds[1]'s listener). */
static int
pp_pair(int fds[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&a, &al) < 0)
		return -1;
	fds[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fds[0] < 0 || connect(fds[0], (struct sockaddr *)&a,
	    sizeof(a)) < 0 || (fds[1] = accept(l, NULL, NULL)) < 0)
		return -1;
	close(l);
	setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* Half round trip of a size-byte ping-pong, plaintext (c == SEAL_NONE)
   or sealed with c; < 0 on failure. */
static double
pingpong(enum seal_cipher c, size_t size, double secs)
{
	struct seal a, b;
	/* the sessions of the two sides, NULL in plaintext */
	struct seal *sa = c != SEAL_NONE ? &a : NULL;
	struct seal *sb = c != SEAL_NONE ? &b : NULL;
	int fds[2], st;
	uint8_t *buf = malloc(size);
	long iters = -5;	/* 5 round trips to warm up, not timed */
	double t0 = 0, t = -1;
	pid_t pid;

	if (buf == NULL || pp_pair(fds) < 0)
		return -1;
	memset(buf, 0x5a, size);
	if (sa != NULL)
		pair(c, false, sa, sb);
	if ((pid = fork()) == 0) {
		/* the echo side: b, fds[1] */
		close(fds[0]);
		while (pp_recv(sb, fds[1], buf, size) == 0 &&
		    pp_send(sb, fds[1], buf, size) == 0)
			;
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0)
		return -1;
	/* as many round trips as fit in secs */
	do {
		if (pp_send(sa, fds[0], buf, size) < 0 ||
		    pp_recv(sa, fds[0], buf, size) < 0)
			goto out;
		if (++iters == 0)
			t0 = now();
	} while (iters <= 0 || now() - t0 < secs);
	t = (now() - t0) / (double)iters / 2 * 1e6;
out:
	close(fds[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (sa != NULL) {
		seal_end(sa);
		seal_end(sb);
	}
	free(buf);
	return t;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	enum seal_cipher cs[3];
	bool sodium_only[3] = { false, false, false };
	uint8_t *plain, *ct, *back;
	int nc = 0;

	if (seal_init() < 0 || secs <= 0) {
		fprintf(stderr, "usage: seal_floor [SECONDS] (needs libsodium)\n");
		return 2;
	}
	if (seal_ciphers() & (1u << SEAL_AES256GCM)) {
		cs[nc++] = SEAL_AES256GCM;
		sodium_only[nc] = true;
		cs[nc++] = SEAL_AES256GCM;
	}
	cs[nc++] = SEAL_CHACHA20POLY1305;
	plain = malloc(MIB);
	back = malloc(MIB);
	ct = malloc(MIB + (MIB / SEAL_REC_MAX + 1) * SEAL_REC_LEN(0));
	if (plain == NULL || back == NULL || ct == NULL)
		return 1;
	for (size_t i = 0; i < MIB; i++)
		plain[i] = (uint8_t)(i * 131);

	/* memcpy of 1 MiB, the one copy a transport makes anyway */
	{
		double t0 = now(), t;
		long n = 0;

		do {
			memcpy(back, plain, MIB);
			__asm__ volatile("" : : "r"(back) : "memory");
			n++;
		} while ((t = now() - t0) < secs);
		printf("RESULT seal_floor cipher=none op=memcpy size=%u MBps=%.0f\n",
		    MIB, n * (double)MIB / t / 1e6);
	}
	for (int k = 0; k < nc; k++) {
		const char *name = sodium_only[k] ? "aes256gcm-libsodium" :
		    seal_cipher_name(cs[k]);
		struct seal a, b;
		double t0, ts, to;
		long n = 0, m = 0;
		size_t len = 0;

		pair(cs[k], sodium_only[k], &a, &b);
		/* seal 1 MiB, then open it, as many times as fit */
		ts = to = 0;
		t0 = now();
		do {
			double t1;

			len = 0;
			for (size_t off = 0; off < MIB; off += SEAL_REC_MAX)
				len += seal_record(&a.tx, plain + off,
				    SEAL_REC_MAX, ct + len);
			t1 = now();
			ts += t1 - t0;
			for (size_t off = 0, at = 0; off < len;
			    off += SEAL_REC_LEN(SEAL_REC_MAX),
			    at += SEAL_REC_MAX)
				if (seal_open_record(&b.rx, ct + off,
				    SEAL_REC_LEN(SEAL_REC_MAX), back + at) < 0) {
					fprintf(stderr, "seal_floor: a record "
					    "did not open\n");
					return 1;
				}
			t0 = now();
			to += t0 - t1;
			n++;
		} while (ts + to < 2 * secs);
		if (memcmp(plain, back, MIB) != 0)
			return 1;
		printf("RESULT seal_floor cipher=%s op=seal size=%u MBps=%.0f\n",
		    name, MIB, n * (double)MIB / ts / 1e6);
		printf("RESULT seal_floor cipher=%s op=open size=%u MBps=%.0f\n",
		    name, MIB, n * (double)MIB / to / 1e6);
		/* one 64 B record sealed and opened */
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++) {
				seal_record(&a.tx, plain, 64, ct);
				if (seal_open_record(&b.rx, ct,
				    SEAL_REC_LEN(64), back) != 64)
					return 1;
			}
			m += 1000;
		} while (now() - t0 < secs);
		printf("RESULT seal_floor cipher=%s op=rec64 size=64 ns=%.0f\n",
		    name, (now() - t0) / m * 1e9);
		seal_end(&a);
		seal_end(&b);
	}
	free(plain);
	free(back);
	free(ct);
	/* the transfer floor: plaintext, then the first (preferred) cipher */
	{
		enum seal_cipher pc[2] = { SEAL_NONE, cs[0] };

		for (int k = 0; k < 2; k++) {
			double us = pingpong(pc[k], MIB, 2 * secs);

			if (us > 0)
				printf("RESULT seal_floor cipher=%s op=pingpong "
				    "size=%u half_rtt_us=%.1f\n",
				    seal_cipher_name(pc[k]), MIB, us);
		}
	}
	return 0;
}
