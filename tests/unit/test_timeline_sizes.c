/*
 * test_timeline_sizes.c: cli/timeline.c's sizes series (the samples of
 * the CMs' logs and the store a run's report keeps): bounded at
 * TL_SIZES_MAX however long the job, thinned out evenly (every
 * stride-th sample of the whole run kept, the first and the latest
 * ones spanning it), and written as the report's "sizes" JSON that reads
 * back as written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/json.h"
#include "../../cli/jsonr.h"
#include "../../cli/timeline.h"
#include "tap.h"

/* Sample k of a made-up job: at 0.2 k s, log 10 k, store 7 k bytes. */
static void
feed(struct tl_sizes *s, int from, int to)
{
	for (int k = from; k < to; k++)
		if (timeline_sizes_add(s, 0.2 * k, 10ull * k, 7ull * k) < 0)
			CHECK(0, "sample %d added", k);
}

/* Whether every kept sample is sample stride*i, in order. */
static int
evenly(const struct tl_sizes *s)
{
	for (size_t i = 0; i < s->n; i++) {
		uint64_t k = (uint64_t)i * s->stride;

		if (s->log[i] != 10 * k || s->store[i] != 7 * k ||
		    s->t[i] != 0.2 * (double)k)
			return 0;
	}
	return 1;
}

static void
test_bounded(void)
{
	struct tl_sizes s = { 0 };

	feed(&s, 0, 1500);
	CHECK(s.n == 1500 && s.stride == 1 && evenly(&s),
	    "1500 samples: all kept (n %zu, stride %u)", s.n, s.stride);
	feed(&s, 1500, 2000);
	CHECK(s.n == TL_SIZES_MAX && s.stride == 1,
	    "2000 samples: all kept (n %zu)", s.n);
	feed(&s, 2000, 2001);
	CHECK(s.n == 1001 && s.stride == 2 && evenly(&s),
	    "2001: every other one kept, the latest too (n %zu, stride %u)",
	    s.n, s.stride);
	feed(&s, 2001, 100000);
	CHECK(s.n <= TL_SIZES_MAX && s.n > TL_SIZES_MAX / 2 && evenly(&s) &&
	    s.seen == 100000,
	    "100000 samples (a 5.5 h job): %zu kept, every %u-th, evenly",
	    s.n, s.stride);
	CHECK(s.t[s.n - 1] > 0.2 * (100000 - s.stride) - 1e-6,
	    "the kept span the run: the last at %.1f s", s.t[s.n - 1]);
	timeline_sizes_free(&s);
	CHECK(s.n == 0 && s.t == NULL, "freed");
}

static void
test_json(void)
{
	struct tl_sizes s = { 0 };
	char *buf = NULL, err[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;
	struct jsonr *r;
	const struct jsonr *t, *l, *st;
	int same = 1;

	feed(&s, 0, 3000);
	s.partial = 3;
	json_init(&j, f);
	timeline_sizes_json(&j, &s);
	fclose(f);
	r = jsonr_parse(buf, len, err, sizeof(err));
	CHECK(r != NULL, "the sizes JSON parses (%s)", r ? "" : err);
	if (r == NULL)
		goto out;
	t = jsonr_get(r, "t");
	l = jsonr_get(r, "cm_log_bytes");
	st = jsonr_get(r, "store_bytes");
	CHECK(jsonr_num(r, "samples", 0) == 3000 &&
	    jsonr_num(r, "stride", 0) == s.stride &&
	    jsonr_num(r, "partial", 0) == 3 && t && l && st &&
	    t->nkids == s.n && l->nkids == s.n && st->nkids == s.n,
	    "samples 3000, stride %u, partial 3, %zu of each", s.stride, s.n);
	if (t && l && st && t->nkids == s.n) {
		const struct jsonr *a = t->kids, *b = l->kids, *c = st->kids;

		for (size_t i = 0; i < s.n; i++, a = a->next, b = b->next,
		    c = c->next)
			same &= fabs(a->num - s.t[i]) < 5e-4 &&	/* ms */
			    b->num == (double)s.log[i] &&
			    c->num == (double)s.store[i];
		CHECK(same, "every kept sample reads back as written (times "
		    "to the ms)");
	}
	jsonr_free(r);
out:
	free(buf);
	timeline_sizes_free(&s);
}

int
main(void)
{
	test_bounded();
	test_json();
	printf(failures ? "# %d failed\n" : "# all passed\n", failures);
	return failures != 0;
}
