/*
 * fuzz_cs_conn.c: libFuzzer target for the checkpoint server's handling
 * of one connection. An in-process CS (no listening socket, a temp store
 * made once, holding one image of job "f" rank 0) serves a socketpair;
 * the fuzz input is written on it as the peer's bytes, then the peer
 * hangs up. The first input byte picks a prefix: none (raw bytes), a node
 * Hello, a node Hello and an ImagePut of job "f" rank 1 (the input is then
 * the upload's frames), or a node Hello and an ImageGet of the stored
 * image (the input arrives during the download). Everything must close
 * cleanly and leak-free, and no temp file may stay behind.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../checkpoint-server/cs_priv.h"
#include "cksum.h"
#include "frame.h"
#include "log.h"
#include "seal.h"

static struct ev_loop *fuzz_loop;
static char fuzz_store[64];
static uint64_t fuzz_next_ckpt = 1;

static void
fuzz_spin(int rounds)
{
	for (int i = 0; i < rounds; i++)
		ev_run(fuzz_loop, EVRUN_NOWAIT);
}

static void
fuzz_hello(int fd)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;

	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_NODE;
	h.rank = -1;
	(void)frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0, 100);
}

static void
fuzz_put(int fd, int32_t rank, uint64_t k)
{
	Mpiv__ImagePut put = MPIV__IMAGE_PUT__INIT;
	Mpiv__ImageMeta meta = MPIV__IMAGE_META__INIT;

	meta.job_id = "f";
	meta.rank = rank;
	meta.ckpt_no = k;
	put.meta = &meta;
	(void)frame_write(fd, MPIV__MSG_TYPE__MSG_IMAGE_PUT, &put.base, NULL, 0,
	    100);
}

/* The image the downloads read: 300 KiB, more than one chunk. */
static void
fuzz_seed_image(struct cs *cs)
{
	static uint8_t img[300 * 1024];
	Mpiv__ImageData d = MPIV__IMAGE_DATA__INIT;
	Mpiv__ImageEnd e = MPIV__IMAGE_END__INIT;
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		abort();
	(void)cs_peer_new(cs, sp[0]);
	fuzz_hello(sp[1]);
	fuzz_put(sp[1], 0, 1);
	memset(img, 'i', sizeof(img));
	fcntl(sp[1], F_SETFL, O_NONBLOCK);
	for (size_t off = 0; off < sizeof(img); off += 4096) {
		while (frame_write(sp[1], MPIV__MSG_TYPE__MSG_IMAGE_DATA,
		    &d.base, img + off, 4096, 0) < 0)
			fuzz_spin(1);
		fuzz_spin(1);
	}
	e.bytes = sizeof(img);
	e.checksum = cksum_update(CKSUM_INIT, img, sizeof(img));
	(void)frame_write(sp[1], MPIV__MSG_TYPE__MSG_IMAGE_END, &e.base, NULL,
	    0, 100);
	fuzz_spin(20);
	close(sp[1]);
	fuzz_spin(5);
}

/* The temp store goes when the fuzzer exits. */
static void
fuzz_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_store);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_cs_conn: cannot remove %s\n", fuzz_store);
}

static int
fuzz_count_tmp(void)
{
	char path[128];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/f/1", fuzz_store);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, "tmp-", 4) == 0;
	closedir(d);
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cs cs;
	Mpiv__ImageGet g = MPIV__IMAGE_GET__INIT;
	int sp[2];
	size_t off;

	if (fuzz_loop == NULL) {
		signal(SIGPIPE, SIG_IGN);
		log_init("fuzz", LOG_LEVEL_ERROR);
		/* the bytes are frames: the server offers no cipher (the
		   record layer has fuzz_seal) */
		seal_set_plaintext(true);
		fuzz_loop = ev_loop_new(EVFLAG_AUTO);
		snprintf(fuzz_store, sizeof(fuzz_store), "/tmp/fuzz-cs-XXXXXX");
		if (mkdtemp(fuzz_store) == NULL)
			abort();
		atexit(fuzz_cleanup);
		cs.loop = fuzz_loop;
		cs.store = fuzz_store;
		cs.keep = 2;
		cs.max_image = 1 << 20;
		cs.idle_timeout = 5.0;
		cs.chunk = malloc(CS_CHUNK);
		strcpy(cs.bound, "fuzz:0");
		if (cs.chunk == NULL || cs_store_open(&cs) < 0)
			abort();
		fuzz_seed_image(&cs);
	}
	if (size < 1 || size > 60000)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		abort();
	(void)cs_peer_new(&cs, sp[0]);
	switch (data[0] % 4) {
	case 1:
		fuzz_hello(sp[1]);
		break;
	case 2:
		fuzz_hello(sp[1]);
		fuzz_put(sp[1], 1, fuzz_next_ckpt++);
		break;
	case 3:
		fuzz_hello(sp[1]);
		g.job_id = "f";
		(void)frame_write(sp[1], MPIV__MSG_TYPE__MSG_IMAGE_GET, &g.base,
		    NULL, 0, 100);
		break;
	}
	fcntl(sp[1], F_SETFL, O_NONBLOCK);
	for (off = 1; off < size;) {
		ssize_t w = write(sp[1], data + off, size - off);
		if (w <= 0)
			break;	/* the CS closed on us, or the buffer is full */
		off += (size_t)w;
		fuzz_spin(2);
	}
	shutdown(sp[1], SHUT_WR);
	fuzz_spin(20);
	close(sp[1]);
	fuzz_spin(5);
	/* Stop like SIGTERM would, then wait until everything is freed. */
	cs.stopping = true;
	cs_notify_close_all(&cs);
	cs_peer_kill_all(&cs);
	ev_run(fuzz_loop, 0);
	cs.stopping = false;
	if (cs.peers != NULL || cs.cmlinks != NULL || fuzz_count_tmp() != 0)
		abort();
	return 0;
}
