/*
 * front.h: entry points of the `mpiv` subcommands that live in runtime/
 * (the node agent, `mpiv run`, `mpiv kill`, `mpiv checkpoint`). Each returns the process exit code.
 */
#ifndef MPIV_FRONT_H
#define MPIV_FRONT_H

#define MPIV_VERSION "0.1.0"

int run_main(int argc, char **argv);
int node_main(int argc, char **argv);
int kill_main(int argc, char **argv);
int checkpoint_main(int argc, char **argv);

#endif
