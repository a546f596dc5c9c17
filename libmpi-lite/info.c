/*
 * info.c: MPI_Info objects, ordered lists of (key, value) strings. mpiv
 * reads no hints; info objects exist so programs that pass them work.
 * MPI_INFO_ENV is filled on first use with what the job knows of itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

struct info_kv {
	char *key, *val;
	struct info_kv *next;
};

struct mpiv_info {
	struct info_kv *head;
	int n;
	bool predefined;
	bool filled;		/* MPI_INFO_ENV: environment keys added */
};

struct mpiv_info mpiv_info_null = { .predefined = true, .filled = true };
struct mpiv_info mpiv_info_env = { .predefined = true };

static int info_put(MPI_Info info, const char *key, const char *value);

/* MPI_INFO_ENV's keys: the standard's "maxprocs" and "host". */
static void
info_fill_env(MPI_Info info)
{
	char buf[32];
	const char *node = getenv("MPIV_NODE");

	if (info != &mpiv_info_env || info->filled)
		return;
	info->filled = true;
	if (mpiv_state.world_size > 0) {
		snprintf(buf, sizeof(buf), "%d", mpiv_state.world_size);
		info_put(info, "maxprocs", buf);
	}
	if (node != NULL && *node != '\0' &&
	    strlen(node) <= MPI_MAX_INFO_VAL)
		info_put(info, "host", node);
}

/* MPI_SUCCESS if info is a live object (not MPI_INFO_NULL). */
static int
info_check(MPI_Info info)
{
	if (info == MPI_INFO_NULL || info == &mpiv_info_null)
		return MPI_ERR_INFO;
	info_fill_env(info);
	return MPI_SUCCESS;
}

static int
info_check_key(const char *key)
{
	size_t n;

	if (key == NULL)
		return MPI_ERR_INFO_KEY;
	n = strlen(key);
	return n == 0 || n > MPI_MAX_INFO_KEY ? MPI_ERR_INFO_KEY : MPI_SUCCESS;
}

static struct info_kv **
info_find(MPI_Info info, const char *key)
{
	struct info_kv **p;

	for (p = &info->head; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0)
			return p;
	return NULL;
}

/* Sets key to value, replacing an old value; appends new keys. */
static int
info_put(MPI_Info info, const char *key, const char *value)
{
	struct info_kv **p = info_find(info, key), *kv;
	char *v = strdup(value);

	if (v == NULL)
		return MPI_ERR_NO_MEM;
	if (p != NULL) {
		free((*p)->val);
		(*p)->val = v;
		return MPI_SUCCESS;
	}
	if ((kv = calloc(1, sizeof(*kv))) == NULL ||
	    (kv->key = strdup(key)) == NULL) {
		free(kv);
		free(v);
		return MPI_ERR_NO_MEM;
	}
	kv->val = v;
	for (p = &info->head; *p != NULL; p = &(*p)->next)
		;
	*p = kv;
	info->n++;
	return MPI_SUCCESS;
}

int
MPI_Info_create(MPI_Info *info)
{
	struct mpiv_info *i;

	if (info == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_create");
	if ((i = calloc(1, sizeof(*i))) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create");
	i->filled = true;
	*info = i;
	return MPI_SUCCESS;
}

int
MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS ||
	    (rc = info_check_key(key)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_set");
	if (value == NULL || strlen(value) > MPI_MAX_INFO_VAL)
		return mpiv_err(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set");
	if ((rc = info_put(info, key, value)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_set");
	return MPI_SUCCESS;
}

int
MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value,
    int *flag)
{
	struct info_kv **p;
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS ||
	    (rc = info_check_key(key)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_get");
	if (valuelen < 0 || flag == NULL || (value == NULL && valuelen > 0))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_get");
	*flag = 0;
	if ((p = info_find(info, key)) == NULL)
		return MPI_SUCCESS;
	/* value has room for valuelen characters and the NUL. */
	if (value != NULL)
		snprintf(value, (size_t)valuelen + 1, "%s", (*p)->val);
	*flag = 1;
	return MPI_SUCCESS;
}

int
MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
    int *flag)
{
	struct info_kv **p;
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS ||
	    (rc = info_check_key(key)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_get_valuelen");
	if (valuelen == NULL || flag == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_get_valuelen");
	*flag = 0;
	if ((p = info_find(info, key)) == NULL)
		return MPI_SUCCESS;
	*valuelen = (int)strlen((*p)->val);
	*flag = 1;
	return MPI_SUCCESS;
}

/* MPI-4: *buflen in, the room in value (the NUL included); out, the
   value's length + 1, whatever was copied. */
int
MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value,
    int *flag)
{
	struct info_kv **p;
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS ||
	    (rc = info_check_key(key)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_get_string");
	if (buflen == NULL || *buflen < 0 || flag == NULL ||
	    (value == NULL && *buflen > 0))
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_get_string");
	*flag = 0;
	if ((p = info_find(info, key)) == NULL)
		return MPI_SUCCESS;
	if (*buflen > 0)
		snprintf(value, (size_t)*buflen, "%s", (*p)->val);
	*buflen = (int)strlen((*p)->val) + 1;
	*flag = 1;
	return MPI_SUCCESS;
}

int
MPI_Info_delete(MPI_Info info, const char *key)
{
	struct info_kv **p, *kv;
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS ||
	    (rc = info_check_key(key)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_delete");
	if ((p = info_find(info, key)) == NULL)
		return mpiv_err(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
	kv = *p;
	*p = kv->next;
	free(kv->key);
	free(kv->val);
	free(kv);
	info->n--;
	return MPI_SUCCESS;
}

int
MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_get_nkeys");
	if (nkeys == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys");
	*nkeys = info->n;
	return MPI_SUCCESS;
}

int
MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	struct info_kv *kv;
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_get_nthkey");
	if (key == NULL || n < 0 || n >= info->n)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey");
	for (kv = info->head; n > 0; n--)
		kv = kv->next;
	snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", kv->key);
	return MPI_SUCCESS;
}

int
MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	MPI_Info ni;
	int rc;

	if ((rc = info_check(info)) != MPI_SUCCESS)
		return mpiv_err(NULL, rc, "MPI_Info_dup");
	if (newinfo == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Info_dup");
	if ((rc = MPI_Info_create(&ni)) != MPI_SUCCESS)
		return rc;
	for (struct info_kv *kv = info->head; kv != NULL; kv = kv->next)
		if ((rc = info_put(ni, kv->key, kv->val)) != MPI_SUCCESS) {
			MPI_Info_free(&ni);
			return mpiv_err(NULL, rc, "MPI_Info_dup");
		}
	*newinfo = ni;
	return MPI_SUCCESS;
}

int
MPI_Info_free(MPI_Info *info)
{
	struct info_kv *kv, *next;

	if (info == NULL || info_check(*info) != MPI_SUCCESS ||
	    (*info)->predefined)
		return mpiv_err(NULL, MPI_ERR_INFO, "MPI_Info_free");
	for (kv = (*info)->head; kv != NULL; kv = next) {
		next = kv->next;
		free(kv->key);
		free(kv->val);
		free(kv);
	}
	free(*info);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}
