/*
 * fuzz_cm_store.c: libFuzzer target for a CM's recovery from its store
 * (channel-memory/recover.c, store_read in store.c). A valid store of job
 * "f" (4 ranks, this CM home of rank 0) is written once through the
 * store's own writers: messages with payloads, deliveries, a probe and a
 * folded miss, a cancel, two outcomes (a Test, a direct receive
 * binding), an incarnation, a trim, a digest trim. Each input becomes
 * the job file of a fresh store directory, as selected by its first
 * byte: the raw input, the valid store with input bytes written over it
 * at an offset, or the valid store cut at an offset with the input
 * appended. store_recover must rebuild the job or drop the file, never
 * crash or leak.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../channel-memory/cm_priv.h"
#include "log.h"

static struct ev_loop *fz_loop;
static char fz_dir[64], fz_file[128];
static uint8_t *fz_base;
static size_t fz_base_len;

static void
fz_msg(struct job *j, int32_t src, uint64_t seq, const char *payload)
{
	Mpiv__StoreMsg sm = MPIV__STORE_MSG__INIT;
	uint32_t n = (uint32_t)strlen(payload);
	struct pbuf *pb = pbuf_new(n);

	memcpy(pbuf_data(pb), payload, n);
	pbuf_advance(pb, n);
	sm.src = src;
	sm.dst = 0;
	sm.tag = (int32_t)seq;
	sm.seq = seq;
	sm.digest = seq * 77;
	(void)store_msg(j, &sm, pb);
	pbuf_unref(pb);
}

static void
fz_event(struct job *j, enum log_kind kind, uint64_t event, int32_t src,
    uint64_t seq, uint64_t size, bool fold)
{
	struct logent e = { .kind = kind, .rcv = 0, .event = event,
	    .post_no = event, .count = 1, .req_source = -1, .req_tag = -1,
	    .found = kind == LOG_DELIVER, .src = src, .tag = (int32_t)seq,
	    .seq = seq, .size = size };

	if (fold)	/* one more miss folded into the entry of event-1 */
		e.event = event - 1, e.count = 2;
	store_event(j, &e, fold);
}

static void
fz_make_base(void)
{
	struct cm cm = { .loop = fz_loop, .store_dir = fz_dir };
	Mpiv__NdOutcome o = MPIV__ND_OUTCOME__INIT;
	struct ckpt_state ck = { .freed_event = 1, .freed_nd = 0,
	    .freed_ckpt = 1, .freed_inc = 1 };
	uint64_t seqs[4] = { 1, 1, 0, 0 };
	const char *err;
	struct job *j;
	FILE *f;

	if (job_setup(&cm, "f", 4, 1, 0, false, &err) < 0)
		abort();
	j = job_find(&cm, "f");
	if (store_open(j) < 0)
		abort();
	fz_msg(j, 1, 1, "one");
	fz_msg(j, 1, 2, "two!");
	fz_msg(j, 2, 1, "");
	fz_event(j, LOG_DELIVER, 1, 1, 1, 3, false);
	fz_event(j, LOG_DELIVER, 2, 1, 2, 4, false);
	fz_event(j, LOG_PROBE, 3, 0, 0, 0, false);
	fz_event(j, LOG_PROBE, 4, 0, 0, 0, true);
	fz_event(j, LOG_CANCEL, 5, 0, 0, 0, false);
	fz_msg(j, 3, 1, "late");
	o.nd_no = 1;
	o.kind = 1;
	store_nd(j, 0, &o, 1, 1);
	o.nd_no = 2;		/* wildcard receive 1 bound to (1, 1) */
	o.kind = 8;
	o.flag = true;
	o.post_no = 1;
	o.src = 1;
	o.seq = 1;
	store_nd(j, 0, &o, 2, 1);
	store_rank(j, 1, 2, 0, 0);
	store_trim(j, 0, &ck);
	store_digest_trim(j, 1, seqs, 4);
	store_close(j, false);
	job_free_all(&cm);
	f = fopen(fz_file, "r");
	if (f == NULL)
		abort();
	fz_base = malloc(1 << 16);
	fz_base_len = fread(fz_base, 1, 1 << 16, f);
	fclose(f);
	unlink(fz_file);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init("fuzz", LOG_LEVEL_ERROR);
	fz_loop = ev_default_loop(0);
	snprintf(fz_dir, sizeof(fz_dir), "/tmp/mpiv-fuzz-store.XXXXXX");
	if (mkdtemp(fz_dir) == NULL)
		abort();
	snprintf(fz_file, sizeof(fz_file), "%s/job-66.log", fz_dir);	/* "f" */
	fz_make_base();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cm cm = { .loop = fz_loop, .store_dir = fz_dir };
	size_t off;
	int fd;

	if (size < 3)
		return 0;
	off = ((size_t)data[1] << 8 | data[2]) % (fz_base_len + 1);
	fd = open(fz_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	switch (data[0] % 3) {
	case 0:
		(void)!write(fd, data + 3, size - 3);
		break;
	case 1:
		(void)!write(fd, fz_base, fz_base_len);
		(void)!pwrite(fd, data + 3, size - 3, (off_t)off);
		break;
	default:
		(void)!write(fd, fz_base, off);
		(void)!write(fd, data + 3, size - 3);
		break;
	}
	close(fd);
	(void)store_recover(&cm);
	job_free_all(&cm);
	unlink(fz_file);
	return 0;
}
