/*
 * daemon: what every mpiv server does before its loop runs.
 */
#ifndef MPIV_DAEMON_H
#define MPIV_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

/*
 * Listens on addr (port 0 picks one), creates the event loop, and prints
 * "listening on HOST:PORT" on stdout (flushed: launchers parse it). `who`
 * names the daemon in logs. 0, or -1 with the reason logged and nothing
 * left open.
 */
int daemon_listen(const char *who, const char *addr, char *bound,
    size_t boundlen, int *lfd, struct ev_loop **loop);

struct auth_keys;
/*
 * Loads the keys of `mpiv WHO` from --secret-file (path) or
 * $MPIV_SECRET_FILE. A node key file is taken only with node_key_ok (node
 * agents). With no secret at all, logs the one warning that connections
 * are not authenticated; under --insecure-plaintext, the one that they
 * are not encrypted. Fails without libsodium. 0, or -1 once "mpiv WHO: reason" is on stderr.
 */
int daemon_auth_load(const char *who, const char *path, bool node_key_ok,
    struct auth_keys *k);

/*
 * SIGHUP re-reads the secret file daemon_auth_load read (path as given
 * to it; NULL: $MPIV_SECRET_FILE) into *k, in place: from then on peers
 * prove, and the daemon dials with, the keys it now holds; connections
 * up stay as they are. Logs what it now accepts, by fingerprint. A file
 * that does not load, or a daemon started without a secret, keeps *k as
 * it was, with a warning. r lives as long as the loop; the watcher does
 * not keep the loop running.
 */
struct daemon_reload {
	ev_signal w;
	const char *who, *path;
	bool node_key_ok;
	struct auth_keys *keys;
};
void daemon_reload_start(struct ev_loop *loop, struct daemon_reload *r,
    const char *who, const char *path, bool node_key_ok,
    struct auth_keys *k);
/* What the SIGHUP handler does; fd >= 0: the file opened by someone
   else (a node agent's privileged helper), closed here. 0 or -1. */
int daemon_auth_reload(struct daemon_reload *r, int fd);

/*
 * A byte count: digits and an optional K, M, G or T (binary: 64K is
 * 65536), above 0 and within 64 bits; no sign. 0, or -1 (the caller
 * names the option).
 */
int daemon_parse_bytes(const char *s, uint64_t *out);

/*
 * A whole number from lo to hi for option --name of `mpiv WHO`. 0, or -1
 * once "mpiv WHO: bad --NAME "S" (LO to HI)" is on stderr (exit 2).
 */
int daemon_parse_long(const char *who, const char *name, const char *s,
    long lo, long hi, long *out);

/*
 * The connection caps of `mpiv WHO` (runtime/conn.h, conn_gate): the
 * values of --max-conns, --max-unauth, --max-unauth-per-host (NULL: not
 * given), else $MPIV_MAX_CONNS, $MPIV_MAX_UNAUTH,
 * $MPIV_MAX_UNAUTH_PER_HOST, else the CONN_DEFAULT_* values. 0, or -1
 * once the bad value's option is named on stderr (exit 2).
 */
struct conn_limits;

/* The three options as given (NULL: not given), and their getopt_long
   entries (their values: DAEMON_CONN_OPT_FIRST ..). */
struct daemon_conn_opts {
	const char *max_conns, *max_unauth, *per_host;
};
#define DAEMON_CONN_OPT_FIRST	0x100
#define DAEMON_CONN_LONGOPTS \
	{ "max-conns", required_argument, NULL, 0x100 }, \
	{ "max-unauth", required_argument, NULL, 0x101 }, \
	{ "max-unauth-per-host", required_argument, NULL, 0x102 }, \
	{ "insecure-plaintext", no_argument, NULL, DAEMON_OPT_INSECURE }
#define DAEMON_CONN_OPT_CASES	case 0x100: case 0x101: case 0x102: \
	case DAEMON_OPT_INSECURE
/* --insecure-plaintext: this process's connections are not encrypted
   (runtime/seal.h, seal_set_plaintext); benchmarks only. */
#define DAEMON_OPT_INSECURE	0x1f0
#define DAEMON_INSECURE_USAGE \
	"  --insecure-plaintext    do not encrypt connections (benchmarks " \
	"only;\n" \
	"                          env MPIV_INSECURE_PLAINTEXT=1)\n"

/* Keeps arg of option ch (one of DAEMON_CONN_LONGOPTS) in o
   (--insecure-plaintext: seal_set_plaintext). */
void daemon_conn_opt(int ch, const char *arg, struct daemon_conn_opts *o);
int daemon_conn_limits(const char *who, const struct daemon_conn_opts *o,
    struct conn_limits *l);

/* The lines of the three options for a daemon's usage text. */
#define DAEMON_CONN_LIMITS_USAGE \
	"  --max-conns N           connections at once (default 4096; " \
	"env MPIV_MAX_CONNS)\n" \
	"  --max-unauth N          of them not yet authenticated (default " \
	"1024;\n" \
	"                          env MPIV_MAX_UNAUTH)\n" \
	"  --max-unauth-per-host N of them from one IP address (default " \
	"256;\n" \
	"                          env MPIV_MAX_UNAUTH_PER_HOST)\n" \
	DAEMON_INSECURE_USAGE

#endif
