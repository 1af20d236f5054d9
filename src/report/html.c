/* report.html: one self-contained XHTML page (inline CSS and SVG, no scripts, works offline). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/check.h"
#include "report/jget.h"
#include "report/sections.h"
#include "report/svg.h"

static const char css[] =
	"body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
	"h1{font-size:24px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:8px 0;font-size:13px}"
	"th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;"
	"max-width:300px;overflow-wrap:break-word}"
	"td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
	"th{background:#f0f0f0}"
	"tr:nth-child(even) td{background:#fafafa}"
	".chart{margin:12px 0}ul{font-size:14px}";

/* Escaped text with a zero-width space after each ',' so long case names wrap between
 * their key=value parts rather than inside a word. */
static void html_escape_breaks(FILE *f, const char *s)
{
	char one[2] = { 0 };

	for (; *s; s++) {
		one[0] = *s;
		html_escape(f, one);
		if (*s == ',')
			fputs("&#8203;", f);
	}
}

static void html_table(FILE *f, const struct rtable *t)
{
	int r, c;

	fputs("<table>\n", f);
	for (r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (c = 0; c < t->ncols; c++) {
			const char *s = tbl_cell(t, r, c);

			fputs(r ? (doc_cell_numeric(s) ? "<td class=\"n\">" : "<td>") : "<th>", f);
			html_escape_breaks(f, s);
			fputs(r ? "</td>" : "</th>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* "#12": the case's number in the Cases table, the key of abbreviated names. */
static char *case_keys(const struct report_set *s)
{
	char *k = calloc((size_t)s->ncases + 1, 8);
	int i;

	for (i = 0; k && i < s->ncases; i++)
		snprintf(k + 8 * i, 8, "#%d", i + 1);
	return k;
}

/* Items per chart when n are split into charts of at most max: as even as can be. */
static int chunk_size(int n, int max)
{
	int charts = (n + max - 1) / max;

	return charts ? (n + charts - 1) / charts : max;
}

/* busbw against size, SVG_MAX_SERIES cases per chart so every line keeps its colour. */
static int chart_busbw(FILE *f, const struct report_set *s, const char *group)
{
	struct svg_series *ser = calloc((size_t)s->ncases + 1, sizeof(*ser));
	double **xs = calloc((size_t)s->ncases + 1, sizeof(*xs));
	char title[256];
	int i, n = 0, ret = 0, first, per;

	if (!ser || !xs) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		size_t nr = json_array_size(rows), j;
		double *x, *y;
		int k = 0;

		xs[n] = x = calloc(2 * nr + 1, sizeof(double));
		if (!x) {
			ret = -ENOMEM;
			goto out_free;
		}
		y = x + nr;
		json_array_foreach(rows, j, r) {
			char g[128];

			row_group(r, g, sizeof(g));
			if (strcmp(g, group) != 0)
				continue;
			x[k] = jget_num(r, "size");
			y[k] = jget_num(r, "busbw_GBps");
			k++;
		}
		if (!k) {
			free(x);
			xs[n] = NULL;
			continue;
		}
		ser[n].name = s->cases[i].name;
		ser[n].x = x;
		ser[n].y = y;
		ser[n].n = k;
		n++;
	}
	per = chunk_size(n, SVG_MAX_SERIES);
	for (first = 0; first < n && !ret; first += per) {
		int cnt = GS_MIN(per, n - first);

		if (n > SVG_MAX_SERIES)
			snprintf(title, sizeof(title), "%s: bus bandwidth vs message size "
				 "(cases %d-%d of %d)", group, first + 1, first + cnt, n);
		else
			snprintf(title, sizeof(title), "%s: bus bandwidth vs message size", group);
		ret = svg_line_chart(f, &(struct svg_line_chart){
						.title = title,
						.xlabel = "message size per rank (bytes, log scale)",
						.ylabel = "busbw (GB/s)",
						.logx = true,
						.series = ser + first,
						.nseries = cnt,
					});
	}
out_free:
	for (i = 0; xs && i < n; i++)
		free(xs[i]);
	free(xs);
	free(ser);
	return ret;
}

/* One bar chart per SVG_MAX_BARS categories, titled with the range when split. */
static int bar_chunks(FILE *f, const struct svg_bar_chart *c)
{
	int first, ret = 0, per = chunk_size(c->ncats, SVG_MAX_BARS);
	char title[256];

	for (first = 0; first < c->ncats && !ret; first += per) {
		struct svg_bar_chart part = *c;

		part.ncats = GS_MIN(per, c->ncats - first);
		part.cats = c->cats + first;
		part.keys = c->keys ? c->keys + first : NULL;
		part.v = c->v + (size_t)first * (size_t)c->nstacks;
		if (c->ncats > SVG_MAX_BARS) {
			snprintf(title, sizeof(title), "%s (%d-%d of %d)", c->title, first + 1,
				 first + part.ncats, c->ncats);
			part.title = title;
		}
		ret = svg_bar_chart(f, &part);
	}
	if (!c->ncats)
		ret = svg_bar_chart(f, c);
	return ret;
}

static int chart_workload(FILE *f, const struct report_set *s, bool comm_wait)
{
	static const char *const iter_stacks[] = { "forward", "backward", "exposed communication" };
	static const char *const wait_stacks[] = { "comm-wait share" };
	const char **cats = calloc((size_t)s->ncases + 1, sizeof(*cats));
	const char **keys = calloc((size_t)s->ncases + 1, sizeof(*keys));
	double *v = calloc(3 * ((size_t)s->ncases + 1), sizeof(*v));
	char *kbuf = case_keys(s);
	int i, n = 0, ret;

	if (!cats || !v || !keys || !kbuf) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < s->ncases; i++) {
		const json_t *w = jget(s->cases[i].json, "workload");

		if (!json_is_object(w))
			continue;
		cats[n] = s->cases[i].name;
		keys[n] = kbuf + 8 * i;
		if (comm_wait) {
			v[n] = 100 * jget_num(w, "comm_wait_share");
		} else {
			v[3 * n] = jget_num(w, "fwd_ms.mean");
			v[3 * n + 1] = jget_num(w, "bwd_ms.mean");
			v[3 * n + 2] = jget_num(w, "exposed_comm_ms.mean");
		}
		n++;
	}
	if (comm_wait)
		ret = bar_chunks(f, &(struct svg_bar_chart){
					    .title = "Comm-wait share of the iteration per case",
					    .xlabel = "case",
					    .ylabel = "% of iteration time",
					    .cats = cats, .keys = keys, .ncats = n,
					    .stacks = wait_stacks, .nstacks = 1,
					    .v = v, .ymax = 100,
				    });
	else
		ret = bar_chunks(f, &(struct svg_bar_chart){
					    .title = "Iteration time: compute and exposed "
						     "communication per case",
					    .xlabel = "case",
					    .ylabel = "milliseconds per iteration",
					    .cats = cats, .keys = keys, .ncats = n,
					    .stacks = iter_stacks, .nstacks = 3,
					    .v = v,
				    });
out_free:
	free(kbuf);
	free(keys);
	free(v);
	free(cats);
	return ret;
}

/* Mean over the cases of each transport of CPU s/GB at their largest message size. */
static int chart_cpu(FILE *f, const struct report_set *s)
{
	/* run_result_row divides by the bytes the ranks sent (2(n-1)/n of a ring
	 * AllReduce's buffer each), not the buffer size: the legend says so */
	static const char *const stacks[] = { "CPU seconds per GB sent" };
	const char **cats = calloc((size_t)s->ncases + 1, sizeof(*cats));
	double *v = calloc((size_t)s->ncases + 1, sizeof(*v));
	int *cnt = calloc((size_t)s->ncases + 1, sizeof(*cnt));
	int i, k, n = 0, ret;

	if (!cats || !v || !cnt) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < s->ncases; i++) {
		const char *tr = jget_str(s->cases[i].json, "path.transport");
		double x = case_cpu_s_per_GB(s->cases[i].json, "cpu_s_per_GB");

		if (!isfinite(x))
			continue;
		for (k = 0; k < n && strcmp(cats[k], tr) != 0; k++)
			;
		if (k == n)
			cats[n++] = tr;
		v[k] += x;
		cnt[k]++;
	}
	for (k = 0; k < n; k++)
		v[k] /= cnt[k];
	ret = bar_chunks(f, &(struct svg_bar_chart){
				       .title = "CPU cost per transport (largest message size)",
				       .xlabel = "transport (mean over its cases)",
				       .ylabel = "CPU seconds per GB",
				       .cats = cats, .ncats = n,
				       .stacks = stacks, .nstacks = 1,
				       .v = v,
			       });
out_free:
	free(cnt);
	free(v);
	free(cats);
	return ret;
}

/* The bucket timeline of workload case idx: a Gantt row per bucket. */
static int chart_timeline(FILE *f, const struct report_set *s, int idx)
{
	const json_t *w, *tl, *b;
	struct svg_gantt_row *rows;
	char title[256];
	size_t i, n;
	int ret;

	if (idx < 0 || idx >= s->ncases)
		return -EINVAL;
	w = jget(s->cases[idx].json, "workload");
	tl = json_object_get(w, "bucket_timeline");
	n = json_array_size(tl);
	rows = calloc(n + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	json_array_foreach(tl, i, b)
		rows[i] = (struct svg_gantt_row){ .ready = jget_num(b, "ready_ms"),
						  .start = jget_num(b, "start_ms"),
						  .end = jget_num(b, "end_ms") };
	snprintf(title, sizeof(title), "#%d %s: bucket timeline of one iteration", idx + 1,
		 s->cases[idx].name);
	ret = svg_gantt(f, &(struct svg_gantt){
				   .title = title,
				   .xlabel = "milliseconds from the start of the backward pass",
				   .rows = rows, .nrows = (int)n,
				   .span_end = jget_num(w, "bwd_ms.mean"),
			   });
	free(rows);
	return ret;
}

static int html_chart(FILE *f, const struct report_set *s, const struct rblock *b)
{
	int ret = 0;

	fputs("<div class=\"chart\">\n", f);
	switch (b->chart) {
	case CHART_BUSBW:
		ret = chart_busbw(f, s, b->chart_arg);
		break;
	case CHART_ITER:
		ret = chart_workload(f, s, false);
		break;
	case CHART_COMM_WAIT:
		ret = chart_workload(f, s, true);
		break;
	case CHART_CPU:
		ret = chart_cpu(f, s);
		break;
	case CHART_TIMELINE:
		ret = chart_timeline(f, s, atoi(b->chart_arg));
		break;
	}
	fputs("</div>\n", f);
	return ret;
}

static const char *const tags[] = {
	[RB_H1] = "h1", [RB_H2] = "h2", [RB_H3] = "h3", [RB_PARA] = "p",
};

int report_write_html(FILE *f, const struct report_set *s, const struct report_opts *o)
{
	struct rdoc d = { 0 };
	bool in_list = false;
	int i, ret = report_build_doc(s, o, &d);

	if (ret)
		goto out_free;
	fprintf(f, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n"
		   "<head>\n<meta charset=\"utf-8\"/>\n<title>gradsync report</title>\n"
		   "<style>%s</style>\n</head>\n<body>\n", css);
	for (i = 0; i < d.n && !ret; i++) {
		const struct rblock *b = &d.b[i];

		if (in_list && b->kind != RB_ITEM) {
			fputs("</ul>\n", f);
			in_list = false;
		}
		switch (b->kind) {
		case RB_H1:
		case RB_H2:
		case RB_H3:
		case RB_PARA:
			fprintf(f, "<%s>", tags[b->kind]);
			html_escape(f, b->text);
			fprintf(f, "</%s>\n", tags[b->kind]);
			break;
		case RB_ITEM:
			if (!in_list)
				fputs("<ul>\n", f);
			in_list = true;
			fputs("<li>", f);
			html_escape(f, b->text);
			fputs("</li>\n", f);
			break;
		case RB_TABLE:
			html_table(f, b->t);
			break;
		case RB_CHART:
			ret = html_chart(f, s, b);
			break;
		}
	}
	if (in_list)
		fputs("</ul>\n", f);
	fputs("</body>\n</html>\n", f);
	if (!ret && ferror(f))
		ret = -EIO;
out_free:
	doc_free(&d);
	return ret;
}
