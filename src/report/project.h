/*
 * Projection of measured runs to other cluster layouts: the two-tier model (tier.h)
 * fitted on some runs' AllReduce sweeps, then AllReduce time and busbw per algorithm
 * and workload iterations (comm-wait share, scaling efficiency) at other host counts
 * and ranks per host, beside what other runs measured there. One document builder
 * serves `gradsync predict` and the report's Projection section.
 */
#ifndef GS_REPORT_PROJECT_H
#define GS_REPORT_PROJECT_H

#include <stdbool.h>
#include <stdio.h>

#include "report/doc.h"
#include "report/report.h"
#include "report/tier.h"

#define PROJECT_MAX_LAYOUTS 64

struct project_opts {
	const bool *fit_run;       /* per run of the set: fit on it (else only compared); NULL = all */
	struct tier_layout lays[PROJECT_MAX_LAYOUTS]; /* where to project */
	int nlays;
	double size;               /* AllReduce bytes to project; 0 = the largest the fit measured */
	double min_size;           /* fit only rows of at least this many bytes (0 = all) */
	const char *case_name;     /* only this workload case; NULL = all */
	bool force;                /* project even from an unusable fit */
};

/*
 * Fit the model for one transport (the cases' configured transport.transport) on the
 * fit runs' AllReduce rows of min_size bytes or more (p50 times): the inside-a-host tier on one-host cases, the
 * between-hosts tier on one-rank-per-host cases, or, when no run had that layout, on
 * cases with several ranks on several hosts (their intra-only steps taken from the
 * intra fit). *largest and *smallest get the sizes fitted. Returns the number of
 * tiers fitted (tier_model_fill not applied), or -ENOMEM.
 */
int project_fit(const struct report_set *s, const bool *fit_run, const char *transport,
		double min_size, struct tier_model *m, double *largest, double *smallest);

/*
 * The fit of one case alone, on the tier its layout is limited by (inside a host for
 * one host, else between hosts), for the report's Cases table. -ENOENT when the case
 * has no usable AllReduce sweep of two or more ranks.
 */
int project_fit_case(const struct report_set *s, int i, struct tier_fit *f);

/*
 * Add the layouts of the runs only compared against to o->lays, after those already
 * there; when o->nlays was 0, first hosts 2, 4, 8, 16, 64 at each ranks-per-host count
 * the fit runs used.
 */
void project_default_layouts(const struct report_set *s, struct project_opts *o);

/*
 * The projection document: per transport, the tiers' alpha, beta and fit error with a
 * verdict (tier_fit_verdict; an unusable tier that weighs too little in the projected
 * times to move them by TIER_FIT_WARN counts as poor), the AllReduce table and the
 * workload table. Returns the worst verdict met (FIT_UNUSABLE: that transport's tables
 * are left out unless o->force), or -ENOENT when no transport had a fit.
 */
int project_doc(const struct report_set *s, const struct project_opts *o, struct rdoc *d);

/* The projected algorithms' names in buf, ", "-joined: "ring, tree, rhd, hierarchical". */
void project_algo_list(char *buf, size_t len);

void section_projection(const struct report_set *s, const struct report_opts *o, struct rdoc *d);

#endif
