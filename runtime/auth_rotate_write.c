/*
 * auth_rotate_write.c: writing secret files of several keys
 * (auth_rotate.h): a file's text, the atomic replace, `mpiv secret
 * rotate` and the node key file of every key. Only the mpiv binary
 * writes secret files; the ranks' library only reads them.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth_rotate.h"

static const char auth_file_note[] =
    "# current: dials and is accepted; accept-until: accepted until then;\n"
    "# next: accepted, becomes current at the next rotate. "
    "(mpiv secret show)\n";

int
auth_file_text(const struct auth_file *f, char *buf, size_t cap, char *err,
    size_t errlen)
{
	char t[AUTH_TIME_LEN];
	size_t off;
	int w;

	w = snprintf(buf, cap, "%s%d\n%s", f->node ? AUTH_NODE_KEYS_TAG :
	    AUTH_SECRETS_TAG, AUTH_FILE_VERSION, auth_file_note);
	if (w < 0 || (size_t)w >= cap)
		goto out_big;
	off = (size_t)w;
	for (size_t i = 0; i < f->n; i++) {
		const struct auth_entry *e = &f->e[i];

		if (!auth_is_token(e->val, e->len) || e->len > AUTH_MAX_SECRET) {
			snprintf(err, errlen, "a secret with white space or "
			    "control characters (or longer than %u bytes) "
			    "cannot go into a multi-key file: make a new "
			    "secret with mpiv secret new", AUTH_MAX_SECRET);
			return -1;
		}
		if (e->kind == AUTH_E_ACCEPT) {
			auth_format_time(e->until, t, sizeof(t));
			w = snprintf(buf + off, cap - off, "accept-until %s "
			    "%.*s\n", t, (int)e->len, e->val);
		} else {
			w = snprintf(buf + off, cap - off, "%s %.*s\n",
			    e->kind == AUTH_E_CURRENT ? "current" : "next",
			    (int)e->len, e->val);
		}
		if (w < 0 || (size_t)w >= cap - off)
			goto out_big;
		off += (size_t)w;
	}
	return 0;
out_big:
	snprintf(err, errlen, "the keys do not fit in a secret file (%zu "
	    "bytes at most)", cap - 1);
	return -1;
}

int
auth_replace_file(const char *path, const char *data, char *err,
    size_t errlen)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	size_t n = strlen(data), off = 0;
	ssize_t w;
	int fd, dfd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errlen, "path too long: %s", path);
		return -1;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot create a file beside %s: %s",
		    path, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0600) < 0)
		goto out_err;
	while (off < n) {
		if ((w = write(fd, data + off, n - off)) < 0) {
			if (errno == EINTR)
				continue;
			goto out_err;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0)
		goto out_err;
	if (close(fd) < 0) {
		fd = -1;
		goto out_err;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto out_err;
	/* The rename itself durable too. */
	snprintf(dir, sizeof(dir), "%s", path);
	if ((dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >=
	    0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
out_err:
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	(void)unlink(tmp);
	return -1;
}

int
auth_rotate_file(const char *path, int64_t now, int64_t grace, bool stage,
    char newfp[AUTH_FP_HEX + 1], char oldfp[AUTH_FP_HEX + 1], char *err,
    size_t errlen)
{
	char buf[AUTH_MAX_FILE + 1], out[AUTH_MAX_FILE + 1];
	char fresh[2 * 32 + 1];
	uint8_t rnd[32];
	struct auth_file f, g;
	struct auth_key k;
	size_t n, inext = 0;
	int rc = -1;

	newfp[0] = oldfp[0] = '\0';
	if (auth_read_file(path, buf, sizeof(buf), &n, err, errlen) < 0)
		return -1;
	if (auth_file_parse(&f, buf, n, path, err, errlen) < 0)
		goto out;
	if (f.node) {
		snprintf(err, errlen, "%s holds node keys: rotate the cluster "
		    "secret file, then derive the node key file again (mpiv "
		    "secret node-key --replace)", path);
		goto out;
	}
	if (auth_random(rnd, sizeof(rnd)) < 0) {
		snprintf(err, errlen, "getrandom: %s", strerror(errno));
		goto out;
	}
	auth_hex(rnd, sizeof(rnd), fresh);
	for (size_t i = 0; i < f.n; i++)
		if (f.e[i].kind == AUTH_E_NEXT)
			inext = i;
	memset(&g, 0, sizeof(g));
	g.version = AUTH_FILE_VERSION;
	if (stage) {
		if (inext > 0) {
			auth_key_set(&k, f.e[inext].val, f.e[inext].len);
			auth_fingerprint(&k, newfp);
			snprintf(err, errlen, "%s already stages a next secret "
			    "(%s): rotate without --stage makes it current",
			    path, newfp);
			newfp[0] = '\0';
			goto out;
		}
		g = f;
		g.version = AUTH_FILE_VERSION;
		if (g.n == AUTH_MAX_KEYS) {
			snprintf(err, errlen, "%s already holds %u keys",
			    path, AUTH_MAX_KEYS);
			goto out;
		}
		g.e[g.n++] = (struct auth_entry){ AUTH_E_NEXT,
		    AUTH_NO_DEADLINE, fresh, strlen(fresh) };
	} else {
		struct auth_entry e[AUTH_MAX_KEYS + 1];
		size_t ne = 2;

		e[0] = inext > 0 ? f.e[inext] : (struct auth_entry){
		    AUTH_E_CURRENT, AUTH_NO_DEADLINE, fresh, strlen(fresh) };
		e[0].kind = AUTH_E_CURRENT;
		e[1] = f.e[0];
		e[1].kind = AUTH_E_ACCEPT;
		e[1].until = now + grace;
		for (size_t i = 1; i < f.n; i++)
			if (i != inext)
				e[ne++] = f.e[i];
		/* Too many: the key retired longest ago goes. */
		if (ne > AUTH_MAX_KEYS) {
			size_t old = 0;

			for (size_t i = 2; i < ne; i++)
				if (e[i].until <= now && (old == 0 ||
				    e[i].until < e[old].until))
					old = i;
			if (old == 0) {
				snprintf(err, errlen, "%s holds %u keys still "
				    "accepted: wait until one retires", path,
				    AUTH_MAX_KEYS - 1);
				goto out;
			}
			memmove(&e[old], &e[old + 1],
			    (ne - old - 1) * sizeof(e[0]));
			ne--;
		}
		memcpy(g.e, e, ne * sizeof(e[0]));
		g.n = ne;
	}
	if (auth_file_text(&g, out, sizeof(out), err, errlen) < 0)
		goto out;
	if (auth_replace_file(path, out, err, errlen) < 0)
		goto out;
	auth_key_set(&k, stage ? fresh : g.e[0].val, stage ? strlen(fresh) :
	    g.e[0].len);
	auth_fingerprint(&k, newfp);
	if (!stage) {
		auth_key_set(&k, f.e[0].val, f.e[0].len);
		auth_fingerprint(&k, oldfp);
	}
	rc = 0;
out:
	auth_wipe(&k, sizeof(k));
	auth_wipe(buf, sizeof(buf));
	auth_wipe(out, sizeof(out));
	auth_wipe(fresh, sizeof(fresh));
	auth_wipe(rnd, sizeof(rnd));
	auth_wipe(&f, sizeof(f));
	auth_wipe(&g, sizeof(g));
	return rc;
}

int
auth_node_keys_file(const struct auth_keys *k, const char *path,
    bool replace, char *err, size_t errlen)
{
	char hex[AUTH_MAX_KEYS][2 * AUTH_HASH_LEN + 1];
	char out[AUTH_MAX_FILE + 1];
	struct auth_file f;
	int rc;

	if (!k->enabled || k->node.len != AUTH_HASH_LEN) {
		snprintf(err, errlen, "no key to derive the node key from");
		return -1;
	}
	memset(&f, 0, sizeof(f));
	f.node = true;
	f.version = AUTH_FILE_VERSION;
	f.n = 1 + k->naccept;
	for (size_t i = 0; i < f.n; i++) {
		const struct auth_key *nk = i == 0 ? &k->node :
		    &k->accept[i - 1].node;

		auth_hex(nk->k, AUTH_HASH_LEN, hex[i]);
		f.e[i].val = hex[i];
		f.e[i].len = 2 * AUTH_HASH_LEN;
		f.e[i].until = i == 0 ? AUTH_NO_DEADLINE :
		    k->accept[i - 1].until;
		f.e[i].kind = i == 0 ? AUTH_E_CURRENT :
		    f.e[i].until == AUTH_NO_DEADLINE ? AUTH_E_NEXT :
		    AUTH_E_ACCEPT;
	}
	if (f.n == 1)	/* the one-line format, as before rotation */
		rc = snprintf(out, sizeof(out), "%s%s\n", AUTH_NODE_KEY_TAG,
		    hex[0]) < 0 ? -1 : 0;
	else
		rc = auth_file_text(&f, out, sizeof(out), err, errlen);
	if (rc == 0)
		rc = replace ? auth_replace_file(path, out, err, errlen) :
		    auth_write_file(path, out, err, errlen);
	auth_wipe(hex, sizeof(hex));
	auth_wipe(out, sizeof(out));
	return rc;
}
