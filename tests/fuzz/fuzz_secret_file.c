/*
 * fuzz_secret_file.c: runtime/auth_rotate.c, the parser of secret files
 * in every format, on any bytes (exactly size of them readable): never a
 * crash or an out-of-bounds read; a refusal always says why; a file it
 * accepts gives keys, and written back as v1 (when its keys can be)
 * parses again to the same entries.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth_rotate.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], text[AUTH_MAX_FILE + 1];
	char *copy = malloc(size ? size : 1);
	struct auth_file f, g;
	struct auth_keys k;
	int64_t t;

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	err[0] = '\0';
	(void)auth_parse_time(copy, size, &t);
	if (auth_file_parse(&f, copy, size, "F", err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort();	/* refused without a message */
		free(copy);
		return 0;
	}
	if (f.n == 0 || f.n > AUTH_MAX_KEYS || f.e[0].kind != AUTH_E_CURRENT)
		abort();
	if (auth_file_keys(&f, &k, "F", err, sizeof(err)) < 0 || !k.enabled ||
	    k.naccept != f.n - 1 || k.cluster == f.node)
		abort();
	if (auth_file_text(&f, text, sizeof(text), err, sizeof(err)) == 0) {
		if (auth_file_parse(&g, text, strlen(text), "F", err,
		    sizeof(err)) < 0 || g.n != f.n || g.node != f.node)
			abort();
		for (size_t i = 0; i < f.n; i++)
			if (g.e[i].kind != f.e[i].kind ||
			    g.e[i].len != f.e[i].len ||
			    memcmp(g.e[i].val, f.e[i].val, f.e[i].len) != 0 ||
			    (f.e[i].kind == AUTH_E_ACCEPT &&
			    g.e[i].until != f.e[i].until))
				abort();
	}
	free(copy);
	return 0;
}
