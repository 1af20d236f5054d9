/* Drawing the report's charts as inline SVG: axes, ticks, series, legends. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/doc.h"
#include "report/svg.h"

/*
 * Twelve hues that stay apart for the usual colour-vision deficiencies (Tableau /
 * Paul Tol). Callers chunk charts to SVG_MAX_SERIES series, so no colour repeats in
 * one chart; the dash patterns separate series that lie on top of each other.
 */
static const char *const palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#332288", "#88ccee",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* Dashes per series, so series with equal figures stay visible on top of each other. */
static const char *const dashes[] = { "none", "7 4", "2 3", "10 3 2 3" };
#define NDASHES (sizeof(dashes) / sizeof(dashes[0]))

#define FONT "font-family=\"sans-serif\""

char *svg_size_label(double bytes, char *buf, size_t len)
{
	static const char *const sfx[] = { "", "K", "M", "G", "T" };
	int i = 0;

	while (i < 4 && bytes >= 1024 && fmod(bytes, 1024) == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, len, "%.0f%s", bytes, sfx[i]);
	return buf;
}

double svg_nice_step(double max, int ticks)
{
	double raw, mag, m;

	if (!(max > 0))
		return 1;
	raw = max / ticks;
	mag = pow(10, floor(log10(raw)));
	m = raw / mag;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * mag;
}

static void fmt_tick(double v, double step, char *buf, size_t len)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	snprintf(buf, len, "%.*f", dec, v);
}

static void svg_open(FILE *f, int w, int h, const char *title)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>", w, h, w, h);
	html_escape(f, title);
	fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		   "fill=\"#ffffff\"/>\n", w, h);
	fprintf(f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" "
		   "font-weight=\"bold\" " FONT ">", w / 2);
	html_escape(f, title);
	fputs("</text>\n", f);
}

static void line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
		x1, y1, x2, y2, stroke);
}

static void text(FILE *f, double x, double y, const char *anchor, int size, const char *extra,
		 const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\" " FONT "%s%s>",
		x, y, anchor, size, extra ? " " : "", extra ? extra : "");
	html_escape(f, s);
	fputs("</text>\n", f);
}

/* Legend text wraps after this many characters, at a ',' or ' ' where it can. */
#define LEGEND_CHARS 40
#define LEGEND_LINE 14

/*
 * Split s into lines of at most LEGEND_CHARS characters, breaking after ',' or ' '
 * (a word longer than a line is cut). Writes up to `max` line starts and lengths;
 * returns the number of lines (the last one ends in "..." when s needs more).
 */
static int wrap_lines(const char *s, const char **start, int *len, int max)
{
	int n = 0;

	while (*s && n < max) {
		int w = (int)strlen(s), cut = w, k;

		if (w > LEGEND_CHARS) {
			cut = LEGEND_CHARS;
			for (k = LEGEND_CHARS; k > LEGEND_CHARS / 2; k--)
				if (s[k - 1] == ',' || s[k - 1] == ' ') {
					cut = k;
					break;
				}
		}
		start[n] = s;
		len[n++] = cut;
		s += cut;
	}
	if (*s && n)
		len[n - 1] = -len[n - 1]; /* cut short: the renderer ends the line in "..." */
	return n;
}

static int legend_lines(const char *name)
{
	const char *st[3];
	int ln[3];

	return name ? wrap_lines(name, st, ln, 3) : 1;
}

/* Plot area and legend geometry: the legend sits at the right, one entry per name. */
struct frame {
	double x0, y0, x1, y1; /* plot area: left, top, right, bottom */
	double lx;             /* legend x */
};

/* Height the legend of these names needs from the top of the plot area. */
static double legend_height(const char *const *names, int n)
{
	double h = 10;
	int i;

	for (i = 0; i < n; i++)
		h += LEGEND_LINE * legend_lines(names[i]) + 6;
	return h;
}

static void frame_init(struct frame *fr, int w, int h, const char *const *names, int n)
{
	size_t maxlen = 0;
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && strlen(names[i]) > maxlen)
			maxlen = strlen(names[i]);
	if (maxlen > LEGEND_CHARS)
		maxlen = LEGEND_CHARS;
	fr->x0 = 70;
	fr->y0 = 40;
	fr->x1 = w - (40 + 6.6 * (double)maxlen) - 10;
	fr->y1 = h - 60;
	fr->lx = fr->x1 + 20;
}

/* Chart height that fits the plot (at least h) and a legend of these names. */
static int fit_height(int h, const char *const *names, int n)
{
	double need = 40 + legend_height(names, n) + 20;

	return need > h ? (int)ceil(need) : h;
}

static void text_line(FILE *f, double x, double y, const char *s, int len)
{
	char buf[LEGEND_CHARS + 8];

	if (len < 0)
		snprintf(buf, sizeof(buf), "%.*s...", -len - 3, s);
	else
		snprintf(buf, sizeof(buf), "%.*s", len, s);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\" font-size=\"12\" " FONT ">",
		x, y);
	html_escape(f, buf);
	fputs("</text>\n", f);
}

static void legend(FILE *f, const struct frame *fr, const char *const *names, int n, bool line)
{
	double y = fr->y0 + 10;
	int i, k;

	for (i = 0; i < n; i++) {
		const char *col = palette[i % NPALETTE], *st[3];
		int ln[3], nl = wrap_lines(names[i] ? names[i] : "", st, ln, 3);

		if (line)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				   "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n"
				   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				fr->lx, y, fr->lx + 24, y, col, dashes[i % NDASHES], fr->lx + 12, y,
				col);
		else
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" "
				   "fill=\"%s\"/>\n", fr->lx + 5, y - 6, col);
		if (nl <= 1) {
			text(f, fr->lx + 30, y + 4, "start", 12, NULL, names[i] ? names[i] : "");
			nl = 1;
		} else {
			for (k = 0; k < nl; k++)
				text_line(f, fr->lx + 30, y + 4 + LEGEND_LINE * k, st[k], ln[k]);
		}
		y += LEGEND_LINE * nl + 6;
	}
}

/* Y axis from 0 to ymax with gridlines and its label; returns the axis maximum used. */
static double y_axis(FILE *f, const struct frame *fr, double ymax, const char *label)
{
	double step = svg_nice_step(ymax > 0 ? ymax : 1, 5), top, v, mid;
	char buf[32];

	top = ceil((ymax > 0 ? ymax : 1) / step - 1e-9) * step;
	for (v = 0; v <= top + step / 2; v += step) {
		double y = fr->y1 - (fr->y1 - fr->y0) * v / top;

		line(f, fr->x0, y, fr->x1, y, "#dddddd");
		fmt_tick(v, step, buf, sizeof(buf));
		text(f, fr->x0 - 6, y + 4, "end", 11, NULL, buf);
	}
	line(f, fr->x0, fr->y0, fr->x0, fr->y1, "#333333");
	line(f, fr->x0, fr->y1, fr->x1, fr->y1, "#333333");
	mid = (fr->y0 + fr->y1) / 2;
	fprintf(f, "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" " FONT
		   " transform=\"rotate(-90 18 %.1f)\">", mid, mid);
	html_escape(f, label);
	fputs("</text>\n", f);
	return top;
}

/* x position of value x on an axis spanning [e0, e1] (exponents of two on a log axis). */
static double xpos(const struct frame *fr, bool logx, double e0, double e1, double x)
{
	return fr->x0 + (fr->x1 - fr->x0) * ((logx ? log2(x) : x) - e0) / (e1 - e0);
}

int svg_line_chart(FILE *f, const struct svg_line_chart *c)
{
	int w = c->width ? c->width : 900, h = c->height ? c->height : 420, i, k;
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0, top, e0, e1, e, lab;
	const char **names = calloc((size_t)c->nseries + 1, sizeof(*names));
	struct frame fr;
	char buf[32];

	if (!names)
		return -ENOMEM;
	for (i = 0; i < c->nseries; i++) {
		names[i] = c->series[i].name;
		for (k = 0; k < c->series[i].n; k++) {
			double x = c->series[i].x[k], y = c->series[i].y[k];

			if (c->logx && !(x > 0))
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			if (isfinite(y))
				ymax = fmax(ymax, y);
		}
	}
	if (!isfinite(xmin)) {
		xmin = c->logx ? 1 : 0;
		xmax = c->logx ? 2 : 1;
	}
	if (xmax <= xmin)
		xmax = c->logx ? xmin * 2 : xmin + 1;
	h = fit_height(h, names, c->nseries);
	frame_init(&fr, w, h, names, c->nseries);
	svg_open(f, w, h, c->title);
	top = y_axis(f, &fr, ymax * 1.05, c->ylabel);
	/* x axis: powers of two on a log axis, labels at most about 10 of them. */
	e0 = c->logx ? floor(log2(xmin)) : xmin;
	e1 = c->logx ? ceil(log2(xmax)) : xmax;
	lab = c->logx ? fmax(1, ceil((e1 - e0) / 10)) : 0;
	if (c->logx) {
		for (e = e0; e <= e1; e++) {
			double x = xpos(&fr, c->logx, e0, e1, pow(2, e));
			bool labelled = fmod(e - e0, lab) == 0;

			line(f, x, fr.y1, x, fr.y1 + (labelled ? 6 : 3), "#333333");
			if (labelled)
				text(f, x, fr.y1 + 20, "middle", 11, NULL,
				     svg_size_label(pow(2, e), buf, sizeof(buf)));
		}
	} else {
		double step = svg_nice_step(e1 - e0, 8), v;

		for (v = ceil(e0 / step) * step; v <= e1 + step / 1e6; v += step) {
			double x = xpos(&fr, false, e0, e1, v);

			line(f, x, fr.y1, x, fr.y1 + 6, "#333333");
			fmt_tick(v, step, buf, sizeof(buf));
			text(f, x, fr.y1 + 20, "middle", 11, NULL, buf);
		}
	}
	text(f, (fr.x0 + fr.x1) / 2, h - 18, "middle", 12, NULL, c->xlabel);
	for (i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];
		const char *col = palette[i % NPALETTE];
		bool open = false;

		for (k = 0; k < s->n; k++) {
			double x = s->x[k], y = s->y[k];

			if (!isfinite(y) || (c->logx && !(x > 0))) {
				if (open)
					fputs("\"/>\n", f);
				open = false;
				continue;
			}
			if (!open)
				fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" "
					   "stroke-width=\"2\" stroke-dasharray=\"%s\" points=\"",
					col, dashes[i % NDASHES]);
			fprintf(f, "%s%.1f,%.1f", open ? " " : "", xpos(&fr, c->logx, e0, e1, x),
				fr.y1 - (fr.y1 - fr.y0) * y / top);
			open = true;
		}
		if (open)
			fputs("\"/>\n", f);
		for (k = 0; k < s->n; k++) {
			if (!isfinite(s->y[k]) || (c->logx && !(s->x[k] > 0)))
				continue;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
				xpos(&fr, c->logx, e0, e1, s->x[k]),
				fr.y1 - (fr.y1 - fr.y0) * s->y[k] / top, col);
		}
	}
	legend(f, &fr, names, c->nseries, true);
	fputs("</svg>\n", f);
	free(names);
	return ferror(f) ? -EIO : 0;
}

/* True when every category label fits under its bar, unturned. */
static bool cats_fit(const struct svg_bar_chart *c, double slot)
{
	int i;

	for (i = 0; i < c->ncats; i++)
		if (slot < 7 * (double)strlen(c->cats[i]))
			return false;
	return true;
}

/* The key under a bar chart: two columns of short names, else one of long ones. */
#define KEY_CHARS 140

static int key_cols(const struct svg_bar_chart *c)
{
	int i;

	for (i = 0; i < c->ncats; i++)
		if (strlen(c->cats[i]) > 60)
			return 1;
	return 2;
}

int svg_bar_chart(FILE *f, const struct svg_bar_chart *c)
{
	int w = c->width ? c->width : 900, h = c->height ? c->height : 380, i, k;
	double ymax = c->ymax, top, slot, bw, keys_y = 0;
	int kc = key_cols(c);
	bool fit, turned = false;
	struct frame fr;

	for (i = 0; i < c->ncats && !(c->ymax > 0); i++) {
		double sum = 0;

		for (k = 0; k < c->nstacks; k++)
			if (isfinite(c->v[i * c->nstacks + k]))
				sum += c->v[i * c->nstacks + k];
		ymax = fmax(ymax, sum * 1.05);
	}
	h = fit_height(h, c->stacks, c->nstacks);
	frame_init(&fr, w, h, c->stacks, c->nstacks);
	slot = (fr.x1 - fr.x0) / (c->ncats ? c->ncats : 1);
	fit = cats_fit(c, slot) || !c->keys;
	if (!fit) {
		/* Long names: bars carry their keys, a key list under the chart names them. */
		keys_y = h - 10;
		h += 16 * ((c->ncats + kc - 1) / kc) + 20;
	}
	svg_open(f, w, h, c->title);
	top = y_axis(f, &fr, ymax, c->ylabel);
	bw = fmin(80, slot * 0.6);
	for (i = 0; i < c->ncats; i++) {
		double x = fr.x0 + slot * i + (slot - bw) / 2, base = 0;
		const char *label = fit ? c->cats[i] : c->keys[i];

		for (k = 0; k < c->nstacks; k++) {
			double v = c->v[i * c->nstacks + k], y0, y1;

			if (!isfinite(v) || v <= 0)
				continue;
			y0 = fr.y1 - (fr.y1 - fr.y0) * base / top;
			y1 = fr.y1 - (fr.y1 - fr.y0) * (base + v) / top;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				   "fill=\"%s\"/>\n", x, y1, bw, y0 - y1, palette[k % NPALETTE]);
			base += v;
		}
		if (base > 0) {
			char buf[32];
			int dec = base >= 100 ? 0 : base >= 10 ? 1 : 2;

			snprintf(buf, sizeof(buf), "%.*f", dec, base);
			text(f, x + bw / 2, fr.y1 - (fr.y1 - fr.y0) * base / top - 4, "middle", 11,
			     NULL, buf);
		}
		if (slot >= 7 * (double)strlen(label)) {
			text(f, x + bw / 2, fr.y1 + 18, "middle", 11, NULL, label);
		} else {
			char tr[96];

			snprintf(tr, sizeof(tr), "transform=\"rotate(-30 %.1f %.1f)\"", x + bw / 2,
				 fr.y1 + 14);
			text(f, x + bw / 2, fr.y1 + 14, "end", 10, tr, label);
			turned = true;
		}
	}
	text(f, (fr.x0 + fr.x1) / 2, fr.y1 + (turned ? 52 : 40), "middle", 12, NULL,
	     c->xlabel ? c->xlabel : "");
	for (i = 0; !fit && i < c->ncats; i++) {
		char buf[KEY_CHARS + 16];
		size_t n = strlen(c->cats[i]);

		if (n > KEY_CHARS)
			snprintf(buf, sizeof(buf), "%s  %.*s...", c->keys[i], KEY_CHARS - 3,
				 c->cats[i]);
		else
			snprintf(buf, sizeof(buf), "%s  %s", c->keys[i], c->cats[i]);
		text(f, 20 + (double)(i % kc) * (w - 40) / kc, keys_y + 16 * (i / kc + 1), "start",
		     11, NULL, buf);
	}
	legend(f, &fr, c->stacks, c->nstacks, false);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}

int svg_gantt(FILE *f, const struct svg_gantt *g)
{
	static const char *const names[] = { "backward compute", "queued (ready to start)",
					     "AllReduce running" };
	int w = g->width ? g->width : 900, n = g->nrows, i;
	double rh = n > 60 ? fmax(3, 600.0 / n) : 16, xmax = g->span_end, step, v;
	int h;
	struct frame fr;
	char buf[32];

	for (i = 0; i < n; i++)
		xmax = fmax(xmax, g->rows[i].end);
	if (!(xmax > 0))
		xmax = 1;
	h = (int)(40 + rh * n + 70);
	h = fit_height(h, names, 3);
	frame_init(&fr, w, h, names, 3);
	fr.y1 = fr.y0 + rh * n;
	svg_open(f, w, h, g->title);
	step = svg_nice_step(xmax, 8);
	xmax = ceil(xmax / step - 1e-9) * step;
	for (v = 0; v <= xmax + step / 2; v += step) {
		double x = fr.x0 + (fr.x1 - fr.x0) * v / xmax;

		line(f, x, fr.y0, x, fr.y1, "#eeeeee");
		line(f, x, fr.y1, x, fr.y1 + 6, "#333333");
		fmt_tick(v, step, buf, sizeof(buf));
		text(f, x, fr.y1 + 20, "middle", 11, NULL, buf);
	}
	line(f, fr.x0, fr.y0, fr.x0, fr.y1, "#333333");
	line(f, fr.x0, fr.y1, fr.x1, fr.y1, "#333333");
	text(f, (fr.x0 + fr.x1) / 2, fr.y1 + 40, "middle", 12, NULL, g->xlabel);
	fprintf(f, "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" " FONT
		   " transform=\"rotate(-90 18 %.1f)\">bucket</text>\n",
		(fr.y0 + fr.y1) / 2, (fr.y0 + fr.y1) / 2);
	if (g->span_end > 0)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"%s\" fill-opacity=\"0.25\"/>\n", fr.x0, fr.y0,
			(fr.x1 - fr.x0) * g->span_end / xmax, fr.y1 - fr.y0, palette[8]);
	for (i = 0; i < n; i++) {
		const struct svg_gantt_row *r = &g->rows[i];
		double y = fr.y0 + rh * i + rh * 0.15, bh = rh * 0.7;
		double xr = fr.x0 + (fr.x1 - fr.x0) * r->ready / xmax;
		double xs = fr.x0 + (fr.x1 - fr.x0) * r->start / xmax;
		double xe = fr.x0 + (fr.x1 - fr.x0) * r->end / xmax;

		if (!isfinite(r->ready) || !isfinite(r->start) || !isfinite(r->end))
			continue;
		if (xs > xr)
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				   "fill=\"%s\"/>\n", xr, y + bh * 0.35, xs - xr, bh * 0.3,
				palette[3]);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"%s\"/>\n", xs, y, fmax(xe - xs, 0.5), bh, palette[0]);
		if (n <= 60 || i % (int)ceil(n / 30.0) == 0) {
			snprintf(buf, sizeof(buf), "%d", i);
			text(f, fr.x0 - 6, y + bh / 2 + 4, "end", rh >= 10 ? 10 : 8, NULL, buf);
		}
	}
	{
		/* The legend in chart order: backward band, queue, AllReduce. */
		static const int col[] = { 8, 3, 0 };
		double y = fr.y0 + 10;

		for (i = 0; i < 3; i++, y += LEGEND_LINE + 6) {
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" "
				   "fill=\"%s\"%s/>\n", fr.lx + 5, y - 6, palette[col[i]],
				i ? "" : " fill-opacity=\"0.25\"");
			text(f, fr.lx + 30, y + 4, "start", 12, NULL, names[i]);
		}
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
