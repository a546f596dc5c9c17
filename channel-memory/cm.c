/*
 * cm.c: `mpiv cm`, the Channel Memory daemon. Parses options, listens,
 * optionally registers with a dispatcher, runs one libev loop until
 * SIGTERM/SIGINT, then closes every connection and frees every job.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cm.h"
#include "cm_priv.h"
#include "daemon.h"
#include "dial.h"
#include "log.h"
#include "mono.h"
#include "net.h"
#include "srvfault.h"

#define CM_DIAL_TIMEOUT	   2.0	/* s: a dial of the dispatcher */
#define CM_REDIAL_SECONDS  1.0
#define CM_SPIN_DEFAULT_US 50
#define CM_SPIN_EVAL_US	   10000
#define CM_PREFAULT_DEFAULT 2	/* arenas; see pbuf_prefault */
#define CM_PREFAULT_MAX	   64

static void
cm_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv cm [-h] [--dispatcher HOST:PORT] [--listen HOST:PORT]\n"
	    "               [--advertise HOST:PORT] "
	    "[--log-level error|warn|info|debug]\n"
	    "               [--max-memory BYTES]\n"
	    "  --listen HOST:PORT      address to serve (port 0 picks one; "
	    "default 0.0.0.0:0)\n"
	    "  --advertise HOST:PORT   address ranks and checkpoint servers "
	    "are told to dial\n"
	    "                          (default: the bound one; for a NAT "
	    "or a relay in front)\n"
	    "  --dispatcher HOST:PORT  register with this dispatcher and take "
	    "jobs from it\n"
	    "  --log-level LEVEL       default info (MPIV_LOG overrides)\n"
	    "  --secret-file FILE      cluster secret: authenticate every "
	    "connection\n"
	    "                          (env MPIV_SECRET_FILE)\n"
	    "  --max-memory BYTES      bytes held per job (unexpected messages "
	    "and the log)\n"
	    "                          before senders are paused\n"
	    "                          (suffixes K, M, G; default half of the "
	    "machine's or\n"
	    "                          cgroup's memory; env MPIV_CM_MAX_MEMORY)\n"
	    "  --spill-dir DIR         beyond half the cap, logged payloads go "
	    "to a file here\n"
	    "                          (unlinked, 0600; default /var/tmp; "
	    "\"off\": never;\n"
	    "                          env MPIV_CM_SPILL_DIR)\n"
	    "  --log-full-timeout S    a job whose log stays over the cap while "
	    "checkpoints\n"
	    "                          free nothing for S seconds fails "
	    "(default %d;\n"
	    "                          env MPIV_CM_LOG_FULL_TIMEOUT)\n"
	    "  --store DIR             keep every job's log in DIR too (0700), "
	    "written\n"
	    "                          before each answer: started again on "
	    "DIR after a\n"
	    "                          crash, the CM recovers its jobs "
	    "(env MPIV_CM_STORE)\n"
	    "  --store-sync MODE       write: a record is in the file (survives "
	    "the CM's\n"
	    "                          crash; default); fsync: on disk "
	    "(survives the\n"
	    "                          machine's; env MPIV_CM_STORE_SYNC)\n"
	    "  --files off|any|DIR     MPI-IO: serve no files (default), "
	    "any path, or\n"
	    "                          paths beneath DIR only, with this CM's "
	    "rights, to\n"
	    "                          the jobs whose first CM it is (env "
	    "MPIV_CM_FILES)\n"
	    "  --files-journal DIR     where the copies that undo a job's file "
	    "changes go\n"
	    "                          while it runs (default: DIR/files of "
	    "--store, else\n"
	    "                          /var/tmp/mpiv-files-UID; env "
	    "MPIV_CM_FILES_JOURNAL)\n"
	    "  --spin US               after receiving, poll this many µs "
	    "before sleeping\n"
	    "                          (default %d, 0 = never; yielding "
	    "the core between\n"
	    "                          polls when tasks outnumber cores, "
	    "off beyond twice;\n"
	    "                          env MPIV_CM_SPIN)\n"
	    "  --prefault N            keep N 16 MiB arenas for big payloads "
	    "faulted in\n"
	    "                          ahead of need, by a helper thread "
	    "(default %d,\n"
	    "                          0 = off; env MPIV_CM_PREFAULT)\n"
	    DAEMON_CONN_LIMITS_USAGE,
	    CM_LOG_FULL_TIMEOUT, CM_SPIN_DEFAULT_US, CM_PREFAULT_DEFAULT);
}

/*
 * --store DIR: created 0700 if missing, and locked for this CM's life
 * (the lock goes with the process, crash included): two CMs on one
 * store would each take the other's jobs. 0, or -1 said.
 */
static int
cm_store_lock(const char *dir)
{
	char path[4200];
	int fd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		log_warn("cm --store %s: cannot create it", dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/lock", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		log_warn("cm --store %s: cannot open %s", dir, path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		log_errorx("cm --store %s is in use by another channel memory",
		    dir);
		close(fd);
		return -1;
	}
	return 0;	/* fd stays open: the lock lasts as long as we do */
}

static void
cm_on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct cm *cm = w->data;
	int fd;

	for (;;) {
		fd = accept4(cm->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("cm accept");
			return;
		}
		if (cm->as.gate != NULL && conn_gate_admit(cm->as.gate, fd) < 0)
			continue;	/* over a connection cap: closed */
		(void)session_new(cm, fd, false);
	}
}

/*
 * Arms the one-shot redial timer. The delay is set again each time: a
 * stopped libev timer keeps only what was left of its previous delay.
 */
static void
cm_redial_later(struct cm *cm)
{
	ev_timer_stop(cm->loop, &cm->redial_w);
	ev_timer_set(&cm->redial_w, CM_REDIAL_SECONDS, 0.);
	ev_timer_start(cm->loop, &cm->redial_w);
}

static void
cm_on_dial(void *arg, int fd, int err)
{
	struct cm *cm = arg;

	cm->disp_dial = NULL;
	if (fd < 0) {
		log_warnx("cm cannot reach dispatcher=%s (%s), retrying",
		    cm->dispatcher, strerror(err));
		cm_redial_later(cm);
		return;
	}
	if (cm->stopping) {
		close(fd);
		return;
	}
	cm->disp = session_new(cm, fd, true);
	if (cm->disp == NULL)
		cm_redial_later(cm);
	else
		log_info("cm registered with dispatcher=%s addr=%s",
		    cm->dispatcher, cm->addr);
}

/* Dials the dispatcher from the loop (ranks are served meanwhile); on
   failure retries from a timer. */
static void
cm_dial_dispatcher(struct cm *cm)
{
	if (cm->stopping || cm->disp != NULL || cm->disp_dial != NULL)
		return;
	cm->disp_dial = dial_start(cm->loop, cm->dispatcher, CM_DIAL_TIMEOUT,
	    cm_on_dial, cm);
	if (cm->disp_dial == NULL)
		cm_redial_later(cm);
}

static void
cm_on_redial(struct ev_loop *loop, ev_timer *w, int revents)
{
	cm_dial_dispatcher(w->data);
}

void
cm_dispatcher_lost(struct cm *cm)
{
	if (cm->stopping || cm->dispatcher == NULL)
		return;
	/*
	 * The jobs it set up go with it: the dispatcher fails a job whose
	 * CM it loses, and one that restarted knows nothing of them (its
	 * node agents killed their ranks). Their logs would only leak.
	 */
	while (cm->jobs != NULL) {
		log_warnx("cm dropping job=%s: its dispatcher is gone",
		    cm->jobs->id);
		job_end(cm, cm->jobs);
	}
	log_warnx("cm lost dispatcher=%s, redialling", cm->dispatcher);
	cm_redial_later(cm);
}

/* Stops accepting and closes everything; ev_run returns once all is gone. */
static void
cm_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct cm *cm = w->data;

	if (cm->stopping)
		return;
	log_info("cm stopping signal=%d", w->signum);
	cm->stopping = true;
	ev_io_stop(loop, &cm->accept_w);
	ev_signal_stop(loop, &cm->sigint_w);
	ev_signal_stop(loop, &cm->sigterm_w);
	ev_timer_stop(loop, &cm->redial_w);
	dial_cancel(cm->disp_dial);
	cm->disp_dial = NULL;
	close(cm->lfd);
	cm->lfd = -1;
	session_kill_all(cm);
	/* the loop ends when nothing is left to watch: no pressure timers,
	   no wait for a recovered job's claim (it stays in the store) */
	for (struct job *j = cm->jobs; j != NULL; j = j->next) {
		pressure_end(j);
		ev_timer_stop(loop, &j->claim_w);
	}
}

/*
 * Busy-polling only pays while it takes no core that a rank (or anything
 * else) wants. From the number of connections that sent frames since the
 * last look (busy) and of tasks runnable right now (running; the CM
 * itself counts as one): CM_SPIN_POLL when neither exceeds the cores;
 * else CM_SPIN_YIELD (poll, and sched_yield() between two polls, so a
 * task sharing the core runs first) while the runnable tasks are at most
 * twice the cores; CM_SPIN_NONE beyond. Measured on 2 cores
 * (docs/BENCHMARKS.md, "The CM's spin yields"): yielding instead of not
 * spinning halved a relay ring's hop and master_worker's time; spinning
 * at all among 8 busy ranks cost the polling program some 10 %.
 */
int
cm_spin_decide(long busy, long running, long ncpu)
{
	if (busy <= ncpu && running <= ncpu)
		return CM_SPIN_POLL;
	return running <= 2 * ncpu ? CM_SPIN_YIELD : CM_SPIN_NONE;
}

/* cm_spin_decide at most every CM_SPIN_EVAL_US (running from
   /proc/loadavg). */
static int
cm_spin_mode(struct cm *cm, long now)
{
	struct session *s;
	long busy = 0, running = 0, total;
	FILE *f;

	if (now - cm->spin_eval_us < CM_SPIN_EVAL_US)
		return cm->spin_mode;
	cm->spin_eval_us = now;
	for (s = cm->sessions; s != NULL; s = s->next) {
		if (s->frames != s->frames_seen)
			busy++;
		s->frames_seen = s->frames;
	}
	if ((f = fopen("/proc/loadavg", "r")) != NULL) {
		if (fscanf(f, "%*s %*s %*s %ld/%ld", &running, &total) != 2)
			running = 0;
		fclose(f);
	}
	cm->spin_mode = cm_spin_decide(busy, running, cm->ncpu);
	return cm->spin_mode;
}

/*
 * The event loop. With spin_us > 0, after an iteration that received
 * something the loop polls without sleeping for up to spin_us (renewed by
 * each new activity) before it blocks again: a frame that comes within
 * that time costs no wake-up of the CM (on this 2-core VM a wake-up of a
 * sleeping process costs more than the rest of a hop). How it polls, or
 * whether at all, follows the load (cm_spin_mode).
 */
static void
cm_run(struct cm *cm)
{
	uint64_t a;
	long deadline, now;
	int mode;

	for (;;) {
		a = cm->activity;
		if (!ev_run(cm->loop, EVRUN_ONCE))
			return;
		if (cm->spin_us <= 0 || cm->activity == a)
			continue;
		if ((mode = cm_spin_mode(cm, mono_us())) == CM_SPIN_NONE)
			continue;
		deadline = mono_us() + cm->spin_us;
		do {
			if (mode == CM_SPIN_YIELD)
				sched_yield();
			a = cm->activity;
			if (!ev_run(cm->loop, EVRUN_NOWAIT))
				return;
			now = mono_us();
			if (cm->activity != a)
				deadline = now + cm->spin_us;
		} while (now < deadline);
	}
}

int
cm_main(int argc, char **argv)
{
	static struct daemon_reload reload;
	static const struct option opts[] = {
		{ "advertise", required_argument, NULL, 'a' },
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, 'l' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ "prefault", required_argument, NULL, 'p' },
		{ "spin", required_argument, NULL, 's' },
		DAEMON_CONN_LONGOPTS,
		{ "log-full-timeout", required_argument, NULL, 0x103 },
		{ "spill-dir", required_argument, NULL, 0x104 },
		{ "store", required_argument, NULL, 0x105 },
		{ "store-sync", required_argument, NULL, 0x106 },
		{ "files", required_argument, NULL, 0x107 },
		{ "files-journal", required_argument, NULL, 0x108 },
		{ NULL, 0, NULL, 0 },
	};
	const char *maxmem = getenv("MPIV_CM_MAX_MEMORY");
	const char *full = getenv("MPIV_CM_LOG_FULL_TIMEOUT");
	const char *spill = getenv("MPIV_CM_SPILL_DIR");
	const char *store = getenv("MPIV_CM_STORE");
	const char *store_sync = getenv("MPIV_CM_STORE_SYNC");
	const char *files = getenv("MPIV_CM_FILES");
	const char *files_journal = getenv("MPIV_CM_FILES_JOURNAL");
	long full_s = CM_LOG_FULL_TIMEOUT;
	struct daemon_conn_opts co = { 0 };
	struct conn_limits lim;
	struct cm cm = { .lfd = -1,
	    .spin_us = CM_SPIN_DEFAULT_US, .spin_mode = CM_SPIN_POLL };
	const char *listen_addr = "0.0.0.0:0";
	const char *advertise = NULL;
	const char *spin = getenv("MPIV_CM_SPIN");
	const char *prefault = getenv("MPIV_CM_PREFAULT");
	long npre = CM_PREFAULT_DEFAULT;
	const char *secret = NULL;
	enum log_level level = LOG_LEVEL_INFO;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "a:d:hk:l:L:m:p:s:", opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'a': {
			char host[128], port[16];
			if (net_split_hostport(optarg, host, sizeof(host), port,
			    sizeof(port)) < 0 || *host == '\0' ||
			    atoi(port) <= 0 || atoi(port) > 65535 ||
			    strlen(optarg) >= sizeof(cm.addr)) {
				fprintf(stderr, "mpiv cm: bad --advertise "
				    "\"%s\" (HOST:PORT)\n", optarg);
				return 2;
			}
			advertise = optarg;
			break;
		}
		case 'd':
			cm.dispatcher = optarg;
			break;
		case 'h':
			cm_usage(stdout);
			return 0;
		case 'k':
			secret = optarg;
			break;
		case 'l':
			listen_addr = optarg;
			break;
		case 'L':
			if (log_parse_level(optarg, &level) < 0) {
				fprintf(stderr, "mpiv cm: bad log level "
				    "\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'm':
			maxmem = optarg;
			break;
		case 'p':
			prefault = optarg;
			break;
		case 's':
			spin = optarg;
			break;
		DAEMON_CONN_OPT_CASES:
			daemon_conn_opt(ch, optarg, &co);
			break;
		case 0x103:
			full = optarg;
			break;
		case 0x104:
			spill = optarg;
			break;
		case 0x105:
			store = optarg;
			break;
		case 0x106:
			store_sync = optarg;
			break;
		case 0x107:
			files = optarg;
			break;
		case 0x108:
			files_journal = optarg;
			break;
		default:
			cm_usage(stderr);
			return 2;
		}
	}
	if (maxmem == NULL || *maxmem == '\0')
		cm.max_memory = cm_memcap_default();
	else if (daemon_parse_bytes(maxmem, &cm.max_memory) < 0) {
		fprintf(stderr, "mpiv cm: bad --max-memory \"%s\"\n", maxmem);
		return 2;
	}
	if (full != NULL && daemon_parse_long("cm", "log-full-timeout", full,
	    1, 86400, &full_s) < 0)
		return 2;
	cm.log_full_timeout = (double)full_s;
	if (spill == NULL || *spill == '\0')
		spill = "/var/tmp";
	cm.spill_dir = strcmp(spill, "off") == 0 || strcmp(spill, "none") == 0 ?
	    NULL : spill;
	if (store_sync != NULL && *store_sync != '\0' &&
	    strcmp(store_sync, "write") != 0 && strcmp(store_sync, "fsync") != 0) {
		fprintf(stderr, "mpiv cm: bad --store-sync \"%s\" (write or "
		    "fsync)\n", store_sync);
		return 2;
	}
	cm.store_fsync = store_sync != NULL && strcmp(store_sync, "fsync") == 0;
	cm.store_dir = store != NULL && *store != '\0' ? store : NULL;
	if (files == NULL || *files == '\0' || strcmp(files, "off") == 0)
		cm.files_root = NULL;
	else if (strcmp(files, "any") == 0)
		cm.files_root = "/";
	else if (*files != '/') {
		fprintf(stderr, "mpiv cm: bad --files \"%s\" (off, any or an "
		    "absolute directory)\n", files);
		return 2;
	} else
		cm.files_root = files;
	cm.files_journal = files_journal != NULL && *files_journal != '\0' ?
	    files_journal : NULL;
	if (spin != NULL && daemon_parse_long("cm", "spin", spin, 0, 1000000,
	    &cm.spin_us) < 0)
		return 2;
	if (prefault != NULL && daemon_parse_long("cm", "prefault", prefault,
	    0, CM_PREFAULT_MAX, &npre) < 0)
		return 2;
	if (daemon_conn_limits("cm", &co, &lim) < 0)
		return 2;
	if ((cm.ncpu = sysconf(_SC_NPROCESSORS_ONLN)) < 1)
		cm.ncpu = 1;
	if (optind != argc) {
		cm_usage(stderr);
		return 2;
	}
	log_init("cm", level);
	signal(SIGPIPE, SIG_IGN);
	if (daemon_auth_load("cm", secret, false, &cm.keys) < 0)
		return 1;
	if (cm.store_dir != NULL && cm_store_lock(cm.store_dir) < 0)
		return 1;
	cm.as.enabled = cm.keys.enabled;
	cm.as.key = session_auth_key;
	cm.as.arg = &cm;
	cm.as.ring = &cm.keys;
	if ((cm.as.gate = conn_gate_new("cm", &lim)) == NULL) {
		log_errorx("cm out of memory");
		return 1;
	}

	if (daemon_listen("cm", listen_addr, cm.bound, sizeof(cm.bound),
	    &cm.lfd, &cm.loop) < 0)
		return 1;
	snprintf(cm.addr, sizeof(cm.addr), "%s",
	    advertise != NULL ? advertise : cm.bound);
	if (cm.store_dir != NULL) {
		int n = store_recover(&cm);

		srvfault_point("cm-recovered");
		store_hook(&cm);
		log_info("cm store dir=%s sync=%s recovered_jobs=%d",
		    cm.store_dir, cm.store_fsync ? "fsync" : "write", n);
	}
	if (pbuf_prefault((int)npre) < 0) {
		log_warn("cm no prefault helper thread (big payloads fault "
		    "their memory in as they arrive)");
		npre = 0;
	}
	if (cm.spill_dir != NULL && access(cm.spill_dir, W_OK | X_OK) < 0) {
		log_warn("cm --spill-dir %s unusable: logs stay in memory",
		    cm.spill_dir);
		cm.spill_dir = NULL;
	}
	log_info("cm listening addr=%s advertised=%s max_memory=%llu "
	    "log_full_timeout=%ld spill_dir=%s spin_us=%ld "
	    "prefault=%ld max_conns=%ld max_unauth=%ld max_unauth_per_host=%ld",
	    cm.bound, cm.addr, (unsigned long long)cm.max_memory, full_s,
	    cm.spill_dir != NULL ? cm.spill_dir : "off", cm.spin_us,
	    npre,
	    lim.max_conns, lim.max_unauth, lim.max_unauth_per_host);

	ev_io_init(&cm.accept_w, cm_on_accept, cm.lfd, EV_READ);
	cm.accept_w.data = &cm;
	ev_io_start(cm.loop, &cm.accept_w);
	ev_signal_init(&cm.sigint_w, cm_on_signal, SIGINT);
	cm.sigint_w.data = &cm;
	ev_signal_start(cm.loop, &cm.sigint_w);
	ev_signal_init(&cm.sigterm_w, cm_on_signal, SIGTERM);
	cm.sigterm_w.data = &cm;
	ev_signal_start(cm.loop, &cm.sigterm_w);
	/* SIGHUP: the secret file again (a rotated one). */
	daemon_reload_start(cm.loop, &reload, "cm", secret, false, &cm.keys);
	ev_timer_init(&cm.redial_w, cm_on_redial, CM_REDIAL_SECONDS, 0.);
	cm.redial_w.data = &cm;
	if (cm.dispatcher != NULL)
		cm_dial_dispatcher(&cm);

	cm_run(&cm);

	job_free_all(&cm);
	ev_loop_destroy(cm.loop);
	conn_gate_free(cm.as.gate);
	log_info("cm stopped prefault_used=%lu", pbuf_prefault_used());
	return 0;
}
