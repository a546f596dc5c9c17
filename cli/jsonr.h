/*
 * jsonr: a small JSON reader, for files mpiv wrote itself (a run's
 * --report, a sweep's own state) read back by `mpiv sweep`. Parses a
 * whole text into a tree of values in one allocation-per-node pass;
 * rejects anything that is not one complete JSON value (truncated,
 * trailing garbage, nesting deeper than JSONR_MAX_DEPTH, over
 * JSONR_MAX_TEXT bytes) with a message naming the byte offset.
 */
#ifndef MPIV_JSONR_H
#define MPIV_JSONR_H

#include <stdbool.h>
#include <stddef.h>

#define JSONR_MAX_DEPTH	32
#define JSONR_MAX_TEXT	(64u << 20)

enum jsonr_type {
	JSONR_NULL, JSONR_BOOL, JSONR_NUM, JSONR_STR, JSONR_ARR, JSONR_OBJ
};

struct jsonr {
	enum jsonr_type type;
	char *key;		/* in an object: the member's name */
	char *str;		/* JSONR_STR: decoded, NUL-terminated */
	double num;		/* JSONR_NUM; JSONR_BOOL: 0 or 1 */
	struct jsonr *kids;	/* JSONR_ARR, JSONR_OBJ: first element */
	struct jsonr *next;	/* the next element of the parent */
	size_t nkids;
};

/*
 * Parses len bytes of text. NULL on failure, with a message in err
 * (errlen bytes, may be 0); the tree is freed with jsonr_free.
 */
struct jsonr *jsonr_parse(const char *text, size_t len, char *err,
    size_t errlen);

/* Reads and parses a file; NULL with a message naming the file. */
struct jsonr *jsonr_load(const char *path, char *err, size_t errlen);

void jsonr_free(struct jsonr *v);

/* Member key of object v (NULL when v is not an object or lacks it). */
const struct jsonr *jsonr_get(const struct jsonr *v, const char *key);

/* Member key as a number (def when missing or not a number/bool). */
double jsonr_num(const struct jsonr *v, const char *key, double def);

/* Member key as a string (NULL when missing or not a string). */
const char *jsonr_str(const struct jsonr *v, const char *key);

#endif
