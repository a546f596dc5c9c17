/*
 * timeline.c: the page of one job's run, drawn from its events
 * (timeline.h): a row per rank over wall time with its states (starting,
 * restoring from a checkpoint, replaying, running, ended), each kill,
 * each checkpoint (dump and upload phases, durable mark; failures),
 * lost and killed nodes across all rows; under it, on the same time
 * axis, the bytes of the job's logs at its Channel Memories and of its
 * images at its checkpoint servers as sampled by the dispatcher ("sizes"
 * events, struct tl_sizes), then the bytes of checkpoint images uploaded
 * so far. One self-contained HTML file:
 * inline SVG and CSS, no script to run; the events themselves are
 * embedded as JSON (id "events") and every drawn mark names the event
 * it comes from (data-ev = its index), so a reader, or a test, can
 * check the picture against the data. Hovering a mark shows its
 * details (SVG <title>).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "timeline.h"

#define TW	1000		/* plot width */
#define TL	70		/* left margin (row labels) */
#define TR	20
#define TT	30
#define ROWH	26
#define BARH	12

static void
tl_esc(FILE *f, const char *s)
{
	for (; *s != '\0'; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

/* The row's state between two events, by what began it. */
enum tl_state { TS_NONE, TS_START, TS_RESTORE, TS_REPLAY, TS_RUN };

static const char *const tl_state_class[] = {
	[TS_START] = "st-start", [TS_RESTORE] = "st-restore",
	[TS_REPLAY] = "st-replay", [TS_RUN] = "st-run",
};
static const char *const tl_state_name[] = {
	[TS_START] = "starting", [TS_RESTORE] = "restoring",
	[TS_REPLAY] = "replaying", [TS_RUN] = "running",
};

struct tl_row {
	enum tl_state st;
	double since;
	int since_ev;
	uint32_t inc;
	uint64_t ckpt;		/* restoring this one */
	int wait_ev;		/* the "wait" event of a wait, -1: none */
};

static double tl_scale;		/* px per second */

static double
tl_x(double t)
{
	return TL + t * tl_scale;
}

static double
tl_y(int rank)
{
	return TT + rank * ROWH;
}

static void
tl_segment(FILE *f, const struct tl_row *row, int rank, double t_end,
    int ev_end)
{
	double x0, x1;

	if (row->st == TS_NONE)
		return;
	x0 = tl_x(row->since);
	x1 = tl_x(t_end);
	if (x1 - x0 < 1)
		x1 = x0 + 1;
	fprintf(f, "<rect class='seg %s' data-ev='%d' data-state='%s' "
	    "data-rank='%d' x='%.1f' y='%.1f' width='%.1f' height='%d'>"
	    "<title>rank %d incarnation %u %s", tl_state_class[row->st],
	    row->since_ev, tl_state_name[row->st], rank, x0,
	    tl_y(rank) + (ROWH - BARH) / 2., x1 - x0, BARH, rank, row->inc,
	    tl_state_name[row->st]);
	if (row->st == TS_RESTORE)
		fprintf(f, " checkpoint %llu", (unsigned long long)row->ckpt);
	fprintf(f, ": %.3f s to %.3f s%s</title></rect>\n", row->since, t_end,
	    ev_end < 0 ? " (end of the run)" : "");
}

/*
 * The rank's wait that began with event wait_ev ends at t_end (its
 * wait_over, the rank's end, kill or relaunch, or the end of the run):
 * a hatched band under the row's bar, titled with what it waited for.
 */
static void
tl_wait(FILE *f, struct tl_row *row, const struct tl_job *job, int rank,
    double t_end, int ev_end)
{
	const struct tl_event *w;
	double t0, x0, x1;

	if (row->wait_ev < 0)
		return;
	w = &job->ev[row->wait_ev];
	t0 = w->t - (w->span1 > 0 ? w->span1 : 0);
	x0 = tl_x(t0 > 0 ? t0 : 0);
	x1 = tl_x(t_end);
	if (x1 - x0 < 1)
		x1 = x0 + 1;
	fprintf(f, "<rect class='wait' data-ev='%d' data-rank='%d' x='%.1f' "
	    "y='%.1f' width='%.1f' height='4'><title>rank %d waited from %.3f s "
	    "to %.3f s%s: ", row->wait_ev, rank, x0, tl_y(rank) + ROWH - 7.,
	    x1 - x0, rank, t0 > 0 ? t0 : 0, t_end, ev_end < 0 ?
	    " (end of the run)" : "");
	tl_esc(f, w->detail);
	fprintf(f, "</title></rect>\n");
	row->wait_ev = -1;
}

/* Whether (rank, inc) has a replay_done among the events. */
static bool
tl_has_replay(const struct tl_job *job, int rank, uint32_t inc)
{
	for (size_t i = 0; i < job->nev; i++)
		if (job->ev[i].rank == rank && job->ev[i].inc == inc &&
		    strcmp(job->ev[i].kind, "replay_done") == 0)
			return true;
	return false;
}

void
timeline_events_json(struct json *j, const struct tl_event *ev, size_t n)
{
	json_arr_begin(j);
	for (size_t i = 0; i < n; i++) {
		const struct tl_event *e = &ev[i];

		json_obj_begin(j);
		json_key(j, "t");
		json_double(j, e->t);
		json_key(j, "kind");
		json_str(j, e->kind);
		json_key(j, "rank");
		json_int(j, e->rank);
		json_key(j, "incarnation");
		json_uint(j, e->inc);
		json_key(j, "value");
		json_uint(j, e->value);
		json_key(j, "span1");
		json_double(j, e->span1);
		json_key(j, "span2");
		json_double(j, e->span2);
		json_key(j, "node");
		json_str(j, e->node);
		json_key(j, "detail");
		json_str(j, e->detail);
		json_obj_end(j);
	}
	json_arr_end(j);
}

int
timeline_sizes_add(struct tl_sizes *s, double t, uint64_t log,
    uint64_t store)
{
	if (s->stride == 0)
		s->stride = 1;
	if (s->seen++ % s->stride != 0)
		return 0;
	if (s->n == TL_SIZES_MAX) {
		/* keep every other one: the kept are every 2*stride-th */
		for (size_t i = 0; i < s->n / 2; i++) {
			s->t[i] = s->t[2 * i];
			s->log[i] = s->log[2 * i];
			s->store[i] = s->store[2 * i];
		}
		s->n /= 2;
		s->stride *= 2;
		if ((s->seen - 1) % s->stride != 0)
			return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		double *nt;
		uint64_t *nl, *ns;

		if (cap > TL_SIZES_MAX)
			cap = TL_SIZES_MAX;
		if ((nt = realloc(s->t, cap * sizeof(*nt))) == NULL)
			return -1;
		s->t = nt;
		if ((nl = realloc(s->log, cap * sizeof(*nl))) == NULL)
			return -1;
		s->log = nl;
		if ((ns = realloc(s->store, cap * sizeof(*ns))) == NULL)
			return -1;
		s->store = ns;
		s->cap = cap;
	}
	s->t[s->n] = t;
	s->log[s->n] = log;
	s->store[s->n] = store;
	s->n++;
	return 0;
}

void
timeline_sizes_free(struct tl_sizes *s)
{
	free(s->t);
	free(s->log);
	free(s->store);
	memset(s, 0, sizeof(*s));
}

void
timeline_sizes_json(struct json *j, const struct tl_sizes *s)
{
	json_obj_begin(j);
	json_key(j, "samples");
	json_uint(j, s->seen);
	json_key(j, "stride");
	json_uint(j, s->stride ? s->stride : 1);
	json_key(j, "partial");
	json_uint(j, s->partial);
	json_key(j, "t");
	json_arr_begin(j);
	for (size_t i = 0; i < s->n; i++)
		json_double(j, s->t[i]);
	json_arr_end(j);
	json_key(j, "cm_log_bytes");
	json_arr_begin(j);
	for (size_t i = 0; i < s->n; i++)
		json_uint(j, s->log[i]);
	json_arr_end(j);
	json_key(j, "store_bytes");
	json_arr_begin(j);
	for (size_t i = 0; i < s->n; i++)
		json_uint(j, s->store[i]);
	json_arr_end(j);
	json_obj_end(j);
}

/* Bytes as a person reads them. */
static const char *
tl_bytes(uint64_t b, char *buf, size_t n)
{
	if (b >= 10000000)
		snprintf(buf, n, "%.1f MB", b / 1e6);
	else if (b >= 10000)
		snprintf(buf, n, "%.1f kB", b / 1e3);
	else
		snprintf(buf, n, "%llu B", (unsigned long long)b);
	return buf;
}

/*
 * One panel of sampled bytes (v: the log or the store series) on the
 * rows' time axis: the area under the samples (a step held until the
 * next one), a hover column per sample (class sample, data-i its index
 * in the series), the checkpoints as ticks at its foot.
 */
static void
tl_sizes_panel(FILE *f, const struct tl_job *job, const char *id,
    const char *what, const uint64_t *v, const char *color, double tmax)
{
	const struct tl_sizes *s = job->sizes;
	uint64_t vmax = 0;
	const double top = 12, bot = 102;
	char b1[32];

	for (size_t i = 0; i < s->n; i++)
		if (v[i] > vmax)
			vmax = v[i];
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' id='%s' "
	    "class='sizes' data-max='%llu' width='%d' height='122'>\n"
	    "<line class='axis' x1='%d' y1='%.0f' x2='%d' y2='%.0f'/>"
	    "<text class='tick' x='%d' y='%.0f' text-anchor='end'>%s</text>"
	    "<text class='tick' x='%d' y='%.0f' text-anchor='end'>0</text>\n",
	    id, (unsigned long long)vmax, TW, TL, bot, TW - TR, bot, TL - 6,
	    top + 4, tl_bytes(vmax, b1, sizeof(b1)), TL - 6, bot);
	if (vmax > 0) {
		fprintf(f, "<path fill='%s' fill-opacity='.35' stroke='%s' "
		    "stroke-width='1.5' d='M%.1f %.1f", color, color,
		    tl_x(s->t[0]), bot);
		for (size_t i = 0; i < s->n; i++) {
			double y = bot - (double)v[i] / (double)vmax *
			    (bot - top);
			double xn = i + 1 < s->n ? tl_x(s->t[i + 1]) :
			    tl_x(tmax);

			fprintf(f, "L%.1f %.1fL%.1f %.1f", tl_x(s->t[i]), y,
			    xn, y);
		}
		fprintf(f, "L%.1f %.1fZ'/>\n", tl_x(tmax), bot);
	}
	for (size_t i = 0; i < job->nev; i++)
		if (strcmp(job->ev[i].kind, "ckpt") == 0)
			fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' "
			    "y2='%.0f' stroke='#1f5fa8' stroke-width='1'/>",
			    tl_x(job->ev[i].t), bot, tl_x(job->ev[i].t),
			    bot + 6);
	fputc('\n', f);
	for (size_t i = 0; i < s->n; i++) {
		double x0 = tl_x(s->t[i]), x1 = i + 1 < s->n ?
		    tl_x(s->t[i + 1]) : tl_x(tmax);

		if (x1 - x0 < 1)
			x1 = x0 + 1;
		fprintf(f, "<rect class='sample' data-i='%zu' data-bytes="
		    "'%llu' x='%.1f' y='%.0f' width='%.1f' height='%.0f' "
		    "fill='transparent'><title>%.3f s: %s %s</title></rect>\n",
		    i, (unsigned long long)v[i], x0, top, x1 - x0, bot - top,
		    s->t[i], what, tl_bytes(v[i], b1, sizeof(b1)));
	}
	fprintf(f, "</svg>\n");
}

/* Some JSON inside a <script> element: "</" cannot close it. */
static void
tl_json_script(FILE *f, const struct tl_job *job, bool sizes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct json j;

	if (m == NULL)
		return;
	json_init(&j, m);
	if (sizes)
		timeline_sizes_json(&j, job->sizes);
	else
		timeline_events_json(&j, job->ev, job->nev);
	if (fclose(m) != 0) {
		free(buf);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(buf[i], f);
	}
	free(buf);
}

int
timeline_write_html(const struct tl_job *job, const char *path)
{
	FILE *f = fopen(path, "w");
	struct tl_row *rows;
	double tmax = job->wall_s, bmax = 0;
	int nr = job->nranks > 0 ? job->nranks : 1, h, kills = 0, ckpts = 0;
	int restarts = 0;
	FILE *mk;
	char *marks = NULL;
	size_t nmarks = 0;

	if (f == NULL)
		return -1;
	if ((rows = calloc((size_t)nr, sizeof(*rows))) == NULL) {
		fclose(f);
		return -1;
	}
	for (int r = 0; r < nr; r++)
		rows[r].wait_ev = -1;
	for (size_t i = 0; i < job->nev; i++) {
		const struct tl_event *e = &job->ev[i];

		if (e->t > tmax)
			tmax = e->t;
		if (strcmp(e->kind, "ckpt") == 0)
			bmax += strtod(e->detail, NULL);
	}
	if (!(tmax > 0))
		tmax = 1;
	tl_scale = (TW - TL - TR) / tmax;
	h = TT + nr * ROWH + 40;

	fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta "
	    "charset='utf-8'><title>mpiv job timeline</title>\n<style>\n"
	    "body{font:14px sans-serif;margin:24px;color:#222}\n"
	    "h1{font-size:20px} h2{font-size:16px;margin-top:24px}\n"
	    ".st-run{fill:#4c9f50} .st-replay{fill:#f2a93b}\n"
	    ".st-restore{fill:#8e6bbf} .st-start{fill:#b8c4cc}\n"
	    ".kill{stroke:#d62728;stroke-width:3}\n"
	    ".ckpt{fill:#1f5fa8} .ckpt-failed{fill:#ff7f0e}\n"
	    ".dump{fill:#9ec5ea} .upload{fill:#5b95d0}\n"
	    "rect.wait{fill:#555;opacity:.75}\n"
	    ".node-lost{stroke:#d62728;stroke-dasharray:5 3;stroke-width:2}\n"
	    ".axis{stroke:#444} .grid{stroke:#e6e6e6} .tick{font-size:11px;"
	    "fill:#444} .rowlabel{font-size:12px}\n"
	    ".legend span{display:inline-block;margin-right:14px}\n"
	    ".sw{display:inline-block;width:12px;height:12px;"
	    "vertical-align:middle;margin-right:4px}\n"
	    "g.mark:hover,rect.seg:hover{opacity:.6}\n"
	    "</style></head><body>\n<h1>mpiv job ");
	tl_esc(f, job->job);
	fprintf(f, "</h1>\n");
	for (size_t i = 0; i < job->nev; i++) {
		kills += strcmp(job->ev[i].kind, "kill") == 0 ||
		    strcmp(job->ev[i].kind, "kill_node") == 0;
		ckpts += strcmp(job->ev[i].kind, "ckpt") == 0;
		restarts += strcmp(job->ev[i].kind, "launch") == 0 &&
		    job->ev[i].inc > 1;
	}
	fprintf(f, "<p id='summary'>%d ranks, protocol %s, exit code %d, "
	    "%.3f s; %d kills, %d relaunches, %d checkpoints durable; %zu "
	    "events.", job->nranks, job->protocol, job->exit_code,
	    job->wall_s, kills, restarts, ckpts, job->nev);
	if (job->reason != NULL && job->reason[0] != '\0') {
		fputs(" ", f);
		tl_esc(f, job->reason);
	}
	fprintf(f, "</p>\n<p class='legend'>"
	    "<span><i class='sw st-run' style='background:#4c9f50'></i>"
	    "running</span><span><i class='sw' style='background:#f2a93b'>"
	    "</i>replaying</span><span><i class='sw' style='background:"
	    "#8e6bbf'></i>restoring a checkpoint</span><span><i class='sw' "
	    "style='background:#b8c4cc'></i>starting</span><span><i "
	    "class='sw' style='background:#d62728'></i>kill / lost node"
	    "</span><span><i class='sw' style='background:#555'></i>"
	    "waiting in an MPI call (a second or more)</span><span><i class='sw' style='background:#1f5fa8'></i>"
	    "checkpoint durable (above: dump, upload)</span></p>\n");

	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' id='timeline' "
	    "width='%d' height='%d'>\n", TW, h);
	for (int i = 0; i <= 10; i++) {
		double x = tl_x(tmax * i / 10.);

		fprintf(f, "<line class='grid' x1='%.1f' y1='%d' x2='%.1f' "
		    "y2='%d'/><text class='tick' x='%.1f' y='%d' "
		    "text-anchor='middle'>%.2f s</text>\n", x, TT - 6, x,
		    TT + nr * ROWH, x, TT + nr * ROWH + 16, tmax * i / 10.);
	}
	for (int r = 0; r < nr; r++)
		fprintf(f, "<text class='rowlabel' x='%d' y='%.1f' "
		    "text-anchor='end'>rank %d</text>\n", TL - 8,
		    tl_y(r) + ROWH / 2. + 4, r);

	/* segments now, marks after them (drawn on top) */
	if ((mk = open_memstream(&marks, &nmarks)) == NULL) {
		free(rows);
		fclose(f);
		return -1;
	}
	for (size_t i = 0; i < job->nev; i++) {
		const struct tl_event *e = &job->ev[i];
		struct tl_row *row = e->rank >= 0 && e->rank < nr ?
		    &rows[e->rank] : NULL;
		double x = tl_x(e->t), y = row != NULL ? tl_y(e->rank) : 0;
		int ei = (int)i;

		/* a rank's end, kill or relaunch ends its wait */
		if (row != NULL && (strcmp(e->kind, "launch") == 0 ||
		    strcmp(e->kind, "exit") == 0 ||
		    strcmp(e->kind, "kill") == 0 ||
		    (strcmp(e->kind, "wait_over") == 0 && row->wait_ev >= 0 &&
		    job->ev[row->wait_ev].value == e->value)))
			tl_wait(mk, row, job, e->rank, e->t, ei);
		if (strcmp(e->kind, "wait") == 0 && row != NULL) {
			tl_wait(mk, row, job, e->rank, e->t, ei);
			row->wait_ev = ei;
		} else if (strcmp(e->kind, "launch") == 0 && row != NULL) {
			tl_segment(f, row, e->rank, e->t, ei);
			row->st = e->value > 0 ? TS_RESTORE : TS_START;
			row->since = e->t;
			row->since_ev = ei;
			row->inc = e->inc;
			row->ckpt = e->value;
		} else if (strcmp(e->kind, "started") == 0 && row != NULL) {
			tl_segment(f, row, e->rank, e->t, ei);
			row->st = e->inc > 1 && tl_has_replay(job, e->rank,
			    e->inc) ? TS_REPLAY : TS_RUN;
			row->since = e->t;
			row->since_ev = ei;
			row->inc = e->inc;
		} else if (strcmp(e->kind, "replay_done") == 0 &&
		    row != NULL && row->st == TS_REPLAY &&
		    row->inc == e->inc) {
			tl_segment(f, row, e->rank, e->t, ei);
			row->st = TS_RUN;
			row->since = e->t;
			row->since_ev = ei;
			fprintf(mk, "<g class='mark replay' data-ev='%d' "
			    "data-kind='replay_done' data-rank='%d'><title>"
			    "rank %d incarnation %u caught up at %.3f s: %llu "
			    "events replayed in %.3f s (", ei, e->rank,
			    e->rank, e->inc, e->t,
			    (unsigned long long)e->value, e->span1);
			tl_esc(mk, e->detail);
			fprintf(mk, ")</title><line x1='%.1f' y1='%.1f' "
			    "x2='%.1f' y2='%.1f' stroke='#b36b00' "
			    "stroke-width='2'/></g>\n", x, y + 3, x,
			    y + ROWH - 3);
		} else if (strcmp(e->kind, "exit") == 0 && row != NULL) {
			if (row->inc == e->inc || row->st == TS_NONE) {
				tl_segment(f, row, e->rank, e->t, ei);
				row->st = TS_NONE;
			}
			fprintf(mk, "<g class='mark exit' data-ev='%d' "
			    "data-kind='exit' data-rank='%d'><title>rank %d "
			    "incarnation %u ended at %.3f s: ", ei, e->rank,
			    e->rank, e->inc, e->t);
			tl_esc(mk, e->detail);
			fprintf(mk, " (code %llu)</title><line x1='%.1f' "
			    "y1='%.1f' x2='%.1f' y2='%.1f' stroke='#222' "
			    "stroke-width='2'/></g>\n",
			    (unsigned long long)e->value, x, y + 4, x,
			    y + ROWH - 4);
		} else if (strcmp(e->kind, "kill") == 0 && row != NULL) {
			fprintf(mk, "<g class='mark kill-mark' data-ev='%d' "
			    "data-kind='kill' data-rank='%d'><title>%s killed "
			    "rank %d incarnation %u at %.3f s (signal %llu)"
			    "</title><path class='kill' d='M%.1f %.1fl10 10m0 "
			    "-10l-10 10'/></g>\n", ei, e->rank, e->detail,
			    e->rank, e->inc, e->t, (unsigned long long)e->value,
			    x - 5, y + ROWH / 2. - 5);
		} else if ((strcmp(e->kind, "ckpt") == 0 ||
		    strcmp(e->kind, "ckpt_failed") == 0) && row != NULL) {
			bool ok = e->kind[4] == '\0';
			double up = e->span2 > 0 ? e->span2 : 0;
			double dump = e->span1 > 0 ? e->span1 : 0;

			fprintf(mk, "<g class='mark ckpt-mark' data-ev='%d' "
			    "data-kind='%s' data-rank='%d'><title>rank %d "
			    "checkpoint %llu %s at %.3f s: dump %.3f s, upload "
			    "%.3f s, ", ei, e->kind, e->rank, e->rank,
			    (unsigned long long)e->value, ok ? "durable" :
			    "failed", e->t, dump, up);
			tl_esc(mk, e->detail);
			fprintf(mk, "</title>");
			if (dump + up > 0) {
				fprintf(mk, "<rect class='dump' x='%.1f' y='%.1f' "
				    "width='%.1f' height='4'/>", tl_x(e->t -
				    up - dump), y + 1, dump * tl_scale + 0.5);
				fprintf(mk, "<rect class='upload' x='%.1f' "
				    "y='%.1f' width='%.1f' height='4'/>",
				    tl_x(e->t - up), y + 1, up * tl_scale + 0.5);
			}
			fprintf(mk, "<path class='%s' d='M%.1f %.1fl5 5l-5 5l-5 "
			    "-5z'/></g>\n", ok ? "ckpt" : "ckpt-failed", x,
			    y + ROWH - 11);
		} else if (strcmp(e->kind, "node_lost") == 0 ||
		    strcmp(e->kind, "kill_node") == 0) {
			fprintf(mk, "<g class='mark node-mark' data-ev='%d' "
			    "data-kind='%s'><title>node ", ei, e->kind);
			tl_esc(mk, e->node);
			fprintf(mk, " %s at %.3f s (%llu ranks; ",
			    e->kind[0] == 'k' ? "killed" : "lost", e->t,
			    (unsigned long long)e->value);
			tl_esc(mk, e->detail);
			fprintf(mk, ")</title><line class='node-lost' x1='%.1f' "
			    "y1='%d' x2='%.1f' y2='%d'/></g>\n", x, TT - 4, x,
			    TT + nr * ROWH);
		}
	}
	for (int r = 0; r < nr; r++) {
		tl_segment(f, &rows[r], r, tmax, -1);
		tl_wait(mk, &rows[r], job, r, tmax, -1);
	}
	if (fclose(mk) == 0)
		fwrite(marks, 1, nmarks, f);
	free(marks);
	fprintf(f, "</svg>\n");

	/* sampled sizes, on the same time axis */
	fprintf(f, "<h2>Message logs at the Channel Memories (bytes)</h2>\n");
	if (job->sizes != NULL && job->sizes->n > 0) {
		fprintf(f, "<p class='note'>Sampled by the dispatcher (%llu "
		    "samples%s): what the CMs hold to replay the ranks' "
		    "receptions; a durable checkpoint of a rank frees its "
		    "log up to the checkpoint (blue ticks: checkpoints).</p>\n",
		    (unsigned long long)job->sizes->seen,
		    job->sizes->stride > 1 ? ", thinned out to fit" : "");
		tl_sizes_panel(f, job, "cmlog", "logs at the CMs",
		    job->sizes->log, "#d9822b", tmax);
		fprintf(f, "<h2>Checkpoint store (bytes)</h2>\n");
		tl_sizes_panel(f, job, "store", "images at the CSs",
		    job->sizes->store, "#1f5fa8", tmax);
	} else {
		fprintf(f, "<p>Not sampled (a report of an older mpiv, or a "
		    "job shorter than a sample).</p>\n");
	}

	/* checkpoint bytes over time */
	fprintf(f, "<h2>Checkpoint images uploaded (bytes, cumulative)</h2>\n");
	if (bmax > 0) {
		double acc = 0;

		fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' "
		    "id='ckptbytes' width='%d' height='140'>\n<line "
		    "class='axis' x1='%d' y1='110' x2='%d' y2='110'/>"
		    "<text class='tick' x='%d' y='20' text-anchor='end'>"
		    "%.1f MB</text><polyline fill='none' stroke='#1f5fa8' "
		    "stroke-width='2' points='%d,110 ", TW, TL, TW - TR,
		    TL - 6, bmax / 1e6, TL);
		for (size_t i = 0; i < job->nev; i++)
			if (strcmp(job->ev[i].kind, "ckpt") == 0) {
				double x = tl_x(job->ev[i].t);

				fprintf(f, "%.1f,%.1f ", x, 110 - acc / bmax *
				    90);
				acc += strtod(job->ev[i].detail, NULL);
				fprintf(f, "%.1f,%.1f ", x, 110 - acc / bmax *
				    90);
			}
		fprintf(f, "%.1f,%.1f'/></svg>\n", tl_x(tmax), 110 - acc /
		    bmax * 90);
	} else {
		fprintf(f, "<p>No checkpoint was taken.</p>\n");
	}
	fprintf(f, "<script type='application/json' id='events'>");
	tl_json_script(f, job, false);
	fprintf(f, "</script>\n");
	if (job->sizes != NULL) {
		fprintf(f, "<script type='application/json' id='sizes'>");
		tl_json_script(f, job, true);
		fprintf(f, "</script>\n");
	}
	fprintf(f, "</body></html>\n");
	free(rows);
	return fclose(f) == 0 ? 0 : -1;
}
