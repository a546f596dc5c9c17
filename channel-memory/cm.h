/*
 * cm.h: entry point of the Channel Memory daemon, `mpiv cm ...`.
 */
#ifndef MPIV_CM_H
#define MPIV_CM_H

#include <stdint.h>

/* Runs the daemon until SIGTERM/SIGINT; returns the process exit code. */
int cm_main(int argc, char **argv);

/* BYTES with an optional K, M or G suffix, more than 0 (--max-memory). */
int cm_parse_bytes(const char *s, uint64_t *out);

#endif
