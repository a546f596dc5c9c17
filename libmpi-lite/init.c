/*
 * init.c: MPI_Init/Finalize/Abort and the small environment calls.
 *
 * MPI_Init reads the rank environment of docs/CONTRACTS.md, connects to
 * every Channel Memory of the job and sets up the communicators. It is
 * the one place the library prints on its own: before MPI_Init succeeds
 * no error handler exists, so a failure is one clear line on stderr and
 * exit code 1 (MPI_Init's handler is fatal).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "direct.h"
#include "mono.h"
#include "proto.h"
#include "transport.h"
#include "waitrep.h"

struct mpiv_state mpiv_state;

/* Fails MPI_Init: the message, then exit 1 as the contract says. */
static void __attribute__((noreturn, format(printf, 1, 2)))
init_die(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	fflush(stdout);
	/* one write: the lines of ranks dying together stay whole */
	n = snprintf(line, sizeof(line), "mpiv: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
	exit(1);
}

/* Parses a decimal environment integer in [lo, hi]; -1 if bad/absent. */
static int
init_env_int(const char *name, long lo, long hi, long *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int
MPI_Init(int *argc, char ***argv)
{
	const char *cms, *job, *proto;
	long rank, size, inc = 1;
	char err[600];
	int rc;

	if (mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, "MPI_Init");
	cms = getenv("MPIV_CMS");
	if (cms == NULL || *cms == '\0')
		init_die("this program must be started with mpiv run "
		    "(MPIV_CMS is not set)");
	job = getenv("MPIV_JOB");
	if (job == NULL)
		job = "";
	if (init_env_int("MPIV_SIZE", 1, INT_MAX, &size) < 0)
		init_die("MPIV_SIZE is missing or not a positive number");
	if (init_env_int("MPIV_RANK", 0, size - 1, &rank) < 0)
		init_die("MPIV_RANK is missing or not in [0, %ld)", size);
	if (getenv("MPIV_INCARNATION") != NULL &&
	    init_env_int("MPIV_INCARNATION", 1, UINT32_MAX, &inc) < 0)
		init_die("MPIV_INCARNATION is not a positive number");

	/* The job's protocol (docs/DIRECT.md): a direct rank listens for
	   its peers before it tells the CMs where. */
	proto = getenv("MPIV_PROTOCOL");
	if (proto != NULL && strcmp(proto, "direct") == 0) {
		mpiv_proto = &mpiv_proto_direct;
		if (dp_listen_open(cms) != MPI_SUCCESS)
			init_die("rank %ld: %s", rank, mpiv_err_last_detail());
	} else if (proto != NULL && *proto != '\0' &&
	    strcmp(proto, "relay") != 0) {
		init_die("MPIV_PROTOCOL \"%s\" is not relay or direct", proto);
	}

	/* Dials every CM; the home CM also hands over the outcomes logged by
	   earlier incarnations, which the re-execution will replay. */
	mpiv_ndlog_init();
	if (mpiv_tp_open(cms, job, (int)rank, (int)size, (uint32_t)inc, err,
	    sizeof(err)) < 0) {
		if (mpiv_tp_restore_needed() && mpiv_ndlog_enabled()) {
			/* Die like a killed rank: by the time the dispatcher
			   relaunches us it knows the checkpoint (the node
			   reports it right after the CS stored it). */
			struct timespec nap = { 0, 200 * 1000 * 1000 };
			nanosleep(&nap, NULL);
			raise(SIGKILL);
		}
		init_die("rank %ld: %s", rank, err);
	}
	if (mpiv_proto == &mpiv_proto_direct && mpiv_tp_fin_closed()) {
		/* Every rank waited at the end of MPI_Finalize (an earlier
		   incarnation of this one too): no peer runs again, this
		   incarnation has nothing to do. */
		mpiv_tp_close(mpiv_tp_fin_code());
		mpiv_p2p_fin_leave(mpiv_tp_fin_code());
	}
	if ((rc = mpiv_p2p_init((int)size)) != MPI_SUCCESS) {
		/* a bad setting (MPIV_SENDLOG_MAX=abc) says which */
		if (rc != MPI_ERR_NO_MEM && *mpiv_err_last_detail() != '\0')
			init_die("rank %ld: %s", rank, mpiv_err_last_detail());
		init_die("rank %ld: out of memory", rank);
	}
	mpiv_state.world_rank = (int)rank;
	mpiv_state.world_size = (int)size;
	if ((rc = mpiv_comm_init((int)rank, (int)size)) != MPI_SUCCESS)
		init_die("rank %ld: cannot set up the communicators (error %d)",
		    rank, rc);
	mpiv_state.initialized = true;
	/* Checkpoints (docs/CHECKPOINT.md), when the node offers them. */
	mpiv_ckpt_init((int)rank, (int)size, (uint32_t)inc);
	mpiv_dump_init();
	if (mpiv_state.thread_level == 0)
		mpiv_state.thread_level = MPI_THREAD_SINGLE;
	(void)argc;
	(void)argv;
	return MPI_SUCCESS;
}

/* No threads inside; a threaded program gets at most SERIALIZED. */
int
MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int level = required;
	int rc;

	if (level > MPI_THREAD_SERIALIZED)
		level = MPI_THREAD_SERIALIZED;
	if (level < MPI_THREAD_SINGLE)
		level = MPI_THREAD_SINGLE;
	mpiv_state.thread_level = level;
	rc = MPI_Init(argc, argv);
	if (provided != NULL)
		*provided = level;
	return rc;
}

int
MPI_Initialized(int *flag)
{
	if (flag == NULL)
		return MPI_ERR_ARG;
	*flag = mpiv_state.initialized;
	return MPI_SUCCESS;
}

int
MPI_Finalized(int *flag)
{
	if (flag == NULL)
		return MPI_ERR_ARG;
	*flag = mpiv_state.finalized;
	return MPI_SUCCESS;
}

/*
 * Everything this rank sent must be in the CMs before it says Bye: the
 * outcomes still pending, every message complete at its CM and in its
 * store (a finished rank is not run again when a CM restarts on its
 * store), and the SyncAcks of synchronous sends still out.
 */
int
MPI_Finalize(void)
{
	int rc;

	if (!mpiv_state.initialized || mpiv_state.finalized)
		return mpiv_err(NULL, MPI_ERR_OTHER, "MPI_Finalize");
	/* First the equivalent of freeing MPI_COMM_SELF (MPI-2.2): its
	   attributes' delete callbacks, last set first, MPI still up for
	   them (a tool's "at exit" may communicate). */
	if ((rc = mpiv_attr_free_all(MPI_COMM_SELF)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Finalize");
	mpiv_fault_point("finalize");
	mpiv_ckpt_fini();	/* no checkpoint of a finalizing rank */
	if (mpiv_p2p_pending_acks > 0) {
		mpiv_waitrep_begin("MPI_Finalize, for its synchronous sends "
		    "to be received", NULL, 0);
		while (rc == MPI_SUCCESS && mpiv_p2p_pending_acks > 0)
			rc = mpiv_tp_progress(-1);
		mpiv_waitrep_end();
	}
	if (rc != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Finalize");
	if ((rc = mpiv_p2p_finalize()) != MPI_SUCCESS) {
		mpiv_p2p_fin_fail(rc);
		return mpiv_err(NULL, rc, "MPI_Finalize");
	}
	if (mpiv_p2p_fin_child()) {
		/* the program past MPI_Finalize: the rank's process closes
		   the links once it ended (dp_fin.c) */
		mpiv_state.finalized = true;
		return MPI_SUCCESS;
	}
	rc = mpiv_ndlog_flush();
	if (rc == MPI_SUCCESS)
		rc = mpiv_tp_sync_cms();
	while (rc == MPI_SUCCESS && mpiv_p2p_pending_acks > 0)
		rc = mpiv_tp_progress(-1);
	if (rc != MPI_SUCCESS) {
		mpiv_p2p_fin_fail(rc);
		return mpiv_err(NULL, rc, "MPI_Finalize");
	}
	mpiv_tp_close(mpiv_p2p_fin_code());
	mpiv_comm_finalize();
	mpiv_p2p_fini();
	mpiv_ndlog_fini();
	mpiv_state.finalized = true;
	/* a direct keeper leaves here (and says it as it leaves) */
	mpiv_p2p_fin_exit();
	mpiv_say_finalized();
	return MPI_SUCCESS;
}

/* One line to the node agent (MPIV_CTRL_FD), if there is one; a node
   that is gone hears nothing. */
static void
init_ctrl_line(const char *line, size_t n)
{
	long fd;

	if (init_env_int("MPIV_CTRL_FD", 0, INT_MAX, &fd) == 0 &&
	    write((int)fd, line, n) < 0) {
		/* nothing more we can do */
	}
}

/*
 * Tells the node agent (MPIV_CTRL_FD) that the job must end with code,
 * then exits at once: buffered stdio is flushed first so that what the
 * program printed before aborting is not lost.
 */
void
mpiv_abort_job(int code, const char *why)
{
	char line[64];
	int n;

	(void)why;
	fflush(stdout);
	fflush(stderr);
	n = snprintf(line, sizeof(line), "abort %d\n", code);
	init_ctrl_line(line, (size_t)n);
	_exit(code);
}

void
mpiv_say_finalized(void)
{
	static const char line[] = "finalized\n";

	init_ctrl_line(line, sizeof(line) - 1);
}

int
MPI_Abort(MPI_Comm comm, int errorcode)
{
	(void)comm;
	mpiv_abort_job(errorcode, "MPI_Abort");
}

int
MPI_Query_thread(int *provided)
{
	if (provided == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Query_thread");
	*provided = mpiv_state.thread_level;
	return MPI_SUCCESS;
}

/* There is only the thread that called MPI_Init as far as we know. */
int
MPI_Is_thread_main(int *flag)
{
	if (flag == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Is_thread_main");
	*flag = 1;
	return MPI_SUCCESS;
}

double
MPI_Wtime(void)
{
	return mono_s();
}

double
MPI_Wtick(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC, &ts) < 0)
		return 1e-9;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
MPI_Get_processor_name(char *name, int *resultlen)
{
	const char *node = getenv("MPIV_NODE");
	char host[MPI_MAX_PROCESSOR_NAME];

	if (name == NULL || resultlen == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Get_processor_name");
	if (node == NULL || *node == '\0') {
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", node);
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}

int
MPI_Get_version(int *version, int *subversion)
{
	if (version == NULL || subversion == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Get_version");
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

int
MPI_Get_library_version(char *version, int *resultlen)
{
	if (version == NULL || resultlen == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Get_library_version");
	snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
	    "mpiv libmpi-lite (MPI %d.%d subset, protocol %u)", MPI_VERSION,
	    MPI_SUBVERSION, FRAME_VERSION);
	*resultlen = (int)strlen(version);
	return MPI_SUCCESS;
}

/* Profiling control: nothing to control. */
int
MPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}

int
MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	void *p;

	(void)info;
	if (size < 0 || baseptr == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Alloc_mem");
	if ((p = malloc(size > 0 ? (size_t)size : 1)) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem");
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

int
MPI_Free_mem(void *base)
{
	free(base);
	return MPI_SUCCESS;
}
