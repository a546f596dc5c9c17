/*
 * sblog.h: a rank's log of the payloads it sent, kept by the sender so
 * that a restarted receiver can be given its messages again (sender-based
 * pessimistic message logging, as in MPICH-V2 and Open MPI's vprotocol
 * pessimist; docs/DIRECT.md, "The sender's payload log").
 *
 * One log per rank, one channel per destination rank. Each entry holds
 * the channel sequence number the log gave it at append (1, 2, 3, ...),
 * what it takes to deliver it again (context, tag; the source is the
 * rank itself), opaque flags and a copy of the payload. Entries leave the
 * log when the receiver's checkpoint covers them (sblog_trim).
 *
 * The log lives in the process's own memory, so that a CRIU image of the
 * rank carries it. Past a memory cap it may move its oldest payloads to a
 * spill file the caller opened (and owns, and must make an image carry,
 * or not need); a total cap bounds memory plus file. A checkpoint's
 * clone shares that file until its image is taken: sblog_freeze and
 * sblog_thaw keep the bytes it reads as they were meanwhile.
 *
 * Accounting: every entry costs SBLOG_ENTRY_COST bytes of memory for its
 * bookkeeping (spilled or not) plus its payload, in memory or in the
 * file. The caps, the stats and ENOSPC all count that way, so that a
 * flood of empty messages is bounded too.
 *
 * Not thread-safe: one thread at a time per log.
 */
#ifndef MPIV_SBLOG_H
#define MPIV_SBLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBLOG_ENTRY_COST	96			/* bytes per entry */
/* Defaults: a log in memory up to 1 GiB (as before spilling: a spill
   write of every large payload past 64 MiB made a checkpoint-free 1 MiB
   ping-pong 1.7x slower), the next GiB on disk. */
#define SBLOG_MEM_CAP		(1ull << 30)		/* default mem_cap */
#define SBLOG_TOTAL_CAP		(2ull << 30)		/* default total_cap */

struct sblog_conf {
	uint64_t mem_cap;	/* bytes in memory before spilling; 0: default */
	uint64_t total_cap;	/* memory plus spill file; 0: default */
	int spill_fd;		/* -1: never spill; else a regular file
				   opened O_RDWR without O_APPEND, the
				   caller's (not closed by the log) */
	/* With spill_fd -1: called once, when the log first needs to
	   spill, for such a file (-1: it stays in memory). A file made
	   only then is never left behind by a process that dies at its
	   start, between making and unlinking it. */
	int (*spill_open)(void);
	int huge;		/* arenas' huge pages: SBLOG_HUGE_AUTO (0),
				   SBLOG_HUGE_ON or SBLOG_HUGE_OFF */
};

/* Huge pages for the arenas of large payloads. AUTO asks for them and
   drops them for good when the copies into fresh memory they make
   cost more than 4 KiB pages would (the kernel compacting memory on
   each fault: docs/DIRECT.md, "The sender's log"). */
#define SBLOG_HUGE_AUTO	0
#define SBLOG_HUGE_ON	1
#define SBLOG_HUGE_OFF	2

/* A conf of defaults without spilling (a zeroed conf names fd 0). */
#define SBLOG_CONF_INIT	{ .mem_cap = 0, .total_cap = 0, .spill_fd = -1, \
	.spill_open = NULL, .huge = SBLOG_HUGE_AUTO }

struct sblog_stats {
	uint64_t entries;	/* entries held */
	uint64_t mem_bytes;	/* payloads in memory + SBLOG_ENTRY_COST each */
	uint64_t spilled_bytes;	/* payloads in the spill file */
	uint64_t total_bytes;	/* mem_bytes + spilled_bytes (<= total_cap) */
	uint64_t appended;	/* entries ever appended */
	uint64_t trimmed;	/* entries ever dropped (trim, set_next_seq) */
	int spill_errno;	/* the write error that stopped spilling, 0 */
};

struct sblog_chan;
struct sblog_ent;
struct sblog_slab;
struct sblog_arena;
struct sblog_hole;

/* Freezes told apart; more merge into the newest (sblog_freeze_at). */
#define SBLOG_FRZ_MAX	8

/* One freeze, or several merged (the log's own). */
struct sblog_frz {
	uint64_t k;		/* checkpoint number; SBLOG_FRZ_ANON */
	uint64_t gen;		/* sb->frz_gen when it was made */
	uint64_t end;		/* spill_end then: the bytes it keeps */
	uint32_t n;		/* freezes merged into it */
};
#define SBLOG_FRZ_ANON	UINT64_MAX	/* made by sblog_freeze */

/* Embedded by the caller; its fields are the log's own. */
struct sblog {
	struct sblog_chan *chans;	/* [nranks] */
	int nranks;
	int spill_fd;
	int spill_errno;	/* nonzero: spilling stopped until the file
				   is emptied (trim truncates it) */
	uint64_t mem_cap, total_cap;
	uint64_t mem_bytes, spilled_bytes;
	uint64_t nentries, nspilled, appended, trimmed;
	uint64_t spill_end;	/* next free offset in the spill file */
	struct sblog_ent *mhead, *mtail; /* in-memory payloads, oldest first */
	struct sblog_ent *fhead, *ftail; /* spilled ones, in file order */
	struct sblog_ent *pool;		/* free entries */
	struct sblog_slab *slabs;	/* where entries come from */
	struct sblog_arena *arenas;	/* where large payloads come from */
	/* freezes, oldest first, and what was freed under them */
	struct sblog_frz frz[SBLOG_FRZ_MAX];
	int nfrz;
	uint64_t frz_gen;	/* freezes made so far */
	uint64_t frz_end;	/* bytes below it are frozen (nfrz > 0) */
	struct sblog_hole *holes; /* freed while frozen, oldest first */
	size_t nholes, capholes;
	uint64_t spill_dev, spill_ino;	/* the file the freezes are of */
	int (*spill_open)(void);	/* sblog_conf.spill_open, NULL once
					   called */
	int huge;		/* SBLOG_HUGE_*: AUTO while still probing */
	bool fresh;		/* the last arena payload is untouched memory */
	bool no_populate;	/* the kernel has no MADV_POPULATE_WRITE */
	uint64_t probe_bytes, probe_ns;	/* copies into fresh huge pages */
	uint64_t replay_skipped; /* entries replays walked past (seq <=
				    after), for the tests */
};

/*
 * Prepares sb for nranks destinations (0 .. nranks-1); conf NULL means
 * SBLOG_CONF_INIT. 0, or -1 with errno: EINVAL (nranks < 1, a spill fd
 * that is not a regular file opened O_RDWR without O_APPEND), ENOMEM.
 */
int sblog_init(struct sblog *sb, int nranks, const struct sblog_conf *conf);

/* Frees everything the log holds (not the spill file: the caller's). */
void sblog_fini(struct sblog *sb);

/*
 * Overrides conf's caps from MPIV_SENDLOG_MEM (mem_cap) and
 * MPIV_SENDLOG_MAX (total_cap), when set and not empty: decimal byte
 * counts with an optional K, M or G (binary) suffix; 0 means the
 * default; and conf's huge from MPIV_SENDLOG_HUGE (auto, on, off).
 * 0, or -1 with errno EINVAL and conf unchanged when one does not
 * parse (the caller names the variables in its error).
 */
int sblog_conf_from_env(struct sblog_conf *conf);

/* Parses one such byte count into *out. 0, or -1 with errno EINVAL. */
int sblog_parse_size(const char *s, uint64_t *out);

/*
 * Appends a copy of len bytes at buf (buf may be NULL when len is 0) to
 * channel dst. Returns the entry's seq, or 0 with errno: EINVAL (dst out
 * of range, buf NULL with len > 0), ENOSPC (the log would exceed
 * total_cap: checkpoints must trim it, or MPIV_SENDLOG_MAX be raised),
 * EOVERFLOW (the channel used up its seqs), ENOMEM. On failure the log
 * is unchanged. Costs a copy and O(1) bookkeeping; only past mem_cap
 * with a spill fd does it write the oldest payloads (across channels)
 * to the file, in batches down to 7/8 of mem_cap. A spill write error
 * keeps the payloads in memory and stops spilling (stats.spill_errno)
 * until trims empty the file; total_cap still bounds the log.
 */
uint64_t sblog_append(struct sblog *sb, int dst, uint32_t context,
    int32_t tag, uint32_t flags, const void *buf, size_t len);

/*
 * Drops the entries of channel dst with seq <= upto (the receiver's
 * durable checkpoint covers them) and gives their spilled bytes back to
 * the file system (holes punched where supported, later under a freeze;
 * the file truncated to 0 once it holds nothing). A dst out of range is
 * ignored.
 */
void sblog_trim(struct sblog *sb, int dst, uint64_t upto);

/*
 * Whether the next append to dst would get a seq that a trim covered
 * already (a re-execution sending again what the receiver's durable
 * checkpoint holds), and that append without storing anything: the seq
 * it would have had, or 0 when not covered. Such an entry would stay in
 * the log until the receiver's next checkpoint, and a receiver that
 * takes none (one in MPI_Finalize) would let it fill the log for good.
 */
bool sblog_covered(const struct sblog *sb, int dst);
uint64_t sblog_skip(struct sblog *sb, int dst);
/* The highest seq to dst a trim covered (0: none). */
uint64_t sblog_trimmed(const struct sblog *sb, int dst);

typedef int (*sblog_replay_cb)(void *arg, uint64_t seq, uint32_t context,
    int32_t tag, uint32_t flags, const void *buf, size_t len);

/*
 * Calls cb for every entry of channel dst with seq > after, in seq
 * order; buf is never NULL and is valid during the call only (spilled
 * payloads are read back into a buffer of the log's). cb must not
 * change the log (no append, trim, set_next_seq or fini on it). Returns
 * 0; cb's value as soon as it returns nonzero; -1 with errno EINVAL (dst
 * out of range), ENOMEM, or the read error (EIO for a file shorter than
 * an entry: data is never handed over truncated).
 */
int sblog_replay(struct sblog *sb, int dst, uint64_t after,
    sblog_replay_cb cb, void *arg);

/* The seq of dst's latest append (0 before any), and the lowest seq the
   log holds for dst (last + 1 when it holds none). 0 for a bad dst. */
uint64_t sblog_last_seq(const struct sblog *sb, int dst);
uint64_t sblog_first_seq(const struct sblog *sb, int dst);

/*
 * After a restart: the receiver dst expects next as the next seq from
 * this rank. Entries with seq < next are dropped (it has them). Then:
 *   - when next > last_seq(dst), the channel holds nothing and the next
 *     append gets seq next (seqs last+1 .. next-1 are never used: the
 *     receiver already has those messages from an earlier incarnation);
 *   - else the entries next .. last_seq stay, to be replayed
 *     (sblog_replay(sb, dst, next - 1, ...)), and the next append gets
 *     last_seq + 1 as before.
 * Either way first_seq(dst) is next afterwards. 0, or -1 with errno:
 * EINVAL (dst out of range, next 0), ERANGE (next < first_seq(dst): the
 * receiver wants entries the log already dropped; nothing is changed).
 */
int sblog_set_next_seq(struct sblog *sb, int dst, uint64_t next);

void sblog_stats(const struct sblog *sb, struct sblog_stats *st);

/*
 * A checkpoint's clone shares the spill file, and its dump reads it:
 * from sblog_freeze_at(k) (just before the clone of checkpoint k is
 * forked) until sblog_thaw_upto(k') with k' >= k (that checkpoint, or
 * a later one, is durable: the node dumps one clone of a rank at a
 * time, so every older clone is done with the file too, dumped or
 * not), the bytes of the entries spilled at the freeze stay as they
 * were: new spills go past the end the file had then, a trim frees
 * their space only later, and the file is not truncated. A thaw punches out what no freeze still keeps
 * and, when no freeze is left and nothing is spilled, truncates the
 * file to 0 (offsets start again at 0). Each freeze costs nothing
 * else; the file grows by what trims free while frozen.
 *
 * A clone restored from an image has a file of its own (CRIU's copy):
 * any thaw or freeze there (sblog_thaw_upto(sb, UINT64_MAX) in the
 * restore says it outright) drops the freezes its memory holds of its
 * parent's clones, and thaws punch out, and truncate away, the bytes
 * the copy holds that are not the restored log's. A thaw of nothing
 * frozen is harmless. Caps and stats are not changed by freezes.
 *
 * sblog_freeze and sblog_thaw are the same without numbers: each thaw
 * releases the oldest freeze, which is safe as long as every thaw
 * stands for a distinct durable checkpoint of this process (there are
 * at least as many freezes at or below it), but a checkpoint that never
 * becomes durable keeps its freeze until the process is restored. Use
 * one form or the other, not both.
 */
void sblog_freeze_at(struct sblog *sb, uint64_t k);
void sblog_thaw_upto(struct sblog *sb, uint64_t k);
void sblog_freeze(struct sblog *sb);
void sblog_thaw(struct sblog *sb);

#endif
