/*
 * The alpha-beta model of a collective: t = alpha * steps + beta * bytes * factor,
 * alpha a per-step latency, beta an inverse bandwidth. steps and factor depend on
 * the algorithm and the rank count; the caller supplies them through a cost table
 * (the coll layer knows its schedules best); ab_default_costs is the textbook one.
 */
#ifndef GS_REPORT_FIT_H
#define GS_REPORT_FIT_H

#include <jansson.h>

/* Shape of one algorithm: steps and per-rank byte factor at nranks. */
struct ab_cost {
	int algo;          /* enum coll_algo */
	const char *name;  /* as report.json writes it: "ring", "tree", "rhd" */
	void (*shape)(int nranks, double *steps, double *factor);
};

/* ring 2(n-1) steps, factor 2(n-1)/n; tree and rhd 2*ceil(log2 n) steps, 2(n-1)/n. */
extern const struct ab_cost ab_default_costs[];
extern const int ab_default_ncosts;

const struct ab_cost *ab_cost_find(const struct ab_cost *t, int n, int algo);
const struct ab_cost *ab_cost_by_name(const struct ab_cost *t, int n, const char *name);

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
	int algo;                /* enum coll_algo the sweep used */
	int nranks;              /* rank count of the sweep */
	const struct ab_cost *costs; /* table used for projections; NULL = ab_default_costs */
	int ncosts;
};

/*
 * Least squares over the points, weighted by 1/t^2 so that every size of a
 * log-spaced sweep counts alike (relative error). alpha and beta are held >= 0:
 * if the free fit makes one negative, it is refitted with that one at 0.
 * Fills alpha_s, beta_s_per_B, rel_rms, npoints; -EINVAL with fewer than two
 * distinct byte counts or a non-positive time.
 */
int ab_fit(const struct ab_point *p, int n, struct ab_model *m);

/* Model time in seconds of one collective of `bytes` at nranks; NAN for an unknown algo. */
double ab_time(const struct ab_model *m, int algo, int nranks, double bytes);

/*
 * Fit from one report case: its allreduce rows of the first algorithm found (p50
 * times), at the document's rank count. m->costs/ncosts are used if set.
 * -ENOENT when the case has no usable sweep or its algorithm has no cost shape.
 */
int ab_fit_case(const json_t *c, int nranks, struct ab_model *m);

#endif
