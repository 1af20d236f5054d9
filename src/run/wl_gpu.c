/* The workload's GPU compute: our GEMM sized to each layer, or a spin kernel (wl_gpu.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "run/wl_gpu.h"
#include "util/common.h"
#include "util/log.h"
#include "workload/workload.h"

#define WL_GEMM_DIM_MAX 8192
#define WL_WAIT_MS 60000

static int round8(double x, int lo, int hi)
{
	long v = lround(x / 8.0) * 8;

	return (int)(v < lo ? lo : v > hi ? hi : v);
}

void wl_gemm_shape(double flops, int *m, int *n, int *k)
{
	double s = cbrt(flops / 2.0);

	*n = round8(s, 8, WL_GEMM_DIM_MAX);
	*k = *n;
	*m = round8(flops / (2.0 * *n * *k), 8, INT32_MAX - 7);
}

int wl_gpu_init(struct wl_gpu *g, struct gpu_ctx *gpu, int mode,
		const struct compute_timeline *ct, double tflops)
{
	size_t amax = 0, bmax = 0, cmax = 0;
	int m, n, k, ret = 0;

	memset(g, 0, sizeof(*g));
	if (!gpu)
		return -ENODEV;
	g->gpu = gpu;
	g->mode = mode;
	g->tflops = tflops;
	g->done = gpu_event_create(false);
	if (!g->done)
		return -ENOMEM;
	if (mode != COMPUTE_GEMM)
		return 0;
	for (uint32_t l = 0; l < ct->nlayers; l++) {
		for (int pass = 0; pass < 2; pass++) {
			double s = pass ? ct->layer_bwd_s[l] : ct->layer_fwd_s[l];

			wl_gemm_shape(s * tflops * 1e12, &m, &n, &k);
			amax = GS_MAX(amax, (size_t)m * k);
			bmax = GS_MAX(bmax, (size_t)k * n);
			cmax = GS_MAX(cmax, (size_t)m * n);
		}
	}
	g->a = gpu_alloc(amax * 2);
	g->b = gpu_alloc(bmax * 2);
	g->c = gpu_alloc(cmax * 2);
	if (!g->a || !g->b || !g->c) {
		log_err(LOG_WORKLOAD, "GEMM operands of the largest layer (%zu, %zu, %zu elements): out of GPU memory",
			amax, bmax, cmax);
		ret = -ENOMEM;
		goto out;
	}
	/* the engine pattern: finite small values, no NaN or denormal slow paths */
	ret = gpu_fill(g->a, amax, 0, DT_BF16, 11, 0, 64, gpu->compute);
	if (!ret)
		ret = gpu_fill(g->b, bmax, 0, DT_BF16, 11, 1, 64, gpu->compute);
	if (!ret)
		ret = gpu_stream_sync(gpu->compute, WL_WAIT_MS);
out:
	if (ret)
		wl_gpu_fini(g);
	return ret;
}

int wl_gpu_compute(struct wl_gpu *g, uint32_t layer, int backward, double seconds)
{
	double flops = seconds * g->tflops * 1e12;
	int m, n, k;

	(void)layer;
	(void)backward;
	if (seconds <= 0)
		return 0;
	g->kernels++;
	if (g->mode == COMPUTE_SPIN)
		return gpu_spin((uint64_t)(seconds * 1e9), g->gpu->props.sm_count, g->gpu->compute);
	wl_gemm_shape(flops, &m, &n, &k);
	g->flops += 2.0 * m * n * (double)k;
	return gpu_gemm(g->c, g->a, g->b, m, n, k, g->gpu->compute);
}

int wl_gpu_wait(struct wl_gpu *g)
{
	int ret = gpu_event_record(g->done, g->gpu->compute);

	return ret ? ret : gpu_event_sync(g->done, WL_WAIT_MS);
}

void wl_gpu_fini(struct wl_gpu *g)
{
	if (!g->gpu)
		return;
	if (g->done) {
		wl_gpu_wait(g);
		gpu_event_destroy(g->done);
	}
	gpu_free(g->c);
	gpu_free(g->b);
	gpu_free(g->a);
	g->a = g->b = g->c = NULL;
	g->done = NULL;
	g->gpu = NULL;
}
