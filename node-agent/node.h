/*
 * node.h: entry point of the node agent, `mpiv node ...`.
 */
#ifndef MPIV_NODE_H
#define MPIV_NODE_H

/* Runs the agent until SIGTERM/SIGINT, or until the dispatcher has it
   killed; returns the process exit code. */
int node_main(int argc, char **argv);

#endif
