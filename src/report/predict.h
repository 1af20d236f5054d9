/*
 * Projection of a DDP iteration to another layout: replay the bucket timeline of a
 * measured iteration with each bucket's AllReduce timed by the two-tier model (tier.h).
 * Per-rank batch is held fixed (weak scaling), so forward and backward times carry over.
 */
#ifndef GS_REPORT_PREDICT_H
#define GS_REPORT_PREDICT_H

#include <stdio.h>
#include <jansson.h>

#include "report/tier.h"

struct prediction {
	int nranks;
	double iter_ms;
	double forward_ms, backward_ms;
	double comm_ms;            /* sum of the buckets' AllReduce times */
	double exposed_comm_ms;    /* iteration time not covered by compute */
	double comm_wait_share;    /* exposed_comm_ms / iter_ms */
	double scaling_efficiency; /* (forward + backward) / iter: throughput vs n x one rank */
};

/*
 * Buckets are launched in order, each when it is ready and the previous one has
 * finished (one stream of collectives, as DDP's), bucket i's AllReduce taking
 * bucket_comm_ms[i]. bucket_ready_ms counts from the start of backward. The iteration
 * is forward + max(backward, end of the last bucket). -EINVAL for nranks < 1 or a
 * negative or NAN input.
 */
int predict_iteration(int nranks, const double *bucket_comm_ms, const double *bucket_ready_ms,
		      int nbuckets, double backward_ms, double forward_ms,
		      struct prediction *out);

/*
 * The algorithm the executor's ALGO_AUTO runs for BYTES on LAY: sched_pick_on, as
 * exec_pick asks it, with the inside-a-host tier's transport and whether one host's ranks
 * outnumber HOST_CPUS (the fit run's online CPUs; 0 = not known, taken
 * as not crowded). Pure.
 */
int predict_pick(const struct tier_model *m, struct tier_layout lay, int host_cpus,
		 uint64_t bytes);

/*
 * predict_iteration from a report.json "workload" object (its timeline and mean
 * times), each bucket timed by tier_time with algo (ALGO_AUTO: predict_pick by the
 * bucket's size, as the executor does) on lay, pipelined as pipe says. -EOPNOTSUPP when
 * the model cannot time a bucket (tier_steps failed: e.g. beyond TIER_MAX_RANKS).
 */
int predict_workload(const struct tier_model *m, int algo, struct tier_layout lay,
		     struct tier_pipe pipe, int host_cpus,
		     const json_t *workload, struct prediction *out);

/* The measured figures of a report.json "workload" object, for comparison. */
int prediction_from_workload(const json_t *workload, struct prediction *out);

/*
 * One line: "ranks 16: predicted iter 112.3 ms, comm-wait 12.0%, scaling 88.0%"
 * and, when measured is non-NULL, the measured figures and the relative error.
 */
void predict_print(FILE *f, const struct prediction *pred, const struct prediction *measured);

#endif
