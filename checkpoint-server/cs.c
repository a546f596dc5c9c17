/*
 * cs.c: `mpiv cs`, the checkpoint server. Parses options, opens and
 * repairs the store, listens, optionally registers with a dispatcher,
 * runs one libev loop until SIGTERM/SIGINT, then closes every connection
 * (uploads in progress lose their temp files) and frees everything.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cs.h"
#include "cs_priv.h"
#include "daemon.h"
#include "log.h"
#include "net.h"

#define CS_ACCEPT_RETRY 0.5	/* seconds, after running out of fds */

static void
cs_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv cs [-h] --store DIR [--listen HOST:PORT] [--keep N]\n"
	    "               [--max-image BYTES] [--dispatcher HOST:PORT]\n"
	    "               [--advertise HOST:PORT]\n"
	    "               [--log-level error|warn|info|debug]\n"
	    "  --store DIR             where images are kept (created if "
	    "missing, 0700)\n"
	    "  --listen HOST:PORT      address to serve (port 0 picks one; "
	    "default 0.0.0.0:0)\n"
	    "  --advertise HOST:PORT   address nodes are told to dial "
	    "(default: the bound one;\n"
	    "                          for a NAT or a relay in front of "
	    "this CS)\n"
	    "  --keep N                images kept per rank (default %u)\n"
	    "  --max-image BYTES       largest image accepted (suffixes K, M, "
	    "G; default 4G)\n"
	    "  --dispatcher HOST:PORT  register with this dispatcher\n"
	    "  --log-level LEVEL       default info\n"
	    "  --secret-file FILE      cluster secret: authenticate every "
	    "connection\n"
	    "                          (env MPIV_SECRET_FILE)\n"
	    DAEMON_CONN_LIMITS_USAGE,
	    CS_DEFAULT_KEEP);
}

static void
cs_on_accept_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct cs *cs = w->data;

	if (!cs->stopping)
		ev_io_start(loop, &cs->accept_w);
}

static void
cs_on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct cs *cs = w->data;
	int fd;

	for (;;) {
		fd = accept4(cs->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			/* Over a connection cap: closed by the gate. */
			if (cs->as.gate == NULL ||
			    conn_gate_admit(cs->as.gate, fd) == 0)
				(void)cs_peer_new(cs, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			/* Level-triggered: pause, or the loop would spin. */
			log_warn("cs accept, pausing %.1f s", CS_ACCEPT_RETRY);
			ev_io_stop(loop, &cs->accept_w);
			ev_timer_start(loop, &cs->accept_retry_w);
		} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
			log_warn("cs accept");
		}
		return;
	}
}

static void
cs_on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct cs *cs = w->data;

	cs_peer_pump_all(cs);
	cs_notify_pump(cs);
}

/* Stops accepting and closes everything; ev_run returns once all is gone. */
static void
cs_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct cs *cs = w->data;

	if (cs->stopping)
		return;
	log_info("cs stopping signal=%d", w->signum);
	cs->stopping = true;
	ev_io_stop(loop, &cs->accept_w);
	ev_timer_stop(loop, &cs->accept_retry_w);
	ev_signal_stop(loop, &cs->sigint_w);
	ev_signal_stop(loop, &cs->sigterm_w);
	ev_prepare_stop(loop, &cs->pump_w);
	close(cs->lfd);
	cs->lfd = -1;
	cs_disp_stop(cs);
	cs_notify_close_all(cs);
	cs_peer_kill_all(cs);
}

/* Options into cs and lim; 0, or the exit code of a usage error (or -h). */
static int
cs_parse_args(struct cs *cs, int argc, char **argv, const char **listen_addr,
    enum log_level *level, bool *help, struct conn_limits *lim)
{
	static const struct option opts[] = {
		{ "advertise", required_argument, NULL, 'a' },
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "keep", required_argument, NULL, 'k' },
		{ "listen", required_argument, NULL, 'l' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "max-image", required_argument, NULL, 'm' },
		{ "secret-file", required_argument, NULL, 'S' },
		{ "store", required_argument, NULL, 's' },
		DAEMON_CONN_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct daemon_conn_opts co = { 0 };
	uint64_t v;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "a:d:hk:l:L:m:S:s:", opts,
	    NULL)) != -1) {
		switch (ch) {
		case 'a': {
			char host[128], port[16];
			if (net_split_hostport(optarg, host, sizeof(host), port,
			    sizeof(port)) < 0 || *host == '\0' ||
			    atoi(port) <= 0 || atoi(port) > 65535 ||
			    strlen(optarg) >= sizeof(cs->addr)) {
				fprintf(stderr, "mpiv cs: bad --advertise "
				    "\"%s\" (HOST:PORT)\n", optarg);
				return 2;
			}
			cs->advertise = optarg;
			break;
		}
		case 'd':
			cs->dispatcher = optarg;
			break;
		case 'h':
			*help = true;
			return 0;
		case 'k':
			if (daemon_parse_bytes(optarg, &v) < 0 || v > 1000000) {
				fprintf(stderr, "mpiv cs: bad --keep \"%s\"\n",
				    optarg);
				return 2;
			}
			cs->keep = (unsigned)v;
			break;
		case 'l':
			*listen_addr = optarg;
			break;
		case 'L':
			if (log_parse_level(optarg, level) < 0) {
				fprintf(stderr, "mpiv cs: bad log level "
				    "\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (daemon_parse_bytes(optarg, &cs->max_image) < 0) {
				fprintf(stderr, "mpiv cs: bad --max-image "
				    "\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'S':
			cs->secret_file = optarg;
			break;
		case 's':
			cs->store = optarg;
			break;
		DAEMON_CONN_OPT_CASES:
			daemon_conn_opt(ch, optarg, &co);
			break;
		default:
			cs_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || cs->store == NULL) {
		if (cs->store == NULL)
			fprintf(stderr, "mpiv cs: --store DIR is required\n");
		cs_usage(stderr);
		return 2;
	}
	if (daemon_conn_limits("cs", &co, lim) < 0)
		return 2;
	return 0;
}

int
cs_main(int argc, char **argv)
{
	struct cs cs = {
		.lfd = -1, .store_fd = -1, .keep = CS_DEFAULT_KEEP,
		.max_image = CS_DEFAULT_MAX_IMAGE,
		.idle_timeout = CS_IDLE_TIMEOUT,
	};
	const char *listen_addr = "0.0.0.0:0";
	enum log_level level = LOG_LEVEL_INFO;
	struct conn_limits lim;
	bool help = false;
	int rc = 1;

	if ((rc = cs_parse_args(&cs, argc, argv, &listen_addr, &level,
	    &help, &lim)) != 0 || help) {
		if (help)
			cs_usage(stdout);
		return rc;
	}
	rc = 1;
	log_init("cs", level);
	signal(SIGPIPE, SIG_IGN);
	if (daemon_auth_load("cs", cs.secret_file, false, &cs.keys) < 0)
		return 1;
	cs.as.enabled = cs.keys.enabled;
	cs.as.key = cs_grant_auth_key;
	cs.as.arg = &cs;
	if ((cs.as.gate = conn_gate_new("cs", &lim)) == NULL) {
		log_errorx("cs out of memory");
		return 1;
	}

	if (cs_store_open(&cs) < 0)
		return 1;
	cs_store_recover(&cs);
	if ((cs.chunk = malloc(CS_CHUNK)) == NULL) {
		log_errorx("cs out of memory");
		goto out_store;
	}
	if (daemon_listen("cs", listen_addr, cs.bound, sizeof(cs.bound),
	    &cs.lfd, &cs.loop) < 0)
		goto out_chunk;
	snprintf(cs.addr, sizeof(cs.addr), "%s",
	    cs.advertise != NULL ? cs.advertise : cs.bound);
	log_info("cs listening addr=%s advertised=%s store=%s keep=%u "
	    "max_image=%llu max_conns=%ld max_unauth=%ld "
	    "max_unauth_per_host=%ld", cs.bound, cs.addr, cs.store, cs.keep,
	    (unsigned long long)cs.max_image, lim.max_conns, lim.max_unauth,
	    lim.max_unauth_per_host);

	ev_io_init(&cs.accept_w, cs_on_accept, cs.lfd, EV_READ);
	cs.accept_w.data = &cs;
	ev_io_start(cs.loop, &cs.accept_w);
	ev_timer_init(&cs.accept_retry_w, cs_on_accept_retry, CS_ACCEPT_RETRY,
	    0.);
	cs.accept_retry_w.data = &cs;
	ev_signal_init(&cs.sigint_w, cs_on_signal, SIGINT);
	cs.sigint_w.data = &cs;
	ev_signal_start(cs.loop, &cs.sigint_w);
	ev_signal_init(&cs.sigterm_w, cs_on_signal, SIGTERM);
	cs.sigterm_w.data = &cs;
	ev_signal_start(cs.loop, &cs.sigterm_w);
	ev_prepare_init(&cs.pump_w, cs_on_prepare);
	cs.pump_w.data = &cs;
	ev_prepare_start(cs.loop, &cs.pump_w);
	cs_disp_start(&cs);

	ev_run(cs.loop, 0);

	ev_loop_destroy(cs.loop);
	log_info("cs stopped");
	rc = 0;
	if (cs.lfd >= 0)
		close(cs.lfd);
out_chunk:
	free(cs.chunk);
out_store:
	close(cs.store_fd);
	conn_gate_free(cs.as.gate);
	cs_grant_free(&cs);
	return rc;
}
