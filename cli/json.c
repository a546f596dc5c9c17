/*
 * json.c: the JSON writer behind `mpiv run --report`.
 */
#include <math.h>

#include "json.h"

void
json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
}

/* Separator before a value or a key. */
static void
json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
}

static void
json_open(struct json *j, char c)
{
	json_sep(j);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void
json_close(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
	if (j->depth == 0)
		fputc('\n', j->f);
}

void json_obj_begin(struct json *j) { json_open(j, '{'); }
void json_obj_end(struct json *j) { json_close(j, '}'); }
void json_arr_begin(struct json *j) { json_open(j, '['); }
void json_arr_end(struct json *j) { json_close(j, ']'); }

static void
json_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void
json_key(struct json *j, const char *key)
{
	json_sep(j);
	json_quote(j->f, key);
	fputc(':', j->f);
	j->after_key = true;
}

void
json_str(struct json *j, const char *s)
{
	json_sep(j);
	json_quote(j->f, s != NULL ? s : "");
}

void
json_int(struct json *j, int64_t v)
{
	json_sep(j);
	fprintf(j->f, "%lld", (long long)v);
}

void
json_uint(struct json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void
json_double(struct json *j, double v)
{
	json_sep(j);
	if (isfinite(v))
		fprintf(j->f, "%.3f", v);
	else
		fputs("null", j->f);
}

void
json_null(struct json *j)
{
	json_sep(j);
	fputs("null", j->f);
}
