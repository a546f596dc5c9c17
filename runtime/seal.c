/*
 * seal.c: the record layer of an encrypted mpiv connection (seal.h has
 * the contract: key derivation, record format, the read/writev-like
 * wrappers). The cryptography is libsodium's (X25519, keyed BLAKE2b-512,
 * AES-256-GCM with its key expanded once per connection, or
 * ChaCha20-Poly1305 IETF), except that AES-256-GCM records of
 * SEAL_EVP_MIN bytes and more go through OpenSSL's EVP interface, whose
 * stitched AES-NI/VAES code seals 2-3x faster than libsodium 1.0.18's on
 * this hardware (bench/seal_floor.c prints both). The cipher, key, nonce
 * and additional data are the same, so the bytes are too: either
 * library opens the other's records (tests/unit/test_seal.c checks it).
 * MPIV_SEAL_NO_OPENSSL=1 keeps every record on libsodium.
 *
 * Reading: one read(2) fetches as much ciphertext as the descriptor has
 * (up to SEAL_READ_MAX, the buffer grows from small while reads fill it),
 * and every whole record that fits in the caller's buffer is opened
 * straight into it; a record larger than what the caller asked for is
 * opened into s->plain and handed out from there.
 *
 * Writing: up to SEAL_WRITE_MAX plaintext bytes of the caller's iovecs
 * are sealed, record by record, straight into s->out (a record spanning
 * several iovecs is gathered there first and sealed in place), then
 * written with one write(2) (writing every 128 KiB while sealing on was
 * measured slower: 610-670 against 560-580 µs per 1 MiB ping-pong hop;
 * the rank transport already hands over 256 KiB at a time). Ciphertext
 * the descriptor did not take stays in s->out; nothing new is taken
 * until it is out.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sodium.h>

#include "seal.h"

#define SEAL_READ_MIN	(4u * 1024u)	/* first size of s->in */
#define SEAL_READ_MAX	(256u * 1024u)	/* s->in grows to this while reads fill it */
#define SEAL_WRITE_MAX	(4u * 1024u * 1024u)	/* plaintext sealed per seal_writev */
#define SEAL_LABEL	"mpiv-seal-v1"

static uint32_t
seal_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void
seal_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * sodium_init is idempotent and thread-safe; the cipher mask is computed
 * from the CPU each time (cheap). MPIV_SEAL_NO_AES=1 hides AES-256-GCM
 * (tests and benchmarks of the ChaCha20 path on an AES-NI machine).
 */
int
seal_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

static bool seal_insecure;

/* Also in the environment: the processes we start (ranks, daemons of
   an embedded deployment) run plaintext too. */
void
seal_set_plaintext(bool on)
{
	seal_insecure = on;
	if (on)
		setenv(SEAL_ENV_PLAINTEXT, "1", 1);
	else
		unsetenv(SEAL_ENV_PLAINTEXT);
}

bool
seal_plaintext(void)
{
	const char *e = getenv(SEAL_ENV_PLAINTEXT);

	return seal_insecure || (e != NULL && strcmp(e, "1") == 0);
}

uint32_t
seal_ciphers(void)
{
	const char *no_aes = getenv("MPIV_SEAL_NO_AES");
	uint32_t mask;

	if (seal_plaintext() || seal_init() < 0)
		return 0;
	mask = 1u << SEAL_CHACHA20POLY1305;
	if (crypto_aead_aes256gcm_is_available() &&
	    !(no_aes != NULL && strcmp(no_aes, "1") == 0))
		mask |= 1u << SEAL_AES256GCM;
	return mask;
}

enum seal_cipher
seal_pick(uint32_t server_mask)
{
	uint32_t both = server_mask & seal_ciphers();

	if (both & (1u << SEAL_AES256GCM))
		return SEAL_AES256GCM;
	if (both & (1u << SEAL_CHACHA20POLY1305))
		return SEAL_CHACHA20POLY1305;
	return SEAL_NONE;
}

const char *
seal_cipher_name(enum seal_cipher c)
{
	switch (c) {
	case SEAL_NONE:
		return "plaintext";
	case SEAL_AES256GCM:
		return "aes256gcm";
	case SEAL_CHACHA20POLY1305:
		return "chacha20poly1305";
	}
	return "unknown";
}

int
seal_kx_new(struct seal_kx *kx)
{
	if (seal_init() < 0) {
		errno = ENOSYS;
		return -1;
	}
	randombytes_buf(kx->sec, sizeof(kx->sec));
	if (crypto_scalarmult_base(kx->pub, kx->sec) != 0) {
		sodium_memzero(kx, sizeof(*kx));
		errno = EINVAL;
		return -1;
	}
	return 0;
}

void
seal_kx_wipe(struct seal_kx *kx)
{
	sodium_memzero(kx, sizeof(*kx));
}

static void
seal_dir_wipe(struct seal_dir *d)
{
	if (d->evp != NULL)
		EVP_CIPHER_CTX_free(d->evp);	/* cleanses the key schedule */
	if (d->aes != NULL) {
		sodium_memzero(d->aes, sizeof(crypto_aead_aes256gcm_state));
		free(d->aes);
	}
	sodium_memzero(d, sizeof(*d));
}

static bool
seal_no_openssl(void)
{
	const char *e = getenv("MPIV_SEAL_NO_OPENSSL");

	return e != NULL && strcmp(e, "1") == 0;
}

/* d's key is set: expands it for AES-256-GCM, for libsodium and (unless
   MPIV_SEAL_NO_OPENSSL=1) for OpenSSL, to seal (enc) or open. 0 or -1. */
static int
seal_dir_ready(struct seal_dir *d, bool enc)
{
	if (d->cipher == SEAL_CHACHA20POLY1305)
		return 0;
	if (d->cipher != SEAL_AES256GCM || !crypto_aead_aes256gcm_is_available())
		return -1;
	d->aes = aligned_alloc(16, sizeof(crypto_aead_aes256gcm_state));
	if (d->aes == NULL)
		return -1;
	crypto_aead_aes256gcm_beforenm(d->aes, d->key);
	if (seal_no_openssl())
		return 0;
	/* without it (no memory, an OpenSSL without the cipher), every
	   record stays on libsodium */
	if ((d->evp = EVP_CIPHER_CTX_new()) != NULL &&
	    (enc ? EVP_EncryptInit_ex(d->evp, EVP_aes_256_gcm(), NULL, d->key,
	    NULL) : EVP_DecryptInit_ex(d->evp, EVP_aes_256_gcm(), NULL,
	    d->key, NULL)) != 1) {
		EVP_CIPHER_CTX_free(d->evp);
		d->evp = NULL;
	}
	return 0;
}

/* OpenSSL's AES-256-GCM of one record (the same bytes as libsodium's):
   seals n bytes of plain into ct and tag. 0 or -1. */
static int
seal_evp_seal(struct seal_dir *d, const uint8_t npub[12], const uint8_t *ad,
    const uint8_t *plain, size_t n, uint8_t *ct, uint8_t *tag)
{
	int len;

	if (EVP_EncryptInit_ex(d->evp, NULL, NULL, NULL, npub) != 1 ||
	    EVP_EncryptUpdate(d->evp, NULL, &len, ad, SEAL_HDR_LEN) != 1 ||
	    EVP_EncryptUpdate(d->evp, ct, &len, plain, (int)n) != 1 ||
	    (size_t)len != n || EVP_EncryptFinal_ex(d->evp, ct + n, &len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(d->evp, EVP_CTRL_GCM_GET_TAG, SEAL_TAG_LEN,
	    tag) != 1)
		return -1;
	return 0;
}

/* Opens n bytes of ct with its tag into plain: 0, or -1 when it does not
   authenticate (plain then zeroed). */
static int
seal_evp_open(struct seal_dir *d, const uint8_t npub[12], const uint8_t *ad,
    const uint8_t *ct, size_t n, const uint8_t *tag, uint8_t *plain)
{
	uint8_t t[SEAL_TAG_LEN];
	int len;

	memcpy(t, tag, sizeof(t));
	if (EVP_DecryptInit_ex(d->evp, NULL, NULL, NULL, npub) != 1 ||
	    EVP_DecryptUpdate(d->evp, NULL, &len, ad, SEAL_HDR_LEN) != 1 ||
	    EVP_DecryptUpdate(d->evp, plain, &len, ct, (int)n) != 1 ||
	    (size_t)len != n ||
	    EVP_CIPHER_CTX_ctrl(d->evp, EVP_CTRL_GCM_SET_TAG, SEAL_TAG_LEN,
	    t) != 1 || EVP_DecryptFinal_ex(d->evp, plain + n, &len) != 1) {
		/* OpenSSL writes before it checks: no forged byte stays */
		sodium_memzero(plain, n);
		return -1;
	}
	return 0;
}

int
seal_start(struct seal *s, bool is_client, enum seal_cipher c,
    const void *key, size_t keylen, struct seal_kx *kx,
    const uint8_t peer_pub[SEAL_PUB_LEN],
    const uint8_t client_pub[SEAL_PUB_LEN],
    const uint8_t server_pub[SEAL_PUB_LEN],
    const uint8_t *nonce_s, size_t nonce_s_len,
    const uint8_t *nonce_c, size_t nonce_c_len)
{
	crypto_generichash_state st;
	uint8_t shared[crypto_scalarmult_BYTES];
	uint8_t k[2 * SEAL_KEY_LEN];
	uint8_t cb[4];
	int rc = -1;

	if (seal_init() < 0 || (c != SEAL_AES256GCM &&
	    c != SEAL_CHACHA20POLY1305) || (keylen != 0 &&
	    (keylen < crypto_generichash_KEYBYTES_MIN ||
	    keylen > crypto_generichash_KEYBYTES_MAX))) {
		errno = EINVAL;
		goto out_wipe;
	}
	/* an all-zero shared secret: the peer sent a small-order point */
	if (crypto_scalarmult(shared, kx->sec, peer_pub) != 0) {
		errno = EPROTO;
		goto out_wipe;
	}
	seal_put32(cb, (uint32_t)c);
	crypto_generichash_init(&st, keylen ? key : NULL, keylen, sizeof(k));
	crypto_generichash_update(&st, (const uint8_t *)SEAL_LABEL,
	    sizeof(SEAL_LABEL) - 1);
	crypto_generichash_update(&st, shared, sizeof(shared));
	crypto_generichash_update(&st, client_pub, SEAL_PUB_LEN);
	crypto_generichash_update(&st, server_pub, SEAL_PUB_LEN);
	crypto_generichash_update(&st, nonce_s, nonce_s_len);
	crypto_generichash_update(&st, nonce_c, nonce_c_len);
	crypto_generichash_update(&st, cb, sizeof(cb));
	crypto_generichash_final(&st, k, sizeof(k));

	seal_dir_wipe(&s->tx);
	seal_dir_wipe(&s->rx);
	s->tx.cipher = s->rx.cipher = c;
	memcpy(s->tx.key, is_client ? k : k + SEAL_KEY_LEN, SEAL_KEY_LEN);
	memcpy(s->rx.key, is_client ? k + SEAL_KEY_LEN : k, SEAL_KEY_LEN);
	if (seal_dir_ready(&s->tx, true) < 0 ||
	    seal_dir_ready(&s->rx, false) < 0) {
		seal_dir_wipe(&s->tx);
		seal_dir_wipe(&s->rx);
		errno = ENOMEM;
		goto out_wipe;
	}
	s->on = true;
	rc = 0;
out_wipe:
	sodium_memzero(&st, sizeof(st));
	sodium_memzero(shared, sizeof(shared));
	sodium_memzero(k, sizeof(k));
	seal_kx_wipe(kx);
	return rc;
}

void
seal_end(struct seal *s)
{
	seal_dir_wipe(&s->tx);
	seal_dir_wipe(&s->rx);
	if (s->plain != NULL)
		sodium_memzero(s->plain, s->plain_cap);
	free(s->in);
	free(s->plain);
	free(s->out);
	memset(s, 0, sizeof(*s));
}

/* The nonce of d's next record, or -1 when its counter is spent. */
static int
seal_nonce(const struct seal_dir *d, uint8_t npub[12])
{
	if (d->ctr == UINT64_MAX)
		return -1;
	memset(npub, 0, 4);
	for (int i = 0; i < 8; i++)
		npub[4 + i] = (uint8_t)(d->ctr >> (56 - 8 * i));
	return 0;
}

/* Seals n bytes at plain into out (plain may be out + SEAL_HDR_LEN:
   sealed in place). */
size_t
seal_record(struct seal_dir *d, const void *plain, size_t n, uint8_t *out)
{
	uint8_t npub[12];

	if (n == 0 || n > SEAL_REC_MAX || seal_nonce(d, npub) < 0)
		return 0;
	seal_put32(out, (uint32_t)n);
	if (d->cipher == SEAL_AES256GCM && d->evp != NULL &&
	    n >= SEAL_EVP_MIN) {
		if (seal_evp_seal(d, npub, out, plain, n, out + SEAL_HDR_LEN,
		    out + SEAL_HDR_LEN + n) < 0) {
			/* never again under this key: no nonce is reused */
			d->ctr = UINT64_MAX;
			return 0;
		}
	} else if (d->cipher == SEAL_AES256GCM && d->aes != NULL)
		crypto_aead_aes256gcm_encrypt_detached_afternm(
		    out + SEAL_HDR_LEN, out + SEAL_HDR_LEN + n, NULL,
		    plain, n, out, SEAL_HDR_LEN, NULL, npub, d->aes);
	else if (d->cipher == SEAL_AES256GCM &&
	    crypto_aead_aes256gcm_is_available())
		crypto_aead_aes256gcm_encrypt_detached(out + SEAL_HDR_LEN,
		    out + SEAL_HDR_LEN + n, NULL, plain, n, out, SEAL_HDR_LEN,
		    NULL, npub, d->key);
	else if (d->cipher == SEAL_CHACHA20POLY1305)
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(
		    out + SEAL_HDR_LEN, out + SEAL_HDR_LEN + n, NULL, plain,
		    n, out, SEAL_HDR_LEN, NULL, npub, d->key);
	else
		return 0;
	d->ctr++;
	return SEAL_REC_LEN(n);
}

ssize_t
seal_open_record(struct seal_dir *d, const uint8_t *rec, size_t len,
    uint8_t *plain)
{
	uint8_t npub[12];
	size_t n;
	int rc;

	if (len < SEAL_REC_LEN(1))
		return -1;
	n = seal_get32(rec);
	if (n == 0 || n > SEAL_REC_MAX || len != SEAL_REC_LEN(n) ||
	    seal_nonce(d, npub) < 0)
		return -1;
	if (d->cipher == SEAL_AES256GCM && d->evp != NULL && n >= SEAL_EVP_MIN)
		rc = seal_evp_open(d, npub, rec, rec + SEAL_HDR_LEN, n,
		    rec + SEAL_HDR_LEN + n, plain);
	else if (d->cipher == SEAL_AES256GCM && d->aes != NULL)
		rc = crypto_aead_aes256gcm_decrypt_detached_afternm(plain,
		    NULL, rec + SEAL_HDR_LEN, n, rec + SEAL_HDR_LEN + n, rec,
		    SEAL_HDR_LEN, npub, d->aes);
	else if (d->cipher == SEAL_AES256GCM &&
	    crypto_aead_aes256gcm_is_available())
		rc = crypto_aead_aes256gcm_decrypt_detached(plain, NULL,
		    rec + SEAL_HDR_LEN, n, rec + SEAL_HDR_LEN + n, rec,
		    SEAL_HDR_LEN, npub, d->key);
	else if (d->cipher == SEAL_CHACHA20POLY1305)
		rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(plain,
		    NULL, rec + SEAL_HDR_LEN, n, rec + SEAL_HDR_LEN + n, rec,
		    SEAL_HDR_LEN, npub, d->key);
	else
		rc = -1;
	if (rc != 0)
		return -1;
	d->ctr++;
	return (ssize_t)n;
}

/* Room for free bytes at the end of s->in (what was opened dropped
   first). 0 or -1. */
static int
seal_in_room(struct seal *s, size_t room)
{
	size_t cap;
	uint8_t *p;

	if (s->in_off > 0) {
		memmove(s->in, s->in + s->in_off, s->in_len - s->in_off);
		s->in_len -= s->in_off;
		s->in_off = 0;
	}
	if (s->in_cap - s->in_len >= room)
		return 0;
	cap = s->in_cap ? s->in_cap : SEAL_READ_MIN;
	while (cap - s->in_len < room)
		cap *= 2;
	p = realloc(s->in, cap);
	if (p == NULL)
		return -1;
	s->in = p;
	s->in_cap = cap;
	return 0;
}

int
seal_feed(struct seal *s, const void *ct, size_t n)
{
	if (n == 0)
		return 0;
	if (seal_in_room(s, n) < 0) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(s->in + s->in_len, ct, n);
	s->in_len += n;
	return 0;
}

/* The length of the record starting s->in's unopened bytes: 0 when its
   header is not all in yet, -1 when it is a length no record has. */
static ssize_t
seal_next_len(const struct seal *s)
{
	size_t n;

	if (s->in_len - s->in_off < SEAL_HDR_LEN)
		return 0;
	n = seal_get32(s->in + s->in_off);
	if (n == 0 || n > SEAL_REC_MAX)
		return -1;
	return (ssize_t)n;
}

bool
seal_readable(const struct seal *s)
{
	ssize_t n;

	if (s->plain_off < s->plain_len)
		return true;
	n = seal_next_len(s);
	/* a bad header is "readable": seal_read reports it */
	return n < 0 || (n > 0 &&
	    s->in_len - s->in_off >= SEAL_REC_LEN((size_t)n));
}

/* Takes up to n opened bytes out of s->plain. */
static size_t
seal_take_plain(struct seal *s, void *buf, size_t n)
{
	size_t take = s->plain_len - s->plain_off;

	if (take > n)
		take = n;
	memcpy(buf, s->plain + s->plain_off, take);
	s->plain_off += take;
	if (s->plain_off == s->plain_len)
		s->plain_off = s->plain_len = 0;
	return take;
}

/*
 * Opens the whole records s->in holds into buf while they fit (or the
 * first one into s->plain when it does not). The plaintext bytes given,
 * or -1 with EBADMSG when the next record fails before anything is.
 */
static ssize_t
seal_open_in(struct seal *s, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t len = seal_next_len(s);
		size_t rlen;

		if (len == 0)
			break;
		if (len < 0)
			goto out_bad;
		rlen = SEAL_REC_LEN((size_t)len);
		if (s->in_len - s->in_off < rlen)
			break;
		if ((size_t)len <= n - got) {
			if (seal_open_record(&s->rx, s->in + s->in_off, rlen,
			    buf + got) < 0)
				goto out_bad;
			got += (size_t)len;
		} else {
			if (got > 0)
				break;
			if (s->plain_cap < (size_t)len) {
				uint8_t *p = realloc(s->plain, SEAL_REC_MAX);

				if (p == NULL) {
					errno = ENOMEM;
					return -1;
				}
				s->plain = p;
				s->plain_cap = SEAL_REC_MAX;
			}
			if (seal_open_record(&s->rx, s->in + s->in_off, rlen,
			    s->plain) < 0)
				goto out_bad;
			s->plain_off = 0;
			s->plain_len = (size_t)len;
			s->in_off += rlen;
			return (ssize_t)seal_take_plain(s, buf, n);
		}
		s->in_off += rlen;
	}
	if (s->in_off == s->in_len)
		s->in_off = s->in_len = 0;
	return (ssize_t)got;
out_bad:
	if (got > 0)
		return (ssize_t)got;	/* the failure answers the next call */
	errno = EBADMSG;
	return -1;
}

ssize_t
seal_read(struct seal *s, int fd, void *buf, size_t n)
{
	if (n == 0)
		return 0;
	if (s->plain_off < s->plain_len)
		return (ssize_t)seal_take_plain(s, buf, n);
	for (;;) {
		ssize_t got = seal_open_in(s, buf, n), len, r;
		size_t room;

		if (got != 0)
			return got;
		/* room for the record under way, and more while reads fill
		   the buffer (up to SEAL_READ_MAX) */
		len = seal_next_len(s);
		room = len > 0 ? SEAL_REC_LEN((size_t)len) : SEAL_READ_MIN;
		if (s->in_cap - s->in_len > room)
			room = s->in_cap - s->in_len;
		if (seal_in_room(s, room) < 0) {
			errno = ENOMEM;
			return -1;
		}
		r = read(fd, s->in + s->in_len, s->in_cap - s->in_len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			if (s->in_len == s->in_off)
				return 0;
			errno = EBADMSG;	/* the stream ended inside a record */
			return -1;
		}
		s->in_len += (size_t)r;
		if (s->in_len == s->in_cap && s->in_cap < SEAL_READ_MAX) {
			/* the read filled the buffer: the next one gets twice
			   the room */
			uint8_t *p = realloc(s->in, 2 * s->in_cap);

			if (p != NULL) {
				s->in = p;
				s->in_cap *= 2;
			}
		}
	}
}

size_t
seal_pending(const struct seal *s)
{
	return s->out_len - s->out_off;
}

int
seal_flush(struct seal *s, int fd)
{
	while (s->out_off < s->out_len) {
		/* send: no SIGPIPE from a peer gone; write for non-sockets */
		ssize_t w = send(fd, s->out + s->out_off,
		    s->out_len - s->out_off, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, s->out + s->out_off,
			    s->out_len - s->out_off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s->out_off += (size_t)w;
	}
	s->out_off = s->out_len = 0;
	return 0;
}

/* Room for room more bytes at the end of s->out. 0 or -1. */
static int
seal_out_room(struct seal *s, size_t room)
{
	size_t cap;
	uint8_t *p;

	if (s->out_cap - s->out_len >= room)
		return 0;
	cap = s->out_cap ? s->out_cap : SEAL_REC_LEN(SEAL_REC_MAX);
	while (cap - s->out_len < room)
		cap *= 2;
	p = realloc(s->out, cap);
	if (p == NULL)
		return -1;
	s->out = p;
	s->out_cap = cap;
	return 0;
}

ssize_t
seal_writev(struct seal *s, int fd, const struct iovec *iov, int iovcnt)
{
	size_t total = 0, taken = 0, ioff = 0;
	int i = 0, last = -1;

	if (seal_pending(s) > 0 && seal_flush(s, fd) < 0)
		return -1;
	for (int j = 0; j < iovcnt; j++) {
		if (iov[j].iov_len > 0)
			last = j;
		total += iov[j].iov_len;
	}
	if (total > SEAL_WRITE_MAX)
		total = SEAL_WRITE_MAX;
	if (total == 0)
		return 0;
	if (seal_out_room(s, total + (total / SEAL_REC_MAX + 1) *
	    SEAL_REC_LEN(0)) < 0) {
		errno = ENOMEM;
		return -1;
	}
	while (taken < total) {
		size_t want = total - taken, avail, n;
		uint8_t *rec = s->out + s->out_len;

		if (want > SEAL_REC_MAX)
			want = SEAL_REC_MAX;
		avail = iov[i].iov_len - ioff;
		if (avail == 0) {
			i++;
			ioff = 0;
			continue;
		}
		if (avail >= want || i == last) {
			/* straight from the caller's buffer */
			n = avail < want ? avail : want;
			if (seal_record(&s->tx, (const uint8_t *)iov[i].iov_base +
			    ioff, n, rec) == 0)
				goto out_fail;
			ioff += n;
		} else {
			/* the record spans iovecs: gathered, sealed in place */
			n = 0;
			while (n < want && i <= last) {
				size_t c = iov[i].iov_len - ioff;

				if (c > want - n)
					c = want - n;
				memcpy(rec + SEAL_HDR_LEN + n,
				    (const uint8_t *)iov[i].iov_base + ioff, c);
				n += c;
				ioff += c;
				if (ioff == iov[i].iov_len) {
					i++;
					ioff = 0;
				}
			}
			if (seal_record(&s->tx, rec + SEAL_HDR_LEN, n, rec) == 0)
				goto out_fail;
		}
		s->out_len += SEAL_REC_LEN(n);
		taken += n;
	}
	if (seal_flush(s, fd) < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		return -1;
	return (ssize_t)taken;
out_fail:
	/* the cipher failed, or the counter is spent: the connection must
	   end */
	errno = EIO;
	return -1;
}
