/* Helpers shared by the kernels/ sources: element traits (load/store/IEEE ops) and SM counts. */
#ifndef GS_KERNELS_COMMON_CUH
#define GS_KERNELS_COMMON_CUH

#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

/*
 * Per element type: the arithmetic type (f32, f64 for double), conversions with
 * round-to-nearest-even, and the raw bits for exact comparison.
 */
template <typename T> struct elem;

template <> struct elem<float> {
	typedef float acc;
	typedef uint32_t bits;
	static __device__ __forceinline__ float ld(float v) { return v; }
	static __device__ __forceinline__ float st(float v) { return v; }
	static __device__ __forceinline__ uint32_t raw(float v) { return __float_as_uint(v); }
};

template <> struct elem<double> {
	typedef double acc;
	typedef unsigned long long bits;
	static __device__ __forceinline__ double ld(double v) { return v; }
	static __device__ __forceinline__ double st(double v) { return v; }
	static __device__ __forceinline__ unsigned long long raw(double v)
	{
		return (unsigned long long)__double_as_longlong(v);
	}
};

template <> struct elem<__half> {
	typedef float acc;
	typedef uint16_t bits;
	static __device__ __forceinline__ float ld(__half v) { return __half2float(v); }
	static __device__ __forceinline__ __half st(float v) { return __float2half_rn(v); }
	static __device__ __forceinline__ uint16_t raw(__half v) { return __half_as_ushort(v); }
};

template <> struct elem<__nv_bfloat16> {
	typedef float acc;
	typedef uint16_t bits;
	static __device__ __forceinline__ float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
	static __device__ __forceinline__ __nv_bfloat16 st(float v)
	{
		return __float2bfloat16_rn(v);
	}
	static __device__ __forceinline__ uint16_t raw(__nv_bfloat16 v)
	{
		return __bfloat16_as_ushort(v);
	}
};

/* IEEE round-to-nearest add and multiply, never contracted into an FMA. */
static __device__ __forceinline__ float ieee_add(float x, float y) { return __fadd_rn(x, y); }
static __device__ __forceinline__ double ieee_add(double x, double y) { return __dadd_rn(x, y); }
static __device__ __forceinline__ float ieee_mul(float x, float y) { return __fmul_rn(x, y); }
static __device__ __forceinline__ double ieee_mul(double x, double y) { return __dmul_rn(x, y); }

/* Multiprocessors of the current device, cached per device (a hardware fact). */
static inline int gsk_sm_count(void)
{
	static int cache[64];
	int dev = 0, n = 0;

	if (cudaGetDevice(&dev) != cudaSuccess)
		return 1;
	if (dev >= 0 && dev < 64 && cache[dev])
		return cache[dev];
	if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1)
		n = 1;
	if (dev >= 0 && dev < 64)
		cache[dev] = n;
	return n;
}

#endif
