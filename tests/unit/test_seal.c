/*
 * test_seal.c: runtime/seal.c: key agreement (both ends derive matching
 * keys; a wrong handshake key, nonce or cipher does not), the record
 * round trip over a socketpair (blocking and non-blocking with a tiny
 * send buffer: partial writes, EAGAIN, seal_pending/seal_flush), read-
 * ahead given with seal_feed, and every way a stream can be broken
 * (tampered, truncated, replayed, reordered, dropped records, a bad
 * length, end of stream inside a record) -> EBADMSG; both ciphers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seal.h"

static const uint8_t key32[32] = "0123456789abcdef0123456789abcde";
static const uint8_t nonce_s[32] = { 1, 2, 3 };
static const uint8_t nonce_c[32] = { 4, 5, 6 };

/* The server of the next pair seals and opens with libsodium only. */
static bool server_sodium_only;

/* Client c and server s of one connection, keys derived as both ends
   do (ckey: the client's handshake key, skey: the server's). */
static int
pair_keys(struct seal *c, struct seal *s, enum seal_cipher ci,
    const void *ckey, const void *skey, size_t keylen)
{
	struct seal_kx kc, ks;
	uint8_t cpub[SEAL_PUB_LEN], spub[SEAL_PUB_LEN];
	int rc;

	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	assert_int_equal(seal_kx_new(&kc), 0);
	assert_int_equal(seal_kx_new(&ks), 0);
	memcpy(cpub, kc.pub, sizeof(cpub));
	memcpy(spub, ks.pub, sizeof(spub));
	if (seal_start(c, true, ci, ckey, keylen, &kc, spub, cpub, spub,
	    nonce_s, sizeof(nonce_s), nonce_c, sizeof(nonce_c)) < 0)
		return -1;
	/* kc is wiped */
	for (size_t i = 0; i < sizeof(kc.sec); i++)
		assert_int_equal(kc.sec[i], 0);
	if (server_sodium_only)
		setenv("MPIV_SEAL_NO_OPENSSL", "1", 1);
	rc = seal_start(s, false, ci, skey, keylen, &ks, cpub, cpub, spub,
	    nonce_s, sizeof(nonce_s), nonce_c, sizeof(nonce_c));
	unsetenv("MPIV_SEAL_NO_OPENSSL");
	return rc;
}

static void
pair(struct seal *c, struct seal *s, enum seal_cipher ci)
{
	assert_int_equal(pair_keys(c, s, ci, key32, key32, sizeof(key32)), 0);
}

static enum seal_cipher ciphers[2];
static int nciphers;

static int
setup(void **state)
{
	assert_int_equal(seal_init(), 0);
	nciphers = 0;
	if (seal_ciphers() & (1u << SEAL_AES256GCM))
		ciphers[nciphers++] = SEAL_AES256GCM;
	ciphers[nciphers++] = SEAL_CHACHA20POLY1305;
	return 0;
}

static void
test_ciphers(void **state)
{
	assert_true(seal_ciphers() & (1u << SEAL_CHACHA20POLY1305));
	assert_int_equal(seal_pick(0), SEAL_NONE);
	assert_int_equal(seal_pick(1u << SEAL_CHACHA20POLY1305),
	    SEAL_CHACHA20POLY1305);
	assert_int_equal(seal_pick(seal_ciphers()), ciphers[0]);
	assert_int_equal(seal_pick(1u << 7), SEAL_NONE);
	assert_string_equal(seal_cipher_name(SEAL_AES256GCM), "aes256gcm");
	assert_string_equal(seal_cipher_name(SEAL_CHACHA20POLY1305),
	    "chacha20poly1305");
	setenv("MPIV_SEAL_NO_AES", "1", 1);
	assert_int_equal(seal_ciphers(), 1u << SEAL_CHACHA20POLY1305);
	unsetenv("MPIV_SEAL_NO_AES");
}

static void
test_keys(void **state)
{
	for (int k = 0; k < nciphers; k++) {
		struct seal c, s;
		uint8_t other[32];

		pair(&c, &s, ciphers[k]);
		assert_true(c.on && s.on);
		assert_memory_equal(c.tx.key, s.rx.key, SEAL_KEY_LEN);
		assert_memory_equal(c.rx.key, s.tx.key, SEAL_KEY_LEN);
		assert_memory_not_equal(c.tx.key, c.rx.key, SEAL_KEY_LEN);
		seal_end(&c);
		seal_end(&s);
		assert_false(c.on);

		/* a wrong handshake key: other keys, a record fails */
		memcpy(other, key32, sizeof(other));
		other[5] ^= 1;
		assert_int_equal(pair_keys(&c, &s, ciphers[k], key32, other,
		    sizeof(other)), 0);
		assert_memory_not_equal(c.tx.key, s.rx.key, SEAL_KEY_LEN);
		{
			uint8_t rec[SEAL_REC_LEN(5)], out[5];

			assert_int_equal(seal_record(&c.tx, "hello", 5, rec),
			    SEAL_REC_LEN(5));
			assert_int_equal(seal_open_record(&s.rx, rec,
			    sizeof(rec), out), -1);
		}
		seal_end(&c);
		seal_end(&s);

		/* no key at all: still agree (encrypted, not authenticated) */
		assert_int_equal(pair_keys(&c, &s, ciphers[k], NULL, NULL, 0),
		    0);
		assert_memory_equal(c.tx.key, s.rx.key, SEAL_KEY_LEN);
		seal_end(&c);
		seal_end(&s);
		/* a key too short for keyed BLAKE2b is refused */
		assert_int_equal(pair_keys(&c, &s, ciphers[k], key32, key32, 8),
		    -1);
		seal_end(&c);
		seal_end(&s);
	}
	/* a cipher nobody has */
	{
		struct seal c, s;

		assert_int_equal(pair_keys(&c, &s, SEAL_NONE, key32, key32,
		    sizeof(key32)), -1);
		assert_int_equal(pair_keys(&c, &s, 9, key32, key32,
		    sizeof(key32)), -1);
		seal_end(&c);
		seal_end(&s);
	}
	/* a degenerate (small-order) peer key is refused */
	{
		struct seal c;
		struct seal_kx kx;
		uint8_t zero[SEAL_PUB_LEN] = { 0 };

		memset(&c, 0, sizeof(c));
		assert_int_equal(seal_kx_new(&kx), 0);
		assert_int_equal(seal_start(&c, true, ciphers[0], key32, 32,
		    &kx, zero, kx.pub, zero, nonce_s, 32, nonce_c, 32), -1);
		assert_false(c.on);
		seal_end(&c);
	}
}

static void
test_records(void **state)
{
	for (int k = 0; k < nciphers; k++) {
		struct seal c, s;
		static uint8_t big[SEAL_REC_MAX], back[SEAL_REC_MAX + 1];
		uint8_t *r1 = malloc(SEAL_REC_LEN(SEAL_REC_MAX));
		uint8_t r2[SEAL_REC_LEN(3)], r3[SEAL_REC_LEN(3)];

		pair(&c, &s, ciphers[k]);
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i * 7);
		assert_int_equal(seal_record(&c.tx, big, 0, r1), 0);
		assert_int_equal(seal_record(&c.tx, big, SEAL_REC_MAX + 1, r1),
		    0);
		assert_int_equal(seal_record(&c.tx, big, SEAL_REC_MAX, r1),
		    SEAL_REC_LEN(SEAL_REC_MAX));
		assert_int_equal(seal_open_record(&s.rx, r1,
		    SEAL_REC_LEN(SEAL_REC_MAX), back), SEAL_REC_MAX);
		assert_memory_equal(big, back, SEAL_REC_MAX);
		/* replayed */
		assert_int_equal(seal_open_record(&s.rx, r1,
		    SEAL_REC_LEN(SEAL_REC_MAX), back), -1);
		/* reordered: r3 before r2 */
		seal_record(&c.tx, "abc", 3, r2);
		seal_record(&c.tx, "def", 3, r3);
		assert_int_equal(seal_open_record(&s.rx, r3, sizeof(r3), back),
		    -1);
		assert_int_equal(seal_open_record(&s.rx, r2, sizeof(r2), back),
		    3);
		/* tampered: header, body, tag */
		for (size_t at = 0; at < sizeof(r3); at++) {
			r3[at] ^= 0x40;
			assert_int_equal(seal_open_record(&s.rx, r3,
			    sizeof(r3), back), -1);
			r3[at] ^= 0x40;
		}
		/* truncated */
		assert_int_equal(seal_open_record(&s.rx, r3, sizeof(r3) - 1,
		    back), -1);
		assert_int_equal(seal_open_record(&s.rx, r3, sizeof(r3), back),
		    3);
		assert_memory_equal(back, "def", 3);
		/* the other direction's key does not open it */
		seal_record(&c.tx, "ghi", 3, r2);
		assert_int_equal(seal_open_record(&c.rx, r2, sizeof(r2), back),
		    -1);
		free(r1);
		seal_end(&c);
		seal_end(&s);
	}
}

static void
nonblock(int fd)
{
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

/* Writes src[*sent, N) as iovecs of assorted sizes until done or
   EAGAIN (then flushes what is pending). */
static void
rt_write(struct seal *c, int fd, const uint8_t *src, size_t N,
    size_t *sent, size_t *step, bool *eagain)
{
	static const size_t sizes[] = { 1, 5, 70000, 3, 65536, 200000, 12,
	    1 << 20 };

	while (*sent < N) {
		struct iovec iov[3];
		int n = 0;
		size_t at = *sent;
		ssize_t w;

		for (int i = 0; i < 3 && at < N; i++, (*step)++) {
			size_t len = sizes[*step % 8];

			if (len > N - at)
				len = N - at;
			iov[n].iov_base = (void *)(src + at);
			iov[n++].iov_len = len;
			at += len;
		}
		w = seal_writev(c, fd, iov, n);
		if (w < 0) {
			assert_true(errno == EAGAIN);
			*eagain = true;
			return;
		}
		assert_true(w > 0 && (size_t)w <= at - *sent);
		*sent += (size_t)w;
	}
	if (seal_flush(c, fd) < 0) {
		assert_true(errno == EAGAIN);
		*eagain = true;
	}
}

/* Reads into dst[*got, N) with buffers of assorted sizes until done or
   EAGAIN. */
static void
rt_read(struct seal *s, int fd, uint8_t *dst, size_t N, size_t *got,
    bool *eagain)
{
	static const size_t rs[] = { 7, 100000, 1, 65536, 4096, 300000 };

	while (*got < N) {
		size_t want = rs[*got % 6];
		ssize_t r;

		if (want > N - *got)
			want = N - *got;
		r = seal_read(s, fd, dst + *got, want);
		if (r < 0) {
			assert_int_equal(errno, EAGAIN);
			*eagain = true;
			return;
		}
		assert_true(r > 0 && (size_t)r <= want);
		*got += (size_t)r;
	}
}

/* A round trip of 3 MiB as iovecs of assorted sizes over a socketpair:
   blocking (a child writes), then non-blocking in one thread with tiny
   socket buffers (partial writes, EAGAIN both ways). */
static void
round_trip(enum seal_cipher ci, bool nb)
{
	enum { N = 3 * 1024 * 1024 + 17 };
	struct seal c, s;
	uint8_t *src = malloc(N), *dst = malloc(N);
	size_t sent = 0, got = 0, step = 0;
	int sv[2];
	bool eagain_w = false, eagain_r = false;

	assert_non_null(src);
	assert_non_null(dst);
	for (size_t i = 0; i < N; i++)
		src[i] = (uint8_t)(i * 31 + (i >> 13));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pair(&c, &s, ci);
	if (!nb) {
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0) {
			close(sv[1]);
			rt_write(&c, sv[0], src, N, &sent, &step, &eagain_w);
			_exit(sent == N && !eagain_w ? 0 : 1);
		}
		close(sv[0]);
		rt_read(&s, sv[1], dst, N, &got, &eagain_r);
		assert_false(eagain_r);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		sent = N;
	} else {
		int sz = 4096;

		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		nonblock(sv[0]);
		nonblock(sv[1]);
		while (got < N) {
			size_t before = got + sent + seal_pending(&c);

			rt_write(&c, sv[0], src, N, &sent, &step, &eagain_w);
			rt_read(&s, sv[1], dst, N, &got, &eagain_r);
			assert_true(got + sent + seal_pending(&c) != before ||
			    got == N);
		}
		assert_true(eagain_w);
		assert_true(eagain_r);
		assert_int_equal(seal_pending(&c), 0);
		close(sv[0]);
	}
	assert_int_equal(sent, N);
	assert_memory_equal(src, dst, N);
	assert_false(seal_readable(&s));
	/* end of stream on a record boundary: 0 */
	if (nb) {
		int fl = fcntl(sv[1], F_GETFL);

		fcntl(sv[1], F_SETFL, fl & ~O_NONBLOCK);
	}
	assert_int_equal(seal_read(&s, sv[1], dst, 10), 0);
	close(sv[1]);
	seal_end(&c);
	seal_end(&s);
	free(src);
	free(dst);
}

/*
 * AES-256-GCM records are sealed by OpenSSL from SEAL_EVP_MIN bytes and
 * by libsodium below: a peer that uses only libsodium (another build,
 * MPIV_SEAL_NO_OPENSSL=1) opens the same bytes, both ways, every size,
 * and OpenSSL's opening refuses tampering as libsodium's does (and
 * leaves no forged plaintext).
 */
static void
test_two_libraries(void **state)
{
	static const size_t sizes[] = { 1, SEAL_EVP_MIN - 1, SEAL_EVP_MIN,
	    4096, 65521, SEAL_REC_MAX };
	static uint8_t msg[SEAL_REC_MAX], back[SEAL_REC_MAX];
	uint8_t *rec = malloc(SEAL_REC_LEN(SEAL_REC_MAX));
	struct seal c, s;

	if (!(seal_ciphers() & (1u << SEAL_AES256GCM))) {
		free(rec);
		skip();
	}
	server_sodium_only = true;
	pair(&c, &s, SEAL_AES256GCM);
	server_sodium_only = false;
	assert_non_null(c.tx.evp);
	assert_non_null(c.rx.evp);
	assert_null(s.tx.evp);
	assert_null(s.rx.evp);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13 + 5);
	/* c seals with OpenSSL (libsodium below SEAL_EVP_MIN), s with
	   libsodium only: each way, every size */
	for (size_t k = 0; k < 2 * sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k / 2];
		struct seal_dir *tx = k % 2 ? &s.tx : &c.tx;
		struct seal_dir *rx = k % 2 ? &c.rx : &s.rx;

		assert_int_equal(seal_record(tx, msg, n, rec), SEAL_REC_LEN(n));
		memset(back, 0, n);
		assert_int_equal(seal_open_record(rx, rec, SEAL_REC_LEN(n),
		    back), (ssize_t)n);
		assert_memory_equal(msg, back, n);
	}
	/* a large record opened by OpenSSL: a flipped bit anywhere (length,
	   body, tag) refuses it and leaves zeros, then the intact one opens */
	assert_int_equal(seal_record(&s.tx, msg, 4096, rec),
	    SEAL_REC_LEN(4096));
	for (size_t at = 4; at < SEAL_REC_LEN(4096); at += 509) {
		rec[at] ^= 0x08;
		memset(back, 0xee, 4096);
		assert_int_equal(seal_open_record(&c.rx, rec,
		    SEAL_REC_LEN(4096), back), -1);
		for (size_t i = 0; i < 4096; i++)
			assert_int_equal(back[i], 0);
		rec[at] ^= 0x08;
	}
	rec[SEAL_REC_LEN(4096) - 1] ^= 1;	/* the tag's last byte */
	assert_int_equal(seal_open_record(&c.rx, rec, SEAL_REC_LEN(4096),
	    back), -1);
	rec[SEAL_REC_LEN(4096) - 1] ^= 1;
	assert_int_equal(seal_open_record(&c.rx, rec, SEAL_REC_LEN(4096),
	    back), 4096);
	assert_memory_equal(msg, back, 4096);
	free(rec);
	seal_end(&c);
	seal_end(&s);
}

/* A direction whose counter is spent seals nothing more: seal_writev
   fails (EIO) instead of reusing a nonce. */
static void
test_spent(void **state)
{
	struct seal c, s;
	int sv[2];
	struct iovec iov = { "abc", 3 };

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pair(&c, &s, ciphers[0]);
	c.tx.ctr = UINT64_MAX - 1;
	assert_int_equal(seal_writev(&c, sv[0], &iov, 1), 3);
	errno = 0;
	assert_int_equal(seal_writev(&c, sv[0], &iov, 1), -1);
	assert_int_equal(errno, EIO);
	seal_end(&c);
	seal_end(&s);
	close(sv[0]);
	close(sv[1]);
}

static void
test_round_trip(void **state)
{
	for (int k = 0; k < nciphers; k++) {
		round_trip(ciphers[k], false);
		round_trip(ciphers[k], true);
	}
}

/* Sealed bytes of "abc" "def" "ghijkl" as three records in buf. */
static size_t
three_records(struct seal *c, uint8_t *buf)
{
	size_t n = 0;

	n += seal_record(&c->tx, "abc", 3, buf + n);
	n += seal_record(&c->tx, "def", 3, buf + n);
	n += seal_record(&c->tx, "ghijkl", 6, buf + n);
	return n;
}

static void
test_feed(void **state)
{
	for (int k = 0; k < nciphers; k++) {
		struct seal c, s;
		uint8_t buf[256], out[32];
		size_t n;
		int sv[2];

		pair(&c, &s, ciphers[k]);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		n = three_records(&c, buf);
		/* the first record and a half read ahead by the handshake */
		assert_int_equal(seal_feed(&s, buf, SEAL_REC_LEN(3) + 5), 0);
		assert_true(seal_readable(&s));
		assert_int_equal(write(sv[0], buf + SEAL_REC_LEN(3) + 5,
		    n - SEAL_REC_LEN(3) - 5), (ssize_t)(n - SEAL_REC_LEN(3) - 5));
		/* one byte at a time through s->plain, then the rest */
		assert_int_equal(seal_read(&s, sv[1], out, 1), 1);
		assert_int_equal(out[0], 'a');
		assert_true(seal_readable(&s));
		assert_int_equal(seal_read(&s, sv[1], out, 2), 2);
		assert_memory_equal(out, "bc", 2);
		assert_int_equal(seal_read(&s, sv[1], out, sizeof(out)), 9);
		assert_memory_equal(out, "defghijkl", 9);
		assert_false(seal_readable(&s));
		nonblock(sv[1]);
		assert_int_equal(seal_read(&s, sv[1], out, sizeof(out)), -1);
		assert_int_equal(errno, EAGAIN);
		close(sv[0]);
		close(sv[1]);
		seal_end(&c);
		seal_end(&s);
	}
}

/* bytes (a broken stream) then end of stream: what seal_read says */
static void
expect_broken(struct seal *s, const uint8_t *bytes, size_t n,
    const char *good)
{
	uint8_t out[64];
	size_t got = 0;
	int sv[2];
	ssize_t r;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[0], bytes, n), (ssize_t)n);
	close(sv[0]);
	while ((r = seal_read(s, sv[1], out + got, sizeof(out) - got)) > 0)
		got += (size_t)r;
	assert_int_equal(r, -1);
	assert_int_equal(errno, EBADMSG);
	assert_int_equal(got, strlen(good));
	assert_memory_equal(out, good, got);
	/* and it stays broken */
	assert_int_equal(seal_read(s, sv[1], out, sizeof(out)), -1);
	assert_int_equal(errno, EBADMSG);
	close(sv[1]);
}

static void
test_broken_streams(void **state)
{
	for (int k = 0; k < nciphers; k++) {
		struct seal c, s;
		uint8_t buf[256], tmp[256];
		size_t n, r1 = SEAL_REC_LEN(3), r2 = SEAL_REC_LEN(3);

		/* a tampered byte in the second record */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		buf[r1 + 6] ^= 1;
		expect_broken(&s, buf, n, "abc");
		seal_end(&c);
		seal_end(&s);

		/* the stream ends inside the last record */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		expect_broken(&s, buf, n - 1, "abcdef");
		seal_end(&c);
		seal_end(&s);

		/* ... inside a header */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		expect_broken(&s, buf, r1 + 2, "abc");
		seal_end(&c);
		seal_end(&s);

		/* the second record replayed */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		memcpy(tmp, buf, r1 + r2);
		memcpy(tmp + r1 + r2, buf + r1, r2);
		expect_broken(&s, tmp, r1 + 2 * r2, "abcdef");
		seal_end(&c);
		seal_end(&s);

		/* records two and three swapped */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		memcpy(tmp, buf, r1);
		memcpy(tmp + r1, buf + r1 + r2, n - r1 - r2);
		memcpy(tmp + n - r2, buf + r1, r2);
		expect_broken(&s, tmp, n, "abc");
		seal_end(&c);
		seal_end(&s);

		/* record two dropped */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		memcpy(tmp, buf, r1);
		memcpy(tmp + r1, buf + r1 + r2, n - r1 - r2);
		expect_broken(&s, tmp, n - r2, "abc");
		seal_end(&c);
		seal_end(&s);

		/* a record of length 0, and one over SEAL_REC_MAX */
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		memset(buf + r1, 0, 4);
		expect_broken(&s, buf, n, "abc");
		seal_end(&c);
		seal_end(&s);
		pair(&c, &s, ciphers[k]);
		n = three_records(&c, buf);
		buf[0] = 0;
		buf[1] = 1;
		buf[2] = 0;
		buf[3] = 1;		/* 65537 */
		expect_broken(&s, buf, n, "");
		seal_end(&c);
		seal_end(&s);
	}
}

/* A write the descriptor cannot take at all: the plaintext is taken
   anyway, the next write says EAGAIN until the pending bytes are out. */
static void
test_pending(void **state)
{
	struct seal c, s;
	static uint8_t big[1 << 20], back[1 << 20];
	struct iovec iov = { big, sizeof(big) };
	size_t got = 0;
	int sv[2], sz = 4096;
	ssize_t w;

	pair(&c, &s, ciphers[0]);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	nonblock(sv[0]);
	memset(big, 0x5a, sizeof(big));
	w = seal_writev(&c, sv[0], &iov, 1);
	assert_int_equal(w, sizeof(big));
	assert_true(seal_pending(&c) > 0);
	assert_int_equal(seal_writev(&c, sv[0], &iov, 1), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(seal_flush(&c, sv[0]), -1);
	assert_int_equal(errno, EAGAIN);
	/* the reader drains, the writer flushes as it can */
	nonblock(sv[1]);
	while (got < sizeof(back)) {
		ssize_t r = seal_read(&s, sv[1], back + got,
		    sizeof(back) - got);

		if (r < 0)
			assert_int_equal(errno, EAGAIN);
		else
			got += (size_t)r;
		assert_true(r != 0);
		if (seal_pending(&c) > 0 && seal_flush(&c, sv[0]) < 0)
			assert_int_equal(errno, EAGAIN);
	}
	assert_memory_equal(big, back, sizeof(big));
	assert_int_equal(seal_flush(&c, sv[0]), 0);
	assert_int_equal(seal_pending(&c), 0);
	/* an empty write takes nothing and writes nothing */
	iov.iov_len = 0;
	assert_int_equal(seal_writev(&c, sv[0], &iov, 1), 0);
	close(sv[0]);
	close(sv[1]);
	seal_end(&c);
	seal_end(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ciphers),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_two_libraries),
		cmocka_unit_test(test_spent),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_feed),
		cmocka_unit_test(test_broken_streams),
		cmocka_unit_test(test_pending),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
