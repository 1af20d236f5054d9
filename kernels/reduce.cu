/*
 * Reduction kernels of the collective: dst = round_T((a + b) * scale),
 * buf = round_T(buf * scale) and avg's buf = round_T(buf / n). Reduce and scale use
 * 16-byte vectors when the pointers share alignment (scalar head up to dst's 16-byte
 * boundary, scalar tail), else scalar; the division is scalar (1/n of the data).
 *
 * Launch shape, measured on an H200 (tests/gpu/reduce_sweep.cu beside torch.add, 64 MiB..
 * 1 GiB, f32 and bf16; tests/gpu/RESULTS.md): one 16-byte vector per thread and as many
 * 128-thread blocks as the data needs (one pass) reached 4.27-4.38 TB/s at 256 MiB..1 GiB,
 * torch.add's rate; the earlier grid-stride loop over 8 blocks per SM with 4 vectors per
 * thread stayed at 4.02-4.07 (0.94x), whatever the unroll or cache hint. The loop stays
 * for grids past the hardware's limit. Streaming (evict-first) loads and stores: each byte
 * is touched once, and the next bucket's data is better kept in L2.
 */
#include "common.cuh"

extern "C" {
#include "gpu/kernels.h"
#include "util/dtype.h"
}

#define RED_THREADS 128
/* more blocks than this fall back to the grid-stride loop (grid x's limit is 2^31 - 1) */
#define RED_MAX_BLOCKS (1u << 30)

/* NSRC 2: x op y; NSRC 1: x * scale. SCALE: multiply after the add (avg's last step). */
template <typename T, int NSRC, bool SCALE>
static __device__ __forceinline__ T op1(T x, T y, typename elem<T>::acc s)
{
	typename elem<T>::acc r = elem<T>::ld(x);

	if (NSRC == 2)
		r = ieee_add(r, elem<T>::ld(y));
	if (SCALE)
		r = ieee_mul(r, s);
	return elem<T>::st(r);
}

template <typename T, int NSRC, bool SCALE>
static __device__ __forceinline__ uint4 opv(uint4 x, uint4 y, typename elem<T>::acc s)
{
	union {
		uint4 v;
		T e[16 / sizeof(T)];
	} ux, uy;

	ux.v = x;
	uy.v = y;
#pragma unroll
	for (int k = 0; k < (int)(16 / sizeof(T)); k++)
		ux.e[k] = op1<T, NSRC, SCALE>(ux.e[k], uy.e[k], s);
	return ux.v;
}

/* head: elements before dst's 16-byte boundary; vec: use 16-byte vectors after it. */
template <typename T, int NSRC, bool SCALE>
__global__ void __launch_bounds__(RED_THREADS)
k_reduce(T *dst, const T *a, const T *b, size_t count, size_t head, bool vec,
	 typename elem<T>::acc s)
{
	const size_t per = 16 / sizeof(T);
	size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t nvec = vec ? (count - head) / per : 0;
	size_t i;

	if (!vec)
		head = 0;
	if (tid < head)
		dst[tid] = op1<T, NSRC, SCALE>(a[tid], NSRC == 2 ? b[tid] : a[tid], s);
	if (nvec) {
		uint4 *vd = (uint4 *)(dst + head);
		const uint4 *va = (const uint4 *)(a + head);
		const uint4 *vb = (const uint4 *)((NSRC == 2 ? b : a) + head);

		for (i = tid; i < nvec; i += stride) {
			uint4 x = __ldcs(va + i);

			__stcs(vd + i, opv<T, NSRC, SCALE>(x, NSRC == 2 ? __ldcs(vb + i) : x, s));
		}
	}
	for (i = head + nvec * per + tid; i < count; i += stride)
		dst[i] = op1<T, NSRC, SCALE>(a[i], NSRC == 2 ? b[i] : a[i], s);
}

template <typename T, int NSRC>
static int launch(void *dst, const void *a, const void *b, size_t count, double scale,
		  cudaStream_t st)
{
	uintptr_t d = (uintptr_t)dst, pa = (uintptr_t)a, pb = (uintptr_t)(NSRC == 2 ? b : a);
	bool vec = (d % 16) == (pa % 16) && (d % 16) == (pb % 16);
	size_t head = vec ? ((16 - d % 16) % 16) / sizeof(T) : 0;
	size_t work, blocks;

	if (count == 0)
		return cudaSuccess;
	if (head > count)
		head = count;
	/* one thread per vector (or per element without vectors): one pass */
	work = vec ? (count - head) / (16 / sizeof(T)) : count;
	if (work < head)
		work = head;
	blocks = (work + RED_THREADS - 1) / RED_THREADS;
	if (blocks < 1)
		blocks = 1;
	if (blocks > RED_MAX_BLOCKS)
		blocks = RED_MAX_BLOCKS;
	typename elem<T>::acc s = (typename elem<T>::acc)scale;
	if (scale == 1.0)
		k_reduce<T, NSRC, false><<<(unsigned int)blocks, RED_THREADS, 0, st>>>(
			(T *)dst, (const T *)a, (const T *)b, count, head, vec, s);
	else
		k_reduce<T, NSRC, true><<<(unsigned int)blocks, RED_THREADS, 0, st>>>(
			(T *)dst, (const T *)a, (const T *)b, count, head, vec, s);
	return (int)cudaGetLastError();
}

template <int NSRC>
static int dispatch(void *dst, const void *a, const void *b, size_t count, int dtype,
		    double scale, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;

	switch (dtype) {
	case DT_F32:
		return launch<float, NSRC>(dst, a, b, count, scale, st);
	case DT_F16:
		return launch<__half, NSRC>(dst, a, b, count, scale, st);
	case DT_BF16:
		return launch<__nv_bfloat16, NSRC>(dst, a, b, count, scale, st);
	case DT_F64:
		return launch<double, NSRC>(dst, a, b, count, scale, st);
	default:
		return (int)cudaErrorInvalidValue;
	}
}

extern "C" int gsk_reduce(void *dst, const void *a, const void *b, size_t count, int dtype,
			  double scale, void *stream)
{
	return dispatch<2>(dst, a, b, count, dtype, scale, stream);
}

extern "C" int gsk_scale(void *buf, size_t count, int dtype, double scale, void *stream)
{
	return dispatch<1>(buf, buf, buf, count, dtype, scale, stream);
}

/* IEEE round-to-nearest division, the CPU path's avg rule (coll/reduce.h). */
static __device__ __forceinline__ float ieee_div(float x, float y) { return __fdiv_rn(x, y); }
static __device__ __forceinline__ double ieee_div(double x, double y) { return __ddiv_rn(x, y); }

template <typename T>
__global__ void __launch_bounds__(RED_THREADS) k_div(T *buf, size_t count, uint32_t divisor)
{
	typename elem<T>::acc d = (typename elem<T>::acc)divisor;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
		buf[i] = elem<T>::st(ieee_div(elem<T>::ld(buf[i]), d));
}

template <typename T>
static int div_launch(void *buf, size_t count, uint32_t divisor, cudaStream_t st)
{
	size_t blocks = (count + RED_THREADS - 1) / RED_THREADS;

	if (count == 0)
		return cudaSuccess;
	if (blocks > RED_MAX_BLOCKS)
		blocks = RED_MAX_BLOCKS;
	k_div<T><<<(unsigned int)blocks, RED_THREADS, 0, st>>>((T *)buf, count, divisor);
	return (int)cudaGetLastError();
}

extern "C" int gsk_div(void *buf, size_t count, int dtype, uint32_t divisor, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;

	switch (dtype) {
	case DT_F32:
		return div_launch<float>(buf, count, divisor, st);
	case DT_F16:
		return div_launch<__half>(buf, count, divisor, st);
	case DT_BF16:
		return div_launch<__nv_bfloat16>(buf, count, divisor, st);
	case DT_F64:
		return div_launch<double>(buf, count, divisor, st);
	default:
		return (int)cudaErrorInvalidValue;
	}
}
