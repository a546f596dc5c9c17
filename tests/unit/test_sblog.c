/*
 * test_sblog.c: the sender's payload log (libmpi-lite/sblog.c, included
 * directly: libmpi's insides are not in the runtime library the unit
 * tests link). Seqs per channel, trims, replay order and content, spills
 * to a file and the space trims give back, the total cap and recovery
 * after a trim, set_next_seq, bad arguments, the environment overrides,
 * I/O errors on both sides of the spill file, and a randomized run
 * checked against a plain reference model.
 *
 *   test_sblog           the tests (TAP-style lines, exit 1 on a failure)
 *   test_sblog --seed N  the same with another random seed
 *   test_sblog --bench   ns per append for 8 B, 1 KiB and 64 KiB payloads
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "../../libmpi-lite/sblog.c"

#include "rng.h"
#include "tap.h"
#include "tmpfile.h"

/* ---- helpers ---- */

static uint64_t rng_state = 0x5eed1234abcdull;

static uint64_t
rng(void)
{
	return rng_next(&rng_state);
}

static void
fill(unsigned char *p, size_t n)
{
	size_t i;
	uint64_t w = 0;

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			w = rng();
		p[i] = (unsigned char)(w >> (8 * (i % 8)));
	}
}

/* What a replay saw: seqs, envelopes, digests. */
struct seen {
	int n, max;
	uint64_t *seq;
	uint32_t *ctx, *flags;
	int32_t *tag;
	size_t *len;
	uint64_t *dg;
	bool null_buf;
	int stop_at;		/* return 7 on this call (0: never) */
};

static void
seen_init(struct seen *s, int max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->seq = calloc((size_t)max, sizeof(*s->seq));
	s->ctx = calloc((size_t)max, sizeof(*s->ctx));
	s->flags = calloc((size_t)max, sizeof(*s->flags));
	s->tag = calloc((size_t)max, sizeof(*s->tag));
	s->len = calloc((size_t)max, sizeof(*s->len));
	s->dg = calloc((size_t)max, sizeof(*s->dg));
}

static void
seen_free(struct seen *s)
{
	free(s->seq);
	free(s->ctx);
	free(s->flags);
	free(s->tag);
	free(s->len);
	free(s->dg);
}

static int
seen_cb(void *arg, uint64_t seq, uint32_t context, int32_t tag,
    uint32_t flags, const void *buf, size_t len)
{
	struct seen *s = arg;

	if (buf == NULL)
		s->null_buf = true;
	if (s->n < s->max) {
		s->seq[s->n] = seq;
		s->ctx[s->n] = context;
		s->tag[s->n] = tag;
		s->flags[s->n] = flags;
		s->len[s->n] = len;
		s->dg[s->n] = mpiv_digest(0, buf, len);
	}
	s->n++;
	if (s->stop_at != 0 && s->n == s->stop_at)
		return 7;
	return 0;
}

/* ---- tests ---- */

static void
test_seq(void)
{
	struct sblog sb;
	struct sblog_stats st;
	int i, ok = 1;

	CHECK(sblog_init(&sb, 3, NULL) == 0, "init 3 ranks, defaults");
	CHECK(sblog_last_seq(&sb, 0) == 0 && sblog_first_seq(&sb, 0) == 1,
	    "empty channel: last 0, first 1");
	for (i = 0; i < 10; i++) {
		if (sblog_append(&sb, 0, 1, i, 0, &i, sizeof(i)) !=
		    (uint64_t)i + 1)
			ok = 0;
		if (i % 2 == 0 && sblog_append(&sb, 2, 1, i, 0, &i,
		    sizeof(i)) != (uint64_t)i / 2 + 1)
			ok = 0;
	}
	CHECK(ok, "seqs run 1, 2, 3, ... per channel");
	CHECK(sblog_last_seq(&sb, 0) == 10 && sblog_last_seq(&sb, 1) == 0 &&
	    sblog_last_seq(&sb, 2) == 5, "last_seq per channel");
	CHECK(sblog_append(&sb, 1, 9, -5, 3, NULL, 0) == 1,
	    "a zero-length payload (buf NULL) is an entry");
	sblog_stats(&sb, &st);
	CHECK(st.entries == 16 && st.appended == 16 && st.trimmed == 0 &&
	    st.spilled_bytes == 0 &&
	    st.mem_bytes == 15 * sizeof(int) + 16 * SBLOG_ENTRY_COST &&
	    st.total_bytes == st.mem_bytes, "stats after 16 appends");
	sblog_fini(&sb);
}

static void
test_trim(void)
{
	struct sblog sb;
	struct sblog_stats st;
	struct seen s;
	char c = 'x';
	int i;

	sblog_init(&sb, 2, NULL);
	for (i = 0; i < 20; i++)
		sblog_append(&sb, 1, 0, i, 0, &c, 1);
	sblog_trim(&sb, 1, 7);
	CHECK(sblog_first_seq(&sb, 1) == 8 && sblog_last_seq(&sb, 1) == 20,
	    "trim 7: first 8, last 20");
	sblog_trim(&sb, 1, 3);
	CHECK(sblog_first_seq(&sb, 1) == 8, "trim below first: no change");
	sblog_trim(&sb, 0, 100);
	sblog_trim(&sb, -1, 100);
	sblog_trim(&sb, 2, 100);
	CHECK(sblog_first_seq(&sb, 1) == 8,
	    "trim of another or a bad channel: no change");
	seen_init(&s, 32);
	sblog_replay(&sb, 1, 0, seen_cb, &s);
	CHECK(s.n == 13 && s.seq[0] == 8 && s.seq[12] == 20 &&
	    s.tag[0] == 7, "replay after 0 starts at the first kept");
	seen_free(&s);
	sblog_trim(&sb, 1, UINT64_MAX);
	sblog_stats(&sb, &st);
	CHECK(st.entries == 0 && st.total_bytes == 0 && st.trimmed == 20 &&
	    sblog_first_seq(&sb, 1) == 21 && sblog_last_seq(&sb, 1) == 20,
	    "trim all: empty, first = last + 1");
	CHECK(sblog_append(&sb, 1, 0, 0, 0, &c, 1) == 21,
	    "numbering goes on after a full trim");
	sblog_fini(&sb);
}

/* A re-execution sends again what a trim covered: skipped, not kept. */
static void
test_covered(void)
{
	struct sblog sb;
	struct sblog_stats st;
	char c = 'x';
	int i;

	sblog_init(&sb, 3, NULL);
	for (i = 0; i < 3; i++)
		sblog_append(&sb, 1, 0, i, 0, &c, 1);
	CHECK(!sblog_covered(&sb, 1) && sblog_skip(&sb, 1) == 0 &&
	    sblog_last_seq(&sb, 1) == 3, "nothing trimmed: not covered");
	sblog_trim(&sb, 1, 5);		/* the receiver holds up to 5 */
	sblog_trim(&sb, 1, 2);		/* an older trim lowers nothing */
	CHECK(sblog_covered(&sb, 1) && !sblog_covered(&sb, 2) &&
	    !sblog_covered(&sb, -1) && !sblog_covered(&sb, 3),
	    "trim past the last seq: the next ones are covered, on that "
	    "channel only");
	CHECK(sblog_trimmed(&sb, 1) == 5 && sblog_trimmed(&sb, 2) == 0 &&
	    sblog_trimmed(&sb, -1) == 0 && sblog_trimmed(&sb, 3) == 0,
	    "the highest trim is kept per channel");
	CHECK(sblog_skip(&sb, 1) == 4 && sblog_skip(&sb, 1) == 5 &&
	    sblog_skip(&sb, 1) == 0 && !sblog_covered(&sb, 1),
	    "skip hands out 4 and 5, then nothing");
	sblog_stats(&sb, &st);
	CHECK(st.entries == 0 && st.total_bytes == 0 &&
	    sblog_first_seq(&sb, 1) == 6 && sblog_last_seq(&sb, 1) == 5,
	    "skipped seqs take no room: empty, first 6, last 5");
	CHECK(sblog_append(&sb, 1, 0, 9, 0, &c, 1) == 6 &&
	    sblog_first_seq(&sb, 1) == 6, "the next append is 6, kept");
	sblog_fini(&sb);
}

/* Random payloads of 0 .. 1 MiB on two channels, replayed with their
   envelopes and digests, with and without spilling. */
static void
test_replay(int spill)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	struct seen s;
	enum { N = 40 };
	uint64_t dg[2][N];
	size_t len[2][N];
	unsigned char *buf = malloc(1 << 20);
	int ch, i, ok = 1, fd = -1;
	const char *what = spill ? "spilled" : "in memory";

	if (spill) {
		fd = tmpfile_fd("test_sblog");
		conf.spill_fd = fd;
		conf.mem_cap = 1 << 20;
	}
	CHECK(sblog_init(&sb, 2, &conf) == 0, "init (%s)", what);
	for (i = 0; i < N; i++) {
		for (ch = 0; ch < 2; ch++) {
			switch (rng() % 4) {
			case 0:
				len[ch][i] = 0;
				break;
			case 1:
				len[ch][i] = rng() % 64;
				break;
			default:
				len[ch][i] = rng() % ((1 << 20) + 1);
				break;
			}
			fill(buf, len[ch][i]);
			dg[ch][i] = mpiv_digest(0, buf, len[ch][i]);
			if (sblog_append(&sb, ch, 100 + ch, i, ch ? 1 : 0,
			    buf, len[ch][i]) != (uint64_t)i + 1)
				ok = 0;
			sblog_stats(&sb, &st);
			if (spill && st.mem_bytes > conf.mem_cap)
				ok = 0;
		}
	}
	CHECK(ok, "%d random payloads appended (%s)%s", 2 * N, what,
	    spill ? ", memory within mem_cap throughout" : "");
	sblog_stats(&sb, &st);
	if (spill)
		CHECK(st.spilled_bytes > 0 && file_size(fd) > 0 &&
		    st.spill_errno == 0,
		    "payloads were spilled (%" PRIu64 " bytes in memory, %"
		    PRIu64 " in the file)", st.mem_bytes, st.spilled_bytes);
	for (ch = 0; ch < 2; ch++) {
		seen_init(&s, N);
		CHECK(sblog_replay(&sb, ch, 0, seen_cb, &s) == 0 && s.n == N,
		    "replay channel %d: %d entries (%s)", ch, N, what);
		ok = !s.null_buf;
		for (i = 0; i < N && i < s.n; i++)
			if (s.seq[i] != (uint64_t)i + 1 ||
			    s.ctx[i] != 100u + (unsigned)ch || s.tag[i] != i ||
			    s.flags[i] != (ch ? 1u : 0u) ||
			    s.len[i] != len[ch][i] || s.dg[i] != dg[ch][i])
				ok = 0;
		CHECK(ok, "channel %d: seq order, envelopes, lengths and "
		    "payload digests as appended (%s)", ch, what);
		seen_free(&s);
	}
	seen_init(&s, N);
	CHECK(sblog_replay(&sb, 1, 30, seen_cb, &s) == 0 && s.n == N - 30 &&
	    s.seq[0] == 31 && s.dg[0] == dg[1][30],
	    "replay after 30 gives 31 .. %d (%s)", N, what);
	seen_free(&s);
	seen_init(&s, N);
	s.stop_at = 5;
	CHECK(sblog_replay(&sb, 0, 0, seen_cb, &s) == 7 && s.n == 5,
	    "a callback's nonzero value stops the replay and is returned");
	seen_free(&s);
	sblog_fini(&sb);
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* Hole punching and truncation give the spill file's space back. */
static void
test_space(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	static unsigned char buf[64 << 10];
	blkcnt_t full, half;
	int fd = tmpfile_fd("test_sblog"), i, punch;

	/* can this file system punch holes at all? */
	if (ftruncate(fd, 1 << 20) == -1)
		exit(2);
	punch = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
	    4096) == 0;
	if (ftruncate(fd, 0) == -1)
		exit(2);

	conf.spill_fd = fd;
	conf.mem_cap = 256 << 10;
	sblog_init(&sb, 2, &conf);
	/* channel 0's payloads first, then channel 1's: two runs in the
	   file, so that trimming channel 0 frees whole blocks */
	for (i = 0; i < 64; i++) {
		fill(buf, sizeof(buf));
		sblog_append(&sb, i < 32 ? 0 : 1, 0, i, 0, buf, sizeof(buf));
	}
	for (i = 0; i < 4; i++)		/* push channel 1's out too */
		sblog_append(&sb, 0, 0, i, 0, buf, sizeof(buf));
	sblog_stats(&sb, &st);
	full = file_blocks(fd);
	CHECK(st.spilled_bytes >= 60 * sizeof(buf) &&
	    full * 512 >= (blkcnt_t)st.spilled_bytes,
	    "spilled %" PRIu64 " bytes, the file holds %lld blocks",
	    st.spilled_bytes, (long long)full);
	sblog_trim(&sb, 0, 32);
	half = file_blocks(fd);
	if (punch)
		CHECK(half * 512 <= full * 512 - 31 * (blkcnt_t)sizeof(buf),
		    "trimming channel 0 punched its bytes out (%lld -> %lld "
		    "blocks), the size stays %lld", (long long)full,
		    (long long)half, (long long)file_size(fd));
	else
		CHECK(1, "# SKIP no hole punching on this file system");
	sblog_trim(&sb, 1, UINT64_MAX);
	CHECK(file_size(fd) > 0, "file not truncated while channel 0 still "
	    "has spilled entries");
	sblog_trim(&sb, 0, UINT64_MAX);
	sblog_stats(&sb, &st);
	CHECK(file_size(fd) == 0 && file_blocks(fd) == 0 &&
	    st.spilled_bytes == 0 && sb.spill_end == 0,
	    "nothing spilled any more: file truncated to 0, offsets restart");
	for (i = 0; i < 8; i++)
		sblog_append(&sb, 1, 0, i, 0, buf, sizeof(buf));
	sblog_stats(&sb, &st);
	CHECK(st.spilled_bytes > 0 && (uint64_t)file_size(fd) ==
	    st.spilled_bytes, "spilling again starts at offset 0");
	sblog_fini(&sb);
	close(fd);
}

/* A payload larger than mem_cap goes straight to the file. */
static void
test_big(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	struct seen s;
	unsigned char *buf = malloc(1 << 20);
	uint64_t dg;
	int fd = tmpfile_fd("test_sblog");

	conf.spill_fd = fd;
	conf.mem_cap = 64 << 10;
	sblog_init(&sb, 1, &conf);
	fill(buf, 1 << 20);
	dg = mpiv_digest(0, buf, 1 << 20);
	sblog_append(&sb, 0, 0, 0, 0, buf, 100);
	sblog_append(&sb, 0, 0, 0, 0, buf, 1 << 20);
	sblog_stats(&sb, &st);
	CHECK(st.spilled_bytes == 1 << 20 &&
	    st.mem_bytes == 2 * SBLOG_ENTRY_COST + 100,
	    "a 1 MiB payload over a 64 KiB cap goes straight to the file");
	seen_init(&s, 4);
	CHECK(sblog_replay(&sb, 0, 1, seen_cb, &s) == 0 && s.n == 1 &&
	    s.len[0] == 1 << 20 && s.dg[0] == dg, "and read back whole");
	seen_free(&s);

	/* the file cut behind the log's back: an error, never short data */
	if (ftruncate(fd, 4096) == -1)
		exit(2);
	seen_init(&s, 4);
	errno = 0;
	CHECK(sblog_replay(&sb, 0, 0, seen_cb, &s) == -1 && errno == EIO &&
	    s.n == 1, "a spill file shorter than an entry: -1 EIO after "
	    "the entries before it");
	seen_free(&s);
	sblog_fini(&sb);
	close(fd);
	free(buf);
}

/* A spill write error keeps payloads in memory and stops spilling until
   a trim empties the file. RLIMIT_FSIZE makes the writes fail. */
static void
test_spill_error(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	struct seen s;
	struct rlimit old, lim;
	static unsigned char buf[16 << 10];
	uint64_t dg[32];
	int fd = tmpfile_fd("test_sblog"), i, ok = 1;

	conf.spill_fd = fd;
	conf.mem_cap = 64 << 10;
	sblog_init(&sb, 1, &conf);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 100 << 10;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &lim);
	for (i = 0; i < 32; i++) {
		fill(buf, sizeof(buf));
		dg[i] = mpiv_digest(0, buf, sizeof(buf));
		if (sblog_append(&sb, 0, 0, i, 0, buf, sizeof(buf)) == 0)
			ok = 0;
	}
	setrlimit(RLIMIT_FSIZE, &old);
	sblog_stats(&sb, &st);
	CHECK(ok && st.spill_errno == EFBIG && st.entries == 32 &&
	    st.mem_bytes > conf.mem_cap,
	    "a spill write error (EFBIG): appends still succeed, in memory "
	    "(%" PRIu64 " spilled, %" PRIu64 " in memory)",
	    st.spilled_bytes, st.mem_bytes);
	seen_init(&s, 32);
	sblog_replay(&sb, 0, 0, seen_cb, &s);
	for (i = 0; i < 32; i++)
		if (s.n != 32 || s.dg[i] != dg[i])
			ok = 0;
	CHECK(ok, "every payload replays intact after the error");
	seen_free(&s);
	sblog_trim(&sb, 0, 31);
	sblog_stats(&sb, &st);
	CHECK(st.spill_errno == 0 && file_size(fd) == 0 &&
	    st.spilled_bytes == 0, "a trim that empties the file clears the "
	    "error and truncates it");
	for (i = 0; i < 8; i++)
		sblog_append(&sb, 0, 0, i, 0, buf, sizeof(buf));
	sblog_stats(&sb, &st);
	CHECK(st.spilled_bytes > 0 && st.mem_bytes <= conf.mem_cap,
	    "spilling works again");
	sblog_fini(&sb);
	close(fd);
}

static void
test_enospc(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	static unsigned char buf[1000];
	int i, fd = tmpfile_fd("test_sblog");
	uint64_t seq;

	/* room for exactly 10 entries of 1000 bytes */
	conf.total_cap = 10 * (1000 + SBLOG_ENTRY_COST);
	sblog_init(&sb, 2, &conf);
	for (i = 0; i < 10; i++)
		sblog_append(&sb, i % 2, 0, i, 0, buf, sizeof(buf));
	errno = 0;
	seq = sblog_append(&sb, 0, 0, 0, 0, buf, sizeof(buf));
	CHECK(seq == 0 && errno == ENOSPC, "append past total_cap: ENOSPC");
	errno = 0;
	seq = sblog_append(&sb, 1, 0, 0, 0, NULL, 0);
	CHECK(seq == 0 && errno == ENOSPC,
	    "an empty payload costs its entry: ENOSPC too");
	sblog_stats(&sb, &st);
	CHECK(st.entries == 10 && st.total_bytes == conf.total_cap &&
	    sblog_last_seq(&sb, 0) == 5, "a refused append changes nothing");
	errno = 0;
	seq = sblog_append(&sb, 0, 0, 0, 0, buf, SIZE_MAX);
	CHECK(seq == 0 && errno == ENOSPC, "len SIZE_MAX: ENOSPC, no "
	    "overflow");
	sblog_trim(&sb, 0, 1);
	CHECK(sblog_append(&sb, 0, 0, 0, 0, buf, sizeof(buf)) == 6,
	    "after a trim the next append fits and gets seq 6");
	sblog_fini(&sb);

	/* the cap counts spilled bytes too */
	conf.spill_fd = fd;
	conf.mem_cap = 2000;
	sblog_init(&sb, 1, &conf);
	for (i = 0; i < 10; i++)
		sblog_append(&sb, 0, 0, i, 0, buf, sizeof(buf));
	sblog_stats(&sb, &st);
	errno = 0;
	seq = sblog_append(&sb, 0, 0, 0, 0, buf, 1);
	CHECK(seq == 0 && errno == ENOSPC && st.spilled_bytes > 0,
	    "total_cap counts memory and spill file: ENOSPC with %" PRIu64
	    " bytes spilled", st.spilled_bytes);
	sblog_trim(&sb, 0, 10);
	CHECK(sblog_append(&sb, 0, 0, 0, 0, buf, sizeof(buf)) == 11,
	    "and recovers after a trim");
	sblog_fini(&sb);
	close(fd);
}

static void
test_next_seq(void)
{
	struct sblog sb;
	struct seen s;
	int i;

	sblog_init(&sb, 3, NULL);
	for (i = 0; i < 10; i++)
		sblog_append(&sb, 0, 0, i, 0, &i, sizeof(i));
	/* the receiver has 1..6 and wants 7: 7..10 stay for the replay */
	CHECK(sblog_set_next_seq(&sb, 0, 7) == 0 &&
	    sblog_first_seq(&sb, 0) == 7 && sblog_last_seq(&sb, 0) == 10,
	    "next 7 of 10: entries 1..6 dropped, 7..10 kept");
	seen_init(&s, 8);
	sblog_replay(&sb, 0, 6, seen_cb, &s);
	CHECK(s.n == 4 && s.seq[0] == 7 && s.tag[0] == 6,
	    "replay after 6 gives 7..10");
	seen_free(&s);
	CHECK(sblog_append(&sb, 0, 0, 0, 0, NULL, 0) == 11,
	    "the next append goes on at 11");
	CHECK(sblog_set_next_seq(&sb, 0, 12) == 0 &&
	    sblog_first_seq(&sb, 0) == 12 && sblog_last_seq(&sb, 0) == 11,
	    "next = last + 1: all dropped");
	/* a restarted sender at seq 3 whose receiver already has 1..41 */
	sblog_append(&sb, 1, 0, 0, 0, NULL, 0);
	sblog_append(&sb, 1, 0, 0, 0, NULL, 0);
	CHECK(sblog_set_next_seq(&sb, 1, 42) == 0 &&
	    sblog_first_seq(&sb, 1) == 42 && sblog_last_seq(&sb, 1) == 41 &&
	    sblog_append(&sb, 1, 0, 0, 0, NULL, 0) == 42,
	    "next 42 ahead of the log: emptied, the next append gets 42");
	errno = 0;
	CHECK(sblog_set_next_seq(&sb, 1, 40) == -1 && errno == ERANGE &&
	    sblog_first_seq(&sb, 1) == 42 && sblog_last_seq(&sb, 1) == 42,
	    "next below first_seq (dropped entries wanted): ERANGE, no change");
	CHECK(sblog_set_next_seq(&sb, 2, 1) == 0 &&
	    sblog_append(&sb, 2, 0, 0, 0, NULL, 0) == 1,
	    "next 1 on a fresh channel: a no-op");
	CHECK(sblog_set_next_seq(&sb, 2, UINT64_MAX) == 0 &&
	    sblog_append(&sb, 2, 0, 0, 0, NULL, 0) == 0 && errno == EOVERFLOW,
	    "a channel out of seqs: EOVERFLOW");
	sblog_fini(&sb);
}

static void
test_args(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct seen s;
	int p[2], fd, ok;
	char path[] = "/tmp/test_sblog.args.XXXXXX";
	char c = 0;

	errno = 0;
	CHECK(sblog_init(&sb, 0, NULL) == -1 && errno == EINVAL,
	    "init 0 ranks: EINVAL");
	CHECK(sblog_init(&sb, -3, NULL) == -1 && errno == EINVAL,
	    "init -3 ranks: EINVAL");
	if (pipe(p) == -1)
		exit(2);
	conf.spill_fd = p[0];
	errno = 0;
	CHECK(sblog_init(&sb, 1, &conf) == -1 && errno == EINVAL,
	    "a pipe as spill fd: EINVAL");
	close(p[0]);
	close(p[1]);
	conf.spill_fd = p[0];
	errno = 0;
	CHECK(sblog_init(&sb, 1, &conf) == -1 && errno == EBADF,
	    "a closed spill fd: EBADF");
	if ((fd = mkstemp(path)) == -1)
		exit(2);
	close(fd);
	fd = open(path, O_RDWR | O_APPEND);
	conf.spill_fd = fd;
	errno = 0;
	CHECK(sblog_init(&sb, 1, &conf) == -1 && errno == EINVAL,
	    "an O_APPEND spill fd: EINVAL");
	close(fd);
	fd = open(path, O_RDONLY);
	conf.spill_fd = fd;
	errno = 0;
	CHECK(sblog_init(&sb, 1, &conf) == -1 && errno == EINVAL,
	    "a read-only spill fd: EINVAL");
	close(fd);
	unlink(path);

	sblog_init(&sb, 2, NULL);
	ok = 1;
	errno = 0;
	if (sblog_append(&sb, -1, 0, 0, 0, &c, 1) != 0 || errno != EINVAL)
		ok = 0;
	errno = 0;
	if (sblog_append(&sb, 2, 0, 0, 0, &c, 1) != 0 || errno != EINVAL)
		ok = 0;
	errno = 0;
	if (sblog_append(&sb, 0, 0, 0, 0, NULL, 1) != 0 || errno != EINVAL)
		ok = 0;
	CHECK(ok, "append to dst -1, dst nranks, NULL buf with len 1: EINVAL");
	seen_init(&s, 1);
	errno = 0;
	CHECK(sblog_replay(&sb, 5, 0, seen_cb, &s) == -1 && errno == EINVAL &&
	    sblog_replay(&sb, 0, 0, NULL, NULL) == -1 && s.n == 0,
	    "replay of a bad dst or without a callback: EINVAL");
	seen_free(&s);
	errno = 0;
	CHECK(sblog_set_next_seq(&sb, 0, 0) == -1 && errno == EINVAL &&
	    sblog_set_next_seq(&sb, 9, 1) == -1,
	    "set_next_seq 0 or of a bad dst: EINVAL");
	CHECK(sblog_last_seq(&sb, -1) == 0 && sblog_first_seq(&sb, 2) == 0,
	    "first/last of a bad dst: 0");
	CHECK(sblog_append(&sb, 0, 0, 0, 0, &c, 1) == 1,
	    "the log is usable after refused calls");
	sblog_fini(&sb);
}

static void
test_env(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	static const struct {
		const char *s;
		int ok;
		uint64_t v;
	} cases[] = {
		{ "0", 1, 0 }, { "123", 1, 123 }, { "4K", 1, 4096 },
		{ "4k", 1, 4096 }, { "64M", 1, 64ull << 20 },
		{ "2G", 1, 2ull << 30 }, { "18446744073709551615", 1,
		UINT64_MAX }, { "18446744073709551616", 0, 0 },
		{ "17179869184G", 0, 0 }, { "", 0, 0 }, { "M", 0, 0 },
		{ "12MB", 0, 0 }, { "1.5G", 0, 0 }, { "-1", 0, 0 },
		{ " 1", 0, 0 }, { "1 ", 0, 0 }, { "0x10", 0, 0 },
		{ "12T", 0, 0 },
	};
	size_t i;
	uint64_t v;
	int ok = 1, r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 77;
		errno = 0;
		r = sblog_parse_size(cases[i].s, &v);
		if (cases[i].ok ? r != 0 || v != cases[i].v :
		    r != -1 || errno != EINVAL || v != 77) {
			ok = 0;
			printf("# parse \"%s\": %d %" PRIu64 "\n", cases[i].s,
			    r, v);
		}
	}
	CHECK(ok, "byte counts: digits, K/M/G, garbage and overflow refused");

	unsetenv("MPIV_SENDLOG_MEM");
	unsetenv("MPIV_SENDLOG_MAX");
	conf.mem_cap = 5;
	CHECK(sblog_conf_from_env(&conf) == 0 && conf.mem_cap == 5 &&
	    conf.total_cap == 0, "no variables: conf unchanged");
	setenv("MPIV_SENDLOG_MEM", "8M", 1);
	setenv("MPIV_SENDLOG_MAX", "3G", 1);
	CHECK(sblog_conf_from_env(&conf) == 0 &&
	    conf.mem_cap == 8ull << 20 && conf.total_cap == 3ull << 30,
	    "MPIV_SENDLOG_MEM=8M MPIV_SENDLOG_MAX=3G");
	setenv("MPIV_SENDLOG_MEM", "1M", 1);
	setenv("MPIV_SENDLOG_MAX", "lots", 1);
	errno = 0;
	CHECK(sblog_conf_from_env(&conf) == -1 && errno == EINVAL &&
	    conf.mem_cap == 8ull << 20 && conf.total_cap == 3ull << 30,
	    "MPIV_SENDLOG_MAX=lots: EINVAL, conf unchanged");
	setenv("MPIV_SENDLOG_MAX", "", 1);
	CHECK(sblog_conf_from_env(&conf) == 0 && conf.mem_cap == 1ull << 20 &&
	    conf.total_cap == 3ull << 30, "an empty variable is unset");
	unsetenv("MPIV_SENDLOG_MEM");
	unsetenv("MPIV_SENDLOG_MAX");

	conf.huge = SBLOG_HUGE_AUTO;
	setenv("MPIV_SENDLOG_HUGE", "off", 1);
	CHECK(sblog_conf_from_env(&conf) == 0 && conf.huge == SBLOG_HUGE_OFF,
	    "MPIV_SENDLOG_HUGE=off");
	setenv("MPIV_SENDLOG_HUGE", "on", 1);
	CHECK(sblog_conf_from_env(&conf) == 0 && conf.huge == SBLOG_HUGE_ON,
	    "MPIV_SENDLOG_HUGE=on");
	setenv("MPIV_SENDLOG_HUGE", "sometimes", 1);
	errno = 0;
	CHECK(sblog_conf_from_env(&conf) == -1 && errno == EINVAL &&
	    conf.huge == SBLOG_HUGE_ON, "MPIV_SENDLOG_HUGE=sometimes: EINVAL, "
	    "conf unchanged");
	setenv("MPIV_SENDLOG_HUGE", "auto", 1);
	CHECK(sblog_conf_from_env(&conf) == 0 && conf.huge == SBLOG_HUGE_AUTO,
	    "MPIV_SENDLOG_HUGE=auto");
	unsetenv("MPIV_SENDLOG_HUGE");
}

/* Large payloads in every huge-page mode, across an arena's end: read
   back whole; ON and OFF stay, AUTO ends AUTO or OFF (by the timing). */
static void
test_huge(void)
{
	static const int modes[] = { SBLOG_HUGE_AUTO, SBLOG_HUGE_ON,
	    SBLOG_HUGE_OFF };
	enum { N = 40, SZ = 1 << 20 };
#define LEN(i)	((size_t)SZ - (size_t)(i) * 4099u)
	unsigned char *buf = malloc(SZ);
	uint64_t dg[N];
	size_t m;
	int i;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct sblog_conf conf = SBLOG_CONF_INIT;
		struct sblog sb;
		struct seen s;
		int ok = 1;

		conf.huge = modes[m];
		CHECK(sblog_init(&sb, 2, &conf) == 0, "init, huge mode %d",
		    modes[m]);
		for (i = 0; i < N; i++) {
			fill(buf, SZ);
			buf[0] = (unsigned char)i;
			dg[i] = mpiv_digest(0, buf, LEN(i));
			if (sblog_append(&sb, 1, 0, 0, 0, buf, LEN(i)) !=
			    (uint64_t)i + 1)
				ok = 0;
		}
		seen_init(&s, N);
		if (sblog_replay(&sb, 1, 0, seen_cb, &s) != 0 || s.n != N)
			ok = 0;
		for (i = 0; ok && i < N; i++)
			if (s.len[i] != LEN(i) || s.dg[i] != dg[i])
				ok = 0;
		seen_free(&s);
		CHECK(ok, "mode %d: %d payloads of 1 MiB and less (ends and "
		    "starts off page boundaries) appended and read back whole",
		    modes[m], N);
		CHECK(modes[m] == SBLOG_HUGE_AUTO ? sb.huge != SBLOG_HUGE_ON :
		    sb.huge == modes[m], "mode %d kept (now %d)", modes[m],
		    sb.huge);
		sblog_fini(&sb);
	}
#undef LEN
	free(buf);
}

/* ---- randomized run against a reference model ---- */

#define M_CH	4
#define M_MAX	4096

struct model_ent {
	uint64_t seq, dg;
	size_t len;
	uint32_t ctx, flags;
	int32_t tag;
};

struct model_ch {
	struct model_ent e[M_MAX];
	int first, n;			/* ring: e[(first + i) % M_MAX] */
	uint64_t next_seq;
};

static struct model_ch model[M_CH];

static struct model_ent *
model_at(struct model_ch *m, int i)
{
	return &m->e[(m->first + i) % M_MAX];
}

static void
model_drop(struct model_ch *m, uint64_t upto, uint64_t *total)
{
	while (m->n > 0 && model_at(m, 0)->seq <= upto) {
		*total -= SBLOG_ENTRY_COST + model_at(m, 0)->len;
		m->first = (m->first + 1) % M_MAX;
		m->n--;
	}
}

struct model_check {
	struct model_ch *m;
	int i;
	int bad;
};

static int
model_cb(void *arg, uint64_t seq, uint32_t context, int32_t tag,
    uint32_t flags, const void *buf, size_t len)
{
	struct model_check *c = arg;
	struct model_ent *e;

	if (c->i >= c->m->n) {
		c->bad = 1;
		return 1;
	}
	e = model_at(c->m, c->i++);
	if (e->seq != seq || e->ctx != context || e->tag != tag ||
	    e->flags != flags || e->len != len || buf == NULL ||
	    e->dg != mpiv_digest(0, buf, len))
		c->bad = 1;
	return 0;
}

/* Replays of ch after `after` that stop at the first entry, as a pull
   does: it must be the model's first entry with a greater seq, or none.
   Nonzero on a mismatch. */
static int
replay_one_check(struct sblog *sb, int ch, struct model_ch *m,
    uint64_t after, int op)
{
	struct seen s;
	struct model_ent *want = NULL;
	int i, rc;

	for (i = 0; i < m->n; i++)
		if (model_at(m, i)->seq > after) {
			want = model_at(m, i);
			break;
		}
	seen_init(&s, 1);
	s.stop_at = 1;
	rc = sblog_replay(sb, ch, after, seen_cb, &s);
	i = want == NULL ? rc != 0 || s.n != 0 :
	    rc != 7 || s.n != 1 || s.seq[0] != want->seq ||
	    s.len[0] != want->len || s.dg[0] != want->dg ||
	    s.tag[0] != want->tag;
	if (i)
		printf("# op %d: one replay ch %d after %" PRIu64 ": rc %d, "
		    "%d seen, seq %" PRIu64 " want %" PRIu64 "\n", op, ch,
		    after, rc, s.n, s.n > 0 ? s.seq[0] : 0,
		    want != NULL ? want->seq : 0);
	seen_free(&s);
	return i;
}

static void
test_model(int ops, int spill)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	struct model_check c;
	struct model_ent *e;
	struct model_ch *m;
	static unsigned char buf[256 << 10];
	uint64_t total = 0, seq, upto, after;
	uint32_t ctx;
	int32_t tag;
	int op, ch, i, fd = -1, bad = 0, enospc = 0, spilled = 0;
	int replays = 0, trims = 0;
	size_t len;

	memset(model, 0, sizeof(model));
	for (ch = 0; ch < M_CH; ch++)
		model[ch].next_seq = 1;
	conf.total_cap = 1 << 20;
	if (spill) {
		fd = tmpfile_fd("test_sblog");
		conf.spill_fd = fd;
		conf.mem_cap = 192 << 10;
	}
	sblog_init(&sb, M_CH, &conf);
	for (op = 0; op < ops && !bad; op++) {
		ch = (int)(rng() % M_CH);
		m = &model[ch];
		switch (rng() % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5: case 6:
		case 7: case 8:		/* append */
			switch (rng() % 8) {
			case 0:
				len = 0;
				break;
			case 1:
				len = rng() % sizeof(buf) + 1;
				break;
			default:
				len = rng() % 4096;
				break;
			}
			if (m->n == M_MAX)
				break;
			fill(buf, len);
			ctx = (uint32_t)rng();
			tag = (int32_t)rng();
			errno = 0;
			seq = sblog_append(&sb, ch, ctx, tag, (uint32_t)op,
			    buf, len);
			if (total + SBLOG_ENTRY_COST + len > conf.total_cap) {
				if (seq != 0 || errno != ENOSPC) {
					printf("# op %d: expected ENOSPC\n", op);
					bad = 1;
				}
				enospc++;
				break;
			}
			if (seq != m->next_seq) {
				printf("# op %d: seq %" PRIu64 " want %" PRIu64
				    "\n", op, seq, m->next_seq);
				bad = 1;
				break;
			}
			e = model_at(m, m->n++);
			e->seq = m->next_seq++;
			e->len = len;
			e->dg = mpiv_digest(0, buf, len);
			e->ctx = ctx;
			e->tag = tag;
			e->flags = (uint32_t)op;
			total += SBLOG_ENTRY_COST + len;
			break;
		case 9: case 10: case 11: case 12:	/* trim */
			upto = m->next_seq > 1 ? rng() % m->next_seq : 0;
			if (rng() % 8 == 0)
				upto = UINT64_MAX;
			sblog_trim(&sb, ch, upto);
			model_drop(m, upto, &total);
			trims++;
			break;
		case 13: case 14:			/* replay */
			after = rng() % (m->next_seq + 1);
			if (rng() % 2 == 0) {
				/* one entry, as a pull asks (cursor) */
				if (replay_one_check(&sb, ch, m, after, op))
					bad = 1;
				replays++;
				break;
			}
			c.m = m;
			c.bad = 0;
			for (c.i = 0; c.i < m->n &&
			    model_at(m, c.i)->seq <= after; c.i++)
				;
			i = c.i;
			if (sblog_replay(&sb, ch, after, model_cb, &c) != 0 ||
			    c.bad || c.i != m->n) {
				printf("# op %d: replay ch %d after %" PRIu64
				    " from %d: %d of %d\n", op, ch, after, i,
				    c.i, m->n);
				bad = 1;
			}
			replays++;
			break;
		case 15:				/* set_next_seq */
			upto = (m->n > 0 ? model_at(m, 0)->seq :
			    m->next_seq) + rng() % 8;
			if (sblog_set_next_seq(&sb, ch, upto) != 0) {
				bad = 1;
				break;
			}
			model_drop(m, upto - 1, &total);
			if (upto > m->next_seq)
				m->next_seq = upto;
			break;
		}
		sblog_stats(&sb, &st);
		if (st.total_bytes != total || st.total_bytes > conf.total_cap ||
		    (spill && st.mem_bytes > conf.mem_cap &&
		    st.mem_bytes != st.entries * SBLOG_ENTRY_COST)) {
			printf("# op %d: total %" PRIu64 " model %" PRIu64
			    " mem %" PRIu64 "\n", op, st.total_bytes, total,
			    st.mem_bytes);
			bad = 1;
		}
		for (i = 0; i < M_CH; i++)
			if (sblog_first_seq(&sb, i) != (model[i].n > 0 ?
			    model_at(&model[i], 0)->seq : model[i].next_seq) ||
			    sblog_last_seq(&sb, i) != model[i].next_seq - 1)
				bad = 1;
		if (st.spilled_bytes > 0)
			spilled++;
		if (spill && st.spilled_bytes == 0 && sb.spill_end != 0)
			bad = 1;
	}
	/* last, a full replay of every channel */
	for (ch = 0; ch < M_CH && !bad; ch++) {
		c.m = &model[ch];
		c.i = 0;
		c.bad = 0;
		if (sblog_replay(&sb, ch, 0, model_cb, &c) != 0 || c.bad ||
		    c.i != model[ch].n)
			bad = 1;
	}
	CHECK(!bad, "%d random ops on %d channels%s match the model (%d "
	    "replays, %d trims, %d ENOSPC, spilled during %d ops)", op, M_CH,
	    spill ? " with spilling" : "", replays, trims, enospc, spilled);
	if (spill)
		CHECK(spilled > 0, "the run spilled");
	CHECK(enospc > 0, "the run hit the total cap");
	sblog_fini(&sb);
	if (fd >= 0)
		close(fd);
}

/*
 * Pulls ask for one entry at a time, each after the last: the replay
 * starts at the entry it handed over last (the channel's hint), so
 * serving every entry of a long log walks it once, not once per pull.
 * Trims that drop the hint, asks for earlier seqs, and replays between
 * other channels' must still find the right entry.
 */
static void
test_cursor(void)
{
	struct sblog sb;
	struct seen s;
	unsigned char b[64];
	uint64_t seq, skipped;
	int i, n = 20000, bad = 0;

	CHECK(sblog_init(&sb, 2, NULL) == 0, "cursor: init");
	for (i = 0; i < n; i++) {
		memset(b, i & 0xff, sizeof(b));
		if (sblog_append(&sb, 0, 1, i, 0, b, (size_t)(i % 64)) !=
		    (uint64_t)i + 1 ||
		    sblog_append(&sb, 1, 1, -i, 0, b, 8) != (uint64_t)i + 1)
			bad = 1;
	}
	CHECK(!bad, "cursor: %d appends on 2 channels", n);
	/* every entry of channel 0 pulled one by one, channel 1's
	   interleaved every 100 */
	skipped = sb.replay_skipped;
	for (seq = 1; seq <= (uint64_t)n && !bad; seq++) {
		seen_init(&s, 1);
		s.stop_at = 1;
		if (sblog_replay(&sb, 0, seq - 1, seen_cb, &s) != 7 ||
		    s.seq[0] != seq || s.tag[0] != (int32_t)(seq - 1) ||
		    s.len[0] != (seq - 1) % 64)
			bad = 1;
		seen_free(&s);
		if (seq % 100 == 0) {
			seen_init(&s, 1);
			s.stop_at = 1;
			if (sblog_replay(&sb, 1, seq / 2, seen_cb, &s) != 7 ||
			    s.seq[0] != seq / 2 + 1)
				bad = 1;
			seen_free(&s);
		}
	}
	CHECK(!bad, "cursor: %d one-entry replays in seq order find each "
	    "entry", n);
	/* without the hint: n * (n - 1) / 2 entries walked past */
	CHECK(sb.replay_skipped - skipped <= 4 * (uint64_t)n,
	    "cursor: they walked past %" PRIu64 " entries (at most %d)",
	    sb.replay_skipped - skipped, 4 * n);
	/* asked again for an earlier seq: from the head, still right */
	seen_init(&s, 1);
	s.stop_at = 1;
	CHECK(sblog_replay(&sb, 0, 9, seen_cb, &s) == 7 && s.seq[0] == 10,
	    "cursor: an earlier seq after later ones (got %" PRIu64 ")",
	    s.seq[0]);
	seen_free(&s);
	/* the hint (seq 10) trimmed away: the next replay starts at the
	   new head */
	sblog_trim(&sb, 0, 15);
	seen_init(&s, 1);
	s.stop_at = 1;
	CHECK(sb.chans[0].hint == NULL && sblog_replay(&sb, 0, 0, seen_cb,
	    &s) == 7 && s.seq[0] == 16,
	    "cursor: a trim past the hint drops it (got %" PRIu64 ")",
	    s.seq[0]);
	seen_free(&s);
	/* a full replay from there walks to the tail; then one past it */
	seen_init(&s, n);
	CHECK(sblog_replay(&sb, 0, 0, seen_cb, &s) == 0 && s.n == n - 15 &&
	    s.seq[s.n - 1] == (uint64_t)n, "cursor: a full replay after it "
	    "(%d entries)", s.n);
	seen_free(&s);
	seen_init(&s, 1);
	CHECK(sblog_replay(&sb, 0, (uint64_t)n, seen_cb, &s) == 0 && s.n == 0,
	    "cursor: nothing after the last seq");
	seen_free(&s);
	/* everything trimmed, then appended again: the next seq's entry */
	sblog_trim(&sb, 0, UINT64_MAX);
	seq = sblog_append(&sb, 0, 1, 5, 0, b, 4);
	seen_init(&s, 1);
	CHECK(seq == (uint64_t)n + 1 && sblog_replay(&sb, 0, (uint64_t)n - 3,
	    seen_cb, &s) == 0 && s.n == 1 && s.seq[0] == seq,
	    "cursor: an append after the channel emptied");
	seen_free(&s);
	sblog_fini(&sb);
}

/* ---- benchmark ---- */

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per append of len bytes, over n appends to 16 channels in batches
   trimmed (untimed) between them; spill: through a 16 MiB cap. */
static double
bench_one(size_t len, int n, int batch, int spill)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	unsigned char *buf = calloc(1, len);
	double t = 0, t0;
	int i, j, ch, fd = -1;

	if (spill) {
		fd = tmpfile_fd("test_sblog");
		conf.spill_fd = fd;
		conf.mem_cap = 16 << 20;
	}
	conf.total_cap = 1ull << 40;
	sblog_init(&sb, 16, &conf);
	fill(buf, len);
	for (i = 0; i < n; i += batch) {
		t0 = now_ns();
		for (j = 0; j < batch; j++)
			if (sblog_append(&sb, j & 15, 1, j, 0, buf, len) == 0)
				abort();
		t += now_ns() - t0;
		for (ch = 0; ch < 16; ch++)
			sblog_trim(&sb, ch, UINT64_MAX);
	}
	sblog_fini(&sb);
	if (fd >= 0)
		close(fd);
	free(buf);
	return t / n;
}

/* The floor under bench_one: malloc and memcpy of the same payloads in
   the same pattern, without the log (ns per copy). */
static double
bench_copy(size_t len, int n, int batch)
{
	unsigned char *buf = calloc(1, len), **keep;
	double t = 0, t0;
	int i, j;

	keep = calloc((size_t)batch, sizeof(*keep));
	fill(buf, len);
	for (i = 0; i < n; i += batch) {
		t0 = now_ns();
		for (j = 0; j < batch; j++) {
			if ((keep[j] = malloc(len)) == NULL)
				abort();
			memcpy(keep[j], buf, len);
		}
		t += now_ns() - t0;
		for (j = 0; j < batch; j++)
			free(keep[j]);
	}
	free(keep);
	free(buf);
	return t / n;
}

static int
bench(void)
{
	printf("ns per append (16 channels, no spill fd), and the same "
	    "malloc+memcpy without the log:\n");
	printf("  8 B     %8.1f  %8.1f\n", bench_one(8, 4000000, 20000, 0),
	    bench_copy(8, 4000000, 20000));
	printf("  1 KiB   %8.1f  %8.1f\n", bench_one(1024, 2000000, 20000,
	    0), bench_copy(1024, 2000000, 20000));
	printf("  64 KiB  %8.1f  %8.1f\n", bench_one(64 << 10, 40000, 400,
	    0), bench_copy(64 << 10, 40000, 400));
	printf("with a spill file, 16 MiB mem_cap, 1000 appends per trim:\n");
	printf("  64 KiB  %8.1f\n", bench_one(64 << 10, 40000, 1000, 1));
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--bench") == 0)
		return bench();
	if (argc > 2 && strcmp(argv[1], "--seed") == 0)
		rng_state = strtoull(argv[2], NULL, 0) | 1;
	printf("# seed %#" PRIx64 " (--seed to repeat)\n", rng_state);
	test_seq();
	test_trim();
	test_covered();
	test_replay(0);
	test_replay(1);
	test_space();
	test_big();
	test_spill_error();
	test_enospc();
	test_next_seq();
	test_args();
	test_env();
	test_huge();
	test_cursor();
	test_model(20000, 0);
	test_model(20000, 1);
	printf("%s\n", failures ? "# FAILED" : "# all passed");
	return failures ? 1 : 0;
}
