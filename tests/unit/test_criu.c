/*
 * test_criu: the image archive (round trip through zstd fed in small
 * chunks, truncated and corrupted streams, unsafe names, oversize
 * entries) and, when CRIU works here, real dumps and restores with new
 * pipes: a stopped child restored twice (exits 7; SIGKILLed; SIGKILL of
 * the handle); three generations (dump -> restore -> dump the restored
 * process -> restore ...) in our own PID namespace, each generation's
 * end decoded right, and the restored process dying with its restorer;
 * the dumped pid taken at restore time: fallback into a fresh PID
 * namespace, status passed through, a later dump failing cleanly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "../../node-agent/criu.h"
#include "../../node-agent/pidns.h"

struct membuf {
	unsigned char *p;
	size_t len, cap;
};

static int
mem_out(void *ctx, const void *buf, size_t len)
{
	struct membuf *m = ctx;

	if (m->len + len > m->cap) {
		size_t cap = (m->len + len) * 2;
		unsigned char *np = realloc(m->p, cap);
		if (np == NULL)
			return -1;
		m->p = np;
		m->cap = cap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static void
rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void
write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static size_t
read_file(const char *dir, const char *name, unsigned char *buf, size_t cap)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return (size_t)-1;
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* A source dir: a 300 KB file, an empty one, a .log (skipped), a
 * subdirectory (skipped). Packs it into m. */
static void
make_packed(char *src, struct membuf *m, unsigned char *big, size_t bigsz)
{
	uint64_t raw = 0;
	size_t i;

	strcpy(src, "/dev/shm/mpiv-test-criu-src-XXXXXX");
	assert_non_null(mkdtemp(src));
	for (i = 0; i < bigsz; i++)
		big[i] = (unsigned char)((i * 7919u) >> 5 ^ i);
	write_file(src, "pages-1.img", big, bigsz);
	write_file(src, "empty.img", "", 0);
	write_file(src, "dump.log", "log", 3);
	char sub[512];
	snprintf(sub, sizeof(sub), "%s/sub", src);
	assert_int_equal(mkdir(sub, 0700), 0);
	memset(m, 0, sizeof(*m));
	assert_int_equal(criu_pack_dir(src, criu_zstd_level(), mem_out, m, &raw), 0);
	assert_true(raw > bigsz);
	assert_true(m->len > 0 && m->len < raw);
}

static void
test_pack_roundtrip(void **state)
{
	static unsigned char big[300000], back[400000];
	char src[64], dst[64];
	struct membuf m;
	struct criu_unpack *u;
	size_t off;

	make_packed(src, &m, big, sizeof(big));
	strcpy(dst, "/dev/shm/mpiv-test-criu-dst-XXXXXX");
	assert_non_null(mkdtemp(dst));
	u = criu_unpack_stream_new(dst, 0, 0);
	assert_non_null(u);
	for (off = 0; off < m.len; off += 7) {	/* network-sized dribbles */
		size_t n = m.len - off < 7 ? m.len - off : 7;
		assert_int_equal(criu_unpack_stream_feed(u, m.p + off, n), 0);
	}
	assert_int_equal(criu_unpack_stream_finish(u), 0);
	assert_true(criu_unpack_stream_raw_bytes(u) > sizeof(big));
	criu_unpack_stream_free(u);
	assert_int_equal(read_file(dst, "pages-1.img", back, sizeof(back)), sizeof(big));
	assert_memory_equal(back, big, sizeof(big));
	assert_int_equal(read_file(dst, "empty.img", back, sizeof(back)), 0);
	assert_int_equal(read_file(dst, "dump.log", back, sizeof(back)), (size_t)-1);
	rm_rf(src);
	rm_rf(dst);
	free(m.p);
}

/* Feeds buf[0..len) in 1000-byte chunks then finishes; returns 0 when the
 * whole thing was accepted, -1 (with the error text in why) otherwise. */
static int
unpack_all(const unsigned char *buf, size_t len, uint64_t max_entry, char *why,
    size_t n)
{
	char dst[64];
	struct criu_unpack *u;
	size_t off;
	int rc = 0;

	strcpy(dst, "/dev/shm/mpiv-test-criu-bad-XXXXXX");
	assert_non_null(mkdtemp(dst));
	u = criu_unpack_stream_new(dst, max_entry, 0);
	assert_non_null(u);
	for (off = 0; off < len && rc == 0; off += 1000)
		rc = criu_unpack_stream_feed(u, buf + off, len - off < 1000 ? len - off : 1000);
	if (rc == 0)
		rc = criu_unpack_stream_finish(u);
	snprintf(why, n, "%s", criu_unpack_stream_error(u));
	if (rc < 0) {
		assert_true(why[0] != '\0');
		/* every later call fails the same way */
		assert_int_equal(criu_unpack_stream_feed(u, "x", 1), -1);
	}
	criu_unpack_stream_free(u);
	rm_rf(dst);
	return rc;
}

static void
test_pack_truncated_corrupt(void **state)
{
	static unsigned char big[300000];
	char src[64], why[256];
	struct membuf m;
	size_t cut;

	make_packed(src, &m, big, sizeof(big));
	for (cut = 0; cut < m.len; cut += m.len / 13 + 1) {
		assert_int_equal(unpack_all(m.p, cut, 0, why, sizeof(why)), -1);
		assert_non_null(strstr(why, cut == 0 ? "truncated" : ""));
	}
	assert_int_equal(unpack_all(m.p, m.len - 1, 0, why, sizeof(why)), -1);
	printf("truncated: %s\n", why);
	/* flip bytes at several places: must fail, never crash */
	for (cut = 20; cut < m.len; cut += m.len / 11 + 1) {
		m.p[cut] ^= 0x5a;
		assert_int_equal(unpack_all(m.p, m.len, 0, why, sizeof(why)), -1);
		m.p[cut] ^= 0x5a;
	}
	printf("corrupt: %s\n", why);
	/* trailing garbage after a complete stream */
	assert_int_equal(mem_out(&m, "junkjunk", 8), 0);
	assert_int_equal(unpack_all(m.p, m.len, 0, why, sizeof(why)), -1);
	rm_rf(src);
	free(m.p);
}

/* A hand-made archive holding one entry named name of size bytes
 * (declared), with data bytes actually present. */
static size_t
forge(unsigned char *z, size_t zcap, const char *name, uint64_t size, size_t data)
{
	unsigned char raw[4096];
	size_t nl = strlen(name), k = 0, i;

	memcpy(raw, "MPIVIMG1", 8);
	k = 8;
	for (i = 0; i < 4; i++)
		raw[k++] = (unsigned char)(nl >> (24 - 8 * i));
	for (i = 0; i < 8; i++)
		raw[k++] = (unsigned char)(size >> (56 - 8 * i));
	memcpy(raw + k, name, nl);
	k += nl;
	memset(raw + k, 'A', data);
	k += data;
	memset(raw + k, 0, 11);	/* end: 0 name, 1 file */
	raw[k + 11] = 1;
	k += 12;
	size_t r = ZSTD_compress(z, zcap, raw, k, 3);
	assert_false(ZSTD_isError(r));
	return r;
}

static void
test_unpack_rejects(void **state)
{
	unsigned char z[8192];
	char why[256];
	size_t n;

	n = forge(z, sizeof(z), "ok.img", 10, 10);
	assert_int_equal(unpack_all(z, n, 0, why, sizeof(why)), 0);

	const char *bad[] = { "../evil", "/etc/evil", "a/b", "..", "." };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = forge(z, sizeof(z), bad[i], 10, 10);
		assert_int_equal(unpack_all(z, n, 0, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "unsafe"));
	}
	assert_int_equal(access("/dev/shm/evil", F_OK), -1);
	/* a declared size over the cap is refused before anything is written */
	n = forge(z, sizeof(z), "big.img", 1ull << 40, 10);
	assert_int_equal(unpack_all(z, n, 0, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "exceeds"));
	n = forge(z, sizeof(z), "big.img", 100, 100);
	assert_int_equal(unpack_all(z, n, 50, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "exceeds"));
	/* a size larger than the bytes present: truncated */
	n = forge(z, sizeof(z), "short.img", 1000, 10);
	assert_int_equal(unpack_all(z, n, 0, why, sizeof(why)), -1);
	/* not zstd at all */
	assert_int_equal(unpack_all((const unsigned char *)"hello world", 11, 0, why,
	    sizeof(why)), -1);
}

/* ---------------- CRIU ---------------- */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static ssize_t
read_timeout(int fd, char *buf, size_t n, int ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	ssize_t r;

	if (poll(&pf, 1, ms) <= 0)
		return -1;
	r = read(fd, buf, n - 1);
	if (r >= 0)
		buf[r] = '\0';
	return r;
}

/*
 * The clone: stdin /dev/null, stdout and stderr a pipe, ctrl-in a pipe
 * at fd 3. Prints, stops itself, then after SIGCONT waits for a line on
 * ctrl-in, prints "after restore" and exits 7 (or waits to be killed).
 */
static void
clone_body(int out, int in)
{
	int nul = open("/dev/null", O_RDONLY);
	char line[32];

	dup2(nul, 0);
	dup2(out, 1);
	dup2(out, 2);
	dup2(in, 3);
	close_range(4, ~0u, 0);
	if (write(1, "before\n", 7) != 7)
		_exit(1);
	raise(SIGSTOP);
	if (read(3, line, sizeof(line)) <= 0)
		_exit(2);
	if (write(1, "after restore\n", 14) != 14)
		_exit(3);
	if (line[0] == 'k')
		pause();
	_exit(7);
}

static void
test_criu_dump_restore(void **state)
{
	char why[512], err[512], dir[64], buf[128];
	int out[2], in[2], st, code, sig, round;
	uint64_t ino_out, ino_in;
	pid_t c, h, task;
	double t0;

	if (!criu_probe(why, sizeof(why))) {
		printf("CRIU part skipped: %s\n", why);
		skip();
	}
	printf("criu: %s\n", why);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(in), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		close(out[0]);
		close(in[1]);
		clone_body(out[1], in[0]);
	}
	close(out[1]);
	close(in[0]);
	assert_true(read_timeout(out[0], buf, sizeof(buf), 5000) > 0);
	assert_string_equal(buf, "before\n");
	assert_int_equal(waitpid(c, &st, WUNTRACED), c);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(criu_pipe_inode(c, 1, &ino_out), 0);
	assert_int_equal(criu_pipe_inode(c, 3, &ino_in), 0);
	assert_int_equal(criu_pipe_inode(c, 0, &ino_in) == -1 && errno == EINVAL, 1);
	assert_int_equal(criu_pipe_inode(c, 3, &ino_in), 0);

	strcpy(dir, "/dev/shm/mpiv-test-criu-img-XXXXXX");
	assert_non_null(mkdtemp(dir));
	t0 = now_s();
	if (criu_dump(c, dir, err, sizeof(err)) < 0)
		fail_msg("dump: %s", err);
	printf("dump: %.3f s\n", now_s() - t0);
	assert_int_equal(waitpid(c, &st, 0), c);	/* criu killed it */
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(out[0]);
	close(in[1]);

	struct membuf m = { 0 };
	uint64_t raw;
	assert_int_equal(criu_pack_dir(dir, criu_zstd_level(), mem_out, &m, &raw), 0);
	printf("image: %llu bytes raw, %zu bytes zstd\n", (unsigned long long)raw, m.len);
	free(m.p);

	for (round = 0; round < 2; round++) {
		int o2[2], i2[2];

		assert_int_equal(pipe(o2), 0);
		assert_int_equal(pipe(i2), 0);
		struct criu_fdmap fm[2] = { { o2[1], ino_out }, { i2[0], ino_in } };
		t0 = now_s();
		if (criu_restore_stopped(dir, fm, 2, &h, &task, err, sizeof(err)) < 0)
			fail_msg("restore: %s", err);
		printf("restore: %.3f s (handle %d, task %d)\n", now_s() - t0, (int)h,
		    (int)task);
		close(o2[1]);
		close(i2[0]);
		assert_int_equal(criu_restored_task(h), task);
		assert_int_equal(kill(task, SIGCONT), 0);
		assert_int_equal(write(i2[1], round == 0 ? "inc 2\n" : "kill\n", 5 + (round == 0)),
		    5 + (round == 0));
		assert_true(read_timeout(o2[0], buf, sizeof(buf), 5000) > 0);
		assert_string_equal(buf, "after restore\n");
		if (round == 1)
			assert_int_equal(kill(task, SIGKILL), 0);
		assert_int_equal(waitpid(h, &st, 0), h);
		assert_int_equal(criu_decode_status(st, &code, &sig), 0);
		if (round == 0) {
			assert_int_equal(code, 7);
			assert_int_equal(sig, 0);
		} else {
			assert_int_equal(code, -1);
			assert_int_equal(sig, SIGKILL);
		}
		/* the stdout pipe is at EOF: no process of the namespace is left */
		assert_int_equal(read_timeout(o2[0], buf, sizeof(buf), 5000), 0);
		close(o2[0]);
		close(i2[1]);
	}

	/* criu_restore (continues the task itself); killing the handle ends it all */
	{
		int o2[2], i2[2];

		assert_int_equal(pipe(o2), 0);
		assert_int_equal(pipe(i2), 0);
		struct criu_fdmap fm[2] = { { o2[1], ino_out }, { i2[0], ino_in } };
		if (criu_restore(dir, fm, 2, &h, err, sizeof(err)) < 0)
			fail_msg("restore: %s", err);
		close(o2[1]);
		close(i2[0]);
		assert_int_equal(kill(h, SIGKILL), 0);
		assert_int_equal(waitpid(h, &st, 0), h);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		assert_int_equal(read_timeout(o2[0], buf, sizeof(buf), 5000), 0);
		close(o2[0]);
		close(i2[1]);
	}
	/* a broken image: restore fails with criu's reason */
	{
		char p[128];
		snprintf(p, sizeof(p), "%s/pstree.img", dir);
		unlink(p);
		assert_int_equal(criu_restore(dir, NULL, 0, &h, err, sizeof(err)), -1);
		printf("broken image: %s\n", err);
	}
	rm_rf(dir);
}

/*
 * The multi-generation body: like clone_body, in its own process group
 * and with PR_SET_PDEATHSIG (as libmpi-lite's clone, so the image carries
 * it). Each time it is continued it reads one line from fd 3 and prints
 * "gen N LINE" (N counts its wake-ups: memory survives the dumps); then
 * "again" stops it again, "k" waits to be killed, a number exits with it.
 */
static void
gen_body(int out, int in)
{
	int nul = open("/dev/null", O_RDONLY), gen = 0;
	char line[32], msg[64];
	ssize_t r;
	int l;

	dup2(nul, 0);
	dup2(out, 1);
	dup2(out, 2);
	dup2(in, 3);
	close_range(4, ~0u, 0);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (write(1, "before\n", 7) != 7)
		_exit(1);
	for (;;) {
		raise(SIGSTOP);
		gen++;
		if ((r = read(3, line, sizeof(line) - 1)) <= 0)
			_exit(2);
		line[r] = '\0';
		l = snprintf(msg, sizeof(msg), "gen %d %s", gen, line);
		if (write(1, msg, (size_t)l) != l)
			_exit(3);
		if (strncmp(line, "again", 5) == 0)
			continue;
		if (line[0] == 'k')
			pause();
		_exit(atoi(line));
	}
}

/* Waits until pid shows state T in /proc (it need not be our child). */
static int
wait_stopped(pid_t pid)
{
	char path[64], buf[512], *p;
	double end = now_s() + 5;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (now_s() < end) {
		FILE *f = fopen(path, "r");
		size_t n = 0;

		if (f != NULL) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		if ((p = strrchr(buf, ')')) != NULL && p[1] == ' ' && p[2] == 'T')
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Parent pid of pid from /proc, or -1. */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || strlen(p) < 5)
		return -1;
	return (pid_t)strtol(p + 4, NULL, 10);
}

/* Dumps the stopped pid (our child, or not) into a fresh dir with the
 * inodes of its fds 1 and 3. */
static void
dump_gen(pid_t pid, char *dir, uint64_t *ino_out, uint64_t *ino_in)
{
	char err[512];
	double t0;

	assert_int_equal(criu_pipe_inode(pid, 1, ino_out), 0);
	assert_int_equal(criu_pipe_inode(pid, 3, ino_in), 0);
	strcpy(dir, "/dev/shm/mpiv-test-criu-gen-XXXXXX");
	assert_non_null(mkdtemp(dir));
	t0 = now_s();
	if (criu_dump(pid, dir, err, sizeof(err)) < 0)
		fail_msg("dump of pid %d: %s", (int)pid, err);
	printf("dump of pid %d: %.3f s\n", (int)pid, now_s() - t0);
}

/*
 * dump -> restore -> the restored process stops again and is dumped
 * again -> restored again..., three generations, each restored under the
 * pid it had (our own PID namespace), as our direct child (handle ==
 * task), with fresh pipes; its memory carries on (the wake-up count) and
 * each generation's end decodes right: killed by criu's dump (SIGKILL),
 * SIGTERM, and the last one's exit code 7. Then the restored process dies
 * with the process that restored it (PR_SET_PDEATHSIG from the image).
 */
static void
test_criu_generations(void **state)
{
	char why[512], err[512], dir[64], olddir[64], buf[128], want[64];
	uint64_t ino_out, ino_in;
	int out[2], in[2], st, code, sig, gen;
	pid_t c, h, task;

	if (!criu_probe(why, sizeof(why)))
		skip();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(in), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		close(out[0]);
		close(in[1]);
		gen_body(out[1], in[0]);
	}
	close(out[1]);
	close(in[0]);
	assert_true(read_timeout(out[0], buf, sizeof(buf), 5000) > 0);
	assert_string_equal(buf, "before\n");
	assert_int_equal(waitpid(c, &st, WUNTRACED), c);
	assert_true(WIFSTOPPED(st));
	dump_gen(c, dir, &ino_out, &ino_in);
	assert_int_equal(waitpid(c, &st, 0), c);	/* criu killed it */
	close(out[0]);
	close(in[1]);

	for (gen = 1; gen <= 3; gen++) {
		int o2[2], i2[2];

		assert_int_equal(pipe(o2), 0);
		assert_int_equal(pipe(i2), 0);
		struct criu_fdmap fm[2] = { { o2[1], ino_out }, { i2[0], ino_in } };
		if (criu_restore_stopped(dir, fm, 2, &h, &task, err, sizeof(err)) < 0)
			fail_msg("restore of generation %d: %s", gen, err);
		close(o2[1]);
		close(i2[0]);
		/* our own namespace, the same pid, our child */
		assert_int_equal(h, c);
		assert_int_equal(task, c);
		assert_int_equal(criu_restored_task(h), c);
		assert_int_equal(parent_of(task), getpid());
		assert_int_equal(kill(task, SIGCONT), 0);
		if (gen < 3) {
			assert_int_equal(write(i2[1], "again\n", 6), 6);
			snprintf(want, sizeof(want), "gen %d again\n", gen);
			assert_true(read_timeout(o2[0], buf, sizeof(buf), 5000) > 0);
			assert_string_equal(buf, want);
			assert_int_equal(waitpid(h, &st, WUNTRACED), h);
			assert_true(WIFSTOPPED(st));
			/* the restored process is dumped again */
			strcpy(olddir, dir);
			dump_gen(task, dir, &ino_out, &ino_in);
			rm_rf(olddir);
			assert_int_equal(waitpid(h, &st, 0), h);
			assert_int_equal(criu_decode_status(st, &code, &sig), 0);
			assert_int_equal(code, -1);
			assert_int_equal(sig, SIGKILL);
		} else {
			/* from the last image: SIGTERM first, then exit 7 */
			assert_int_equal(write(i2[1], "k\n", 2), 2);
			snprintf(want, sizeof(want), "gen %d k\n", gen);
			assert_true(read_timeout(o2[0], buf, sizeof(buf), 5000) > 0);
			assert_string_equal(buf, want);
			assert_int_equal(kill(h, SIGTERM), 0);
			assert_int_equal(waitpid(h, &st, 0), h);
			assert_int_equal(criu_decode_status(st, &code, &sig), 0);
			assert_int_equal(code, -1);
			assert_int_equal(sig, SIGTERM);
		}
		assert_int_equal(read_timeout(o2[0], buf, sizeof(buf), 5000), 0);
		close(o2[0]);
		close(i2[1]);
	}
	{	/* generation 3 again, exiting 7 */
		int o2[2], i2[2];

		assert_int_equal(pipe(o2), 0);
		assert_int_equal(pipe(i2), 0);
		struct criu_fdmap fm[2] = { { o2[1], ino_out }, { i2[0], ino_in } };
		if (criu_restore(dir, fm, 2, &h, err, sizeof(err)) < 0)
			fail_msg("restore: %s", err);
		close(o2[1]);
		close(i2[0]);
		assert_int_equal(write(i2[1], "7\n", 2), 2);
		assert_true(read_timeout(o2[0], buf, sizeof(buf), 5000) > 0);
		assert_string_equal(buf, "gen 3 7\n");
		assert_int_equal(waitpid(h, &st, 0), h);
		assert_int_equal(criu_decode_status(st, &code, &sig), 0);
		assert_int_equal(code, 7);
		assert_int_equal(sig, 0);
		close(o2[0]);
		close(i2[1]);
	}
	{	/* the restorer dies: so does the restored process */
		int o2[2], i2[2], pp[2];
		pid_t p;

		assert_int_equal(pipe(o2), 0);
		assert_int_equal(pipe(i2), 0);
		assert_int_equal(pipe(pp), 0);
		p = fork();
		assert_true(p >= 0);
		if (p == 0) {
			struct criu_fdmap fm[2] = { { o2[1], ino_out }, { i2[0], ino_in } };
			pid_t t = -1;

			close(pp[0]);
			if (criu_restore(dir, fm, 2, &t, err, sizeof(err)) < 0)
				t = -1;
			_exit(write(pp[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
		}
		close(pp[1]);
		close(o2[1]);
		close(i2[0]);
		task = -1;
		assert_int_equal(read(pp[0], &task, sizeof(task)), sizeof(task));
		close(pp[0]);
		assert_int_equal(task, c);
		assert_int_equal(waitpid(p, &st, 0), p);
		/* nothing holds the stdout pipe once it is gone */
		assert_int_equal(read_timeout(o2[0], buf, sizeof(buf), 5000), 0);
		/* reparented to us (subreaper) and reaped here */
		assert_int_equal(waitpid(task, &st, 0), task);
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		close(o2[0]);
		close(i2[1]);
	}
	rm_rf(dir);
}

/* A child that holds pid want (ns_last_pid), or -1. */
static pid_t
occupy_pid(pid_t want)
{
	int i;

	for (i = 0; i < 20; i++) {
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		pid_t p;

		if (fd < 0)
			return -1;
		dprintf(fd, "%d", (int)want - 1);
		close(fd);
		p = fork();
		if (p == 0) {
			pause();
			_exit(0);
		}
		if (p == want)
			return p;
		if (p > 0) {
			kill(p, SIGKILL);
			waitpid(p, NULL, 0);
		}
	}
	return -1;
}

/*
 * The dumped pid is taken at restore time: the restore falls back to a
 * fresh PID namespace under a handle (handle != task), the status still
 * passes through, and that process is dumped again (criu enters its
 * namespaces) and restored with criu_restore_as under a pid of our
 * choosing, in a namespace of its own: its memory carries on, its exit
 * code passes through the handle.
 */
static void
test_criu_pid_taken(void **state)
{
	char why[512], err[512], dir[64], buf[128];
	uint64_t ino_out, ino_in;
	int out[2], in[2], o2[2], i2[2], st, code, sig;
	pid_t c, h, task, squat;

	if (!criu_probe(why, sizeof(why)))
		skip();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(in), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		close(out[0]);
		close(in[1]);
		gen_body(out[1], in[0]);
	}
	close(out[1]);
	close(in[0]);
	assert_true(read_timeout(out[0], buf, sizeof(buf), 5000) > 0);
	assert_int_equal(waitpid(c, &st, WUNTRACED), c);
	dump_gen(c, dir, &ino_out, &ino_in);
	assert_int_equal(waitpid(c, &st, 0), c);
	close(out[0]);
	close(in[1]);
	if ((squat = occupy_pid(c)) < 0) {
		rm_rf(dir);
		printf("could not take pid %d back: fallback not tested\n", (int)c);
		skip();
	}
	assert_int_equal(pipe(o2), 0);
	assert_int_equal(pipe(i2), 0);
	struct criu_fdmap fm[2] = { { o2[1], ino_out }, { i2[0], ino_in } };
	if (criu_restore_stopped(dir, fm, 2, &h, &task, err, sizeof(err)) < 0)
		fail_msg("restore with pid %d taken: %s", (int)c, err);
	close(o2[1]);
	close(i2[0]);
	printf("pid %d taken: handle %d, task %d\n", (int)c, (int)h, (int)task);
	assert_true(h != task && task != c);
	assert_int_equal(criu_restored_task(h), task);
	assert_int_equal(kill(task, SIGCONT), 0);
	assert_int_equal(write(i2[1], "again\n", 6), 6);
	assert_true(read_timeout(o2[0], buf, sizeof(buf), 5000) > 0);
	assert_string_equal(buf, "gen 1 again\n");
	assert_int_equal(wait_stopped(task), 0);
	/* dumped from inside its namespace; the handle ends as criu's kill */
	rm_rf(dir);
	dump_gen(task, dir, &ino_out, &ino_in);
	assert_int_equal(waitpid(h, &st, 0), h);
	assert_int_equal(criu_decode_status(st, &code, &sig), 0);
	assert_int_equal(sig, SIGKILL);
	assert_int_equal(read_timeout(o2[0], buf, sizeof(buf), 5000), 0);
	close(o2[0]);
	close(i2[1]);
	kill(squat, SIGKILL);
	waitpid(squat, NULL, 0);
	/* restored as pid 4321 of a namespace of its own: it goes on and
	   exits 5 */
	assert_int_equal(pipe(o2), 0);
	assert_int_equal(pipe(i2), 0);
	fm[0].fd = o2[1];
	fm[0].ino = ino_out;
	fm[1].fd = i2[0];
	fm[1].ino = ino_in;
	if (criu_restore_as(dir, fm, 2, 4321, &h, &task, err, sizeof(err)) < 0)
		fail_msg("restore as pid 4321: %s", err);
	close(o2[1]);
	close(i2[0]);
	printf("restored as 4321: handle %d, task %d\n", (int)h, (int)task);
	assert_true(h != task);
	assert_int_equal(pidns_inner_pid(task), 4321);
	assert_int_equal(kill(task, SIGCONT), 0);
	assert_int_equal(write(i2[1], "5\n", 2), 2);
	assert_true(read_timeout(o2[0], buf, sizeof(buf), 5000) > 0);
	assert_string_equal(buf, "gen 2 5\n");
	assert_int_equal(waitpid(h, &st, 0), h);
	assert_int_equal(criu_decode_status(st, &code, &sig), 0);
	assert_int_equal(code, 5);
	assert_int_equal(read_timeout(o2[0], buf, sizeof(buf), 5000), 0);
	close(o2[0]);
	close(i2[1]);
	rm_rf(dir);
}

/* criu_image_set_pid on a pstree.img made by hand: pid, group, session
 * and thread ids rewritten, the per-pid files renamed, other files and
 * another task's fields left; a pid another task has is refused. */
static void
test_image_set_pid(void **state)
{
	/* magics, then {pid 300, ppid 0, pgid 300, sid 1, threads [300]}
	   and {pid 301, ppid 300, pgid 300, sid 1, threads [301]} */
	static const unsigned char img[] = {
		0x19, 0x43, 0x56, 0x54, 0x30, 0x30, 0x27, 0x50,
		13, 0, 0, 0, 0x08, 0xac, 0x02, 0x10, 0x00, 0x18, 0xac, 0x02,
		0x20, 0x01, 0x28, 0xac, 0x02,
		14, 0, 0, 0, 0x08, 0xad, 0x02, 0x10, 0xac, 0x02, 0x18, 0xac,
		0x02, 0x20, 0x01, 0x28, 0xad, 0x02,
	};
	static const unsigned char want[] = {
		0x19, 0x43, 0x56, 0x54, 0x30, 0x30, 0x27, 0x50,
		13, 0, 0, 0, 0x08, 0xe1, 0x21, 0x10, 0x00, 0x18, 0xe1, 0x21,
		0x20, 0x01, 0x28, 0xe1, 0x21,
		14, 0, 0, 0, 0x08, 0xad, 0x02, 0x10, 0xe1, 0x21, 0x18, 0xe1,
		0x21, 0x20, 0x01, 0x28, 0xad, 0x02,
	};
	unsigned char got[256];
	char dir[64], err[256], path[128];

	strcpy(dir, "/dev/shm/mpiv-test-criu-pid-XXXXXX");
	assert_non_null(mkdtemp(dir));
	write_file(dir, "pstree.img", img, sizeof(img));
	write_file(dir, "core-300.img", "c", 1);
	write_file(dir, "mm-300.img", "m", 1);
	write_file(dir, "core-301.img", "d", 1);
	write_file(dir, "pages-300.img", "p", 1);
	assert_int_equal(criu_image_set_pid(dir, 301, err, sizeof(err)), -1);
	printf("pid of another task: %s\n", err);
	assert_int_equal(criu_image_set_pid(dir, 4321, err, sizeof(err)), 0);
	assert_int_equal(read_file(dir, "pstree.img", got, sizeof(got)),
	    sizeof(want));
	assert_memory_equal(got, want, sizeof(want));
	assert_int_equal(read_file(dir, "core-4321.img", got, sizeof(got)), 1);
	assert_int_equal(got[0], 'c');
	assert_int_equal(read_file(dir, "mm-4321.img", got, sizeof(got)), 1);
	assert_int_equal(read_file(dir, "core-301.img", got, sizeof(got)), 1);
	assert_int_equal(read_file(dir, "pages-300.img", got, sizeof(got)), 1);
	snprintf(path, sizeof(path), "%s/core-300.img", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	rm_rf(dir);
}

static void
test_criu_dump_errors(void **state)
{
	char why[512], err[512], dir[64];

	if (!criu_probe(why, sizeof(why)))
		skip();
	strcpy(dir, "/dev/shm/mpiv-test-criu-err-XXXXXX");
	assert_non_null(mkdtemp(dir));
	/* no such process: a clear error, not a hang */
	assert_int_equal(criu_dump(999999, dir, err, sizeof(err)), -1);
	printf("dump of a missing pid: %s\n", err);
	assert_true(strlen(err) > 10);
	rm_rf(dir);
}

int
main(void)
{
	/*
	 * Play the node agent: the processes dumped below must belong to a
	 * session whose leader is in our PID namespace (the node starts its
	 * ranks with setsid). Under a runner whose session leader is outside
	 * the namespace, a session of our own; if we lead a process group
	 * already (setsid refused), a child of ours runs the tests.
	 */
	if (setsid() < 0) {
		pid_t c = fork();
		int st;

		if (c < 0)
			return 1;
		if (c > 0) {
			while (waitpid(c, &st, 0) < 0)
				if (errno != EINTR)
					return 1;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		}
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setsid() < 0)
			return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack_roundtrip),
		cmocka_unit_test(test_pack_truncated_corrupt),
		cmocka_unit_test(test_unpack_rejects),
		cmocka_unit_test(test_criu_dump_restore),
		cmocka_unit_test(test_criu_generations),
		cmocka_unit_test(test_criu_pid_taken),
		cmocka_unit_test(test_image_set_pid),
		cmocka_unit_test(test_criu_dump_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
