/*
 * test_cs_proto.c: the checkpoint server over its wire protocol. Starts
 * the real CS (cs_main in a forked child on 127.0.0.1:0, a fresh temp
 * store per test), speaks raw frames to it as a node agent would, and
 * plays a tiny fake CM (a listening socket in this process) to see the
 * CkptDurable notices. Every wait is bounded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../checkpoint-server/cs.h"
#include "../../node-agent/criu.h"
#include "auth.h"
#include "cksum.h"
#include "frame.h"
#include "net.h"

#define TMO 5000	/* ms, every wait */

static pid_t cs_pid;
static char cs_addr[128];
static char store[256];
static int fakecm_fd = -1;
static char fakecm_addr[128];

/* ---------------- the daemon ---------------- */

static int
start_cs(const char *extra1, const char *extra2)
{
	int p[2];
	char line[256];
	size_t n = 0;
	struct pollfd pf;

	if (pipe(p) < 0)
		return -1;
	if ((cs_pid = fork()) < 0)
		return -1;
	if (cs_pid == 0) {
		char *argv[] = { "cs", "--listen", "127.0.0.1:0", "--store",
		    store, "--log-level",
		    getenv("CS_TEST_DEBUG") ? "debug" : "error",
		    (char *)extra1, (char *)extra2, NULL };
		/* cmocka's crash handlers would run the tests on in here */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		signal(SIGFPE, SIG_DFL);
		close(p[0]);
		dup2(p[1], 1);
		close(p[1]);
		alarm(120);	/* never outlive a wedged test run */
		/* the raw frames here are plaintext: the CS offers no cipher
		   (its encryption is test_auth's and test_seal's) */
		setenv("MPIV_INSECURE_PLAINTEXT", "1", 1);
		exit(cs_main(extra1 != NULL ? 9 : 7, argv));
	}
	close(p[1]);
	pf.fd = p[0];
	pf.events = POLLIN;
	while (n < sizeof(line) - 1) {
		if (poll(&pf, 1, TMO) <= 0 || read(p[0], line + n, 1) != 1)
			break;
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	close(p[0]);
	if (sscanf(line, "listening on %127s", cs_addr) != 1) {
		fprintf(stderr, "cs did not say where it listens: \"%s\"\n",
		    line);
		return -1;
	}
	return 0;
}

static int
stop_cs(void)
{
	int st = 0;
	pid_t r = 0;

	kill(cs_pid, SIGTERM);
	for (int i = 0; i < 500 && r == 0; i++) {
		r = waitpid(cs_pid, &st, WNOHANG);
		if (r == 0)
			usleep(10000);
	}
	if (r == 0) {
		kill(cs_pid, SIGKILL);
		waitpid(cs_pid, &st, 0);
		fprintf(stderr, "cs did not exit on SIGTERM\n");
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "cs exit status %d (leak or crash?)\n", st);
		return -1;
	}
	return 0;
}

static void
kill_cs_hard(void)
{
	int st;

	kill(cs_pid, SIGKILL);
	waitpid(cs_pid, &st, 0);
}

static int
setup(void **state)
{
	snprintf(store, sizeof(store), "/tmp/mpiv-cs-test-XXXXXX");
	if (mkdtemp(store) == NULL)
		return -1;
	fakecm_fd = net_listen("127.0.0.1:0", fakecm_addr,
	    sizeof(fakecm_addr));
	if (fakecm_fd < 0)
		return -1;
	/* prestate: an extra option, its value fixed here */
	if (*state == NULL)
		return start_cs(NULL, NULL);
	return start_cs(*state, strcmp(*state, "--keep") == 0 ? "2" :
	    "100000");
}

static int
teardown(void **state)
{
	char cmd[300];
	int r = stop_cs();

	close(fakecm_fd);
	fakecm_fd = -1;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store);
	if (system(cmd) != 0)
		r = -1;
	return r;
}

/* ---------------- a node agent, by hand ---------------- */

/* Dials the CS and reads its Challenge (auth=false: no secret). */
static int
cs_dial_raw(void)
{
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl;
	const char *err;
	int fd = net_dial(cs_addr, TMO);

	assert_true(fd >= 0);
	assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_CHALLENGE);
	assert_false(((Mpiv__Challenge *)m)->auth);
	frame_free_meta(m);
	free(pl);
	return fd;
}

static int
node_dial(void)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__HelloReply *r;
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl;
	const char *err;
	int fd = cs_dial_raw();

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_NODE;
	h.rank = -1;
	h.name = "test";
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
	assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_HELLO_REPLY);
	r = (Mpiv__HelloReply *)m;
	assert_true(r->ok);
	frame_free_meta(m);
	free(pl);
	return fd;
}

static void
fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
}

/* Incremental fields of the next put_begin (cleared after it). */
static struct {
	uint64_t parent, parent_digest, content_digest;
	uint32_t chain;
} put_incr;

static void
put_begin(int fd, const char *job, int32_t rank, uint64_t k, const char *cm)
{
	Mpiv__ImagePut put = MPIV__IMAGE_PUT__INIT;
	Mpiv__ImageMeta meta = MPIV__IMAGE_META__INIT;
	Mpiv__PipeInode pi = MPIV__PIPE_INODE__INIT, *pis[1] = { &pi };

	meta.parent_ckpt = put_incr.parent;
	meta.parent_digest = put_incr.parent_digest;
	meta.content_digest = put_incr.content_digest;
	meta.chain = put_incr.chain;
	memset(&put_incr, 0, sizeof(put_incr));

	meta.job_id = (char *)job;
	meta.rank = rank;
	meta.ckpt_no = k;
	meta.incarnation = 7;
	meta.event = 100 + k;
	meta.nd_no = 3;
	meta.out_base = 55;
	pi.fd = 1;
	pi.inode = 4242;
	meta.n_pipes = 1;
	meta.pipes = pis;
	meta.cm = (char *)(cm != NULL ? cm : "");
	put.meta = &meta;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_PUT,
	    &put.base, NULL, 0, TMO), 0);
}

static int
put_data(int fd, const uint8_t *data, size_t len)
{
	Mpiv__ImageData d = MPIV__IMAGE_DATA__INIT;

	return frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_DATA, &d.base, data,
	    (uint32_t)len, TMO);
}

static void
put_end(int fd, uint64_t bytes, uint64_t sum)
{
	Mpiv__ImageEnd e = MPIV__IMAGE_END__INIT;

	e.bytes = bytes;
	e.checksum = sum;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_END,
	    &e.base, NULL, 0, TMO), 0);
}

/* Reads the ImageAck; returns ok, copies the error. */
static bool
read_ack(int fd, uint64_t *k, char *why, size_t whylen)
{
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl;
	const char *err;
	Mpiv__ImageAck *a;
	bool ok;

	assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_IMAGE_ACK);
	a = (Mpiv__ImageAck *)m;
	ok = a->ok;
	if (k != NULL)
		*k = a->ckpt_no;
	if (why != NULL)
		snprintf(why, whylen, "%s", a->error);
	frame_free_meta(m);
	free(pl);
	return ok;
}

/* A whole upload on a fresh connection in chunks; returns ImageAck.ok. */
static bool
upload(const char *job, int32_t rank, uint64_t k, const uint8_t *data,
    size_t len, const char *cm, char *why, size_t whylen)
{
	int fd = node_dial();
	size_t off = 0, chunk = 65536 + 17;
	bool ok;

	put_begin(fd, job, rank, k, cm);
	while (off < len) {
		size_t n = len - off < chunk ? len - off : chunk;
		if (put_data(fd, data + off, n) < 0)
			break;	/* refused early: the ack says why */
		off += n;
	}
	if (off == len)
		put_end(fd, len, cksum_update(CKSUM_INIT, data, len));
	ok = read_ack(fd, NULL, why, whylen);
	close(fd);
	return ok;
}

static const char *slow_job;

/*
 * ImageGet (unless job is NULL: already sent for slow_job); returns found. The data land in a malloc'ed *out; the
 * ImageEnd must match them; the meta's ckpt_no goes to *k.
 */
static bool
download(int fd, const char *job, int32_t rank, uint64_t want, uint8_t **out,
    size_t *outlen, uint64_t *k, char *why, size_t whylen)
{
	Mpiv__ImageGet g = MPIV__IMAGE_GET__INIT;
	Mpiv__ImageInfo *info;
	Mpiv__ImageEnd *e;
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl, *buf = NULL;
	size_t len = 0;
	const char *err;
	bool found;

	g.job_id = (char *)job;
	g.rank = rank;
	g.ckpt_no = want;
	if (job != NULL)
		assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_GET,
		    &g.base, NULL, 0, TMO), 0);
	else
		job = slow_job;	/* the caller sent the ImageGet */
	assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_IMAGE_INFO);
	info = (Mpiv__ImageInfo *)m;
	found = info->found;
	if (why != NULL)
		snprintf(why, whylen, "%s", info->error);
	if (found) {
		assert_non_null(info->meta);
		assert_string_equal(info->meta->job_id, job);
		assert_int_equal(info->meta->rank, rank);
		assert_int_equal(info->meta->event, 100 + info->meta->ckpt_no);
		assert_int_equal(info->meta->n_pipes, 1);
		assert_int_equal(info->meta->pipes[0]->inode, 4242);
		if (k != NULL)
			*k = info->meta->ckpt_no;
	}
	frame_free_meta(m);
	free(pl);
	if (!found)
		return false;
	for (;;) {
		assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
		if (fh.type == MPIV__MSG_TYPE__MSG_IMAGE_END)
			break;
		assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_IMAGE_DATA);
		assert_true(fh.payload_len <= 256 * 1024);
		buf = realloc(buf, len + fh.payload_len + 1);
		assert_non_null(buf);
		memcpy(buf + len, pl, fh.payload_len);
		len += fh.payload_len;
		frame_free_meta(m);
		free(pl);
	}
	e = (Mpiv__ImageEnd *)m;
	assert_int_equal(e->bytes, len);
	assert_int_equal(e->checksum, cksum_update(CKSUM_INIT, buf, len));
	frame_free_meta(m);
	free(pl);
	*out = buf;
	*outlen = len;
	return true;
}

/* Downloads (job, rank, want) and compares with data. */
static void
expect_image(const char *job, int32_t rank, uint64_t want, uint64_t k,
    const uint8_t *data, size_t len)
{
	int fd = node_dial();
	uint8_t *got = NULL;
	size_t glen = 0;
	uint64_t gk = 0;
	char why[256];

	assert_true(download(fd, job, rank, want, &got, &glen, &gk, why,
	    sizeof(why)));
	assert_int_equal(gk, k);
	assert_int_equal(glen, len);
	assert_memory_equal(got, data, len);
	free(got);
	close(fd);
}

static int
count_files(const char *job, int rank, const char *prefix)
{
	char path[512];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s/%d", store, job, rank);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

static bool
file_exists(const char *job, int rank, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/%d/%s", store, job, rank, name);
	return access(path, F_OK) == 0;
}

/* Waits (bounded) until a rank directory holds `want` tmp-* files. */
static void
wait_tmp(const char *job, int rank, int want)
{
	for (int i = 0; i < TMO / 10; i++) {
		if (count_files(job, rank, "tmp-") == want)
			return;
		usleep(10000);
	}
	fail_msg("rank dir still has %d temp files, want %d",
	    count_files(job, rank, "tmp-"), want);
}

static void
assert_cs_alive(void)
{
	assert_int_equal(waitpid(cs_pid, NULL, WNOHANG), 0);
	close(node_dial());
}

/* ---------------- tests ---------------- */

static void
test_roundtrip(void **state)
{
	size_t len = (1 << 20) + 13;
	uint8_t *data = malloc(len);
	char why[256], cur[32] = "";
	FILE *f;
	char path[512];

	fill(data, len, 1);
	assert_true(upload("j1", 0, 1, data, len, NULL, why, sizeof(why)));
	expect_image("j1", 0, 0, 1, data, len);
	expect_image("j1", 0, 1, 1, data, len);
	assert_true(file_exists("j1", 0, "ckpt-1.img"));
	assert_true(file_exists("j1", 0, "ckpt-1.meta"));
	snprintf(path, sizeof(path), "%s/j1/0/current", store);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(cur, sizeof(cur), f));
	fclose(f);
	assert_string_equal(cur, "1\n");
	assert_int_equal(count_files("j1", 0, "tmp-"), 0);
	/* An empty image is an image too. */
	assert_true(upload("j1", 1, 1, data, 0, NULL, why, sizeof(why)));
	expect_image("j1", 1, 0, 1, data, 0);
	free(data);
}

/* Four ranks upload at once, their frames interleaved. */
static void
test_concurrent(void **state)
{
	enum { N = 4, LEN = 300000, CH = 10000 };
	static uint8_t data[N][LEN];
	int fd[N];
	size_t off = 0;

	for (int r = 0; r < N; r++) {
		fill(data[r], LEN, 100 + r);
		fd[r] = node_dial();
		put_begin(fd[r], "jc", r, 5, NULL);
	}
	while (off < LEN) {
		size_t n = LEN - off < CH ? LEN - off : CH;
		for (int r = 0; r < N; r++)
			assert_int_equal(put_data(fd[r], data[r] + off, n), 0);
		off += n;
	}
	for (int r = N - 1; r >= 0; r--)
		put_end(fd[r], LEN, cksum_update(CKSUM_INIT, data[r], LEN));
	for (int r = 0; r < N; r++) {
		uint64_t k = 0;
		assert_true(read_ack(fd[r], &k, NULL, 0));
		assert_int_equal(k, 5);
		close(fd[r]);
	}
	for (int r = 0; r < N; r++)
		expect_image("jc", r, 0, 5, data[r], LEN);
}

/* A connection cut mid-upload: temp file gone, current untouched. */
static void
test_truncated(void **state)
{
	static uint8_t a[200000], b[200000];
	char why[256];
	int fd;

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	assert_true(upload("jt", 3, 1, a, sizeof(a), NULL, why, sizeof(why)));
	fd = node_dial();
	put_begin(fd, "jt", 3, 2, NULL);
	assert_int_equal(put_data(fd, b, 50000), 0);
	wait_tmp("jt", 3, 1);
	/* Half a frame, then hang up. */
	assert_int_equal(write(fd, "\x4d\x56\x00\x47\x00\x00", 6), 6);
	close(fd);
	wait_tmp("jt", 3, 0);
	assert_false(file_exists("jt", 3, "ckpt-2.img"));
	expect_image("jt", 3, 0, 1, a, sizeof(a));
	assert_cs_alive();
}

static void
test_checksum_and_size_mismatch(void **state)
{
	static uint8_t a[5000];
	char why[256];
	int fd;

	fill(a, sizeof(a), 3);
	assert_true(upload("jm", 0, 1, a, sizeof(a), NULL, why, sizeof(why)));

	fd = node_dial();
	put_begin(fd, "jm", 0, 2, NULL);
	assert_int_equal(put_data(fd, a, sizeof(a)), 0);
	put_end(fd, sizeof(a), cksum_update(CKSUM_INIT, a, sizeof(a)) ^ 1);
	assert_false(read_ack(fd, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "checksum"));
	close(fd);

	fd = node_dial();
	put_begin(fd, "jm", 0, 2, NULL);
	assert_int_equal(put_data(fd, a, sizeof(a)), 0);
	put_end(fd, sizeof(a) + 1, cksum_update(CKSUM_INIT, a, sizeof(a)));
	assert_false(read_ack(fd, NULL, why, sizeof(why)));
	assert_non_null(strstr(why, "size"));
	close(fd);

	wait_tmp("jm", 0, 0);
	assert_false(file_exists("jm", 0, "ckpt-2.img"));
	assert_false(file_exists("jm", 0, "ckpt-2.meta"));
	expect_image("jm", 0, 0, 1, a, sizeof(a));
}

static void
test_missing(void **state)
{
	static uint8_t a[100];
	char why[256];
	uint8_t *got;
	size_t glen;
	int fd = node_dial();

	assert_false(download(fd, "nojob", 0, 0, &got, &glen, NULL, why,
	    sizeof(why)));
	assert_true(strlen(why) > 0);
	/* The connection stays usable after a miss. */
	assert_true(upload("jx", 0, 1, a, sizeof(a), NULL, why, sizeof(why)));
	assert_false(download(fd, "jx", 0, 9, &got, &glen, NULL, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "not stored"));
	assert_false(download(fd, "jx", 1, 0, &got, &glen, NULL, why,
	    sizeof(why)));
	assert_false(download(fd, "../jx", 0, 0, &got, &glen, NULL, why,
	    sizeof(why)));
	close(fd);
}

static void
test_stale(void **state)
{
	static uint8_t a[1000];
	char why[256];

	fill(a, sizeof(a), 4);
	assert_true(upload("js", 0, 2, a, sizeof(a), NULL, why, sizeof(why)));
	assert_false(upload("js", 0, 2, a, sizeof(a), NULL, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "stale"));
	assert_false(upload("js", 0, 1, a, sizeof(a), NULL, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "stale"));
	assert_false(upload("js", 0, 0, a, sizeof(a), NULL, why,
	    sizeof(why)));
	assert_false(upload("js", 0, UINT64_MAX, a, sizeof(a), NULL, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "checkpoint number"));
	assert_true(upload("js", 0, 3, a, sizeof(a), NULL, why, sizeof(why)));
	wait_tmp("js", 0, 0);
}

/* Runs with --keep 2 (see main). */
static void
test_keep(void **state)
{
	static uint8_t a[4][3000];
	char why[256];
	uint8_t *got;
	size_t glen;
	int fd;

	for (int k = 1; k <= 4; k++) {
		fill(a[k - 1], sizeof(a[0]), 10 + k);
		assert_true(upload("jk", 1, k, a[k - 1], sizeof(a[0]), NULL,
		    why, sizeof(why)));
	}
	assert_int_equal(count_files("jk", 1, "ckpt-"), 2 * 3);
	assert_false(file_exists("jk", 1, "ckpt-1.img"));
	assert_false(file_exists("jk", 1, "ckpt-2.meta"));
	assert_true(file_exists("jk", 1, "ckpt-3.img"));
	expect_image("jk", 1, 3, 3, a[2], sizeof(a[0]));
	expect_image("jk", 1, 0, 4, a[3], sizeof(a[0]));
	fd = node_dial();
	assert_false(download(fd, "jk", 1, 1, &got, &glen, NULL, why,
	    sizeof(why)));
	close(fd);
}

/* Accepts the CS on the fake CM and reads one frame (bounded). */
static int
fakecm_accept(void)
{
	struct pollfd pf = { .fd = fakecm_fd, .events = POLLIN };
	int fd;

	if (poll(&pf, 1, TMO) != 1)
		return -1;
	fd = accept(fakecm_fd, NULL, NULL);
	if (fd >= 0) {
		/* every dialler waits for a server's Challenge: one without
		   a secret or a cipher */
		Mpiv__Challenge ch = MPIV__CHALLENGE__INIT;
		uint8_t nonce[32] = { 7 };

		ch.version = AUTH_VERSION;
		ch.nonce.data = nonce;
		ch.nonce.len = sizeof(nonce);
		if (frame_write(fd, MPIV__MSG_TYPE__MSG_CHALLENGE, &ch.base,
		    NULL, 0, TMO) < 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void
test_durable(void **state)
{
	static uint8_t a[70000];
	Mpiv__CkptDurable *d;
	Mpiv__Hello *h;
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl;
	const char *err;
	char why[256];
	struct pollfd pf = { .fd = fakecm_fd, .events = POLLIN };
	int fd, cfd;

	fill(a, sizeof(a), 5);
	/* A failed upload says nothing to the CM. */
	fd = node_dial();
	put_begin(fd, "jd", 2, 4, fakecm_addr);
	assert_int_equal(put_data(fd, a, sizeof(a)), 0);
	put_end(fd, sizeof(a), 12345);
	assert_false(read_ack(fd, NULL, NULL, 0));
	close(fd);
	assert_int_equal(poll(&pf, 1, 300), 0);

	assert_true(upload("jd", 2, 4, a, sizeof(a), fakecm_addr, why,
	    sizeof(why)));
	assert_true((cfd = fakecm_accept()) >= 0);
	assert_int_equal(frame_read(cfd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_HELLO);
	h = (Mpiv__Hello *)m;
	assert_int_equal(h->role, MPIV__ROLE__ROLE_CS);
	assert_int_equal(h->version, FRAME_VERSION);
	assert_string_equal(h->job_id, "jd");
	frame_free_meta(m);
	free(pl);
	assert_int_equal(frame_read(cfd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_CKPT_DURABLE);
	d = (Mpiv__CkptDurable *)m;
	assert_string_equal(d->job_id, "jd");
	assert_int_equal(d->rank, 2);
	assert_int_equal(d->ckpt_no, 4);
	assert_int_equal(d->incarnation, 7);
	frame_free_meta(m);
	free(pl);

	/* The next one reuses the link. */
	assert_true(upload("jd", 2, 5, a, 10, fakecm_addr, why, sizeof(why)));
	assert_int_equal(frame_read(cfd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_CKPT_DURABLE);
	assert_int_equal(((Mpiv__CkptDurable *)m)->ckpt_no, 5);
	frame_free_meta(m);
	free(pl);

	/*
	 * The CM goes away: the CS redials and sends the next one (and the
	 * previous, still within its grace), at once, no pause needed.
	 */
	close(cfd);
	assert_true(upload("jd", 2, 6, a, 10, fakecm_addr, why, sizeof(why)));
	assert_true((cfd = fakecm_accept()) >= 0);
	assert_int_equal(frame_read(cfd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_HELLO);
	frame_free_meta(m);
	free(pl);
	for (;;) {
		assert_int_equal(frame_read(cfd, &fh, &m, &pl, TMO, &err), 0);
		assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_CKPT_DURABLE);
		d = (Mpiv__CkptDurable *)m;
		uint64_t k = d->ckpt_no;
		frame_free_meta(m);
		free(pl);
		if (k == 6)
			break;
	}
	close(cfd);
}

static void
test_bad_names(void **state)
{
	static const char *const bad[] = {
		"../x", "a/b", "", ".", "..", ".hidden", "a b", "x\n",
	};
	static uint8_t a[10];
	char why[256], lng[300];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(upload(bad[i], 0, 1, a, sizeof(a), NULL, why,
		    sizeof(why)));
		assert_non_null(strstr(why, "job id"));
	}
	memset(lng, 'a', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	assert_false(upload(lng, 0, 1, a, sizeof(a), NULL, why, sizeof(why)));
	assert_false(upload("ok", -1, 1, a, sizeof(a), NULL, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "rank"));
	assert_false(upload("ok", 0, 1, a, sizeof(a), "no-port", why,
	    sizeof(why)));
	/* Nothing was created for any of them. */
	DIR *d = opendir(store);
	struct dirent *de;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		assert_true(de->d_name[0] == '.');
	closedir(d);
	assert_cs_alive();
}

/* Runs with --max-image 100000 (see main). */
static void
test_limits(void **state)
{
	static uint8_t a[150000];
	Mpiv__Hello h = MPIV__HELLO__INIT;
	struct frame_hdr fh;
	ProtobufCMessage *m;
	uint8_t *pl;
	const char *err;
	char why[256];
	int fd;

	assert_false(upload("jl", 0, 1, a, sizeof(a), NULL, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "limit"));
	wait_tmp("jl", 0, 0);
	assert_true(upload("jl", 0, 1, a, 100000, NULL, why, sizeof(why)));
	/* A rank may not talk to a CS. */
	fd = cs_dial_raw();
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_RANK;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
	assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
	assert_false(((Mpiv__HelloReply *)m)->ok);
	frame_free_meta(m);
	free(pl);
	close(fd);
	/* ImageData outside an upload. */
	fd = node_dial();
	assert_int_equal(put_data(fd, a, 10), 0);
	assert_int_equal(frame_read(fd, &fh, &m, &pl, TMO, &err), 0);
	assert_int_equal(fh.type, MPIV__MSG_TYPE__MSG_ERROR);
	frame_free_meta(m);
	free(pl);
	close(fd);
	assert_cs_alive();
}

static void
test_garbage(void **state)
{
	uint8_t junk[4096], b;
	struct pollfd pf;
	static uint8_t a[1000];
	char why[256];
	int fd;

	for (int round = 0; round < 3; round++) {
		fd = round == 2 ? node_dial() : net_dial(cs_addr, TMO);
		assert_true(fd >= 0);
		fill(junk, sizeof(junk), 77 + round);
		if (round == 1)
			memcpy(junk, "\x4d\x56\x00\x46\xff\xff\xff\xff", 8);
		(void)write(fd, junk, sizeof(junk));
		pf.fd = fd;
		pf.events = POLLIN;
		/* The CS closes on us (after an Error frame, maybe). */
		for (;;) {
			assert_int_equal(poll(&pf, 1, TMO), 1);
			ssize_t n = read(fd, &b, 1);
			if (n <= 0)
				break;
		}
		close(fd);
	}
	assert_cs_alive();
	assert_true(upload("jg", 0, 1, a, sizeof(a), NULL, why, sizeof(why)));
}

/* SIGKILL mid-upload, restart: the old image is served, temp file gone. */
static void
test_sigkill_restart(void **state)
{
	static uint8_t a[100000], b[100000];
	char why[256];
	int fd;

	fill(a, sizeof(a), 8);
	fill(b, sizeof(b), 9);
	assert_true(upload("jr", 0, 1, a, sizeof(a), NULL, why, sizeof(why)));
	fd = node_dial();
	put_begin(fd, "jr", 0, 2, NULL);
	assert_int_equal(put_data(fd, b, 30000), 0);
	wait_tmp("jr", 0, 1);
	kill_cs_hard();
	close(fd);
	assert_int_equal(count_files("jr", 0, "tmp-"), 1);
	assert_int_equal(start_cs(NULL, NULL), 0);
	assert_int_equal(count_files("jr", 0, "tmp-"), 0);
	expect_image("jr", 0, 0, 1, a, sizeof(a));
	/* And the store goes on from there. */
	assert_true(upload("jr", 0, 2, b, sizeof(b), NULL, why, sizeof(why)));
	expect_image("jr", 0, 0, 2, b, sizeof(b));
}


static void
write_store_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", store, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * A crash after the commit rename but before `current` moved, plus
 * leftovers of other crashes: recovery serves the newest complete image
 * and removes the rest.
 */
static void
test_recovery(void **state)
{
	static uint8_t a[20000], b[30000];
	char why[256];
	FILE *f;
	char path[512], cur[32] = "";

	fill(a, sizeof(a), 20);
	fill(b, sizeof(b), 21);
	assert_true(upload("jv", 4, 1, a, sizeof(a), NULL, why, sizeof(why)));
	assert_true(upload("jv", 4, 2, b, sizeof(b), NULL, why, sizeof(why)));
	kill_cs_hard();
	write_store_file("jv/4/current", "1\n");	/* lagging */
	write_store_file("jv/4/tmp-current", "9\n");
	write_store_file("jv/4/ckpt-7.meta", "orphan");
	write_store_file("jv/4/ckpt-6.img", "no meta, no sum");
	write_store_file("jv/4/tmp-3-0123456789abcdef", "half an image");
	assert_int_equal(start_cs(NULL, NULL), 0);
	assert_int_equal(count_files("jv", 4, "tmp-"), 0);
	assert_false(file_exists("jv", 4, "ckpt-7.meta"));
	assert_false(file_exists("jv", 4, "ckpt-6.img"));
	snprintf(path, sizeof(path), "%s/jv/4/current", store);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(cur, sizeof(cur), f));
	fclose(f);
	assert_string_equal(cur, "2\n");
	expect_image("jv", 4, 0, 2, b, sizeof(b));
	expect_image("jv", 4, 1, 1, a, sizeof(a));
}

/* ---------------- incremental images ---------------- */

static int
chain_out(void *ctx, const void *buf, size_t len)
{
	struct { uint8_t *p; size_t len; } *m = ctx;

	m->p = realloc(m->p, m->len + len);
	assert_non_null(m->p);
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

/* A dump-like directory: pages (blocks from seed, `changed` of them
 * different), a core file. */
static void
chain_dir(const char *dir, unsigned seed, int changed)
{
	static uint8_t pages[40 * CRIU_BLOCK + 123];
	char path[600];
	FILE *f;

	fill(pages, sizeof(pages), seed);
	for (int i = 0; i < changed; i++)
		pages[(size_t)(i * 7 % 40) * CRIU_BLOCK + 5] ^= 0xa5;
	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/pages-1.img", dir);
	assert_non_null(f = fopen(path, "w"));
	fwrite(pages, 1, sizeof(pages), f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/core-1.img", dir);
	assert_non_null(f = fopen(path, "w"));
	fwrite(pages + 11, 1, 321, f);
	fclose(f);
}

/* Packs dir full (d == NULL) or as a delta over d; uploads it as
 * checkpoint k with the incremental fields. */
static bool
chain_upload(const char *dir, uint64_t k, const struct criu_scan *sc,
    const struct criu_dedup *d, uint64_t parent, uint64_t pdig,
    uint32_t chain, char *why, size_t whylen)
{
	struct { uint8_t *p; size_t len; } m = { NULL, 0 };
	bool ok;

	if (d != NULL)
		assert_int_equal(criu_pack_delta(dir, sc, d, 3, chain_out, &m,
		    NULL), 0);
	else
		assert_int_equal(criu_pack_dir(dir, 3, chain_out, &m, NULL), 0);
	put_incr.parent = parent;
	put_incr.parent_digest = pdig;
	put_incr.chain = chain;
	put_incr.content_digest = sc->digest;
	ok = upload("jc", 0, k, m.p, m.len, NULL, why, whylen);
	free(m.p);
	return ok;
}

/* Downloads checkpoint k (0: current); its unpacked archive must have
 * digest dig. */
static void
chain_expect(uint64_t k, uint64_t dig)
{
	struct criu_unpack *u;
	char dir[600], cmd[700], why[256];
	uint8_t *got = NULL;
	size_t glen = 0;
	uint64_t gk = 0;
	int fd = node_dial();

	assert_true(download(fd, "jc", 0, k, &got, &glen, &gk, why,
	    sizeof(why)));
	close(fd);
	if (k != 0)
		assert_int_equal(gk, k);
	snprintf(dir, sizeof(dir), "%s/unpacked-%llu", store,
	    (unsigned long long)k);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_non_null(u = criu_unpack_stream_new(dir, 0, 0));
	assert_int_equal(criu_unpack_stream_feed(u, got, glen), 0);
	assert_int_equal(criu_unpack_stream_finish(u), 0);
	assert_true(criu_unpack_stream_digest(u) == dig);
	criu_unpack_stream_free(u);
	free(got);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Runs with --keep 2. Full 1, deltas 2 (over 1) and 3 (over 2) rebuilt
 * on download; pruning keeps the chains the newest two need; deltas over
 * a wrong, pruned or mismatched parent refused; a parent changed on disk
 * fails the child's download; a restart removes a delta whose parent
 * is gone.
 */
static void
test_incremental(void **state)
{
	struct criu_scan s1, s2, s3, s4, s5;
	struct criu_dedup *d;
	char a[600], b[600], c[600], why[256], path[700];
	uint8_t *got;
	size_t glen;
	FILE *f;
	int fd;

	snprintf(a, sizeof(a), "%s/dir-a", store);
	snprintf(b, sizeof(b), "%s/dir-b", store);
	snprintf(c, sizeof(c), "%s/dir-c", store);
	chain_dir(a, 7, 0);
	chain_dir(b, 7, 3);
	chain_dir(c, 8, 0);
	assert_int_equal(criu_scan_dir(a, &s1), 0);
	assert_int_equal(criu_scan_dir(b, &s2), 0);
	assert_int_equal(criu_scan_dir(b, &s3), 0);
	assert_int_equal(criu_scan_dir(c, &s4), 0);
	assert_int_equal(criu_scan_dir(a, &s5), 0);

	assert_true(chain_upload(a, 1, &s1, NULL, 0, 0, 0, why, sizeof(why)));
	d = criu_dedup_new(s1.blocks, s1.nblocks);
	assert_true(chain_upload(b, 2, &s2, d, 1, s1.digest, 1, why,
	    sizeof(why)));
	criu_dedup_free(d);
	d = criu_dedup_new(s2.blocks, s2.nblocks);
	assert_true(chain_upload(b, 3, &s3, d, 2, s2.digest, 2, why,
	    sizeof(why)));
	criu_dedup_free(d);
	chain_expect(2, s2.digest);
	chain_expect(3, s3.digest);
	chain_expect(0, s3.digest);
	/* keep 2: 3 and 2, and 1 under them */
	assert_true(file_exists("jc", 0, "ckpt-1.img"));

	/* a delta whose parent digest is not the stored one */
	d = criu_dedup_new(s3.blocks, s3.nblocks);
	assert_false(chain_upload(b, 4, &s3, d, 3, s3.digest ^ 1, 3, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "not the one"));
	/* a chain length that does not follow */
	assert_false(chain_upload(b, 4, &s3, d, 3, s3.digest, 7, why,
	    sizeof(why)));
	criu_dedup_free(d);

	/* full 4, then 5 over 4: 1, 2, 3 go */
	assert_true(chain_upload(c, 4, &s4, NULL, 0, 0, 0, why, sizeof(why)));
	assert_true(file_exists("jc", 0, "ckpt-1.img"));
	d = criu_dedup_new(s4.blocks, s4.nblocks);
	assert_true(chain_upload(a, 5, &s5, d, 4, s4.digest, 1, why,
	    sizeof(why)));
	criu_dedup_free(d);
	assert_false(file_exists("jc", 0, "ckpt-1.img"));
	assert_false(file_exists("jc", 0, "ckpt-3.meta"));
	assert_true(file_exists("jc", 0, "ckpt-4.img"));
	chain_expect(5, s5.digest);
	/* over a pruned parent */
	d = criu_dedup_new(s3.blocks, s3.nblocks);
	assert_false(chain_upload(b, 6, &s3, d, 3, s3.digest, 3, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "not stored"));
	criu_dedup_free(d);

	/* the parent's bytes changed on disk (same size): no rebuild */
	snprintf(path, sizeof(path), "%s/jc/0/ckpt-4.img", store);
	assert_non_null(f = fopen(path, "r+"));
	fseek(f, 40, SEEK_SET);
	fputc(fgetc(f) ^ 0x20, f);
	fclose(f);
	fd = node_dial();
	assert_false(download(fd, "jc", 0, 5, &got, &glen, NULL, why,
	    sizeof(why)));
	close(fd);
	assert_non_null(strstr(why, "changed on disk"));

	/* the parent gone while the CS was down: the child goes too */
	kill_cs_hard();
	assert_int_equal(unlink(path), 0);
	assert_int_equal(start_cs("--keep", "2"), 0);
	assert_false(file_exists("jc", 0, "ckpt-5.img"));
	assert_false(file_exists("jc", 0, "ckpt-5.meta"));
	fd = node_dial();
	assert_false(download(fd, "jc", 0, 0, &got, &glen, NULL, why,
	    sizeof(why)));
	close(fd);

	criu_scan_free(&s1);
	criu_scan_free(&s2);
	criu_scan_free(&s3);
	criu_scan_free(&s4);
	criu_scan_free(&s5);
}

/* A home CM nobody listens on: the upload still succeeds, the CS lives. */
static void
test_cm_unreachable(void **state)
{
	static uint8_t a[1000];
	char why[256], dead[128];
	int lfd = net_listen("127.0.0.1:0", dead, sizeof(dead));

	assert_true(lfd >= 0);
	close(lfd);	/* nobody there any more */
	assert_true(upload("ju", 0, 1, a, sizeof(a), dead, why, sizeof(why)));
	usleep(700000);	/* a few redials */
	assert_true(upload("ju", 0, 2, a, sizeof(a), dead, why, sizeof(why)));
	assert_cs_alive();
}

/* A large image to a reader that stalls: back-pressure, then it all comes. */
static void
test_slow_reader(void **state)
{
	size_t len = 6u << 20;
	uint8_t *data = malloc(len), *got = NULL;
	char why[256];
	size_t glen = 0;
	int fd, rcv = 64 * 1024;
	Mpiv__ImageGet g = MPIV__IMAGE_GET__INIT;

	g.job_id = "jw";
	fill(data, len, 30);
	assert_true(upload("jw", 0, 1, data, len, NULL, why, sizeof(why)));
	fd = node_dial();
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_GET,
	    &g.base, NULL, 0, TMO), 0);
	usleep(300000);	/* read nothing: the CS must stop queueing */
	slow_job = "jw";
	assert_true(download(fd, NULL, 0, 0, &got, &glen, NULL, why,
	    sizeof(why)));
	assert_int_equal(glen, len);
	assert_memory_equal(got, data, len);
	free(got);
	close(fd);
	free(data);
}

int
main(void)
{
	static char keep[] = "--keep", maximg[] = "--max-image";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checksum_and_size_mismatch,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_keep, setup,
		    teardown, keep),
		cmocka_unit_test_setup_teardown(test_durable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_limits, setup,
		    teardown, maximg),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_restart, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
		cmocka_unit_test_prestate_setup_teardown(test_incremental,
		    setup, teardown, keep),
		cmocka_unit_test_setup_teardown(test_cm_unreachable, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_slow_reader, setup,
		    teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
