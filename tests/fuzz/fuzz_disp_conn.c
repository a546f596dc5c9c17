/*
 * fuzz_disp_conn.c: libFuzzer target for the dispatcher's handling of
 * one connection. An in-process dispatcher (no listening socket, no
 * secret) holds a fake CM, one registered node and a running 2-rank job
 * on it; each input is one more peer on a socketpair whose bytes are the
 * input, then it hangs up. The first byte picks a prefix: none (raw
 * bytes), a node Hello + NodeRegister (the input is then what a node
 * sends: task reports, outputs, program requests, claims on ranks), a
 * client Hello (job submissions, status, kill-node, program pieces), or a
 * second CM's Hello + ServiceRegister (job statuses, replay reports,
 * pressure, the ranks' wait states). The
 * dispatcher must neither crash nor leak, and the standing job must stay
 * consistent.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../dispatcher/disp_priv.h"
#include "frame.h"
#include "log.h"
#include "seal.h"

static struct ev_loop *fuzz_loop;

static void
fuzz_spin(int rounds)
{
	for (int i = 0; i < rounds; i++)
		ev_run(fuzz_loop, EVRUN_NOWAIT);
}

static void
fuzz_hello(int fd, Mpiv__Role role)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;

	h.version = FRAME_VERSION;
	h.role = role;
	h.rank = -1;
	(void)frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0, 100);
}

static void
fuzz_register(int fd, const char *name)
{
	Mpiv__NodeRegister nr = MPIV__NODE_REGISTER__INIT;

	nr.name = (char *)name;
	nr.slots = 2;
	(void)frame_write(fd, MPIV__MSG_TYPE__MSG_NODE_REGISTER, &nr.base, NULL,
	    0, 100);
}

/* A peer on a socketpair: our end of it. */
static int
fuzz_peer(struct disp *d)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		abort();
	(void)dpeer_new(d, sp[0]);
	return sp[1];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct disp d;
	Mpiv__ServiceRegister sr = MPIV__SERVICE_REGISTER__INIT;
	Mpiv__JobSubmit js = MPIV__JOB_SUBMIT__INIT;
	char *argv[] = { "prog" };
	int cm, node, client, fd;
	size_t off;

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
	memset(&d, 0, sizeof(d));
	d.loop = fuzz_loop;
	d.lfd = -1;
	d.hb_timeout = 30;
	d.next_job = 1;
	strcpy(d.bound, "fuzz:0");
	ev_init(&d.bp_w, dpeer_on_backpressure);
	d.bp_w.repeat = 0.05;
	d.bp_w.data = &d;

	/* The standing scene: a CM, a node, a running 2-rank job. */
	cm = fuzz_peer(&d);
	fuzz_hello(cm, MPIV__ROLE__ROLE_CM);
	sr.role = MPIV__ROLE__ROLE_CM;
	sr.addr = (char *)"127.0.0.1:1";
	(void)frame_write(cm, MPIV__MSG_TYPE__MSG_SERVICE_REGISTER, &sr.base,
	    NULL, 0, 100);
	node = fuzz_peer(&d);
	fuzz_hello(node, MPIV__ROLE__ROLE_NODE);
	fuzz_register(node, "n0");
	client = fuzz_peer(&d);
	fuzz_hello(client, MPIV__ROLE__ROLE_CLIENT);
	js.nranks = 2;
	js.argv = argv;
	js.n_argv = 1;
	js.cwd = (char *)"/";
	js.binary_hash = (char *)"00112233445566778899aabbccddeeff"
	    "00112233445566778899aabbccddeeff";
	js.binary_size = 10;
	(void)frame_write(client, MPIV__MSG_TYPE__MSG_JOB_SUBMIT, &js.base,
	    NULL, 0, 100);
	fuzz_spin(10);
	{
		Mpiv__JobStatus st = MPIV__JOB_STATUS__INIT;

		st.job_id = (char *)"1";
		st.state = (char *)"ready";
		(void)frame_write(cm, MPIV__MSG_TYPE__MSG_JOB_STATUS, &st.base,
		    NULL, 0, 100);
	}
	fuzz_spin(10);

	/* The fuzzed peer. */
	fd = fuzz_peer(&d);
	switch (data[0] % 4) {
	case 1:
		fuzz_hello(fd, MPIV__ROLE__ROLE_NODE);
		fuzz_register(fd, "fz");
		break;
	case 2:
		fuzz_hello(fd, MPIV__ROLE__ROLE_CLIENT);
		break;
	case 3:
		/* a second CM: what CMs send (job statuses, replay reports,
		   pressure, ranks' wait states) */
		fuzz_hello(fd, MPIV__ROLE__ROLE_CM);
		sr.addr = (char *)"127.0.0.1:2";
		(void)frame_write(fd, MPIV__MSG_TYPE__MSG_SERVICE_REGISTER,
		    &sr.base, NULL, 0, 100);
		break;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (off = 1; off < size;) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			break;	/* closed on us, or the buffer is full */
		off += (size_t)w;
		fuzz_spin(2);
	}
	shutdown(fd, SHUT_WR);
	fuzz_spin(20);
	close(fd);
	close(client);
	close(node);
	close(cm);
	fuzz_spin(20);
	/* Stop as on SIGTERM, then wait until everything is freed. */
	d.stopping = true;
	djob_free_all(&d);
	dpeer_close_all(&d);
	ev_run(fuzz_loop, 0);
	if (d.peers != NULL || d.jobs != NULL)
		abort();
	return 0;
}
