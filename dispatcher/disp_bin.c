/*
 * disp_bin.c: program shipping through the dispatcher (volunteer nodes
 * share no file system with the submitter). A job submitted with
 * binary_hash has its program fetched from the client the first time a
 * node asks for it (BinaryGet), checked against the hash, kept in memory
 * while the job lives and sent to every node that asks. Nodes keep it
 * in their content-addressed cache (node-agent/node_bin.c), so a node that
 * ran the program before never asks again. The dispatcher never carries
 * application messages; a program is not one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "disp_priv.h"
#include "log.h"

#define DBIN_CHUNK	(1u << 20)	/* bytes per BinaryData frame */

/* Checks and records JobSubmit's program hash and size. 0 or -1. */
int
dbin_submit(struct djob *j, const Mpiv__JobSubmit *js, const char **err)
{
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

/* Sends the whole program to node, then BinaryEnd. */
static void
dbin_send(struct djob *j, struct dpeer *node)
{
	Mpiv__BinaryData bd = MPIV__BINARY_DATA__INIT;
	Mpiv__BinaryEnd be = MPIV__BINARY_END__INIT;

	bd.hash = j->bin_hash;
	for (uint64_t off = 0; off < j->bin_size; off += DBIN_CHUNK) {
		uint64_t len = j->bin_size - off;

		if (len > DBIN_CHUNK)
			len = DBIN_CHUNK;
		bd.offset = off;
		(void)conn_send(node->c, MPIV__MSG_TYPE__MSG_BINARY_DATA,
		    &bd.base, j->bin + off, (uint32_t)len);
	}
	be.hash = j->bin_hash;
	be.size = j->bin_size;
	be.error = (char *)"";
	(void)conn_send(node->c, MPIV__MSG_TYPE__MSG_BINARY_END, &be.base, NULL,
	    0);
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
	free(j->bin);
	free(j->bin_wait);
}
