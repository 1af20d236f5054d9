/* Weighted least-squares fit of the alpha-beta model over a message-size sweep. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>

#include "report/fit.h"

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
