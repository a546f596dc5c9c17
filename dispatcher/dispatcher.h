/*
 * dispatcher.h: entry point of `mpiv dispatcher`.
 */
#ifndef MPIV_DISPATCHER_H
#define MPIV_DISPATCHER_H

/* Runs the dispatcher until SIGTERM/SIGINT; returns the exit code. */
int dispatcher_main(int argc, char **argv);

#endif
