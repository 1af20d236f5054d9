/* Bound percentages and the min_busbw pass/fail rule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/check.h"
#include "report/jget.h"
#include "report/report.h"
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

int threshold_parse(const char *s, double *abs_GBps, double *pct)
{
	size_t n = strlen(s);
	double v;

	*abs_GBps = NAN;
	*pct = NAN;
	if (n > 1 && s[n - 1] == '%') {
		char num[32];

		if (n >= sizeof(num))
			return -EINVAL;
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (units_parse_double(num, &v) || !(v > 0))
			return -EINVAL;
		*pct = v;
		return 0;
	}
	if (units_parse_rate(s, &v) || !(v > 0))
		return -EINVAL;
	*abs_GBps = v / 1e9;
	return 0;
}

int report_check_threshold(const struct report_set *s, const char *min_busbw,
			   struct report_failure **fails)
{
	struct report_failure *f;
	double abs_GBps, pct;
	int i, n = 0;

	*fails = NULL;
	if (threshold_parse(min_busbw, &abs_GBps, &pct))
		return -EINVAL;
	f = calloc((size_t)(s->ncases ? s->ncases : 1), sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (i = 0; i < s->ncases; i++) {
		const json_t *c = s->cases[i].json;
		double bw = case_headline_busbw(c), need = abs_GBps;
		struct report_failure *x = &f[n];

		if (isnan(need))
			need = pct / 100.0 * case_bound_GBps(c);
		x->case_idx = i;
		x->busbw_GBps = bw;
		x->need_GBps = need;
		if (!case_ok(c))
			snprintf(x->why, sizeof(x->why), "case failed: %s", jget_str(c, "error"));
		else if (isnan(bw))
			snprintf(x->why, sizeof(x->why), "no bandwidth measured");
		else if (isnan(need))
			snprintf(x->why, sizeof(x->why), "no bound to take %g%% of", pct);
		else if (bw < need)
			snprintf(x->why, sizeof(x->why), "busbw %.2f GB/s < %.2f GB/s (%s)", bw,
				 need, min_busbw);
		else
			continue;
		n++;
	}
	*fails = f;
	return n;
}
