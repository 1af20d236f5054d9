/*
 * GPU compute of the DDP workload (compute = gemm | spin): each layer's modelled FLOPs
 * become one of our GEMMs (or a spin kernel of the modelled time) on the GPU's compute
 * stream, beside the collective's kernels and copies on their own streams, so they
 * compete for SMs and HBM as in training. Runs on the DDP compute thread.
 */
#ifndef GS_RUN_WL_GPU_H
#define GS_RUN_WL_GPU_H

#include <stdint.h>

#include "gpu/gpu.h"
#include "workload/timeline.h"

struct wl_gpu {
	struct gpu_ctx *gpu;  /* NULL: not in use */
	int mode;             /* enum compute_mode: COMPUTE_GEMM or COMPUTE_SPIN */
	double tflops;        /* the model's rate: a layer's seconds x tflops = its FLOPs */
	void *a, *b, *c;      /* GEMM operands, sized for the largest layer */
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

/* Allocate operands for the largest layer of ct (gemm) and an event. 0 or -errno. */
int wl_gpu_init(struct wl_gpu *g, struct gpu_ctx *gpu, int mode,
		const struct compute_timeline *ct, double tflops);
/* Queue one layer's compute (ddp_ops.compute). */
int wl_gpu_compute(struct wl_gpu *g, uint32_t layer, int backward, double seconds);
/* Wait until everything queued is done (ddp_ops.compute_wait), bounded. */
int wl_gpu_wait(struct wl_gpu *g);
void wl_gpu_fini(struct wl_gpu *g);

#endif
