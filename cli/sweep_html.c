/*
 * sweep_html.c: the page of a `mpiv sweep` (DIR/index.html), one
 * self-contained file (inline SVG and CSS, no script): the grid's
 * slowdown against the fault rate, one line per checkpoint interval,
 * with each cell's spread over its seeds; the cost of checkpoints alone
 * (the cells without kills); how killed ranks came back (relaunch,
 * restore, replay times per cell); and the table of every cell. Hovering a
 * point or a bar shows its figures (SVG <title>). A cell with a wrong
 * output or a failed run is drawn as a red cross and marked in the
 * table.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sweep.h"

#define PW	680		/* plot width, height, margins */
#define PH	360
#define ML	60
#define MR	150
#define MT	20
#define MB	50

static const char *const sh_colors[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
	"#17becf", "#bcbd22", "#7f7f7f",
};
#define NCOLORS (sizeof(sh_colors) / sizeof(sh_colors[0]))

static void
sh_esc(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static double
sh_rate(const struct sw_cell *c)
{
	return c->mtbf_ms > 0 ? 60000. / c->mtbf_ms : 0;
}

/* A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten. */
static double
sh_nice(double v)
{
	double p;

	if (!(v > 0))
		return 1;
	p = pow(10, floor(log10(v)));
	if (v <= p)
		return p;
	if (v <= 2 * p)
		return 2 * p;
	if (v <= 5 * p)
		return 5 * p;
	return 10 * p;
}

static void
sh_axes(FILE *f, double xmax, double ymin, double ymax, const char *xl,
    const char *yl)
{
	fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' class='frame'/>"
	    "\n", ML, MT, PW - ML - MR, PH - MT - MB);
	for (int i = 0; i <= 5; i++) {
		double x = ML + (PW - ML - MR) * i / 5.;
		double y = PH - MB - (PH - MT - MB) * i / 5.;

		fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' "
		    "class='grid'/><text x='%.1f' y='%d' class='tick' "
		    "text-anchor='middle'>%g</text>\n", x, MT, x, PH - MB, x,
		    PH - MB + 16, xmax * i / 5.);
		fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' "
		    "class='grid'/><text x='%d' y='%.1f' class='tick' "
		    "text-anchor='end'>%.2f</text>\n", ML, y, PW - MR, y,
		    ML - 6, y + 4, ymin + (ymax - ymin) * i / 5.);
	}
	fprintf(f, "<text x='%d' y='%d' class='label' text-anchor='middle'>"
	    "%s</text>\n", ML + (PW - ML - MR) / 2, PH - 12, xl);
	fprintf(f, "<text x='14' y='%d' class='label' text-anchor='middle' "
	    "transform='rotate(-90 14 %d)'>%s</text>\n", MT + (PH - MT - MB)
	    / 2, MT + (PH - MT - MB) / 2, yl);
}

static void
sh_cell_title(FILE *f, const struct sw_cell *c)
{
	fprintf(f, "<title>MTBF %s, checkpoints every %s: slowdown %.2f "
	    "(%.2f to %.2f), wall %.2f s; %d runs: %d ok, %d wrong output, "
	    "%d failed; per run %.1f kills, %.1f restarts, %.1f checkpoints, "
	    "%.1f restores, %.2f s replaying</title>", c->mtbf_ms ? c->mtbf :
	    "none", c->ckpt_ms ? c->ckpt : "never", c->slow_med, c->slow_min,
	    c->slow_max, c->wall_med, c->runs, c->ok, c->wrong, c->failed,
	    c->kills, c->restarts, c->checkpoints, c->restores, c->replay_s);
}

/* Slowdown against kills per minute, a line per checkpoint interval. */
static void
sh_plot_rate(FILE *f, const struct sweep *sw)
{
	double xmax = 0, ymax = 1;
	uint32_t ivals[64];
	int ni = 0;

	for (int i = 0; i < sw->ncells; i++) {
		const struct sw_cell *c = &sw->cells[i];
		bool seen = false;

		if (sh_rate(c) > xmax)
			xmax = sh_rate(c);
		if (isfinite(c->slow_max) && c->slow_max > ymax)
			ymax = c->slow_max;
		for (int k = 0; k < ni; k++)
			seen |= ivals[k] == c->ckpt_ms;
		if (!seen && ni < 64)
			ivals[ni++] = c->ckpt_ms;
	}
	xmax = sh_nice(xmax * 1.05);
	ymax = 1 + sh_nice((ymax - 1) * 1.1 + 0.05);
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
	    "height='%d' class='plot' id='rate'>\n", PW, PH);
	sh_axes(f, xmax, 0, ymax, "kills per minute (60 / MTBF)",
	    "slowdown (wall / failure-free wall)");
#define X(v) (ML + (PW - ML - MR) * (v) / xmax)
#define Y(v) (PH - MB - (PH - MT - MB) * (v) / ymax)
	fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' class='one'/>\n",
	    ML, Y(1), PW - MR, Y(1));
	for (int k = 0; k < ni; k++) {
		const char *col = sh_colors[k % NCOLORS];
		const struct sw_cell *label = NULL;
		int order[256], no = 0;

		/* this interval's cells by rate */
		for (int i = 0; i < sw->ncells && no < 256; i++)
			if (sw->cells[i].ckpt_ms == ivals[k])
				order[no++] = i;
		for (int a = 1; a < no; a++)
			for (int b = a; b > 0 && sh_rate(&sw->cells[order[b]]) <
			    sh_rate(&sw->cells[order[b - 1]]); b--) {
				int t = order[b];

				order[b] = order[b - 1];
				order[b - 1] = t;
			}
		fprintf(f, "<polyline class='line' stroke='%s' points='", col);
		for (int i = 0; i < no; i++) {
			const struct sw_cell *c = &sw->cells[order[i]];

			if (isfinite(c->slow_med))
				fprintf(f, "%.1f,%.1f ", X(sh_rate(c)),
				    Y(c->slow_med));
		}
		fprintf(f, "'/>\n");
		for (int i = 0; i < no; i++) {
			const struct sw_cell *c = &sw->cells[order[i]];
			double x = X(sh_rate(c));

			label = c;
			fprintf(f, "<g class='pt'>");
			sh_cell_title(f, c);
			if (isfinite(c->slow_min) && isfinite(c->slow_max))
				fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' "
				    "y2='%.1f' stroke='%s' class='whisker'/>",
				    x, Y(c->slow_min), x, Y(c->slow_max), col);
			if (c->wrong > 0 || c->failed > 0 ||
			    !isfinite(c->slow_med)) {
				double y = isfinite(c->slow_med) ?
				    Y(c->slow_med) : Y(0) - 8;

				fprintf(f, "<path d='M%.1f %.1fl10 10m0 -10l-10 "
				    "10' class='bad'/>", x - 5, y - 5);
			} else {
				fprintf(f, "<circle cx='%.1f' cy='%.1f' r='5' "
				    "fill='%s'/>", x, Y(c->slow_med), col);
			}
			fprintf(f, "</g>\n");
		}
		fprintf(f, "<g class='legend'><line x1='%d' y1='%d' x2='%d' "
		    "y2='%d' stroke='%s' stroke-width='3'/><text x='%d' "
		    "y='%d'>checkpoints: %s</text></g>\n", PW - MR + 12,
		    MT + 10 + 18 * k, PW - MR + 32, MT + 10 + 18 * k, col,
		    PW - MR + 36, MT + 14 + 18 * k, label == NULL ||
		    label->ckpt_ms == 0 ? "none" : label->ckpt);
	}
#undef X
#undef Y
	fprintf(f, "</svg>\n");
}

/* The cells without kills: what checkpointing alone costs. */
static void
sh_plot_ckpt(FILE *f, const struct sweep *sw)
{
	const struct sw_cell *cs[64];
	double ymax = 1;
	int n = 0;

	for (int i = 0; i < sw->ncells && n < 64; i++)
		if (sw->cells[i].mtbf_ms == 0) {
			cs[n++] = &sw->cells[i];
			if (isfinite(sw->cells[i].slow_max) &&
			    sw->cells[i].slow_max > ymax)
				ymax = sw->cells[i].slow_max;
		}
	if (n < 2) {
		fprintf(f, "<p class='note'>No cell without kills has "
		    "checkpoints (give 0 in --mtbf and a non-zero "
		    "--ckpt-interval to measure their cost).</p>\n");
		return;
	}
	ymax = 1 + sh_nice((ymax - 1) * 1.1 + 0.05);
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
	    "height='%d' class='plot' id='ckpt'>\n", PW, PH);
	fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' "
	    "class='frame'/>\n", ML, MT, PW - ML - MR, PH - MT - MB);
	for (int i = 0; i <= 5; i++) {
		double y = PH - MB - (PH - MT - MB) * i / 5.;

		fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' "
		    "class='grid'/><text x='%d' y='%.1f' class='tick' "
		    "text-anchor='end'>%.2f</text>\n", ML, y, PW - MR, y,
		    ML - 6, y + 4, ymax * i / 5.);
	}
	for (int i = 0; i < n; i++) {
		const struct sw_cell *c = cs[i];
		double w = (PW - ML - MR) / (double)n, x = ML + w * i + w * .2;
		double v = isfinite(c->slow_med) ? c->slow_med : 0;
		double h = (PH - MT - MB) * v / ymax;

		fprintf(f, "<g class='pt'>");
		sh_cell_title(f, c);
		fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
		    "fill='%s'/></g><text x='%.1f' y='%d' class='tick' "
		    "text-anchor='middle'>%s</text><text x='%.1f' y='%.1f' "
		    "class='tick' text-anchor='middle'>%.2f, %.1f ckpt</text>\n",
		    x, PH - MB - h, w * .6, h, c->wrong || c->failed ?
		    "#d62728" : sh_colors[i % NCOLORS], x + w * .3, PH - MB + 16,
		    c->ckpt_ms ? c->ckpt : "none", x + w * .3, PH - MB - h - 4,
		    v, c->checkpoints);
	}
	fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' class='one'/>\n",
	    ML, PH - MB - (PH - MT - MB) / ymax, PW - MR,
	    PH - MB - (PH - MT - MB) / ymax);
	fprintf(f, "<text x='%d' y='%d' class='label' text-anchor='middle'>"
	    "checkpoint interval</text>\n", ML + (PW - ML - MR) / 2, PH - 12);
	fprintf(f, "<text x='14' y='%d' class='label' text-anchor='middle' "
	    "transform='rotate(-90 14 %d)'>slowdown, no kills</text>\n",
	    MT + (PH - MT - MB) / 2, MT + (PH - MT - MB) / 2);
	fprintf(f, "</svg>\n");
}

/* A time for a title or a cell: "-" when there is none. */
static void
sh_secs(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.3f", v);
	else
		fputs("-", f);
}

static double
sh_z(double v)
{
	return isfinite(v) ? v : 0;
}

/*
 * The cells with relaunches: a bar per cell from the kill to the rank
 * live again (medians): down until its process runs (relaunch; the
 * restore from a checkpoint is its end part, darker), then replaying
 * until its re-execution caught up.
 */
static void
sh_plot_recovery(FILE *f, const struct sweep *sw)
{
	const struct sw_cell *cs[256];
	double xmax = 0;
	int n = 0, rowh = 22, h;

	for (int i = 0; i < sw->ncells && n < 256; i++) {
		const struct sw_cell *c = &sw->cells[i];
		double tot = sh_z(c->rec_med[SW_T_RELAUNCH]) +
		    sh_z(c->rec_med[SW_T_REPLAY]);

		if (c->rec_n[SW_T_RELAUNCH] == 0)
			continue;
		cs[n++] = c;
		if (tot > xmax)
			xmax = tot;
	}
	if (n == 0) {
		fprintf(f, "<p class='note'>No rank was relaunched.</p>\n");
		return;
	}
	xmax = sh_nice(xmax * 1.05);
	h = MT + n * rowh + MB;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
	    "height='%d' class='plot' id='recovery'>\n", PW + 60, h);
#define RX(v) (ML + 100 + (PW - ML - MR - 40) * (v) / xmax)
	for (int i = 0; i <= 5; i++)
		fprintf(f, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' "
		    "class='grid'/><text x='%.1f' y='%d' class='tick' "
		    "text-anchor='middle'>%g</text>\n", RX(xmax * i / 5.), MT,
		    RX(xmax * i / 5.), h - MB, RX(xmax * i / 5.), h - MB + 16,
		    xmax * i / 5.);
	for (int i = 0; i < n; i++) {
		const struct sw_cell *c = cs[i];
		double y = MT + i * rowh + 4, rel = sh_z(c->rec_med[SW_T_RELAUNCH]);
		double rs = sh_z(c->rec_med[SW_T_RESTORE]);
		double rp = sh_z(c->rec_med[SW_T_REPLAY]);

		if (rs > rel)
			rs = rel;
		fprintf(f, "<text x='%.1f' y='%.1f' class='tick' "
		    "text-anchor='end'>MTBF %s, ckpt %s</text>", RX(0) - 6,
		    y + 11, c->mtbf, c->ckpt_ms ? c->ckpt : "never");
		fprintf(f, "<g class='pt rec' data-cell='%d'><title>MTBF %s, "
		    "checkpoints %s: %d relaunches; kill to running: median ",
		    (int)(c - sw->cells), c->mtbf, c->ckpt_ms ? c->ckpt :
		    "never", c->rec_n[SW_T_RELAUNCH]);
		sh_secs(f, c->rec_med[SW_T_RELAUNCH]);
		fputs(" s, mean ", f);
		sh_secs(f, c->rec_mean[SW_T_RELAUNCH]);
		fprintf(f, " s; restore (%d from a checkpoint): median ",
		    c->rec_n[SW_T_RESTORE]);
		sh_secs(f, c->rec_med[SW_T_RESTORE]);
		fputs(" s, mean ", f);
		sh_secs(f, c->rec_mean[SW_T_RESTORE]);
		fprintf(f, " s; replay (%d): median ", c->rec_n[SW_T_REPLAY]);
		sh_secs(f, c->rec_med[SW_T_REPLAY]);
		fputs(" s, mean ", f);
		sh_secs(f, c->rec_mean[SW_T_REPLAY]);
		fprintf(f, " s</title><rect x='%.1f' y='%.1f' width='%.1f' "
		    "height='14' fill='#b8c4cc'/><rect x='%.1f' y='%.1f' "
		    "width='%.1f' height='14' fill='#8e6bbf'/><rect x='%.1f' "
		    "y='%.1f' width='%.1f' height='14' fill='#f2a93b'/></g>\n",
		    RX(0), y, RX(rel - rs) - RX(0), RX(rel - rs), y,
		    RX(rel) - RX(rel - rs), RX(rel), y, RX(rel + rp) - RX(rel));
	}
	fprintf(f, "<text x='%.1f' y='%d' class='label' text-anchor='middle'>"
	    "seconds from the kill (medians over the cell's relaunches)"
	    "</text>\n", RX(xmax / 2), h - 12);
#undef RX
	fprintf(f, "</svg>\n<p class='legend'><span style='color:#7a8a94'>"
	    "&#9632;</span> down until running again (relaunch) &nbsp; "
	    "<span style='color:#8e6bbf'>&#9632;</span> of it: restore from a "
	    "checkpoint (image download, CRIU restore) &nbsp; <span "
	    "style='color:#f2a93b'>&#9632;</span> replay until caught up</p>\n");
}

int
sweep_write_html(const struct sweep *sw, const char *path)
{
	FILE *f = fopen(path, "w");
	int wrong = 0, failed = 0, runs = 0;

	if (f == NULL)
		return -1;
	for (int i = 0; i < sw->ncells; i++) {
		wrong += sw->cells[i].wrong;
		failed += sw->cells[i].failed;
		runs += sw->cells[i].runs;
	}
	fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta "
	    "charset='utf-8'><title>mpiv sweep</title>\n<style>\n"
	    "body{font:14px sans-serif;margin:24px;color:#222}\n"
	    "h1{font-size:20px} h2{font-size:16px;margin-top:28px}\n"
	    ".frame{fill:none;stroke:#444} .grid{stroke:#e4e4e4}\n"
	    ".tick{font-size:11px;fill:#444} .label{font-size:12px}\n"
	    ".line{fill:none;stroke-width:2} .whisker{stroke-width:2}\n"
	    ".one{stroke:#999;stroke-dasharray:4 3}\n"
	    ".bad{stroke:#d62728;stroke-width:3;fill:none}\n"
	    ".legend text{font-size:12px} .pt:hover{opacity:.6}\n"
	    "table{border-collapse:collapse} td,th{padding:3px 8px;"
	    "text-align:right;border-bottom:1px solid #ddd}\n"
	    "tr.bad td{background:#fde0e0} .note{color:#666}\n"
	    "code{background:#f4f4f4;padding:1px 4px}\n"
	    "</style></head><body>\n<h1>mpiv sweep</h1>\n<p><code>mpiv run");
	for (int i = 0; i < sw->nargs; i++) {
		fputc(' ', f);
		sh_esc(f, sw->args[i]);
	}
	fprintf(f, "</code></p>\n<p id='summary'>%d cells x %d seeds: %d of "
	    "%d runs done, %d wrong output, %d failed. Failure-free wall "
	    "time (median): %.3f s.</p>\n", sw->ncells, sw->seeds, runs,
	    sw->nruns, wrong, failed, sw->base_wall);
	fprintf(f, "<h2>Slowdown against the fault rate</h2>\n<p class='note'>"
	    "Median over seeds; the bar spans the fastest and the slowest "
	    "run; a red cross marks a cell with a wrong output or a failed "
	    "run.</p>\n");
	sh_plot_rate(f, sw);
	fprintf(f, "<h2>What checkpoints cost without faults</h2>\n");
	sh_plot_ckpt(f, sw);
	fprintf(f, "<h2>How killed ranks came back</h2>\n");
	sh_plot_recovery(f, sw);
	fprintf(f, "<h2>Cells</h2>\n<table id='cells'><tr><th>MTBF</th>"
	    "<th>checkpoints</th><th>runs</th><th>ok</th><th>wrong</th>"
	    "<th>failed</th><th>wall s (median)</th><th>slowdown</th>"
	    "<th>min</th><th>max</th><th>kills</th><th>restarts</th>"
	    "<th>checkpoints taken</th><th>restores</th>"
	    "<th>replay s</th><th>relaunch s (median)</th>"
	    "<th>restore s</th><th>replay s (median)</th></tr>\n");
	for (int i = 0; i < sw->ncells; i++) {
		const struct sw_cell *c = &sw->cells[i];

		fprintf(f, "<tr%s><td>%s</td><td>%s</td><td>%d</td><td>%d</td>"
		    "<td>%d</td><td>%d</td><td>%.3f</td><td>%.2f</td>"
		    "<td>%.2f</td><td>%.2f</td><td>%.1f</td><td>%.1f</td>"
		    "<td>%.1f</td><td>%.1f</td><td>%.2f</td>",
		    c->wrong || c->failed ? " class='bad'" : "",
		    c->mtbf_ms ? c->mtbf : "none", c->ckpt_ms ? c->ckpt :
		    "never", c->runs, c->ok, c->wrong, c->failed, c->wall_med,
		    c->slow_med, c->slow_min, c->slow_max, c->kills,
		    c->restarts, c->checkpoints, c->restores, c->replay_s);
		for (int k = 0; k < SW_T_N; k++) {
			fputs("<td>", f);
			sh_secs(f, c->rec_med[k]);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fprintf(f, "</table>\n<p class='note'>Per-run figures: runs.csv; per "
	    "cell: cells.csv; both: results.json; each run's output, "
	    "stderr and mpiv run --report: runs/.</p>\n</body></html>\n");
	return fclose(f) == 0 ? 0 : -1;
}
