/*
 * json: a tiny streaming JSON writer (for `mpiv run --report`). Keeps a
 * stack of "first element" flags so callers never place commas.
 */
#ifndef MPIV_JSON_H
#define MPIV_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];
	bool after_key;
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_double(struct json *j, double v);
void json_null(struct json *j);

#endif
