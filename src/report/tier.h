/*
 * The two-tier link model of a cluster: ranks inside one host talk over one tier (shm,
 * NVLink, loopback), hosts over another (the NIC), each with its own alpha (seconds per
 * step) and beta (seconds per byte through the busiest port). What an AllReduce asks of
 * each tier is not a formula per algorithm but read from the schedules themselves
 * (coll/schedule.h): every rank's steps are built for the layout, and per step each
 * tier's busiest port is found (inside a host: a rank's bytes in or out; between hosts:
 * a host's bytes up or down its link, which its ranks share). A step takes the longer
 * of its tiers; an AllReduce the sum of its steps.
 */
#ifndef GS_REPORT_TIER_H
#define GS_REPORT_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "report/fit.h"

enum tier { TIER_INTRA = 0, TIER_INTER, TIER_COUNT };

/* "inside a host", "between hosts" */
const char *tier_name(int tier);

/* hosts x ranks_per_host ranks, grouped host by host (rank r on host r / ranks_per_host). */
struct tier_layout {
	int hosts;
	int ranks_per_host;
};

/* How the executor pipelines: channels pieces in flight, pieces of sched_piece_count_on
 * elements for chunk_bytes per message (0: as many pieces as channels). */
struct tier_pipe {
	int channels;
	double chunk_bytes;
};

/* Schedules are simulated rank by rank: projections stop at this many ranks. */
#define TIER_MAX_RANKS 1024

/*
 * What one AllReduce of `bytes` per rank (elements of es bytes) with algo on a layout
 * asks of each tier, from every rank's schedule:
 *   steps[t]: steps with traffic on tier t (each costs that tier's alpha; a step with
 *             both tiers costs the larger alpha: tier_time);
 *   bytes[t]: what tier t's bandwidth must carry, max of (a) the busiest port's bytes
 *             over the whole AllReduce, what a full pipeline is limited by, and (b) the
 *             sum over steps of each step's busiest port, divided by the pieces in flight
 *             (channels, at most the buffer's pieces and steps[t]): what a pipeline too shallow to overlap every
 *             step is limited by. For ring and rhd (every step loads every port alike)
 *             both are the same; they differ for tree, whose levels load different links.
 * The step list (per step, each tier's busiest port) is kept in step[] when non-NULL.
 */
struct tier_load {
	int nsteps;
	double steps[TIER_COUNT];
	double bytes[TIER_COUNT];
	double (*step)[TIER_COUNT]; /* nsteps entries, malloc'ed; tier_load_free */
};

/*
 * Fill l for algo on lay (pipe.channels >= 1). Returns 0, -EINVAL (bad
 * layout, algorithm or size), -E2BIG (more than TIER_MAX_RANKS ranks or a schedule too
 * long), -ENOMEM. Hierarchical with one rank per host runs as a ring, as the runtime does.
 */
int tier_load(int algo, struct tier_layout lay, double bytes, size_t es, struct tier_pipe pipe,
	      struct tier_load *l);
void tier_load_free(struct tier_load *l);

/* One tier's fitted alpha-beta, with what it was fitted on. */
struct tier_fit {
	bool valid;
	struct ab_model ab;       /* alpha_s, beta_s_per_B, rel_rms, npoints */
	int nsizes;               /* distinct sizes among the points */
	char from[160];           /* the case (and layout) the points came from */
	char transport[32];       /* what carried the tier ("tcp", "shm") */
	bool assumed;             /* not measured: copied from the other tier (tier_model_fill) */
};

struct tier_model {
	struct tier_fit tier[TIER_COUNT];
};

/*
 * Modelled seconds of one AllReduce: every step's largest alpha among the tiers it uses,
 * plus the slower tier's beta * bytes (tier_load; the tiers are different resources, so
 * a pipeline overlaps them). A tier that was not fitted counts as free. NAN when
 * tier_load fails.
 */
double tier_time(const struct tier_model *m, int algo, struct tier_layout lay, double bytes,
		 size_t es, struct tier_pipe pipe);

/*
 * A model with one tier measured stands in for both: the missing tier gets the
 * measured one's fit, marked assumed (what a single-tier model always did; the
 * caller says so). -ENOENT when neither tier was fitted.
 */
int tier_model_fill(struct tier_model *m);

/*
 * Fit one tier over measured AllReduces: t = alpha * steps[tier] + beta * bytes[tier]
 * (tier_load on each point's own layout, algorithm and pipelining). The alpha of steps
 * that use only the other tier is subtracted using `other` (its fit, or NULL = free),
 * so a layout with both tiers can fit the one it is limited by. Fills f->ab, nsizes,
 * valid; -EINVAL with fewer than two usable points.
 */
struct tier_sample {
	int algo;
	struct tier_layout lay;
	double bytes;
	size_t es;
	struct tier_pipe pipe;
	double time_s;
};
int tier_fit_samples(int tier, const struct tier_sample *s, int n, const struct tier_fit *other,
		     struct tier_fit *f);

/*
 * How far a fit can be trusted. FIT_POOR: warn loudly (fit error above
 * TIER_FIT_WARN, alpha or beta held at 0, fewer than three sizes); FIT_UNUSABLE:
 * refuse to project (fit error above TIER_FIT_REFUSE). why gets one line.
 */
#define TIER_FIT_WARN 0.15
#define TIER_FIT_REFUSE 0.35
enum fit_verdict { FIT_GOOD = 0, FIT_POOR, FIT_UNUSABLE };
/* The first check a fit fails, in the order the verdict applies them. */
enum fit_reason {
	FIT_WHY_NONE = 0,      /* good */
	FIT_WHY_NO_FIT,        /* unusable: nothing fitted */
	FIT_WHY_ERROR_REFUSED, /* unusable: error above TIER_FIT_REFUSE */
	FIT_WHY_ERROR,         /* poor: error above TIER_FIT_WARN */
	FIT_WHY_ALPHA,         /* poor: alpha held at 0 */
	FIT_WHY_BETA,          /* poor: beta held at 0 */
	FIT_WHY_SIZES,         /* poor: fewer than 3 sizes */
};
enum fit_reason tier_fit_reason(const struct tier_fit *f);
/* The verdict on a fit, with its reason in words in why ("" when good). */
enum fit_verdict tier_fit_verdict(const struct tier_fit *f, char *why, size_t len);

/*
 * The layout of a report.json document from its "hosts" array (host_index per rank):
 * -EINVAL when ranks are not equal consecutive blocks per host.
 */
int tier_layout_of(const json_t *root, struct tier_layout *lay);

#endif
