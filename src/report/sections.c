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
#include "util/cpus.h"
#include "util/units.h"
#include "util/strutil.h"

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
 * does not split the comparison. Point-to-point ops move bytes whatever the dtype their
 * row records (runs before u8 wrote [collective] dtype, which they never read).
 */
void row_group(const json_t *row, char *buf, size_t len)
{
	const char *op = jget_str(row, "op");

	if (strcmp(op, "allreduce"))
		snprintf(buf, len, "%s", op);
	else
		snprintf(buf, len, "%s %s", op, jget_str(row, "dtype"));
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

		if (*v)
			str_appendf(buf, len, &off, "%s%s", off ? " " : "", v);
	}
	if (jget_num(c, "path.mtu") > 0)
		str_appendf(buf, len, &off, "%sMTU %.0f", off ? ", " : "", jget_num(c, "path.mtu"));
	if (*jget_str(c, "path.gpu_path"))
		str_appendf(buf, len, &off, "%s%s", off ? ", " : "", jget_str(c, "path.gpu_path"));
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
	for (i = 0; i < s->ncases; i++)
		if (!strcmp(jget_str(s->cases[i].json, "bound.kind"), "memcpy"))
			break;
	/* a memcpy bound is out of cache: an in-cache size beats it, and it is no error */
	if (i < s->ncases)
		doc_text(d, RB_PARA, "A memcpy bound is a 64 MiB copy, out of the CPU's caches: a "
			 "size that fits in them can pass it (over 100%%).");
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
	static const char *const hdr[] = { "#", "Case", "Status", "Transport", "Peak busbw GB/s",
					   "% of bound", "CPU s/GB", "Host CPU s/GB", "Fit α us",
					   "Fit 1/β GB/s", "Fit error" };
	char a[64], b[64], base[1200];
	struct rtable *t;
	int i, c;

	doc_text(d, RB_H2, "Cases");
	report_baseline_text(s, base, sizeof(base));
	doc_text(d, RB_PARA, "%s%s. Bandwidths are bus bandwidths (busbw); each is also given "
		 "as a percentage of the case's bound. The fit is t = α·steps + β·bytes·factor "
		 "over the size sweep's p50 times (the tables show the mean beside them).",
		 s->rule || s->baseline >= 0 ? "Speed-ups: " : "",
		 s->rule || s->baseline >= 0 ? base : "No baseline case");
	doc_text(d, RB_PARA, "CPU s/GB counts our threads; host CPU s/GB the whole host's busy "
		 "time (/proc/stat, 10 ms ticks, kernel work included) per GB sent, at the "
		 "largest size ('-' from fewer than %d ticks: mostly rounding).",
		 CPUS_HOST_MIN_TICKS);
	t = doc_table(d, 11);
	for (c = 0; c < 11; c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (i = 0; i < s->ncases; i++) {
		const json_t *j = s->cases[i].json;
		double bw = case_headline_busbw(j);
		struct tier_fit f = { 0 };
		int row = tbl_row(d, t);

		tbl_set(d, t, row, 0, "%d", i + 1);
		tbl_set(d, t, row, 1, "%s", s->cases[i].name);
		tbl_set(d, t, row, 2, "%s", jget_str(j, "status"));
		tbl_set(d, t, row, 3, "%s", jget_str(j, "path.transport"));
		tbl_set(d, t, row, 4, "%s", fmt_num(bw, a, sizeof(a)));
		if (isfinite(case_pct_of_bound(j, bw)))
			tbl_set(d, t, row, 5, "%.0f%%", case_pct_of_bound(j, bw));
		else
			tbl_set(d, t, row, 5, "-");
		tbl_set(d, t, row, 6, "%s",
			fmt_num(case_cpu_s_per_GB(j, "cpu_s_per_GB"), a, sizeof(a)));
		tbl_set(d, t, row, 7, "%s",
			fmt_num(case_cpu_s_per_GB(j, "host_cpu_s_per_GB"), a, sizeof(a)));
		if (!project_fit_case(s, i, &f)) {
			/* held at 0 by the fit: no latency was seen, none was measured */
			tbl_set(d, t, row, 8, "%s", f.ab.alpha_s > 0 ?
				fmt_num(f.ab.alpha_s * 1e6, a, sizeof(a)) : "not resolved");
			tbl_set(d, t, row, 9, "%s",
				fmt_num(f.ab.beta_s_per_B > 0 ? 1e-9 / f.ab.beta_s_per_B : NAN, b,
					sizeof(b)));
			tbl_set(d, t, row, 10, "%.1f%%", 100 * f.ab.rel_rms);
		} else {
			for (c = 8; c < 11; c++)
				tbl_set(d, t, row, c, "-");
		}
	}
	/* a case whose results were not read back is not a failed one: said as what it is */
	for (i = 0; i < s->ncases; i++)
		if (!case_ok(s->cases[i].json) || case_unread(s->cases[i].json))
			doc_text(d, RB_ITEM, "%s %s: %s", s->cases[i].name,
				 jget_str(s->cases[i].json, "status"),
				 jget_str(s->cases[i].json, "error"));
	section_paths(s, d);
	for (i = 0; i < s->ncases; i++)
		if (isfinite(case_cpu_s_per_GB(s->cases[i].json, "cpu_s_per_GB")))
			break;
	if (i < s->ncases)
		doc_chart(d, CHART_CPU, NULL);
}

const json_t *row_find(const json_t *c, const char *group, double size)
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

/* Case columns per comparison table: wider tables are split, the Size column repeated. */
#define GROUP_COLS 8
/* Names longer than this head a column as "#k" (the case's number in the Cases table). */
#define HEAD_CHARS 24

static void case_head(const struct report_set *s, int i, char *buf, size_t len)
{
	if (strlen(s->cases[i].name) > HEAD_CHARS)
		snprintf(buf, len, "#%d", i + 1);
	else
		snprintf(buf, len, "%s", s->cases[i].name);
}

/* Indices of the cases with rows of the group (malloc'd *out); returns the count. */
static int group_cases(const struct report_set *s, const char *group, int **out)
{
	int *cols = calloc((size_t)s->ncases + 1, sizeof(*cols)), n = 0, i;

	*out = cols;
	if (!cols)
		return -1;
	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		char g[128];
		size_t j;

		json_array_foreach(rows, j, r) {
			row_group(r, g, sizeof(g));
			if (strcmp(g, group) == 0) {
				cols[n++] = i;
				break;
			}
		}
	}
	return n;
}

/* Has any of cases cols[0..ncols) a baseline other than itself? */
static bool any_ref(const struct report_set *s, const int *cols, int ncols)
{
	int k;

	for (k = 0; k < ncols; k++)
		if (s->cases[cols[k]].ref >= 0 && s->cases[cols[k]].ref != cols[k])
			return true;
	return false;
}

/* busbw (bw) or time (tm) per size for cases cols[0..ncols) of the group. */
static void group_table(const struct report_set *s, const char *group, const int *cols,
			int ncols, const double *sizes, int nsz, bool time, struct rdoc *d)
{
	struct rtable *t = doc_table(d, ncols + 1);
	char a[64], sz[32], h[32];
	int i, k;

	tbl_set(d, t, 0, 0, "Size");
	for (k = 0; k < ncols; k++) {
		case_head(s, cols[k], h, sizeof(h));
		tbl_set(d, t, 0, k + 1, "%s", h);
	}
	for (i = 0; i < nsz; i++) {
		int row = tbl_row(d, t);

		units_fmt_size((uint64_t)sizes[i], sz, sizeof(sz));
		tbl_set(d, t, row, 0, "%s", sz);
		for (k = 0; k < ncols; k++) {
			const json_t *c = s->cases[cols[k]].json, *r = row_find(c, group, sizes[i]);
			const json_t *base = s->cases[cols[k]].ref != cols[k] ?
					     report_case_ref(s, cols[k]) : NULL;
			const json_t *brow = base ? row_find(base, group, sizes[i]) : NULL;
			double v, pct, tb;

			if (!r)
				continue;
			if (!time) {
				v = jget_num(r, "busbw_GBps");
				pct = case_pct_of_bound(c, v);
				if (isfinite(pct))
					tbl_set(d, t, row, k + 1, "%s (%.0f%%)",
						fmt_num(v, a, sizeof(a)), pct);
				else
					tbl_set(d, t, row, k + 1, "%s", fmt_num(v, a, sizeof(a)));
				continue;
			}
			v = jget_num(r, "time_us.avg");
			tb = brow ? jget_num(brow, "time_us.avg") : NAN;
			if (isfinite(tb) && v > 0)
				tbl_set(d, t, row, k + 1, "%s (%.2fx)", fmt_num(v, a, sizeof(a)),
					tb / v);
			else
				tbl_set(d, t, row, k + 1, "%s", fmt_num(v, a, sizeof(a)));
		}
	}
}

/* The comparison split into tables of GROUP_COLS case columns. */
static void group_tables(const struct report_set *s, const char *group, const int *cols,
			 int ncols, const double *sizes, int nsz, bool time, struct rdoc *d)
{
	int first;

	for (first = 0; first < ncols; first += GROUP_COLS) {
		int n = GS_MIN(GROUP_COLS, ncols - first);

		if (ncols > GROUP_COLS)
			doc_text(d, RB_PARA, "Cases %d-%d of %d:", first + 1, first + n, ncols);
		group_table(s, group, cols + first, n, sizes, nsz, time, d);
	}
}

/* nccl-tests' columns for every case and size: the figures behind the comparison. */
static void group_details(const struct report_set *s, const char *group, const int *cols,
			  int ncols, struct rdoc *d)
{
	static const char *const hdr[] = { "Case", "Size", "Count", "Iters", "Avg us", "p50 us",
					   "p99 us", "algbw GB/s", "busbw GB/s", "#wrong",
					   "Slowest rank", "Rank spread" };
	struct rtable *t;
	char a[64], sz[32], n[32];
	int k, c;

	doc_text(d, RB_H3, "%s: per size", group);
	if (!strncmp(group, "write_", 6))
		/* point-to-point rows time messages, not iterations (run/result.c) */
		doc_text(d, RB_PARA, "Time of one message (write_lat: half a round trip, as "
			 "perftest reports it), the slower of the two ranks'; avg/p50/p99 over the "
			 "measurements, each of Iters messages (with few measurements p99 is the "
			 "largest).");
	else
		doc_text(d, RB_PARA, "Time of an iteration is the ranks' mean, each rank's from "
			 "its entry to its exit; p50/p99 over the iterations (nearest rank: below "
			 "100 iterations p99 is the largest). Slowest rank: the "
			 "rank the others waited for in most iterations; rank spread: median over "
			 "iterations of the longest rank time over the shortest.");
	t = doc_table(d, ARRAY_SIZE(hdr));
	for (c = 0; c < (int)ARRAY_SIZE(hdr); c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	for (k = 0; k < ncols; k++) {
		json_t *rows = json_object_get(s->cases[cols[k]].json, "collective"), *r;
		bool named = false;
		size_t j;

		json_array_foreach(rows, j, r) {
			char g[128];
			int row;

			row_group(r, g, sizeof(g));
			if (strcmp(g, group) != 0)
				continue;
			row = tbl_row(d, t);
			/* The name once per case, on its first size; a failed case's rows
			 * are the sizes it finished before it stopped, and say so */
			if (!named)
				tbl_set(d, t, row, 0, "%s%s", s->cases[cols[k]].name,
					case_ok(s->cases[cols[k]].json) ? "" :
					" (failed: the sizes before it stopped)");
			named = true;
			units_fmt_size((uint64_t)jget_num(r, "size"), sz, sizeof(sz));
			tbl_set(d, t, row, 1, "%s", sz);
			tbl_set(d, t, row, 2, "%s", jget_text(r, "count", n, sizeof(n)));
			tbl_set(d, t, row, 3, "%s", jget_text(r, "iterations", n, sizeof(n)));
			tbl_set(d, t, row, 4, "%s", fmt_num(jget_num(r, "time_us.avg"), a,
							sizeof(a)));
			tbl_set(d, t, row, 5, "%s", fmt_num(jget_num(r, "time_us.p50"), a,
							sizeof(a)));
			tbl_set(d, t, row, 6, "%s", fmt_num(jget_num(r, "time_us.p99"), a,
							sizeof(a)));
			tbl_set(d, t, row, 7, "%s", fmt_num(jget_num(r, "algbw_GBps"), a,
							sizeof(a)));
			tbl_set(d, t, row, 8, "%s", fmt_num(jget_num(r, "busbw_GBps"), a,
							sizeof(a)));
			/* null: verify = off, nothing was checked */
			tbl_set(d, t, row, 9, "%s", json_is_integer(jget(r, "wrong")) ?
				jget_text(r, "wrong", n, sizeof(n)) : "-");
			if (isfinite(jget_num(r, "ranks.slowest")))
				tbl_set(d, t, row, 10, "%.0f", jget_num(r, "ranks.slowest"));
			else
				tbl_set(d, t, row, 10, "-");
			if (isfinite(jget_num(r, "ranks.spread")))
				tbl_set(d, t, row, 11, "%.2fx", jget_num(r, "ranks.spread"));
			else
				tbl_set(d, t, row, 11, "-");
		}
	}
}

/*
 * " Failed part-way: A, B (each column holds the sizes measured before its case
 * stopped)." for the columns whose case failed, else "": a column with its first sizes
 * filled reads as a complete sweep otherwise.
 */
static void failed_note(const struct report_set *s, const int *cols, int ncols, char *out,
			size_t len)
{
	size_t o = 0;
	int k, n = 0;

	out[0] = '\0';
	for (k = 0; k < ncols; k++) {
		if (case_ok(s->cases[cols[k]].json))
			continue;
		str_appendf(out, len, &o, "%s%s", n++ ? ", " : " Failed part-way: ",
			    s->cases[cols[k]].name);
	}
	if (n)
		str_appendf(out, len, &o, " (%s the sizes measured before %s stopped).",
			    n > 1 ? "their columns hold" : "its column holds", n > 1 ? "they" : "it");
}

static void section_group(const struct report_set *s, const char *group, struct rdoc *d)
{
	char failed[1024];
	int *cols, ncols, nsz, k;
	bool abbrev = false;
	double *sizes;

	ncols = group_cases(s, group, &cols);
	if (ncols <= 0) {
		free(cols);
		return;
	}
	nsz = group_sizes(s, group, &sizes);
	if (nsz <= 0) {
		free(cols);
		return;
	}
	for (k = 0; k < ncols; k++)
		abbrev |= strlen(s->cases[cols[k]].name) > HEAD_CHARS;
	failed_note(s, cols, ncols, failed, sizeof(failed));
	doc_text(d, RB_H2, "%s: bus bandwidth", group);
	doc_text(d, RB_PARA, "busbw in GB/s per message size, with the percentage of each "
		 "case's bound in parentheses.%s%s", abbrev ? " Columns #k are the cases of that "
		 "number in the Cases table." : "", failed);
	group_tables(s, group, cols, ncols, sizes, nsz, false, d);
	doc_chart(d, CHART_BUSBW, group);
	doc_text(d, RB_H2, "%s: time per operation", group);
	if (any_ref(s, cols, ncols)) {
		char base[1200];

		report_baseline_text(s, base, sizeof(base));
		doc_text(d, RB_PARA, "Average time in microseconds; in parentheses the speed-up "
			 "against the case's baseline (above 1x: faster): %s.%s", base, failed);
	} else {
		doc_text(d, RB_PARA, "Average time in microseconds.%s", failed);
	}
	group_tables(s, group, cols, ncols, sizes, nsz, true, d);
	group_details(s, group, cols, ncols, d);
	free(sizes);
	free(cols);
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

/* One iteration's buckets of workload case i: when each was ready, started, ended. */
static void section_timeline(const struct report_set *s, int i, struct rdoc *d)
{
	static const char *const hdr[] = { "Bucket", "MiB", "Tensors", "Ready ms", "Start ms",
					   "End ms", "Queued ms", "AllReduce ms", "busbw GB/s" };
	const json_t *tl = jget(s->cases[i].json, "workload.bucket_timeline"), *b;
	char a[64], sz[32], arg[16];
	struct rtable *t;
	size_t k;
	int c;

	if (!json_array_size(tl))
		return;
	doc_text(d, RB_H3, "#%d %s: bucket timeline", i + 1, s->cases[i].name);
	doc_text(d, RB_PARA, "Milliseconds from the start of the backward pass, rank 0's "
		 "means over the measured iterations; the backward pass ends at %s ms (the "
		 "critical rank's mean).",
		 fmt_num(jget_num(s->cases[i].json, "workload.bwd_ms.mean"), a, sizeof(a)));
	t = doc_table(d, ARRAY_SIZE(hdr));
	for (c = 0; c < (int)ARRAY_SIZE(hdr); c++)
		tbl_set(d, t, 0, c, "%s", hdr[c]);
	json_array_foreach(tl, k, b) {
		int row = tbl_row(d, t);
		double ready = jget_num(b, "ready_ms"), start = jget_num(b, "start_ms");
		double end = jget_num(b, "end_ms");

		tbl_set(d, t, row, 0, "%.0f", jget_num(b, "index"));
		/* in one unit: exact sizes read 2052000B, 28176KiB, 15853824B side by side
		 * (the bytes are exact in report.json and the CSV) */
		tbl_set(d, t, row, 1, "%s", fmt_num(jget_num(b, "bytes") / (1 << 20), sz, sizeof(sz)));
		tbl_set(d, t, row, 2, "%.0f", jget_num(b, "tensors"));
		tbl_set(d, t, row, 3, "%s", fmt_num(ready, a, sizeof(a)));
		tbl_set(d, t, row, 4, "%s", fmt_num(start, a, sizeof(a)));
		tbl_set(d, t, row, 5, "%s", fmt_num(end, a, sizeof(a)));
		tbl_set(d, t, row, 6, "%s", fmt_num(start - ready, a, sizeof(a)));
		tbl_set(d, t, row, 7, "%s", fmt_num(end - start, a, sizeof(a)));
		tbl_set(d, t, row, 8, "%s", fmt_num(jget_num(b, "busbw_GBps"), a, sizeof(a)));
	}
	snprintf(arg, sizeof(arg), "%d", i);
	doc_chart(d, CHART_TIMELINE, arg);
}

static void section_workload(const struct report_set *s, struct rdoc *d)
{
	static const char *const hdr[] = { "Case", "Model", "Ranks", "Iter ms", "Forward ms",
					   "Backward ms", "Exposed comm ms", "Comm-wait",
					   "Overlap eff.", "Samples/s", "busbw GB/s",
					   "Scaling eff.", "Speed-up" };
	struct rtable *t = NULL;
	char a[64];
	int i, c;

	for (i = 0; i < s->ncases; i++) {
		const json_t *j = s->cases[i].json, *w = jget(j, "workload");
		const json_t *bw = jget(report_case_ref(s, i), "workload");
		double base_iter = json_is_object(bw) ? jget_num(bw, "iter_ms.mean") : NAN;
		double v, pct, it;
		int row;

		if (!json_is_object(w))
			continue;
		if (!t) {
			doc_text(d, RB_H2, "Workload");
			char base[1200];

			report_baseline_text(s, base, sizeof(base));
			doc_text(d, RB_PARA, "Mean times per iteration. Comm-wait: share of the "
				 "iteration spent waiting for communication; scaling eff.: samples/s per "
				 "rank over those of the 1-rank case of the same configuration ('-' "
				 "without one); speed-up: the iteration time of the case's baseline "
				 "over the case's (%s).", base);
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
	for (i = 0; i < s->ncases; i++)
		section_timeline(s, i, d);
}

/*
 * The host every slow pair of a pairwise row has at one end, when there are two slow
 * pairs or more and one such host: on a star of hosts that is the host's own link (or
 * the host), not each pair's path.
 */
static void slow_pairs_host(const struct report_set *s, int i, const json_t *row, struct rdoc *d)
{
	const json_t *root = s->runs[s->cases[i].run].root, *p;
	const json_t *slow = json_object_get(row, "slow_pairs");
	int nr = (int)json_array_size(jget(root, "hosts")), n = (int)json_array_size(slow);
	struct link_slow *ls;
	int *host_of, h;
	char sz[32];
	size_t k;

	if (n < 2 || nr < 3)
		return;
	ls = calloc((size_t)n, sizeof(*ls));
	host_of = links_hosts_of(root, nr);
	if (!ls || !host_of)
		goto out_free;
	json_array_foreach(slow, k, p)
		ls[k] = (struct link_slow){ (int)jget_num(p, "a"), (int)jget_num(p, "b"), 0, 0 };
	h = links_common_host(ls, n, host_of, nr);
	for (int r = 0; h >= 0 && r < nr; r++)
		if (host_of[r] == h) {
			units_fmt_size((uint64_t)jget_num(row, "size"), sz, sizeof(sz));
			doc_text(d, RB_ITEM, "%s, %s: every slow pair has host %s at one end: its "
				 "link is the slow one", s->cases[i].name, sz,
				 jget_str(json_array_get(jget(root, "hosts"), (size_t)r), "hostname"));
			break;
		}
out_free:
	free(ls);
	free(host_of);
}

static bool stragglers_head(struct rdoc *d)
{
	doc_text(d, RB_H2, "Stragglers");
	doc_text(d, RB_PARA, "A straggler is the rank that enters the collective last (the "
		 "shortest own time) in at least 75%% of at least 10 iterations of a size, "
		 "while the others wait at least 10%% of their median time for it. A slow pair (op = "
		 "pairwise) has below 60%% of the pairs' median bandwidth or above 3 times "
		 "their median latency.");
	return true;
}

/* Ranks the others persistently wait for (the run's "ranks.straggler" per size), and
 * slow rank pairs of op = pairwise. */
static void section_stragglers(const struct report_set *s, struct rdoc *d)
{
	bool head = false;
	char sz[32];
	int i;

	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		size_t j;

		json_array_foreach(rows, j, r) {
			const json_t *st = jget(r, "ranks.straggler"), *p;
			size_t k;

			json_array_foreach(json_object_get(r, "slow_pairs"), k, p) {
				if (!head)
					head = stragglers_head(d);
				units_fmt_size((uint64_t)jget_num(r, "size"), sz, sizeof(sz));
				doc_text(d, RB_ITEM, "%s, %s: slow pair %.0f-%.0f (%s - %s): %.3g GB/s, "
					 "%.3g us against the pairs' median %.3g GB/s", s->cases[i].name,
					 sz, jget_num(p, "a"), jget_num(p, "b"), jget_str(p, "host_a"),
					 jget_str(p, "host_b"), jget_num(p, "bw_GBps"),
					 jget_num(p, "lat_us"), jget_num(r, "busbw_GBps"));
			}
			slow_pairs_host(s, i, r, d);
			if (!json_is_object(st))
				continue;
			if (!head)
				head = stragglers_head(d);
			units_fmt_size((uint64_t)jget_num(r, "size"), sz, sizeof(sz));
			doc_text(d, RB_ITEM, "%s, %s: rank %.0f (host %s) last in %.0f%% of the "
				 "iterations; the others wait %.0f%% of their time for it",
				 s->cases[i].name, sz, jget_num(st, "rank"), jget_str(st, "host"),
				 100 * jget_num(st, "share"), 100 * jget_num(st, "wait_share"));
		}
	}
}

/* op = pairwise: every pair's bandwidth and latency, the slow ones marked. */
static void section_pairs(const struct report_set *s, struct rdoc *d)
{
	static const char *const hdr[] = { "Size", "Pair", "Hosts", "bw GB/s", "lat us", "Slow" };
	char a[64], b[64], sz[32];
	int i, c;

	for (i = 0; i < s->ncases; i++) {
		json_t *rows = json_object_get(s->cases[i].json, "collective"), *r;
		struct rtable *t = NULL;
		size_t j, k;

		json_array_foreach(rows, j, r) {
			const json_t *p;

			if (!json_is_array(json_object_get(r, "pairs")))
				continue;
			if (!t) {
				doc_text(d, RB_H3, "#%d %s: rank pairs", i + 1, s->cases[i].name);
				doc_text(d, RB_PARA, "Each pair a-b in turn, a streaming to b and "
					 "ping-ponging with it; the median of 5 measurements. Slow: "
					 "bandwidth below 60%% of the pairs' median, or latency above "
					 "3 times it.");
				t = doc_table(d, ARRAY_SIZE(hdr));
				for (c = 0; c < (int)ARRAY_SIZE(hdr); c++)
					tbl_set(d, t, 0, c, "%s", hdr[c]);
			}
			units_fmt_size((uint64_t)jget_num(r, "size"), sz, sizeof(sz));
			json_array_foreach(json_object_get(r, "pairs"), k, p) {
				int row = tbl_row(d, t);

				tbl_set(d, t, row, 0, "%s", sz);
				tbl_set(d, t, row, 1, "%.0f-%.0f", jget_num(p, "a"), jget_num(p, "b"));
				tbl_set(d, t, row, 2, "%s - %s", jget_str(p, "host_a"),
					jget_str(p, "host_b"));
				tbl_set(d, t, row, 3, "%s", fmt_num(jget_num(p, "bw_GBps"), a,
								    sizeof(a)));
				tbl_set(d, t, row, 4, "%s", fmt_num(jget_num(p, "lat_us"), b,
								    sizeof(b)));
				tbl_set(d, t, row, 5, "%s",
					json_is_true(json_object_get(p, "slow")) ? "SLOW" : "");
			}
		}
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
		doc_text(d, RB_PARA, "FAIL: %d of %d case%s fall%s short of min_busbw %s.", n,
			 s->ncases, s->ncases == 1 ? "" : "s", n == 1 ? "s" : "", o->min_busbw);
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
	section_stragglers(s, d);
	section_pairs(s, d);
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
