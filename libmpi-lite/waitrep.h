/*
 * waitrep.h: a blocked rank tells the dispatcher what it waits for
 * (waitrep.c; docs/CONTRACTS.md, "Deadlocks").
 */
#ifndef MPIV_WAITREP_H
#define MPIV_WAITREP_H

#include "mpi.h"

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
/* The non-blocking call about to report its outcome to
   mpiv_waitrep_poll (through mpiv_tp_poll_done), for the words of a long
   run of them: `call` over reqs[0..n), or an MPI_Iprobe for (source,
   tag, comm) as the program gave them. mpiv_waitrep_polled() forgets
   it. */
void	mpiv_waitrep_polling(const char *call,
	    struct mpiv_request *const *reqs, int n);
void	mpiv_waitrep_probing(int source, int tag, MPI_Comm comm);
void	mpiv_waitrep_polled(void);
/* A message frame went out or came in. */
void	mpiv_waitrep_moved(void);

#endif
