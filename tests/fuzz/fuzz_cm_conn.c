/*
 * fuzz_cm_conn.c: libFuzzer target for the Channel Memory's handling of
 * one connection. An in-process CM (no listening socket) serves job "f"
 * of 4 ranks; rank 1 is connected on a socketpair as a receiver; the
 * fuzz input is written on another socketpair as one peer's bytes, then
 * that peer hangs up. The first input byte picks a prefix: none (raw
 * bytes), a valid rank-0 Hello, a control Hello, or a first incarnation
 * of rank 0 that leaves a log (self-sends, receives, probes, an nd
 * record with a run of Test misses and direct-protocol outcomes) and
 * dies, then a rank-0 Hello of incarnation 2, so that the input is
 * answered by the replay. With the rank-0 Hello the CM also serves the
 * job's files (MPI-IO) beneath a directory of its own, so FileOp frames
 * act on real files there. Everything must close cleanly, leak-free.
 */
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../channel-memory/cm_priv.h"
#include "frame.h"
#include "log.h"
#include "seal.h"

static struct ev_loop *fuzz_loop;

static void
fuzz_write_hello(int fd, Mpiv__Role role, int rank, uint32_t inc)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;

	h.version = FRAME_VERSION;
	h.role = role;
	h.job_id = "f";
	h.rank = rank;
	h.incarnation = inc;
	(void)frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0,
	    100);
}

static void
fuzz_spin(int rounds)
{
	for (int i = 0; i < rounds; i++)
		ev_run(fuzz_loop, EVRUN_NOWAIT);
}

/* Incarnation 1 of rank 0: a few logged decisions, then it dies. */
static void
fuzz_first_life(struct cm *cm)
{
	Mpiv__Send snd = MPIV__SEND__INIT;
	Mpiv__RecvPost rp = MPIV__RECV_POST__INIT;
	Mpiv__Probe pr = MPIV__PROBE__INIT;
	Mpiv__NdOutcome o[3], *op[3] = { &o[0], &o[1], &o[2] };
	Mpiv__NdRecord nr = MPIV__ND_RECORD__INIT;
	int c[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, c) < 0)
		abort();
	(void)session_new(cm, c[0], false);
	fuzz_write_hello(c[1], MPIV__ROLE__ROLE_RANK, 0, 1);
	snd.dst = 0;
	snd.tag = 1;
	for (uint64_t i = 1; i <= 2; i++) {
		snd.seq = i;
		(void)frame_write(c[1], MPIV__MSG_TYPE__MSG_SEND, &snd.base,
		    "xy", 2, 100);
	}
	rp.source = -1;
	rp.tag = -1;
	rp.post_no = 1;
	(void)frame_write(c[1], MPIV__MSG_TYPE__MSG_RECV_POST, &rp.base, NULL,
	    0, 100);
	pr.source = -1;
	pr.tag = 7;
	for (uint64_t i = 2; i <= 4; i++) {
		pr.post_no = i;
		(void)frame_write(c[1], MPIV__MSG_TYPE__MSG_PROBE, &pr.base,
		    NULL, 0, 100);
	}
	rp.post_no = 5;
	(void)frame_write(c[1], MPIV__MSG_TYPE__MSG_RECV_POST, &rp.base, NULL,
	    0, 100);
	for (int i = 0; i < 3; i++)
		mpiv__nd_outcome__init(&o[i]);
	o[0].nd_no = 1;		/* Test misses */
	o[0].kind = 1;
	o[0].repeat = 3;
	o[1].nd_no = 4;		/* wildcard receive 1 bound to (0, 1) */
	o[1].kind = 8;
	o[1].flag = true;
	o[1].post_no = 1;
	o[1].seq = 1;
	o[2].nd_no = 5;		/* iprobe miss */
	o[2].kind = 10;
	nr.n_outcomes = 3;
	nr.outcomes = op;
	(void)frame_write(c[1], MPIV__MSG_TYPE__MSG_ND_RECORD, &nr.base, NULL,
	    0, 100);
	fuzz_spin(10);
	close(c[1]);
	fuzz_spin(5);
}

static char fuzz_root[64];

static int
fuzz_rm_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)remove(path);
	return 0;
}

/* At exit: the files the inputs made go. */
static void
fuzz_rm_root(void)
{
	(void)nftw(fuzz_root, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Job "f" gets files (MPI-IO) beneath a fresh directory: FileOp frames
   then act on real files there, confined to it. */
static void
fuzz_files(struct cm *cm)
{
	static char journal[80];
	char *root = fuzz_root;
	const char *err;

	if (root[0] == '\0') {
		snprintf(root, sizeof(fuzz_root), "/tmp/mpiv-fuzz-files.%d",
		    (int)getpid());
		snprintf(journal, sizeof(journal), "%s/.journal", root);
		(void)mkdir(root, 0700);
		atexit(fuzz_rm_root);
	}
	cm->files_root = root;
	cm->files_journal = journal;
	if (fileserv_setup(job_find(cm, "f"), root, &err) < 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cm cm = { .lfd = -1, .max_memory = 1 << 16 };
	const char *err;
	int a[2], b[2];
	size_t off = 0;

	if (fuzz_loop == NULL) {
		signal(SIGPIPE, SIG_IGN);
		log_init("fuzz", LOG_LEVEL_ERROR);
		/* the bytes are frames: the server offers no cipher (the
		   record layer has fuzz_seal) */
		seal_set_plaintext(true);
		fuzz_loop = ev_loop_new(EVFLAG_AUTO);
	}
	if (size < 1 || size > 60000)
		return 0;
	cm.loop = fuzz_loop;
	strcpy(cm.bound, "fuzz:0");
	if (job_setup(&cm, "f", 4, 1, 0, false, &err) < 0)
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, b) < 0)
		abort();
	if (data[0] % 5 == 4) {
		/* A CM with a secret: the bytes meet the handshake, unproven. */
		auth_key_set(&cm.keys.secret, "fuzz secret fuzz", 16);
		cm.keys.enabled = cm.keys.cluster = true;
		cm.as.enabled = true;
		cm.as.key = session_auth_key;
		cm.as.arg = &cm;
	}
	/* rank 1, a well-behaved receiver */
	(void)session_new(&cm, b[0], false);
	fuzz_write_hello(b[1], MPIV__ROLE__ROLE_RANK, 1, 1);
	(void)session_new(&cm, a[0], false);
	switch (data[0] % 5) {
	case 1:
		/* this CM also serves the job's files, beneath a directory
		   of the fuzzer's own (fileserv.c) */
		fuzz_files(&cm);
		fuzz_write_hello(a[1], MPIV__ROLE__ROLE_RANK, 0, 1);
		break;
	case 2:
		fuzz_write_hello(a[1], MPIV__ROLE__ROLE_CONTROL, -1, 0);
		break;
	case 3:
		fuzz_first_life(&cm);
		fuzz_write_hello(a[1], MPIV__ROLE__ROLE_RANK, 0, 2);
		break;
	}
	off = 1;
	fcntl(a[1], F_SETFL, O_NONBLOCK);
	while (off < size) {
		ssize_t w = write(a[1], data + off, size - off);
		if (w <= 0)
			break;	/* the CM closed on us, or the buffer is full */
		off += (size_t)w;
		fuzz_spin(2);
	}
	shutdown(a[1], SHUT_WR);
	fuzz_spin(20);
	close(a[1]);
	close(b[1]);
	fuzz_spin(5);
	session_kill_all(&cm);
	ev_run(fuzz_loop, 0);	/* returns once every connection is freed */
	if (cm.sessions != NULL)
		abort();
	job_free_all(&cm);
	return 0;
}
