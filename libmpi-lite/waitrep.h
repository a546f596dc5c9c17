/*
 * waitrep.h: a blocked rank tells the dispatcher what it waits for
 * (waitrep.c; docs/CONTRACTS.md, "Deadlocks").
 */
#ifndef MPIV_WAITREP_H
#define MPIV_WAITREP_H

struct mpiv_request;

/* A blocking wait begins: in `call` (NULL: the request says), for
   reqs[0..n) (NULL: for nothing a request describes). Nests. */
void	mpiv_waitrep_begin(const char *call,
	    struct mpiv_request *const *reqs, int n);
/* It ended. */
void	mpiv_waitrep_end(void);
/* From the progress loop: tells the wait when due; the ms until the
   next is due (the longest the loop may sleep), -1 when not waiting. */
int	mpiv_waitrep_tick(void);
/* From a fruitless non-blocking call: the run of them began at
   run_start_us (mono µs), -1: no run (it found something). */
void	mpiv_waitrep_poll(long run_start_us);
/* A message frame went out or came in. */
void	mpiv_waitrep_moved(void);

#endif
