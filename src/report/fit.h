/*
 * The alpha-beta line fit: t = alpha * steps + beta * bytes * factor, alpha a per-step
 * latency, beta an inverse bandwidth. What steps and bytes an AllReduce takes on a
 * layout is tier.h's business (read from the schedules); this is the fit alone.
 */
#ifndef GS_REPORT_FIT_H
#define GS_REPORT_FIT_H

/* One measurement: bytes per rank buffer, seconds, and the algorithm's shape there. */
struct ab_point {
	double bytes;
	double time_s;
	double steps;
	double factor;
};

struct ab_model {
	double alpha_s;          /* seconds per step */
	double beta_s_per_B;     /* seconds per byte on the wire (1 / bandwidth) */
	double rel_rms;          /* sqrt(mean(((model - measured) / measured)^2)) */
	int npoints;
};

/*
 * Least squares over the points, weighted by 1/t^2 so that every size of a
 * log-spaced sweep counts alike (relative error). alpha and beta are held >= 0:
 * if the free fit makes one negative, it is refitted with that one at 0.
 * Fills alpha_s, beta_s_per_B, rel_rms, npoints; -EINVAL with fewer than two
 * distinct byte counts or a non-positive time.
 */
int ab_fit(const struct ab_point *p, int n, struct ab_model *m);

#endif
