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
	"max-width:300px}"
	"td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
	"th{background:#f0f0f0}"
	"tr:nth-child(even) td{background:#fafafa}"
	".chart{margin:12px 0}ul{font-size:14px}";

static void html_table(FILE *f, const struct rtable *t)
{
	int r, c;

	fputs("<table>\n", f);
	for (r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (c = 0; c < t->ncols; c++) {
			const char *s = tbl_cell(t, r, c);

			fputs(r ? (doc_cell_numeric(s) ? "<td class=\"n\">" : "<td>") : "<th>", f);
			html_escape(f, s);
			fputs(r ? "</td>" : "</th>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int chart_busbw(FILE *f, const struct report_set *s, const char *group)
{
	struct svg_series *ser = calloc((size_t)s->ncases + 1, sizeof(*ser));
	double *buf = calloc(2 * 256 * ((size_t)s->ncases + 1), sizeof(double));
	char title[192];
	int i, n = 0, ret;

	if (!ser || !buf) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		double *x = buf + 512 * n, *y = x + 256;
		int k = 0;
		size_t j;

		json_array_foreach(rows, j, r) {
			char g[128];

			row_group(r, g, sizeof(g));
			if (strcmp(g, group) != 0 || k >= 256)
				continue;
			x[k] = jget_num(r, "size");
			y[k] = jget_num(r, "busbw_GBps");
			k++;
		}
		if (!k)
			continue;
		ser[n].name = s->cases[i].name;
		ser[n].x = x;
		ser[n].y = y;
		ser[n].n = k;
		n++;
	}
	snprintf(title, sizeof(title), "%s: bus bandwidth vs message size", group);
	ret = svg_line_chart(f, &(struct svg_line_chart){
					.title = title,
					.xlabel = "message size per rank (bytes, log scale)",
					.ylabel = "busbw (GB/s)",
					.logx = true,
					.series = ser,
					.nseries = n,
				});
out_free:
	free(buf);
	free(ser);
	return ret;
}

static int chart_workload(FILE *f, const struct report_set *s, bool comm_wait)
{
	static const char *const iter_stacks[] = { "forward", "backward", "exposed communication" };
	static const char *const wait_stacks[] = { "comm-wait share" };
	const char **cats = calloc((size_t)s->ncases + 1, sizeof(*cats));
	double *v = calloc(3 * ((size_t)s->ncases + 1), sizeof(*v));
	int i, n = 0, ret;

	if (!cats || !v) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < s->ncases; i++) {
		const json_t *w = jget(s->cases[i].json, "workload");

		if (!json_is_object(w))
			continue;
		cats[n] = s->cases[i].name;
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
		ret = svg_bar_chart(f, &(struct svg_bar_chart){
					       .title = "Comm-wait share of the iteration per case",
					       .xlabel = "case",
					       .ylabel = "% of iteration time",
					       .cats = cats, .ncats = n,
					       .stacks = wait_stacks, .nstacks = 1,
					       .v = v, .ymax = 100,
				       });
	else
		ret = svg_bar_chart(f, &(struct svg_bar_chart){
					       .title = "Iteration time: compute and exposed "
							"communication per case",
					       .xlabel = "case",
					       .ylabel = "milliseconds per iteration",
					       .cats = cats, .ncats = n,
					       .stacks = iter_stacks, .nstacks = 3,
					       .v = v,
				       });
out_free:
	free(v);
	free(cats);
	return ret;
}

/* Mean over the cases of each transport of CPU s/GB at their largest message size. */
static int chart_cpu(FILE *f, const struct report_set *s)
{
	static const char *const stacks[] = { "CPU seconds per GB reduced" };
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
	ret = svg_bar_chart(f, &(struct svg_bar_chart){
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
