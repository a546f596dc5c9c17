/*
 * dp_fin.c: what a direct rank's program does after MPI_Finalize runs in
 * a process of its own, while the rank's own process keeps the log
 * (docs/DIRECT.md, "Finalize").
 *
 * Why. A direct rank's sent messages live in its memory only, so it may
 * not leave before the job is closed: a peer run again would need them.
 * And once the job is closed no incarnation runs again. So whatever the
 * program did after MPI_Finalize returned could never be done again: a
 * rank killed there lost the lines it was to print after MPI_Finalize,
 * and the job still exited 0 (its relaunch heard "closed" at MPI_Init).
 *
 * What. Once the rank's commit is stored and its output synced, it
 * forks. The child is the program: it drops its copies of the sockets
 * (close only), dies with the parent (PR_SET_PDEATHSIG), and returns
 * from MPI_Finalize. The parent, the keeper, serves resends until the
 * child ended, syncs the output again (what the program printed after
 * MPI_Finalize is at the dispatcher before the job may close), and only
 * then says FinWait; after FinGo it ends as the child did: the same exit
 * code, or the same signal.
 *
 * So the job closes only once every rank's program is past its end, and
 * a rank killed before that (keeper, child or both) runs again from its
 * start or checkpoint like any rank killed before MPI_Finalize: its
 * peers still hold its messages. A child killed by SIGKILL or SIGTERM
 * alone (the OOM killer, a user's kill of the pid) takes the keeper with
 * it by SIGKILL, so the rank runs again. A child killed by another
 * signal (a crash after MPI_Finalize) is an end like an exit code: the
 * keeper syncs what it printed, waits for the close like any rank, and
 * then ends with that signal, so the job fails with it, and with every
 * line its ranks printed (the keeper used to die at once, and the
 * dispatcher then killed the ranks that had not printed their last
 * lines yet).
 *
 * Not forked (the rank goes to the close itself, as before): a process
 * with more threads than the caller (a child of fork() would have only
 * this one), a failed fork(), and MPIV_FINALIZE_FORK=0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "direct.h"
#include "proto.h"
#include "transport.h"

#define DP_FIN_POLL_MS	2	/* the keeper looks at its child this often */
#define DP_FIN_PIDFD_MS	1000	/* ... or, with a pidfd of it, this often */

static pid_t dp_fin_pid;	/* keeper: the program's process */
static bool dp_fin_is_child;	/* this is the program's process */
static int dp_fin_status;	/* keeper: how the child ended */
static int dp_fin_sig;		/* keeper: the signal that ended it, or 0 */

/* Threads of this process (from /proc), or -1 when unknown. */
static int
dp_fin_threads(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	int n = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Threads:", 8) == 0) {
			n = atoi(line + 8);
			break;
		}
	fclose(f);
	return n;
}

/* The keeper cannot finish the protocol: the child may not go on
   alone (the job would close without this rank), and the keeper may
   not return to the program (it would run twice). */
static void __attribute__((noreturn))
dp_fin_keeper_fail(int rc)
{
	(void)kill(dp_fin_pid, SIGKILL);
	while (waitpid(dp_fin_pid, NULL, 0) < 0 && errno == EINTR)
		;
	(void)mpiv_err(NULL, rc, "MPI_Finalize");
	mpiv_abort_job(rc == MPI_SUCCESS ? 1 : rc, "MPI_Finalize");
}

/* Ends this process by signal sig, as the child did. */
static void __attribute__((noreturn))
dp_fin_die(int sig)
{
	sigset_t set;

	(void)signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

int
dp_fin_fork(void)
{
	const char *e = getenv("MPIV_FINALIZE_FORK");
	struct sigaction dfl, prog;
	pid_t keeper = getpid(), pid;
	int st, rc;

	if (e != NULL && strcmp(e, "0") == 0)
		return MPI_SUCCESS;
	if (dp_fin_threads() != 1)
		return MPI_SUCCESS;
	/* the keeper reaps its child itself: not a program's SIGCHLD
	   handler, nor SIG_IGN's reaping without a status */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	if (sigaction(SIGCHLD, &dfl, &prog) < 0)
		return MPI_SUCCESS;
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		(void)sigaction(SIGCHLD, &prog, NULL);
		return MPI_SUCCESS;
	}
	if (pid == 0) {
		/* the program: no socket of the rank's, dies with it */
		(void)sigaction(SIGCHLD, &prog, NULL);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != keeper)
			raise(SIGKILL);		/* the keeper died meanwhile */
		mpiv_tp_clone_detach();
		dp_clone_detach();
		dp_fin_is_child = true;
		mpiv_fault_point("returned");
		return MPI_SUCCESS;
	}
	dp_fin_pid = pid;
	/* The child's end wakes the keeper's waits (a pidfd becomes
	   readable); without pidfds (Linux < 5.3) it looks every 2 ms. */
	int pidfd = -1;
#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	mpiv_tp_wake_fd(pidfd);
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			dp_fin_keeper_fail(MPI_ERR_INTERN);
		rc = mpiv_tp_progress(pidfd >= 0 ? DP_FIN_PIDFD_MS : DP_FIN_POLL_MS);
		if (rc != MPI_SUCCESS)
			dp_fin_keeper_fail(rc);
	}
	mpiv_tp_wake_fd(-1);
	if (pidfd >= 0)
		close(pidfd);
	dp_fin_status = st;
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);

		/* killed from outside: the whole rank runs again */
		if (sig == SIGKILL || sig == SIGTERM)
			raise(SIGKILL);
		dp_fin_sig = sig;	/* its end, once the job closed */
	}
	/* what the program printed after MPI_Finalize, before the close */
	if ((rc = mpiv_ckpt_output_sync()) != MPI_SUCCESS)
		dp_fin_keeper_fail(rc);
	return MPI_SUCCESS;
}

bool
mpiv_p2p_fin_child(void)
{
	return dp_fin_is_child;
}

int
mpiv_p2p_fin_code(void)
{
	if (dp_fin_sig != 0)
		return -dp_fin_sig;
	return dp_fin_pid > 0 && WIFEXITED(dp_fin_status) ?
	    WEXITSTATUS(dp_fin_status) : 0;
}

void
mpiv_p2p_fin_exit(void)
{
	if (dp_fin_pid > 0)
		mpiv_p2p_fin_leave(mpiv_p2p_fin_code());
}

void
mpiv_p2p_fin_leave(int code)
{
	mpiv_say_finalized();
	if (code < 0)
		dp_fin_die(-code);
	_exit(code);
}

void
mpiv_p2p_fin_fail(int rc)
{
	if (dp_fin_pid > 0)
		dp_fin_keeper_fail(rc);
}
