/*
 * test_disp_nodes.c: the dispatcher's node pool, spoken to in raw
 * frames. A real dispatcher (dispatcher_main in a forked child on
 * 127.0.0.1:0, heartbeat timeout 1 s, no secret) faces fake node agents,
 * a fake CM and a client played by this test: node identities and
 * NodeWelcome, heartbeat echo, a node claiming a rank it was not given
 * (dropped, the job goes on), a node declared dead that comes back (told
 * so), ranks of a lost node relaunched on another with incarnation+1,
 * status, kill-node. Every wait is bounded.
 */
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
#include <unistd.h>

#include "../../dispatcher/dispatcher.h"
#include "frame.h"
#include "listen_line.h"
#include "net.h"

#define TMO 3000	/* ms, every wait */

static pid_t disp_pid;
static char disp_addr[128];

static int
start_disp(void **state)
{
	int p[2], rc;

	if (pipe(p) < 0 || (disp_pid = fork()) < 0)
		return -1;
	if (disp_pid == 0) {
		/* plaintext: the fake nodes below write raw frames (the
		   sealed handshake is tests/unit/test_auth.c's) */
		char *argv[] = { "dispatcher", "--listen", "127.0.0.1:0",
		    "--heartbeat-timeout", "1", "--insecure-plaintext",
		    "--log-level",
		    getenv("DISP_TEST_DEBUG") ? "debug" : "error", NULL };
		close(p[0]);
		dup2(p[1], 1);
		close(p[1]);
		alarm(120);	/* never outlive a wedged test run */
		exit(dispatcher_main(8, argv));
	}
	close(p[1]);
	rc = listen_line_read(p[0], disp_addr, sizeof(disp_addr));
	close(p[0]);
	return rc;
}

static int
stop_disp(void **state)
{
	int st = 0;

	kill(disp_pid, SIGTERM);
	for (int i = 0; i < 500; i++) {
		if (waitpid(disp_pid, &st, WNOHANG) == disp_pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
		usleep(10000);
	}
	kill(disp_pid, SIGKILL);
	waitpid(disp_pid, &st, 0);
	return -1;
}

/* Reads the next frame whose type is want, skipping others; its meta
   (payload dropped), or fails the test. */
static ProtobufCMessage *
expect(int fd, uint16_t want)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err = NULL;

	for (;;) {
		if (frame_read(fd, &h, &m, &p, TMO, &err) < 0)
			fail_msg("waiting for %s: %s", frame_type_name(want),
			    err != NULL ? err : strerror(errno));
		free(p);
		if (h.type == want)
			return m;
		frame_free_meta(m);
	}
}

/* True when the dispatcher closes fd within the timeout. */
static bool
closed_by_peer(int fd)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *p;
	const char *err = NULL;

	for (;;) {
		if (frame_read(fd, &h, &m, &p, TMO, &err) < 0)
			return errno != ETIMEDOUT && errno != EAGAIN;
		free(p);
		frame_free_meta(m);
	}
}

static int
hello(Mpiv__Role role, const char *name)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__HelloReply *hr;
	int fd = net_dial(disp_addr, TMO);

	assert_true(fd >= 0);
	frame_free_meta(expect(fd, MPIV__MSG_TYPE__MSG_CHALLENGE));
	h.version = FRAME_VERSION;
	h.role = role;
	h.rank = -1;
	h.name = (char *)name;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HELLO, &h.base,
	    NULL, 0, TMO), 0);
	hr = (Mpiv__HelloReply *)expect(fd, MPIV__MSG_TYPE__MSG_HELLO_REPLY);
	assert_true(hr->ok);
	frame_free_meta(&hr->base);
	return fd;
}

/* A node agent registering (previous_id may be ""); its welcome. */
static int
node_join(const char *name, const char *previous, int slots,
    Mpiv__NodeWelcome **welcome)
{
	Mpiv__NodeRegister nr = MPIV__NODE_REGISTER__INIT;
	int fd = hello(MPIV__ROLE__ROLE_NODE, name);

	nr.name = (char *)name;
	nr.slots = slots;
	nr.previous_id = (char *)previous;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_NODE_REGISTER,
	    &nr.base, NULL, 0, TMO), 0);
	*welcome = (Mpiv__NodeWelcome *)expect(fd,
	    MPIV__MSG_TYPE__MSG_NODE_WELCOME);
	return fd;
}

static void
heartbeat(int fd, uint64_t seq)
{
	Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;

	hb.seq = seq;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_HEARTBEAT,
	    &hb.base, NULL, 0, TMO), 0);
}

/* The status reply (caller frees). */
static Mpiv__StatusReply *
status(const char *job)
{
	Mpiv__StatusRequest sr = MPIV__STATUS_REQUEST__INIT;
	int fd = hello(MPIV__ROLE__ROLE_CLIENT, "test status");
	Mpiv__StatusReply *r;

	sr.job_id = (char *)job;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_STATUS_REQUEST,
	    &sr.base, NULL, 0, TMO), 0);
	r = (Mpiv__StatusReply *)expect(fd, MPIV__MSG_TYPE__MSG_STATUS_REPLY);
	close(fd);
	return r;
}

/* A CM registering at addr (never dialled: the test plays it). */
static int
cm_join(const char *name, const char *addr)
{
	Mpiv__ServiceRegister sreg = MPIV__SERVICE_REGISTER__INIT;
	int fd = hello(MPIV__ROLE__ROLE_CM, name);

	sreg.role = MPIV__ROLE__ROLE_CM;
	sreg.addr = (char *)addr;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_SERVICE_REGISTER,
	    &sreg.base, NULL, 0, TMO), 0);
	return fd;
}

/* A client submitting a 2-rank job; the job id from cm's JobSetup. */
static int
job_submit(const char *name, int cm, char *job, size_t len)
{
	Mpiv__JobSubmit js = MPIV__JOB_SUBMIT__INIT;
	Mpiv__JobSetup *setup;
	char *argv[] = { "prog" };
	int fd = hello(MPIV__ROLE__ROLE_CLIENT, name);

	js.nranks = 2;
	js.argv = argv;
	js.n_argv = 1;
	js.cwd = (char *)"/";
	js.ncms = 1;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_JOB_SUBMIT,
	    &js.base, NULL, 0, TMO), 0);
	setup = (Mpiv__JobSetup *)expect(cm, MPIV__MSG_TYPE__MSG_JOB_SETUP);
	snprintf(job, len, "%s", setup->job_id);
	frame_free_meta(&setup->base);
	return fd;
}

/* The CM says the job is set up: the dispatcher launches it. */
static void
cm_ready(int cm, const char *job)
{
	Mpiv__JobStatus ready = MPIV__JOB_STATUS__INIT;

	ready.job_id = (char *)job;
	ready.state = (char *)"ready";
	ready.message = (char *)"";
	assert_int_equal(frame_write(cm, MPIV__MSG_TYPE__MSG_JOB_STATUS,
	    &ready.base, NULL, 0, TMO), 0);
}

/* Reads Launch frames until one for rank r; its incarnation. */
static uint32_t
expect_launch(int fd, int r)
{
	for (;;) {
		Mpiv__Launch *l = (Mpiv__Launch *)expect(fd,
		    MPIV__MSG_TYPE__MSG_LAUNCH);
		uint32_t inc = l->incarnation;
		int rank = l->rank;

		frame_free_meta(&l->base);
		if (rank == r)
			return inc;
	}
}

static void
task_started(int fd, int rank, uint32_t inc)
{
	Mpiv__TaskStarted ts = MPIV__TASK_STARTED__INIT;

	ts.job_id = (char *)"1";
	ts.rank = rank;
	ts.incarnation = inc;
	ts.pid = 1000 + rank;
	assert_int_equal(frame_write(fd, MPIV__MSG_TYPE__MSG_TASK_STARTED,
	    &ts.base, NULL, 0, TMO), 0);
}

static void
test_node_pool(void **state)
{
	Mpiv__JobStatus *st;
	Mpiv__NodeKill nk = MPIV__NODE_KILL__INIT;
	Mpiv__NodeWelcome *w;
	Mpiv__Heartbeat *echo;
	Mpiv__StatusReply *sr;
	char a_id[80], c_id[80], job[32];
	int a, b, c, c2, cm, client, ctl;
	uint32_t inc;

	/* Identity, welcome, heartbeat echo. */
	a = node_join("alpha", "", 2, &w);
	assert_string_not_equal(w->node_id, "");
	assert_false(w->was_dead);
	assert_true(w->heartbeat_timeout > 0.5 && w->heartbeat_timeout < 1.5);
	snprintf(a_id, sizeof(a_id), "%s", w->node_id);
	frame_free_meta(&w->base);
	heartbeat(a, 42);
	echo = (Mpiv__Heartbeat *)expect(a, MPIV__MSG_TYPE__MSG_HEARTBEAT);
	assert_int_equal(echo->seq, 42);
	frame_free_meta(&echo->base);

	/* A CM and a 2-rank job (the first: job 1): both ranks land on
	   alpha. */
	cm = cm_join("cm", "127.0.0.1:1");
	client = job_submit("test run", cm, job, sizeof(job));
	assert_string_equal(job, "1");
	cm_ready(cm, job);
	assert_int_equal(expect_launch(a, 0), 1);
	assert_int_equal(expect_launch(a, 1), 1);
	task_started(a, 0, 1);
	task_started(a, 1, 1);

	/* Node beta claims rank 0, which runs on alpha: beta is dropped,
	   alpha's ranks are untouched. */
	b = node_join("beta", "", 2, &w);
	frame_free_meta(&w->base);
	task_started(b, 0, 1);
	assert_true(closed_by_peer(b));
	close(b);
	sr = status("1");
	assert_string_equal(sr->error, "");
	assert_int_equal(sr->n_jobs, 1);
	assert_string_equal(sr->jobs[0]->state, "running");
	assert_string_equal(sr->jobs[0]->ranks[0]->node, a_id);
	assert_int_equal(sr->jobs[0]->ranks[0]->incarnation, 1);
	assert_int_equal(sr->n_nodes, 1);
	frame_free_meta(&sr->base);

	/* Alpha falls silent: declared dead after the timeout; the ranks
	   are relaunched (incarnation 2) on gamma, which joins later. */
	c = node_join("gamma", "", 2, &w);
	snprintf(c_id, sizeof(c_id), "%s", w->node_id);
	frame_free_meta(&w->base);
	for (int i = 0; i < 6; i++) {	/* gamma stays alive meanwhile */
		heartbeat(c, (uint64_t)i);
		usleep(300000);
	}
	assert_int_equal(expect_launch(c, 0), 2);
	assert_int_equal(expect_launch(c, 1), 2);
	task_started(c, 0, 2);
	task_started(c, 1, 2);
	assert_true(closed_by_peer(a));
	close(a);

	/* Alpha comes back: told it had been declared dead, fresh id. */
	a = node_join("alpha", a_id, 2, &w);
	assert_true(w->was_dead);
	assert_non_null(strstr(w->dead_reason, "no heartbeat"));
	assert_string_not_equal(w->node_id, a_id);
	frame_free_meta(&w->base);

	/* A stale report from alpha's old incarnation is ignored, not a
	   claim: the job stays on gamma. */
	task_started(a, 0, 1);
	heartbeat(a, 1);
	echo = (Mpiv__Heartbeat *)expect(a, MPIV__MSG_TYPE__MSG_HEARTBEAT);
	frame_free_meta(&echo->base);
	heartbeat(c, 99);
	frame_free_meta(expect(c, MPIV__MSG_TYPE__MSG_HEARTBEAT));

	/* kill-node gamma: it gets NodeKill and is dropped; the client is
	   told; its ranks go to alpha as incarnation 3. */
	ctl = hello(MPIV__ROLE__ROLE_CLIENT, "test kill-node");
	nk.name = (char *)"gamma";
	nk.reason = (char *)"";
	assert_int_equal(frame_write(ctl, MPIV__MSG_TYPE__MSG_NODE_KILL,
	    &nk.base, NULL, 0, TMO), 0);
	st = (Mpiv__JobStatus *)expect(ctl, MPIV__MSG_TYPE__MSG_JOB_STATUS);
	assert_string_equal(st->state, "ok");
	frame_free_meta(&st->base);
	frame_free_meta(expect(c, MPIV__MSG_TYPE__MSG_NODE_KILL));
	assert_true(closed_by_peer(c));
	close(c);
	inc = expect_launch(a, 0);
	assert_int_equal(inc, 3);
	nk.name = (char *)"nosuch";
	assert_int_equal(frame_write(ctl, MPIV__MSG_TYPE__MSG_NODE_KILL,
	    &nk.base, NULL, 0, TMO), 0);
	st = (Mpiv__JobStatus *)expect(ctl, MPIV__MSG_TYPE__MSG_JOB_STATUS);
	assert_string_equal(st->state, "error");
	frame_free_meta(&st->base);
	close(ctl);

	/* Gamma's registration, reused after the kill, is told so too. */
	c2 = node_join("gamma", c_id, 1, &w);
	assert_true(w->was_dead);
	assert_non_null(strstr(w->dead_reason, "killed"));
	frame_free_meta(&w->base);

	/* An unknown job in status is an error, not a crash. */
	sr = status("77");
	assert_string_not_equal(sr->error, "");
	frame_free_meta(&sr->base);
	sr = status("");
	assert_int_equal(sr->n_nodes, 2);
	assert_int_equal(sr->n_services, 1);
	frame_free_meta(&sr->base);
	close(c2);
	close(a);
	close(client);
	close(cm);
}

/*
 * A node lost while its job's CMs are still setting up (ranks placed, not
 * launched): the job does not fail; once the CM is ready its ranks are
 * placed again, on a node that joined meanwhile, as incarnation 1.
 */
static void
test_setup_node_lost(void **state)
{
	Mpiv__NodeWelcome *w;
	Mpiv__StatusReply *sr;
	char job[32];
	int cm, client, d, e;

	d = node_join("delta", "", 2, &w);
	frame_free_meta(&w->base);
	cm = cm_join("cm2", "127.0.0.1:2");
	client = job_submit("test run 2", cm, job, sizeof(job));
	close(d);		/* delta vanishes before the launch */
	e = node_join("epsilon", "", 2, &w);
	frame_free_meta(&w->base);
	cm_ready(cm, job);
	assert_int_equal(expect_launch(e, 0), 1);
	assert_int_equal(expect_launch(e, 1), 1);
	sr = status(job);
	assert_string_equal(sr->error, "");
	assert_string_equal(sr->jobs[0]->state, "running");
	frame_free_meta(&sr->base);
	close(e);
	close(client);
	close(cm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_pool),
		cmocka_unit_test(test_setup_node_lost),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, start_disp, stop_disp);
}
