/*
 * Calibration kernels shaped like training's memory-bound normalisations, so
 * `gradsync gpu --calibrate --write` measures what the cost model's batchnorm, norm and
 * softmax classes cost on this GPU instead of assuming a copy's rate:
 *   - a two-pass channel reduction like BatchNorm's training forward over NCHW f32:
 *     pass 1 sums x and x^2 per channel (blocks over slices of a channel, atomics into
 *     the channel's two accumulators), pass 2 normalises x into y with the statistics;
 *     3 x the tensor's bytes move (read, read, write);
 *   - a row kernel like LayerNorm / softmax over rows of `dim` f32: one block per row,
 *     the row held in registers, two block reductions (mean and variance, or max and
 *     sum of exponentials), one write; 2 x the tensor's bytes move.
 * Accuracy is not the point (timing kernels), but both compute what they say.
 */
#include "common.cuh"

extern "C" {
#include "gpu/kernels.h"
}

#define NORM_THREADS 256
#define ROW_PER_THREAD 16 /* rows up to NORM_THREADS * ROW_PER_THREAD elements */
#define BN_SLICE 8192     /* elements of one channel a block of pass 1 sums */

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

static __device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* The block's sum (or max) of v, returned to every thread; sh: 32 floats of scratch. */
template <bool MAX>
static __device__ __forceinline__ float block_reduce(float v, float *sh)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;

	v = MAX ? warp_max(v) : warp_sum(v);
	__syncthreads(); /* sh may still be read by the previous reduction */
	if (lane == 0)
		sh[warp] = v;
	__syncthreads();
	v = lane < nw ? sh[lane] : (MAX ? -INFINITY : 0.0f);
	return MAX ? warp_max(v) : warp_sum(v);
}

/* Pass 1: stats[2c] += sum x, stats[2c+1] += sum x^2 over slice blockIdx.x of channel c. */
__global__ void __launch_bounds__(NORM_THREADS)
k_bn_stats(const float *x, float *stats, int n, int c, size_t hw)
{
	__shared__ float sh[32];
	size_t per_ch = (size_t)n * hw, from = (size_t)blockIdx.x * BN_SLICE;
	size_t to = from + BN_SLICE < per_ch ? from + BN_SLICE : per_ch;
	int ch = blockIdx.y;
	float s = 0, q = 0;

	for (size_t i = from + threadIdx.x; i < to; i += blockDim.x) {
		size_t img = i / hw, pos = i - img * hw;
		float v = __ldcs(&x[(img * c + ch) * hw + pos]);

		s += v;
		q += v * v;
	}
	s = block_reduce<false>(s, sh);
	q = block_reduce<false>(q, sh);
	if (threadIdx.x == 0) {
		atomicAdd(&stats[2 * ch], s);
		atomicAdd(&stats[2 * ch + 1], q);
	}
}

/* Pass 2: y = (x - mean) * rstd, the statistics of x's channel. */
__global__ void __launch_bounds__(NORM_THREADS)
k_bn_apply(const float *x, float *y, const float *stats, int c, size_t hw, size_t total,
	   float inv_count)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += (size_t)gridDim.x * blockDim.x) {
		int ch = (int)((i / hw) % c);
		float mean = stats[2 * ch] * inv_count;
		float var = fmaxf(stats[2 * ch + 1] * inv_count - mean * mean, 0.0f);

		__stcs(&y[i], (__ldcs(&x[i]) - mean) * rsqrtf(var + 1e-5f));
	}
}

/* One row per block: LayerNorm (SOFTMAX false) or softmax of x's row into y's. */
template <bool SOFTMAX>
__global__ void __launch_bounds__(NORM_THREADS)
k_row(const float *x, float *y, int dim)
{
	__shared__ float sh[32];
	const float *xr = x + (size_t)blockIdx.x * dim;
	float *yr = y + (size_t)blockIdx.x * dim;
	float v[ROW_PER_THREAD], a = SOFTMAX ? -INFINITY : 0.0f, b = 0;
	int k;

#pragma unroll
	for (k = 0; k < ROW_PER_THREAD; k++) {
		int i = threadIdx.x + k * NORM_THREADS;

		v[k] = i < dim ? __ldcs(&xr[i]) : (SOFTMAX ? -INFINITY : 0.0f);
		a = SOFTMAX ? fmaxf(a, v[k]) : a + v[k];
	}
	a = block_reduce<SOFTMAX>(a, sh); /* max, or the sum */
	if (!SOFTMAX)
		a /= dim;
#pragma unroll
	for (k = 0; k < ROW_PER_THREAD; k++) {
		int i = threadIdx.x + k * NORM_THREADS;

		if (i < dim) {
			v[k] = SOFTMAX ? __expf(v[k] - a) : v[k] - a;
			b += SOFTMAX ? v[k] : v[k] * v[k];
		}
	}
	b = block_reduce<false>(b, sh);
	b = SOFTMAX ? 1.0f / b : rsqrtf(b / dim + 1e-5f);
#pragma unroll
	for (k = 0; k < ROW_PER_THREAD; k++) {
		int i = threadIdx.x + k * NORM_THREADS;

		if (i < dim)
			__stcs(&yr[i], v[k] * b);
	}
}

extern "C" int gsk_batchnorm(const void *x, void *y, void *stats, int n, int c, size_t hw,
			     void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	size_t per_ch = (size_t)n * hw, total = per_ch * c;
	dim3 g1((unsigned)((per_ch + BN_SLICE - 1) / BN_SLICE), (unsigned)c);
	unsigned g2 = (unsigned)((total + NORM_THREADS - 1) / NORM_THREADS);
	cudaError_t rc = cudaMemsetAsync(stats, 0, 2 * sizeof(float) * c, s);

	if (rc != cudaSuccess)
		return (int)rc;
	if (g2 > 8u * gsk_sm_count() * 8)
		g2 = 8u * gsk_sm_count() * 8;
	k_bn_stats<<<g1, NORM_THREADS, 0, s>>>((const float *)x, (float *)stats, n, c, hw);
	k_bn_apply<<<g2, NORM_THREADS, 0, s>>>((const float *)x, (float *)y,
					       (const float *)stats, c, hw, total,
					       1.0f / (float)per_ch);
	return (int)cudaGetLastError();
}

extern "C" int gsk_rownorm(const void *x, void *y, size_t rows, int dim, int softmax,
			   void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;

	if (dim < 1 || dim > NORM_THREADS * ROW_PER_THREAD || rows < 1 || rows > 0x7fffffffu)
		return (int)cudaErrorInvalidValue;
	if (softmax)
		k_row<true><<<(unsigned)rows, NORM_THREADS, 0, s>>>((const float *)x, (float *)y,
								      dim);
	else
		k_row<false><<<(unsigned)rows, NORM_THREADS, 0, s>>>((const float *)x,
								       (float *)y, dim);
	return (int)cudaGetLastError();
}
