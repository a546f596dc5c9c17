/*
 * srvfault: named fault points in the servers (srvfault.c).
 */
#ifndef MPIV_SRVFAULT_H
#define MPIV_SRVFAULT_H

#include <stdbool.h>

/* Kills this process with SIGKILL when MPIV_SERVER_FAULT asks for it
   at this point (its N-th hit). */
void srvfault_point(const char *name);

#endif
