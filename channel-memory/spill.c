/*
 * spill.c: logged payloads moved from memory to a file, so that a job's
 * message log can be larger than the CM's --max-memory (MPICH-V's
 * Channel Memories kept their logs on disk the same way).
 *
 * Once the payloads a job's log holds in memory pass half of the cap, the
 * oldest complete ones of each home rank (they are the least likely to be
 * needed: only a replay reads them, and the next checkpoint frees them)
 * are appended to the job's spill file and their buffers dropped, until
 * memory is down to a quarter of the cap. A replay reads a spilled
 * payload back into a fresh buffer. A checkpoint that frees spilled
 * entries punches their bytes out of the file, so the disk holds what the
 * log still needs, no more. The file is unlinked as soon as it is open
 * (0600, in --spill-dir, default /var/tmp): it goes with the CM, crash
 * included. This extends memory; it is not a durable log (a CM that dies
 * loses it like its memory). A write error (disk full) stops spilling for
 * the job, said once: the memory cap and log pressure (pressure.c) take
 * over as before. With --store (store.c) a payload is in the job's store
 * already: it is dropped from memory without another write, read back
 * from the store, and punched out of it by store_forget.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm_priv.h"
#include "log.h"

/* Opens the job's spill file (unlinked at once). 0 or -1 (said once). */
static int
spill_open(struct job *j)
{
	char path[4200];
	static unsigned seq;

	if (j->spill_fd >= 0)
		return 0;
	if (j->spill_failed || j->cm->spill_dir == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/mpiv-cm-spill.%ld.%u", j->cm->spill_dir,
	    (long)getpid(), seq++);
	j->spill_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_TRUNC |
	    O_CLOEXEC, 0600);
	if (j->spill_fd < 0) {
		log_warn("cm cannot spill job=%s: open %s", j->id, path);
		j->spill_failed = true;
		return -1;
	}
	(void)unlink(path);
	j->spill_end = 0;
	log_info("cm spilling job=%s dir=%s", j->id, j->cm->spill_dir);
	return 0;
}

/* Appends e's payload to the spill file (e->spill_off). 0 or -1. */
static int
spill_write(struct job *j, struct logent *e)
{
	const uint8_t *p = pbuf_data(e->pb);
	uint64_t len = pbuf_len(e->pb), done = 0;

	while (done < len) {
		ssize_t w = pwrite(j->spill_fd, p + done, len - done,
		    (off_t)(j->spill_end + done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			log_warn("cm spill write failed job=%s bytes=%" PRIu64
			    ": no more spilling for this job (the memory cap "
			    "and checkpoints take over)", j->id, len);
			j->spill_failed = true;
			return -1;
		}
		done += (uint64_t)w;
	}
	e->spill_off = j->spill_end;
	j->spill_end += len;
	return 0;
}

/* Drops e's buffer, its payload written to the spill file first unless
   the store holds it already. */
static int
spill_entry(struct job *j, struct rank_state *rs, struct logent *e)
{
	uint64_t len = pbuf_len(e->pb);

	if (e->store_off == 0 && (spill_open(j) < 0 || spill_write(j, e) < 0))
		return -1;
	e->spilled = true;
	j->spill_bytes += len;
	j->log_bytes -= len;
	rs->log_bytes -= len;
	pbuf_unref(e->pb);
	e->pb = NULL;
	return 0;
}

/* True when e's payload can go to the file now. */
static bool
spill_can(const struct logent *e)
{
	return e->kind == LOG_DELIVER && !e->refill && !e->spilled &&
	    e->pb != NULL && pbuf_len(e->pb) > 0 &&
	    pbuf_avail(e->pb) == pbuf_len(e->pb);
}

void
spill_check(struct job *j)
{
	uint64_t max = j->cm->max_memory, low = max / 4;

	if (j->relay_only || j->spill_failed ||
	    (j->cm->spill_dir == NULL && j->store == NULL) ||
	    j->log_bytes <= max / 2 || j->spilling)
		return;
	j->spilling = true;	/* spill_entry may re-enter through checks */
	for (int32_t r = 0; r < j->nranks && j->log_bytes > low &&
	    !j->spill_failed; r++) {
		struct rank_state *rs = &j->ranks[r];
		struct logent *e;

		if (!rs->home)
			continue;
		bool prefix = true;	/* every entry before e is done */

		e = rs->spill_next != NULL ? rs->spill_next : rs->log_head;
		for (; e != NULL && j->log_bytes > low; e = e->next) {
			if (spill_can(e) && spill_entry(j, rs, e) < 0)
				break;
			/* busy entries are skipped for now, not waited for:
			   the cursor stays at the first of them */
			if (prefix && (e->spilled || e->pb == NULL))
				rs->spill_next = e->next;
			else
				prefix = false;
		}
	}
	j->spilling = false;
	if (j->spill_bytes > j->cm->max_memory)
		pressure_begin(j);
	log_debug("cm spilled job=%s spill_bytes=%" PRIu64 " log_bytes=%" PRIu64,
	    j->id, j->spill_bytes, j->log_bytes);
}

struct pbuf *
spill_load(struct job *j, const struct logent *e)
{
	struct pbuf *pb;
	uint8_t *p;
	uint64_t done = 0;

	if (e->store_off != 0)
		return store_load(j, e->store_off, e->size);
	if (j->spill_fd < 0 || (pb = pbuf_new((uint32_t)e->size)) == NULL)
		return NULL;
	p = pbuf_data(pb);
	while (done < e->size) {
		ssize_t n = pread(j->spill_fd, p + done, e->size - done,
		    (off_t)(e->spill_off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warn("cm spill read failed job=%s event=%" PRIu64
			    " offset=%" PRIu64, j->id, e->event, e->spill_off);
			pbuf_unref(pb);
			return NULL;
		}
		done += (uint64_t)n;
	}
	pbuf_advance(pb, (uint32_t)e->size);
	return pb;
}

void
spill_forget(struct job *j, struct rank_state *rs, struct logent *e)
{
	if (rs->spill_next == e)
		rs->spill_next = e->next;
	if (!e->spilled)
		return;
	j->spill_bytes -= e->size;
	e->spilled = false;
	if (e->store_off != 0)
		return;		/* store_forget gives those bytes back */
	/* give the disk back; a file system without hole punching keeps the
	   bytes until the job ends */
	(void)fallocate(j->spill_fd, FALLOC_FL_PUNCH_HOLE |
	    FALLOC_FL_KEEP_SIZE, (off_t)e->spill_off, (off_t)e->size);
	e->spilled = false;
}

void
spill_close(struct job *j)
{
	if (j->spill_fd >= 0)
		close(j->spill_fd);
	j->spill_fd = -1;
}
