/*
 * cs.h: entry point of the checkpoint server, `mpiv cs ...`.
 */
#ifndef MPIV_CS_H
#define MPIV_CS_H

/* Runs the daemon until SIGTERM/SIGINT; returns the process exit code. */
int cs_main(int argc, char **argv);

#endif
