/*
 * fuzz_seal.c: libFuzzer target for the record layer's reader
 * (runtime/seal.c). The input is a program that builds a ciphertext
 * stream out of genuine records (sealed here with the session key, in
 * counter order), copies of earlier genuine records (replays and
 * reorderings), raw bytes and flipped bits; the stream goes through a
 * pipe (part of it given with seal_feed first) to seal_read with
 * buffers of assorted sizes. seal_read must never crash, and what it
 * returns must be a prefix of the genuine records' plaintext in the
 * order they were sealed: a record that was not sealed with the key, or
 * not in its place, never yields plaintext.
 *
 * Program: byte 0: cipher (bit 0), read size (bits 1-4), how much of
 * the stream to feed ahead (bits 5-7); then ops:
 *   0 L <L+1 bytes>  a genuine record of those bytes
 *   1 J              a copy of genuine record J (mod how many)
 *   2 L <L+1 bytes>  raw bytes
 *   3 P B            xor B into the stream's byte P (mod its length)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seal.h"

#define FZ_STREAM_MAX	60000u	/* below a pipe's capacity */
#define FZ_RECS		64

static uint8_t stream[FZ_STREAM_MAX], expect[FZ_STREAM_MAX],
    got[FZ_STREAM_MAX];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t rsizes[] = { 1, 2, 3, 7, 16, 100, 255, 256, 1000,
	    4096, 65536, 65537, 100000, 5, 31, 64 };
	struct seal_dir tx = { 0 };
	struct seal s = { 0 };
	size_t slen = 0, elen = 0, glen = 0, nrec = 0, pos = 1, ahead, rsz;
	size_t rec_at[FZ_RECS], rec_len[FZ_RECS];
	int fds[2];
	ssize_t r;

	if (size < 1 || seal_init() < 0)
		return 0;
	tx.cipher = (data[0] & 1) && (seal_ciphers() & (1u << SEAL_AES256GCM)) ?
	    SEAL_AES256GCM : SEAL_CHACHA20POLY1305;
	memset(tx.key, 0x42, sizeof(tx.key));
	s.rx = tx;
	s.on = true;
	rsz = rsizes[(data[0] >> 1) & 15];

	while (pos < size) {
		uint8_t op = data[pos++] & 3;

		if (op == 0 || op == 2) {
			size_t l;

			if (pos >= size)
				break;
			l = (size_t)data[pos++] + 1;
			if (l > size - pos)
				l = size - pos;
			if (l == 0 || slen + SEAL_REC_LEN(l) > FZ_STREAM_MAX)
				break;
			if (op == 2) {
				memcpy(stream + slen, data + pos, l);
				slen += l;
			} else if (nrec < FZ_RECS) {
				rec_at[nrec] = slen;
				rec_len[nrec++] = SEAL_REC_LEN(l);
				slen += seal_record(&tx, data + pos, l,
				    stream + slen);
				memcpy(expect + elen, data + pos, l);
				elen += l;
			}
			pos += l;
		} else if (op == 1) {
			size_t j;

			if (pos >= size || nrec == 0)
				break;
			j = data[pos++] % nrec;
			if (slen + rec_len[j] > FZ_STREAM_MAX)
				break;
			memmove(stream + slen, stream + rec_at[j], rec_len[j]);
			slen += rec_len[j];
		} else {
			if (pos + 1 >= size || slen == 0)
				break;
			stream[((size_t)data[pos] * 251 + data[pos + 1]) % slen] ^=
			    data[pos + 1] | 1;
			pos += 2;
		}
	}

	if (pipe(fds) < 0)
		abort();
	ahead = slen * ((data[0] >> 5) & 7) / 7;
	if (seal_feed(&s, stream, ahead) < 0)
		abort();
	if (write(fds[1], stream + ahead, slen - ahead) !=
	    (ssize_t)(slen - ahead))
		abort();
	close(fds[1]);
	for (;;) {
		size_t want = rsz;

		if (want > sizeof(got) - glen)
			want = sizeof(got) - glen;
		if (want == 0)
			abort();	/* more plaintext than was sealed */
		r = seal_read(&s, fds[0], got + glen, want);
		if (r <= 0)
			break;
		if ((size_t)r > want)
			abort();
		glen += (size_t)r;
	}
	/* only genuine plaintext, in order */
	if (glen > elen || memcmp(got, expect, glen) != 0)
		abort();
	if (r < 0 && errno != EBADMSG)
		abort();
	/* a clean end only on a record boundary after genuine records */
	if (r == 0 && seal_readable(&s))
		abort();
	close(fds[0]);
	seal_end(&s);
	return 0;
}
