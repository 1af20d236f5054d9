/*
 * Self-contained SVG charts (no scripts, no fonts beyond the generic family):
 * a line chart with an optional log2 x axis, and a grouped/stacked bar chart.
 * Every chart has a title, labelled axes with ticks, and a legend. The output is
 * well-formed XML, fit for inlining in an XHTML page. Text is escaped here.
 */
#ifndef GS_REPORT_SVG_H
#define GS_REPORT_SVG_H

#include <stdbool.h>
#include <stdio.h>

struct svg_series {
	const char *name;
	const double *x;
	const double *y;   /* NAN = no point (the line breaks there) */
	int n;
};

struct svg_line_chart {
	const char *title;
	const char *xlabel;
	const char *ylabel;
	bool logx;         /* log2 axis, ticks at powers of two labelled 4K, 16K ... 1G */
	const struct svg_series *series;
	int nseries;
	int width, height; /* 0 = 900 x 420 */
};

/* Categories along x; each bar stacks nstacks values (v[cat * nstacks + stack]). */
struct svg_bar_chart {
	const char *title;
	const char *xlabel;  /* what the categories are: "case", "transport" */
	const char *ylabel;
	const char *const *cats;
	int ncats;
	const char *const *stacks;  /* legend names of the stacked parts */
	int nstacks;
	const double *v;
	/* Short labels ("#3") drawn under the bars when the names do not fit; a key
	 * under the chart then maps them to the names. NULL = always the names. */
	const char *const *keys;
	double ymax;       /* 0 = from the data; e.g. 100 for a percentage axis */
	int width, height; /* 0 = 900 x 380 */
};

/* Series or categories one chart shows at most: callers split larger sets into
 * several charts, so the palette never repeats a colour within a chart. */
#define SVG_MAX_SERIES 12
#define SVG_MAX_BARS 24

/* One bucket of a Gantt chart: milliseconds from the start of the backward pass. */
struct svg_gantt_row {
	double ready, start, end;
};

/* Bucket timeline: a row per bucket (queued from ready to start, running from start
 * to end) over a shaded band for the backward pass [0, span_end]. */
struct svg_gantt {
	const char *title;
	const char *xlabel;
	const struct svg_gantt_row *rows;
	int nrows;
	double span_end;
	int width;         /* 0 = 900; the height follows the rows */
};

int svg_line_chart(FILE *f, const struct svg_line_chart *c);
int svg_bar_chart(FILE *f, const struct svg_bar_chart *c);
int svg_gantt(FILE *f, const struct svg_gantt *g);

/* "4K", "64M", "1G", "512" for a power-of-two byte count. */
char *svg_size_label(double bytes, char *buf, size_t len);
/* Tick step 1, 2 or 5 x 10^k giving about `ticks` ticks from 0 to at least max. */
double svg_nice_step(double max, int ticks);

#endif
