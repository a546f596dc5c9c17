/*
 * secret.c: `mpiv secret new FILE` writes a fresh cluster secret (32
 * random bytes as hex, mode 0600); `mpiv secret node-key --secret-file
 * S_FILE NODEKEY_FILE` derives the node key K_node from it, the only key
 * a volunteer node agent needs (docs/CONTRACTS.md, "Authentication");
 * `mpiv secret rotate FILE` moves a secret file to a new secret, keeping
 * the old one accepted for a grace period, and `mpiv secret show FILE`
 * lists the keys of a file by fingerprint ("Rotating the cluster
 * secret"). Only rotate and node-key --replace replace a file.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "auth_rotate.h"
#include "front.h"

static void
secret_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv secret new FILE\n"
	    "       mpiv secret node-key [--secret-file S_FILE] [--replace] "
	    "NODEKEY_FILE\n"
	    "       mpiv secret rotate [--grace DURATION] [--stage] FILE\n"
	    "       mpiv secret show FILE\n"
	    "  new       write a fresh cluster secret to FILE (mode 0600); "
	    "give it to\n"
	    "            the dispatcher, CMs, CSs and clients with "
	    "--secret-file\n"
	    "  node-key  derive the node key from the cluster secret "
	    "(S_FILE, else\n"
	    "            $MPIV_SECRET_FILE): node agents take it with "
	    "--secret-file and\n"
	    "            cannot act as a server or client with it; every key "
	    "of S_FILE\n"
	    "            gives one; --replace overwrites NODEKEY_FILE\n"
	    "  rotate    give FILE a new current secret (the staged one, if "
	    "any) and\n"
	    "            keep the old one accepted for DURATION (default 24h; "
	    "90s, 15m,\n"
	    "            24h, 7d); --stage: add a next secret, accepted but "
	    "not used\n"
	    "            to dial until the next rotate. Then SIGHUP the "
	    "daemons\n"
	    "  show      list the keys of a secret or node key file by "
	    "fingerprint\n");
}

static int
secret_new(int argc, char **argv)
{
	char err[512];

	if (argc != 2) {
		secret_usage(stderr);
		return 2;
	}
	if (auth_new_secret_file(argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "mpiv secret: %s\n", err);
		return 1;
	}
	printf("mpiv secret: wrote a new cluster secret to %s\n", argv[1]);
	return 0;
}

static int
secret_node_key(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "replace", no_argument, NULL, 'r' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct auth_keys keys;
	const char *sfile = NULL;
	bool replace = false, several;
	char err[512];
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+hk:", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			secret_usage(stdout);
			return 0;
		case 'k':
			sfile = optarg;
			break;
		case 'r':
			replace = true;
			break;
		default:
			secret_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		secret_usage(stderr);
		return 2;
	}
	if (auth_load_cluster(&keys, sfile, err, sizeof(err)) < 0) {
		fprintf(stderr, "mpiv secret: %s\n", err);
		return 1;
	}
	if (!keys.enabled) {
		fprintf(stderr, "mpiv secret: node-key needs the cluster secret "
		    "(--secret-file S_FILE or MPIV_SECRET_FILE)\n");
		return 2;
	}
	rc = auth_node_keys_file(&keys, argv[optind], replace, err,
	    sizeof(err));
	several = keys.naccept > 0;
	auth_wipe(&keys, sizeof(keys));
	if (rc < 0) {
		fprintf(stderr, "mpiv secret: %s\n", err);
		return 1;
	}
	printf("mpiv secret: wrote the node key%s to %s\n",
	    several ? "s" : "", argv[optind]);
	return 0;
}

static int
secret_rotate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "grace", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "stage", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	char err[512], newfp[AUTH_FP_HEX + 1], oldfp[AUTH_FP_HEX + 1];
	char t[AUTH_TIME_LEN];
	int64_t grace = AUTH_DEFAULT_GRACE, now;
	bool stage = false;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+g:hs", opts, NULL)) != -1) {
		switch (ch) {
		case 'g':
			if (auth_parse_duration(optarg, &grace) < 0) {
				fprintf(stderr, "mpiv secret: bad --grace "
				    "\"%s\" (want e.g. 90s, 15m, 24h, 7d)\n",
				    optarg);
				return 2;
			}
			break;
		case 'h':
			secret_usage(stdout);
			return 0;
		case 's':
			stage = true;
			break;
		default:
			secret_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		secret_usage(stderr);
		return 2;
	}
	now = (int64_t)time(NULL);
	if (auth_rotate_file(argv[optind], now, grace, stage, newfp, oldfp,
	    err, sizeof(err)) < 0) {
		fprintf(stderr, "mpiv secret: %s\n", err);
		return 1;
	}
	if (stage) {
		printf("mpiv secret: %s: staged next secret %s (accepted, not "
		    "used to dial until the next rotate)\n", argv[optind],
		    newfp);
	} else {
		auth_format_time(now + grace, t, sizeof(t));
		printf("mpiv secret: %s: current secret %s; the previous one "
		    "%s is accepted until %s\n", argv[optind], newfp, oldfp, t);
	}
	printf("mpiv secret: copy it where it is used, derive node key files "
	    "again (mpiv secret node-key --replace), then send SIGHUP to the "
	    "daemons\n");
	return 0;
}

static int
secret_show(int argc, char **argv)
{
	static const char *const kinds[] = {
		[AUTH_E_CURRENT] = "current",
		[AUTH_E_ACCEPT] = "accepted",
		[AUTH_E_NEXT] = "next",
	};
	char buf[AUTH_MAX_FILE + 1], err[512], t[AUTH_TIME_LEN];
	char fp[AUTH_FP_HEX + 1], nfp[AUTH_FP_HEX + 1];
	struct auth_file f;
	struct auth_keys k;
	int64_t now = (int64_t)time(NULL);
	size_t n;

	if (argc != 2) {
		secret_usage(stderr);
		return 2;
	}
	if (auth_read_file(argv[1], buf, sizeof(buf), &n, err,
	    sizeof(err)) < 0 ||
	    auth_file_parse(&f, buf, n, argv[1], err, sizeof(err)) < 0 ||
	    auth_file_keys(&f, &k, argv[1], err, sizeof(err)) < 0) {
		auth_wipe(buf, sizeof(buf));
		fprintf(stderr, "mpiv secret: %s\n", err);
		return 1;
	}
	printf("%s: %s, %s\n", argv[1], f.node ? "node keys" :
	    "cluster secrets", f.version == 0 ? "one-line format" :
	    "format v1");
	for (size_t i = 0; i < f.n; i++) {
		const struct auth_key *s = i == 0 ? &k.secret :
		    &k.accept[i - 1].secret;
		const struct auth_key *nk = i == 0 ? &k.node :
		    &k.accept[i - 1].node;

		auth_fingerprint(nk, nfp);
		if (f.node)
			printf("%-8s node-key=%s", kinds[f.e[i].kind], nfp);
		else {
			auth_fingerprint(s, fp);
			printf("%-8s secret=%s node-key=%s", kinds[f.e[i].kind],
			    fp, nfp);
		}
		if (f.e[i].kind == AUTH_E_ACCEPT) {
			auth_format_time(f.e[i].until, t, sizeof(t));
			printf(" %s %s", now < f.e[i].until ? "until" :
			    "retired-at", t);
		}
		printf("\n");
	}
	auth_wipe(&k, sizeof(k));
	auth_wipe(&f, sizeof(f));
	auth_wipe(buf, sizeof(buf));
	return 0;
}

int
secret_main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "new") == 0)
		return secret_new(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "node-key") == 0)
		return secret_node_key(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "rotate") == 0)
		return secret_rotate(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return secret_show(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		secret_usage(stdout);
		return 0;
	}
	secret_usage(stderr);
	return 2;
}
