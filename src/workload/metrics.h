/*
 * The workload's figures, each defined once on one per-rank per-iteration timeline,
 * so the table, the stacked bar and the shares can never contradict:
 *
 * - the critical rank of an iteration is the rank whose backward pass ended last
 *   (the one every other rank's AllReduce waits for; ties: the lowest rank);
 * - iteration = forward + backward + exposed comm, all three the critical rank's:
 *   forward = fwd_end, backward = bwd_end - fwd_end, exposed = end - bwd_end;
 * - comm = the sum of its buckets' AllReduce spans (end - start; they run one after
 *   another on the comm thread); hidden comm = the part of those spans inside its
 *   backward pass;
 * - comm-wait share = sum of exposed / sum of iteration over the iterations;
 * - overlap efficiency = sum of hidden comm / sum of comm (1 when there is no comm,
 *   as with one rank, which moves nothing).
 *
 * Pure functions over ddp_result; times in ns relative to each iteration's start.
 */
#ifndef GS_WORKLOAD_METRICS_H
#define GS_WORKLOAD_METRICS_H

#include "workload/ddp.h"

struct wl_iter_metrics {
	int critical_rank;
	double iter_ns, fwd_ns, bwd_ns, exposed_ns; /* iter_ns = fwd + bwd + exposed */
	double comm_ns, hidden_ns;
};

struct wl_metrics {
	double comm_wait_share;
	double overlap_efficiency;
	int critical_rank;       /* critical in most iterations */
	double critical_share;   /* in that share of the iterations */
};

/* Iteration i of the ranks' results (nranks entries, equal shapes). */
void wl_metrics_iter(const struct ddp_result *res, int nranks, int i, struct wl_iter_metrics *m);
/* The summary over every iteration of per[] (niters entries from wl_metrics_iter). */
void wl_metrics_sum(const struct wl_iter_metrics *per, int niters, int nranks,
		    struct wl_metrics *m);

#endif
