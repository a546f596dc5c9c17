/*
 * kill.c: `mpiv kill --dispatcher HOST:PORT JOB RANK [--signal N]`. A
 * short client session: Hello{ROLE_CLIENT}, Kill{job, rank, signal};
 * the dispatcher answers JobStatus{state "ok" or "error", message},
 * which is printed. Exit 0 when the signal was sent, 1 when refused or
 * unreachable, 2 on a usage error. A rank killed with SIGKILL or SIGTERM
 * is relaunched by the dispatcher (docs/REPLAY.md).
 *
 * `mpiv checkpoint --dispatcher HOST:PORT JOB [RANK]` is the same kind
 * of session with CkptRequest{job, rank or -1} (docs/CHECKPOINT.md).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "auth_client.h"
#include "frame.h"
#include "front.h"
#include "net.h"

#define KILL_TIMEOUT_MS 5000

static void
kill_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv kill --dispatcher HOST:PORT [--signal N] JOB RANK\n"
	    "  --dispatcher HOST:PORT  the dispatcher running the job "
	    "(mpiv run -v prints it;\n"
	    "                          default: env MPIV_DISPATCHER)\n"
	    "  --secret-file FILE      the cluster secret (env "
	    "MPIV_SECRET_FILE)\n"
	    "  --signal N              signal to send (default 9, SIGKILL)\n"
	    "  RANK                    a rank of the job, or \"all\"\n"
	    "A rank killed by SIGKILL or SIGTERM is restarted and replayed; "
	    "other signals\nend the job like a crash.\n");
}

/* The session of the one client connection a command has open
   (kill_connect); fd kill_seal_fd. */
static struct seal kill_seal;
static int kill_seal_fd = -1;

static struct seal *
kill_seal_of(int fd)
{
	return fd == kill_seal_fd ? &kill_seal : NULL;
}

/* Reads frames until one of type `want` (or an Error); 0 or -1. */
static int
kill_expect(int fd, uint16_t want, ProtobufCMessage **out, char *why,
    size_t whylen)
{
	struct frame_hdr h;
	ProtobufCMessage *m;
	uint8_t *payload;
	const char *err = NULL;

	for (;;) {
		if (frame_read_s(kill_seal_of(fd), fd, &h, &m, &payload,
		    KILL_TIMEOUT_MS, &err) < 0) {
			snprintf(why, whylen, "no answer from the dispatcher: "
			    "%s", err != NULL ? err : errno == ECONNRESET ?
			    "connection closed" : strerror(errno));
			return -1;
		}
		free(payload);
		if (h.type == want) {
			*out = m;
			return 0;
		}
		if (h.type == MPIV__MSG_TYPE__MSG_ERROR) {
			snprintf(why, whylen, "dispatcher error: %s",
			    ((Mpiv__Error *)m)->text);
			frame_free_meta(m);
			return -1;
		}
		frame_free_meta(m);
	}
}

/*
 * Opens a client session with the dispatcher: dial, Hello{ROLE_CLIENT},
 * HelloReply. The socket, or -1 once the reason was printed. Shared by
 * every short client command (kill, checkpoint, kill-node, status).
 */
/* --secret-file of the running command (NULL: $MPIV_SECRET_FILE). */
static const char *kill_secret;

void
kill_secret_file(const char *path)
{
	kill_secret = path;
}

int
kill_connect(const char *cmd, const char *disp)
{
	Mpiv__Hello hello = MPIV__HELLO__INIT;
	Mpiv__HelloReply *hr;
	struct auth_keys keys;
	char why[600], name[32], path[4096];
	int fd;

	signal(SIGPIPE, SIG_IGN);
	if (auth_load_cluster(&keys, kill_secret, why, sizeof(why)) < 0) {
		fprintf(stderr, "mpiv %s: %s\n", cmd, why);
		return -1;
	}
	if (!keys.enabled && auth_find_embedded(disp, path, sizeof(path)) == 0 &&
	    auth_load_cluster(&keys, path, why, sizeof(why)) < 0) {
		fprintf(stderr, "mpiv %s: %s\n", cmd, why);
		return -1;
	}
	if ((fd = net_dial(disp, KILL_TIMEOUT_MS)) < 0) {
		fprintf(stderr, "mpiv %s: cannot reach the dispatcher at %s: "
		    "%s\n", cmd, disp, strerror(errno));
		return -1;
	}
	snprintf(name, sizeof(name), "mpiv %s", cmd);
	hello.version = FRAME_VERSION;
	hello.role = MPIV__ROLE__ROLE_CLIENT;
	hello.rank = -1;
	hello.name = name;
	seal_end(&kill_seal);
	kill_seal_fd = -1;
	if (auth_client_hello(fd, keys.enabled ? &keys.secret : NULL, &hello,
	    &kill_seal, KILL_TIMEOUT_MS, &hr, why, sizeof(why)) < 0) {
		auth_wipe(&keys, sizeof(keys));
		fprintf(stderr, "mpiv %s: dispatcher %s: %s\n", cmd, disp, why);
		close(fd);
		return -1;
	}
	auth_wipe(&keys, sizeof(keys));
	if (!hr->ok) {
		fprintf(stderr, "mpiv %s: dispatcher %s refused us: %s\n", cmd,
		    disp, hr->error);
		frame_free_meta(&hr->base);
		seal_end(&kill_seal);
		close(fd);
		return -1;
	}
	frame_free_meta(&hr->base);
	kill_seal_fd = fd;
	auth_client_trace(name, disp, kill_seal.on ? kill_seal.tx.cipher :
	    SEAL_NONE);
	return fd;
}

/*
 * Sends req on a client session and waits for a frame of type want; the
 * message, or NULL once the reason was printed.
 */
ProtobufCMessage *
kill_request(const char *cmd, int fd, uint16_t type,
    const ProtobufCMessage *req, uint16_t want)
{
	ProtobufCMessage *m;
	char why[400];

	if (frame_write_s(kill_seal_of(fd), fd, type, req, NULL, 0,
	    KILL_TIMEOUT_MS) < 0) {
		fprintf(stderr, "mpiv %s: cannot talk to the dispatcher: %s\n",
		    cmd, strerror(errno));
		return NULL;
	}
	if (kill_expect(fd, want, &m, why, sizeof(why)) < 0) {
		fprintf(stderr, "mpiv %s: %s\n", cmd, why);
		return NULL;
	}
	return m;
}

/*
 * One request to the dispatcher answered by JobStatus{ok|error,
 * message}, printed. Exit code.
 */
static int
kill_session(const char *cmd, const char *disp, uint16_t type,
    const ProtobufCMessage *req)
{
	Mpiv__JobStatus *st;
	ProtobufCMessage *m;
	int fd, rc;

	if ((fd = kill_connect(cmd, disp)) < 0)
		return 1;
	if ((m = kill_request(cmd, fd, type, req,
	    MPIV__MSG_TYPE__MSG_JOB_STATUS)) == NULL) {
		close(fd);
		return 1;
	}
	st = (Mpiv__JobStatus *)m;
	if (strcmp(st->state, "ok") == 0) {
		printf("mpiv %s: %s\n", cmd, st->message);
		rc = 0;
	} else {
		fprintf(stderr, "mpiv %s: %s\n", cmd, st->message);
		rc = 1;
	}
	frame_free_meta(m);
	close(fd);
	return rc;
}

int
kill_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ "signal", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	Mpiv__Kill k = MPIV__KILL__INIT;
	const char *disp = getenv("MPIV_DISPATCHER");
	char *end;
	long v;
	int ch;

	k.signal = SIGKILL;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+d:hk:s:", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			disp = optarg;
			break;
		case 'k':
			kill_secret_file(optarg);
			break;
		case 'h':
			kill_usage(stdout);
			return 0;
		case 's':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    v < 1 || v >= NSIG) {
				fprintf(stderr, "mpiv kill: bad --signal "
				    "\"%s\"\n", optarg);
				return 2;
			}
			k.signal = (int)v;
			break;
		default:
			kill_usage(stderr);
			return 2;
		}
	}
	if (disp == NULL || *disp == '\0' || argc - optind != 2) {
		fprintf(stderr, "mpiv kill: %s\n", disp == NULL || *disp == '\0' ?
		    "missing --dispatcher HOST:PORT" : "want JOB RANK");
		kill_usage(stderr);
		return 2;
	}
	k.job_id = argv[optind];
	if (strcmp(argv[optind + 1], "all") == 0) {
		k.rank = -1;
	} else {
		errno = 0;
		v = strtol(argv[optind + 1], &end, 10);
		if (errno != 0 || end == argv[optind + 1] || *end != '\0' ||
		    v < 0 || v > 0x7fffffffL) {
			fprintf(stderr, "mpiv kill: bad rank \"%s\" (a number "
			    "or \"all\")\n", argv[optind + 1]);
			return 2;
		}
		k.rank = (int)v;
	}
	return kill_session("kill", disp, MPIV__MSG_TYPE__MSG_KILL, &k.base);
}

static void
checkpoint_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv checkpoint --dispatcher HOST:PORT JOB [RANK]\n"
	    "  --dispatcher HOST:PORT  the dispatcher running the job "
	    "(mpiv run -v prints it;\n"
	    "                          default: env MPIV_DISPATCHER)\n"
	    "  --secret-file FILE      the cluster secret (env "
	    "MPIV_SECRET_FILE)\n"
	    "  RANK                    a rank of the job, or \"all\" "
	    "(default)\n"
	    "Asks the rank(s) to take a checkpoint at their next MPI call; "
	    "mpiv run --report\ncounts the checkpoints that became durable.\n");
}

/*
 * The options of a short client without options of its own
 * (--dispatcher, default env MPIV_DISPATCHER; --secret-file; --help),
 * then min..max arguments (want names them in the error). -1 with *disp
 * set and optind at the first argument, or the exit code: 0 after
 * --help, 2 on a usage error (said, with the usage).
 */
static int
kill_client_args(int argc, char **argv, const char *cmd, const char *want,
    int min, int max, void (*usage)(FILE *), const char **disp)
{
	static const struct option opts[] = {
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*disp = getenv("MPIV_DISPATCHER");
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+d:hk:", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			*disp = optarg;
			break;
		case 'k':
			kill_secret_file(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (*disp == NULL || **disp == '\0' || argc - optind < min ||
	    argc - optind > max) {
		fprintf(stderr, "mpiv %s: %s\n", cmd, *disp == NULL ||
		    **disp == '\0' ? "missing --dispatcher HOST:PORT" : want);
		usage(stderr);
		return 2;
	}
	return -1;
}

int
checkpoint_main(int argc, char **argv)
{
	Mpiv__CkptRequest cr = MPIV__CKPT_REQUEST__INIT;
	const char *disp;
	char *end;
	long v;
	int rc;

	if ((rc = kill_client_args(argc, argv, "checkpoint", "want JOB [RANK]",
	    1, 2, checkpoint_usage, &disp)) >= 0)
		return rc;
	cr.job_id = argv[optind];
	cr.rank = -1;
	if (argc - optind == 2 && strcmp(argv[optind + 1], "all") != 0) {
		errno = 0;
		v = strtol(argv[optind + 1], &end, 10);
		if (errno != 0 || end == argv[optind + 1] || *end != '\0' ||
		    v < 0 || v > 0x7fffffffL) {
			fprintf(stderr, "mpiv checkpoint: bad rank \"%s\" (a "
			    "number or \"all\")\n", argv[optind + 1]);
			return 2;
		}
		cr.rank = (int)v;
	}
	return kill_session("checkpoint", disp,
	    MPIV__MSG_TYPE__MSG_CKPT_REQUEST, &cr.base);
}

static void
kill_node_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv kill-node --dispatcher HOST:PORT NODE\n"
	    "  --dispatcher HOST:PORT  the dispatcher (default: env MPIV_DISPATCHER)\n"
	    "  --secret-file FILE      the cluster secret (env "
	    "MPIV_SECRET_FILE)\n"
	    "  NODE                    a node's name or node id (mpiv status "
	    "lists them)\n"
	    "The node agent SIGKILLs its ranks and itself, as a crashed "
	    "machine would; the\ndispatcher relaunches those ranks on other "
	    "nodes.\n");
}

int
kill_node_main(int argc, char **argv)
{
	Mpiv__NodeKill nk = MPIV__NODE_KILL__INIT;
	const char *disp;
	int rc;

	if ((rc = kill_client_args(argc, argv, "kill-node", "want NODE", 1, 1,
	    kill_node_usage, &disp)) >= 0)
		return rc;
	if (*argv[optind] == '\0') {
		fprintf(stderr, "mpiv kill-node: want NODE\n");
		kill_node_usage(stderr);
		return 2;
	}
	nk.name = argv[optind];
	nk.reason = (char *)"mpiv kill-node";
	return kill_session("kill-node", disp, MPIV__MSG_TYPE__MSG_NODE_KILL,
	    &nk.base);
}
