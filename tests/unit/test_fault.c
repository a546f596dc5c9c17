/*
 * test_fault.c: the MPIV_FAULT parser and trigger (libmpi-lite/fault.c),
 * included directly. Each trigger case runs in a forked child that reports
 * every hit it survived through a pipe; the parent checks whether and at
 * which hit the child died of SIGKILL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../libmpi-lite/fault.c"

/* Sets (or, for NULL, unsets) the three variables fault.c reads. */
static void
env3(const char *spec, const char *rank, const char *inc)
{
	if (spec != NULL)
		setenv("MPIV_FAULT", spec, 1);
	else
		unsetenv("MPIV_FAULT");
	if (rank != NULL)
		setenv("MPIV_RANK", rank, 1);
	else
		unsetenv("MPIV_RANK");
	if (inc != NULL)
		setenv("MPIV_INCARNATION", inc, 1);
	else
		unsetenv("MPIV_INCARNATION");
	unsetenv("MPIV_FAULT_LOG");
	fault_reset();
}

/*
 * Forks; the child hits the points named in seq (space-separated) in
 * order. Returns 0 if the child got through all of them and exited 0,
 * k >= 1 if it died of SIGKILL at the k-th entry of seq, -1 otherwise.
 */
static int
run_seq(const char *spec, const char *rank, const char *inc, const char *seq)
{
	int pfd[2];
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[512], *save, *tok;
		close(pfd[0]);
		env3(spec, rank, inc);
		snprintf(buf, sizeof buf, "%s", seq);
		for (tok = strtok_r(buf, " ", &save); tok != NULL;
		    tok = strtok_r(NULL, " ", &save)) {
			mpiv_fault_point(tok);
			if (write(pfd[1], "x", 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	close(pfd[1]);
	int survived = 0, st;
	char c;
	while (read(pfd[0], &c, 1) == 1)
		survived++;
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		return survived + 1;
	return -1;
}

/* "send" repeated n times, space-separated, in a static buffer. */
static const char *
times(const char *name, int n)
{
	static char buf[4096];
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(buf, name);
		strcat(buf, " ");
	}
	return buf;
}

static void
test_unset_never_fires(void **st)
{
	(void)st;
	assert_int_equal(run_seq(NULL, "0", "1", times("send", 50)), 0);
	assert_int_equal(run_seq("", "0", "1", times("finalize", 5)), 0);
	/* unset: one parse, then the state says off */
	env3(NULL, "0", "1");
	mpiv_fault_point("send");
	assert_int_equal(fault_mode, FAULT_OFF);
	mpiv_fault_point("send");
	assert_int_equal(fault_mode, FAULT_OFF);
}

static void
test_nth_hit(void **st)
{
	(void)st;
	assert_int_equal(run_seq("send:1", "0", "1", "send send"), 1);
	assert_int_equal(run_seq("send:3", "0", "1", times("send", 10)), 3);
	/* other names do not count towards "send" */
	assert_int_equal(run_seq("send:2", "0", "1",
	    "post send deliver coll send-partial nd send post"), 7);
	/* exact names: send-partial is not send, and the reverse */
	assert_int_equal(run_seq("send-partial:1", "0", "1", "send send send"), 0);
	assert_int_equal(run_seq("send:1", "0", "1", "send-partial send-partial"), 0);
	/* fewer hits than N: survives */
	assert_int_equal(run_seq("coll:4", "0", "1", "coll coll coll"), 0);
	/* MPIV_RANK absent: an any-rank entry still fires */
	assert_int_equal(run_seq("deliver:2", NULL, NULL, "deliver deliver"), 2);
}

static void
test_rank_filter(void **st)
{
	(void)st;
	assert_int_equal(run_seq("send:1:2", "1", "1", "send send"), 0);
	assert_int_equal(run_seq("send:1:2", "2", "1", "send send"), 1);
	assert_int_equal(run_seq("send:2:*", "5", "1", "send send"), 2);
	assert_int_equal(run_seq("send:2::", "5", "1", "send send"), 2);
	/* a rank-specific entry never fires when the rank is unknown */
	assert_int_equal(run_seq("send:1:0", NULL, "1", "send send"), 0);
}

static void
test_incarnation_filter(void **st)
{
	(void)st;
	/* INC defaults to 1: a restarted rank passes the same point */
	assert_int_equal(run_seq("post:1", "0", "2", "post post"), 0);
	assert_int_equal(run_seq("post:1:0", "0", "2", "post post"), 0);
	assert_int_equal(run_seq("post:1:0", "0", "1", "post post"), 1);
	assert_int_equal(run_seq("post:2:0:2", "0", "2", "post post"), 2);
	assert_int_equal(run_seq("post:2:0:2", "0", "1", "post post"), 0);
	assert_int_equal(run_seq("post:1:*:*", "3", "7", "post"), 1);
	assert_int_equal(run_seq("post:1:0:3", "0", "2", "post post"), 0);
	/* MPIV_INCARNATION absent means the first incarnation */
	assert_int_equal(run_seq("post:1", "0", NULL, "post"), 1);
}

static void
test_several_entries(void **st)
{
	(void)st;
	/* the first entry to reach its count wins */
	assert_int_equal(run_seq("post:5,send:2", "0", "1",
	    "post send post send post"), 4);
	assert_int_equal(run_seq("send:3:1,send:2:0", "0", "1",
	    "send send send"), 2);
	assert_int_equal(run_seq("send:3:1,send:2:0", "1", "1",
	    "send send send"), 3);
	/* same name twice, both apply: the smaller N fires */
	assert_int_equal(run_seq("nd:4,nd:2", "0", "1", times("nd", 6)), 2);
	/* entries for other ranks/incarnations are dropped at parse time */
	env3("send:1:1,send:1:2,coll:3,nd:1:*:2", "2", "1");
	fault_parse();
	assert_int_equal(fault_count, 2);
	assert_int_equal(fault_mode, FAULT_ON);
}

static void
test_malformed(void **st)
{
	(void)st;
	static const char *bad[] = {
		"send", "send:", "send:0", "send:-1", "send:x", "send:1x",
		"bogus:1", "SEND:1", ":1", "send:1:-3", "send:1:r", "send:1:0:0",
		"send:1:0:x", "send:1:2:3:4", "send:99999999999999999999999",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		env3(bad[i], "0", "1");
		fault_parse();
		if (fault_count != 0)
			fail_msg("'%s' was accepted", bad[i]);
		assert_int_equal(fault_mode, FAULT_OFF);
		/* and it never fires */
		assert_int_equal(run_seq(bad[i], "0", "1", times("send", 3)), 0);
	}
	/* good entries around bad ones and empty ones still count */
	env3("bogus:1,,send:2,send:0,", "0", "1");
	fault_parse();
	assert_int_equal(fault_count, 1);
	assert_string_equal(fault_tab[0].name, "send");
	assert_int_equal(fault_tab[0].n, 2);
	assert_int_equal(run_seq("bogus:1,,send:2,send:0,", "0", "1",
	    "send send send"), 2);
	/* every documented point name is accepted */
	env3("send:1,send-partial:1,post:1,deliver:1,nd:1,coll:1,finalize:1",
	    "0", "1");
	fault_parse();
	assert_int_equal(fault_count, 7);
	/* more entries than the table holds: the extra ones are dropped */
	char many[1024] = "";
	for (int i = 0; i < FAULT_MAX + 4; i++)
		strcat(many, "coll:9,");
	env3(many, "0", "1");
	fault_parse();
	assert_int_equal(fault_count, FAULT_MAX);
}

static void
test_log_file(void **st)
{
	(void)st;
	char path[] = "/tmp/test_fault_log.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	setenv("MPIV_FAULT_LOG", path, 1);
	/* run_seq's env3 unsets MPIV_FAULT_LOG in the child: fork by hand */
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("MPIV_FAULT", "finalize:2:3:4", 1);
		setenv("MPIV_RANK", "3", 1);
		setenv("MPIV_INCARNATION", "4", 1);
		fault_reset();
		mpiv_fault_point("finalize");
		mpiv_fault_point("finalize");
		_exit(0);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	unsetenv("MPIV_FAULT_LOG");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[256] = "", want[256];
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	unlink(path);
	snprintf(want, sizeof want, "fault finalize:2 rank 3 inc 4 pid %ld\n",
	    (long)pid);
	assert_string_equal(line, want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_never_fires),
		cmocka_unit_test(test_nth_hit),
		cmocka_unit_test(test_rank_filter),
		cmocka_unit_test(test_incarnation_filter),
		cmocka_unit_test(test_several_entries),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_log_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
