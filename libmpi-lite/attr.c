/*
 * attr.c: communicator attributes and keyvals. The predefined keys
 * (MPI_TAG_UB ... MPI_APPNUM) are answered from static values on every
 * communicator; user keyvals start at ATTR_FIRST_KEY. Each communicator
 * holds its attributes in a list, newest first, so they are deleted in
 * the reverse order of their setting.
 */
#include <stdlib.h>

#include "impl.h"

struct mpiv_attr {
	int keyval;
	void *val;
	struct mpiv_attr *next;
};

struct attr_key {
	MPI_Comm_copy_attr_function *copy;
	MPI_Comm_delete_attr_function *del;
	void *extra;
	bool live;		/* created and not freed */
	int refs;		/* attributes still set with this key */
};

#define ATTR_FIRST_KEY 16

static struct attr_key *attr_keys;
static int attr_nkeys;

/* Values handed out by pointer for the predefined keys. */
static int attr_tag_ub = MPI_TAG_UB_VALUE;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE;
static int attr_wtime_global = 0;
static int attr_universe;
static int attr_appnum = 0;
static int attr_lastused;

static bool
attr_predefined(int keyval)
{
	return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* The slot of a user keyval, or NULL if keyval names none. */
static struct attr_key *
attr_key(int keyval, bool need_live)
{
	int i = keyval - ATTR_FIRST_KEY;

	if (i < 0 || i >= attr_nkeys)
		return NULL;
	if (!attr_keys[i].live && (need_live || attr_keys[i].refs == 0))
		return NULL;
	return &attr_keys[i];
}

int
MPI_COMM_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra_state,
    void *attribute_val_in, void *attribute_val_out, int *flag)
{
	*(void **)attribute_val_out = attribute_val_in;
	*flag = 1;
	return MPI_SUCCESS;
}

int
MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
    MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
	int i;

	if (keyval == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval");
	for (i = 0; i < attr_nkeys; i++)
		if (!attr_keys[i].live && attr_keys[i].refs == 0)
			break;
	if (i == attr_nkeys) {
		struct attr_key *nk = realloc(attr_keys,
		    ((size_t)attr_nkeys + 1) * sizeof(*nk));
		if (nk == NULL)
			return mpiv_err(NULL, MPI_ERR_NO_MEM,
			    "MPI_Comm_create_keyval");
		attr_keys = nk;
		attr_nkeys++;
	}
	attr_keys[i].copy = copy_fn;
	attr_keys[i].del = delete_fn;
	attr_keys[i].extra = extra_state;
	attr_keys[i].live = true;
	attr_keys[i].refs = 0;
	*keyval = i + ATTR_FIRST_KEY;
	return MPI_SUCCESS;
}

int
MPI_Comm_free_keyval(int *keyval)
{
	struct attr_key *k;

	if (keyval == NULL || (k = attr_key(*keyval, true)) == NULL)
		return mpiv_err(NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
	/* Attributes still set keep the slot until they are deleted. */
	k->live = false;
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

static struct mpiv_attr **
attr_find(MPI_Comm c, int keyval)
{
	struct mpiv_attr **p;

	for (p = &c->attrs; *p != NULL; p = &(*p)->next)
		if ((*p)->keyval == keyval)
			return p;
	return NULL;
}

/*
 * Unlinks *p, then runs its delete callback. The callback may set or
 * delete other attributes of c (or create keyvals, which moves
 * attr_keys): nothing of the list or the key table is held across it.
 * If the callback fails, the attribute goes back at the head of the list
 * (it is still set, as the standard wants).
 */
static int
attr_remove(MPI_Comm c, struct mpiv_attr **p)
{
	struct mpiv_attr *a = *p;
	int kv = a->keyval, i = kv - ATTR_FIRST_KEY, rc = MPI_SUCCESS;
	MPI_Comm_delete_attr_function *del = attr_keys[i].del;

	*p = a->next;
	if (del != NULL)
		rc = del(c, kv, a->val, attr_keys[i].extra);
	if (rc != MPI_SUCCESS) {
		a->next = c->attrs;
		c->attrs = a;
		return rc;
	}
	free(a);
	attr_keys[i].refs--;
	return MPI_SUCCESS;
}

static int
attr_add(MPI_Comm c, int keyval, void *val, struct mpiv_attr ***tail)
{
	struct mpiv_attr *a = malloc(sizeof(*a));

	if (a == NULL)
		return MPI_ERR_NO_MEM;
	a->keyval = keyval;
	a->val = val;
	if (tail != NULL) {	/* append: keeps the source's order */
		a->next = NULL;
		**tail = a;
		*tail = &a->next;
	} else {
		a->next = c->attrs;
		c->attrs = a;
	}
	attr_keys[keyval - ATTR_FIRST_KEY].refs++;
	return MPI_SUCCESS;
}

int
MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
	struct mpiv_attr **p;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_attr");
	if (attr_key(keyval, true) == NULL)
		return mpiv_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
	if ((p = attr_find(comm, keyval)) != NULL) {
		/* Replacing a value deletes the old one first; the callback
		   may change the list, so look again after it. */
		struct attr_key *k = &attr_keys[keyval - ATTR_FIRST_KEY];
		if (k->del != NULL &&
		    (rc = k->del(comm, keyval, (*p)->val, k->extra)) !=
		    MPI_SUCCESS)
			return mpiv_err(comm, rc, "MPI_Comm_set_attr");
		if ((p = attr_find(comm, keyval)) != NULL) {
			(*p)->val = attribute_val;
			return MPI_SUCCESS;
		}
	}
	rc = attr_add(comm, keyval, attribute_val, NULL);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_set_attr");
}

int
MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	struct mpiv_attr **p;
	void *v = NULL;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_attr");
	if (attribute_val == NULL || flag == NULL)
		return mpiv_err(comm, MPI_ERR_ARG, "MPI_Comm_get_attr");
	*flag = 0;
	if (attr_predefined(keyval)) {
		switch (keyval) {
		case MPI_TAG_UB: v = &attr_tag_ub; break;
		case MPI_HOST: v = &attr_host; break;
		case MPI_IO: v = &attr_io; break;
		case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_global; break;
		case MPI_LASTUSEDCODE:
			attr_lastused = mpiv_errclass_lastused();
			v = &attr_lastused;
			break;
		case MPI_UNIVERSE_SIZE:
			attr_universe = mpiv_state.world_size;
			v = &attr_universe;
			break;
		default: v = &attr_appnum; break;
		}
		*(void **)attribute_val = v;
		*flag = 1;
		return MPI_SUCCESS;
	}
	if (attr_key(keyval, false) == NULL)
		return mpiv_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
	if ((p = attr_find(comm, keyval)) != NULL) {
		*(void **)attribute_val = (*p)->val;
		*flag = 1;
	}
	return MPI_SUCCESS;
}

int
MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	struct mpiv_attr **p;
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_delete_attr");
	if (attr_key(keyval, false) == NULL)
		return mpiv_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
	if ((p = attr_find(comm, keyval)) == NULL)
		return mpiv_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
	rc = attr_remove(comm, p);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(comm, rc, "MPI_Comm_delete_attr");
}

int
mpiv_attr_dup(MPI_Comm oldc, MPI_Comm newc)
{
	struct mpiv_attr **tail = &newc->attrs;

	for (struct mpiv_attr *a = oldc->attrs; a != NULL; a = a->next) {
		struct attr_key *k = &attr_keys[a->keyval - ATTR_FIRST_KEY];
		void *out = NULL;
		int flag = 0, rc;

		if (k->copy == NULL)
			continue;
		rc = k->copy(oldc, a->keyval, k->extra, a->val, &out, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (flag && (rc = attr_add(newc, a->keyval, out, &tail)) !=
		    MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

int
mpiv_attr_free_all(MPI_Comm c)
{
	while (c->attrs != NULL) {
		int rc = attr_remove(c, &c->attrs);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* ---------------- MPI-1 names ---------------- */

int
MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	return MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int
MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	return MPI_Comm_set_attr(comm, keyval, attribute_val);
}

int
MPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return MPI_Comm_delete_attr(comm, keyval);
}

int
MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
    int *keyval, void *extra_state)
{
	return MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int
MPI_Keyval_free(int *keyval)
{
	return MPI_Comm_free_keyval(keyval);
}
