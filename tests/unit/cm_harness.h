/*
 * cm_harness.h: shared by the Channel Memory protocol tests. Starts a
 * real CM (cm_main in a forked child on 127.0.0.1:0, optionally with
 * --dispatcher) and speaks raw frames to it; every wait is bounded.
 * Static functions: include it once per test program.
 */
#ifndef MPIV_TEST_CM_HARNESS_H
#define MPIV_TEST_CM_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../channel-memory/cm.h"
#include "listen_line.h"
#include "frame.h"
#include "log.h"
#include "net.h"

#define TMO 3000	/* ms, every wait */

static pid_t cm_pid;
static char cm_addr[128];
static int ctl_fd = -1;

/* ---------------- helpers ---------------- */

static const char *cm_max_memory = "8G";
static const char *cm_dispatcher;	/* --dispatcher ADDR, or NULL */
static const char *cm_store;		/* --store DIR, or NULL */

static int
start_cm(void **state)
{
	int p[2], rc;

	if (pipe(p) < 0)
		return -1;
	if ((cm_pid = fork()) < 0)
		return -1;
	if (cm_pid == 0) {
		char *argv[12] = { "cm", "--listen", "127.0.0.1:0",
		    "--log-level", getenv("CM_TEST_DEBUG") ? "debug" : "error",
		    "--max-memory", (char *)cm_max_memory };
		int argc = 7;

		if (cm_dispatcher != NULL) {
			argv[argc++] = "--dispatcher";
			argv[argc++] = (char *)cm_dispatcher;
		}
		if (cm_store != NULL) {
			argv[argc++] = "--store";
			argv[argc++] = (char *)cm_store;
		}
		argv[argc] = NULL;
		close(p[0]);
		dup2(p[1], 1);
		close(p[1]);
		alarm(120);	/* never outlive a wedged test run */
		/* the raw frames of the tests are plaintext: the CM offers
		   no cipher (encryption is test_auth's and test_seal's) */
		setenv("MPIV_INSECURE_PLAINTEXT", "1", 1);
		exit(cm_main(argc, argv));
	}
	close(p[1]);
	rc = listen_line_read(p[0], cm_addr, sizeof(cm_addr));
	close(p[0]);
	return rc;
}

static int
stop_cm(void **state)
{
	int st = 0;
	pid_t r = 0;

	if (ctl_fd >= 0)
		close(ctl_fd);
	ctl_fd = -1;
	kill(cm_pid, SIGTERM);
	for (int i = 0; i < 500 && r == 0; i++) {
		r = waitpid(cm_pid, &st, WNOHANG);
		if (r == 0)
			usleep(10000);
	}
	if (r == 0) {
		kill(cm_pid, SIGKILL);
		waitpid(cm_pid, &st, 0);
		fprintf(stderr, "cm did not exit on SIGTERM\n");
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "cm exit status %d (leak or crash?)\n", st);
		return -1;
	}
	return 0;
}

/* Dials the CM and reads its Challenge (auth=false: no --secret-file). */
static int
dial(void)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err;
	int fd = net_dial(cm_addr, TMO);

	assert_true(fd >= 0);
	assert_int_equal(frame_read(fd, &h, &m, &p, TMO, &err), 0);
	assert_int_equal(h.type, MPIV__MSG_TYPE__MSG_CHALLENGE);
	assert_false(((Mpiv__Challenge *)m)->auth);
	frame_free_meta(m);
	free(p);
	return fd;
}

/* The last checkpoint a home CM said durable to a rank connection
   (CkptDurable, which expect() passes over unless asked for it). */
static uint64_t durable_seen;

/* Reads one frame of the expected type; returns its meta (caller frees). */
static ProtobufCMessage *
expect(int fd, uint16_t type, uint8_t **payload, uint32_t *plen)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err;

again:
	if (frame_read(fd, &h, &m, &p, TMO, &err) < 0)
		fail_msg("frame_read: %s (%s)", strerror(errno), err ? err : "");
	if (h.type == MPIV__MSG_TYPE__MSG_CKPT_DURABLE &&
	    type != MPIV__MSG_TYPE__MSG_CKPT_DURABLE) {
		durable_seen = ((Mpiv__CkptDurable *)m)->ckpt_no;
		frame_free_meta(m);
		free(p);
		goto again;
	}
	if (h.type != type) {
		if (h.type == MPIV__MSG_TYPE__MSG_ERROR)
			fail_msg("got error: %s", ((Mpiv__Error *)m)->text);
		fail_msg("expected %s, got %s", frame_type_name(type),
		    frame_type_name(h.type));
	}
	if (plen != NULL)
		*plen = h.payload_len;
	if (payload != NULL)
		*payload = p;
	else
		free(p);
	return m;
}

/* The peer must close: the next read ends in EOF (after any frames). */
static void
expect_closed(int fd)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err;

	for (int i = 0; i < 10; i++) {
		if (frame_read(fd, &h, &m, &p, TMO, &err) < 0) {
			assert_int_equal(errno, ECONNRESET);
			return;
		}
		frame_free_meta(m);
		free(p);
	}
	fail_msg("connection stayed open");
}

/* Nothing arrives within ms. */
static void
expect_silence(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&pf, 1, ms), 0);
}

static void
send_hello(int fd, Mpiv__Role role, const char *job, int rank, uint32_t inc,
    uint32_t version)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;

	h.version = version;
	h.role = role;
	h.job_id = (char *)job;
	h.rank = rank;
	h.incarnation = inc;
	h.name = "test";
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
}

/* Hello and its reply; returns the reply (caller frees). */
static Mpiv__HelloReply *
hello(int fd, Mpiv__Role role, const char *job, int rank, uint32_t inc,
    uint32_t version)
{
	send_hello(fd, role, job, rank, inc, version);
	return (Mpiv__HelloReply *)expect(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY,
	    NULL, NULL);
}


/*
 * Sends js on the control connection (dialled, with its Hello, on first
 * use) and returns the CM's JobStatus (caller frees).
 */
__attribute__((unused)) static Mpiv__JobStatus *
job_setup(const Mpiv__JobSetup *js)
{
	if (ctl_fd < 0) {
		Mpiv__HelloReply *hr;
		ctl_fd = dial();
		hr = hello(ctl_fd, MPIV__ROLE__ROLE_CONTROL, "", -1, 0,
		    FRAME_VERSION);
		assert_true(hr->ok);
		frame_free_meta(&hr->base);
	}
	assert_int_equal(frame_write(ctl_fd, MPIV__MSG_TYPE__MSG_JOB_SETUP,
	    &js->base, NULL, 0, TMO), 0);
	return (Mpiv__JobStatus *)expect(ctl_fd,
	    MPIV__MSG_TYPE__MSG_JOB_STATUS, NULL, NULL);
}

/* A home connection gets NdLog frames right after HelloReply. */
static void
skip_nd_log(int fd)
{
	Mpiv__NdLog *lg;
	bool last;

	do {
		lg = (Mpiv__NdLog *)expect(fd, MPIV__MSG_TYPE__MSG_ND_LOG, NULL,
		    NULL);
		last = lg->last;
		frame_free_meta(&lg->base);
	} while (!last);
}

static void
refused(const char *job, int rank, uint32_t inc, uint32_t version,
    Mpiv__Role role, const char *needle)
{
	int fd = dial();
	Mpiv__HelloReply *hr = hello(fd, role, job, rank, inc, version);

	assert_false(hr->ok);
	if (strstr(hr->error, needle) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", hr->error, needle);
	/* a peer acts on the code, never on the words */
	assert_int_equal(hr->code, strstr(needle, "stale incarnation") ?
	    MPIV__ERROR_CODE__ERR_FENCED : MPIV__ERROR_CODE__ERR_UNSPECIFIED);
	frame_free_meta(&hr->base);
	expect_closed(fd);
	close(fd);
}

#endif
