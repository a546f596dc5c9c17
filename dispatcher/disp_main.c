/*
 * disp_main.c: `mpiv dispatcher`. Parses options, listens, accepts
 * connections (each becomes a dpeer), runs one libev loop until
 * SIGTERM/SIGINT, then closes everything and frees every job.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dispatcher.h"
#include "disp_priv.h"
#include "daemon.h"
#include "log.h"
#include "net.h"

static void
disp_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv dispatcher [-h] [--listen HOST:PORT] "
	    "[--heartbeat-timeout S]\n"
	    "                       [--log-level error|warn|info|debug]\n"
	    "  --listen HOST:PORT       address to serve (port 0 picks one; "
	    "default 0.0.0.0:7070)\n"
	    "  --heartbeat-timeout S    a node silent this long is lost "
	    "(default 10)\n"
	    "  --stall-after S          a CM or CS silent to a probe this long "
	    "is told as\n"
	    "                           stalled to its jobs' clients (default 5; "
	    "env\n"
	    "                           MPIV_STALL_AFTER)\n"
	    "  --warn-interval S        at most one begin line per warning kind "
	    "and job\n"
	    "                           this often (default 10; env "
	    "MPIV_WARN_INTERVAL)\n"
	    "  --state-dir DIR          keep the job counter here across "
	    "restarts (running\n"
	    "                           jobs do not survive a restart)\n"
	    "  --log-level LEVEL        default info (MPIV_LOG overrides)\n"
	    "  --secret-file FILE       cluster secret: authenticate every "
	    "connection\n"
	    "                           (env MPIV_SECRET_FILE; "
	    "mpiv secret new FILE)\n"
	    DAEMON_CONN_LIMITS_USAGE
	    "Prints \"listening on HOST:PORT\" on stdout once ready.\n");
}

static void
disp_on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct disp *d = w->data;
	int fd;

	for (;;) {
		fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("dispatcher accept");
			return;
		}
		if (d->as.gate != NULL && conn_gate_admit(d->as.gate, fd) < 0)
			continue;	/* over a connection cap: closed */
		(void)dpeer_new(d, fd);
	}
}

/* Stops accepting and closes every connection; ev_run then returns. */
static void
disp_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct disp *d = w->data;

	if (d->stopping)
		return;
	log_info("dispatcher stopping signal=%d", w->signum);
	d->stopping = true;
	ev_io_stop(loop, &d->accept_w);
	ev_timer_stop(loop, &d->bp_w);
	ev_timer_stop(loop, &d->warn_w);
	ev_signal_stop(loop, &d->sigint_w);
	ev_signal_stop(loop, &d->sigterm_w);
	close(d->lfd);
	d->lfd = -1;
	djob_free_all(d);
	dpeer_close_all(d);
}

int
dispatcher_main(int argc, char **argv)
{
	static struct daemon_reload reload;
	static const struct option opts[] = {
		{ "heartbeat-timeout", required_argument, NULL, 't' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "listen", required_argument, NULL, 'l' },
		{ "log-level", required_argument, NULL, 'L' },
		{ "secret-file", required_argument, NULL, 'k' },
		DAEMON_CONN_LONGOPTS,
		{ "stall-after", required_argument, NULL, 0x103 },
		{ "warn-interval", required_argument, NULL, 0x104 },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon_conn_opts co = { 0 };
	struct conn_limits lim;
	struct disp d = { .lfd = -1, .hb_timeout = DISP_HB_TIMEOUT,
	    .next_job = 1 };
	const char *listen_addr = "0.0.0.0:7070";
	const char *secret = NULL;
	enum log_level level = LOG_LEVEL_INFO;
	char *end;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "hk:l:L:s:t:", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			disp_usage(stdout);
			return 0;
		case 'k':
			secret = optarg;
			break;
		case 'l':
			listen_addr = optarg;
			break;
		case 'L':
			if (log_parse_level(optarg, &level) < 0) {
				fprintf(stderr, "mpiv dispatcher: bad log level "
				    "\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 's':
			d.state_dir = optarg;
			break;
		case 't':
			d.hb_timeout = strtod(optarg, &end);
			if (*end != '\0' || !(d.hb_timeout > 0)) {
				fprintf(stderr, "mpiv dispatcher: bad "
				    "--heartbeat-timeout \"%s\"\n", optarg);
				return 2;
			}
			break;
		DAEMON_CONN_OPT_CASES:
			daemon_conn_opt(ch, optarg, &co);
			break;
		case 0x103:
		case 0x104: {
			double v = strtod(optarg, &end);
			if (*end != '\0' || !(v > 0) || v >= 1e6) {
				fprintf(stderr, "mpiv dispatcher: bad --%s "
				    "\"%s\" (want seconds > 0)\n", ch == 0x103 ?
				    "stall-after" : "warn-interval", optarg);
				return 2;
			}
			if (ch == 0x103)
				d.stall_after = v;
			else
				d.warn_interval = v;
			break;
		}
		default:
			disp_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		disp_usage(stderr);
		return 2;
	}
	if (daemon_conn_limits("dispatcher", &co, &lim) < 0)
		return 2;
	log_init("dispatcher", level);
	signal(SIGPIPE, SIG_IGN);
	if (daemon_auth_load("dispatcher", secret, false, &d.keys) < 0)
		return 1;
	/* Node agents prove K_node, services and clients the secret. */
	d.as.enabled = d.keys.enabled;
	d.as.key = auth_key_service_nodes;
	d.as.arg = &d.keys;
	d.as.ring = &d.keys;
	if ((d.as.gate = conn_gate_new("dispatcher", &lim)) == NULL) {
		log_errorx("dispatcher out of memory");
		return 1;
	}

	if (dstate_load(&d) < 0)
		return 1;
	{
		uint8_t r[16];

		if (auth_random(r, sizeof(r)) < 0) {
			log_errorx("dispatcher cannot read random bytes");
			return 1;
		}
		auth_hex(r, sizeof(r), d.instance);
	}
	if (daemon_listen("dispatcher", listen_addr, d.bound, sizeof(d.bound),
	    &d.lfd, &d.loop) < 0)
		return 1;
	log_info("dispatcher listening addr=%s max_conns=%ld max_unauth=%ld "
	    "max_unauth_per_host=%ld", d.bound, lim.max_conns, lim.max_unauth,
	    lim.max_unauth_per_host);
	d.t_start = ev_now(d.loop);

	ev_io_init(&d.accept_w, disp_on_accept, d.lfd, EV_READ);
	d.accept_w.data = &d;
	ev_io_start(d.loop, &d.accept_w);
	ev_signal_init(&d.sigint_w, disp_on_signal, SIGINT);
	d.sigint_w.data = &d;
	ev_signal_start(d.loop, &d.sigint_w);
	ev_signal_init(&d.sigterm_w, disp_on_signal, SIGTERM);
	d.sigterm_w.data = &d;
	ev_signal_start(d.loop, &d.sigterm_w);
	/* SIGHUP: the secret file again (a rotated one). */
	daemon_reload_start(d.loop, &reload, "dispatcher", secret, false, &d.keys);

	ev_init(&d.bp_w, dpeer_on_backpressure);
	d.bp_w.repeat = 0.05;
	d.bp_w.data = &d;
	dwarn_start(&d);

	ev_run(d.loop, 0);

	djob_free_all(&d);
	ev_loop_destroy(d.loop);
	conn_gate_free(d.as.gate);
	log_info("dispatcher stopped");
	return 0;
}
