/*
 * GPU compute of the DDP workload (compute = gemm | spin) on the GPU's compute stream,
 * beside the collective's kernels and copies on their own streams, so they compete for
 * SMs and HBM as in training. Runs on the DDP compute thread.
 *
 * gemm plays each operator of the cost model (workload/timeline.h) for its modelled GPU
 * time, issued when the modelled eager host would have issued it: matrix ops (gemm,
 * conv, attention) as our GEMM, memory-bound ops as our streaming kernel (two reads and
 * a write), each sized at start-up on this GPU: a table of our kernel's times by size
 * gives a first guess, then each distinct op duration is timed and its size corrected
 * twice (wave quantisation and L2 effects the table cannot see), after a warm-up that
 * brings the clocks to their sustained level; ops shorter than our smallest kernel take
 * a spin kernel of their time. The GPU is then as busy, and idle
 * waiting for the host, as the model says eager PyTorch is. spin plays each layer's
 * modelled time as one spin kernel.
 */
#ifndef GS_RUN_WL_GPU_H
#define GS_RUN_WL_GPU_H

#include <stdint.h>

#include "gpu/gpu.h"
#include "workload/tensor_list.h"
#include "workload/timeline.h"

#define WL_RATE_POINTS 12

/* Our kernel's measured times by size: t[i] seconds for x[i] units of work, x rising. */
struct wl_rate {
	int n;
	double x[WL_RATE_POINTS];
	double t[WL_RATE_POINTS];
};

struct wl_gpu {
	struct gpu_ctx *gpu;  /* NULL: not in use */
	int mode;             /* enum compute_mode: COMPUTE_GEMM or COMPUTE_SPIN */
	double tflops;        /* our GEMM's calibrated rate (the run's gpu_tflops_cal) */
	const struct tensor_list *tl;
	const struct compute_timeline *ct;
	struct wl_rate gemm;  /* x: FLOPs of our GEMM (wl_gemm_shape) */
	struct wl_rate stream; /* x: f32 elements of our streaming reduce */
	void *a, *b, *c;      /* GEMM operands, sized for the largest op */
	double gemm_cap;      /* FLOPs of one GEMM the operands hold */
	void *sa, *sb, *sd;   /* streaming operands (f32), sized for the largest op */
	size_t stream_max;    /* elements of each streaming operand */
	double *op_work;      /* per op of tl: the work that plays it (0: spin) */
	uint64_t pass_start;  /* CLOCK_MONOTONIC ns when the current pass started */
	struct gpu_event *done;
	uint64_t kernels;
	double flops;         /* queued GEMM FLOPs */
};

/*
 * GEMM shape of `flops` (2 m n k): near-cubic, n and k multiples of 8 in [8, 8192] as
 * gpu_gemm requires, m a multiple of 8 >= 8; 2 m n k is within a few percent of flops
 * for layers above a few MFLOP.
 */
void wl_gemm_shape(double flops, int *m, int *n, int *k);

/*
 * The work x that takes `seconds` by the table r (log-log interpolation between points,
 * the last point's rate past it); 0 when seconds is below the first point's time (the
 * kernel cannot be that short: spin instead). Pure.
 */
double wl_rate_work(const struct wl_rate *r, double seconds);

/* Measure our kernels' tables and allocate operands for the largest op of ct (gemm), and
 * an event. tl and ct outlive g. 0 or -errno. */
int wl_gpu_init(struct wl_gpu *g, struct gpu_ctx *gpu, int mode, const struct tensor_list *tl,
		const struct compute_timeline *ct, double tflops);
/* Queue one layer's compute of one pass (ddp_ops.compute), layers in the pass's order. */
int wl_gpu_compute(struct wl_gpu *g, uint32_t layer, int backward, double seconds);
/* Wait until everything queued is done (ddp_ops.compute_wait), bounded. */
int wl_gpu_wait(struct wl_gpu *g);
void wl_gpu_fini(struct wl_gpu *g);

#endif
