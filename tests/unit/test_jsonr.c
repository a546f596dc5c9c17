/*
 * test_jsonr.c: cli/jsonr.c, the JSON reader `mpiv sweep` reads run
 * reports with: values of every type, escapes and surrogate pairs, the
 * number grammar, and every kind of bad input refused with a message
 * (truncated, trailing data, too deep, bad escapes and numbers), never
 * a crash; a report as `mpiv run --report` writes it (cli/json.c) reads
 * back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/json.h"
#include "../../cli/jsonr.h"
#include "tap.h"

static struct jsonr *
parse(const char *s, char *err, size_t errlen)
{
	return jsonr_parse(s, strlen(s), err, errlen);
}

static void
test_values(void)
{
	char err[200];
	struct jsonr *v = parse(" {\"a\": 1.5e2, \"b\": [true, false, null, "
	    "-0, \"x\\n\\u00e9\\ud83d\\ude00\"], \"c\": {}, \"d\": []} ", err,
	    sizeof(err));
	const struct jsonr *b, *e;

	CHECK(v != NULL && v->type == JSONR_OBJ && v->nkids == 4,
	    "an object of 4 members parses (%s)", v ? "" : err);
	if (v == NULL)
		return;
	CHECK(jsonr_num(v, "a", 0) == 150, "number with exponent: %g",
	    jsonr_num(v, "a", 0));
	b = jsonr_get(v, "b");
	CHECK(b != NULL && b->type == JSONR_ARR && b->nkids == 5,
	    "an array of 5");
	e = b != NULL ? b->kids : NULL;
	CHECK(e != NULL && e->type == JSONR_BOOL && e->num == 1 &&
	    e->next->type == JSONR_BOOL && e->next->num == 0 &&
	    e->next->next->type == JSONR_NULL &&
	    e->next->next->next->type == JSONR_NUM, "true, false, null, -0");
	e = e != NULL ? e->next->next->next->next : NULL;
	CHECK(e != NULL && e->type == JSONR_STR &&
	    strcmp(e->str, "x\n\xc3\xa9\xf0\x9f\x98\x80") == 0,
	    "escapes, \\u00e9 and a surrogate pair decoded to UTF-8");
	CHECK(jsonr_get(v, "c")->type == JSONR_OBJ &&
	    jsonr_get(v, "c")->nkids == 0 && jsonr_get(v, "d")->nkids == 0,
	    "empty object and array");
	CHECK(jsonr_get(v, "zz") == NULL && jsonr_num(v, "zz", 7) == 7 &&
	    jsonr_str(v, "a") == NULL && jsonr_get(b, "a") == NULL,
	    "missing members and wrong types give the defaults");
	jsonr_free(v);
}

static void
test_bad(void)
{
	static const char *const bad[] = {
		"", "   ", "{", "[1,", "[1 2]", "{\"a\" 1}", "{\"a\":}",
		"{1:2}", "[1,]", "{\"a\":1,}", "\"abc", "\"a\\x\"",
		"\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
		"\"\\u0000\"", "\"tab\there\"", "01", "1.", ".5", "+1", "-",
		"1e", "1e+", "NaN", "Infinity", "1e999", "tru", "nul",
		"[] []", "{} x", "\"\\", "[\"a\\",
	};
	char err[200], deep[200];
	int ok = 1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jsonr *v;

		err[0] = '\0';
		v = parse(bad[i], err, sizeof(err));
		if (v != NULL || err[0] == '\0') {
			ok = 0;
			printf("# accepted or no message: '%s'\n", bad[i]);
			jsonr_free(v);
		}
	}
	CHECK(ok, "%zu malformed texts refused, each with a message",
	    sizeof(bad) / sizeof(bad[0]));
	memset(deep, '[', 40);
	memset(deep + 40, ']', 40);
	deep[80] = '\0';
	CHECK(parse(deep, err, sizeof(err)) == NULL &&
	    strstr(err, "deeper") != NULL, "nesting 40 deep refused: %s", err);
	{
		struct jsonr *v = parse("[1]", NULL, 0);

		CHECK(v != NULL && parse("[", NULL, 0) == NULL,
		    "no room for a message: fine");
		jsonr_free(v);
	}
	{
		struct jsonr *v = jsonr_parse("[1] trailing", 3, err,
		    sizeof(err));

		CHECK(v != NULL && v->nkids == 1, "len bounds the text");
		jsonr_free(v);
	}
}

static void
test_report(void)
{
	char *buf = NULL, err[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;
	struct jsonr *v;
	const struct jsonr *log;

	json_init(&j, f);
	json_obj_begin(&j);
	json_key(&j, "wall_s");
	json_double(&j, 12.25);
	json_key(&j, "kills");
	json_int(&j, 3);
	json_key(&j, "reason");
	json_str(&j, "rank 1 \"said\"\n\tbye");
	json_key(&j, "restart_log");
	json_arr_begin(&j);
	for (int i = 0; i < 3; i++) {
		json_obj_begin(&j);
		json_key(&j, "replay_s");
		json_double(&j, 0.5 * i);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fclose(f);
	v = jsonr_parse(buf, len, err, sizeof(err));
	CHECK(v != NULL, "what json.c writes parses (%s)", v ? "" : err);
	if (v != NULL) {
		double sum = 0;

		log = jsonr_get(v, "restart_log");
		for (const struct jsonr *e = log ? log->kids : NULL; e != NULL;
		    e = e->next)
			sum += jsonr_num(e, "replay_s", 0);
		CHECK(jsonr_num(v, "wall_s", 0) == 12.25 &&
		    jsonr_num(v, "kills", 0) == 3 && sum == 1.5 &&
		    strcmp(jsonr_str(v, "reason"),
		    "rank 1 \"said\"\n\tbye") == 0, "and reads back the same");
	}
	jsonr_free(v);
	free(buf);
	CHECK(jsonr_load("/nonexistent/report.json", err, sizeof(err)) ==
	    NULL && strstr(err, "/nonexistent/report.json") != NULL,
	    "a missing file: NULL, the message names it");
}

int
main(void)
{
	test_values();
	test_bad();
	test_report();
	printf(failures ? "# %d failed\n" : "# all passed\n", failures);
	return failures != 0;
}
