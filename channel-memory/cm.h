/*
 * cm.h: entry point of the Channel Memory daemon, `mpiv cm ...`.
 */
#ifndef MPIV_CM_H
#define MPIV_CM_H

/* Runs the daemon until SIGTERM/SIGINT; returns the process exit code. */
int cm_main(int argc, char **argv);

#endif
