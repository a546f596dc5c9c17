/*
 * test_pidns: ranks in PID namespaces of their own (node-agent/pidns.c,
 * proc_spawn with pidns_forker): the program sees the pid asked for and the
 * namespace's init as its parent; its exit code and its death by signal
 * pass through the handle; what it left running dies with it, what it
 * left stopped (a checkpoint clone) keeps the namespace until it is
 * gone; a failed exec is reported as without a namespace. Skipped where
 * PID namespaces cannot be made (not root).
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
#include <time.h>
#include <unistd.h>

#include "../../node-agent/pidns.h"
#include "proc.h"

/* The pid the programs get in their namespaces (pidns_forker's arg). */
static pid_t ns_pid = 4242;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads what fd has within ms (NUL-terminated): bytes, 0 EOF, -1 none. */
static ssize_t
read_timeout(int fd, char *buf, size_t n, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t r;

	if (poll(&p, 1, ms) <= 0)
		return -1;
	r = read(fd, buf, n - 1);
	buf[r > 0 ? r : 0] = '\0';
	return r;
}

/* Waits for pid up to ms; its status, or -1 on timeout. */
static int
wait_timeout(pid_t pid, int ms)
{
	double end = now_s() + ms / 1000.;
	int st;

	while (now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(2000);
	}
	return -1;
}

/* Starts `sh -c script` as pid 4242 of a namespace of its own. */
static void
spawn_sh(const char *script, struct proc_child *ch)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct proc_spec spec = { 0 };

	spec.argv = argv;
	spec.pipe_out = true;
	spec.stderr_fd = -1;
	spec.forker = &pidns_forker;
	spec.forker_arg = &ns_pid;
	assert_int_equal(proc_spawn(&spec, ch), 0);
	assert_int_equal(ch->exec_errno, 0);
}

static void
test_rank_pid(void **state)
{
	static char seen[PIDNS_PID_MAX + 1];
	pid_t p;

	assert_int_equal(pidns_rank_pid("17", 3), pidns_rank_pid("17", 3));
	for (int r = 0; r < 1000; r++) {
		p = pidns_rank_pid("job-42", r);
		assert_true(p >= PIDNS_PID_MIN && p <= PIDNS_PID_MAX);
		assert_int_equal(seen[p], 0);	/* distinct in a job */
		seen[p] = 1;
	}
	assert_int_not_equal(pidns_rank_pid("1", 0), pidns_rank_pid("2", 0));
}

static void
test_pid_and_exit(void **state)
{
	struct proc_child ch;
	char why[256], buf[128];
	int st;

	if (!pidns_available(why, sizeof(why))) {
		printf("skipped: %s\n", why);
		skip();
	}
	spawn_sh("echo $$ $PPID; cut -d' ' -f1 /proc/$$/stat; exit 3", &ch);
	assert_true(ch.task_pid > 0 && ch.task_pid != ch.pid);
	assert_int_equal(pidns_inner_pid(ch.task_pid), 4242);
	assert_true(pidns_is_handle(ch.pid));
	assert_true(read_timeout(ch.out_fd, buf, sizeof(buf), 5000) > 0);
	if (strchr(buf, '\n') == strrchr(buf, '\n'))
		assert_true(read_timeout(ch.out_fd, buf + strlen(buf),
		    sizeof(buf) - strlen(buf), 5000) > 0);
	assert_string_equal(buf, "4242 1\n4242\n");
	st = wait_timeout(ch.pid, 5000);
	assert_true(st != -1 && WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 3);
	close(ch.out_fd);
}

static void
test_signal(void **state)
{
	struct proc_child ch;
	char buf[64];
	int st;

	if (!pidns_available(NULL, 0))
		skip();
	spawn_sh("echo go; exec sleep 30", &ch);
	assert_true(read_timeout(ch.out_fd, buf, sizeof(buf), 5000) > 0);
	/* the rank itself, from outside: it is no pid 1, SIGTERM kills it */
	assert_int_equal(kill(ch.task_pid, SIGTERM), 0);
	st = wait_timeout(ch.pid, 5000);
	assert_true(st != -1 && WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	close(ch.out_fd);
}

static void
test_leftovers(void **state)
{
	struct proc_child ch;
	char buf[64];
	double t0;
	int st;

	if (!pidns_available(NULL, 0))
		skip();
	/* a background sleep holds stdout: it dies with the namespace */
	spawn_sh("sleep 30 & echo go; exit 0", &ch);
	assert_true(read_timeout(ch.out_fd, buf, sizeof(buf), 5000) > 0);
	t0 = now_s();
	st = wait_timeout(ch.pid, 5000);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(read_timeout(ch.out_fd, buf, sizeof(buf), 2000), 0);
	assert_true(now_s() - t0 < 2);
	close(ch.out_fd);

	/* a stopped one (a clone waiting for its dump) keeps the namespace
	   until it is gone */
	spawn_sh("sh -c 'kill -STOP $$; echo woke' & sleep 0.3; echo go; "
	    "exit 4", &ch);
	assert_true(read_timeout(ch.out_fd, buf, sizeof(buf), 5000) > 0);
	assert_int_equal(wait_timeout(ch.pid, 700), -1);
	{
		pid_t c = pidns_find(ch.pid, -1);

		assert_true(c > 0);
		assert_int_equal(kill(c, SIGKILL), 0);
	}
	st = wait_timeout(ch.pid, 3000);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 4);
	close(ch.out_fd);
}

static void
test_exec_error(void **state)
{
	char *argv[] = { "/nonexistent/prog", NULL };
	struct proc_spec spec = { 0 };
	struct proc_child ch;
	int st;

	if (!pidns_available(NULL, 0))
		skip();
	spec.argv = argv;
	spec.stdout_fd = spec.stderr_fd = -1;
	spec.forker = &pidns_forker;
	spec.forker_arg = &ns_pid;
	assert_int_equal(proc_spawn(&spec, &ch), 0);
	assert_int_equal(ch.exec_errno, ENOENT);
	assert_string_equal(ch.exec_step, "execute");
	st = wait_timeout(ch.pid, 5000);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_pid),
		cmocka_unit_test(test_pid_and_exit),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_exec_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
