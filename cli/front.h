/*
 * front.h: entry points of the `mpiv` subcommands of the front end
 * (`mpiv run`, `kill`, `checkpoint`, `kill-node`, `status`, `secret`,
 * `sweep`).
 * Each returns the process exit code. The daemons' entry points are in
 * their own folders' headers (cm.h, cs.h, dispatcher.h, node.h).
 */
#ifndef MPIV_FRONT_H
#define MPIV_FRONT_H

int run_main(int argc, char **argv);
int kill_main(int argc, char **argv);
int checkpoint_main(int argc, char **argv);
int kill_node_main(int argc, char **argv);
int status_main(int argc, char **argv);
int secret_main(int argc, char **argv);
int sweep_main(int argc, char **argv);

/* run.c: a duration as mpiv run's options take it ("2s", "500ms",
   "1.5", "1m") in milliseconds, 1 .. 2^32-1; 0 or -1. */
#include <stdint.h>
int run_parse_ms(const char *s, uint32_t *out);

/* kill.c: short client sessions with the dispatcher (kill, checkpoint,
   kill-node, status). Both print the reason of a failure themselves. */
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>
int kill_connect(const char *cmd, const char *disp);
/* --secret-file FILE of the command (else $MPIV_SECRET_FILE). */
void kill_secret_file(const char *path);
ProtobufCMessage *kill_request(const char *cmd, int fd, uint16_t type,
    const ProtobufCMessage *req, uint16_t want);

#endif
