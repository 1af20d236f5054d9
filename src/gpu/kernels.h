/*
 * Launchers of the CUDA kernels in kernels/, called only by src/gpu/cuda_kern.c. Each enqueues on
 * stream (a cudaStream_t passed as void *) and returns the cudaError_t of the launch as
 * an int (0 = cudaSuccess) without logging: cuda_kern.c converts it once.
 * Argument contracts are those of the gpu_* wrappers in gpu/gpu.h.
 */
#ifndef GS_GPU_KERNELS_H
#define GS_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype: enum dtype (util/dtype.h). */
int gsk_reduce(void *dst, const void *a, const void *b, size_t count, int dtype, double scale,
	       void *stream);
int gsk_scale(void *buf, size_t count, int dtype, double scale, void *stream);

/* avg's final division: buf[i] = round_T(buf[i] / divisor), one IEEE division. */
int gsk_div(void *buf, size_t count, int dtype, uint32_t divisor, void *stream);

/* The engine pattern (util/pattern.h) of rank `rank` of nranks at global index base + i. */
int gsk_fill(void *buf, size_t count, uint64_t base, int dtype, uint64_t seed, int rank,
	     int nranks, void *stream);
/* res[0] += mismatches against the sum (avg = 0) or avg result, res[1] = min(res[1], first
 * wrong index): device memory, preset. */
int gsk_verify(const void *buf, size_t count, uint64_t base, int dtype, int avg, uint64_t seed,
	       int nranks, unsigned long long *res, void *stream);

/* bk: 32 (4 stages) or 64 (3 stages) */
int gsk_gemm_bf16_mma(void *c, const void *a, const void *b, int m, int n, int k, int bk,
		      void *stream);
int gsk_gemm_bf16_wmma(void *c, const void *a, const void *b, int m, int n, int k, void *stream);

int gsk_spin(uint64_t ns, int blocks, void *stream);

/* kernels/norm.cu: a BatchNorm-like two-pass over f32 NCHW x (n, c, hw) into y, stats 2c
 * floats of device scratch; a LayerNorm (softmax = 0) or softmax row kernel over rows of
 * dim <= 4096 f32. */
int gsk_batchnorm(const void *x, void *y, void *stats, int n, int c, size_t hw, void *stream);
int gsk_rownorm(const void *x, void *y, size_t rows, int dim, int softmax, void *stream);

#ifdef __cplusplus
}
#endif

#endif
