/* Weighted least-squares fit of the alpha-beta model over a message-size sweep. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "coll/schedule.h"
#include "report/fit.h"
#include "report/jget.h"

static double log2_ceil(int n)
{
	double s = 0;

	while ((1 << (int)s) < n)
		s++;
	return s;
}

static void ring_shape(int n, double *steps, double *factor)
{
	*steps = 2.0 * (n - 1);
	*factor = n > 0 ? 2.0 * (n - 1) / n : 0;
}

/*
 * Double binary tree (reduce up, broadcast down, log2(n) hops each way, each tree
 * carrying half the data) and recursive halving-doubling (reduce-scatter by
 * halving, allgather by doubling) share one shape: 2*ceil(log2 n) steps, and each
 * rank moves the buffer about 2(n-1)/n times, as the ring does.
 */
static void log_shape(int n, double *steps, double *factor)
{
	*steps = 2.0 * log2_ceil(n);
	*factor = n > 0 ? 2.0 * (n - 1) / n : 0;
}

const struct ab_cost ab_default_costs[] = {
	{ ALGO_RING, "ring", ring_shape },
	{ ALGO_TREE, "tree", log_shape },
	{ ALGO_RHD, "rhd", log_shape },
};
const int ab_default_ncosts = (int)(sizeof(ab_default_costs) / sizeof(ab_default_costs[0]));

const struct ab_cost *ab_cost_find(const struct ab_cost *t, int n, int algo)
{
	int i;

	for (i = 0; i < n; i++)
		if (t[i].algo == algo)
			return &t[i];
	return NULL;
}

const struct ab_cost *ab_cost_by_name(const struct ab_cost *t, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static double rel_rms(const struct ab_point *p, int n, double a, double b)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		double e = (a * p[i].steps + b * p[i].bytes * p[i].factor - p[i].time_s) /
			   p[i].time_s;

		sum += e * e;
	}
	return sqrt(sum / n);
}

int ab_fit(const struct ab_point *p, int n, struct ab_model *m)
{
	double sss = 0, ssx = 0, sxx = 0, sst = 0, sxt = 0, det, a, b;
	bool distinct = false;
	int i;

	for (i = 0; i < n; i++) {
		double w, x;

		if (!(p[i].time_s > 0) || p[i].bytes < 0)
			return -EINVAL;
		if (p[i].bytes != p[0].bytes)
			distinct = true;
		w = 1.0 / (p[i].time_s * p[i].time_s);
		x = p[i].bytes * p[i].factor;
		sss += w * p[i].steps * p[i].steps;
		ssx += w * p[i].steps * x;
		sxx += w * x * x;
		sst += w * p[i].steps * p[i].time_s;
		sxt += w * x * p[i].time_s;
	}
	if (n < 2 || !distinct)
		return -EINVAL;
	det = sss * sxx - ssx * ssx;
	a = det != 0 ? (sst * sxx - ssx * sxt) / det : -1;
	b = det != 0 ? (sss * sxt - ssx * sst) / det : -1;
	if (a < 0 || b < 0) {
		/* Keep the better of the two one-parameter fits. */
		double a0 = sss > 0 ? sst / sss : 0, b0 = sxx > 0 ? sxt / sxx : 0;

		if (sxx > 0 && (sss == 0 || rel_rms(p, n, 0, b0) <= rel_rms(p, n, a0, 0))) {
			a = 0;
			b = b0;
		} else {
			a = a0;
			b = 0;
		}
	}
	m->alpha_s = a;
	m->beta_s_per_B = b;
	m->rel_rms = rel_rms(p, n, a, b);
	m->npoints = n;
	return 0;
}

double ab_time(const struct ab_model *m, int algo, int nranks, double bytes)
{
	const struct ab_cost *t = m->costs ? m->costs : ab_default_costs;
	int nt = m->costs ? m->ncosts : ab_default_ncosts;
	const struct ab_cost *c = ab_cost_find(t, nt, algo);
	double steps, factor;

	if (!c || nranks < 1)
		return NAN;
	if (nranks == 1)
		return 0;
	c->shape(nranks, &steps, &factor);
	return m->alpha_s * steps + m->beta_s_per_B * bytes * factor;
}

int ab_fit_case(const json_t *c, int nranks, struct ab_model *m)
{
	const struct ab_cost *t = m->costs ? m->costs : ab_default_costs;
	int nt = m->costs ? m->ncosts : ab_default_ncosts;
	json_t *rows = json_object_get(c, "collective"), *r;
	const struct ab_cost *cost = NULL;
	struct ab_point pts[128];
	int np = 0, ret;
	size_t i;

	if (nranks < 2)
		return -ENOENT;
	json_array_foreach(rows, i, r) {
		double steps, factor, t_us = jget_num(r, "time_us.p50");

		if (strcmp(jget_str(r, "op"), "allreduce") != 0)
			continue;
		if (!cost)
			cost = ab_cost_by_name(t, nt, jget_str(r, "algo"));
		if (!cost)
			return -ENOENT;
		if (strcmp(jget_str(r, "algo"), cost->name) != 0 || np >= 128)
			continue;
		if (!isfinite(t_us))
			t_us = jget_num(r, "time_us.avg");
		if (!(t_us > 0) || !(jget_num(r, "size") >= 0))
			continue;
		cost->shape(nranks, &steps, &factor);
		pts[np].bytes = jget_num(r, "size");
		pts[np].time_s = t_us * 1e-6;
		pts[np].steps = steps;
		pts[np].factor = factor;
		np++;
	}
	if (!cost)
		return -ENOENT;
	ret = ab_fit(pts, np, m);
	if (ret)
		return -ENOENT;
	m->algo = cost->algo;
	m->nranks = nranks;
	return 0;
}
