/*
 * seal_floor.c: the cost of encryption on this CPU, the floor under any
 * encrypted mpiv connection (runtime/seal.c, not MPI): for each cipher
 * the machine runs, the throughput of sealing and of opening 1 MiB in
 * records of SEAL_REC_MAX bytes (what a large payload costs), and the
 * time to seal and open one 64 B record (what a small message adds),
 * next to memcpy of the same 1 MiB. AES-256-GCM twice: as mpiv runs it
 * (OpenSSL for records of SEAL_EVP_MIN bytes and more, libsodium below)
 * and libsodium alone (cipher=aes256gcm-libsodium, what
 * MPIV_SEAL_NO_OPENSSL=1 runs).
 *
 *   seal_floor [SECONDS_PER_MEASURE (default 0.3)]
 *
 * Lines: RESULT seal_floor cipher=C op=seal|open|memcpy size=1048576
 * MBps=X, and RESULT seal_floor cipher=C op=rec64 size=64 ns=X (seal +
 * open of one record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seal.h"

#define MIB	(1u << 20)

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A session of cipher c with itself (tx seals what rx opens); with
   sodium_only, every record on libsodium. */
static void
pair(enum seal_cipher c, bool sodium_only, struct seal *a, struct seal *b)
{
	static const uint8_t key[32] = "seal_floor seal_floor seal_floo";
	static const uint8_t ns[32], nc[32] = { 1 };
	struct seal_kx ka, kb;
	uint8_t pa[SEAL_PUB_LEN], pb[SEAL_PUB_LEN];

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (seal_kx_new(&ka) < 0 || seal_kx_new(&kb) < 0)
		exit(1);
	memcpy(pa, ka.pub, sizeof(pa));
	memcpy(pb, kb.pub, sizeof(pb));
	if (sodium_only)
		setenv("MPIV_SEAL_NO_OPENSSL", "1", 1);
	else
		unsetenv("MPIV_SEAL_NO_OPENSSL");
	if (seal_start(a, true, c, key, sizeof(key), &ka, pb, pa, pb, ns, 32,
	    nc, 32) < 0 || seal_start(b, false, c, key, sizeof(key), &kb, pa,
	    pa, pb, ns, 32, nc, 32) < 0) {
		fprintf(stderr, "seal_floor: seal_start failed\n");
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	enum seal_cipher cs[3];
	bool sodium_only[3] = { false, false, false };
	uint8_t *plain, *ct, *back;
	int nc = 0;

	if (seal_init() < 0 || secs <= 0) {
		fprintf(stderr, "usage: seal_floor [SECONDS] (needs libsodium)\n");
		return 2;
	}
	if (seal_ciphers() & (1u << SEAL_AES256GCM)) {
		cs[nc++] = SEAL_AES256GCM;
		sodium_only[nc] = true;
		cs[nc++] = SEAL_AES256GCM;
	}
	cs[nc++] = SEAL_CHACHA20POLY1305;
	plain = malloc(MIB);
	back = malloc(MIB);
	ct = malloc(MIB + (MIB / SEAL_REC_MAX + 1) * SEAL_REC_LEN(0));
	if (plain == NULL || back == NULL || ct == NULL)
		return 1;
	for (size_t i = 0; i < MIB; i++)
		plain[i] = (uint8_t)(i * 131);

	/* memcpy of 1 MiB, the one copy a transport makes anyway */
	{
		double t0 = now(), t;
		long n = 0;

		do {
			memcpy(back, plain, MIB);
			__asm__ volatile("" : : "r"(back) : "memory");
			n++;
		} while ((t = now() - t0) < secs);
		printf("RESULT seal_floor cipher=none op=memcpy size=%u MBps=%.0f\n",
		    MIB, n * (double)MIB / t / 1e6);
	}
	for (int k = 0; k < nc; k++) {
		const char *name = sodium_only[k] ? "aes256gcm-libsodium" :
		    seal_cipher_name(cs[k]);
		struct seal a, b;
		double t0, ts, to;
		long n = 0, m = 0;
		size_t len = 0;

		pair(cs[k], sodium_only[k], &a, &b);
		/* seal 1 MiB, then open it, as many times as fit */
		ts = to = 0;
		t0 = now();
		do {
			double t1;

			len = 0;
			for (size_t off = 0; off < MIB; off += SEAL_REC_MAX)
				len += seal_record(&a.tx, plain + off,
				    SEAL_REC_MAX, ct + len);
			t1 = now();
			ts += t1 - t0;
			for (size_t off = 0, at = 0; off < len;
			    off += SEAL_REC_LEN(SEAL_REC_MAX),
			    at += SEAL_REC_MAX)
				if (seal_open_record(&b.rx, ct + off,
				    SEAL_REC_LEN(SEAL_REC_MAX), back + at) < 0) {
					fprintf(stderr, "seal_floor: a record "
					    "did not open\n");
					return 1;
				}
			t0 = now();
			to += t0 - t1;
			n++;
		} while (ts + to < 2 * secs);
		if (memcmp(plain, back, MIB) != 0)
			return 1;
		printf("RESULT seal_floor cipher=%s op=seal size=%u MBps=%.0f\n",
		    name, MIB, n * (double)MIB / ts / 1e6);
		printf("RESULT seal_floor cipher=%s op=open size=%u MBps=%.0f\n",
		    name, MIB, n * (double)MIB / to / 1e6);
		/* one 64 B record sealed and opened */
		t0 = now();
		do {
			for (int i = 0; i < 1000; i++) {
				seal_record(&a.tx, plain, 64, ct);
				if (seal_open_record(&b.rx, ct,
				    SEAL_REC_LEN(64), back) != 64)
					return 1;
			}
			m += 1000;
		} while (now() - t0 < secs);
		printf("RESULT seal_floor cipher=%s op=rec64 size=64 ns=%.0f\n",
		    name, (now() - t0) / m * 1e9);
		seal_end(&a);
		seal_end(&b);
	}
	free(plain);
	free(back);
	free(ct);
	return 0;
}
