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
 * or not need); a total cap bounds memory plus file.
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

#include <stddef.h>
#include <stdint.h>

#define SBLOG_ENTRY_COST	96			/* bytes per entry */
#define SBLOG_MEM_CAP		(64ull << 20)		/* default mem_cap */
#define SBLOG_TOTAL_CAP		(1ull << 30)		/* default total_cap */

struct sblog_conf {
	uint64_t mem_cap;	/* bytes in memory before spilling; 0: default */
	uint64_t total_cap;	/* memory plus spill file; 0: default */
	int spill_fd;		/* -1: never spill; else a regular file
				   opened O_RDWR without O_APPEND, the
				   caller's (not closed by the log) */
};

/* A conf of defaults without spilling (a zeroed conf names fd 0). */
#define SBLOG_CONF_INIT	{ .mem_cap = 0, .total_cap = 0, .spill_fd = -1 }

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
	struct sblog_ent *pool;		/* free entries */
	struct sblog_slab *slabs;	/* where entries come from */
	struct sblog_arena *arenas;	/* where large payloads come from */
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
 * default. 0, or -1 with errno EINVAL and conf unchanged when either
 * does not parse (the caller names both variables in its error).
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
 * the file system (holes punched where supported; the file truncated
 * to 0 once it holds nothing). A dst out of range is ignored.
 */
void sblog_trim(struct sblog *sb, int dst, uint64_t upto);

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
 * A checkpoint's clone shares the spill file: between sblog_freeze (just
 * before the fork) and sblog_thaw (the checkpoint is durable, or in the
 * restored clone, which has a file of its own) the bytes the file held
 * at the freeze stay as they were: new spills go past them, and neither
 * holes nor truncation touch them. Thaw gives back what was freed.
 */
void sblog_freeze(struct sblog *sb);
void sblog_thaw(struct sblog *sb);

#endif
