/* Building the report document: runs, cases, collective sweeps, workload, fairness, threshold. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/check.h"
#include "report/fairness.h"
#include "report/fit.h"
#include "report/jget.h"
#include "report/links.h"
#include "report/project.h"
#include "report/sections.h"
#include "util/units.h"

char *fmt_num(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (a >= 100 || a == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 0.1)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
	return buf;
}

/*
 * Rows compared side by side: same operation and element type. The algorithm is a
 * property of the case (auto may pick several over a sweep; NCCL is its own), so it
 * does not split the comparison.
 */
void row_group(const json_t *row, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", jget_str(row, "op"), jget_str(row, "dtype"));
}

static void section_runs(const struct report_set *s, struct rdoc *d)
{
	static const char *const hdr[] = { "Run", "Experiment", "Started", "Ranks", "Launcher",
					   "Host", "Kernel", "gradsync" };
	struct rtable *t;
	int r, c;

	doc_text(d, RB_H2, "Runs");
	t = doc_table(d, 8);
	for (c = 0; c < 8; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (r = 0; r < s->nruns; r++) {
		const json_t *j = s->runs[r].root;
		int row = tbl_row(d, t);
		char n[32];

		tbl_set(d, t, row, 0, "%s", s->runs[r].name);
		tbl_set(d, t, row, 1, "%s", jget_str(j, "experiment.name"));
		tbl_set(d, t, row, 2, "%s", jget_str(j, "started"));
		tbl_set(d, t, row, 3, "%s", jget_text(j, "nranks", n, sizeof(n)));
		tbl_set(d, t, row, 4, "%s", jget_str(j, "launcher"));
		tbl_set(d, t, row, 5, "%s", jget_str(j, "fingerprint.hostname"));
		tbl_set(d, t, row, 6, "%s", jget_str(j, "fingerprint.kernel"));
		tbl_set(d, t, row, 7, "%s %s", jget_str(j, "gradsync.version"),
			jget_str(j, "gradsync.commit"));
	}
}

/* "mlx5_0 InfiniBand 400 Gb/s (4X NDR), MTU 4096, GPUDirect" */
static void path_text(const json_t *c, char *buf, size_t len)
{
	size_t off = 0;
	int i;
	static const char *const parts[] = { "path.device", "path.link_layer", "path.rate" };

	buf[0] = '\0';
	for (i = 0; i < 3; i++) {
		const char *v = jget_str(c, parts[i]);

		if (*v && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " " : "", v);
	}
	if (jget_num(c, "path.mtu") > 0 && off < len)
		off += (size_t)snprintf(buf + off, len - off, "%sMTU %.0f", off ? ", " : "",
					jget_num(c, "path.mtu"));
	if (*jget_str(c, "path.gpu_path") && off < len)
		snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
			 jget_str(c, "path.gpu_path"));
}

/* Where each case ran: the path, NUMA placement and the bound its percentages use. */
static void section_paths(const struct report_set *s, struct rdoc *d)
{
	static const char *const hdr[] = { "Case", "Path", "NUMA", "Reduce ISA",
					   "Bound (= 100%)" };
	struct rtable *t;
	char p[256];
	int i, c;

	doc_text(d, RB_H3, "Paths and bounds");
	t = doc_table(d, 5);
	for (c = 0; c < 5; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (i = 0; i < s->ncases; i++) {
		const json_t *j = s->cases[i].json;
		int row = tbl_row(d, t);

		tbl_set(d, t, row, 0, "%s", s->cases[i].name);
		path_text(j, p, sizeof(p));
		tbl_set(d, t, row, 1, "%s", p);
		tbl_set(d, t, row, 2, "%s", jget_str(j, "numa.actual"));
		tbl_set(d, t, row, 3, "%s", jget_str(j, "reduce_isa"));
		if (isfinite(case_bound_GBps(j)))
			tbl_set(d, t, row, 4, "%s: %s", jget_str(j, "bound.kind"),
				jget_str(j, "bound.desc"));
		else
			tbl_set(d, t, row, 4, "none");
	}
}

static void section_cases(const struct report_set *s, struct rdoc *d)
{
	static const char *const hdr[] = { "Case", "Status", "Transport", "Peak busbw GB/s",
					   "% of bound", "CPU s/GB", "Host CPU s/GB", "Fit α us",
					   "Fit 1/β GB/s", "Fit error" };
	char a[64], b[64];
	struct rtable *t;
	int i, c;

	doc_text(d, RB_H2, "Cases");
	if (s->baseline >= 0)
		doc_text(d, RB_PARA, "Baseline: %s. Bandwidths are bus bandwidths (busbw); "
			 "each is also given as a percentage of the case's bound. The fit is "
			 "t = α·steps + β·bytes·factor over the size sweep.",
			 s->cases[s->baseline].name);
	else
		doc_text(d, RB_PARA, "No baseline case. Bandwidths are bus bandwidths (busbw); "
			 "each is also given as a percentage of the case's bound. The fit is "
			 "t = α·steps + β·bytes·factor over the size sweep.");
	doc_text(d, RB_PARA, "CPU s/GB counts our threads; host CPU s/GB the whole host's busy "
		 "time (/proc/stat, 10 ms ticks, kernel work included) per GB sent, at the "
		 "largest size.");
	t = doc_table(d, 10);
	for (c = 0; c < 10; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (i = 0; i < s->ncases; i++) {
		const json_t *j = s->cases[i].json;
		double bw = case_headline_busbw(j);
		struct tier_fit f = { 0 };
		int row = tbl_row(d, t);

		tbl_set(d, t, row, 0, "%s", s->cases[i].name);
		tbl_set(d, t, row, 1, "%s", jget_str(j, "status"));
		tbl_set(d, t, row, 2, "%s", jget_str(j, "path.transport"));
		tbl_set(d, t, row, 3, "%s", fmt_num(bw, a, sizeof(a)));
		if (isfinite(case_pct_of_bound(j, bw)))
			tbl_set(d, t, row, 4, "%.0f%%", case_pct_of_bound(j, bw));
		else
			tbl_set(d, t, row, 4, "-");
		tbl_set(d, t, row, 5, "%s",
			fmt_num(case_cpu_s_per_GB(j, "cpu_s_per_GB"), a, sizeof(a)));
		tbl_set(d, t, row, 6, "%s",
			fmt_num(case_cpu_s_per_GB(j, "host_cpu_s_per_GB"), a, sizeof(a)));
		if (!project_fit_case(s, i, &f)) {
			tbl_set(d, t, row, 7, "%s", fmt_num(f.ab.alpha_s * 1e6, a, sizeof(a)));
			tbl_set(d, t, row, 8, "%s",
				fmt_num(f.ab.beta_s_per_B > 0 ? 1e-9 / f.ab.beta_s_per_B : NAN, b,
					sizeof(b)));
			tbl_set(d, t, row, 9, "%.1f%%", 100 * f.ab.rel_rms);
		} else {
			for (c = 7; c < 10; c++)
				tbl_set(d, t, row, c, "-");
		}
	}
	for (i = 0; i < s->ncases; i++)
		if (!case_ok(s->cases[i].json))
			doc_text(d, RB_ITEM, "%s failed: %s", s->cases[i].name,
				 jget_str(s->cases[i].json, "error"));
	section_paths(s, d);
	for (i = 0; i < s->ncases; i++)
		if (isfinite(case_cpu_s_per_GB(s->cases[i].json, "cpu_s_per_GB")))
			break;
	if (i < s->ncases)
		doc_chart(d, CHART_CPU, NULL);
}

static const json_t *find_row(const json_t *c, const char *group, double size)
{
	json_t *rows = json_object_get(c, "collective"), *r;
	char g[128];
	size_t i;

	json_array_foreach(rows, i, r) {
		row_group(r, g, sizeof(g));
		if (strcmp(g, group) == 0 && jget_num(r, "size") == size)
			return r;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorted distinct sizes of the group over all cases; returns the count (malloc'd *out). */
static int group_sizes(const struct report_set *s, const char *group, double **out)
{
	int i, n = 0, cap = 0, k;
	double *v = NULL;

	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		char g[128];
		size_t j;

		json_array_foreach(rows, j, r) {
			double sz = jget_num(r, "size");

			row_group(r, g, sizeof(g));
			if (strcmp(g, group) != 0)
				continue;
			for (k = 0; k < n && v[k] != sz; k++)
				;
			if (k < n)
				continue;
			if (n == cap) {
				double *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 32) *
							    sizeof(*v));
				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
			}
			v[n++] = sz;
		}
	}
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*out = v;
	return n;
}

static void section_group(const struct report_set *s, const char *group, struct rdoc *d)
{
	int cols[256], ncols = 0, i, k, nsz;
	struct rtable *bw, *tm;
	const json_t *base = s->baseline >= 0 ? s->cases[s->baseline].json : NULL;
	double *sizes;
	char a[64], sz[32];

	for (i = 0; i < s->ncases && ncols < 256; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		char g[128];
		size_t j;

		json_array_foreach(rows, j, r) {
			row_group(r, g, sizeof(g));
			if (strcmp(g, group) == 0) {
				cols[ncols++] = i;
				break;
			}
		}
	}
	nsz = group_sizes(s, group, &sizes);
	if (nsz <= 0)
		return;
	doc_text(d, RB_H2, "%s: bus bandwidth", group);
	doc_text(d, RB_PARA, "busbw in GB/s per message size, with the percentage of each "
		 "case's bound in parentheses.");
	bw = doc_table(d, ncols + 1);
	doc_chart(d, CHART_BUSBW, group);
	doc_text(d, RB_H2, "%s: time per operation", group);
	if (base)
		doc_text(d, RB_PARA, "Average time in microseconds; in parentheses the speed-up "
			 "against the baseline %s (above 1x: faster).",
			 s->cases[s->baseline].name);
	else
		doc_text(d, RB_PARA, "Average time in microseconds.");
	tm = doc_table(d, ncols + 1);
	tbl_set(d, bw, 0, 0, "Size");
	tbl_set(d, tm, 0, 0, "Size");
	for (k = 0; k < ncols; k++) {
		tbl_set(d, bw, 0, k + 1, "%s", s->cases[cols[k]].name);
		tbl_set(d, tm, 0, k + 1, "%s", s->cases[cols[k]].name);
	}
	for (i = 0; i < nsz; i++) {
		const json_t *brow = base ? find_row(base, group, sizes[i]) : NULL;
		int rb = tbl_row(d, bw), rt = tbl_row(d, tm);

		units_fmt_size((uint64_t)sizes[i], sz, sizeof(sz));
		tbl_set(d, bw, rb, 0, "%s", sz);
		tbl_set(d, tm, rt, 0, "%s", sz);
		for (k = 0; k < ncols; k++) {
			const json_t *c = s->cases[cols[k]].json, *r = find_row(c, group, sizes[i]);
			double v, pct, t, tb;

			if (!r)
				continue;
			v = jget_num(r, "busbw_GBps");
			pct = case_pct_of_bound(c, v);
			if (isfinite(pct))
				tbl_set(d, bw, rb, k + 1, "%s (%.0f%%)", fmt_num(v, a, sizeof(a)),
					pct);
			else
				tbl_set(d, bw, rb, k + 1, "%s", fmt_num(v, a, sizeof(a)));
			t = jget_num(r, "time_us.avg");
			tb = brow ? jget_num(brow, "time_us.avg") : NAN;
			if (cols[k] != s->baseline && isfinite(tb) && t > 0)
				tbl_set(d, tm, rt, k + 1, "%s (%.2fx)", fmt_num(t, a, sizeof(a)),
					tb / t);
			else
				tbl_set(d, tm, rt, k + 1, "%s", fmt_num(t, a, sizeof(a)));
		}
	}
	free(sizes);
}

static void section_collective(const struct report_set *s, struct rdoc *d)
{
	char groups[32][128];
	int ng = 0, i, k;

	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		size_t j;

		json_array_foreach(rows, j, r) {
			char g[128];

			row_group(r, g, sizeof(g));
			for (k = 0; k < ng && strcmp(groups[k], g) != 0; k++)
				;
			if (k == ng && ng < 32)
				snprintf(groups[ng++], sizeof(groups[0]), "%s", g);
		}
	}
	for (k = 0; k < ng; k++)
		section_group(s, groups[k], d);
}

static void section_workload(const struct report_set *s, struct rdoc *d)
{
	static const char *const hdr[] = { "Case", "Model", "Ranks", "Iter ms", "Forward ms",
					   "Backward ms", "Exposed comm ms", "Comm-wait",
					   "Overlap eff.", "Samples/s", "busbw GB/s",
					   "Scaling eff.", "Speed-up" };
	const json_t *bw = s->baseline >= 0 ? jget(s->cases[s->baseline].json, "workload") : NULL;
	double base_iter = json_is_object(bw) ? jget_num(bw, "iter_ms.mean") : NAN;
	struct rtable *t = NULL;
	char a[64];
	int i, c;

	for (i = 0; i < s->ncases; i++) {
		const json_t *j = s->cases[i].json, *w = jget(j, "workload");
		double v, pct, it;
		int row;

		if (!json_is_object(w))
			continue;
		if (!t) {
			doc_text(d, RB_H2, "Workload");
			doc_text(d, RB_PARA, "Mean times per iteration. Comm-wait: share of the "
				 "iteration spent waiting for communication; speed-up: baseline "
				 "iteration time over the case's.");
			t = doc_table(d, 13);
			for (c = 0; c < 13; c++)
				tbl_set(d, t, 0, c, "%s", hdr[c]);
		}
		row = tbl_row(d, t);
		tbl_set(d, t, row, 0, "%s", s->cases[i].name);
		tbl_set(d, t, row, 1, "%s", jget_str(w, "model"));
		tbl_set(d, t, row, 2, "%.0f", jget_num(w, "ranks"));
		tbl_set(d, t, row, 3, "%s", fmt_num(jget_num(w, "iter_ms.mean"), a, sizeof(a)));
		tbl_set(d, t, row, 4, "%s", fmt_num(jget_num(w, "fwd_ms.mean"), a, sizeof(a)));
		tbl_set(d, t, row, 5, "%s", fmt_num(jget_num(w, "bwd_ms.mean"), a, sizeof(a)));
		tbl_set(d, t, row, 6, "%s",
			fmt_num(jget_num(w, "exposed_comm_ms.mean"), a, sizeof(a)));
		tbl_set(d, t, row, 7, "%.1f%%", 100 * jget_num(w, "comm_wait_share"));
		tbl_set(d, t, row, 8, "%.1f%%", 100 * jget_num(w, "overlap_efficiency"));
		tbl_set(d, t, row, 9, "%s", fmt_num(jget_num(w, "samples_per_s"), a, sizeof(a)));
		v = jget_num(w, "busbw_GBps");
		pct = case_pct_of_bound(j, v);
		if (isfinite(pct))
			tbl_set(d, t, row, 10, "%s (%.0f%%)", fmt_num(v, a, sizeof(a)), pct);
		else
			tbl_set(d, t, row, 10, "%s", fmt_num(v, a, sizeof(a)));
		v = jget_num(w, "scaling_efficiency");
		if (isfinite(v))
			tbl_set(d, t, row, 11, "%.1f%%", 100 * v);
		else
			tbl_set(d, t, row, 11, "-");
		it = jget_num(w, "iter_ms.mean");
		if (isfinite(base_iter) && it > 0)
			tbl_set(d, t, row, 12, "%.2fx", base_iter / it);
		else
			tbl_set(d, t, row, 12, "-");
	}
	if (t) {
		doc_chart(d, CHART_ITER, NULL);
		doc_chart(d, CHART_COMM_WAIT, NULL);
	}
}

static void section_fairness(const struct report_set *s, struct rdoc *d)
{
	struct fair_item *items;
	int n = report_fairness(s, &items), i;

	doc_text(d, RB_H2, "Fairness");
	if (n < 0) {
		d->err = n;
		return;
	}
	if (!n)
		doc_text(d, RB_PARA, "No differences found between the runs' fingerprints, the "
			 "paths of cases over the same transport, or unswept settings.");
	else
		doc_text(d, RB_PARA, "These differences make the comparison unfair: the cases "
			 "did not run under the same conditions.");
	for (i = 0; i < n; i++)
		doc_text(d, RB_ITEM, "%s: %s", items[i].what, items[i].detail);
	free(items);
}

static void section_threshold(const struct report_set *s, const struct report_opts *o,
			      struct rdoc *d)
{
	struct report_failure *f;
	int n, i;

	if (!o || !o->min_busbw[0])
		return;
	doc_text(d, RB_H2, "Threshold");
	n = report_check_threshold(s, o->min_busbw, &f);
	if (n < 0) {
		doc_text(d, RB_PARA, "min_busbw \"%s\" is not a rate (20GB/s) or a percentage "
			 "of the bound (80%%).", o->min_busbw);
		return;
	}
	if (!n)
		doc_text(d, RB_PARA, "PASS: every case reaches min_busbw %s.", o->min_busbw);
	else
		doc_text(d, RB_PARA, "FAIL: %d of %d cases fall short of min_busbw %s.", n,
			 s->ncases, o->min_busbw);
	for (i = 0; i < n; i++)
		doc_text(d, RB_ITEM, "%s: %s", s->cases[f[i].case_idx].name, f[i].why);
	free(f);
}

int report_build_doc(const struct report_set *s, const struct report_opts *o, struct rdoc *d)
{
	doc_text(d, RB_H1, "gradsync report");
	doc_text(d, RB_PARA, "%d run%s, %d case%s.", s->nruns, s->nruns == 1 ? "" : "s",
		 s->ncases, s->ncases == 1 ? "" : "s");
	section_runs(s, d);
	section_cases(s, d);
	section_collective(s, d);
	section_workload(s, d);
	section_links(s, d);
	if (o && o->nproject_ranks)
		section_projection(s, o, d);
	section_fairness(s, d);
	section_threshold(s, o, d);
	return d->err;
}

int report_write_md(FILE *f, const struct report_set *s, const struct report_opts *o)
{
	struct rdoc d = { 0 };
	int ret = report_build_doc(s, o, &d);

	if (!ret)
		doc_render_md(f, &d);
	doc_free(&d);
	return ret;
}

int report_write_table(FILE *f, const struct report_set *s, const struct report_opts *o)
{
	struct rdoc d = { 0 };
	int ret = report_build_doc(s, o, &d);

	if (!ret)
		doc_render_text(f, &d);
	doc_free(&d);
	return ret;
}
