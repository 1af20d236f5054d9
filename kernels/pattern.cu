/*
 * The exact-result pattern on the GPU: fill a buffer with pattern_value() and verify
 * a buffer against the (scaled) sum of several ranks' patterns, counting mismatches and
 * keeping the first wrong index (atomicMin). Formulas live in util/pattern.h.
 */
#include "common.cuh"

extern "C" {
#include "gpu/kernels.h"
#include "util/dtype.h"
}
#include "util/pattern.h"

#define PAT_THREADS 256

template <typename T>
__global__ void __launch_bounds__(PAT_THREADS)
k_fill(T *buf, size_t count, uint64_t seed, int rank, uint64_t first, int32_t mag)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
		int32_t v = pattern_value(seed, rank, first + i, mag);

		buf[i] = elem<T>::st((typename elem<T>::acc)v);
	}
}

template <typename T>
__global__ void __launch_bounds__(PAT_THREADS)
k_verify(const T *buf, size_t count, uint64_t seed, int rank0, int nranks, uint64_t first,
	 int32_t mag, typename elem<T>::acc scale, bool use_scale, unsigned long long *res)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned long long bad = 0, lowest = ~0ull;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
		/* the sum is an exact integer below 2^24: converting it is exact too */
		typename elem<T>::acc v =
			(typename elem<T>::acc)pattern_sum(seed, rank0, nranks, first + i, mag);

		if (use_scale)
			v = ieee_mul(v, scale);
		if (elem<T>::raw(elem<T>::st(v)) != elem<T>::raw(buf[i])) {
			if (!bad)
				lowest = i;
			bad++;
		}
	}
	if (bad) {
		atomicAdd(&res[0], bad);
		atomicMin(&res[1], lowest);
	}
}

static unsigned int grid_for(size_t count)
{
	size_t blocks = (count + PAT_THREADS - 1) / PAT_THREADS;
	size_t max_blocks = (size_t)gsk_sm_count() * 8;

	if (blocks < 1)
		blocks = 1;
	return (unsigned int)(blocks > max_blocks ? max_blocks : blocks);
}

template <typename T>
static int fill(void *buf, size_t count, uint64_t seed, int rank, uint64_t first, int32_t mag,
		cudaStream_t st)
{
	if (count == 0)
		return cudaSuccess;
	k_fill<T><<<grid_for(count), PAT_THREADS, 0, st>>>((T *)buf, count, seed, rank, first, mag);
	return (int)cudaGetLastError();
}

template <typename T>
static int verify(const void *buf, size_t count, uint64_t seed, int rank0, int nranks,
		  uint64_t first, int32_t mag, double scale, unsigned long long *res,
		  cudaStream_t st)
{
	if (count == 0)
		return cudaSuccess;
	k_verify<T><<<grid_for(count), PAT_THREADS, 0, st>>>(
		(const T *)buf, count, seed, rank0, nranks, first, mag,
		(typename elem<T>::acc)scale, scale != 1.0, res);
	return (int)cudaGetLastError();
}

extern "C" int gsk_fill(void *buf, size_t count, int dtype, uint64_t seed, int rank,
			uint64_t first, int32_t mag, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;

	switch (dtype) {
	case DT_F32:
		return fill<float>(buf, count, seed, rank, first, mag, st);
	case DT_F16:
		return fill<__half>(buf, count, seed, rank, first, mag, st);
	case DT_BF16:
		return fill<__nv_bfloat16>(buf, count, seed, rank, first, mag, st);
	case DT_F64:
		return fill<double>(buf, count, seed, rank, first, mag, st);
	default:
		return (int)cudaErrorInvalidValue;
	}
}

extern "C" int gsk_verify(const void *buf, size_t count, int dtype, uint64_t seed, int rank0,
			  int nranks, uint64_t first, int32_t mag, double scale,
			  unsigned long long *res, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;

	switch (dtype) {
	case DT_F32:
		return verify<float>(buf, count, seed, rank0, nranks, first, mag, scale, res, st);
	case DT_F16:
		return verify<__half>(buf, count, seed, rank0, nranks, first, mag, scale, res, st);
	case DT_BF16:
		return verify<__nv_bfloat16>(buf, count, seed, rank0, nranks, first, mag, scale,
					     res, st);
	case DT_F64:
		return verify<double>(buf, count, seed, rank0, nranks, first, mag, scale, res, st);
	default:
		return (int)cudaErrorInvalidValue;
	}
}
