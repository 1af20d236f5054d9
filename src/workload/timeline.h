/*
 * The compute timeline: the model's operators played through the eager pipeline of the
 * cost model (workload/costmodel.h), forward in execution order, then backward in
 * reverse layer order. A layer's time is what the GPU's clock advanced while its
 * operators ran (waits for the host included), so layer times add up to fwd_s and
 * bwd_s. A gradient is ready when its owning layer's backward ends, a bucket when its
 * last gradient is. Backward times count from the end of forward, as DDP's do.
 */
#ifndef GS_WORKLOAD_TIMELINE_H
#define GS_WORKLOAD_TIMELINE_H

#include <stdint.h>

#include "workload/bucket.h"
#include "workload/gpu_profile.h"
#include "workload/tensor_list.h"
#include "workload/workload.h"

/* All times in seconds. Pure data; compute_timeline_free() releases the arrays. */
struct compute_timeline {
	double gpu_tflops;     /* the matrix rate of the precision (for compute = gemm) */
	double fwd_s;          /* whole forward pass */
	double bwd_s;          /* whole backward pass */
	double bwd_start_s;    /* the host's start-up of backward, before its first node */
	double host_fwd_s;     /* the host's own time to issue forward (PyTorch: the call's
				* wall time, measure_torch_step.py's host_fwd_ms) */
	double host_bwd_s;     /* the host's time from its call of backward to its last
				* node (start-up included; host_bwd_ms) */
	double gpu_fwd_s;      /* when the GPU is through forward's kernels (fwd_s is the
				* later of it and host_fwd_s) */
	uint32_t nlayers;
	uint32_t ntensors;
	uint32_t nbuckets;
	double *layer_fwd_s;   /* per layer (execution order index) */
	double *layer_bwd_s;
	double *layer_bwd_end; /* since backward start, when the layer's backward ends */
	double *tensor_ready;  /* per tensor (registration index), since backward start */
	double *bucket_ready;  /* per bucket of the plan, since backward start */
	uint32_t nops;
	double *op_issue_s;    /* per operator (tl->ops index): when the host has issued it,
				* since its pass's start (backward: may be < 0, the host was
				* ahead of the GPU when forward ended) */
	double *op_gpu_s;      /* per operator: its GPU time queued behind another, dispatch
				* gaps included (compute = gemm plays it back to back) */
};

/*
 * The cost parameters of w: its [gpu] profile (a row or a file, loaded into *g), its
 * precision and launch gap; w->gpu_tflops > 0 replaces the profile's matrix rates (a
 * calibration only sizes compute = gemm's work: the times stay the profile's).
 * 0, -ENOENT or -EINVAL.
 */
int compute_params_resolve(const struct workload_opts *w, struct gpu_profile *g,
			   struct cost_params *cp);

/*
 * Fill *out for the list and a plan built from it (plan may be NULL: no bucket times).
 * Returns 0, -EINVAL (no profile, plan not of this list), -ENOMEM, or -ERANGE after one
 * logged line when the step is longer than COMPUTE_STEP_MAX_S.
 */
#define COMPUTE_STEP_MAX_S 1e9 /* 31 years: far below what a step's ns in 64 bits hold */
int compute_timeline_build(const struct tensor_list *tl, const struct bucket_plan *plan,
			   const struct cost_params *cp, struct compute_timeline *out);
void compute_timeline_free(struct compute_timeline *ct);

/*
 * How far the ready times move when the host's forward runs frac faster or slower than
 * modelled (seconds, >= 0). Backward's start-up delays the GPU by what the GPU's lead at
 * forward's end does not hide, clamp(host_fwd + bwd_start - gpu_fwd, 0, bwd_start): near
 * the balance a few percent of the host swing it from none of the start-up to all of it,
 * and every bucket's ready time with it. 0 away from the balance and without a start-up
 * (launch_gap = 0, CUDA graphs).
 */
double timeline_startup_swing_s(const struct compute_timeline *ct, double frac);
/* the host's uncertainty plan reports the swing at: the model's host time per forward is
 * 7.1% from the real one (median, held-out host-bound cases), and one host's trials at one
 * probe pace spread about as far (tests/workload/RESULTS.md) */
#define TIMELINE_HOST_SWING 0.10

#endif
