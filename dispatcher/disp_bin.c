/*
 * disp_bin.c: program shipping through the dispatcher (volunteer nodes
 * share no file system with the submitter). A job submitted with
 * binary_hash has its program fetched from the client the first time a
 * node asks for it (BinaryGet), checked against the hash, kept in memory
 * while the job lives and sent to every node that asks. Nodes keep it
 * in their content-addressed cache (node-agent/node_bin.c), so a node that
 * ran the program before never asks again. The dispatcher never carries
 * application messages; a program is not one.
 *
 * A job's stdin travels the same way to the nodes, but comes whole with
 * the submission (JobSubmit's payload, at most DISP_MAX_STDIN): the
 * client has it in memory already, and a rank restarted after the client
 * is gone still needs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "disp_priv.h"
#include "log.h"

#define DBIN_CHUNK	(1u << 20)	/* bytes per BinaryData frame */

/*
 * Checks and keeps JobSubmit's stdin (payload, len): its size and hash
 * must be what the submission says. 0 or -1 (*err).
 */
static int
dbin_submit_stdin(struct djob *j, const Mpiv__JobSubmit *js,
    const uint8_t *payload, uint32_t len, const char **err)
{
	uint8_t sum[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1];

	j->in_rank = -1;
	if (*js->stdin_hash == '\0') {
		if (len > 0) {
			*err = "stdin bytes without their hash";
			return -1;
		}
		return 0;
	}
	if (!auth_hash_hex_ok(js->stdin_hash) || js->stdin_size == 0 ||
	    js->stdin_size > DISP_MAX_STDIN || js->stdin_size != len) {
		*err = "bad stdin hash or size (up to 64 MiB of stdin)";
		return -1;
	}
	if (js->stdin_rank < -1 || js->stdin_rank >= js->nranks) {
		*err = "the rank to read stdin is not a rank of the job";
		return -1;
	}
	auth_sha256(payload, len, sum);
	auth_hex(sum, sizeof(sum), hex);
	if (strcmp(hex, js->stdin_hash) != 0) {
		*err = "the stdin sent does not match its hash";
		return -1;
	}
	if ((j->in = malloc(len)) == NULL) {
		*err = "dispatcher out of memory for the job's stdin";
		return -1;
	}
	memcpy(j->in, payload, len);
	memcpy(j->in_hash, hex, sizeof(j->in_hash));
	j->in_size = len;
	j->in_rank = js->stdin_rank;
	log_info("dispatcher job stdin hash=%.16s bytes=%u rank=%d", hex, len,
	    j->in_rank);
	return 0;
}

/* Whether rank r of j reads the job's stdin (else /dev/null). */
bool
dbin_stdin_for(const struct djob *j, int r)
{
	return j->in_size > 0 && (j->in_rank < 0 || j->in_rank == r);
}

/* Checks and records JobSubmit's program hash and size and its stdin.
   0 or -1. */
int
dbin_submit(struct djob *j, const Mpiv__JobSubmit *js,
    const uint8_t *payload, uint32_t len, const char **err)
{
	if (dbin_submit_stdin(j, js, payload, len, err) < 0)
		return -1;
	if (*js->binary_hash == '\0')
		return 0;
	if (!auth_hash_hex_ok(js->binary_hash) || js->binary_size == 0 ||
	    js->binary_size > DISP_MAX_BINARY) {
		*err = "bad program hash or size (programs up to 1 GiB ship)";
		return -1;
	}
	memcpy(j->bin_hash, js->binary_hash, sizeof(j->bin_hash));
	j->bin_size = js->binary_size;
	return 0;
}

/* Sends bytes (a program or a stdin) to node, then BinaryEnd. */
static void
dbin_send_bytes(struct dpeer *node, char *hash, const uint8_t *bytes,
    uint64_t size)
{
	Mpiv__BinaryData bd = MPIV__BINARY_DATA__INIT;
	Mpiv__BinaryEnd be = MPIV__BINARY_END__INIT;

	bd.hash = hash;
	for (uint64_t off = 0; off < size; off += DBIN_CHUNK) {
		uint64_t len = size - off;

		if (len > DBIN_CHUNK)
			len = DBIN_CHUNK;
		bd.offset = off;
		(void)conn_send(node->c, MPIV__MSG_TYPE__MSG_BINARY_DATA,
		    &bd.base, bytes + off, (uint32_t)len);
	}
	be.hash = hash;
	be.size = size;
	be.error = (char *)"";
	(void)conn_send(node->c, MPIV__MSG_TYPE__MSG_BINARY_END, &be.base, NULL,
	    0);
}

/* Sends the whole program to node, then BinaryEnd. */
static void
dbin_send(struct djob *j, struct dpeer *node)
{
	dbin_send_bytes(node, j->bin_hash, j->bin, j->bin_size);
	log_info("dispatcher program sent job=%s hash=%.16s bytes=%llu node=%s",
	    j->id, j->bin_hash, (unsigned long long)j->bin_size,
	    node->node_id);
}

static void
dbin_refuse(struct dpeer *node, const char *hash, const char *why)
{
	Mpiv__BinaryEnd be = MPIV__BINARY_END__INIT;

	be.hash = (char *)hash;
	be.error = (char *)why;
	(void)conn_send(node->c, MPIV__MSG_TYPE__MSG_BINARY_END, &be.base, NULL,
	    0);
}

/* Serves (or refuses) every node waiting for j's program. */
static void
dbin_serve_waiters(struct djob *j, const char *why)
{
	for (size_t i = 0; i < j->nbin_wait; i++) {
		struct dpeer *node = dnode_find(j->d, j->bin_wait[i]);

		if (node == NULL)
			continue;	/* gone meanwhile */
		if (why == NULL)
			dbin_send(j, node);
		else
			dbin_refuse(node, j->bin_hash, why);
	}
	free(j->bin_wait);
	j->bin_wait = NULL;
	j->nbin_wait = 0;
}

/* A node's BinaryGet. */
void
dbin_node_get(struct dpeer *node, const Mpiv__BinaryGet *bg)
{
	Mpiv__BinaryGet ask = MPIV__BINARY_GET__INIT;
	struct djob *j, *found = NULL;
	char (*nw)[80];

	/* a job's stdin: here from its submission */
	for (j = node->d->jobs; j != NULL; j = j->next)
		if (j->in_size > 0 && strcmp(j->in_hash, bg->hash) == 0) {
			dbin_send_bytes(node, j->in_hash, j->in, j->in_size);
			log_info("dispatcher stdin sent job=%s hash=%.16s "
			    "bytes=%llu node=%s", j->id, j->in_hash,
			    (unsigned long long)j->in_size, node->node_id);
			return;
		}
	for (j = node->d->jobs; j != NULL; j = j->next)
		if (j->bin_size > 0 && strcmp(j->bin_hash, bg->hash) == 0) {
			found = j;
			if (j->bin_ok)
				break;
		}
	if ((j = found) == NULL) {
		dbin_refuse(node, bg->hash, "no running job has this program");
		return;
	}
	if (j->bin_ok) {
		dbin_send(j, node);
		return;
	}
	if (j->bin_err[0] != '\0') {
		dbin_refuse(node, bg->hash, j->bin_err);
		return;
	}
	if ((nw = realloc(j->bin_wait, (j->nbin_wait + 1) *
	    sizeof(*nw))) == NULL) {
		dbin_refuse(node, bg->hash, "dispatcher out of memory");
		return;
	}
	j->bin_wait = nw;
	snprintf(j->bin_wait[j->nbin_wait++], sizeof(*nw), "%s",
	    node->node_id);
	if (j->bin_asked)
		return;
	if (j->client == NULL) {
		snprintf(j->bin_err, sizeof(j->bin_err), "the submitting "
		    "client is gone");
		dbin_serve_waiters(j, j->bin_err);
		return;
	}
	ask.hash = j->bin_hash;
	(void)conn_send(j->client->c, MPIV__MSG_TYPE__MSG_BINARY_GET, &ask.base,
	    NULL, 0);
	j->bin_asked = true;
	log_info("dispatcher asking the client for the program job=%s "
	    "hash=%.16s bytes=%llu", j->id, j->bin_hash,
	    (unsigned long long)j->bin_size);
}

/* A piece of the program from the client, in order. */
void
dbin_client_data(struct dpeer *client, const Mpiv__BinaryData *bd,
    const uint8_t *payload, uint32_t len)
{
	struct djob *j = client->job;

	if (j == NULL || !j->bin_asked || j->bin_ok || j->bin_err[0] != '\0' ||
	    strcmp(bd->hash, j->bin_hash) != 0)
		return;
	if (bd->offset != j->bin_have || len > j->bin_size - j->bin_have) {
		snprintf(j->bin_err, sizeof(j->bin_err), "the client sent it "
		    "out of order or too long");
		dbin_serve_waiters(j, j->bin_err);
		return;
	}
	if (j->bin == NULL && (j->bin = malloc(j->bin_size)) == NULL) {
		snprintf(j->bin_err, sizeof(j->bin_err), "dispatcher out of "
		    "memory for a %llu-byte program",
		    (unsigned long long)j->bin_size);
		dbin_serve_waiters(j, j->bin_err);
		return;
	}
	memcpy(j->bin + j->bin_have, payload, len);
	j->bin_have += len;
}

/* The client's BinaryEnd: the program is whole (and checked) or not. */
void
dbin_client_end(struct dpeer *client, const Mpiv__BinaryEnd *be)
{
	struct djob *j = client->job;
	uint8_t sum[AUTH_HASH_LEN];
	char hex[2 * AUTH_HASH_LEN + 1];

	if (j == NULL || !j->bin_asked || j->bin_ok || j->bin_err[0] != '\0')
		return;
	if (*be->error != '\0') {
		snprintf(j->bin_err, sizeof(j->bin_err), "%s", be->error);
	} else if (j->bin_have != j->bin_size || j->bin == NULL) {
		snprintf(j->bin_err, sizeof(j->bin_err), "the client sent "
		    "%llu of %llu bytes", (unsigned long long)j->bin_have,
		    (unsigned long long)j->bin_size);
	} else {
		auth_sha256(j->bin, j->bin_size, sum);
		auth_hex(sum, sizeof(sum), hex);
		if (strcmp(hex, j->bin_hash) != 0)
			snprintf(j->bin_err, sizeof(j->bin_err), "the program "
			    "the client sent does not match its hash");
	}
	if (j->bin_err[0] != '\0') {
		log_warnx("dispatcher cannot ship the program job=%s "
		    "reason=\"%s\"", j->id, j->bin_err);
		dbin_serve_waiters(j, j->bin_err);
		return;
	}
	j->bin_ok = true;
	log_info("dispatcher program received job=%s hash=%.16s bytes=%llu",
	    j->id, j->bin_hash, (unsigned long long)j->bin_size);
	dbin_serve_waiters(j, NULL);
}

void
dbin_free(struct djob *j)
{
	free(j->in);
	free(j->bin);
	free(j->bin_wait);
}
