/*
 * auth_rotate: moving a cluster to a new secret without stopping it
 * (docs/CONTRACTS.md, "Rotating the cluster secret"). A secret file may
 * hold several keys: the current one (to dial, and accepted), older ones
 * still accepted until a deadline, and at most one staged next one
 * (accepted, not used to dial yet):
 *
 *   mpiv-secrets v1
 *   # comment
 *   current SECRET
 *   accept-until 2026-11-28T03:30:00Z SECRET
 *   next SECRET
 *
 * SECRET is the secret's text itself (16 to 4000 printable bytes, no
 * white space), as the one-line format holds it. A node key file does
 * the same with "mpiv-node-keys v1" and 64 hex digits of K_node. A time
 * is RFC 3339 (Z or an offset; a fraction is dropped) or decimal seconds
 * since the epoch. The one-line formats (auth.h, auth_load) stay valid:
 * one current key, nothing else.
 *
 * Servers accept a Hello proven with any key of the file whose deadline
 * has not passed (auth_check_hello_any); one proven with a retired key
 * is refused with "... retired at TIME".
 *
 * Shared by the daemons and libmpi-lite: no libev, no logging here.
 */
#ifndef MPIV_AUTH_ROTATE_H
#define MPIV_AUTH_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"

#define AUTH_SECRETS_TAG   "mpiv-secrets v"
#define AUTH_NODE_KEYS_TAG "mpiv-node-keys v"
#define AUTH_FILE_VERSION  1
#define AUTH_MAX_SECRET	   4000u	/* bytes of one secret in a v1 file */
#define AUTH_FP_HEX	   16u		/* hex digits of a fingerprint */
#define AUTH_TIME_LEN	   32u		/* room for auth_format_time */
#define AUTH_DEFAULT_GRACE (24 * 3600)	/* mpiv secret rotate --grace */

enum auth_entry_kind {
	AUTH_E_CURRENT,
	AUTH_E_ACCEPT,		/* accept-until */
	AUTH_E_NEXT,
};

/* One key of a parsed file; val points into the parsed text. */
struct auth_entry {
	enum auth_entry_kind kind;
	int64_t until;		/* AUTH_E_ACCEPT; else AUTH_NO_DEADLINE */
	const char *val;	/* the secret's text, or K_node's hex */
	size_t len;
};

struct auth_file {
	bool node;		/* node keys (K_node), not cluster secrets */
	int version;		/* 0: a one-line file */
	size_t n;		/* entries, entry 0 the current one */
	struct auth_entry e[AUTH_MAX_KEYS];
};

/*
 * Parses the text of a secret file (n bytes, no NUL needed; trailing
 * white space already dropped or not) in any format. path only names the
 * file in messages. 0, or -1 with a one-line reason naming the line.
 */
int auth_file_parse(struct auth_file *f, const char *buf, size_t n,
    const char *path, char *err, size_t errlen);
/* The keys of a parsed file (k is wiped first). 0 or -1 with a reason. */
int auth_file_keys(const struct auth_file *f, struct auth_keys *k,
    const char *path, char *err, size_t errlen);
/* Both: what auth_load does with the text of a file. */
int auth_parse_keys(struct auth_keys *k, const char *buf, size_t n,
    const char *path, char *err, size_t errlen);
/*
 * f as a v1 file (whatever its version): the header, then one line per
 * entry in f's order. 0, or -1 when it does not fit in cap bytes or an
 * entry cannot be written (a secret with white space).
 */
int auth_file_text(const struct auth_file *f, char *buf, size_t cap,
    char *err, size_t errlen);

/* A secret a v1 line can hold: printable, no white space. */
bool auth_is_token(const char *p, size_t n);
/* RFC 3339 or decimal epoch seconds, exactly n bytes. 0 or -1. */
int auth_parse_time(const char *s, size_t n, int64_t *out);
/* t as RFC 3339 in UTC ("2026-11-28T03:30:00Z"). */
void auth_format_time(int64_t t, char *out, size_t outlen);
/* "90", "90s", "15m", "24h", "7d": seconds into *out. 0 or -1. */
int auth_parse_duration(const char *s, int64_t *out);

/* A short public name of a key: 16 hex digits of HMAC(key,
   "mpiv key fingerprint v1"). Tells keys apart, reveals nothing. */
void auth_fingerprint(const struct auth_key *k, char out[AUTH_FP_HEX + 1]);
/* Whether a and b are the same key (constant time in the bytes). */
bool auth_key_equal(const struct auth_key *a, const struct auth_key *b);

/*
 * The server's check of a Hello when keys rotate. *key is the key the
 * server's key function picked; when the Hello does not prove it and it
 * is as->ring's current S (or K_node, or the key as->derive makes from
 * S), the keys the ring still accepts of that kind are tried too (for a
 * derived key: derived from each accepted S). Returns NULL when a key
 * fits, with *key set to the key that did (the session goes on with it)
 * and reply_proof filled; else the reason to refuse: "authentication
 * failed: secret retired at TIME" (or "node key retired at") for a key
 * whose deadline has passed. as NULL or without a ring: auth_check_hello
 * with *key. The reason may be a static buffer, good until the next
 * call.
 */
const char *auth_check_hello_any(const struct auth_server *as,
    struct auth_key *key, const uint8_t nonce_s[AUTH_NONCE_LEN],
    const struct auth_offer *offer, const Mpiv__Hello *h,
    uint8_t reply_proof[AUTH_HASH_LEN]);

/*
 * One line saying what k dials with and accepts, by fingerprint, for a
 * daemon's log: "dialling with S 0123... ; accepting 4567... until TIME,
 * 89ab... (next)"; node keys for a node agent holding no S.
 */
void auth_keys_describe(const struct auth_keys *k, int64_t now, char *buf,
    size_t cap);

/*
 * Replaces path with data atomically: a new 0600 file beside it, synced,
 * renamed over it. 0, or -1 with a reason (path untouched).
 */
int auth_replace_file(const char *path, const char *data, char *err,
    size_t errlen);

/*
 * `mpiv secret rotate`: the cluster secret file path gets a new current
 * secret (the staged next one if there is one, else 32 fresh random
 * bytes as hex); the previous current one is accepted until now + grace.
 * The key retired longest ago is dropped when the file would hold more
 * than AUTH_MAX_KEYS. stage: adds a fresh next secret instead, current
 * unchanged. Fills the fingerprints of the new key (next or current) and
 * of the one it replaces ("" when staging). 0, or -1 with a reason.
 */
int auth_rotate_file(const char *path, int64_t now, int64_t grace,
    bool stage, char newfp[AUTH_FP_HEX + 1], char oldfp[AUTH_FP_HEX + 1],
    char *err, size_t errlen);

/*
 * The node key file of k (loaded from a cluster secret file): each key's
 * K_node with the same kind and deadline; k with one key gives the
 * one-line format. replace: path may exist and is replaced atomically,
 * else it must not. 0, or -1 with a reason.
 */
int auth_node_keys_file(const struct auth_keys *k, const char *path,
    bool replace, char *err, size_t errlen);

/* Reads a secret file as auth_load does (auth_keys.c): a private regular
   file, at most cap - 1 bytes, trailing white space dropped, NUL added. */
int auth_read_file(const char *path, char *buf, size_t cap, size_t *len,
    char *err, size_t errlen);
/* The same from fd, opened by someone else (closed here); path names it
   in messages. */
int auth_read_fd(int fd, const char *path, char *buf, size_t cap,
    size_t *len, char *err, size_t errlen);
/* auth_load of the file open at fd (closed here). */
int auth_load_fd(struct auth_keys *k, int fd, const char *path, char *err,
    size_t errlen);

#endif
