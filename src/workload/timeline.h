/*
 * The compute model: each layer takes FLOPs / (gpu_tflops * 1e12) seconds. Backward
 * runs the layers in reverse execution order; a gradient is ready when its owning
 * layer's backward ends, and a bucket is ready when its last gradient is.
 */
#ifndef GS_WORKLOAD_TIMELINE_H
#define GS_WORKLOAD_TIMELINE_H

#include <stdint.h>

#include "workload/bucket.h"
#include "workload/tensor_list.h"

/* All times in seconds. Pure data; compute_timeline_free() releases the arrays. */
struct compute_timeline {
	double gpu_tflops;
	double fwd_s;          /* whole forward pass */
	double bwd_s;          /* whole backward pass */
	uint32_t nlayers;
	uint32_t ntensors;
	uint32_t nbuckets;
	double *layer_fwd_s;   /* per layer (execution order index) */
	double *layer_bwd_s;
	double *layer_bwd_end; /* since backward start, when the layer's backward ends */
	double *tensor_ready;  /* per tensor (registration index), since backward start */
	double *bucket_ready;  /* per bucket of the plan, since backward start */
};

/* Seconds for `flops` at `gpu_tflops` TFLOP/s. */
static inline double compute_time_s(double flops, double gpu_tflops)
{
	return flops / (gpu_tflops * 1e12);
}

/*
 * Fill *out for the list and a plan built from it (plan may be NULL: no bucket times).
 * Returns 0, -EINVAL (gpu_tflops <= 0, plan not of this list) or -ENOMEM.
 */
int compute_timeline_build(const struct tensor_list *tl, const struct bucket_plan *plan,
			   double gpu_tflops, struct compute_timeline *out);
void compute_timeline_free(struct compute_timeline *ct);

#endif
