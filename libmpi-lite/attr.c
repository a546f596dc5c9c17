/*
 * attr.c: attributes and keyvals of communicators, datatypes and
 * windows. The predefined communicator keys (MPI_TAG_UB ... MPI_APPNUM)
 * are answered from static values on every communicator, the window
 * keys (MPI_WIN_BASE ...) by win.c; user keyvals start at
 * ATTR_FIRST_KEY, above both, and belong to one kind of object: a
 * keyval of another kind is MPI_ERR_KEYVAL. Each object holds its
 * attributes in a list, newest first, so they are deleted in the
 * reverse order of their setting.
 */
#include <stdlib.h>

#include "impl.h"
#include "win.h"

struct mpiv_attr {
	int keyval;
	void *val;
	struct mpiv_attr *next;
};

enum attr_kind { ATTR_COMM, ATTR_TYPE, ATTR_WIN };

struct attr_key {
	enum attr_kind kind;
	union {
		MPI_Comm_copy_attr_function *comm;
		MPI_Type_copy_attr_function *type;
		MPI_Win_copy_attr_function *win;
	} copy;
	union {
		MPI_Comm_delete_attr_function *comm;
		MPI_Type_delete_attr_function *type;
		MPI_Win_delete_attr_function *win;
	} del;
	void *extra;
	bool live;		/* created and not freed */
	int refs;		/* attributes still set with this key */
};

/* An object with attributes: its kind, its handle, its list. */
struct attr_obj {
	enum attr_kind kind;
	void *h;
	struct mpiv_attr **head;
};

/* Above the predefined keys of communicators (1-7) and windows
   (MPI_WIN_BASE 101 ... MPI_WIN_MODEL 105). */
#define ATTR_FIRST_KEY 128

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

static const char *const attr_kind_name[] = {
	[ATTR_COMM] = "communicator",
	[ATTR_TYPE] = "datatype",
	[ATTR_WIN] = "window",
};

static bool
attr_predefined(int keyval)
{
	return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

/* The slot of a user keyval of that kind, or NULL if keyval names none
   (an MPI_ERR_KEYVAL; the detail says why). */
static struct attr_key *
attr_key(enum attr_kind kind, int keyval, bool need_live)
{
	int i = keyval - ATTR_FIRST_KEY;

	if (i < 0 || i >= attr_nkeys ||
	    (!attr_keys[i].live && (need_live || attr_keys[i].refs == 0))) {
		mpiv_err_detail("keyval %d: no such %s keyval", keyval,
		    attr_kind_name[kind]);
		return NULL;
	}
	if (attr_keys[i].kind != kind) {
		mpiv_err_detail("keyval %d is a %s keyval, not a %s one",
		    keyval, attr_kind_name[attr_keys[i].kind],
		    attr_kind_name[kind]);
		return NULL;
	}
	return &attr_keys[i];
}

/* The callbacks, called through a copy of the key: a callback may
   create keyvals, which moves attr_keys. */
static int
attr_call_copy(const struct attr_key *k, void *oldh, int keyval, void *in,
    void *out, int *flag)
{
	switch (k->kind) {
	case ATTR_COMM:
		return k->copy.comm(oldh, keyval, k->extra, in, out, flag);
	case ATTR_TYPE:
		return k->copy.type(oldh, keyval, k->extra, in, out, flag);
	default:
		return k->copy.win(oldh, keyval, k->extra, in, out, flag);
	}
}

static bool
attr_has_copy(const struct attr_key *k)
{
	return k->kind == ATTR_COMM ? k->copy.comm != NULL :
	    k->kind == ATTR_TYPE ? k->copy.type != NULL : k->copy.win != NULL;
}

static int
attr_call_del(const struct attr_key *k, void *h, int keyval, void *val)
{
	switch (k->kind) {
	case ATTR_COMM:
		return k->del.comm == NULL ? MPI_SUCCESS :
		    k->del.comm(h, keyval, val, k->extra);
	case ATTR_TYPE:
		return k->del.type == NULL ? MPI_SUCCESS :
		    k->del.type(h, keyval, val, k->extra);
	default:
		return k->del.win == NULL ? MPI_SUCCESS :
		    k->del.win(h, keyval, val, k->extra);
	}
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
MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int keyval, void *extra_state,
    void *attribute_val_in, void *attribute_val_out, int *flag)
{
	*(void **)attribute_val_out = attribute_val_in;
	*flag = 1;
	return MPI_SUCCESS;
}

int
MPI_WIN_DUP_FN(MPI_Win oldwin, int keyval, void *extra_state,
    void *attribute_val_in, void *attribute_val_out, int *flag)
{
	*(void **)attribute_val_out = attribute_val_in;
	*flag = 1;
	return MPI_SUCCESS;
}

/* A new keyval of that kind, its callbacks set by the caller; its
   number in *keyval. MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int
keyval_new(enum attr_kind kind, void *extra, int *keyval,
    struct attr_key **key)
{
	int i;

	for (i = 0; i < attr_nkeys; i++)
		if (!attr_keys[i].live && attr_keys[i].refs == 0)
			break;
	if (i == attr_nkeys) {
		struct attr_key *nk = realloc(attr_keys,
		    ((size_t)attr_nkeys + 1) * sizeof(*nk));
		if (nk == NULL)
			return MPI_ERR_NO_MEM;
		attr_keys = nk;
		attr_nkeys++;
	}
	attr_keys[i] = (struct attr_key){ .kind = kind, .extra = extra,
	    .live = true };
	*key = &attr_keys[i];
	*keyval = i + ATTR_FIRST_KEY;
	return MPI_SUCCESS;
}

/* Attributes still set keep the slot until they are deleted. */
static int
keyval_free(enum attr_kind kind, int *keyval)
{
	struct attr_key *k;

	if (keyval == NULL || (k = attr_key(kind, *keyval, true)) == NULL)
		return MPI_ERR_KEYVAL;
	k->live = false;
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

int
MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
    MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
	struct attr_key *k;
	int rc;

	if (keyval == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval");
	if ((rc = keyval_new(ATTR_COMM, extra_state, keyval, &k)) != 0)
		return mpiv_err(NULL, rc, "MPI_Comm_create_keyval");
	k->copy.comm = copy_fn;
	k->del.comm = delete_fn;
	return MPI_SUCCESS;
}

int
MPI_Comm_free_keyval(int *keyval)
{
	int rc = keyval_free(ATTR_COMM, keyval);

	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Comm_free_keyval");
}

static struct mpiv_attr **
attr_find(struct mpiv_attr **head, int keyval)
{
	struct mpiv_attr **p;

	for (p = head; *p != NULL; p = &(*p)->next)
		if ((*p)->keyval == keyval)
			return p;
	return NULL;
}

/*
 * Unlinks *p, then runs its delete callback. The callback may set or
 * delete other attributes of the object (or create keyvals, which moves
 * attr_keys): nothing of the list or the key table is held across it.
 * If the callback fails, the attribute goes back at the head of the list
 * (it is still set, as the standard wants).
 */
static int
attr_remove(const struct attr_obj *o, struct mpiv_attr **p)
{
	struct mpiv_attr *a = *p;
	int kv = a->keyval, i = kv - ATTR_FIRST_KEY, rc;
	struct attr_key k = attr_keys[i];

	*p = a->next;
	rc = attr_call_del(&k, o->h, kv, a->val);
	if (rc != MPI_SUCCESS) {
		a->next = *o->head;
		*o->head = a;
		return rc;
	}
	free(a);
	attr_keys[i].refs--;
	return MPI_SUCCESS;
}

static int
attr_add(struct mpiv_attr **head, int keyval, void *val,
    struct mpiv_attr ***tail)
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
		a->next = *head;
		*head = a;
	}
	attr_keys[keyval - ATTR_FIRST_KEY].refs++;
	return MPI_SUCCESS;
}

static int
attr_set(const struct attr_obj *o, int keyval, void *val)
{
	struct mpiv_attr **p;
	int rc;

	if (attr_key(o->kind, keyval, true) == NULL)
		return MPI_ERR_KEYVAL;
	if ((p = attr_find(o->head, keyval)) != NULL) {
		/* Replacing a value deletes the old one first; the callback
		   may change the list, so look again after it. */
		struct attr_key k = attr_keys[keyval - ATTR_FIRST_KEY];

		if ((rc = attr_call_del(&k, o->h, keyval, (*p)->val)) !=
		    MPI_SUCCESS)
			return rc;
		if ((p = attr_find(o->head, keyval)) != NULL) {
			/* set again: now the newest (MPI_Finalize deletes
			   MPI_COMM_SELF's last set first) */
			struct mpiv_attr *a = *p;

			*p = a->next;
			a->next = *o->head;
			*o->head = a;
			a->val = val;
			return MPI_SUCCESS;
		}
	}
	return attr_add(o->head, keyval, val, NULL);
}

/* A user keyval's value (flag 0 if the object has none). */
static int
attr_get(const struct attr_obj *o, int keyval, void *val, int *flag)
{
	struct mpiv_attr **p;

	*flag = 0;
	if (attr_key(o->kind, keyval, false) == NULL)
		return MPI_ERR_KEYVAL;
	if ((p = attr_find(o->head, keyval)) != NULL) {
		*(void **)val = (*p)->val;
		*flag = 1;
	}
	return MPI_SUCCESS;
}

static int
attr_delete(const struct attr_obj *o, int keyval)
{
	struct mpiv_attr **p;

	if (attr_key(o->kind, keyval, false) == NULL)
		return MPI_ERR_KEYVAL;
	if ((p = attr_find(o->head, keyval)) == NULL) {
		mpiv_err_detail("keyval %d: the %s has no such attribute",
		    keyval, attr_kind_name[o->kind]);
		return MPI_ERR_KEYVAL;
	}
	return attr_remove(o, p);
}

/* The copy callbacks of o's attributes, into n (empty). */
static int
attr_dup(const struct attr_obj *o, const struct attr_obj *n)
{
	struct mpiv_attr **tail = n->head;

	for (struct mpiv_attr *a = *o->head; a != NULL; a = a->next) {
		struct attr_key k = attr_keys[a->keyval - ATTR_FIRST_KEY];
		void *out = NULL;
		int flag = 0, rc;

		if (!attr_has_copy(&k))
			continue;
		rc = attr_call_copy(&k, o->h, a->keyval, a->val, &out, &flag);
		if (rc != MPI_SUCCESS)
			return rc;
		if (flag && (rc = attr_add(n->head, a->keyval, out, &tail)) !=
		    MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

static int
attr_free_all(const struct attr_obj *o)
{
	while (*o->head != NULL) {
		int rc = attr_remove(o, o->head);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* ---------------- communicators ---------------- */

#define COMM_OBJ(c) (&(struct attr_obj){ ATTR_COMM, (c), &(c)->attrs })

int
MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_attr");
	rc = attr_set(COMM_OBJ(comm), keyval, attribute_val);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_set_attr");
}

int
MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	void *v = NULL;
	int rc;

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
	rc = attr_get(COMM_OBJ(comm), keyval, attribute_val, flag);
	return rc == MPI_SUCCESS ? rc : mpiv_err(comm, rc, "MPI_Comm_get_attr");
}

int
MPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
	int rc;

	if (mpiv_comm_check(comm) != MPI_SUCCESS)
		return mpiv_err(NULL, MPI_ERR_COMM, "MPI_Comm_delete_attr");
	rc = attr_delete(COMM_OBJ(comm), keyval);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(comm, rc, "MPI_Comm_delete_attr");
}

int
mpiv_attr_dup(MPI_Comm oldc, MPI_Comm newc)
{
	return attr_dup(COMM_OBJ(oldc), COMM_OBJ(newc));
}

int
mpiv_attr_free_all(MPI_Comm c)
{
	return attr_free_all(COMM_OBJ(c));
}

/* ---------------- datatypes ---------------- */

/* Errors of datatype calls go to MPI_COMM_WORLD's handler, as the other
   datatype calls' (datatype.c). */
#define TYPE_OBJ(t) (&(struct attr_obj){ ATTR_TYPE, (t), &(t)->attrs })

static int
type_fail(int rc, const char *fn)
{
	return rc == MPI_SUCCESS ? rc : mpiv_err(NULL, rc, fn);
}

int
MPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn,
    MPI_Type_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
	struct attr_key *k;
	int rc;

	if (keyval == NULL)
		return type_fail(MPI_ERR_ARG, "MPI_Type_create_keyval");
	if ((rc = keyval_new(ATTR_TYPE, extra_state, keyval, &k)) != 0)
		return type_fail(rc, "MPI_Type_create_keyval");
	k->copy.type = copy_fn;
	k->del.type = delete_fn;
	return MPI_SUCCESS;
}

int
MPI_Type_free_keyval(int *keyval)
{
	return type_fail(keyval_free(ATTR_TYPE, keyval),
	    "MPI_Type_free_keyval");
}

int
MPI_Type_set_attr(MPI_Datatype datatype, int keyval, void *attribute_val)
{
	if (datatype == MPI_DATATYPE_NULL)
		return type_fail(MPI_ERR_TYPE, "MPI_Type_set_attr");
	return type_fail(attr_set(TYPE_OBJ(datatype), keyval, attribute_val),
	    "MPI_Type_set_attr");
}

int
MPI_Type_get_attr(MPI_Datatype datatype, int keyval, void *attribute_val,
    int *flag)
{
	if (datatype == MPI_DATATYPE_NULL)
		return type_fail(MPI_ERR_TYPE, "MPI_Type_get_attr");
	if (attribute_val == NULL || flag == NULL)
		return type_fail(MPI_ERR_ARG, "MPI_Type_get_attr");
	return type_fail(attr_get(TYPE_OBJ(datatype), keyval, attribute_val,
	    flag), "MPI_Type_get_attr");
}

int
MPI_Type_delete_attr(MPI_Datatype datatype, int keyval)
{
	if (datatype == MPI_DATATYPE_NULL)
		return type_fail(MPI_ERR_TYPE, "MPI_Type_delete_attr");
	return type_fail(attr_delete(TYPE_OBJ(datatype), keyval),
	    "MPI_Type_delete_attr");
}

int
mpiv_type_attr_dup(MPI_Datatype oldt, MPI_Datatype newt)
{
	return attr_dup(TYPE_OBJ(oldt), TYPE_OBJ(newt));
}

int
mpiv_type_attr_free_all(MPI_Datatype t)
{
	return attr_free_all(TYPE_OBJ(t));
}

/* ---------------- windows ---------------- */

#define WIN_OBJ(w) (&(struct attr_obj){ ATTR_WIN, (w), &(w)->attrs })

int
MPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
    MPI_Win_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
	struct attr_key *k;
	int rc;

	if (keyval == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Win_create_keyval");
	if ((rc = keyval_new(ATTR_WIN, extra_state, keyval, &k)) != 0)
		return mpiv_err(NULL, rc, "MPI_Win_create_keyval");
	k->copy.win = copy_fn;
	k->del.win = delete_fn;
	return MPI_SUCCESS;
}

int
MPI_Win_free_keyval(int *keyval)
{
	int rc = keyval_free(ATTR_WIN, keyval);

	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Win_free_keyval");
}

int
MPI_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_set_attr");
	rc = attr_set(WIN_OBJ(win), keyval, attribute_val);
	return rc == MPI_SUCCESS ? rc : win_err(win, rc, "MPI_Win_set_attr");
}

int
MPI_Win_delete_attr(MPI_Win win, int keyval)
{
	int rc;

	if (win_check(win) != MPI_SUCCESS)
		return win_err(win, MPI_ERR_WIN, "MPI_Win_delete_attr");
	rc = attr_delete(WIN_OBJ(win), keyval);
	return rc == MPI_SUCCESS ? rc :
	    win_err(win, rc, "MPI_Win_delete_attr");
}

/* MPI_Win_get_attr of a user keyval (win.c answers the predefined). */
int
mpiv_win_attr_get(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
	return attr_get(WIN_OBJ(win), keyval, attribute_val, flag);
}

int
mpiv_win_attr_free_all(MPI_Win win)
{
	return attr_free_all(WIN_OBJ(win));
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
