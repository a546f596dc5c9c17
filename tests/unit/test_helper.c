/*
 * test_helper.c: the node agent's privileged helper (node-agent/helper.c)
 * driven through its real socket, as the agent would: a rank started and
 * reaped (its output through the passed pipe, its PrivExit), and every
 * request the helper must refuse because it names something that is not
 * one of its ranks: a signal or a dump of a stranger's pid, a restore
 * from a directory outside /dev/shm/mpiv-*, garbage packets. Then the
 * agent dies by SIGKILL: the helper kills the ranks it still has and
 * ends the same way. The helper runs without an account switch there,
 * which the refusals do not depend on. As root with a working CRIU, a
 * second helper whose ranks are nobody's is handed the image of a root
 * process: it must refuse to let it run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pwd.h>
#include <sys/stat.h>

#include "../../node-agent/criu.h"
#include "../../node-agent/helper.h"

#include "tap.h"

/* Waits up to ms for a packet of type want (others are skipped). */
static ProtobufCMessage *
expect(int fd, uint16_t want, int *fds, int *nfds, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	ProtobufCMessage *m;
	struct frame_hdr h;
	const char *err;
	int rc;

	for (;;) {
		if (poll(&p, 1, ms) <= 0)
			return NULL;
		rc = helper_recv(fd, &h, &m, fds, nfds, &err);
		if (rc == 0)
			return NULL;
		if (rc < 0)
			continue;
		if (h.type == want)
			return m;
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		frame_free_meta(m);
	}
}

static bool
alive(pid_t p)
{
	return kill(p, 0) == 0;
}

static pid_t
spawn(int fd, uint64_t id, char **argv, size_t argc, int *fds, int *nfds,
    Mpiv__PrivSpawned **out)
{
	Mpiv__PrivSpawn s = MPIV__PRIV_SPAWN__INIT;

	s.id = id;
	s.job_id = "t";
	s.argv = argv;
	s.n_argv = argc;
	s.cwd = "/";
	if (helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_SPAWN, &s.base, NULL,
	    0) < 0)
		return -1;
	*out = (Mpiv__PrivSpawned *)expect(fd, MPIV__MSG_TYPE__MSG_PRIV_SPAWNED,
	    fds, nfds, 5000);
	return *out != NULL ? (*out)->pid : -1;
}

/* The agent's side; returns its exit code (or raises SIGKILL). */
static int
agent(int fd, pid_t stranger)
{
	char *echo[] = { "/bin/echo", "hello from a rank" };
	char *sleeper[] = { "/bin/sleep", "100" };
	Mpiv__PrivSpawned *sp;
	Mpiv__PrivExit *ex;
	int fds[HELPER_MAX_FDS], nfds = 0;
	char buf[64] = "";
	pid_t pid;
	ssize_t r;

	/* A rank: its stdout comes through the first passed pipe. */
	pid = spawn(fd, 1, echo, 2, fds, &nfds, &sp);
	CHECK(pid > 0 && nfds == 4 && *sp->error == '\0',
	    "spawn: a pid and four pipe ends (pid %d, %d fds)", (int)pid, nfds);
	if (pid > 0 && nfds == 4) {
		r = read(fds[0], buf, sizeof(buf) - 1);
		buf[r > 0 ? r : 0] = '\0';
		CHECK(strcmp(buf, "hello from a rank\n") == 0,
		    "spawn: the rank's stdout arrives through the pipe");
		for (int i = 0; i < 4; i++)
			close(fds[i]);
		ex = (Mpiv__PrivExit *)expect(fd, MPIV__MSG_TYPE__MSG_PRIV_EXIT,
		    fds, &nfds, 5000);
		CHECK(ex != NULL && ex->pid == pid && WIFEXITED(ex->status) &&
		    WEXITSTATUS(ex->status) == 0,
		    "exit: PrivExit names the rank, status exit 0");
		if (ex != NULL)
			frame_free_meta(&ex->base);
	}
	if (sp != NULL)
		frame_free_meta(&sp->base);

	/* A missing program: reported, still reaped. */
	{
		char *bad[] = { "/nonexistent/prog" };
		pid = spawn(fd, 2, bad, 1, fds, &nfds, &sp);
		CHECK(pid > 0 && sp->exec_errno == ENOENT,
		    "spawn of a missing program: exec_errno ENOENT");
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (sp != NULL)
			frame_free_meta(&sp->base);
		ex = (Mpiv__PrivExit *)expect(fd, MPIV__MSG_TYPE__MSG_PRIV_EXIT,
		    fds, &nfds, 5000);
		CHECK(ex != NULL && ex->pid == pid, "missing program: reaped");
		if (ex != NULL)
			frame_free_meta(&ex->base);
	}

	/* Requests naming what is not a rank of this helper. */
	{
		Mpiv__PrivSignal s = MPIV__PRIV_SIGNAL__INIT;
		s.pid = stranger;
		s.signal = SIGKILL;
		s.how = MPIV__PRIV_HOW__PRIV_ALL;
		(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_SIGNAL, &s.base,
		    NULL, 0);
		s.how = MPIV__PRIV_HOW__PRIV_ONE;
		(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_SIGNAL, &s.base,
		    NULL, 0);
	}
	{
		Mpiv__PrivDump d = MPIV__PRIV_DUMP__INIT;
		Mpiv__PrivDumped *dd;
		d.id = 3;
		d.pid = stranger;
		d.clone_ns = stranger;
		(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_DUMP, &d.base,
		    NULL, 0);
		dd = (Mpiv__PrivDumped *)expect(fd,
		    MPIV__MSG_TYPE__MSG_PRIV_DUMPED, fds, &nfds, 5000);
		CHECK(dd != NULL && !dd->ok && strstr(dd->error, "not found"),
		    "dump of a stranger: refused (%s)", dd ? dd->error : "-");
		if (dd != NULL)
			frame_free_meta(&dd->base);
		d.discard = true;
		(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_DUMP, &d.base,
		    NULL, 0);
	}
	{
		static const char *dirs[] = { "/etc", "/dev/shm/mpiv-x/../..",
		    "/dev/shm/other", "/dev/shm/mpiv-rst-1-nothere" };
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			Mpiv__PrivRestore rq = MPIV__PRIV_RESTORE__INIT;
			Mpiv__PrivRestored *rr;
			rq.id = 10 + i;
			rq.dir = (char *)dirs[i];
			(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_RESTORE,
			    &rq.base, NULL, 0);
			rr = (Mpiv__PrivRestored *)expect(fd,
			    MPIV__MSG_TYPE__MSG_PRIV_RESTORED, fds, &nfds, 10000);
			CHECK(rr != NULL && rr->pid == 0 && *rr->error != '\0',
			    "restore from %s: refused (%s)", dirs[i],
			    rr ? rr->error : "no answer");
			if (rr != NULL)
				frame_free_meta(&rr->base);
		}
	}
	/* A link in /dev/shm named like an image directory, to /etc. */
	{
		Mpiv__PrivRestore rq = MPIV__PRIV_RESTORE__INIT;
		Mpiv__PrivRestored *rr;
		char link[64];
		struct stat st;

		snprintf(link, sizeof(link), "/dev/shm/mpiv-rst-%d-link",
		    (int)getpid());
		(void)unlink(link);
		if (symlink("/etc", link) == 0) {
			rq.id = 30;
			rq.dir = link;
			(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_RESTORE,
			    &rq.base, NULL, 0);
			rr = (Mpiv__PrivRestored *)expect(fd,
			    MPIV__MSG_TYPE__MSG_PRIV_RESTORED, fds, &nfds, 10000);
			CHECK(rr != NULL && rr->pid == 0 &&
			    strstr(rr->error, "not the agent's directory"),
			    "restore from a link to /etc: refused (%s)",
			    rr ? rr->error : "no answer");
			if (rr != NULL)
				frame_free_meta(&rr->base);
			CHECK(stat("/etc", &st) == 0 && st.st_uid == 0 &&
			    lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
			    "/etc untouched, the link given back");
			(void)unlink(link);
		}
	}
	/* Garbage and a frame of the wrong kind: ignored, helper lives. */
	{
		static const uint8_t junk[] = "not a frame at all, no";
		Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;
		(void)send(fd, junk, sizeof(junk), 0);
		(void)send(fd, junk, 3, 0);
		(void)helper_send(fd, MPIV__MSG_TYPE__MSG_HEARTBEAT, &hb.base,
		    NULL, 0);
	}
	CHECK(alive(stranger), "the stranger lives after every request "
	    "against it");

	/* A long rank; then the agent dies: the helper must kill it. */
	pid = spawn(fd, 20, sleeper, 2, fds, &nfds, &sp);
	CHECK(pid > 0, "spawn after the garbage: the helper still serves");
	if (sp != NULL)
		frame_free_meta(&sp->base);
	printf("# sleeper %d\n", (int)pid);
	fflush(stdout);
	return failures;
}

/*
 * As root with CRIU: the image of a root process, restored by a helper
 * whose ranks are nobody's, must not run. 0 ok, 1 failed, 77 skipped.
 */
static int
foreign_image(void)
{
	struct helper_conf c = { 0 };
	struct passwd *pw = getpwnam("nobody");
	char err[512], why[256], dir[64];
	pid_t victim, h, sleeper = -1;
	int st, fd, sp_pipe[2];

	if (geteuid() != 0 || pw == NULL || criu_probe(why, sizeof(why)) != 1)
		return 77;
	if ((victim = fork()) == 0) {
		int nul = open("/dev/null", O_RDWR);
		setsid();
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		/* nothing else open: CRIU refuses to dump a descriptor of a
		   file outside the process's root (the harness of a chroot'ed
		   run, deploy/fresh-check.sh, leaves such a one open) */
		for (int i = 3; i < 4096; i++)
			(void)close(i);
		raise(SIGSTOP);	/* as a rank's clone does before its dump */
		for (;;)
			pause();
	}
	if (waitpid(victim, &st, WUNTRACED) != victim || !WIFSTOPPED(st))
		return 1;
	snprintf(dir, sizeof(dir), "/dev/shm/mpiv-rst-%d-XXXXXX", (int)getpid());
	if (mkdtemp(dir) == NULL || criu_dump(victim, dir, err,
	    sizeof(err)) < 0) {
		printf("# dump of a root process failed: %s\n", err);
		kill(victim, SIGKILL);
		waitpid(victim, NULL, 0);
		return 1;
	}
	waitpid(victim, NULL, 0);	/* criu killed it */
	if (chown(dir, pw->pw_uid, pw->pw_gid) < 0)
		return 1;
	c.drop = true;
	c.uid = pw->pw_uid;
	c.gid = pw->pw_gid;
	c.user = "nobody";
	c.criu = true;
	if (pipe(sp_pipe) < 0)
		return 1;
	if ((h = fork()) == 0) {
		close(sp_pipe[0]);
		Mpiv__PrivRestore rq = MPIV__PRIV_RESTORE__INIT;
		Mpiv__PrivRestored *rr;
		int fds[HELPER_MAX_FDS], nfds;

		if (helper_start(&c, &fd) < 0)
			_exit(99);
		CHECK(getuid() == pw->pw_uid && setuid(0) < 0,
		    "the agent runs as nobody and cannot become root again");
		rq.id = 1;
		rq.dir = dir;
		(void)helper_send(fd, MPIV__MSG_TYPE__MSG_PRIV_RESTORE, &rq.base,
		    NULL, 0);
		rr = (Mpiv__PrivRestored *)expect(fd,
		    MPIV__MSG_TYPE__MSG_PRIV_RESTORED, fds, &nfds, 30000);
		CHECK(rr != NULL && rr->pid == 0 &&
		    strstr(rr->error, "not nobody's") != NULL,
		    "a root process's image, restored for nobody's ranks: "
		    "killed before it ran (%s)", rr ? rr->error : "no answer");
		if (rr == NULL || rr->pid != 0 ||
		    strstr(rr->error, "not nobody's") == NULL)
			_exit(1);
		/* A rank of nobody's, then the helper SIGKILLed: the rank
		   must die with it (the id change cleared its parent-death
		   signal once). */
		{
			char *sleeper[] = { "/bin/sleep", "100" };
			Mpiv__PrivSpawned *sp;
			pid_t pid = spawn(fd, 2, sleeper, 2, fds, &nfds, &sp);
			(void)!write(sp_pipe[1], &pid, sizeof(pid));
			for (;;)	/* until the helper is killed: our */
				pause();	/* parent-death signal ends us */
		}
	}
	close(sp_pipe[1]);
	if (read(sp_pipe[0], &sleeper, sizeof(sleeper)) != sizeof(sleeper))
		sleeper = -1;
	close(sp_pipe[0]);
	(void)kill(h, SIGKILL);		/* the helper (the agent cannot) */
	if (waitpid(h, &st, 0) != h)
		return 1;
	for (int i = 0; i < 500 && sleeper > 0 && alive(sleeper); i++)
		usleep(10000);
	CHECK(sleeper > 0 && !alive(sleeper), "a rank of nobody's (%d) dies "
	    "with its SIGKILLed helper", (int)sleeper);
	if (sleeper <= 0 || alive(sleeper)) {
		if (sleeper > 0)
			kill(sleeper, SIGKILL);
		st = 1 << 8;
	} else {
		st = 0;
	}
	if (access(dir, F_OK) == 0) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)system(cmd);
	}
	return st == 0 ? 0 : 1;
}

int
main(void)
{
	struct helper_conf c = { 0 };
	pid_t stranger, h, sleeper = -1;
	char err[200], line[128];
	int st, fd, out[2];
	FILE *f;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (helper_conf_user(&c, NULL, err, sizeof(err)) < 0) {
		printf("not ok - conf: %s\n", err);
		return 1;
	}
	c.drop = false;		/* one account here, whoever runs us */
	c.criu = true;		/* the refusals come before any criu */
	if ((stranger = fork()) == 0) {
		pause();
		_exit(0);
	}
	if (pipe(out) < 0)
		return 1;
	if ((h = fork()) == 0) {
		close(out[0]);
		dup2(out[1], 1);
		if (helper_start(&c, &fd) < 0)
			_exit(99);
		/* The agent. */
		if (agent(fd, stranger) != 0)
			_exit(1);
		raise(SIGKILL);
		_exit(98);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), f) != NULL) {
		fputs(line, stdout);
		if (strncmp(line, "not ok", 6) == 0)
			failures++;
		(void)sscanf(line, "# sleeper %d", &sleeper);
	}
	fclose(f);
	if (waitpid(h, &st, 0) != h)
		return 1;
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	    "the helper ends as its agent did (SIGKILL; status 0x%x)", st);
	CHECK(sleeper > 0 && !alive(sleeper),
	    "the agent's death killed its rank (%d)", (int)sleeper);
	kill(stranger, SIGKILL);
	waitpid(stranger, NULL, 0);
	switch (foreign_image()) {
	case 0:
		break;
	case 77:
		printf("# skipped the foreign image: not root, or no CRIU\n");
		break;
	default:
		failures++;
		break;
	}
	printf("%s\n", failures == 0 ? "# all passed" : "# FAILED");
	return failures != 0;
}
