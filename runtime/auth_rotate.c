/*
 * auth_rotate.c: secret files holding several keys, and the server's
 * check of a Hello against all the keys it still accepts
 * (auth_rotate.h). The parser reads every format of secret file;
 * auth_rotate_write.c writes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth_rotate.h"

/* ---------------- times ---------------- */

#define AUTH_TIME_MAX 253402300799LL	/* 9999-12-31T23:59:59Z */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar. */
static int64_t
auth_days(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static unsigned
auth_mdays(int64_t y, unsigned m)
{
	static const unsigned md[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30,
	    31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : md[m - 1];
}

/* Exactly w decimal digits at *p (advanced): their value, or -1. */
static int64_t
auth_digits(const char **p, const char *end, int w)
{
	int64_t v = 0;

	if (end - *p < w)
		return -1;
	for (int i = 0; i < w; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (**p - '0');
	}
	return v;
}

static bool
auth_all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool
auth_lit(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return false;
	(*p)++;
	return true;
}

int
auth_parse_time(const char *s, size_t n, int64_t *out)
{
	const char *p = s, *end = s + n;
	int64_t y, mo, d, h, mi, sec, t, oh, om;
	int sign;

	if (n == 0)
		return -1;
	if (auth_all_digits(s, n)) {		/* epoch seconds */
		if (n > 12)
			return -1;
		for (t = 0; p < end; p++)
			t = t * 10 + (*p - '0');
		if (t > AUTH_TIME_MAX)
			return -1;
		*out = t;
		return 0;
	}
	if ((y = auth_digits(&p, end, 4)) < 1970 || !auth_lit(&p, end, '-') ||
	    (mo = auth_digits(&p, end, 2)) < 1 || mo > 12 ||
	    !auth_lit(&p, end, '-') || (d = auth_digits(&p, end, 2)) < 1 ||
	    d > auth_mdays(y, (unsigned)mo))
		return -1;
	if (!auth_lit(&p, end, 'T') && !auth_lit(&p, end, 't'))
		return -1;
	if ((h = auth_digits(&p, end, 2)) < 0 || h > 23 ||
	    !auth_lit(&p, end, ':') || (mi = auth_digits(&p, end, 2)) < 0 ||
	    mi > 59 || !auth_lit(&p, end, ':') ||
	    (sec = auth_digits(&p, end, 2)) < 0 || sec > 60)
		return -1;
	if (auth_lit(&p, end, '.')) {		/* a fraction: dropped */
		if (p == end || *p < '0' || *p > '9')
			return -1;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	t = ((auth_days(y, (unsigned)mo, (unsigned)d) * 24 + h) * 60 + mi) *
	    60 + sec;
	if (auth_lit(&p, end, 'Z') || auth_lit(&p, end, 'z')) {
		/* UTC */
	} else {
		if (auth_lit(&p, end, '+'))
			sign = 1;
		else if (auth_lit(&p, end, '-'))
			sign = -1;
		else
			return -1;
		if ((oh = auth_digits(&p, end, 2)) < 0 || oh > 23 ||
		    !auth_lit(&p, end, ':') ||
		    (om = auth_digits(&p, end, 2)) < 0 || om > 59)
			return -1;
		t -= sign * (oh * 3600 + om * 60);
	}
	if (p != end || t < 0 || t > AUTH_TIME_MAX)
		return -1;
	*out = t;
	return 0;
}

void
auth_format_time(int64_t t, char *out, size_t outlen)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t < 0 || t > AUTH_TIME_MAX || gmtime_r(&tt, &tm) == NULL) {
		snprintf(out, outlen, "%lld", (long long)t);
		return;
	}
	strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int
auth_parse_duration(const char *s, int64_t *out)
{
	int64_t v = 0, unit = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > 10LL * 366 * 86400)
			return -1;
	}
	switch (*p) {
	case '\0':
		break;
	case 's':
		break;
	case 'm':
		unit = 60;
		break;
	case 'h':
		unit = 3600;
		break;
	case 'd':
		unit = 86400;
		break;
	default:
		return -1;
	}
	if (*p != '\0' && p[1] != '\0')
		return -1;
	if (v * unit > 10LL * 366 * 86400)
		return -1;
	*out = v * unit;
	return 0;
}

/* ---------------- keys ---------------- */

void
auth_fingerprint(const struct auth_key *k, char out[AUTH_FP_HEX + 1])
{
	static const char label[] = "mpiv key fingerprint v1";
	uint8_t h[AUTH_HASH_LEN];

	auth_hmac_sha256(k->k, k->len, label, sizeof(label) - 1, h);
	auth_hex(h, AUTH_FP_HEX / 2, out);
}

bool
auth_key_equal(const struct auth_key *a, const struct auth_key *b)
{
	return a->len == b->len && auth_equal(a->k, b->k, a->len);
}

/* ---------------- parsing ---------------- */

static bool
auth_is_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') ||
		    ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')))
			return false;
	return true;
}

bool
auth_is_token(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || (unsigned char)p[i] >= 0x7f)
			return false;
	return true;
}

static bool
auth_starts(const char *buf, size_t n, const char *tag)
{
	size_t t = strlen(tag);

	return n >= t && memcmp(buf, tag, t) == 0;
}

/* The next field of [*p, end) split on spaces and tabs. */
static bool
auth_field(const char **p, const char *end, const char **f, size_t *flen)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	if (*p == end)
		return false;
	*f = *p;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	*flen = (size_t)(*p - *f);
	return true;
}

static bool
auth_word(const char *f, size_t flen, const char *w)
{
	return flen == strlen(w) && memcmp(f, w, flen) == 0;
}

/* The one-line formats of auth.h. */
static int
auth_parse_v0(struct auth_file *f, const char *buf, size_t n,
    const char *path, char *err, size_t errlen)
{
	size_t tag = strlen(AUTH_NODE_KEY_TAG);

	f->n = 1;
	f->e[0].kind = AUTH_E_CURRENT;
	f->e[0].until = AUTH_NO_DEADLINE;
	if (auth_starts(buf, n, AUTH_NODE_KEY_TAG)) {
		f->node = true;
		f->e[0].val = buf + tag;
		f->e[0].len = n - tag;
		if (n - tag != 2 * AUTH_HASH_LEN ||
		    !auth_is_hex(buf + tag, n - tag)) {
			snprintf(err, errlen, "node key file %s is damaged "
			    "(want \"%s\" and 64 hex digits)", path,
			    AUTH_NODE_KEY_TAG);
			return -1;
		}
		return 0;
	}
	f->e[0].val = buf;
	f->e[0].len = n;
	if (n < AUTH_MIN_SECRET) {
		snprintf(err, errlen, "secret in %s is too short (%zu bytes, "
		    "want at least %u; mpiv secret new FILE makes one)", path,
		    n, AUTH_MIN_SECRET);
		return -1;
	}
	return 0;
}

/* The header of a v1 file: its version, or -1 (err set). */
static int
auth_parse_header(struct auth_file *f, const char *line, size_t len,
    const char *path, char *err, size_t errlen)
{
	const char *tag = f->node ? AUTH_NODE_KEYS_TAG : AUTH_SECRETS_TAG;
	size_t t = strlen(tag);
	const char *v = line + t;
	size_t vlen = len - t;

	if (vlen == 1 && *v == '0' + AUTH_FILE_VERSION)
		return AUTH_FILE_VERSION;
	if (vlen > 0 && vlen < 10 && auth_all_digits(v, vlen))
		snprintf(err, errlen, "secret file %s has format version %.*s; "
		    "this mpiv reads version %d (and the one-line format)",
		    path, (int)vlen, v, AUTH_FILE_VERSION);
	else
		snprintf(err, errlen, "secret file %s line 1: want \"%s%d\"",
		    path, tag, AUTH_FILE_VERSION);
	return -1;
}

/* One key of a v1 line: the right shape for the file's kind. */
static int
auth_check_value(const struct auth_file *f, const char *v, size_t vlen,
    const char *path, unsigned lineno, char *err, size_t errlen)
{
	if (f->node) {
		if (vlen == 2 * AUTH_HASH_LEN && auth_is_hex(v, vlen))
			return 0;
		snprintf(err, errlen, "secret file %s line %u: a node key is "
		    "64 hex digits", path, lineno);
		return -1;
	}
	if (vlen < AUTH_MIN_SECRET || vlen > AUTH_MAX_SECRET) {
		snprintf(err, errlen, "secret file %s line %u: a secret has "
		    "%u to %u bytes (this one %zu)", path, lineno,
		    AUTH_MIN_SECRET, AUTH_MAX_SECRET, vlen);
		return -1;
	}
	if (!auth_is_token(v, vlen)) {
		snprintf(err, errlen, "secret file %s line %u: a secret has "
		    "no control characters", path, lineno);
		return -1;
	}
	return 0;
}

static int
auth_parse_v1(struct auth_file *f, const char *buf, size_t n,
    const char *path, char *err, size_t errlen)
{
	const char *end = buf + n, *line = buf, *eol, *p, *kw, *a, *b, *x;
	size_t kwlen, alen, blen, xlen, len;
	unsigned lineno = 0, lines[AUTH_MAX_KEYS];
	size_t ncur = 0, nnext = 0;
	struct auth_entry *e, cur;
	int64_t until;

	f->version = 0;
	f->n = 0;
	for (; line < end; line = eol + (eol < end)) {
		eol = memchr(line, '\n', (size_t)(end - line));
		if (eol == NULL)
			eol = end;
		lineno++;
		len = (size_t)(eol - line);
		while (len > 0 && (line[len - 1] == '\r' ||
		    line[len - 1] == ' ' || line[len - 1] == '\t'))
			len--;
		if (memchr(line, '\0', len) != NULL) {
			snprintf(err, errlen, "secret file %s line %u: a NUL "
			    "byte", path, lineno);
			return -1;
		}
		if (lineno == 1) {
			if ((f->version = auth_parse_header(f, line, len, path,
			    err, errlen)) < 0)
				return -1;
			continue;
		}
		p = line;
		if (!auth_field(&p, line + len, &kw, &kwlen) || *kw == '#')
			continue;
		a = b = NULL;
		alen = blen = 0;
		(void)auth_field(&p, line + len, &a, &alen);
		(void)auth_field(&p, line + len, &b, &blen);
		if (auth_field(&p, line + len, &x, &xlen)) {
			snprintf(err, errlen, "secret file %s line %u: too "
			    "many fields (white space in a secret?)", path,
			    lineno);
			return -1;
		}
		if (f->n == AUTH_MAX_KEYS) {
			snprintf(err, errlen, "secret file %s line %u: more "
			    "than %u keys", path, lineno, AUTH_MAX_KEYS);
			return -1;
		}
		e = &f->e[f->n];
		e->until = AUTH_NO_DEADLINE;
		if (auth_word(kw, kwlen, "current") ||
		    auth_word(kw, kwlen, "next")) {
			e->kind = *kw == 'c' ? AUTH_E_CURRENT : AUTH_E_NEXT;
			if (a == NULL || b != NULL) {
				snprintf(err, errlen, "secret file %s line %u: "
				    "want \"%.*s KEY\"", path, lineno,
				    (int)kwlen, kw);
				return -1;
			}
			e->val = a;
			e->len = alen;
		} else if (auth_word(kw, kwlen, "accept-until")) {
			e->kind = AUTH_E_ACCEPT;
			if (b == NULL) {
				snprintf(err, errlen, "secret file %s line %u: "
				    "want \"accept-until TIME KEY\"", path,
				    lineno);
				return -1;
			}
			if (auth_parse_time(a, alen, &until) < 0) {
				snprintf(err, errlen, "secret file %s line %u: "
				    "bad time \"%.*s\" (want RFC 3339, e.g. "
				    "2026-11-28T03:30:00Z, or seconds since the "
				    "epoch)", path, lineno,
				    (int)(alen > 40 ? 40 : alen), a);
				return -1;
			}
			e->until = until;
			e->val = b;
			e->len = blen;
		} else {
			snprintf(err, errlen, "secret file %s line %u: unknown "
			    "keyword \"%.*s\" (want current, accept-until or "
			    "next)", path, lineno, (int)(kwlen > 20 ? 20 :
			    kwlen), kw);
			return -1;
		}
		if (auth_check_value(f, e->val, e->len, path, lineno, err,
		    errlen) < 0)
			return -1;
		for (size_t i = 0; i < f->n; i++)
			if (f->e[i].len == e->len &&
			    memcmp(f->e[i].val, e->val, e->len) == 0) {
				snprintf(err, errlen, "secret file %s line %u: "
				    "the key of line %u again", path, lineno,
				    lines[i]);
				return -1;
			}
		if (e->kind == AUTH_E_CURRENT && ncur++ > 0) {
			snprintf(err, errlen, "secret file %s line %u: a "
			    "second current key", path, lineno);
			return -1;
		}
		if (e->kind == AUTH_E_NEXT && nnext++ > 0) {
			snprintf(err, errlen, "secret file %s line %u: a "
			    "second next key", path, lineno);
			return -1;
		}
		lines[f->n++] = lineno;
	}
	if (ncur == 0) {
		snprintf(err, errlen, "secret file %s has no current key (a "
		    "line \"current KEY\")", path);
		return -1;
	}
	/* The current key first, the others in file order. */
	for (size_t i = 0; f->e[0].kind != AUTH_E_CURRENT; i++)
		if (f->e[i + 1].kind == AUTH_E_CURRENT) {
			cur = f->e[i + 1];
			memmove(&f->e[1], &f->e[0], (i + 1) * sizeof(f->e[0]));
			f->e[0] = cur;
		}
	return 0;
}

int
auth_file_parse(struct auth_file *f, const char *buf, size_t n,
    const char *path, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	if (path == NULL)
		path = "(secret)";
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
	    buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	if (n == 0) {
		snprintf(err, errlen, "secret file %s is empty", path);
		return -1;
	}
	if (auth_starts(buf, n, AUTH_SECRETS_TAG))
		return auth_parse_v1(f, buf, n, path, err, errlen);
	if (auth_starts(buf, n, AUTH_NODE_KEYS_TAG)) {
		f->node = true;
		return auth_parse_v1(f, buf, n, path, err, errlen);
	}
	return auth_parse_v0(f, buf, n, path, err, errlen);
}

int
auth_file_keys(const struct auth_file *f, struct auth_keys *k,
    const char *path, char *err, size_t errlen)
{
	uint8_t node[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1];
	struct auth_key *s, *nk;
	int rc = 0;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < f->n && rc == 0; i++) {
		const struct auth_entry *e = &f->e[i];

		s = i == 0 ? &k->secret : &k->accept[i - 1].secret;
		nk = i == 0 ? &k->node : &k->accept[i - 1].node;
		if (i > 0)
			k->accept[i - 1].until = e->until;
		if (f->node) {
			if (e->len == sizeof(hex) - 1)
				memcpy(hex, e->val, sizeof(hex) - 1);
			hex[e->len == sizeof(hex) - 1 ? sizeof(hex) - 1 : 0] =
			    '\0';
			if (auth_unhex(hex, node, sizeof(node)) < 0) {
				snprintf(err, errlen, "node key file %s is "
				    "damaged", path != NULL ? path : "");
				rc = -1;
			}
		} else {
			auth_key_set(s, e->val, e->len);
			auth_node_key(s, node);
		}
		auth_key_set(nk, node, sizeof(node));
	}
	k->naccept = f->n > 0 ? f->n - 1 : 0;
	k->enabled = rc == 0 && f->n > 0;
	k->cluster = k->enabled && !f->node;
	auth_wipe(node, sizeof(node));
	auth_wipe(hex, sizeof(hex));
	if (rc < 0)
		auth_wipe(k, sizeof(*k));
	return rc;
}

int
auth_parse_keys(struct auth_keys *k, const char *buf, size_t n,
    const char *path, char *err, size_t errlen)
{
	struct auth_file f;
	int rc;

	memset(k, 0, sizeof(*k));
	rc = auth_file_parse(&f, buf, n, path, err, errlen);
	if (rc == 0)
		rc = auth_file_keys(&f, k, path, err, errlen);
	auth_wipe(&f, sizeof(f));
	return rc;
}

int
auth_load_fd(struct auth_keys *k, int fd, const char *path, char *err,
    size_t errlen)
{
	char buf[AUTH_MAX_FILE + 1];
	size_t n;
	int rc;

	memset(k, 0, sizeof(*k));
	if (auth_read_fd(fd, path, buf, sizeof(buf), &n, err, errlen) < 0)
		return -1;
	rc = auth_parse_keys(k, buf, n, path, err, errlen);
	auth_wipe(buf, sizeof(buf));
	return rc;
}

/* ---------------- checking ---------------- */

enum auth_kind { AUTH_K_SECRET, AUTH_K_NODE, AUTH_K_DERIVED };

/* The key of kind of accepted secret i (i -1: the current one). */
static void
auth_kind_key(const struct auth_server *as, enum auth_kind kind, int i,
    const Mpiv__Hello *h, struct auth_key *out)
{
	const struct auth_keys *ring = as->ring;
	const struct auth_key *s = i < 0 ? &ring->secret :
	    &ring->accept[i].secret;

	if (kind == AUTH_K_SECRET)
		*out = *s;
	else if (kind == AUTH_K_NODE)
		*out = i < 0 ? ring->node : ring->accept[i].node;
	else
		as->derive(as->arg, s, h, out);
}

const char *
auth_check_hello_any(const struct auth_server *as, struct auth_key *key,
    const uint8_t nonce_s[AUTH_NONCE_LEN], const struct auth_offer *offer,
    const Mpiv__Hello *h, uint8_t reply_proof[AUTH_HASH_LEN])
{
	static __thread char why[128];
	const struct auth_keys *ring = as != NULL ? as->ring : NULL;
	struct auth_key cand;
	enum auth_kind kind;
	const char *r;
	char t[AUTH_TIME_LEN];
	int64_t now;

	r = auth_check_hello(key, nonce_s, offer, h, reply_proof);
	if (r == NULL || ring == NULL || !ring->enabled ||
	    ring->naccept == 0 || strcmp(r, AUTH_ERR_FAILED) != 0 ||
	    h->auth_proof.len != AUTH_HASH_LEN)
		return r;
	if (ring->cluster && auth_key_equal(key, &ring->secret))
		kind = AUTH_K_SECRET;
	else if (auth_key_equal(key, &ring->node))
		kind = AUTH_K_NODE;
	else if (ring->cluster && as->derive != NULL) {
		auth_kind_key(as, AUTH_K_DERIVED, -1, h, &cand);
		if (cand.len == 0 || !auth_key_equal(key, &cand)) {
			auth_wipe(&cand, sizeof(cand));
			return r;
		}
		kind = AUTH_K_DERIVED;
	} else
		return r;
	now = (int64_t)time(NULL);
	for (size_t i = 0; i < ring->naccept && i < AUTH_MAX_KEYS - 1; i++) {
		auth_kind_key(as, kind, (int)i, h, &cand);
		if (cand.len == 0 || auth_check_hello(&cand, nonce_s, offer, h,
		    reply_proof) != NULL)
			continue;
		if (now >= ring->accept[i].until) {
			auth_wipe(&cand, sizeof(cand));
			auth_wipe(reply_proof, AUTH_HASH_LEN);
			auth_format_time(ring->accept[i].until, t, sizeof(t));
			snprintf(why, sizeof(why), "authentication failed: "
			    "%s retired at %s", kind == AUTH_K_NODE ?
			    "node key" : "secret", t);
			return why;
		}
		*key = cand;
		auth_wipe(&cand, sizeof(cand));
		return NULL;
	}
	auth_wipe(&cand, sizeof(cand));
	return r;
}

void
auth_keys_describe(const struct auth_keys *k, int64_t now, char *buf,
    size_t cap)
{
	char fp[AUTH_FP_HEX + 1], t[AUTH_TIME_LEN];
	size_t off;
	int w;

	if (!k->enabled) {
		snprintf(buf, cap, "no keys");
		return;
	}
	auth_fingerprint(k->cluster ? &k->secret : &k->node, fp);
	w = snprintf(buf, cap, "%s current=%s", k->cluster ? "secret" :
	    "node-key", fp);
	for (size_t i = 0; i < k->naccept && w >= 0 && (size_t)w < cap; i++) {
		const struct auth_accept *a = &k->accept[i];

		off = (size_t)w;
		auth_fingerprint(k->cluster ? &a->secret : &a->node, fp);
		auth_format_time(a->until, t, sizeof(t));
		w = (int)off + snprintf(buf + off, cap - off, " %s=%s%s%s",
		    a->until == AUTH_NO_DEADLINE ? "next" : now < a->until ?
		    "accepted" : "retired", fp,
		    a->until == AUTH_NO_DEADLINE ? "" : now < a->until ?
		    ",until=" : ",at=", a->until == AUTH_NO_DEADLINE ? "" : t);
	}
}
