/*
 * The engine's exact-result pattern on the GPU: fill a rank's input and check an
 * AllReduce result bit for bit, counting mismatches and keeping the first wrong index
 * (atomicMin). The per-element math is util/pattern.h, shared with coll/verify.c.
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
k_fill(T *buf, size_t count, uint64_t base, struct pattern v, int rank)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
		buf[i] = elem<T>::st((typename elem<T>::acc)pattern_input(&v, base + i, rank));
}

template <typename T>
__global__ void __launch_bounds__(PAT_THREADS)
k_verify(const T *buf, size_t count, uint64_t base, struct pattern v, int avg,
	 unsigned long long *res)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned long long bad = 0, lowest = ~0ull;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
		/* exact in double and in T: the conversion rounds nothing */
		T want = elem<T>::st((typename elem<T>::acc)pattern_result(&v, base + i, avg));

		if (elem<T>::raw(want) != elem<T>::raw(buf[i])) {
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
static int fill(void *buf, size_t count, uint64_t base, const struct pattern *v, int rank,
		cudaStream_t st)
{
	if (count == 0)
		return cudaSuccess;
	k_fill<T><<<grid_for(count), PAT_THREADS, 0, st>>>((T *)buf, count, base, *v, rank);
	return (int)cudaGetLastError();
}

template <typename T>
static int verify(const void *buf, size_t count, uint64_t base, const struct pattern *v, int avg,
		  unsigned long long *res, cudaStream_t st)
{
	if (count == 0)
		return cudaSuccess;
	k_verify<T><<<grid_for(count), PAT_THREADS, 0, st>>>((const T *)buf, count, base, *v, avg,
							       res);
	return (int)cudaGetLastError();
}

extern "C" int gsk_fill(void *buf, size_t count, uint64_t base, int dtype, uint64_t seed,
			int rank, int nranks, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	struct pattern v;

	pattern_init(&v, dtype, seed, nranks);
	switch (dtype) {
	case DT_F32:
		return fill<float>(buf, count, base, &v, rank, st);
	case DT_F16:
		return fill<__half>(buf, count, base, &v, rank, st);
	case DT_BF16:
		return fill<__nv_bfloat16>(buf, count, base, &v, rank, st);
	case DT_F64:
		return fill<double>(buf, count, base, &v, rank, st);
	default:
		return (int)cudaErrorInvalidValue;
	}
}

extern "C" int gsk_verify(const void *buf, size_t count, uint64_t base, int dtype, int avg,
			  uint64_t seed, int nranks, unsigned long long *res, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	struct pattern v;

	pattern_init(&v, dtype, seed, nranks);
	switch (dtype) {
	case DT_F32:
		return verify<float>(buf, count, base, &v, avg, res, st);
	case DT_F16:
		return verify<__half>(buf, count, base, &v, avg, res, st);
	case DT_BF16:
		return verify<__nv_bfloat16>(buf, count, base, &v, avg, res, st);
	case DT_F64:
		return verify<double>(buf, count, base, &v, avg, res, st);
	default:
		return (int)cudaErrorInvalidValue;
	}
}
