/*
 * fuzz_jsonr.c: cli/jsonr.c, the JSON reader of `mpiv sweep`, on any
 * bytes: never a crash, a leak or an out-of-bounds read; a text it
 * accepts has a tree whose lookups work.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/jsonr.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[128];
	char *copy = malloc(size + 1);	/* exactly size bytes readable */
	struct jsonr *v;

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	v = jsonr_parse(copy, size, err, sizeof(err));
	if (v != NULL) {
		(void)jsonr_num(v, "wall_s", 0);
		(void)jsonr_str(v, "reason");
		for (const struct jsonr *k = v->kids; k != NULL; k = k->next)
			(void)jsonr_get(k, "replay_s");
	} else if (err[0] == '\0') {
		abort();	/* refused without a message */
	}
	jsonr_free(v);
	free(copy);
	return 0;
}
