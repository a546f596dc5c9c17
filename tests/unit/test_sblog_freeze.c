/*
 * test_sblog_freeze.c: the send log's spill file under checkpoints
 * (libmpi-lite/sblog.c, included directly, as test_sblog.c does): what
 * a checkpoint's clone reads of the file stays as it was from
 * sblog_freeze_at to sblog_thaw_upto, whatever the parent trims and
 * spills meanwhile (read back with pread and compared); a thaw gives the
 * space back; trims give back the pages small payloads shared; nested freezes, thawed in turn; more freezes than the log
 * tells apart; the truncation to 0 held back and done by the thaw; the
 * unnumbered sblog_freeze/sblog_thaw; a real fork whose child plays the
 * clone, and then a restored clone (its own copy of the file); a
 * randomized run checked against every freeze still held.
 *
 *   test_sblog_freeze           the tests (TAP lines, exit 1 on a failure)
 *   test_sblog_freeze --seed N  the same with another random seed
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../libmpi-lite/sblog.c"

#include "rng.h"
#include "tap.h"
#include "tmpfile.h"

#define PAY	(64u << 10)	/* payload size of most tests */

static uint64_t seed = 0x5eedf00d1234ull;
static int can_punch;

/* ---- helpers ---- */

static uint64_t
xs(uint64_t *s)
{
	return rng_next(s);
}

/* The payload of (ch, seq): a function of both, so that replays and
   file contents can be checked without keeping copies. */
static void
payload(unsigned char *p, size_t n, int ch, uint64_t seq)
{
	uint64_t s = seed ^ ((uint64_t)ch << 48) ^ (seq * 0x9e3779b97f4a7c15ull);
	uint64_t w = 0;
	size_t i;

	s |= 1;
	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			w = xs(&s);
		p[i] = (unsigned char)(w >> (8 * (i % 8)));
	}
}

static uint64_t
hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Bytes the file holds (blocks), not its size. */
static long long
file_bytes(int fd)
{
	blkcnt_t b = file_blocks(fd);

	return b < 0 ? -1 : (long long)b * 512;
}

static uint64_t
append(struct sblog *sb, int ch)
{
	static unsigned char buf[PAY];
	uint64_t seq = sblog_last_seq(sb, ch) + 1;

	payload(buf, sizeof(buf), ch, seq);
	return sblog_append(sb, ch, 1, (int32_t)seq, 0, buf, sizeof(buf));
}

/* Every replayed payload is the one appended (its pattern). */
static int
check_cb(void *arg, uint64_t seq, uint32_t context, int32_t tag,
    uint32_t flags, const void *buf, size_t len)
{
	static unsigned char want[1 << 20];
	int ch = *(int *)arg;

	(void)context;
	(void)flags;
	if ((uint64_t)tag != seq || len > sizeof(want))
		return 1;
	payload(want, len, ch, seq);
	return memcmp(want, buf, len) != 0 ? 1 : 0;
}

static bool
replay_ok(struct sblog *sb)
{
	int ch;

	for (ch = 0; ch < sb->nranks; ch++)
		if (sblog_replay(sb, ch, 0, check_cb, &ch) != 0)
			return false;
	return true;
}

/*
 * What a clone forked now would read: each spilled entry's place in the
 * file and the hash of its bytes there.
 */
struct snap {
	int n;
	uint64_t off[4096], len[4096], h[4096];
};

static void
snap_take(struct sblog *sb, struct snap *s)
{
	static unsigned char buf[1 << 20];
	struct sblog_ent *e;
	int ch;

	s->n = 0;
	for (ch = 0; ch < sb->nranks; ch++)
		for (e = sb->chans[ch].head; e != NULL; e = e->next) {
			if (!e->spilled || s->n == 4096)
				continue;
			if (sblog_pread_all(sb->spill_fd, buf, e->len,
			    e->off) == -1)
				exit(2);
			s->off[s->n] = e->off;
			s->len[s->n] = e->len;
			s->h[s->n] = hash(buf, e->len);
			s->n++;
		}
}

/* The entries of s still read back as they were. */
static bool
snap_ok(int fd, const struct snap *s)
{
	static unsigned char buf[1 << 20];
	int i;

	for (i = 0; i < s->n; i++)
		if (sblog_pread_all(fd, buf, s->len[i], s->off[i]) == -1 ||
		    hash(buf, s->len[i]) != s->h[i])
			return false;
	return true;
}

/* The lowest offset of a spilled entry of channel ch above seq after. */
static uint64_t
min_off_after(struct sblog *sb, int ch, uint64_t after)
{
	struct sblog_ent *e;
	uint64_t m = UINT64_MAX;

	for (e = sb->chans[ch].head; e != NULL; e = e->next)
		if (e->seq > after && e->spilled && e->off < m)
			m = e->off;
	return m;
}

static int
off_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/*
 * Every byte of the file that no spilled entry holds reads as 0 (it was
 * punched: a punch zeroes what it cannot free), and the file ends at
 * spill_end.
 */
static bool
gaps_zero(struct sblog *sb)
{
	static unsigned char buf[64 << 10];
	static uint64_t r[2 * 65536];
	struct sblog_ent *e;
	uint64_t at = 0, end, n = 0, i, len;
	ssize_t got;
	int ch;

	for (ch = 0; ch < sb->nranks; ch++)
		for (e = sb->chans[ch].head; e != NULL; e = e->next)
			if (e->spilled && n < 65536) {
				r[2 * n] = e->off;
				r[2 * n + 1] = e->off + e->len;
				n++;
			}
	qsort(r, n, 2 * sizeof(r[0]), off_cmp);
	for (i = 0; i <= n; i++) {
		end = i < n ? r[2 * i] : sb->spill_end;
		while (at < end) {
			len = end - at < sizeof(buf) ? end - at : sizeof(buf);
			got = pread(sb->spill_fd, buf, len, (off_t)at);
			if (got <= 0)
				return false;
			while (got > 0)
				if (buf[--got] != 0)
					return false;
			at += len;
		}
		if (i < n && r[2 * i + 1] > at)
			at = r[2 * i + 1];
	}
	return (uint64_t)file_size(sb->spill_fd) == sb->spill_end;
}

static void
init2(struct sblog *sb, int fd, int nranks)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;

	conf.spill_fd = fd;
	conf.mem_cap = 4 * (PAY + SBLOG_ENTRY_COST);
	if (sblog_init(sb, nranks, &conf) == -1) {
		perror("sblog_init");
		exit(2);
	}
}

/* ---- tests ---- */

/* Trims and new spills under a freeze; the thaw gives the space back. */
static void
test_frozen(void)
{
	struct sblog sb;
	struct sblog_stats st;
	static struct snap s;
	int fd = tmpfile_fd("test_sblog_freeze"), i;
	uint64_t end, last1;
	long long before, after;

	init2(&sb, fd, 2);
	for (i = 0; i < 32; i++)
		append(&sb, i % 2);
	end = sb.spill_end;
	sblog_freeze_at(&sb, 1);
	snap_take(&sb, &s);
	CHECK(end > 16 * PAY && s.n >= 16, "spilled %d entries, %" PRIu64
	    " bytes, then frozen", s.n, end);

	sblog_trim(&sb, 0, UINT64_MAX);
	last1 = sblog_last_seq(&sb, 1);
	for (i = 0; i < 16; i++)
		append(&sb, 1);
	sblog_trim(&sb, 1, 8);
	sblog_stats(&sb, &st);
	CHECK(snap_ok(fd, &s), "trims of frozen entries leave their bytes as "
	    "they were (%d entries read back)", s.n);
	CHECK(min_off_after(&sb, 1, last1) >= end && sb.spill_end > end,
	    "new spills land past the frozen end (%" PRIu64 " -> %" PRIu64
	    ")", end, sb.spill_end);
	CHECK(replay_ok(&sb), "the log replays intact under the freeze");
	before = file_bytes(fd);

	sblog_thaw_upto(&sb, 1);
	after = file_bytes(fd);
	sblog_stats(&sb, &st);
	if (can_punch)
		CHECK(after < before && after <= (long long)st.spilled_bytes +
		    2 * PAY, "the thaw punched out what trims freed (%lld -> "
		    "%lld bytes held, %" PRIu64 " spilled)", before, after,
		    st.spilled_bytes);
	else
		CHECK(1, "# SKIP no hole punching on this file system");
	CHECK(replay_ok(&sb) && sb.nfrz == 0 && sb.nholes == 0 &&
	    (!can_punch || gaps_zero(&sb)), "and the log still replays "
	    "intact, every byte it does not hold zero");
	sblog_fini(&sb);
	close(fd);
}

/* A log emptied while frozen is truncated by the thaw, not before. */
static void
test_truncate(void)
{
	struct sblog sb;
	struct sblog_stats st;
	static struct snap s;
	int fd = tmpfile_fd("test_sblog_freeze"), i;
	off_t size;
	uint64_t end;

	init2(&sb, fd, 2);
	for (i = 0; i < 24; i++)
		append(&sb, i % 2);
	sblog_freeze_at(&sb, 3);
	snap_take(&sb, &s);
	size = file_size(fd);
	end = sb.spill_end;
	sblog_trim(&sb, 0, UINT64_MAX);
	sblog_trim(&sb, 1, UINT64_MAX);
	sblog_stats(&sb, &st);
	CHECK(st.spilled_bytes == 0 && file_size(fd) == size &&
	    sb.spill_end == end && snap_ok(fd, &s),
	    "nothing spilled any more, but frozen: no truncation, offsets "
	    "go on (spill_end %" PRIu64 ")", sb.spill_end);
	for (i = 0; i < 12; i++)
		append(&sb, 0);
	CHECK(min_off_after(&sb, 0, 0) >= end && snap_ok(fd, &s),
	    "new spills still go past the frozen end");
	sblog_trim(&sb, 0, UINT64_MAX);
	CHECK(file_size(fd) > size && snap_ok(fd, &s),
	    "emptied again, still not truncated");
	sblog_thaw_upto(&sb, 3);
	CHECK(file_size(fd) == 0 && file_bytes(fd) == 0 && sb.spill_end == 0,
	    "the thaw truncates the file to 0; offsets start again at 0");
	for (i = 0; i < 12; i++)
		append(&sb, 1);
	sblog_stats(&sb, &st);
	CHECK(min_off_after(&sb, 1, 0) == 0 && (uint64_t)file_size(fd) ==
	    st.spilled_bytes && replay_ok(&sb), "and spills start at 0");
	sblog_fini(&sb);
	close(fd);
}

/*
 * Two freezes: the first thawed frees what only it kept (trimmed
 * between the two), the second keeps what it still needs.
 */
static void
test_nested(void)
{
	struct sblog sb;
	static struct snap s1, s2;
	int fd = tmpfile_fd("test_sblog_freeze"), i;
	long long b0, b1, b2;
	off_t size;

	init2(&sb, fd, 2);
	for (i = 0; i < 32; i++)
		append(&sb, i % 2);
	sblog_freeze_at(&sb, 4);
	snap_take(&sb, &s1);
	sblog_trim(&sb, 0, 12);		/* kept by freeze 4 only */
	for (i = 0; i < 8; i++)
		append(&sb, 1);
	sblog_freeze_at(&sb, 5);
	snap_take(&sb, &s2);
	sblog_trim(&sb, 1, 14);		/* kept by both */
	for (i = 0; i < 8; i++)
		append(&sb, 0);
	CHECK(snap_ok(fd, &s1) && snap_ok(fd, &s2) && sb.nfrz == 2,
	    "two freezes: both clones' bytes intact");
	b0 = file_bytes(fd);
	sblog_thaw_upto(&sb, 3);
	CHECK(sb.nfrz == 2 && file_bytes(fd) == b0 && snap_ok(fd, &s1),
	    "a thaw below both releases neither");
	sblog_thaw_upto(&sb, 4);
	b1 = file_bytes(fd);
	CHECK(sb.nfrz == 1 && snap_ok(fd, &s2) && replay_ok(&sb),
	    "thawing the first keeps the second clone's bytes");
	if (can_punch)
		CHECK(b1 <= b0 - 5 * (long long)PAY, "and punches what only "
		    "the first kept (%lld -> %lld bytes held)", b0, b1);
	else
		CHECK(1, "# SKIP no hole punching on this file system");
	size = file_size(fd);
	sblog_thaw_upto(&sb, 5);
	b2 = file_bytes(fd);
	CHECK(sb.nfrz == 0 && replay_ok(&sb) && file_size(fd) == size,
	    "thawing the second: none left, the log intact");
	if (can_punch)
		CHECK(b2 <= b1 - 5 * (long long)PAY, "and the rest is punched "
		    "(%lld -> %lld)", b1, b2);
	sblog_trim(&sb, 0, UINT64_MAX);
	sblog_trim(&sb, 1, UINT64_MAX);
	CHECK(file_size(fd) == 0 && sb.spill_end == 0,
	    "emptied with nothing frozen: truncated to 0 at once");
	sblog_fini(&sb);
	close(fd);
}

/* More freezes than the log tells apart merge into the newest. */
static void
test_merge(void)
{
	struct sblog sb;
	static struct snap s8;
	int fd = tmpfile_fd("test_sblog_freeze"), i;
	uint64_t k;

	init2(&sb, fd, 1);
	for (k = 1; k <= SBLOG_FRZ_MAX + 2; k++) {
		for (i = 0; i < 6; i++)
			append(&sb, 0);
		sblog_freeze_at(&sb, k);
		if (k == SBLOG_FRZ_MAX)
			snap_take(&sb, &s8);
		sblog_trim(&sb, 0, sblog_last_seq(&sb, 0) - 2);
	}
	CHECK(sb.nfrz == SBLOG_FRZ_MAX && sb.frz[SBLOG_FRZ_MAX - 1].n == 3 &&
	    sb.frz[SBLOG_FRZ_MAX - 1].k == SBLOG_FRZ_MAX + 2,
	    "%d freezes: the last three merged into one (k %" PRIu64 ")",
	    SBLOG_FRZ_MAX + 2, sb.frz[SBLOG_FRZ_MAX - 1].k);
	sblog_thaw_upto(&sb, SBLOG_FRZ_MAX);
	CHECK(sb.nfrz == 1 && snap_ok(fd, &s8),
	    "thawing up to the first of them keeps it (released with the "
	    "newest)");
	sblog_thaw_upto(&sb, SBLOG_FRZ_MAX + 2);
	CHECK(sb.nfrz == 0 && replay_ok(&sb), "then all thawed");
	sblog_fini(&sb);
	close(fd);
}

/* sblog_freeze/sblog_thaw: each thaw releases the oldest freeze. */
static void
test_anon(void)
{
	struct sblog sb;
	static struct snap s1, s2;
	int fd = tmpfile_fd("test_sblog_freeze"), i;
	long long b;
	off_t size;

	init2(&sb, fd, 1);
	for (i = 0; i < 16; i++)
		append(&sb, 0);
	sblog_freeze(&sb);
	snap_take(&sb, &s1);
	for (i = 0; i < 8; i++)
		append(&sb, 0);
	sblog_freeze(&sb);
	snap_take(&sb, &s2);
	sblog_trim(&sb, 0, UINT64_MAX);
	sblog_thaw_upto(&sb, UINT64_MAX - 1);
	CHECK(sb.nfrz == 2, "numbered thaws leave unnumbered freezes alone");
	sblog_thaw(&sb);
	CHECK(sb.nfrz == 1 && snap_ok(fd, &s2) && file_size(fd) > 0,
	    "one thaw of two freezes: the second's bytes stay, no truncation");
	sblog_thaw(&sb);
	CHECK(sb.nfrz == 0 && file_size(fd) == 0 && sb.spill_end == 0,
	    "the second thaw releases it: truncated to 0");
	for (i = 0; i < 8; i++)
		append(&sb, 0);
	size = file_size(fd);
	b = file_bytes(fd);
	sblog_thaw(&sb);
	sblog_thaw_upto(&sb, 99);
	CHECK(sb.nfrz == 0 && file_size(fd) == size && file_bytes(fd) == b &&
	    replay_ok(&sb), "thaws with nothing frozen change nothing");
	sblog_fini(&sb);
	close(fd);

	CHECK(sblog_init(&sb, 1, NULL) == 0, "no spill file:");
	sblog_freeze_at(&sb, 1);
	sblog_freeze(&sb);
	append(&sb, 0);
	sblog_thaw_upto(&sb, 1);
	sblog_thaw(&sb);
	CHECK(sb.nfrz == 0 && replay_ok(&sb), "freezes and thaws are no-ops");
	sblog_fini(&sb);
}

/*
 * Trims give back the pages their entries shared with entries trimmed
 * before (a trim frees the whole gap between live neighbours): payloads
 * of 5000 bytes of two channels, interleaved in the file, trimmed one
 * channel after the other, leave only the pages of the live ones.
 */
static void
test_pages(void)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	static unsigned char buf[5000];
	int fd = tmpfile_fd("test_sblog_freeze"), i;

	conf.spill_fd = fd;
	conf.mem_cap = 8 * (sizeof(buf) + SBLOG_ENTRY_COST);
	sblog_init(&sb, 2, &conf);
	for (i = 0; i < 400; i++) {
		payload(buf, sizeof(buf), i % 2, sblog_last_seq(&sb, i % 2) + 1);
		sblog_append(&sb, i % 2, 1, (int32_t)(sblog_last_seq(&sb,
		    i % 2) + 1), 0, buf, sizeof(buf));
	}
	sblog_trim(&sb, 0, UINT64_MAX);
	sblog_trim(&sb, 1, 190);
	sblog_stats(&sb, &st);
	if (can_punch)
		CHECK(file_bytes(fd) <= (long long)(st.spilled_bytes +
		    2 * 4096 * sb.nspilled) && gaps_zero(&sb) && replay_ok(&sb),
		    "small payloads of two channels trimmed in turn: %lld bytes "
		    "held for %" PRIu64 " spilled in %" PRIu64 " entries",
		    file_bytes(fd), st.spilled_bytes, sb.nspilled);
	else
		CHECK(1, "# SKIP no hole punching on this file system");
	sblog_fini(&sb);
	close(fd);
}

/* A copy of fd in a new file, its size and its data, not its holes
   (SEEK_DATA, SEEK_HOLE): what CRIU makes of a ghost file at a restore. */
static int
copy_file(int fd)
{
	static unsigned char buf[1 << 20];
	off_t data, hole = 0, size = file_size(fd);
	int nfd = tmpfile_fd("test_sblog_freeze");
	ssize_t r;

	if (ftruncate(nfd, size) == -1)
		exit(2);
	while (hole < size && (data = lseek(fd, hole, SEEK_DATA)) >= 0) {
		if ((hole = lseek(fd, data, SEEK_HOLE)) < 0)
			exit(2);
		while (data < hole) {
			r = pread(fd, buf, (size_t)(hole - data) < sizeof(buf) ?
			    (size_t)(hole - data) : sizeof(buf), data);
			if (r <= 0 || pwrite(nfd, buf, (size_t)r, data) != r)
				exit(2);
			data += r;
		}
	}
	return nfd;
}

/*
 * The clone of a checkpoint, for real: a child forked after the freeze
 * shares the file (one open file description). While the parent trims
 * and spills, the child's log reads back intact from the shared file;
 * then it plays its own restore: a copy of the file (CRIU's ghost file)
 * in place of the shared one, and the thaw of restore_prepare, which
 * drops the parent's freezes and cuts the copy down to its own log.
 */
static void
test_clone(void)
{
	struct sblog sb;
	struct sblog_stats st;
	static struct snap s;
	int fd = tmpfile_fd("test_sblog_freeze"), go[2], i, status, nfd;
	pid_t pid;
	char c;

	init2(&sb, fd, 2);
	for (i = 0; i < 40; i++)
		append(&sb, i % 2);
	sblog_trim(&sb, 1, 4);		/* a hole before the freeze */
	if (pipe(go) == -1)
		exit(2);
	sblog_freeze_at(&sb, 7);
	snap_take(&sb, &s);
	fflush(stdout);
	if ((pid = fork()) == -1)
		exit(2);
	if (pid == 0) {
		failures = 0;
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		CHECK(replay_ok(&sb), "clone: its log reads back intact from "
		    "the shared file while the parent trimmed and spilled");
		/* the dump and the restore: a copy of the file */
		nfd = copy_file(sb.spill_fd);
		if (dup2(nfd, sb.spill_fd) == -1)
			_exit(2);
		close(nfd);
		sblog_thaw(&sb);
		sblog_stats(&sb, &st);
		CHECK(sb.nfrz == 0 && sb.nholes == 0 && replay_ok(&sb) &&
		    (uint64_t)file_size(sb.spill_fd) == sb.spill_end &&
		    (!can_punch || gaps_zero(&sb)),
		    "restored clone: the parent's freezes dropped, the copy "
		    "cut to its own spill_end (%" PRIu64 ")", sb.spill_end);
		if (can_punch)
			CHECK(file_bytes(sb.spill_fd) <=
			    (long long)st.spilled_bytes + 2 * PAY,
			    "restored clone: what its parent freed after the "
			    "freeze is punched (%lld bytes held, %" PRIu64
			    " spilled)", file_bytes(sb.spill_fd),
			    st.spilled_bytes);
		sblog_freeze_at(&sb, 8);
		for (i = 0; i < 8; i++)
			append(&sb, 0);
		sblog_thaw_upto(&sb, 8);
		sblog_trim(&sb, 0, UINT64_MAX);
		sblog_trim(&sb, 1, UINT64_MAX);
		CHECK(file_size(sb.spill_fd) == 0, "restored clone: checkpoints "
		    "and trims of its own, down to an empty file");
		fflush(stdout);
		_exit(failures > 0 ? 1 : 0);
	}
	sblog_trim(&sb, 0, UINT64_MAX);
	sblog_trim(&sb, 1, 15);
	for (i = 0; i < 16; i++)
		append(&sb, 1);
	CHECK(snap_ok(fd, &s), "parent: trims and spills after the fork");
	if (write(go[1], "g", 1) != 1)
		exit(2);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0, "the clone's checks passed");
	sblog_thaw_upto(&sb, 7);
	sblog_stats(&sb, &st);
	CHECK(sb.nfrz == 0 && replay_ok(&sb) && (!can_punch ||
	    file_bytes(fd) <= (long long)st.spilled_bytes + 2 * PAY),
	    "parent: checkpoint durable, thawed, its log intact");
	close(go[0]);
	close(go[1]);
	sblog_fini(&sb);
	close(fd);
}

/*
 * Random appends (many sizes), trims, freezes and thaws (of a random
 * prefix of the freezes held, as durable checkpoints release them):
 * every eighth step, each freeze still held reads back as it was taken.
 */
static void
test_model(int ops)
{
	struct sblog_conf conf = SBLOG_CONF_INIT;
	struct sblog sb;
	struct sblog_stats st;
	static struct snap held[SBLOG_FRZ_MAX];
	static unsigned char buf[200 << 10];
	uint64_t k = 0, heldk[SBLOG_FRZ_MAX], upto, s = seed | 1;
	int fd = tmpfile_fd("test_sblog_freeze"), nheld = 0, op, ch, i, j, bad = 0;
	int freezes = 0, thaws = 0, maxheld = 0, spilling = 0;
	size_t len;

	conf.spill_fd = fd;
	conf.mem_cap = 256 << 10;
	conf.total_cap = 4 << 20;
	sblog_init(&sb, 3, &conf);
	for (op = 0; op < ops && !bad; op++) {
		ch = (int)(xs(&s) % 3);
		switch (xs(&s) % 20) {
		default:		/* append */
			len = xs(&s) % 4 == 0 ? xs(&s) % sizeof(buf) :
			    xs(&s) % 8192;
			payload(buf, len, ch, sblog_last_seq(&sb, ch) + 1);
			(void)sblog_append(&sb, ch, 1,
			    (int32_t)(sblog_last_seq(&sb, ch) + 1), 0, buf,
			    len);
			break;
		case 10: case 11: case 12: case 13:	/* trim */
			upto = sblog_first_seq(&sb, ch) + xs(&s) % 6;
			sblog_trim(&sb, ch, upto);
			break;
		case 14: case 15:	/* a checkpoint */
			if (nheld == SBLOG_FRZ_MAX)
				break;
			sblog_freeze_at(&sb, ++k);
			heldk[nheld] = k;
			snap_take(&sb, &held[nheld]);
			nheld++;
			freezes++;
			if (nheld > maxheld)
				maxheld = nheld;
			break;
		case 16:		/* a durable one: a prefix thaws */
			if (nheld == 0)
				break;
			i = (int)(xs(&s) % (uint64_t)nheld);
			sblog_thaw_upto(&sb, heldk[i]);
			for (j = i + 1; j < nheld; j++) {
				heldk[j - i - 1] = heldk[j];
				held[j - i - 1] = held[j];
			}
			nheld -= i + 1;
			thaws++;
			break;
		}
		for (i = 0; i < nheld && !bad && op % 8 == 0; i++)
			if (!snap_ok(fd, &held[i])) {
				printf("# op %d: freeze %" PRIu64 " changed\n",
				    op, heldk[i]);
				bad = 1;
			}
		sblog_stats(&sb, &st);
		spilling += st.spilled_bytes > 0;
		if (op % 512 == 0 && !replay_ok(&sb)) {
			printf("# op %d: replay differs\n", op);
			bad = 1;
		}
	}
	CHECK(!bad && replay_ok(&sb) && spilling > op / 2, "%d random steps "
	    "(%d with a spilled log), %d freezes (up to %d held), %d thaws: "
	    "every held freeze read back intact", op, spilling, freezes,
	    maxheld, thaws);
	sblog_thaw_upto(&sb, k);
	sblog_stats(&sb, &st);
	CHECK(replay_ok(&sb) && sb.nholes == 0 && (!can_punch ||
	    (gaps_zero(&sb) && file_bytes(fd) <= (long long)(st.spilled_bytes +
	    2 * 4096 * (sb.nspilled + 1)))), "thawed: every byte of the file "
	    "the log does not hold was punched, %lld bytes held for %" PRIu64
	    " spilled (at most two pages more per entry)", file_bytes(fd),
	    st.spilled_bytes);
	for (ch = 0; ch < 3; ch++)
		sblog_trim(&sb, ch, UINT64_MAX);
	CHECK(file_size(fd) == 0, "trimmed: the file is empty");
	sblog_fini(&sb);
	close(fd);
}

int
main(int argc, char **argv)
{
	static unsigned char one[1 << 20];
	int fd;

	if (argc > 2 && strcmp(argv[1], "--seed") == 0)
		seed = strtoull(argv[2], NULL, 0) * 0x9e3779b97f4a7c15ull | 1;
	printf("# seed %#" PRIx64 " (--seed to repeat)\n", seed);
	fd = tmpfile_fd("test_sblog_freeze");
	memset(one, 1, sizeof(one));
	if (pwrite(fd, one, sizeof(one), 0) != (ssize_t)sizeof(one))
		exit(2);
	can_punch = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    0, 1 << 20) == 0 && file_bytes(fd) == 0;
	close(fd);
	if (!can_punch)
		printf("# no hole punching here: space checks skipped\n");
	test_pages();
	test_frozen();
	test_truncate();
	test_nested();
	test_merge();
	test_anon();
	test_clone();
	test_model(10000);
	printf("%s\n", failures ? "# FAILED" : "# all passed");
	return failures ? 1 : 0;
}
