/*
 * dial: a non-blocking connect on a libev loop (dial.c).
 */
#ifndef MPIV_DIAL_H
#define MPIV_DIAL_H

#include <ev.h>

struct dial;

/* The outcome: fd >= 0 and err 0 when connected (TCP_NODELAY set), else
   fd -1 and errno err (ETIMEDOUT after the timeout). */
typedef void dial_cb(void *arg, int fd, int err);

/* Starts connecting to HOST:PORT; cb fires once, from the loop. NULL when
   out of memory (cb never fires). */
struct dial *dial_start(struct ev_loop *loop, const char *addr,
    double timeout, dial_cb *cb, void *arg);

/* Stops a dial in progress; its callback never fires. */
void dial_cancel(struct dial *d);

#endif
