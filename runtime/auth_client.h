/*
 * auth_client: the blocking dialler's side of the connection handshake
 * (runtime/auth.h has the proofs, runtime/seal.h the encryption), for
 * tools, node agents' image transfers and ranks.
 */
#ifndef MPIV_AUTH_CLIENT_H
#define MPIV_AUTH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "seal.h"

/*
 * Waits for the Challenge, sends h with the key exchange (our ephemeral
 * key, the cipher picked from the server's offer) and, with key, its
 * proof over the whole offer (h's auth and kx fields are set and cleared
 * again; h stays the caller's), reads the HelloReply and checks the
 * server's proof, then turns s on (s must be off: zeroed or seal_end'ed):
 * every later byte of fd in both directions goes through s (frame_read_s,
 * frame_write_s, seal_read, seal_writev). Without key the connection is
 * still encrypted, not authenticated. A server offering no cipher is
 * refused unless auth_client_plain_ok(); then s stays off.
 * Returns 0 with *reply (ok or a refusal the caller reports; s is on only
 * when ok), or -1 with a one-line reason in err (I/O, timeout, or an
 * authentication failure).
 */
int auth_client_hello(int fd, const struct auth_key *key, Mpiv__Hello *h,
    struct seal *s, int timeout_ms, Mpiv__HelloReply **reply, char *err,
    size_t errlen);

/*
 * Whether this process may talk plaintext to a server (or a peer rank)
 * offering no cipher: only when it runs --insecure-plaintext itself
 * (seal_plaintext).
 */
bool auth_client_plain_ok(void);

/* The ciphers a process serving a handshake (a rank accepting a peer)
   offers: seal_ciphers(), or 0 under MPIV_INSECURE_PLAINTEXT=1. */
uint32_t auth_client_serve_ciphers(void);

/*
 * Debugging (MPIV_SEAL_DEBUG set): one line per connection whose
 * handshake ended, "mpiv-seal: WHO to PEER sealed CIPHER" or "...
 * plaintext", so that tests can count the sealed connections of a job;
 * appended to the file MPIV_SEAL_DEBUG names when it is an absolute
 * path (a rank's stderr is its program's output), else on stderr.
 */
void auth_client_trace(const char *who, const char *peer,
    enum seal_cipher c);

#define AUTH_ERR_PLAIN SEAL_ERR_PLAIN_SERVER

#endif
