/*
 * seal: the encryption of an mpiv connection once its handshake is done
 * (docs/CONTRACTS.md, "Encryption"), on libsodium.
 *
 * Key exchange. The server's Challenge carries an ephemeral X25519 public
 * key and the ciphers it can run; the dialler's Hello carries its own
 * ephemeral public key and the cipher it picked. Both proofs of the
 * handshake (runtime/auth.h) cover both public keys and the cipher, so a
 * man in the middle can neither swap a key nor downgrade the cipher. The
 * session keys are
 *
 *   K = BLAKE2b-512(key = the handshake key (S, K_node, K_rank, K_pair),
 *                   "mpiv-seal-v1" || X25519(own secret, peer public)
 *                   || client pub || server pub || nonce_s || nonce_c
 *                   || u32 cipher)
 *   client -> server: K[0..32), server -> client: K[32..64)
 *
 * so reading a recorded session needs both the long-term secret and an
 * ephemeral secret that was wiped after the handshake (forward secrecy),
 * and a party without the long-term secret cannot compute K at all.
 *
 * Records. After its last plaintext handshake frame (client: the Hello;
 * server: the HelloReply) each direction is a sequence of records
 *
 *   u32 big-endian plaintext length n (1..SEAL_REC_MAX)
 *   AEAD(key of the direction, nonce = 4 zero bytes || u64 BE counter,
 *        ad = the 4 length bytes, plaintext n bytes) -> n + 16 bytes
 *
 * with the counter starting at 0 and incremented per record in each
 * direction: a record dropped, replayed, reordered, cut or altered fails
 * to open, and the connection ends (EBADMSG). Frames (runtime/frame.h)
 * are the plaintext; record boundaries need not match frame boundaries.
 *
 * Ciphers: AES-256-GCM where the CPU has AES-NI and PCLMUL on both ends
 * (libsodium's only AES-GCM), else ChaCha20-Poly1305 (IETF).
 *
 * The read/write wrappers behave like read(2) and writev(2) on the
 * connection's descriptor, blocking or not, so every transport swaps its
 * syscalls for them once the session is on.
 */
#ifndef MPIV_SEAL_H
#define MPIV_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SEAL_PUB_LEN	32u
#define SEAL_KEY_LEN	32u
#define SEAL_TAG_LEN	16u
#define SEAL_HDR_LEN	4u
#define SEAL_REC_MAX	(64u * 1024u)	/* plaintext bytes of one record */
#define SEAL_REC_LEN(n)	(SEAL_HDR_LEN + (n) + SEAL_TAG_LEN)
/* AES-256-GCM records of at least this many plaintext bytes are sealed
   and opened by OpenSSL (2-3x libsodium's speed on large records here),
   smaller ones by libsodium (less set-up per record); the bytes on the
   wire are the same either way. */
#define SEAL_EVP_MIN	512u

/* Challenge.ciphers is a bit mask of 1u << cipher; Hello.cipher one. */
enum seal_cipher {
	SEAL_NONE = 0,			/* plaintext (--insecure-plaintext) */
	SEAL_AES256GCM = 1,
	SEAL_CHACHA20POLY1305 = 2,
};

/* Once per process before anything else here; 0, or -1 (no libsodium). */
int seal_init(void);
/* The ciphers this machine runs, as a Challenge.ciphers mask. */
uint32_t seal_ciphers(void);
/* The client's pick among a server's mask: the fastest both run, or
   SEAL_NONE when they share none. */
enum seal_cipher seal_pick(uint32_t server_mask);
const char *seal_cipher_name(enum seal_cipher c);

/*
 * --insecure-plaintext (benchmarks only): this process offers and picks
 * no cipher. Set by the daemons' and `mpiv run`'s flag, or by the
 * environment (SEAL_ENV_PLAINTEXT=1).
 */
#define SEAL_ENV_PLAINTEXT	"MPIV_INSECURE_PLAINTEXT"
void seal_set_plaintext(bool on);
bool seal_plaintext(void);
#define SEAL_ERR_PLAIN_PEER "encryption required; the peer is an old " \
	"build or runs --insecure-plaintext"
#define SEAL_ERR_PLAIN_SERVER "encryption required; the server is an " \
	"old build or runs --insecure-plaintext (give --insecure-plaintext " \
	"here too to talk to it)"

/* An ephemeral key pair, made per connection, wiped when the keys are. */
struct seal_kx {
	uint8_t pub[SEAL_PUB_LEN];
	uint8_t sec[SEAL_KEY_LEN];
};
int seal_kx_new(struct seal_kx *kx);
void seal_kx_wipe(struct seal_kx *kx);

struct seal_dir {
	enum seal_cipher cipher;
	uint8_t key[SEAL_KEY_LEN];
	uint64_t ctr;
	/* AES-256-GCM's expanded key (seal_start makes it; NULL: the
	   record functions expand the key per record) */
	void *aes;
	/* OpenSSL's AES-256-GCM context of this direction (EVP_CIPHER_CTX,
	   keyed once): records of SEAL_EVP_MIN bytes and more */
	void *evp;
};

/*
 * One connection's session: keys, the ciphertext read but not yet
 * opened and the plaintext opened but not yet taken (in), the
 * ciphertext sealed but not yet written (out).
 */
struct seal {
	bool on;
	struct seal_dir tx, rx;
	uint8_t *in;			/* ciphertext read, not yet opened */
	size_t in_off, in_len, in_cap;	/* unopened: in[in_off, in_len) */
	uint8_t *plain;			/* opened, not yet taken */
	size_t plain_off, plain_len, plain_cap;
	uint8_t *out;			/* sealed, not yet written */
	size_t out_off, out_len, out_cap;
};

/*
 * Derives both directions' keys (the formula above) and turns s on.
 * key/keylen: the handshake key (keylen 0: a connection without a
 * secret, which is encrypted but not authenticated). is_client: we
 * dialled. 0, or -1 (a degenerate peer key: refuse the connection).
 * kx is wiped either way.
 */
int seal_start(struct seal *s, bool is_client, enum seal_cipher c,
    const void *key, size_t keylen, struct seal_kx *kx,
    const uint8_t peer_pub[SEAL_PUB_LEN],
    const uint8_t client_pub[SEAL_PUB_LEN],
    const uint8_t server_pub[SEAL_PUB_LEN],
    const uint8_t *nonce_s, size_t nonce_s_len,
    const uint8_t *nonce_c, size_t nonce_c_len);
/* Wipes the keys and frees the buffers; s is off after. */
void seal_end(struct seal *s);

/*
 * Bytes read from the descriptor before the session started that belong
 * to it (a transport that reads ahead past the last plaintext handshake
 * frame): taken as ciphertext, ahead of anything read later. 0 or -1.
 */
int seal_feed(struct seal *s, const void *ct, size_t n);

/*
 * Like read(2): plaintext into buf, at most n bytes, from what is opened
 * already, else after reading and opening one record (reading as much
 * of it as the descriptor has). >0 bytes; 0 at the peer's end of stream
 * on a record boundary; -1 with errno: EAGAIN (non-blocking, a record is
 * not complete yet), EBADMSG (a record failed to open, or the stream
 * ended inside one: the connection must end), or read(2)'s own.
 */
ssize_t seal_read(struct seal *s, int fd, void *buf, size_t n);
/* Plaintext is waiting in s (seal_read answers without the descriptor):
   poll/epoll will not say so, the caller must drain it first. */
bool seal_readable(const struct seal *s);

/*
 * Like writev(2): seals up to all of iov (records of at most
 * SEAL_REC_MAX) and writes. Returns the plaintext bytes taken, which are
 * then sealed and the caller's buffers free to reuse, even when part of
 * their ciphertext still waits in s (seal_pending); -1 with errno EAGAIN
 * when earlier ciphertext could not be written yet and nothing was taken,
 * or writev(2)'s own error.
 */
ssize_t seal_writev(struct seal *s, int fd, const struct iovec *iov,
    int iovcnt);
/* Ciphertext sealed but not written: the caller must keep the
   descriptor's write watcher on (or call seal_flush) until it is 0. */
size_t seal_pending(const struct seal *s);
/* Writes what is pending: 0 when all of it is out, -1 with errno
   (EAGAIN: try again when writable). */
int seal_flush(struct seal *s, int fd);

/* One record, for tests and the fuzzers: seals n (1..SEAL_REC_MAX)
   plaintext bytes into out (SEAL_REC_LEN(n) bytes); opens a whole record
   into plain (at least its length) and returns the plaintext length, or
   -1 when it does not open. */
size_t seal_record(struct seal_dir *d, const void *plain, size_t n,
    uint8_t *out);
ssize_t seal_open_record(struct seal_dir *d, const uint8_t *rec,
    size_t len, uint8_t *plain);

#endif /* MPIV_SEAL_H */
