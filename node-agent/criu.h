/*
 * criu: finds and drives CRIU for the node agent (docs/CHECKPOINT.md,
 * "CRIU", steps 4-5 of taking a checkpoint, step 2 of restoring), and
 * packs an image directory into a zstd-compressed byte stream and back.
 *
 * Every function that runs criu blocks until criu is done (a dump of a
 * small process takes about 0.1 s; see criu.c for the measured figures
 * and behaviours). Errors come back as text in (err, n), one line, with
 * criu's own last error line when there is one.
 */
#ifndef MPIV_CRIU_H
#define MPIV_CRIU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CRIU_DEFAULT_PATH "/opt/mpiv/criu/criu"
#define CRIU_MAX_FDS      32		/* fds criu_restore can hand over */
#define CRIU_MAX_ENTRY    (4ull << 30)	/* default cap of one unpacked file */
#define CRIU_MAX_TOTAL    (16ull << 30)	/* default cap of a whole image */

/*
 * 1 when CRIU can checkpoint here (found, we are root, `criu check`
 * passes), 0 otherwise with the reason in why. Runs once; later calls
 * return the cached answer. Path: $MPIV_CRIU, else /opt/mpiv/criu/criu,
 * else `criu` in PATH when its version is >= 4.1.
 */
int criu_probe(char *why, size_t n);

/* The criu path criu_probe chose, or NULL when it found none. */
const char *criu_path(void);

/*
 * Dumps the stopped process tree rooted at pid (a host pid) into dir
 * (which must exist; tmpfs). A process in another PID namespace than
 * ours (a rank's, pidns.h) is dumped by a criu that enters its PID and
 * mount namespaces. criu kills the tree when the dump succeeded; its
 * parent still reaps it. Log: dir/dump.log. 0 or -1.
 */
int criu_dump(pid_t pid, const char *dir, char *err, size_t n);

/* One pipe the restored process gets back: the caller's fd replaces the
 * pipe whose inode the dumped process had (criu_pipe_inode at dump). */
struct criu_fdmap {
	int fd;
	uint64_t ino;
};

/*
 * Restores the image in dir (criu restore -d -S --shell-job --inherit-fd
 * fd[N]:pipe:[INODE] ...; see criu.c). Normally into our own PID
 * namespace under the pid the process had at dump: *pid_out is then the
 * restored process itself, a child of the caller, and can be dumped
 * again later. When that pid is taken, into a fresh PID namespace under
 * a handle (a child of the caller that ends exactly as the restored
 * process does, whose SIGKILL ends the whole namespace); such a process
 * cannot be dumped again. Either way: wait for *pid_out, decode its
 * status with criu_decode_status, SIGKILL it to end the rank. The
 * restored process dies with the caller when its image carries
 * PR_SET_PDEATHSIG (libmpi-lite's clones set it); the namespace handle
 * always does. criu_restore sends the restored process the SIGCONT it
 * needs (it stopped itself before the dump); criu_restore_stopped
 * leaves it stopped and returns its host pid in *task_out (== *pid_out
 * unless in a namespace). The caller must not reap children
 * concurrently (criu runs as its child). The caller may remove dir once
 * either returned. Log: dir/restore.log. 0 or -1.
 */
int criu_restore(const char *dir, const struct criu_fdmap *fds, int nfds,
    pid_t *pid_out, char *err, size_t n);
int criu_restore_stopped(const char *dir, const struct criu_fdmap *fds,
    int nfds, pid_t *pid_out, pid_t *task_out, char *err, size_t n);

/*
 * Like criu_restore_stopped, but the restored process is pid `as`
 * (criu_image_set_pid rewrites the image first) in a fresh PID
 * namespace of its own, always (pidns.h): *pid_out is the handle,
 * *task_out its host pid. Such a process can be dumped again (criu_dump
 * enters its namespaces). The C library's cached id of its main thread
 * is set to the new pid too (criu.c, criu_fix_tid).
 */
int criu_restore_as(const char *dir, const struct criu_fdmap *fds, int nfds,
    pid_t as, pid_t *pid_out, pid_t *task_out, char *err, size_t n);

/*
 * Gives the root process of the image in dir the pid `to`: pstree.img's
 * pid, process group, session and thread ids equal to the old pid are
 * rewritten, and the files CRIU names after a pid (core-PID.img ...)
 * renamed. The registers and memory are not touched. 0 or -1 (err).
 */
int criu_image_set_pid(const char *dir, pid_t to, char *err, size_t n);

/* Host pid of the restored process behind pid_out of criu_restore: the
 * process itself, or the child of the namespace's criu; -1 if gone. */
pid_t criu_restored_task(pid_t handle);

/*
 * Maps the wait status of a restore's *pid_out back to how the restored
 * process ended: *code = its exit code and *sig = 0, or *code = -1 and
 * *sig = the signal that killed it. Returns 0, or -1 when the status
 * says criu itself failed (restore error: *code = criu's exit code).
 */
int criu_decode_status(int wstatus, int *code, int *sig);

/* Reads the pipe inode behind /proc/pid/fd/fd ("pipe:[INODE]"). 0 or -1
 * (errno EINVAL when that fd is not a pipe). */
int criu_pipe_inode(pid_t pid, int fd, uint64_t *ino);

/* --------------------------------------------------------------------
 * Image archive: "MPIVIMG1", then per regular file of the directory
 * (sorted, *.log skipped) u32 name length, u64 size (big-endian), the
 * name and the bytes; it ends with a zero name length and u64 = number
 * of files. The whole stream is one zstd stream.
 */

/* zstd level from $MPIV_ZSTD_LEVEL (1..19), default 3. */
int criu_zstd_level(void);

/*
 * Packs dir through zstd at level, handing compressed chunks to out
 * (which returns 0, or -1 to abort). *raw_bytes (may be NULL) gets the
 * uncompressed archive size. 0 or -1 (errno set; out's failure kept).
 */
int criu_pack_dir(const char *dir, int level,
    int (*out)(void *ctx, const void *buf, size_t len), void *ctx,
    uint64_t *raw_bytes);

/*
 * Incremental decoder: feed compressed chunks as they arrive; files are
 * written into dir (which must exist). Names with '/', "." or ".." and
 * entries larger than max_entry (or an image larger than max_total; 0
 * for the defaults) are rejected; nothing from the stream is trusted.
 * After an error every call fails with the same message.
 */
struct criu_unpack;

struct criu_unpack *criu_unpack_stream_new(const char *dir, uint64_t max_entry,
    uint64_t max_total);
int criu_unpack_stream_feed(struct criu_unpack *u, const void *buf, size_t len);
/* 0 when the stream was complete (end marker and zstd frame), else -1. */
int criu_unpack_stream_finish(struct criu_unpack *u);
const char *criu_unpack_stream_error(const struct criu_unpack *u);
uint64_t criu_unpack_stream_raw_bytes(const struct criu_unpack *u);
/* criu_dig (CRIU_DIG_SEED) of the archive bytes decoded so far. */
uint64_t criu_unpack_stream_digest(const struct criu_unpack *u);
void criu_unpack_stream_free(struct criu_unpack *u);

/* --------------------------------------------------------------------
 * Incremental images (criu_delta.c; docs/CHECKPOINT.md, "Incremental
 * images"). The archive above, seen as blocks: every file's bytes cut in
 * CRIU_BLOCK pieces (the last one of a file may be short), numbered from
 * 0 across the files in archive order. A delta archive says, per file,
 * which blocks are new bytes and which equal a full block of its
 * parent's archive:
 *
 *   "MPIVDLT1", then per file: u32 name length, u64 size, the name, and
 *   ops covering exactly the size: 'L' u32 N then the bytes of the next
 *   N blocks (the last one may be short); 'C' u64 P u32 N: the next N
 *   blocks are the parent's full blocks P..P+N-1. It ends with a zero
 *   name length and u64 = number of files. One zstd stream, like the
 *   full archive.
 *
 * A content digest (criu_dig) of the full archive's bytes travels in
 * the metadata: whoever rebuilds a full archive from a chain checks it,
 * so a wrong block (a hash collision, a corrupt parent) is never
 * restored.
 */
#define CRIU_ARCH_MAGIC_STR "MPIVIMG1"
#define CRIU_BLOCK	  4096u
#define CRIU_DELTA_MAGIC  "MPIVDLT1"
#define CRIU_MAX_FILES	  65536u	/* entries of one archive */

/* Streaming 64-bit digest: four multiply-rotate lanes over 32-byte
   stripes, the tail buffered, so any cut of the input gives the same. */
struct criu_dig {
	uint64_t v[4];
	uint64_t total;
	unsigned char buf[32];
	size_t n;
};
void criu_dig_init(struct criu_dig *d, uint64_t seed);
void criu_dig_update(struct criu_dig *d, const void *p, size_t len);
uint64_t criu_dig_final(const struct criu_dig *d);
#define CRIU_DIG_SEED 0x6d70697664696731ull	/* the content digest's */

/* 128-bit hash of one block (dedup key). Never {0, 0}. */
struct criu_bhash {
	uint64_t a, b;
};
void criu_block_hash(const void *p, size_t len, struct criu_bhash *h);

/* Pass 1 over a dump directory: the full archive's size and digest and
 * the hash of every block ({0, 0} for a short one, never deduplicated). */
struct criu_scan {
	uint64_t raw_bytes;
	uint64_t digest;
	uint64_t nblocks;
	struct criu_bhash *blocks;
};
int criu_scan_dir(const char *dir, struct criu_scan *s);
void criu_scan_free(struct criu_scan *s);

/* The blocks of a parent, looked up by hash. */
struct criu_dedup;
struct criu_dedup *criu_dedup_new(const struct criu_bhash *blocks, uint64_t n);
void criu_dedup_free(struct criu_dedup *d);
/* Parent block number of a full block with hash h, or -1. */
int64_t criu_dedup_find(const struct criu_dedup *d, const struct criu_bhash *h);
/* How many blocks of s the parent has. */
uint64_t criu_dedup_count(const struct criu_dedup *d, const struct criu_scan *s);

/* Packs dir (scanned as s) as a delta over the parent behind d, like
 * criu_pack_dir; *raw_bytes gets the delta archive's size. 0 or -1. */
int criu_pack_delta(const char *dir, const struct criu_scan *s,
    const struct criu_dedup *d, int level,
    int (*out)(void *ctx, const void *buf, size_t len), void *ctx,
    uint64_t *raw_bytes);

/* Rebuilding a full archive (the checkpoint server). Files are fds of
 * the caller; nothing in them is trusted: a bad structure, a block
 * number out of range, a size over max_total fail with a reason. */

/* Decompresses a stored full image (zfd, read from offset 0) into rawfd
 * (empty, read-write), checking its structure; *digest of its bytes. */
int criu_expand_full(int zfd, int rawfd, uint64_t max_total,
    uint64_t *digest, char *err, size_t n);
/* Applies the delta image zfd to the parent's full archive prawfd,
 * writing the new full archive to rawfd; *digest of its bytes. */
int criu_apply_delta(int prawfd, int zfd, int rawfd, uint64_t max_total,
    uint64_t *digest, char *err, size_t n);
/* Compresses the raw archive rawfd into zfd (a stream like criu_pack_dir
 * makes); *bytes and *sum (FNV-1a 64, runtime/cksum.h) of what it wrote. */
int criu_compress_fd(int rawfd, int zfd, int level, uint64_t *bytes,
    uint64_t *sum, char *err, size_t n);

#endif
