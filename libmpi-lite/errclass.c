/*
 * errclass.c: error classes, codes and strings the program adds
 * (MPI_Add_error_class, MPI_Add_error_code, MPI_Add_error_string). They
 * take the values after MPI_ERR_LASTCODE, in the order they are added
 * (the same in every process that adds the same ones: deterministic);
 * the MPI_LASTUSEDCODE attribute says the largest so far. errh.c asks
 * here for their class and string.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl.h"

struct errclass_entry {
	int class;		/* itself for a class */
	char *string;		/* NULL until MPI_Add_error_string */
};

static struct errclass_entry *errclass_tab;	/* value LASTCODE + 1 + i */
static int errclass_n;

/* The largest error value in use (the MPI_LASTUSEDCODE attribute). */
int
mpiv_errclass_lastused(void)
{
	return MPI_ERR_LASTCODE + errclass_n;
}

static struct errclass_entry *
errclass_get(int code)
{
	if (code <= MPI_ERR_LASTCODE || code > mpiv_errclass_lastused())
		return NULL;
	return &errclass_tab[code - MPI_ERR_LASTCODE - 1];
}

bool
mpiv_errclass_lookup(int code, int *class, const char **string)
{
	struct errclass_entry *e = errclass_get(code);

	if (e == NULL)
		return false;
	if (class != NULL)
		*class = e->class;
	if (string != NULL)
		*string = e->string != NULL ? e->string : "";
	return true;
}

static int
errclass_add(int class, int *value)
{
	struct errclass_entry *t;

	if (errclass_n >= 1 << 20)
		return MPI_ERR_INTERN;
	t = realloc(errclass_tab, ((size_t)errclass_n + 1) * sizeof(*t));
	if (t == NULL)
		return MPI_ERR_NO_MEM;
	errclass_tab = t;
	*value = MPI_ERR_LASTCODE + 1 + errclass_n;
	t[errclass_n].class = class < 0 ? *value : class;
	t[errclass_n].string = NULL;
	errclass_n++;
	return MPI_SUCCESS;
}

int
MPI_Add_error_class(int *errorclass)
{
	int rc;

	if (errorclass == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Add_error_class");
	rc = errclass_add(-1, errorclass);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Add_error_class");
}

int
MPI_Add_error_code(int errorclass, int *errorcode)
{
	struct errclass_entry *e = errclass_get(errorclass);
	int rc;

	if (errorcode == NULL)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
	/* A predefined class, or an added class (not an added code). */
	if (errorclass < 0 || (errorclass > MPI_ERR_LASTCODE &&
	    (e == NULL || e->class != errorclass))) {
		mpiv_err_detail("%d is not an error class", errorclass);
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code");
	}
	rc = errclass_add(errorclass, errorcode);
	return rc == MPI_SUCCESS ? rc :
	    mpiv_err(NULL, rc, "MPI_Add_error_code");
}

int
MPI_Add_error_string(int errorcode, const char *string)
{
	struct errclass_entry *e = errclass_get(errorcode);
	char *s;

	if (e == NULL) {
		mpiv_err_detail("%d is not an added error code or class",
		    errorcode);
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
	}
	if (string == NULL || strlen(string) >= MPI_MAX_ERROR_STRING)
		return mpiv_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string");
	if ((s = strdup(string)) == NULL)
		return mpiv_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string");
	free(e->string);
	e->string = s;
	return MPI_SUCCESS;
}
