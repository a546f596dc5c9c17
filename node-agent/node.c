/*
 * node.c: `mpiv node`, the node agent: options, then the split into the
 * privileged helper and the unprivileged agent (helper.h), then the
 * agent's dispatcher link. It dials the dispatcher (nothing ever
 * connects to a node), registers its slots, heartbeats every second, and
 * hands what the dispatcher says to the ranks (node_task.c), shipped
 * programs (node_bin.c) and checkpoints (node_ckpt.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "conn.h"
#include "daemon.h"
#include "seal.h"
#include "dial.h"
#include "log.h"
#include "net.h"
#include "pidns.h"
#include "proc.h"
#include "version.h"
#include "node.h"
#include "node_priv.h"

static void node_dial(struct node *n);

static void
node_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv node [-h] --dispatcher HOST:PORT [--slots N] "
	    "[--name NAME]\n"
	    "                 [--log-level error|warn|info|debug]\n"
	    "  --dispatcher HOST:PORT  the dispatcher to register with\n"
	    "  --slots N               ranks this node runs at once "
	    "(default: number of CPUs)\n"
	    "  --name NAME             node name (default: host name)\n"
	    "  --heartbeat-interval S  seconds between heartbeats "
	    "(default 1)\n"
	    "  --cache-dir DIR         shipped programs (default "
	    "/var/cache/mpiv as root,\n"
	    "                          else ~/.cache/mpiv)\n"
	    "  --log-level LEVEL       default info (MPIV_LOG overrides)\n"
	    "  --secret-file FILE      node key (mpiv secret node-key) or "
	    "cluster secret\n"
	    "                          (env MPIV_SECRET_FILE)\n"
	    DAEMON_INSECURE_USAGE
	    "  --no-listen             behind a firewall or NAT: ranks elsewhere "
	    "cannot\n"
	    "                          connect to ours (jobs relay through "
	    "CMs)\n"
	    "  --user USER             account the agent and its ranks run "
	    "as when started\n"
	    "                          as root (default nobody; root: no "
	    "separation)\n");
}

/*
 * Whether ranks run in PID namespaces of their own, said once: without,
 * a rank's pid changes with every incarnation, and a program that
 * depends on it fails with "replay diverged" when re-executed.
 */
static void
node_pidns_init(struct node *n)
{
	char why[256];

	n->pidns = pidns_available(why, sizeof(why));
	if (n->pidns)
		log_info("node pid namespaces ok: %s", why);
	else
		log_warnx("node ranks run in the node's own pid namespace (%s): "
		    "each incarnation of a rank gets another pid", why);
}

/* ---------------- dispatcher link ---------------- */

/*
 * NodeWelcome: our identity for this registration, and how long the
 * dispatcher waits for our heartbeats before it declares us dead: a
 * dispatcher silent that long has done so (or is gone), so we then give
 * up the link ourselves (node_on_silence).
 */
static void
node_welcome(struct node *n, const Mpiv__NodeWelcome *w)
{
	if (w->was_dead)
		log_warnx("node the dispatcher had declared us dead "
		    "previous=%s reason=\"%s\"; our ranks of then were "
		    "killed, we join as a fresh node", n->node_id,
		    w->dead_reason);
	snprintf(n->node_id, sizeof(n->node_id), "%s", w->node_id);
	if (w->heartbeat_timeout > 0 && w->heartbeat_timeout < 1e6) {
		n->silence_w.repeat = w->heartbeat_timeout;
		ev_timer_again(n->loop, &n->silence_w);
		/* Three heartbeats per timeout at least, or a node that is
		   merely slow gets declared dead over and over. */
		if (n->hb_w.repeat > w->heartbeat_timeout / 3) {
			log_warnx("node heartbeat interval %g s is too long for "
			    "the dispatcher's %g s timeout: using %g s",
			    n->hb_w.repeat, w->heartbeat_timeout,
			    w->heartbeat_timeout / 3);
			n->hb_w.repeat = w->heartbeat_timeout / 3;
			ev_timer_again(n->loop, &n->hb_w);
		}
	}
	log_info("node welcome node=%s heartbeat_timeout=%g", n->node_id,
	    w->heartbeat_timeout);
}

/*
 * Nothing from the dispatcher for its heartbeat timeout (it echoes each
 * heartbeat): partitioned or gone, it has declared us dead and relaunched
 * our ranks elsewhere. Ours are stale: node_on_close kills them, and we
 * register again as a fresh node once it answers.
 */
static void
node_on_silence(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct node *n = w->data;

	ev_timer_stop(loop, w);
	if (n->c == NULL || conn_is_closing(n->c))
		return;
	log_warnx("node dispatcher=%s silent for %g s: we are presumed dead",
	    n->dispatcher, w->repeat);
	conn_close(n->c, "dispatcher silent", false);
}

static void
node_on_frame(struct conn *c, const struct frame_hdr *h, ProtobufCMessage *m,
    uint8_t *payload)
{
	struct node *n = conn_udata(c);

	ev_timer_again(n->loop, &n->silence_w);	/* the dispatcher lives */
	if (h->type == MPIV__MSG_TYPE__MSG_BINARY_DATA)
		node_bin_data(n, (Mpiv__BinaryData *)m, payload,
		    h->payload_len);
	free(payload);
	switch (h->type) {
	case MPIV__MSG_TYPE__MSG_HELLO_REPLY: {
		Mpiv__HelloReply *hr = (Mpiv__HelloReply *)m;
		if (!hr->ok) {
			log_errorx("node dispatcher=%s refused us: %s",
			    n->dispatcher, hr->error);
			n->exit_code = 1;
			n->stopping = true;
			conn_close(c, "refused", false);
		}
		return;
	}
	case MPIV__MSG_TYPE__MSG_LAUNCH:
		node_launch(n, (Mpiv__Launch *)m);
		return;
	case MPIV__MSG_TYPE__MSG_KILL:
		node_kill(n, (Mpiv__Kill *)m);
		return;
	case MPIV__MSG_TYPE__MSG_CKPT_REQUEST:
		node_ckpt_request(n, (Mpiv__CkptRequest *)m);
		return;
	case MPIV__MSG_TYPE__MSG_OUTPUT_SYNCED:
		node_output_synced(n, (Mpiv__OutputSync *)m);
		return;
	case MPIV__MSG_TYPE__MSG_ERROR:
		log_warnx("node dispatcher error text=\"%s\"",
		    ((Mpiv__Error *)m)->text);
		return;
	case MPIV__MSG_TYPE__MSG_NODE_WELCOME:
		node_welcome(n, (Mpiv__NodeWelcome *)m);
		return;
	case MPIV__MSG_TYPE__MSG_NODE_KILL:
		/* Fault injection: die as a crashed machine would. */
		log_warnx("node killed by the dispatcher reason=\"%s\"; "
		    "SIGKILL to every rank and to the agent",
		    ((Mpiv__NodeKill *)m)->reason);
		node_kill_all(n, false);
		(void)kill(getpid(), SIGKILL);
		return;
	case MPIV__MSG_TYPE__MSG_HEARTBEAT:
		return;		/* the echo: silence_w was pushed back */
	case MPIV__MSG_TYPE__MSG_BINARY_DATA:
		return;		/* taken above, before its payload went */
	case MPIV__MSG_TYPE__MSG_BINARY_END:
		node_bin_end(n, (Mpiv__BinaryEnd *)m);
		return;
	default:
		log_debug("node ignoring %s from the dispatcher",
		    frame_type_name(h->type));
		return;
	}
}

static void
node_stop(struct node *n)
{
	n->stopping = true;
	node_kill_all(n, true);
	node_ckpt_stop(n);
	node_restore_stop(n);
	ev_timer_stop(n->loop, &n->hb_w);
	ev_timer_stop(n->loop, &n->silence_w);
	ev_timer_stop(n->loop, &n->resume_w);
	ev_signal_stop(n->loop, &n->sigint_w);
	ev_signal_stop(n->loop, &n->sigterm_w);
	ev_io_stop(n->loop, &n->link_w);
	if (n->dialing != NULL) {
		dial_cancel(n->dialing);
		n->dialing = NULL;
	}
	if (n->c != NULL)
		conn_close(n->c, "node agent stopping", false);
}

static void
node_on_close(struct conn *c, const char *reason)
{
	struct node *n = conn_udata(c);

	n->c = NULL;
	if (n->stopping) {
		node_stop(n);
		return;
	}
	ev_timer_stop(n->loop, &n->silence_w);
	node_bin_drop_all(n);
	log_warnx("node lost dispatcher=%s reason=\"%s\"; killing ranks, "
	    "redialling", n->dispatcher, reason);
	node_kill_all(n, false);
	node_restore_stop(n);
	n->dial_warned = false;
}

static const struct conn_ops node_conn_ops = {
	.on_frame = node_on_frame,
	.on_close = node_on_close,
};

/* The dial of node_dial ended: register, or wait for the next
   heartbeat tick to try again. */
static void
node_on_dialled(void *arg, int fd, int err)
{
	struct node *n = arg;
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__NodeRegister nr = MPIV__NODE_REGISTER__INIT;

	n->dialing = NULL;
	if (fd < 0) {
		if (!n->dial_warned)
			log_warnx("node cannot reach dispatcher=%s (%s), "
			    "retrying", n->dispatcher, strerror(err));
		n->dial_warned = true;
		return;
	}
	if (n->stopping) {
		close(fd);
		return;
	}
	if ((n->c = conn_new(n->loop, fd, &node_conn_ops, n)) == NULL) {
		close(fd);
		return;
	}
	conn_auth_client(n->c, n->keys.enabled ? &n->keys.node : NULL);
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_NODE;
	h.rank = -1;
	h.name = n->name;
	nr.name = n->name;
	nr.slots = n->slots;
	nr.criu = n->criu;
	nr.no_listen = n->no_listen;
	nr.previous_id = n->node_id;
	nr.version = (char *)MPIV_VERSION;
	ev_timer_again(n->loop, &n->silence_w);
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_HELLO, &h.base, NULL, 0);
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_NODE_REGISTER, &nr.base,
	    NULL, 0);
	log_info("node registered dispatcher=%s name=%s slots=%d criu=%d",
	    n->dispatcher, n->name, n->slots, n->criu);
}

/* Dials the dispatcher without waiting for it (the loop keeps serving
   the ranks meanwhile); one dial at a time. */
static void
node_dial(struct node *n)
{
	if (n->dialing != NULL || n->c != NULL)
		return;
	n->dialing = dial_start(n->loop, n->dispatcher,
	    NODE_DIAL_TIMEOUT_MS / 1000., node_on_dialled, n);
}

static void
node_on_heartbeat(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct node *n = w->data;
	Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;

	if (n->c == NULL) {
		node_dial(n);
		return;
	}
	hb.seq = ++n->hb_seq;
	(void)conn_send(n->c, MPIV__MSG_TYPE__MSG_HEARTBEAT, &hb.base, NULL, 0);
}

static void
node_on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct node *n = w->data;

	log_info("node stopping signal=%d", w->signum);
	node_stop(n);
}

/* SIGHUP: the secret file again (runtime/daemon.h). */
static struct daemon_reload node_reload;

void
node_keys_reload(struct node *n, int fd)
{
	(void)daemon_auth_reload(&node_reload, fd);
}

int
node_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "cache-dir", required_argument, NULL, 'c' },
		{ "heartbeat-interval", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "insecure-plaintext", no_argument, NULL, DAEMON_OPT_INSECURE },
		{ "log-level", required_argument, NULL, 'L' },
		{ "name", required_argument, NULL, 'N' },
		{ "no-listen", no_argument, NULL, 'l' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ "slots", required_argument, NULL, 's' },
		{ "user", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	struct node n = { .slots = 0, .hb_interval = NODE_HB_INTERVAL };
	const char *secret = NULL, *user = NULL;
	char why[256];
	int link_fd;
	enum log_level level = LOG_LEVEL_INFO;
	char *end;
	long v;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:d:hH:k:lL:N:s:u:", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			n.dispatcher = optarg;
			break;
		case 'c':
			if (*optarg == '\0' || strlen(optarg) > PATH_MAX - 128) {
				fprintf(stderr, "mpiv node: bad --cache-dir "
				    "\"%s\"\n", optarg);
				return 2;
			}
			snprintf(n.cache_dir, sizeof(n.cache_dir), "%s", optarg);
			break;
		case 'H':
			n.hb_interval = strtod(optarg, &end);
			if (*end != '\0' || !(n.hb_interval >= 0.01) ||
			    n.hb_interval > 3600) {
				fprintf(stderr, "mpiv node: bad "
				    "--heartbeat-interval \"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'h':
			node_usage(stdout);
			return 0;
		case 'L':
			if (log_parse_level(optarg, &level) < 0) {
				fprintf(stderr, "mpiv node: bad log level "
				    "\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'k':
			secret = optarg;
			break;
		case DAEMON_OPT_INSECURE:
			seal_set_plaintext(true);
			break;
		case 'N':
			snprintf(n.name, sizeof(n.name), "%s", optarg);
			break;
		case 's':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > 65536) {
				fprintf(stderr, "mpiv node: bad --slots "
				    "\"%s\"\n", optarg);
				return 2;
			}
			n.slots = (int)v;
			break;
		case 'u':
			user = optarg;
			break;
		case 'l':
			n.no_listen = true;
			break;
		default:
			node_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || n.dispatcher == NULL) {
		node_usage(stderr);
		return 2;
	}
	if (n.cache_dir[0] == '\0')
		node_bin_default_dir(n.cache_dir, sizeof(n.cache_dir));
	if (n.slots == 0 && (n.slots = (int)sysconf(_SC_NPROCESSORS_ONLN)) < 1)
		n.slots = 1;
	if (n.name[0] == '\0' && gethostname(n.name, sizeof(n.name) - 1) < 0)
		snprintf(n.name, sizeof(n.name), "node");
	log_init("node", level);
	signal(SIGPIPE, SIG_IGN);
	/* The cluster secret or, better on a volunteer machine, the node key
	   derived from it (mpiv secret node-key). */
	if (daemon_auth_load("node", secret, true, &n.keys) < 0)
		return 1;
	if (helper_conf_user(&n.priv, user, why, sizeof(why)) < 0) {
		log_errorx("node %s", why);
		return 2;
	}
	/* What needs root is probed, and made ready, before the split. */
	node_ckpt_init(&n);
	node_pidns_init(&n);
	if (node_bin_prepare(&n) < 0)
		return 1;
	n.priv.secret_path = secret;
	n.priv.criu = n.criu;
	n.priv.pidns = n.pidns;
	if (helper_start(&n.priv, &link_fd) < 0) {
		log_warn("node cannot start its privileged helper");
		return 1;
	}
	/* From here on: the agent, as n.priv.user. */
	if (n.priv.drop)
		log_info("node agent runs as user=%s uid=%d, ranks too; the "
		    "privileged helper stays root", n.priv.user,
		    (int)n.priv.uid);

	/* ev_child needs the default loop. */
	if ((n.loop = ev_default_loop(EVFLAG_AUTO)) == NULL) {
		log_errorx("node cannot create an event loop");
		return 1;
	}
	ev_timer_init(&n.hb_w, node_on_heartbeat, n.hb_interval,
	    n.hb_interval);
	n.hb_w.data = &n;
	ev_init(&n.silence_w, node_on_silence);
	n.silence_w.repeat = NODE_SILENCE_DEFAULT;
	n.silence_w.data = &n;
	ev_timer_start(n.loop, &n.hb_w);
	ev_timer_init(&n.resume_w, task_on_resume, 0.05, 0.05);
	n.resume_w.data = &n;
	ev_signal_init(&n.sigint_w, node_on_signal, SIGINT);
	n.sigint_w.data = &n;
	ev_signal_start(n.loop, &n.sigint_w);
	ev_signal_init(&n.sigterm_w, node_on_signal, SIGTERM);
	n.sigterm_w.data = &n;
	ev_signal_start(n.loop, &n.sigterm_w);
	/* SIGHUP: the secret file again (a rotated one). */
	daemon_reload_start(n.loop, &node_reload, "node", secret, true,
	    &n.keys);
	node_link_start(&n, link_fd);
	node_dial(&n);

	ev_run(n.loop, 0);

	node_kill_all(&n, true);
	node_ckpt_stop(&n);
	node_restore_stop(&n);
	ev_loop_destroy(n.loop);
	log_info("node stopped");
	return n.exit_code;
}
