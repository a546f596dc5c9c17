/*
 * main.c: the `mpiv` binary. Dispatches the first word to a subcommand;
 * each subcommand parses its own options (argv[0] is the subcommand).
 */
#include <stdio.h>
#include <string.h>

#include "../channel-memory/cm.h"
#include "../checkpoint-server/cs.h"
#include "../dispatcher/dispatcher.h"
#include "../node-agent/node.h"
#include "frame.h"
#include "front.h"
#include "seal.h"
#include "timeline.h"
#include "version.h"

static void
main_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv COMMAND [options]\n"
	    "\n"
	    "  run -n N [options] PROG [ARGS...]   run an MPI job (see mpiv run -h)\n"
	    "  dispatcher --listen HOST:PORT       run the job dispatcher\n"
	    "  cm --dispatcher HOST:PORT           run a Channel Memory server\n"
	    "  node --dispatcher HOST:PORT         run a node agent\n"
	    "  cs --store DIR [--listen HOST:PORT] run a checkpoint server\n"
	    "  kill --dispatcher HOST:PORT JOB RANK  kill a rank of a running "
	    "job\n"
	    "  checkpoint --dispatcher HOST:PORT JOB [RANK]  checkpoint a job's "
	    "ranks now\n"
	    "  kill-node --dispatcher HOST:PORT NODE  kill a node agent and "
	    "its ranks\n"
	    "  status --dispatcher HOST:PORT [JOB]  nodes, services, jobs and "
	    "their ranks\n"
	    "  secret new FILE | node-key ...      make a cluster secret, "
	    "derive a node key\n"
	    "  report REPORT.json --html FILE      the timeline page of a "
	    "saved run\n"
	    "  sweep [options] -- RUN-ARGS...      fault-injection "
	    "experiments over a grid\n"
	    "                                      of MTBFs and checkpoint "
	    "intervals\n"
	    "  version                             print the version\n"
	    "  help                                this text\n");
}

int
main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		main_usage(stderr);
		return 2;
	}
	cmd = argv[1];
	/* libsodium once, before any connection (runtime/seal.h) */
	if (seal_init() < 0) {
		fprintf(stderr, "mpiv: libsodium does not initialise\n");
		return 1;
	}
	if (strcmp(cmd, "run") == 0)
		return run_main(argc - 1, argv + 1);
	if (strcmp(cmd, "cm") == 0)
		return cm_main(argc - 1, argv + 1);
	if (strcmp(cmd, "dispatcher") == 0)
		return dispatcher_main(argc - 1, argv + 1);
	if (strcmp(cmd, "node") == 0)
		return node_main(argc - 1, argv + 1);
	if (strcmp(cmd, "kill") == 0)
		return kill_main(argc - 1, argv + 1);
	if (strcmp(cmd, "cs") == 0)
		return cs_main(argc - 1, argv + 1);
	if (strcmp(cmd, "checkpoint") == 0)
		return checkpoint_main(argc - 1, argv + 1);
	if (strcmp(cmd, "kill-node") == 0)
		return kill_node_main(argc - 1, argv + 1);
	if (strcmp(cmd, "status") == 0)
		return status_main(argc - 1, argv + 1);
	if (strcmp(cmd, "secret") == 0)
		return secret_main(argc - 1, argv + 1);
	if (strcmp(cmd, "sweep") == 0)
		return sweep_main(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return report_main(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("mpiv %s (protocol %u)\n", MPIV_VERSION, FRAME_VERSION);
		return 0;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "-h") == 0 ||
	    strcmp(cmd, "--help") == 0) {
		main_usage(stdout);
		return 0;
	}
	fprintf(stderr, "mpiv: unknown command \"%s\"\n", cmd);
	main_usage(stderr);
	return 2;
}
