/* report.csv: one row per case x size of each collective sweep, plus one per workload case. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/check.h"
#include "report/jget.h"
#include "report/report.h"
#include "report/sections.h"

static const char *const csv_cols[] = {
	"kind", "run", "case", "status", "transport", "op", "algo", "dtype", "size", "count",
	"iterations", "time_avg_us", "time_p50_us", "time_p99_us", "algbw_GBps", "busbw_GBps",
	"pct_of_bound", "bound_kind", "bound_GBps", "speedup", "wrong", "cpu_s_per_GB",
	"host_cpu_s_per_GB", "model",
	"ranks", "iter_ms", "fwd_ms", "bwd_ms", "exposed_comm_ms", "comm_wait_share",
	"overlap_efficiency", "samples_per_s", "scaling_efficiency",
};
#define NCOLS (sizeof(csv_cols) / sizeof(csv_cols[0]))

struct csv_row {
	char v[NCOLS][200];
};

static int col(const char *name)
{
	size_t i;

	for (i = 0; i < NCOLS; i++)
		if (strcmp(csv_cols[i], name) == 0)
			return (int)i;
	return 0;
}

static void put_str(struct csv_row *r, const char *name, const char *v)
{
	snprintf(r->v[col(name)], sizeof(r->v[0]), "%s", v);
}

static void put_num(struct csv_row *r, const char *name, double v)
{
	if (!isfinite(v))
		return;
	if (fabs(v) < 1e-12)
		v = 0; /* rounding noise of a difference, not a figure */
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(r->v[col(name)], sizeof(r->v[0]), "%.0f", v);
	else
		snprintf(r->v[col(name)], sizeof(r->v[0]), "%.6g", v);
}

static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void emit(FILE *f, const struct csv_row *r)
{
	size_t i;

	for (i = 0; i < NCOLS; i++) {
		if (i)
			fputc(',', f);
		csv_field(f, r->v[i]);
	}
	fputc('\n', f);
}

/* A number column copied as it is from a member of a collective row or of a workload. */
struct csv_copy {
	const char *col;
	const char *path; /* jget path in the row or the workload object */
};

static const struct csv_copy coll_copies[] = {
	{ "size", "size" },
	{ "count", "count" },
	{ "iterations", "iterations" },
	{ "time_avg_us", "time_us.avg" },
	{ "time_p50_us", "time_us.p50" },
	{ "time_p99_us", "time_us.p99" },
	{ "algbw_GBps", "algbw_GBps" },
	{ "busbw_GBps", "busbw_GBps" },
	{ "wrong", "wrong" },
	{ "cpu_s_per_GB", "cpu_s_per_GB" },
	{ "host_cpu_s_per_GB", "host_cpu_s_per_GB" },
};

static const struct csv_copy wl_copies[] = {
	{ "ranks", "ranks" },
	{ "iterations", "iterations" },
	{ "iter_ms", "iter_ms.mean" },
	{ "fwd_ms", "fwd_ms.mean" },
	{ "bwd_ms", "bwd_ms.mean" },
	{ "exposed_comm_ms", "exposed_comm_ms.mean" },
	{ "comm_wait_share", "comm_wait_share" },
	{ "overlap_efficiency", "overlap_efficiency" },
	{ "samples_per_s", "samples_per_s" },
	{ "scaling_efficiency", "scaling_efficiency" },
	{ "busbw_GBps", "busbw_GBps" },
};

static void put_copies(struct csv_row *r, const json_t *obj, const struct csv_copy *cp, size_t n)
{
	for (size_t k = 0; k < n; k++)
		put_num(r, cp[k].col, jget_num(obj, cp[k].path));
}

static void case_common(const struct report_set *s, int i, const char *kind, struct csv_row *r)
{
	const json_t *c = s->cases[i].json;

	memset(r, 0, sizeof(*r));
	put_str(r, "kind", kind);
	put_str(r, "run", s->runs[s->cases[i].run].name);
	put_str(r, "case", s->cases[i].name);
	put_str(r, "status", jget_str(c, "status"));
	put_str(r, "transport", jget_str(c, "path.transport"));
	put_str(r, "bound_kind", jget_str(c, "bound.kind"));
	put_num(r, "bound_GBps", case_bound_GBps(c));
}

/*
 * Case i's baseline's time of the same row group and size, NAN if none has such a row:
 * the tables' speed-up (row_group), whatever algorithm each case's auto picked.
 */
static double baseline_time(const struct report_set *s, int ci, const json_t *row)
{
	const json_t *base = report_case_ref(s, ci), *b;
	char g[128];

	if (!base)
		return NAN;
	row_group(row, g, sizeof(g));
	b = row_find(base, g, jget_num(row, "size"));
	return b ? jget_num(b, "time_us.avg") : NAN;
}

static void emit_collective(FILE *f, const struct report_set *s, int i)
{
	const json_t *c = s->cases[i].json;
	json_t *rows = json_object_get(c, "collective"), *x;
	struct csv_row r;
	size_t k;

	json_array_foreach(rows, k, x) {
		double bw = jget_num(x, "busbw_GBps"), tb = baseline_time(s, i, x);

		case_common(s, i, "collective", &r);
		put_str(&r, "op", jget_str(x, "op"));
		put_str(&r, "algo", jget_str(x, "algo"));
		put_str(&r, "dtype", jget_str(x, "dtype"));
		put_copies(&r, x, coll_copies, ARRAY_SIZE(coll_copies));
		put_num(&r, "pct_of_bound", case_pct_of_bound(c, bw));
		put_num(&r, "speedup", tb / jget_num(x, "time_us.avg"));
		emit(f, &r);
	}
}

static void emit_workload(FILE *f, const struct report_set *s, int i)
{
	const json_t *c = s->cases[i].json, *w = jget(c, "workload");
	const json_t *bw = jget(report_case_ref(s, i), "workload");
	struct csv_row r;

	if (!json_is_object(w))
		return;
	case_common(s, i, "workload", &r);
	put_str(&r, "model", jget_str(w, "model"));
	put_copies(&r, w, wl_copies, ARRAY_SIZE(wl_copies));
	put_num(&r, "pct_of_bound", case_pct_of_bound(c, jget_num(w, "busbw_GBps")));
	if (json_is_object(bw))
		put_num(&r, "speedup", jget_num(bw, "iter_ms.mean") / jget_num(w, "iter_ms.mean"));
	emit(f, &r);
}

int report_write_csv(FILE *f, const struct report_set *s, const struct report_opts *o)
{
	struct csv_row r;
	size_t k;
	int i;

	(void)o;
	for (k = 0; k < NCOLS; k++)
		fprintf(f, "%s%s", k ? "," : "", csv_cols[k]);
	fputc('\n', f);
	for (i = 0; i < s->ncases; i++) {
		const json_t *c = s->cases[i].json;

		emit_collective(f, s, i);
		emit_workload(f, s, i);
		/* A case that produced nothing still gets a row, so its failure is visible. */
		if (!json_array_size(json_object_get(c, "collective")) &&
		    !json_is_object(jget(c, "workload"))) {
			case_common(s, i, "case", &r);
			emit(f, &r);
		}
	}
	return ferror(f) ? -EIO : 0;
}
