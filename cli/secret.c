/*
 * secret.c: `mpiv secret new FILE` writes a fresh cluster secret (32
 * random bytes as hex, mode 0600); `mpiv secret node-key --secret-file
 * S_FILE NODEKEY_FILE` derives the node key K_node from it, the only key
 * a volunteer node agent needs (docs/CONTRACTS.md, "Authentication").
 * Neither replaces an existing file.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "front.h"

static void
secret_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv secret new FILE\n"
	    "       mpiv secret node-key [--secret-file S_FILE] NODEKEY_FILE\n"
	    "  new       write a fresh cluster secret to FILE (mode 0600); "
	    "give it to\n"
	    "            the dispatcher, CMs, CSs and clients with "
	    "--secret-file\n"
	    "  node-key  derive the node key from the cluster secret "
	    "(S_FILE, else\n"
	    "            $MPIV_SECRET_FILE): node agents take it with "
	    "--secret-file and\n"
	    "            cannot act as a server or client with it\n");
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
		{ "secret-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct auth_keys keys;
	const char *sfile = NULL;
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
	rc = auth_node_key_file(&keys, argv[optind], err, sizeof(err));
	auth_wipe(&keys, sizeof(keys));
	if (rc < 0) {
		fprintf(stderr, "mpiv secret: %s\n", err);
		return 1;
	}
	printf("mpiv secret: wrote the node key to %s\n", argv[optind]);
	return 0;
}

int
secret_main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "new") == 0)
		return secret_new(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "node-key") == 0)
		return secret_node_key(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0)) {
		secret_usage(stdout);
		return 0;
	}
	secret_usage(stderr);
	return 2;
}
