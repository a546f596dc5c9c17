/*
 * srvfault: named fault points in the servers (srvfault.c).
 */
#ifndef MPIV_SRVFAULT_H
#define MPIV_SRVFAULT_H

#include <stdbool.h>

/* Kills this process with SIGKILL when MPIV_SERVER_FAULT asks for it
   at this point (its N-th hit). */
void srvfault_point(const char *name);

/* Whether MPIV_SERVER_FAULT asks for this point now (counted as a hit):
   for points where the process does more than die. */
bool srvfault_due(const char *name);

#endif
