/*
 * jsonr.c: the JSON reader of jsonr.h. Recursive descent over the text
 * with an explicit depth bound; strings are decoded (escapes, \u with
 * surrogate pairs to UTF-8; a lone surrogate or a control character is
 * an error); numbers go through strtod after their JSON grammar was
 * checked, so "01", "1.", ".5", "+1", "NaN" are refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

struct jp {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
	bool failed;
};

static void
jp_fail(struct jp *p, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (p->failed)
		return;
	p->failed = true;
	if (p->errlen == 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < p->errlen)
		snprintf(p->err + n, p->errlen - (size_t)n, " at byte %zu",
		    p->pos);
}

static void
jp_ws(struct jp *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' ||
	    p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
	    p->s[p->pos] == '\r'))
		p->pos++;
}

static bool
jp_lit(struct jp *p, const char *lit)
{
	size_t n = strlen(lit);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0)
		return false;
	p->pos += n;
	return true;
}

static int
jp_hex4(struct jp *p, unsigned *out)
{
	unsigned v = 0;

	if (p->len - p->pos < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos + (size_t)i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	p->pos += 4;
	*out = v;
	return 0;
}

static size_t
jp_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at p->pos (the opening quote), decoded into a new buffer. */
static char *
jp_string(struct jp *p)
{
	size_t start = ++p->pos, n = 0, cap;
	char *o;

	/* the decoded text is never longer than the raw one */
	while (p->pos < p->len && p->s[p->pos] != '"') {
		if (p->s[p->pos] == '\\')
			p->pos++;
		p->pos++;
	}
	if (p->pos >= p->len) {
		jp_fail(p, "unterminated string");
		return NULL;
	}
	cap = p->pos - start + 1;
	p->pos = start;
	if ((o = malloc(cap)) == NULL) {
		jp_fail(p, "out of memory");
		return NULL;
	}
	while (p->s[p->pos] != '"') {
		unsigned char c = (unsigned char)p->s[p->pos++];
		unsigned cp, lo;

		if (c < 0x20) {
			p->pos--;
			jp_fail(p, "control character in a string");
			goto bad;
		}
		if (c != '\\') {
			o[n++] = (char)c;
			continue;
		}
		c = (unsigned char)p->s[p->pos++];
		switch (c) {
		case '"': case '\\': case '/':
			o[n++] = (char)c;
			break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case 'n': o[n++] = '\n'; break;
		case 'r': o[n++] = '\r'; break;
		case 't': o[n++] = '\t'; break;
		case 'u':
			if (jp_hex4(p, &cp) < 0) {
				jp_fail(p, "bad \\u escape");
				goto bad;
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				jp_fail(p, "lone low surrogate");
				goto bad;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (!jp_lit(p, "\\u") || jp_hex4(p, &lo) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff) {
					jp_fail(p, "lone high surrogate");
					goto bad;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
			}
			if (cp == 0) {
				jp_fail(p, "NUL in a string");
				goto bad;
			}
			/* at most 4 bytes out for 6 or 12 bytes in */
			n += jp_utf8(o + n, cp);
			break;
		default:
			p->pos--;
			jp_fail(p, "bad escape");
			goto bad;
		}
	}
	p->pos++;
	o[n] = '\0';
	return o;
bad:
	free(o);
	return NULL;
}

static bool
jp_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
jp_number(struct jp *p, double *out)
{
	size_t start = p->pos;
	char buf[64], *end;

	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len || !jp_digit(p->s[p->pos]))
		goto bad;
	if (p->s[p->pos] == '0')
		p->pos++;
	else
		while (p->pos < p->len && jp_digit(p->s[p->pos]))
			p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (p->pos >= p->len || !jp_digit(p->s[p->pos]))
			goto bad;
		while (p->pos < p->len && jp_digit(p->s[p->pos]))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' ||
		    p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || !jp_digit(p->s[p->pos]))
			goto bad;
		while (p->pos < p->len && jp_digit(p->s[p->pos]))
			p->pos++;
	}
	if (p->pos - start >= sizeof(buf)) {
		p->pos = start;
		jp_fail(p, "number too long");
		return -1;
	}
	memcpy(buf, p->s + start, p->pos - start);
	buf[p->pos - start] = '\0';
	errno = 0;
	*out = strtod(buf, &end);
	if (*end != '\0' || errno == ERANGE) {
		p->pos = start;
		jp_fail(p, "number out of range");
		return -1;
	}
	return 0;
bad:
	jp_fail(p, "bad number");
	return -1;
}

static struct jsonr *jp_value(struct jp *p, int depth);

/* The elements of an array or the members of an object into v. */
static int
jp_list(struct jp *p, struct jsonr *v, int depth, char close)
{
	struct jsonr **tail = &v->kids, *k;
	char *key = NULL;

	p->pos++;
	jp_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		jp_ws(p);
		if (close == '}') {
			if (p->pos >= p->len || p->s[p->pos] != '"') {
				jp_fail(p, "expected a member name");
				return -1;
			}
			if ((key = jp_string(p)) == NULL)
				return -1;
			jp_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				free(key);
				jp_fail(p, "expected ':'");
				return -1;
			}
			p->pos++;
		}
		if ((k = jp_value(p, depth + 1)) == NULL) {
			free(key);
			return -1;
		}
		k->key = key;
		key = NULL;
		*tail = k;
		tail = &k->next;
		v->nkids++;
		jp_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		jp_fail(p, close == '}' ? "expected ',' or '}'" :
		    "expected ',' or ']'");
		return -1;
	}
}

static struct jsonr *
jp_value(struct jp *p, int depth)
{
	struct jsonr *v;
	char c;

	if (depth > JSONR_MAX_DEPTH) {
		jp_fail(p, "nested deeper than %d", JSONR_MAX_DEPTH);
		return NULL;
	}
	jp_ws(p);
	if (p->pos >= p->len) {
		jp_fail(p, "unexpected end");
		return NULL;
	}
	if ((v = calloc(1, sizeof(*v))) == NULL) {
		jp_fail(p, "out of memory");
		return NULL;
	}
	c = p->s[p->pos];
	if (c == '{' || c == '[') {
		v->type = c == '{' ? JSONR_OBJ : JSONR_ARR;
		if (jp_list(p, v, depth, c == '{' ? '}' : ']') < 0)
			goto bad;
	} else if (c == '"') {
		v->type = JSONR_STR;
		if ((v->str = jp_string(p)) == NULL)
			goto bad;
	} else if (jp_lit(p, "true")) {
		v->type = JSONR_BOOL;
		v->num = 1;
	} else if (jp_lit(p, "false")) {
		v->type = JSONR_BOOL;
	} else if (jp_lit(p, "null")) {
		v->type = JSONR_NULL;
	} else {
		v->type = JSONR_NUM;
		if (jp_number(p, &v->num) < 0)
			goto bad;
	}
	return v;
bad:
	jsonr_free(v);
	return NULL;
}

struct jsonr *
jsonr_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct jp p = { .s = text, .len = len, .err = err, .errlen = errlen };
	struct jsonr *v;

	if (errlen > 0)
		err[0] = '\0';
	if (len > JSONR_MAX_TEXT) {
		jp_fail(&p, "text of %zu bytes (at most %u)", len,
		    JSONR_MAX_TEXT);
		return NULL;
	}
	if ((v = jp_value(&p, 0)) == NULL)
		return NULL;
	jp_ws(&p);
	if (p.pos != p.len) {
		jp_fail(&p, "trailing data");
		jsonr_free(v);
		return NULL;
	}
	return v;
}

struct jsonr *
jsonr_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL, e[200];
	size_t n = 0, cap = 0, got;
	struct jsonr *v;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cap - n < 65536) {
			char *nb;

			if (cap > JSONR_MAX_TEXT ||
			    (nb = realloc(buf, cap + 65536 + 1)) == NULL) {
				snprintf(err, errlen, "%s: too large or out of "
				    "memory", path);
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap += 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	v = jsonr_parse(buf != NULL ? buf : "", n, e, sizeof(e));
	if (v == NULL)
		snprintf(err, errlen, "%s: not JSON: %s", path, e);
	free(buf);
	return v;
}

void
jsonr_free(struct jsonr *v)
{
	while (v != NULL) {
		struct jsonr *next = v->next;

		jsonr_free(v->kids);
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

const struct jsonr *
jsonr_get(const struct jsonr *v, const char *key)
{
	if (v == NULL || v->type != JSONR_OBJ)
		return NULL;
	for (const struct jsonr *k = v->kids; k != NULL; k = k->next)
		if (strcmp(k->key, key) == 0)
			return k;
	return NULL;
}

double
jsonr_num(const struct jsonr *v, const char *key, double def)
{
	const struct jsonr *k = jsonr_get(v, key);

	return k != NULL && (k->type == JSONR_NUM || k->type == JSONR_BOOL) ?
	    k->num : def;
}

const char *
jsonr_str(const struct jsonr *v, const char *key)
{
	const struct jsonr *k = jsonr_get(v, key);

	return k != NULL && k->type == JSONR_STR ? k->str : NULL;
}
