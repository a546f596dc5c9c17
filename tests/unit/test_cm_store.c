/*
 * test_cm_store.c: a real CM with --store, killed with SIGKILL and started
 * again on its store (channel-memory/store.c, recover.c).
 *
 * The first life: job "s" of 2 ranks (this CM home of both: each gets
 * an NdLog after its HelloReply); rank 1 sends
 * NMSG messages to rank 0 (tag i, payload of i-dependent size and bytes,
 * one of 0 bytes and one of 200 KB), rank 0 takes NRECV of them with
 * receives of any tag, probes three times for a tag nobody sends (folded
 * misses), records a non-deterministic outcome, and rank 1 flushes. Then
 * the CM is killed.
 *
 *   recovered   the store as written: JobSetup answers "recovered", rank
 *               1 is told it holds all NMSG sends, rank 0 gets its outcome
 *               back, its receives and probes replayed, then the rest of
 *               the messages: every receive i gets message i, intact
 *   truncated   the same store cut at every record boundary (and a byte
 *               before and after) and at random points: the CM either
 *               recovers a prefix (the job continues: rank 1 re-sends
 *               what the CM says it lacks, and every receive i still gets
 *               message i) or drops the file (answers "ready"); it never
 *               crashes
 *   corrupt     a byte of a record in the middle flipped: the file is
 *               dropped ("ready")
 *   locked      a second CM on the same store refuses to start
 */
#include "cm_harness.h"

#include <fcntl.h>
#include <sys/stat.h>

#define NMSG	20
#define NRECV	12
#define NPROBE	3
#define BIGMSG	7		/* the 200 KB one */
#define ZEROMSG 3		/* the empty one */

static char store_dir[64];
static uint8_t *orig;		/* the store file after the first life */
static size_t orig_len;
static char orig_name[256];

static size_t
msg_len(int i)
{
	return i == ZEROMSG ? 0 : i == BIGMSG ? 200000 : (size_t)(i * 37 % 300 +
	    1);
}

static void
msg_fill(uint8_t *p, int i)
{
	for (size_t k = 0; k < msg_len(i); k++)
		p[k] = (uint8_t)(i * 131 + k * 7);
}

static const char *
job_setup_state(char *state, size_t cap)
{
	Mpiv__JobSetup js = MPIV__JOB_SETUP__INIT;
	Mpiv__JobStatus *st;

	js.job_id = "s";
	js.nranks = 2;
	js.ncms = 1;
	st = job_setup(&js);
	snprintf(state, cap, "%s", st->state);
	frame_free_meta(&st->base);
	return state;
}

/* A rank's connection; *last_seq gets what the CM holds from it to 0. */
static int
rank_conn(int rank, uint32_t inc, uint64_t *last_seq)
{
	int fd = dial();
	Mpiv__HelloReply *hr = hello(fd, MPIV__ROLE__ROLE_RANK, "s", rank, inc,
	    FRAME_VERSION);

	if (!hr->ok)
		fail_msg("hello refused: %s", hr->error);
	if (last_seq != NULL)
		*last_seq = hr->n_last_seq > 0 ? hr->last_seq[0] : 0;
	frame_free_meta(&hr->base);
	return fd;
}

static void
send_msg(int fd, int i)
{
	Mpiv__Send snd = MPIV__SEND__INIT;
	uint8_t *p = malloc(msg_len(i) + 1);

	msg_fill(p, i);
	snd.src = 1;
	snd.dst = 0;
	snd.tag = i;
	snd.seq = (uint64_t)i;
	snd.digest = 1000 + (uint64_t)i;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SEND, &snd.base,
	    p, (uint32_t)msg_len(i), TMO), 0);
	free(p);
}

static void
flush(int fd)
{
	Mpiv__Flush fl = MPIV__FLUSH__INIT;
	Mpiv__FlushAck *a;

	fl.id = 5;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_FLUSH, &fl.base,
	    NULL, 0, TMO), 0);
	a = (Mpiv__FlushAck *)expect(fd, MPIV__MSG_TYPE__MSG_FLUSH_ACK, NULL,
	    NULL);
	assert_int_equal(a->id, 5);
	frame_free_meta(&a->base);
}

/* Receive post_no of any tag must bring message i, intact. */
static void
recv_msg(int fd, uint64_t post_no, int i)
{
	Mpiv__RecvPost rp = MPIV__RECV_POST__INIT;
	Mpiv__Deliver *d;
	uint8_t *p, *want = malloc(msg_len(i) + 1);
	uint32_t len;

	rp.req_id = post_no;
	rp.source = -1;
	rp.tag = -1;
	rp.post_no = post_no;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_RECV_POST,
	    &rp.base, NULL, 0, TMO), 0);
	d = (Mpiv__Deliver *)expect(fd, MPIV__MSG_TYPE__MSG_DELIVER, &p, &len);
	if (d->tag != i || d->seq != (uint64_t)i || len != msg_len(i))
		fail_msg("receive %llu: tag %d seq %llu len %u, want message "
		    "%d (%zu bytes)", (unsigned long long)post_no, d->tag,
		    (unsigned long long)d->seq, len, i, msg_len(i));
	msg_fill(want, i);
	assert_memory_equal(p, want, len);
	frame_free_meta(&d->base);
	free(p);
	free(want);
}

static void
probe_miss(int fd, uint64_t post_no)
{
	Mpiv__Probe pr = MPIV__PROBE__INIT;
	Mpiv__ProbeReply *r;

	pr.req_id = post_no;
	pr.source = -1;
	pr.tag = 999;
	pr.post_no = post_no;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_PROBE, &pr.base,
	    NULL, 0, TMO), 0);
	r = (Mpiv__ProbeReply *)expect(fd, MPIV__MSG_TYPE__MSG_PROBE_REPLY,
	    NULL, NULL);
	assert_false(r->found);
	frame_free_meta(&r->base);
}

/* Rank 0's NdLog after its Hello: how many outcomes it holds. */
static size_t
nd_log(int fd)
{
	Mpiv__NdLog *lg;
	size_t n = 0;
	bool last;

	do {
		lg = (Mpiv__NdLog *)expect(fd, MPIV__MSG_TYPE__MSG_ND_LOG, NULL,
		    NULL);
		n += lg->n_outcomes;
		last = lg->last;
		frame_free_meta(&lg->base);
	} while (!last);
	return n;
}

static void
kill_cm(void)
{
	if (ctl_fd >= 0)
		close(ctl_fd);
	ctl_fd = -1;
	kill(cm_pid, SIGKILL);
	waitpid(cm_pid, NULL, 0);
}

/* The one job file in store_dir: its name (false: none). */
static bool
store_file(char *path, size_t cap)
{
	char cmd[256];
	FILE *f;
	bool ok;

	snprintf(cmd, sizeof(cmd), "ls %s/job-*.log 2>/dev/null", store_dir);
	f = popen(cmd, "r");
	ok = f != NULL && fgets(path, (int)cap, f) != NULL;
	if (f != NULL)
		pclose(f);
	if (ok)
		path[strcspn(path, "\n")] = '\0';
	return ok;
}

static void
first_life(void)
{
	char state[32];
	int r0, r1;
	Mpiv__NdRecord nr = MPIV__ND_RECORD__INIT;
	Mpiv__NdOutcome o = MPIV__ND_OUTCOME__INIT, *op = &o;
	Mpiv__NdAck *ack;

	assert_int_equal(start_cm(NULL), 0);
	assert_string_equal(job_setup_state(state, sizeof(state)), "ready");
	r0 = rank_conn(0, 1, NULL);
	assert_int_equal(nd_log(r0), 0);
	r1 = rank_conn(1, 1, NULL);
	assert_int_equal(nd_log(r1), 0);
	for (int i = 1; i <= NMSG; i++)
		send_msg(r1, i);
	flush(r1);
	for (int i = 1; i <= NRECV; i++)
		recv_msg(r0, (uint64_t)i, i);
	for (int i = 1; i <= NPROBE; i++)
		probe_miss(r0, NRECV + (uint64_t)i);
	o.nd_no = 1;
	o.kind = 2;
	o.flag = true;
	nr.ack_id = 1;
	nr.n_outcomes = 1;
	nr.outcomes = &op;
	assert_int_equal(frame_write(r0, MPIV__MSG_TYPE__MSG_ND_RECORD,
	    &nr.base, NULL, 0, TMO), 0);
	ack = (Mpiv__NdAck *)expect(r0, MPIV__MSG_TYPE__MSG_ND_ACK, NULL, NULL);
	frame_free_meta(&ack->base);
	kill_cm();
	close(r0);
	close(r1);
}

/*
 * Starts a CM on store_dir and checks what it recovered. Returns true
 * when it recovered the job (and every message then came through in
 * order), false when it dropped the file.
 */
static bool
second_life(bool must_recover)
{
	char state[32];
	uint64_t held;
	size_t nds;
	int r0, r1;
	bool rec;

	assert_int_equal(start_cm(NULL), 0);
	rec = strcmp(job_setup_state(state, sizeof(state)), "recovered") == 0;
	if (!rec)
		assert_string_equal(state, "ready");
	if (must_recover)
		assert_true(rec);
	r1 = rank_conn(1, 2, &held);
	(void)nd_log(r1);
	if (must_recover)
		assert_int_equal(held, NMSG);
	assert_true(held <= NMSG);
	/* a re-executing sender sends what the CM lacks */
	for (int i = (int)held + 1; i <= NMSG; i++)
		send_msg(r1, i);
	r0 = rank_conn(0, 2, NULL);
	nds = nd_log(r0);
	assert_true(nds <= 1);
	if (must_recover)
		assert_int_equal(nds, 1);
	for (int i = 1; i <= NRECV; i++)
		recv_msg(r0, (uint64_t)i, i);
	for (int i = 1; i <= NPROBE; i++)
		probe_miss(r0, NRECV + (uint64_t)i);
	for (int i = NRECV + 1; i <= NMSG; i++)
		recv_msg(r0, (uint64_t)(i + NPROBE), i);
	close(r0);
	close(r1);
	assert_int_equal(stop_cm(NULL), 0);	/* no crash, no leak */
	return rec;
}

/* Writes len bytes of orig (with byte `flip` xored, if < len) as the
   store file. */
static void
put_store(size_t len, size_t flip)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", store_dir, orig_name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, orig, len), (ssize_t)len);
	if (flip < len) {
		uint8_t b = orig[flip] ^ 0x5a;
		assert_int_equal(pwrite(fd, &b, 1, (off_t)flip), 1);
	}
	close(fd);
}

/* Offsets of the records of orig (header: magic, type, 0, meta, payload,
   check). */
static size_t
record_offsets(size_t *offs, size_t cap)
{
	size_t n = 0, off = 0;

	while (off + 24 <= orig_len && n < cap) {
		uint32_t ml = (uint32_t)orig[off + 8] << 24 |
		    (uint32_t)orig[off + 9] << 16 | orig[off + 10] << 8 |
		    orig[off + 11];
		uint32_t pl = (uint32_t)orig[off + 12] << 24 |
		    (uint32_t)orig[off + 13] << 16 | orig[off + 14] << 8 |
		    orig[off + 15];
		offs[n++] = off;
		off += 24 + ml + pl;
	}
	return n;
}

static int
setup(void **state)
{
	char path[512];
	struct stat sb;
	FILE *f;

	snprintf(store_dir, sizeof(store_dir), "/tmp/mpiv-cmstore.XXXXXX");
	if (mkdtemp(store_dir) == NULL)
		return -1;
	cm_store = store_dir;
	first_life();
	if (!store_file(path, sizeof(path)) || stat(path, &sb) < 0)
		return -1;
	snprintf(orig_name, sizeof(orig_name), "%s", strrchr(path, '/') + 1);
	orig_len = (size_t)sb.st_size;
	orig = malloc(orig_len);
	f = fopen(path, "r");
	if (f == NULL || fread(orig, 1, orig_len, f) != orig_len)
		return -1;
	fclose(f);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", store_dir);
	(void)system(cmd);
	free(orig);
	return 0;
}

static void
test_recovered(void **state)
{
	put_store(orig_len, SIZE_MAX);
	assert_true(second_life(true));
}

static void
test_truncated(void **state)
{
	size_t offs[512], n = record_offsets(offs, 512), cuts[2048], ncut = 0;
	int recovered = 0, dropped = 0;

	assert_true(n > NMSG + NRECV);	/* every record was written */
	for (size_t i = 0; i < n; i++)
		for (int d = -1; d <= 1; d++)
			if (offs[i] + d > 0 && offs[i] + d < orig_len)
				cuts[ncut++] = offs[i] + d;
	srand(7);
	for (int i = 0; i < 30; i++)
		cuts[ncut++] = (size_t)rand() % orig_len;
	for (size_t i = 0; i < ncut; i++) {
		put_store(cuts[i], SIZE_MAX);
		if (second_life(false))
			recovered++;
		else
			dropped++;
	}
	print_message("# %zu cuts: %d recovered a prefix, %d dropped\n", ncut,
	    recovered, dropped);
	assert_true(recovered > 0);
}

static void
test_corrupt(void **state)
{
	size_t offs[512], n = record_offsets(offs, 512);

	/* a byte inside the meta of a record in the middle */
	put_store(orig_len, offs[n / 2] + 26);
	assert_false(second_life(false));
}

static void
test_locked(void **state)
{
	pid_t first;
	int st;

	put_store(orig_len, SIZE_MAX);
	assert_int_equal(start_cm(NULL), 0);
	first = cm_pid;
	/* the second one exits at once: no listen line */
	assert_int_not_equal(start_cm(NULL), 0);
	waitpid(cm_pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	cm_pid = first;
	/* in its loop (signals handled) before it is stopped */
	close(rank_conn(1, 3, NULL));
	assert_int_equal(stop_cm(NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovered),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_locked),
	};

	(void)refused;
	(void)skip_nd_log;
	(void)expect_silence;
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
