/*
 * report.c: `mpiv report REPORT.json --html FILE`: the timeline page
 * (timeline.c) of a run saved with `mpiv run --report`, drawn later or
 * elsewhere. The report must have its "events" (mpiv from this version
 * on writes them).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front.h"
#include "jsonr.h"
#include "timeline.h"

static void
report_usage(FILE *f)
{
	fprintf(f, "usage: mpiv report REPORT.json --html FILE.html\n"
	    "  draws the timeline of a run saved with mpiv run --report: a row "
	    "per rank,\n  kills, relaunches, replays, checkpoints "
	    "(docs/EXPERIMENTS.md)\n");
}

static void
report_copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src != NULL ? src : "");
}

/*
 * The report's "sizes" (timeline_sizes_json) back into s, as sampled:
 * 0, or -1 when there are none or they do not hold together (then the
 * page says they were not sampled).
 */
static int
report_sizes(const struct jsonr *o, struct tl_sizes *s)
{
	const struct jsonr *t, *l, *st, *a, *b, *c;
	double v;

	if (o == NULL || o->type != JSONR_OBJ ||
	    (t = jsonr_get(o, "t")) == NULL || t->type != JSONR_ARR ||
	    (l = jsonr_get(o, "cm_log_bytes")) == NULL ||
	    l->type != JSONR_ARR ||
	    (st = jsonr_get(o, "store_bytes")) == NULL ||
	    st->type != JSONR_ARR || l->nkids != t->nkids ||
	    st->nkids != t->nkids || t->nkids > TL_SIZES_MAX)
		return -1;
	for (a = t->kids, b = l->kids, c = st->kids; a != NULL;
	    a = a->next, b = b->next, c = c->next) {
		if (a->type != JSONR_NUM || b->type != JSONR_NUM ||
		    c->type != JSONR_NUM || !(b->num >= 0 && b->num < 1e19) ||
		    !(c->num >= 0 && c->num < 1e19) ||
		    timeline_sizes_add(s, a->num, (uint64_t)b->num,
		    (uint64_t)c->num) < 0)
			return -1;
	}
	v = jsonr_num(o, "samples", 0);
	if (v > (double)s->seen && v < 1e15)
		s->seen = (uint64_t)v;
	v = jsonr_num(o, "stride", 1);
	s->stride = v >= 1 && v < 1e9 ? (unsigned)v : 1;
	v = jsonr_num(o, "partial", 0);
	s->partial = v >= 0 && v < 1e15 ? (uint64_t)v : 0;
	return 0;
}

int
report_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "html", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *html = NULL, *path;
	const struct jsonr *evs;
	struct jsonr *rep;
	struct tl_event *ev = NULL;
	struct tl_job tj = { 0 };
	struct tl_sizes sz = { 0 };
	char err[400];
	size_t n = 0;
	int ch, rc = 1;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			report_usage(stdout);
			return 0;
		case 'H':
			html = optarg;
			break;
		default:
			fprintf(stderr, "mpiv report: unknown option \"%s\"\n",
			    argv[optind - 1]);
			report_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || html == NULL) {
		report_usage(stderr);
		return 2;
	}
	path = argv[optind];
	if ((rep = jsonr_load(path, err, sizeof(err))) == NULL) {
		fprintf(stderr, "mpiv report: %s\n", err);
		return 1;
	}
	evs = jsonr_get(rep, "events");
	if (rep->type != JSONR_OBJ || jsonr_get(rep, "ranks") == NULL ||
	    evs == NULL || evs->type != JSONR_ARR) {
		fprintf(stderr, "mpiv report: %s: not a report of mpiv run "
		    "--report with its events (\"ranks\" and \"events\")\n",
		    path);
		goto out;
	}
	if (evs->nkids > 0 && (ev = calloc(evs->nkids, sizeof(*ev))) == NULL)
		goto out;
	for (const struct jsonr *e = evs->kids; e != NULL; e = e->next) {
		struct tl_event *t = &ev[n++];

		t->t = jsonr_num(e, "t", 0);
		report_copy(t->kind, sizeof(t->kind), jsonr_str(e, "kind"));
		t->rank = (int)jsonr_num(e, "rank", -1);
		t->inc = (uint32_t)jsonr_num(e, "incarnation", 0);
		t->value = (uint64_t)jsonr_num(e, "value", 0);
		t->span1 = jsonr_num(e, "span1", 0);
		t->span2 = jsonr_num(e, "span2", 0);
		report_copy(t->node, sizeof(t->node), jsonr_str(e, "node"));
		report_copy(t->detail, sizeof(t->detail),
		    jsonr_str(e, "detail"));
	}
	tj.job = jsonr_str(rep, "job") != NULL ? jsonr_str(rep, "job") : "?";
	tj.protocol = jsonr_str(rep, "protocol") != NULL ?
	    jsonr_str(rep, "protocol") : "?";
	tj.nranks = (int)jsonr_num(rep, "ranks", 1);
	if (tj.nranks < 1 || tj.nranks > 1 << 20) {
		fprintf(stderr, "mpiv report: %s: %d ranks?\n", path,
		    tj.nranks);
		goto out;
	}
	tj.exit_code = (int)jsonr_num(rep, "exit_code", 0);
	tj.wall_s = jsonr_num(rep, "wall_s", 0);
	tj.reason = jsonr_str(rep, "reason");
	tj.ev = ev;
	tj.nev = n;
	if (report_sizes(jsonr_get(rep, "sizes"), &sz) == 0)
		tj.sizes = &sz;
	if (timeline_write_html(&tj, html) < 0) {
		fprintf(stderr, "mpiv report: cannot write %s\n", html);
		goto out;
	}
	rc = 0;
out:
	timeline_sizes_free(&sz);
	free(ev);
	jsonr_free(rep);
	return rc;
}
