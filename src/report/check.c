/* Bound percentages and the min_busbw pass/fail rule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/check.h"
#include "report/jget.h"
#include "report/report.h"
#include "util/threshold.h"
#include "util/units.h"

double case_bound_GBps(const json_t *c)
{
	double bps = jget_num(c, "bound.Bps");

	if (strcmp(jget_str(c, "bound.kind"), "none") == 0 || !(bps > 0))
		return NAN;
	return bps / 1e9;
}

double case_pct_of_bound(const json_t *c, double busbw_GBps)
{
	return 100.0 * busbw_GBps / case_bound_GBps(c);
}

double case_headline_busbw(const json_t *c)
{
	json_t *rows = json_object_get(c, "collective"), *r;
	double best = NAN;
	size_t i;

	json_array_foreach(rows, i, r) {
		double v = jget_num(r, "busbw_GBps");

		if (isfinite(v) && !(v <= best))
			best = v;
	}
	if (isnan(best))
		best = jget_num(c, "workload.busbw_GBps");
	return best;
}

/* CPU seconds per GB (key: cpu_s_per_GB or host_cpu_s_per_GB) at the case's largest
 * size (the throughput regime). */
double case_cpu_s_per_GB(const json_t *c, const char *key)
{
	json_t *rows = json_object_get(c, "collective"), *r;
	double best = -1, v = NAN;
	size_t i;

	json_array_foreach(rows, i, r) {
		if (jget_num(r, "size") > best) {
			best = jget_num(r, "size");
			v = jget_num(r, key);
		}
	}
	return v;
}

bool case_ok(const json_t *c)
{
	return strcmp(jget_str(c, "status"), "failed") != 0;
}

bool case_unread(const json_t *c)
{
	return !strcmp(jget_str(c, "status"), "unread");
}

/*
 * One case against the threshold: every collective row whose size lies in the range
 * (each size on its own: a peak over sizes would let an in-cache size pass for all),
 * else the workload's busbw; a 1-rank case is not held. Returns true when it falls
 * short, with the why.
 */
static bool case_short(const json_t *c, const struct threshold *t, const char *text,
		       struct report_failure *x)
{
	json_t *rows = json_object_get(c, "collective"), *r;
	double need = t->abs_GBps;
	bool ranged = t->lo || t->hi != UINT64_MAX; /* else no "sizes in every size" */
	int held = 0, shortn = 0;
	char sz[32], range[64];
	size_t i;

	if (isnan(need))
		need = t->pct / 100.0 * case_bound_GBps(c);
	x->need_GBps = need;
	x->busbw_GBps = NAN;
	x->size = 0;
	threshold_range_text(t, range, sizeof(range));
	if (!case_ok(c) || case_unread(c)) { /* no figures to hold to it */
		snprintf(x->why, sizeof(x->why), "case %s: %s", jget_str(c, "status"),
			 jget_str(c, "error"));
		return true;
	}
	/* one rank moves nothing between ranks: its busbw is 0 by definition (2(n-1)/n), so
	 * holding it would fail every scaling sweep's 1-rank case (scaling efficiency's base) */
	if (jget_num(c, "nranks") == 1)
		return false;
	if (isnan(need)) {
		snprintf(x->why, sizeof(x->why), "no bound to take %g%% of", t->pct);
		return true;
	}
	json_array_foreach(rows, i, r) {
		double bw = jget_num(r, "busbw_GBps"), size = jget_num(r, "size");

		if (!(size >= 0) || !threshold_covers(t, (uint64_t)size))
			continue;
		held++;
		if (isfinite(bw) && bw >= need)
			continue;
		if (!shortn++) {
			x->busbw_GBps = bw;
			x->size = (uint64_t)size;
		}
	}
	if (held) {
		if (!shortn)
			return false;
		units_fmt_size(x->size, sz, sizeof(sz));
		snprintf(x->why, sizeof(x->why), "%d of %d sizes%s%s short; first %s: busbw "
			 "%.2f GB/s < %.2f GB/s (%s)", shortn, held, ranged ? " in " : "",
			 ranged ? range : "", sz, x->busbw_GBps, need, text);
		return true;
	}
	if (json_array_size(rows)) {
		snprintf(x->why, sizeof(x->why), "no measured size in %s", range);
		return true;
	}
	x->busbw_GBps = jget_num(c, "workload.busbw_GBps");
	if (isnan(x->busbw_GBps)) {
		snprintf(x->why, sizeof(x->why), "no bandwidth measured");
		return true;
	}
	if (x->busbw_GBps >= need)
		return false;
	snprintf(x->why, sizeof(x->why), "workload busbw %.2f GB/s < %.2f GB/s (%s)",
		 x->busbw_GBps, need, text);
	return true;
}

int report_check_threshold(const struct report_set *s, const char *min_busbw,
			   struct report_failure **fails)
{
	struct report_failure *f;
	struct threshold t;
	int i, n = 0;

	*fails = NULL;
	if (threshold_parse(min_busbw, &t, NULL, 0))
		return -EINVAL;
	f = calloc((size_t)(s->ncases ? s->ncases : 1), sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < s->ncases; i++) {
		f[n].case_idx = i;
		if (case_short(s->cases[i].json, &t, min_busbw, &f[n]))
			n++;
	}
	*fails = f;
	return n;
}
