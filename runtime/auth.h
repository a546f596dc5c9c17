/*
 * auth: shared-secret authentication of every mpiv connection
 * (docs/CONTRACTS.md, "Authentication"). SHA-256 (FIPS 180-4),
 * HMAC-SHA256 (RFC 2104), nonces, constant-time comparison and wiping,
 * all libsodium's; secret files, the key derivations and the proofs of the
 * challenge-response handshake. No secret ever travels on the wire.
 *
 * Keys: the cluster secret S (services and clients), the node key
 * K_node = HMAC(S, "mpiv node key v1") (node agents: a volunteer machine
 * never holds S), and per job a random token T of which each incarnation
 * of a rank only sees its own credential K_{r,i} = HMAC(T, "rank r inc i")
 * (auth_rank_inc_key). Checkpoint images are bound to one incarnation by
 * the image key auth_image_key, derived from S by the dispatcher.
 *
 * Shared by the daemons and libmpi-lite: no libev, no logging here.
 */
#ifndef MPIV_AUTH_H
#define MPIV_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#include "mpiv.pb-c.h"

#define AUTH_VERSION	 2u	/* Challenge.version (2: proofs cover the key exchange) */
#define AUTH_HASH_LEN	 32u	/* SHA-256 output, proofs, derived keys */
#define AUTH_NONCE_LEN	 32u
#define AUTH_TOKEN_LEN	 32u	/* job token T */
#define AUTH_BLOCK_LEN	 64u	/* SHA-256 block: longest HMAC key kept as is */
#define AUTH_MIN_SECRET	 16u	/* bytes a cluster secret must have */
#define AUTH_MAX_FILE	 4096u	/* bytes of a secret file */
#define AUTH_NODE_KEY_TAG "mpiv-node-key-v1 "	/* first bytes of a node key file */
#define AUTH_ENV_SECRET	 "MPIV_SECRET_FILE"
#define AUTH_ENV_RANK	 "MPIV_RANK_KEY"	/* hex of K_{r,i}, wiped once read */

/* libsodium's states: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) */
struct auth_sha256 {
	crypto_hash_sha256_state st;
};

/* v as 4 big-endian bytes at p (hash inputs and outputs). */
static inline void
auth_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void auth_sha256_init(struct auth_sha256 *s);
void auth_sha256_update(struct auth_sha256 *s, const void *p, size_t n);
void auth_sha256_final(struct auth_sha256 *s, uint8_t out[AUTH_HASH_LEN]);
void auth_sha256(const void *p, size_t n, uint8_t out[AUTH_HASH_LEN]);

struct auth_hmac {
	crypto_auth_hmacsha256_state st;
};

void auth_hmac_init(struct auth_hmac *m, const void *key, size_t keylen);
void auth_hmac_update(struct auth_hmac *m, const void *p, size_t n);
void auth_hmac_final(struct auth_hmac *m, uint8_t out[AUTH_HASH_LEN]);
void auth_hmac_sha256(const void *key, size_t keylen, const void *p,
    size_t n, uint8_t out[AUTH_HASH_LEN]);

/* Compares in time independent of where the bytes differ. */
bool auth_equal(const void *a, const void *b, size_t n);
/* n random bytes (libsodium's randombytes). 0 or -1 (errno). */
int auth_random(void *buf, size_t n);
/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void auth_hex(const uint8_t *in, size_t n, char *out);
/* Exactly 2n hex digits into n bytes. 0 or -1. */
int auth_unhex(const char *hex, uint8_t *out, size_t n);
/* hex is a SHA-256 as auth_hex writes it: 64 lower-case hex digits (so
   it is safe as a path component, and one hash has one spelling). */
bool auth_hash_hex_ok(const char *hex);
/* Wipes key material (not optimised away). */
void auth_wipe(void *p, size_t n);

/* An HMAC key, exactly as HMAC uses it (longer keys are pre-hashed). */
struct auth_key {
	uint8_t k[AUTH_BLOCK_LEN];
	size_t len;
};

void auth_key_set(struct auth_key *k, const void *p, size_t n);

#define AUTH_MAX_KEYS	 8u	/* keys of one secret file (runtime/auth_rotate.h) */
#define AUTH_NO_DEADLINE INT64_MAX	/* auth_accept.until of a staged key */

/* A key still accepted besides the one used to dial: an older one until
   its deadline, or a staged next one (until AUTH_NO_DEADLINE). */
struct auth_accept {
	struct auth_key secret;		/* that S, when cluster */
	struct auth_key node;		/* its K_node */
	int64_t until;			/* accepted while time() < until */
};

/*
 * The keys a process holds. enabled false: no secret was given, the
 * process runs unauthenticated. cluster: it holds S (services, clients);
 * otherwise only K_node (a node agent given a node key file).
 */
struct auth_keys {
	bool enabled;
	bool cluster;
	struct auth_key secret;		/* S, when cluster */
	struct auth_key node;		/* K_node, whenever enabled */
	/* Other keys of a multi-key file, accepted from peers, never used
	   to dial (runtime/auth_rotate.h). */
	size_t naccept;
	struct auth_accept accept[AUTH_MAX_KEYS - 1];
};

/*
 * Loads keys from path, or from $MPIV_SECRET_FILE when path is NULL; with
 * neither, keys stay disabled and 0 is returned. The file must be a
 * regular file, not readable or writable by group or others, and not
 * empty. A file starting with AUTH_NODE_KEY_TAG holds K_node (hex); one
 * starting with "mpiv-secrets v" or "mpiv-node-keys v" several keys
 * (auth_parse_keys, runtime/auth_rotate.h); anything else is the cluster
 * secret S (trailing white space dropped, at least AUTH_MIN_SECRET
 * bytes). 0, or -1 with a one-line reason.
 */
int auth_load(struct auth_keys *k, const char *path, char *err,
    size_t errlen);
/* Same, and refuses a node key file (services and clients need S). */
int auth_load_cluster(struct auth_keys *k, const char *path, char *err,
    size_t errlen);

/*
 * The secret of an embedded deployment (`mpiv run` without --dispatcher)
 * of this user whose dispatcher listens on disp: the --secret-file of
 * our process listening on that loopback port (found through /proc,
 * whatever TMPDIR it ran with; a process of ours there without one means
 * none), else a temp dir ${TMPDIR:-/tmp}/mpiv-run.* holding
 * `dispatcher.addr` and `secret`; ours and mode 0600 either way.
 * So `mpiv run -v` then `mpiv kill --dispatcher ADDR` works on one
 * machine without a secret file. Fills path; 0, or -1 when there is none.
 */
int auth_find_embedded(const char *disp, char *path, size_t pathlen);

/* K_node = HMAC(S, "mpiv node key v1"). */
void auth_node_key(const struct auth_key *s, uint8_t out[AUTH_HASH_LEN]);
/* HMAC(T, "rank " + decimal rank): one key for every incarnation; no
   longer handed out (auth_rank_inc_key replaced it), kept for tests. */
void auth_rank_key(const uint8_t *token, size_t tokenlen, int32_t rank,
    uint8_t out[AUTH_HASH_LEN]);
/* HMAC(T, "pair " + lower rank + " " + higher rank): a pair key valid
   for every incarnation; no longer handed out (auth_pair_inc_key
   replaced it), kept for tests. */
void auth_pair_key(const uint8_t *token, size_t tokenlen, int32_t a,
    int32_t b, uint8_t out[AUTH_HASH_LEN]);
/*
 * The credential of incarnation inc of rank r, K_{r,i} = HMAC(T, "rank "
 * + decimal r + " inc " + decimal inc): what the dispatcher gives the
 * node that runs that incarnation (Launch.rank_key), and what the job's
 * CMs (which hold T) check a rank's Hello against, for the incarnation
 * the Hello claims. A node that ran incarnation i cannot make the key of
 * i+1; the CMs refuse an incarnation below the highest they know.
 */
void auth_rank_inc_key(const uint8_t *token, size_t tokenlen, int32_t r,
    uint32_t inc, uint8_t out[AUTH_HASH_LEN]);
/*
 * The key of a direct link between incarnation ia of rank a and ib of
 * rank b: HMAC(T, "pair " + lower rank + " inc " + its incarnation + " "
 * + higher rank + " inc " + its incarnation); the same whichever way
 * round they are named. A CM hands it out (PeerInfo.pair_key) for the
 * incarnations it knows live, so a link key dies with either end's
 * incarnation (docs/DIRECT.md).
 */
void auth_pair_inc_key(const uint8_t *token, size_t tokenlen, int32_t a,
    uint32_t ia, int32_t b, uint32_t ib, uint8_t out[AUTH_HASH_LEN]);
/*
 * The image key of incarnation inc of rank r of job: HMAC(S,
 * lp("mpiv image key v1") lp(job) u32(r) u32(inc)) (lp: 4-byte big-endian
 * length, then the bytes). The dispatcher gives it to the node that runs
 * (or restores) that incarnation (Launch.image_key); the node proves it
 * in its Hello to the checkpoint server (role node, with job, rank and
 * incarnation), which derives it from S and serves that connection only
 * the images of that rank of that job, for that incarnation while it is
 * the current one.
 */
void auth_image_key(const struct auth_key *s, const char *job, int32_t r,
    uint32_t inc, uint8_t out[AUTH_HASH_LEN]);

/*
 * Writes data to a new file of mode 0600 (refuses to replace one).
 * 0, or -1 with a reason.
 */
int auth_write_file(const char *path, const char *data, char *err,
    size_t errlen);
/* A fresh cluster secret: 32 random bytes as hex, in a new 0600 file. */
int auth_new_secret_file(const char *path, char *err, size_t errlen);
/* K_node of k (which holds S) into a new 0600 node key file. */
int auth_node_key_file(const struct auth_keys *k, const char *path,
    char *err, size_t errlen);

/*
 * Handshake proofs. The dialler proves
 *   HMAC(key, lp("mpiv-auth-v2 hello") lp(nonce_s) lp(server kx_pub)
 *        u32(server ciphers) lp(client kx_pub) u32(cipher picked)
 *        lp(nonce_c) u32(role) lp(job) u32(rank) u32(incarnation) lp(name))
 * and the server answers
 *   HMAC(key, lp("mpiv-auth-v2 reply") lp(nonce_s) lp(nonce_c)
 *        lp(client proof))
 * where lp(x) is a 4-byte big-endian length then x: no two field
 * layouts can give the same bytes, and the two labels keep a client
 * proof from passing for a server one.
 */
/* What the server's Challenge offered for encryption (runtime/seal.h):
   its ephemeral public key (kx_pub_len 0: none) and cipher mask. */
struct auth_offer {
	const uint8_t *kx_pub;
	size_t kx_pub_len;
	uint32_t ciphers;
};
/* A Challenge without encryption (kx_pub empty, no ciphers). */
extern const struct auth_offer auth_no_offer;

void auth_hello_proof(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const struct auth_offer *offer,
    const Mpiv__Hello *h, uint8_t out[AUTH_HASH_LEN]);
void auth_reply_proof(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN],
    const uint8_t nonce_c[AUTH_NONCE_LEN],
    const uint8_t client_proof[AUTH_HASH_LEN], uint8_t out[AUTH_HASH_LEN]);

/*
 * Server side: picks the key a Hello must be proven with. 0 with *key
 * set, or -1 with *why (static text) when no key can fit (e.g. an
 * unknown job). Called once per connection, with the Hello unchecked.
 */
typedef int auth_key_fn(void *arg, const Mpiv__Hello *h,
    struct auth_key *key, const char **why);

struct conn_gate;

struct auth_server {
	bool enabled;		/* false: Challenge{auth=false}, no checks */
	auth_key_fn *key;
	void *arg;
	/* Daemons: conns given to conn_auth_server count against this gate
	   (connection caps, runtime/conn.h) until they close; NULL: none. */
	struct conn_gate *gate;
	/* The keys whose accepted older ones a Hello may prove instead of
	   the current S or K_node the key function picks
	   (auth_check_hello_any); NULL: only the picked key. */
	const struct auth_keys *ring;
	/* When key derives the picked key from S (a CS's image keys): the
	   same derivation from another S (out->len 0: none for this
	   Hello), so that keys derived from ring's accepted secrets pass
	   too. NULL: no derived keys. */
	void (*derive)(void *arg, const struct auth_key *s,
	    const Mpiv__Hello *h, struct auth_key *out);
};

/*
 * The usual policy: a node agent proves K_node (if node_ok), every other
 * role S. For auth_server.key with arg = the struct auth_keys.
 */
int auth_key_service(void *arg, const Mpiv__Hello *h, struct auth_key *key,
    const char **why);
int auth_key_service_nodes(void *arg, const Mpiv__Hello *h,
    struct auth_key *key, const char **why);

/*
 * The server's check of a Hello against a Challenge nonce. Returns NULL
 * when it proves key (and fills reply_proof), else the reason to refuse.
 */
const char *auth_check_hello(const struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const struct auth_offer *offer,
    const Mpiv__Hello *h,
    uint8_t reply_proof[AUTH_HASH_LEN]);

/* Texts every side uses, so that tests and users see one wording. */
#define AUTH_ERR_FAILED	  "authentication failed (wrong secret?)"
#define AUTH_ERR_REQUIRED "authentication required: this server has a " \
	"secret (give --secret-file or set MPIV_SECRET_FILE)"
#define AUTH_ERR_NOAUTH	  "authentication: the server runs without a " \
	"secret (no --secret-file) but we have one: refusing to talk to it"
#define AUTH_ERR_IMPOSTOR "authentication: the server could not prove it " \
	"holds the secret (impostor or wrong secret?)"

/* The blocking dialler of the handshake: runtime/auth_client.h. */

#endif
